// The calibration of the `cpu` target: micro-benchmarks of this machine (triad bandwidth,
// multiply-add throughput, the thread pool's dispatch cost) and of the CPU backend itself
// (its fixed costs, bandwidth by working set, row cost, vectorised transcendentals, GEMM and
// convolution rates), written as a target description whose every figure names its source.
// `hloscope-cli calibrate` runs it and caches the result (cpuTargetCachePath); the estimator
// and the GUI run the quick one on first use when no calibration is cached
// (ensureCpuCalibration), so a prediction never uses figures of another machine unless the
// user says so. calibrationSummary (compiler/targets/target_description.h) says which
// figures an estimate used. `calibrate --from-history` refits the efficiency factors afterwards
// (compiler/estimator/calibration.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/targets/target_description.h"
#include "core/support/status.h"

namespace hloscope {

struct CpuCalibrationOptions {
    bool quick = true;  // about 2 s; the full one about 10 s with steadier figures
    // Called before each stage: its name, the stages done and their number.
    std::function<void(const std::string& stage, int done, int total)> progress;
    const std::atomic<bool>* cancel = nullptr;  // checked between stages
};

struct CpuCalibration {
    TargetDescription target;
    std::vector<std::string> notes;  // what could not be measured, and why
};

// Measures this machine. kCancelled when `cancel` was set.
StatusOr<CpuCalibration> calibrateCpu(const CpuCalibrationOptions& options = {});

// Writes `target` to this machine's calibration cache (cpuTargetCachePath); the path written.
StatusOr<std::string> cacheCpuCalibration(const TargetDescription& target);

// This machine's cpu target: the cached calibration, else a quick calibration measured now and
// cached (`measuredNow` set). With nowhere to cache it (no HOME), the measured target is still
// returned.
StatusOr<TargetDescription> ensureCpuCalibration(const CpuCalibrationOptions& options = {},
                                                 bool* measuredNow = nullptr);

}  // namespace hloscope
