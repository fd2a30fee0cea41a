// GraphBuilder: the visible graph of a module for the graph view.
//
// One node per instruction of the entry computation. Fusion, call, while and
// conditional instructions are collapsible: collapsed, one node labelled with
// the kind and the number of instructions inside; expanded, a labelled
// cluster holding the called computation(s). For fusions and calls the
// parameters of the called computation are not drawn: the outer operands'
// edges go straight to the parameters' users. Very large entry computations
// (more than kLargeGraphNodes = 1500 instructions: dot needs tens of seconds for ~2000 nodes) are shown as groups of
// consecutive instructions (in instruction order, so edges between groups
// mostly point down), each expandable.
//
// With the model's layers (compiler/layers/layer_tree.h), a large module is drawn by
// them instead: each layer one node ("decoder_block_3 ×12", its ops and kernels at
// this step), expanded into a cluster of its sub-layers and instructions; edges
// between collapsed layers carry how many values and bytes they stand for. A
// while loop or call whose body has layers draws its body by them when expanded.
//
// Keys: an entry instruction's key is its name; an instruction inside an
// expanded instruction X is "<key of X>/<name>" (and "<key of X>/<computation>/
// <name>" when X calls several computations); groups are "group:<n>", layers
// "layer:<layer key>".
#pragma once

#include <QColor>
#include <QHash>
#include <QList>
#include <QPair>
#include <QSet>
#include <QString>
#include <cstdint>
#include <vector>

#include "views/layout/graph_layout.h"
#include "views/model/model_layers.h"

namespace hloscope {

class HloModule;
class HloInstruction;

enum class NodeCategory {
    kParameter,
    kConstant,
    kElementwise,
    kReduction,
    kDot,           // dot, convolution
    kDataMovement,  // reshape, transpose, broadcast, slice, concatenate, copy, ...
    kControlFlow,   // while, conditional, call
    kFusion,
    kTuple,         // tuple, get-tuple-element
    kCollective,
    kOther,
    kGroup,  // a group of entry instructions (large modules)
};

NodeCategory nodeCategoryOf(const HloInstruction& instruction);
QString nodeCategoryName(NodeCategory category);
// Fill colour of a category; `dark` picks the variant for dark palettes.
QColor nodeCategoryColor(NodeCategory category, bool dark);

struct GraphNode {
    QString key;          // unique in the visible graph
    QString instruction;  // instruction name; empty for a group
    QString opcode;       // "add", "fusion", "group"
    QString title;        // first line ("fusion kLoop", "group 3")
    QString subtitle;     // second line (name, "12 instructions")
    QString shape;        // result shape text
    NodeCategory category = NodeCategory::kOther;
    int64_t uniqueId = -1;
    QString cluster;      // key of the enclosing cluster; empty: top level
    bool expandable = false;
    int innerCount = 0;   // instructions inside (collapsed fusion/call/group)
    bool isRoot = false;  // root of its computation
    double width = 0;     // points
    double height = 0;
};

struct GraphCluster {
    QString key;     // key of the expanded instruction or group
    QString label;
    QString parent;  // enclosing cluster key
    int64_t uniqueId = -1;
    NodeCategory category = NodeCategory::kOther;
};

struct GraphEdge {
    QString from;  // node keys
    QString to;
    QString producer;  // instruction names (producer empty for grouped edges)
    QString consumer;
    int64_t producerId = -1;
    int64_t consumerId = -1;
    QString shape;      // the value's shape (producer result)
    int multiplicity = 1;  // values carried (edges between groups)
    double bytes = 0;      // their sizes summed
    bool route = true;     // laid out by dot (long edges between groups are not)
};

struct CollapseState {
    QSet<QString> expanded;  // keys of expanded instructions, layers and groups
    bool grouped = false;    // group the entry computation's instructions
    int groupSize = 0;       // instructions per group; 0: automatic
    // With layers, a grouped module is drawn by its layers ("layer:<key>" nodes, collapsed
    // until expanded); without, as groups of consecutive instructions.
    ModelLayersPtr layers;
    // Drawn by layers: the layer drilled into (its key; empty: the whole module). Only its
    // contents are drawn, with what they exchange values with outside shown as the outside
    // layers (or instructions) next to its path.
    QString focus;
};

// Text metrics for node sizes, measured once on the GUI thread so the
// builder can run in a worker.
struct GraphMetrics {
    double charWidth = 7;    // average character width of the node font
    double lineHeight = 14;
    bool showShapes = false;  // third line with the result shape
};

struct VisibleGraph {
    std::vector<GraphNode> nodes;
    std::vector<GraphCluster> clusters;
    std::vector<GraphEdge> edges;
    QHash<QString, int> nodeIndex;     // key -> index in nodes
    QHash<QString, int> clusterIndex;  // key -> index in clusters
    // Instruction name -> key of the node (or cluster) that shows it: its
    // own node, or the collapsed fusion/group holding it.
    QHash<QString, QString> shownBy;
    int64_t instructionCount = 0;  // in the whole module
    int groupSize = 0;             // when grouped into consecutive groups
    bool layered = false;          // when drawn by the model's layers
    // Drawn by layers: the path from the module down to the layer drilled into, as
    // (layer key, name) pairs; just the module when none is.
    QList<QPair<QString, QString>> breadcrumb;

    const GraphNode* node(const QString& key) const;
    layout::LayoutGraph toLayoutGraph(bool edgeLabels) const;
    // Equal signatures: same nodes, sizes, clusters and edges (layouts reusable).
    quint64 signature(bool edgeLabels) const;
};

class GraphBuilder {
public:
    static constexpr int kLargeGraphNodes = 1500;
    // With the model's layers known, an entry computation of more instructions than this is
    // drawn by its layers.
    static constexpr int kLayeredGraphNodes = 400;

    // Collapse state for a module just opened: everything collapsed; the entry computation
    // drawn by its layers when `layers` is given and it has more than kLayeredGraphNodes
    // instructions, else grouped when it has more than kLargeGraphNodes.
    static CollapseState initialState(const HloModule& module, ModelLayersPtr layers = nullptr);
    static VisibleGraph build(const HloModule& module, const CollapseState& state,
                              const GraphMetrics& metrics = {});
    static bool isExpandable(const HloInstruction& instruction);
    // Whether the layer of this node key ("layer:<key>") can be drilled into: a layer of the
    // entry computation (not inside a loop's body).
    static bool canDrillInto(const LayerTree& tree, const QString& nodeKey);
};

}  // namespace hloscope
