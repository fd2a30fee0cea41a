// DcePass: dead instructions and computations go; side effects, parameters
// and what side effects depend on stay.
#include <QDir>
#include <QTest>

#include "compiler/passes/dce.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

std::unique_ptr<HloPass> makeDce() {
    auto pass = DcePass::create({});
    return pass.isOk() ? std::move(*pass) : nullptr;
}

std::string semantics(const std::string& hlo, const HloModule& after) {
    auto before = parseHloModule(hlo);
    if (!before.isOk()) return before.status().toString();
    bool evaluated = false;
    std::string why = sameResults(**before, after, 1, 1e-5, &evaluated);
    if (why.empty() && !evaluated) return "the module could not be evaluated";
    return why;
}

}  // namespace

class TestPassDce : public QObject {
    Q_OBJECT
private slots:
    void removesDeadInstructions() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  dead1 = f32[4] multiply(p0, p1)
  dead2 = f32[4] exponential(dead1)
  ROOT r = f32[4] add(p0, p1)
})";
        auto pass = makeDce();
        QVERIFY(pass);
        auto run = runPass(*pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: parameter(0)
CHECK: parameter(1)
CHECK-NOT: multiply
CHECK-NOT: exponential
CHECK: ROOT %r = f32[4] add)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(pass->rewrites().size(), size_t(2));
        QCOMPARE(pass->rewrites()[0].rule, std::string("dead-instruction"));
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void keepsParametersAndSideEffects() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  unused = f32[4] parameter(1)
  n = f32[4] negate(p0)
  cc = f32[4] custom-call(n), custom_call_target="log", custom_call_has_side_effect=true
  tok = token[] after-all()
  out = token[] outfeed(p0, tok)
  ROOT r = f32[4] add(p0, p0)
})";
        auto pass = makeDce();
        auto run = runPass(*pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %unused = f32[4] parameter(1)
CHECK: %n = f32[4] negate
CHECK: custom-call
CHECK: after-all
CHECK: outfeed)");
        QVERIFY2(why.empty(), why.c_str());
        QVERIFY(pass->rewrites().empty());
    }

    void keepsControlPredecessorsOfLiveInstructions() {
        const std::string hlo = R"(HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  c = f32[4] negate(p0)
  dead = f32[4] exponential(p0), control-predecessors={c}
  ROOT r = f32[4] add(p0, p0), control-predecessors={c}
})";
        auto pass = makeDce();
        auto run = runPass(*pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %c = f32[4] negate
CHECK-NOT: exponential
CHECK: ROOT %r)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void whileWithSideEffectingBodyStays() {
        const std::string hlo = R"(HloModule m
body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  tok = token[] after-all()
  o = token[] outfeed(v, tok)
  ROOT t = (s32[], f32[2]) tuple(i1, v)
}
cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  a = f32[2] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2]) tuple(z, a)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT r = f32[2] negate(a)
})";
        auto pass = makeDce();
        auto run = runPass(*pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: body
CHECK: cond
CHECK: while)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void removesDeadComputations() {
        const std::string hlo = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
orphan {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
fused {
  f = f32[4] parameter(0)
  ROOT g = f32[4] exponential(f)
}
dead_fused {
  f = f32[4] parameter(0)
  ROOT g = f32[4] negate(f)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  zero = f32[] constant(0)
  unused = f32[] reduce(p0, zero), dimensions={0}, to_apply=add
  dfus = f32[4] fusion(p0), kind=kLoop, calls=dead_fused
  ROOT fus = f32[4] fusion(p0), kind=kLoop, calls=fused
})";
        auto pass = makeDce();
        auto run = runPass(*pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK-NOT: %add
CHECK-NOT: orphan
CHECK-NOT: dead_fused
CHECK: %fused
CHECK: ENTRY
CHECK-NOT: reduce
CHECK: ROOT %fus)");
        QVERIFY2(why.empty(), why.c_str());
        int deadComputations = 0;
        for (const auto& event : pass->rewrites()) deadComputations += event.rule == "dead-computation";
        QCOMPARE(deadComputations, 3);
        QCOMPARE(run->module->computationCount(), int64_t(2));
        QVERIFY(run->module->findComputation("fused")->fusionInstruction() != nullptr);
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void badOptions() {
        auto pass = DcePass::create({{"aggressive", "true"}});
        QVERIFY(!pass.isOk());
        QVERIFY(pass.status().toString().find("aggressive") != std::string::npos);
    }

    void corpusSweep() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        SweepStats stats;
        std::string why = sweepCorpus(QStringLiteral("hlo_dce"), [] { return DcePass::create({}); },
                                      &stats);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("dce sweep: %d files, %d run, %d evaluated, %d changed", stats.files, stats.run,
              stats.evaluated, stats.changed);
        QVERIFY(stats.run > 0);
        why.clear();
        const double ms = timeOnLargestModel([] { return DcePass::create({}); }, &why);
        QVERIFY2(ms >= 0, why.c_str());
        qInfo("dce on Mixtral: %.1f ms", ms);
    }
};

QTEST_GUILESS_MAIN(TestPassDce)
#include "tst_pass_dce.moc"
