#include "compiler/passes/annotation_remover.h"

#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/lowering/library_calls.h"

namespace hloscope {

std::string_view AnnotationRemoverPass::description() {
    return "Removes the custom-calls that only annotate a value for partitioning or memory "
           "spaces (Sharding, SPMDFullToShardShape, SPMDShardToFullShape, MoveToHost, "
           "MoveToDevice, annotate_device_placement, LayoutConstraint) where they keep its "
           "shape: on one device their users read the value itself.";
}

StatusOr<std::unique_ptr<HloPass>> AnnotationRemoverPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<AnnotationRemoverPass>());
}

StatusOr<bool> AnnotationRemoverPass::run(HloModule& module) {
    int64_t removed = 0, left = 0;
    for (const auto& computation : module.computations()) {
        std::vector<HloInstruction*> annotations;
        for (const auto& instruction : computation->instructions()) {
            if (instruction->opcode() != HloOpcode::kCustomCall ||
                !isAnnotationTarget(instruction->customCallTarget()))
                continue;
            // Control edges order the annotation itself: keep it then.
            if (isPassThroughAnnotation(*instruction) &&
                instruction->controlPredecessors().empty() &&
                instruction->controlSuccessors().empty())
                annotations.push_back(instruction.get());
            else
                ++left;
        }
        for (HloInstruction* annotation : annotations) {
            HloInstruction* value = annotation->operand(0);
            recordRewrite("remove-annotation", annotation, value);
            HLO_RETURN_IF_ERROR(computation->replaceInstruction(annotation, value));
            ++removed;
        }
    }
    setStatistic("removed", removed);
    setStatistic("left", left);
    return removed > 0;
}

}  // namespace hloscope
