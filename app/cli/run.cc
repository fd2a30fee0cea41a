// hloscope-cli run: the module executed on a device, unfused and fused,
// timed over repeated runs and checked against the reference interpreter.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/gpu.h"
#include "app/cli/tpu.h"
#include "app/cli/util.h"
#include "compiler/backends/tpu/tpu_device.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/estimator/estimate.h"
#include "compiler/estimator/history.h"
#include "compiler/runtime/execution_device.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/runtime/timeline_trace.h"
#include "compiler/targets/target_description.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/literal.h"
#include "core/io/module_io.h"

namespace hloscope::cli {
namespace {

using Json = nlohmann::ordered_json;

struct RunFlags {
    std::string file;
    std::string device = "cpu";
    std::string target;  // default: the device kind's pipeline
    std::string inputs = "random";
    uint64_t seed = 0;
    int repeat = 5;
    int warmup = 1;
    int threads = 0;
    bool unfused = true;
    bool fused = true;
    bool check = false;
    bool json = false;
    bool history = true;
    GpuEmitFlags gpu;   // --emit-plan, --sm, --elemental-dots
    std::string tpu;    // --tpu v4|v5e
    std::string trace;  // --trace FILE: the timelines as a Chrome trace
    bool deviceGiven = false;
};

std::string modeName(const ModeMeasurement& r) { return std::string(executionModeName(r.mode)); }

std::optional<std::string> parseFlags(const std::vector<std::string>& args, RunFlags& flags) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        auto text = [&](const char* need, std::string* out) -> std::optional<std::string> {
            const auto v = value();
            if (!v) return std::string(arg) + " needs " + need;
            *out = *v;
            return std::nullopt;
        };
        auto number = [&](const char* what, int64_t low,
                          int64_t* out) -> std::optional<std::string> {
            const auto v = value();
            if (!v) return std::string(what) + " needs a number";
            char* end = nullptr;
            const long long n = std::strtoll(v->c_str(), &end, 10);
            if (v->empty() || *end != '\0' || n < low)
                return std::string(what) + " needs a number >= " + std::to_string(low) + ", not '" +
                       *v + "'";
            *out = n;
            return std::nullopt;
        };
        int64_t n = 0;
        if (arg == "--device") {
            if (auto e = text("a name", &flags.device)) return e;
            flags.deviceGiven = true;
        } else if (arg == "--tpu") {
            if (auto e = text("v4 or v5e", &flags.tpu)) return e;
        } else if (arg == "--trace") {
            if (auto e = text("a file", &flags.trace)) return e;
        } else if (arg == "--target") {
            if (auto e = text("a target", &flags.target)) return e;
        } else if (arg == "--mode") {
            const auto v = value();
            if (!v || (*v != "fused" && *v != "unfused" && *v != "both"))
                return "--mode takes fused, unfused or both";
            flags.fused = *v != "unfused";
            flags.unfused = *v != "fused";
        } else if (arg == "--inputs") {
            if (auto e = text("random, zeros or a JSON file", &flags.inputs)) return e;
        } else if (arg == "--seed") {
            if (auto e = number("--seed", 0, &n)) return e;
            flags.seed = static_cast<uint64_t>(n);
        } else if (arg == "--repeat") {
            if (auto e = number("--repeat", 1, &n)) return e;
            flags.repeat = static_cast<int>(n);
        } else if (arg == "--warmup") {
            if (auto e = number("--warmup", 0, &n)) return e;
            flags.warmup = static_cast<int>(n);
        } else if (arg == "--threads") {
            if (auto e = number("--threads", 1, &n)) return e;
            flags.threads = static_cast<int>(n);
        } else if (arg == "--emit-plan") {
            if (auto e = text("a directory", &flags.gpu.dir)) return e;
        } else if (arg == "--sm") {
            if (auto e = text("an SM version (sm_80, sm_86, sm_89, sm_90, sm_90a)", &flags.gpu.sm))
                return e;
        } else if (arg == "--elemental-dots") {
            flags.gpu.gemmSteps = false;
        } else if (arg == "--check") {
            flags.check = true;
        } else if (arg == "--json") {
            flags.json = true;
        } else if (arg == "--no-history") {
            flags.history = false;
        } else if (arg.size() > 1 && arg[0] == '-') {
            return "unknown option '" + arg + "'";
        } else if (!flags.file.empty()) {
            return "exactly one input file expected";
        } else {
            flags.file = arg;
        }
    }
    if (flags.file.empty()) return "no input file";
    if (!flags.gpu.dir.empty() && flags.device != "gpu") return "--emit-plan needs --device gpu";
    if (!flags.tpu.empty()) {
        const std::optional<TpuGeneration> generation = parseTpuGeneration(flags.tpu);
        if (!generation) return "--tpu takes v4 or v5e, not '" + flags.tpu + "'";
        if (flags.deviceGiven && flags.device.rfind("tpu-sim", 0) != 0)
            return "--tpu needs the simulated TPU (--device tpu-sim), not '" + flags.device + "'";
        flags.device = tpuDeviceName(*generation);
    }
    return std::nullopt;
}

Json modeJson(const ModeMeasurement& r) {
    Json j;
    j["median_ms"] = r.medianSeconds() * 1e3;
    j["min_ms"] = r.minSeconds() * 1e3;
    j["max_ms"] = r.maxSeconds() * 1e3;
    j["compile_ms"] = r.compileSeconds * 1e3;
    j["pipeline_ms"] = r.pipelineSeconds * 1e3;
    j["kernels"] = r.kernels;
    j["peak_bytes"] = r.assignedPeakBytes;
    j["device_peak_bytes"] = r.devicePeakBytes;
    j["runs"] = r.runSeconds.size();
    Json kernels = Json::array();
    for (const MeasuredTime& t : r.kernelTimes)
        kernels.push_back(
            {{"name", t.name}, {"opcode", t.opcode}, {"ms", t.seconds * 1e3}, {"count", t.count}});
    j["kernel_times"] = std::move(kernels);
    j["fallbacks"] = r.fallbacks;
    return j;
}

Json checkJson(const OutputCheck& c) {
    Json j;
    // JSON has no infinity: a shape mismatch reads as null.
    j["max_abs_error"] = std::isfinite(c.maxAbsError) ? Json(c.maxAbsError) : Json(nullptr);
    j["max_rel_error"] = std::isfinite(c.maxRelError) ? Json(c.maxRelError) : Json(nullptr);
    j["passed"] = c.passed;
    if (!c.passed) j["detail"] = c.detail;
    return j;
}

void printText(const std::string& name, const ExecutionDevice& device, const RunFlags& flags,
               const std::vector<ModeMeasurement>& reports) {
    std::printf("%s on %s (%s)%s\n", name.c_str(), device.name().c_str(),
                device.description().c_str(),
                flags.threads ? (", " + std::to_string(flags.threads) + " threads").c_str() : "");
    std::printf("%-8s %10s %10s %10s %10s %8s %12s\n", "mode", "median ms", "min ms", "max ms",
                "compile ms", "kernels", "peak bytes");
    for (const ModeMeasurement& r : reports)
        std::printf("%-8s %10.3f %10.3f %10.3f %10.1f %8lld %12lld\n", modeName(r).c_str(),
                    r.medianSeconds() * 1e3, r.minSeconds() * 1e3, r.maxSeconds() * 1e3,
                    r.compileSeconds * 1e3, static_cast<long long>(r.kernels),
                    static_cast<long long>(r.assignedPeakBytes));
    const bool simulated = !reports.empty() && reports[0].simulated;
    if (simulated)
        std::printf("times are simulated (%s), not measured\n", device.modelTarget().c_str());
    if (!reports.empty() && reports[0].devices > 1) {
        std::printf("every run covers all %lld devices of the module's grid, on the same inputs",
                    static_cast<long long>(reports[0].devices));
        if (reports[0].check)
            std::printf(reports[0].devicesChecked == reports[0].devices
                            ? "; the checks compare every device's outputs"
                            : "; the checks compare device 0's outputs");
        std::printf("\n");
    }
    if (reports.size() == 2 && reports[1].medianSeconds() > 0)
        std::printf("%s speedup (unfused / fused): %.2fx\n", simulated ? "simulated" : "measured",
                    reports[0].medianSeconds() / reports[1].medianSeconds());
    for (const ModeMeasurement& r : reports) {
        std::vector<MeasuredTime> top = r.kernelTimes;
        std::sort(top.begin(), top.end(),
                  [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
        if (top.size() > 5) top.resize(5);
        const std::string mode = modeName(r);
        std::printf("%s: slowest kernels:", mode.c_str());
        for (const MeasuredTime& t : top)
            std::printf(" %s %.3f ms;", t.name.c_str(), t.seconds * 1e3);
        std::printf("\n");
        for (const std::string& f : r.fallbacks)
            std::printf("%s: interpreter fallback: %s\n", mode.c_str(), f.c_str());
        if (r.check)
            std::printf(
                "%s: check%s: max abs error %g, max rel error %g: %s%s\n", mode.c_str(),
                r.differenceFromOwnNumerics ? " against the interpreter on the device's numerics"
                                            : "",
                r.check->maxAbsError, r.check->maxRelError, r.check->passed ? "passed" : "FAILED: ",
                r.check->passed ? "" : r.check->detail.c_str());
        if (const std::optional<OutputCheck>& f = r.differenceFromOwnNumerics)
            std::printf(
                "%s: difference from the module's own (f32) numerics: max abs %g, max rel %g\n",
                mode.c_str(), f->maxAbsError, f->maxRelError);
    }
    printTpuSimulations(device, reports);
}

// The target the modes are compiled and predicted for: --target, else the
// device's model target, else its kind's pipeline family (the interpreter:
// cpu's; the GPU: the H100's model of the gpu pipeline).
std::string runTarget(const RunFlags& flags, const ExecutionDevice& device) {
    const std::string_view hardware = hardwareFamily(device.kind());
    const std::string modelTarget = device.modelTarget();
    return !flags.target.empty()  ? flags.target
           : !modelTarget.empty() ? modelTarget
           : hardware == "gpu"    ? std::string("h100")
                                  : std::string(hardware.empty() ? "cpu" : hardware);
}

// The reference for --check: the interpreter on the numerics the device
// implements (the simulated TPU's bf16 MXU passes), and on the module's own
// when they differ (reported, not checked). An exit code on failure.
struct Reference {
    std::optional<ExecutionResult> result;
    std::optional<std::vector<Literal>> ownNumerics;
};
std::optional<int> runReference(const ExecutionDevice& device, const HloModule& input,
                                const std::string& name, const std::vector<Literal>& arguments,
                                Reference& reference) {
    auto interpreter = findDevice("interpreter");
    if (!interpreter.isOk()) return usageError("run: " + interpreter.status().message());
    auto numerics = device.numericsModule(input);
    if (!numerics.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, numerics.status()).c_str());
        return kExitFailed;
    }
    const HloModule& referenceModule = *numerics ? **numerics : input;
    auto result = (*interpreter)->run(referenceModule, arguments, {});
    if (!result.isOk()) {
        std::fprintf(stderr, "%s: reference interpreter: %s\n", name.c_str(),
                     result.status().toString().c_str());
        return kExitFailed;
    }
    reference.result = std::move(*result);
    if (*numerics) {
        auto own = (*interpreter)->run(input, arguments, {});
        if (own.isOk()) reference.ownNumerics = std::move(own->outputs);
    }
    return std::nullopt;
}

// --trace FILE: the modes' unit timelines as a Chrome trace. An exit code on failure.
std::optional<int> writeTrace(const RunFlags& flags, const ExecutionDevice& device,
                              const std::string& target,
                              const std::vector<ModeMeasurement>& reports) {
    std::vector<NamedTimeline> timelines;
    for (const ModeMeasurement& r : reports)
        if (!r.timeline.empty()) timelines.push_back({target + " " + modeName(r), r.timeline});
    if (timelines.empty()) {
        std::fprintf(
            stderr,
            "hloscope-cli: run: --trace: device '%s' models no units, so there is no timeline "
            "(the simulated TPU has one: --device tpu-sim)\n",
            device.name().c_str());
        return kExitFailed;
    }
    if (Status written = writeTextFile(flags.trace, chromeTraceJson(timelines)); !written.isOk()) {
        std::fprintf(stderr, "%s\n", formatError("run --trace", written).c_str());
        return kExitFailed;
    }
    return std::nullopt;
}

// Both modes measured on the device of the target's own kind: the
// estimator's history gets the run (the interpreter's times say nothing
// about a target's model). Never fatal. Simulated times, and a grid's
// devices sharing this machine, are no measurement of it: not stored.
void storeInHistory(const ExecutionDevice& device, const std::string& target,
                    const HloModule& input, const std::string& name,
                    const std::vector<ModeMeasurement>& reports) {
    const std::string_view hardware = hardwareFamily(device.kind());
    if (reports.size() != 2 || hardware.empty()) return;
    auto description = resolveTargetDescription(target);
    const std::string path = EstimateHistory::defaultPath();
    const std::optional<Estimate> estimate =
        description.isOk() ? std::optional(estimateFromMeasurements(reports[0], reports[1],
                                                                    *description, device.name()))
                           : std::nullopt;
    // Nor is a grid of devices sharing this machine's cores (Estimate::measuresOneDevice).
    if (estimate && estimate->measuresOneDevice() && !path.empty() &&
        pipelineFamily(description->kind) == hardware) {
        auto history = EstimateHistory::open(path);
        Status stored = history.isOk() ? Status::ok() : history.status();
        if (history.isOk()) {
            auto id = (*history)->add(historyRecordOf(input, name, *estimate));
            if (!id.isOk()) stored = id.status();
        }
        if (!stored.isOk())
            std::fprintf(stderr, "hloscope-cli: run: history not stored: %s\n",
                         stored.message().c_str());
    }
}

// The --json report.
Json runJson(const RunFlags& flags, const ExecutionDevice& device, const std::string& name,
             const std::string& target, const std::vector<ModeMeasurement>& reports) {
    Json j;
    j["file"] = name;
    j["device"] = device.name();
    j["target"] = target;
    j["threads"] = flags.threads;
    j["repeat"] = flags.repeat;
    j["warmup"] = flags.warmup;
    j["simulated"] = !reports.empty() && reports[0].simulated;
    j["devices"] = reports.empty() ? int64_t{1} : reports[0].devices;
    for (const ModeMeasurement& r : reports) {
        j[modeName(r)] = modeJson(r);
        if (Json tpu = tpuSimulationJson(device, r); !tpu.is_null())
            j[modeName(r)]["tpu"] = std::move(tpu);
    }
    // The larger difference from f32 of the modes that have one.
    std::optional<OutputCheck> f32;
    for (const ModeMeasurement& r : reports)
        if (const std::optional<OutputCheck>& c = r.differenceFromOwnNumerics) {
            if (!f32) f32 = OutputCheck{};
            f32->maxAbsError = std::max(f32->maxAbsError, c->maxAbsError);
            f32->maxRelError = std::max(f32->maxRelError, c->maxRelError);
        }
    if (f32)
        j["difference_from_f32"] = {{"max_abs_error", f32->maxAbsError},
                                    {"max_rel_error", f32->maxRelError}};
    if (reports.size() == 2 && reports[1].medianSeconds() > 0)
        j["speedup"] = reports[0].medianSeconds() / reports[1].medianSeconds();
    if (flags.check) {
        // The worse of the modes run.
        OutputCheck worst;
        for (const ModeMeasurement& r : reports) {
            worst.maxAbsError = std::max(worst.maxAbsError, r.check->maxAbsError);
            worst.maxRelError = std::max(worst.maxRelError, r.check->maxRelError);
            if (worst.passed && !r.check->passed) {
                worst.passed = false;
                worst.detail = modeName(r) + ": " + r.check->detail;
            }
        }
        j["check"] = checkJson(worst);
        // Devices compared (every device's outputs where both runs return them).
        j["check"]["devices"] = reports.empty() ? int64_t{0} : reports[0].devicesChecked;
    }
    return j;
}

}  // namespace

int runRun(const std::vector<std::string>& args) {
    RunFlags flags;
    if (auto error = parseFlags(args, flags)) return usageError("run: " + *error);
    auto device = findDevice(flags.device);
    if (!device.isOk()) return usageError("run: " + device.status().message());
    const std::string_view hardware = hardwareFamily((*device)->kind());
    const std::string target = runTarget(flags, **device);
    const std::string name = displayName(flags.file);
    auto input = loadModuleFromFile(flags.file);
    if (!input.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, input.status()).c_str());
        return kExitFailed;
    }
    auto arguments = makeArguments(*(*input)->entryComputation(), flags.inputs, flags.seed);
    if (!arguments.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, arguments.status()).c_str());
        return kExitFailed;
    }
    std::vector<ExecutionMode> modes;
    if (flags.unfused) modes.push_back(ExecutionMode::kUnfused);
    if (flags.fused) modes.push_back(ExecutionMode::kFused);
    if (!flags.gpu.dir.empty()) {
        flags.gpu.warmup = flags.warmup;
        flags.gpu.repeat = flags.repeat;
        flags.gpu.json = flags.json;
        flags.gpu.synthetic = flags.inputs == "random";
        flags.gpu.seed = flags.seed;
        return emitGpuPlans(**input, name, *arguments, target, modes, flags.gpu);
    }
    std::string whyNot;
    if (!(*device)->available(&whyNot)) {
        std::fprintf(stderr, "hloscope-cli: run: device '%s' cannot run here: %s\n",
                     flags.device.c_str(), whyNot.c_str());
        if (hardware == "gpu") printGpuPrediction(**input, name, target);
        return kExitFailed;
    }
    Reference reference;
    if (flags.check)
        if (auto exit = runReference(**device, **input, name, *arguments, reference)) return *exit;
    MeasureOptions measureOptions;
    measureOptions.warmup = flags.warmup;
    measureOptions.repeat = flags.repeat;
    measureOptions.threads = flags.threads;
    measureOptions.seed = flags.seed;
    // The modes' runs interleave (measureModes), so drift hits both alike.
    auto measured = measureModes(**input, target, modes, **device, *arguments, measureOptions,
                                 reference.result ? &*reference.result : nullptr,
                                 reference.ownNumerics ? &*reference.ownNumerics : nullptr);
    if (!measured.isOk()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), measured.status().toString().c_str());
        return kExitFailed;
    }
    const std::vector<ModeMeasurement> reports = std::move(*measured);
    if (!flags.trace.empty())
        if (auto exit = writeTrace(flags, **device, target, reports)) return *exit;
    if (flags.history) storeInHistory(**device, target, **input, name, reports);
    bool passed = true;
    for (const ModeMeasurement& r : reports) passed = passed && (!r.check || r.check->passed);
    if (flags.json)
        std::printf("%s\n", runJson(flags, **device, name, target, reports).dump(2).c_str());
    else
        printText(name, **device, flags, reports);
    return passed ? kExitOk : kExitFailed;
}

}  // namespace hloscope::cli
