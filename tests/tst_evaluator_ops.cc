// The evaluator's linear-algebra and reduction families: dot (batch,
// contracting on any dimension, mixed types, ragged, scaled), convolution
// (stride, padding, dilations, reversal, feature and batch groups),
// reduce (multi-dimension, variadic, NaN, empty), reduce-window,
// select-and-scatter, sort, scan, gather/scatter (XLA's documented examples,
// batching dimensions, clamping, skipped windows), topk, batch norm, fft, cholesky and
// triangular-solve, on hand-written modules with values worked out by hand.
// Larger dots and convolutions are checked bitwise against naive loops that
// accumulate in the same order.
#include <QTest>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "tests/evaluator_test_util.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"

using namespace hloscope;

namespace {

std::string entry(const std::string& body, const std::string& computations = {}) {
    return "HloModule m\n\n" + computations + "\nENTRY e {\n" + body + "\n}\n";
}

const char* const kAddF32 =
    "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT r = f32[] add(a, b)\n}\n";
const char* const kMaxF32 =
    "max_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT r = f32[] maximum(a, b)\n}\n";

using hloscope::testing::evaluateText;
using hloscope::testing::literal;
using hloscope::testing::mismatch;

// Elementwise |got - want| <= tolerance (complex values componentwise).
std::string mismatchNear(const std::string& text, const std::string& expected, double tolerance) {
    auto result = evaluateText(text);
    if (!result.isOk()) return "evaluation failed: " + result.status().toString();
    Literal want = literal(expected);
    if (result->elementType() != want.elementType() ||
        result->shape().dimensions() != want.shape().dimensions())
        return "got " + result->toString() + "\nwant " + want.toString();
    for (int64_t i = 0; i < want.elementCount(); ++i) {
        std::complex<double> g = result->getAsComplex(i), w = want.getAsComplex(i);
        if (std::abs(g.real() - w.real()) > tolerance || std::abs(g.imag() - w.imag()) > tolerance)
            return "element " + std::to_string(i) + ": got " + result->toString() + "\nwant " +
                   want.toString();
    }
    return {};
}

// Empty when `text` evaluates to an array of shape `shape` (e.g. empty results).
std::string shapeMismatch(const std::string& text, const std::vector<Literal>& arguments,
                          const Shape& shape) {
    auto result = evaluateText(text, arguments);
    if (!result.isOk()) return "evaluation failed: " + result.status().toString();
    if (!result->shape().compatible(shape))
        return "got shape " + result->shape().toString() + ", want " + shape.toString();
    return {};
}

Literal iotaF32(std::vector<int64_t> dims, float scale, float offset) {
    Literal lit(Shape::makeArray(PrimitiveType::F32, std::move(dims)));
    auto data = lit.data<float>();
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<float>(static_cast<int64_t>(i * 7919 % 1009) - 504) * scale + offset;
    return lit;
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

class TestEvaluatorOps : public QObject {
    Q_OBJECT
private slots:
    void dotMatrix();
    void dotBatchAndNonLastContracting();
    void dotMixedTypes();
    void dotZeroSized();
    void dotLargeMatchesNaiveLoop();
    void raggedDot();
    void scaledDot();
    void convolutionStridePadding();
    void convolutionDilationAndReversal();
    void convolutionGroups();
    void convolutionMatchesDirectLoop();
    void reduceMultiDimension();
    void reduceVariadicArgmax();
    void reduceEdgeCases();
    void reduceWindow();
    void selectAndScatter();
    void sort();
    void gather();
    void scatter();
    void topk();
    void batchNorm();
    void scan();
    void fft();
    void choleskyAndTriangularSolve();
    void errors();
};

void TestEvaluatorOps::dotMatrix() {
    EXPECT_EVAL(entry("a = f32[2,3] constant({{1,2,3},{4,5,6}})\n"
                      "b = f32[3,2] constant({{7,8},{9,10},{11,12}})\n"
                      "ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
                "f32[2,2] {{58,64},{139,154}}");
    // Contracting on lhs dim 0 and rhs dim 1: result[m][n] = sum_k a[k][m] b[n][k].
    EXPECT_EVAL(entry("a = f32[3,2] constant({{1,2},{3,4},{5,6}})\n"
                      "b = f32[2,3] constant({{1,0,1},{0,1,0}})\n"
                      "ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={0}, "
                      "rhs_contracting_dims={1}"),
                "f32[2,2] {{6,3},{8,4}}");
    // Outer product (no contracting dimensions), f64 and s32.
    EXPECT_EVAL(entry("a = f64[2] constant({1,2})\nb = f64[3] constant({3,4,5})\n"
                      "ROOT d = f64[2,3] dot(a, b)"),
                "f64[2,3] {{3,4,5},{6,8,10}}");
    EXPECT_EVAL(entry("a = s32[2,2] constant({{1,-2},{3,4}})\nb = s32[2] constant({5,6})\n"
                      "ROOT d = s32[2] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
                "s32[2] {-7,39}");
    // c64: (1+i)(1-i) + (2)(i) = 2 + 2i.
    EXPECT_EVAL(entry("a = c64[2] constant({(1,1), (2,0)})\nb = c64[2] constant({(1,-1), (0,1)})\n"
                      "ROOT d = c64[] dot(a, b), lhs_contracting_dims={0}, "
                      "rhs_contracting_dims={0}"),
                "c64[] (2, 2)");
}

void TestEvaluatorOps::dotBatchAndNonLastContracting() {
    // lhs [b,k,m], rhs [b,k]: result[b][m] = sum_k lhs[b][k][m] * rhs[b][k].
    EXPECT_EVAL(entry("a = f32[2,3,2] constant({{{1,2},{3,4},{5,6}},{{1,0},{0,1},{1,1}}})\n"
                      "b = f32[2,3] constant({{1,1,1},{2,3,4}})\n"
                      "ROOT d = f32[2,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                      "lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
                "f32[2,2] {{9,12},{6,7}}");
    // Batch dimension last on the rhs; result dims: batch, lhs free, rhs free.
    EXPECT_EVAL(entry("a = f32[2,1,2] constant({{{1,2}},{{3,4}}})\n"
                      "b = f32[3,2,2] constant({{{1,10},{1,1}},{{0,0},{1,0}},{{2,20},{0,1}}})\n"
                      "ROOT d = f32[2,1,3] dot(a, b), lhs_batch_dims={2}, rhs_batch_dims={1}, "
                      "lhs_contracting_dims={0}, rhs_contracting_dims={2}"),
                // batch j: sum_k a[k][0][j] * b[n][j][k].
                // j=0: a[.][0][0]={1,3}; b[0][n]={{1,10},{0,0},{2,20}} -> {31,0,62}
                // j=1: a[.][0][1]={2,4}; b[1][n]={{1,1},{1,0},{0,1}} -> {6,2,4}
                "f32[2,1,3] {{{31,0,62}},{{6,2,4}}}");
}

void TestEvaluatorOps::dotMixedTypes() {
    EXPECT_EVAL(entry("a = bf16[2] constant({1.5, 2})\nb = bf16[2] constant({2, 0.25})\n"
                      "ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, "
                      "rhs_contracting_dims={0}"),
                "f32[] 3.5");
    // s8 x s8 -> s32 accumulates wide: 100*100 + 100*100.
    EXPECT_EVAL(entry("a = s8[2] constant({100, 100})\nb = s8[2] constant({100, -100})\n"
                      "c = s8[2] constant({100, 100})\n"
                      "d1 = s32[] dot(a, c), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                      "d2 = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                      "ROOT t = (s32[], s32[]) tuple(d1, d2)"),
                "(s32[], s32[]) (20000, 0)");
    // bf16 output accumulates in f32: 256 + 1 + 1 = 258 (sequential bf16
    // rounding would give 256).
    EXPECT_EVAL(entry("a = bf16[3] constant({256, 1, 1})\nb = bf16[3] constant({1, 1, 1})\n"
                      "ROOT d = bf16[] dot(a, b), lhs_contracting_dims={0}, "
                      "rhs_contracting_dims={0}"),
                "bf16[] 258");
    // s32 output wraps.
    EXPECT_EVAL(entry("a = s32[2] constant({65536, 65536})\nb = s32[2] constant({32768, 32768})\n"
                      "ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, "
                      "rhs_contracting_dims={0}"),
                "s32[] 0");
}

void TestEvaluatorOps::dotZeroSized() {
    EXPECT_EVAL(entry("a = f32[2,0] parameter(0)\nb = f32[0,3] parameter(1)\n"
                      "ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
                "f32[2,3] {{0,0,0},{0,0,0}}",
                {Literal(Shape::makeArray(PrimitiveType::F32, {2, 0})),
                 Literal(Shape::makeArray(PrimitiveType::F32, {0, 3}))});
    std::string why = shapeMismatch(
        entry("a = f32[0,4] parameter(0)\nb = f32[4,3] parameter(1)\n"
              "ROOT d = f32[0,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
        {Literal(Shape::makeArray(PrimitiveType::F32, {0, 4})),
         Literal(Shape::makeArray(PrimitiveType::F32, {4, 3}))},
        Shape::makeArray(PrimitiveType::F32, {0, 3}));
    QVERIFY2(why.empty(), why.c_str());
}

void TestEvaluatorOps::dotLargeMatchesNaiveLoop() {
    // Sizes that cross the GEMM's register tiles and its k blocks; the lhs
    // is contracted on its first dimension (strided packing) and the batch
    // dimension sits in the middle of the rhs (transposed copy).
    const int64_t batch = 2, m = 37, n = 29, k = 300;
    Literal lhs = iotaF32({k, batch, m}, 0.01f, 0.25f);   // [k][b][m]
    Literal rhs = iotaF32({n, batch, k}, 0.003f, -0.5f);  // [n][b][k]
    auto result = evaluateText(
        entry("a = f32[300,2,37] parameter(0)\nb = f32[29,2,300] parameter(1)\n"
              "ROOT d = f32[2,37,29] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={1}, "
              "lhs_contracting_dims={0}, rhs_contracting_dims={2}"),
        {lhs, rhs});
    QVERIFY2(result.isOk(), result.status().toString().c_str());
    auto a = lhs.data<float>();
    auto b = rhs.data<float>();
    auto c = result->data<float>();
    int64_t mismatches = 0;
    for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                float sum = 0;
                for (int64_t p = 0; p < k; ++p)
                    sum += a[static_cast<size_t>((p * batch + bi) * m + i)] *
                           b[static_cast<size_t>((j * batch + bi) * k + p)];
                if (sum != c[static_cast<size_t>((bi * m + i) * n + j)]) ++mismatches;
            }
    QCOMPARE(mismatches, int64_t(0));

    // f64 through the same kernel.
    Literal lhs64 = *iotaF32({5, 9}, 0.5f, 1.0f).convert(PrimitiveType::F64);
    Literal rhs64 = *iotaF32({9, 7}, 0.25f, 0.0f).convert(PrimitiveType::F64);
    auto r64 = evaluateText(entry("a = f64[5,9] parameter(0)\nb = f64[9,7] parameter(1)\n"
                                  "ROOT d = f64[5,7] dot(a, b), lhs_contracting_dims={1}, "
                                  "rhs_contracting_dims={0}"),
                            {lhs64, rhs64});
    QVERIFY2(r64.isOk(), r64.status().toString().c_str());
    for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 7; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < 9; ++p)
                sum += lhs64.getAsDouble(i * 9 + p) * rhs64.getAsDouble(p * 7 + j);
            QCOMPARE(r64->getAsDouble(i * 7 + j), sum);
        }
}

void TestEvaluatorOps::raggedDot() {
    // Ragged non-contracting: rows 0 | 1,2 | (3 in no group -> zeros).
    EXPECT_EVAL(entry("a = f32[4,2] constant({{1,2},{3,4},{5,6},{7,8}})\n"
                      "b = f32[2,2,3] constant({{{1,0,0},{0,1,0}},{{1,1,1},{1,1,1}}})\n"
                      "g = s32[2] constant({1, 2})\n"
                      "ROOT d = f32[4,3] ragged-dot(a, b, g), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}"),
                "f32[4,3] {{1,2,0},{7,7,7},{11,11,11},{0,0,0}}");
    // Ragged contracting: one result per group over its slice of k.
    EXPECT_EVAL(entry("a = f32[2,4] constant({{1,2,3,4},{1,1,1,1}})\n"
                      "b = f32[4,2] constant({{1,0},{0,1},{1,1},{2,0}})\n"
                      "g = s32[2] constant({1, 3})\n"
                      "ROOT d = f32[2,2,2] ragged-dot(a, b, g), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}, lhs_ragged_dims={1}"),
                "f32[2,2,2] {{{1,0},{1,0}},{{11,5},{3,2}}}");
}

void TestEvaluatorOps::scaledDot() {
    // lhs scale blocks of 2 along k; rhs scale per element.
    EXPECT_EVAL(entry("a = f32[2,4] constant({{1,1,1,1},{1,2,3,4}})\n"
                      "b = f32[4,1] constant({{1},{1},{1},{1}})\n"
                      "sa = f32[2,2] constant({{1,2},{10,100}})\n"
                      "sb = f32[4,1] constant({{1},{1},{2},{2}})\n"
                      "ROOT d = f32[2,1] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
                "f32[2,1] {{10},{1430}}");
}

void TestEvaluatorOps::convolutionStridePadding() {
    // 1-D, stride 2, padding 1 each side: windows {0,1,2}, {2,3,4}, {4,5,0}.
    EXPECT_EVAL(entry("x = f32[1,5,1] constant({{{1},{2},{3},{4},{5}}})\n"
                      "k = f32[3,1,1] constant({{{1}},{{2}},{{3}}})\n"
                      "ROOT c = f32[1,3,1] convolution(x, k), window={size=3 stride=2 pad=1_1}, "
                      "dim_labels=b0f_0io->b0f"),
                "f32[1,3,1] {{{8},{20},{14}}}");
    // 2-D NCHW, 2x2 kernel, stride 1: sums of 2x2 blocks weighted 1,2,3,4.
    EXPECT_EVAL(entry("x = f32[1,1,2,3] constant({{{{1,2,3},{4,5,6}}}})\n"
                      "k = f32[1,1,2,2] constant({{{{1,2},{3,4}}}})\n"
                      "ROOT c = f32[1,1,1,2] convolution(x, k), window={size=2x2}, "
                      "dim_labels=bf01_oi01->bf01"),
                "f32[1,1,1,2] {{{{37,47}}}}");
    // Integer convolution.
    EXPECT_EVAL(entry("x = s32[1,3,1] constant({{{1},{2},{3}}})\n"
                      "k = s32[2,1,1] constant({{{10}},{{1}}})\n"
                      "ROOT c = s32[1,2,1] convolution(x, k), window={size=2}, "
                      "dim_labels=b0f_0io->b0f"),
                "s32[1,2,1] {{{12},{23}}}");
}

void TestEvaluatorOps::convolutionDilationAndReversal() {
    // lhs_dilate=2: 1 _ 2 _ 3 with a {1,1} kernel -> {1,2,2,3}.
    EXPECT_EVAL(entry("x = f32[1,3,1] constant({{{1},{2},{3}}})\n"
                      "k = f32[2,1,1] constant({{{1}},{{1}}})\n"
                      "ROOT c = f32[1,4,1] convolution(x, k), window={size=2 lhs_dilate=2}, "
                      "dim_labels=b0f_0io->b0f"),
                "f32[1,4,1] {{{1},{2},{2},{3}}}");
    // rhs_dilate=2: taps 0 and 2 -> x0 + 10 x2, ...
    EXPECT_EVAL(entry("x = f32[1,5,1] constant({{{1},{2},{3},{4},{5}}})\n"
                      "k = f32[2,1,1] constant({{{1}},{{10}}})\n"
                      "ROOT c = f32[1,3,1] convolution(x, k), window={size=2 rhs_dilate=2}, "
                      "dim_labels=b0f_0io->b0f"),
                "f32[1,3,1] {{{31},{42},{53}}}");
    // Reversal: kernel read backwards -> 10 x0 + x1, ...
    EXPECT_EVAL(entry("x = f32[1,3,1] constant({{{1},{2},{3}}})\n"
                      "k = f32[2,1,1] constant({{{1}},{{10}}})\n"
                      "ROOT c = f32[1,2,1] convolution(x, k), window={size=2 rhs_reversal=1}, "
                      "dim_labels=b0f_0io->b0f"),
                "f32[1,2,1] {{{12},{23}}}");
}

void TestEvaluatorOps::convolutionGroups() {
    // feature_group_count=2: out 0 = 1*1 + 2*2, out 1 = 3*10 + 4*20.
    EXPECT_EVAL(entry("x = f32[1,1,4] constant({{{1,2,3,4}}})\n"
                      "k = f32[1,2,2] constant({{{1,10},{2,20}}})\n"
                      "ROOT c = f32[1,1,2] convolution(x, k), window={size=1}, "
                      "dim_labels=b0f_0io->b0f, feature_group_count=2"),
                "f32[1,1,2] {{{5,110}}}");
    // batch_group_count=2: output feature o reads input batch o.
    EXPECT_EVAL(entry("x = f32[2,1,1] constant({{{3}},{{5}}})\n"
                      "k = f32[1,1,2] constant({{{7,11}}})\n"
                      "ROOT c = f32[1,1,2] convolution(x, k), window={size=1}, "
                      "dim_labels=b0f_0io->b0f, batch_group_count=2"),
                "f32[1,1,2] {{{21,55}}}");
}

void TestEvaluatorOps::convolutionMatchesDirectLoop() {
    // NCHW 2-D with everything at once; checked bitwise against a direct
    // loop accumulating in XLA's order (window positions, then features).
    const int64_t B = 2, C = 4, H = 5, W = 6, O = 6, KH = 3, KW = 2, G = 2;
    Literal x = iotaF32({B, C, H, W}, 0.125f, 0.5f);
    Literal k = iotaF32({O, C / G, KH, KW}, 0.0625f, -0.25f);
    const char* window =
        "size=3x2 stride=2x1 pad=1_1x0_2 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1";
    // Output sizes: H: (5 + 2 - 5) / 2 + 1 = 2; W: (11 + 2 - 2) / 1 + 1 = 12.
    const int64_t OH = 2, OW = 12;
    auto result = evaluateText(
        entry(std::string("x = f32[2,4,5,6] parameter(0)\nk = f32[6,2,3,2] parameter(1)\n"
                          "ROOT c = f32[2,6,2,12] convolution(x, k), window={") +
              window + "}, dim_labels=bf01_oi01->bf01, feature_group_count=2"),
        {x, k});
    QVERIFY2(result.isOk(), result.status().toString().c_str());
    auto xd = x.data<float>();
    auto kd = k.data<float>();
    auto out = result->data<float>();
    int64_t mismatches = 0;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                    const int64_t g = o / (O / G);
                    float sum = 0;
                    for (int64_t wh = 0; wh < KH; ++wh)
                        for (int64_t ww = 0; ww < KW; ++ww) {
                            const int64_t ph =
                                oh * 2 - 1 + wh * 2;             // stride 2, pad 1, rhs_dilate 2
                            const int64_t pw = ow * 1 - 0 + ww;  // lhs_dilate 2
                            if (ph < 0 || ph >= H || pw < 0 || pw % 2 != 0 || pw / 2 >= W) continue;
                            const int64_t kw = KW - 1 - ww;  // reversed
                            for (int64_t c = 0; c < C / G; ++c)
                                sum += xd[static_cast<size_t>(
                                           ((b * C + g * (C / G) + c) * H + ph) * W + pw / 2)] *
                                       kd[static_cast<size_t>(((o * (C / G) + c) * KH + wh) * KW +
                                                              kw)];
                        }
                    if (sum != out[static_cast<size_t>(((b * O + o) * OH + oh) * OW + ow)])
                        ++mismatches;
                }
    QCOMPARE(mismatches, int64_t(0));
}

void TestEvaluatorOps::reduceMultiDimension() {
    EXPECT_EVAL(entry("x = f32[2,3,2] constant({{{1,2},{3,4},{5,6}},{{7,8},{9,10},{11,12}}})\n"
                      "z = f32[] constant(0)\n"
                      "ROOT r = f32[3] reduce(x, z), dimensions={0,2}, to_apply=add_f32",
                      kAddF32),
                "f32[3] {18,26,34}");
    EXPECT_EVAL(entry("x = f32[2,3] constant({{1,5,2},{7,0,3}})\n"
                      "z = f32[] constant(-inf)\n"
                      "ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=max_f32",
                      kMaxF32),
                "f32[2] {5,7}");
    // A reducer that is not a single binary op takes the generic path, in
    // order: acc = 2 * acc + x -> 1, 4, 11.
    EXPECT_EVAL(entry("x = f32[3] constant({1,2,3})\nz = f32[] constant(0)\n"
                      "ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=f",
                      "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                      " two = f32[] constant(2)\n m = f32[] multiply(a, two)\n"
                      " ROOT r = f32[] add(m, b)\n}\n"),
                "f32[] 11");
    // u8 add wraps; s32 multiply.
    EXPECT_EVAL(entry("x = u8[3] constant({200,100,1})\nz = u8[] constant(0)\n"
                      "ROOT r = u8[] reduce(x, z), dimensions={0}, to_apply=f",
                      "f {\n a = u8[] parameter(0)\n b = u8[] parameter(1)\n"
                      " ROOT r = u8[] add(a, b)\n}\n"),
                "u8[] 45");
}

void TestEvaluatorOps::reduceVariadicArgmax() {
    const char* argmax =
        "argmax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
        "  bv = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  gt = pred[] compare(av, bv), direction=GT\n"
        "  eq = pred[] compare(av, bv), direction=EQ\n"
        "  lt = pred[] compare(ai, bi), direction=LT\n"
        "  tie = pred[] and(eq, lt)\n  keep = pred[] or(gt, tie)\n"
        "  v = f32[] select(keep, av, bv)\n  i = s32[] select(keep, ai, bi)\n"
        "  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n";
    EXPECT_EVAL(entry("x = f32[2,5] constant({{1,5,3,5,2},{0,-1,4,4,9}})\n"
                      "i = s32[2,5] iota(), iota_dimension=1\n"
                      "mv = f32[] constant(-inf)\nmi = s32[] constant(-1)\n"
                      "ROOT r = (f32[2], s32[2]) reduce(x, i, mv, mi), dimensions={1}, "
                      "to_apply=argmax",
                      argmax),
                "(f32[2], s32[2]) ({5, 9}, {1, 4})");
}

void TestEvaluatorOps::reduceEdgeCases() {
    // NaN propagates through max.
    EXPECT_EVAL(entry("x = f32[3] constant({1, nan, 3})\nz = f32[] constant(-inf)\n"
                      "ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=max_f32",
                      kMaxF32),
                "f32[] nan");
    // Zero-sized reduced dimension: the init value; zero-sized kept one: empty.
    EXPECT_EVAL(entry("x = f32[2,0] parameter(0)\nz = f32[] constant(7)\n"
                      "ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add_f32",
                      kAddF32),
                "f32[2] {7, 7}", {Literal(Shape::makeArray(PrimitiveType::F32, {2, 0}))});
    std::string why =
        shapeMismatch(entry("x = f32[0,3] parameter(0)\nz = f32[] constant(1)\n"
                            "ROOT r = f32[0] reduce(x, z), dimensions={1}, to_apply=add_f32",
                            kAddF32),
                      {Literal(Shape::makeArray(PrimitiveType::F32, {0, 3}))},
                      Shape::makeArray(PrimitiveType::F32, {0}));
    QVERIFY2(why.empty(), why.c_str());
    // Floating add reductions accumulate in double (XLA's fast path):
    // 1e8 + 1 - 1e8 = 1, where f32 steps would give 0.
    EXPECT_EVAL(entry("x = f32[3] constant({1e8, 1, -1e8})\nz = f32[] constant(0)\n"
                      "ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add_f32",
                      kAddF32),
                "f32[] 1");
    // bf16 add: double accumulation, one rounding (258, not 256); bf16 max.
    EXPECT_EVAL(entry("x = bf16[3] constant({256, 1, 1})\nz = bf16[] constant(0)\n"
                      "ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=f",
                      "f {\n a = bf16[] parameter(0)\n b = bf16[] parameter(1)\n"
                      " ROOT r = bf16[] add(a, b)\n}\n"),
                "bf16[] 258");
    EXPECT_EVAL(entry("x = bf16[3] constant({-1, 2.5, 2})\nz = bf16[] constant(-inf)\n"
                      "ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=f",
                      "f {\n a = bf16[] parameter(0)\n b = bf16[] parameter(1)\n"
                      " ROOT r = bf16[] maximum(b, a)\n}\n"),
                "bf16[] 2.5");
    // pred and-reduction per row.
    EXPECT_EVAL(
        entry("x = pred[2,2] constant({{true,false},{true,true}})\nz = pred[] constant(true)\n"
              "ROOT r = pred[2] reduce(x, z), dimensions={1}, to_apply=f",
              "f {\n a = pred[] parameter(0)\n b = pred[] parameter(1)\n"
              " ROOT r = pred[] and(a, b)\n}\n"),
        "pred[2] {false, true}");
    // Reducing every dimension of a rank-3 array; reducing none.
    EXPECT_EVAL(entry("x = f32[2,2,2] constant({{{1,2},{3,4}},{{5,6},{7,8}}})\n"
                      "z = f32[] constant(0)\n"
                      "a = f32[] reduce(x, z), dimensions={0,1,2}, to_apply=add_f32\n"
                      "b = f32[2,2,2] reduce(x, z), dimensions={}, to_apply=add_f32\n"
                      "ROOT t = (f32[], f32[2,2,2]) tuple(a, b)",
                      kAddF32),
                "(f32[], f32[2,2,2]) (36, {{{1,2},{3,4}},{{5,6},{7,8}}})");
}

void TestEvaluatorOps::reduceWindow() {
    // Padding contributes nothing: windows [pad,1] [2,3] [4,pad].
    EXPECT_EVAL(entry("x = f32[4] constant({1,2,3,4})\nz = f32[] constant(-inf)\n"
                      "ROOT r = f32[3] reduce-window(x, z), window={size=2 stride=2 pad=1_1}, "
                      "to_apply=max_f32",
                      kMaxF32),
                "f32[3] {1,3,4}");
    EXPECT_EVAL(entry("x = f32[4] constant({1,2,3,4})\nz = f32[] constant(0)\n"
                      "ROOT r = f32[3] reduce-window(x, z), window={size=2 stride=2 pad=1_1}, "
                      "to_apply=add_f32",
                      kAddF32),
                "f32[3] {1,5,4}");
    EXPECT_EVAL(entry("x = f32[2,3] constant({{1,2,3},{4,5,6}})\nz = f32[] constant(0)\n"
                      "ROOT r = f32[1,2] reduce-window(x, z), window={size=2x2}, to_apply=add_f32",
                      kAddF32),
                "f32[1,2] {{12,16}}");
    // Base dilation 2: 1 _ 2 _ 3; window dilation 2: taps 0 and 2.
    EXPECT_EVAL(entry("x = f32[3] constant({1,2,3})\nz = f32[] constant(0)\n"
                      "ROOT r = f32[4] reduce-window(x, z), window={size=2 lhs_dilate=2}, "
                      "to_apply=add_f32",
                      kAddF32),
                "f32[4] {1,2,2,3}");
    EXPECT_EVAL(entry("x = f32[4] constant({1,2,3,4})\nz = f32[] constant(0)\n"
                      "ROOT r = f32[2] reduce-window(x, z), window={size=2 rhs_dilate=2}, "
                      "to_apply=add_f32",
                      kAddF32),
                "f32[2] {4,6}");
    // Variadic (argmax pooling) through the generic path: (value, index) pairs.
    EXPECT_EVAL(entry("x = f32[4] constant({3,1,4,4})\ni = s32[4] iota(), iota_dimension=0\n"
                      "mv = f32[] constant(-inf)\nmi = s32[] constant(-1)\n"
                      "ROOT r = (f32[2], s32[2]) reduce-window(x, i, mv, mi), "
                      "window={size=2 stride=2}, to_apply=argmax",
                      "argmax {\n av = f32[] parameter(0)\n ai = s32[] parameter(1)\n"
                      " bv = f32[] parameter(2)\n bi = s32[] parameter(3)\n"
                      " ge = pred[] compare(av, bv), direction=GE\n"
                      " v = f32[] select(ge, av, bv)\n i = s32[] select(ge, ai, bi)\n"
                      " ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"),
                "(f32[2], s32[2]) ({3, 4}, {0, 2})");
}

void TestEvaluatorOps::selectAndScatter() {
    const char* ge =
        "ge {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " ROOT r = pred[] compare(a, b), direction=GE\n}\n";
    EXPECT_EVAL(entry("x = f32[4] constant({1,5,2,7})\ns = f32[2] constant({10,20})\n"
                      "z = f32[] constant(0)\n"
                      "ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, "
                      "select=ge, scatter=add_f32",
                      std::string(ge) + kAddF32),
                "f32[4] {0,10,0,20}");
    // Overlapping windows select the same element; ties keep the first (GE).
    EXPECT_EVAL(entry("x = f32[3] constant({1,9,2})\ns = f32[2] constant({1,2})\n"
                      "z = f32[] constant(0)\n"
                      "ROOT r = f32[3] select-and-scatter(x, s, z), window={size=2}, "
                      "select=ge, scatter=add_f32",
                      std::string(ge) + kAddF32),
                "f32[3] {0,3,0}");
    // Generic select (not(a < b)) and padding.
    EXPECT_EVAL(
        entry("x = f32[3] constant({3,3,1})\ns = f32[2] constant({1,2})\n"
              "z = f32[] constant(0)\n"
              "ROOT r = f32[3] select-and-scatter(x, s, z), window={size=2 stride=2 pad=0_1}, "
              "select=sel, scatter=add_f32",
              std::string("sel {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                          " lt = pred[] compare(a, b), direction=LT\n"
                          " ROOT r = pred[] not(lt)\n}\n") +
                  kAddF32),
        "f32[3] {1,0,2}");
}

void TestEvaluatorOps::sort() {
    const char* lt =
        "lt {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " ROOT r = pred[] compare(a, b), direction=LT\n}\n";
    EXPECT_EVAL(entry("x = f32[5] constant({3,1,2,5,4})\n"
                      "ROOT s = f32[5] sort(x), dimensions={0}, to_apply=lt",
                      lt),
                "f32[5] {1,2,3,4,5}");
    // Along dimension 0 of a matrix, descending.
    EXPECT_EVAL(entry("x = f32[3,2] constant({{3,1},{1,2},{2,0}})\n"
                      "ROOT s = f32[3,2] sort(x), dimensions={0}, to_apply=gt",
                      "gt {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                      " ROOT r = pred[] compare(a, b), direction=GT\n}\n"),
                "f32[3,2] {{3,2},{2,1},{1,0}}");
    // Stable multi-operand sort by the first operand.
    EXPECT_EVAL(entry("k = s32[6] constant({2,1,2,1,3,1})\nv = s32[6] constant({0,1,2,3,4,5})\n"
                      "ROOT s = (s32[6], s32[6]) sort(k, v), dimensions={0}, is_stable=true, "
                      "to_apply=c",
                      "c {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
                      " c = s32[] parameter(2)\n d = s32[] parameter(3)\n"
                      " ROOT r = pred[] compare(a, b), direction=LT\n}\n"),
                "(s32[6], s32[6]) ({1,1,1,2,2,3}, {1,3,5,0,2,4})");
    // Lexicographic comparator (generic path): key0 ascending, key1 descending.
    EXPECT_EVAL(entry("k0 = s32[4] constant({1,0,1,0})\nk1 = s32[4] constant({5,6,7,8})\n"
                      "ROOT s = (s32[4], s32[4]) sort(k0, k1), dimensions={0}, to_apply=c",
                      "c {\n a0 = s32[] parameter(0)\n b0 = s32[] parameter(1)\n"
                      " a1 = s32[] parameter(2)\n b1 = s32[] parameter(3)\n"
                      " l = pred[] compare(a0, b0), direction=LT\n"
                      " e = pred[] compare(a0, b0), direction=EQ\n"
                      " g = pred[] compare(a1, b1), direction=GT\n"
                      " t = pred[] and(e, g)\n ROOT r = pred[] or(l, t)\n}\n"),
                "(s32[4], s32[4]) ({0,0,1,1}, {8,6,7,5})");
    // Total order: -1 < -0 < 0 < 2 < nan.
    EXPECT_EVAL(entry("x = f32[5] constant({2, nan, -1, 0, -0})\n"
                      "ROOT s = f32[5] sort(x), dimensions={0}, to_apply=c",
                      "c {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                      " ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER\n}\n"),
                "f32[5] {-1, -0, 0, 2, nan}");
}

void TestEvaluatorOps::gather() {
    const std::string operand = "x = f32[3,3] constant({{1,2,3},{4,5,6},{7,8,9}})\n";
    // XLA's example: rows 0 and 2.
    EXPECT_EVAL(entry(operand + "i = s32[2] constant({0, 2})\n"
                                "ROOT g = f32[2,3] gather(x, i), offset_dims={1}, "
                                "collapsed_slice_dims={0}, start_index_map={0}, "
                                "index_vector_dim=1, slice_sizes={1,3}"),
                "f32[2,3] {{1,2,3},{7,8,9}}");
    // Start indices are clamped: 5 -> 2, -1 -> 0.
    EXPECT_EVAL(entry(operand + "i = s32[2] constant({5, -1})\n"
                                "ROOT g = f32[2,3] gather(x, i), offset_dims={1}, "
                                "collapsed_slice_dims={0}, start_index_map={0}, "
                                "index_vector_dim=1, slice_sizes={1,3}"),
                "f32[2,3] {{7,8,9},{1,2,3}}");
    // 2x2 windows at (0,1) and (1,0); (2,2) clamps to (1,1).
    EXPECT_EVAL(entry(operand + "i = s32[3,2] constant({{0,1},{1,0},{2,2}})\n"
                                "ROOT g = f32[3,2,2] gather(x, i), offset_dims={1,2}, "
                                "collapsed_slice_dims={}, start_index_map={0,1}, "
                                "index_vector_dim=1, slice_sizes={2,2}"),
                "f32[3,2,2] {{{2,3},{5,6}},{{4,5},{7,8}},{{5,6},{8,9}}}");
    // Batching dimensions: batch b reads operand[b][i[b]].
    EXPECT_EVAL(entry("x = f32[2,3] constant({{1,2,3},{4,5,6}})\n"
                      "i = s32[2,1] constant({{2},{0}})\n"
                      "ROOT g = f32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, "
                      "start_index_map={1}, operand_batching_dims={0}, "
                      "start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}"),
                "f32[2] {3,4}");
}

void TestEvaluatorOps::scatter() {
    const std::string operand = "x = f32[3,3] constant({{1,2,3},{4,5,6},{7,8,9}})\n";
    const std::string dims =
        "update_window_dims={1}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1";
    EXPECT_EVAL(entry(operand +
                          "i = s32[2] constant({0, 2})\n"
                          "u = f32[2,3] constant({{10,20,30},{70,80,90}})\n"
                          "ROOT s = f32[3,3] scatter(x, i, u), " +
                          dims + ", to_apply=add_f32",
                      kAddF32),
                "f32[3,3] {{11,22,33},{4,5,6},{77,88,99}}");
    // An out-of-bounds index is skipped.
    EXPECT_EVAL(entry(operand +
                          "i = s32[2] constant({0, 3})\n"
                          "u = f32[2,3] constant({{10,20,30},{70,80,90}})\n"
                          "ROOT s = f32[3,3] scatter(x, i, u), " +
                          dims + ", to_apply=add_f32",
                      kAddF32),
                "f32[3,3] {{11,22,33},{4,5,6},{7,8,9}}");
    // A window that only partly fits is skipped entirely.
    EXPECT_EVAL(entry("x = f32[4] constant({0,0,0,0})\ni = s32[2,1] constant({{1},{3}})\n"
                      "u = f32[2,2] constant({{1,2},{3,4}})\n"
                      "ROOT s = f32[4] scatter(x, i, u), update_window_dims={1}, "
                      "inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
                      "index_vector_dim=1, to_apply=add_f32",
                      kAddF32),
                "f32[4] {0,1,2,0}");
    // Repeated indices apply in order: overwrite keeps the last update.
    EXPECT_EVAL(entry("x = s32[3] constant({0,0,0})\ni = s32[3] constant({1,1,0})\n"
                      "u = s32[3] constant({5,7,9})\n"
                      "ROOT s = s32[3] scatter(x, i, u), update_window_dims={}, "
                      "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                      "index_vector_dim=1, to_apply=assign",
                      "assign {\n a = s32[] parameter(0)\n ROOT b = s32[] parameter(1)\n}\n"),
                "s32[3] {9,7,0}");
    // Generic combiner, order-sensitive: acc = 2 * acc + u -> 2*(2*1+5)+7 = 21.
    EXPECT_EVAL(entry("x = f32[2] constant({1,1})\ni = s32[2] constant({0,0})\n"
                      "u = f32[2] constant({5,7})\n"
                      "ROOT s = f32[2] scatter(x, i, u), update_window_dims={}, "
                      "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                      "index_vector_dim=1, to_apply=f",
                      "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                      " two = f32[] constant(2)\n m = f32[] multiply(a, two)\n"
                      " ROOT r = f32[] add(m, b)\n}\n"),
                "f32[2] {21,1}");
    // Batching dimensions: row b gets its update at column i[b].
    EXPECT_EVAL(entry("x = f32[2,3] constant({{0,0,0},{0,0,0}})\ni = s32[2,1] constant({{2},{0}})\n"
                      "u = f32[2] constant({5,6})\n"
                      "ROOT s = f32[2,3] scatter(x, i, u), update_window_dims={}, "
                      "inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
                      "input_batching_dims={0}, scatter_indices_batching_dims={0}, "
                      "index_vector_dim=1, to_apply=add_f32",
                      kAddF32),
                "f32[2,3] {{0,0,5},{6,0,0}}");
    // Variadic scatter: two operands updated together.
    EXPECT_EVAL(
        entry("x = f32[2] constant({1,2})\ny = s32[2] constant({10,20})\n"
              "i = s32[1] constant({1})\nu = f32[1] constant({5})\nv = s32[1] constant({3})\n"
              "ROOT s = (f32[2], s32[2]) scatter(x, y, i, u, v), update_window_dims={}, "
              "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
              "index_vector_dim=1, to_apply=f",
              "f {\n a = f32[] parameter(0)\n b = s32[] parameter(1)\n"
              " c = f32[] parameter(2)\n d = s32[] parameter(3)\n"
              " s = f32[] add(a, c)\n m = s32[] multiply(b, d)\n"
              " ROOT t = (f32[], s32[]) tuple(s, m)\n}\n"),
        "(f32[2], s32[2]) ({1, 7}, {10, 60})");
}

// scan: XLA's evaluator tests (1-D forward and reverse, 2-D, along the
// middle dimension of a 3-D array, two carries, a carry of another shape
// than the rows), the single-value forms and a scan without inputs.
void TestEvaluatorOps::scan() {
    const std::string addTwice =
        "add {\n x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
        " s = f32[] add(x, y)\n ROOT t = (f32[], f32[]) tuple(s, s)\n}\n";
    EXPECT_EVAL(entry("x = f32[4] constant({1,2,3,4})\ni = f32[] constant(0)\n"
                      "ROOT s = (f32[4], f32[]) scan(x, i), dimensions={0}, num_carries=1, "
                      "to_apply=add",
                      addTwice),
                "(f32[4], f32[]) ({1,3,6,10}, 10)");
    // Reverse: step i reads and writes index length-1-i.
    EXPECT_EVAL(entry("x = f32[4] constant({1,2,3,4})\ni = f32[] constant(0)\n"
                      "ROOT s = (f32[4], f32[]) scan(x, i), dimensions={0}, num_carries=1, "
                      "is_reverse=true, to_apply=add",
                      addTwice),
                "(f32[4], f32[]) ({10,9,7,4}, 10)");
    const std::string addRows =
        "add {\n x = f32[2] parameter(0)\n y = f32[2] parameter(1)\n"
        " s = f32[2] add(x, y)\n ROOT t = (f32[2], f32[2]) tuple(s, s)\n}\n";
    EXPECT_EVAL(entry("x = f32[2,2] constant({{1,2},{3,4}})\ni = f32[2] constant({0,0})\n"
                      "ROOT s = (f32[2,2], f32[2]) scan(x, i), dimensions={0}, num_carries=1, "
                      "to_apply=add",
                      addRows),
                "(f32[2,2], f32[2]) ({{1,2},{4,6}}, {4,6})");
    const std::string addPlanes =
        "add {\n x = f32[2,2] parameter(0)\n y = f32[2,2] parameter(1)\n"
        " s = f32[2,2] add(x, y)\n ROOT t = (f32[2,2], f32[2,2]) tuple(s, s)\n}\n";
    EXPECT_EVAL(entry("x = f32[2,2,2] constant({{{1,2},{3,4}},{{5,6},{7,8}}})\n"
                      "i = f32[2,2] constant({{0,0},{0,0}})\n"
                      "ROOT s = (f32[2,2,2], f32[2,2]) scan(x, i), dimensions={1}, "
                      "num_carries=1, to_apply=add",
                      addPlanes),
                "(f32[2,2,2], f32[2,2]) ({{{1,2},{4,6}},{{5,6},{12,14}}}, {{4,6},{12,14}})");
    // Two inputs, two carries: a running sum and a running product.
    EXPECT_EVAL(entry("x = f32[3] constant({1,2,3})\ny = f32[3] constant({1,2,3})\n"
                      "z = f32[] constant(0)\no = f32[] constant(1)\n"
                      "ROOT s = (f32[3], f32[3], f32[], f32[]) scan(x, y, z, o), dimensions={0}, "
                      "num_carries=2, to_apply=f",
                      "f {\n x1 = f32[] parameter(0)\n x2 = f32[] parameter(1)\n"
                      " y1 = f32[] parameter(2)\n y2 = f32[] parameter(3)\n"
                      " a = f32[] add(x1, y1)\n m = f32[] multiply(x2, y2)\n"
                      " ROOT t = (f32[], f32[], f32[], f32[]) tuple(a, m, a, m)\n}\n"),
                "(f32[3], f32[3], f32[], f32[]) ({1,3,6}, {1,2,6}, 6, 6)");
    // The carry is a matrix; each step's output is its column sums.
    EXPECT_EVAL(entry("x = f32[2,2] constant({{1,2},{3,4}})\ni = f32[2,2] constant({{0,0},{0,0}})\n"
                      "ROOT s = (f32[2,2], f32[2,2]) scan(x, i), dimensions={0}, num_carries=1, "
                      "to_apply=f",
                      std::string(kAddF32) +
                          "f {\n x = f32[2] parameter(0)\n y = f32[2,2] parameter(1)\n"
                          " b = f32[2,2] broadcast(x), dimensions={1}\n a = f32[2,2] add(b, y)\n"
                          " z = f32[] constant(0)\n"
                          " r = f32[2] reduce(a, z), dimensions={0}, to_apply=add_f32\n"
                          " ROOT t = (f32[2], f32[2,2]) tuple(r, a)\n}\n"),
                "(f32[2,2], f32[2,2]) ({{2,4},{8,12}}, {{4,6},{4,6}})");
    // One carry and no outputs: the result is the carry itself.
    EXPECT_EVAL(entry("x = s32[3,2] constant({{1,2},{3,4},{5,6}})\ni = s32[2] constant({0,10})\n"
                      "ROOT s = s32[2] scan(x, i), dimensions={0}, num_carries=1, to_apply=f",
                      "f {\n x = s32[2] parameter(0)\n c = s32[2] parameter(1)\n"
                      " ROOT m = s32[2] subtract(c, x)\n}\n"),
                "s32[2] {-9,-2}");
    // No carries, one output: each row doubled, the result stacked along dimension 1.
    EXPECT_EVAL(entry("x = s32[2,3] constant({{1,2,3},{4,5,6}})\n"
                      "ROOT s = s32[2,3] scan(x), dimensions={1}, num_carries=0, to_apply=f",
                      "f {\n x = s32[2] parameter(0)\n ROOT d = s32[2] add(x, x)\n}\n"),
                "s32[2,3] {{2,4,6},{8,10,12}}");
    // No inputs: the length is the stacked output's (a counter, backwards).
    EXPECT_EVAL(entry("i = s32[] constant(5)\n"
                      "ROOT s = (s32[4], s32[]) scan(i), dimensions={0}, num_carries=1, "
                      "is_reverse=true, to_apply=f",
                      "f {\n c = s32[] parameter(0)\n o = s32[] constant(1)\n"
                      " n = s32[] add(c, o)\n ROOT t = (s32[], s32[]) tuple(c, n)\n}\n"),
                "(s32[4], s32[]) ({8,7,6,5}, 9)");
}

void TestEvaluatorOps::topk() {
    EXPECT_EVAL(entry("x = f32[6] constant({1, 5, 3, 5, nan, -1})\n"
                      "ROOT t = (f32[3], s32[3]) topk(x), k=3, largest=true"),
                "(f32[3], s32[3]) ({nan, 5, 5}, {4, 1, 3})");
    EXPECT_EVAL(entry("x = f32[2,3] constant({{3, 1, 2}, {0, 0, -5}})\n"
                      "ROOT t = (f32[2,2], s32[2,2]) topk(x), k=2, largest=false"),
                "(f32[2,2], s32[2,2]) ({{1, 2}, {-5, 0}}, {{1, 2}, {2, 0}})");
}

// Two features of two elements (training and inference), one feature of three (grad), by hand.
void TestEvaluatorOps::batchNorm() {
    const std::string x =
        "x = f32[2,2] constant({{1, 2}, {3, 6}})\n"
        "s = f32[2] constant({1, 2})\no = f32[2] constant({0, 1})\n";
    const std::string training =
        x +
        "t = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1\n";
    EXPECT_EVAL_NEAR(entry(training + "ROOT y = f32[2,2] get-tuple-element(t), index=0"),
                     "f32[2,2] {{-1, -1}, {1, 3}}", 1e-6);
    EXPECT_EVAL_NEAR(entry(training + "ROOT m = f32[2] get-tuple-element(t), index=1"),
                     "f32[2] {2, 4}", 1e-6);
    EXPECT_EVAL_NEAR(entry(training + "ROOT v = f32[2] get-tuple-element(t), index=2"),
                     "f32[2] {1, 4}", 1e-6);
    EXPECT_EVAL_NEAR(entry(x + "m = f32[2] constant({2, 4})\nv = f32[2] constant({0.99, 3.99})\n"
                               "ROOT y = f32[2,2] batch-norm-inference(x, s, o, m, v), "
                               "epsilon=0.01, feature_index=1"),
                     "f32[2,2] {{-1, -1}, {1, 3}}", 1e-6);
    const std::string grad =
        "x = f32[3,1] constant({{0}, {3}, {6}})\ns = f32[1] constant({2})\n"
        "m = f32[1] constant({3})\nv = f32[1] constant({4})\n"
        "dy = f32[3,1] constant({{1}, {0}, {2}})\n"
        "g = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, dy), epsilon=0, "
        "feature_index=1\n";
    EXPECT_EVAL_NEAR(entry(grad + "ROOT dx = f32[3,1] get-tuple-element(g), index=0"),
                     "f32[3,1] {{0.75}, {-1}, {0.25}}", 1e-6);
    EXPECT_EVAL_NEAR(entry(grad + "ROOT ds = f32[1] get-tuple-element(g), index=1"), "f32[1] {1.5}",
                     1e-6);
    EXPECT_EVAL_NEAR(entry(grad + "ROOT do = f32[1] get-tuple-element(g), index=2"), "f32[1] {3}",
                     1e-6);
    // A non-floating operand is refused by name.
    auto refused =
        evaluateText(entry("x = s32[2,2] constant({{1, 2}, {3, 4}})\n"
                           "s = s32[2] constant({1, 1})\no = s32[2] constant({0, 0})\n"
                           "ROOT t = (s32[2,2], s32[2], s32[2]) batch-norm-training(x, s, "
                           "o), epsilon=0, feature_index=1"));
    QVERIFY(!refused.isOk());
    QCOMPARE(refused.status().code(), StatusCode::kUnimplemented);
    QVERIFY2(refused.status().message().find("%t: operand 0 of type s32") != std::string::npos,
             refused.status().toString().c_str());
}

void TestEvaluatorOps::fft() {
    EXPECT_EVAL_NEAR(entry("x = c64[4] constant({(1,0), (2,0), (3,0), (4,0)})\n"
                           "ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={4}"),
                     "c64[4] {(10,0), (-2,2), (-2,0), (-2,-2)}", 1e-5);
    EXPECT_EVAL_NEAR(entry("x = c64[4] constant({(10,0), (-2,2), (-2,0), (-2,-2)})\n"
                           "ROOT f = c64[4] fft(x), fft_type=IFFT, fft_length={4}"),
                     "c64[4] {(1,0), (2,0), (3,0), (4,0)}", 1e-5);
    EXPECT_EVAL_NEAR(entry("x = f32[4] constant({1,2,3,4})\n"
                           "ROOT f = c64[3] fft(x), fft_type=RFFT, fft_length={4}"),
                     "c64[3] {(10,0), (-2,2), (-2,0)}", 1e-5);
    EXPECT_EVAL_NEAR(entry("x = c64[3] constant({(10,0), (-2,2), (-2,0)})\n"
                           "ROOT f = f32[4] fft(x), fft_type=IRFFT, fft_length={4}"),
                     "f32[4] {1,2,3,4}", 1e-5);
    // 2-D over the last two dimensions, batched over the first.
    EXPECT_EVAL_NEAR(entry("x = c64[2,2,2] constant({{{(1,0),(2,0)},{(3,0),(4,0)}},"
                           "{{(1,0),(0,0)},{(0,0),(0,0)}}})\n"
                           "ROOT f = c64[2,2,2] fft(x), fft_type=FFT, fft_length={2,2}"),
                     "c64[2,2,2] {{{(10,0),(-2,0)},{(-4,0),(0,0)}},{{(1,0),(1,0)},{(1,0),(1,0)}}}",
                     1e-5);
    // Length 5 (not a power of two) against a hand DFT.
    const double x[5] = {1, -2, 0.5, 3, 0};
    std::string want = "c64[5] {";
    for (int k = 0; k < 5; ++k) {
        std::complex<double> sum = 0;
        for (int t = 0; t < 5; ++t)
            sum += x[t] * std::polar(1.0, -2 * std::numbers::pi * k * t / 5);
        want +=
            (k ? ", (" : "(") + std::to_string(sum.real()) + "," + std::to_string(sum.imag()) + ")";
    }
    want += "}";
    EXPECT_EVAL_NEAR(entry("x = c64[5] constant({(1,0), (-2,0), (0.5,0), (3,0), (0,0)})\n"
                           "ROOT f = c64[5] fft(x), fft_type=FFT, fft_length={5}"),
                     want, 1e-4);
}

void TestEvaluatorOps::choleskyAndTriangularSolve() {
    const std::string a = "a = f32[3,3] constant({{4,12,-16},{12,37,-43},{-16,-43,98}})\n";
    EXPECT_EVAL_NEAR(entry(a + "ROOT l = f32[3,3] cholesky(a), lower=true"),
                     "f32[3,3] {{2,0,0},{6,1,0},{-8,5,3}}", 1e-5);
    EXPECT_EVAL_NEAR(entry(a + "ROOT u = f32[3,3] cholesky(a), lower=false"),
                     "f32[3,3] {{2,6,-8},{0,1,5},{0,0,3}}", 1e-5);
    // Batched; the ignored triangle may hold anything.
    EXPECT_EVAL_NEAR(entry("a = f64[2,2,2] constant({{{1,99},{2,5}},{{9,0},{0,16}}})\n"
                           "ROOT l = f64[2,2,2] cholesky(a), lower=true"),
                     "f64[2,2,2] {{{1,0},{2,1}},{{3,0},{0,4}}}", 1e-12);

    const std::string l = "l = f32[3,3] constant({{2,0,0},{6,1,0},{-8,5,3}})\n";
    // L x = (2,7,0) -> x = (1,1,1).
    EXPECT_EVAL_NEAR(entry(l + "b = f32[3,1] constant({{2},{7},{0}})\n"
                               "ROOT x = f32[3,1] triangular-solve(l, b), left_side=true, "
                               "lower=true, transpose_a=NO_TRANSPOSE"),
                     "f32[3,1] {{1},{1},{1}}", 1e-5);
    // L^T x = (0,6,3) -> x = (1,1,1).
    EXPECT_EVAL_NEAR(entry(l + "b = f32[3,1] constant({{0},{6},{3}})\n"
                               "ROOT x = f32[3,1] triangular-solve(l, b), left_side=true, "
                               "lower=true, transpose_a=TRANSPOSE"),
                     "f32[3,1] {{1},{1},{1}}", 1e-5);
    // x L = (0,6,3) -> x = (1,1,1).
    EXPECT_EVAL_NEAR(entry(l + "b = f32[1,3] constant({{0,6,3}})\n"
                               "ROOT x = f32[1,3] triangular-solve(l, b), left_side=false, "
                               "lower=true, transpose_a=NO_TRANSPOSE"),
                     "f32[1,3] {{1,1,1}}", 1e-5);
    // Unit diagonal: the stored diagonal (9) is ignored; upper triangle of a
    // lower solve is ignored too.
    EXPECT_EVAL_NEAR(
        entry("a = f32[2,2] constant({{9,100},{3,9}})\nb = f32[2,1] constant({{1},{5}})\n"
              "ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, "
              "unit_diagonal=true, transpose_a=NO_TRANSPOSE"),
        "f32[2,1] {{1},{2}}", 1e-5);
}

void TestEvaluatorOps::errors() {
    // Unsupported combinations are kUnimplemented naming the instruction;
    // malformed ones kInvalidArgument.
    auto bad =
        evaluateText(entry("a = s32[2,2] constant({{1,0},{0,1}})\n"
                           "ROOT c = s32[2,2] cholesky(a), lower=true"));
    QVERIFY(!bad.isOk());
    QCOMPARE(bad.status().code(), StatusCode::kUnimplemented);
    QVERIFY(bad.status().message().find("%c") != std::string::npos);
    auto mismatched =
        evaluateText(entry("a = f32[2,3] constant({{1,2,3},{4,5,6}})\n"
                           "b = f32[2,2] constant({{1,2},{3,4}})\n"
                           "ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}"));
    QVERIFY(!mismatched.isOk());
    QVERIFY(mismatched.status().code() == StatusCode::kInvalidArgument ||
            mismatched.status().code() == StatusCode::kFailedPrecondition);
    // A gather whose collapsed slice is empty has nothing to read: an error,
    // not a read past the (empty) operand.
    auto empty = evaluateText(entry("x = f32[0,2] constant({})\n"
                                    "i = s32[3] constant({0, 1, 2})\n"
                                    "ROOT g = f32[3,2] gather(x, i), offset_dims={1}, "
                                    "collapsed_slice_dims={0}, start_index_map={0}, "
                                    "index_vector_dim=1, slice_sizes={0,2}"));
    QVERIFY(!empty.isOk());
    QCOMPARE(empty.status().code(), StatusCode::kUnimplemented);
    QVERIFY(empty.status().message().find("%g") != std::string::npos);
}

QTEST_APPLESS_MAIN(TestEvaluatorOps)
#include "tst_evaluator_ops.moc"
