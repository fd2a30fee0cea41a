// StableHLO import: MLIR text (StableHLO, CHLO, func, and the StableHLO
// interpreter's check/interpreter test ops) to HLO modules, producing the IR
// XLA's StableHLO -> HLO conversion would.
//
// Accepted input: modules as JAX prints them (`jax.jit(f).lower(...).as_text()`)
// and as the StableHLO test suite writes them — pretty and generic operation
// forms, `func.func` (public and private) with `func.call`, regions,
// `dense<...>` literals (hex blobs and splats included), complex, i1, ui*,
// bf16 and f8 element types, tuples, `!stablehlo.token`, `#stablehlo<...>`
// and `#stablehlo.dot/conv/gather/scatter<...>` attributes, `array<i64: ...>`,
// `loc(...)` annotations and `#loc` lines (ignored), attribute and type
// aliases, and `// -----` splits (one module per chunk).
//
// Mapping:
//  * Each function becomes a computation; the entry is @main, else the last
//    public function. Multi-result operations become a tuple-shaped
//    instruction plus get-tuple-elements; regions become computations named
//    `region_<k>.<N>`.
//  * CHLO operations are decomposed as StableHLO's CHLO legalisation does
//    (chlo.erf_inv, lgamma, digamma, polygamma, zeta, bessel_i1e, erfc,
//    next_after, mulhi, square, conj, is_*inf, constant_like, broadcast_*);
//    those with an HLO opcode of their own (acos, acosh, asin, asinh, atan,
//    atanh, cosh, sinh, tan, erf, top_k) map to it.
//  * check.* and interpreter.* operations become custom calls whose target is
//    the operation name (`check.expect_eq_const`), with the checked values as
//    operands, the expected constant appended as an extra constant operand,
//    and other attributes (max_ulp_difference, probe_id, ...) kept verbatim.
//  * Dynamic-shape operations whose shape operands are constants (or whose
//    result type is static) become their static HLO counterparts; others are
//    kept as custom calls named after the StableHLO operation.
//
// Errors: malformed text is kInvalidArgument with file:line:col and what was
// expected; operations, types or forms that cannot be imported (quantized
// types, unknown operations, multi-block regions) are kUnimplemented naming
// the operation and its location. No input crashes or hangs the importer
// (nesting depth is bounded).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

// Parses `text` (named `fileName` in errors): one module per `// -----`
// chunk, or one for the whole text. Chunks holding only comments are
// skipped. Fails on the first chunk that fails.
StatusOr<std::vector<std::unique_ptr<HloModule>>> parseStableHlo(std::string_view text,
                                                                 const std::string& fileName);

// One `// -----` chunk and its import result (for corpus sweeps and tools
// that want to keep the chunks that do import).
struct StableHloChunk {
    int firstLine = 1;  // 1-based line where the chunk starts
    StatusOr<std::unique_ptr<HloModule>> module = Status(StatusCode::kInternal, "not parsed");
};
std::vector<StableHloChunk> parseStableHloChunks(std::string_view text,
                                                 const std::string& fileName);

}  // namespace hloscope
