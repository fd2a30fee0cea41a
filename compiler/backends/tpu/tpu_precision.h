// TpuPrecisionEmulationPass ("tpu-precision-emulation"): rewrites every dot
// and convolution whose operands are f32 into plain HLO that computes what a
// TPU's MXU computes, so that the CPU backend and the reference interpreter
// give TPU numerics.
//
// The MXU multiplies bf16 values and accumulates in f32. An f32 operand is
// split into bf16 pieces, each piece rounded to nearest even by `convert`:
//   hi = bf16(x), mid = bf16(x - hi), lo = bf16(x - hi - mid)
// (each difference is exact in f32), and the dot becomes a sum of dots of
// pieces, each an f32 dot of bf16 values (its products exact in f32, its
// accumulation f32, as on the MXU). How many pieces an operand gets comes
// from its own entry of operand_precision:
//   DEFAULT (or absent) 1 piece, HIGH 2 (hi, lo), HIGHEST 3 (hi, mid, lo),
// and the products kept are the pieces (i, j) with i + j < max(pieces):
//   {default,default}  1 product  (bf16 inputs, f32 accumulation)
//   {high,high}        3 products (XLA's bf16_3x: hi*hi + hi*lo + lo*hi)
//   {highest,highest}  6 products (XLA's bf16_6x: + hi*mid, mid*hi, mid*mid)
//   {highest,default}  3 products (hi*r + mid*r + lo*r: the f32 operand kept
//                      whole, the other rounded), {high,default} 2.
// Mixed precisions are split per operand rather than letting the lower one
// decide: that is what per-operand precision is for on TPUs (JAX added
// precision tuples so that a HIGHEST image times a DEFAULT 0/1 patch kernel
// costs half of HIGHEST's six passes: jax-ml/jax#4586). `algorithm=` (which
// XLA says overrides operand_precision) selects the same schemes:
// dot_bf16_bf16_f32 (and dot_bf16_bf16_bf16: the MXU accumulates in f32
// anyway) 1 product, _x3 3, _x6 6, _x9 all nine of hi/mid/lo, and
// dot_f32_f32_f32 6 (a TPU has no f32 multiplier; HIGHEST is its f32);
// tf32, f16, f8 and f64 algorithms on f32 operands are an error naming the
// instruction (no TPU runs them).
//
// The partial dots are summed smallest first (by i + j, then as XLA orders
// bf16_6x), the sum of the small ones replaced by 0 where it is not finite
// (an infinite input makes inf - inf = NaN in its low pieces; the hi*hi dot
// carries the infinity), then hi*hi is added. The result keeps the original
// instruction's name and metadata; a result type other than f32 is a final
// convert of the f32 sum.
//
// Not rewritten: dots and convolutions whose operands are not both f32 (bf16
// and f16 dots are single MXU passes already); an operand that is a
// `convert` from a type bf16 holds exactly (bf16, the f8/f6/f4 types, 8-bit
// integers, pred) counts as one piece whatever its precision (its lower
// pieces are zero), so a dot of two such operands is left alone and running
// the pass twice changes nothing the second time; sparse dots (a third
// operand).
//
// Rules: "bf16x1", "bf16x2", "bf16x3", "bf16x5", "bf16x6", "bf16x9" (the
// number of MXU passes). Statistics: "dots-rewritten",
// "convolutions-rewritten", "mxu-passes".
// Ordering: on an unfused module, before fusion and layout assignment (new
// instructions get the operands' dense layouts, without tiles). It is not
// part of any target pipeline (estimates and layouts must not depend on it):
// emulateTpuNumerics applies it to a copy for the simulated TPU device, after
// library-call-expander (XLA:GPU's cuBLAS / cuDNN calls are dots and
// convolutions there, as in the tpu pipeline).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "compiler/pipeline/hlo_pass.h"
#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

class TpuPrecisionEmulationPass : public HloPass {
public:
    static constexpr std::string_view kName = "tpu-precision-emulation";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);
    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;
};

// What emulateTpuNumerics rewrote.
struct TpuNumericsSummary {
    int64_t dots = 0;          // dots rewritten
    int64_t convolutions = 0;  // convolutions rewritten
    int64_t mxuPasses = 0;     // partial dots/convolutions they became
};

// A copy of `module` (its schedule flag kept) with TpuPrecisionEmulationPass
// applied and verified (XLA's test defaults: mixed precision allowed).
// Errors name the stage and the instruction: the copy; an input the
// verifier rejects (kFailedPrecondition, "the input module does not verify":
// the pass does not run on it, and its problems are not the pass's); the
// pass (an algorithm no TPU runs); the verifier after the pass (kInternal:
// the rewrite broke a valid module).
StatusOr<std::unique_ptr<HloModule>> emulateTpuNumerics(const HloModule& module,
                                                        TpuNumericsSummary* summary = nullptr);

// MXU passes of an f32 dot or convolution under the rules above (the number
// of bf16 products the pass emits for it: 1, 2, 3, 5, 6 or 9); 1 for one the
// pass leaves alone (bf16/f16 operands, both operands bf16-exact, other
// instructions). The simulator's cost of the same instruction, so time and
// numerics agree. Errors as the pass's (an algorithm no TPU runs).
StatusOr<int64_t> tpuMxuPasses(const HloInstruction& instruction);

}  // namespace hloscope
