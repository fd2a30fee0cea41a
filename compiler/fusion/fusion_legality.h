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
// Whether `instruction` may be part of a multi-output fusion: a reduce, an
// elementwise op, or a kLoop/kInput fusion (a multi-output one only when
// every user is a get-tuple-element); `why` says why not.
bool multiOutputCandidate(const HloInstruction& instruction, std::string* why);
// The iteration space of a fusion candidate: the reduce input dimensions
// and reduced dimensions for reductions, else the output dimensions.
std::string iterationSpace(const HloInstruction& instruction);

// Checks that apply to any fused kernel built from `parts` (operand count,
// size, on-chip budget); nullopt when within limits.
std::optional<FusionReason> checkLimits(const std::vector<const HloInstruction*>& parts,
                                        const FusionConfig& config, std::string* detail);

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
