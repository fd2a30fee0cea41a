#include "compiler/passes/call_inliner.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/passes/pass_util.h"

namespace hloscope {

namespace {

bool inlinable(const HloInstruction& call) {
    const HloComputation* callee = call.toApply();
    if (callee == nullptr || callee->root() == nullptr || callee == call.parent()) return false;
    if (!call.controlPredecessors().empty() || !call.controlSuccessors().empty()) return false;
    if (callee->executionThread() != call.parent()->executionThread()) return false;
    if (callee->parameterCount() != call.operandCount()) return false;
    for (int64_t i = 0; i < callee->parameterCount(); ++i)
        if (callee->parameter(i) == nullptr) return false;
    return callee->root()->shape() == call.shape();
}

}  // namespace

std::string_view CallInlinerPass::description() {
    return "Call inlining: replaces every call instruction by a copy of its callee's "
           "instructions (nested calls first) and removes callees nothing calls any more.";
}

StatusOr<std::unique_ptr<HloPass>> CallInlinerPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<CallInlinerPass>());
}

StatusOr<bool> CallInlinerPass::run(HloModule& module) {
    std::unordered_set<HloComputation*> inlinedCallees;
    const auto before = passes::unreachableComputations(module);
    const std::unordered_set<HloComputation*> unreachableBefore(before.begin(), before.end());
    bool clonedFusion = false;
    for (HloComputation* computation : passes::calleesFirst(module)) {
        std::vector<HloInstruction*> calls;
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kCall && inlinable(*instruction))
                calls.push_back(instruction.get());
        if (calls.empty()) continue;
        for (HloInstruction* call : calls) {
            HloComputation* callee = call->toApply();
            const auto clones =
                passes::cloneBodyInto(module, *computation, *callee, call->operands());
            for (const auto& [original, clone] : clones)
                if (original->opcode() == HloOpcode::kFusion) clonedFusion = true;
            // Control edges inside the callee hold between the clones.
            for (const auto& original : callee->instructions())
                for (const HloInstruction* successor : original->controlSuccessors())
                    clones.at(original.get())->addControlDependencyTo(clones.at(successor));
            HloInstruction* result = clones.at(callee->root());
            recordRewrite("inline-call", call, result);
            call->replaceAllUsesWith(result);
            if (computation->root() == call) computation->setRoot(result);
            inlinedCallees.insert(callee);
        }
        HLO_RETURN_IF_ERROR(computation->removeInstructions(calls));
    }
    if (inlinedCallees.empty()) return false;
    // Remove what this pass made unreachable: the callees and whatever only
    // they called.
    std::vector<HloComputation*> dead;
    for (HloComputation* computation : passes::unreachableComputations(module))
        if (!unreachableBefore.count(computation)) dead.push_back(computation);
    HLO_RETURN_IF_ERROR(passes::removeComputations(module, dead));
    if (clonedFusion) passes::repointFusionComputations(module);
    return true;
}

}  // namespace hloscope
