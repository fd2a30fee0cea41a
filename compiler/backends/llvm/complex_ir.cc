// Elemental code for c64 and c128: a value is the pair {real, imaginary}
// of f32 (f64) registers, laid out in memory as std::complex is. The
// formulas are the reference interpreter's (core/interpreter/elementwise.cc,
// std::complex): Smith's division, the principal square root and logarithm,
// exp keeping a real argument on the real axis, |z| without overflow.
// Transcendentals of f32 parts use the same inline approximations as f32
// values; f64 parts and atan2 call libm (the GPU reports such calls).
#include <llvm/IR/Intrinsics.h>

#include <cmath>

#include "compiler/backends/llvm/elemental_ir.h"
#include "compiler/backends/llvm/math_ir.h"

namespace hloscope::llvm_codegen {
using llvm::Value;

Value* Elemental::complexOf(Value* re, Value* im) {
    llvm::Type* pair = llvm::StructType::get(re->getType(), im->getType());
    Value* z = m_b.CreateInsertValue(llvm::PoisonValue::get(pair), re, 0);
    return m_b.CreateInsertValue(z, im, 1);
}

Value* Elemental::complexMultiply(Value* x, Value* y) {
    Value* a = realPart(x);
    Value* b = imagPart(x);
    Value* c = realPart(y);
    Value* d = imagPart(y);
    return complexOf(m_b.CreateFSub(m_b.CreateFMul(a, c), m_b.CreateFMul(b, d)),
                     m_b.CreateFAdd(m_b.CreateFMul(a, d), m_b.CreateFMul(b, c)));
}

// Smith's algorithm: divide by the larger of |c| and |d| first, so neither
// c^2 + d^2 nor the products overflow.
Value* Elemental::complexDivide(Value* x, Value* y) {
    Value* a = realPart(x);
    Value* b = imagPart(x);
    Value* c = realPart(y);
    Value* d = imagPart(y);
    auto fabs = [&](Value* v) { return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
    Value* cLarger = m_b.CreateFCmpOGE(fabs(c), fabs(d));
    // |c| >= |d|: r = d / c, den = c + d r, ((a + b r) / den, (b - a r) / den).
    Value* r1 = m_b.CreateFDiv(d, c);
    Value* den1 = m_b.CreateFAdd(c, m_b.CreateFMul(d, r1));
    Value* re1 = m_b.CreateFDiv(m_b.CreateFAdd(a, m_b.CreateFMul(b, r1)), den1);
    Value* im1 = m_b.CreateFDiv(m_b.CreateFSub(b, m_b.CreateFMul(a, r1)), den1);
    // Otherwise: r = c / d, den = c r + d, ((a r + b) / den, (b r - a) / den).
    Value* r2 = m_b.CreateFDiv(c, d);
    Value* den2 = m_b.CreateFAdd(m_b.CreateFMul(c, r2), d);
    Value* re2 = m_b.CreateFDiv(m_b.CreateFAdd(m_b.CreateFMul(a, r2), b), den2);
    Value* im2 = m_b.CreateFDiv(m_b.CreateFSub(m_b.CreateFMul(b, r2), a), den2);
    return complexOf(m_b.CreateSelect(cLarger, re1, re2), m_b.CreateSelect(cLarger, im1, im2));
}

Value* Elemental::complexAbs(Value* z) {
    auto fabs = [&](Value* v) { return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
    Value* a = fabs(realPart(z));
    Value* b = fabs(imagPart(z));
    llvm::Type* t = a->getType();
    Value* large = m_b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b);
    Value* small = m_b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b);
    Value* ratio = m_b.CreateFDiv(small, large);
    Value* scaled = m_b.CreateFMul(
        large, m_b.CreateUnaryIntrinsic(
                   llvm::Intrinsic::sqrt,
                   m_b.CreateFAdd(llvm::ConstantFP::get(t, 1.0), m_b.CreateFMul(ratio, ratio))));
    Value* inf = llvm::ConstantFP::getInfinity(t);
    // hypot: an infinite part wins over NaN; |0| is 0; a NaN part otherwise gives NaN.
    Value* result = m_b.CreateSelect(m_b.CreateFCmpOEQ(large, llvm::ConstantFP::get(t, 0.0)),
                                     llvm::ConstantFP::get(t, 0.0), scaled);
    Value* nan = m_b.CreateOr(m_b.CreateFCmpUNO(a, a), m_b.CreateFCmpUNO(b, b));
    result = m_b.CreateSelect(nan, llvm::ConstantFP::getNaN(t), result);
    Value* infinite = m_b.CreateOr(m_b.CreateFCmpOEQ(a, inf), m_b.CreateFCmpOEQ(b, inf));
    return m_b.CreateSelect(infinite, inf, result);
}

// atan2 for f32 without libm: atan of the smaller over the larger magnitude
// by Cephes' atanf (two range reductions at tan(pi/8) and tan(3pi/8), a
// degree-9 odd polynomial; about 1e-7 relative), then the quadrant: pi - r
// for a negative x (-0 included), y's sign; atan2(0, x) is 0 or pi.
Value* Elemental::deviceAtan2(Value* y, Value* x) {
    llvm::Type* t = x->getType();
    auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
    auto fabs = [&](Value* v) { return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
    Value* ratio = m_b.CreateFDiv(fabs(y), fabs(x));  // inf for x = 0
    Value* big = m_b.CreateFCmpOGT(ratio, c(2.414213562373095));
    Value* middle =
        m_b.CreateAnd(m_b.CreateNot(big), m_b.CreateFCmpOGT(ratio, c(0.41421356237309503)));
    Value* reduced = m_b.CreateSelect(
        big, m_b.CreateFDiv(c(-1.0), ratio),
        m_b.CreateSelect(
            middle, m_b.CreateFDiv(m_b.CreateFSub(ratio, c(1.0)), m_b.CreateFAdd(ratio, c(1.0))),
            ratio));
    Value* base = m_b.CreateSelect(big, c(M_PI / 2), m_b.CreateSelect(middle, c(M_PI / 4), c(0.0)));
    Value* z = m_b.CreateFMul(reduced, reduced);
    Value* p = c(8.05374449538e-2);
    for (double k : {-1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1})
        p = m_b.CreateFAdd(m_b.CreateFMul(p, z), c(k));
    Value* r = m_b.CreateFAdd(
        base, m_b.CreateFAdd(m_b.CreateFMul(m_b.CreateFMul(p, z), reduced), reduced));
    // y = 0: 0 (x > 0 or +0) or pi (x < 0 or -0); NaN stays NaN.
    r = m_b.CreateSelect(m_b.CreateFCmpOEQ(y, c(0.0)), c(0.0), r);
    Value* sign = m_b.CreateBitCast(x, m_b.getInt32Ty());
    Value* negativeX = m_b.CreateICmpSLT(sign, m_b.getInt32(0));
    r = m_b.CreateSelect(negativeX, m_b.CreateFSub(c(M_PI), r), r);
    return m_b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, y);
}

// (log |z|, atan2(im, re)): the principal logarithm.
StatusOr<Value*> Elemental::complexLog(const HloInstruction& instruction, Value* z) {
    Value* magnitude = complexAbs(z);
    llvm::Type* t = magnitude->getType();
    const bool f32 = t->isFloatTy();
    if (m_deviceCode && !f32)
        return notCompiled(instruction, std::string(hloOpcodeString(instruction.opcode())) +
                                            " of c128 is not compiled for the GPU (no libm there)");
    Value* re = f32 ? emitFastLog(m_b, magnitude) : callLibm("log", t, {magnitude});
    Value* im = m_deviceCode ? deviceAtan2(imagPart(z), realPart(z))
                             : callLibm("atan2", t, {imagPart(z), realPart(z)});
    return complexOf(re, im);
}

// e^a (cos b, sin b); a real argument (b == 0) stays real, so exp(inf) is inf.
StatusOr<Value*> Elemental::complexExp(const HloInstruction& instruction, Value* z) {
    Value* a = realPart(z);
    Value* b = imagPart(z);
    llvm::Type* t = a->getType();
    const bool f32 = t->isFloatTy();
    if (m_deviceCode && !f32)
        return notCompiled(instruction, "exp of c128 is not compiled for the GPU (no libm there)");
    Value* e = f32 ? emitFastExp(m_b, a) : callLibm("exp", t, {a});
    Value* cosB = f32 ? emitFastCos(m_b, b) : callLibm("cos", t, {b});
    Value* sinB = f32 ? emitFastSin(m_b, b) : callLibm("sin", t, {b});
    Value* realAxis = m_b.CreateFCmpOEQ(b, llvm::ConstantFP::get(t, 0.0));
    return complexOf(m_b.CreateSelect(realAxis, e, m_b.CreateFMul(e, cosB)),
                     m_b.CreateSelect(realAxis, b, m_b.CreateFMul(e, sinB)));
}

StatusOr<Value*> Elemental::emitComplex(const HloInstruction& instruction,
                                        const std::vector<Value*>& operands) {
    const HloOpcode opcode = instruction.opcode();
    const PrimitiveType type = instruction.shape().elementType();
    const PrimitiveType operandType = instruction.operand(0)->shape().elementType();
    const bool complexOperand = primitive_util::isComplex(operandType);
    Value* x = operands[0];
    Value* y = operands.size() > 1 ? operands[1] : nullptr;
    switch (opcode) {
        case HloOpcode::kComplex:
            if (!primitive_util::isComplex(type) || y == nullptr)
                return notCompiled(instruction,
                                   "complex of " + std::string(primitive_util::name(operandType)));
            return complexOf(x, y);
        case HloOpcode::kReal:
            return complexOperand ? realPart(x) : x;
        case HloOpcode::kImag:
            return complexOperand ? imagPart(x) : llvm::ConstantFP::get(x->getType(), 0.0);
        case HloOpcode::kAbs:
            if (complexOperand) return complexAbs(x);
            break;
        default:
            break;
    }
    if (!primitive_util::isComplex(type))
        return notCompiled(instruction, std::string(hloOpcodeString(opcode)) + " of " +
                                            std::string(primitive_util::name(operandType)) +
                                            " giving " + std::string(primitive_util::name(type)));
    auto parts = [&](auto&& f) {
        return complexOf(f(realPart(x), realPart(y)), f(imagPart(x), imagPart(y)));
    };
    switch (opcode) {
        case HloOpcode::kAdd:
            return parts([&](Value* p, Value* q) { return m_b.CreateFAdd(p, q); });
        case HloOpcode::kSubtract:
            return parts([&](Value* p, Value* q) { return m_b.CreateFSub(p, q); });
        case HloOpcode::kMultiply:
            return complexMultiply(x, y);
        case HloOpcode::kDivide:
            return complexDivide(x, y);
        case HloOpcode::kNegate:
            return complexOf(m_b.CreateFNeg(realPart(x)), m_b.CreateFNeg(imagPart(x)));
        case HloOpcode::kSign: {
            // z / |z|, and 0 for 0.
            Value* magnitude = complexAbs(x);
            Value* zero = llvm::ConstantFP::get(magnitude->getType(), 0.0);
            Value* isZero = m_b.CreateFCmpOEQ(magnitude, zero);
            Value* safe = m_b.CreateSelect(isZero, llvm::ConstantFP::get(magnitude->getType(), 1.0),
                                           magnitude);
            return complexOf(m_b.CreateSelect(isZero, zero, m_b.CreateFDiv(realPart(x), safe)),
                             m_b.CreateSelect(isZero, zero, m_b.CreateFDiv(imagPart(x), safe)));
        }
        case HloOpcode::kSqrt:
        case HloOpcode::kRsqrt: {
            // The principal root: t = sqrt((|a| + |z|) / 2); (t, b / 2t) for
            // a >= 0, else (|b| / 2t, t with b's sign); sqrt(0) keeps b.
            Value* a = realPart(x);
            Value* b = imagPart(x);
            llvm::Type* t = a->getType();
            auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
            Value* absA = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
            Value* root = m_b.CreateUnaryIntrinsic(
                llvm::Intrinsic::sqrt, m_b.CreateFMul(m_b.CreateFAdd(absA, complexAbs(x)), c(0.5)));
            Value* twice = m_b.CreateFMul(root, c(2.0));
            Value* nonNegative = m_b.CreateFCmpOGE(a, c(0.0));
            Value* re = m_b.CreateSelect(
                nonNegative, root,
                m_b.CreateFDiv(m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b), twice));
            Value* im =
                m_b.CreateSelect(nonNegative, m_b.CreateFDiv(b, twice),
                                 m_b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, root, b));
            Value* origin =
                m_b.CreateAnd(m_b.CreateFCmpOEQ(a, c(0.0)), m_b.CreateFCmpOEQ(b, c(0.0)));
            Value* sqrt =
                complexOf(m_b.CreateSelect(origin, c(0.0), re), m_b.CreateSelect(origin, b, im));
            if (opcode == HloOpcode::kSqrt) return sqrt;
            return complexDivide(complexOf(c(1.0), c(0.0)), sqrt);
        }
        case HloOpcode::kExp:
            return complexExp(instruction, x);
        case HloOpcode::kLog:
            return complexLog(instruction, x);
        case HloOpcode::kPower: {
            // exp(y log x), as cpow computes it.
            HLO_ASSIGN_OR_RETURN(Value * logX, complexLog(instruction, x));
            return complexExp(instruction, complexMultiply(y, logX));
        }
        default:
            break;
    }
    return notCompiled(instruction, std::string(hloOpcodeString(opcode)) + " on " +
                                        std::string(primitive_util::name(type)));
}

}  // namespace hloscope::llvm_codegen
