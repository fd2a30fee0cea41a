// Primitive types, opcodes and Status.
#include <QTest>

#include "core/ir/hlo_opcode.h"
#include "core/ir/primitive_type.h"
#include "core/support/status.h"

using namespace hloscope;

class TestTypes : public QObject {
    Q_OBJECT
private slots:
    void primitiveTypeNamesRoundTrip();
    void primitiveTypeWidths();
    void primitiveTypeClasses();
    void floatFormats();
    void unknownTypeName();
    void opcodeSpellingsRoundTrip();
    void opcodeArity();
    void opcodeClasses();
    void statusFormatting();
    void statusOrPropagation();
};

void TestTypes::primitiveTypeNamesRoundTrip() {
    QCOMPARE(kPrimitiveTypeCount, 36);  // 35 XLA element types + buffer
    for (int i = 1; i <= kPrimitiveTypeCount; ++i) {
        auto type = static_cast<PrimitiveType>(i);
        std::string_view name = primitive_util::name(type);
        QVERIFY(!name.empty());
        auto parsed = primitive_util::parse(name);
        QVERIFY2(parsed.has_value(), std::string(name).c_str());
        QCOMPARE(static_cast<int>(*parsed), i);
    }
    QCOMPARE(primitive_util::name(PrimitiveType::F8E4M3B11FNUZ), std::string_view("f8e4m3b11fnuz"));
    QCOMPARE(primitive_util::name(PrimitiveType::OPAQUE_TYPE), std::string_view("opaque"));
}

void TestTypes::primitiveTypeWidths() {
    QCOMPARE(primitive_util::bitWidth(PrimitiveType::PRED), 8);
    QCOMPARE(primitive_util::bitWidth(PrimitiveType::S4), 4);
    QCOMPARE(primitive_util::bitWidth(PrimitiveType::U2), 2);
    QCOMPARE(primitive_util::bitWidth(PrimitiveType::BF16), 16);
    QCOMPARE(primitive_util::bitWidth(PrimitiveType::C128), 128);
    QCOMPARE(primitive_util::bitWidth(PrimitiveType::F6E3M2FN), 6);
    QCOMPARE(primitive_util::byteWidth(PrimitiveType::S4), 1);
    QCOMPARE(primitive_util::byteWidth(PrimitiveType::F64), 8);
    QCOMPARE(primitive_util::byteWidth(PrimitiveType::C64), 8);
    QCOMPARE(primitive_util::byteWidth(PrimitiveType::TOKEN), 0);
    QCOMPARE(primitive_util::byteWidth(PrimitiveType::TUPLE), 0);
}

void TestTypes::primitiveTypeClasses() {
    QVERIFY(primitive_util::isFloatingPoint(PrimitiveType::F8E5M2));
    QVERIFY(primitive_util::isFloatingPoint(PrimitiveType::F4E2M1FN));
    QVERIFY(!primitive_util::isFloatingPoint(PrimitiveType::C64));
    QVERIFY(primitive_util::isComplex(PrimitiveType::C64));
    QVERIFY(primitive_util::isSignedInteger(PrimitiveType::S2));
    QVERIFY(!primitive_util::isSignedInteger(PrimitiveType::U8));
    QVERIFY(primitive_util::isUnsignedInteger(PrimitiveType::U64));
    QVERIFY(!primitive_util::isInteger(PrimitiveType::PRED));
    QVERIFY(primitive_util::isSubByte(PrimitiveType::U4));
    QVERIFY(!primitive_util::isSubByte(PrimitiveType::S8));
    QVERIFY(primitive_util::isArrayType(PrimitiveType::PRED));
    QVERIFY(!primitive_util::isArrayType(PrimitiveType::TOKEN));
    QVERIFY(!primitive_util::isArrayType(PrimitiveType::OPAQUE_TYPE));
    QCOMPARE(primitive_util::complexComponentType(PrimitiveType::C128), PrimitiveType::F64);
}

void TestTypes::floatFormats() {
    // Exponent + mantissa + sign bits add up to the width for IEEE-like types.
    for (PrimitiveType type : {PrimitiveType::F16, PrimitiveType::BF16, PrimitiveType::F32,
                               PrimitiveType::F64, PrimitiveType::F8E5M2, PrimitiveType::F8E4M3FN,
                               PrimitiveType::F8E3M4, PrimitiveType::F6E2M3FN,
                               PrimitiveType::F6E3M2FN, PrimitiveType::F4E2M1FN}) {
        QCOMPARE(1 + primitive_util::exponentBits(type) + primitive_util::mantissaBits(type),
                 primitive_util::bitWidth(type));
    }
    // The unsigned exponent-only scale type has no sign bit.
    QCOMPARE(primitive_util::exponentBits(PrimitiveType::F8E8M0FNU), 8);
    QCOMPARE(primitive_util::mantissaBits(PrimitiveType::F8E8M0FNU), 0);
}

void TestTypes::unknownTypeName() {
    QVERIFY(!primitive_util::parse("f31").has_value());
    QVERIFY(!primitive_util::parse("").has_value());
    QVERIFY(!primitive_util::parse("F32").has_value());  // names are lower case
}

void TestTypes::opcodeSpellingsRoundTrip() {
    QCOMPARE(kHloOpcodeCount, 136);
    for (int i = 0; i < kHloOpcodeCount; ++i) {
        auto opcode = static_cast<HloOpcode>(i);
        auto parsed = stringToHloOpcode(hloOpcodeString(opcode));
        QVERIFY2(parsed.has_value(), std::string(hloOpcodeString(opcode)).c_str());
        QCOMPARE(static_cast<int>(*parsed), i);
    }
    QCOMPARE(hloOpcodeString(HloOpcode::kExp), std::string_view("exponential"));
    QCOMPARE(hloOpcodeString(HloOpcode::kClz), std::string_view("count-leading-zeros"));
    QVERIFY(!stringToHloOpcode("exp").has_value());
    QVERIFY(!stringToHloOpcode("").has_value());
}

void TestTypes::opcodeArity() {
    QCOMPARE(hloOpcodeArity(HloOpcode::kAdd), std::optional<int>(2));
    QCOMPARE(hloOpcodeArity(HloOpcode::kSelect), std::optional<int>(3));
    QCOMPARE(hloOpcodeArity(HloOpcode::kParameter), std::optional<int>(0));
    QCOMPARE(hloOpcodeArity(HloOpcode::kBatchNormGrad), std::optional<int>(5));
    QVERIFY(!hloOpcodeArity(HloOpcode::kTuple).has_value());
    QVERIFY(!hloOpcodeArity(HloOpcode::kReduce).has_value());
}

void TestTypes::opcodeClasses() {
    QVERIFY(hloOpcodeIsElementwiseUnary(HloOpcode::kTanh));
    QVERIFY(!hloOpcodeIsElementwiseUnary(HloOpcode::kAdd));
    QVERIFY(hloOpcodeIsElementwiseBinary(HloOpcode::kPower));
    QVERIFY(hloOpcodeIsElementwise(HloOpcode::kSelect));
    QVERIFY(!hloOpcodeIsElementwise(HloOpcode::kDot));
    QVERIFY(hloOpcodeIsBinaryCommutative(HloOpcode::kMultiply));
    QVERIFY(!hloOpcodeIsBinaryCommutative(HloOpcode::kSubtract));
    QVERIFY(hloOpcodeIsAsync(HloOpcode::kAsyncDone));
    QVERIFY(hloOpcodeIsCollective(HloOpcode::kAllReduce));
    QVERIFY(hloOpcodeHasSideEffect(HloOpcode::kOutfeed));
    QVERIFY(!hloOpcodeHasSideEffect(HloOpcode::kAdd));
}

void TestTypes::statusFormatting() {
    Status ok;
    QVERIFY(ok.isOk());
    QCOMPARE(ok.toString(), std::string("ok"));
    Status located(StatusCode::kInvalidArgument, "expected ']'", SourceLocation{"m.hlo", 3, 14});
    QCOMPARE(located.toString(), std::string("m.hlo:3:14: error: expected ']'"));
    Status plain = failedPrecondition("%add.1: shape mismatch");
    QCOMPARE(plain.toString(), std::string("error: %add.1: shape mismatch"));
    QCOMPARE(plain.withContext("in computation main").message(),
             std::string("in computation main: %add.1: shape mismatch"));
    QCOMPARE(located.code(), StatusCode::kInvalidArgument);
}

namespace {
StatusOr<int> half(int x) {
    if (x % 2 != 0) return invalidArgument(std::to_string(x) + " is odd");
    return x / 2;
}
StatusOr<int> quarter(int x) {
    HLO_ASSIGN_OR_RETURN(int h, half(x));
    HLO_ASSIGN_OR_RETURN(int q, half(h));
    return q;
}
Status checkQuarter(int x) {
    HLO_RETURN_IF_ERROR(quarter(x).status());
    return Status::ok();
}
}  // namespace

void TestTypes::statusOrPropagation() {
    auto good = quarter(12);
    QVERIFY(good.isOk());
    QCOMPARE(*good, 3);
    auto bad = quarter(6);
    QVERIFY(!bad.isOk());
    QCOMPARE(bad.status().message(), std::string("3 is odd"));
    QVERIFY(checkQuarter(8).isOk());
    QCOMPARE(checkQuarter(10).message(), std::string("5 is odd"));
}

QTEST_APPLESS_MAIN(TestTypes)
#include "tst_types.moc"
