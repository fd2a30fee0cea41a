// MultiOutputFusionPass ("multi-output-fusion"): fusions with several
// outputs (a tuple root read through get-tuple-elements), as XLA's
// multi-output fusion:
//   * sibling fusion: users of the same operand (e.g. two reductions of one
//     input) whose loops can be one (fusion::multiOutputCompatible: XLA's
//     heroes; on the GPU tiled transposes too) become one kInput/kLoop
//     fusion, so the shared operand is read once (fused when the shared
//     operand is at least 1 KiB on the CPU, not a scalar on the GPU, always
//     with disable_cost_model=true);
//   * producer-consumer multi-output: a producer whose output is also needed
//     outside is fused into a reduce / loop consumer and both outputs are
//     exposed (fused when the cost model predicts a gain).
// Never creates cycles: a pair where one reaches the other through an
// instruction that stays outside is refused (reason multi-output-cycle).
// Decisions: one PassDecision per pair considered (fusion_decision.h codes).
// Rewrite rules: "multi-output-sibling", "multi-output-producer".
// Options: as FusionPass (target, max_operands, max_fused_instructions,
// cost_model, disable_cost_model, force=a:b;..., forbid=a:b;... where a:b
// names two siblings or a producer and its consumer).
// Ordering: run after FusionPass.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "compiler/fusion/fusion_config.h"
#include "compiler/fusion/fusion_cost_model.h"
#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

namespace fusion {
class FusionBuilder;
}  // namespace fusion

class MultiOutputFusionPass : public HloPass {
public:
    static constexpr std::string_view kName = "multi-output-fusion";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    MultiOutputFusionPass(fusion::FusionConfig config, std::unique_ptr<FusionCostModel> model)
        : m_config(std::move(config)), m_model(std::move(model)) {}
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

private:
    class Reachability;
    // Sibling fusion: the users of one shared operand, pairwise, into one
    // multi-output fusion. `step` numbers the decisions.
    void fuseSiblings(HloComputation& computation, fusion::FusionBuilder& builder,
                      Reachability& reach, int64_t& step);
    // Producer-consumer multi-output fusion: a producer also needed outside
    // fused into a reduction consumer, exposing both outputs.
    void fuseIntoConsumers(HloComputation& computation, fusion::FusionBuilder& builder,
                           Reachability& reach, int64_t& step);

    fusion::FusionConfig m_config;
    std::unique_ptr<FusionCostModel> m_model;
};

}  // namespace hloscope
