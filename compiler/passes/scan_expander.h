// ScanExpanderPass ("scan-expander"): replaces every `scan` (core/ir/scan.h)
// by the while loop that computes it, as XLA's ScanExpander does. The loop
// carries (step, inputs..., carries..., stacked outputs...); each iteration
// dynamic-slices row i of every input (row length-1-i for a reverse scan),
// runs a copy of the scan's body on the rows and the carries, and
// dynamic-update-slices the step's outputs into row i of the stacked
// results, which start as zeros. No backend compiles scan itself, so this is
// what lets the CPU, GPU and TPU targets run it; the body's computation is
// removed when nothing else calls it. A loop cannot run inside a kernel: a
// fusion holding a scan (XLA:GPU keeps them in Triton fusions) becomes a call
// of its computation first (statistic "unfused").
//
// Rule: "expand-scan". Ordering: early, before call inlining and the
// simplifications, which then clean the loop (the body's tuple and
// get-tuple-element pairs) and may hoist what it does not change.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class ScanExpanderPass : public HloPass {
public:
    static constexpr std::string_view kName = "scan-expander";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

}  // namespace hloscope
