// The estimate (compiler/estimator/estimate.h): predicted figures equal the
// performance model and buffer assignment on the prepared modules, measured
// ones come from the device run, break-even and error arithmetic, and every
// error class (unknown target, unknown or unavailable device).
#include <sqlite3.h>

#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTest>
#include <cmath>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/cost/performance_model.h"
#include "compiler/estimator/estimate.h"
#include "compiler/estimator/estimate_report.h"
#include "compiler/estimator/calibration.h"
#include "compiler/estimator/history.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/io/module_io.h"

using namespace hloscope;

namespace {

std::unique_ptr<HloModule> example(const char* name) {
    auto module =
        loadModuleFromFile(std::string(HLOSCOPE_SOURCE_DIR "/resources/examples/") + name + ".hlo");
    if (!module.isOk()) qFatal("%s", module.status().toString().c_str());
    return std::move(*module);
}

}  // namespace

class TestEstimate : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { registerCpuBackend(); }

    void breakEven_data() {
        QTest::addColumn<double>("unfused");
        QTest::addColumn<double>("fused");
        QTest::addColumn<double>("compile");
        QTest::addColumn<qint64>("runs");
        QTest::newRow("ten runs") << 0.3 << 0.2 << 1.0 << qint64(10);
        QTest::newRow("rounds up") << 0.3 << 0.2 << 1.05 << qint64(11);
        QTest::newRow("free compile") << 0.3 << 0.2 << 0.0 << qint64(1);
        QTest::newRow("no saving") << 0.2 << 0.2 << 1.0 << qint64(-1);
        QTest::newRow("slower fused") << 0.2 << 0.3 << 1.0 << qint64(-1);
        QTest::newRow("unknown") << 0.0 << 0.0 << 1.0 << qint64(-1);
    }
    void breakEven() {
        QFETCH(double, unfused);
        QFETCH(double, fused);
        QFETCH(double, compile);
        QFETCH(qint64, runs);
        EstimateFigures figures;
        figures.unfusedSeconds = unfused;
        figures.fusedSeconds = fused;
        figures.compileSeconds = compile;
        QCOMPARE(figures.breakEvenRuns(), runs);
    }

    void factorsAndErrors() {
        Estimate e;
        e.predicted.unfusedSeconds = 3;
        e.predicted.fusedSeconds = 1;
        e.predicted.peakBytesUnfused = 300;
        e.predicted.peakBytesFused = 100;
        QCOMPARE(e.predicted.speedup(), 3.0);
        QCOMPARE(e.predicted.memoryReduction(), 3.0);
        QVERIFY(!e.speedupErrorPercent());
        EstimateFigures measured;
        measured.unfusedSeconds = 4;
        measured.fusedSeconds = 1;
        measured.peakBytesUnfused = 200;
        measured.peakBytesFused = 0;  // the device does not say
        e.measured = measured;
        QCOMPARE(*e.speedupErrorPercent(), -25.0);
        QVERIFY(!e.memoryErrorPercent());  // unknown, not a number
        for (double predicted : {1.0, 2.0, 3.0}) {
            KernelEstimate kernel;
            kernel.name = "k" + std::to_string(int(predicted));
            kernel.predictedSeconds = predicted;
            kernel.measuredSeconds = 2.0;
            e.fusedKernels.push_back(kernel);
        }
        KernelEstimate unmeasured;
        unmeasured.predictedSeconds = 1;
        e.unfusedKernels.push_back(unmeasured);
        const ErrorSummary summary = e.kernelErrors();
        QCOMPARE(summary.count, int64_t(3));
        QCOMPARE(summary.medianAbsPercent, 50.0);
        QCOMPARE(summary.worstAbsPercent, 50.0);
        QVERIFY(!unmeasured.errorPercent());
    }

    void predictedMatchesTheModel_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("target");
        for (const char* name : {"softmax", "layernorm", "mlp"})
            for (const char* target : {"cpu", "h100", "tpu_v5e"})
                QTest::newRow((std::string(name) + " " + target).c_str())
                    << QString(name) << QString(target);
    }
    void predictedMatchesTheModel() {
        QFETCH(QString, name);
        QFETCH(QString, target);
        auto module = example(name.toStdString().c_str());
        EstimateOptions options;
        options.target = target.toStdString();
        auto estimate = estimateModule(*module, options);
        QVERIFY2(estimate.isOk(), estimate.status().toString().c_str());
        QVERIFY(!estimate->measured && estimate->device.empty());
        auto description = resolveTargetDescription(options.target);
        QVERIFY(description.isOk());
        QCOMPARE(QString::fromStdString(estimate->target),
                 QString::fromStdString(description->name));
        for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
            auto prepared =
                prepareForMode(example(name.toStdString().c_str()), options.target, mode);
            QVERIFY(prepared.isOk());
            const ModulePrediction prediction = predictModule(**prepared, *description);
            const bool fused = mode == ExecutionMode::kFused;
            QCOMPARE(fused ? estimate->predicted.fusedSeconds : estimate->predicted.unfusedSeconds,
                     prediction.totalSeconds);
            QCOMPARE(
                fused ? estimate->predicted.peakBytesFused : estimate->predicted.peakBytesUnfused,
                peakMemoryBytesWithOutputsHeld(**prepared));
            double sum = prediction.overheadSeconds;  // the run's fixed cost, beside its kernels
            for (const KernelEstimate& k :
                 fused ? estimate->fusedKernels : estimate->unfusedKernels)
                sum += k.predictedSeconds;
            QVERIFY(std::fabs(sum - prediction.totalSeconds) <=
                    1e-12 + 1e-9 * prediction.totalSeconds);
        }
        // Fusion helps these modules in the model, and the pipeline took some time.
        QVERIFY(estimate->predicted.speedup() > 1.0);
        QVERIFY(estimate->predicted.compileSeconds > 0);
        QVERIFY(estimate->predicted.breakEvenRuns() >= 1);
    }

    void measuredOnTheCpu() {
        auto module = example("softmax");
        EstimateOptions options;
        options.device = "cpu";
        options.measure.repeat = 3;
        options.measure.threads = 2;
        auto estimate = estimateModule(*module, options);
        QVERIFY2(estimate.isOk(), estimate.status().toString().c_str());
        QCOMPARE(QString::fromStdString(estimate->device), QStringLiteral("cpu"));
        QVERIFY(estimate->measured);
        const EstimateFigures& m = *estimate->measured;
        QVERIFY(m.unfusedSeconds > 0 && m.fusedSeconds > 0);
        // The device's allocations: what buffer assignment planned, give or take alignment and
        // scratch.
        QVERIFY(m.peakBytesFused >= estimate->predicted.peakBytesFused * 0.95);
        QVERIFY(m.peakBytesFused <= estimate->predicted.peakBytesFused * 1.05);
        QVERIFY(std::fabs(*estimate->memoryErrorPercent()) < 5.0);
        // The code generation is in the measured compile time.
        QVERIFY(m.compileSeconds > estimate->predicted.compileSeconds * 0.5);
        // Every kernel of both modes was timed.
        for (const auto* kernels : {&estimate->unfusedKernels, &estimate->fusedKernels})
            for (const KernelEstimate& k : *kernels)
                QVERIFY2(k.measuredSeconds.has_value(), k.name.c_str());
        QCOMPARE(estimate->kernelErrors().count,
                 int64_t(estimate->unfusedKernels.size() + estimate->fusedKernels.size()));
    }

    void htmlReport() {
        // Two measured modules: a summary row each, their sections, and
        // charts that are valid SVG (rendered here).
        std::vector<ReportedEstimate> reports;
        for (const char* name : {"softmax", "sin_plus_exp"}) {
            EstimateOptions options;
            options.device = "cpu";
            options.measure.repeat = 2;
            auto estimate = estimateModule(*example(name), options);
            QVERIFY2(estimate.isOk(), estimate.status().toString().c_str());
            ReportedEstimate report;
            report.name = std::string(name) + "<&>";  // escaped in the HTML
            report.estimate = *estimate;
            reports.push_back(report);
        }
        CalculatorInput input;
        input.baselineTime = "140";
        input.baselineMemory = "11";
        input.speedup = "2";
        input.memoryReduction = "2";
        reports.front().baselineInput = input;
        reports.front().baseline = calculate(input);
        const QString html =
            QString::fromStdString(estimateReportHtml(reports, "2026-11-25T12:00:00Z"));
        QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
        QVERIFY(html.contains(QStringLiteral("Generated 2026-11-25T12:00:00Z")));
        QVERIFY(html.contains(QStringLiteral("softmax&lt;&amp;&gt;")));
        QVERIFY(!html.contains(QStringLiteral("softmax<&>")));
        QVERIFY(!html.contains(QStringLiteral("<script")) &&
                !html.contains(QStringLiteral("src=")));
        QVERIFY(html.contains(QStringLiteral("Your baseline: 140 ms, 11 MB &rarr; 70 ms")));
        QVERIFY(
            html.contains(QStringLiteral("Predicted speedup against measured over 2 module(s)")));
        QCOMPARE(html.count(QStringLiteral("<h2 id=")), 2);
        const QRegularExpression svg(QStringLiteral("<svg.*?</svg>"),
                                     QRegularExpression::DotMatchesEverythingOption);
        int charts = 0;
        for (const QRegularExpressionMatch& match : svg.globalMatch(html)) {
            QSvgRenderer renderer(match.captured(0).toUtf8());
            QVERIFY2(renderer.isValid(), qPrintable(match.captured(0).left(200)));
            QImage image(renderer.defaultSize(), QImage::Format_ARGB32);
            image.fill(Qt::white);
            QPainter painter(&image);
            renderer.render(&painter);
            ++charts;
        }
        QCOMPARE(charts, 4);  // time bars and kernel scatter per module
    }

    void historyStoresAndSummarises() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("sub/history.sqlite")).toStdString();
        auto history = EstimateHistory::open(path);  // creates the folder and the schema
        QVERIFY2(history.isOk(), history.status().toString().c_str());
        auto empty = (*history)->accuracy();
        QVERIFY(empty.isOk());
        QCOMPARE(empty->runs, int64_t(0));
        // Predicted speedups 2, 3, 4 against measured 2 each: errors 0, 50, 100%.
        for (int i = 0; i < 3; ++i) {
            HistoryRecord r;
            r.module = "m" + std::to_string(i);
            r.fingerprint = "f";
            r.target = i < 2 ? "cpu" : "h100";
            r.device = "cpu";
            r.machine = "here";
            r.predictedUnfusedSeconds = 2.0 + i;
            r.predictedFusedSeconds = 1.0;
            r.measuredUnfusedSeconds = 4.0;
            r.measuredFusedSeconds = 2.0;
            r.measuredPeakFused = 100 + i;
            r.compileSeconds = 0.5;
            auto id = (*history)->add(r);
            QVERIFY2(id.isOk(), id.status().toString().c_str());
            QCOMPARE(*id, int64_t(i + 1));
        }
        auto all = (*history)->records();
        QVERIFY(all.isOk());
        QCOMPARE(all->size(), size_t(3));
        QCOMPARE(all->at(2).measuredPeakFused, int64_t(102));
        QCOMPARE(all->at(1).compileSeconds, 0.5);
        QCOMPARE(QString::fromStdString(all->at(0).module), QStringLiteral("m0"));
        auto cpu = (*history)->accuracy("cpu", "here");
        QCOMPARE(cpu->runs, int64_t(2));
        QCOMPARE(cpu->medianAbsPercent, 25.0);
        QCOMPARE(cpu->worstAbsPercent, 50.0);
        QCOMPARE((*history)->accuracy({}, "elsewhere")->runs, int64_t(0));
        // Rows survive reopening; a record of a real estimate carries its figures.
        history->reset();
        auto again = EstimateHistory::open(path);
        QVERIFY(again.isOk());
        QCOMPARE((*again)->records()->size(), size_t(3));
        Estimate e;
        e.target = "cpu";
        e.device = "cpu";
        e.predicted.unfusedSeconds = 2;
        e.predicted.fusedSeconds = 1;
        EstimateFigures m;
        m.unfusedSeconds = 3;
        m.fusedSeconds = 1;
        m.compileSeconds = 0.25;
        e.measured = m;
        auto module = example("softmax");
        const HistoryRecord record = historyRecordOf(*module, "softmax", e);
        QCOMPARE(record.fingerprint.size(), size_t(16));
        QCOMPARE(record.fingerprint,
                 historyRecordOf(*example("softmax"), "x", e).fingerprint);  // stable
        QVERIFY(record.fingerprint != historyRecordOf(*example("mlp"), "x", e).fingerprint);
        QCOMPARE(record.measuredUnfusedSeconds, 3.0);
        QVERIFY(std::fabs(*record.speedupErrorPercent() - (2.0 - 3.0) / 3.0 * 100) < 1e-9);
    }

    // Measured kernels go into the history with their parts and come back.
    void historyStoresKernels() {
        QTemporaryDir dir;
        auto history = EstimateHistory::open(dir.filePath(QStringLiteral("h.sqlite")).toStdString());
        QVERIFY(history.isOk());
        HistoryRecord r;
        r.module = "m";
        r.fingerprint = "f";
        r.target = "cpu";
        r.device = "cpu";
        r.machine = "here";
        HistoryKernel k;
        k.mode = "fused";
        k.name = "fusion.1";
        k.opcode = "fusion";
        k.parts.opClass = OpClass::kReduction;
        k.parts.flopsSeconds = 1e-6;
        k.parts.transcendentalSeconds = 2e-6;
        k.parts.trafficSeconds = 3e-6;
        k.parts.rowSeconds = 4e-7;
        k.parts.launchSeconds = 5e-7;
        k.executions = 3;
        k.measuredSeconds = 2e-5;
        r.kernels = {k};
        auto id = (*history)->add(r);
        QVERIFY(id.isOk());
        QVERIFY((*history)->add(r).isOk());
        auto rows = (*history)->kernels("cpu", "here");
        QVERIFY2(rows.isOk(), rows.status().toString().c_str());
        QCOMPARE(rows->size(), size_t(2));
        const HistoryKernel& back = rows->front().kernel;
        QCOMPARE(rows->front().runId, *id);
        QCOMPARE(QString::fromStdString(back.name), QStringLiteral("fusion.1"));
        QVERIFY(back.parts.opClass == OpClass::kReduction);
        QCOMPARE(back.parts.rowSeconds, 4e-7);
        QCOMPARE(back.parts.launchSeconds, 5e-7);
        QCOMPARE(back.executions, 3.0);
        QCOMPARE(back.measuredSeconds, 2e-5);
        QCOMPARE((*history)->kernels("h100")->size(), size_t(0));
        // A record of a measured estimate carries its measured kernels only.
        Estimate e;
        e.target = "cpu";
        e.measured = EstimateFigures{};
        KernelEstimate measured, unmeasured;
        measured.name = "a";
        measured.measuredSeconds = 1e-3;
        unmeasured.name = "b";
        e.fusedKernels = {measured, unmeasured};
        const HistoryRecord record = historyRecordOf(*example("mlp"), "mlp", e);
        QCOMPARE(record.kernels.size(), size_t(1));
        QCOMPARE(QString::fromStdString(record.kernels.front().mode), QStringLiteral("fused"));
    }

    // The fit recovers the factors that produced the measurements, leaves
    // classes without enough kernels alone and never leaves (0, 1].
    void calibrationRecoversFactors() {
        auto target = resolveTargetDescription("h100");
        QVERIFY(target.isOk());
        std::array<double, kOpClassCount> truth = target->efficiency;
        truth[static_cast<size_t>(OpClass::kElementwise)] = 0.5;
        truth[static_cast<size_t>(OpClass::kReduction)] = 0.25;
        truth[static_cast<size_t>(OpClass::kTranscendental)] = 0.8;
        std::vector<CalibrationSample> samples;
        for (int i = 0; i < 12; ++i) {
            CalibrationSample sample;
            sample.parts.opClass = i % 3 == 0 ? OpClass::kElementwise : i % 3 == 1 ? OpClass::kReduction
                                                                                  : OpClass::kTranscendental;
            sample.parts.launchSeconds = 1e-6;
            sample.parts.trafficSeconds = 1e-4 * (1 + i);
            if (sample.parts.opClass == OpClass::kTranscendental) sample.parts.transcendentalSeconds = 3e-4 * (1 + i);
            sample.executions = 2;
            sample.measuredSeconds = predictedSeconds(sample, truth);
            samples.push_back(sample);
        }
        CalibrationSample dot;  // two dot kernels: too few to move the dot factor
        dot.parts.opClass = OpClass::kDot;
        dot.parts.flopsSeconds = 1e-3;
        dot.measuredSeconds = 1e-2;
        samples.push_back(dot);
        samples.push_back(dot);
        const CalibrationFit fit = fitEfficiencies(samples, *target);
        QCOMPARE(fit.samples, int64_t(14));
        for (OpClass c : {OpClass::kElementwise, OpClass::kReduction, OpClass::kTranscendental}) {
            const double got = fit.efficiency[static_cast<size_t>(c)];
            const double want = truth[static_cast<size_t>(c)];
            QVERIFY2(std::fabs(got / want - 1) < 0.01, qPrintable(QStringLiteral("%1: %2 vs %3")
                                                                      .arg(QString::fromStdString(std::string(opClassName(c))))
                                                                      .arg(got)
                                                                      .arg(want)));
        }
        const ClassFit& dotFit = fit.classes[static_cast<size_t>(OpClass::kDot)];
        QVERIFY(!dotFit.fitted);
        QCOMPARE(dotFit.kernels, int64_t(2));
        QCOMPARE(fit.efficiency[static_cast<size_t>(OpClass::kDot)], target->efficiency[static_cast<size_t>(OpClass::kDot)]);
        QVERIFY(fit.medianAbsErrorAfter < 1.0);
        QVERIFY(fit.medianAbsErrorAfter <= fit.medianAbsErrorBefore);
        QVERIFY(fit.meanAbsLogErrorAfter <= fit.meanAbsLogErrorBefore);
        for (double factor : fit.efficiency) QVERIFY(factor > 0 && factor <= 1);
        // Nothing to fit: the factors stay.
        const CalibrationFit none = fitEfficiencies({}, *target);
        QCOMPARE(none.samples, int64_t(0));
        QVERIFY(none.efficiency == target->efficiency);
    }

    void historyMigratesAndRefuses() {
        QTemporaryDir dir;
        // A version-1 file (times only), as the first release wrote it.
        const std::string v1 = dir.filePath(QStringLiteral("v1.sqlite")).toStdString();
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(v1.c_str(), &db), SQLITE_OK);
            const char* sql =
                "CREATE TABLE runs (id INTEGER PRIMARY KEY, unix_time INTEGER NOT NULL, module "
                "TEXT NOT NULL, "
                "fingerprint TEXT NOT NULL, target TEXT NOT NULL, device TEXT NOT NULL, machine "
                "TEXT NOT NULL, "
                "predicted_unfused_s REAL NOT NULL, predicted_fused_s REAL NOT NULL, "
                "measured_unfused_s REAL NOT "
                "NULL, measured_fused_s REAL NOT NULL);"
                "INSERT INTO runs VALUES (1, 1700000000, 'old', 'f', 'cpu', 'cpu', 'here', 3, 1, "
                "3, 1);"
                "PRAGMA user_version = 1;";
            QCOMPARE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
        auto migrated = EstimateHistory::open(v1);
        QVERIFY2(migrated.isOk(), migrated.status().toString().c_str());
        auto rows = (*migrated)->records();
        QVERIFY(rows.isOk());
        QCOMPARE(rows->size(), size_t(1));
        QCOMPARE(rows->front().measuredPeakFused, int64_t(0));  // the new columns' default
        QCOMPARE(*rows->front().speedupErrorPercent(), 0.0);
        HistoryRecord r = rows->front();
        r.measuredPeakFused = 7;
        QVERIFY((*migrated)->add(r).isOk());
        QCOMPARE((*migrated)->records()->back().measuredPeakFused, int64_t(7));
        QVERIFY((*migrated)->kernels().isOk());  // version 3's kernel table exists
        migrated->reset();
        {
            sqlite3* db = nullptr;
            sqlite3_open(v1.c_str(), &db);
            sqlite3_stmt* statement = nullptr;
            sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &statement, nullptr);
            QCOMPARE(sqlite3_step(statement), SQLITE_ROW);
            QCOMPARE(sqlite3_column_int(statement, 0), EstimateHistory::kSchemaVersion);
            sqlite3_finalize(statement);
            // A write cut off before its commit (the process died): not there after.
            QCOMPARE(
                sqlite3_exec(
                    db,
                    "BEGIN; INSERT INTO runs (unix_time, module, fingerprint, target, device, "
                    "machine, "
                    "predicted_unfused_s, predicted_fused_s, measured_unfused_s, measured_fused_s) "
                    "VALUES (1, 'torn', 'f', 'cpu', 'cpu', 'here', 1, 1, 1, 1);",
                    nullptr, nullptr, nullptr),
                SQLITE_OK);
            sqlite3_close(db);  // closes with the transaction open: rolled back
        }
        auto reopened = EstimateHistory::open(v1);
        QVERIFY(reopened.isOk());
        QCOMPARE((*reopened)->records()->size(), size_t(2));
        reopened->reset();
        // A newer schema than this build knows is refused, not rewritten.
        {
            sqlite3* db = nullptr;
            sqlite3_open(v1.c_str(), &db);
            sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
            sqlite3_close(db);
        }
        auto newer = EstimateHistory::open(v1);
        QVERIFY(!newer.isOk());
        QVERIFY2(QString::fromStdString(newer.status().message()).contains(QStringLiteral("newer")),
                 newer.status().message().c_str());
        // Not a database at all.
        const QString junk = dir.filePath(QStringLiteral("junk.sqlite"));
        QFile file(junk);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(4096, 'x'));
        file.close();
        auto bad = EstimateHistory::open(junk.toStdString());
        QVERIFY(!bad.isOk());
        QVERIFY2(QString::fromStdString(bad.status().message()).contains(junk),
                 bad.status().message().c_str());
        // Tables of the history's names made by another tool: refused, not written to.
        struct Foreign {
            const char* name;
            const char* sql;
            const char* why;
        };
        const Foreign foreign[] = {
            {"no_primary_key.sqlite",
             "CREATE TABLE runs (id INTEGER, unix_time INTEGER, module TEXT, fingerprint TEXT, target "
             "TEXT, device TEXT, machine TEXT, predicted_unfused_s REAL, predicted_fused_s REAL, "
             "measured_unfused_s REAL, measured_fused_s REAL); PRAGMA user_version = 1;",
             "runs.id is not"},
            {"missing_column.sqlite",
             "CREATE TABLE runs (id INTEGER PRIMARY KEY, module TEXT); CREATE TABLE kernels (run_id "
             "INTEGER); PRAGMA user_version = 3;",
             "has no column"},
        };
        for (const Foreign& f : foreign) {
            const std::string path = dir.filePath(QString::fromLatin1(f.name)).toStdString();
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, f.sql, nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
            auto refused = EstimateHistory::open(path);
            QVERIFY2(!refused.isOk(), f.name);
            QVERIFY2(QString::fromStdString(refused.status().message()).contains(QLatin1String(f.why)),
                     refused.status().message().c_str());
        }
    }

    void historyPath() {
        qputenv("HLOSCOPE_HISTORY", "/x/h.sqlite");
        QCOMPARE(QString::fromStdString(EstimateHistory::defaultPath()),
                 QStringLiteral("/x/h.sqlite"));
        qputenv("HLOSCOPE_HISTORY", "off");
        QVERIFY(EstimateHistory::defaultPath().empty());
        qunsetenv("HLOSCOPE_HISTORY");
        qputenv("XDG_DATA_HOME", "/data");
        QCOMPARE(QString::fromStdString(EstimateHistory::defaultPath()),
                 QStringLiteral("/data/hloscope/history.sqlite"));
        qunsetenv("XDG_DATA_HOME");
    }

    void errors() {
        auto module = example("softmax");
        EstimateOptions badTarget;
        badTarget.target = "nosuch";
        QVERIFY(!estimateModule(*module, badTarget).isOk());
        EstimateOptions badDevice;
        badDevice.device = "nosuch";
        auto result = estimateModule(*module, badDevice);
        QVERIFY(!result.isOk());
        QVERIFY2(
            QString::fromStdString(result.status().message()).contains(QStringLiteral("nosuch")),
            result.status().message().c_str());
    }
};

QTEST_MAIN(TestEstimate)
#include "tst_estimate.moc"
