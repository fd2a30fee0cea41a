// Calibration from history: re-fits a target's efficiency factors (one per
// op class, TargetDescription::efficiency) to the kernels the estimator has
// measured on this machine (EstimateHistory::kernels), so the performance
// model learns what the backend really achieves per class of work.
//
// Each kernel's prediction before efficiency factors (KernelTimeParts) is
// fixed; the fit chooses the factors that minimise the weighted mean
// |log(predicted / measured)| (a ratio error: a kernel 2x too slow and one
// 2x too fast weigh the same; robust to the odd preempted run). Each run's
// preparation (unfused or fused) weighs the same in total, so a module with
// 200 kernels does not drown one with 3. Factors stay in (0, 1] (what a
// target description allows) and a class keeps its factor unless at least
// kMinKernelsPerClass kernels inform it (kernels whose predicted work is
// below their launch cost inform nothing).
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "compiler/cost/performance_model.h"
#include "compiler/estimator/history.h"
#include "compiler/targets/target_description.h"

namespace hloscope {

struct CalibrationSample {
    KernelTimeParts parts;  // one execution
    double executions = 1;
    double measuredSeconds = 0;  // all executions
    double weight = 1;
};

struct ClassFit {
    OpClass opClass = OpClass::kElementwise;
    int64_t kernels = 0;  // samples informing this class
    double before = 1;    // factor before the fit
    double after = 1;     // fitted factor (== before when not fitted)
    bool fitted = false;
};

struct CalibrationFit {
    std::array<double, kOpClassCount> efficiency{};
    std::vector<ClassFit> classes;  // one per op class
    int64_t samples = 0;
    // Weighted median of |predicted / measured - 1| over the samples, in %
    // (weights as in the fit): with the old factors, and with the fitted ones.
    double medianAbsErrorBefore = 0;
    double medianAbsErrorAfter = 0;
    // The fit's objective: the weighted mean |log(predicted / measured)|,
    // before and after. The fit never raises it; the median above can move
    // either way on real measurements (it answers to the middle kernel only).
    double meanAbsLogErrorBefore = 0;
    double meanAbsLogErrorAfter = 0;
};

inline constexpr int64_t kMinKernelsPerClass = 3;

// Predicted seconds of a sample (all executions) with the given factors.
double predictedSeconds(const CalibrationSample& sample,
                        const std::array<double, kOpClassCount>& efficiency);

// The stored kernels of a history as samples: each stored run's preparation (unfused, fused)
// weighs 1 in total. `runs` gets the ids of the runs they come from.
std::vector<CalibrationSample> calibrationSamplesOf(const std::vector<EstimateHistory::RunKernel>& rows,
                                                    std::set<int64_t>& runs);

// Fits the factors of `target` to the samples.
CalibrationFit fitEfficiencies(const std::vector<CalibrationSample>& samples,
                               const TargetDescription& target);

}  // namespace hloscope
