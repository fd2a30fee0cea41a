#include "views/inspector/inspector_widget.h"

#include <QLabel>
#include <QTextBrowser>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>

#include "compiler/cost/cost_analysis.h"
#include "compiler/cost/performance_model.h"
#include "compiler/layout/tpu_tiling.h"
#include "core/text/hlo_printer.h"
#include "views/inspector/tiling_diagram.h"
#include "views/model/model_figures.h"
#include "views/model/seconds_text.h"

namespace hloscope {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
QString esc(const QString& s) { return s.toHtmlEscaped(); }

QString link(const HloInstruction& instruction) {
    const QString name = q(instruction.name());
    return QStringLiteral("<a href=\"inst:%1\">%%2</a> <span style=\"color:gray\">%3</span>")
        .arg(QString::fromLatin1(QUrl::toPercentEncoding(name)), esc(name),
             esc(q(instruction.shape().toString(false))));
}

QString row(const QString& key, const QString& value) {
    return QStringLiteral("<tr><td style=\"padding-right:12px;color:#555\">%1</td><td>%2</td></tr>")
        .arg(esc(key), value);
}

QString number(double value) {
    if (value >= 1e12) return QString::number(value / 1e12, 'f', 2) + QStringLiteral(" T");
    if (value >= 1e9) return QString::number(value / 1e9, 'f', 2) + QStringLiteral(" G");
    if (value >= 1e6) return QString::number(value / 1e6, 'f', 2) + QStringLiteral(" M");
    if (value >= 1e3) return QString::number(value / 1e3, 'f', 2) + QStringLiteral(" k");
    return QString::number(value, 'g', 6);
}

}  // namespace

InspectorWidget::InspectorWidget(QWidget* parent) : QWidget(parent) {
    m_title = new QLabel(tr("No instruction selected."), this);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_browser = new QTextBrowser(this);
    m_browser->setOpenLinks(false);
    m_browser->setOpenExternalLinks(false);
    m_tiling = new TilingDiagram(this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_tiling);
    layout->addWidget(m_browser, 1);
    connect(m_browser, &QTextBrowser::anchorClicked, this, &InspectorWidget::activateLink);
}

QString InspectorWidget::propertiesText() const { return m_browser->toPlainText(); }

void InspectorWidget::activateLink(const QUrl& url) {
    if (url.scheme() != QStringLiteral("inst")) return;
    const QString name = url.path(QUrl::FullyDecoded);
    if (name.isEmpty()) return;
    selectInstruction(name);
    emit instructionSelected(name);
}

void InspectorWidget::setState(DocumentStatePtr state) {
    const std::string previousTarget = m_state ? m_state->target : std::string("\x01");
    m_state = std::move(state);
    m_byName.clear();
    m_fusedComputations.clear();
    if (m_state && m_state->module)
        for (const auto& computation : m_state->module->computations())
            for (const auto& instruction : computation->instructions())
            {
                m_byName.emplace(instruction->name(), instruction.get());
                if (instruction->opcode() == HloOpcode::kFusion && instruction->fusedComputation())
                    m_fusedComputations.insert(instruction->fusedComputation());
            }
    if (m_state && m_state->target != previousTarget) {
        m_target.reset();
        m_targetError.clear();
        StatusOr<TargetDescription> target = targetForName(m_state->target);
        if (target.isOk()) m_target = std::move(*target);
        else m_targetError = q(target.status().message());
    }
    refresh();
}

void InspectorWidget::selectInstruction(const QString& name) {
    m_current = name;
    refresh();
}

void InspectorWidget::setMeasuredTimes(const QHash<QString, double>& seconds) {
    m_measured = seconds;
    refresh();
}

void InspectorWidget::refresh() {
    const auto it = m_current.isEmpty() ? m_byName.end() : m_byName.find(m_current.toStdString());
    if (it == m_byName.end()) {
        m_title->setText(m_current.isEmpty() ? tr("No instruction selected.")
                         : !m_state             ? tr("No document.")
                                                : tr("%%1 is not in this module state.").arg(m_current));
        m_tiling->clear();
        m_html.clear();
        m_browser->clear();
        return;
    }
    const HloInstruction& instruction = *it->second;
    const Shape& shape = instruction.shape();
    m_title->setText(QStringLiteral("<b>%%1</b> = %2").arg(esc(m_current), esc(q(hloOpcodeString(instruction.opcode())))));

    QString html = QStringLiteral("<table>");
    html += row(tr("Opcode"), esc(q(hloOpcodeString(instruction.opcode()))));
    html += row(tr("Name"), QStringLiteral("%") + esc(m_current));
    if (instruction.parent()) html += row(tr("Computation"), esc(q(instruction.parent()->name())));
    html += row(tr("Shape"), esc(q(shape.toString(false))));
    if (shape.isArray() && shape.hasLayout()) {
        const Layout& layout = shape.layout();
        QStringList m2m;
        for (int64_t d : layout.minorToMajor()) m2m << QString::number(d);
        html += row(tr("Layout"), esc(q(layout.toString())));
        html += row(tr("Minor-to-major"), QStringLiteral("{") + m2m.join(u',') + QStringLiteral("}"));
        QStringList tiles;
        for (const Tile& tile : layout.tiles()) tiles << QStringLiteral("T") + q(tile.toString());
        html += row(tr("Tiles"), tiles.isEmpty() ? tr("none") : esc(tiles.join(QString())));
    }
    if (shape.isArray() || shape.isTuple()) {
        const int64_t logical = logicalSizeInBytes(shape), padded = paddedSizeInBytes(shape);
        html += row(tr("Bytes"), padded != logical ? tr("%1 logical, %2 padded (tiled layout)").arg(logical).arg(padded)
                                                   : QString::number(logical));
    }
    if (instruction.opcode() == HloOpcode::kFusion) {
        html += row(tr("Fusion kind"), esc(q(instruction.fusionKind())));
        if (const HloComputation* fused = instruction.fusedComputation())
            html += row(tr("Fused instructions"), QString::number(fused->instructions().size()) +
                                                       QStringLiteral(" in ") + esc(q(fused->name())));
    }
    html += QStringLiteral("</table>");

    // The first kListed operands and users (a model's root tuple has thousands; laying out one
    // line each would hold the window up at every selection).
    constexpr size_t kListed = 200;
    auto more = [&](size_t total) {
        return total > kListed ? tr("… and %1 more (the Text tab lists them all)<br>").arg(total - kListed)
                               : QString();
    };
    const size_t operands = instruction.operands().size();
    html += QStringLiteral("<h4>%1 (%2)</h4>").arg(tr("Operands")).arg(operands);
    for (size_t i = 0; i < operands && i < kListed; ++i)
        html += QStringLiteral("%1: %2<br>").arg(i).arg(link(*instruction.operands()[i]));
    html += more(operands);
    const size_t users = instruction.users().size();
    html += QStringLiteral("<h4>%1 (%2)</h4>").arg(tr("Users")).arg(users);
    for (size_t i = 0; i < users && i < kListed; ++i)
        html += link(*instruction.users()[i]) + QStringLiteral("<br>");
    html += more(users);

    html += QStringLiteral("<h4>%1</h4><table>").arg(tr("Metadata"));
    const std::string opType = instruction.metadataField("op_type");
    const std::string opName = instruction.metadataField("op_name");
    const std::string file = instruction.metadataField("source_file");
    const std::string line = instruction.metadataField("source_line");
    if (!opType.empty()) html += row(tr("op_type"), esc(q(opType)));
    if (!opName.empty()) html += row(tr("op_name"), esc(q(opName)));
    if (!file.empty()) html += row(tr("source"), esc(q(file) + (line.empty() ? QString() : u':' + q(line))));
    if (opType.empty() && opName.empty() && file.empty()) html += row(tr("metadata"), tr("none"));
    html += QStringLiteral("</table>");

    html += QStringLiteral("<h4>%1</h4><table>").arg(tr("Attributes"));
    for (const HloAttribute& attribute : instruction.attributes())
        html += row(q(attribute.name), esc(q(attribute.value).left(400)));
    HloPrintOptions printOptions = HloPrintOptions::compact();
    const QString text = q(printInstruction(instruction, printOptions));
    html += row(tr("HLO"), QStringLiteral("<code>%1</code>").arg(esc(text.left(2000))));
    html += QStringLiteral("</table>");

    html += QStringLiteral("<h4>%1</h4><table>").arg(tr("Cost (cost analysis)"));
    const bool insideFusion = m_fusedComputations.count(instruction.parent()) != 0;
    const InstructionCost cost = CostAnalysis::of(instruction);
    html += row(tr("flops"), number(cost.flops));
    html += row(tr("transcendentals"), number(cost.transcendentals));
    html += row(tr("bytes read"), number(cost.bytesRead) + QStringLiteral("B"));
    html += row(tr("bytes written"), number(cost.bytesWritten) + QStringLiteral("B"));
    html += row(tr("op class"), esc(q(opClassName(CostAnalysis::opClassOf(instruction)))));
    html += QStringLiteral("</table>");

    html += QStringLiteral("<h4>%1</h4><table>").arg(tr("Time"));
    if (m_target) {
        const QString target = esc(q(m_target->name));
        if (insideFusion) {
            html += row(tr("predicted (%1)").arg(target), tr("part of a fused kernel: see the fusion instruction"));
        } else if (CostAnalysis::isFree(instruction)) {
            html += row(tr("predicted (%1)").arg(target), tr("no kernel (free)"));
        } else {
            const KernelPrediction p = predictKernelDetailed(instruction, *m_target);
            html += row(tr("predicted (%1)").arg(target),
                        tr("%1, %2-bound (compute %3, memory %4, launch %5)")
                            .arg(secondsText(p.totalSeconds), esc(q(p.boundBy)),
                                 secondsText(p.computeSeconds),
                                 secondsText(p.memorySeconds),
                                 secondsText(p.launchSeconds)));
        }
    } else {
        html += row(tr("predicted"), tr("performance model unavailable: %1").arg(esc(m_targetError)));
    }
    const auto measured = m_measured.constFind(m_current);
    html += row(tr("measured"), measured != m_measured.constEnd()
                                    ? secondsText(*measured) + tr(" (execution panel's last run)")
                                    : tr("not measured (run it in the execution panel)"));
    html += QStringLiteral("</table>");

    m_html = html;
    m_browser->setHtml(html);
    if (m_tiling->setShape(shape)) m_tiling->setToolTip(m_tiling->caption());
}

}  // namespace hloscope
