// CsePass ("cse"): common-subexpression elimination within each
// computation.
//
// Two instructions merge when they have the same opcode, the same operands
// in the same order, the same shape (layout included) and identical
// attributes (metadata aside), and neither has side effects (including
// through called computations: rng, infeed, send/recv, collectives,
// side-effecting custom-calls never merge). Instructions with control edges
// and parameters are left alone. The later instruction in post order is
// replaced by the earlier one; because users are visited after their
// operands, whole chains of duplicates merge in one run. Constants merge
// when their shape and literal text are identical (option
// `merge_constants`, default true). Hash-based: linear in the module.
//
// Rule: "cse". Ordering: after passes that create duplicates (inlining,
// constant folding); follow with DCE only if other dead code must go (CSE
// removes the instructions it replaces itself).
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class CsePass : public HloPass {
public:
    static constexpr std::string_view kName = "cse";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

    explicit CsePass(bool mergeConstants = true) : m_mergeConstants(mergeConstants) {}

private:
    bool m_mergeConstants = true;
};

}  // namespace hloscope
