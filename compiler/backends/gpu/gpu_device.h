// GpuDevice ("gpu"): the GPU backend as an ExecutionDevice. A run builds the
// module's execution plan (gpu_plan.h; PTX for the GPU's SM version, cached
// by module text), writes it to a temporary directory and has
// hloscope-gpu-runner execute it (the runner loads the CUDA driver itself;
// this process never links CUDA), then reads back the outputs and the
// runner's CUDA-event timings: wallSeconds is the median GPU time of the
// runner's timed runs, kernelTimes the per-step medians by instruction.
//
// The runner is found as $HLOSCOPE_GPU_RUNNER, beside this executable, or on
// PATH. available() asks it for the device (`--info`, once); without a GPU
// or driver it is false and says "no GPU found: ..." with the runner's
// reason.
//
// registerGpuBackend() adds the device to the registry (explicitly, at
// start-up, like the CPU backend).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/execution_device.h"
#include "core/support/status.h"

namespace hloscope {

class GpuDevice : public ExecutionDevice {
public:
    GpuDevice();
    ~GpuDevice() override;
    std::string name() const override { return "gpu"; }
    std::string kind() const override { return "gpu"; }
    std::string description() const override;
    bool available(std::string* whyNot) const override;
    StatusOr<ExecutionResult> run(const HloModule& module, const std::vector<Literal>& args,
                                  const ExecutionOptions& options) const override;
    // Plans for a GPU machine (gpu_plan.h, read back with gpu_import.h);
    // options.target is the SM version (empty: sm_90). Needs no GPU here.
    bool supportsPlanExport() const override { return true; }
    StatusOr<PlanExportSummary> exportPlan(const HloModule& module, const HloModule& reference,
                                           const PlanExportOptions& options) const override;
    StatusOr<std::vector<ImportedPlanRun>> importResults(const std::string& dir) const override;

    // What the runner reported about the GPU (name, compute_capability,
    // sm_count, driver, ...); empty when none was found.
    std::map<std::string, std::string> deviceInfo() const;
    // The SM version plans are built for: the GPU's, else sm_90.
    std::string smVersion() const;

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// The runner's path ($HLOSCOPE_GPU_RUNNER, beside this executable, or on
// PATH), or an empty string.
std::string findGpuRunner();

// A program run to completion: its exit code (-1 when it died of a signal)
// and what it printed.
struct ProcessOutput {
    int exitCode = -1;
    std::string out;
    std::string err;
};
StatusOr<ProcessOutput> runProgram(const std::vector<std::string>& argv);

// The SM version ("sm_90") of a compute capability ("9.0"); the nearest
// supported one below it; "" when older than sm_80.
std::string smForComputeCapability(const std::string& capability);

// Registers GpuDevice (idempotent).
void registerGpuBackend();

}  // namespace hloscope
