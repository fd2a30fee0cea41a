#include "app/gui/panels.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QMessageBox>
#include <QStatusBar>
#include <QSettings>
#include <QTimer>
#include <algorithm>
#include <functional>

#include "app/gui/main_window.h"
#include "compiler/backends/cpu/cpu_calibration.h"
#include "views/estimator/estimator_panel.h"
#include "views/execution/execution_panel.h"
#include "views/fusion/fusion_explorer.h"
#include "views/graph/graph_view.h"
#include "views/inspector/inspector_widget.h"
#include "views/kernels/kernel_table.h"
#include "views/xla/xla_comparison_panel.h"

namespace hloscope {

StandardPanels installStandardPanels(MainWindow& window) {
    StandardPanels panels;
    auto* graph = new GraphView;
    graph->setObjectName(QStringLiteral("graph"));
    window.setCentralGraph(graph);
    panels.graph = graph;
    auto* fusion = new FusionExplorer;
    auto* inspector = new InspectorWidget;
    auto* execution = new ExecutionPanel;
    auto* estimator = new EstimatorPanel;
    auto* kernels = new KernelTablePanel;
    kernels->setObjectName(QStringLiteral("kernels"));
    panels.kernels = kernels;
    fusion->setObjectName(QStringLiteral("fusion"));
    inspector->setObjectName(QStringLiteral("inspector"));
    execution->setObjectName(QStringLiteral("execution"));
    estimator->setObjectName(QStringLiteral("estimator"));
    estimator->setCalibrator([](const std::function<void(const std::string&, int, int)>& progress,
                                const std::atomic<bool>* cancel) -> Status {
        CpuCalibrationOptions options;
        options.progress = progress;
        options.cancel = cancel;
        HLO_ASSIGN_OR_RETURN(CpuCalibration calibration, calibrateCpu(options));
        return cacheCpuCalibration(calibration.target).status();
    });
    window.addPanel(inspector, QObject::tr("Inspector"), Qt::RightDockWidgetArea);
    QDockWidget* fusionDock = window.addPanel(fusion, QObject::tr("Fusion"), Qt::BottomDockWidgetArea);
    QDockWidget* executionDock =
        window.addPanel(execution, QObject::tr("Execution"), Qt::BottomDockWidgetArea);
    QDockWidget* estimatorDock =
        window.addPanel(estimator, QObject::tr("Estimator"), Qt::BottomDockWidgetArea);
    window.tabifyDockWidget(fusionDock, executionDock);
    QDockWidget* kernelsDock = window.addPanel(kernels, QObject::tr("Kernels"), Qt::BottomDockWidgetArea);
    auto* xla = new XlaComparisonPanel;
    xla->setObjectName(QStringLiteral("xla"));
    panels.xla = xla;
    QDockWidget* xlaDock = window.addPanel(xla, QObject::tr("XLA vs hloscope"), Qt::BottomDockWidgetArea);
    window.tabifyDockWidget(executionDock, estimatorDock);
    window.tabifyDockWidget(estimatorDock, kernelsDock);
    window.tabifyDockWidget(kernelsDock, xlaDock);
    QObject::connect(xla, &XlaComparisonPanel::pairSelected, graph, &GraphView::highlightEdge);
    fusionDock->raise();
    // The graph and text keep most of the height, the bottom tabs a third
    // (once the window has its size; a saved layout restored below wins).
    if (QSettings().value(QStringLiteral("window/state")).isNull())
        QTimer::singleShot(0, &window, [&window, fusionDock] {
            window.resizeDocks({fusionDock}, {std::max(200, window.height() / 3)}, Qt::Vertical);
        });
    QObject::connect(execution, &ExecutionPanel::measuredTimes, inspector,
                     &InspectorWidget::setMeasuredTimes);
    // Measured times as a heat map on the graph; the explorer's chosen pair as its edge.
    QObject::connect(execution, &ExecutionPanel::measuredTimes, kernels, &KernelTablePanel::setMeasuredTimes);
    QObject::connect(execution, &ExecutionPanel::measuredOn, graph, &GraphView::setMeasuredDevice);
    QObject::connect(execution, &ExecutionPanel::measuredTimes, graph, &GraphView::setMeasuredTimes);
    QObject::connect(fusion, &FusionExplorer::decisionSelected, graph, &GraphView::highlightEdge);
    QObject::connect(execution, &ExecutionPanel::measurementsReady, estimator,
                     &EstimatorPanel::setMeasurements);
    // A graph edge's context menu: "Why not fused?", "Force fuse", "Forbid fuse".
    QObject::connect(graph, &GraphView::whyNotFusedRequested, fusion,
                     [&window, fusion](const QString& producer, const QString& consumer) {
                         window.showPanel(QStringLiteral("Fusion"));
                         fusion->explainPair(producer, consumer);
                     });
    QObject::connect(graph, &GraphView::forceFusionRequested, fusion, &FusionExplorer::forcePair);
    QObject::connect(graph, &GraphView::forbidFusionRequested, fusion, &FusionExplorer::forbidPair);
    // File: graph image and estimator report; View: before/after.
    auto addExport = [&window](const QString& title, const QString& name, const QString& suggested,
                               const QString& filter, std::function<bool(const QString&, QString*)> write) {
        auto* action = new QAction(title, &window);
        action->setObjectName(name);
        QObject::connect(action, &QAction::triggered, &window, [&window, title, suggested, filter, write] {
            const QString caption = QString(title).remove(QLatin1Char('&')).remove(QStringLiteral("..."));
            const QString path = QFileDialog::getSaveFileName(&window, caption, suggested, filter);
            if (path.isEmpty()) return;
            QString error;
            if (!write(path, &error)) QMessageBox::warning(&window, caption, error);
            else window.statusBar()->showMessage(QObject::tr("Written: %1").arg(path), 5000);
        });
        window.addExportAction(action);
        return action;
    };
    addExport(QObject::tr("Export &Graph Image..."), QStringLiteral("exportGraphAction"), QStringLiteral("graph.png"),
              QObject::tr("PNG image (*.png);;SVG drawing (*.svg)"),
              [graph](const QString& path, QString* error) { return graph->exportImage(path, error); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    addExport(QObject::tr("Export Estimator &Report..."), QStringLiteral("exportReportAction"),
              QStringLiteral("report.html"), QObject::tr("HTML report (*.html)"),
              [estimator](const QString& path, QString* error) { return estimator->exportHtml(path, error); });
    auto* compare = new QAction(QObject::tr("&Before/After Side by Side"), &window);
    compare->setObjectName(QStringLiteral("compareAction"));
    compare->setCheckable(true);
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    QObject::connect(compare, &QAction::toggled, graph, &GraphView::setCompareMode);
    QObject::connect(graph, &GraphView::compareModeChanged, compare, &QAction::setChecked);
    window.addViewAction(compare);
    panels.fusion = fusion;
    panels.inspector = inspector;
    panels.execution = execution;
    panels.estimator = estimator;
    window.restoreDockLayout();
    return panels;
}

}  // namespace hloscope
