#include "app/panels.h"

#include <QDockWidget>
#include <QSettings>
#include <QTimer>
#include <algorithm>

#include "app/main_window.h"
#include "views/estimator/estimator_panel.h"
#include "views/execution/execution_panel.h"
#include "views/fusion/fusion_explorer.h"
#include "views/graph/graph_view.h"
#include "views/inspector/inspector_widget.h"

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
    fusion->setObjectName(QStringLiteral("fusion"));
    inspector->setObjectName(QStringLiteral("inspector"));
    execution->setObjectName(QStringLiteral("execution"));
    estimator->setObjectName(QStringLiteral("estimator"));
    window.addPanel(inspector, QObject::tr("Inspector"), Qt::RightDockWidgetArea);
    QDockWidget* fusionDock = window.addPanel(fusion, QObject::tr("Fusion"), Qt::BottomDockWidgetArea);
    QDockWidget* executionDock =
        window.addPanel(execution, QObject::tr("Execution"), Qt::BottomDockWidgetArea);
    QDockWidget* estimatorDock =
        window.addPanel(estimator, QObject::tr("Estimator"), Qt::BottomDockWidgetArea);
    window.tabifyDockWidget(fusionDock, executionDock);
    window.tabifyDockWidget(executionDock, estimatorDock);
    fusionDock->raise();
    // The graph and text keep most of the height, the bottom tabs a third
    // (once the window has its size; a saved layout restored below wins).
    if (QSettings().value(QStringLiteral("window/state")).isNull())
        QTimer::singleShot(0, &window, [&window, fusionDock] {
            window.resizeDocks({fusionDock}, {std::max(200, window.height() / 3)}, Qt::Vertical);
        });
    QObject::connect(execution, &ExecutionPanel::measuredTimes, inspector,
                     &InspectorWidget::setMeasuredTimes);
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
    panels.fusion = fusion;
    panels.inspector = inspector;
    panels.execution = execution;
    panels.estimator = estimator;
    window.restoreDockLayout();
    return panels;
}

}  // namespace hloscope
