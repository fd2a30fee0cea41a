// CallInlinerPass: calls replaced by their callees' instructions.
#include <QDir>
#include <QTest>

#include "compiler/passes/call_inliner.h"
#include "tests/pass_check_util.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

class TestPassCallInliner : public QObject {
    Q_OBJECT
private slots:
    void inlinesNestedAndRepeatedCalls() {
        const std::string hlo = R"(HloModule m
inner {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
outer {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] add(a, b)
  ROOT c = f32[4] call(s), to_apply=inner
}
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c1 = f32[4] call(p0, p1), to_apply=outer
  c2 = f32[4] call(p1, p0), to_apply=outer
  ROOT r = f32[4] multiply(c1, c2)
})";
        auto pass = CallInlinerPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        // Inlined instructions are appended to the caller (after its root).
        std::string why = fileCheck(run->text, R"(
CHECK-NOT: inner
CHECK-NOT: outer
CHECK: ENTRY
CHECK-NOT: call(
CHECK: ROOT %r = f32[4] multiply(f32[4] %n{{[.0-9]*}}, f32[4] %n{{[.0-9]*}})
CHECK: %s{{[.0-9]*}} = f32[4] add(f32[4] %p0, f32[4] %p1)
CHECK: negate
CHECK: add(f32[4] %p1, f32[4] %p0)
CHECK: negate)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "inline-call"), 3);
        QCOMPARE(run->module->computationCount(), int64_t(1));
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void rootCallAndParameterPassThrough() {
        const std::string hlo = R"(HloModule m
pick {
  a = f32[4] parameter(0)
  b = s32[] parameter(1)
  ROOT t = (s32[], f32[4]) tuple(b, a)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = s32[] parameter(1)
  ROOT c = (s32[], f32[4]) call(p0, p1), to_apply=pick
})";
        auto pass = CallInlinerPass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: ENTRY
CHECK: ROOT %{{[a-z0-9.]+}} = (s32[], f32[4]) tuple(s32[] %p1, f32[4] %p0))");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void calleeStillUsedElsewhereStays() {
        // `add` is both called and used as a reducer: the call is inlined,
        // the computation stays. No call at all: nothing changes.
        const std::string hlo = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p0, z), dimensions={0}, to_apply=add
  ROOT c = f32[] call(r, r), to_apply=add
})";
        auto pass = CallInlinerPass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %add
CHECK: ENTRY
CHECK: reduce
CHECK-NOT: call(
CHECK: ROOT {{.*}} add(f32[] %r, f32[] %r))");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());

        auto again = runPass(**pass, run->text);
        QVERIFY2(again.isOk(), again.status().toString().c_str());
        QVERIFY(!again->changed);
    }

    void controlEdgesLeftAlone() {
        const std::string hlo = R"(HloModule m
f {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  x = f32[4] exponential(p0)
  ROOT c = f32[4] call(p0), to_apply=f, control-predecessors={x}
})";
        auto pass = CallInlinerPass::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
    }

    void badOptions() {
        auto pass = CallInlinerPass::create({{"single_call_site", "true"}});
        QVERIFY(!pass.isOk());
        QVERIFY(pass.status().toString().find("single_call_site") != std::string::npos);
    }

    void corpusSweep() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        SweepStats stats;
        std::string why = sweepCorpus(QStringLiteral("call_inliner"),
                                      [] { return CallInlinerPass::create({}); }, &stats);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("call-inliner sweep: %d files, %d run, %d evaluated, %d changed", stats.files,
              stats.run, stats.evaluated, stats.changed);
        QVERIFY(stats.run > 0);
        const double ms = timeOnLargestModel([] { return CallInlinerPass::create({}); }, &why);
        QVERIFY2(ms >= 0, why.c_str());
        qInfo("call-inliner on Mixtral: %.1f ms", ms);
    }
};

QTEST_GUILESS_MAIN(TestPassCallInliner)
#include "tst_pass_call_inliner.moc"
