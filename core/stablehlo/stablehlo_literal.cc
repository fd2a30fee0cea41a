#include "core/stablehlo/stablehlo_literal.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace hloscope::stablehlo {
namespace {

// Parameters of the narrow floating-point formats (f16, bf16, f8, f6, f4).
struct NarrowFormat {
    int exponentBits;
    int mantissaBits;
    int bias;
    enum class Special : uint8_t { kIeee, kFiniteNanAllOnes, kNanIsNegZero, kNone, kE8M0 };
    Special special;
    bool hasSign;
};

std::optional<NarrowFormat> narrowFormat(PrimitiveType type) {
    using S = NarrowFormat::Special;
    switch (type) {
    case PrimitiveType::F16: return NarrowFormat{5, 10, 15, S::kIeee, true};
    case PrimitiveType::BF16: return NarrowFormat{8, 7, 127, S::kIeee, true};
    case PrimitiveType::F8E5M2: return NarrowFormat{5, 2, 15, S::kIeee, true};
    case PrimitiveType::F8E4M3: return NarrowFormat{4, 3, 7, S::kIeee, true};
    case PrimitiveType::F8E3M4: return NarrowFormat{3, 4, 3, S::kIeee, true};
    case PrimitiveType::F8E4M3FN: return NarrowFormat{4, 3, 7, S::kFiniteNanAllOnes, true};
    case PrimitiveType::F8E4M3B11FNUZ: return NarrowFormat{4, 3, 11, S::kNanIsNegZero, true};
    case PrimitiveType::F8E5M2FNUZ: return NarrowFormat{5, 2, 16, S::kNanIsNegZero, true};
    case PrimitiveType::F8E4M3FNUZ: return NarrowFormat{4, 3, 8, S::kNanIsNegZero, true};
    case PrimitiveType::F8E8M0FNU: return NarrowFormat{8, 0, 127, S::kE8M0, false};
    case PrimitiveType::F6E2M3FN: return NarrowFormat{2, 3, 1, S::kNone, true};
    case PrimitiveType::F6E3M2FN: return NarrowFormat{3, 2, 3, S::kNone, true};
    case PrimitiveType::F4E2M1FN: return NarrowFormat{2, 1, 1, S::kNone, true};
    default: return std::nullopt;
    }
}

double decodeNarrow(const NarrowFormat& f, uint32_t bits) {
    using S = NarrowFormat::Special;
    const uint32_t mantissaMask = (1u << f.mantissaBits) - 1;
    const uint32_t exponentMask = (1u << f.exponentBits) - 1;
    const int signShift = f.exponentBits + f.mantissaBits;
    bool negative = f.hasSign && ((bits >> signShift) & 1u);
    uint32_t e = (bits >> f.mantissaBits) & exponentMask;
    uint32_t m = bits & mantissaMask;
    double sign = negative ? -1.0 : 1.0;
    switch (f.special) {
    case S::kIeee:
        if (e == exponentMask)
            return m == 0 ? sign * std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
        break;
    case S::kFiniteNanAllOnes:
        if (e == exponentMask && m == mantissaMask) return std::numeric_limits<double>::quiet_NaN();
        break;
    case S::kNanIsNegZero:
        if (negative && e == 0 && m == 0) return std::numeric_limits<double>::quiet_NaN();
        break;
    case S::kE8M0:
        if (bits == 0xFF) return std::numeric_limits<double>::quiet_NaN();
        return std::ldexp(1.0, static_cast<int>(e) - f.bias);
    case S::kNone: break;
    }
    if (e == 0) return sign * std::ldexp(static_cast<double>(m), 1 - f.bias - f.mantissaBits);
    return sign * std::ldexp(static_cast<double>(m | (1u << f.mantissaBits)),
                             static_cast<int>(e) - f.bias - f.mantissaBits);
}

// Largest finite value of the format.
double maxFinite(const NarrowFormat& f) {
    using S = NarrowFormat::Special;
    int emax = (1 << f.exponentBits) - 1;
    int mmax = (1 << f.mantissaBits) - 1;
    if (f.special == S::kIeee) emax -= 1;
    if (f.special == S::kFiniteNanAllOnes) mmax -= 1;
    if (f.special == S::kE8M0) emax -= 1;
    return std::ldexp(static_cast<double>(mmax | (1 << f.mantissaBits)),
                      emax - f.bias - f.mantissaBits);
}

// Rounds `value` to the nearest value of the format (ties to even), with
// XLA's overflow rules: to infinity where the format has one, else to NaN
// where it has one, else saturating.
double roundToNarrow(const NarrowFormat& f, double value) {
    using S = NarrowFormat::Special;
    if (std::isnan(value)) return value;
    bool negative = std::signbit(value) && f.hasSign;
    double a = std::fabs(value);
    double max = maxFinite(f);
    if (std::isinf(a)) {
        if (f.special == S::kIeee) return value;
        if (f.special == S::kNone) return negative ? -max : max;
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (a == 0) {
        if (f.special == S::kE8M0) return std::ldexp(1.0, -f.bias);
        return f.special == S::kNanIsNegZero ? 0.0 : (negative ? -0.0 : 0.0);
    }
    int exp = 0;
    std::frexp(a, &exp);  // a = frac * 2^exp, frac in [0.5, 1)
    int e = exp - 1;      // a = 1.x * 2^e
    int minExponent = 1 - f.bias;
    if (f.special == S::kE8M0) minExponent = -f.bias;
    if (e < minExponent) e = minExponent;
    double quantum = std::ldexp(1.0, e - f.mantissaBits);
    double rounded = std::nearbyint(a / quantum) * quantum;
    if (rounded > max) {
        // Values that round to just above max overflow.
        if (f.special == S::kIeee) return negative ? -std::numeric_limits<double>::infinity()
                                                   : std::numeric_limits<double>::infinity();
        if (f.special == S::kNone || f.special == S::kE8M0) rounded = max;
        else return std::numeric_limits<double>::quiet_NaN();
    }
    if (rounded == 0 && f.special == S::kNanIsNegZero) return 0.0;
    return negative ? -rounded : rounded;
}

template <typename T>
void appendShortest(std::string& out, T value) {
    char buffer[64];
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out.append(buffer, result.ptr);
}

// NaN payload text for a NaN of `type` with raw bits (XLA prints `nan` for
// the canonical quiet NaN and `nan(0x...)` otherwise).
void appendNan(std::string& out, bool negative, uint64_t payload, uint64_t canonicalPayload) {
    if (negative) out += '-';
    out += "nan";
    if (payload != canonicalPayload) {
        char buffer[32];
        auto result = std::to_chars(buffer, buffer + sizeof(buffer), payload, 16);
        out += "(0x";
        out.append(buffer, result.ptr);
        out += ')';
    }
}

void appendDouble(std::string& out, PrimitiveType type, double value) {
    if (std::isnan(value)) {
        out += std::signbit(value) ? "-nan" : "nan";
        return;
    }
    if (std::isinf(value)) {
        out += value < 0 ? "-inf" : "inf";
        return;
    }
    if (type == PrimitiveType::F64 || type == PrimitiveType::C128) {
        appendShortest(out, value);
    } else {
        // f32 and every narrower format are exact in float.
        appendShortest(out, static_cast<float>(value));
    }
}

// Appends the text of a float of `type` given as its raw bit pattern.
void appendFloatBits(std::string& out, PrimitiveType type, uint64_t bits) {
    if (type == PrimitiveType::F32 || type == PrimitiveType::C64) {
        uint32_t b = static_cast<uint32_t>(bits);
        float f;
        std::memcpy(&f, &b, sizeof(f));
        if (std::isnan(f)) {
            appendNan(out, (b >> 31) != 0, b & 0x7FFFFF, 0x400000);
            return;
        }
        appendDouble(out, PrimitiveType::F32, f);
        return;
    }
    if (type == PrimitiveType::F64 || type == PrimitiveType::C128) {
        double d;
        std::memcpy(&d, &bits, sizeof(d));
        if (std::isnan(d)) {
            appendNan(out, (bits >> 63) != 0, bits & 0xFFFFFFFFFFFFFull, 0x8000000000000ull);
            return;
        }
        appendDouble(out, PrimitiveType::F64, d);
        return;
    }
    auto format = narrowFormat(type);
    if (!format) {
        out += '0';
        return;
    }
    double value = decodeNarrow(*format, static_cast<uint32_t>(bits));
    if (std::isnan(value) && format->special == NarrowFormat::Special::kIeee) {
        uint64_t payload = bits & ((1ull << format->mantissaBits) - 1);
        bool negative = (bits >> (format->exponentBits + format->mantissaBits)) & 1;
        appendNan(out, negative, payload, 1ull << (format->mantissaBits - 1));
        return;
    }
    appendDouble(out, type, value);
}

bool isFloatLike(PrimitiveType type) {
    return primitive_util::isFloatingPoint(type) || primitive_util::isComplex(type);
}

// The component (real) type of complex types; the type itself otherwise.
PrimitiveType componentType(PrimitiveType type) {
    if (type == PrimitiveType::C64) return PrimitiveType::F32;
    if (type == PrimitiveType::C128) return PrimitiveType::F64;
    return type;
}

Status appendTokenValue(std::string& out, PrimitiveType type, std::string_view token) {
    if (type == PrimitiveType::PRED) {
        if (token == "true" || token == "1") {
            out += "true";
        } else if (token == "false" || token == "0") {
            out += "false";
        } else {
            return invalidArgument("expected true or false for an i1 element, found '" +
                                   std::string(token) + "'");
        }
        return Status::ok();
    }
    if (token == "true" || token == "false")
        return invalidArgument("boolean value '" + std::string(token) + "' for a non-i1 element");
    bool hex = token.starts_with("0x") || token.starts_with("0X");
    if (isFloatLike(type)) {
        PrimitiveType component = componentType(type);
        if (hex) {
            int64_t bits = 0;
            if (!parseIntegerToken(token, bits))
                return invalidArgument("bad hexadecimal float '" + std::string(token) + "'");
            appendFloatBits(out, component, static_cast<uint64_t>(bits));
            return Status::ok();
        }
        std::string text(token);
        char* end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size())
            return invalidArgument("bad floating-point value '" + text + "'");
        out += formatScalar(component, value);
        return Status::ok();
    }
    int64_t value = 0;
    if (!parseIntegerToken(token, value)) {
        // Integers written as floats ("1.000000e+00") do not occur in valid
        // MLIR; reject them.
        return invalidArgument("bad integer value '" + std::string(token) + "'");
    }
    out += formatInteger(type, value);
    return Status::ok();
}

// Width in bytes of one element in MLIR's hex dense storage.
int hexElementBytes(PrimitiveType type) {
    if (type == PrimitiveType::PRED) return 1;
    int bits = primitive_util::bitWidth(type);
    return bits < 8 ? 1 : bits / 8;
}

uint64_t readLittleEndian(const std::string& bytes, size_t offset, int width) {
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i)
        v = (v << 8) | static_cast<uint8_t>(bytes[offset + static_cast<size_t>(i)]);
    return v;
}

void appendHexElement(std::string& out, PrimitiveType type, const std::string& bytes,
                      size_t offset) {
    if (type == PrimitiveType::PRED) {
        out += bytes[offset] != 0 ? "true" : "false";
        return;
    }
    if (primitive_util::isComplex(type)) {
        int half = hexElementBytes(type) / 2;
        PrimitiveType component = componentType(type);
        out += '(';
        appendFloatBits(out, component, readLittleEndian(bytes, offset, half));
        out += ", ";
        appendFloatBits(out, component, readLittleEndian(bytes, offset + static_cast<size_t>(half), half));
        out += ')';
        return;
    }
    int width = hexElementBytes(type);
    uint64_t raw = readLittleEndian(bytes, offset, width);
    if (primitive_util::isFloatingPoint(type)) {
        appendFloatBits(out, type, raw);
        return;
    }
    out += formatInteger(type, static_cast<int64_t>(raw));
}

// Appends `{...}` nesting for `dims` where element i's text comes from `element(i)`.
template <typename ElementFn>
void appendNested(std::string& out, const std::vector<int64_t>& dims, size_t dim, int64_t& index,
                  ElementFn& element) {
    if (dim == dims.size()) {
        element(index++, out);
        return;
    }
    out += '{';
    for (int64_t i = 0; i < dims[dim]; ++i) {
        if (i) out += ", ";
        appendNested(out, dims, dim + 1, index, element);
    }
    out += '}';
}

}  // namespace

bool parseIntegerToken(std::string_view token, int64_t& value) {
    bool negative = false;
    if (!token.empty() && (token.front() == '-' || token.front() == '+')) {
        negative = token.front() == '-';
        token.remove_prefix(1);
    }
    int base = 10;
    if (token.starts_with("0x") || token.starts_with("0X")) {
        base = 16;
        token.remove_prefix(2);
    }
    uint64_t magnitude = 0;
    auto result = std::from_chars(token.data(), token.data() + token.size(), magnitude, base);
    if (result.ec != std::errc() || result.ptr != token.data() + token.size()) return false;
    value = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
    return true;
}

std::string formatInteger(PrimitiveType type, int64_t value) {
    if (type == PrimitiveType::PRED) return value != 0 ? "true" : "false";
    if (isFloatLike(type)) return formatScalar(type, static_cast<double>(value));
    int bits = primitive_util::bitWidth(type);
    uint64_t raw = static_cast<uint64_t>(value);
    if (bits < 64) raw &= (1ull << bits) - 1;
    char buffer[32];
    if (primitive_util::isUnsignedInteger(type)) {
        auto result = std::to_chars(buffer, buffer + sizeof(buffer), raw);
        return std::string(buffer, result.ptr);
    }
    int64_t signedValue = static_cast<int64_t>(raw);
    if (bits < 64 && (raw >> (bits - 1)) & 1) signedValue = static_cast<int64_t>(raw) - (int64_t{1} << bits);
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), signedValue);
    return std::string(buffer, result.ptr);
}

std::string formatScalar(PrimitiveType type, double value) {
    std::string out;
    if (type == PrimitiveType::PRED) return value != 0 ? "true" : "false";
    if (primitive_util::isComplex(type)) {
        out += '(';
        appendDouble(out, componentType(type), componentType(type) == PrimitiveType::F32
                                                    ? static_cast<double>(static_cast<float>(value))
                                                    : value);
        out += ", 0)";
        return out;
    }
    if (type == PrimitiveType::F32) {
        appendDouble(out, type, static_cast<float>(value));
        return out;
    }
    if (type == PrimitiveType::F64) {
        appendDouble(out, type, value);
        return out;
    }
    if (auto format = narrowFormat(type)) {
        appendDouble(out, type, roundToNarrow(*format, value));
        return out;
    }
    // Integers: C++ conversion with saturation.
    if (std::isnan(value)) return "0";
    double clamped = std::fmax(std::fmin(value, 9.2233720368547748e18), -9.2233720368547758e18);
    return formatInteger(type, static_cast<int64_t>(clamped));
}

bool denseIsSplat(const DenseData& dense, const Shape& shape) {
    int64_t count = shape.elementCount();
    if (dense.hex) {
        int width = hexElementBytes(shape.elementType());
        return count != 1 && dense.bytes.size() == static_cast<size_t>(width);
    }
    size_t perElement = dense.complexPairs ? 2 : 1;
    return !dense.bracketed && dense.values.size() == perElement;
}

StatusOr<std::string> denseScalarText(const DenseData& dense, PrimitiveType type) {
    std::string out;
    if (dense.hex) {
        if (dense.bytes.size() < static_cast<size_t>(hexElementBytes(type)))
            return invalidArgument("dense hex data too short for one element");
        appendHexElement(out, type, dense.bytes, 0);
        return out;
    }
    if (dense.values.empty()) return invalidArgument("empty dense literal");
    if (primitive_util::isComplex(type)) {
        out += '(';
        HLO_RETURN_IF_ERROR(appendTokenValue(out, type, dense.values[0]));
        out += ", ";
        if (dense.complexPairs) {
            HLO_RETURN_IF_ERROR(appendTokenValue(out, type, dense.values[1]));
        } else {
            out += '0';
        }
        out += ')';
        return out;
    }
    if (dense.complexPairs) return invalidArgument("complex value for a non-complex element type");
    HLO_RETURN_IF_ERROR(appendTokenValue(out, type, dense.values[0]));
    return out;
}

StatusOr<std::string> denseToLiteralText(const DenseData& dense, const Shape& shape) {
    if (!shape.isArray()) return invalidArgument("dense literal for a non-array type");
    PrimitiveType type = shape.elementType();
    int64_t count = 1;
    for (int64_t d : shape.dimensions()) {
        if (d < 0) return invalidArgument("dense literal of a dynamically shaped tensor");
        count *= d;
        if (count > (int64_t{1} << 31)) return invalidArgument("dense literal too large");
    }
    std::string out;
    if (denseIsSplat(dense, shape) || (count == 1 && !dense.bracketed && !dense.hex)) {
        HLO_ASSIGN_OR_RETURN(std::string scalar, denseScalarText(dense, type));
        if (shape.rank() == 0) return scalar;
        out.reserve(static_cast<size_t>(count) * (scalar.size() + 2) + 16);
        int64_t index = 0;
        auto element = [&](int64_t, std::string& o) { o += scalar; };
        appendNested(out, shape.dimensions(), 0, index, element);
        return out;
    }
    if (dense.hex) {
        int width = hexElementBytes(type);
        size_t needed = static_cast<size_t>(count) * static_cast<size_t>(width);
        bool packedPred = type == PrimitiveType::PRED && dense.bytes.size() != needed &&
                          dense.bytes.size() == static_cast<size_t>((count + 7) / 8);
        if (dense.bytes.size() != needed && !packedPred)
            return invalidArgument("dense hex data has " + std::to_string(dense.bytes.size()) +
                                   " bytes, expected " + std::to_string(needed) + " for " +
                                   shape.toString(false));
        int64_t index = 0;
        auto element = [&](int64_t i, std::string& o) {
            if (packedPred) {
                bool bit = (static_cast<uint8_t>(dense.bytes[static_cast<size_t>(i / 8)]) >> (i % 8)) & 1;
                o += bit ? "true" : "false";
                return;
            }
            appendHexElement(o, type, dense.bytes, static_cast<size_t>(i) * static_cast<size_t>(width));
        };
        if (shape.rank() == 0) {
            element(0, out);
            return out;
        }
        appendNested(out, shape.dimensions(), 0, index, element);
        return out;
    }
    size_t perElement = dense.complexPairs ? 2 : 1;
    if (dense.values.size() != static_cast<size_t>(count) * perElement)
        return invalidArgument("dense literal has " +
                               std::to_string(dense.values.size() / perElement) +
                               " elements, expected " + std::to_string(count) + " for " +
                               shape.toString(false));
    if (dense.complexPairs && !primitive_util::isComplex(type))
        return invalidArgument("complex values for a non-complex element type");
    if (dense.bracketed && shape.rank() > 0 && dense.nestedShape != shape.dimensions() &&
        count > 0)
        return invalidArgument("dense literal nesting does not match " + shape.toString(false));
    Status status;
    int64_t index = 0;
    auto element = [&](int64_t i, std::string& o) {
        if (!status.isOk()) return;
        size_t at = static_cast<size_t>(i) * perElement;
        if (primitive_util::isComplex(type)) {
            o += '(';
            status = appendTokenValue(o, type, dense.values[at]);
            o += ", ";
            if (status.isOk()) {
                if (dense.complexPairs)
                    status = appendTokenValue(o, type, dense.values[at + 1]);
                else
                    o += '0';
            }
            o += ')';
            return;
        }
        status = appendTokenValue(o, type, dense.values[at]);
    };
    if (shape.rank() == 0) {
        element(0, out);
    } else {
        appendNested(out, shape.dimensions(), 0, index, element);
    }
    if (!status.isOk()) return status;
    return out;
}

}  // namespace hloscope::stablehlo
