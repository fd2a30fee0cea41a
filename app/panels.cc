#include "app/panels.h"

#include <QDockWidget>
#include <algorithm>

#include "app/main_window.h"
#include "views/estimator/estimator_panel.h"
#include "views/execution/execution_panel.h"
#include "views/fusion/fusion_explorer.h"
#include "views/inspector/inspector_widget.h"

namespace hloscope {

StandardPanels installStandardPanels(MainWindow& window) {
    StandardPanels panels;
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
    // The graph and text keep most of the height; the bottom tabs a third.
    window.resizeDocks({fusionDock}, {std::max(220, window.height() / 3)}, Qt::Vertical);
    QObject::connect(execution, &ExecutionPanel::measuredTimes, inspector,
                     &InspectorWidget::setMeasuredTimes);
    QObject::connect(execution, &ExecutionPanel::measurementsReady, estimator,
                     &EstimatorPanel::setMeasurements);
    panels.fusion = fusion;
    panels.inspector = inspector;
    panels.execution = execution;
    panels.estimator = estimator;
    window.restoreDockLayout();
    return panels;
}

}  // namespace hloscope
