// GraphCanvas: the graph view's QGraphicsView (zoom, pan, double-clicks and
// edge context menus as signals); GraphMinimap: the overview of its whole
// scene with the visible part framed.
#pragma once

#include <QGraphicsView>
#include <QImage>
#include <QTransform>
#include <QWidget>

#include "views/graph/graph_items.h"

namespace hloscope {

// The QGraphicsView: zoom, pan, clicks, context menus.
class GraphCanvas : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphCanvas(QWidget* parent = nullptr);
    void zoomBy(double factor);
    double zoom() const;

signals:
    void viewChanged();
    void zoomed(double factor);  // by zoomBy (wheel, keys, buttons)
    void itemDoubleClicked(QGraphicsItem* item);
    void edgeContextMenu(GraphEdgeItem* edge, const QPoint& globalPos);
    void nodeContextMenu(GraphNodeItem* node, const QPoint& globalPos);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void resizeEvent(QResizeEvent* event) override;
};

// Overview of the whole scene with the visible part framed; click or drag
// to move the view.
class GraphMinimap : public QWidget {
    Q_OBJECT
public:
    GraphMinimap(GraphCanvas* canvas, QWidget* parent);
    void invalidate();  // the scene changed
    QRectF viewportInScene() const;
    void centerOnWidgetPoint(const QPointF& point);  // as a click there does

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    QTransform sceneToWidget() const;
    GraphCanvas* m_canvas;
    QImage m_cache;
    bool m_dirty = true;
};

}  // namespace hloscope
