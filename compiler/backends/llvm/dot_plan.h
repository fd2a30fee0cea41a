// HLO-level rules about dots that the CPU and GPU plans share (no LLVM type
// here): which fusions are a dot (or convolution) with an elementwise
// epilogue, planned as a GEMM followed by an epilogue kernel; and the
// operand order that turns a dot_general into a plain (batched) GEMM, whose
// operands a transpose kernel puts in that order first.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/hlo_instruction.h"

namespace hloscope {

// The fused parameter behind `operand`, through copies of the same
// dimensions (layout changes, which dense row-major buffers do not have),
// or nullptr.
const HloInstruction* parameterBehind(const HloInstruction* operand);

// How a backend recognises an epilogue fusion (epilogueProducer).
struct EpilogueRules {
    // A convolution can be the producer. The CPU runs it with its im2col +
    // GEMM convolution; the GPU has no convolution step, so there a
    // convolution anywhere in the fusion makes it no epilogue fusion.
    bool convolutions = false;
    // A fusion that is the producer alone counts. The GPU's gemm step
    // writes the product straight into the fusion's output; the CPU's
    // epilogue thunk always runs an epilogue kernel after the GEMM.
    bool producerAlone = false;
    // The producer's operands may be parameters behind same-dimension copies
    // (parameterBehind). The GPU plan reads the parameter's buffer for them;
    // the CPU's thunk binds the producer's operands by their own parameter
    // numbers, so there they must be parameters.
    bool throughCopies = false;
};

// The one dot (or, with rules.convolutions, convolution) of a kOutput
// fusion whose other instructions form an elementwise epilogue of it over
// its output's dimensions (everything that depends on it is elementwise of
// those dimensions, the root among them), its operands parameters; or
// nullptr.
const HloInstruction* epilogueProducer(const HloInstruction& fusion, const EpilogueRules& rules);

// The dimension order that makes operand `side` (0: lhs, 1: rhs, of `rank`
// dimensions) of a dot_general a GEMM operand: [batch, free, contracting]
// for lhs, [batch, contracting, free] for rhs.
std::vector<int64_t> gemmOperandOrder(const DotDimensionNumbers& numbers, int side, int64_t rank);
// Whether `order` is the identity permutation (the operand needs no transpose).
bool isIdentityOrder(const std::vector<int64_t>& order);
// The dimension numbers of the dot of operands in gemmOperandOrder (lhs of
// `lhsRank` dimensions): batch dimensions leading, lhs contracting ones
// trailing, rhs contracting ones after the batch.
DotDimensionNumbers gemmDotNumbers(const DotDimensionNumbers& numbers, int64_t lhsRank);

}  // namespace hloscope
