// Elementwise family of the evaluator: unary and binary arithmetic, compare,
// select, clamp, convert, bitcast-convert, reduce-precision, map,
// stochastic-convert, real/imag/complex, is-finite.
//
// Kernels are type-specialised loops over Literal::data<T>() spans. Integer
// arithmetic wraps (sub-byte types are re-normalised to their width after
// every operation); narrow floats are computed in f32 and rounded back, as
// XLA does. Edge cases follow XLA's evaluator: integer x/0 = -1 (all bits
// set), x%0 = x, INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0, shifts by >= the bit
// width give 0 (or the sign fill for arithmetic shifts), max/min propagate
// NaN (the lhs first), integer power with a negative exponent is 0 unless the
// base is 1.
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/interpreter/interpreter_internal.h"

namespace hloscope::evaluator {
namespace {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

template <typename T>
struct IsNarrowFloat : std::false_type {};
template <PrimitiveType P>
struct IsNarrowFloat<NarrowFloat<P>> : std::true_type {};
template <typename T>
constexpr bool kIsNarrow = IsNarrowFloat<T>::value;

template <typename T>
struct IsComplexType : std::false_type {};
template <typename C>
struct IsComplexType<std::complex<C>> : std::true_type {};
template <typename T>
constexpr bool kIsComplex = IsComplexType<T>::value;

template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <PrimitiveType PT>
constexpr int intBits() {
    switch (PT) {
    case PrimitiveType::S1:
    case PrimitiveType::U1: return 1;
    case PrimitiveType::S2:
    case PrimitiveType::U2: return 2;
    case PrimitiveType::S4:
    case PrimitiveType::U4: return 4;
    default: return static_cast<int>(sizeof(NativeType<PT>) * 8);
    }
}

// Reduces an integer value to type PT's width (wrap-around), sign- or
// zero-extended into the storage type.
template <PrimitiveType PT, typename V>
inline NativeType<PT> wrap(V v) {
    using T = NativeType<PT>;
    constexpr int bits = intBits<PT>();
    if constexpr (bits >= 8) {
        return static_cast<T>(v);
    } else if constexpr (std::is_signed_v<T>) {
        return static_cast<T>(static_cast<int8_t>(static_cast<uint8_t>(v) << (8 - bits)) >>
                              (8 - bits));
    } else {
        return static_cast<T>(static_cast<uint8_t>(v) & ((1u << bits) - 1));
    }
}

// Unsigned type wide enough for wrap-around arithmetic without promotion
// to (signed) int.
template <typename T>
using WideUnsigned = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <PrimitiveType PT>
inline uint64_t rawInt(NativeType<PT> v) {
    constexpr int bits = intBits<PT>();
    uint64_t u = static_cast<uint64_t>(static_cast<std::make_unsigned_t<NativeType<PT>>>(v));
    if constexpr (bits < 64) u &= (uint64_t{1} << bits) - 1;
    return u;
}

// Loops; scalar operands (size 1) broadcast against the result size.
template <typename R, typename A, typename F>
void mapUnary(std::span<const A> a, std::span<R> out, F f) {
    if (a.size() == out.size()) {
        for (size_t i = 0; i < out.size(); ++i) out[i] = f(a[i]);
    } else {
        const R v = f(a[0]);
        for (size_t i = 0; i < out.size(); ++i) out[i] = v;
    }
}

template <typename R, typename A, typename B, typename F>
void mapBinary(std::span<const A> a, std::span<const B> b, std::span<R> out, F f) {
    const size_t n = out.size();
    if (a.size() == n && b.size() == n) {
        const A* pa = a.data();
        const B* pb = b.data();
        R* po = out.data();
        for (size_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    } else if (b.size() == n) {
        const A x = a[0];
        for (size_t i = 0; i < n; ++i) out[i] = f(x, b[i]);
    } else if (a.size() == n) {
        const B y = b[0];
        for (size_t i = 0; i < n; ++i) out[i] = f(a[i], y);
    } else {
        const R v = f(a[0], b[0]);
        for (size_t i = 0; i < n; ++i) out[i] = v;
    }
}

template <typename R, typename A, typename B, typename C, typename F>
void mapTernary(std::span<const A> a, std::span<const B> b, std::span<const C> c, std::span<R> out,
                F f) {
    const size_t n = out.size();
    const size_t sa = a.size() == n ? 1 : 0, sb = b.size() == n ? 1 : 0, sc = c.size() == n ? 1 : 0;
    for (size_t i = 0; i < n; ++i) out[i] = f(a[i * sa], b[i * sb], c[i * sc]);
}

// Narrow floats <-> f32 buffers.
std::vector<float> widen(const Literal& literal) {
    std::vector<float> result(static_cast<size_t>(literal.elementCount()));
    if (result.empty()) return result;
    dispatchPrimitiveType(literal.elementType(), [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        if constexpr (kIsNarrow<T>) {
            std::span<const T> d = literal.data<T>();
            for (size_t i = 0; i < result.size(); ++i) result[i] = toFloat(d[i]);
        } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            std::span<const T> d = literal.data<T>();
            for (size_t i = 0; i < result.size(); ++i) result[i] = static_cast<float>(d[i]);
        }
    });
    return result;
}

void narrowInto(std::span<const float> values, Literal& out) {
    if (values.empty()) return;
    dispatchPrimitiveType(out.elementType(), [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        if constexpr (kIsNarrow<T>) {
            std::span<T> d = out.data<T>();
            for (size_t i = 0; i < d.size(); ++i) d[i] = fromFloat<PT>(values[i]);
        }
    });
}

bool isNarrowFloat(PrimitiveType type) {
    return primitive_util::isFloatingPoint(type) && type != PrimitiveType::F32 &&
           type != PrimitiveType::F64;
}

// Runs kernel(input spans..., output span) in the compute type of a
// floating-point element type: f32/f64 in place, narrow floats through f32.
template <size_t N, typename Kernel>
bool floatKernel(PrimitiveType type, std::array<const Literal*, N> inputs, Literal& out,
                 Kernel&& kernel) {
    auto invoke = [&]<typename C>(const std::array<std::span<const C>, N>& spans,
                                  std::span<C> result) -> bool {
        if constexpr (N == 1)
            return kernel(spans[0], result);
        else if constexpr (N == 2)
            return kernel(spans[0], spans[1], result);
        else
            return kernel(spans[0], spans[1], spans[2], result);
    };
    auto direct = [&]<typename C>() -> bool {
        std::array<std::span<const C>, N> spans;
        for (size_t i = 0; i < N; ++i) spans[i] = inputs[i]->template data<C>();
        return invoke(spans, out.data<C>());
    };
    if (type == PrimitiveType::F32) return direct.template operator()<float>();
    if (type == PrimitiveType::F64) return direct.template operator()<double>();
    std::array<std::vector<float>, N> widened;
    std::array<std::span<const float>, N> spans;
    for (size_t i = 0; i < N; ++i) {
        widened[i] = widen(*inputs[i]);
        spans[i] = widened[i];
    }
    std::vector<float> result(static_cast<size_t>(out.elementCount()));
    if (!invoke(spans, std::span<float>(result))) return false;
    narrowInto(result, out);
    return true;
}

template <typename C>
C roundHalfEven(C x) {
    C r = std::round(x);
    if (std::fabs(x - std::trunc(x)) == C(0.5)) r = C(2) * std::round(x / C(2));
    return r;
}

// ---------------------------------------------------------------------------
// Unary.

template <typename C>
bool unaryFloat(HloOpcode op, std::span<const C> in, std::span<C> out) {
    auto m = [&](auto f) {
        mapUnary(in, out, f);
        return true;
    };
    switch (op) {
    case HloOpcode::kAbs: return m([](C x) { return std::fabs(x); });
    case HloOpcode::kNegate: return m([](C x) { return -x; });
    case HloOpcode::kSign:
        return m([](C x) { return std::isnan(x) ? x : std::copysign(C(x != C(0)), x); });
    case HloOpcode::kFloor: return m([](C x) { return std::floor(x); });
    case HloOpcode::kCeil: return m([](C x) { return std::ceil(x); });
    case HloOpcode::kRoundNearestAfz: return m([](C x) { return std::round(x); });
    case HloOpcode::kRoundNearestEven: return m([](C x) { return roundHalfEven(x); });
    case HloOpcode::kExp: return m([](C x) { return std::exp(x); });
    case HloOpcode::kExpm1: return m([](C x) { return std::expm1(x); });
    case HloOpcode::kLog: return m([](C x) { return std::log(x); });
    case HloOpcode::kLog1p: return m([](C x) { return std::log1p(x); });
    case HloOpcode::kSqrt: return m([](C x) { return std::sqrt(x); });
    case HloOpcode::kRsqrt: return m([](C x) { return C(1) / std::sqrt(x); });
    case HloOpcode::kCbrt: return m([](C x) { return std::cbrt(x); });
    case HloOpcode::kSin: return m([](C x) { return std::sin(x); });
    case HloOpcode::kCos: return m([](C x) { return std::cos(x); });
    case HloOpcode::kTan: return m([](C x) { return std::tan(x); });
    case HloOpcode::kTanh: return m([](C x) { return std::tanh(x); });
    case HloOpcode::kSinh: return m([](C x) { return std::sinh(x); });
    case HloOpcode::kCosh: return m([](C x) { return std::cosh(x); });
    case HloOpcode::kAsin: return m([](C x) { return std::asin(x); });
    case HloOpcode::kAcos: return m([](C x) { return std::acos(x); });
    case HloOpcode::kAtan: return m([](C x) { return std::atan(x); });
    case HloOpcode::kAsinh: return m([](C x) { return std::asinh(x); });
    case HloOpcode::kAcosh: return m([](C x) { return std::acosh(x); });
    case HloOpcode::kAtanh: return m([](C x) { return std::atanh(x); });
    case HloOpcode::kErf: return m([](C x) { return std::erf(x); });
    case HloOpcode::kLogistic: return m([](C x) { return C(1) / (C(1) + std::exp(-x)); });
    default: return false;
    }
}

// Wider real type for complex helpers: double for c64, long double for c128.
template <typename R>
using WideReal = std::conditional_t<std::is_same_v<R, float>, double, long double>;

// exp(a + bi) = e^a (cos b + i sin b), with a real argument (b == 0) kept on
// the real axis, so exp(inf) is inf and not (inf, nan). Non-finite a with
// non-zero b gives NaNs, as XLA's expansion does.
template <typename Z>
Z complexExp(Z x) {
    using R = typename Z::value_type;
    using W = WideReal<R>;
    const W a = x.real(), b = x.imag();
    const W e = std::exp(a);
    if (b == 0) return Z(static_cast<R>(e), x.imag());
    return Z(static_cast<R>(e * std::cos(b)), static_cast<R>(e * std::sin(b)));
}

// expm1(a + bi) = (e^a cos b - 1) + i e^a sin b, the real part as
// expm1(a) cos b - 2 sin^2(b/2) to keep small arguments accurate.
template <typename Z>
Z complexExpm1(Z x) {
    using R = typename Z::value_type;
    using W = WideReal<R>;
    const W a = x.real(), b = x.imag();
    if (b == 0) return Z(static_cast<R>(std::expm1(a)), x.imag());
    const W h = std::sin(b / 2);
    const W re = std::expm1(a) * std::cos(b) - 2 * h * h;
    return Z(static_cast<R>(re), static_cast<R>(std::exp(a) * std::sin(b)));
}

// log1p(a + bi): real part 0.5 log1p(a (2 + a) + b^2), imaginary part
// atan2(b, 1 + a), in a wider type so neither tiny nor huge arguments lose
// accuracy.
template <typename Z>
Z complexLog1p(Z x) {
    using R = typename Z::value_type;
    using W = WideReal<R>;
    const W a = x.real(), b = x.imag();
    W re;
    if (std::isinf(a) || std::isinf(b)) re = std::numeric_limits<W>::infinity();
    else if (std::fabs(a) > W(1e300L) || std::fabs(b) > W(1e300L))
        re = std::log(std::hypot(1 + a, b));
    else re = std::log1p(a * (2 + a) + b * b) / 2;
    return Z(static_cast<R>(re), static_cast<R>(std::atan2(b, 1 + a)));
}

template <typename Z>
bool unaryComplex(HloOpcode op, std::span<const Z> in, std::span<Z> out) {
    auto m = [&](auto f) {
        mapUnary(in, out, f);
        return true;
    };
    switch (op) {
    case HloOpcode::kNegate: return m([](Z x) { return -x; });
    case HloOpcode::kSign:
        return m([](Z x) {
            auto a = std::abs(x);
            return a == 0 ? Z(0) : x / a;
        });
    case HloOpcode::kExp: return m([](Z x) { return complexExp(x); });
    case HloOpcode::kExpm1: return m([](Z x) { return complexExpm1(x); });
    case HloOpcode::kLog: return m([](Z x) { return std::log(x); });
    case HloOpcode::kLog1p: return m([](Z x) { return complexLog1p(x); });
    case HloOpcode::kCbrt:
        return m([](Z x) {
            // Principal cube root.
            return std::polar(std::cbrt(std::abs(x)), std::arg(x) / typename Z::value_type(3));
        });
    case HloOpcode::kSqrt: return m([](Z x) { return std::sqrt(x); });
    case HloOpcode::kRsqrt: return m([](Z x) { return Z(1) / std::sqrt(x); });
    case HloOpcode::kSin: return m([](Z x) { return std::sin(x); });
    case HloOpcode::kCos: return m([](Z x) { return std::cos(x); });
    case HloOpcode::kTan: return m([](Z x) { return std::tan(x); });
    case HloOpcode::kTanh: return m([](Z x) { return std::tanh(x); });
    case HloOpcode::kSinh: return m([](Z x) { return std::sinh(x); });
    case HloOpcode::kCosh: return m([](Z x) { return std::cosh(x); });
    case HloOpcode::kAsin: return m([](Z x) { return std::asin(x); });
    case HloOpcode::kAcos: return m([](Z x) { return std::acos(x); });
    case HloOpcode::kAtan: return m([](Z x) { return std::atan(x); });
    case HloOpcode::kAsinh: return m([](Z x) { return std::asinh(x); });
    case HloOpcode::kAcosh: return m([](Z x) { return std::acosh(x); });
    case HloOpcode::kAtanh: return m([](Z x) { return std::atanh(x); });
    case HloOpcode::kLogistic: return m([](Z x) { return Z(1) / (Z(1) + std::exp(-x)); });
    default: return false;
    }
}

template <PrimitiveType PT>
bool unaryInt(HloOpcode op, std::span<const NativeType<PT>> in, std::span<NativeType<PT>> out) {
    using T = NativeType<PT>;
    using W = WideUnsigned<T>;
    constexpr int bits = intBits<PT>();
    auto m = [&](auto f) {
        mapUnary(in, out, f);
        return true;
    };
    switch (op) {
    case HloOpcode::kAbs:
        if constexpr (std::is_signed_v<T>)
            return m([](T x) { return x < 0 ? wrap<PT>(W(0) - W(x)) : x; });
        return m([](T x) { return x; });
    case HloOpcode::kNegate: return m([](T x) { return wrap<PT>(W(0) - W(x)); });
    case HloOpcode::kNot: return m([](T x) { return wrap<PT>(~W(x)); });
    case HloOpcode::kSign: return m([](T x) { return static_cast<T>((T(0) < x) - (x < T(0))); });
    case HloOpcode::kPopulationCount:
        return m([](T x) { return static_cast<T>(std::popcount(rawInt<PT>(x))); });
    case HloOpcode::kClz:
        return m([](T x) { return static_cast<T>(std::countl_zero(rawInt<PT>(x)) - (64 - bits)); });
    default: return false;
    }
}

// ---------------------------------------------------------------------------
// Binary.

template <typename C>
bool binaryFloat(HloOpcode op, std::span<const C> a, std::span<const C> b, std::span<C> out) {
    auto m = [&](auto f) {
        mapBinary(a, b, out, f);
        return true;
    };
    switch (op) {
    case HloOpcode::kAdd: return m([](C x, C y) { return x + y; });
    case HloOpcode::kSubtract: return m([](C x, C y) { return x - y; });
    case HloOpcode::kMultiply: return m([](C x, C y) { return x * y; });
    case HloOpcode::kDivide: return m([](C x, C y) { return x / y; });
    case HloOpcode::kRemainder: return m([](C x, C y) { return std::fmod(x, y); });
    case HloOpcode::kMaximum:
        return m([](C x, C y) { return std::isnan(x) ? x : std::isnan(y) ? y : std::max(x, y); });
    case HloOpcode::kMinimum:
        return m([](C x, C y) { return std::isnan(x) ? x : std::isnan(y) ? y : std::min(x, y); });
    case HloOpcode::kPower:
        return m([](C x, C y) { return (x == C(1) || y == C(0)) ? C(1) : std::pow(x, y); });
    case HloOpcode::kAtan2: return m([](C x, C y) { return std::atan2(x, y); });
    default: return false;
    }
}

template <typename Z>
bool binaryComplex(HloOpcode op, std::span<const Z> a, std::span<const Z> b, std::span<Z> out) {
    using R = typename Z::value_type;
    auto m = [&](auto f) {
        mapBinary(a, b, out, f);
        return true;
    };
    switch (op) {
    case HloOpcode::kAdd: return m([](Z x, Z y) { return x + y; });
    case HloOpcode::kSubtract: return m([](Z x, Z y) { return x - y; });
    case HloOpcode::kMultiply: return m([](Z x, Z y) { return x * y; });
    case HloOpcode::kDivide: return m([](Z x, Z y) { return x / y; });
    // Lexicographic order (real part, then imaginary part), as StableHLO
    // defines it.
    case HloOpcode::kMaximum:
        return m([](Z x, Z y) {
            if (x.real() != y.real()) return x.real() > y.real() ? x : y;
            return x.imag() >= y.imag() ? x : y;
        });
    case HloOpcode::kMinimum:
        return m([](Z x, Z y) {
            if (x.real() != y.real()) return x.real() < y.real() ? x : y;
            return x.imag() <= y.imag() ? x : y;
        });
    case HloOpcode::kPower:
        return m([](Z x, Z y) {
            if (x == Z(1) || y == Z(0)) return Z(1);
            const bool xPosInf = x.imag() == 0 && x.real() > 0 && std::isinf(x.real());
            if (xPosInf && y.imag() == 0 && y.real() > 0) return x;
            if (xPosInf && y.imag() == 0 && y.real() < 0) return Z(0);
            return std::pow(x, y);
        });
    case HloOpcode::kAtan2:
        return m([](Z y, Z x) {
            const Z i(R(0), R(1));
            return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
        });
    default: return false;
    }
}

template <PrimitiveType PT>
bool binaryInt(HloOpcode op, std::span<const NativeType<PT>> a, std::span<const NativeType<PT>> b,
               std::span<NativeType<PT>> out) {
    using T = NativeType<PT>;
    using W = WideUnsigned<T>;
    constexpr bool kSigned = std::is_signed_v<T>;
    constexpr int bits = intBits<PT>();
    auto m = [&](auto f) {
        mapBinary(a, b, out, f);
        return true;
    };
    auto signedValue = [](T x) -> int64_t {  // x in PT's signed interpretation
        uint64_t u = rawInt<PT>(x);
        if constexpr (bits < 64)
            if ((u >> (bits - 1)) & 1) u |= ~((uint64_t{1} << bits) - 1);
        return static_cast<int64_t>(u);
    };
    switch (op) {
    case HloOpcode::kAdd: return m([](T x, T y) { return wrap<PT>(W(x) + W(y)); });
    case HloOpcode::kSubtract: return m([](T x, T y) { return wrap<PT>(W(x) - W(y)); });
    case HloOpcode::kMultiply: return m([](T x, T y) { return wrap<PT>(W(x) * W(y)); });
    case HloOpcode::kDivide:
        return m([](T x, T y) -> T {
            if (y == 0) return wrap<PT>(~W(0));
            if constexpr (kSigned)
                if (y == -1) return wrap<PT>(W(0) - W(x));
            return wrap<PT>(x / y);
        });
    case HloOpcode::kRemainder:
        return m([](T x, T y) -> T {
            if (y == 0) return x;
            if constexpr (kSigned)
                if (y == -1) return 0;
            return wrap<PT>(x % y);
        });
    case HloOpcode::kMaximum: return m([](T x, T y) { return std::max(x, y); });
    case HloOpcode::kMinimum: return m([](T x, T y) { return std::min(x, y); });
    case HloOpcode::kAnd: return m([](T x, T y) { return static_cast<T>(x & y); });
    case HloOpcode::kOr: return m([](T x, T y) { return static_cast<T>(x | y); });
    case HloOpcode::kXor: return m([](T x, T y) { return static_cast<T>(x ^ y); });
    case HloOpcode::kPower:
        return m([](T x, T y) -> T {
            if (x == 1 || y == 0) return 1;
            if constexpr (kSigned)
                if (y < 0) return 0;
            W result = 1, base = W(x);
            for (uint64_t e = static_cast<uint64_t>(y); e != 0; e >>= 1) {
                if (e & 1) result = static_cast<W>(result * base);
                base = static_cast<W>(base * base);
            }
            return wrap<PT>(result);
        });
    case HloOpcode::kShiftLeft:
        return m([](T x, T y) -> T {
            uint64_t c = rawInt<PT>(y);
            return c >= static_cast<uint64_t>(bits) ? T(0) : wrap<PT>(uint64_t(W(x)) << c);
        });
    case HloOpcode::kShiftRightArithmetic:
        return m([signedValue](T x, T y) -> T {
            uint64_t c = rawInt<PT>(y);
            int64_t v = signedValue(x);
            if (c >= static_cast<uint64_t>(bits)) return v < 0 ? wrap<PT>(~W(0)) : T(0);
            return wrap<PT>(v >> c);
        });
    case HloOpcode::kShiftRightLogical:
        return m([](T x, T y) -> T {
            uint64_t c = rawInt<PT>(y);
            return c >= static_cast<uint64_t>(bits) ? T(0) : wrap<PT>(rawInt<PT>(x) >> c);
        });
    case HloOpcode::kMulhi:
        return m([](T x, T y) -> T {
            if constexpr (kSigned) {
                Int128 p = static_cast<Int128>(x) * static_cast<Int128>(y);
                return wrap<PT>(static_cast<int64_t>(p >> bits));
            } else {
                Uint128 p = static_cast<Uint128>(x) * static_cast<Uint128>(y);
                return wrap<PT>(static_cast<uint64_t>(p >> bits));
            }
        });
    default: return false;
    }
}

// pred arithmetic behaves like int8(x) OP int8(y) != 0 (as in XLA).
bool binaryPred(HloOpcode op, std::span<const bool> a, std::span<const bool> b,
                std::span<bool> out) {
    auto m = [&](auto f) {
        mapBinary(a, b, out, f);
        return true;
    };
    switch (op) {
    case HloOpcode::kAnd:
    case HloOpcode::kMinimum:
    case HloOpcode::kMultiply: return m([](bool x, bool y) { return x && y; });
    case HloOpcode::kOr:
    case HloOpcode::kMaximum:
    case HloOpcode::kAdd: return m([](bool x, bool y) { return x || y; });
    case HloOpcode::kXor:
    case HloOpcode::kSubtract: return m([](bool x, bool y) { return x != y; });
    default: return false;
    }
}

// ---------------------------------------------------------------------------
// Compare.

template <typename K>
void compareLoop(ComparisonDirection direction, std::span<const K> a, std::span<const K> b,
                 std::span<bool> out) {
    if (direction == ComparisonDirection::kEq)
        return mapBinary(a, b, out, [](K x, K y) { return x == y; });
    if (direction == ComparisonDirection::kNe)
        return mapBinary(a, b, out, [](K x, K y) { return x != y; });
    if constexpr (!kIsComplex<K>) {
        switch (direction) {
        case ComparisonDirection::kGe: mapBinary(a, b, out, [](K x, K y) { return x >= y; }); break;
        case ComparisonDirection::kGt: mapBinary(a, b, out, [](K x, K y) { return x > y; }); break;
        case ComparisonDirection::kLe: mapBinary(a, b, out, [](K x, K y) { return x <= y; }); break;
        case ComparisonDirection::kLt: mapBinary(a, b, out, [](K x, K y) { return x < y; }); break;
        default: break;
        }
    }
}

// Total-order keys of floating-point values: unsigned keys ordered
// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
std::vector<uint64_t> totalOrderKeys(const Literal& literal) {
    const PrimitiveType type = literal.elementType();
    const int width = primitive_util::bitWidth(type);
    std::vector<uint64_t> keys(static_cast<size_t>(literal.elementCount()));
    dispatchPrimitiveType(type, [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        if constexpr (std::is_floating_point_v<T> || kIsNarrow<T>) {
            std::span<const T> d = literal.data<T>();
            for (size_t i = 0; i < keys.size(); ++i) {
                uint64_t bits;
                if constexpr (std::is_same_v<T, float>)
                    bits = std::bit_cast<uint32_t>(d[i]);
                else if constexpr (std::is_same_v<T, double>)
                    bits = std::bit_cast<uint64_t>(d[i]);
                else
                    bits = d[i].bits & ((uint64_t{1} << width) - 1);
                if (PT == PrimitiveType::F8E8M0FNU) {  // no sign bit
                    keys[i] = bits;
                    continue;
                }
                const uint64_t sign = uint64_t{1} << (width - 1);
                keys[i] = (bits & sign) ? (~bits & (sign | (sign - 1))) : (bits | sign);
            }
        }
    });
    return keys;
}

StatusOr<Literal> evaluateCompare(const HloInstruction& instruction, Operands operands,
                                  Literal result) {
    const auto direction = instruction.comparisonDirection();
    if (!direction) return invalid(instruction, "compare without direction");
    const PrimitiveType type = operands[0]->elementType();
    if (operands[1]->elementType() != type)
        return invalid(instruction, "compare operands have different element types");
    if (result.elementCount() == 0) return result;
    std::span<bool> out = result.data<bool>();
    ComparisonType comparisonType =
        instruction.extra() ? instruction.extra()->comparisonType : ComparisonType::kDefault;
    if (primitive_util::isFloatingPoint(type) && comparisonType == ComparisonType::kTotalOrder) {
        std::vector<uint64_t> a = totalOrderKeys(*operands[0]), b = totalOrderKeys(*operands[1]);
        compareLoop<uint64_t>(*direction, a, b, out);
        return result;
    }
    if (isNarrowFloat(type)) {
        std::vector<float> a = widen(*operands[0]), b = widen(*operands[1]);
        compareLoop<float>(*direction, a, b, out);
        return result;
    }
    bool ok = dispatchPrimitiveType(type, [&]<PrimitiveType PT>() -> bool {
        using T = NativeType<PT>;
        if constexpr (kIsComplex<T>) {
            if (*direction != ComparisonDirection::kEq && *direction != ComparisonDirection::kNe)
                return false;
            compareLoop<T>(*direction, operands[0]->data<T>(), operands[1]->data<T>(), out);
            return true;
        } else if constexpr (!kIsNarrow<T>) {
            compareLoop<T>(*direction, operands[0]->data<T>(), operands[1]->data<T>(), out);
            return true;
        }
        return false;
    });
    if (!ok) return unsupported(instruction, "compare direction for complex operands");
    return result;
}

// ---------------------------------------------------------------------------
// Other ops.

template <typename F>
void withElementBytes(int bytes, F&& f) {
    struct Bytes16 {
        uint64_t a, b;
    };
    switch (bytes) {
    case 1: f.template operator()<uint8_t>(); break;
    case 2: f.template operator()<uint16_t>(); break;
    case 4: f.template operator()<uint32_t>(); break;
    case 8: f.template operator()<uint64_t>(); break;
    case 16: f.template operator()<Bytes16>(); break;
    default: break;
    }
}

template <typename E>
std::span<const E> bytesOf(const Literal& literal) {
    return {static_cast<const E*>(literal.untypedData()),
            static_cast<size_t>(literal.elementCount())};
}

StatusOr<Literal> evaluateSelect(const HloInstruction& instruction, Operands operands,
                                 Literal result) {
    const Literal& predicate = *operands[0];
    if (predicate.elementType() != PrimitiveType::PRED)
        return invalid(instruction, "select predicate must be pred");
    if (operands[1]->elementType() != result.elementType() ||
        operands[2]->elementType() != result.elementType())
        return invalid(instruction, "select operands must have the result's element type");
    if (result.elementCount() == 0) return result;
    std::span<const bool> p = predicate.data<bool>();
    void* outData = result.untypedData();
    withElementBytes(primitive_util::byteWidth(result.elementType()), [&]<typename E>() {
        std::span<E> out(static_cast<E*>(outData), static_cast<size_t>(result.elementCount()));
        mapTernary(p, bytesOf<E>(*operands[1]), bytesOf<E>(*operands[2]), out,
                   [](bool c, E t, E f) { return c ? t : f; });
    });
    return result;
}

template <typename C>
C clampValue(C low, C x, C high) {
    if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(low)) return low;
        if (std::isnan(x)) return x;
        if (std::isnan(high)) return high;
    }
    return std::min(high, std::max(x, low));
}

StatusOr<Literal> evaluateClamp(const HloInstruction& instruction, Operands operands,
                                Literal result) {
    const PrimitiveType type = result.elementType();
    for (const Literal* operand : operands)
        if (operand->elementType() != type)
            return invalid(instruction, "clamp operands must have the result's element type");
    if (result.elementCount() == 0) return result;
    if (primitive_util::isFloatingPoint(type)) {
        floatKernel<3>(type, {operands[0], operands[1], operands[2]}, result,
                       [](auto lo, auto x, auto hi, auto out) {
                           using C = typename decltype(out)::element_type;
                           mapTernary(lo, x, hi, out,
                                      [](C l, C v, C h) { return clampValue(l, v, h); });
                           return true;
                       });
        return result;
    }
    bool ok = dispatchPrimitiveType(type, [&]<PrimitiveType PT>() -> bool {
        using T = NativeType<PT>;
        if constexpr (std::is_integral_v<T>) {
            mapTernary(operands[0]->data<T>(), operands[1]->data<T>(), operands[2]->data<T>(),
                       result.data<T>(), [](T l, T v, T h) { return clampValue(l, v, h); });
            return true;
        }
        return false;
    });
    if (!ok) return unsupported(instruction, "clamp of complex values");
    return result;
}

// Raw bit patterns of a non-complex array's elements.
std::vector<uint64_t> rawBits(const Literal& literal) {
    std::vector<uint64_t> bits(static_cast<size_t>(literal.elementCount()));
    if (bits.empty()) return bits;
    dispatchPrimitiveType(literal.elementType(), [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        std::span<const T> d = literal.data<T>();
        for (size_t i = 0; i < bits.size(); ++i) {
            if constexpr (std::is_same_v<T, bool>)
                bits[i] = d[i] ? 1 : 0;
            else if constexpr (std::is_same_v<T, float>)
                bits[i] = std::bit_cast<uint32_t>(d[i]);
            else if constexpr (std::is_same_v<T, double>)
                bits[i] = std::bit_cast<uint64_t>(d[i]);
            else if constexpr (kIsNarrow<T>)
                bits[i] = d[i].bits & ((uint64_t{1} << primitive_util::bitWidth(PT)) - 1);
            else if constexpr (kIsInt<T>)
                bits[i] = rawInt<PT>(d[i]);
        }
    });
    return bits;
}

void storeBits(const std::vector<uint64_t>& bits, Literal& out) {
    if (bits.empty()) return;
    dispatchPrimitiveType(out.elementType(), [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        std::span<T> d = out.data<T>();
        for (size_t i = 0; i < d.size(); ++i) {
            if constexpr (std::is_same_v<T, bool>)
                d[i] = bits[i] != 0;
            else if constexpr (std::is_same_v<T, float>)
                d[i] = std::bit_cast<float>(static_cast<uint32_t>(bits[i]));
            else if constexpr (std::is_same_v<T, double>)
                d[i] = std::bit_cast<double>(bits[i]);
            else if constexpr (kIsNarrow<T>)
                d[i] = T::fromBits(static_cast<typename T::Bits>(bits[i]));
            else if constexpr (kIsInt<T>)
                d[i] = wrap<PT>(bits[i]);
        }
    });
}

StatusOr<Literal> evaluateBitcastConvert(const HloInstruction& instruction, const Literal& operand,
                                         Literal result) {
    const PrimitiveType from = operand.elementType(), to = result.elementType();
    const int inBits = primitive_util::bitWidth(from), outBits = primitive_util::bitWidth(to);
    if (primitive_util::isComplex(from) || primitive_util::isComplex(to)) {
        if (from == to) return operand;
        // Storage is row-major whatever the layout, so reinterpreting the
        // bytes is the bitcast (a trailing dimension absorbs the width ratio).
        if (operand.sizeInBytes() != result.sizeInBytes() || primitive_util::isSubByte(from) ||
            primitive_util::isSubByte(to) || from == PrimitiveType::PRED || to == PrimitiveType::PRED)
            return invalid(instruction, "bitcast-convert shapes do not match the bit widths");
        if (result.sizeInBytes() > 0)
            std::memcpy(result.untypedData(), operand.untypedData(),
                        static_cast<size_t>(result.sizeInBytes()));
        return result;
    }
    if (inBits == outBits) {
        if (operand.elementCount() != result.elementCount())
            return invalid(instruction, "bitcast-convert element counts differ");
        if (!primitive_util::isSubByte(from) && !primitive_util::isSubByte(to) &&
            from != PrimitiveType::PRED && to != PrimitiveType::PRED) {
            if (result.sizeInBytes() > 0)
                std::memcpy(result.untypedData(), operand.untypedData(),
                            static_cast<size_t>(result.sizeInBytes()));
            return result;
        }
        storeBits(rawBits(operand), result);
        return result;
    }
    std::vector<uint64_t> in = rawBits(operand);
    std::vector<uint64_t> out(static_cast<size_t>(result.elementCount()));
    if (inBits > outBits) {  // one input element -> `ratio` outputs (extra minor dimension)
        const int ratio = inBits / outBits;
        if (inBits % outBits != 0 || out.size() != in.size() * static_cast<size_t>(ratio))
            return invalid(instruction, "bitcast-convert shapes do not match the bit widths");
        const uint64_t mask = (uint64_t{1} << outBits) - 1;
        for (size_t i = 0; i < in.size(); ++i)
            for (int j = 0; j < ratio; ++j)
                out[i * static_cast<size_t>(ratio) + static_cast<size_t>(j)] =
                    (in[i] >> (j * outBits)) & mask;
    } else {  // `ratio` inputs (the minor dimension) -> one output element
        const int ratio = outBits / inBits;
        if (outBits % inBits != 0 || in.size() != out.size() * static_cast<size_t>(ratio))
            return invalid(instruction, "bitcast-convert shapes do not match the bit widths");
        for (size_t i = 0; i < out.size(); ++i)
            for (int j = 0; j < ratio; ++j)
                out[i] |= in[i * static_cast<size_t>(ratio) + static_cast<size_t>(j)]
                          << (j * inBits);
    }
    storeBits(out, result);
    return result;
}

StatusOr<Literal> evaluateReducePrecision(const HloInstruction& instruction, const Literal& operand,
                                          Literal result) {
    const HloExtraAttributes* extra = instruction.extra();
    if (extra == nullptr || !extra->exponentBits || !extra->mantissaBits)
        return invalid(instruction, "reduce-precision needs exponent_bits and mantissa_bits");
    const int e = static_cast<int>(*extra->exponentBits);
    const int m = static_cast<int>(*extra->mantissaBits);
    if (e < 1 || m < 0) return invalid(instruction, "reduce-precision bit counts out of range");
    const PrimitiveType type = result.elementType();
    if (!primitive_util::isFloatingPoint(type) || operand.elementType() != type)
        return unsupported(instruction, "reduce-precision of non-float values");
    if (result.elementCount() == 0) return result;
    floatKernel<1>(type, {&operand}, result, [&](auto in, auto out) {
        using C = typename decltype(out)::element_type;
        mapUnary(in, out, [&](C v) { return float_util::reducePrecision(v, e, m); });
        return true;
    });
    return result;
}

double roundToType(PrimitiveType type, double value) {
    if (type == PrimitiveType::F64) return value;
    if (type == PrimitiveType::F32) return static_cast<float>(value);
    return float_util::bitsToFloat(type, float_util::doubleToBits(type, value));
}

// XLA's StochasticConvertDecomposer: round |x| up when random < frac(|x|) *
// 2^bits, saturate at the target's limits, NaN -> 0.
StatusOr<Literal> evaluateStochasticConvert(const HloInstruction& instruction, Operands operands,
                                            Literal result) {
    const Literal& operand = *operands[0];
    const Literal& random = *operands[1];
    const PrimitiveType from = operand.elementType(), to = result.elementType();
    const PrimitiveType randomType = random.elementType();
    if (!primitive_util::isFloatingPoint(from))
        return invalid(instruction, "stochastic-convert operand must be floating point");
    if (!primitive_util::isUnsignedInteger(randomType) ||
        primitive_util::bitWidth(randomType) != primitive_util::bitWidth(from))
        return invalid(instruction, "stochastic-convert random must be unsigned of the same width");
    if (!primitive_util::isSignedInteger(to))
        return unsupported(instruction,
                           "stochastic-convert to " + std::string(primitive_util::name(to)));
    const int64_t n = result.elementCount();
    if (n == 0) return result;
    std::vector<double> values(static_cast<size_t>(operand.elementCount()));
    if (from == PrimitiveType::F64) {
        auto d = operand.data<double>();
        values.assign(d.begin(), d.end());
    } else if (from == PrimitiveType::F32) {
        auto d = operand.data<float>();
        values.assign(d.begin(), d.end());
    } else {
        std::vector<float> w = widen(operand);
        values.assign(w.begin(), w.end());
    }
    const std::vector<uint64_t> randomBits = rawBits(random);
    const int toBits = primitive_util::bitWidth(to);
    const int64_t minValue =
        toBits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (toBits - 1));
    const int64_t maxValue =
        toBits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (toBits - 1)) - 1;
    const double minT = roundToType(from, static_cast<double>(minValue));
    const double maxT = roundToType(from, static_cast<double>(maxValue));
    const double scale = std::ldexp(1.0, primitive_util::bitWidth(randomType));
    std::vector<uint64_t> out(static_cast<size_t>(n));
    for (size_t i = 0; i < out.size(); ++i) {
        const double v = values.size() == out.size() ? values[i] : values[0];
        const uint64_t r = randomBits.size() == out.size() ? randomBits[i] : randomBits[0];
        int64_t value;
        if (v <= minT) {
            value = minValue;
        } else if (v >= maxT) {
            value = maxValue;
        } else if (std::isnan(v)) {
            value = 0;
        } else {
            const double magnitude = std::fabs(v);
            const double truncated = std::floor(magnitude);
            const double fixed = (magnitude - truncated) * scale;
            const uint64_t fixedInt = fixed >= scale ? ~uint64_t{0} : static_cast<uint64_t>(fixed);
            uint64_t t = static_cast<uint64_t>(truncated);
            if (r < fixedInt) ++t;
            value = static_cast<int64_t>(v < 0 ? uint64_t{0} - t : t);
        }
        out[i] = static_cast<uint64_t>(value);
    }
    storeBits(out, result);
    return result;
}

StatusOr<Literal> evaluateMap(const HloInstruction& instruction, Operands operands,
                              EvalContext& context, Literal result) {
    const HloComputation* computation = instruction.toApply();
    if (computation == nullptr) return invalid(instruction, "map needs to_apply");
    const int64_t n = result.elementCount();
    if (n == 0) return result;
    std::vector<Literal> scalars;
    std::vector<const Literal*> arguments;
    std::vector<int64_t> widths;
    for (const Literal* operand : operands) {
        scalars.emplace_back(Shape::makeScalar(operand->elementType()));
        widths.push_back(primitive_util::byteWidth(operand->elementType()));
    }
    for (const Literal& scalar : scalars) arguments.push_back(&scalar);
    const int64_t outWidth = primitive_util::byteWidth(result.elementType());
    char* out = static_cast<char*>(result.untypedData());
    for (int64_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < scalars.size(); ++j) {
            const int64_t index = operands[j]->elementCount() == n ? i : 0;
            std::memcpy(scalars[j].untypedData(),
                        static_cast<const char*>(operands[j]->untypedData()) + index * widths[j],
                        static_cast<size_t>(widths[j]));
        }
        HLO_ASSIGN_OR_RETURN(Literal value, context.call(*computation, arguments));
        if (value.elementType() != result.elementType() || value.elementCount() != 1)
            return invalid(instruction, "map computation must return a scalar of the result type");
        std::memcpy(out + i * outWidth, value.untypedData(), static_cast<size_t>(outWidth));
    }
    return result;
}

// real, imag, complex, is-finite, and abs of complex values (type-changing).
StatusOr<Literal> evaluateComponentOp(const HloInstruction& instruction, Operands operands,
                                      Literal result) {
    const HloOpcode op = instruction.opcode();
    const PrimitiveType type = operands[0]->elementType();
    const std::string typeName(primitive_util::name(type));
    if (result.elementCount() == 0) return result;
    auto complexParts = [&]<typename Z>() {
        using R = typename Z::value_type;
        std::span<const Z> in = operands[0]->data<Z>();
        std::span<R> out = result.data<R>();
        if (op == HloOpcode::kReal) mapUnary(in, out, [](Z z) { return z.real(); });
        if (op == HloOpcode::kImag) mapUnary(in, out, [](Z z) { return z.imag(); });
        if (op == HloOpcode::kAbs) mapUnary(in, out, [](Z z) { return std::abs(z); });
    };
    switch (op) {
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kAbs:
        if (type == PrimitiveType::C64 && result.elementType() == PrimitiveType::F32) {
            complexParts.template operator()<std::complex<float>>();
            return result;
        }
        if (type == PrimitiveType::C128 && result.elementType() == PrimitiveType::F64) {
            complexParts.template operator()<std::complex<double>>();
            return result;
        }
        if (primitive_util::isFloatingPoint(type) && type == result.elementType() &&
            op != HloOpcode::kAbs) {
            if (op == HloOpcode::kReal) return *operands[0];
            return result;  // imag of a real value: zeros
        }
        return invalid(instruction, "real/imag/abs result type does not match " + typeName);
    case HloOpcode::kComplex: {
        if (operands[1]->elementType() != type)
            return invalid(instruction, "complex operands have different types");
        if (type == PrimitiveType::F32 && result.elementType() == PrimitiveType::C64) {
            mapBinary(operands[0]->data<float>(), operands[1]->data<float>(),
                      result.data<std::complex<float>>(),
                      [](float re, float im) { return std::complex<float>(re, im); });
            return result;
        }
        if (type == PrimitiveType::F64 && result.elementType() == PrimitiveType::C128) {
            mapBinary(operands[0]->data<double>(), operands[1]->data<double>(),
                      result.data<std::complex<double>>(),
                      [](double re, double im) { return std::complex<double>(re, im); });
            return result;
        }
        return invalid(instruction, "complex of " + typeName);
    }
    case HloOpcode::kIsFinite: {
        if (!primitive_util::isFloatingPoint(type))
            return invalid(instruction, "is-finite of " + typeName);
        std::span<bool> out = result.data<bool>();
        if (type == PrimitiveType::F64) {
            mapUnary(operands[0]->data<double>(), out, [](double x) { return std::isfinite(x); });
        } else if (type == PrimitiveType::F32) {
            mapUnary(operands[0]->data<float>(), out, [](float x) { return std::isfinite(x); });
        } else {
            std::vector<float> w = widen(*operands[0]);
            mapUnary(std::span<const float>(w), out, [](float x) { return std::isfinite(x); });
        }
        return result;
    }
    default: break;
    }
    return unsupported(instruction, "unexpected opcode");
}

StatusOr<Literal> evaluateUnary(const HloInstruction& instruction, const Literal& operand,
                                Literal result) {
    const HloOpcode op = instruction.opcode();
    const PrimitiveType type = operand.elementType();
    if (type != result.elementType())
        return invalid(instruction, "operand and result element types differ");
    if (result.elementCount() == 0) return result;
    bool ok = false;
    if (primitive_util::isFloatingPoint(type)) {
        ok = floatKernel<1>(type, {&operand}, result,
                            [&](auto in, auto out) { return unaryFloat(op, in, out); });
    } else if (type == PrimitiveType::PRED) {
        if (op == HloOpcode::kNot) {
            mapUnary(operand.data<bool>(), result.data<bool>(), [](bool x) { return !x; });
            ok = true;
        }
    } else {
        ok = dispatchPrimitiveType(type, [&]<PrimitiveType PT>() -> bool {
            using T = NativeType<PT>;
            if constexpr (kIsComplex<T>)
                return unaryComplex<T>(op, operand.data<T>(), result.data<T>());
            else if constexpr (kIsInt<T>)
                return unaryInt<PT>(op, operand.data<T>(), result.data<T>());
            return false;
        });
    }
    if (!ok)
        return unsupported(instruction, std::string(hloOpcodeString(op)) + " of " +
                                            std::string(primitive_util::name(type)));
    return result;
}

StatusOr<Literal> evaluateBinary(const HloInstruction& instruction, const Literal& lhs,
                                 const Literal& rhs, Literal result) {
    const HloOpcode op = instruction.opcode();
    const PrimitiveType type = lhs.elementType();
    if (type != result.elementType() || rhs.elementType() != type)
        return invalid(instruction, "operand and result element types differ");
    if (result.elementCount() == 0) return result;
    bool ok = false;
    if (primitive_util::isFloatingPoint(type)) {
        ok = floatKernel<2>(type, {&lhs, &rhs}, result,
                            [&](auto a, auto b, auto out) { return binaryFloat(op, a, b, out); });
    } else if (type == PrimitiveType::PRED) {
        ok = binaryPred(op, lhs.data<bool>(), rhs.data<bool>(), result.data<bool>());
    } else {
        ok = dispatchPrimitiveType(type, [&]<PrimitiveType PT>() -> bool {
            using T = NativeType<PT>;
            if constexpr (kIsComplex<T>)
                return binaryComplex<T>(op, lhs.data<T>(), rhs.data<T>(), result.data<T>());
            else if constexpr (kIsInt<T>)
                return binaryInt<PT>(op, lhs.data<T>(), rhs.data<T>(), result.data<T>());
            return false;
        });
    }
    if (!ok)
        return unsupported(instruction, std::string(hloOpcodeString(op)) + " of " +
                                            std::string(primitive_util::name(type)));
    return result;
}

}  // namespace

StatusOr<Literal> evaluateElementwise(const HloInstruction& instruction, Operands operands,
                                      EvalContext& context) {
    const HloOpcode op = instruction.opcode();
    const Shape& shape = instruction.shape();
    if (!shape.isArray()) return invalid(instruction, "elementwise result must be an array");
    size_t arity = operands.size();
    if (op == HloOpcode::kSelect || op == HloOpcode::kClamp)
        arity = 3;
    else if (hloOpcodeIsElementwiseBinary(op))
        arity = 2;
    else if (hloOpcodeIsElementwiseUnary(op))
        arity = 1;
    if (operands.size() != arity || (op == HloOpcode::kMap && operands.empty()))
        return invalid(instruction, "expects " + std::to_string(arity) + " operand(s), got " +
                                        std::to_string(operands.size()));
    Literal result(shape);
    const int64_t n = result.elementCount();
    for (size_t i = 0; i < operands.size(); ++i) {
        const Literal& operand = *operands[i];
        if (!operand.isValid() || !operand.shape().isArray())
            return invalid(instruction, "operand " + std::to_string(i) + " is not an array");
        if (op != HloOpcode::kBitcastConvert && operand.elementCount() != n &&
            operand.shape().rank() != 0)
            return invalid(instruction, "operand " + std::to_string(i) + " has " +
                                            std::to_string(operand.elementCount()) +
                                            " elements but the result has " + std::to_string(n));
    }
    switch (op) {
    case HloOpcode::kConvert: {
        auto converted = operands[0]->convert(shape.elementType());
        if (!converted.isOk()) return converted.status().withContext("%" + instruction.name());
        return converted;
    }
    case HloOpcode::kBitcastConvert:
        return evaluateBitcastConvert(instruction, *operands[0], std::move(result));
    case HloOpcode::kReducePrecision:
        return evaluateReducePrecision(instruction, *operands[0], std::move(result));
    case HloOpcode::kStochasticConvert:
        return evaluateStochasticConvert(instruction, operands, std::move(result));
    case HloOpcode::kMap: return evaluateMap(instruction, operands, context, std::move(result));
    case HloOpcode::kSelect: return evaluateSelect(instruction, operands, std::move(result));
    case HloOpcode::kClamp: return evaluateClamp(instruction, operands, std::move(result));
    case HloOpcode::kCompare: return evaluateCompare(instruction, operands, std::move(result));
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kComplex:
    case HloOpcode::kIsFinite: return evaluateComponentOp(instruction, operands, std::move(result));
    case HloOpcode::kAbs:
        if (primitive_util::isComplex(operands[0]->elementType()))
            return evaluateComponentOp(instruction, operands, std::move(result));
        break;
    default: break;
    }
    if (arity == 1) return evaluateUnary(instruction, *operands[0], std::move(result));
    if (arity == 2)
        return evaluateBinary(instruction, *operands[0], *operands[1], std::move(result));
    return unsupported(instruction, std::string(hloOpcodeString(op)) + " is not elementwise");
}

}  // namespace hloscope::evaluator
