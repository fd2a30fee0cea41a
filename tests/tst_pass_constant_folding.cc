// ConstantFoldingPass: constant expressions become constants.
#include <QDir>
#include <QTest>

#include "compiler/passes/constant_folding.h"
#include "tests/pass_check_util.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

class TestPassConstantFolding : public QObject {
    Q_OBJECT
private slots:
    void foldsChains() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[3] parameter(0)
  c1 = f32[3] constant({1, 2, 3})
  c2 = f32[3] constant({0.5, 0.25, 4})
  a = f32[3] add(c1, c2)
  m = f32[3] multiply(a, a)
  ROOT r = f32[3] add(p0, m)
})";
        auto pass = ConstantFoldingPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why;
        // The folded constant is appended after the root: check it separately.
        why = fileCheck(run->text, "CHECK: f32[3] constant({2.25, 5.0625, 49})");
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run->text, "CHECK-NOT: add(f32[3] %c1\nCHECK-NOT: multiply");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "fold-constant"), 2);
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void foldsReduceAndTypes() {
        const std::string hlo = R"(HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  c = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  z = s32[] constant(0)
  r = s32[2] reduce(c, z), dimensions={1}, to_apply=add
  f = bf16[2] convert(r)
  cmp = pred[2] compare(r, r), direction=EQ
  ROOT t = (bf16[2], pred[2]) tuple(f, cmp)
})";
        auto pass = ConstantFoldingPass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, "CHECK: bf16[2] constant({6, 15})");
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run->text, "CHECK: pred[2] constant({1, 1})");
        QVERIFY2(why.empty(), why.c_str());
        why = fileCheck(run->text, "CHECK-NOT: reduce(\nCHECK-NOT: convert(\nCHECK-NOT: compare(");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
        // The printed constants re-parse (semantics() reparses the print).
    }

    void doesNotFold() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  rng = f32[4] rng(lo, hi), distribution=rng_uniform
  cc = f32[] custom-call(lo), custom_call_target="f"
  big = f32[1000] broadcast(lo), dimensions={}
  io = s32[100] iota(), iota_dimension=0
  pid = u32[] partition-id()
  x = f32[] add(p0, hi)
  ROOT t = (f32[4], f32[], f32[1000], s32[100], u32[], f32[]) tuple(rng, cc, big, io, pid, x)
})";
        auto pass = ConstantFoldingPass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: rng(
CHECK: custom-call(
CHECK: broadcast(
CHECK: iota(
CHECK: partition-id(
CHECK: %x = f32[] add)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void maxElementsOption() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  c = f32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
  ROOT n = f32[8] negate(c)
})";
        auto small = ConstantFoldingPass::create({{"max_elements", "4"}});
        QVERIFY(small.isOk());
        auto run = runPass(**small, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        auto pass = ConstantFoldingPass::create({});
        run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why =
            fileCheck(run->text, "CHECK: ROOT %constant{{[.0-9]*}} = f32[8] constant({-1, -2, -3");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void skipsFusionComputations() {
        const std::string hlo = R"(HloModule m
fused {
  p = f32[2] parameter(0)
  c = f32[2] constant({1, 2})
  n = f32[2] negate(c)
  ROOT a = f32[2] add(p, n)
}
ENTRY e {
  p0 = f32[2] parameter(0)
  ROOT f = f32[2] fusion(p0), kind=kLoop, calls=fused
})";
        auto pass = ConstantFoldingPass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
    }

    void badOptions() {
        auto unknown = ConstantFoldingPass::create({{"max_size", "3"}});
        QVERIFY(!unknown.isOk());
        QVERIFY(unknown.status().toString().find("max_size") != std::string::npos);
        auto notInt = ConstantFoldingPass::create({{"max_elements", "lots"}});
        QVERIFY(!notInt.isOk());
        auto negative = ConstantFoldingPass::create({{"max_elements", "-1"}});
        QVERIFY(!negative.isOk());
        QVERIFY(negative.status().toString().find(">= 0") != std::string::npos);
    }

    void corpusSweep() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        SweepStats stats;
        std::string why = sweepCorpus(QStringLiteral("constant_folding"),
                                      [] { return ConstantFoldingPass::create({}); }, &stats);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("constant-folding sweep: %d files, %d run, %d evaluated, %d changed", stats.files,
              stats.run, stats.evaluated, stats.changed);
        QVERIFY(stats.run > 0);
        const double ms =
            timeOnLargestModel([] { return ConstantFoldingPass::create({}); }, &why);
        QVERIFY2(ms >= 0, why.c_str());
        qInfo("constant-folding on Mixtral: %.1f ms", ms);
    }
};

QTEST_GUILESS_MAIN(TestPassConstantFolding)
#include "tst_pass_constant_folding.moc"
