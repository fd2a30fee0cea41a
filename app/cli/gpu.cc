// hloscope-cli's GPU pieces: `run --device gpu --emit-plan DIR` (execution
// plans for a GPU machine), the predicted figures shown when no GPU is
// found, and `import-run DIR` (a plan's results read back, checked against
// the reference interpreter, and compared with the prediction).
#include "app/cli/gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/backends/gpu/gpu_import.h"
#include "compiler/backends/gpu/gpu_plan.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/estimator/estimate.h"
#include "compiler/estimator/history.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/ir/hlo_computation.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/io/module_io.h"
#include "core/interpreter/multi_device.h"

namespace hloscope::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

Json modeJson(const ImportedGpuRun& mode) {
    const GpuRunResults& r = mode.results;
    Json j{{"median_ms", r.medianMs},
           {"min_ms", r.minMs},
           {"max_ms", r.maxMs},
           {"compile_ms", mode.files.plan.compileSeconds * 1e3},
           {"kernels", mode.files.plan.kernels},
           {"peak_bytes", mode.measurement.assignedPeakBytes},
           {"device_peak_bytes", mode.files.plan.arenaBytes},
           {"runs", r.runMs.size()},
           {"cublas", r.cublas}};
    Json steps = Json::array();
    for (const GpuStepTime& s : r.steps)
        steps.push_back({{"name", s.name}, {"used", s.used}, {"ms", s.medianMs}});
    j["steps"] = steps;
    Json check{{"max_abs_error",
                std::isfinite(mode.check.maxAbsError) ? Json(mode.check.maxAbsError) : Json()},
               {"max_rel_error",
                std::isfinite(mode.check.maxRelError) ? Json(mode.check.maxRelError) : Json()},
               {"passed", mode.check.passed}};
    if (!mode.check.passed) check["detail"] = mode.check.detail;
    check["sampled"] = mode.sampled;
    j["check"] = check;
    return j;
}

}  // namespace

int emitGpuPlans(const HloModule& module, const std::string& name, const std::vector<Literal>& args,
                 const std::string& target, const std::vector<ExecutionMode>& modes,
                 const GpuEmitFlags& flags) {
    const std::string moduleText = printModule(module);
    std::vector<int64_t> seeds;
    std::vector<Literal> synthetic;
    if (flags.synthetic)
        synthetic = syntheticArguments(*module.entryComputation(), flags.seed, seeds);
    const std::vector<Literal>& inputs = flags.synthetic ? synthetic : args;
    Json summary = Json::array();
    for (ExecutionMode mode : modes) {
        const std::string modeName(executionModeName(mode));
        auto prepared = prepareCopyForMode(module, target, mode);
        if (!prepared.isOk()) {
            std::fprintf(stderr, "%s: %s: %s\n", name.c_str(), modeName.c_str(),
                         prepared.status().toString().c_str());
            return kExitFailed;
        }
        GpuPlanOptions options;
        options.sm = flags.sm;
        options.mode = modeName;
        options.gemmSteps = flags.gemmSteps;
        options.warmup = flags.warmup;
        options.repeat = flags.repeat;
        auto plan = buildGpuPlan(*prepared->module, options);
        if (!plan.isOk()) {
            std::fprintf(stderr, "%s: %s: GPU plan: %s\n", name.c_str(), modeName.c_str(),
                         plan.status().toString().c_str());
            return kExitFailed;
        }
        const std::string dir =
            modes.size() > 1 ? (fs::path(flags.dir) / modeName).string() : flags.dir;
        Status written = Status::ok();
        if (plan->devices() == 1) {
            written =
                writeGpuPlan(*plan, inputs, moduleText, printModule(*prepared->module), dir, seeds);
        } else {
            // Every device's arguments as files: random ones differ per device (seed + device,
            // scalars shared), given ones are every device's.
            const DeviceGrid grid{plan->replicas, plan->partitions};
            std::vector<std::vector<Literal>> deviceArgs =
                flags.synthetic
                    ? makeDeviceArguments(*module.entryComputation(), grid, flags.seed)
                    : std::vector<std::vector<Literal>>(static_cast<size_t>(grid.count()), args);
            written = writeGpuPlanOnDevices(*plan, deviceArgs, moduleText,
                                            printModule(*prepared->module), dir);
        }
        if (!written.isOk()) {
            std::fprintf(stderr, "%s: %s\n", name.c_str(), written.message().c_str());
            return kExitFailed;
        }
        int64_t gemms = 0;
        for (const GpuPlanStep& step : plan->steps) gemms += step.kind == GpuStepKind::kGemm;
        summary.push_back({{"mode", modeName},
                           {"dir", dir},
                           {"devices", plan->devices()},
                           {"steps", plan->steps.size()},
                           {"kernels", plan->kernels},
                           {"gemms", gemms},
                           {"arena_bytes", plan->arenaBytes},
                           {"ptx_bytes", plan->ptx.size()},
                           {"sm", plan->sm},
                           {"compile_ms", plan->compileSeconds * 1e3}});
        if (!flags.json)
            std::printf(
                "%s: %s plan in %s: %zu steps (%lld kernels, %lld cuBLAS-capable GEMMs), arena "
                "%lld bytes%s, "
                "PTX %zu bytes for %s, generated in %.1f ms\n",
                name.c_str(), modeName.c_str(), dir.c_str(), plan->steps.size(),
                static_cast<long long>(plan->kernels), static_cast<long long>(gemms),
                static_cast<long long>(plan->arenaBytes),
                plan->devices() > 1
                    ? (" per device, " + std::to_string(plan->devices()) + " devices (" +
                       std::to_string(plan->replicas) + " replicas x " +
                       std::to_string(plan->partitions) + " partitions)")
                          .c_str()
                    : "",
                plan->ptx.size(), plan->sm.c_str(), plan->compileSeconds * 1e3);
    }
    if (flags.json)
        std::printf("%s\n", Json{{"file", name}, {"plans", summary}}.dump(2).c_str());
    else
        std::printf(
            "run them on a GPU machine with: hloscope-gpu-runner DIR   (one per plan directory)\n"
            "then read the results back with: hloscope-cli import-run %s\n",
            flags.dir.c_str());
    return kExitOk;
}

void printGpuPrediction(const HloModule& module, const std::string& name,
                        const std::string& target) {
    EstimateOptions options;
    options.target = target;
    auto estimate = estimateModule(module, options);
    if (!estimate.isOk()) {
        std::fprintf(stderr, "%s: no prediction on %s: %s\n", name.c_str(), target.c_str(),
                     estimate.status().message().c_str());
        return;
    }
    const EstimateFigures& p = estimate->predicted;
    std::fprintf(stderr,
                 "%s: predicted on %s: unfused %.3f ms, fused %.3f ms, speedup %.2fx; peak memory "
                 "%lld -> %lld "
                 "bytes (%.2fx)\n",
                 name.c_str(), target.c_str(), p.unfusedSeconds * 1e3, p.fusedSeconds * 1e3,
                 p.speedup(), static_cast<long long>(p.peakBytesUnfused),
                 static_cast<long long>(p.peakBytesFused), p.memoryReduction());
}

int runImportRun(const std::vector<std::string>& args) {
    std::string dir, target;
    bool json = false, history = true;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--json")
            json = true;
        else if (args[i] == "--no-history")
            history = false;
        else if (args[i] == "--target") {
            if (i + 1 >= args.size()) return usageError("import-run: --target needs a target");
            target = args[++i];
        } else if (args[i].size() > 1 && args[i][0] == '-')
            return usageError("import-run: unknown option '" + args[i] + "'");
        else if (!dir.empty())
            return usageError("import-run: exactly one directory expected");
        else
            dir = args[i];
    }
    if (dir.empty()) return usageError("import-run: no plan directory");
    auto imported = importGpuRuns(dir);
    if (!imported.isOk()) {
        std::fprintf(stderr, "%s\n", imported.status().message().c_str());
        return kExitFailed;
    }
    std::vector<ImportedGpuRun> modes = std::move(*imported);
    const std::map<std::string, std::string>& device = modes.front().results.device;
    const std::string deviceName = device.count("name") ? device.at("name") : std::string("GPU");
    if (target.empty()) target = gpuTargetForDevice(deviceName);
    std::optional<Estimate> estimate;
    if (modes.size() == 2) {
        auto description = resolveTargetDescription(target);
        if (description.isOk())
            estimate = estimateFromMeasurements(modes[0].measurement, modes[1].measurement,
                                                *description, "gpu");
        // A plan of several devices runs them all on one GPU: no measurement of one device.
        if (estimate && history && estimate->measuresOneDevice()) {
            const std::string path = EstimateHistory::defaultPath();
            auto original = parseHloModule(modes[0].files.moduleText);
            if (!path.empty() && original.isOk()) {
                auto store = EstimateHistory::open(path);
                Status stored = store.isOk() ? Status::ok() : store.status();
                if (store.isOk()) {
                    auto id = (*store)->add(
                        historyRecordOf(**original, modes[0].files.plan.module, *estimate));
                    if (!id.isOk()) stored = id.status();
                }
                if (!stored.isOk())
                    std::fprintf(stderr, "hloscope-cli: import-run: history not stored: %s\n",
                                 stored.message().c_str());
            }
        }
    }
    bool passed = true;
    for (const ImportedGpuRun& m : modes) passed = passed && m.check.passed;
    if (json) {
        Json j{{"module", modes.front().files.plan.module}, {"device", "gpu"}, {"target", target}};
        Json info;
        for (const auto& [key, value] : device) info[key] = value;
        j["gpu"] = info;
        for (const ImportedGpuRun& m : modes) j[m.files.plan.mode] = modeJson(m);
        if (modes.size() == 2 && modes[1].results.medianMs > 0)
            j["speedup"] = modes[0].results.medianMs / modes[1].results.medianMs;
        if (estimate) {
            j["predicted"] = {{"unfused_ms", estimate->predicted.unfusedSeconds * 1e3},
                              {"fused_ms", estimate->predicted.fusedSeconds * 1e3},
                              {"speedup", estimate->predicted.speedup()}};
            if (auto e = estimate->speedupErrorPercent()) j["predicted"]["speedup_error_pct"] = *e;
        }
        j["passed"] = passed;
        std::printf("%s\n", j.dump(2).c_str());
        return passed ? kExitOk : kExitFailed;
    }
    std::printf("%s on %s (compute capability %s, %s SMs, driver %s)%s\n",
                modes.front().files.plan.module.c_str(), deviceName.c_str(),
                device.count("compute_capability") ? device.at("compute_capability").c_str() : "?",
                device.count("sm_count") ? device.at("sm_count").c_str() : "?",
                device.count("driver") ? device.at("driver").c_str() : "?",
                modes.front().results.cublas.empty()
                    ? ", no cuBLAS"
                    : (", " + modes.front().results.cublas).c_str());
    std::printf("%-8s %10s %10s %10s %10s %8s %12s\n", "mode", "median ms", "min ms", "max ms",
                "ptx ms", "kernels", "arena bytes");
    for (const ImportedGpuRun& m : modes)
        std::printf("%-8s %10.4f %10.4f %10.4f %10.1f %8lld %12lld\n", m.files.plan.mode.c_str(),
                    m.results.medianMs, m.results.minMs, m.results.maxMs,
                    m.files.plan.compileSeconds * 1e3, static_cast<long long>(m.files.plan.kernels),
                    static_cast<long long>(m.files.plan.arenaBytes));
    if (modes.size() == 2 && modes[1].results.medianMs > 0)
        std::printf("measured speedup (unfused / fused): %.2fx\n",
                    modes[0].results.medianMs / modes[1].results.medianMs);
    if (estimate) {
        std::printf("predicted on %s: unfused %.4f ms, fused %.4f ms, speedup %.2fx",
                    target.c_str(), estimate->predicted.unfusedSeconds * 1e3,
                    estimate->predicted.fusedSeconds * 1e3, estimate->predicted.speedup());
        if (auto e = estimate->speedupErrorPercent()) std::printf(" (speedup error %+.1f%%)", *e);
        std::printf("\n");
    }
    for (const ImportedGpuRun& m : modes) {
        std::vector<MeasuredTime> top = m.measurement.kernelTimes;
        std::sort(top.begin(), top.end(),
                  [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
        if (top.size() > 5) top.resize(5);
        std::printf("%s: slowest kernels:", m.files.plan.mode.c_str());
        for (const MeasuredTime& t : top)
            std::printf(" %s %.4f ms;", t.name.c_str(), t.seconds * 1e3);
        std::printf(
            "\n%s: check%s: max abs error %g, max rel error %g: %s%s\n", m.files.plan.mode.c_str(),
            m.sampled ? " (sampled outputs)" : "", m.check.maxAbsError, m.check.maxRelError,
            m.check.passed ? "passed" : "FAILED: ", m.check.passed ? "" : m.check.detail.c_str());
    }
    return passed ? kExitOk : kExitFailed;
}

}  // namespace hloscope::cli

namespace hloscope::cli {

// calibrate --gpu-probe PROBE.json [--base h100|a100|FILE] [--name NAME] [--output FILE]:
// a GPU target description from the base one with the figures the runner
// measured (hloscope-gpu-runner --probe): memory bandwidth (device-to-device
// copy), kernel launch overhead (back-to-back launches), SM count and L2.
int runCalibrateGpuProbe(const std::vector<std::string>& args) {
    std::string probePath, base = "h100", name, output;
    for (size_t i = 0; i < args.size(); ++i) {
        auto value = [&](std::string* out) {
            if (i + 1 >= args.size()) return false;
            *out = args[++i];
            return true;
        };
        if (args[i] == "--gpu-probe") {
            if (!value(&probePath))
                return usageError("calibrate: --gpu-probe needs the runner's probe JSON");
        } else if (args[i] == "--base") {
            if (!value(&base)) return usageError("calibrate: --base needs a GPU target");
        } else if (args[i] == "--name") {
            if (!value(&name)) return usageError("calibrate: --name needs a name");
        } else if (args[i] == "--output") {
            if (!value(&output)) return usageError("calibrate: --output needs a file");
        } else {
            return usageError("calibrate: unknown option '" + args[i] + "' with --gpu-probe");
        }
    }
    auto text = readFileToString(probePath);
    if (!text.isOk()) {
        std::fprintf(stderr, "%s\n", text.status().message().c_str());
        return kExitFailed;
    }
    const nlohmann::json probe = nlohmann::json::parse(*text, nullptr, false);
    if (probe.is_discarded() || probe.value("format", "") != "hloscope-gpu-probe") {
        std::fprintf(stderr, "%s: not the output of hloscope-gpu-runner --probe\n",
                     probePath.c_str());
        return kExitFailed;
    }
    auto target = resolveTargetDescription(base);
    if (!target.isOk() || target->kind != TargetKind::kGpu) {
        std::fprintf(stderr, "calibrate: --base %s: %s\n", base.c_str(),
                     target.isOk() ? "not a GPU target" : target.status().message().c_str());
        return kExitFailed;
    }
    const nlohmann::json device = probe.value("device", nlohmann::json::object());
    const std::string deviceName = device.value("name", std::string("GPU"));
    const std::string where = "measured by hloscope-gpu-runner --probe on " + deviceName +
                              " (driver " + device.value("driver", std::string("?")) + ")";
    const double bandwidth = probe.value("copy_bandwidth_gbs", 0.0) * 1e9;
    const double launch = probe.value("launch_overhead_us", 0.0) * 1e-6;
    if (bandwidth <= 0 || launch <= 0) {
        std::fprintf(stderr, "%s: no copy bandwidth or launch overhead in the probe\n",
                     probePath.c_str());
        return kExitFailed;
    }
    const std::string baseName = target->name;
    target->name = name.empty() ? target->name : name;
    target->description =
        deviceName + ", one GPU: the published " + baseName +
        " figures for compute, with this GPU's measured memory bandwidth, launch overhead, SM "
        "count and L2 (" +
        where + ")";
    target->memoryBandwidthBytesPerSecond = bandwidth;
    target->sources["$.memoryBandwidthBytesPerSecond"] =
        where + ": device-to-device copy of " + std::to_string(probe.value("bytes", int64_t{0})) +
        " bytes, bytes read plus written per second, best of 10";
    target->kernelLaunchSeconds = launch;
    target->sources["$.kernelLaunchSeconds"] =
        where +
        ": mean time per launch of an empty kernel, 10000 launches back to back on one stream";
    if (const int64_t sms = device.value("sm_count", int64_t{0}); sms > 0) {
        target->cores = sms;
        target->sources["$.cores"] = where + ": CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT";
    }
    if (const int64_t l2 = device.value("l2_bytes", int64_t{0}); l2 > 0) {
        target->cacheBytes = static_cast<double>(l2);
        target->sources["$.cacheBytes"] = where + ": CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE";
    }
    const std::string json = targetDescriptionToJson(*target);
    if (!output.empty()) {
        Status written = writeTextFile(output, json);
        if (!written.isOk()) {
            std::fprintf(stderr, "%s\n", written.message().c_str());
            return kExitFailed;
        }
    }
    std::printf("%s", json.c_str());
    return kExitOk;
}

}  // namespace hloscope::cli
