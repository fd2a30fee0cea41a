// MainWindow: the hloscope desktop shell. It owns the DocumentWorker (on its
// own QThread) and forwards every DocumentState to the views; selection is
// shared by instruction name (instructionSelected / selectInstruction).
//
// Slots for the integrator's widgets (each a DocumentPanel, views/document/document_panel.h):
//   setCentralGraph(panel)            the graph view becomes the first central tab
//   addPanel(panel, title, area)      a QDockWidget (toggle in View)
// Both put the panel in panels(): every state reaches each through
// DocumentPanel::setState. A panel's selectInstruction(QString) slot and
// instructionSelected(QString), stepRequested(int) and
// fusionWhatIfRequested(QString,QString) signals, where it has them, are
// connected to the shared selection, the pass step and the worker's what-if.
// Settings (QSettings, written on change): geometry/window state, recent
// files, last document, target.
// Session (app/gui/session.h; off until enableSession): the document, target,
// pipeline edits, step, selection and open panels, saved atomically about a
// second after each change and at close with the clean-exit mark;
// restoreSession brings one back.
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QStringList>
#include <QThread>
#include <QTimer>
#include <memory>
#include <optional>

#include "app/gui/session.h"
#include "views/document/document_panel.h"
#include "views/document/document_worker.h"

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QLockFile;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QToolButton;

namespace hloscope {

class CaptureDialog;

class HloTextView;
class PassStepperWidget;
class TextDiffView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // --- Integration slots -------------------------------------------------------
    template <DocumentPanelWidget Panel>
    void setCentralGraph(Panel* graph) {
        insertCentralGraph(graph, graph);
    }
    // Panels' own export and view actions join the File and View menus.
    void addExportAction(QAction* action);
    void addViewAction(QAction* action);
    template <DocumentPanelWidget Panel>
    QDockWidget* addPanel(Panel* panel, const QString& title,
                          Qt::DockWidgetArea area = Qt::RightDockWidgetArea) {
        return dockPanel(panel, panel, title, area);
    }
    // Every panel that receives the document's states, in the order they
    // receive them (the text and diff views, the pass stepper, then the
    // panels as they were added); panels destroyed since are left out.
    QList<DocumentPanel*> panels() const;
    // The generation of the last state handed to `panel` (-1: none yet, or
    // not one of panels()).
    int64_t deliveredGeneration(const DocumentPanel* panel) const;
    // Shows and raises a dock or central tab by name (object name or title,
    // case-insensitive: "passes", "diff", "text", ...); false when unknown.
    bool showPanel(const QString& name);
    // Re-applies the saved dock layout (after panels were added).
    void restoreDockLayout();

    DocumentWorker* worker() const { return m_worker; }
    DocumentStatePtr state() const { return m_state; }
    PassStepperWidget* passStepper() const { return m_stepper; }
    HloTextView* textView() const { return m_textView; }
    TextDiffView* diffView() const { return m_diffView; }
    QString messageText() const;  // the message bar's text ("" when hidden)
    QStringList recentFiles() const { return m_recent; }
    QString target() const { return m_target; }
    bool isBusy() const { return m_busy; }

    // Writes the current snapshot's HLO text; false (message bar) on error.
    bool exportCurrentText(const QString& path);
    // Opens the last document of the previous session; false when none.
    bool restoreLastDocument();
    // Grabs the window into a PNG.
    bool saveScreenshot(const QString& path);

    // --- Session -----------------------------------------------------------------
    // Starts saving the session to `folder` (empty: SessionStore::defaultFolder()),
    // after reading the session the previous run left there.
    void enableSession(const QString& folder = QString());
    bool sessionEnabled() const { return m_sessionStore.has_value(); }
    QString sessionFile() const;
    // What the previous run left (nullopt: none, or unreadable: see its message).
    const std::optional<Session>& previousSession() const { return m_previousSession; }
    // The previous run left a session with a document and no clean-exit mark.
    bool previousRunEndedAbnormally() const;
    Session currentSession() const;
    // Reopens the session's document, then re-applies target, pipeline edits,
    // step, selection and panels; sessionRestored tells the outcome (non-modal:
    // the message bar and status bar). False when nothing can be restored (a
    // document that no longer exists: the message bar says so).
    bool restoreSession(const Session& session, const QString& why = QString());
    bool isRestoringSession() const { return m_restore.has_value(); }
    // Writes the session now (with the clean-exit mark when `cleanExit`).
    bool saveSessionNow(bool cleanExit = false);

    // File → Capture From Program...: the capture dialog (one per window), with `command` typed
    // in and run at once when `run`. Its capture opens the largest module dumped.
    CaptureDialog* captureFromProgram(const QString& command = QString(), bool run = false);

public slots:
    void openPath(const QString& path);
    void openDumpModule(const QString& folder, const QString& moduleId);
    void openExample(const QString& name);
    void setTarget(const QString& target);
    void stepTo(int index);
    void selectInstruction(const QString& name);
    void showMessage(const QString& message);
    void clearMessage();

signals:
    void stateChanged(hloscope::DocumentStatePtr state);
    void instructionSelected(const QString& name);
    // A restore finished: restored (`ok`) or not, and the message shown.
    void sessionRestored(bool ok, const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createDocks();
    void restoreSettings();
    void saveWindowState();
    void addRecent(const QString& entry);
    void rebuildRecentMenu();
    void rebuildDumpMenu(const QString& folder);
    void setLastDocument(const QString& entry);
    void onState(const DocumentStatePtr& state);
    void onFailed(const QString& message);
    void onProgress(const QString& what, int done, int total);
    void onBusy(bool busy);
    // The lastDocument / session entry of a state's document.
    static QString documentEntry(const DocumentState& state);
    void insertCentralGraph(QWidget* widget, DocumentPanel* panel);
    QDockWidget* dockPanel(QWidget* widget, DocumentPanel* panel, const QString& title,
                           Qt::DockWidgetArea area);
    // Adds `panel` to panels() and hands it the current state, if any.
    void registerPanel(QWidget* widget, DocumentPanel* panel);
    void deliverState(const DocumentStatePtr& state);
    // Connects the panel's selection, step and what-if signals and slots (those it has).
    void wireSignals(QWidget* panel);
    void scheduleSessionSave();
    void applyRestoredEdits(const DocumentState& state);
    void finishRestore();
    void abandonRestore(const QString& message);

    QThread m_thread;
    DocumentWorker* m_worker = nullptr;
    DocumentStatePtr m_state;
    QString m_target = QStringLiteral("cpu");
    QStringList m_recent;
    QString m_selected;
    QString m_dumpFolder;
    bool m_busy = false;

    QTabWidget* m_tabs = nullptr;
    QWidget* m_messageBar = nullptr;
    QLabel* m_messageLabel = nullptr;
    HloTextView* m_textView = nullptr;
    TextDiffView* m_diffView = nullptr;
    PassStepperWidget* m_stepper = nullptr;
    QComboBox* m_targetBox = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_dumpMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QAction* m_exportAction = nullptr;
    QAction* m_exportEnd = nullptr;
    QMenu* m_fileMenu = nullptr;  // the separator after the export actions
    QLabel* m_statusLabel = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QList<QDockWidget*> m_docks;
    // panels(): the widget guards against a panel deleted while the window lives.
    struct PanelEntry {
        QPointer<QWidget> widget;
        DocumentPanel* panel = nullptr;
        int64_t delivered = -1;  // generation of the last state it was given
    };
    QList<PanelEntry> m_panels;

    std::optional<SessionStore> m_sessionStore;
    std::unique_ptr<QLockFile> m_sessionLock;  // one window per session folder saves
    int m_restoreSkipped = 0;
    std::optional<Session> m_previousSession;
    QString m_previousSessionError;
    QTimer m_sessionTimer;
    bool m_cleanExitSaved = false;
    // A restore in progress: opening its document, then applying its edits.
    std::optional<Session> m_restore;
    bool m_restoreOpened = false;
    QString m_restoreWhy;
};

}  // namespace hloscope
