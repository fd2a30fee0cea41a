// Tests for LayoutAssignmentPass and the TPU tiling helpers.
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QTest>

#include "compiler/layout/layout_assignment.h"
#include "compiler/layout/tpu_tiling.h"
#include "pass_test_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

std::unique_ptr<HloPass> makePass(const char* target) {
    auto pass = LayoutAssignmentPass::create({{"target", target}});
    return pass.isOk() ? std::move(*pass) : nullptr;
}

Status verifyLayouts(const HloModule& module) {
    HloVerifierOptions options;
    options.allowMixedPrecision = true;
    options.layoutSensitive = true;
    return verifyModule(module, options);
}

int64_t padded(const char* shapeText) {
    auto shape = parseShape(shapeText);
    return shape.isOk() ? paddedSizeInBytes(*shape) : -1;
}

// Whether evaluating `module` stays cheap (every value under 4 MiB).
bool smallEnoughToEvaluate(const HloModule& module) {
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (logicalSizeInBytes(instruction->shape()) > (int64_t(4) << 20)) return false;
    return true;
}

bool hasBufferShapes(const HloModule& module) {
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->shape().isBuffer()) return true;
    return false;
}

int countRule(const HloPass& pass, const std::string& rule) {
    int n = 0;
    for (const RewriteEvent& event : pass.rewrites()) n += event.rule == rule;
    return n;
}

// Runs `target` on `hlo`, checks the layout-sensitive verifier, the results
// against the untouched module and that a second run changes nothing.
std::string checkRun(const char* target, const std::string& hlo, PassRun* out = nullptr,
                     HloPass** passOut = nullptr) {
    static std::unique_ptr<HloPass> keep;
    keep = makePass(target);
    if (!keep) return "create failed";
    auto run = runPass(*keep, hlo);
    if (!run.isOk()) return run.status().toString();
    if (Status s = verifyLayouts(*run->module); !s.isOk())
        return "layout-sensitive: " + s.toString();
    auto before = parseHloModule(hlo);
    if (!before.isOk()) return before.status().toString();
    if (std::string why = sameResults(**before, *run->module); !why.empty()) return why;
    auto again = makePass(target);
    auto second = again->run(*run->module);
    if (!second.isOk()) return second.status().toString();
    if (*second || !again->rewrites().empty()) return "second run changed the module";
    if (printModule(*run->module, HloPrintOptions::canonical()) != run->text)
        return "second run changed the text";
    if (passOut) *passOut = keep.get();
    if (out) *out = std::move(*run);
    return {};
}

}  // namespace

class TestLayoutAssignment : public QObject {
    Q_OBJECT
private slots:
    void paddedSizes() {
        QCOMPARE(padded("f32[3,5]{1,0:T(8,128)}"), int64_t(8 * 128 * 4));
        QCOMPARE(padded("bf16[3,5]{1,0:T(8,128)(2,1)}"), int64_t(8 * 128 * 2));
        QCOMPARE(padded("pred[3,5]{1,0:T(8,128)(4,1)}"), int64_t(8 * 128));
        QCOMPARE(padded("f32[3,5]{0,1:T(8,128)}"), int64_t(8 * 128 * 4));
        QCOMPARE(padded("f32[10,200]{1,0:T(8,128)}"), int64_t(16 * 256 * 4));
        QCOMPARE(padded("f32[10,200]{0,1:T(8,128)}"), int64_t(200 * 128 * 4));
        QCOMPARE(padded("f32[2,10,200]{2,1,0:T(8,128)}"), int64_t(2 * 16 * 256 * 4));
        QCOMPARE(padded("f32[3,5]{1,0}"), int64_t(60));
        QCOMPARE(padded("f32[300]{0:T(128)}"), int64_t(384 * 4));
        QCOMPARE(padded("f32[5]{0:T(2,128)}"), int64_t(2 * 128 * 4));  // leading 1 padded to 2
        // 100 -> 256, then (128) splits it into 2x128, (2,1) packs pairs: 256 elements.
        QCOMPARE(padded("bf16[100]{0:T(256)(128)(2,1)}"), int64_t(512));
        // A second tile that does not divide the first pads again: 8 rows -> 3 tiles of 3.
        QCOMPARE(padded("f32[8,128]{1,0:T(8,128)(3,1)}"), int64_t(9 * 128 * 4));
        QCOMPARE(padded("s4[3]{0:E(4)}"), int64_t(2));
        QCOMPARE(padded("(f32[3,5]{1,0:T(8,128)}, f32[2]{0})"), int64_t(4096 + 8));
        QCOMPARE(padded("f32[]"), int64_t(4));
        // Near the largest array the readers accept (2^62 bytes), padding to tiles goes beyond
        // what an int64_t holds: the size saturates at kMaxSizeInBytes.
        QCOMPARE(padded("s8[65536,65536,65536,128,16]{4,3,2,1,0}"), int64_t(1) << 59);
        // 2^62 padded elements of one byte: exactly the limit.
        QCOMPARE(padded("s8[65536,65536,65536,128,16]{4,3,2,1,0:T(8,128)(4,1)}"), int64_t(1) << 62);
        // 2^63 padded elements: saturated.
        QCOMPARE(padded("s8[65536,65536,65536,256,16]{4,3,2,1,0:T(8,128)(4,1)}"), kMaxSizeInBytes);
        QCOMPARE(padded("(s8[4611686018427387904]{0:T(1024)}, s8[4611686018427387904]{0:T(1024)})"),
                 kMaxSizeInBytes);
    }

    // Layout assignment for the TPU on shapes whose tiled sizes saturate (found by fuzzing the
    // pipeline: the byte count overflowed).
    void tpuHugeShapesSaturate() {
        const std::string hlo = R"(
HloModule m
ENTRY e {
  p.1 = s8[65536] parameter(0)
  p.2 = s8[65536] parameter(1)
  b.3 = s8[65536,65536,65536,128,16] broadcast(p.1), dimensions={0}
  b.4 = s8[65536,65536,65536,128,16] broadcast(p.2), dimensions={1}
  ROOT m.5 = s8[65536,65536,65536,128,16] multiply(b.3, b.4)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("tpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        const int64_t logical = 3 * (int64_t(1) << 59) + 2 * 65536;
        QCOMPARE(pass->statistics().at("logical_bytes"), logical);
        // Each product pads to 2^62 bytes: the total saturates.
        QCOMPARE(pass->statistics().at("padded_bytes"), kMaxSizeInBytes - logical);
    }

    void tpuTiles() {
        auto tiles = [](const char* text) {
            auto shape = parseShape(text);
            std::string s;
            if (shape.isOk())
                for (const Tile& t : tpuDefaultTiles(*shape)) s += t.toString();
            return s;
        };
        QCOMPARE(tiles("f32[3,5]"), std::string("(8,128)"));
        QCOMPARE(tiles("s32[2,3,4]"), std::string("(8,128)"));
        QCOMPARE(tiles("bf16[3,5]"), std::string("(8,128)(2,1)"));
        QCOMPARE(tiles("f16[3,5]"), std::string("(8,128)(2,1)"));
        QCOMPARE(tiles("s8[3,5]"), std::string("(8,128)(4,1)"));
        QCOMPARE(tiles("pred[3,5]"), std::string("(8,128)(4,1)"));
        QCOMPARE(tiles("f32[6]"), std::string("(128)"));
        QCOMPARE(tiles("s32[1024]"), std::string("(1024)"));
        QCOMPARE(tiles("bf16[100]"), std::string("(256)(128)(2,1)"));
        QCOMPARE(tiles("bf16[4096]"), std::string("(1024)(128)(2,1)"));
        QCOMPARE(tiles("pred[10]"), std::string("(512)(128)(4,1)"));
        QCOMPARE(tiles("f32[]"), std::string());
    }

    void cpuDefaultLayouts() {
        const std::string hlo = R"(
HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  t = f32[3,2] transpose(p), dimensions={1,0}
  ROOT n = f32[3,2] negate(t)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("cpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        QVERIFY(run.changed);
        QCOMPARE(countRule(*pass, "assign-layout"), 3);
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(0));
        why = fileCheck(run.text, R"(
CHECK: f32[2,3]{1,0} parameter(0)
CHECK: f32[3,2]{1,0} transpose(
CHECK: ROOT {{.*}} f32[3,2]{1,0} negate(
CHECK-NOT: copy(
)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void alreadyDefaultIsUnchanged() {
        auto pass = makePass("cpu");
        auto run = runPass(*pass, R"(
HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{1,0} negate(p)
})");
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        QVERIFY(pass->rewrites().empty());
    }

    void entryLayoutHonoured() {
        const std::string hlo = R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(p)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("cpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        QVERIFY(run.changed);
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(2));
        QCOMPARE(countRule(*pass, "insert-copy"), 2);
        why = fileCheck(run.text, R"(
CHECK: f32[2,3]{0,1} parameter(0)
CHECK: f32[2,3]{1,0} negate(f32[2,3]{1,0} %copy
CHECK: ROOT {{.*}} f32[2,3]{0,1} copy(f32[2,3]{1,0}
)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void entryLayoutTupleAndFill() {
        // Tuple result: the requirement is pushed to the tuple's operands;
        // a missing entry layout part is filled in.
        const std::string hlo = R"(
HloModule m, entry_computation_layout={(f32[4,8]{0,1}, f32[4,8])->(f32[4,8]{0,1}, f32[4,8]{1,0})}
ENTRY e {
  a = f32[4,8]{0,1} parameter(0)
  b = f32[4,8] parameter(1)
  s = f32[4,8] add(a, b)
  ROOT t = (f32[4,8], f32[4,8]) tuple(s, a)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("cpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run.text, R"(
CHECK: entry_computation_layout={(f32[4,8]{0,1}, f32[4,8]{1,0})->(f32[4,8]{0,1}, f32[4,8]{1,0})}
CHECK: ROOT {{.*}} = (f32[4,8]{0,1}, f32[4,8]{1,0}) tuple(
)");
        QVERIFY2(why.empty(), why.c_str());
        // a -> {1,0} for the add, add -> {0,1} for the output, a -> {1,0} for output 1.
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(2));
    }

    void gpuDotCopy() {
        const std::string hlo = R"(
HloModule m
ENTRY e {
  a = f32[4,2,8] parameter(0)
  b = f32[2,8,5] parameter(1)
  ROOT d = f32[2,4,5] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("gpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(1));
        QCOMPARE(countRule(*pass, "insert-copy"), 1);
        why = fileCheck(run.text, R"(
CHECK: f32[4,2,8]{2,0,1} copy(f32[4,2,8]{2,1,0}
CHECK: dot(f32[4,2,8]{2,0,1} {{.*}}, f32[2,8,5]{2,1,0} %b)
)");
        QVERIFY2(why.empty(), why.c_str());
        // cpu: row-major operands are fine as they are.
        why = checkRun("cpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(0));
    }

    void gpuDotColumnMajorAccepted() {
        // lhs [K,M] (contracting major) and rhs [N,K] are column-major GEMM
        // operands: cuBLAS takes them, no copy.
        const std::string hlo = R"(
HloModule m
ENTRY e {
  a = f32[8,4] parameter(0)
  b = f32[5,8] parameter(1)
  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("gpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(0));
    }

    void gpuConvolutionNhwc() {
        const std::string hlo = R"(
HloModule m
ENTRY e {
  x = f16[1,3,5,5] parameter(0)
  k = f16[4,3,3,3] parameter(1)
  c = f16[1,4,3,3] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01
  ROOT n = f16[1,4,3,3] negate(c)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("gpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        // Input NHWC {1,3,2,0}, kernel OHWI {1,3,2,0}, output NHWC, then a
        // copy back to row-major for the negate.
        why = fileCheck(run.text, R"(
CHECK: f16[1,3,5,5]{1,3,2,0} copy(
CHECK: f16[4,3,3,3]{1,3,2,0} copy(
CHECK: f16[1,4,3,3]{1,3,2,0} convolution(
CHECK: f16[1,4,3,3]{3,2,1,0} copy(
CHECK: negate(
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(3));
        // cpu: row-major everywhere, nothing to copy.
        why = checkRun("cpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(0));
    }

    void tpuTilesAndPadding() {
        const std::string hlo = R"(
HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = bf16[3,5] parameter(1)
  c = pred[3,5] parameter(2)
  d = f32[300] parameter(3)
  e = f32[2048] parameter(4)
  f = bf16[100] parameter(5)
  g = f32[] parameter(6)
  ROOT t = (f32[3,5], bf16[3,5], pred[3,5], f32[300], f32[2048], bf16[100], f32[]) tuple(a, b, c, d, e, f, g)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("tpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run.text, R"(
CHECK: f32[3,5]{1,0:T(8,128)} parameter(0)
CHECK: bf16[3,5]{1,0:T(8,128)(2,1)} parameter(1)
CHECK: pred[3,5]{1,0:T(8,128)(4,1)} parameter(2)
CHECK: f32[300]{0:T(128)} parameter(3)
CHECK: f32[2048]{0:T(1024)} parameter(4)
CHECK: bf16[100]{0:T(256)(128)(2,1)} parameter(5)
CHECK: f32[] parameter(6)
)");
        QVERIFY2(why.empty(), why.c_str());
        // Logical: 60+30+15+1200+8192+200+4; padded: 4096+2048+1024+1536+8192+512+4.
        QCOMPARE(pass->statistics().at("logical_bytes"), int64_t(9701));
        QCOMPARE(pass->statistics().at("padded_bytes"), int64_t(17412 - 9701));
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(0));
    }

    void tpuDegenerateDimensionsMajor() {
        // Size-1 dimensions go most major, so the tiles cover real
        // dimensions: a 1x1 convolution kernel stays 1.56 MiB instead of
        // 1.56 GiB; a column vector pads to 8 x 128, not 128 x 128.
        const std::string hlo = R"(
HloModule m
ENTRY e {
  w = f32[1280,320,1,1] parameter(0)
  v = f32[128,1] parameter(1)
  u = f32[1,1] parameter(2)
  n = f32[1,4,1,256] parameter(3)
  nn = f32[1,4,1,256] negate(n)
  ROOT t = (f32[1280,320,1,1], f32[128,1], f32[1,1], f32[1,4,1,256]) tuple(w, v, u, nn)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("tpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run.text, R"(
CHECK: f32[1280,320,1,1]{1,0,3,2:T(8,128)} parameter(0)
CHECK: f32[128,1]{0,1:T(8,128)} parameter(1)
CHECK: f32[1,1]{1,0:T(8,128)} parameter(2)
CHECK: f32[1,4,1,256]{3,1,2,0:T(8,128)} parameter(3)
CHECK: f32[1,4,1,256]{3,1,2,0:T(8,128)} negate(
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(0));
        QCOMPARE(padded("f32[1280,320,1,1]{1,0,3,2:T(8,128)}"), int64_t(1280) * 384 * 4);
        QCOMPARE(padded("f32[128,1]{0,1:T(8,128)}"), int64_t(8 * 128 * 4));
    }

    void tpuBitcastsBecomeReshapes() {
        // Row-major bitcasts that change dimensions are reshapes under
        // tiles; one that keeps them (a no-op) stays a bitcast.
        const std::string hlo = R"(
HloModule m
ENTRY e {
  p = bf16[10,11,12] parameter(0)
  b = bf16[11,10,12] bitcast(p)
  q = f32[4,8,128] parameter(1)
  k = f32[32,128] bitcast(q)
  n = f32[4,8,128] bitcast(q)
  ROOT t = (bf16[11,10,12], f32[32,128], f32[4,8,128]) tuple(b, k, n)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("tpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run.text, R"(
CHECK: %b = bf16[11,10,12]{2,1,0:T(8,128)(2,1)} reshape(
CHECK: %k = f32[32,128]{1,0:T(8,128)} reshape(
CHECK: %n = f32[4,8,128]{2,1,0:T(8,128)} bitcast(
CHECK: ROOT
)");
        QVERIFY2(why.empty(), why.c_str());
        bool rule = false;
        for (const RewriteEvent& event : pass->rewrites())
            rule = rule || event.rule == "bitcast-to-reshape";
        QVERIFY(rule);
    }

    void tpuEntryLayoutRetiled() {
        // An untiled entry layout is honoured exactly; the add needs the
        // tiled layout, so copies convert in and out.
        const std::string hlo = R"(
HloModule m, entry_computation_layout={(f32[16,256]{1,0})->f32[16,256]{1,0}}
ENTRY e {
  p = f32[16,256] parameter(0)
  ROOT s = f32[16,256] add(p, p)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("tpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run.text, R"(
CHECK: f32[16,256]{1,0} parameter(0)
CHECK: f32[16,256]{1,0:T(8,128)} copy(
CHECK: f32[16,256]{1,0:T(8,128)} add(
CHECK: ROOT {{.*}} f32[16,256]{1,0} copy(
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(2));
    }

    void calledComputationsAgree() {
        // While, fusion and reducer computations get default layouts that
        // match their callers; a transposed entry parameter is copied into
        // the loop.
        const std::string hlo = R"(
HloModule m, entry_computation_layout={(f32[4,4]{0,1})->f32[4,4]{1,0}}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  fp = f32[4,4] parameter(0)
  ROOT fe = f32[4,4] exponential(fp)
}
cond {
  cp = (s32[], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  bp = (s32[], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v = f32[4,4] get-tuple-element(bp), index=1
  f = f32[4,4] fusion(v), kind=kLoop, calls=fused
  zero = f32[] constant(0)
  r = f32[4] reduce(f, zero), dimensions={1}, to_apply=add
  b = f32[4,4] broadcast(r), dimensions={0}
  ROOT t = (s32[], f32[4,4]) tuple(i2, b)
}
ENTRY e {
  p = f32[4,4]{0,1} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4,4]) tuple(z, p)
  w = (s32[], f32[4,4]) while(init), condition=cond, body=body
  ROOT out = f32[4,4] get-tuple-element(w), index=1
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("tpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(2));  // into the loop, and out
        why = checkRun("cpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->statistics().at("copies_inserted"), int64_t(1));
    }

    void bitcastKeepsItsLayouts() {
        // A transposing bitcast stays a valid physical bitcast: its layouts
        // are pinned and its operand keeps its physical order.
        const std::string hlo = R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  n = f32[2,3]{0,1} negate(p)
  b = f32[3,2]{1,0} bitcast(n)
  ROOT r = f32[3,2]{1,0} negate(b)
})";
        PassRun run;
        HloPass* pass = nullptr;
        std::string why = checkRun("cpu", hlo, &run, &pass);
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run.text, R"(
CHECK: f32[2,3]{1,0} negate(
CHECK: f32[2,3]{0,1} copy(
CHECK: f32[3,2]{1,0} bitcast(f32[2,3]{0,1}
)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void badOptions() {
        auto bad = LayoutAssignmentPass::create({{"target", "npu"}});
        QVERIFY(!bad.isOk());
        QVERIFY(bad.status().toString().find("npu") != std::string::npos);
        auto unknown = LayoutAssignmentPass::create({{"targte", "cpu"}});
        QVERIFY(!unknown.isOk());
        auto fine = LayoutAssignmentPass::create({});
        QVERIFY(fine.isOk());
        QCOMPARE(static_cast<LayoutAssignmentPass&>(**fine).target(), LayoutTarget::kCpu);
    }

    void corpusLayoutAssignment() {
        const QString dir = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/valid");
        if (!QDir(dir).exists()) QSKIP("corpus not available");
        int run = 0, evaluated = 0, changed = 0;
        QDir root(dir);
        for (const QString& sub : root.entryList({"layout_assignment*"}, QDir::Dirs)) {
            QDirIterator it(root.filePath(sub), {"*.hlo"}, QDir::Files);
            while (it.hasNext()) {
                const QString path = it.next();
                QFile file(path);
                QVERIFY(file.open(QIODevice::ReadOnly));
                const std::string text = file.readAll().toStdString();
                auto original = parseHloModule(text);
                if (!original.isOk() || !verifyModule(**original,
                                                      [] {
                                                          HloVerifierOptions o;
                                                          o.allowMixedPrecision = true;
                                                          return o;
                                                      }())
                                             .isOk())
                    continue;
                for (const char* target : {"cpu", "gpu", "tpu"}) {
                    auto module = parseHloModule(text);
                    QVERIFY(module.isOk());
                    auto pass = makePass(target);
                    auto result = pass->run(**module);
                    QVERIFY2(result.isOk(),
                             (path.toStdString() + ": " + result.status().toString()).c_str());
                    // Known limitation: buffer shapes b(...) keep their layouts as
                    // written, which need not satisfy the layout-sensitive checks.
                    HloVerifierOptions plain;
                    plain.allowMixedPrecision = true;
                    Status verified = hasBufferShapes(**module) ? verifyModule(**module, plain)
                                                                : verifyLayouts(**module);
                    QVERIFY2(
                        verified.isOk(),
                        (path.toStdString() + " " + target + ": " + verified.toString()).c_str());
                    ++run;
                    changed += *result;
                    bool didEvaluate = false;
                    std::string why;
                    if (smallEnoughToEvaluate(**original))
                        why = sameResults(**original, **module, 1, 1e-5, &didEvaluate);
                    QVERIFY2(why.empty(), (path.toStdString() + " " + target + ": " + why).c_str());
                    evaluated += didEvaluate;
                    auto again = makePass(target);
                    auto second = again->run(**module);
                    QVERIFY(second.isOk());
                    QVERIFY2(!*second,
                             (path.toStdString() + " " + target + ": second run changed").c_str());
                }
            }
        }
        qInfo("layout_assignment corpus: %d runs, %d evaluated, %d changed", run, evaluated,
              changed);
        QVERIFY(run > 0);
    }

    void corpusModelsTpu() {
        const QString dir = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models");
        if (!QDir(dir).exists()) QSKIP("corpus not available");
        int run = 0;
        qint64 totalMs = 0, worstMs = 0;
        std::string worst;
        QDirIterator it(dir, {"*.hlo"}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            auto module = parseHloModule(file.readAll().toStdString());
            if (!module.isOk()) continue;
            auto pass = makePass("tpu");
            QElapsedTimer timer;
            timer.start();
            auto result = pass->run(**module);
            const qint64 ms = timer.elapsed();
            QVERIFY2(result.isOk(),
                     (path.toStdString() + ": " + result.status().toString()).c_str());
            Status verified = verifyLayouts(**module);
            QVERIFY2(verified.isOk(), (path.toStdString() + ": " + verified.toString()).c_str());
            ++run;
            totalMs += ms;
            if (ms > worstMs) {
                worstMs = ms;
                worst = path.toStdString();
            }
        }
        qInfo("models (tpu): %d modules, %lld ms total, slowest %lld ms (%s)", run,
              static_cast<long long>(totalMs), static_cast<long long>(worstMs), worst.c_str());
        QVERIFY(run > 0);
    }
};

QTEST_GUILESS_MAIN(TestLayoutAssignment)
#include "tst_pass_layout_assignment.moc"
