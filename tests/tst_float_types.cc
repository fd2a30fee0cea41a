// Narrow float formats (core/ir/float_types.h): bit-exact conversions checked
// on every bit pattern, rounding ties to even (subnormals included), the
// overflow / NaN / infinity / -0 rules of each format, and XLA's
// reduce-precision.
#include <QTest>
#include <bit>
#include <cmath>
#include <limits>

#include "core/ir/float_types.h"

using namespace hloscope;
using PT = PrimitiveType;

namespace {

const PT kNarrowTypes[] = {PT::F16,      PT::BF16,          PT::F8E5M2,     PT::F8E4M3,
                           PT::F8E4M3FN, PT::F8E4M3B11FNUZ, PT::F8E5M2FNUZ, PT::F8E4M3FNUZ,
                           PT::F8E3M4,   PT::F8E8M0FNU,     PT::F6E2M3FN,   PT::F6E3M2FN,
                           PT::F4E2M1FN};

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

uint32_t bits(PT type, double value) { return float_util::doubleToBits(type, value); }

std::string typeName(PT type) { return std::string(primitive_util::name(type)); }

}  // namespace

class TestFloatTypes : public QObject {
    Q_OBJECT
private slots:
    void everyBitPatternRoundTrips();
    void knownValues();
    void roundsTiesToEven();
    void roundsSubnormalsToEven();
    void overflowPerFormat();
    void nanAndInfinityPerFormat();
    void negativeZero();
    void e8m0();
    void doubleConversionRoundsOnce();
    void reducePrecision();
    void bf16FastPathMatchesGenericRounding();
};

// ---------------------------------------------------------------------------
// Narrow floats.

void TestFloatTypes::everyBitPatternRoundTrips() {
    for (PT type : kNarrowTypes) {
        const int width = primitive_util::bitWidth(type);
        const uint32_t patterns = width == 16 ? 65536u : 1u << width;
        for (uint32_t b = 0; b < patterns; ++b) {
            const float value = float_util::bitsToFloat(type, b);
            const uint32_t back = float_util::floatToBits(type, value);
            if (std::isnan(value)) {
                // NaN payloads canonicalise; the result must still be NaN.
                QVERIFY2(std::isnan(float_util::bitsToFloat(type, back)),
                         (typeName(type) + " NaN " + std::to_string(b)).c_str());
            } else {
                QVERIFY2(back == b, (typeName(type) + " pattern " + std::to_string(b) + " -> " +
                                     std::to_string(back))
                                        .c_str());
            }
        }
    }
}

void TestFloatTypes::knownValues() {
    struct Case {
        PT type;
        double maxFinite;
        double minNormal;
        double minSubnormal;
        uint32_t maxBits;
    };
    const Case cases[] = {
        {PT::F16, 65504, 0x1p-14, 0x1p-24, 0x7BFF},
        {PT::BF16, 0x1.FEp127, 0x1p-126, 0x1p-133, 0x7F7F},
        {PT::F8E5M2, 57344, 0x1p-14, 0x1p-16, 0x7B},
        {PT::F8E4M3, 240, 0x1p-6, 0x1p-9, 0x77},
        {PT::F8E4M3FN, 448, 0x1p-6, 0x1p-9, 0x7E},
        {PT::F8E4M3B11FNUZ, 30, 0x1p-10, 0x1p-13, 0x7F},
        {PT::F8E5M2FNUZ, 57344, 0x1p-15, 0x1p-17, 0x7F},
        {PT::F8E4M3FNUZ, 240, 0x1p-7, 0x1p-10, 0x7F},
        {PT::F8E3M4, 15.5, 0.25, 0x1p-6, 0x6F},
        {PT::F6E2M3FN, 7.5, 1.0, 0.125, 0x1F},
        {PT::F6E3M2FN, 28, 0.25, 0.0625, 0x1F},
        {PT::F4E2M1FN, 6, 1.0, 0.5, 0x7},
    };
    for (const Case& c : cases) {
        const QByteArray name = QByteArray::fromStdString(typeName(c.type));
        QVERIFY2(float_util::maxFinite(c.type) == c.maxFinite, name);
        QVERIFY2(float_util::minNormal(c.type) == c.minNormal, name);
        QVERIFY2(bits(c.type, c.maxFinite) == c.maxBits, name);
        QVERIFY2(float_util::bitsToFloat(c.type, c.maxBits) == static_cast<float>(c.maxFinite),
                 name);
        QVERIFY2(bits(c.type, c.minSubnormal) == 1, name);
        QVERIFY2(float_util::bitsToFloat(c.type, 1) == static_cast<float>(c.minSubnormal), name);
        QVERIFY2(
            bits(c.type, 1.0) != 0 && float_util::bitsToFloat(c.type, bits(c.type, 1.0)) == 1.0f,
            name);
    }
    QCOMPARE(bits(PT::F16, 1.0), 0x3C00u);
    QCOMPARE(bits(PT::BF16, 1.0), 0x3F80u);
    QCOMPARE(bits(PT::F8E4M3FN, 1.0), 0x38u);
    QCOMPARE(bits(PT::F8E4M3FNUZ, 1.0), 0x40u);
    QCOMPARE(bits(PT::F8E4M3B11FNUZ, 1.0), 0x58u);
    QCOMPARE(bits(PT::F8E5M2FNUZ, 1.0), 0x40u);
    QCOMPARE(bits(PT::F4E2M1FN, -1.5), 0xBu);
    QCOMPARE(float_util::maxFinite(PT::F8E8M0FNU), 0x1p127);
    QCOMPARE(float_util::maxFinite(PT::F32),
             static_cast<double>(std::numeric_limits<float>::max()));
    QVERIFY(Half::fromBits(0x3C00) == fromFloat<PT::F16>(1.0f));
    QCOMPARE(toFloat(BFloat16::fromBits(0xC040)), -3.0f);
}

void TestFloatTypes::roundsTiesToEven() {
    // bf16: 1 + 2^-8 is halfway between 1 and 1 + 2^-7: the even one (1) wins.
    QCOMPARE(bits(PT::BF16, 1 + 0x1p-8), 0x3F80u);
    QCOMPARE(bits(PT::BF16, 1 + 3 * 0x1p-8), 0x3F82u);        // tie between ...81 and ...82
    QCOMPARE(bits(PT::BF16, 1 + 0x1p-8 + 0x1p-20), 0x3F81u);  // just above the tie
    // f16: integers above 2048 are spaced by 2.
    QCOMPARE(float_util::bitsToFloat(PT::F16, bits(PT::F16, 2049)), 2048.0f);
    QCOMPARE(float_util::bitsToFloat(PT::F16, bits(PT::F16, 2051)), 2052.0f);
    QCOMPARE(float_util::bitsToFloat(PT::F16, bits(PT::F16, 2050.5)), 2050.0f);
    // f8e4m3fn: spacing 2 in [16, 32).
    QCOMPARE(float_util::bitsToFloat(PT::F8E4M3FN, bits(PT::F8E4M3FN, 17)), 16.0f);
    QCOMPARE(float_util::bitsToFloat(PT::F8E4M3FN, bits(PT::F8E4M3FN, 19)), 20.0f);
    // f8e5m2: 1.125 is halfway between 1 and 1.25.
    QCOMPARE(float_util::bitsToFloat(PT::F8E5M2, bits(PT::F8E5M2, 1.125)), 1.0f);
    QCOMPARE(float_util::bitsToFloat(PT::F8E5M2, bits(PT::F8E5M2, 1.375)), 1.5f);
    // f4e2m1fn: 5 is halfway between 4 and 6; 2.5 between 2 and 3.
    QCOMPARE(float_util::bitsToFloat(PT::F4E2M1FN, bits(PT::F4E2M1FN, 5)), 4.0f);
    QCOMPARE(float_util::bitsToFloat(PT::F4E2M1FN, bits(PT::F4E2M1FN, 2.5)), 2.0f);
    QCOMPARE(float_util::bitsToFloat(PT::F4E2M1FN, bits(PT::F4E2M1FN, -2.75)), -3.0f);
    // Rounding carries into the exponent.
    QCOMPARE(float_util::bitsToFloat(PT::BF16, bits(PT::BF16, 0x1.FFp0)), 2.0f);
}

void TestFloatTypes::roundsSubnormalsToEven() {
    // f16 subnormals are multiples of 2^-24.
    QCOMPARE(bits(PT::F16, 0x1p-25), 0x0000u);      // tie -> 0 (even)
    QCOMPARE(bits(PT::F16, 3 * 0x1p-25), 0x0002u);  // tie between 1 and 2 -> 2
    QCOMPARE(bits(PT::F16, 0x1.8p-25), 0x0001u);    // above the tie
    QCOMPARE(bits(PT::F16, -0x1p-26), 0x8000u);     // underflow keeps the sign
    QCOMPARE(bits(PT::F16, 0x1.FFCp-15), 0x0400u);  // rounds up into the smallest normal
    // f8e4m3fn subnormals are multiples of 2^-9.
    QCOMPARE(bits(PT::F8E4M3FN, 0x1p-10), 0x00u);
    QCOMPARE(bits(PT::F8E4M3FN, 3 * 0x1p-10), 0x02u);
    QCOMPARE(bits(PT::F8E4M3FN, 5 * 0x1p-10), 0x02u);
    QCOMPARE(bits(PT::F8E4M3FN, 7 * 0x1p-10), 0x04u);
    // bf16 subnormals (float subnormals) round too.
    QCOMPARE(bits(PT::BF16, 0x1p-134), 0x0000u);
    QCOMPARE(bits(PT::BF16, 0x1.8p-133), 0x0002u);
    // f4e2m1fn: the only subnormal is 0.5; 0.25 ties to 0, 0.75 ties to 1.
    QCOMPARE(bits(PT::F4E2M1FN, 0.25), 0x0u);
    QCOMPARE(bits(PT::F4E2M1FN, 0.75), 0x2u);
}

void TestFloatTypes::overflowPerFormat() {
    // IEEE-like formats overflow to infinity.
    QCOMPARE(bits(PT::F16, 65519), 0x7BFFu);  // below the rounding threshold
    QCOMPARE(bits(PT::F16, 65520), 0x7C00u);
    QCOMPARE(bits(PT::F16, -1e10), 0xFC00u);
    QCOMPARE(bits(PT::BF16, 1e39), 0x7F80u);
    QCOMPARE(bits(PT::F8E5M2, 1e6), 0x7Cu);
    QCOMPARE(bits(PT::F8E4M3, 1000), 0x78u);
    QCOMPARE(bits(PT::F8E3M4, -16), 0xF0u);
    // f8e4m3fn: overflow becomes NaN (S.1111.111), as in ml_dtypes.
    QCOMPARE(bits(PT::F8E4M3FN, 464), 0x7Eu);  // tie -> 448 (even)
    QCOMPARE(bits(PT::F8E4M3FN, 465), 0x7Fu);
    QCOMPARE(bits(PT::F8E4M3FN, -1000), 0xFFu);
    // fnuz formats: the single NaN 0x80.
    QCOMPARE(bits(PT::F8E4M3FNUZ, 1000), 0x80u);
    QCOMPARE(bits(PT::F8E5M2FNUZ, -1e6), 0x80u);
    QCOMPARE(bits(PT::F8E4M3B11FNUZ, 30.9), 0x7Fu);  // rounds down to 30
    QCOMPARE(bits(PT::F8E4M3B11FNUZ, 31), 0x80u);    // tie with the (even) overflow
    // MX formats have no NaN or infinity: saturate.
    QCOMPARE(bits(PT::F4E2M1FN, 100), 0x7u);
    QCOMPARE(bits(PT::F4E2M1FN, -7), 0xFu);
    QCOMPARE(bits(PT::F6E2M3FN, 1e9), 0x1Fu);
    QCOMPARE(bits(PT::F6E3M2FN, -1e9), 0x3Fu);
}

void TestFloatTypes::nanAndInfinityPerFormat() {
    // Infinity inputs.
    QCOMPARE(bits(PT::F16, kInf), 0x7C00u);
    QCOMPARE(bits(PT::F8E4M3FN, kInf), 0x7Fu);
    QCOMPARE(bits(PT::F8E4M3FN, -kInf), 0xFFu);
    QCOMPARE(bits(PT::F8E4M3FNUZ, -kInf), 0x80u);
    QCOMPARE(bits(PT::F4E2M1FN, kInf), 0x7u);
    QCOMPARE(bits(PT::F6E2M3FN, -kInf), 0x3Fu);
    // NaN inputs: canonical quiet NaNs, sign kept where the format has one.
    QCOMPARE(bits(PT::F16, kNaN), 0x7E00u);
    QCOMPARE(bits(PT::F16, -kNaN), 0xFE00u);
    QCOMPARE(bits(PT::BF16, kNaN), 0x7FC0u);
    QCOMPARE(bits(PT::F8E5M2, kNaN), 0x7Eu);
    QCOMPARE(bits(PT::F8E4M3, kNaN), 0x7Cu);
    QCOMPARE(bits(PT::F8E3M4, -kNaN), 0xF8u);
    QCOMPARE(bits(PT::F8E4M3FN, -kNaN), 0xFFu);
    QCOMPARE(bits(PT::F8E4M3B11FNUZ, kNaN), 0x80u);
    QCOMPARE(bits(PT::F8E8M0FNU, kNaN), 0xFFu);
    // ml_dtypes maps NaN into the MX formats to the pattern it calls NaN (-0).
    QCOMPARE(bits(PT::F4E2M1FN, kNaN), 0x8u);
    QCOMPARE(bits(PT::F4E2M1FN, -kNaN), 0x0u);
    // Decoding.
    QVERIFY(std::isinf(float_util::bitsToFloat(PT::F8E5M2, 0x7C)));
    QVERIFY(std::isnan(float_util::bitsToFloat(PT::F8E5M2, 0x7D)));
    QCOMPARE(float_util::bitsToFloat(PT::F8E4M3FN, 0x78), 256.0f);  // all-ones exponent is finite
    QVERIFY(std::isnan(float_util::bitsToFloat(PT::F8E4M3FN, 0x7F)));
    QVERIFY(std::isnan(float_util::bitsToFloat(PT::F8E4M3FNUZ, 0x80)));
    QVERIFY(std::signbit(float_util::bitsToFloat(PT::F8E4M3FNUZ, 0x80)));  // as ml_dtypes
    QCOMPARE(float_util::bitsToFloat(PT::F4E2M1FN, 0xF), -6.0f);
    // f16/bf16 widen NaN payloads unchanged.
    QCOMPARE(std::bit_cast<uint32_t>(float_util::bitsToFloat(PT::BF16, 0xFF81)), 0xFF810000u);
    QCOMPARE(std::bit_cast<uint32_t>(float_util::bitsToFloat(PT::F16, 0x7C01)), 0x7F802000u);
    // Format properties.
    QVERIFY(float_util::hasInfinity(PT::F8E5M2));
    QVERIFY(!float_util::hasInfinity(PT::F8E4M3FN));
    QVERIFY(float_util::hasNaN(PT::F8E4M3FN));
    QVERIFY(!float_util::hasNaN(PT::F4E2M1FN));
    QVERIFY(float_util::hasInfinity(PT::F32));
}

void TestFloatTypes::negativeZero() {
    QCOMPARE(bits(PT::F16, -0.0), 0x8000u);
    QCOMPARE(bits(PT::BF16, -0.0), 0x8000u);
    QCOMPARE(bits(PT::F8E4M3FN, -0.0), 0x80u);
    QCOMPARE(bits(PT::F4E2M1FN, -0.0), 0x8u);
    QCOMPARE(bits(PT::F8E4M3FNUZ, -0.0), 0x00u);  // no -0 in fnuz
    QCOMPARE(bits(PT::F8E5M2FNUZ, -1e-30), 0x00u);
    QVERIFY(std::signbit(float_util::bitsToFloat(PT::F16, 0x8000)));
    QVERIFY(float_util::hasNegativeZero(PT::F16));
    QVERIFY(!float_util::hasNegativeZero(PT::F8E4M3FNUZ));
    QVERIFY(!float_util::hasNegativeZero(PT::F8E4M3B11FNUZ));
    QVERIFY(!float_util::hasNegativeZero(PT::F8E8M0FNU));
    QVERIFY(float_util::hasNegativeZero(PT::F6E3M2FN));
}

void TestFloatTypes::e8m0() {
    const PT t = PT::F8E8M0FNU;
    QCOMPARE(bits(t, 1.0), 0x7Fu);
    QCOMPARE(bits(t, 0x1p-127), 0x00u);  // 0x00 is 2^-127, not zero
    QCOMPARE(float_util::bitsToFloat(t, 0), static_cast<float>(0x1p-127));
    QCOMPARE(bits(t, 0x1p127), 0xFEu);
    QCOMPARE(bits(t, 1.5), 0x80u);  // ties round up (the implicit bit is odd)
    QCOMPARE(bits(t, 3.0), 0x81u);
    QCOMPARE(bits(t, 1.4), 0x7Fu);
    QCOMPARE(bits(t, 0.0), 0xFFu);   // no zero
    QCOMPARE(bits(t, -2.0), 0xFFu);  // no sign
    QCOMPARE(bits(t, 0x1p128), 0xFFu);
    QVERIFY(std::isnan(float_util::bitsToFloat(t, 0xFF)));
}

void TestFloatTypes::doubleConversionRoundsOnce() {
    // 1 + 2^-8 + 2^-30 is just above the bf16 tie; via float it would become
    // the tie itself and round down.
    const double value = 1 + 0x1p-8 + 0x1p-30;
    QCOMPARE(float_util::doubleToBits(PT::BF16, value), 0x3F81u);
    QCOMPARE(float_util::floatToBits(PT::BF16, static_cast<float>(value)), 0x3F80u);
}

void TestFloatTypes::reducePrecision() {
    using float_util::reducePrecision;
    // To f16 precision (5 exponent bits, 10 mantissa bits).
    QCOMPARE(reducePrecision(1.0f + 0x1p-11f, 5, 10), 1.0f);  // tie -> even
    QCOMPARE(reducePrecision(1.0f + 3 * 0x1p-11f, 5, 10), 1.0f + 0x1p-9f);
    QCOMPARE(reducePrecision(65504.0f, 5, 10), 65504.0f);
    QCOMPARE(reducePrecision(65520.0f, 5, 10), std::numeric_limits<float>::infinity());
    QCOMPARE(reducePrecision(-1e6f, 5, 10), -std::numeric_limits<float>::infinity());
    // XLA flushes what would be subnormal in the reduced format to zero.
    QCOMPARE(reducePrecision(0x1p-14f, 5, 10), 0x1p-14f);
    QCOMPARE(reducePrecision(0x1p-15f, 5, 10), 0.0f);
    QVERIFY(std::signbit(reducePrecision(-0x1p-20f, 5, 10)));
    // NaN stays NaN while mantissa bits remain; with none it becomes +inf.
    QVERIFY(std::isnan(reducePrecision(std::numeric_limits<float>::quiet_NaN(), 5, 10)));
    QCOMPARE(reducePrecision(std::numeric_limits<float>::quiet_NaN(), 8, 0),
             std::numeric_limits<float>::infinity());
    // bf16 precision = float exponent, 7 mantissa bits.
    QCOMPARE(reducePrecision(1.0f + 0x1p-8f, 8, 7), 1.0f);
    QCOMPARE(reducePrecision(0x1.FFp127f, 8, 7), std::numeric_limits<float>::infinity());  // carry
    QCOMPARE(reducePrecision(0x1.FEp127f, 8, 7), 0x1.FEp127f);
    // Unchanged when nothing is reduced.
    QCOMPARE(reducePrecision(0.1f, 8, 23), 0.1f);
    // Double: to float precision.
    QCOMPARE(reducePrecision(1.0 + 0x1p-30, 8, 23), 1.0);
    QCOMPARE(reducePrecision(1.0 + 0x1p-23 + 0x1p-30, 8, 23), 1.0 + 0x1p-23);
    QCOMPARE(reducePrecision(1e300, 8, 23), std::numeric_limits<double>::infinity());
}

// float -> bf16 has a bit-twiddling fast path; it must agree with the
// generic rounding (via double, which is exact for floats) on every class of
// value: a sweep over bit patterns with all low-half patterns near ties.
void TestFloatTypes::bf16FastPathMatchesGenericRounding() {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return static_cast<uint32_t>(state);
    };
    for (int i = 0; i < 1 << 20; ++i) {
        uint32_t bits = next();
        if (i % 4 == 1) bits = (bits & 0xFFFF0000u) | 0x8000u;  // exact ties
        if (i % 4 == 2) bits = (bits & 0xFFFF0000u) | 0x7FFFu;  // just below a tie
        const float value = std::bit_cast<float>(bits);
        const uint32_t fast = float_util::floatToBits(PrimitiveType::BF16, value);
        const uint32_t generic = float_util::doubleToBits(PrimitiveType::BF16, value);
        if (std::isnan(value)) {
            QCOMPARE(fast & 0x7FC0u, 0x7FC0u);
            continue;
        }
        if (fast != generic)
            QFAIL(qPrintable(QStringLiteral("bits %1: fast %2, generic %3")
                                 .arg(bits, 8, 16)
                                 .arg(fast, 4, 16)
                                 .arg(generic, 4, 16)));
    }
}

QTEST_APPLESS_MAIN(TestFloatTypes)
#include "tst_float_types.moc"
