// MainWindow's session (app/gui/session.h): enabling it, what it holds,
// saving it and restoring the previous run's.
#include "app/gui/main_window.h"

#include <QAction>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QLockFile>
#include <QTabWidget>
#include <algorithm>
#include <memory>

namespace hloscope {

void MainWindow::enableSession(const QString& folder) {
    SessionStore store(folder);
    QDir().mkpath(store.folder());
    // One running window per session folder saves it (a second instance would
    // take the first one's live session for a crashed one). A lock whose
    // process is gone (crash, kill) is stale and taken over.
    auto lock =
        std::make_unique<QLockFile>(QDir(store.folder()).filePath(QStringLiteral("session.lock")));
    lock->setStaleLockTime(0);
    if (!lock->tryLock(0)) {
        m_statusLabel->setText(
            tr("Another hloscope is using %1; this window's session is not saved")
                .arg(store.folder()));
        return;
    }
    m_sessionLock = std::move(lock);
    m_previousSession = store.load(&m_previousSessionError);
    if (!m_previousSessionError.isEmpty())
        qWarning("hloscope: the last session cannot be read: %s",
                 qPrintable(m_previousSessionError));
    m_sessionStore = std::move(store);
    m_cleanExitSaved = false;
}

QString MainWindow::sessionFile() const {
    return m_sessionStore ? m_sessionStore->filePath() : QString();
}

bool MainWindow::previousRunEndedAbnormally() const {
    return m_previousSession && !m_previousSession->cleanExit && m_previousSession->hasDocument();
}

Session MainWindow::currentSession() const {
    Session s;
    s.target = m_target;
    s.selected = m_selected;
    if (m_state) {
        const DocumentState& state = *m_state;
        s.document = documentEntry(state);
        s.step = state.current;
        for (size_t i = 0; i < state.passEnabled.size() && i < state.passes.size(); ++i)
            if (!state.passEnabled[i])
                s.disabledPasses.append(
                    SessionPass{static_cast<int>(i), QString::fromStdString(state.passes[i])});
        if (state.stopAfter >= 0 && state.stopAfter < static_cast<int>(state.passes.size()))
            s.stopAfter = SessionPass{
                state.stopAfter,
                QString::fromStdString(state.passes[static_cast<size_t>(state.stopAfter)])};
        s.forceFusion = QString::fromStdString(state.forceFusion);
        s.forbidFusion = QString::fromStdString(state.forbidFusion);
    }
    for (QDockWidget* dock : m_docks)
        if (dock->toggleViewAction()->isChecked()) s.panels.append(dock->objectName());
    if (QWidget* tab = m_tabs->currentWidget()) s.centralTab = tab->objectName();
    return s;
}

void MainWindow::scheduleSessionSave() {
    if (!m_sessionStore || m_restore || m_cleanExitSaved) return;
    if (!m_sessionTimer.isActive()) m_sessionTimer.start();  // at most a second late
}

bool MainWindow::saveSessionNow(bool cleanExit) {
    if (!m_sessionStore) return false;
    m_sessionTimer.stop();
    // While a restore runs, the session being restored is the one to keep.
    Session s = m_restore ? *m_restore : currentSession();
    s.cleanExit = cleanExit;
    s.pid = QCoreApplication::applicationPid();
    s.savedAt = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
    QString error;
    if (!m_sessionStore->save(s, &error)) {
        m_statusLabel->setText(tr("Session not saved: %1").arg(error));
        qWarning("hloscope: %s", qPrintable(error));
        return false;
    }
    if (cleanExit) m_cleanExitSaved = true;
    return true;
}

bool MainWindow::restoreSession(const Session& session, const QString& why) {
    const QString path = session.documentPath();
    QString missing;
    if (!session.hasDocument()) {
        missing = tr("The last session has no document; nothing was restored");
    } else if (session.document.startsWith(QLatin1String("example:"))) {
        const QString name = session.document.mid(8);
        const auto examples = document_loader::examples();
        if (std::none_of(examples.begin(), examples.end(),
                         [&](const ExampleInfo& e) { return e.name == name; }))
            missing = tr("The last session's example '%1' is not in this hloscope; the session was "
                         "not restored")
                          .arg(name);
    } else if (path.isEmpty() ||
               (session.document.startsWith(QLatin1String("dump:")) ? !QFileInfo(path).isDir()
                                                                    : !QFileInfo(path).isFile())) {
        missing =
            tr("The last session's document %1 no longer exists; the session was not restored")
                .arg(path.isEmpty() ? session.document : path);
    }
    if (!missing.isEmpty()) {
        showMessage(missing);
        emit sessionRestored(false, missing);
        return false;
    }
    m_restore = session;
    m_restoreOpened = false;
    m_restoreWhy = why;
    m_restoreSkipped = 0;
    m_sessionTimer.stop();
    if (!session.target.isEmpty() && !DocumentWorker::pipelineTargetOf(session.target).isEmpty())
        setTarget(session.target);
    m_statusLabel->setText(tr("Restoring the last session: %1").arg(session.documentTitle()));
    if (session.document.startsWith(QLatin1String("example:")))
        openExample(session.document.mid(8));
    else if (session.document.startsWith(QLatin1String("dump:")))
        openDumpModule(path, session.document.mid(5).section(QLatin1Char('|'), 0, 0));
    else
        openPath(path);
    return true;
}

void MainWindow::applyRestoredEdits(const DocumentState& state) {
    const Session& s = *m_restore;
    // A saved pass is re-applied only where the pipeline still has it at that index.
    auto matches = [&state](const SessionPass& pass) {
        return pass.index >= 0 && pass.index < static_cast<int>(state.passes.size()) &&
               (pass.name.isEmpty() ||
                QString::fromStdString(state.passes[static_cast<size_t>(pass.index)]) == pass.name);
    };
    DocumentWorker* w = m_worker;
    if (!state.externalTimeline) {
        for (const SessionPass& pass : s.disabledPasses) {
            if (!matches(pass)) {
                ++m_restoreSkipped;
                continue;
            }
            QMetaObject::invokeMethod(
                w, [w, i = pass.index] { w->setPassEnabled(i, false); }, Qt::QueuedConnection);
        }
        if (s.stopAfter.index >= 0) {
            if (matches(s.stopAfter))
                QMetaObject::invokeMethod(
                    w, [w, i = s.stopAfter.index] { w->setStopAfter(i); }, Qt::QueuedConnection);
            else
                ++m_restoreSkipped;
        }
        if (!s.forceFusion.isEmpty() || !s.forbidFusion.isEmpty())
            QMetaObject::invokeMethod(
                w,
                [w, force = s.forceFusion, forbid = s.forbidFusion] {
                    w->setFusionWhatIf(force, forbid);
                },
                Qt::QueuedConnection);
    }
    QMetaObject::invokeMethod(
        w, [w, step = s.step] { w->stepTo(step); }, Qt::QueuedConnection);
    // Once the worker has done all of the above (its queue runs in order), back here.
    QMetaObject::invokeMethod(
        w,
        [this] {
            QMetaObject::invokeMethod(
                this, [this] { finishRestore(); }, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void MainWindow::finishRestore() {
    if (!m_restore) return;
    const Session s = *m_restore;
    m_restore.reset();
    m_restoreOpened = false;
    if (!s.selected.isEmpty()) selectInstruction(s.selected);
    if (!s.panels.isEmpty())
        for (QDockWidget* dock : m_docks) {
            const bool open = s.panels.contains(dock->objectName());
            if (dock->toggleViewAction()->isChecked() != open) dock->setVisible(open);
        }
    if (!s.centralTab.isEmpty())
        for (int i = 0; i < m_tabs->count(); ++i)
            if (m_tabs->widget(i)->objectName() == s.centralTab) m_tabs->setCurrentIndex(i);
    QString message =
        tr("Restored the last session%1: %2 on %3")
            .arg(m_restoreWhy.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(m_restoreWhy),
                 s.documentTitle(), DocumentWorker::targetTitle(m_target));
    if (m_state) message += tr(", step %1/%2").arg(m_state->current).arg(m_state->passes.size());
    if (!s.disabledPasses.isEmpty())
        message += tr(", %n pass(es) disabled", nullptr, s.disabledPasses.size());
    if (m_restoreSkipped > 0)
        message += tr(" (%n saved pipeline edit(s) no longer match the pipeline and were left out)",
                      nullptr, m_restoreSkipped);
    m_statusLabel->setText(message);
    emit sessionRestored(true, message);
    scheduleSessionSave();
}

void MainWindow::abandonRestore(const QString& message) {
    m_restore.reset();
    m_restoreOpened = false;
    showMessage(message);
    emit sessionRestored(false, message);
}

}  // namespace hloscope
