// libFuzzer target: what the GUI reads back at start (app/gui/session.h), from files a crash,
// a full disk or a hand edit may have damaged. Every input is read both ways:
//   * as session.json (Session::fromJson): a session that reads must write and read back to
//     the same state, and its document entry must take apart without a crash;
//   * as the settings file (an INI file read through QSettings, WindowSettings::read): the
//     recent list stays within its limit, without empty or repeated entries, and every entry
//     takes apart.
#include <QByteArray>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <memory>

#include "app/gui/session.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

namespace {

// Never destroyed: at exit Qt's own globals go first, and its destructor would touch them.
QCoreApplication* g_app = nullptr;
std::unique_ptr<QTemporaryDir> g_dir;

void readSession(const QByteArray& bytes) {
    QString error;
    const std::optional<Session> session = Session::fromJson(bytes, &error);
    if (!session) {
        if (error.isEmpty()) fuzz::fail("session", "refused without a reason");
        return;
    }
    (void)session->documentTitle();
    (void)session->documentPath();
    if (session->step < 0) fuzz::fail("session", "negative step");
    QString again;
    const std::optional<Session> back = Session::fromJson(session->toJson(), &again);
    if (!back) fuzz::fail("session round trip", again.toStdString());
    if (!back->sameState(*session) || back->cleanExit != session->cleanExit || back->pid != session->pid)
        fuzz::fail("session round trip", "the state read back differs:\n" + session->toJson().toStdString() +
                                             "\n" + back->toJson().toStdString());
}

void readSettings(const QByteArray& bytes) {
    // A new file each time: QSettings caches what it read of a path.
    static int serial = 0;
    const QString path = g_dir->filePath(QStringLiteral("hloscope-%1.conf").arg(++serial));
    {
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
            fuzz::fail("settings", "cannot write " + path.toStdString());
    }
    {
        const QSettings settings(path, QSettings::IniFormat);
        const WindowSettings window = WindowSettings::read(settings);
        if (window.recent.size() > WindowSettings::kMaxRecent) fuzz::fail("settings", "recent list over its limit");
        for (qsizetype i = 0; i < window.recent.size(); ++i) {
            if (window.recent[i].isEmpty()) fuzz::fail("settings", "empty recent entry");
            if (window.recent.indexOf(window.recent[i]) != i) fuzz::fail("settings", "repeated recent entry");
        }
        if (window.target.isEmpty()) fuzz::fail("settings", "empty target");
        const DocumentEntry entry = DocumentEntry::parse(window.lastDocument);
        if (entry.kind == QLatin1String("dump") && entry.name.isEmpty())
            fuzz::fail("settings", "a dump entry without a module");
    }
    QFile::remove(path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    // A test that replays the inputs has an application already.
    if (!QCoreApplication::instance()) g_app = new QCoreApplication(*argc, *argv);
    g_dir = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/fuzz_session-XXXXXX"));
    if (!g_dir->isValid()) fuzz::fail("settings", "no temporary folder");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    readSession(bytes);
    readSettings(bytes);
    (void)DocumentEntry::parse(QString::fromUtf8(bytes));
    return 0;
}
