// The legality rules of the fusion passes: which producer-consumer pairs
// (and multi-output candidates) may fuse, and, when not, which
// FusionReason (fusion_decision.h) says why, with a short detail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/fusion/fusion_config.h"
#include "compiler/fusion/fusion_decision.h"
#include "core/ir/hlo_module.h"

namespace hloscope::fusion {

// Why the pair cannot fuse, or nullopt when it can (forbid= included,
// force= not: the caller decides). `detail` gets a short explanation;
// `producerUses` is distinctUseCount(producer) when the caller knows it.
std::optional<FusionReason> checkPair(const HloInstruction& producer,
                                      const HloInstruction& consumer, const FusionConfig& config,
                                      std::string* detail, bool multiOutput = false,
                                      int64_t producerUses = -1);
// A transpose that moves data between layouts (not a relabelling of dimensions of size one).
bool movesBetweenLayouts(const HloInstruction& transpose);
// Whether `instruction` may be in a loop/input/output fusion at all (its opcode, no side
// effects, no control dependencies; not a parameter).
bool isFusible(const HloInstruction& instruction);
// Whether `instruction` may be part of a multi-output fusion: a reduce, an
// elementwise op, or a kLoop/kInput fusion (a multi-output one only when
// every user is a get-tuple-element); `why` says why not.
// `tiledTransposes` (the GPU): a transpose that moves data between layouts is one too (the
// GPU emits it tiled, and other outputs of its input's shape can share its kernel).
bool multiOutputCandidate(const HloInstruction& instruction, std::string* why,
                          bool tiledTransposes = false);
// The iteration space of a fusion candidate: the reduce input dimensions
// and reduced dimensions for reductions, else the output dimensions.
std::string iterationSpace(const HloInstruction& instruction);
// Whether two multi-output candidates can share one kernel's loop, as XLA decides: each has a
// hero (the instruction that picks the emitter: a reduction, on the GPU a tiled transpose,
// else the output), whose loop runs over the reduction's or transpose's input, else over the
// output. Two reductions must reduce the same input dimensions the same way, two transposes
// must permute the same input the same way, a reduction and a transpose never share; and the
// loops must match, element types aside (on the GPU also when one is a bitcast of the other:
// same element count, default layouts). `why` says why not.
bool multiOutputCompatible(const HloInstruction& a, const HloInstruction& b,
                           const FusionConfig& config, std::string* why);

// Checks that apply to any fused kernel built from `parts` (operand count,
// size, on-chip budget); nullopt when within limits.
std::optional<FusionReason> checkLimits(const std::vector<const HloInstruction*>& parts,
                                        const FusionConfig& config, std::string* detail);

// The reduce that `root` (an instruction of a fused computation) is, or that it applies only
// unary elementwise ops and bitcasts to (a reduction with an epilogue), looking no further
// than the computation's parameters; nullptr when there is none.
const HloInstruction* reductionUnderEpilogue(const HloInstruction& root);

// A constant of at most one element: what the fusion passes fold into the kernels reading it.
inline bool isScalarConstant(const HloInstruction& instruction) {
    return instruction.opcode() == HloOpcode::kConstant && instruction.shape().isArray() &&
           instruction.shape().elementCount() <= 1;
}
// Expensive to recompute: transcendentals, reduce, reduce-window, dot,
// convolution (or a fusion containing one).
bool isExpensive(const HloInstruction& instruction);
// Distinct users, plus one when the instruction is its computation's root.
int64_t distinctUseCount(const HloInstruction& instruction);
// Computations fusion may rewrite: the entry and what while/conditional/call
// reach from it (not fused computations, reducers, comparators, ...).
std::vector<HloComputation*> fusibleComputations(const HloModule& module);

// A fusion instruction with a fused computation.
inline bool isFusionOf(const HloInstruction& instruction) {
    return instruction.opcode() == HloOpcode::kFusion && instruction.fusedComputation() != nullptr;
}
// A dot or a convolution.
inline bool isDotLike(HloOpcode opcode) {
    return opcode == HloOpcode::kDot || opcode == HloOpcode::kConvolution;
}

}  // namespace hloscope::fusion
