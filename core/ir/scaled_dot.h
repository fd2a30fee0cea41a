// scaled-dot's types, as XLA's scaled-dot rewriter chooses them and the reference evaluator
// (core/interpreter/linalg.cc) and the GPU backend's kernels (gpu_kernel_emitter.cc) compute:
// each operand is multiplied by its scale (broadcast in blocks: scale dimension i repeats
// operand.dimension(i) / scale.dimension(i) times; a scalar scale is ignored) in
// scaledDotType(operand, scale), both products are converted to scaledDotType(lhs, rhs) of
// those, and the dot runs in scaledDotType(that, result) before converting to the result.
#pragma once

#include "core/ir/primitive_type.h"

namespace hloscope {

// Two narrow (< 16-bit) types meet in bf16; equal types stay; equal widths meet in f32; else
// the wider type.
inline PrimitiveType scaledDotType(PrimitiveType a, PrimitiveType b) {
    const int wa = primitive_util::bitWidth(a);
    const int wb = primitive_util::bitWidth(b);
    if (wa < 16 && wb < 16) return PrimitiveType::BF16;
    if (a == b) return a;
    if (wa == wb) return PrimitiveType::F32;
    return wa > wb ? a : b;
}

}  // namespace hloscope
