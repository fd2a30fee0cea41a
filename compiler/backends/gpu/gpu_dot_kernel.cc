// The GPU's dots, element by element (GpuKernelGen::genOther): dot and
// scaled-dot as a loop over the contracting elements per output element
// (genDotSum, which ragged-dot in gpu_ragged_dot.cc shares), so a kOutput
// fusion of a dot and its epilogue is one kernel; a custom-call is refused
// with its target named.
#include <llvm/IR/Constants.h>

#include <algorithm>
#include <functional>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/scaled_dot.h"

namespace hloscope::gpu_internal {

// dot: the sum over the contracting elements of lhs * rhs at the mapped
// indices (output dimensions: batch, lhs free, rhs free), accumulated in the
// result type. scaled-dot: the same sum over its operands multiplied by their scales, in the
// types core/ir/scaled_dot.h gives. ragged-dot: gpu_ragged_dot.cc. A custom-call is named by
// its target.
StatusOr<Value*> GpuKernelGen::genOther(const HloInstruction& instruction, const Index& index) {
    if (instruction.opcode() == HloOpcode::kScaledDot) return genScaledDot(instruction, index);
    if (instruction.opcode() == HloOpcode::kRaggedDot) return genRaggedDot(instruction, index);
    if (instruction.opcode() == HloOpcode::kCustomCall)
        return unsupportedAt(instruction, gpuCustomCallRefusal(instruction));
    if (instruction.opcode() != HloOpcode::kDot)
        return unsupportedAt(instruction, std::string(hloOpcodeString(instruction.opcode())) +
                                              " is not compiled by the GPU backend");
    const PrimitiveType resultType = instruction.shape().elementType();
    if (!primitive_util::isFloatingPoint(resultType) && !primitive_util::isInteger(resultType) &&
        !primitive_util::isComplex(resultType) && resultType != PrimitiveType::PRED)
        return unsupportedAt(
            instruction, "dot of element type " + std::string(primitive_util::name(resultType)));
    // A pred dot counts in s64 (true where any product is), as the interpreter does; a c64
    // dot of a c128 operand in c128.
    PrimitiveType accumulate = resultType == PrimitiveType::PRED ? PrimitiveType::S64 : resultType;
    if (resultType == PrimitiveType::C64)
        for (const HloInstruction* operand : instruction.operands())
            if (operand->shape().elementType() == PrimitiveType::C128)
                accumulate = PrimitiveType::C128;
    HLO_ASSIGN_OR_RETURN(Value * sum,
                         genDotSum(instruction, index, accumulate,
                                   [&](int side, const Index& inner) -> StatusOr<Value*> {
                                       const HloInstruction& operand = *instruction.operand(side);
                                       HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
                                       return m_elemental.convert(operand.shape().elementType(),
                                                                  accumulate, value);
                                   }));
    if (accumulate != resultType) return m_elemental.convert(accumulate, resultType, sum);
    return m_elemental.roundTo(resultType, sum);  // f16/bf16 results: accumulated in f32
}

StatusOr<Value*> GpuKernelGen::genScaledDot(const HloInstruction& dot, const Index& index) {
    if (dot.operandCount() != 4) return unsupportedAt(dot, "scaled-dot without four operands");
    // Per side: the operand times its scale in `scaled[side]`, then converted to `common`.
    PrimitiveType scaled[2];
    std::vector<int64_t> blocks[2];
    for (int side = 0; side < 2; ++side) {
        const Shape& operand = dot.operand(side)->shape();
        const Shape& scale = dot.operand(side + 2)->shape();
        if (!operand.isArray() || !scale.isArray())
            return unsupportedAt(dot, "scaled-dot of a tuple");
        scaled[side] = scale.rank() == 0
                           ? operand.elementType()
                           : scaledDotType(operand.elementType(), scale.elementType());
        if (!primitive_util::isFloatingPoint(scaled[side]))
            return unsupportedAt(dot, "scaled-dot in " +
                                          std::string(primitive_util::name(scaled[side])) +
                                          " (floating-point scaling is compiled)");
        if (scale.rank() == 0) continue;
        if (scale.rank() != operand.rank())
            return unsupportedAt(dot, "scale rank differs from operand rank");
        for (int64_t d = 0; d < operand.rank(); ++d) {
            const int64_t size = operand.dimensions(d), scaleSize = scale.dimensions(d);
            if (scaleSize <= 0 ? size != 0 : size % scaleSize != 0)
                return unsupportedAt(dot, "scale dimension " + std::to_string(d) +
                                              " does not divide the operand dimension");
            blocks[side].push_back(scaleSize > 0 ? size / scaleSize : 1);
        }
    }
    const PrimitiveType common = scaledDotType(scaled[0], scaled[1]);
    const PrimitiveType out = dot.shape().elementType();
    const PrimitiveType accumulate = scaledDotType(common, out);
    if (!primitive_util::isFloatingPoint(out))
        return unsupportedAt(
            dot, "scaled-dot of element type " + std::string(primitive_util::name(out)));
    HLO_ASSIGN_OR_RETURN(
        Value * sum,
        genDotSum(dot, index, accumulate, [&](int side, const Index& inner) -> StatusOr<Value*> {
            const HloInstruction& operand = *dot.operand(side);
            const PrimitiveType type = scaled[side];
            HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
            value = m_elemental.convert(operand.shape().elementType(), type, value);
            if (!blocks[side].empty()) {
                const HloInstruction& scale = *dot.operand(side + 2);
                Index at = makeIndex(scale.shape().dimensions());
                for (size_t d = 0; d < blocks[side].size(); ++d)
                    at.multi.push_back(blocks[side][d] == 1
                                           ? inner.multi[d]
                                           : m_b.CreateUDiv(inner.multi[d], c64(blocks[side][d])));
                HLO_ASSIGN_OR_RETURN(Value * factor, gen(scale, at));
                factor = m_elemental.convert(scale.shape().elementType(), type, factor);
                // One rounding to `type`, as the interpreter's product in double rounded once.
                value = m_elemental.roundTo(type, m_b.CreateFMul(value, factor));
            }
            return m_elemental.convert(common, accumulate,
                                       m_elemental.convert(type, common, value));
        }));
    return m_elemental.convert(accumulate, out, m_elemental.roundTo(accumulate, sum));
}

StatusOr<Value*> GpuKernelGen::genDotSum(
    const HloInstruction& instruction, const Index& index, PrimitiveType accumulate,
    const std::function<StatusOr<Value*>(int, const Index&)>& operandValue,
    const DotSumExtras* ragged) {
    const DotDimensionNumbers* numbers = instruction.dotDimensionNumbers();
    if (!numbers || (ragged == nullptr && (!numbers->lhsRaggedDimensions.empty() ||
                                           !numbers->rhsGroupDimensions.empty())))
        return unsupportedAt(instruction, "not a plain dot_general");
    const int64_t rhsFixed = ragged ? ragged->rhsFixedDimension : -1;
    const HloInstruction& lhs = *instruction.operand(0);
    const HloInstruction& rhs = *instruction.operand(1);
    const HloInstruction* sides[2] = {&lhs, &rhs};
    const std::vector<int64_t>* batch[2] = {&numbers->lhsBatchDimensions,
                                            &numbers->rhsBatchDimensions};
    const std::vector<int64_t>* contracting[2] = {&numbers->lhsContractingDimensions,
                                                  &numbers->rhsContractingDimensions};
    std::vector<int64_t> contractingSizes;
    for (int64_t d : *contracting[0]) contractingSizes.push_back(lhs.shape().dimensions(d));
    const int64_t count = product(contractingSizes);
    // Output position of each operand's free dimensions.
    size_t position = batch[0]->size();
    std::vector<std::vector<int64_t>> freeDims(2);
    for (int side = 0; side < 2; ++side)
        for (int64_t d = 0; d < sides[side]->shape().rank(); ++d)
            if (std::find(batch[side]->begin(), batch[side]->end(), d) == batch[side]->end() &&
                std::find(contracting[side]->begin(), contracting[side]->end(), d) ==
                    contracting[side]->end() &&
                (side == 0 || d != rhsFixed))
                freeDims[static_cast<size_t>(side)].push_back(d);
    std::vector<Value*> out = multiAll(index);
    if (ragged)
        out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(ragged->outOffset));
    llvm::LLVMContext& context = m_b.getContext();
    llvm::BasicBlock* before = m_b.GetInsertBlock();
    llvm::Type* accType = m_elemental.registerType(accumulate);
    Value* zero = m_elemental.zero(accumulate);
    if (count == 0) return zero;
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, "dot.loop", m_function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, "dot.exit", m_function);
    m_b.CreateBr(loop);
    m_b.SetInsertPoint(loop);
    llvm::PHINode* r = m_b.CreatePHI(i64(), 2, "k");
    r->addIncoming(c64(0), before);
    llvm::PHINode* acc = m_b.CreatePHI(accType, 2, "dot.acc");
    acc->addIncoming(zero, before);
    std::vector<Value*> contractingIndex(contractingSizes.size());
    {
        Value* rest = r;
        for (size_t i = contractingSizes.size(); i-- > 0;) {
            contractingIndex[i] = i == 0 ? rest : m_b.CreateURem(rest, c64(contractingSizes[i]));
            if (i > 0) rest = m_b.CreateUDiv(rest, c64(contractingSizes[i]));
        }
    }
    Value* values[2];
    size_t freeStart = position;
    for (int side = 0; side < 2; ++side) {
        const HloInstruction& operand = *sides[side];
        Index inner = makeIndex(operand.shape().dimensions());
        inner.multi.assign(static_cast<size_t>(operand.shape().rank()), nullptr);
        for (size_t i = 0; i < batch[side]->size(); ++i)
            inner.multi[static_cast<size_t>((*batch[side])[i])] = out[i];
        for (size_t i = 0; i < contracting[side]->size(); ++i)
            inner.multi[static_cast<size_t>((*contracting[side])[i])] = contractingIndex[i];
        for (size_t i = 0; i < freeDims[static_cast<size_t>(side)].size(); ++i)
            inner.multi[static_cast<size_t>(freeDims[static_cast<size_t>(side)][i])] =
                out[freeStart + i];
        freeStart += freeDims[static_cast<size_t>(side)].size();
        if (side == 1 && rhsFixed >= 0)
            inner.multi[static_cast<size_t>(rhsFixed)] = ragged->rhsFixedValue;
        HLO_ASSIGN_OR_RETURN(values[side], operandValue(side, inner));
    }
    Value* next = m_elemental.multiplyAdd(accumulate, acc, values[0], values[1]);
    Value* r1 = m_b.CreateAdd(r, c64(1));
    llvm::BasicBlock* latch = m_b.GetInsertBlock();
    r->addIncoming(r1, latch);
    acc->addIncoming(next, latch);
    m_b.CreateCondBr(m_b.CreateICmpSLT(r1, c64(count)), loop, exit);
    m_b.SetInsertPoint(exit);
    return next;
}

}  // namespace hloscope::gpu_internal
