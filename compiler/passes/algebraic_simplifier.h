// AlgebraicSimplifierPass ("algebraic-simplifier"): semantics-preserving
// local rewrites in the spirit of XLA's AlgebraicSimplifier, applied to every
// computation of the module and repeated until nothing changes (at most
// `max_iterations` sweeps, default 10).
//
// Rule families (rule names as recorded with recordRewrite):
//  * identities: add-zero, sub-zero, mul-one, div-one, mul-zero (integers
//    and pred only), and-identity / and-absorb / or-identity / or-absorb
//    (all-ones / all-zero constants, pred and integers), and-self, or-self,
//    max-self, min-self,
//    select-constant-pred, select-same-branches, negate-negate, not-not,
//    abs-abs.
//  * convert-noop, convert-chain (convert(convert(x)) when the middle type
//    represents every source value exactly).
//  * reshape-noop, reshape-of-reshape, reshape-of-broadcast-scalar;
//    transpose-noop, transpose-of-transpose, transpose-of-broadcast-scalar;
//    broadcast-noop, broadcast-of-broadcast; slice-noop, slice-of-slice,
//    slice-of-concat, slice-of-broadcast-scalar; concat-single,
//    concat-empty-operand; pad-noop; reduce-noop-dims, reduce-of-empty;
//    copy-of-copy.
//  * dot-fold-transpose, dot-strength-reduction (integers only).
//
// Floating point: only rewrites that are exact in IEEE arithmetic. x + c
// folds only when c is -0.0 (x + 0.0 is not x for x = -0.0), x - c only when
// c is +0.0, x * 1 and x / 1 always, x * 0 never for floats. A reduce over
// no dimensions folds only when its init value is the exact identity of a
// recognised reducer (add with -0.0 / integer 0, multiply with 1, max with
// -inf / the type's minimum, min with +inf / maximum, and/or).
//
// Safety: instructions with side effects or control edges, dynamic shapes
// and tuples are never rewritten; a replacement must have exactly the shape
// (layout included) of the instruction it replaces, so roots and entry
// layouts are unchanged. Newly created instructions (a rule that changes an
// opcode, such as reshape-of-broadcast-scalar) get the replaced
// instruction's shape, intermediates the default layout when the replaced
// one has a layout. Folds of the same opcode (reshape-of-reshape,
// slice-of-slice, ...) rewrite the instruction in place. In scheduled
// modules (whose text order is the schedule) rules that would create an
// instruction are skipped, so the schedule stays valid.
//
// Dead code: instructions a rewrite made dead (no users left, not the root,
// not a parameter, no side effects) are removed at the end of each sweep;
// instructions that were already dead are left for the dce pass.
//
// Ordering: no constraint for correctness; it neither needs nor assigns
// layouts (it keeps every layout it finds), so it can run before or after
// layout assignment. Running it before CSE and DCE lets them see the
// simplified graph; dce removes what was dead before it ran.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class AlgebraicSimplifierPass : public HloPass {
public:
    static constexpr std::string_view kName = "algebraic-simplifier";
    static std::string_view description();
    // Options: max_iterations (>= 1, default 10).
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);

    explicit AlgebraicSimplifierPass(int64_t maxIterations = 10)
        : m_maxIterations(maxIterations) {}
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

private:
    int64_t m_maxIterations;
};

}  // namespace hloscope
