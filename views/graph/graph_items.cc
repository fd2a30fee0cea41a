#include "views/graph/graph_items.h"

#include "core/support/human_format.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>
#include <QtMath>
#include <algorithm>
#include <cmath>

namespace hloscope {
namespace {

QColor textColor(bool dark) { return dark ? QColor(235, 235, 235) : QColor(20, 20, 20); }
QColor lineColor(bool dark) { return dark ? QColor(170, 170, 170) : QColor(90, 90, 90); }
const QColor kAdded(40, 170, 60);
const QColor kReplaced(240, 140, 0);
const QColor kFused(200, 40, 200);
const QColor kLayout(40, 110, 240);
const QColor kHighlight(255, 200, 0);
const QColor kSelected(0, 120, 215);
const QColor kRemoved(200, 40, 40);

double levelOfDetail(const QStyleOptionGraphicsItem* option, QPainter* painter) {
    return option->levelOfDetailFromTransform(painter->worldTransform());
}

}  // namespace

QColor heatColor(double fraction, bool dark) {
    fraction = std::clamp(fraction, 0.0, 1.0);
    // Three stops: pale yellow, orange, deep red.
    const QColor stops[3] = {dark ? QColor(110, 100, 40) : QColor(255, 243, 190), QColor(245, 140, 40),
                             QColor(190, 20, 30)};
    const double x = fraction * 2;
    const int i = std::min(static_cast<int>(x), 1);
    const double t = x - i;
    auto mix = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
    return QColor(mix(stops[i].red(), stops[i + 1].red()), mix(stops[i].green(), stops[i + 1].green()),
                  mix(stops[i].blue(), stops[i + 1].blue()));
}

// --- nodes ---------------------------------------------------------------------

GraphNodeItem::GraphNodeItem(const GraphNode& node, const QRectF& rect, bool dark)
    : m_node(node), m_rect(-rect.width() / 2, -rect.height() / 2, rect.width(), rect.height()),
      m_dark(dark) {
    setPos(rect.center());
    setFlag(ItemIsSelectable, true);
    setZValue(2);
    setToolTip(QStringLiteral("%1\n%2\n%3").arg(node.title, node.subtitle, node.shape));
    setCacheMode(NoCache);
}

QRectF GraphNodeItem::boundingRect() const {
    return m_rect.adjusted(-6, m_heat >= 0 ? -22 : -6, 6, 6);  // room for the time's tab
}

QPainterPath GraphNodeItem::outline() const {
    QPainterPath path;
    switch (m_node.category) {
        case NodeCategory::kParameter: path.addEllipse(m_rect); break;
        case NodeCategory::kConstant: {
            const double inset = std::min(m_rect.height() / 2, m_rect.width() / 4);
            QPolygonF hexagon;
            hexagon << QPointF(m_rect.left() + inset, m_rect.top())
                    << QPointF(m_rect.right() - inset, m_rect.top())
                    << QPointF(m_rect.right(), m_rect.center().y())
                    << QPointF(m_rect.right() - inset, m_rect.bottom())
                    << QPointF(m_rect.left() + inset, m_rect.bottom())
                    << QPointF(m_rect.left(), m_rect.center().y());
            hexagon << hexagon.front();
            path.addPolygon(hexagon);
            break;
        }
        default: path.addRoundedRect(m_rect, 6, 6); break;
    }
    return path;
}

QPainterPath GraphNodeItem::shape() const { return outline(); }

void GraphNodeItem::setShowShape(bool show) {
    if (m_showShape == show) return;
    m_showShape = show;
    update();
}

void GraphNodeItem::setHighlighted(bool on) {
    if (m_highlighted == on) return;
    m_highlighted = on;
    update();
}

void GraphNodeItem::setCues(unsigned cues) {
    if (m_cues == cues) return;
    m_cues = cues;
    update();
}

void GraphNodeItem::setHeat(double fraction, const QString& text) {
    if (m_heat == fraction && m_heatText == text) return;
    if ((m_heat >= 0) != (fraction >= 0)) prepareGeometryChange();
    m_heat = fraction;
    m_heatText = text;
    QString tip = QStringLiteral("%1\n%2\n%3").arg(m_node.title, m_node.subtitle, m_node.shape);
    if (fraction >= 0) tip += QStringLiteral("\nmeasured: %1").arg(text);
    setToolTip(tip);
    update();
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const double lod = levelOfDetail(option, painter);
    const QColor fill = m_heat >= 0 ? heatColor(m_heat, m_dark) : nodeCategoryColor(m_node.category, m_dark);
    QPen pen(lineColor(m_dark), 1);
    if (m_node.expandable) pen.setWidthF(2);
    if (m_cues & kCueShapeChanged) pen = QPen(kLayout, 2.5);
    if (m_cues & kCueReplaced) pen = QPen(kReplaced, 3);
    if (m_cues & kCueAdded) pen = QPen(kAdded, 3);
    if (m_cues & kCueFusedInto) pen = QPen(kFused, 3.5);
    if (m_cues & kCueRemoved) pen = QPen(kRemoved, 3, Qt::DashLine);
    if (isSelected()) pen = QPen(kSelected, 3.5);
    if (m_highlighted) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(kHighlight);
        painter->drawRoundedRect(m_rect.adjusted(-5, -5, 5, 5), 9, 9);
    }
    painter->setPen(pen);
    painter->setBrush(fill);
    if (lod < 0.15) {  // a few pixels: a plain box is enough
        painter->drawRect(m_rect);
        return;
    }
    if (m_node.category == NodeCategory::kGroup) {  // a stack of cards
        painter->drawRoundedRect(m_rect.translated(4, -4), 6, 6);
    }
    painter->drawPath(outline());
    if (m_cues & kCueLayoutChanged) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(kLayout);
        const QRectF badge(m_rect.right() - 9, m_rect.top() - 5, 12, 12);
        painter->drawEllipse(badge);
        if (lod >= 0.6) {
            painter->setPen(Qt::white);
            QFont font = painter->font();
            font.setPointSizeF(6.5);
            font.setBold(true);
            painter->setFont(font);
            painter->drawText(badge, Qt::AlignCenter, QStringLiteral("L"));
        }
    }
    if (lod < 0.4) return;  // text unreadable
    if (m_heat >= 0 && !m_heatText.isEmpty()) {  // the time, on a tab above the node
        QFont small = painter->font();
        small.setPointSizeF(7);
        small.setBold(true);
        painter->setFont(small);
        const QFontMetricsF fm(small);
        const QRectF tab(m_rect.left() + 4, m_rect.top() - fm.height() - 1, fm.horizontalAdvance(m_heatText) + 8,
                         fm.height() + 1);
        painter->setPen(Qt::NoPen);
        painter->setBrush(heatColor(m_heat, m_dark));
        painter->drawRoundedRect(tab, 3, 3);
        painter->setPen(m_heat > 0.55 ? QColor(Qt::white) : QColor(20, 20, 20));
        painter->drawText(tab, Qt::AlignCenter, m_heatText);
    }
    painter->setPen(m_heat > 0.55 ? QColor(Qt::white) : textColor(m_dark && m_heat < 0));
    QFont font = painter->font();
    font.setPointSizeF(9);
    QFont bold = font;
    bold.setBold(true);
    QStringList lines{m_node.title};
    if (!m_node.subtitle.isEmpty()) lines << m_node.subtitle;
    if (m_showShape && !m_node.shape.isEmpty()) lines << m_node.shape;
    const double lineHeight = (m_rect.height() - 8) / lines.size();
    const QRectF textRect = m_rect.adjusted(6, 4, -6, -4);
    for (int i = 0; i < lines.size(); ++i) {
        painter->setFont(i == 0 ? bold : font);
        const QFontMetricsF metrics(painter->font());
        const QString text = metrics.elidedText(lines[i], Qt::ElideMiddle, textRect.width());
        painter->drawText(QRectF(textRect.left(), textRect.top() + i * lineHeight, textRect.width(), lineHeight),
                          Qt::AlignCenter, text);
    }
}

// --- clusters ------------------------------------------------------------------

GraphClusterItem::GraphClusterItem(const GraphCluster& cluster, const QRectF& rect,
                                   const QPointF& labelCenter, bool dark)
    : m_cluster(cluster), m_rect(rect), m_labelCenter(labelCenter), m_dark(dark) {
    setZValue(0);
}

QRectF GraphClusterItem::boundingRect() const { return m_rect.adjusted(-4, -4, 4, 4); }

void GraphClusterItem::setCues(unsigned cues) {
    m_cues = cues;
    update();
}

void GraphClusterItem::setHighlighted(bool on) {
    m_highlighted = on;
    update();
}

void GraphClusterItem::setHeat(double fraction, const QString& text) {
    m_heat = fraction;
    m_heatText = text;
    setToolTip(fraction >= 0 ? QStringLiteral("%1\nmeasured: %2").arg(m_cluster.label, text) : QString());
    update();
}

void GraphClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    QColor fill = m_heat >= 0 ? heatColor(m_heat, m_dark) : nodeCategoryColor(m_cluster.category, m_dark);
    // Each expanded fusion (a kernel around its ops) in a colour of its own, so that the kernels
    // of a layer shown side by side are told apart; the hue follows from its key.
    if (m_heat < 0 && m_cluster.category == NodeCategory::kFusion) {
        const int hue = static_cast<int>(qHash(m_cluster.key) % 360);
        fill = m_dark ? QColor::fromHsl(hue, 90, 70) : QColor::fromHsl(hue, 150, 215);
    }
    fill.setAlpha(m_heat >= 0 ? 150 : m_dark ? 70 : 90);
    QPen pen(lineColor(m_dark), 1.2, Qt::DashLine);
    if (m_cues & kCueFusedInto) pen = QPen(kFused, 3);
    if (m_cues & kCueAdded) pen = QPen(kAdded, 3);
    if (m_cues & kCueRemoved) pen = QPen(kRemoved, 3, Qt::DashLine);
    if (m_highlighted) pen = QPen(kHighlight, 4);
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRoundedRect(m_rect, 8, 8);
    if (levelOfDetail(option, painter) < 0.4) return;
    painter->setPen(textColor(m_dark));
    QFont font = painter->font();
    font.setPointSizeF(9);
    font.setItalic(true);
    painter->setFont(font);
    const QFontMetricsF metrics(font);
    const QString label = m_heat >= 0 && !m_heatText.isEmpty()
                              ? QStringLiteral("%1 — %2").arg(m_cluster.label, m_heatText)
                              : m_cluster.label;
    const QString text = metrics.elidedText(label, Qt::ElideRight, m_rect.width() - 8);
    QRectF labelRect(m_rect.left() + 4, m_labelCenter.y() - metrics.height() / 2, m_rect.width() - 8,
                     metrics.height());
    painter->drawText(labelRect, Qt::AlignCenter, text);
}

// --- edges ---------------------------------------------------------------------

GraphEdgeItem::GraphEdgeItem(const GraphEdge& edge, const layout::EdgeGeometry& geometry, bool dark)
    : m_edge(edge), m_dark(dark) {
    setZValue(1);
    const auto& p = geometry.points;
    if (!p.empty()) {
        m_path.moveTo(p[0].x, p[0].y);
        size_t i = 1;
        for (; i + 2 < p.size(); i += 3)
            m_path.cubicTo(p[i].x, p[i].y, p[i + 1].x, p[i + 1].y, p[i + 2].x, p[i + 2].y);
        for (; i < p.size(); ++i) m_path.lineTo(p[i].x, p[i].y);
        QPointF tip = m_path.currentPosition();
        QPointF base = tip;
        if (geometry.hasArrow) {
            tip = QPointF(geometry.arrowTip.x, geometry.arrowTip.y);
            m_path.lineTo(tip);
        } else if (p.size() >= 2) {
            base = QPointF(p[p.size() - 2].x, p[p.size() - 2].y);
        }
        // Arrowhead along the last segment direction.
        QLineF last(geometry.hasArrow ? QPointF(p.back().x, p.back().y) : base, tip);
        if (last.length() < 0.01) last = QLineF(m_path.pointAtPercent(0.95), tip);
        const double angle = std::atan2(last.dy(), last.dx());
        const double size = 8;
        m_arrow << tip
                << tip - QPointF(std::cos(angle - M_PI / 7) * size, std::sin(angle - M_PI / 7) * size)
                << tip - QPointF(std::cos(angle + M_PI / 7) * size, std::sin(angle + M_PI / 7) * size);
    }
    if (geometry.hasLabel) {
        m_hasLabelPosition = true;
        m_labelCenter = QPointF(geometry.labelCenter.x, geometry.labelCenter.y);
    } else if (!m_path.isEmpty()) {
        m_labelCenter = m_path.pointAtPercent(0.5) + QPointF(6, 0);
    }
    m_bounds = m_path.boundingRect().united(m_arrow.boundingRect()).adjusted(-4, -4, 4, 4);
    m_bounds = m_bounds.united(QRectF(m_labelCenter - QPointF(150, 10), QSizeF(300, 20)));
    setToolTip(edge.multiplicity > 1
                   ? QStringLiteral("%1 values, %2").arg(edge.multiplicity).arg(QString::fromStdString(formatByteSize(edge.bytes)))
                   : QStringLiteral("%1 → %2\n%3").arg(edge.producer, edge.consumer, edge.shape));
}

QRectF GraphEdgeItem::boundingRect() const { return m_bounds; }

QPainterPath GraphEdgeItem::shape() const {
    QPainterPathStroker stroker;
    stroker.setWidth(8);
    return stroker.createStroke(m_path);
}

void GraphEdgeItem::setShowLabel(bool show) {
    if (m_showLabel == show) return;
    m_showLabel = show;
    update();
}

void GraphEdgeItem::setCues(unsigned cues) {
    m_cues = cues;
    update();
}

void GraphEdgeItem::setEmphasised(bool on) {
    if (m_emphasised == on) return;
    m_emphasised = on;
    setZValue(on ? 1.5 : 1);
    update();
}

void GraphEdgeItem::setHighlighted(bool on) {
    if (m_highlighted == on) return;
    m_highlighted = on;
    setZValue(on ? 1.8 : m_emphasised ? 1.5 : 1);
    update();
}

QString GraphEdgeItem::labelText() const {
    if (m_edge.multiplicity > 1)
        return QStringLiteral("%1 values · %2").arg(m_edge.multiplicity).arg(QString::fromStdString(formatByteSize(m_edge.bytes)));
    return m_edge.shape;
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const double lod = levelOfDetail(option, painter);
    QColor color = lineColor(m_dark);
    double width = m_edge.multiplicity > 1 ? std::min(1.0 + std::log2(m_edge.multiplicity), 5.0) : 1.0;
    Qt::PenStyle style = Qt::SolidLine;
    if (m_cues & kCueRewired) {
        color = kReplaced;
        width = 2.5;
        style = Qt::DashLine;
    }
    if (m_emphasised) {
        color = kSelected;
        width = std::max(width, 2.0);
    }
    if (m_highlighted) {  // under a broad glow
        QPen glow(kHighlight, width + 8, Qt::SolidLine, Qt::RoundCap);
        if (lod < 0.15) glow.setCosmetic(true);
        painter->setPen(glow);
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(m_path);
        color = m_dark ? QColor(255, 230, 120) : QColor(150, 90, 0);
        width = std::max(width, 2.5);
        style = Qt::SolidLine;
    }
    if (!m_edge.route && !(m_cues & kCueRewired) && !m_emphasised) {
        color.setAlpha(110);  // long overview edges: lighter
    }
    QPen pen(color, width, style);
    if (lod < 0.15) pen.setCosmetic(true);
    painter->setPen(pen);
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(m_path);
    painter->setPen(Qt::NoPen);
    painter->setBrush(color);
    if (lod >= 0.15) painter->drawPolygon(m_arrow);
    // Bundles of values are labelled when routed (long light ones only in their tooltip).
    const bool label = (m_edge.multiplicity > 1 && m_edge.route) || m_showLabel;
    if (!label || lod < 0.5) return;
    QFont font = painter->font();
    font.setPointSizeF(7.5);
    painter->setFont(font);
    painter->setPen(textColor(m_dark));
    const QString text = labelText();
    const QFontMetricsF metrics(font);
    const double w = std::min(metrics.horizontalAdvance(text) + 4, 296.0);
    QRectF rect(m_labelCenter.x() - (m_hasLabelPosition ? w / 2 : 0), m_labelCenter.y() - metrics.height() / 2,
                w, metrics.height());
    painter->drawText(rect, Qt::AlignCenter, metrics.elidedText(text, Qt::ElideMiddle, w));
}

// --- ghosts ------------------------------------------------------------------

GraphGhostItem::GraphGhostItem(const QRectF& rect, const QString& text, bool dark)
    : m_rect(rect.translated(-rect.center())), m_text(text), m_dark(dark) {
    setPos(rect.center());
    setZValue(3);
}

QRectF GraphGhostItem::boundingRect() const { return m_rect.adjusted(-2, -2, 2, 2); }

void GraphGhostItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    painter->setPen(QPen(QColor(200, 40, 40), 2, Qt::DashLine));
    painter->setBrush(m_dark ? QColor(80, 30, 30) : QColor(255, 220, 220));
    painter->drawRoundedRect(m_rect, 6, 6);
    if (levelOfDetail(option, painter) < 0.4) return;
    painter->setPen(textColor(m_dark));
    painter->drawText(m_rect, Qt::AlignCenter, m_text);
}

}  // namespace hloscope
