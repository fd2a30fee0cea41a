// Estimator: the calculator's arithmetic and every bad-input class, the
// panel's fields filled with the performance model's figures (and user
// overrides), charts with measurements, and the HTML report.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/cost/performance_model.h"
#include "compiler/estimator/calculator.h"
#include "compiler/estimator/history.h"
#include "compiler/targets/target_description.h"
#include "tests/panel_test_util.h"
#include "views/estimator/estimator_panel.h"
#include "views/estimator/live_range_chart.h"
#include "tests/event_wait.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

CalculatorInput input(std::string time, std::string memory, std::string speedup,
                      std::string reduction) {
    CalculatorInput in;
    in.baselineTime = std::move(time);
    in.baselineMemory = std::move(memory);
    in.speedup = std::move(speedup);
    in.memoryReduction = std::move(reduction);
    return in;
}

bool allFinite(const CalculatorResult& r) {
    for (double v : {r.optimizedTime, r.timeSaved, r.timeSavedPercent, r.optimizedMemory,
                     r.memorySaved, r.memorySavedPercent})
        if (!std::isfinite(v)) return false;
    return true;
}

// Shows the example on `panel` (target cpu) and waits for the model's figures.
void showExample(EstimatorPanel& panel, const char* example) {
    DocumentStatePtr state = makeState(example, "cpu");
    QVERIFY(state);
    QSignalSpy ready(&panel, &EstimatorPanel::figuresUpdated);
    panel.setState(state);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 60000);
}

}  // namespace

class TestEstimator : public QObject {
    Q_OBJECT
private slots:
    void arithmetic() {
        const CalculatorResult r = calculate(input("100", "1000", "2", "4"));
        QVERIFY2(r.ok(), r.errors().c_str());
        QCOMPARE(r.optimizedTime, 50.0);
        QCOMPARE(r.timeSaved, 50.0);
        QCOMPARE(r.timeSavedPercent, 50.0);
        QCOMPARE(r.optimizedMemory, 250.0);
        QCOMPARE(r.memorySaved, 750.0);
        QCOMPARE(r.memorySavedPercent, 75.0);
        // A factor below 1 is a slowdown: negative savings, still finite.
        const CalculatorResult slower = calculate(input(" 3.5 ", "+2e3", "0.5", "1"));
        QVERIFY2(slower.ok(), slower.errors().c_str());
        QCOMPARE(slower.optimizedTime, 7.0);
        QCOMPARE(slower.timeSaved, -3.5);
        QCOMPARE(slower.timeSavedPercent, -100.0);
        QCOMPARE(slower.optimizedMemory, 2000.0);
        QCOMPARE(slower.memorySavedPercent, 0.0);
        QCOMPARE(secondsToUnit(0.25, TimeUnit::kMilliseconds), 250.0);
        QCOMPARE(secondsToUnit(0.25, TimeUnit::kSeconds), 0.25);
        QCOMPARE(bytesToUnit(3e9, MemoryUnit::kGigabytes), 3.0);
        QCOMPARE(bytesToUnit(3e9, MemoryUnit::kMegabytes), 3000.0);
    }

    void badInput_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << ""
                               << "is empty";
        QTest::newRow("blank") << "   "
                               << "is empty";
        QTest::newRow("letters") << "abc"
                                 << "'abc' is not a number";
        QTest::newRow("trailing junk") << "1.5x"
                                       << "'1.5x' is not a number";
        QTest::newRow("two numbers") << "1 2"
                                     << "'1 2' is not a number";
        QTest::newRow("comma decimal") << "1,5"
                                       << "'1,5' is not a number";
        QTest::newRow("zero") << "0"
                              << "must be greater than zero";
        QTest::newRow("negative zero") << "-0.0"
                                       << "must be greater than zero";
        QTest::newRow("negative") << "-3"
                                  << "must be positive (got -3)";
        QTest::newRow("infinity") << "inf"
                                  << "'inf' is not a finite number";
        QTest::newRow("nan") << "nan"
                             << "'nan' is not a finite number";
        QTest::newRow("overflow") << "1e400"
                                  << "'1e400' is out of range";
    }

    void badInput() {
        QFETCH(QString, text);
        QFETCH(QString, message);
        const std::string t = text.toStdString();
        const std::string fields[4] = {"baseline time (ms)", "baseline memory (MB)",
                                       "speedup factor", "memory reduction factor"};
        for (int field = 0; field < 4; ++field) {
            std::string values[4] = {"10", "10", "2", "2"};
            values[field] = t;
            const CalculatorResult r = calculate(input(values[0], values[1], values[2], values[3]));
            QVERIFY(!r.ok());
            const std::string errors = r.errors();
            QVERIFY2(errors.find(fields[field] + " ") == 0, errors.c_str());
            QVERIFY2(errors.find(message.toStdString()) != std::string::npos, errors.c_str());
            QVERIFY(errors.find('\n') == std::string::npos);  // only the bad field complains
        }
        // Every field bad at once: four messages.
        const CalculatorResult all = calculate(input(t, t, t, t));
        QCOMPARE(QString::fromStdString(all.errors()).split(u'\n').size(), 4);
    }

    void resultsThatWouldNotBeFinite() {
        const CalculatorResult r = calculate(input("1e300", "1", "1e-300", "1"));
        QVERIFY(!r.ok());
        QVERIFY(r.resultError.find("not be finite") != std::string::npos);
        QVERIFY(calculate(input("1e-300", "1e-300", "1e300", "1e300")).ok());
        QVERIFY(allFinite(calculate(input("1e-300", "1e-300", "1e300", "1e300"))));
    }

    void panelFillsFromThePerformanceModel() {
        DocumentStatePtr state = makeState("mlp.hlo", "cpu");
        QVERIFY(state);
        EstimatorPanel panel;
        QSignalSpy ready(&panel, &EstimatorPanel::figuresUpdated);
        panel.setState(state);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 60000);
        QVERIFY(panel.figures());
        // Independently: the snapshot before the fusion pass and the last one.
        int fusionIndex = -1;
        for (int i = 0; i < state->snapshotCount(); ++i)
            if ((*state->snapshots)[static_cast<size_t>(i)].pass == "fusion") fusionIndex = i;
        QVERIFY(fusionIndex > 0);
        auto before = (*state->snapshots)[static_cast<size_t>(fusionIndex - 1)].materialize();
        QVERIFY(before.isOk());
        auto cpu = targetForName("cpu");
        QVERIFY(cpu.isOk());
        const double unfused = predictModule(**before, *cpu).totalSeconds;
        const double fused = predictModule(*state->module, *cpu).totalSeconds;
        const int64_t peakBefore = peakMemoryBytesWithOutputsHeld(**before);
        const int64_t peakAfter = peakMemoryBytesWithOutputsHeld(*state->module);
        QVERIFY(unfused > fused);
        auto value = [&](EstimatorPanel::Field f) { return panel.field(f)->text().toDouble(); };
        QVERIFY(std::abs(value(EstimatorPanel::kBaselineTime) - unfused * 1e3) <=
                1e-5 * unfused * 1e3);
        QVERIFY(std::abs(value(EstimatorPanel::kSpeedup) - unfused / fused) <=
                1e-5 * unfused / fused);
        QVERIFY(std::abs(value(EstimatorPanel::kBaselineMemory) -
                         static_cast<double>(peakBefore) / 1e6) <=
                1e-5 * static_cast<double>(peakBefore) / 1e6);
        const double reduction = static_cast<double>(peakBefore) / static_cast<double>(peakAfter);
        QVERIFY(std::abs(value(EstimatorPanel::kMemoryReduction) - reduction) <= 1e-5 * reduction);
        for (int f = 0; f < EstimatorPanel::kFieldCount; ++f)
            QCOMPARE(panel.fieldSource(static_cast<EstimatorPanel::Field>(f)),
                     QStringLiteral("predicted"));
        QVERIFY(panel.errorText().isEmpty());
        QVERIFY(panel.result().ok());
        QVERIFY(std::abs(panel.result().optimizedTime - fused * 1e3) <= 1e-4 * fused * 1e3);

        // Units: seconds and GB refill the predicted values.
        panel.timeUnitCombo()->setCurrentIndex(1);
        QVERIFY(std::abs(value(EstimatorPanel::kBaselineTime) - unfused) <= 1e-5 * unfused);
        panel.memoryUnitCombo()->setCurrentIndex(1);
        QVERIFY(std::abs(value(EstimatorPanel::kBaselineMemory) -
                         static_cast<double>(peakBefore) / 1e9) <=
                1e-5 * static_cast<double>(peakBefore) / 1e9);

        // A user override sticks (also across a new state) until "fill from model".
        QLineEdit* speedup = panel.field(EstimatorPanel::kSpeedup);
        speedup->selectAll();
        QTest::keyClicks(speedup, QStringLiteral("4"));
        QCOMPARE(speedup->text(), QStringLiteral("4"));
        QCOMPARE(panel.fieldSource(EstimatorPanel::kSpeedup), QStringLiteral("user-entered"));
        QCOMPARE(panel.result().optimizedTime, value(EstimatorPanel::kBaselineTime) / 4);
        panel.setState(makeState("mlp.hlo", "cpu"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(ready.count() == 2, 60000);
        QCOMPARE(speedup->text(), QStringLiteral("4"));
        panel.fillFromModel();
        QCOMPARE(panel.fieldSource(EstimatorPanel::kSpeedup), QStringLiteral("predicted"));
        QVERIFY(std::abs(value(EstimatorPanel::kSpeedup) - unfused / fused) <=
                1e-5 * unfused / fused);

        // Bad input in the form: an inline message, no NaN/Inf anywhere.
        for (const QString& bad :
             {QString(), QStringLiteral("abc"), QStringLiteral("0"), QStringLiteral("-1")}) {
            speedup->selectAll();
            speedup->del();
            if (!bad.isEmpty()) QTest::keyClicks(speedup, bad);
            QVERIFY2(panel.errorText().startsWith(QStringLiteral("speedup factor ")),
                     qPrintable(panel.errorText()));
            QVERIFY(!panel.resultText().contains(QStringLiteral("nan"), Qt::CaseInsensitive));
            QVERIFY(!panel.resultText().contains(QStringLiteral("inf"), Qt::CaseInsensitive));
        }
        speedup->setText(QStringLiteral("2"));
        QVERIFY(panel.errorText().isEmpty());
        QVERIFY(panel.liveRangeChart()->shownBuffers() > 0);
        QCOMPARE(panel.chartCount(), 5);
    }

    // The estimate line: predicted figures with the break-even point; with
    // both modes measured, the measured ones and the signed errors; the
    // history's accuracy; and a measured CPU run is stored in the history.
    // An uncalibrated cpu target: the panel offers a calibration, shows its stages, and uses
    // the new figures once it is cached; a cancelled one says so and changes nothing.
    void offersCalibrationOnAnUncalibratedMachine() {
        QTemporaryDir cache;
        QVERIFY(cache.isValid());
        const QByteArray oldCache = qgetenv("XDG_CACHE_HOME");
        qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
        qputenv("HLOSCOPE_HISTORY", "off");
        EstimatorPanel panel;
        int stages = 0;
        panel.setCalibrator([&stages](const std::function<void(const std::string&, int, int)>& progress,
                                      const std::atomic<bool>* cancel) -> Status {
            for (int i = 0; i < 3; ++i) {
                if (cancel->load()) return Status(StatusCode::kCancelled, "calibration cancelled");
                progress("stage " + std::to_string(i), i, 3);
                ++stages;
            }
            auto target = builtinTargetDescription("cpu");
            if (!target.isOk()) return target.status();
            target->calibrated = {1700000000, "testhost", "a test calibrator"};
            const std::string path = cpuTargetCachePath();
            QDir().mkpath(QFileInfo(QString::fromStdString(path)).path());
            QFile file(QString::fromStdString(path));
            if (!file.open(QIODevice::WriteOnly)) return Status(StatusCode::kInternal, "cannot write");
            file.write(QByteArray::fromStdString(targetDescriptionToJson(*target)));
            return Status::ok();
        });
        showExample(panel, "mlp.hlo");
        QVERIFY(panel.offersCalibration());
        QVERIFY(panel.estimateText().contains(QStringLiteral("not calibrated for this machine")));

        // Cancelled before it starts its first stage.
        QSignalSpy finished(&panel, &EstimatorPanel::calibrationFinished);
        QSignalSpy updated(&panel, &EstimatorPanel::figuresUpdated);
        panel.cancelCalibration();
        QVERIFY(panel.startCalibration());
        QVERIFY(!panel.startCalibration());  // one at a time
        panel.cancelCalibration();
        HLOSCOPE_TRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        if (finished.front().at(0).toBool()) {
            // The calibrator ran to the end before the cancel reached it: a valid outcome.
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1, 60000);
        } else {
            QVERIFY(finished.front().at(1).toString().contains(QStringLiteral("cancelled")));
            QVERIFY(panel.calibrationText().contains(QStringLiteral("cancelled")));
            QVERIFY(panel.calibrateButton()->isEnabled());
            finished.clear();
            QVERIFY(panel.startCalibration());
            HLOSCOPE_TRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
            QVERIFY(finished.front().at(0).toBool());
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1, 60000);
        }
        QVERIFY(stages >= 3);
        QVERIFY(!panel.offersCalibration());
        QVERIFY2(panel.estimateText().contains(QStringLiteral("calibrated on testhost")),
                 qPrintable(panel.estimateText()));
        if (oldCache.isNull())
            qunsetenv("XDG_CACHE_HOME");
        else
            qputenv("XDG_CACHE_HOME", oldCache);
        qunsetenv("HLOSCOPE_HISTORY");
    }

    void estimateLineAndHistory() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString historyPath = dir.filePath(QStringLiteral("history.sqlite"));
        qputenv("HLOSCOPE_HISTORY", historyPath.toUtf8());
        {
            auto history = EstimateHistory::open(historyPath.toStdString());
            QVERIFY(history.isOk());
            HistoryRecord record;
            record.module = "earlier.hlo";
            record.fingerprint = "0";
            record.target = "cpu";
            record.device = "cpu";
            record.machine = machineName();
            record.predictedUnfusedSeconds = 2.0;
            record.predictedFusedSeconds = 1.0;  // predicted 2x
            record.measuredUnfusedSeconds = 2.5;
            record.measuredFusedSeconds = 1.0;  // measured 2.5x: -20%
            QVERIFY((*history)->add(record).isOk());
        }
        EstimatorPanel panel;
        showExample(panel, "mlp.hlo");
        if (QTest::currentTestFailed()) return;
        const ModelFigures& figures = *panel.figures();
        QVERIFY(figures.accuracy && figures.accuracy->runs == 1);
        QString text = panel.estimateText();
        QVERIFY2(text.contains(QStringLiteral("<b>Predicted</b> (cpu)")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("pays off after")) ||
                text.contains(QStringLiteral("never pays off")));
        QVERIFY(text.contains(QStringLiteral("median |speedup error| 20.0% over 1 run")));
        QVERIFY(!text.contains(QStringLiteral("<b>Measured</b>")));

        QList<ExecutionMeasurement> measured;
        for (const char* mode : {"unfused", "fused"}) {
            ExecutionMeasurement m;
            m.mode = QString::fromLatin1(mode);
            m.device = QStringLiteral("cpu");
            m.deviceKind = QStringLiteral("cpu");
            m.passed = true;
            m.wallSeconds = m.mode == QStringLiteral("unfused") ? 0.003 : 0.002;
            m.peakBytes = m.mode == QStringLiteral("unfused") ? 3000000 : 2000000;
            m.compileSeconds = 0.05;
            const ModulePrediction& prediction = m.mode == QStringLiteral("unfused")
                                                     ? figures.unfusedPrediction
                                                     : figures.fusedPrediction;
            for (const KernelPrediction& k : prediction.kernels)
                if (k.instruction)
                    m.kernelSeconds.insert(QString::fromStdString(k.instruction->name()), 1e-4);
            measured.append(m);
        }
        panel.setMeasurements(measured);
        text = panel.estimateText();
        QVERIFY2(text.contains(QStringLiteral("<b>Measured</b> (cpu): 1.50x")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("1.50x smaller (3.000 MB &rarr; 2.000 MB)")));
        const double predictedSpeedup = figures.predicted().speedup();
        const double error = (predictedSpeedup - 1.5) / 1.5 * 100;
        QVERIFY2(
            text.contains(
                QStringLiteral("speedup %1%2%").arg(error >= 0 ? "+" : "").arg(error, 0, 'f', 1)),
            qPrintable(text));
        // The measured pair went into the history, kernels included.
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(
            [&] {
                auto history = EstimateHistory::open(historyPath.toStdString());
                return history.isOk() && (*history)->records().isOk() &&
                       (*history)->records()->size() == 2;
            }(),
            10000);
        auto history = EstimateHistory::open(historyPath.toStdString());
        QVERIFY(history.isOk());
        auto kernels = (*history)->kernels();
        QVERIFY(kernels.isOk());
        QCOMPARE(kernels->size(),
                 figures.unfusedPrediction.kernels.size() + figures.fusedPrediction.kernels.size());
        // A run on another device (the interpreter) says nothing about the cpu model: not stored.
        for (ExecutionMeasurement& m : measured) {
            m.device = QStringLiteral("interpreter");
            m.deviceKind = QStringLiteral("reference");
        }
        panel.setMeasurements(measured);
        QTest::qWait(200);
        QCOMPARE((*history)->records()->size(), size_t{2});
        // Nor is a grid of several devices that shared the CPU's cores.
        for (ExecutionMeasurement& m : measured) {
            m.device = QStringLiteral("cpu");
            m.deviceKind = QStringLiteral("cpu");
            m.devices = 4;
        }
        panel.setMeasurements(measured);
        QTest::qWait(200);
        QCOMPARE((*history)->records()->size(), size_t{2});
        for (ExecutionMeasurement& m : measured) m.devices = 1;
        // Simulated figures (tpu-sim) are labelled so and never stored.
        for (ExecutionMeasurement& m : measured) {
            m.device = QStringLiteral("tpu-sim");
            m.deviceKind = QStringLiteral("tpu-sim");
            m.simulated = true;
        }
        panel.setMeasurements(measured);
        text = panel.estimateText();
        QVERIFY2(text.contains(QStringLiteral("<b>Simulated</b> (tpu-sim)")), qPrintable(text));
        QVERIFY(!text.contains(QStringLiteral("<b>Measured</b>")));
        QTest::qWait(200);
        QCOMPARE((*history)->records()->size(), size_t{2});
        qunsetenv("HLOSCOPE_HISTORY");
    }

    void htmlReport() {
        EstimatorPanel panel;
        showExample(panel, "relu_matmul_bias.hlo");
        if (QTest::currentTestFailed()) return;
        ExecutionMeasurement measured;
        measured.mode = QStringLiteral("fused");
        measured.device = QStringLiteral("interpreter");
        measured.wallSeconds = 0.004;
        measured.passed = true;
        const std::string kernel =
            panel.figures()->fusedPrediction.kernels.front().instruction->name();
        measured.kernelSeconds.insert(QString::fromStdString(kernel), 0.003);
        panel.setMeasurements({measured});
        panel.field(EstimatorPanel::kMemoryReduction)->setText(QStringLiteral("1.5"));
        QTest::keyClick(panel.field(EstimatorPanel::kMemoryReduction),
                        Qt::Key_0);  // user edit -> "1.50"

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("report.html"));
        QSignalSpy exported(&panel, &EstimatorPanel::reportExported);
        QString error;
        QVERIFY2(panel.exportHtml(path, &error), qPrintable(error));
        QCOMPARE(exported.count(), 1);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString html = QString::fromUtf8(file.readAll());
        QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
        QVERIFY(html.contains(QStringLiteral("relu_matmul_bias.hlo")));
        QCOMPARE(html.count(QStringLiteral("src=\"data:image/png;base64,")), 5);
        QVERIFY(!html.contains(QStringLiteral("src=\"http")));  // self-contained
        QVERIFY(html.contains(QStringLiteral("user-entered")));
        QVERIFY(html.contains(QStringLiteral("class=p>predicted")));
        QVERIFY(html.contains(QStringLiteral("4 ms")));  // the measured module time
        QVERIFY(html.contains(QStringLiteral("%") + QString::fromStdString(kernel)));
        QVERIFY(html.contains(QStringLiteral("3 ms")));  // the measured kernel time

        QVERIFY(!panel.exportHtml(dir.filePath(QStringLiteral("no/such/dir/report.html")), &error));
        QVERIFY(error.startsWith(QStringLiteral("Cannot write")));
    }
};

QTEST_MAIN(TestEstimator)
#include "tst_estimator.moc"
