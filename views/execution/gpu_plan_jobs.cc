#include "views/execution/gpu_plan_jobs.h"

#include <QDir>
#include <QObject>

#include "compiler/backends/gpu/gpu_import.h"
#include "compiler/backends/gpu/gpu_plan.h"
#include "compiler/runtime/execution_modes.h"
#include "core/ir/hlo_computation.h"
#include "core/text/hlo_printer.h"

namespace hloscope {

std::vector<std::pair<QString, int>> snapshotsForMode(const DocumentState& state,
                                                      ExecutionPanel::Mode mode) {
    std::vector<std::pair<QString, int>> runs;
    if (!state.snapshots || state.snapshots->empty()) return runs;
    const int last = static_cast<int>(state.snapshots->size()) - 1;
    int unfused = last;
    for (int i = 1; i <= last; ++i)
        if (isFusionPassName((*state.snapshots)[static_cast<size_t>(i)].pass)) {
            unfused = i - 1;
            break;
        }
    if (mode != ExecutionPanel::Mode::kFused) runs.emplace_back(QStringLiteral("unfused"), unfused);
    if (mode != ExecutionPanel::Mode::kUnfused) runs.emplace_back(QStringLiteral("fused"), last);
    return runs;
}

namespace {

StatusOr<std::unique_ptr<HloModule>> snapshotModule(const DocumentState& state, int index) {
    return (*state.snapshots)[static_cast<size_t>(index)].materialize();
}

}  // namespace

ExecutionPanel::Outcome exportGpuPlansJob(const DocumentStatePtr& state, ExecutionPanel::Mode mode,
                                          uint64_t seed, const QString& dir, const QString& sm) {
    ExecutionPanel::Outcome outcome;
    const auto runs = snapshotsForMode(*state, mode);
    if (runs.empty()) {
        outcome.error = QObject::tr("no module to export");
        return outcome;
    }
    auto input = snapshotModule(*state, 0);
    if (!input.isOk()) {
        outcome.error = QString::fromStdString(input.status().toString());
        return outcome;
    }
    std::vector<int64_t> seeds;
    const std::vector<Literal> args =
        syntheticArguments(*(*input)->entryComputation(), seed, seeds);
    const std::string inputText = printModule(**input);
    QStringList written;
    for (const auto& [label, index] : runs) {
        auto module = snapshotModule(*state, index);
        if (!module.isOk()) {
            outcome.error =
                label + QStringLiteral(": ") + QString::fromStdString(module.status().toString());
            return outcome;
        }
        GpuPlanOptions options;
        options.sm = sm.toStdString();
        options.mode = label.toStdString();
        auto plan = buildGpuPlan(**module, options);
        if (!plan.isOk()) {
            outcome.error = QObject::tr("%1 GPU plan: %2")
                                .arg(label, QString::fromStdString(plan.status().message()));
            return outcome;
        }
        const QString target = runs.size() > 1 ? QDir(dir).filePath(label) : dir;
        Status status = writeGpuPlan(*plan, args, inputText, printModule(**module),
                                     target.toStdString(), seeds);
        if (!status.isOk()) {
            outcome.error = QString::fromStdString(status.message());
            return outcome;
        }
        written << QObject::tr("%1 (%2 steps, %3 kernels)")
                       .arg(target)
                       .arg(plan->steps.size())
                       .arg(plan->kernels);
    }
    outcome.note =
        QObject::tr(
            "GPU plans written: %1. Run hloscope-gpu-runner on each on the GPU machine, then "
            "import the directory back.")
            .arg(written.join(QStringLiteral(", ")));
    return outcome;
}

ExecutionPanel::Outcome importGpuResultsJob(const QString& dir) {
    ExecutionPanel::Outcome outcome;
    auto runs = importGpuRuns(dir.toStdString());
    if (!runs.isOk()) {
        outcome.error = QString::fromStdString(runs.status().message());
        return outcome;
    }
    for (const ImportedGpuRun& run : *runs) {
        ExecutionMeasurement m;
        m.mode = QString::fromStdString(run.files.plan.mode);
        const auto name = run.results.device.find("name");
        m.device =
            QStringLiteral("gpu (%1, imported)")
                .arg(name == run.results.device.end() ? QStringLiteral("?")
                                                      : QString::fromStdString(name->second));
        m.deviceKind = QStringLiteral("gpu");
        m.wallSeconds = run.results.medianMs * 1e-3;
        m.maxError = run.check.maxAbsError;
        m.passed = run.check.passed;
        m.detail = QString::fromStdString(run.check.detail);
        if (run.sampled && m.detail.isEmpty())
            m.detail = QObject::tr("checked on a sample of each output");
        m.peakBytes = run.files.plan.arenaBytes;
        m.compileSeconds = run.files.plan.compileSeconds;
        for (const MeasuredTime& t : run.measurement.kernelTimes) {
            m.kernelSeconds.insert(QString::fromStdString(t.name), t.seconds);
            m.instructionSeconds.insert(QString::fromStdString(t.name), t.seconds);
        }
        outcome.measurements.append(m);
    }
    return outcome;
}

}  // namespace hloscope
