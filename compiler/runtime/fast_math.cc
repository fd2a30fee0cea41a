#include "compiler/runtime/fast_math.h"

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <utility>

namespace hloscope::fast_math {
namespace {

// Written as selects so the vector IR mirrors them one for one.
inline float select(bool c, float a, float b) { return c ? a : b; }

inline float fromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
inline uint32_t toBits(float x) { return std::bit_cast<uint32_t>(x); }

// a * b + c rounded once (the backend emits llvm.fma: one instruction on
// every x86-64 CPU since 2013, a libm call where there is none).
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }

// c[0] x^(N-1) + c[1] x^(N-2) + ... + c[N-1], by Horner's rule with FMAs.
template <size_t N>
inline float horner(float x, const float (&c)[N]) {
    float p = c[0];
    for (size_t i = 1; i < N; ++i) p = fma(p, x, c[i]);
    return p;
}

// 2^k for integral k in [-126, 127].
inline float pow2(int32_t k) { return fromBits(static_cast<uint32_t>(k + 127) << 23); }

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ln 2 split so that n * kLn2Hi is exact for the n that occur.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;

// e^r = 1 + r + r^2 P(r) for |r| <= ln(2)/2: Cephes' P, evaluated by Horner.
inline float expPoly(float r) {
    return horner(r, {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                      1.6666665459e-1f, 5.0000001201e-1f});
}

// x = n ln 2 + r with n the nearest integer to x / ln 2 and |r| <= ln(2)/2
// (n ln 2 taken off in two steps, the first exact). Returns {n, r}.
inline std::pair<float, float> reduceByLn2(float x) {
    const float n = std::nearbyint(x * 1.44269504088896341f);
    float r = fma(-n, kLn2Hi, x);
    r = fma(-n, kLn2Lo, r);
    return {n, r};
}

// exp for finite x already clamped to [-104, 89].
inline float expCore(float x) {
    const auto [n, r] = reduceByLn2(x);
    // 1 + r + r^2 P(r), all in one Horner chain.
    const float p = fma(fma(expPoly(r), r, 1.0f), r, 1.0f);
    // p 2^n in two factors, as n reaches -150 (denormal results) and +128
    // (overflow to inf): p (in [0.7, 1.5)) times 2^(n - n/2) by adding to its
    // exponent (exact, stays normal), then times 2^(n/2), rounded once.
    const int32_t ni = static_cast<int32_t>(n);
    const int32_t n1 = ni >> 1;  // floor(n / 2)
    return fromBits(toBits(p) + (static_cast<uint32_t>(ni - n1) << 23)) * pow2(n1);
}

// pi/2 in three floats: kPio2Hi is float(pi/2), the others what is left.
constexpr float kPio2Hi = 1.57079637050628662109375f;
constexpr float kPio2Mid = -4.37113882867379e-08f;
constexpr float kPio2Lo = -1.7151245100058819e-15f;

// x = k period + z: x clamped to +-2^24 (beyond, floats are 2 apart and any
// value in [-1, 1] is as good; NaN becomes -2^24 and is restored by the
// callers). k: x / period rounded, then corrected by the nearest integer to
// a first z (past 2^21 the float product is too coarse to round to the right
// multiple). z = x - k period by three FMAs with the period split into three
// floats: the first is exact for |x| < 2.7e7 (the product's bits below
// float(x)'s last place cancel), the others leave an error of about one ulp
// of z, so no double precision is needed. Returns {k, z}.
std::pair<float, float> reduceByPeriod(float x, float inverse, float hi, float mid, float lo) {
    const float xc = std::fmin(std::fmax(x, -16777216.0f), 16777216.0f);
    float k = std::nearbyint(xc * inverse);
    float z = fma(-k, hi, xc);
    z = fma(-k, mid, z);
    k = k + std::nearbyint(z * inverse);
    z = fma(-k, hi, xc);
    z = fma(-k, mid, z);
    z = fma(-k, lo, z);
    return {k, z};
}

// cos x: x = q pi/2 + z with |z| <= pi/4, then Cephes' sine or cosine
// polynomial of z by the quadrant q + 1 (cos x = sin(x + pi/2)).
float cosQuadrants(float x) {
    const auto [q, z] = reduceByPeriod(x, 0.636619772367581343f, kPio2Hi, kPio2Mid, kPio2Lo);
    const int32_t quadrant = static_cast<int32_t>(q) + 1;
    const float zz = z * z;
    const float c = fma(
        zz * zz, horner(zz, {2.443315711809948e-5f, -1.388731625493765e-3f, 4.166664568298827e-2f}),
        fma(-0.5f, zz, 1.0f));
    const float s =
        fma(z * zz, horner(zz, {-1.9515295891e-4f, 8.3321608736e-3f, -1.6666654611e-1f}), z);
    // Quadrants 1 and 3 take the cosine polynomial, 2 and 3 negate. Both
    // stay within [-1, 1] for |z| <= pi/4.
    const float r = select((quadrant & 1) != 0, c, s);
    const float signed_ = select((quadrant & 2) != 0, -r, r);
    return select(std::isfinite(x), signed_, kNan);
}

// pi in three floats, as kPio2*.
constexpr float kPiHi = 3.1415927410125732f;
constexpr float kPiMid = -8.742277657347586e-08f;
constexpr float kPiLo = -3.4302490200117637e-15f;
constexpr float kOneOverPi = 0.318309886183790672f;

// sin x: x = k pi + z with |z| <= pi/2 (reduceByPeriod, as cosQuadrants but by
// pi), sin x = (-1)^k sin z, and sin z = z + z^3 P(z^2) with
// P of degree 3 fitted by hloscope (Remez exchange, relative error 6e-9 on
// [0, pi/2], 0.1 ulp before the float rounding of the evaluation). One
// polynomial and a sign flip by k's low bit: about half the vector
// instructions of the quadrant scheme, which evaluates both polynomials.
float sinHalfTurns(float x) {
    const auto [k, z] = reduceByPeriod(x, kOneOverPi, kPiHi, kPiMid, kPiLo);
    const float zz = z * z;
    const float s = fma(
        z * zz,
        horner(zz, {2.6057805371e-6f, -1.9809602236e-4f, 8.3330664784e-3f, -1.6666659713e-1f}), z);
    const float signed_ =
        fromBits(toBits(s) ^ (static_cast<uint32_t>(static_cast<int32_t>(k)) << 31));
    const float out = select(std::isfinite(x), signed_, kNan);
    return select(x == 0.0f, x, out);  // sin(-0) = -0
}

}  // namespace

float exp(float x) {
    const float clamped = std::fmin(std::fmax(x, -104.0f), 89.0f);
    return select(std::isnan(x), x, expCore(clamped));
}

float log(float x) {
    // Denormal inputs are scaled into the normal range first.
    const bool denormal = x < 1.17549435e-38f;
    const float scaled = select(denormal, x * 8388608.0f, x);  // 2^23
    const uint32_t bits = toBits(scaled);
    float e =
        static_cast<float>(static_cast<int32_t>(bits >> 23) - 126) - select(denormal, 23.0f, 0.0f);
    float m = fromBits((bits & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
    const bool small = m < 0.707106781186547524f;
    e = select(small, e - 1.0f, e);
    m = select(small, m + m - 1.0f, m - 1.0f);
    const float z = m * m;
    const float p = horner(m, {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                               -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                               2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f});
    float y = m * z * p;
    y = fma(e, kLn2Lo, y);
    y = fma(-0.5f, z, y);
    const float r = fma(e, kLn2Hi, m + y);
    // Special inputs.
    float out = select(x == kInf, kInf, r);
    out = select(x == 0.0f, -kInf, out);
    out = select(x < 0.0f || std::isnan(x), kNan, out);
    return out;
}

float tanh(float x) {
    // tanh |x| = -u / (u + 2) with u = expm1(-2|x|) in (-1, 0]: one
    // exponential's range reduction and polynomial for every |x| (expm1 keeps
    // the relative precision near 0 that 1 - 2 / (e^{2|x|} + 1) loses there),
    // then the sign of x. Past |x| = 9, tanh rounds to 1.
    const float t = std::fmin(std::fabs(x), 9.0f) * -2.0f;  // exact, in [-18, 0]
    const auto [n, r] = reduceByLn2(t);
    const float em = fma(r * r, expPoly(r), r);  // expm1(r)
    // expm1(t) = 2^n expm1(r) + (2^n - 1), 2^n normal (n in [-26, 0]).
    const float scale = pow2(static_cast<int32_t>(n));
    const float u = fma(scale, em, scale - 1.0f);
    const float y = std::copysign(-u / (u + 2.0f), x);
    return select(std::isnan(x), x, y);
}

float logistic(float x) {
    // e = e^{-|x|} in (0, 1]: 1 / (1 + e) for x >= 0, e / (1 + e) below.
    const float e = expCore(std::fmax(-std::fabs(x), -104.0f));
    const float r = 1.0f / (1.0f + e);
    return select(std::isnan(x), x, select(x >= 0.0f, r, e * r));
}

float sin(float x) { return sinHalfTurns(x); }

float cos(float x) { return cosQuadrants(x); }

float erf(float x) {
    const float z = std::fabs(x);
    // |x| < 1: x * P(x^2).
    const float x2 = x * x;
    const float small =
        x * horner(x2, {7.853861353153693e-5f, -8.010193625184903e-4f, 5.188327685732524e-3f,
                        -2.685381193529856e-2f, 1.128358514861418e-1f, -3.761262582423300e-1f,
                        1.128379165726710f});
    // |x| >= 1: 1 - erfc(|x|), erfc = t * exp(-z^2 + Q(t)), t = 1 / (1 + z/2).
    const float t = 1.0f / fma(0.5f, std::fmin(z, 10.0f), 1.0f);
    const float q = horner(t, {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                               -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f});
    const float zc = std::fmin(z, 10.0f);
    const float erfc = t * expCore(std::fmax(fma(-zc, zc, q), -104.0f));
    float big = 1.0f - erfc;
    big = select(x < 0, -big, big);
    return select(std::isnan(x), x, select(z < 1.0f, small, big));
}

int64_t ulpDistance(float a, float b) {
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<int32_t>::max();
    if (a == b) return 0;
    // Map the floats onto a monotonic integer line.
    auto ordered = [](float f) {
        const int32_t i = std::bit_cast<int32_t>(f);
        return i < 0 ? static_cast<int64_t>(std::numeric_limits<int32_t>::min()) - i
                     : static_cast<int64_t>(i);
    };
    return std::llabs(ordered(a) - ordered(b));
}

}  // namespace hloscope::fast_math
