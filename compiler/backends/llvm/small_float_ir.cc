// The f8, f6 and f4 formats in registers (Elemental, elemental_ir.h): values
// compute in f32 like f16/bf16 and are rounded to their format after every
// op; memory holds one byte per element (the format's bits in the low bits,
// as core's Literal stores them).
//
// Decoding reads a 256-entry table of core/float_types' own exact decodings
// (one per format and module). Encoding mirrors core/ir/float_types.cc's
// encode() operation for operation on integers: the source's significand
// and exponent, the quantum of the target at that magnitude, one round to
// nearest even (ties to even, into the subnormals too), the overflow rule
// and the special values of the format, whose bit patterns are taken from
// core's encoder itself (NaN, infinity, zeros, largest finite). The source
// may be f32 or f64, so f64 -> f8 rounds once, as the interpreter does.
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <limits>

#include "compiler/backends/llvm/elemental_ir.h"
#include "core/ir/float_types.h"

namespace hloscope::llvm_codegen {

using llvm::Value;

bool Elemental::isSmallFloat(PrimitiveType type) {
    return primitive_util::isF8Type(type) || primitive_util::isSubByteFloat(type);
}

Value* Elemental::decodeSmallFloat(PrimitiveType type, Value* bits) {
    const std::string name = "hloscope.decode." + std::string(primitive_util::name(type));
    llvm::GlobalVariable* table = m_module.getNamedGlobal(name);
    auto* arrayType = llvm::ArrayType::get(m_b.getFloatTy(), 256);
    if (!table) {
        std::vector<float> values;
        for (uint32_t i = 0; i < 256; ++i) values.push_back(float_util::bitsToFloat(type, i));
        table = new llvm::GlobalVariable(
            m_module, arrayType, true, llvm::GlobalValue::PrivateLinkage,
            llvm::ConstantDataArray::get(m_module.getContext(), values), name);
        table->setAlignment(llvm::Align(64));
    }
    Value* position = m_b.CreateZExt(bits, m_b.getInt64Ty());
    return m_b.CreateLoad(m_b.getFloatTy(),
                          m_b.CreateInBoundsGEP(arrayType, table, {m_b.getInt64(0), position}));
}

Value* Elemental::encodeSmallFloat(PrimitiveType type, Value* value) {
    llvm::Type* source = value->getType();
    const bool wide = source->isDoubleTy();
    const unsigned sourceBits = wide ? 64 : 32;
    const int64_t sourceMantissa = wide ? 52 : 23;
    const int64_t sourceBias = wide ? 1023 : 127;
    llvm::Type* integer = m_b.getIntNTy(sourceBits);
    llvm::Type* i64 = m_b.getInt64Ty();
    auto c = [&](int64_t v) { return m_b.getInt64(static_cast<uint64_t>(v)); };
    auto byte = [&](uint32_t v) { return m_b.getInt64(v); };

    // The format, as core encodes it.
    const int64_t mantissaBits = primitive_util::mantissaBits(type);
    const int64_t bias = 1 - std::ilogb(float_util::bitsToFloat(
                                 type, 1u << mantissaBits));  // smallest normal = 2^(1 - bias)
    const bool e8m0 = type == PrimitiveType::F8E8M0FNU;
    const uint32_t signBit = e8m0 ? 0u : 1u << (primitive_util::bitWidth(type) - 1);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const uint32_t nanPositive = float_util::floatToBits(type, nan);
    const uint32_t nanNegative = float_util::floatToBits(type, -nan);
    const uint32_t overflowPositive = float_util::floatToBits(type, inf);
    const uint32_t overflowNegative = float_util::floatToBits(type, -inf);
    const uint32_t zeroPositive = float_util::floatToBits(type, 0.0f);
    const uint32_t zeroNegative = float_util::floatToBits(type, -0.0f);
    const uint32_t maxFiniteBits = float_util::doubleToBits(type, float_util::maxFinite(type));

    Value* raw = m_b.CreateBitCast(value, integer);
    Value* negative = m_b.CreateICmpSLT(raw, llvm::ConstantInt::get(integer, 0));
    Value* magnitude = m_b.CreateZExt(
        m_b.CreateAnd(raw, llvm::ConstantInt::get(integer, ~(uint64_t{1} << (sourceBits - 1)))),
        i64);
    Value* exponentField = m_b.CreateLShr(magnitude, c(sourceMantissa));
    Value* mantissaField = m_b.CreateAnd(magnitude, c((int64_t{1} << sourceMantissa) - 1));
    Value* subnormal = m_b.CreateICmpEQ(exponentField, c(0));
    // |x| = significand * 2^exponent.
    Value* significand = m_b.CreateSelect(
        subnormal, mantissaField, m_b.CreateOr(mantissaField, c(int64_t{1} << sourceMantissa)));
    Value* exponent = m_b.CreateSub(m_b.CreateSelect(subnormal, c(1), exponentField),
                                    c(sourceBias + sourceMantissa));
    Value* leading = m_b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, significand, m_b.getFalse());
    Value* unbiased = m_b.CreateAdd(m_b.CreateSub(c(63), leading), exponent);  // floor(log2 |x|)
    const int64_t minNormalExponent = 1 - bias;
    Value* normal = m_b.CreateICmpSGE(unbiased, c(minNormalExponent));
    Value* quantum =
        m_b.CreateSub(m_b.CreateSelect(normal, unbiased, c(minNormalExponent)), c(mantissaBits));
    // significand / 2^shift, rounded to nearest even.
    Value* shift = m_b.CreateSub(quantum, exponent);
    Value* left = m_b.CreateICmpSLT(shift, c(0));
    Value* leftAmount = m_b.CreateSelect(left, m_b.CreateNeg(shift), c(0));
    Value* shiftedLeft = m_b.CreateShl(
        significand, m_b.CreateSelect(m_b.CreateICmpULT(leftAmount, c(63)), leftAmount, c(63)));
    Value* beyond = m_b.CreateICmpSGE(shift, c(64));  // |x| < half a quantum: 0
    Value* amount = m_b.CreateSelect(m_b.CreateOr(left, beyond), c(1), shift);
    Value* truncated = m_b.CreateLShr(significand, amount);
    Value* rest = m_b.CreateAnd(significand, m_b.CreateSub(m_b.CreateShl(c(1), amount), c(1)));
    Value* half = m_b.CreateShl(c(1), m_b.CreateSub(amount, c(1)));
    Value* odd = m_b.CreateICmpNE(m_b.CreateAnd(truncated, c(1)), c(0));
    Value* up = m_b.CreateOr(m_b.CreateICmpUGT(rest, half),
                             m_b.CreateAnd(m_b.CreateICmpEQ(rest, half), odd));
    Value* rounded = m_b.CreateAdd(truncated, m_b.CreateZExt(up, i64));
    rounded = m_b.CreateSelect(left, shiftedLeft, m_b.CreateSelect(beyond, c(0), rounded));
    Value* normalBits = m_b.CreateAdd(
        m_b.CreateShl(m_b.CreateAdd(unbiased, c(bias - 1)), c(mantissaBits)), rounded);
    Value* bits = m_b.CreateSelect(normal, normalBits, rounded);

    auto signed_ = [&](uint32_t positive, uint32_t negativeBits) {
        return m_b.CreateSelect(negative, byte(negativeBits), byte(positive));
    };
    // withSign(): a magnitude rounded to 0 is +0 (-0 where the format has
    // one); an exact zero below is the format's zero, which f8e8m0fnu lacks.
    Value* withSign =
        m_b.CreateSelect(m_b.CreateICmpEQ(bits, c(0)), signed_(0, zeroNegative),
                         m_b.CreateSelect(negative, m_b.CreateOr(bits, byte(signBit)), bits));
    Value* result = m_b.CreateSelect(m_b.CreateICmpUGT(bits, byte(maxFiniteBits)),
                                     signed_(overflowPositive, overflowNegative), withSign);
    Value* isZero = m_b.CreateICmpEQ(magnitude, c(0));
    result = m_b.CreateSelect(isZero, signed_(zeroPositive, zeroNegative), result);
    const uint64_t infinityBits = wide ? 0x7ff0000000000000ull : 0x7f800000ull;
    result = m_b.CreateSelect(m_b.CreateICmpEQ(magnitude, c(static_cast<int64_t>(infinityBits))),
                              signed_(overflowPositive, overflowNegative), result);
    result = m_b.CreateSelect(m_b.CreateICmpUGT(magnitude, c(static_cast<int64_t>(infinityBits))),
                              signed_(nanPositive, nanNegative), result);
    if (e8m0)  // no zero and no sign: zero and negative values are NaN
        result = m_b.CreateSelect(m_b.CreateOr(isZero, negative), byte(nanPositive), result);
    return m_b.CreateTrunc(result, m_b.getInt8Ty());
}

}  // namespace hloscope::llvm_codegen
