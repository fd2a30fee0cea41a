// AnnotationRemoverPass: partitioning and memory-space annotations that keep
// their operand's shape disappear (their users read the value), wherever they
// are; ones that change the shape or carry control edges stay, counted; the
// module computes what it computed; right after the expanders in every pipeline.
#include <QTest>

#include "compiler/passes/annotation_remover.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "tests/pass_check_util.h"
#include "tests/pass_test_util.h"

using namespace hloscope;
using namespace hloscope::testing;

class TestPassAnnotationRemover : public QObject {
    Q_OBJECT
private slots:
    void removesShapeKeepingAnnotations() {
        const std::string hlo = R"(HloModule m
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  h = f32[8] custom-call(x), custom_call_target="MoveToHost"
  d = f32[8] custom-call(h), custom_call_target="MoveToDevice"
  e = f32[8] exponential(d)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(j, e)
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(2)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[2,4] parameter(1)
  s = f32[8] custom-call(a), custom_call_target="Sharding", sharding={devices=[2]<=[2]}
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, s)
  loop = (s32[], f32[8]) while(init), condition=cond, body=body
  y = f32[8] get-tuple-element(loop), index=1
  shard = f32[1,4] custom-call(b), custom_call_target="SPMDFullToShardShape"
  r = f32[2,4] reshape(y)
  ROOT out = f32[2,4] custom-call(r), custom_call_target="Sharding", sharding={replicated}
})";
        auto pass = AnnotationRemoverPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: body
CHECK-NOT: MoveTo
CHECK: exponential(f32[8] %x)
CHECK: ENTRY
CHECK: tuple(s32[] %z, f32[8] %a)
CHECK: custom-call(f32[2,4] %b), custom_call_target="SPMDFullToShardShape"
CHECK: ROOT %r = f32[2,4] reshape(
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(countOf(run->text, "\"Sharding\""), 0);
        QCOMPARE(ruleCount(**pass, "remove-annotation"), 4);
        QCOMPARE((*pass)->statistics().at("removed"), int64_t(4));
        // The shard changes the shape: a partitioned module's, left as it is.
        QCOMPARE((*pass)->statistics().at("left"), int64_t(1));
        why = semantics(hlo, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void nothingToDo() {
        auto pass = AnnotationRemoverPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="my_kernel"
})");
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        QCOMPARE((*pass)->statistics().at("left"), int64_t(0));
    }

    void afterTheExpandersInEveryPipeline() {
        for (const char* target : {"cpu", "gpu", "tpu", "h100"}) {
            auto pipeline = targetPipeline(target);
            QVERIFY2(pipeline.isOk(), target);
            QVERIFY(pipeline->steps.size() > 3);
            // tpu: no batch-norm-expander; gpu: a triangular-solve-expander.
            const std::string_view name(target);
            const size_t at = name == "cpu" ? 3 : name == "tpu" ? 2 : 4;
            QCOMPARE(pipeline->steps[at].pass, std::string("annotation-remover"));
            QCOMPARE(pipeline->steps[at + 1].pass, std::string("call-inliner"));
        }
    }
};

QTEST_GUILESS_MAIN(TestPassAnnotationRemover)
#include "tst_pass_annotation_remover.moc"
