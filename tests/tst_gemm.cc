// GEMM for the CPU runtime: which dots planGemm maps (plain, transposed
// operands, batches, several contracting dimensions, vectors) and which it
// refuses with a reason; runGemm's results against the reference
// interpreter, on one thread and on a pool, at odd sizes.
#include <QTest>

#include <string>

#include "compiler/runtime/execution_modes.h"
#include "compiler/runtime/gemm.h"
#include "compiler/runtime/interpreter_device.h"
#include "compiler/runtime/thread_pool.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/hlo_instruction.h"
#include "core/text/hlo_parser.h"

using namespace hloscope;

namespace {

// A module whose root is `dot` over parameters of the given shapes.
std::string dotModule(const std::string& lhs, const std::string& rhs, const std::string& out,
                      const std::string& attributes) {
    return "HloModule g\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs + " parameter(1)\n  ROOT d = " +
           out + " dot(a, b)" + (attributes.empty() ? "" : ", " + attributes) + "\n}\n";
}

}  // namespace

class TestGemm : public QObject {
    Q_OBJECT
private slots:
    void plansAndResults_data() {
        QTest::addColumn<QString>("hlo");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<qint64>("k");
        QTest::addColumn<bool>("lhsTransposed");
        QTest::addColumn<bool>("rhsTransposed");
        auto row = [](const char* name, const std::string& hlo, qint64 b, qint64 m, qint64 n, qint64 k, bool lt,
                      bool rt) { QTest::newRow(name) << QString::fromStdString(hlo) << b << m << n << k << lt << rt; };
        row("plain", dotModule("f32[67,129]", "f32[129,45]", "f32[67,45]",
                               "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 1, 67, 45, 129, false, false);
        row("lhs transposed", dotModule("f32[129,67]", "f32[129,45]", "f32[67,45]",
                                        "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), 1, 67, 45, 129, true,
            false);
        row("rhs transposed", dotModule("f32[67,129]", "f32[45,129]", "f32[67,45]",
                                        "lhs_contracting_dims={1}, rhs_contracting_dims={1}"), 1, 67, 45, 129, false,
            true);
        row("both transposed", dotModule("f64[33,20]", "f64[17,33]", "f64[20,17]",
                                         "lhs_contracting_dims={0}, rhs_contracting_dims={1}"), 1, 20, 17, 33, true,
            true);
        row("batch", dotModule("f32[3,2,31,40]", "f32[3,2,40,9]", "f32[3,2,31,9]",
                               "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, "
                               "rhs_contracting_dims={2}"), 6, 31, 9, 40, false, false);
        row("two contracting", dotModule("f32[10,6,7]", "f32[6,7,11]", "f32[10,11]",
                                         "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}"), 1, 10, 11, 42,
            false, false);
        row("two free", dotModule("f32[4,5,16]", "f32[16,3,2]", "f32[4,5,3,2]",
                                  "lhs_contracting_dims={2}, rhs_contracting_dims={0}"), 1, 20, 6, 16, false, false);
        row("vector matrix", dotModule("f32[50]", "f32[50,13]", "f32[13]",
                                       "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), 1, 1, 13, 50, false,
            false);
        row("matrix vector", dotModule("f64[13,50]", "f64[50]", "f64[13]",
                                       "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 1, 13, 1, 50, false,
            false);
        row("outer product", dotModule("f32[7]", "f32[5]", "f32[7,5]", ""), 1, 7, 5, 1, false, false);
        row("large", dotModule("f32[300,256]", "f32[256,190]", "f32[300,190]",
                               "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 1, 300, 190, 256, false, false);
        // 16-bit floats: widened to f32, multiplied in f32, the result rounded.
        row("bf16", dotModule("bf16[67,129]", "bf16[129,45]", "bf16[67,45]",
                              "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), 1, 67, 45, 129, false, false);
        row("bf16 into f32", dotModule("bf16[3,31,40]", "bf16[3,9,40]", "f32[3,31,9]",
                                       "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                                       "rhs_contracting_dims={2}"), 3, 31, 9, 40, false, true);
        row("f8 into bf16", dotModule("f8e4m3fn[2,24,32]", "f8e5m2[2,32,12]", "bf16[2,24,12]",
                                      "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                                      "rhs_contracting_dims={1}"), 2, 24, 12, 32, false, false);
        row("f16 and f32", dotModule("f16[40,20]", "f32[40,17]", "f16[20,17]",
                                     "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), 1, 20, 17, 40, true,
            false);
    }

    void plansAndResults() {
        QFETCH(QString, hlo);
        auto module = parseHloModule(hlo.toStdString());
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        const HloInstruction* dot = (*module)->entryComputation()->root();
        auto plan = planGemm(*dot);
        QVERIFY2(plan.isOk(), plan.status().toString().c_str());
        QTEST(qint64(plan->batch), "batch");
        QTEST(qint64(plan->m), "m");
        QTEST(qint64(plan->n), "n");
        QTEST(qint64(plan->k), "k");
        QTEST(plan->lhsTransposed, "lhsTransposed");
        QTEST(plan->rhsTransposed, "rhsTransposed");
        const auto args = makeRandomArguments(*(*module)->entryComputation(), 7);
        auto reference = InterpreterDevice().run(**module, args, {});
        QVERIFY(reference.isOk());
        ThreadPool pool(3);
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
            Literal out(dot->shape());
            runGemm(*plan, args[0].untypedData(), args[1].untypedData(), out.untypedData(), p);
            const OutputCheck check = checkOutputs(reference->outputs, {out});
            QVERIFY2(check.passed, check.detail.c_str());
            // Summation order differs by kernel (baseline, AVX2, AVX-512), so
            // elements near zero can differ in relative terms; absolutely the
            // results agree to float rounding of sums of order 10.
            // A 16-bit result may round the other way: one unit in the last place of values
            // up to about 16 (1/8 for bf16).
            const double bound = plan->converts() ? 0.125 : 1e-4;
            const PrimitiveType type = dot->shape().elementType();
            QCOMPARE(plan->converts(),
                     (type != PrimitiveType::F32 && type != PrimitiveType::F64) ||
                         dot->operand(0)->shape().elementType() != type);
            QVERIFY2(check.maxAbsError < bound, ("max relative error " + std::to_string(check.maxRelError) + ", abs " +
                                                std::to_string(check.maxAbsError)).c_str());
        }
    }

    void refused_data() {
        QTest::addColumn<QString>("hlo");
        QTest::addColumn<QString>("why");
        QTest::newRow("integer") << QString::fromStdString(dotModule("s32[4,5]", "s32[5,6]", "s32[4,6]",
                                                                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}"))
                                 << "element type s32";
        QTest::newRow("f64 and f32") << QString::fromStdString(dotModule("f64[4,5]", "f32[5,6]", "f64[4,6]",
                                                                         "lhs_contracting_dims={1}, rhs_contracting_dims={0}"))
                                     << "mixed element types";
        QTest::newRow("layout") << QString::fromStdString(dotModule("f32[4,5]{0,1}", "f32[5,6]", "f32[4,6]",
                                                                    "lhs_contracting_dims={1}, rhs_contracting_dims={0}"))
                                << "default dense layout";
        QTest::newRow("interleaved") << QString::fromStdString(dotModule("f32[4,5,6]", "f32[5,7]", "f32[4,6,7]",
                                                                         "lhs_contracting_dims={1}, rhs_contracting_dims={0}"))
                                     << "interleaved";
        QTest::newRow("batch last") << QString::fromStdString(dotModule("f32[4,5,3]", "f32[5,6,3]", "f32[3,4,6]",
                                                                        "lhs_batch_dims={2}, lhs_contracting_dims={1}, "
                                                                        "rhs_batch_dims={2}, rhs_contracting_dims={0}"))
                                    << "batch dimensions are not the leading ones";
    }

    void refused() {
        QFETCH(QString, hlo);
        QFETCH(QString, why);
        auto module = parseHloModule(hlo.toStdString());
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        auto plan = planGemm(*(*module)->entryComputation()->root());
        QVERIFY(!plan.isOk());
        QVERIFY2(plan.status().message().find(why.toStdString()) != std::string::npos, plan.status().message().c_str());
        QVERIFY(plan.status().message().find("%d") != std::string::npos);  // names the instruction
    }

    void kernelName() {
        const std::string name = gemmKernelName();
        QVERIFY(name == "avx512" || name == "avx2+fma" || name == "baseline");
    }
};

QTEST_GUILESS_MAIN(TestGemm)
#include "tst_gemm.moc"
