#include "views/estimator/estimator_panel.h"

#include <QBuffer>
#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPixmap>
#include <QPointer>
#include <QPushButton>
#include <QSaveFile>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <limits>

#include "core/support/thread_handoff.h"
#include "views/estimator/live_range_chart.h"
#include "views/model/seconds_text.h"

namespace hloscope {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QChartView* makeChartView(QWidget* parent) {
    auto* view = new QChartView(new QChart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(220);
    return view;
}

// Replaces the chart's series and axes.
QChart* resetChart(QChartView* view, const QString& title) {
    QChart* chart = view->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
    chart->setTitle(title);
    chart->legend()->setVisible(true);
    chart->legend()->setAlignment(Qt::AlignBottom);
    return chart;
}

// Predicted and measured bars over `categories`, on a value axis in `unit`.
void addBarSeries(QChart* chart, QBarSet* predicted, QBarSet* measured,
                  const QStringList& categories, const QString& unit, int labelsAngle = 0) {
    auto* series = new QBarSeries;
    series->append(predicted);
    series->append(measured);
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    if (labelsAngle != 0) x->setLabelsAngle(labelsAngle);
    auto* y = new QValueAxis;
    y->setTitleText(unit);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
}

const ExecutionMeasurement* measurementFor(const QList<ExecutionMeasurement>& list,
                                           const QString& mode) {
    for (const ExecutionMeasurement& m : list)
        if (m.mode == mode) return &m;
    return nullptr;
}

QString pngDataUri(QWidget* widget) {
    const QSize old = widget->size();
    widget->resize(760, 420);
    const QPixmap pixmap = widget->grab();
    widget->resize(old);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    pixmap.save(&buffer, "PNG");
    return QStringLiteral("data:image/png;base64,") + QString::fromLatin1(bytes.toBase64());
}

}  // namespace

EstimatorPanel::EstimatorPanel(QWidget* parent) : QWidget(parent) {
    m_watcher = new QFutureWatcher<ModelFiguresResult>(this);
    const char* names[kFieldCount] = {"Baseline time", "Baseline memory", "Speedup factor",
                                      "Memory reduction factor"};
    auto* form = new QFormLayout;
    for (int i = 0; i < kFieldCount; ++i) {
        m_fields[i] = new QLineEdit(this);
        m_fields[i]->setObjectName(QString::fromLatin1(names[i]));
        m_sources[i] = new QLabel(this);
        auto* row = new QHBoxLayout;
        row->addWidget(m_fields[i], 1);
        if (i == kBaselineTime) {
            m_timeUnit = new QComboBox(this);
            m_timeUnit->addItem(QStringLiteral("ms"));
            m_timeUnit->addItem(QStringLiteral("s"));
            row->addWidget(m_timeUnit);
        } else if (i == kBaselineMemory) {
            m_memoryUnit = new QComboBox(this);
            m_memoryUnit->addItem(QStringLiteral("MB"));
            m_memoryUnit->addItem(QStringLiteral("GB"));
            row->addWidget(m_memoryUnit);
        } else {
            row->addWidget(new QLabel(QStringLiteral("x"), this));
        }
        row->addWidget(m_sources[i]);
        form->addRow(tr(names[i]), row);
        connect(m_fields[i], &QLineEdit::textEdited, this, [this, i] {
            m_userEntered[static_cast<size_t>(i)] = true;
            updateSourceLabels();
            recalculate();
        });
        connect(m_fields[i], &QLineEdit::textChanged, this, &EstimatorPanel::recalculate);
    }
    auto* fillButton = new QPushButton(tr("Fill from performance model"), this);
    auto* exportButton = new QPushButton(tr("Export HTML report..."), this);
    m_error = new QLabel(this);
    m_error->setStyleSheet(QStringLiteral("color: #c00000"));
    m_error->setWordWrap(true);
    m_resultLabel = new QLabel(this);
    m_resultLabel->setWordWrap(true);
    m_resultLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_modelLabel = new QLabel(tr("No document."), this);
    m_modelLabel->setWordWrap(true);
    m_estimateLabel = new QLabel(this);
    m_estimateLabel->setObjectName(QStringLiteral("estimate"));
    m_estimateLabel->setWordWrap(true);
    m_estimateLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_calibrationRow = new QWidget(this);
    m_calibrationRow->setObjectName(QStringLiteral("calibrationRow"));
    auto* calibrationLayout = new QHBoxLayout(m_calibrationRow);
    calibrationLayout->setContentsMargins(0, 0, 0, 0);
    m_calibrationLabel = new QLabel(m_calibrationRow);
    m_calibrationLabel->setWordWrap(true);
    m_calibrateButton = new QPushButton(tr("Calibrate this machine"), m_calibrationRow);
    m_calibrateButton->setObjectName(QStringLiteral("calibrate"));
    m_cancelCalibration = new QPushButton(tr("Cancel"), m_calibrationRow);
    m_cancelCalibration->setVisible(false);
    calibrationLayout->addWidget(m_calibrationLabel, 1);
    calibrationLayout->addWidget(m_calibrateButton);
    calibrationLayout->addWidget(m_cancelCalibration);
    m_calibrationRow->setVisible(false);
    m_calibrationWatcher = new QFutureWatcher<Status>(this);
    connect(m_calibrateButton, &QPushButton::clicked, this, [this] { startCalibration(); });
    connect(m_cancelCalibration, &QPushButton::clicked, this, &EstimatorPanel::cancelCalibration);
    connect(m_calibrationWatcher, &QFutureWatcher<Status>::finished, this, [this] {
        handoff::receive();
        const Status status = m_calibrationWatcher->result();
        m_calibrating = false;
        m_cancelCalibration->setVisible(false);
        m_calibrateButton->setEnabled(true);
        if (status.isOk()) {
            emit calibrationFinished(true, QString());
            if (m_state) setState(m_state);  // the figures again, on this machine's target
        } else {
            m_calibrationLabel->setText(tr("Calibration failed: %1").arg(q(status.message())));
            emit calibrationFinished(false, q(status.message()));
        }
    });

    auto* calculatorBox = new QGroupBox(tr("Calculator"), this);
    auto* calculatorLayout = new QVBoxLayout(calculatorBox);
    calculatorLayout->addLayout(form);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(fillButton);
    buttons->addWidget(exportButton);
    buttons->addStretch(1);
    calculatorLayout->addLayout(buttons);
    calculatorLayout->addWidget(m_error);
    calculatorLayout->addWidget(m_resultLabel);
    calculatorLayout->addWidget(m_modelLabel);
    calculatorLayout->addWidget(m_estimateLabel);

    m_tabs = new QTabWidget(this);
    m_moduleChart = makeChartView(this);
    m_kernelChart = makeChartView(this);
    m_scatterChart = makeChartView(this);
    m_memoryChart = makeChartView(this);
    m_liveRanges = new LiveRangeChart(this);
    m_tabs->addTab(m_moduleChart, tr("Module time"));
    m_tabs->addTab(m_kernelChart, tr("Kernel time"));
    m_tabs->addTab(m_scatterChart, tr("Predicted vs measured"));
    m_tabs->addTab(m_memoryChart, tr("Peak memory"));
    m_tabs->addTab(m_liveRanges, tr("Buffer live ranges"));

    auto* layout = new QVBoxLayout(this);
    // First, where a short dock still shows it: the figures below depend on it.
    layout->addWidget(m_calibrationRow);
    layout->addWidget(calculatorBox);
    layout->addWidget(m_tabs, 1);

    connect(m_timeUnit, &QComboBox::currentIndexChanged, this, [this] {
        fillField(kBaselineTime, false);
        recalculate();
    });
    connect(m_memoryUnit, &QComboBox::currentIndexChanged, this, [this] {
        fillField(kBaselineMemory, false);
        recalculate();
    });
    connect(fillButton, &QPushButton::clicked, this, &EstimatorPanel::fillFromModel);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export HTML report"),
                                                          QStringLiteral("hloscope-report.html"),
                                                          tr("HTML (*.html)"));
        if (path.isEmpty()) return;
        QString error;
        if (!exportHtml(path, &error)) m_error->setText(error);
    });
    connect(m_watcher, &QFutureWatcher<ModelFiguresResult>::finished, this, [this] {
        handoff::receive();
        const ModelFiguresResult result = m_watcher->result();
        if (!m_state || result.generation != m_state->generation) return;
        m_figures = result.figures;
        m_figuresError = q(result.error);
        for (int i = 0; i < kFieldCount; ++i) fillField(static_cast<Field>(i), false);
        updateSourceLabels();
        recalculate();
        rebuildCharts();
        updateCalibrationRow();
        emit figuresUpdated();
    });
    updateSourceLabels();
    recalculate();
    rebuildCharts();
}

EstimatorPanel::~EstimatorPanel() {
    cancelCalibration();
    m_calibrationWatcher->waitForFinished();
    m_watcher->waitForFinished();
}

void EstimatorPanel::setCalibrator(Calibrator calibrator) {
    m_calibrator = std::move(calibrator);
    updateCalibrationRow();
}

bool EstimatorPanel::offersCalibration() const { return m_calibrationRow->isVisibleTo(this); }

QString EstimatorPanel::calibrationText() const { return m_calibrationLabel->text(); }

void EstimatorPanel::updateCalibrationRow() {
    if (m_calibrating) return;
    const bool uncalibratedCpu = m_figures && m_figures->target.kind == TargetKind::kCpu &&
                                 m_figures->target.calibrated.unixTime <= 0;
    m_calibrationRow->setVisible(uncalibratedCpu && m_calibrator);
    if (uncalibratedCpu)
        m_calibrationLabel->setText(
            tr("These predictions use hloscope's built-in CPU figures, not this machine's. A calibration "
               "measures its bandwidth, vector and library rates and the CPU backend's costs (about 2 s)."));
}

bool EstimatorPanel::startCalibration() {
    if (!m_calibrator || m_calibrating) return false;
    m_calibrating = true;
    m_calibrationCancel = std::make_shared<std::atomic<bool>>(false);
    m_calibrateButton->setEnabled(false);
    m_cancelCalibration->setVisible(true);
    m_calibrationRow->setVisible(true);
    m_calibrationLabel->setText(tr("Calibrating this machine..."));
    QPointer<QLabel> label = m_calibrationLabel;
    auto progress = [label](const std::string& stage, int done, int total) {
        const QString text = tr("Calibrating this machine: %1 (%2 of %3)...")
                                 .arg(q(stage))
                                 .arg(done + 1)
                                 .arg(total);
        QMetaObject::invokeMethod(label, [label, text] {
            if (label) label->setText(text);
        }, Qt::QueuedConnection);
    };
    m_calibrationWatcher->setFuture(QtConcurrent::run(
        handoff::wrap([calibrator = m_calibrator, progress, cancel = m_calibrationCancel] {
            return calibrator(progress, cancel.get());
        })));
    return true;
}

void EstimatorPanel::cancelCalibration() {
    if (m_calibrationCancel) m_calibrationCancel->store(true);
}

int EstimatorPanel::chartCount() const { return m_tabs->count(); }

void EstimatorPanel::setState(DocumentStatePtr state) {
    m_state = std::move(state);
    m_figures.reset();
    m_figuresError.clear();
    if (m_state)
        m_watcher->setFuture(QtConcurrent::run(handoff::wrap(computeModelFiguresResult), m_state));
    m_modelLabel->setText(m_state ? tr("Computing the performance model's figures...")
                                  : tr("No document."));
    rebuildCharts();
}

void EstimatorPanel::selectInstruction(const QString& name) { m_selected = name; }

void EstimatorPanel::setMeasurements(const QList<ExecutionMeasurement>& measurements) {
    m_measurements = measurements;
    storeInHistory();
    rebuildCharts();
}

std::optional<EstimateFigures> EstimatorPanel::measuredFigures() const {
    const ExecutionMeasurement* unfused = measurementFor(m_measurements, QStringLiteral("unfused"));
    const ExecutionMeasurement* fused = measurementFor(m_measurements, QStringLiteral("fused"));
    if (!unfused || !fused || unfused->device != fused->device) return std::nullopt;
    EstimateFigures measured;
    measured.unfusedSeconds = unfused->wallSeconds;
    measured.fusedSeconds = fused->wallSeconds;
    measured.peakBytesUnfused = unfused->peakBytes;
    measured.peakBytesFused = fused->peakBytes;
    measured.compileSeconds = (m_figures ? m_figures->pipelineSeconds : 0) + fused->compileSeconds;
    return measured;
}

// Both modes measured on the device of the target's own kind (the CPU
// backend for the cpu target): the run goes into the estimator's history,
// as `hloscope-cli run` and `estimate --measure` store theirs. Never fatal.
void EstimatorPanel::storeInHistory() {
    const std::optional<EstimateFigures> measured = measuredFigures();
    if (!measured || !m_figures || !m_state || m_figures->historyPath.empty()) return;
    const ExecutionMeasurement& first = m_measurements.front();
    const std::string_view hardware = hardwareFamily(first.deviceKind.toStdString());
    if (hardware.empty() || hardware != pipelineFamily(m_figures->target.kind)) return;
    Estimate estimate;
    estimate.target = m_figures->target.name;
    estimate.device = first.device.toStdString();
    estimate.simulated = first.simulated;
    estimate.devices = first.devices;
    // A simulation, or a grid of devices sharing this machine, is no measurement of it.
    if (!estimate.measuresOneDevice()) return;
    estimate.predicted = m_figures->predicted();
    estimate.measured = measured;
    auto timesOf = [](const ExecutionMeasurement* m) {
        std::vector<MeasuredTime> times;
        if (m)
            for (auto it = m->kernelSeconds.constBegin(); it != m->kernelSeconds.constEnd(); ++it)
                times.push_back({it.key().toStdString(), {}, it.value(), 1});
        return times;
    };
    const std::vector<MeasuredTime> unfusedTimes =
        timesOf(measurementFor(m_measurements, QStringLiteral("unfused")));
    const std::vector<MeasuredTime> fusedTimes =
        timesOf(measurementFor(m_measurements, QStringLiteral("fused")));
    estimate.unfusedKernels = kernelEstimatesOf(m_figures->unfusedPrediction, &unfusedTimes);
    estimate.fusedKernels = kernelEstimatesOf(m_figures->fusedPrediction, &fusedTimes);
    const HistoryRecord record =
        historyRecordOf(*m_figures->unfused, m_state->displayName, estimate);
    const std::string path = m_figures->historyPath;
    // Off the GUI thread: SQLite waits for a busy database.
    (void)QtConcurrent::run(handoff::wrap([record, path] {
        if (auto history = EstimateHistory::open(path); history.isOk())
            (void)(*history)->add(record);
    }));
}

void EstimatorPanel::updateEstimate() {
    if (!m_figures) {
        m_estimateLabel->setText(QString());
        return;
    }
    auto ms = [](double seconds) { return secondsText(seconds); };
    auto mb = [](int64_t bytes) {
        return QString::number(static_cast<double>(bytes) / 1e6, 'f', 3) + QStringLiteral(" MB");
    };
    auto payOff = [](const EstimateFigures& f) {
        const int64_t runs = f.breakEvenRuns();
        return runs < 0
                   ? tr("never pays off (fusion saves no time per run)")
                   : tr("pays off after %n run(s)", nullptr,
                        static_cast<int>(std::min<int64_t>(runs, std::numeric_limits<int>::max())));
    };
    auto signedPercent = [](std::optional<double> value) {
        return value ? QStringLiteral("%1%2%")
                           .arg(*value >= 0 ? QStringLiteral("+") : QString())
                           .arg(*value, 0, 'f', 1)
                     : QStringLiteral("-");
    };
    const EstimateFigures predicted = m_figures->predicted();
    const QString figuresLine =
        tr("<br><b>Target figures</b>: %1.")
            .arg(q(calibrationSummary(m_figures->target, QDateTime::currentSecsSinceEpoch())).toHtmlEscaped());
    QString text = tr("<b>Predicted</b> (%1): %2x faster (%3 &rarr; %4), peak memory %5x smaller "
                      "(%6 &rarr; %7); "
                      "compile %8, %9.")
                       .arg(q(m_figures->target.name))
                       .arg(predicted.speedup(), 0, 'f', 2)
                       .arg(ms(predicted.unfusedSeconds), ms(predicted.fusedSeconds))
                       .arg(predicted.memoryReduction(), 0, 'f', 2)
                       .arg(mb(predicted.peakBytesUnfused), mb(predicted.peakBytesFused),
                            ms(predicted.compileSeconds), payOff(predicted));
    if (const std::optional<EstimateFigures> measured = measuredFigures()) {
        const bool simulated = m_measurements.front().simulated;
        text +=
            (simulated ? tr("<br><b>Simulated</b> (%1): %2x (%3 &rarr; %4), peak memory %5; "
                            "compile %6, %7. "
                            "Prediction error: speedup %8, memory reduction %9.")
                       : tr("<br><b>Measured</b> (%1): %2x (%3 &rarr; %4), peak memory %5; compile "
                            "%6, %7. "
                            "Prediction error: speedup %8, memory reduction %9."))
                .arg(m_measurements.front().device)
                .arg(measured->speedup(), 0, 'f', 2)
                .arg(ms(measured->unfusedSeconds), ms(measured->fusedSeconds))
                .arg(measured->peakBytesFused > 0
                         ? QStringLiteral("%1x smaller (%2 &rarr; %3)")
                               .arg(measured->memoryReduction(), 0, 'f', 2)
                               .arg(mb(measured->peakBytesUnfused), mb(measured->peakBytesFused))
                         : tr("not reported by this device"))
                .arg(ms(measured->compileSeconds), payOff(*measured),
                     signedPercent(signedErrorPercent(predicted.speedup(), measured->speedup())),
                     measured->peakBytesFused > 0
                         ? signedPercent(signedErrorPercent(predicted.memoryReduction(),
                                                            measured->memoryReduction()))
                         : QStringLiteral("-"));
    }
    if (m_figures->accuracy && m_figures->accuracy->runs > 0)
        text += tr("<br><b>Model accuracy on this machine</b> (history): median |speedup error| "
                   "%1% over %n run(s), "
                   "worst %2%.",
                   nullptr, static_cast<int>(m_figures->accuracy->runs))
                    .arg(m_figures->accuracy->medianAbsPercent, 0, 'f', 1)
                    .arg(m_figures->accuracy->worstAbsPercent, 0, 'f', 1);
    else
        text +=
            tr("<br><b>Model accuracy on this machine</b>: no measured runs in the history yet "
               "(run both modes "
               "on the CPU, or hloscope-cli estimate FILE --measure).");
    text += figuresLine;
    m_estimateLabel->setText(text);
}

QString EstimatorPanel::estimateText() const { return m_estimateLabel->text(); }

QString EstimatorPanel::modelValue(Field field) const {
    if (!m_figures) return {};
    switch (field) {
        case kBaselineTime:
            return QString::number(secondsToUnit(m_figures->unfusedPrediction.totalSeconds,
                                                 static_cast<TimeUnit>(m_timeUnit->currentIndex())),
                                   'g', 6);
        case kBaselineMemory:
            return QString::number(
                bytesToUnit(static_cast<double>(m_figures->unfusedPeakBytes),
                            static_cast<MemoryUnit>(m_memoryUnit->currentIndex())),
                'g', 6);
        case kSpeedup:
            return QString::number(m_figures->speedup() > 0 ? m_figures->speedup() : 1.0, 'g', 6);
        case kMemoryReduction:
            return QString::number(
                m_figures->memoryReduction() > 0 ? m_figures->memoryReduction() : 1.0, 'g', 6);
        default:
            return {};
    }
}

void EstimatorPanel::fillField(Field field, bool force) {
    if (!m_figures) return;
    if (m_userEntered[field] && !force) return;
    m_userEntered[field] = false;
    m_fields[field]->setText(modelValue(field));
}

void EstimatorPanel::fillFromModel() {
    for (int i = 0; i < kFieldCount; ++i) fillField(static_cast<Field>(i), true);
    updateSourceLabels();
    recalculate();
}

QString EstimatorPanel::fieldSource(Field field) const {
    if (m_userEntered[field]) return tr("user-entered");
    if (m_figures && !m_fields[field]->text().isEmpty()) return tr("predicted");
    return tr("empty");
}

void EstimatorPanel::updateSourceLabels() {
    for (int i = 0; i < kFieldCount; ++i) {
        const QString source = fieldSource(static_cast<Field>(i));
        m_sources[i]->setText(QStringLiteral("(%1)").arg(source));
        m_sources[i]->setStyleSheet(m_userEntered[i] ? QStringLiteral("color: #8a4b00")
                                                     : QStringLiteral("color: #555"));
    }
    if (m_figures) {
        m_modelLabel->setText(
            tr("Performance model on %1: predicted %2 before fusion (snapshot %3, %4 kernels), %5 "
               "after "
               "(snapshot %6, %7 kernels); predicted peak memory %8 MB before, %9 MB after.")
                .arg(q(m_figures->target.name),
                     secondsText(m_figures->unfusedPrediction.totalSeconds))
                .arg(m_figures->unfusedSnapshot)
                .arg(m_figures->unfusedPrediction.kernelCount)
                .arg(secondsText(m_figures->fusedPrediction.totalSeconds))
                .arg(m_figures->fusedSnapshot)
                .arg(m_figures->fusedPrediction.kernelCount)
                .arg(static_cast<double>(m_figures->unfusedPeakBytes) / 1e6, 0, 'f', 3)
                .arg(static_cast<double>(m_figures->fusedPeakBytes) / 1e6, 0, 'f', 3));
    } else if (!m_figuresError.isEmpty()) {
        m_modelLabel->setText(tr("Performance model unavailable: %1").arg(m_figuresError));
    }
}

void EstimatorPanel::recalculate() {
    CalculatorInput input;
    input.baselineTime = m_fields[kBaselineTime]->text().toStdString();
    input.baselineMemory = m_fields[kBaselineMemory]->text().toStdString();
    input.speedup = m_fields[kSpeedup]->text().toStdString();
    input.memoryReduction = m_fields[kMemoryReduction]->text().toStdString();
    input.timeUnit = static_cast<TimeUnit>(m_timeUnit->currentIndex());
    input.memoryUnit = static_cast<MemoryUnit>(m_memoryUnit->currentIndex());
    m_result = calculate(input);
    updateSourceLabels();
    if (!m_result.ok()) {
        m_error->setText(q(m_result.errors()));
        m_resultLabel->setText(tr("Optimized values: - (fix the input above)"));
        return;
    }
    m_error->clear();
    const std::string_view tuName = timeUnitName(input.timeUnit),
                           muName = memoryUnitName(input.memoryUnit);
    const QString tu = QString::fromUtf8(tuName.data(), static_cast<qsizetype>(tuName.size()));
    const QString mu = QString::fromUtf8(muName.data(), static_cast<qsizetype>(muName.size()));
    const bool anyUser =
        std::any_of(m_userEntered.begin(), m_userEntered.end(), [](bool b) { return b; });
    const QString origin = anyUser ? tr("from user-entered and predicted inputs") : tr("predicted");
    m_resultLabel->setText(tr("Optimized time: <b>%1 %2</b> (saves %3 %2, %4%)<br>"
                              "Optimized memory: <b>%5 %6</b> (saves %7 %6, %8%)<br><i>%9</i>")
                               .arg(m_result.optimizedTime, 0, 'g', 6)
                               .arg(tu)
                               .arg(m_result.timeSaved, 0, 'g', 6)
                               .arg(m_result.timeSavedPercent, 0, 'f', 1)
                               .arg(m_result.optimizedMemory, 0, 'g', 6)
                               .arg(mu)
                               .arg(m_result.memorySaved, 0, 'g', 6)
                               .arg(m_result.memorySavedPercent, 0, 'f', 1)
                               .arg(origin));
}

QString EstimatorPanel::errorText() const { return m_error->text(); }
QString EstimatorPanel::resultText() const { return m_resultLabel->text(); }

// What every chart compares: the model's target and the measured runs.
struct EstimatorPanel::ChartInputs {
    QString target;  // the performance model's target
    QString device;  // the device of the measurements (empty: not run)
    const ExecutionMeasurement* unfused = nullptr;
    const ExecutionMeasurement* fused = nullptr;
};

void EstimatorPanel::rebuildCharts() {
    ChartInputs in;
    in.target = m_figures ? q(m_figures->target.name) : QString();
    in.unfused = measurementFor(m_measurements, QStringLiteral("unfused"));
    in.fused = measurementFor(m_measurements, QStringLiteral("fused"));
    in.device = !m_measurements.isEmpty() ? m_measurements.front().device : QString();
    rebuildModuleChart(in);
    rebuildKernelCharts(in);
    rebuildMemoryChart(in);
    if (m_figures)
        m_liveRanges->setAssignment(m_figures->fusedBuffers, m_figures->fused, tr("after fusion"));
    else
        m_liveRanges->clear();
    updateEstimate();
}

// Module time: predicted vs measured, before/after fusion.
void EstimatorPanel::rebuildModuleChart(const ChartInputs& in) {
    QChart* chart = resetChart(m_moduleChart, tr("Module time (ms)"));
    auto* predicted = new QBarSet(tr("predicted (%1)").arg(in.target));
    const bool simulated = !m_measurements.isEmpty() && m_measurements.front().simulated;
    auto* measured = new QBarSet((simulated ? tr("simulated (%1)") : tr("measured (%1)"))
                                     .arg(in.device.isEmpty() ? tr("not run") : in.device));
    *predicted << (m_figures ? m_figures->unfusedPrediction.totalSeconds * 1e3 : 0)
               << (m_figures ? m_figures->fusedPrediction.totalSeconds * 1e3 : 0);
    *measured << (in.unfused ? in.unfused->wallSeconds * 1e3 : 0)
              << (in.fused ? in.fused->wallSeconds * 1e3 : 0);
    addBarSeries(chart, predicted, measured, {tr("unfused"), tr("fused")}, tr("ms"));
}

// Kernel time: the slowest predicted kernels of the fused module, and a
// scatter with one point per kernel measured in the fused run.
void EstimatorPanel::rebuildKernelCharts(const ChartInputs& in) {
    std::vector<const KernelPrediction*> kernels;
    if (m_figures)
        for (const KernelPrediction& k : m_figures->fusedPrediction.kernels) kernels.push_back(&k);
    std::stable_sort(kernels.begin(), kernels.end(),
                     [](const KernelPrediction* a, const KernelPrediction* b) {
                         return a->totalSeconds * a->executions > b->totalSeconds * b->executions;
                     });
    {
        QChart* chart = resetChart(m_kernelChart, tr("Slowest kernels after fusion (ms)"));
        auto* predicted = new QBarSet(tr("predicted (%1)").arg(in.target));
        auto* measured =
            new QBarSet(tr("measured (%1)").arg(in.device.isEmpty() ? tr("not run") : in.device));
        QStringList names;
        for (size_t i = 0; i < std::min<size_t>(kernels.size(), 10); ++i) {
            const QString name = q(kernels[i]->instruction->name());
            names << name;
            *predicted << kernels[i]->totalSeconds * kernels[i]->executions * 1e3;
            *measured << (in.fused ? in.fused->kernelSeconds.value(name, 0) * 1e3 : 0);
        }
        addBarSeries(chart, predicted, measured, names, tr("ms"), -45);
    }
    QChart* chart =
        resetChart(m_scatterChart, tr("Per kernel: predicted (x) vs measured (y), seconds"));
    auto* series = new QScatterSeries;
    series->setName(tr("kernels (fused module)"));
    series->setMarkerSize(8);
    double lo = 1e300, hi = 0;
    if (in.fused)
        for (const KernelPrediction* k : kernels) {
            const double p = k->totalSeconds * k->executions;
            const double m = in.fused->kernelSeconds.value(q(k->instruction->name()), 0);
            if (p <= 0 || m <= 0) continue;
            series->append(p, m);
            lo = std::min({lo, p, m});
            hi = std::max({hi, p, m});
        }
    chart->addSeries(series);
    auto* x = new QLogValueAxis;
    auto* y = new QLogValueAxis;
    x->setTitleText(tr("predicted (s)"));
    y->setTitleText(tr("measured (s)"));
    x->setLabelFormat(QStringLiteral("%.0e"));
    y->setLabelFormat(QStringLiteral("%.0e"));
    if (hi > 0) {
        x->setRange(lo / 2, hi * 2);
        y->setRange(lo / 2, hi * 2);
    }
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
}

// Peak memory before/after fusion.
void EstimatorPanel::rebuildMemoryChart(const ChartInputs& in) {
    QChart* chart = resetChart(m_memoryChart, tr("Peak memory (MB)"));
    auto* predicted = new QBarSet(tr("predicted (buffer assignment)"));
    *predicted << (m_figures ? static_cast<double>(m_figures->unfusedPeakBytes) / 1e6 : 0)
               << (m_figures ? static_cast<double>(m_figures->fusedPeakBytes) / 1e6 : 0);
    auto* measured =
        new QBarSet(tr("measured (%1)").arg(in.device.isEmpty() ? tr("not run") : in.device));
    *measured << (in.unfused ? static_cast<double>(in.unfused->peakBytes) / 1e6 : 0)
              << (in.fused ? static_cast<double>(in.fused->peakBytes) / 1e6 : 0);
    addBarSeries(chart, predicted, measured, {tr("before fusion"), tr("after fusion")}, tr("MB"));
}

QString EstimatorPanel::reportHtml() {
    auto esc = [](const QString& s) { return s.toHtmlEscaped(); };
    const QString name = m_state ? q(m_state->displayName) : tr("(no document)");
    QString html;
    html += QStringLiteral(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hloscope report: "
                "%1</title>\n")
                .arg(esc(name));
    html += QStringLiteral(
        "<style>body{font-family:sans-serif;margin:2em;max-width:64em}table{border-collapse:"
        "collapse;"
        "margin:1em 0}td,th{border:1px solid #bbb;padding:3px "
        "8px;text-align:left}th{background:#eee}"
        ".p{color:#1f4e9c}.m{color:#1d7a2e}.u{color:#8a4b00}img{max-width:100%;border:1px solid "
        "#ddd}"
        "</style></head><body>\n");
    html += QStringLiteral("<h1>hloscope report: %1</h1>\n").arg(esc(name));
    html += QStringLiteral(
                "<p>Generated %1. Target: %2. Labels: <span class=p>predicted</span> (performance "
                "model, buffer assignment), <span class=m>measured</span> (execution panel), "
                "<span class=u>user-entered</span>.</p>\n")
                .arg(QDateTime::currentDateTime().toString(Qt::ISODate),
                     m_figures ? esc(q(m_figures->target.name)) : tr("unknown"));
    auto sourceClass = [this](Field f) {
        return m_userEntered[f] ? QStringLiteral("u") : QStringLiteral("p");
    };
    const QString tu = m_timeUnit->currentText(), mu = m_memoryUnit->currentText();
    html += QStringLiteral(
        "<h2>Calculator</h2>\n<table><tr><th>Quantity</th><th>Value</th><th>Source</th></tr>\n");
    const QString labels[kFieldCount] = {tr("Baseline time (%1)").arg(tu),
                                         tr("Baseline memory (%1)").arg(mu), tr("Speedup factor"),
                                         tr("Memory reduction factor")};
    for (int i = 0; i < kFieldCount; ++i)
        html += QStringLiteral("<tr><td>%1</td><td>%2</td><td class=%3>%4</td></tr>\n")
                    .arg(labels[i], esc(m_fields[i]->text()), sourceClass(static_cast<Field>(i)),
                         fieldSource(static_cast<Field>(i)));
    if (m_result.ok()) {
        html +=
            QStringLiteral("<tr><td>Optimized time (%1)</td><td>%2</td><td>computed</td></tr>\n")
                .arg(tu)
                .arg(m_result.optimizedTime, 0, 'g', 6);
        html +=
            QStringLiteral("<tr><td>Time saved (%1)</td><td>%2 (%3%)</td><td>computed</td></tr>\n")
                .arg(tu)
                .arg(m_result.timeSaved, 0, 'g', 6)
                .arg(m_result.timeSavedPercent, 0, 'f', 1);
        html +=
            QStringLiteral("<tr><td>Optimized memory (%1)</td><td>%2</td><td>computed</td></tr>\n")
                .arg(mu)
                .arg(m_result.optimizedMemory, 0, 'g', 6);
        html += QStringLiteral(
                    "<tr><td>Memory saved (%1)</td><td>%2 (%3%)</td><td>computed</td></tr>\n")
                    .arg(mu)
                    .arg(m_result.memorySaved, 0, 'g', 6)
                    .arg(m_result.memorySavedPercent, 0, 'f', 1);
    } else {
        html += QStringLiteral("<tr><td colspan=3>Input errors: %1</td></tr>\n")
                    .arg(esc(q(m_result.errors())));
    }
    html += QStringLiteral("</table>\n");

    if (m_figures)
        html += QStringLiteral("<h2>Estimate</h2>\n<p>%1</p>\n").arg(m_estimateLabel->text());
    html += QStringLiteral(
        "<h2>Module time</h2>\n<table><tr><th>Module</th><th>Predicted</th><th>Measured</th>"
        "<th>Device</th><th>Max error</th><th>Check</th></tr>\n");
    for (const QString& mode : {QStringLiteral("unfused"), QStringLiteral("fused")}) {
        const ExecutionMeasurement* m = measurementFor(m_measurements, mode);
        const double predicted = !m_figures ? -1
                                 : mode == QStringLiteral("unfused")
                                     ? m_figures->unfusedPrediction.totalSeconds
                                     : m_figures->fusedPrediction.totalSeconds;
        html +=
            QStringLiteral(
                "<tr><td>%1</td><td class=p>%2</td><td "
                "class=m>%3</td><td>%4</td><td>%5</td><td>%6</td></tr>\n")
                .arg(mode, secondsText(predicted),
                     m ? secondsText(m->wallSeconds) : tr("not measured"),
                     m ? esc(m->device) : QStringLiteral("-"),
                     m ? QString::number(m->maxError, 'g', 4) : QStringLiteral("-"),
                     m ? (m->passed ? tr("pass") : tr("FAIL")) : QStringLiteral("-"));
    }
    html += QStringLiteral("</table>\n");

    if (m_figures) {
        const ExecutionMeasurement* measured =
            measurementFor(m_measurements, QStringLiteral("fused"));
        html += QStringLiteral(
            "<h2>Kernels after fusion</h2>\n<table><tr><th>Kernel</th><th>Bound by</th>"
            "<th>Predicted</th><th>Measured</th></tr>\n");
        std::vector<const KernelPrediction*> kernels;
        for (const KernelPrediction& k : m_figures->fusedPrediction.kernels) kernels.push_back(&k);
        std::stable_sort(kernels.begin(), kernels.end(),
                         [](const KernelPrediction* a, const KernelPrediction* b) {
                             return a->totalSeconds * a->executions >
                                    b->totalSeconds * b->executions;
                         });
        for (size_t i = 0; i < std::min<size_t>(kernels.size(), 50); ++i) {
            const QString kernel = q(kernels[i]->instruction->name());
            html += QStringLiteral(
                        "<tr><td>%%1</td><td>%2</td><td class=p>%3</td><td class=m>%4</td></tr>\n")
                        .arg(esc(kernel), esc(q(kernels[i]->boundBy)),
                             secondsText(kernels[i]->totalSeconds *
                                                                kernels[i]->executions),
                             measured && measured->kernelSeconds.contains(kernel)
                                 ? secondsText(
                                       measured->kernelSeconds.value(kernel))
                                 : tr("not measured"));
        }
        html += QStringLiteral("</table>\n");
    }

    html += QStringLiteral("<h2>Figures</h2>\n");
    for (int i = 0; i < m_tabs->count(); ++i)
        html += QStringLiteral("<h3>%1</h3>\n<img alt=\"%1\" src=\"%2\">\n")
                    .arg(esc(m_tabs->tabText(i)), pngDataUri(m_tabs->widget(i)));
    html += QStringLiteral("</body></html>\n");
    return html;
}

bool EstimatorPanel::exportHtml(const QString& path, QString* error) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    const QByteArray html = reportHtml().toUtf8();
    // flush() before commit(): Qt 6.4's commit() misses an error in its own final flush.
    if (file.write(html) != html.size() || !file.flush() || !file.commit()) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    emit reportExported(path);
    return true;
}

}  // namespace hloscope
