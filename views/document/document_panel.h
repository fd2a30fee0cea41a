// DocumentPanel: a view that shows the document. Each DocumentState the
// document worker emits reaches every panel through setState; MainWindow
// keeps the panels it docks or shows centrally in a list and calls setState
// on each directly (MainWindow::addPanel and setCentralGraph take only
// widgets that derive from DocumentPanel, so an unwired panel does not
// compile).
//
// Not a QObject: a panel derives from its Qt widget class first and from
// DocumentPanel second, and declares its override as a slot so that signal
// connections to it keep working:
//   class InspectorWidget : public QWidget, public DocumentPanel {
//       Q_OBJECT
//   public slots:
//       void setState(hloscope::DocumentStatePtr state) override;
//   };
#pragma once

#include <concepts>

#include "views/document/document_state.h"

class QWidget;

namespace hloscope {

class DocumentPanel {
public:
    virtual ~DocumentPanel() = default;
    // Shows `state`.
    virtual void setState(hloscope::DocumentStatePtr state) = 0;

protected:
    DocumentPanel() = default;
    DocumentPanel(const DocumentPanel&) = default;
    DocumentPanel& operator=(const DocumentPanel&) = default;
};

// A widget that is a DocumentPanel: what MainWindow docks.
template <typename T>
concept DocumentPanelWidget = std::derived_from<T, QWidget> && std::derived_from<T, DocumentPanel>;

}  // namespace hloscope
