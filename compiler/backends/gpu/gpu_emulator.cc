#include "compiler/backends/gpu/gpu_emulator.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <ucontext.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "compiler/backends/llvm/llvm_jit.h"
#include "compiler/backends/llvm/llvm_jit_internal.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HLOSCOPE_EMULATOR_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(HLOSCOPE_EMULATOR_ASAN)
#define HLOSCOPE_EMULATOR_ASAN 1
#endif
#ifdef HLOSCOPE_EMULATOR_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace hloscope {
namespace {

// What the kernels call instead of NVPTX intrinsics, through a table the module reads from
// the global @hloscope_emu_runtime (the JIT'd code resolves no symbol of the test binary).
enum Runtime : int { kSpecialRegister, kBarrier, kShuffle, kRuntimeEntries };

using EmulatedKernel = void (*)(void**);

struct HostKernel {
    EmulatedKernel entry = nullptr;
    // Calls bar.sync or a warp shuffle: its threads must run together. Otherwise they are
    // independent (as a GPU may run them in any order) and run one after another.
    bool synchronizes = false;
};

// A launch's threads. Kernels that synchronise (bar.sync, warp shuffles) run a block's
// threads as fibers on this thread: each runs until it waits at a barrier or a shuffle or
// returns, and the scheduler releases a barrier when every thread of the block that has not
// returned waits at it (as bar.sync counts them), a shuffle when every such lane of the warp
// does. Threads that wait at different points can never be released: an error, not a hang.
struct Fiber {
    ucontext_t context{};
    std::unique_ptr<char[]> stack;
    enum State { kReady, kAtBarrier, kAtShuffle, kDone } state = kReady;
    int32_t kind = 0, value = 0, delta = 0, clamp = 0, result = 0;
#ifdef HLOSCOPE_EMULATOR_ASAN
    void* fakeStack = nullptr;
#endif
};

struct Launch {
    std::array<uint32_t, 3> grid{}, block{};
    int threads = 0;
    EmulatedKernel kernel = nullptr;
    void** args = nullptr;
    ucontext_t scheduler{};
    std::vector<Fiber> fibers;
    int current = 0;
#ifdef HLOSCOPE_EMULATOR_ASAN
    const void* schedulerBottom = nullptr;
    size_t schedulerSize = 0;
#endif
};

constexpr size_t kFiberStack = 256 * 1024;

thread_local Launch* t_launch = nullptr;
thread_local int t_thread = 0;                   // linear thread index in the block
thread_local std::array<uint32_t, 3> t_tid{};    // tid.x/y/z
thread_local std::array<uint32_t, 3> t_ctaid{};  // ctaid.x/y/z

void setThread(const Launch& launch, int t) {
    const uint32_t bx = launch.block[0], by = launch.block[1];
    t_thread = t;
    t_tid = {static_cast<uint32_t>(t) % bx, (static_cast<uint32_t>(t) / bx) % by,
             static_cast<uint32_t>(t) / (bx * by)};
}

// 0-2 tid, 3-5 ntid, 6-8 ctaid, 9-11 nctaid (x, y, z).
int32_t specialRegister(int32_t which) {
    const Launch& launch = *t_launch;
    const int axis = which % 3;
    switch (which / 3) {
        case 0:
            return static_cast<int32_t>(t_tid[static_cast<size_t>(axis)]);
        case 1:
            return static_cast<int32_t>(launch.block[static_cast<size_t>(axis)]);
        case 2:
            return static_cast<int32_t>(t_ctaid[static_cast<size_t>(axis)]);
        default:
            return static_cast<int32_t>(launch.grid[static_cast<size_t>(axis)]);
    }
}

// From the running fiber back to the scheduler (for good when it has returned).
void toScheduler(Fiber& fiber) {
    Launch& launch = *t_launch;
#ifdef HLOSCOPE_EMULATOR_ASAN
    __sanitizer_start_switch_fiber(fiber.state == Fiber::kDone ? nullptr : &fiber.fakeStack,
                                   launch.schedulerBottom, launch.schedulerSize);
#endif
    swapcontext(&fiber.context, &launch.scheduler);
#ifdef HLOSCOPE_EMULATOR_ASAN
    __sanitizer_finish_switch_fiber(fiber.fakeStack, &launch.schedulerBottom,
                                    &launch.schedulerSize);
#endif
}

void fiberEntry() {
    Launch& launch = *t_launch;
#ifdef HLOSCOPE_EMULATOR_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &launch.schedulerBottom, &launch.schedulerSize);
#endif
    launch.kernel(launch.args);
    Fiber& fiber = launch.fibers[static_cast<size_t>(launch.current)];
    fiber.state = Fiber::kDone;
    toScheduler(fiber);
}

void barrier() {
    Fiber& fiber = t_launch->fibers[static_cast<size_t>(t_launch->current)];
    fiber.state = Fiber::kAtBarrier;
    toScheduler(fiber);
}

// shfl.sync.down / .bfly (kind 0 / 1) of a 32-bit value.
int32_t shuffle(int32_t kind, int32_t value, int32_t delta, int32_t clamp) {
    Fiber& fiber = t_launch->fibers[static_cast<size_t>(t_launch->current)];
    fiber.kind = kind;
    fiber.value = value;
    fiber.delta = delta;
    fiber.clamp = clamp;
    fiber.state = Fiber::kAtShuffle;
    toScheduler(fiber);
    return fiber.result;
}

// The lanes of warp `w` exchange (PTX's rule: lane j = lane + delta or lane ^ delta, the
// lane's own value where j passes the clamp).
void exchange(Launch& launch, int w) {
    const int first = w * 32;
    const int lanes = std::min(32, launch.threads - first);
    for (int lane = 0; lane < lanes; ++lane) {
        Fiber& fiber = launch.fibers[static_cast<size_t>(first + lane)];
        const int segment = (fiber.clamp >> 8) & 0x1f;
        const int maxLane = (lane & segment) | ((fiber.clamp & 0x1f) & ~segment);
        const int source = fiber.kind == 0 ? lane + fiber.delta : lane ^ fiber.delta;
        fiber.result = source > maxLane || source >= lanes
                           ? fiber.value
                           : launch.fibers[static_cast<size_t>(first + source)].value;
    }
    for (int lane = 0; lane < lanes; ++lane)
        launch.fibers[static_cast<size_t>(first + lane)].state = Fiber::kReady;
}

// One block of a synchronising kernel, its threads as fibers.
Status runBlock(Launch& launch) {
    for (int t = 0; t < launch.threads; ++t) {
        Fiber& fiber = launch.fibers[static_cast<size_t>(t)];
        fiber.state = Fiber::kReady;
        getcontext(&fiber.context);
        fiber.context.uc_stack.ss_sp = fiber.stack.get();
        fiber.context.uc_stack.ss_size = kFiberStack;
        fiber.context.uc_link = nullptr;
        makecontext(&fiber.context, fiberEntry, 0);
    }
    for (;;) {
        bool ran = false;
        for (int t = 0; t < launch.threads; ++t) {
            Fiber& fiber = launch.fibers[static_cast<size_t>(t)];
            if (fiber.state != Fiber::kReady) continue;
            launch.current = t;
            setThread(launch, t);
#ifdef HLOSCOPE_EMULATOR_ASAN
            void* fake = nullptr;
            __sanitizer_start_switch_fiber(&fake, fiber.stack.get(), kFiberStack);
#endif
            swapcontext(&launch.scheduler, &fiber.context);
#ifdef HLOSCOPE_EMULATOR_ASAN
            __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
            ran = true;
        }
        int live = 0, atBarrier = 0;
        for (const Fiber& fiber : launch.fibers) {
            live += fiber.state != Fiber::kDone;
            atBarrier += fiber.state == Fiber::kAtBarrier;
        }
        if (live == 0) return Status::ok();
        bool released = false;
        for (int w = 0; w * 32 < launch.threads; ++w) {
            int waiting = 0, running = 0;
            for (int t = w * 32; t < std::min(launch.threads, w * 32 + 32); ++t) {
                const Fiber::State state = launch.fibers[static_cast<size_t>(t)].state;
                waiting += state == Fiber::kAtShuffle;
                running += state != Fiber::kDone && state != Fiber::kAtShuffle;
            }
            if (waiting > 0 && running == 0) {
                exchange(launch, w);
                released = true;
            }
        }
        if (!released && atBarrier == live) {
            for (Fiber& fiber : launch.fibers)
                if (fiber.state == Fiber::kAtBarrier) fiber.state = Fiber::kReady;
            released = true;
        }
        if (!released && !ran)
            return internalError(
                "GPU emulation: the threads of a block wait at different "
                "barriers or shuffles");
    }
}

int specialRegisterIndex(llvm::StringRef name) {
    static const char* const kNames[] = {"tid.x",   "tid.y",    "tid.z",    "ntid.x",
                                         "ntid.y",  "ntid.z",   "ctaid.x",  "ctaid.y",
                                         "ctaid.z", "nctaid.x", "nctaid.y", "nctaid.z"};
    for (int i = 0; i < 12; ++i)
        if (name == kNames[i]) return i;
    return -1;
}

// The plan's IR for the host: intrinsics through the runtime table, kernels with the C calling
// convention, and for each kernel a wrapper `<name>.emu(ptr args)` taking its pointers from an
// array.
Status prepareModule(llvm::Module& module, std::map<std::string, bool>& kernels) {
    llvm::LLVMContext& context = module.getContext();
    llvm::Type* i32 = llvm::Type::getInt32Ty(context);
    llvm::Type* ptr = llvm::PointerType::get(context, 0);
    auto* runtime = new llvm::GlobalVariable(
        module, ptr, false, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantPointerNull::get(llvm::PointerType::get(context, 0)), "hloscope_emu_runtime");
    auto* sregType = llvm::FunctionType::get(i32, {i32}, false);
    auto* barrierType = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
    auto* shuffleType = llvm::FunctionType::get(i32, {i32, i32, i32, i32}, false);
    std::vector<llvm::CallInst*> calls;
    for (llvm::Function& function : module)
        for (llvm::BasicBlock& block : function)
            for (llvm::Instruction& instruction : block)
                if (auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction))
                    if (llvm::Function* callee = call->getCalledFunction();
                        callee && callee->getName().starts_with("llvm.nvvm."))
                        calls.push_back(call);
    std::set<const llvm::Function*> synchronizing;
    for (llvm::CallInst* call : calls) {
        const llvm::StringRef name = call->getCalledFunction()->getName();
        if (!name.starts_with("llvm.nvvm.read.ptx.sreg."))
            synchronizing.insert(call->getFunction());
        llvm::IRBuilder<> b(call);
        auto entry = [&](int index) {
            llvm::Value* table = b.CreateLoad(ptr, runtime);
            return b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, table, index));
        };
        llvm::Value* replacement = nullptr;
        if (name.starts_with("llvm.nvvm.read.ptx.sreg.")) {
            const int which = specialRegisterIndex(name.drop_front(24));
            if (which < 0) return unimplemented("the GPU emulator lacks " + name.str());
            replacement = b.CreateCall(sregType, entry(kSpecialRegister), {b.getInt32(which)});
        } else if (name == "llvm.nvvm.barrier0") {
            b.CreateCall(barrierType, entry(kBarrier));
        } else if (name == "llvm.nvvm.shfl.sync.down.i32" ||
                   name == "llvm.nvvm.shfl.sync.bfly.i32") {
            replacement = b.CreateCall(
                shuffleType, entry(kShuffle),
                {b.getInt32(name.ends_with("bfly.i32") ? 1 : 0), call->getArgOperand(1),
                 call->getArgOperand(2), call->getArgOperand(3)});
        } else {
            return unimplemented("the GPU emulator lacks " + name.str());
        }
        if (replacement) call->replaceAllUsesWith(replacement);
        call->eraseFromParent();
    }
    std::vector<llvm::Function*> entries;
    for (llvm::Function& function : module)
        if (!function.isDeclaration() && function.getCallingConv() == llvm::CallingConv::PTX_Kernel)
            entries.push_back(&function);
    // A barrier or shuffle in a function that is not a kernel: every kernel counts as
    // synchronising.
    bool inHelper = false;
    for (const llvm::Function* f : synchronizing)
        inHelper = inHelper || std::find(entries.begin(), entries.end(), f) == entries.end();
    for (llvm::Function* function : entries) {
        function->setCallingConv(llvm::CallingConv::C);
        auto* wrapper = llvm::Function::Create(
            llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr}, false),
            llvm::GlobalValue::ExternalLinkage, function->getName() + ".emu", module);
        llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", wrapper));
        std::vector<llvm::Value*> args;
        for (llvm::Argument& parameter : function->args()) {
            llvm::Value* pointer =
                b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, wrapper->getArg(0), args.size()));
            args.push_back(b.CreateAddrSpaceCast(pointer, parameter.getType()));
        }
        b.CreateCall(function, args);
        b.CreateRetVoid();
        kernels[function->getName().str()] = inHelper || synchronizing.count(function) > 0;
    }
    return Status::ok();
}

// A launch: the blocks in order; a kernel that does not synchronise its threads runs them
// one after another (as a GPU may run them in any order), one that does as fibers.
Status launchKernel(const HostKernel& host, void** args, const GpuLaunchDims& dims) {
    Launch launch;
    for (size_t i = 0; i < 3; ++i) {
        launch.grid[i] = static_cast<uint32_t>(dims.grid[i]);
        launch.block[i] = static_cast<uint32_t>(dims.block[i]);
    }
    launch.threads = static_cast<int>(launch.block[0] * launch.block[1] * launch.block[2]);
    launch.kernel = host.entry;
    launch.args = args;
    if (host.synchronizes) {
        launch.fibers.resize(static_cast<size_t>(launch.threads));
        for (Fiber& fiber : launch.fibers) fiber.stack.reset(new char[kFiberStack]);
    }
    t_launch = &launch;
    Status status = Status::ok();
    for (uint32_t z = 0; z < launch.grid[2] && status.isOk(); ++z)
        for (uint32_t y = 0; y < launch.grid[1] && status.isOk(); ++y)
            for (uint32_t x = 0; x < launch.grid[0] && status.isOk(); ++x) {
                t_ctaid = {x, y, z};
                if (host.synchronizes) {
                    status = runBlock(launch);
                    continue;
                }
                for (int t = 0; t < launch.threads; ++t) {
                    setThread(launch, t);
                    host.entry(args);
                }
            }
    t_launch = nullptr;
    return status;
}

void collectLeaves(const Literal& literal, std::vector<const Literal*>& out) {
    if (literal.isTuple()) {
        for (const Literal& element : literal.tupleElements()) collectLeaves(element, out);
    } else {
        out.push_back(&literal);
    }
}

// One run of a plan on the host: its kernels compiled by the JIT, the devices' arenas (device
// d's at d * arenaBytes), and the steps with the runner's control flow.
class Emulation {
public:
    Emulation(const GpuPlan& plan, CpuJit& jit)
        : m_plan(plan),
          m_jit(jit),
          m_devices(plan.devices()),
          m_arena(static_cast<size_t>(plan.arenaBytes * m_devices) + kGpuBufferAlignment, 0),
          m_loopJumps(plan.steps.size(), 0) {
        m_base = m_arena.data();
        const auto misalignment = reinterpret_cast<uintptr_t>(m_base) % kGpuBufferAlignment;
        m_base += (kGpuBufferAlignment - misalignment) % kGpuBufferAlignment;
    }

    // The plan's host IR compiled, its kernels looked up.
    Status compileKernels() {
        if (m_plan.hostIr.empty()) return Status::ok();
        auto context = std::make_unique<llvm::LLVMContext>();
        llvm::SMDiagnostic diagnostic;
        std::unique_ptr<llvm::Module> module =
            llvm::parseAssemblyString(m_plan.hostIr, diagnostic, *context);
        if (!module)
            return internalError("GPU emulation: the plan's IR does not parse: " +
                                 diagnostic.getMessage().str());
        llvm_codegen::configureModule(m_jit, *module);
        std::map<std::string, bool> names;
        HLO_RETURN_IF_ERROR(prepareModule(*module, names));
        HLO_RETURN_IF_ERROR(llvm_codegen::addModule(m_jit, std::move(context), std::move(module)));
        HLO_ASSIGN_OR_RETURN(void* runtime, m_jit.lookup("hloscope_emu_runtime"));
        static void* const kTable[kRuntimeEntries] = {reinterpret_cast<void*>(&specialRegister),
                                                      reinterpret_cast<void*>(&barrier),
                                                      reinterpret_cast<void*>(&shuffle)};
        *static_cast<void* const**>(runtime) = kTable;
        for (const auto& [name, synchronizes] : names) {
            HLO_ASSIGN_OR_RETURN(void* address, m_jit.lookup(name + ".emu"));
            m_kernels[name] = HostKernel{reinterpret_cast<EmulatedKernel>(address), synchronizes};
        }
        return Status::ok();
    }

    // The inputs from each device's arguments, and the constants on every device.
    Status loadInputs(const std::vector<std::vector<Literal>>& deviceArgs) {
        for (const GpuPlanInput& input : m_plan.inputs) {
            if (input.device < 0 || input.device >= m_devices)
                return invalidArgument("GPU emulation: input " + input.name + " names device " +
                                       std::to_string(input.device));
            const std::vector<Literal>& args = deviceArgs[static_cast<size_t>(input.device)];
            if (input.parameter < 0 || input.parameter >= static_cast<int64_t>(args.size()))
                return invalidArgument("GPU emulation: no argument for parameter " +
                                       std::to_string(input.parameter));
            std::vector<const Literal*> leaves;
            collectLeaves(args[static_cast<size_t>(input.parameter)], leaves);
            const size_t leaf = input.leaf < 0 ? 0 : static_cast<size_t>(input.leaf);
            if (leaf >= leaves.size())
                return invalidArgument("GPU emulation: parameter " +
                                       std::to_string(input.parameter) + " has no leaf " +
                                       std::to_string(leaf));
            if (input.array.bytes > 0)
                std::memcpy(address(input.array.buffer, input.device), leaves[leaf]->untypedData(),
                            static_cast<size_t>(input.array.bytes));
        }
        for (const GpuPlanConstant& constant : m_plan.constants) {
            const int64_t bytes = m_plan.buffers.at(static_cast<size_t>(constant.buffer)).bytes;
            for (int64_t device = 0; device < m_devices && bytes > 0; ++device)
                std::memcpy(address(constant.buffer, device), constant.value.untypedData(),
                            static_cast<size_t>(bytes));
        }
        return Status::ok();
    }

    // A dispatch over the step kinds, in the runner's order.
    Status runSteps() {
        for (size_t i = 0; i < m_plan.steps.size();) {
            const GpuPlanStep& step = m_plan.steps[i];
            size_t next = i + 1;
            switch (step.kind) {
                case GpuStepKind::kKernel:
                    HLO_RETURN_IF_ERROR(launch(step));
                    break;
                case GpuStepKind::kGemm:
                    if (step.fallback.empty())
                        return internalError("GPU emulation: gemm step " + step.name +
                                             " has no fallback kernel");
                    HLO_RETURN_IF_ERROR(launch(step.fallback.front()));
                    break;
                case GpuStepKind::kCopy:
                    std::memmove(
                        address(step.dst, step.device),
                        address(step.src, step.srcDevice >= 0 ? step.srcDevice : step.device),
                        static_cast<size_t>(step.bytes));
                    break;
                case GpuStepKind::kMemset:
                    std::memset(address(step.dst, step.device), step.value,
                                static_cast<size_t>(step.bytes));
                    break;
                case GpuStepKind::kBranch: {
                    HLO_ASSIGN_OR_RETURN(const int64_t predicate, predicateOf(step, 1));
                    if (predicate == 0) {
                        next = static_cast<size_t>(step.target);
                        if (step.target > 0) m_loopJumps[static_cast<size_t>(step.target - 1)] = 0;
                    }
                    break;
                }
                case GpuStepKind::kSwitch: {
                    HLO_ASSIGN_OR_RETURN(const size_t branch, switchBranch(step));
                    next = static_cast<size_t>(step.targets.at(branch));
                    break;
                }
                case GpuStepKind::kJump:
                    if (static_cast<size_t>(step.target) <= i && m_loopJumps[i]++ >= step.limit)
                        return Status(StatusCode::kResourceExhausted,
                                      "GPU emulation: " + step.name +
                                          ": the loop did not end after " +
                                          std::to_string(step.limit) + " iterations");
                    next = static_cast<size_t>(step.target);
                    break;
            }
            i = next;
        }
        return Status::ok();
    }

    // Each device's outputs, in plan order.
    StatusOr<std::vector<std::vector<Literal>>> readOutputs() {
        std::vector<std::vector<Literal>> outputs(static_cast<size_t>(m_devices));
        for (const GpuPlanArray& output : m_plan.outputs) {
            if (output.device < 0 || output.device >= m_devices)
                return invalidArgument("GPU emulation: an output names device " +
                                       std::to_string(output.device));
            auto storage =
                std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(output.bytes));
            if (output.bytes > 0)
                std::memcpy(storage->data(), address(output.buffer, output.device),
                            static_cast<size_t>(output.bytes));
            outputs[static_cast<size_t>(output.device)].push_back(
                Literal::fromStorage(Shape(output.type, output.dims), std::move(storage)));
        }
        return outputs;
    }

private:
    uint8_t* address(int buffer, int64_t device) {
        return m_base + device * m_plan.arenaBytes +
               m_plan.buffers.at(static_cast<size_t>(buffer)).offset;
    }
    // A branch's or switch's predicate, the same on every device.
    StatusOr<int64_t> predicateOf(const GpuPlanStep& step, size_t bytes) {
        int64_t value = 0;
        for (int64_t device = 0; device < m_devices; ++device) {
            int64_t own = 0;
            std::memcpy(&own, address(step.predicate, device), bytes);
            if (device > 0 && own != value)
                return Status(StatusCode::kFailedPrecondition,
                              "GPU emulation: " + step.name + ": device " +
                                  std::to_string(device) + " decides otherwise than device 0 (" +
                                  std::to_string(own) + " against " + std::to_string(value) + ")");
            value = own;
        }
        return value;
    }
    // The branch a switch step takes: its index, the last branch when out of range.
    StatusOr<size_t> switchBranch(const GpuPlanStep& step) {
        const size_t branches = step.targets.size();
        size_t branch = branches - 1;
        if (step.indexType == "pred") {
            HLO_ASSIGN_OR_RETURN(const int64_t predicate, predicateOf(step, 1));
            branch = predicate != 0 ? 0 : 1;
        } else {
            HLO_ASSIGN_OR_RETURN(const int64_t word, predicateOf(step, sizeof(int32_t)));
            const auto index = static_cast<int32_t>(static_cast<uint32_t>(word));
            if (index >= 0 && static_cast<size_t>(index) < branches)
                branch = static_cast<size_t>(index);
        }
        return branch;
    }
    Status launch(const GpuPlanStep& step) {
        auto it = m_kernels.find(step.entry);
        if (it == m_kernels.end())
            return internalError("GPU emulation: no kernel " + step.entry + " for " + step.name);
        std::vector<void*> pointers;
        for (size_t a = 0; a < step.args.size(); ++a)
            pointers.push_back(address(
                step.args[a], a < step.argDevices.size() ? step.argDevices[a] : step.device));
        return launchKernel(it->second, pointers.data(), step.launch);
    }

    const GpuPlan& m_plan;
    CpuJit& m_jit;
    const int64_t m_devices;
    std::vector<uint8_t> m_arena;
    uint8_t* m_base = nullptr;
    std::map<std::string, HostKernel> m_kernels;
    std::vector<int64_t> m_loopJumps;  // per jump step: the iterations of its loop so far
};

}  // namespace

StatusOr<std::vector<Literal>> emulateGpuPlan(const GpuPlan& plan,
                                              const std::vector<Literal>& args) {
    if (plan.devices() != 1)
        return invalidArgument("GPU emulation: the plan runs on " + std::to_string(plan.devices()) +
                               " devices; give each its arguments");
    HLO_ASSIGN_OR_RETURN(auto outputs, emulateGpuPlanOnDevices(plan, {args}));
    return std::move(outputs.front());
}

StatusOr<std::vector<std::vector<Literal>>> emulateGpuPlanOnDevices(
    const GpuPlan& plan, const std::vector<std::vector<Literal>>& deviceArgs) {
    const int64_t devices = plan.devices();
    if (static_cast<int64_t>(deviceArgs.size()) != devices)
        return invalidArgument("GPU emulation: the plan runs on " + std::to_string(devices) +
                               " devices, arguments were given for " +
                               std::to_string(deviceArgs.size()));
    if (plan.hostIr.empty() && plan.kernels > 0)
        return invalidArgument(
            "GPU emulation needs the plan's LLVM IR (GpuPlanOptions::keepHostIr)");
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<CpuJit> jit, CpuJit::create());
    Emulation emulation(plan, *jit);
    HLO_RETURN_IF_ERROR(emulation.compileKernels());
    HLO_RETURN_IF_ERROR(emulation.loadInputs(deviceArgs));
    HLO_RETURN_IF_ERROR(emulation.runSteps());
    return emulation.readOutputs();
}

}  // namespace hloscope
