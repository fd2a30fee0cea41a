// Native scatter: XLA's scatter on dense row-major buffers, for the CPU runtime, in the
// forms real models use (the embedding gradients of BERT and GPT training steps, the
// cache updates of decoders): one operand and one updates array of f32, f64, f16, bf16,
// s32, s64 or u32, s32/s64 indices, and an update computation that is one of add, multiply,
// maximum, minimum of the old and the new value (either order) or the new value itself
// (overwrite). Semantics as XLA's and the reference interpreter's: each update window lands
// at the start its index vector names; a window that does not fit the operand whole is
// skipped; updates combine in the updates' row-major order, so duplicate indices accumulate
// exactly as in the interpreter. Batching dimensions (a per-batch index, as JAX lowers
// `x.at[b, idx]` under vmap) start at the update's own position in the paired index
// dimension. Anything else (several operands, other combiners or types) is not planned:
// planNativeScatter says why and the caller falls back.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/support/status.h"

namespace hloscope {

namespace evaluator {
enum class BinaryKind;
}

struct NativeScatterPlan {
    bool overwrite = false;                 // the update computation returns the new value
    evaluator::BinaryKind kind{};           // else: it applies this to (old, update)
    bool swapped = false;                   // ... as op(update, old)
    PrimitiveType type = PrimitiveType::F32;
    PrimitiveType indexType = PrimitiveType::S32;
    int64_t operandElements = 0;
    // Per operand dimension: its size, row-major stride, and the extent of a window in it
    // (the window's size, 1 in an inserted dimension).
    std::vector<int64_t> operandDims, operandStrides, windowExtent;
    // The update scatter dimensions (updates' dimensions that are not window dimensions), in
    // order: their sizes, their strides in the updates, the matching strides of the indices.
    std::vector<int64_t> scatterSizes, updateScatterStrides, indexScatterStrides;
    // The index vector: its length and stride in the indices; component k is the start in
    // operand dimension scatterDimsToOperandDims[k].
    int64_t indexVectorSize = 1;
    int64_t indexVectorStride = 0;
    std::vector<int64_t> scatterDimsToOperandDims;
    // Batching dimensions: operand dimension batchOperandDims[i] starts at the scatter index's
    // component batchScatterPositions[i] (a position in scatterSizes).
    std::vector<int64_t> batchOperandDims, batchScatterPositions;
    // The window: per window dimension, its size, its stride in the updates and in the operand.
    std::vector<int64_t> windowSizes, updateWindowStrides, operandWindowStrides;
};

// The plan of `scatter`, or kUnimplemented naming what it does not take.
StatusOr<NativeScatterPlan> planNativeScatter(const HloInstruction& scatter);

// Scatters `updates` at `indices` into `result`, which must already hold the operand (or
// be the operand's storage). `result` must not overlap `indices` or `updates`.
void runNativeScatter(const NativeScatterPlan& plan, const void* indices, const void* updates, void* result);

}  // namespace hloscope
