// Convolution for the CPU runtime: im2col + GEMM. The output rows (batch x
// output spatial positions) are taken in blocks; for each block the input
// patches are gathered into a [rows, window positions x input features]
// matrix (zeros on padding and base-dilation holes) and multiplied by the
// kernel, packed once per run into [window positions x input features,
// output features], with the runtime's Eigen GEMM (gemm.h) — the library
// XLA:CPU calls for convolutions too. Blocks run in parallel on the thread
// pool; a block's patch matrix (about 256 KiB) stays in cache for its GEMM.
// When the output is [batch, spatial..., feature] (TensorFlow's NHWC) with
// one feature group, the GEMM writes the output rows in place; otherwise a
// block's result is scattered into the output's dimension order. Grouped
// convolutions with little work per group (depthwise ones: k x output
// features per group <= 64) skip im2col and GEMM: each output row sums its
// window's products directly, over all groups at once.
//
// planConvolution says whether a convolution maps onto this: f32 or f64
// operands and result of one type, dense default layouts, any dim_labels,
// window (stride, padding, both dilations, reversal) and feature groups;
// batch_group_count > 1 is refused with the reason (the caller falls back
// to the interpreter, visibly).
#pragma once

#include <cstdint>
#include <functional>

#include "core/interpreter/convolution_geometry.h"
#include "core/ir/primitive_type.h"
#include "core/support/status.h"

namespace hloscope {

class HloInstruction;
class ThreadPool;

struct ConvPlan {
    ConvGeometry geometry;
    PrimitiveType type = PrimitiveType::F32;  // F32 or F64
    int64_t windowPositions = 1;              // product of the window sizes
    int64_t k = 1;                            // windowPositions * input features per group
    int64_t groupOut = 1;                     // output features per group
    int64_t spatialCount = 1;                 // output spatial positions per batch element
    int64_t rows = 0;                         // outBatch * spatialCount
    bool outputInPlace = false;               // [batch, spatial..., feature], one group or direct
    bool direct = false;                      // grouped, little work per group: no im2col/GEMM
    double flops() const {
        return 2.0 * static_cast<double>(rows) * static_cast<double>(k) *
               static_cast<double>(geometry.outFeatures);
    }
};

StatusOr<ConvPlan> planConvolution(const HloInstruction& convolution);

// Runs the plan on dense buffers (lhs, rhs, out as planned). `pool` null: on
// this thread. For an in-place plan, `afterRows(begin, end)` (when set) runs
// right after output rows [begin, end) are complete, on the thread that
// computed them, while they are in its cache (a fusion's epilogue).
void runConvolution(const ConvPlan& plan, const void* lhs, const void* rhs, void* out, ThreadPool* pool,
                    const std::function<void(int64_t, int64_t)>& afterRows = {});

}  // namespace hloscope
