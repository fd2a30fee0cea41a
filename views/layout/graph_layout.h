// Qt-free graph layout: a plain description of a graph (nodes with sizes,
// nested clusters, edges) in, plain geometry out, computed by Graphviz `dot`
// (top to bottom ranks). Graphviz is not thread-safe: every call is
// serialised by one mutex inside this library, which also keeps the single
// Graphviz context. Coordinates are in points with y growing downwards and
// the overall bounding box starting at (0, 0).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace hloscope::layout {

struct LayoutNode {
    std::string id;       // unique among the nodes
    double width = 54;    // points
    double height = 36;   // points
    std::string cluster;  // id of the innermost cluster holding it; empty: none
};

struct LayoutCluster {
    std::string id;      // unique among the clusters
    std::string label;   // drawn at the top of the box (its size is reserved)
    std::string parent;  // enclosing cluster id; empty: top level
};

struct LayoutEdge {
    std::string from;   // node ids
    std::string to;
    std::string label;  // optional; its size is reserved next to the edge
    // false: not given to dot (no rank constraint, no virtual nodes); drawn
    // afterwards as one curve from the bottom of `from` to the top of `to`.
    // For long edges of overview graphs, which would otherwise cost dot
    // one virtual node per rank crossed.
    bool route = true;
};

struct LayoutGraph {
    std::vector<LayoutNode> nodes;
    std::vector<LayoutCluster> clusters;
    std::vector<LayoutEdge> edges;
};

struct LayoutPoint {
    double x = 0;
    double y = 0;
};

struct LayoutRect {
    double x = 0;  // top-left corner
    double y = 0;
    double width = 0;
    double height = 0;
    bool contains(const LayoutPoint& p, double tolerance = 0.5) const {
        return p.x >= x - tolerance && p.x <= x + width + tolerance && p.y >= y - tolerance &&
               p.y <= y + height + tolerance;
    }
};

struct NodeGeometry {
    LayoutPoint center;
    double width = 0;
    double height = 0;
    LayoutRect rect() const {
        return {center.x - width / 2, center.y - height / 2, width, height};
    }
};

struct ClusterGeometry {
    LayoutRect box;
    LayoutPoint labelCenter;  // where the label goes (inside the top of the box)
};

struct EdgeGeometry {
    // Cubic Bezier control points: p0, then (c1, c2, p) triples; at least 4
    // points for a laid-out edge, empty if Graphviz did not route it.
    std::vector<LayoutPoint> points;
    bool hasArrow = false;  // arrowTip set: the arrow goes from points.back() to it
    LayoutPoint arrowTip;
    bool hasLabel = false;
    LayoutPoint labelCenter;
};

struct LayoutOptions {
    double rankSeparation = 36;  // points between ranks
    double nodeSeparation = 18;  // points between nodes of a rank
    double labelFontSize = 10;   // edge/cluster labels, for the space Graphviz reserves
    // Cap on dot's crossing-minimisation passes (Graphviz `mclimit`); lower is faster.
    double crossingLimit = 1.0;
    // Cap on dot's network-simplex iterations, as a multiple of the node
    // count (Graphviz `nslimit`/`nslimit1`); 0: unbounded. Without a cap the
    // x-coordinate pass of a ~2000-node graph can run for minutes.
    double networkSimplexLimit = 2.0;
    // Above this many routed edges, edges are drawn as polylines instead of
    // curved splines (dot's spline router dominates on dense graphs).
    int splineEdgeLimit = 1500;
    // Checked before the layout starts, while waiting for the lock and after
    // Graphviz returns; a cancelled layout returns status kCancelled.
    const std::atomic<bool>* cancel = nullptr;
};

struct LayoutResult {
    enum class Status { kOk, kError, kCancelled };
    Status status = Status::kError;
    std::string error;  // when not kOk
    // Same order as the input's nodes / clusters / edges.
    std::vector<NodeGeometry> nodes;
    std::vector<ClusterGeometry> clusters;
    std::vector<EdgeGeometry> edges;
    LayoutRect bounds;  // everything drawn
    double seconds = 0;  // time inside Graphviz (lock wait excluded)

    bool ok() const { return status == Status::kOk; }
};

// Lays `graph` out with Graphviz dot. Bad input (duplicate ids, edges or
// clusters naming unknown ids, cluster cycles) gives kError with a message.
LayoutResult computeLayout(const LayoutGraph& graph, const LayoutOptions& options = {});

}  // namespace hloscope::layout
