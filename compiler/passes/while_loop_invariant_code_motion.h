// WhileLoopInvariantCodeMotionPass ("while-loop-invariant-code-motion"):
// hoists loop-invariant computation out of while bodies.
//
// A loop-state element i is invariant when the body's root tuple passes it
// through unchanged (root operand i is get-tuple-element(param, i)). An
// instruction of the body is invariant when all its operands are invariant
// values (such get-tuple-elements, constants, other invariant instructions),
// it has no side effects (looking through called computations), no control
// edges, an array shape, and is not control flow or otherwise stateful
// (while, conditional, call, fusion of side effects, custom-call, rng,
// infeed, collectives, async ops). Such instructions are computed once
// before the loop (their invariant operands cloned alongside), and the
// values the loop still needs enter it through new loop-state elements
// appended to the while's init, body parameter, body root and condition
// parameter. The while is updated in place to the wider state; its users
// that are get-tuple-elements keep working (indices unchanged), any other
// user (and a root) gets a tuple of the original elements, so no shape
// outside the loop changes. Constants alone are not hoisted unless
// `hoist_constants` (default false); instructions whose result is bigger
// than their operands (broadcast, iota, pad...) are hoisted only with
// `hoist_size_inflating_ops` (default false): otherwise they stay in the
// loop (or are recomputed before it when a hoisted user needs them).
// The widened instructions (while, body parameter and root, condition
// parameter) drop their `origin=` annotation; loops with a tuple `sharding=`
// on them are left alone, as are whiles whose body or condition is shared
// with another caller, whose body root is not a tuple, or whose parameters
// have users other than get-tuple-elements. Computations are processed callees
// first, so an inner loop's hoisted code can leave the outer loop too.
// The instructions left dead in the body are removed.
//
// Rule: "hoist-invariant". Ordering: after CSE and constant folding (which
// expose invariants); follow with tuple simplification and DCE.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class WhileLoopInvariantCodeMotionPass : public HloPass {
public:
    static constexpr std::string_view kName = "while-loop-invariant-code-motion";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

    WhileLoopInvariantCodeMotionPass(bool hoistConstants = false,
                                     bool hoistSizeInflatingOps = false)
        : m_hoistConstants(hoistConstants), m_hoistSizeInflatingOps(hoistSizeInflatingOps) {}

private:
    StatusOr<bool> hoistFrom(HloModule& module, HloInstruction* loop);

    bool m_hoistConstants = false;
    bool m_hoistSizeInflatingOps = false;
    bool m_clonedFusion = false;  // during run(): a fusion was hoisted
};

}  // namespace hloscope
