// FusionPass ("fusion"): producer-consumer fusion driven by a cost model, in
// the manner of XLA's priority fusion.
//
// Fusion kinds created: kLoop (elementwise ops and data movement), kInput
// (a reduce as the root, with its elementwise/data-movement producers; on the
// GPU also followed by an epilogue of unary elementwise ops and bitcasts, as
// XLA's reduction epilogue fusion) and
// kOutput (a dot or convolution with its elementwise epilogue consumers:
// the consumer of a dot fuses into the dot's fusion).
//
// Algorithm, per computation the entry reaches through while/conditional/
// call (never inside fused computations, reducers or comparators): every
// candidate producer is put in a priority queue keyed by its predicted gain,
//   gain = sum over the consumers it may fuse into of (unfused - fused time)
//          - the producer's own time once per consumer when it must stay
//            (it has consumers it cannot fuse into, or is the root),
// minus the producer time counted in each pair but saved once. The best
// producer is popped and fused into every consumer it may fuse into when the
// gain is positive (always with disable_cost_model=true; forced pairs always
// when legal); then only its neighbours are re-evaluated (the producer's
// operands, the new fusions and their operands): the queue is incremental,
// stale entries are skipped by version. Legality rules and reason codes are
// in fusion_decision.h / fusion_legality.h.
//
// Decision log: every producer-consumer pair popped gets a PassDecision (step,
// names, applied, reason, explanation, predicted seconds unfused/fused).
// Rewrite rule: "fuse" (before: the consumer, after: the new fusion).
//
// Options: target=cpu|gpu|tpu, max_operands, max_fused_instructions,
// cost_model=performance|bytes, disable_cost_model=true|false,
// force=producer:consumer;..., forbid=producer:consumer;... (instruction
// names; force fuses a legal pair even without gain, forbid never fuses it).
//
// Ordering: run after simplification (algebraic simplifier, CSE, DCE) and
// before multi-output fusion, layout and buffer assignment.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/fusion/fusion_config.h"
#include "compiler/fusion/fusion_cost_model.h"
#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class FusionPass : public HloPass {
public:
    static constexpr std::string_view kName = "fusion";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    FusionPass(fusion::FusionConfig config, std::unique_ptr<FusionCostModel> model)
        : m_config(std::move(config)), m_model(std::move(model)) {}
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

private:
    fusion::FusionConfig m_config;
    std::unique_ptr<FusionCostModel> m_model;
};

}  // namespace hloscope
