#include "app/gui/main_window.h"

#include "app/gui/capture_dialog.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLockFile>
#include <QMenu>
#include <QMenuBar>
#include <QMetaMethod>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/support/thread_handoff.h"
#include "views/passes/pass_stepper_widget.h"
#include "views/text/hlo_text_view.h"
#include "views/text/text_diff_view.h"

namespace hloscope {
namespace {

constexpr int kMaxRecent = WindowSettings::kMaxRecent;
const QString kSettingGeometry = QString::fromLatin1(WindowSettings::kGeometryKey);
const QString kSettingState = QString::fromLatin1(WindowSettings::kStateKey);
const QString kSettingRecent = QString::fromLatin1(WindowSettings::kRecentKey);
const QString kSettingLast = QString::fromLatin1(WindowSettings::kLastDocumentKey);
const QString kSettingTarget = QString::fromLatin1(WindowSettings::kTargetKey);
constexpr int kSessionSaveDelayMs = 1000;

}  // namespace

QString MainWindow::documentEntry(const DocumentState& state) {
    if (state.path.empty())
        return QStringLiteral("example:") + QString::fromStdString(state.displayName);
    const QString path = QString::fromStdString(state.path);
    return state.moduleId.empty()
               ? QStringLiteral("path:") + path
               : QStringLiteral("dump:") + QString::fromStdString(state.moduleId) +
                     QLatin1Char('|') + path;
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    qRegisterMetaType<hloscope::DocumentStatePtr>();
    setObjectName(QStringLiteral("hloscopeMainWindow"));
    setWindowTitle(QStringLiteral("hloscope"));
    setAcceptDrops(true);
    setDockNestingEnabled(true);

    // The document worker on its own thread.
    m_worker = new DocumentWorker;
    m_worker->moveToThread(&m_thread);
    m_thread.setObjectName(QStringLiteral("hloscope-document"));
    connect(m_worker, &DocumentWorker::stateChanged, this, &MainWindow::onState);
    connect(m_worker, &DocumentWorker::failed, this, &MainWindow::onFailed);
    connect(m_worker, &DocumentWorker::progress, this, &MainWindow::onProgress);
    connect(m_worker, &DocumentWorker::busyChanged, this, &MainWindow::onBusy);
    m_thread.start();

    // Central area: message bar above the tabs (graph, text, diff).
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_messageBar = new QFrame(central);
    m_messageBar->setObjectName(QStringLiteral("messageBar"));
    m_messageBar->setAutoFillBackground(true);
    {
        QPalette p = m_messageBar->palette();
        const bool dark = p.color(QPalette::Window).lightness() < 128;
        p.setColor(QPalette::Window, dark ? QColor(0x5a, 0x24, 0x24) : QColor(0xff, 0xe4, 0xe1));
        m_messageBar->setPalette(p);
        auto* bar = new QHBoxLayout(m_messageBar);
        bar->setContentsMargins(8, 4, 4, 4);
        m_messageLabel = new QLabel(m_messageBar);
        m_messageLabel->setWordWrap(true);
        m_messageLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
        m_messageLabel->setTextFormat(Qt::PlainText);
        auto* close = new QToolButton(m_messageBar);
        close->setText(QStringLiteral("✕"));
        close->setAutoRaise(true);
        close->setToolTip(tr("Dismiss"));
        connect(close, &QToolButton::clicked, this, &MainWindow::clearMessage);
        bar->addWidget(m_messageLabel, 1);
        bar->addWidget(close);
    }
    m_messageBar->hide();
    m_tabs = new QTabWidget(central);
    m_tabs->setObjectName(QStringLiteral("centralTabs"));
    m_tabs->setDocumentMode(true);
    m_textView = new HloTextView(m_tabs);
    m_diffView = new TextDiffView(m_tabs);
    m_tabs->addTab(m_textView, tr("Text"));
    m_tabs->addTab(m_diffView, tr("Diff"));
    layout->addWidget(m_messageBar);
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);
    registerPanel(m_textView, m_textView);
    registerPanel(m_diffView, m_diffView);
    connect(this, &MainWindow::instructionSelected, m_textView, &HloTextView::selectInstruction);
    connect(m_textView, &HloTextView::instructionSelected, this, &MainWindow::selectInstruction);

    // Status bar: message, progress, cancel.
    m_statusLabel = new QLabel(tr("Open a module, a dump folder or an example"), this);
    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(220);
    m_progress->setTextVisible(false);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelButton"));
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, this, [this] { m_worker->cancel(); });
    statusBar()->addWidget(m_statusLabel, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);

    createDocks();
    createActions();
    restoreSettings();

    m_sessionTimer.setSingleShot(true);
    m_sessionTimer.setInterval(kSessionSaveDelayMs);
    connect(&m_sessionTimer, &QTimer::timeout, this, [this] { saveSessionNow(false); });
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::scheduleSessionSave);
}

MainWindow::~MainWindow() {
    // QWidget's destructor closes the window and hides the docks after this class's members
    // are gone; the docks' view actions then emit toggled() into scheduleSessionSave (which
    // would start the destroyed m_sessionTimer). No child may call back into this object
    // from here on.
    for (QObject* child : findChildren<QObject*>()) child->disconnect(this);
    if (m_sessionStore && !m_cleanExitSaved) saveSessionNow(true);
    m_worker->cancel();
    m_thread.quit();
    m_thread.wait();
    delete m_worker;
}

// --- Menus, toolbar, docks ----------------------------------------------------------

void MainWindow::createDocks() {
    m_stepper = new PassStepperWidget(this);
    connect(m_stepper, &PassStepperWidget::stepRequested, this, &MainWindow::stepTo);
    connect(m_stepper, &PassStepperWidget::passEnabledRequested, this, [this](int pass, bool enabled) {
        QMetaObject::invokeMethod(m_worker, [w = m_worker, pass, enabled] { w->setPassEnabled(pass, enabled); },
                                  Qt::QueuedConnection);
    });
    connect(m_stepper, &PassStepperWidget::stopAfterRequested, this, [this](int pass) {
        QMetaObject::invokeMethod(m_worker, [w = m_worker, pass] { w->setStopAfter(pass); },
                                  Qt::QueuedConnection);
    });
    QDockWidget* dock = addPanel(m_stepper, tr("Passes"), Qt::LeftDockWidgetArea);
    dock->setObjectName(QStringLiteral("passesDock"));
    resizeDocks({dock}, {400}, Qt::Horizontal);  // until a saved state says otherwise
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_fileMenu = file;
    QAction* open = file->addAction(tr("&Open..."), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open module"), QString(),
            tr("Modules (*.hlo *.txt *.mlir *.json);;All files (*)"));
        if (!path.isEmpty()) openPath(path);
    });
    open->setShortcut(QKeySequence::Open);
    QAction* openDump = file->addAction(tr("Open &Dump Folder..."), this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Open XLA dump folder"));
        if (!folder.isEmpty()) openPath(folder);
    });
    openDump->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    QAction* capture = file->addAction(tr("&Capture From Program..."), this, [this] { captureFromProgram(); });
    capture->setObjectName(QStringLiteral("captureAction"));
    capture->setToolTip(tr("Run a JAX, TensorFlow or PyTorch/XLA program with XLA's dump flags and open what it dumps"));
    m_recentMenu = file->addMenu(tr("&Recent Files"));
    m_dumpMenu = file->addMenu(tr("Dump &Modules"));
    m_dumpMenu->setEnabled(false);
    file->addSeparator();
    m_exportAction = file->addAction(tr("&Export HLO Text After This Pass..."), this, [this] {
        if (!m_state) return;
        const QString suggested =
            QString::fromStdString(m_state->displayName).section(QLatin1Char('/'), -1) +
            QStringLiteral(".%1.hlo").arg(m_state->current);
        const QString path = QFileDialog::getSaveFileName(this, tr("Export HLO text"), suggested,
                                                          tr("HLO text (*.hlo *.txt)"));
        if (!path.isEmpty()) exportCurrentText(path);
    });
    m_exportAction->setShortcut(QKeySequence::SaveAs);
    m_exportAction->setEnabled(false);
    m_exportEnd = file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* examples = menuBar()->addMenu(tr("E&xamples"));
    for (const ExampleInfo& e : document_loader::examples()) {
        QAction* a = examples->addAction(e.title.isEmpty() ? e.name : e.title, this,
                                         [this, name = e.name] { openExample(name); });
        a->setToolTip(e.description);
        a->setStatusTip(e.description);
        a->setData(e.name);
    }

    QMenu* passes = menuBar()->addMenu(tr("&Passes"));
    QAction* next = passes->addAction(tr("&Next Pass"), m_stepper, &PassStepperWidget::stepNext);
    next->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Down));
    QAction* previous = passes->addAction(tr("&Previous Pass"), m_stepper, &PassStepperWidget::stepPrevious);
    previous->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Up));
    passes->addAction(tr("&First (Input)"), m_stepper, &PassStepperWidget::stepFirst)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Home));
    passes->addAction(tr("&Last Pass"), m_stepper, &PassStepperWidget::stepLast)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_End));
    QAction* hide = passes->addAction(tr("&Hide Unchanged Passes"));
    hide->setCheckable(true);
    connect(hide, &QAction::toggled, m_stepper, &PassStepperWidget::setHideUnchanged);

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : m_docks) m_viewMenu->addAction(dock->toggleViewAction());
    m_viewMenu->addSeparator();
    QAction* unified = m_viewMenu->addAction(tr("&Unified Diff"));
    unified->setCheckable(true);
    connect(unified, &QAction::toggled, this, [this](bool on) {
        m_diffView->setMode(on ? TextDiffView::Mode::kUnified : TextDiffView::Mode::kSideBySide);
    });
    m_viewMenu->addAction(tr("Full &Screen"), this, [this] {
        isFullScreen() ? showNormal() : showFullScreen();
    })->setShortcut(QKeySequence::FullScreen);
    // Light and dark themes follow the system palette (Qt 6 default); the
    // views pick their colours from the palette's lightness.

    QToolBar* toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("mainToolBar"));
    toolbar->addAction(open);
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Target: "), toolbar));
    m_targetBox = new QComboBox(toolbar);
    m_targetBox->setObjectName(QStringLiteral("targetBox"));
    for (const QString& t : DocumentWorker::targetNames()) m_targetBox->addItem(DocumentWorker::targetTitle(t), t);
    toolbar->addWidget(m_targetBox);
    connect(m_targetBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        setTarget(m_targetBox->itemData(index).toString());
    });
    toolbar->addSeparator();
    toolbar->addAction(previous);
    toolbar->addAction(next);
    m_viewMenu->addAction(toolbar->toggleViewAction());
}

void MainWindow::addExportAction(QAction* action) {
    m_fileMenu->insertAction(m_exportEnd, action);
    addAction(action);  // shortcuts work wherever the focus is
}

void MainWindow::addViewAction(QAction* action) {
    m_viewMenu->addAction(action);
    addAction(action);
}

void MainWindow::insertCentralGraph(QWidget* graph, DocumentPanel* panel) {
    graph->setParent(m_tabs);
    if (graph->objectName().isEmpty()) graph->setObjectName(QStringLiteral("graphView"));
    m_tabs->insertTab(0, graph, tr("Graph"));
    m_tabs->setCurrentIndex(0);
    registerPanel(graph, panel);
    wireSignals(graph);
}

QDockWidget* MainWindow::dockPanel(QWidget* panel, DocumentPanel* documentPanel, const QString& title,
                                   Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, this);
    QString name = title.toLower().remove(QLatin1Char(' ')) + QStringLiteral("Dock");
    dock->setObjectName(name);  // saveState needs one
    // Panels along the top or bottom scroll inside their dock, so the graph
    // and text keep their height whatever a panel's content needs.
    if (area == Qt::BottomDockWidgetArea || area == Qt::TopDockWidgetArea) {
        auto* scroll = new QScrollArea(dock);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setWidget(panel);
        dock->setWidget(scroll);
    } else {
        dock->setWidget(panel);
    }
    addDockWidget(area, dock);
    m_docks.append(dock);
    connect(dock->toggleViewAction(), &QAction::toggled, this, &MainWindow::scheduleSessionSave);
    if (m_viewMenu) {
        m_viewMenu->insertAction(m_viewMenu->actions().value(m_docks.size() - 1), dock->toggleViewAction());
    }
    registerPanel(panel, documentPanel);
    // The stepper's step and pass signals are connected in createDocks.
    if (panel != m_stepper) wireSignals(panel);
    return dock;
}

void MainWindow::registerPanel(QWidget* widget, DocumentPanel* panel) {
    m_panels.append(PanelEntry{widget, panel, -1});
    if (m_state) {
        m_panels.last().delivered = m_state->generation;
        panel->setState(m_state);
    }
}

void MainWindow::deliverState(const DocumentStatePtr& state) {
    // By index: a panel's setState may add panels (they get the state as they register).
    for (qsizetype i = 0; i < m_panels.size(); ++i) {
        if (!m_panels[i].widget) continue;
        m_panels[i].delivered = state->generation;
        m_panels[i].panel->setState(state);
    }
}

QList<DocumentPanel*> MainWindow::panels() const {
    QList<DocumentPanel*> result;
    for (const PanelEntry& entry : m_panels)
        if (entry.widget) result.append(entry.panel);
    return result;
}

int64_t MainWindow::deliveredGeneration(const DocumentPanel* panel) const {
    for (const PanelEntry& entry : m_panels)
        if (entry.widget && entry.panel == panel) return entry.delivered;
    return -1;
}

void MainWindow::wireSignals(QWidget* panel) {
    const QMetaObject* meta = panel->metaObject();
    auto has = [meta](const char* signature, QMetaMethod::MethodType type) {
        const int i = meta->indexOfMethod(QMetaObject::normalizedSignature(signature).constData());
        return i >= 0 && meta->method(i).methodType() == type;
    };
    if (has("selectInstruction(QString)", QMetaMethod::Slot))
        connect(this, SIGNAL(instructionSelected(QString)), panel, SLOT(selectInstruction(QString)));
    if (has("instructionSelected(QString)", QMetaMethod::Signal))
        connect(panel, SIGNAL(instructionSelected(QString)), this, SLOT(selectInstruction(QString)));
    if (has("stepRequested(int)", QMetaMethod::Signal))
        connect(panel, SIGNAL(stepRequested(int)), this, SLOT(stepTo(int)));
    if (has("fusionWhatIfRequested(QString,QString)", QMetaMethod::Signal))
        connect(panel, SIGNAL(fusionWhatIfRequested(QString,QString)), m_worker,
                SLOT(setFusionWhatIf(QString,QString)));
}

bool MainWindow::showPanel(const QString& name) {
    const QString wanted = name.toLower().remove(QLatin1Char(' '));
    for (QDockWidget* dock : m_docks) {
        const QString title = dock->windowTitle().toLower().remove(QLatin1Char(' '));
        if (title == wanted || dock->objectName().compare(name, Qt::CaseInsensitive) == 0 ||
            dock->objectName().toLower() == wanted + QStringLiteral("dock")) {
            dock->show();
            dock->raise();
            return true;
        }
    }
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (m_tabs->tabText(i).toLower().remove(QLatin1Char('&')) == wanted ||
            m_tabs->widget(i)->objectName().compare(name, Qt::CaseInsensitive) == 0) {
            m_tabs->setCurrentIndex(i);
            return true;
        }
    }
    return false;
}

// --- Documents ------------------------------------------------------------------

void MainWindow::openPath(const QString& path) {
    const QFileInfo info(path);
    if (info.isDir()) rebuildDumpMenu(info.absoluteFilePath());
    QMetaObject::invokeMethod(m_worker, [w = m_worker, path] { w->open(path); }, Qt::QueuedConnection);
}

void MainWindow::openDumpModule(const QString& folder, const QString& moduleId) {
    rebuildDumpMenu(QFileInfo(folder).absoluteFilePath());
    QMetaObject::invokeMethod(m_worker, [w = m_worker, folder, moduleId] { w->openDumpModule(folder, moduleId); },
                              Qt::QueuedConnection);
}

void MainWindow::openExample(const QString& name) {
    QMetaObject::invokeMethod(m_worker, [w = m_worker, name] { w->openExample(name); }, Qt::QueuedConnection);
}

void MainWindow::setTarget(const QString& target) {
    if (DocumentWorker::pipelineTargetOf(target).isEmpty()) {
        showMessage(tr("Unknown target '%1' (expected %2)")
                        .arg(target, DocumentWorker::targetNames().join(QStringLiteral(", "))));
        return;
    }
    const int index = m_targetBox->findData(target);
    if (index >= 0 && index != m_targetBox->currentIndex()) {
        m_targetBox->setCurrentIndex(index);  // comes back here
        return;
    }
    m_target = target;
    QSettings().setValue(kSettingTarget, target);
    scheduleSessionSave();
    QMetaObject::invokeMethod(m_worker, [w = m_worker, target] { w->setTarget(target); }, Qt::QueuedConnection);
}

void MainWindow::stepTo(int index) {
    QMetaObject::invokeMethod(m_worker, [w = m_worker, index] { w->stepTo(index); }, Qt::QueuedConnection);
}

void MainWindow::selectInstruction(const QString& name) {
    if (name == m_selected) return;
    m_selected = name;
    m_statusLabel->setText(tr("Selected %1").arg(name));
    emit instructionSelected(name);
    scheduleSessionSave();
}

bool MainWindow::exportCurrentText(const QString& path) {
    const PassSnapshot* snapshot = m_state ? m_state->currentSnapshot() : nullptr;
    if (!snapshot || !snapshot->text) {
        showMessage(tr("Nothing to export: no document is open"));
        return false;
    }
    // QSaveFile: a temporary file renamed over `path` on commit, so a failed
    // write leaves the previous file whole. The explicit flush matters: Qt 6.4's
    // commit() does not see an error (disk full) in its own final flush.
    QSaveFile file(path);
    const std::string& text = *snapshot->text;
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(text.data(), static_cast<qint64>(text.size())) !=
            static_cast<qint64>(text.size()) ||
        !file.flush() || !file.commit()) {
        showMessage(tr("Cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    m_statusLabel->setText(tr("Exported %1").arg(path));
    return true;
}

bool MainWindow::saveScreenshot(const QString& path) {
    QSaveFile file(path);
    return file.open(QIODevice::WriteOnly) && grab().save(&file, "PNG") && file.flush() &&
           file.commit();
}

// --- Worker signals -----------------------------------------------------------------

void MainWindow::onState(const DocumentStatePtr& state) {
    // Built on the worker's thread. Taken by reference: a by-value parameter would be copied
    // (its reference count touched) before this line.
    handoff::receive();
    const bool newDocument = !m_state || m_state->path != state->path ||
                             m_state->displayName != state->displayName ||
                             m_state->moduleId != state->moduleId;
    m_state = state;
    if (newDocument) {
        clearMessage();
        m_selected.clear();
        if (!state->path.empty()) {
            const QString path = QString::fromStdString(state->path);
            addRecent(path);
            if (!state->moduleId.empty()) rebuildDumpMenu(path);
        }
        setLastDocument(documentEntry(*state));
    }
    const int index = m_targetBox->findData(QString::fromStdString(state->target));
    if (index >= 0 && index != m_targetBox->currentIndex()) {
        QSignalBlocker block(m_targetBox);
        m_targetBox->setCurrentIndex(index);
        m_target = QString::fromStdString(state->target);
    }
    m_exportAction->setEnabled(state->currentSnapshot() != nullptr);
    const PassSnapshot* s = state->currentSnapshot();
    setWindowTitle(QStringLiteral("%1 — hloscope").arg(QString::fromStdString(state->displayName)));
    if (s)
        m_statusLabel->setText(state->current == 0
                                   ? tr("Input module (%1 passes)").arg(state->passes.size())
                                   : tr("After pass %1/%2: %3").arg(state->current).arg(state->passes.size())
                                         .arg(QString::fromStdString(s->pass)));
    deliverState(state);
    emit stateChanged(state);
    if (m_restore && !m_restoreOpened && documentEntry(*state) == m_restore->document) {
        m_restoreOpened = true;
        applyRestoredEdits(*state);
    }
    scheduleSessionSave();
}

void MainWindow::onFailed(const QString& message) {
    showMessage(message);
    if (m_restore && !m_restoreOpened)
        abandonRestore(tr("The last session was not restored: %1").arg(message));
}

void MainWindow::onProgress(const QString& what, int done, int total) {
    m_statusLabel->setText(what);
    m_progress->setRange(0, total);  // 0/0: busy indicator
    m_progress->setValue(done);
}

void MainWindow::onBusy(bool busy) {
    m_busy = busy;
    m_progress->setVisible(busy);
    m_cancel->setVisible(busy);
    if (!busy) m_progress->setRange(0, 1);
}

void MainWindow::showMessage(const QString& message) {
    m_messageLabel->setText(message);
    m_messageBar->show();
    m_statusLabel->setText(message.section(QLatin1Char('\n'), 0, 0));
}

void MainWindow::clearMessage() {
    m_messageLabel->clear();
    m_messageBar->hide();
}

CaptureDialog* MainWindow::captureFromProgram(const QString& command, bool run) {
    auto* dialog = findChild<CaptureDialog*>(QStringLiteral("captureDialog"));
    if (!dialog) {
        dialog = new CaptureDialog(this);
        connect(dialog, &CaptureDialog::captured, this, [this](const QString& folder, const QString& moduleId) {
            openDumpModule(folder, moduleId);
        });
    }
    if (!command.isEmpty()) dialog->setCommand(command);
    dialog->show();
    dialog->raise();
    if (run) dialog->start();
    return dialog;
}

QString MainWindow::messageText() const { return m_messageBar->isHidden() ? QString() : m_messageLabel->text(); }

// --- Settings ----------------------------------------------------------------------

void MainWindow::restoreSettings() {
    const WindowSettings settings = WindowSettings::read(QSettings());
    if (!restoreGeometry(settings.geometry)) {
        // First start: most of the screen.
        if (const QScreen* screen = this->screen()) {
            const QRect available = screen->availableGeometry();
            resize(available.size() * 0.85);
            move(available.center() - rect().center());
        }
    }
    restoreState(settings.state);
    m_recent = settings.recent;
    rebuildRecentMenu();
    if (!DocumentWorker::pipelineTargetOf(settings.target).isEmpty()) setTarget(settings.target);
}

void MainWindow::restoreDockLayout() { restoreState(WindowSettings::read(QSettings()).state); }

bool MainWindow::restoreLastDocument() {
    const DocumentEntry entry = DocumentEntry::parse(WindowSettings::read(QSettings()).lastDocument);
    if (entry.kind == QLatin1String("example")) {
        openExample(entry.name);
        return true;
    }
    if (entry.kind == QLatin1String("path") && QFileInfo::exists(entry.path)) {
        openPath(entry.path);
        return true;
    }
    if (entry.kind == QLatin1String("dump") && QFileInfo(entry.path).isDir()) {
        openDumpModule(entry.path, entry.name);
        return true;
    }
    return false;
}

void MainWindow::setLastDocument(const QString& entry) { QSettings().setValue(kSettingLast, entry); }

void MainWindow::addRecent(const QString& entry) {
    m_recent.removeAll(entry);
    m_recent.prepend(entry);
    while (m_recent.size() > kMaxRecent) m_recent.removeLast();
    QSettings().setValue(kSettingRecent, m_recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    for (const QString& path : m_recent) {
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openPath(path); })
            ->setToolTip(path);
    }
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("Clear Recent Files"), this, [this] {
        m_recent.clear();
        QSettings().setValue(kSettingRecent, m_recent);
        rebuildRecentMenu();
    })->setEnabled(!m_recent.isEmpty());
}

void MainWindow::rebuildDumpMenu(const QString& folder) {
    if (folder == m_dumpFolder) return;
    m_dumpFolder = folder;
    m_dumpMenu->clear();
    auto modules = document_loader::listDumpFolder(folder);
    if (!modules.isOk()) {
        m_dumpMenu->setEnabled(false);
        return;
    }
    for (const DumpModuleInfo& m : *modules) {
        QAction* a = m_dumpMenu->addAction(
            m.passes.empty() ? m.id : tr("%1 (%2 passes)").arg(m.id).arg(m.passes.size()), this,
            [this, folder, id = m.id] { openDumpModule(folder, id); });
        a->setData(m.id);
    }
    m_dumpMenu->setEnabled(true);
}

void MainWindow::saveWindowState() {
    QSettings settings;
    settings.setValue(kSettingGeometry, saveGeometry());
    settings.setValue(kSettingState, saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    saveWindowState();
    if (m_sessionStore) saveSessionNow(true);
    m_worker->cancel();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        for (const QUrl& url : event->mimeData()->urls())
            if (url.isLocalFile()) return event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    for (const QUrl& url : event->mimeData()->urls()) {
        if (!url.isLocalFile()) continue;
        openPath(url.toLocalFile());
        event->acceptProposedAction();
        return;
    }
}

}  // namespace hloscope
