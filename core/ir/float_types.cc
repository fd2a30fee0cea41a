// Bit-exact conversions for XLA's narrow floating-point formats.
//
// Every format is described by a small table entry (storage bits, exponent
// and mantissa bits, bias, and its special-value "kind"); one generic
// encoder and decoder serve them all. The rounding and overflow rules follow
// ml_dtypes (the library XLA uses for these types):
//   - round to nearest, ties to even, including into the subnormal range;
//   - IEEE-like formats (f16, bf16, f8e5m2, f8e4m3, f8e3m4) overflow to
//     +-inf and keep -0;
//   - "fn" f8e4m3fn has no infinity: overflow and +-inf become NaN
//     (S.1111.111, sign kept);
//   - "fnuz" formats have a single NaN 0x80, no infinity and no -0: overflow,
//     +-inf and NaN become 0x80 and -0 becomes +0;
//   - f8e8m0fnu (unsigned, exponent only) has no zero and no sign: zero,
//     negative values, overflow and NaN become NaN (0xFF); ties round up;
//   - the MX formats f6e2m3fn, f6e3m2fn and f4e2m1fn have neither NaN nor
//     infinity: overflow and +-inf saturate to +-max. A NaN input maps, as in
//     ml_dtypes, to the bit pattern ml_dtypes calls quiet_NaN (the sign bit
//     alone, i.e. -0) for +NaN and to +0 for -NaN.
#include "core/ir/float_types.h"

#include <bit>
#include <cmath>
#include <limits>

namespace hloscope::float_util {
namespace {

enum class Kind : uint8_t { kIeee, kFn, kFnuz, kE8M0, kNoNanInf };

struct Format {
    int bits = 0;  // storage bits, sign included where the format has one
    int exponentBits = 0;
    int mantissaBits = 0;
    int bias = 0;
    Kind kind = Kind::kIeee;

    bool isValid() const { return bits > 0; }
    uint32_t storageMask() const { return (1u << bits) - 1; }
    uint32_t signBit() const { return kind == Kind::kE8M0 ? 0u : 1u << (bits - 1); }
    uint32_t mantissaMask() const { return (1u << mantissaBits) - 1; }
    uint32_t exponentAllOnes() const { return (1u << exponentBits) - 1; }

    // Largest finite magnitude as a bit pattern (sign clear).
    uint32_t maxFiniteBits() const {
        switch (kind) {
            case Kind::kIeee:
                return ((exponentAllOnes() - 1) << mantissaBits) | mantissaMask();
            case Kind::kFn:
                return (exponentAllOnes() << mantissaBits) | (mantissaMask() - 1);
            case Kind::kE8M0:
                return 0xFE;
            case Kind::kFnuz:
            case Kind::kNoNanInf:
                return signBit() - 1;
        }
        return 0;
    }
    uint32_t withSign(uint32_t magnitude, bool negative) const {
        if (!negative) return magnitude;
        if (kind == Kind::kFnuz && magnitude == 0) return 0;  // no -0
        return magnitude | signBit();
    }
    // The canonical NaN for a NaN input of the given sign.
    uint32_t nanBits(bool negative) const {
        switch (kind) {
            case Kind::kIeee:
                return withSign((exponentAllOnes() << mantissaBits) | (1u << (mantissaBits - 1)),
                                negative);
            case Kind::kFn:
                return withSign(signBit() - 1, negative);
            case Kind::kFnuz:
                return 0x80;
            case Kind::kE8M0:
                return 0xFF;
            case Kind::kNoNanInf:
                return negative ? 0 : signBit();  // ml_dtypes' quiet_NaN()
        }
        return 0;
    }
    // What an infinity or an overflowing finite value becomes.
    uint32_t overflowBits(bool negative) const {
        switch (kind) {
            case Kind::kIeee:
                return withSign(exponentAllOnes() << mantissaBits, negative);
            case Kind::kFn:
                return withSign(signBit() - 1, negative);
            case Kind::kFnuz:
                return 0x80;
            case Kind::kE8M0:
                return 0xFF;
            case Kind::kNoNanInf:
                return withSign(maxFiniteBits(), negative);
        }
        return 0;
    }
};

Format formatOf(PrimitiveType type) {
    using PT = PrimitiveType;
    switch (type) {
        case PT::F16:
            return {16, 5, 10, 15, Kind::kIeee};
        case PT::BF16:
            return {16, 8, 7, 127, Kind::kIeee};
        case PT::F8E5M2:
            return {8, 5, 2, 15, Kind::kIeee};
        case PT::F8E4M3:
            return {8, 4, 3, 7, Kind::kIeee};
        case PT::F8E4M3FN:
            return {8, 4, 3, 7, Kind::kFn};
        case PT::F8E4M3B11FNUZ:
            return {8, 4, 3, 11, Kind::kFnuz};
        case PT::F8E5M2FNUZ:
            return {8, 5, 2, 16, Kind::kFnuz};
        case PT::F8E4M3FNUZ:
            return {8, 4, 3, 8, Kind::kFnuz};
        case PT::F8E3M4:
            return {8, 3, 4, 3, Kind::kIeee};
        case PT::F8E8M0FNU:
            return {8, 8, 0, 127, Kind::kE8M0};
        case PT::F6E2M3FN:
            return {6, 2, 3, 1, Kind::kNoNanInf};
        case PT::F6E3M2FN:
            return {6, 3, 2, 3, Kind::kNoNanInf};
        case PT::F4E2M1FN:
            return {4, 2, 1, 1, Kind::kNoNanInf};
        default:
            return {};
    }
}

// Rounds a non-negative double below 2^53 to an integer, ties to even.
uint64_t roundHalfEven(double x) {
    double floorValue = std::floor(x);
    double fraction = x - floorValue;  // exact
    auto result = static_cast<uint64_t>(floorValue);
    if (fraction > 0.5 || (fraction == 0.5 && (result & 1) != 0)) ++result;
    return result;
}

uint32_t encode(const Format& f, double value) {
    const bool negative = std::signbit(value);
    if (std::isnan(value)) return f.nanBits(negative);
    if (std::isinf(value)) return f.overflowBits(negative);
    if (f.kind == Kind::kE8M0 && (negative || value == 0)) return 0xFF;  // no zero, no sign
    if (value == 0) return f.withSign(0, negative);

    const double magnitude = std::fabs(value);
    int exponent = 0;
    std::frexp(magnitude, &exponent);   // magnitude = [0.5, 1) * 2^exponent
    const int unbiased = exponent - 1;  // magnitude = 1.x * 2^unbiased
    const int minNormalExponent = 1 - f.bias;
    // Exponent of one unit in the last place at this magnitude.
    const int quantum = std::max(unbiased, minNormalExponent) - f.mantissaBits;
    // Exact: magnitude has at most 53 significant bits and the result is
    // below 2^(mantissaBits + 2).
    const uint64_t significand = roundHalfEven(std::ldexp(magnitude, -quantum));
    uint64_t bits = 0;
    if (unbiased >= minNormalExponent) {
        // The significand carries the implicit bit, which adds one to the
        // exponent field; a rounding carry propagates into the exponent too.
        bits = (static_cast<uint64_t>(unbiased + f.bias - 1) << f.mantissaBits) + significand;
    } else {
        bits = significand;  // subnormal (may round up to the smallest normal)
    }
    if (bits > f.maxFiniteBits()) return f.overflowBits(negative);
    return f.withSign(static_cast<uint32_t>(bits), negative);
}

// Exact value of a bit pattern; NaN results carry the sign ml_dtypes gives
// them (fnuz NaN 0x80 widens to -NaN).
double decode(const Format& f, uint32_t bits) {
    bits &= f.storageMask();
    if (f.kind == Kind::kE8M0) {
        if (bits == 0xFF) return std::numeric_limits<double>::quiet_NaN();
        return std::ldexp(1.0, static_cast<int>(bits) - f.bias);
    }
    const bool negative = (bits & f.signBit()) != 0;
    const uint32_t magnitude = bits & ~f.signBit();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (f.kind == Kind::kFnuz && bits == 0x80) return -nan;
    if (f.kind == Kind::kFn && magnitude == f.signBit() - 1) return negative ? -nan : nan;
    const uint32_t exponentField = magnitude >> f.mantissaBits;
    const uint32_t mantissa = magnitude & f.mantissaMask();
    if (f.kind == Kind::kIeee && exponentField == f.exponentAllOnes()) {
        if (mantissa == 0) {
            double inf = std::numeric_limits<double>::infinity();
            return negative ? -inf : inf;
        }
        return negative ? -nan : nan;
    }
    double value = exponentField == 0
                       ? std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissaBits)
                       : std::ldexp(static_cast<double>(mantissa | (1u << f.mantissaBits)),
                                    static_cast<int>(exponentField) - f.bias - f.mantissaBits);
    return negative ? -value : value;
}

template <typename F, typename U>
F reducePrecisionImpl(F input, int exponentBits, int mantissaBits) {
    constexpr int kTotalBits = static_cast<int>(sizeof(F) * 8);
    constexpr int kSrcMantissaBits = std::numeric_limits<F>::digits - 1;
    constexpr int kSrcExponentBits = kTotalBits - 1 - kSrcMantissaBits;
    exponentBits = std::max(exponentBits, 1);
    mantissaBits = std::max(mantissaBits, 0);
    U value = std::bit_cast<U>(input);
    if (mantissaBits < kSrcMantissaBits) {
        // Round to nearest even at the new last mantissa bit, then truncate.
        const int shift = kSrcMantissaBits - mantissaBits;
        const U lastMantissaBit = U{1} << shift;
        const U baseRoundingBias = (lastMantissaBit >> 1) - 1;
        const U xLastMantissaBit = (value & lastMantissaBit) >> shift;
        value = (value + xLastMantissaBit + baseRoundingBias) & ~(lastMantissaBit - 1);
    }
    if (exponentBits < kSrcExponentBits) {
        const U signMask = U{1} << (kTotalBits - 1);
        const U exponentMask = ((U{1} << kSrcExponentBits) - 1) << kSrcMantissaBits;
        const U exponentBias = (U{1} << (kSrcExponentBits - 1)) - 1;
        const U reducedBias = (U{1} << (exponentBits - 1)) - 1;
        const U reducedMaxExponent = exponentBias + reducedBias;
        const U reducedMinExponent = exponentBias - reducedBias;
        const U xExponent = value & exponentMask;
        const bool overflows = xExponent > (reducedMaxExponent << kSrcMantissaBits);
        // Note: XLA flushes what would be subnormal in the reduced format to zero.
        const bool underflows = xExponent <= (reducedMinExponent << kSrcMantissaBits);
        const U signedZero = value & signMask;
        const U signedInf = signedZero | exponentMask;
        if (overflows) value = signedInf;
        if (underflows) value = signedZero;
    }
    F result = std::bit_cast<F>(value);
    if (std::isnan(input)) result = mantissaBits > 0 ? input : std::numeric_limits<F>::infinity();
    return result;
}

}  // namespace

uint32_t floatToBits(PrimitiveType type, float value) {
    if (type == PrimitiveType::BF16) {
        // Round to nearest even on the top 16 bits; NaN becomes the quiet
        // NaN of its sign, as Eigen and ml_dtypes do.
        const uint32_t bits = std::bit_cast<uint32_t>(value);
        if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (bits & 0x80000000u) ? 0xFFC0u : 0x7FC0u;
        return (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
    }
    Format f = formatOf(type);
    if (!f.isValid()) return 0;
    // float -> double is exact, and encode() rounds the exact value once.
    return encode(f, static_cast<double>(value));
}

uint32_t doubleToBits(PrimitiveType type, double value) {
    Format f = formatOf(type);
    if (!f.isValid()) return 0;
    return encode(f, value);
}

float bitsToFloat(PrimitiveType type, uint32_t bits) {
    Format f = formatOf(type);
    if (!f.isValid()) return 0.0f;
    // f16 and bf16 widen by shifting, as Eigen does: NaN payloads survive.
    if (type == PrimitiveType::BF16) return std::bit_cast<float>((bits & 0xFFFFu) << 16);
    if (type == PrimitiveType::F16) {
        bits &= 0xFFFFu;
        if (((bits >> 10) & 0x1F) == 0x1F && (bits & 0x3FF) != 0) {
            uint32_t sign = (bits & 0x8000u) << 16;
            return std::bit_cast<float>(sign | 0x7F800000u | ((bits & 0x3FFu) << 13));
        }
    }
    // Every narrow value (f8e8m0fnu's 2^-127 included) is exact in float.
    return static_cast<float>(decode(f, bits));
}

float reducePrecision(float value, int exponentBits, int mantissaBits) {
    return reducePrecisionImpl<float, uint32_t>(value, exponentBits, mantissaBits);
}

double reducePrecision(double value, int exponentBits, int mantissaBits) {
    return reducePrecisionImpl<double, uint64_t>(value, exponentBits, mantissaBits);
}

bool hasInfinity(PrimitiveType type) {
    if (type == PrimitiveType::F32 || type == PrimitiveType::F64) return true;
    Format f = formatOf(type);
    return f.isValid() && f.kind == Kind::kIeee;
}

bool hasNaN(PrimitiveType type) {
    if (type == PrimitiveType::F32 || type == PrimitiveType::F64) return true;
    Format f = formatOf(type);
    return f.isValid() && f.kind != Kind::kNoNanInf;
}

bool hasNegativeZero(PrimitiveType type) {
    if (type == PrimitiveType::F32 || type == PrimitiveType::F64) return true;
    Format f = formatOf(type);
    return f.isValid() && f.kind != Kind::kFnuz && f.kind != Kind::kE8M0;
}

double maxFinite(PrimitiveType type) {
    if (type == PrimitiveType::F32) return std::numeric_limits<float>::max();
    if (type == PrimitiveType::F64) return std::numeric_limits<double>::max();
    Format f = formatOf(type);
    return f.isValid() ? decode(f, f.maxFiniteBits()) : 0.0;
}

double minNormal(PrimitiveType type) {
    if (type == PrimitiveType::F32) return std::numeric_limits<float>::min();
    if (type == PrimitiveType::F64) return std::numeric_limits<double>::min();
    Format f = formatOf(type);
    if (!f.isValid()) return 0.0;
    if (f.kind == Kind::kE8M0) return std::ldexp(1.0, -127);  // 0x00: no subnormals
    return std::ldexp(1.0, 1 - f.bias);
}

}  // namespace hloscope::float_util
