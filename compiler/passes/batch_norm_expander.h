// BatchNormExpanderPass ("batch-norm-expander"): rewrites
// batch-norm-training, batch-norm-inference and batch-norm-grad into the
// reduces, broadcasts and elementwise operations they stand for, with the
// formulas of XLA's BatchNormExpander, so that the CPU and GPU kernels
// compute them and fusion sees ordinary reductions and loops. Statistics run
// over every dimension but feature_index. Two differences from XLA, both for
// accuracy: the training variance is E[(x - E[x])^2] (two passes) rather
// than E[x^2] - E[x]^2, and f16/bf16 operands are computed in f32 and
// rounded at the end. The interpreter evaluates the ops directly
// (core/interpreter/batch_norm.cc), which is what the expansion is checked
// against.
//
// Rule: "expand-batch-norm". Ordering: early, before simplification and
// fusion (which then fuse the expansion), after library-call-expander.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class BatchNormExpanderPass : public HloPass {
public:
    static constexpr std::string_view kName = "batch-norm-expander";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

}  // namespace hloscope
