// TpuPrecisionEmulationPass and emulateTpuNumerics (compiler/backends/tpu):
// the rewritten HLO (CHECK lines, verifier), the MXU numerics evaluated by
// the reference interpreter (DEFAULT rounds inputs to bf16, HIGH bf16_3x,
// HIGHEST bf16_6x matches f32), per-operand precision, algorithm=,
// convolutions, infinities, what must stay untouched, schedules and control
// edges, and the CPU backend running the rewritten module.
#include <QTest>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/tpu/tpu_device.h"
#include "compiler/backends/tpu/tpu_precision.h"
#include "compiler/runtime/execution_modes.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "tests/pass_check_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

// bf16(x), round to nearest even, computed here independently of `convert`.
float bf16Round(float x) {
    uint32_t bits = std::bit_cast<uint32_t>(x);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return std::bit_cast<float>(bits & 0xFFFF0000u);
}

std::unique_ptr<HloModule> parse(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("parse: %s", module.status().toString().c_str());
    return std::move(*module);
}

Literal evaluate(const HloModule& module, const std::vector<Literal>& args) {
    HloEvaluator evaluator;
    auto result = evaluator.evaluate(module, args);
    if (!result.isOk()) qFatal("evaluate: %s", result.status().toString().c_str());
    return std::move(*result);
}

std::unique_ptr<HloModule> emulated(const HloModule& module,
                                    TpuNumericsSummary* summary = nullptr) {
    auto result = emulateTpuNumerics(module, summary);
    if (!result.isOk()) qFatal("emulateTpuNumerics: %s", result.status().toString().c_str());
    return std::move(*result);
}

Literal array(const std::vector<int64_t>& dims, const std::vector<float>& values) {
    Literal literal(Shape::makeArray(PrimitiveType::F32, dims));
    auto data = literal.data<float>();
    for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
    return literal;
}

Literal randomArray(const std::vector<int64_t>& dims, uint32_t seed, float low, float high) {
    Literal literal(Shape::makeArray(PrimitiveType::F32, dims));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(low, high);
    for (float& x : literal.data<float>()) x = value(rng);
    return literal;
}

// Largest |a - b| / |b| over the elements.
double maxRelative(const Literal& a, const Literal& b) {
    double worst = 0;
    for (int64_t i = 0; i < b.elementCount(); ++i)
        worst = std::max(
            worst, std::abs(a.getAsDouble(i) - b.getAsDouble(i)) / std::abs(b.getAsDouble(i)));
    return worst;
}

// max |a - b| over max |b|: the error of a whole output, whatever its scale.
double normalisedError(const Literal& a, const Literal& b) {
    double difference = 0, magnitude = 0;
    for (int64_t i = 0; i < b.elementCount(); ++i) {
        difference = std::max(difference, std::abs(a.getAsDouble(i) - b.getAsDouble(i)));
        magnitude = std::max(magnitude, std::abs(b.getAsDouble(i)));
    }
    return difference / magnitude;
}

std::string dotModule(const std::string& attributes, const std::string& lhs = "f32[8,256]",
                      const std::string& rhs = "f32[256,8]",
                      const std::string& result = "f32[8,8]") {
    return "HloModule m\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs +
           " parameter(1)\n  ROOT d = " + result + " dot(a, b), lhs_contracting_dims={" +
           (lhs.find(',') == std::string::npos ? "0" : "1") + "}, rhs_contracting_dims={0}" +
           attributes + "\n}\n";
}

// `args` with every f32 array rounded to bf16: a DEFAULT dot or
// convolution of these is what the MXU computes from the unrounded ones.
std::vector<Literal> roundedToBf16(std::vector<Literal> args) {
    for (Literal& literal : args)
        if (literal.shape().isArray() && literal.shape().elementType() == PrimitiveType::F32)
            for (float& v : literal.data<float>()) v = bf16Round(v);
    return args;
}

// Checks that `hlo`, whose dots and convolutions are DEFAULT and read only
// entry parameters (directly or through called computations), emulates into
// a module that verifies, rewrites `rewrites` of them, and evaluates to the
// module itself on bf16-rounded arguments, which differs from its f32 result.
// Empty when it does; otherwise what went wrong.
std::string checkDefaultNumerics(const std::string& hlo, int64_t rewrites,
                                 std::vector<Literal> args = {}) {
    auto original = parseHloModule(hlo);
    if (!original.isOk()) return "parse: " + original.status().toString();
    HloVerifierOptions options;
    options.allowMixedPrecision = true;
    if (Status verified = verifyModule(**original, options); !verified.isOk())
        return "the input does not verify: " + verified.toString();
    TpuNumericsSummary summary;
    auto module = emulateTpuNumerics(**original, &summary);
    if (!module.isOk()) return module.status().toString();
    if (Status verified = verifyModule(**module, options); !verified.isOk())
        return "the emulated module does not verify: " + verified.toString();
    if (summary.dots + summary.convolutions != rewrites)
        return std::to_string(summary.dots + summary.convolutions) + " rewritten, not " +
               std::to_string(rewrites);
    if (args.empty()) args = makeRandomArguments(*(*module)->entryComputation(), 7);
    HloEvaluator evaluator;
    auto tpu = evaluator.evaluate(**module, args);
    auto f32 = evaluator.evaluate(**original, args);
    auto rounded = evaluator.evaluate(**original, roundedToBf16(args));
    if (!tpu.isOk() || !f32.isOk() || !rounded.isOk())
        return "evaluate: " + tpu.status().toString() + " / " + f32.status().toString() + " / " +
               rounded.status().toString();
    if (*tpu != *rounded)
        return "TPU numerics " + tpu->toString() + " are not the bf16-rounded " +
               rounded->toString();
    if (*tpu == *f32) return "TPU numerics equal the f32 result: nothing was rounded";
    return {};
}

StatusOr<PassRun> runEmulation(const std::string& hlo, TpuPrecisionEmulationPass* pass = nullptr) {
    TpuPrecisionEmulationPass local;
    return runPass(pass ? *pass : local, hlo);
}

}  // namespace

class TestTpuPrecision : public QObject {
    Q_OBJECT

private slots:
    void defaultRoundsOperandsToBf16() {
        const std::string hlo =
            dotModule(", metadata={op_name=\"mm\"}", "f32[2,3]", "f32[3,4]", "f32[2,4]");
        TpuPrecisionEmulationPass pass;
        auto run = runPass(pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        const std::string why = fileCheck(run->text, R"(
CHECK: %d_lhs_hi_bf16{{\.\d+}} = bf16[2,3] convert(f32[2,3] %a)
CHECK-NEXT: %d_lhs_hi{{\.\d+}} = f32[2,3] convert(bf16[2,3] %d_lhs_hi_bf16
CHECK-NEXT: %d_rhs_hi_bf16{{\.\d+}} = bf16[3,4] convert(f32[3,4] %b)
CHECK-NEXT: %d_rhs_hi{{\.\d+}} = f32[3,4] convert(bf16[3,4] %d_rhs_hi_bf16
CHECK-NEXT: ROOT %d = f32[2,4] dot(f32[2,3] %d_lhs_hi{{\.\d+}}, f32[3,4] %d_rhs_hi{{\.\d+}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="mm"}
CHECK-NOT: dot(
CHECK-NOT: operand_precision)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(pass, "bf16x1"), 1);
        QCOMPARE(pass.statistics().at("dots-rewritten"), int64_t(1));
        QCOMPARE(pass.statistics().at("mxu-passes"), int64_t(1));
    }

    void highIsBf16x3() {
        TpuPrecisionEmulationPass pass;
        auto run = runPass(pass, dotModule(", operand_precision={high,high}"));
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QCOMPARE(countOf(run->text, " dot("), 3);
        QCOMPARE(countOf(run->text, " subtract("), 2);  // one remainder per operand
        // Small terms first (lo*hi and hi*lo), non-finite low sums zeroed, then hi*hi.
        const std::string why = fileCheck(run->text, R"(
CHECK: %d_hi_lo{{\.\d+}} = f32[8,8] dot(f32[8,256] %d_lhs_hi{{\.\d+}}, f32[256,8] %d_rhs_lo
CHECK-NEXT: %d_lo_hi{{\.\d+}} = f32[8,8] dot(f32[8,256] %d_lhs_lo{{\.\d+}}, f32[256,8] %d_rhs_hi
CHECK-NEXT: %d_hi_hi{{\.\d+}} = f32[8,8] dot(f32[8,256] %d_lhs_hi{{\.\d+}}, f32[256,8] %d_rhs_hi
CHECK-NEXT: %d_low{{\.\d+}} = f32[8,8] add(f32[8,8] %d_hi_lo{{\.\d+}}, f32[8,8] %d_lo_hi
CHECK-NEXT: %d_finite{{\.\d+}} = pred[8,8] is-finite(
CHECK: %d_low_sum{{\.\d+}} = f32[8,8] select(
CHECK-NEXT: ROOT %d = f32[8,8] add(f32[8,8] %d_low_sum{{\.\d+}}, f32[8,8] %d_hi_hi)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(pass, "bf16x3"), 1);
    }

    void highestIsBf16x6() {
        TpuPrecisionEmulationPass pass;
        auto run = runPass(pass, dotModule(", operand_precision={HIGHEST, HIGHEST}"));
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QCOMPARE(countOf(run->text, " dot("), 6);
        // XLA's bf16_6x order: mid*mid, hi*lo, lo*hi, hi*mid, mid*hi, then hi*hi.
        const std::string why = fileCheck(run->text, R"(
CHECK: %d_mid_mid{{\.\d+}} = f32[8,8] dot(
CHECK-NEXT: %d_hi_lo{{\.\d+}} = f32[8,8] dot(
CHECK-NEXT: %d_lo_hi{{\.\d+}} = f32[8,8] dot(
CHECK-NEXT: %d_hi_mid{{\.\d+}} = f32[8,8] dot(
CHECK-NEXT: %d_mid_hi{{\.\d+}} = f32[8,8] dot(
CHECK-NEXT: %d_hi_hi{{\.\d+}} = f32[8,8] dot(
CHECK-NOT: %d_lo_lo
CHECK-NOT: %d_mid_lo
CHECK: ROOT %d = f32[8,8] add()");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(pass, "bf16x6"), 1);
    }

    void passCountsPerOperand() {
        // Each operand is split by its own precision; products with
        // i + j < max(pieces).
        struct Case {
            const char* attributes;
            int dots;
            const char* rule;
        };
        const Case cases[] = {
            {"", 1, "bf16x1"},
            {", operand_precision={default,default}", 1, "bf16x1"},
            {", operand_precision={high,default}", 2, "bf16x2"},
            {", operand_precision={default,high}", 2, "bf16x2"},
            {", operand_precision={highest,default}", 3, "bf16x3"},
            {", operand_precision={high,highest}", 5, "bf16x5"},
            {", algorithm=dot_bf16_bf16_f32", 1, "bf16x1"},
            {", algorithm=dot_bf16_bf16_f32_x3", 3, "bf16x3"},
            {", algorithm=dot_bf16_bf16_f32_x6", 6, "bf16x6"},
            {", algorithm=dot_bf16_bf16_f32_x9", 9, "bf16x9"},
            {", algorithm=dot_f32_f32_f32", 6, "bf16x6"},
        };
        for (const Case& c : cases) {
            TpuPrecisionEmulationPass pass;
            auto run = runPass(pass, dotModule(c.attributes));
            QVERIFY2(run.isOk(),
                     (c.attributes + std::string(": ") + run.status().toString()).c_str());
            QVERIFY2(countOf(run->text, " dot(") == c.dots, c.attributes);
            QVERIFY2(ruleCount(pass, c.rule) == 1, c.attributes);
            QVERIFY2(countOf(run->text, "operand_precision") == 0 &&
                         countOf(run->text, "algorithm") == 0,
                     c.attributes);
        }
    }

    void errorsNameTheInstruction() {
        for (const char* attributes :
             {", algorithm=dot_tf32_tf32_f32", ", operand_precision={packed_nibble,default}",
              ", operand_precision={high}"}) {
            auto run = runEmulation(dotModule(attributes));
            QVERIFY2(!run.isOk(), attributes);
            QVERIFY2(run.status().toString().find("%d:") != std::string::npos,
                     run.status().toString().c_str());
        }
    }

    void numericsOfOnePlusTwoToMinusTen() {
        // x = 1 + 2^-10 has more mantissa than bf16 (7 bits): bf16(x) = 1.
        // x.x over two elements: f32 2 + 2^-8 + 2^-19 exactly; DEFAULT 2
        // (inputs rounded); HIGH 2 + 2^-8 (hi*hi + hi*lo + lo*hi, lo*lo
        // dropped); HIGHEST has mid*mid: exact.
        const float x = 1.0f + std::ldexp(1.0f, -10);
        const std::vector<Literal> args = {array({2}, {x, x}), array({2}, {x, x})};
        const float f32 = 2.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -19);
        auto base = parse(dotModule("", "f32[2]", "f32[2]", "f32[]"));
        QCOMPARE(evaluate(*base, args).getAsDouble(0), double(f32));
        const std::pair<const char*, float> expected[] = {
            {"", 2.0f},
            {", operand_precision={high,high}", 2.0f + std::ldexp(1.0f, -8)},
            {", operand_precision={highest,highest}", f32},
        };
        for (const auto& [attributes, want] : expected) {
            auto module = emulated(*parse(dotModule(attributes, "f32[2]", "f32[2]", "f32[]")));
            const double got = evaluate(*module, args).getAsDouble(0);
            QVERIFY2(got == double(want),
                     (std::string(attributes) + ": " + std::to_string(got)).c_str());
        }
        // DEFAULT differs from f32 by 2^-9 relative; HIGH by 2^-20.
        QVERIFY(std::abs(2.0 - f32) / f32 > 1e-3);
    }

    void numericsOnARandomDot() {
        // a f32[8,256] . b f32[256,8], values in [0.5, 2): relative errors
        // against the exact (double) dot.
        const std::vector<Literal> args = {randomArray({8, 256}, 1, 0.5f, 2.0f),
                                           randomArray({256, 8}, 2, 0.5f, 2.0f)};
        auto a = args[0].data<float>();
        auto b = args[1].data<float>();
        Literal exact(Shape::makeArray(PrimitiveType::F32, {8, 8}));
        std::vector<double> exactValues(64), bf16Values(64);
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j) {
                double sum = 0, rounded = 0;
                for (int k = 0; k < 256; ++k) {
                    sum += double(a[i * 256 + k]) * double(b[k * 8 + j]);
                    rounded += double(bf16Round(a[i * 256 + k])) * double(bf16Round(b[k * 8 + j]));
                }
                exactValues[static_cast<size_t>(i * 8 + j)] = sum;
                bf16Values[static_cast<size_t>(i * 8 + j)] = rounded;
            }
        auto relative = [&](const Literal& got, const std::vector<double>& want) {
            double worst = 0;
            for (int64_t i = 0; i < 64; ++i)
                worst =
                    std::max(worst, std::abs(got.getAsDouble(i) - want[static_cast<size_t>(i)]) /
                                        want[static_cast<size_t>(i)]);
            return worst;
        };
        const Literal f32 = evaluate(*parse(dotModule("")), args);
        const Literal def = evaluate(*emulated(*parse(dotModule(""))), args);
        const Literal high =
            evaluate(*emulated(*parse(dotModule(", operand_precision={high,high}"))), args);
        const Literal highest =
            evaluate(*emulated(*parse(dotModule(", operand_precision={highest,highest}"))), args);
        const double errF32 = relative(f32, exactValues), errDefault = relative(def, exactValues),
                     errHigh = relative(high, exactValues),
                     errHighest = relative(highest, exactValues);
        qInfo(
            "max relative error vs the exact dot: f32 %.3g, DEFAULT %.3g, HIGH %.3g, HIGHEST %.3g",
            errF32, errDefault, errHigh, errHighest);
        qInfo("max relative difference from the f32 dot: DEFAULT %.3g, HIGH %.3g, HIGHEST %.3g",
              maxRelative(def, f32), maxRelative(high, f32), maxRelative(highest, f32));
        // DEFAULT is the dot of the bf16-rounded inputs (f32 accumulation).
        QVERIFY2(relative(def, bf16Values) < 1e-6,
                 std::to_string(relative(def, bf16Values)).c_str());
        QVERIFY(maxRelative(def, f32) > 1e-4 && maxRelative(def, f32) < 1e-2);
        QVERIFY(maxRelative(highest, f32) < 1e-6);
        QVERIFY(errHighest < 1e-6);
        QVERIFY(errDefault > 10 * errHigh && errHigh > errHighest);
        QVERIFY(errHigh < 1e-4);
    }

    void perOperandPrecisionKeepsTheSplitOperand() {
        // {highest,default}: a 0/1 selection matrix (exact in bf16) at
        // DEFAULT picks elements of an f32 operand kept whole: the result is
        // the f32 one exactly (three passes), where {default,default} rounds.
        const std::string selection = "f32[4,4] {{0,1,0,0},{1,0,0,0},{0,0,0,1},{0,0,1,0}}";
        auto selectionLiteral = Literal::parse(selection);
        QVERIFY(selectionLiteral.isOk());
        const std::vector<Literal> args = {randomArray({3, 4}, 5, -3.0f, 3.0f), *selectionLiteral};
        const std::string hlo =
            dotModule(", operand_precision={highest,default}", "f32[3,4]", "f32[4,4]", "f32[3,4]");
        const Literal f32 = evaluate(*parse(hlo), args);
        TpuNumericsSummary summary;
        const Literal mixed = evaluate(*emulated(*parse(hlo), &summary), args);
        QCOMPARE(summary.mxuPasses, int64_t(3));
        QVERIFY2(mixed == f32, (mixed.toString() + " vs " + f32.toString()).c_str());
        const Literal low =
            evaluate(*emulated(*parse(dotModule(", operand_precision={default,default}", "f32[3,4]",
                                                "f32[4,4]", "f32[3,4]"))),
                     args);
        QVERIFY(low != f32);
        for (int64_t i = 0; i < low.elementCount(); ++i)
            QCOMPARE(low.getAsDouble(i), double(bf16Round(float(f32.getAsDouble(i)))));
    }

    void convolution() {
        const auto conv = [](const std::string& attributes) {
            return "HloModule m\nENTRY e {\n  x = f32[1,16,2] parameter(0)\n  k = f32[3,2,4] "
                   "parameter(1)\n"
                   "  ROOT c = f32[1,14,4] convolution(x, k), window={size=3}, "
                   "dim_labels=b0f_0io->b0f" +
                   attributes + "\n}\n";
        };
        TpuPrecisionEmulationPass pass;
        auto run = runPass(pass, conv(", operand_precision={highest,highest}"));
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QCOMPARE(countOf(run->text, " convolution("), 6);
        QCOMPARE(countOf(run->text, "window={size=3}, dim_labels=b0f_0io->b0f"), 6);
        QCOMPARE(pass.statistics().at("convolutions-rewritten"), int64_t(1));

        const std::vector<Literal> args = {randomArray({1, 16, 2}, 3, 0.5f, 2.0f),
                                           randomArray({3, 2, 4}, 4, 0.5f, 2.0f)};
        const Literal f32 = evaluate(*parse(conv("")), args);
        const Literal def = evaluate(*emulated(*parse(conv(""))), args);
        const Literal highest =
            evaluate(*emulated(*parse(conv(", operand_precision={highest,highest}"))), args);
        qInfo("convolution, max relative difference from f32: DEFAULT %.3g, HIGHEST %.3g",
              maxRelative(def, f32), maxRelative(highest, f32));
        QVERIFY(maxRelative(def, f32) > 1e-4);
        QVERIFY(maxRelative(highest, f32) < 1e-6);
        // DEFAULT: the f32 convolution of the bf16-rounded inputs.
        std::vector<Literal> rounded = args;
        for (Literal& literal : rounded)
            for (float& v : literal.data<float>()) v = bf16Round(v);
        QVERIFY(maxRelative(def, evaluate(*parse(conv("")), rounded)) < 1e-6);
    }

    void infinitiesAndNaNs() {
        // An infinite input makes inf - inf = NaN in its lower pieces; the
        // result is the f32 dot's inf, not NaN. NaN inputs stay NaN.
        const float inf = std::numeric_limits<float>::infinity();
        const std::string hlo =
            dotModule(", operand_precision={highest,highest}", "f32[3]", "f32[3]", "f32[]");
        auto module = emulated(*parse(hlo));
        const float x = 1.0f + std::ldexp(1.0f, -12);
        QCOMPARE(evaluate(*module, {array({3}, {inf, x, 2}), array({3}, {x, x, x})}).getAsDouble(0),
                 double(inf));
        QCOMPARE(
            evaluate(*module, {array({3}, {x, x, 2}), array({3}, {-inf, x, x})}).getAsDouble(0),
            -double(inf));
        QVERIFY(
            std::isnan(evaluate(*module, {array({3}, {std::nanf(""), x, 2}), array({3}, {x, x, x})})
                           .getAsDouble(0)));
        QVERIFY(std::isnan(
            evaluate(*module, {array({3}, {inf, x, 2}), array({3}, {0, x, x})}).getAsDouble(0)));
    }

    void untouched() {
        const std::string hlos[] = {
            // bf16 and f16 dots: single MXU passes already.
            dotModule(", operand_precision={highest,highest}", "bf16[2,3]", "bf16[3,4]",
                      "f32[2,4]"),
            dotModule("", "bf16[2,3]", "bf16[3,4]", "bf16[2,4]"),
            dotModule("", "f16[2,3]", "f16[3,4]", "f16[2,4]"),
            // f32 operands converted from types bf16 holds exactly.
            R"(HloModule m
ENTRY e {
  a = bf16[2,3] parameter(0)
  b = s8[3,4] parameter(1)
  fa = f32[2,3] convert(a)
  fb = f32[3,4] convert(b)
  ROOT d = f32[2,4] dot(fa, fb), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
})",
            // No dot or convolution.
            R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT n = f32[4] multiply(a, a)
})",
        };
        for (const std::string& hlo : hlos) {
            TpuPrecisionEmulationPass pass;
            auto run = runPass(pass, hlo);
            QVERIFY2(run.isOk(), run.status().toString().c_str());
            QVERIFY2(!run->changed, hlo.c_str());
            QCOMPARE(run->text, printModule(*parse(hlo), HloPrintOptions::canonical()));
            QVERIFY(pass.rewrites().empty());
        }
    }

    void secondRunChangesNothing() {
        for (const char* attributes :
             {"", ", operand_precision={high,high}", ", operand_precision={highest,default}"}) {
            auto module = emulated(*parse(dotModule(attributes)));
            const std::string before = printModule(*module);
            TpuPrecisionEmulationPass pass;
            auto changed = pass.run(*module);
            QVERIFY(changed.isOk());
            QVERIFY2(!*changed, attributes);
            QCOMPARE(printModule(*module), before);
        }
    }

    void mixedOperandTypeOneSide() {
        // Only one operand needs rounding: the other (converted from bf16)
        // is used as it is.
        TpuPrecisionEmulationPass pass;
        auto run = runPass(pass, R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  fb = f32[3,4] convert(b)
  ROOT d = f32[2,4] dot(a, fb), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
})");
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QCOMPARE(countOf(run->text, " dot("), 3);  // hi, mid, lo of a times fb
        QCOMPARE(countOf(run->text, "d_rhs_"), 0);
        QCOMPARE(ruleCount(pass, "bf16x3"), 1);
    }

    void scheduleControlEdgesAndNestedComputations() {
        // A scheduled module: the new instructions take the dot's place, so
        // the schedule stays operands-first; control edges move to the
        // replacement; dots inside called computations are rewritten too.
        const std::string hlo = R"(HloModule m, is_scheduled=true
body {
  p = f32[2,2] parameter(0)
  ROOT q = f32[2,2] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  n = f32[2,2] negate(a)
  d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, control-predecessors={n}
  m = f32[2,2] multiply(b, b), control-predecessors={d}
  c = f32[2,2] call(d), to_apply=body
  ROOT r = f32[2,2] add(c, m)
})";
        TpuPrecisionEmulationPass pass;
        auto run = runPass(pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QCOMPARE(pass.statistics().at("dots-rewritten"), int64_t(2));
        const std::string why = fileCheck(run->text, R"(
CHECK: ROOT %q = f32[2,2] dot(f32[2,2] %q_lhs_hi
CHECK: %n = f32[2,2] negate(
CHECK-NEXT: %d_lhs_hi_bf16{{\.\d+}} = bf16[2,2] convert(f32[2,2] %a), control-predecessors={%n}
CHECK-NEXT: %d_lhs_hi{{\.\d+}} = f32[2,2] convert(bf16[2,2] %d_lhs_hi_bf16{{\.\d+}}){{$}}
CHECK-NEXT: %d_rhs_hi_bf16{{\.\d+}} = bf16[2,2] convert(f32[2,2] %b), control-predecessors={%n}
CHECK-NEXT: %d_rhs_hi{{\.\d+}} = f32[2,2] convert(bf16[2,2] %d_rhs_hi_bf16{{\.\d+}}){{$}}
CHECK-NEXT: %d = f32[2,2] dot(f32[2,2] %d_lhs_hi{{\.\d+}}, f32[2,2] %d_rhs_hi{{\.\d+}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}{{$}}
CHECK-NEXT: %m = f32[2,2] multiply({{.*}}control-predecessors={%d}
CHECK-NEXT: %c = f32[2,2] call(f32[2,2] %d))");
        QVERIFY2(why.empty(), why.c_str());
        auto module = emulated(*parse(hlo));
        QVERIFY(module->isScheduled());
        const std::vector<Literal> args = {randomArray({2, 2}, 8, -2, 2),
                                           randomArray({2, 2}, 9, -2, 2)};
        QVERIFY(evaluate(*module, args) != evaluate(*parse(hlo), args));
    }

    void emulateLeavesTheOriginalAlone() {
        auto original = parse(dotModule(", operand_precision={high,high}"));
        const std::string before = printModule(*original);
        TpuNumericsSummary summary;
        auto module = emulated(*original, &summary);
        QCOMPARE(printModule(*original), before);
        QCOMPARE(summary.dots, int64_t(1));
        QCOMPARE(summary.convolutions, int64_t(0));
        QCOMPARE(summary.mxuPasses, int64_t(3));
        QVERIFY(printModule(*module) != before);
        auto bad = emulateTpuNumerics(*parse(dotModule(", algorithm=dot_tf32_tf32_f32")));
        QVERIFY(!bad.isOk());
        QVERIFY(bad.status().toString().find(std::string(TpuPrecisionEmulationPass::kName)) !=
                std::string::npos);
    }

    void anInputTheVerifierRejectsIsNotBlamedOnThePass() {
        // Eight hlo/valid corpus modules (XLA tests that run unverified HLO)
        // fail the verifier before the pass touches them: a tuple whose
        // declared shape is not its operands', after-all of an f32, a
        // broadcast that changes the element type, a sparse convolution
        // whose rhs is a (values, metadata) tuple. emulateTpuNumerics
        // verified only after the pass and so reported them as "verifier
        // after tpu-precision-emulation". It now checks its input first, as
        // PipelineRunner does; the same modules made valid are rewritten.
        const auto module = [](const std::string& lines) {
            return "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n"
                   "  b = f32[3,4] parameter(1)\n  x = f32[2,4] parameter(2)\n"
                   "  k = f32[4,1] parameter(3)\n  s = s32[4,1] parameter(4)\n"
                   "  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={0}\n" +
                   lines + "}\n";
        };
        struct Case {
            const char* culprit;  // the instruction the verifier names
            const char* invalid;
            const char* valid;
            int64_t rewrites;
        };
        const Case cases[] = {
            {"%t in computation e",  // xla_tests/tests.tuple_test_001
             "  ROOT t = (f32[2,4], f32[2]) tuple(d, d)\n",
             "  ROOT t = (f32[2,4], f32[2,4]) tuple(d, d)\n", 1},
            {"%tok in computation e",  // xla_tests/token_hlo_test_005
             "  tok = token[] after-all(d)\n  ROOT r = f32[2,4] add-dependency(d, tok)\n",
             "  tok = token[] after-all()\n  ROOT r = f32[2,4] add-dependency(d, tok)\n", 1},
            {"%c in computation e",  // fusion/instruction_fusion_test_015, copy_fusion_test_012
             "  h = f16[] constant(1)\n  c = f32[2,4] broadcast(h), dimensions={}\n"
             "  ROOT r = f32[2,4] add(d, c)\n",
             "  h = f32[] constant(1)\n  c = f32[2,4] broadcast(h), dimensions={}\n"
             "  ROOT r = f32[2,4] add(d, c)\n",
             1},
            {"%c in computation e",  // evaluator/hlo_evaluator_sparsity_test_001..004
             "  kt = (f32[4,1], s32[4,1]) tuple(k, s)\n"
             "  c = f32[2,1] convolution(x, kt), dim_labels=bf_io->bf, "
             "sparsity_config={rhs={sparsity=1x4 dimension=0 stride=1}}\n"
             "  ROOT r = (f32[2,4], f32[2,1]) tuple(d, c)\n",
             "  c = f32[2,1] convolution(x, k), dim_labels=bf_io->bf\n"
             "  ROOT r = (f32[2,4], f32[2,1]) tuple(d, c)\n",
             2},
        };
        HloVerifierOptions options;
        options.allowMixedPrecision = true;
        for (const Case& c : cases) {
            auto invalid = parse(module(c.invalid));
            const Status before = verifyModule(*invalid, options);
            QVERIFY2(!before.isOk(), c.invalid);
            auto result = emulateTpuNumerics(*invalid);
            QVERIFY2(!result.isOk(), c.invalid);
            const std::string error = result.status().toString();
            QVERIFY2(result.status().code() == StatusCode::kFailedPrecondition, error.c_str());
            QVERIFY2(error.find("the input module does not verify") != std::string::npos &&
                         error.find(before.message()) != std::string::npos &&
                         error.find(c.culprit) != std::string::npos,
                     error.c_str());
            QVERIFY2(error.find("verifier after") == std::string::npos, error.c_str());
            const std::string why = checkDefaultNumerics(module(c.valid), c.rewrites);
            QVERIFY2(why.empty(), (std::string(c.valid) + ": " + why).c_str());
        }
    }

    void groupedConvolutionsCalledComputationsAndOtherTypes() {
        // Rewrites that must verify and round exactly as a DEFAULT MXU pass:
        // grouped and batch-grouped convolutions, other dimension labels
        // with stride and padding, a batched dot with a bf16 result and a
        // non-default operand layout, tiled layouts (the tpu pipeline's),
        // and dots of the same name in the entry and in fused, called,
        // branch, async and while-body computations beside tuples and
        // tokens (the new instructions' names are module-unique).
        const char* const single[] = {
            R"(HloModule m
ENTRY e {
  x = f32[1,6,4] parameter(0)
  k = f32[3,2,4] parameter(1)
  ROOT c = f32[1,4,4] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f, feature_group_count=2
})",
            R"(HloModule m
ENTRY e {
  x = f32[4,6,2] parameter(0)
  k = f32[3,2,2] parameter(1)
  ROOT c = f32[2,4,2] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f, batch_group_count=2
})",
            R"(HloModule m
ENTRY e {
  x = f32[3,5,5,2] parameter(0)
  k = f32[4,2,3,3] parameter(1)
  ROOT c = bf16[3,4,3,3] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_oi01->bf01
})",
            R"(HloModule m
ENTRY e {
  a = f32[2,3,5]{0,1,2} parameter(0)
  b = f32[2,5,4] parameter(1)
  ROOT d = bf16[2,3,4]{2,1,0} dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})",
            R"(HloModule m
ENTRY e {
  a = f32[8,128]{1,0:T(8,128)} parameter(0)
  b = f32[128,128]{1,0:T(8,128)} parameter(1)
  ROOT d = f32[8,128]{1,0:T(8,128)} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
        };
        for (const char* hlo : single) {
            const std::string why = checkDefaultNumerics(hlo, 1);
            QVERIFY2(why.empty(), (std::string(hlo) + "\n" + why).c_str());
        }
        const std::string called = R"(HloModule m, is_scheduled=true
fused {
  p0 = f32[4,8] parameter(0)
  p1 = f32[8,4] parameter(1)
  d = f32[4,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[4,4] negate(d)
}
callee {
  p0 = f32[4,8] parameter(0)
  p1 = f32[8,4] parameter(1)
  ROOT d = f32[4,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
asynced {
  p0 = f32[4,8] parameter(0)
  p1 = f32[8,4] parameter(1)
  ROOT d = f32[4,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
branch0 {
  p = (f32[4,8], f32[8,4]) parameter(0)
  p0 = f32[4,8] get-tuple-element(p), index=0
  p1 = f32[8,4] get-tuple-element(p), index=1
  ROOT d = f32[4,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
branch1 {
  p = (f32[4,8], f32[8,4]) parameter(0)
  ROOT z = f32[4,4] constant(0)
}
cond {
  p = (s32[], f32[4,8], f32[8,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  ROOT lt = pred[] compare(i, one), direction=LT
}
body {
  p = (s32[], f32[4,8], f32[8,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  p0 = f32[4,8] get-tuple-element(p), index=1
  p1 = f32[8,4] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[4,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[4,8], f32[8,4], f32[4,4]) tuple(j, p0, p1, d)
}
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,4] parameter(1)
  s = s32[] parameter(2)
  tok = token[] after-all()
  d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dd = f32[4,4] add-dependency(d, tok)
  f = f32[4,4] fusion(a, b), kind=kOutput, calls=fused
  c = f32[4,4] call(a, b), to_apply=callee
  ab = (f32[4,8], f32[8,4]) tuple(a, b)
  k = f32[4,4] conditional(s, ab, ab), branch_computations={branch0, branch1}
  as = ((f32[4,8], f32[8,4]), f32[4,4], s32[]) async-start(a, b), calls=asynced
  ad = f32[4,4] async-done(as)
  zero = s32[] constant(0)
  init = f32[4,4] constant(0)
  w0 = (s32[], f32[4,8], f32[8,4], f32[4,4]) tuple(zero, a, b, init)
  w = (s32[], f32[4,8], f32[8,4], f32[4,4]) while(w0), condition=cond, body=body
  wd = f32[4,4] get-tuple-element(w), index=3
  ROOT r = (f32[4,4], f32[4,4], f32[4,4], f32[4,4], f32[4,4], f32[4,4]) tuple(dd, f, c, k, ad, wd)
})";
        auto module = parse(called);
        std::vector<Literal> args = makeRandomArguments(*module->entryComputation(), 7);
        args[2] = Literal(Shape::makeScalar(PrimitiveType::S32));  // branch 0: the dot
        QCOMPARE(args[2].getAsDouble(0), 0.0);
        const std::string why = checkDefaultNumerics(called, 6, std::move(args));
        QVERIFY2(why.empty(), why.c_str());
    }

    void examplesAndCorpusModels() {
        // Every example and every corpus model that loads emulates and
        // verifies; the f32 models' dots are rewritten. A model the pass
        // rejects must be one with a TPU-less algorithm= (none today).
        std::vector<std::string> files;
        for (const auto& entry :
             std::filesystem::directory_iterator(HLOSCOPE_SOURCE_DIR "/resources/examples"))
            if (entry.path().extension() == ".hlo") files.push_back(entry.path().string());
        const std::filesystem::path models = HLOSCOPE_CORPUS_DIR "/hlo/models";
        if (std::filesystem::exists(models))
            for (const auto& entry : std::filesystem::recursive_directory_iterator(models))
                if (entry.path().extension() == ".hlo") files.push_back(entry.path().string());
        std::sort(files.begin(), files.end());
        int64_t emulatedCount = 0, dots = 0, passes = 0;
        for (const std::string& file : files) {
            auto module = loadModuleFromFile(file);
            if (!module.isOk())
                continue;  // the corpus' known-corrupt dumps (tst_corpus lists them)
            HloVerifierOptions options;
            options.allowMixedPrecision = true;
            if (!verifyModule(**module, options).isOk()) continue;
            TpuNumericsSummary summary;
            auto result = emulateTpuNumerics(**module, &summary);
            QVERIFY2(result.isOk(), (file + ": " + result.status().toString()).c_str());
            ++emulatedCount;
            dots += summary.dots + summary.convolutions;
            passes += summary.mxuPasses;
            if (file.find("/resources/examples/mlp.hlo") != std::string::npos)
                QVERIFY(summary.dots > 0);
        }
        qInfo("%lld modules emulated, %lld dots/convolutions rewritten into %lld MXU passes",
              static_cast<long long>(emulatedCount), static_cast<long long>(dots),
              static_cast<long long>(passes));
        QVERIFY(emulatedCount >= 9);
    }

    void tpuSimDevice() {
        // The simulated TPU: simulated times (the simulator's, as they are),
        // outputs with TPU numerics from the CPU backend.
        TpuDevice v4;
        QCOMPARE(v4.name(), std::string("tpu-sim"));
        QCOMPARE(v4.kind(), std::string("tpu-sim"));
        QCOMPARE(hardwareFamily(v4.kind()), std::string_view("tpu"));
        QVERIFY(v4.description().find("Simulated TPU v4") != std::string::npos);
        std::string why;
        if (!v4.available(&why)) QSKIP(why.c_str());
        auto original = loadModuleFromFile(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo");
        QVERIFY2(original.isOk(), original.status().toString().c_str());
        const std::vector<Literal> args = makeRandomArguments(*(*original)->entryComputation(), 3);
        const Literal f32 = evaluate(**original, args);
        const Literal tpu = evaluate(*emulated(**original), args);
        QVERIFY(normalisedError(tpu, f32) > 1e-5);  // the example's f32 dots are DEFAULT
        TpuDevice v5e(TpuGeneration::kV5e);
        for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
            auto prepared = prepareCopyForMode(**original, "tpu", mode);
            QVERIFY2(prepared.isOk(), prepared.status().toString().c_str());
            auto result = v4.run(*prepared->module, args, ExecutionOptions{});
            QVERIFY2(result.isOk(), result.status().toString().c_str());
            QCOMPARE(result->device, std::string("tpu-sim"));
            QVERIFY(result->simulated);
            auto simulation = v4.simulation(*prepared->module);
            QVERIFY2(simulation.isOk(), simulation.status().toString().c_str());
            QVERIFY(simulation->totalSeconds > 0);
            QCOMPARE(result->wallSeconds, simulation->totalSeconds);
            QCOMPARE(result->kernelTimes.size(), simulation->kernels.size());
            QVERIFY(!result->kernelTimes.empty());
            for (size_t i = 0; i < result->kernelTimes.size(); ++i) {
                QCOMPARE(result->kernelTimes[i].name, simulation->kernels[i].name);
                QCOMPARE(result->kernelTimes[i].seconds, simulation->kernels[i].seconds);
            }
            QCOMPARE(result->timeline.size(), simulation->events.size());
            QCOMPARE(result->compileSeconds, 0.0);
            QCOMPARE(result->outputs.size(), size_t(1));
            const double toTpu = normalisedError(result->outputs[0], tpu);
            const double toF32 = normalisedError(result->outputs[0], f32);
            qInfo("mlp %s on tpu-sim: simulated %.4g ms; output vs TPU numerics %.3g, vs f32 %.3g",
                  std::string(executionModeName(mode)).c_str(), result->wallSeconds * 1e3, toTpu,
                  toF32);
            QVERIFY(toTpu < 1e-5);
            QVERIFY(toF32 > 10 * toTpu);
            // A second run reuses the cached simulation: the same figures.
            auto again = v4.run(*prepared->module, args, ExecutionOptions{});
            QVERIFY(again.isOk());
            QCOMPARE(again->wallSeconds, result->wallSeconds);
            QVERIFY(again->outputs[0] == result->outputs[0]);
            // Another generation, other times, the same numerics.
            auto other = v5e.run(*prepared->module, args, ExecutionOptions{});
            QVERIFY2(other.isOk(), other.status().toString().c_str());
            QVERIFY(other->wallSeconds != result->wallSeconds);
            QVERIFY(other->outputs[0] == result->outputs[0]);
        }
        // Errors name their stage.
        auto bad = v4.run(*parse(dotModule(", algorithm=dot_tf32_tf32_f32", "f32[8,128]",
                                           "f32[128,128]", "f32[8,128]")),
                          {randomArray({8, 128}, 1, 0, 1), randomArray({128, 128}, 2, 0, 1)},
                          ExecutionOptions{});
        QVERIFY(!bad.isOk());
        QVERIFY2(bad.status().toString().find(std::string(TpuPrecisionEmulationPass::kName)) !=
                     std::string::npos,
                 bad.status().toString().c_str());
        // Registered under their names, kind "tpu-sim", one per generation;
        // the numerics and the target they stand for.
        QCOMPARE(v5e.name(), std::string("tpu-sim-v5e"));
        QCOMPARE(v4.modelTarget(), std::string("tpu_v4"));
        QCOMPARE(v5e.modelTarget(), std::string("tpu_v5e"));
        auto numerics = v4.numericsModule(**original);
        QVERIFY2(numerics.isOk() && *numerics, numerics.status().toString().c_str());
        QVERIFY(evaluate(**numerics, args) == tpu);
        registerTpuBackend();
        for (TpuGeneration generation : {TpuGeneration::kV4, TpuGeneration::kV5e}) {
            auto found = findDevice(tpuDeviceName(generation));
            QVERIFY(found.isOk());
            QVERIFY(dynamic_cast<const TpuDevice*>(found->get()) != nullptr);
            QVERIFY(dynamic_cast<const TpuDevice*>(found->get())->generation() == generation);
        }
        QCOMPARE(parseTpuGeneration("tpu_v5e").value(), TpuGeneration::kV5e);
        QCOMPARE(parseTpuGeneration("v4").value(), TpuGeneration::kV4);
        QVERIFY(!parseTpuGeneration("v3"));
    }

    // The tpu pipeline's fusions that no CPU kernel computes (tst_differential
    // found them falling back to the interpreter): a kOutput fusion of an f32
    // dot at HIGHEST, whose six MXU passes the emulation writes into the
    // fused computation, and a multi-output fusion of a reduce with the value
    // it reduces. The device inlines them for the CPU backend: no fallbacks,
    // the interpreter's TPU numerics.
    void tpuSimRunsFusionsTheCpuCannotCompileAsKernels() {
        TpuDevice tpu;
        std::string why;
        if (!tpu.available(&why)) QSKIP(why.c_str());
        const struct {
            const char* name;
            const char* hlo;
            bool multiOutput;  // what the tpu pipeline makes of it: a multi-output
                               // fusion, or a kOutput fusion of the dot
        } cases[] = {
            {"dot epilogue at HIGHEST (seed 60)",
             "HloModule m\nENTRY e {\n  a = f32[8,4] parameter(0)\n  b = f32[4,17] parameter(1)\n"
             "  d = f32[8,17] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
             "operand_precision={highest,highest}\n  ROOT n = f32[8,17] negate(d)\n}\n",
             false},
            {"reduce with its operand as a second output (seed 53)",
             "HloModule m\nmax {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
             "  ROOT m = f32[] maximum(x, y)\n}\nENTRY e {\n  a = f32[8] parameter(0)\n"
             "  b = f32[8] parameter(1)\n  s = f32[8] add(a, b)\n  z = f32[] constant(-inf)\n"
             "  r = f32[] reduce(s, z), dimensions={0}, to_apply=max\n"
             "  ROOT t = (f32[8], f32[]) tuple(s, r)\n}\n",
             true},
        };
        for (const auto& c : cases) {
            auto original = parse(c.hlo);
            const std::vector<Literal> args =
                makeRandomArguments(*original->entryComputation(), 60);
            auto numerics = emulated(*original);
            auto reference = (*findDevice("interpreter"))->run(*numerics, args, ExecutionOptions{});
            QVERIFY2(reference.isOk(), reference.status().toString().c_str());
            auto prepared = prepareCopyForMode(*original, "tpu_v4", ExecutionMode::kFused);
            QVERIFY2(prepared.isOk(), prepared.status().toString().c_str());
            bool fused = false;
            for (const auto& instruction : prepared->module->entryComputation()->instructions())
                fused = fused || (instruction->opcode() == HloOpcode::kFusion &&
                                  (c.multiOutput ? instruction->shape().isTuple()
                                                 : instruction->fusionKind() == "kOutput"));
            QVERIFY2(fused, printModule(*prepared->module).c_str());
            auto result = tpu.run(*prepared->module, args, ExecutionOptions{});
            QVERIFY2(result.isOk(), result.status().toString().c_str());
            const std::string fallback =
                result->fallbacks.empty() ? std::string() : result->fallbacks.front();
            QVERIFY2(result->fallbacks.empty(), (std::string(c.name) + ": " + fallback).c_str());
            const OutputCheck check = checkOutputs(reference->outputs, result->outputs);
            QVERIFY2(check.passed && check.maxRelError < 1e-5,
                     (std::string(c.name) + ": " + check.detail).c_str());
            // What the CPU backend ran: the fusion inlined.
            auto cpuModule = tpu.cpuModule(*prepared->module);
            QVERIFY2(cpuModule.isOk(), cpuModule.status().toString().c_str());
            const std::string cpuText = printModule(**cpuModule);
            QVERIFY2(cpuText.find(" fusion(") == std::string::npos, cpuText.c_str());
        }
    }

    void cpuBackendKeepsTheRounding() {
        // The rewritten module through the cpu pipeline (simplifier, fusion)
        // and the LLVM backend gives the interpreter's TPU numerics, not f32.
        CpuDevice cpu;
        std::string why;
        if (!cpu.available(&why)) QSKIP(why.c_str());
        const std::vector<Literal> args = {randomArray({8, 256}, 1, 0.5f, 2.0f),
                                           randomArray({256, 8}, 2, 0.5f, 2.0f)};
        const Literal f32 = evaluate(*parse(dotModule("")), args);
        for (const char* attributes : {"", ", operand_precision={highest,highest}"}) {
            auto module = emulated(*parse(dotModule(attributes)));
            const Literal reference = evaluate(*module, args);
            for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
                auto prepared = prepareCopyForMode(*module, "cpu", mode);
                QVERIFY2(prepared.isOk(), prepared.status().toString().c_str());
                auto result = cpu.run(*prepared->module, args, ExecutionOptions{});
                QVERIFY2(result.isOk(), result.status().toString().c_str());
                QVERIFY(result->fallbacks.empty());
                const Literal& got = result->outputs.at(0);
                QVERIFY2(maxRelative(got, reference) < 1e-6, attributes);
                if (std::string(attributes).empty()) QVERIFY(maxRelative(got, f32) > 1e-4);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTpuPrecision)
#include "tst_tpu_precision.moc"
