// What a record derived from an instruction (its printed line, its verification)
// depends on, in terms of change stamps (HloInstruction::changeStamp): the shared
// rule of the incremental printer (HloTextCache) and verifier
// (verifyModuleChangedSince).
#pragma once

#include <cstdint>

#include "core/ir/hlo_instruction.h"

namespace hloscope {

// True when the instruction, an operand, a control predecessor or a called computation
// changed after `stamp` (the module's mutation count when the record was made). Async
// ops are always taken as changed: how they are written and checked follows their whole
// chain through users and wrapped computations (they are few).
bool changedSince(const HloInstruction& instruction, uint64_t stamp);

}  // namespace hloscope
