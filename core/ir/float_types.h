// Storage types and conversions for XLA's narrow floating-point formats:
// f16, bf16, the f8 family, f6 and f4. Each is a trivially copyable wrapper
// around its bit pattern; conversion from float rounds to nearest-even and
// follows each format's overflow rule (saturating "fn" formats map
// overflow to NaN when they have one, others to infinity; formats without
// NaN/inf saturate to the largest finite value, as XLA/ml_dtypes do).
#pragma once

#include <cstdint>

#include "core/ir/primitive_type.h"

namespace hloscope {

// Bit-pattern wrapper of narrow float type T (the tag is the PrimitiveType).
template <PrimitiveType T>
struct NarrowFloat {
    using Bits = std::conditional_t<(T == PrimitiveType::F16 || T == PrimitiveType::BF16),
                                    uint16_t, uint8_t>;
    Bits bits = 0;

    static NarrowFloat fromBits(Bits b) {
        NarrowFloat f;
        f.bits = b;
        return f;
    }
    bool operator==(const NarrowFloat&) const = default;  // bitwise
};

using Half = NarrowFloat<PrimitiveType::F16>;
using BFloat16 = NarrowFloat<PrimitiveType::BF16>;

namespace float_util {

// Converts a float to the bit pattern of narrow format `type` (round to
// nearest even, format-specific overflow/NaN handling). `type` must be a
// narrow float type (f16, bf16, f8*, f6*, f4*).
uint32_t floatToBits(PrimitiveType type, float value);
// Exact widening conversion of a narrow format's bit pattern to float.
float bitsToFloat(PrimitiveType type, uint32_t bits);
// Same via double (for f64 -> narrow without double rounding).
uint32_t doubleToBits(PrimitiveType type, double value);

// Rounds `value` to the nearest value representable in a float format with
// the given exponent and mantissa bits (XLA's reduce-precision semantics).
float reducePrecision(float value, int exponentBits, int mantissaBits);
double reducePrecision(double value, int exponentBits, int mantissaBits);

bool hasInfinity(PrimitiveType type);
bool hasNaN(PrimitiveType type);
bool hasNegativeZero(PrimitiveType type);  // false for the *fnuz formats
double maxFinite(PrimitiveType type);
double minNormal(PrimitiveType type);

}  // namespace float_util

template <PrimitiveType T>
inline float toFloat(NarrowFloat<T> v) {
    return float_util::bitsToFloat(T, v.bits);
}
template <PrimitiveType T>
inline NarrowFloat<T> fromFloat(float f) {
    return NarrowFloat<T>::fromBits(
        static_cast<typename NarrowFloat<T>::Bits>(float_util::floatToBits(T, f)));
}

}  // namespace hloscope
