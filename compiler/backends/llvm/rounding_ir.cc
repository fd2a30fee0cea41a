// reduce-precision and stochastic-convert in registers (Elemental, elemental_ir.h), for the
// CPU and GPU kernels alike, operation for operation as the interpreter computes them:
//   reduce-precision   on the register's bits (f32 for f16, bf16 and the small floats, else
//                      f64), core/ir/float_types.cc's reducePrecision: round to nearest even at
//                      the new last mantissa bit and truncate, then overflow to a signed
//                      infinity and flush what the reduced exponent cannot hold to a signed
//                      zero; NaN stays NaN (infinity with no mantissa bits left). The value is
//                      then rounded to the element type, as after every op.
//   stochastic-convert XLA's StochasticConvertDecomposer: |x| rounded up when the random bits
//                      are below frac(|x|) x 2^bits, saturated at the target's limits (the
//                      limits as the operand type rounds them), NaN -> 0.
#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <limits>

#include "compiler/backends/llvm/elemental_ir.h"
#include "core/ir/float_types.h"

namespace hloscope::llvm_codegen {

using llvm::Value;

namespace {

// The value `type`'s elements take when `value` is stored in them (as the interpreter's
// roundToType).
double roundedTo(PrimitiveType type, double value) {
    if (type == PrimitiveType::F64) return value;
    if (type == PrimitiveType::F32) return static_cast<float>(value);
    return float_util::bitsToFloat(type, float_util::doubleToBits(type, value));
}

}  // namespace

StatusOr<Value*> Elemental::emitReducePrecision(const HloInstruction& instruction, Value* x) {
    const HloExtraAttributes* extra = instruction.extra();
    if (extra == nullptr || !extra->exponentBits || !extra->mantissaBits)
        return notCompiled(instruction, "reduce-precision needs exponent_bits and mantissa_bits");
    const PrimitiveType type = instruction.shape().elementType();
    if (!primitive_util::isFloatingPoint(type) || primitive_util::isComplex(type))
        return notCompiled(instruction, "reduce-precision of non-float values");
    const bool wide = x->getType()->isDoubleTy();
    const unsigned total = wide ? 64 : 32;
    const int srcMantissa = wide ? 52 : 23;
    const int srcExponent = wide ? 11 : 8;
    const int exponentBits = std::max<int>(1, static_cast<int>(*extra->exponentBits));
    const int mantissaBits = std::max<int>(0, static_cast<int>(*extra->mantissaBits));
    llvm::Type* intType = m_b.getIntNTy(total);
    auto c = [&](uint64_t v) { return llvm::ConstantInt::get(intType, v); };
    Value* bits = m_b.CreateBitCast(x, intType);
    if (mantissaBits < srcMantissa) {
        const int shift = srcMantissa - mantissaBits;
        const uint64_t lastBit = uint64_t{1} << shift;
        Value* xLast = m_b.CreateLShr(m_b.CreateAnd(bits, c(lastBit)), c(uint64_t(shift)));
        Value* biased = m_b.CreateAdd(bits, m_b.CreateAdd(xLast, c((lastBit >> 1) - 1)));
        bits = m_b.CreateAnd(biased, c(~(lastBit - 1)));
    }
    if (exponentBits < srcExponent) {
        const uint64_t signMask = uint64_t{1} << (total - 1);
        const uint64_t exponentMask = ((uint64_t{1} << srcExponent) - 1) << srcMantissa;
        const uint64_t bias = (uint64_t{1} << (srcExponent - 1)) - 1;
        const uint64_t reducedBias = (uint64_t{1} << (exponentBits - 1)) - 1;
        Value* exponent = m_b.CreateAnd(bits, c(exponentMask));
        Value* overflows = m_b.CreateICmpUGT(exponent, c((bias + reducedBias) << srcMantissa));
        Value* underflows = m_b.CreateICmpULE(exponent, c((bias - reducedBias) << srcMantissa));
        Value* signedZero = m_b.CreateAnd(bits, c(signMask));
        Value* signedInf = m_b.CreateOr(signedZero, c(exponentMask));
        bits = m_b.CreateSelect(overflows, signedInf, bits);
        bits = m_b.CreateSelect(underflows, signedZero, bits);
    }
    Value* result = m_b.CreateBitCast(bits, x->getType());
    Value* nan = m_b.CreateFCmpUNO(x, x);
    Value* keep =
        mantissaBits > 0 ? x : llvm::ConstantFP::getInfinity(x->getType(), /*Negative=*/false);
    return m_b.CreateSelect(nan, keep, result);
}

StatusOr<Value*> Elemental::emitStochasticConvert(const HloInstruction& instruction,
                                                  const std::vector<Value*>& operands) {
    const PrimitiveType from = instruction.operand(0)->shape().elementType();
    const PrimitiveType randomType = instruction.operand(1)->shape().elementType();
    const PrimitiveType to = instruction.shape().elementType();
    if (!primitive_util::isFloatingPoint(from) || primitive_util::isComplex(from) ||
        !primitive_util::isUnsignedInteger(randomType) ||
        primitive_util::bitWidth(randomType) != primitive_util::bitWidth(from))
        return notCompiled(instruction,
                           "stochastic-convert needs a float operand and unsigned random bits "
                           "of its width");
    if (!primitive_util::isSignedInteger(to) || primitive_util::bitWidth(to) < 8)
        return notCompiled(instruction,
                           "stochastic-convert to " + std::string(primitive_util::name(to)));
    Value* x = operands[0];
    llvm::Type* floatType = x->getType();
    const int toBits = primitive_util::bitWidth(to);
    const int randomBits = primitive_util::bitWidth(randomType);
    const int64_t minValue =
        toBits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (toBits - 1));
    const int64_t maxValue =
        toBits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (toBits - 1)) - 1;
    auto f = [&](double v) { return llvm::ConstantFP::get(floatType, v); };
    llvm::Type* i64 = m_b.getInt64Ty();
    // t = floor(|x|), rounded up when random < frac(|x|) * 2^bits (exact: a power-of-two scale).
    Value* magnitude = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    Value* truncated = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, magnitude);
    Value* fixed =
        m_b.CreateFMul(m_b.CreateFSub(magnitude, truncated), f(std::ldexp(1.0, randomBits)));
    Value* fixedInt = m_b.CreateFPToUI(fixed, i64);
    Value* random = m_b.CreateZExt(operands[1], i64);
    Value* t = m_b.CreateFPToUI(truncated, i64);
    t = m_b.CreateAdd(t, m_b.CreateZExt(m_b.CreateICmpULT(random, fixedInt), i64));
    Value* value = m_b.CreateSelect(m_b.CreateFCmpOLT(x, f(0.0)), m_b.CreateNeg(t), t);
    // Saturation and NaN, decided on x before any conversion.
    Value* low = m_b.CreateFCmpOLE(x, f(roundedTo(from, static_cast<double>(minValue))));
    Value* high = m_b.CreateFCmpOGE(x, f(roundedTo(from, static_cast<double>(maxValue))));
    value = m_b.CreateSelect(m_b.CreateFCmpUNO(x, x), llvm::ConstantInt::get(i64, 0), value);
    value =
        m_b.CreateSelect(high, llvm::ConstantInt::get(i64, static_cast<uint64_t>(maxValue)), value);
    value =
        m_b.CreateSelect(low, llvm::ConstantInt::get(i64, static_cast<uint64_t>(minValue)), value);
    return m_b.CreateTrunc(value, registerType(to));
}

}  // namespace hloscope::llvm_codegen
