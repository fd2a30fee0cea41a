#include "views/graph/graph_builder.h"

#include <QPair>
#include <algorithm>
#include <map>
#include <unordered_map>

#include "compiler/cost/cost_analysis.h"
#include "compiler/layers/layer_figures.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

NodeCategory nodeCategoryOf(const HloInstruction& instruction) {
    const HloOpcode op = instruction.opcode();
    switch (op) {
        case HloOpcode::kParameter: return NodeCategory::kParameter;
        case HloOpcode::kConstant:
        case HloOpcode::kIota: return NodeCategory::kConstant;
        case HloOpcode::kFusion: return NodeCategory::kFusion;
        case HloOpcode::kTuple:
        case HloOpcode::kGetTupleElement: return NodeCategory::kTuple;
        case HloOpcode::kWhile:
        case HloOpcode::kConditional:
        case HloOpcode::kCall:
        case HloOpcode::kAsyncStart:
        case HloOpcode::kAsyncUpdate:
        case HloOpcode::kAsyncDone: return NodeCategory::kControlFlow;
        case HloOpcode::kDot:
        case HloOpcode::kConvolution:
        case HloOpcode::kRaggedDot:
        case HloOpcode::kScaledDot: return NodeCategory::kDot;
        case HloOpcode::kReduce:
        case HloOpcode::kReduceWindow:
        case HloOpcode::kSelectAndScatter: return NodeCategory::kReduction;
        case HloOpcode::kReshape:
        case HloOpcode::kDynamicReshape:
        case HloOpcode::kTranspose:
        case HloOpcode::kBroadcast:
        case HloOpcode::kSlice:
        case HloOpcode::kDynamicSlice:
        case HloOpcode::kDynamicUpdateSlice:
        case HloOpcode::kConcatenate:
        case HloOpcode::kCopy:
        case HloOpcode::kCopyStart:
        case HloOpcode::kCopyDone:
        case HloOpcode::kPad:
        case HloOpcode::kReverse:
        case HloOpcode::kGather:
        case HloOpcode::kScatter:
        case HloOpcode::kBitcast:
        case HloOpcode::kSort: return NodeCategory::kDataMovement;
        default: break;
    }
    if (hloOpcodeIsCollective(op)) return NodeCategory::kCollective;
    if (op == HloOpcode::kCustomCall) {
        const std::string_view target = instruction.customCallTarget();
        if (target.find("gemm") != std::string_view::npos ||
            target.find("matmul") != std::string_view::npos ||
            target.find("conv") != std::string_view::npos)
            return NodeCategory::kDot;
        return NodeCategory::kOther;
    }
    if (hloOpcodeIsElementwise(op)) return NodeCategory::kElementwise;
    return NodeCategory::kOther;
}

QString nodeCategoryName(NodeCategory category) {
    switch (category) {
        case NodeCategory::kParameter: return QStringLiteral("parameter");
        case NodeCategory::kConstant: return QStringLiteral("constant");
        case NodeCategory::kElementwise: return QStringLiteral("elementwise");
        case NodeCategory::kReduction: return QStringLiteral("reduction");
        case NodeCategory::kDot: return QStringLiteral("dot/convolution");
        case NodeCategory::kDataMovement: return QStringLiteral("data movement");
        case NodeCategory::kControlFlow: return QStringLiteral("control flow");
        case NodeCategory::kFusion: return QStringLiteral("fusion");
        case NodeCategory::kTuple: return QStringLiteral("tuple");
        case NodeCategory::kCollective: return QStringLiteral("collective");
        case NodeCategory::kOther: return QStringLiteral("other");
        case NodeCategory::kGroup: return QStringLiteral("group");
    }
    return QStringLiteral("other");
}

QColor nodeCategoryColor(NodeCategory category, bool dark) {
    // Hues chosen to stay distinct; light: pastel fills for dark text,
    // dark: deep fills of the same hue for light text.
    int hue = 0;
    int saturation = 0;
    switch (category) {
        case NodeCategory::kParameter: hue = 210; saturation = 90; break;    // blue
        case NodeCategory::kConstant: hue = 45; saturation = 40; break;      // sand
        case NodeCategory::kElementwise: hue = 120; saturation = 70; break;  // green
        case NodeCategory::kReduction: hue = 280; saturation = 80; break;    // purple
        case NodeCategory::kDot: hue = 0; saturation = 110; break;           // red
        case NodeCategory::kDataMovement: hue = 185; saturation = 80; break; // teal
        case NodeCategory::kControlFlow: hue = 30; saturation = 130; break;  // orange
        case NodeCategory::kFusion: hue = 330; saturation = 80; break;       // pink
        case NodeCategory::kTuple: hue = 60; saturation = 20; break;         // grey-olive
        case NodeCategory::kCollective: hue = 250; saturation = 110; break;  // indigo
        case NodeCategory::kOther: hue = 0; saturation = 0; break;           // grey
        case NodeCategory::kGroup: hue = 220; saturation = 25; break;        // slate
    }
    return dark ? QColor::fromHsl(hue, saturation, 70) : QColor::fromHsl(hue, saturation, 222);
}

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// Called computations drawn inside an expanded instruction, in order.
std::vector<const HloComputation*> bodiesOf(const HloInstruction& instruction) {
    std::vector<const HloComputation*> out;
    switch (instruction.opcode()) {
        case HloOpcode::kFusion:
            if (instruction.fusedComputation()) out.push_back(instruction.fusedComputation());
            break;
        case HloOpcode::kCall:
            if (instruction.toApply()) out.push_back(instruction.toApply());
            break;
        case HloOpcode::kWhile:
            if (instruction.whileCondition()) out.push_back(instruction.whileCondition());
            if (instruction.whileBody()) out.push_back(instruction.whileBody());
            break;
        case HloOpcode::kConditional:
            for (const HloComputation* c : instruction.calledComputations()) out.push_back(c);
            break;
        default: break;
    }
    return out;
}

// Fusions and calls: the parameters are replaced by the outer operands.
bool substitutesParameters(const HloInstruction& instruction) {
    return instruction.opcode() == HloOpcode::kFusion || instruction.opcode() == HloOpcode::kCall;
}

int64_t nonParameterCount(const HloComputation& computation) {
    return computation.instructionCount() - computation.parameterCount();
}

// Instructions that become kernels of their own (a rough count for labels).
// Whether an instruction becomes a kernel of its own (a rough rule for labels).
bool isKernel(const HloInstruction& instruction) {
    switch (instruction.opcode()) {
        case HloOpcode::kParameter:
        case HloOpcode::kConstant:
        case HloOpcode::kTuple:
        case HloOpcode::kGetTupleElement:
        case HloOpcode::kBitcast: return false;
        default: return true;
    }
}

int64_t kernelCount(const HloComputation& computation) {
    int64_t n = 0;
    for (const auto& instruction : computation.instructions()) n += isKernel(*instruction) ? 1 : 0;
    return n;
}

class Builder {
public:
    Builder(const HloModule& module, const CollapseState& state, const GraphMetrics& metrics)
        : m_module(module), m_state(state), m_metrics(metrics) {}

    VisibleGraph run() {
        m_graph.instructionCount = m_module.instructionCount();
        const HloComputation* entry = m_module.entryComputation();
        if (!entry) return std::move(m_graph);
        if (m_state.grouped && m_state.layers) buildLayeredEntry(*entry);
        else if (m_state.grouped) buildGroupedEntry(*entry);
        else buildComputation(*entry, QString(), QString(), nullptr);
        return std::move(m_graph);
    }

private:
    // --- keys and edge endpoints ---------------------------------------------
    QString groupKey(int group) const { return QStringLiteral("group:%1").arg(group); }

    bool inCollapsedGroup(const HloInstruction* instruction, const QString& prefix) const {
        if (!m_state.grouped || !prefix.isEmpty()) return false;
        auto it = m_groupOf.find(instruction);
        return it != m_groupOf.end() && !m_groupExpanded[static_cast<size_t>(it->second)];
    }

    bool isExpanded(const HloInstruction& instruction, const QString& key) const {
        return GraphBuilder::isExpandable(instruction) && m_state.expanded.contains(key);
    }

    static QString bodyPrefix(const QString& key, const HloInstruction& instruction,
                              const HloComputation& body) {
        if (bodiesOf(instruction).size() > 1) return key + '/' + qs(body.name()) + '/';
        return key + '/';
    }

    static bool omittedParameter(const HloInstruction& instruction, const HloInstruction* owner) {
        return owner && substitutesParameters(*owner) &&
               instruction.opcode() == HloOpcode::kParameter && instruction.userCount() > 0 &&
               instruction.parent() && instruction.parent()->root() != &instruction;
    }

    // Nodes that show the value of `instruction` (drawn in context `prefix`).
    void outputs(const HloInstruction* instruction, const QString& prefix, QStringList& out) const {
        if (inCollapsedGroup(instruction, prefix)) {
            out.push_back(groupKey(m_groupOf.at(instruction)));
            return;
        }
        if (const QString layer = hiddenBy(instruction); !layer.isEmpty()) {
            out.push_back(layer);
            return;
        }
        const QString key = prefix + qs(instruction->name());
        if (isExpanded(*instruction, key) && !m_graph.nodeIndex.contains(key)) {
            for (const HloComputation* body : bodiesOf(*instruction)) {
                if (instruction->opcode() == HloOpcode::kWhile && body == instruction->whileCondition())
                    continue;
                if (body->root()) outputs(body->root(), bodyPrefix(key, *instruction, *body), out);
            }
            return;
        }
        out.push_back(key);
    }

    // Nodes that consume operand `index` of `instruction`.
    void inputs(const HloInstruction* instruction, const QString& prefix, int64_t index,
                QStringList& out) const {
        if (inCollapsedGroup(instruction, prefix)) {
            out.push_back(groupKey(m_groupOf.at(instruction)));
            return;
        }
        if (const QString layer = hiddenBy(instruction); !layer.isEmpty()) {
            out.push_back(layer);
            return;
        }
        const QString key = prefix + qs(instruction->name());
        if (!isExpanded(*instruction, key) || m_graph.nodeIndex.contains(key)) {
            out.push_back(key);
            return;
        }
        const std::vector<const HloComputation*> bodies = bodiesOf(*instruction);
        if (substitutesParameters(*instruction)) {
            const HloComputation* body = bodies.front();
            const QString inner = bodyPrefix(key, *instruction, *body);
            if (index >= body->parameterCount()) return;
            const HloInstruction* parameter = body->parameter(index);
            if (!omittedParameter(*parameter, instruction)) {
                out.push_back(inner + qs(parameter->name()));
                return;
            }
            const HloInstruction* previous = nullptr;
            for (const HloInstruction* user : parameter->users()) {
                if (user == previous) continue;  // users may repeat
                previous = user;
                for (int64_t j = 0; j < user->operandCount(); ++j)
                    if (user->operand(j) == parameter) inputs(user, inner, j, out);
            }
            return;
        }
        for (size_t b = 0; b < bodies.size(); ++b) {
            const HloComputation* body = bodies[b];
            // conditional: operand 0 selects the branch and feeds every branch;
            // operand i + 1 is branch i's argument.
            if (instruction->opcode() == HloOpcode::kConditional && index > 0 &&
                static_cast<size_t>(index - 1) != b)
                continue;
            if (body->parameterCount() == 0) continue;
            out.push_back(bodyPrefix(key, *instruction, *body) + qs(body->parameter(0)->name()));
        }
    }

    // --- nodes ------------------------------------------------------------------
    void sizeNode(GraphNode& node) const {
        qsizetype chars = std::max(node.title.size(), node.subtitle.size());
        // A layer's counts change from step to step; its size must not, so that a step that
        // keeps the layers and their edges keeps their layout (room for "99999 ops · 99999 kernels").
        if (node.opcode == QLatin1String("layer")) chars = std::max<qsizetype>(node.title.size(), 26);
        int lines = node.subtitle.isEmpty() ? 1 : 2;
        if (m_metrics.showShapes && !node.shape.isEmpty()) {
            chars = std::max(chars, node.shape.size());
            ++lines;
        }
        chars = std::min<qsizetype>(chars, 48);  // longer text is elided
        double width = static_cast<double>(chars) * m_metrics.charWidth + 20;
        if (node.category == NodeCategory::kParameter || node.category == NodeCategory::kConstant)
            width *= 1.2;  // ellipse / hexagon need room at the sides
        node.width = std::max(width, 60.0);
        node.height = lines * m_metrics.lineHeight + 12;
    }

    void markShownBy(const HloComputation& computation, const QString& key) {
        for (const auto& instruction : computation.instructions()) {
            const QString name = qs(instruction->name());
            if (!m_graph.shownBy.contains(name)) m_graph.shownBy.insert(name, key);
            for (const HloComputation* body : bodiesOf(*instruction)) markShownBy(*body, key);
        }
    }

    void addNode(const HloInstruction& instruction, const QString& prefix, const QString& cluster) {
        GraphNode node;
        node.key = prefix + qs(instruction.name());
        node.instruction = qs(instruction.name());
        node.opcode = qs(hloOpcodeString(instruction.opcode()));
        node.category = nodeCategoryOf(instruction);
        node.uniqueId = instruction.uniqueId();
        node.cluster = cluster;
        node.shape = qs(instruction.shape().toString());
        node.isRoot = instruction.parent() && instruction.parent()->root() == &instruction;
        node.expandable = GraphBuilder::isExpandable(instruction);
        node.title = node.opcode;
        if (instruction.opcode() == HloOpcode::kFusion && !instruction.fusionKind().empty())
            node.title += ' ' + qs(instruction.fusionKind());
        else if (instruction.opcode() == HloOpcode::kCustomCall)
            node.title += ' ' + qs(instruction.customCallTarget());
        if (node.expandable) {
            for (const HloComputation* body : bodiesOf(instruction))
                node.innerCount += static_cast<int>(nonParameterCount(*body));
            node.title += QStringLiteral(" (%1 ops)").arg(node.innerCount);
        }
        node.subtitle = node.instruction;
        sizeNode(node);
        if (!m_graph.shownBy.contains(node.instruction)) m_graph.shownBy.insert(node.instruction, node.key);
        m_graph.nodeIndex.insert(node.key, static_cast<int>(m_graph.nodes.size()));
        m_graph.nodes.push_back(std::move(node));
    }

    void addCluster(const QString& key, const QString& label, const QString& parent, int64_t id,
                    NodeCategory category) {
        m_graph.clusterIndex.insert(key, static_cast<int>(m_graph.clusters.size()));
        m_graph.clusters.push_back(GraphCluster{key, label, parent, id, category});
    }

    void addEdges(const HloInstruction* producer, const QString& producerPrefix,
                  const HloInstruction* consumer, const QString& consumerPrefix, int64_t index) {
        QStringList from, to;
        outputs(producer, producerPrefix, from);
        inputs(consumer, consumerPrefix, index, to);
        for (const QString& f : from) {
            for (const QString& t : to) {
                if (f == t) continue;  // inside one collapsed group
                if (f == kNotDrawn || t == kNotDrawn) continue;  // outside the layer drilled into
                const bool grouped = f.startsWith(QLatin1String("group:")) ||
                                     t.startsWith(QLatin1String("group:")) ||
                                     f.startsWith(QLatin1String("layer:")) || t.startsWith(QLatin1String("layer:"));
                if (grouped) {
                    auto it = m_groupEdges.find(qMakePair(f, t));
                    if (it != m_groupEdges.end()) {
                        GraphEdge& edge = m_graph.edges[static_cast<size_t>(*it)];
                        ++edge.multiplicity;
                        edge.bytes += CostAnalysis::byteSize(producer->shape());
                        continue;
                    }
                    m_groupEdges.insert(qMakePair(f, t), static_cast<int>(m_graph.edges.size()));
                }
                GraphEdge edge;
                edge.from = f;
                edge.to = t;
                edge.producer = qs(producer->name());
                edge.consumer = qs(consumer->name());
                edge.producerId = producer->uniqueId();
                edge.consumerId = consumer->uniqueId();
                edge.shape = qs(producer->shape().toString());
                edge.bytes = CostAnalysis::byteSize(producer->shape());
                // The folded parameters feed every layer: their edges are not routed.
                if (const GraphNode* from = grouped ? m_graph.node(f) : nullptr;
                    from && from->opcode == QLatin1String("layer") && from->category == NodeCategory::kParameter)
                    edge.route = false;
                m_graph.edges.push_back(std::move(edge));
            }
        }
    }

    // Nodes of `computation` drawn in `cluster`; `owner` is the expanded
    // instruction calling it (null for the entry).
    void buildComputation(const HloComputation& computation, const QString& prefix,
                          const QString& cluster, const HloInstruction* owner) {
        for (const auto& instruction : computation.instructions()) {
            if (omittedParameter(*instruction, owner)) continue;
            addInstruction(*instruction, prefix, cluster);
        }
        for (const auto& instruction : computation.instructions()) {
            if (omittedParameter(*instruction, owner)) continue;
            for (int64_t j = 0; j < instruction->operandCount(); ++j) {
                const HloInstruction* operand = instruction->operand(j);
                if (omittedParameter(*operand, owner)) continue;  // edges come from outside
                addEdges(operand, prefix, instruction.get(), prefix, j);
            }
        }
    }

    // One instruction: a node, or a cluster with its bodies when expanded.
    void addInstruction(const HloInstruction& instruction, const QString& prefix,
                        const QString& cluster) {
        const QString key = prefix + qs(instruction.name());
        if (!isExpanded(instruction, key)) {
            addNode(instruction, prefix, cluster);
            for (const HloComputation* body : bodiesOf(instruction)) markShownBy(*body, key);
            return;
        }
        const std::vector<const HloComputation*> bodies = bodiesOf(instruction);
        int64_t inner = 0, kernels = 0;
        for (const HloComputation* body : bodies) {
            inner += nonParameterCount(*body);
            kernels += kernelCount(*body);
        }
        if (instruction.opcode() == HloOpcode::kFusion) kernels = 1;
        QString label = qs(instruction.name()) + QStringLiteral("  ") + qs(hloOpcodeString(instruction.opcode()));
        if (!instruction.fusionKind().empty()) label += ' ' + qs(instruction.fusionKind());
        label += QStringLiteral(" · %1 ops · %2 kernel%3")
                     .arg(inner)
                     .arg(kernels)
                     .arg(kernels == 1 ? QString() : QStringLiteral("s"));
        addCluster(key, label, cluster, instruction.uniqueId(), nodeCategoryOf(instruction));
        if (!m_graph.shownBy.contains(qs(instruction.name())))
            m_graph.shownBy.insert(qs(instruction.name()), key);
        for (const HloComputation* body : bodies) {
            QString bodyCluster = key;
            if (bodies.size() > 1) {
                bodyCluster = key + '/' + qs(body->name());
                addCluster(bodyCluster, qs(body->name()), key, -1, NodeCategory::kControlFlow);
            }
            if (auto it = m_bodyLayer.find(body); it != m_bodyLayer.end()) {
                drawLayer(it->second, bodyCluster, bodyPrefix(key, instruction, *body), &instruction);
                addComputationEdges(*body, bodyPrefix(key, instruction, *body), &instruction);
            } else {
                buildComputation(*body, bodyPrefix(key, instruction, *body), bodyCluster, &instruction);
            }
        }
    }

    // --- layers -------------------------------------------------------------------
    const LayerTree& tree() const { return m_state.layers->tree; }
    static QString layerKey(const Layer& layer) { return QStringLiteral("layer:") + qs(layer.key); }
    // Call layers are their caller's node; a called computation's layer is drawn inside it.
    static bool drawnAsNode(const Layer& layer) {
        return layer.kind != LayerKind::kModule && layer.kind != LayerKind::kCall &&
               layer.kind != LayerKind::kComputation;
    }

    // The key of the outermost collapsed layer that hides `instruction`; empty when none does
    // (or the module is not drawn by layers).
    QString hiddenBy(const HloInstruction* instruction) const {
        if (m_ownerOf.empty()) return {};
        auto it = m_ownerOf.find(instruction);
        if (it == m_ownerOf.end()) return {};
        if (!m_insideFocus[static_cast<size_t>(it->second)]) {
            auto outside = m_outsideKey.find(instruction);
            return outside == m_outsideKey.end() ? kNotDrawn : outside->second;
        }
        const int hider = m_hiddenBy[static_cast<size_t>(it->second)];
        return hider > 0 ? m_layerKeys[static_cast<size_t>(hider)] : QString();
    }

    // For every layer: its node key, whether it lies inside the focus, and the outermost
    // collapsed layer (below the focus, within its computation) that hides what it holds.
    void prepareHiding() {
        const LayerTree& t = tree();
        const size_t n = static_cast<size_t>(t.size());
        m_layerKeys.resize(n);
        m_insideFocus.assign(n, false);
        m_hiddenBy.assign(n, -1);
        for (int i = 0; i < t.size(); ++i) m_layerKeys[static_cast<size_t>(i)] = layerKey(t.layer(i));
        for (int i = 0; i < t.size(); ++i) {
            const Layer& layer = t.layer(i);
            const size_t s = static_cast<size_t>(i);
            if (i == m_focus) {
                m_insideFocus[s] = true;
                continue;
            }
            if (layer.parent < 0) continue;
            const size_t parent = static_cast<size_t>(layer.parent);
            m_insideFocus[s] = m_insideFocus[parent];  // parents come first in tree order
            if (!m_insideFocus[s]) continue;
            // The parent's hider wins (outermost); a called computation starts afresh.
            m_hiddenBy[s] = layer.kind == LayerKind::kComputation ? -1 : m_hiddenBy[parent];
            if (m_hiddenBy[s] < 0 && drawnAsNode(layer) && !m_state.expanded.contains(m_layerKeys[s])) m_hiddenBy[s] = i;
        }
    }

    // Which layer owns each instruction of the drawn module (matched by name: the tree is the
    // loaded module's, the drawn one may be a later step), and each layer's ops and kernels.
    void assignLayers(const HloComputation& entry) {
        const LayerTree& t = tree();
        m_own.assign(static_cast<size_t>(t.size()), {});
        m_ops.assign(static_cast<size_t>(t.size()), 0);
        m_kernels.assign(static_cast<size_t>(t.size()), 0);
        // The called computation (or the root) a layer belongs to.
        auto contextOf = [&t](int layer) {
            while (layer > 0 && t.layer(layer).kind != LayerKind::kComputation) layer = t.layer(layer).parent;
            return std::max(layer, 0);
        };
        auto assign = [&](const HloComputation& computation, int context) {
            const std::unordered_map<const HloInstruction*, int> owners = layersOf(t, computation);
            for (const auto& x : computation.instructions()) {
                const auto found = owners.find(x.get());
                int owner = found == owners.end() ? -1 : found->second;
                if (owner < 0 || !t.contains(context, owner)) owner = context;
                // An op of a called computation now in this one (an inlined call) belongs where
                // the call was.
                while (contextOf(owner) != context) owner = t.layer(contextOf(owner)).parent;
                m_ownerOf[x.get()] = owner;
                m_own[static_cast<size_t>(owner)].push_back(x.get());
                ++m_ops[static_cast<size_t>(owner)];
                if (isKernel(*x)) ++m_kernels[static_cast<size_t>(owner)];
            }
        };
        assign(entry, LayerTree::kRoot);
        for (int i = 0; i < t.size(); ++i) {
            const Layer& layer = t.layer(i);
            if (layer.kind != LayerKind::kComputation || !layer.computation) continue;
            const HloComputation* body = m_module.findComputation(layer.computation->name());
            if (!body || body == &entry || m_bodyLayer.count(body)) continue;
            m_bodyLayer[body] = i;
            assign(*body, i);
        }
        for (int i = t.size() - 1; i > 0; --i) {
            const size_t parent = static_cast<size_t>(t.layer(i).parent);
            m_ops[parent] += m_ops[static_cast<size_t>(i)];
            m_kernels[parent] += m_kernels[static_cast<size_t>(i)];
        }
    }

    QString layerTitle(int index) const {
        const Layer& layer = tree().layer(index);
        QString title = qs(layer.name);
        if (layer.repeatClass >= 0)
            title += QStringLiteral("  ×%1").arg(tree().repeatClassSize(layer.repeatClass));
        return title;
    }

    QString layerCounts(int index) const {
        const int64_t ops = m_ops[static_cast<size_t>(index)], kernels = m_kernels[static_cast<size_t>(index)];
        return QStringLiteral("%1 ops · %2 kernel%3").arg(ops).arg(kernels).arg(kernels == 1 ? "" : "s");
    }

    // Every instruction under layer `index` is shown by node `key`.
    void markLayerShownBy(int index, const QString& key) {
        for (const HloInstruction* x : m_own[static_cast<size_t>(index)]) {
            const QString name = qs(x->name());
            if (!m_graph.shownBy.contains(name)) m_graph.shownBy.insert(name, key);
            for (const HloComputation* body : bodiesOf(*x)) markShownBy(*body, key);
        }
        for (int child : tree().layer(index).children)
            if (tree().layer(child).kind != LayerKind::kComputation) markLayerShownBy(child, key);
    }

    void addLayerNode(int index, const QString& cluster) {
        const Layer& layer = tree().layer(index);
        GraphNode node;
        node.key = layerKey(layer);
        node.opcode = QStringLiteral("layer");
        node.title = layerTitle(index);
        node.subtitle = layerCounts(index);
        node.category = layer.kind == LayerKind::kParameters ? NodeCategory::kParameter : NodeCategory::kGroup;
        node.cluster = cluster;
        node.expandable = true;
        node.innerCount = static_cast<int>(m_ops[static_cast<size_t>(index)]);
        sizeNode(node);
        markLayerShownBy(index, node.key);
        m_graph.nodeIndex.insert(node.key, static_cast<int>(m_graph.nodes.size()));
        m_graph.nodes.push_back(std::move(node));
    }

    // The layers under `index` (nodes, or clusters when expanded) and its own instructions.
    void drawLayer(int index, const QString& cluster, const QString& prefix, const HloInstruction* owner) {
        for (int child : tree().layer(index).children) {
            const Layer& layer = tree().layer(child);
            if (layer.kind == LayerKind::kComputation) continue;  // inside its caller, when expanded
            if (!drawnAsNode(layer)) {
                drawLayer(child, cluster, prefix, owner);
                continue;
            }
            const QString key = layerKey(layer);
            if (!m_state.expanded.contains(key)) {
                addLayerNode(child, cluster);
                continue;
            }
            addCluster(key, layerTitle(child) + QStringLiteral(" · ") + layerCounts(child), cluster, -1,
                       NodeCategory::kGroup);
            drawLayer(child, key, prefix, owner);
        }
        for (const HloInstruction* x : m_own[static_cast<size_t>(index)]) {
            if (omittedParameter(*x, owner)) continue;
            addInstruction(*x, prefix, cluster);
        }
    }

    void addComputationEdges(const HloComputation& computation, const QString& prefix, const HloInstruction* owner) {
        for (const auto& instruction : computation.instructions()) {
            if (omittedParameter(*instruction, owner)) continue;
            for (int64_t j = 0; j < instruction->operandCount(); ++j) {
                const HloInstruction* operand = instruction->operand(j);
                if (omittedParameter(*operand, owner)) continue;
                addEdges(operand, prefix, instruction.get(), prefix, j);
            }
        }
    }

    // An instruction outside the layer drilled into that exchanges values with it: shown as
    // the outside layer beside the focus path that holds it, or as itself when it belongs to
    // a layer on that path.
    void addOutsideNode(const HloInstruction* x) {
        if (m_outsideKey.count(x)) return;
        auto it = m_ownerOf.find(x);
        if (it == m_ownerOf.end()) return;
        int previous = it->second, i = it->second;
        while (i >= 0 && !tree().contains(i, m_focus)) {
            previous = i;
            i = tree().layer(i).parent;
        }
        QString key;
        if (previous == i || !drawnAsNode(tree().layer(previous))) {
            key = qs(x->name());
            if (!m_graph.nodeIndex.contains(key)) addNode(*x, QString(), QString());
        } else {
            key = layerKey(tree().layer(previous));
            if (!m_graph.nodeIndex.contains(key)) addLayerNode(previous, QString());
        }
        m_outsideKey.emplace(x, key);
    }

    void buildLayeredEntry(const HloComputation& entry) {
        m_graph.layered = true;
        assignLayers(entry);
        m_focus = LayerTree::kRoot;
        if (!m_state.focus.isEmpty() && GraphBuilder::canDrillInto(tree(), m_state.focus))
            m_focus = tree().find(m_state.focus.mid(6).toStdString());
        prepareHiding();
        for (int i : tree().path(m_focus))
            m_graph.breadcrumb.append({layerKey(tree().layer(i)), qs(tree().layer(i).name)});
        drawLayer(m_focus, QString(), QString(), nullptr);
        if (m_focus != LayerTree::kRoot) {
            auto inside = [&](const HloInstruction* x) {
                auto it = m_ownerOf.find(x);
                return it != m_ownerOf.end() && m_insideFocus[static_cast<size_t>(it->second)];
            };
            for (const auto& x : entry.instructions()) {
                if (!inside(x.get())) continue;
                for (const HloInstruction* operand : x->operands())
                    if (!inside(operand)) addOutsideNode(operand);
                for (const HloInstruction* user : x->users())
                    if (m_ownerOf.count(user) && !inside(user)) addOutsideNode(user);
            }
        }
        addComputationEdges(entry, QString(), nullptr);
        // Edges between layers more than kRoutedGroupSpan apart at the top level (a mask or
        // a cache every layer reads) are not routed by dot: drawn light and straight.
        QHash<QString, int> topPosition;
        const std::vector<int>& top = tree().layer(LayerTree::kRoot).children;
        std::vector<int> positionOf(static_cast<size_t>(tree().size()), -1);
        for (size_t p = 0; p < top.size(); ++p) positionOf[static_cast<size_t>(top[p])] = static_cast<int>(p);
        for (int i = 1; i < tree().size(); ++i)
            if (positionOf[static_cast<size_t>(i)] < 0)
                positionOf[static_cast<size_t>(i)] = positionOf[static_cast<size_t>(tree().layer(i).parent)];
        auto position = [&](const QString& key) -> int {
            if (key.startsWith(QLatin1String("layer:"))) {
                const int layer = tree().find(key.mid(6).toStdString());
                return layer > 0 ? positionOf[static_cast<size_t>(layer)] : -1;
            }
            const GraphNode* node = m_graph.node(key);
            if (!node || node->instruction.isEmpty()) return -1;
            const HloInstruction* x = entry.findInstruction(node->instruction.toStdString());
            auto it = x ? m_ownerOf.find(x) : m_ownerOf.end();
            return it == m_ownerOf.end() || it->second == LayerTree::kRoot ? -1 : positionOf[static_cast<size_t>(it->second)];
        };
        for (GraphEdge& edge : m_graph.edges) {
            const int from = position(edge.from), to = position(edge.to);
            if (from >= 0 && to >= 0 && std::abs(to - from) > kRoutedGroupSpan) edge.route = false;
        }
    }

    void buildGroupedEntry(const HloComputation& entry) {
        const std::vector<HloInstruction*> order = entry.postOrder();
        const int64_t n = static_cast<int64_t>(order.size());
        int64_t size = m_state.groupSize > 0 ? m_state.groupSize : std::max<int64_t>(16, (n + 119) / 120);
        m_graph.groupSize = static_cast<int>(size);
        const int64_t groups = (n + size - 1) / size;
        m_groupExpanded.assign(static_cast<size_t>(groups), false);
        for (int64_t g = 0; g < groups; ++g)
            m_groupExpanded[static_cast<size_t>(g)] = m_state.expanded.contains(groupKey(static_cast<int>(g)));
        for (int64_t i = 0; i < n; ++i) m_groupOf[order[static_cast<size_t>(i)]] = static_cast<int>(i / size);

        for (int64_t g = 0; g < groups; ++g) {
            const int64_t begin = g * size, end = std::min(n, begin + size);
            const QString key = groupKey(static_cast<int>(g));
            if (m_groupExpanded[static_cast<size_t>(g)]) {
                addCluster(key, QStringLiteral("group %1 · %2 instructions").arg(g).arg(end - begin),
                           QString(), -1, NodeCategory::kGroup);
                for (int64_t i = begin; i < end; ++i) addInstruction(*order[static_cast<size_t>(i)], QString(), key);
                continue;
            }
            std::map<std::string_view, int> opcodes;
            for (int64_t i = begin; i < end; ++i) {
                const HloInstruction* instruction = order[static_cast<size_t>(i)];
                ++opcodes[hloOpcodeString(instruction->opcode())];
                const QString name = qs(instruction->name());
                if (!m_graph.shownBy.contains(name)) m_graph.shownBy.insert(name, key);
                for (const HloComputation* body : bodiesOf(*instruction)) markShownBy(*body, key);
            }
            std::vector<std::pair<int, std::string_view>> ranked;
            for (const auto& [op, count] : opcodes) ranked.emplace_back(count, op);
            std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
                return a.first != b.first ? a.first > b.first : a.second < b.second;
            });
            QStringList summary;
            for (size_t i = 0; i < ranked.size() && i < 3; ++i)
                summary << QStringLiteral("%1 %2").arg(ranked[i].first).arg(qs(ranked[i].second));
            GraphNode node;
            node.key = key;
            node.opcode = QStringLiteral("group");
            node.title = QStringLiteral("group %1 (%2 ops)").arg(g).arg(end - begin);
            node.subtitle = summary.join(QStringLiteral(", "));
            node.shape = qs(order[static_cast<size_t>(begin)]->name()) + QStringLiteral(" … ") +
                         qs(order[static_cast<size_t>(end - 1)]->name());
            node.category = NodeCategory::kGroup;
            node.expandable = true;
            node.innerCount = static_cast<int>(end - begin);
            sizeNode(node);
            m_graph.nodeIndex.insert(node.key, static_cast<int>(m_graph.nodes.size()));
            m_graph.nodes.push_back(std::move(node));
        }
        for (const HloInstruction* instruction : order) {
            for (int64_t j = 0; j < instruction->operandCount(); ++j)
                addEdges(instruction->operand(j), QString(), instruction, QString(), j);
        }
        // Edges spanning more than a few groups are not routed by dot: each
        // would add a virtual node per rank crossed (minutes for Mixtral).
        auto groupNumber = [&](const QString& key) -> int64_t {
            const GraphNode* node = m_graph.node(key);
            if (!node) return -1;
            if (node->category == NodeCategory::kGroup) return key.mid(6).toLongLong();
            auto it = m_groupOfKey.find(key);
            return it == m_groupOfKey.end() ? -1 : *it;
        };
        QHash<QString, int64_t> position;  // in post order, for instructions shown as nodes
        for (size_t i = 0; i < order.size(); ++i) {
            const QString name = qs(order[i]->name());
            m_groupOfKey.insert(name, m_groupOf.at(order[i]));
            position.insert(name, static_cast<int64_t>(i));
        }
        const int64_t span = std::max<int64_t>(kRoutedPositionSpan, size / 4);
        for (GraphEdge& edge : m_graph.edges) {
            const int64_t from = groupNumber(edge.from), to = groupNumber(edge.to);
            if (from >= 0 && to >= 0 && std::abs(to - from) > kRoutedGroupSpan) edge.route = false;
            // Inside expanded groups, a value used far below where it is made
            // (weights, shared constants) is not routed either.
            const auto p = position.constFind(edge.from), c = position.constFind(edge.to);
            if (edge.route && p != position.cend() && c != position.cend() && *c - *p > span) edge.route = false;
        }
    }
    static constexpr int64_t kRoutedGroupSpan = 2;
    static constexpr int64_t kRoutedPositionSpan = 48;
    QHash<QString, int64_t> m_groupOfKey;

    const HloModule& m_module;
    const CollapseState& m_state;
    const GraphMetrics& m_metrics;
    VisibleGraph m_graph;
    std::unordered_map<const HloInstruction*, int> m_groupOf;
    std::vector<bool> m_groupExpanded;
    QHash<QPair<QString, QString>, int> m_groupEdges;
    // Drawn by layers: each drawn instruction's layer, each layer's own instructions, its ops
    // and kernels (subtree sums), and the called computations drawn by their layers.
    std::unordered_map<const HloInstruction*, int> m_ownerOf;
    std::vector<std::vector<const HloInstruction*>> m_own;
    std::vector<int64_t> m_ops, m_kernels;
    std::unordered_map<const HloComputation*, int> m_bodyLayer;
    int m_focus = LayerTree::kRoot;
    std::vector<QString> m_layerKeys;
    std::vector<bool> m_insideFocus;
    std::vector<int> m_hiddenBy;
    std::unordered_map<const HloInstruction*, QString> m_outsideKey;
    inline static const QString kNotDrawn = QStringLiteral("-");
};

quint64 mix(quint64 h, quint64 v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

}  // namespace

const GraphNode* VisibleGraph::node(const QString& key) const {
    auto it = nodeIndex.find(key);
    return it == nodeIndex.end() ? nullptr : &nodes[static_cast<size_t>(*it)];
}

layout::LayoutGraph VisibleGraph::toLayoutGraph(bool edgeLabels) const {
    layout::LayoutGraph g;
    g.nodes.reserve(nodes.size());
    for (const GraphNode& node : nodes)
        g.nodes.push_back({node.key.toStdString(), node.width, node.height, node.cluster.toStdString()});
    g.clusters.reserve(clusters.size());
    for (const GraphCluster& cluster : clusters)
        g.clusters.push_back({cluster.key.toStdString(), cluster.label.toStdString(), cluster.parent.toStdString()});
    g.edges.reserve(edges.size());
    for (const GraphEdge& edge : edges) {
        // Group edges' "N values" labels are drawn by the view, not given room.
        std::string label;
        if (edgeLabels && edge.multiplicity == 1) label = edge.shape.toStdString();
        g.edges.push_back({edge.from.toStdString(), edge.to.toStdString(), std::move(label), edge.route});
    }
    return g;
}

quint64 VisibleGraph::signature(bool edgeLabels) const {
    quint64 h = mix(nodes.size(), edges.size());
    h = mix(h, clusters.size());
    h = mix(h, edgeLabels ? 1 : 0);
    for (const GraphNode& node : nodes) {
        h = mix(h, qHash(node.key));
        h = mix(h, qHash(node.cluster));
        h = mix(h, static_cast<quint64>(node.width * 16));
        h = mix(h, static_cast<quint64>(node.height * 16));
    }
    for (const GraphCluster& cluster : clusters) {
        h = mix(h, qHash(cluster.key));
        h = mix(h, qHash(cluster.parent));
        h = mix(h, qHash(cluster.label));
    }
    for (const GraphEdge& edge : edges) {
        h = mix(h, qHash(edge.from));
        h = mix(h, qHash(edge.to));
        h = mix(h, static_cast<quint64>(edge.multiplicity));
        h = mix(h, edge.route ? 1 : 0);
        if (edgeLabels) h = mix(h, qHash(edge.shape));
    }
    return h;
}

bool GraphBuilder::isExpandable(const HloInstruction& instruction) {
    return !bodiesOf(instruction).empty();
}

bool GraphBuilder::canDrillInto(const LayerTree& tree, const QString& nodeKey) {
    if (!nodeKey.startsWith(QLatin1String("layer:"))) return false;
    const int layer = tree.find(nodeKey.mid(6).toStdString());
    if (layer <= 0) return false;
    for (int i = layer; i > 0; i = tree.layer(i).parent)
        if (tree.layer(i).kind == LayerKind::kComputation || tree.layer(i).kind == LayerKind::kCall) return false;
    return true;
}

CollapseState GraphBuilder::initialState(const HloModule& module, ModelLayersPtr layers) {
    CollapseState state;
    const HloComputation* entry = module.entryComputation();
    const int64_t count = entry ? entry->instructionCount() : 0;
    if (layers && count > kLayeredGraphNodes && !layers->tree.layer(LayerTree::kRoot).children.empty()) {
        state.grouped = true;
        state.layers = std::move(layers);
        return state;
    }
    state.grouped = count > kLargeGraphNodes;
    return state;
}

VisibleGraph GraphBuilder::build(const HloModule& module, const CollapseState& state,
                                 const GraphMetrics& metrics) {
    return Builder(module, state, metrics).run();
}

}  // namespace hloscope
