// MultiOutputFusionPass: sibling and producer-consumer multi-output fusion,
// cycle refusal, decisions, options, corpus sweep.
#include <QDir>
#include <QTest>

#include <set>

#include "compiler/fusion/instruction_fusion.h"
#include "compiler/fusion/multi_output_fusion.h"
#include "tests/pass_check_util.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

const char* kSiblings = R"(HloModule siblings
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT m = f32[] maximum(p, q)
}
ENTRY e {
  x = f32[128,1024] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s = f32[128] reduce(x, zero), dimensions={1}, to_apply=sum
  m = f32[128] reduce(x, ninf), dimensions={1}, to_apply=max
  ROOT t = (f32[128], f32[128]) tuple(s, m)
}
)";

// %b reaches %r through %n (outside): fusing b and r would create a cycle.
const char* kCycle = R"(HloModule cycle
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[128,1024] parameter(0)
  zero = f32[] constant(0)
  s = f32[128] reduce(x, zero), dimensions={1}, to_apply=sum
  bs = f32[128,1024] broadcast(s), dimensions={0}
  b = f32[128,1024] add(x, bs)
  r = f32[128] reduce(b, zero), dimensions={1}, to_apply=sum
  ROOT t = (f32[128], f32[128,1024]) tuple(r, b)
}
)";

StatusOr<std::unique_ptr<HloPass>> makeMof(PassOptions options = {}) {
    if (!options.has("cost_model")) options.set("cost_model", "bytes");
    return MultiOutputFusionPass::create(options);
}

}  // namespace

class TestPassMultiOutputFusion : public QObject {
    Q_OBJECT

    std::string check(HloPass& pass, HloModule& module, const char* hlo, const std::string& checks) {
        pass.clearRewrites();
        auto changed = pass.run(module);
        if (!changed.isOk()) {
            QTest::qFail(changed.status().toString().c_str(), __FILE__, __LINE__);
            return {};
        }
        HloVerifierOptions options;
        options.allowMixedPrecision = true;
        if (Status s = verifyModule(module, options); !s.isOk())
            QTest::qFail(s.toString().c_str(), __FILE__, __LINE__);
        const std::string text = printModule(module, HloPrintOptions::canonical());
        std::string why = fileCheck(text, checks);
        if (!why.empty()) QTest::qFail(why.c_str(), __FILE__, __LINE__);
        why = semantics(hlo, module);
        if (!why.empty()) QTest::qFail(("semantics: " + why).c_str(), __FILE__, __LINE__);
        for (const auto& d : pass.decisions())
            if (d.reason.empty() || d.explanation.empty())
                QTest::qFail("incomplete decision", __FILE__, __LINE__);
        m_decisions = pass.decisions();
        pass.clearRewrites();
        auto again = pass.run(module);
        if (!again.isOk() || *again || printModule(module, HloPrintOptions::canonical()) != text)
            QTest::qFail("second run changed the module", __FILE__, __LINE__);
        return text;
    }

    std::vector<PassDecision> m_decisions;

private slots:
    void siblingReductionsShareOneFusion() {
        auto module = parseHloModule(kSiblings);
        QVERIFY(module.isOk());
        auto pass = makeMof();
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, **module, kSiblings, R"(
CHECK: %fused_computation
CHECK: %s = f32[128] reduce(
CHECK: %m = f32[128] reduce(
CHECK: ROOT %tuple{{[.0-9]*}} = (f32[128], f32[128]) tuple(
CHECK: ENTRY
CHECK: %fusion = (f32[128], f32[128]) fusion(f32[128,1024] %x{{.*}}), kind=kInput
CHECK: get-tuple-element(
CHECK: get-tuple-element(
)");
        QCOMPARE(countOf(text, " fusion("), 1);
        QVERIFY(ruleCount(**pass, "multi-output-sibling") == 0);  // cleared by the second run
        QCOMPARE(m_decisions.size(), size_t(1));
        QCOMPARE(m_decisions[0].reason, std::string("fused"));
    }

    // Names taken by the fusion (its get-tuple-elements) are not handed out
    // again by HloModule::uniqueInstructionName once its name set exists
    // (llama31 405b: layout assignment's get-tuple-element collided).
    void namesAfterFusionStayUnique() {
        // Three siblings: the fusion's get-tuple-elements take the names the
        // module's counter hands out next (get-tuple-element.2 and .3).
        static const char* kThree = R"(HloModule three
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[128,1024] parameter(0)
  zero = f32[] constant(0)
  one = f32[] constant(1)
  two = f32[] constant(2)
  a = f32[128] reduce(x, zero), dimensions={1}, to_apply=sum
  b = f32[128] reduce(x, one), dimensions={1}, to_apply=sum
  c = f32[128] reduce(x, two), dimensions={1}, to_apply=sum
  ROOT t = (f32[128], f32[128], f32[128]) tuple(a, b, c)
}
)";
        auto module = parseHloModule(kThree);
        QVERIFY(module.isOk());
        (*module)->uniqueInstructionName("warm-up");  // builds the module's name set
        auto pass = makeMof();
        QVERIFY(pass.isOk());
        check(**pass, **module, kThree, "CHECK: get-tuple-element.2 = ");
        std::set<std::string> names;
        for (const auto& computation : (*module)->computations())
            for (const auto& instruction : computation->instructions()) names.insert(instruction->name());
        for (const char* stem : {"get-tuple-element", "fusion", "tuple"})
            for (int i = 0; i < 4; ++i) {
                const std::string fresh = (*module)->uniqueInstructionName(stem);
                QVERIFY2(!names.count(fresh), fresh.c_str());
            }
    }

    void forbidSiblings() {
        auto module = parseHloModule(kSiblings);
        QVERIFY(module.isOk());
        auto pass = makeMof({{"forbid", "m:s"}});
        QVERIFY(pass.isOk());
        check(**pass, **module, kSiblings, "CHECK-NOT: fusion(");
        QCOMPARE(m_decisions[0].reason, std::string("forbidden-by-user"));
    }

    void cycleIsRefused() {
        auto module = parseHloModule(kCycle);
        QVERIFY(module.isOk());
        auto pass = makeMof();
        QVERIFY(pass.isOk());
        check(**pass, **module, kCycle, "CHECK: ENTRY");
        bool cycle = false;
        for (const auto& d : m_decisions) cycle = cycle || d.reason == "multi-output-cycle";
        QVERIFY(cycle);
    }

    void softmaxAfterFusionHasThreeKernels() {
        const char* hlo = R"(HloModule softmax
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT m = f32[] maximum(p, q)
}
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[128,1024] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[128] reduce(x, ninf), dimensions={1}, to_apply=max
  bmx = f32[128,1024] broadcast(mx), dimensions={0}
  sub = f32[128,1024] subtract(x, bmx)
  ex = f32[128,1024] exponential(sub)
  zero = f32[] constant(0)
  sm = f32[128] reduce(ex, zero), dimensions={1}, to_apply=sum
  bsm = f32[128,1024] broadcast(sm), dimensions={0}
  ROOT div = f32[128,1024] divide(ex, bsm)
}
)";
        auto module = parseHloModule(hlo);
        QVERIFY(module.isOk());
        auto fusion = FusionPass::create({{"cost_model", "bytes"}});
        QVERIFY(fusion.isOk());
        QVERIFY((*fusion)->run(**module).isOk());
        auto pass = makeMof();
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, **module, hlo, "CHECK: ENTRY");
        // Kernels in the entry: fusions and bare reductions (XLA: 3).
        const std::string entry = text.substr(text.find("ENTRY"));
        const int kernels = countOf(entry, " fusion(") + countOf(entry, " reduce(");
        QVERIFY2(kernels == 3, entry.c_str());
        QVERIFY(entry.find("(f32[128,1024], f32[128]) fusion(") != std::string::npos);
    }

    // XLA's GPU rules for which siblings share a kernel: the hero's loop (a reduction's or a
    // tiled transpose's input, else the output), element types aside and up to a bitcast.
    void gpuSiblingsShareTheHerosLoop() {
        struct Case {
            const char* name;
            const char* hlo;
            bool fused;
            const char* reason;  // of the refusal
        };
        const Case cases[] = {
            {"transpose and exp of its input", R"(HloModule m
ENTRY e {
  p = f32[64,128] parameter(0)
  t = f32[128,64] transpose(p), dimensions={1,0}
  x = f32[64,128] exponential(p)
  ROOT r = (f32[128,64], f32[64,128]) tuple(t, x)
}
)", true, ""},
            {"a loop and a reduction of a bitcast of the same input", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
reduction {
  p = f32[16,32] parameter(0)
  z = f32[] constant(0)
  b = f32[512] bitcast(p)
  ROOT r = f32[] reduce(b, z), dimensions={0}, to_apply=add
}
ENTRY e {
  p = f32[16,32] parameter(0)
  s = f32[16,32] sqrt(p)
  f = f32[] fusion(p), kind=kInput, calls=reduction
  ROOT r = (f32[16,32], f32[]) tuple(s, f)
}
)", true, ""},
            {"reductions of one input to different types", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
addh {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT c = f16[] add(a, b)
}
half {
  q = f32[64,256] parameter(0)
  h = f16[64,256] convert(q)
  zh = f16[] constant(0)
  ROOT rh = f16[64] reduce(h, zh), dimensions={1}, to_apply=addh
}
ENTRY e {
  p = f32[64,256] parameter(0)
  z = f32[] constant(0)
  r = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  f = f16[64] fusion(p), kind=kInput, calls=half
  ROOT t = (f32[64], f16[64]) tuple(r, f)
}
)", true, ""},
            {"transposes in different orders", R"(HloModule m
ENTRY e {
  p = f32[18,16,32] parameter(0)
  a = f32[32,16,18] transpose(p), dimensions={2,1,0}
  b = f32[18,32,16] transpose(p), dimensions={0,2,1}
  ROOT r = (f32[32,16,18], f32[18,32,16]) tuple(a, b)
}
)", false, "not-siblings"},
            {"a reduction of non-contiguous dimensions beside a loop", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = f32[8,5,16,2] parameter(0)
  s = f32[8,5,16,2] multiply(p, p)
  z = f32[] constant(0)
  r = f32[5,2] reduce(p, z), dimensions={0,2}, to_apply=add
  ROOT t = (f32[8,5,16,2], f32[5,2]) tuple(s, r)
}
)", false, "not-siblings"},
        };
        for (const Case& c : cases) {
            auto module = parseHloModule(c.hlo);
            QVERIFY2(module.isOk(), c.name);
            auto pass = makeMof({{"target", "gpu"}});
            QVERIFY(pass.isOk());
            const std::string text = check(**pass, **module, c.hlo, "CHECK: ENTRY");
            const std::string entry = text.substr(text.find("ENTRY"));
            QVERIFY2((countOf(entry, " fusion(") == 1 && entry.find(") fusion(") != std::string::npos) ==
                         c.fused,
                     (std::string(c.name) + "\n" + entry).c_str());
            if (!c.fused) {
                bool refused = false;
                for (const auto& d : m_decisions) refused = refused || d.reason == c.reason;
                QVERIFY2(refused, c.name);
            }
        }
    }

    // Siblings that share a 400-byte operand: the CPU and the GPU fuse them (XLA's profitable
    // operand is any that is not a scalar); the TPU asks for at least 1 KiB.
    void smallSharedOperands() {
        static const char* kSmall = R"(HloModule small
ENTRY e {
  a = f32[100] parameter(0)
  b = f32[100] parameter(1)
  s = f32[100] add(a, b)
  m = f32[100] multiply(a, b)
  ROOT t = (f32[100], f32[100]) tuple(s, m)
}
)";
        for (const char* target : {"cpu", "gpu", "tpu"}) {
            auto module = parseHloModule(kSmall);
            QVERIFY(module.isOk());
            auto pass = makeMof({{"target", target}});
            QVERIFY(pass.isOk());
            const std::string text = check(**pass, **module, kSmall, "CHECK: ENTRY");
            const std::string entry = text.substr(text.find("ENTRY"));
            const bool fused = std::string(target) != "tpu";
            QVERIFY2((countOf(entry, " fusion(") == 1) == fused, (target + ("\n" + entry)).c_str());
            if (!fused) {
                bool refused = false;
                for (const auto& d : m_decisions)
                    refused = refused || (d.reason == "no-predicted-gain" &&
                                          d.explanation.find("400 B") != std::string::npos);
                QVERIFY2(refused, m_decisions.empty() ? "no decision"
                                                      : m_decisions.front().explanation.c_str());
            }
        }
    }

    // Two variadic (argmin/argmax-style) reduction fusions of one input share a kernel: the
    // merged root holds each reduce as a nested tuple element, and the users of each old
    // fusion read its pair through a get-tuple-element of the new one.
    void variadicReductionSiblingsNest() {
        static const char* kVariadic = R"(HloModule variadic
argmin {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  v = f32[] select(lt, a, b)
  i = s32[] select(lt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
min_fusion {
  p = f32[16,512] parameter(0)
  iota = s32[16,512] iota(), iota_dimension=1
  inf = f32[] constant(inf)
  zero = s32[] constant(0)
  ROOT r = (f32[16], s32[16]) reduce(p, iota, inf, zero), dimensions={1}, to_apply=argmin
}
neg_min_fusion {
  p = f32[16,512] parameter(0)
  n = f32[16,512] negate(p)
  iota = s32[16,512] iota(), iota_dimension=1
  inf = f32[] constant(inf)
  zero = s32[] constant(0)
  ROOT r = (f32[16], s32[16]) reduce(n, iota, inf, zero), dimensions={1}, to_apply=argmin
}
ENTRY e {
  x = f32[16,512] parameter(0)
  f1 = (f32[16], s32[16]) fusion(x), kind=kInput, calls=min_fusion
  f2 = (f32[16], s32[16]) fusion(x), kind=kInput, calls=neg_min_fusion
  i1 = s32[16] get-tuple-element(f1), index=1
  v2 = f32[16] get-tuple-element(f2), index=0
  i2 = s32[16] get-tuple-element(f2), index=1
  ROOT t = (s32[16], f32[16], s32[16]) tuple(i1, v2, i2)
}
)";
        for (const char* target : {"cpu", "gpu"}) {
            auto module = parseHloModule(kVariadic);
            QVERIFY(module.isOk());
            auto pass = makeMof({{"target", target}});
            QVERIFY(pass.isOk());
            const std::string text = check(**pass, **module, kVariadic, R"(
CHECK: ROOT %tuple{{[.0-9]*}} = ((f32[16], s32[16]), (f32[16], s32[16])) tuple((f32[16], s32[16]) %r{{[.0-9]*}}, (f32[16], s32[16]) %r{{[.0-9]*}})
CHECK: ENTRY
CHECK: %fusion = ((f32[16], s32[16]), (f32[16], s32[16])) fusion(f32[16,512] %x), kind=kInput
CHECK: %get-tuple-element = (f32[16], s32[16]) get-tuple-element({{.*}} %fusion), index=0
CHECK: %get-tuple-element.1 = (f32[16], s32[16]) get-tuple-element({{.*}} %fusion), index=1
CHECK: %i1 = s32[16] get-tuple-element((f32[16], s32[16]) %get-tuple-element), index=1
CHECK: %v2 = f32[16] get-tuple-element((f32[16], s32[16]) %get-tuple-element.1), index=0
CHECK: %i2 = s32[16] get-tuple-element((f32[16], s32[16]) %get-tuple-element.1), index=1
)");
            const std::string entry = text.substr(text.find("ENTRY"));
            QVERIFY2(countOf(entry, " fusion(") == 1, (target + ("\n" + entry)).c_str());
        }
    }

    void badOptions() {
        QVERIFY(!MultiOutputFusionPass::create({{"colour", "red"}}).isOk());
        QVERIFY(!MultiOutputFusionPass::create({{"target", "fpga"}}).isOk());
        QVERIFY(!MultiOutputFusionPass::create({{"force", "x"}}).isOk());
    }

    void corpusSweep() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        SweepStats stats;
        std::string why = sweepCorpus(QStringLiteral("fusion"), [] { return makeMof(); }, &stats);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("multi-output fusion sweep: %d files, %d run, %d evaluated, %d changed", stats.files,
              stats.run, stats.evaluated, stats.changed);
        QVERIFY(stats.run > 0);
    }
};

QTEST_GUILESS_MAIN(TestPassMultiOutputFusion)
#include "tst_pass_multi_output_fusion.moc"
