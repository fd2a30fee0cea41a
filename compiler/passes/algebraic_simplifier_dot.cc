// Algebraic simplifier: dot rules (dot-fold-transpose,
// dot-strength-reduction).
#include <algorithm>

#include "compiler/passes/algebraic_simplifier_internal.h"

namespace hloscope::simplifier {
namespace {

bool contains(const std::vector<int64_t>& list, int64_t value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

bool validDims(const std::vector<int64_t>& dims, int64_t rank) {
    for (int64_t d : dims)
        if (d < 0 || d >= rank) return false;
    return true;
}

// Dimensions of an operand of rank `rank` that are neither batch nor
// contracting, ascending (the order they appear in the dot's result).
std::vector<int64_t> freeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d)
        if (!contains(batch, d) && !contains(contracting, d)) free.push_back(d);
    return free;
}

bool isIdentity(const std::vector<int64_t>& dims) {
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i] != static_cast<int64_t>(i)) return false;
    return true;
}

bool increasingUnder(const std::vector<int64_t>& permutation, std::vector<int64_t> dims) {
    std::sort(dims.begin(), dims.end());
    for (size_t i = 1; i < dims.size(); ++i)
        if (permutation[static_cast<size_t>(dims[i - 1])] >=
            permutation[static_cast<size_t>(dims[i])])
            return false;
    return true;
}

// dot(transpose(a), b) -> dot(a, b) with the dimension numbers mapped through
// the permutation, when the free dimensions keep their relative order (so
// the result layout of dimensions is unchanged) and the contracting ones too
// (so the accumulation order is unchanged).
RuleResult foldTranspose(Context& context, HloInstruction* dot, int side) {
    HloInstruction* transpose = dot->operand(side);
    if (transpose->opcode() != HloOpcode::kTranspose || transpose->operandCount() != 1)
        return std::nullopt;
    const std::vector<int64_t>& permutation = transpose->dimensions();
    const int64_t rank = transpose->shape().rank();
    if (static_cast<int64_t>(permutation.size()) != rank || !validDims(permutation, rank))
        return std::nullopt;
    DotDimensionNumbers numbers = *dot->dotDimensionNumbers();
    std::vector<int64_t>& batch = side == 0 ? numbers.lhsBatchDimensions : numbers.rhsBatchDimensions;
    std::vector<int64_t>& contracting =
        side == 0 ? numbers.lhsContractingDimensions : numbers.rhsContractingDimensions;
    if (!validDims(batch, rank) || !validDims(contracting, rank)) return std::nullopt;
    if (!increasingUnder(permutation, freeDims(rank, batch, contracting)) ||
        !increasingUnder(permutation, contracting))
        return std::nullopt;
    for (int64_t& d : batch) d = permutation[static_cast<size_t>(d)];
    for (int64_t& d : contracting) d = permutation[static_cast<size_t>(d)];
    dot->mutableExtra().dotDimensionNumbers = std::move(numbers);
    dot->replaceOperand(side, transpose->operand(0));
    context.lostUse(transpose);
    return Rewrite{"dot-fold-transpose", nullptr};
}

// An operand of a dot without contracting dimensions, broadcast to the
// result's dimensions (or itself when it already has them in order).
HloInstruction* expandOperand(Context& context, HloInstruction* dot, HloInstruction* operand,
                              const std::vector<int64_t>& resultDims) {
    const Shape& result = dot->shape();
    if (operand->shape().rank() == result.rank() && isIdentity(resultDims) &&
        operand->shape().dimensions() == result.dimensions())
        return operand;
    Shape shape = shapeLike(result, operand->shape().elementType(), result.dimensions());
    HloInstruction* operands[] = {operand};
    return context.add(HloOpcode::kBroadcast, shape, operands, "broadcast",
                       [&](HloInstruction& b) { b.setDimensions(resultDims); });
}

// dot without contracting dimensions of integer scalars/vectors: every
// result element is a single product, so it is multiply(broadcast(lhs),
// broadcast(rhs)). Integers only: for floats the dot's accumulation (0 +
// a*b) turns a -0.0 product into +0.0.
RuleResult strengthReduce(Context& context, HloInstruction* dot) {
    const DotDimensionNumbers& numbers = *dot->dotDimensionNumbers();
    if (!numbers.lhsContractingDimensions.empty() || !numbers.rhsContractingDimensions.empty())
        return std::nullopt;
    HloInstruction* lhs = dot->operand(0);
    HloInstruction* rhs = dot->operand(1);
    const PrimitiveType type = dot->shape().elementType();
    if (!primitive_util::isInteger(type) || lhs->shape().elementType() != type ||
        rhs->shape().elementType() != type)
        return std::nullopt;
    if (lhs->shape().rank() > 1 || rhs->shape().rank() > 1) return std::nullopt;
    const size_t batchCount = numbers.lhsBatchDimensions.size();
    if (numbers.rhsBatchDimensions.size() != batchCount) return std::nullopt;
    if (!validDims(numbers.lhsBatchDimensions, lhs->shape().rank()) ||
        !validDims(numbers.rhsBatchDimensions, rhs->shape().rank()))
        return std::nullopt;
    const std::vector<int64_t> lhsFree = freeDims(lhs->shape().rank(), numbers.lhsBatchDimensions, {});
    const std::vector<int64_t> rhsFree = freeDims(rhs->shape().rank(), numbers.rhsBatchDimensions, {});
    const int64_t resultRank = static_cast<int64_t>(batchCount + lhsFree.size() + rhsFree.size());
    if (resultRank != dot->shape().rank()) return std::nullopt;
    // Result dimension of each operand dimension: batch k -> k, free ones
    // after the batch dimensions (lhs before rhs).
    auto mapping = [&](const HloInstruction* operand, const std::vector<int64_t>& batch,
                       const std::vector<int64_t>& free, int64_t freeBase) {
        std::vector<int64_t> dims(static_cast<size_t>(operand->shape().rank()));
        for (size_t k = 0; k < batch.size(); ++k) dims[static_cast<size_t>(batch[k])] = static_cast<int64_t>(k);
        for (size_t k = 0; k < free.size(); ++k)
            dims[static_cast<size_t>(free[k])] = freeBase + static_cast<int64_t>(k);
        return dims;
    };
    const int64_t nb = static_cast<int64_t>(batchCount);
    const std::vector<int64_t> lhsDims = mapping(lhs, numbers.lhsBatchDimensions, lhsFree, nb);
    const std::vector<int64_t> rhsDims = mapping(
        rhs, numbers.rhsBatchDimensions, rhsFree, nb + static_cast<int64_t>(lhsFree.size()));
    if (!context.canAddInstructions()) return std::nullopt;
    HloInstruction* a = expandOperand(context, dot, lhs, lhsDims);
    if (a == nullptr) return std::nullopt;
    HloInstruction* b = expandOperand(context, dot, rhs, rhsDims);
    if (b == nullptr) {
        if (a != lhs) context.lostUse(a);
        return std::nullopt;
    }
    HloInstruction* operands[] = {a, b};
    HloInstruction* multiply = context.add(HloOpcode::kMultiply, dot->shape(), operands,
                                           "multiply", [](HloInstruction&) {});
    if (multiply == nullptr) {
        if (a != lhs) context.lostUse(a);
        if (b != rhs) context.lostUse(b);
        return std::nullopt;
    }
    return Rewrite{"dot-strength-reduction", multiply};
}

}  // namespace

RuleResult simplifyDot(Context& context, HloInstruction* dot) {
    if (dot->operandCount() != 2 || dot->dotDimensionNumbers() == nullptr) return std::nullopt;
    const DotDimensionNumbers& numbers = *dot->dotDimensionNumbers();
    if (!numbers.lhsRaggedDimensions.empty() || !numbers.rhsGroupDimensions.empty() ||
        dot->attribute("sparsity") || dot->operandCount() != 2)
        return std::nullopt;
    if (numbers.lhsBatchDimensions.size() != numbers.rhsBatchDimensions.size() ||
        numbers.lhsContractingDimensions.size() != numbers.rhsContractingDimensions.size())
        return std::nullopt;
    if (auto r = strengthReduce(context, dot)) return r;
    for (int side = 0; side < 2; ++side)
        if (auto r = foldTranspose(context, dot, side)) return r;
    return std::nullopt;
}

}  // namespace hloscope::simplifier
