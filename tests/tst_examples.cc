// The built-in examples in resources/examples parse, verify, round-trip and
// have the sizes their descriptions promise.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTest>

#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "core/ir/module_stats.h"

using namespace hloscope;

namespace {
const QString kExamples = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples");

std::unique_ptr<HloModule> load(const QString& name) {
    auto module = loadModuleFromFile((kExamples + QLatin1Char('/') + name).toStdString());
    if (!module.isOk()) {
        qWarning("%s", module.status().toString().c_str());
        return nullptr;
    }
    return std::move(*module);
}

int64_t parameterElements(const HloModule& module) {
    int64_t total = 0;
    for (const HloInstruction* p : module.entryComputation()->parameters())
        total += p->shape().elementCount();
    return total;
}
}  // namespace

class TestExamples : public QObject {
    Q_OBJECT
private slots:
    void everyExample_data();
    void everyExample();
    void indexListsEveryFile();
    void bertForwardDimensions();
    void bertTrainStepHasAdam();
    void smallExamples();
};

void TestExamples::everyExample_data() {
    QTest::addColumn<QString>("file");
    const auto files = QDir(kExamples).entryList({QStringLiteral("*.hlo")}, QDir::Files, QDir::Name);
    for (const QString& f : files) QTest::newRow(qPrintable(f)) << f;
    QVERIFY(files.size() >= 9);
}

void TestExamples::everyExample() {
    QFETCH(QString, file);
    auto module = load(file);
    QVERIFY(module != nullptr);
    Status verified = verifyModule(*module);
    QVERIFY2(verified.isOk(), verified.toString().c_str());
    std::string printed = printModule(*module);
    auto reparsed = parseHloModule(printed);
    QVERIFY2(reparsed.isOk(), reparsed.status().toString().c_str());
    std::string why;
    QVERIFY2(module->structurallyEqual(**reparsed, &why), why.c_str());
    QCOMPARE(printModule(**reparsed), printed);
}

void TestExamples::indexListsEveryFile() {
    QFile index(kExamples + QStringLiteral("/index.json"));
    QVERIFY(index.open(QIODevice::ReadOnly));
    QJsonArray entries = QJsonDocument::fromJson(index.readAll()).array();
    QSet<QString> listed;
    for (const QJsonValue& v : entries) {
        QJsonObject o = v.toObject();
        QVERIFY(!o.value(QStringLiteral("title")).toString().isEmpty());
        listed.insert(o.value(QStringLiteral("file")).toString());
    }
    const auto files = QDir(kExamples).entryList({QStringLiteral("*.hlo")}, QDir::Files);
    for (const QString& f : files) QVERIFY2(listed.contains(f), qPrintable(f));
}

void TestExamples::bertForwardDimensions() {
    auto module = load(QStringLiteral("bert_encoder_forward.hlo"));
    QVERIFY(module != nullptr);
    const HloInstruction* root = module->entryComputation()->root();
    QCOMPARE(QString::fromStdString(root->shape().toString(false)), QStringLiteral("f32[32,128,768]"));
    // Word embeddings 30522x768 are among the parameters.
    bool found = false;
    for (const HloInstruction* p : module->entryComputation()->parameters())
        found |= p->shape().dimensions() == std::vector<int64_t>{30522, 768};
    QVERIFY(found);
    // ~ 2 layers x 7.1M + embeddings 24M parameters.
    int64_t weights = parameterElements(*module);
    QVERIFY2(weights > 35'000'000 && weights < 45'000'000, qPrintable(QString::number(weights)));
    ModuleStats stats = computeModuleStats(*module);
    QVERIFY(stats.opcodeCounts["dot"] >= 2 * 6);  // q, k, v, o, ffn1, ffn2 per layer + attention
}

void TestExamples::bertTrainStepHasAdam() {
    auto module = load(QStringLiteral("bert_encoder_train_step.hlo"));
    QVERIFY(module != nullptr);
    const HloComputation* entry = module->entryComputation();
    // loss + new params + m + v: 1 + 3k outputs for k parameter tensors.
    const Shape& out = entry->root()->shape();
    QVERIFY(out.isTuple());
    QCOMPARE((out.tupleCount() - 1) % 3, int64_t(0));
    QVERIFY(out.tupleShape(0).isScalar());
    ModuleStats stats = computeModuleStats(*module);
    QVERIFY(stats.opcodeCounts["sqrt"] + stats.opcodeCounts["rsqrt"] > 0);  // Adam's sqrt(v)
    QVERIFY(stats.opcodeCounts["dot"] > 30);  // forward and backward matmuls
    QVERIFY(stats.instructionCount > 1000);
}

void TestExamples::smallExamples() {
    auto poly = load(QStringLiteral("polynomial.hlo"));
    QVERIFY(poly != nullptr);
    ModuleStats stats = computeModuleStats(*poly);
    QCOMPARE(stats.opcodeCounts["multiply"], int64_t(2));
    QCOMPARE(stats.opcodeCounts["add"], int64_t(2));
    auto sinExp = load(QStringLiteral("sin_plus_exp.hlo"));
    QVERIFY(sinExp != nullptr);
    stats = computeModuleStats(*sinExp);
    QCOMPARE(stats.opcodeCounts["sine"], int64_t(1));
    QCOMPARE(stats.opcodeCounts["exponential"], int64_t(1));
    auto mlp = load(QStringLiteral("mlp.hlo"));
    QVERIFY(mlp != nullptr);
    QCOMPARE(computeModuleStats(*mlp).opcodeCounts["dot"], int64_t(3));
}

QTEST_GUILESS_MAIN(TestExamples)
#include "tst_examples.moc"
