// The CPU backend (compiler/backends/cpu): JIT'd kernels against the
// reference interpreter. Every built-in example runs fused and unfused with
// no fallback and matches; the vectorised transcendentals equal
// compiler/runtime/fast_math bit for bit over sampled floats and special
// values (whose ulp accuracy tst_fast_math measures); integer edge cases,
// reductions split across threads, variadic reductions, GEMM epilogues,
// control flow, output recycling, visible fallbacks and errors.
#include <QtTest>

#include <bit>
#include <cmath>
#include <limits>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/cpu/cpu_executable.h"
#include "compiler/backends/cpu/cpu_kernel_emitter.h"
#include "compiler/backends/cpu/llvm_jit.h"
#include "compiler/runtime/thread_pool.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/runtime/fast_math.h"
#include "core/hlo_computation.h"
#include "core/hlo_evaluator.h"
#include "core/hlo_parser.h"
#include "core/hlo_printer.h"
#include "core/module_io.h"

using namespace hloscope;

namespace {

const QString kExamples = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples");

std::unique_ptr<HloModule> parse(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("parse: %s", module.status().toString().c_str());
    return std::move(*module);
}

ExecutionResult runOn(const ExecutionDevice& device, const HloModule& module, const std::vector<Literal>& args,
                      int threads = 2) {
    ExecutionOptions options;
    options.threads = threads;
    auto result = device.run(module, args, options);
    if (!result.isOk()) qFatal("%s: %s", device.name().c_str(), result.status().toString().c_str());
    return std::move(*result);
}

// Runs `text` on the CPU and the interpreter with random arguments and
// checks the outputs agree; returns the CPU result.
ExecutionResult expectMatch(const CpuDevice& cpu, const std::string& text, uint64_t seed = 7, int threads = 2) {
    auto module = parse(text);
    std::vector<Literal> args = makeRandomArguments(*module->entryComputation(), seed);
    ExecutionResult actual = runOn(cpu, *module, args, threads);
    auto expected = findDevice("interpreter");
    ExecutionResult reference = runOn(**expected, *module, args);
    const OutputCheck check = checkOutputs(reference.outputs, actual.outputs);
    if (!check.passed) qWarning("mismatch: %s", check.detail.c_str());
    [&] { QVERIFY2(check.passed, check.detail.c_str()); }();
    return actual;
}

}  // namespace

class TestCpuBackend : public QObject {
    Q_OBJECT

private:
    std::shared_ptr<CpuDevice> m_cpu = std::make_shared<CpuDevice>();

private slots:
    void initTestCase() {
        std::string why;
        QVERIFY2(m_cpu->available(&why), why.c_str());
        registerCpuBackend();
        QVERIFY(findDevice("cpu").isOk());
    }

    void examplesFusedAndUnfused_data() {
        QTest::addColumn<QString>("file");
        for (const QString& name : QDir(kExamples).entryList({QStringLiteral("*.hlo")}, QDir::Files, QDir::Name))
            QTest::newRow(qPrintable(name)) << kExamples + QLatin1Char('/') + name;
    }
    void examplesFusedAndUnfused() {
        QFETCH(QString, file);
        auto loaded = loadModuleFromFile(file.toStdString());
        QVERIFY2(loaded.isOk(), loaded.status().toString().c_str());
        std::vector<Literal> args = makeRandomArguments(*(*loaded)->entryComputation(), 3);
        auto interpreter = findDevice("interpreter");
        const ExecutionResult reference = runOn(**interpreter, **loaded, args);
        for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
            auto copy = loadModuleFromFile(file.toStdString());
            auto prepared = prepareForMode(std::move(*copy), "cpu", mode);
            QVERIFY2(prepared.isOk(), prepared.status().toString().c_str());
            const ExecutionResult actual = runOn(*m_cpu, **prepared, args);
            // The BERT modules still have instructions the backend leaves to
            // the interpreter (scatter; a kOutput fusion around an attention
            // dot that needs transposed operands); the rest compile fully.
            const bool bert = file.contains(QStringLiteral("bert_"));
            if (!bert) QVERIFY2(actual.fallbacks.empty(), actual.fallbacks.empty() ? "" : actual.fallbacks.front().c_str());
            for (const std::string& fallback : actual.fallbacks)
                QVERIFY2(fallback.rfind('%', 0) == 0 && fallback.find(": ") != std::string::npos, fallback.c_str());
            const OutputCheck check = checkOutputs(reference.outputs, actual.outputs);
            QVERIFY2(check.passed, (std::string(executionModeName(mode)) + ": " + check.detail).c_str());
            QVERIFY(!actual.kernelTimes.empty());
        }
    }

    // The JIT'd transcendentals are fast_math's functions, operation for operation.
    void vectorisedMathEqualsReference_data() {
        QTest::addColumn<QString>("op");
        for (const char* op : {"exponential", "log", "tanh", "logistic", "sine", "cosine", "erf"})
            QTest::newRow(op) << QString::fromLatin1(op);
    }
    void vectorisedMathEqualsReference() {
        QFETCH(QString, op);
        std::vector<float> inputs = {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                                     -std::numeric_limits<float>::max(), 88.7f, -103.9f, 1e7f, 0.625f};
        for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 65521) inputs.push_back(std::bit_cast<float>(uint32_t(bits)));
        const auto n = static_cast<int64_t>(inputs.size());
        const std::string text = "HloModule m\nENTRY e {\n  p = f32[" + std::to_string(n) + "] parameter(0)\n  ROOT r = f32[" +
                                 std::to_string(n) + "] " + op.toStdString() + "(p)\n}\n";
        auto module = parse(text);
        Literal input = Literal::vector<float>(PrimitiveType::F32, inputs);
        const ExecutionResult result = runOn(*m_cpu, *module, {input});
        QVERIFY(result.fallbacks.empty());
        const auto out = result.outputs.front().data<float>();
        float (*reference)(float) = nullptr;
        if (op == "exponential") reference = fast_math::exp;
        if (op == "log") reference = fast_math::log;
        if (op == "tanh") reference = fast_math::tanh;
        if (op == "logistic") reference = fast_math::logistic;
        if (op == "sine") reference = fast_math::sin;
        if (op == "cosine") reference = fast_math::cos;
        if (op == "erf") reference = fast_math::erf;
        int64_t mismatches = 0;
        for (int64_t i = 0; i < n; ++i) {
            const float expected = reference(inputs[static_cast<size_t>(i)]);
            const float actual = out[static_cast<size_t>(i)];
            const bool same = std::bit_cast<uint32_t>(expected) == std::bit_cast<uint32_t>(actual) ||
                              (std::isnan(expected) && std::isnan(actual));
            if (!same && mismatches++ < 5)
                qWarning("%s(%a) = %a, reference %a", qPrintable(op), double(inputs[static_cast<size_t>(i)]),
                         double(actual), double(expected));
        }
        QCOMPARE(mismatches, int64_t(0));
    }

    void integerSemantics() {
        // Division and remainder by zero and by -1, shifts past the width,
        // saturating float -> int conversion, unsigned compares.
        const std::string text = R"(HloModule m
ENTRY e {
  a = s32[6] constant({7, -7, -2147483648, 5, 0, -1})
  b = s32[6] constant({0, -1, -1, 2, 0, 40})
  d = s32[6] divide(a, b)
  r = s32[6] remainder(a, b)
  l = s32[6] shift-left(a, b)
  sr = s32[6] shift-right-arithmetic(a, b)
  ur = s32[6] shift-right-logical(a, b)
  f = f32[6] constant({nan, inf, -inf, 3.7, -3.7, 1e20})
  c = s32[6] convert(f)
  u = u8[6] convert(f)
  ua = u32[6] convert(a)
  lt = pred[6] compare(ua, ua), direction=LT
  cs = s32[6] convert(lt)
  ROOT t = (s32[6], s32[6], s32[6], s32[6], s32[6], s32[6], u8[6], s32[6]) tuple(d, r, l, sr, ur, c, u, cs)
})";
        const ExecutionResult result = expectMatch(*m_cpu, text);
        QVERIFY(result.fallbacks.empty());
    }

    void reductionsSplitAcrossThreads() {
        // One output over 2M elements: split over both threads, partials combined.
        const ExecutionResult full = expectMatch(*m_cpu, R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }
ENTRY e {
  p = f32[1024,2048] parameter(0)
  z = f32[] constant(0)
  m = f32[] constant(-inf)
  s = f32[] reduce(p, z), dimensions={0,1}, to_apply=add
  x = f32[] reduce(p, m), dimensions={0,1}, to_apply=max
  ROOT t = (f32[], f32[]) tuple(s, x)
})");
        QVERIFY(full.fallbacks.empty());
        // Row, column and middle-dimension reductions; integer max.
        const ExecutionResult shapes = expectMatch(*m_cpu, R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
imax { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] maximum(a, b) }
ENTRY e {
  p = f32[64,96,40] parameter(0)
  q = s32[64,96,40] parameter(1)
  z = f32[] constant(0)
  lo = s32[] constant(-2147483648)
  rows = f32[64,96] reduce(p, z), dimensions={2}, to_apply=add
  cols = f32[96,40] reduce(p, z), dimensions={0}, to_apply=add
  mid = f32[64,40] reduce(p, z), dimensions={1}, to_apply=add
  im = s32[96] reduce(q, lo), dimensions={0,2}, to_apply=imax
  ROOT t = (f32[64,96], f32[96,40], f32[64,40], s32[96]) tuple(rows, cols, mid, im)
})");
        QVERIFY(shapes.fallbacks.empty());
    }

    // row-fusion's kernels: reductions inside a loop fusion, computed once per
    // row in its preamble (a layer norm's second reduction needs the first);
    // rows of odd length, element ranges split mid-row over 3 threads, and a
    // reduction to a scalar reached through a reshape (not hoistable by row).
    void rowReductionsInsideLoops() {
        const ExecutionResult rows = expectMatch(*m_cpu, R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }
softmax {
  x = f32[37,1001] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[37] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[37,1001] broadcast(m), dimensions={0}
  d = f32[37,1001] subtract(x, mb)
  e = f32[37,1001] exponential(d)
  z = f32[] constant(0)
  s = f32[37] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[37,1001] broadcast(s), dimensions={0}
  ROOT r = f32[37,1001] divide(e, sb)
}
norm {
  x = f32[5,7,131] parameter(0)
  z = f32[] constant(0)
  c = f32[] constant(131)
  n = f32[5,7] broadcast(c), dimensions={}
  s = f32[5,7] reduce(x, z), dimensions={2}, to_apply=add
  mean = f32[5,7] divide(s, n)
  mb = f32[5,7,131] broadcast(mean), dimensions={0,1}
  d = f32[5,7,131] subtract(x, mb)
  d2 = f32[5,7,131] multiply(d, d)
  v = f32[5,7] reduce(d2, z), dimensions={2}, to_apply=add
  var = f32[5,7] divide(v, n)
  r = f32[5,7] rsqrt(var)
  rb = f32[5,7,131] broadcast(r), dimensions={0,1}
  ROOT y = f32[5,7,131] multiply(d, rb)
}
total {
  x = f32[9,11] parameter(0)
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
  t = f32[1] reshape(s)
  u = f32[] reshape(t)
  ub = f32[9,11] broadcast(u), dimensions={}
  ROOT r = f32[9,11] subtract(x, ub)
}
ENTRY e {
  a = f32[37,1001] parameter(0)
  b = f32[5,7,131] parameter(1)
  c = f32[9,11] parameter(2)
  sa = f32[37,1001] fusion(a), kind=kLoop, calls=softmax
  nb = f32[5,7,131] fusion(b), kind=kLoop, calls=norm
  tc = f32[9,11] fusion(c), kind=kLoop, calls=total
  ROOT t = (f32[37,1001], f32[5,7,131], f32[9,11]) tuple(sa, nb, tc)
})", 11, 3);
        QVERIFY(rows.fallbacks.empty());
    }

    // Non-temporal output stores (forced on for every kernel here; the
    // runtime turns them on for outputs larger than the last-level cache):
    // a long 1-D elementwise kernel cut into chunks, ranges split mid-chunk
    // over 3 threads, odd lengths (partial cache lines at both ends), rows
    // that fit a chunk with hoisted row work (softmax), a multi-output
    // fusion of mixed element widths, and kernels where streaming does not
    // apply (short rows, a long-row kernel with a reduction inside).
    void streamingStoresMatch_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("long 1-D, chunks") << QStringLiteral(R"(HloModule m
ENTRY e { x = f32[100003] parameter(0)  y = f32[100003] multiply(x, x)  ROOT r = f32[100003] add(y, x) })");
        QTest::newRow("softmax rows") << QStringLiteral(R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }
ENTRY e { x = f32[37,1001] parameter(0)  ninf = f32[] constant(-inf)
  m = f32[37] reduce(x, ninf), dimensions={1}, to_apply=max  mb = f32[37,1001] broadcast(m), dimensions={0}
  d = f32[37,1001] subtract(x, mb)  e = f32[37,1001] exponential(d)  z = f32[] constant(0)
  s = f32[37] reduce(e, z), dimensions={1}, to_apply=add  sb = f32[37,1001] broadcast(s), dimensions={0}
  ROOT r = f32[37,1001] divide(e, sb) })");
        QTest::newRow("mixed widths") << QStringLiteral(R"(HloModule m
fused { p = f64[3,5000] parameter(0)  q = f64[3,5000] multiply(p, p)  c = f32[3,5000] convert(q)
  z = f64[] constant(0.5)  zb = f64[3,5000] broadcast(z), dimensions={}  g = pred[3,5000] compare(p, zb), direction=GT
  ROOT t = (f64[3,5000], f32[3,5000], pred[3,5000]) tuple(q, c, g) }
ENTRY e { x = f64[3,5000] parameter(0)
  ROOT f = (f64[3,5000], f32[3,5000], pred[3,5000]) fusion(x), kind=kLoop, calls=fused })");
        QTest::newRow("short rows") << QStringLiteral(R"(HloModule m
ENTRY e { x = f32[999,7] parameter(0)  ROOT r = f32[999,7] exponential(x) })");
        QTest::newRow("long rows, reduce inside") << QStringLiteral(R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e { x = f32[3,9000] parameter(0)  z = f32[] constant(0)
  s = f32[3] reduce(x, z), dimensions={1}, to_apply=add  sb = f32[3,9000] broadcast(s), dimensions={0}
  ROOT r = f32[3,9000] subtract(x, sb) })");
    }
    void streamingStoresMatch() {
        QFETCH(QString, text);
        auto module = parse(text.toStdString());
        std::vector<Literal> args = makeRandomArguments(*module->entryComputation(), 5);
        auto interpreter = findDevice("interpreter");
        const ExecutionResult reference = runOn(**interpreter, *module, args);
        auto prepared = prepareForMode(parse(text.toStdString()), "cpu", ExecutionMode::kFused);
        QVERIFY2(prepared.isOk(), prepared.status().toString().c_str());
        CpuCompileOptions options;
        options.streamingStoreBytes = 0;
        auto executable = CpuExecutable::compile(std::move(*prepared), options);
        QVERIFY2(executable.isOk(), executable.status().toString().c_str());
        QVERIFY((*executable)->fallbacks().empty());
        ThreadPool pool(3);
        for (int run = 0; run < 2; ++run) {
            auto result = (*executable)->run(args, ExecutionOptions{}, &pool);
            QVERIFY2(result.isOk(), result.status().toString().c_str());
            const OutputCheck check = checkOutputs(reference.outputs, result->outputs);
            QVERIFY2(check.passed, check.detail.c_str());
        }
    }
    // The emitter streams only where it applies.
    void streamingStoresEmitted() {
        auto jit = CpuJit::create();
        QVERIFY2(jit.isOk(), jit.status().toString().c_str());
        auto module = parse(R"(HloModule m
ENTRY e { x = f32[64,1000] parameter(0)  y = f32[64,1000] exponential(x)  s = f32[64,4] slice(y), slice={[0:64], [0:4]}
  ROOT t = (f32[64,1000], f32[64,4]) tuple(y, s) })");
        const HloComputation& entry = *module->entryComputation();
        const HloInstruction* x = entry.parameter(0);
        auto emitted = [&](const HloInstruction* output) {
            CpuKernelEmitter emitter(**jit, "m");
            CpuKernelSpec spec;
            spec.name = "k";
            spec.outputs = {output};
            spec.leaves = {x};
            spec.streamOutputs = true;
            auto info = emitter.emitKernel(spec);
            if (!info.isOk()) qFatal("%s", info.status().toString().c_str());
            return emitter.irText();
        };
        const bool x86 = (*jit)->targetTriple().rfind("x86_64", 0) == 0;
        const std::string rows = emitted(entry.root()->operand(0));
        QCOMPARE(rows.find("hloscope.stream_copy") != std::string::npos, x86);
        QCOMPARE(rows.find("!nontemporal") != std::string::npos, x86);
        QCOMPARE(rows.find("llvm.x86.sse.sfence") != std::string::npos, x86);
        // 16-byte rows: mostly partial lines, so plain stores.
        QVERIFY(emitted(entry.root()->operand(1)).find("stream_copy") == std::string::npos);
    }

    // Convolutions run as im2col + GEMM (compiler/runtime/convolution.h):
    // NHWC in place, other dim_labels scattered, strides, padding, both
    // dilations, reversal, feature groups (depthwise), 1-D and 3-D, f64,
    // fused with an elementwise consumer; what it does not map (bf16,
    // batch_group_count) falls back visibly with the reason.
    void convolutionsMatch_data() {
        QTest::addColumn<QString>("conv");
        QTest::addColumn<QString>("fallback");  // expected in the fallback reason; empty: none
        auto row = [](const char* name, const char* text, const char* fallback = "") {
            QTest::newRow(name) << QString::fromLatin1(text) << QString::fromLatin1(fallback);
        };
        row("nhwc same padding", R"(x = f32[2,9,11,5] parameter(0)  w = f32[3,3,5,7] parameter(1)
  ROOT c = f32[2,9,11,7] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f)");
        row("nchw strided", R"(x = f32[3,4,13,10] parameter(0)  w = f32[6,4,3,2] parameter(1)
  ROOT c = f32[3,6,6,5] convolution(x, w), window={size=3x2 stride=2x2 pad=0_1x0_1}, dim_labels=bf01_oi01->bf01)");
        row("dilations and reversal", R"(x = f32[2,7,6,3] parameter(0)  w = f32[2,3,3,4] parameter(1)
  ROOT c = f32[2,13,5,4] convolution(x, w), window={size=2x3 pad=1_0x2_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f)");
        row("depthwise groups", R"(x = f32[2,8,8,6] parameter(0)  w = f32[3,3,1,6] parameter(1)
  ROOT c = f32[2,8,8,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=6)");
        row("grouped, output f first", R"(x = f32[2,5,5,4] parameter(0)  w = f32[2,2,2,6] parameter(1)
  ROOT c = f32[6,2,4,4] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->fb01, feature_group_count=2)");
        row("1-D f64", R"(x = f64[4,50,3] parameter(0)  w = f64[5,3,2] parameter(1)
  ROOT c = f64[4,23,2] convolution(x, w), window={size=5 stride=2}, dim_labels=b0f_0io->b0f)");
        row("3-D", R"(x = f32[1,5,6,7,2] parameter(0)  w = f32[2,2,3,2,3] parameter(1)
  ROOT c = f32[1,4,5,5,3] convolution(x, w), window={size=2x2x3}, dim_labels=b012f_012io->b012f)");
        row("bias and relu after", R"(x = f32[2,9,9,8] parameter(0)  w = f32[3,3,8,16] parameter(1)  b = f32[16] parameter(2)
  c = f32[2,9,9,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,9,9,16] broadcast(b), dimensions={3}  s = f32[2,9,9,16] add(c, bb)  z = f32[] constant(0)
  zb = f32[2,9,9,16] broadcast(z), dimensions={}  ROOT r = f32[2,9,9,16] maximum(s, zb))");
        row("bf16", R"(x = bf16[1,4,4,2] parameter(0)  w = bf16[2,2,2,3] parameter(1)
  ROOT c = bf16[1,3,3,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f)", "f32 and f64");
        row("batch groups", R"(x = f32[4,5,5,3] parameter(0)  w = f32[2,2,3,6] parameter(1)
  ROOT c = f32[2,4,4,6] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, batch_group_count=2)",
            "batch_group_count");
    }
    void convolutionsMatch() {
        QFETCH(QString, conv);
        QFETCH(QString, fallback);
        const std::string text = "HloModule m\nENTRY e {\n  " + conv.toStdString() + "\n}\n";
        auto module = parse(text);
        std::vector<Literal> args = makeRandomArguments(*module->entryComputation(), 9);
        auto interpreter = findDevice("interpreter");
        const ExecutionResult reference = runOn(**interpreter, *module, args);
        for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
            auto prepared = prepareForMode(parse(text), "cpu", mode);
            QVERIFY2(prepared.isOk(), prepared.status().toString().c_str());
            const ExecutionResult actual = runOn(*m_cpu, **prepared, args, 3);
            const OutputCheck check = checkOutputs(reference.outputs, actual.outputs);
            QVERIFY2(check.passed, check.detail.c_str());
            if (fallback.isEmpty()) {
                QVERIFY2(actual.fallbacks.empty(), actual.fallbacks.empty() ? "" : actual.fallbacks.front().c_str());
            } else {
                QCOMPARE(actual.fallbacks.size(), size_t(1));
                QVERIFY2(actual.fallbacks.front().find(fallback.toStdString()) != std::string::npos,
                         actual.fallbacks.front().c_str());
            }
        }
    }

    // A kOutput epilogue over a wide output (a vocabulary projection) runs in
    // 1024-column tiles, the last one partial, rows of 3 threads' blocks;
    // the rhs transposed as in BERT's tied decoder.
    void wideGemmEpilogueTiles() {
        const ExecutionResult result = expectMatch(*m_cpu, R"(HloModule m
fused { a = f32[70,48] parameter(0)  w = f32[5000,48] parameter(1)  b = f32[5000] parameter(2)
  d = f32[70,5000] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  bb = f32[70,5000] broadcast(b), dimensions={1}  ROOT s = f32[70,5000] add(d, bb) }
ENTRY e { a = f32[70,48] parameter(0)  w = f32[5000,48] parameter(1)  b = f32[5000] parameter(2)
  ROOT f = f32[70,5000] fusion(a, w, b), kind=kOutput, calls=fused })", 13, 3);
        QVERIFY(result.fallbacks.empty());
    }

    void variadicArgmax() {
        const ExecutionResult result = expectMatch(*m_cpu, R"(HloModule m
argmax {
  av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p = f32[300,5000] parameter(0)
  io = s32[300,5000] iota(), iota_dimension=1
  m = f32[] constant(-inf)
  z = s32[] constant(0)
  ROOT r = (f32[300], s32[300]) reduce(p, io, m, z), dimensions={1}, to_apply=argmax
})");
        QVERIFY(result.fallbacks.empty());
    }

    void gemmWithEpilogue() {
        // relu(x @ w + b) through the fused pipeline: one kOutput fusion, GEMM + epilogue.
        auto module = parse(R"(HloModule m
ENTRY e {
  x = f32[300,200] parameter(0)
  w = f32[200,170] parameter(1)
  b = f32[170] parameter(2)
  d = f32[300,170] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[300,170] broadcast(b), dimensions={1}
  s = f32[300,170] add(d, bb)
  z = f32[] constant(0)
  zb = f32[300,170] broadcast(z), dimensions={}
  ROOT r = f32[300,170] maximum(s, zb)
})");
        std::vector<Literal> args = makeRandomArguments(*module->entryComputation(), 5);
        auto interpreter = findDevice("interpreter");
        const ExecutionResult reference = runOn(**interpreter, *module, args);
        auto prepared = prepareForMode(parse(printModule(*module)), "cpu", ExecutionMode::kFused);
        QVERIFY(prepared.isOk());
        const ExecutionResult fused = runOn(*m_cpu, **prepared, args);
        QVERIFY(fused.fallbacks.empty());
        QCOMPARE(fused.kernelTimes.size(), size_t(1));
        QVERIFY(checkOutputs(reference.outputs, fused.outputs).passed);
        // One thread and two give the same answer.
        const ExecutionResult single = runOn(*m_cpu, **prepared, args, 1);
        QVERIFY(checkOutputs(single.outputs, fused.outputs).passed);
    }

    void shapeOpsInKernels() {
        const ExecutionResult result = expectMatch(*m_cpu, R"(HloModule m
ENTRY e {
  p = f32[6,10] parameter(0)
  q = f32[4,10] parameter(1)
  t = f32[10,6] transpose(p), dimensions={1,0}
  s = f32[3,5] slice(p), slice={[1:6:2], [0:10:2]}
  rv = f32[6,10] reverse(p), dimensions={0,1}
  c = f32[10,10] concatenate(p, q), dimensions={0}
  z = f32[] constant(-1)
  pd = f32[9,22] pad(p, z), padding=1_2x0_3_1
  r = f32[3,20] reshape(p)
  i = f32[6,10] iota(), iota_dimension=1
  a = f32[6,10] add(rv, i)
  ix = s32[5,3,1] constant({{{0},{5},{9}},{{-3},{2},{1}},{{4},{4},{4}},{{0},{1},{2}},{{6},{7},{8}}})
  g = f32[5,3,10] gather(p, ix), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,10}
  i0 = s32[] constant(5)
  i1 = s32[] constant(-2)
  ds = f32[2,4] dynamic-slice(p, i0, i1), dynamic_slice_sizes={2,4}
  ROOT o = (f32[10,6], f32[3,5], f32[6,10], f32[10,10], f32[9,22], f32[3,20], f32[5,3,10], f32[2,4]) tuple(t, s, a, c, pd, r, g, ds)
})");
        QVERIFY(result.fallbacks.empty());
        // dynamic-update-slice: in range, clamped from above and from below,
        // fused behind an exponential.
        const ExecutionResult updated = expectMatch(*m_cpu, R"(HloModule m
ENTRY e {
  x = f32[6,10] parameter(0)
  u = f32[2,4] parameter(1)
  e = f32[2,4] exponential(u)
  i0 = s32[] constant(3)
  i1 = s32[] constant(5)
  d = f32[6,10] dynamic-update-slice(x, e, i0, i1)
  hi = s32[] constant(100)
  lo = s32[] constant(-7)
  d2 = f32[6,10] dynamic-update-slice(x, u, hi, lo)
  n = f32[6,10] negate(d2)
  ROOT o = (f32[6,10], f32[6,10]) tuple(d, n)
})");
        QVERIFY(updated.fallbacks.empty());
    }

    void controlFlow() {
        const ExecutionResult result = expectMatch(*m_cpu, R"(HloModule m
cond { s = (s32[], f32[64]) parameter(0)  i = s32[] get-tuple-element(s), index=0  n = s32[] constant(10)
       ROOT lt = pred[] compare(i, n), direction=LT }
body { s = (s32[], f32[64]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       v = f32[64] get-tuple-element(s), index=1  one = s32[] constant(1)  i1 = s32[] add(i, one)
       h = f32[] constant(0.5)  hb = f32[64] broadcast(h), dimensions={}  v1 = f32[64] multiply(v, hb)
       c = f32[64] cosine(v1)
       ROOT t = (s32[], f32[64]) tuple(i1, c) }
double { x = f32[64] parameter(0)  ROOT y = f32[64] add(x, x) }
negate { x = f32[64] parameter(0)  ROOT y = f32[64] negate(x) }
helper { x = f32[64] parameter(0)  ROOT y = f32[64] exponential(x) }
ENTRY e {
  p = f32[64] parameter(0)
  k = s32[] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[64]) tuple(z, p)
  w = (s32[], f32[64]) while(init), condition=cond, body=body
  v = f32[64] get-tuple-element(w), index=1
  b = f32[64] conditional(k, v, v), branch_computations={double, negate}
  ROOT r = f32[64] call(b), to_apply=helper
})");
        QVERIFY(result.fallbacks.empty());
    }

    void swappingLoopState() {
        // The body swaps two state elements: copies must not overwrite what they read.
        expectMatch(*m_cpu, R"(HloModule m
cond { s = (s32[], f32[8], f32[8]) parameter(0)  i = s32[] get-tuple-element(s), index=0  n = s32[] constant(3)
       ROOT lt = pred[] compare(i, n), direction=LT }
body { s = (s32[], f32[8], f32[8]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       a = f32[8] get-tuple-element(s), index=1  b = f32[8] get-tuple-element(s), index=2
       one = s32[] constant(1)  i1 = s32[] add(i, one)
       ROOT t = (s32[], f32[8], f32[8]) tuple(i1, b, a) }
ENTRY e {
  p = f32[8] parameter(0)  q = f32[8] parameter(1)  z = s32[] constant(0)
  init = (s32[], f32[8], f32[8]) tuple(z, p, q)
  ROOT w = (s32[], f32[8], f32[8]) while(init), condition=cond, body=body
})");
    }

    void fallbackIsVisibleAndCorrect() {
        // sort is not compiled: the interpreter runs it, the run says so.
        const ExecutionResult result = expectMatch(*m_cpu, R"(HloModule m
less { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT lt = pred[] compare(a, b), direction=LT }
ENTRY e {
  p = f32[100] parameter(0)
  e = f32[100] exponential(p)
  s = f32[100] sort(e), dimensions={0}, to_apply=less
  ROOT n = f32[100] negate(s)
})");
        QCOMPARE(result.fallbacks.size(), size_t(1));
        QVERIFY2(QString::fromStdString(result.fallbacks.front()).startsWith(QStringLiteral("%s: sort")),
                 result.fallbacks.front().c_str());
    }

    void outputsSurviveTheNextRun() {
        // Output literals share the executable's storage copy-on-write: read
        // them through const references, or the read itself detaches a copy.
        auto module = parse("HloModule m\nENTRY e {\n  p = f32[1000] parameter(0)\n  ROOT r = f32[1000] negate(p)\n}\n");
        Literal a = Literal::vector<float>(PrimitiveType::F32, std::vector<float>(1000, 1.0f));
        Literal b = Literal::vector<float>(PrimitiveType::F32, std::vector<float>(1000, 2.0f));
        ExecutionResult first = runOn(*m_cpu, *module, {a});
        const Literal& firstOut = first.outputs.front();
        const void* firstStorage = firstOut.untypedData();
        ExecutionResult second = runOn(*m_cpu, *module, {b});
        const Literal& secondOut = second.outputs.front();
        // Still held: not reused, not overwritten.
        QCOMPARE(firstOut.data<float>()[0], -1.0f);
        QCOMPARE(secondOut.data<float>()[0], -2.0f);
        QVERIFY(secondOut.untypedData() != firstStorage);
        QCOMPARE(firstOut.untypedData(), firstStorage);
        // Dropped: its storage is reused by the next run.
        const void* secondStorage = secondOut.untypedData();
        second = ExecutionResult();
        const ExecutionResult third = runOn(*m_cpu, *module, {a});
        QCOMPARE(third.outputs.front().untypedData(), secondStorage);
        QCOMPARE(third.outputs.front().data<float>()[999], -1.0f);
        QCOMPARE(firstOut.data<float>()[999], -1.0f);
        // The second run of the same module text came from the kernel cache.
        QCOMPARE(third.compileSeconds, 0.0);
    }

    void errors() {
        auto module = parse("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] negate(p)\n}\n");
        auto none = m_cpu->run(*module, {}, {});
        QVERIFY(!none.isOk());
        QVERIFY2(QString::fromStdString(none.status().message()).contains(QStringLiteral("takes 1 argument")),
                 none.status().message().c_str());
        auto wrong = m_cpu->run(*module, {Literal::vector<float>(PrimitiveType::F32, {1.0f, 2.0f})}, {});
        QVERIFY(!wrong.isOk());
        QVERIFY(QString::fromStdString(wrong.status().message()).contains(QStringLiteral("%p")));
        std::atomic<bool> cancel{true};
        ExecutionOptions options;
        options.cancel = &cancel;
        auto cancelled = m_cpu->run(*module, {Literal::vector<float>(PrimitiveType::F32, {1, 2, 3, 4})}, options);
        QCOMPARE(cancelled.status().code(), StatusCode::kCancelled);
    }
};

QTEST_GUILESS_MAIN(TestCpuBackend)
#include "tst_cpu_backend.moc"
