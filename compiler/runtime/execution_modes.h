// What a measured run needs around an ExecutionDevice, shared by the CLI's
// `run` command and the GUI's execution panel:
//   * the module prepared for an execution mode: `fused` runs the target's
//     whole pipeline, `unfused` the same pipeline without its fusion passes
//     (one kernel per op, every intermediate in memory), so the measured
//     ratio is the effect of fusion alone;
//   * the check of a device's outputs against the reference interpreter's:
//     the largest absolute and relative errors and the per-type tolerance
//     verdict of compareWithTolerance;
//   * one mode measured: prepared, warmed up and timed over repeated runs
//     (the CLI's `run` and `estimate --measure`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/runtime/execution_device.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {

enum class ExecutionMode { kUnfused, kFused };

std::string_view executionModeName(ExecutionMode mode);  // "unfused", "fused"

// True for the passes that fuse ("fusion", "multi-output-fusion", ...).
bool isFusionPassName(std::string_view pass);

// Runs `target`'s pipeline (a family or hardware name, or a target file, as
// targetPipeline takes it) on `module`, without the fusion passes for
// kUnfused. Errors are the pipeline's (a pass failing names it).
StatusOr<std::unique_ptr<HloModule>> prepareForMode(std::unique_ptr<HloModule> module,
                                                    std::string_view target, ExecutionMode mode);

struct OutputCheck {
    double maxAbsError = 0;  // over every element of every output (inf: shapes differ)
    double maxRelError = 0;  // |a - e| / max(|e|, tiny), over elements with |e| > 0
    bool passed = true;      // every output within compareWithTolerance's tolerance
    std::string detail;      // the first difference when not passed
};

OutputCheck checkOutputs(const std::vector<Literal>& expected, const std::vector<Literal>& actual);

// checkOutputs on every device both runs return (a module of several
// devices: device 0's outputs, then ExecutionResult::otherDeviceOutputs):
// the largest errors over them, the first failure's detail prefixed with its
// device ("device 2: ..."). `devicesChecked` (optional) gets how many were
// compared.
OutputCheck checkDeviceOutputs(const ExecutionResult& expected, const ExecutionResult& actual,
                               int64_t* devicesChecked = nullptr);

// A copy of `module` prepared for `mode` on `target`, and how long the
// pipeline (copy included) took.
struct PreparedModule {
    std::shared_ptr<const HloModule> module;
    double pipelineSeconds = 0;
};
StatusOr<PreparedModule> prepareCopyForMode(const HloModule& module, std::string_view target,
                                            ExecutionMode mode);

// The median of `values` (mean of the middle two for an even count; 0 for none).
double median(std::vector<double> values);

struct MeasureOptions {
    int warmup = 1;     // runs before the timed ones (the first compiles)
    int repeat = 5;     // timed runs, >= 1
    int threads = 0;    // 0: the device's default
    uint64_t seed = 0;  // rng ops
};

struct ModeMeasurement {
    ExecutionMode mode = ExecutionMode::kFused;
    std::vector<double> runSeconds;  // the timed runs
    int threads = 0;             // MeasureOptions::threads it ran with (0: the device's default)
    double pipelineSeconds = 0;  // the target's pass pipeline
    double compileSeconds = 0;   // the device's code generation (first run)
    int64_t kernels = 0;
    int64_t assignedPeakBytes = 0;  // buffer assignment's peak of the prepared module
    int64_t devicePeakBytes = 0;    // what the device allocated for a run (0: it does not say)
    std::vector<MeasuredTime>
        kernelTimes;  // the last run's kernels, each with its median over the timed runs
    std::vector<std::string> fallbacks;
    std::optional<OutputCheck> check;  // when a reference was given
    int64_t devicesChecked = 0;        // devices the check compared (checkDeviceOutputs)
    // Against the module's own numerics when the reference was computed on
    // the device's (ExecutionDevice::numericsModule): the difference the
    // device's numerics make, reported rather than checked.
    std::optional<OutputCheck> differenceFromOwnNumerics;
    std::shared_ptr<const HloModule> module;  // as prepared
    bool simulated = false;                   // times from a simulator (ExecutionResult::simulated)
    int64_t devices = 1;                      // devices that ran (ExecutionResult::devices)
    std::vector<TimelineEvent> timeline;      // the last run's, when the device models its units

    double medianSeconds() const;
    double minSeconds() const;
    double maxSeconds() const;
};

// Prepares a copy of `module` for `mode` on `target`, runs it
// warmup + repeat times on `device` with `args` and, given a `reference`
// run, checks the first run's outputs against it on every device both
// return (checkDeviceOutputs).
StatusOr<ModeMeasurement> measureMode(const HloModule& module, std::string_view target,
                                      ExecutionMode mode, const ExecutionDevice& device,
                                      const std::vector<Literal>& args,
                                      const MeasureOptions& options,
                                      const ExecutionResult* reference = nullptr);

// measureMode for several modes at once, their runs interleaved (round i
// runs every mode once), so that a machine whose speed drifts during the
// measurement affects every mode alike; one report per mode, in order.
StatusOr<std::vector<ModeMeasurement>> measureModes(
    const HloModule& module, std::string_view target, const std::vector<ExecutionMode>& modes,
    const ExecutionDevice& device, const std::vector<Literal>& args, const MeasureOptions& options,
    const ExecutionResult* reference = nullptr, const std::vector<Literal>* ownNumerics = nullptr);

}  // namespace hloscope
