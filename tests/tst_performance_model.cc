// Target descriptions (JSON loading and its errors) and the performance
// model (kernel times, module predictions, fusion estimates).
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

#include "compiler/cost/performance_model.h"
#include "compiler/targets/target_description.h"
#include "core/ir/hlo_computation.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

std::unique_ptr<HloModule> parse(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qWarning("%s", module.status().toString().c_str());
    return module.isOk() ? std::move(*module) : nullptr;
}

const HloInstruction* find(const HloModule& module, std::string_view name) {
    for (const auto& computation : module.computations())
        if (const HloInstruction* instruction = computation->findInstruction(name)) return instruction;
    return nullptr;
}

// A target with round numbers: matrix f32 1e9 flop/s, vector f32 5e8,
// 1e9 transcendentals/s, 1e10 B/s, 1 us launch; dot efficiency 0.5, others 1.
const char* kTestTarget = R"({
  "name": "test", "kind": "gpu",
  "matrixUnit": {"value": true, "source": "test"},
  "peakTflops": {"matrix": {"f32": {"value": 0.001, "source": "test"}},
                 "vector": {"f32": {"value": 0.0005, "source": "test"}}},
  "transcendentalsPerSecond": {"value": 1e9, "source": "test"},
  "memoryBandwidthBytesPerSecond": {"value": 1e10, "source": "test"},
  "cacheBytes": {"value": 0, "source": "test"},
  "onChipMemoryBytes": {"value": 0, "source": "test"},
  "kernelLaunchSeconds": {"value": 1e-6, "source": "test"},
  "cores": {"value": 1, "source": "test"},
  "efficiency": {"elementwise": {"value": 1, "source": "test"},
                 "transcendental": {"value": 1, "source": "test"},
                 "reduction": {"value": 1, "source": "test"},
                 "dot": {"value": 0.5, "source": "test"},
                 "convolution": {"value": 1, "source": "test"},
                 "data_movement": {"value": 1, "source": "test"}}
})";

bool near(double a, double b, double relative = 1e-9) {
    return std::abs(a - b) <= relative * std::max(std::abs(a), std::abs(b));
}

std::string errorOf(const std::string& json) {
    auto target = targetDescriptionFromJson(json);
    return target.isOk() ? std::string() : target.status().message();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

std::vector<TargetDescription> shippedTargets() {
    std::vector<TargetDescription> targets;
    for (const std::string& name : builtinTargetNames()) {
        auto target = builtinTargetDescription(name);
        if (target.isOk()) targets.push_back(*target);
    }
    return targets;
}

const char* kChain = R"(HloModule chain
ENTRY e {
  a = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1)
  c = f32[1024,1024] parameter(2)
  add = f32[1024,1024] add(a, b)
  mul = f32[1024,1024] multiply(add, c)
  ROOT neg = f32[1024,1024] negate(mul)
})";

}  // namespace

class TestPerformanceModel : public QObject {
    Q_OBJECT
private slots:
    void shippedTargetsLoad() {
        QCOMPARE(builtinTargetNames(), (std::vector<std::string>{"a100", "cpu", "h100", "h200", "tpu_v4", "tpu_v5e"}));
        for (const std::string& name : builtinTargetNames()) {
            auto target = builtinTargetDescription(name);
            QVERIFY2(target.isOk(), target.status().toString().c_str());
            QCOMPARE(target->name, name);
            QVERIFY(target->memoryBandwidthBytesPerSecond > 0);
            QVERIFY(target->sources.size() >= 14);
            for (const auto& [path, source] : target->sources) QVERIFY2(!source.empty(), path.c_str());
        }
        auto h100 = builtinTargetDescription("h100");
        QVERIFY(h100.isOk());
        QCOMPARE(h100->kind, TargetKind::kGpu);
        QVERIFY(h100->hasMatrixUnit);
        QCOMPARE(h100->peakFlopsPerSecond(PrimitiveType::BF16, true), 989.4e12);
        QCOMPARE(h100->peakFlopsPerSecond(PrimitiveType::BF16, false), 133.8e12);
        QCOMPARE(h100->peakFlopsPerSecond(PrimitiveType::PRED, false), 66.9e12);  // f32 fallback
        QCOMPARE(h100->memoryBandwidthBytesPerSecond, 3.35e12);
        auto tpu = builtinTargetDescription("tpu_v5e");
        QVERIFY(tpu.isOk());
        QCOMPARE(tpu->kind, TargetKind::kTpu);
        QCOMPARE(tpu->peakFlopsPerSecond(PrimitiveType::BF16, true), 197e12);
    }

    void unknownBuiltinTarget() {
        auto target = builtinTargetDescription("z80");
        QVERIFY(!target.isOk());
        QVERIFY(target.status().message().find("h100") != std::string::npos);
    }

    void resourcesDirectoryOverridesEmbeddedText() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::string text = std::string(*builtinTargetJson("h100"));
        text = replaced(text, "3350000000000.0", "1000000000000.0");
        std::ofstream(dir.path().toStdString() + "/h100.json") << text;
        auto target = builtinTargetDescription("h100", dir.path().toStdString());
        QVERIFY2(target.isOk(), target.status().toString().c_str());
        QCOMPARE(target->memoryBandwidthBytesPerSecond, 1e12);
        auto fallback = builtinTargetDescription("a100", dir.path().toStdString());
        QVERIFY(fallback.isOk());  // not in the directory: the embedded text
    }

    void jsonRoundTrip() {
        auto h100 = builtinTargetDescription("h100");
        QVERIFY(h100.isOk());
        auto again = targetDescriptionFromJson(targetDescriptionToJson(*h100));
        QVERIFY2(again.isOk(), again.status().toString().c_str());
        QCOMPARE(again->matrixPeakTflops, h100->matrixPeakTflops);
        QCOMPARE(again->vectorPeakTflops, h100->vectorPeakTflops);
        QCOMPARE(again->sources, h100->sources);
        QCOMPARE(again->efficiency, h100->efficiency);
        QCOMPARE(again->calibrated.unixTime, int64_t(0));
        // A calibration's date, host and method survive the round trip and are summarised.
        TargetDescription calibrated = *h100;
        calibrated.kind = TargetKind::kCpu;
        calibrated.calibrated = {1764374400, "box", "hloscope-cli calibrate --quick"};  // 2025-11-29
        calibrated.sources["$.efficiency.dot"] = "fitted by hloscope-cli calibrate --from-history on box: ...";
        auto back = targetDescriptionFromJson(targetDescriptionToJson(calibrated));
        QVERIFY2(back.isOk(), back.status().toString().c_str());
        QCOMPARE(back->calibrated.unixTime, int64_t(1764374400));
        QCOMPARE(back->calibrated.host, std::string("box"));
        QCOMPARE(back->calibrated.by, std::string("hloscope-cli calibrate --quick"));
        QCOMPARE(calibrationSummary(*back, 1764374400 + 3 * 86400 + 5),
                 std::string("calibrated on box 2025-11-29 by hloscope-cli calibrate --quick (3 days ago); "
                             "1 efficiency factor fitted to this machine's history"));
        QVERIFY(calibrationSummary(*h100, 0).find("published figures") != std::string::npos);
        auto cpu = builtinTargetDescription("cpu");
        QVERIFY(cpu.isOk());
        QVERIFY(calibrationSummary(*cpu, 0).find("not calibrated for this machine") != std::string::npos);
    }

    void errorsNameTheJsonPath() {
        const std::string good = kTestTarget;
        QVERIFY(errorOf(good).empty());
        QVERIFY(errorOf("{").find("$: not valid JSON") != std::string::npos);
        QVERIFY(errorOf("[1]").find("$: expected an object") != std::string::npos);
        std::string noSource = replaced(good, R"("memoryBandwidthBytesPerSecond": {"value": 1e10, "source": "test"})",
                                        R"("memoryBandwidthBytesPerSecond": {"value": 1e10})");
        QVERIFY2(errorOf(noSource).find("$.memoryBandwidthBytesPerSecond.source: missing") != std::string::npos,
                 errorOf(noSource).c_str());
        std::string emptySource = replaced(good, R"("dot": {"value": 0.5, "source": "test"})",
                                           R"("dot": {"value": 0.5, "source": ""})");
        QVERIFY(errorOf(emptySource).find("$.efficiency.dot.source") != std::string::npos);
        std::string badNumber = replaced(good, R"({"value": 0.001, "source": "test"})",
                                         R"({"value": "fast", "source": "test"})");
        QVERIFY(errorOf(badNumber).find("$.peakTflops.matrix.f32.value: expected a number") != std::string::npos);
        std::string badType = replaced(good, R"("vector": {"f32")", R"("vector": {"f33")");
        QVERIFY(errorOf(badType).find("$.peakTflops.vector.f33: unknown element type") != std::string::npos);
        std::string badKind = replaced(good, R"("kind": "gpu")", R"("kind": "fpga")");
        QVERIFY(errorOf(badKind).find("$.kind") != std::string::npos);
        std::string badEfficiency = replaced(good, R"("dot": {"value": 0.5)", R"("dot": {"value": 1.5)");
        QVERIFY(errorOf(badEfficiency).find("$.efficiency.dot.value: must be in (0, 1]") != std::string::npos);
        std::string missing = replaced(good, R"("cores": {"value": 1, "source": "test"},)", "");
        QVERIFY(errorOf(missing).find("$.cores: missing") != std::string::npos);
        std::string unknown = replaced(good, R"("name": "test",)", R"("name": "test", "colour": "green",)");
        QVERIFY(errorOf(unknown).find("$.colour: unknown key") != std::string::npos);
        std::string badCalibration = replaced(good, R"("name": "test",)", R"("name": "test", "calibrated": {"unixTime": "today"},)");
        QVERIFY2(errorOf(badCalibration).find("$.calibrated.unixTime") != std::string::npos, errorOf(badCalibration).c_str());
        std::string negative = replaced(good, R"({"value": 1e10, "source": "test"})",
                                        R"({"value": -1, "source": "test"})");
        QVERIFY(errorOf(negative).find("$.memoryBandwidthBytesPerSecond.value") != std::string::npos);

        auto missingFile = loadTargetDescription("/nonexistent/target.json");
        QVERIFY(!missingFile.isOk());
        QVERIFY(missingFile.status().message().find("/nonexistent/target.json") != std::string::npos);
        QTemporaryDir dir;
        std::string path = dir.path().toStdString() + "/broken.json";
        std::ofstream(path) << noSource;
        auto broken = loadTargetDescription(path);
        QVERIFY(!broken.isOk());
        QVERIFY(broken.status().toString().find("broken.json") != std::string::npos);
        QVERIFY(broken.status().toString().find("$.memoryBandwidthBytesPerSecond.source") != std::string::npos);
    }

    void kernelTimeIsMaxOfComputeAndMemoryPlusLaunch() {
        auto target = targetDescriptionFromJson(kTestTarget);
        QVERIFY(target.isOk());
        auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  add = f32[1000] add(a, b)
  x = f32[2,300] parameter(2)
  y = f32[300,4] parameter(3)
  dot = f32[2,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[4] parameter(4)
  tiny = f32[4] add(s, s)
  exp = f32[1000] exponential(a)
  ROOT t = (f32[1000], f32[2,4], f32[4], f32[1000]) tuple(add, dot, tiny, exp)
})");
        QVERIFY(m);
        // add: 1000 flops / 5e8 = 2e-6 s; 12000 bytes / 1e10 = 1.2e-6 s.
        KernelPrediction add = predictKernelDetailed(*find(*m, "add"), *target);
        QVERIFY(near(add.computeSeconds, 2e-6));
        QVERIFY(near(add.memorySeconds, 1.2e-6));
        QVERIFY(near(add.totalSeconds, 3e-6));
        QCOMPARE(add.boundBy, std::string("compute"));
        // dot: 4800 flops / (1e9 * 0.5) = 9.6e-6 s (matrix rate); 7232 bytes / (1e10 * 0.5).
        KernelPrediction dot = predictKernelDetailed(*find(*m, "dot"), *target);
        QVERIFY(near(dot.computeSeconds, 9.6e-6));
        QVERIFY(near(dot.memorySeconds, 7232 / 5e9));
        QVERIFY(near(dot.totalSeconds, 10.6e-6));
        QCOMPARE(dot.boundBy, std::string("compute"));
        // tiny: 4 flops / 5e8 = 8e-9; 32 bytes / 1e10 (s read once): launch-bound.
        KernelPrediction tiny = predictKernelDetailed(*find(*m, "tiny"), *target);
        QCOMPARE(tiny.boundBy, std::string("launch"));
        QVERIFY(near(tiny.totalSeconds, 1e-6 + 8e-9));
        // exp: 1000 transcendentals / 1e9 = 1e-6; 8000 bytes / 1e10 = 8e-7.
        KernelPrediction exp = predictKernelDetailed(*find(*m, "exp"), *target);
        QVERIFY(near(exp.computeSeconds, 1e-6));
        QVERIFY(near(exp.totalSeconds, 2e-6));
        // Memory-bound: a copy of 1e6 floats: 8e6 bytes / 1e10 = 8e-4.
        auto copy = parse(R"(HloModule m
ENTRY e {
  a = f32[1000000] parameter(0)
  ROOT c = f32[1000000] copy(a)
})");
        QVERIFY(copy);
        KernelPrediction c = predictKernelDetailed(*find(*copy, "c"), *target);
        QCOMPARE(c.boundBy, std::string("memory"));
        QVERIFY(near(c.totalSeconds, 8e-4 + 1e-6));
        QCOMPARE(predictKernel(*find(*copy, "a"), *target), 0.0);  // parameters are free
        // The module: 4 kernels, the tuple and parameters free.
        ModulePrediction module = predictModule(*m, *target);
        QCOMPARE(module.kernelCount, int64_t(4));
        QVERIFY(near(module.totalSeconds, add.totalSeconds + dot.totalSeconds + tiny.totalSeconds + exp.totalSeconds));
    }

    void loopsWeightKernelsByTripCount() {
        auto target = targetDescriptionFromJson(kTestTarget);
        QVERIFY(target.isOk());
        auto m = parse(R"(HloModule m
cond {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[64] get-tuple-element(p), index=1
  w = f32[64] multiply(v, v)
  ROOT t = (s32[], f32[64]) tuple(next, w)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[64] parameter(0)
  init = (s32[], f32[64]) tuple(zero, x)
  ROOT loop = (s32[], f32[64]) while(init), condition=cond, body=body
})");
        QVERIFY(m);
        ModulePrediction prediction = predictModule(*m, *target);
        QCOMPARE(prediction.kernelCount, int64_t(30));  // next, w, lt: 10 times each
        double once = 0;
        for (const KernelPrediction& k : prediction.kernels) {
            QCOMPARE(k.executions, 10.0);
            once += k.totalSeconds;
        }
        QVERIFY(near(prediction.totalSeconds, 10 * once));
    }

    void unfusedIsSlowerThanFused() {
        const char* fusedText = R"(HloModule fused
fused_computation {
  x = f32[256,256] parameter(0)
  y = f32[256,256] parameter(1)
  a = f32[256,256] add(x, y)
  m = f32[256,256] multiply(a, x)
  ROOT e = f32[256,256] exponential(m)
}
ENTRY e {
  p0 = f32[256,256] parameter(0)
  p1 = f32[256,256] parameter(1)
  f = f32[256,256] fusion(p0, p1), kind=kLoop, calls=fused_computation
  ROOT n = f32[256,256] negate(f)
})";
        auto m = parse(fusedText);
        QVERIFY(m);
        for (const TargetDescription& target : shippedTargets()) {
            ModulePrediction asIs = predictModule(*m, target);
            ModulePrediction unfused = predictUnfused(*m, target);
            QCOMPARE(asIs.kernelCount, int64_t(2));
            QCOMPARE(unfused.kernelCount, int64_t(4));
            QVERIFY2(unfused.totalSeconds > asIs.totalSeconds, target.name.c_str());
            // The fusion kernel: 2 operands read once, the result written once.
            const KernelPrediction& fusion = asIs.kernels.front().instruction->opcode() == HloOpcode::kFusion
                                                 ? asIs.kernels.front() : asIs.kernels.back();
            QCOMPARE(fusion.cost.bytesRead, 2.0 * 256 * 256 * 4);
            QCOMPARE(fusion.cost.bytesWritten, 256.0 * 256 * 4);
        }
    }

    void elementwiseChainFusionGainsEverywhere() {
        auto m = parse(kChain);
        QVERIFY(m);
        const HloInstruction* add = find(*m, "add");
        const HloInstruction* mul = find(*m, "mul");
        const auto targets = shippedTargets();
        QCOMPARE(targets.size(), size_t(6));
        for (const TargetDescription& target : targets) {
            FusionEstimate estimate = estimateFusion(*add, *mul, target);
            QVERIFY2(estimate.fusedSeconds < estimate.unfusedSeconds, target.name.c_str());
            QVERIFY(estimate.gainSeconds() > target.kernelLaunchSeconds * 0.99);
            QVERIFY(near(estimate.unfusedSeconds, predictKernel(*add, target) + predictKernel(*mul, target)));
        }
    }

    void fusionEstimateCountsOutsideUsersAndRecomputation() {
        auto h100 = builtinTargetDescription("h100");
        QVERIFY(h100.isOk());
        auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1)
  add = f32[1024,1024] add(a, b)
  mul = f32[1024,1024] multiply(add, b)
  other = f32[1024,1024] add(a, b)
  mul2 = f32[1024,1024] multiply(other, b)
  ROOT t = (f32[1024,1024], f32[1024,1024], f32[1024,1024]) tuple(mul, other, mul2)
})");
        QVERIFY(m);
        // `other` is also a module output: fusing it still writes it.
        FusionEstimate single = estimateFusion(*find(*m, "add"), *find(*m, "mul"), *h100);
        FusionEstimate shared = estimateFusion(*find(*m, "other"), *find(*m, "mul2"), *h100);
        QVERIFY(near(single.unfusedSeconds, shared.unfusedSeconds));
        QVERIFY(shared.fusedSeconds > single.fusedSeconds);

        // An expensive producer of a dot operand is recomputed per use: no gain.
        auto dot = parse(R"(HloModule m
ENTRY e {
  a = f32[512,512] parameter(0)
  b = f32[512,512] parameter(1)
  e = f32[512,512] exponential(a)
  ROOT d = f32[512,512] dot(e, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
        QVERIFY(dot);
        FusionEstimate intoDot = estimateFusion(*find(*dot, "e"), *find(*dot, "d"), *h100);
        QVERIFY(intoDot.fusedSeconds > intoDot.unfusedSeconds);

        // Through a consumer fusion, the reads of the producer's parameter count: two 3x3
        // reduce-windows read each element 81 times, an elementwise chain once.
        auto windows = parse(R"(HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
windowed { p = f32[64,256,256] parameter(0)  z = f32[] constant(0)
  r = f32[64,256,256] reduce-window(p, z), window={size=1x3x3 pad=0_0x1_1x1_1}, to_apply=add
  ROOT q = f32[64,256,256] reduce-window(r, z), window={size=1x3x3 pad=0_0x1_1x1_1}, to_apply=add }
plain { p = f32[64,256,256] parameter(0)  n = f32[64,256,256] negate(p)  ROOT q = f32[64,256,256] abs(n) }
ENTRY e {
  a = f32[64,256,256] parameter(0)
  t = f32[64,256,256] tanh(a)
  w = f32[64,256,256] fusion(t), kind=kLoop, calls=windowed
  u = f32[64,256,256] fusion(t), kind=kLoop, calls=plain
  ROOT o = (f32[64,256,256], f32[64,256,256]) tuple(w, u)
})");
        QVERIFY(windows);
        const FusionEstimate intoWindows = estimateFusion(*find(*windows, "t"), *find(*windows, "w"), *h100);
        const FusionEstimate intoPlain = estimateFusion(*find(*windows, "t"), *find(*windows, "u"), *h100);
        QVERIFY(intoWindows.fusedSeconds > intoWindows.unfusedSeconds);
        QVERIFY(intoPlain.fusedSeconds < intoPlain.unfusedSeconds);
    }

    // A GPU kernel of few threads reaches only the share of the compute peak its threads
    // fill (SMs x lanes, XLA's GPU model): a small reduction of long rows recomputing a
    // windowed producer is slower fused than apart, and the figure survives the JSON.
    void gpuComputeScalesWithThreads() {
        auto h100 = builtinTargetDescription("h100");
        QVERIFY(h100.isOk());
        QCOMPARE(h100->lanesPerCore, int64_t(128));
        auto again = targetDescriptionFromJson(targetDescriptionToJson(*h100));
        QVERIFY(again.isOk());
        QCOMPARE(again->lanesPerCore, int64_t(128));
        std::string bad = replaced(kTestTarget, R"("cores": {"value": 1, "source": "test"})",
                                   R"("cores": {"value": 1, "source": "test"}, "lanesPerCore": {"value": 1.5, "source": "test"})");
        QVERIFY2(errorOf(bad).find("$.lanesPerCore.value: must be an integer") != std::string::npos,
                 errorOf(bad).c_str());
        auto m = parse(R"(HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  small = f32[64,64] parameter(0)
  big = f32[4096,4096] parameter(1)
  z = f32[] constant(0)
  sn = f32[64,64] sine(small)
  sb = f32[4096,4096] sine(big)
  wide = f32[4,4096] parameter(2)
  rows = f32[4] reduce(wide, z), dimensions={1}, to_apply=add
  ROOT t = (f32[64,64], f32[4096,4096], f32[4]) tuple(sn, sb, rows)
})");
        QVERIFY(m);
        QCOMPARE(gpuKernelThreads(*find(*m, "sn")), 4096.0);
        QCOMPARE(gpuKernelThreads(*find(*m, "sb")), 4096.0 * 4096.0);
        // 4096-element rows: a thread per 16 elements, 256 a row.
        QCOMPARE(gpuKernelThreads(*find(*m, "rows")), 4 * 256.0);
        const KernelPrediction small = predictKernelDetailed(*find(*m, "sn"), *h100);
        const KernelPrediction big = predictKernelDetailed(*find(*m, "sb"), *h100);
        // 4096 threads of 132 x 128 lanes: the small kernel's transcendentals per element cost
        // 16896 / 4096 times the big one's.
        const double perElementSmall = small.computeSeconds / 4096;
        const double perElementBig = big.computeSeconds / (4096.0 * 4096.0);
        QVERIFY2(near(perElementSmall / perElementBig, 132.0 * 128 / 4096),
                 std::to_string(perElementSmall / perElementBig).c_str());
        // The CPU model has no such factor.
        auto cpu = builtinTargetDescription("cpu");
        QVERIFY(cpu.isOk());
        QCOMPARE(cpu->lanesPerCore, int64_t(0));

        auto windows = parse(R"(HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
producer { p = f32[5,32,32] parameter(0)  m = f32[5,32,32] multiply(p, p)  z = f32[] constant(0)
  r1 = f32[5,30,31] reduce-window(m, z), window={size=1x3x2}, to_apply=add
  ROOT r2 = f32[5,30,31] reduce-window(r1, z), window={size=1x2x3 pad=0_0x0_1x1_1}, to_apply=add }
consumer { p = f32[5,30,31] parameter(0)  z = f32[] constant(0)
  w1 = f32[5,30,31] reduce-window(p, z), window={size=1x3x3 pad=0_0x1_1x1_1}, to_apply=add
  w2 = f32[5,30,31] reduce-window(w1, z), window={size=1x3x3 pad=0_0x1_1x1_1}, to_apply=add
  b = f32[5,930] bitcast(w2)
  ROOT r = f32[5] reduce(b, z), dimensions={1}, to_apply=add }
ENTRY e {
  a = f32[5,32,32] parameter(0)
  f = f32[5,30,31] fusion(a), kind=kLoop, calls=producer
  g = f32[5] fusion(f), kind=kInput, calls=consumer
  ROOT t = (f32[5,30,31], f32[5]) tuple(f, g)
})");
        QVERIFY(windows);
        // Five rows of 930: 64 threads a row.
        QCOMPARE(gpuKernelThreads(*find(*windows, "g")), 5 * 64.0);
        const FusionEstimate merged = estimateFusion(*find(*windows, "f"), *find(*windows, "g"), *h100);
        QVERIFY2(merged.fusedSeconds > merged.unfusedSeconds,
                 (std::to_string(merged.fusedSeconds) + " vs " + std::to_string(merged.unfusedSeconds)).c_str());
    }

    // On the CPU a small matrix product runs below the calibrated GEMM rate (the one of
    // 256x256x256): a batch of 40x30x40 products takes longer per flop than a 256^3 one,
    // a fusion around the small dot too, and on a GPU target the rate does not depend on it.
    void cpuSmallMatrixProductsRunBelowTheGemmRate() {
        auto m = parse(R"(HloModule m
fused { a = f32[1024,40,30] parameter(0)  b = f32[1024,30,40] parameter(1)
  d = f32[1024,40,40] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f32[1024,40,40] negate(d) }
ENTRY e {
  a = f32[1024,40,30] parameter(0)
  b = f32[1024,30,40] parameter(1)
  x = f32[256,256] parameter(2)
  y = f32[256,256] parameter(3)
  small = f32[1024,40,40] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  big = f32[256,256] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  f = f32[1024,40,40] fusion(a, b), kind=kOutput, calls=fused
  ROOT t = (f32[1024,40,40], f32[256,256], f32[1024,40,40]) tuple(small, big, f)
})");
        QVERIFY(m);
        auto cpu = builtinTargetDescription("cpu");
        QVERIFY(cpu.isOk());
        const KernelPrediction small = predictKernelDetailed(*find(*m, "small"), *cpu);
        const KernelPrediction big = predictKernelDetailed(*find(*m, "big"), *cpu);
        const KernelPrediction fused = predictKernelDetailed(*find(*m, "f"), *cpu);
        // The reported flops stay the product's; its time per flop grows.
        QCOMPARE(small.cost.flops, 2.0 * 1024 * 40 * 40 * 30);
        const double smallPerFlop = small.parts.flopsSeconds / small.cost.flops;
        const double bigPerFlop = big.parts.flopsSeconds / big.cost.flops;
        QVERIFY2(smallPerFlop > 1.8 * bigPerFlop && smallPerFlop < 4 * bigPerFlop,
                 std::to_string(smallPerFlop / bigPerFlop).c_str());
        QVERIFY2(near(fused.parts.flopsSeconds / fused.cost.flops, smallPerFlop, 0.05),
                 std::to_string(fused.parts.flopsSeconds / fused.cost.flops / smallPerFlop).c_str());
        auto h100 = builtinTargetDescription("h100");
        QVERIFY(h100.isOk());
        const KernelPrediction gpuSmall = predictKernelDetailed(*find(*m, "small"), *h100);
        const KernelPrediction gpuBig = predictKernelDetailed(*find(*m, "big"), *h100);
        QVERIFY(near(gpuSmall.parts.flopsSeconds / gpuSmall.cost.flops,
                     gpuBig.parts.flopsSeconds / gpuBig.cost.flops));
    }

    // The CPU runtime figures: JSON, the bandwidth curve, and how the model
    // uses them (cores for big kernels, cache bandwidth by working set,
    // dispatch and row costs, the run's fixed cost).
    void cpuRuntimeFigures() {
        const std::string runtime = R"(, "cpuRuntime": {
          "bandwidthCurve": {"value": [[1000, 1e11, 1e11], [1e6, 1e11, 2e11], [1e8, 1e10, 2e10]], "source": "test"},
          "parallelMinElements": {"value": 32768, "source": "test"},
          "parallelDispatchSeconds": {"value": 2e-6, "source": "test"},
          "runSeconds": {"value": 5e-7, "source": "test"},
          "rowSeconds": {"value": 1e-9, "source": "test"}}
        })";
        std::string json = replaced(kTestTarget, R"("kind": "gpu")", R"("kind": "cpu")");
        json = replaced(json, R"("cores": {"value": 1, "source": "test"})", R"("cores": {"value": 2, "source": "test"})");
        json = json.substr(0, json.rfind('}')) + runtime;
        auto parsed = targetDescriptionFromJson(json);
        QVERIFY2(parsed.isOk(), parsed.status().toString().c_str());
        const TargetDescription& target = *parsed;
        QVERIFY(target.cpuRuntime.has_value());
        const auto& figures = *target.cpuRuntime;
        QCOMPARE(figures.bandwidthCurve.size(), size_t(3));
        // Log-log interpolation, clamped at the ends.
        QVERIFY(near(figures.bandwidthAt(10, false), 1e11));
        QVERIFY(near(figures.bandwidthAt(1e9, true), 2e10));
        QVERIFY(near(figures.bandwidthAt(1e7, false), std::sqrt(1e11 * 1e10)));
        QVERIFY(near(figures.bandwidthAt(1e7, true), std::sqrt(2e11 * 2e10)));
        // Round trip.
        auto again = targetDescriptionFromJson(targetDescriptionToJson(target));
        QVERIFY2(again.isOk(), again.status().toString().c_str());
        QCOMPARE(again->cpuRuntime->bandwidthCurve.size(), size_t(3));
        QCOMPARE(again->cpuRuntime->rowSeconds, 1e-9);
        QCOMPARE(again->sources.at("$.cpuRuntime.bandwidthCurve"), std::string("test"));

        // Small kernel: one core, in-cache bandwidth; big kernel: both cores,
        // DRAM-side bandwidth, plus dispatch.
        auto module = parse(R"(HloModule m
ENTRY e {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  small = f32[1000] add(a, b)
  x = f32[8388608] parameter(2)
  big = f32[8388608] negate(x)
  ROOT t = (f32[1000], f32[8388608]) tuple(small, big)
})");
        QVERIFY(module);
        const KernelPrediction small = predictKernelDetailed(*find(*module, "small"), target);
        QCOMPARE(small.threads, int64_t(1));
        QVERIFY(near(small.launchSeconds, 1e-6));
        QVERIFY(near(small.parts.trafficSeconds, 12000 / figures.bandwidthAt(12000, false)));
        const KernelPrediction big = predictKernelDetailed(*find(*module, "big"), target);
        QCOMPARE(big.threads, int64_t(2));
        QVERIFY(near(big.launchSeconds, 1e-6 + 2e-6));
        const double bytes = 2.0 * 4 * 8388608;
        QVERIFY(near(big.parts.trafficSeconds, bytes / figures.bandwidthAt(bytes, true)));
        QVERIFY(near(big.parts.flopsSeconds, 8388608 / (0.0005e12 * 2)));  // both cores' peak
        QCOMPARE(big.parts.rowSeconds, 0.0);  // a linear elementwise loop
        const ModulePrediction whole = predictModule(*module, target);
        QVERIFY(near(whole.overheadSeconds, 5e-7));
        QVERIFY(near(whole.totalSeconds, small.totalSeconds + big.totalSeconds + 5e-7));

        // A transpose works out its operand's index per row: rows x (rank - 1) units.
        auto transposed = parse(R"(HloModule m
ENTRY e {
  a = f32[64,32,4] parameter(0)
  ROOT t = f32[4,32,64]{2,1,0} transpose(a), dimensions={2,1,0}
})");
        QVERIFY(transposed);
        const KernelPrediction t = predictKernelDetailed(*transposed->entryComputation()->root(), target);
        QVERIFY(near(t.parts.rowSeconds, 4.0 * 32 * 2 * 1e-9));
        // The parts give the kernel's time back with the target's factors.
        QVERIFY(near(t.parts.seconds(target.efficiency), t.totalSeconds));
        QVERIFY(near(big.parts.seconds(target.efficiency), big.totalSeconds));

        // A dot fusion with an epilogue pays a second pass over its output tiles after the
        // product (read back and written at the tiles' working-set bandwidth, plus row work);
        // the same dot fusion without one, or a plain dot, does not.
        auto dots = parse(R"(HloModule m
epilogue { a = f32[64,256,32] parameter(0)  b = f32[64,32,256] parameter(1)  c = f32[256] parameter(2)
  d = f32[64,256,256] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  cb = f32[64,256,256] broadcast(c), dimensions={2}
  ROOT r = f32[64,256,256] add(d, cb) }
plain { a = f32[64,256,32] parameter(0)  b = f32[64,32,256] parameter(1)
  d = f32[64,256,256] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f32[64,256,256] bitcast(d) }
ENTRY e {
  a = f32[64,256,32] parameter(0)
  b = f32[64,32,256] parameter(1)
  c = f32[256] parameter(2)
  withEpilogue = f32[64,256,256] fusion(a, b, c), kind=kOutput, calls=epilogue
  without = f32[64,256,256] fusion(a, b), kind=kOutput, calls=plain
  ROOT t = (f32[64,256,256], f32[64,256,256]) tuple(withEpilogue, without)
})");
        QVERIFY(dots);
        const KernelPrediction fusedEpilogue = predictKernelDetailed(*find(*dots, "withEpilogue"), target);
        const KernelPrediction fusedPlain = predictKernelDetailed(*find(*dots, "without"), target);
        const double outBytes = 4.0 * 64 * 256 * 256;
        const double pass = 2 * outBytes / figures.bandwidthAt(std::min(outBytes, 2 * 4.0 * 1024 * 1024), true) +
                            64.0 * 256 * 1e-9 / 2;
        QVERIFY2(near(fusedEpilogue.parts.rowSeconds, pass),
                 (std::to_string(fusedEpilogue.parts.rowSeconds) + " vs " + std::to_string(pass)).c_str());
        QCOMPARE(fusedPlain.parts.rowSeconds, 0.0);
        QVERIFY(fusedEpilogue.totalSeconds > fusedPlain.totalSeconds);
        QVERIFY(near(fusedEpilogue.parts.seconds(target.efficiency), fusedEpilogue.totalSeconds));
        // A convolution's epilogue the same way.
        auto convs = parse(R"(HloModule m
epilogue { x = f32[8,56,56,64] parameter(0)  w = f32[3,3,64,64] parameter(1)
  c = f32[8,56,56,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)  zb = f32[8,56,56,64] broadcast(z), dimensions={}
  ROOT r = f32[8,56,56,64] maximum(c, zb) }
ENTRY e {
  x = f32[8,56,56,64] parameter(0)
  w = f32[3,3,64,64] parameter(1)
  ROOT f = f32[8,56,56,64] fusion(x, w), kind=kOutput, calls=epilogue
})");
        QVERIFY(convs);
        const KernelPrediction convEpilogue = predictKernelDetailed(*convs->entryComputation()->root(), target);
        const double convBytes = 4.0 * 8 * 56 * 56 * 64;
        QVERIFY(near(convEpilogue.parts.rowSeconds,
                     2 * convBytes / figures.bandwidthAt(std::min(convBytes, 2 * 4.0 * 1024 * 1024), true) +
                         8.0 * 56 * 56 * 1e-9 / 2));

        // Errors name the path.
        QVERIFY(QString::fromStdString(errorOf(replaced(json, "[1e6, 1e11, 2e11]", "[1e6, 1e11]")))
                    .contains(QStringLiteral("$.cpuRuntime.bandwidthCurve.value[1]: expected 3 numbers")));
        QVERIFY(QString::fromStdString(errorOf(replaced(json, "[1e6, 1e11, 2e11]", "[100, 1e11, 2e11]")))
                    .contains(QStringLiteral("working sets must ascend")));
        QVERIFY(QString::fromStdString(errorOf(replaced(json, R"("rowSeconds")", R"("rowCost")")))
                    .contains(QStringLiteral("$.cpuRuntime.rowCost: unknown key")));
        QVERIFY(QString::fromStdString(errorOf(replaced(json, R"("runSeconds": {"value": 5e-7, "source": "test"},)", "")))
                    .contains(QStringLiteral("$.cpuRuntime.runSeconds: missing")));
    }

    void cpuTargetCache() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QByteArray saved = qgetenv("XDG_CACHE_HOME");
        qputenv("XDG_CACHE_HOME", dir.path().toUtf8());
        std::string path = cpuTargetCachePath();
        QVERIFY(path.rfind(dir.path().toStdString() + "/hloscope/cpu-", 0) == 0);
        auto shipped = loadCpuTarget();
        QVERIFY(shipped.isOk());
        QCOMPARE(shipped->name, std::string("cpu"));
        QVERIFY(QDir().mkpath(dir.path() + "/hloscope"));
        std::ofstream(path) << replaced(kTestTarget, R"("name": "test")", R"("name": "cpu-cached")");
        auto cached = loadCpuTarget();
        if (saved.isNull()) qunsetenv("XDG_CACHE_HOME");
        else qputenv("XDG_CACHE_HOME", saved);
        QVERIFY2(cached.isOk(), cached.status().toString().c_str());
        QCOMPARE(cached->name, std::string("cpu-cached"));
    }

    void corpusSweep() {
        const QString dir = corpusHloDir();
        if (!QFileInfo::exists(dir)) QSKIP("../shared/corpus is absent: the corpus sweep is skipped");
        auto h100 = builtinTargetDescription("h100");
        QVERIFY(h100.isOk());
        QDirIterator it(dir, {QStringLiteral("*.hlo")}, QDir::Files, QDirIterator::Subdirectories);
        int predicted = 0, withFusions = 0, unfusedSlower = 0;
        while (it.hasNext()) {
            std::string text;
            if (!readText(it.next(), &text)) continue;
            auto module = parseHloModule(text);
            if (!module.isOk()) continue;
            ModulePrediction asIs = predictModule(**module, *h100);
            ModulePrediction unfused = predictUnfused(**module, *h100);
            QVERIFY2(std::isfinite(asIs.totalSeconds) && asIs.totalSeconds >= 0, qPrintable(it.filePath()));
            QVERIFY2(std::isfinite(unfused.totalSeconds) && unfused.totalSeconds >= 0, qPrintable(it.filePath()));
            ++predicted;
            if (unfused.kernelCount != asIs.kernelCount) {
                ++withFusions;
                if (unfused.totalSeconds >= asIs.totalSeconds) ++unfusedSlower;
            }
        }
        qInfo("performance sweep (h100): %d modules predicted, %d with fusions, %d of them slower unfused",
              predicted, withFusions, unfusedSlower);
        QVERIFY(predicted > 0);
    }
};

QTEST_GUILESS_MAIN(TestPerformanceModel)
#include "tst_performance_model.moc"
