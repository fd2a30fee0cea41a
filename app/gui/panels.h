// The standard panels of the main window: fusion explorer, inspector,
// execution, estimator, kernel table and XLA vs hloscope (and, once present, the graph view), created and
// connected to each other. MainWindow hands each panel the document's
// states (DocumentPanel::setState) and wires selection / what-if itself;
// what is connected here is panel to panel (measured times into the
// inspector and estimator, graph edges into the fusion explorer).
#pragma once

class QWidget;

namespace hloscope {

class MainWindow;

struct StandardPanels {
    QWidget* graph = nullptr;
    QWidget* fusion = nullptr;
    QWidget* inspector = nullptr;
    QWidget* execution = nullptr;
    QWidget* estimator = nullptr;
    QWidget* kernels = nullptr;
    QWidget* xla = nullptr;
};

StandardPanels installStandardPanels(MainWindow& window);

}  // namespace hloscope
