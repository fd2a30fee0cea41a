// The estimate: what XLA-style fusion buys one module on one target, and how
// far to trust it. Predicted figures come from the performance model
// (compiler/cost/performance_model.h) on the module prepared unfused and
// fused (compiler/runtime/execution_modes.h: the target's pipeline without
// and with its fusion passes) and from buffer assignment's peaks (the
// entry's outputs held for the whole run, as the runtime holds them); measured
// ones from running both preparations on an execution device. Compile
// overhead is part of it: the fused pipeline's own time (plus the device's
// code generation when measured) against the time fusion saves per run
// gives the break-even point, since a one-off run of a small model can cost
// more to compile than fusion saves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/cost/performance_model.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

// (predicted - measured) / measured in %; nullopt unless measured > 0 and
// predicted is finite.
std::optional<double> signedErrorPercent(double predicted, double measured);

struct EstimateFigures {
    double unfusedSeconds = 0;
    double fusedSeconds = 0;
    int64_t peakBytesUnfused = 0;
    int64_t peakBytesFused = 0;
    double compileSeconds =
        0;  // of the fused module (pipeline, plus code generation when measured)

    double speedup() const;          // unfused / fused; 0 when either is unknown
    double memoryReduction() const;  // unfused / fused peak; 0 when either is unknown
    // Runs after which the time fusion saves repays compileSeconds:
    // ceil(compile / (unfused - fused)), at least 1; -1 when fusion saves
    // nothing per run (it never pays off).
    int64_t breakEvenRuns() const;
};

// One kernel of a prepared module: its predicted time and, when the module
// ran, its measured one.
struct KernelEstimate {
    std::string name;
    std::string opcode;
    double predictedSeconds = 0;  // all executions
    KernelTimeParts parts;        // one execution, before efficiency factors
    double executions = 1;        // trip counts of enclosing loops
    std::optional<double> measuredSeconds;
    // (predicted - measured) / measured in %, when measured and nonzero.
    std::optional<double> errorPercent() const;
};

// Median and worst |error| over a set of kernels.
struct ErrorSummary {
    int64_t count = 0;
    double medianAbsPercent = 0;
    double worstAbsPercent = 0;
    std::string worstKernel;
};

struct Estimate;
// "simulated" or "measured": how an estimate's device figures were obtained.
const char* measuredWord(const Estimate& estimate);

struct Estimate {
    std::string target;  // the hardware model ("cpu", "h100", ...)
    std::string device;  // the device it was measured on; empty when only predicted
    // The "measured" figures come from a simulator (tpu-sim), not a clock:
    // reports label them "simulated".
    bool simulated = false;
    // Devices that ran at once: a module of several devices (replicas x
    // partitions) times its whole grid, every device sharing this machine's
    // cores (or one GPU), which is no measurement of one device's time.
    int64_t devices = 1;
    EstimateFigures predicted;
    std::optional<EstimateFigures> measured;
    std::vector<KernelEstimate> unfusedKernels;
    std::vector<KernelEstimate> fusedKernels;
    std::vector<std::string> fallbacks;  // instructions the device left to the interpreter

    // Whether the figures measure this machine's hardware running the module
    // as the model predicts it: neither simulated nor a grid of devices
    // sharing it. Only such estimates go into the estimator's history.
    bool measuresOneDevice() const { return !simulated && devices == 1; }

    // Signed error of the predicted speedup against the measured one, in %.
    std::optional<double> speedupErrorPercent() const;
    // Signed error of the predicted memory reduction against the measured one, in %.
    std::optional<double> memoryErrorPercent() const;
    // Over the measured kernels of both modes.
    ErrorSummary kernelErrors() const;
};

struct EstimateOptions {
    std::string target =
        "cpu";           // a hardware name or target .json, as resolveTargetDescription takes it
    std::string device;  // measure on this registered device; empty: predict only
    MeasureOptions measure;
};

StatusOr<Estimate> estimateModule(const HloModule& module, const EstimateOptions& options);

// A prepared module's kernels with their predicted times and, when given,
// measured ones matched by instruction name (summed when a name repeats).
std::vector<KernelEstimate> kernelEstimatesOf(const ModulePrediction& prediction,
                                              const std::vector<MeasuredTime>* measured);

// The estimate of two measured preparations of one module (what `run`
// measured on `device`), predicted on `target`.
Estimate estimateFromMeasurements(const ModeMeasurement& unfused, const ModeMeasurement& fused,
                                  const TargetDescription& target, const std::string& device);

}  // namespace hloscope
