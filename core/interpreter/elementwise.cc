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
//
// This file holds the arithmetic kernels (unary and binary) and the family's
// dispatch; compare, select, clamp, conversions, map and the complex parts
// are in elementwise_special.cc.
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/interpreter/elementwise_internal.h"
#include "core/interpreter/interpreter_internal.h"

namespace hloscope::evaluator {
namespace elementwise {

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

}  // namespace elementwise

namespace {

using namespace elementwise;

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

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
