// TriangularSolveExpanderPass ("triangular-solve-expander"): replaces each
// triangular-solve by the substitution loop that computes it, so that the
// GPU kernels run it (XLA:GPU calls cuBLAS trsm instead; the loop is what
// XLA's TriangularSolveExpander builds, one row per step rather than
// blocks). Every form is first brought to "solve A' X = B' with A' lower or
// upper triangular": a's other triangle (and its diagonal, when
// unit_diagonal) is set to zero, transpose_a transposes a (ADJOINT also
// conjugates complex values), and a right-side solve X op(a) = b becomes
// op(a)^T X^T = b^T. The while loop then carries (step, A', B', X), X
// starting as zeros; step k takes row i = k (lower) or m-1-k (upper) and sets
// X[i] = (B'[i] - A'[i] . X) / A'[i][i] (no division for a unit diagonal);
// the rows of X not yet solved are zero, so the dot reads only solved ones.
//
// Rule: "expand-triangular-solve". Ordering: early, with the other expanders
// (the simplifications then clean the loop); gpu pipeline only: the CPU
// backend runs triangular-solve through the interpreter, the TPU model plans
// it as one operation.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class TriangularSolveExpanderPass : public HloPass {
public:
    static constexpr std::string_view kName = "triangular-solve-expander";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

}  // namespace hloscope
