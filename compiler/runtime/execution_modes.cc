#include "compiler/runtime/execution_modes.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/pipeline/bisect.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/targets/targets.h"
#include "core/primitive_type.h"

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

bool isFusionPassName(std::string_view pass) { return pass.find("fusion") != std::string_view::npos; }

StatusOr<std::unique_ptr<HloModule>> prepareForMode(std::unique_ptr<HloModule> module, std::string_view target,
                                                    ExecutionMode mode) {
    HLO_ASSIGN_OR_RETURN(Pipeline pipeline, targetPipeline(target));
    if (mode == ExecutionMode::kUnfused)
        for (PipelineStep& step : pipeline.steps)
            if (isFusionPassName(step.pass)) step.enabled = false;
    RunnerOptions options;
    options.checkChanges = false;  // measured runs need the result, not the change log
    HLO_ASSIGN_OR_RETURN(auto runner, PipelineRunner::create(*module, std::move(pipeline), options));
    HLO_RETURN_IF_ERROR(runner->runAll());
    return module;
}

OutputCheck checkOutputs(const std::vector<Literal>& expected, const std::vector<Literal>& actual) {
    OutputCheck check;
    if (expected.size() != actual.size()) {
        check.maxAbsError = check.maxRelError = kInf;
        check.passed = false;
        check.detail = std::to_string(actual.size()) + " outputs, the reference has " + std::to_string(expected.size());
        return check;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
        accumulate(expected[i], actual[i], check);
        if (check.passed) {
            std::string why = compareWithTolerance(expected[i], actual[i]);
            if (!why.empty()) {
                check.passed = false;
                check.detail = expected.size() > 1 ? "output " + std::to_string(i) + ": " + why : why;
            }
        }
    }
    return check;
}

}  // namespace hloscope
