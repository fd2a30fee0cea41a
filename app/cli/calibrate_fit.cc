// hloscope-cli calibrate --from-history: re-fits a target's efficiency
// factors to the kernels measured on this machine (the estimator's history,
// compiler/estimator/history.h; the fit, compiler/estimator/calibration.h)
// and writes the target back.

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
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

// The flags; an exit code on a usage error.
std::optional<int> parseFitFlags(const std::vector<std::string>& args, FitFlags& flags) {
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
    return std::nullopt;
}

// The history database at `path`, or null (said why on stderr).
std::unique_ptr<EstimateHistory> openHistory(const std::string& path) {
    if (path.empty()) {
        std::fprintf(
            stderr,
            "hloscope-cli: calibrate: no history database (HLOSCOPE_HISTORY=off, or neither "
            "XDG_DATA_HOME nor HOME is set)\n");
        return nullptr;
    }
    if (!std::filesystem::exists(path)) {
        std::fprintf(stderr,
                     "hloscope-cli: calibrate: %s: no history yet; measure some modules first "
                     "(hloscope-cli estimate FILE --measure)\n",
                     path.c_str());
        return nullptr;
    }
    auto history = EstimateHistory::open(path);
    if (!history.isOk()) {
        std::fprintf(stderr, "%s\n", formatError("calibrate", history.status()).c_str());
        return nullptr;
    }
    return std::move(*history);
}

// `target` with the fitted efficiencies, each fitted one's source saying how.
TargetDescription fittedTarget(const TargetDescription& target, const CalibrationFit& fit,
                               const std::string& machine, size_t runs) {
    TargetDescription fitted = target;
    fitted.efficiency = fit.efficiency;
    const std::string before = percentText(fit.medianAbsErrorBefore);
    const std::string after = percentText(fit.medianAbsErrorAfter);
    for (const ClassFit& c : fit.classes) {
        if (!c.fitted) continue;
        std::string source(kFittedFromHistorySource);
        source += " on ";
        source += machine.empty() ? std::string("every machine in the history") : machine;
        source += ": " + std::to_string(c.kernels) + " measured kernels of this class among " +
                  std::to_string(fit.samples) + " from " + std::to_string(runs) +
                  " runs (median kernel |error| " + before + " -> " + after + ")";
        fitted.sources["$.efficiency." + std::string(opClassName(c.opClass))] = std::move(source);
    }
    return fitted;
}

// Writes the fitted target to --output and, for this machine's cpu, its
// cached description; `written` gets the paths. An exit code on failure.
std::optional<int> writeFitted(const FitFlags& flags, const TargetDescription& fitted,
                               std::vector<std::string>& written) {
    const std::string text = targetDescriptionToJson(fitted);
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
    return std::nullopt;
}

// What the fit found and wrote, as JSON (--json) or text.
struct FitReport {
    const TargetDescription& fitted;
    const CalibrationFit& fit;
    const std::string& machine;
    const std::string& path;
    size_t runs = 0;
    const std::vector<std::string>& written;
};

void printFitJson(const FitReport& r) {
    Json j;
    j["target"] = r.fitted.name;
    j["machine"] = r.machine.empty() ? Json() : Json(r.machine);
    j["history"] = r.path;
    j["runs"] = r.runs;
    j["kernels"] = r.fit.samples;
    j["median_abs_error_pct_before"] = r.fit.medianAbsErrorBefore;
    j["median_abs_error_pct_after"] = r.fit.medianAbsErrorAfter;
    j["mean_abs_log_error_before"] = r.fit.meanAbsLogErrorBefore;
    j["mean_abs_log_error_after"] = r.fit.meanAbsLogErrorAfter;
    Json classes = Json::object();
    for (const ClassFit& c : r.fit.classes)
        classes[std::string(opClassName(c.opClass))] = {{"kernels", c.kernels},
                                                        {"before", c.before},
                                                        {"after", c.after},
                                                        {"fitted", c.fitted}};
    j["efficiency"] = std::move(classes);
    j["written"] = r.written;
    std::printf("%s\n", j.dump(2).c_str());
}

void printFitText(const FitReport& r, bool dryRun) {
    std::printf("calibrate --from-history: %s on %s: %lld kernels from %zu runs (%s)\n",
                r.fitted.name.c_str(), r.machine.empty() ? "every machine" : r.machine.c_str(),
                static_cast<long long>(r.fit.samples), r.runs, r.path.c_str());
    std::printf("  %-15s %8s %8s %8s\n", "op class", "kernels", "before", "after");
    for (const ClassFit& c : r.fit.classes)
        std::printf("  %-15s %8lld %8.3f %8.3f%s\n", std::string(opClassName(c.opClass)).c_str(),
                    static_cast<long long>(c.kernels), c.before, c.after,
                    c.fitted ? "" : "  (kept: too few kernels)");
    std::printf("  median kernel |error| (each run weighted alike): %s -> %s\n",
                percentText(r.fit.medianAbsErrorBefore).c_str(),
                percentText(r.fit.medianAbsErrorAfter).c_str());
    for (const std::string& out : r.written) std::printf("  wrote %s\n", out.c_str());
    if (dryRun) std::printf("  (dry run: nothing written)\n");
}

}  // namespace

int runCalibrateFromHistory(const std::vector<std::string>& args) {
    FitFlags flags;
    if (auto exit = parseFitFlags(args, flags)) return *exit;
    auto target = resolveTargetDescription(flags.target);
    if (!target.isOk()) {
        std::fprintf(stderr, "%s\n", formatError("calibrate", target.status()).c_str());
        return kExitFailed;
    }
    const std::string path = EstimateHistory::defaultPath();
    std::unique_ptr<EstimateHistory> history = openHistory(path);
    if (!history) return kExitFailed;
    const std::string machine = flags.machine == "any"  ? std::string()
                                : flags.machine.empty() ? machineName()
                                                        : flags.machine;
    auto rows = history->kernels(target->name, machine);
    if (!rows.isOk()) {
        std::fprintf(stderr, "%s\n", formatError("calibrate", rows.status()).c_str());
        return kExitFailed;
    }
    std::set<int64_t> runs;
    const std::vector<CalibrationSample> samples = calibrationSamplesOf(*rows, runs);
    if (samples.empty()) {
        std::fprintf(
            stderr,
            "hloscope-cli: calibrate: %s holds no measured kernels for target %s on %s; measure "
            "some modules first (hloscope-cli estimate FILE --measure)\n",
            path.c_str(), target->name.c_str(), machine.empty() ? "any machine" : machine.c_str());
        return kExitFailed;
    }
    const CalibrationFit fit = fitEfficiencies(samples, *target);
    const TargetDescription fitted = fittedTarget(*target, fit, machine, runs.size());
    std::vector<std::string> written;
    if (!flags.dryRun)
        if (auto exit = writeFitted(flags, fitted, written)) return *exit;
    const FitReport report{fitted, fit, machine, path, runs.size(), written};
    if (flags.json)
        printFitJson(report);
    else
        printFitText(report, flags.dryRun);
    return kExitOk;
}

}  // namespace hloscope::cli
