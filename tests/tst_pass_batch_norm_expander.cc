// BatchNormExpanderPass: batch-norm-training, -inference and -grad become reduces, broadcasts
// and elementwise ops (feature dimension first, middle and last; f32, bf16, f64); the
// module verifies and computes what the interpreter's direct evaluation computes; one add
// reducer per type is shared; the pass runs in the cpu and gpu pipelines, not in the tpu
// one. The interpreter's own values are checked by hand in tst_evaluator_ops.
#include <QTest>

#include "compiler/passes/batch_norm_expander.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "tests/pass_check_util.h"
#include "tests/pass_test_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

const char* kTraining = R"(HloModule m
ENTRY e {
  x = f32[2,3,4] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT bn = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
})";

std::string module(const std::string& type, const std::string& dims, int64_t feature,
                   int64_t features, const std::string& op) {
    const std::string x = type + "[" + dims + "]";
    const std::string f = type + "[" + std::to_string(features) + "]";
    const std::string attrs = ", epsilon=0.01, feature_index=" + std::to_string(feature);
    std::string body;
    if (op == "training")
        body = "  ROOT bn = (" + x + ", " + f + ", " + f + ") batch-norm-training(x, s, o)" + attrs;
    else if (op == "inference")
        body = "  m = " + f + " parameter(3)\n  v0 = " + f + " parameter(4)\n  v = " + f +
               " multiply(v0, v0)\n  ROOT bn = " + x + " batch-norm-inference(x, s, o, m, v)" +
               attrs;
    else
        body = "  m = " + f + " parameter(3)\n  v0 = " + f + " parameter(4)\n  v = " + f +
               " multiply(v0, v0)\n  dy = " + x + " parameter(5)\n  ROOT bn = (" + x + ", " + f +
               ", " + f + ") batch-norm-grad(x, s, m, v, dy)" + attrs;
    return "HloModule m\nENTRY e {\n  x = " + x + " parameter(0)\n  s = " + f +
           " parameter(1)\n  o = " + f + " parameter(2)\n" + body + "\n}";
}

}  // namespace

class TestPassBatchNormExpander : public QObject {
    Q_OBJECT
private slots:
    void trainingBecomesReductionsAndLoops() {
        auto pass = BatchNormExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, kTraining);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %add_f32{{[.0-9]*}} (
CHECK: ENTRY
CHECK-NOT: batch-norm
CHECK: %bn.sum{{[.0-9]*}} = f32[3] reduce(f32[2,3,4] %x, f32[] %bn.constant{{[.0-9]*}}), dimensions={0,2}, to_apply=%add_f32
CHECK: f32[2,3,4] broadcast(f32[3] %bn.divide{{[.0-9]*}}), dimensions={1}
CHECK: f32[2,3,4] subtract(f32[2,3,4] %x,
CHECK: reduce(f32[2,3,4] %bn.multiply{{[.0-9]*}}, {{.*}} dimensions={0,2}, to_apply=%add_f32
CHECK: rsqrt(
CHECK: ROOT %bn.tuple{{[.0-9]*}} = (f32[2,3,4], f32[3], f32[3]) tuple(
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "expand-batch-norm"), 1);
        QCOMPARE((*pass)->statistics().at("expanded"), int64_t(1));
        // Two sums (mean, then the centred squares) share one reducer.
        QCOMPARE(countOf(run->text, "to_apply=%add_f32"), 2);
        why = semantics(kTraining, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void everyFormComputesTheSame_data() {
        QTest::addColumn<QString>("hlo");
        QTest::addColumn<double>("tolerance");
        for (const char* op : {"training", "inference", "grad"}) {
            const std::string name(op);
            QTest::newRow((name + ": f32, feature first").c_str())
                << QString::fromStdString(module("f32", "5,2,3", 0, 5, op)) << 1e-4;
            QTest::newRow((name + ": f32, feature last").c_str())
                << QString::fromStdString(module("f32", "4,3,6", 2, 6, op)) << 1e-4;
            QTest::newRow((name + ": f64, rank 2").c_str())
                << QString::fromStdString(module("f64", "7,3", 1, 3, op)) << 1e-10;
            QTest::newRow((name + ": bf16, computed in f32").c_str())
                << QString::fromStdString(module("bf16", "8,4", 1, 4, op)) << 2e-2;
            QTest::newRow((name + ": one feature, rank 1").c_str())
                << QString::fromStdString(module("f32", "9", 0, 9, op)) << 1e-4;
        }
    }
    void everyFormComputesTheSame() {
        QFETCH(QString, hlo);
        QFETCH(double, tolerance);
        const std::string text = hlo.toStdString();
        auto pass = BatchNormExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, text);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        QCOMPARE(countOf(run->text, "batch-norm"), 0);
        auto before = parseHloModule(text);
        QVERIFY(before.isOk());
        for (uint64_t seed : {1, 2}) {
            bool evaluated = false;
            const std::string why =
                sameResults(**before, *run->module, seed, tolerance, &evaluated);
            QVERIFY2(why.empty(), why.c_str());
            QVERIFY(evaluated);
        }
    }

    // Several ops of one type share a reducer; a second run finds nothing to do.
    void reducersAreSharedAndTheRunIsIdempotent() {
        const std::string text = R"(HloModule m
ENTRY e {
  x = f32[4,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  a = (f32[4,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0.1, feature_index=1
  y = f32[4,2] get-tuple-element(a), index=0
  m = f32[2] get-tuple-element(a), index=1
  v = f32[2] get-tuple-element(a), index=2
  ROOT b = f32[4,2] batch-norm-inference(y, s, o, m, v), epsilon=0.1, feature_index=1
})";
        auto pass = BatchNormExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, text);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QCOMPARE((*pass)->statistics().at("expanded"), int64_t(2));
        QCOMPARE(run->module->computationCount(), int64_t(2));
        std::string why = semantics(text, *run->module);
        QVERIFY2(why.empty(), why.c_str());
        auto again = (*pass)->run(*run->module);
        QVERIFY(again.isOk());
        QVERIFY(!*again);
    }

    void inTheCpuAndGpuPipelinesOnly() {
        for (const char* target : {"cpu", "gpu", "tpu"}) {
            auto pipeline = targetPipeline(target);
            QVERIFY2(pipeline.isOk(), target);
            int found = 0;
            for (const PipelineStep& step : pipeline->steps)
                found += step.pass == "batch-norm-expander";
            QCOMPARE(found, std::string_view(target) == "tpu" ? 0 : 1);
        }
    }
};

QTEST_APPLESS_MAIN(TestPassBatchNormExpander)
#include "tst_pass_batch_norm_expander.moc"
