// The kernel table (views/kernels/): the rows of a state after the cpu pipeline (one per
// kernel, in the cost command's order, with layers when the state has them), the model under
// QAbstractItemModelTester, sorting by number, filtering, measured times, CSV, and selection
// both ways.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "compiler/cost/performance_model.h"
#include "core/io/module_io.h"
#include "tests/panel_test_util.h"
#include "views/kernels/kernel_table.h"
#include "views/model/model_figures.h"
#include "tests/event_wait.h"

using namespace hloscope;
using namespace hloscope::testing;

class TestKernelTable : public QObject {
    Q_OBJECT
private slots:
    void rowsAreTheCostCommandsKernels() {
        DocumentStatePtr state = makeState("layernorm.hlo", "cpu");
        QVERIFY(state);
        auto rows = computeKernelRows(*state);
        QVERIFY(rows.isOk());
        auto target = targetForName("cpu");
        QVERIFY(target.isOk());
        const ModulePrediction prediction = predictModule(*state->module, *target);
        QCOMPARE(rows->rows.size(), prediction.kernels.size());
        double sum = 0;
        for (size_t i = 0; i < rows->rows.size(); ++i) {
            QCOMPARE(rows->rows[i].name, prediction.kernels[i].instruction->name());
            sum += rows->rows[i].predictedSeconds;
        }
        // The total adds the runtime's per-run overhead of a calibrated cpu target.
        sum += prediction.overheadSeconds;
        QVERIFY2(qAbs(sum - rows->totalPredictedSeconds) <= 1e-9 * rows->totalPredictedSeconds + 1e-12,
                 qPrintable(QStringLiteral("rows %1 s + overhead %2 s, total %3 s")
                                .arg(sum - prediction.overheadSeconds)
                                .arg(prediction.overheadSeconds)
                                .arg(rows->totalPredictedSeconds)));
        // After the pipeline the layer norm is a few fusions, each holding several ops.
        bool fusion = false;
        for (const KernelRow& row : rows->rows)
            if (row.kind.rfind("fusion", 0) == 0) fusion = fusion || row.ops > 1;
        QVERIFY(fusion);
    }

    void modelSortsFiltersAndExports() {
        DocumentStatePtr state = makeState("mlp.hlo", "cpu");
        QVERIFY(state);
        KernelTablePanel panel;
        QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(panel.filter(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy ready(&panel, &KernelTablePanel::rowsReady);
        panel.setState(state);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 30000);
        const int n = panel.model()->rowCount();
        QVERIFY(n >= 2);
        QVERIFY(panel.summaryText().contains(QStringLiteral("%1 kernels").arg(n)));
        // Sorting by predicted time, largest first, compares numbers.
        panel.table()->sortByColumn(KernelTableModel::kPredicted, Qt::DescendingOrder);
        double previous = 1e300;
        for (int r = 0; r < panel.filter()->rowCount(); ++r) {
            const double seconds =
                panel.filter()->index(r, KernelTableModel::kPredicted).data(KernelTableModel::kSortRole).toDouble();
            QVERIFY(seconds <= previous);
            previous = seconds;
        }
        // Filtering by kind.
        panel.filter()->setFilterFixedString(QStringLiteral("fusion"));
        QVERIFY(panel.filter()->rowCount() >= 1 && panel.filter()->rowCount() <= n);
        for (int r = 0; r < panel.filter()->rowCount(); ++r)
            QVERIFY(panel.filter()->index(r, KernelTableModel::kKind).data().toString().startsWith(QLatin1String("fusion")));
        // CSV of the rows shown.
        const QString csv = panel.csv();
        QCOMPARE(csv.count(QLatin1Char('\n')), panel.filter()->rowCount() + 1);
        QVERIFY(csv.startsWith(QLatin1String("order,kernel,kind,layer,ops,bytes,flops,executions,predicted_seconds,measured_seconds\n")));
        QTemporaryDir dir;
        QString error;
        QVERIFY2(panel.exportCsv(dir.filePath(QStringLiteral("k.csv")), &error), qPrintable(error));
        QVERIFY(!panel.exportCsv(dir.filePath(QStringLiteral("missing/k.csv")), &error));
        QVERIFY(error.contains(QLatin1String("missing")));
        // Measured times fill their column.
        const QString first = panel.model()->index(0, KernelTableModel::kKernel).data().toString();
        panel.setMeasuredTimes({{first, 2.5e-3}});
        QCOMPARE(panel.model()->index(0, KernelTableModel::kMeasured).data().toString(), QStringLiteral("2.5 ms"));
        QCOMPARE(panel.model()->index(1, KernelTableModel::kMeasured).data().toString(), QStringLiteral("-"));
    }

    void selectionBothWays() {
        DocumentStatePtr state = makeState("mlp.hlo", "cpu");
        QVERIFY(state);
        KernelTablePanel panel;
        QSignalSpy ready(&panel, &KernelTablePanel::rowsReady);
        panel.setState(state);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 30000);
        QSignalSpy selected(&panel, &KernelTablePanel::instructionSelected);
        const QString name = panel.filter()->index(1, KernelTableModel::kKernel).data().toString();
        panel.table()->setCurrentIndex(panel.filter()->index(1, 0));
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).toString(), name);
        // Selecting elsewhere (the graph) moves the table's row without echoing the signal.
        const QString other = panel.filter()->index(0, KernelTableModel::kKernel).data().toString();
        panel.selectInstruction(other);
        QCOMPARE(panel.table()->currentIndex().row(), 0);
        QCOMPARE(selected.count(), 1);
    }

    // An optimized dump (is_scheduled=true): XLA's kernels, # in the schedule's order.
    void scheduledModuleInItsOrder() {
        auto module = loadModuleFromFile(HLOSCOPE_SOURCE_DIR
                                         "/tests/data/xla_dump_mlp/module_0001.jit_mlp.sm_90a_gpu_after_optimizations.txt");
        QVERIFY(module.isOk());
        auto state = std::make_shared<DocumentState>();
        state->target = "h100";
        state->module = std::shared_ptr<const HloModule>(std::move(*module));
        auto rows = computeKernelRows(*state);
        QVERIFY(rows.isOk());
        QVERIFY(rows->scheduled);
        QStringList names;
        std::vector<KernelRow> sorted = rows->rows;
        std::sort(sorted.begin(), sorted.end(), [](const KernelRow& a, const KernelRow& b) { return a.order < b.order; });
        for (const KernelRow& row : sorted) names << QString::fromStdString(row.name);
        QCOMPARE(names, (QStringList{"dot.6", "loop_maximum_fusion", "dot.12", "input_reduce_fusion"}));
        QCOMPARE(sorted[1].kind, std::string("fusion kLoop"));
        QCOMPARE(sorted[1].ops, int64_t(5));
    }

    void noDocument() {
        KernelTablePanel panel;
        panel.setState(nullptr);
        QCOMPARE(panel.model()->rowCount(), 0);
        QVERIFY(panel.summaryText().contains(QLatin1String("No kernels")));
    }
};

QTEST_MAIN(TestKernelTable)
#include "tst_kernel_table.moc"
