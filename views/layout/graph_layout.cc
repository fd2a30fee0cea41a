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

// The input's indices, checked: unique ids, known parents and clusters,
// edges between known nodes, no cluster its own ancestor.
struct CheckedInput {
    std::unordered_map<std::string_view, size_t> nodeIndex;
    std::unordered_map<std::string_view, size_t> clusterIndex;
    std::vector<std::pair<size_t, size_t>> edgeEnds;  // node indices of each edge
    std::vector<int> depth;                           // per cluster: parents first
};

// Empty when `input` is well formed, else what is wrong with it.
std::string checkInput(const LayoutGraph& input, CheckedInput& checked) {
    checked.nodeIndex.reserve(input.nodes.size());
    for (size_t i = 0; i < input.nodes.size(); ++i) {
        const LayoutNode& node = input.nodes[i];
        if (node.id.empty()) return "node " + std::to_string(i) + " has no id";
        if (!(node.width > 0) || !(node.height > 0))
            return "node '" + node.id + "' has a non-positive size";
        if (!checked.nodeIndex.emplace(node.id, i).second)
            return "duplicate node id '" + node.id + "'";
    }
    for (size_t i = 0; i < input.clusters.size(); ++i) {
        if (!checked.clusterIndex.emplace(input.clusters[i].id, i).second)
            return "duplicate cluster id '" + input.clusters[i].id + "'";
    }
    for (const LayoutCluster& cluster : input.clusters) {
        if (!cluster.parent.empty() && !checked.clusterIndex.count(cluster.parent))
            return "cluster '" + cluster.id + "' has unknown parent '" + cluster.parent + "'";
    }
    for (const LayoutNode& node : input.nodes) {
        if (!node.cluster.empty() && !checked.clusterIndex.count(node.cluster))
            return "node '" + node.id + "' is in unknown cluster '" + node.cluster + "'";
    }
    checked.edgeEnds.reserve(input.edges.size());
    for (const LayoutEdge& edge : input.edges) {
        auto from = checked.nodeIndex.find(edge.from);
        auto to = checked.nodeIndex.find(edge.to);
        if (from == checked.nodeIndex.end() || to == checked.nodeIndex.end())
            return "edge '" + edge.from + "' -> '" + edge.to + "' names an unknown node";
        checked.edgeEnds.emplace_back(from->second, to->second);
    }
    // Cluster depth (parents first), rejecting cycles.
    checked.depth.assign(input.clusters.size(), -1);
    for (size_t i = 0; i < input.clusters.size(); ++i) {
        int d = 0;
        size_t c = i;
        while (!input.clusters[c].parent.empty()) {
            c = checked.clusterIndex.at(input.clusters[c].parent);
            if (++d > static_cast<int>(input.clusters.size()))
                return "cluster '" + input.clusters[i].id + "' is its own ancestor";
        }
        checked.depth[i] = d;
    }
    return {};
}

// The per-node and per-edge attributes setGraphAttributes declares.
struct GraphSymbols {
    Agsym_t* width = nullptr;
    Agsym_t* height = nullptr;
    Agsym_t* edgeLabel = nullptr;  // null when no routed edge has a label
};

// The graph's defaults: top-to-bottom dot with the options' spacing, fixed-size box nodes.
GraphSymbols setGraphAttributes(Agraph_t* g, const LayoutGraph& input, const LayoutOptions& options) {
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
    GraphSymbols symbols;
    symbols.width = agattr(g, AGNODE, const_cast<char*>("width"), const_cast<char*>("0.75"));
    symbols.height = agattr(g, AGNODE, const_cast<char*>("height"), const_cast<char*>("0.5"));
    if (anyEdgeLabel) {
        agattr(g, AGEDGE, const_cast<char*>("fontsize"), number(options.labelFontSize).data());
        symbols.edgeLabel = agattr(g, AGEDGE, const_cast<char*>("label"), const_cast<char*>(""));
    }
    return symbols;
}

// The input as cgraph objects, by input index (edges: null when not routed).
struct BuiltGraph {
    std::vector<Agraph_t*> clusters;
    std::vector<Agnode_t*> nodes;
    std::vector<Agedge_t*> edges;
};

// Creates the clusters (parents before children), nodes and routed edges;
// empty when done, else what Graphviz could not create.
std::string buildGraph(Agraph_t* g, const LayoutGraph& input, const CheckedInput& checked,
                       const GraphSymbols& symbols, BuiltGraph& built) {
    built.clusters.assign(input.clusters.size(), nullptr);
    std::vector<size_t> clusterOrder(input.clusters.size());
    for (size_t i = 0; i < clusterOrder.size(); ++i) clusterOrder[i] = i;
    std::stable_sort(clusterOrder.begin(), clusterOrder.end(),
                     [&](size_t a, size_t b) { return checked.depth[a] < checked.depth[b]; });
    for (size_t i : clusterOrder) {
        const LayoutCluster& cluster = input.clusters[i];
        Agraph_t* parent =
            cluster.parent.empty() ? g : built.clusters[checked.clusterIndex.at(cluster.parent)];
        std::string name = "cluster_" + std::to_string(i);
        Agraph_t* sub = agsubg(parent, name.data(), 1);
        if (!sub) return "Graphviz could not create cluster '" + cluster.id + "'";
        std::string label = escapeLabel(cluster.label);
        agsafeset(sub, const_cast<char*>("label"), label.data(), const_cast<char*>(""));
        built.clusters[i] = sub;
    }
    built.nodes.assign(input.nodes.size(), nullptr);
    for (size_t i = 0; i < input.nodes.size(); ++i) {
        const LayoutNode& node = input.nodes[i];
        std::string name = "n" + std::to_string(i);
        Agnode_t* n = agnode(g, name.data(), 1);
        if (!n) return "Graphviz could not create node '" + node.id + "'";
        agxset(n, symbols.width, inches(node.width).data());
        agxset(n, symbols.height, inches(node.height).data());
        if (!node.cluster.empty())
            agsubnode(built.clusters[checked.clusterIndex.at(node.cluster)], n, 1);
        built.nodes[i] = n;
    }
    built.edges.assign(input.edges.size(), nullptr);
    for (size_t i = 0; i < input.edges.size(); ++i) {
        if (!input.edges[i].route) continue;
        Agedge_t* e = agedge(g, built.nodes[checked.edgeEnds[i].first],
                             built.nodes[checked.edgeEnds[i].second], nullptr, 1);
        if (!e)
            return "Graphviz could not create edge '" + input.edges[i].from + "' -> '" +
                   input.edges[i].to + "'";
        if (symbols.edgeLabel && !input.edges[i].label.empty()) {
            std::string label = escapeLabel(input.edges[i].label);
            agxset(e, symbols.edgeLabel, label.data());
        }
        built.edges[i] = e;
    }
    return {};
}

// The laid-out graph's geometry, with a top-left origin (Graphviz's y grows
// upwards); an edge that was not routed gets one curve between its nodes.
LayoutResult readGeometry(Agraph_t* g, const CheckedInput& checked, const BuiltGraph& built) {
    const boxf bb = GD_bb(g);
    auto point = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };

    LayoutResult result;
    result.status = LayoutResult::Status::kOk;
    result.bounds = {0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y};
    result.nodes.resize(built.nodes.size());
    for (size_t i = 0; i < built.nodes.size(); ++i) {
        Agnode_t* n = built.nodes[i];
        result.nodes[i].center = point(ND_coord(n));
        result.nodes[i].width = ND_width(n) * 72.0;
        result.nodes[i].height = ND_height(n) * 72.0;
    }
    result.clusters.resize(built.clusters.size());
    for (size_t i = 0; i < built.clusters.size(); ++i) {
        Agraph_t* sub = built.clusters[i];
        const boxf cb = GD_bb(sub);
        const LayoutPoint topLeft = point(pointf{cb.LL.x, cb.UR.y});
        ClusterGeometry& geometry = result.clusters[i];
        geometry.box = {topLeft.x, topLeft.y, cb.UR.x - cb.LL.x, cb.UR.y - cb.LL.y};
        if (GD_label(sub) && GD_label(sub)->set)
            geometry.labelCenter = point(GD_label(sub)->pos);
        else
            geometry.labelCenter = {geometry.box.x + geometry.box.width / 2, geometry.box.y + 8};
    }
    result.edges.resize(built.edges.size());
    for (size_t i = 0; i < built.edges.size(); ++i) {
        Agedge_t* e = built.edges[i];
        EdgeGeometry& geometry = result.edges[i];
        if (!e) {  // not routed: one curve between the nodes
            const NodeGeometry& from = result.nodes[checked.edgeEnds[i].first];
            const NodeGeometry& to = result.nodes[checked.edgeEnds[i].second];
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
    return result;
}

}  // namespace

LayoutResult computeLayout(const LayoutGraph& input, const LayoutOptions& options) {
    using Status = LayoutResult::Status;
    if (cancelled(options)) return failure(Status::kCancelled, "layout cancelled");

    // Validate ids before touching Graphviz.
    CheckedInput checked;
    if (std::string error = checkInput(input, checked); !error.empty())
        return failure(Status::kError, std::move(error));

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

    const GraphSymbols symbols = setGraphAttributes(g, input, options);
    BuiltGraph built;
    if (std::string error = buildGraph(g, input, checked, symbols, built); !error.empty())
        return failure(Status::kError, std::move(error));

    if (gvLayout(guard.context, g, "dot") != 0) {
        std::string message = graphvizErrors().empty() ? "Graphviz dot layout failed"
                                                         : "Graphviz: " + graphvizErrors();
        return failure(Status::kError, message);
    }
    guard.laidOut = true;
    if (cancelled(options)) return failure(Status::kCancelled, "layout cancelled");

    LayoutResult result = readGeometry(g, checked, built);
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace hloscope::layout
