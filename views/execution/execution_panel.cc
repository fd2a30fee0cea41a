#include "views/execution/execution_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMetaObject>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <unordered_map>

#include "compiler/runtime/execution_modes.h"
#include "compiler/runtime/timeline_trace.h"
#include "core/interpreter/interpreter.h"
#include "core/support/thread_handoff.h"
#include "views/execution/gpu_plan_jobs.h"
#include "views/execution/timeline_view.h"
#include "views/model/seconds_text.h"

namespace hloscope {

namespace {

// Opcodes that make no kernel of their own on the graph: what a measured time of another
// pipeline's module cannot be put on.
bool isShownKernel(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kParameter:
        case HloOpcode::kConstant:
        case HloOpcode::kTuple:
        case HloOpcode::kGetTupleElement:
        case HloOpcode::kBitcast:
            return false;
        default:
            return true;
    }
}

// What a kernel computes, to tell whether two modules' instructions of one name are the same
// kernel: the opcode, and for a fusion the names and opcodes of its fused ops.
std::string kernelSignature(const HloInstruction& instruction) {
    std::string signature(hloOpcodeString(instruction.opcode()));
    if (instruction.opcode() != HloOpcode::kFusion || !instruction.fusedComputation()) return signature;
    std::vector<std::string> ops;
    for (const auto& inner : instruction.fusedComputation()->instructions())
        if (inner->opcode() != HloOpcode::kParameter)
            ops.push_back(inner->name() + ":" + std::string(hloOpcodeString(inner->opcode())));
    std::sort(ops.begin(), ops.end());
    for (const std::string& op : ops) signature += " " + op;
    return signature;
}

struct JobSpec {
    DocumentStatePtr state;
    ExecutionDevicePtr device;
    ExecutionDevicePtr reference;
    ExecutionPanel::Mode mode = ExecutionPanel::Mode::kFused;
    uint64_t seed = 0;
    std::shared_ptr<std::atomic<bool>> cancel;
    std::function<void(int, const QString&)> progress;
};

StatusOr<std::shared_ptr<const HloModule>> moduleAt(const DocumentState& state, int index) {
    if (index == state.current && state.module) return state.module;
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                         (*state.snapshots)[static_cast<size_t>(index)].materialize());
    return std::shared_ptr<const HloModule>(std::move(module));
}

ExecutionPanel::Outcome runJob(const JobSpec& spec) {
    ExecutionPanel::Outcome outcome;
    const DocumentState& state = *spec.state;
    if (!state.snapshots || state.snapshots->empty()) {
        outcome.error = QObject::tr("no module to run");
        return outcome;
    }
    const std::vector<std::pair<QString, int>> runs = snapshotsForMode(state, spec.mode);

    const int phases = static_cast<int>(runs.size()) + 1;
    auto phaseOptions = [&](int phase, const QString& label) {
        ExecutionOptions options;
        options.cancel = spec.cancel.get();
        options.progress = [&spec, phase, phases, label](double fraction, const std::string& what) {
            const int percent = static_cast<int>((phase + fraction) * 100.0 / phases);
            spec.progress(std::clamp(percent, 0, 100),
                          what.empty()
                              ? label
                              : label + QStringLiteral(": %") + QString::fromStdString(what));
        };
        return options;
    };
    auto fail = [&](const Status& status, const QString& what) {
        if (status.code() == StatusCode::kCancelled || spec.cancel->load())
            outcome.cancelled = true;
        outcome.error = what + QStringLiteral(": ") + QString::fromStdString(status.toString());
        return outcome;
    };

    // Reference: the interpreter on the input module.
    StatusOr<std::shared_ptr<const HloModule>> input = moduleAt(state, 0);
    if (!input.isOk()) return fail(input.status(), QObject::tr("loading the input module"));
    const std::vector<Literal> args = makeRandomArguments(*(*input)->entryComputation(), spec.seed);
    // The reference: the interpreter on the numerics the device implements
    // (the simulated TPU's bf16 MXU passes); the module's own numerics too
    // when those differ, for the difference they make.
    StatusOr<std::unique_ptr<HloModule>> numerics = spec.device->numericsModule(**input);
    if (!numerics.isOk())
        return fail(numerics.status(), QString::fromStdString(spec.device->name()));
    StatusOr<ExecutionResult> reference = spec.reference->run(
        *numerics ? **numerics : **input, args, phaseOptions(0, QObject::tr("reference")));
    if (!reference.isOk()) return fail(reference.status(), QObject::tr("reference interpreter"));
    std::optional<std::vector<Literal>> ownNumerics;
    if (*numerics) {
        StatusOr<ExecutionResult> own =
            spec.reference->run(**input, args, phaseOptions(0, QObject::tr("reference")));
        if (!own.isOk()) return fail(own.status(), QObject::tr("reference interpreter"));
        ownNumerics = std::move(own->outputs);
    }
    // A device of another hardware family than the document's pipeline runs
    // the input prepared by its own pipeline (the simulated TPU needs tiled
    // layouts), in the mode of the snapshot that would have run.
    const std::string_view family = hardwareFamily(spec.device->kind());
    const bool ownPipeline = !family.empty() && family != state.pipelineTarget;
    const std::string deviceTarget =
        !spec.device->modelTarget().empty() ? spec.device->modelTarget() : std::string(family);

    for (size_t r = 0; r < runs.size(); ++r) {
        const auto& [label, index] = runs[r];
        if (spec.cancel->load()) return fail(Status(StatusCode::kCancelled, "cancelled"), label);
        StatusOr<std::shared_ptr<const HloModule>> module = moduleAt(state, index);
        if (!module.isOk()) return fail(module.status(), label);
        const std::shared_ptr<const HloModule> shownModule = *module;
        if (ownPipeline) {
            const ExecutionMode mode =
                label == QLatin1String("unfused") ? ExecutionMode::kUnfused : ExecutionMode::kFused;
            StatusOr<PreparedModule> prepared = prepareCopyForMode(**input, deviceTarget, mode);
            if (!prepared.isOk())
                return fail(
                    prepared.status(),
                    label +
                        QStringLiteral(" (%1 pipeline)").arg(QString::fromStdString(deviceTarget)));
            module = prepared->module;
        }
        StatusOr<ExecutionResult> result =
            spec.device->run(**module, args, phaseOptions(static_cast<int>(r) + 1, label));
        if (!result.isOk())
            return fail(result.status(), label + QStringLiteral(" on ") +
                                             QString::fromStdString(spec.device->name()));
        ExecutionMeasurement m;
        m.mode = label;
        m.device = QString::fromStdString(spec.device->name());
        m.devices = result->devices;
        m.deviceKind = QString::fromStdString(spec.device->kind());
        m.snapshot = index;
        m.wallSeconds = result->wallSeconds;
        m.peakBytes = result->peakBytes;
        m.compileSeconds = result->compileSeconds;
        m.simulated = result->simulated;
        m.timeline = result->timeline;
        const OutputCheck check = checkDeviceOutputs(*reference, *result, &m.devicesChecked);
        m.maxError = check.maxAbsError;
        m.detail = QString::fromStdString(check.detail);
        if (ownNumerics) {
            const OutputCheck own = checkOutputs(*ownNumerics, result->outputs);
            const QString difference = QObject::tr(
                                           "checked against %1's numerics; differs from the "
                                           "module's own (f32) by up to %2")
                                           .arg(m.device)
                                           .arg(own.maxAbsError, 0, 'g', 3);
            m.detail =
                m.detail.isEmpty() ? difference : m.detail + QStringLiteral("; ") + difference;
        }
        if (ownPipeline)
            m.detail += (m.detail.isEmpty() ? QString() : QStringLiteral("; ")) +
                        QObject::tr("prepared by the %1 pipeline (the document's is %2)")
                            .arg(QString::fromStdString(deviceTarget),
                                 QString::fromStdString(state.pipelineTarget));
        m.passed = check.passed;
        // Times of a module the device's own pipeline prepared go on the document's graph only
        // where they mean the same there: an instruction of that name and opcode that is a
        // kernel of the document's module, and for a fusion one of the same ops (the other
        // pipeline's fusions are mostly other kernels; tuples and get-tuple-elements cost
        // nothing).
        std::unordered_map<std::string, std::string> shownKernels;
        if (ownPipeline)
            for (const auto& computation : shownModule->computations())
                for (const auto& instruction : computation->instructions())
                    if (isShownKernel(instruction->opcode()))
                        shownKernels.emplace(instruction->name(), kernelSignature(*instruction));
        std::unordered_map<std::string, const HloInstruction*> measuredByName;
        if (ownPipeline)
            for (const auto& computation : (*module)->computations())
                for (const auto& instruction : computation->instructions())
                    measuredByName.emplace(instruction->name(), instruction.get());
        for (const MeasuredTime& t : result->instructionTimes) {
            if (ownPipeline) {
                const auto shown = shownKernels.find(t.name);
                const auto measured = measuredByName.find(t.name);
                if (shown == shownKernels.end() || measured == measuredByName.end() ||
                    kernelSignature(*measured->second) != shown->second)
                    continue;
            }
            m.instructionSeconds.insert(QString::fromStdString(t.name), t.seconds);
        }
        if (ownPipeline)
            m.detail += QStringLiteral("; ") +
                        QObject::tr("%1 of its %2 timed instructions are the document's own kernels "
                                    "(the graph's heat map)")
                            .arg(m.instructionSeconds.size())
                            .arg(result->instructionTimes.size());
        for (const MeasuredTime& t : result->kernelTimes)
            m.kernelSeconds.insert(QString::fromStdString(t.name), t.seconds);
        outcome.measurements.append(m);
    }
    return outcome;
}

}  // namespace

ExecutionPanel::ExecutionPanel(QWidget* parent) : QWidget(parent) {
    qRegisterMetaType<hloscope::ExecutionMeasurement>();
    m_deviceCombo = new QComboBox(this);
    m_modeCombo = new QComboBox(this);
    m_modeCombo->addItem(tr("Unfused"));
    m_modeCombo->addItem(tr("Fused"));
    m_modeCombo->addItem(tr("Both"));
    m_modeCombo->setCurrentIndex(static_cast<int>(Mode::kBoth));
    m_modeCombo->setToolTip(
        tr("Unfused: the module before the first fusion pass; fused: the latest pass state"));
    m_seedSpin = new QSpinBox(this);
    m_seedSpin->setRange(0, std::numeric_limits<int>::max());
    m_seedSpin->setPrefix(tr("seed "));
    m_runButton = new QPushButton(tr("Run"), this);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_cancelButton->setEnabled(false);
    m_exportButton = new QPushButton(tr("Export GPU plan..."), this);
    m_exportButton->setToolTip(
        tr("Write PTX, launch dimensions, buffers and inputs of the unfused and fused module "
           "for hloscope-gpu-runner on a GPU machine"));
    m_importButton = new QPushButton(tr("Import GPU results..."), this);
    m_importButton->setToolTip(
        tr("Read back what hloscope-gpu-runner measured and check its outputs against the "
           "reference interpreter"));
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_status = new QLabel(
        tr("Random inputs from the seed; results checked against the reference interpreter."),
        this);
    m_status->setWordWrap(true);
    m_results = new QTableWidget(0, 6, this);
    m_results->setHorizontalHeaderLabels({tr("Mode"), tr("Device"), tr("Time (measured)"),
                                          tr("Max error"), tr("Check"), tr("Detail")});
    m_results->horizontalHeader()->setStretchLastSection(true);
    m_results->verticalHeader()->hide();
    m_results->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_times = new QTableWidget(0, 3, this);
    m_times->setHorizontalHeaderLabels({tr("Instruction"), tr("Opcode run"), tr("Measured")});
    m_times->horizontalHeader()->setStretchLastSection(true);
    m_times->verticalHeader()->hide();
    m_times->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_times->setSortingEnabled(true);
    m_times->setSelectionBehavior(QAbstractItemView::SelectRows);

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Device:"), this));
    controls->addWidget(m_deviceCombo, 1);
    controls->addWidget(new QLabel(tr("Mode:"), this));
    controls->addWidget(m_modeCombo);
    controls->addWidget(m_seedSpin);
    controls->addWidget(m_runButton);
    controls->addWidget(m_cancelButton);
    auto* remote = new QHBoxLayout;
    remote->addWidget(new QLabel(tr("GPU on another machine:"), this));
    remote->addWidget(m_exportButton);
    remote->addWidget(m_importButton);
    remote->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addLayout(remote);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(m_results, 1);
    layout->addWidget(new QLabel(tr("Per-instruction measured times of the last run:"), this));
    layout->addWidget(m_times, 2);
    m_timelineLabel = new QLabel(this);
    m_timelineLabel->setWordWrap(true);
    m_timeline = new TimelineView(this);
    m_traceButton = new QPushButton(tr("Export trace..."), this);
    m_traceButton->setToolTip(
        tr("Save the timelines as a Chrome trace (open in ui.perfetto.dev or chrome://tracing)"));
    m_timelineLabel->hide();
    m_timeline->hide();
    m_traceButton->hide();
    auto* timelineHeader = new QHBoxLayout;
    timelineHeader->addWidget(m_timelineLabel, 1);
    timelineHeader->addWidget(m_traceButton);
    layout->addLayout(timelineHeader);
    layout->addWidget(m_timeline, 1);
    connect(m_timeline, &TimelineView::kernelActivated, this, &ExecutionPanel::instructionSelected);
    connect(m_traceButton, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export trace"), QStringLiteral("trace.json"), tr("Chrome trace (*.json)"));
        if (path.isEmpty()) return;
        QString error;
        if (!exportTrace(path, &error))
            m_status->setText(tr("Trace not written: %1").arg(error));
        else
            m_status->setText(tr("Trace written to %1").arg(QDir::toNativeSeparators(path)));
    });

    m_watcher = new QFutureWatcher<Outcome>(this);
    connect(m_watcher, &QFutureWatcher<Outcome>::finished, this, &ExecutionPanel::onFinished);
    connect(m_runButton, &QPushButton::clicked, this, &ExecutionPanel::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &ExecutionPanel::cancel);
    connect(m_exportButton, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Export GPU plan into"));
        if (!dir.isEmpty()) exportGpuPlans(dir);
    });
    connect(m_importButton, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Import GPU results from"));
        if (!dir.isEmpty()) importGpuResults(dir);
    });
    connect(m_times, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (QTableWidgetItem* item = m_times->item(row, 0)) emit instructionSelected(item->text());
    });
    refreshDevices();
    m_runButton->setEnabled(false);
    m_exportButton->setEnabled(false);
}

ExecutionPanel::~ExecutionPanel() {
    if (m_cancel) m_cancel->store(true);
    m_watcher->waitForFinished();
}

void ExecutionPanel::refreshDevices() {
    const QString current = m_deviceCombo->currentData().toString();
    m_deviceCombo->clear();
    for (const ExecutionDevicePtr& device : allDevices()) {
        std::string why;
        const bool available = device->available(&why);
        const QString name = QString::fromStdString(device->name());
        m_deviceCombo->addItem(available ? name : tr("%1 (unavailable)").arg(name), name);
        const int index = m_deviceCombo->count() - 1;
        m_deviceCombo->setItemData(index,
                                   QString::fromStdString(available ? device->description() : why),
                                   Qt::ToolTipRole);
        if (!available) {
            // Listed so people see it exists, but not selectable.
            m_deviceCombo->setItemData(index, 0, Qt::UserRole - 1);
        }
    }
    // The device chosen before; at first the fastest that runs here (a GPU, else the CPU JIT).
    // The interpreter stays the reference every run is checked against.
    int index = m_deviceCombo->findData(current);
    for (const char* fastest : {"gpu", "cpu"}) {
        if (index >= 0) break;
        const int candidate = m_deviceCombo->findData(QString::fromLatin1(fastest));
        if (candidate >= 0 && m_deviceCombo->itemData(candidate, Qt::UserRole - 1).isNull()) index = candidate;
    }
    m_deviceCombo->setCurrentIndex(index >= 0 ? index : 0);
}

QString ExecutionPanel::statusText() const { return m_status->text(); }

void ExecutionPanel::setMode(Mode mode) { m_modeCombo->setCurrentIndex(static_cast<int>(mode)); }
ExecutionPanel::Mode ExecutionPanel::mode() const {
    return static_cast<Mode>(m_modeCombo->currentIndex());
}
void ExecutionPanel::setSeed(int seed) { m_seedSpin->setValue(seed); }
bool ExecutionPanel::isRunning() const { return m_watcher->isRunning(); }

void ExecutionPanel::setState(DocumentStatePtr state) {
    m_state = std::move(state);
    const bool hasModule = m_state && m_state->snapshots && !m_state->snapshots->empty();
    m_runButton->setEnabled(hasModule && !isRunning());
    m_exportButton->setEnabled(hasModule && !isRunning());
}

bool ExecutionPanel::exportTrace(const QString& path, QString* error) const {
    std::vector<NamedTimeline> timelines;
    for (const ExecutionMeasurement& m : m_measurements)
        if (!m.timeline.empty())
            timelines.push_back({(m.device + QLatin1Char(' ') + m.mode).toStdString(), m.timeline});
    if (timelines.empty()) {
        if (error)
            *error = tr("the last run has no timeline (only the simulated TPU models its units)");
        return false;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error) *error = file.errorString();
        return false;
    }
    const QByteArray json = QByteArray::fromStdString(chromeTraceJson(timelines));
    // flush() before commit(): Qt 6.4's commit() misses an error in its own final flush.
    if (file.write(json) != json.size() || !file.flush() || !file.commit()) {
        if (error) *error = file.errorString();
        return false;
    }
    return true;
}

void ExecutionPanel::selectInstruction(const QString& name) {
    m_timeline->selectKernel(name);
    const QList<QTableWidgetItem*> found = m_times->findItems(name, Qt::MatchExactly);
    for (QTableWidgetItem* item : found)
        if (item->column() == 0) {
            QSignalBlocker block(m_times);
            m_times->setCurrentItem(item);
            m_times->scrollToItem(item);
            return;
        }
}

void ExecutionPanel::reportProgress(int percent, const QString& what) {
    m_progress->setValue(percent);
    m_status->setText(what);
    emit progressChanged(percent, what);
}

void ExecutionPanel::run() {
    if (isRunning()) return;
    if (!m_state || !m_state->snapshots || m_state->snapshots->empty()) {
        m_status->setText(tr("Open a module first."));
        emit runFinished(false, m_status->text());
        return;
    }
    StatusOr<ExecutionDevicePtr> device =
        findDevice(m_deviceCombo->currentData().toString().toStdString());
    StatusOr<ExecutionDevicePtr> reference = findDevice("interpreter");
    if (!device.isOk() || !reference.isOk()) {
        m_status->setText(
            QString::fromStdString((device.isOk() ? reference : device).status().message()));
        emit runFinished(false, m_status->text());
        return;
    }
    std::string why;
    if (!(*device)->available(&why)) {
        m_status->setText(
            tr("Device %1 is not available: %2")
                .arg(QString::fromStdString((*device)->name()), QString::fromStdString(why)));
        emit runFinished(false, m_status->text());
        return;
    }
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_lastPercent = -1;
    JobSpec spec;
    spec.state = m_state;
    spec.device = *device;
    spec.reference = *reference;
    spec.mode = mode();
    spec.seed = static_cast<uint64_t>(m_seedSpin->value());
    spec.cancel = m_cancel;
    // Progress arrives on the worker thread: forward only percent changes,
    // queued to the GUI thread (posted events die with the panel).
    auto last = std::make_shared<std::atomic<int>>(-1);
    QPointer<ExecutionPanel> self(this);
    spec.progress = [self, last](int percent, const QString& what) {
        if (last->exchange(percent) == percent) return;
        handoff::send();
        QMetaObject::invokeMethod(
            self.data(),
            [self, percent, what] {
                handoff::receive();
                if (self) self->reportProgress(percent, what);
            },
            Qt::QueuedConnection);
    };
    m_runButton->setEnabled(false);
    m_cancelButton->setEnabled(true);
    m_progress->setValue(0);
    m_status->setText(tr("Running..."));
    emit runStarted();
    m_watcher->setFuture(QtConcurrent::run(handoff::wrap([spec] { return runJob(spec); })));
}

void ExecutionPanel::startJob(std::function<Outcome()> job, const QString& what) {
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_runButton->setEnabled(false);
    m_exportButton->setEnabled(false);
    m_importButton->setEnabled(false);
    m_progress->setValue(0);
    m_status->setText(what);
    emit runStarted();
    m_watcher->setFuture(QtConcurrent::run(handoff::wrap(std::move(job))));
}

void ExecutionPanel::exportGpuPlans(const QString& dir) {
    if (isRunning()) return;
    if (!m_state || !m_state->snapshots || m_state->snapshots->empty()) {
        m_status->setText(tr("Open a module first."));
        emit runFinished(false, m_status->text());
        return;
    }
    DocumentStatePtr state = m_state;
    const Mode mode = this->mode();
    const uint64_t seed = static_cast<uint64_t>(m_seedSpin->value());
    startJob([state, mode, seed,
              dir] { return exportGpuPlansJob(state, mode, seed, dir, QStringLiteral("sm_90")); },
             tr("Writing GPU plans..."));
}

void ExecutionPanel::importGpuResults(const QString& dir) {
    if (isRunning()) return;
    startJob([dir] { return importGpuResultsJob(dir); }, tr("Reading GPU results..."));
}

void ExecutionPanel::cancel() {
    if (m_cancel && isRunning()) {
        m_cancel->store(true);
        m_status->setText(tr("Cancelling..."));
    }
}

void ExecutionPanel::onFinished() {
    handoff::receive();
    const Outcome outcome = m_watcher->result();
    m_cancelButton->setEnabled(false);
    m_runButton->setEnabled(m_state != nullptr);
    m_exportButton->setEnabled(m_state != nullptr);
    m_importButton->setEnabled(true);
    bool ok = outcome.error.isEmpty();
    QString message;
    if (outcome.cancelled) {
        message = tr("Cancelled.");
        ok = false;
    } else if (!outcome.error.isEmpty()) {
        message = tr("Failed: %1").arg(outcome.error);
    } else if (outcome.measurements.isEmpty()) {
        message = outcome.note;
    } else {
        m_measurements = outcome.measurements;
        m_results->setRowCount(0);
        for (const ExecutionMeasurement& m : m_measurements) {
            const int row = m_results->rowCount();
            m_results->insertRow(row);
            m_results->setItem(row, 0, new QTableWidgetItem(m.mode));
            // Every device of a module's grid: checked on every device where both runs return them.
            m_results->setItem(
                row, 1,
                new QTableWidgetItem(m.devices > 1
                                         ? (m.devicesChecked == m.devices
                                                ? tr("%1, %2 devices (every device checked)")
                                                : tr("%1, %2 devices (device 0 checked)"))
                                               .arg(m.device)
                                               .arg(m.devices)
                                         : m.device));
            auto* time = new QTableWidgetItem(secondsText(m.wallSeconds) +
                                              (m.simulated ? tr(" (simulated)") : QString()));
            if (m.simulated)
                time->setToolTip(
                    tr("Simulated by %1's timeline model, not measured by a clock").arg(m.device));
            m_results->setItem(row, 2, time);
            m_results->setItem(row, 3, new QTableWidgetItem(QString::number(m.maxError, 'g', 4)));
            auto* check = new QTableWidgetItem(m.passed ? tr("pass") : tr("FAIL"));
            check->setForeground(m.passed ? QColor(0, 128, 0) : QColor(200, 0, 0));
            m_results->setItem(row, 4, check);
            m_results->setItem(row, 5, new QTableWidgetItem(m.detail));
            ok = ok && m.passed;
        }
        const ExecutionMeasurement& shown = m_measurements.back();
        m_times->setSortingEnabled(false);
        m_times->setRowCount(0);
        for (auto it = shown.instructionSeconds.cbegin(); it != shown.instructionSeconds.cend();
             ++it) {
            const int row = m_times->rowCount();
            m_times->insertRow(row);
            m_times->setItem(row, 0, new QTableWidgetItem(it.key()));
            m_times->setItem(
                row, 1, new QTableWidgetItem(shown.mode + QStringLiteral(" / ") + shown.device));
            auto* time = new QTableWidgetItem(secondsText(it.value()));
            time->setData(Qt::UserRole, it.value());
            m_times->setItem(row, 2, time);
        }
        m_times->setSortingEnabled(true);
        m_timeline->setEvents(shown.timeline);
        m_timeline->setVisible(!shown.timeline.empty());
        m_timelineLabel->setVisible(!shown.timeline.empty());
        m_traceButton->setVisible(!shown.timeline.empty());
        m_timelineLabel->setText(tr("Timeline of the %1 run on %2 (simulated; wheel zooms, drag "
                                    "pans, double click fits, click selects the kernel):")
                                     .arg(shown.mode, shown.device));
        message = ok ? tr("Done: every result matches the reference interpreter.")
                     : tr("Done, but a result differs from the reference interpreter.");
        emit measuredOn(shown.device);
        emit measuredTimes(shown.instructionSeconds);
        emit measurementsReady(m_measurements);
    }
    m_progress->setValue(ok ? 100 : m_progress->value());
    m_status->setText(message);
    emit runFinished(ok, message);
}

}  // namespace hloscope
