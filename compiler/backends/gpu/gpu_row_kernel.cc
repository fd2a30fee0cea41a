// The GPU's row kernel (GpuKernelGen::emitRow): a loop kernel whose outputs read row
// reductions broadcast back over the same rows (row-fusion's softmax and layer-norm kernels,
// compiler/fusion/row_fusion.h) runs a block per row instead of a thread per element, which
// would repeat each reduction for every element of its row.
//
// Per row (rows in a block-stride loop, so every thread of a block is always on the same row):
//   * the row preamble: each reduction over the row (hoisted there by the shared generator,
//     KernelGen::genReduce) is split across the block: thread t folds the elements t, t + T,
//     t + 2T, ... (coalesced), each warp combines its lanes with butterfly shuffles (every lane
//     ends with the warp's value), lane 0 of each warp leaves it in shared memory, and after a
//     barrier every thread folds the warps' values in warp order, so all hold the row's
//     result; a second barrier lets the slots be reused;
//   * the element loop: thread t computes the row's outputs t, t + T, ... with the reductions'
//     values in registers (the row of input, just read, is still in L1/L2).
// A reduction feeding another (layer norm's mean inside its variance) is hoisted first. The
// preamble runs on every thread, those beyond the row's length included, so the barriers are
// reached by the whole block; only the element loop is guarded.
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <unordered_set>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "compiler/fusion/row_fusion.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::gpu_internal {

namespace {

// A reduce of one or more arrays of `dims` over exactly the last dimension.
bool isRowReduce(const HloInstruction& reduce, const std::vector<int64_t>& dims) {
    return reduce.opcode() == HloOpcode::kReduce && reduce.operandCount() >= 2 &&
           reduce.operand(0)->shape().isArray() &&
           reduce.operand(0)->shape().dimensions() == dims && reduce.dimensions().size() == 1 &&
           reduce.dimensions(0) == static_cast<int64_t>(dims.size()) - 1;
}

}  // namespace

bool GpuKernelGen::wantsRowKernel(const std::vector<int64_t>& dims) const {
    if (dims.size() < 2 || dims.back() < 32) return false;
    // A row broadcast (fusion::isRowBroadcast) with a row reduce beneath it, within the kernel.
    std::unordered_set<const HloInstruction*> seen;
    std::vector<std::pair<const HloInstruction*, bool>> work;
    for (const HloInstruction* output : m_spec.outputs) work.push_back({output, false});
    while (!work.empty()) {
        auto [x, under] = work.back();
        work.pop_back();
        if (m_leafPointers.count(x) || !seen.insert(x).second) continue;
        const bool below = under || fusion::isRowBroadcast(*x, dims);
        if (below && isRowReduce(*x, dims)) return true;
        for (const HloInstruction* operand : x->operands()) work.push_back({operand, below});
    }
    return false;
}

StatusOr<std::vector<Value*>> GpuKernelGen::genHoistedReduce(const HloInstruction& reduce,
                                                             const Index& rowIndex) {
    if (m_rowThreads == 0 || !isRowReduce(reduce, m_row.dims) || rowIndex.multi != m_row.outer)
        return genReduceLoop(reduce, rowIndex);
    // This thread's share of the row.
    const HloInstruction* savedShared = m_sharedReduce;
    Value* savedBegin = m_reducedBegin;
    Value* savedEnd = m_reducedEnd;
    const int64_t savedStep = m_reducedStep;
    m_sharedReduce = &reduce;
    m_reducedBegin = m_rowThread;
    m_reducedEnd = c64(m_row.dims.back());
    m_reducedStep = m_rowThreads;
    auto partials = genReduceLoop(reduce, rowIndex);
    m_sharedReduce = savedShared;
    m_reducedBegin = savedBegin;
    m_reducedEnd = savedEnd;
    m_reducedStep = savedStep;
    if (!partials.isOk()) return partials.status();
    return blockCombine(reduce, *partials);
}

StatusOr<std::vector<Value*>> GpuKernelGen::blockCombine(const HloInstruction& reduce,
                                                         std::vector<Value*> values) {
    const HloComputation& reducer = *reduce.toApply();
    const size_t n = values.size();
    // The partials are unrounded registers (f16, bf16 and the small floats in f32, as the
    // interpreter accumulates them): shuffled and kept in shared memory as such, combined
    // without rounding, rounded once at the end.
    std::vector<PrimitiveType> types, carried;
    for (size_t k = 0; k < n; ++k) {
        types.push_back(reduce.operand(static_cast<int64_t>(k))->shape().elementType());
        carried.push_back(carriedType(types[k]));
    }
    auto combine = [&](const std::vector<Value*>& a,
                       const std::vector<Value*>& b) -> StatusOr<std::vector<Value*>> {
        std::vector<Value*> args = a;
        args.insert(args.end(), b.begin(), b.end());
        return callScalar(reducer, args, true);
    };
    // The warp: butterfly shuffles leave the warp's value in every lane.
    for (int64_t delta = 16; delta >= 1; delta /= 2) {
        std::vector<Value*> others;
        for (size_t k = 0; k < n; ++k) others.push_back(shuffle(values[k], carried[k], delta, true));
        HLO_ASSIGN_OR_RETURN(values, combine(values, others));
    }
    const int64_t warps = m_rowThreads / 32;
    if (warps > 1) {
        llvm::LLVMContext& context = m_b.getContext();
        llvm::Module& module = *m_code.module;
        Value* lane = m_b.CreateAnd(m_rowThread, c64(31));
        Value* warp = m_b.CreateLShr(m_rowThread, c64(5));
        std::vector<llvm::GlobalVariable*> slots;
        for (size_t k = 0; k < n; ++k) {
            llvm::Type* memory = m_elemental.memoryType(carried[k]);
            auto* array = llvm::ArrayType::get(memory, static_cast<uint64_t>(warps));
            slots.push_back(new llvm::GlobalVariable(
                module, array, false, llvm::GlobalValue::InternalLinkage,
                llvm::UndefValue::get(array), m_spec.name + ".row" + std::to_string(m_rowSlots++),
                nullptr, llvm::GlobalValue::NotThreadLocal, kSharedSpace));
        }
        llvm::BasicBlock* write = llvm::BasicBlock::Create(context, "row.warp.write", m_function);
        llvm::BasicBlock* written =
            llvm::BasicBlock::Create(context, "row.warp.written", m_function);
        m_b.CreateCondBr(m_b.CreateICmpEQ(lane, c64(0)), write, written);
        m_b.SetInsertPoint(write);
        for (size_t k = 0; k < n; ++k)
            m_b.CreateStore(
                m_elemental.toMemory(carried[k], values[k]),
                m_b.CreateInBoundsGEP(slots[k]->getValueType(), slots[k], {c64(0), warp}));
        m_b.CreateBr(written);
        m_b.SetInsertPoint(written);
        m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
        auto slot = [&](size_t k, int64_t w) {
            llvm::Type* memory = m_elemental.memoryType(carried[k]);
            Value* loaded = m_b.CreateLoad(
                memory,
                m_b.CreateInBoundsGEP(slots[k]->getValueType(), slots[k], {c64(0), c64(w)}));
            return m_elemental.fromMemory(carried[k], loaded);
        };
        std::vector<Value*> total;
        for (size_t k = 0; k < n; ++k) total.push_back(slot(k, 0));
        for (int64_t w = 1; w < warps; ++w) {
            std::vector<Value*> next;
            for (size_t k = 0; k < n; ++k) next.push_back(slot(k, w));
            HLO_ASSIGN_OR_RETURN(total, combine(total, next));
        }
        m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
        values = total;
    }
    for (size_t k = 0; k < n; ++k) values[k] = m_elemental.roundTo(types[k], values[k]);
    return values;
}

StatusOr<GpuKernelInfo> GpuKernelGen::emitRow(const std::vector<int64_t>& dims,
                                              GpuKernelInfo info) {
    const int64_t n = dims.back();
    const int64_t rows = product(dims) / n;
    const int64_t threads = std::clamp<int64_t>(roundUpPow2(ceilDiv(n, 4)), 32, 1024);
    info.kind = GpuKernelKind::kLoop;
    info.launch.block = {threads, 1, 1};
    info.launch.grid = {std::clamp<int64_t>(rows, 1, kMaxGrid), 1, 1};
    m_outputsAreReduces = false;
    const size_t outputCount = m_spec.outputs.size();
    std::vector<Value*> params =
        beginEntry(m_spec.name, outputCount + m_spec.leaves.size(), threads);
    bindLeaves(params);
    llvm::LLVMContext& context = m_b.getContext();
    llvm::BasicBlock* entry = m_b.GetInsertBlock();
    m_rowThreads = threads;
    m_rowThread = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* firstRow = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    Value* rowStride = special(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
    llvm::BasicBlock* outer = llvm::BasicBlock::Create(context, "row", m_function);
    llvm::BasicBlock* guard = llvm::BasicBlock::Create(context, "row.elements", m_function);
    llvm::BasicBlock* inner = llvm::BasicBlock::Create(context, "element", m_function);
    llvm::BasicBlock* latch = llvm::BasicBlock::Create(context, "row.next", m_function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpSLT(firstRow, c64(rows)), outer, done);

    m_b.SetInsertPoint(outer);
    llvm::PHINode* row = m_b.CreatePHI(i64(), 2, "row");
    row->addIncoming(firstRow, entry);
    const std::vector<Value*> outerMulti = rowCoordinates(row, dims);
    Value* rowBase = m_b.CreateMul(row, c64(n));

    m_b.SetInsertPoint(inner);
    llvm::PHINode* column = m_b.CreatePHI(i64(), 2, "column");
    Index index = makeIndex(dims);
    index.linear = m_b.CreateAdd(rowBase, column, "linear");
    index.multi = outerMulti;
    index.multi.push_back(column);
    // The row preamble stays open for hoisted reductions; closed after the element loop.
    openRowScope(entry, outer, index, column);
    auto fail = [&](Status status) {
        m_row = RowScope{};
        m_rowThreads = 0;
        erasePartial();
        return status;
    };
    if (Status hoisted = hoistRowBroadcasts(index); !hoisted.isOk()) return fail(hoisted);
    for (size_t k = 0; k < outputCount; ++k) {
        auto value = outputValue(k, index);
        if (!value.isOk()) return fail(value.status());
        const PrimitiveType type = outputShape(k).elementType();
        m_b.CreateStore(
            m_elemental.toMemory(type, *value),
            m_b.CreateInBoundsGEP(m_elemental.memoryType(type), params[k], index.linear));
    }
    Value* nextColumn = m_b.CreateAdd(column, c64(threads));
    column->addIncoming(nextColumn, m_b.GetInsertBlock());
    m_b.CreateCondBr(m_b.CreateICmpSLT(nextColumn, c64(n)), inner, latch);
    // Close the preamble (grown by the hoisted reductions): on to this thread's elements.
    m_b.SetInsertPoint(m_row.hoistEnd);
    m_b.CreateBr(guard);
    m_b.SetInsertPoint(guard);
    m_b.CreateCondBr(m_b.CreateICmpSLT(m_rowThread, c64(n)), inner, latch);
    column->addIncoming(m_rowThread, guard);
    m_row = RowScope{};
    m_rowThreads = 0;

    m_b.SetInsertPoint(latch);
    Value* nextRow = m_b.CreateAdd(row, rowStride);
    row->addIncoming(nextRow, latch);
    m_b.CreateCondBr(m_b.CreateICmpSLT(nextRow, c64(rows)), outer, done);
    m_b.SetInsertPoint(done);
    m_b.CreateRetVoid();
    return info;
}

}  // namespace hloscope::gpu_internal
