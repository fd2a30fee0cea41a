#include "views/layout/graph_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <graphviz/gvplugin.h>
#include <graphviz/types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

extern "C" {
extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
}

namespace hloscope::layout {
namespace {

// Graphviz keeps global state (the error handler, the context, cgraph's
// string pool): one lock and one context for the whole process.
std::timed_mutex& graphvizMutex() {
    static std::timed_mutex mutex;
    return mutex;
}

std::string& graphvizErrors() {
    static std::string errors;  // guarded by graphvizMutex()
    return errors;
}

int collectGraphvizError(char* message) {
    if (message) graphvizErrors() += message;
    return 0;
}

// Only the dot layout plugin, linked in, no demand loading: gvContext()
// would also load the pango text-layout plugin, whose fontconfig use from a
// worker thread races with Qt's on the GUI thread (heap corruption). Without
// a text-layout plugin Graphviz estimates label sizes from built-in metrics.
lt_symlist_t kBuiltinPlugins[] = {
    {"gvplugin_dot_layout_LTX_library", static_cast<void*>(&gvplugin_dot_layout_LTX_library)},
    {nullptr, nullptr},
};

GVC_t* graphvizContext() {  // called with the lock held
    static GVC_t* context = [] {
        agseterr(AGERR);  // warnings are not errors
        agseterrf(&collectGraphvizError);
        return gvContextPlugins(kBuiltinPlugins, 0);
    }();
    return context;
}

bool cancelled(const LayoutOptions& options) {
    return options.cancel && options.cancel->load(std::memory_order_relaxed);
}

LayoutResult failure(LayoutResult::Status status, std::string message) {
    LayoutResult result;
    result.status = status;
    result.error = std::move(message);
    return result;
}

std::string inches(double points) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4f", points / 72.0);
    return buffer;
}

std::string number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    return buffer;
}

// Graphviz labels are escStrings: a backslash starts an escape.
std::string escapeLabel(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// Owns one cgraph graph and its layout; frees both (with the lock held).
struct GraphGuard {
    GVC_t* context = nullptr;
    Agraph_t* graph = nullptr;
    bool laidOut = false;
    ~GraphGuard() {
        if (!graph) return;
        if (laidOut) gvFreeLayout(context, graph);
        agclose(graph);
    }
};

}  // namespace

LayoutResult computeLayout(const LayoutGraph& input, const LayoutOptions& options) {
    using Status = LayoutResult::Status;
    if (cancelled(options)) return failure(Status::kCancelled, "layout cancelled");

    // Validate ids before touching Graphviz.
    std::unordered_map<std::string_view, size_t> nodeIndex;
    nodeIndex.reserve(input.nodes.size());
    for (size_t i = 0; i < input.nodes.size(); ++i) {
        const LayoutNode& node = input.nodes[i];
        if (node.id.empty()) return failure(Status::kError, "node " + std::to_string(i) + " has no id");
        if (!(node.width > 0) || !(node.height > 0))
            return failure(Status::kError, "node '" + node.id + "' has a non-positive size");
        if (!nodeIndex.emplace(node.id, i).second)
            return failure(Status::kError, "duplicate node id '" + node.id + "'");
    }
    std::unordered_map<std::string_view, size_t> clusterIndex;
    for (size_t i = 0; i < input.clusters.size(); ++i) {
        if (!clusterIndex.emplace(input.clusters[i].id, i).second)
            return failure(Status::kError, "duplicate cluster id '" + input.clusters[i].id + "'");
    }
    for (const LayoutCluster& cluster : input.clusters) {
        if (!cluster.parent.empty() && !clusterIndex.count(cluster.parent))
            return failure(Status::kError, "cluster '" + cluster.id + "' has unknown parent '" +
                                               cluster.parent + "'");
    }
    for (const LayoutNode& node : input.nodes) {
        if (!node.cluster.empty() && !clusterIndex.count(node.cluster))
            return failure(Status::kError,
                           "node '" + node.id + "' is in unknown cluster '" + node.cluster + "'");
    }
    std::vector<std::pair<size_t, size_t>> edgeEnds;
    edgeEnds.reserve(input.edges.size());
    for (const LayoutEdge& edge : input.edges) {
        auto from = nodeIndex.find(edge.from);
        auto to = nodeIndex.find(edge.to);
        if (from == nodeIndex.end() || to == nodeIndex.end())
            return failure(Status::kError, "edge '" + edge.from + "' -> '" + edge.to +
                                               "' names an unknown node");
        edgeEnds.emplace_back(from->second, to->second);
    }
    // Cluster depth (parents first), rejecting cycles.
    std::vector<int> depth(input.clusters.size(), -1);
    for (size_t i = 0; i < input.clusters.size(); ++i) {
        int d = 0;
        size_t c = i;
        while (!input.clusters[c].parent.empty()) {
            c = clusterIndex.at(input.clusters[c].parent);
            if (++d > static_cast<int>(input.clusters.size()))
                return failure(Status::kError, "cluster '" + input.clusters[i].id +
                                                   "' is its own ancestor");
        }
        depth[i] = d;
    }

    // Take the lock, still honouring cancellation while waiting.
    std::unique_lock<std::timed_mutex> lock(graphvizMutex(), std::defer_lock);
    while (!lock.try_lock_for(std::chrono::milliseconds(20))) {
        if (cancelled(options)) return failure(Status::kCancelled, "layout cancelled");
    }
    if (cancelled(options)) return failure(Status::kCancelled, "layout cancelled");
    const auto start = std::chrono::steady_clock::now();

    GraphGuard guard;
    guard.context = graphvizContext();
    if (!guard.context) return failure(Status::kError, "Graphviz context could not be created");
    graphvizErrors().clear();
    char graphName[] = "hloscope";
    guard.graph = agopen(graphName, Agdirected, nullptr);
    Agraph_t* g = guard.graph;
    if (!g) return failure(Status::kError, "Graphviz could not create a graph");

    const bool anyEdgeLabel = [&] {
        for (const LayoutEdge& e : input.edges)
            if (e.route && !e.label.empty()) return true;
        return false;
    }();
    agattr(g, AGRAPH, const_cast<char*>("rankdir"), const_cast<char*>("TB"));
    agattr(g, AGRAPH, const_cast<char*>("ranksep"), inches(options.rankSeparation).data());
    agattr(g, AGRAPH, const_cast<char*>("nodesep"), inches(options.nodeSeparation).data());
    agattr(g, AGRAPH, const_cast<char*>("mclimit"), number(options.crossingLimit).data());
    agattr(g, AGRAPH, const_cast<char*>("fontsize"), number(options.labelFontSize).data());
    if (options.networkSimplexLimit > 0) {
        agattr(g, AGRAPH, const_cast<char*>("nslimit"), number(options.networkSimplexLimit).data());
        agattr(g, AGRAPH, const_cast<char*>("nslimit1"), number(options.networkSimplexLimit).data());
    }
    agattr(g, AGRAPH, const_cast<char*>("label"), const_cast<char*>(""));
    const auto routed = std::count_if(input.edges.begin(), input.edges.end(), [](const LayoutEdge& e) { return e.route; });
    if (routed > options.splineEdgeLimit)
        agattr(g, AGRAPH, const_cast<char*>("splines"), const_cast<char*>("polyline"));
    agattr(g, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
    agattr(g, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
    agattr(g, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
    Agsym_t* widthSym = agattr(g, AGNODE, const_cast<char*>("width"), const_cast<char*>("0.75"));
    Agsym_t* heightSym = agattr(g, AGNODE, const_cast<char*>("height"), const_cast<char*>("0.5"));
    Agsym_t* edgeLabelSym = nullptr;
    if (anyEdgeLabel) {
        agattr(g, AGEDGE, const_cast<char*>("fontsize"), number(options.labelFontSize).data());
        edgeLabelSym = agattr(g, AGEDGE, const_cast<char*>("label"), const_cast<char*>(""));
    }

    // Clusters, parents before children.
    std::vector<Agraph_t*> clusterGraphs(input.clusters.size(), nullptr);
    std::vector<size_t> clusterOrder(input.clusters.size());
    for (size_t i = 0; i < clusterOrder.size(); ++i) clusterOrder[i] = i;
    std::stable_sort(clusterOrder.begin(), clusterOrder.end(),
                     [&](size_t a, size_t b) { return depth[a] < depth[b]; });
    for (size_t i : clusterOrder) {
        const LayoutCluster& cluster = input.clusters[i];
        Agraph_t* parent =
            cluster.parent.empty() ? g : clusterGraphs[clusterIndex.at(cluster.parent)];
        std::string name = "cluster_" + std::to_string(i);
        Agraph_t* sub = agsubg(parent, name.data(), 1);
        if (!sub) return failure(Status::kError, "Graphviz could not create cluster '" + cluster.id + "'");
        std::string label = escapeLabel(cluster.label);
        agsafeset(sub, const_cast<char*>("label"), label.data(), const_cast<char*>(""));
        clusterGraphs[i] = sub;
    }

    std::vector<Agnode_t*> nodes(input.nodes.size(), nullptr);
    for (size_t i = 0; i < input.nodes.size(); ++i) {
        const LayoutNode& node = input.nodes[i];
        std::string name = "n" + std::to_string(i);
        Agnode_t* n = agnode(g, name.data(), 1);
        if (!n) return failure(Status::kError, "Graphviz could not create node '" + node.id + "'");
        agxset(n, widthSym, inches(node.width).data());
        agxset(n, heightSym, inches(node.height).data());
        if (!node.cluster.empty()) agsubnode(clusterGraphs[clusterIndex.at(node.cluster)], n, 1);
        nodes[i] = n;
    }
    std::vector<Agedge_t*> edges(input.edges.size(), nullptr);
    for (size_t i = 0; i < input.edges.size(); ++i) {
        if (!input.edges[i].route) continue;
        Agedge_t* e = agedge(g, nodes[edgeEnds[i].first], nodes[edgeEnds[i].second], nullptr, 1);
        if (!e) return failure(Status::kError, "Graphviz could not create edge '" +
                                                   input.edges[i].from + "' -> '" + input.edges[i].to + "'");
        if (edgeLabelSym && !input.edges[i].label.empty()) {
            std::string label = escapeLabel(input.edges[i].label);
            agxset(e, edgeLabelSym, label.data());
        }
        edges[i] = e;
    }

    if (gvLayout(guard.context, g, "dot") != 0) {
        std::string message = graphvizErrors().empty() ? "Graphviz dot layout failed"
                                                         : "Graphviz: " + graphvizErrors();
        return failure(Status::kError, message);
    }
    guard.laidOut = true;
    if (cancelled(options)) return failure(Status::kCancelled, "layout cancelled");

    // Graphviz's y grows upwards; flip into a top-left origin.
    const boxf bb = GD_bb(g);
    auto point = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };

    LayoutResult result;
    result.status = Status::kOk;
    result.bounds = {0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y};
    result.nodes.resize(input.nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        Agnode_t* n = nodes[i];
        result.nodes[i].center = point(ND_coord(n));
        result.nodes[i].width = ND_width(n) * 72.0;
        result.nodes[i].height = ND_height(n) * 72.0;
    }
    result.clusters.resize(input.clusters.size());
    for (size_t i = 0; i < clusterGraphs.size(); ++i) {
        Agraph_t* sub = clusterGraphs[i];
        const boxf cb = GD_bb(sub);
        const LayoutPoint topLeft = point(pointf{cb.LL.x, cb.UR.y});
        ClusterGeometry& geometry = result.clusters[i];
        geometry.box = {topLeft.x, topLeft.y, cb.UR.x - cb.LL.x, cb.UR.y - cb.LL.y};
        if (GD_label(sub) && GD_label(sub)->set)
            geometry.labelCenter = point(GD_label(sub)->pos);
        else
            geometry.labelCenter = {geometry.box.x + geometry.box.width / 2, geometry.box.y + 8};
    }
    result.edges.resize(input.edges.size());
    for (size_t i = 0; i < edges.size(); ++i) {
        Agedge_t* e = edges[i];
        EdgeGeometry& geometry = result.edges[i];
        if (!e) {  // not routed: one curve between the nodes
            const NodeGeometry& from = result.nodes[edgeEnds[i].first];
            const NodeGeometry& to = result.nodes[edgeEnds[i].second];
            const LayoutPoint start{from.center.x, from.center.y + from.height / 2};
            const LayoutPoint tip{to.center.x, to.center.y - to.height / 2};
            const LayoutPoint end{tip.x, tip.y - 8};
            const double bend = std::max(30.0, (end.y - start.y) / 2);
            geometry.points = {start, {start.x, start.y + bend}, {end.x, end.y - bend}, end};
            geometry.hasArrow = true;
            geometry.arrowTip = tip;
            continue;
        }
        const splines* spl = ED_spl(e);
        if (spl) {
            for (int b = 0; b < spl->size; ++b) {
                const bezier& bz = spl->list[b];
                for (int k = 0; k < bz.size; ++k) geometry.points.push_back(point(bz.list[k]));
                if (bz.eflag) {
                    geometry.hasArrow = true;
                    geometry.arrowTip = point(bz.ep);
                }
            }
        }
        if (ED_label(e) && ED_label(e)->set) {
            geometry.hasLabel = true;
            geometry.labelCenter = point(ED_label(e)->pos);
        }
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace hloscope::layout
