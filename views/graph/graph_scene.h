// GraphScene: the items of one laid-out VisibleGraph, with the step's diff
// cues, search highlights and the fade-out of removed nodes.
#pragma once

#include <QGraphicsScene>
#include <QHash>
#include <QVector>
#include <memory>

#include "views/graph/graph_builder.h"
#include "views/graph/graph_items.h"

namespace hloscope {

struct ModuleDiff;

class GraphScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit GraphScene(QObject* parent = nullptr);
    // Items go while the scene's members still exist, and without
    // selection signals to a view being destroyed.
    ~GraphScene() override;

    // Replaces every item. `layout` must be the layout of `graph`.
    void populate(std::shared_ptr<const VisibleGraph> graph,
                  std::shared_ptr<const layout::LayoutResult> layout, bool dark);
    void clearGraph();

    const VisibleGraph* graph() const { return m_graph.get(); }
    std::shared_ptr<const VisibleGraph> sharedGraph() const { return m_graph; }
    std::shared_ptr<const layout::LayoutResult> layoutResult() const { return m_layout; }
    GraphNodeItem* nodeItem(const QString& key) const { return m_nodes.value(key); }
    GraphClusterItem* clusterItem(const QString& key) const { return m_clusters.value(key); }
    const QVector<GraphNodeItem*>& nodeItems() const { return m_nodeList; }
    const QVector<GraphEdgeItem*>& edgeItems() const { return m_edges; }
    QRectF graphRect() const;

    void setShowShapes(bool show);
    void setShowEdgeLabels(bool show);

    // Cues of `diff` (null: none) on the items now shown. Returns the number
    // of items carrying a cue.
    int applyDiff(const ModuleDiff* diff);
    // Removed nodes fade out (~300 ms) at the places they had before.
    void fadeOut(const QVector<QPair<QRectF, QString>>& ghosts);
    int ghostCount() const;

    // Node keys matching `text` (instruction name, opcode or shape, case
    // insensitive); hidden instructions whose name matches give the node
    // showing them. In graph order, without duplicates.
    QStringList findMatches(const QString& text) const;
    void setHighlighted(const QStringList& keys);
    void emphasiseEdgesOf(const QString& key);

    // Before/after: marks the nodes (and clusters) of instructions the step
    // removes or moves into a fusion (this scene shows the state before it).
    int applyRemoved(const ModuleDiff* diff);

    // The heat map: measured seconds per instruction name. Times of
    // instructions hidden in a collapsed node add up on that node. Returns
    // the number of items coloured; an empty map clears it.
    int setHeat(const QHash<QString, double>& seconds);
    // Display key of the hottest item and its total (after setHeat).
    QString hottestKey() const { return m_hottest; }
    double hottestSeconds() const { return m_hottestSeconds; }

    // The edge carrying producer's value to consumer (instruction names), or
    // when either is hidden, the edge between the nodes showing them.
    GraphEdgeItem* findEdge(const QString& producer, const QString& consumer) const;
    // Highlights one edge (null: none).
    void setHighlightedEdge(GraphEdgeItem* edge);
    GraphEdgeItem* highlightedEdge() const { return m_highlightedEdge; }

private:
    std::shared_ptr<const VisibleGraph> m_graph;
    std::shared_ptr<const layout::LayoutResult> m_layout;
    QHash<QString, GraphNodeItem*> m_nodes;
    QVector<GraphNodeItem*> m_nodeList;
    QHash<QString, GraphClusterItem*> m_clusters;
    QVector<GraphEdgeItem*> m_edges;
    QStringList m_highlighted;
    GraphEdgeItem* m_highlightedEdge = nullptr;
    QString m_hottest;
    double m_hottestSeconds = 0;
    bool m_dark = false;
    bool m_showShapes = false;
    bool m_showEdgeLabels = false;
};

}  // namespace hloscope
