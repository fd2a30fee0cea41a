// The TPU timeline simulator (compiler/backends/tpu/tpu_simulator.h) and the
// targets' "tpu" section: simulated times against flops / peak, bytes / HBM
// bandwidth and the analytical model; VMEM splits and spills; overlap of DMA
// and compute; padding; determinism; the Chrome trace; every example.
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>
#include <set>

#include "compiler/backends/tpu/tpu_simulator.h"
#include "compiler/cost/performance_model.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/text/hlo_parser.h"
#include "core/io/module_io.h"

using namespace hloscope;

namespace {

std::unique_ptr<HloModule> parse(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qWarning("%s", module.status().toString().c_str());
    return module.isOk() ? std::move(*module) : nullptr;
}

TargetDescription target(const std::string& name) {
    auto description = builtinTargetDescription(name);
    if (!description.isOk()) qFatal("%s", description.status().toString().c_str());
    return *description;
}

// The module after the whole tpu pipeline (fusion, tiled layouts, buffer assignment).
std::shared_ptr<const HloModule> prepared(const HloModule& module, const std::string& targetName) {
    auto result = prepareCopyForMode(module, targetName, ExecutionMode::kFused);
    if (!result.isOk()) qFatal("%s", result.status().toString().c_str());
    return result->module;
}

TpuSimulation simulate(const HloModule& module, const TargetDescription& description) {
    auto simulation = simulateTpu(module, description);
    if (!simulation.isOk()) qFatal("%s", simulation.status().toString().c_str());
    return *simulation;
}

// The kernel doing the module's main work: the one of `kind` with the most bytes or flops.
const TpuKernelTiming* mainKernel(const TpuSimulation& simulation, const std::string& kind) {
    const TpuKernelTiming* best = nullptr;
    for (const TpuKernelTiming& kernel : simulation.kernels)
        if (kernel.kind == kind &&
            (best == nullptr || kernel.flops + kernel.hbmBytes > best->flops + best->hbmBytes))
            best = &kernel;
    return best;
}

double relativeError(double value, double reference) {
    return std::abs(value - reference) / reference;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

std::string errorOf(const std::string& json) {
    auto description = targetDescriptionFromJson(json);
    return description.isOk() ? std::string() : description.status().message();
}

const char* kBigDot = R"(HloModule big_dot
ENTRY e {
  a = bf16[8192,8192] parameter(0)
  b = bf16[8192,8192] parameter(1)
  ROOT d = bf16[8192,8192] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

const char* kBigPolynomial = R"(HloModule big_polynomial
ENTRY e {
  x = f32[8192,8192] parameter(0)
  xx = f32[8192,8192] multiply(x, x)
  two = f32[] constant(2)
  b2 = f32[8192,8192] broadcast(two), dimensions={}
  tx = f32[8192,8192] multiply(b2, x)
  s = f32[8192,8192] add(xx, tx)
  one = f32[] constant(1)
  b1 = f32[8192,8192] broadcast(one), dimensions={}
  ROOT r = f32[8192,8192] add(s, b1)
})";

}  // namespace

class TestTpuSimulator : public QObject {
    Q_OBJECT
private slots:
    void targetsCarryTpuFigures() {
        for (const std::string& name : {std::string("tpu_v4"), std::string("tpu_v5e")}) {
            const TargetDescription t = target(name);
            QVERIFY2(t.tpu.has_value(), name.c_str());
            QCOMPARE(t.tpu->mxusPerCore, int64_t{4});
            QCOMPARE(t.tpu->mxuRows, int64_t{128});
            QCOMPARE(t.tpu->mxuColumns, int64_t{128});
            QCOMPARE(t.tpu->vpuSublanes, int64_t{8});
            QCOMPARE(t.tpu->vpuLanes, int64_t{128});
            for (const char* key :
                 {"mxusPerCore", "mxuRows", "mxuColumns", "vpuSublanes", "vpuLanes", "clockHz",
                  "hbmCapacityBytes", "dmaLatencySeconds", "gridStepSeconds"}) {
                auto it = t.sources.find(std::string("$.tpu.") + key);
                QVERIFY2(it != t.sources.end() && !it->second.empty(), key);
            }
            // The clock, MXUs and cores give the documented bf16 peak.
            const double peak = static_cast<double>(t.cores * t.tpu->mxusPerCore * t.tpu->mxuRows *
                                                    t.tpu->mxuColumns) *
                                2 * t.tpu->clockHz;
            QVERIFY2(relativeError(peak, t.peakFlopsPerSecond(PrimitiveType::BF16, true)) < 0.005,
                     (name + ": " + std::to_string(peak)).c_str());
        }
        QCOMPARE(target("tpu_v4").tpu->clockHz, 1.05e9);
        QCOMPARE(target("tpu_v4").tpu->hbmCapacityBytes, 32.0 * (1 << 30));
        QCOMPARE(target("tpu_v5e").tpu->hbmCapacityBytes, 16.0 * (1 << 30));
        QVERIFY(!target("h100").tpu.has_value());
    }

    void tpuFiguresRoundTrip() {
        for (const std::string& name : {std::string("tpu_v4"), std::string("tpu_v5e")}) {
            const TargetDescription t = target(name);
            auto again = targetDescriptionFromJson(targetDescriptionToJson(t));
            QVERIFY2(again.isOk(), again.status().toString().c_str());
            QVERIFY(again->tpu.has_value());
            QCOMPARE(again->tpu->mxusPerCore, t.tpu->mxusPerCore);
            QCOMPARE(again->tpu->mxuRows, t.tpu->mxuRows);
            QCOMPARE(again->tpu->mxuColumns, t.tpu->mxuColumns);
            QCOMPARE(again->tpu->vpuSublanes, t.tpu->vpuSublanes);
            QCOMPARE(again->tpu->vpuLanes, t.tpu->vpuLanes);
            QCOMPARE(again->tpu->clockHz, t.tpu->clockHz);
            QCOMPARE(again->tpu->hbmCapacityBytes, t.tpu->hbmCapacityBytes);
            QCOMPARE(again->tpu->dmaLatencySeconds, t.tpu->dmaLatencySeconds);
            QCOMPARE(again->tpu->gridStepSeconds, t.tpu->gridStepSeconds);
            QCOMPARE(again->sources, t.sources);
            QCOMPARE(targetDescriptionToJson(*again), targetDescriptionToJson(t));
        }
        // A target without the section writes none.
        QVERIFY(targetDescriptionToJson(target("h100")).find("\"tpu\"") == std::string::npos);
    }

    void tpuFiguresErrorsNameTheJsonPath() {
        const std::string good(*builtinTargetJson("tpu_v4"));
        QVERIFY(errorOf(good).empty());
        const std::string noSource = replaced(good, R"("value": 1050000000.0,
      "source")",
                                              R"("value": 1050000000.0,
      "note")");
        QVERIFY2(errorOf(noSource).find("$.tpu.clockHz") != std::string::npos,
                 errorOf(noSource).c_str());
        const std::string fractional = replaced(good, R"("mxusPerCore": {
      "value": 4,)",
                                                R"("mxusPerCore": {
      "value": 4.5,)");
        QVERIFY2(errorOf(fractional).find("$.tpu.mxusPerCore.value: must be a positive integer") !=
                     std::string::npos,
                 errorOf(fractional).c_str());
        const std::string unknown = replaced(good, R"("tpu": {)", R"("tpu": {"sparseCores": 4,)");
        QVERIFY2(errorOf(unknown).find("$.tpu.sparseCores: unknown key") != std::string::npos,
                 errorOf(unknown).c_str());
        const std::string missing = replaced(good, R"("gridStepSeconds")", R"("gridStepTime")");
        QVERIFY2(errorOf(missing).find("$.tpu.gridStepTime: unknown key") != std::string::npos,
                 errorOf(missing).c_str());
        // A TPU target without the section cannot be simulated.
        TargetDescription bare = target("tpu_v4");
        bare.tpu.reset();
        auto module = parse(kBigPolynomial);
        QVERIFY(module);
        auto refused = simulateTpu(*module, bare);
        QVERIFY(!refused.isOk());
        QVERIFY2(refused.status().message().find("\"tpu\" section") != std::string::npos,
                 refused.status().message().c_str());
        QVERIFY(!simulateTpu(*module, target("h100")).isOk());
    }

    void largeBf16DotRunsAtThePeak() {
        auto module = parse(kBigDot);
        QVERIFY(module);
        for (const std::string& name : {std::string("tpu_v4"), std::string("tpu_v5e")}) {
            const TargetDescription t = target(name);
            const TpuSimulation simulation = simulate(*prepared(*module, name), t);
            const TpuKernelTiming* dot = mainKernel(simulation, "matmul");
            QVERIFY(dot != nullptr);
            const double flops = 2.0 * 8192 * 8192 * 8192;
            QCOMPARE(static_cast<double>(dot->flops), flops);
            const double bound = flops / t.peakFlopsPerSecond(PrimitiveType::BF16, true);
            qInfo(
                "%s bf16 dot 8192^3: simulated %.4f ms, flops/peak %.4f ms, roofline %.4f ms, "
                "analytical %.4f ms, "
                "MXU %.1f%%, HBM %.1f%%, %s",
                name.c_str(), dot->seconds * 1e3, bound * 1e3, dot->rooflineSeconds * 1e3,
                dot->analyticalSeconds * 1e3, 100 * dot->mxuUtilisation, 100 * dot->hbmUtilisation,
                dot->tiling.c_str());
            QVERIFY2(relativeError(dot->seconds, bound) < 0.10, name.c_str());
            QVERIFY2(relativeError(dot->seconds, dot->rooflineSeconds) < 0.10, name.c_str());
            // The issue's consistency: within 10% of the analytical model too.
            QVERIFY2(relativeError(dot->seconds, dot->analyticalSeconds) < 0.10, name.c_str());
            QVERIFY(dot->mxuUtilisation > 0.9 && dot->mxuUtilisation <= 1.0 + 1e-9);
            QVERIFY(dot->fitsVmem);
            QVERIFY(dot->vmemPeakBytes <= static_cast<int64_t>(t.onChipMemoryBytes));
        }
    }

    void largeElementwiseFusionRunsAtTheHbmBandwidth() {
        auto module = parse(kBigPolynomial);
        QVERIFY(module);
        for (const std::string& name : {std::string("tpu_v4"), std::string("tpu_v5e")}) {
            const TargetDescription t = target(name);
            const TpuSimulation simulation = simulate(*prepared(*module, name), t);
            const TpuKernelTiming* fusion = nullptr;
            for (const TpuKernelTiming& kernel : simulation.kernels)
                if (kernel.opcode == "fusion") fusion = &kernel;
            QVERIFY(fusion != nullptr);
            QCOMPARE(fusion->kind, std::string("elementwise"));
            const double bytes = 2.0 * 8192 * 8192 * 4;
            QVERIFY(relativeError(static_cast<double>(fusion->hbmBytes), bytes) <
                    1e-6);  // plus two scalars
            const double bound = bytes / t.memoryBandwidthBytesPerSecond;
            qInfo(
                "%s x*x+2x+1 on 64M f32: simulated %.4f ms, bytes/bandwidth %.4f ms, roofline %.4f "
                "ms, analytical "
                "%.4f ms, HBM %.1f%%, VPU %.1f%%, %s",
                name.c_str(), fusion->seconds * 1e3, bound * 1e3, fusion->rooflineSeconds * 1e3,
                fusion->analyticalSeconds * 1e3, 100 * fusion->hbmUtilisation,
                100 * fusion->vpuUtilisation, fusion->tiling.c_str());
            QVERIFY2(relativeError(fusion->seconds, bound) < 0.10, name.c_str());
            QVERIFY2(relativeError(fusion->seconds, fusion->rooflineSeconds) < 0.10, name.c_str());
            QVERIFY2(relativeError(fusion->seconds, fusion->analyticalSeconds) < 0.10,
                     name.c_str());
            QVERIFY(fusion->hbmUtilisation > 0.9 && fusion->hbmUtilisation <= 1.0 + 1e-9);
            QCOMPARE(fusion->mxuUtilisation, 0.0);
        }
    }

    void dmaAndComputeOverlap() {
        // Twelve transcendentals per element: the VPU/EUP work is about as
        // long as the DMAs, so a pipeline without overlap would take their sum.
        std::string text = "HloModule heavy\nENTRY e {\n  x = f32[8192,8192] parameter(0)\n";
        const char* ops[] = {"sine", "exponential", "tanh", "cosine", "logistic", "exponential"};
        std::string last = "x";
        for (int i = 0; i < 12; ++i) {
            const std::string name = "t" + std::to_string(i);
            text += "  " + name + " = f32[8192,8192] " + ops[i % 6] + "(" + last + ")\n";
            last = name;
        }
        text += "  ROOT r = f32[8192,8192] add(" + last + ", x)\n}\n";
        auto module = parse(text);
        QVERIFY(module);
        const TargetDescription t = target("tpu_v4");
        const TpuSimulation simulation = simulate(*prepared(*module, "tpu_v4"), t);
        const TpuKernelTiming* fusion = nullptr;
        for (const TpuKernelTiming& kernel : simulation.kernels)
            if (kernel.opcode == "fusion") fusion = &kernel;
        QVERIFY(fusion != nullptr);
        qInfo("heavy fusion: simulated %.4f ms, DMA %.4f ms, compute %.4f ms, analytical %.4f ms",
              fusion->seconds * 1e3, fusion->dmaSeconds * 1e3, fusion->computeSeconds * 1e3,
              fusion->analyticalSeconds * 1e3);
        // Both sides are heavy (within 2x of each other)...
        QVERIFY(fusion->computeSeconds > 0.5 * fusion->dmaSeconds &&
                fusion->computeSeconds < 2 * fusion->dmaSeconds);
        // ...and the simulation overlaps them: less than their sum, more than their max.
        QVERIFY(fusion->seconds < 0.9 * (fusion->dmaSeconds + fusion->computeSeconds));
        QVERIFY(fusion->seconds > std::max(fusion->dmaSeconds, fusion->computeSeconds));
        QVERIFY(fusion->vpuUtilisation > 0.5);
        QVERIFY(fusion->hbmUtilisation > 0.5);
    }

    void contractingDimensionTooLongIsSplit() {
        auto module = parse(R"(HloModule long_k
ENTRY e {
  a = bf16[256,8388608] parameter(0)
  b = bf16[8388608,256] parameter(1)
  ROOT d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
        QVERIFY(module);
        for (const std::string& name : {std::string("tpu_v4"), std::string("tpu_v5e")}) {
            const TargetDescription t = target(name);
            const TpuSimulation simulation = simulate(*module, t);
            const TpuKernelTiming* dot = mainKernel(simulation, "matmul");
            QVERIFY(dot != nullptr);
            QVERIFY2(!dot->fitsVmem, name.c_str());
            QVERIFY(dot->splits > 1);
            QVERIFY2(dot->note.find("split") != std::string::npos &&
                         dot->note.find("VMEM") != std::string::npos,
                     dot->note.c_str());
            QVERIFY(dot->vmemPeakBytes <= static_cast<int64_t>(t.onChipMemoryBytes));
            // Split, it still streams both operands once at about the HBM bandwidth.
            const double bound = 2.0 * 256 * 8388608 * 2 / t.memoryBandwidthBytesPerSecond;
            QVERIFY2(dot->seconds > bound && dot->seconds < 1.3 * bound,
                     std::to_string(dot->seconds / bound).c_str());
        }
    }

    void reductionOfALargeInputIsChunked() {
        auto module = parse(R"(HloModule big_sum
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[16,16777216] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[16] reduce(x, zero), dimensions={1}, to_apply=add
})");
        QVERIFY(module);
        const TargetDescription t = target("tpu_v4");
        const TpuSimulation simulation = simulate(*prepared(*module, "tpu_v4"), t);
        const TpuKernelTiming* reduce = mainKernel(simulation, "reduction");
        QVERIFY(reduce != nullptr);
        QVERIFY(!reduce->fitsVmem);
        QVERIFY(reduce->splits > 1);
        QVERIFY2(reduce->note.find("split") != std::string::npos, reduce->note.c_str());
        QVERIFY(reduce->vmemPeakBytes <= static_cast<int64_t>(t.onChipMemoryBytes));
        // A small reduction fits and says nothing.
        auto small = parse(R"(HloModule small_sum
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[64,1024] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
})");
        // The simulation outlives the pointer into its kernels (ASan found the temporary).
        const TpuSimulation smallSimulation = simulate(*prepared(*small, "tpu_v4"), t);
        const TpuKernelTiming* fits = mainKernel(smallSimulation, "reduction");
        QVERIFY(fits != nullptr);
        QVERIFY(fits->fitsVmem);
        QCOMPARE(fits->splits, int64_t{1});
        QVERIFY2(fits->note.empty(), fits->note.c_str());
    }

    void tooManyOperandsForVmemSpill() {
        // 24 operands of one (8,128) tile each, double-buffered, need 200 KiB;
        // give the chip 64 KiB of VMEM.
        std::string text = "HloModule wide\nENTRY e {\n";
        std::string sum;
        for (int i = 0; i < 24; ++i) {
            text += "  p" + std::to_string(i) + " = f32[1024,1024]{1,0:T(8,128)} parameter(" +
                    std::to_string(i) + ")\n";
            if (i == 1) text += "  s1 = f32[1024,1024]{1,0:T(8,128)} add(p0, p1)\n";
            if (i > 1)
                text += "  s" + std::to_string(i) + " = f32[1024,1024]{1,0:T(8,128)} add(s" +
                        std::to_string(i - 1) + ", p" + std::to_string(i) + ")\n";
        }
        text += "  ROOT r = f32[1024,1024]{1,0:T(8,128)} negate(s23)\n}\n";
        auto module = parse(text);
        QVERIFY(module);
        auto fused = prepared(*module, "tpu_v4");
        TargetDescription small = target("tpu_v4");
        small.onChipMemoryBytes = 64 * 1024;
        const TpuSimulation tight = simulate(*fused, small);
        const TpuSimulation roomy = simulate(*fused, target("tpu_v4"));
        auto widest = [](const TpuSimulation& s) {
            const TpuKernelTiming* best = nullptr;
            for (const TpuKernelTiming& k : s.kernels)
                if (k.opcode == "fusion" && (best == nullptr || k.hbmBytes > best->hbmBytes))
                    best = &k;
            return best;
        };
        const TpuKernelTiming* spilled = widest(tight);
        const TpuKernelTiming* fitting = widest(roomy);
        QVERIFY(spilled != nullptr && fitting != nullptr);
        QVERIFY(!spilled->fitsVmem);
        QVERIFY2(spilled->note.find("spills") != std::string::npos, spilled->note.c_str());
        QVERIFY(fitting->fitsVmem);
        QVERIFY(fitting->note.empty());
        // Spilling costs traffic and time.
        QVERIFY(spilled->hbmBytes > fitting->hbmBytes);
        QVERIFY(spilled->seconds > fitting->seconds);
    }

    void mxuPassesFollowThePrecision() {
        // MXU busy time (one execution) of an f32 4096^3 dot.
        auto mxuTimeOf = [](const std::string& precision) {
            std::string text = R"(HloModule f32_dot
ENTRY e {
  a = f32[4096,4096]{1,0:T(8,128)} parameter(0)
  b = f32[4096,4096]{1,0:T(8,128)} parameter(1)
  ROOT d = f32[4096,4096]{1,0:T(8,128)} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})";
            if (!precision.empty())
                text += ", operand_precision={" +
                        (precision.find(',') != std::string::npos ? precision
                                                                  : precision + "," + precision) +
                        "}";
            text += "\n}\n";
            auto module = parse(text);
            if (!module) return std::pair{0.0, 0.0};
            const TpuSimulation simulation = simulate(*module, target("tpu_v4"));
            const TpuKernelTiming* dot = mainKernel(simulation, "matmul");
            return dot != nullptr ? std::pair{dot->mxuUtilisation * dot->seconds, dot->seconds}
                                  : std::pair{0.0, 0.0};
        };
        const auto fallback = mxuTimeOf("");
        const auto deflt = mxuTimeOf("default");
        const auto high = mxuTimeOf("high");
        const auto highest = mxuTimeOf("HIGHEST");
        QVERIFY(deflt.first > 0);
        QCOMPARE(fallback, deflt);
        qInfo(
            "f32 4096^3 on v4: DEFAULT %.3f ms (MXU busy %.3f), HIGH %.3f ms (%.3f), HIGHEST %.3f "
            "ms (%.3f)",
            deflt.second * 1e3, deflt.first * 1e3, high.second * 1e3, high.first * 1e3,
            highest.second * 1e3, highest.first * 1e3);
        QVERIFY2(relativeError(high.first / deflt.first, 3) < 0.01,
                 std::to_string(high.first / deflt.first).c_str());
        QVERIFY2(relativeError(highest.first / deflt.first, 6) < 0.01,
                 std::to_string(highest.first / deflt.first).c_str());
        QVERIFY(deflt.second < high.second && high.second < highest.second);
        // Mixed precisions cost what tpu_precision computes: each operand split
        // by its own precision ({highest,default}: hi, mid, lo times one piece).
        const auto mixed = mxuTimeOf("highest,default");
        const auto highDefault = mxuTimeOf("high,default");
        QVERIFY2(relativeError(mixed.first / deflt.first, 3) < 0.01,
                 std::to_string(mixed.first / deflt.first).c_str());
        QVERIFY2(relativeError(highDefault.first / deflt.first, 2) < 0.01,
                 std::to_string(highDefault.first / deflt.first).c_str());
        // DEFAULT runs at the documented f32 (one bf16 pass) peak.
        const double flops = 2.0 * 4096 * 4096 * 4096;
        QVERIFY(relativeError(deflt.first, flops / target("tpu_v4").peakFlopsPerSecond(
                                                       PrimitiveType::F32, true)) < 0.01);
    }

    void depthwiseConvolutionsRunOnTheVpu() {
        // 3x3 depthwise: K = 9 and N = 1 per group would fill 1/1820 of a
        // 128x128 weight tile; the multiply-adds go to the VPU instead. A 1x1
        // convolution over 96 features stays on the MXU.
        auto module = parse(R"(HloModule convolutions
ENTRY e {
  x = f32[32,112,112,96]{3,2,1,0:T(8,128)} parameter(0)
  w = f32[3,3,1,96]{3,2,1,0:T(8,128)} parameter(1)
  d = f32[32,112,112,96]{3,2,1,0:T(8,128)} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=96
  p = f32[1,1,96,128]{3,2,1,0:T(8,128)} parameter(2)
  ROOT c = f32[32,112,112,128]{3,2,1,0:T(8,128)} convolution(d, p), window={size=1x1}, dim_labels=b01f_01io->b01f
})");
        QVERIFY(module);
        const TargetDescription t = target("tpu_v4");
        const TpuSimulation simulation = simulate(*module, t);
        QCOMPARE(simulation.kernels.size(), size_t{2});
        const TpuKernelTiming& depthwise = simulation.kernels[0];
        const TpuKernelTiming& pointwise = simulation.kernels[1];
        QCOMPARE(depthwise.kind, std::string("convolution"));
        QVERIFY2(depthwise.tiling.find("on the VPU") != std::string::npos,
                 depthwise.tiling.c_str());
        QCOMPARE(depthwise.mxuUtilisation, 0.0);
        QVERIFY(depthwise.vpuUtilisation > 0);
        QCOMPARE(pointwise.kind, std::string("convolution"));
        QVERIFY(pointwise.mxuUtilisation > 0);
        QVERIFY2(pointwise.tiling.find("GEMM 401408x96x128") != std::string::npos,
                 pointwise.tiling.c_str());
        // Memory-bound both: within the roofline's reach rather than the padded-MXU time.
        QVERIFY(depthwise.seconds < 2 * depthwise.rooflineSeconds);
        QVERIFY(pointwise.seconds < 2 * pointwise.rooflineSeconds);
    }

    void paddingGolden() {
        auto module = parse(R"(HloModule padded
ENTRY e {
  a = f32[3,5]{1,0:T(8,128)} parameter(0)
  b = bf16[3,5]{1,0:T(8,128)(2,1)} parameter(1)
  v = f32[5]{0:T(128)} parameter(2)
  c = bf16[3,5]{1,0:T(8,128)(2,1)} convert(a)
  ROOT t = (bf16[3,5]{1,0:T(8,128)(2,1)}, bf16[3,5]{1,0:T(8,128)(2,1)}, f32[5]{0:T(128)}) tuple(c, b, v)
})");
        QVERIFY(module);
        const TpuSimulation simulation = simulate(*module, target("tpu_v4"));
        std::map<std::string, std::pair<int64_t, int64_t>> rows;
        for (const TpuBufferPadding& p : simulation.padding)
            rows[p.name] = {p.logicalBytes, p.paddedBytes};
        QCOMPARE(rows.size(), size_t{4});  // a, b, v, c (the tuple aliases its operands)
        QCOMPARE(rows["a"], (std::pair<int64_t, int64_t>{60, 4096}));
        QCOMPARE(rows["b"], (std::pair<int64_t, int64_t>{30, 2048}));
        QCOMPARE(rows["c"], (std::pair<int64_t, int64_t>{30, 2048}));
        QCOMPARE(rows["v"], (std::pair<int64_t, int64_t>{20, 512}));
        QCOMPARE(simulation.logicalBytes, int64_t{140});
        QCOMPARE(simulation.paddedBytes, int64_t{8704});
        const std::string report = tpuPaddingReport(simulation);
        qInfo("%s", report.c_str());
        QVERIFY(report.find("f32[3,5]{1,0:T(8,128)}") != std::string::npos);
        QVERIFY(report.find("98.5%") != std::string::npos);  // a: 4036 of 4096 bytes wasted
        QVERIFY(report.find("total: 4 buffers, logical 140 B, padded 8.5 KiB") !=
                std::string::npos);
        // Largest waste first.
        QVERIFY(report.find("\na ") < report.find("\nv "));
        // The convert moves the padded tiles, not 60 bytes.
        QCOMPARE(simulation.kernels.size(), size_t{1});
        QCOMPARE(simulation.kernels[0].hbmBytes, int64_t{4096 + 2048});
    }

    void unmodelledKernelsUseTheAnalyticalModel() {
        auto module = parse(R"(HloModule sorting
lt {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT c = pred[] compare(p, q), direction=LT
}
ENTRY e {
  x = f32[1024]{0:T(1024)} parameter(0)
  s = f32[1024]{0:T(1024)} sort(x), dimensions={0}, to_apply=lt
  ROOT n = f32[1024]{0:T(1024)} negate(s)
})");
        QVERIFY(module);
        const TargetDescription t = target("tpu_v5e");
        const TpuSimulation simulation = simulate(*module, t);
        QCOMPARE(simulation.kernels.size(), size_t{2});
        const TpuKernelTiming& sort = simulation.kernels[0];
        QCOMPARE(sort.kind, std::string("unmodelled"));
        QVERIFY2(sort.note.find("no TPU model for sort") != std::string::npos, sort.note.c_str());
        QCOMPARE(sort.seconds, predictKernel(*module->entryComputation()->findInstruction("s"), t));
        QVERIFY(sort.seconds > 0);
        QCOMPARE(simulation.kernels[1].kind, std::string("elementwise"));
        QCOMPARE(simulation.kernels[1].startSeconds, sort.seconds);
    }

    void whileBodiesRunTripCountTimes() {
        auto module = parse(R"(HloModule loop
cond {
  p = (s32[], f32[1024,1024]{1,0:T(8,128)}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[1024,1024]{1,0:T(8,128)}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[1024,1024]{1,0:T(8,128)} get-tuple-element(p), index=1
  y = f32[1024,1024]{1,0:T(8,128)} exponential(x)
  ROOT t = (s32[], f32[1024,1024]{1,0:T(8,128)}) tuple(j, y)
}
ENTRY e {
  x = f32[1024,1024]{1,0:T(8,128)} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1024,1024]{1,0:T(8,128)}) tuple(zero, x)
  w = (s32[], f32[1024,1024]{1,0:T(8,128)}) while(init), condition=cond, body=body
  ROOT r = f32[1024,1024]{1,0:T(8,128)} get-tuple-element(w), index=1
})");
        QVERIFY(module);
        const TpuSimulation simulation = simulate(*module, target("tpu_v4"));
        double sum = 0;
        const TpuKernelTiming* exp = nullptr;
        for (const TpuKernelTiming& k : simulation.kernels) {
            sum += k.seconds * static_cast<double>(k.executions);
            if (k.name == "y") exp = &k;
        }
        QVERIFY(exp != nullptr);
        QCOMPARE(exp->executions, int64_t{10});
        QVERIFY(relativeError(simulation.totalSeconds, sum) < 1e-9);
        QVERIFY(simulation.totalSeconds > 10 * exp->seconds);
        QCOMPARE(simulation.notes.size(), size_t{1});
        QVERIFY2(simulation.notes[0].find("10 iterations") != std::string::npos,
                 simulation.notes[0].c_str());
    }

    void deterministic() {
        auto module =
            loadModuleFromFile(HLOSCOPE_SOURCE_DIR "/resources/examples/bert_encoder_forward.hlo");
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        auto ready = prepared(**module, "tpu_v4");
        const TargetDescription t = target("tpu_v4");
        const TpuSimulation first = simulate(*ready, t);
        const TpuSimulation second = simulate(*ready, t);
        QCOMPARE(first.totalSeconds, second.totalSeconds);
        QCOMPARE(first.kernels.size(), second.kernels.size());
        for (size_t i = 0; i < first.kernels.size(); ++i) {
            QCOMPARE(first.kernels[i].seconds, second.kernels[i].seconds);
            QCOMPARE(first.kernels[i].hbmBytes, second.kernels[i].hbmBytes);
        }
        QCOMPARE(first.events.size(), second.events.size());
        QCOMPARE(tpuChromeTraceJson(first), tpuChromeTraceJson(second));
        QCOMPARE(tpuPaddingReport(first), tpuPaddingReport(second));
    }

    void chromeTraceIsValidJson() {
        auto module = loadModuleFromFile(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo");
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        const TpuSimulation simulation =
            simulate(*prepared(**module, "tpu_v5e"), target("tpu_v5e"));
        const std::string trace = tpuChromeTraceJson(simulation);
        QJsonParseError error;
        const QJsonDocument document =
            QJsonDocument::fromJson(QByteArray::fromStdString(trace), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QVERIFY(document.isObject());
        const QJsonArray events = document.object().value("traceEvents").toArray();
        QVERIFY(!events.isEmpty());
        std::set<QString> threads;
        int complete = 0, kernels = 0;
        double end = 0;
        for (const QJsonValue& value : events) {
            const QJsonObject event = value.toObject();
            const QString phase = event.value("ph").toString();
            QCOMPARE(event.value("pid").toInt(), 1);
            if (phase == "M") {
                if (event.value("name").toString() == "thread_name")
                    threads.insert(event.value("args").toObject().value("name").toString());
                continue;
            }
            QCOMPARE(phase, QString("X"));
            ++complete;
            QVERIFY(event.value("ts").toDouble() >= 0);
            QVERIFY(event.value("dur").toDouble() >= 0);
            QVERIFY(event.value("tid").toInt() >= 1);
            end = std::max(end, event.value("ts").toDouble() + event.value("dur").toDouble());
            if (event.value("cat").toString() == "kernels") {
                ++kernels;
                const QJsonObject args = event.value("args").toObject();
                QVERIFY(args.contains("kind"));
                QVERIFY(args.contains("mxu_utilisation"));
            }
        }
        QCOMPARE(threads, (std::set<QString>{"kernels", "HBM->VMEM", "MXU", "VPU", "VMEM->HBM"}));
        QCOMPARE(complete, static_cast<int>(simulation.events.size()));
        QCOMPARE(kernels, static_cast<int>(simulation.kernels.size()));
        QVERIFY(std::abs(end - simulation.totalSeconds * 1e6) < 1e-6 * end + 1e-9);
    }

    void everyExampleSimulates() {
        const QStringList files = QDir(HLOSCOPE_SOURCE_DIR "/resources/examples")
                                      .entryList({"*.hlo"}, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 9);
        for (const std::string& name : {std::string("tpu_v4"), std::string("tpu_v5e")}) {
            const TargetDescription t = target(name);
            for (const QString& file : files) {
                auto module = loadModuleFromFile(HLOSCOPE_SOURCE_DIR "/resources/examples/" +
                                                 file.toStdString());
                QVERIFY2(module.isOk(), module.status().toString().c_str());
                const TpuSimulation simulation = simulate(*prepared(**module, name), t);
                const std::string what = name + " " + file.toStdString();
                QVERIFY2(simulation.totalSeconds > 0, what.c_str());
                QVERIFY2(!simulation.kernels.empty(), what.c_str());
                QVERIFY2(!simulation.padding.empty(), what.c_str());
                QVERIFY(simulation.paddedBytes >= simulation.logicalBytes);
                std::set<std::string> tracks;
                for (const TpuTraceEvent& e : simulation.events) tracks.insert(e.track);
                for (const char* track : {"kernels", "HBM->VMEM", "VPU", "VMEM->HBM"})
                    QVERIFY2(tracks.count(track) == 1, (what + ": no " + track).c_str());
                double sum = 0;
                bool matmul = false;
                for (const TpuKernelTiming& k : simulation.kernels) {
                    QVERIFY2(k.seconds > 0, (what + " " + k.name).c_str());
                    QVERIFY(k.mxuUtilisation >= 0 && k.mxuUtilisation <= 1 + 1e-9);
                    QVERIFY(k.vpuUtilisation >= 0 && k.vpuUtilisation <= 1 + 1e-9);
                    QVERIFY2(k.hbmUtilisation >= 0 && k.hbmUtilisation <= 1 + 1e-9,
                             (what + " " + k.name).c_str());
                    QVERIFY(k.kind != "unmodelled" || !k.note.empty());
                    QVERIFY(k.vmemPeakBytes <= static_cast<int64_t>(t.onChipMemoryBytes));
                    matmul = matmul || k.kind == "matmul";
                    sum += k.seconds * static_cast<double>(k.executions);
                }
                if (matmul) QVERIFY2(tracks.count("MXU") == 1, what.c_str());
                QVERIFY(relativeError(simulation.totalSeconds, sum) < 1e-9);
                QVERIFY(simulation.mxuUtilisation <= 1 + 1e-9 &&
                        simulation.hbmUtilisation <= 1 + 1e-9);
                qInfo(
                    "%-8s %-28s kernels %4zu  simulated %10.4f ms  analytical %10.4f ms  ratio "
                    "%.2f  MXU %5.1f%%  "
                    "VPU %5.1f%%  HBM %5.1f%%  padded %.3g -> %.3g MB",
                    name.c_str(), file.toStdString().c_str(), simulation.kernels.size(),
                    simulation.totalSeconds * 1e3, simulation.analyticalSeconds * 1e3,
                    simulation.totalSeconds / simulation.analyticalSeconds,
                    100 * simulation.mxuUtilisation, 100 * simulation.vpuUtilisation,
                    100 * simulation.hbmUtilisation,
                    static_cast<double>(simulation.logicalBytes) / 1e6,
                    static_cast<double>(simulation.paddedBytes) / 1e6);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTpuSimulator)
#include "tst_tpu_simulator.moc"
