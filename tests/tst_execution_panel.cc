// ExecutionPanel: runs through the panel on the interpreter device (both
// modes, progress and finished signals, results checked against the
// reference), cancel, measured times, and the max-error helper.
#include <QComboBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>

#include <cmath>

#include "compiler/backends/cpu/cpu_device.h"
#include "tests/panel_test_util.h"
#include "views/execution/execution_panel.h"

using namespace hloscope;
using namespace hloscope::testing;

class TestExecutionPanel : public QObject {
    Q_OBJECT
private slots:
    void devicesFromTheRegistry() {
        ExecutionPanel panel;
        QVERIFY(panel.deviceCombo()->count() >= 1);
        QCOMPARE(panel.deviceCombo()->itemData(0).toString(), QStringLiteral("interpreter"));
        QVERIFY(!panel.runButton()->isEnabled());  // no state yet
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        panel.run();
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toBool(), false);
    }

    void runsBothModesAndChecksResults() {
        DocumentStatePtr state = makeState("mlp.hlo", "cpu");
        QVERIFY(state);
        ExecutionPanel panel;
        panel.setState(state);
        QVERIFY(panel.runButton()->isEnabled());
        panel.setMode(ExecutionPanel::Mode::kBoth);
        panel.setSeed(3);
        QSignalSpy started(&panel, &ExecutionPanel::runStarted);
        QSignalSpy progress(&panel, &ExecutionPanel::progressChanged);
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        QSignalSpy times(&panel, &ExecutionPanel::measuredTimes);
        QSignalSpy measurements(&panel, &ExecutionPanel::measurementsReady);
        panel.runButton()->click();
        QCOMPARE(started.count(), 1);
        QVERIFY(panel.isRunning() || finished.count() == 1);
        QVERIFY(panel.cancelButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QVERIFY(progress.count() >= 1);
        int last = -1;
        for (const auto& args : progress) {
            QVERIFY(args.at(0).toInt() >= last);
            last = args.at(0).toInt();
        }
        QCOMPARE(panel.progressBar()->value(), 100);
        QVERIFY(!panel.cancelButton()->isEnabled());
        const auto results = panel.measurements();
        QCOMPARE(results.size(), 2);
        QCOMPARE(results[0].mode, QStringLiteral("unfused"));
        QCOMPARE(results[1].mode, QStringLiteral("fused"));
        QCOMPARE(results[1].snapshot, state->snapshotCount() - 1);
        QVERIFY(results[0].snapshot < results[1].snapshot);
        for (const auto& m : results) {
            QVERIFY2(m.passed, qPrintable(m.detail));
            QVERIFY(m.wallSeconds > 0);
            QVERIFY(std::isfinite(m.maxError));
            QVERIFY(m.maxError < 1e-3);
            QVERIFY(!m.kernelSeconds.isEmpty());
        }
        // The fused run's kernels are fusions of the fused module.
        bool sawFusion = false;
        for (auto it = results[1].kernelSeconds.cbegin(); it != results[1].kernelSeconds.cend(); ++it)
            sawFusion |= it.key().startsWith(QStringLiteral("fusion"));
        QVERIFY(sawFusion);
        QCOMPARE(panel.resultTable()->rowCount(), 2);
        QCOMPARE(panel.resultTable()->item(0, 4)->text(), QStringLiteral("pass"));
        QCOMPARE(times.count(), 1);
        const auto hash = times.at(0).at(0).value<QHash<QString, double>>();
        QCOMPARE(hash, results[1].instructionSeconds);
        QCOMPARE(measurements.count(), 1);
    }

    void cancelStopsTheRun() {
        DocumentStatePtr state = makeState("bert_encoder_forward.hlo", "cpu");
        QVERIFY(state);
        ExecutionPanel panel;
        panel.setState(state);
        panel.setMode(ExecutionPanel::Mode::kBoth);
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        // Cancel as soon as the first progress report arrives.
        connect(&panel, &ExecutionPanel::progressChanged, &panel, [&panel] { panel.cancel(); });
        panel.run();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        QCOMPARE(finished.at(0).at(0).toBool(), false);
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("Cancelled."));
        QVERIFY(panel.measurements().isEmpty());
        QVERIFY(panel.runButton()->isEnabled());
    }

    // The CPU backend through the panel: both modes JIT-compiled and checked,
    // per-kernel times for the graph's heat map (measuredTimes), and Cancel.
    void runsOnTheCpuBackend() {
        registerCpuBackend();
        DocumentStatePtr state = makeState("softmax.hlo", "cpu");
        QVERIFY(state);
        ExecutionPanel panel;
        const int cpu = panel.deviceCombo()->findData(QStringLiteral("cpu"));
        QVERIFY(cpu >= 0);
        panel.deviceCombo()->setCurrentIndex(cpu);
        panel.setState(state);
        panel.setMode(ExecutionPanel::Mode::kBoth);
        QSignalSpy progress(&panel, &ExecutionPanel::progressChanged);
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        QSignalSpy times(&panel, &ExecutionPanel::measuredTimes);
        panel.runButton()->click();
        QVERIFY(panel.cancelButton()->isEnabled() || finished.count() == 1);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QVERIFY(progress.count() >= 1);
        const auto results = panel.measurements();
        QCOMPARE(results.size(), 2);
        for (const auto& m : results) {
            QVERIFY2(m.passed, qPrintable(m.detail));
            QVERIFY(m.maxError < 1e-3);
            QVERIFY(!m.kernelSeconds.isEmpty());
        }
        // Softmax is one row-fused kernel on the CPU.
        QCOMPARE(results[1].kernelSeconds.size(), 1);
        QVERIFY(results[1].kernelSeconds.cbegin().key().startsWith(QStringLiteral("fusion")));
        QCOMPARE(times.count(), 1);
        const auto hash = times.at(0).at(0).value<QHash<QString, double>>();
        QVERIFY(!hash.isEmpty());
        for (double seconds : hash) QVERIFY(seconds >= 0);

        DocumentStatePtr bert = makeState("bert_encoder_forward.hlo", "cpu");
        QVERIFY(bert);
        panel.setState(bert);
        QSignalSpy cancelled(&panel, &ExecutionPanel::runFinished);
        connect(&panel, &ExecutionPanel::progressChanged, &panel, [&panel] { panel.cancel(); });
        panel.run();
        QTRY_VERIFY_WITH_TIMEOUT(cancelled.count() == 1, 120000);
        QCOMPARE(cancelled.at(0).at(0).toBool(), false);
        QCOMPARE(cancelled.at(0).at(1).toString(), QStringLiteral("Cancelled."));
    }

    void destroyingWhileRunningCancels() {
        DocumentStatePtr state = makeState("bert_encoder_forward.hlo", "cpu");
        auto* panel = new ExecutionPanel;
        panel->setState(state);
        panel->run();
        QVERIFY(panel->isRunning());
        delete panel;  // cancels and waits; no crash, no late signal
    }
};

QTEST_MAIN(TestExecutionPanel)
#include "tst_execution_panel.moc"
