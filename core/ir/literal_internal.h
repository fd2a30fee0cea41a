// Internal helpers shared by literal.cc, literal_text.cc and literal_json.cc
// (not part of the public API).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope::literal_internal {

// True for array shapes with element storage (not token, opaque, tuple, or
// element types of bit width 0 such as BUFFER).
inline bool holdsElements(const Shape& shape) {
    return shape.isArray() && primitive_util::bitWidth(shape.elementType()) > 0;
}

// Text of one array element as XLA prints it: integers in decimal, floats
// with the shortest digits that round-trip for the element type ("nan",
// "-inf", "nan(0x1)" for payloads), pred as "true"/"false", complex as
// "(re, im)".
std::string elementToString(const Literal& literal, int64_t index);

// Shortest round-trip text of a floating-point value of `type` (f16..f64 and
// the narrow formats), given as its exact double value. Not for NaN.
std::string formatFiniteOrInf(PrimitiveType type, double value);

// Locale-independent parse of a whole decimal floating-point text ("1.5",
// "-1e-05", "+3"); false when malformed or out of double's range.
bool parseDecimal(std::string_view text, double& value);

// Whether NaN payloads of `type` are printed and parsed ("nan(0x1)"): the
// IEEE-style formats f16, bf16, f32, f64, f8e5m2, f8e4m3 and f8e3m4.
bool hasNanPayload(PrimitiveType type);

// Largest literal that text or JSON input may create.
inline constexpr int64_t kMaxParsedLiteralBytes = int64_t{4} << 30;

// Error when a literal of `shape` (tuples summed) would need more than
// kMaxParsedLiteralBytes of storage or its element count overflows.
Status checkLiteralSize(const Shape& shape);

// Parses a complete shape text ("f32[2,3]{1,0}", "(f32[], s32[4])",
// "token[]"). Layout tiling and other layout attributes are skipped; only
// minor_to_major is kept.
StatusOr<Shape> parseShapeText(std::string_view text);

}  // namespace hloscope::literal_internal
