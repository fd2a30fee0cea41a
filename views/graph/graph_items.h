// Graphics items of the graph view: nodes, clusters and edges, drawn from a
// VisibleGraph and its layout. Painting adapts to the zoom level (no text
// when a node is only a few pixels tall).
#pragma once

#include <QGraphicsItem>
#include <QGraphicsObject>
#include <QPainterPath>

#include "views/graph/graph_builder.h"

namespace hloscope {

// Visual cues of the step's diff.
enum DiffCue : unsigned {
    kCueNone = 0,
    kCueAdded = 1u << 0,          // green outline
    kCueReplaced = 1u << 1,       // orange outline (replaced an instruction)
    kCueFusedInto = 1u << 2,      // instructions moved into this fusion
    kCueLayoutChanged = 1u << 3,  // blue badge
    kCueShapeChanged = 1u << 4,   // blue outline
    kCueRewired = 1u << 5,        // edges: operand changed
    kCueRemoved = 1u << 6,        // before/after: gone after the step (red, dashed)
};

// Heat-map colour of a measured time: `fraction` of the hottest kernel
// (0..1), pale yellow to deep red.
QColor heatColor(double fraction, bool dark);

class GraphNodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };
    GraphNodeItem(const GraphNode& node, const QRectF& rect, bool dark);

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    const GraphNode& node() const { return m_node; }
    void setShowShape(bool show);
    void setHighlighted(bool on);  // search match
    bool isHighlighted() const { return m_highlighted; }
    void setCues(unsigned cues);
    unsigned cues() const { return m_cues; }
    // Measured time: fraction of the hottest kernel (< 0: none) and its text.
    void setHeat(double fraction, const QString& text);
    double heat() const { return m_heat; }
    const QString& heatText() const { return m_heatText; }

private:
    QPainterPath outline() const;
    GraphNode m_node;
    QRectF m_rect;  // in item coordinates (centred on 0,0)
    bool m_dark = false;
    bool m_showShape = false;
    bool m_highlighted = false;
    unsigned m_cues = kCueNone;
    double m_heat = -1;
    QString m_heatText;
};

class GraphClusterItem : public QGraphicsItem {
public:
    enum { Type = UserType + 2 };
    GraphClusterItem(const GraphCluster& cluster, const QRectF& rect, const QPointF& labelCenter,
                     bool dark);
    int type() const override { return Type; }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    const GraphCluster& cluster() const { return m_cluster; }
    void setCues(unsigned cues);
    unsigned cues() const { return m_cues; }
    void setHighlighted(bool on);
    void setHeat(double fraction, const QString& text);
    double heat() const { return m_heat; }
    const QString& heatText() const { return m_heatText; }

private:
    GraphCluster m_cluster;
    QRectF m_rect;
    QPointF m_labelCenter;
    bool m_dark = false;
    bool m_highlighted = false;
    unsigned m_cues = kCueNone;
    double m_heat = -1;
    QString m_heatText;
};

class GraphEdgeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 3 };
    GraphEdgeItem(const GraphEdge& edge, const layout::EdgeGeometry& geometry, bool dark);
    int type() const override { return Type; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    const GraphEdge& edge() const { return m_edge; }
    void setShowLabel(bool show);
    void setCues(unsigned cues);
    unsigned cues() const { return m_cues; }
    void setEmphasised(bool on);  // touches the selected node
    void setHighlighted(bool on);  // the pair chosen in the fusion explorer
    bool isHighlighted() const { return m_highlighted; }

private:
    QString labelText() const;
    GraphEdge m_edge;
    QPainterPath m_path;
    QPolygonF m_arrow;
    QPointF m_labelCenter;
    bool m_hasLabelPosition = false;
    bool m_showLabel = false;
    bool m_dark = false;
    bool m_emphasised = false;
    bool m_highlighted = false;
    unsigned m_cues = kCueNone;
    QRectF m_bounds;
};

// A node removed by the step, fading out where it was (QVariantAnimation
// drives its opacity; the scene deletes it when the animation ends).
class GraphGhostItem : public QGraphicsObject {
    Q_OBJECT
public:
    GraphGhostItem(const QRectF& rect, const QString& text, bool dark);
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    QRectF m_rect;
    QString m_text;
    bool m_dark = false;
};

}  // namespace hloscope
