// sort and topk.
//
// sort: each 1-D slice along the sort dimension is ordered with
// std::stable_sort, calling the comparator as
// (lhs_0, rhs_0, lhs_1, rhs_1, ...). A stable order is also a valid order
// for is_stable=false, and std::stable_sort stays memory-safe with
// comparators that are not strict weak orders. A comparator that is a single
// compare of the first operand's two parameters runs natively.
//
// topk: the k largest (largest=true, default) or smallest elements of each
// row of the last dimension, ordered by value (floats in total order: NaN
// above +inf, -0 below +0), ties by lower index — what XLA's TopK
// decomposition (a stable sort with a total-order comparator) produces.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/interpreter/ops_internal.h"

namespace hloscope::evaluator {

namespace {

inline void copyBytes(uint8_t* dst, const uint8_t* src, int64_t bytes) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
}

// Base offsets of the 1-D lines along `dim` of a row-major array.
std::vector<int64_t> lineBases(std::span<const int64_t> dims, int64_t dim) {
    std::vector<int64_t> sizes, strides;
    const std::vector<int64_t> all = rowMajorStrides(dims);
    for (size_t i = 0; i < dims.size(); ++i) {
        if (static_cast<int64_t>(i) == dim) continue;
        sizes.push_back(dims[i]);
        strides.push_back(all[i]);
    }
    std::vector<int64_t> bases;
    const int64_t count = elementProduct(sizes);
    bases.reserve(static_cast<size_t>(count));
    std::vector<int64_t> index(sizes.size(), 0);
    for (int64_t l = 0; l < count; ++l, nextIndex(index, sizes)) {
        int64_t base = 0;
        for (size_t i = 0; i < index.size(); ++i) base += index[i] * strides[i];
        bases.push_back(base);
    }
    return bases;
}

}  // namespace

StatusOr<Literal> evaluateSort(const HloInstruction& instruction, Operands operands,
                               EvalContext& context) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, -1));
    if (operands.empty()) return invalid(instruction, "sort needs at least one operand");
    const size_t n = operands.size();
    const std::vector<int64_t>& dims = operands[0]->shape().dimensions();
    const int64_t rank = static_cast<int64_t>(dims.size());
    for (const Literal* operand : operands)
        if (operand->shape().dimensions() != dims)
            return invalid(instruction, "sort operands differ in dimensions");
    int64_t dim = rank - 1;
    if (instruction.hasDimensions()) {
        if (instruction.dimensions().size() != 1)
            return invalid(instruction, "sort takes exactly one dimension");
        dim = instruction.dimensions(0);
    }
    if (rank == 0) {
        if (n == 1 && instruction.shape().isArray()) return *operands[0];
        std::vector<Literal> copies;
        for (const Literal* operand : operands) copies.push_back(*operand);
        return Literal::makeTuple(std::move(copies));
    }
    if (dim < 0 || dim >= rank) return invalid(instruction, "sort dimension out of range");
    const HloComputation* comparator = instruction.toApply();
    if (comparator == nullptr) return invalid(instruction, "sort without a comparator");
    const Shape& outShape = instruction.shape();
    const bool tuple = outShape.isTuple();
    if (tuple ? static_cast<size_t>(outShape.tupleCount()) != n : n != 1)
        return invalid(instruction, "sort result does not have one element per operand");
    for (size_t i = 0; i < n; ++i) {
        const Shape& s = tuple ? outShape.tupleShape(static_cast<int64_t>(i)) : outShape;
        if (!s.isArray() || s.dimensions() != dims || s.elementType() != operands[i]->elementType())
            return invalid(instruction, "sort result shape differs from its operands");
    }

    const int64_t length = dims[static_cast<size_t>(dim)];
    const int64_t stride = rowMajorStrides(dims)[static_cast<size_t>(dim)];
    const std::vector<int64_t> bases = lineBases(dims, dim);
    std::vector<int64_t> bytes;
    std::vector<PrimitiveType> argTypes;
    for (const Literal* operand : operands) {
        bytes.push_back(elementBytes(operand->elementType()));
        argTypes.push_back(operand->elementType());
        argTypes.push_back(operand->elementType());
    }
    std::vector<Literal> results;
    for (size_t i = 0; i < n; ++i)
        results.emplace_back(tuple ? outShape.tupleShape(static_cast<int64_t>(i)) : outShape);

    std::optional<CompareComputation> native = recognizeCompareComputation(
        *comparator, static_cast<int64_t>(2 * n), 0, 1, operands[0]->elementType());
    CompareKeys keys;
    if (native) keys = compareKeys(*operands[0], native->totalOrder);
    std::optional<ScalarCaller> caller;
    if (!native)
        caller.emplace(context, instruction, *comparator, argTypes,
                       std::vector<PrimitiveType>{PrimitiveType::PRED});

    std::vector<int64_t> perm(static_cast<size_t>(length));
    Status status;
    for (int64_t base : bases) {
        std::iota(perm.begin(), perm.end(), int64_t{0});
        if (native) {
            const ComparisonDirection d = native->direction;
            const bool swapped = native->swapped;
            auto less = [&](int64_t a, int64_t b) {
                const size_t l = static_cast<size_t>(base + (swapped ? b : a) * stride);
                const size_t r = static_cast<size_t>(base + (swapped ? a : b) * stride);
                return keys.useDouble ? compareWith(d, keys.doubles[l], keys.doubles[r])
                                      : compareWith(d, keys.ints[l], keys.ints[r]);
            };
            std::stable_sort(perm.begin(), perm.end(), less);
        } else {
            auto less = [&](int64_t a, int64_t b) {
                if (!status.isOk()) return false;
                for (size_t i = 0; i < n; ++i) {
                    const uint8_t* data = static_cast<const uint8_t*>(operands[i]->untypedData());
                    caller->setArgument(2 * i, data + (base + a * stride) * bytes[i]);
                    caller->setArgument(2 * i + 1, data + (base + b * stride) * bytes[i]);
                }
                status = caller->call();
                if (!status.isOk()) return false;
                return *static_cast<const bool*>(caller->result(0));
            };
            std::stable_sort(perm.begin(), perm.end(), less);
            HLO_RETURN_IF_ERROR(status);
        }
        for (size_t i = 0; i < n; ++i) {
            const uint8_t* src = static_cast<const uint8_t*>(operands[i]->untypedData());
            uint8_t* dst = static_cast<uint8_t*>(results[i].untypedData());
            for (int64_t j = 0; j < length; ++j)
                copyBytes(dst + (base + j * stride) * bytes[i],
                          src + (base + perm[static_cast<size_t>(j)] * stride) * bytes[i],
                          bytes[i]);
        }
    }
    if (!tuple) return std::move(results[0]);
    return Literal::makeTuple(std::move(results));
}

StatusOr<Literal> evaluateTopK(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 1));
    const Literal& input = *operands[0];
    const HloExtraAttributes* extra = instruction.extra();
    if (extra == nullptr || !extra->topK) return invalid(instruction, "topk without k");
    const int64_t k = *extra->topK;
    const bool largest = extra->largest.value_or(true);
    const std::vector<int64_t>& dims = input.shape().dimensions();
    if (dims.empty()) return invalid(instruction, "topk operand must have rank >= 1");
    const int64_t length = dims.back();
    if (k < 0 || k > length) return invalid(instruction, "k out of range");
    const PrimitiveType type = input.elementType();
    if (primitive_util::isComplex(type)) return unsupported(instruction, "topk of complex values");
    const Shape& outShape = instruction.shape();
    std::vector<int64_t> outDims = dims;
    outDims.back() = k;
    if (!outShape.isTuple() || outShape.tupleCount() != 2 ||
        outShape.tupleShape(0).dimensions() != outDims ||
        outShape.tupleShape(0).elementType() != type ||
        outShape.tupleShape(1).dimensions() != outDims ||
        !primitive_util::isInteger(outShape.tupleShape(1).elementType()))
        return invalid(instruction, "topk result must be (values, indices) with last dimension k");
    Literal values(outShape.tupleShape(0));
    Literal indices(outShape.tupleShape(1));
    const CompareKeys keys = compareKeys(input, /*totalOrder=*/true);
    const int64_t rows = length == 0 ? elementProduct(std::span(dims).first(dims.size() - 1))
                                     : input.elementCount() / length;
    const int64_t bytes = elementBytes(type);
    const uint8_t* src = static_cast<const uint8_t*>(input.untypedData());
    uint8_t* dst = static_cast<uint8_t*>(values.untypedData());
    std::vector<int64_t> perm(static_cast<size_t>(length));
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t base = r * length;
        std::iota(perm.begin(), perm.end(), int64_t{0});
        auto before = [&](int64_t a, int64_t b) {
            const int64_t ka = keys.ints[static_cast<size_t>(base + a)];
            const int64_t kb = keys.ints[static_cast<size_t>(base + b)];
            if (ka != kb) return largest ? ka > kb : ka < kb;
            return a < b;
        };
        std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), before);
        for (int64_t j = 0; j < k; ++j) {
            const int64_t from = perm[static_cast<size_t>(j)];
            copyBytes(dst + (r * k + j) * bytes, src + (base + from) * bytes, bytes);
            indices.setFromInt64(r * k + j, from);
        }
    }
    std::vector<Literal> elements;
    elements.push_back(std::move(values));
    elements.push_back(std::move(indices));
    return Literal::makeTuple(std::move(elements));
}

}  // namespace hloscope::evaluator
