// Conformance runner (app/cli/conformance.h): the check semantics (ULP distance,
// tolerances, exact equality of floats, probes) on hand-written cases, one
// test per outcome class, and the StableHLO interpreter suites of
// ../shared/corpus/stablehlo run case by case. Every case of interpret/ and
// testdata/ that does not pass must be listed with its reason in
// tests/conformance_exceptions.tsv; the quantized, dynamic and math sets are
// reported separately and must have no failures.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTest>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "app/cli/conformance.h"
#include "core/ir/literal.h"

using namespace hloscope;

namespace {

const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/stablehlo");
const QString kExceptions = QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/conformance_exceptions.tsv");

Literal f32s(std::vector<double> values) {
    return Literal::vector(PrimitiveType::F32, values);
}

ConformanceCase runOne(const char* text) {
    auto cases = runConformance(text, "case.mlir");
    if (cases.size() != 1) {
        qWarning("expected one case, got %zu", cases.size());
        return {};
    }
    return cases.front();
}

QStringList mlirFiles(const QString& folder, bool recursive) {
    QStringList files;
    QDirIterator it(kCorpus + QLatin1Char('/') + folder, {QStringLiteral("*.mlir")}, QDir::Files,
                    recursive ? QDirIterator::Subdirectories : QDirIterator::NoIteratorFlags);
    while (it.hasNext()) files << it.next();
    files.sort();
    return files;
}

}  // namespace

class TestConformance : public QObject {
    Q_OBJECT
private slots:
    void ulpDistanceValues();
    void compareModes();
    void compareReportsFirstMismatches();
    void passingCase();
    void failingCaseNamesTheCheck();
    void expectCloseHonoursItsLimits();
    void almostEqTolerance();
    void floatEqualityIsSignAware();
    void probeValuesAreCompared();
    void unsupportedCases();
    void runParallel();
    void importErrorIsFailure();
    void splitFileNumbersCases();
    void corpusSuites();
};

void TestConformance::ulpDistanceValues() {
    const double one = 1.0;
    const double next = std::nextafter(1.0f, 2.0f);
    QCOMPARE(ulpDistance(PrimitiveType::F32, one, one), uint64_t{0});
    QCOMPARE(ulpDistance(PrimitiveType::F32, one, next), uint64_t{1});
    QCOMPARE(ulpDistance(PrimitiveType::F32, next, one), uint64_t{1});
    // Across zero: the smallest subnormals either side are 2 apart; -0 == +0.
    const double tiny = std::numeric_limits<float>::denorm_min();
    QCOMPARE(ulpDistance(PrimitiveType::F32, -tiny, tiny), uint64_t{2});
    QCOMPARE(ulpDistance(PrimitiveType::F32, -0.0, 0.0), uint64_t{0});
    // f64 and bf16 use their own widths: 1 + 2^-7 is the next bf16 after 1.
    QCOMPARE(ulpDistance(PrimitiveType::F64, 1.0, std::nextafter(1.0, 2.0)), uint64_t{1});
    QCOMPARE(ulpDistance(PrimitiveType::BF16, 1.0, 1.0 + 1.0 / 128), uint64_t{1});
    QCOMPARE(ulpDistance(PrimitiveType::F16, 1.0, 1.0 + 1.0 / 1024), uint64_t{1});
    // Non-finite values: NaN matches NaN, anything else must be identical.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const uint64_t most = std::numeric_limits<uint64_t>::max();
    QCOMPARE(ulpDistance(PrimitiveType::F32, nan, -nan), uint64_t{0});
    QCOMPARE(ulpDistance(PrimitiveType::F32, nan, 1.0), most);
    QCOMPARE(ulpDistance(PrimitiveType::F32, inf, inf), uint64_t{0});
    QCOMPARE(ulpDistance(PrimitiveType::F32, inf, std::numeric_limits<float>::max()), most);
    QCOMPARE(ulpDistance(PrimitiveType::F32, inf, -inf), most);
}

void TestConformance::compareModes() {
    const Literal a = f32s({1.0, 2.0, -0.0});
    QVERIFY(compareLiterals(a, a, {}).empty());
    // Exact: -0 and +0 differ, as do values 1 ULP apart.
    QVERIFY(!compareLiterals(a, f32s({1.0, 2.0, 0.0}), {}).empty());
    const double next = std::nextafter(2.0f, 3.0f);
    const Literal b = f32s({1.0, next, -0.0});
    QVERIFY(!compareLiterals(a, b, {}).empty());
    CompareSpec ulp{CompareMode::kUlp, 0, 0, 1};
    QVERIFY(compareLiterals(a, b, ulp).empty());
    ulp.maxUlp = 0;
    QVERIFY(!compareLiterals(a, b, ulp).empty());
    // min_ulp_difference is a lower bound too.
    CompareSpec atLeastOne{CompareMode::kUlp, 0, 1, 5};
    QVERIFY(!compareLiterals(a, a, atLeastOne).empty());
    CompareSpec almost{CompareMode::kAlmost, 1e-3, 0, 0};
    QVERIFY(compareLiterals(f32s({1.0}), f32s({1.0009}), almost).empty());
    QVERIFY(!compareLiterals(f32s({1.0}), f32s({1.0011}), almost).empty());
    // Integers compare exactly whatever the mode.
    const Literal i = Literal::vector(PrimitiveType::S32, std::vector<int64_t>{1, 2});
    const Literal j = Literal::vector(PrimitiveType::S32, std::vector<int64_t>{1, 3});
    QVERIFY(!compareLiterals(i, j, almost).empty());
    // Shapes and element types must agree.
    QVERIFY(compareLiterals(a, f32s({1.0, 2.0}), {}).starts_with("shape mismatch"));
    QVERIFY(compareLiterals(i, Literal::vector(PrimitiveType::S64, std::vector<int64_t>{1, 2}), {})
                .starts_with("shape mismatch"));
    // Complex: both parts; ULP distance is the larger of the two.
    Literal z(Shape::makeArray(PrimitiveType::C64, {1}));
    Literal w(Shape::makeArray(PrimitiveType::C64, {1}));
    z.setFromComplex(0, {1.0, 2.0});
    w.setFromComplex(0, {1.0, std::nextafter(std::nextafter(2.0f, 3.0f), 3.0f)});
    QVERIFY(!compareLiterals(z, w, CompareSpec{CompareMode::kUlp, 0, 0, 1}).empty());
    QVERIFY(compareLiterals(z, w, CompareSpec{CompareMode::kUlp, 0, 0, 2}).empty());
}

void TestConformance::compareReportsFirstMismatches() {
    const std::string why =
        compareLiterals(f32s({1, 2, 3, 4, 5}), f32s({1, 0, 3, 0, 0}), CompareSpec{});
    QVERIFY2(why.starts_with("3 of 5 elements differ"), why.c_str());
    QVERIFY2(why.find("at {1} 2 (actual) vs 0 (expected)") != std::string::npos, why.c_str());
}

void TestConformance::passingCase() {
    ConformanceCase c = runOne(R"(
func.func @add() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
})");
    QCOMPARE(c.outcome, CaseOutcome::kPassed);
    QCOMPARE(c.checks, 1);
    QVERIFY(c.detail.empty());
}

void TestConformance::failingCaseNamesTheCheck() {
    ConformanceCase c = runOne(R"(
func.func @add() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 5]> : tensor<2xi32>
  func.return
})");
    QCOMPARE(c.outcome, CaseOutcome::kFailed);
    QVERIFY2(c.detail.find("check.expect_eq_const") != std::string::npos, c.detail.c_str());
    QVERIFY2(c.detail.find("at {1} 4 (actual) vs 5 (expected)") != std::string::npos,
             c.detail.c_str());
}

void TestConformance::expectCloseHonoursItsLimits() {
    // The custom-call form (testdata/) allows 3 ULP; 1 + 4 ULP fails.
    const char* customCall = R"(
func.func public @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.constant dense<[0x3F800003, 2.0]> : tensor<2xf32>
  %2 = stablehlo.constant dense<[0x3F800004, 2.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%0, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  stablehlo.custom_call @check.expect_close(%0, %2) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %0 : tensor<2xf32>
})";
    ConformanceCase c = runOne(customCall);
    QCOMPARE(c.outcome, CaseOutcome::kFailed);
    QCOMPARE(c.checks, 2);
    QVERIFY2(c.detail.find("4 ULP") != std::string::npos, c.detail.c_str());
    // The op form states its limits.
    ConformanceCase op = runOne(R"(
func.func @close() {
  %0 = stablehlo.constant dense<[1.0]> : tensor<1xf64>
  %1 = stablehlo.constant dense<[0x3FF0000000000005]> : tensor<1xf64>
  check.expect_close %0, %1, max_ulp_difference = 5, min_ulp_difference = 5 : tensor<1xf64>, tensor<1xf64>
  func.return
})");
    QCOMPARE(op.outcome, CaseOutcome::kPassed);
    ConformanceCase tooClose = runOne(R"(
func.func @close() {
  %0 = stablehlo.constant dense<[1.0]> : tensor<1xf64>
  check.expect_close %0, %0, max_ulp_difference = 5, min_ulp_difference = 1 : tensor<1xf64>, tensor<1xf64>
  func.return
})");
    QCOMPARE(tooClose.outcome, CaseOutcome::kFailed);
}

void TestConformance::almostEqTolerance() {
    // expect_almost_eq_const defaults to 1e-4.
    ConformanceCase ok = runOne(R"(
func.func @almost() {
  %0 = stablehlo.constant dense<[1.00005]> : tensor<1xf64>
  check.expect_almost_eq_const %0, dense<[1.0]> : tensor<1xf64>
  func.return
})");
    QCOMPARE(ok.outcome, CaseOutcome::kPassed);
    ConformanceCase bad = runOne(R"(
func.func @almost() {
  %0 = stablehlo.constant dense<[1.0002]> : tensor<1xf64>
  check.expect_almost_eq_const %0, dense<[1.0]> : tensor<1xf64>
  func.return
})");
    QCOMPARE(bad.outcome, CaseOutcome::kFailed);
    QVERIFY2(bad.detail.find("tolerance 0.0001") != std::string::npos, bad.detail.c_str());
    // NaN matches NaN, infinities must agree.
    ConformanceCase special = runOne(R"(
func.func @almost() {
  %0 = stablehlo.constant dense<[0x7FF8000000000000, 0x7FF0000000000000]> : tensor<2xf64>
  check.expect_almost_eq_const %0, dense<[0x7FF8000000000000, 0x7FF0000000000000]> : tensor<2xf64>
  func.return
})");
    QCOMPARE(special.outcome, CaseOutcome::kPassed);
}

void TestConformance::floatEqualityIsSignAware() {
    ConformanceCase c = runOne(R"(
func.func @negate() {
  %0 = stablehlo.constant dense<[0.0]> : tensor<1xf32>
  %1 = stablehlo.negate %0 : tensor<1xf32>
  check.expect_eq_const %1, dense<[0.0]> : tensor<1xf32>
  func.return
})");
    QCOMPARE(c.outcome, CaseOutcome::kFailed);
}

void TestConformance::probeValuesAreCompared() {
    ConformanceCase c = runOne(R"(
func.func @probe() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %1 = stablehlo.add %0, %0 : tensor<2xi64>
  %2 = interpreter.probe %1, probe_id = "p" : tensor<2xi64>
  check.expect_serialized_eq %2, probe_id = "p" : tensor<2xi64>
  func.return
})");
    QCOMPARE(c.outcome, CaseOutcome::kPassed);
    ConformanceCase missing = runOne(R"(
func.func @probe() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<2xi64>
  check.expect_serialized_eq %1, probe_id = "p", iter = 1 : tensor<2xi64>
  func.return
})");
    QCOMPARE(missing.outcome, CaseOutcome::kFailed);
    QVERIFY2(missing.detail.find("iteration 1") != std::string::npos, missing.detail.c_str());
}

void TestConformance::unsupportedCases() {
    // No checks: nothing to claim.
    ConformanceCase none = runOne(R"(
func.func @nothing() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  func.return
})");
    QCOMPARE(none.outcome, CaseOutcome::kUnsupported);
    QCOMPARE(QString::fromStdString(none.detail), QStringLiteral("no check to apply"));
    // Quantized types do not import: unsupported, with the location.
    ConformanceCase quantized = runOne(R"(
func.func @q() {
  %0 = stablehlo.constant() {value = dense<1> : tensor<2xi8>} : () -> tensor<2x!quant.uniform<i8:f32, 0.5>>
  func.return
})");
    QCOMPARE(quantized.outcome, CaseOutcome::kUnsupported);
    QVERIFY2(quantized.detail.find("case.mlir:3:") != std::string::npos, quantized.detail.c_str());
}

// interpreter.run_parallel: each program on its own device (replicas x partitions), the
// results in order; a wrong expectation fails.
void TestConformance::runParallel() {
    const std::string text = R"(
module @m {
  func.func @id() -> (tensor<ui32>, tensor<ui32>) {
    %0 = stablehlo.replica_id : tensor<ui32>
    %1 = stablehlo.partition_id : tensor<ui32>
    return %0, %1 : tensor<ui32>, tensor<ui32>
  }
  func.func @main() {
    %r:8 = "interpreter.run_parallel"() {programs=[[@id, @id], [@id, @id]]} : () -> (tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>)
    check.expect_eq_const %r#4, dense<1> : tensor<ui32>
    check.expect_eq_const %r#5, dense<0> : tensor<ui32>
    check.expect_eq_const %r#7, dense<WANT> : tensor<ui32>
    func.return
  }
})";
    auto with = [&](const char* want) {
        std::string t = text;
        t.replace(t.find("WANT"), 4, want);
        return runOne(t.c_str());
    };
    ConformanceCase good = with("1");
    QVERIFY2(good.outcome == CaseOutcome::kPassed, good.detail.c_str());
    ConformanceCase bad = with("0");
    QCOMPARE(bad.outcome, CaseOutcome::kFailed);
}

void TestConformance::importErrorIsFailure() {
    ConformanceCase c = runOne(R"(
func.func @broken() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %missing : tensor<2xi32>
  func.return
})");
    QCOMPARE(c.outcome, CaseOutcome::kFailed);
    QVERIFY2(c.detail.find("case.mlir:4:") != std::string::npos, c.detail.c_str());
}

void TestConformance::splitFileNumbersCases() {
    auto cases = runConformance(R"(// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @a() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<1> : tensor<i32>
  func.return
}

// -----

func.func @b() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<2> : tensor<i32>
  func.return
}
)",
                                "split.mlir");
    QCOMPARE(cases.size(), size_t{2});
    QCOMPARE(cases[0].index, 1);
    QCOMPARE(cases[0].outcome, CaseOutcome::kPassed);
    QCOMPARE(cases[1].index, 2);
    QCOMPARE(cases[1].outcome, CaseOutcome::kFailed);
    QVERIFY(cases[1].firstLine > cases[0].firstLine);
}

void TestConformance::corpusSuites() {
    if (!QDir(kCorpus).exists())
        QSKIP(qPrintable(QStringLiteral("StableHLO corpus not found at %1 (it lives in "
                                        "../shared/corpus beside a developer checkout); skipping")
                             .arg(kCorpus)));
    // file#N -> "outcome<TAB>reason" of the listed goal-set cases.
    std::map<QString, QString> listed;
    {
        QFile file(kExceptions);
        QVERIFY2(file.open(QIODevice::ReadOnly | QIODevice::Text), qPrintable(kExceptions));
        while (!file.atEnd()) {
            const QString line = QString::fromUtf8(file.readLine()).trimmed();
            if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
            const QStringList fields = line.split(QLatin1Char('\t'));
            QVERIFY2(fields.size() == 3, qPrintable(QStringLiteral("malformed line: ") + line));
            QVERIFY2(fields[1] == QStringLiteral("failed") || fields[1] == QStringLiteral("unsupported"),
                     qPrintable(line));
            listed[fields[0]] = fields[1];
        }
    }
    struct Suite {
        QString folder;
        bool recursive;
        bool goal;  // interpret + testdata: counted for the 95% goal, every miss listed
    };
    const std::vector<Suite> suites = {
        {QStringLiteral("interpret"), true, true},
        {QStringLiteral("testdata"), false, true},
        {QStringLiteral("testdata/quantized"), false, false},
        {QStringLiteral("testdata/dynamic"), false, false},
        {QStringLiteral("math"), false, false},
    };
    QStringList problems;
    std::set<QString> seen;
    int goalCases = 0, goalPassed = 0;
    for (const Suite& suite : suites) {
        int passed = 0, failed = 0, unsupported = 0;
        for (const QString& path : mlirFiles(suite.folder, suite.recursive)) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QByteArray bytes = file.readAll();
            const QString name = QDir(kCorpus).relativeFilePath(path);
            for (const ConformanceCase& c :
                 runConformance(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())),
                                name.toStdString())) {
                const QString id = name + QLatin1Char('#') + QString::number(c.index);
                const QString outcome = QString::fromLatin1(caseOutcomeName(c.outcome));
                switch (c.outcome) {
                case CaseOutcome::kPassed: ++passed; break;
                case CaseOutcome::kFailed: ++failed; break;
                case CaseOutcome::kUnsupported: ++unsupported; break;
                }
                if (!suite.goal) {
                    if (c.outcome == CaseOutcome::kFailed)
                        problems << id + QStringLiteral(": failed: ") +
                                        QString::fromStdString(c.detail);
                    continue;
                }
                auto it = listed.find(id);
                if (it != listed.end()) seen.insert(id);
                if (c.outcome == CaseOutcome::kPassed) {
                    if (it != listed.end())
                        problems << id + QStringLiteral(" passes now: remove it from "
                                                        "conformance_exceptions.tsv");
                } else if (it == listed.end()) {
                    problems << id + QStringLiteral(": ") + outcome + QStringLiteral(": ") +
                                    QString::fromStdString(c.detail);
                } else if (it->second != outcome) {
                    problems << id + QStringLiteral(" is ") + outcome + QStringLiteral(", listed as ") +
                                    it->second + QStringLiteral(": ") +
                                    QString::fromStdString(c.detail);
                }
            }
        }
        const int cases = passed + failed + unsupported;
        qInfo("%-20s %5d cases: %5d passed, %3d failed, %3d unsupported (%.1f%% passed)",
              qPrintable(suite.folder), cases, passed, failed, unsupported,
              cases ? 100.0 * passed / cases : 0.0);
        QVERIFY2(cases > 0, qPrintable(suite.folder));
        if (suite.goal) {
            goalCases += cases;
            goalPassed += passed;
        }
    }
    for (const auto& [id, outcome] : listed)
        if (!seen.count(id)) problems << id + QStringLiteral(" is listed but no such case exists");
    for (const QString& problem : problems) qWarning("%s", qPrintable(problem));
    const double rate = goalCases ? static_cast<double>(goalPassed) / goalCases : 0.0;
    qInfo("interpret + testdata: %d of %d cases pass (%.2f%%)", goalPassed, goalCases, 100 * rate);
    QVERIFY(problems.isEmpty());
    QVERIFY(rate >= 0.95);
}

QTEST_APPLESS_MAIN(TestConformance)
#include "tst_conformance.moc"
