#include "core/ir/change_stamps.h"

#include "core/ir/hlo_computation.h"

namespace hloscope {

bool changedSince(const HloInstruction& instruction, uint64_t stamp) {
    if (instruction.changeStamp() > stamp || hloOpcodeIsAsync(instruction.opcode())) return true;
    for (const HloInstruction* operand : instruction.operands())
        if (operand->changeStamp() > stamp) return true;
    for (const HloInstruction* predecessor : instruction.controlPredecessors())
        if (predecessor->changeStamp() > stamp) return true;
    for (const CalledComputationAttribute& attribute : instruction.calledComputationAttributes())
        for (const HloComputation* called : attribute.computations)
            if (called && called->changeStamp() > stamp) return true;
    return false;
}

}  // namespace hloscope
