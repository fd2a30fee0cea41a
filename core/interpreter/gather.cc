// gather and scatter (XLA semantics, batching dimensions included).
//
// gather: output batch dimensions (those not in offset_dims) walk the start
// indices (their dimensions other than index_vector_dim, in order); each
// start vector is scattered into operand dimensions by start_index_map,
// operand_batching_dims take the index of the matching
// start_indices_batching_dims, and starts are clamped to
// [0, operand_dim - slice_size] as XLA does.
//
// scatter: update scatter dimensions are walked in row-major order and,
// within each, the update window in row-major order; the combiner is called
// as to_apply(operand values..., update values...). A scatter index whose
// whole update window does not fit in the operand is skipped, as in XLA.
#include <algorithm>
#include <string>

#include "core/interpreter/ops_internal.h"

namespace hloscope::evaluator {

namespace {

std::string dimsText(std::span<const int64_t> dims) {
    std::string text = "{";
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) text += ",";
        text += std::to_string(dims[i]);
    }
    return text + "}";
}

Status checkDimList(const HloInstruction& instruction, std::span<const int64_t> dims, int64_t rank,
                    const char* what) {
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] < 0 || dims[i] >= rank)
            return invalid(instruction, std::string(what) + " " + dimsText(dims) +
                                            " out of range for rank " + std::to_string(rank));
        for (size_t j = 0; j < i; ++j)
            if (dims[j] == dims[i])
                return invalid(instruction, std::string(what) + " repeats a dimension");
    }
    return Status::ok();
}

// The index array viewed as [batch dims...][index vector]: the dimensions
// other than index_vector_dim (in order) and the vector's stride.
struct IndexLayout {
    std::vector<int64_t> batchDims;     // index-array dimensions, in order
    std::vector<int64_t> batchStrides;  // their strides
    int64_t vectorSize = 1;
    int64_t vectorStride = 0;
};

StatusOr<IndexLayout> indexLayout(const HloInstruction& instruction, const Shape& indices,
                                  int64_t indexVectorDim) {
    IndexLayout layout;
    const int64_t rank = indices.rank();
    if (indexVectorDim < 0 || indexVectorDim > rank)
        return invalid(instruction, "index_vector_dim out of range");
    if (!primitive_util::isInteger(indices.elementType()))
        return invalid(instruction, "indices must be integers");
    const std::vector<int64_t> strides = rowMajorStrides(indices.dimensions());
    for (int64_t d = 0; d < rank; ++d) {
        if (d == indexVectorDim) {
            layout.vectorSize = indices.dimensions(d);
            layout.vectorStride = strides[static_cast<size_t>(d)];
            continue;
        }
        layout.batchDims.push_back(indices.dimensions(d));
        layout.batchStrides.push_back(strides[static_cast<size_t>(d)]);
    }
    return layout;
}

// Position of index-array dimension `d` among the batch dimensions.
int64_t batchPosition(int64_t d, int64_t indexVectorDim) { return d < indexVectorDim ? d : d - 1; }

// Copies one element of `bytes` bytes.
inline void copyElement(uint8_t* dst, const uint8_t* src, int64_t bytes) {
    switch (bytes) {
        case 1:
            *dst = *src;
            break;
        case 2:
            std::memcpy(dst, src, 2);
            break;
        case 4:
            std::memcpy(dst, src, 4);
            break;
        case 8:
            std::memcpy(dst, src, 8);
            break;
        default:
            std::memcpy(dst, src, static_cast<size_t>(bytes));
            break;
    }
}

Literal packResults(std::vector<Literal>& results, const Shape& shape) {
    if (shape.isTuple()) return Literal::makeTuple(std::move(results));
    return std::move(results[0]);
}

// What a gather reads, checked against its operands and result.
struct GatherGeometry {
    const GatherDimensionNumbers* dn = nullptr;
    std::vector<int64_t> sliceSizes;
    IndexLayout index;
    std::vector<int64_t> windowOperandDims;  // operand dimensions that offset dims walk
    std::vector<int64_t> outBatchDims;       // output dims not in offset_dims
    std::vector<int64_t> offsetSizes;
    // Operand batching dim i reads the position of start-index batch dim
    // startIndicesBatchingDims[i].
    std::vector<int64_t> batchingSource;
};

// The dimension numbers and slice sizes against the operand and the index array.
StatusOr<GatherGeometry> gatherInputGeometry(const HloInstruction& instruction,
                                             const Literal& operand, const Literal& indices) {
    GatherGeometry g;
    const GatherDimensionNumbers* dn = instruction.gatherDimensionNumbers();
    if (dn == nullptr) return invalid(instruction, "gather without dimension numbers");
    g.dn = dn;
    const std::vector<int64_t>& opDims = operand.shape().dimensions();
    const int64_t opRank = static_cast<int64_t>(opDims.size());
    g.sliceSizes =
        instruction.extra() ? instruction.extra()->gatherSliceSizes : std::vector<int64_t>{};
    const std::vector<int64_t>& sliceSizes = g.sliceSizes;
    if (static_cast<int64_t>(sliceSizes.size()) != opRank)
        return invalid(instruction, "slice_sizes must have one entry per operand dimension");
    for (int64_t d = 0; d < opRank; ++d)
        if (sliceSizes[static_cast<size_t>(d)] < 0 ||
            sliceSizes[static_cast<size_t>(d)] > opDims[static_cast<size_t>(d)])
            return invalid(instruction, "slice_sizes exceed the operand dimensions");
    HLO_ASSIGN_OR_RETURN(g.index, indexLayout(instruction, indices.shape(), dn->indexVectorDim));
    const IndexLayout& index = g.index;
    HLO_RETURN_IF_ERROR(checkDimList(instruction, dn->startIndexMap, opRank, "start_index_map"));
    HLO_RETURN_IF_ERROR(
        checkDimList(instruction, dn->collapsedSliceDims, opRank, "collapsed_slice_dims"));
    HLO_RETURN_IF_ERROR(
        checkDimList(instruction, dn->operandBatchingDims, opRank, "operand_batching_dims"));
    HLO_RETURN_IF_ERROR(checkDimList(instruction, dn->startIndicesBatchingDims,
                                     indices.shape().rank(), "start_indices_batching_dims"));
    if (static_cast<int64_t>(dn->startIndexMap.size()) != index.vectorSize)
        return invalid(instruction, "start_index_map size differs from the index vector size");
    if (dn->operandBatchingDims.size() != dn->startIndicesBatchingDims.size())
        return invalid(instruction, "batching dimension counts differ");
    for (int64_t d : dn->startIndicesBatchingDims)
        if (d == dn->indexVectorDim)
            return invalid(instruction, "start_indices_batching_dims names index_vector_dim");
    return g;
}

// The result's shape against the slices and the index array's batch dimensions.
Status gatherOutputGeometry(const HloInstruction& instruction, const Literal& operand,
                            GatherGeometry& g) {
    const GatherDimensionNumbers* dn = g.dn;
    const std::vector<int64_t>& sliceSizes = g.sliceSizes;
    const IndexLayout& index = g.index;
    const std::vector<int64_t>& opDims = operand.shape().dimensions();
    const int64_t opRank = static_cast<int64_t>(opDims.size());
    const Shape& outShape = instruction.shape();
    if (!outShape.isArray() || outShape.elementType() != operand.elementType())
        return invalid(instruction, "gather result must be an array of the operand's type");
    const std::vector<int64_t>& outDims = outShape.dimensions();
    const int64_t outRank = outShape.rank();
    HLO_RETURN_IF_ERROR(checkDimList(instruction, dn->offsetDims, outRank, "offset_dims"));
    std::vector<int64_t>& windowOperandDims = g.windowOperandDims;
    for (int64_t d = 0; d < opRank; ++d)
        if (!containsDim(dn->collapsedSliceDims, d) && !containsDim(dn->operandBatchingDims, d))
            windowOperandDims.push_back(d);
    for (int64_t d : dn->collapsedSliceDims)
        if (sliceSizes[static_cast<size_t>(d)] > 1)
            return invalid(instruction, "collapsed slice dimensions must have slice size <= 1");
    for (int64_t d : dn->operandBatchingDims)
        if (sliceSizes[static_cast<size_t>(d)] != 1)
            return invalid(instruction, "operand batching dimensions must have slice size 1");
    if (windowOperandDims.size() != dn->offsetDims.size())
        return invalid(instruction, "offset_dims count does not match the slice dimensions");
    std::vector<int64_t>& outBatchDims = g.outBatchDims;
    for (int64_t d = 0; d < outRank; ++d)
        if (!containsDim(dn->offsetDims, d)) outBatchDims.push_back(d);
    if (outBatchDims.size() != index.batchDims.size())
        return invalid(instruction, "output batch rank differs from the start indices' batch rank");
    for (size_t i = 0; i < outBatchDims.size(); ++i)
        if (outDims[static_cast<size_t>(outBatchDims[i])] != index.batchDims[i])
            return invalid(instruction, "output batch dimensions differ from the start indices");
    std::vector<int64_t>& offsetSizes = g.offsetSizes;
    for (size_t i = 0; i < dn->offsetDims.size(); ++i) {
        const int64_t size = sliceSizes[static_cast<size_t>(windowOperandDims[i])];
        if (outDims[static_cast<size_t>(dn->offsetDims[i])] != size)
            return invalid(instruction, "offset dimension sizes differ from slice_sizes");
        offsetSizes.push_back(size);
    }
    std::vector<int64_t>& batchingSource = g.batchingSource;
    for (int64_t d : dn->startIndicesBatchingDims)
        batchingSource.push_back(batchPosition(d, dn->indexVectorDim));
    for (size_t i = 0; i < dn->operandBatchingDims.size(); ++i)
        if (index.batchDims[static_cast<size_t>(batchingSource[i])] !=
            opDims[static_cast<size_t>(dn->operandBatchingDims[i])])
            return invalid(instruction, "batching dimension sizes differ");

    for (int64_t d : dn->collapsedSliceDims)
        if (sliceSizes[static_cast<size_t>(d)] == 0 && outShape.elementCount() > 0)
            return unsupported(instruction,
                               "gather with a zero-sized collapsed slice (operand dimension " +
                                   std::to_string(d) +
                                   ") has no operand element to read; XLA leaves its result "
                                   "undefined");
    return Status::ok();
}

// Each start vector's slice (starts clamped into the operand) copied into the result.
Literal gatherSlices(const HloInstruction& instruction, const GatherGeometry& geometry,
                     const Literal& operand, const Literal& indices) {
    const GatherDimensionNumbers* dn = geometry.dn;
    const std::vector<int64_t>& sliceSizes = geometry.sliceSizes;
    const IndexLayout& index = geometry.index;
    const std::vector<int64_t>& windowOperandDims = geometry.windowOperandDims;
    const std::vector<int64_t>& outBatchDims = geometry.outBatchDims;
    const std::vector<int64_t>& offsetSizes = geometry.offsetSizes;
    const std::vector<int64_t>& batchingSource = geometry.batchingSource;
    const std::vector<int64_t>& opDims = operand.shape().dimensions();
    const int64_t opRank = static_cast<int64_t>(opDims.size());
    const Shape& outShape = instruction.shape();
    const std::vector<int64_t>& outDims = outShape.dimensions();
    Literal result(outShape);
    const int64_t bytes = elementBytes(operand.elementType());
    const std::vector<int64_t> opStrides = rowMajorStrides(opDims);
    const std::vector<int64_t> outStrides = rowMajorStrides(outDims);
    std::vector<int64_t> offsetOpStrides, offsetOutStrides;
    for (size_t i = 0; i < dn->offsetDims.size(); ++i) {
        offsetOpStrides.push_back(opStrides[static_cast<size_t>(windowOperandDims[i])]);
        offsetOutStrides.push_back(outStrides[static_cast<size_t>(dn->offsetDims[i])]);
    }
    const uint8_t* src = static_cast<const uint8_t*>(operand.untypedData());
    uint8_t* dst = static_cast<uint8_t*>(result.untypedData());
    const int64_t batchCount = elementProduct(index.batchDims);
    const int64_t sliceCount = elementProduct(offsetSizes);
    if (batchCount == 0 || sliceCount == 0) return result;
    std::vector<int64_t> batchIndex(index.batchDims.size(), 0);
    std::vector<int64_t> start(static_cast<size_t>(opRank));
    std::vector<int64_t> offsetIndex(offsetSizes.size(), 0);
    for (int64_t g = 0; g < batchCount; ++g, nextIndex(batchIndex, index.batchDims)) {
        int64_t indexBase = 0, outBase = 0;
        for (size_t i = 0; i < batchIndex.size(); ++i) {
            indexBase += batchIndex[i] * index.batchStrides[i];
            outBase += batchIndex[i] * outStrides[static_cast<size_t>(outBatchDims[i])];
        }
        std::fill(start.begin(), start.end(), 0);
        for (int64_t k = 0; k < index.vectorSize; ++k)
            start[static_cast<size_t>(dn->startIndexMap[static_cast<size_t>(k)])] =
                readIndex(indices, indexBase + k * index.vectorStride);
        for (size_t i = 0; i < dn->operandBatchingDims.size(); ++i)
            start[static_cast<size_t>(dn->operandBatchingDims[i])] =
                batchIndex[static_cast<size_t>(batchingSource[i])];
        int64_t srcBase = 0;
        for (int64_t d = 0; d < opRank; ++d) {
            const int64_t limit =
                opDims[static_cast<size_t>(d)] - sliceSizes[static_cast<size_t>(d)];
            const int64_t s = std::clamp<int64_t>(start[static_cast<size_t>(d)], 0, limit);
            srcBase += s * opStrides[static_cast<size_t>(d)];
        }
        std::fill(offsetIndex.begin(), offsetIndex.end(), 0);
        for (int64_t e = 0; e < sliceCount; ++e, nextIndex(offsetIndex, offsetSizes)) {
            int64_t so = srcBase, dof = outBase;
            for (size_t i = 0; i < offsetIndex.size(); ++i) {
                so += offsetIndex[i] * offsetOpStrides[i];
                dof += offsetIndex[i] * offsetOutStrides[i];
            }
            copyElement(dst + dof * bytes, src + so * bytes, bytes);
        }
    }
    return result;
}

}  // namespace

StatusOr<Literal> evaluateGather(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 2));
    const Literal& operand = *operands[0];
    const Literal& indices = *operands[1];
    HLO_ASSIGN_OR_RETURN(GatherGeometry geometry,
                         gatherInputGeometry(instruction, operand, indices));
    HLO_RETURN_IF_ERROR(gatherOutputGeometry(instruction, operand, geometry));
    return gatherSlices(instruction, geometry, operand, indices);
}

namespace {

// Where a scatter writes, checked against its operands.
struct ScatterGeometry {
    const ScatterDimensionNumbers* dn = nullptr;
    size_t n = 0;  // operands, and as many updates
    IndexLayout index;
    std::vector<int64_t> scatterDims, scatterSizes;  // update dims that walk the indices
    std::vector<int64_t> windowOperandDims;          // operand dims the update window covers
    std::vector<int64_t> windowSizes;                // per update window dim
    std::vector<int64_t> windowExtent;               // per operand dim
    std::vector<int64_t> batchingSource;  // index batch position of each input batching dim
};

// The operands, indices and dimension numbers checked against each other.
StatusOr<ScatterGeometry> scatterInputGeometry(const HloInstruction& instruction,
                                               Operands operands) {
    ScatterGeometry g;
    const size_t n = (operands.size() - 1) / 2;
    g.n = n;
    const Literal& indices = *operands[n];
    const ScatterDimensionNumbers* dn = instruction.scatterDimensionNumbers();
    if (dn == nullptr) return invalid(instruction, "scatter without dimension numbers");
    g.dn = dn;
    if (instruction.toApply() == nullptr) return invalid(instruction, "scatter without to_apply");
    const std::vector<int64_t>& opDims = operands[0]->shape().dimensions();
    const std::vector<int64_t>& updDims = operands[n + 1]->shape().dimensions();
    for (size_t i = 0; i < n; ++i) {
        if (operands[i]->shape().dimensions() != opDims ||
            operands[n + 1 + i]->shape().dimensions() != updDims)
            return invalid(instruction, "scatter operands (or updates) differ in dimensions");
    }
    const int64_t opRank = static_cast<int64_t>(opDims.size());
    const int64_t updRank = static_cast<int64_t>(updDims.size());
    HLO_ASSIGN_OR_RETURN(g.index, indexLayout(instruction, indices.shape(), dn->indexVectorDim));
    const IndexLayout& index = g.index;
    HLO_RETURN_IF_ERROR(
        checkDimList(instruction, dn->updateWindowDims, updRank, "update_window_dims"));
    HLO_RETURN_IF_ERROR(
        checkDimList(instruction, dn->insertedWindowDims, opRank, "inserted_window_dims"));
    HLO_RETURN_IF_ERROR(checkDimList(instruction, dn->scatterDimsToOperandDims, opRank,
                                     "scatter_dims_to_operand_dims"));
    HLO_RETURN_IF_ERROR(
        checkDimList(instruction, dn->inputBatchingDims, opRank, "input_batching_dims"));
    HLO_RETURN_IF_ERROR(checkDimList(instruction, dn->scatterIndicesBatchingDims,
                                     indices.shape().rank(), "scatter_indices_batching_dims"));
    if (static_cast<int64_t>(dn->scatterDimsToOperandDims.size()) != index.vectorSize)
        return invalid(instruction,
                       "scatter_dims_to_operand_dims size differs from the index vector size");
    if (dn->inputBatchingDims.size() != dn->scatterIndicesBatchingDims.size())
        return invalid(instruction, "batching dimension counts differ");
    for (int64_t d : dn->scatterIndicesBatchingDims)
        if (d == dn->indexVectorDim)
            return invalid(instruction, "scatter_indices_batching_dims names index_vector_dim");
    return g;
}

// The update dims split into scatter dims (walk the indices) and window dims.
Status scatterWindowGeometry(const HloInstruction& instruction, Operands operands,
                             ScatterGeometry& g) {
    const ScatterDimensionNumbers* dn = g.dn;
    const IndexLayout& index = g.index;
    const std::vector<int64_t>& opDims = operands[0]->shape().dimensions();
    const std::vector<int64_t>& updDims = operands[g.n + 1]->shape().dimensions();
    const int64_t opRank = static_cast<int64_t>(opDims.size());
    const int64_t updRank = static_cast<int64_t>(updDims.size());
    std::vector<int64_t>& scatterDims = g.scatterDims;
    std::vector<int64_t>& scatterSizes = g.scatterSizes;
    for (int64_t d = 0; d < updRank; ++d)
        if (!containsDim(dn->updateWindowDims, d)) {
            scatterDims.push_back(d);
            scatterSizes.push_back(updDims[static_cast<size_t>(d)]);
        }
    if (scatterSizes != index.batchDims)
        return invalid(instruction, "update scatter dimensions differ from the scatter indices");
    std::vector<int64_t>& windowOperandDims = g.windowOperandDims;
    for (int64_t d = 0; d < opRank; ++d)
        if (!containsDim(dn->insertedWindowDims, d) && !containsDim(dn->inputBatchingDims, d))
            windowOperandDims.push_back(d);
    if (windowOperandDims.size() != dn->updateWindowDims.size())
        return invalid(instruction, "update_window_dims count does not match the operand");
    std::vector<int64_t>& windowSizes = g.windowSizes;
    std::vector<int64_t>& windowExtent = g.windowExtent;
    windowExtent.assign(static_cast<size_t>(opRank), 1);
    for (size_t i = 0; i < dn->updateWindowDims.size(); ++i) {
        const int64_t size = updDims[static_cast<size_t>(dn->updateWindowDims[i])];
        if (size > opDims[static_cast<size_t>(windowOperandDims[i])])
            return invalid(instruction, "update window larger than the operand");
        windowSizes.push_back(size);
        windowExtent[static_cast<size_t>(windowOperandDims[i])] = size;
    }
    std::vector<int64_t>& batchingSource = g.batchingSource;
    for (int64_t d : dn->scatterIndicesBatchingDims)
        batchingSource.push_back(batchPosition(d, dn->indexVectorDim));
    for (size_t i = 0; i < dn->inputBatchingDims.size(); ++i)
        if (index.batchDims[static_cast<size_t>(batchingSource[i])] !=
            opDims[static_cast<size_t>(dn->inputBatchingDims[i])])
            return invalid(instruction, "batching dimension sizes differ");
    return Status::ok();
}

// The results, starting as copies of the operands.
StatusOr<std::vector<Literal>> scatterResults(const HloInstruction& instruction, Operands operands,
                                              size_t n) {
    const std::vector<int64_t>& opDims = operands[0]->shape().dimensions();
    const Shape& outShape = instruction.shape();
    std::vector<Literal> results;
    for (size_t i = 0; i < n; ++i) {
        const Shape& expected =
            n == 1 && outShape.isArray()
                ? outShape
                : (outShape.isTuple() && static_cast<size_t>(outShape.tupleCount()) == n
                       ? outShape.tupleShape(static_cast<int64_t>(i))
                       : outShape);
        if (!expected.isArray() || expected.dimensions() != opDims ||
            expected.elementType() != operands[i]->elementType() ||
            operands[n + 1 + i]->elementType() != operands[i]->elementType())
            return invalid(instruction, "scatter result shape does not match the operands");
        results.push_back(*operands[i]);
    }
    return results;
}

// Combines update elements into the results: a recognised binary op or an
// overwrite of a single operand in place, otherwise to_apply called per
// element as to_apply(operand values..., update values...).
class ScatterCombiner {
public:
    ScatterCombiner(const HloInstruction& instruction, Operands operands,
                    std::vector<Literal>& results, EvalContext& context) {
        const size_t n = results.size();
        const HloComputation* computation = instruction.toApply();
        for (size_t i = 0; i < n; ++i) {
            m_out.push_back(static_cast<uint8_t*>(results[i].untypedData()));
            m_upd.push_back(static_cast<const uint8_t*>(operands[n + 1 + i]->untypedData()));
            m_bytes.push_back(elementBytes(results[i].elementType()));
            m_types.push_back(results[i].elementType());
        }
        m_type = m_types[0];
        if (n == 1) {
            m_op = recognizeBinaryComputation(*computation, m_type);
            const HloInstruction* root = computation->root();
            m_overwrite = !m_op && computation->parameterCount() == 2 && root != nullptr &&
                          root == computation->parameter(1) && root->shape().isScalar() &&
                          root->shape().elementType() == m_type &&
                          computation->parameter(0)->shape() == root->shape();
        }
        if (!m_op && !m_overwrite) {
            std::vector<PrimitiveType> argTypes = m_types;
            argTypes.insert(argTypes.end(), m_types.begin(), m_types.end());
            m_caller.emplace(context, instruction, *computation, std::move(argTypes), m_types);
        }
    }

    // Element `u` of the updates into element `o` of the results.
    Status combine(int64_t o, int64_t u) {
        const size_t n = m_out.size();
        if (m_overwrite) {
            copyElement(m_out[0] + o * m_bytes[0], m_upd[0] + u * m_bytes[0], m_bytes[0]);
        } else if (m_op) {
            dispatchPrimitiveType(m_type, [&]<PrimitiveType kType>() {
                using T = NativeType<kType>;
                T* y = reinterpret_cast<T*>(m_out[0]) + o;
                const T x = reinterpret_cast<const T*>(m_upd[0])[u];
                if constexpr (kIsNarrowFloat<T>) {
                    const float a = toFloat(*y), b = toFloat(x);
                    *y = fromFloat<NarrowFloatTraits<T>::kType>(
                        m_op->swapped ? applyBinary(m_op->kind, b, a)
                                      : applyBinary(m_op->kind, a, b));
                } else {
                    *y = m_op->swapped ? applyBinary(m_op->kind, x, *y)
                                       : applyBinary(m_op->kind, *y, x);
                }
            });
        } else {
            for (size_t i = 0; i < n; ++i) {
                m_caller->setArgument(i, m_out[i] + o * m_bytes[i]);
                m_caller->setArgument(n + i, m_upd[i] + u * m_bytes[i]);
            }
            HLO_RETURN_IF_ERROR(m_caller->call());
            for (size_t i = 0; i < n; ++i)
                copyElement(m_out[i] + o * m_bytes[i],
                            static_cast<const uint8_t*>(m_caller->result(i)), m_bytes[i]);
        }
        return Status::ok();
    }

private:
    std::vector<uint8_t*> m_out;
    std::vector<const uint8_t*> m_upd;
    std::vector<int64_t> m_bytes;
    std::vector<PrimitiveType> m_types;
    PrimitiveType m_type = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    std::optional<BinaryComputation> m_op;
    bool m_overwrite = false;
    std::optional<ScalarCaller> m_caller;
};

// Walks the update scatter dims and, within each, the update window in
// row-major order; a window that does not fit in the operand is skipped.
Status scatterWindows(const ScatterGeometry& g, const Literal& indices,
                      const std::vector<int64_t>& opDims, const std::vector<int64_t>& updDims,
                      ScatterCombiner& combiner) {
    const ScatterDimensionNumbers* dn = g.dn;
    const IndexLayout& index = g.index;
    const std::vector<int64_t>& scatterDims = g.scatterDims;
    const std::vector<int64_t>& scatterSizes = g.scatterSizes;
    const std::vector<int64_t>& windowOperandDims = g.windowOperandDims;
    const std::vector<int64_t>& windowSizes = g.windowSizes;
    const std::vector<int64_t>& windowExtent = g.windowExtent;
    const std::vector<int64_t>& batchingSource = g.batchingSource;
    const int64_t opRank = static_cast<int64_t>(opDims.size());
    const std::vector<int64_t> opStrides = rowMajorStrides(opDims);
    const std::vector<int64_t> updStrides = rowMajorStrides(updDims);
    const int64_t scatterCount = elementProduct(scatterSizes);
    const int64_t windowCount = elementProduct(windowSizes);
    std::vector<int64_t> scatterIndex(scatterSizes.size(), 0);
    std::vector<int64_t> windowIndex(windowSizes.size(), 0);
    std::vector<int64_t> start(static_cast<size_t>(opRank));
    if (windowCount == 0) return Status::ok();
    for (int64_t s = 0; s < scatterCount; ++s, nextIndex(scatterIndex, scatterSizes)) {
        int64_t indexBase = 0, updBase = 0;
        for (size_t i = 0; i < scatterIndex.size(); ++i) {
            indexBase += scatterIndex[i] * index.batchStrides[i];
            updBase += scatterIndex[i] * updStrides[static_cast<size_t>(scatterDims[i])];
        }
        std::fill(start.begin(), start.end(), 0);
        for (int64_t k = 0; k < index.vectorSize; ++k)
            start[static_cast<size_t>(dn->scatterDimsToOperandDims[static_cast<size_t>(k)])] =
                readIndex(indices, indexBase + k * index.vectorStride);
        for (size_t i = 0; i < dn->inputBatchingDims.size(); ++i)
            start[static_cast<size_t>(dn->inputBatchingDims[i])] =
                scatterIndex[static_cast<size_t>(batchingSource[i])];
        bool fits = true;
        int64_t opBase = 0;
        for (int64_t d = 0; d < opRank; ++d) {
            const int64_t v = start[static_cast<size_t>(d)];
            if (v < 0 ||
                v > opDims[static_cast<size_t>(d)] - windowExtent[static_cast<size_t>(d)]) {
                fits = false;
                break;
            }
            opBase += v * opStrides[static_cast<size_t>(d)];
        }
        if (!fits) continue;
        std::fill(windowIndex.begin(), windowIndex.end(), 0);
        for (int64_t w = 0; w < windowCount; ++w, nextIndex(windowIndex, windowSizes)) {
            int64_t o = opBase, u = updBase;
            for (size_t i = 0; i < windowIndex.size(); ++i) {
                o += windowIndex[i] * opStrides[static_cast<size_t>(windowOperandDims[i])];
                u += windowIndex[i] * updStrides[static_cast<size_t>(dn->updateWindowDims[i])];
            }
            HLO_RETURN_IF_ERROR(combiner.combine(o, u));
        }
    }
    return Status::ok();
}

}  // namespace

StatusOr<Literal> evaluateScatter(const HloInstruction& instruction, Operands operands,
                                  EvalContext& context) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, -1));
    if (operands.size() < 3 || operands.size() % 2 != 1)
        return invalid(instruction, "scatter expects N operands, indices and N updates");
    HLO_ASSIGN_OR_RETURN(ScatterGeometry geometry, scatterInputGeometry(instruction, operands));
    HLO_RETURN_IF_ERROR(scatterWindowGeometry(instruction, operands, geometry));
    const size_t n = geometry.n;
    HLO_ASSIGN_OR_RETURN(std::vector<Literal> results, scatterResults(instruction, operands, n));
    ScatterCombiner combiner(instruction, operands, results, context);
    HLO_RETURN_IF_ERROR(scatterWindows(geometry, *operands[n], operands[0]->shape().dimensions(),
                                       operands[n + 1]->shape().dimensions(), combiner));
    return packResults(results, instruction.shape());
}

}  // namespace hloscope::evaluator
