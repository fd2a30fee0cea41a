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
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "core/hlo_computation.h"

namespace hloscope::gpu_internal {

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

}  // namespace hloscope::gpu_internal
