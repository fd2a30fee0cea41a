// Every HLO opcode of current XLA with its text spelling and arity.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hloscope {

inline constexpr int kHloOpcodeIsVariadic = -1;

// X(enum, spelling, arity). Sorted by enum name.
#define HLO_OPCODE_LIST(V)                                                    \
    V(kAbs, "abs", 1)                                                         \
    V(kAcos, "acos", 1)                                                       \
    V(kAcosh, "acosh", 1)                                                     \
    V(kAdd, "add", 2)                                                         \
    V(kAddDependency, "add-dependency", 2)                                    \
    V(kAfterAll, "after-all", kHloOpcodeIsVariadic)                           \
    V(kAllGather, "all-gather", kHloOpcodeIsVariadic)                         \
    V(kAllGatherDone, "all-gather-done", 1)                                   \
    V(kAllGatherStart, "all-gather-start", kHloOpcodeIsVariadic)              \
    V(kAllReduce, "all-reduce", kHloOpcodeIsVariadic)                         \
    V(kAllReduceDone, "all-reduce-done", 1)                                   \
    V(kAllReduceStart, "all-reduce-start", kHloOpcodeIsVariadic)              \
    V(kAllToAll, "all-to-all", kHloOpcodeIsVariadic)                          \
    V(kAnd, "and", 2)                                                         \
    V(kAsin, "asin", 1)                                                       \
    V(kAsinh, "asinh", 1)                                                     \
    V(kAsyncDone, "async-done", 1)                                            \
    V(kAsyncStart, "async-start", kHloOpcodeIsVariadic)                       \
    V(kAsyncUpdate, "async-update", kHloOpcodeIsVariadic)                     \
    V(kAtan, "atan", 1)                                                       \
    V(kAtan2, "atan2", 2)                                                     \
    V(kAtanh, "atanh", 1)                                                     \
    V(kBatchNormGrad, "batch-norm-grad", 5)                                   \
    V(kBatchNormInference, "batch-norm-inference", 5)                         \
    V(kBatchNormTraining, "batch-norm-training", 3)                           \
    V(kBitcast, "bitcast", 1)                                                 \
    V(kBitcastConvert, "bitcast-convert", 1)                                  \
    V(kBroadcast, "broadcast", 1)                                             \
    V(kCall, "call", kHloOpcodeIsVariadic)                                    \
    V(kCbrt, "cbrt", 1)                                                       \
    V(kCeil, "ceil", 1)                                                       \
    V(kCholesky, "cholesky", 1)                                               \
    V(kClamp, "clamp", 3)                                                     \
    V(kClz, "count-leading-zeros", 1)                                         \
    V(kCollectiveBroadcast, "collective-broadcast", kHloOpcodeIsVariadic)     \
    V(kCollectivePermute, "collective-permute", kHloOpcodeIsVariadic)         \
    V(kCollectivePermuteDone, "collective-permute-done", 1)                   \
    V(kCollectivePermuteStart, "collective-permute-start", kHloOpcodeIsVariadic) \
    V(kCollectiveReduce, "collective-reduce", kHloOpcodeIsVariadic)           \
    V(kCompare, "compare", 2)                                                 \
    V(kComplex, "complex", 2)                                                 \
    V(kConcatenate, "concatenate", kHloOpcodeIsVariadic)                      \
    V(kConditional, "conditional", kHloOpcodeIsVariadic)                      \
    V(kConstant, "constant", 0)                                               \
    V(kConvert, "convert", 1)                                                 \
    V(kConvolution, "convolution", kHloOpcodeIsVariadic)                      \
    V(kCopy, "copy", 1)                                                       \
    V(kCopyDone, "copy-done", 1)                                              \
    V(kCopyStart, "copy-start", 1)                                            \
    V(kCos, "cosine", 1)                                                      \
    V(kCosh, "cosh", 1)                                                       \
    V(kCustomCall, "custom-call", kHloOpcodeIsVariadic)                       \
    V(kDivide, "divide", 2)                                                   \
    V(kDomain, "domain", 1)                                                   \
    V(kDot, "dot", 2)                                                         \
    V(kDynamicReshape, "dynamic-reshape", kHloOpcodeIsVariadic)               \
    V(kDynamicSlice, "dynamic-slice", kHloOpcodeIsVariadic)                   \
    V(kDynamicUpdateSlice, "dynamic-update-slice", kHloOpcodeIsVariadic)      \
    V(kErf, "erf", 1)                                                         \
    V(kExp, "exponential", 1)                                                 \
    V(kExpm1, "exponential-minus-one", 1)                                     \
    V(kFft, "fft", 1)                                                         \
    V(kFloor, "floor", 1)                                                     \
    V(kFusion, "fusion", kHloOpcodeIsVariadic)                                \
    V(kGather, "gather", 2)                                                   \
    V(kGetDimensionSize, "get-dimension-size", 1)                             \
    V(kGetTupleElement, "get-tuple-element", 1)                               \
    V(kImag, "imag", 1)                                                       \
    V(kInfeed, "infeed", 1)                                                   \
    V(kIota, "iota", 0)                                                       \
    V(kIsFinite, "is-finite", 1)                                              \
    V(kLog, "log", 1)                                                         \
    V(kLog1p, "log-plus-one", 1)                                              \
    V(kLogistic, "logistic", 1)                                               \
    V(kMap, "map", kHloOpcodeIsVariadic)                                      \
    V(kMaximum, "maximum", 2)                                                 \
    V(kMinimum, "minimum", 2)                                                 \
    V(kMulhi, "mulhi", 2)                                                     \
    V(kMultiply, "multiply", 2)                                               \
    V(kNegate, "negate", 1)                                                   \
    V(kNot, "not", 1)                                                         \
    V(kOptimizationBarrier, "opt-barrier", 1)                                 \
    V(kOr, "or", 2)                                                           \
    V(kOutfeed, "outfeed", 2)                                                 \
    V(kPad, "pad", 2)                                                         \
    V(kParameter, "parameter", 0)                                             \
    V(kPartitionId, "partition-id", 0)                                        \
    V(kPopulationCount, "popcnt", 1)                                          \
    V(kPower, "power", 2)                                                     \
    V(kRaggedAllToAll, "ragged-all-to-all", 6)                                \
    V(kRaggedDot, "ragged-dot", 3)                                            \
    V(kReal, "real", 1)                                                       \
    V(kRecv, "recv", 1)                                                       \
    V(kRecvDone, "recv-done", 1)                                              \
    V(kReduce, "reduce", kHloOpcodeIsVariadic)                                \
    V(kReducePrecision, "reduce-precision", 1)                                \
    V(kReduceScatter, "reduce-scatter", kHloOpcodeIsVariadic)                 \
    V(kReduceWindow, "reduce-window", kHloOpcodeIsVariadic)                   \
    V(kRemainder, "remainder", 2)                                             \
    V(kReplicaId, "replica-id", 0)                                            \
    V(kReshape, "reshape", 1)                                                 \
    V(kReverse, "reverse", 1)                                                 \
    V(kRng, "rng", kHloOpcodeIsVariadic)                                      \
    V(kRngBitGenerator, "rng-bit-generator", 1)                               \
    V(kRngGetAndUpdateState, "rng-get-and-update-state", 0)                   \
    V(kRoundNearestAfz, "round-nearest-afz", 1)                               \
    V(kRoundNearestEven, "round-nearest-even", 1)                             \
    V(kRsqrt, "rsqrt", 1)                                                     \
    V(kScaledDot, "scaled-dot", 4)                                            \
    V(kScan, "scan", kHloOpcodeIsVariadic)                                    \
    V(kScatter, "scatter", kHloOpcodeIsVariadic)                              \
    V(kSelect, "select", 3)                                                   \
    V(kSelectAndScatter, "select-and-scatter", 3)                             \
    V(kSend, "send", 2)                                                       \
    V(kSendDone, "send-done", 1)                                              \
    V(kSetDimensionSize, "set-dimension-size", 2)                             \
    V(kShiftLeft, "shift-left", 2)                                            \
    V(kShiftRightArithmetic, "shift-right-arithmetic", 2)                     \
    V(kShiftRightLogical, "shift-right-logical", 2)                           \
    V(kShuffle, "shuffle", 1)                                                 \
    V(kSign, "sign", 1)                                                       \
    V(kSin, "sine", 1)                                                        \
    V(kSinh, "sinh", 1)                                                       \
    V(kSlice, "slice", 1)                                                     \
    V(kSort, "sort", kHloOpcodeIsVariadic)                                    \
    V(kSqrt, "sqrt", 1)                                                       \
    V(kStochasticConvert, "stochastic-convert", 2)                            \
    V(kSubtract, "subtract", 2)                                               \
    V(kTan, "tan", 1)                                                         \
    V(kTanh, "tanh", 1)                                                       \
    V(kTopK, "topk", 1)                                                       \
    V(kTranspose, "transpose", 1)                                             \
    V(kTriangularSolve, "triangular-solve", 2)                                \
    V(kTuple, "tuple", kHloOpcodeIsVariadic)                                  \
    V(kWhile, "while", 1)                                                     \
    V(kXor, "xor", 2)

enum class HloOpcode : uint8_t {
#define HLO_OPCODE_ENUM(e, name, arity) e,
    HLO_OPCODE_LIST(HLO_OPCODE_ENUM)
#undef HLO_OPCODE_ENUM
};

inline constexpr int kHloOpcodeCount = 0
#define HLO_OPCODE_COUNT(e, name, arity) +1
    HLO_OPCODE_LIST(HLO_OPCODE_COUNT)
#undef HLO_OPCODE_COUNT
    ;

std::string_view hloOpcodeString(HloOpcode opcode);
std::optional<HloOpcode> stringToHloOpcode(std::string_view name);
// Number of operands, or nullopt for variadic opcodes.
std::optional<int> hloOpcodeArity(HloOpcode opcode);

bool hloOpcodeIsElementwiseUnary(HloOpcode opcode);
bool hloOpcodeIsElementwiseBinary(HloOpcode opcode);
// Opcodes XLA's layout assignment does not let change layouts: their result
// has the layout of their same-rank operands (elementwise ops but copy,
// clamp, select, concatenate, slices, pad, reverse, map, reduce-window,
// select-and-scatter, scatter, sort, cholesky, triangular-solve, fft). Used by
// the layout-sensitive verifier and by layout assignment.
bool hloOpcodeKeepsLayout(HloOpcode opcode);
// Elementwise: unary, binary, select, clamp, convert, compare, ...
bool hloOpcodeIsElementwise(HloOpcode opcode);
bool hloOpcodeIsBinaryCommutative(HloOpcode opcode);
bool hloOpcodeIsAsync(HloOpcode opcode);  // async-start/update/done
bool hloOpcodeIsCollective(HloOpcode opcode);
// Opcodes whose result has side effects or that must not be removed
// (send/recv, infeed/outfeed, custom-call with side effects aside).
bool hloOpcodeHasSideEffect(HloOpcode opcode);

}  // namespace hloscope
