// A conditional's branch computations, as its attributes give them:
// {true_computation, false_computation} for a pred selector (the false one
// null when the module lacks it), else branch_computations in order; empty
// when it has neither. The reference evaluator and the CPU and GPU backends
// read branches through this (the verifier and shape inference check the
// attributes themselves, with their own messages).
#pragma once

#include <vector>

#include "core/ir/hlo_instruction.h"

namespace hloscope {

inline std::vector<HloComputation*> conditionalBranches(const HloInstruction& conditional) {
    if (HloComputation* onTrue = conditional.calledComputation("true_computation"))
        return {onTrue, conditional.calledComputation("false_computation")};
    for (const CalledComputationAttribute& attribute : conditional.calledComputationAttributes())
        if (attribute.name == "branch_computations") return attribute.computations;
    return {};
}

}  // namespace hloscope
