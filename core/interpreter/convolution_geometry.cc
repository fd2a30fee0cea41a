#include "core/interpreter/convolution_geometry.h"

#include "core/interpreter/interpreter_internal.h"
#include "core/interpreter/ops_internal.h"

namespace hloscope {

using evaluator::invalid;
using evaluator::rowMajorStrides;
using evaluator::unsupported;

StatusOr<ConvGeometry> convolutionGeometry(const HloInstruction& instruction, const Shape& lhs,
                                    const Shape& rhs, const Shape& out) {
    ConvGeometry g;
    g.dn = instruction.convolutionDimensionNumbers();
    if (g.dn == nullptr) return invalid(instruction, "convolution without dim_labels");
    const ConvolutionDimensionNumbers& dn = *g.dn;
    g.spatialRank = static_cast<int64_t>(dn.inputSpatialDimensions.size());
    if (static_cast<int64_t>(dn.kernelSpatialDimensions.size()) != g.spatialRank ||
        static_cast<int64_t>(dn.outputSpatialDimensions.size()) != g.spatialRank)
        return invalid(instruction, "dim_labels spatial dimension counts differ");
    if (lhs.rank() != g.spatialRank + 2 || rhs.rank() != g.spatialRank + 2 ||
        out.rank() != g.spatialRank + 2)
        return invalid(instruction, "operand ranks do not match dim_labels " + dn.toString());
    auto inRange = [](int64_t d, int64_t rank) { return d >= 0 && d < rank; };
    const int64_t rank = g.spatialRank + 2;
    bool ok = inRange(dn.inputBatchDimension, rank) && inRange(dn.inputFeatureDimension, rank) &&
              inRange(dn.kernelInputFeatureDimension, rank) &&
              inRange(dn.kernelOutputFeatureDimension, rank) &&
              inRange(dn.outputBatchDimension, rank) && inRange(dn.outputFeatureDimension, rank);
    for (int64_t i = 0; i < g.spatialRank; ++i)
        ok = ok && inRange(dn.inputSpatialDimensions[static_cast<size_t>(i)], rank) &&
             inRange(dn.kernelSpatialDimensions[static_cast<size_t>(i)], rank) &&
             inRange(dn.outputSpatialDimensions[static_cast<size_t>(i)], rank);
    if (!ok) return invalid(instruction, "dim_labels out of range");

    if (const Window* window = instruction.window()) {
        g.window = window->dimensions;
    } else {
        for (int64_t d : dn.kernelSpatialDimensions) {
            WindowDimension w;
            w.size = rhs.dimensions(d);
            g.window.push_back(w);
        }
    }
    if (static_cast<int64_t>(g.window.size()) != g.spatialRank)
        return invalid(instruction, "window rank differs from the number of spatial dimensions");
    for (int64_t i = 0; i < g.spatialRank; ++i) {
        const WindowDimension& w = g.window[static_cast<size_t>(i)];
        if (w.size != rhs.dimensions(dn.kernelSpatialDimensions[static_cast<size_t>(i)]))
            return invalid(instruction, "window size differs from the kernel's spatial size");
        if (w.stride < 1 || w.windowDilation < 1 || w.baseDilation < 1)
            return invalid(instruction, "window stride and dilations must be positive");
        g.inSpatialSizes.push_back(
            lhs.dimensions(dn.inputSpatialDimensions[static_cast<size_t>(i)]));
        g.outSpatialSizes.push_back(
            out.dimensions(dn.outputSpatialDimensions[static_cast<size_t>(i)]));
    }
    g.inBatch = lhs.dimensions(dn.inputBatchDimension);
    g.inFeatures = lhs.dimensions(dn.inputFeatureDimension);
    g.kernelIn = rhs.dimensions(dn.kernelInputFeatureDimension);
    g.outFeatures = out.dimensions(dn.outputFeatureDimension);
    g.outBatch = out.dimensions(dn.outputBatchDimension);
    g.featureGroups = instruction.featureGroupCount();
    g.batchGroups = instruction.batchGroupCount();
    if (g.featureGroups < 1 || g.batchGroups < 1)
        return invalid(instruction, "group counts must be positive");
    if (rhs.dimensions(dn.kernelOutputFeatureDimension) != g.outFeatures)
        return invalid(instruction, "kernel output features differ from the output features");
    if (g.inFeatures % g.featureGroups != 0 || g.kernelIn * g.featureGroups != g.inFeatures)
        return invalid(instruction, "input features " + std::to_string(g.inFeatures) +
                                        " do not match kernel input features " +
                                        std::to_string(g.kernelIn) + " x feature_group_count " +
                                        std::to_string(g.featureGroups));
    if (g.outFeatures % g.featureGroups != 0 || g.outFeatures % g.batchGroups != 0)
        return invalid(instruction, "output features not divisible by the group counts");
    if (g.inBatch % g.batchGroups != 0 || g.outBatch * g.batchGroups != g.inBatch)
        return invalid(instruction, "batch sizes do not match batch_group_count");
    if (g.featureGroups > 1 && g.batchGroups > 1)
        return unsupported(instruction, "both feature_group_count and batch_group_count > 1");
    g.lhsStrides = rowMajorStrides(lhs.dimensions());
    g.rhsStrides = rowMajorStrides(rhs.dimensions());
    g.outDims = out.dimensions();
    g.outStrides = rowMajorStrides(g.outDims);
    return g;
}

// For spatial dim d, window offset w and output position o: the input
// position, or -1 for padding / holes.
int64_t convolutionInputPosition(const WindowDimension& w, int64_t inSize, int64_t out, int64_t win) {
    int64_t pos = out * w.stride - w.paddingLow + win * w.windowDilation;
    if (w.baseDilation > 1) {
        if (pos % w.baseDilation != 0) return -1;
        pos /= w.baseDilation;
    }
    return (pos >= 0 && pos < inSize) ? pos : -1;
}


}  // namespace hloscope
