// ConstantFoldingPass ("constant-folding"): replaces an instruction whose
// operands are all constants by a constant holding its value, computed
// with the reference evaluator (core/interpreter/interpreter.h).
//
// Visits each computation in post order, so chains of foldable
// instructions collapse in one run. Not folded: instructions with side
// effects (looking through called computations), rng and random-bit ops,
// parameters, constants, control flow (while, conditional, call), fusions,
// custom-calls, infeed, after-all, async and collective ops, partition-id /
// replica-id, instructions with control edges, token/tuple/dynamic-shaped
// results or token operands, instructions inside fusion computations,
// results with more than `max_elements` elements (option, default 65536),
// and iota or size-increasing broadcasts with more than 16 result elements
// (folding them only grows the module). Anything the evaluator cannot
// evaluate, or whose literal text would not re-parse to the same value, is
// left alone. The folded instruction is removed; its operands stay (run DCE
// afterwards to drop constants nothing uses any more).
//
// Rule: "fold-constant". Ordering: no constraint for correctness; the
// target pipelines run it after call inlining and the simplifiers and
// before loop-invariant code motion; follow with DCE.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class ConstantFoldingPass : public HloPass {
public:
    static constexpr std::string_view kName = "constant-folding";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

    explicit ConstantFoldingPass(int64_t maxElements = 65536) : m_maxElements(maxElements) {}

    // Broadcasts that grow their operand and iotas are folded only up to
    // this many result elements.
    static constexpr int64_t kMaxExpandingElements = 16;

private:
    int64_t m_maxElements = 65536;
};

}  // namespace hloscope
