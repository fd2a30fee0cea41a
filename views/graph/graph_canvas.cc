#include "views/graph/graph_canvas.h"

#include <QContextMenuEvent>
#include <QGraphicsScene>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace hloscope {

// --- canvas ----------------------------------------------------------------------

GraphCanvas::GraphCanvas(QWidget* parent) : QGraphicsView(parent) {
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlag(QGraphicsView::DontSavePainterState, true);
}

double GraphCanvas::zoom() const { return transform().m11(); }

void GraphCanvas::zoomBy(double factor) {
    const double next = zoom() * factor;
    if (next < 0.005 || next > 8) return;
    scale(factor, factor);
    emit zoomed(factor);
    emit viewChanged();
}

void GraphCanvas::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) return QGraphicsView::wheelEvent(event);
    zoomBy(std::pow(1.15, steps));
    event->accept();
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
    QGraphicsItem* item = itemAt(event->pos());
    // Prefer a node over the cluster behind it.
    for (QGraphicsItem* candidate : items(event->pos())) {
        if (candidate->type() == GraphNodeItem::Type) {
            item = candidate;
            break;
        }
    }
    if (item) {
        emit itemDoubleClicked(item);
        event->accept();
        return;
    }
    QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphCanvas::contextMenuEvent(QContextMenuEvent* event) {
    for (QGraphicsItem* item : items(event->pos())) {
        if (item->type() == GraphEdgeItem::Type) {
            emit edgeContextMenu(static_cast<GraphEdgeItem*>(item), event->globalPos());
            event->accept();
            return;
        }
        if (item->type() == GraphNodeItem::Type) {
            emit nodeContextMenu(static_cast<GraphNodeItem*>(item), event->globalPos());
            event->accept();
            return;
        }
    }
    QGraphicsView::contextMenuEvent(event);
}

void GraphCanvas::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    emit viewChanged();
}

void GraphCanvas::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    emit viewChanged();
}

// --- minimap ------------------------------------------------------------------

GraphMinimap::GraphMinimap(GraphCanvas* canvas, QWidget* parent) : QWidget(parent), m_canvas(canvas) {
    setFixedSize(200, 150);
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Overview: click or drag to move the view"));
}

void GraphMinimap::invalidate() {
    m_dirty = true;
    update();
}

QTransform GraphMinimap::sceneToWidget() const {
    const QRectF scene = m_canvas->scene() ? m_canvas->scene()->sceneRect() : QRectF();
    if (scene.isEmpty()) return {};
    const double s = std::min((width() - 4) / scene.width(), (height() - 4) / scene.height());
    const double ox = (width() - scene.width() * s) / 2, oy = (height() - scene.height() * s) / 2;
    QTransform t;
    t.translate(ox, oy);
    t.scale(s, s);
    t.translate(-scene.left(), -scene.top());
    return t;
}

QRectF GraphMinimap::viewportInScene() const {
    return m_canvas->mapToScene(m_canvas->viewport()->rect()).boundingRect();
}

void GraphMinimap::centerOnWidgetPoint(const QPointF& point) {
    bool invertible = false;
    const QTransform inverse = sceneToWidget().inverted(&invertible);
    if (!invertible) return;
    m_canvas->centerOn(inverse.map(point));
    update();
}

void GraphMinimap::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QColor base = palette().color(QPalette::Base);
    painter.fillRect(rect(), base);
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(rect().adjusted(0, 0, -1, -1));
    QGraphicsScene* scene = m_canvas->scene();
    if (!scene || scene->sceneRect().isEmpty()) return;
    if (m_dirty || m_cache.size() != size()) {
        m_cache = QImage(size(), QImage::Format_ARGB32_Premultiplied);
        m_cache.fill(Qt::transparent);
        QPainter cachePainter(&m_cache);
        cachePainter.setTransform(sceneToWidget());
        scene->render(&cachePainter, scene->sceneRect(), scene->sceneRect());
        m_dirty = false;
    }
    painter.drawImage(0, 0, m_cache);
    const QRectF frame = sceneToWidget().mapRect(viewportInScene()).intersected(QRectF(rect()));
    painter.setPen(QPen(QColor(0, 120, 215), 1.5));
    painter.setBrush(QColor(0, 120, 215, 40));
    painter.drawRect(frame);
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) { centerOnWidgetPoint(event->position()); }

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) centerOnWidgetPoint(event->position());
}

}  // namespace hloscope
