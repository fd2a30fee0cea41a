// Internal to the StableHLO importer: turns MLIR `dense<...>` contents into
// HLO literal text (what HloInstruction::setLiteralText holds), and formats
// scalars of any element type the way XLA prints them.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/shape.h"
#include "core/stablehlo/stablehlo_ast.h"
#include "core/support/status.h"

namespace hloscope::stablehlo {

// HLO literal text of `dense` for the array shape `shape`: "{{1, 2}, {3, 4}}",
// "3.5", "true", "{(1, 2), (3, 4)}". Splats are expanded. Errors name what
// does not fit (element count, malformed values) without a location; the
// caller adds one.
StatusOr<std::string> denseToLiteralText(const DenseData& dense, const Shape& shape);

// True when `dense` is a splat (one value for the whole tensor); then
// denseScalarText gives that value's text.
bool denseIsSplat(const DenseData& dense, const Shape& shape);
StatusOr<std::string> denseScalarText(const DenseData& dense, PrimitiveType type);

// Text of one value of `type`: floats with the shortest representation that
// round-trips (after rounding `value` to the type), "nan"/"inf"/"-inf",
// integers wrapped to the type's width, pred as true/false, complex as
// "(re, 0)".
std::string formatScalar(PrimitiveType type, double value);
std::string formatInteger(PrimitiveType type, int64_t value);

// Parses an integer token of an MLIR attribute ("-3", "0x1F", "18446744073709551615")
// into its two's-complement 64-bit value.
bool parseIntegerToken(std::string_view token, int64_t& value);

}  // namespace hloscope::stablehlo
