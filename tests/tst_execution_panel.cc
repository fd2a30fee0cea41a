// ExecutionPanel: runs through the panel on the interpreter device (both
// modes, progress and finished signals, results checked against the
// reference), cancel, measured times, and the max-error helper; the GPU
// listed but greyed out without a driver, GPU plans exported for another
// machine and its results imported back.
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/gpu/gpu_device.h"
#include "compiler/backends/gpu/gpu_plan.h"
#include "compiler/backends/tpu/tpu_device.h"
#include "compiler/runtime/execution_modes.h"
#include "core/text/hlo_parser.h"
#include "tests/panel_test_util.h"
#include "views/execution/execution_panel.h"
#include "views/execution/timeline_view.h"
#include "tests/event_wait.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

// Selects the device `name` in the panel's combo box; false when it is not listed.
bool selectDevice(ExecutionPanel& panel, const char* name) {
    const int index = panel.deviceCombo()->findData(QString::fromUtf8(name));
    if (index < 0) return false;
    panel.deviceCombo()->setCurrentIndex(index);
    return true;
}

}  // namespace

class TestExecutionPanel : public QObject {
    Q_OBJECT
private slots:
    void devicesFromTheRegistry() {
        registerCpuBackend();
        ExecutionPanel panel;
        QVERIFY(panel.deviceCombo()->count() >= 1);
        QCOMPARE(panel.deviceCombo()->itemData(0).toString(), QStringLiteral("interpreter"));
        // The default is the fastest device that runs here: the CPU JIT without a GPU.
        QCOMPARE(panel.deviceCombo()->currentData().toString(), QStringLiteral("cpu"));
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
        QVERIFY(selectDevice(panel, "interpreter"));
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
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
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
        for (auto it = results[1].kernelSeconds.cbegin(); it != results[1].kernelSeconds.cend();
             ++it)
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
        QVERIFY(selectDevice(panel, "interpreter"));
        panel.setState(state);
        panel.setMode(ExecutionPanel::Mode::kBoth);
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        // Cancel as soon as the first progress report arrives.
        connect(&panel, &ExecutionPanel::progressChanged, &panel, [&panel] { panel.cancel(); });
        panel.run();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        QCOMPARE(finished.at(0).at(0).toBool(), false);
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("Cancelled."));
        QVERIFY(panel.measurements().isEmpty());
        QVERIFY(panel.runButton()->isEnabled());
    }

    // The interpreter and the CPU backend run every device of a module of several devices (the
    // same inputs on each; the CPU an executable per device, all at once, meeting at the
    // send/recv pairs), check every device's outputs and say so.
    void multiDeviceModuleRunsEveryDevice_data() {
        QTest::addColumn<QString>("device");
        QTest::newRow("interpreter") << QStringLiteral("interpreter");
        QTest::newRow("cpu") << QStringLiteral("cpu");
    }
    void multiDeviceModuleRunsEveryDevice() {
        QFETCH(QString, device);
        registerCpuBackend();
        DocumentStatePtr state =
            makeState("../../tests/golden/gpu/send_recv.hlo", device.toStdString());
        QVERIFY(state);
        ExecutionPanel panel;
        QVERIFY(selectDevice(panel, device.toStdString().c_str()));
        panel.setState(state);
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        panel.run();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QVERIFY(!panel.measurements().isEmpty());
        for (const ExecutionMeasurement& m : panel.measurements()) {
            QCOMPARE(m.devices, qint64(6));
            QCOMPARE(m.devicesChecked, int64_t(6));  // every device against the interpreter's
            QVERIFY2(m.passed, qPrintable(m.detail));
        }
        QVERIFY(panel.runButton()->isEnabled());
    }

    // The CPU backend through the panel: both modes JIT-compiled and checked,
    // per-kernel times for the graph's heat map (measuredTimes), and Cancel.
    void runsOnTheCpuBackend() {
        registerCpuBackend();
        DocumentStatePtr state = makeState("softmax.hlo", "cpu");
        QVERIFY(state);
        ExecutionPanel panel;
        QVERIFY(selectDevice(panel, "cpu"));
        panel.setState(state);
        panel.setMode(ExecutionPanel::Mode::kBoth);
        QSignalSpy progress(&panel, &ExecutionPanel::progressChanged);
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        QSignalSpy times(&panel, &ExecutionPanel::measuredTimes);
        panel.runButton()->click();
        QVERIFY(panel.cancelButton()->isEnabled() || finished.count() == 1);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
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
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(cancelled.count() == 1, 120000);
        QCOMPARE(cancelled.at(0).at(0).toBool(), false);
        QCOMPARE(cancelled.at(0).at(1).toString(), QStringLiteral("Cancelled."));
    }

    // A gpu document run on the cpu device: each mode is prepared by the cpu pipeline, whose
    // fusions are other kernels; the heat map gets only the times of instructions that are
    // kernels of the document's own module under the same name and opcode.
    void timesOfAnotherPipelineStayOffOtherKernels() {
        registerCpuBackend();
        DocumentStatePtr state = makeState("mlp.hlo", "h100");
        QVERIFY(state);
        ExecutionPanel panel;
        QVERIFY(selectDevice(panel, "cpu"));
        panel.setState(state);
        panel.setMode(ExecutionPanel::Mode::kFused);
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        QSignalSpy times(&panel, &ExecutionPanel::measuredTimes);
        panel.runButton()->click();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QVERIFY(panel.measurements().back().detail.contains(QStringLiteral("prepared by the cpu pipeline")));
        QVERIFY2(panel.measurements().back().detail.contains(
                     QStringLiteral("timed instructions are the document's own kernels")),
                 qPrintable(panel.measurements().back().detail));
        QVERIFY(!panel.measurements().back().kernelSeconds.isEmpty());
        QCOMPARE(times.count(), 1);
        const auto hash = times.at(0).at(0).value<QHash<QString, double>>();
        auto input = loadModuleFromFile(examplePath("mlp.hlo"));
        QVERIFY(input.isOk());
        auto shown = prepareCopyForMode(**input, "gpu", ExecutionMode::kFused);
        QVERIFY2(shown.isOk(), shown.status().toString().c_str());
        auto measured = prepareCopyForMode(**input, "cpu", ExecutionMode::kFused);
        QVERIFY2(measured.isOk(), measured.status().toString().c_str());
        auto find = [](const HloModule& module, const QString& name) -> const HloInstruction* {
            for (const auto& computation : module.computations())
                if (const HloInstruction* x = computation->findInstruction(name.toStdString())) return x;
            return nullptr;
        };
        for (auto it = hash.cbegin(); it != hash.cend(); ++it) {
            const HloInstruction* inShown = find(*shown->module, it.key());
            const HloInstruction* inMeasured = find(*measured->module, it.key());
            QVERIFY2(inShown && inMeasured, qPrintable(it.key()));
            QCOMPARE(inShown->opcode(), inMeasured->opcode());
            if (inShown->opcode() == HloOpcode::kFusion) {
                auto ops = [](const HloInstruction* fusion) {
                    std::vector<std::string> names;
                    for (const auto& inner : fusion->fusedComputation()->instructions())
                        if (inner->opcode() != HloOpcode::kParameter) names.push_back(inner->name());
                    std::sort(names.begin(), names.end());
                    return names;
                };
                QVERIFY2(ops(inShown) == ops(inMeasured), qPrintable(it.key()));
            }
            QVERIFY2(inShown->opcode() != HloOpcode::kGetTupleElement &&
                         inShown->opcode() != HloOpcode::kTuple &&
                         inShown->opcode() != HloOpcode::kParameter,
                     qPrintable(it.key()));
        }
        // The cpu pipeline's fusions are not the document's: none of its fusion names that the
        // gpu module lacks is on the map.
        for (const auto& computation : measured->module->computations())
            for (const auto& instruction : computation->instructions())
                if (instruction->opcode() == HloOpcode::kFusion &&
                    !find(*shown->module, QString::fromStdString(instruction->name())))
                    QVERIFY(!hash.contains(QString::fromStdString(instruction->name())));
    }

    void runsOnTheSimulatedTpu() {
        // A cpu document run on tpu-sim: each mode prepared by the tpu
        // pipeline, simulated times with a timeline, outputs checked against
        // the interpreter on TPU numerics; the trace exports.
        registerCpuBackend();
        registerTpuBackend();
        DocumentStatePtr state = makeState("mlp.hlo", "cpu");
        QVERIFY(state);
        ExecutionPanel panel;
        QVERIFY(selectDevice(panel, "tpu-sim-v5e"));
        panel.setState(state);
        panel.setMode(ExecutionPanel::Mode::kBoth);
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        QSignalSpy selected(&panel, &ExecutionPanel::instructionSelected);
        panel.runButton()->click();
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 120000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        const auto results = panel.measurements();
        QCOMPARE(results.size(), 2);
        for (const auto& m : results) {
            QVERIFY(m.simulated);
            QVERIFY(!m.timeline.empty());
            QVERIFY2(m.passed, qPrintable(m.detail));
            QVERIFY2(m.detail.contains(QStringLiteral("prepared by the tpu_v5e pipeline")),
                     qPrintable(m.detail));
            QVERIFY2(m.detail.contains(QStringLiteral("differs from the module's own (f32)")),
                     qPrintable(m.detail));
        }
        QVERIFY(panel.resultTable()->item(0, 2)->text().contains(QStringLiteral("simulated")));
        QVERIFY(!panel.timelineView()->isHidden());
        QVERIFY(panel.timelineView()->tracks().contains(QStringLiteral("MXU")));
        QVERIFY(!panel.exportTraceButton()->isHidden());
        // The timeline selects kernels both ways.
        panel.timelineView()->selectKernel(QStringLiteral("nosuch"));
        panel.selectInstruction(QString::fromStdString(results[1].timeline.front().kernel));
        QCOMPARE(panel.timelineView()->selectedKernel(),
                 QString::fromStdString(results[1].timeline.front().kernel));
        emit panel.timelineView()->kernelActivated(QStringLiteral("dot.8"));
        QCOMPARE(selected.count(), 1);
        QTemporaryDir dir;
        const QString trace = dir.filePath(QStringLiteral("trace.json"));
        QString error;
        QVERIFY2(panel.exportTrace(trace, &error), qPrintable(error));
        QFile file(trace);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(QJsonDocument::fromJson(file.readAll())
                    .object()
                    .value(QStringLiteral("traceEvents"))
                    .toArray()
                    .size() > 10);
        QVERIFY(!panel.exportTrace(dir.filePath(QStringLiteral("no/such/dir/t.json")), &error));
        QVERIFY(!error.isEmpty());
    }

    void gpuWithoutDriverIsGreyedOut() {
        qputenv("HLOSCOPE_GPU_RUNNER", HLOSCOPE_GPU_RUNNER_PATH);
        qputenv("HLOSCOPE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
        registerGpuBackend();
        ExecutionPanel panel;
        const int index = panel.deviceCombo()->findData(QStringLiteral("gpu"));
        QVERIFY(index >= 0);
        QVERIFY(panel.deviceCombo()->itemText(index).contains(QStringLiteral("unavailable")));
        QVERIFY(panel.deviceCombo()
                    ->itemData(index, Qt::ToolTipRole)
                    .toString()
                    .startsWith(QStringLiteral("no GPU found")));
        QCOMPARE(panel.deviceCombo()->itemData(index, Qt::UserRole - 1).toInt(),
                 0);  // not selectable
    }

    // Only the GPU device writes plans for another machine; the devices that
    // run here refuse, and the registry finds the GPU device as the exporter.
    void onlyTheGpuDeviceExportsPlans() {
        registerCpuBackend();
        registerTpuBackend();
        registerGpuBackend();
        auto module = parseHloModule(
            "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n");
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        QTemporaryDir dir;
        PlanExportOptions options;
        options.dir = dir.filePath(QStringLiteral("plan")).toStdString();
        for (const ExecutionDevicePtr& device : allDevices()) {
            const bool gpu = device->name() == "gpu";
            QCOMPARE(device->supportsPlanExport(), gpu);
            if (gpu) continue;
            auto plan = device->exportPlan(**module, **module, options);
            QVERIFY2(!plan.isOk(), device->name().c_str());
            QCOMPARE(plan.status().code(), StatusCode::kUnimplemented);
            QCOMPARE(device->importResults(dir.path().toStdString()).status().code(),
                     StatusCode::kUnimplemented);
        }
        auto exporter = findPlanExporter("gpu");
        QVERIFY2(exporter.isOk(), exporter.status().toString().c_str());
        QCOMPARE(QString::fromStdString((*exporter)->name()), QStringLiteral("gpu"));
    }

    // Plans written for a GPU machine; results as the runner would write them
    // (the interpreter's outputs) read back, checked and shown.
    void exportsGpuPlansAndImportsResults() {
        registerGpuBackend();  // the panel writes and reads plans through the GPU device
        DocumentStatePtr state = makeState("polynomial.hlo", "gpu");
        QVERIFY(state);
        ExecutionPanel panel;
        QVERIFY(selectDevice(panel, "interpreter"));
        panel.setState(state);
        panel.setMode(ExecutionPanel::Mode::kBoth);
        QVERIFY(panel.exportPlanButton()->isEnabled());
        QTemporaryDir dir;
        QSignalSpy finished(&panel, &ExecutionPanel::runFinished);
        panel.exportGpuPlans(dir.path());
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QVERIFY(panel.statusText().contains(QStringLiteral("GPU plans written")));
        for (const char* mode : {"unfused", "fused"}) {
            const std::string planDir = dir.filePath(QString::fromLatin1(mode)).toStdString();
            auto files = readGpuPlan(planDir);
            QVERIFY2(files.isOk(), files.status().toString().c_str());
            auto module = parseHloModule(files->moduleText);
            QVERIFY(module.isOk());
            auto interpreter = findDevice("interpreter");
            auto reference = (*interpreter)->run(**module, files->inputs, {});
            QVERIFY(reference.isOk());
            std::filesystem::create_directories(planDir + "/outputs");
            for (size_t i = 0; i < reference->outputs.size(); ++i)
                std::ofstream(planDir + "/outputs/" + std::to_string(i) + ".bin", std::ios::binary)
                    .write(static_cast<const char*>(reference->outputs[i].untypedData()),
                           reference->outputs[i].sizeInBytes());
            nlohmann::json steps = nlohmann::json::array();
            for (const GpuPlanStep& step : files->plan.steps)
                steps.push_back({{"name", step.name}, {"median_ms", 0.01}});
            std::ofstream(planDir + "/results.json") << nlohmann::json{
                {"format", "hloscope-gpu-results"},
                {"median_ms", 0.02},
                {"run_ms", {0.02}},
                {"device", {{"name", "Test GPU"}}},
                {"steps", steps}}.dump();
        }
        QSignalSpy measurements(&panel, &ExecutionPanel::measurementsReady);
        panel.importGpuResults(dir.path());
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 2, 60000);
        QVERIFY2(finished.at(1).at(0).toBool(), qPrintable(finished.at(1).at(1).toString()));
        QCOMPARE(measurements.count(), 1);
        QCOMPARE(panel.measurements().size(), 2);
        QCOMPARE(panel.measurements().at(0).mode, QStringLiteral("unfused"));
        QCOMPARE(panel.measurements().at(1).device, QStringLiteral("gpu (Test GPU, imported)"));
        QCOMPARE(panel.measurements().at(1).deviceKind, QStringLiteral("gpu"));
        QVERIFY(panel.measurements().at(1).passed);
        QCOMPARE(panel.resultTable()->rowCount(), 2);
        // A directory without plans: a clear failure.
        QTemporaryDir empty;
        panel.importGpuResults(empty.path());
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(finished.count() == 3, 60000);
        QVERIFY(!finished.at(2).at(0).toBool());
        QVERIFY(panel.statusText().contains(QStringLiteral("no plan.json")));
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
