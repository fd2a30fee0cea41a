// hloscope: the desktop explorer.
//   hloscope [FILE|DUMP_FOLDER] [--example NAME] [--target T] [--step N]
//            [--panel NAME] [--layer KEY [--kernels]] [--compare] [--run] [--screenshot out.png]
//   hloscope --capture -- PROGRAM [ARGS...]   (runs it with XLA's dump flags, opens the dump)
// --screenshot loads the document, runs to step N (with --run, also runs it
// on the Execution panel's device; with --compare, shows before/after side
// by side; with --layer, drills into that layer of a module drawn by its layers),
// waits for the graph, renders the window into a PNG and exits
// (works with QT_QPA_PLATFORM=offscreen); it prints on stderr how long after the
// process started the graph was first drawn (the time to first paint).
// The session (app/gui/session.h) is saved to $XDG_DATA_HOME/hloscope/hloscope/
// session.json; when the previous run crashed or was killed, a start without
// FILE or --example restores it (--no-restore, or the setting
// session/restoreAfterCrash=false, says no). --screenshot runs leave the
// session alone.
#include <string_view>

#include <QApplication>
#include <QElapsedTimer>
#include <QCommandLineParser>
#include <QIcon>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <cstdio>

#include "app/gui/main_window.h"
#include "app/gui/panels.h"
#include "app/gui/session.h"
#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/gpu/gpu_device.h"
#include "compiler/backends/tpu/tpu_device.h"
#include "views/execution/execution_panel.h"
#include "views/graph/graph_view.h"

using hloscope::DocumentStatePtr;
using hloscope::DocumentWorker;
using hloscope::MainWindow;

namespace {

// Started first thing in main: the time to first paint counts Qt's start-up too.
QElapsedTimer& sinceStart() {
    static QElapsedTimer timer;
    return timer;
}

// Drives --step / --screenshot: waits for the document, asks for the step,
// then grabs the window once that state arrives.
class StartupDriver : public QObject {
public:
    StartupDriver(MainWindow* window, const hloscope::StandardPanels& panels, int step, bool run,
                  QString screenshot, QString layer, bool kernels)
        : QObject(window), m_window(window), m_graph(qobject_cast<hloscope::GraphView*>(panels.graph)),
          m_execution(qobject_cast<hloscope::ExecutionPanel*>(panels.execution)), m_step(step), m_run(run),
          m_screenshot(std::move(screenshot)), m_layer(std::move(layer)), m_kernels(kernels) {
        connect(window, &MainWindow::stateChanged, this, &StartupDriver::onState);
        connect(window->worker(), &DocumentWorker::failed, this, &StartupDriver::onFailed);
        if (m_execution)
            connect(m_execution, &hloscope::ExecutionPanel::runFinished, this, [this](bool ok, const QString& message) {
                if (!ok) std::fprintf(stderr, "hloscope: run: %s\n", message.toLocal8Bit().constData());
                whenDrawn();
            });
    }
    // Without a document the screenshot shows the empty window.
    void noDocument() {
        if (!m_screenshot.isEmpty()) QTimer::singleShot(0, this, [this] { finish(0); });
    }

private:
    void onState(const DocumentStatePtr& state) {
        if (m_done) return;
        if (!m_stepSent && m_step > 0) {
            m_stepSent = true;
            m_window->stepTo(m_step);
            return;
        }
        m_done = true;
        (void)state;
        if (!m_layer.isEmpty() && m_graph) {
            m_graph->drillInto(QStringLiteral("layer:") + m_layer);
            if (m_kernels) m_graph->expandKernelsOf(QStringLiteral("layer:") + m_layer);
            if (m_graph->focusLayer().isEmpty())
                std::fprintf(stderr, "hloscope: no layer '%s' to drill into (hloscope-cli layers lists them)\n",
                             m_layer.toLocal8Bit().constData());
        }
        if (m_run && m_execution) {
            QTimer::singleShot(0, m_execution, &hloscope::ExecutionPanel::run);
            return;  // runFinished continues
        }
        whenDrawn();
    }
    // Once the graph (and its before/after side) is laid out and drawn.
    void whenDrawn() {
        if (m_screenshot.isEmpty()) return;
        auto pending = [this] {
            if (!m_graph) return false;
            if (m_graph->isLayoutPending()) return true;
            return m_graph->compareMode() && m_graph->beforeView() && m_graph->beforeView()->isLayoutPending();
        };
        if (pending()) {
            QTimer::singleShot(50, this, [this] { whenDrawn(); });
            return;
        }
        if (!m_reportedDrawn) {
            m_reportedDrawn = true;
            std::fprintf(stderr, "hloscope: graph drawn %lld ms after start\n",
                         static_cast<long long>(sinceStart().elapsed()));
        }
        // After the step's fade-outs (300 ms).
        QTimer::singleShot(400, this, [this] { finish(m_failed ? 1 : 0); });
    }
    void onFailed(const QString& message) {
        std::fprintf(stderr, "hloscope: %s\n", message.toLocal8Bit().constData());
        m_failed = true;
        // A document that did not load leaves nothing to wait for.
        if (!m_window->state() && !m_screenshot.isEmpty())
            QTimer::singleShot(0, this, [this] { finish(1); });
    }
    void finish(int code) {
        if (!m_window->saveScreenshot(m_screenshot)) {
            std::fprintf(stderr, "hloscope: cannot write %s\n", m_screenshot.toLocal8Bit().constData());
            code = 1;
        } else {
            std::printf("%s\n", m_screenshot.toLocal8Bit().constData());
        }
        QCoreApplication::exit(code);
    }

    MainWindow* m_window;
    hloscope::GraphView* m_graph;
    hloscope::ExecutionPanel* m_execution;
    int m_step;
    bool m_run;
    QString m_screenshot;
    QString m_layer;
    bool m_kernels = false;
    bool m_stepSent = false;
    bool m_done = false;
    bool m_failed = false;
    bool m_reportedDrawn = false;
};

// The command line: options and their help, shared by the GUI and the no-display path that
// only prints --help or --version.
struct CommandLine {
    QCommandLineOption example{QStringLiteral("example"), QStringLiteral("Open a built-in example."),
                               QStringLiteral("NAME")};
    QCommandLineOption target{QStringLiteral("target"), QStringLiteral("Target: cpu, h100, a100, tpu_v4, tpu_v5e."),
                              QStringLiteral("T")};
    QCommandLineOption step{QStringLiteral("step"), QStringLiteral("Run the pipeline to snapshot N (0 = input)."),
                            QStringLiteral("N")};
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("Render the window into a PNG and exit (stderr: the time to first paint)."),
                                  QStringLiteral("out.png")};
    QCommandLineOption panel{QStringLiteral("panel"), QStringLiteral("Show and raise a panel."), QStringLiteral("NAME")};
    QCommandLineOption layer{QStringLiteral("layer"),
                             QStringLiteral("Drill into a layer of a module drawn by its layers (its key, as "
                                            "hloscope-cli layers --json prints it)."),
                             QStringLiteral("KEY")};
    QCommandLineOption kernels{QStringLiteral("kernels"),
                               QStringLiteral("With --layer: show the layer's kernels (each fusion around its ops).")};
    QCommandLineOption capture{
        QStringLiteral("capture"),
        QStringLiteral("Run the program given after -- with XLA's dump flags (hloscope --capture -- python3 "
                       "train.py), show its output, and open the largest module it dumps.")};
    QCommandLineOption compare{QStringLiteral("compare"),
                               QStringLiteral("Show the graph before and after the step side by side.")};
    QCommandLineOption run{QStringLiteral("run"),
                           QStringLiteral("Run the module on the Execution panel's device (heat map on the graph).")};
    QCommandLineOption noRestore{QStringLiteral("no-restore"),
                                 QStringLiteral("Do not restore the session of a run that crashed or was killed "
                                                "(the setting session/restoreAfterCrash=false does the same).")};

    void addTo(QCommandLineParser& parser) const {
        parser.setApplicationDescription(
            QStringLiteral("hloscope: explore XLA HLO modules, their passes and fusion decisions."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(QStringLiteral("file"),
                                     QStringLiteral("HLO text, JSON, StableHLO .mlir, or an XLA dump folder."),
                                     QStringLiteral("[FILE]"));
        parser.addOptions({example, target, step, screenshot, panel, layer, kernels, capture, compare, run, noRestore});
    }
};

void setApplicationNames() {
    QCoreApplication::setOrganizationName(QStringLiteral("hloscope"));
    QCoreApplication::setApplicationName(QStringLiteral("hloscope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(HLOSCOPE_VERSION));
}

// --help and --version (before any "--") need no display: they are answered without a GUI.
bool onlyHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") return false;
        if (arg == "--help" || arg == "-h" || arg == "-?" || arg == "--help-all" || arg == "--version" || arg == "-v")
            return true;
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    sinceStart().start();
    if (onlyHelpOrVersion(argc, argv)) {
        QCoreApplication core(argc, argv);
        setApplicationNames();
        QCommandLineParser parser;
        const CommandLine options;
        options.addTo(parser);
        parser.process(core);  // prints the help or the version and exits
        return 0;
    }
    QApplication app(argc, argv);
    hloscope::registerCpuBackend();
    hloscope::registerGpuBackend();
    hloscope::registerTpuBackend();
    setApplicationNames();
    // The installed desktop entry and icon (packaging/desktop, packaging/icons); the
    // embedded icon when run from a build tree.
    QGuiApplication::setDesktopFileName(QStringLiteral("hloscope"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("hloscope"),
                                                 QIcon(QStringLiteral(":/icons/hloscope.svg"))));

    QCommandLineParser parser;
    const CommandLine commandLine;
    commandLine.addTo(parser);
    const QCommandLineOption &example = commandLine.example, &target = commandLine.target,
                             &step = commandLine.step, &screenshot = commandLine.screenshot,
                             &panel = commandLine.panel, &layer = commandLine.layer,
                             &kernelsOption = commandLine.kernels, &captureOption = commandLine.capture,
                             &compare = commandLine.compare, &run = commandLine.run,
                             &noRestore = commandLine.noRestore;
    parser.process(app);

    const QStringList files = parser.positionalArguments();
    if (files.size() > 1 || (files.size() == 1 && parser.isSet(example))) {
        std::fprintf(stderr, "hloscope: give one FILE or --example NAME\n");
        return 2;
    }
    int stepIndex = 0;
    if (parser.isSet(step)) {
        bool ok = false;
        stepIndex = parser.value(step).toInt(&ok);
        if (!ok || stepIndex < 0) {
            std::fprintf(stderr, "hloscope: --step needs a number >= 0\n");
            return 2;
        }
    }
    if (parser.isSet(target) && DocumentWorker::pipelineTargetOf(parser.value(target)).isEmpty()) {
        std::fprintf(stderr, "hloscope: unknown target '%s' (expected %s)\n",
                     parser.value(target).toLocal8Bit().constData(),
                     DocumentWorker::targetNames().join(QStringLiteral(", ")).toLocal8Bit().constData());
        return 2;
    }

    // A run killed in the middle of a settings write may have left QSettings' lock file empty.
    hloscope::clearAbandonedSettingsLock(QSettings().fileName());
    MainWindow window;
    const hloscope::StandardPanels panels = installStandardPanels(window);
    if (parser.isSet(compare))
        if (auto* graph = qobject_cast<hloscope::GraphView*>(panels.graph)) graph->setCompareMode(true);
    if (parser.isSet(screenshot)) window.resize(1400, 900);
    if (parser.isSet(target)) window.setTarget(parser.value(target));
    if (parser.isSet(panel) && !window.showPanel(parser.value(panel)))
        std::fprintf(stderr, "hloscope: no panel '%s'\n", parser.value(panel).toLocal8Bit().constData());
    auto* driver = new StartupDriver(&window, panels, stepIndex, parser.isSet(run), parser.value(screenshot),
                                     parser.value(layer), parser.isSet(kernelsOption));
    // Scripted screenshots neither restore nor overwrite the user's session.
    if (!parser.isSet(screenshot)) window.enableSession();
    QObject::connect(&window, &MainWindow::sessionRestored, &window,
                     [](bool, const QString& message) {
                         std::fprintf(stderr, "hloscope: %s\n", message.toLocal8Bit().constData());
                     });
    const bool crashed = window.previousRunEndedAbnormally();
    const bool explicitDocument = !files.isEmpty() || parser.isSet(example);
    const bool restore =
        crashed && !explicitDocument && !parser.isSet(noRestore) &&
        hloscope::WindowSettings::read(QSettings()).restoreAfterCrash;
    bool opened = true;
    if (parser.isSet(captureOption)) {
        // Everything after -- is the program and its arguments.
        QStringList words = parser.positionalArguments();
        for (QString& word : words)
            if (word.contains(QLatin1Char(' ')) || word.contains(QLatin1Char('"')))
                word = QLatin1Char('"') + QString(word).replace(QLatin1Char('"'), QStringLiteral("\\\"")) + QLatin1Char('"');
        if (words.isEmpty()) {
            std::fprintf(stderr, "hloscope: --capture needs a program after --: hloscope --capture -- python3 train.py\n");
            return 2;
        }
        window.captureFromProgram(words.join(QLatin1Char(' ')), true);
    } else if (!files.isEmpty()) window.openPath(files.front());
    else if (parser.isSet(example)) window.openExample(parser.value(example));
    else if (restore)
        opened = window.restoreSession(*window.previousSession(),
                                       QObject::tr("the previous run did not exit cleanly"));
    else opened = window.restoreLastDocument();
    if (crashed && !restore) {
        const QString note =
            QObject::tr(
                "The previous run did not exit cleanly; its session (%1) was not restored (%2)")
                .arg(window.previousSession()->documentTitle(),
                     explicitDocument          ? QObject::tr("a document was given")
                     : parser.isSet(noRestore) ? QStringLiteral("--no-restore")
                                               : QStringLiteral("session/restoreAfterCrash=false"));
        window.statusBar()->showMessage(note, 15000);
        std::fprintf(stderr, "hloscope: %s\n", note.toLocal8Bit().constData());
    }
    window.show();
    if (!opened) driver->noDocument();
    if (parser.isSet(screenshot)) {
        // A safety net: never hang a script.
        QTimer::singleShot(10 * 60 * 1000, &app, [] {
            std::fprintf(stderr, "hloscope: --screenshot timed out\n");
            QCoreApplication::exit(3);
        });
    }
    return app.exec();
}
