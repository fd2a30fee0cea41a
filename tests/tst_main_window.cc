// MainWindow offscreen: examples, stepping, errors in the message bar that
// keep the document, settings round-trip, panels, export, and the hloscope
// executable's --screenshot.
#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QProcess>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include "app/gui/capture_dialog.h"
#include "app/gui/main_window.h"
#include "app/gui/panels.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/support/thread_handoff.h"  // HLOSCOPE_TSAN
#include "tests/sanitizer_run.h"
#include "tests/settings_sandbox.h"
#include "views/document/document_loader.h"
#include "views/execution/execution_panel.h"
#include "views/fusion/fusion_decision_model.h"
#include "views/fusion/fusion_explorer.h"
#include "views/graph/graph_view.h"
#include "views/inspector/inspector_widget.h"
#include "views/passes/pass_stepper_widget.h"
#include "views/text/hlo_text_view.h"
#include "tests/event_wait.h"

using namespace hloscope;

namespace {

using testing::slow;  // the waits stretch in the sanitizer runs

bool writeFile(const QString& path, const QByteArray& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

// A panel as the other views are: a DocumentPanel (setState), shared selection.
class ProbePanel : public QLabel, public DocumentPanel {
    Q_OBJECT
public:
    int states = 0;
    QString selected;
public slots:
    void setState(hloscope::DocumentStatePtr state) override {
        ++states;
        setText(state ? QString::fromStdString(state->displayName) : QString());
    }
    void selectInstruction(const QString& name) { selected = name; }
signals:
    void instructionSelected(const QString& name);
};

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(testing::sandboxSettings(m_settingsDir, QStringLiteral("tst_main_window")));
    }

    void openExampleAndStep() {
        MainWindow window;
        window.show();
        QSignalSpy states(&window, &MainWindow::stateChanged);
        window.openExample(QStringLiteral("mlp"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 1, slow(30000));
        QVERIFY(window.state());
        QCOMPARE(window.state()->displayName, std::string("mlp"));
        QVERIFY(window.windowTitle().startsWith(QLatin1String("mlp")));
        QCOMPARE(window.textView()->toPlainText().toStdString(), *window.state()->currentSnapshot()->text);
        window.stepTo(5);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->current == 5, slow(30000));
        QCOMPARE(window.passStepper()->currentIndex(), 5);
        window.passStepper()->stepNext();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->current == 6, slow(30000));
        HLOSCOPE_TRY_VERIFY(!window.isBusy());
        // Menus: the examples are listed.
        QMenu* examples = nullptr;
        for (QAction* a : window.menuBar()->actions())
            if (a->text().remove(QLatin1Char('&')) == QLatin1String("Examples")) examples = a->menu();
        QVERIFY(examples);
        QVERIFY(examples->actions().size() >= 9);
    }

    void malformedFileKeepsDocument() {
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("broken.hlo"));
        QVERIFY(writeFile(bad, "HloModule broken\n\nENTRY %e {\n  %p = f32[ parameter(0)\n}\n"));
        MainWindow window;
        window.show();
        QSignalSpy states(&window, &MainWindow::stateChanged);
        window.openExample(QStringLiteral("softmax"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 1, slow(30000));
        DocumentStatePtr before = window.state();
        QVERIFY(window.messageText().isEmpty());
        window.openPath(bad);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!window.messageText().isEmpty(), slow(30000));
        QVERIFY2(QRegularExpression(QStringLiteral(R"(broken\.hlo:\d+:\d+: error: )"))
                     .match(window.messageText()).hasMatch(),
                 qPrintable(window.messageText()));
        HLOSCOPE_TRY_VERIFY(!window.isBusy());
        QCOMPARE(window.state(), before);
        QCOMPARE(states.size(), 1);
        QCOMPARE(window.state()->displayName, std::string("softmax"));
        // The message bar is no modal box: the window keeps working.
        window.stepTo(2);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->current == 2, slow(30000));
        window.clearMessage();
        QVERIFY(window.messageText().isEmpty());
    }

    void settingsRoundTrip() {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("relu.hlo"));
        QFile example(QStringLiteral(":/examples/relu_matmul_bias.hlo"));
        QVERIFY(example.open(QIODevice::ReadOnly));
        QVERIFY(writeFile(file, example.readAll()));
        {
            MainWindow window;
            window.show();
            QSignalSpy states(&window, &MainWindow::stateChanged);
            window.setTarget(QStringLiteral("tpu_v4"));
            window.openPath(file);
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 1, slow(30000));
            QCOMPARE(window.state()->target, std::string("tpu_v4"));
            QCOMPARE(window.recentFiles().value(0), QFileInfo(file).absoluteFilePath());
            window.resize(1111, 777);
            window.findChild<QDockWidget*>(QStringLiteral("passesDock"))->hide();
            window.close();  // writes geometry and dock state
        }
        QSettings settings;
        QCOMPARE(settings.value(QStringLiteral("target")).toString(), QStringLiteral("tpu_v4"));
        QCOMPARE(settings.value(QStringLiteral("lastDocument")).toString(),
                 QStringLiteral("path:") + QFileInfo(file).absoluteFilePath());
        {
            MainWindow window;
            QCOMPARE(window.target(), QStringLiteral("tpu_v4"));
            QCOMPARE(window.findChild<QComboBox*>(QStringLiteral("targetBox"))->currentData().toString(),
                     QStringLiteral("tpu_v4"));
            QCOMPARE(window.recentFiles().value(0), QFileInfo(file).absoluteFilePath());
            QCOMPARE(window.size(), QSize(1111, 777));
            QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("passesDock"))->isHidden());
            QSignalSpy states(&window, &MainWindow::stateChanged);
            QVERIFY(window.restoreLastDocument());
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 1, slow(30000));
            QCOMPARE(window.state()->path, QFileInfo(file).absoluteFilePath().toStdString());
            QCOMPARE(window.state()->target, std::string("tpu_v4"));
            window.openExample(QStringLiteral("polynomial"));
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 2, slow(30000));
        }
        QCOMPARE(QSettings().value(QStringLiteral("lastDocument")).toString(), QStringLiteral("example:polynomial"));
        QSettings().clear();
    }

    void panelsAreWired() {
        MainWindow window;
        auto* probe = new ProbePanel;
        QDockWidget* dock = window.addPanel(probe, QStringLiteral("Probe"), Qt::RightDockWidgetArea);
        QVERIFY(dock);
        auto* graph = new ProbePanel;
        window.setCentralGraph(graph);
        QSignalSpy states(&window, &MainWindow::stateChanged);
        window.openExample(QStringLiteral("sin_plus_exp"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 1, slow(30000));
        QCOMPARE(probe->states, 1);
        QCOMPARE(graph->states, 1);
        QCOMPARE(probe->text(), QStringLiteral("sin_plus_exp"));
        // Selection from one panel reaches the others and the text view.
        const QString root = QString::fromStdString(
            window.state()->module->entryComputation()->root()->name());
        emit graph->instructionSelected(root);
        QCOMPARE(probe->selected, root);
        QCOMPARE(window.textView()->selectedInstruction(), root);
        QVERIFY(window.showPanel(QStringLiteral("probe")));
        QVERIFY(window.showPanel(QStringLiteral("passes")));
        QVERIFY(window.showPanel(QStringLiteral("diff")));
        QVERIFY(!window.showPanel(QStringLiteral("nonexistent")));
    }

    // Every panel the window shows (its text, diff and passes views and the
    // standard panels) is in panels(), and each is handed every state.
    void everyPanelReceivesTheState() {
        MainWindow window;
        installStandardPanels(window);
        QList<DocumentPanel*> shown;
        for (QWidget* widget : window.findChildren<QWidget*>()) {
            auto* panel = dynamic_cast<DocumentPanel*>(widget);
            if (!panel) continue;
            // A panel inside another (the graph's before view) is fed by that one.
            bool nested = false;
            for (QWidget* p = widget->parentWidget(); p; p = p->parentWidget())
                nested = nested || dynamic_cast<DocumentPanel*>(p) != nullptr;
            if (!nested) shown.append(panel);
        }
        const QList<DocumentPanel*> listed = window.panels();
        // Text, diff, passes, graph, inspector, fusion, execution, estimator, kernels, XLA.
        QCOMPARE(listed.size(), 10);
        QCOMPARE(shown.size(), listed.size());
        for (DocumentPanel* panel : shown) QVERIFY(listed.contains(panel));
        for (DocumentPanel* panel : listed) QCOMPARE(window.deliveredGeneration(panel), -1);
        QSignalSpy states(&window, &MainWindow::stateChanged);
        window.openExample(QStringLiteral("sin_plus_exp"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 1, slow(30000));
        for (DocumentPanel* panel : listed)
            QCOMPARE(window.deliveredGeneration(panel), window.state()->generation);
        // The text view, on a tab not shown, loads the text when its tab is shown.
        QTabWidget* tabs = nullptr;
        for (QWidget* p = window.textView()->parentWidget(); p && !tabs; p = p->parentWidget())
            tabs = qobject_cast<QTabWidget*>(p);
        QVERIFY(tabs);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        tabs->setCurrentWidget(window.textView());
        QCOMPARE(window.textView()->toPlainText().toStdString(),
                 *window.state()->currentSnapshot()->text);
        // A panel added later gets the current state at once, then every new one.
        auto* late = new ProbePanel;
        window.addPanel(late, QStringLiteral("Late"));
        QCOMPARE(late->states, 1);
        QCOMPARE(window.deliveredGeneration(late), window.state()->generation);
        window.stepTo(1);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 2, slow(30000));
        QCOMPARE(late->states, 2);
        for (DocumentPanel* panel : window.panels())
            QCOMPARE(window.deliveredGeneration(panel), window.state()->generation);
        // A panel deleted while the window lives leaves the list.
        delete late;
        QCOMPARE(window.panels().size(), 10);
        QSettings().clear();
    }

    void exportText() {
        QTemporaryDir dir;
        MainWindow window;
        QSignalSpy states(&window, &MainWindow::stateChanged);
        QVERIFY(!window.exportCurrentText(dir.filePath(QStringLiteral("none.hlo"))));
        window.openExample(QStringLiteral("mlp"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 1, slow(30000));
        window.stepTo(1000);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 2, slow(60000));
        const QString out = dir.filePath(QStringLiteral("after.hlo"));
        QVERIFY(window.exportCurrentText(out));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll().toStdString(), *window.state()->currentSnapshot()->text);
        QVERIFY(!window.exportCurrentText(dir.filePath(QStringLiteral("no/such/dir/x.hlo"))));
        QVERIFY(!window.messageText().isEmpty());
    }

    void dropOpensFilesAndDumpFolders() {
        QTemporaryDir dir;
        QFile example(QStringLiteral(":/examples/layernorm.hlo"));
        QVERIFY(example.open(QIODevice::ReadOnly));
        const QByteArray text = example.readAll();
        const QString file = dir.filePath(QStringLiteral("ln.hlo"));
        QVERIFY(writeFile(file, text));
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("dump")));
        const QString dump = dir.filePath(QStringLiteral("dump"));
        QVERIFY(writeFile(dump + QStringLiteral("/module_0001.a.before_optimizations.txt"), text));
        QVERIFY(writeFile(dump + QStringLiteral("/module_0002.b.before_optimizations.txt"), text));
        MainWindow window;
        window.show();
        QSignalSpy states(&window, &MainWindow::stateChanged);
        auto drop = [&](const QString& path) {
            QMimeData mime;
            mime.setUrls({QUrl::fromLocalFile(path)});
            QDragEnterEvent enter(QPoint(20, 20), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&window, &enter);
            if (!enter.isAccepted()) return false;
            QDropEvent event(QPointF(20, 20), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&window, &event);
            return event.isAccepted();
        };
        QVERIFY(drop(file));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 1, slow(30000));
        QCOMPARE(window.state()->path, QFileInfo(file).absoluteFilePath().toStdString());
        QVERIFY(drop(dump));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 2, slow(30000));
        QCOMPARE(window.state()->moduleId, std::string("module_0001.a"));
        // File > Dump Modules lists the folder's modules and opens them.
        QMenu* dumpMenu = nullptr;
        for (QMenu* menu : window.findChildren<QMenu*>())
            if (menu->title().remove(QLatin1Char('&')) == QLatin1String("Dump Modules")) dumpMenu = menu;
        QVERIFY(dumpMenu);
        QVERIFY(dumpMenu->isEnabled());
        QCOMPARE(dumpMenu->actions().size(), 2);
        dumpMenu->actions()[1]->trigger();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 3, slow(30000));
        QCOMPARE(window.state()->moduleId, std::string("module_0002.b"));
        QSettings settings;
        QVERIFY(settings.value(QStringLiteral("lastDocument")).toString().startsWith(QLatin1String("dump:module_0002.b|")));
        settings.clear();
    }

    // The real window with every panel: each example opened and stepped
    // through every pass (the graph redrawn at each), selection, search, a
    // forced fusion, a decision row shown as a graph edge, a run with its
    // progress and heat map, and before/after.
    void standardPanelsEndToEnd() {
        MainWindow window;
        const StandardPanels panels = installStandardPanels(window);
        auto* graph = qobject_cast<GraphView*>(panels.graph);
        auto* fusion = qobject_cast<FusionExplorer*>(panels.fusion);
        auto* inspector = qobject_cast<InspectorWidget*>(panels.inspector);
        auto* execution = qobject_cast<ExecutionPanel*>(panels.execution);
        QVERIFY(graph && fusion && inspector && execution);
        window.resize(1400, 900);
        window.show();
        QSignalSpy states(&window, &MainWindow::stateChanged);
        int stepped = 0;
        for (const ExampleInfo& example : document_loader::examples()) {
            states.clear();
            window.openExample(example.name);
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(
                !states.isEmpty() && window.state()->displayName == example.name.toStdString(),
                slow(60000));
            const int passes = static_cast<int>(window.state()->passes.size());
            QVERIFY(passes > 5);
            // A sanitizer run steps through every pass of three small examples; the others go to
            // their last pass at once (each step waits for a layout, ten times slower there).
            const bool everyPass = !hloscope::testing::sanitizerRun() ||
                                   (!hloscope::testing::leftOutOfSanitizerRun(example.file) && stepped < 3);
            stepped += everyPass ? 1 : 0;
            for (int i = everyPass ? 1 : passes; i <= passes; ++i) {
                window.stepTo(i);
                HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->current == i, slow(60000));
                HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!graph->isLayoutPending(), slow(60000));
                QVERIFY2(graph->lastError().isEmpty(), qPrintable(graph->lastError()));
                QVERIFY(graph->visibleGraph());
            }
            HLOSCOPE_TRY_VERIFY(!window.isBusy());
        }

        // BERT at the fusion pass.
        window.openExample(QStringLiteral("bert_encoder_forward"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->displayName == "bert_encoder_forward",
                                 slow(60000));
        int fusionStep = -1;
        for (size_t i = 0; i < window.state()->passes.size(); ++i)
            if (window.state()->passes[i] == "fusion") fusionStep = static_cast<int>(i) + 1;
        QVERIFY(fusionStep > 0);
        window.stepTo(fusionStep);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(window.state()->current == fusionStep && !window.isBusy(),
                                 slow(60000));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!graph->isLayoutPending(), slow(60000));

        // Selecting a node in the graph reaches the inspector.
        const QString parameter =
            QString::fromStdString(window.state()->module->entryComputation()->parameter(0)->name());
        QSignalSpy selected(graph, &GraphView::instructionSelected);
        graph->graphScene()->nodeItem(parameter)->setSelected(true);
        QCOMPARE(selected.count(), 1);
        HLOSCOPE_TRY_COMPARE(inspector->currentInstruction(), parameter);
        // Search.
        QVERIFY(graph->search(QStringLiteral("fusion")) > 0);
        QVERIFY(graph->findNext());

        // A decision row: the graph highlights that pair's edge.
        QVERIFY(fusion->model()->rowCount() > 0);
        int fusedRow = -1;
        for (int r = 0; r < fusion->filter()->rowCount(); ++r) {
            const QModelIndex source = fusion->filter()->mapToSource(fusion->filter()->index(r, 0));
            if (fusion->model()->row(source.row()).decision.reason == "fused") fusedRow = r;
        }
        QVERIFY(fusedRow >= 0);
        fusion->table()->selectionModel()->setCurrentIndex(fusion->filter()->index(fusedRow, 0),
                                                           QItemSelectionModel::ClearAndSelect |
                                                               QItemSelectionModel::Rows);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(graph->graphScene()->highlightedEdge() != nullptr, slow(30000));

        // Forcing a refused pair re-runs the pipeline with it.
        const PassDecision* refused = nullptr;
        for (const PassDecision& d : window.state()->currentSnapshot()->decisions)
            if (d.reason != "fused" && !d.producer.empty() && !d.consumer.empty()) refused = &d;
        QVERIFY(refused);
        const std::string pair = refused->producer + ":" + refused->consumer;
        states.clear();
        fusion->forcePair(QString::fromStdString(refused->producer), QString::fromStdString(refused->consumer));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(
            !states.isEmpty() && window.state()->forceFusion.find(pair) != std::string::npos,
            slow(60000));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!window.isBusy() && window.state()->current == fusionStep,
                                 slow(60000));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!graph->isLayoutPending(), slow(60000));

        // A run on the interpreter: progress, a passing check, a heat map. BERT's three
        // interpreter runs take 30 s in a release build: a sanitizer run runs the MLP instead.
        if (hloscope::testing::sanitizerRun()) {
            states.clear();
            window.openExample(QStringLiteral("mlp"));
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!states.isEmpty() && window.state()->displayName == "mlp", slow(60000));
            window.stepTo(static_cast<int>(window.state()->passes.size()));
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!window.isBusy() && window.state()->current > 1, slow(60000));
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!graph->isLayoutPending(), slow(60000));
        }
        QSignalSpy progress(execution, &ExecutionPanel::progressChanged);
        QSignalSpy finished(execution, &ExecutionPanel::runFinished);
        execution->setMode(ExecutionPanel::Mode::kBoth);
        execution->deviceCombo()->setCurrentIndex(execution->deviceCombo()->findData(QStringLiteral("interpreter")));
        execution->run();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, slow(120000));
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QVERIFY(progress.count() >= 2);
        QCOMPARE(progress.last().at(0).toInt(), 100);
        QVERIFY(graph->heatItemCount() > 0);

        // Before/after from the View menu.
        QAction* compare = window.findChild<QAction*>(QStringLiteral("compareAction"));
        QVERIFY(compare);
        compare->trigger();
        QVERIFY(graph->compareMode());
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(graph->beforeView()->visibleGraph() != nullptr &&
                                     !graph->beforeView()->isLayoutPending(),
                                 slow(60000));
        compare->trigger();
        QVERIFY(!graph->compareMode());
        QVERIFY(window.findChild<QAction*>(QStringLiteral("exportGraphAction")));
        QVERIFY(window.findChild<QAction*>(QStringLiteral("exportReportAction")));
    }

    // File → Capture From Program: the program runs with XLA's dump flags, its output shows,
    // and the largest module it dumped opens.
    void captureFromProgram() {
#ifdef HLOSCOPE_TSAN
        QSKIP("TSan cannot follow QProcess's clone; the capture is tested in the other builds");
#endif
        MainWindow window;
        QSignalSpy states(&window, &MainWindow::stateChanged);
        CaptureDialog* dialog = window.captureFromProgram(
            QStringLiteral("sh \"" HLOSCOPE_SOURCE_DIR "/tests/data/fake_xla_program.sh\""), true);
        QVERIFY(dialog);
        QSignalSpy captured(dialog, &CaptureDialog::captured);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(captured.count() == 1, slow(30000));
        QVERIFY(dialog->output().contains(QLatin1String("step 1: loss")));
        QVERIFY(dialog->output().contains(QLatin1String("--xla_dump_to=")));
        QCOMPARE(captured.at(0).at(1).toString(), QStringLiteral("module_0001.jit_mlp"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!states.isEmpty() && window.state() &&
                                     window.state()->moduleId == "module_0001.jit_mlp",
                                 slow(30000));
        QDir(dialog->folder()).removeRecursively();
        // A program that fails says so and opens nothing.
        QSignalSpy failed(dialog, &CaptureDialog::failed);
        dialog->setCommand(QStringLiteral("sh -c \"exit 4\""));
        dialog->start();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, slow(30000));
        QVERIFY(failed.at(0).at(0).toString().contains(QLatin1String("exited with 4")));
        QDir(dialog->folder()).removeRecursively();
        QSettings().clear();
    }

    void screenshotCommandLine() {
#ifdef HLOSCOPE_TSAN
        // TSan's runtime stops on Qt's process start (forkfd's clone): "CHECK failed ...
        // ForkAfter". The child would run uninstrumented work only.
        QSKIP(
            "TSan cannot follow QProcess's clone; the command line is tested in the other builds");
#endif
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("shot.png"));
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
        process.setProcessEnvironment(env);
        process.start(QStringLiteral(HLOSCOPE_GUI_PATH),
                      {QStringLiteral("--example"), QStringLiteral("mlp"), QStringLiteral("--target"),
                       QStringLiteral("h100"), QStringLiteral("--step"), QStringLiteral("11"),
                       QStringLiteral("--panel"), QStringLiteral("diff"), QStringLiteral("--screenshot"), png});
        QVERIFY(process.waitForFinished(120000));
        const QByteArray errors = process.readAllStandardError();
        QVERIFY2(process.exitCode() == 0, errors.constData());
        // The time to first paint, for the benchmarks (docs/performance.md).
        QVERIFY2(QRegularExpression(QStringLiteral("hloscope: graph drawn \\d+ ms after start"))
                     .match(QString::fromUtf8(errors))
                     .hasMatch(),
                 errors.constData());
        QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(1400, 900));
        // Not a blank image.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
        QVERIFY(colours.size() > 10);

        // --version and --help need no display: no platform plugin, no DISPLAY.
        QProcessEnvironment bare = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"}) bare.remove(QLatin1String(name));
        QProcess version;
        version.setProcessEnvironment(bare);
        version.start(QStringLiteral(HLOSCOPE_GUI_PATH), {QStringLiteral("--version")});
        QVERIFY(version.waitForFinished(30000));
        QCOMPARE(version.exitStatus(), QProcess::NormalExit);
        QCOMPARE(version.exitCode(), 0);
        QVERIFY(version.readAllStandardOutput().contains("hloscope"));
        QProcess help;
        help.setProcessEnvironment(bare);
        help.start(QStringLiteral(HLOSCOPE_GUI_PATH), {QStringLiteral("--help")});
        QVERIFY(help.waitForFinished(30000));
        QCOMPARE(help.exitStatus(), QProcess::NormalExit);
        QCOMPARE(help.exitCode(), 0);
        QVERIFY(help.readAllStandardOutput().contains("--screenshot"));
        QProcess bad;
        bad.setProcessEnvironment(env);
        bad.start(QStringLiteral(HLOSCOPE_GUI_PATH), {QStringLiteral("--target"), QStringLiteral("z80")});
        QVERIFY(bad.waitForFinished(30000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("z80"));
    }

private:
    QTemporaryDir m_settingsDir;
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
