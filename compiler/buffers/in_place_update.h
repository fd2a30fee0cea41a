// When a dynamic-update-slice may write its update into its operand's storage instead of
// copying the operand into a buffer of its own: the HLO-level half of the rule the CPU backend
// (cpu_executable.cc, canUpdateInPlace) and the GPU plan (gpu_plan_control_flow.cc,
// planUpdateInPlace) apply to a loop's state, as XLA updates it in place. Each backend adds
// what only it knows: that the storage belongs to the loop (a while body's parameter), and
// which of its values are views of a buffer rather than copies.
#pragma once

#include <cstdint>
#include <functional>

#include "core/ir/hlo_instruction.h"

namespace hloscope {

// `update`'s form: an array of its operand's dimensions and element type, an update of the
// same rank and type that is not the operand itself, and one integer scalar start per
// dimension (not sub-byte, not the operand). denseDefaultLayouts: also require the default
// dense layout on the operand, the update and the result.
bool isInPlaceUpdateForm(const HloInstruction& update, bool denseDefaultLayouts);

// Whether `operand` is the only view of one element of a tuple parameter: a get-tuple-element
// of the parameter, which nothing uses but get-tuple-elements, none other of that index.
bool isOnlyViewOfParameterElement(const HloInstruction& operand);

// Whether every user of update.operand(0) other than `update` runs before it and keeps no view
// of its storage: `position` gives an instruction's place in the computation's sequence (-1:
// not in it), `keepsView` whether a user's value holds the operand's storage (asked only of
// users that run before, so a backend may look at how it planned them).
bool otherReadersRunFirst(const HloInstruction& update,
                          const std::function<int64_t(const HloInstruction*)>& position,
                          const std::function<bool(const HloInstruction*)>& keepsView);
// The same for the operand `bufferOperand` of `update` (a fusion rooted at an update of it).
bool otherReadersRunFirst(const HloInstruction& update, int64_t bufferOperand,
                          const std::function<int64_t(const HloInstruction*)>& position,
                          const std::function<bool(const HloInstruction*)>& keepsView);

}  // namespace hloscope
