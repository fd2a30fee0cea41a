// Conformance over ../shared/corpus/hlo (real modules from XLA's test suites
// and real model dumps):
//  * hlo/valid/** and hlo/models/** parse, and print -> parse -> print is a
//    fixed point with structurally equal modules;
//  * the same modules pass the verifier;
//  * hlo/invalid/parser/** is rejected by the parser with line:col;
//  * hlo/invalid/verifier/** is rejected (by the verifier, or by the parser
//    where our parser checks earlier), hlo/invalid/parser_or_verifier by either.
// Files we cannot pass are listed with their reason in
// tests/corpus_exceptions.tsv; a listed file that passes fails the test so
// the list stays honest. Skips with a message when the corpus is absent.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTest>

#include <map>

#include "core/text/hlo_parser.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"

using namespace hloscope;

namespace {

const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo");

QStringList filesUnder(const QString& relative) {
    QStringList files;
    QDirIterator it(kCorpus + QLatin1Char('/') + relative, {QStringLiteral("*.hlo")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) files << it.next();
    files.sort();
    return files;
}

QString relativeName(const QString& path) { return QDir(kCorpus).relativeFilePath(path); }

// XLA test name of each corpus file (SOURCES.tsv for valid/ and models/,
// invalid/EXPECTED.tsv for invalid/), keyed by the path relative to hlo/.
const std::map<QString, QString>& testNames() {
    static const std::map<QString, QString> names = [] {
        std::map<QString, QString> out;
        auto load = [&](const QString& tsv, const QString& prefix) {
            QFile file(tsv);
            if (!file.open(QIODevice::ReadOnly)) return;
            while (!file.atEnd()) {
                QStringList parts = QString::fromUtf8(file.readLine()).split(QLatin1Char('\t'));
                if (parts.size() >= 4) out[prefix + parts[0]] = parts[3];
            }
        };
        load(kCorpus + QStringLiteral("/SOURCES.tsv"), QString());
        load(kCorpus + QStringLiteral("/invalid/EXPECTED.tsv"), QStringLiteral("invalid/"));
        return out;
    }();
    return names;
}

// The verifier configuration XLA's test used for a file: HloTestBase verifies
// with mixed precision allowed; verifier tests switch options on by name
// (HloVerifierTestLayoutSensitive, ...AllowMixedPrecision, ...).
HloVerifierOptions verifierOptionsFor(const std::string& relative, bool allowMixedPrecision) {
    HloVerifierOptions options;
    options.allowMixedPrecision = allowMixedPrecision;
    auto it = testNames().find(QString::fromStdString(relative));
    if (it == testNames().end()) return options;
    const QString& test = it->second;
    auto has = [&](const char* word) { return test.contains(QLatin1String(word)); };
    if (has("LayoutSensitive")) options.layoutSensitive = true;
    if (has("AllowMixedPrecision")) options.allowMixedPrecision = true;
    if (has("VerifyInstructionNameChanged")) options.verifyInstructionNameUnchanged = true;
    if (has("ForCollectiveDeadlocks")) options.verifyNoSendRecvDeadlocks = true;
    if (has("EnableUnboundedDynamism")) options.allowUnboundedDynamism = true;
    if (has("VerifyBroadcastDimensionsOrder")) options.verifyBroadcastDimensionsOrder = true;
    if (has("ReshapeIsNotBitcast")) options.verifyReshapeIsBitcast = true;
    return options;
}

// stage -> (relative file -> reason)
std::map<QString, std::map<QString, QString>> loadExceptions() {
    std::map<QString, std::map<QString, QString>> exceptions;
    QFile file(QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/corpus_exceptions.tsv"));
    if (!file.open(QIODevice::ReadOnly)) return exceptions;
    while (!file.atEnd()) {
        QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
        QStringList parts = line.split(QLatin1Char('\t'));
        if (parts.size() < 3) continue;
        exceptions[parts[0]][parts[1]] = parts[2];
    }
    return exceptions;
}

// A check returns this to leave a file out of a stage (e.g. the verify
// stage skips files that do not parse: the roundtrip stage reports those).
const QString kSkip = QStringLiteral("\x01skip");

struct Outcome {
    QString stage;
    int total = 0;
    int passed = 0;
    QStringList unexpected;  // failures not in the exception list
    QStringList stale;       // listed exceptions that now pass
    int excused = 0;
};

// Runs `check` on each file; compares failures with the exception list of `stage`.
template <typename Check>
Outcome runStage(const QString& stage, const QStringList& files, Check check) {
    static const auto exceptions = loadExceptions();
    auto it = exceptions.find(stage);
    const std::map<QString, QString> empty;
    const auto& listed = it == exceptions.end() ? empty : it->second;
    Outcome outcome;
    outcome.stage = stage;
    for (const QString& path : files) {
        ++outcome.total;
        QString name = relativeName(path);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            outcome.unexpected << name + QStringLiteral(": cannot read");
            continue;
        }
        QByteArray bytes = file.readAll();
        std::string text(bytes.constData(), static_cast<size_t>(bytes.size()));
        QString failure = check(text, name.toStdString());
        if (failure == kSkip) {
            --outcome.total;
            continue;
        }
        bool isListed = listed.count(name) != 0;
        if (failure.isEmpty()) {
            ++outcome.passed;
            if (isListed) outcome.stale << name;
        } else if (isListed) {
            ++outcome.excused;
        } else {
            outcome.unexpected << name + QStringLiteral(": ") + failure;
        }
    }
    qInfo("%s: %d files, %d passed (%.2f%%), %d listed exceptions", qPrintable(stage),
          outcome.total, outcome.passed,
          outcome.total ? 100.0 * outcome.passed / outcome.total : 0.0, outcome.excused);
    return outcome;
}

void report(const Outcome& outcome) {
    // One line per failure, as "unexpected<TAB>stage<TAB>file: reason", so a
    // new exception can be pasted into corpus_exceptions.tsv with its reason.
    for (const QString& failure : outcome.unexpected)
        qWarning("unexpected\t%s\t%s", qPrintable(outcome.stage), qPrintable(failure));
    for (const QString& name : outcome.stale)
        qWarning("stale exception (now passes, remove it from corpus_exceptions.tsv): %s",
                 qPrintable(name));
}

// Parses a file and checks the print -> parse -> print fixed point.
QString parseAndRoundtrip(const std::string& text, const std::string& name) {
    HloParseOptions options;
    options.fileName = name;
    auto modules = parseHloModules(text, options);
    if (!modules.isOk()) return QString::fromStdString(modules.status().toString());
    for (const auto& module : *modules) {
        Status status = checkRoundTrip(*module, name);
        if (!status.isOk()) return QString::fromStdString(status.message());
    }
    return {};
}

}  // namespace

class TestCorpus : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void validModulesParseAndRoundTrip();
    void modelsParseAndRoundTrip();
    void validModulesVerify();
    void invalidParserFilesAreRejected();
    void invalidVerifierFilesAreRejected();
    void invalidParserOrVerifierFilesAreRejected();
};

void TestCorpus::initTestCase() {
    if (!QDir(kCorpus).exists())
        QSKIP(qPrintable(QStringLiteral("corpus not found at %1 (it lives in ../shared/corpus "
                                        "beside a developer checkout); skipping")
                             .arg(kCorpus)));
}

void TestCorpus::validModulesParseAndRoundTrip() {
    Outcome outcome = runStage(QStringLiteral("roundtrip"), filesUnder(QStringLiteral("valid")),
                               parseAndRoundtrip);
    report(outcome);
    QVERIFY(outcome.total > 0);
    QVERIFY(outcome.unexpected.isEmpty());
    QVERIFY(outcome.stale.isEmpty());
}

void TestCorpus::modelsParseAndRoundTrip() {
    Outcome outcome = runStage(QStringLiteral("models"), filesUnder(QStringLiteral("models")),
                               parseAndRoundtrip);
    report(outcome);
    QVERIFY(outcome.total > 0);
    QVERIFY(outcome.unexpected.isEmpty());
    QVERIFY(outcome.stale.isEmpty());
}

void TestCorpus::validModulesVerify() {
    QStringList files = filesUnder(QStringLiteral("valid")) + filesUnder(QStringLiteral("models"));
    // Files the parser rejects are the roundtrip stage's business.
    Outcome outcome = runStage(QStringLiteral("verify"), files,
                               [](const std::string& text, const std::string& name) -> QString {
                                   HloParseOptions options;
                                   options.fileName = name;
                                   auto modules = parseHloModules(text, options);
                                   if (!modules.isOk()) return kSkip;
                                   HloVerifierOptions verifierOptions =
                                       verifierOptionsFor(name, /*allowMixedPrecision=*/true);
                                   for (const auto& module : *modules) {
                                       Status status = verifyModule(*module, verifierOptions);
                                       if (!status.isOk())
                                           return QString::fromStdString(status.toString());
                                   }
                                   return {};
                               });
    report(outcome);
    QVERIFY(outcome.unexpected.isEmpty());
    QVERIFY(outcome.stale.isEmpty());
}

void TestCorpus::invalidParserFilesAreRejected() {
    Outcome outcome = runStage(
        QStringLiteral("reject-parser"), filesUnder(QStringLiteral("invalid/parser")),
        [](const std::string& text, const std::string& name) -> QString {
            HloParseOptions options;
            options.fileName = name;
            auto modules = parseHloModules(text, options);
            if (modules.isOk()) return QStringLiteral("accepted by the parser");
            const auto& location = modules.status().location();
            if (!location || location->line <= 0 || location->column <= 0)
                return QStringLiteral("rejected without line:col: ") +
                       QString::fromStdString(modules.status().toString());
            return {};
        });
    report(outcome);
    QVERIFY(outcome.total > 0);
    QVERIFY(outcome.unexpected.isEmpty());
    QVERIFY(outcome.stale.isEmpty());
}

void TestCorpus::invalidVerifierFilesAreRejected() {
    int byParser = 0;
    Outcome outcome = runStage(
        QStringLiteral("reject-verifier"), filesUnder(QStringLiteral("invalid/verifier")),
        [&](const std::string& text, const std::string& name) -> QString {
            HloParseOptions options;
            options.fileName = name;
            auto modules = parseHloModules(text, options);
            if (!modules.isOk()) {
                ++byParser;
                return {};
            }
            HloVerifierOptions verifierOptions = verifierOptionsFor(name, false);
            for (const auto& module : *modules)
                if (!verifyModule(*module, verifierOptions).isOk()) return {};
            return QStringLiteral("accepted by parser and verifier");
        });
    qInfo("invalid/verifier: %d rejected already by the parser", byParser);
    report(outcome);
    QVERIFY(outcome.total > 0);
    QVERIFY(outcome.unexpected.isEmpty());
    QVERIFY(outcome.stale.isEmpty());
}

void TestCorpus::invalidParserOrVerifierFilesAreRejected() {
    Outcome outcome = runStage(
        QStringLiteral("reject-either"), filesUnder(QStringLiteral("invalid/parser_or_verifier")),
        [](const std::string& text, const std::string& name) -> QString {
            HloParseOptions options;
            options.fileName = name;
            auto modules = parseHloModules(text, options);
            if (!modules.isOk()) return {};
            for (const auto& module : *modules)
                if (!verifyModule(*module).isOk()) return {};
            return QStringLiteral("accepted by parser and verifier");
        });
    report(outcome);
    QVERIFY(outcome.unexpected.isEmpty());
    QVERIFY(outcome.stale.isEmpty());
}

QTEST_GUILESS_MAIN(TestCorpus)
#include "tst_corpus.moc"
