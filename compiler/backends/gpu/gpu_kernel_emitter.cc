#include "compiler/backends/gpu/gpu_kernel_emitter.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Metadata.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "compiler/backends/llvm/module_pipeline.h"
#include "core/ir/hlo_computation.h"
#include "core/lowering/library_calls.h"

namespace hloscope {
namespace gpu_internal {

std::vector<Value*> GpuKernelGen::beginEntry(const std::string& name, size_t count,
                                             int64_t maxThreads) {
    llvm::LLVMContext& context = m_b.getContext();
    std::vector<llvm::Type*> params(count, m_b.getPtrTy(kGlobalSpace));
    auto* type = llvm::FunctionType::get(m_b.getVoidTy(), params, false);
    m_function =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, *m_code.module);
    m_function->setCallingConv(llvm::CallingConv::PTX_Kernel);
    m_created.push_back(m_function);
    llvm::NamedMDNode* annotations = m_code.module->getOrInsertNamedMetadata("nvvm.annotations");
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
    HLO_ASSIGN_OR_RETURN(OutputReductions reductions, checkOutputs());
    const std::vector<int64_t> dims = outputShape(0).dimensions();
    GpuKernelInfo info;
    info.entry = m_spec.name;
    info.outputElements = product(dims);
    if (m_spec.outputs.size() == 1 && m_spec.outputs[0]->opcode() == HloOpcode::kScatter)
        return emitScatter(info);
    const bool allReduces = reductions.allReduces;
    const bool trailing = reductions.trailing;
    const int64_t reduced = reductions.reducedElements;
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

StatusOr<GpuKernelInfo> GpuKernelEmitter::emitKernel(const KernelSpec& spec) {
    HLO_RETURN_IF_ERROR(m_impl->machineStatus);
    if (m_impl->code.compiled) return internalError("GpuKernelEmitter: emit after compileToPtx");
    KernelSpec gpuSpec = spec;
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

std::string GpuKernelEmitter::irText() const { return m_impl->code.irText(); }

StatusOr<std::string> GpuKernelEmitter::compileToPtx() {
    HLO_RETURN_IF_ERROR(m_impl->machineStatus);
    if (m_impl->code.compiled) return internalError("GpuKernelEmitter: compiled twice");
    m_impl->code.compiled = true;
    llvm::Module& module = *m_impl->code.module;
    HLO_RETURN_IF_ERROR(llvm_codegen::verifyGenerated(module, "NVPTX"));
    llvm_codegen::optimiseModule(module, m_impl->machine.get(), llvm::PipelineTuningOptions());
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
