// DcePass ("dce"): dead code elimination.
//
// Removes every instruction that its computation's root does not reach
// through operands and control edges, except parameters, instructions with
// side effects (looking through called computations: a while whose body has
// an outfeed stays) and everything those depend on. Then removes the
// computations nothing reachable from the entry calls any more (never the
// entry; fused computations of live fusions stay because their fusion calls
// them). Linear in the module size: one marking walk per computation and
// batch removal.
//
// Rules: "dead-instruction", "dead-computation".
// Ordering: run after any pass that leaves unused instructions behind
// (constant folding, CSE, tuple simplification, inlining).
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class DcePass : public HloPass {
public:
    static constexpr std::string_view kName = "dce";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

}  // namespace hloscope
