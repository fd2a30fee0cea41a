// The GPU's sort kernel (GpuKernelGen::emitSort): an odd-even transposition sort in place on
// outputs the plan has set to the operands (copy steps, gpu_plan.cc). One block per row (the
// elements along the sort dimension, for one position of every other dimension; rows beyond
// the grid in a block-stride loop); phase p compares the pairs (i, i + 1) with i = p mod 2,
// p mod 2 + 2, ..., the block's threads taking pairs in turn, and swaps a pair when the
// comparator says its second element goes first; a barrier ends each phase. n phases sort n
// elements, and only swapping pairs the comparator puts strictly in order keeps equal elements
// in their order: the sort is stable whatever is_stable says. n phases of n / 2 comparisons
// make it O(n^2 / threads) per row: fine for the short rows of top-k style sorts, slow for a
// sort of millions of elements (a merge sort would be the next step).
//
// Top-k (GpuKernelGen::emitTopK: topk, and the TopK custom call without a comparator) needs no
// sort: a thread per input element counts the elements of its row that go before it (XLA's
// order: total order on floats, -NaN < -inf < ... < -0 < +0 < ... < inf < NaN; larger first
// when `largest`; equal keys by lower index), and that count is its place: below k, it writes
// its value and index there. O(n) per element, no barrier, no scratch.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "core/ir/hlo_computation.h"

namespace hloscope {

bool isGpuTopK(const HloInstruction& instruction) {
    return instruction.opcode() == HloOpcode::kTopK ||
           (instruction.opcode() == HloOpcode::kCustomCall &&
            instruction.customCallTarget() == "TopK");
}

namespace gpu_internal {

StatusOr<GpuKernelInfo> GpuKernelGen::emitSort(GpuKernelInfo info) {
    const HloInstruction& sort = *m_spec.outputs[0];
    const HloComputation* comparator = sort.toApply();
    const int64_t operands = sort.operandCount();
    if (!comparator || operands < 1 || sort.dimensions().size() != 1)
        return unsupportedAt(sort, "sort without a comparator or a sort dimension");
    if (comparator->parameterCount() != 2 * operands)
        return unsupportedAt(sort, "sort comparator with other than two parameters per operand");
    const std::vector<int64_t> dims = sort.operand(0)->shape().dimensions();
    const int64_t rank = static_cast<int64_t>(dims.size());
    const int64_t dimension = sort.dimensions()[0];
    if (dimension < 0 || dimension >= rank)
        return unsupportedAt(sort, "sort dimension out of range");
    for (int64_t k = 1; k < operands; ++k)
        if (sort.operand(k)->shape().dimensions() != dims)
            return unsupportedAt(sort, "sort operands of different dimensions");
    const int64_t n = dims[static_cast<size_t>(dimension)];
    int64_t inner = 1;
    for (int64_t d = dimension + 1; d < rank; ++d) inner *= dims[static_cast<size_t>(d)];
    const int64_t rows = product(dims) / std::max<int64_t>(n, 1);

    info.kind = GpuKernelKind::kLoop;
    info.outputElements = product(dims);
    const int64_t block = std::clamp<int64_t>(roundUpPow2(ceilDiv(n, 2)), 32, 1024);
    info.launch.block = {block, 1, 1};
    info.launch.grid = {std::clamp<int64_t>(rows, 1, kMaxGrid), 1, 1};
    m_outputsAreReduces = false;
    std::vector<Value*> params = beginEntry(m_spec.name, static_cast<size_t>(operands), block);
    llvm::LLVMContext& context = m_b.getContext();
    std::vector<PrimitiveType> types;
    for (int64_t k = 0; k < operands; ++k) types.push_back(sort.operand(k)->shape().elementType());

    // A counted loop [from, to) by `step` (all i64); the body goes after the call, `close`
    // ends it and leaves the insert point after the loop.
    struct Loop {
        llvm::PHINode* value;
        llvm::BasicBlock* body;
        llvm::BasicBlock* done;
        Value* step;
        Value* to;
    };
    auto open = [&](Value* from, Value* to, Value* step, const char* name) {
        llvm::BasicBlock* before = m_b.GetInsertBlock();
        Loop loop{nullptr, llvm::BasicBlock::Create(context, name, m_function),
                  llvm::BasicBlock::Create(context, std::string(name) + ".done", m_function), step,
                  to};
        m_b.CreateCondBr(m_b.CreateICmpSLT(from, to), loop.body, loop.done);
        m_b.SetInsertPoint(loop.body);
        loop.value = m_b.CreatePHI(i64(), 2, name);
        loop.value->addIncoming(from, before);
        return loop;
    };
    auto close = [&](Loop& loop) {
        Value* next = m_b.CreateAdd(loop.value, loop.step);
        loop.value->addIncoming(next, m_b.GetInsertBlock());
        m_b.CreateCondBr(m_b.CreateICmpSLT(next, loop.to), loop.body, loop.done);
        m_b.SetInsertPoint(loop.done);
    };

    // The block's rows; within a row, element i is at (outer * n + i) * inner + position.
    Loop row = open(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), c64(rows),
                    special(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), "row");
    Value* outer = m_b.CreateUDiv(row.value, c64(inner));
    Value* position = m_b.CreateURem(row.value, c64(inner));
    Value* rowBase = m_b.CreateAdd(m_b.CreateMul(outer, c64(n * inner)), position);
    Loop phase = open(c64(0), c64(n), c64(1), "phase");
    Value* parity = m_b.CreateAnd(phase.value, c64(1));
    Value* pairs = m_b.CreateUDiv(m_b.CreateSub(c64(n), parity), c64(2));
    Loop pair = open(special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x), pairs,
                     special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x), "pair");
    Value* first = m_b.CreateAdd(m_b.CreateShl(pair.value, c64(1)), parity);
    Value* firstOffset = m_b.CreateAdd(rowBase, m_b.CreateMul(first, c64(inner)));
    Value* secondOffset = m_b.CreateAdd(firstOffset, c64(inner));
    std::vector<Value*> firstAt, secondAt, a, b, args;
    for (int64_t k = 0; k < operands; ++k) {
        const PrimitiveType type = types[static_cast<size_t>(k)];
        llvm::Type* memory = m_elemental.memoryType(type);
        Value* base = params[static_cast<size_t>(k)];
        firstAt.push_back(m_b.CreateInBoundsGEP(memory, base, firstOffset));
        secondAt.push_back(m_b.CreateInBoundsGEP(memory, base, secondOffset));
        a.push_back(m_elemental.fromMemory(type, m_b.CreateLoad(memory, firstAt.back())));
        b.push_back(m_elemental.fromMemory(type, m_b.CreateLoad(memory, secondAt.back())));
        // compare(lhs_0, rhs_0, lhs_1, rhs_1, ...): does the second element go first?
        args.push_back(b.back());
        args.push_back(a.back());
    }
    auto swapped = callScalar(*comparator, args, false);
    if (!swapped.isOk()) {
        erasePartial();
        return swapped.status();
    }
    Value* swap = m_b.CreateIsNotNull(swapped->front());
    for (int64_t k = 0; k < operands; ++k) {
        const PrimitiveType type = types[static_cast<size_t>(k)];
        const size_t i = static_cast<size_t>(k);
        m_b.CreateStore(m_elemental.toMemory(type, m_b.CreateSelect(swap, b[i], a[i])), firstAt[i]);
        m_b.CreateStore(m_elemental.toMemory(type, m_b.CreateSelect(swap, a[i], b[i])),
                        secondAt[i]);
    }
    close(pair);
    // Every pair of the phase is in place before the next phase reads it.
    m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    close(phase);
    close(row);
    m_b.CreateRetVoid();
    return info;
}

StatusOr<GpuKernelInfo> GpuKernelGen::emitTopK(GpuKernelInfo info) {
    const HloInstruction& topk = *m_spec.outputs[0];
    const Shape& shape = topk.shape();
    if (topk.operandCount() != 1 || !shape.isTuple() || shape.tupleCount() != 2)
        return unsupportedAt(topk, "top-k of other than one operand and (values, indices)");
    if (topk.opcode() == HloOpcode::kCustomCall && topk.toApply())
        return unsupportedAt(topk, "TopK custom call with a comparator");
    const Shape& input = topk.operand(0)->shape();
    const PrimitiveType type = input.elementType();
    const PrimitiveType indexType = shape.tupleShape(1).elementType();
    const bool isFloat = type == PrimitiveType::F16 || type == PrimitiveType::BF16 ||
                         type == PrimitiveType::F32 || type == PrimitiveType::F64;
    if (!isFloat && !primitive_util::isInteger(type))
        return unsupportedAt(topk, "top-k of " + std::string(primitive_util::name(type)) +
                                       " elements (f16, bf16, f32, f64 and integers are compiled)");
    if (!primitive_util::isInteger(indexType) || input.rank() == 0)
        return unsupportedAt(topk, "top-k without integer indices or of a scalar");
    const int64_t n = input.dimensions().back();
    const int64_t k = shape.tupleShape(0).dimensions().back();
    const bool largest = topk.opcode() == HloOpcode::kCustomCall || !topk.extra() ||
                         topk.extra()->largest.value_or(true);
    if (k > n) return unsupportedAt(topk, "k exceeds the row length");
    const int64_t elements = product(input.dimensions());

    info.kind = GpuKernelKind::kLoop;
    info.outputElements = product(shape.tupleShape(0).dimensions());
    info.launch = loopLaunch(elements);
    m_outputsAreReduces = false;
    std::vector<Value*> params = beginEntry(m_spec.name, 3, info.launch.block[0]);
    llvm::LLVMContext& context = m_b.getContext();
    llvm::Type* memory = m_elemental.memoryType(type);
    llvm::Type* bits = m_b.getIntNTy(
        static_cast<unsigned>(m_code.module->getDataLayout().getTypeSizeInBits(memory)));
    // The order key of element `at`: an i64 whose signed order is XLA's.
    auto keyAt = [&](Value* at) -> Value* {
        Value* raw = m_b.CreateLoad(bits, m_b.CreateInBoundsGEP(memory, params[2], at));
        if (primitive_util::isUnsignedInteger(type)) {
            Value* wide = m_b.CreateZExt(raw, i64());
            return bits->getIntegerBitWidth() == 64 ? m_b.CreateXor(wide, c64(INT64_MIN)) : wide;
        }
        Value* wide = m_b.CreateSExt(raw, i64());
        if (!isFloat) return wide;
        return m_b.CreateSelect(m_b.CreateICmpSLT(wide, c64(0)),
                                m_b.CreateXor(wide, c64(INT64_MAX)), wide);
    };
    GridLoop loop = beginGridLoop(elements, "element");
    Value* i = loop.position;
    Value* column = m_b.CreateURem(i, c64(n));
    Value* rowStart = m_b.CreateSub(i, column);
    Value* mine = keyAt(i);
    // place = #{j in the row: key_j before key_i, or equal with j < i}
    llvm::BasicBlock* before = m_b.GetInsertBlock();
    llvm::BasicBlock* count = llvm::BasicBlock::Create(context, "count", m_function);
    llvm::BasicBlock* counted = llvm::BasicBlock::Create(context, "counted", m_function);
    m_b.CreateBr(count);
    m_b.SetInsertPoint(count);
    llvm::PHINode* j = m_b.CreatePHI(i64(), 2, "j");
    llvm::PHINode* place = m_b.CreatePHI(i64(), 2, "place");
    j->addIncoming(c64(0), before);
    place->addIncoming(c64(0), before);
    Value* other = keyAt(m_b.CreateAdd(rowStart, j));
    Value* ahead = largest ? m_b.CreateICmpSGT(other, mine) : m_b.CreateICmpSLT(other, mine);
    Value* tie = m_b.CreateAnd(m_b.CreateICmpEQ(other, mine), m_b.CreateICmpULT(j, column));
    Value* nextPlace = m_b.CreateAdd(place, m_b.CreateZExt(m_b.CreateOr(ahead, tie), i64()));
    Value* nextJ = m_b.CreateAdd(j, c64(1));
    j->addIncoming(nextJ, m_b.GetInsertBlock());
    place->addIncoming(nextPlace, m_b.GetInsertBlock());
    m_b.CreateCondBr(m_b.CreateICmpULT(nextJ, c64(n)), count, counted);
    m_b.SetInsertPoint(counted);
    llvm::BasicBlock* write = llvm::BasicBlock::Create(context, "write", m_function);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(context, "next", m_function);
    m_b.CreateCondBr(m_b.CreateICmpULT(nextPlace, c64(k)), write, next);
    m_b.SetInsertPoint(write);
    Value* slot = m_b.CreateAdd(m_b.CreateMul(m_b.CreateUDiv(i, c64(n)), c64(k)), nextPlace);
    Value* value = m_b.CreateLoad(bits, m_b.CreateInBoundsGEP(memory, params[2], i));
    m_b.CreateStore(value, m_b.CreateInBoundsGEP(memory, params[0], slot));
    llvm::Type* indexMemory = m_elemental.memoryType(indexType);
    m_b.CreateStore(m_b.CreateTrunc(column, indexMemory),
                    m_b.CreateInBoundsGEP(indexMemory, params[1], slot));
    m_b.CreateBr(next);
    m_b.SetInsertPoint(next);
    endGridLoop(loop, elements);
    m_b.CreateRetVoid();
    return info;
}

}  // namespace gpu_internal
}  // namespace hloscope
