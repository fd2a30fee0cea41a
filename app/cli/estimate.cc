// hloscope-cli calc and estimate: the speedup/memory calculator, and what
// fusion buys a module on a target, predicted by the model and (--measure)
// measured on the target's device, with compile overhead and break-even.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/backends/cpu/cpu_calibration.h"
#include "compiler/backends/tpu/tpu_device.h"
#include "compiler/estimator/calculator.h"
#include "compiler/estimator/estimate.h"
#include "compiler/estimator/estimate_report.h"
#include "compiler/estimator/history.h"
#include "compiler/targets/target_description.h"
#include "core/io/module_io.h"

namespace hloscope::cli {
namespace {

using Json = nlohmann::ordered_json;

// "140", "140ms", "1.5s" -> (number text, unit); an unknown suffix is left
// in the number so the calculator names it as not a number.
std::string splitTime(const std::string& text, TimeUnit* unit) {
    if (text.size() > 2 && text.compare(text.size() - 2, 2, "ms") == 0) {
        *unit = TimeUnit::kMilliseconds;
        return text.substr(0, text.size() - 2);
    }
    if (text.size() > 1 && text.back() == 's' &&
        (std::isdigit(static_cast<unsigned char>(text[text.size() - 2])) ||
         text[text.size() - 2] == '.')) {
        *unit = TimeUnit::kSeconds;
        return text.substr(0, text.size() - 1);
    }
    return text;
}

std::string splitMemory(const std::string& text, MemoryUnit* unit) {
    if (text.size() > 2) {
        const std::string suffix = text.substr(text.size() - 2);
        if (suffix == "MB" || suffix == "mb") {
            *unit = MemoryUnit::kMegabytes;
            return text.substr(0, text.size() - 2);
        }
        if (suffix == "GB" || suffix == "gb") {
            *unit = MemoryUnit::kGigabytes;
            return text.substr(0, text.size() - 2);
        }
    }
    return text;
}

Json calculatorJson(const CalculatorInput& input, const CalculatorResult& r) {
    Json j;
    j["optimized_time"] = r.optimizedTime;
    j["optimized_memory"] = r.optimizedMemory;
    j["time_saved"] = r.timeSaved;
    j["time_saved_pct"] = r.timeSavedPercent;
    j["memory_saved"] = r.memorySaved;
    j["memory_saved_pct"] = r.memorySavedPercent;
    j["time_unit"] = std::string(timeUnitName(input.timeUnit));
    j["memory_unit"] = std::string(memoryUnitName(input.memoryUnit));
    return j;
}

void printCalculator(const CalculatorInput& input, const CalculatorResult& r) {
    const std::string t(timeUnitName(input.timeUnit)), m(memoryUnitName(input.memoryUnit));
    std::printf("optimized time:   %g %s (saves %g %s, %.1f%%)\n", r.optimizedTime, t.c_str(),
                r.timeSaved, t.c_str(), r.timeSavedPercent);
    std::printf("optimized memory: %g %s (saves %g %s, %.1f%%)\n", r.optimizedMemory, m.c_str(),
                r.memorySaved, m.c_str(), r.memorySavedPercent);
}

struct EstimateFlags {
    std::vector<std::string> files;
    std::string html;  // report path
    std::string target = "cpu";
    bool measure = false;
    std::string device;  // default: the target's
    std::optional<std::string> baselineTime, baselineMemory;
    bool json = false;
    bool csv = false;
    bool history = true;  // store measured estimates
    bool calibrate = true;  // measure this machine first when the cpu target has no calibration
    MeasureOptions options;
};

// A number flag's value >= low.
std::optional<std::string> numberFlag(const std::string& flag, const std::string& text, int64_t low,
                                      int64_t* out) {
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || n < low)
        return flag + " needs a number >= " + std::to_string(low) + ", not '" + text + "'";
    *out = n;
    return std::nullopt;
}

std::optional<std::string> parseEstimateFlags(const std::vector<std::string>& args,
                                              EstimateFlags& flags) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        const bool takesValue = arg == "--target" || arg == "--device" ||
                                arg == "--baseline-time" || arg == "--baseline-memory" ||
                                arg == "--repeat" || arg == "--warmup" || arg == "--threads" ||
                                arg == "--seed" || arg == "--html";
        if (takesValue && i + 1 >= args.size()) return arg + " needs a value";
        int64_t n = 0;
        if (arg == "--target") {
            flags.target = args[++i];
        } else if (arg == "--device") {
            flags.device = args[++i];
            flags.measure = true;
        } else if (arg == "--baseline-time") {
            flags.baselineTime = args[++i];
        } else if (arg == "--baseline-memory") {
            flags.baselineMemory = args[++i];
        } else if (arg == "--repeat") {
            if (auto e = numberFlag(arg, args[++i], 1, &n)) return e;
            flags.options.repeat = static_cast<int>(n);
        } else if (arg == "--warmup") {
            if (auto e = numberFlag(arg, args[++i], 0, &n)) return e;
            flags.options.warmup = static_cast<int>(n);
        } else if (arg == "--threads") {
            if (auto e = numberFlag(arg, args[++i], 1, &n)) return e;
            flags.options.threads = static_cast<int>(n);
        } else if (arg == "--seed") {
            if (auto e = numberFlag(arg, args[++i], 0, &n)) return e;
            flags.options.seed = static_cast<uint64_t>(n);
        } else if (arg == "--html") {
            flags.html = args[++i];
        } else if (arg == "--measure") {
            flags.measure = true;
        } else if (arg == "--no-history") {
            flags.history = false;
        } else if (arg == "--no-calibrate") {
            flags.calibrate = false;
        } else if (arg == "--json") {
            flags.json = true;
        } else if (arg == "--csv") {
            flags.csv = true;
        } else if (arg.size() > 1 && arg[0] == '-') {
            return "unknown option '" + arg + "'";
        } else {
            flags.files.push_back(arg);
        }
    }
    if (flags.files.empty()) return "no input file";
    if (flags.json && flags.csv) return "--json and --csv exclude each other";
    if (flags.baselineTime.has_value() != flags.baselineMemory.has_value())
        return "--baseline-time and --baseline-memory go together";
    return std::nullopt;
}

Json optionalNumber(std::optional<double> value) {
    return value && std::isfinite(*value) ? Json(*value) : Json(nullptr);
}

Json figuresJson(const EstimateFigures& f) {
    Json j;
    j["unfused_ms"] = f.unfusedSeconds * 1e3;
    j["fused_ms"] = f.fusedSeconds * 1e3;
    j["speedup"] = f.speedup();
    j["peak_bytes_unfused"] = f.peakBytesUnfused;
    j["peak_bytes_fused"] = f.peakBytesFused;
    j["memory_reduction"] = f.memoryReduction();
    j["compile_ms"] = f.compileSeconds * 1e3;
    // null: fusion saves nothing per run, so it never pays off.
    j["break_even_runs"] = f.breakEvenRuns() >= 0 ? Json(f.breakEvenRuns()) : Json(nullptr);
    return j;
}

Json kernelsJson(const std::vector<KernelEstimate>& kernels) {
    Json list = Json::array();
    for (const KernelEstimate& k : kernels)
        list.push_back(
            {{"name", k.name},
             {"opcode", k.opcode},
             {"predicted_ms", k.predictedSeconds * 1e3},
             {"measured_ms", k.measuredSeconds ? Json(*k.measuredSeconds * 1e3) : Json(nullptr)},
             {"error_pct", optionalNumber(k.errorPercent())}});
    return list;
}

std::string breakEvenText(const EstimateFigures& f) {
    const int64_t runs = f.breakEvenRuns();
    if (runs < 0) return "never (fusion saves no time per run)";
    return "pays off after " + std::to_string(runs) + (runs == 1 ? " run" : " runs");
}

void printEstimate(const std::string& name, const Estimate& e) {
    std::printf(
        "%s on %s%s\n", name.c_str(), e.target.c_str(),
        e.device.empty()
            ? " (predicted)"
            : (" (predicted; " + std::string(measuredWord(e)) + " on " + e.device + ")").c_str());
    std::printf("%-10s %12s %12s %9s %14s %14s %9s %12s\n", "", "unfused ms", "fused ms", "speedup",
                "peak unfused", "peak fused", "mem red.", "compile ms");
    auto row = [](const char* label, const EstimateFigures& f) {
        std::printf("%-10s %12.3f %12.3f %8.2fx %14lld %14lld %8.2fx %12.1f\n", label,
                    f.unfusedSeconds * 1e3, f.fusedSeconds * 1e3, f.speedup(),
                    static_cast<long long>(f.peakBytesUnfused),
                    static_cast<long long>(f.peakBytesFused), f.memoryReduction(),
                    f.compileSeconds * 1e3);
    };
    row("predicted", e.predicted);
    if (e.measured) row(measuredWord(e), *e.measured);
    std::printf("break-even (predicted): %s\n", breakEvenText(e.predicted).c_str());
    if (e.measured) {
        std::printf("break-even (%s): %s%s\n", measuredWord(e), e.simulated ? "" : " ",
                    breakEvenText(*e.measured).c_str());
        if (e.devices > 1)
            std::printf(
                "%s: every run covers all %lld devices of the module's grid at once; the "
                "times are the whole grid's on this machine, the peak memory one "
                "device's (not stored in the history)\n",
                measuredWord(e), static_cast<long long>(e.devices));
        if (auto error = e.speedupErrorPercent()) std::printf("speedup error: %+.1f%%\n", *error);
        if (auto error = e.memoryErrorPercent())
            std::printf("memory reduction error: %+.1f%%\n", *error);
        const ErrorSummary kernels = e.kernelErrors();
        if (kernels.count > 0)
            std::printf(
                "kernel time error over %lld kernels: median |error| %.1f%%, worst %.1f%% (%s)\n",
                static_cast<long long>(kernels.count), kernels.medianAbsPercent,
                kernels.worstAbsPercent, kernels.worstKernel.c_str());
        for (const std::string& f : e.fallbacks)
            std::printf("interpreter fallback: %s\n", f.c_str());
    }
}

void printCsv(const std::string& name, const Estimate& e) {
    auto cell = [](std::optional<double> v) {
        return v && std::isfinite(*v) ? std::to_string(*v) : std::string();
    };
    auto module = [&](const char* scope, double predicted, std::optional<double> measured) {
        const std::optional<double> error =
            measured ? signedErrorPercent(predicted, *measured) : std::nullopt;
        std::printf("%s,%s,,%s,%s,%s\n", scope, name.c_str(), cell(predicted).c_str(),
                    cell(measured).c_str(), cell(error).c_str());
    };
    module("module-unfused", e.predicted.unfusedSeconds * 1e3,
           e.measured ? std::optional<double>(e.measured->unfusedSeconds * 1e3) : std::nullopt);
    module("module-fused", e.predicted.fusedSeconds * 1e3,
           e.measured ? std::optional<double>(e.measured->fusedSeconds * 1e3) : std::nullopt);
    auto kernels = [&](const char* scope, const std::vector<KernelEstimate>& list) {
        for (const KernelEstimate& k : list)
            std::printf("%s,%s,%s,%s,%s,%s\n", scope, k.name.c_str(), k.opcode.c_str(),
                        cell(k.predictedSeconds * 1e3).c_str(),
                        cell(k.measuredSeconds ? std::optional<double>(*k.measuredSeconds * 1e3)
                                               : std::nullopt)
                            .c_str(),
                        cell(k.errorPercent()).c_str());
    };
    kernels("kernel-unfused", e.unfusedKernels);
    kernels("kernel-fused", e.fusedKernels);
}

}  // namespace

int runCalc(const std::vector<std::string>& args) {
    CalculatorInput input;
    bool json = false;
    bool haveTime = false, haveMemory = false, haveSpeedup = false, haveReduction = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--json") {
            json = true;
            continue;
        }
        if (arg != "--baseline-time" && arg != "--baseline-memory" && arg != "--speedup" &&
            arg != "--memory-reduction")
            return usageError("calc: unknown option '" + arg + "'");
        if (i + 1 >= args.size()) return usageError("calc: " + arg + " needs a value");
        const std::string& value = args[++i];
        if (arg == "--baseline-time") {
            input.baselineTime = splitTime(value, &input.timeUnit);
            haveTime = true;
        } else if (arg == "--baseline-memory") {
            input.baselineMemory = splitMemory(value, &input.memoryUnit);
            haveMemory = true;
        } else if (arg == "--speedup") {
            input.speedup = value;
            haveSpeedup = true;
        } else {
            input.memoryReduction = value;
            haveReduction = true;
        }
    }
    if (!haveTime || !haveMemory || !haveSpeedup || !haveReduction)
        return usageError(
            "calc needs --baseline-time, --baseline-memory, --speedup and --memory-reduction");
    const CalculatorResult result = calculate(input);
    if (!result.ok()) {
        std::fprintf(stderr, "hloscope-cli: calc: %s\n", result.errors().c_str());
        return kExitUsage;
    }
    if (json)
        std::printf("%s\n", calculatorJson(input, result).dump(2).c_str());
    else
        printCalculator(input, result);
    return kExitOk;
}

namespace {

Json estimateJson(const ReportedEstimate& r) {
    const Estimate& e = r.estimate;
    Json j;
    j["file"] = r.name;
    j["target"] = e.target;
    j["device"] = e.device.empty() ? Json(nullptr) : Json(e.device);
    j["predicted"] = figuresJson(e.predicted);
    if (e.measured) j["measured"] = figuresJson(*e.measured);
    j["simulated"] = e.simulated;
    j["devices"] = e.devices;
    Json error;
    error["speedup_pct"] = optionalNumber(e.speedupErrorPercent());
    error["memory_reduction_pct"] = optionalNumber(e.memoryErrorPercent());
    const ErrorSummary kernels = e.kernelErrors();
    error["kernels"] = {
        {"count", kernels.count},
        {"median_abs_pct", kernels.count ? Json(kernels.medianAbsPercent) : Json(nullptr)},
        {"worst_abs_pct", kernels.count ? Json(kernels.worstAbsPercent) : Json(nullptr)},
        {"worst_kernel", kernels.worstKernel}};
    j["error"] = std::move(error);
    j["kernels"] = {{"unfused", kernelsJson(e.unfusedKernels)},
                    {"fused", kernelsJson(e.fusedKernels)}};
    if (r.baseline) {
        Json b = calculatorJson(*r.baselineInput, *r.baseline);
        b["source"] = e.measured ? measuredWord(e) : "predicted";
        j["baseline"] = std::move(b);
    }
    j["fallbacks"] = e.fallbacks;
    return j;
}

std::string isoNow() {
    const std::time_t now = std::time(nullptr);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buffer;
}

// --measure: the device named, else the target's own (this machine's CPU
// for cpu targets, the simulated TPU of a TPU target's generation). An exit
// code when none measures the target here.
std::optional<int> chooseMeasuringDevice(const EstimateFlags& flags, EstimateOptions& options) {
    options.device = flags.device;
    if (!options.device.empty()) return std::nullopt;
    auto target = resolveTargetDescription(flags.target);
    if (!target.isOk()) return usageError("estimate: " + target.status().message());
    const std::string family(pipelineFamily(target->kind));
    if (std::optional<TpuGeneration> generation = parseTpuGeneration(target->name);
        generation && family == "tpu") {
        options.device = tpuDeviceName(*generation);
    } else if (family != "cpu") {
        std::fprintf(stderr,
                     "hloscope-cli: estimate: no device measures target '%s' here (the %s "
                     "backend is not "
                     "built); name one with --device or leave out --measure\n",
                     flags.target.c_str(), family.c_str());
        return kExitFailed;
    } else {
        options.device = "cpu";
    }
    return std::nullopt;
}

// Measured estimates go into the history (when one is configured); a
// history that cannot be opened is reported, never fatal (null).
std::unique_ptr<EstimateHistory> openEstimateHistory(const EstimateFlags& flags) {
    if (!flags.measure || !flags.history) return nullptr;
    const std::string path = EstimateHistory::defaultPath();
    if (path.empty()) return nullptr;
    auto opened = EstimateHistory::open(path);
    if (opened.isOk()) return std::move(*opened);
    std::fprintf(stderr, "hloscope-cli: estimate: history not stored: %s\n",
                 opened.status().message().c_str());
    return nullptr;
}

// One file's estimate (stored in `history` when it measures this machine),
// with the user's baseline scaled by it; an exit code on failure.
std::optional<int> estimateFile(const std::string& file, const EstimateFlags& flags,
                                const EstimateOptions& options, EstimateHistory* history,
                                std::vector<ReportedEstimate>& reports) {
    const std::string name = displayName(file);
    auto module = loadModuleFromFile(file);
    if (!module.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, module.status()).c_str());
        return kExitFailed;
    }
    auto estimate = estimateModule(**module, options);
    if (!estimate.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, estimate.status()).c_str());
        return kExitFailed;
    }
    // A simulation, or a grid of devices sharing this machine, is no measurement of it.
    if (history && estimate->measuresOneDevice()) {
        auto stored = history->add(historyRecordOf(**module, name, *estimate));
        if (!stored.isOk())
            std::fprintf(stderr, "hloscope-cli: estimate: history not stored: %s\n",
                         stored.status().message().c_str());
    }
    ReportedEstimate report;
    report.name = name;
    report.estimate = std::move(*estimate);
    // A user's own baseline scaled by the measured factors when there
    // are some, else the predicted ones.
    if (flags.baselineTime) {
        const Estimate& e = report.estimate;
        const EstimateFigures& factors = e.measured ? *e.measured : e.predicted;
        CalculatorInput input;
        input.baselineTime = splitTime(*flags.baselineTime, &input.timeUnit);
        input.baselineMemory = splitMemory(*flags.baselineMemory, &input.memoryUnit);
        input.speedup = std::to_string(factors.speedup());
        input.memoryReduction = std::to_string(factors.memoryReduction());
        CalculatorResult result = calculate(input);
        if (!result.ok()) {
            std::fprintf(stderr, "hloscope-cli: estimate: %s\n", result.errors().c_str());
            return kExitUsage;
        }
        report.baselineInput = input;
        report.baseline = result;
    }
    reports.push_back(std::move(report));
    return std::nullopt;
}

// The estimates as JSON, CSV or text, with how the model has done on this
// machine (`accuracy`, from `history`) when known.
void printReports(const EstimateFlags& flags, const std::vector<ReportedEstimate>& reports,
                  const std::optional<HistoryAccuracy>& accuracy, const EstimateHistory* history,
                  const std::string& calibration) {
    Json historyJson;
    if (accuracy)
        historyJson = {{"path", history->path()},
                       {"runs", accuracy->runs},
                       {"median_abs_speedup_error_pct",
                        accuracy->runs ? Json(accuracy->medianAbsPercent) : Json(nullptr)},
                       {"worst_abs_speedup_error_pct",
                        accuracy->runs ? Json(accuracy->worstAbsPercent) : Json(nullptr)}};
    if (flags.json) {
        if (reports.size() == 1) {
            Json j = estimateJson(reports.front());
            if (accuracy) j["history"] = historyJson;
            j["calibration"] = calibration;
            std::printf("%s\n", j.dump(2).c_str());
        } else {
            Json list = Json::array();
            for (const ReportedEstimate& r : reports) {
                Json j = estimateJson(r);
                if (accuracy) j["history"] = historyJson;
                j["calibration"] = calibration;
                list.push_back(std::move(j));
            }
            std::printf("%s\n", list.dump(2).c_str());
        }
    } else if (flags.csv) {
        std::printf("scope,name,opcode,predicted_ms,measured_ms,error_pct\n");
        for (const ReportedEstimate& r : reports) printCsv(r.name, r.estimate);
    } else {
        if (!calibration.empty()) std::printf("target figures: %s\n", calibration.c_str());
        for (const ReportedEstimate& r : reports) {
            printEstimate(r.name, r.estimate);
            if (r.baseline) {
                std::printf("your baseline with the %s factors:\n",
                            r.estimate.measured ? "measured" : "predicted");
                printCalculator(*r.baselineInput, *r.baseline);
            }
        }
        if (accuracy && accuracy->runs > 0)
            std::printf(
                "model accuracy on this machine (%s): median speedup error %.1f%% over %lld runs, "
                "worst "
                "%.1f%% (history: %s)\n",
                reports.front().estimate.target.c_str(), accuracy->medianAbsPercent,
                static_cast<long long>(accuracy->runs), accuracy->worstAbsPercent,
                history->path().c_str());
    }
}

}  // namespace

int runEstimate(const std::vector<std::string>& args) {
    EstimateFlags flags;
    if (auto error = parseEstimateFlags(args, flags)) return usageError("estimate: " + *error);
    // The cpu target's figures are this machine's: measured now when none are cached.
    if (flags.target == "cpu" && flags.calibrate) {
        CpuCalibrationOptions calibration;
        calibration.progress = [](const std::string&, int done, int) {
            if (done == 0)
                std::fprintf(stderr,
                             "hloscope-cli: estimate: this machine has no calibration yet: measuring it "
                             "(as calibrate --quick does, about 2 s; --no-calibrate uses the built-in figures)\n");
        };
        bool measured = false;
        auto target = ensureCpuCalibration(calibration, &measured);
        if (!target.isOk())
            std::fprintf(stderr, "hloscope-cli: estimate: calibration failed, using the built-in figures: %s\n",
                         target.status().message().c_str());
        else if (measured)
            std::fprintf(stderr, "hloscope-cli: estimate: calibration cached in %s\n", cpuTargetCachePath().c_str());
    }
    std::string calibration;
    if (auto target = resolveTargetDescription(flags.target); target.isOk())
        calibration = calibrationSummary(*target, static_cast<int64_t>(std::time(nullptr)));
    EstimateOptions options;
    options.target = flags.target;
    options.measure = flags.options;
    if (flags.measure)
        if (auto exit = chooseMeasuringDevice(flags, options)) return *exit;
    const std::unique_ptr<EstimateHistory> history = openEstimateHistory(flags);
    std::vector<ReportedEstimate> reports;
    for (const std::string& file : flags.files)
        if (auto exit = estimateFile(file, flags, options, history.get(), reports)) return *exit;
    // How the model has done on this machine for this target, history included.
    std::optional<HistoryAccuracy> accuracy;
    if (history && !reports.empty()) {
        auto summary = history->accuracy(reports.front().estimate.target, machineName());
        if (summary.isOk()) accuracy = *summary;
    }
    printReports(flags, reports, accuracy, history.get(), calibration);
    if (!flags.html.empty()) {
        const std::string html = estimateReportHtml(reports, isoNow());
        if (Status written = writeTextFile(flags.html, html); !written.isOk()) {
            std::fprintf(stderr, "hloscope-cli: estimate: %s\n", written.message().c_str());
            return kExitFailed;
        }
        if (!flags.json && !flags.csv) std::printf("report written to %s\n", flags.html.c_str());
    }
    return kExitOk;
}

}  // namespace hloscope::cli
