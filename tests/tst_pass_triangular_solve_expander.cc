// TriangularSolveExpanderPass: every form of triangular-solve (left and right side, lower and
// upper, no transpose, transpose and adjoint, unit diagonal or not; f32, f64 and c64; batched)
// becomes a substitution loop that computes what the interpreter's own solve computes, reading
// only a's triangle (the other one holds NaNs here); the pass is in the gpu pipeline only.
#include <QTest>

#include "compiler/passes/triangular_solve_expander.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "tests/pass_check_util.h"
#include "tests/pass_test_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

// a: the parameter with m added to its diagonal (well conditioned) and NaN in the triangle
// the solve must not read; b: a parameter.
std::string module(const std::string& type, const std::string& batch, int64_t m, int64_t n,
                   bool leftSide, bool lower, bool unit, const std::string& transpose) {
    const std::string prefix = batch.empty() ? "" : batch + ",";
    const std::string aDims = prefix + std::to_string(m) + "," + std::to_string(m);
    const std::string bDims = prefix + (leftSide ? std::to_string(m) + "," + std::to_string(n)
                                                 : std::to_string(n) + "," + std::to_string(m));
    const int64_t rank = batch.empty() ? 2 : 3;
    const std::string a = type + "[" + aDims + "]";
    const std::string pred = "pred[" + aDims + "]";
    const std::string s32 = "s32[" + aDims + "]";
    const bool complex = type == "c64";
    return "HloModule m\nENTRY e {\n"
           "  p = " +
           a +
           " parameter(0)\n"
           "  b = " +
           type + "[" + bDims +
           "] parameter(1)\n"
           "  r = " +
           s32 + " iota(), iota_dimension=" + std::to_string(rank - 2) +
           "\n"
           "  c = " +
           s32 + " iota(), iota_dimension=" + std::to_string(rank - 1) +
           "\n"
           "  diag = " +
           pred +
           " compare(r, c), direction=EQ\n"
           "  other = " +
           pred + " compare(r, c), direction=" + (lower ? "LT" : "GT") +
           "\n"
           "  k = " +
           type + "[] constant(" +
           (complex ? "(" + std::to_string(m) + ", 1)" : std::to_string(m)) +
           ")\n"
           "  kb = " +
           a +
           " broadcast(k), dimensions={}\n"
           "  pk = " +
           a +
           " add(p, kb)\n"
           "  nan = " +
           type + "[] constant(" + (complex ? "(nan, 0)" : "nan") +
           ")\n"
           "  nanb = " +
           a +
           " broadcast(nan), dimensions={}\n"
           "  d = " +
           a +
           " select(diag, pk, p)\n"
           "  a = " +
           a +
           " select(other, nanb, d)\n"
           "  ROOT x = " +
           type + "[" + bDims +
           "] triangular-solve(a, b), left_side=" + (leftSide ? "true" : "false") +
           ", lower=" + (lower ? "true" : "false") +
           ", unit_diagonal=" + (unit ? "true" : "false") + ", transpose_a=" + transpose + "\n}\n";
}

}  // namespace

class TestPassTriangularSolveExpander : public QObject {
    Q_OBJECT
private slots:
    void becomesASubstitutionLoop() {
        const std::string text = module("f32", "", 4, 3, true, true, false, "NO_TRANSPOSE");
        auto pass = TriangularSolveExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, text);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QVERIFY(run->changed);
        std::string why = fileCheck(run->text, R"(
CHECK: %x.condition{{[.0-9]*}} (
CHECK: compare(s32[] %{{.*}}, s32[] %x.constant{{[.0-9]*}}), direction=LT
CHECK: %x.body{{[.0-9]*}} (
CHECK: f32[1,4] dynamic-slice(
CHECK: f32[1,3] dot(f32[1,4] %x.a_row{{[.0-9]*}}, f32[4,3] %x.element{{[.0-9]*}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}
CHECK: f32[1,3] subtract(
CHECK: f32[1,3] divide(
CHECK: f32[4,3] dynamic-update-slice(
CHECK: ENTRY
CHECK: %x.triangle{{[.0-9]*}} = f32[4,4] select(
CHECK-NOT: triangular-solve
CHECK: while(
)");
        QVERIFY2(why.empty(), why.c_str());
        QCOMPARE(ruleCount(**pass, "expand-triangular-solve"), 1);
        why = semantics(text, *run->module);
        QVERIFY2(why.empty(), why.c_str());
    }

    void everyFormComputesTheSame_data() {
        QTest::addColumn<QString>("hlo");
        QTest::addColumn<double>("tolerance");
        for (bool leftSide : {true, false})
            for (bool lower : {true, false})
                for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"})
                    for (bool unit : {false, true}) {
                        const std::string name = std::string(leftSide ? "left" : "right") +
                                                 (lower ? ", lower, " : ", upper, ") + transpose +
                                                 (unit ? ", unit diagonal" : "");
                        QTest::newRow(name.c_str())
                            << QString::fromStdString(
                                   module("f32", "", 5, 3, leftSide, lower, unit, transpose))
                            << 1e-4;
                    }
        QTest::newRow("batched, f64")
            << QString::fromStdString(module("f64", "2", 4, 2, true, false, false, "TRANSPOSE"))
            << 1e-10;
        QTest::newRow("c64, adjoint, right side")
            << QString::fromStdString(module("c64", "", 3, 2, false, true, false, "ADJOINT"))
            << 1e-4;
        QTest::newRow("c64, batched, left, upper")
            << QString::fromStdString(module("c64", "3", 3, 2, true, false, false, "NO_TRANSPOSE"))
            << 1e-4;
    }
    void everyFormComputesTheSame() {
        QFETCH(QString, hlo);
        QFETCH(double, tolerance);
        const std::string text = hlo.toStdString();
        auto pass = TriangularSolveExpanderPass::create({});
        QVERIFY(pass.isOk());
        auto run = runPass(**pass, text);
        QVERIFY2(run.isOk(), run.status().toString().c_str());
        QCOMPARE(countOf(run->text, "triangular-solve"), 0);
        auto before = parseHloModule(text);
        QVERIFY(before.isOk());
        for (uint64_t seed : {1, 5}) {
            bool evaluated = false;
            const std::string why =
                sameResults(**before, *run->module, seed, tolerance, &evaluated);
            QVERIFY2(why.empty(), why.c_str());
            QVERIFY(evaluated);
        }
    }

    void inTheGpuPipelineOnly() {
        for (const char* target : {"cpu", "gpu", "tpu"}) {
            auto pipeline = targetPipeline(target);
            QVERIFY2(pipeline.isOk(), target);
            int found = 0;
            for (const PipelineStep& step : pipeline->steps)
                found += step.pass == "triangular-solve-expander";
            QCOMPARE(found, std::string_view(target) == "gpu" ? 1 : 0);
        }
    }
};

QTEST_APPLESS_MAIN(TestPassTriangularSolveExpander)
#include "tst_pass_triangular_solve_expander.moc"
