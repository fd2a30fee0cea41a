// ragged-dot on the GPU, element by element like dot (genDotSum), as the
// interpreter defines it (core/interpreter/linalg.cc). group_sizes splits the
// lhs ragged dimension into consecutive groups (negative sizes count as 0),
// one run per position of its leading dimensions (the prefix: the batch
// dimensions, then the lhs dimensions outer to the ragged one):
//  * ragged non-contracting dimension: the row's group picks the rhs group
//    dimension's slice; rows past the last group are 0;
//  * ragged contracting dimension: the result gains a leading group
//    dimension; group g sums only the contracting positions of its run;
//  * ragged batch dimension: a plain batched dot, 0 past the last group.
// Each thread finds its group with a loop over group_sizes.
#include <algorithm>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"

namespace hloscope {

namespace gpu_internal {

namespace {

bool contains(const std::vector<int64_t>& dims, int64_t d) {
    return std::find(dims.begin(), dims.end(), d) != dims.end();
}

// group_sizes' leading dimensions, as lhs dimensions (the interpreter's order): the batch
// dimensions before the ragged one, then, unless it is a batch dimension, the lhs dimensions
// outer to it of its kind (contracting or free).
std::vector<int64_t> groupPrefix(const DotDimensionNumbers& dn, int64_t ragged, bool contracting,
                                 bool batch) {
    std::vector<int64_t> prefix;
    for (int64_t d : dn.lhsBatchDimensions) {
        if (batch && d == ragged) break;
        prefix.push_back(d);
    }
    if (!batch)
        for (int64_t d = 0; d < ragged; ++d)
            if (contracting ? contains(dn.lhsContractingDimensions, d)
                            : !contains(dn.lhsBatchDimensions, d) &&
                                  !contains(dn.lhsContractingDimensions, d))
                prefix.push_back(d);
    return prefix;
}

}  // namespace

StatusOr<GpuKernelGen::GroupScan> GpuKernelGen::scanGroups(const HloInstruction& sizes,
                                                           const std::vector<Value*>& prefix,
                                                           Value* target, Value* at) {
    const std::vector<int64_t>& sizeDims = sizes.shape().dimensions();
    const PrimitiveType sizeType = sizes.shape().elementType();
    // Accumulators: the end of the groups so far, the run's start and end, the count.
    HLO_ASSIGN_OR_RETURN(
        std::vector<Value*> last,
        emitFold(
            sizeDims.back(), {c64(0), c64(0), c64(0), c64(0)},
            [&](Value* g, const std::vector<Value*>& acc) -> StatusOr<std::vector<Value*>> {
                Index where = makeIndex(sizeDims);
                where.multi = prefix;
                where.multi.push_back(g);
                HLO_ASSIGN_OR_RETURN(Value * raw, gen(sizes, where));
                Value* size = m_elemental.convert(sizeType, PrimitiveType::S64, raw);
                size = m_b.CreateSelect(m_b.CreateICmpSLT(size, c64(0)), c64(0), size);
                Value* total = m_b.CreateAdd(acc[0], size);
                Value* isTarget = target ? m_b.CreateICmpEQ(g, target) : m_b.getFalse();
                Value* count =
                    at ? m_b.CreateAdd(acc[3], m_b.CreateZExt(m_b.CreateICmpSLE(total, at), i64()))
                       : acc[3];
                return std::vector<Value*>{total, m_b.CreateSelect(isTarget, acc[0], acc[1]),
                                           m_b.CreateSelect(isTarget, total, acc[2]), count};
            },
            "groups"));
    return GroupScan{last[1], last[2], last[3], last[0]};
}

StatusOr<Value*> GpuKernelGen::genRaggedDot(const HloInstruction& dot, const Index& index) {
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (dot.operandCount() != 3 || numbers == nullptr || numbers->lhsRaggedDimensions.size() != 1)
        return unsupportedAt(dot, "ragged-dot without three operands and one lhs_ragged_dims");
    const DotDimensionNumbers& dn = *numbers;
    const HloInstruction& lhs = *dot.operand(0);
    const HloInstruction& sizes = *dot.operand(2);
    const PrimitiveType resultType = dot.shape().elementType();
    if (!primitive_util::isFloatingPoint(resultType) && !primitive_util::isInteger(resultType))
        return unsupportedAt(
            dot, "ragged-dot of element type " + std::string(primitive_util::name(resultType)));
    const PrimitiveType sizeType = sizes.shape().elementType();
    if (!primitive_util::isInteger(sizeType) || sizes.shape().rank() < 1)
        return unsupportedAt(dot, "group_sizes that are not an integer array");
    const int64_t ragged = dn.lhsRaggedDimensions[0];
    const bool contracting = contains(dn.lhsContractingDimensions, ragged);
    const bool batch = contains(dn.lhsBatchDimensions, ragged);
    if (!contracting && !batch && dn.rhsGroupDimensions.size() != 1)
        return unsupportedAt(dot, "ragged non-contracting dot without one rhs_group_dims");

    // The output coordinate of each lhs batch and free dimension.
    std::vector<Value*> out = multiAll(index);
    const size_t offset = contracting ? 1 : 0;
    std::vector<Value*> lhsCoordinate(static_cast<size_t>(lhs.shape().rank()), nullptr);
    for (size_t i = 0; i < dn.lhsBatchDimensions.size(); ++i)
        lhsCoordinate[static_cast<size_t>(dn.lhsBatchDimensions[i])] = out[offset + i];
    size_t position = offset + dn.lhsBatchDimensions.size();
    for (int64_t d = 0; d < lhs.shape().rank(); ++d)
        if (!contains(dn.lhsBatchDimensions, d) && !contains(dn.lhsContractingDimensions, d))
            lhsCoordinate[static_cast<size_t>(d)] = out[position++];
    std::vector<int64_t> prefix = groupPrefix(dn, ragged, contracting, batch);
    const std::vector<int64_t>& sizeDims = sizes.shape().dimensions();
    if (sizeDims.size() == 1) prefix.clear();
    if (prefix.size() + 1 != sizeDims.size())
        return unsupportedAt(
            dot, "group_sizes of rank " + std::to_string(sizeDims.size()) + " for this ragged-dot");
    for (int64_t d : prefix)
        if (lhsCoordinate[static_cast<size_t>(d)] == nullptr)
            return unsupportedAt(dot, "group_sizes indexed by a contracting dimension");
    std::vector<Value*> prefixAt;
    for (int64_t d : prefix) prefixAt.push_back(lhsCoordinate[static_cast<size_t>(d)]);

    auto operandValue = [&](int side, const Index& inner) -> StatusOr<Value*> {
        const HloInstruction& operand = *dot.operand(side);
        HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
        return m_elemental.convert(operand.shape().elementType(), resultType, value);
    };
    Value* zero = m_elemental.zero(resultType);
    Value* sum = nullptr;
    Value* valid = nullptr;
    if (contracting) {
        // Group g (the leading output dimension) sums its run of the ragged
        // contracting dimension.
        HLO_ASSIGN_OR_RETURN(GroupScan run, scanGroups(sizes, prefixAt, out[0], nullptr));
        DotSumExtras extras;
        extras.outOffset = 1;
        HLO_ASSIGN_OR_RETURN(sum,
                             genDotSum(
                                 dot, index, resultType,
                                 [&](int side, const Index& inner) -> StatusOr<Value*> {
                                     HLO_ASSIGN_OR_RETURN(Value * value, operandValue(side, inner));
                                     if (side == 1) return value;
                                     Value* k = inner.multi[static_cast<size_t>(ragged)];
                                     Value* inRun = m_b.CreateAnd(m_b.CreateICmpSGE(k, run.start),
                                                                  m_b.CreateICmpSLT(k, run.end));
                                     return m_b.CreateSelect(inRun, value, zero);
                                 },
                                 &extras));
    } else {
        Value* r = lhsCoordinate[static_cast<size_t>(ragged)];
        HLO_ASSIGN_OR_RETURN(GroupScan found, scanGroups(sizes, prefixAt, nullptr, r));
        valid = m_b.CreateICmpSLT(r, found.total);
        DotSumExtras extras;
        if (!batch) {
            extras.rhsFixedDimension = dn.rhsGroupDimensions[0];
            extras.rhsFixedValue = m_b.CreateSelect(valid, found.groupOf, c64(0));
        }
        HLO_ASSIGN_OR_RETURN(sum, genDotSum(dot, index, resultType, operandValue, &extras));
    }
    sum = m_elemental.roundTo(resultType, sum);
    return valid ? m_b.CreateSelect(valid, sum, zero) : sum;
}

}  // namespace gpu_internal

}  // namespace hloscope
