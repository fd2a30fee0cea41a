// CHLO operations, decomposed into HLO the way StableHLO's
// chlo-legalize-to-stablehlo pass does (stablehlo/transforms/
// ChloLegalizeToStablehlo.cpp and ChloDecompositionPatterns*.td).
//
// Operations for which HLO has an opcode of its own map to it directly:
// chlo.acos/acosh/asin/asinh/atan/atanh/cosh/sinh/tan/erf and chlo.top_k
// (-> topk). Constants of the decompositions are scalar constants,
// broadcast where the operand is not a scalar.
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>

#include "core/stablehlo/stablehlo_literal.h"
#include "core/stablehlo/stablehlo_op_util.h"

namespace hloscope::stablehlo {
namespace {

using H = HloInstruction*;
using CD = ComparisonDirection;

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Small expression helper over HloBuilder.
struct Math {
    HloBuilder& b;
    H add(H x, H y) { return b.binary(HloOpcode::kAdd, x, y); }
    H sub(H x, H y) { return b.binary(HloOpcode::kSubtract, x, y); }
    H mul(H x, H y) { return b.binary(HloOpcode::kMultiply, x, y); }
    H div(H x, H y) { return b.binary(HloOpcode::kDivide, x, y); }
    H rem(H x, H y) { return b.binary(HloOpcode::kRemainder, x, y); }
    H pow(H x, H y) { return b.binary(HloOpcode::kPower, x, y); }
    H andOp(H x, H y) { return b.binary(HloOpcode::kAnd, x, y); }
    H orOp(H x, H y) { return b.binary(HloOpcode::kOr, x, y); }
    H neg(H x) { return b.unary(HloOpcode::kNegate, x); }
    H abs(H x) { return b.unary(HloOpcode::kAbs, x); }
    H log(H x) { return b.unary(HloOpcode::kLog, x); }
    H log1p(H x) { return b.unary(HloOpcode::kLog1p, x); }
    H exp(H x) { return b.unary(HloOpcode::kExp, x); }
    H sqrt(H x) { return b.unary(HloOpcode::kSqrt, x); }
    H floor(H x) { return b.unary(HloOpcode::kFloor, x); }
    H sin(H x) { return b.unary(HloOpcode::kSin, x); }
    H cos(H x) { return b.unary(HloOpcode::kCos, x); }
    H sign(H x) { return b.unary(HloOpcode::kSign, x); }
    H isFinite(H x) {
        Shape shape = x->shape();
        shape.setElementType(PrimitiveType::PRED);
        return b.add(HloOpcode::kIsFinite, shape, {x});
    }
    H c(double value, H like) { return b.constantLike(value, like); }
    H ci(int64_t value, H like) { return b.constantLikeInt(value, like); }
    H cmp(H x, H y, CD direction) { return b.compare(x, y, direction); }
    H sel(H p, H x, H y) { return b.select(p, x, y); }
    H isInf(H x) { return cmp(abs(x), c(kInf, x), CD::kEq); }
};

using Fn = std::function<H(Math&, const Values&)>;

bool isFloatType(const H x) { return primitive_util::isFloatingPoint(x->shape().elementType()); }

// Computes `fn` in f32 for narrower float types (materializeWithUpcast).
H withUpcast(Math& m, Values args, const Fn& fn) {
    PrimitiveType original = args.front()->shape().elementType();
    bool upcast = primitive_util::isFloatingPoint(original) && primitive_util::bitWidth(original) < 32;
    if (upcast)
        for (H& a : args) a = m.b.convert(a, PrimitiveType::F32);
    H result = fn(m, args);
    if (upcast) result = m.b.convert(result, original);
    return result;
}

H polynomial(Math& m, H x, const std::vector<double>& coefficients) {
    if (coefficients.empty()) return m.c(0.0, x);
    H poly = m.c(coefficients[0], x);
    for (size_t i = 1; i < coefficients.size(); ++i) poly = m.add(m.mul(poly, x), m.c(coefficients[i], x));
    return poly;
}

H chebyshev(Math& m, H x, const std::vector<double>& coefficients) {
    H b0 = m.c(0.0, x), b1 = m.c(0.0, x), b2 = m.c(0.0, x);
    for (double coefficient : coefficients) {
        b2 = b1;
        b1 = b0;
        b0 = m.mul(x, b1);
        b0 = m.sub(b0, b2);
        b0 = m.add(b0, m.c(coefficient, x));
    }
    H result = m.sub(b0, b2);
    return m.mul(result, m.c(0.5, x));
}

std::vector<double> asDoubles(std::initializer_list<float> values) {
    return std::vector<double>(values.begin(), values.end());
}

// --- Bessel I1e -----------------------------------------------------------

H besselI1e(Math& m, H x, const std::vector<double>& a, const std::vector<double>& bCoeffs) {
    H z = m.abs(x);
    H half = m.c(0.5, x), two = m.c(2.0, x), thirtyTwo = m.c(32.0, x), eight = m.c(8.0, x);
    H tmp = m.sub(m.mul(half, z), two);
    H xLe8 = m.mul(z, chebyshev(m, tmp, a));
    tmp = m.sub(m.div(thirtyTwo, z), two);
    H xGt8 = m.div(chebyshev(m, tmp, bCoeffs), m.sqrt(z));
    H isLe8 = m.cmp(z, eight, CD::kLe);
    return m.mul(m.sign(x), m.sel(isLe8, xLe8, xGt8));
}

H besselI1eF32(Math& m, const Values& args) {
    static const std::vector<double> kA = asDoubles(
        {9.38153738649577178388E-9f, -4.44505912879632808065E-8f, 2.00329475355213526229E-7f,
         -8.56872026469545474066E-7f, 3.47025130813767847674E-6f, -1.32731636560394358279E-5f,
         4.78156510755005422638E-5f, -1.61760815825896745588E-4f, 5.12285956168575772895E-4f,
         -1.51357245063125314899E-3f, 4.15642294431288815669E-3f, -1.05640848946261981558E-2f,
         2.47264490306265168283E-2f, -5.29459812080949914269E-2f, 1.02643658689847095384E-1f,
         -1.76416518357834055153E-1f, 2.52587186443633654823E-1f});
    static const std::vector<double> kB = asDoubles(
        {-3.83538038596423702205E-9f, -2.63146884688951950684E-8f, -2.51223623787020892529E-7f,
         -3.88256480887769039346E-6f, -1.10588938762623716291E-4f, -9.76109749136146840777E-3f,
         7.78576235018280120474E-1f});
    return besselI1e(m, args[0], kA, kB);
}

H besselI1eF64(Math& m, const Values& args) {
    static const std::vector<double> kA = {
        2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
        -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
        3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
        -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
        9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
        -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
        4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
        -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
        2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
        -1.76416518357834055153E-1, 2.52587186443633654823E-1};
    static const std::vector<double> kB = {
        7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
        -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
        -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
        4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
        -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
        3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
        -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
        -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
        7.78576235018280120474E-1};
    return besselI1e(m, args[0], kA, kB);
}

// --- erf / erfc -------------------------------------------------------------

H erfcF64ForMagnitudeGeOne(Math& m, H x) {
    const double kMaxlog = 7.09782712893383996843E2;
    static const std::vector<double> kP = {
        2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
        4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
        9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2};
    static const std::vector<double> kQ = {
        1.00000000000000000000E0, 1.32281951154744992508E1, 8.67072140885989742329E1,
        3.54937778887819891062E2, 9.75708501743205489753E2, 1.82390916687909736289E3,
        2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2};
    static const std::vector<double> kR = {
        5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
        6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0};
    static const std::vector<double> kS = {
        1.00000000000000000000E0, 2.26052863220117276590E0, 9.39603524938001434673E0,
        1.20489539808096656605E1, 1.70814450747565897222E1, 9.60896809063285878198E0,
        3.36907645100081516050E0};
    H z = m.neg(m.mul(x, x));
    H expZ = m.exp(z);
    H absX = m.abs(x);
    H approx18 = m.div(m.mul(expZ, polynomial(m, absX, kP)), polynomial(m, absX, kQ));
    H approx8Inf = m.div(m.mul(expZ, polynomial(m, absX, kR)), polynomial(m, absX, kS));
    H approx = m.sel(m.cmp(absX, m.c(8.0, x), CD::kLt), approx18, approx8Inf);
    H zero = m.c(0.0, x);
    H clamped = m.sel(m.cmp(z, m.c(-kMaxlog, x), CD::kLt), zero, approx);
    H xLtZero = m.cmp(x, zero, CD::kLt);
    return m.sel(xLtZero, m.sub(m.c(2.0, x), clamped), clamped);
}

H erfF64ForMagnitudeLeOne(Math& m, H x) {
    static const std::vector<double> kT = {9.60497373987051638749E0, 9.00260197203842689217E1,
                                           2.23200534594684319226E3, 7.00332514112805075473E3,
                                           5.55923013010394962768E4};
    static const std::vector<double> kU = {1.00000000000000000000E0, 3.35617141647503099647E1,
                                           5.21357949780152679795E2, 4.59432382970980127987E3,
                                           2.26290000613890934246E4, 4.92673942608635921086E4};
    H xSq = m.mul(x, x);
    return m.div(m.mul(x, polynomial(m, xSq, kT)), polynomial(m, xSq, kU));
}

H erfcF64(Math& m, const Values& args) {
    H x = args[0];
    H erfcApprox = erfcF64ForMagnitudeGeOne(m, x);
    H one = m.c(1.0, x);
    H erfBased = m.sub(one, erfF64ForMagnitudeLeOne(m, x));
    return m.sel(m.cmp(m.abs(x), one, CD::kLt), erfBased, erfcApprox);
}

H erfcF32ForMagnitudeGeOne(Math& m, H x) {
    const double kMaxlog = 88.72283905206835;
    static const std::vector<double> kP = asDoubles(
        {+2.326819970068386E-2f, -1.387039388740657E-1f, +3.687424674597105E-1f,
         -5.824733027278666E-1f, +6.210004621745983E-1f, -4.944515323274145E-1f,
         +3.404879937665872E-1f, -2.741127028184656E-1f, +5.638259427386472E-1f});
    static const std::vector<double> kR = asDoubles(
        {-1.047766399936249E+1f, +1.297719955372516E+1f, -7.495518717768503E+0f,
         +2.921019019210786E+0f, -1.015265279202700E+0f, +4.218463358204948E-1f,
         -2.820767439740514E-1f, +5.641895067754075E-1f});
    H xSq = m.mul(x, x);
    H z = m.neg(xSq);
    H absX = m.abs(x);
    H one = m.c(1.0, x);
    H reciprocalXSq = m.div(one, xSq);
    H expZ = m.exp(z);
    H expZMulOneDivAbsX = m.mul(expZ, m.div(one, absX));
    H two = m.c(2.0, x);
    H absXLtTwo = m.cmp(absX, two, CD::kLt);
    H poly = m.sel(absXLtTwo, polynomial(m, reciprocalXSq, kP), polynomial(m, reciprocalXSq, kR));
    H approx = m.mul(expZMulOneDivAbsX, poly);
    H zero = m.c(0.0, x);
    H clamped = m.sel(m.cmp(z, m.c(-kMaxlog, x), CD::kLt), zero, approx);
    H xLtZero = m.cmp(x, zero, CD::kLt);
    return m.sel(xLtZero, m.sub(two, clamped), clamped);
}

H erfF32ForMagnitudeLeOne(Math& m, H x) {
    static const std::vector<double> kT = asDoubles(
        {+7.853861353153693E-5f, -8.010193625184903E-4f, +5.188327685732524E-3f,
         -2.685381193529856E-2f, +1.128358514861418E-1f, -3.761262582423300E-1f,
         +1.128379165726710E+0f});
    return m.mul(x, polynomial(m, m.mul(x, x), kT));
}

H erfcF32(Math& m, const Values& args) {
    H x = args[0];
    H erfcApprox = erfcF32ForMagnitudeGeOne(m, x);
    H one = m.c(1.0, x);
    H erfBased = m.sub(one, erfF32ForMagnitudeLeOne(m, x));
    return m.sel(m.cmp(m.abs(x), one, CD::kLt), erfBased, erfcApprox);
}

// --- erf_inv ----------------------------------------------------------------

H erfInv32(Math& m, const Values& args) {
    static const float kLess5[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                   -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                   -0.00417768164f,  0.246640727f,    1.50140941f};
    static const float kGreater5[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                      -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                      0.00943887047f,   1.00167406f,     2.83297682f};
    H x = args[0];
    H w = m.neg(m.log1p(m.mul(x, m.neg(x))));
    H lt = m.cmp(w, m.c(5.0, x), CD::kLt);
    auto coefficient = [&](int i) { return m.sel(lt, m.c(kLess5[i], x), m.c(kGreater5[i], x)); };
    w = m.sel(lt, m.sub(w, m.c(2.5, x)), m.sub(m.sqrt(w), m.c(3.0, x)));
    H p = coefficient(0);
    for (int i = 1; i < 9; ++i) p = m.add(coefficient(i), m.mul(p, w));
    H result = m.mul(p, x);
    return m.sel(m.cmp(m.abs(x), m.c(1, x), CD::kEq), m.mul(x, m.c(kInf, x)), result);
}

H erfInv64(Math& m, const Values& args) {
    static const double kLess625[] = {
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17,   -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693,     1.6536545626831027356};
    static const double kLess16[] = {
        2.2137376921775787049e-09,  9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08,  1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06,  1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05,  2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703,  -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107,  0.005370914553590063617,   1.0052589676941592334,
        3.0838856104922207635};
    static const double kGreater16[] = {
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
        2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
        7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977,      4.8499064014085844221};
    H x = args[0];
    H w = m.neg(m.log1p(m.mul(x, m.neg(x))));
    H lt625 = m.cmp(w, m.c(6.25, x), CD::kLt);
    H lt16 = m.cmp(w, m.c(16, x), CD::kLt);
    auto coefficient = [&](int i) {
        H c = m.c(kLess625[i], x);
        if (i < 19) c = m.sel(lt625, c, m.c(kLess16[i], x));
        if (i < 17) c = m.sel(lt16, c, m.c(kGreater16[i], x));
        return c;
    };
    H sqrtW = m.sqrt(w);
    H wMinus3125 = m.sub(w, m.c(3.125, x));
    H select2 = m.sel(lt16, m.c(3.25, w), m.c(5.0, w));
    H select2Result = m.sub(sqrtW, select2);
    w = m.sel(lt625, wMinus3125, select2Result);
    H p = coefficient(0);
    for (int i = 1; i < 17; ++i) p = m.add(coefficient(i), m.mul(p, w));
    for (int i = 17; i < 19; ++i) p = m.sel(lt16, m.add(coefficient(i), m.mul(p, w)), p);
    for (int i = 19; i < 23; ++i) p = m.sel(lt625, m.add(coefficient(i), m.mul(p, w)), p);
    H result = m.mul(p, x);
    return m.sel(m.cmp(m.abs(x), m.c(1, x), CD::kEq), m.mul(x, m.c(kInf, x)), result);
}

// --- lgamma / digamma / zeta / polygamma -----------------------------------

constexpr double kLanczosGamma = 7;
constexpr double kBaseLanczosCoeff = 0.99999999999980993227684700473478;
constexpr double kLanczosCoefficients[] = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

H lgamma(Math& m, const Values& args) {
    H x = args[0];
    H half = m.c(0.5, x);
    H needToReflect = m.cmp(x, half, CD::kLt);
    H negX = m.neg(x);
    H one = m.c(1, x);
    H xSubOne = m.sub(x, one);
    H z = m.sel(needToReflect, negX, xSubOne);
    H a = m.c(kBaseLanczosCoeff, x);
    for (int i = 0; i < 8; ++i) {
        H coeff = m.c(kLanczosCoefficients[i], x);
        H oneBasedIndex = m.c(i + 1, x);
        a = m.add(a, m.div(coeff, m.add(z, oneBasedIndex)));
    }
    H lanczosPlusHalf = m.c(kLanczosGamma + 0.5, x);
    H t = m.add(lanczosPlusHalf, z);
    H logTerm = m.c(std::log(kLanczosGamma + 0.5), x);
    H log1pTerm = m.log1p(m.div(z, lanczosPlusHalf));
    H logT = m.add(logTerm, log1pTerm);
    H tDivLogT = m.div(t, logT);
    H sum = m.sub(m.add(z, half), tDivLogT);
    H r = m.mul(sum, logT);
    H logA = m.log(a);
    H result = m.add(m.add(m.c((std::log(2.0) + std::log(kPi)) / 2, x), r), logA);
    H abs = m.abs(x);
    H absFrac = m.sub(abs, m.floor(abs));
    H reduceAbsFrac = m.cmp(half, absFrac, CD::kLt);
    absFrac = m.sel(reduceAbsFrac, m.sub(one, absFrac), absFrac);
    H reflectionDenom = m.log(m.sin(m.mul(m.c(kPi, x), absFrac)));
    H reflection = m.sub(m.sub(m.c(std::log(kPi), x), reflectionDenom), result);
    H finiteDenom = m.isFinite(reflectionDenom);
    H negDenom = m.neg(reflectionDenom);
    reflection = m.sel(finiteDenom, reflection, negDenom);
    result = m.sel(needToReflect, reflection, result);
    return m.sel(m.isInf(x), m.c(kInf, x), result);
}

H digamma(Math& m, const Values& args) {
    H x = args[0];
    H half = m.c(0.5, x);
    H needToReflect = m.cmp(x, half, CD::kLt);
    H negX = m.neg(x);
    H one = m.c(1, x);
    H xSubOne = m.sub(x, one);
    H z = m.sel(needToReflect, negX, xSubOne);
    H zero = m.c(0.0, x);
    H a = m.c(kBaseLanczosCoeff, x);
    H aPrime = zero;
    for (int i = 0; i < 8; ++i) {
        H coeff = m.c(kLanczosCoefficients[i], x);
        H oneBasedIndex = m.c(i + 1, x);
        H zTerm = m.add(z, oneBasedIndex);
        aPrime = m.sub(aPrime, m.div(coeff, m.mul(zTerm, zTerm)));
        a = m.add(a, m.div(coeff, zTerm));
    }
    H lanczosPlusHalf = m.c(kLanczosGamma + 0.5, x);
    H t = m.add(lanczosPlusHalf, z);
    H logTerm = m.c(std::log(kLanczosGamma + 0.5), x);
    H log1pTerm = m.log1p(m.div(z, lanczosPlusHalf));
    H logT = m.add(logTerm, log1pTerm);
    H aPrimeDivA = m.div(aPrime, a);
    H lanczosGammaDivT = m.div(m.c(kLanczosGamma, x), t);
    H result = m.sub(m.add(logT, aPrimeDivA), lanczosGammaDivT);
    H reducedX = m.add(x, m.abs(m.floor(m.add(x, m.c(0.5, x)))));
    H pi = m.c(kPi, x);
    H piMulReducedX = m.mul(pi, reducedX);
    H cos = m.cos(piMulReducedX);
    H sin = m.sin(piMulReducedX);
    H reflection = m.sub(result, m.div(m.mul(pi, cos), sin));
    result = m.sel(needToReflect, reflection, result);
    H isLeZero = m.cmp(x, zero, CD::kLe);
    H isInt = m.cmp(x, m.floor(x), CD::kEq);
    H isPole = m.andOp(isLeZero, isInt);
    return m.sel(isPole, m.c(kNaN, x), result);
}

H zeta(Math& m, const Values& args) {
    H x = args[0];
    H q = args[1];
    constexpr int kTerms = 12;
    constexpr int kIters = 9;
    constexpr int kTwoTermsMinusOne = 2 * kTerms - 1;
    static const double kZetaCoeffs[kTerms] = {
        -7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
        1.1646782814350067249e14,  -2.950130727918164224e12, 7.47242496e10,
        -1.8924375803183791606e9,  47900160.0,               -1209600.0,
        30240.0,                   -720.0,                   12.0};
    H zero = m.c(0.0, q);
    H one = m.c(1.0, q);
    H acc = q;
    H qNegPower = zero;
    H negX = m.neg(x);
    H powerSum = m.pow(q, negX);
    for (int i = 0; i < kIters; ++i) {
        acc = m.add(acc, one);
        qNegPower = m.pow(acc, negX);
        powerSum = m.add(powerSum, qNegPower);
    }
    acc = m.add(acc, one);
    qNegPower = m.pow(acc, negX);
    H oneLikeX = m.c(1.0, x);
    H correction = m.div(m.mul(qNegPower, acc), m.sub(x, oneLikeX));
    H rsqrtAcc = m.div(one, m.mul(acc, acc));
    H hornerSum = zero;
    H hornerProduct = one;
    for (int i = 0; i < kTerms - 1; ++i) {
        H factorLhs = m.add(x, m.c(kTwoTermsMinusOne - 1 - 2 * i, x));
        H factorRhs = m.add(x, m.c(kTwoTermsMinusOne - 2 - 2 * i, x));
        hornerProduct = m.mul(factorLhs, factorRhs);
        hornerSum = m.mul(hornerProduct,
                          m.mul(rsqrtAcc, m.add(hornerSum, m.c(1. / kZetaCoeffs[i], acc))));
    }
    H tail = m.mul(qNegPower,
                   m.add(m.c(.5, qNegPower),
                         m.mul(m.div(x, acc), m.add(m.c(1. / kZetaCoeffs[kTerms - 1], acc), hornerSum))));
    H accurate = m.add(m.add(powerSum, correction), tail);
    double smallest = acc->shape().elementType() == PrimitiveType::F64
                          ? std::numeric_limits<double>::denorm_min()
                          : static_cast<double>(std::numeric_limits<float>::denorm_min());
    H output = m.sel(m.cmp(m.abs(qNegPower), m.mul(m.abs(powerSum), m.c(smallest, acc)), CD::kLt),
                     powerSum, accurate);
    H nan = m.c(kNaN, x);
    output = m.sel(m.cmp(x, oneLikeX, CD::kLt), nan, output);
    H qLeZero = m.cmp(q, zero, CD::kLe);
    H xNotInt = m.cmp(x, m.floor(x), CD::kNe);
    output = m.sel(m.andOp(qLeZero, xNotInt), nan, output);
    H inf = m.c(kInf, x);
    H qIsInt = m.cmp(q, m.floor(q), CD::kEq);
    H atPole = m.andOp(qLeZero, qIsInt);
    H two = m.c(2.0, x);
    H xIsInt = m.cmp(x, m.floor(x), CD::kEq);
    H xIsEven = m.cmp(m.rem(x, two), zero, CD::kEq);
    H xIsEvenInt = m.andOp(xIsInt, xIsEven);
    output = m.sel(atPole, m.sel(xIsEvenInt, inf, nan), output);
    return m.sel(m.cmp(x, one, CD::kEq), inf, output);
}

H polygamma(Math& m, const Values& args) {
    H n = args[0];
    H x = args[1];
    H one = m.c(1.0, x);
    H two = m.c(2.0, x);
    H sign = m.sub(m.mul(two, m.rem(n, two)), one);
    H nPlusOne = m.add(n, one);
    H expLgamma = m.exp(lgamma(m, {nPlusOne}));
    H z = zeta(m, {nPlusOne, x});
    H result = m.mul(m.mul(sign, expLgamma), z);
    H zero = m.c(0.0, x);
    H nEqZero = m.cmp(n, zero, CD::kEq);
    result = m.sel(nEqZero, digamma(m, {x}), result);
    H nonInt = m.cmp(n, m.floor(n), CD::kNe);
    H negative = m.cmp(n, zero, CD::kLt);
    return m.sel(m.orOp(nonInt, negative), m.c(kNaN, x), result);
}

// --- next_after -------------------------------------------------------------

StatusOr<H> nextAfter(OpContext& ctx, Math& m, H x, H y) {
    PrimitiveType type = x->shape().elementType();
    int bits = primitive_util::bitWidth(type);
    PrimitiveType intType = bits == 64   ? PrimitiveType::S64
                            : bits == 32 ? PrimitiveType::S32
                            : bits == 16 ? PrimitiveType::S16
                            : bits == 8  ? PrimitiveType::S8
                                         : PrimitiveType::PRIMITIVE_TYPE_INVALID;
    if (!primitive_util::isFloatingPoint(type) || intType == PrimitiveType::PRIMITIVE_TYPE_INVALID)
        return opError(ctx, "next_after needs a floating-point type of 8, 16, 32 or 64 bits");
    H xAsInt = m.b.bitcastConvert(x, intType);
    H yAsInt = m.b.bitcastConvert(y, intType);
    H nanInput = m.orOp(m.cmp(x, x, CD::kNe), m.cmp(y, y, CD::kNe));
    H resultForNanAsInt = m.b.bitcastConvert(m.c(kNaN, x), intType);
    int64_t signBit = bits == 64 ? std::numeric_limits<int64_t>::min() : int64_t{1} << (bits - 1);
    H signMask = m.ci(signBit, xAsInt);
    H negatedSignMask = m.ci(~signBit, xAsInt);
    H xAbs = m.andOp(xAsInt, negatedSignMask);
    H yAbs = m.andOp(yAsInt, negatedSignMask);
    H xAndYAreEqual = m.cmp(x, y, CD::kEq);
    H zero = m.ci(0, xAsInt);
    H xIsZero = m.cmp(xAbs, zero, CD::kEq);
    H yIsZero = m.cmp(yAbs, zero, CD::kEq);
    H xSign = m.andOp(xAsInt, signMask);
    H ySign = m.andOp(yAsInt, signMask);
    H one = m.ci(1, xAsInt);
    H resultForXZeroYNonZero = m.orOp(ySign, one);
    H signsDisagree = m.cmp(xSign, ySign, CD::kNe);
    H xMagnitudeLarger = m.cmp(xAbs, yAbs, CD::kGt);
    H smaller = m.orOp(xMagnitudeLarger, signsDisagree);
    H minusOne = m.ci(-1, xAsInt);
    H adjustment = m.sel(smaller, minusOne, one);
    H result = m.add(xAsInt, adjustment);
    result = m.sel(xIsZero, m.sel(yIsZero, yAsInt, resultForXZeroYNonZero), result);
    result = m.sel(xAndYAreEqual, yAsInt, result);
    result = m.sel(nanInput, resultForNanAsInt, result);
    return m.b.bitcastConvert(result, type);
}

// --- mulhi --------------------------------------------------------------------

PrimitiveType withBits(PrimitiveType type, int bits, bool isUnsigned) {
    std::string name = std::string(isUnsigned ? "u" : "s") + std::to_string(bits);
    return primitive_util::parse(name).value_or(PrimitiveType::PRIMITIVE_TYPE_INVALID);
}

H mulhiU64(Math& m, H lhs, H rhs) {
    H c32 = m.ci(32, lhs);
    H mask = m.ci(0xFFFFFFFFll, lhs);
    auto srl = [&](H a, H s) { return m.b.binary(HloOpcode::kShiftRightLogical, a, s); };
    H aHi = srl(lhs, c32);
    H bHi = srl(rhs, c32);
    H aLo = m.andOp(lhs, mask);
    H bLo = m.andOp(rhs, mask);
    H p0 = m.mul(aLo, bLo);
    H p1 = m.mul(aLo, bHi);
    H p2 = m.mul(aHi, bLo);
    H p3 = m.mul(aHi, bHi);
    H carryP0 = srl(p0, c32);
    H mid1 = m.add(p1, carryP0);
    H mid2 = m.add(p2, m.andOp(mid1, mask));
    return m.add(m.add(p3, srl(mid1, c32)), srl(mid2, c32));
}

StatusOr<H> mulhi(OpContext& ctx, Math& m, H lhs, H rhs) {
    PrimitiveType type = lhs->shape().elementType();
    if (!primitive_util::isInteger(type)) return opError(ctx, "mulhi needs integer operands");
    int bits = primitive_util::bitWidth(type);
    bool isUnsigned = primitive_util::isUnsignedInteger(type);
    if (bits < 64) {
        PrimitiveType wide = withBits(type, bits * 2, isUnsigned);
        if (wide == PrimitiveType::PRIMITIVE_TYPE_INVALID)
            return opError(ctx, "mulhi: no integer type twice as wide");
        H product = m.mul(m.b.convert(lhs, wide), m.b.convert(rhs, wide));
        H shifted = m.b.binary(isUnsigned ? HloOpcode::kShiftRightLogical
                                          : HloOpcode::kShiftRightArithmetic,
                               product, m.ci(bits, product));
        return m.b.convert(shifted, type);
    }
    if (isUnsigned) return mulhiU64(m, lhs, rhs);
    H ul = m.b.convert(lhs, PrimitiveType::U64);
    H ur = m.b.convert(rhs, PrimitiveType::U64);
    H hi = mulhiU64(m, ul, ur);
    H zeroU = m.ci(0, ur);
    H first = m.sel(m.cmp(lhs, m.ci(0, lhs), CD::kLt), ur, zeroU);
    H second = m.sel(m.cmp(rhs, m.ci(0, rhs), CD::kLt), ul, m.ci(0, ul));
    return m.b.convert(m.sub(m.sub(hi, first), second), type);
}

// --- broadcasting binary ops ------------------------------------------------

StatusOr<H> broadcastTo(OpContext& ctx, H operand, const Shape& result) {
    const Shape& in = operand->shape();
    if (in.dimensions() == result.dimensions()) return operand;
    Shape target = result;
    target.setElementType(in.elementType());
    target.clearLayout();
    std::vector<int64_t> dims;
    if (const MlirAttr* bd = ctx.op.attr("broadcast_dimensions"); bd != nullptr && in.rank() < result.rank()) {
        if (!flattenInts(*bd, dims)) return opError(ctx, "bad broadcast_dimensions");
    } else {
        for (int64_t i = 0; i < in.rank(); ++i) dims.push_back(result.rank() - in.rank() + i);
    }
    if (static_cast<int64_t>(dims.size()) != in.rank()) return opError(ctx, "operand rank does not match broadcast_dimensions");
    for (size_t i = 0; i < dims.size(); ++i) {
        int64_t size = in.dimensions(static_cast<int64_t>(i));
        if (dims[i] < 0 || dims[i] >= result.rank() ||
            (size != 1 && size != result.dimensions(dims[i])))
            return opError(ctx, "operand shape " + in.toString(false) + " does not broadcast to " +
                                    result.toString(false));
    }
    return broadcastInDim(ctx.b, operand, target, dims);
}

const std::unordered_map<std::string_view, HloOpcode>& directOps() {
    static const std::unordered_map<std::string_view, HloOpcode> kOps = {
        {"acos", HloOpcode::kAcos},   {"acosh", HloOpcode::kAcosh}, {"asin", HloOpcode::kAsin},
        {"asinh", HloOpcode::kAsinh}, {"atan", HloOpcode::kAtan},   {"atanh", HloOpcode::kAtanh},
        {"cosh", HloOpcode::kCosh},   {"sinh", HloOpcode::kSinh},   {"tan", HloOpcode::kTan},
        {"erf", HloOpcode::kErf},
    };
    return kOps;
}

const std::unordered_map<std::string_view, HloOpcode>& broadcastBinaryOps() {
    static const std::unordered_map<std::string_view, HloOpcode> kOps = {
        {"broadcast_add", HloOpcode::kAdd},
        {"broadcast_and", HloOpcode::kAnd},
        {"broadcast_atan2", HloOpcode::kAtan2},
        {"broadcast_complex", HloOpcode::kComplex},
        {"broadcast_divide", HloOpcode::kDivide},
        {"broadcast_maximum", HloOpcode::kMaximum},
        {"broadcast_minimum", HloOpcode::kMinimum},
        {"broadcast_multiply", HloOpcode::kMultiply},
        {"broadcast_or", HloOpcode::kOr},
        {"broadcast_power", HloOpcode::kPower},
        {"broadcast_remainder", HloOpcode::kRemainder},
        {"broadcast_shift_left", HloOpcode::kShiftLeft},
        {"broadcast_shift_right_arithmetic", HloOpcode::kShiftRightArithmetic},
        {"broadcast_shift_right_logical", HloOpcode::kShiftRightLogical},
        {"broadcast_subtract", HloOpcode::kSubtract},
        {"broadcast_xor", HloOpcode::kXor},
    };
    return kOps;
}

StatusOr<Values> lowerUnaryFloat(OpContext& ctx, Math& m, const Fn& f32, const Fn* f64) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    H x = ctx.operands[0];
    if (!isFloatType(x)) return opError(ctx, "expected a floating-point operand");
    if (f64 != nullptr && x->shape().elementType() == PrimitiveType::F64) return Values{(*f64)(m, {x})};
    return Values{withUpcast(m, {x}, f32)};
}

StatusOr<Values> lowerSquare(OpContext& ctx, Math& m) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    H z = ctx.operands[0];
    PrimitiveType type = z->shape().elementType();
    if (!primitive_util::isComplex(type)) return Values{m.mul(z, z)};
    Shape realShape = z->shape();
    realShape.setElementType(primitive_util::complexComponentType(type));
    H x = m.b.add(HloOpcode::kReal, realShape, {z});
    H y = m.b.add(HloOpcode::kImag, realShape, {z});
    H re = m.sel(m.andOp(m.isFinite(x), m.cmp(m.abs(x), m.abs(y), CD::kEq)), m.c(0, x),
                 m.mul(m.sub(x, y), m.add(x, y)));
    H im = m.mul(m.c(2, x), m.mul(x, y));
    return Values{m.b.add(HloOpcode::kComplex, z->shape(), {re, im})};
}

StatusOr<Values> lowerConstantLike(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
    const MlirAttr* value = ctx.op.attr("value");
    if (value == nullptr) return opError(ctx, "constant_like needs a value");
    const Shape& shape = ctx.resultShapes[0];
    std::string text;
    if (value->kind == MlirAttr::Kind::kDense) {
        auto s = denseScalarText(value->dense, shape.elementType());
        if (!s.isOk()) return Status(s.status()).withLocation(ctx.importer.location(value->pos));
        text = *s;
    } else if (value->kind == MlirAttr::Kind::kFloat) {
        text = formatScalar(shape.elementType(), std::strtod(value->number.c_str(), nullptr));
    } else if (value->kind == MlirAttr::Kind::kInt) {
        int64_t v = 0;
        parseIntegerToken(value->number, v);
        text = formatInteger(shape.elementType(), v);
    } else if (value->kind == MlirAttr::Kind::kBool) {
        text = formatInteger(shape.elementType(), value->boolValue ? 1 : 0);
    } else {
        return opError(ctx, "unsupported constant_like value " + value->text);
    }
    H c = ctx.b.constant(Shape::makeScalar(shape.elementType()), text);
    if (shape.isScalar()) return Values{c};
    return Values{ctx.b.broadcast(c, shape, {})};
}

StatusOr<Values> lowerTopK(OpContext& ctx) {
    HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
    HLO_RETURN_IF_ERROR(expectResults(ctx, 2));
    HLO_ASSIGN_OR_RETURN(int64_t k, intAttr(ctx, {"k"}, std::nullopt));
    H topk = ctx.b.add(HloOpcode::kTopK, resultShape(ctx), ctx.operands);
    topk->mutableExtra().topK = k;
    topk->mutableExtra().largest = true;
    return ctx.b.unpack(topk);
}

}  // namespace

StatusOr<std::vector<HloInstruction*>> lowerChloOp(OpContext& ctx) {
    std::string_view name = ctx.op.name;
    name.remove_prefix(5);  // "chlo."
    Math m{ctx.b};
    if (auto it = directOps().find(name); it != directOps().end()) {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
        HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
        return Values{ctx.b.add(it->second, ctx.resultShapes[0], ctx.operands)};
    }
    if (name == "erf_inv") {
        Fn f64 = erfInv64;
        return lowerUnaryFloat(ctx, m, erfInv32, &f64);
    }
    if (name == "erfc") {
        Fn f64 = erfcF64;
        return lowerUnaryFloat(ctx, m, erfcF32, &f64);
    }
    if (name == "lgamma") return lowerUnaryFloat(ctx, m, lgamma, nullptr);
    if (name == "digamma") return lowerUnaryFloat(ctx, m, digamma, nullptr);
    if (name == "bessel_i1e") {
        Fn f64 = besselI1eF64;
        return lowerUnaryFloat(ctx, m, besselI1eF32, &f64);
    }
    if (name == "polygamma" || name == "zeta" || name == "next_after" ||
        name == "broadcast_polygamma" || name == "broadcast_zeta" ||
        name == "broadcast_next_after") {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
        HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
        H a = ctx.operands[0], b = ctx.operands[1];
        if (name.starts_with("broadcast_")) {
            HLO_ASSIGN_OR_RETURN(a, broadcastTo(ctx, a, ctx.resultShapes[0]));
            HLO_ASSIGN_OR_RETURN(b, broadcastTo(ctx, b, ctx.resultShapes[0]));
            name.remove_prefix(10);
        }
        if (!isFloatType(a) || !isFloatType(b)) return opError(ctx, "expected floating-point operands");
        if (name == "next_after") {
            HLO_ASSIGN_OR_RETURN(H r, nextAfter(ctx, m, a, b));
            return Values{r};
        }
        return Values{withUpcast(m, {a, b}, name == "zeta" ? Fn(zeta) : Fn(polygamma))};
    }
    if (name == "square") return lowerSquare(ctx, m);
    if (name == "conj") {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
        H v = ctx.operands[0];
        if (!primitive_util::isComplex(v->shape().elementType())) return Values{v};
        Shape realShape = v->shape();
        realShape.setElementType(primitive_util::complexComponentType(v->shape().elementType()));
        H re = ctx.b.add(HloOpcode::kReal, realShape, {v});
        H im = ctx.b.add(HloOpcode::kImag, realShape, {v});
        return Values{ctx.b.add(HloOpcode::kComplex, v->shape(), {re, m.neg(im)})};
    }
    if (name == "is_inf" || name == "is_pos_inf" || name == "is_neg_inf") {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 1));
        H x = ctx.operands[0];
        if (!isFloatType(x)) return opError(ctx, "expected a floating-point operand");
        if (name == "is_inf") return Values{m.isInf(x)};
        return Values{m.cmp(x, m.c(name == "is_pos_inf" ? kInf : -kInf, x), CD::kEq)};
    }
    if (name == "constant_like" || name == "constant") {
        if (name == "constant") {
            HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
            const MlirAttr* value = ctx.op.attr("value");
            if (value == nullptr || value->kind != MlirAttr::Kind::kDense)
                return opError(ctx, "constant needs value = dense<...>");
            auto text = denseToLiteralText(value->dense, ctx.resultShapes[0]);
            if (!text.isOk()) return Status(text.status()).withLocation(ctx.importer.location(value->pos));
            return Values{ctx.b.constant(ctx.resultShapes[0], std::move(*text))};
        }
        return lowerConstantLike(ctx);
    }
    if (name == "mulhi" || name == "broadcast_mulhi") {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
        HLO_ASSIGN_OR_RETURN(H r, mulhi(ctx, m, ctx.operands[0], ctx.operands[1]));
        return Values{r};
    }
    if (name == "top_k") return lowerTopK(ctx);
    if (auto it = broadcastBinaryOps().find(name); it != broadcastBinaryOps().end()) {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
        HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
        HLO_ASSIGN_OR_RETURN(H a, broadcastTo(ctx, ctx.operands[0], ctx.resultShapes[0]));
        HLO_ASSIGN_OR_RETURN(H b, broadcastTo(ctx, ctx.operands[1], ctx.resultShapes[0]));
        return Values{ctx.b.add(it->second, ctx.resultShapes[0], {a, b})};
    }
    if (name == "broadcast_compare") {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 2));
        HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
        auto direction = parseComparisonDirection(enumAttr(ctx, {"comparison_direction"}));
        if (!direction) return opError(ctx, "broadcast_compare needs comparison_direction");
        HLO_ASSIGN_OR_RETURN(H a, broadcastTo(ctx, ctx.operands[0], ctx.resultShapes[0]));
        HLO_ASSIGN_OR_RETURN(H b, broadcastTo(ctx, ctx.operands[1], ctx.resultShapes[0]));
        std::string type = enumAttr(ctx, {"compare_type"});
        ComparisonType ct = type == "TOTALORDER" ? ComparisonType::kTotalOrder : ComparisonType::kDefault;
        return Values{m.b.compare(a, b, *direction, ct)};
    }
    if (name == "broadcast_select") {
        HLO_RETURN_IF_ERROR(expectOperands(ctx, 3));
        HLO_RETURN_IF_ERROR(expectResults(ctx, 1));
        Values ops;
        for (H operand : ctx.operands) {
            HLO_ASSIGN_OR_RETURN(H v, broadcastTo(ctx, operand, ctx.resultShapes[0]));
            ops.push_back(v);
        }
        return Values{m.sel(ops[0], ops[1], ops[2])};
    }
    return opUnimplemented(ctx, "CHLO operation '" + ctx.op.name +
                                    "' has no HLO decomposition here");
}

}  // namespace hloscope::stablehlo
