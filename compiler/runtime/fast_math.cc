#include "compiler/runtime/fast_math.h"

#include <bit>
#include <cstddef>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace hloscope::fast_math {
namespace {

// Written as selects so the vector IR mirrors them one for one.
inline float select(bool c, float a, float b) { return c ? a : b; }

inline float fromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
inline uint32_t toBits(float x) { return std::bit_cast<uint32_t>(x); }

// c[0] x^(N-1) + c[1] x^(N-2) + ... + c[N-1], by Horner's rule.
template <size_t N>
inline float horner(float x, const float (&c)[N]) {
    float p = c[0];
    for (size_t i = 1; i < N; ++i) p = p * x + c[i];
    return p;
}

// 2^k for integral k in [-126, 127].
inline float pow2(int32_t k) { return fromBits(static_cast<uint32_t>(k + 127) << 23); }

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ln 2 split so that n * kLn2Hi is exact for the n that occur.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;

// exp for finite x already clamped to [-104, 89].
inline float expCore(float x) {
    const float n = std::nearbyint(x * 1.44269504088896341f);
    float r = x - n * kLn2Hi;
    r = r - n * kLn2Lo;
    const float r2 = r * r;
    const float p = horner(r, {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                                1.6666665459e-1f, 5.0000001201e-1f}) * r2 + r + 1.0f;
    // 2^n in two factors: n reaches -150 (denormal results) and +128 (overflow to inf).
    const int32_t ni = static_cast<int32_t>(n);
    const int32_t n1 = ni / 2;
    return p * pow2(n1) * pow2(ni - n1);
}

// sin (cosine = false) or cos of x, Cephes' octant reduction.
float sinCos(float x, bool cosine) {
    const float ax = std::fabs(x);
    // Octant number (capped: beyond 2^24 floats are integers apart and the
    // reduction is meaningless anyway; the cap keeps the conversion defined).
    int32_t j = static_cast<int32_t>(std::fmin(ax * 1.27323954473516f, 16777216.0f));  // 4/pi
    j += j & 1;                                                 // to an even octant
    const float y = static_cast<float>(j);
    j &= 7;
    // Sign: sin is odd, cos even; octants 4..7 negate.
    bool negate = j > 3;
    j = j > 3 ? j - 4 : j;
    if (cosine) negate = negate != (j > 1);
    else negate = negate != std::signbit(x);
    // x - y pi/4 in double: pi/4 = kC1 + kC2 with kC1 = float(pi/4) (24 bits, so y kC1 is
    // exact for y < 2^24); accurate for |x| up to about 1.3e7.
    constexpr double kC1 = 0.785398185253143310546875;
    constexpr double kC2 = -2.1855695000931213e-08;
    const double yd = static_cast<double>(y);
    const float z = static_cast<float>((static_cast<double>(ax) - yd * kC1) - yd * kC2);
    const float zz = z * z;
    const float c =
        zz * zz * horner(zz, {2.443315711809948e-5f, -1.388731625493765e-3f, 4.166664568298827e-2f}) - 0.5f * zz + 1.0f;
    const float s = z * zz * horner(zz, {-1.9515295891e-4f, 8.3321608736e-3f, -1.6666654611e-1f}) + z;
    // sin uses the sine polynomial in octants 0, 3; cos in 0, 3 the cosine one.
    const bool useCos = (j == 1 || j == 2) != cosine;
    // Clamped: past the accurate range the polynomials could leave [-1, 1].
    const float r = std::fmin(std::fmax(select(useCos, c, s), -1.0f), 1.0f);
    const float signed_ = select(negate, -r, r);
    return select(std::isfinite(x), signed_, kNan);
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
    float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 126) - select(denormal, 23.0f, 0.0f);
    float m = fromBits((bits & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
    const bool small = m < 0.707106781186547524f;
    e = select(small, e - 1.0f, e);
    m = select(small, m + m - 1.0f, m - 1.0f);
    const float z = m * m;
    const float p = horner(m, {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f,
                                1.4249322787e-1f, -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f,
                                3.3333331174e-1f});
    float y = m * z * p;
    y = y + e * kLn2Lo;
    y = y - 0.5f * z;
    const float r = m + y + e * kLn2Hi;
    // Special inputs.
    float out = select(x == kInf, kInf, r);
    out = select(x == 0.0f, -kInf, out);
    out = select(x < 0.0f || std::isnan(x), kNan, out);
    return out;
}

float tanh(float x) {
    const float z = std::fabs(x);
    // |x| >= 0.625: 1 - 2 / (e^{2|x|} + 1); e^{2|x|} overflows to inf for large |x|, giving 1.
    const float s = expCore(std::fmin(2.0f * z, 89.0f));
    float big = 1.0f - 2.0f / (s + 1.0f);
    big = select(x < 0, -big, big);
    const float x2 = x * x;
    const float p = horner(x2, {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f, 1.33314422036e-1f,
                                 -3.33332819422e-1f});
    const float small = p * x2 * x + x;
    return select(std::isnan(x), x, select(z < 0.625f, small, big));
}

float logistic(float x) {
    // e = e^{-|x|} in (0, 1]: 1 / (1 + e) for x >= 0, e / (1 + e) below.
    const float e = expCore(std::fmax(-std::fabs(x), -104.0f));
    const float r = 1.0f / (1.0f + e);
    return select(std::isnan(x), x, select(x >= 0.0f, r, e * r));
}

float sin(float x) { return sinCos(x, false); }

float cos(float x) { return sinCos(x, true); }

float erf(float x) {
    const float z = std::fabs(x);
    // |x| < 1: x * P(x^2).
    const float x2 = x * x;
    const float small = x * horner(x2, {7.853861353153693e-5f, -8.010193625184903e-4f, 5.188327685732524e-3f,
                                        -2.685381193529856e-2f, 1.128358514861418e-1f, -3.761262582423300e-1f,
                                        1.128379165726710f});
    // |x| >= 1: 1 - erfc(|x|), erfc = t * exp(-z^2 + Q(t)), t = 1 / (1 + z/2).
    const float t = 1.0f / (1.0f + 0.5f * std::fmin(z, 10.0f));
    const float q = horner(t, {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                                0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f});
    const float zc = std::fmin(z, 10.0f);
    const float erfc = t * expCore(std::fmax(-zc * zc + q, -104.0f));
    float big = 1.0f - erfc;
    big = select(x < 0, -big, big);
    return select(std::isnan(x), x, select(z < 1.0f, small, big));
}

int64_t ulpDistance(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<int32_t>::max();
    if (a == b) return 0;
    // Map the floats onto a monotonic integer line.
    auto ordered = [](float f) {
        const int32_t i = std::bit_cast<int32_t>(f);
        return i < 0 ? static_cast<int64_t>(std::numeric_limits<int32_t>::min()) - i : static_cast<int64_t>(i);
    };
    return std::llabs(ordered(a) - ordered(b));
}

}  // namespace hloscope::fast_math
