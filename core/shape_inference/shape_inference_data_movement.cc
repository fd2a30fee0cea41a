// Shape inference of the shape-changing data movement ops: broadcast,
// reshape, dynamic-reshape, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse and iota.
#include <algorithm>
#include <set>
#include <string>

#include "core/ir/hlo_computation.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::shape_inference_internal {
namespace {

bool hasUnbounded(const Shape& shape) {
    for (int64_t d : shape.dimensions())
        if (d == Shape::kUnboundedSize) return true;
    return false;
}

Status checkStartIndices(const HloInstruction& instruction, int64_t firstIndex, int64_t rank,
                         std::string_view what) {
    int64_t count = instruction.operandCount() - firstIndex;
    const Shape* single = count == 1 ? &instruction.operand(firstIndex)->shape() : nullptr;
    if (single && single->isArray() && (rank != 1 || single->rank() == 1)) {
        // Legacy form: one rank-1 index vector.
        const Shape& indices = *single;
        if (indices.rank() != 1 || !isIntegral(indices.elementType())) {
            return fail(instruction, std::string(what) +
                                         " start indices must be a rank-1 integer array or one "
                                         "integer scalar per dimension, got " +
                                         str(indices));
        }
        if (indices.dimensions(0) != rank) {
            return fail(instruction, std::string(what) + " start indices " + str(indices) +
                                         " do not match the operand rank " + std::to_string(rank));
        }
        return Status::ok();
    }
    if (count != rank) {
        return fail(instruction, std::string(what) + " expects " + std::to_string(rank) +
                                     " start index operands (one per operand dimension), found " +
                                     std::to_string(count));
    }
    PrimitiveType first = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    for (int64_t i = firstIndex; i < instruction.operandCount(); ++i) {
        const Shape& index = instruction.operand(i)->shape();
        if (!index.isArray() || index.rank() != 0 || !isIntegral(index.elementType())) {
            return fail(instruction, std::string(what) + " start index operand " +
                                         std::to_string(i) + " must be an integer scalar, got " +
                                         str(index));
        }
        if (first == PrimitiveType::PRIMITIVE_TYPE_INVALID) {
            first = index.elementType();
        } else if (index.elementType() != first) {
            return fail(instruction, std::string(what) +
                                         " start indices must all have the same type, got " +
                                         typeName(first) + " and " + typeName(index.elementType()));
        }
    }
    return Status::ok();
}

}  // namespace

StatusOr<Shape> inferBroadcast(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of broadcast"));
    if (!declared.isArray()) return fail(instruction, "broadcast result must be an array");
    const std::vector<int64_t>& dims = instruction.dimensions();
    if (static_cast<int64_t>(dims.size()) != operand.rank()) {
        return fail(instruction, "broadcast has " + std::to_string(dims.size()) +
                                     " dimensions but its operand " + str(operand) + " has rank " +
                                     std::to_string(operand.rank()));
    }
    Shape result = makeArray(operand.elementType(), declared.dimensions());
    for (int64_t i = 0; i < declared.rank(); ++i)
        if (declared.isDynamicDimension(i)) result.setDynamicDimension(i, true);
    for (size_t i = 0; i < dims.size(); ++i) {
        int64_t out = dims[i];
        if (out < 0 || out >= declared.rank()) {
            return fail(instruction, "broadcast dimension " + std::to_string(out) +
                                         " is out of bounds for result rank " +
                                         std::to_string(declared.rank()));
        }
        for (size_t j = 0; j < i; ++j) {
            if (dims[j] == out) {
                return fail(instruction, "broadcast dimension " + std::to_string(out) +
                                             " is used twice in " + str(dims));
            }
        }
        int64_t operandSize = operand.dimensions(static_cast<int64_t>(i));
        if (!dimEqual(operandSize, declared.dimensions(out))) {
            return fail(instruction, "broadcast operand dimension " + std::to_string(i) +
                                         " (size " + std::to_string(operandSize) +
                                         ") does not match result dimension " +
                                         std::to_string(out) + " (size " +
                                         std::to_string(declared.dimensions(out)) + ")");
        }
        result.setDynamicDimension(out, operand.isDynamicDimension(static_cast<int64_t>(i)) ||
                                            declared.isDynamicDimension(out));
    }
    return result;
}

StatusOr<Shape> inferReshape(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of reshape"));
    if (!declared.isArray()) return fail(instruction, "reshape result must be an array");
    if (!hasUnbounded(operand) && !hasUnbounded(declared) &&
        operand.elementCount() != declared.elementCount()) {
        return fail(instruction, "reshape from " + str(operand) + " to " + str(declared) +
                                     " changes the element count (" +
                                     std::to_string(operand.elementCount()) + " vs " +
                                     std::to_string(declared.elementCount()) + ")");
    }
    Shape result = makeArray(operand.elementType(), declared.dimensions());
    // Dynamism of a reshape depends on how dimensions group; XLA's dynamic
    // dimension inference decides it. Keep the declared dynamism, but a
    // fully static operand cannot produce a dynamic result.
    if (operand.isDynamic()) {
        for (int64_t i = 0; i < declared.rank(); ++i)
            if (declared.isDynamicDimension(i)) result.setDynamicDimension(i, true);
    }
    return result;
}

StatusOr<Shape> inferDynamicReshape(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectAtLeastOperands(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of dynamic-reshape"));
    if (!declared.isArray()) return fail(instruction, "dynamic-reshape result must be an array");
    if (instruction.operandCount() != declared.rank() + 1) {
        return fail(instruction, "dynamic-reshape to rank " + std::to_string(declared.rank()) +
                                     " expects " + std::to_string(declared.rank()) +
                                     " dimension size operands, found " +
                                     std::to_string(instruction.operandCount() - 1));
    }
    for (int64_t i = 1; i < instruction.operandCount(); ++i) {
        const Shape& size = instruction.operand(i)->shape();
        if (!size.isArray() || size.rank() != 0 || !isIntegral(size.elementType())) {
            return fail(instruction, "dynamic-reshape size operand " + std::to_string(i) +
                                         " must be an integer scalar, got " + str(size));
        }
    }
    Shape result = declared;
    result.clearLayout();
    result.setElementType(operand.elementType());
    return result;
}

StatusOr<Shape> inferTranspose(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "transpose"));
    const std::vector<int64_t>& perm = instruction.dimensions();
    bool isPermutation = static_cast<int64_t>(perm.size()) == operand.rank();
    std::vector<bool> seen(perm.size());
    for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)]) {
            isPermutation = false;
            break;
        }
        seen[static_cast<size_t>(p)] = true;
    }
    if (!isPermutation) {
        return fail(instruction, "transpose dimensions " + str(perm) +
                                     " are not a permutation of the operand dimensions (operand "
                                     "shape is " +
                                     str(operand) + ")");
    }
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    for (int64_t p : perm) {
        dims.push_back(operand.dimensions(p));
        dynamic.push_back(operand.isDynamicDimension(p));
    }
    return makeArray(operand.elementType(), std::move(dims), dynamic);
}

StatusOr<Shape> inferSlice(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of slice"));
    const std::vector<SliceDimension>& slice = instruction.slice();
    if (static_cast<int64_t>(slice.size()) != operand.rank()) {
        return fail(instruction, "slice index count (" + std::to_string(slice.size()) +
                                     ") does not match the operand rank of " + str(operand));
    }
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < operand.rank(); ++i) {
        const SliceDimension& s = slice[static_cast<size_t>(i)];
        int64_t size = operand.dimensions(i);
        if (s.start < 0) {
            return fail(instruction, "negative start index to slice: " + std::to_string(s.start));
        }
        if (size != Shape::kUnboundedSize && s.limit > size) {
            return fail(instruction, "slice limit index " + std::to_string(s.limit) +
                                         " of dimension " + std::to_string(i) +
                                         " exceeds the dimension size " + std::to_string(size) +
                                         " of operand " + str(operand));
        }
        if (s.start > s.limit) {
            return fail(instruction, "slice start index " + std::to_string(s.start) +
                                         " is greater than the limit index " +
                                         std::to_string(s.limit) + " in dimension " +
                                         std::to_string(i));
        }
        if (s.stride <= 0) {
            return fail(instruction, "slice stride must be positive, got " +
                                         std::to_string(s.stride));
        }
        dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
        bool fullDim = s.start == 0 && s.limit == size && s.stride == 1;
        dynamic.push_back(operand.isDynamicDimension(i) && fullDim);
    }
    return makeArray(operand.elementType(), std::move(dims), dynamic);
}

StatusOr<Shape> inferDynamicSlice(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectAtLeastOperands(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of dynamic slice"));
    HLO_RETURN_IF_ERROR(checkStartIndices(instruction, 1, operand.rank(), "dynamic-slice"));
    const std::vector<int64_t>& sizes = instruction.dynamicSliceSizes();
    if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
        return fail(instruction, "dynamic_slice_sizes " + str(sizes) +
                                     " does not match the rank of operand " + str(operand));
    }
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < operand.rank(); ++i) {
        int64_t size = sizes[static_cast<size_t>(i)];
        int64_t bound = operand.dimensions(i);
        if (size < 0) {
            return fail(instruction, "negative size index to dynamic slice: " + std::to_string(size));
        }
        if (bound != Shape::kUnboundedSize && size > bound) {
            return fail(instruction, "dynamic slice size " + std::to_string(size) +
                                         " in dimension " + std::to_string(i) +
                                         " exceeds the operand dimension " + std::to_string(bound));
        }
        dynamic.push_back(operand.isDynamicDimension(i) && size == bound);
    }
    return makeArray(operand.elementType(), sizes, dynamic);
}

StatusOr<Shape> inferDynamicUpdateSlice(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectAtLeastOperands(instruction, 2));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& update = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of dynamic update slice"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, update, "update of dynamic update slice"));
    HLO_RETURN_IF_ERROR(checkStartIndices(instruction, 2, operand.rank(), "dynamic-update-slice"));
    if (update.rank() != operand.rank()) {
        return fail(instruction, "dynamic-update-slice update rank " + std::to_string(update.rank()) +
                                     " does not match the operand rank " +
                                     std::to_string(operand.rank()));
    }
    if (!sameElementTypeIgnoringFp(operand.elementType(), update.elementType())) {
        return fail(instruction, "dynamic-update-slice update element type " +
                                     typeName(update.elementType()) +
                                     " does not match the operand element type " +
                                     typeName(operand.elementType()));
    }
    for (int64_t i = 0; i < operand.rank(); ++i) {
        int64_t u = update.dimensions(i);
        int64_t o = operand.dimensions(i);
        if (u < 0 && u != Shape::kUnboundedSize) {
            return fail(instruction, "negative update size in dimension " + std::to_string(i));
        }
        if (o != Shape::kUnboundedSize && u != Shape::kUnboundedSize && u > o) {
            return fail(instruction, "dynamic-update-slice update dimension " + std::to_string(i) +
                                         " (size " + std::to_string(u) +
                                         ") exceeds the operand dimension (size " +
                                         std::to_string(o) + ")");
        }
    }
    return operand;
}

StatusOr<Shape> inferConcatenate(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectAtLeastOperands(instruction, 1));
    if (instruction.dimensions().size() != 1) {
        return fail(instruction, "concatenate expects exactly one dimension in dimensions=, got " +
                                     str(instruction.dimensions()));
    }
    int64_t dimension = instruction.dimensions(0);
    const Shape& first = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, first, "operand of concatenation"));
    if (dimension < 0 || dimension >= first.rank()) {
        return fail(instruction, "concatenate dimension out of bounds: " + std::to_string(dimension));
    }
    std::vector<int64_t> dims = first.dimensions();
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < first.rank(); ++i) dynamic.push_back(first.isDynamicDimension(i));
    PrimitiveType type = first.elementType();
    for (int64_t k = 1; k < instruction.operandCount(); ++k) {
        const Shape& shape = instruction.operand(k)->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, shape, "operand of concatenation"));
        if (shape.rank() != first.rank()) {
            return fail(instruction, "cannot concatenate arrays with different ranks: " +
                                         str(first) + " vs " + str(shape));
        }
        if (!sameElementTypeIgnoringFp(first.elementType(), shape.elementType())) {
            return fail(instruction, "cannot concatenate arrays with different element types: " +
                                         typeName(first.elementType()) + " vs " +
                                         typeName(shape.elementType()));
        }
        type = higherPrecision(type, shape.elementType());
        for (int64_t i = 0; i < first.rank(); ++i) {
            size_t u = static_cast<size_t>(i);
            if (i == dimension) {
                if (dims[u] == Shape::kUnboundedSize || shape.dimensions(i) == Shape::kUnboundedSize)
                    dims[u] = Shape::kUnboundedSize;
                else
                    dims[u] += shape.dimensions(i);
                dynamic[u] = dynamic[u] || shape.isDynamicDimension(i);
                continue;
            }
            if (!dimEqual(first.dimensions(i), shape.dimensions(i))) {
                return fail(instruction,
                            "cannot concatenate arrays that differ in dimensions other than the "
                            "one being concatenated; dimension " +
                                std::to_string(i) + " in both shapes must be equal: " + str(first) +
                                " vs " + str(shape));
            }
            dynamic[u] = dynamic[u] || shape.isDynamicDimension(i);
        }
    }
    return makeArray(type, std::move(dims), dynamic);
}

StatusOr<Shape> inferPad(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& value = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of pad"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, value, "padding value of pad"));
    if (value.rank() != 0) {
        return fail(instruction, "pad requires a scalar padding value, got " + str(value));
    }
    if (!sameElementTypeIgnoringFp(operand.elementType(), value.elementType())) {
        return fail(instruction, "the element types of the operands to pad do not match: " +
                                     str(operand) + " and " + str(value));
    }
    const std::vector<PaddingDimension>& padding = instruction.padding();
    if (static_cast<int64_t>(padding.size()) != operand.rank()) {
        return fail(instruction, "the rank of the operand " + str(operand) +
                                     " and the padding configuration (" +
                                     std::to_string(padding.size()) + " dimensions) do not match");
    }
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < operand.rank(); ++i) {
        const PaddingDimension& p = padding[static_cast<size_t>(i)];
        if (p.interior < 0) {
            return fail(instruction, "interior padding cannot be negative: " +
                                         std::to_string(p.interior));
        }
        int64_t size = operand.dimensions(i);
        if (size == Shape::kUnboundedSize) {
            dims.push_back(Shape::kUnboundedSize);
            dynamic.push_back(false);
            continue;
        }
        int64_t out = p.edgeLow + p.edgeHigh + size + std::max<int64_t>(size - 1, 0) * p.interior;
        if (out < 0) {
            return fail(instruction, "padding results in a negative size for dimension " +
                                         std::to_string(i));
        }
        dims.push_back(out);
        dynamic.push_back(operand.isDynamicDimension(i));
    }
    return makeArray(higherPrecision(operand.elementType(), value.elementType()), std::move(dims),
                     dynamic);
}

StatusOr<Shape> inferReverse(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of reverse"));
    std::set<int64_t> seen;
    for (int64_t d : instruction.dimensions()) {
        if (d < 0 || d >= operand.rank()) {
            return fail(instruction, "one of the reverse dimensions (" + std::to_string(d) +
                                         ") is out of range for operand " + str(operand));
        }
        if (!seen.insert(d).second) {
            return fail(instruction, "reverse dimensions are not unique: " +
                                         str(instruction.dimensions()));
        }
    }
    return operand;
}

StatusOr<Shape> inferIota(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 0));
    const Shape& declared = instruction.shape();
    if (!declared.isArray()) return fail(instruction, "iota result must be an array");
    if (declared.rank() == 0) return fail(instruction, "iota does not support scalars");
    int64_t d = instruction.iotaDimension();
    if (d < 0) {
        return fail(instruction, "iota dimension cannot be negative, got " + std::to_string(d));
    }
    if (d >= declared.rank()) {
        return fail(instruction, "iota dimension " + std::to_string(d) +
                                     " is out of range for rank " + std::to_string(declared.rank()));
    }
    Shape result = declared;
    result.clearLayout();
    return result;
}

}  // namespace hloscope::shape_inference_internal
