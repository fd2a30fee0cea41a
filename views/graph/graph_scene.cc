#include "views/graph/graph_scene.h"

#include <QPropertyAnimation>
#include <QSet>
#include <cmath>

#include "compiler/pipeline/module_diff.h"
#include "views/model/seconds_text.h"

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
    m_highlightedEdge = nullptr;
    m_hottest.clear();
    m_hottestSeconds = 0;
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

int GraphScene::applyRemoved(const ModuleDiff* diff) {
    QSet<int64_t> gone;
    if (diff) {
        for (const DiffItem& item : diff->removed) gone.insert(item.id);
        for (const auto& r : diff->replaced) gone.insert(r.before.id);
        for (const auto& f : diff->fused) gone.insert(f.instruction.id);
    }
    int marked = 0;
    for (GraphNodeItem* item : m_nodeList) {
        const bool on = item->node().uniqueId >= 0 && gone.contains(item->node().uniqueId);
        item->setCues(on ? kCueRemoved : kCueNone);
        marked += on;
    }
    for (GraphClusterItem* item : m_clusters) {
        const bool on = item->cluster().uniqueId >= 0 && gone.contains(item->cluster().uniqueId);
        item->setCues(on ? kCueRemoved : kCueNone);
        marked += on;
    }
    for (GraphEdgeItem* item : m_edges) item->setCues(kCueNone);
    return marked;
}


int GraphScene::setHeat(const QHash<QString, double>& seconds) {
    m_hottest.clear();
    m_hottestSeconds = 0;
    QHash<QString, double> perKey;
    double total = 0;
    if (m_graph) {
        for (auto it = seconds.cbegin(); it != seconds.cend(); ++it) {
            const QString key = m_graph->shownBy.value(it.key());
            if (key.isEmpty() || !(it.value() >= 0)) continue;
            perKey[key] += it.value();
            total += it.value();
        }
    }
    for (auto it = perKey.cbegin(); it != perKey.cend(); ++it)
        if (it.value() > m_hottestSeconds) {
            m_hottestSeconds = it.value();
            m_hottest = it.key();
        }
    auto heatOf = [&](const QString& key, QString* text) {
        auto it = perKey.constFind(key);
        if (it == perKey.cend() || m_hottestSeconds <= 0) return -1.0;
        *text = secondsText(*it);
        if (total > 0) *text += QStringLiteral(" · %1%").arg(100 * *it / total, 0, 'f', 0);
        // Square root: a few hot kernels do not wash every other one out.
        return std::sqrt(*it / m_hottestSeconds);
    };
    int coloured = 0;
    for (GraphNodeItem* item : m_nodeList) {
        QString text;
        const double heat = heatOf(item->node().key, &text);
        item->setHeat(heat, text);
        coloured += heat >= 0;
    }
    for (auto it = m_clusters.cbegin(); it != m_clusters.cend(); ++it) {
        QString text;
        const double heat = heatOf(it.key(), &text);
        it.value()->setHeat(heat, text);
        coloured += heat >= 0;
    }
    return coloured;
}

GraphEdgeItem* GraphScene::findEdge(const QString& producer, const QString& consumer) const {
    if (!m_graph) return nullptr;
    for (GraphEdgeItem* item : m_edges)
        if (item->edge().producer == producer && item->edge().consumer == consumer) return item;
    const QString from = m_graph->shownBy.value(producer), to = m_graph->shownBy.value(consumer);
    if (from.isEmpty() || to.isEmpty() || from == to) return nullptr;
    for (GraphEdgeItem* item : m_edges)
        if (item->edge().from == from && item->edge().to == to) return item;
    // One end became an expanded fusion (a cluster): the edge between the
    // other end and an instruction inside it (a fused producer's value
    // reaching the fused computation's user).
    auto inside = [&](const QString& nodeKey, const QString& cluster) {
        const GraphNode* node = m_graph->node(nodeKey);
        for (QString c = node ? node->cluster : QString(); !c.isEmpty();) {
            if (c == cluster) return true;
            const int index = m_graph->clusterIndex.value(c, -1);
            c = index >= 0 ? m_graph->clusters[static_cast<size_t>(index)].parent : QString();
        }
        return false;
    };
    const bool toCluster = m_graph->clusterIndex.contains(to), fromCluster = m_graph->clusterIndex.contains(from);
    for (GraphEdgeItem* item : m_edges) {
        const GraphEdge& e = item->edge();
        if (toCluster && e.from == from && inside(e.to, to)) return item;
        if (fromCluster && e.to == to && inside(e.from, from)) return item;
    }
    return nullptr;
}

void GraphScene::setHighlightedEdge(GraphEdgeItem* edge) {
    if (m_highlightedEdge) m_highlightedEdge->setHighlighted(false);
    m_highlightedEdge = edge;
    if (edge) edge->setHighlighted(true);
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
