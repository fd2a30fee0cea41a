// GPU plans run on the host (compiler/backends/gpu/gpu_emulator.h) and checked against the
// interpreter, so that the GPU backend's kernels and steps are verified without a GPU: the
// examples, hand-written while loops, conditionals, sort, top-k, fft, scaled-dot and row kernels,
// and the corpus modules with those, unfused and fused. What the emulator cannot see (NVPTX code
// generation, the driver) is left to the device runs.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTest>
#include <chrono>

#include "compiler/backends/gpu/gpu_emulator.h"
#include "compiler/backends/gpu/gpu_plan.h"
#include "compiler/runtime/execution_device.h"
#include "compiler/runtime/execution_modes.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"
#include "core/io/module_io.h"
#include "core/interpreter/multi_device.h"
#include "tests/loop_update_cases.h"
#include "tests/multi_device_util.h"
#include "tests/sanitizer_run.h"

using namespace hloscope;

namespace {

const QString kExamples = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples");
const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/valid");

// A module of tests/golden/gpu (shared with tst_gpu_backend).
QString golden(const char* name) {
    QFile file(QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/golden/gpu/") + name);
    if (!file.open(QIODevice::ReadOnly)) qFatal("missing tests/golden/gpu/%s", name);
    return QString::fromUtf8(file.readAll());
}

void flatten(const Literal& literal, std::vector<Literal>& out) {
    if (!literal.isTuple()) {
        out.push_back(literal);
        return;
    }
    for (const Literal& element : literal.tupleElements()) flatten(element, out);
}

// The module's GPU plan in `mode` run on the host, against the interpreter; "" when they
// agree, else what differs (or why it did not run).
std::string emulateAgainstInterpreter(const HloModule& module, ExecutionMode mode) {
    auto prepared = prepareCopyForMode(module, "h100", mode);
    if (!prepared.isOk()) return "pipeline: " + prepared.status().toString();
    GpuPlanOptions options;
    options.keepHostIr = true;
    options.mode = mode == ExecutionMode::kFused ? "fused" : "unfused";
    auto plan = buildGpuPlan(*prepared->module, options);
    if (!plan.isOk()) return "plan: " + plan.status().toString();
    if (plan->devices() > 1) {
        // Every device's outputs against the interpreter's multi-device evaluation.
        const DeviceGrid grid{plan->replicas, plan->partitions};
        const auto args = makeDeviceArguments(*module.entryComputation(), grid, 7);
        auto reference = testing::evaluateOnDevicesWithin(module, grid, args, 5);
        if (!reference.isOk()) return "interpreter: " + reference.status().toString();
        auto emulated = emulateGpuPlanOnDevices(*plan, args);
        if (!emulated.isOk()) return "emulation: " + emulated.status().toString();
        for (int64_t d = 0; d < grid.count(); ++d) {
            std::vector<Literal> expected;
            flatten((*reference)[static_cast<size_t>(d)], expected);
            const OutputCheck check = checkOutputs(expected, (*emulated)[static_cast<size_t>(d)]);
            if (!check.passed) return deviceLabel(grid, d) + " differs: " + check.detail;
        }
        return {};
    }
    const std::vector<Literal> args = makeRandomArguments(*module.entryComputation(), 7);
    auto interpreter = findDevice("interpreter");
    if (!interpreter.isOk()) return interpreter.status().toString();
    auto reference = (*interpreter)->run(module, args, {});
    if (!reference.isOk()) return "interpreter: " + reference.status().toString();
    auto emulated = emulateGpuPlan(*plan, args);
    if (!emulated.isOk()) return "emulation: " + emulated.status().toString();
    std::vector<Literal> expected;
    for (const Literal& output : reference->outputs) flatten(output, expected);
    const OutputCheck check = checkOutputs(expected, *emulated);
    return check.passed ? std::string() : "differs: " + check.detail;
}

}  // namespace

class TestGpuEmulation : public QObject {
    Q_OBJECT
private slots:
    void examples_data();
    void examples();
    void handWrittenModules_data();
    void handWrittenModules();
    void corpusModules();
    void brokenPlanIsAnError();
    void loopStateUpdatedInPlace_data();
    void loopStateUpdatedInPlace();
};

void TestGpuEmulation::examples_data() {
    QTest::addColumn<QString>("file");
    // The BERT examples take minutes with a thread per GPU thread; the device runs cover them.
    for (const char* name : {"sin_plus_exp", "polynomial", "mean_relu_squared", "softmax",
                             "layernorm", "mlp", "relu_matmul_bias"})
        QTest::newRow(name) << kExamples + "/" + name + ".hlo";
}

void TestGpuEmulation::examples() {
    QFETCH(QString, file);
    auto module = loadModuleFromFile(file.toStdString());
    QVERIFY2(module.isOk(), module.status().toString().c_str());
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const std::string problem = emulateAgainstInterpreter(**module, mode);
        QVERIFY2(problem.empty(), (std::string(executionModeName(mode)) + ": " + problem).c_str());
    }
}

void TestGpuEmulation::handWrittenModules_data() {
    QTest::addColumn<QString>("text");
    // The gpu pipeline fuses the log into the reduction's fusion (an epilogue): the plan
    // reduces by a reduction kernel into a buffer the epilogue's kernel reads.
    QTest::newRow("reduction with an epilogue") << QStringLiteral(R"(HloModule epilogue
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}
ENTRY %e (p: f32[48,700], q: f32[48]) -> f32[48] {
  %p = f32[48,700] parameter(0)
  %q = f32[48] parameter(1)
  %z = f32[] constant(0)
  %r = f32[48] reduce(%p, %z), dimensions={1}, to_apply=%add
  %l = f32[48] log(%r)
  %n = f32[48] negate(%l)
  ROOT %s = f32[48] add(%n, %q)
}
)");
    // Siblings of one input with different output shapes (a tiled transpose beside an
    // elementwise op of its input) share a multi-output fusion: a kernel per output shape.
    QTest::newRow("multi-output fusion of two shapes") << QStringLiteral(R"(HloModule siblings
ENTRY %e (p: f32[40,72]) -> (f32[72,40], f32[40,72]) {
  %p = f32[40,72] parameter(0)
  %t = f32[72,40] transpose(%p), dimensions={1,0}
  %x = f32[40,72] exponential(%p)
  ROOT %r = (f32[72,40], f32[40,72]) tuple(%t, %x)
}
)");
    QTest::newRow("while rotating its state") << QStringLiteral(R"(HloModule loops
%cond (s: (s32[], s32[], f32[64], f32[64])) -> pred[] {
  %s = (s32[], s32[], f32[64], f32[64]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], s32[], f32[64], f32[64])) -> (s32[], s32[], f32[64], f32[64]) {
  %s = (s32[], s32[], f32[64], f32[64]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  %a = f32[64] get-tuple-element(%s), index=2
  %b = f32[64] get-tuple-element(%s), index=3
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %half = f32[] constant(0.5)
  %h = f32[64] broadcast(%half), dimensions={}
  %c = f32[64] multiply(%a, %h)
  %d = f32[64] add(%c, %b)
  ROOT %t = (s32[], s32[], f32[64], f32[64]) tuple(%j, %n, %b, %d)
}
ENTRY %e (x: f32[64], y: f32[64]) -> (s32[], f32[64], f32[64]) {
  %x = f32[64] parameter(0)
  %y = f32[64] parameter(1)
  %zero = s32[] constant(0)
  %seven = s32[] constant(7)
  %init = (s32[], s32[], f32[64], f32[64]) tuple(%zero, %seven, %x, %y)
  %w = (s32[], s32[], f32[64], f32[64]) while(%init), condition=%cond, body=%body
  %i = s32[] get-tuple-element(%w), index=0
  %a = f32[64] get-tuple-element(%w), index=2
  %b = f32[64] get-tuple-element(%w), index=3
  ROOT %r = (s32[], f32[64], f32[64]) tuple(%i, %a, %b)
}
)");
    QTest::newRow("conditionals") << QStringLiteral(R"(HloModule conditionals
%t (p: f32[64]) -> f32[64] {
  %p = f32[64] parameter(0)
  ROOT %n = f32[64] negate(%p)
}
%f (p: f32[64]) -> f32[64] {
  %p = f32[64] parameter(0)
  ROOT %m = f32[64] multiply(%p, %p)
}
%b0 (p: f32[64]) -> f32[64] {
  %p = f32[64] parameter(0)
  ROOT %x = f32[64] exponential(%p)
}
%b1 (p: f32[64]) -> f32[64] {
  ROOT %p = f32[64] parameter(0)
}
ENTRY %e (x: f32[64], y: f32[64]) -> (f32[64], f32[64], f32[64]) {
  %x = f32[64] parameter(0)
  %y = f32[64] parameter(1)
  %zero = f32[] constant(0)
  %x0 = f32[1] slice(%x), slice={[0:1]}
  %x0s = f32[] reshape(%x0)
  %b = pred[] compare(%x0s, %zero), direction=GT
  %c = f32[64] conditional(%b, %x, %y), true_computation=%t, false_computation=%f
  %one = s32[] constant(1)
  %five = s32[] constant(5)
  %s1 = f32[64] conditional(%one, %c, %y), branch_computations={%b0, %b1}
  %s5 = f32[64] conditional(%five, %c, %y), branch_computations={%b0, %b1}
  ROOT %r = (f32[64], f32[64], f32[64]) tuple(%c, %s1, %s5)
}
)");
    QTest::newRow("sort with values, not the last dimension") << golden("sort_values.hlo");
    QTest::newRow("sort of a long row with ties") << QStringLiteral(R"(HloModule sort
%lt (a: s32[], b: s32[]) -> pred[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %l = pred[] compare(%a, %b), direction=LT
}
ENTRY %e (x: f32[3,2500]) -> s32[3,2500] {
  %x = f32[3,2500] parameter(0)
  %k = f32[] constant(4)
  %kb = f32[3,2500] broadcast(%k), dimensions={}
  %m = f32[3,2500] multiply(%x, %kb)
  %q = s32[3,2500] convert(%m)
  ROOT %s = s32[3,2500] sort(%q), dimensions={1}, to_apply=%lt
}
)");
    QTest::newRow("top-k") << golden("topk.hlo");
    QTest::newRow("argmin and argmax siblings in one kernel (nested variadic outputs)")
        << golden("argmin_argmax_siblings.hlo");
    QTest::newRow("fft of every kind, c64 and c128") << golden("fft.hlo");
    QTest::newRow("scaled-dot with block and scalar scales") << golden("scaled_dot.hlo");
    QTest::newRow("row kernels: 8 warps, one warp, bf16") << golden("row_kernels.hlo");
    QTest::newRow("rng-bit-generator: three_fry, philox, 8 to 64 bits")
        << golden("rng_bit_generator.hlo");
    QTest::newRow("cuBLAS, cuDNN and block-scaled dot calls of XLA:GPU, expanded")
        << golden("library_calls.hlo");
    QTest::newRow("expm1, log1p, tan, sinh, cosh in f32 and bf16") << golden("device_math.hlo");
    QTest::newRow("scatter combiners on f16, bf16 and s8 (colliding indices)")
        << golden("narrow_scatter.hlo");
    QTest::newRow("scatters of two operands: argmax, and the last writer with a sum")
        << golden("variadic_scatter.hlo");
    QTest::newRow("bitcast-convert of pred, pred dot, TOTALORDER compare")
        << golden("bits_and_order.hlo");
    QTest::newRow("ragged-dot: rows, batched with a prefix, contracting, batch")
        << golden("ragged_dot.hlo");
    QTest::newRow("c64 and c128: arithmetic, exp, log, sqrt, power, reductions, dot, fft")
        << golden("complex.hlo");
    QTest::newRow("variadic reduce-windows: argmax pooling, a weighted sum with a bf16 maximum")
        << golden("variadic_reduce_window.hlo");
    QTest::newRow("collectives between 2 replicas x 2 partitions, in a loop, with replica-id")
        << golden("multi_device.hlo");
    QTest::newRow("ragged-all-to-all among 4 replicas and in pairs, 2 updates per member")
        << golden("ragged_all_to_all.hlo");
    QTest::newRow("send / recv round a ring in a loop and between replicas")
        << golden("send_recv.hlo");
    QTest::newRow("async sugar: reduce-scatter, dot, slices, negate, fusion, late-bound call")
        << golden("async_sugar.hlo");
    QTest::newRow("triangular-solve: right side, upper, transposed; batched left, lower")
        << QStringLiteral(R"(
HloModule triangular_solve

ENTRY main {
  p = f32[6,6] parameter(0)
  b = f32[3,6] parameter(1)
  r = s32[6,6] iota(), iota_dimension=0
  c = s32[6,6] iota(), iota_dimension=1
  diag = pred[6,6] compare(r, c), direction=EQ
  k = f32[] constant(6)
  kb = f32[6,6] broadcast(k), dimensions={}
  pk = f32[6,6] add(p, kb)
  a = f32[6,6] select(diag, pk, p)
  x = f32[3,6] triangular-solve(a, b), left_side=false, lower=false, unit_diagonal=false, transpose_a=TRANSPOSE
  ab = f32[2,6,6] broadcast(a), dimensions={1,2}
  bb = f32[2,6,3] parameter(2)
  y = f32[2,6,3] triangular-solve(ab, bb), left_side=true, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE
  ROOT t = (f32[3,6], f32[2,6,3]) tuple(x, y)
}
)");
    QTest::newRow("XLA:GPU's sort fusion: keys with their fused iota, ties by index")
        << QStringLiteral(R"(
HloModule sort_fusion

sorting_computation {
  lhs_key = f32[] parameter(0)
  rhs_key = f32[] parameter(1)
  lhs_index = s32[] parameter(2)
  rhs_index = s32[] parameter(3)
  lt_key = pred[] compare(lhs_key, rhs_key), direction=LT
  gt_key = pred[] compare(rhs_key, lhs_key), direction=LT
  eq_key = pred[] compare(lt_key, gt_key), direction=EQ
  lt_index = pred[] compare(lhs_index, rhs_index), direction=LT
  ROOT res = pred[] select(eq_key, lt_index, lt_key)
}

sort_fusion {
  p0 = f32[3,700] parameter(0)
  four = f32[] constant(4)
  fours = f32[3,700] broadcast(four), dimensions={}
  scaled = f32[3,700] multiply(p0, fours)
  keys = f32[3,700] round-nearest-even(scaled)
  iota = s32[3,700] iota(), iota_dimension=1
  ROOT sort = (f32[3,700], s32[3,700]) sort(keys, iota), dimensions={1}, is_stable=true, to_apply=sorting_computation
}

ENTRY main {
  p = f32[3,700] parameter(0)
  ROOT fusion = (f32[3,700], s32[3,700]) fusion(p), kind=kInput, calls=sort_fusion
}
)");
    QTest::newRow("collective-permute of two arrays at once") << QStringLiteral(R"(
HloModule combined_permute, replica_count=3

ENTRY main {
  a = f32[4] parameter(0)
  b = s32[2,3] parameter(1)
  ROOT permute = (f32[4], s32[2,3]) collective-permute(a, b), source_target_pairs={{0,1},{1,2}}
}
)");
    QTest::newRow("reduce-precision and stochastic-convert over f32, bf16, f64")
        << golden("rounding.hlo");
    QTest::newRow("collectives inside a fusion (XLA:GPU's Triton collective fusions)")
        << QStringLiteral(R"(
HloModule collective_fusion, replica_count=2

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

wrapped {
  p = f32[64] parameter(0)
  ar = f32[64] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  n = f32[64] negate(ar)
  ROOT ag = f32[128] all-gather(n), replica_groups={{0,1}}, dimensions={0}
}

ENTRY main {
  p = f32[64] parameter(0)
  ROOT f = f32[128] fusion(p), kind=kLoop, calls=wrapped
}
)");
    QTest::newRow("ragged-all-to-all on one device, 3 updates") << QStringLiteral(R"(
HloModule ragged_one_device

ENTRY main {
  input = f32[5,3] parameter(0)
  output = f32[4,3] parameter(1)
  input_offsets = s32[3] constant({4, 0, 1})
  send_sizes = s32[3] constant({1, 2, 0})
  output_offsets = s32[3] constant({0, 2, 3})
  ROOT r = f32[4,3] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, send_sizes), replica_groups={}
}
)");
}

void TestGpuEmulation::handWrittenModules() {
    QFETCH(QString, text);
    auto module = parseHloModule(text.toStdString());
    QVERIFY2(module.isOk(), module.status().toString().c_str());
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const std::string problem = emulateAgainstInterpreter(**module, mode);
        QVERIFY2(problem.empty(), (std::string(executionModeName(mode)) + ": " + problem).c_str());
    }
}

// The corpus modules with while loops, conditionals, sort, top-k, fft, scaled-dot,
// rng-bit-generator, scan or collectives that get a GPU plan (as tests/bench/gpu/device_check.sh
// picks them), and XLA:GPU's modules with scan, ragged-dot, cuBLAS / cuDNN calls or collectives,
// within a size the emulator runs in seconds; modules on several devices against the
// interpreter's multi-device evaluation (skipped when it takes over 5 s).
void TestGpuEmulation::corpusModules() {
    if (!QDir(kCorpus).exists()) QSKIP("../shared/corpus is absent: corpus modules not emulated");
    // HLOSCOPE_GPU_EMULATION_ALL=1: every module of those folders (a longer run).
    const bool all = qEnvironmentVariableIntValue("HLOSCOPE_GPU_EMULATION_ALL") == 1;
    const QRegularExpression pick(
        all ? QStringLiteral(".")
            : QStringLiteral(
                  R"([ =](while|conditional|sort|topk|fft|scaled-dot|rng-bit-generator|scan)\(|"TopK"|)"
                  R"([ =](all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute|collective-broadcast)(-start)?\()"));
    // From XLA:GPU's own pass-test inputs: the scans, ragged-dots, cuBLAS / cuDNN / CUB calls and
    // collectives (ragged-all-to-all's with random row ranges fail in the interpreter: skipped).
    const QRegularExpression pickGpu(
        all ? QStringLiteral(".")
            : QStringLiteral(
                  R"([ =](ragged-dot|scan)\(|"__cublas\$|"__cudnn\$conv|"__op\$block_scaled|"xla\.gpu\.ext\.cub_sort|)"
                  R"([ =](all-reduce|all-gather|reduce-scatter|all-to-all|ragged-all-to-all|collective-permute|collective-broadcast)(-start)?\()"));
    int emulated = 0, matched = 0, multiDevice = 0;
    QStringList failures;
    for (const char* folder : {"xla_tests", "evaluator", "fusion", "gpu"}) {
        const QRegularExpression& picked = std::string_view(folder) == "gpu" ? pickGpu : pick;
        QDirIterator it(kCorpus + "/" + folder, {"*.hlo"}, QDir::Files);
        QStringList files;
        while (it.hasNext()) files << it.next();
        files.sort();
        // A sanitizer run, 5 to 20 times slower, takes every 4th module (every module
        // exercises the same emulator paths; the release build checks them all).
        if (testing::sanitizerRun() && !all) files = testing::corpusSample(files, 4);
        for (const QString& file : files) {
            QFile f(file);
            if (!f.open(QIODevice::ReadOnly) || !QString::fromUtf8(f.readAll()).contains(picked))
                continue;
            auto module = loadModuleFromFile(file.toStdString());
            if (!module.isOk()) continue;
            int64_t elements = 0, longestSort = 0;
            for (const auto& computation : (*module)->computations())
                for (const auto& instruction : computation->instructions()) {
                    if (instruction->shape().isArray())
                        elements += instruction->shape().elementCount();
                    const Shape& keys = instruction->operandCount() > 0
                                            ? instruction->operand(0)->shape()
                                            : instruction->shape();
                    if ((instruction->opcode() == HloOpcode::kSort ||
                         instruction->customCallTarget().starts_with("xla.gpu.ext.cub_sort")) &&
                        keys.isArray() && keys.rank() > 0)
                        longestSort = std::max(longestSort, keys.dimensions().back());
                }
            // Minutes with a thread per GPU thread; a sort's row is one thread's loop.
            if (elements > (1 << 20) || longestSort > 2048) continue;
            bool planned = true;
            for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
                const std::string problem = emulateAgainstInterpreter(**module, mode);
                if (problem.rfind("plan: ", 0) == 0 || problem.rfind("interpreter: ", 0) == 0 ||
                    problem.rfind("pipeline: ", 0) == 0) {
                    // No GPU plan (tst_gpu_corpus names why), no reference, or a module that
                    // does not verify.
                    planned = false;
                    break;
                }
                if (!problem.empty())
                    failures << QFileInfo(file).fileName() + " (" +
                                    (mode == ExecutionMode::kFused ? "fused" : "unfused") +
                                    "): " + QString::fromStdString(problem).left(300);
            }
            if (!planned) continue;
            ++emulated;
            if (auto grid = moduleDeviceGrid(**module); grid.isOk() && grid->count() > 1)
                ++multiDevice;
            matched +=
                failures.isEmpty() || !failures.last().startsWith(QFileInfo(file).fileName());
        }
    }
    qInfo(
        "%d corpus modules%s emulated (%d on several devices); %d matched the interpreter in "
        "both modes",
        emulated,
        all ? ""
            : " with while, conditional, sort, top-k, fft, scaled-dot, rng-bit-generator, "
              "scan, ragged-dot, library calls or collectives",
        multiDevice, matched);
    for (const QString& failure : failures) qWarning("%s", qPrintable(failure));
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    QVERIFY(emulated >= (testing::sanitizerRun() ? 50 : 400));
}

// A plan built without its IR, and a loop that does not end, are errors, not hangs.
void TestGpuEmulation::brokenPlanIsAnError() {
    auto module = parseHloModule(R"(HloModule m
%c (p: s32[]) -> pred[] {
  %p = s32[] parameter(0)
  %k = s32[] constant(0)
  ROOT %l = pred[] compare(%p, %k), direction=GE
}
%b (p: s32[]) -> s32[] {
  %p = s32[] parameter(0)
  %o = s32[] constant(1)
  ROOT %n = s32[] add(%p, %o)
}
ENTRY %e (x: s32[]) -> s32[] {
  %x = s32[] parameter(0)
  ROOT %w = s32[] while(%x), condition=%c, body=%b
}
)");
    QVERIFY(module.isOk());
    GpuPlanOptions options;
    auto plan = buildGpuPlan(**module, options);
    QVERIFY2(plan.isOk(), plan.status().toString().c_str());
    Literal zero(Shape(PrimitiveType::S32, {}));
    auto withoutIr = emulateGpuPlan(*plan, {zero});
    QVERIFY(!withoutIr.isOk());
    QVERIFY(withoutIr.status().message().find("keepHostIr") != std::string::npos);
    options.keepHostIr = true;
    options.maxWhileIterations = 50;
    plan = buildGpuPlan(**module, options);
    QVERIFY(plan.isOk());
    auto runaway = emulateGpuPlan(*plan, {zero});
    QVERIFY(!runaway.isOk());
    QVERIFY2(runaway.status().message().find("w.loop: the loop did not end after 50 iterations") !=
                 std::string::npos,
             runaway.status().message().c_str());
}

// A while body's dynamic-update-slice of its own state element is a kernel writing the update
// into the state buffer (no new buffer, no copy back), where nothing reads the old value
// afterwards (tests/loop_update_cases.h, the CPU backend's cases): each plan, built from the
// module as written, emulated against the interpreter and its in-place steps counted
// (tst_gpu_backend assembles their PTX).
void TestGpuEmulation::loopStateUpdatedInPlace_data() {
    QTest::addColumn<int>("index");
    const auto cases = testing::loopUpdateCases();
    for (size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name) << static_cast<int>(i);
}

void TestGpuEmulation::loopStateUpdatedInPlace() {
    QFETCH(int, index);
    const testing::LoopUpdateCase c = testing::loopUpdateCases()[static_cast<size_t>(index)];
    auto module = parseHloModule(c.text);
    QVERIFY2(module.isOk(), module.status().toString().c_str());
    GpuPlanOptions options;
    options.keepHostIr = true;
    auto plan = buildGpuPlan(**module, options);
    QVERIFY2(plan.isOk(), plan.status().toString().c_str());
    int inPlace = 0;
    bool copiedBack = false;  // the stacked state element (1) copied into the state again
    for (const GpuPlanStep& step : plan->steps) {
        inPlace +=
            step.name.size() > 9 && step.name.compare(step.name.size() - 9, 9, ".in_place") == 0;
        copiedBack = copiedBack || step.name == "w.next.1";
    }
    if (std::string_view(c.name) == "scan") QVERIFY(!copiedBack);
    QCOMPARE(inPlace, c.gpuInPlace);
    for (uint64_t seed : {uint64_t{3}, uint64_t{11}}) {
        std::vector<Literal> args = makeRandomArguments(*(*module)->entryComputation(), seed);
        if (c.argumentStarts) testing::setStartArguments(args, seed);
        auto interpreter = findDevice("interpreter");
        QVERIFY(interpreter.isOk());
        auto reference = (*interpreter)->run(**module, args, {});
        QVERIFY2(reference.isOk(), reference.status().toString().c_str());
        std::vector<Literal> expected;
        for (const Literal& output : reference->outputs) flatten(output, expected);
        auto emulated = emulateGpuPlan(*plan, args);
        QVERIFY2(emulated.isOk(), emulated.status().toString().c_str());
        const OutputCheck check = checkOutputs(expected, *emulated);
        QVERIFY2(check.passed, check.detail.c_str());
    }
}

QTEST_GUILESS_MAIN(TestGpuEmulation)
#include "tst_gpu_emulation.moc"
