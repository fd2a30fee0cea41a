// hloscope-cli end to end: output formats and exit codes.
#include <QtTest>

using namespace Qt::StringLiterals;

namespace {

struct Result {
    int exitCode = -1;
    QString out;
    QString err;
};

Result runCli(const QStringList& args, const QByteArray& stdinData = {}) {
    QProcess process;
    process.start(QStringLiteral(HLOSCOPE_CLI_PATH), args);
    if (!process.waitForStarted()) return {};
    if (!stdinData.isEmpty()) process.write(stdinData);
    process.closeWriteChannel();
    process.waitForFinished(120000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

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

private:
    QString write(const QString& name, const QByteArray& text);
    QTemporaryDir m_dir;
};

void TestCli::initTestCase() {
    QVERIFY(m_dir.isValid());
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

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
