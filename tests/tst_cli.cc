// hloscope-cli end to end: output formats and exit codes.
#include <cmath>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "tests/cli_runner.h"

using namespace Qt::StringLiterals;

namespace {

using Result = hloscope::testing::CliResult;
using hloscope::testing::runCli;

const char* kGood =
    "HloModule good\n"
    "\n"
    "ENTRY %main (x: f32[4]) -> f32[4] {\n"
    "  %x = f32[4]{0} parameter(0)\n"
    "  ROOT %y = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %x)\n"
    "}\n";

// The operand list never closes: the error points at the `}` on line 5.
const char* kBadSyntax =
    "HloModule bad\n"
    "\n"
    "ENTRY %main (x: f32[4]) -> f32[4] {\n"
    "  ROOT %x = f32[4]{0} parameter(0\n"
    "}\n";

// Evaluates nowhere: an unknown custom-call target.
const char* kCustomCallModule =
    "HloModule c\n\nENTRY %main (x: f32[2]) -> f32[2] {\n"
    "  %x = f32[2]{0} parameter(0)\n"
    "  ROOT %cc = f32[2]{0} custom-call(f32[2]{0} %x), custom_call_target=\"my_kernel\"\n}\n";

// Parses, but the add's declared shape is wrong.
const char* kBadShape =
    "HloModule badshape\n"
    "\n"
    "ENTRY %main (x: f32[4]) -> f32[5] {\n"
    "  %x = f32[4]{0} parameter(0)\n"
    "  ROOT %y = f32[5]{0} add(f32[4]{0} %x, f32[4]{0} %x)\n"
    "}\n";

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void help();
    void badUsage();
    void parseGoodAndBad();
    void parseVerify();
    void parseRoundtrip();
    void parseStdin();
    void printHloAndJson();
    void printJsonRoundTrip();
    void stats();
    void missingFile();
    void evalInputs();
    void evalJsonOutputAndInputFile();
    void evalOnEveryDevice();
    void evalErrors();
    void evalBenchAndProfile();
    void conformOutcomes();
    void passesListsRegistryAndTargets();
    void optPrintsAndDumps();
    void optJsonReport();
    void optPipelineEdits();
    void bisectExitCodes();
    void costPredictsUnfusedAndFused();
    void costOfAnOptimizedModule();
    void layersAndVsXla();
    void layersMeasured();
    void everyCommandHasHelp();
    void captureRunsTheProgramWithDumpFlags();
    void explainAnswersForPairs();
    void runOnTheInterpreter();
    void runErrors();
    void gpuWithoutDriverPredicts();
    void gpuPlansAndImportErrors();
    void calibrateFromGpuProbe();
    void calcArithmeticAndErrors();
    void estimatePredictsAndMeasures();
    void estimateErrors();
    void estimateCalibratesFirst();
    void runStoresHistory();
    void runOnTheSimulatedTpu();
    void calibrateFromHistory();

private:
    QString write(const QString& name, const QByteArray& text);
    QTemporaryDir m_dir;
};

void TestCli::initTestCase() {
    QVERIFY(m_dir.isValid());
    // Measured estimates are stored here, not in the user's history.
    qputenv("HLOSCOPE_HISTORY", m_dir.filePath(QStringLiteral("history.sqlite")).toUtf8());
    // ... and this machine's calibration, which the first cpu estimate measures, here too.
    qputenv("XDG_CACHE_HOME", m_dir.filePath(QStringLiteral("cache")).toUtf8());
    QVERIFY2(QFile::exists(QStringLiteral(HLOSCOPE_CLI_PATH)), HLOSCOPE_CLI_PATH);
}

QString TestCli::write(const QString& name, const QByteArray& text) {
    QString path = m_dir.filePath(name);
    QFile file(path);
    if (file.open(QIODevice::WriteOnly)) file.write(text);
    return path;
}

void TestCli::help() {
    Result r = runCli({u"--help"_s});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(u"parse FILE..."_s));
    QVERIFY(r.out.contains(u"stats FILE"_s));
    QVERIFY(r.out.contains(u"--roundtrip"_s));
}

void TestCli::badUsage() {
    QCOMPARE(runCli({}).exitCode, 2);
    QCOMPARE(runCli({u"frobnicate"_s}).exitCode, 2);
    QCOMPARE(runCli({u"parse"_s}).exitCode, 2);
    QCOMPARE(runCli({u"parse"_s, u"--no-such-flag"_s, u"x.hlo"_s}).exitCode, 2);
    QCOMPARE(runCli({u"print"_s, u"--format"_s, u"xml"_s, u"x.hlo"_s}).exitCode, 2);
    Result r = runCli({u"stats"_s});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains(u"no input file"_s));
}

void TestCli::parseGoodAndBad() {
    QString good = write(u"good.hlo"_s, kGood);
    QString bad = write(u"bad.hlo"_s, kBadSyntax);
    Result r = runCli({u"parse"_s, good, bad});
    QCOMPARE(r.exitCode, 1);
    QStringList lines = r.out.split(u'\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QCOMPARE(lines[0], good + u": ok (2 instructions)"_s);
    QVERIFY2(lines[1].startsWith(bad + u":5:1: error: "_s), qPrintable(lines[1]));
    QVERIFY2(lines[1].contains(u": error: "_s), qPrintable(lines[1]));
    QCOMPARE(lines[2], u"1 passed, 1 failed"_s);
    Result ok = runCli({u"parse"_s, good});
    QCOMPARE(ok.exitCode, 0);
    QVERIFY(ok.out.endsWith(u"1 passed, 0 failed\n"_s));
}

void TestCli::parseVerify() {
    QString badShape = write(u"badshape.hlo"_s, kBadShape);
    QCOMPARE(runCli({u"parse"_s, badShape}).exitCode, 0);  // parses fine
    Result r = runCli({u"parse"_s, u"--verify"_s, badShape});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.out.contains(u"%y"_s), qPrintable(r.out));
    QVERIFY(r.out.contains(u"0 passed, 1 failed"_s));
}

void TestCli::parseRoundtrip() {
    QString good = write(u"good.hlo"_s, kGood);
    Result r = runCli({u"parse"_s, u"--verify"_s, u"--roundtrip"_s, good});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(u"1 passed, 0 failed"_s));
}

void TestCli::parseStdin() {
    Result r = runCli({u"parse"_s, u"-"_s}, kGood);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.startsWith(u"<stdin>: ok (2 instructions)"_s), qPrintable(r.out));
}

void TestCli::printHloAndJson() {
    QString good = write(u"good.hlo"_s, kGood);
    Result hlo = runCli({u"print"_s, good});
    QCOMPARE(hlo.exitCode, 0);
    QVERIFY(hlo.out.startsWith(u"HloModule good"_s));
    QVERIFY(hlo.out.contains(u"ROOT %y = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %x)"_s));
    Result json = runCli({u"print"_s, good, u"--format"_s, u"json"_s});
    QCOMPARE(json.exitCode, 0);
    QJsonParseError error;
    QJsonDocument doc = QJsonDocument::fromJson(json.out.toUtf8(), &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    QVERIFY(doc.isObject());
}

void TestCli::printJsonRoundTrip() {
    QString good = write(u"good.hlo"_s, kGood);
    Result json = runCli({u"print"_s, good, u"--format=json"_s});
    QCOMPARE(json.exitCode, 0);
    QString jsonPath = write(u"good.json"_s, json.out.toUtf8());
    // Format chosen by content: JSON back to HLO text equals the direct print.
    Result back = runCli({u"print"_s, jsonPath});
    QCOMPARE(back.exitCode, 0);
    QCOMPARE(back.out, runCli({u"print"_s, good}).out);
    Result again = runCli({u"print"_s, jsonPath, u"--format"_s, u"json"_s});
    QCOMPARE(again.out, json.out);
}

void TestCli::stats() {
    QString good = write(u"good.hlo"_s, kGood);
    Result text = runCli({u"stats"_s, good});
    QCOMPARE(text.exitCode, 0);
    QVERIFY(text.out.contains(u"instructions"_s));
    Result json = runCli({u"stats"_s, good, u"--json"_s});
    QCOMPARE(json.exitCode, 0);
    QJsonObject o = QJsonDocument::fromJson(json.out.toUtf8()).object();
    QCOMPARE(o.value(u"instructions"_s).toInt(), 2);
    QCOMPARE(o.value(u"parameter_bytes"_s).toInt(), 16);
    QCOMPARE(o.value(u"output_bytes"_s).toInt(), 16);
    QCOMPARE(o.value(u"opcodes"_s).toObject().value(u"add"_s).toInt(), 1);
}

void TestCli::missingFile() {
    Result r = runCli({u"parse"_s, m_dir.filePath(u"nope.hlo"_s)});
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.out.contains(u"cannot open"_s));
    QVERIFY(r.out.contains(u"0 passed, 1 failed"_s));
    QCOMPARE(runCli({u"stats"_s, m_dir.filePath(u"nope.hlo"_s)}).exitCode, 1);
}

void TestCli::evalInputs() {
    QString good = write(u"good.hlo"_s, kGood);
    // zeros: 0 + 0.
    Result zeros = runCli({u"eval"_s, good, u"--inputs"_s, u"zeros"_s});
    QCOMPARE(zeros.exitCode, 0);
    QCOMPARE(zeros.out, u"f32[4] {0, 0, 0, 0}\n"_s);
    // random: deterministic per seed, different across seeds, and y = 2x.
    Result a = runCli({u"eval"_s, good, u"--seed"_s, u"7"_s, u"--show-inputs"_s});
    Result b = runCli({u"eval"_s, good, u"--seed"_s, u"7"_s, u"--show-inputs"_s});
    Result c = runCli({u"eval"_s, good, u"--seed"_s, u"8"_s, u"--show-inputs"_s});
    QCOMPARE(a.exitCode, 0);
    QCOMPARE(a.out, b.out);
    QVERIFY(a.out != c.out);
    const QStringList lines = a.out.trimmed().split(u'\n');
    QCOMPARE(lines.size(), 2);  // the input, then the result
    auto values = [](const QString& line) {
        QString body = line.section(u'{', 1).section(u'}', 0, 0);
        QList<double> out;
        for (const QString& v : body.split(u',')) out << v.trimmed().toDouble();
        return out;
    };
    const QList<double> x = values(lines[0]), y = values(lines[1]);
    QCOMPARE(x.size(), 4);
    for (int i = 0; i < 4; ++i) QCOMPARE(static_cast<float>(y[i]), 2 * static_cast<float>(x[i]));
}

void TestCli::evalOnEveryDevice() {
    // Two replicas: each gets its own random input; both get the sum.
    QString file = write(u"two.hlo"_s,
                         "HloModule m, replica_count=2\nadd {\n  a = f32[] parameter(0)\n"
                         "  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n"
                         "ENTRY e {\n  p = f32[2] parameter(0)\n"
                         "  ROOT c = f32[2] all-reduce(p), to_apply=add\n}\n");
    Result r = runCli({u"eval"_s, file, u"--inputs"_s, u"zeros"_s});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out,
             u"// device 0 (replica 0, partition 0)\nf32[2] {0, 0}\n"
             "// device 1 (replica 1, partition 0)\nf32[2] {0, 0}\n"_s);
    Result shown = runCli({u"eval"_s, file, u"--seed"_s, u"3"_s, u"--show-inputs"_s});
    QCOMPARE(shown.exitCode, 0);
    const QStringList lines = shown.out.trimmed().split(u'\n');
    QCOMPARE(lines.size(), 8);  // two inputs, two results, each under its device line
    auto values = [](const QString& line) {
        QList<float> out;
        for (const QString& v : line.section(u'{', 1).section(u'}', 0, 0).split(u','))
            out << v.trimmed().toFloat();
        return out;
    };
    const QList<float> a = values(lines[1]), b = values(lines[3]);
    QVERIFY(a != b);
    for (int row : {5, 7}) {
        const QList<float> sum = values(lines[row]);
        QCOMPARE(sum.size(), 2);
        for (int i = 0; i < 2; ++i) QCOMPARE(sum[i], a[i] + b[i]);
    }
    // A group naming a replica the module lacks.
    QString bad =
        write(u"bad.hlo"_s,
              "HloModule m, replica_count=2\nadd {\n  a = f32[] parameter(0)\n"
              "  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n"
              "ENTRY e {\n  p = f32[2] parameter(0)\n"
              "  ROOT c = f32[2] all-reduce(p), to_apply=add, replica_groups={{0},{1},{2}}\n}\n");
    Result e = runCli({u"eval"_s, bad});
    QCOMPARE(e.exitCode, 1);
    QVERIFY2(e.err.contains(u"%c: replica_groups names replica 2 but the module has 2 replicas"_s),
             qPrintable(e.err));
    // `run` on the interpreter runs and times both devices, in both modes.
    Result both = runCli({u"run"_s, file, u"--device"_s, u"interpreter"_s, u"--json"_s});
    QCOMPARE(both.exitCode, 0);
    const QJsonObject report = QJsonDocument::fromJson(both.out.toUtf8()).object();
    QCOMPARE(report.value(u"devices"_s).toInt(), 2);
    QCOMPARE(report.value(u"fused"_s).toObject().value(u"runs"_s).toInt(), 5);
    Result text = runCli({u"run"_s, file, u"--device"_s, u"interpreter"_s});
    QVERIFY2(text.out.contains(u"every run covers all 2 devices of the module's grid"_s),
             qPrintable(text.out));
    // The CPU backend and the simulated TPU run both devices too (an executable per device),
    // and every device matches the interpreter's.
    for (const QString& device : {u"cpu"_s, u"tpu-sim"_s}) {
        Result run = runCli({u"run"_s, file, u"--device"_s, device, u"--check"_s, u"--json"_s});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject cpu = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(cpu.value(u"devices"_s).toInt(), 2);
        QVERIFY2(cpu.value(u"check"_s).toObject().value(u"passed"_s).toBool(), qPrintable(run.out));
        // Both devices' outputs compared with the interpreter's.
        QCOMPARE(cpu.value(u"check"_s).toObject().value(u"devices"_s).toInt(), 2);
    }
}

void TestCli::evalJsonOutputAndInputFile() {
    QString good = write(u"good.hlo"_s, kGood);
    QString inputs =
        write(u"inputs.json"_s, R"([{"shape": "f32[4]", "values": [1, -2.5, "inf", 0.25]}])");
    Result r = runCli({u"eval"_s, good, u"--inputs"_s, inputs, u"--format"_s, u"json"_s});
    QCOMPARE(r.exitCode, 0);
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o.value(u"shape"_s).toString().section(u'{', 0, 0), u"f32[4]"_s);
    QJsonArray v = o.value(u"values"_s).toArray();
    QCOMPARE(v.size(), 4);
    QCOMPARE(v[0].toDouble(), 2.0);
    QCOMPARE(v[1].toDouble(), -5.0);
    QCOMPARE(v[2].toString(), u"inf"_s);
    QCOMPARE(v[3].toDouble(), 0.5);
}

void TestCli::evalErrors() {
    QString good = write(u"good.hlo"_s, kGood);
    // Wrong argument count and shape name the inputs file.
    QString two = write(u"two.json"_s, R"([{"shape": "f32[4]", "values": [1, 2, 3, 4]},
                                          {"shape": "f32[4]", "values": [1, 2, 3, 4]}])");
    Result count = runCli({u"eval"_s, good, u"--inputs"_s, two});
    QCOMPARE(count.exitCode, 1);
    QVERIFY2(count.err.contains(u"two.json"_s) && count.err.contains(u"takes 1 argument"_s),
             qPrintable(count.err));
    QString wrongShape = write(u"shape.json"_s, R"({"shape": "f32[3]", "values": [1, 2, 3]})");
    Result shape = runCli({u"eval"_s, good, u"--inputs"_s, wrongShape});
    QCOMPARE(shape.exitCode, 1);
    QVERIFY2(shape.err.contains(u"wants f32[4]"_s), qPrintable(shape.err));
    QString broken = write(u"broken.json"_s, "[{\"shape\": ");
    Result json = runCli({u"eval"_s, good, u"--inputs"_s, broken});
    QCOMPARE(json.exitCode, 1);
    QVERIFY2(json.err.contains(u"broken.json:1:"_s), qPrintable(json.err));
    // An instruction the evaluator cannot run is named.
    QString custom = write(u"custom.hlo"_s, kCustomCallModule);
    Result unsupported = runCli({u"eval"_s, custom});
    QCOMPARE(unsupported.exitCode, 1);
    QVERIFY2(unsupported.err.contains(u"%cc"_s) && unsupported.err.contains(u"my_kernel"_s),
             qPrintable(unsupported.err));
    QCOMPARE(runCli({u"eval"_s, good, u"--format"_s, u"xml"_s}).exitCode, 2);
    QCOMPARE(runCli({u"eval"_s, good, u"--seed"_s, u"x"_s}).exitCode, 2);
    QCOMPARE(runCli({u"eval"_s}).exitCode, 2);
}

void TestCli::evalBenchAndProfile() {
    QString good = write(u"good.hlo"_s, kGood);
    Result bench = runCli({u"eval"_s, good, u"--bench"_s, u"--repeat"_s, u"2"_s});
    QCOMPARE(bench.exitCode, 0);
    QVERIFY2(bench.out.contains(u"2 run(s)"_s) && bench.out.contains(u"elements/s"_s),
             qPrintable(bench.out));
    Result profile = runCli({u"eval"_s, good, u"--profile"_s, u"--repeat"_s, u"1"_s});
    QCOMPARE(profile.exitCode, 0);
    QVERIFY2(profile.out.contains(u"%y"_s) && profile.out.contains(u"add"_s),
             qPrintable(profile.out));
}

void TestCli::conformOutcomes() {
    QString file =
        write(u"cases.mlir"_s, R"(// RUN: stablehlo-translate --interpret -split-input-file %s
func.func @pass() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.multiply %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[1, 4]> : tensor<2xi32>
  func.return
}

// -----

func.func @fail() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.sqrt %0 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[1.0, 1.5]> : tensor<2xf32>
  func.return
}

// -----

func.func @nothing() {
  func.return
}
)");
    Result r = runCli({u"conform"_s, file});
    QCOMPARE(r.exitCode, 1);
    const QStringList lines = r.out.trimmed().split(u'\n');
    QCOMPARE(lines.size(), 4);
    QCOMPARE(lines[0], file + u"#1: passed"_s);
    QVERIFY2(lines[1].startsWith(file + u"#2: failed: "_s) && lines[1].contains(u"at {1}"_s),
             qPrintable(lines[1]));
    QCOMPARE(lines[2], file + u"#3: unsupported: no check to apply"_s);
    QCOMPARE(lines[3], u"1 passed, 1 failed, 1 unsupported"_s);
    // --quiet drops the passes; all-passing input exits 0.
    Result quiet = runCli({u"conform"_s, u"--quiet"_s, file});
    QVERIFY(!quiet.out.contains(u": passed"_s));
    QString ok = write(u"ok.mlir"_s, R"(func.func @pass() {
  %0 = stablehlo.constant dense<3> : tensor<i32>
  check.expect_eq_const %0, dense<3> : tensor<i32>
  func.return
})");
    Result passing = runCli({u"conform"_s, ok});
    QCOMPARE(passing.exitCode, 0);
    QVERIFY(passing.out.endsWith(u"1 passed, 0 failed, 0 unsupported\n"_s));
    QCOMPARE(runCli({u"conform"_s}).exitCode, 2);
}

// A module with dead code, a redundant reshape pair and a common
// subexpression: the cpu pipeline changes it without changing its results.
const char* kOptModule =
    "HloModule opt\n\n"
    "ENTRY %main (x: f32[2,3], y: f32[2,3]) -> f32[2,3] {\n"
    "  %x = f32[2,3] parameter(0)\n"
    "  %y = f32[2,3] parameter(1)\n"
    "  %a = f32[2,3] add(%x, %y)\n"
    "  %b = f32[2,3] add(%x, %y)\n"
    "  %r = f32[6] reshape(%a)\n"
    "  %r2 = f32[2,3] reshape(%r)\n"
    "  %dead = f32[2,3] multiply(%x, %x)\n"
    "  ROOT %m = f32[2,3] multiply(%r2, %b)\n"
    "}\n";

void TestCli::passesListsRegistryAndTargets() {
    Result r = runCli({u"passes"_s});
    QCOMPARE(r.exitCode, 0);
    for (const char* name : {"dce", "cse", "algebraic-simplifier", "constant-folding",
                             "call-inliner", "tuple-simplifier", "while-loop-invariant-code-motion",
                             "layout-assignment", "buffer-assignment", "library-call-expander",
                             "scan-expander", "batch-norm-expander", "annotation-remover"})
        QVERIFY2(r.out.contains(u"  "_s + QLatin1String(name) + u"\n"_s), name);
    QVERIFY(r.out.contains(
        u"cpu: library-call-expander, scan-expander, batch-norm-expander, annotation-remover, "
        u"call-inliner"_s));
    QVERIFY(
        r.out.contains(u"gpu: library-call-expander, scan-expander, batch-norm-expander, "
                       u"triangular-solve-expander, annotation-remover"_s));
    QVERIFY(r.out.contains(u"tpu: library-call-expander, scan-expander, annotation-remover"_s));
}

void TestCli::optPrintsAndDumps() {
    QString file = write(u"opt.hlo"_s, kOptModule);
    Result r = runCli({u"opt"_s, file});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.startsWith(u"HloModule opt"_s), qPrintable(r.err));
    QVERIFY(!r.out.contains(u"%dead"_s));
    QVERIFY(r.out.contains(u"{1,0}"_s));  // layouts assigned
    // The dump directory: one file per pass plus the input, and passes.json.
    const QString dir = m_dir.filePath(u"dump"_s);
    Result d = runCli({u"opt"_s, file, u"--dump-dir"_s, dir});
    QCOMPARE(d.exitCode, 0);
    QVERIFY(QFile::exists(dir + u"/00-input.hlo"_s));
    QVERIFY(QFile::exists(dir + u"/01-library-call-expander.hlo"_s));
    QVERIFY(QFile::exists(dir + u"/02-scan-expander.hlo"_s));
    QVERIFY(QFile::exists(dir + u"/03-batch-norm-expander.hlo"_s));
    QVERIFY(QFile::exists(dir + u"/04-annotation-remover.hlo"_s));
    QVERIFY(QFile::exists(dir + u"/05-call-inliner.hlo"_s));
    QFile json(dir + u"/passes.json"_s);
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QJsonObject report = QJsonDocument::fromJson(json.readAll()).object();
    QCOMPARE(report.value(u"target"_s).toString(), u"cpu"_s);
    const QJsonArray passes = report.value(u"passes"_s).toArray();
    QVERIFY(passes.size() >= 10);
    for (const QJsonValue& v : passes) {
        const QJsonObject p = v.toObject();
        QVERIFY(QFile::exists(dir + u"/"_s + p.value(u"file"_s).toString()));
        QVERIFY(p.contains(u"peak_bytes"_s));
    }
    // The last dump parses back to what opt printed.
    Result last =
        runCli({u"print"_s, dir + u"/"_s + passes.last().toObject().value(u"file"_s).toString()});
    QCOMPARE(last.out, r.out);
    // A file that cannot be written is an error, not a crash.
    QCOMPARE(runCli({u"opt"_s, file, u"--dump-dir"_s, u"/proc/nope"_s}).exitCode, 1);
}

void TestCli::optJsonReport() {
    QString file = write(u"opt.hlo"_s, kOptModule);
    Result r = runCli({u"opt"_s, file, u"--json"_s, u"--target"_s, u"tpu"_s});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(report.value(u"target"_s).toString(), u"tpu"_s);
    bool sawCse = false, sawDce = false, sawLayout = false;
    for (const QJsonValue& v : report.value(u"passes"_s).toArray()) {
        const QJsonObject p = v.toObject();
        for (const char* key : {"name", "changed", "time_ms", "diff", "peak_bytes"})
            QVERIFY2(p.contains(QLatin1String(key)), key);
        const QJsonObject diff = p.value(u"diff"_s).toObject();
        for (const char* key :
             {"added", "removed", "replaced", "rewired", "layout_changed", "fused"})
            QVERIFY2(diff.contains(QLatin1String(key)), key);
        const QString name = p.value(u"name"_s).toString();
        if (name == u"cse"_s && p.value(u"changed"_s).toBool()) sawCse = true;
        if (name == u"dce"_s && p.value(u"changed"_s).toBool()) sawDce = true;
        if (name == u"layout-assignment"_s)
            sawLayout = diff.value(u"counts"_s).toObject().value(u"layout_changed"_s).toInt() > 0 ||
                        diff.value(u"counts"_s).toObject().value(u"added"_s).toInt() >= 0;
    }
    QVERIFY(sawCse);
    QVERIFY(sawDce);
    QVERIFY(sawLayout);
}

void TestCli::optPipelineEdits() {
    QString file = write(u"opt.hlo"_s, kOptModule);
    // --passes: only dce; the duplicate add survives.
    Result dce = runCli({u"opt"_s, file, u"--passes"_s, u"dce"_s});
    QCOMPARE(dce.exitCode, 0);
    QVERIFY(!dce.out.contains(u"%dead"_s));
    QVERIFY(dce.out.contains(u"%b = "_s));
    // --disable dce keeps the dead multiply.
    Result kept = runCli({u"opt"_s, file, u"--disable"_s, u"dce"_s});
    QCOMPARE(kept.exitCode, 0);
    QVERIFY(kept.out.contains(u"%dead"_s));
    // --stop-after: the report ends with that pass.
    Result stop = runCli({u"opt"_s, file, u"--stop-after"_s, u"tuple-simplifier"_s, u"--json"_s});
    QCOMPARE(stop.exitCode, 0);
    const QJsonArray passes =
        QJsonDocument::fromJson(stop.out.toUtf8()).object().value(u"passes"_s).toArray();
    QCOMPARE(passes.last().toObject().value(u"name"_s).toString(), u"tuple-simplifier"_s);
    // Bad edits are usage errors naming the problem.
    Result unknown = runCli({u"opt"_s, file, u"--passes"_s, u"dce,frobnicate"_s});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY2(unknown.err.contains(u"frobnicate"_s), qPrintable(unknown.err));
    QCOMPARE(runCli({u"opt"_s, file, u"--target"_s, u"fpga"_s}).exitCode, 2);
    QCOMPARE(runCli({u"opt"_s, file, u"--disable"_s, u"nosuch"_s}).exitCode, 2);
    Result option = runCli({u"opt"_s, file, u"--option"_s, u"algebraic-simplifier.bogus=1"_s});
    QCOMPARE(option.exitCode, 2);
    QVERIFY2(option.err.contains(u"bogus"_s), qPrintable(option.err));
}

void TestCli::bisectExitCodes() {
    QString file = write(u"opt.hlo"_s, kOptModule);
    Result ok = runCli({u"bisect"_s, file, u"--seed"_s, u"3"_s});
    QCOMPARE(ok.exitCode, 0);
    QVERIFY2(ok.out.contains(u"no pass changes the results"_s), qPrintable(ok.out));
    QString custom = write(u"custom.hlo"_s, kCustomCallModule);
    Result cannot = runCli({u"bisect"_s, custom});
    QCOMPARE(cannot.exitCode, 3);
    QVERIFY2(cannot.out.contains(u"%cc"_s), qPrintable(cannot.out));
    Result big = runCli({u"bisect"_s, file, u"--max-elements"_s, u"10"_s});
    QCOMPARE(big.exitCode, 3);
    QVERIFY2(big.out.contains(u"largest"_s), qPrintable(big.out));
    QCOMPARE(runCli({u"bisect"_s}).exitCode, 2);
    // An input that does not parse, or parses but does not verify: 4, not a miscompile.
    Result unparsable = runCli({u"bisect"_s, write(u"bad.hlo"_s, kBadSyntax)});
    QCOMPARE(unparsable.exitCode, 4);
    Result invalid = runCli({u"bisect"_s, write(u"badshape.hlo"_s, kBadShape)});
    QCOMPARE(invalid.exitCode, 4);
    QVERIFY2(invalid.out.contains(u"does not verify"_s), qPrintable(invalid.out));
    // --no-verify lets the passes run on it: whatever they make of it, never 4.
    QVERIFY(runCli({u"bisect"_s, write(u"badshape.hlo"_s, kBadShape), u"--no-verify"_s}).exitCode != 4);
}

void TestCli::costPredictsUnfusedAndFused() {
    const QString example =
        QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/sin_plus_exp.hlo");
    for (const char* hardware : {"cpu", "h100", "tpu_v5e"}) {
        Result r =
            runCli({u"cost"_s, example, u"--target"_s, QLatin1String(hardware), u"--json"_s});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonObject unfused = report.value(u"unfused"_s).toObject();
        const QJsonObject fused = report.value(u"fused"_s).toObject();
        // sine, exponential and add (plus, on TPU, the copies layout assignment
        // inserts to re-tile the untiled entry layout) ...
        QVERIFY(unfused.value(u"kernels"_s).toInt() >= 3);
        // ... become one loop fusion (with the same copies).
        QCOMPARE(unfused.value(u"kernels"_s).toInt() - fused.value(u"kernels"_s).toInt(), 2);
        QVERIFY(unfused.value(u"predicted_ms"_s).toDouble() >
                fused.value(u"predicted_ms"_s).toDouble());
        QVERIFY(report.value(u"predicted_speedup"_s).toDouble() > 1.0);
        QVERIFY(unfused.value(u"peak_bytes"_s).toInt() >= fused.value(u"peak_bytes"_s).toInt());
        QCOMPARE(report.value(u"kernels"_s).toArray().size(), fused.value(u"kernels"_s).toInt());
    }
    Result text = runCli({u"cost"_s, example});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains(u"predicted speedup"_s), qPrintable(text.out));
    QCOMPARE(runCli({u"cost"_s, example, u"--target"_s, u"z80"_s}).exitCode, 2);
}

void TestCli::explainAnswersForPairs() {
    const QString example =
        QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/sin_plus_exp.hlo");
    Result fused = runCli({u"explain"_s, example, u"sine.2"_s, u"add.4"_s});
    QCOMPARE(fused.exitCode, 0);
    QVERIFY2(fused.out.contains(u"fused"_s) && fused.out.contains(u"[fused]"_s),
             qPrintable(fused.out));
    // Forbidding the pair changes the answer and its reason.
    Result forbidden = runCli({u"explain"_s, example, u"%sine.2"_s, u"%add.4"_s, u"--option"_s,
                               u"fusion.forbid=sine.2:add.4"_s});
    QCOMPARE(forbidden.exitCode, 0);
    QVERIFY2(forbidden.out.contains(u"not fused [forbidden-by-user]"_s), qPrintable(forbidden.out));
    // Not a producer-consumer pair: said so, exit 1.
    Result unrelated = runCli({u"explain"_s, example, u"sine.2"_s, u"exponential.3"_s});
    QCOMPARE(unrelated.exitCode, 1);
    QVERIFY2(unrelated.out.contains(u"not a producer-consumer pair"_s), qPrintable(unrelated.out));
    Result missing = runCli({u"explain"_s, example, u"nope"_s, u"add.4"_s});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.out.contains(u"no instruction named %nope"_s), qPrintable(missing.out));
    QCOMPARE(runCli({u"explain"_s, example}).exitCode, 2);
}

void TestCli::runOnTheInterpreter() {
    const QString example =
        QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/sin_plus_exp.hlo");
    Result r = runCli({u"run"_s, example, u"--device"_s, u"interpreter"_s, u"--repeat"_s, u"3"_s,
                       u"--warmup"_s, u"0"_s, u"--check"_s, u"--json"_s});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(report.value(u"device"_s).toString(), u"interpreter"_s);
    QVERIFY(report.contains(u"threads"_s));
    const QJsonObject unfused = report.value(u"unfused"_s).toObject();
    const QJsonObject fused = report.value(u"fused"_s).toObject();
    for (const QJsonObject& mode : {unfused, fused}) {
        for (const char* key :
             {"median_ms", "min_ms", "max_ms", "compile_ms", "kernels", "peak_bytes"})
            QVERIFY2(mode.contains(QLatin1String(key)), key);
        QCOMPARE(mode.value(u"runs"_s).toInt(), 3);
        QVERIFY(mode.value(u"min_ms"_s).toDouble() <= mode.value(u"median_ms"_s).toDouble());
        QVERIFY(mode.value(u"median_ms"_s).toDouble() <= mode.value(u"max_ms"_s).toDouble());
    }
    // sine, exponential, add -> one loop fusion.
    QCOMPARE(unfused.value(u"kernels"_s).toInt(), 3);
    QCOMPARE(fused.value(u"kernels"_s).toInt(), 1);
    const QJsonObject check = report.value(u"check"_s).toObject();
    QVERIFY(check.value(u"passed"_s).toBool());
    QCOMPARE(check.value(u"max_abs_error"_s).toDouble(), 0.0);
    // One mode: the other is absent.
    Result one = runCli({u"run"_s, example, u"--device"_s, u"interpreter"_s, u"--mode"_s,
                         u"fused"_s, u"--json"_s, u"--repeat"_s, u"1"_s});
    QCOMPARE(one.exitCode, 0);
    const QJsonObject oneReport = QJsonDocument::fromJson(one.out.toUtf8()).object();
    QVERIFY(oneReport.contains(u"fused"_s) && !oneReport.contains(u"unfused"_s) &&
            !oneReport.contains(u"check"_s));
    // The text report names the speedup and the check.
    Result text = runCli(
        {u"run"_s, example, u"--device"_s, u"interpreter"_s, u"--check"_s, u"--repeat"_s, u"1"_s});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(
        text.out.contains(u"measured speedup"_s) && text.out.contains(u"check: max abs error 0"_s),
        qPrintable(text.out));
}

void TestCli::runErrors() {
    const QString example =
        QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/sin_plus_exp.hlo");
    Result device = runCli({u"run"_s, example, u"--device"_s, u"z80"_s});
    QCOMPARE(device.exitCode, 2);
    QVERIFY2(device.err.contains(u"z80"_s) && device.err.contains(u"interpreter"_s),
             qPrintable(device.err));
    QCOMPARE(runCli({u"run"_s, example, u"--mode"_s, u"sideways"_s}).exitCode, 2);
    QCOMPARE(runCli({u"run"_s, example, u"--repeat"_s, u"0"_s}).exitCode, 2);
    QCOMPARE(runCli({u"run"_s}).exitCode, 2);
    QTemporaryDir dir;
    auto write = [&dir](const QString& name, const char* text) {
        QFile f(dir.filePath(name));
        return f.open(QIODevice::WriteOnly) && f.write(text) == qint64(qstrlen(text)) ? f.fileName()
                                                                                      : QString();
    };
    const QString bad = write(u"bad.hlo"_s, kBadSyntax);
    QVERIFY(!bad.isEmpty());
    Result syntax = runCli({u"run"_s, bad, u"--device"_s, u"interpreter"_s});
    QCOMPARE(syntax.exitCode, 1);
    QVERIFY2(syntax.err.contains(u"bad.hlo:5:"_s), qPrintable(syntax.err));
    // A module the reference cannot evaluate: the failing instruction is named.
    const QString custom = write(u"custom.hlo"_s, kCustomCallModule);
    QVERIFY(!custom.isEmpty());
    Result cc = runCli({u"run"_s, custom, u"--device"_s, u"interpreter"_s});
    QCOMPARE(cc.exitCode, 1);
    QVERIFY2(cc.err.contains(u"cc"_s), qPrintable(cc.err));
}

// No GPU (a driver that cannot load): "no GPU found", exit 1, and the
// predicted GPU figures still shown.
void TestCli::gpuWithoutDriverPredicts() {
    qputenv("HLOSCOPE_GPU_RUNNER", HLOSCOPE_GPU_RUNNER_PATH);
    qputenv("HLOSCOPE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
    const QString example = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/softmax.hlo");
    Result r = runCli({u"run"_s, example, u"--device"_s, u"gpu"_s, u"--no-history"_s});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(u"no GPU found"_s), qPrintable(r.err));
    QVERIFY2(r.err.contains(u"predicted on h100: unfused"_s), qPrintable(r.err));
    qunsetenv("HLOSCOPE_CUDA_LIBRARY");
    qunsetenv("HLOSCOPE_GPU_RUNNER");
}

// Plans need no GPU; import-run explains what is missing.
void TestCli::gpuPlansAndImportErrors() {
    QTemporaryDir dir;
    const QString example = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo");
    Result r = runCli({u"run"_s, example, u"--device"_s, u"gpu"_s, u"--emit-plan"_s, dir.path(),
                       u"--sm"_s, u"sm_80"_s});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(QFile::exists(dir.filePath(u"fused/plan.json"_s)));
    QVERIFY(QFile::exists(dir.filePath(u"unfused/kernels.ptx"_s)));
    QVERIFY(r.out.contains(u"hloscope-gpu-runner"_s));
    r = runCli({u"run"_s, example, u"--emit-plan"_s, dir.path()});
    QCOMPARE(r.exitCode, 2);  // needs --device gpu
    r = runCli({u"run"_s, example, u"--device"_s, u"gpu"_s, u"--emit-plan"_s, dir.path(), u"--sm"_s,
                u"sm_70"_s});
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.err.contains(u"sm_70"_s));
    r = runCli({u"import-run"_s, dir.path()});  // plans, but no results yet
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(u"results.json"_s), qPrintable(r.err));
    QTemporaryDir empty;
    r = runCli({u"import-run"_s, empty.path()});
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.err.contains(u"no plan.json"_s));
    QCOMPARE(runCli({u"import-run"_s}).exitCode, 2);
}

// The probe the runner measured on an H200 becomes a target description.
void TestCli::calibrateFromGpuProbe() {
    QTemporaryDir dir;
    const QString out = dir.filePath(u"gpu.json"_s);
    Result r = runCli({u"calibrate"_s, u"--gpu-probe"_s,
                       QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/bench/gpu/h200_probe.json"),
                       u"--name"_s, u"mygpu"_s, u"--output"_s, out});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(u"\"name\": \"mygpu\""_s));
    QVERIFY(r.out.contains(u"measured by hloscope-gpu-runner --probe on NVIDIA H200"_s));
    QVERIFY(QFile::exists(out));
    r = runCli({u"cost"_s, QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/softmax.hlo"),
                u"--target"_s, out});
    QCOMPARE(r.exitCode, 0);
    r = runCli({u"calibrate"_s, u"--gpu-probe"_s,
                QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo")});
    QCOMPARE(r.exitCode, 1);
}

void TestCli::calcArithmeticAndErrors() {
    Result r =
        runCli({u"calc"_s, u"--baseline-time"_s, u"140ms"_s, u"--baseline-memory"_s, u"11GB"_s,
                u"--speedup"_s, u"1.4"_s, u"--memory-reduction"_s, u"1.25"_s, u"--json"_s});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j.value(u"optimized_time"_s).toDouble(), 100.0);
    QCOMPARE(j.value(u"time_saved"_s).toDouble(), 40.0);
    QVERIFY(qAbs(j.value(u"time_saved_pct"_s).toDouble() - 100.0 * 40 / 140) < 1e-9);
    QCOMPARE(j.value(u"optimized_memory"_s).toDouble(), 8.8);
    QVERIFY(qAbs(j.value(u"memory_saved"_s).toDouble() - 2.2) < 1e-9);
    QVERIFY(qAbs(j.value(u"memory_saved_pct"_s).toDouble() - 20.0) < 1e-9);
    QCOMPARE(j.value(u"time_unit"_s).toString(), u"ms"_s);
    QCOMPARE(j.value(u"memory_unit"_s).toString(), u"GB"_s);
    // Seconds and megabytes; the text form.
    Result text = runCli({u"calc"_s, u"--baseline-time"_s, u"2s"_s, u"--baseline-memory"_s,
                          u"500MB"_s, u"--speedup"_s, u"4"_s, u"--memory-reduction"_s, u"2"_s});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains(u"optimized time:   0.5 s"_s) &&
                 text.out.contains(u"optimized memory: 250 MB"_s),
             qPrintable(text.out));
    // Every bad field is named; never NaN or inf.
    Result bad = runCli({u"calc"_s, u"--baseline-time"_s, u"abc"_s, u"--baseline-memory"_s, u"-1"_s,
                         u"--speedup"_s, u"0"_s, u"--memory-reduction"_s, u"inf"_s, u"--json"_s});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY(bad.out.isEmpty());
    for (const char* field :
         {"baseline time", "baseline memory", "speedup factor", "memory reduction factor"})
        QVERIFY2(bad.err.contains(QLatin1String(field)), qPrintable(bad.err));
    QCOMPARE(runCli({u"calc"_s, u"--speedup"_s, u"2"_s}).exitCode, 2);
    QCOMPARE(runCli({u"calc"_s, u"--baseline-time"_s}).exitCode, 2);
}

void TestCli::estimatePredictsAndMeasures() {
    const QString example =
        QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/sin_plus_exp.hlo");
    Result predicted = runCli({u"estimate"_s, example, u"--target"_s, u"h100"_s, u"--json"_s});
    QVERIFY2(predicted.exitCode == 0, qPrintable(predicted.err));
    QJsonObject j = QJsonDocument::fromJson(predicted.out.toUtf8()).object();
    QCOMPARE(j.value(u"target"_s).toString(), u"h100"_s);
    QVERIFY(j.value(u"device"_s).isNull() && !j.contains(u"measured"_s));
    QJsonObject p = j.value(u"predicted"_s).toObject();
    for (const char* key :
         {"unfused_ms", "fused_ms", "speedup", "peak_bytes_unfused", "peak_bytes_fused",
          "memory_reduction", "compile_ms", "break_even_runs"})
        QVERIFY2(p.contains(QLatin1String(key)), key);
    QVERIFY(p.value(u"unfused_ms"_s).toDouble() > p.value(u"fused_ms"_s).toDouble());
    QVERIFY(qAbs(p.value(u"speedup"_s).toDouble() -
                 p.value(u"unfused_ms"_s).toDouble() / p.value(u"fused_ms"_s).toDouble()) < 1e-9);
    QVERIFY(j.value(u"error"_s).toObject().value(u"speedup_pct"_s).isNull());
    // Three kernels unfused (sine, exponential, add), one fused.
    const QJsonObject kernels = j.value(u"kernels"_s).toObject();
    QCOMPARE(kernels.value(u"unfused"_s).toArray().size(), 3);
    QCOMPARE(kernels.value(u"fused"_s).toArray().size(), 1);

    // Measured on this machine's CPU, with a user's baseline scaled.
    Result measured =
        runCli({u"estimate"_s, example, u"--measure"_s, u"--repeat"_s, u"3"_s, u"--baseline-time"_s,
                u"140ms"_s, u"--baseline-memory"_s, u"11GB"_s, u"--json"_s});
    QVERIFY2(measured.exitCode == 0, qPrintable(measured.err));
    j = QJsonDocument::fromJson(measured.out.toUtf8()).object();
    QCOMPARE(j.value(u"device"_s).toString(), u"cpu"_s);
    p = j.value(u"predicted"_s).toObject();
    const QJsonObject m = j.value(u"measured"_s).toObject();
    QVERIFY(m.value(u"unfused_ms"_s).toDouble() > 0 && m.value(u"fused_ms"_s).toDouble() > 0);
    QVERIFY(m.value(u"peak_bytes_fused"_s).toDouble() > 0);
    // Code generation is part of the measured compile time.
    QVERIFY(m.value(u"compile_ms"_s).toDouble() > 0);
    const double error = j.value(u"error"_s).toObject().value(u"speedup_pct"_s).toDouble();
    const double want = (p.value(u"speedup"_s).toDouble() - m.value(u"speedup"_s).toDouble()) /
                        m.value(u"speedup"_s).toDouble() * 100;
    QVERIFY2(qAbs(error - want) < 1e-6, qPrintable(QString::number(error)));
    const QJsonObject kernelError = j.value(u"error"_s).toObject().value(u"kernels"_s).toObject();
    QCOMPARE(kernelError.value(u"count"_s).toInt(), 4);
    const QJsonObject baseline = j.value(u"baseline"_s).toObject();
    QCOMPARE(baseline.value(u"source"_s).toString(), u"measured"_s);
    // Stored in the history, which summarises the model's accuracy.
    const QJsonObject history = j.value(u"history"_s).toObject();
    QCOMPARE(history.value(u"path"_s).toString(), m_dir.filePath(u"history.sqlite"_s));
    const int stored = history.value(u"runs"_s).toInt();
    QVERIFY(stored >= 1);
    Result again = runCli({u"estimate"_s, example, u"--measure"_s, u"--repeat"_s, u"1"_s});
    QCOMPARE(again.exitCode, 0);
    QVERIFY2(again.out.contains(u"model accuracy on this machine (cpu): median speedup error"_s) &&
                 again.out.contains(QStringLiteral("over %1 runs").arg(stored + 1)),
             qPrintable(again.out));
    Result skipped = runCli({u"estimate"_s, example, u"--measure"_s, u"--repeat"_s, u"1"_s,
                             u"--no-history"_s, u"--json"_s});
    QCOMPARE(skipped.exitCode, 0);
    QVERIFY(!QJsonDocument::fromJson(skipped.out.toUtf8()).object().contains(u"history"_s));
    QVERIFY(qAbs(baseline.value(u"optimized_time"_s).toDouble() -
                 140.0 / m.value(u"speedup"_s).toDouble()) < 1e-3);
    // CSV: a header, two module rows, four kernel rows.
    Result csv = runCli({u"estimate"_s, example, u"--csv"_s});
    QCOMPARE(csv.exitCode, 0);
    const QStringList lines = csv.out.trimmed().split(u'\n');
    QCOMPARE(lines.size(), 7);
    QCOMPARE(lines.front(), u"scope,name,opcode,predicted_ms,measured_ms,error_pct"_s);
    QVERIFY(lines[1].startsWith(u"module-unfused,"_s));
    // Text names the break-even point.
    Result text = runCli({u"estimate"_s, example});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains(u"break-even (predicted): "_s), qPrintable(text.out));
}

// The first cpu estimate on a machine measures it (unless told not to), caches it, and every
// estimate names the figures it used.
void TestCli::estimateCalibratesFirst() {
    QTemporaryDir cache;
    QVERIFY(cache.isValid());
    const QByteArray saved = qgetenv("XDG_CACHE_HOME");
    qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
    const QString example = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/softmax.hlo");
    Result builtIn = runCli({u"estimate"_s, example, u"--no-calibrate"_s});
    QCOMPARE(builtIn.exitCode, 0);
    QVERIFY2(builtIn.out.contains(u"target figures: not calibrated for this machine"_s), qPrintable(builtIn.out));
    QVERIFY(!QDir(cache.filePath(u"hloscope"_s)).exists());
    Result first = runCli({u"estimate"_s, example, u"--json"_s});
    QCOMPARE(first.exitCode, 0);
    QVERIFY2(first.err.contains(u"no calibration yet"_s), qPrintable(first.err));
    QVERIFY2(first.err.contains(u"calibration cached in "_s + cache.path()), qPrintable(first.err));
    const QJsonObject json = QJsonDocument::fromJson(first.out.toUtf8()).object();
    QVERIFY2(json.value(u"calibration"_s).toString().startsWith(u"calibrated on "_s), qPrintable(first.out));
    QVERIFY(json.value(u"calibration"_s).toString().contains(u"calibrate --quick (today)"_s));
    Result second = runCli({u"estimate"_s, example});
    QCOMPARE(second.exitCode, 0);
    QVERIFY2(!second.err.contains(u"no calibration yet"_s), qPrintable(second.err));  // cached
    QVERIFY(second.out.contains(u"target figures: calibrated on "_s));
    qputenv("XDG_CACHE_HOME", saved);
}

void TestCli::estimateErrors() {
    const QString example =
        QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/sin_plus_exp.hlo");
    QCOMPARE(runCli({u"estimate"_s}).exitCode, 2);
    QCOMPARE(runCli({u"estimate"_s, example, u"--json"_s, u"--csv"_s}).exitCode, 2);
    QCOMPARE(runCli({u"estimate"_s, example, u"--baseline-time"_s, u"1s"_s}).exitCode, 2);
    QCOMPARE(runCli({u"estimate"_s, example, u"--repeat"_s, u"0"_s}).exitCode, 2);
    Result target = runCli({u"estimate"_s, example, u"--target"_s, u"nosuch"_s});
    QCOMPARE(target.exitCode, 1);
    QVERIFY2(target.err.contains(u"nosuch"_s), qPrintable(target.err));
    // No GPU backend measures an h100 here.
    Result gpu = runCli({u"estimate"_s, example, u"--target"_s, u"h100"_s, u"--measure"_s});
    QCOMPARE(gpu.exitCode, 1);
    QVERIFY2(gpu.err.contains(u"no device measures target 'h100'"_s), qPrintable(gpu.err));
    Result device = runCli({u"estimate"_s, example, u"--device"_s, u"nosuch"_s});
    QCOMPARE(device.exitCode, 1);
    QVERIFY2(device.err.contains(u"nosuch"_s), qPrintable(device.err));
    Result bad = runCli({u"estimate"_s, example, u"--baseline-time"_s, u"-3ms"_s,
                         u"--baseline-memory"_s, u"1GB"_s});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains(u"baseline time"_s), qPrintable(bad.err));
    const QString broken = write(u"broken.hlo"_s, kBadSyntax);
    Result parse = runCli({u"estimate"_s, broken});
    QCOMPARE(parse.exitCode, 1);
    QVERIFY2(parse.err.contains(u"broken.hlo:5:"_s), qPrintable(parse.err));
}

void TestCli::runStoresHistory() {
    // Both modes on the cpu device are stored; the interpreter, one mode,
    // --no-history or a grid of several devices are not. The estimate's accuracy line counts the
    // row.
    const QByteArray saved = qgetenv("HLOSCOPE_HISTORY");
    const QString path = m_dir.filePath(u"run_history.sqlite"_s);
    qputenv("HLOSCOPE_HISTORY", path.toUtf8());
    const QString example =
        QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/sin_plus_exp.hlo");
    QCOMPARE(runCli({u"run"_s, example, u"--device"_s, u"cpu"_s, u"--repeat"_s, u"1"_s}).exitCode,
             0);
    QVERIFY(QFile::exists(path));
    QCOMPARE(runCli({u"run"_s, example, u"--device"_s, u"interpreter"_s, u"--repeat"_s, u"1"_s})
                 .exitCode,
             0);
    QCOMPARE(runCli({u"run"_s, example, u"--mode"_s, u"fused"_s, u"--repeat"_s, u"1"_s}).exitCode,
             0);
    QCOMPARE(runCli({u"run"_s, example, u"--repeat"_s, u"1"_s, u"--no-history"_s}).exitCode, 0);
    // Nor is a module of several devices, whose grid shares this machine's cores (run and
    // estimate --measure).
    const QString grid =
        write(u"grid_history.hlo"_s,
              "HloModule g, replica_count=2\nadd {\n  a = f32[] parameter(0)\n"
              "  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n"
              "ENTRY e {\n  p = f32[64] parameter(0)\n  s = f32[64] sine(p)\n"
              "  ROOT c = f32[64] all-reduce(s), to_apply=add, replica_groups={{0,1}}\n}\n");
    QCOMPARE(runCli({u"run"_s, grid, u"--device"_s, u"cpu"_s, u"--repeat"_s, u"1"_s}).exitCode, 0);
    Result gridEstimate = runCli({u"estimate"_s, grid, u"--measure"_s, u"--repeat"_s, u"1"_s});
    QCOMPARE(gridEstimate.exitCode, 0);
    QVERIFY2(gridEstimate.out.contains(u"measured: every run covers all 2 devices of the module's "
                                       "grid at once"_s) &&
                 gridEstimate.out.contains(u"(not stored in the history)"_s),
             qPrintable(gridEstimate.out));
    Result estimate = runCli({u"estimate"_s, example, u"--measure"_s, u"--repeat"_s, u"1"_s});
    qputenv("HLOSCOPE_HISTORY", saved);
    QCOMPARE(estimate.exitCode, 0);
    QVERIFY2(estimate.out.contains(u"over 2 runs"_s), qPrintable(estimate.out));
}

void TestCli::runOnTheSimulatedTpu() {
    // Simulated times (labelled so, not stored), TPU numerics checked against
    // the interpreter on them, the difference from f32 reported, the
    // simulation's details and the timelines as a Chrome trace.
    const QByteArray saved = qgetenv("HLOSCOPE_HISTORY");
    const QString history = m_dir.filePath(u"tpu_history.sqlite"_s);
    qputenv("HLOSCOPE_HISTORY", history.toUtf8());
    const QString example = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo");
    const QString trace = m_dir.filePath(u"trace.json"_s);
    Result r = runCli({u"run"_s, example, u"--tpu"_s, u"v5e"_s, u"--check"_s, u"--json"_s,
                       u"--repeat"_s, u"1"_s, u"--trace"_s, trace});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err + r.out));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j.value(u"device"_s).toString(), u"tpu-sim-v5e"_s);
    QCOMPARE(j.value(u"target"_s).toString(), u"tpu_v5e"_s);
    QVERIFY(j.value(u"simulated"_s).toBool());
    QVERIFY(j.value(u"check"_s).toObject().value(u"passed"_s).toBool());
    // The example's DEFAULT-precision dots round their inputs to bf16.
    QVERIFY(j.value(u"difference_from_f32"_s).toObject().value(u"max_abs_error"_s).toDouble() >
            1e-4);
    for (const QString& mode : {u"unfused"_s, u"fused"_s}) {
        const QJsonObject tpu = j.value(mode).toObject().value(u"tpu"_s).toObject();
        QCOMPARE(tpu.value(u"target"_s).toString(), u"tpu_v5e"_s);
        QCOMPARE(tpu.value(u"total_ms"_s).toDouble(),
                 j.value(mode).toObject().value(u"median_ms"_s).toDouble());
        QVERIFY(tpu.value(u"padded_bytes"_s).toDouble() >=
                tpu.value(u"logical_bytes"_s).toDouble());
        const QJsonArray kernels = tpu.value(u"kernels"_s).toArray();
        QVERIFY(!kernels.isEmpty());
        bool matmul = false;
        for (const QJsonValue& k : kernels)
            if (k.toObject().value(u"kind"_s) == u"matmul"_s &&
                k.toObject().value(u"mxu_utilisation"_s).toDouble() > 0)
                matmul = true;
        QVERIFY(matmul);
    }
    QFile file(trace);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray events =
        QJsonDocument::fromJson(file.readAll()).object().value(u"traceEvents"_s).toArray();
    QStringList processes;
    for (const QJsonValue& e : events)
        if (e.toObject().value(u"name"_s) == u"process_name"_s)
            processes << e.toObject().value(u"args"_s).toObject().value(u"name"_s).toString();
    QCOMPARE(processes, QStringList({u"tpu_v5e unfused"_s, u"tpu_v5e fused"_s}));
    // Text: labelled simulated, with utilisation and padding.
    Result text = runCli({u"run"_s, example, u"--device"_s, u"tpu-sim"_s, u"--mode"_s, u"fused"_s,
                          u"--repeat"_s, u"1"_s});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains(u"times are simulated (tpu_v4)"_s), qPrintable(text.out));
    QVERIFY(text.out.contains(u"padding of the tiled layouts"_s));
    QVERIFY(text.out.contains(u"MXU%"_s));
    qputenv("HLOSCOPE_HISTORY", saved);
    // estimate --measure on a TPU target: simulated on its generation, labelled so.
    Result estimate = runCli({u"estimate"_s, example, u"--target"_s, u"tpu_v4"_s, u"--measure"_s,
                              u"--repeat"_s, u"1"_s});
    QVERIFY2(estimate.exitCode == 0, qPrintable(estimate.err));
    QVERIFY2(estimate.out.contains(u"(predicted; simulated on tpu-sim)"_s),
             qPrintable(estimate.out));
    QVERIFY(estimate.out.contains(u"\nsimulated "_s));
    Result estimateJson = runCli({u"estimate"_s, example, u"--target"_s, u"tpu_v5e"_s,
                                  u"--measure"_s, u"--repeat"_s, u"1"_s, u"--json"_s});
    QCOMPARE(estimateJson.exitCode, 0);
    QVERIFY2(estimateJson.out.contains(u"\"simulated\": true"_s), qPrintable(estimateJson.out));
    QVERIFY(estimateJson.out.contains(u"tpu-sim-v5e"_s));
    QVERIFY(!QFile::exists(history));  // simulated runs are no measurement of this machine
    // Errors.
    Result generation = runCli({u"run"_s, example, u"--tpu"_s, u"v3"_s});
    QCOMPARE(generation.exitCode, 2);
    QVERIFY2(generation.err.contains(u"--tpu takes v4 or v5e"_s), qPrintable(generation.err));
    Result mixed = runCli({u"run"_s, example, u"--device"_s, u"cpu"_s, u"--tpu"_s, u"v4"_s});
    QCOMPARE(mixed.exitCode, 2);
    QVERIFY2(mixed.err.contains(u"--tpu needs the simulated TPU"_s), qPrintable(mixed.err));
    Result noTimeline = runCli({u"run"_s, example, u"--device"_s, u"interpreter"_s, u"--repeat"_s,
                                u"1"_s, u"--trace"_s, m_dir.filePath(u"none.json"_s)});
    QCOMPARE(noTimeline.exitCode, 1);
    QVERIFY2(noTimeline.err.contains(u"models no units"_s), qPrintable(noTimeline.err));
}

void TestCli::calibrateFromHistory() {
    // Fits the target's factors to the kernels estimate --measure stored;
    // writes only where told; an empty or absent history is an error.
    const QByteArray saved = qgetenv("HLOSCOPE_HISTORY");
    const QString history = m_dir.filePath(u"fit_history.sqlite"_s);
    qputenv("HLOSCOPE_HISTORY", history.toUtf8());
    Result none = runCli({u"calibrate"_s, u"--from-history"_s, u"--dry-run"_s});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.err.contains(u"no history yet"_s), qPrintable(none.err));
    const QString target = m_dir.filePath(u"target.json"_s);
    QVERIFY(QFile::copy(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/targets/cpu.json"), target));
    for (const char* name : {"mlp", "softmax", "layernorm"}) {
        const QString example = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/%1.hlo")
                                    .arg(QLatin1String(name));
        QCOMPARE(runCli({u"estimate"_s, example, u"--target"_s, target, u"--measure"_s,
                         u"--repeat"_s, u"2"_s})
                     .exitCode,
                 0);
    }
    const QString fitted = m_dir.filePath(u"fitted.json"_s);
    Result fit = runCli({u"calibrate"_s, u"--from-history"_s, u"--target"_s, target, u"--output"_s,
                         fitted, u"--json"_s});
    QCOMPARE(fit.exitCode, 0);
    QJsonParseError error;
    const QJsonObject j = QJsonDocument::fromJson(fit.out.toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(fit.out));
    QCOMPARE(j.value(u"runs"_s).toInt(), 3);
    QVERIFY(j.value(u"kernels"_s).toInt() > 10);
    // What the fit minimises never rises; the median is reported, not promised.
    QVERIFY(j.value(u"median_abs_error_pct_after"_s).toDouble() >= 0);
    QVERIFY2(j.value(u"mean_abs_log_error_after"_s).toDouble() <=
                 j.value(u"mean_abs_log_error_before"_s).toDouble() + 1e-12,
             qPrintable(fit.out));
    const QJsonObject elementwise =
        j.value(u"efficiency"_s).toObject().value(u"elementwise"_s).toObject();
    QVERIFY(elementwise.value(u"fitted"_s).toBool());
    QVERIFY(elementwise.value(u"after"_s).toDouble() > 0 &&
            elementwise.value(u"after"_s).toDouble() <= 1);
    QCOMPARE(j.value(u"written"_s).toArray().size(), 1);
    // The written target loads, with its fitted factor and where it came from.
    QFile file(fitted);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject written = QJsonDocument::fromJson(file.readAll()).object();
    const QJsonObject factor =
        written.value(u"efficiency"_s).toObject().value(u"elementwise"_s).toObject();
    QCOMPARE(factor.value(u"value"_s).toDouble(), elementwise.value(u"after"_s).toDouble());
    QVERIFY(factor.value(u"source"_s)
                .toString()
                .startsWith(u"fitted by hloscope-cli calibrate --from-history"_s));
    QCOMPARE(
        runCli({u"estimate"_s, QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo"),
                u"--target"_s, fitted})
            .exitCode,
        0);
    // A file target without --output: nothing to write to.
    Result nowhere = runCli({u"calibrate"_s, u"--from-history"_s, u"--target"_s, target});
    QCOMPARE(nowhere.exitCode, 2);
    QVERIFY(nowhere.err.contains(u"--output"_s));
    // Another machine's rows only: none.
    Result elsewhere = runCli({u"calibrate"_s, u"--from-history"_s, u"--target"_s, target,
                               u"--machine"_s, u"no-such-host"_s, u"--dry-run"_s});
    QCOMPARE(elsewhere.exitCode, 1);
    QVERIFY(elsewhere.err.contains(u"no measured kernels"_s));
    qputenv("HLOSCOPE_HISTORY", saved);
}

// An optimized dump: its own kernels against the same ops unfused, no pipeline.
void TestCli::costOfAnOptimizedModule() {
    const QString after = QStringLiteral(HLOSCOPE_SOURCE_DIR
                                         "/tests/data/xla_dump_mlp/module_0001.jit_mlp.sm_90a_gpu_after_optimizations.txt");
    Result r = runCli({u"cost"_s, after, u"--target"_s, u"h100"_s, u"--json"_s});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(report.value(u"pipeline"_s).toString(), u"none: the module's own fusions"_s);
    QCOMPARE(report.value(u"fused"_s).toObject().value(u"kernels"_s).toInt(), 4);
    QCOMPARE(report.value(u"unfused"_s).toObject().value(u"kernels"_s).toInt(), 10);
    QVERIFY(report.value(u"predicted_speedup"_s).toDouble() > 1);
    r = runCli({u"cost"_s, after, u"--target"_s, u"h100"_s});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(u"already holds fusions"_s));
    // estimate says the same: the module's own fusion against its ops apart.
    r = runCli({u"estimate"_s, after, u"--target"_s, u"h100"_s, u"--json"_s});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject predicted = QJsonDocument::fromJson(r.out.toUtf8()).object().value(u"predicted"_s).toObject();
    QVERIFY(predicted.value(u"speedup"_s).toDouble() > 2);
    QCOMPARE(predicted.value(u"speedup"_s).toDouble(), report.value(u"predicted_speedup"_s).toDouble());
}

void TestCli::layersAndVsXla() {
    const QString dir = QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/data/xla_dump_mlp/");
    const QString before = dir + u"module_0001.jit_mlp.before_optimizations.txt"_s;
    const QString after = dir + u"module_0001.jit_mlp.sm_90a_gpu_after_optimizations.txt"_s;
    Result r = runCli({u"layers"_s, QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/bert_encoder_train_step.hlo"),
                       u"--json"_s, u"--step"_s, u"fusion"_s});
    QCOMPARE(r.exitCode, 0);
    QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonObject root = report.value(u"layers"_s).toObject();
    QVERIFY(root.value(u"instructions"_s).toInt() > 1900);
    QVERIFY(root.value(u"kernels_after"_s).toInt() < root.value(u"kernels_before"_s).toInt());
    const QJsonArray children = root.value(u"children"_s).toArray();
    QVERIFY(children.size() >= 2 && children.size() <= 40);
    int64_t sum = 0;
    for (const QJsonValue& child : children) sum += child.toObject().value(u"instructions"_s).toInt();
    QVERIFY(sum <= root.value(u"instructions"_s).toInt());
    // A module that holds fusions is shown as it is by default.
    r = runCli({u"layers"_s, after});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(u"the module as it is"_s));
    r = runCli({u"layers"_s, after, u"--step"_s, u"no-such-pass"_s});
    QCOMPARE(r.exitCode, 2);
    r = runCli({u"vs-xla"_s, before, after, u"--target"_s, u"cpu"_s, u"--json"_s});
    QCOMPARE(r.exitCode, 0);
    report = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(report.value(u"edges"_s).toInt(), 9);
    QCOMPARE(report.value(u"fused_by_both"_s).toInt() + report.value(u"fused_by_neither"_s).toInt() +
                 report.value(u"fused_by_xla_only"_s).toInt() + report.value(u"fused_by_hloscope_only"_s).toInt(),
             9);
    QCOMPARE(report.value(u"layers"_s).toObject().value(u"xla_kernels"_s).toInt(), 4);
    r = runCli({u"vs-xla"_s, before});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains(u"BEFORE AFTER"_s));
}

// layers --measure: each layer's kernels' measured time beside the prediction; the
// layers' times and the time outside them add up to the whole; bad uses are usage errors.
void TestCli::layersMeasured() {
    const QString file = write(u"two_layers.hlo"_s, R"(HloModule two_layers
ENTRY e {
  p = f32[256,256] parameter(0)
  a = f32[256,256] add(p, p), metadata={op_name="jit(f)/dense1/add"}
  b = f32[256,256] multiply(a, a), metadata={op_name="jit(f)/dense1/mul"}
  c = f32[256,256] exponential(b), metadata={op_name="jit(f)/dense2/exp"}
  ROOT d = f32[256,256] subtract(c, p), metadata={op_name="jit(f)/dense2/sub"}
}
)");
    Result r = runCli({u"layers"_s, file, u"--step"_s, u"input"_s, u"--measure"_s, u"cpu"_s, u"--json"_s});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(report.value(u"measured_on"_s).toString().contains(u"unfused"_s));
    const QJsonObject root = report.value(u"layers"_s).toObject();
    const double total = root.value(u"measured_seconds"_s).toDouble();
    QVERIFY(total > 0);
    double sum = report.value(u"measured_outside_layers_seconds"_s).toDouble();
    QStringList names;
    for (const QJsonValue& value : root.value(u"children"_s).toArray()) {
        const QJsonObject layer = value.toObject();
        names << layer.value(u"name"_s).toString();
        if (layer.value(u"kind"_s).toString() == u"parameters"_s) continue;
        QVERIFY2(layer.value(u"measured_seconds"_s).toDouble() > 0, qPrintable(layer.value(u"name"_s).toString()));
        sum += layer.value(u"measured_seconds"_s).toDouble();
    }
    QVERIFY2(names.contains(u"dense1"_s) && names.contains(u"dense2"_s), qPrintable(names.join(u',')));
    QVERIFY(std::abs(sum - total) <= 1e-9 + 1e-6 * total);
    // The text form has the measured columns and names the device and the mode.
    r = runCli({u"layers"_s, file, u"--measure"_s, u"cpu"_s, u"--repeat"_s, u"1"_s});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(u"measured"_s));
    QVERIFY(r.out.contains(u"fused, median of 1 runs"_s));
    // Unknown devices, a device of another kind than the target, a step in between.
    QCOMPARE(runCli({u"layers"_s, file, u"--measure"_s, u"no-such-device"_s}).exitCode, 2);
    QCOMPARE(runCli({u"layers"_s, file, u"--measure"_s, u"cpu"_s, u"--target"_s, u"h100"_s}).exitCode, 2);
    QCOMPARE(runCli({u"layers"_s, file, u"--measure"_s, u"cpu"_s, u"--step"_s, u"fusion"_s}).exitCode, 2);
    QCOMPARE(runCli({u"layers"_s, file, u"--measure"_s, u"cpu"_s, u"--repeat"_s, u"0"_s}).exitCode, 2);
}

// COMMAND --help prints that command's part of the usage and exits 0.
void TestCli::everyCommandHasHelp() {
    for (const char* command : {"parse", "print", "stats", "eval", "conform", "opt", "bisect", "passes", "cost",
                                "explain", "run", "import-run", "calc", "estimate", "calibrate", "layers", "vs-xla",
                                "capture", "parity"}) {
        const Result r = runCli({QString::fromLatin1(command), u"--help"_s});
        QVERIFY2(r.exitCode == 0, command);
        QVERIFY2(r.out.startsWith(u"Usage: hloscope-cli "_s + QString::fromLatin1(command)), command);
    }
}

// capture: the program runs with XLA_FLAGS naming a folder; the folder and its modules
// (largest first) come back; a failing program, one that dumps nothing and no program are errors.
void TestCli::captureRunsTheProgramWithDumpFlags() {
    const QString program = QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/data/fake_xla_program.sh");
    QTemporaryDir dir;
    const QString folder = dir.filePath(u"dump"_s);
    Result r = runCli({u"capture"_s, u"--dir"_s, folder, u"--"_s, u"sh"_s, program});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out.trimmed().section(QLatin1Char('\n'), -1), QFileInfo(folder).absoluteFilePath());  // the last line
    QVERIFY(r.out.contains(u"step 1: loss"_s));  // the program's own output, passed through
    QVERIFY(r.err.contains(u"--xla_dump_to="_s + QFileInfo(folder).absoluteFilePath() + u" --xla_dump_hlo_as_text"_s));
    const int after = r.err.indexOf(u"after_optimizations"_s), before = r.err.indexOf(u"before_optimizations"_s);
    QVERIFY(after >= 0 && before >= 0 && after < before);  // the larger (optimized) module first
    QVERIFY(QFileInfo::exists(folder + u"/module_0001.jit_mlp.before_optimizations.txt"_s));
    // A fresh folder when none is named; --passes asks for per-pass dumps.
    r = runCli({u"capture"_s, u"--passes"_s, u"--"_s, u"sh"_s, program});
    QCOMPARE(r.exitCode, 0);
    const QString fresh = r.out.trimmed().section(QLatin1Char('\n'), -1);
    QVERIFY(fresh.contains(u"hloscope-capture-"_s));
    QVERIFY(r.err.contains(u"--xla_dump_hlo_pass_re=.*"_s));
    QDir(fresh).removeRecursively();
    // Failures.
    qputenv("FAKE_XLA_EXIT", "5");
    r = runCli({u"capture"_s, u"--dir"_s, dir.filePath(u"failed"_s), u"--"_s, u"sh"_s, program});
    qunsetenv("FAKE_XLA_EXIT");
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.err.contains(u"exited with 5"_s));
    qputenv("FAKE_XLA_DUMP", "0");
    r = runCli({u"capture"_s, u"--dir"_s, dir.filePath(u"empty"_s), u"--"_s, u"sh"_s, program});
    qunsetenv("FAKE_XLA_DUMP");
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.err.contains(u"dumped no module"_s));
    QCOMPARE(runCli({u"capture"_s}).exitCode, 2);
    QCOMPARE(runCli({u"capture"_s, u"--"_s, u"/no/such/program"_s}).exitCode, 1);
    // The program's own --help is its own.
    r = runCli({u"capture"_s, u"--dir"_s, dir.filePath(u"help"_s), u"--"_s, u"sh"_s, program, u"--help"_s});
    QCOMPARE(r.exitCode, 0);
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
