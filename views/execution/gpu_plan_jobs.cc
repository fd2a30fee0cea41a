#include "views/execution/gpu_plan_jobs.h"

#include <QDir>
#include <QObject>

#include "compiler/runtime/execution_device.h"
#include "compiler/runtime/execution_modes.h"

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
    auto device = findPlanExporter("gpu");
    if (!device.isOk()) {
        outcome.error = QString::fromStdString(device.status().message());
        return outcome;
    }
    auto input = snapshotModule(*state, 0);
    if (!input.isOk()) {
        outcome.error = QString::fromStdString(input.status().toString());
        return outcome;
    }
    QStringList written;
    for (const auto& [label, index] : runs) {
        auto module = snapshotModule(*state, index);
        if (!module.isOk()) {
            outcome.error =
                label + QStringLiteral(": ") + QString::fromStdString(module.status().toString());
            return outcome;
        }
        const QString target = runs.size() > 1 ? QDir(dir).filePath(label) : dir;
        PlanExportOptions options;
        options.dir = target.toStdString();
        options.mode = label.toStdString();
        options.target = sm.toStdString();
        options.seed = seed;
        auto plan = (*device)->exportPlan(**module, **input, options);
        if (!plan.isOk()) {
            outcome.error = QString::fromStdString(plan.status().message());
            return outcome;
        }
        written << QObject::tr("%1 (%2 steps, %3 kernels)")
                       .arg(target)
                       .arg(plan->steps)
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
    auto device = findPlanExporter("gpu");
    if (!device.isOk()) {
        outcome.error = QString::fromStdString(device.status().message());
        return outcome;
    }
    auto runs = (*device)->importResults(dir.toStdString());
    if (!runs.isOk()) {
        outcome.error = QString::fromStdString(runs.status().message());
        return outcome;
    }
    for (const ImportedPlanRun& run : *runs) {
        ExecutionMeasurement m;
        m.mode = QString::fromStdString(run.mode);
        m.device = QStringLiteral("gpu (%1, imported)")
                       .arg(run.machine ? QString::fromStdString(*run.machine)
                                        : QStringLiteral("?"));
        m.deviceKind = QStringLiteral("gpu");
        m.wallSeconds = run.wallSeconds;
        m.maxError = run.maxAbsError;
        m.passed = run.passed;
        m.detail = QString::fromStdString(run.detail);
        if (run.sampled && m.detail.isEmpty())
            m.detail = QObject::tr("checked on a sample of each output");
        m.peakBytes = run.peakBytes;
        m.compileSeconds = run.compileSeconds;
        for (const MeasuredTime& t : run.kernelTimes) {
            m.kernelSeconds.insert(QString::fromStdString(t.name), t.seconds);
            m.instructionSeconds.insert(QString::fromStdString(t.name), t.seconds);
        }
        outcome.measurements.append(m);
    }
    return outcome;
}

}  // namespace hloscope
