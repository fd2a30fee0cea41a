// The target pipelines on real modules: every model of
// ../shared/corpus/hlo/models runs through the cpu, gpu and tpu pipelines
// (verifier after every pass, snapshots recorded), and bisect finds no pass
// that changes the results of the evaluable modules of
// hlo/valid/{algebraic_simplifier,simplifiers,layout_assignment} and of the
// built-in examples. Skips cleanly when the corpus is absent (the examples
// part always runs).
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QTest>
#include <chrono>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/pipeline/bisect.h"
#include "compiler/pipeline/snapshots.h"
#include "compiler/registry/target_pipelines.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "tests/sanitizer_run.h"

using namespace hloscope;

namespace {

const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo");
const QString kExamples = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples");

QStringList hloFiles(const QString& folder) {
    QStringList files;
    QDirIterator it(folder, {QStringLiteral("*.hlo")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) files << it.next();
    files.sort();
    return files;
}

StatusOr<std::unique_ptr<HloModule>> load(const QString& path) {
    return loadModuleFromFile(path.toStdString());
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct BisectTally {
    int modules = 0, evaluated = 0, skipped = 0;
    QStringList mismatches;
    QStringList notEvaluated;  // "name: why"
};

// Bounds that keep the corpus sweep to seconds per module.
BisectOptions sweepOptions() {
    BisectOptions options;
    options.seed = 1;
    options.maxElements = 50'000'000;
    options.maxWhileIterations = 100'000;
    options.timeLimitSeconds = 20;
    return options;
}

void bisectFile(const QString& path, const QString& name, BisectTally& tally,
                const BisectOptions& options) {
    auto module = load(path);
    if (!module.isOk()) return;  // the corpus test covers what does not parse
    HloVerifierOptions verifier;
    verifier.allowMixedPrecision = true;
    if (!verifyModule(**module, verifier).isOk()) return;
    ++tally.modules;
    auto pipeline = targetPipeline("cpu");
    auto result = bisectPipeline(**module, *pipeline, options);
    if (!result.isOk()) {
        tally.mismatches << name + QStringLiteral(": pipeline error: ") +
                                QString::fromStdString(result.status().toString());
        return;
    }
    switch (result->outcome) {
    case BisectResult::Outcome::kNoChange: ++tally.evaluated; break;
    case BisectResult::Outcome::kCannotEvaluate:
        ++tally.skipped;
        tally.notEvaluated << name + QStringLiteral(": ") + QString::fromStdString(result->detail);
        break;
    case BisectResult::Outcome::kMismatch:
        ++tally.evaluated;
        tally.mismatches << name + QStringLiteral(": pass %1 (%2): ")
                                       .arg(result->passIndex)
                                       .arg(QString::fromStdString(result->passName)) +
                                QString::fromStdString(result->detail);
        break;
    }
}

}  // namespace

class TestPipelineCorpus : public QObject {
    Q_OBJECT
private slots:
    void modelsRunThroughEveryTarget();
    void bisectCorpusFolders();
    void bisectExamples();
};

void TestPipelineCorpus::modelsRunThroughEveryTarget() {
    if (!QDir(kCorpus).exists())
        QSKIP("../shared/corpus not found beside the checkout; skipping the model sweep");
    QStringList failures;
    int runs = 0;
    double slowest = 0;
    QString slowestName;
    for (const QString& path :
         testing::corpusSample(hloFiles(kCorpus + QStringLiteral("/models")))) {
        const QString name = QDir(kCorpus).relativeFilePath(path);
        for (std::string_view target : targetNames()) {
            auto module = load(path);
            if (!module.isOk()) continue;  // listed in corpus_exceptions.tsv
            auto pipeline = targetPipeline(target);
            QVERIFY(pipeline.isOk());
            auto runner = PipelineRunner::create(**module, *pipeline);
            QVERIFY2(runner.isOk(), runner.status().toString().c_str());
            SnapshotRecorder recorder(peakMemoryBytes);
            (*runner)->addInstrumentation(&recorder);
            const auto start = std::chrono::steady_clock::now();
            Status status = (*runner)->runAll();
            const double seconds = secondsSince(start);
            ++runs;
            if (!status.isOk()) {
                failures << name + QLatin1Char(' ') + QString::fromLatin1(target.data(), 3) +
                                QStringLiteral(": ") + QString::fromStdString(status.toString());
                continue;
            }
            if (seconds > slowest) {
                slowest = seconds;
                slowestName = name + QLatin1Char(' ') + QString::fromLatin1(target.data(), 3);
            }
        }
    }
    qInfo("%d pipeline runs over hlo/models; slowest %.2f s (%s)", runs, slowest,
          qPrintable(slowestName));
    for (const QString& f : failures) qWarning("%s", qPrintable(f));
    QVERIFY(runs > 0);
    QVERIFY(failures.isEmpty());
}

void TestPipelineCorpus::bisectCorpusFolders() {
    if (!QDir(kCorpus).exists())
        QSKIP("../shared/corpus not found beside the checkout; skipping the bisect sweep");
    BisectTally tally;
    for (const char* folder : {"algebraic_simplifier", "simplifiers", "layout_assignment"}) {
        const QString dir = kCorpus + QStringLiteral("/valid/") + QLatin1String(folder);
        for (const QString& path : testing::corpusSample(hloFiles(dir)))
            bisectFile(path, QDir(kCorpus).relativeFilePath(path), tally, sweepOptions());
    }
    qInfo("bisect over valid/{algebraic_simplifier,simplifiers,layout_assignment}: %d modules, %d "
          "evaluated, %d not evaluable",
          tally.modules, tally.evaluated, tally.skipped);
    for (const QString& m : tally.mismatches) qWarning("%s", qPrintable(m));
    QVERIFY(tally.evaluated > 100 / testing::corpusStride());
    QVERIFY(tally.mismatches.isEmpty());
}

void TestPipelineCorpus::bisectExamples() {
    BisectTally tally;
    for (const QString& path : hloFiles(kExamples)) {
        if (testing::leftOutOfSanitizerRun(path)) {
            qInfo("sanitizer run: %s left out", qPrintable(QFileInfo(path).fileName()));
            continue;
        }
        // The BERT-sized examples take seconds per evaluation; the pipeline
        // is evaluated once per changing pass.
        BisectOptions options;  // the defaults: no module of ours is too big
        options.seed = 1;
        // The training step's reference evaluation takes ~40 s alone here; a
        // loaded 2-core CI machine must not turn it into "cannot evaluate".
        options.timeLimitSeconds = 1200;
        bisectFile(path, QFileInfo(path).fileName(), tally, options);
    }
    qInfo("bisect over the examples: %d modules, %d evaluated", tally.modules, tally.evaluated);
    for (const QString& m : tally.mismatches) qWarning("%s", qPrintable(m));
    for (const QString& m : tally.notEvaluated) qWarning("not evaluated: %s", qPrintable(m));
    QCOMPARE(tally.evaluated, tally.modules);
    QVERIFY(tally.mismatches.isEmpty());
}

QTEST_APPLESS_MAIN(TestPipelineCorpus)
#include "tst_pipeline_corpus.moc"
