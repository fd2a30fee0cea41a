#include "compiler/layers/layer_figures.h"


#include "compiler/cost/performance_model.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

int layerOfKernel(const LayerTree& tree, const HloInstruction& kernel) {
    if (const int layer = tree.layerOf(kernel.name()); layer >= 0) return layer;
    if (kernel.opcode() == HloOpcode::kFusion && kernel.fusedComputation()) {
        const HloComputation& fused = *kernel.fusedComputation();
        if (fused.root())
            if (const int layer = tree.layerOf(fused.root()->name()); layer >= 0) return layer;
        for (const auto& x : fused.instructions())
            if (x->opcode() != HloOpcode::kParameter)
                if (const int layer = tree.layerOf(x->name()); layer >= 0) return layer;
    }
    // Made by a pass under a new name (an inlined call's ops): its metadata's scope.
    if (const int layer = tree.layerOfOpName(kernel.metadataField("op_name")); layer >= 0) return layer;
    for (const HloInstruction* operand : kernel.operands())
        if (const int layer = tree.layerOf(operand->name()); layer >= 0) return layer;
    return -1;
}

std::vector<LayerFigures> computeLayerFigures(const LayerTree& tree, const HloModule& input,
                                              const HloModule& atStep, const TargetDescription& target) {
    std::vector<LayerFigures> figures(static_cast<size_t>(tree.size()));
    auto slot = [&](const HloInstruction& kernel) -> LayerFigures& {
        const int layer = layerOfKernel(tree, kernel);
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
