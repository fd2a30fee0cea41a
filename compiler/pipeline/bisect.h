// Semantic checking of a pipeline: evaluate the module with the reference
// interpreter on seeded random inputs before the pipeline, and name a pass
// whose results differ beyond a per-type tolerance from those of its input
// (integers and pred exactly; f64 1e-9, f32 1e-3, f16/bf16 1e-2, 8-bit and
// smaller floats 0.125, relative to the value's magnitude or absolute below
// 1; NaN must stay NaN, infinities must match).
//
// Two strategies. kBinary (the default) keeps a copy of the module after
// every pass that changed it, evaluates the pipeline's result, and only when
// that differs searches the copies by halving: two evaluations when nothing
// changes, about log2(changing passes) more when something does, and the
// pass named is one whose input still matched and whose output does not.
// kEveryPass evaluates after every changing pass in order and names the
// first that differs: it also catches a difference that a later pass
// undoes. An evaluation that runs out of time makes either strategy go
// through the copies in order from there (see timeLimitSeconds).
#pragma once

#include <cstdint>
#include <string>

#include "compiler/pipeline/pipeline.h"
#include "core/ir/literal.h"

namespace hloscope {

struct BisectResult {
    enum class Outcome { kNoChange, kMismatch, kCannotEvaluate };
    Outcome outcome = Outcome::kNoChange;
    // The first pass whose results differ; with kCannotEvaluate, the pass after which the
    // module took too long to evaluate (-1: the input itself could not be evaluated).
    int passIndex = -1;
    std::string passName;
    std::string detail;       // the mismatch, or why the module cannot be evaluated
    int passesEvaluated = 0;  // evaluations after changing passes
    int changingPasses = 0;   // passes that changed the module (up to where the check stopped)
};

enum class BisectStrategy { kBinary, kEveryPass };

struct BisectOptions {
    uint64_t seed = 0;
    BisectStrategy strategy = BisectStrategy::kBinary;
    RunnerOptions runner;
    // Modules whose entry computation produces more elements than this (sum
    // of every instruction's result size, loops counted once) are reported
    // as not evaluable rather than run for minutes.
    int64_t maxElements = 10'000'000'000;
    // Loops that run longer, and reference evaluations that take longer,
    // make the module "not evaluable"; after a pass, an evaluation may take
    // four times the reference's time plus a second, and one that takes
    // longer stops the check there as "not evaluable" after that pass (a
    // loop that exceeds the iteration limit is a mismatch).
    int64_t maxWhileIterations = 1'000'000;
    double timeLimitSeconds = 120;
};

// Runs `pipeline` on `module` (which it modifies), checking after every pass.
// Errors are the pipeline's own (a pass failing or breaking the module).
StatusOr<BisectResult> bisectPipeline(HloModule& module, Pipeline pipeline,
                                      const BisectOptions& options = {});
// The same on a fresh runner built by the caller (options.runner unused).
StatusOr<BisectResult> bisectRunner(PipelineRunner& runner, const BisectOptions& options = {});

// Empty when `actual` matches `expected` within the per-type tolerance, else
// the first differences.
std::string compareWithTolerance(const Literal& expected, const Literal& actual);

}  // namespace hloscope
