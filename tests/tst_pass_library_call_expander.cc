// LibraryCallExpanderPass: XLA:GPU's cuBLAS / cuDNN custom-calls become the
// HLO they stand for (what they compute is tst_library_calls'), wherever
// they are; calls the expansion cannot say are left, counted, and the
// module still verifies and computes the same values.
#include <QTest>

#include "compiler/passes/library_call_expander.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "tests/pass_check_util.h"
#include "tests/pass_test_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

const char* kModule = R"(HloModule m
body {
  s = (s32[], f32[1,6,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[1,6,4] get-tuple-element(s), index=1
  w = f32[3,4,4] constant({{{1,0,0,0},{0,1,0,0},{0,0,1,0},{0,0,0,1}},{{0.5,0,0,0},{0,0.5,0,0},{0,0,0.5,0},{0,0,0,0.5}},{{0,0,0,1},{0,0,1,0},{0,1,0,0},{1,0,0,0}}})
  conv = (f32[1,6,4], u8[0]) custom-call(x, w), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, custom_call_target="__cudnn$convForward", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":0.25}}
  y = f32[1,6,4] get-tuple-element(conv), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[1,6,4]) tuple(next, y)
}
cond {
  s = (s32[], f32[1,6,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
ENTRY e {
  a = f32[6,8] parameter(0)
  b = f32[8,4] parameter(1)
  g = (f32[6,4], s8[1024]) custom-call(a, b), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"RELU"}}
  d = f32[6,4] get-tuple-element(g), index=0
  r = f32[1,6,4] reshape(d)
  zero = s32[] constant(0)
  init = (s32[], f32[1,6,4]) tuple(zero, r)
  loop = (s32[], f32[1,6,4]) while(init), condition=cond, body=body
  ROOT out = f32[1,6,4] get-tuple-element(loop), index=1
})";

}  // namespace

class TestPassLibraryCallExpander : public QObject {
    Q_OBJECT
private slots:
    void expandsCallsInEveryComputation() {
        auto pass = LibraryCallExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, kModule);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: body
CHECK-NOT: custom-call
CHECK: %conv.convolution{{[.0-9]*}} = f32[1,6,4] convolution(
CHECK-SAME: window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f
CHECK: multiply(
CHECK: ENTRY
CHECK-NOT: custom-call
CHECK: %g.dot{{[.0-9]*}} = f32[6,4] dot(f32[6,8] %a, f32[8,4] %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
CHECK-NEXT: constant(0)
CHECK: maximum(
CHECK: s8[1024] broadcast(
CHECK: tuple(
CHECK-NEXT: %d = f32[6,4] get-tuple-element(
CHECK: while(
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "expand-library-call"), 2);
        QCOMPARE((*pass)->statistics().at("expanded"), int64_t(2));
        QCOMPARE((*pass)->statistics().at("left"), int64_t(0));
        why = semantics(kModule, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void leavesWhatItCannotSay() {
        // An fp8 scaling output and a gemm with no config stay as they are.
        const std::string hlo = R"(HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  g = f32[2,2] custom-call(a, b), custom_call_target="__cublas$gemm"
  ROOT h = f32[2,2] custom-call(g, b), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"damax_output":true,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})";
        auto pass = LibraryCallExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, hlo);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(!run->changed);
        QCOMPARE(countOf(run->text, "custom-call("), 2);
        QCOMPARE((*pass)->statistics().at("left"), int64_t(2));
        QCOMPARE(ruleCount(**pass, "expand-library-call"), 0);
    }

    void firstInEveryPipeline() {
        for (const char* target : {"cpu", "gpu", "tpu", "h100"}) {
            auto pipeline = targetPipeline(target);
            QVERIFY2(pipeline.isOk(), target);
            QVERIFY(!pipeline->steps.empty());
            QCOMPARE(pipeline->steps.front().pass, std::string("library-call-expander"));
        }
    }
};

QTEST_GUILESS_MAIN(TestPassLibraryCallExpander)
#include "tst_pass_library_call_expander.moc"
