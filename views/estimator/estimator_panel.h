// EstimatorPanel: "what would fusion buy me?" The calculator form (baseline
// time ms/s and memory MB/GB, speedup and memory reduction factors ->
// optimized values and savings; compiler/estimator/calculator.h does the
// arithmetic) is filled from the performance model for the state's module
// and target (predicted unfused vs fused time, predicted peak memory before
// vs after fusion from buffer assignment) and every field can be
// overridden. Charts: predicted vs measured time per module and per kernel
// (measurements from the execution panel, setMeasurements), a predicted vs
// measured scatter, peak memory before/after (predicted and measured) and
// the buffer live ranges. The estimate line gives the predicted and
// measured speedup and memory reduction with the prediction's signed
// error, the compile overhead and its break-even run count, and how
// accurate the model has been on this machine (the estimator's history,
// compiler/estimator/history.h); a measurement of both modes on the
// target's own device is stored in that history. "Export HTML report"
// writes one self-contained file (figures inlined as PNG data URIs). Every
// number is labelled predicted, measured or user-entered, and the estimate
// says which target figures it used (calibrationSummary). When the target is
// the cpu and this machine has no calibration, the panel offers one
// ("Calibrate this machine", about 2 s, with its stages as progress and a
// Cancel) through the calibrator the app sets (views link no backend), and
// recomputes the figures when it is done.
#pragma once

#include <QFutureWatcher>
#include <QList>
#include <QString>
#include <QWidget>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "compiler/estimator/calculator.h"
#include "compiler/estimator/estimate.h"
#include "views/document/document_panel.h"
#include "views/document/document_state.h"
#include "views/model/execution_measurement.h"
#include "views/model/model_figures.h"

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTabWidget;

namespace hloscope {

class LiveRangeChart;

class EstimatorPanel : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    enum Field { kBaselineTime, kBaselineMemory, kSpeedup, kMemoryReduction, kFieldCount };

    explicit EstimatorPanel(QWidget* parent = nullptr);
    ~EstimatorPanel() override;

    QLineEdit* field(Field field) const { return m_fields[field]; }
    QComboBox* timeUnitCombo() const { return m_timeUnit; }
    QComboBox* memoryUnitCombo() const { return m_memoryUnit; }
    // "predicted" or "user-entered" for a field.
    QString fieldSource(Field field) const;
    QString errorText() const;    // the inline message; empty when the input is fine
    QString resultText() const;   // the optimized values and savings
    QString estimateText() const; // predicted vs measured, errors, compile overhead, history accuracy
    CalculatorResult result() const { return m_result; }
    std::shared_ptr<const ModelFigures> figures() const { return m_figures; }
    QList<ExecutionMeasurement> measurements() const { return m_measurements; }
    int chartCount() const;
    LiveRangeChart* liveRangeChart() const { return m_liveRanges; }

    // Measures this machine and caches its cpu target: `progress` before each stage, `cancel`
    // checked between them. Runs off the GUI thread.
    using Calibrator = std::function<Status(const std::function<void(const std::string& stage, int done, int total)>& progress,
                                            const std::atomic<bool>* cancel)>;
    void setCalibrator(Calibrator calibrator);
    // The "this machine has no calibration" row: whether it shows, its text.
    bool offersCalibration() const;
    QString calibrationText() const;
    QPushButton* calibrateButton() const { return m_calibrateButton; }
    // Starts the calibrator (what the button does); false when one runs or none is set.
    bool startCalibration();
    void cancelCalibration();

    // Writes the HTML report; false with `error` set on failure.
    bool exportHtml(const QString& path, QString* error = nullptr);
    QString reportHtml();

public slots:
    void setState(hloscope::DocumentStatePtr state) override;
    void selectInstruction(const QString& name);
    void setMeasurements(const QList<hloscope::ExecutionMeasurement>& measurements);
    // Refills every field from the performance model (drops user overrides).
    void fillFromModel();
    void recalculate();

signals:
    void instructionSelected(const QString& name);
    void figuresUpdated();
    void reportExported(const QString& path);
    // A calibration ended: ok, or the error (cancelled included).
    void calibrationFinished(bool ok, const QString& message);

private:
    void fillField(Field field, bool force);
    void updateSourceLabels();
    // The charts from the figures and measurements, one step per chart (or pair).
    struct ChartInputs;
    void rebuildCharts();
    void rebuildModuleChart(const ChartInputs& in);
    void rebuildKernelCharts(const ChartInputs& in);
    void rebuildMemoryChart(const ChartInputs& in);
    void updateEstimate();
    void storeInHistory();
    void updateCalibrationRow();
    QString modelValue(Field field) const;
    std::optional<EstimateFigures> measuredFigures() const;

    DocumentStatePtr m_state;
    std::shared_ptr<const ModelFigures> m_figures;
    QString m_figuresError;
    QFutureWatcher<ModelFiguresResult>* m_watcher = nullptr;
    QList<ExecutionMeasurement> m_measurements;
    CalculatorResult m_result;
    std::array<QLineEdit*, kFieldCount> m_fields{};
    std::array<QLabel*, kFieldCount> m_sources{};
    std::array<bool, kFieldCount> m_userEntered{};
    QComboBox* m_timeUnit = nullptr;
    QComboBox* m_memoryUnit = nullptr;
    QLabel* m_error = nullptr;
    QLabel* m_resultLabel = nullptr;
    QLabel* m_modelLabel = nullptr;
    QLabel* m_estimateLabel = nullptr;
    QTabWidget* m_tabs = nullptr;
    QChartView* m_moduleChart = nullptr;
    QChartView* m_kernelChart = nullptr;
    QChartView* m_scatterChart = nullptr;
    QChartView* m_memoryChart = nullptr;
    LiveRangeChart* m_liveRanges = nullptr;
    QString m_selected;
    Calibrator m_calibrator;
    QWidget* m_calibrationRow = nullptr;
    QLabel* m_calibrationLabel = nullptr;
    QPushButton* m_calibrateButton = nullptr;
    QPushButton* m_cancelCalibration = nullptr;
    std::shared_ptr<std::atomic<bool>> m_calibrationCancel;
    QFutureWatcher<Status>* m_calibrationWatcher = nullptr;
    bool m_calibrating = false;  // from startCalibration until its watcher finishes
};

}  // namespace hloscope
