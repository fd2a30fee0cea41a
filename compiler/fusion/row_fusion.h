// RowFusionPass ("row-fusion"): merges row reductions into the loop fusions
// that broadcast them back over the same rows, the pattern of softmax and
// layer normalisation:
//
//   m = reduce(x), dimensions={last}        y = f(x, broadcast(m), ...)
//
// becomes one kLoop fusion that, per row of y, first computes the reduction
// over that row of x (the row then sits in L1) and then the row of y, so
// neither m nor the intermediates between reductions travel through memory.
// Once a reduction is inside, a loop producer whose only user is that
// fusion and that iterates over the same rows joins it too (the exp of a
// softmax, the x - mean of a layer norm): recomputing it per row costs
// arithmetic, storing it would cost a round trip to memory. And a value per
// row computed from a row reduction that nothing else reads (a layer norm's
// rsqrt(var + eps), which the gpu fusion leaves as a kernel of its own since
// fused elementwise it would be recomputed per element) joins the loop that
// broadcasts it over the rows: there it is computed once per row, and the
// reduction behind it then joins as well.
//
// Conditions (each refusal is logged with its reason):
//   * the reduction R is a reduce, or a kInput fusion whose root is one, of a
//     single array over exactly its last dimension, with no other user;
//   * the consumer C is a kLoop fusion (or a broadcast) whose output has
//     R's input dimensions, and reads R only through broadcasts along the
//     kept dimensions (so R's value is the same for the whole row);
//   * everything in R and C is elementwise, broadcast, constant, iota or
//     such a row reduction: the kernel's row index must reach the
//     reduction unchanged for the CPU emitter to hoist it out of the row
//     (cpu_kernel_emitter.cc);
//   * the fused kernel stays within max_operands / max_fused_instructions;
//   * on gpu, at least 256 rows.
// A reduction over other dimensions, or reached through a reshape or
// transpose, is left alone.
//
// Decisions: one PassDecision per pair (fusion_decision.h codes).
// Rewrite rules: "row-reduction", "row-producer", "row-value".
// Options: as FusionPass (target, max_operands, max_fused_instructions,
// force, forbid). Ordering: after FusionPass (it merges its fusions); in the
// cpu and gpu pipelines, whose emitters hoist row reductions (the GPU's row
// kernel, gpu_row_kernel.cc, splits each across a block), before the gpu's
// multi-output fusion. On gpu a reduction of fewer than 256 rows is left
// alone ("no-predicted-gain"): a block per row would leave the GPU idle.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "compiler/fusion/fusion_config.h"
#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class HloComputation;
namespace fusion {
class FusionBuilder;
}

namespace fusion {
// A broadcast onto `rowDims` along all but the last dimension, in order: the
// same value for a whole row (what row-fusion merges, and what the CPU
// emitter hoists out of the row).
bool isRowBroadcast(const HloInstruction& instruction, const std::vector<int64_t>& rowDims);
}  // namespace fusion

class RowFusionPass : public HloPass {
public:
    static constexpr std::string_view kName = "row-fusion";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    explicit RowFusionPass(fusion::FusionConfig config) : m_config(std::move(config)) {}
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

private:
    void sinkScalarConstants(HloComputation& computation, fusion::FusionBuilder& builder,
                             int64_t& step);

    fusion::FusionConfig m_config;
};

}  // namespace hloscope
