#include "compiler/backends/tpu/tpu_device.h"

#include <algorithm>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/tpu/tpu_precision.h"
#include "compiler/passes/pass_util.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/text/hlo_printer.h"

namespace hloscope {

namespace {

constexpr size_t kCacheSize = 8;

ExecutionResult simulatedResult(const TpuSimulation& simulation) {
    ExecutionResult result;
    result.simulated = true;
    result.wallSeconds = simulation.totalSeconds;
    for (const TpuKernelTiming& kernel : simulation.kernels) {
        MeasuredTime time;
        time.name = kernel.name;
        time.opcode = kernel.opcode;
        time.count = kernel.executions;
        time.seconds = kernel.seconds * static_cast<double>(kernel.executions);
        result.instructionTimes.push_back(time);
        result.kernelTimes.push_back(std::move(time));
    }
    result.timeline.reserve(simulation.events.size());
    for (const TpuTraceEvent& event : simulation.events)
        result.timeline.push_back(
            {event.track, event.name, event.kernel, event.startSeconds, event.durationSeconds});
    return result;
}

// Why the CPU backend could not run `fusion` of the TPU-numerics module as
// one kernel (see tpu_device.h), or "" when it can.
std::string_view cpuCannotCompile(const HloInstruction& fusion) {
    const HloComputation* fused = fusion.fusedComputation();
    if (!fused) return {};
    int64_t products = 0;
    bool operandsComputed = false;
    for (const auto& instruction : fused->instructions()) {
        if (instruction->opcode() != HloOpcode::kDot &&
            instruction->opcode() != HloOpcode::kConvolution)
            continue;
        ++products;
        for (const HloInstruction* operand : instruction->operands())
            operandsComputed = operandsComputed || operand->opcode() != HloOpcode::kParameter;
    }
    if (products > 1 || operandsComputed ||
        (products == 1 && (fused->root()->opcode() == HloOpcode::kDot ||
                           fused->root()->opcode() == HloOpcode::kConvolution)))
        return "a fused dot or convolution that is no GEMM with an epilogue (the MXU passes)";
    const HloInstruction* root = fused->root();
    if (root->opcode() == HloOpcode::kTuple)
        for (const HloInstruction* element : root->operands())
            if (!element->shape().isArray() ||
                element->shape().dimensions() != root->operand(0)->shape().dimensions())
                return "multi-output fusion with outputs of different shapes";
    return {};
}

// Inlines, in every computation of `module`, the fusions cpuCannotCompile
// names: their instructions take the fusion's place in the instruction order
// (the schedule of a scheduled module). Returns how many were inlined.
StatusOr<int64_t> unfuseForCpu(HloModule& module) {
    const std::vector<HloComputation*> unreachableBefore = passes::unreachableComputations(module);
    int64_t inlined = 0;
    for (HloComputation* computation : passes::calleesFirst(module)) {
        if (computation->fusionInstruction()) continue;  // a fused computation: no fusions inside
        std::vector<HloInstruction*> fusions;
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kFusion &&
                !cpuCannotCompile(*instruction).empty())
                fusions.push_back(instruction.get());
        if (fusions.empty()) continue;
        std::unordered_map<const HloInstruction*, std::vector<HloInstruction*>> clonesOf;
        for (HloInstruction* fusion : fusions) {
            const HloComputation* fused = fusion->fusedComputation();
            const auto clones = passes::cloneBodyInto(module, *computation, *fused,
                                                      fusion->operands(), &clonesOf[fusion]);
            HloInstruction* result = clones.at(fused->root());
            fusion->replaceAllUsesWith(result);
            if (computation->root() == fusion) computation->setRoot(result);
        }
        // The clones were appended: move them to their fusion's place.
        std::unordered_set<const HloInstruction*> cloned;
        for (const auto& [fusion, added] : clonesOf) cloned.insert(added.begin(), added.end());
        std::vector<HloInstruction*> order;
        for (const auto& instruction : computation->instructions()) {
            if (auto it = clonesOf.find(instruction.get()); it != clonesOf.end())
                order.insert(order.end(), it->second.begin(), it->second.end());
            if (!cloned.count(instruction.get())) order.push_back(instruction.get());
        }
        HLO_RETURN_IF_ERROR(computation->setInstructionOrder(order));
        HLO_RETURN_IF_ERROR(computation->removeInstructions(fusions));
        inlined += static_cast<int64_t>(fusions.size());
    }
    if (inlined == 0) return inlined;
    std::vector<HloComputation*> dead;
    for (HloComputation* computation : passes::unreachableComputations(module))
        if (std::find(unreachableBefore.begin(), unreachableBefore.end(), computation) ==
            unreachableBefore.end())
            dead.push_back(computation);
    HLO_RETURN_IF_ERROR(passes::removeComputations(module, dead));
    passes::repointFusionComputations(module);
    return inlined;
}

}  // namespace

struct TpuDevice::Impl {
    // What run() needs of one module, computed once per module text.
    struct Prepared {
        TpuSimulation simulation;
        std::shared_ptr<const HloModule> cpuModule;  // TPU numerics, laid out for the CPU
    };

    CpuDevice cpu;
    StatusOr<TargetDescription> target = Status(StatusCode::kInternal, "no target");
    std::mutex cacheMutex;
    // Most recently used first.
    struct Entry {
        size_t fingerprint;
        std::string text;
        std::shared_ptr<const Prepared> prepared;
    };
    std::list<Entry> cache;

    StatusOr<std::shared_ptr<const Prepared>> prepare(const HloModule& module);
    StatusOr<TpuSimulation> simulate(const HloModule& module) const;
};

StatusOr<TpuSimulation> TpuDevice::Impl::simulate(const HloModule& module) const {
    if (!target.isOk()) return target.status();
    return simulateTpu(module, *target);
}

StatusOr<std::shared_ptr<const TpuDevice::Impl::Prepared>> TpuDevice::Impl::prepare(
    const HloModule& module) {
    std::string text = printModule(module);
    const size_t fingerprint = std::hash<std::string>{}(text);
    {
        std::lock_guard<std::mutex> lock(cacheMutex);
        for (auto it = cache.begin(); it != cache.end(); ++it)
            if (it->fingerprint == fingerprint && it->text == text) {
                cache.splice(cache.begin(), cache, it);
                return cache.front().prepared;
            }
    }
    auto prepared = std::make_shared<Prepared>();
    auto simulation = simulate(module);
    if (!simulation.isOk()) return simulation.status().withContext("TPU simulator");
    prepared->simulation = std::move(*simulation);
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> emulated, emulateTpuNumerics(module));
    auto unfused = unfuseForCpu(*emulated);
    if (!unfused.isOk())
        return unfused.status().withContext("unfusing the TPU-numerics module for the CPU backend");
    // Layouts for the CPU (the tpu pipeline's tiles are no CPU layouts), no
    // new fusions: the values are those of the emulated module.
    auto cpuModule = prepareForMode(std::move(emulated), "cpu", ExecutionMode::kUnfused);
    if (!cpuModule.isOk())
        return cpuModule.status().withContext("the TPU-numerics module for the CPU backend");
    prepared->cpuModule = std::move(*cpuModule);
    std::lock_guard<std::mutex> lock(cacheMutex);
    cache.push_front(Entry{fingerprint, std::move(text), prepared});
    while (cache.size() > kCacheSize) cache.pop_back();
    return std::shared_ptr<const Prepared>(prepared);
}

std::string_view tpuGenerationName(TpuGeneration generation) {
    return generation == TpuGeneration::kV5e ? "v5e" : "v4";
}

std::string tpuTargetName(TpuGeneration generation) {
    return "tpu_" + std::string(tpuGenerationName(generation));
}

std::optional<TpuGeneration> parseTpuGeneration(std::string_view text) {
    if (text == "v4" || text == "tpu_v4") return TpuGeneration::kV4;
    if (text == "v5e" || text == "tpu_v5e") return TpuGeneration::kV5e;
    return std::nullopt;
}

TpuDevice::TpuDevice(TpuGeneration generation)
    : m_generation(generation), m_impl(std::make_unique<Impl>()) {
    m_impl->target = builtinTargetDescription(tpuTargetName(generation));
}

TpuDevice::~TpuDevice() = default;

std::string TpuDevice::description() const {
    return "Simulated TPU " + std::string(tpuGenerationName(m_generation)) +
           ": times from the timeline simulator (" + tpuTargetName(m_generation) +
           "), outputs with TPU numerics (bf16 MXU passes) on the CPU backend";
}

bool TpuDevice::available(std::string* whyNot) const {
    if (!m_impl->target.isOk()) {
        if (whyNot) *whyNot = m_impl->target.status().message();
        return false;
    }
    std::string why;
    if (!m_impl->cpu.available(&why)) {
        if (whyNot) *whyNot = "the CPU backend computes its outputs and is unavailable: " + why;
        return false;
    }
    if (whyNot) whyNot->clear();
    return true;
}

StatusOr<TpuSimulation> TpuDevice::simulation(const HloModule& module) const {
    HLO_ASSIGN_OR_RETURN(std::shared_ptr<const Impl::Prepared> prepared, m_impl->prepare(module));
    return prepared->simulation;
}

StatusOr<std::shared_ptr<const HloModule>> TpuDevice::cpuModule(const HloModule& module) const {
    HLO_ASSIGN_OR_RETURN(std::shared_ptr<const Impl::Prepared> prepared, m_impl->prepare(module));
    return prepared->cpuModule;
}

StatusOr<ExecutionResult> TpuDevice::run(const HloModule& module, const std::vector<Literal>& args,
                                         const ExecutionOptions& options) const {
    std::string why;
    if (!available(&why))
        return Status(StatusCode::kFailedPrecondition, "the simulated TPU is unavailable: " + why);
    if (options.cancel && options.cancel->load())
        return Status(StatusCode::kCancelled, "run cancelled");
    if (options.progress) options.progress(0, "simulating");
    HLO_ASSIGN_OR_RETURN(std::shared_ptr<const Impl::Prepared> prepared, m_impl->prepare(module));
    auto outputs = m_impl->cpu.run(*prepared->cpuModule, args, options);
    if (!outputs.isOk()) return outputs.status().withContext("TPU numerics on the CPU backend");
    ExecutionResult result = simulatedResult(prepared->simulation);
    result.outputs = std::move(outputs->outputs);
    result.fallbacks = std::move(outputs->fallbacks);
    result.devices = outputs->devices;
    result.otherDeviceOutputs = std::move(outputs->otherDeviceOutputs);
    result.device = name();
    return result;
}

std::string tpuDeviceName(TpuGeneration generation) {
    return generation == TpuGeneration::kV4
               ? "tpu-sim"
               : "tpu-sim-" + std::string(tpuGenerationName(generation));
}

std::string TpuDevice::name() const { return tpuDeviceName(m_generation); }

StatusOr<std::unique_ptr<HloModule>> TpuDevice::numericsModule(const HloModule& module) const {
    return emulateTpuNumerics(module);
}

void registerTpuBackend() {
    registerDevice(std::make_shared<TpuDevice>(TpuGeneration::kV4));
    registerDevice(std::make_shared<TpuDevice>(TpuGeneration::kV5e));
}

}  // namespace hloscope
