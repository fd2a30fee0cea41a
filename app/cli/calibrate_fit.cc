// hloscope-cli calibrate --from-history: re-fits a target's efficiency
// factors to the kernels measured on this machine (the estimator's history,
// compiler/estimator/history.h; the fit, compiler/estimator/calibration.h)
// and writes the target back.

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/estimator/calibration.h"
#include "compiler/estimator/history.h"
#include "compiler/targets/target_description.h"

namespace hloscope::cli {

namespace {

using Json = nlohmann::ordered_json;

struct FitFlags {
    std::string target = "cpu";
    std::string machine;  // empty: this machine; "any": every machine
    std::string output;
    bool dryRun = false;
    bool json = false;
};

std::string percentText(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f%%", value);
    return buffer;
}

}  // namespace

int runCalibrateFromHistory(const std::vector<std::string>& args) {
    FitFlags flags;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        const bool hasValue = i + 1 < args.size();
        if (arg == "--from-history") continue;
        if (arg == "--dry-run")
            flags.dryRun = true;
        else if (arg == "--json")
            flags.json = true;
        else if (arg == "--target" && hasValue)
            flags.target = args[++i];
        else if (arg == "--machine" && hasValue)
            flags.machine = args[++i];
        else if (arg == "--output" && hasValue)
            flags.output = args[++i];
        else if (arg == "--target" || arg == "--machine" || arg == "--output")
            return usageError("calibrate: " + arg + " needs a value");
        else
            return usageError("calibrate --from-history: unknown argument '" + arg + "'");
    }

    auto target = resolveTargetDescription(flags.target);
    if (!target.isOk()) {
        std::fprintf(stderr, "%s\n", formatError("calibrate", target.status()).c_str());
        return kExitFailed;
    }
    const std::string path = EstimateHistory::defaultPath();
    if (path.empty()) {
        std::fprintf(
            stderr,
            "hloscope-cli: calibrate: no history database (HLOSCOPE_HISTORY=off, or neither "
            "XDG_DATA_HOME nor HOME is set)\n");
        return kExitFailed;
    }
    if (!std::filesystem::exists(path)) {
        std::fprintf(stderr,
                     "hloscope-cli: calibrate: %s: no history yet; measure some modules first "
                     "(hloscope-cli estimate FILE --measure)\n",
                     path.c_str());
        return kExitFailed;
    }
    auto history = EstimateHistory::open(path);
    if (!history.isOk()) {
        std::fprintf(stderr, "%s\n", formatError("calibrate", history.status()).c_str());
        return kExitFailed;
    }
    const std::string machine = flags.machine == "any"  ? std::string()
                                : flags.machine.empty() ? machineName()
                                                        : flags.machine;
    auto rows = (*history)->kernels(target->name, machine);
    if (!rows.isOk()) {
        std::fprintf(stderr, "%s\n", formatError("calibrate", rows.status()).c_str());
        return kExitFailed;
    }

    // Each stored run's preparation (unfused, fused) weighs 1 in total.
    std::map<std::pair<int64_t, std::string>, int64_t> perPreparation;
    std::set<int64_t> runs;
    for (const EstimateHistory::RunKernel& row : *rows) {
        ++perPreparation[{row.runId, row.kernel.mode}];
        runs.insert(row.runId);
    }
    std::vector<CalibrationSample> samples;
    for (const EstimateHistory::RunKernel& row : *rows) {
        CalibrationSample sample;
        sample.parts = row.kernel.parts;
        sample.executions = row.kernel.executions;
        sample.measuredSeconds = row.kernel.measuredSeconds;
        sample.weight = 1.0 / static_cast<double>(perPreparation[{row.runId, row.kernel.mode}]);
        samples.push_back(sample);
    }
    if (samples.empty()) {
        std::fprintf(
            stderr,
            "hloscope-cli: calibrate: %s holds no measured kernels for target %s on %s; measure "
            "some modules first (hloscope-cli estimate FILE --measure)\n",
            path.c_str(), target->name.c_str(), machine.empty() ? "any machine" : machine.c_str());
        return kExitFailed;
    }

    const CalibrationFit fit = fitEfficiencies(samples, *target);
    TargetDescription fitted = *target;
    fitted.efficiency = fit.efficiency;
    const std::string before = percentText(fit.medianAbsErrorBefore);
    const std::string after = percentText(fit.medianAbsErrorAfter);
    for (const ClassFit& c : fit.classes) {
        if (!c.fitted) continue;
        fitted.sources["$.efficiency." + std::string(opClassName(c.opClass))] =
            "fitted by hloscope-cli calibrate --from-history on " +
            (machine.empty() ? std::string("every machine in the history") : machine) + ": " +
            std::to_string(c.kernels) + " measured kernels of this class among " +
            std::to_string(fit.samples) + " from " + std::to_string(runs.size()) +
            " runs (median kernel |error| " + before + " -> " + after + ")";
    }

    std::vector<std::string> written;
    const std::string text = targetDescriptionToJson(fitted);
    if (!flags.dryRun) {
        std::vector<std::string> paths;
        if (!flags.output.empty()) paths.push_back(flags.output);
        if (fitted.kind == TargetKind::kCpu && flags.target == "cpu")
            if (std::string cache = cpuTargetCachePath(); !cache.empty()) paths.push_back(cache);
        if (paths.empty()) {
            std::fprintf(
                stderr,
                "hloscope-cli: calibrate: target %s is not this machine's cpu: name the file to "
                "write with --output (or --dry-run)\n",
                flags.target.c_str());
            return kExitUsage;
        }
        for (const std::string& out : paths) {
            if (Status status = writeTextFile(out, text); !status.isOk()) {
                std::fprintf(stderr, "%s\n", formatError("calibrate", status).c_str());
                return kExitFailed;
            }
            written.push_back(out);
        }
    }

    if (flags.json) {
        Json j;
        j["target"] = fitted.name;
        j["machine"] = machine.empty() ? Json() : Json(machine);
        j["history"] = path;
        j["runs"] = runs.size();
        j["kernels"] = fit.samples;
        j["median_abs_error_pct_before"] = fit.medianAbsErrorBefore;
        j["median_abs_error_pct_after"] = fit.medianAbsErrorAfter;
        j["mean_abs_log_error_before"] = fit.meanAbsLogErrorBefore;
        j["mean_abs_log_error_after"] = fit.meanAbsLogErrorAfter;
        Json classes = Json::object();
        for (const ClassFit& c : fit.classes)
            classes[std::string(opClassName(c.opClass))] = {{"kernels", c.kernels},
                                                            {"before", c.before},
                                                            {"after", c.after},
                                                            {"fitted", c.fitted}};
        j["efficiency"] = std::move(classes);
        j["written"] = written;
        std::printf("%s\n", j.dump(2).c_str());
        return kExitOk;
    }
    std::printf("calibrate --from-history: %s on %s: %lld kernels from %zu runs (%s)\n",
                fitted.name.c_str(), machine.empty() ? "every machine" : machine.c_str(),
                static_cast<long long>(fit.samples), runs.size(), path.c_str());
    std::printf("  %-15s %8s %8s %8s\n", "op class", "kernels", "before", "after");
    for (const ClassFit& c : fit.classes)
        std::printf("  %-15s %8lld %8.3f %8.3f%s\n", std::string(opClassName(c.opClass)).c_str(),
                    static_cast<long long>(c.kernels), c.before, c.after,
                    c.fitted ? "" : "  (kept: too few kernels)");
    std::printf("  median kernel |error| (each run weighted alike): %s -> %s\n", before.c_str(),
                after.c_str());
    for (const std::string& out : written) std::printf("  wrote %s\n", out.c_str());
    if (flags.dryRun) std::printf("  (dry run: nothing written)\n");
    return kExitOk;
}

}  // namespace hloscope::cli
