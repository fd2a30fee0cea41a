// CostAnalysis: hand-computed flops and bytes, trip counts, and a corpus
// sweep (every corpus module gets finite, non-negative costs).
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTest>

#include <cmath>

#include "compiler/cost/cost_analysis.h"
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

bool finiteNonNegative(const InstructionCost& c) {
    for (double x : {c.flops, c.transcendentals, c.bytesRead, c.bytesWritten, c.outputBytes})
        if (!std::isfinite(x) || x < 0) return false;
    return true;
}

}  // namespace

class TestCostAnalysis : public QObject {
    Q_OBJECT
private slots:
    void elementwiseAdd() {
        auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[4,8] parameter(1)
  ROOT add = f32[4,8] add(a, b)
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "add"));
        QCOMPARE(c.flops, 32.0);
        QCOMPARE(c.transcendentals, 0.0);
        QCOMPARE(c.bytesRead, 256.0);
        QCOMPARE(c.bytesWritten, 128.0);
        QCOMPARE(c.outputBytes, 128.0);
        QCOMPARE(CostAnalysis::opClassOf(*find(*m, "add")), OpClass::kElementwise);
    }

    void sameOperandReadOnce() {
        auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[10] parameter(0)
  ROOT mul = f32[10] multiply(a, a)
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "mul"));
        QCOMPARE(c.flops, 10.0);
        QCOMPARE(c.bytesRead, 40.0);
    }

    void exponentialIsTranscendental() {
        auto m = parse(R"(HloModule m
ENTRY e {
  a = bf16[16] parameter(0)
  ROOT e = bf16[16] exponential(a)
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "e"));
        QCOMPARE(c.flops, 0.0);
        QCOMPARE(c.transcendentals, 16.0);
        QCOMPARE(c.bytesRead, 32.0);
        QCOMPARE(c.bytesWritten, 32.0);
        QCOMPARE(CostAnalysis::opClassOf(*find(*m, "e")), OpClass::kTranscendental);
    }

    void dot() {
        auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "d"));
        QCOMPARE(c.flops, 2.0 * 2 * 4 * 3);  // 48
        QCOMPARE(c.bytesRead, (6.0 + 12.0) * 4);
        QCOMPARE(c.bytesWritten, 8.0 * 4);
        QCOMPARE(CostAnalysis::opClassOf(*find(*m, "d")), OpClass::kDot);
    }

    void batchedDotWithGeneralDimensions() {
        // batch 5, M=2, K=3 (contracting lhs dim 1, rhs dim 2), N=4.
        auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[5,3,2] parameter(0)
  b = f32[5,4,3] parameter(1)
  ROOT d = f32[5,2,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={2}
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "d"));
        QCOMPARE(c.flops, 5.0 * 2 * 2 * 4 * 3);  // 240
        QCOMPARE(c.bytesRead, (30.0 + 60.0) * 4);
        QCOMPARE(c.bytesWritten, 40.0 * 4);
    }

    void convolution() {
        // NHWC input 1x5x5x2, kernel 3x3x2x4 (HWIO), valid: output 1x3x3x4.
        auto m = parse(R"(HloModule m
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "c"));
        QCOMPARE(c.flops, 2.0 * 36 * 9 * 2);  // 1296
        QCOMPARE(c.bytesRead, (50.0 + 72.0) * 4);
        QCOMPARE(c.bytesWritten, 36.0 * 4);
    }

    void groupedConvolution() {
        // 4 input features in 2 groups: the kernel holds 2 input features per group.
        auto m = parse(R"(HloModule m
ENTRY e {
  x = f32[1,4,4] parameter(0)
  k = f32[3,2,6] parameter(1)
  ROOT c = f32[1,2,6] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f, feature_group_count=2
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "c"));
        QCOMPARE(c.flops, 2.0 * 12 * 3 * 2);  // 144
    }

    void reduce() {
        auto m = parse(R"(HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(a, z), dimensions={1}, to_apply=sum
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "r"));
        QCOMPARE(c.flops, 128.0 - 8.0);
        QCOMPARE(c.bytesRead, 128.0 * 4 + 4);
        QCOMPARE(c.bytesWritten, 32.0);
        QCOMPARE(CostAnalysis::opClassOf(*find(*m, "r")), OpClass::kReduction);
    }

    void gatherReadsSlicesOnly() {
        // Gathers 3 rows of 8 from a 1000x8 table.
        auto m = parse(R"(HloModule m
ENTRY e {
  t = f32[1000,8] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,8] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::of(*find(*m, "g"));
        QCOMPARE(c.flops, 0.0);
        QCOMPARE(c.bytesRead, 24.0 * 4 + 3 * 4);
        QCOMPARE(c.bytesWritten, 96.0);
    }

    void dataMovementAndFreeOps() {
        auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  t = f32[8,4] transpose(a), dimensions={1,0}
  b = f32[32] bitcast(t)
  c = f32[2,32] broadcast(b), dimensions={1}
  s = f32[2,8] slice(c), slice={[0:2], [0:8]}
  k = f32[] constant(1)
  ROOT tuple = (f32[2,8], f32[]) tuple(s, k)
})");
        QVERIFY(m);
        InstructionCost t = CostAnalysis::of(*find(*m, "t"));
        QCOMPARE(t.flops, 0.0);
        QCOMPARE(t.bytesRead, 128.0);
        QCOMPARE(t.bytesWritten, 128.0);
        InstructionCost s = CostAnalysis::of(*find(*m, "s"));
        QCOMPARE(s.bytesRead, 64.0);  // only what it outputs
        for (std::string_view name : {"a", "b", "k", "tuple"}) {
            InstructionCost free = CostAnalysis::of(*find(*m, name));
            QCOMPARE(free.bytesAccessed(), 0.0);
            QVERIFY(CostAnalysis::isFree(*find(*m, name)));
        }
        QCOMPARE(CostAnalysis::opClassOf(*find(*m, "c")), OpClass::kDataMovement);
    }

    void subByteAndTupleSizes() {
        QCOMPARE(CostAnalysis::byteSize(Shape::makeArray(PrimitiveType::S4, {3})), 2.0);
        QCOMPARE(CostAnalysis::byteSize(Shape::makeArray(PrimitiveType::U1, {16})), 2.0);
        QCOMPARE(CostAnalysis::byteSize(Shape::makeTuple({Shape::makeArray(PrimitiveType::F32, {2}),
                                                          Shape::makeArray(PrimitiveType::BF16, {3})})),
                 14.0);
        QCOMPARE(CostAnalysis::byteSize(Shape::makeToken()), 0.0);
    }

    void fusionReadsReusedOperandOnce() {
        // p0 is used three times inside and passed twice; the fusion reads it once.
        auto m = parse(R"(HloModule m
fused {
  x = f32[100] parameter(0)
  y = f32[100] parameter(1)
  z = f32[100] parameter(2)
  m = f32[100] multiply(x, y)
  a = f32[100] add(m, x)
  e = f32[100] exponential(a)
  ROOT s = f32[100] subtract(e, z)
}
ENTRY e {
  p0 = f32[100] parameter(0)
  p1 = f32[100] parameter(1)
  ROOT f = f32[100] fusion(p0, p1, p0), kind=kLoop, calls=fused
})");
        QVERIFY(m);
        const HloInstruction* f = find(*m, "f");
        InstructionCost c = CostAnalysis::ofFusion(*f);
        QCOMPARE(c.flops, 300.0);
        QCOMPARE(c.transcendentals, 100.0);
        QCOMPARE(c.bytesRead, 800.0);  // p0 and p1 once each
        QCOMPARE(c.bytesWritten, 400.0);
        InstructionCost viaOf = CostAnalysis::of(*f);
        QCOMPARE(viaOf.bytesRead, c.bytesRead);
        QCOMPARE(CostAnalysis::opClassOf(*f), OpClass::kTranscendental);
    }

    void fusionSlicedParameterReadsSlices() {
        auto m = parse(R"(HloModule m
fused {
  x = f32[1000] parameter(0)
  s = f32[10] slice(x), slice={[0:10]}
  ROOT n = f32[10] negate(s)
}
ENTRY e {
  p0 = f32[1000] parameter(0)
  ROOT f = f32[10] fusion(p0), kind=kLoop, calls=fused
})");
        QVERIFY(m);
        InstructionCost c = CostAnalysis::ofFusion(*find(*m, "f"));
        QCOMPARE(c.bytesRead, 40.0);
        QCOMPARE(c.flops, 10.0);
    }

    void whileLoopTripCountTen() {
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
        const HloInstruction* loop = find(*m, "loop");
        QCOMPARE(CostAnalysis::whileTripCount(*loop), std::optional<int64_t>(10));
        // Per iteration: multiply 64 + counter add 1 + compare 1 = 66 flops.
        InstructionCost c = CostAnalysis::of(*loop);
        QCOMPARE(c.flops, 660.0);
        auto module = CostAnalysis::ofModule(*m);
        QVERIFY(module.isOk());
        QCOMPARE(module->total.flops, 660.0);
        QVERIFY(module->unknownTripCountLoops.empty());
    }

    void whileTripCountFromBackendConfigAndUnknown() {
        auto m = parse(R"(HloModule m
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[8] get-tuple-element(p), index=1
  z = f32[] constant(0)
  r = f32[] reduce(v, z), dimensions={0}, to_apply=sum
  ROOT lt = pred[] compare(r, z), direction=LT
}
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[8] get-tuple-element(p), index=1
  w = f32[8] negate(v)
  ROOT t = (s32[], f32[8]) tuple(i, w)
}
ENTRY e {
  x = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x)
  known = (s32[], f32[8]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"7"}}
  ROOT unknown = (s32[], f32[8]) while(known), condition=cond, body=body
})");
        QVERIFY(m);
        QCOMPARE(CostAnalysis::whileTripCount(*find(*m, "known")), std::optional<int64_t>(7));
        QVERIFY(!CostAnalysis::whileTripCount(*find(*m, "unknown")));
        auto module = CostAnalysis::ofModule(*m);
        QVERIFY(module.isOk());
        // Per iteration: negate 8 + reduce 7 + compare 1 = 16; 7 + 1 iterations.
        QCOMPARE(module->total.flops, 16.0 * 8);
        QCOMPARE(module->unknownTripCountLoops, std::vector<std::string>{"unknown"});
    }

    void countdownLoop() {
        auto m = parse(R"(HloModule m
cond {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  z = s32[] constant(0)
  ROOT gt = pred[] compare(z, i), direction=LT
}
body {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  two = s32[] constant(2)
  d = s32[] subtract(i, two)
  ROOT t = (s32[]) tuple(d)
}
ENTRY e {
  n = s32[] constant(9)
  init = (s32[]) tuple(n)
  ROOT loop = (s32[]) while(init), condition=cond, body=body
})");
        QVERIFY(m);
        // i = 9, 7, 5, 3, 1 run; -1 stops.
        QCOMPARE(CostAnalysis::whileTripCount(*find(*m, "loop")), std::optional<int64_t>(5));
    }

    void callConditionalCustomCallSortFft() {
        auto m = parse(R"(HloModule m
cheap {
  x = f32[16] parameter(0)
  ROOT n = f32[16] negate(x)
}
costly {
  x = f32[16] parameter(0)
  a = f32[16] multiply(x, x)
  ROOT b = f32[16] add(a, x)
}
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[16] parameter(1)
  c = f32[16] conditional(p, x, x), true_computation=cheap, false_computation=costly
  k = f32[16] call(x), to_apply=costly
  s = f32[16] sort(x), dimensions={0}, to_apply=less
  cc = f32[16] custom-call(x), custom_call_target="foo"
  z = c64[4,8] parameter(2)
  fft = c64[4,8] fft(z), fft_type=FFT, fft_length={8}
  ROOT t = (f32[16], f32[16], f32[16], f32[16], c64[4,8]) tuple(c, k, s, cc, fft)
})");
        QVERIFY(m);
        QCOMPARE(CostAnalysis::of(*find(*m, "c")).flops, 32.0);
        QCOMPARE(CostAnalysis::of(*find(*m, "k")).flops, 32.0);
        QCOMPARE(CostAnalysis::of(*find(*m, "s")).flops, 16.0 * 4);  // n log2 n, 1 compare
        QCOMPARE(CostAnalysis::of(*find(*m, "cc")).flops, 0.0);
        QCOMPARE(CostAnalysis::of(*find(*m, "cc")).bytesRead, 64.0);
        QCOMPARE(CostAnalysis::of(*find(*m, "fft")).flops, 4.0 * 5 * 8 * 3);
        auto module = CostAnalysis::ofModule(*m);
        QVERIFY(module.isOk());
        QCOMPARE(module->unknownCostInstructions, std::vector<std::string>{"cc"});
    }

    void noEntryIsAnError() {
        HloModule empty("empty");
        auto cost = CostAnalysis::ofModule(empty);
        QVERIFY(!cost.isOk());
        QVERIFY(cost.status().message().find("entry") != std::string::npos);
    }

    void corpusSweep() {
        const QString dir = corpusHloDir();
        if (!QFileInfo::exists(dir)) QSKIP("../shared/corpus is absent: the corpus sweep is skipped");
        QDirIterator it(dir, {QStringLiteral("*.hlo")}, QDir::Files, QDirIterator::Subdirectories);
        int parsed = 0, costed = 0, withFlops = 0;
        QElapsedTimer timer;
        timer.start();
        while (it.hasNext()) {
            std::string text;
            if (!readText(it.next(), &text)) continue;
            auto module = parseHloModule(text);
            if (!module.isOk()) continue;
            ++parsed;
            auto cost = CostAnalysis::ofModule(**module);
            QVERIFY2(cost.isOk(), qPrintable(it.filePath()));
            QVERIFY2(finiteNonNegative(cost->total), qPrintable(it.filePath()));
            ++costed;
            if (cost->total.flops > 0) ++withFlops;
        }
        qInfo("cost sweep: %d modules parsed, %d costed, %d with flops, %lld ms", parsed, costed,
              withFlops, static_cast<long long>(timer.elapsed()));
        QVERIFY(costed > 0);
    }
};

QTEST_GUILESS_MAIN(TestCostAnalysis)
#include "tst_cost_analysis.moc"
