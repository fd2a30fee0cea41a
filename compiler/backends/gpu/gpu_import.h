// Reading a GPU machine's results back (what `hloscope-cli import-run` and
// the execution panel's "Import GPU results" do): for each plan directory
// (DIR itself when it holds plan.json, else DIR/unfused and DIR/fused), the
// plan, the runner's results, the outputs checked against the reference
// interpreter run on the plan's inputs (a sampled output at its sampled
// elements), and the run as a ModeMeasurement the estimator takes.
#pragma once

#include <string>
#include <vector>

#include "compiler/backends/gpu/gpu_plan.h"
#include "compiler/runtime/execution_modes.h"
#include "core/support/status.h"

namespace hloscope {

struct ImportedGpuRun {
    std::string dir;
    GpuPlanFiles files;
    GpuRunResults results;
    OutputCheck check;
    bool sampled = false;         // some output was checked on a sample of its elements
    ModeMeasurement measurement;  // module: the prepared module the plan ran
};

// One plan directory.
StatusOr<ImportedGpuRun> importGpuRun(const std::string& dir);
// DIR, or DIR/unfused and DIR/fused (in that order): an error naming the
// directory when none holds a plan.
StatusOr<std::vector<ImportedGpuRun>> importGpuRuns(const std::string& dir);

// The GPU target a device's results are predicted on: a100 for an A100,
// h200 for an H200, h100 otherwise.
std::string gpuTargetForDevice(const std::string& deviceName);

}  // namespace hloscope
