#include "compiler/backends/gpu/gpu_kernel_emitter.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

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

#include "compiler/backends/cpu/kernel_gen_internal.h"
#include "core/hlo_computation.h"

namespace hloscope {

namespace {
constexpr const char* kTriple = "nvptx64-nvidia-cuda";
constexpr unsigned kGlobalSpace = 1;
constexpr unsigned kSharedSpace = 3;
}  // namespace

struct GpuKernelEmitter::Impl {
    CpuKernelEmitter::Impl code;  // context, module, counters (shared with the element generator)
    std::string sm;
    std::unique_ptr<llvm::TargetMachine> machine;
    Status machineStatus = Status::ok();
};

namespace gpu_internal {
namespace {

using cpu_internal::Index;
using cpu_internal::unsupportedAt;
using llvm::Value;

int64_t product(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

int64_t roundUpPow2(int64_t v) {
    int64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kLoopBlock = 256;
constexpr int64_t kMaxGrid = int64_t{1} << 24;

class GpuKernelGen : public cpu_internal::KernelGen {
public:
    GpuKernelGen(CpuKernelEmitter::Impl& impl, const CpuKernelSpec& spec) : KernelGen(impl, spec) {}

    StatusOr<GpuKernelInfo> emit();

protected:
    StatusOr<Value*> genOther(const HloInstruction& instruction, const Index& index) override;

private:
    Value* special(llvm::Intrinsic::ID id) { return m_b.CreateZExt(m_b.CreateIntrinsic(id, {}, {}), i64()); }
    // A kernel entry with `count` global-pointer parameters, as generic
    // pointers (the optimiser's address-space inference turns the accesses
    // back into global ones).
    std::vector<Value*> beginEntry(const std::string& name, size_t count, int64_t maxThreads);
    void bindLeaves(const std::vector<Value*>& params);
    StatusOr<Value*> outputValue(size_t k, const Index& index);
    StatusOr<GpuKernelInfo> emitLoop(const std::vector<int64_t>& dims, GpuKernelInfo info);
    StatusOr<GpuKernelInfo> emitBlockReduction(GpuKernelInfo info);
    Status emitCombine(const GpuKernelInfo& info);
    // Output slots grouped by their reduce (a variadic reduce's components in
    // tuple order), as the combiners need them.
    StatusOr<std::map<const HloInstruction*, std::vector<size_t>>> reduceGroups() const;
    void erasePartial();

    std::vector<llvm::Function*> m_created;
};

std::vector<Value*> GpuKernelGen::beginEntry(const std::string& name, size_t count, int64_t maxThreads) {
    llvm::LLVMContext& context = m_b.getContext();
    std::vector<llvm::Type*> params(count, m_b.getPtrTy(kGlobalSpace));
    auto* type = llvm::FunctionType::get(m_b.getVoidTy(), params, false);
    m_function = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, *m_impl.module);
    m_function->setCallingConv(llvm::CallingConv::PTX_Kernel);
    m_created.push_back(m_function);
    llvm::NamedMDNode* annotations = m_impl.module->getOrInsertNamedMetadata("nvvm.annotations");
    auto annotate = [&](const char* key, int64_t value) {
        llvm::Metadata* fields[] = {llvm::ValueAsMetadata::get(m_function), llvm::MDString::get(context, key),
                                    llvm::ConstantAsMetadata::get(m_b.getInt32(static_cast<uint32_t>(value)))};
        annotations->addOperand(llvm::MDNode::get(context, fields));
    };
    annotate("kernel", 1);
    annotate("maxntidx", maxThreads);
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", m_function);
    m_b.SetInsertPoint(entry);
    std::vector<Value*> pointers;
    for (size_t i = 0; i < count; ++i) {
        m_function->getArg(static_cast<unsigned>(i))->addAttr(llvm::Attribute::NoAlias);
        pointers.push_back(m_b.CreateAddrSpaceCast(m_function->getArg(static_cast<unsigned>(i)), m_b.getPtrTy()));
    }
    return pointers;
}

void GpuKernelGen::bindLeaves(const std::vector<Value*>& params) {
    m_leafPointers.clear();
    const size_t outputs = m_spec.outputs.size();
    for (size_t i = 0; i < m_spec.leaves.size(); ++i) m_leafPointers.emplace(m_spec.leaves[i], params[outputs + i]);
}

StatusOr<Value*> GpuKernelGen::outputValue(size_t k, const Index& index) {
    const HloInstruction& output = *m_spec.outputs[k];
    if (component(k) >= 0) {
        HLO_ASSIGN_OR_RETURN(std::vector<Value*> values, genReduce(output, index));
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
            if (expected != static_cast<int>(j)) return unsupportedAt(*reduce, "variadic outputs out of order");
        }
    }
    return groups;
}

StatusOr<GpuKernelInfo> GpuKernelGen::emit() {
    if (m_spec.outputs.empty()) return internalError("kernel '" + m_spec.name + "' has no outputs");
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        const Shape& shape = m_spec.outputs[k]->shape();
        const int c = component(k);
        if (c >= 0 ? (!shape.isTuple() || c >= shape.tupleCount() || !shape.tupleShape(c).isArray() || !reduceOf(k))
                   : !shape.isArray())
            return unsupportedAt(*m_spec.outputs[k], "kernel output of shape " + shape.toString(false));
    }
    const std::vector<int64_t> dims = outputShape(0).dimensions();
    GpuKernelInfo info;
    info.entry = m_spec.name;
    info.outputElements = product(dims);
    bool allReduces = true;
    bool trailing = true;
    int64_t reduced = 0;
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        const HloInstruction* output = m_spec.outputs[k];
        if (outputShape(k).dimensions() != dims) return unsupportedAt(*output, "kernel outputs of different shapes");
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
        if (groups.isOk()) return emitBlockReduction(info);
    }
    return emitLoop(dims, info);
}

StatusOr<GpuKernelInfo> GpuKernelGen::emitLoop(const std::vector<int64_t>& dims, GpuKernelInfo info) {
    info.kind = GpuKernelKind::kLoop;
    const int64_t n = info.outputElements;
    const int64_t block = n >= kLoopBlock ? kLoopBlock : std::max<int64_t>(32, roundUpPow2(std::max<int64_t>(n, 1)));
    info.launch.block = {block, 1, 1};
    info.launch.grid = {std::clamp<int64_t>(ceilDiv(n, block), 1, kMaxGrid), 1, 1};
    m_outputsAreReduces = false;  // reduces inside loop kernels run over all their elements
    const size_t outputCount = m_spec.outputs.size();
    std::vector<Value*> params = beginEntry(m_spec.name, outputCount + m_spec.leaves.size(), block);
    bindLeaves(params);
    llvm::LLVMContext& context = m_b.getContext();
    llvm::BasicBlock* entry = m_b.GetInsertBlock();
    Value* start = m_b.CreateAdd(m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                               special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                 special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    Value* stride = m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                  special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
    llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "element", m_function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpSLT(start, c64(n)), body, done);
    m_b.SetInsertPoint(body);
    llvm::PHINode* i = m_b.CreatePHI(i64(), 2, "i");
    i->addIncoming(start, entry);
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
    Value* next = m_b.CreateAdd(i, stride);
    i->addIncoming(next, m_b.GetInsertBlock());
    m_b.CreateCondBr(m_b.CreateICmpSLT(next, c64(n)), body, done);
    m_b.SetInsertPoint(done);
    m_b.CreateRetVoid();
    return info;
}

StatusOr<GpuKernelInfo> GpuKernelGen::emitBlockReduction(GpuKernelInfo info) {
    info.kind = GpuKernelKind::kBlockReduction;
    const int64_t outputs = info.outputElements;
    const int64_t reduced = info.reducedElements;
    const int64_t threads = reduced >= 256 ? 256 : std::max<int64_t>(32, roundUpPow2(reduced));
    // Few outputs: split each one's elements over several blocks (at least
    // 16 elements per thread), for about 1024 blocks in all.
    int64_t slices = 1;
    if (outputs < 512)
        slices = std::clamp<int64_t>(std::min(ceilDiv(reduced, threads * 16), ceilDiv(1024, outputs)), 1, 65535);
    info.slices = slices;
    info.launch.block = {threads, 1, 1};
    info.launch.grid = {outputs, slices, 1};
    const size_t outputCount = m_spec.outputs.size();
    if (slices > 1)
        for (size_t k = 0; k < outputCount; ++k)
            info.scratchBytes.push_back(outputs * slices *
                                        primitive_util::byteWidth(outputShape(k).elementType()));
    HLO_ASSIGN_OR_RETURN(auto groups, reduceGroups());

    std::vector<Value*> params =
        beginEntry(m_spec.name, outputCount + m_spec.leaves.size() + (slices > 1 ? outputCount : 0), threads);
    bindLeaves(params);
    llvm::LLVMContext& context = m_b.getContext();
    Value* o = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    Value* s = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y);
    Value* t = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    m_outputsAreReduces = true;
    m_reducedBegin = m_b.CreateAdd(m_b.CreateMul(s, c64(threads)), t);
    m_reducedEnd = c64(reduced);
    m_reducedStep = threads * slices;
    Index index = makeIndex(outputShape(0).dimensions());
    index.linear = outputShape(0).dimensions().empty() ? c64(0) : o;
    // Each thread's partial, into shared memory.
    std::vector<llvm::GlobalVariable*> shared;
    for (size_t k = 0; k < outputCount; ++k) {
        auto value = outputValue(k, index);
        if (!value.isOk()) {
            erasePartial();
            return value.status();
        }
        const PrimitiveType type = outputShape(k).elementType();
        llvm::Type* memory = m_elemental.memoryType(type);
        auto* array = llvm::ArrayType::get(memory, static_cast<uint64_t>(threads));
        auto* variable = new llvm::GlobalVariable(*m_impl.module, array, false, llvm::GlobalValue::InternalLinkage,
                                                  llvm::UndefValue::get(array), m_spec.name + ".partials." + std::to_string(k),
                                                  nullptr, llvm::GlobalValue::NotThreadLocal, kSharedSpace);
        variable->setAlignment(llvm::Align(8));
        shared.push_back(variable);
        info.launch.sharedBytes += threads * primitive_util::byteWidth(type);
        m_b.CreateStore(m_elemental.toMemory(type, *value), m_b.CreateInBoundsGEP(array, variable, {c64(0), t}));
    }
    auto slot = [&](size_t k, Value* position) {
        auto* array = llvm::cast<llvm::ArrayType>(shared[k]->getValueType());
        return m_b.CreateInBoundsGEP(array, shared[k], {c64(0), position});
    };
    auto loadShared = [&](size_t k, Value* position) {
        const PrimitiveType type = outputShape(k).elementType();
        return m_elemental.fromMemory(type, m_b.CreateLoad(m_elemental.memoryType(type), slot(k, position)));
    };
    // The tree: log2(threads) halvings, a barrier before each.
    for (int64_t width = threads / 2; width >= 1; width /= 2) {
        m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
        llvm::BasicBlock* combine = llvm::BasicBlock::Create(context, "tree.combine", m_function);
        llvm::BasicBlock* after = llvm::BasicBlock::Create(context, "tree.next", m_function);
        m_b.CreateCondBr(m_b.CreateICmpULT(t, c64(width)), combine, after);
        m_b.SetInsertPoint(combine);
        Value* other = m_b.CreateAdd(t, c64(width));
        for (const auto& [reduce, slotsOf] : groups) {
            std::vector<Value*> args;
            for (size_t k : slotsOf) args.push_back(loadShared(k, t));
            for (size_t k : slotsOf) args.push_back(loadShared(k, other));
            auto combined = callScalar(*reduce->toApply(), args, false);
            if (!combined.isOk()) {
                erasePartial();
                return combined.status();
            }
            for (size_t j = 0; j < slotsOf.size(); ++j)
                m_b.CreateStore(m_elemental.toMemory(outputShape(slotsOf[j]).elementType(), (*combined)[j]),
                                slot(slotsOf[j], t));
        }
        m_b.CreateBr(after);
        m_b.SetInsertPoint(after);
    }
    llvm::BasicBlock* write = llvm::BasicBlock::Create(context, "write", m_function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpEQ(t, c64(0)), write, done);
    m_b.SetInsertPoint(write);
    for (size_t k = 0; k < outputCount; ++k) {
        const PrimitiveType type = outputShape(k).elementType();
        llvm::Type* memory = m_elemental.memoryType(type);
        Value* value = m_b.CreateLoad(memory, slot(k, c64(0)));
        Value* address = slices > 1
                             ? m_b.CreateInBoundsGEP(memory, params[outputCount + m_spec.leaves.size() + k],
                                                     m_b.CreateAdd(m_b.CreateMul(o, c64(slices)), s))
                             : m_b.CreateInBoundsGEP(memory, params[k], o);
        m_b.CreateStore(value, address);
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
        const int64_t block = outputs >= kLoopBlock ? kLoopBlock : std::max<int64_t>(32, roundUpPow2(outputs));
        info.combineLaunch.block = {block, 1, 1};
        info.combineLaunch.grid = {std::clamp<int64_t>(ceilDiv(outputs, block), 1, kMaxGrid), 1, 1};
    }
    return info;
}

// [outputs..., scratch...]: output o = the reducer over its `slices` partials.
Status GpuKernelGen::emitCombine(const GpuKernelInfo& info) {
    const size_t outputCount = m_spec.outputs.size();
    const int64_t n = info.outputElements;
    const int64_t block = n >= kLoopBlock ? kLoopBlock : std::max<int64_t>(32, roundUpPow2(n));
    std::vector<Value*> params = beginEntry(m_spec.name + "_combine", 2 * outputCount, block);
    HLO_ASSIGN_OR_RETURN(auto groups, reduceGroups());
    llvm::LLVMContext& context = m_b.getContext();
    llvm::BasicBlock* entry = m_b.GetInsertBlock();
    Value* start = m_b.CreateAdd(m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                               special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                 special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    Value* stride = m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                  special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
    llvm::BasicBlock* body = llvm::BasicBlock::Create(context, "output", m_function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpSLT(start, c64(n)), body, done);
    m_b.SetInsertPoint(body);
    llvm::PHINode* i = m_b.CreatePHI(i64(), 2, "i");
    i->addIncoming(start, entry);
    Value* base = m_b.CreateMul(i, c64(info.slices));
    auto partial = [&](size_t k, Value* slice) {
        const PrimitiveType type = outputShape(k).elementType();
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
        HLO_ASSIGN_OR_RETURN(std::vector<Value*> combined, callScalar(*reduce->toApply(), args, false));
        Value* nextSlice = m_b.CreateAdd(slice, c64(1));
        llvm::BasicBlock* latch = m_b.GetInsertBlock();
        slice->addIncoming(nextSlice, latch);
        for (size_t j = 0; j < accumulators.size(); ++j) accumulators[j]->addIncoming(combined[j], latch);
        m_b.CreateCondBr(m_b.CreateICmpSLT(nextSlice, c64(info.slices)), loop, exit);
        m_b.SetInsertPoint(exit);
        for (size_t j = 0; j < slots.size(); ++j) {
            const PrimitiveType type = outputShape(slots[j]).elementType();
            m_b.CreateStore(m_elemental.toMemory(type, combined[j]),
                            m_b.CreateInBoundsGEP(m_elemental.memoryType(type), params[slots[j]], i));
        }
    }
    Value* next = m_b.CreateAdd(i, stride);
    i->addIncoming(next, m_b.GetInsertBlock());
    m_b.CreateCondBr(m_b.CreateICmpSLT(next, c64(n)), body, done);
    m_b.SetInsertPoint(done);
    m_b.CreateRetVoid();
    return Status::ok();
}

// dot: the sum over the contracting elements of lhs * rhs at the mapped
// indices (output dimensions: batch, lhs free, rhs free), accumulated in the
// result type.
StatusOr<Value*> GpuKernelGen::genOther(const HloInstruction& instruction, const Index& index) {
    if (instruction.opcode() != HloOpcode::kDot)
        return unsupportedAt(instruction, std::string(hloOpcodeString(instruction.opcode())) +
                                              " is not compiled by the GPU backend");
    const DotDimensionNumbers* numbers = instruction.dotDimensionNumbers();
    if (!numbers || !numbers->lhsRaggedDimensions.empty() || !numbers->rhsGroupDimensions.empty())
        return unsupportedAt(instruction, "not a plain dot_general");
    const HloInstruction& lhs = *instruction.operand(0);
    const HloInstruction& rhs = *instruction.operand(1);
    const PrimitiveType resultType = instruction.shape().elementType();
    if (!primitive_util::isFloatingPoint(resultType) && !primitive_util::isInteger(resultType))
        return unsupportedAt(instruction, "dot of element type " + std::string(primitive_util::name(resultType)));
    const HloInstruction* sides[2] = {&lhs, &rhs};
    const std::vector<int64_t>* batch[2] = {&numbers->lhsBatchDimensions, &numbers->rhsBatchDimensions};
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
                std::find(contracting[side]->begin(), contracting[side]->end(), d) == contracting[side]->end())
                freeDims[static_cast<size_t>(side)].push_back(d);
    std::vector<Value*> out = multiAll(index);
    llvm::LLVMContext& context = m_b.getContext();
    llvm::BasicBlock* before = m_b.GetInsertBlock();
    llvm::Type* accType = m_elemental.registerType(resultType);
    Value* zero = primitive_util::isFloatingPoint(resultType) ? llvm::ConstantFP::get(accType, 0.0)
                                                                   : llvm::ConstantInt::get(accType, 0);
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
            inner.multi[static_cast<size_t>(freeDims[static_cast<size_t>(side)][i])] = out[freeStart + i];
        freeStart += freeDims[static_cast<size_t>(side)].size();
        HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
        values[side] = m_elemental.convert(operand.shape().elementType(), resultType, value);
    }
    Value* next = primitive_util::isFloatingPoint(resultType)
                      ? m_b.CreateFAdd(acc, m_b.CreateFMul(values[0], values[1]))
                      : m_b.CreateAdd(acc, m_b.CreateMul(values[0], values[1]));
    Value* r1 = m_b.CreateAdd(r, c64(1));
    llvm::BasicBlock* latch = m_b.GetInsertBlock();
    r->addIncoming(r1, latch);
    acc->addIncoming(next, latch);
    m_b.CreateCondBr(m_b.CreateICmpSLT(r1, c64(count)), loop, exit);
    m_b.SetInsertPoint(exit);
    return next;
}

// Functions the kernels call that are not intrinsics (libm): PTX cannot
// link them.
std::vector<std::string> externalCalls(const llvm::Module& module) {
    std::vector<std::string> names;
    for (const llvm::Function& function : module)
        if (function.isDeclaration() && !function.isIntrinsic() && !function.use_empty())
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
        m_impl->machineStatus = invalidArgument("unsupported GPU architecture '" + sm +
                                                "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");
        return;
    }
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
    if (!target) {
        m_impl->machineStatus = internalError("LLVM has no NVPTX target: " + error);
        return;
    }
    llvm::TargetOptions options;
    m_impl->machine.reset(target->createTargetMachine(kTriple, sm, "", options, std::nullopt,
                                                      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
    if (!m_impl->machine) {
        m_impl->machineStatus = internalError("cannot create the NVPTX target machine for " + sm);
        return;
    }
    m_impl->code.module->setTargetTriple(kTriple);
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
    for (const std::string& name : gpu_internal::externalCalls(*m_impl->code.module)) before.insert(name);
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
        return internalError("generated NVPTX module '" + module.getName().str() + "' is invalid: " +
                             problems.substr(0, 2000));
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
        llvm::ModulePassManager pipeline = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
        pipeline.run(module, modules);
    }
    llvm::SmallString<0> ptx;
    llvm::raw_svector_ostream stream(ptx);
    llvm::legacy::PassManager codegen;
    if (m_impl->machine->addPassesToEmitFile(codegen, stream, nullptr, llvm::CodeGenFileType::AssemblyFile))
        return internalError("the NVPTX target cannot emit PTX");
    codegen.run(module);
    return std::string(ptx.str());
}

}  // namespace hloscope
