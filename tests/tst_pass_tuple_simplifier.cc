// TupleSimplifierPass: gte-of-tuple and tuple-of-gtes.
#include <QDir>
#include <QTest>

#include "compiler/passes/tuple_simplifier.h"
#include "tests/pass_check_util.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

class TestPassTupleSimplifier : public QObject {
    Q_OBJECT
private slots:
    void gteOfTuple() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = s32[2] parameter(1)
  t = (f32[4], s32[2]) tuple(p0, p1)
  inner = ((f32[4], s32[2]), f32[4]) tuple(t, p0)
  g0 = (f32[4], s32[2]) get-tuple-element(inner), index=0
  g1 = s32[2] get-tuple-element(g0), index=1
  g2 = f32[4] get-tuple-element(t), index=0
  n = f32[4] negate(g2)
  ROOT r = (s32[2], f32[4]) tuple(g1, n)
})";
        auto pass = TupleSimplifierPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK-NOT: get-tuple-element
CHECK: %n = f32[4] negate(f32[4] %p0)
CHECK: ROOT %r = (s32[2], f32[4]) tuple(s32[2] %p1, f32[4] %n))");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "gte-of-tuple"), 3);
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void tupleOfGtes() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p = (f32[4], s32[2]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = s32[2] get-tuple-element(p), index=1
  t = (f32[4], s32[2]) tuple(a, b)
  ROOT r = ((f32[4], s32[2]), f32[4]) tuple(t, a)
})";
        auto pass = TupleSimplifierPass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK-NOT: %t =
CHECK: ROOT %r = ((f32[4], s32[2]), f32[4]) tuple((f32[4], s32[2]) %p, f32[4] %a))");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "tuple-of-gtes"), 1);
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void doesNotFire() {
        // Wrong order, a subset, two sources, and a layout change at the root.
        const std::string hlo = R"(HloModule m
ENTRY e {
  p = (f32[4], f32[4]) parameter(0)
  q = (f32[4], f32[4]) parameter(1)
  a = f32[4] get-tuple-element(p), index=0
  b = f32[4] get-tuple-element(p), index=1
  c = f32[4] get-tuple-element(q), index=1
  swapped = (f32[4], f32[4]) tuple(b, a)
  mixed = (f32[4], f32[4]) tuple(a, c)
  ROOT r = ((f32[4], f32[4]), (f32[4], f32[4])) tuple(swapped, mixed)
})";
        auto pass = TupleSimplifierPass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);

        const std::string layouts = R"(HloModule m
ENTRY e {
  p0 = f32[2,3]{1,0} parameter(0)
  t = (f32[2,3]{1,0}) tuple(p0)
  ROOT g = f32[2,3]{0,1} get-tuple-element(t), index=0
})";
        auto run2 = runPass(**pass, layouts);
        QVERIFY2(!run2.isOk() || !run2->changed, "a layout-changing replacement was made");
    }

    void badOptions() {
        auto pass = TupleSimplifierPass::create({{"depth", "2"}});
        QVERIFY(!pass.isOk());
        QVERIFY(pass.status().toString().find("depth") != std::string::npos);
    }

    void corpusSweep() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        SweepStats stats;
        std::string why = sweepCorpus(QStringLiteral("tuple_simplifier"),
                                      [] { return TupleSimplifierPass::create({}); }, &stats);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("tuple-simplifier sweep: %d files, %d run, %d evaluated, %d changed", stats.files,
              stats.run, stats.evaluated, stats.changed);
        QVERIFY(stats.run > 0);
        const double ms =
            timeOnLargestModel([] { return TupleSimplifierPass::create({}); }, &why);
        QVERIFY2(ms >= 0, why.c_str());
        qInfo("tuple-simplifier on Mixtral: %.1f ms", ms);
    }
};

QTEST_GUILESS_MAIN(TestPassTupleSimplifier)
#include "tst_pass_tuple_simplifier.moc"
