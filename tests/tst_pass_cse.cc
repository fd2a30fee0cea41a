// CsePass: identical side-effect-free instructions merge; constants by text.
#include <QDir>
#include <QTest>

#include "compiler/passes/cse.h"
#include "tests/pass_check_util.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

class TestPassCse : public QObject {
    Q_OBJECT
private slots:
    void mergesChains() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a1 = f32[4] add(p0, p1), metadata={op_name="first"}
  a2 = f32[4] add(p0, p1), metadata={op_name="second"}
  e1 = f32[4] exponential(a1)
  e2 = f32[4] exponential(a2)
  ROOT r = f32[4] multiply(e1, e2)
})";
        auto pass = CsePass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %a1 = f32[4] add(f32[4] %p0, f32[4] %p1)
CHECK-NOT: %a2
CHECK: %e1 = f32[4] exponential(f32[4] %a1)
CHECK-NOT: %e2
CHECK: ROOT %r = f32[4] multiply(f32[4] %e1, f32[4] %e1))");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "cse"), 2);
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void differentAttributesOperandsOrLayoutsStay() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  a = f32[2,3] add(p0, p1)
  b = f32[2,3] add(p1, p0)
  t1 = f32[3,2]{1,0} transpose(a), dimensions={1,0}
  t2 = f32[3,2]{0,1} transpose(a), dimensions={1,0}
  s1 = f32[2,3] subtract(a, b)
  r1 = f32[6] reshape(a)
  c1 = f32[3,2] copy(t2)
  c2 = f32[3,2] add(t1, c1)
  ROOT t = (f32[2,3], f32[6], f32[3,2]) tuple(s1, r1, c2)
})";
        auto pass = CsePass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %a = {{.*}} add(f32[2,3] %p0, f32[2,3] %p1)
CHECK: %b = {{.*}} add(f32[2,3] %p1, f32[2,3] %p0)
CHECK: %t1 =
CHECK: %t2 =)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void sideEffectsNeverMerge() {
        const std::string hlo = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[4] rng(lo, hi), distribution=rng_uniform
  r2 = f32[4] rng(lo, hi), distribution=rng_uniform
  c1 = f32[4] custom-call(p0), custom_call_target="f", custom_call_has_side_effect=true
  c2 = f32[4] custom-call(p0), custom_call_target="f", custom_call_has_side_effect=true
  ar1 = f32[4] all-reduce(p0), to_apply=add
  ar2 = f32[4] all-reduce(p0), to_apply=add
  s1 = f32[4] add(r1, r2)
  s2 = f32[4] add(c1, c2)
  s3 = f32[4] add(ar1, ar2)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(s1, s2, s3)
})";
        auto pass = CsePass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %r1 = {{.*}} rng
CHECK: %r2 = {{.*}} rng
CHECK: %c1 = {{.*}} custom-call
CHECK: %c2 = {{.*}} custom-call
CHECK: %ar1 = {{.*}} all-reduce
CHECK: %ar2 = {{.*}} all-reduce)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void constantsMergeByText() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[3] parameter(0)
  c1 = f32[3] constant({1, 2, 3})
  c2 = f32[3] constant({1, 2, 3})
  c3 = f32[3] constant({1, 2, 4})
  a = f32[3] add(p0, c1)
  b = f32[3] add(p0, c2)
  d = f32[3] add(p0, c3)
  m = f32[3] multiply(a, b)
  ROOT r = f32[3] multiply(m, d)
})";
        auto pass = CsePass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %c1 = f32[3] constant({1, 2, 3})
CHECK-NOT: %c2
CHECK: %c3 = f32[3] constant({1, 2, 4})
CHECK: %a = f32[3] add
CHECK-NOT: %b =
CHECK: %m = f32[3] multiply(f32[3] %a, f32[3] %a))");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());

        auto keep = CsePass::create({{"merge_constants", "false"}});
        QVERIFY(keep.isOk());
        auto run2 = runPass(**keep, hlo);
        QVERIFY2(run2.isOk(), run2.status().toString().c_str());
        QVERIFY(!run2->changed);  // a and b differ by operand (c1 vs c2)
        why = fileCheck(run2->text, "CHECK: %c1 =\nCHECK: %c2 =");
        QVERIFY2(why.empty(), why.c_str());
    }

    void mergesInsideCalledComputationsAndRoot() {
        const std::string hlo = R"(HloModule m
body {
  p = f32[4] parameter(0)
  x = f32[4] negate(p)
  ROOT y = f32[4] negate(p)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  c = f32[4] call(p0), to_apply=body
  ROOT n = f32[4] negate(c)
})";
        auto pass = CsePass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: ROOT %x = f32[4] negate(f32[4] %p)
CHECK-NOT: %y =)");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void badOptions() {
        auto unknown = CsePass::create({{"merge_everything", "true"}});
        QVERIFY(!unknown.isOk());
        QVERIFY(unknown.status().toString().find("merge_everything") != std::string::npos);
        auto badValue = CsePass::create({{"merge_constants", "maybe"}});
        QVERIFY(!badValue.isOk());
        QVERIFY(badValue.status().toString().find("merge_constants") != std::string::npos);
    }

    void corpusSweep() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        SweepStats stats;
        std::string why = sweepCorpus(QStringLiteral("cse"), [] { return CsePass::create({}); },
                                      &stats);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("cse sweep: %d files, %d run, %d evaluated, %d changed", stats.files, stats.run,
              stats.evaluated, stats.changed);
        QVERIFY(stats.run > 0);
        const double ms = timeOnLargestModel([] { return CsePass::create({}); }, &why);
        QVERIFY2(ms >= 0, why.c_str());
        qInfo("cse on Mixtral: %.1f ms", ms);
    }
};

QTEST_GUILESS_MAIN(TestPassCse)
#include "tst_pass_cse.moc"
