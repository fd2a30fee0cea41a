// LLVM IR for the float32 approximations of compiler/runtime/fast_math.cc,
// operation for operation (same constants, same order of rounding), so that
// tst_fast_math's accuracy figures hold for the generated code; tst_cpu_backend
// checks the JIT'd functions against fast_math bit for bit.
#include <llvm/IR/Intrinsics.h>

#include <initializer_list>
#include <limits>
#include <utility>

#include "compiler/backends/llvm/math_ir.h"

namespace hloscope::llvm_codegen {
namespace {

using llvm::IRBuilderBase;
using llvm::Value;

struct Math {
    IRBuilderBase& b;

    Value* f(double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }
    Value* i(int32_t v) { return b.getInt32(static_cast<uint32_t>(v)); }
    Value* add(Value* x, Value* y) { return b.CreateFAdd(x, y); }
    Value* sub(Value* x, Value* y) { return b.CreateFSub(x, y); }
    Value* mul(Value* x, Value* y) { return b.CreateFMul(x, y); }
    Value* div(Value* x, Value* y) { return b.CreateFDiv(x, y); }
    Value* fma(Value* x, Value* y, Value* z) {
        return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
    }
    Value* neg(Value* x) { return b.CreateFNeg(x); }
    Value* sel(Value* c, Value* x, Value* y) { return b.CreateSelect(c, x, y); }
    Value* fabs(Value* x) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
    // std::fmin / std::fmax with a non-NaN constant y: the NaN operand loses.
    // Written as a compare and a select, which is one minps/maxps on x86
    // (llvm.minnum/maxnum add a NaN test and a blend there); the same value
    // for every x, NaN included, as y is never NaN.
    Value* fmin(Value* x, Value* y) { return sel(b.CreateFCmpOLT(x, y), x, y); }
    Value* fmax(Value* x, Value* y) { return sel(b.CreateFCmpOGT(x, y), x, y); }
    // std::nearbyint(t) for |t| < 2^22 in the default rounding mode: adding
    // 1.5 * 2^23 leaves t's integer part in the low mantissa bits, rounded to
    // the nearest (ties to even, as 1.5 * 2^23 is even); subtracting it again
    // is exact. Two adds where vroundps is two micro-ops and the conversion to
    // an integer a third: the integer is the sum's bits minus the constant's.
    static constexpr double kRoundMagic = 12582912.0;  // 1.5 * 2^23
    static constexpr int32_t kRoundMagicBits = 0x4B400000;
    struct Rounded {
        Value* n;   // float
        Value* ni;  // i32
    };
    Rounded roundSmall(Value* t) {
        Value* shifted = add(t, f(kRoundMagic));
        return {sub(shifted, f(kRoundMagic)), b.CreateSub(bits(shifted), i(kRoundMagicBits))};
    }
    Value* isNan(Value* x) { return b.CreateFCmpUNO(x, x); }
    Value* isFinite(Value* x) {
        return b.CreateFCmpOLT(fabs(x), f(std::numeric_limits<float>::infinity()));
    }
    Value* bits(Value* x) { return b.CreateBitCast(x, b.getInt32Ty()); }
    Value* fromBits(Value* v) { return b.CreateBitCast(v, b.getFloatTy()); }

    Value* horner(Value* x, std::initializer_list<double> c) {
        auto it = c.begin();
        Value* p = f(*it++);
        for (; it != c.end(); ++it) p = fma(p, x, f(*it));
        return p;
    }
    // 2^k for an i32 k in [-126, 127].
    Value* pow2(Value* k) { return fromBits(b.CreateShl(b.CreateAdd(k, i(127)), i(23))); }

    static constexpr double kLn2Hi = 0.693359375;
    static constexpr double kLn2Lo = -2.12194440e-4;

    // fast_math::expPoly: P of e^r = 1 + r + r^2 P(r).
    Value* expPoly(Value* r) {
        return horner(r, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                          1.6666665459e-1, 5.0000001201e-1});
    }

    // fast_math::reduceByLn2 for |x| < 2^22 ln 2 (roundSmall's range; the
    // callers clamp x to [-104, 89]): n as a float and an i32, and r.
    struct Ln2Reduced {
        Value* n;
        Value* ni;
        Value* r;
    };
    Ln2Reduced reduceByLn2(Value* x) {
        const auto [n, ni] = roundSmall(mul(x, f(1.44269504088896341)));
        Value* r = fma(neg(n), f(kLn2Hi), x);
        r = fma(neg(n), f(kLn2Lo), r);
        return {n, ni, r};
    }

    Value* expCore(Value* x) {
        const auto [n, ni, r] = reduceByLn2(x);
        Value* p = fma(fma(expPoly(r), r, f(1.0)), r, f(1.0));
        Value* n1 = b.CreateAShr(ni, i(1));
        Value* scaled = fromBits(b.CreateAdd(bits(p), b.CreateShl(b.CreateSub(ni, n1), i(23))));
        return mul(scaled, pow2(n1));
    }

    Value* exp(Value* x) {
        Value* clamped = fmin(fmax(x, f(-104.0)), f(89.0));
        return sel(isNan(x), x, expCore(clamped));
    }

    Value* log(Value* x) {
        const double inf = std::numeric_limits<float>::infinity();
        Value* denormal = b.CreateFCmpOLT(x, f(1.17549435e-38));
        Value* scaled = sel(denormal, mul(x, f(8388608.0)), x);
        Value* raw = bits(scaled);
        Value* e = b.CreateSIToFP(b.CreateSub(b.CreateLShr(raw, i(23)), i(126)), b.getFloatTy());
        e = sub(e, sel(denormal, f(23.0), f(0.0)));
        Value* m = fromBits(b.CreateOr(b.CreateAnd(raw, i(0x007fffff)), i(0x3f000000)));
        Value* small = b.CreateFCmpOLT(m, f(0.707106781186547524));
        e = sel(small, sub(e, f(1.0)), e);
        m = sel(small, sub(add(m, m), f(1.0)), sub(m, f(1.0)));
        Value* z = mul(m, m);
        Value* p = horner(m, {7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                              1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                              3.3333331174e-1});
        Value* y = mul(mul(m, z), p);
        y = fma(e, f(kLn2Lo), y);
        y = fma(f(-0.5), z, y);
        Value* r = fma(e, f(kLn2Hi), add(m, y));
        Value* out = sel(b.CreateFCmpOEQ(x, f(inf)), f(inf), r);
        out = sel(b.CreateFCmpOEQ(x, f(0.0)), f(-inf), out);
        Value* bad = b.CreateOr(b.CreateFCmpOLT(x, f(0.0)), isNan(x));
        return sel(bad, f(std::numeric_limits<float>::quiet_NaN()), out);
    }

    // fast_math::tanh: -u / (u + 2), u = expm1(-2|x|), with x's sign.
    Value* tanh(Value* x) {
        Value* t = mul(fmin(fabs(x), f(9.0)), f(-2.0));
        const auto [n, ni, r] = reduceByLn2(t);
        Value* em = fma(mul(r, r), expPoly(r), r);  // expm1(r)
        Value* scale = pow2(ni);
        Value* u = fma(scale, em, sub(scale, f(1.0)));
        Value* y = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, div(neg(u), add(u, f(2.0))), x);
        return sel(isNan(x), x, y);
    }

    Value* logistic(Value* x) {
        Value* e = expCore(fmax(b.CreateFNeg(fabs(x)), f(-104.0)));
        Value* r = div(f(1.0), add(f(1.0), e));
        return sel(isNan(x), x, sel(b.CreateFCmpOGE(x, f(0.0)), r, mul(e, r)));
    }

    // fast_math's reduceByPeriod: x (clamped to +-2^24) = k * period + z,
    // k the nearest integer to x / period corrected once by a first z, z by
    // three FMAs with the period split into three floats. Returns {k, z}.
    std::pair<Value*, Value*> reduceByPeriod(Value* x, double inverse, double hi, double mid,
                                             double lo) {
        Value* xc = fmin(fmax(x, f(-16777216.0)), f(16777216.0));
        Value* k = b.CreateUnaryIntrinsic(llvm::Intrinsic::nearbyint, mul(xc, f(inverse)));
        Value* z = fma(neg(k), f(hi), xc);
        z = fma(neg(k), f(mid), z);
        // |z inverse| stays below 2 (k was off by at most one), within
        // roundSmall's range; x inverse itself reaches 2^24 / period.
        k = add(k, roundSmall(mul(z, f(inverse))).n);
        z = fma(neg(k), f(hi), xc);
        z = fma(neg(k), f(mid), z);
        z = fma(neg(k), f(lo), z);
        return {k, z};
    }

    // fast_math::cosQuadrants.
    Value* cosQuadrants(Value* x) {
        const auto [q, z] = reduceByPeriod(x, 0.636619772367581343, 1.57079637050628662109375,
                                           -4.37113882867379e-08, -1.7151245100058819e-15);
        Value* quadrant = b.CreateFPToSI(q, b.getInt32Ty());
        quadrant = b.CreateAdd(quadrant, i(1));
        Value* zz = mul(z, z);
        Value* c =
            fma(mul(zz, zz),
                horner(zz, {2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2}),
                fma(f(-0.5), zz, f(1.0)));
        Value* s =
            fma(mul(z, zz), horner(zz, {-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1}), z);
        Value* odd = b.CreateICmpNE(b.CreateAnd(quadrant, i(1)), i(0));
        Value* r = sel(odd, c, s);
        Value* negate = b.CreateICmpNE(b.CreateAnd(quadrant, i(2)), i(0));
        Value* signedR = sel(negate, neg(r), r);
        Value* out = sel(isFinite(x), signedR, f(std::numeric_limits<float>::quiet_NaN()));
        return out;
    }

    // fast_math::sinHalfTurns: reduction by pi, one odd polynomial, the
    // sign from k's low bit.
    Value* sinHalfTurns(Value* x) {
        const auto [k, z] = reduceByPeriod(x, 0.318309886183790672, 3.1415927410125732,
                                           -8.742277657347586e-08, -3.4302490200117637e-15);
        Value* zz = mul(z, z);
        Value* s = fma(
            mul(z, zz),
            horner(zz, {2.6057805371e-6, -1.9809602236e-4, 8.3330664784e-3, -1.6666659713e-1}), z);
        Value* sign = b.CreateShl(b.CreateFPToSI(k, b.getInt32Ty()), i(31));
        Value* signedS = fromBits(b.CreateXor(bits(s), sign));
        Value* out = sel(isFinite(x), signedS, f(std::numeric_limits<float>::quiet_NaN()));
        return sel(b.CreateFCmpOEQ(x, f(0.0)), x, out);
    }

    Value* erf(Value* x) {
        Value* z = fabs(x);
        Value* x2 = mul(x, x);
        Value* small =
            mul(x, horner(x2, {7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3,
                               -2.685381193529856e-2, 1.128358514861418e-1, -3.761262582423300e-1,
                               1.128379165726710}));
        Value* t = div(f(1.0), fma(f(0.5), fmin(z, f(10.0)), f(1.0)));
        Value* q = horner(t, {0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
                              -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223});
        Value* zc = fmin(z, f(10.0));
        Value* erfc = mul(t, expCore(fmax(fma(neg(zc), zc, q), f(-104.0))));
        Value* big = sub(f(1.0), erfc);
        big = sel(b.CreateFCmpOLT(x, f(0.0)), b.CreateFNeg(big), big);
        return sel(isNan(x), x, sel(b.CreateFCmpOLT(z, f(1.0)), small, big));
    }
};

}  // namespace

Value* emitFastExp(IRBuilderBase& b, Value* x) { return Math{b}.exp(x); }
Value* emitFastLog(IRBuilderBase& b, Value* x) { return Math{b}.log(x); }
Value* emitFastTanh(IRBuilderBase& b, Value* x) { return Math{b}.tanh(x); }
Value* emitFastLogistic(IRBuilderBase& b, Value* x) { return Math{b}.logistic(x); }
Value* emitFastSin(IRBuilderBase& b, Value* x) { return Math{b}.sinHalfTurns(x); }
Value* emitFastCos(IRBuilderBase& b, Value* x) { return Math{b}.cosQuadrants(x); }
Value* emitFastErf(IRBuilderBase& b, Value* x) { return Math{b}.erf(x); }

}  // namespace hloscope::llvm_codegen
