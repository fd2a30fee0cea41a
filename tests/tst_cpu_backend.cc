// The CPU backend (compiler/backends/cpu): JIT'd kernels against the
// reference interpreter. Every built-in example runs fused and unfused with
// no fallback and matches; the vectorised transcendentals equal
// compiler/runtime/fast_math bit for bit over sampled floats and special
// values (whose ulp accuracy tst_fast_math measures); integer edge cases,
// reductions split across threads, variadic reductions, GEMM epilogues,
// control flow, output recycling, visible fallbacks and errors; modules of
// several devices (an executable per device, meeting at their collectives).
#include <QDir>
#include <QFile>
#include <QTest>
#include <bit>
#include <cmath>
#include <limits>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/cpu/cpu_executable.h"
#include "compiler/backends/cpu/cpu_kernel_emitter.h"
#include "compiler/backends/llvm/llvm_jit.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/runtime/fast_math.h"
#include "compiler/runtime/thread_pool.h"
#include "core/ir/float_types.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/io/module_io.h"
#include "core/interpreter/multi_device.h"
#include "tests/loop_update_cases.h"
#include "tests/sanitizer_run.h"

using namespace hloscope;

namespace {

const QString kExamples = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples");

std::unique_ptr<HloModule> parse(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("parse: %s", module.status().toString().c_str());
    return std::move(*module);
}

ExecutionResult runOn(const ExecutionDevice& device, const HloModule& module,
                      const std::vector<Literal>& args, int threads = 2) {
    ExecutionOptions options;
    options.threads = threads;
    auto result = device.run(module, args, options);
    if (!result.isOk()) qFatal("%s: %s", device.name().c_str(), result.status().toString().c_str());
    return std::move(*result);
}

// Runs `text` on the CPU and the interpreter with random arguments and
// checks the outputs agree; returns the CPU result.
ExecutionResult expectMatch(const CpuDevice& cpu, const std::string& text, uint64_t seed = 7,
                            int threads = 2) {
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

// A copy with storage of its own (copying a Literal shares its storage).
Literal deepCopy(const Literal& literal) {
    if (literal.isTuple()) {
        std::vector<Literal> elements;
        for (const Literal& element : literal.tupleElements())
            elements.push_back(deepCopy(element));
        return Literal::makeTuple(std::move(elements));
    }
    Literal copy(literal.shape());
    if (literal.shape().isArray() && literal.sizeInBytes() > 0)
        std::memcpy(copy.untypedData(), literal.untypedData(),
                    static_cast<size_t>(literal.sizeInBytes()));
    return copy;
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
        for (const QString& name :
             QDir(kExamples).entryList({QStringLiteral("*.hlo")}, QDir::Files, QDir::Name))
            QTest::newRow(qPrintable(name)) << kExamples + QLatin1Char('/') + name;
    }
    void examplesFusedAndUnfused() {
        QFETCH(QString, file);
        if (testing::leftOutOfSanitizerRun(file))
            QSKIP("sanitizer run: the BERT-sized examples are left out (minutes each under ASan)");
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
            // Every example compiles fully: nothing runs in the interpreter (the BERT training
            // step's embedding-gradient scatters run in the native scatter).
            QVERIFY2(actual.fallbacks.empty(),
                     actual.fallbacks.empty() ? "" : actual.fallbacks.front().c_str());
            for (const std::string& fallback : actual.fallbacks)
                QVERIFY2(fallback.rfind('%', 0) == 0 && fallback.find(": ") != std::string::npos,
                         fallback.c_str());
            const OutputCheck check = checkOutputs(reference.outputs, actual.outputs);
            QVERIFY2(check.passed,
                     (std::string(executionModeName(mode)) + ": " + check.detail).c_str());
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
        std::vector<float> inputs = {0.0f,
                                     -0.0f,
                                     1.0f,
                                     -1.0f,
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::denorm_min(),
                                     -std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::min(),
                                     std::numeric_limits<float>::max(),
                                     -std::numeric_limits<float>::max(),
                                     88.7f,
                                     -103.9f,
                                     1e7f,
                                     0.625f};
        for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 65521)
            inputs.push_back(std::bit_cast<float>(uint32_t(bits)));
        const auto n = static_cast<int64_t>(inputs.size());
        const std::string text = "HloModule m\nENTRY e {\n  p = f32[" + std::to_string(n) +
                                 "] parameter(0)\n  ROOT r = f32[" + std::to_string(n) + "] " +
                                 op.toStdString() + "(p)\n}\n";
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
            const bool same =
                std::bit_cast<uint32_t>(expected) == std::bit_cast<uint32_t>(actual) ||
                (std::isnan(expected) && std::isnan(actual));
            if (!same && mismatches++ < 5)
                qWarning("%s(%a) = %a, reference %a", qPrintable(op),
                         double(inputs[static_cast<size_t>(i)]), double(actual), double(expected));
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
})",
                                                 11, 3);
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
            KernelSpec spec;
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
        row("dilations and reversal",
            R"(x = f32[2,7,6,3] parameter(0)  w = f32[2,3,3,4] parameter(1)
  ROOT c = f32[2,13,5,4] convolution(x, w), window={size=2x3 pad=1_0x2_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f)");
        row("depthwise groups", R"(x = f32[2,8,8,6] parameter(0)  w = f32[3,3,1,6] parameter(1)
  ROOT c = f32[2,8,8,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=6)");
        row("grouped, output f first",
            R"(x = f32[2,5,5,4] parameter(0)  w = f32[2,2,2,6] parameter(1)
  ROOT c = f32[6,2,4,4] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->fb01, feature_group_count=2)");
        row("1-D f64", R"(x = f64[4,50,3] parameter(0)  w = f64[5,3,2] parameter(1)
  ROOT c = f64[4,23,2] convolution(x, w), window={size=5 stride=2}, dim_labels=b0f_0io->b0f)");
        row("3-D", R"(x = f32[1,5,6,7,2] parameter(0)  w = f32[2,2,3,2,3] parameter(1)
  ROOT c = f32[1,4,5,5,3] convolution(x, w), window={size=2x2x3}, dim_labels=b012f_012io->b012f)");
        row("bias and relu after",
            R"(x = f32[2,9,9,8] parameter(0)  w = f32[3,3,8,16] parameter(1)  b = f32[16] parameter(2)
  c = f32[2,9,9,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,9,9,16] broadcast(b), dimensions={3}  s = f32[2,9,9,16] add(c, bb)  z = f32[] constant(0)
  zb = f32[2,9,9,16] broadcast(z), dimensions={}  ROOT r = f32[2,9,9,16] maximum(s, zb))");
        // Not for the GEMM runtime: element-wise kernels (kernel_gen_window.cc).
        row("bf16", R"(x = bf16[1,4,4,2] parameter(0)  w = bf16[2,2,2,3] parameter(1)
  ROOT c = bf16[1,3,3,3] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f)");
        row("batch groups", R"(x = f32[4,5,5,3] parameter(0)  w = f32[2,2,3,6] parameter(1)
  ROOT c = f32[2,4,4,6] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, batch_group_count=2)");
        row("s8 into s32, dilated, reversed, grouped",
            R"(x = s8[2,4,7,3] parameter(0)  w = s8[6,2,2,3] parameter(1)
  ROOT c = s32[2,6,14,1] convolution(x, w), window={size=2x3 pad=1_1x1_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=bf01_oi01->bf01, feature_group_count=2)");
        row("f8 into f32", R"(x = f8e4m3fn[1,5,5,2] parameter(0)  w = f8e4m3fn[3,3,2,2] parameter(1)
  ROOT c = f32[1,3,3,2] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f)");
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
                QVERIFY2(actual.fallbacks.empty(),
                         actual.fallbacks.empty() ? "" : actual.fallbacks.front().c_str());
            } else {
                QCOMPARE(actual.fallbacks.size(), size_t(1));
                QVERIFY2(actual.fallbacks.front().find(fallback.toStdString()) != std::string::npos,
                         actual.fallbacks.front().c_str());
            }
        }
    }

    // Ops of the shared element generator beyond the element-wise ones
    // (kernel_gen_ops.cc, kernel_gen_window.cc), which the GPU backend
    // compiles from the same code: compiled here (no fallback) and equal to
    // the interpreter.
    void sharedOpsMatch_data() {
        QTest::addColumn<QString>("text");
        auto row = [](const char* name, const char* text) {
            QTest::newRow(name) << QString::fromLatin1(text);
        };
        const char* adds =
            R"(add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
iadd { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }
badd { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(a, b) }
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
)";
        auto with = [&](const char* name, const char* entry) {
            QTest::newRow(name) << QString::fromLatin1(adds) + QString::fromLatin1(entry);
        };
        with("reduce-window max pool", R"(ENTRY e {
  p = f32[2,9,10,3] parameter(0)  ninf = f32[] constant(-inf)
  ROOT r = f32[2,5,5,3] reduce-window(p, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
})");
        with("reduce-window dilated sums", R"(ENTRY e {
  p = f32[7,8] parameter(0)  z = f32[] constant(0)
  ROOT r = f32[13,4] reduce-window(p, z), window={size=2x3 stride=1x2 pad=1_0x2_1 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add
})");
        with("reduce-window s32, bf16, in a fusion", R"(fused {
  p = bf16[12] parameter(0)  n = bf16[12] negate(p)  z = bf16[] constant(0.5)
  ROOT r = bf16[10] reduce-window(n, z), window={size=3}, to_apply=badd
}
ENTRY e {
  p = s32[6,7] parameter(0)  q = bf16[12] parameter(1)  z = s32[] constant(3)
  a = s32[3,3] reduce-window(p, z), window={size=2x2 stride=2x2}, to_apply=iadd
  b = bf16[10] fusion(q), kind=kLoop, calls=fused
  ROOT t = (s32[3,3], bf16[10]) tuple(a, b)
})");
        with("select-and-scatter", R"(ENTRY e {
  x = f32[4,6] parameter(0)  s = f32[2,3] parameter(1)  z = f32[] constant(0)
  y = f32[5,5] parameter(2)  t = f32[3,3] parameter(3)
  a = f32[4,6] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
  b = f32[5,5] select-and-scatter(y, t, z), window={size=3x3 stride=2x2 pad=1_1x1_1}, select=ge, scatter=add
  ROOT r = (f32[4,6], f32[5,5]) tuple(a, b)
})");
        with("f32 convolution inside a loop fusion", R"(fused {
  x = f32[2,6,6,4] parameter(0)  w = f32[3,3,2,4] parameter(1)  n = f32[2,6,6,4] negate(x)
  ROOT c = f32[2,4,4,4] convolution(n, w), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
ENTRY e {
  x = f32[2,6,6,4] parameter(0)  w = f32[3,3,2,4] parameter(1)
  ROOT f = f32[2,4,4,4] fusion(x, w), kind=kLoop, calls=fused
})");
        row("map",
            R"(f { a = f32[] parameter(0)  b = f32[] parameter(1)  m = f32[] multiply(a, b)  ROOT s = f32[] subtract(m, a) }
ENTRY e {
  x = f32[10,3] parameter(0)  y = f32[10,3] parameter(1)
  ROOT r = f32[10,3] map(x, y), dimensions={0,1}, to_apply=f
})");
        with("collectives on one device", R"(ENTRY e {
  id = u32[] replica-id()  pid = u32[] partition-id()  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), replica_groups={}, to_apply=add
  ag = f32[8] all-gather(ar), dimensions={0}, replica_groups={{0}}
  rs = f32[8] reduce-scatter(ag), dimensions={0}, replica_groups={{0}}, to_apply=add
  a2a = f32[8] all-to-all(rs), dimensions={0}, replica_groups={{0}}
  cp = f32[8] collective-permute(a2a), source_target_pairs={{0,0}}
  idf = f32[] convert(id)  one = f32[] constant(1)  k = f32[] add(idf, one)
  b = f32[8] broadcast(k), dimensions={}  s = f32[8] multiply(cp, b)
  ROOT t = (f32[8], u32[]) tuple(s, pid)
})");
        {
            // Shared with tst_gpu_emulation.
            QFile golden(QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/golden/gpu/rounding.hlo"));
            QVERIFY(golden.open(QIODevice::ReadOnly));
            const QString text = QString::fromUtf8(golden.readAll());
            QTest::newRow("reduce-precision and stochastic-convert")
                << text.mid(text.indexOf('\n') + 1);  // without its HloModule line
        }
        row("bitcasts that change layouts and types", R"(ENTRY e {
  p = f32[4,6]{1,0} parameter(0)
  c = f32[4,6]{0,1} copy(p)
  b = f32[6,4]{1,0} bitcast(c)
  q = s32[2,3,4]{0,2,1} parameter(1)
  u = f32[3,8]{1,0} bitcast(q)
  n = f32[6,4]{1,0} negate(b)
  ROOT t = (f32[6,4], f32[3,8]) tuple(n, u)
})");
        row("bitcast-convert across widths", R"(ENTRY e {
  p = f32[3,2] parameter(0)
  a = u16[3,2,2] bitcast-convert(p)
  b = s8[3,2,4] bitcast-convert(p)
  c = f32[3,2] bitcast-convert(b)
  d = u32[3,2] bitcast-convert(a)
  f = f16[5] parameter(1)
  g = u8[5,2] bitcast-convert(f)
  ROOT t = (u16[3,2,2], s8[3,2,4], f32[3,2], u32[3,2], u8[5,2]) tuple(a, b, c, d, g)
})");
        row("sub-byte integers", R"(ENTRY e {
  p = s4[16] parameter(0)  q = u4[16] parameter(1)  r = s2[16] parameter(2)
  a = s4[16] add(p, p)  m = s4[16] multiply(a, p)  n = s4[16] negate(p)  d = s4[16] divide(p, a)
  k = s4[] constant(1)  kb = s4[16] broadcast(k), dimensions={}
  sh = s4[16] shift-right-arithmetic(p, kb)  pc = s4[16] popcnt(p)  cl = s4[16] count-leading-zeros(p)
  u = u4[16] add(q, q)  us = u4[16] subtract(q, u)  cu = s32[16] convert(u)
  f = f32[16] convert(p)  g = f32[] constant(2.7)  gb = f32[16] broadcast(g), dimensions={}
  h = f32[16] multiply(f, gb)  back = s4[16] convert(h)  w = s2[16] add(r, r)
  lt = pred[16] compare(p, n), direction=LT
  ROOT t = (s4[16], s4[16], s4[16], s4[16], s4[16], s4[16], u4[16], s32[16], s4[16], s2[16], pred[16]) tuple(m, n, d, sh, pc, cl, us, cu, back, w, lt)
})");
        row("f8 arithmetic", R"(ENTRY e {
  p = f8e4m3fn[32] parameter(0)  q = f8e5m2[32] parameter(1)  r = f4e2m1fn[32] parameter(2)
  a = f8e4m3fn[32] add(p, p)  m = f8e4m3fn[32] multiply(a, p)  x = f8e4m3fn[32] exponential(p)
  b = f8e5m2[32] convert(m)  c = f8e5m2[32] subtract(q, b)  s = f4e2m1fn[32] multiply(r, r)
  w = f32[32] convert(c)  y = f64[32] convert(s)  z = f8e4m3fn[32] convert(y)
  ROOT t = (f8e4m3fn[32], f8e5m2[32], f32[32], f4e2m1fn[32], f8e4m3fn[32]) tuple(x, c, w, s, z)
})");
        // Scatters the runtime runs natively (core/interpreter/native_scatter.cc): duplicate indices
        // accumulate in the updates' order, windows that do not fit are skipped.
        with("scatter add, duplicate indices (an embedding gradient)", R"(ENTRY e {
  table = f32[5,4] parameter(0)  upd = f32[6,4] parameter(1)
  ids = s32[6,1] constant({{1},{3},{1},{0},{3},{1}})
  ROOT sc = f32[5,4] scatter(table, ids, upd), update_window_dims={1}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
        row("scatter bf16 maximum(update, old), index vectors, windows out of bounds", R"(
bmax { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT m = bf16[] maximum(b, a) }
ENTRY e {
  op = bf16[4,6,5] parameter(0)  upd = bf16[2,3,2,5] parameter(1)
  ids = s64[2,3,2] constant({{{1,0},{5,2},{0,3}},{{2,1},{-1,0},{4,3}}})
  ROOT sc = bf16[4,6,5] scatter(op, ids, upd), update_window_dims={2,3}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={1,0}, index_vector_dim=2, to_apply=bmax
})");
        row("scatter overwrite s32, implicit index vector", R"(
assign { a = s32[] parameter(0)  ROOT b = s32[] parameter(1) }
ENTRY e {
  op = s32[10] parameter(0)  upd = s32[4] parameter(1)
  ids = s32[4] constant({7,2,9,2})
  ROOT sc = s32[10] scatter(op, ids, upd), update_window_dims={}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
})");
        // Sorts the runtime runs natively (core/interpreter/native_sort.cc): lines in
        // parallel, every operand permuted by the keys, stable.
        row("sort f32 rows ascending", R"(
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }
ENTRY e {
  x = f32[16,300] parameter(0)
  ROOT s = f32[16,300] sort(x), dimensions={1}, to_apply=lt
})");
        row("sort key-value pairs in total order, descending, along the middle dimension", R"(
gt { a = bf16[] parameter(0)  b = bf16[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
     ROOT c = pred[] compare(a, b), direction=GT, type=TOTALORDER }
ENTRY e {
  x = bf16[3,40,5] parameter(0)
  i = s32[3,40,5] iota(), iota_dimension=1
  ROOT s = (bf16[3,40,5], s32[3,40,5]) sort(x, i), dimensions={1}, to_apply=gt
})");
        row("sort s32 keys by a swapped compare, with duplicates", R"(
rev { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT c = pred[] compare(b, a), direction=LT }
ENTRY e {
  x = s32[64] parameter(0)  two = s32[] constant(7)  t = s32[64] broadcast(two), dimensions={}
  r = s32[64] remainder(x, t)
  ROOT s = s32[64] sort(r), dimensions={0}, to_apply=rev
})");
        // Lexicographic comparators: value then index (Mixtral's router: select(eq, lt, gt)
        // with a TOTALORDER eq and a FLOAT gt), JAX's multi-key or(lt, and(eq, REST)), and a
        // select on ne with swapped compares whose first key is the second operand. Ties come
        // from rounding, NaNs from sqrt of negatives; indices run backwards so that the
        // index compare, not stability, breaks ties.
        row("sort by value then index (select chain)", R"(
cvi { a = bf16[] parameter(0)  b = bf16[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
      eq = pred[] compare(a, b), direction=EQ, type=TOTALORDER  lt = pred[] compare(i, j), direction=LT
      gt = pred[] compare(a, b), direction=GT  ROOT s = pred[] select(eq, lt, gt) }
ENTRY e {
  x = f32[64,12] parameter(0)  four = f32[] constant(4)  fb = f32[64,12] broadcast(four), dimensions={}
  m = f32[64,12] multiply(x, fb)  r = f32[64,12] round-nearest-even(m)  k = bf16[64,12] convert(r)
  i = s32[64,12] iota(), iota_dimension=1  rev = s32[64,12] reverse(i), dimensions={1}
  ROOT s = (bf16[64,12], s32[64,12]) sort(k, rev), dimensions={1}, to_apply=cvi
})");
        row("sort by three keys (or chain), NaNs and ties", R"(
lex { a = s32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = f32[] parameter(3)
      e = f32[] parameter(4)  f = f32[] parameter(5)
      lt0 = pred[] compare(a, b), direction=LT  eq0 = pred[] compare(a, b), direction=EQ
      lt1 = pred[] compare(c, d), direction=LT, type=TOTALORDER  eq1 = pred[] compare(d, c), direction=EQ, type=TOTALORDER
      gt2 = pred[] compare(e, f), direction=GT
      and1 = pred[] and(eq1, gt2)  or1 = pred[] or(and1, lt1)
      and0 = pred[] and(eq0, or1)  ROOT o = pred[] or(lt0, and0) }
ENTRY e {
  x = f32[9,50] parameter(0)  y = f32[9,50] parameter(1)  p = f32[9,50] parameter(2)
  three = f32[] constant(3)  tb = f32[9,50] broadcast(three), dimensions={}
  xm = f32[9,50] multiply(x, tb)  xr = f32[9,50] round-nearest-even(xm)  k = s32[9,50] convert(xr)
  yr = f32[9,50] round-nearest-even(y)  half = f32[] constant(0.5)  hb = f32[9,50] broadcast(half), dimensions={}
  big = pred[9,50] compare(p, hb), direction=GT  nan = f32[9,50] sqrt(xm)  y2 = f32[9,50] select(big, nan, yr)
  pr = f32[9,50] round-nearest-even(p)
  ROOT s = (s32[9,50], f32[9,50], f32[9,50]) sort(k, y2, pr), dimensions={1}, to_apply=lex
})");
        row("sort by a later operand first (select on ne, swapped compares), along dimension 0", R"(
chain { a = f32[] parameter(0)  b = f32[] parameter(1)  i = u32[] parameter(2)  j = u32[] parameter(3)
        ne = pred[] compare(i, j), direction=NE  later = pred[] compare(j, i), direction=LT
        before = pred[] compare(b, a), direction=GT  ROOT s = pred[] select(ne, later, before) }
ENTRY e {
  x = f32[40,3] parameter(0)  y = f32[40,3] parameter(1)
  two = f32[] constant(2)  tb = f32[40,3] broadcast(two), dimensions={}
  ym = f32[40,3] multiply(y, tb)  ya = f32[40,3] add(ym, tb)  yr = f32[40,3] round-nearest-even(ya)
  k = u32[40,3] convert(yr)  xs = f32[40,3] sqrt(x)
  ROOT s = (f32[40,3], u32[40,3]) sort(xs, k), dimensions={0}, to_apply=chain
})");
        // Scatters with batching dimensions: Mixtral's per-token expert weights (scalar updates,
        // two batching dimensions) and a windowed one whose batching dimension is not first.
        row("scatter with batching dimensions (Mixtral's router)", R"(
badd { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(a, b) }
ENTRY e {
  z = bf16[] constant(0)  op = bf16[1,16,8] broadcast(z), dimensions={}
  x = f32[1,16,2] parameter(0)  four = f32[] constant(4)  eb = f32[1,16,2] broadcast(four), dimensions={}
  xm = f32[1,16,2] multiply(x, eb)  xa = f32[1,16,2] add(xm, eb)  xi = s32[1,16,2] convert(xa)
  ids = s32[1,16,2,1] reshape(xi)  u = f32[1,16,2] parameter(1)  upd = bf16[1,16,2] convert(u)
  ROOT sc = bf16[1,16,8] scatter(op, ids, upd), update_window_dims={}, inserted_window_dims={2},
    scatter_dims_to_operand_dims={2}, input_batching_dims={0,1}, scatter_indices_batching_dims={0,1},
    index_vector_dim=3, to_apply=badd
})");
        row("scatter with a batching dimension after the index dimension, windows", R"(
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  op = f32[5,3,4] parameter(0)  upd = f32[6,3,2] parameter(1)
  ids = s32[6,3,2] constant({{{0,0},{4,2},{1,1}},{{0,0},{2,3},{-1,0}},{{3,1},{0,2},{1,2}},
                              {{4,0},{4,3},{0,0}},{{2,2},{2,2},{5,0}},{{1,0},{3,1},{0,1}}})
  ROOT sc = f32[5,3,4] scatter(op, ids, upd), update_window_dims={2}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0,2}, input_batching_dims={1}, scatter_indices_batching_dims={1},
    index_vector_dim=2, to_apply=add
})");
        row("gather with batching dimensions", R"(ENTRY e {
  operand = s32[3,2,1,3] parameter(0)  indices = s32[3,2] parameter(1)
  a = s32[3,2,2] gather(operand, indices), offset_dims={2}, collapsed_slice_dims={2}, start_index_map={0},
    index_vector_dim=2, slice_sizes={2,1,1,1}, operand_batching_dims={1,3}, start_indices_batching_dims={1,0}
  o = f32[2,3,2,4] parameter(2)  i = s32[2,3] parameter(3)
  b = f32[2,3,2,4] gather(o, i), offset_dims={1,2,3}, collapsed_slice_dims={}, start_index_map={1,2,3},
    operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,3,2,4}
  ROOT t = (s32[3,2,2], f32[2,3,2,4]) tuple(a, b)
})");
        row("dynamic slices with index vectors", R"(ENTRY e {
  p = f32[20,20] parameter(0)  i = s32[2] parameter(1)  u = f32[3,4] parameter(2)
  ds = f32[5,3] dynamic-slice(p, i), dynamic_slice_sizes={5,3}
  dus = f32[20,20] dynamic-update-slice(p, u, i)
  j = s32[1] parameter(3)  v = f32[20] parameter(4)
  d1 = f32[4] dynamic-slice(v, j), dynamic_slice_sizes={4}
  ROOT t = (f32[5,3], f32[20,20], f32[4]) tuple(ds, dus, d1)
})");
        row("c64 and c128 values",
            R"(cadd { a = c64[] parameter(0)  b = c64[] parameter(1)  ROOT s = c64[] add(a, b) }
wmul { a = c128[] parameter(0)  b = c128[] parameter(1)  ROOT s = c128[] multiply(a, b) }
ENTRY e {
  x = f32[6,10] parameter(0)  y = f32[6,10] parameter(1)
  z = c64[6,10] complex(x, y)  w = c64[6,10] convert(x)
  q = c64[6,10] divide(z, w)  s = c64[6,10] sqrt(q)  r = c64[6,10] rsqrt(z)
  ex = c64[6,10] exponential(s)  lg = c64[6,10] log(z)  pw = c64[6,10] power(z, ex)
  sg = c64[6,10] sign(pw)  n = c64[6,10] negate(sg)  m = c64[6,10] multiply(n, r)
  a = c64[6,10] add(m, lg)  d = c64[6,10] subtract(a, z)
  ne = pred[6,10] compare(d, z), direction=NE  pick = c64[6,10] select(ne, d, z)
  re = f32[6,10] real(pick)  im = f32[6,10] imag(pick)  ab = f32[6,10] abs(pick)
  zero = c64[] constant((0, 0))  rows = c64[6] reduce(pick, zero), dimensions={1}, to_apply=cadd
  l = c64[1,6,10] reshape(z)  b = c64[6,10,2] broadcast(z), dimensions={0,1}
  k = c64[3,10,2] slice(b), slice={[0:3], [0:10], [0:2]}
  conv = c64[1,4,2] convolution(l, k), window={size=3}, dim_labels=b0f_0io->b0f
  wz = c128[6,10] convert(z)  wl = c128[6,10] log(wz)  wp = c128[6,10] power(wz, wl)
  one = c128[] constant((1, 0))  wr = c128[6] reduce(wp, one), dimensions={1}, to_apply=wmul
  ROOT t = (f32[6,10], f32[6,10], f32[6,10], c64[6], c64[1,4,2], c128[6]) tuple(re, im, ab, rows, conv, wr)
})");
        row("variadic reduce-windows (argmax pooling, order-sensitive reducers)", R"(argmax {
  v0 = f32[] parameter(0)  i0 = s32[] parameter(1)  v1 = f32[] parameter(2)  i1 = s32[] parameter(3)
  gt = pred[] compare(v1, v0), direction=GT
  v = f32[] select(gt, v1, v0)  i = s32[] select(gt, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
weighted {
  a0 = f32[] parameter(0)  b0 = f32[] parameter(1)  a1 = f32[] parameter(2)  b1 = f32[] parameter(3)
  h = f32[] constant(0.5)  ha = f32[] multiply(a0, h)  a = f32[] add(ha, a1)
  b = f32[] subtract(b0, b1)
  ROOT t = (f32[], f32[]) tuple(a, b)
}
ENTRY e {
  x = f32[2,9,10] parameter(0)  idx = s32[2,9,10] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)  none = s32[] constant(-1)
  pool = (f32[2,5,5], s32[2,5,5]) reduce-window(x, idx, ninf, none), window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1}, to_apply=argmax
  best = f32[2,5,5] get-tuple-element(pool), index=0  where = s32[2,5,5] get-tuple-element(pool), index=1
  twice = f32[2,5,5] add(best, best)
  zero = f32[] constant(0)
  mixed = (f32[2,7,10], f32[2,7,10]) reduce-window(x, x, zero, zero), window={size=1x3x2 pad=0_0x0_0x1_0}, to_apply=weighted
  first = f32[2,7,10] get-tuple-element(mixed), index=0  second = f32[2,7,10] get-tuple-element(mixed), index=1
  ROOT t = (f32[2,5,5], s32[2,5,5], f32[2,7,10], f32[2,7,10]) tuple(twice, where, first, second)
})");
        row("dimension sizes", R"(ENTRY e {
  p = s32[4] parameter(0)  size = s32[] parameter(1)
  dyn = s32[<=4] set-dimension-size(p, size), dimensions={0}
  sum = s32[<=4] add(dyn, p)
  n = s32[] get-dimension-size(sum), dimensions={0}
  x = f32[3,8] parameter(2)  m = s32[] get-dimension-size(x), dimensions={1}
  nb = s32[<=4] broadcast(n), dimensions={}  o = s32[<=4] add(sum, nb)
  ROOT t = (s32[<=4], s32[]) tuple(o, m)
})");
    }
    void sharedOpsMatch() {
        QFETCH(QString, text);
        const ExecutionResult result =
            expectMatch(*m_cpu, "HloModule m\n" + text.toStdString() + "\n", 5);
        QVERIFY2(result.fallbacks.empty(),
                 result.fallbacks.empty() ? "" : result.fallbacks.front().c_str());
    }

    // f32 and f64 -> every f8 / f6 / f4 format -> f32, bit for bit as core's
    // encoder and decoder (the interpreter's): sampled float bit patterns,
    // the specials, and f64 values at and beside every tie of each format.
    void smallFloatConversionsBitExact() {
        std::vector<float> floats = {0.0f,
                                     -0.0f,
                                     1.0f,
                                     -1.0f,
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN(),
                                     -std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::min(),
                                     std::numeric_limits<float>::max(),
                                     448.0f,
                                     464.0f,
                                     57344.0f,
                                     61440.0f,
                                     6.0f,
                                     7.5f,
                                     0x1p-9f,
                                     0x1p-10f,
                                     0x1.8p-10f,
                                     0x1p-127f};
        for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 65521)
            floats.push_back(std::bit_cast<float>(uint32_t(bits)));
        const int64_t n = static_cast<int64_t>(floats.size());
        for (PrimitiveType type :
             {PrimitiveType::F8E5M2, PrimitiveType::F8E4M3, PrimitiveType::F8E4M3FN,
              PrimitiveType::F8E4M3B11FNUZ, PrimitiveType::F8E5M2FNUZ, PrimitiveType::F8E4M3FNUZ,
              PrimitiveType::F8E3M4, PrimitiveType::F8E8M0FNU, PrimitiveType::F6E2M3FN,
              PrimitiveType::F6E3M2FN, PrimitiveType::F4E2M1FN}) {
            // Ties of the format (midpoints of neighbouring finite values) and
            // values just beside them, which rounding through f32 would move.
            std::vector<double> doubles;
            std::vector<double> finite;
            for (uint32_t b = 0; b < 256; ++b) {
                const double v = float_util::bitsToFloat(type, b);
                if (std::isfinite(v)) finite.push_back(v);
            }
            std::sort(finite.begin(), finite.end());
            for (size_t i = 0; i + 1 < finite.size(); ++i) {
                const double mid = (finite[i] + finite[i + 1]) / 2;
                for (double d : {mid, std::nextafter(mid, -1e300), std::nextafter(mid, 1e300),
                                 mid * (1 + 0x1p-40), mid * (1 - 0x1p-40)})
                    doubles.push_back(d);
            }
            const std::string name(primitive_util::name(type));
            const int64_t m = static_cast<int64_t>(doubles.size());
            const std::string text =
                "HloModule m\nENTRY e {\n  p = f32[" + std::to_string(n) +
                "] parameter(0)\n  q = f64[" + std::to_string(m) + "] parameter(1)\n  a = " + name +
                "[" + std::to_string(n) + "] convert(p)\n  b = " + name + "[" + std::to_string(m) +
                "] convert(q)\n  c = f32[" + std::to_string(n) + "] convert(a)\n  ROOT t = (" +
                name + "[" + std::to_string(n) + "], " + name + "[" + std::to_string(m) +
                "], f32[" + std::to_string(n) + "]) tuple(a, b, c)\n}\n";
            auto module = parse(text);
            const std::vector<Literal> args = {
                Literal::vector<float>(PrimitiveType::F32, floats),
                Literal::vector<double>(PrimitiveType::F64, doubles)};
            const ExecutionResult actual = runOn(*m_cpu, *module, args);
            QVERIFY2(actual.fallbacks.empty(), name.c_str());
            const ExecutionResult reference = runOn(**findDevice("interpreter"), *module, args);
            for (size_t k = 0; k < 3; ++k) {
                const Literal& x = reference.outputs[k];
                const Literal& y = actual.outputs[k];
                QCOMPARE(x.sizeInBytes(), y.sizeInBytes());
                const auto* xb = static_cast<const uint8_t*>(x.untypedData());
                const auto* yb = static_cast<const uint8_t*>(y.untypedData());
                int64_t differ = 0;
                for (int64_t i = 0; i < x.sizeInBytes(); ++i) differ += xb[i] != yb[i];
                QVERIFY2(differ == 0, (name + ": output " + std::to_string(k) + ": " +
                                       std::to_string(differ) + " bytes differ")
                                          .c_str());
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
  ROOT f = f32[70,5000] fusion(a, w, b), kind=kOutput, calls=fused })",
                                                   13, 3);
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

    // XLA's fused argmax: the reducer's body is a kLoop fusion returning the (value, index)
    // pair, called from the reducer; the kernel inlines it.
    void variadicArgmaxWithFusedReducer() {
        const ExecutionResult result = expectMatch(*m_cpu, R"(HloModule m
pick {
  av = f32[] parameter(0)  bv = f32[] parameter(1)  ai = s32[] parameter(2)  bi = s32[] parameter(3)
  le = pred[] compare(av, bv), direction=LE
  v = f32[] select(le, av, bv)
  eq = pred[] compare(av, bv), direction=EQ
  mi = s32[] minimum(ai, bi)
  si = s32[] select(le, ai, bi)
  i = s32[] select(eq, mi, si)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
argmin {
  av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)  bi = s32[] parameter(3)
  ROOT f = (f32[], s32[]) fusion(av, bv, ai, bi), kind=kLoop, calls=pick
}
ENTRY e {
  p = f32[30,1000] parameter(0)
  io = s32[30,1000] iota(), iota_dimension=1
  m = f32[] constant(inf)
  z = s32[] constant(0)
  ROOT r = (f32[30], s32[30]) reduce(p, io, m, z), dimensions={1}, to_apply=argmin
})");
        QVERIFY2(result.fallbacks.empty(), result.fallbacks.empty() ? "" : result.fallbacks.front().c_str());
    }

    // A multi-output fusion whose outputs differ in shape (a loop output beside a reduction
    // of it) runs as one kernel per iteration space, not in the interpreter.
    void multiOutputFusionOfTwoShapes() {
        const ExecutionResult result = expectMatch(*m_cpu, R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
fused {
  p = f32[64,300] parameter(0)
  e = f32[64,300] exponential(p)
  z = f32[] constant(0)
  r = f32[64] reduce(e, z), dimensions={1}, to_apply=add
  t = f32[300,64] transpose(e), dimensions={1,0}
  ROOT o = (f32[64,300], f32[64], f32[300,64]) tuple(e, r, t)
}
ENTRY e {
  x = f32[64,300] parameter(0)
  ROOT f = (f32[64,300], f32[64], f32[300,64]) fusion(x), kind=kInput, calls=fused
})");
        QVERIFY2(result.fallbacks.empty(), result.fallbacks.empty() ? "" : result.fallbacks.front().c_str());
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

    // A loop's dynamic-update-slice of its own state (a scan's stacked outputs) writes into the
    // state instead of copying it, wherever nothing reads the old value afterwards; every case
    // (tests/loop_update_cases.h) is checked against the interpreter, with the updates expected
    // in place counted.
    void loopStateUpdatedInPlace_data() {
        QTest::addColumn<int>("index");
        const auto cases = testing::loopUpdateCases();
        for (size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i].name) << static_cast<int>(i);
    }
    void loopStateUpdatedInPlace() {
        QFETCH(int, index);
        const testing::LoopUpdateCase c = testing::loopUpdateCases()[static_cast<size_t>(index)];
        for (uint64_t seed : {uint64_t{3}, uint64_t{11}}) {
            auto module = parse(c.text);
            std::vector<Literal> args = makeRandomArguments(*module->entryComputation(), seed);
            if (c.argumentStarts) testing::setStartArguments(args, seed);
            auto interpreter = findDevice("interpreter");
            // Deep copies: an update in place must change neither the arguments nor what the
            // interpreter returned (which may share their storage).
            std::vector<Literal> expected, original;
            for (const Literal& output : runOn(**interpreter, *module, args).outputs)
                expected.push_back(deepCopy(output));
            for (const Literal& arg : args) original.push_back(deepCopy(arg));
            auto executable = CpuExecutable::compile(parse(c.text));
            QVERIFY2(executable.isOk(), executable.status().toString().c_str());
            QCOMPARE((*executable)->inPlaceUpdateCount(), int64_t{c.cpuInPlace});
            QVERIFY((*executable)->fallbacks().empty());
            for (int run = 0; run < 2; ++run) {
                auto result = (*executable)->run(args, ExecutionOptions{}, nullptr);
                QVERIFY2(result.isOk(), result.status().toString().c_str());
                const OutputCheck check = checkOutputs(expected, result->outputs);
                QVERIFY2(check.passed, check.detail.c_str());
                for (size_t i = 0; i < args.size(); ++i) QVERIFY(args[i] == original[i]);
            }
        }
    }

    void fallbackIsVisibleAndCorrect() {
        // A sort whose comparator is more than one compare of its keys is not compiled: the
        // interpreter runs it, the run says so.
        const ExecutionResult result = expectMatch(*m_cpu, R"(HloModule m
less { a = f32[] parameter(0)  b = f32[] parameter(1)  x = f32[] abs(a)  y = f32[] abs(b)
       ROOT lt = pred[] compare(x, y), direction=LT }
ENTRY e {
  p = f32[100] parameter(0)
  e = f32[100] exponential(p)
  s = f32[100] sort(e), dimensions={0}, to_apply=less
  ROOT n = f32[100] negate(s)
})");
        QCOMPARE(result.fallbacks.size(), size_t(1));
        QVERIFY2(
            QString::fromStdString(result.fallbacks.front()).startsWith(QStringLiteral("%s: a sort whose comparator")),
            result.fallbacks.front().c_str());
    }

    void outputsSurviveTheNextRun() {
        // Output literals share the executable's storage copy-on-write: read
        // them through const references, or the read itself detaches a copy.
        auto module = parse(
            "HloModule m\nENTRY e {\n  p = f32[1000] parameter(0)\n  ROOT r = f32[1000] "
            "negate(p)\n}\n");
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

    // A module of 2 replicas x 2 partitions: every device's kernel reads its own replica-id and
    // partition-id (inside a fusion, so the JIT'd kernel has them compiled in), an all-gather
    // over all four devices brings each device's value to device 0, and an all-reduce over the
    // replicas of each partition adds them. Checked element by element and against the
    // interpreter's evaluation of every device.
    void multiDeviceRunsEveryDevice() {
        const std::string text = R"(HloModule m, replica_count=2, num_partitions=2
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
scaled {
  x = f32[8] parameter(0)
  r = u32[] replica-id()
  q = u32[] partition-id()
  two = u32[] constant(2)
  one = u32[] constant(1)
  rq = u32[] multiply(r, two)
  id = u32[] add(rq, q)
  k = u32[] add(id, one)
  f = f32[] convert(k)
  b = f32[8] broadcast(f), dimensions={}
  ROOT y = f32[8] multiply(x, b)
}
ENTRY e {
  p = f32[8] parameter(0)
  y = f32[8] fusion(p), kind=kLoop, calls=scaled
  g = f32[32] all-gather(y), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, dimensions={0}
  s = f32[8] all-reduce(y), replica_groups={{0,1}}, to_apply=add
  ROOT t = (f32[32], f32[8]) tuple(g, s)
})";
        auto module = parse(text);
        std::vector<Literal> args = makeRandomArguments(*module->entryComputation(), 3);
        const ExecutionResult result = runOn(*m_cpu, *module, args);
        QCOMPARE(result.devices, int64_t(4));
        QCOMPARE(result.outputs.size(), size_t(2));
        const auto p = std::as_const(args[0]).data<float>();
        const auto gathered = result.outputs[0].data<float>();
        const auto summed = result.outputs[1].data<float>();
        for (int device = 0; device < 4; ++device)
            for (int i = 0; i < 8; ++i)
                QCOMPARE(gathered[device * 8 + i], p[i] * float(device + 1));
        // Device 0 is replica 0, partition 0: its replicas' group is devices 0 and 2.
        for (int i = 0; i < 8; ++i) QCOMPARE(summed[i], p[i] * 1.0f + p[i] * 3.0f);
        auto interpreter = findDevice("interpreter");
        QVERIFY(interpreter.isOk());
        const ExecutionResult reference = runOn(**interpreter, *module, args);
        QCOMPARE(reference.devices, int64_t(4));
        const OutputCheck check = checkOutputs(reference.outputs, result.outputs);
        QVERIFY2(check.passed, check.detail.c_str());
        // The collectives between devices are the interpreter's; the fusion is a kernel.
        QCOMPARE(result.fallbacks.size(), size_t(2));
        // The second run takes all four executables from the cache.
        const ExecutionResult again = runOn(*m_cpu, *module, args, 4);
        QCOMPARE(again.compileSeconds, 0.0);
        QCOMPARE(again.devices, int64_t(4));
        QVERIFY(checkOutputs(reference.outputs, again.outputs).passed);
        // Each executable has its device compiled in.
        for (int64_t device = 0; device < 4; ++device) {
            bool hit = false;
            auto executable = m_cpu->executableFor(*module, device, &hit);
            QVERIFY(executable.isOk());
            QVERIFY(hit);
            QCOMPARE((*executable)->fallbacks().size(), size_t(2));
        }
        QVERIFY(!m_cpu->executableFor(*module, 4).isOk());
    }

    // Devices whose control flow diverges (replica 1 skips the all-reduce replica 0 waits at)
    // end the run with an error naming the device and the instruction, never a hang; a run
    // cancelled while devices wait at a collective returns kCancelled.
    void multiDeviceErrorsAndCancel() {
        auto diverging = parse(R"(HloModule m, replica_count=2
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
reduce_it { x = f32[4] parameter(0)  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add }
keep_it { x = f32[4] parameter(0)  ROOT r = f32[4] negate(x) }
ENTRY e {
  p = f32[4] parameter(0)
  r = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(r, zero), direction=EQ
  ROOT c = f32[4] conditional(first, p, p), true_computation=reduce_it, false_computation=keep_it
})");
        const std::vector<Literal> args{Literal::vector<float>(PrimitiveType::F32, {1, 2, 3, 4})};
        ExecutionOptions options;
        options.threads = 2;
        auto failed = m_cpu->run(*diverging, args, options);
        QVERIFY(!failed.isOk());
        const QString message = QString::fromStdString(failed.status().message());
        QVERIFY2(message.contains(QStringLiteral("device 0 (replica 0, partition 0)")) &&
                     message.contains(QStringLiteral("%r")) &&
                     message.contains(QStringLiteral("finished without reaching it")),
                 qPrintable(message));

        // Cancelled by device 0's first progress report of the run (after compiling): the
        // other device waits at the all-gather until the exchange sees the cancellation.
        auto gather = parse(R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT g = f32[8] all-gather(n), replica_groups={{0,1}}, dimensions={0}
})");
        std::atomic<bool> cancel{false};
        options.cancel = &cancel;
        options.progress = [&](double, const std::string& what) {
            if (what.empty()) cancel = true;
        };
        auto cancelled = m_cpu->run(*gather, args, options);
        QCOMPARE(cancelled.status().code(), StatusCode::kCancelled);
        // Not cancelled, the same module runs.
        cancel = false;
        options.progress = nullptr;
        const ExecutionResult gathered = runOn(*m_cpu, *gather, args);
        QCOMPARE(gathered.devices, int64_t(2));
        QCOMPARE(gathered.outputs.front().data<float>()[5], -2.0f);
    }

    // runDevices: every device on inputs of its own. The data-parallel MLP step of
    // tests/bench/multi_device (4 replicas, gradients all-reduced) through the fused cpu
    // pipeline: every device's updated weights match the interpreter's evaluation of all four,
    // and they are the same on every device (the all-reduce gave each the same gradient).
    void runDevicesGivesEveryDeviceItsInputs() {
        auto file = loadModuleFromFile(HLOSCOPE_SOURCE_DIR
                                       "/tests/bench/multi_device/data_parallel_mlp.hlo");
        QVERIFY2(file.isOk(), file.status().toString().c_str());
        const DeviceGrid grid{4, 1};
        std::vector<std::vector<Literal>> args =
            makeDeviceArguments(*(*file)->entryComputation(), grid, 5);
        // The weights are replicated, the batch shards differ.
        for (size_t d = 1; d < args.size(); ++d)
            for (size_t p : {size_t(1), size_t(2)}) args[d][p] = args[0][p];
        auto expected = evaluateOnDevices(**file, grid, args);
        QVERIFY2(expected.isOk(), expected.status().toString().c_str());
        auto prepared = prepareForMode(std::move(*file), "cpu", ExecutionMode::kFused);
        QVERIFY2(prepared.isOk(), prepared.status().toString().c_str());
        ExecutionOptions options;
        options.threads = 2;
        auto results = m_cpu->runDevices(**prepared, args, options);
        QVERIFY2(results.isOk(), results.status().toString().c_str());
        QCOMPARE(results->size(), size_t(4));
        for (size_t d = 0; d < 4; ++d) {
            QCOMPARE((*results)[d].devices, int64_t(4));
            const OutputCheck check =
                checkOutputs(splitOutputs(std::move((*expected)[d])), (*results)[d].outputs);
            QVERIFY2(check.passed, check.detail.c_str());
            QVERIFY(checkOutputs((*results)[0].outputs, (*results)[d].outputs).passed);
        }
        // A list of arguments per device, or an error naming the grid.
        args.pop_back();
        auto short_ = m_cpu->runDevices(**prepared, args, options);
        QVERIFY(!short_.isOk());
        QVERIFY2(short_.status().message() ==
                     "module 'data_parallel_mlp' runs on 4 devices (4 replicas x 1 "
                     "partition) but 3 argument lists were given",
                 short_.status().message().c_str());
    }

    void errors() {
        auto module = parse(
            "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] negate(p)\n}\n");
        auto none = m_cpu->run(*module, {}, {});
        QVERIFY(!none.isOk());
        QVERIFY2(QString::fromStdString(none.status().message())
                     .contains(QStringLiteral("takes 1 argument")),
                 none.status().message().c_str());
        auto wrong =
            m_cpu->run(*module, {Literal::vector<float>(PrimitiveType::F32, {1.0f, 2.0f})}, {});
        QVERIFY(!wrong.isOk());
        QVERIFY(QString::fromStdString(wrong.status().message()).contains(QStringLiteral("%p")));
        std::atomic<bool> cancel{true};
        ExecutionOptions options;
        options.cancel = &cancel;
        auto cancelled = m_cpu->run(
            *module, {Literal::vector<float>(PrimitiveType::F32, {1, 2, 3, 4})}, options);
        QCOMPARE(cancelled.status().code(), StatusCode::kCancelled);

        // A fallback whose value is not what the instruction declares (a mixed-precision
        // all-reduce of bf16 declared f32, which the interpreter passes through as bf16) is an
        // error naming it, never bytes of one type copied into buffers of another.
        auto mixed = parse(R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  p = bf16[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), replica_groups={}, to_apply=add
})");
        auto refused = m_cpu->run(*mixed, makeRandomArguments(*mixed->entryComputation(), 1), {});
        QVERIFY(!refused.isOk());
        QVERIFY2(refused.status().message() ==
                     "%ar: the interpreter gives bf16[4] where the instruction declares f32[4]",
                 refused.status().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestCpuBackend)
#include "tst_cpu_backend.moc"
