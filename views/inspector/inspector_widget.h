// InspectorWidget: everything about the selected instruction of the state's
// module: opcode, name, shape, layout (minor-to-major, tiles, with a tiling
// drawing and padded size for tiled layouts), operands and users as links
// (a click selects them and emits instructionSelected), metadata (op_name,
// source_file:line), attributes, cost analysis figures, the performance
// model's predicted time on the state's target, and the measured time when
// the execution panel reported one (setMeasuredTimes).
#pragma once

#include <QHash>
#include <QString>
#include <QWidget>

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/targets/target_description.h"
#include "views/document/document_panel.h"
#include "views/document/document_state.h"

class QLabel;
class QTextBrowser;

namespace hloscope {

class TilingDiagram;

class InspectorWidget : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    explicit InspectorWidget(QWidget* parent = nullptr);

    QString currentInstruction() const { return m_current; }
    // The properties as plain text (what the browser shows).
    QString propertiesText() const;
    QString propertiesHtml() const { return m_html; }
    TilingDiagram* tilingDiagram() const { return m_tiling; }
    QTextBrowser* browser() const { return m_browser; }
    // Follows a link of the properties ("inst:NAME"), as a click does.
    void activateLink(const QUrl& url);

public slots:
    void setState(hloscope::DocumentStatePtr state) override;
    void selectInstruction(const QString& name);
    // Instruction name -> measured seconds (the execution panel's last run).
    void setMeasuredTimes(const QHash<QString, double>& seconds);

signals:
    void instructionSelected(const QString& name);

private:
    void refresh();

    DocumentStatePtr m_state;
    std::unordered_map<std::string, const HloInstruction*> m_byName;
    std::unordered_set<const HloComputation*> m_fusedComputations;
    std::optional<TargetDescription> m_target;
    QString m_targetError;
    QString m_current;
    QString m_html;
    QHash<QString, double> m_measured;
    QLabel* m_title = nullptr;
    QTextBrowser* m_browser = nullptr;
    TilingDiagram* m_tiling = nullptr;
};

}  // namespace hloscope
