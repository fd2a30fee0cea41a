// The GUI session (app/session, MainWindow's session): JSON round trip, the
// store's atomic writes (a failed write keeps the previous file; QSettings
// too, under SIGKILL), saving a second after a change and at close with the clean-exit
// mark, restoring document, target, pipeline edits, step, selection and
// panels, a session whose document is gone, and the hloscope binary
// SIGKILLed and started again (restores; --no-restore does not).
#include <signal.h>
#include <sys/resource.h>

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "tests/settings_sandbox.h"
#include <cstdio>
#include <random>
#include <thread>

#include "app/gui/main_window.h"
#include "app/gui/session.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "tests/event_wait.h"

using namespace hloscope;

namespace {

bool writeFile(const QString& path, const QByteArray& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

QByteArray readFile(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QJsonObject readJson(const QString& path) {
    return QJsonDocument::fromJson(readFile(path)).object();
}

// Runs `body` with writes limited to `limit` bytes per file (EFBIG; it stops root too).
template <typename F>
void withFileSizeLimit(F body, rlim_t limit = 4096) {
    struct rlimit saved {};
    ::getrlimit(RLIMIT_FSIZE, &saved);
    struct sigaction ignore {
    }, old{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGXFSZ, &ignore, &old);
    struct rlimit limited = saved;
    limited.rlim_cur = limit;
    ::setrlimit(RLIMIT_FSIZE, &limited);
    body();
    ::setrlimit(RLIMIT_FSIZE, &saved);
    ::sigaction(SIGXFSZ, &old, nullptr);
}

Session sampleSession() {
    Session s;
    s.document = QStringLiteral("path:/tmp/model.hlo");
    s.target = QStringLiteral("h100");
    s.step = 7;
    s.disabledPasses = {{3, QStringLiteral("cse")}, {9, QStringLiteral("dce")}};
    s.stopAfter = {12, QStringLiteral("fusion")};
    s.forceFusion = QStringLiteral("a:b");
    s.forbidFusion = QStringLiteral("c:d;e:f");
    s.selected = QStringLiteral("multiply.15");
    s.panels = {QStringLiteral("passesDock"), QStringLiteral("fusionDock")};
    s.centralTab = QStringLiteral("graph");
    s.pid = 4242;
    s.savedAt = QStringLiteral("2026-01-01T00:00:00.000Z");
    return s;
}

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(testing::sandboxSettings(m_settingsDir, QStringLiteral("tst_session")));
    }

    void jsonRoundTrip() {
        const Session s = sampleSession();
        QString error;
        const auto back = Session::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(back->sameState(s));
        QCOMPARE(back->pid, s.pid);
        QCOMPARE(back->savedAt, s.savedAt);
        QCOMPARE(back->cleanExit, false);
        QCOMPARE(back->documentTitle(), QStringLiteral("model.hlo"));
        QCOMPARE(back->documentPath(), QStringLiteral("/tmp/model.hlo"));
        QVERIFY(!Session::fromJson("{\"format\": \"something else\"}", &error));
        QVERIFY(error.contains(QStringLiteral("not a hloscope session")));
        QVERIFY(!Session::fromJson("{\"format\": \"hloscope-session\", ", &error));
        QVERIFY(error.contains(QStringLiteral("not JSON")));
    }

    void documentEntries() {
        const DocumentEntry dump = DocumentEntry::parse(QStringLiteral("dump:module_0001.jit_f|/d/x|y"));
        QCOMPARE(dump.kind, QStringLiteral("dump"));
        QCOMPARE(dump.name, QStringLiteral("module_0001.jit_f"));
        QCOMPARE(dump.path, QStringLiteral("/d/x|y"));
        QCOMPARE(DocumentEntry::parse(QStringLiteral("example:mlp")).name, QStringLiteral("mlp"));
        QCOMPARE(DocumentEntry::parse(QStringLiteral("path:/a.hlo")).path, QStringLiteral("/a.hlo"));
        // A dump entry without a module id, and text that is no entry: nothing to open.
        QVERIFY(DocumentEntry::parse(QStringLiteral("dump:|/d")).kind.isEmpty());
        QVERIFY(DocumentEntry::parse(QStringLiteral("/a.hlo")).kind.isEmpty());
    }

    // A hand-edited or damaged settings file reads as what the window can use.
    void windowSettingsOfADamagedFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("hloscope.conf"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QStringList recent;
        for (int i = 0; i < 14; ++i) recent << QStringLiteral("/m/%1.hlo").arg(i % 12);
        file.write("[General]\nrecentFiles=" + recent.join(QStringLiteral(", ")).toUtf8() +
                   ", \ntarget=\nlastDocument=example:mlp\n[session]\nrestoreAfterCrash=false\n"
                   "[window]\ngeometry=not bytes\n");
        file.close();
        const WindowSettings w = WindowSettings::read(QSettings(path, QSettings::IniFormat));
        QCOMPARE(w.recent.size(), WindowSettings::kMaxRecent);
        QCOMPARE(w.recent.front(), QStringLiteral("/m/0.hlo"));
        QStringList distinct = w.recent;
        QCOMPARE(distinct.removeDuplicates(), qsizetype(0));
        QCOMPARE(w.target, QStringLiteral("cpu"));  // empty: the default
        QCOMPARE(w.lastDocument, QStringLiteral("example:mlp"));
        QVERIFY(!w.restoreAfterCrash);
        QVERIFY(w.geometry.isEmpty());  // text where bytes belong: unset
    }

    // A write that fails half-way keeps the previous session.json whole.
    void storeWriteIsAtomic() {
        QTemporaryDir dir;
        SessionStore store(dir.filePath(QStringLiteral("sessions")));
        Session s = sampleSession();
        QVERIFY(store.save(s));
        const QByteArray before = readFile(store.filePath());
        s.selected = QString(64 * 1024, QLatin1Char('x'));  // over the 4 KB limit
        bool saved = true;
        QString error;
        withFileSizeLimit([&] { saved = store.save(s, &error); });
        QVERIFY(!saved);
        QVERIFY2(error.contains(store.filePath()), qPrintable(error));
        QCOMPARE(readFile(store.filePath()), before);
        QCOMPARE(QDir(store.folder()).entryList(QDir::Files | QDir::Hidden),
                 QStringList{QStringLiteral("session.json")});
        QString loadError;
        const auto loaded = store.load(&loadError);
        QVERIFY2(loaded, qPrintable(loadError));
        QCOMPARE(loaded->selected, QStringLiteral("multiply.15"));
        // No file: no session, no error; a damaged one: an error naming it.
        SessionStore empty(dir.filePath(QStringLiteral("none")));
        QVERIFY(!empty.load(&loadError));
        QVERIFY(loadError.isEmpty());
        QVERIFY(writeFile(store.filePath(), "{ damaged"));
        QVERIFY(!store.load(&loadError));
        QVERIFY(loadError.contains(store.filePath()));
    }

    // QSettings (target, dock layout, recent files) writes through QSaveFile too: a writer
    // SIGKILLed at random moments leaves a file with every value whole. (A write error at Qt
    // 6.4's final flush is not seen by QSettings, see README: "No lost work".)
    void settingsSurviveSigkill() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("hloscope.conf"));
        {
            QSettings settings(path, QSettings::IniFormat);
            settings.setValue(QStringLiteral("target"), QStringLiteral("h100"));
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HLOSCOPE_TEST_SETTINGS_WRITER"), path);
        std::mt19937 random(3);
        const int kills = 15;
        int changed = 0;
        QByteArray last;
        for (int i = 0; i < kills; ++i) {
            QProcess writer;
            writer.setProcessEnvironment(env);
            writer.start(QCoreApplication::applicationFilePath(), {});
            QVERIFY(writer.waitForStarted(10000));
            // Once it has written at least once, at a random moment of its next writes.
            QVERIFY(writer.waitForReadyRead(20000));
            QTest::qWait(static_cast<int>(random() % 60));
            writer.kill();
            QVERIFY(writer.waitForFinished(10000));
            QCOMPARE(writer.exitStatus(), QProcess::CrashExit);
            QSettings settings(path, QSettings::IniFormat);
            QCOMPARE(settings.status(), QSettings::NoError);
            QCOMPARE(settings.value(QStringLiteral("target")).toString(), QStringLiteral("h100"));
            const QByteArray state = settings.value(QStringLiteral("window/state")).toByteArray();
            if (!state.isEmpty()) {
                QCOMPARE(state.size(), qsizetype(200000));
                QCOMPARE(state.count(state.at(0)), state.size());
            }
            changed += state != last;
            last = state;
        }
        QVERIFY(changed > 0);
        qInfo("%d SIGKILLs of a QSettings writer: every read found whole values (%d changed)",
              kills, changed);
    }

    // A writer killed between creating QSettings' lock file and writing its PID into it left
    // the file empty, and the next writer waited 30 s for it (the SIGKILL test above then timed
    // out). clearAbandonedSettingsLock removes such a lock; one with a PID stays.
    void abandonedSettingsLockIsCleared() {
        QTemporaryDir dir;
        const QString settingsFile = dir.filePath(QStringLiteral("hloscope.conf"));
        const QString lock = settingsFile + QStringLiteral(".lock");
        QVERIFY(!clearAbandonedSettingsLock(settingsFile));  // no lock file
        // An old empty lock goes at once; a fresh one after its writer's grace second.
        QVERIFY(writeFile(lock, ""));
        QFile old(lock);
        QVERIFY(old.open(QIODevice::ReadWrite));
        QVERIFY(old.setFileTime(QDateTime::currentDateTime().addSecs(-10),
                                QFileDevice::FileModificationTime));
        old.close();
        QVERIFY(clearAbandonedSettingsLock(settingsFile));
        QVERIFY(!QFile::exists(lock));
        QVERIFY(writeFile(lock, ""));
        QElapsedTimer waited;
        waited.start();
        QVERIFY(clearAbandonedSettingsLock(settingsFile));
        QVERIFY(!QFile::exists(lock));
        QVERIFY2(waited.elapsed() >= 500, qPrintable(QString::number(waited.elapsed())));
        // A lock with a PID, live or not, is QLockFile's to judge.
        const QByteArray live =
            QByteArray::number(QCoreApplication::applicationPid()) + "\ntst_session\nhost\n";
        QVERIFY(writeFile(lock, live));
        QVERIFY(!clearAbandonedSettingsLock(settingsFile));
        QCOMPARE(readFile(lock), live);
        QVERIFY(writeFile(lock, "999999999\nhloscope\nhost\n"));
        QVERIFY(!clearAbandonedSettingsLock(settingsFile));
        QVERIFY(QFile::exists(lock));
        // A live writer that takes the lock while we wait out the grace second keeps it.
        QVERIFY(QFile::remove(lock));
        QVERIFY(writeFile(lock, ""));
        std::thread writer([&] {
            QThread::msleep(200);
            const QString next = lock + QStringLiteral(".next");
            writeFile(next, live);
            QFile::rename(lock, lock + QStringLiteral(".gone"));
            QFile::rename(next, lock);
        });
        const bool removed = clearAbandonedSettingsLock(settingsFile);
        writer.join();
        QVERIFY(!removed);
        QCOMPARE(readFile(lock), live);
        // The SIGKILL test's writer, started next to a fresh empty lock: its first write
        // is done well within the 30 s Qt would have waited.
        QVERIFY(QFile::remove(lock));
        QVERIFY(writeFile(lock, ""));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HLOSCOPE_TEST_SETTINGS_WRITER"), settingsFile);
        QProcess child;
        child.setProcessEnvironment(env);
        child.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY(child.waitForStarted(10000));
        QVERIFY(child.waitForReadyRead(20000));
        child.kill();
        QVERIFY(child.waitForFinished(10000));
        QCOMPARE(QSettings(settingsFile, QSettings::IniFormat)
                     .value(QStringLiteral("window/state"))
                     .toByteArray()
                     .size(),
                 qsizetype(200000));
    }

    // Exports go through QSaveFile: one that fails half-way keeps the previous file.
    void failedExportKeepsOldFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("export.hlo"));
        QVERIFY(writeFile(path, "previous export"));
        MainWindow window;
        window.openExample(QStringLiteral("mlp"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state() && !window.isBusy(), 30000);
        QVERIFY(window.state()->currentSnapshot()->text->size() > 2048);
        bool exported = true;
        withFileSizeLimit([&] { exported = window.exportCurrentText(path); }, 1024);
        QVERIFY(!exported);
        QVERIFY2(window.messageText().contains(path), qPrintable(window.messageText()));
        QCOMPARE(readFile(path), QByteArray("previous export"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden),
                 QStringList{QStringLiteral("export.hlo")});
        QVERIFY(window.exportCurrentText(path));
        QVERIFY(readFile(path).startsWith("HloModule"));
    }

    void saveAndRestoreRoundTrip() {
        QTemporaryDir dir;
        const QString folder = dir.filePath(QStringLiteral("session"));
        Session saved;
        QString selected;
        {
            MainWindow window;
            window.enableSession(folder);
            QVERIFY(!window.previousSession());
            QSignalSpy states(&window, &MainWindow::stateChanged);
            window.setTarget(QStringLiteral("h100"));
            window.openExample(QStringLiteral("mlp"));
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state() && !window.isBusy(), 30000);
            const int passes = static_cast<int>(window.state()->passes.size());
            QVERIFY(passes > 10);
            DocumentWorker* w = window.worker();
            QMetaObject::invokeMethod(
                w, [w] { w->setPassEnabled(2, false); }, Qt::QueuedConnection);
            QMetaObject::invokeMethod(
                w, [w, passes] { w->setStopAfter(passes - 2); }, Qt::QueuedConnection);
            window.stepTo(6);
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(
                window.state()->current == 6 && !window.state()->passEnabled.empty() &&
                    !window.state()->passEnabled[2] && window.state()->stopAfter == passes - 2,
                60000);
            selected = QString::fromStdString(
                window.state()->module->entryComputation()->instructions().back()->name());
            window.selectInstruction(selected);
            // Saved about a second after the change, without asking.
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(
                readJson(window.sessionFile()).value(QStringLiteral("selected")).toString() ==
                    selected,
                5000);
            const QJsonObject json = readJson(window.sessionFile());
            QCOMPARE(json.value(QStringLiteral("cleanExit")).toBool(), false);
            QCOMPARE(json.value(QStringLiteral("step")).toInt(), 6);
            QCOMPARE(json.value(QStringLiteral("target")).toString(), QStringLiteral("h100"));
            QCOMPARE(json.value(QStringLiteral("document")).toString(),
                     QStringLiteral("example:mlp"));
            saved = window.currentSession();
            QCOMPARE(saved.disabledPasses.size(), 1);
            QCOMPARE(saved.disabledPasses.front().index, 2);
            QCOMPARE(saved.stopAfter.index, passes - 2);
            window.close();  // a normal exit: the clean-exit mark
            QCOMPARE(readJson(window.sessionFile()).value(QStringLiteral("cleanExit")).toBool(),
                     true);
        }
        MainWindow window;
        window.enableSession(folder);
        QVERIFY(window.previousSession());
        QVERIFY(!window.previousRunEndedAbnormally());  // it closed cleanly
        QVERIFY(window.previousSession()->sameState(saved));
        QSignalSpy restored(&window, &MainWindow::sessionRestored);
        QVERIFY(window.restoreSession(*window.previousSession(), QStringLiteral("test")));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(restored.size() == 1, 60000);
        QVERIFY2(restored.at(0).at(0).toBool(), qPrintable(restored.at(0).at(1).toString()));
        const DocumentStatePtr state = window.state();
        QCOMPARE(state->displayName, std::string("mlp"));
        QCOMPARE(state->target, std::string("h100"));
        QCOMPARE(state->current, 6);
        QVERIFY(!state->passEnabled[2]);
        QCOMPARE(state->stopAfter, saved.stopAfter.index);
        QVERIFY(window.currentSession().sameState(saved));
        const QString message = restored.at(0).at(1).toString();
        QVERIFY2(
            message.contains(QStringLiteral("mlp")) && message.contains(QStringLiteral("step 6")),
            qPrintable(message));
        QVERIFY(selected == window.currentSession().selected);
    }

    void missingDocumentIsAMessage() {
        QTemporaryDir dir;
        MainWindow window;
        window.enableSession(dir.filePath(QStringLiteral("session")));
        Session s = sampleSession();
        s.document = QStringLiteral("path:") + dir.filePath(QStringLiteral("gone.hlo"));
        QSignalSpy restored(&window, &MainWindow::sessionRestored);
        QVERIFY(!window.restoreSession(s));
        QCOMPARE(restored.size(), 1);
        QCOMPARE(restored.at(0).at(0).toBool(), false);
        QVERIFY2(window.messageText().contains(QStringLiteral("no longer exists")),
                 qPrintable(window.messageText()));
        QVERIFY(window.messageText().contains(QStringLiteral("gone.hlo")));
        s.document = QStringLiteral("example:no_such_example");
        QVERIFY(!window.restoreSession(s));
        QVERIFY(!window.state());
        // A file that is there but does not parse: the open fails, the restore says so.
        const QString bad = dir.filePath(QStringLiteral("bad.hlo"));
        QVERIFY(writeFile(bad, "HloModule broken\nENTRY {"));
        s.document = QStringLiteral("path:") + bad;
        QVERIFY(window.restoreSession(s));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(restored.size() == 3, 30000);
        QCOMPARE(restored.at(2).at(0).toBool(), false);
        QVERIFY(!window.isRestoringSession());
    }

    // The real binary: SIGKILLed, started again, it restores; --no-restore does not; a
    // session whose file was deleted gives a message.
    void restoresAfterSigkill() {
        QTemporaryDir dir;
        const QString model = dir.filePath(QStringLiteral("model.hlo"));
        QFile example(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo"));
        QVERIFY(example.open(QIODevice::ReadOnly));
        QVERIFY(writeFile(model, example.readAll()));
        const QString sessionFile =
            dir.filePath(QStringLiteral("data/hloscope/hloscope/session.json"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_DATA_HOME"), dir.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
        env.insert(QStringLiteral("HLOSCOPE_HISTORY"), QStringLiteral("off"));
        auto start = [&](QProcess& p, const QStringList& args) {
            p.setProcessEnvironment(env);
            p.setProcessChannelMode(QProcess::MergedChannels);
            p.start(QStringLiteral(HLOSCOPE_GUI_PATH), args);
            return p.waitForStarted(10000);
        };
        auto killHard = [](QProcess& p) {
            p.kill();  // SIGKILL: no clean-exit mark
            p.waitForFinished(10000);
        };
        auto sessionOf = [&](qint64 pid) {
            const QJsonObject json = readJson(sessionFile);
            return json.value(QStringLiteral("pid")).toInteger() == pid ? json : QJsonObject();
        };

        QProcess first;
        QVERIFY(start(first, {model, QStringLiteral("--target"), QStringLiteral("h100"),
                              QStringLiteral("--step"), QStringLiteral("5")}));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(
            sessionOf(first.processId()).value(QStringLiteral("step")).toInt() == 5, 30000);
        killHard(first);
        QJsonObject left = readJson(sessionFile);
        QCOMPARE(left.value(QStringLiteral("cleanExit")).toBool(), false);
        QCOMPARE(left.value(QStringLiteral("document")).toString(),
                 QStringLiteral("path:") + model);

        QProcess second;
        QVERIFY(start(second, {}));
        QByteArray output;
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT((output += second.readAll()).contains("Restored the last session"),
                                 30000);
        QVERIFY2(output.contains("did not exit cleanly") && output.contains("model.hlo") &&
                     output.contains("step 5/"),
                 output.constData());
        // The restored session is saved again by the new process, the same state.
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(
            sessionOf(second.processId()).value(QStringLiteral("step")).toInt() == 5, 10000);
        QCOMPARE(sessionOf(second.processId()).value(QStringLiteral("target")).toString(),
                 QStringLiteral("h100"));
        killHard(second);

        // --no-restore: says so and leaves the session alone.
        QProcess declined;
        QVERIFY(start(declined, {QStringLiteral("--no-restore")}));
        output.clear();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(
            (output += declined.readAll()).contains("was not restored (--no-restore)"), 20000);
        killHard(declined);

        // The document is gone: a message, no crash.
        QVERIFY(QFile::remove(model));
        QProcess third;
        QVERIFY(start(third, {}));
        output.clear();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT((output += third.readAll()).contains("no longer exists"), 20000);
        QVERIFY(output.contains("model.hlo"));
        QTest::qWait(300);
        QCOMPARE(third.state(), QProcess::Running);
        killHard(third);
    }

private:
    QTemporaryDir m_settingsDir;
};

// With HLOSCOPE_TEST_SETTINGS_WRITER=PATH: the child of settingsSurviveSigkill, writing a
// 200 KB value alternately of 'a' and 'b' to PATH until it is killed.
int main(int argc, char** argv) {
    if (const QByteArray path = qgetenv("HLOSCOPE_TEST_SETTINGS_WRITER"); !path.isEmpty()) {
        QCoreApplication app(argc, argv);
        // As the GUI does at start (app/gui/main.cc): a killed predecessor may have left an empty lock.
        hloscope::clearAbandonedSettingsLock(QString::fromLocal8Bit(path));
        QSettings settings(QString::fromLocal8Bit(path), QSettings::IniFormat);
        for (int n = 0;; ++n) {
            settings.setValue(QStringLiteral("window/state"),
                              QByteArray(200000, n % 2 ? 'a' : 'b'));
            settings.sync();
            std::fputs("synced\n", stdout);
            std::fflush(stdout);
        }
    }
    QApplication app(argc, argv);
    TestSession test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_session.moc"
