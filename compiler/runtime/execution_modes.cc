#include "compiler/runtime/execution_modes.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/pipeline/bisect.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "core/ir/primitive_type.h"

namespace hloscope {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Largest absolute and relative difference of two literals of one shape
// (NaN matching NaN and equal infinities count as equal).
void accumulate(const Literal& expected, const Literal& actual, OutputCheck& check) {
    if (expected.isTuple() || actual.isTuple()) {
        if (!expected.isTuple() || !actual.isTuple() ||
            expected.tupleElements().size() != actual.tupleElements().size()) {
            check.maxAbsError = check.maxRelError = kInf;
            return;
        }
        for (size_t i = 0; i < expected.tupleElements().size(); ++i)
            accumulate(expected.tupleElements()[i], actual.tupleElements()[i], check);
        return;
    }
    if (!expected.shape().isArray() || !actual.shape().isArray()) return;
    if (expected.elementType() != actual.elementType() ||
        expected.shape().dimensions() != actual.shape().dimensions()) {
        check.maxAbsError = check.maxRelError = kInf;
        return;
    }
    const bool complex = primitive_util::isComplex(expected.elementType());
    for (int64_t i = 0; i < expected.elementCount(); ++i) {
        double difference = 0, magnitude = 0;
        if (complex) {
            difference = std::abs(expected.getAsComplex(i) - actual.getAsComplex(i));
            magnitude = std::abs(expected.getAsComplex(i));
        } else {
            const double e = expected.getAsDouble(i), a = actual.getAsDouble(i);
            if (std::isnan(e) || std::isnan(a)) {
                if (std::isnan(e) != std::isnan(a)) check.maxAbsError = check.maxRelError = kInf;
                continue;
            }
            if (std::isinf(e) || std::isinf(a)) {
                if (e != a) check.maxAbsError = check.maxRelError = kInf;
                continue;
            }
            difference = std::abs(e - a);
            magnitude = std::abs(e);
        }
        if (std::isnan(difference)) continue;  // NaN components in both complex values
        check.maxAbsError = std::max(check.maxAbsError, difference);
        if (magnitude > 0) check.maxRelError = std::max(check.maxRelError, difference / magnitude);
    }
}

}  // namespace

std::string_view executionModeName(ExecutionMode mode) {
    return mode == ExecutionMode::kUnfused ? "unfused" : "fused";
}

bool isFusionPassName(std::string_view pass) {
    return pass.find("fusion") != std::string_view::npos;
}

StatusOr<std::unique_ptr<HloModule>> prepareForMode(std::unique_ptr<HloModule> module,
                                                    std::string_view target, ExecutionMode mode) {
    HLO_ASSIGN_OR_RETURN(Pipeline pipeline, targetPipeline(target));
    if (mode == ExecutionMode::kUnfused)
        for (PipelineStep& step : pipeline.steps)
            if (isFusionPassName(step.pass)) step.enabled = false;
    RunnerOptions options;
    options.checkChanges = false;  // measured runs need the result, not the change log
    HLO_ASSIGN_OR_RETURN(auto runner,
                         PipelineRunner::create(*module, std::move(pipeline), options));
    HLO_RETURN_IF_ERROR(runner->runAll());
    return module;
}

OutputCheck checkOutputs(const std::vector<Literal>& expected, const std::vector<Literal>& actual) {
    OutputCheck check;
    if (expected.size() != actual.size()) {
        check.maxAbsError = check.maxRelError = kInf;
        check.passed = false;
        check.detail = std::to_string(actual.size()) + " outputs, the reference has " +
                       std::to_string(expected.size());
        return check;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
        accumulate(expected[i], actual[i], check);
        if (check.passed) {
            std::string why = compareWithTolerance(expected[i], actual[i]);
            if (!why.empty()) {
                check.passed = false;
                check.detail =
                    expected.size() > 1 ? "output " + std::to_string(i) + ": " + why : why;
            }
        }
    }
    return check;
}

OutputCheck checkDeviceOutputs(const ExecutionResult& expected, const ExecutionResult& actual,
                               int64_t* devicesChecked) {
    OutputCheck check = checkOutputs(expected.outputs, actual.outputs);
    const size_t others =
        std::min(expected.otherDeviceOutputs.size(), actual.otherDeviceOutputs.size());
    for (size_t d = 0; d < others; ++d) {
        const OutputCheck device =
            checkOutputs(expected.otherDeviceOutputs[d], actual.otherDeviceOutputs[d]);
        check.maxAbsError = std::max(check.maxAbsError, device.maxAbsError);
        check.maxRelError = std::max(check.maxRelError, device.maxRelError);
        if (check.passed && !device.passed) {
            check.passed = false;
            check.detail = "device " + std::to_string(d + 1) + ": " + device.detail;
        }
    }
    if (devicesChecked) *devicesChecked = 1 + static_cast<int64_t>(others);
    return check;
}

StatusOr<PreparedModule> prepareCopyForMode(const HloModule& module, std::string_view target,
                                            ExecutionMode mode) {
    const auto start = std::chrono::steady_clock::now();
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> copy,
                         prepareForMode(module.clone(), target, mode));
    PreparedModule prepared;
    prepared.pipelineSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    prepared.module = std::move(copy);
    return prepared;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double ModeMeasurement::medianSeconds() const { return median(runSeconds); }

double ModeMeasurement::minSeconds() const {
    return runSeconds.empty() ? 0 : *std::min_element(runSeconds.begin(), runSeconds.end());
}

double ModeMeasurement::maxSeconds() const {
    return runSeconds.empty() ? 0 : *std::max_element(runSeconds.begin(), runSeconds.end());
}

StatusOr<std::vector<ModeMeasurement>> measureModes(
    const HloModule& module, std::string_view target, const std::vector<ExecutionMode>& modes,
    const ExecutionDevice& device, const std::vector<Literal>& args, const MeasureOptions& options,
    const ExecutionResult* reference, const std::vector<Literal>* ownNumerics) {
    std::vector<ModeMeasurement> reports(modes.size());
    for (size_t m = 0; m < modes.size(); ++m) {
        ModeMeasurement& report = reports[m];
        report.mode = modes[m];
        report.threads = options.threads;
        HLO_ASSIGN_OR_RETURN(PreparedModule prepared, prepareCopyForMode(module, target, modes[m]));
        report.pipelineSeconds = prepared.pipelineSeconds;
        report.assignedPeakBytes = peakMemoryBytes(*prepared.module);
        report.module = std::move(prepared.module);
    }
    ExecutionOptions run;
    run.threads = options.threads;
    run.rngSeed = options.seed;
    const int total = std::max(0, options.warmup) + std::max(1, options.repeat);
    // Each kernel's time: its median over the timed runs (one slow run, a
    // page fault or a preempted thread, must not decide a kernel's figure).
    std::vector<std::unordered_map<std::string, std::vector<double>>> kernelSamples(modes.size());
    // Round by round, every mode once per round: a machine whose speed
    // drifts (other tenants, frequency, page placement) slows all modes of
    // a round alike, so their ratio stays fair.
    for (int i = 0; i < total; ++i) {
        for (size_t m = 0; m < modes.size(); ++m) {
            ModeMeasurement& report = reports[m];
            HLO_ASSIGN_OR_RETURN(ExecutionResult result, device.run(*report.module, args, run));
            if (i == 0) {
                report.compileSeconds = result.compileSeconds;
                report.fallbacks = result.fallbacks;
                if (reference)
                    report.check = checkDeviceOutputs(*reference, result, &report.devicesChecked);
                if (ownNumerics)
                    report.differenceFromOwnNumerics = checkOutputs(*ownNumerics, result.outputs);
            }
            if (i >= total - std::max(1, options.repeat)) {
                report.runSeconds.push_back(result.wallSeconds);
                for (const MeasuredTime& time : result.kernelTimes)
                    kernelSamples[m][time.name].push_back(time.seconds);
            }
            report.devicePeakBytes = std::max(report.devicePeakBytes, result.peakBytes);
            report.kernels = static_cast<int64_t>(result.kernelTimes.size());
            report.kernelTimes = std::move(result.kernelTimes);
            report.simulated = result.simulated;
            report.devices = result.devices;
            report.timeline = std::move(result.timeline);
        }
    }
    for (size_t m = 0; m < modes.size(); ++m)
        for (MeasuredTime& time : reports[m].kernelTimes)
            if (auto it = kernelSamples[m].find(time.name); it != kernelSamples[m].end())
                time.seconds = median(it->second);
    return reports;
}

StatusOr<ModeMeasurement> measureMode(const HloModule& module, std::string_view target,
                                      ExecutionMode mode, const ExecutionDevice& device,
                                      const std::vector<Literal>& args,
                                      const MeasureOptions& options,
                                      const ExecutionResult* reference) {
    HLO_ASSIGN_OR_RETURN(std::vector<ModeMeasurement> reports,
                         measureModes(module, target, {mode}, device, args, options, reference));
    return std::move(reports.front());
}

}  // namespace hloscope
