// XLA:GPU's library calls, said in plain HLO.
//
// After its own optimisations, XLA's GPU compiler has turned dots into calls
// to cuBLAS and convolutions into calls to cuDNN: custom-calls whose
// backend_config (GemmBackendConfig, CudnnConvBackendConfig) says what they
// compute. A module dumped after XLA's GPU passes carries them. This unit
// gives each its meaning as the HLO that computes the same value, so that
// the interpreter can evaluate them and every backend can compile them:
//
//  * `__cublas$gemm`, `__cublas$lt$matmul` (operands a, b, then c when
//    beta != 0, then the bias vector for a BIAS epilogue):
//      d = epilogue(alpha * dot(a, b) + beta * c + broadcast(bias))
//    dot with the config's dot_dimension_numbers and d's element type; the
//    bias runs along d's last dimension; epilogues DEFAULT, BIAS, RELU,
//    BIAS_RELU, GELU, BIAS_GELU (cuBLASLt's tanh approximation) and the
//    *_AUX forms, whose second result is the value before the activation.
//  * `__cublas$lt$matmul$f8` (a, b[, c], then a_scale and b_scale when
//    given): the same with fp8 operands, the dot accumulated in f32 and
//    times a_scale * b_scale before the result type; c, d and amax scales
//    are not said (kUnimplemented).
//  * `__cudnn$convForward` (input, filter): conv_result_scale * conv.
//  * `__cudnn$convBiasActivationForward` (input, filter, bias[, side input]):
//      activation(conv_result_scale * conv + side_input_scale * side
//                 + broadcast(bias along the output feature dimension))
//    with activation_mode none, sigmoid, relu, relu6, tanh, elu, leaky relu
//    (leakyrelu_alpha) or exact gelu.
//  * `__cudnn$convBackwardInput` (output gradient, filter) and
//    `__cudnn$convBackwardFilter` (input, output gradient): the gradients of
//    the forward convolution that window= and dim_labels= describe, each as
//    one convolution (the filter reversed and its features swapped; the
//    batch contracted), times conv_result_scale.
//  * `__op$block_scaled_dot` (lhs, rhs, lhs_scale[, rhs_scale][, global
//    scale]), the block-scaled matmul XLA's block_scaling_rewriter lowers:
//    lhs [B,] M x K and rhs [B,] N x K contracted on K, each times its scale
//    per block of K, as a scaled-dot (an absent rhs scale is a scalar, which
//    scaled-dot ignores), times the scalar global scale when there is one.
//  * `xla.gpu.ext.cub_sort` and `xla.gpu.ext.cub_sort_unassigned_scratch_size`
//    (keys[, values]; backend_config {"descending": bool}), the CUB radix
//    sort XLA's sort rewriter calls: a stable sort of each row (the last
//    dimension) by its keys, ascending or descending, the values moved with
//    them; floats in the total order except that -0 and +0 are equal keys
//    (a radix sort's order).
//  A tuple result's trailing u8/s8 workspace or scratch becomes zeros.
//
// The backend_config may be the GpuBackendConfig wrapper or the inner config,
// quoted or not, with snake_case or lowerCamelCase keys and enums as names or
// numbers. Absent fields take the value XLA's rewriters always write
// (alpha 1, conv_result_scale 1), not proto3's zero; a gemm without any
// backend_config is an error, since nothing says what it contracts.
#pragma once

#include <span>
#include <string_view>

#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {

// Whether `target` is one of the library targets above.
bool isLibraryCallTarget(std::string_view target);
// Whether `instruction` is a custom-call to one of them.
bool isLibraryCall(const HloInstruction& instruction);

// Replaces the library call `call` (in a computation of a module) by plain
// instructions computing the same value, placed where the call was, and
// rewires its users to them. Returns the instruction standing for it now.
// Errors name the call: a missing or malformed backend_config, an epilogue
// or activation it does not know (kUnimplemented), operands or a result
// that do not fit (kInvalidArgument). On error the computation is
// unchanged.
StatusOr<HloInstruction*> expandLibraryCall(HloInstruction& call);

// What expandLibraryCall would say of `call`, without changing its module
// (OK when it expands). For the backends' messages about a call left in
// place.
Status libraryCallStatus(const HloInstruction& call);

// Custom-calls that only annotate their one operand for XLA's partitioner
// or memory-space assignment (Sharding, SPMDFullToShardShape,
// SPMDShardToFullShape, MoveToHost, MoveToDevice, annotate_device_placement,
// LayoutConstraint): on one device the value passes through unchanged, when
// the call keeps its operand's shape.
bool isAnnotationTarget(std::string_view target);
// Whether `instruction` is such a call that keeps its operand's shape.
bool isPassThroughAnnotation(const HloInstruction& instruction);

struct HloEvaluatorOptions;
// The interpreter's evaluation of a library call on its operands' values:
// its expansion, in a module of its own, evaluated with `options`.
StatusOr<Literal> evaluateLibraryCall(const HloInstruction& call,
                                      std::span<const Literal* const> operands,
                                      const HloEvaluatorOptions& options);

}  // namespace hloscope
