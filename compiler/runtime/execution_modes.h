// What a measured run needs around an ExecutionDevice, shared by the CLI's
// `run` command and the GUI's execution panel:
//   * the module prepared for an execution mode: `fused` runs the target's
//     whole pipeline, `unfused` the same pipeline without its fusion passes
//     (one kernel per op, every intermediate in memory), so the measured
//     ratio is the effect of fusion alone;
//   * the check of a device's outputs against the reference interpreter's:
//     the largest absolute and relative errors and the per-type tolerance
//     verdict of compareWithTolerance.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/hlo_module.h"
#include "core/literal.h"
#include "core/status.h"

namespace hloscope {

enum class ExecutionMode { kUnfused, kFused };

std::string_view executionModeName(ExecutionMode mode);  // "unfused", "fused"

// True for the passes that fuse ("fusion", "multi-output-fusion", ...).
bool isFusionPassName(std::string_view pass);

// Runs `target`'s pipeline (a family or hardware name, or a target file, as
// targetPipeline takes it) on `module`, without the fusion passes for
// kUnfused. Errors are the pipeline's (a pass failing names it).
StatusOr<std::unique_ptr<HloModule>> prepareForMode(std::unique_ptr<HloModule> module, std::string_view target,
                                                    ExecutionMode mode);

struct OutputCheck {
    double maxAbsError = 0;  // over every element of every output (inf: shapes differ)
    double maxRelError = 0;  // |a - e| / max(|e|, tiny), over elements with |e| > 0
    bool passed = true;      // every output within compareWithTolerance's tolerance
    std::string detail;      // the first difference when not passed
};

OutputCheck checkOutputs(const std::vector<Literal>& expected, const std::vector<Literal>& actual);

}  // namespace hloscope
