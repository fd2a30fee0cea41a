#include "views/graph/graph_scene.h"

#include <QPropertyAnimation>
#include <QSet>

#include "compiler/pipeline/module_diff.h"

namespace hloscope {

GraphScene::~GraphScene() {
    blockSignals(true);
    clear();
}

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent) {
    setItemIndexMethod(QGraphicsScene::BspTreeIndex);
}

void GraphScene::clearGraph() {
    clear();
    m_nodes.clear();
    m_nodeList.clear();
    m_clusters.clear();
    m_edges.clear();
    m_highlighted.clear();
    m_graph.reset();
    m_layout.reset();
}

void GraphScene::populate(std::shared_ptr<const VisibleGraph> graph,
                          std::shared_ptr<const layout::LayoutResult> layout, bool dark) {
    clearGraph();
    m_graph = std::move(graph);
    m_layout = std::move(layout);
    m_dark = dark;
    if (!m_graph || !m_layout) return;
    const VisibleGraph& g = *m_graph;
    const layout::LayoutResult& l = *m_layout;
    const QRectF bounds(l.bounds.x, l.bounds.y, l.bounds.width, l.bounds.height);
    setSceneRect(bounds.adjusted(-40, -40, 40, 40));
    m_nodeList.reserve(static_cast<qsizetype>(g.nodes.size()));
    for (size_t i = 0; i < g.clusters.size() && i < l.clusters.size(); ++i) {
        const layout::ClusterGeometry& c = l.clusters[i];
        auto* item = new GraphClusterItem(g.clusters[i], QRectF(c.box.x, c.box.y, c.box.width, c.box.height),
                                          QPointF(c.labelCenter.x, c.labelCenter.y), dark);
        addItem(item);
        m_clusters.insert(g.clusters[i].key, item);
    }
    for (size_t i = 0; i < g.nodes.size() && i < l.nodes.size(); ++i) {
        const layout::LayoutRect r = l.nodes[i].rect();
        auto* item = new GraphNodeItem(g.nodes[i], QRectF(r.x, r.y, r.width, r.height), dark);
        item->setShowShape(m_showShapes);
        addItem(item);
        m_nodes.insert(g.nodes[i].key, item);
        m_nodeList.push_back(item);
    }
    m_edges.reserve(static_cast<qsizetype>(g.edges.size()));
    for (size_t i = 0; i < g.edges.size() && i < l.edges.size(); ++i) {
        auto* item = new GraphEdgeItem(g.edges[i], l.edges[i], dark);
        item->setShowLabel(m_showEdgeLabels);
        addItem(item);
        m_edges.push_back(item);
    }
}

QRectF GraphScene::graphRect() const {
    if (!m_layout) return {};
    return QRectF(m_layout->bounds.x, m_layout->bounds.y, m_layout->bounds.width, m_layout->bounds.height);
}

void GraphScene::setShowShapes(bool show) {
    m_showShapes = show;
    for (GraphNodeItem* item : m_nodeList) item->setShowShape(show);
}

void GraphScene::setShowEdgeLabels(bool show) {
    m_showEdgeLabels = show;
    for (GraphEdgeItem* item : m_edges) item->setShowLabel(show);
}

int GraphScene::applyDiff(const ModuleDiff* diff) {
    QHash<int64_t, unsigned> cues;
    QSet<QPair<int64_t, int64_t>> rewired;
    QSet<int64_t> rewiredProducers;
    if (diff) {
        for (const DiffItem& item : diff->added) cues[item.id] |= kCueAdded;
        for (const auto& r : diff->replaced) {
            cues[r.after.id] |= kCueReplaced;
            rewiredProducers.insert(r.after.id);
        }
        for (const auto& r : diff->rewired) rewired.insert(qMakePair(r.after.id, r.user.id));
        for (const auto& f : diff->fused) cues[f.fusion.id] |= kCueFusedInto;
        for (const auto& s : diff->shapeChanged)
            cues[s.instruction.id] |= s.layoutOnly ? kCueLayoutChanged : kCueShapeChanged;
    }
    int marked = 0;
    for (GraphNodeItem* item : m_nodeList) {
        const unsigned c = item->node().uniqueId >= 0 ? cues.value(item->node().uniqueId, 0u) : 0u;
        item->setCues(c);
        if (c) ++marked;
    }
    for (GraphClusterItem* item : m_clusters) {
        const unsigned c = item->cluster().uniqueId >= 0 ? cues.value(item->cluster().uniqueId, 0u) : 0u;
        item->setCues(c);
        if (c) ++marked;
    }
    for (GraphEdgeItem* item : m_edges) {
        const GraphEdge& e = item->edge();
        const bool on = e.multiplicity == 1 &&
                        (rewired.contains(qMakePair(e.producerId, e.consumerId)) ||
                         rewiredProducers.contains(e.producerId));
        item->setCues(on ? kCueRewired : kCueNone);
        if (on) ++marked;
    }
    return marked;
}

void GraphScene::fadeOut(const QVector<QPair<QRectF, QString>>& ghosts) {
    for (const auto& [rect, text] : ghosts) {
        auto* ghost = new GraphGhostItem(rect, text, m_dark);
        addItem(ghost);
        auto* animation = new QPropertyAnimation(ghost, "opacity", ghost);
        animation->setDuration(300);
        animation->setStartValue(1.0);
        animation->setEndValue(0.0);
        connect(animation, &QPropertyAnimation::finished, ghost, &QObject::deleteLater);
        animation->start();
    }
}

int GraphScene::ghostCount() const {
    int n = 0;
    for (QGraphicsItem* item : items())
        if (dynamic_cast<GraphGhostItem*>(item)) ++n;
    return n;
}

QStringList GraphScene::findMatches(const QString& text) const {
    QStringList out;
    if (!m_graph || text.isEmpty()) return out;
    QSet<QString> seen;
    QSet<QString> hiddenHits;
    for (auto it = m_graph->shownBy.cbegin(); it != m_graph->shownBy.cend(); ++it)
        if (it.key().contains(text, Qt::CaseInsensitive)) hiddenHits.insert(it.value());
    for (const GraphNode& node : m_graph->nodes) {
        const bool hit = node.instruction.contains(text, Qt::CaseInsensitive) ||
                         node.opcode.contains(text, Qt::CaseInsensitive) ||
                         node.shape.contains(text, Qt::CaseInsensitive) ||
                         hiddenHits.contains(node.key);
        if (hit && !seen.contains(node.key)) {
            seen.insert(node.key);
            out << node.key;
        }
    }
    return out;
}

void GraphScene::setHighlighted(const QStringList& keys) {
    for (const QString& key : std::as_const(m_highlighted))
        if (GraphNodeItem* item = m_nodes.value(key)) item->setHighlighted(false);
    m_highlighted = keys;
    for (const QString& key : keys)
        if (GraphNodeItem* item = m_nodes.value(key)) item->setHighlighted(true);
}

void GraphScene::emphasiseEdgesOf(const QString& key) {
    for (GraphEdgeItem* item : m_edges)
        item->setEmphasised(!key.isEmpty() && (item->edge().from == key || item->edge().to == key));
}

}  // namespace hloscope
