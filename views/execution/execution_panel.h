// ExecutionPanel: runs the state's module on an execution device
// (compiler/runtime) and measures it. Modes: unfused (the snapshot just
// before the first fusion pass: the module after simplification), fused
// (the latest snapshot), or both. Inputs are seeded random arguments
// (makeRandomArguments); every result is checked against the reference
// interpreter on the input module (snapshot 0) with the per-type tolerance
// of checkOutputs (compiler/runtime/execution_modes.h), and the maximum absolute error is shown.
// Runs happen on a worker thread (QtConcurrent) with progress and cancel; the GUI never blocks.
// Per-instruction measured times of the last run (fused when it ran) are emitted as measuredTimes
// (the graph's heat map, the inspector), and every run as measurementsReady (the estimator).
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QWidget>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "compiler/runtime/execution_device.h"
#include "views/document/document_panel.h"
#include "views/document/document_state.h"
#include "views/model/execution_measurement.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace hloscope {
class TimelineView;
}

namespace hloscope {

class ExecutionPanel : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    enum class Mode { kUnfused, kFused, kBoth };

    explicit ExecutionPanel(QWidget* parent = nullptr);
    ~ExecutionPanel() override;

    QComboBox* deviceCombo() const { return m_deviceCombo; }
    QComboBox* modeCombo() const { return m_modeCombo; }
    QSpinBox* seedSpin() const { return m_seedSpin; }
    QPushButton* runButton() const { return m_runButton; }
    QPushButton* cancelButton() const { return m_cancelButton; }
    QPushButton* exportPlanButton() const { return m_exportButton; }
    QPushButton* importResultsButton() const { return m_importButton; }
    QProgressBar* progressBar() const { return m_progress; }
    QTableWidget* resultTable() const { return m_results; }
    // The last run's unit timeline (hidden unless the device models its units).
    TimelineView* timelineView() const { return m_timeline; }
    QPushButton* exportTraceButton() const { return m_traceButton; }
    // Writes the last run's timelines (every mode that has one) as a Chrome
    // trace (chrome://tracing, Perfetto); false with `error` set on failure.
    bool exportTrace(const QString& path, QString* error = nullptr) const;
    QString statusText() const;

    void setMode(Mode mode);
    Mode mode() const;
    void setSeed(int seed);
    bool isRunning() const;
    // The measurements of the last finished run.
    QList<ExecutionMeasurement> measurements() const { return m_measurements; }
    // Re-reads the device registry into the combo.
    void refreshDevices();

public slots:
    void setState(hloscope::DocumentStatePtr state) override;
    void selectInstruction(const QString& name);
    void run();
    void cancel();
    // For a GPU on another machine (gpu_plan_jobs.h), on the worker thread:
    // writes GPU plans of the module (the mode combo's modes, the seed's
    // synthetic inputs) into `dir` (dir/unfused, dir/fused for both), or
    // reads a GPU machine's results from `dir` and shows them as
    // measurements, checked against the interpreter.
    void exportGpuPlans(const QString& dir);
    void importGpuResults(const QString& dir);

signals:
    void instructionSelected(const QString& name);
    void runStarted();
    // 0..100 and what runs now ("reference: %add.3", "fused: %fusion").
    void progressChanged(int percent, const QString& what);
    // ok: every mode ran and passed the check; message says what happened.
    void runFinished(bool ok, const QString& message);
    // The device the next measuredTimes come from ("cpu", "gpu", "interpreter", "tpu_v4").
    void measuredOn(const QString& device);
    void measuredTimes(const QHash<QString, double>& seconds);
    void measurementsReady(const QList<hloscope::ExecutionMeasurement>& measurements);

public:
    struct Outcome {
        QList<ExecutionMeasurement> measurements;
        QString error;  // empty when every run completed
        bool cancelled = false;
        QString note;  // what a job without measurements did (a plan export)
    };

private:
    void onFinished();
    void reportProgress(int percent, const QString& what);

    DocumentStatePtr m_state;
    QList<ExecutionMeasurement> m_measurements;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QFutureWatcher<Outcome>* m_watcher = nullptr;
    int m_lastPercent = -1;
    QComboBox* m_deviceCombo = nullptr;
    QComboBox* m_modeCombo = nullptr;
    QSpinBox* m_seedSpin = nullptr;
    QPushButton* m_runButton = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QPushButton* m_exportButton = nullptr;
    QPushButton* m_importButton = nullptr;
    void startJob(std::function<Outcome()> job, const QString& what);
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QTableWidget* m_results = nullptr;
    QTableWidget* m_times = nullptr;
    QLabel* m_timelineLabel = nullptr;
    TimelineView* m_timeline = nullptr;
    QPushButton* m_traceButton = nullptr;
};

}  // namespace hloscope
