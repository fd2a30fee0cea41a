// WhileLoopInvariantCodeMotionPass: invariant code leaves while bodies.
#include <QDir>
#include <QTest>

#include "compiler/passes/while_loop_invariant_code_motion.h"
#include "tests/pass_check_util.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

using Licm = WhileLoopInvariantCodeMotionPass;

// i counts to 5; x (element 1) is invariant, acc (element 2) accumulates
// exp(x) * x each iteration.
const char* kSimple = R"(HloModule m
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  acc = f32[4] get-tuple-element(p), index=2
  e = f32[4] exponential(x)
  m = f32[4] multiply(e, x)
  a = f32[4] add(acc, m)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, x, a)
}
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x0 = f32[4] parameter(0)
  z = s32[] constant(0)
  zeros = f32[4] constant({0, 0, 0, 0})
  init = (s32[], f32[4], f32[4]) tuple(z, x0, zeros)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
})";

}  // namespace

class TestPassLicm : public QObject {
    Q_OBJECT
private slots:
    void hoistsInvariantChain() {
        auto pass = Licm::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, kSimple);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %body
CHECK: parameter(0)
CHECK-NOT: exponential
CHECK-NOT: multiply
CHECK: ROOT %t = (s32[], f32[4], f32[4], f32[4]) tuple
CHECK: %cond
CHECK: (s32[], f32[4], f32[4], f32[4]) parameter(0)
CHECK: ENTRY
CHECK: while(
CHECK: exponential(f32[4] %x0)
CHECK: multiply
CHECK: ROOT {{.*}} = (s32[], f32[4], f32[4]) tuple)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "hoist-invariant"), 1);
        why = semantics(kSimple, *run->module);
        QVERIFY2(why.empty(), why.c_str());
        // Nothing left to hoist.
        auto again = Licm::create({});
        auto second = runPass(**again, run->text);
        QVERIFY2(second.isOk(), second.status().toString().c_str());
        QVERIFY(!second->changed);
    }

    void variantAndSideEffectsStay() {
        const std::string hlo = R"(HloModule m
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  e = f32[4] exponential(x)
  tok = token[] after-all()
  o = token[] outfeed(e, tok)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  cc = f32[4] custom-call(x), custom_call_target="f", custom_call_has_side_effect=true
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[4] add(x, e)
  ROOT t = (s32[], f32[4]) tuple(i1, y)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x0 = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, x0)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT g = f32[4] get-tuple-element(w), index=1
})";
        // x changes every iteration (y = x + exp(x)): nothing is invariant
        // except constants, rng and the side effects, which stay.
        auto pass = Licm::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %body
CHECK: exponential
CHECK: outfeed
CHECK: rng(
CHECK: custom-call(
CHECK: ENTRY)");
        QVERIFY2(why.empty(), why.c_str());
    }

    void sideEffectingBodyStillHoistsPureInvariants() {
        const std::string hlo = R"(HloModule m
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  acc = f32[4] get-tuple-element(p), index=2
  s = f32[4] sqrt(x)
  tok = token[] after-all()
  o = token[] outfeed(acc, tok)
  a = f32[4] add(acc, s)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, x, a)
}
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(z, x0, a0)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT g = f32[4] get-tuple-element(w), index=2
})";
        auto pass = Licm::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %body
CHECK-NOT: sqrt
CHECK: outfeed
CHECK: ENTRY
CHECK: ROOT %g = f32[4] get-tuple-element
CHECK: sqrt(f32[4] %x0))");
        QVERIFY2(why.empty(), why.c_str());
        // Outfeed is not evaluable by sameResults' default evaluator; the
        // structure above is the check. Semantics on the pure variant:
        const std::string pure = [&] {
            std::string text = hlo;
            const std::string outfeed = "  tok = token[] after-all()\n  o = token[] outfeed(acc, tok)\n";
            text.erase(text.find(outfeed), outfeed.size());
            return text;
        }();
        auto pureRun = runPass(**pass, pure);
        QVERIFY2(pureRun.isOk(), pureRun.status().toString().c_str());
        QVERIFY(pureRun->changed);
        why = semantics(pure, *pureRun->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void nestedLoops() {
        // The inner loop adds exp(y) to its accumulator, y invariant in both
        // loops: exp leaves the inner loop, then the outer one.
        const std::string hlo = R"(HloModule m
inner_body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  y = f32[4] get-tuple-element(p), index=1
  acc = f32[4] get-tuple-element(p), index=2
  e = f32[4] exponential(y)
  a = f32[4] add(acc, e)
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  ROOT t = (s32[], f32[4], f32[4]) tuple(j1, y, a)
}
inner_cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(j, n), direction=LT
}
outer_body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  y = f32[4] get-tuple-element(p), index=1
  acc = f32[4] get-tuple-element(p), index=2
  z = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(z, y, acc)
  w = (s32[], f32[4], f32[4]) while(init), condition=inner_cond, body=inner_body
  acc2 = f32[4] get-tuple-element(w), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, y, acc2)
}
outer_cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  y0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(z, y0, a0)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=outer_cond, body=outer_body
})";
        auto pass = Licm::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %inner_body
CHECK-NOT: exponential
CHECK: %outer_body
CHECK-NOT: exponential
CHECK: ENTRY
CHECK: exponential(f32[4] %y0)
CHECK: ROOT {{.*}} = (s32[], f32[4], f32[4]) tuple)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "hoist-invariant"), 2);
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void constantsAndInflatingOps() {
        const std::string hlo = R"(HloModule m
body {
  p = (s32[], f32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = f32[] get-tuple-element(p), index=1
  acc = f32[8] get-tuple-element(p), index=2
  b = f32[8] broadcast(s), dimensions={}
  c = f32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
  a = f32[8] add(acc, b)
  a2 = f32[8] multiply(a, c)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[], f32[8]) tuple(i1, s, a2)
}
cond {
  p = (s32[], f32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  s0 = f32[] parameter(0)
  a0 = f32[8] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[], f32[8]) tuple(z, s0, a0)
  ROOT w = (s32[], f32[], f32[8]) while(init), condition=cond, body=body
})";
        auto pass = Licm::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);  // broadcast inflates, constants stay by default

        auto inflating = Licm::create({{"hoist_size_inflating_ops", "true"}});
        QVERIFY(inflating.isOk());
        run = runPass(**inflating, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %body
CHECK-NOT: broadcast
CHECK: constant({1, 2, 3
CHECK: ENTRY
CHECK: broadcast(f32[] %s0))");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());

        auto constants = Licm::create({{"hoist_constants", "true"}});
        run = runPass(**constants, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        why = fileCheck(run->text, R"(
CHECK: %body
CHECK: broadcast
CHECK-NOT: constant({1, 2, 3
CHECK: ENTRY
CHECK: constant({1, 2, 3)");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void whileUsedAsTupleKeepsItsShape() {
        // The while is used whole (by a tuple and as an operand of a call-free
        // tuple consumer): those users get the original state shape back.
        std::string hlo = kSimple;
        hlo.replace(hlo.find("  ROOT w = (s32[], f32[4], f32[4]) while"),
                    std::string("  ROOT w").size(), "  w");
        hlo.insert(hlo.rfind("}"), "  ROOT r = ((s32[], f32[4], f32[4]), f32[4]) tuple(w, x0)\n");
        auto pass = Licm::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: ENTRY
CHECK: ROOT %r = ((s32[], f32[4], f32[4]), f32[4]) tuple((s32[], f32[4], f32[4]) %tuple{{[.0-9]*}}, f32[4] %x0))");
        QVERIFY2(why.empty(), why.c_str());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void hoistsFusion() {
        const std::string hlo = R"(HloModule m
fused {
  f = f32[4] parameter(0)
  ROOT g = f32[4] exponential(f)
}
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  acc = f32[4] get-tuple-element(p), index=2
  e = f32[4] fusion(x), kind=kLoop, calls=fused
  a = f32[4] add(acc, e)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, x, a)
}
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(z, x0, a0)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
})";
        auto pass = Licm::create({});
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %body
CHECK-NOT: fusion(
CHECK: ENTRY
CHECK: fusion(f32[4] %x0), kind=kLoop, calls=%fused)");
        QVERIFY2(why.empty(), why.c_str());
        const HloComputation* fused = run->module->findComputation("fused");
        QVERIFY(fused && fused->fusionInstruction());
        QCOMPARE(fused->fusionInstruction()->parent(), run->module->entryComputation());
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void badOptions() {
        auto unknown = Licm::create({{"hoist_everything", "true"}});
        QVERIFY(!unknown.isOk());
        QVERIFY(unknown.status().toString().find("hoist_everything") != std::string::npos);
        auto badValue = Licm::create({{"hoist_constants", "yes please"}});
        QVERIFY(!badValue.isOk());
        QVERIFY(badValue.status().toString().find("hoist_constants") != std::string::npos);
    }

    void corpusSweep() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        SweepStats stats;
        std::string why = sweepCorpus(QStringLiteral("while_loop_invariant"),
                                      [] { return Licm::create({}); }, &stats);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("licm sweep: %d files, %d run, %d evaluated, %d changed", stats.files, stats.run,
              stats.evaluated, stats.changed);
        QVERIFY(stats.run > 0);
        SweepStats all;
        why = sweepCorpus(QStringLiteral("while_loop_invariant"),
                          [] {
                              return Licm::create({{"hoist_constants", "true"},
                                                   {"hoist_size_inflating_ops", "true"}});
                          },
                          &all);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("licm sweep (all options on): %d run, %d evaluated, %d changed", all.run,
              all.evaluated, all.changed);
        const double ms = timeOnLargestModel([] { return Licm::create({}); }, &why);
        QVERIFY2(ms >= 0, why.c_str());
        qInfo("licm on Mixtral: %.1f ms", ms);
    }
};

QTEST_GUILESS_MAIN(TestPassLicm)
#include "tst_pass_while_loop_invariant_code_motion.moc"
