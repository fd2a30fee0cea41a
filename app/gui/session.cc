#include "app/gui/session.h"

#include <sys/stat.h>
#include <unistd.h>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>
#include <QThread>
#include <algorithm>

namespace hloscope {
namespace {

constexpr const char* kFormat = "hloscope-session";
constexpr int kVersion = 1;

QJsonObject passJson(const SessionPass& pass) {
    return QJsonObject{{QStringLiteral("index"), pass.index}, {QStringLiteral("name"), pass.name}};
}

SessionPass passFromJson(const QJsonValue& value) {
    const QJsonObject o = value.toObject();
    return SessionPass{o.value(QStringLiteral("index")).toInt(-1),
                       o.value(QStringLiteral("name")).toString()};
}

}  // namespace

DocumentEntry DocumentEntry::parse(const QString& entry) {
    if (entry.startsWith(QLatin1String("example:"))) return {QStringLiteral("example"), entry.mid(8), {}};
    if (entry.startsWith(QLatin1String("path:"))) return {QStringLiteral("path"), {}, entry.mid(5)};
    if (entry.startsWith(QLatin1String("dump:"))) {
        const QString rest = entry.mid(5);
        const qsizetype bar = rest.indexOf(QLatin1Char('|'));
        if (bar > 0) return {QStringLiteral("dump"), rest.left(bar), rest.mid(bar + 1)};
    }
    return {};
}

WindowSettings WindowSettings::read(const QSettings& settings) {
    WindowSettings w;
    auto value = [&settings](const char* key) { return settings.value(QString::fromLatin1(key)); };
    const QVariant geometry = value(kGeometryKey), state = value(kStateKey);
    if (geometry.typeId() == QMetaType::QByteArray) w.geometry = geometry.toByteArray();
    if (state.typeId() == QMetaType::QByteArray) w.state = state.toByteArray();
    for (const QString& path : value(kRecentKey).toStringList())
        if (!path.isEmpty() && !w.recent.contains(path) && w.recent.size() < kMaxRecent)
            w.recent.append(path);
    w.lastDocument = value(kLastDocumentKey).toString();
    if (const QString target = value(kTargetKey).toString(); !target.isEmpty()) w.target = target;
    const QVariant restore = value(kRestoreAfterCrashKey);
    if (restore.isValid()) w.restoreAfterCrash = restore.toBool();
    return w;
}

QString Session::documentTitle() const {
    const DocumentEntry entry = DocumentEntry::parse(document);
    if (entry.kind == QLatin1String("path")) return QFileInfo(entry.path).fileName();
    if (!entry.kind.isEmpty()) return entry.name;
    return document;
}

QString Session::documentPath() const { return DocumentEntry::parse(document).path; }

QByteArray Session::toJson() const {
    QJsonObject o;
    o[QStringLiteral("format")] = QLatin1String(kFormat);
    o[QStringLiteral("version")] = kVersion;
    o[QStringLiteral("cleanExit")] = cleanExit;
    o[QStringLiteral("pid")] = pid;
    o[QStringLiteral("savedAt")] = savedAt;
    o[QStringLiteral("document")] = document;
    o[QStringLiteral("target")] = target;
    o[QStringLiteral("step")] = step;
    QJsonArray disabled;
    for (const SessionPass& pass : disabledPasses) disabled.append(passJson(pass));
    o[QStringLiteral("disabledPasses")] = disabled;
    o[QStringLiteral("stopAfter")] = passJson(stopAfter);
    o[QStringLiteral("forceFusion")] = forceFusion;
    o[QStringLiteral("forbidFusion")] = forbidFusion;
    o[QStringLiteral("selected")] = selected;
    o[QStringLiteral("panels")] = QJsonArray::fromStringList(panels);
    o[QStringLiteral("centralTab")] = centralTab;
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

std::optional<Session> Session::fromJson(const QByteArray& json, QString* error) {
    auto fail = [error](const QString& message) -> std::optional<Session> {
        if (error) *error = message;
        return std::nullopt;
    };
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(QStringLiteral("not JSON (%1 at offset %2)")
                        .arg(parseError.errorString())
                        .arg(parseError.offset));
    const QJsonObject o = doc.object();
    if (o.value(QStringLiteral("format")).toString() != QLatin1String(kFormat))
        return fail(QStringLiteral("not a hloscope session"));
    if (o.value(QStringLiteral("version")).toInt() > kVersion)
        return fail(QStringLiteral("session version %1 is newer than this hloscope's (%2)")
                        .arg(o.value(QStringLiteral("version")).toInt())
                        .arg(kVersion));
    Session s;
    s.cleanExit = o.value(QStringLiteral("cleanExit")).toBool();
    s.pid = o.value(QStringLiteral("pid")).toInteger();
    s.savedAt = o.value(QStringLiteral("savedAt")).toString();
    s.document = o.value(QStringLiteral("document")).toString();
    s.target = o.value(QStringLiteral("target")).toString();
    s.step = std::max(0, o.value(QStringLiteral("step")).toInt());
    for (const QJsonValue& pass : o.value(QStringLiteral("disabledPasses")).toArray())
        s.disabledPasses.append(passFromJson(pass));
    s.stopAfter = passFromJson(o.value(QStringLiteral("stopAfter")));
    s.forceFusion = o.value(QStringLiteral("forceFusion")).toString();
    s.forbidFusion = o.value(QStringLiteral("forbidFusion")).toString();
    s.selected = o.value(QStringLiteral("selected")).toString();
    for (const QJsonValue& panel : o.value(QStringLiteral("panels")).toArray())
        s.panels.append(panel.toString());
    s.centralTab = o.value(QStringLiteral("centralTab")).toString();
    return s;
}

bool Session::sameState(const Session& o) const {
    return document == o.document && target == o.target && step == o.step &&
           disabledPasses == o.disabledPasses && stopAfter == o.stopAfter &&
           forceFusion == o.forceFusion && forbidFusion == o.forbidFusion &&
           selected == o.selected && panels == o.panels && centralTab == o.centralTab;
}

SessionStore::SessionStore(QString folder)
    : m_folder(folder.isEmpty() ? defaultFolder() : std::move(folder)) {}

QString SessionStore::defaultFolder() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

QString SessionStore::filePath() const {
    return QDir(m_folder).filePath(QStringLiteral("session.json"));
}

bool SessionStore::save(const Session& session, QString* error) const {
    const QString path = filePath();
    if (!QDir().mkpath(m_folder)) {
        if (error) *error = QStringLiteral("cannot create the folder %1").arg(m_folder);
        return false;
    }
    // QSaveFile: a temporary file in the same folder, fsynced and renamed over the old one.
    QSaveFile file(path);
    const QByteArray json = session.toJson();
    // flush() before commit(): Qt 6.4's commit() misses an error (disk full) in its own final
    // flush and would rename a truncated file over the good one.
    if (!file.open(QIODevice::WriteOnly) || file.write(json) != json.size() || !file.flush() ||
        !file.commit()) {
        if (error) *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

std::optional<Session> SessionStore::load(QString* error) const {
    if (error) error->clear();
    QFile file(filePath());
    if (!file.exists()) return std::nullopt;
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString());
        return std::nullopt;
    }
    QString why;
    std::optional<Session> session = Session::fromJson(file.readAll(), &why);
    if (!session && error) *error = QStringLiteral("%1: %2").arg(file.fileName(), why);
    return session;
}

namespace {

// A lock file without a PID: its identity (inode, modification time) and age; nullopt for no
// file or a lock with a PID.
struct AbandonedLock {
    ino_t inode;
    qint64 modifiedNs;
    qint64 ageMs;
};

std::optional<AbandonedLock> lockWithoutPid(const QByteArray& path) {
    struct stat st {};
    if (::stat(path.constData(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    QFile file(QString::fromLocal8Bit(path));
    if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
    bool ok = false;
    const qint64 pid = file.readLine(32).trimmed().toLongLong(&ok);
    if (ok && pid > 0) return std::nullopt;
    const qint64 modifiedNs = qint64(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    return AbandonedLock{st.st_ino, modifiedNs,
                         QDateTime::currentMSecsSinceEpoch() - modifiedNs / 1000000};
}

}  // namespace

bool clearAbandonedSettingsLock(const QString& settingsFile) {
    constexpr qint64 kWriterGraceMs = 1000;
    const QByteArray path = QFile::encodeName(settingsFile + QStringLiteral(".lock"));
    const auto first = lockWithoutPid(path);
    if (!first) return false;
    if (first->ageMs < kWriterGraceMs) {
        QThread::msleep(
            static_cast<unsigned long>(kWriterGraceMs - std::max<qint64>(first->ageMs, 0)));
        // Still the same file and still no PID: its writer is gone.
        const auto again = lockWithoutPid(path);
        if (!again || again->inode != first->inode || again->modifiedNs != first->modifiedNs)
            return false;
    }
    return ::unlink(path.constData()) == 0;
}

}  // namespace hloscope
