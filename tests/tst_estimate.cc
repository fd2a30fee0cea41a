// The estimate (compiler/estimator/estimate.h): predicted figures equal the
// performance model and buffer assignment on the prepared modules, measured
// ones come from the device run, break-even and error arithmetic, and every
// error class (unknown target, unknown or unavailable device).
#include <QtTest>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QSvgRenderer>

#include <cmath>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/cost/performance_model.h"
#include "compiler/estimator/estimate.h"
#include "compiler/estimator/estimate_report.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/module_io.h"

using namespace hloscope;

namespace {

std::unique_ptr<HloModule> example(const char* name) {
    auto module = loadModuleFromFile(std::string(HLOSCOPE_SOURCE_DIR "/resources/examples/") + name + ".hlo");
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
                QTest::newRow((std::string(name) + " " + target).c_str()) << QString(name) << QString(target);
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
        QCOMPARE(QString::fromStdString(estimate->target), QString::fromStdString(description->name));
        for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
            auto prepared = prepareForMode(example(name.toStdString().c_str()), options.target, mode);
            QVERIFY(prepared.isOk());
            const ModulePrediction prediction = predictModule(**prepared, *description);
            const bool fused = mode == ExecutionMode::kFused;
            QCOMPARE(fused ? estimate->predicted.fusedSeconds : estimate->predicted.unfusedSeconds,
                     prediction.totalSeconds);
            QCOMPARE(fused ? estimate->predicted.peakBytesFused : estimate->predicted.peakBytesUnfused,
                     peakMemoryBytes(**prepared));
            double sum = 0;
            for (const KernelEstimate& k : fused ? estimate->fusedKernels : estimate->unfusedKernels)
                sum += k.predictedSeconds;
            QVERIFY(std::fabs(sum - prediction.totalSeconds) <= 1e-12 + 1e-9 * prediction.totalSeconds);
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
        // The device's allocations: what buffer assignment planned, give or take alignment and scratch.
        QVERIFY(m.peakBytesFused >= estimate->predicted.peakBytesFused * 0.95);
        QVERIFY(m.peakBytesFused <= estimate->predicted.peakBytesFused * 1.05);
        QVERIFY(std::fabs(*estimate->memoryErrorPercent()) < 5.0);
        // The code generation is in the measured compile time.
        QVERIFY(m.compileSeconds > estimate->predicted.compileSeconds * 0.5);
        // Every kernel of both modes was timed.
        for (const auto* kernels : {&estimate->unfusedKernels, &estimate->fusedKernels})
            for (const KernelEstimate& k : *kernels) QVERIFY2(k.measuredSeconds.has_value(), k.name.c_str());
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
        const QString html = QString::fromStdString(estimateReportHtml(reports, "2026-11-25T12:00:00Z"));
        QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
        QVERIFY(html.contains(QStringLiteral("Generated 2026-11-25T12:00:00Z")));
        QVERIFY(html.contains(QStringLiteral("softmax&lt;&amp;&gt;")));
        QVERIFY(!html.contains(QStringLiteral("softmax<&>")));
        QVERIFY(!html.contains(QStringLiteral("<script")) && !html.contains(QStringLiteral("src=")));
        QVERIFY(html.contains(QStringLiteral("Your baseline: 140 ms, 11 MB &rarr; 70 ms")));
        QVERIFY(html.contains(QStringLiteral("Predicted speedup against measured over 2 module(s)")));
        QCOMPARE(html.count(QStringLiteral("<h2 id=")), 2);
        const QRegularExpression svg(QStringLiteral("<svg.*?</svg>"), QRegularExpression::DotMatchesEverythingOption);
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

    void errors() {
        auto module = example("softmax");
        EstimateOptions badTarget;
        badTarget.target = "nosuch";
        QVERIFY(!estimateModule(*module, badTarget).isOk());
        EstimateOptions badDevice;
        badDevice.device = "nosuch";
        auto result = estimateModule(*module, badDevice);
        QVERIFY(!result.isOk());
        QVERIFY2(QString::fromStdString(result.status().message()).contains(QStringLiteral("nosuch")),
                 result.status().message().c_str());
    }
};

QTEST_MAIN(TestEstimate)
#include "tst_estimate.moc"
