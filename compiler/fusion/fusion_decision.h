// Reason codes of the fusion passes' decision log (HloPass::decisions()).
// Every producer-consumer pair (or sibling pair) a fusion pass considers gets
// one PassDecision whose `reason` is one of these kebab-case codes:
//
//   fused                          fused (the model predicts a gain, or the
//                                  cost model is disabled).
//   not-fusible-op                 the producer cannot be fused: parameters,
//                                  large constants, tuples, get-tuple-elements,
//                                  custom-calls, collectives, rng, side
//                                  effects, while/conditional/call, sort,
//                                  infeed/outfeed, scatter, dynamic-update-slice,
//                                  control edges, a dot/convolution into a
//                                  consumer that is not an elementwise epilogue.
//   consumer-is-not-fusible        the consumer cannot take a fused operand
//                                  (same kinds as above, or the operand feeds
//                                  a dot/convolution inside the consumer).
//   would-duplicate-expensive-work the producer has several users and is
//                                  expensive (transcendentals, reduce, dot,
//                                  convolution): fusing it would recompute it
//                                  once per consumer.
//   too-many-operands              the fused kernel would take more operands
//                                  than the target allows (max_operands).
//   fusion-too-large               the fused kernel would hold more
//                                  instructions than max_fused_instructions.
//   no-predicted-gain              legal, but the cost model predicts the fused
//                                  kernel(s) would not be faster.
//   layout-mismatch                the producer's output layout differs from
//                                  the layout the elementwise consumer reads
//                                  and writes: the fused kernel would read it
//                                  transposed.
//   multi-output-cycle             (multi-output fusion) merging the two
//                                  instructions would create a cycle: one
//                                  reaches the other through an instruction
//                                  that stays outside.
//   budget-exceeded                the fused operand tiles would not fit the
//                                  target's on-chip memory (GPU shared memory,
//                                  TPU VMEM, CPU L1), estimated per operand as
//                                  min(operand bytes, tile elements * element
//                                  bytes).
//   forced-by-user                 fused because force= names the pair (legal).
//   forbidden-by-user              not fused because forbid= names the pair.
//   reduction-not-root             the producer is (or ends in) a reduction; a
//                                  reduce can only be the root of a kInput
//                                  fusion (on the GPU followed by an epilogue of
//                                  unary elementwise ops and bitcasts), never
//                                  feed another fused consumer.
//   not-siblings                   (multi-output fusion) the two users share no
//                                  large operand worth reading once.
//   not-all-consumers              (producer-consumer fusion) the producer can
//                                  fuse into some of its consumers but not all:
//                                  fused into some it would be computed twice,
//                                  so it stays a kernel of its own (XLA fuses a
//                                  producer into all its consumers or none); on
//                                  the CPU also a producer that reads more than it
//                                  writes and cannot fuse along every path to its
//                                  consumers (fusion/duplication_rule.h).
//   in-place-conflict              the consumer updates a buffer in place (a
//                                  dynamic-update-slice, or a fusion rooted at
//                                  one) and the producer reads that buffer in a
//                                  way the in-place kernel would overwrite first
//                                  (fusion/in_place_fusion.h).
#pragma once

#include <string_view>
#include <vector>

namespace hloscope {

enum class FusionReason {
    kFused,
    kNotFusibleOp,
    kConsumerIsNotFusible,
    kWouldDuplicateExpensiveWork,
    kTooManyOperands,
    kFusionTooLarge,
    kNoPredictedGain,
    kLayoutMismatch,
    kMultiOutputCycle,
    kBudgetExceeded,
    kForcedByUser,
    kForbiddenByUser,
    kReductionNotRoot,
    kNotSiblings,
    kNotAllConsumers,
    kInPlaceConflict,
};

// The kebab-case code ("no-predicted-gain").
std::string_view fusionReasonCode(FusionReason reason);
// Every reason, in declaration order.
const std::vector<FusionReason>& allFusionReasons();

}  // namespace hloscope
