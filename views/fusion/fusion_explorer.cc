#include "views/fusion/fusion_explorer.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <unordered_map>

#include "compiler/fusion/fusion_decision.h"
#include "compiler/fusion/fusion_legality.h"
#include "core/support/thread_handoff.h"
#include "views/model/seconds_text.h"

namespace hloscope {
namespace {

const HloInstruction* findInstruction(const HloModule& module, const std::string& name) {
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->name() == name) return instruction.get();
    return nullptr;
}

}  // namespace

FusionExplorer::FusionExplorer(QWidget* parent) : QWidget(parent) {
    createWidgets();
    layOutWidgets();
    connectWidgets();
    updateSummary();
    updateWhatIfLabel();
}

void FusionExplorer::createWidgets() {
    m_model = new FusionDecisionModel(this);
    m_filter = new FusionDecisionFilter(this);
    m_filter->setSourceModel(m_model);
    m_watcher = new QFutureWatcher<ModelFiguresResult>(this);

    m_summary = new QLabel(tr("No document."), this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_histogram = new QTableWidget(0, 2, this);
    m_histogram->setHorizontalHeaderLabels({tr("Reason"), tr("Decisions")});
    m_histogram->horizontalHeader()->setStretchLastSection(true);
    m_histogram->verticalHeader()->hide();
    m_histogram->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_histogram->setMaximumHeight(160);

    m_reasonCombo = new QComboBox(this);
    m_reasonCombo->addItem(tr("Any reason"), QString());
    for (FusionReason reason : allFusionReasons()) {
        const QString code = QString::fromUtf8(fusionReasonCode(reason).data(),
                                               static_cast<qsizetype>(fusionReasonCode(reason).size()));
        m_reasonCombo->addItem(code, code);
    }
    m_outcomeCombo = new QComboBox(this);
    m_outcomeCombo->addItem(tr("Fused and not fused"));
    m_outcomeCombo->addItem(tr("Fused"));
    m_outcomeCombo->addItem(tr("Not fused"));
    m_textFilter = new QLineEdit(this);
    m_textFilter->setPlaceholderText(tr("Filter by producer, consumer or explanation"));
    m_textFilter->setClearButtonEnabled(true);

    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setRange(0, 0);
    m_sliderLabel = new QLabel(this);

    m_table = new QTableView(this);
    m_table->setModel(m_filter);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(FusionDecisionModel::kExplanation,
                                                      QHeaderView::Stretch);
    m_table->verticalHeader()->hide();

    m_producerEdit = new QLineEdit(this);
    m_producerEdit->setPlaceholderText(tr("producer"));
    m_consumerEdit = new QLineEdit(this);
    m_consumerEdit->setPlaceholderText(tr("consumer"));
    m_explainButton = new QPushButton(tr("Why (not) fused?"), this);
    m_answer = new QTextBrowser(this);
    m_answer->setMaximumHeight(70);
    m_forceButton = new QPushButton(tr("Force fuse"), this);
    m_forbidButton = new QPushButton(tr("Forbid fuse"), this);
    m_clearButton = new QPushButton(tr("Clear what-ifs"), this);
    m_forceButton->setToolTip(tr("Re-run the pipeline with this pair forced to fuse (if legal)"));
    m_forbidButton->setToolTip(tr("Re-run the pipeline with this pair forbidden to fuse"));
    m_whatIf = new QLabel(this);
    m_whatIf->setWordWrap(true);
}

void FusionExplorer::layOutWidgets() {
    auto* filters = new QHBoxLayout;
    filters->addWidget(m_reasonCombo);
    filters->addWidget(m_outcomeCombo);
    filters->addWidget(m_textFilter, 1);
    auto* replay = new QHBoxLayout;
    replay->addWidget(new QLabel(tr("Replay:"), this));
    replay->addWidget(m_slider, 1);
    replay->addWidget(m_sliderLabel);
    auto* pair = new QHBoxLayout;
    pair->addWidget(m_producerEdit);
    pair->addWidget(m_consumerEdit);
    pair->addWidget(m_explainButton);
    auto* whatIfButtons = new QHBoxLayout;
    whatIfButtons->addWidget(m_forceButton);
    whatIfButtons->addWidget(m_forbidButton);
    whatIfButtons->addWidget(m_clearButton);
    whatIfButtons->addStretch(1);

    auto* summaryBox = new QGroupBox(tr("Summary"), this);
    auto* summaryLayout = new QHBoxLayout(summaryBox);
    summaryLayout->addWidget(m_summary, 1);
    summaryLayout->addWidget(m_histogram, 1);
    auto* whyBox = new QGroupBox(tr("Why not fused?"), this);
    auto* whyLayout = new QVBoxLayout(whyBox);
    whyLayout->addLayout(pair);
    whyLayout->addWidget(m_answer);
    auto* whatIfBox = new QGroupBox(tr("What-if"), this);
    auto* whatIfLayout = new QVBoxLayout(whatIfBox);
    whatIfLayout->addLayout(whatIfButtons);
    whatIfLayout->addWidget(m_whatIf);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(summaryBox);
    layout->addLayout(filters);
    layout->addLayout(replay);
    layout->addWidget(m_table, 1);
    layout->addWidget(whyBox);
    layout->addWidget(whatIfBox);
}

void FusionExplorer::connectWidgets() {
    connect(m_reasonCombo, &QComboBox::currentIndexChanged, this,
            [this] { m_filter->setReason(m_reasonCombo->currentData().toString()); });
    connect(m_outcomeCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_filter->setOutcome(static_cast<FusionDecisionFilter::Outcome>(index));
    });
    connect(m_textFilter, &QLineEdit::textChanged, m_filter, &FusionDecisionFilter::setText);
    connect(m_slider, &QSlider::valueChanged, this, &FusionExplorer::setReplayStep);
    connect(m_explainButton, &QPushButton::clicked, this,
            [this] { explainPair(m_producerEdit->text().trimmed(), m_consumerEdit->text().trimmed()); });
    connect(m_forceButton, &QPushButton::clicked, this, &FusionExplorer::forceSelected);
    connect(m_forbidButton, &QPushButton::clicked, this, &FusionExplorer::forbidSelected);
    connect(m_clearButton, &QPushButton::clicked, this, &FusionExplorer::clearWhatIf);
    connect(m_histogram, &QTableWidget::cellClicked, this, [this](int row, int) {
        const QString reason = m_histogram->item(row, 0)->text();
        const int index = m_reasonCombo->findData(reason);
        if (index >= 0) m_reasonCombo->setCurrentIndex(index);
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!current.isValid()) return;
                const int row = m_filter->mapToSource(current).row();
                const PassDecision& d = m_model->row(row).decision;
                m_producerEdit->setText(QString::fromStdString(d.producer));
                m_consumerEdit->setText(QString::fromStdString(d.consumer));
                explainPair(QString::fromStdString(d.producer), QString::fromStdString(d.consumer));
                emit instructionSelected(QString::fromStdString(d.producer));
                emit decisionSelected(QString::fromStdString(d.producer), QString::fromStdString(d.consumer));
            });
    connect(m_watcher, &QFutureWatcher<ModelFiguresResult>::finished, this, [this] {
        handoff::receive();
        const ModelFiguresResult result = m_watcher->result();
        if (!m_state || result.generation != m_state->generation) return;  // stale
        m_figures = result.figures;
        m_figuresError = QString::fromStdString(result.error);
        updateSummary();
        updateWhatIfLabel();
        emit figuresUpdated();
    });
}

FusionExplorer::~FusionExplorer() {
    m_watcher->waitForFinished();
}

void FusionExplorer::setState(DocumentStatePtr state) {
    m_state = std::move(state);
    m_figures.reset();
    m_figuresError.clear();
    m_model->setState(m_state);
    m_force = m_state && !m_state->forceFusion.empty()
                  ? QString::fromStdString(m_state->forceFusion).split(u';', Qt::SkipEmptyParts)
                  : QStringList();
    m_forbid = m_state && !m_state->forbidFusion.empty()
                   ? QString::fromStdString(m_state->forbidFusion).split(u';', Qt::SkipEmptyParts)
                   : QStringList();
    const int count = m_model->rowCount();
    {
        QSignalBlocker block(m_slider);
        m_slider->setRange(0, count);
        m_slider->setValue(count);
    }
    m_filter->setReplayLimit(-1);
    m_sliderLabel->setText(tr("%1 / %1 decisions").arg(count));
    m_answer->clear();
    if (m_state) {
        m_watcher->setFuture(QtConcurrent::run(handoff::wrap(computeModelFiguresResult), m_state));
    }
    updateSummary();
    updateWhatIfLabel();
}

QMap<QString, int> FusionExplorer::reasonHistogram() const {
    QMap<QString, int> histogram;
    for (const FusionDecisionRow& row : m_model->rows())
        ++histogram[QString::fromStdString(row.decision.reason)];
    return histogram;
}

void FusionExplorer::updateSummary() {
    if (!m_state) {
        m_summary->setText(tr("No document."));
        m_histogram->setRowCount(0);
        return;
    }
    int fused = 0;
    for (const FusionDecisionRow& row : m_model->rows()) fused += row.decision.applied ? 1 : 0;
    QString text = tr("<b>%1</b> fusion decisions, <b>%2</b> fused pairs, %3 not fused.<br>")
                       .arg(m_model->rowCount())
                       .arg(fused)
                       .arg(m_model->rowCount() - fused);
    if (m_figures) {
        const QString target = QString::fromStdString(m_figures->target.name);
        if (m_figures->fusionRan) {
            text += tr("Kernels before fusion: <b>%1</b>, after: <b>%2</b> (performance model, %3).<br>"
                       "Predicted module time: %4 unfused &rarr; %5 fused (<b>%6x</b>, predicted).")
                        .arg(m_figures->unfusedPrediction.kernelCount)
                        .arg(m_figures->fusedPrediction.kernelCount)
                        .arg(target)
                        .arg(secondsText(m_figures->unfusedPrediction.totalSeconds))
                        .arg(secondsText(m_figures->fusedPrediction.totalSeconds))
                        .arg(m_figures->speedup(), 0, 'f', 2);
        } else {
            text += tr("No fusion pass has run yet: %1 kernels, predicted %2 on %3.")
                        .arg(m_figures->fusedPrediction.kernelCount)
                        .arg(secondsText(m_figures->fusedPrediction.totalSeconds))
                        .arg(target);
        }
    } else if (!m_figuresError.isEmpty()) {
        text += tr("Performance model unavailable: %1").arg(m_figuresError.toHtmlEscaped());
    } else {
        text += tr("Computing the performance model's figures...");
    }
    m_summary->setText(text);
    const QMap<QString, int> histogram = reasonHistogram();
    m_histogram->setRowCount(static_cast<int>(histogram.size()));
    int row = 0;
    for (auto it = histogram.cbegin(); it != histogram.cend(); ++it, ++row) {
        m_histogram->setItem(row, 0, new QTableWidgetItem(it.key()));
        auto* count = new QTableWidgetItem;
        count->setData(Qt::DisplayRole, it.value());
        m_histogram->setItem(row, 1, count);
    }
}

QString FusionExplorer::summaryText() const { return m_summary->text(); }
QString FusionExplorer::explanationText() const { return m_answer->toPlainText(); }
QString FusionExplorer::whatIfText() const { return m_whatIf->text(); }

void FusionExplorer::setReplayStep(int step) {
    const int count = m_model->rowCount();
    step = std::clamp(step, 0, count);
    if (m_slider->value() != step) {
        QSignalBlocker block(m_slider);
        m_slider->setValue(step);
    }
    m_filter->setReplayLimit(step >= count ? -1 : step);
    m_sliderLabel->setText(tr("%1 / %2 decisions").arg(step).arg(count));
    if (step > 0 && step <= count) {
        const PassDecision& d = m_model->row(step - 1).decision;
        m_answer->setPlainText(tr("Decision %1 (%2, step %3): %4 -> %5: %6 (%7)")
                                   .arg(step)
                                   .arg(m_model->row(step - 1).pass)
                                   .arg(d.step)
                                   .arg(QString::fromStdString(d.producer), QString::fromStdString(d.consumer),
                                        d.applied ? tr("fused") : tr("not fused"),
                                        QString::fromStdString(d.reason)));
    }
    emit replayStepChanged(step);
}

void FusionExplorer::selectInstruction(const QString& name) {
    for (int row = 0; row < m_filter->rowCount(); ++row) {
        const QModelIndex index = m_filter->index(row, 0);
        const PassDecision& d = m_model->row(m_filter->mapToSource(index).row()).decision;
        if (QString::fromStdString(d.producer) == name || QString::fromStdString(d.consumer) == name) {
            QSignalBlocker block(m_table->selectionModel());
            m_table->selectionModel()->setCurrentIndex(
                index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            m_table->scrollTo(index);
            m_producerEdit->setText(QString::fromStdString(d.producer));
            m_consumerEdit->setText(QString::fromStdString(d.consumer));
            return;
        }
    }
}

QStringList FusionExplorer::aliases(const QString& name) const {
    QStringList names{name};
    if (!m_figures || !m_figures->fused) return names;
    const std::string target = name.toStdString();
    for (const auto& computation : m_figures->fused->computations())
        for (const auto& instruction : computation->instructions()) {
            if (instruction->opcode() != HloOpcode::kFusion || !instruction->fusedComputation()) continue;
            for (const auto& inner : instruction->fusedComputation()->instructions())
                if (inner->name() == target) {
                    names << QString::fromStdString(instruction->name());
                    break;
                }
        }
    return names;
}

QString FusionExplorer::neverConsidered(const QString& producer, const QString& consumer) const {
    const HloModule* module = m_figures && m_figures->unfused ? m_figures->unfused.get()
                              : m_state && m_state->module ? m_state->module.get()
                                                           : nullptr;
    if (!module) return tr("never considered: no module is loaded");
    const HloInstruction* p = findInstruction(*module, producer.toStdString());
    const HloInstruction* c = findInstruction(*module, consumer.toStdString());
    if (!p) return tr("never considered: there is no instruction %%1 before fusion").arg(producer);
    if (!c) return tr("never considered: there is no instruction %%1 before fusion").arg(consumer);
    if (p->parent() != c->parent())
        return tr("never considered: %%1 and %%2 are in different computations").arg(producer, consumer);
    const auto& operands = c->operands();
    if (std::find(operands.begin(), operands.end(), p) == operands.end())
        return tr("never considered: %%1 is not an operand of %%2 (fusion only merges a producer "
                  "into a consumer that reads it)")
            .arg(producer, consumer);
    PassOptions options;
    options.set("target", m_state && !m_state->pipelineTarget.empty() ? m_state->pipelineTarget : "cpu");
    if (m_state && !m_state->forbidFusion.empty()) options.set("forbid", m_state->forbidFusion);
    StatusOr<fusion::FusionConfig> config = fusion::parseFusionConfig(options);
    if (!config.isOk())
        return tr("never considered: %1").arg(QString::fromStdString(config.status().message()));
    std::string detail;
    const std::optional<FusionReason> reason = fusion::checkPair(*p, *c, *config, &detail);
    if (reason) {
        const std::string_view code = fusionReasonCode(*reason);
        return tr("never considered: %1: %2")
            .arg(QString::fromUtf8(code.data(), static_cast<qsizetype>(code.size())),
                 QString::fromStdString(detail));
    }
    return tr("never considered: the pair is legal (checkPair finds no obstacle), but the fusion "
              "pass did not reach it: one of the two was fused into another kernel first, or no "
              "fusion pass has run yet");
}

void FusionExplorer::explainPair(const QString& producer, const QString& consumer) {
    m_producerEdit->setText(producer);
    m_consumerEdit->setText(consumer);
    if (producer.isEmpty() || consumer.isEmpty()) {
        m_answer->setPlainText(tr("Enter a producer and a consumer instruction name."));
        return;
    }
    int row = m_model->latestDecision(producer, consumer);
    QString via;
    if (row < 0) {
        row = m_model->latestDecision(aliases(producer), aliases(consumer));
        if (row >= 0) {
            const PassDecision& d = m_model->row(row).decision;
            via = tr(" (as %%1 -> %%2, the fusions holding them)")
                      .arg(QString::fromStdString(d.producer), QString::fromStdString(d.consumer));
        }
    }
    if (row < 0) {
        m_answer->setPlainText(neverConsidered(producer, consumer));
        return;
    }
    const FusionDecisionRow& r = m_model->row(row);
    const PassDecision& d = r.decision;
    QString text = tr("%1 -> %2: %3 by %4%5 (decision %6, step %7).\nReason: %8: %9")
                       .arg(producer, consumer, d.applied ? tr("fused") : tr("not fused"), r.pass, via)
                       .arg(row + 1)
                       .arg(d.step)
                       .arg(QString::fromStdString(d.reason), QString::fromStdString(d.explanation));
    if (d.predictedUnfusedSeconds >= 0 && d.predictedAppliedSeconds >= 0)
        text += tr("\nPredicted: %1 as separate kernels, %2 fused (gain %3).")
                    .arg(secondsText(d.predictedUnfusedSeconds),
                         secondsText(d.predictedAppliedSeconds),
                         QString::number((d.predictedUnfusedSeconds - d.predictedAppliedSeconds) * 1e6, 'g', 4) +
                             QStringLiteral(" us"));
    m_answer->setPlainText(text);
}

int FusionExplorer::selectedSourceRow() const {
    const QModelIndex current = m_table->selectionModel()->currentIndex();
    if (!current.isValid()) return -1;
    return m_filter->mapToSource(current).row();
}

void FusionExplorer::requestWhatIf(bool force) {
    const int row = selectedSourceRow();
    if (row < 0) {
        m_whatIf->setText(tr("Select a decision in the table first."));
        return;
    }
    const PassDecision& d = m_model->row(row).decision;
    requestPairWhatIf(QString::fromStdString(d.producer), QString::fromStdString(d.consumer), force);
}

void FusionExplorer::forcePair(const QString& producer, const QString& consumer) {
    requestPairWhatIf(producer, consumer, true);
}

void FusionExplorer::forbidPair(const QString& producer, const QString& consumer) {
    requestPairWhatIf(producer, consumer, false);
}

void FusionExplorer::requestPairWhatIf(const QString& producer, const QString& consumer, bool force) {
    const QString pair = producer + u':' + consumer;
    QStringList& add = force ? m_force : m_forbid;
    QStringList& remove = force ? m_forbid : m_force;
    remove.removeAll(pair);
    if (!add.contains(pair)) add.append(pair);
    if (m_figures) {
        m_beforeWhatIfSeconds = m_figures->fusedPrediction.totalSeconds;
        m_beforeWhatIfLabel = QString::fromStdString(m_figures->target.name);
    }
    m_whatIf->setText(tr("Re-running the pipeline with %1 %2...").arg(force ? tr("force") : tr("forbid"), pair));
    emit fusionWhatIfRequested(m_force.join(u';'), m_forbid.join(u';'));
}

void FusionExplorer::forceSelected() { requestWhatIf(true); }
void FusionExplorer::forbidSelected() { requestWhatIf(false); }

void FusionExplorer::clearWhatIf() {
    if (m_force.isEmpty() && m_forbid.isEmpty()) return;
    m_force.clear();
    m_forbid.clear();
    if (m_figures) m_beforeWhatIfSeconds = m_figures->fusedPrediction.totalSeconds;
    emit fusionWhatIfRequested(QString(), QString());
}

void FusionExplorer::updateWhatIfLabel() {
    QString text;
    if (!m_force.isEmpty() || !m_forbid.isEmpty())
        text = tr("In effect: force=%1 forbid=%2\n")
                   .arg(m_force.isEmpty() ? tr("(none)") : m_force.join(u';'),
                        m_forbid.isEmpty() ? tr("(none)") : m_forbid.join(u';'));
    if (m_beforeWhatIfSeconds >= 0) {
        text += tr("Predicted module time (performance model, %1): before the what-if %2")
                    .arg(m_beforeWhatIfLabel, secondsText(m_beforeWhatIfSeconds));
        if (m_figures)
            text += tr(", after %1 (%2%3%)")
                        .arg(secondsText(m_figures->fusedPrediction.totalSeconds))
                        .arg(m_figures->fusedPrediction.totalSeconds >= m_beforeWhatIfSeconds ? u'+' : u'-')
                        .arg(m_beforeWhatIfSeconds > 0
                                 ? std::abs(m_figures->fusedPrediction.totalSeconds - m_beforeWhatIfSeconds) /
                                       m_beforeWhatIfSeconds * 100
                                 : 0.0,
                             0, 'f', 1);
        else
            text += tr(", after: computing...");
    } else if (m_figures) {
        text += tr("Predicted module time (performance model, %1): %2")
                    .arg(QString::fromStdString(m_figures->target.name),
                         secondsText(m_figures->fusedPrediction.totalSeconds));
    }
    m_whatIf->setText(text);
}

}  // namespace hloscope
