#include "compiler/backends/llvm/llvm_jit.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include "compiler/backends/llvm/llvm_jit_internal.h"
#include "compiler/backends/llvm/module_pipeline.h"

namespace hloscope {

struct CpuJit::Impl {
    std::unique_ptr<llvm::orc::LLJIT> jit;
    std::unique_ptr<llvm::TargetMachine> targetMachine;  // for the optimiser's cost model
    std::string triple;
    std::string cpu;
    std::string features;
    std::string preferVectorWidth;  // the kernels' "prefer-vector-width"; empty: LLVM's choice
};

namespace llvm_codegen {

Status toStatus(llvm::Error error, std::string_view context) {
    if (!error) return Status::ok();
    std::string message = llvm::toString(std::move(error));
    return internalError(std::string(context) + ": " + message);
}

void configureModule(const CpuJit& jit, llvm::Module& module) {
    module.setTargetTriple(jit.impl().triple);
    module.setDataLayout(jit.impl().jit->getDataLayout());
}

namespace {

// Developer aid: with HLOSCOPE_CPU_DUMP_IR=DIR every optimised kernel module
// is written to DIR/<module>.ll (feed it to llc-19 to read the assembly).
void dumpIfRequested(const llvm::Module& module) {
    const char* dir = std::getenv("HLOSCOPE_CPU_DUMP_IR");
    if (dir == nullptr || *dir == '\0') return;
    std::error_code ignored;
    std::filesystem::create_directories(dir, ignored);
    std::string name = module.getName().str();
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
    std::error_code error;
    llvm::raw_fd_ostream out(std::string(dir) + "/" + name + ".ll", error, llvm::sys::fs::OF_Text);
    if (!error) module.print(out, nullptr);
}

}  // namespace

std::string preferredVectorWidth(std::string_view features) {
    if (const char* forced = std::getenv("HLOSCOPE_CPU_VECTOR_WIDTH"); forced && *forced) {
        const std::string width(forced);
        if (width == "128" || width == "256" || width == "512") return width;
    }
    // LLVM's tuning for Intel's AVX-512 CPUs vectorises at 256 bits (the
    // frequency license older ones took for 512-bit instructions); the
    // kernels' loops are long streams of independent elements, where twice
    // the lanes per instruction halves the vector math's cost.
    const bool avx512 = features.find("+avx512f") != std::string_view::npos;
    return avx512 ? "512" : "";
}

Status addModule(CpuJit& jit, std::unique_ptr<llvm::LLVMContext> context,
                 std::unique_ptr<llvm::Module> module) {
    CpuJit::Impl& impl = jit.impl();
    if (Status verified = verifyGenerated(*module, "LLVM"); !verified.isOk()) {
        module.reset();  // before its context (argument destruction order is unspecified)
        return verified;
    }
    for (llvm::Function& function : *module) {
        if (function.isDeclaration()) continue;
        function.addFnAttr("target-cpu", impl.cpu);
        if (!impl.features.empty()) function.addFnAttr("target-features", impl.features);
        if (!impl.preferVectorWidth.empty())
            function.addFnAttr("prefer-vector-width", impl.preferVectorWidth);
    }
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    tuning.LoopUnrolling = true;
    optimiseModule(*module, impl.targetMachine.get(), tuning);
    dumpIfRequested(*module);
    llvm::orc::ThreadSafeModule safe(std::move(module), std::move(context));
    return toStatus(impl.jit->addIRModule(std::move(safe)), "adding a module to the CPU JIT");
}

}  // namespace llvm_codegen

CpuJit::CpuJit(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
CpuJit::~CpuJit() = default;

StatusOr<std::unique_ptr<CpuJit>> CpuJit::create() {
    static std::once_flag once;
    static bool initialised = false;
    std::call_once(once, [] {
        initialised = !llvm::InitializeNativeTarget() && !llvm::InitializeNativeTargetAsmPrinter();
    });
    if (!initialised) return internalError("LLVM has no native target for this host");

    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder) return llvm_codegen::toStatus(builder.takeError(), "detecting the host CPU");
    builder->setCPU(llvm::sys::getHostCPUName().str());
    llvm::SubtargetFeatures features;
    for (const auto& feature : llvm::sys::getHostCPUFeatures())
        features.AddFeature(feature.getKey(), feature.getValue());
    builder->getFeatures() = features;
    builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);

    auto impl = std::make_unique<Impl>();
    impl->triple = builder->getTargetTriple().str();
    impl->cpu = builder->getCPU();
    impl->features = builder->getFeatures().getString();
    impl->preferVectorWidth = llvm_codegen::preferredVectorWidth(impl->features);
    auto targetMachine = builder->createTargetMachine();
    if (!targetMachine)
        return llvm_codegen::toStatus(targetMachine.takeError(), "creating the host target machine");
    impl->targetMachine = std::move(*targetMachine);

    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
    if (!jit) return llvm_codegen::toStatus(jit.takeError(), "creating the CPU JIT");
    impl->jit = std::move(*jit);
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        impl->jit->getDataLayout().getGlobalPrefix());
    if (!process)
        return llvm_codegen::toStatus(process.takeError(), "resolving the process's symbols");
    impl->jit->getMainJITDylib().addGenerator(std::move(*process));
    return std::unique_ptr<CpuJit>(new CpuJit(std::move(impl)));
}

StatusOr<void*> CpuJit::lookup(const std::string& name) {
    auto address = m_impl->jit->lookup(name);
    if (!address) {
        std::string message = llvm::toString(address.takeError());
        return notFound("CPU JIT: no function '" + name + "': " + message);
    }
    return address->toPtr<void*>();
}

std::string CpuJit::targetTriple() const { return m_impl->triple; }
std::string CpuJit::cpuName() const { return m_impl->cpu; }
std::string CpuJit::cpuFeatures() const { return m_impl->features; }

}  // namespace hloscope
