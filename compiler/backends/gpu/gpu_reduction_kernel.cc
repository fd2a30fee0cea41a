// The GPU's reduction kernels (GpuKernelGen): warp reductions (a warp per
// output element, partials combined with shuffles), block reductions (a block
// per output element, split over several blocks along grid.y when there are
// few outputs, combined through shared memory and, per slice, by a combine
// entry) and the warp shuffles and combines they share.
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <map>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::gpu_internal {

Value* GpuKernelGen::shuffle(Value* value, PrimitiveType type, int64_t delta, bool butterfly) {
    if (primitive_util::isComplex(type)) {  // each part on its own
        const PrimitiveType part = primitive_util::complexComponentType(type);
        return m_elemental.complexOf(shuffle(m_elemental.realPart(value), part, delta, butterfly),
                                     shuffle(m_elemental.imagPart(value), part, delta, butterfly));
    }
    llvm::Type* i32 = m_b.getInt32Ty();
    const llvm::Intrinsic::ID id = butterfly ? llvm::Intrinsic::nvvm_shfl_sync_bfly_i32
                                             : llvm::Intrinsic::nvvm_shfl_sync_down_i32;
    auto shuffle32 = [&](Value* bits) {
        return m_b.CreateIntrinsic(
            id, {},
            {m_b.getInt32(0xffffffffu), bits, m_b.getInt32(static_cast<uint32_t>(delta)),
             m_b.getInt32(0x1f)});
    };
    Value* memory = m_elemental.toMemory(type, value);
    const unsigned bits =
        static_cast<unsigned>(m_code.module->getDataLayout().getTypeSizeInBits(memory->getType()));
    llvm::Type* integer = m_b.getIntNTy(bits);
    Value* asInteger =
        memory->getType()->isIntegerTy() ? memory : m_b.CreateBitCast(memory, integer);
    Value* result = nullptr;
    if (bits <= 32) {
        result = m_b.CreateTrunc(shuffle32(m_b.CreateZExt(asInteger, i32)), integer);
    } else {  // 64 bits: two halves
        Value* low = shuffle32(m_b.CreateTrunc(asInteger, i32));
        Value* high = shuffle32(m_b.CreateTrunc(m_b.CreateLShr(asInteger, 32), i32));
        result = m_b.CreateOr(m_b.CreateZExt(low, integer),
                              m_b.CreateShl(m_b.CreateZExt(high, integer), 32));
    }
    if (!memory->getType()->isIntegerTy()) result = m_b.CreateBitCast(result, memory->getType());
    return m_elemental.fromMemory(type, result);
}

Status GpuKernelGen::warpCombine(const std::map<const HloInstruction*, std::vector<size_t>>& groups,
                                 std::vector<Value*>& partials, int64_t width) {
    for (int64_t delta = width / 2; delta >= 1; delta /= 2) {
        for (const auto& [reduce, slots] : groups) {
            std::vector<Value*> args;
            for (size_t k : slots) args.push_back(partials[k]);
            for (size_t k : slots)
                args.push_back(
                    shuffle(partials[k], carriedType(outputShape(k).elementType()), delta, false));
            HLO_ASSIGN_OR_RETURN(std::vector<Value*> combined,
                                 callScalar(*reduce->toApply(), args, true));
            for (size_t j = 0; j < slots.size(); ++j) partials[slots[j]] = combined[j];
        }
    }
    return Status::ok();
}

StatusOr<std::vector<Value*>> GpuKernelGen::warpPartials(
    const std::map<const HloInstruction*, std::vector<size_t>>& groups, Value* output, Value* begin,
    Value* end, int64_t step) {
    m_outputsAreReduces = true;
    m_reducedBegin = begin;
    m_reducedEnd = end;
    m_reducedStep = step;
    Index index = makeIndex(outputShape(0).dimensions());
    index.linear = outputShape(0).dimensions().empty() ? c64(0) : output;
    std::vector<Value*> partials;
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        auto value = outputValue(k, index);
        if (!value.isOk()) {
            erasePartial();
            return value.status();
        }
        partials.push_back(*value);
    }
    if (Status combined = warpCombine(groups, partials, 32); !combined.isOk()) {
        erasePartial();
        return combined;
    }
    return partials;
}

// One warp per output element, eight outputs per block: lane l accumulates
// the reduced elements l, l + 32, ... (coalesced for row reductions), the
// warp combines with shuffles, lane 0 writes. No shared memory, no barrier.
StatusOr<GpuKernelInfo> GpuKernelGen::emitWarpReduction(GpuKernelInfo info) {
    info.kind = GpuKernelKind::kWarpReduction;
    const int64_t outputs = info.outputElements;
    constexpr int64_t kWarps = 8;
    info.launch.block = {32 * kWarps, 1, 1};
    info.launch.grid = {ceilDiv(outputs, kWarps), 1, 1};
    const size_t outputCount = m_spec.outputs.size();
    HLO_ASSIGN_OR_RETURN(auto groups, reduceGroups());
    std::vector<Value*> params =
        beginEntry(m_spec.name, outputCount + m_spec.leaves.size(), 32 * kWarps);
    bindLeaves(params);
    llvm::LLVMContext& context = m_b.getContext();
    Value* t = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* lane = m_b.CreateAnd(t, c64(31), "lane");
    Value* o = m_b.CreateAdd(
        m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), c64(kWarps)),
        m_b.CreateLShr(t, 5), "output");
    llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "warp", m_function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpSLT(o, c64(outputs)), body, done);  // uniform per warp
    m_b.SetInsertPoint(body);
    auto reduced = warpPartials(groups, o, lane, c64(info.reducedElements), 32);
    if (!reduced.isOk()) return reduced.status();
    std::vector<Value*> partials = std::move(*reduced);
    llvm::BasicBlock* write = llvm::BasicBlock::Create(context, "write", m_function);
    m_b.CreateCondBr(m_b.CreateICmpEQ(lane, c64(0)), write, done);
    m_b.SetInsertPoint(write);
    for (size_t k = 0; k < outputCount; ++k) {
        const PrimitiveType type = outputShape(k).elementType();
        m_b.CreateStore(m_elemental.toMemory(type, partials[k]),
                        m_b.CreateInBoundsGEP(m_elemental.memoryType(type), params[k], o));
    }
    m_b.CreateBr(done);
    m_b.SetInsertPoint(done);
    m_b.CreateRetVoid();
    return info;
}

StatusOr<GpuKernelInfo> GpuKernelGen::emitBlockReduction(GpuKernelInfo info) {
    info.kind = GpuKernelKind::kBlockReduction;
    const int64_t outputs = info.outputElements;
    const int64_t reduced = info.reducedElements;
    const int64_t threads = reduced >= 256 ? 256 : std::max<int64_t>(32, roundUpPow2(reduced));
    const int64_t warps = threads / 32;
    // Few outputs: split each one's elements over several blocks (at least
    // 16 elements per thread), for about 1024 blocks in all.
    int64_t slices = 1;
    if (outputs < 512)
        slices = std::clamp<int64_t>(
            std::min(ceilDiv(reduced, threads * 16), ceilDiv(1024, outputs)), 1, 65535);
    info.slices = slices;
    info.launch.block = {threads, 1, 1};
    info.launch.grid = {outputs, slices, 1};
    const size_t outputCount = m_spec.outputs.size();
    if (slices > 1)
        for (size_t k = 0; k < outputCount; ++k)
            info.scratchBytes.push_back(
                outputs * slices *
                primitive_util::byteWidth(carriedType(outputShape(k).elementType())));
    HLO_ASSIGN_OR_RETURN(auto groups, reduceGroups());

    std::vector<Value*> params = beginEntry(
        m_spec.name, outputCount + m_spec.leaves.size() + (slices > 1 ? outputCount : 0), threads);
    bindLeaves(params);
    llvm::LLVMContext& context = m_b.getContext();
    Value* o = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    Value* s = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y);
    Value* t = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* lane = m_b.CreateAnd(t, c64(31), "lane");
    Value* warp = m_b.CreateLShr(t, 5, "warp");
    // Each thread's partial, combined within its warp by shuffles.
    auto threadPartials = warpPartials(groups, o, m_b.CreateAdd(m_b.CreateMul(s, c64(threads)), t),
                                       c64(reduced), threads * slices);
    if (!threadPartials.isOk()) return threadPartials.status();
    std::vector<Value*> partials = std::move(*threadPartials);
    // The warps' results through shared memory to warp 0, which combines them.
    std::vector<llvm::GlobalVariable*> shared;
    for (size_t k = 0; k < outputCount; ++k) {
        const PrimitiveType type = carriedType(outputShape(k).elementType());
        llvm::Type* memory = m_elemental.memoryType(type);
        auto* array = llvm::ArrayType::get(memory, static_cast<uint64_t>(warps));
        auto* variable = new llvm::GlobalVariable(
            *m_code.module, array, false, llvm::GlobalValue::InternalLinkage,
            llvm::UndefValue::get(array), m_spec.name + ".partials." + std::to_string(k), nullptr,
            llvm::GlobalValue::NotThreadLocal, kSharedSpace);
        variable->setAlignment(llvm::Align(8));
        shared.push_back(variable);
        info.launch.sharedBytes += warps * primitive_util::byteWidth(type);
    }
    auto slot = [&](size_t k, Value* position) {
        auto* array = llvm::cast<llvm::ArrayType>(shared[k]->getValueType());
        return m_b.CreateInBoundsGEP(array, shared[k], {c64(0), position});
    };
    llvm::BasicBlock* publish = llvm::BasicBlock::Create(context, "publish", m_function);
    llvm::BasicBlock* gathered = llvm::BasicBlock::Create(context, "gathered", m_function);
    m_b.CreateCondBr(m_b.CreateICmpEQ(lane, c64(0)), publish, gathered);
    m_b.SetInsertPoint(publish);
    for (size_t k = 0; k < outputCount; ++k)
        m_b.CreateStore(
            m_elemental.toMemory(carriedType(outputShape(k).elementType()), partials[k]),
            slot(k, warp));
    m_b.CreateBr(gathered);
    m_b.SetInsertPoint(gathered);
    m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    llvm::BasicBlock* last = llvm::BasicBlock::Create(context, "warp0", m_function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpEQ(warp, c64(0)), last, done);
    m_b.SetInsertPoint(last);
    // Lanes past the warp count read a valid slot; only lanes < warps reach lane 0.
    Value* from = m_b.CreateAnd(lane, c64(warps - 1));
    std::vector<Value*> warpResults;
    for (size_t k = 0; k < outputCount; ++k) {
        const PrimitiveType type = carriedType(outputShape(k).elementType());
        warpResults.push_back(m_elemental.fromMemory(
            type, m_b.CreateLoad(m_elemental.memoryType(type), slot(k, from))));
    }
    if (Status combined = warpCombine(groups, warpResults, warps); !combined.isOk()) {
        erasePartial();
        return combined;
    }
    llvm::BasicBlock* write = llvm::BasicBlock::Create(context, "write", m_function);
    m_b.CreateCondBr(m_b.CreateICmpEQ(lane, c64(0)), write, done);
    m_b.SetInsertPoint(write);
    for (size_t k = 0; k < outputCount; ++k) {
        // A slice's partial stays unrounded in scratch; the output is rounded once.
        const PrimitiveType type =
            slices > 1 ? carriedType(outputShape(k).elementType()) : outputShape(k).elementType();
        llvm::Type* memory = m_elemental.memoryType(type);
        Value* address = slices > 1 ? m_b.CreateInBoundsGEP(
                                          memory, params[outputCount + m_spec.leaves.size() + k],
                                          m_b.CreateAdd(m_b.CreateMul(o, c64(slices)), s))
                                    : m_b.CreateInBoundsGEP(memory, params[k], o);
        m_b.CreateStore(m_elemental.toMemory(type, warpResults[k]), address);
    }
    m_b.CreateBr(done);
    m_b.SetInsertPoint(done);
    m_b.CreateRetVoid();
    if (slices > 1) {
        m_cache.clear();
        Status combine = emitCombine(info);
        if (!combine.isOk()) {
            erasePartial();
            return combine;
        }
        info.combineEntry = m_spec.name + "_combine";
        info.combineLaunch = loopLaunch(outputs);
    }
    return info;
}

// [outputs..., scratch...]: output o = the reducer over its `slices` partials.
Status GpuKernelGen::emitCombine(const GpuKernelInfo& info) {
    const size_t outputCount = m_spec.outputs.size();
    const int64_t n = info.outputElements;
    std::vector<Value*> params =
        beginEntry(m_spec.name + "_combine", 2 * outputCount, loopBlock(n));
    HLO_ASSIGN_OR_RETURN(auto groups, reduceGroups());
    llvm::LLVMContext& context = m_b.getContext();
    GridLoop loop = beginGridLoop(n, "output");
    llvm::PHINode* i = loop.position;
    Value* base = m_b.CreateMul(i, c64(info.slices));
    auto partial = [&](size_t k, Value* slice) {
        const PrimitiveType type = carriedType(outputShape(k).elementType());
        llvm::Type* memory = m_elemental.memoryType(type);
        return m_elemental.fromMemory(
            type, m_b.CreateLoad(memory, m_b.CreateInBoundsGEP(memory, params[outputCount + k],
                                                               m_b.CreateAdd(base, slice))));
    };
    for (const auto& [reduce, slots] : groups) {
        std::vector<Value*> first;
        for (size_t k : slots) first.push_back(partial(k, c64(0)));
        llvm::BasicBlock* before = m_b.GetInsertBlock();
        llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, "slices", m_function);
        llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, "slices.done", m_function);
        m_b.CreateBr(loop);
        m_b.SetInsertPoint(loop);
        llvm::PHINode* slice = m_b.CreatePHI(i64(), 2, "slice");
        slice->addIncoming(c64(1), before);
        std::vector<llvm::PHINode*> accumulators;
        std::vector<Value*> args;
        for (Value* value : first) {
            llvm::PHINode* phi = m_b.CreatePHI(value->getType(), 2, "acc");
            phi->addIncoming(value, before);
            accumulators.push_back(phi);
            args.push_back(phi);
        }
        for (size_t k : slots) args.push_back(partial(k, slice));
        HLO_ASSIGN_OR_RETURN(std::vector<Value*> combined,
                             callScalar(*reduce->toApply(), args, true));
        Value* nextSlice = m_b.CreateAdd(slice, c64(1));
        llvm::BasicBlock* latch = m_b.GetInsertBlock();
        slice->addIncoming(nextSlice, latch);
        for (size_t j = 0; j < accumulators.size(); ++j)
            accumulators[j]->addIncoming(combined[j], latch);
        m_b.CreateCondBr(m_b.CreateICmpSLT(nextSlice, c64(info.slices)), loop, exit);
        m_b.SetInsertPoint(exit);
        for (size_t j = 0; j < slots.size(); ++j) {
            const PrimitiveType type = outputShape(slots[j]).elementType();
            m_b.CreateStore(
                m_elemental.toMemory(type, combined[j]),
                m_b.CreateInBoundsGEP(m_elemental.memoryType(type), params[slots[j]], i));
        }
    }
    endGridLoop(loop, n);
    m_b.CreateRetVoid();
    return Status::ok();
}

}  // namespace hloscope::gpu_internal
