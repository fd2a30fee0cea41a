// Internal contract between the evaluator's files (not part of the public
// API). interpreter.cc walks computations in post order and dispatches each
// instruction to one of the family functions below, declared here and
// defined in:
//   elementwise.cc  unary/binary arithmetic (compare/select/clamp/
//                              bitcast-convert/reduce-precision/map/... in
//                              elementwise_special.cc)
//   shape_ops.cc    broadcast, reshape, transpose, slice, dynamic
//                              slice/update, concatenate, pad, reverse, iota,
//                              copy, bitcast, get/set-dimension-size, ...
//   linalg.cc       dot, ragged-dot, scaled-dot (GEMM kernel in
//                              gemm.cc, convolution in
//                              conv.cc, triangular-solve, cholesky
//                              and fft in solve_fft.cc)
//   reduce.cc       reduce, reduce-window, select-and-scatter (sort
//                              and topk in sort.cc, gather and
//                              scatter in gather.cc)
// Each function receives the instruction, its evaluated operands (same order
// as instruction.operands()) and the context (to call computations such as
// reducers), and returns the result literal or a Status naming the
// instruction.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/interpreter/interpreter.h"

namespace hloscope::evaluator {

class EvalContext {
public:
    virtual ~EvalContext() = default;
    // Evaluates a called computation (reducer, comparator, body, ...).
    virtual StatusOr<Literal> call(const HloComputation& computation,
                                   std::span<const Literal* const> arguments) = 0;
    virtual const HloEvaluatorOptions& options() const = 0;
    // Next value of the evaluator's deterministic random stream.
    virtual uint64_t nextRandom() = 0;
};

using Operands = std::span<const Literal* const>;

// Error helpers: "%name: message".
Status unsupported(const HloInstruction& instruction, std::string_view what);
Status invalid(const HloInstruction& instruction, std::string_view what);
// "expects n operand(s)" unless there are at least `n` operands.
Status needOperands(const HloInstruction& instruction, Operands operands, size_t n);

// Families. Each returns kUnimplemented (via unsupported()) for opcodes or
// type combinations it does not handle.
StatusOr<Literal> evaluateElementwise(const HloInstruction& instruction, Operands operands,
                                      EvalContext& context);
// dynamic-update-slice of `target` (the operand's value, which the caller hands over because
// nothing else reads it): the update written into it, copied first only where its storage is
// shared (copy-on-write).
Status updateSliceInto(const HloInstruction& instruction, Literal& target, Operands operands);
StatusOr<Literal> evaluateShapeOp(const HloInstruction& instruction, Operands operands,
                                  EvalContext& context);
StatusOr<Literal> evaluateLinalg(const HloInstruction& instruction, Operands operands,
                                 EvalContext& context);
StatusOr<Literal> evaluateReduction(const HloInstruction& instruction, Operands operands,
                                    EvalContext& context);

// Collectives on a single participant (collectives.cc): the
// participants of one group and the module's device count; the result of a
// collective or its start/done half; a start op's (first, second, zeros...)
// tuple; equal element types and dimensions, recursively.
int64_t participantCount(const HloInstruction& instruction);
int64_t deviceCount(const HloInstruction& instruction);
StatusOr<Literal> evaluateCollective(const HloInstruction& instruction, Operands operands,
                                     EvalContext& context);
Literal startTuple(const Shape& shape, Literal first, Literal second);
// The operand itself, or a tuple of the operands when there are several.
Literal operandsAsResult(Operands operands);
// ragged-all-to-all's copies from one sender into a receiver's `output`
// (collectives.cc): the sender's offsets hold `members` x U
// updates, U per receiver; the receiver at `receiver` in the group takes
// updates receiver*U .. receiver*U+U-1, each the rows [input_offsets[k],
// + send_sizes[k]) of the sender's input at rows output_offsets[k] of its
// output, in order (XLA's GPU kernel's indexing). A row range outside
// either array is an error naming `sender`.
Status copyRaggedUpdates(const HloInstruction& instruction, Literal& output, const Literal& input,
                         const Literal& inputOffsets, const Literal& sendSizes,
                         const Literal& outputOffsets, int64_t receiver, int64_t members,
                         int64_t sender);
// A collective between the devices of a multi-device evaluation
// (options().collectives set; collectives_devices.cc).
StatusOr<Literal> evaluateCollectiveOnDevices(const HloInstruction& instruction, Operands operands,
                                              EvalContext& context);
// send, recv and their done halves between the devices of a multi-device
// evaluation (collectives_devices.cc): a send posts its operand to
// its target device; a recv books the next value from its source and carries
// the booking in its context (u32) element, data zero; its recv-done takes
// the value (zeros when no device sends to this one).
StatusOr<Literal> evaluatePeerTransfer(const HloInstruction& instruction, Operands operands,
                                       EvalContext& context);
bool sameArrayShape(const Shape& a, const Shape& b);

// Random numbers (rng.cc): rng from the context's random stream;
// rng-bit-generator following XLA's prng.cc bit for bit; the threefry2x32
// block (key, counter) -> two words; a (first, second) tuple.
StatusOr<Literal> evaluateRng(const HloInstruction& instruction, Operands operands,
                              EvalContext& context);
StatusOr<Literal> evaluateRngBitGenerator(const HloInstruction& instruction, Operands operands);
std::array<uint32_t, 2> threeFry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> x);
Literal makePair(Literal first, Literal second);
// custom-call (custom_call.cc): options().customCallHandler first, then the
// targets the evaluator knows.
StatusOr<Literal> evaluateCustomCall(const HloInstruction& instruction, Operands operands,
                                     EvalContext& context);

// Which family handles an opcode (the rest — control flow, tuples, calls,
// parameters, constants, collectives, rng, custom-call — is dispatched in
// interpreter.cc).
enum class Family { kElementwise, kShapeOp, kLinalg, kReduction, kCore };
Family familyOf(HloOpcode opcode);

}  // namespace hloscope::evaluator
