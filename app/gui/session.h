// The GUI's session, saved so that a crash or a kill loses no work.
//
// A Session is what the user was looking at: the document (a file, a module
// of an XLA dump folder or a built-in example), the target, the pipeline
// edits (disabled passes, stop-after, the fusion what-ifs), the pass step,
// the selected instruction and the open panels. MainWindow (enableSession)
// writes it as JSON to <folder>/session.json, atomically through QSaveFile
// (a temporary file, fsync, rename), about a second after a change and at
// a normal exit with "cleanExit": true. A session file without cleanExit is
// the mark of a run that crashed or was killed: the next start restores it
// (hloscope --no-restore or the setting session/restoreAfterCrash=false
// say no).
#pragma once

#include <QByteArray>
#include <QList>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <optional>

namespace hloscope {

// A pass by index in the target's pipeline, with its name to check it on restore.
struct SessionPass {
    int index = -1;
    QString name;
    bool operator==(const SessionPass&) const = default;
};

struct Session {
    // "example:NAME", "path:/absolute/file" or "dump:MODULE_ID|/absolute/folder"
    // (the entry the window's lastDocument setting uses too); empty: no document.
    QString document;
    QString target;  // "cpu", "h100", ...
    int step = 0;    // snapshot index (0 = input)
    QList<SessionPass> disabledPasses;
    SessionPass stopAfter;  // index -1: runs to the end
    QString forceFusion, forbidFusion;
    QString selected;    // instruction name
    QStringList panels;  // object names of the open docks
    QString centralTab;  // object name of the current central tab
    bool cleanExit = false;
    qint64 pid = 0;   // the process that wrote it
    QString savedAt;  // ISO 8601, UTC

    bool hasDocument() const { return !document.isEmpty(); }
    // "mlp", "model.hlo", "module_0001.jit_f": for messages.
    QString documentTitle() const;
    // The file or folder the document needs (empty for an example).
    QString documentPath() const;

    QByteArray toJson() const;
    // nullopt and `error` set for text that is not a session.
    static std::optional<Session> fromJson(const QByteArray& json, QString* error);
    // Equal but for cleanExit, pid and savedAt.
    bool sameState(const Session& other) const;
};

// The window's settings as the app reads them at start (QSettings: ~/.config/hloscope/hloscope.conf
// on Linux), in one place for the window, main() and the fuzz target that reads hand-edited or
// damaged files. Values of the wrong type read as unset; the recent list keeps its first
// kMaxRecent non-empty, distinct entries.
struct WindowSettings {
    static constexpr const char* kGeometryKey = "window/geometry";
    static constexpr const char* kStateKey = "window/state";
    static constexpr const char* kRecentKey = "recentFiles";
    static constexpr const char* kLastDocumentKey = "lastDocument";
    static constexpr const char* kTargetKey = "target";
    static constexpr const char* kRestoreAfterCrashKey = "session/restoreAfterCrash";
    static constexpr int kMaxRecent = 10;

    QByteArray geometry;  // QWidget::saveGeometry
    QByteArray state;     // QMainWindow::saveState
    QStringList recent;   // file paths, most recent first
    QString lastDocument; // a document entry, as Session::document
    QString target = QStringLiteral("cpu");
    bool restoreAfterCrash = true;

    static WindowSettings read(const QSettings& settings);
};

// A document entry ("example:NAME", "path:FILE", "dump:MODULE_ID|FOLDER") taken apart; kind
// is empty for anything else. Session::documentTitle/documentPath and the window's
// "open the last document" read entries through it.
struct DocumentEntry {
    QString kind;  // "example", "path", "dump" or empty
    QString name;  // the example's name, or the dump module's id
    QString path;  // the file or the dump folder
    static DocumentEntry parse(const QString& entry);
};

// session.json in one folder.
class SessionStore {
public:
    explicit SessionStore(QString folder = QString());  // empty: defaultFolder()
    // QStandardPaths::AppDataLocation ($XDG_DATA_HOME/hloscope/hloscope on Linux).
    static QString defaultFolder();
    QString folder() const { return m_folder; }
    QString filePath() const;
    // Atomic: a failure (false, `error` set) leaves the previous file whole.
    bool save(const Session& session, QString* error = nullptr) const;
    // nullopt when there is no file (error empty) or it cannot be read (error set).
    std::optional<Session> load(QString* error = nullptr) const;

private:
    QString m_folder;
};

// QSettings lets one writer at a time sync a file: it holds <file>.lock, a QLockFile whose
// first line is the writer's PID. A process killed between creating that file and writing
// its PID leaves it without one, and Qt takes such a lock for a live writer's until it is
// 30 s old: the next run's first settings write would freeze the GUI that long. This removes
// a lock file with no PID once it is a second old (a writer writes its PID right after
// creating the file), waiting out that second when it is younger. A lock with a PID is left
// to QLockFile, which checks that process. Returns whether it removed one. Call it before the
// first QSettings write.
bool clearAbandonedSettingsLock(const QString& settingsFile);

}  // namespace hloscope
