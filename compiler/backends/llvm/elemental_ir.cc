#include "compiler/backends/llvm/elemental_ir.h"

#include <llvm/IR/Intrinsics.h>

#include <complex>
#include <limits>

#include "compiler/backends/llvm/math_ir.h"

namespace hloscope::llvm_codegen {
namespace {

using llvm::Value;

// f16 and bf16 compute in f32 registers and are rounded back after every op
// (XLA's CPU and GPU emitters do the same); memory holds their 16 bits.
bool isNarrow(PrimitiveType type) {
    return type == PrimitiveType::F16 || type == PrimitiveType::BF16 ||
           Elemental::isSmallFloat(type);
}
bool isFloat(PrimitiveType type) {
    return type == PrimitiveType::F32 || type == PrimitiveType::F64 || isNarrow(type);
}
bool isUnsigned(PrimitiveType type) { return primitive_util::isUnsignedInteger(type); }

}  // namespace

Status notCompiled(const HloInstruction& instruction, const std::string& why) {
    return Status(StatusCode::kUnimplemented, "%" + instruction.name() + ": " + why);
}

bool Elemental::supported(PrimitiveType type) {
    switch (type) {
        case PrimitiveType::PRED:
        case PrimitiveType::S8:
        case PrimitiveType::S16:
        case PrimitiveType::S32:
        case PrimitiveType::S64:
        case PrimitiveType::U8:
        case PrimitiveType::U16:
        case PrimitiveType::U32:
        case PrimitiveType::U64:
        case PrimitiveType::F32:
        case PrimitiveType::F64:
        case PrimitiveType::F16:
        case PrimitiveType::BF16:
        case PrimitiveType::S1:
        case PrimitiveType::S2:
        case PrimitiveType::S4:
        case PrimitiveType::U1:
        case PrimitiveType::U2:
        case PrimitiveType::U4:
        case PrimitiveType::C64:
        case PrimitiveType::C128:
            return true;
        default:
            return isSmallFloat(type);
    }
}

llvm::Type* Elemental::registerType(PrimitiveType type) {
    switch (type) {
        case PrimitiveType::PRED:
            return m_b.getInt1Ty();
        case PrimitiveType::F32:
        case PrimitiveType::F16:
        case PrimitiveType::BF16:
            return m_b.getFloatTy();
        case PrimitiveType::F64:
            return m_b.getDoubleTy();
        case PrimitiveType::C64:
            return llvm::StructType::get(m_b.getFloatTy(), m_b.getFloatTy());
        case PrimitiveType::C128:
            return llvm::StructType::get(m_b.getDoubleTy(), m_b.getDoubleTy());
        default:
            if (isSmallFloat(type)) return m_b.getFloatTy();
            return m_b.getIntNTy(static_cast<unsigned>(primitive_util::bitWidth(type)));
    }
}

llvm::Type* Elemental::memoryType(PrimitiveType type) {
    if (isSmallFloat(type) || primitive_util::isSubByte(type)) return m_b.getInt8Ty();
    if (isNarrow(type)) return m_b.getInt16Ty();
    return type == PrimitiveType::PRED ? m_b.getInt8Ty() : registerType(type);
}

Value* Elemental::fromMemory(PrimitiveType type, Value* loaded) {
    if (isSmallFloat(type)) return decodeSmallFloat(type, loaded);
    if (primitive_util::isSubByte(type)) return m_b.CreateTrunc(loaded, registerType(type));
    if (type == PrimitiveType::F16)
        return m_b.CreateFPExt(m_b.CreateBitCast(loaded, m_b.getHalfTy()), m_b.getFloatTy());
    if (type == PrimitiveType::BF16)
        return m_b.CreateBitCast(m_b.CreateShl(m_b.CreateZExt(loaded, m_b.getInt32Ty()), 16),
                                 m_b.getFloatTy());
    return type == PrimitiveType::PRED ? m_b.CreateICmpNE(loaded, m_b.getInt8(0)) : loaded;
}

Value* Elemental::toMemory(PrimitiveType type, Value* value) {
    if (isSmallFloat(type)) return encodeSmallFloat(type, value);
    if (primitive_util::isSubByte(type))
        return isUnsigned(type) ? m_b.CreateZExt(value, m_b.getInt8Ty())
                                : m_b.CreateSExt(value, m_b.getInt8Ty());
    if (type == PrimitiveType::F16)
        return m_b.CreateBitCast(m_b.CreateFPTrunc(value, m_b.getHalfTy()), m_b.getInt16Ty());
    if (type == PrimitiveType::BF16) {
        // Round to nearest even on the bits; NaN stays a (quiet) NaN.
        Value* bits = m_b.CreateBitCast(value, m_b.getInt32Ty());
        Value* lsb = m_b.CreateAnd(m_b.CreateLShr(bits, 16), m_b.getInt32(1));
        Value* rounded =
            m_b.CreateLShr(m_b.CreateAdd(bits, m_b.CreateAdd(lsb, m_b.getInt32(0x7fff))), 16);
        Value* quietNan = m_b.CreateOr(m_b.CreateLShr(bits, 16), m_b.getInt32(0x40));
        Value* result = m_b.CreateSelect(m_b.CreateFCmpUNO(value, value), quietNan, rounded);
        return m_b.CreateTrunc(result, m_b.getInt16Ty());
    }
    return type == PrimitiveType::PRED ? m_b.CreateZExt(value, m_b.getInt8Ty()) : value;
}

Value* Elemental::roundTo(PrimitiveType type, Value* value) {
    return isNarrow(type) ? fromMemory(type, toMemory(type, value)) : value;
}

Value* Elemental::zero(PrimitiveType type) {
    llvm::Type* t = registerType(type);
    if (primitive_util::isComplex(type)) return llvm::Constant::getNullValue(t);
    if (isFloat(type)) return llvm::ConstantFP::get(t, 0.0);
    return llvm::ConstantInt::get(t, 0);
}

Value* Elemental::multiplyAdd(PrimitiveType type, Value* acc, Value* x, Value* y) {
    if (primitive_util::isComplex(type)) {
        Value* product = complexMultiply(x, y);
        return complexOf(m_b.CreateFAdd(realPart(acc), realPart(product)),
                         m_b.CreateFAdd(imagPart(acc), imagPart(product)));
    }
    if (isFloat(type)) return m_b.CreateFAdd(acc, m_b.CreateFMul(x, y));
    return m_b.CreateAdd(acc, m_b.CreateMul(x, y));
}

Value* Elemental::rawBits(PrimitiveType type, Value* value) {
    const auto bits = static_cast<unsigned>(primitive_util::bitWidth(type));
    if (!isFloat(type)) return value;  // iN registers hold exactly the N bits
    Value* stored = toMemory(type, value);
    if (isSmallFloat(type)) return m_b.CreateTrunc(stored, m_b.getIntNTy(bits));
    return stored->getType()->isIntegerTy() ? stored
                                            : m_b.CreateBitCast(stored, m_b.getIntNTy(bits));
}

Value* Elemental::fromRawBits(PrimitiveType type, Value* bits) {
    if (!isFloat(type)) return bits;
    if (isSmallFloat(type)) return fromMemory(type, m_b.CreateZExt(bits, m_b.getInt8Ty()));
    return fromMemory(type, m_b.CreateBitCast(bits, memoryType(type)));
}

Value* Elemental::constant(PrimitiveType type, const Literal& literal, int64_t index) {
    if (primitive_util::isComplex(type)) {
        auto* pair = llvm::cast<llvm::StructType>(registerType(type));
        const std::complex<double> z = literal.getAsComplex(index);
        return llvm::ConstantStruct::get(
            pair, {llvm::ConstantFP::get(pair->getElementType(0), z.real()),
                   llvm::ConstantFP::get(pair->getElementType(1), z.imag())});
    }
    if (isFloat(type)) return llvm::ConstantFP::get(registerType(type), literal.getAsDouble(index));
    if (type == PrimitiveType::PRED) return m_b.getInt1(literal.getAsInt64(index) != 0);
    return llvm::ConstantInt::get(registerType(type), literal.getAsUint64(index));
}

Value* Elemental::fromIndex(PrimitiveType type, Value* position) {
    if (primitive_util::isComplex(type)) {
        const PrimitiveType part = primitive_util::complexComponentType(type);
        Value* re = fromIndex(part, position);
        return complexOf(re, llvm::ConstantFP::get(re->getType(), 0.0));
    }
    if (isFloat(type)) return roundTo(type, m_b.CreateUIToFP(position, registerType(type)));
    if (type == PrimitiveType::PRED) return m_b.CreateICmpNE(position, m_b.getInt64(0));
    return m_b.CreateTrunc(position, registerType(type));
}

Value* Elemental::convert(PrimitiveType from, PrimitiveType to, Value* value) {
    if (from == to) return value;
    if (primitive_util::isComplex(to)) {
        // From a real value (the imaginary part 0) or the other complex type;
        // complex to real is not an HLO conversion (the verifier rejects it).
        const PrimitiveType part = primitive_util::complexComponentType(to);
        if (primitive_util::isComplex(from)) {
            const PrimitiveType fromPart = primitive_util::complexComponentType(from);
            return complexOf(convert(fromPart, part, realPart(value)),
                             convert(fromPart, part, imagPart(value)));
        }
        Value* re = convert(from, part, value);
        return complexOf(re, llvm::ConstantFP::get(re->getType(), 0.0));
    }
    llvm::Type* target = registerType(to);
    if (to == PrimitiveType::PRED) {
        if (isFloat(from))
            return m_b.CreateFCmpUNE(value, llvm::ConstantFP::get(value->getType(), 0.0));
        return m_b.CreateICmpNE(value, llvm::ConstantInt::get(value->getType(), 0));
    }
    if (from == PrimitiveType::PRED)
        return isFloat(to) ? m_b.CreateUIToFP(value, target) : m_b.CreateZExt(value, target);
    if (from == PrimitiveType::F64 && isSmallFloat(to))
        return fromMemory(to, encodeSmallFloat(to, value));
    if (isFloat(from) && isFloat(to)) {
        Value* resized = value->getType() == target       ? value
                         : value->getType()->isDoubleTy() ? m_b.CreateFPTrunc(value, target)
                                                          : m_b.CreateFPExt(value, target);
        return roundTo(to, resized);
    }
    if (isFloat(from)) {
        const auto id = isUnsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat;
        return m_b.CreateIntrinsic(id, {target, value->getType()}, {value});
    }
    if (isFloat(to))
        return roundTo(to, isUnsigned(from) ? m_b.CreateUIToFP(value, target)
                                            : m_b.CreateSIToFP(value, target));
    return isUnsigned(from) ? m_b.CreateZExtOrTrunc(value, target)
                            : m_b.CreateSExtOrTrunc(value, target);
}

Value* Elemental::callLibm(const char* name, llvm::Type* type, const std::vector<Value*>& args) {
    std::string symbol = name;
    if (type->isFloatTy()) symbol += "f";
    std::vector<llvm::Type*> params(args.size(), type);
    llvm::FunctionCallee callee =
        m_module.getOrInsertFunction(symbol, llvm::FunctionType::get(type, params, false));
    return m_b.CreateCall(callee, args);
}

StatusOr<Value*> Elemental::emitCompare(const HloInstruction& instruction,
                                        const std::vector<Value*>& operands) {
    const PrimitiveType type = instruction.operand(0)->shape().elementType();
    const auto direction = instruction.comparisonDirection();
    if (!direction) return notCompiled(instruction, "compare without a direction");
    const ComparisonType comparison =
        instruction.extra() ? instruction.extra()->comparisonType : ComparisonType::kDefault;
    using P = llvm::CmpInst::Predicate;
    // Per direction (kEq, kNe, kGe, kGt, kLe, kLt): ordered float compares
    // but NE (true for NaN, as C++'s !=), signed and unsigned integer ones.
    static constexpr P kFloat[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OGE,
                                   P::FCMP_OGT, P::FCMP_OLE, P::FCMP_OLT};
    static constexpr P kSigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SGE,
                                    P::ICMP_SGT, P::ICMP_SLE, P::ICMP_SLT};
    static constexpr P kUnsigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_UGE,
                                      P::ICMP_UGT, P::ICMP_ULE, P::ICMP_ULT};
    const auto d = static_cast<size_t>(*direction);
    if (primitive_util::isComplex(type)) {
        // Equal when both parts are (ordered); NE is its negation.
        if (*direction != ComparisonDirection::kEq && *direction != ComparisonDirection::kNe)
            return notCompiled(instruction, "compare of complex values other than EQ or NE");
        Value* equal =
            m_b.CreateAnd(m_b.CreateFCmpOEQ(realPart(operands[0]), realPart(operands[1])),
                          m_b.CreateFCmpOEQ(imagPart(operands[0]), imagPart(operands[1])));
        return *direction == ComparisonDirection::kEq ? equal : m_b.CreateNot(equal);
    }
    if (isFloat(type)) {
        if (comparison == ComparisonType::kTotalOrder) {
            // The interpreter's keys: the type's own bits, negatives complemented and
            // positives with the sign bit set, compared unsigned (-NaN < -inf < -0 < 0 <
            // inf < NaN); f8e8m0fnu has no sign.
            auto key = [&](Value* value) {
                Value* bits = rawBits(type, value);
                if (type == PrimitiveType::F8E8M0FNU) return bits;
                const unsigned width = bits->getType()->getIntegerBitWidth();
                Value* sign =
                    llvm::ConstantInt::get(bits->getType(), llvm::APInt::getSignMask(width));
                Value* negative = m_b.CreateICmpNE(m_b.CreateAnd(bits, sign),
                                                   llvm::ConstantInt::get(bits->getType(), 0));
                return m_b.CreateSelect(negative, m_b.CreateNot(bits), m_b.CreateOr(bits, sign));
            };
            return m_b.CreateCmp(kUnsigned[d], key(operands[0]), key(operands[1]));
        }
        return m_b.CreateCmp(kFloat[d], operands[0], operands[1]);
    }
    bool unsignedCompare = isUnsigned(type) || type == PrimitiveType::PRED;
    if (comparison == ComparisonType::kSigned) unsignedCompare = false;
    if (comparison == ComparisonType::kUnsigned) unsignedCompare = true;
    return m_b.CreateCmp(unsignedCompare ? kUnsigned[d] : kSigned[d], operands[0], operands[1]);
}

// pow(x, y) for f32 without libm: exp(y * log|x|) from the fast
// approximations, with the sign of x for odd integer y, NaN for negative x
// and non-integer y (what powf gives; x = 1 and y = 0 are the caller's).
Value* Elemental::devicePower(Value* x, Value* y) {
    llvm::Type* t = x->getType();
    auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
    Value* magnitude = emitFastExp(
        m_b,
        m_b.CreateFMul(y, emitFastLog(m_b, m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x))));
    Value* integer = m_b.CreateFCmpOEQ(m_b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, y), y);
    Value* half = m_b.CreateFMul(y, c(0.5));
    Value* odd = m_b.CreateAnd(
        integer, m_b.CreateFCmpONE(m_b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, half), half));
    Value* signed_ = m_b.CreateSelect(
        odd, m_b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, x), magnitude);
    Value* invalid = m_b.CreateAnd(m_b.CreateFCmpOLT(x, c(0.0)), m_b.CreateNot(integer));
    return m_b.CreateSelect(invalid, llvm::ConstantFP::getNaN(t), signed_);
}

Value* Elemental::deviceMath(HloOpcode opcode, Value* x) {
    llvm::Type* t = x->getType();
    auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
    Value* inf = llvm::ConstantFP::getInfinity(t);
    auto expm1 = [&](Value* v) {
        Value* u = emitFastExp(m_b, v);
        Value* um1 = m_b.CreateFSub(u, c(1.0));
        Value* r = m_b.CreateFDiv(m_b.CreateFMul(um1, v), emitFastLog(m_b, u));
        r = m_b.CreateSelect(m_b.CreateFCmpOEQ(u, inf), inf, r);
        r = m_b.CreateSelect(m_b.CreateFCmpOEQ(um1, c(-1.0)), c(-1.0), r);
        return m_b.CreateSelect(m_b.CreateFCmpOEQ(u, c(1.0)), v, r);
    };
    switch (opcode) {
        case HloOpcode::kExpm1:
            return expm1(x);
        case HloOpcode::kLog1p: {
            Value* u = m_b.CreateFAdd(c(1.0), x);
            Value* r =
                m_b.CreateFDiv(m_b.CreateFMul(emitFastLog(m_b, u), x), m_b.CreateFSub(u, c(1.0)));
            r = m_b.CreateSelect(m_b.CreateFCmpOEQ(u, inf), inf, r);
            r = m_b.CreateSelect(m_b.CreateFCmpOEQ(u, c(0.0)), m_b.CreateFNeg(inf), r);
            return m_b.CreateSelect(m_b.CreateFCmpOEQ(u, c(1.0)), x, r);
        }
        case HloOpcode::kTan:
            return m_b.CreateFDiv(emitFastSin(m_b, x), emitFastCos(m_b, x));
        case HloOpcode::kSinh: {
            // Near 0: (e - 1/e) / 2 with e - 1 = expm1(x) kept exact.
            Value* em1 = expm1(x);
            Value* small = m_b.CreateFMul(
                c(0.5), m_b.CreateFAdd(em1, m_b.CreateFDiv(em1, m_b.CreateFAdd(em1, c(1.0)))));
            Value* e = emitFastExp(m_b, m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
            Value* large = m_b.CreateFMul(c(0.5), m_b.CreateFSub(e, m_b.CreateFDiv(c(1.0), e)));
            large = m_b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
            Value* isSmall =
                m_b.CreateFCmpOLT(m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), c(1.0));
            return m_b.CreateSelect(isSmall, small, large);
        }
        case HloOpcode::kCosh: {
            Value* e = emitFastExp(m_b, m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
            return m_b.CreateFMul(c(0.5), m_b.CreateFAdd(e, m_b.CreateFDiv(c(1.0), e)));
        }
        default:
            return nullptr;
    }
}

StatusOr<Value*> Elemental::emitFloat(const HloInstruction& instruction,
                                      const std::vector<Value*>& operands) {
    using llvm::Intrinsic::ID;
    const PrimitiveType type = instruction.shape().elementType();
    llvm::Type* t = registerType(type);
    const bool f32 = type == PrimitiveType::F32 || isNarrow(type);  // narrow types compute in f32
    Value* x = operands[0];
    Value* y = operands.size() > 1 ? operands[1] : nullptr;
    auto unary = [&](ID id) { return m_b.CreateUnaryIntrinsic(id, x); };
    auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
    if (m_deviceCode && f32 && y == nullptr)
        if (Value* device = deviceMath(instruction.opcode(), x)) return device;
    switch (instruction.opcode()) {
        case HloOpcode::kAdd:
            return m_b.CreateFAdd(x, y);
        case HloOpcode::kSubtract:
            return m_b.CreateFSub(x, y);
        case HloOpcode::kMultiply:
            return m_b.CreateFMul(x, y);
        case HloOpcode::kDivide:
            return m_b.CreateFDiv(x, y);
        case HloOpcode::kRemainder:
            return m_b.CreateFRem(x, y);
        case HloOpcode::kMaximum:
            return m_b.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, y);
        case HloOpcode::kMinimum:
            return m_b.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, y);
        case HloOpcode::kPower: {
            Value* one = m_b.CreateOr(m_b.CreateFCmpOEQ(x, c(1.0)), m_b.CreateFCmpOEQ(y, c(0.0)));
            if (m_deviceCode && !f32)
                return Status(StatusCode::kUnimplemented,
                              "%" + instruction.name() + ": power of " +
                                  std::string(primitive_util::name(type)) +
                                  " is not compiled for the GPU (no libm there)");
            Value* power = m_deviceCode ? devicePower(x, y)
                                        : m_b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y);
            return m_b.CreateSelect(one, c(1.0), power);
        }
        case HloOpcode::kAtan2:
            if (m_deviceCode && f32) return deviceAtan2(x, y);
            return callLibm("atan2", t, {x, y});
        case HloOpcode::kAbs:
            return unary(llvm::Intrinsic::fabs);
        case HloOpcode::kNegate:
            return m_b.CreateFNeg(x);
        case HloOpcode::kSign: {
            Value* magnitude = m_b.CreateSelect(m_b.CreateFCmpUNE(x, c(0.0)), c(1.0), c(0.0));
            Value* sign = m_b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, x);
            return m_b.CreateSelect(m_b.CreateFCmpUNO(x, x), x, sign);
        }
        case HloOpcode::kFloor:
            return unary(llvm::Intrinsic::floor);
        case HloOpcode::kCeil:
            return unary(llvm::Intrinsic::ceil);
        case HloOpcode::kRoundNearestAfz:
            return unary(llvm::Intrinsic::round);
        case HloOpcode::kRoundNearestEven:
            return unary(llvm::Intrinsic::roundeven);
        case HloOpcode::kSqrt:
            return unary(llvm::Intrinsic::sqrt);
        case HloOpcode::kRsqrt:
            return m_b.CreateFDiv(c(1.0), unary(llvm::Intrinsic::sqrt));
        case HloOpcode::kExp:
            return f32 ? emitFastExp(m_b, x) : callLibm("exp", t, {x});
        case HloOpcode::kLog:
            return f32 ? emitFastLog(m_b, x) : callLibm("log", t, {x});
        case HloOpcode::kTanh:
            return f32 ? emitFastTanh(m_b, x) : callLibm("tanh", t, {x});
        case HloOpcode::kSin:
            return f32 ? emitFastSin(m_b, x) : callLibm("sin", t, {x});
        case HloOpcode::kCos:
            return f32 ? emitFastCos(m_b, x) : callLibm("cos", t, {x});
        case HloOpcode::kErf:
            return f32 ? emitFastErf(m_b, x) : callLibm("erf", t, {x});
        case HloOpcode::kLogistic:
            if (f32) return emitFastLogistic(m_b, x);
            return m_b.CreateFDiv(c(1.0),
                                  m_b.CreateFAdd(c(1.0), callLibm("exp", t, {m_b.CreateFNeg(x)})));
        case HloOpcode::kExpm1:
            return callLibm("expm1", t, {x});
        case HloOpcode::kLog1p:
            return callLibm("log1p", t, {x});
        case HloOpcode::kCbrt:
            return callLibm("cbrt", t, {x});
        case HloOpcode::kTan:
            return callLibm("tan", t, {x});
        case HloOpcode::kSinh:
            return callLibm("sinh", t, {x});
        case HloOpcode::kCosh:
            return callLibm("cosh", t, {x});
        case HloOpcode::kAsin:
            return callLibm("asin", t, {x});
        case HloOpcode::kAcos:
            return callLibm("acos", t, {x});
        case HloOpcode::kAtan:
            return callLibm("atan", t, {x});
        case HloOpcode::kAsinh:
            return callLibm("asinh", t, {x});
        case HloOpcode::kAcosh:
            return callLibm("acosh", t, {x});
        case HloOpcode::kAtanh:
            return callLibm("atanh", t, {x});
        default:
            break;
    }
    return notCompiled(instruction, std::string(hloOpcodeString(instruction.opcode())) + " on " +
                                        std::string(primitive_util::name(type)));
}

StatusOr<Value*> Elemental::emitInteger(const HloInstruction& instruction,
                                        const std::vector<Value*>& operands) {
    const PrimitiveType type = instruction.shape().elementType();
    const bool isPred = type == PrimitiveType::PRED;
    const bool isSigned = !isPred && !isUnsigned(type);
    llvm::Type* t = registerType(type);
    const unsigned bits = t->getIntegerBitWidth();
    Value* x = operands[0];
    Value* y = operands.size() > 1 ? operands[1] : nullptr;
    auto c = [&](int64_t v) { return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), true); };
    switch (instruction.opcode()) {
        case HloOpcode::kAnd:
            return m_b.CreateAnd(x, y);
        case HloOpcode::kOr:
            return m_b.CreateOr(x, y);
        case HloOpcode::kXor:
            return m_b.CreateXor(x, y);
        case HloOpcode::kNot:
            return m_b.CreateNot(x);
        default:
            break;
    }
    if (isPred) {
        switch (instruction.opcode()) {
            case HloOpcode::kMaximum:
            case HloOpcode::kAdd:
                return m_b.CreateOr(x, y);
            case HloOpcode::kMinimum:
            case HloOpcode::kMultiply:
                return m_b.CreateAnd(x, y);
            default:
                return notCompiled(instruction,
                                   std::string(hloOpcodeString(instruction.opcode())) + " on pred");
        }
    }
    switch (instruction.opcode()) {
        case HloOpcode::kAdd:
            return m_b.CreateAdd(x, y);
        case HloOpcode::kSubtract:
            return m_b.CreateSub(x, y);
        case HloOpcode::kMultiply:
            return m_b.CreateMul(x, y);
        case HloOpcode::kDivide:
        case HloOpcode::kRemainder: {
            const bool divide = instruction.opcode() == HloOpcode::kDivide;
            Value* zero = m_b.CreateICmpEQ(y, c(0));
            Value* minusOne = isSigned ? m_b.CreateICmpEQ(y, c(-1)) : m_b.getFalse();
            Value* safe = m_b.CreateSelect(m_b.CreateOr(zero, minusOne), c(1), y);
            Value* q = divide ? (isSigned ? m_b.CreateSDiv(x, safe) : m_b.CreateUDiv(x, safe))
                              : (isSigned ? m_b.CreateSRem(x, safe) : m_b.CreateURem(x, safe));
            Value* special = divide ? m_b.CreateSelect(zero, c(-1), m_b.CreateNeg(x))
                                    : m_b.CreateSelect(zero, x, c(0));
            return m_b.CreateSelect(m_b.CreateOr(zero, minusOne), special, q);
        }
        case HloOpcode::kMaximum:
            return m_b.CreateBinaryIntrinsic(
                isSigned ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, y);
        case HloOpcode::kMinimum:
            return m_b.CreateBinaryIntrinsic(
                isSigned ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x, y);
        case HloOpcode::kAbs:
            return isSigned ? m_b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, m_b.getFalse())
                            : x;
        case HloOpcode::kNegate:
            return m_b.CreateNeg(x);
        case HloOpcode::kSign:
            if (!isSigned) return m_b.CreateZExt(m_b.CreateICmpNE(x, c(0)), t);
            return m_b.CreateBinaryIntrinsic(
                llvm::Intrinsic::smin, m_b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, c(-1)),
                c(1));
        case HloOpcode::kPopulationCount:
            return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
        case HloOpcode::kClz:
            return m_b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, m_b.getFalse());
        case HloOpcode::kShiftLeft:
        case HloOpcode::kShiftRightLogical:
        case HloOpcode::kShiftRightArithmetic: {
            Value* inRange = m_b.CreateICmpULT(y, c(bits));
            Value* amount = m_b.CreateSelect(inRange, y, c(0));
            if (instruction.opcode() == HloOpcode::kShiftLeft)
                return m_b.CreateSelect(inRange, m_b.CreateShl(x, amount), c(0));
            if (instruction.opcode() == HloOpcode::kShiftRightLogical)
                return m_b.CreateSelect(inRange, m_b.CreateLShr(x, amount), c(0));
            Value* fill = m_b.CreateSelect(m_b.CreateICmpSLT(x, c(0)), c(-1), c(0));
            return m_b.CreateSelect(inRange, m_b.CreateAShr(x, amount), fill);
        }
        default:
            break;
    }
    return notCompiled(instruction, std::string(hloOpcodeString(instruction.opcode())) + " on " +
                                        std::string(primitive_util::name(type)));
}

StatusOr<Value*> Elemental::emit(const HloInstruction& instruction,
                                 const std::vector<Value*>& operands) {
    const PrimitiveType type = instruction.shape().elementType();
    if (operands.size() != static_cast<size_t>(instruction.operandCount()) || operands.empty())
        return notCompiled(instruction, "operand count");
    switch (instruction.opcode()) {
        case HloOpcode::kCompare:
            return emitCompare(instruction, operands);
        case HloOpcode::kSelect:
            return m_b.CreateSelect(operands[0], operands[1], operands[2]);
        case HloOpcode::kConvert:
            return convert(instruction.operand(0)->shape().elementType(), type, operands[0]);
        case HloOpcode::kReducePrecision: {
            HLO_ASSIGN_OR_RETURN(Value * result, emitReducePrecision(instruction, operands[0]));
            return m_roundNarrow ? roundTo(type, result) : result;
        }
        case HloOpcode::kStochasticConvert:
            return emitStochasticConvert(instruction, operands);
        case HloOpcode::kIsFinite: {
            if (primitive_util::isComplex(instruction.operand(0)->shape().elementType()))
                return notCompiled(instruction, "is-finite of a complex value");
            Value* magnitude = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, operands[0]);
            return m_b.CreateFCmpOLT(
                magnitude, llvm::ConstantFP::get(magnitude->getType(),
                                                 std::numeric_limits<double>::infinity()));
        }
        case HloOpcode::kClamp: {
            if (primitive_util::isComplex(type))
                return notCompiled(instruction, "clamp of complex values");
            Value* lo = operands[0];
            Value* x = operands[1];
            Value* hi = operands[2];
            if (isFloat(type))
                return m_b.CreateBinaryIntrinsic(
                    llvm::Intrinsic::minimum,
                    m_b.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, lo), hi);
            const bool isSigned = !isUnsigned(type) && type != PrimitiveType::PRED;
            Value* low = m_b.CreateBinaryIntrinsic(
                isSigned ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, lo);
            return m_b.CreateBinaryIntrinsic(
                isSigned ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, low, hi);
        }
        default:
            break;
    }
    const PrimitiveType operandType = instruction.operand(0)->shape().elementType();
    if (primitive_util::isComplex(type) || primitive_util::isComplex(operandType) ||
        instruction.opcode() == HloOpcode::kComplex || instruction.opcode() == HloOpcode::kReal ||
        instruction.opcode() == HloOpcode::kImag)
        return emitComplex(instruction, operands);
    if (isFloat(type)) {
        HLO_ASSIGN_OR_RETURN(Value * result, emitFloat(instruction, operands));
        return m_roundNarrow ? roundTo(type, result) : result;
    }
    return emitInteger(instruction, operands);
}

}  // namespace hloscope::llvm_codegen
