// Shape inference for every HLO opcode: given an instruction's operands'
// shapes and its attributes, the shape XLA would give it. The verifier
// compares the result with the declared shape (element types and dimensions;
// layouts are checked separately).
#pragma once

#include "core/ir/hlo_instruction.h"
#include "core/support/status.h"

namespace hloscope {

// Infers the result shape of `instruction` from its operands and attributes.
// Errors (kFailedPrecondition) name the instruction and the violated rule,
// e.g. "%dot.3: lhs contracting dimension 1 has size 3 but rhs ... has 4".
// Returns kUnimplemented for opcodes whose shape cannot be inferred from
// the IR alone (e.g. custom-call): callers then trust the declared shape.
StatusOr<Shape> inferShape(const HloInstruction& instruction);

}  // namespace hloscope
