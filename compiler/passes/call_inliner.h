// CallInlinerPass ("call-inliner"): inlines every `call` instruction.
//
// Each call is replaced by clones of its callee's instructions (fresh
// unique names; callee parameters become the call's operands, the callee's
// root replaces the call). Computations are processed callees first (post
// order over the call graph), so nested calls flatten completely in one run;
// a callee called from several sites is cloned at each. Callees no longer
// called by anything are removed afterwards. Composite calls
// (is_composite=true) are inlined as well: a composite call's semantics are
// those of its decomposition, so the result computes the same values, but
// the composite's name/attributes are lost (run this pass only where that
// is acceptable). Left alone: calls with control edges, calls whose callee
// runs on another execution thread, and calls whose shape differs (layout
// included) from their callee root's.
//
// Rule: "inline-call". Ordering: early, before CSE/DCE/constant folding,
// which then see across former call boundaries.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class CallInlinerPass : public HloPass {
public:
    static constexpr std::string_view kName = "call-inliner";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

}  // namespace hloscope
