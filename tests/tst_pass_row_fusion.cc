// RowFusionPass: softmax and layer norm become one kernel after fusion; a
// reduction over another dimension, one with two readers and one read through
// a transpose stay apart, each with its reason.
#include <QTest>

#include "compiler/fusion/instruction_fusion.h"
#include "compiler/fusion/row_fusion.h"
#include "tests/pass_check_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

const char* kReducers = R"(HloModule m
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
)";

const char* kSoftmax = R"(ENTRY e {
  x = f32[64,250] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[64,250] broadcast(m), dimensions={0}
  d = f32[64,250] subtract(x, mb)
  e = f32[64,250] exponential(d)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=sum
  sb = f32[64,250] broadcast(s), dimensions={0}
  ROOT r = f32[64,250] divide(e, sb)
}
)";

const char* kLayerNorm = R"(ENTRY e {
  x = f32[16,130] parameter(0)
  g = f32[130] parameter(1)
  zero = f32[] constant(0)
  n = f32[] constant(130)
  nb = f32[16] broadcast(n), dimensions={}
  s = f32[16] reduce(x, zero), dimensions={1}, to_apply=sum
  mean = f32[16] divide(s, nb)
  mb = f32[16,130] broadcast(mean), dimensions={0}
  d = f32[16,130] subtract(x, mb)
  d2 = f32[16,130] multiply(d, d)
  v = f32[16] reduce(d2, zero), dimensions={1}, to_apply=sum
  var = f32[16] divide(v, nb)
  eps = f32[] constant(1e-5)
  eb = f32[16] broadcast(eps), dimensions={}
  ve = f32[16] add(var, eb)
  r = f32[16] rsqrt(ve)
  rb = f32[16,130] broadcast(r), dimensions={0}
  y = f32[16,130] multiply(d, rb)
  gb = f32[16,130] broadcast(g), dimensions={1}
  ROOT o = f32[16,130] multiply(y, gb)
}
)";

// A column reduction broadcast back over columns: no row to hoist it into.
const char* kColumns = R"(ENTRY e {
  x = f32[64,32] parameter(0)
  zero = f32[] constant(0)
  s = f32[32] reduce(x, zero), dimensions={0}, to_apply=sum
  sb = f32[64,32] broadcast(s), dimensions={1}
  ROOT r = f32[64,32] subtract(x, sb)
}
)";

// %s has two readers that do not fuse with each other (one is the root's
// other operand path through a transpose).
const char* kTwoReaders = R"(ENTRY e {
  x = f32[32,32] parameter(0)
  zero = f32[] constant(0)
  s = f32[32] reduce(x, zero), dimensions={1}, to_apply=sum
  sb = f32[32,32] broadcast(s), dimensions={0}
  a = f32[32,32] subtract(x, sb)
  two = f32[] constant(2)
  twob = f32[32] broadcast(two), dimensions={}
  s2 = f32[32] multiply(s, twob)
  ROOT t = (f32[32,32], f32[32]) tuple(a, s2)
}
)";

// The consumer transposes x: its row index does not reach the reduction.
const char* kTransposed = R"(ENTRY e {
  x = f32[48,48] parameter(0)
  zero = f32[] constant(0)
  s = f32[48] reduce(x, zero), dimensions={1}, to_apply=sum
  sb = f32[48,48] broadcast(s), dimensions={0}
  t = f32[48,48] transpose(x), dimensions={1,0}
  ROOT r = f32[48,48] add(t, sb)
}
)";

// `text` with its leading dimension `from` ("[64") made `rows` long.
std::string withRows(std::string text, const std::string& from, int rows) {
    const std::string to = "[" + std::to_string(rows);
    for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
    return text;
}

}  // namespace

class TestPassRowFusion : public QObject {
    Q_OBJECT

    std::vector<PassDecision> m_decisions;

    // Fusion, then row fusion; checks the result, its meaning and that a
    // second run changes nothing. Returns the module's text.
    std::string run(const std::string& entry, const std::string& checks,
                    const std::string& target = "cpu", const std::string& fusionForbid = "") {
        const std::string hlo = std::string(kReducers) + entry;
        auto module = parseHloModule(hlo);
        if (!module.isOk()) {
            QTest::qFail(module.status().toString().c_str(), __FILE__, __LINE__);
            return {};
        }
        PassOptions fusionOptions{{"target", target}};
        if (!fusionForbid.empty()) fusionOptions.set("forbid", fusionForbid);
        auto fusion = FusionPass::create(fusionOptions);
        auto rows = RowFusionPass::create(PassOptions{{"target", target}});
        if (!fusion.isOk() || !rows.isOk() || !(*fusion)->run(**module).isOk()) {
            QTest::qFail("fusion failed", __FILE__, __LINE__);
            return {};
        }
        auto changed = (*rows)->run(**module);
        if (!changed.isOk()) {
            QTest::qFail(changed.status().toString().c_str(), __FILE__, __LINE__);
            return {};
        }
        if (Status s = verifyModule(**module, HloVerifierOptions{}); !s.isOk())
            QTest::qFail(s.toString().c_str(), __FILE__, __LINE__);
        const std::string text = printModule(**module, HloPrintOptions::canonical());
        std::string why = fileCheck(text, checks);
        if (!why.empty()) QTest::qFail((why + "\n" + text).c_str(), __FILE__, __LINE__);
        why = semantics(hlo, **module);
        if (!why.empty()) QTest::qFail(("semantics: " + why).c_str(), __FILE__, __LINE__);
        m_decisions = (*rows)->decisions();
        for (const PassDecision& d : m_decisions)
            if (d.reason.empty() || d.explanation.empty()) QTest::qFail("incomplete decision", __FILE__, __LINE__);
        (*rows)->clearRewrites();
        auto again = (*rows)->run(**module);
        if (!again.isOk() || *again || printModule(**module, HloPrintOptions::canonical()) != text)
            QTest::qFail("second run changed the module", __FILE__, __LINE__);
        return text;
    }

    bool decided(const std::string& reason) const {
        for (const PassDecision& d : m_decisions)
            if (d.reason == reason) return true;
        return false;
    }

private slots:
    void softmaxIsOneKernel() {
        const std::string text = run(kSoftmax, R"(
CHECK: %fused_computation
CHECK: %m = f32[64] reduce(
CHECK: %s = f32[64] reduce(
CHECK: ENTRY
CHECK: ROOT {{.*}} = f32[64,250] fusion(f32[64,250] %x{{.*}}), kind=kLoop
)");
        QCOMPARE(countOf(text, " fusion("), 1);
        QVERIFY(decided("fused"));
        // The reductions' init constants, left outside the bare reduces by the CPU's fusion,
        // go into the merged kernel.
        const std::string entry = text.substr(text.find("ENTRY"));
        QVERIFY2(entry.find(" constant(") == std::string::npos, entry.c_str());
    }

    void layerNormIsOneKernel() {
        const std::string text = run(kLayerNorm, R"(
CHECK: %fused_computation
CHECK: %s = f32[16] reduce(
CHECK: %v = f32[16] reduce(
CHECK: ENTRY
CHECK: ROOT {{.*}} = f32[16,130] fusion(f32[16,130] %x, {{.*}}), kind=kLoop
)");
        QCOMPARE(countOf(text, " fusion("), 1);
        const std::string entry = text.substr(text.find("ENTRY"));
        QVERIFY2(entry.find(" constant(") == std::string::npos, entry.c_str());
    }

    // On gpu the row kernel runs a block per row: 300 rows merge, 64 are left to the
    // reduction kernels, which split rows across blocks.
    void gpuMergesOnlyManyRows() {
        const std::string many = run(withRows(kSoftmax, "[64", 300), R"(
CHECK: %fused_computation
CHECK: %m = f32[300] reduce(
CHECK: %s = f32[300] reduce(
CHECK: ENTRY
CHECK: ROOT {{.*}} = f32[300,250] fusion(f32[300,250] %x{{.*}}), kind=kLoop
)",
                                     "gpu");
        QCOMPARE(countOf(many, " fusion("), 1);
        QVERIFY(decided("fused"));
        const std::string few = run(kSoftmax, "CHECK: ENTRY\n", "gpu");
        QVERIFY(countOf(few, " fusion(") > 1);
        QVERIFY(decided("no-predicted-gain"));
        for (const PassDecision& d : m_decisions)
            if (d.reason == "no-predicted-gain")
                QVERIFY2(d.explanation.find("only 64 rows") != std::string::npos,
                         d.explanation.c_str());
    }

    // On h100 the fusion pass leaves a layer norm's rsqrt(var + eps) as a kernel of its own
    // (fused elementwise it would be recomputed per element: here, forbidden to fuse);
    // row-fusion takes it into the loop that broadcasts it, computed once per row, and then
    // both reductions: one kernel.
    void gpuLayerNormIsOneKernel() {
        const std::string text = run(withRows(kLayerNorm, "[16", 300), R"(
CHECK: %fused_computation
CHECK: %s = f32[300] reduce(
CHECK: %v = f32[300] reduce(
CHECK: rsqrt(
CHECK: ENTRY
CHECK: ROOT {{.*}} = f32[300,130] fusion(f32[300,130] %x, {{.*}}), kind=kLoop
)",
                                     "gpu", "r:rb");
        QCOMPARE(countOf(text, " fusion("), 1);
        bool rowValue = false;
        for (const PassDecision& d : m_decisions)
            if (d.applied && d.explanation.find("is one value per row of") != std::string::npos)
                rowValue = true;
        QVERIFY(rowValue);
        // 16 rows: nothing merges on gpu, the rsqrt kernel included.
        const std::string few = run(kLayerNorm, "CHECK: ENTRY\n", "gpu", "r:rb");
        QVERIFY(countOf(few, " fusion(") > 1);
    }

    void columnReductionStaysApart() {
        const std::string text = run(kColumns, R"(
CHECK: reduce({{.*}}dimensions={0}
)");
        QVERIFY(m_decisions.empty());
        QVERIFY(countOf(text, "kind=kInput") + countOf(text, "= f32[32] reduce(") >= 1);
    }

    void reductionWithTwoReadersStaysApart() {
        run(kTwoReaders, "CHECK: ENTRY\n");
        QVERIFY(decided("would-duplicate-expensive-work"));
    }

    void transposingConsumerStaysApart() {
        run(kTransposed, "CHECK: ENTRY\n");
        QVERIFY(decided("not-fusible-op"));
        for (const PassDecision& d : m_decisions)
            if (d.reason == "not-fusible-op") QVERIFY2(d.explanation.find("transpose") != std::string::npos, d.explanation.c_str());
    }

    void forbidKeepsThePairApart() {
        const std::string hlo = std::string(kReducers) + kSoftmax;
        auto module = parseHloModule(hlo);
        QVERIFY(module.isOk());
        auto fusion = FusionPass::create(PassOptions{{"target", "cpu"}});
        QVERIFY(fusion.isOk() && (*fusion)->run(**module).isOk());
        // Names inside a fusion answer for it (FusionConfig::forbidden).
        auto rows = RowFusionPass::create(PassOptions{{"target", "cpu"}, {"forbid", "m:d"}});
        QVERIFY(rows.isOk());
        QVERIFY((*rows)->run(**module).isOk());
        bool forbidden = false;
        for (const PassDecision& d : (*rows)->decisions()) forbidden = forbidden || d.reason == "forbidden-by-user";
        QVERIFY(forbidden);
        // m (a reduce fusion with its init constant) and d stay in different kernels.
        auto holder = [&](std::string_view name) -> const HloInstruction* {
            for (const auto& x : (*module)->entryComputation()->instructions()) {
                if (x->name() == name) return x.get();
                if (x->opcode() == HloOpcode::kFusion && x->fusedComputation()->findInstruction(std::string(name)))
                    return x.get();
            }
            return nullptr;
        };
        QVERIFY(holder("m") && holder("d") && holder("m") != holder("d"));
    }
};

QTEST_GUILESS_MAIN(TestPassRowFusion)
#include "tst_pass_row_fusion.moc"
