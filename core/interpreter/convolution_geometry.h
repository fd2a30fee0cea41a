// The geometry of an HLO convolution (XLA semantics), checked once and
// shared by the reference evaluator (core/interpreter/conv.cc) and the CPU
// backend's im2col + GEMM convolution (compiler/runtime/convolution.h):
// dim_labels, window size / stride / padding / lhs (base) dilation / rhs
// (window) dilation / reversal, feature_group_count and batch_group_count,
// any number of spatial dimensions. Operands and result are dense row-major.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/shape.h"
#include "core/support/status.h"

namespace hloscope {

struct ConvGeometry {
    const ConvolutionDimensionNumbers* dn = nullptr;  // the instruction's
    std::vector<WindowDimension> window;               // per spatial dimension
    int64_t spatialRank = 0;
    int64_t inBatch = 0, inFeatures = 0, kernelIn = 0, outFeatures = 0, outBatch = 0;
    int64_t featureGroups = 1, batchGroups = 1;
    std::vector<int64_t> lhsStrides, rhsStrides, outDims, outStrides;  // row-major, in elements
    std::vector<int64_t> inSpatialSizes;                                // per spatial dimension
    std::vector<int64_t> outSpatialSizes;
};

// The geometry of `instruction` (a convolution) with these operand and
// result shapes, or an error naming the instruction and what is
// inconsistent (kInvalidArgument) or not handled (kUnimplemented: both
// group counts above one).
StatusOr<ConvGeometry> convolutionGeometry(const HloInstruction& instruction, const Shape& lhs, const Shape& rhs,
                                           const Shape& out);

// For one spatial dimension, window `w`, output position `out` and window
// offset `win`: the input position read, or -1 on padding or a base-dilation
// hole.
int64_t convolutionInputPosition(const WindowDimension& w, int64_t inSize, int64_t out, int64_t win);

}  // namespace hloscope
