// The reference evaluator: hand-written modules with values worked out by
// hand, per op family, with XLA's edge cases (wrap-around, division by zero,
// out-of-range shifts, NaN propagation, -0, total order, empty shapes).
#include <QTest>
#include <atomic>
#include <cmath>
#include <string>

#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"
#include "tests/evaluator_test_util.h"
#include "tests/loop_update_cases.h"

using namespace hloscope;

namespace {

std::string wrapEntry(const std::string& body) {
    return "HloModule m\n\nENTRY e {\n" + body + "\n}\n";
}

using hloscope::testing::evaluateText;
using hloscope::testing::literal;
using hloscope::testing::mismatch;

// Elementwise |got - want| <= tolerance * max(1, |want|); NaN matches NaN.
std::string mismatchNear(const std::string& text, const std::string& expected, double tolerance) {
    auto result = evaluateText(text);
    if (!result.isOk()) return "evaluation failed: " + result.status().toString();
    Literal want = literal(expected);
    if (result->elementType() != want.elementType() ||
        result->elementCount() != want.elementCount())
        return "got " + result->toString() + "\nwant " + want.toString();
    for (int64_t i = 0; i < want.elementCount(); ++i) {
        double g = result->getAsDouble(i), w = want.getAsDouble(i);
        if (std::isnan(w)   ? !std::isnan(g)
            : std::isinf(w) ? g != w
                            : std::fabs(g - w) > tolerance * std::max(1.0, std::fabs(w)))
            return "element " + std::to_string(i) + ": got " + result->toString() + "\nwant " +
                   want.toString();
    }
    return {};
}

// Empty when evaluation fails with `code` and a message containing `needle`.
std::string failsWith(const std::string& text, StatusCode code, const std::string& needle,
                      HloEvaluatorOptions options = {}) {
    auto result = evaluateText(text, {}, options);
    if (result.isOk()) return "unexpectedly succeeded: " + result->toString();
    if (result.status().code() != code ||
        result.status().message().find(needle) == std::string::npos)
        return "wrong error: " + result.status().toString();
    return {};
}

}  // namespace

#define EXPECT_EVAL(...)                          \
    do {                                          \
        std::string why_ = mismatch(__VA_ARGS__); \
        QVERIFY2(why_.empty(), why_.c_str());     \
    } while (false)
#define EXPECT_EVAL_NEAR(text, expected, tolerance)                       \
    do {                                                                  \
        std::string why_ = mismatchNear((text), (expected), (tolerance)); \
        QVERIFY2(why_.empty(), why_.c_str());                             \
    } while (false)
#define EXPECT_FAILURE(...)                        \
    do {                                           \
        std::string why_ = failsWith(__VA_ARGS__); \
        QVERIFY2(why_.empty(), why_.c_str());      \
    } while (false)

class TestEvaluator : public QObject {
    Q_OBJECT
private slots:
    void floatArithmetic();
    void integerWrapAround();
    void subByteIntegers();
    void integerDivisionByZero();
    void shifts();
    void sixtyFourBit();
    void maxMinNaN();
    void compare();
    void selectAndClamp();
    void convert();
    void bitcastConvert();
    void power();
    void signAndRounding();
    void bitOperations();
    void transcendental();
    void complexNumbers();
    void narrowFloats();
    void reducePrecision();
    void stochasticConvert();
    void map();
    void broadcastReshapeTranspose();
    void slices();
    void concatenatePadReverse();
    void iotaBitcastDimensionSize();
    void bitcastTiledLayouts();
    void emptyShapes();
    void whileLoop();
    void whileIterationLimit();
    void loopStateUpdates();
    void conditional();
    void callFusionTuples();
    void asyncAndCopyWrappers();
    void deadCodeIsSkipped();
    void dynamicUpdateSliceInLoop();
    void rngBitGeneratorThreeFry();
    void rngBitGeneratorPhilox();
    void rngIsDeterministic();
    void rngGetAndUpdateState();
    void collectivesOnOneReplica();
    void customCalls();
    void replicaId();
    void argumentChecks();
    void cancellation();
};

void TestEvaluator::floatArithmetic() {
    const std::string text = wrapEntry(R"(
  a = f32[4] constant({1.5, -2, 0, 3})
  b = f32[4] constant({2, 0.5, -1, 3})
  add = f32[4] add(a, b)
  sub = f32[4] subtract(a, b)
  mul = f32[4] multiply(a, b)
  div = f32[4] divide(a, b)
  rem = f32[4] remainder(a, b)
  ROOT t = (f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(add, sub, mul, div, rem))");
    EXPECT_EVAL(text,
                "(f32[4], f32[4], f32[4], f32[4], f32[4]) ({3.5, -1.5, -1, 6}, "
                "{-0.5, -2.5, 1, 0}, {3, -1, -0, 9}, {0.75, -4, -0, 1}, {1.5, -0, 0, 0})");
    // Division by zero follows IEEE (0/0 is a NaN of either sign).
    EXPECT_EVAL_NEAR(wrapEntry(R"(
  a = f32[3] constant({1, -1, 0})
  z = f32[3] constant({0, 0, 0})
  ROOT d = f32[3] divide(a, z))"),
                     "f32[3] {inf, -inf, nan}", 0);
}

void TestEvaluator::integerWrapAround() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s8[3] constant({127, -128, 100})
  b = s8[3] constant({1, -1, 100})
  add = s8[3] add(a, b)
  mul = s8[3] multiply(a, b)
  neg = s8[3] negate(a)
  abs = s8[3] abs(a)
  ROOT t = (s8[3], s8[3], s8[3], s8[3]) tuple(add, mul, neg, abs))"),
                "(s8[3], s8[3], s8[3], s8[3]) ({-128, 127, -56}, {127, -128, 16}, "
                "{-127, -128, -100}, {127, -128, 100})");
    EXPECT_EVAL(wrapEntry(R"(
  a = u8[3] constant({200, 255, 0})
  b = u8[3] constant({100, 1, 1})
  add = u8[3] add(a, b)
  sub = u8[3] subtract(a, b)
  ROOT t = (u8[3], u8[3]) tuple(add, sub))"),
                "(u8[3], u8[3]) ({44, 0, 1}, {100, 254, 255})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[2] constant({2147483647, 65536})
  b = s32[2] constant({1, 65536})
  add = s32[2] add(a, b)
  mul = s32[2] multiply(a, b)
  ROOT t = (s32[2], s32[2]) tuple(add, mul))"),
                "(s32[2], s32[2]) ({-2147483648, 131072}, {2147483647, 0})");
    EXPECT_EVAL(wrapEntry(R"(
  a = u16[1] constant({65535})
  ROOT m = u16[1] multiply(a, a))"),
                "u16[1] {1}");
}

void TestEvaluator::subByteIntegers() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s4[3] constant({7, -8, 7})
  b = s4[3] constant({1, -1, 7})
  add = s4[3] add(a, b)
  mul = s4[3] multiply(a, b)
  neg = s4[3] negate(a)
  ROOT t = (s4[3], s4[3], s4[3]) tuple(add, mul, neg))"),
                "(s4[3], s4[3], s4[3]) ({-8, 7, -2}, {7, -8, 1}, {-7, -8, -7})");
    EXPECT_EVAL(wrapEntry(R"(
  a = u4[2] constant({15, 3})
  b = u4[2] constant({1, 5})
  add = u4[2] add(a, b)
  sub = u4[2] subtract(a, b)
  ROOT t = (u4[2], u4[2]) tuple(add, sub))"),
                "(u4[2], u4[2]) ({0, 8}, {14, 14})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s2[4] constant({1, 1, -2, -2})
  b = s2[4] constant({1, -1, -1, 1})
  ROOT add = s2[4] add(a, b))"),
                "s2[4] {-2, 0, 1, -1}");
}

void TestEvaluator::integerDivisionByZero() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[6] constant({7, -7, 7, -2147483648, -7, 0})
  b = s32[6] constant({0, 2, -2, -1, 0, 0})
  div = s32[6] divide(a, b)
  rem = s32[6] remainder(a, b)
  ROOT t = (s32[6], s32[6]) tuple(div, rem))"),
                "(s32[6], s32[6]) ({-1, -3, -3, -2147483648, -1, -1}, {7, -1, 1, 0, -7, 0})");
    EXPECT_EVAL(wrapEntry(R"(
  a = u32[2] constant({7, 0})
  b = u32[2] constant({0, 0})
  div = u32[2] divide(a, b)
  rem = u32[2] remainder(a, b)
  ROOT t = (u32[2], u32[2]) tuple(div, rem))"),
                "(u32[2], u32[2]) ({4294967295, 4294967295}, {7, 0})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s4[3] constant({-8, 5, 5})
  b = s4[3] constant({-1, 0, 2})
  div = s4[3] divide(a, b)
  rem = s4[3] remainder(a, b)
  ROOT t = (s4[3], s4[3]) tuple(div, rem))"),
                "(s4[3], s4[3]) ({-8, -1, 2}, {0, 5, 1})");
    EXPECT_EVAL(wrapEntry(R"(
  a = u8[1] constant({7})
  z = u8[1] constant({0})
  ROOT d = u8[1] divide(a, z))"),
                "u8[1] {255}");
}

void TestEvaluator::shifts() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[7] constant({1, 1, -8, 8, -1, -1, 5})
  b = s32[7] constant({31, 32, 40, 40, 28, -1, 0})
  shl = s32[7] shift-left(a, b)
  sra = s32[7] shift-right-arithmetic(a, b)
  srl = s32[7] shift-right-logical(a, b)
  ROOT t = (s32[7], s32[7], s32[7]) tuple(shl, sra, srl))"),
                "(s32[7], s32[7], s32[7]) ({-2147483648, 0, 0, 0, -268435456, 0, 5}, "
                "{0, 0, -1, 0, -1, -1, 5}, {0, 0, 0, 0, 15, 0, 5})");
    EXPECT_EVAL(wrapEntry(R"(
  a = u8[3] constant({128, 255, 3})
  b = u8[3] constant({1, 8, 7})
  shl = u8[3] shift-left(a, b)
  sra = u8[3] shift-right-arithmetic(a, b)
  srl = u8[3] shift-right-logical(a, b)
  ROOT t = (u8[3], u8[3], u8[3]) tuple(shl, sra, srl))"),
                "(u8[3], u8[3], u8[3]) ({0, 0, 128}, {192, 255, 0}, {64, 0, 0})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s4[3] constant({-1, -8, 3})
  b = s4[3] constant({3, 1, 4})
  shl = s4[3] shift-left(a, b)
  sra = s4[3] shift-right-arithmetic(a, b)
  srl = s4[3] shift-right-logical(a, b)
  ROOT t = (s4[3], s4[3], s4[3]) tuple(shl, sra, srl))"),
                "(s4[3], s4[3], s4[3]) ({-8, 0, 0}, {-1, -4, 0}, {1, 4, 0})");
}

void TestEvaluator::sixtyFourBit() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s64[3] constant({-9223372036854775808, 7, -1})
  b = s64[3] constant({-1, 0, 2})
  div = s64[3] divide(a, b)
  rem = s64[3] remainder(a, b)
  hi = s64[3] mulhi(a, b)
  c = u64[1] constant({18446744073709551615})
  uhi = u64[1] mulhi(c, c)
  ROOT t = (s64[3], s64[3], s64[3], u64[1]) tuple(div, rem, hi, uhi))"),
                "(s64[3], s64[3], s64[3], u64[1]) ({-9223372036854775808, -1, 0}, {0, 7, -1}, "
                "{0, 0, -1}, {18446744073709551614})");
    EXPECT_EVAL(wrapEntry(R"(
  a = f64[2] constant({0.1, 1e308})
  b = f64[2] constant({0.2, 1e308})
  ROOT s = f64[2] add(a, b))"),
                "f64[2] {0.30000000000000004, inf}");
}

void TestEvaluator::maxMinNaN() {
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[3] constant({nan, 1, 1})
  b = f32[3] constant({1, nan, 2})
  max = f32[3] maximum(a, b)
  min = f32[3] minimum(a, b)
  ROOT t = (f32[3], f32[3]) tuple(max, min))"),
                "(f32[3], f32[3]) ({nan, nan, 2}, {nan, nan, 1})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[2] constant({-5, 3})
  b = s32[2] constant({2, 3})
  max = s32[2] maximum(a, b)
  min = s32[2] minimum(a, b)
  ROOT t = (s32[2], s32[2]) tuple(max, min))"),
                "(s32[2], s32[2]) ({2, 3}, {-5, 3})");
    EXPECT_EVAL(wrapEntry(R"(
  a = bf16[2] constant({nan, -3})
  b = bf16[2] constant({1, -2})
  ROOT max = bf16[2] maximum(a, b))"),
                "bf16[2] {nan, -2}");
}

void TestEvaluator::compare() {
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[4] constant({nan, -0, 1, nan})
  b = f32[4] constant({nan, 0, 2, 1})
  eq = pred[4] compare(a, b), direction=EQ
  ne = pred[4] compare(a, b), direction=NE
  lt = pred[4] compare(a, b), direction=LT
  ge = pred[4] compare(a, b), direction=GE
  tlt = pred[4] compare(a, b), direction=LT, type=TOTALORDER
  teq = pred[4] compare(a, b), direction=EQ, type=TOTALORDER
  ROOT t = (pred[4], pred[4], pred[4], pred[4], pred[4], pred[4]) tuple(eq, ne, lt, ge, tlt, teq))"),
                "(pred[4], pred[4], pred[4], pred[4], pred[4], pred[4]) ("
                "{false, true, false, false}, {true, false, true, true}, "
                "{false, false, true, false}, {false, true, false, false}, "
                "{false, true, true, false}, {true, false, false, false})");
    // -nan < -inf < ... < +inf < +nan in total order.
    EXPECT_EVAL(wrapEntry(R"(
  n = f32[2] constant({nan, inf})
  negn = f32[2] negate(n)
  i = f32[2] constant({-inf, nan})
  ROOT lt = pred[2] compare(negn, i), direction=LT, type=TOTALORDER)"),
                "pred[2] {true, true}");
    EXPECT_EVAL(wrapEntry(R"(
  a = u32[1] constant({4294967295})
  b = u32[1] constant({1})
  c = s32[1] constant({-1})
  d = s32[1] constant({1})
  u = pred[1] compare(a, b), direction=GT
  s = pred[1] compare(c, d), direction=GT
  ROOT t = (pred[1], pred[1]) tuple(u, s))"),
                "(pred[1], pred[1]) ({true}, {false})");
}

void TestEvaluator::selectAndClamp() {
    EXPECT_EVAL(wrapEntry(R"(
  p = pred[3] constant({true, false, true})
  a = s32[3] constant({1, 2, 3})
  b = s32[3] constant({4, 5, 6})
  s = s32[3] select(p, a, b)
  f = pred[] constant(false)
  s2 = s32[3] select(f, a, b)
  ROOT t = (s32[3], s32[3]) tuple(s, s2))"),
                "(s32[3], s32[3]) ({1, 5, 3}, {4, 5, 6})");
    EXPECT_EVAL(wrapEntry(R"(
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  x = f32[4] constant({-1, 0.5, 2, nan})
  ROOT c = f32[4] clamp(lo, x, hi))"),
                "f32[4] {0, 0.5, 1, nan}");
    EXPECT_EVAL(wrapEntry(R"(
  lo = s32[] constant(0)
  hi = s32[] constant(10)
  x = s32[3] constant({-5, 5, 15})
  ROOT c = s32[3] clamp(lo, x, hi))"),
                "s32[3] {0, 5, 10}");
}

void TestEvaluator::convert() {
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[5] constant({3.7, -3.7, 1e10, nan, -1e10})
  ROOT c = s32[5] convert(a))"),
                "s32[5] {3, -3, 2147483647, 0, -2147483648}");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[2] constant({300, -1})
  ROOT c = u8[2] convert(a))"),
                "u8[2] {44, 255}");
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[3] constant({0, 2, -0.5})
  ROOT c = pred[3] convert(a))"),
                "pred[3] {false, true, true}");
}

void TestEvaluator::bitcastConvert() {
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[] constant(1)
  ROOT b = s32[] bitcast-convert(a))"),
                "s32[] 1065353216");
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[2] constant({1, -2})
  ROOT b = u8[2,4] bitcast-convert(a))"),
                "u8[2,4] {{0, 0, 128, 63}, {0, 0, 0, 192}}");
    EXPECT_EVAL(wrapEntry(R"(
  a = u16[2] constant({0, 16256})
  ROOT b = f32[] bitcast-convert(a))"),
                "f32[] 1");
    EXPECT_EVAL(wrapEntry(R"(
  a = s4[2] constant({-1, 7})
  ROOT b = u4[2] bitcast-convert(a))"),
                "u4[2] {15, 7}");
    EXPECT_EVAL(wrapEntry(R"(
  a = u8[] constant(171)
  ROOT b = u4[2] bitcast-convert(a))"),
                "u4[2] {11, 10}");
}

void TestEvaluator::power() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[8] constant({2, 2, 1, -1, 0, 3, -2, 5})
  b = s32[8] constant({10, -1, -5, -1, 0, 3, 3, 0})
  ROOT p = s32[8] power(a, b))"),
                "s32[8] {1024, 0, 1, 0, 1, 27, -8, 1}");
    EXPECT_EVAL(wrapEntry(R"(
  a = u8[2] constant({2, 3})
  b = u8[2] constant({8, 5})
  ROOT p = u8[2] power(a, b))"),
                "u8[2] {0, 243}");
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[4] constant({4, 2, 0, nan})
  b = f32[4] constant({0.5, -1, 0, 0})
  ROOT p = f32[4] power(a, b))"),
                "f32[4] {2, 0.5, 1, 1}");
}

void TestEvaluator::signAndRounding() {
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[5] constant({-2.5, -0, 0, 3, nan})
  ROOT s = f32[5] sign(a))"),
                "f32[5] {-1, -0, 0, 1, nan}");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[3] constant({-5, 0, 7})
  ROOT s = s32[3] sign(a))"),
                "s32[3] {-1, 0, 1}");
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[6] constant({0.5, 1.5, 2.5, -0.5, -2.5, 2.4})
  afz = f32[6] round-nearest-afz(a)
  even = f32[6] round-nearest-even(a)
  fl = f32[6] floor(a)
  ce = f32[6] ceil(a)
  ROOT t = (f32[6], f32[6], f32[6], f32[6]) tuple(afz, even, fl, ce))"),
                "(f32[6], f32[6], f32[6], f32[6]) ({1, 2, 3, -1, -3, 2}, {0, 2, 2, -0, -2, 2}, "
                "{0, 1, 2, -1, -3, 2}, {1, 2, 3, -0, -2, 3})");
}

void TestEvaluator::bitOperations() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[4] constant({1, 0, -1, 255})
  clz = s32[4] count-leading-zeros(a)
  pop = s32[4] popcnt(a)
  ROOT t = (s32[4], s32[4]) tuple(clz, pop))"),
                "(s32[4], s32[4]) ({31, 32, 0, 24}, {1, 0, 32, 8})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s4[2] constant({1, -1})
  clz = s4[2] count-leading-zeros(a)
  pop = s4[2] popcnt(a)
  u = u8[1] constant({1})
  uclz = u8[1] count-leading-zeros(u)
  ROOT t = (s4[2], s4[2], u8[1]) tuple(clz, pop, uclz))"),
                "(s4[2], s4[2], u8[1]) ({3, 0}, {1, 4}, {7})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[1] constant({12})
  b = s32[1] constant({10})
  and = s32[1] and(a, b)
  or = s32[1] or(a, b)
  xor = s32[1] xor(a, b)
  not = s32[1] not(a)
  u = u4[1] constant({5})
  unot = u4[1] not(u)
  p = pred[2] constant({true, false})
  pnot = pred[2] not(p)
  ROOT t = (s32[1], s32[1], s32[1], s32[1], u4[1], pred[2]) tuple(and, or, xor, not, unot, pnot))"),
                "(s32[1], s32[1], s32[1], s32[1], u4[1], pred[2]) ({8}, {14}, {6}, {-13}, {10}, "
                "{false, true})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[2] constant({1073741824, -1})
  b = s32[2] constant({4, 1})
  hs = s32[2] mulhi(a, b)
  c = u32[1] constant({4294967295})
  hu = u32[1] mulhi(c, c)
  ROOT t = (s32[2], u32[1]) tuple(hs, hu))"),
                "(s32[2], u32[1]) ({1, -1}, {4294967294})");
}

void TestEvaluator::transcendental() {
    EXPECT_EVAL_NEAR(wrapEntry(R"(
  z = f32[] constant(0)
  one = f32[] constant(1)
  x27 = f32[] constant(27)
  four = f32[] constant(4)
  a = f32[] logistic(z)
  b = f32[] exponential-minus-one(z)
  c = f32[] log-plus-one(z)
  d = f32[] cbrt(x27)
  e2 = f32[] erf(z)
  f = f32[] exponential(one)
  g = f32[] atan2(one, one)
  h = f32[] rsqrt(four)
  i = f32[] tanh(z)
  j = f32[] log(one)
  ra = f32[1] reshape(a)
  rb = f32[1] reshape(b)
  rc = f32[1] reshape(c)
  rd = f32[1] reshape(d)
  re = f32[1] reshape(e2)
  rf = f32[1] reshape(f)
  rg = f32[1] reshape(g)
  rh = f32[1] reshape(h)
  ri = f32[1] reshape(i)
  rj = f32[1] reshape(j)
  ROOT r = f32[10] concatenate(ra, rb, rc, rd, re, rf, rg, rh, ri, rj), dimensions={0})"),
                     "f32[10] {0.5, 0, 0, 3, 0, 2.7182817, 0.7853982, 0.5, 0, 0}", 1e-6);
}

void TestEvaluator::complexNumbers() {
    EXPECT_EVAL(wrapEntry(R"(
  re = f32[2] constant({1, 3})
  im = f32[2] constant({3, -4})
  z = c64[2] complex(re, im)
  w = c64[2] constant({(2, -4), (1, 0)})
  m = c64[2] multiply(z, w)
  r = f32[2] real(m)
  i = f32[2] imag(m)
  ROOT t = (c64[2], f32[2], f32[2]) tuple(m, r, i))"),
                "(c64[2], f32[2], f32[2]) ({(14, 2), (3, -4)}, {14, 3}, {2, -4})");
    EXPECT_EVAL(wrapEntry(R"(
  z = c64[1] constant({(3, -4)})
  ROOT a = f32[1] abs(z))"),
                "f32[1] {5}");
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[4] constant({1, inf, -inf, nan})
  ROOT f = pred[4] is-finite(a))"),
                "pred[4] {true, false, false, false}");
    // exp keeps real arguments on the real axis and gives NaN where e^a times
    // cos/sin of a non-finite b is undefined (as XLA's expansion does).
    {
        auto r = evaluateText(wrapEntry(R"(
  z = c128[4] constant({(-inf, inf), (inf, 0), (0, 0), (-inf, 0)})
  ROOT e = c128[4] exponential(z))"));
        QVERIFY2(r.isOk(), r.status().toString().c_str());
        const auto e0 = r->getAsComplex(0), e1 = r->getAsComplex(1), e2 = r->getAsComplex(2),
                   e3 = r->getAsComplex(3);
        QVERIFY(std::isnan(e0.real()) && std::isnan(e0.imag()));
        QVERIFY(std::isinf(e1.real()) && e1.real() > 0 && e1.imag() == 0);
        QCOMPARE(e2, std::complex<double>(1, 0));
        QCOMPARE(e3, std::complex<double>(0, 0));
    }
    // log1p of a tiny argument keeps its real part (log(1 + z) would give 0).
    {
        auto r = evaluateText(wrapEntry(R"(
  z = c128[1] constant({(-1e-30, 2e-30)})
  ROOT l = c128[1] log-plus-one(z))"));
        QVERIFY2(r.isOk(), r.status().toString().c_str());
        QCOMPARE(r->getAsComplex(0).real(), -1e-30);
        QCOMPARE(r->getAsComplex(0).imag(), 2e-30);
    }
    // Principal cube root; maximum/minimum order complex values
    // lexicographically (real part, then imaginary part).
    EXPECT_EVAL_NEAR(wrapEntry(R"(
  z = c128[1] constant({(3, 4)})
  c = c128[1] cbrt(z)
  ROOT r = f64[1] real(c))"),
                     "f64[1] {1.6289371459221759}", 1e-15);
    EXPECT_EVAL(wrapEntry(R"(
  a = c64[3] constant({(1.5, 2.5), (1.5, 7.5), (0, 1.5)})
  b = c64[3] constant({(7.5, 1.5), (1.5, 2.5), (-0, 2.5)})
  mx = c64[3] maximum(a, b)
  mn = c64[3] minimum(a, b)
  ROOT t = (c64[3], c64[3]) tuple(mx, mn))"),
                "(c64[3], c64[3]) ({(7.5, 1.5), (1.5, 7.5), (-0, 2.5)}, {(1.5, 2.5), (1.5, 2.5), (0, 1.5)})");
    // bitcast-convert c128 -> c64[2] reinterprets the bytes (little endian:
    // the real part's low word first).
    EXPECT_EVAL(wrapEntry(R"(
  z = c128[] constant((1, 0))
  ROOT b = c64[2] bitcast-convert(z))"),
                "c64[2] {(0, 1.875), (0, 0)}");
}

void TestEvaluator::narrowFloats() {
    // 1 + 2^-8 ties to even (1); 1 + 3*2^-8 ties to even (1 + 2^-6).
    EXPECT_EVAL(wrapEntry(R"(
  a = bf16[2] constant({1, 1})
  b = bf16[2] constant({0.00390625, 0.01171875})
  ROOT s = bf16[2] add(a, b))"),
                "bf16[2] {1, 1.015625}");
    EXPECT_EVAL(wrapEntry(R"(
  a = f16[2] constant({65504, 1})
  b = f16[2] constant({16, 2})
  ROOT s = f16[2] add(a, b))"),
                "f16[2] {inf, 3}");
}

void TestEvaluator::reducePrecision() {
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[3] constant({1.00048828125, 1e6, 3})
  ROOT r = f32[3] reduce-precision(a), exponent_bits=5, mantissa_bits=10)"),
                "f32[3] {1, inf, 3}");
}

void TestEvaluator::stochasticConvert() {
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[6] constant({2.5, -2.5, 2.25, 2.25, nan, 3e9})
  r = u32[6] constant({2147483647, 2147483647, 1073741823, 1073741824, 0, 0})
  ROOT c = s32[6] stochastic-convert(a, r))"),
                "s32[6] {3, -3, 3, 2, 0, 2147483647}");
}

void TestEvaluator::map() {
    EXPECT_EVAL(R"(
HloModule m

add_c {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[3] constant({1, 2, 3})
  b = f32[3] constant({10, 20, 30})
  ROOT m = f32[3] map(a, b), dimensions={0}, to_apply=add_c
}
)",
                "f32[3] {11, 22, 33}");
}

void TestEvaluator::broadcastReshapeTranspose() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[2] constant({1, 2})
  b0 = s32[2,3] broadcast(a), dimensions={0}
  b1 = s32[3,2] broadcast(a), dimensions={1}
  s = s32[] constant(5)
  bs = s32[2,2] broadcast(s), dimensions={}
  ROOT t = (s32[2,3], s32[3,2], s32[2,2]) tuple(b0, b1, bs))"),
                "(s32[2,3], s32[3,2], s32[2,2]) ({{1, 1, 1}, {2, 2, 2}}, {{1, 2}, {1, 2}, {1, 2}}, "
                "{{5, 5}, {5, 5}})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  r = s32[3,2] reshape(a)
  t = s32[3,2] transpose(a), dimensions={1,0}
  ROOT x = (s32[3,2], s32[3,2]) tuple(r, t))"),
                "(s32[3,2], s32[3,2]) ({{1, 2}, {3, 4}, {5, 6}}, {{1, 4}, {2, 5}, {3, 6}})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[2,1,3] constant({{{1, 2, 3}}, {{4, 5, 6}}})
  ROOT t = s32[3,2,1] transpose(a), dimensions={2,0,1})"),
                "s32[3,2,1] {{{1}, {4}}, {{2}, {5}}, {{3}, {6}}}");
}

void TestEvaluator::slices() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[6] constant({0, 1, 2, 3, 4, 5})
  s = s32[3] slice(a), slice={[1:6:2]}
  m = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  s2 = s32[2,2] slice(m), slice={[0:2], [1:3]}
  ROOT t = (s32[3], s32[2,2]) tuple(s, s2))"),
                "(s32[3], s32[2,2]) ({1, 3, 5}, {{2, 3}, {5, 6}})");
    // Start indices are clamped so that the slice stays in bounds.
    EXPECT_EVAL(
        wrapEntry(R"(
  a = s32[5] constant({0, 1, 2, 3, 4})
  i4 = s32[] constant(4)
  im = s32[] constant(-3)
  d1 = s32[2] dynamic-slice(a, i4), dynamic_slice_sizes={2}
  d2 = s32[2] dynamic-slice(a, im), dynamic_slice_sizes={2}
  u = s32[2] constant({9, 8})
  i10 = s32[] constant(10)
  d3 = s32[5] dynamic-update-slice(a, u, i10)
  i1 = s32[] constant(1)
  d4 = s32[5] dynamic-update-slice(a, u, i1)
  ROOT t = (s32[2], s32[2], s32[5], s32[5]) tuple(d1, d2, d3, d4))"),
        "(s32[2], s32[2], s32[5], s32[5]) ({3, 4}, {0, 1}, {0, 1, 2, 9, 8}, {0, 9, 8, 3, 4})");
    EXPECT_EVAL(wrapEntry(R"(
  m = s32[3,3] constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})
  i = s32[] constant(1)
  j = s32[] constant(2)
  ROOT d = s32[2,2] dynamic-slice(m, i, j), dynamic_slice_sizes={2,2})"),
                "s32[2,2] {{5, 6}, {8, 9}}");
}

void TestEvaluator::concatenatePadReverse() {
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[2] constant({1, 2})
  b = s32[1] constant({3})
  c = s32[3] constant({4, 5, 6})
  cat = s32[6] concatenate(a, b, c), dimensions={0}
  m = s32[2,1] constant({{1}, {2}})
  n = s32[2,2] constant({{3, 4}, {5, 6}})
  cat2 = s32[2,3] concatenate(m, n), dimensions={1}
  ROOT t = (s32[6], s32[2,3]) tuple(cat, cat2))"),
                "(s32[6], s32[2,3]) ({1, 2, 3, 4, 5, 6}, {{1, 3, 4}, {2, 5, 6}})");
    EXPECT_EVAL(wrapEntry(R"(
  a = s32[3] constant({1, 2, 3})
  z = s32[] constant(0)
  p1 = s32[8] pad(a, z), padding=1_2_1
  p2 = s32[2] pad(a, z), padding=-1_0
  p3 = s32[4] pad(a, z), padding=-2_1_1
  ROOT t = (s32[8], s32[2], s32[4]) tuple(p1, p2, p3))"),
                "(s32[8], s32[2], s32[4]) ({0, 1, 0, 2, 0, 3, 0, 0}, {2, 3}, {2, 0, 3, 0})");
    EXPECT_EVAL(wrapEntry(R"(
  m = s32[2,2] constant({{1, 2}, {3, 4}})
  v = s32[] constant(9)
  ROOT p = s32[3,4] pad(m, v), padding=1_0x0_1_1)"),
                "s32[3,4] {{9, 9, 9, 9}, {1, 9, 2, 9}, {3, 9, 4, 9}}");
    EXPECT_EVAL(wrapEntry(R"(
  m = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  r1 = s32[2,3] reverse(m), dimensions={1}
  r2 = s32[2,3] reverse(m), dimensions={0,1}
  ROOT t = (s32[2,3], s32[2,3]) tuple(r1, r2))"),
                "(s32[2,3], s32[2,3]) ({{3, 2, 1}, {6, 5, 4}}, {{6, 5, 4}, {3, 2, 1}})");
}

void TestEvaluator::iotaBitcastDimensionSize() {
    EXPECT_EVAL(wrapEntry(R"(
  i = s32[2,3] iota(), iota_dimension=1
  f = f32[3] iota(), iota_dimension=0
  ROOT t = (s32[2,3], f32[3]) tuple(i, f))"),
                "(s32[2,3], f32[3]) ({{0, 1, 2}, {0, 1, 2}}, {0, 1, 2})");
    // Same layouts: row-major reinterpretation; column-major operand: the
    // physical order is read.
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})
  b = f32[3,2]{1,0} bitcast(a)
  c = f32[2,3]{0,1} constant({{1, 2, 3}, {4, 5, 6}})
  d = f32[6]{0} bitcast(c)
  ROOT t = (f32[3,2], f32[6]) tuple(b, d))"),
                "(f32[3,2], f32[6]) ({{1, 2}, {3, 4}, {5, 6}}, {1, 4, 2, 5, 3, 6})");
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  ROOT s = s32[] get-dimension-size(a), dimensions={1})"),
                "s32[] 3");
}

void TestEvaluator::bitcastTiledLayouts() {
    // Equal tilings over equal minor dimensions: a degenerate major
    // dimension does not move any element.
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[2,4]{1,0:T(2,4)} constant({{1, 2, 3, 4}, {5, 6, 7, 8}})
  ROOT b = f32[1,2,4]{2,1,0:T(2,4)} bitcast(a))"),
                "f32[1,2,4] {{{1, 2, 3, 4}, {5, 6, 7, 8}}}");
    EXPECT_FAILURE(wrapEntry(R"(
  a = f32[2,4]{1,0:T(2,4)} constant({{1, 2, 3, 4}, {5, 6, 7, 8}})
  ROOT b = f32[8]{0:T(8)} bitcast(a))"),
                   StatusCode::kUnimplemented, "%b");
}

void TestEvaluator::emptyShapes() {
    EXPECT_EVAL(wrapEntry(R"(
  a = f32[0] constant({})
  b = f32[0] add(a, a)
  s = f32[] constant(1)
  c = f32[2,0] broadcast(s), dimensions={}
  x = f32[2] constant({1, 2})
  d = f32[2] concatenate(a, x), dimensions={0}
  e = f32[0] slice(x), slice={[1:1]}
  p = f32[2] pad(a, s), padding=1_1
  ROOT t = (f32[0], f32[2,0], f32[2], f32[0], f32[2]) tuple(b, c, d, e, p))"),
                "(f32[0], f32[2,0], f32[2], f32[0], f32[2]) ({}, {{}, {}}, {1, 2}, {}, {1, 1})");
}

namespace {
const char* kWhileModule = R"(
HloModule m

cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  s2 = s32[] add(s, i)
  ROOT t = (s32[], s32[]) tuple(i2, s2)
}

ENTRY e {
  z = s32[] constant(0)
  init = (s32[], s32[]) tuple(z, z)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
}
)";
}  // namespace

void TestEvaluator::whileLoop() { EXPECT_EVAL(kWhileModule, "(s32[], s32[]) (10, 45)"); }

// A while body's dynamic-update-slice of its own state, which the interpreter writes in place
// (the body's get-tuple-element moves the element out of the loop's state, and the update takes
// its last reader's value; copy-on-write covers any storage still shared). Expected values
// worked out here step by step, not by the interpreter; the argument is never written.
void TestEvaluator::loopStateUpdates() {
    const auto cases = testing::loopUpdateCases();
    auto find = [&](std::string_view name) {
        for (const auto& c : cases)
            if (name == c.name) return c.text;
        return std::string();
    };
    Literal p(Shape(PrimitiveType::F32, {8, 4}));
    for (int64_t e = 0; e < 32; ++e) p.setFromDouble(e, 100 + e);
    const Literal original = testing::literal(p.toString());
    using Rows = std::vector<std::vector<float>>;
    auto rowsOf = [](const Literal& l) {
        Rows rows(8, std::vector<float>(4));
        for (int64_t e = 0; e < 32; ++e)
            rows[size_t(e / 4)][size_t(e % 4)] = float(l.getAsDouble(e));
        return rows;
    };
    auto write = [](Rows& rows, int64_t i, float value) {
        const int64_t r = std::clamp<int64_t>(i, 0, 7);
        for (float& x : rows[size_t(r)]) x = value;
    };
    auto compare = [&](const Literal& got, const Rows& want, const char* name) {
        const Rows rows = rowsOf(got);
        if (rows != want)
            QFAIL(qPrintable(
                QString("%1: got %2").arg(name, QString::fromStdString(got.toString()))));
    };
    // scan: i = -2 .. 9 writes row clamp(i).
    {
        auto result = testing::evaluateText(find("scan"), {p});
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        Rows want = rowsOf(p);
        for (int64_t i = -2; i < 10; ++i) write(want, i, float(i));
        compare(result->tupleElement(1), want, "scan");
    }
    // read after, and read after through a second get-tuple-element: ys <-
    // dynamic-update-slice(ys) + ys (the old value read after the update).
    for (const char* name : {"read after", "another view of the state"}) {
        auto result = testing::evaluateText(find(name), {p});
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        Rows ys = rowsOf(p);
        for (int64_t i = -2; i < 10; ++i) {
            Rows updated = ys;
            write(updated, i, float(i));
            for (size_t r = 0; r < 8; ++r)
                for (size_t c = 0; c < 4; ++c) ys[r][c] = updated[r][c] + ys[r][c];
        }
        compare(result->tupleElement(1), ys, name);
    }
    // old value kept: (ys, other) <- (update of ys, ys), i = 0 .. 4.
    {
        Literal q(Shape(PrimitiveType::F32, {8, 4}));
        auto result = testing::evaluateText(find("old value kept"), {p, q});
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        Rows ys = rowsOf(p), other;
        for (int64_t i = 0; i < 5; ++i) {
            other = ys;
            write(ys, i, float(i));
        }
        compare(result->tupleElement(1), ys, "old value kept (new)");
        compare(result->tupleElement(2), other, "old value kept (old)");
    }
    // body also called: the call's update leaves the caller's value alone.
    {
        auto result = testing::evaluateText(find("body also called"), {p});
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        Rows called = rowsOf(p), looped = rowsOf(p);
        write(called, 3, 3.0f);
        for (int64_t i = 3; i < 10; ++i) write(looped, i, float(i));
        compare(result->tupleElement(0), called, "body also called (call)");
        compare(result->tupleElement(1), looped, "body also called (loop)");
        compare(result->tupleElement(2), rowsOf(original), "body also called (argument)");
    }
    QVERIFY(p == original);
}

void TestEvaluator::whileIterationLimit() {
    HloEvaluatorOptions options;
    options.maxWhileIterations = 5;
    EXPECT_FAILURE(kWhileModule, StatusCode::kResourceExhausted, "%w", options);
}

void TestEvaluator::conditional() {
    const std::string branches = R"(
HloModule m

b0 {
  x = s32[] parameter(0)
  ROOT r = s32[] negate(x)
}

b1 {
  x = s32[] parameter(0)
  c = s32[] constant(100)
  ROOT r = s32[] add(x, c)
}

b2 {
  x = s32[] parameter(0)
  ROOT r = s32[] multiply(x, x)
}
)";
    auto indexed = [&](int index) {
        return branches + "\nENTRY e {\n  i = s32[] constant(" + std::to_string(index) +
               ")\n  x = s32[] constant(7)\n  ROOT c = s32[] conditional(i, x, x, x), "
               "branch_computations={b0, b1, b2}\n}\n";
    };
    EXPECT_EVAL(indexed(0), "s32[] -7");
    EXPECT_EVAL(indexed(1), "s32[] 107");
    EXPECT_EVAL(indexed(2), "s32[] 49");
    EXPECT_EVAL(indexed(7), "s32[] 49");  // out of range: last branch
    EXPECT_EVAL(indexed(-1), "s32[] 49");
    auto predicated = [&](bool value) {
        return branches + "\nENTRY e {\n  p = pred[] constant(" + (value ? "true" : "false") +
               ")\n  x = s32[] constant(7)\n  ROOT c = s32[] conditional(p, x, x), "
               "true_computation=b0, false_computation=b1\n}\n";
    };
    EXPECT_EVAL(predicated(true), "s32[] -7");
    EXPECT_EVAL(predicated(false), "s32[] 107");
}

void TestEvaluator::callFusionTuples() {
    EXPECT_EVAL(R"(
HloModule m

sq {
  x = f32[2] parameter(0)
  ROOT m = f32[2] multiply(x, x)
}

fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] subtract(a, b)
}

ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2] call(a), to_apply=sq
  f = f32[2] fusion(c, b), kind=kLoop, calls=fused
  ab = (f32[2], f32[2]) tuple(a, b)
  t = (f32[2], (f32[2], f32[2])) tuple(f, ab)
  inner = (f32[2], f32[2]) get-tuple-element(t), index=1
  r = f32[2] get-tuple-element(inner), index=1
  ROOT x = (f32[2], f32[2]) tuple(f, r)
}
)",
                "(f32[2], f32[2]) ({-1, -4}, {10, 20})",
                {literal("f32[2] {3, 4}"), literal("f32[2] {10, 20}")});
    const std::string fusion = R"(
HloModule m

fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] subtract(a, b)
}

ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT f = f32[2] fusion(a, b), kind=kLoop, calls=fused
}
)";
    std::string why = mismatch(fusion, "f32[2] {-7, -16}",
                               {literal("f32[2] {3, 4}"), literal("f32[2] {10, 20}")});
    QVERIFY2(why.empty(), why.c_str());
}

void TestEvaluator::asyncAndCopyWrappers() {
    EXPECT_EVAL(R"(
HloModule m

wrapped {
  p = f32[2] parameter(0)
  ROOT n = f32[2] negate(p)
}

ENTRY e {
  a = f32[2] constant({1, 2})
  s = ((f32[2]), f32[2], s32[]) async-start(a), calls=wrapped
  u = ((f32[2]), f32[2], s32[]) async-update(s)
  d = f32[2] async-done(u)
  cs = (f32[2], f32[2], u32[]) copy-start(d)
  cd = f32[2] copy-done(cs)
  ags = (f32[2], f32[2]) all-gather-start(cd), replica_groups={{0}}, dimensions={0}
  agd = f32[2] all-gather-done(ags)
  ars = f32[2] all-reduce-start(agd), replica_groups={}, to_apply=wrapped
  ard = f32[2] all-reduce-done(ars)
  t = (f32[2]) tuple(ard)
  b = (f32[2]) opt-barrier(t)
  ROOT r = f32[2] get-tuple-element(b), index=0
}
)",
                "f32[2] {-1, -2}");
}

void TestEvaluator::deadCodeIsSkipped() {
    // Only what the root depends on is evaluated.
    EXPECT_EVAL(wrapEntry(R"(
  t = token[] after-all()
  i = ((f32[2]), token[]) infeed(t)
  ROOT c = f32[] constant(1))"),
                "f32[] 1");
}

void TestEvaluator::dynamicUpdateSliceInLoop() {
    EXPECT_EVAL(R"(
HloModule m

cond {
  p = (s32[], s32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], s32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  b = s32[4] get-tuple-element(p), index=1
  sq = s32[] multiply(i, i)
  v = s32[1] broadcast(sq), dimensions={}
  b2 = s32[4] dynamic-update-slice(b, v, i)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], s32[4]) tuple(i2, b2)
}

ENTRY e {
  z = s32[] constant(0)
  buf = s32[4] broadcast(z), dimensions={}
  init = (s32[], s32[4]) tuple(z, buf)
  w = (s32[], s32[4]) while(init), condition=cond, body=body
  ROOT r = s32[4] get-tuple-element(w), index=1
}
)",
                "s32[4] {0, 1, 4, 9}");
}

void TestEvaluator::rngBitGeneratorThreeFry() {
    // Random123 known-answer vectors for threefry2x32-20.
    EXPECT_EVAL(wrapEntry(R"(
  s = u64[2] constant({0, 0})
  ROOT r = (u64[2], u32[2]) rng-bit-generator(s), algorithm=rng_three_fry)"),
                "(u64[2], u32[2]) ({0, 1}, {1797259609, 2579123966})");
    EXPECT_EVAL(wrapEntry(R"(
  s = u64[2] constant({247824715720788526, 9629550131187509896})
  ROOT r = (u64[2], u32[2]) rng-bit-generator(s), algorithm=rng_three_fry)"),
                "(u64[2], u32[2]) ({247824715720788526, 9629550131187509897}, "
                "{3297917596, 1212020640})");
}

void TestEvaluator::rngBitGeneratorPhilox() {
    // Random123 known-answer vectors for philox4x32-10; rng_default is
    // Philox on XLA's CPU and GPU backends.
    EXPECT_EVAL(wrapEntry(R"(
  s = u64[3] constant({0, 0, 0})
  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_default)"),
                "(u64[3], u32[4]) ({0, 1, 0}, {1713891541, 3781805453, 3159862348, 2600524760})");
    EXPECT_EVAL(wrapEntry(R"(
  s = u64[3] constant({2999170649027065890, 9629550131187509896, 247824715720788526})
  ROOT r = (u64[3], u32[2,2]) rng-bit-generator(s), algorithm=rng_philox)"),
                "(u64[3], u32[2,2]) ({2999170649027065890, 9629550131187509897, "
                "247824715720788526}, {{3513581065, 2499661035}, {1342301216, 605187745}})");
    // u64 outputs pair up consecutive 32-bit words.
    EXPECT_EVAL(wrapEntry(R"(
  s = u64[3] constant({0, 0, 0})
  ROOT r = (u64[3], u64[2]) rng-bit-generator(s), algorithm=rng_philox)"),
                "(u64[3], u64[2]) ({0, 1, 0}, {16242730742183356629, 11169168799798111308})");
}

void TestEvaluator::rngIsDeterministic() {
    const std::string text = wrapEntry(R"(
  lo = f32[] constant(2)
  hi = f32[] constant(3)
  ROOT r = f32[1000] rng(lo, hi), distribution=rng_uniform)");
    auto a = evaluateText(text);
    auto b = evaluateText(text);
    QVERIFY2(a.isOk(), a.status().toString().c_str());
    QVERIFY(b.isOk());
    QVERIFY(*a == *b);
    for (int64_t i = 0; i < a->elementCount(); ++i) {
        double v = a->getAsDouble(i);
        QVERIFY(v >= 2 && v < 3);
    }
}

void TestEvaluator::rngGetAndUpdateState() {
    // The state starts at the seed (42 by default) and advances by delta.
    EXPECT_EVAL(wrapEntry(R"(
  a = u64[2] rng-get-and-update-state(), delta=16
  b = u64[2] rng-get-and-update-state(), delta=16
  ROOT t = (u64[2], u64[2]) tuple(a, b))"),
                "(u64[2], u64[2]) ({42, 0}, {58, 0})");
}

void TestEvaluator::collectivesOnOneReplica() {
    const std::string add = R"(
HloModule m, replica_count=1

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";
    EXPECT_EVAL(add + R"(
ENTRY e {
  a = f32[2] constant({1, 2})
  r = f32[2] all-reduce(a), replica_groups={}, to_apply=add
  g = f32[2] all-gather(r), replica_groups={{0}}, dimensions={0}
  p = f32[2] collective-permute(g), source_target_pairs={{0,0}}
  q = f32[2] collective-permute(g), source_target_pairs={}
  ROOT t = (f32[2], f32[2]) tuple(p, q)
}
)",
                "(f32[2], f32[2]) ({1, 2}, {0, 0})");
    EXPECT_FAILURE(add + R"(
ENTRY e {
  a = f32[2] constant({1, 2})
  ROOT r = f32[2] all-reduce(a), replica_groups={{0,1}}, to_apply=add
}
)",
                   StatusCode::kUnimplemented, "%r");
}

void TestEvaluator::customCalls() {
    EXPECT_FAILURE(wrapEntry(R"(
  a = f32[2] constant({1, 2})
  ROOT c = f32[2] custom-call(a), custom_call_target="my_kernel")"),
                   StatusCode::kUnimplemented, "my_kernel");
    EXPECT_EVAL(R"(
HloModule m

gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}

ENTRY e {
  x = f32[2,5] constant({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}})
  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK", to_apply=gt
}
)",
                "(f32[2,2], s32[2,2]) ({{5, 4}, {9, 6}}, {{4, 2}, {0, 2}})");
    // JAX's GPU threefry kernel, checked against the Random123 vector.
    EXPECT_EVAL(wrapEntry(R"(
  k0 = u32[1] constant({320440878})
  k1 = u32[1] constant({57701188})
  x0 = u32[1] constant({608135816})
  x1 = u32[1] constant({2242054355})
  ROOT t = (u32[1], u32[1]) custom-call(k0, k1, x0, x1), custom_call_target="cu_threefry2x32")"),
                "(u32[1], u32[1]) ({3297917596}, {1212020640})");
    EXPECT_FAILURE(wrapEntry(R"(
  t = token[] after-all()
  ROOT i = ((f32[2]), token[]) infeed(t))"),
                   StatusCode::kUnimplemented, "%i");
}

void TestEvaluator::replicaId() {
    HloEvaluatorOptions options;
    options.replicaId = 3;
    options.partitionId = 1;
    auto result = evaluateText(wrapEntry(R"(
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p))"),
                               {}, options);
    QVERIFY2(result.isOk(), result.status().toString().c_str());
    QVERIFY(*result == literal("(u32[], u32[]) (3, 1)"));
}

void TestEvaluator::argumentChecks() {
    const std::string text = wrapEntry(R"(
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a))");
    auto wrongShape = evaluateText(text, {literal("f32[3] {1, 2, 3}")});
    QVERIFY(!wrongShape.isOk());
    QCOMPARE(wrongShape.status().code(), StatusCode::kInvalidArgument);
    auto wrongCount = evaluateText(text, {});
    QVERIFY(!wrongCount.isOk());
    auto ok = evaluateText(text, {literal("f32[2] {1, -0}")});
    QVERIFY2(ok.isOk(), ok.status().toString().c_str());
    QVERIFY(*ok == literal("f32[2] {-1, 0}"));
}

void TestEvaluator::cancellation() {
    std::atomic<bool> cancel{true};
    HloEvaluatorOptions options;
    options.cancel = &cancel;
    EXPECT_FAILURE(kWhileModule, StatusCode::kCancelled, "cancel", options);
}

QTEST_APPLESS_MAIN(TestEvaluator)
#include "tst_evaluator.moc"
