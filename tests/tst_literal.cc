// Literals: storage and access, convert semantics, text printing and
// parsing, JSON and random literals. The narrow float formats themselves are
// tested in tst_float_types.cc.
#include <QTest>
#include <bit>
#include <cmath>
#include <limits>

#include "core/ir/float_types.h"
#include "core/ir/literal.h"

using namespace hloscope;
using PT = PrimitiveType;

namespace {

const PT kNarrowTypes[] = {PT::F16,      PT::BF16,          PT::F8E5M2,     PT::F8E4M3,
                           PT::F8E4M3FN, PT::F8E4M3B11FNUZ, PT::F8E5M2FNUZ, PT::F8E4M3FNUZ,
                           PT::F8E3M4,   PT::F8E8M0FNU,     PT::F6E2M3FN,   PT::F6E3M2FN,
                           PT::F4E2M1FN};

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::string typeName(PT type) { return std::string(primitive_util::name(type)); }

Shape arrayShape(PT type, std::vector<int64_t> dims) {
    return Shape::makeArray(type, std::move(dims));
}

std::string valueText(PT type, double value) {
    Literal literal(Shape::makeScalar(type));
    literal.setFromDouble(0, value);
    return literal.valueToString();
}

Literal parseOrFail(std::string_view text) {
    StatusOr<Literal> literal = Literal::parse(text);
    if (!literal.isOk()) {
        qWarning("parse(%s) failed: %s", std::string(text).c_str(),
                 literal.status().toString().c_str());
        return Literal();
    }
    return std::move(literal).value();
}

Literal parseValueOrFail(std::string_view text, const Shape& shape) {
    StatusOr<Literal> literal = Literal::parseValue(text, shape);
    if (!literal.isOk()) {
        qWarning("parseValue(%s) failed: %s", std::string(text).c_str(),
                 literal.status().toString().c_str());
        return Literal();
    }
    return std::move(literal).value();
}

}  // namespace

class TestLiteral : public QObject {
    Q_OBJECT
private slots:
    // Literal storage and access.
    void construction();
    void copyOnWrite();
    void tuples();
    void getAndSet();
    void subByteIntegersWrap();
    void equality();

    // convert.
    void convertFloatToInt();
    void convertIntToInt();
    void convertPredAndComplex();
    void convertNarrowFloats();

    // Text.
    void printScalars();
    void printShortestFloats();
    void printArrays();
    void printTuples();
    void textRoundTripEveryType();
    void textRoundTripSpecialValues();
    void parseCorpusForms();
    void parseShapePrefixes();
    void parseErrors();

    // JSON.
    void jsonFormat();
    void jsonRoundTrip();
    void jsonErrors();

    // Random.
    void randomIsDeterministic();
    void randomRanges();
};

// ---------------------------------------------------------------------------
// Literal storage and access.

void TestLiteral::construction() {
    Literal invalid;
    QVERIFY(!invalid.isValid());

    Literal zeros(arrayShape(PT::F32, {2, 3}));
    QVERIFY(zeros.isValid());
    QCOMPARE(zeros.elementCount(), int64_t{6});
    QCOMPARE(zeros.sizeInBytes(), int64_t{24});
    for (float v : zeros.data<float>()) QCOMPARE(v, 0.0f);

    QCOMPARE(Literal(arrayShape(PT::BF16, {5})).sizeInBytes(), int64_t{10});
    QCOMPARE(Literal(arrayShape(PT::S4, {5})).sizeInBytes(), int64_t{5});  // one byte each
    QCOMPARE(Literal(arrayShape(PT::C128, {2})).sizeInBytes(), int64_t{32});
    QCOMPARE(Literal(arrayShape(PT::F32, {0, 4})).elementCount(), int64_t{0});

    Shape dynamic = arrayShape(PT::S32, {4});
    dynamic.setDynamicDimension(0, true);
    QCOMPARE(Literal(dynamic).elementCount(), int64_t{4});  // the bound

    Literal scalar = Literal::scalar(PT::F16, 1.5);
    QCOMPARE(scalar.getAsDouble(0), 1.5);
    Literal vec = Literal::vector<int>(PT::S32, {1, 2, 3});
    QCOMPARE(vec.toString(), std::string("s32[3] {1, 2, 3}"));
    QCOMPARE(vec.linearIndex(std::vector<int64_t>{2}), int64_t{2});
    QCOMPARE(zeros.linearIndex(std::vector<int64_t>{1, 2}), int64_t{5});

    // Shapes without element storage (buffer) hold nothing.
    QCOMPARE(Literal(Shape::makeBuffer(arrayShape(PT::F32, {2}))).elementCount(), int64_t{0});

    Literal token(Shape::makeToken());
    QVERIFY(token.isValid());
    QCOMPARE(token.sizeInBytes(), int64_t{0});
}

void TestLiteral::copyOnWrite() {
    Literal a = Literal::vector<float>(PT::F32, {1, 2, 3});
    Literal b = a;
    QCOMPARE(std::as_const(a).untypedData(), std::as_const(b).untypedData());  // shared
    b.data<float>()[0] = 10;
    QVERIFY(std::as_const(a).untypedData() != std::as_const(b).untypedData());
    QCOMPARE(a.data<float>()[0], 1.0f);
    QCOMPARE(b.data<float>()[0], 10.0f);
    // A sole owner writes in place.
    const void* before = std::as_const(b).untypedData();
    b.setFromDouble(1, 5);
    QCOMPARE(std::as_const(b).untypedData(), before);

    Literal tuple = Literal::makeTuple({a, b});
    Literal tupleCopy = tuple;
    tupleCopy.mutableTupleElements()[0].setFromDouble(0, 7);
    QCOMPARE(tuple.tupleElement(0).getAsDouble(0), 1.0);
    QCOMPARE(tupleCopy.tupleElement(0).getAsDouble(0), 7.0);
}

void TestLiteral::tuples() {
    Shape shape = Shape::makeTuple(
        {arrayShape(PT::F32, {2}), Shape::makeScalar(PT::PRED), Shape::makeTuple({})});
    Literal literal(shape);
    QVERIFY(literal.isTuple());
    QCOMPARE(literal.tupleElements().size(), size_t{3});
    QCOMPARE(literal.tupleElement(0).elementCount(), int64_t{2});
    QVERIFY(literal.tupleElement(2).isTuple());

    Literal made =
        Literal::makeTuple({Literal::scalar(PT::S8, 3), Literal::vector<double>(PT::F64, {1})});
    QCOMPARE(made.shape().tupleCount(), int64_t{2});
    QCOMPARE(made.shape().tupleShape(0).elementType(), PT::S8);
}

void TestLiteral::getAndSet() {
    Literal s32(arrayShape(PT::S32, {6}));
    s32.setFromDouble(0, 3.7);
    s32.setFromDouble(1, -3.7);
    s32.setFromDouble(2, kNaN);
    s32.setFromDouble(3, 1e20);
    s32.setFromDouble(4, -kInf);
    s32.setFromDouble(5, 2147483647.5);
    QCOMPARE(s32.data<int32_t>()[0], 3);
    QCOMPARE(s32.data<int32_t>()[1], -3);
    QCOMPARE(s32.data<int32_t>()[2], 0);
    QCOMPARE(s32.data<int32_t>()[3], std::numeric_limits<int32_t>::max());
    QCOMPARE(s32.data<int32_t>()[4], std::numeric_limits<int32_t>::min());
    QCOMPARE(s32.data<int32_t>()[5], std::numeric_limits<int32_t>::max());

    Literal u8(arrayShape(PT::U8, {3}));
    u8.setFromDouble(0, -5);
    u8.setFromDouble(1, 300);
    u8.setFromDouble(2, 254.9);
    QCOMPARE(u8.data<uint8_t>()[0], uint8_t{0});
    QCOMPARE(u8.data<uint8_t>()[1], uint8_t{255});
    QCOMPARE(u8.data<uint8_t>()[2], uint8_t{254});

    Literal f32(arrayShape(PT::F32, {4}));
    f32.setFromDouble(0, kNaN);
    f32.setFromDouble(1, kInf);
    f32.setFromDouble(2, -1.5);
    f32.setFromInt64(3, 16777217);  // rounds to nearest even
    QCOMPARE(f32.getAsInt64(0), int64_t{0});
    QCOMPARE(f32.getAsInt64(1), std::numeric_limits<int64_t>::max());
    QCOMPARE(f32.getAsInt64(2), int64_t{-1});
    QCOMPARE(f32.getAsUint64(2), uint64_t{0});
    QCOMPARE(f32.getAsDouble(3), 16777216.0);
    QCOMPARE(f32.getAsComplex(2), std::complex<double>(-1.5, 0));

    Literal u64(arrayShape(PT::U64, {1}));
    u64.setFromInt64(0, -1);
    QCOMPARE(u64.getAsUint64(0), std::numeric_limits<uint64_t>::max());
    QCOMPARE(u64.getAsInt64(0), int64_t{-1});

    Literal pred(arrayShape(PT::PRED, {3}));
    pred.setFromInt64(0, 5);
    pred.setFromDouble(1, kNaN);  // NaN != 0
    pred.setFromDouble(2, 0.0);
    QCOMPARE(pred.data<bool>()[0], true);
    QCOMPARE(pred.data<bool>()[1], true);
    QCOMPARE(pred.data<bool>()[2], false);
    QCOMPARE(pred.getAsInt64(0), int64_t{1});

    Literal c64(arrayShape(PT::C64, {1}));
    c64.setFromComplex(0, {1.5, -2});
    QCOMPARE(c64.getAsComplex(0), std::complex<double>(1.5, -2));
    QCOMPARE(c64.getAsDouble(0), 1.5);
    c64.setFromDouble(0, 4);
    QCOMPARE(c64.data<std::complex<float>>()[0], std::complex<float>(4, 0));

    // Integers into narrow floats round once (2^60 + 2^52 + 1 is above the bf16 tie).
    Literal bf16(arrayShape(PT::BF16, {1}));
    bf16.setFromInt64(0, (int64_t{1} << 60) + (int64_t{1} << 52) + 1);
    QCOMPARE(bf16.getAsDouble(0), 0x1p60 + 0x1p53);
    bf16.setFromDouble(0, 0.1);
    QCOMPARE(bf16.data<BFloat16>()[0].bits, uint16_t{0x3DCD});
}

void TestLiteral::subByteIntegersWrap() {
    Literal s4(arrayShape(PT::S4, {4}));
    s4.setFromInt64(0, 9);   // 0b1001 -> -7
    s4.setFromInt64(1, -9);  // -> 7
    s4.setFromInt64(2, 7);
    s4.setFromInt64(3, -8);
    QCOMPARE(s4.getAsInt64(0), int64_t{-7});
    QCOMPARE(s4.getAsInt64(1), int64_t{7});
    QCOMPARE(s4.getAsInt64(2), int64_t{7});
    QCOMPARE(s4.getAsInt64(3), int64_t{-8});
    Literal u4(arrayShape(PT::U4, {2}));
    u4.setFromInt64(0, 17);
    u4.setFromInt64(1, -1);
    QCOMPARE(u4.getAsInt64(0), int64_t{1});
    QCOMPARE(u4.getAsInt64(1), int64_t{15});
    Literal s2(arrayShape(PT::S2, {2}));
    s2.setFromInt64(0, 2);
    s2.setFromDouble(1, 100);  // float -> int saturates at the sub-byte bound
    QCOMPARE(s2.getAsInt64(0), int64_t{-2});
    QCOMPARE(s2.getAsInt64(1), int64_t{1});
    Literal u1(arrayShape(PT::U1, {2}));
    u1.setFromInt64(0, 3);
    u1.setFromDouble(1, -3);
    QCOMPARE(u1.getAsInt64(0), int64_t{1});
    QCOMPARE(u1.getAsInt64(1), int64_t{0});
    Literal s1(arrayShape(PT::S1, {1}));
    s1.setFromInt64(0, 1);
    QCOMPARE(s1.getAsInt64(0), int64_t{-1});
}

void TestLiteral::equality() {
    Literal a = Literal::vector<double>(PT::F32, {1, kNaN});
    Literal b = Literal::vector<double>(PT::F32, {1, kNaN});
    QVERIFY(a == b);  // same NaN bits
    Literal zero = Literal::vector<double>(PT::F32, {0.0});
    Literal negZero = Literal::vector<double>(PT::F32, {-0.0});
    QVERIFY(zero != negZero);
    QVERIFY(Literal::vector<int>(PT::S32, {1}) != Literal::vector<int>(PT::S64, {1}));
    QVERIFY(Literal::vector<int>(PT::S32, {1, 2}) != Literal::vector<int>(PT::S32, {1, 3}));
    // Dimensions matter, layouts do not.
    Literal rowMajor(Shape::makeArrayWithLayout(PT::F32, {2, 3}, {1, 0}));
    Literal colMajor(Shape::makeArrayWithLayout(PT::F32, {2, 3}, {0, 1}));
    Literal transposed(arrayShape(PT::F32, {3, 2}));
    QVERIFY(rowMajor == colMajor);
    QVERIFY(rowMajor != transposed);
    // Tuples compare element-wise.
    QVERIFY(Literal::makeTuple({a, zero}) == Literal::makeTuple({b, zero}));
    QVERIFY(Literal::makeTuple({a, zero}) != Literal::makeTuple({a, negZero}));
    QVERIFY(Literal::makeTuple({a}) != Literal::makeTuple({a, a}));
    QVERIFY(Literal() == Literal());
}

// ---------------------------------------------------------------------------
// convert.

void TestLiteral::convertFloatToInt() {
    Literal f = Literal::vector<double>(PT::F32, {kNaN, 3e9, -3e9, 2.5, -2.5, kInf, -0.0});
    StatusOr<Literal> s = f.convert(PT::S32);
    QVERIFY(s.isOk());
    QCOMPARE(s->toString(),
             std::string("s32[7] {0, 2147483647, -2147483648, 2, -2, 2147483647, 0}"));
    StatusOr<Literal> u = f.convert(PT::U8);
    QVERIFY(u.isOk());
    QCOMPARE(u->toString(), std::string("u8[7] {0, 255, 0, 2, 0, 255, 0}"));
    StatusOr<Literal> s64 = Literal::vector<double>(PT::F64, {1e19, -1e19}).convert(PT::S64);
    QCOMPARE(s64->toString(), std::string("s64[2] {9223372036854775807, -9223372036854775808}"));
    StatusOr<Literal> u64 = Literal::vector<double>(PT::F64, {1e20, 1.8e19}).convert(PT::U64);
    QCOMPARE(u64->toString(), std::string("u64[2] {18446744073709551615, 18000000000000000000}"));
    StatusOr<Literal> fromBf16 =
        Literal::vector<double>(PT::BF16, {kNaN, -1e30, 7.9}).convert(PT::S4);
    QCOMPARE(fromBf16->toString(), std::string("s4[3] {0, -8, 7}"));
}

void TestLiteral::convertIntToInt() {
    Literal s = Literal::vector<int64_t>(PT::S32, {300, -1, -129, 65536 + 5});
    QCOMPARE(s.convert(PT::S8)->toString(), std::string("s8[4] {44, -1, 127, 5}"));
    QCOMPARE(s.convert(PT::U8)->toString(), std::string("u8[4] {44, 255, 127, 5}"));
    QCOMPARE(s.convert(PT::U16)->toString(), std::string("u16[4] {300, 65535, 65407, 5}"));
    QCOMPARE(s.convert(PT::S4)->toString(), std::string("s4[4] {-4, -1, -1, 5}"));
    QCOMPARE(s.convert(PT::U2)->toString(), std::string("u2[4] {0, 3, 3, 1}"));
    Literal u = Literal::vector<uint64_t>(PT::U64, {std::numeric_limits<uint64_t>::max()});
    QCOMPARE(u.convert(PT::S64)->toString(), std::string("s64[1] {-1}"));
    QCOMPARE(u.convert(PT::F32)->getAsDouble(0), 0x1p64);
    // Same type: a copy.
    QVERIFY(*s.convert(PT::S32) == s);
    // Layout is kept, sub-byte element size is dropped.
    Shape packed = Shape::makeArrayWithLayout(PT::S4, {2}, {0});
    packed.mutableLayout().setElementSizeInBits(4);
    StatusOr<Literal> widened = Literal(packed).convert(PT::S8);
    QVERIFY(widened->shape().hasLayout());
    QCOMPARE(widened->shape().layout().elementSizeInBits(), int64_t{0});
}

void TestLiteral::convertPredAndComplex() {
    Literal s = Literal::vector<int>(PT::S32, {0, 5, -1});
    QCOMPARE(s.convert(PT::PRED)->toString(), std::string("pred[3] {0, 1, 1}"));
    Literal f = Literal::vector<double>(PT::F32, {0.0, -0.0, 0.5, kNaN});
    QCOMPARE(f.convert(PT::PRED)->toString(), std::string("pred[4] {0, 0, 1, 1}"));
    Literal p = *s.convert(PT::PRED);
    QCOMPARE(p.convert(PT::F32)->toString(), std::string("f32[3] {0, 1, 1}"));
    QCOMPARE(p.convert(PT::S8)->toString(), std::string("s8[3] {0, 1, 1}"));
    // Real -> complex: imaginary part 0. Complex -> complex keeps both.
    Literal c = *Literal::vector<double>(PT::F32, {1.5, -2}).convert(PT::C64);
    QCOMPARE(c.toString(), std::string("c64[2] {(1.5, 0), (-2, 0)}"));
    QCOMPARE(c.convert(PT::C128)->toString(), std::string("c128[2] {(1.5, 0), (-2, 0)}"));
    QCOMPARE(s.convert(PT::C128)->toString(), std::string("c128[3] {(0, 0), (5, 0), (-1, 0)}"));
    // Complex -> real is not a valid convert (as in XLA).
    StatusOr<Literal> bad = c.convert(PT::F32);
    QVERIFY(!bad.isOk());
    QCOMPARE(bad.status().code(), StatusCode::kUnimplemented);
    QVERIFY(!Literal::makeTuple({}).convert(PT::F32).isOk());
    QVERIFY(!s.convert(PT::TUPLE).isOk());
}

void TestLiteral::convertNarrowFloats() {
    // f64 -> bf16 rounds once.
    Literal d = Literal::vector<double>(PT::F64, {1 + 0x1p-8 + 0x1p-30});
    QCOMPARE(d.convert(PT::BF16)->data<BFloat16>()[0].bits, uint16_t{0x3F81});
    // Narrow -> narrow via the exact value.
    Literal h = Literal::vector<double>(PT::F16, {65504, -0.0, kInf, 0.1});
    QCOMPARE(h.convert(PT::F8E4M3FN)->toString(), std::string("f8e4m3fn[4] {nan, -0, nan, 0.1}"));
    QCOMPARE(h.convert(PT::F8E5M2)->toString(), std::string("f8e5m2[4] {inf, -0, inf, 0.09}"));
    QCOMPARE(h.convert(PT::F32)->toString(), std::string("f32[4] {65504, -0, inf, 0.099975586}"));
    QCOMPARE(h.convert(PT::F8E4M3FNUZ)->toString(),
             std::string("f8e4m3fnuz[4] {-nan, 0, -nan, 0.1}"));
    QCOMPARE(h.convert(PT::F4E2M1FN)->toString(), std::string("f4e2m1fn[4] {6, -0, 6, 0}"));
    Literal i = Literal::vector<int>(PT::S32, {17, 19, 1000});
    QCOMPARE(i.convert(PT::F8E4M3FN)->toString(), std::string("f8e4m3fn[3] {16, 20, nan}"));
}

// ---------------------------------------------------------------------------
// Text.

void TestLiteral::printScalars() {
    QCOMPARE(Literal::scalar(PT::F32, 1.5).toString(), std::string("f32[] 1.5"));
    QCOMPARE(Literal::scalar(PT::PRED, 1).toString(), std::string("pred[] true"));
    QCOMPARE(Literal::scalar(PT::PRED, 0).valueToString(), std::string("false"));
    QCOMPARE(Literal::scalar(PT::S4, -8).valueToString(), std::string("-8"));
    QCOMPARE(Literal::scalar(PT::U64, -1).valueToString(), std::string("18446744073709551615"));
    QCOMPARE(Literal::scalar(PT::S64, std::numeric_limits<int64_t>::min()).valueToString(),
             std::string("-9223372036854775808"));
    Literal c(Shape::makeScalar(PT::C64));
    c.setFromComplex(0, {1, -2.5});
    QCOMPARE(c.toString(), std::string("c64[] (1, -2.5)"));
    QCOMPARE(valueText(PT::F32, kNaN), std::string("nan"));
    QCOMPARE(valueText(PT::F32, -kNaN), std::string("-nan"));
    QCOMPARE(valueText(PT::F64, kInf), std::string("inf"));
    QCOMPARE(valueText(PT::BF16, -kInf), std::string("-inf"));
    QCOMPARE(valueText(PT::F32, -0.0), std::string("-0"));
    QCOMPARE(valueText(PT::F8E4M3FN, kNaN), std::string("nan"));
    QCOMPARE(valueText(PT::F8E4M3FNUZ, kNaN), std::string("-nan"));  // 0x80 widens to -NaN
    QCOMPARE(Literal(Shape::makeToken()).valueToString(), std::string("token"));
    // NaN payloads print as XLA does.
    Literal payload(Shape::makeScalar(PT::BF16));
    payload.data<BFloat16>()[0] = BFloat16::fromBits(0xFF81);
    QCOMPARE(payload.valueToString(), std::string("-nan(0x1)"));
    Literal f32Payload(Shape::makeScalar(PT::F32));
    f32Payload.data<float>()[0] = std::bit_cast<float>(0x7F800003u);
    QCOMPARE(f32Payload.valueToString(), std::string("nan(0x3)"));
}

void TestLiteral::printShortestFloats() {
    QCOMPARE(valueText(PT::F32, 0.1f), std::string("0.1"));
    QCOMPARE(valueText(PT::F64, 0.1), std::string("0.1"));
    QCOMPARE(valueText(PT::F64, 0.1f), std::string("0.10000000149011612"));
    QCOMPARE(valueText(PT::F32, 100), std::string("100"));
    QCOMPARE(valueText(PT::F32, 123456), std::string("123456"));
    QCOMPARE(valueText(PT::F32, 1e6), std::string("1e+06"));
    QCOMPARE(valueText(PT::F32, 16777216), std::string("16777216"));
    QCOMPARE(valueText(PT::F32, 1e-5), std::string("1e-05"));
    QCOMPARE(valueText(PT::F32, 0.0001), std::string("0.0001"));
    QCOMPARE(valueText(PT::F32, 1.1920929e-07), std::string("1.1920929e-07"));
    QCOMPARE(valueText(PT::F32, std::numeric_limits<float>::max()), std::string("3.4028235e+38"));
    QCOMPARE(valueText(PT::F64, 1e300), std::string("1e+300"));
    QCOMPARE(valueText(PT::F64, 0x1p-509), std::string("5.966672584960166e-154"));
    QCOMPARE(valueText(PT::BF16, 0.1), std::string("0.1"));
    QCOMPARE(valueText(PT::BF16, 1008), std::string("1008"));  // integer digits kept
    QCOMPARE(valueText(PT::BF16, 3.14159), std::string("3.14"));
    QCOMPARE(valueText(PT::F16, 65504), std::string("65504"));
    QCOMPARE(valueText(PT::F16, 0x1p-24), std::string("6e-08"));
    QCOMPARE(valueText(PT::F8E4M3FN, 448), std::string("448"));
    QCOMPARE(valueText(PT::F8E5M2, 57344), std::string("6e+04"));
    QCOMPARE(valueText(PT::F8E8M0FNU, 1024), std::string("1e+03"));
    QCOMPARE(valueText(PT::F4E2M1FN, 1.5), std::string("1.5"));
}

void TestLiteral::printArrays() {
    auto iota = [](PT type, std::vector<int64_t> dims) {
        Literal literal(arrayShape(type, std::move(dims)));
        for (int64_t i = 0; i < literal.elementCount(); ++i) literal.setFromInt64(i, i + 1);
        return literal;
    };
    QCOMPARE(iota(PT::F32, {3}).toString(), std::string("f32[3] {1, 2, 3}"));
    QCOMPARE(iota(PT::F32, {2, 2}).toString(), std::string("f32[2,2] { { 1, 2 }, { 3, 4 } }"));
    QCOMPARE(iota(PT::F32, {1, 1}).valueToString(), std::string("{ {1} }"));
    QCOMPARE(iota(PT::F32, {2, 1, 2}).valueToString(),
             std::string("{ { { 1, 2 } }, { { 3, 4 } } }"));
    QCOMPARE(iota(PT::F32, {1, 1, 1, 1}).valueToString(),
             std::string("{ { /*i0=0*/ { /*i1=0*/ {1} } } }"));
    QCOMPARE(
        iota(PT::S8, {2, 1, 1, 2}).valueToString(),
        std::string("{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } }, { /*i0=1*/ { /*i1=0*/ { 3, 4 } } } }"));
    QCOMPARE(iota(PT::F32, {0}).valueToString(), std::string("{}"));
    QCOMPARE(iota(PT::F32, {2, 0}).valueToString(), std::string("{ {}, {} }"));
    QCOMPARE(iota(PT::F32, {0, 2}).valueToString(), std::string("{  }"));
    // No elements but 1.5e9 brace groups before the zero dimension (a fuzz finding: printing
    // it did not end): elided, and it reads back as the same empty array.
    const Literal empty = iota(PT::S32, {5, 5, 5, 55, 55, 5, 55, 5, 3, 0, 4});
    QCOMPARE(empty.valueToString(), std::string("{...}"));
    const Literal back = parseOrFail(empty.toString());
    QCOMPARE(back.shape(), empty.shape());
    QCOMPARE(back.toString(), empty.toString());
    Literal pred = Literal::vector<int>(PT::PRED, {1, 0, 1});
    QCOMPARE(pred.toString(), std::string("pred[3] {1, 0, 1}"));
    Literal c(arrayShape(PT::C128, {2}));
    c.setFromComplex(1, {kNaN, -kInf});
    QCOMPARE(c.valueToString(), std::string("{(0, 0), (nan, -inf)}"));
    // Dynamic shapes print their bounds and all bounded elements.
    Shape dynamic = arrayShape(PT::S32, {2});
    dynamic.setDynamicDimension(0, true);
    QCOMPARE(Literal(dynamic).toString(), std::string("s32[<=2] {0, 0}"));
}

void TestLiteral::printTuples() {
    Literal t =
        Literal::makeTuple({Literal::scalar(PT::F32, 1.5), Literal::vector<int>(PT::S32, {1, 2})});
    QCOMPARE(t.valueToString(), std::string("( 1.5, {1, 2} )"));
    QCOMPARE(t.toString(), std::string("(f32[], s32[2]) ( 1.5, {1, 2} )"));
    QCOMPARE(Literal::makeTuple({}).valueToString(), std::string("(  )"));
    Literal nested = Literal::makeTuple({t, Literal(Shape::makeToken())});
    QCOMPARE(nested.valueToString(), std::string("( ( 1.5, {1, 2} ), token )"));
    QCOMPARE(Literal().toString(), std::string("invalid"));
}

void TestLiteral::textRoundTripEveryType() {
    for (int i = 1; i <= kPrimitiveTypeCount; ++i) {
        const auto type = static_cast<PT>(i);
        if (!primitive_util::isArrayType(type) || primitive_util::bitWidth(type) == 0) continue;
        RandomLiteralOptions options;
        options.seed = static_cast<uint64_t>(i);
        options.low = -100;
        options.high = 100;
        for (const Shape& shape : {Shape::makeScalar(type), arrayShape(type, {3, 2}),
                                   arrayShape(type, {2, 1, 3, 2}), arrayShape(type, {0})}) {
            Literal literal = makeRandomLiteral(shape, options);
            const std::string text = literal.toString();
            Literal back = parseOrFail(text);
            QVERIFY2(back == literal, text.c_str());
            Literal value = parseValueOrFail(literal.valueToString(), shape);
            QVERIFY2(value == literal, text.c_str());
        }
    }
    Shape tupleShape = Shape::makeTuple({arrayShape(PT::BF16, {2, 2}), Shape::makeScalar(PT::C64),
                                         Shape::makeTuple({Shape::makeScalar(PT::PRED)})});
    Literal tuple = makeRandomLiteral(tupleShape, {});
    QVERIFY2(parseOrFail(tuple.toString()) == tuple, tuple.toString().c_str());
    QVERIFY(parseValueOrFail(tuple.valueToString(), tupleShape) == tuple);
}

void TestLiteral::textRoundTripSpecialValues() {
    for (PT type : {PT::F16, PT::BF16, PT::F32, PT::F64, PT::F8E5M2, PT::F8E4M3, PT::F8E4M3FN,
                    PT::F8E4M3B11FNUZ, PT::F8E5M2FNUZ, PT::F8E4M3FNUZ, PT::F8E3M4, PT::F8E8M0FNU,
                    PT::F6E2M3FN, PT::F6E3M2FN, PT::F4E2M1FN}) {
        const double values[] = {0.0,
                                 -0.0,
                                 kInf,
                                 -kInf,
                                 kNaN,
                                 -kNaN,
                                 float_util::maxFinite(type),
                                 -float_util::maxFinite(type),
                                 float_util::minNormal(type),
                                 float_util::minNormal(type) / 2,
                                 1.0 / 3,
                                 -1e-3};
        Literal literal(arrayShape(type, {static_cast<int64_t>(std::size(values))}));
        for (size_t i = 0; i < std::size(values); ++i) {
            literal.setFromDouble(static_cast<int64_t>(i), values[i]);
        }
        const std::string text = literal.toString();
        QVERIFY2(parseOrFail(text) == literal, text.c_str());
    }
    // Every bit pattern of every 8-bit-or-narrower float type, through text.
    for (PT type : kNarrowTypes) {
        if (primitive_util::bitWidth(type) > 8) continue;
        Literal literal(arrayShape(type, {int64_t{1} << primitive_util::bitWidth(type)}));
        for (int64_t b = 0; b < literal.elementCount(); ++b) {
            literal.data<uint8_t>()[static_cast<size_t>(b)] = static_cast<uint8_t>(b);
        }
        const std::string text = literal.toString();
        Literal back = parseOrFail(text);
        QVERIFY(back.isValid());
        for (int64_t b = 0; b < literal.elementCount(); ++b) {
            const uint8_t got = back.data<uint8_t>()[static_cast<size_t>(b)];
            const bool nan = std::isnan(float_util::bitsToFloat(type, static_cast<uint32_t>(b)));
            QVERIFY2(got == b || (nan && std::isnan(float_util::bitsToFloat(type, got))),
                     (typeName(type) + " " + std::to_string(b)).c_str());
        }
    }
    // f16 and bf16 keep NaN payloads through text.
    Literal payloads(arrayShape(PT::F16, {3}));
    payloads.data<Half>()[0] = Half::fromBits(0x7C01);
    payloads.data<Half>()[1] = Half::fromBits(0xFE00);
    payloads.data<Half>()[2] = Half::fromBits(0x7D55);
    QCOMPARE(payloads.valueToString(), std::string("{nan(0x1), -nan, nan(0x155)}"));
    QVERIFY(parseOrFail(payloads.toString()) == payloads);
}

void TestLiteral::parseCorpusForms() {
    const Shape f32x2x2 = arrayShape(PT::F32, {2, 2});
    QCOMPARE(parseValueOrFail("{{1,2},{3,4}}", f32x2x2).valueToString(),
             std::string("{ { 1, 2 }, { 3, 4 } }"));
    QCOMPARE(parseValueOrFail("{ { /*i0=0*/ 1, 2 },\n { 3, 4 } }", f32x2x2).getAsDouble(3), 4.0);
    QCOMPARE(
        parseValueOrFail("{1e-05, -1.5E+2, .5, 2., +3}", arrayShape(PT::F64, {5})).valueToString(),
        std::string("{1e-05, -150, 0.5, 2, 3}"));
    QCOMPARE(parseValueOrFail("{nan, -nan, inf, -inf}", arrayShape(PT::F32, {4})).valueToString(),
             std::string("{nan, -nan, inf, -inf}"));
    QCOMPARE(parseValueOrFail("{-nan(0x7f), -nan(0x3f)}", arrayShape(PT::BF16, {2}))
                 .data<BFloat16>()[1]
                 .bits,
             uint16_t{0xFFBF});
    QCOMPARE(parseValueOrFail("18446744073709551615", Shape::makeScalar(PT::U64)).getAsUint64(0),
             std::numeric_limits<uint64_t>::max());
    QCOMPARE(parseValueOrFail("-9223372036854775808", Shape::makeScalar(PT::S64)).getAsInt64(0),
             std::numeric_limits<int64_t>::min());
    QCOMPARE(parseValueOrFail("{1, 0, true, false, 7}", arrayShape(PT::PRED, {5})).valueToString(),
             std::string("{1, 0, 1, 0, 1}"));
    QCOMPARE(parseValueOrFail("{(1, 2), (-inf, nan)}", arrayShape(PT::C128, {2})).valueToString(),
             std::string("{(1, 2), (-inf, nan)}"));
    QCOMPARE(parseValueOrFail("(1,0)", Shape::makeScalar(PT::C64)).getAsComplex(0),
             std::complex<double>(1, 0));
    QCOMPARE(parseValueOrFail("{{{(0,0),(1,1)}}}", arrayShape(PT::C64, {1, 1, 2})).getAsComplex(1),
             std::complex<double>(1, 1));
    QCOMPARE(parseValueOrFail("{}", arrayShape(PT::F32, {0})).elementCount(), int64_t{0});
    QCOMPARE(parseValueOrFail("{ { /*i0=0*/ }, { /*i0=1*/ } }", arrayShape(PT::F32, {2, 0}))
                 .elementCount(),
             int64_t{0});
    // Elided values read as zeros.
    Literal elided = parseValueOrFail("{...}", arrayShape(PT::F32, {3, 4}));
    QVERIFY(elided == Literal(arrayShape(PT::F32, {3, 4})));
    // A bare scalar for a non-scalar shape fills every element.
    QCOMPARE(parseValueOrFail("0.65", arrayShape(PT::F32, {2, 3})).valueToString(),
             std::string("{ { 0.65, 0.65, 0.65 }, { 0.65, 0.65, 0.65 } }"));
    // Tuples.
    Shape tupleShape = Shape::makeTuple({Shape::makeScalar(PT::F32), arrayShape(PT::F32, {4})});
    Literal tuple = parseValueOrFail("(1.0, {2.0, 3.0, 4.0, 5.0})", tupleShape);
    QCOMPARE(tuple.valueToString(), std::string("( 1, {2, 3, 4, 5} )"));
    Shape nestedShape = Shape::makeTuple({arrayShape(PT::F32, {2, 1}), arrayShape(PT::F32, {2})});
    QCOMPARE(parseValueOrFail("( { {1}, {2} }, {2, 42} )", nestedShape).valueToString(),
             std::string("( { {1}, {2} }, {2, 42} )"));
    QCOMPARE(parseValueOrFail("()", Shape::makeTuple({})).valueToString(), std::string("(  )"));
    // Sub-byte and narrow types.
    QCOMPARE(parseValueOrFail("{-8, 7}", arrayShape(PT::S4, {2})).valueToString(),
             std::string("{-8, 7}"));
    QCOMPARE(parseValueOrFail("{15, 0}", arrayShape(PT::U4, {2})).valueToString(),
             std::string("{15, 0}"));
    QCOMPARE(parseValueOrFail("{0.1001, 1e-06}", arrayShape(PT::BF16, {2})).valueToString(),
             std::string("{0.1, 1e-06}"));
    QCOMPARE(parseValueOrFail("{nan, 7, -nan}", arrayShape(PT::F8E4M3FN, {3})).data<uint8_t>()[2],
             uint8_t{0xFF});
    QCOMPARE(parseValueOrFail("{inf, 1}", arrayShape(PT::F8E4M3FN, {2})).data<uint8_t>()[0],
             uint8_t{0x7F});
}

void TestLiteral::parseShapePrefixes() {
    QCOMPARE(parseOrFail("f32[2] {1, 2}").toString(), std::string("f32[2] {1, 2}"));
    // '{0}' after the dimensions is a layout when a value follows it.
    Literal withLayout = parseOrFail("f32[1]{0} {5}");
    QVERIFY(withLayout.shape().hasLayout());
    QCOMPARE(withLayout.getAsDouble(0), 5.0);
    Literal noLayout = parseOrFail("f32[1] {0}");
    QVERIFY(!noLayout.shape().hasLayout());
    QCOMPARE(noLayout.getAsDouble(0), 0.0);
    QCOMPARE(parseOrFail("f32[2,2]{1,0:T(8,128)} {{1,2},{3,4}}").getAsDouble(2), 3.0);
    QCOMPARE(parseOrFail("s32[]{:T(128)} 7").getAsInt64(0), int64_t{7});
    QCOMPARE(parseOrFail("pred[] true").valueToString(), std::string("true"));
    // Dynamic dimensions.
    Literal dynamic = parseOrFail("f32[<=3] {1, 2, 3}");
    QVERIFY(dynamic.shape().isDynamicDimension(0));
    QCOMPARE(dynamic.elementCount(), int64_t{3});
    // Tuples: shape prefix, or XLA's shapeless form with shaped elements.
    Literal t1 = parseOrFail("(f32[], s32[2]) (1.5, {1, 2})");
    Literal t2 = parseOrFail("( f32[] 1.5, s32[2] {1, 2} )");
    Literal t3 = parseOrFail("(f32[], s32[2]{0}) ( f32[] 1.5, s32[2] {1, 2} )");
    QVERIFY(t1.isTuple());
    QVERIFY(t1 == t2);
    QVERIFY(t1 == t3);
    QCOMPARE(parseOrFail("token[] token").shape().isToken(), true);
}

void TestLiteral::parseErrors() {
    struct Case {
        const char* text;
        Shape shape;  // invalid: parse() with a shape prefix
        int line;
        int column;
        const char* message;
    };
    const Case cases[] = {
        {"{1, 2, 3}", arrayShape(PT::F32, {2}), 1, 8,
         "expected 2 elements on the minor-most dimension"},
        {"{1, 2}", arrayShape(PT::F32, {3}), 1, 6,
         "expected 3 elements in the []th element, but sees 2"},
        {"{ {1, 2}, {3} }", arrayShape(PT::F32, {2, 2}), 1, 13,
         "expected 2 elements in the [1]th element, but sees 1"},
        {"{ {1}, {2}, {3} }", arrayShape(PT::F32, {2, 1}), 1, 13,
         "expected 2 elements in the []th element, but sees more"},
        {"{{1}}", arrayShape(PT::F32, {1}), 1, 2, "expected nested array of rank 1"},
        {",", arrayShape(PT::F32, {2, 2}), 1, 1,
         "expected '{' to start an array value, but sees ','"},
        {"{1.5}", arrayShape(PT::S32, {1}), 1, 2, "expected an integer for primitive type s32"},
        {"true", Shape::makeScalar(PT::F32), 1, 1,
         "expected a floating-point value for primitive type f32"},
        {"300", Shape::makeScalar(PT::U8), 1, 1,
         "value 300 is out of range for literal's primitive type u8 namely [0, 255]"},
        {"-1", Shape::makeScalar(PT::U32), 1, 1, "out of range"},
        {"8", Shape::makeScalar(PT::S4), 1, 1, "namely [-8, 7]"},
        {"18446744073709551616", Shape::makeScalar(PT::U64), 1, 1, "too large"},
        {"70000", Shape::makeScalar(PT::F16), 1, 1,
         "value 70000 is out of range for literal's primitive type f16"},
        {"1e39", Shape::makeScalar(PT::F32), 1, 1, "out of range"},
        {"1e999", Shape::makeScalar(PT::F64), 1, 1, "out of range"},
        {"500", Shape::makeScalar(PT::F8E4M3FN), 1, 1, "out of range"},
        {"0", Shape::makeScalar(PT::F8E8M0FNU), 1, 1, "out of range"},
        {"{1, x}", arrayShape(PT::F32, {2}), 1, 5, "expected a floating-point value"},
        {"{1,\n 2,\n 3}", arrayShape(PT::F32, {2}), 3, 2, "minor-most dimension"},
        {"(1, 2)", Shape::makeScalar(PT::F32), 1, 1,
         "parentheses are only valid for complex values"},
        {"1", Shape::makeScalar(PT::C64), 1, 1, "expected a complex value (re, im)"},
        {"(1 2)", Shape::makeScalar(PT::C64), 1, 4,
         "expected ',' between the real and imaginary parts"},
        {"nan(0x1)", Shape::makeScalar(PT::F8E4M3FN), 1, 1, "does not support NaN payloads"},
        {"nan(0x80)", Shape::makeScalar(PT::BF16), 1, 1,
         "NaN payload nan(0x80) is out of range for bf16"},
        {"{1, 2", arrayShape(PT::F32, {2}), 1, 6, "unexpected end of literal"},
        {"{...}", Shape::makeScalar(PT::F32), 1, 1, "expected a floating-point value"},
        {"{ {...} }", arrayShape(PT::F32, {1, 1}), 1, 4,
         "'...' is only allowed at nesting level 1"},
        {"(1, 2, 3)", Shape::makeTuple({Shape::makeScalar(PT::F32), Shape::makeScalar(PT::F32)}), 1,
         8, "too many tuple elements"},
        {"(1)", Shape::makeTuple({Shape::makeScalar(PT::F32), Shape::makeScalar(PT::F32)}), 1, 3,
         "expected 2 tuple elements, got 1"},
        {"{1, 2} 3", arrayShape(PT::F32, {2}), 1, 8, "expected end of literal"},
        {"12abc", Shape::makeScalar(PT::S32), 1, 1, "expected an integer"},
        {"f32[2] {1, 2} extra", Shape(), 1, 15, "expected end of literal, got 'extra'"},
        {"q32[2] {1, 2}", Shape(), 1, 1, "unknown element type 'q32'"},
        {"f32[2 {1, 2}", Shape(), 1, 7, "expected ',' or ']' in dimensions"},
        {"{1, 2}", Shape(), 1, 1, "expected a shape"},
        {"f32[2,2]{1} {{1,2},{3,4}}", Shape(), 1, 9,
         "layout has 1 dimensions but the shape has rank 2"},
        {"f32[2]{1,0} {1, 2}", Shape(), 1, 13, "expected end of literal, got '{'"},
        {"(f32[], s32[]) (1)", Shape(), 1, 18, "expected 2 tuple elements, got 1"},
        {"(f32[] 1, s32[2] {1})", Shape(), 1, 20,
         "expected 2 elements in the []th element, but sees 1"},
        {"{...}", arrayShape(PT::F32, {1 << 20, 1 << 20}), 1, 1, "is too large"},
        {"f32[4611686018427387904,4] {...}", Shape(), 1, 28, "is too large"},
    };
    for (const Case& c : cases) {
        StatusOr<Literal> result =
            c.shape.isValid() ? Literal::parseValue(c.text, c.shape) : Literal::parse(c.text);
        QVERIFY2(!result.isOk(), c.text);
        const Status& status = result.status();
        QCOMPARE(status.code(), StatusCode::kInvalidArgument);
        QVERIFY2(status.location().has_value(), c.text);
        const std::string detail = std::string(c.text) + " -> " + status.toString();
        QVERIFY2(status.location()->line == c.line, detail.c_str());
        QVERIFY2(status.location()->column == c.column, detail.c_str());
        QVERIFY2(status.message().find(c.message) != std::string::npos, detail.c_str());
    }
    // Underflow is not an error: it reads as (signed) zero.
    QCOMPARE(parseValueOrFail("-1e-999", Shape::makeScalar(PT::F64)).valueToString(),
             std::string("-0"));
    QCOMPARE(parseValueOrFail("1e-50", Shape::makeScalar(PT::F32)).valueToString(),
             std::string("0"));
}

// ---------------------------------------------------------------------------
// JSON.

void TestLiteral::jsonFormat() {
    Literal f = Literal::vector<double>(PT::F32, {0.1, -kInf, kNaN, -0.0});
    QCOMPARE(literalToJson(f),
             std::string(R"j({"shape":"f32[4]{0}","values":[0.1,"-inf","nan",-0.0]})j"));
    Literal m(Shape::makeArrayWithLayout(PT::S32, {2, 2}, {1, 0}));
    m.setFromInt64(3, -4);
    QCOMPARE(literalToJson(m),
             std::string(R"j({"shape":"s32[2,2]{1,0}","values":[[0,0],[0,-4]]})j"));
    QCOMPARE(literalToJson(Literal::scalar(PT::PRED, 1)),
             std::string(R"j({"shape":"pred[]","values":true})j"));
    Literal c(Shape::makeScalar(PT::C64));
    c.setFromComplex(0, {1.5, kInf});
    QCOMPARE(literalToJson(c), std::string(R"j({"shape":"c64[]","values":[1.5,"inf"]})j"));
    QCOMPARE(literalToJson(Literal::scalar(PT::U64, -1)),
             std::string(R"j({"shape":"u64[]","values":18446744073709551615})j"));
    QCOMPARE(literalToJson(Literal::scalar(PT::BF16, 0.1)),
             std::string(R"j({"shape":"bf16[]","values":0.1})j"));
    Literal t = Literal::makeTuple({Literal::scalar(PT::S8, 3), Literal(Shape::makeToken())});
    QCOMPARE(
        literalToJson(t),
        std::string(
            R"j({"shape":"(s8[], token[])","elements":[{"shape":"s8[]","values":3},{"shape":"token[]"}]})j"));
}

void TestLiteral::jsonRoundTrip() {
    for (int i = 1; i <= kPrimitiveTypeCount; ++i) {
        const auto type = static_cast<PT>(i);
        if (!primitive_util::isArrayType(type) || primitive_util::bitWidth(type) == 0) continue;
        RandomLiteralOptions options;
        options.seed = static_cast<uint64_t>(100 + i);
        Literal literal =
            makeRandomLiteral(Shape::makeArrayWithLayout(type, {2, 3}, {1, 0}), options);
        StatusOr<Literal> back = literalFromJson(literalToJson(literal));
        QVERIFY2(back.isOk(), back.status().toString().c_str());
        QVERIFY2(*back == literal, literalToJson(literal).c_str());
        QCOMPARE(back->shape(), literal.shape());
    }
    Literal specials =
        Literal::vector<double>(PT::F64, {kInf, -kInf, kNaN, -0.0, 5e-324, 1.7976931348623157e308});
    QVERIFY(*literalFromJson(literalToJson(specials)) == specials);
    Shape tupleShape = Shape::makeTuple(
        {arrayShape(PT::C128, {2}), Shape::makeTuple({}), Shape::makeScalar(PT::S4)});
    Literal tuple = makeRandomLiteral(tupleShape, {});
    StatusOr<Literal> back = literalFromJson(literalToJson(tuple));
    QVERIFY(back.isOk());
    QVERIFY(*back == tuple);
    // Input may use 0/1 for pred and integral numbers for floats.
    StatusOr<Literal> lenient = literalFromJson(R"j({"shape": "pred[2]", "values": [1, false]})j");
    QVERIFY(lenient.isOk());
    QCOMPARE(lenient->valueToString(), std::string("{1, 0}"));
}

void TestLiteral::jsonErrors() {
    struct Case {
        const char* json;
        const char* message;
    };
    const Case cases[] = {
        {R"j({"shape": "f32[2]", "values": [1, "x"]})j",
         "at JSON path '/values/1': expected a number"},
        {R"j({"shape": "f32[2]", "values": [1]})j",
         "at JSON path '/values': expected an array of 2 elements"},
        {R"j({"shape": "f32[2,2]", "values": [[1, 2], 3]})j",
         "'/values/1': expected an array of 2 elements for dimension 1"},
        {R"j({"shape": "s8[1]", "values": [200]})j",
         "'/values/0': value 200 is out of range for s8"},
        {R"j({"shape": "u8[1]", "values": [-1]})j", "out of range for u8"},
        {R"j({"shape": "s32[1]", "values": [1.5]})j", "expected an integer for s32"},
        {R"j({"shape": "f16[1]", "values": [1e6]})j", "out of range for f16"},
        {R"j({"shape": "c64[1]", "values": [1]})j", "expected [re, im] for c64"},
        {R"j({"shape": "pred[]", "values": "yes"})j", "expected true or false for pred"},
        {R"j({"shape": "f32[2", "values": []})j", "'/shape': invalid shape \"f32[2\""},
        {R"j({"values": []})j", "at JSON path '(root)': expected a \"shape\" string"},
        {R"j([1, 2])j", "expected an object"},
        {R"j({"shape": "(f32[], f32[])", "elements": [{"shape": "f32[]", "values": 1}]})j",
         "'/elements': expected 2 elements, got 1"},
        {R"j({"shape": "(f32[])", "elements": [{"shape": "s32[]", "values": 1}]})j",
         "'/elements/0': element shape s32[] does not match"},
        {R"j({"shape": "f32[]"})j", "expected \"values\""},
        {R"j({"shape": "(f32[], u8[65536,65536,2])", "elements": []})j",
         "'/shape': a literal of shape (f32[], u8[65536,65536,2]) is too large"},
    };
    for (const Case& c : cases) {
        StatusOr<Literal> result = literalFromJson(c.json, "in.json");
        QVERIFY2(!result.isOk(), c.json);
        QCOMPARE(result.status().code(), StatusCode::kInvalidArgument);
        const std::string detail = std::string(c.json) + " -> " + result.status().toString();
        QVERIFY2(result.status().message().find(c.message) != std::string::npos, detail.c_str());
        QVERIFY2(result.status().toString().rfind("in.json: error: ", 0) == 0, detail.c_str());
    }
    // Syntax errors carry line and column.
    StatusOr<Literal> syntax =
        literalFromJson("{\"shape\": \"f32[]\",\n \"values\": ]}", "in.json");
    QVERIFY(!syntax.isOk());
    QVERIFY(syntax.status().location().has_value());
    QCOMPARE(syntax.status().location()->line, 2);
    QCOMPARE(syntax.status().location()->column, 12);
    QCOMPARE(syntax.status().location()->file, std::string("in.json"));
}

// ---------------------------------------------------------------------------
// Random.

void TestLiteral::randomIsDeterministic() {
    RandomLiteralOptions options;
    options.seed = 42;
    const Shape shape = arrayShape(PT::F32, {4});
    Literal a = makeRandomLiteral(shape, options);
    QVERIFY(a == makeRandomLiteral(shape, options));
    options.seed = 43;
    QVERIFY(a != makeRandomLiteral(shape, options));
    // Pinned values: the generator (splitmix64) must never change silently.
    const uint32_t expected[] = {0x3EF75CC9, 0xBF2E203A, 0xBEE2B663, 0xBE9F8C78};
    for (size_t i = 0; i < 4; ++i) {
        QCOMPARE(std::bit_cast<uint32_t>(a.data<float>()[i]), expected[i]);
    }
    options.seed = 42;
    QCOMPARE(makeRandomLiteral(arrayShape(PT::S32, {6}), options).valueToString(),
             std::string("{5, 2, -2, -3, 4, 8}"));
    QCOMPARE(makeRandomLiteral(arrayShape(PT::PRED, {8}), options).valueToString(),
             std::string("{1, 0, 0, 0, 0, 1, 0, 1}"));
    QCOMPARE(makeRandomLiteral(arrayShape(PT::BF16, {4}), options).valueToString(),
             std::string("{0.482, -0.68, -0.443, -0.312}"));
    Shape tupleShape = Shape::makeTuple({arrayShape(PT::U8, {3}), Shape::makeScalar(PT::C64)});
    QCOMPARE(makeRandomLiteral(tupleShape, options).valueToString(),
             std::string("( {13, 10, 6}, (-0.31161857, -0.92393965) )"));
}

void TestLiteral::randomRanges() {
    RandomLiteralOptions options;
    options.seed = 7;
    auto range = [&](PT type, double& lo, double& hi) {
        Literal literal = makeRandomLiteral(arrayShape(type, {2000}), options);
        lo = kInf;
        hi = -kInf;
        for (int64_t i = 0; i < literal.elementCount(); ++i) {
            lo = std::min(lo, literal.getAsDouble(i));
            hi = std::max(hi, literal.getAsDouble(i));
        }
    };
    double lo = 0;
    double hi = 0;
    range(PT::S32, lo, hi);
    QCOMPARE(lo, -8.0);
    QCOMPARE(hi, 8.0);
    range(PT::U16, lo, hi);
    QCOMPARE(lo, 0.0);
    QCOMPARE(hi, 16.0);
    range(PT::S4, lo, hi);
    QCOMPARE(lo, -8.0);
    QCOMPARE(hi, 7.0);
    range(PT::U2, lo, hi);
    QCOMPARE(lo, 0.0);
    QCOMPARE(hi, 3.0);
    range(PT::S1, lo, hi);
    QCOMPARE(lo, -1.0);
    QCOMPARE(hi, 0.0);
    range(PT::PRED, lo, hi);
    QCOMPARE(lo, 0.0);
    QCOMPARE(hi, 1.0);
    range(PT::F32, lo, hi);
    QVERIFY(lo >= -1 && lo < -0.99);
    QVERIFY(hi <= 1 && hi > 0.99);
    range(PT::F8E8M0FNU, lo, hi);
    QCOMPARE(lo, 1.0 / 16);
    QCOMPARE(hi, 16.0);
    options.low = 2;
    options.high = 3;
    range(PT::F64, lo, hi);
    QVERIFY(lo >= 2 && hi <= 3);
    range(PT::F8E4M3FN, lo, hi);
    QVERIFY(lo >= 2 && hi <= 3);
    Literal complex = makeRandomLiteral(arrayShape(PT::C128, {100}), options);
    for (int64_t i = 0; i < complex.elementCount(); ++i) {
        QVERIFY(complex.getAsComplex(i).real() >= 2 && complex.getAsComplex(i).imag() <= 3);
    }
}

QTEST_APPLESS_MAIN(TestLiteral)
#include "tst_literal.moc"
