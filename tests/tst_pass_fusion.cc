// FusionPass: priority fusion into kLoop / kInput / kOutput fusions, the
// decision log, what-if options, idempotence, corpus sweep and Mixtral timing.
#include <QDir>
#include <QTest>

#include <unordered_set>

#include "compiler/fusion/fusion_decision.h"
#include "compiler/fusion/instruction_fusion.h"
#include "tests/pass_check_util.h"
#include "tests/pass_sweep_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

const char* kChain = R"(HloModule m
ENTRY e {
  x = f32[1024,1024] parameter(0)
  y = f32[1024,1024] parameter(1)
  a = f32[1024,1024] add(x, y)
  n = f32[1024,1024] negate(a)
  ROOT m = f32[1024,1024] multiply(n, y)
}
)";

const char* kReduce = R"(HloModule m
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[256,512] parameter(0)
  y = f32[256,512] parameter(1)
  m = f32[256,512] multiply(x, y)
  a = f32[256,512] abs(m)
  z = f32[] constant(0)
  ROOT r = f32[256] reduce(a, z), dimensions={1}, to_apply=sum
}
)";

const char* kSoftmax = R"(HloModule softmax
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

const char* kLayerNorm = R"(HloModule layernorm
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[64,768] parameter(0)
  gamma = f32[768] parameter(1)
  beta = f32[768] parameter(2)
  zero = f32[] constant(0)
  s = f32[64] reduce(x, zero), dimensions={1}, to_apply=sum
  n = f32[] constant(768)
  bn = f32[64] broadcast(n), dimensions={}
  mean = f32[64] divide(s, bn)
  bmean = f32[64,768] broadcast(mean), dimensions={0}
  c = f32[64,768] subtract(x, bmean)
  sq = f32[64,768] multiply(c, c)
  vs = f32[64] reduce(sq, zero), dimensions={1}, to_apply=sum
  var = f32[64] divide(vs, bn)
  eps = f32[] constant(1e-5)
  beps = f32[64] broadcast(eps), dimensions={}
  ve = f32[64] add(var, beps)
  r = f32[64] rsqrt(ve)
  br = f32[64,768] broadcast(r), dimensions={0}
  norm = f32[64,768] multiply(c, br)
  bg = f32[64,768] broadcast(gamma), dimensions={1}
  scaled = f32[64,768] multiply(norm, bg)
  bb = f32[64,768] broadcast(beta), dimensions={1}
  ROOT out = f32[64,768] add(scaled, bb)
}
)";

const char* kDotBiasRelu = R"(HloModule mlp
ENTRY e {
  x = f32[128,256] parameter(0)
  w = f32[256,512] parameter(1)
  b = f32[512] parameter(2)
  d = f32[128,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[128,512] broadcast(b), dimensions={1}
  add = f32[128,512] add(d, bb)
  zero = f32[] constant(0)
  bz = f32[128,512] broadcast(zero), dimensions={}
  ROOT relu = f32[128,512] maximum(add, bz)
}
)";

const char* kBroadcasts = R"(HloModule bcast
ENTRY e {
  a = f32[512] parameter(0)
  b = f32[256] parameter(1)
  c = f32[] parameter(2)
  ba = f32[256,512] broadcast(a), dimensions={1}
  bb = f32[256,512] broadcast(b), dimensions={0}
  bc = f32[256,512] broadcast(c), dimensions={}
  m = f32[256,512] multiply(ba, bb)
  ROOT s = f32[256,512] add(m, bc)
}
)";

// %ex is expensive and has two users that cannot both take it cheaply.
const char* kDiamond = R"(HloModule diamond
ENTRY e {
  x = f32[1024,1024] parameter(0)
  ex = f32[1024,1024] exponential(x)
  l = f32[1024,1024] log(ex)
  t = f32[1024,1024] tanh(ex)
  ROOT s = (f32[1024,1024], f32[1024,1024]) tuple(l, t)
}
)";

StatusOr<std::unique_ptr<HloPass>> makeFusion(PassOptions options = {}) {
    if (!options.has("cost_model")) options.set("cost_model", "bytes");
    return FusionPass::create(options);
}

std::vector<PassDecision> g_decisions;  // of the last checked run
int g_fuseRewrites = 0;

const PassDecision* findDecision(const HloPass&, const std::string& producer,
                                 const std::string& consumer) {
    const PassDecision* found = nullptr;
    for (const auto& d : g_decisions)
        if (d.producer == producer && d.consumer == consumer) found = &d;
    return found;
}

}  // namespace

class TestPassFusion : public QObject {
    Q_OBJECT

    // Runs the pass on `hlo`; checks verification, semantics, the decision
    // log, the pass's change claim and idempotence. Returns the printed text.
    std::string check(HloPass& pass, const char* hlo, const std::string& checks) {
        pass.clearRewrites();
        auto run = runPass(pass, hlo);
        if (!run.isOk()) {
            QTest::qFail(run.status().toString().c_str(), __FILE__, __LINE__);
            return {};
        }
        std::string why = fileCheck(run->text, checks);
        if (!why.empty()) {
            for (const auto& d : pass.decisions())
                qInfo("decision %lld %s -> %s: %s (%s)", static_cast<long long>(d.step),
                      d.producer.c_str(), d.consumer.c_str(), d.reason.c_str(),
                      d.explanation.c_str());
            QTest::qFail(why.c_str(), __FILE__, __LINE__);
        }
        why = semantics(hlo, *run->module);
        if (!why.empty()) QTest::qFail(("semantics: " + why).c_str(), __FILE__, __LINE__);
        auto parsed = parseHloModule(hlo);
        const bool textChanged =
            printModule(**parsed, HloPrintOptions::canonical()) != run->text;
        if (run->changed != textChanged) QTest::qFail("change claim is wrong", __FILE__, __LINE__);
        for (const auto& d : pass.decisions()) {
            if (d.reason.empty() || d.explanation.empty() || d.producer.empty() ||
                d.consumer.empty() || d.step <= 0)
                QTest::qFail(("incomplete decision " + d.producer + "->" + d.consumer).c_str(),
                             __FILE__, __LINE__);
            bool known = false;
            for (FusionReason r : allFusionReasons()) known = known || fusionReasonCode(r) == d.reason;
            if (!known) QTest::qFail(("unknown reason " + d.reason).c_str(), __FILE__, __LINE__);
        }
        g_decisions = pass.decisions();
        g_fuseRewrites = ruleCount(pass, "fuse");
        // Idempotent: a second run changes nothing.
        pass.clearRewrites();
        auto again = pass.run(*run->module);
        if (!again.isOk() || *again ||
            printModule(*run->module, HloPrintOptions::canonical()) != run->text) {
            for (const auto& d : g_decisions)
                qInfo("first run: %lld %s -> %s: %s (%s)", static_cast<long long>(d.step),
                      d.producer.c_str(), d.consumer.c_str(), d.reason.c_str(),
                      d.explanation.c_str());
            qInfo("after the first run:\n%s\nafter the second:\n%s", run->text.c_str(),
                  printModule(*run->module, HloPrintOptions::canonical()).c_str());
            QTest::qFail("second run changed the module", __FILE__, __LINE__);
        }
        return run->text;
    }

private slots:
    void elementwiseChainBecomesOneLoopFusion() {
        auto pass = makeFusion();
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, kChain, R"(
CHECK: %fused_computation{{[.0-9]*}} (param_0: f32[1024,1024], param_1: f32[1024,1024]) -> f32[1024,1024] {
CHECK: %a = f32[1024,1024] add(
CHECK: %n = f32[1024,1024] negate(
CHECK: ROOT %m = f32[1024,1024] multiply(
CHECK: ENTRY
CHECK: ROOT %fusion{{[.0-9]*}} = f32[1024,1024] fusion(f32[1024,1024] %{{[xy]}}, f32[1024,1024] %{{[xy]}}), kind=kLoop, calls=%fused_computation
)");
        QCOMPARE(countOf(text, " fusion("), 1);
        const PassDecision* d = findDecision(**pass, "a", "n");
        QVERIFY(d);
        QVERIFY(d->applied);
        QCOMPARE(d->reason, std::string("fused"));
        QVERIFY2(d->explanation.find("saves writing and re-reading f32[1024,1024] (4.2 MB)") !=
                     std::string::npos,
                 d->explanation.c_str());
        QVERIFY(d->predictedAppliedSeconds < d->predictedUnfusedSeconds);
        QVERIFY(g_fuseRewrites >= 1);
    }

    void reduceWithProducersBecomesInputFusion() {
        auto pass = makeFusion();
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, kReduce, R"(
CHECK: %fused_computation
CHECK: %m = f32[256,512] multiply(
CHECK: %a = f32[256,512] abs(
CHECK: ROOT %r = f32[256] reduce(
CHECK: ENTRY
CHECK: ROOT %fusion{{[.0-9]*}} = f32[256] fusion({{.*}}), kind=kInput, calls=%fused_computation
)");
        QCOMPARE(countOf(text, " fusion("), 1);
    }

    // On the GPU a reduction takes a unary epilogue into its kInput fusion (XLA's reduction
    // epilogue fusion); a binary consumer stays outside, and the CPU keeps the reduce as root.
    void gpuReductionTakesAnEpilogue() {
        static const char* kEpilogue = R"(HloModule epilogue
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = f32[64,4096] parameter(0)
  q = f32[64] parameter(1)
  z = f32[] constant(0)
  r = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  l = f32[64] log(r)
  ROOT s = f32[64] add(l, q)
}
)";
        auto gpu = makeFusion({{"target", "gpu"}});
        QVERIFY(gpu.isOk());
        const std::string text = check(**gpu, kEpilogue, R"(
CHECK: %fused_computation
CHECK: %r = f32[64] reduce(
CHECK: ROOT %l = f32[64] log(
CHECK: ENTRY
CHECK: %fusion{{[.0-9]*}} = f32[64] fusion({{.*}}), kind=kInput, calls=%fused_computation
CHECK: ROOT %s = f32[64] add(
)");
        const PassDecision* refused = nullptr;
        for (const auto& d : g_decisions)
            if (d.consumer == "s" && d.reason == "reduction-not-root") refused = &d;
        QVERIFY(refused);
        QCOMPARE(refused->reason, std::string("reduction-not-root"));
        QVERIFY2(refused->explanation.find("epilogue") != std::string::npos,
                 refused->explanation.c_str());
        auto cpu = makeFusion({{"target", "cpu"}});
        QVERIFY(cpu.isOk());
        const std::string onCpu = check(**cpu, kEpilogue, "CHECK: ENTRY");
        QVERIFY2(onCpu.find("ROOT %l = f32[64] log(") == std::string::npos, onCpu.c_str());
    }

    // A scalar constant alone does not make a kernel on the CPU (XLA's CPU fusion): the init of
    // a reduce of a parameter stays outside; on the GPU it goes into the reduce, which becomes
    // a fusion. A reduce that is a fusion already takes it on both.
    void scalarConstantsMakeNoKernelOfTheirOwnOnTheCpu() {
        static const char* kBare = R"(HloModule bare
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  p = f32[13,62] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[13] reduce(p, z), dimensions={1}, to_apply=mx
}
)";
        auto cpu = makeFusion({{"target", "cpu"}});
        QVERIFY(cpu.isOk());
        check(**cpu, kBare, R"(
CHECK-NOT: fusion(
CHECK: ROOT %r = f32[13] reduce(
)");
        auto gpu = makeFusion({{"target", "gpu"}});
        QVERIFY(gpu.isOk());
        check(**gpu, kBare, R"(
CHECK: %fused_computation
CHECK: %z{{[.0-9]*}} = f32[] constant(0)
CHECK: ENTRY
CHECK: ROOT %fusion{{[.0-9]*}} = f32[13] fusion({{.*}}), kind=kInput
)");
        auto again = makeFusion({{"target", "cpu"}});
        QVERIFY(again.isOk());
        check(**again, kReduce, R"(
CHECK: %fused_computation
CHECK: %z{{[.0-9]*}} = f32[] constant(0)
CHECK: ENTRY
CHECK: ROOT %fusion{{[.0-9]*}} = f32[256] fusion({{.*}}), kind=kInput
)");
    }

    // XLA's rule against duplication (CPU): %add reads two inputs and feeds %abs1 and %root;
    // the path to %root through %rng does not fuse, so %add fuses into neither.
    void cpuDoesNotDuplicateAcrossUnfusiblePaths() {
        static const char* kPaths = R"(HloModule paths
ENTRY e {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  add = f32[1024] add(p0, p1)
  abs1 = f32[1024] abs(add)
  s = f32[1024] sort(abs1), dimensions={0}, to_apply=less
  abs2 = f32[1024] abs(s)
  ROOT root = f32[1024] subtract(abs2, add)
}
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
)";
        auto pass = makeFusion({{"target", "cpu"}, {"disable_cost_model", "true"}});
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, kPaths, R"(
CHECK: ENTRY
CHECK: %add = f32[1024] add(
)");
        const PassDecision* d = nullptr;  // the consumer may be the fusion %root became
        for (const auto& decision : g_decisions)
            if (decision.producer == "add" && decision.reason == "not-all-consumers") d = &decision;
        QVERIFY(d);
        QVERIFY2(d->explanation.find("XLA does not duplicate it") != std::string::npos &&
                     d->explanation.find("%s cannot fuse into %abs2") != std::string::npos,
                 d->explanation.c_str());
        // The GPU's priority fusion has no such rule: %add goes into both consumers.
        auto gpu = makeFusion({{"target", "gpu"}, {"disable_cost_model", "true"}});
        QVERIFY(gpu.isOk());
        const std::string onGpu = check(**gpu, kPaths, "CHECK: ENTRY");
        QVERIFY2(onGpu.find("%add = f32[1024] add(") == std::string::npos ||
                     onGpu.find("%add = f32[1024] add(") < onGpu.find("ENTRY"),
                 onGpu.c_str());
    }

    // XLA's in-place fusion rules on the CPU: the update takes its elementwise producers and a
    // slice of its buffer at its own start; a slice at another offset, a reverse between the
    // slice and the update, and another update stay outside, each logged as in-place-conflict
    // or not-fusible-op. The GPU keeps the update alone.
    void inPlaceUpdatesFuseTheirProducers() {
        static const char* kSameOffset = R"(HloModule same
ENTRY e {
  p = f32[64] parameter(0)
  s = f32[63] slice(p), slice={[1:64]}
  one = f32[] constant(1)
  b = f32[63] broadcast(one), dimensions={}
  a = f32[63] add(s, b)
  at = s32[] constant(1)
  ROOT u = f32[64] dynamic-update-slice(p, a, at)
}
)";
        auto cpu = makeFusion({{"target", "cpu"}});
        QVERIFY(cpu.isOk());
        check(**cpu, kSameOffset, R"(
CHECK: %fused_computation
CHECK: slice(
CHECK: ROOT {{.*}} dynamic-update-slice(
CHECK: ENTRY
CHECK-NOT: slice(
CHECK: ROOT %fusion{{[.0-9]*}} = f32[64] fusion(f32[64] %p), kind=kLoop
)");
        static const char* kOtherOffset = R"(HloModule other
ENTRY e {
  p = f32[64] parameter(0)
  s = f32[63] slice(p), slice={[0:63]}
  one = f32[] constant(1)
  b = f32[63] broadcast(one), dimensions={}
  a = f32[63] add(s, b)
  r = f32[63] reverse(a), dimensions={0}
  at = s32[] constant(1)
  u = f32[64] dynamic-update-slice(p, r, at)
  q = f32[64] parameter(1)
  two = s32[] constant(2)
  ROOT v = f32[64] dynamic-update-slice(u, q, two)
}
)";
        auto again = makeFusion({{"target", "cpu"}});
        QVERIFY(again.isOk());
        check(**again, kOtherOffset, R"(
CHECK: ENTRY
CHECK: %s = f32[63] slice(f32[64] %p)
CHECK: %fusion{{[.0-9]*}} = f32[64] fusion({{.*}}), kind=kLoop
CHECK: ROOT %v = f32[64] dynamic-update-slice(
)");
        const PassDecision* conflict = nullptr;
        const PassDecision* chained = nullptr;
        for (const auto& d : g_decisions) {
            if (d.producer == "s" && d.reason == "in-place-conflict") conflict = &d;
            if (d.consumer == "v" && d.reason == "not-fusible-op") chained = &d;
        }
        QVERIFY(conflict);
        QVERIFY2(conflict->explanation.find("another offset") != std::string::npos, conflict->explanation.c_str());
        QVERIFY(chained);
        QVERIFY2(chained->explanation.find("in place") != std::string::npos, chained->explanation.c_str());
        auto gpu = makeFusion({{"target", "gpu"}});
        QVERIFY(gpu.isOk());
        check(**gpu, kSameOffset, R"(
CHECK: ENTRY
CHECK: ROOT %u = f32[64] dynamic-update-slice(
)");
    }

    // On the GPU a scatter takes the producers of its indices and updates into a kInput fusion,
    // not the producer of the operand it updates in place, and it fuses into no user; the
    // CPU keeps the scatter alone.
    void gpuScatterTakesItsIndicesAndUpdates() {
        static const char* kScatter = R"(HloModule scatter
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY e {
  p0 = s32[300,3] parameter(0)
  operand = s32[300,3] add(p0, p0)
  p1 = s32[200,1] parameter(1)
  indices = s32[200,1] add(p1, p1)
  p2 = s32[200,3] parameter(2)
  updates = s32[200,3] multiply(p2, p2)
  scatter = s32[300,3] scatter(operand, indices, updates), to_apply=add, update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1
  ROOT out = s32[300,3] negate(scatter)
}
)";
        auto gpu = makeFusion({{"target", "gpu"}});
        QVERIFY(gpu.isOk());
        check(**gpu, kScatter, R"(
CHECK: %fused_computation
CHECK: %indices{{[.0-9]*}} = s32[200,1] add(
CHECK: %updates{{[.0-9]*}} = s32[200,3] multiply(
CHECK: ROOT %scatter{{[.0-9]*}} = s32[300,3] scatter(
CHECK: ENTRY
CHECK: %operand{{[.0-9]*}} = s32[300,3]
CHECK: kind=kInput
CHECK: ROOT %out = s32[300,3] negate(
)");
        bool conflict = false, kept = false;
        for (const auto& d : g_decisions) {
            conflict = conflict || (d.producer == "operand" && d.reason == "in-place-conflict");
            kept = kept || (d.consumer == "out" && d.reason == "not-fusible-op" &&
                            d.explanation.find("scatter stays the root") != std::string::npos);
        }
        QVERIFY(conflict);
        QVERIFY(kept);
        auto cpu = makeFusion({{"target", "cpu"}});
        QVERIFY(cpu.isOk());
        check(**cpu, kScatter, R"(
CHECK: ENTRY
CHECK: %scatter = s32[300,3] scatter(
)");
    }

    // A fusion nested in a fused computation survives its computation being rebuilt: the
    // nested computation's caller is the clone in the new body (XLA's constant sinking test).
    void nestedFusionKeepsItsCaller() {
        static const char* kNested = R"(HloModule nested
inner {
  p1 = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT out = s32[] add(p1, ten)
}
outer {
  p0 = s32[64,64] parameter(0)
  p1 = s32[] parameter(1)
  f = s32[] fusion(p1), kind=kLoop, calls=inner
  b = s32[64,64] broadcast(f), dimensions={}
  ROOT out = s32[64,64] add(b, p0)
}
ENTRY main {
  p0 = s32[64,64] parameter(0)
  c = s32[] constant(10)
  ROOT out = s32[64,64] fusion(p0, c), kind=kLoop, calls=outer
}
)";
        for (const char* target : {"cpu", "gpu"}) {
            auto pass = makeFusion({{"target", target}});
            QVERIFY(pass.isOk());
            auto run = runPass(**pass, kNested);
            QVERIFY2(run.isOk(), run.status().toString().c_str());
            std::unordered_set<const HloInstruction*> live;
            for (const auto& computation : run->module->computations())
                for (const auto& instruction : computation->instructions()) live.insert(instruction.get());
            for (const auto& computation : run->module->computations()) {
                const HloInstruction* caller = computation->fusionInstruction();
                if (!caller) continue;
                QVERIFY2(live.count(caller), (std::string(target) + ": " + computation->name()).c_str());
                QCOMPARE(caller->fusedComputation(), computation.get());
            }
        }
    }

    void softmaxFusesIntoXlaKernelCount() {
        auto pass = makeFusion();
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, kSoftmax, R"(
CHECK: %ex = f32[128,1024] exponential(
CHECK: ENTRY
CHECK: ROOT
)");
        // Four kernels as XLA's instruction fusion makes them (max-reduce,
        // subtract+exp, sum-reduce, divide); multi-output fusion brings it to 3.
        const std::string entry = text.substr(text.find("ENTRY"));
        const int kernels = countOf(entry, " fusion(") + countOf(entry, " reduce(");
        QVERIFY2(kernels == 4, entry.c_str());
        QVERIFY(countOf(entry, " fusion(") >= 2);
        // exp has two users (the sum and the divide): not duplicated; the
        // reductions never feed a fused consumer.
        bool duplicate = false, reductionRoot = false;
        for (const auto& d : g_decisions) {
            duplicate = duplicate || (d.reason == "would-duplicate-expensive-work" && !d.applied);
            reductionRoot = reductionRoot || d.reason == "reduction-not-root";
        }
        QVERIFY(duplicate);
        QVERIFY(reductionRoot);
    }

    void layerNorm() {
        auto pass = makeFusion();
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, kLayerNorm, R"(
CHECK: ENTRY
CHECK: kind=kInput
CHECK: ROOT %fusion{{[.0-9]*}} = f32[64,768] fusion({{.*}}), kind=kLoop
)");
        QVERIFY2(countOf(text, " fusion(") >= 2, text.c_str());
        QVERIFY(countOf(text, " fusion(") <= 5);
    }

    void dotBiasReluBecomesOutputFusion() {
        auto pass = makeFusion();
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, kDotBiasRelu, R"(
CHECK: %fused_computation
CHECK: %d = f32[128,512] dot(
CHECK: %add = f32[128,512] add(
CHECK: ROOT %relu = f32[128,512] maximum(
CHECK: ENTRY
CHECK: ROOT %fusion{{[.0-9]*}} = f32[128,512] fusion({{.*}}), kind=kOutput, calls=%fused_computation
)");
        QCOMPARE(countOf(text, " fusion("), 1);
    }

    void broadcastHeavyGraph() {
        auto pass = makeFusion();
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, kBroadcasts, R"(
CHECK: %fused_computation (param_0: f32[512], param_1: f32[256], param_2: f32[]) -> f32[256,512]
CHECK: ENTRY
CHECK: ROOT %fusion = f32[256,512] fusion(f32[512] %a, f32[256] %b, f32[] %c), kind=kLoop
)");
        QCOMPARE(countOf(text, " fusion("), 1);
    }

    void diamondDoesNotDuplicateExpensiveProducer() {
        auto pass = makeFusion();
        QVERIFY(pass.isOk());
        check(**pass, kDiamond, R"(
CHECK: ENTRY
CHECK: %ex = f32[1024,1024] exponential(
CHECK-NOT: fusion(
)");
        const PassDecision* d = findDecision(**pass, "ex", "l");
        QVERIFY(d);
        QCOMPARE(d->reason, std::string("would-duplicate-expensive-work"));
        QVERIFY2(d->explanation.find("%ex has 2 users") != std::string::npos, d->explanation.c_str());
        QVERIFY2(d->explanation.find("recompute it 2 times") != std::string::npos,
                 d->explanation.c_str());
        QVERIFY(!d->applied);
    }

    void forbidChangesTheOutcome() {
        auto pass = makeFusion({{"forbid", "a:n;%n:%m"}});
        QVERIFY(pass.isOk());
        check(**pass, kChain, R"(
CHECK-NOT: fusion(
CHECK: ROOT %m = f32[1024,1024] multiply(
)");
        const PassDecision* d = findDecision(**pass, "n", "m");
        QVERIFY(d);
        QCOMPARE(d->reason, std::string("forbidden-by-user"));
        QVERIFY(!d->applied);
    }

    void forceChangesTheOutcome() {
        // Without force the tiny broadcast of a constant alone is a kernel
        // the cost model might keep; with force it is fused and says so.
        const char* hlo = R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ex = f32[4] exponential(x)
  l = f32[4] log(ex)
  ROOT t = (f32[4], f32[4]) tuple(ex, l)
}
)";
        auto plain = makeFusion();
        QVERIFY(plain.isOk());
        check(**plain, hlo, "CHECK: %l = f32[4] log(");
        QCOMPARE(findDecision(**plain, "ex", "l")->reason,
                 std::string("would-duplicate-expensive-work"));
        // Force does not override legality...
        auto forced = makeFusion({{"force", "ex:l"}});
        QVERIFY(forced.isOk());
        check(**forced, hlo, "CHECK: %l = f32[4] log(");
        QVERIFY(!findDecision(**forced, "ex", "l")->applied);
        // ...but fuses a legal pair the model rejects.
        const char* small = R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  a = f32[4] abs(n)
  ROOT t = (f32[4], f32[4]) tuple(n, a)
}
)";
        auto model = makeFusion();
        QVERIFY(model.isOk());
        check(**model, small, "CHECK-NOT: fusion(");
        // n is also an output (the tuple cannot take it): it fuses into all its consumers or none.
        QCOMPARE(findDecision(**model, "n", "a")->reason, std::string("not-all-consumers"));
        auto force = makeFusion({{"force", "n:a"}});
        QVERIFY(force.isOk());
        check(**force, small, R"(
CHECK: %n.clone = f32[4] negate(
CHECK: ROOT %a = f32[4] abs(
CHECK: ENTRY
CHECK: %n = f32[4] negate(
CHECK: %fusion = f32[4] fusion(f32[4] %x), kind=kLoop
)");
        const PassDecision* d = findDecision(**force, "n", "a");
        QVERIFY(d && d->applied);
        QCOMPARE(d->reason, std::string("forced-by-user"));
        // disable_cost_model fuses whenever legal: n into each of its four consumers, which
        // the model rejects (each would read x and y instead of n).
        const char* shared = R"(HloModule m
ENTRY e {
  x = f32[1024,1024] parameter(0)
  y = f32[1024,1024] parameter(1)
  z = f32[1024,1024] parameter(2)
  n = f32[1024,1024] add(x, y)
  a = f32[1024,1024] multiply(n, z)
  b = f32[1024,1024] subtract(n, z)
  c = f32[1024,1024] divide(n, z)
  d = f32[1024,1024] maximum(n, z)
  ROOT t = (f32[1024,1024], f32[1024,1024], f32[1024,1024], f32[1024,1024]) tuple(a, b, c, d)
}
)";
        auto rejected = makeFusion();
        QVERIFY(rejected.isOk());
        check(**rejected, shared, "CHECK-NOT: fusion(");
        QCOMPARE(findDecision(**rejected, "n", "a")->reason, std::string("no-predicted-gain"));
        auto greedy = makeFusion({{"disable_cost_model", "true"}});
        QVERIFY(greedy.isOk());
        check(**greedy, shared, "CHECK: ENTRY\nCHECK: fusion(\nCHECK: fusion(\nCHECK: fusion(\nCHECK: fusion(");
    }

    void limits() {
        auto pass = makeFusion({{"max_operands", "2"}});
        QVERIFY(pass.isOk());
        check(**pass, kBroadcasts, "CHECK: ENTRY");
        bool tooMany = false;
        for (const auto& d : g_decisions) tooMany = tooMany || d.reason == "too-many-operands";
        QVERIFY(tooMany);
        auto small = makeFusion({{"max_fused_instructions", "2"}});
        QVERIFY(small.isOk());
        check(**small, kChain, "CHECK: ENTRY");
        bool tooLarge = false;
        for (const auto& d : g_decisions) tooLarge = tooLarge || d.reason == "fusion-too-large";
        QVERIFY(tooLarge);
    }

    void layoutMismatch() {
        const char* hlo = R"(HloModule m
ENTRY e {
  x = f32[64,64]{0,1} parameter(0)
  y = f32[64,64]{1,0} parameter(1)
  n = f32[64,64]{0,1} negate(x)
  ROOT a = f32[64,64]{1,0} add(n, y)
}
)";
        auto pass = makeFusion();
        QVERIFY(pass.isOk());
        check(**pass, hlo, "CHECK: ROOT %a = f32[64,64]{1,0} add(");
        const PassDecision* d = findDecision(**pass, "n", "a");
        QVERIFY(d);
        QVERIFY2(d->reason == "layout-mismatch", (d->reason + ": " + d->explanation).c_str());
    }

    void performanceModelAndTargets() {
        for (const char* target : {"cpu", "gpu", "tpu"}) {
            auto pass = FusionPass::create({{"target", target}});
            QVERIFY(pass.isOk());
            check(**pass, kSoftmax, "CHECK: fusion(");
            check(**pass, kDotBiasRelu, "CHECK: fusion(");
        }
    }

    void fusionIntoWhileBody() {
        const char* hlo = R"(HloModule m
body {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[64] get-tuple-element(p), index=1
  n = f32[64] negate(x)
  a = f32[64] abs(n)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[64]) tuple(i1, a)
}
cond {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(3)
  ROOT c = pred[] compare(i, k), direction=LT
}
ENTRY e {
  x = f32[64] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[64]) tuple(z, x)
  ROOT w = (s32[], f32[64]) while(t), condition=cond, body=body
}
)";
        auto pass = makeFusion({{"disable_cost_model", "true"}});
        QVERIFY(pass.isOk());
        check(**pass, hlo, R"(
CHECK: %fused_computation
CHECK: body
CHECK: kind=kLoop
)");
    }

    // Two fusions call one body (the fuzzer found it in a tpu_v5e pipeline):
    // fusing a producer into the first gives it a body of its own, under a
    // new name; the shared body stays for the second, which then owns it.
    void sharedFusedComputation() {
        const char* hlo = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
shared {
  p0 = f32[] parameter(0)
  p1 = f32[128] parameter(1)
  ROOT r = f32[] reduce(p1, p0), dimensions={0}, to_apply=add
}
ENTRY e {
  x = f32[] parameter(0)
  y = f32[128] parameter(1)
  n = f32[128] negate(y)
  f1 = f32[] fusion(x, n), kind=kLoop, calls=shared
  f2 = f32[] fusion(f1, n), kind=kLoop, calls=shared
  ROOT d = f32[] subtract(f2, x)
}
)";
        auto pass = makeFusion({{"disable_cost_model", "true"}});
        QVERIFY(pass.isOk());
        const std::string text = check(**pass, hlo, R"(
CHECK: %fused_computation
CHECK: ENTRY
CHECK: %f1 = f32[] fusion(f32[] %x, f32[128] %y), kind=kInput, calls=%fused_computation
CHECK: %f2 = f32[] fusion(f32[] %f1, f32[128] %y), kind=kInput, calls=%shared
)");
        QVERIFY(text.find("%shared (") != std::string::npos);
    }

    void badOptions() {
        QVERIFY(!FusionPass::create({{"colour", "red"}}).isOk());
        QVERIFY(!FusionPass::create({{"target", "fpga"}}).isOk());
        QVERIFY(!FusionPass::create({{"max_operands", "0"}}).isOk());
        QVERIFY(!FusionPass::create({{"max_operands", "many"}}).isOk());
        QVERIFY(!FusionPass::create({{"force", "a-b"}}).isOk());
        QVERIFY(!FusionPass::create({{"forbid", "a:b:c"}}).isOk());
        QVERIFY(!FusionPass::create({{"cost_model", "magic"}}).isOk());
        QVERIFY(!FusionPass::create({{"disable_cost_model", "perhaps"}}).isOk());
    }

    void reasonCodesAreKebabCase() {
        for (FusionReason reason : allFusionReasons()) {
            const std::string code(fusionReasonCode(reason));
            QVERIFY(!code.empty());
            for (char c : code) QVERIFY((c >= 'a' && c <= 'z') || c == '-');
        }
    }

    void corpusSweep() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        SweepStats stats;
        std::string why = sweepCorpus(QStringLiteral("fusion"), [] { return makeFusion(); }, &stats);
        QVERIFY2(why.empty(), why.c_str());
        qInfo("fusion sweep: %d files, %d run, %d evaluated, %d changed", stats.files, stats.run,
              stats.evaluated, stats.changed);
        QVERIFY(stats.run > 0);
        QVERIFY(stats.changed > 0);
    }

    void mixtralTiming() {
        if (!QDir(corpusHloDir()).exists()) QSKIP("corpus absent (../shared/corpus)");
        std::string why;
        const double ms = timeOnLargestModel([] { return FusionPass::create({}); }, &why);
        QVERIFY2(ms >= 0, why.c_str());
        // Reported, not asserted (a benchmark: `hloscope-cli bench`, README).
        qInfo("fusion on Mixtral: %.1f ms", ms);
    }
};

QTEST_GUILESS_MAIN(TestPassFusion)
#include "tst_pass_fusion.moc"
