#include "compiler/backends/gpu/gpu_kernel_emitter.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "core/ir/hlo_computation.h"
#include "core/lowering/library_calls.h"
#include "core/ir/scaled_dot.h"

namespace hloscope {
namespace gpu_internal {

std::vector<Value*> GpuKernelGen::beginEntry(const std::string& name, size_t count,
                                             int64_t maxThreads) {
    llvm::LLVMContext& context = m_b.getContext();
    std::vector<llvm::Type*> params(count, m_b.getPtrTy(kGlobalSpace));
    auto* type = llvm::FunctionType::get(m_b.getVoidTy(), params, false);
    m_function =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, *m_impl.module);
    m_function->setCallingConv(llvm::CallingConv::PTX_Kernel);
    m_created.push_back(m_function);
    llvm::NamedMDNode* annotations = m_impl.module->getOrInsertNamedMetadata("nvvm.annotations");
    auto annotate = [&](const char* key, int64_t value) {
        llvm::Metadata* fields[] = {
            llvm::ValueAsMetadata::get(m_function), llvm::MDString::get(context, key),
            llvm::ConstantAsMetadata::get(m_b.getInt32(static_cast<uint32_t>(value)))};
        annotations->addOperand(llvm::MDNode::get(context, fields));
    };
    annotate("kernel", 1);
    annotate("maxntidx", maxThreads);
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", m_function);
    m_b.SetInsertPoint(entry);
    std::vector<Value*> pointers;
    for (size_t i = 0; i < count; ++i) {
        llvm::Argument* argument = m_function->getArg(static_cast<unsigned>(i));
        argument->addAttr(llvm::Attribute::NoAlias);
        // Plan buffers start at multiples of 256 bytes (kGpuBufferAlignment).
        argument->addAttr(llvm::Attribute::getWithAlignment(m_b.getContext(), llvm::Align(256)));
        pointers.push_back(argument);
    }
    return pointers;
}

GpuKernelGen::GridLoop GpuKernelGen::beginGridLoop(int64_t n, const char* name,
                                                   bool firstThreadOnly) {
    GridLoop loop;
    llvm::BasicBlock* entry = m_b.GetInsertBlock();
    Value* thread = globalThread();
    Value* start = firstThreadOnly ? c64(0) : thread;
    loop.stride = firstThreadOnly
                      ? c64(1)
                      : m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                      special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
    loop.body = llvm::BasicBlock::Create(m_b.getContext(), name, m_function);
    loop.done = llvm::BasicBlock::Create(m_b.getContext(), "done", m_function);
    Value* enter = m_b.CreateICmpSLT(start, c64(n));
    if (firstThreadOnly) enter = m_b.CreateAnd(enter, m_b.CreateICmpEQ(thread, c64(0)));
    m_b.CreateCondBr(enter, loop.body, loop.done);
    m_b.SetInsertPoint(loop.body);
    loop.position = m_b.CreatePHI(i64(), 2, "i");
    loop.position->addIncoming(start, entry);
    return loop;
}

void GpuKernelGen::endGridLoop(GridLoop& loop, int64_t n) {
    Value* next = m_b.CreateAdd(loop.position, loop.stride);
    loop.position->addIncoming(next, m_b.GetInsertBlock());
    m_b.CreateCondBr(m_b.CreateICmpSLT(next, c64(n)), loop.body, loop.done);
    m_b.SetInsertPoint(loop.done);
}

void GpuKernelGen::bindLeaves(const std::vector<Value*>& params, size_t outputs) {
    m_leafPointers.clear();
    if (outputs == kOutputsOfSpec) outputs = m_spec.outputs.size();
    for (size_t i = 0; i < m_spec.leaves.size(); ++i)
        m_leafPointers.emplace(m_spec.leaves[i], params[outputs + i]);
}

StatusOr<Value*> GpuKernelGen::outputValue(size_t k, const Index& index) {
    const HloInstruction& output = *m_spec.outputs[k];
    if (component(k) >= 0) {
        HLO_ASSIGN_OR_RETURN(std::vector<Value*> values, genComponents(output, index));
        return values[static_cast<size_t>(component(k))];
    }
    return gen(output, index);
}

void GpuKernelGen::erasePartial() {
    for (auto it = m_created.rbegin(); it != m_created.rend(); ++it) (*it)->eraseFromParent();
    m_created.clear();
}

StatusOr<std::map<const HloInstruction*, std::vector<size_t>>> GpuKernelGen::reduceGroups() const {
    std::map<const HloInstruction*, std::vector<size_t>> groups;
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) groups[reduceOf(k)].push_back(k);
    for (const auto& [reduce, slots] : groups) {
        if (static_cast<int64_t>(slots.size()) != reduce->operandCount() / 2)
            return unsupportedAt(*reduce, "partial variadic outputs");
        for (size_t j = 0; j < slots.size(); ++j) {
            const HloInstruction* output = m_spec.outputs[slots[j]];
            const int expected = output->opcode() == HloOpcode::kGetTupleElement
                                     ? static_cast<int>(output->tupleIndex())
                                     : std::max(component(slots[j]), 0);
            if (expected != static_cast<int>(j))
                return unsupportedAt(*reduce, "variadic outputs out of order");
        }
    }
    return groups;
}

StatusOr<GpuKernelInfo> GpuKernelGen::emit() {
    if (m_spec.outputs.empty()) return internalError("kernel '" + m_spec.name + "' has no outputs");
    if (m_spec.outputs.size() == 1 &&
        (m_spec.outputs[0]->opcode() == HloOpcode::kSort || isGpuTopK(*m_spec.outputs[0]))) {
        GpuKernelInfo info;
        info.entry = m_spec.name;
        return m_spec.outputs[0]->opcode() == HloOpcode::kSort ? emitSort(info) : emitTopK(info);
    }
    if (m_spec.outputs.size() == 1 && m_spec.outputs[0]->opcode() == HloOpcode::kScatter &&
        m_spec.outputs[0]->shape().isTuple()) {
        GpuKernelInfo info;
        info.entry = m_spec.name;
        return emitScatter(info);
    }
    if (m_spec.updateInPlace && m_spec.outputs.size() == 1 &&
        m_spec.outputs[0]->opcode() == HloOpcode::kDynamicUpdateSlice) {
        GpuKernelInfo info;
        info.entry = m_spec.name;
        return emitUpdateInPlace(info);
    }
    if (m_spec.outputs.size() == 1 && m_spec.outputs[0]->opcode() == HloOpcode::kRngBitGenerator) {
        GpuKernelInfo info;
        info.entry = m_spec.name;
        return emitRngBitGenerator(info);
    }
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        const Shape& shape = m_spec.outputs[k]->shape();
        const int c = component(k);
        if (c >= 0 ? (!shape.isTuple() || c >= shape.tupleCount() ||
                      !shape.tupleShape(c).isArray() || !isVariadicReduction(*m_spec.outputs[k]))
                   : !shape.isArray())
            return unsupportedAt(*m_spec.outputs[k],
                                 "kernel output of shape " + shape.toString(false));
    }
    const std::vector<int64_t> dims = outputShape(0).dimensions();
    GpuKernelInfo info;
    info.entry = m_spec.name;
    info.outputElements = product(dims);
    if (m_spec.outputs.size() == 1 && m_spec.outputs[0]->opcode() == HloOpcode::kScatter)
        return emitScatter(info);
    bool allReduces = true;
    bool trailing = true;
    int64_t reduced = 0;
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        const HloInstruction* output = m_spec.outputs[k];
        if (outputShape(k).dimensions() != dims)
            return unsupportedAt(*output, "kernel outputs of different shapes");
        const HloInstruction* reduce = reduceOf(k);
        if (!reduce) {
            allReduces = false;
            continue;
        }
        const int64_t rank = reduce->operand(0)->shape().rank();
        int64_t count = 1;
        std::vector<int64_t> sorted = reduce->dimensions();
        std::sort(sorted.begin(), sorted.end());
        for (size_t i = 0; i < sorted.size(); ++i) {
            count *= reduce->operand(0)->shape().dimensions(sorted[i]);
            trailing = trailing && sorted[i] == rank - static_cast<int64_t>(sorted.size() - i);
        }
        if (reduced != 0 && reduced != count) allReduces = false;
        reduced = std::max(reduced, count);
    }
    // Block reductions for reductions long enough to share, unless the kept
    // dimensions are minor and many (each thread's own loop is coalesced then).
    const bool columnWise = !trailing && info.outputElements >= 2048;
    if (allReduces && reduced >= 32 && !columnWise && info.outputElements < (int64_t{1} << 31)) {
        info.reducedElements = reduced;
        auto groups = reduceGroups();
        // Many outputs, or rows a warp handles quickly: a warp per output;
        // else a block per output (split over blocks when there are few).
        const bool warpPerOutput = trailing && (info.outputElements >= 1024 || reduced <= 2048);
        if (groups.isOk())
            return warpPerOutput ? emitWarpReduction(info) : emitBlockReduction(info);
    }
    if (!allReduces && wantsRowKernel(dims)) return emitRow(dims, info);
    return emitLoop(dims, info);
}

StatusOr<GpuKernelInfo> GpuKernelGen::emitLoop(const std::vector<int64_t>& dims,
                                               GpuKernelInfo info) {
    info.kind = GpuKernelKind::kLoop;
    const int64_t n = info.outputElements;
    // Large element counts divisible by 4: each thread computes 4 adjacent
    // elements in one pass (no grid-stride loop), so that the loads and
    // stores of element-wise chains become 16-byte vector accesses.
    const int64_t unroll = n % 4 == 0 && n >= 4 * kLoopBlock * 64 ? 4 : 1;
    const int64_t threadsNeeded = n / unroll;
    const int64_t block = loopBlock(threadsNeeded);
    info.launch.block = {block, 1, 1};
    const int64_t blocksNeeded = std::max<int64_t>(ceilDiv(threadsNeeded, block), 1);
    info.launch.grid = {unroll > 1 ? blocksNeeded : std::min(blocksNeeded, kMaxGrid), 1, 1};
    if (unroll > 1 && blocksNeeded > (int64_t{1} << 31) - 1)
        return emitLoopStrided(dims, info, block);
    if (unroll == 1) return emitLoopStrided(dims, info, block);
    m_outputsAreReduces = false;  // reduces inside loop kernels run over all their elements
    const size_t outputCount = m_spec.outputs.size();
    std::vector<Value*> params = beginEntry(m_spec.name, outputCount + m_spec.leaves.size(), block);
    bindLeaves(params);
    llvm::LLVMContext& context = m_b.getContext();
    Value* first = m_b.CreateShl(globalThread(), 2, "first");
    llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "elements", m_function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpSLT(first, c64(n)), body, done);
    m_b.SetInsertPoint(body);
    // Every value first, then the stores: adjacent stores vectorise.
    std::vector<std::vector<Value*>> values(outputCount);
    std::vector<Value*> positions;
    for (int64_t u = 0; u < unroll; ++u) {
        Index index = makeIndex(dims);
        index.linear =
            u == 0 ? first : m_b.CreateAdd(first, c64(u), "", /*HasNUW=*/true, /*HasNSW=*/true);
        positions.push_back(index.linear);
        for (size_t k = 0; k < outputCount; ++k) {
            auto value = outputValue(k, index);
            if (!value.isOk()) {
                erasePartial();
                return value.status();
            }
            values[k].push_back(*value);
        }
    }
    for (size_t k = 0; k < outputCount; ++k) {
        const PrimitiveType type = outputShape(k).elementType();
        for (int64_t u = 0; u < unroll; ++u)
            m_b.CreateStore(m_elemental.toMemory(type, values[k][static_cast<size_t>(u)]),
                            m_b.CreateInBoundsGEP(m_elemental.memoryType(type), params[k],
                                                  positions[static_cast<size_t>(u)]));
    }
    m_b.CreateBr(done);
    m_b.SetInsertPoint(done);
    m_b.CreateRetVoid();
    return info;
}

StatusOr<GpuKernelInfo> GpuKernelGen::emitLoopStrided(const std::vector<int64_t>& dims,
                                                      GpuKernelInfo info, int64_t block) {
    const int64_t n = info.outputElements;
    info.launch.block = {block, 1, 1};
    info.launch.grid = {std::clamp<int64_t>(ceilDiv(n, block), 1, kMaxGrid), 1, 1};
    m_outputsAreReduces = false;  // reduces inside loop kernels run over all their elements
    const size_t outputCount = m_spec.outputs.size();
    std::vector<Value*> params = beginEntry(m_spec.name, outputCount + m_spec.leaves.size(), block);
    bindLeaves(params);
    GridLoop loop = beginGridLoop(n, "element");
    llvm::PHINode* i = loop.position;
    Index index = makeIndex(dims);
    index.linear = dims.empty() ? c64(0) : i;
    for (size_t k = 0; k < outputCount; ++k) {
        auto value = outputValue(k, index);
        if (!value.isOk()) {
            erasePartial();
            return value.status();
        }
        const PrimitiveType type = outputShape(k).elementType();
        m_b.CreateStore(m_elemental.toMemory(type, *value),
                        m_b.CreateInBoundsGEP(m_elemental.memoryType(type), params[k], i));
    }
    endGridLoop(loop, n);
    m_b.CreateRetVoid();
    return info;
}

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
        static_cast<unsigned>(m_impl.module->getDataLayout().getTypeSizeInBits(memory->getType()));
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
            *m_impl.module, array, false, llvm::GlobalValue::InternalLinkage,
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

namespace {

// Intrinsics the NVPTX target selects (or expands) itself; any other would
// become a library call, which PTX cannot link, or stop LLVM.
bool nvptxSelects(llvm::StringRef name) {
    static const char* const kPrefixes[] = {"llvm.nvvm.",
                                            "llvm.fabs.",
                                            "llvm.sqrt.",
                                            "llvm.fma.",
                                            "llvm.fmuladd.",
                                            "llvm.minnum.",
                                            "llvm.maxnum.",
                                            "llvm.minimum.",
                                            "llvm.maximum.",
                                            "llvm.floor.",
                                            "llvm.ceil.",
                                            "llvm.trunc.",
                                            "llvm.rint.",
                                            "llvm.nearbyint.",
                                            "llvm.round.",
                                            "llvm.roundeven.",
                                            "llvm.copysign.",
                                            "llvm.ctpop.",
                                            "llvm.ctlz.",
                                            "llvm.cttz.",
                                            "llvm.abs.",
                                            "llvm.smax.",
                                            "llvm.smin.",
                                            "llvm.umax.",
                                            "llvm.umin.",
                                            "llvm.fptosi.sat.",
                                            "llvm.fptoui.sat.",
                                            "llvm.memcpy.",
                                            "llvm.memset.",
                                            "llvm.lifetime.",
                                            "llvm.assume",
                                            "llvm.fshl.",
                                            "llvm.fshr.",
                                            "llvm.bswap.",
                                            "llvm.is.fpclass.",
                                            "llvm.bitreverse.",
                                            "llvm.experimental.noalias.scope.decl",
                                            "llvm.vector.reduce."};
    for (const char* prefix : kPrefixes)
        if (name.starts_with(prefix)) return true;
    return false;
}

// Functions the kernels call that PTX cannot provide: libm, and intrinsics
// that would become libm calls.
std::vector<std::string> externalCalls(const llvm::Module& module) {
    std::vector<std::string> names;
    for (const llvm::Function& function : module)
        if (function.isDeclaration() && !function.use_empty() &&
            (!function.isIntrinsic() || !nvptxSelects(function.getName())))
            names.push_back(function.getName().str());
    return names;
}

void initialiseNvptx() {
    static std::once_flag once;
    std::call_once(once, [] {
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
    });
}

}  // namespace
}  // namespace gpu_internal

const std::vector<std::string>& GpuKernelEmitter::supportedSms() {
    static const std::vector<std::string> sms = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
    return sms;
}

GpuKernelEmitter::GpuKernelEmitter(const std::string& moduleName, const std::string& sm)
    : m_impl(std::make_unique<Impl>()) {
    gpu_internal::initialiseNvptx();
    m_impl->sm = sm;
    m_impl->code.context = std::make_unique<llvm::LLVMContext>();
    m_impl->code.module = std::make_unique<llvm::Module>(moduleName, *m_impl->code.context);
    const auto& sms = supportedSms();
    if (std::find(sms.begin(), sms.end(), sm) == sms.end()) {
        m_impl->machineStatus =
            invalidArgument("unsupported GPU architecture '" + sm +
                            "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");
        return;
    }
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(gpu_internal::kTriple, error);
    if (!target) {
        m_impl->machineStatus = internalError("LLVM has no NVPTX target: " + error);
        return;
    }
    llvm::TargetOptions options;
    m_impl->machine.reset(target->createTargetMachine(gpu_internal::kTriple, sm, "", options,
                                                      std::nullopt, std::nullopt,
                                                      llvm::CodeGenOptLevel::Aggressive));
    if (!m_impl->machine) {
        m_impl->machineStatus = internalError("cannot create the NVPTX target machine for " + sm);
        return;
    }
    m_impl->code.module->setTargetTriple(gpu_internal::kTriple);
    m_impl->code.module->setDataLayout(m_impl->machine->createDataLayout());
}

GpuKernelEmitter::~GpuKernelEmitter() {
    m_impl->code.module.reset();  // before its context
}

StatusOr<GpuKernelInfo> GpuKernelEmitter::emitKernel(const CpuKernelSpec& spec) {
    HLO_RETURN_IF_ERROR(m_impl->machineStatus);
    if (m_impl->code.compiled) return internalError("GpuKernelEmitter: emit after compileToPtx");
    CpuKernelSpec gpuSpec = spec;
    gpuSpec.streamOutputs = false;
    gpuSpec.rowBuffers = false;
    std::set<std::string> before;
    for (const std::string& name : gpu_internal::externalCalls(*m_impl->code.module))
        before.insert(name);
    gpu_internal::GpuKernelGen gen(m_impl->code, gpuSpec);
    auto info = gen.emit();
    if (!info.isOk()) return info.status();
    for (const std::string& name : gpu_internal::externalCalls(*m_impl->code.module)) {
        if (before.count(name)) continue;
        for (const char* entry : {"", "_combine"})
            if (llvm::Function* function = m_impl->code.module->getFunction(spec.name + entry))
                function->eraseFromParent();
        for (llvm::Function& function : llvm::make_early_inc_range(*m_impl->code.module))
            if (function.isDeclaration() && function.use_empty()) function.eraseFromParent();
        return Status(StatusCode::kUnimplemented,
                      "%" + spec.outputs.front()->name() + ": needs the library function '" + name +
                          "', which the GPU backend has no device code for");
    }
    ++m_impl->code.kernels;
    return info;
}

std::string gpuCustomCallRefusal(const HloInstruction& call) {
    std::string why = "custom-call \"" + std::string(call.customCallTarget()) +
                      "\" is not compiled by the GPU backend";
    if (isLibraryCall(call))
        why += " (library-call-expander left it: " + libraryCallStatus(call).message() + ")";
    return why;
}

int64_t GpuKernelEmitter::kernelCount() const { return m_impl->code.kernels; }

std::string GpuKernelEmitter::irText() const {
    std::string text;
    llvm::raw_string_ostream stream(text);
    if (m_impl->code.module) m_impl->code.module->print(stream, nullptr);
    stream.flush();
    return text;
}

StatusOr<std::string> GpuKernelEmitter::compileToPtx() {
    HLO_RETURN_IF_ERROR(m_impl->machineStatus);
    if (m_impl->code.compiled) return internalError("GpuKernelEmitter: compiled twice");
    m_impl->code.compiled = true;
    llvm::Module& module = *m_impl->code.module;
    std::string problems;
    llvm::raw_string_ostream problemStream(problems);
    if (llvm::verifyModule(module, &problemStream)) {
        problemStream.flush();
        return internalError("generated NVPTX module '" + module.getName().str() +
                             "' is invalid: " + problems.substr(0, 2000));
    }
    {
        llvm::LoopAnalysisManager loops;
        llvm::FunctionAnalysisManager functions;
        llvm::CGSCCAnalysisManager sccs;
        llvm::ModuleAnalysisManager modules;
        llvm::PassBuilder builder(m_impl->machine.get());
        builder.registerModuleAnalyses(modules);
        builder.registerCGSCCAnalyses(sccs);
        builder.registerFunctionAnalyses(functions);
        builder.registerLoopAnalyses(loops);
        builder.crossRegisterProxies(loops, functions, sccs, modules);
        llvm::ModulePassManager pipeline =
            builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
        pipeline.run(module, modules);
    }
    llvm::SmallString<0> ptx;
    llvm::raw_svector_ostream stream(ptx);
    llvm::legacy::PassManager codegen;
    if (m_impl->machine->addPassesToEmitFile(codegen, stream, nullptr,
                                             llvm::CodeGenFileType::AssemblyFile))
        return internalError("the NVPTX target cannot emit PTX");
    codegen.run(module);
    return std::string(ptx.str());
}

}  // namespace hloscope
