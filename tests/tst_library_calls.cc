// XLA:GPU's cuBLAS / cuDNN / CUB custom-calls (core/lowering/library_calls.h): what the
// interpreter computes for them, checked against values worked out by hand,
// against the plain HLO each stands for (written here independently), and,
// for the backward convolutions, against the adjoint identities
//   <conv(x, w), g> = <x, backward_input(g, w)> = <w, backward_filter(x, g)>
// on random values; where the expansion puts its instructions; and one
// negative test per error class.
#include <QTest>
#include <cmath>

#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/lowering/library_calls.h"
#include "tests/evaluator_test_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

std::string gemmConfig(const std::string& lhsContracting, const std::string& rhsContracting,
                       const std::string& extra, const std::string& batch = "") {
    return R"(backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":[")" +
           lhsContracting + R"("],"rhs_contracting_dimensions":[")" + rhsContracting +
           R"("],"lhs_batch_dimensions":[)" + batch + R"(],"rhs_batch_dimensions":[)" + batch +
           "]}" + extra + "}}";
}

// Quoted configs with lowerCamelCase keys and an enum as its number (moc
// reads raw strings holding \" wrongly: these stay ordinary literals).
const std::string kQuotedGemmConfig =
    "backend_config=\"{\\\"gemmBackendConfig\\\":{\\\"alphaReal\\\":1,\\\"epilogue\\\":3,"
    "\\\"dotDimensionNumbers\\\":{\\\"lhsContractingDimensions\\\":[\\\"1\\\"],"
    "\\\"rhsContractingDimensions\\\":[\\\"0\\\"]}}}\"";
const std::string kQuotedConvConfig = "backend_config=\"{\\\"convResultScale\\\":0.25}\"";

// Two modules evaluated on the same seeded random arguments (the expected
// module's parameters): {actual, expected}.
StatusOr<std::pair<Literal, Literal>> evaluateBoth(const std::string& actual,
                                                   const std::string& expected, uint64_t seed) {
    auto a = parseHloModule(actual);
    auto e = parseHloModule(expected);
    if (!a.isOk()) return a.status().withContext("parse");
    if (!e.isOk()) return e.status().withContext("parse");
    const auto arguments = makeRandomArguments(*(*e)->entryComputation(), seed);
    HloEvaluator evaluator;
    auto got = evaluator.evaluate(**a, arguments);
    auto want = evaluator.evaluate(**e, arguments);
    if (!got.isOk()) return got.status().withContext("evaluate");
    if (!want.isOk()) return want.status().withContext("evaluate reference");
    return std::make_pair(std::move(*got), std::move(*want));
}

// Empty when the two modules' results (arrays) agree element by element
// within `tolerance` (relative to 1 + |expected|).
std::string sameResults(const std::string& actual, const std::string& expected,
                        double tolerance = 1e-5, uint64_t seed = 7) {
    auto both = evaluateBoth(actual, expected, seed);
    if (!both.isOk()) return both.status().toString();
    auto g = both->first.convert(PrimitiveType::F64);
    auto w = both->second.convert(PrimitiveType::F64);
    if (!g.isOk() || !w.isOk()) return "convert failed";
    auto gv = g->data<double>();
    auto wv = w->data<double>();
    if (gv.size() != wv.size()) return "element counts differ";
    for (size_t i = 0; i < gv.size(); ++i)
        if (std::abs(gv[i] - wv[i]) > tolerance * (1 + std::abs(wv[i])))
            return "element " + std::to_string(i) + ": got " + std::to_string(gv[i]) + ", want " +
                   std::to_string(wv[i]);
    return {};
}

// "0,1,2" for a rank-3 shape's text ("f64[a,b,c]").
QString allDimensions(const QString& shape) {
    return shape.count(u',') == 2 ? QStringLiteral("0,1,2") : QStringLiteral("0,1,2,3");
}

// The error of evaluating `text`.
Status errorOf(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) return module.status();
    HloEvaluator evaluator;
    auto result =
        evaluator.evaluate(**module, makeRandomArguments(*(*module)->entryComputation(), 1));
    return result.isOk() ? Status::ok() : result.status();
}

}  // namespace

class TestLibraryCalls : public QObject {
    Q_OBJECT
private slots:
    void gemmEpilogueByHand() {
        // a b = {{19,22},{43,50}}; 2 a b + c = {{39,45},{87,101}}; + bias
        // along the last dimension = {{-41,-55},{7,1}}; relu.
        const std::string hlo =
            R"(HloModule gemm
ENTRY e {
  a = f32[2,2] constant({{1,2},{3,4}})
  b = f32[2,2] constant({{5,6},{7,8}})
  c = f32[2,2] constant({{1,1},{1,1}})
  bias = f32[2] constant({-80,-100})
  g = (f32[2,2], s8[16]) custom-call(a, b, c, bias), custom_call_target="__cublas$lt$matmul", )" +
            gemmConfig("1", "0", R"(,"alpha_real":2,"beta":1,"epilogue":"BIAS_RELU")") +
            R"(
  ROOT d = f32[2,2] get-tuple-element(g), index=0
})";
        std::string why = mismatch(hlo, "f32[2,2] {{0,0},{7,1}}");
        QVERIFY2(why.empty(), why.c_str());
        // The workspace is zeros; the epilogue may be written as a number
        // (3: BIAS_RELU) and the config quoted, with camelCase keys.
        const std::string quoted = R"(HloModule gemm
ENTRY e {
  a = f32[2,2] constant({{1,2},{3,4}})
  b = f32[2,2] constant({{5,6},{7,8}})
  bias = f32[2] constant({-20,-100})
  g = (f32[2,2], u8[3]) custom-call(a, b, bias), custom_call_target="__cublas$gemm", )" +
                                   kQuotedGemmConfig + R"(
  d = f32[2,2] get-tuple-element(g), index=0
  w = u8[3] get-tuple-element(g), index=1
  ROOT t = (f32[2,2], u8[3]) tuple(d, w)
})";
        auto result = evaluateText(quoted);
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        QCOMPARE(result->tupleElement(0), literal("f32[2,2] {{0,0},{23,0}}"));
        QCOMPARE(result->tupleElement(1), literal("u8[3] {0,0,0}"));
    }

    void gemmGeluAndAux() {
        // a = 1 x 1 identity: d = gelu(b), aux = b.
        const std::string hlo = R"(HloModule gelu
ENTRY e {
  a = f32[1,1] constant({{1}})
  b = f32[1,4] constant({{-2,-0.5,0.75,3}})
  ROOT g = (f32[1,4], f32[1,4], s8[8]) custom-call(a, b), custom_call_target="__cublas$lt$matmul", )" +
                                gemmConfig("1", "0", R"(,"alpha_real":1,"epilogue":"GELU_AUX")") +
                                R"(
})";
        auto result = evaluateText(hlo);
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        const double xs[] = {-2, -0.5, 0.75, 3};
        auto d = result->tupleElement(0).data<float>();
        auto aux = result->tupleElement(1).data<float>();
        for (size_t i = 0; i < 4; ++i) {
            const double x = xs[i];
            const double gelu =
                0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
            QVERIFY2(std::abs(d[i] - gelu) < 1e-6, qPrintable(QString::number(d[i])));
            QCOMPARE(aux[i], static_cast<float>(x));
        }
    }

    void gemmIsTheDotItStandsFor() {
        // Batched, both operands contracted on dimension 1, alpha 0.5,
        // beta 2 with c, an f16 bias: against the plain HLO.
        const std::string call =
            R"(HloModule call
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,3,5] parameter(1)
  c = f32[2,4,5] parameter(2)
  bias = f16[5] parameter(3)
  ROOT g = f32[2,4,5] custom-call(a, b, c, bias), custom_call_target="__cublas$lt$matmul", )" +
            gemmConfig("1", "1", R"(,"alpha_real":0.5,"beta":2,"epilogue":"BIAS")", R"("0")") +
            R"(
})";
        const std::string plain = R"(HloModule plain
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,3,5] parameter(1)
  c = f32[2,4,5] parameter(2)
  bias = f16[5] parameter(3)
  dot = f32[2,4,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  half = f32[] constant(0.5)
  two = f32[] constant(2)
  halves = f32[2,4,5] broadcast(half), dimensions={}
  twos = f32[2,4,5] broadcast(two), dimensions={}
  scaled = f32[2,4,5] multiply(dot, halves)
  c2 = f32[2,4,5] multiply(c, twos)
  sum = f32[2,4,5] add(scaled, c2)
  b32 = f32[5] convert(bias)
  spread = f32[2,4,5] broadcast(b32), dimensions={2}
  ROOT r = f32[2,4,5] add(sum, spread)
})";
        std::string why = sameResults(call, plain);
        QVERIFY2(why.empty(), why.c_str());
    }

    void convBiasActivationIsItsHlo() {
        for (const char* mode : {"\"kRelu\"", "\"2\"", "\"kRelu6\"", "\"kTanh\"", "\"kSigmoid\"",
                                 "\"kElu\"", "\"kLeakyRelu\"", "\"kGeluExact\"", "\"kNone\""}) {
            const std::string call = std::string(R"(HloModule call
ENTRY e {
  input = f32[1,5,5,3] parameter(0)
  filter = f32[3,3,3,4] parameter(1)
  bias = f32[4] parameter(2)
  side = f32[1,5,5,4] parameter(3)
  c = (f32[1,5,5,4], u8[0]) custom-call(input, filter, bias, side), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":0.5,"side_input_scale":2,"leakyrelu_alpha":0.25,"activation_mode":)") +
                                     mode + R"(}}
  ROOT r = f32[1,5,5,4] get-tuple-element(c), index=0
})";
            const std::string m(mode);
            std::string activation = "ROOT r = f32[1,5,5,4] copy(pre)";
            if (m == "\"kRelu\"" || m == "\"2\"")
                activation = "ROOT r = f32[1,5,5,4] maximum(pre, zeros)";
            if (m == "\"kRelu6\"") activation = "ROOT r = f32[1,5,5,4] clamp(zeros, pre, sixes)";
            if (m == "\"kTanh\"") activation = "ROOT r = f32[1,5,5,4] tanh(pre)";
            if (m == "\"kSigmoid\"") activation = "ROOT r = f32[1,5,5,4] logistic(pre)";
            if (m == "\"kElu\"")
                activation =
                    "gt = pred[1,5,5,4] compare(pre, zeros), direction=GT\n"
                    "em1 = f32[1,5,5,4] exponential-minus-one(pre)\n"
                    "ROOT r = f32[1,5,5,4] select(gt, pre, em1)";
            if (m == "\"kLeakyRelu\"")
                activation =
                    "gt = pred[1,5,5,4] compare(pre, zeros), direction=GT\n"
                    "leak = f32[1,5,5,4] multiply(pre, quarters)\n"
                    "ROOT r = f32[1,5,5,4] select(gt, pre, leak)";
            if (m == "\"kGeluExact\"")
                activation =
                    "scaled_pre = f32[1,5,5,4] multiply(pre, rsqrt2s)\n"
                    "e = f32[1,5,5,4] erf(scaled_pre)\n"
                    "onep = f32[1,5,5,4] add(e, ones)\n"
                    "half_pre = f32[1,5,5,4] multiply(pre, halves)\n"
                    "ROOT r = f32[1,5,5,4] multiply(half_pre, onep)";
            const std::string plain = R"(HloModule plain
ENTRY e {
  input = f32[1,5,5,3] parameter(0)
  filter = f32[3,3,3,4] parameter(1)
  bias = f32[4] parameter(2)
  side = f32[1,5,5,4] parameter(3)
  conv = f32[1,5,5,4] convolution(input, filter), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  zeros = f32[1,5,5,4] broadcast(f32[] constant(0)), dimensions={}
  sixes = f32[1,5,5,4] broadcast(f32[] constant(6)), dimensions={}
  ones = f32[1,5,5,4] broadcast(f32[] constant(1)), dimensions={}
  twos = f32[1,5,5,4] broadcast(f32[] constant(2)), dimensions={}
  halves = f32[1,5,5,4] broadcast(f32[] constant(0.5)), dimensions={}
  quarters = f32[1,5,5,4] broadcast(f32[] constant(0.25)), dimensions={}
  rsqrt2s = f32[1,5,5,4] broadcast(f32[] constant(0.70710678118654752)), dimensions={}
  scaled = f32[1,5,5,4] multiply(conv, halves)
  side2 = f32[1,5,5,4] multiply(side, twos)
  sum = f32[1,5,5,4] add(scaled, side2)
  spread = f32[1,5,5,4] broadcast(bias), dimensions={3}
  pre = f32[1,5,5,4] add(sum, spread)
  )" + activation + R"(
})";
            std::string why = sameResults(call, plain);
            QVERIFY2(why.empty(), qPrintable(QString::fromLatin1(mode) + ": " + why.c_str()));
        }
    }

    void int8ConvForwardScales() {
        // s8 x s8 -> f32, as cuDNN's int8 convolutions: the same as the
        // plain convolution of the same types, scaled.
        const std::string call = R"(HloModule call
ENTRY e {
  input = s8[2,4,6,6] parameter(0)
  filter = s8[5,4,3,3] parameter(1)
  c = (f32[2,5,3,3], u8[0]) custom-call(input, filter), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, custom_call_target="__cudnn$convForward", )" +
                                 kQuotedConvConfig + R"(
  ROOT r = f32[2,5,3,3] get-tuple-element(c), index=0
})";
        const std::string plain = R"(HloModule plain
ENTRY e {
  input = s8[2,4,6,6] parameter(0)
  filter = s8[5,4,3,3] parameter(1)
  conv = f32[2,5,3,3] convolution(input, filter), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  quarters = f32[2,5,3,3] broadcast(f32[] constant(0.25)), dimensions={}
  ROOT r = f32[2,5,3,3] multiply(conv, quarters)
})";
        std::string why = sameResults(call, plain, 0);
        QVERIFY2(why.empty(), why.c_str());
    }

    void blockScaledDotIsAScaledDot() {
        // Batched, both scales and a global scale; then the rhs without a scale.
        const std::string call = R"(HloModule call
ENTRY e {
  lhs = f8e4m3fn[2,16,64] parameter(0)
  rhs = f8e5m2[2,8,64] parameter(1)
  ls = f8e8m0fnu[2,16,2] parameter(2)
  rs = f8e8m0fnu[2,8,2] parameter(3)
  g = f32[] parameter(4)
  d = f32[2,16,8] custom-call(lhs, rhs, ls, rs, g), custom_call_target="__op$block_scaled_dot"
  b = bf16[16,64] parameter(5)
  c = bf16[8,64] parameter(6)
  bs = f8e8m0fnu[16,4] parameter(7)
  h = bf16[16,8] custom-call(b, c, bs), custom_call_target="__op$block_scaled_dot"
  ROOT t = (f32[2,16,8], bf16[16,8]) tuple(d, h)
})";
        const std::string plain = R"(HloModule plain
ENTRY e {
  lhs = f8e4m3fn[2,16,64] parameter(0)
  rhs = f8e5m2[2,8,64] parameter(1)
  ls = f8e8m0fnu[2,16,2] parameter(2)
  rs = f8e8m0fnu[2,8,2] parameter(3)
  g = f32[] parameter(4)
  sd = f32[2,16,8] scaled-dot(lhs, rhs, ls, rs), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  gb = f32[2,16,8] broadcast(g), dimensions={}
  d = f32[2,16,8] multiply(sd, gb)
  b = bf16[16,64] parameter(5)
  c = bf16[8,64] parameter(6)
  bs = f8e8m0fnu[16,4] parameter(7)
  one = f32[] constant(1)
  h = bf16[16,8] scaled-dot(b, c, bs, one), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[2,16,8], bf16[16,8]) tuple(d, h)
})";
        auto both = evaluateBoth(call, plain, 5);
        QVERIFY2(both.isOk(), both.status().toString().c_str());
        QCOMPARE(both->first, both->second);
    }

    void backwardConvolutionsAreAdjoints_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("filter");
        QTest::addColumn<QString>("output");
        QTest::addColumn<QString>("window");
        QTest::addColumn<QString>("labels");
        QTest::newRow("2d stride, padding, dilation")
            << "f64[2,7,6,3]"
            << "f64[3,2,3,4]"
            << "f64[2,4,5,4]"
            << "size=3x2 stride=2x1 pad=1_1x0_1 rhs_dilate=1x2"
            << "b01f_01io->b01f";
        QTest::newRow("1d, XLA's regression shape") << "f64[1,23,9]"
                                                    << "f64[31,5,9]"
                                                    << "f64[1,20,5]"
                                                    << "size=31 stride=2 pad=23_23"
                                                    << "b0f_0oi->b0f";
        QTest::newRow("stride leaving input unread") << "f64[2,3,9,9]"
                                                     << "f64[4,3,2,2]"
                                                     << "f64[2,4,3,3]"
                                                     << "size=2x2 stride=3x3"
                                                     << "bf01_oi01->bf01";
        QTest::newRow("mixed labels") << "f64[3,5,2]"
                                      << "f64[2,3,4]"
                                      << "f64[4,3,5]"
                                      << "size=3 pad=2_0"
                                      << "0bf_i0o->f0b";
    }

    void backwardConvolutionsAreAdjoints() {
        QFETCH(QString, input);
        QFETCH(QString, filter);
        QFETCH(QString, output);
        QFETCH(QString, window);
        QFETCH(QString, labels);
        const std::string hlo =
            QStringLiteral(R"(HloModule adjoint
add {
  x = f64[] parameter(0)
  y = f64[] parameter(1)
  ROOT s = f64[] add(x, y)
}
ENTRY e {
  x = %1 parameter(0)
  w = %2 parameter(1)
  g = %3 parameter(2)
  zero = f64[] constant(0)
  y = %3 convolution(x, w), window={%4}, dim_labels=%5
  yg = %3 multiply(y, g)
  lhs = f64[] reduce(yg, zero), dimensions={%6}, to_apply=add
  bi = (%1, u8[0]) custom-call(g, w), window={%4}, dim_labels=%5, custom_call_target="__cudnn$convBackwardInput"
  gi = %1 get-tuple-element(bi), index=0
  xgi = %1 multiply(x, gi)
  mid = f64[] reduce(xgi, zero), dimensions={%7}, to_apply=add
  bf = (%2, u8[0]) custom-call(x, g), window={%4}, dim_labels=%5, custom_call_target="__cudnn$convBackwardFilter", backend_config={"conv_result_scale":1}
  gw = %2 get-tuple-element(bf), index=0
  wgw = %2 multiply(w, gw)
  rhs = f64[] reduce(wgw, zero), dimensions={%8}, to_apply=add
  ROOT t = (f64[], f64[], f64[]) tuple(lhs, mid, rhs)
})")
                .arg(input, filter, output, window, labels, allDimensions(output),
                     allDimensions(input), allDimensions(filter))
                .toStdString();
        auto module = parseHloModule(hlo);
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        HloEvaluator evaluator;
        auto result =
            evaluator.evaluate(**module, makeRandomArguments(*(*module)->entryComputation(), 11));
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        const double yg = result->tupleElement(0).data<double>()[0];
        const double xgi = result->tupleElement(1).data<double>()[0];
        const double wgw = result->tupleElement(2).data<double>()[0];
        QVERIFY(yg != 0);
        QVERIFY2(std::abs(xgi - yg) < 1e-9 * (1 + std::abs(yg)),
                 qPrintable(QStringLiteral("input: %1 vs %2").arg(xgi).arg(yg)));
        QVERIFY2(std::abs(wgw - yg) < 1e-9 * (1 + std::abs(yg)),
                 qPrintable(QStringLiteral("filter: %1 vs %2").arg(wgw).arg(yg)));
    }

    void expansionTakesTheCallsPlace() {
        auto module = parseHloModule(
            R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3,2] parameter(1)
  before = f32[4,3] negate(a)
  g = (f32[4,2], s8[4]) custom-call(before, b), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/dot"}, )" +
            gemmConfig(
                "1", "0",
                R"(,"alpha_real":1,"beta":0,"precision_config":{"operand_precision":["HIGHEST","DEFAULT"]})") +
            R"(
  d = f32[4,2] get-tuple-element(g), index=0
  ROOT after = f32[4,2] abs(d)
})");
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        HloComputation* entry = (*module)->entryComputation();
        HloInstruction* call = entry->findInstruction("g");
        QVERIFY(isLibraryCall(*call));
        auto expanded = expandLibraryCall(*call);
        QVERIFY2(expanded.isOk(), expanded.status().toString().c_str());
        QCOMPARE((*expanded)->opcode(), HloOpcode::kTuple);
        QVERIFY(entry->findInstruction("g") == nullptr);
        QCOMPARE((*expanded)->metadataField("op_name"), std::string("jit(f)/dot"));
        std::vector<std::string> order;
        for (const auto& instruction : entry->instructions())
            order.push_back(std::string(hloOpcodeString(instruction->opcode())));
        const std::vector<std::string> want = {"parameter", "parameter",         "negate",
                                               "dot",       "constant",          "broadcast",
                                               "tuple",     "get-tuple-element", "abs"};
        QCOMPARE(order, want);
        QCOMPARE(entry->root()->name(), std::string("after"));
        // The config's operand precision stays with the dot (the TPU's numerics read it).
        const HloInstruction* dot = nullptr;
        for (const auto& instruction : entry->instructions())
            if (instruction->opcode() == HloOpcode::kDot) dot = instruction.get();
        QVERIFY(dot != nullptr);
        QCOMPARE(std::string(dot->attribute("operand_precision").value_or("")),
                 std::string("{highest,default}"));
    }

    // One negative test per error class: each names the call.
    void fp8GemmScalesItsDot() {
        // __cublas$lt$matmul$f8 with a_scale and b_scale: the f8 dot accumulated in f32,
        // times both scales, then the result type.
        const std::string call = R"(HloModule f8
ENTRY e {
  a = f8e4m3fn[4,8] parameter(0)
  b = f8e5m2[8,3] parameter(1)
  sa = f32[] parameter(2)
  sb = f32[] parameter(3)
  g = (bf16[4,3], s8[64]) custom-call(a, b, sa, sb), custom_call_target="__cublas$lt$matmul$f8", )" +
                                 gemmConfig("1", "0", R"(,"alpha_real":1,"beta":0)") + R"(
  ROOT d = bf16[4,3] get-tuple-element(g), index=0
})";
        const std::string plain = R"(HloModule f8
ENTRY e {
  a = f8e4m3fn[4,8] parameter(0)
  b = f8e5m2[8,3] parameter(1)
  sa = f32[] parameter(2)
  sb = f32[] parameter(3)
  af = f32[4,8] convert(a)
  bf = f32[8,3] convert(b)
  dot = f32[4,3] dot(af, bf), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[] multiply(sa, sb)
  sd = f32[4,3] broadcast(s), dimensions={}
  m = f32[4,3] multiply(dot, sd)
  ROOT d = bf16[4,3] convert(m)
})";
        auto both = evaluateBoth(call, plain, 11);
        QVERIFY2(both.isOk(), both.status().toString().c_str());
        QCOMPARE(both->first, both->second);
        // Without scales it is the plain dot; c, d and amax scales are not said.
        const std::string unscaled = R"(HloModule f8
ENTRY e {
  a = f8e4m3fn[4,8] parameter(0)
  b = f8e4m3fn[8,3] parameter(1)
  ROOT g = f32[4,3] custom-call(a, b), custom_call_target="__cublas$lt$matmul$f8", )" +
                                     gemmConfig("1", "0", "") + R"(
})";
        const std::string plainDot = R"(HloModule f8
ENTRY e {
  a = f8e4m3fn[4,8] parameter(0)
  b = f8e4m3fn[8,3] parameter(1)
  ROOT g = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
        auto plainBoth = evaluateBoth(unscaled, plainDot, 12);
        QVERIFY2(plainBoth.isOk(), plainBoth.status().toString().c_str());
        QCOMPARE(plainBoth->first, plainBoth->second);
        const std::string sixScales = R"(HloModule f8
ENTRY e {
  a = f8e4m3fn[4,8] parameter(0)
  b = f8e4m3fn[8,3] parameter(1)
  s = f32[] parameter(2)
  ROOT g = f32[4,3] custom-call(a, b, s, s, s, s), custom_call_target="__cublas$lt$matmul$f8", )" +
                                      gemmConfig("1", "0", "") + R"(
})";
        const Status error = errorOf(sixScales);
        QCOMPARE(error.code(), StatusCode::kUnimplemented);
        QVERIFY2(error.message().find("with c, d or amax scales (6 operands)") != std::string::npos,
                 error.toString().c_str());
    }

    void cubSortByHand() {
        // Rows sorted stably by their keys, values alongside; -0 and +0 are
        // equal keys (they keep their order both ways), NaN sorts last.
        const std::string pairs = R"(HloModule cub
ENTRY e {
  k = f32[2,6] constant({{3, -0, nan, 0, -inf, 3}, {1, 2, -1, 2, 1, 0}})
  v = s32[2,6] constant({{0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}})
  ROOT s = (f32[2,6], s32[2,6], u8[1]) custom-call(k, v), custom_call_target="xla.gpu.ext.cub_sort_unassigned_scratch_size", backend_config={"descending":%1}
})";
        auto ascending = evaluateText(QString::fromStdString(pairs).arg("false").toStdString());
        QVERIFY2(ascending.isOk(), ascending.status().toString().c_str());
        QCOMPARE(ascending->tupleElement(0),
                 literal("f32[2,6] {{-inf, -0, 0, 3, 3, nan}, {-1, 0, 1, 1, 2, 2}}"));
        QCOMPARE(ascending->tupleElement(1),
                 literal("s32[2,6] {{4, 1, 3, 0, 5, 2}, {2, 5, 0, 4, 1, 3}}"));
        QCOMPARE(ascending->tupleElement(2), literal("u8[1] {0}"));
        auto descending = evaluateText(QString::fromStdString(pairs).arg("true").toStdString());
        QVERIFY2(descending.isOk(), descending.status().toString().c_str());
        QCOMPARE(descending->tupleElement(0),
                 literal("f32[2,6] {{nan, 3, 3, -0, 0, -inf}, {2, 2, 1, 1, 0, -1}}"));
        QCOMPARE(descending->tupleElement(1),
                 literal("s32[2,6] {{2, 0, 5, 1, 3, 4}, {1, 3, 0, 4, 5, 2}}"));
        // Keys alone, unsigned and signed, with the config absent (ascending).
        std::string why = mismatch(R"(HloModule cub
ENTRY e {
  k = u16[4] constant({5, 1, 65535, 0})
  s = (u16[4], u8[1]) custom-call(k), custom_call_target="xla.gpu.ext.cub_sort", backend_config={"descending":true}
  ROOT r = u16[4] get-tuple-element(s), index=0
})",
                                   "u16[4] {65535, 5, 1, 0}");
        QVERIFY2(why.empty(), why.c_str());
        why = mismatch(R"(HloModule cub
ENTRY e {
  k = s32[3] constant({-3, 2, -7})
  ROOT s = s32[3] custom-call(k), custom_call_target="xla.gpu.ext.cub_sort"
})",
                       "s32[3] {-7, -3, 2}");
        QVERIFY2(why.empty(), why.c_str());
    }

    void cubSortErrors_data() {
        QTest::addColumn<QString>("call");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        QTest::newRow("values of another shape")
            << "(f32[4,3], s32[4,2], u8[1]) custom-call(k, w)" << int(StatusCode::kInvalidArgument)
            << "has values s32[4,2] that do not match its keys f32[4,3]";
        QTest::newRow("pred keys") << "(pred[4,3], u8[1]) custom-call(p)"
                                   << int(StatusCode::kUnimplemented) << "sorts pred keys";
        QTest::newRow("three operands")
            << "(f32[4,3], s32[4,3], u8[1]) custom-call(k, v, v)"
            << int(StatusCode::kInvalidArgument) << "sorts keys or (keys, values)";
        QTest::newRow("descending not a bool")
            << "(f32[4,3], u8[1]) custom-call(k), backend_config={\"descending\":2}"
            << int(StatusCode::kInvalidArgument) << "descending is not a bool";
    }

    void cubSortErrors() {
        QFETCH(QString, call);
        QFETCH(int, code);
        QFETCH(QString, message);
        QString text = call;
        const int at = text.indexOf(u')', text.indexOf(u"custom-call(")) + 1;
        text.insert(at, u", custom_call_target=\"xla.gpu.ext.cub_sort\"");
        const std::string hlo = QStringLiteral(R"(HloModule bad
ENTRY e {
  k = f32[4,3] parameter(0)
  v = s32[4,3] parameter(1)
  w = s32[4,2] parameter(2)
  p = pred[4,3] parameter(3)
  ROOT g = %1
})")
                                    .arg(text)
                                    .toStdString();
        auto module = parseHloModule(hlo);
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        const std::string before = printModule(**module);
        auto expanded = expandLibraryCall(*(*module)->entryComputation()->findInstruction("g"));
        QVERIFY(!expanded.isOk());
        QCOMPARE(int(expanded.status().code()), code);
        QVERIFY2(expanded.status().message().rfind("%g: xla.gpu.ext.cub_sort ", 0) == 0,
                 expanded.status().message().c_str());
        QVERIFY2(expanded.status().message().find(message.toStdString()) != std::string::npos,
                 expanded.status().message().c_str());
        QCOMPARE(printModule(**module), before);
    }

    void errors_data() {
        QTest::addColumn<QString>("call");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString ab =
            QStringLiteral("custom-call(a, b), custom_call_target=\"__cublas$gemm\"");
        QTest::newRow("gemm without config")
            << ab << int(StatusCode::kInvalidArgument) << "%g: __cublas$gemm has no backend_config";
        QTest::newRow("malformed config")
            << ab + ", backend_config=\"{\\\"alpha_real\\\":\"" << int(StatusCode::kInvalidArgument)
            << "a backend_config that is not a JSON object";
        QTest::newRow("unknown epilogue")
            << ab + ", " + QString::fromStdString(gemmConfig("1", "0", R"(,"epilogue":42)"))
            << int(StatusCode::kUnimplemented) << "epilogue 42 is not supported";
        QTest::newRow("missing c")
            << ab + ", " + QString::fromStdString(gemmConfig("1", "0", R"(,"beta":1)"))
            << int(StatusCode::kInvalidArgument) << "takes 3 operands (a, b, c), not 2";
        QTest::newRow("dot does not fit")
            << ab + ", " + QString::fromStdString(gemmConfig("0", "0", ""))
            << int(StatusCode::kInvalidArgument) << "does not fit the operands";
        QTest::newRow("fp8 scaling output")
            << ab + ", " + QString::fromStdString(gemmConfig("1", "0", R"(,"damax_output":true)"))
            << int(StatusCode::kUnimplemented) << "damax_output";
        QTest::newRow("bias of the wrong length")
            << "custom-call(a, b, v), custom_call_target=\"__cublas$lt$matmul\", " +
                   QString::fromStdString(gemmConfig("1", "0", R"(,"epilogue":"BIAS")"))
            << int(StatusCode::kInvalidArgument) << "has a bias of shape f32[3]";
        const QString conv = QStringLiteral(
            "custom-call(a, b), window={size=1}, dim_labels=bf0_io0->bf0, "
            "custom_call_target=\"__cudnn$convForward\"");
        QTest::newRow("activation outside bias-activation")
            << conv + ", backend_config={\"activation_mode\":\"kRelu\"}"
            << int(StatusCode::kInvalidArgument) << "only the bias-activation convolution";
        QTest::newRow("unsupported activation")
            << "custom-call(a, b, v), window={size=1}, dim_labels=bf0_io0->bf0, "
               "custom_call_target=\"__cudnn$convBiasActivationForward\", "
               "backend_config={\"activation_mode\":\"kBandPass\"}"
            << int(StatusCode::kUnimplemented) << "activation kBandPass is not supported";
        QTest::newRow("backward with groups")
            << "custom-call(a, b), window={size=1}, dim_labels=bf0_io0->bf0, "
               "feature_group_count=2, custom_call_target=\"__cudnn$convBackwardInput\""
            << int(StatusCode::kUnimplemented) << "with feature or batch groups";
        QTest::newRow("block-scaled dot of rank 1")
            << "custom-call(v, v, v), custom_call_target=\"__op$block_scaled_dot\""
            << int(StatusCode::kInvalidArgument) << "needs operands of rank 2 or 3";
        QTest::newRow("result of another shape")
            << "custom-call(a, b), window={size=1 pad=1_0}, dim_labels=bf0_io0->bf0, "
               "custom_call_target=\"__cudnn$convForward\""
            << int(StatusCode::kInvalidArgument) << "but its convolution gives f32[4,2,2]";
    }

    void errors() {
        QFETCH(QString, call);
        QFETCH(int, code);
        QFETCH(QString, message);
        // gemm: a f32[4,3] times b f32[3,2]; convolution: a f32[4,2,1]
        // (bf0) with the filter b f32[2,2,1] (io0), bias v.
        const bool isConv = call.contains(u"cudnn");
        const std::string hlo = isConv ? QStringLiteral(R"(HloModule bad
ENTRY e {
  a = f32[4,2,1] parameter(0)
  b = f32[2,2,1] parameter(1)
  v = f32[2] parameter(2)
  g = (f32[4,2,1], u8[0]) %1
  ROOT d = f32[4,2,1] get-tuple-element(g), index=0
})")
                                             .arg(call)
                                             .toStdString()
                                       : QStringLiteral(R"(HloModule bad
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3,2] parameter(1)
  v = f32[3] parameter(2)
  ROOT g = f32[4,2] %1
})")
                                             .arg(call)
                                             .toStdString();
        auto module = parseHloModule(hlo);
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        const std::string before = printModule(**module);
        HloInstruction* g = (*module)->entryComputation()->findInstruction("g");
        auto expanded = expandLibraryCall(*g);
        QVERIFY(!expanded.isOk());
        QCOMPARE(int(expanded.status().code()), code);
        QVERIFY2(expanded.status().message().rfind("%g: __", 0) == 0,
                 expanded.status().message().c_str());
        QVERIFY2(expanded.status().message().find(message.toStdString()) != std::string::npos,
                 expanded.status().message().c_str());
        // Nothing changed; the interpreter reports the same error.
        QCOMPARE(printModule(**module), before);
        Status evaluated = errorOf(hlo);
        QVERIFY2(evaluated.message().find(message.toStdString()) != std::string::npos,
                 evaluated.toString().c_str());
    }
};

QTEST_GUILESS_MAIN(TestLibraryCalls)
#include "tst_library_calls.moc"
