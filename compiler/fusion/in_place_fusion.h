// Fusion into an in-place update, as XLA's instruction fusion decides it (its
// ShouldFuseInPlaceOp): a dynamic-update-slice becomes the root of a kLoop fusion that takes
// the producers of its update, its start indices and its buffer, as long as the fused kernel
// can still write the update into the buffer it reads.
//
// The buffer is the update's operand 0, or, for a fusion rooted at a dynamic-update-slice,
// the fusion operand that operand 0 is a parameter of (through bitcasts). A producer that
// computes the buffer or reads it:
//   - fuses when it is elementwise (or bitcasts) and, for a fusion consumer, no
//     non-elementwise instruction of the consumer other than the update reads the parameter
//     it feeds;
//   - fuses when its one non-elementwise instruction is a slice (stride 1, of the update's
//     shape) starting at the update's constant start indices, or a dynamic-slice of the
//     update's shape with the same start indices (the same constants or the same
//     instructions), and its value reaches the update through elementwise ops only;
//   - stays outside otherwise: a slice at another offset, a dynamic-slice at unknown
//     indices, a reverse between the slice and the update, another dynamic-update-slice.
// A consumer that reads its buffer through a second operand takes no producer at all.
//
// A scatter (of one operand) becomes the root of a kInput fusion on the GPU, as in XLA's
// input-fused scatter: it takes the producers of its indices and updates, never that of its
// first operand (the buffer it updates) nor a producer that reads that operand.
//
// Ordering: used by the fusion passes' pair check (fusion_legality.cc) on targets that fuse
// into in-place updates (FusionConfig::fusesIntoInPlaceUpdates) and scatters
// (FusionConfig::fusesIntoScatters).
#pragma once

#include <optional>
#include <string>

#include "core/ir/hlo_instruction.h"

namespace hloscope::fusion {

// The dynamic-update-slice `instruction` is, or the root of its fused computation; nullptr
// when it is neither.
const HloInstruction* inPlaceUpdateOf(const HloInstruction& instruction);

// Why `producer` may not fuse into `consumer` (a dynamic-update-slice or a fusion rooted at
// one) without breaking the in-place update; nullopt when it may.
std::optional<std::string> inPlaceConflict(const HloInstruction& producer, const HloInstruction& consumer);

// The scatter `instruction` is, or the root of its fused computation; nullptr when neither.
const HloInstruction* scatterOf(const HloInstruction& instruction);

// Why `producer` may not fuse into `consumer` (a scatter or a fusion rooted at one): it is, or
// reads, the operand the scatter updates in place. nullopt when it may.
std::optional<std::string> scatterConflict(const HloInstruction& producer, const HloInstruction& consumer);

}  // namespace hloscope::fusion
