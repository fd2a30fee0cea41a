#include "compiler/layers/layer_figures.h"

#include <unordered_map>


#include "compiler/cost/performance_model.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

namespace {

// The layer an instruction names itself: its own name, an op of its fused computation, or its
// op_name scope; -1 when none.
int namedLayer(const LayerTree& tree, const HloInstruction& x) {
    if (const int layer = tree.layerOf(x.name()); layer >= 0) return layer;
    if (x.opcode() == HloOpcode::kFusion && x.fusedComputation()) {
        const HloComputation& fused = *x.fusedComputation();
        if (fused.root())
            if (const int layer = tree.layerOf(fused.root()->name()); layer >= 0) return layer;
        for (const auto& inner : fused.instructions())
            if (inner->opcode() != HloOpcode::kParameter)
                if (const int layer = tree.layerOf(inner->name()); layer >= 0) return layer;
    }
    // Made by a pass under a new name (an inlined call's ops): its metadata's scope.
    return tree.layerOfOpName(x.metadataField("op_name"));
}

}  // namespace

int layerOfKernel(const LayerTree& tree, const HloInstruction& kernel) {
    if (const int layer = namedLayer(tree, kernel); layer >= 0) return layer;
    for (const HloInstruction* operand : kernel.operands())
        if (const int layer = tree.layerOf(operand->name()); layer >= 0) return layer;
    return -1;
}

std::unordered_map<const HloInstruction*, int> layersOf(const LayerTree& tree, const HloComputation& computation) {
    std::unordered_map<const HloInstruction*, int> owner;
    const std::vector<HloInstruction*> order = computation.postOrder();
    owner.reserve(order.size());
    for (const HloInstruction* x : order) owner[x] = namedLayer(tree, *x);
    // A layer that ops made by a pass may join: any but the root (outside every layer), a
    // computation's own layer and the folded parameters.
    auto joinable = [&](const HloInstruction* x) {
        auto it = owner.find(x);
        if (it == owner.end() || it->second <= LayerTree::kRoot) return -1;
        const LayerKind kind = tree.layer(it->second).kind;
        return kind == LayerKind::kParameters || kind == LayerKind::kModule || kind == LayerKind::kComputation
                   ? -1
                   : it->second;
    };
    auto fromOperands = [&] {
        for (const HloInstruction* x : order) {
            int& layer = owner[x];
            if (layer >= 0) continue;
            for (const HloInstruction* operand : x->operands())
                if (const int from = joinable(operand); from >= 0) {
                    layer = from;
                    break;
                }
        }
    };
    // Operands first (an expander's ops read what the op they replace read), then users (a
    // chain that starts from parameters only joins the ops it feeds), then operands again.
    fromOperands();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        int& layer = owner[*it];
        if (layer >= 0) continue;
        for (const HloInstruction* user : (*it)->users())
            if (const int from = joinable(user); from >= 0) {
                layer = from;
                break;
            }
    }
    fromOperands();
    return owner;
}

std::vector<LayerFigures> computeLayerFigures(const LayerTree& tree, const HloModule& input,
                                              const HloModule& atStep, const TargetDescription& target) {
    std::vector<LayerFigures> figures(static_cast<size_t>(tree.size()));
    // The layers of each computation's instructions, made once per computation.
    std::unordered_map<const HloComputation*, std::unordered_map<const HloInstruction*, int>> owners;
    auto slot = [&](const HloInstruction& kernel) -> LayerFigures& {
        const HloComputation* computation = kernel.parent();
        auto found = owners.find(computation);
        if (found == owners.end()) found = owners.emplace(computation, layersOf(tree, *computation)).first;
        const auto it = found->second.find(&kernel);
        const int layer = it == found->second.end() ? -1 : it->second;
        return figures[static_cast<size_t>(layer >= 0 ? layer : LayerTree::kRoot)];
    };
    for (const KernelPrediction& k : predictUnfused(input, target).kernels) ++slot(*k.instruction).kernelsBefore;
    for (const KernelPrediction& k : predictModule(atStep, target).kernels) {
        LayerFigures& f = slot(*k.instruction);
        ++f.kernelsAfter;
        f.predictedSeconds += k.totalSeconds * k.executions;
    }
    // Subtree sums: children come after their parents in tree order.
    for (int i = tree.size() - 1; i > 0; --i) {
        const LayerFigures& own = figures[static_cast<size_t>(i)];
        LayerFigures& parent = figures[static_cast<size_t>(tree.layer(i).parent)];
        parent.kernelsBefore += own.kernelsBefore;
        parent.kernelsAfter += own.kernelsAfter;
        parent.predictedSeconds += own.predictedSeconds;
    }
    for (int i = 0; i < tree.size(); ++i)
        figures[static_cast<size_t>(i)].instructions = tree.layer(i).instructionCount;
    return figures;
}

}  // namespace hloscope
