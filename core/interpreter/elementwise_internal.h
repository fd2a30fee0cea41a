// Internal to the elementwise family of the evaluator (elementwise.cc,
// elementwise_special.cc): element type traits, integer wrap-around, loops
// that broadcast scalar operands, narrow-float widening, and the family
// functions of elementwise_special.cc. Not part of the public API.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "core/interpreter/interpreter_internal.h"

namespace hloscope::evaluator::elementwise {

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
std::vector<float> widen(const Literal& literal);
void narrowInto(std::span<const float> values, Literal& out);
bool isNarrowFloat(PrimitiveType type);

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

// Families of elementwise_special.cc. Each gets the evaluated operands (their
// count and element counts checked) and the result literal to fill.
StatusOr<Literal> evaluateCompare(const HloInstruction& instruction, Operands operands,
                                  Literal result);
StatusOr<Literal> evaluateSelect(const HloInstruction& instruction, Operands operands,
                                 Literal result);
StatusOr<Literal> evaluateClamp(const HloInstruction& instruction, Operands operands,
                                Literal result);
StatusOr<Literal> evaluateBitcastConvert(const HloInstruction& instruction, const Literal& operand,
                                         Literal result);
StatusOr<Literal> evaluateReducePrecision(const HloInstruction& instruction, const Literal& operand,
                                          Literal result);
// XLA's StochasticConvertDecomposer: round |x| up when random < frac(|x|) *
// 2^bits, saturate at the target's limits, NaN -> 0.
StatusOr<Literal> evaluateStochasticConvert(const HloInstruction& instruction, Operands operands,
                                            Literal result);
StatusOr<Literal> evaluateMap(const HloInstruction& instruction, Operands operands,
                              EvalContext& context, Literal result);
// real, imag, complex, is-finite, and abs of complex values (type-changing).
StatusOr<Literal> evaluateComponentOp(const HloInstruction& instruction, Operands operands,
                                      Literal result);

}  // namespace hloscope::evaluator::elementwise
