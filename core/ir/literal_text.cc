// Literal text in XLA's syntax: printing (Literal::toString, valueToString).
// Parsing is in literal_parse.cc and literal_parse_elements.cc.
//
// Printing follows XLA's one-line form (LiteralBase::ToStringOneline):
//   f32[]        1.5
//   f32[3]       {1, 2, 3}
//   f32[2,2]     { { 1, 2 }, { 3, 4 } }
//   f32[1,1]     { {0} }
//   f32[1,1,1,2] { { /*i0=0*/ { /*i1=0*/ { 1, 2 } } } }
//   pred[2]      {1, 0}          (pred scalars: true / false)
//   c64[]        (1, 2)
//   tuples       ( 1, {2, 3} )
// Floats use the fewest significant digits that read back to the same value
// of the element type, in %g style: fixed notation while the decimal
// exponent is below the type's display precision (6 for f32, 15 for f64, the
// type's max_digits10 for narrower types), with every integer digit printed.
// NaN prints as "nan" / "-nan", with "(0x...)" when an IEEE-style type holds
// a payload other than the quiet bit alone.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/ir/literal.h"
#include "core/ir/literal_internal.h"

namespace hloscope {
namespace {

// ---------------------------------------------------------------------------
// Number formatting.

bool parseDouble(std::string_view text, double& value) {
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

bool sameBits(double a, double b) {
    return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool readsBackAs(PrimitiveType type, std::string_view text, double value) {
    double parsed = 0;
    if (!parseDouble(text, parsed)) return false;
    if (type == PrimitiveType::F64) return sameBits(parsed, value);
    if (type == PrimitiveType::F32) {
        return std::bit_cast<uint32_t>(static_cast<float>(parsed)) ==
               std::bit_cast<uint32_t>(static_cast<float>(value));
    }
    return float_util::doubleToBits(type, parsed) == float_util::doubleToBits(type, value);
}

// A finite decimal: sign, significant digits d1 d2 ... and the exponent X of
// d1 (value = d1.d2d3... * 10^X).
struct Decimal {
    bool negative = false;
    std::string digits;
    int exponent = 0;
};

// Splits to_chars' scientific output ("-1.25e+03").
Decimal decimalFromScientific(std::string_view text) {
    Decimal d;
    if (!text.empty() && text.front() == '-') {
        d.negative = true;
        text.remove_prefix(1);
    }
    const size_t e = text.find('e');
    for (char c : text.substr(0, e)) {
        if (c != '.') d.digits += c;
    }
    if (e != std::string_view::npos) {
        std::string_view exponent = text.substr(e + 1);
        if (!exponent.empty() && exponent.front() == '+') exponent.remove_prefix(1);
        std::from_chars(exponent.data(), exponent.data() + exponent.size(), d.exponent);
    }
    while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
    return d;
}

// `value` correctly rounded to `digits` significant digits.
Decimal roundedDecimal(double value, int digits) {
    char buffer[64];
    auto r = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific,
                           digits - 1);
    return decimalFromScientific(std::string_view(buffer, static_cast<size_t>(r.ptr - buffer)));
}

// %g-style text: fixed notation when -4 <= X < fixedLimit, else d.ddde+XX.
std::string layoutDecimal(const Decimal& d, int fixedLimit) {
    std::string out = d.negative ? "-" : "";
    const auto count = static_cast<int>(d.digits.size());
    const int x = d.exponent;
    if (x >= -4 && x < fixedLimit) {
        if (x >= 0) {
            const int integerDigits = x + 1;
            out += d.digits.substr(0, static_cast<size_t>(std::min(count, integerDigits)));
            if (count < integerDigits) out.append(static_cast<size_t>(integerDigits - count), '0');
            if (count > integerDigits)
                out += "." + d.digits.substr(static_cast<size_t>(integerDigits));
        } else {
            out += "0.";
            out.append(static_cast<size_t>(-x - 1), '0');
            out += d.digits;
        }
        return out;
    }
    out += d.digits[0];
    if (count > 1) out += "." + d.digits.substr(1);
    const int magnitude = x < 0 ? -x : x;
    out += x < 0 ? "e-" : "e+";
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
    return out;
}

// The shortest decimal that reads back as `value` in `type`.
Decimal shortestDecimal(PrimitiveType type, double value) {
    char buffer[64];
    if (type == PrimitiveType::F64 || type == PrimitiveType::F32) {
        auto r = type == PrimitiveType::F64
                     ? std::to_chars(buffer, buffer + sizeof(buffer), value,
                                     std::chars_format::scientific)
                     : std::to_chars(buffer, buffer + sizeof(buffer), static_cast<float>(value),
                                     std::chars_format::scientific);
        return decimalFromScientific(std::string_view(buffer, static_cast<size_t>(r.ptr - buffer)));
    }
    for (int digits = 1; digits < 17; ++digits) {
        Decimal d = roundedDecimal(value, digits);
        if (readsBackAs(type, layoutDecimal(d, 0), value)) return d;
    }
    return roundedDecimal(value, 17);
}

// %g precision below which XLA prints fixed notation for the type.
int displayDigits(PrimitiveType type) {
    if (type == PrimitiveType::F32) return 6;
    if (type == PrimitiveType::F64) return 15;
    const int digits = primitive_util::mantissaBits(type) + 1;
    return static_cast<int>(std::ceil(1.0 + digits * 0.30102999566398120));  // max_digits10
}

using literal_internal::hasNanPayload;

std::string formatNaN(PrimitiveType type, bool negative, uint64_t mantissa) {
    std::string out = negative ? "-nan" : "nan";
    if (hasNanPayload(type)) {
        const uint64_t quietBit = uint64_t{1} << (primitive_util::mantissaBits(type) - 1);
        if (mantissa != quietBit) {
            char buffer[32];
            auto r = std::to_chars(buffer, buffer + sizeof(buffer), mantissa, 16);
            out += "(0x";
            out.append(buffer, r.ptr);
            out += ')';
        }
    }
    return out;
}

std::string formatF32(float v) {
    if (std::isnan(v)) {
        const uint32_t bits = std::bit_cast<uint32_t>(v);
        return formatNaN(PrimitiveType::F32, (bits >> 31) != 0, bits & 0x7FFFFFu);
    }
    return literal_internal::formatFiniteOrInf(PrimitiveType::F32, static_cast<double>(v));
}

std::string formatF64(double v) {
    if (std::isnan(v)) {
        const uint64_t bits = std::bit_cast<uint64_t>(v);
        return formatNaN(PrimitiveType::F64, (bits >> 63) != 0, bits & ((uint64_t{1} << 52) - 1));
    }
    return literal_internal::formatFiniteOrInf(PrimitiveType::F64, v);
}

template <PrimitiveType T>
std::string formatElement(const NativeType<T>& v) {
    using N = NativeType<T>;
    if constexpr (T == PrimitiveType::PRED) {
        return v ? "true" : "false";
    } else if constexpr (std::is_integral_v<N>) {
        char buffer[32];
        auto r = std::to_chars(buffer, buffer + sizeof(buffer), v);
        return std::string(buffer, r.ptr);
    } else if constexpr (std::is_same_v<N, NarrowFloat<T>>) {
        const float f = float_util::bitsToFloat(T, v.bits);
        if (std::isnan(f)) {
            const uint64_t mantissa = v.bits & ((1u << primitive_util::mantissaBits(T)) - 1);
            return formatNaN(T, std::signbit(f), mantissa);
        }
        return literal_internal::formatFiniteOrInf(T, static_cast<double>(f));
    } else if constexpr (std::is_same_v<N, float>) {
        return formatF32(v);
    } else if constexpr (std::is_same_v<N, double>) {
        return formatF64(v);
    } else if constexpr (std::is_same_v<N, std::complex<float>>) {
        return "(" + formatF32(v.real()) + ", " + formatF32(v.imag()) + ")";
    } else {
        return "(" + formatF64(v.real()) + ", " + formatF64(v.imag()) + ")";
    }
}

// ---------------------------------------------------------------------------
// Printing.

constexpr int64_t kMaxEmptyBraceGroups = 4096;

void appendDenseArray(const Literal& literal, std::string& out) {
    const Shape& shape = literal.shape();
    const auto rank = static_cast<size_t>(shape.rank());
    if (rank == 0) {
        out += literal_internal::elementToString(literal, 0);
        return;
    }
    // An array with no elements but many brace groups before its zero dimension (s32[5,5,5,
    // 55,55,5,55,5,3,0,4] has 1.5e9) is printed elided, "{...}", which reads back as the same
    // empty array; small ones keep their nested braces, as XLA prints them.
    if (literal.elementCount() == 0) {
        int64_t groups = 1;
        for (int64_t d : shape.dimensions()) {
            if (d <= 0) break;
            groups = d > kMaxEmptyBraceGroups / groups ? kMaxEmptyBraceGroups + 1 : groups * d;
            if (groups > kMaxEmptyBraceGroups) {
                out += "{...}";
                return;
            }
        }
    }
    const bool isPred = shape.elementType() == PrimitiveType::PRED;
    std::vector<int64_t> indices;
    int64_t linear = 0;
    std::function<void(size_t)> print = [&](size_t dim) {
        if (dim == rank) {
            if (isPred) {
                out += literal.data<bool>()[static_cast<size_t>(linear)] ? "1" : "0";
            } else {
                out += literal_internal::elementToString(literal, linear);
            }
            ++linear;
            return;
        }
        const int64_t size = shape.dimensions(static_cast<int64_t>(dim));
        const size_t remaining = rank - dim;
        if (rank == 1) {
            out += '{';
        } else if (remaining == 1) {
            out += size <= 1 ? "{" : "{ ";
        } else if (rank > 3 && !indices.empty()) {
            out += "{ /*i" + std::to_string(indices.size() - 1) + "=" +
                   std::to_string(indices.back()) + "*/" + (size > 0 ? " " : "");
        } else {
            out += "{ ";
        }
        for (int64_t i = 0; i < size; ++i) {
            indices.push_back(i);
            print(dim + 1);
            indices.pop_back();
            if (i < size - 1) out += ", ";
        }
        if (rank == 1) {
            out += '}';
        } else if (remaining == 1) {
            out += size <= 1 ? "}" : " }";
        } else {
            out += " }";
        }
    };
    print(0);
}

void appendValue(const Literal& literal, std::string& out) {
    const Shape& shape = literal.shape();
    if (shape.isTuple()) {
        out += "( ";
        for (size_t i = 0; i < literal.tupleElements().size(); ++i) {
            if (i > 0) out += ", ";
            appendValue(literal.tupleElements()[i], out);
        }
        out += " )";
    } else if (shape.isToken()) {
        out += "token";
    } else if (shape.isOpaque()) {
        out += "opaque";
    } else if (literal_internal::holdsElements(shape)) {
        appendDenseArray(literal, out);
    } else {
        out += "invalid";
    }
}

}  // namespace

// ---------------------------------------------------------------------------
// Internal helpers.

namespace literal_internal {

bool parseDecimal(std::string_view text, double& value) { return parseDouble(text, value); }

bool hasNanPayload(PrimitiveType type) {
    switch (type) {
        case PrimitiveType::F16:
        case PrimitiveType::BF16:
        case PrimitiveType::F32:
        case PrimitiveType::F64:
        case PrimitiveType::F8E5M2:
        case PrimitiveType::F8E4M3:
        case PrimitiveType::F8E3M4:
            return true;
        default:
            return false;
    }
}

std::string elementToString(const Literal& literal, int64_t index) {
    return dispatchPrimitiveType(literal.elementType(), [&]<PrimitiveType T>() {
        return formatElement<T>(literal.data<NativeType<T>>()[static_cast<size_t>(index)]);
    });
}

std::string formatFiniteOrInf(PrimitiveType type, double value) {
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    Decimal d = shortestDecimal(type, value);
    // Fixed notation as %g would choose it at XLA's precision for the type.
    const int fixedLimit = std::max(static_cast<int>(d.digits.size()), displayDigits(type));
    if (d.exponent >= 0 && d.exponent < fixedLimit &&
        d.exponent + 1 > static_cast<int>(d.digits.size())) {
        // Print every integer digit of the value, not zero padding
        // (bf16 1008 is "1008", not "1010").
        Decimal exact = roundedDecimal(value, d.exponent + 1);
        if (exact.exponent == d.exponent &&
            readsBackAs(type, layoutDecimal(exact, fixedLimit), value)) {
            d = std::move(exact);
        }
    }
    return layoutDecimal(d, fixedLimit);
}

}  // namespace literal_internal

// ---------------------------------------------------------------------------
// Literal members.

std::string Literal::valueToString() const {
    std::string out;
    appendValue(*this, out);
    return out;
}

std::string Literal::toString() const {
    if (!isValid()) return "invalid";
    std::string out = m_shape.toString(/*printLayout=*/false);
    out += ' ';
    appendValue(*this, out);
    return out;
}

}  // namespace hloscope
