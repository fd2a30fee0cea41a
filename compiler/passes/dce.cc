#include "compiler/passes/dce.h"

#include <unordered_set>
#include <vector>

#include "compiler/passes/pass_util.h"

namespace hloscope {

namespace {

// Instructions of `computation` that must stay: the root, parameters and
// side-effecting instructions, and everything they reach through operands
// and control predecessors.
std::unordered_set<const HloInstruction*> liveInstructions(const HloComputation& computation,
                                                           passes::SideEffectAnalysis& effects) {
    std::unordered_set<const HloInstruction*> live;
    std::vector<const HloInstruction*> stack;
    auto mark = [&](const HloInstruction* instruction) {
        if (instruction && live.insert(instruction).second) stack.push_back(instruction);
    };
    mark(computation.root());
    for (const auto& instruction : computation.instructions()) {
        if (instruction->opcode() == HloOpcode::kParameter ||
            effects.hasSideEffect(instruction.get()))
            mark(instruction.get());
    }
    while (!stack.empty()) {
        const HloInstruction* instruction = stack.back();
        stack.pop_back();
        for (const HloInstruction* operand : instruction->operands()) mark(operand);
        for (const HloInstruction* predecessor : instruction->controlPredecessors())
            mark(predecessor);
    }
    return live;
}

}  // namespace

std::string_view DcePass::description() {
    return "Dead code elimination: removes instructions the root of their computation does not "
           "use (through operands or control edges), keeping parameters, side-effecting "
           "instructions and what they depend on; then removes computations that nothing calls "
           "any more.";
}

StatusOr<std::unique_ptr<HloPass>> DcePass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<DcePass>());
}

StatusOr<bool> DcePass::run(HloModule& module) {
    if (module.entryComputation() == nullptr)
        return failedPrecondition("module " + module.name() + " has no entry computation");
    bool changed = false;
    bool removedFusion = false;
    passes::SideEffectAnalysis effects;
    for (const auto& computation : module.computations()) {
        if (computation->root() == nullptr) continue;
        const auto live = liveInstructions(*computation, effects);
        if (live.size() == static_cast<size_t>(computation->instructionCount())) continue;
        std::vector<HloInstruction*> dead;
        for (const auto& instruction : computation->instructions()) {
            if (live.count(instruction.get())) continue;
            dead.push_back(instruction.get());
            removedFusion = removedFusion || instruction->opcode() == HloOpcode::kFusion;
            recordRewrite("dead-instruction", instruction.get());
        }
        HLO_RETURN_IF_ERROR(computation->removeInstructions(dead));
        changed = true;
    }
    std::vector<HloComputation*> deadComputations = passes::unreachableComputations(module);
    if (removedFusion || !deadComputations.empty()) passes::repointFusionComputations(module);
    if (!deadComputations.empty()) {
        // A removed computation is named by its root instruction.
        for (HloComputation* computation : deadComputations)
            recordRewrite("dead-computation", computation->root());
        HLO_RETURN_IF_ERROR(passes::removeComputations(module, deadComputations));
        changed = true;
    }
    return changed;
}

}  // namespace hloscope
