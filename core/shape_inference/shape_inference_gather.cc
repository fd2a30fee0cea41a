// Shape inference for gather and scatter (with batching dimensions).
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::shape_inference_internal {

namespace {

// Indices with an implicit trailing index vector dimension made explicit.
Shape expandedIndices(const Shape& indices, int64_t indexVectorDim) {
    if (indexVectorDim == indices.rank()) {
        std::vector<int64_t> dims = indices.dimensions();
        dims.push_back(1);
        std::vector<bool> dynamic;
        for (int64_t i = 0; i < indices.rank(); ++i) dynamic.push_back(indices.isDynamicDimension(i));
        return makeArray(indices.elementType(), std::move(dims), dynamic);
    }
    return indices;
}

// offset_dims and start_index_map against the output and operand ranks and
// the index vector.
Status checkGatherIndexDims(const HloInstruction& instruction, const Shape& operand,
                            const Shape& expanded, const GatherDimensionNumbers& g,
                            int64_t outputRank) {
    if (!isSortedUnique(g.offsetDims)) {
        return fail(instruction, "offset_dims in gather op must be sorted and unique; got " +
                                     str(g.offsetDims));
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, g.offsetDims, outputRank, "offset_dims"));
    int64_t indexVectorSize = expanded.dimensions(g.indexVectorDim);
    if (static_cast<int64_t>(g.startIndexMap.size()) != indexVectorSize) {
        return fail(instruction, "gather op has " + std::to_string(g.startIndexMap.size()) +
                                     " elements in start_index_map and the bound of dimension "
                                     "index_vector_dim=" +
                                     std::to_string(g.indexVectorDim) + " of start_indices is " +
                                     std::to_string(indexVectorSize) +
                                     "; these two numbers must be equal");
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, g.startIndexMap, operand.rank(), "start_index_map"));
    if (!allUnique(g.startIndexMap)) {
        return fail(instruction, "repeated dimensions are not allowed in start_index_map; got " +
                                     str(g.startIndexMap));
    }
    return Status::ok();
}

// collapsed_slice_dims, operand_batching_dims and start_indices_batching_dims.
Status checkGatherBatchingDims(const HloInstruction& instruction, const Shape& operand,
                               const Shape& expanded, const GatherDimensionNumbers& g) {
    if (!isSortedUnique(g.collapsedSliceDims)) {
        return fail(instruction, "collapsed_slice_dims in gather op must be sorted and unique; got " +
                                     str(g.collapsedSliceDims));
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, g.collapsedSliceDims, operand.rank(),
                                         "collapsed_slice_dims"));
    if (!isSortedUnique(g.operandBatchingDims)) {
        return fail(instruction, "operand_batching_dims in gather op must be sorted and unique; "
                                 "got " +
                                     str(g.operandBatchingDims));
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, g.operandBatchingDims, operand.rank(),
                                         "operand_batching_dims"));
    for (int64_t d : g.operandBatchingDims) {
        if (contains(g.collapsedSliceDims, d)) {
            return fail(instruction, "dimension " + std::to_string(d) +
                                         " is both a collapsed slice dim and an operand batching "
                                         "dim");
        }
    }
    if (g.startIndicesBatchingDims.size() != g.operandBatchingDims.size()) {
        return fail(instruction, "gather op has " + std::to_string(g.operandBatchingDims.size()) +
                                     " operand_batching_dims but " +
                                     std::to_string(g.startIndicesBatchingDims.size()) +
                                     " start_indices_batching_dims");
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, g.startIndicesBatchingDims, expanded.rank(),
                                         "start_indices_batching_dims"));
    if (!allUnique(g.startIndicesBatchingDims) ||
        contains(g.startIndicesBatchingDims, g.indexVectorDim)) {
        return fail(instruction, "start_indices_batching_dims must be unique and must not include "
                                 "index_vector_dim; got " +
                                     str(g.startIndicesBatchingDims));
    }
    for (size_t i = 0; i < g.operandBatchingDims.size(); ++i) {
        int64_t o = operand.dimensions(g.operandBatchingDims[i]);
        int64_t s = expanded.dimensions(g.startIndicesBatchingDims[i]);
        if (!dimEqual(o, s)) {
            return fail(instruction, "operand batching dimension " +
                                         std::to_string(g.operandBatchingDims[i]) + " (size " +
                                         std::to_string(o) +
                                         ") does not match start indices batching dimension " +
                                         std::to_string(g.startIndicesBatchingDims[i]) + " (size " +
                                         std::to_string(s) + ")");
        }
    }
    return Status::ok();
}

// slice_sizes: one per operand dimension, within it, collapsed and batching
// dimensions of bound 1 or 0.
Status checkGatherSliceSizes(const HloInstruction& instruction, const Shape& operand,
                             const GatherDimensionNumbers& g,
                             const std::vector<int64_t>& sliceSizes) {
    if (static_cast<int64_t>(sliceSizes.size()) != operand.rank()) {
        return fail(instruction, "gather op must have one slice size for every input dimension; "
                                 "got " +
                                     std::to_string(sliceSizes.size()) + " slice sizes for rank " +
                                     std::to_string(operand.rank()));
    }
    if (static_cast<int64_t>(g.offsetDims.size() + g.collapsedSliceDims.size() +
                             g.operandBatchingDims.size()) != operand.rank()) {
        return fail(instruction, "all components of the offset index in a gather op must either "
                                 "be an offset dimension or explicitly collapsed/batching; got "
                                 "len(slice_sizes)=" +
                                     std::to_string(sliceSizes.size()) + ", output_slice_sizes=" +
                                     str(g.offsetDims) + ", collapsed_slice_dims=" +
                                     str(g.collapsedSliceDims) + ", operand_batching_dims=" +
                                     str(g.operandBatchingDims));
    }
    for (int64_t i = 0; i < operand.rank(); ++i) {
        int64_t size = sliceSizes[static_cast<size_t>(i)];
        int64_t bound = operand.dimensions(i);
        if (size < 0 || (bound != Shape::kUnboundedSize && size > bound)) {
            return fail(instruction, "slice size at index " + std::to_string(i) +
                                         " in gather op is out of range, must be within [0, " +
                                         std::to_string(bound) + "], got " + std::to_string(size));
        }
    }
    for (int64_t d : g.collapsedSliceDims) {
        if (sliceSizes[static_cast<size_t>(d)] > 1) {
            return fail(instruction, "gather op can only collapse slice dims with bound 1 or 0, "
                                     "but bound is " +
                                         std::to_string(sliceSizes[static_cast<size_t>(d)]) +
                                         " for index " + std::to_string(d));
        }
    }
    for (int64_t d : g.operandBatchingDims) {
        if (sliceSizes[static_cast<size_t>(d)] > 1) {
            return fail(instruction, "gather op can only have operand batching dims with bound 1 "
                                     "or 0, but bound is " +
                                         std::to_string(sliceSizes[static_cast<size_t>(d)]) +
                                         " for index " + std::to_string(d));
        }
    }
    return Status::ok();
}

// The offset dims take the slice sizes of the operand dims neither collapsed
// nor batching; the others walk the (expanded) indices' batch dims.
Shape gatherResultShape(const Shape& operand, const Shape& expanded,
                        const GatherDimensionNumbers& g, const std::vector<int64_t>& sliceSizes,
                        int64_t outputRank) {
    std::vector<int64_t> offsetSizes;
    for (int64_t i = 0; i < operand.rank(); ++i) {
        if (contains(g.collapsedSliceDims, i) || contains(g.operandBatchingDims, i)) continue;
        offsetSizes.push_back(sliceSizes[static_cast<size_t>(i)]);
    }
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    size_t offsetIndex = 0;
    int64_t batchIndex = 0;
    for (int64_t i = 0; i < outputRank; ++i) {
        if (contains(g.offsetDims, i)) {
            dims.push_back(offsetSizes[offsetIndex++]);
            dynamic.push_back(false);
        } else {
            if (batchIndex == g.indexVectorDim) ++batchIndex;
            dims.push_back(expanded.dimensions(batchIndex));
            dynamic.push_back(expanded.isDynamicDimension(batchIndex));
            ++batchIndex;
        }
    }
    return makeArray(operand.elementType(), std::move(dims), dynamic);
}

}  // namespace

StatusOr<Shape> inferGather(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& indices = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "input of gather"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, indices, "gather indices"));
    if (!isIntegral(indices.elementType())) {
        return fail(instruction, "gather indices parameter must be an integral tensor, got " +
                                     str(indices));
    }
    const GatherDimensionNumbers* dnumsPtr = instruction.gatherDimensionNumbers();
    if (!dnumsPtr) return fail(instruction, "gather requires gather dimension numbers");
    const GatherDimensionNumbers& g = *dnumsPtr;
    if (g.indexVectorDim < 0 || g.indexVectorDim > indices.rank()) {
        return fail(instruction, "gather index leaf dimension must be within [0, rank(indices) + "
                                 "1); rank(indices) is " +
                                     std::to_string(indices.rank()) + " and index_vector_dim is " +
                                     std::to_string(g.indexVectorDim));
    }
    Shape expanded = expandedIndices(indices, g.indexVectorDim);
    int64_t batchCount = expanded.rank() - 1;
    int64_t outputRank = static_cast<int64_t>(g.offsetDims.size()) + batchCount;
    HLO_RETURN_IF_ERROR(checkGatherIndexDims(instruction, operand, expanded, g, outputRank));
    HLO_RETURN_IF_ERROR(checkGatherBatchingDims(instruction, operand, expanded, g));
    const std::vector<int64_t>& sliceSizes = instruction.extra()
                                                 ? instruction.extra()->gatherSliceSizes
                                                 : std::vector<int64_t>{};
    HLO_RETURN_IF_ERROR(checkGatherSliceSizes(instruction, operand, g, sliceSizes));
    return gatherResultShape(operand, expanded, g, sliceSizes, outputRank);
}

namespace {

// update_window_dims, inserted_window_dims, input_batching_dims and
// scatter_indices_batching_dims.
Status checkScatterWindowDims(const HloInstruction& instruction, const Shape& operand,
                              const Shape& updates, const Shape& expanded,
                              const ScatterDimensionNumbers& s) {
    if (!isSortedUnique(s.updateWindowDims)) {
        return fail(instruction, "update_window_dims in scatter op must be sorted and unique; got " +
                                     str(s.updateWindowDims));
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, s.updateWindowDims, updates.rank(),
                                         "update_window_dims"));
    if (!isSortedUnique(s.insertedWindowDims)) {
        return fail(instruction, "inserted_window_dims in scatter op must be sorted and unique; "
                                 "got " +
                                     str(s.insertedWindowDims));
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, s.insertedWindowDims, operand.rank(),
                                         "inserted_window_dims"));
    if (!isSortedUnique(s.inputBatchingDims)) {
        return fail(instruction, "input_batching_dims in scatter op must be sorted and unique; got " +
                                     str(s.inputBatchingDims));
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, s.inputBatchingDims, operand.rank(),
                                         "input_batching_dims"));
    for (int64_t d : s.inputBatchingDims) {
        if (contains(s.insertedWindowDims, d)) {
            return fail(instruction, "dimension " + std::to_string(d) +
                                         " is both an inserted window dim and an input batching "
                                         "dim");
        }
    }
    if (s.scatterIndicesBatchingDims.size() != s.inputBatchingDims.size()) {
        return fail(instruction, "scatter op has " + std::to_string(s.inputBatchingDims.size()) +
                                     " input_batching_dims but " +
                                     std::to_string(s.scatterIndicesBatchingDims.size()) +
                                     " scatter_indices_batching_dims");
    }
    HLO_RETURN_IF_ERROR(checkDimsInRange(instruction, s.scatterIndicesBatchingDims, expanded.rank(),
                                         "scatter_indices_batching_dims"));
    if (!allUnique(s.scatterIndicesBatchingDims) ||
        contains(s.scatterIndicesBatchingDims, s.indexVectorDim)) {
        return fail(instruction, "scatter_indices_batching_dims must be unique and must not "
                                 "include index_vector_dim; got " +
                                     str(s.scatterIndicesBatchingDims));
    }
    return Status::ok();
}

// scatter_dims_to_operand_dims against the index vector and the operand.
Status checkScatterIndexMap(const HloInstruction& instruction, const Shape& operand,
                            const Shape& expanded, const ScatterDimensionNumbers& s) {
    int64_t indexVectorSize = expanded.dimensions(s.indexVectorDim);
    if (static_cast<int64_t>(s.scatterDimsToOperandDims.size()) != indexVectorSize) {
        return fail(instruction, "scatter op has " +
                                     std::to_string(s.scatterDimsToOperandDims.size()) +
                                     " elements in scatter_dims_to_operand_dims and the bound of "
                                     "dimension index_vector_dim=" +
                                     std::to_string(s.indexVectorDim) + " of scatter_indices is " +
                                     std::to_string(indexVectorSize) +
                                     "; these two numbers must be equal");
    }
    for (size_t i = 0; i < s.scatterDimsToOperandDims.size(); ++i) {
        int64_t d = s.scatterDimsToOperandDims[i];
        if (d < 0 || d >= operand.rank()) {
            return fail(instruction, "Invalid scatter_dims_to_operand_dims mapping; domain is [0, " +
                                         std::to_string(operand.rank()) + "), got: " +
                                         std::to_string(i) + "->" + std::to_string(d));
        }
    }
    if (!allUnique(s.scatterDimsToOperandDims)) {
        return fail(instruction, "repeated dimensions not allowed in scatter_dims_to_operand_dims; "
                                 "got " +
                                     str(s.scatterDimsToOperandDims));
    }
    return Status::ok();
}

// The updates' rank, window bounds (within the operand's) and scatter bounds
// (the indices').
Status checkScatterUpdateBounds(const HloInstruction& instruction, const Shape& operand,
                                const Shape& updates, const Shape& expanded,
                                const ScatterDimensionNumbers& s) {
    int64_t windowSize = static_cast<int64_t>(s.updateWindowDims.size());
    if (windowSize + static_cast<int64_t>(s.insertedWindowDims.size() +
                                          s.inputBatchingDims.size()) !=
        operand.rank()) {
        return fail(instruction, "scatter op has window of size " + std::to_string(windowSize) +
                                     " plus " + std::to_string(s.insertedWindowDims.size()) +
                                     " inserted and " + std::to_string(s.inputBatchingDims.size()) +
                                     " batching dims; doesn't match operand of rank " +
                                     std::to_string(operand.rank()));
    }
    int64_t expectedUpdatesRank = windowSize + expanded.rank() - 1;
    if (updates.rank() != expectedUpdatesRank) {
        return fail(instruction, "updates tensor must be of rank " +
                                     std::to_string(expectedUpdatesRank) + "; got " +
                                     std::to_string(updates.rank()));
    }
    // Window bounds.
    int64_t windowIndex = 0;
    for (int64_t i = 0; i < operand.rank(); ++i) {
        if (contains(s.insertedWindowDims, i) || contains(s.inputBatchingDims, i)) continue;
        int64_t updateDim = s.updateWindowDims[static_cast<size_t>(windowIndex++)];
        int64_t u = updates.dimensions(updateDim);
        int64_t o = operand.dimensions(i);
        if (u != Shape::kUnboundedSize && o != Shape::kUnboundedSize && u > o) {
            return fail(instruction, "bounds of the window dimensions of updates must not exceed "
                                     "the bounds of the corresponding dimensions of operand; for "
                                     "dimension " +
                                         std::to_string(updateDim) + ", updates bound is " +
                                         std::to_string(u) + ", operand bound is " +
                                         std::to_string(o));
        }
    }
    // Scatter (non-window) dimensions of updates must match the indices.
    int64_t indicesDim = 0;
    for (int64_t i = 0; i < updates.rank(); ++i) {
        if (contains(s.updateWindowDims, i)) continue;
        if (indicesDim == s.indexVectorDim) ++indicesDim;
        if (indicesDim >= expanded.rank()) break;
        int64_t u = updates.dimensions(i);
        int64_t e = expanded.dimensions(indicesDim);
        if (!dimEqual(u, e)) {
            return fail(instruction, "bounds of the scatter dimensions of updates must be same as "
                                     "the bounds of the corresponding dimensions of scatter "
                                     "indices; for scatter dimension " +
                                         std::to_string(i) + ", updates bound is " +
                                         std::to_string(u) + ", scatter_indices bound is " +
                                         std::to_string(e));
        }
        ++indicesDim;
    }
    return Status::ok();
}

}  // namespace

StatusOr<Shape> inferScatter(const HloInstruction& instruction) {
    int64_t count = instruction.operandCount();
    if (count < 3 || count % 2 != 1) {
        return fail(instruction, "scatter expects an odd number (>= 3) of operands: inputs, "
                                 "indices, updates; found " +
                                     std::to_string(count));
    }
    int64_t n = (count - 1) / 2;
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& indices = instruction.operand(n)->shape();
    const Shape& updates = instruction.operand(n + 1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, indices, "scatter indices"));
    if (!isIntegral(indices.elementType())) {
        return fail(instruction, "scatter indices parameter must be an integral tensor, got " +
                                     str(indices));
    }
    std::vector<Shape> operandShapes;
    std::vector<const Shape*> initShapes;
    std::vector<Shape> initStorage;
    std::vector<PrimitiveType> updateTypes;
    initStorage.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        const Shape& o = instruction.operand(i)->shape();
        const Shape& u = instruction.operand(n + 1 + i)->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, o, "scatter input"));
        HLO_RETURN_IF_ERROR(expectArray(instruction, u, "scatter updates"));
        if (!sameDims(o, operand)) {
            return fail(instruction, "scatter inputs must have the same dimensions: " +
                                         str(operand) + " vs " + str(o));
        }
        if (!sameDims(u, updates)) {
            return fail(instruction, "scatter updates must have the same dimensions: " +
                                         str(updates) + " vs " + str(u));
        }
        operandShapes.push_back(o);
        initStorage.push_back(Shape::makeScalar(o.elementType()));
        updateTypes.push_back(u.elementType());
    }
    for (const Shape& s : initStorage) initShapes.push_back(&s);
    const ScatterDimensionNumbers* dnumsPtr = instruction.scatterDimensionNumbers();
    if (!dnumsPtr) return fail(instruction, "scatter requires scatter dimension numbers");
    const ScatterDimensionNumbers& s = *dnumsPtr;
    if (s.indexVectorDim < 0 || s.indexVectorDim > indices.rank()) {
        return fail(instruction, "scatter index leaf dimension must be within [0, rank(indices) + "
                                 "1); rank(indices) is " +
                                     std::to_string(indices.rank()) + " and index_vector_dim is " +
                                     std::to_string(s.indexVectorDim));
    }
    Shape expanded = expandedIndices(indices, s.indexVectorDim);
    HLO_RETURN_IF_ERROR(checkScatterWindowDims(instruction, operand, updates, expanded, s));
    HLO_RETURN_IF_ERROR(checkScatterIndexMap(instruction, operand, expanded, s));
    HLO_RETURN_IF_ERROR(checkScatterUpdateBounds(instruction, operand, updates, expanded, s));
    HLO_ASSIGN_OR_RETURN(ProgramShape reducer, reducerProgram(instruction));
    HLO_RETURN_IF_ERROR(verifyReducerShape(instruction, reducer, initShapes, updateTypes, n));
    if (n == 1) return operandShapes[0];
    return Shape::makeTuple(std::move(operandShapes));
}

}  // namespace hloscope::shape_inference_internal
