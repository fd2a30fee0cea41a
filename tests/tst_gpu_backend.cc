// The GPU backend without a GPU (compiler/backends/gpu): PTX for every
// built-in example, fused and unfused (assembled by ptxas when the CUDA
// toolkit is installed), kernel shapes (vectorised loops, warp and block
// reductions, GEMM steps with fallback kernels, permuted dots, scatter with
// atomics and batching dimensions; the shared generator's window ops,
// sub-byte and small float types, collectives and bitcasts), routed
// collectives, async wrappers and calls, tuple parameters, errors naming
// the instruction, plan directories that round-trip,
// results read back and checked against the interpreter (complete and
// sampled), and the device's "no GPU found" without a driver. The runs on a
// real GPU are in README (they need the device machine).
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "compiler/backends/gpu/gpu_device.h"
#include "compiler/backends/gpu/gpu_emulator.h"
#include "compiler/backends/gpu/gpu_import.h"
#include "compiler/backends/gpu/gpu_plan.h"
#include "compiler/backends/gpu/gpu_synthetic.h"
#include "compiler/runtime/execution_modes.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/io/module_io.h"
#include "core/interpreter/multi_device.h"
#include "tests/loop_update_cases.h"

using namespace hloscope;

namespace {

const QString kExamples = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples");

// A module of tests/golden/gpu (shared with tst_gpu_emulation).
std::string readGolden(const char* name) {
    std::ifstream in(std::string(HLOSCOPE_SOURCE_DIR "/tests/golden/gpu/") + name);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().empty()) qFatal("missing tests/golden/gpu/%s", name);
    return text.str();
}

std::unique_ptr<HloModule> parse(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("parse: %s", module.status().toString().c_str());
    return std::move(*module);
}

std::shared_ptr<const HloModule> prepared(const HloModule& module, ExecutionMode mode) {
    auto result = prepareCopyForMode(module, "h100", mode);
    if (!result.isOk()) qFatal("pipeline: %s", result.status().toString().c_str());
    return result->module;
}

GpuPlan planOf(const HloModule& module, GpuPlanOptions options = {}) {
    auto plan = buildGpuPlan(module, options);
    if (!plan.isOk()) qFatal("plan: %s", plan.status().toString().c_str());
    return std::move(*plan);
}

GpuPlan fusedPlan(const std::string& text, GpuPlanOptions options = {}) {
    auto module = parse(text);
    return planOf(*prepared(*module, ExecutionMode::kFused), options);
}

// Every kernel a step launches is an .entry of the PTX; every buffer a step
// names exists and lies inside the arena.
void checkPlanConsistent(const GpuPlan& plan) {
    auto known = [&](int id) { return id >= 0 && id < static_cast<int>(plan.buffers.size()); };
    for (const GpuPlanBuffer& b : plan.buffers)
        QVERIFY(b.offset % kGpuBufferAlignment == 0 && b.offset + b.bytes <= plan.arenaBytes);
    auto checkKernel = [&](const GpuPlanStep& step) {
        QVERIFY2(plan.ptx.find(".entry " + step.entry + "(") != std::string::npos,
                 step.entry.c_str());
        for (int a : step.args) QVERIFY(known(a));
        for (int64_t g : step.launch.grid) QVERIFY(g >= 1);
        const int64_t threads = step.launch.block[0] * step.launch.block[1] * step.launch.block[2];
        QVERIFY(threads >= 32 && threads <= 1024);
    };
    for (const GpuPlanStep& step : plan.steps) {
        if (step.kind == GpuStepKind::kKernel) checkKernel(step);
        if (step.kind == GpuStepKind::kGemm) {
            QVERIFY(known(step.lhs) && known(step.rhs) && known(step.out));
            QCOMPARE(step.fallback.size(), size_t{1});
            checkKernel(step.fallback.front());
        }
    }
    for (const GpuPlanArray& output : plan.outputs) QVERIFY(known(output.buffer));
}

// ptxas from PATH or the CUDA toolkit's default place; empty when absent.
QString ptxasPath() {
    QString ptxas = QStandardPaths::findExecutable("ptxas");
    if (ptxas.isEmpty()) ptxas = QStandardPaths::findExecutable("ptxas", {"/usr/local/cuda/bin"});
    return ptxas;
}

// The plan's PTX assembled by ptxas for its SM (nothing when ptxas is absent).
void assemble(const GpuPlan& plan, const QString& ptxas) {
    if (ptxas.isEmpty()) return;
    QTemporaryDir dir;
    const QString path = dir.filePath("kernels.ptx");
    std::ofstream(path.toStdString()) << plan.ptx;
    QProcess process;
    process.start(ptxas, {"-arch=" + QString::fromStdString(plan.sm), path, "-o",
                          dir.filePath("kernels.cubin")});
    QVERIFY(process.waitForFinished(120000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
}

int countSteps(const GpuPlan& plan, GpuStepKind kind) {
    return static_cast<int>(std::count_if(plan.steps.begin(), plan.steps.end(),
                                          [&](const GpuPlanStep& s) { return s.kind == kind; }));
}

// hloscope-gpu-runner validates the plan in `dir` in full (steps, targets, PTX entries) and,
// with no driver to load, stops at "no GPU found" (exit 2) rather than at an error (exit 1).
void runnerAccepts(const QString& dir) {
    QProcess runner;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("HLOSCOPE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
    runner.setProcessEnvironment(env);
    runner.start(HLOSCOPE_GPU_RUNNER_PATH, {dir});
    QVERIFY(runner.waitForFinished(60000));
    const QByteArray err = runner.readAllStandardError();
    QVERIFY2(runner.exitCode() == 2 && err.contains("no GPU found"), err.constData());
}

// `plan` written into `dir` with synthetic arguments for `module` (base `seed`), read back.
StatusOr<GpuPlanFiles> writtenAndReadBack(const GpuPlan& plan, const HloModule& module,
                                          const QString& dir, uint64_t seed) {
    std::vector<int64_t> seeds;
    const std::vector<Literal> args = syntheticArguments(*module.entryComputation(), seed, seeds);
    HLO_RETURN_IF_ERROR(writeGpuPlan(plan, args, printModule(module), printModule(module),
                                     dir.toStdString(), seeds));
    return readGpuPlan(dir.toStdString());
}

const GpuPlanStep& stepNamed(const GpuPlan& plan, const std::string& name) {
    for (const GpuPlanStep& step : plan.steps)
        if (step.name == name) return step;
    qFatal("no step %s", name.c_str());
}

const char* kAdd = R"(%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}
)";

}  // namespace

class TestGpuBackend : public QObject {
    Q_OBJECT

private slots:
    void ptxForEveryExample_data();
    void ptxForEveryExample();
    void smVersions();
    void vectorisedLoops();
    void reductionShapes();
    void gemmSteps();
    void permutedDotBecomesGemm();
    void scatterUsesAtomics();
    void sharedOpsToPtx_data();
    void sharedOpsToPtx();
    void routedInstructionsCostNoKernel();
    void tupleParametersRoundTrip();
    void errorsNameTheInstruction();
    void whileLoopsBecomeBranchAndJump();
    void conditionalsBecomeSwitchAndJumps();
    void sortIsCopiesThenOneKernel();
    void topKIsOneKernel();
    void fftIsOneKernelPerAxis();
    void scaledDotIsOneKernel();
    void raggedDotIsOneKernel();
    void narrowScatterIsACompareAndSwapLoop();
    void variadicScatterIsOneThreadInOrder();
    void rowFusionsAreRowKernels();
    void rngBitGeneratorIsOneKernel();
    void planRoundTrip();
    void multiDevicePlanRoundTripAndImport();
    void raggedAndPeerPlansRoundTrip();
    void inPlaceUpdatesAssemble();
    void tuplesWithTokensAndParameterOrder();
    void resultsCheckedAgainstInterpreter();
    void noGpuFound();
};

void TestGpuBackend::ptxForEveryExample_data() {
    QTest::addColumn<QString>("file");
    for (const QString& name : QDir(kExamples).entryList({"*.hlo"}, QDir::Files, QDir::Name))
        QTest::newRow(name.toUtf8().constData()) << kExamples + "/" + name;
}

// Fused and unfused: every kernel in PTX for sm_90, and assembled by ptxas
// when it is installed.
void TestGpuBackend::ptxForEveryExample() {
    QFETCH(QString, file);
    auto module = loadModuleFromFile(file.toStdString());
    QVERIFY2(module.isOk(), module.status().toString().c_str());
    const QString ptxas = ptxasPath();
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        auto plan = buildGpuPlan(*prepared(**module, mode), {});
        QVERIFY2(plan.isOk(), plan.status().toString().c_str());
        QVERIFY(plan->ptx.find(".target sm_90") != std::string::npos);
        QVERIFY(plan->kernels >= 1);
        checkPlanConsistent(*plan);
        assemble(*plan, ptxas);
    }
    if (ptxas.isEmpty()) qInfo("ptxas not found (no CUDA toolkit): PTX not assembled here");
}

void TestGpuBackend::smVersions() {
    const std::string text =
        "HloModule m\nENTRY %e (x: f32[64]) -> f32[64] {\n  %x = f32[64] parameter(0)\n"
        "  ROOT %y = f32[64] exponential(%x)\n}\n";
    for (const char* sm : {"sm_80", "sm_86", "sm_89", "sm_90"}) {
        GpuPlanOptions options;
        options.sm = sm;
        const GpuPlan plan = fusedPlan(text, options);
        QVERIFY2(plan.ptx.find(std::string(".target ") + sm) != std::string::npos, sm);
    }
    GpuPlanOptions old;
    old.sm = "sm_70";
    auto module = parse(text);
    auto plan = buildGpuPlan(*module, old);
    QVERIFY(!plan.isOk());
    QVERIFY(plan.status().message().find("sm_70") != std::string::npos);
    QCOMPARE(smForComputeCapability("9.0"), std::string("sm_90"));
    QCOMPARE(smForComputeCapability("8.9"), std::string("sm_89"));
    QCOMPARE(smForComputeCapability("12.0"), std::string("sm_90"));
    QCOMPARE(smForComputeCapability("7.5"), std::string());
}

// Large element-wise chains: 4 elements per thread, 16-byte loads/stores.
void TestGpuBackend::vectorisedLoops() {
    const std::string text =
        "HloModule m\nENTRY %e (x: f32[1048576]) -> f32[1048576] {\n  %x = f32[1048576] "
        "parameter(0)\n"
        "  %m = f32[1048576] multiply(%x, %x)\n  ROOT %y = f32[1048576] add(%m, %x)\n}\n";
    const GpuPlan plan = fusedPlan(text);
    QCOMPARE(plan.steps.size(), size_t{1});
    QCOMPARE(plan.steps[0].launch.block[0], int64_t{256});
    QCOMPARE(plan.steps[0].launch.grid[0], int64_t{1048576 / 4 / 256});
    QVERIFY(plan.ptx.find("ld.global.nc.v4.f32") != std::string::npos);
    QVERIFY(plan.ptx.find("st.global.v4.f32") != std::string::npos);
}

void TestGpuBackend::reductionShapes() {
    // Many rows: a warp per row, 8 rows per block, shuffles and no barrier.
    const GpuPlan rows = fusedPlan(
        std::string("HloModule m\n") + kAdd +
        "ENTRY %e (x: f32[4096,1024]) -> f32[4096] {\n  %x = f32[4096,1024] parameter(0)\n"
        "  %z = f32[] constant(0)\n  ROOT %r = f32[4096] reduce(%x, %z), dimensions={1}, "
        "to_apply=%add\n}\n");
    QCOMPARE(rows.steps.size(), size_t{1});
    QCOMPARE(rows.steps[0].launch.grid[0], int64_t{4096 / 8});
    QVERIFY(rows.ptx.find("shfl.sync.down") != std::string::npos);
    QVERIFY(rows.ptx.find("bar.sync") == std::string::npos);
    // A full reduction: blocks split the elements, then a combine kernel.
    const GpuPlan all =
        fusedPlan(std::string("HloModule m\n") + kAdd +
                  "ENTRY %e (x: f32[1024,1024]) -> f32[] {\n  %x = f32[1024,1024] parameter(0)\n"
                  "  %z = f32[] constant(0)\n  ROOT %r = f32[] reduce(%x, %z), dimensions={0,1}, "
                  "to_apply=%add\n}\n");
    QCOMPARE(all.steps.size(), size_t{2});
    QVERIFY(all.steps[0].launch.grid[1] > 1);
    // (the reduce is a fusion holding its init constant, as XLA's priority fusion leaves it)
    QVERIFY2(all.steps[1].name.ends_with(".combine"), all.steps[1].name.c_str());
    QVERIFY(all.ptx.find("bar.sync") != std::string::npos);
    checkPlanConsistent(all);
    // A column reduction with many outputs: a coalesced loop per output.
    const GpuPlan columns =
        fusedPlan(std::string("HloModule m\n") + kAdd +
                  "ENTRY %e (x: f32[256,8192]) -> f32[8192] {\n  %x = f32[256,8192] parameter(0)\n"
                  "  %z = f32[] constant(0)\n  ROOT %r = f32[8192] reduce(%x, %z), dimensions={0}, "
                  "to_apply=%add\n}\n");
    QCOMPARE(columns.steps.size(), size_t{1});
    QVERIFY(columns.ptx.find("shfl") == std::string::npos);
}

// relu(x @ w + b): the dot a GEMM step (cuBLAS in the runner, our tiled
// kernel as its fallback), bias and relu a loop kernel; with elemental dots
// the dot is a kernel of its own, element by element.
void TestGpuBackend::gemmSteps() {
    auto module = loadModuleFromFile((kExamples + "/relu_matmul_bias.hlo").toStdString());
    QVERIFY(module.isOk());
    auto fused = prepared(**module, ExecutionMode::kFused);
    const GpuPlan plan = planOf(*fused);
    QCOMPARE(countSteps(plan, GpuStepKind::kGemm), 1);
    const GpuPlanStep& gemm =
        *std::find_if(plan.steps.begin(), plan.steps.end(),
                      [](const GpuPlanStep& s) { return s.kind == GpuStepKind::kGemm; });
    QVERIFY(gemm.m > 0 && gemm.n > 0 && gemm.k > 0);
    // The fallback: our tiled GEMM (16x16 threads, 64x64 tiles, shared memory).
    const GpuPlanStep& tiled = gemm.fallback.front();
    QCOMPARE(tiled.launch.block[0], int64_t{16});
    QCOMPARE(tiled.launch.block[1], int64_t{16});
    QCOMPARE(tiled.launch.grid[0], (gemm.n + 63) / 64);
    QCOMPARE(tiled.launch.grid[1], (gemm.m + 63) / 64);
    QVERIFY(plan.ptx.find("ld.shared.v4.f32") != std::string::npos);
    QVERIFY(plan.ptx.find("fma.rn.f32") != std::string::npos);
    checkPlanConsistent(plan);
    GpuPlanOptions noCublas;
    noCublas.gemmSteps = false;
    const GpuPlan own = planOf(*fused, noCublas);
    QCOMPARE(countSteps(own, GpuStepKind::kGemm), 0);
    QCOMPARE(own.steps.size(), plan.steps.size());  // the dot is our own kernel
    checkPlanConsistent(own);
}

// Attention's scores: batch dimensions in the middle; each operand
// transposed by a kernel, then one batched GEMM.
void TestGpuBackend::permutedDotBecomesGemm() {
    const GpuPlan plan = planOf(*parse(
        "HloModule m\nENTRY %e (q: f32[2,16,4,8], k: f32[2,16,4,8]) -> f32[2,4,16,16] {\n"
        "  %q = f32[2,16,4,8] parameter(0)\n  %k = f32[2,16,4,8] parameter(1)\n"
        "  ROOT %d = f32[2,4,16,16] dot(%q, %k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, "
        "rhs_batch_dims={0,2}, rhs_contracting_dims={3}\n}\n"));
    QCOMPARE(countSteps(plan, GpuStepKind::kGemm), 1);
    QCOMPARE(countSteps(plan, GpuStepKind::kKernel), 2);
    const GpuPlanStep& gemm = plan.steps.back();
    QCOMPARE(gemm.batch, int64_t{8});
    QCOMPARE(gemm.m, int64_t{16});
    QCOMPARE(gemm.n, int64_t{16});
    QCOMPARE(gemm.k, int64_t{8});
    checkPlanConsistent(plan);
}

void TestGpuBackend::scatterUsesAtomics() {
    const std::string module =
        std::string("HloModule m\n") + kAdd +
        "%max (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] "
        "parameter(1)\n  ROOT %c = f32[] maximum(%a, %b)\n}\n"
        "ENTRY %e (t: f32[8,4], i: s32[6,1], u: f32[6,4]) -> (f32[8,4], f32[8,4]) {\n"
        "  %t = f32[8,4] parameter(0)\n  %i = s32[6,1] parameter(1)\n  %u = f32[6,4] parameter(2)\n"
        "  %s = f32[8,4] scatter(%t, %i, %u), update_window_dims={1}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add\n"
        "  %x = f32[8,4] scatter(%t, %i, %u), update_window_dims={1}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%max\n"
        "  ROOT %r = (f32[8,4], f32[8,4]) tuple(%s, %x)\n}\n";
    const GpuPlan plan = planOf(*parse(module));
    QCOMPARE(stepNamed(plan, "s.init").kind, GpuStepKind::kKernel);
    QCOMPARE(stepNamed(plan, "s").kind, GpuStepKind::kKernel);
    QVERIFY(plan.ptx.find("atom.global.add.f32") != std::string::npos);
    QVERIFY(plan.ptx.find("atom.global.cas.b32") != std::string::npos);
    checkPlanConsistent(plan);
    assemble(plan, ptxasPath());
    // Batching dimensions: input batching dimension i follows the update's
    // position along scatter_indices_batching_dims[i].
    const GpuPlan batched = planOf(*parse(R"(HloModule m
add { x = s32[] parameter(0)  y = s32[] parameter(1)  ROOT s = s32[] add(x, y) }
ENTRY e {
  indices = s32[2,3,5] parameter(0)  update = s32[2,3,2,5] parameter(1)  input = s32[5,3,2,2] parameter(2)
  ROOT s = s32[5,3,2,2] scatter(input, indices, update), update_window_dims={2}, inserted_window_dims={1},
    scatter_dims_to_operand_dims={1}, index_vector_dim=3, input_batching_dims={0,3},
    scatter_indices_batching_dims={2,0}, to_apply=add
})"));
    QVERIFY(batched.ptx.find("atom.global.add.u32") != std::string::npos);
    checkPlanConsistent(batched);
    assemble(batched, ptxasPath());
}

// The shared element generator's window ops, sub-byte integers, small
// floats, collectives and layout bitcasts in PTX (unfused: one kernel per
// op), with the instructions that show each is really compiled; assembled
// by ptxas when installed. Their numerics are tst_cpu_backend's
// sharedOpsMatch (the same generator on the CPU).
void TestGpuBackend::sharedOpsToPtx_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected");  // in the PTX
    const QString reducers = QStringLiteral(
        "max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }\n"
        "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
        "ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), "
        "direction=GE }\n");
    QTest::newRow("reduce-window") << reducers + R"(ENTRY e {
  p = f32[2,9,10,3] parameter(0)  ninf = f32[] constant(-inf)
  ROOT r = f32[2,5,5,3] reduce-window(p, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
})" << QStringList{"max.NaN.f32", "ld.global.nc.f32"};
    QTest::newRow("convolution") << reducers + R"(ENTRY e {
  x = f32[2,4,7,3] parameter(0)  w = f32[6,2,2,3] parameter(1)
  ROOT c = f32[2,6,14,1] convolution(x, w), window={size=2x3 pad=1_1x1_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=bf01_oi01->bf01, feature_group_count=2
})" << QStringList{"mul.rn.f32", "add.rn.f32"};
    QTest::newRow("select-and-scatter") << reducers + R"(ENTRY e {
  x = f32[5,5] parameter(0)  s = f32[3,3] parameter(1)  z = f32[] constant(0)
  ROOT r = f32[5,5] select-and-scatter(x, s, z), window={size=3x3 stride=2x2 pad=1_1x1_1}, select=ge, scatter=add
})" << QStringList{"setp.ge.f32", "add.rn.f32"};
    QTest::newRow("s4 and u4") << QString(R"(ENTRY e {
  p = s4[64] parameter(0)  q = u4[64] parameter(1)  a = s4[64] multiply(p, p)  u = u4[64] add(q, q)
  c = s32[64] convert(a)  d = s32[64] convert(u)  ROOT s = s32[64] add(c, d)
})") << QStringList{"ld.global.nc.u8", "st.global.u32"};
    QTest::newRow("f8 and f4") << QString(R"(ENTRY e {
  p = f8e4m3fn[64] parameter(0)  q = f4e2m1fn[64] parameter(1)  f = f32[64] convert(p)
  g = f32[64] convert(q)  h = f32[64] multiply(f, g)  ROOT r = f8e5m2[64] convert(h)
})") << QStringList{"hloscope_$_decode_$_f8e4m3fn", "hloscope_$_decode_$_f4e2m1fn", "st.global.u8"};
    QTest::newRow("replica-id, map, layout bitcast")
        << QString(R"(f { a = f32[] parameter(0)  ROOT n = f32[] negate(a) }
ENTRY e {
  id = u32[] replica-id()  p = f32[4,6]{1,0} parameter(0)  c = f32[4,6]{0,1} copy(p)
  b = f32[6,4]{1,0} bitcast(c)  m = f32[6,4] map(b), dimensions={0,1}, to_apply=f
  ROOT t = (f32[6,4], u32[]) tuple(m, id)
})") << QStringList{"neg.f32", "st.global.u32"};
}

void TestGpuBackend::sharedOpsToPtx() {
    QFETCH(QString, text);
    QFETCH(QStringList, expected);
    auto module = parse("HloModule m\n" + text.toStdString() + "\n");
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        auto plan = buildGpuPlan(*prepared(*module, mode), {});
        QVERIFY2(plan.isOk(), plan.status().toString().c_str());
        checkPlanConsistent(*plan);
        for (const QString& instruction : expected)
            QVERIFY2(plan->ptx.find(instruction.toStdString()) != std::string::npos,
                     qPrintable(instruction));
        assemble(*plan, ptxasPath());
    }
}

// Collectives on one device, async and copy start/done pairs and calls
// route buffers: the collectives cost no step, the async computation and
// the callee are planned in place (their negate, broadcast and multiply are
// kernels),
// a collective-permute that receives nothing is a memset of zeros.
void TestGpuBackend::routedInstructionsCostNoKernel() {
    const GpuPlan plan = planOf(*parse(R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
negation { p = f32[8] parameter(0)  ROOT n = f32[8] negate(p) }
twice { p = f32[8] parameter(0)  k = f32[] constant(2)  b = f32[8] broadcast(k), dimensions={}  ROOT m = f32[8] multiply(p, b) }
ENTRY e {
  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), replica_groups={}, to_apply=add
  ag = f32[8] all-gather(ar), dimensions={0}, replica_groups={{0}}
  start = ((f32[8]), f32[8], s32[]) async-start(ag), calls=negation
  done = f32[8] async-done(start), calls=negation
  c = f32[8] call(done), to_apply=twice
  cp = f32[8] collective-permute(c), source_target_pairs={{0,0}}
  none = f32[8] collective-permute(c), source_target_pairs={}
  ROOT t = (f32[8], f32[8]) tuple(cp, none)
})"));
    QCOMPARE(plan.kernels, int64_t{3});  // negate; broadcast and multiply (not fused here)
    QCOMPARE(countSteps(plan, GpuStepKind::kKernel), 3);
    QCOMPARE(stepNamed(plan, "n").args.back(), plan.inputs[0].array.buffer);  // negate reads p
    QCOMPARE(stepNamed(plan, "m").args.front(), plan.outputs[0].buffer);      // cp is c
    QVERIFY(plan.ptx.find("neg.f32") != std::string::npos);
    QVERIFY(plan.ptx.find("mul.rn.f32") != std::string::npos);
    // Zeros: the async-start's s32[] context and the permute that receives nothing.
    QCOMPARE(countSteps(plan, GpuStepKind::kMemset), 2);
    QCOMPARE(plan.steps.back().kind, GpuStepKind::kMemset);
    QCOMPARE(plan.steps.back().dst, plan.outputs[1].buffer);
    checkPlanConsistent(plan);
    // Two replicas: the all-reduce is a kernel per device reading both devices' operands.
    auto twoReplicas = buildGpuPlan(*parse(R"(HloModule m, replica_count=2
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  p = f32[8] parameter(0)
  ROOT ar = f32[8] all-reduce(p), to_apply=add
})"),
                                    {});
    QVERIFY2(twoReplicas.isOk(), twoReplicas.status().toString().c_str());
    QCOMPARE(twoReplicas->devices(), int64_t{2});
    QCOMPARE(twoReplicas->steps.size(), size_t{2});
    for (int64_t d = 0; d < 2; ++d) {
        const GpuPlanStep& step = twoReplicas->steps[static_cast<size_t>(d)];
        QCOMPARE(step.kind, GpuStepKind::kKernel);
        QCOMPARE(step.device, d);
        QCOMPARE(step.argDevices, (std::vector<int64_t>{d, 0, 1}));
    }
    QCOMPARE(twoReplicas->inputs.size(), size_t{2});
    QCOMPARE(twoReplicas->outputs.size(), size_t{2});
    QCOMPARE(twoReplicas->outputs[1].device, int64_t{1});
}

// A tuple-shaped entry parameter: one input per array leaf (nested, around
// a token), written as inputs/<n>.<leaf>.bin and read back into the tuple.
void TestGpuBackend::tupleParametersRoundTrip() {
    auto module = parse(R"(HloModule m
ENTRY e {
  x = f32[5] parameter(0)
  t = (s32[3], (f32[5], token[]), u8[2]) parameter(1)
  i = (f32[5], token[]) get-tuple-element(t), index=1
  y = f32[5] get-tuple-element(i), index=0
  ROOT s = f32[5] add(x, y)
})");
    const GpuPlan plan = planOf(*module);
    QCOMPARE(plan.inputs.size(), size_t{4});
    QCOMPARE(plan.inputs[1].leaf, int64_t{0});
    QCOMPARE(plan.inputs[2].leaf, int64_t{1});
    QCOMPARE(plan.inputs[3].leaf, int64_t{2});
    QCOMPARE(plan.inputs[2].array.dims, (std::vector<int64_t>{5}));
    QCOMPARE(stepNamed(plan, "s").args,
             (std::vector<int>{plan.outputs[0].buffer, plan.inputs[0].array.buffer,
                               plan.inputs[2].array.buffer}));
    std::vector<int64_t> seeds;
    const std::vector<Literal> args = syntheticArguments(*module->entryComputation(), 5, seeds);
    QTemporaryDir dir;
    Status written = writeGpuPlan(plan, args, printModule(*module), printModule(*module),
                                  dir.path().toStdString(), seeds);
    QVERIFY2(written.isOk(), written.toString().c_str());
    QVERIFY(QFile::exists(dir.filePath("inputs/1.1.bin")));
    auto read = readGpuPlan(dir.path().toStdString());
    QVERIFY2(read.isOk(), read.status().toString().c_str());
    QCOMPARE(read->inputs.size(), size_t{2});
    QVERIFY(read->inputs[1] == args[1]);
    QVERIFY(read->inputs[0] == args[0]);
}

void TestGpuBackend::errorsNameTheInstruction() {
    struct Case {
        const char* text;
        const char* expected;
    };
    const Case cases[] = {
        {"HloModule m\nENTRY %e (a: f32[], b: f32[]) -> f32[8] {\n  %a = f32[] parameter(0)\n"
         "  %b = f32[] parameter(1)\n"
         "  ROOT %r = f32[8] rng(%a, %b), distribution=rng_uniform\n}\n",
         "%r: rng is not compiled by the GPU backend"},
        {"HloModule m\nENTRY %e (x: f64[16]) -> f64[16] {\n  %x = f64[16] parameter(0)\n"
         "  ROOT %t = f64[16] tan(%x)\n}\n",
         "library function 'tan'"},
        {"HloModule m\nENTRY %e (x: f64[16], y: f64[16]) -> f64[16] {\n  %x = f64[16] "
         "parameter(0)\n"
         "  %y = f64[16] parameter(1)\n  ROOT %p = f64[16] power(%x, %y)\n}\n",
         "%p: power of f64"},
        {"HloModule m\nENTRY %e (x: f32[16]) -> f32[16] {\n  %x = f32[16] parameter(0)\n"
         "  ROOT %c = f32[16] custom-call(%x), custom_call_target=\"foo\"\n}\n",
         "%c: custom-call \"foo\" is not compiled by the GPU backend"},
        {"HloModule m\nENTRY %e (x: f32[4,4]) -> f32[4,4] {\n  %x = f32[4,4] parameter(0)\n"
         "  ROOT %g = f32[4,4] custom-call(%x, %x), custom_call_target=\"__cublas$gemm\"\n}\n",
         "%g: custom-call \"__cublas$gemm\" is not compiled by the GPU backend "
         "(library-call-expander left it: %g: __cublas$gemm has no backend_config"},
    };
    for (const Case& c : cases) {
        auto plan = buildGpuPlan(*parse(c.text), {});
        QVERIFY(!plan.isOk());
        QVERIFY2(plan.status().message().find(c.expected) != std::string::npos,
                 plan.status().message().c_str());
    }
}

// A while loop whose body rotates its state (the new a is the old b, the new b (a + b)^2 - (a +
// b)): init copies into state buffers, the condition, a branch past the loop, the body, the old b
// through a temporary, copies into the state and a jump back; every buffer the loop touches has
// bytes of its own.
void TestGpuBackend::whileLoopsBecomeBranchAndJump() {
    auto module = parse(R"(HloModule loops
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
  %c = f32[64] add(%a, %b)
  %d = f32[64] multiply(%c, %c)
  %e = f32[64] subtract(%d, %c)
  ROOT %t = (s32[], s32[], f32[64], f32[64]) tuple(%j, %n, %b, %e)
}
ENTRY %e (n: s32[], x: f32[64], y: f32[64]) -> f32[64] {
  %n = s32[] parameter(0)
  %x = f32[64] parameter(1)
  %y = f32[64] parameter(2)
  %zero = s32[] constant(0)
  %init = (s32[], s32[], f32[64], f32[64]) tuple(%zero, %n, %x, %y)
  %w = (s32[], s32[], f32[64], f32[64]) while(%init), condition=%cond, body=%body
  ROOT %r = f32[64] get-tuple-element(%w), index=3
}
)");
    const QString ptxas = ptxasPath();
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const GpuPlan plan = planOf(*prepared(*module, mode));
        checkPlanConsistent(plan);
        QCOMPARE(countSteps(plan, GpuStepKind::kBranch), 1);
        QCOMPARE(countSteps(plan, GpuStepKind::kJump), 1);
        size_t branch = 0, jump = 0;
        for (size_t i = 0; i < plan.steps.size(); ++i) {
            if (plan.steps[i].kind == GpuStepKind::kBranch) branch = i;
            if (plan.steps[i].kind == GpuStepKind::kJump) jump = i;
        }
        // Before the loop only the init copies (a constant and three parameters: four).
        const int loopStart = plan.steps[jump].target;
        QCOMPARE(loopStart, 4);
        for (int i = 0; i < loopStart; ++i)
            QVERIFY(plan.steps[size_t(i)].kind == GpuStepKind::kCopy);
        QVERIFY(loopStart < int(branch) && branch < jump);
        QCOMPARE(plan.steps[branch].target, int(jump + 1));
        QCOMPARE(plan.steps[jump].limit, int64_t{100'000'000});
        QCOMPARE(plan.buffers[size_t(plan.steps[branch].predicate)].bytes, int64_t{1});
        // The rotation: the old b goes through a temporary before the state is overwritten.
        const GpuPlanStep& carry = stepNamed(plan, "w.carry.2");
        const GpuPlanStep& next = stepNamed(plan, "w.next.2");
        QCOMPARE(next.src, carry.dst);
        QVERIFY(&carry < &next);
        QCOMPARE(plan.buffers[size_t(plan.outputs[0].buffer)].name, std::string("%w.state.3"));
        // Buffers used inside the loop never share bytes.
        std::set<int> inLoop;
        for (size_t i = size_t(loopStart); i <= jump; ++i) {
            const GpuPlanStep& step = plan.steps[i];
            inLoop.insert(step.args.begin(), step.args.end());
            for (int b : {step.src, step.dst, step.predicate})
                if (b >= 0) inLoop.insert(b);
        }
        for (int a : inLoop)
            for (int b : inLoop) {
                if (a >= b) continue;
                const GpuPlanBuffer& x = plan.buffers[size_t(a)];
                const GpuPlanBuffer& y = plan.buffers[size_t(b)];
                QVERIFY2(x.offset + x.bytes <= y.offset || y.offset + y.bytes <= x.offset,
                         (x.name + " overlaps " + y.name).c_str());
            }
        assemble(plan, ptxas);
        // Round trip, and a branch that goes backwards is refused by name.
        QTemporaryDir dir;
        auto read = writtenAndReadBack(plan, *module, dir.path(), 3);
        QVERIFY2(read.isOk(), read.status().toString().c_str());
        QCOMPARE(read->plan.steps.size(), plan.steps.size());
        QCOMPARE(read->plan.steps[branch].predicate, plan.steps[branch].predicate);
        QCOMPARE(read->plan.steps[branch].target, plan.steps[branch].target);
        QCOMPARE(read->plan.steps[jump].target, plan.steps[jump].target);
        QCOMPARE(read->plan.steps[jump].limit, plan.steps[jump].limit);
        runnerAccepts(dir.path());
        QFile file(dir.filePath("plan.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll().replace(
            "\"if_zero\": " + QByteArray::number(plan.steps[branch].target), "\"if_zero\": 0");
        file.close();
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(text);
        file.close();
        auto broken = readGpuPlan(dir.path().toStdString());
        QVERIFY(!broken.isOk());
        QVERIFY2(broken.status().message().find("steps[" + std::to_string(branch) +
                                                "]: a branch") != std::string::npos,
                 broken.status().message().c_str());
    }
}

// A pred conditional and an s32 one of three branches (one returning its parameter): a switch
// step whose targets are the branches' first steps, each branch ending in copies into the
// conditional's buffers and, but for the last, a jump past the others.
void TestGpuBackend::conditionalsBecomeSwitchAndJumps() {
    auto module = parse(R"(HloModule conditionals
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
  %p = f32[64] parameter(0)
  ROOT %a = f32[64] add(%p, %p)
}
%b2 (p: f32[64]) -> f32[64] {
  ROOT %p = f32[64] parameter(0)
}
ENTRY %e (b: pred[], i: s32[], x: f32[64], y: f32[64]) -> (f32[64], f32[64]) {
  %b = pred[] parameter(0)
  %i = s32[] parameter(1)
  %x = f32[64] parameter(2)
  %y = f32[64] parameter(3)
  %c = f32[64] conditional(%b, %x, %y), true_computation=%t, false_computation=%f
  %s = f32[64] conditional(%i, %c, %y, %x), branch_computations={%b0, %b1, %b2}
  ROOT %r = (f32[64], f32[64]) tuple(%c, %s)
}
)");
    const QString ptxas = ptxasPath();
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const GpuPlan plan = planOf(*prepared(*module, mode));
        checkPlanConsistent(plan);
        QCOMPARE(countSteps(plan, GpuStepKind::kSwitch), 2);
        QCOMPARE(countSteps(plan, GpuStepKind::kJump), 3);
        std::vector<size_t> switches;
        for (size_t i = 0; i < plan.steps.size(); ++i)
            if (plan.steps[i].kind == GpuStepKind::kSwitch) switches.push_back(i);
        const GpuPlanStep& first = plan.steps[switches[0]];
        const GpuPlanStep& second = plan.steps[switches[1]];
        QCOMPARE(first.indexType, std::string("pred"));
        QCOMPARE(second.indexType, std::string("s32"));
        QCOMPARE(first.targets.size(), size_t{2});
        QCOMPARE(second.targets.size(), size_t{3});
        QCOMPARE(first.targets[0], int(switches[0] + 1));
        for (const GpuPlanStep* step : {&first, &second}) {
            const int end = step == &first ? int(switches[1]) : int(plan.steps.size());
            for (size_t b = 0; b < step->targets.size(); ++b) {
                QVERIFY(step->targets[b] > int(&*step - plan.steps.data()));
                if (b == 0) continue;
                // The step before branch b is the previous branch's jump past the rest.
                const GpuPlanStep& jump = plan.steps[size_t(step->targets[b] - 1)];
                QVERIFY(jump.kind == GpuStepKind::kJump);
                QCOMPARE(jump.target, end);
                QVERIFY(step->targets[b - 1] < step->targets[b]);
            }
        }
        // Branch 2 returns its parameter: just a copy of %x into the result.
        const GpuPlanStep& passed = stepNamed(plan, "s.branch2.0");
        QCOMPARE(passed.kind, GpuStepKind::kCopy);
        QCOMPARE(plan.buffers[size_t(passed.src)].name, std::string("%x"));
        QCOMPARE(plan.steps[size_t(second.targets[2])].name, std::string("s.branch2.0"));
        assemble(plan, ptxas);
        QTemporaryDir dir;
        auto read = writtenAndReadBack(plan, *module, dir.path(), 5);
        QVERIFY2(read.isOk(), read.status().toString().c_str());
        QCOMPARE(read->plan.steps[switches[1]].targets, second.targets);
        QCOMPARE(read->plan.steps[switches[1]].predicate, second.predicate);
        QCOMPARE(read->plan.steps[switches[0]].indexType, std::string("pred"));
        runnerAccepts(dir.path());
    }
}

// A two-operand sort along a dimension that is not the last: copies of both operands into the
// outputs, then one kernel sorting them in place, a block per row (5 rows of 37), with a
// barrier between its phases.
void TestGpuBackend::sortIsCopiesThenOneKernel() {
    auto module = parse(readGolden("sort_values.hlo"));
    const QString ptxas = ptxasPath();
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const GpuPlan plan = planOf(*prepared(*module, mode));
        checkPlanConsistent(plan);
        const GpuPlanStep& keys = stepNamed(plan, "s.init.0");
        const GpuPlanStep& values = stepNamed(plan, "s.init.1");
        const GpuPlanStep& sort = plan.steps.back();
        QCOMPARE(keys.kind, GpuStepKind::kCopy);
        QCOMPARE(values.kind, GpuStepKind::kCopy);
        QCOMPARE(keys.bytes, int64_t{37 * 5 * 4});
        QCOMPARE(sort.kind, GpuStepKind::kKernel);
        QCOMPARE(sort.name, std::string("s"));
        QCOMPARE(sort.args, (std::vector<int>{keys.dst, values.dst}));
        QCOMPARE(sort.launch.grid[0], int64_t{5});    // one block per row
        QCOMPARE(sort.launch.block[0], int64_t{32});  // 18 pairs: one warp
        QCOMPARE(plan.outputs[0].buffer, keys.dst);
        QCOMPARE(plan.outputs[1].buffer, values.dst);
        const size_t entry = plan.ptx.find(".entry " + sort.entry + "(");
        QVERIFY(entry != std::string::npos);
        QVERIFY(plan.ptx.find("bar.sync", entry) != std::string::npos);
        assemble(plan, ptxas);
    }
}

// topk (bf16, smallest first) and the TopK custom call: one kernel, a thread per input element,
// writing values and indices; a TopK custom call with a comparator is an error naming it.
void TestGpuBackend::topKIsOneKernel() {
    auto module = parse(readGolden("topk.hlo"));
    const QString ptxas = ptxasPath();
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const GpuPlan plan = planOf(*prepared(*module, mode));
        checkPlanConsistent(plan);
        QCOMPARE(plan.steps.size(), size_t{2});
        const GpuPlanStep& small = stepNamed(plan, "small");
        QCOMPARE(small.args.size(), size_t{3});  // values, indices, operand
        QCOMPARE(small.args[0], plan.outputs[0].buffer);
        QCOMPARE(small.args[1], plan.outputs[1].buffer);
        QCOMPARE(plan.buffers[size_t(small.args[2])].name, std::string("%x"));
        QCOMPARE(small.launch.block[0], int64_t{256});  // a thread per element: 1,800
        QCOMPARE(small.launch.grid[0], int64_t{8});
        const GpuPlanStep& large = stepNamed(plan, "large");
        QCOMPARE(large.args[0], plan.outputs[2].buffer);
        assemble(plan, ptxas);
    }
    auto withComparator = parse(R"(HloModule topk
%gt (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GT
}
ENTRY %e (y: f32[4,9]) -> (f32[4,3], s32[4,3]) {
  %y = f32[4,9] parameter(0)
  ROOT %large = (f32[4,3], s32[4,3]) custom-call(%y), custom_call_target="TopK", to_apply=%gt
}
)");
    auto plan = buildGpuPlan(*withComparator, {});
    QVERIFY(!plan.isOk());
    QVERIFY2(plan.status().message().find("%large: TopK custom call with a comparator") !=
                 std::string::npos,
             plan.status().message().c_str());
}

// fft: one kernel per transformed axis, temporaries between them, a twiddle table per axis
// length as a constant (c128 for a c128 transform), the last kernel writing the result.
void TestGpuBackend::fftIsOneKernelPerAxis() {
    auto module = parse(readGolden("fft.hlo"));
    const QString ptxas = ptxasPath();
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const GpuPlan plan = planOf(*prepared(*module, mode));
        checkPlanConsistent(plan);
        auto constantNamed = [&](const std::string& name) -> const GpuPlanConstant& {
            for (const GpuPlanConstant& constant : plan.constants)
                if (constant.name == name) return constant;
            qFatal("no constant %s", name.c_str());
        };
        const GpuPlanStep& first = stepNamed(plan, "f.axis.1");
        const GpuPlanStep& second = stepNamed(plan, "f");
        QCOMPARE(first.args.size(), size_t{3});  // dst, src, twiddles
        QCOMPARE(plan.buffers[size_t(first.args[1])].name, std::string("%x"));
        QCOMPARE(second.args[1], first.args[0]);  // the temporary between the axes
        QCOMPARE(plan.buffers[size_t(first.args[0])].bytes, int64_t{3 * 5 * 12 * 8});
        QCOMPARE(second.args[0], plan.outputs[0].buffer);
        QCOMPARE(first.launch.block[0] * first.launch.grid[0], int64_t{256});  // 180 elements
        const GpuPlanConstant& five = constantNamed("f.twiddles.5");
        const GpuPlanConstant& twelve = constantNamed("f.twiddles.12");
        QCOMPARE(first.args[2], five.buffer);
        QCOMPARE(second.args[2], twelve.buffer);
        QCOMPARE(twelve.value.shape().elementType(), PrimitiveType::C64);
        QCOMPARE(twelve.value.elementCount(), int64_t{12});
        const std::complex<double> w1 = twelve.value.getAsComplex(1);  // exp(-2 pi i / 12)
        QVERIFY(std::abs(w1 - std::complex<double>(std::sqrt(3.0) / 2, -0.5)) < 1e-7);
        // The inverse transforms' tables turn the other way; the c128 one is double.
        const GpuPlanConstant& six = constantNamed("id.twiddles.6");
        QCOMPARE(six.value.shape().elementType(), PrimitiveType::C128);
        QVERIFY(std::abs(six.value.getAsComplex(1) -
                         std::complex<double>(0.5, std::sqrt(3.0) / 2)) < 1e-15);
        QCOMPARE(stepNamed(plan, "id").args[0], plan.outputs[4].buffer);
        // RFFT: two axes into the c64[4,4] result; IRFFT's last kernel writes f32.
        QCOMPARE(stepNamed(plan, "rf").args[0], plan.outputs[1].buffer);
        QCOMPARE(stepNamed(plan, "back").args[0], plan.outputs[2].buffer);
        QCOMPARE(stepNamed(plan, "back.axis.1").args[1], stepNamed(plan, "rf").args[0]);
        assemble(plan, ptxas);
    }
}

// scaled-dot (f8 with block scales; bf16 with a block scale and a scalar one): a loop kernel
// reading the operands and their scales, never a gemm step; a scale that does not divide its
// operand is an error naming the instruction.
void TestGpuBackend::scaledDotIsOneKernel() {
    auto module = parse(readGolden("scaled_dot.hlo"));
    const QString ptxas = ptxasPath();
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const GpuPlan plan = planOf(*prepared(*module, mode));
        checkPlanConsistent(plan);
        for (const GpuPlanStep& step : plan.steps) QVERIFY(step.kind == GpuStepKind::kKernel);
        const GpuPlanStep& x = stepNamed(plan, "x");
        QCOMPARE(x.args.size(), size_t{5});  // the result, lhs, rhs and the two scales
        QCOMPARE(x.args[0], plan.outputs[0].buffer);
        QCOMPARE(plan.buffers[size_t(x.args[3])].name, std::string("%sa"));
        assemble(plan, ptxas);
    }
    auto uneven = parse(R"(HloModule m
ENTRY %e (c: bf16[8,30], d: bf16[30,8], sc: bf16[8,4], s: bf16[]) -> f32[8,8] {
  %c = bf16[8,30] parameter(0)
  %d = bf16[30,8] parameter(1)
  %sc = bf16[8,4] parameter(2)
  %s = bf16[] parameter(3)
  ROOT %y = f32[8,8] scaled-dot(%c, %d, %sc, %s), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");  // parsed, not verified: the verifier refuses it first
    auto plan = buildGpuPlan(*uneven, {});
    QVERIFY(!plan.isOk());
    QVERIFY2(
        plan.status().message().find(
            "%y: scale dimension 1 does not divide the operand dimension") != std::string::npos,
        plan.status().message().c_str());
}

// Scatter combiners on 8- and 16-bit elements: a compare-and-swap loop that NVPTX widens to
// the aligned 32-bit word (atom.cas.b32); the emulation checks the values.
void TestGpuBackend::narrowScatterIsACompareAndSwapLoop() {
    auto module = parse(readGolden("narrow_scatter.hlo"));
    const GpuPlan plan = planOf(*prepared(*module, ExecutionMode::kUnfused));
    checkPlanConsistent(plan);
    for (const char* name : {"sx", "sy", "sz"})
        QVERIFY(stepNamed(plan, name).kind == GpuStepKind::kKernel);
    QVERIFY(plan.ptx.find("atom.global.cas.b32") != std::string::npos);
    assemble(plan, ptxasPath());
    // Fused, %sz takes the computation of its indices into its kInput fusion: still the output
    // initialised from the operand, then the compare-and-swap loop.
    const GpuPlan fused = planOf(*prepared(*module, ExecutionMode::kFused));
    checkPlanConsistent(fused);
    QVERIFY(fused.ptx.find("atom.global.cas.b32") != std::string::npos);
    bool init = false;
    for (const GpuPlanStep& step : fused.steps)
        init = init || (step.kind == GpuStepKind::kKernel && step.name.size() > 5 &&
                        step.name.compare(step.name.size() - 5, 5, ".init") == 0 && step.name != "sx.init" &&
                        step.name != "sy.init" && step.name != "sz.init");
    QVERIFY(init);
    assemble(fused, ptxasPath());
}

// A scatter of several operands: a copy per operand into its output, then one kernel whose
// thread 0 applies the updates in order (no atomic updates two elements together).
void TestGpuBackend::variadicScatterIsOneThreadInOrder() {
    auto module = parse(readGolden("variadic_scatter.hlo"));
    const GpuPlan plan = planOf(*prepared(*module, ExecutionMode::kUnfused));
    checkPlanConsistent(plan);
    const GpuPlanStep& best = stepNamed(plan, "best");
    QVERIFY(best.kind == GpuStepKind::kKernel);
    QCOMPARE(best.launch.grid[0] * best.launch.block[0], int64_t{32});  // thread 0 works
    QVERIFY(plan.ptx.find("atom.") == std::string::npos);
    QCOMPARE(best.args.size(), size_t{5});  // two outputs, the indices, two updates
    QVERIFY(stepNamed(plan, "best.init.0").kind == GpuStepKind::kCopy);
    QVERIFY(stepNamed(plan, "best.init.1").kind == GpuStepKind::kCopy);
    assemble(plan, ptxasPath());
}

// ragged-dot: each of the golden module's four (rows, batched with group_sizes per batch,
// ragged contraction, ragged batch) is one kernel reading its group sizes on the device; a
// ragged-dot whose group_sizes run over a contracting dimension is refused by name.
void TestGpuBackend::raggedDotIsOneKernel() {
    auto module = parse(readGolden("ragged_dot.hlo"));
    const QString ptxas = ptxasPath();
    for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
        const GpuPlan plan = planOf(*prepared(*module, mode));
        checkPlanConsistent(plan);
        for (const char* name : {"rows", "batched", "contracted", "batch"}) {
            const GpuPlanStep& step = stepNamed(plan, name);
            QVERIFY(step.kind == GpuStepKind::kKernel);
            QCOMPARE(step.args.size(), size_t{4});  // the result, lhs, rhs and group_sizes
        }
        assemble(plan, ptxas);
    }
    auto contractingPrefix = parse(R"(HloModule m
ENTRY %e (a: f32[2,3,4], b: f32[2,3,4,5]) -> f32[2,4,4,5] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[2,3,4,5] parameter(1)
  %gs = s32[2,2] constant({{1, 3}, {2, 2}})
  ROOT %y = f32[2,4,4,5] ragged-dot(%a, %b, %gs), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}, lhs_ragged_dims={1}
}
)");
    auto plan = buildGpuPlan(*contractingPrefix, {});
    QVERIFY(!plan.isOk());
    QVERIFY2(plan.status().message().find("%y: group_sizes indexed by a contracting dimension") !=
                 std::string::npos,
             plan.status().message().c_str());
}

// Row-fusion's kernels (a reduction broadcast back over its rows) run a block per row: 256
// threads for rows of 1,000 (8 warps: shuffles, then shared memory between barriers), one warp
// for rows of 37, 64 threads for bf16 rows of 200; unfused, the reductions are kernels of
// their own. The softmax example becomes one kernel.
void TestGpuBackend::rowFusionsAreRowKernels() {
    auto module = parse(readGolden("row_kernels.hlo"));
    const QString ptxas = ptxasPath();
    const GpuPlan fused = planOf(*prepared(*module, ExecutionMode::kFused));
    checkPlanConsistent(fused);
    QCOMPARE(fused.steps.size(), size_t{3});
    std::map<int64_t, int64_t> blockOfRows;  // grid -> block
    for (const GpuPlanStep& step : fused.steps)
        blockOfRows[step.launch.grid[0]] = step.launch.block[0];
    QCOMPARE(blockOfRows, (std::map<int64_t, int64_t>{{256, 64}, {300, 256}, {512, 32}}));
    QVERIFY(fused.ptx.find("bar.sync") != std::string::npos);
    QVERIFY(fused.ptx.find("shfl.sync.bfly") != std::string::npos);
    assemble(fused, ptxas);
    const GpuPlan unfused = planOf(*prepared(*module, ExecutionMode::kUnfused));
    QVERIFY(unfused.steps.size() > fused.steps.size());
    auto softmax = loadModuleFromFile((kExamples + "/softmax.hlo").toStdString());
    QVERIFY(softmax.isOk());
    const GpuPlan one = planOf(*prepared(**softmax, ExecutionMode::kFused));
    QCOMPARE(one.steps.size(), size_t{1});
    QCOMPARE(one.steps[0].launch.block[0], int64_t{256});
    // Layer norm too: the mean, the variance and rsqrt(var + eps) of each row in one block.
    auto layerNorm = loadModuleFromFile((kExamples + "/layernorm.hlo").toStdString());
    QVERIFY(layerNorm.isOk());
    const GpuPlan norm = planOf(*prepared(**layerNorm, ExecutionMode::kFused));
    QCOMPARE(norm.steps.size(), size_t{1});
    QCOMPARE(norm.steps[0].launch.grid[0], int64_t{32 * 128});
    QCOMPARE(norm.steps[0].launch.block[0], int64_t{256});
    assemble(norm, ptxas);
}

// rng-bit-generator (three_fry, philox; 8 to 64-bit outputs): one kernel each, a thread per
// counter, writing the new state and the bits from the state it reads; an unknown algorithm is
// an error naming the instruction.
void TestGpuBackend::rngBitGeneratorIsOneKernel() {
    auto module = parse(readGolden("rng_bit_generator.hlo"));
    const QString ptxas = ptxasPath();
    const GpuPlan plan = planOf(*prepared(*module, ExecutionMode::kFused));
    checkPlanConsistent(plan);
    QCOMPARE(plan.steps.size(), size_t{6});
    const GpuPlanStep& t32 = stepNamed(plan, "t32");
    QCOMPARE(t32.args.size(), size_t{3});
    QCOMPARE(t32.args[0], plan.outputs[0].buffer);  // the new state
    QCOMPARE(t32.args[1], plan.outputs[1].buffer);  // the bits
    QCOMPARE(plan.buffers[size_t(t32.args[2])].name, std::string("%a"));
    // u32[11,17]: both dimensions odd, the longer (17) split into 9 pairs: 99 counters.
    QCOMPARE(t32.launch.block[0] * t32.launch.grid[0], int64_t{128});
    assemble(plan, ptxas);
    auto unknown = parse(R"(HloModule m
ENTRY %e (s: u64[2]) -> (u64[2], u32[8]) {
  %s = u64[2] parameter(0)
  ROOT %g = (u64[2], u32[8]) rng-bit-generator(%s), algorithm=rng_mystery
}
)");
    auto failed = buildGpuPlan(*unknown, {});
    QVERIFY(!failed.isOk());
    QVERIFY2(failed.status().message().find("%g: rng-bit-generator algorithm rng_mystery") !=
                 std::string::npos,
             failed.status().message().c_str());
}

// Written, read back: the same description; synthetic inputs regenerated
// bit for bit, the others from their files.
void TestGpuBackend::planRoundTrip() {
    auto module = parse(
        "HloModule m\nENTRY %e (x: f32[300], k: s32[300]) -> f32[300] {\n  %x = f32[300] "
        "parameter(0)\n"
        "  %k = s32[300] parameter(1)\n  %c = f32[300] convert(%k)\n  ROOT %y = f32[300] add(%x, "
        "%c)\n}\n");
    auto fused = prepared(*module, ExecutionMode::kFused);
    const GpuPlan plan = planOf(*fused);
    std::vector<int64_t> seeds;
    const std::vector<Literal> args = syntheticArguments(*module->entryComputation(), 11, seeds);
    QCOMPARE(seeds, (std::vector<int64_t>{11, -1}));
    QCOMPARE(static_cast<const float*>(args[0].untypedData())[5], syntheticValue(11, 5));
    QTemporaryDir dir;
    Status written = writeGpuPlan(plan, args, printModule(*module), printModule(*fused),
                                  dir.path().toStdString(), seeds);
    QVERIFY2(written.isOk(), written.toString().c_str());
    QVERIFY(!QFile::exists(dir.filePath("inputs/0.bin")));  // generated on the GPU machine
    QVERIFY(QFile::exists(dir.filePath("inputs/1.bin")));
    auto read = readGpuPlan(dir.path().toStdString());
    QVERIFY2(read.isOk(), read.status().toString().c_str());
    QCOMPARE(read->plan.steps.size(), plan.steps.size());
    QCOMPARE(read->plan.steps[0].entry, plan.steps[0].entry);
    QCOMPARE(read->plan.steps[0].args, plan.steps[0].args);
    QCOMPARE(read->plan.buffers.size(), plan.buffers.size());
    QCOMPARE(read->plan.arenaBytes, plan.arenaBytes);
    QCOMPARE(read->plan.ptx, plan.ptx);
    QCOMPARE(read->plan.inputs[0].syntheticSeed, int64_t{11});
    QCOMPARE(read->inputs.size(), size_t{2});
    QVERIFY(std::memcmp(read->inputs[0].untypedData(), args[0].untypedData(), 300 * 4) == 0);
    QVERIFY(std::memcmp(read->inputs[1].untypedData(), args[1].untypedData(), 300 * 4) == 0);
    QCOMPARE(read->moduleText, printModule(*module));
    // A broken plan: a clear error naming the file.
    std::ofstream(dir.filePath("plan.json").toStdString()) << "{\"format\": \"hloscope-gpu-plan\",";
    auto broken = readGpuPlan(dir.path().toStdString());
    QVERIFY(!broken.isOk());
    QVERIFY2(broken.status().message().find("plan.json:1:") != std::string::npos,
             broken.status().message().c_str());
}

// A plan on 2 replicas x 2 partitions: written with each device's inputs, read back with its
// devices, steps' devices and inputs; the outputs the runner would write (here from the
// emulator) imported and checked against the interpreter's multi-device evaluation, and a
// corrupted one caught. A local run's split of those outputs by device matches the emulator's.
void TestGpuBackend::multiDevicePlanRoundTripAndImport() {
    auto module = parse(readGolden("multi_device.hlo"));
    auto fused = prepared(*module, ExecutionMode::kFused);
    GpuPlanOptions options;
    options.keepHostIr = true;
    const GpuPlan plan = planOf(*fused, options);
    QCOMPARE(plan.replicas, int64_t{2});
    QCOMPARE(plan.partitions, int64_t{2});
    const DeviceGrid grid{2, 2};
    const auto args = makeDeviceArguments(*module->entryComputation(), grid, 5);
    QTemporaryDir dir;
    Status written = writeGpuPlanOnDevices(plan, args, printModule(*module), printModule(*fused),
                                           dir.path().toStdString());
    QVERIFY2(written.isOk(), written.toString().c_str());
    QVERIFY(QFile::exists(dir.filePath("inputs/device3.0.bin")));
    auto read = readGpuPlan(dir.path().toStdString());
    QVERIFY2(read.isOk(), read.status().toString().c_str());
    QCOMPARE(read->plan.devices(), int64_t{4});
    QCOMPARE(read->plan.steps.size(), plan.steps.size());
    bool crossDevice = false;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
        QCOMPARE(read->plan.steps[i].device, plan.steps[i].device);
        QCOMPARE(read->plan.steps[i].argDevices, plan.steps[i].argDevices);
        if (plan.steps[i].kind == GpuStepKind::kCopy)
            QCOMPARE(read->plan.steps[i].srcDevice, plan.steps[i].srcDevice);
        crossDevice = crossDevice || !plan.steps[i].argDevices.empty();
    }
    QVERIFY(crossDevice);
    QCOMPARE(read->deviceInputs.size(), size_t{4});
    for (size_t d = 0; d < 4; ++d)
        for (size_t p = 0; p < args[d].size(); ++p) QVERIFY(read->deviceInputs[d][p] == args[d][p]);

    // What the runner writes, from the emulator: the outputs in plan order.
    auto emulated = emulateGpuPlanOnDevices(plan, args);
    QVERIFY2(emulated.isOk(), emulated.status().toString().c_str());
    auto writeResults = [&](float corruption) {
        QDir().mkpath(dir.filePath("outputs"));
        std::vector<size_t> next(4, 0);
        nlohmann::json outputs = nlohmann::json::array();
        for (size_t i = 0; i < plan.outputs.size(); ++i) {
            Literal value =
                (*emulated)[size_t(plan.outputs[i].device)][next[size_t(plan.outputs[i].device)]++];
            if (i == 1 && value.elementType() == PrimitiveType::F32)
                static_cast<float*>(value.untypedData())[0] += corruption;
            std::ofstream(dir.filePath(QString("outputs/%1.bin").arg(i)).toStdString(),
                          std::ios::binary)
                .write(static_cast<const char*>(value.untypedData()), value.sizeInBytes());
            outputs.push_back({{"index", i}, {"sample_stride", 1}});
        }
        nlohmann::json results{{"format", "hloscope-gpu-results"},
                               {"version", 1},
                               {"median_ms", 0.5},
                               {"run_ms", {0.5}},
                               {"device", {{"name", "NVIDIA H200"}}},
                               {"outputs", outputs}};
        std::ofstream(dir.filePath("results.json").toStdString()) << results.dump();
    };
    writeResults(0);
    auto imported = importGpuRun(dir.path().toStdString());
    QVERIFY2(imported.isOk(), imported.status().toString().c_str());
    QVERIFY2(imported->check.passed, imported->check.detail.c_str());
    // What GpuDevice::run returns as device 0's outputs and the other devices'.
    auto results = readGpuResults(plan, dir.path().toStdString());
    QVERIFY2(results.isOk(), results.status().toString().c_str());
    const std::vector<std::vector<Literal>> byDevice =
        outputsByDevice(plan, std::move(results->outputs));
    QCOMPARE(byDevice.size(), size_t{4});
    for (size_t d = 0; d < 4; ++d) {
        QCOMPARE(byDevice[d].size(), (*emulated)[d].size());
        for (size_t i = 0; i < byDevice[d].size(); ++i)
            QVERIFY2(byDevice[d][i] == (*emulated)[d][i],
                     qPrintable(QString("device %1 output %2").arg(d).arg(i)));
    }
    writeResults(0.5f);
    imported = importGpuRun(dir.path().toStdString());
    QVERIFY(imported.isOk());
    QVERIFY(!imported->check.passed);
}

// The in-place dynamic-update-slice kernels of tests/loop_update_cases.h (emulated in
// tst_gpu_emulation): PTX assembled by ptxas when installed.
void TestGpuBackend::inPlaceUpdatesAssemble() {
    const QString ptxas = ptxasPath();
    for (const testing::LoopUpdateCase& c : testing::loopUpdateCases()) {
        const GpuPlan plan = planOf(*parse(c.text));
        checkPlanConsistent(plan);
        assemble(plan, ptxas);
    }
}

// ragged-all-to-all (kernels reading row ranges from other arenas, memsets of each device's
// index), send/recv (copies across arenas), the rounding ops' kernels and XLA's async sugar
// (wrapped ops, operands bound by async-updates): PTX assembled by
// ptxas when installed, and the plan files read back with every step's device, argument
// devices, source device and value.
void TestGpuBackend::raggedAndPeerPlansRoundTrip() {
    const QString ptxas = ptxasPath();
    for (const char* name :
         {"ragged_all_to_all.hlo", "send_recv.hlo", "rounding.hlo", "async_sugar.hlo"}) {
        auto module = parse(readGolden(name));
        for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
            auto fused = prepared(*module, mode);
            const GpuPlan plan = planOf(*fused, {});
            checkPlanConsistent(plan);
            assemble(plan, ptxas);
            bool indexSet = false, acrossArenas = false;
            for (const GpuPlanStep& step : plan.steps) {
                indexSet = indexSet || (step.kind == GpuStepKind::kMemset && step.value > 0);
                acrossArenas =
                    acrossArenas || (step.kind == GpuStepKind::kCopy && step.srcDevice >= 0 &&
                                     step.srcDevice != step.device);
            }
            if (std::string_view(name) == "ragged_all_to_all.hlo") QVERIFY2(indexSet, name);
            if (std::string_view(name) == "send_recv.hlo") QVERIFY2(acrossArenas, name);
            const DeviceGrid grid{plan.replicas, plan.partitions};
            const auto args = makeDeviceArguments(*module->entryComputation(), grid, 3);
            QTemporaryDir dir;
            Status written = writeGpuPlanOnDevices(plan, args, printModule(*module),
                                                   printModule(*fused), dir.path().toStdString());
            QVERIFY2(written.isOk(), written.toString().c_str());
            auto read = readGpuPlan(dir.path().toStdString());
            QVERIFY2(read.isOk(), read.status().toString().c_str());
            QCOMPARE(read->plan.steps.size(), plan.steps.size());
            for (size_t i = 0; i < plan.steps.size(); ++i) {
                const GpuPlanStep& a = plan.steps[i];
                const GpuPlanStep& b = read->plan.steps[i];
                QCOMPARE(b.device, a.device);
                QCOMPARE(b.argDevices, a.argDevices);
                if (a.kind == GpuStepKind::kCopy) QCOMPARE(b.srcDevice, a.srcDevice);
                if (a.kind == GpuStepKind::kMemset) QCOMPARE(b.value, a.value);
            }
        }
    }
}

// Tokens hold no buffer (a tuple's array leaves keep their places); inputs
// are listed by parameter number whatever order the schedule uses them in.
void TestGpuBackend::tuplesWithTokensAndParameterOrder() {
    auto module = parse(
        "HloModule m, is_scheduled=true\nENTRY %e (p0: f32[3], p1: f32[3]) -> f32[3] {\n"
        "  %p1 = f32[3] parameter(1)\n  %p0 = f32[3] parameter(0)\n  %k = f32[] constant(42)\n"
        "  %t = token[] after-all()\n"
        "  %tuple = (f32[3], token[], f32[3], f32[]) tuple(%p0, %t, %p1, %k)\n"
        "  %a = f32[3] get-tuple-element(%tuple), index=0\n"
        "  %b = f32[3] get-tuple-element(%tuple), index=2\n"
        "  ROOT %d = f32[3] subtract(%a, %b)\n}\n");
    const GpuPlan plan = planOf(*module);
    QCOMPARE(plan.inputs.size(), size_t{2});
    QCOMPARE(plan.inputs[0].parameter, int64_t{0});
    QCOMPARE(plan.inputs[1].parameter, int64_t{1});
    const GpuPlanStep& subtract = stepNamed(plan, "d");
    QCOMPARE(subtract.args, (std::vector<int>{plan.outputs[0].buffer, plan.inputs[0].array.buffer,
                                              plan.inputs[1].array.buffer}));
}

// What the runner would write (results.json, outputs/*.bin), from the
// interpreter's outputs: checked complete, sampled, and corrupted.
void TestGpuBackend::resultsCheckedAgainstInterpreter() {
    auto module = parse(
        "HloModule m\nENTRY %e (x: f32[1000]) -> f32[1000] {\n  %x = f32[1000] parameter(0)\n"
        "  ROOT %y = f32[1000] sine(%x)\n}\n");
    const GpuPlan plan = planOf(*prepared(*module, ExecutionMode::kFused));
    auto interpreter = findDevice("interpreter");
    QVERIFY(interpreter.isOk());
    std::vector<int64_t> seeds;
    const std::vector<Literal> args = syntheticArguments(*module->entryComputation(), 3, seeds);
    auto reference = (*interpreter)->run(*module, args, {});
    QVERIFY(reference.isOk());
    for (int64_t stride : {int64_t{1}, int64_t{7}}) {
        QTemporaryDir dir;
        QDir().mkpath(dir.filePath("outputs"));
        const Literal written = sampleLiteral(reference->outputs[0], stride);
        std::ofstream(dir.filePath("outputs/0.bin").toStdString(), std::ios::binary)
            .write(static_cast<const char*>(written.untypedData()), written.sizeInBytes());
        nlohmann::json results{{"format", "hloscope-gpu-results"},
                               {"version", 1},
                               {"median_ms", 0.5},
                               {"run_ms", {0.5, 0.6}},
                               {"device", {{"name", "NVIDIA H200"}}},
                               {"steps", {{{"name", plan.steps[0].name}, {"median_ms", 0.4}}}},
                               {"outputs", {{{"index", 0}, {"sample_stride", stride}}}}};
        std::ofstream(dir.filePath("results.json").toStdString()) << results.dump();
        auto read = readGpuResults(plan, dir.path().toStdString());
        QVERIFY2(read.isOk(), read.status().toString().c_str());
        QCOMPARE(read->sampleStrides[0], stride);
        QCOMPARE(read->device["name"], std::string("NVIDIA H200"));
        std::vector<Literal> expected = {sampleLiteral(reference->outputs[0], stride)};
        QVERIFY(checkOutputs(expected, read->outputs).passed);
        static_cast<float*>(read->outputs[0].untypedData())[3] += 0.5f;
        QVERIFY(!checkOutputs(expected, read->outputs).passed);
    }
    // Missing outputs: named.
    QTemporaryDir empty;
    std::ofstream(empty.filePath("results.json").toStdString())
        << R"({"format": "hloscope-gpu-results", "median_ms": 1})";
    auto missing = readGpuResults(plan, empty.path().toStdString());
    QVERIFY(!missing.isOk());
    QVERIFY(missing.status().message().find("outputs/0.bin") != std::string::npos);
}

// Without a driver (or without the runner): unavailable, "no GPU found".
void TestGpuBackend::noGpuFound() {
    qputenv("HLOSCOPE_GPU_RUNNER", HLOSCOPE_GPU_RUNNER_PATH);
    qputenv("HLOSCOPE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
    {
        GpuDevice device;
        std::string why;
        QVERIFY(!device.available(&why));
        QVERIFY2(why.rfind("no GPU found", 0) == 0, why.c_str());
        QVERIFY(device.description().find("no GPU found") != std::string::npos);
        auto module = parse(
            "HloModule m\nENTRY %e (x: f32[4]) -> f32[4] {\n  ROOT %x = f32[4] parameter(0)\n}\n");
        auto result = device.run(*module, {Literal(Shape(PrimitiveType::F32, {4}))}, {});
        QVERIFY(!result.isOk());
        QCOMPARE(result.status().code(), StatusCode::kFailedPrecondition);
    }
    qputenv("HLOSCOPE_GPU_RUNNER", "/nonexistent/hloscope-gpu-runner");
    {
        GpuDevice device;
        std::string why;
        QVERIFY(!device.available(&why));
        QVERIFY2(why.rfind("no GPU found", 0) == 0, why.c_str());
    }
    qunsetenv("HLOSCOPE_GPU_RUNNER");
    qunsetenv("HLOSCOPE_CUDA_LIBRARY");
}

QTEST_GUILESS_MAIN(TestGpuBackend)
#include "tst_gpu_backend.moc"
