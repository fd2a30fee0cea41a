#include "compiler/estimator/estimate.h"

#include "compiler/layers/fusion_comparison.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/cost/performance_model.h"
#include "compiler/runtime/execution_device.h"
#include "compiler/targets/target_description.h"
#include "core/interpreter/interpreter.h"

namespace hloscope {

std::vector<KernelEstimate> kernelEstimatesOf(const ModulePrediction& prediction,
                                              const std::vector<MeasuredTime>* measured) {
    std::unordered_map<std::string, double> byName;
    if (measured)
        for (const MeasuredTime& time : *measured) byName[time.name] += time.seconds;
    std::vector<KernelEstimate> kernels;
    for (const KernelPrediction& kernel : prediction.kernels) {
        if (!kernel.instruction || kernel.totalSeconds <= 0) continue;
        KernelEstimate estimate;
        estimate.name = kernel.instruction->name();
        estimate.opcode = std::string(hloOpcodeString(kernel.instruction->opcode()));
        estimate.predictedSeconds = kernel.totalSeconds * kernel.executions;
        estimate.parts = kernel.parts;
        estimate.executions = kernel.executions;
        if (auto it = byName.find(estimate.name); it != byName.end())
            estimate.measuredSeconds = it->second;
        kernels.push_back(std::move(estimate));
    }
    return kernels;
}

std::optional<double> signedErrorPercent(double predicted, double measured) {
    if (!(measured > 0) || !std::isfinite(predicted)) return std::nullopt;
    return (predicted - measured) / measured * 100.0;
}

double EstimateFigures::speedup() const {
    return unfusedSeconds > 0 && fusedSeconds > 0 ? unfusedSeconds / fusedSeconds : 0;
}

double EstimateFigures::memoryReduction() const {
    return peakBytesUnfused > 0 && peakBytesFused > 0
               ? static_cast<double>(peakBytesUnfused) / static_cast<double>(peakBytesFused)
               : 0;
}

int64_t EstimateFigures::breakEvenRuns() const {
    const double saved = unfusedSeconds - fusedSeconds;
    if (!(saved > 0)) return -1;
    // (Less a hair, so 1 s over savings of 0.3 - 0.2 s is 10 runs, not 11.)
    const double runs = std::ceil(compileSeconds / saved * (1 - 1e-12));
    if (!std::isfinite(runs) || runs > 9e18) return -1;
    return std::max<int64_t>(1, static_cast<int64_t>(runs));
}

std::optional<double> KernelEstimate::errorPercent() const {
    if (!measuredSeconds) return std::nullopt;
    return signedErrorPercent(predictedSeconds, *measuredSeconds);
}

std::optional<double> Estimate::speedupErrorPercent() const {
    if (!measured) return std::nullopt;
    return signedErrorPercent(predicted.speedup(), measured->speedup());
}

std::optional<double> Estimate::memoryErrorPercent() const {
    if (!measured) return std::nullopt;
    return signedErrorPercent(predicted.memoryReduction(), measured->memoryReduction());
}

ErrorSummary Estimate::kernelErrors() const {
    ErrorSummary summary;
    std::vector<double> errors;
    for (const auto* kernels : {&unfusedKernels, &fusedKernels})
        for (const KernelEstimate& kernel : *kernels)
            if (auto error = kernel.errorPercent()) {
                errors.push_back(std::fabs(*error));
                if (errors.back() >= summary.worstAbsPercent) {
                    summary.worstAbsPercent = errors.back();
                    summary.worstKernel = kernel.name;
                }
            }
    summary.count = static_cast<int64_t>(errors.size());
    summary.medianAbsPercent = median(std::move(errors));
    return summary;
}

namespace {

// Predicted figures of the two preparations; measured ones when given.
Estimate estimateOf(const PreparedModule& unfused, const PreparedModule& fused,
                    const TargetDescription& target, const ModeMeasurement* unfusedRun,
                    const ModeMeasurement* fusedRun) {
    Estimate estimate;
    estimate.target = target.name;
    // A module that already held fusions (an XLA dump after optimization) keeps them without
    // the fusion passes: its unfused prediction takes every fusion apart, so the predicted
    // speedup is what its own fusion buys.
    const ModulePrediction unfusedPrediction = holdsFusions(*unfused.module) ? predictUnfused(*unfused.module, target)
                                                                             : predictModule(*unfused.module, target);
    const ModulePrediction fusedPrediction = predictModule(*fused.module, target);
    estimate.predicted.unfusedSeconds = unfusedPrediction.totalSeconds;
    estimate.predicted.fusedSeconds = fusedPrediction.totalSeconds;
    estimate.predicted.peakBytesUnfused = peakMemoryBytesWithOutputsHeld(*unfused.module);
    estimate.predicted.peakBytesFused = peakMemoryBytesWithOutputsHeld(*fused.module);
    // What compiling costs without a device: the fused pipeline's own time.
    estimate.predicted.compileSeconds = fused.pipelineSeconds;
    estimate.unfusedKernels =
        kernelEstimatesOf(unfusedPrediction, unfusedRun ? &unfusedRun->kernelTimes : nullptr);
    estimate.fusedKernels =
        kernelEstimatesOf(fusedPrediction, fusedRun ? &fusedRun->kernelTimes : nullptr);
    if (unfusedRun && fusedRun) {
        EstimateFigures measured;
        measured.unfusedSeconds = unfusedRun->medianSeconds();
        measured.fusedSeconds = fusedRun->medianSeconds();
        measured.peakBytesUnfused = unfusedRun->devicePeakBytes;
        measured.peakBytesFused = fusedRun->devicePeakBytes;
        // A simulator without an allocator (tpu-sim) holds what buffer
        // assignment of its own pipeline's module (padded, tiled) says.
        if (unfusedRun->simulated && measured.peakBytesUnfused == 0)
            measured.peakBytesUnfused = estimate.predicted.peakBytesUnfused;
        if (fusedRun->simulated && measured.peakBytesFused == 0)
            measured.peakBytesFused = estimate.predicted.peakBytesFused;
        measured.compileSeconds = fusedRun->pipelineSeconds + fusedRun->compileSeconds;
        estimate.measured = measured;
        estimate.fallbacks = fusedRun->fallbacks;
    }
    return estimate;
}

}  // namespace

Estimate estimateFromMeasurements(const ModeMeasurement& unfused, const ModeMeasurement& fused,
                                  const TargetDescription& target, const std::string& device) {
    // Predicted for the cores the runs had.
    TargetDescription used = target;
    if (unfused.threads > 0) used.cores = std::min<int64_t>(used.cores, unfused.threads);
    Estimate estimate = estimateOf({unfused.module, unfused.pipelineSeconds},
                                   {fused.module, fused.pipelineSeconds}, used, &unfused, &fused);
    estimate.device = device;
    estimate.simulated = unfused.simulated || fused.simulated;
    estimate.devices = std::max(unfused.devices, fused.devices);
    return estimate;
}

const char* measuredWord(const Estimate& estimate) {
    return estimate.simulated ? "simulated" : "measured";
}

StatusOr<Estimate> estimateModule(const HloModule& module, const EstimateOptions& options) {
    HLO_ASSIGN_OR_RETURN(TargetDescription target, resolveTargetDescription(options.target));
    if (options.device.empty()) {
        HLO_ASSIGN_OR_RETURN(PreparedModule unfused,
                             prepareCopyForMode(module, options.target, ExecutionMode::kUnfused));
        HLO_ASSIGN_OR_RETURN(PreparedModule fused,
                             prepareCopyForMode(module, options.target, ExecutionMode::kFused));
        return estimateOf(unfused, fused, target, nullptr, nullptr);
    }
    HLO_ASSIGN_OR_RETURN(ExecutionDevicePtr device, findDevice(options.device));
    std::string whyNot;
    if (!device->available(&whyNot))
        return Status(StatusCode::kFailedPrecondition,
                      "device '" + options.device + "' cannot run here: " + whyNot);
    const std::vector<Literal> args =
        makeRandomArguments(*module.entryComputation(), options.measure.seed);
    HLO_ASSIGN_OR_RETURN(
        std::vector<ModeMeasurement> measured,
        measureModes(module, options.target, {ExecutionMode::kUnfused, ExecutionMode::kFused},
                     *device, args, options.measure));
    const ModeMeasurement& unfused = measured[0];
    const ModeMeasurement& fused = measured[1];
    return estimateFromMeasurements(unfused, fused, target, device->name());
}

}  // namespace hloscope
