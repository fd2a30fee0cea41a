// hloscope-cli's simulated-TPU pieces for `run --device tpu-sim`: each
// mode's simulation in detail (per-kernel time and MXU/VPU/HBM utilisation,
// VMEM working sets and their notes, the padding of the tiled layouts), as
// text or as a JSON object per mode.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "compiler/runtime/execution_device.h"
#include "compiler/runtime/execution_modes.h"

namespace hloscope::cli {

// Whether `device` is the simulated TPU (any generation).
bool isTpuSimulator(const ExecutionDevice& device);

// Prints the simulation of each measured mode (the module it ran). Errors
// of the simulation itself are printed, never fatal: the run has its times.
void printTpuSimulations(const ExecutionDevice& device,
                         const std::vector<ModeMeasurement>& reports);

// {"total_ms", "analytical_ms", "mxu_utilisation", ..., "logical_bytes",
// "padded_bytes", "kernels": [...], "notes": [...]} for one mode; null when
// the device is no simulated TPU or the simulation fails.
nlohmann::ordered_json tpuSimulationJson(const ExecutionDevice& device,
                                         const ModeMeasurement& report);

}  // namespace hloscope::cli
