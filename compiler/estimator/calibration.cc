#include "compiler/estimator/calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace hloscope {
namespace {

constexpr double kMinFactor = 0.01;

// Whether the sample's predicted time depends on `opClass`'s factor (its
// work, not only its launch, and of that class or transcendental work).
bool informs(const CalibrationSample& sample, OpClass opClass) {
    const KernelTimeParts& p = sample.parts;
    if (opClass == OpClass::kTranscendental) return p.transcendentalSeconds > p.launchSeconds;
    if (p.opClass != opClass) return false;
    return std::max(p.flopsSeconds + p.rowSeconds, p.trafficSeconds) > p.launchSeconds;
}

double weightedLogError(const std::vector<CalibrationSample>& samples,
                        const std::array<double, kOpClassCount>& efficiency) {
    double total = 0;
    for (const CalibrationSample& sample : samples) {
        const double predicted = predictedSeconds(sample, efficiency);
        total += sample.weight * std::fabs(std::log(predicted / sample.measuredSeconds));
    }
    return total;
}

// The weighted median of |predicted / measured - 1| in %: each run's
// preparation weighs the same, as in the fit.
double medianAbsPercent(const std::vector<CalibrationSample>& samples,
                        const std::array<double, kOpClassCount>& efficiency) {
    std::vector<std::pair<double, double>> errors;  // (|error| %, weight)
    double total = 0;
    for (const CalibrationSample& sample : samples) {
        errors.emplace_back(
            std::fabs(predictedSeconds(sample, efficiency) / sample.measuredSeconds - 1) * 100,
            sample.weight);
        total += sample.weight;
    }
    if (errors.empty()) return 0;
    std::sort(errors.begin(), errors.end());
    double seen = 0;
    for (const auto& [error, weight] : errors) {
        seen += weight;
        if (seen >= total / 2) return error;
    }
    return errors.back().first;
}

}  // namespace

double predictedSeconds(const CalibrationSample& sample,
                        const std::array<double, kOpClassCount>& efficiency) {
    return sample.parts.seconds(efficiency) * sample.executions;
}

std::vector<CalibrationSample> calibrationSamplesOf(const std::vector<EstimateHistory::RunKernel>& rows,
                                                    std::set<int64_t>& runs) {
    std::map<std::pair<int64_t, std::string>, int64_t> perPreparation;
    for (const EstimateHistory::RunKernel& row : rows) {
        ++perPreparation[{row.runId, row.kernel.mode}];
        runs.insert(row.runId);
    }
    std::vector<CalibrationSample> samples;
    samples.reserve(rows.size());
    for (const EstimateHistory::RunKernel& row : rows) {
        CalibrationSample sample;
        sample.parts = row.kernel.parts;
        sample.executions = row.kernel.executions;
        sample.measuredSeconds = row.kernel.measuredSeconds;
        sample.weight = 1.0 / static_cast<double>(perPreparation[{row.runId, row.kernel.mode}]);
        samples.push_back(sample);
    }
    return samples;
}

CalibrationFit fitEfficiencies(const std::vector<CalibrationSample>& all,
                               const TargetDescription& target) {
    std::vector<CalibrationSample> samples;
    for (const CalibrationSample& sample : all)
        if (sample.measuredSeconds > 0 && sample.weight > 0 && sample.executions > 0 &&
            sample.parts.seconds(target.efficiency) > 0)
            samples.push_back(sample);

    CalibrationFit fit;
    fit.efficiency = target.efficiency;
    fit.samples = static_cast<int64_t>(samples.size());
    std::array<int64_t, kOpClassCount> informing{};
    for (int c = 0; c < kOpClassCount; ++c)
        for (const CalibrationSample& sample : samples)
            if (informs(sample, static_cast<OpClass>(c))) ++informing[static_cast<size_t>(c)];

    // Coordinate descent: each factor in turn over a log-spaced grid from
    // kMinFactor to 1, then a finer grid around the best, until nothing moves.
    for (int pass = 0; pass < 6; ++pass) {
        bool moved = false;
        for (int c = 0; c < kOpClassCount; ++c) {
            const auto index = static_cast<size_t>(c);
            if (informing[index] < kMinKernelsPerClass) continue;
            const double current = fit.efficiency[index];
            double best = current;
            double bestError = weightedLogError(samples, fit.efficiency);
            auto tryFactor = [&](double factor) {
                std::array<double, kOpClassCount> candidate = fit.efficiency;
                candidate[index] = factor;
                const double error = weightedLogError(samples, candidate);
                if (error < bestError - 1e-12) {
                    bestError = error;
                    best = factor;
                }
            };
            constexpr int kSteps = 120;
            for (int i = 0; i <= kSteps; ++i)
                tryFactor(kMinFactor * std::pow(1 / kMinFactor, static_cast<double>(i) / kSteps));
            const double coarse = best;
            for (int i = -20; i <= 20; ++i)
                tryFactor(std::clamp(coarse * std::pow(1.04, i / 10.0), kMinFactor, 1.0));
            fit.efficiency[index] = best;
            if (std::fabs(best - current) > 1e-6 * current) moved = true;
        }
        if (!moved) break;
    }

    for (int c = 0; c < kOpClassCount; ++c) {
        const auto index = static_cast<size_t>(c);
        ClassFit classFit;
        classFit.opClass = static_cast<OpClass>(c);
        classFit.kernels = informing[index];
        classFit.before = target.efficiency[index];
        classFit.after = fit.efficiency[index];
        classFit.fitted = informing[index] >= kMinKernelsPerClass;
        fit.classes.push_back(classFit);
    }
    fit.medianAbsErrorBefore = medianAbsPercent(samples, target.efficiency);
    fit.medianAbsErrorAfter = medianAbsPercent(samples, fit.efficiency);
    double totalWeight = 0;
    for (const CalibrationSample& sample : samples) totalWeight += sample.weight;
    if (totalWeight > 0) {
        fit.meanAbsLogErrorBefore = weightedLogError(samples, target.efficiency) / totalWeight;
        fit.meanAbsLogErrorAfter = weightedLogError(samples, fit.efficiency) / totalWeight;
    }
    return fit;
}

}  // namespace hloscope
