#include "compiler/backends/tpu/tpu_device.h"

#include <functional>
#include <list>
#include <mutex>
#include <utility>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/tpu/tpu_precision.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/hlo_printer.h"

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
