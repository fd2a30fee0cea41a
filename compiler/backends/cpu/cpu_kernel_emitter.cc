#include "compiler/backends/cpu/cpu_kernel_emitter.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "compiler/backends/cpu/cpu_kernel_gen_internal.h"
#include "compiler/backends/llvm/llvm_jit_internal.h"

namespace hloscope {

namespace cpu_internal {

StatusOr<Value*> CpuKernelGen::genOther(const HloInstruction& instruction, const Index&) {
    return unsupportedAt(instruction, std::string(hloOpcodeString(instruction.opcode())) +
                                          " is not compiled by the CPU backend");
}

bool CpuKernelGen::hasReduceInside() const {
    std::vector<const HloInstruction*> stack(m_spec.outputs.begin(), m_spec.outputs.end());
    std::unordered_set<const HloInstruction*> seen;
    while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        if (!seen.insert(x).second || m_leafPointers.count(x)) continue;
        if (x->opcode() == HloOpcode::kReduce) return true;
        for (const HloInstruction* operand : x->operands()) stack.push_back(operand);
    }
    return false;
}

// Chunks of at most 8 KiB per output (L1-resident between the element loop
// and the copy). A row that fits is one chunk, so hoisted row work is
// unaffected; longer rows are cut at multiples of the capacity, which only a
// kernel without reductions inside may do (a hoisted reduction would be
// recomputed per chunk).
void CpuKernelGen::planStreaming(const std::vector<int64_t>& dims) {
    m_stream = Streaming{};
    if (!m_spec.streamOutputs || m_outputsAreReduces || dims.empty() ||
        !supportsStreamingStores(*m_code.module))
        return;
    constexpr int64_t kChunkBytes = 8192;
    constexpr int64_t kMinRowBytes = 256;
    const llvm::DataLayout& layout = m_code.module->getDataLayout();
    int64_t widest = 1;
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        const int64_t bytes = static_cast<int64_t>(
            layout.getTypeAllocSize(m_elemental.memoryType(outputShape(k).elementType()))
                .getFixedValue());
        m_stream.elementBytes.push_back(bytes);
        widest = std::max(widest, bytes);
    }
    const int64_t rowLength = dims.back();
    m_stream.capacity = kChunkBytes / widest;
    m_stream.splitRows = rowLength > m_stream.capacity;
    if (rowLength * widest < kMinRowBytes || (m_stream.splitRows && hasReduceInside())) return;
    m_stream.on = true;
}

void CpuKernelGen::allocateStreamBuffers() {
    if (!m_stream.on) return;
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        llvm::AllocaInst* buffer =
            m_b.CreateAlloca(m_elemental.memoryType(outputShape(k).elementType()),
                             c64(m_stream.capacity), "stream.buffer");
        buffer->setAlignment(llvm::Align(64));
        m_stream.buffers.push_back(buffer);
    }
}

Status CpuKernelGen::emitCombiner(const std::string& name) {
    HLO_ASSIGN_OR_RETURN(auto groups, reduceGroups());
    llvm::LLVMContext& context = m_b.getContext();
    auto* type = llvm::FunctionType::get(m_b.getVoidTy(), {m_b.getPtrTy(), i64(), i64()}, false);
    m_function =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, *m_code.module);
    llvm::Argument* buffers = m_function->getArg(0);
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", m_function);
    m_b.SetInsertPoint(entry);
    const size_t count = m_spec.outputs.size();
    std::vector<Value*> acc, part;
    for (size_t k = 0; k < 2 * count; ++k) {
        Value* slot = m_b.CreateInBoundsGEP(m_b.getPtrTy(), buffers, c64(static_cast<int64_t>(k)));
        (k < count ? acc : part).push_back(m_b.CreateLoad(m_b.getPtrTy(), slot));
    }
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, "loop", m_function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpSLT(m_function->getArg(1), m_function->getArg(2)), loop, done);
    m_b.SetInsertPoint(loop);
    llvm::PHINode* i = m_b.CreatePHI(i64(), 2, "i");
    i->addIncoming(m_function->getArg(1), entry);
    for (const auto& [reduce, slots] : groups) {
        std::vector<Value*> args;
        std::vector<Value*> addresses;
        for (int pass = 0; pass < 2; ++pass)
            for (size_t j = 0; j < slots.size(); ++j) {
                const PrimitiveType type = outputShape(slots[j]).elementType();
                llvm::Type* memory = m_elemental.memoryType(type);
                Value* base = pass == 0 ? acc[slots[j]] : part[slots[j]];
                Value* address = m_b.CreateInBoundsGEP(memory, base, i);
                if (pass == 0) addresses.push_back(address);
                args.push_back(m_elemental.fromMemory(type, m_b.CreateLoad(memory, address)));
            }
        HLO_ASSIGN_OR_RETURN(std::vector<Value*> combined,
                             callScalar(*reduce->toApply(), args, false));
        for (size_t j = 0; j < slots.size(); ++j)
            m_b.CreateStore(m_elemental.toMemory(outputShape(slots[j]).elementType(), combined[j]),
                            addresses[j]);
    }
    Value* next = m_b.CreateAdd(i, c64(1));
    i->addIncoming(next, m_b.GetInsertBlock());
    m_b.CreateCondBr(m_b.CreateICmpSLT(next, m_function->getArg(2)), loop, done);
    m_b.SetInsertPoint(done);
    if (m_stream.on)
        emitStoreFence(m_b);  // the streamed lines are visible before the kernel returns
    m_b.CreateRetVoid();
    return Status::ok();
}

std::vector<Value*> CpuKernelGen::beginFunction() {
    auto* type = llvm::FunctionType::get(m_b.getVoidTy(),
                                         {m_b.getPtrTy(), i64(), i64(), i64(), i64()}, false);
    m_function = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, m_spec.name,
                                        *m_code.module);
    llvm::Argument* buffers = m_function->getArg(0);
    m_reducedBegin = m_function->getArg(3);
    m_reducedEnd = m_function->getArg(4);
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(m_b.getContext(), "entry", m_function);
    m_b.SetInsertPoint(entry);
    std::vector<Value*> outputPointers;
    const size_t outputCount = m_spec.outputs.size();
    for (size_t k = 0; k < outputCount + m_spec.leaves.size(); ++k) {
        Value* slot = m_b.CreateInBoundsGEP(m_b.getPtrTy(), buffers, c64(static_cast<int64_t>(k)));
        Value* pointer = m_b.CreateLoad(m_b.getPtrTy(), slot);
        if (k < outputCount)
            outputPointers.push_back(pointer);
        else
            m_leafPointers.emplace(m_spec.leaves[k - outputCount], pointer);
    }
    return outputPointers;
}

CpuKernelGen::RowLoop CpuKernelGen::beginRows(const std::vector<int64_t>& dims) {
    llvm::LLVMContext& context = m_b.getContext();
    Value* begin = m_function->getArg(1);
    Value* end = m_function->getArg(2);
    RowLoop loop;
    loop.entry = m_b.GetInsertBlock();
    loop.row = llvm::BasicBlock::Create(context, "row", m_function);
    loop.element = llvm::BasicBlock::Create(context, "element", m_function);
    loop.latch = llvm::BasicBlock::Create(context, "row.next", m_function);
    loop.done = llvm::BasicBlock::Create(context, "done", m_function);
    m_b.CreateCondBr(m_b.CreateICmpSLT(begin, end), loop.row, loop.done);

    m_b.SetInsertPoint(loop.row);
    const int64_t rowLength = dims.empty() ? 1 : dims.back();
    loop.i = m_b.CreatePHI(i64(), 2, "i");
    loop.i->addIncoming(begin, loop.entry);
    Value* row = m_b.CreateUDiv(loop.i, c64(rowLength), "row");
    loop.column0 = m_b.CreateSub(loop.i, m_b.CreateMul(row, c64(rowLength)));
    Value* leftInRow = m_b.CreateSub(c64(rowLength), loop.column0);
    Value* leftInRange = m_b.CreateSub(end, loop.i);
    loop.count =
        m_b.CreateSelect(m_b.CreateICmpSLT(leftInRow, leftInRange), leftInRow, leftInRange);
    if (m_stream.splitRows && m_stream.on) {
        Value* leftInChunk =
            m_b.CreateSub(c64(m_stream.capacity), m_b.CreateURem(loop.i, c64(m_stream.capacity)));
        loop.count = m_b.CreateSelect(m_b.CreateICmpSLT(leftInChunk, loop.count), leftInChunk,
                                      loop.count, "count");
    }
    loop.columnEnd = m_b.CreateAdd(loop.column0, loop.count);
    loop.outer = rowCoordinates(row, dims);
    loop.rowBase = m_b.CreateMul(row, c64(rowLength));
    emitNextRowPrefetch(loop, dims);
    return loop;
}

// A kernel with reductions hoisted into its rows reads each row first in a
// reduction loop that waits on memory, then computes on it from L1, while the
// hardware prefetcher runs only a few lines ahead of the demand stream. The
// row preamble asks for the next row of every leaf read at the output's own
// positions (same dimensions) with one prefetch per cache line, so its
// lines arrive while this row computes. At most kMaxLines lines per leaf
// (the rest of a longer row streams behind them); a hint only: a prefetch
// past the end of a buffer does not fault.
void CpuKernelGen::emitNextRowPrefetch(const RowLoop& loop, const std::vector<int64_t>& dims) {
    constexpr int64_t kLineBytes = 64;
    constexpr int64_t kMaxLines = 64;
    if (dims.empty() || m_outputsAreReduces || !hasReduceInside()) return;
    const llvm::DataLayout& layout = m_code.module->getDataLayout();
    const int64_t rowLength = dims.back();
    for (const HloInstruction* leaf : m_spec.leaves) {
        if (!leaf->shape().isArray() || leaf->shape().dimensions() != dims) continue;
        auto pointer = m_leafPointers.find(leaf);
        if (pointer == m_leafPointers.end()) continue;
        llvm::Type* element = m_elemental.memoryType(leaf->shape().elementType());
        const int64_t elementBytes =
            static_cast<int64_t>(layout.getTypeAllocSize(element).getFixedValue());
        const int64_t lines =
            std::min(kMaxLines, (rowLength * elementBytes + kLineBytes - 1) / kLineBytes);
        Value* next = m_b.CreateInBoundsGEP(element, pointer->second,
                                            m_b.CreateAdd(loop.rowBase, c64(rowLength)));
        for (int64_t line = 0; line < lines; ++line) {
            Value* address = m_b.CreateGEP(m_b.getInt8Ty(), next, c64(line * kLineBytes));
            m_b.CreateIntrinsic(llvm::Intrinsic::prefetch, {m_b.getPtrTy()},
                                {address, m_b.getInt32(0), m_b.getInt32(3), m_b.getInt32(1)});
        }
    }
}

Status CpuKernelGen::emitRowElements(RowLoop& loop, const std::vector<int64_t>& dims,
                                     const std::vector<Value*>& outputPointers) {
    m_b.SetInsertPoint(loop.element);
    llvm::PHINode* column = m_b.CreatePHI(i64(), 2, "column");
    column->addIncoming(loop.column0, loop.row);
    Index index = makeIndex(dims);
    index.linear = m_b.CreateAdd(loop.rowBase, column, "linear");
    if (!dims.empty()) {
        index.multi = loop.outer;
        index.multi.push_back(column);
    }
    // The row preamble stays open for hoisted reductions; closed after the
    // element loop.
    openRowScope(loop.entry, loop.row, index, column);
    HLO_RETURN_IF_ERROR(hoistRowBroadcasts(index));
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        const HloInstruction& output = *m_spec.outputs[k];
        Value* value = nullptr;
        if (component(k) >= 0) {
            HLO_ASSIGN_OR_RETURN(std::vector<Value*> values, genComponents(output, index));
            value = values[static_cast<size_t>(component(k))];
        } else {
            HLO_ASSIGN_OR_RETURN(value, gen(output, index));
        }
        const PrimitiveType elementType = outputShape(k).elementType();
        llvm::Type* memory = m_elemental.memoryType(elementType);
        Value* address =
            m_stream.on ? m_b.CreateInBoundsGEP(memory, m_stream.buffers[k],
                                                m_b.CreateSub(column, loop.column0))
                        : m_b.CreateInBoundsGEP(memory, outputPointers[k], index.linear);
        m_b.CreateStore(m_elemental.toMemory(elementType, value), address);
    }
    Value* nextColumn = m_b.CreateAdd(column, c64(1));
    column->addIncoming(nextColumn, m_b.GetInsertBlock());
    m_b.CreateCondBr(m_b.CreateICmpSLT(nextColumn, loop.columnEnd), loop.element, loop.latch);
    // Close the row preamble (it may have grown by hoisted reductions).
    m_b.SetInsertPoint(m_row.hoistEnd);
    m_b.CreateBr(loop.element);
    column->setIncomingBlock(0, m_row.hoistEnd);
    m_row = RowScope{};
    return Status::ok();
}

void CpuKernelGen::endRows(RowLoop& loop, const std::vector<Value*>& outputPointers) {
    m_b.SetInsertPoint(loop.latch);
    if (m_stream.on) {
        llvm::Function* copy = streamCopyFunction(*m_code.module);
        for (size_t k = 0; k < outputPointers.size(); ++k) {
            const int64_t bytes = m_stream.elementBytes[k];
            Value* target = m_b.CreateInBoundsGEP(m_b.getInt8Ty(), outputPointers[k],
                                                  m_b.CreateMul(loop.i, c64(bytes)));
            m_b.CreateCall(copy,
                           {target, m_stream.buffers[k], m_b.CreateMul(loop.count, c64(bytes))});
        }
    }
    Value* nextI = m_b.CreateAdd(loop.i, loop.count);
    loop.i->addIncoming(nextI, loop.latch);
    m_b.CreateCondBr(m_b.CreateICmpSLT(nextI, m_function->getArg(2)), loop.row, loop.done);
    m_b.SetInsertPoint(loop.done);
    if (m_stream.on)
        emitStoreFence(m_b);  // the streamed lines are visible before the kernel returns
    m_b.CreateRetVoid();
}

void CpuKernelGen::addCombiner(CpuKernelInfo& info, llvm::Function* kernel) {
    info.combineName = m_spec.name + ".combine";
    m_cache.clear();
    Status combiner = emitCombiner(info.combineName);
    if (combiner.isOk()) {
        info.splittableReduction = true;
    } else {
        if (m_function != kernel) m_function->eraseFromParent();
        info.combineName.clear();
    }
}

StatusOr<CpuKernelInfo> CpuKernelGen::run() {
    if (m_spec.outputs.empty()) return internalError("kernel '" + m_spec.name + "' has no outputs");
    HLO_ASSIGN_OR_RETURN(OutputReductions reductions, checkOutputs());
    const std::vector<int64_t> dims = outputShape(0).dimensions();
    CpuKernelInfo info;
    m_outputsAreReduces = reductions.allReduces;
    if (m_outputsAreReduces)
        info.reducedElements = std::max<int64_t>(reductions.reducedElements, 1);

    const std::vector<Value*> outputPointers = beginFunction();
    llvm::Function* kernel = m_function;
    planStreaming(dims);
    allocateStreamBuffers();
    RowLoop loop = beginRows(dims);
    if (Status elements = emitRowElements(loop, dims, outputPointers); !elements.isOk()) {
        kernel->eraseFromParent();
        return elements;
    }
    endRows(loop, outputPointers);
    if (m_outputsAreReduces) addCombiner(info, kernel);
    return info;
}

}  // namespace cpu_internal

CpuKernelEmitter::CpuKernelEmitter(const CpuJit& jit, const std::string& moduleName)
    : m_impl(std::make_unique<Impl>()) {
    m_impl->code.context = std::make_unique<llvm::LLVMContext>();
    m_impl->code.module = std::make_unique<llvm::Module>(moduleName, *m_impl->code.context);
    llvm_codegen::configureModule(jit, *m_impl->code.module);
}

CpuKernelEmitter::~CpuKernelEmitter() = default;

StatusOr<CpuKernelInfo> CpuKernelEmitter::emitKernel(const KernelSpec& spec) {
    if (m_impl->code.compiled) return internalError("CpuKernelEmitter: emit after compileInto");
    cpu_internal::CpuKernelGen gen(m_impl->code, spec);
    auto info = gen.run();
    if (info.isOk()) ++m_impl->code.kernels;
    return info;
}

int64_t CpuKernelEmitter::kernelCount() const { return m_impl->code.kernels; }

std::string CpuKernelEmitter::irText() const { return m_impl->code.irText(); }

Status CpuKernelEmitter::compileInto(CpuJit& jit) {
    if (m_impl->code.compiled) return internalError("CpuKernelEmitter: compiled twice");
    m_impl->code.compiled = true;
    if (m_impl->code.kernels == 0) return Status::ok();
    return llvm_codegen::addModule(jit, std::move(m_impl->code.context),
                                   std::move(m_impl->code.module));
}

}  // namespace hloscope
