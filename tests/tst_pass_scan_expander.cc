// ScanExpanderPass: every scan becomes the while loop that computes it
// (forward and reverse, several inputs and carries, along any dimension,
// single-value results, no inputs, a scan inside another's body and inside
// a while body, inside a fusion, which becomes a call), the module verifies and computes what the
// interpreter's own scan computes; the bodies are removed once copied; second in the gpu and
// tpu pipelines (the CPU backend runs scans through the interpreter).
#include <QTest>

#include "compiler/passes/scan_expander.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "tests/pass_check_util.h"
#include "tests/pass_test_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

// Two inputs scanned along the middle dimension, backwards; two carries
// (a running sum of the rows and a step counter).
const char* kModule = R"(HloModule m
step {
  x = f32[2,5] parameter(0)
  y = s32[2,5] parameter(1)
  acc = f32[2,5] parameter(2)
  n = s32[] parameter(3)
  f = f32[2,5] convert(y)
  s = f32[2,5] add(x, f)
  a = f32[2,5] add(acc, s)
  one = s32[] constant(1)
  m = s32[] add(n, one)
  nf = f32[] convert(n)
  nb = f32[2,5] broadcast(nf), dimensions={}
  o = f32[2,5] multiply(a, nb)
  ROOT t = (f32[2,5], f32[2,5], s32[]) tuple(o, a, m)
}
ENTRY e {
  x = f32[2,3,5] parameter(0)
  y = s32[2,3,5] parameter(1)
  z = f32[] constant(0)
  acc = f32[2,5] broadcast(z), dimensions={}
  n = s32[] constant(0)
  ROOT s = (f32[2,3,5], f32[2,5], s32[]) scan(x, y, acc, n), dimensions={1}, num_carries=2, is_reverse=true, to_apply=step
})";

}  // namespace

class TestPassScanExpander : public QObject {
    Q_OBJECT
private slots:
    void scanBecomesAWhileLoop() {
        auto pass = ScanExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, kModule);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK-NOT: %step
CHECK: %s.condition{{[.0-9]*}} (
CHECK: compare(s32[] %{{.*}}, s32[] %s.constant{{[.0-9]*}}), direction=LT
CHECK: %s.body{{[.0-9]*}} (
CHECK: subtract(s32[] %s.constant{{[.0-9]*}}, s32[] %s.element{{[.0-9]*}})
CHECK: f32[2,1,5] dynamic-slice(f32[2,3,5] %s.element{{[.0-9]*}}, s32[] %s.constant{{[.0-9]*}}, s32[] %s.at{{[.0-9]*}}, s32[] %s.constant{{[.0-9]*}}), dynamic_slice_sizes={2,1,5}
CHECK: f32[2,5] reshape(
CHECK: s32[2,1,5] dynamic-slice(
CHECK: f32[2,5] add(
CHECK: f32[2,1,5] reshape(
CHECK: f32[2,3,5] dynamic-update-slice(
CHECK: ENTRY
CHECK-NOT: scan(
CHECK: while(
CHECK-SAME: condition=%s.condition{{[.0-9]*}}, body=%s.body
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "expand-scan"), 1);
        QCOMPARE((*pass)->statistics().at("expanded"), int64_t(1));
        why = semantics(kModule, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void everyFormComputesTheSame_data() {
        QTest::addColumn<QString>("hlo");
        QTest::newRow("one carry, no outputs") << QStringLiteral(R"(HloModule m
f {
  x = f32[4] parameter(0)
  c = f32[4] parameter(1)
  ROOT m = f32[4] maximum(c, x)
}
ENTRY e {
  x = f32[6,4] parameter(0)
  i = f32[4] parameter(1)
  ROOT s = f32[4] scan(x, i), dimensions={0}, num_carries=1, to_apply=f
})");
        QTest::newRow("no carries, one output, last dimension") << QStringLiteral(R"(HloModule m
f {
  x = f32[3] parameter(0)
  ROOT e = f32[3] exponential(x)
}
ENTRY e {
  x = f32[3,7] parameter(0)
  ROOT s = f32[3,7] scan(x), dimensions={1}, num_carries=0, to_apply=f
})");
        QTest::newRow("no inputs") << QStringLiteral(R"(HloModule m
f {
  c = f32[] parameter(0)
  h = f32[] constant(0.5)
  n = f32[] multiply(c, h)
  ROOT t = (f32[], f32[]) tuple(c, n)
}
ENTRY e {
  i = f32[] parameter(0)
  ROOT s = (f32[5], f32[]) scan(i), dimensions={0}, num_carries=1, to_apply=f
})");
        QTest::newRow("a scan inside another's body") << QStringLiteral(R"(HloModule m
inner {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  a = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(a, a)
}
outer {
  row = f32[4] parameter(0)
  c = f32[] parameter(1)
  z = f32[] constant(0)
  s = (f32[4], f32[]) scan(row, z), dimensions={0}, num_carries=1, to_apply=inner
  prefix = f32[4] get-tuple-element(s), index=0
  total = f32[] get-tuple-element(s), index=1
  n = f32[] add(c, total)
  cb = f32[4] broadcast(c), dimensions={}
  po = f32[4] add(prefix, cb)
  ROOT t = (f32[4], f32[]) tuple(po, n)
}
ENTRY e {
  x = f32[3,4] parameter(0)
  i = f32[] constant(1)
  ROOT s = (f32[3,4], f32[]) scan(x, i), dimensions={0}, num_carries=1, is_reverse=true, to_apply=outer
})");
        QTest::newRow("inside a while body, a body used twice") << QStringLiteral(R"(HloModule m
add {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  a = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(a, a)
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  z = f32[] constant(0)
  sc = (f32[8], f32[]) scan(x, z), dimensions={0}, num_carries=1, to_apply=add
  p = f32[8] get-tuple-element(sc), index=0
  h = f32[] constant(0.25)
  hb = f32[8] broadcast(h), dimensions={}
  q = f32[8] multiply(p, hb)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(j, q)
}
ENTRY e {
  x = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x)
  loop = (s32[], f32[8]) while(init), condition=cond, body=body
  y = f32[8] get-tuple-element(loop), index=1
  z = f32[] constant(0)
  ROOT r = (f32[8], f32[]) scan(y, z), dimensions={0}, num_carries=1, is_reverse=true, to_apply=add
})");
    }

    void everyFormComputesTheSame() {
        QFETCH(QString, hlo);
        auto pass = ScanExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, hlo.toStdString());
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        QCOMPARE(countOf(run->text, " scan("), 0);
        QVERIFY(ruleCount(**pass, "expand-scan") >= 1);
        // The scans' bodies were copied into their loops and are gone.
        QCOMPARE(countOf(run->text, "to_apply=add\n"), 0);
        QCOMPARE(countOf(run->text, "%inner "), 0);
        const std::string why = semantics(hlo.toStdString(), *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void scanInsideAFusionIsUnfused() {
        // A loop cannot run inside a kernel: the fusion becomes a call of its
        // computation (the call inliner's to inline), the scan a loop in it.
        const std::string hlo = R"(HloModule m
add {
  c = f32[] parameter(0)
  x = f32[] parameter(1)
  a = f32[] add(c, x)
  ROOT t = (f32[], f32[]) tuple(a, a)
}
fused {
  p0 = f32[64] parameter(0)
  p1 = f32[] parameter(1)
  s = (f32[64], f32[]) scan(p0, p1), dimensions={0}, num_carries=1, to_apply=add
  ROOT g = f32[64] get-tuple-element(s), index=0
}
ENTRY e {
  x = f32[64] parameter(0)
  i = f32[] parameter(1)
  f = f32[64] fusion(x, i), kind=kCustom, calls=fused
  ROOT n = f32[64] negate(f)
})";
        auto pass = ScanExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %fused (
CHECK: while(
CHECK: ENTRY
CHECK-NOT: fusion(
CHECK: %f.unfused{{[.0-9]*}} = f32[64] call(f32[64] %x, f32[] %i), to_apply=%fused
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE((*pass)->statistics().at("unfused"), int64_t(1));
        QCOMPARE((*pass)->statistics().at("expanded"), int64_t(1));
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void nothingToDo() {
        auto pass = ScanExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, "HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}\n");
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        QCOMPARE(ruleCount(**pass, "expand-scan"), 0);
    }

    // Every backend runs a scan as its loop (the CPU backend updates its stacked outputs in
    // place: tst_cpu_backend loopStateUpdatedInPlace).
    void secondInEveryPipeline() {
        for (const char* target : {"cpu", "gpu", "tpu", "h100"}) {
            auto pipeline = targetPipeline(target);
            QVERIFY2(pipeline.isOk(), target);
            QVERIFY(pipeline->steps.size() > 2);
            QCOMPARE(pipeline->steps[1].pass, std::string("scan-expander"));
        }
    }
};

QTEST_GUILESS_MAIN(TestPassScanExpander)
#include "tst_pass_scan_expander.moc"
