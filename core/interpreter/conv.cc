// Convolution (XLA semantics): dim_labels, window size / stride / padding /
// lhs (base) dilation / rhs (window) dilation / reversal, feature_group_count
// and batch_group_count, any number of spatial dimensions.
//
// Every output element accumulates over the window positions (row-major)
// and, within each, over the input features of its group, skipping window
// positions that fall on padding or dilation holes — the order of XLA's
// evaluator. f32/f64 (and narrow floats, accumulated in f32) run each window
// position as a GEMM over the valid output rows, accumulating in place, which
// keeps that order exactly; other types use the direct loop.
#include <algorithm>
#include <complex>
#include <string>
#include <utility>

#include "core/interpreter/convolution_geometry.h"
#include "core/interpreter/ops_internal.h"

namespace hloscope::evaluator {

namespace {

// Direct loop in XLA's order.
template <typename T>
void directConvolution(const ConvGeometry& g, const T* lhs, const T* rhs, T* out) {
    const ConvolutionDimensionNumbers& dn = *g.dn;
    const int64_t total = elementProduct(g.outDims);
    const size_t sr = static_cast<size_t>(g.spatialRank);
    std::vector<int64_t> windowSizes(sr);
    for (size_t i = 0; i < sr; ++i) windowSizes[i] = g.window[i].size;
    if (total == 0 || elementProduct(windowSizes) == 0) return;
    const int64_t outGroupF = g.outFeatures / g.featureGroups;
    const int64_t outGroupB = g.outFeatures / g.batchGroups;
    const int64_t batchGroupSize = g.inBatch / g.batchGroups;
    const int64_t lhsFeatureStride = g.lhsStrides[static_cast<size_t>(dn.inputFeatureDimension)];
    const int64_t rhsInStride = g.rhsStrides[static_cast<size_t>(dn.kernelInputFeatureDimension)];
    std::vector<int64_t> outIndex(g.outDims.size(), 0);
    std::vector<int64_t> win(sr, 0);
    for (int64_t linear = 0; linear < total; ++linear, nextIndex(outIndex, g.outDims)) {
        const int64_t b = outIndex[static_cast<size_t>(dn.outputBatchDimension)];
        const int64_t f = outIndex[static_cast<size_t>(dn.outputFeatureDimension)];
        const int64_t featureGroup = f / outGroupF;
        const int64_t batchGroup = f / outGroupB;
        const int64_t lhsBatch = b + batchGroup * batchGroupSize;
        const T* lhsBase = lhs +
                           lhsBatch * g.lhsStrides[static_cast<size_t>(dn.inputBatchDimension)] +
                           featureGroup * g.kernelIn * lhsFeatureStride;
        const T* rhsBase =
            rhs + f * g.rhsStrides[static_cast<size_t>(dn.kernelOutputFeatureDimension)];
        T sum = T(0);
        std::fill(win.begin(), win.end(), 0);
        do {
            int64_t lhsOffset = 0, rhsOffset = 0;
            bool valid = true;
            for (size_t i = 0; i < sr; ++i) {
                const WindowDimension& w = g.window[i];
                const int64_t pos = convolutionInputPosition(
                    w, g.inSpatialSizes[i],
                    outIndex[static_cast<size_t>(dn.outputSpatialDimensions[i])], win[i]);
                if (pos < 0) {
                    valid = false;
                    break;
                }
                lhsOffset += pos * g.lhsStrides[static_cast<size_t>(dn.inputSpatialDimensions[i])];
                const int64_t k = w.windowReversal ? w.size - 1 - win[i] : win[i];
                rhsOffset += k * g.rhsStrides[static_cast<size_t>(dn.kernelSpatialDimensions[i])];
            }
            if (!valid) continue;
            for (int64_t iz = 0; iz < g.kernelIn; ++iz)
                sum = sum + lhsBase[lhsOffset + iz * lhsFeatureStride] *
                                rhsBase[rhsOffset + iz * rhsInStride];
        } while (nextIndex(win, windowSizes));
        out[linear] = sum;
    }
}

// Window position by window position, as GEMMs over the valid output rows.
template <typename T>
void gemmConvolution(const ConvGeometry& g, const T* lhs, const T* rhs, T* out) {
    const ConvolutionDimensionNumbers& dn = *g.dn;
    const size_t sr = static_cast<size_t>(g.spatialRank);
    const int64_t spatialCount = elementProduct(g.outSpatialSizes);
    const int64_t rows = g.outBatch * spatialCount;
    if (rows == 0 || g.outFeatures == 0) return;
    // Accumulator: [outBatch][out spatial (row-major)][outFeatures].
    std::vector<T> acc(static_cast<size_t>(rows * g.outFeatures), T(0));
    const int64_t groups = std::max(g.featureGroups, g.batchGroups);
    const int64_t groupOut = g.outFeatures / groups;
    const int64_t kin = g.kernelIn;
    const int64_t lhsBatchStride = g.lhsStrides[static_cast<size_t>(dn.inputBatchDimension)];
    const int64_t lhsFeatureStride = g.lhsStrides[static_cast<size_t>(dn.inputFeatureDimension)];
    const int64_t rhsInStride = g.rhsStrides[static_cast<size_t>(dn.kernelInputFeatureDimension)];
    const int64_t rhsOutStride = g.rhsStrides[static_cast<size_t>(dn.kernelOutputFeatureDimension)];

    std::vector<int64_t> windowSizes(sr);
    for (size_t i = 0; i < sr; ++i) windowSizes[i] = g.window[i].size;
    if (elementProduct(windowSizes) == 0) return;
    std::vector<int64_t> win(sr, 0);
    std::vector<int64_t> outSpatial(sr, 0);
    // Valid output spatial positions of the current window position and the
    // lhs spatial offset of each.
    std::vector<int64_t> validSpatial, lhsSpatialOffset;
    constexpr int64_t kChunk = 1024;
    std::vector<T> gathered(static_cast<size_t>(kChunk * kin));
    std::vector<T> tile(static_cast<size_t>(kChunk * groupOut));
    std::vector<int64_t> chunkRows(static_cast<size_t>(kChunk)),
        chunkLhs(static_cast<size_t>(kChunk));
    do {
        int64_t rhsOffset = 0;
        for (size_t i = 0; i < sr; ++i) {
            const WindowDimension& w = g.window[i];
            const int64_t k = w.windowReversal ? w.size - 1 - win[i] : win[i];
            rhsOffset += k * g.rhsStrides[static_cast<size_t>(dn.kernelSpatialDimensions[i])];
        }
        validSpatial.clear();
        lhsSpatialOffset.clear();
        std::fill(outSpatial.begin(), outSpatial.end(), 0);
        for (int64_t s = 0; s < spatialCount; ++s, nextIndex(outSpatial, g.outSpatialSizes)) {
            int64_t offset = 0;
            bool valid = true;
            for (size_t i = 0; i < sr; ++i) {
                const int64_t pos =
                    convolutionInputPosition(g.window[i], g.inSpatialSizes[i], outSpatial[i], win[i]);
                if (pos < 0) {
                    valid = false;
                    break;
                }
                offset += pos * g.lhsStrides[static_cast<size_t>(dn.inputSpatialDimensions[i])];
            }
            if (!valid) continue;
            validSpatial.push_back(s);
            lhsSpatialOffset.push_back(offset);
        }
        if (validSpatial.empty()) continue;
        const int64_t validCount = static_cast<int64_t>(validSpatial.size());
        for (int64_t group = 0; group < groups; ++group) {
            const int64_t featureBase = g.featureGroups > 1 ? group * kin : 0;
            const int64_t batchBase = g.batchGroups > 1 ? group * g.outBatch : 0;
            const int64_t outBase = group * groupOut;
            const T* kernel = rhs + rhsOffset + outBase * rhsOutStride;
            // Rows are (b, valid spatial position), taken in chunks.
            const int64_t total = g.outBatch * validCount;
            for (int64_t start = 0; start < total; start += kChunk) {
                const int64_t count = std::min(kChunk, total - start);
                for (int64_t r = 0; r < count; ++r) {
                    const int64_t row = start + r;
                    const int64_t b = row / validCount;
                    const int64_t v = row % validCount;
                    chunkRows[static_cast<size_t>(r)] =
                        b * spatialCount + validSpatial[static_cast<size_t>(v)];
                    chunkLhs[static_cast<size_t>(r)] = (b + batchBase) * lhsBatchStride +
                                                       lhsSpatialOffset[static_cast<size_t>(v)] +
                                                       featureBase * lhsFeatureStride;
                }
                for (int64_t r = 0; r < count; ++r) {
                    const T* src = lhs + chunkLhs[static_cast<size_t>(r)];
                    T* dst = gathered.data() + r * kin;
                    for (int64_t iz = 0; iz < kin; ++iz) dst[iz] = src[iz * lhsFeatureStride];
                    const T* accRow =
                        acc.data() + chunkRows[static_cast<size_t>(r)] * g.outFeatures + outBase;
                    std::copy(accRow, accRow + groupOut, tile.data() + r * groupOut);
                }
                gemm(1, count, groupOut, kin, gathered.data(), MatrixStrides{0, kin, 1}, kernel,
                     MatrixStrides{0, rhsInStride, rhsOutStride}, tile.data(), true);
                for (int64_t r = 0; r < count; ++r) {
                    T* accRow =
                        acc.data() + chunkRows[static_cast<size_t>(r)] * g.outFeatures + outBase;
                    std::copy(tile.data() + r * groupOut, tile.data() + (r + 1) * groupOut, accRow);
                }
            }
        }
    } while (nextIndex(win, windowSizes));

    // Scatter the accumulator into the output's dimension order.
    const int64_t outBatchStride = g.outStrides[static_cast<size_t>(dn.outputBatchDimension)];
    const int64_t outFeatureStride = g.outStrides[static_cast<size_t>(dn.outputFeatureDimension)];
    std::fill(outSpatial.begin(), outSpatial.end(), 0);
    for (int64_t s = 0; s < spatialCount; ++s, nextIndex(outSpatial, g.outSpatialSizes)) {
        int64_t spatialOffset = 0;
        for (size_t i = 0; i < sr; ++i)
            spatialOffset +=
                outSpatial[i] * g.outStrides[static_cast<size_t>(dn.outputSpatialDimensions[i])];
        for (int64_t b = 0; b < g.outBatch; ++b) {
            const T* accRow = acc.data() + (b * spatialCount + s) * g.outFeatures;
            T* dst = out + b * outBatchStride + spatialOffset;
            for (int64_t f = 0; f < g.outFeatures; ++f) dst[f * outFeatureStride] = accRow[f];
        }
    }
}

}  // namespace

StatusOr<Literal> evaluateConvolution(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 2));
    const Literal& lhs = *operands[0];
    const Literal& rhs = *operands[1];
    const Shape& outShape = instruction.shape();
    if (!outShape.isArray()) return invalid(instruction, "convolution result must be an array");
    HLO_ASSIGN_OR_RETURN(ConvGeometry g,
                         convolutionGeometry(instruction, lhs.shape(), rhs.shape(), outShape));
    const PrimitiveType out = outShape.elementType();
    const PrimitiveType accType = accumulationType(out, lhs.elementType(), rhs.elementType());
    if (accType == PrimitiveType::PRIMITIVE_TYPE_INVALID)
        return unsupported(instruction,
                           "convolution into " + std::string(primitive_util::name(out)));
    HLO_ASSIGN_OR_RETURN(Literal a, convertedTo(instruction, lhs, accType));
    HLO_ASSIGN_OR_RETURN(Literal b, convertedTo(instruction, rhs, accType));
    Shape accShape = outShape;
    accShape.setElementType(accType);
    Literal result(accShape);
    switch (accType) {
        case PrimitiveType::F32:
            gemmConvolution(g, std::as_const(a).data<float>().data(),
                            std::as_const(b).data<float>().data(), result.data<float>().data());
            break;
        case PrimitiveType::F64:
            gemmConvolution(g, std::as_const(a).data<double>().data(),
                            std::as_const(b).data<double>().data(), result.data<double>().data());
            break;
        case PrimitiveType::S64:
        case PrimitiveType::U64:
            directConvolution(g, static_cast<const uint64_t*>(std::as_const(a).untypedData()),
                              static_cast<const uint64_t*>(std::as_const(b).untypedData()),
                              static_cast<uint64_t*>(result.untypedData()));
            break;
        case PrimitiveType::C64:
            directConvolution(g, std::as_const(a).data<std::complex<float>>().data(),
                              std::as_const(b).data<std::complex<float>>().data(),
                              result.data<std::complex<float>>().data());
            break;
        case PrimitiveType::C128:
            directConvolution(g, std::as_const(a).data<std::complex<double>>().data(),
                              std::as_const(b).data<std::complex<double>>().data(),
                              result.data<std::complex<double>>().data());
            break;
        default:
            return unsupported(instruction, "convolution accumulating in " +
                                                std::string(primitive_util::name(accType)));
    }
    return convertedTo(instruction, result, out);
}

}  // namespace hloscope::evaluator
