// PassListModel (QAbstractItemModelTester), the hide-unchanged proxy and
// keyboard / button stepping of PassStepperWidget, driven by real states
// from a DocumentWorker.
#include <QAbstractItemModelTester>
#include <QMenu>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

#include "views/document/document_worker.h"
#include "views/passes/pass_list_model.h"
#include "views/passes/pass_stepper_widget.h"
#include "tests/event_wait.h"

using namespace hloscope;

class TestPassStepper : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { qRegisterMetaType<hloscope::DocumentStatePtr>(); }

    void modelFollowsStates() {
        DocumentWorker worker;
        PassListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        connect(&worker, &DocumentWorker::stateChanged, &model, &PassListModel::setState);
        worker.openExample(QStringLiteral("mlp"));
        DocumentStatePtr state = worker.state();
        const int passes = static_cast<int>(state->passes.size());
        QCOMPARE(model.rowCount(), passes + 1);
        QCOMPARE(model.columnCount(), int(PassListModel::kColumnCount));
        QCOMPARE(model.index(0, PassListModel::kPass).data().toString(), QStringLiteral("input"));
        QCOMPARE(model.index(1, PassListModel::kPass).data().toString(),
                 QString::fromStdString(state->passes[0]));
        QCOMPARE(model.index(1, PassListModel::kIndex).data().toString(), QStringLiteral("0"));
        QVERIFY(!model.index(1, 0).data(PassListModel::kRunRole).toBool());
        QVERIFY(model.index(0, 0).data(PassListModel::kCurrentRole).toBool());
        QVERIFY(model.index(0, 0).data(Qt::FontRole).value<QFont>().bold());
        QCOMPARE(model.index(1, PassListModel::kEnabled).data(Qt::CheckStateRole).toInt(), int(Qt::Checked));

        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        worker.stepTo(passes);
        QCOMPARE(resets.size(), 0);  // same passes: rows stay, data changes
        state = worker.state();
        for (int row = 1; row <= passes; ++row) {
            const PassSnapshot& s = (*state->snapshots)[static_cast<size_t>(row)];
            QVERIFY(model.index(row, 0).data(PassListModel::kRunRole).toBool());
            QCOMPARE(model.index(row, 0).data(PassListModel::kChangedRole).toBool(), s.changed);
            QCOMPARE(model.index(row, PassListModel::kChanged).data().toString(),
                     s.changed ? QStringLiteral("●") : QStringLiteral("·"));
            QCOMPARE(model.index(row, PassListModel::kChanges).data().toInt(), PassListModel::changeCount(s));
            QVERIFY(model.index(row, PassListModel::kTime).data().toString().endsWith(QLatin1String(" ms")));
            QVERIFY(!model.index(row, PassListModel::kPeakMemory).data().toString().isEmpty());
        }
        QVERIFY(model.index(passes, 0).data(PassListModel::kCurrentRole).toBool());

        // Unchecking asks for a re-run; the model follows the state that comes back.
        QSignalSpy requests(&model, &PassListModel::passEnabledChangeRequested);
        connect(&model, &PassListModel::passEnabledChangeRequested, &worker, &DocumentWorker::setPassEnabled);
        model.setData(model.index(2, PassListModel::kEnabled), Qt::Unchecked, Qt::CheckStateRole);
        QCOMPARE(requests.size(), 1);
        QCOMPARE(requests[0][0].toInt(), 1);
        QCOMPARE(model.index(2, PassListModel::kEnabled).data(Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
        QCOMPARE(model.index(2, PassListModel::kChanged).data().toString(), QStringLiteral("off"));

        // Another document with other passes resets the rows.
        worker.setTarget(QStringLiteral("tpu_v5e"));
        worker.openExample(QStringLiteral("softmax"));
        QCOMPARE(model.rowCount(), static_cast<int>(worker.state()->passes.size()) + 1);
    }

    void hideUnchanged() {
        DocumentWorker worker;
        PassStepperWidget stepper;
        QAbstractItemModelTester tester(stepper.proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        connect(&worker, &DocumentWorker::stateChanged, &stepper, &PassStepperWidget::setState);
        worker.openExample(QStringLiteral("mlp"));
        const int passes = static_cast<int>(worker.state()->passes.size());
        worker.stepTo(passes);
        worker.stepTo(0);
        DocumentStatePtr state = worker.state();
        int changed = 0;
        for (int i = 1; i <= passes; ++i) changed += (*state->snapshots)[static_cast<size_t>(i)].changed;
        QVERIFY(changed > 0 && changed < passes);
        QCOMPARE(stepper.proxy()->rowCount(), passes + 1);
        stepper.setHideUnchanged(true);
        QCOMPARE(stepper.proxy()->rowCount(), changed + 1);  // input + changed passes
        for (int r = 1; r < stepper.proxy()->rowCount(); ++r)
            QVERIFY(stepper.proxy()->index(r, 0).data(PassListModel::kChangedRole).toBool());
        // Next skips the hidden rows.
        connect(&stepper, &PassStepperWidget::stepRequested, &worker, &DocumentWorker::stepTo);
        stepper.stepNext();
        const int firstChanged = stepper.proxy()->mapToSource(stepper.proxy()->index(1, 0)).row();
        QCOMPARE(worker.state()->current, firstChanged);
        stepper.setHideUnchanged(false);
        QCOMPARE(stepper.proxy()->rowCount(), passes + 1);
    }

    void keyboardStepping() {
        DocumentWorker worker;
        PassStepperWidget stepper;
        connect(&worker, &DocumentWorker::stateChanged, &stepper, &PassStepperWidget::setState);
        connect(&stepper, &PassStepperWidget::stepRequested, &worker, &DocumentWorker::stepTo);
        QSignalSpy requests(&stepper, &PassStepperWidget::stepRequested);
        worker.openExample(QStringLiteral("relu_matmul_bias"));
        const int passes = static_cast<int>(worker.state()->passes.size());
        stepper.show();
        QVERIFY(QTest::qWaitForWindowExposed(&stepper));
        stepper.view()->setFocus();
        QCOMPARE(stepper.currentIndex(), 0);
        QTest::keyClick(stepper.view(), Qt::Key_Down);
        QCOMPARE(worker.state()->current, 1);
        QTest::keyClick(stepper.view(), Qt::Key_Down);
        QTest::keyClick(stepper.view(), Qt::Key_Down);
        QCOMPARE(worker.state()->current, 3);
        QCOMPARE(stepper.currentIndex(), 3);
        QTest::keyClick(stepper.view(), Qt::Key_Up);
        QCOMPARE(worker.state()->current, 2);
        QTest::keyClick(stepper.view(), Qt::Key_End);
        QCOMPARE(worker.state()->current, passes);
        QTest::keyClick(stepper.view(), Qt::Key_Home);
        QCOMPARE(worker.state()->current, 0);
        QCOMPARE(requests.size(), 6);
        // The view's current row follows the state without asking again.
        worker.stepTo(4);
        QCOMPARE(stepper.view()->currentIndex().row(), 4);
        QCOMPARE(requests.size(), 6);
        // Buttons.
        stepper.stepPrevious();
        QCOMPARE(worker.state()->current, 3);
        stepper.stepLast();
        QCOMPARE(worker.state()->current, passes);
        stepper.stepNext();  // already at the end: nothing to ask
        QCOMPARE(requests.size(), 8);
    }

    void playStepsToTheEnd() {
        DocumentWorker worker;
        PassStepperWidget stepper;
        connect(&worker, &DocumentWorker::stateChanged, &stepper, &PassStepperWidget::setState);
        connect(&stepper, &PassStepperWidget::stepRequested, &worker, &DocumentWorker::stepTo);
        worker.openExample(QStringLiteral("sin_plus_exp"));
        const int passes = static_cast<int>(worker.state()->passes.size());
        stepper.setPlayInterval(5);
        stepper.setPlaying(true);
        QVERIFY(stepper.isPlaying());
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!stepper.isPlaying(), 60000);
        QCOMPARE(worker.state()->current, passes);
    }

    void contextMenuActions() {
        PassStepperWidget stepper;
        QSignalSpy stops(&stepper, &PassStepperWidget::stopAfterRequested);
        QSignalSpy toggles(&stepper, &PassStepperWidget::passEnabledRequested);
        DocumentWorker worker;
        connect(&worker, &DocumentWorker::stateChanged, &stepper, &PassStepperWidget::setState);
        connect(&stepper, &PassStepperWidget::stopAfterRequested, &worker, &DocumentWorker::setStopAfter);
        connect(&stepper, &PassStepperWidget::passEnabledRequested, &worker, &DocumentWorker::setPassEnabled);
        connect(&stepper, &PassStepperWidget::stepRequested, &worker, &DocumentWorker::stepTo);
        worker.openExample(QStringLiteral("mlp"));
        auto trigger = [&](int row, const QString& text) {
            std::unique_ptr<QMenu> menu(stepper.createContextMenu(row));
            for (QAction* a : menu->actions())
                if (a->text() == text) return a->trigger(), true;
            return false;
        };
        QVERIFY(!trigger(0, QStringLiteral("Disable pass")));  // the input is no pass
        QVERIFY(trigger(4, QStringLiteral("Stop after this pass")));
        QCOMPARE(stops.size(), 1);
        QCOMPARE(stops[0][0].toInt(), 3);
        QCOMPARE(worker.state()->stopAfter, 3);
        QCOMPARE(stepper.model()->index(6, PassListModel::kChanged).data().toString(), QStringLiteral("stop"));
        QVERIFY(trigger(2, QStringLiteral("Disable pass")));
        QCOMPARE(toggles.size(), 1);
        QVERIFY(!worker.state()->passEnabled[1]);
        QVERIFY(trigger(2, QStringLiteral("Enable pass")));
        QVERIFY(worker.state()->passEnabled[1]);
        QVERIFY(trigger(2, QStringLiteral("Run to the end")));
        QCOMPARE(worker.state()->stopAfter, -1);
        QVERIFY(trigger(5, QStringLiteral("Show this snapshot")));
        QCOMPARE(worker.state()->current, 5);
    }
};

QTEST_MAIN(TestPassStepper)
#include "tst_pass_stepper.moc"
