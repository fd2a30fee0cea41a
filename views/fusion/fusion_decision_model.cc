#include "views/fusion/fusion_decision_model.h"

#include <cmath>

namespace hloscope {

FusionDecisionModel::FusionDecisionModel(QObject* parent) : QAbstractTableModel(parent) {}

void FusionDecisionModel::setState(const DocumentStatePtr& state) {
    beginResetModel();
    m_rows = state ? fusionDecisionRows(*state) : std::vector<FusionDecisionRow>();
    endResetModel();
}

int FusionDecisionModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int FusionDecisionModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : kColumnCount;
}

QVariant FusionDecisionModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() < 0 || index.row() >= rowCount() || index.column() < 0 ||
        index.column() >= kColumnCount)
        return {};
    const FusionDecisionRow& row = m_rows[static_cast<size_t>(index.row())];
    const PassDecision& d = row.decision;
    const bool hasModel = d.predictedUnfusedSeconds >= 0 && d.predictedAppliedSeconds >= 0;
    const double gain = hasModel ? d.predictedUnfusedSeconds - d.predictedAppliedSeconds : -1;
    switch (role) {
    case kAppliedRole: return d.applied;
    case kReasonRole: return QString::fromStdString(d.reason);
    case kOrderRole: return index.row();
    case Qt::ToolTipRole:
        if (index.column() == kPredictedUnfused || index.column() == kPredictedFused ||
            index.column() == kPredictedGain)
            return tr("Predicted by the performance model (not measured)");
        return QString::fromStdString(d.explanation);
    case Qt::DisplayRole:
    case kSortRole: {
        const bool sort = role == kSortRole;
        switch (index.column()) {
        case kPass: return row.pass;
        case kStep: return static_cast<qlonglong>(d.step);
        case kProducer: return QString::fromStdString(d.producer);
        case kConsumer: return QString::fromStdString(d.consumer);
        case kDecision: return d.applied ? tr("fused") : tr("not fused");
        case kReason: return QString::fromStdString(d.reason);
        case kExplanation: return QString::fromStdString(d.explanation);
        case kPredictedUnfused:
            return sort ? QVariant(d.predictedUnfusedSeconds) : QVariant(formatSeconds(d.predictedUnfusedSeconds));
        case kPredictedFused:
            return sort ? QVariant(d.predictedAppliedSeconds) : QVariant(formatSeconds(d.predictedAppliedSeconds));
        case kPredictedGain:
            if (sort) return gain;
            if (!hasModel) return QStringLiteral("-");
            return (gain < 0 ? QStringLiteral("-") : QString()) + formatSeconds(std::abs(gain));
        default: return {};
        }
    }
    case Qt::TextAlignmentRole:
        if (index.column() == kStep || index.column() >= kPredictedUnfused)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default: return {};
    }
}

QVariant FusionDecisionModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case kPass: return tr("Pass");
    case kStep: return tr("Step");
    case kProducer: return tr("Producer");
    case kConsumer: return tr("Consumer");
    case kDecision: return tr("Decision");
    case kReason: return tr("Reason");
    case kExplanation: return tr("Explanation");
    case kPredictedUnfused: return tr("Unfused (predicted)");
    case kPredictedFused: return tr("Fused (predicted)");
    case kPredictedGain: return tr("Gain (predicted)");
    default: return {};
    }
}

int FusionDecisionModel::latestDecision(const QString& producer, const QString& consumer) const {
    const std::string p = producer.toStdString(), c = consumer.toStdString();
    for (int i = rowCount() - 1; i >= 0; --i) {
        const PassDecision& d = m_rows[static_cast<size_t>(i)].decision;
        if (d.producer == p && d.consumer == c) return i;
    }
    return -1;
}

int FusionDecisionModel::latestDecision(const QStringList& producers, const QStringList& consumers) const {
    for (int i = rowCount() - 1; i >= 0; --i) {
        const PassDecision& d = m_rows[static_cast<size_t>(i)].decision;
        if (producers.contains(QString::fromStdString(d.producer)) &&
            consumers.contains(QString::fromStdString(d.consumer)))
            return i;
    }
    return -1;
}

FusionDecisionFilter::FusionDecisionFilter(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(FusionDecisionModel::kSortRole);
}

void FusionDecisionFilter::setReason(const QString& reason) {
    if (reason == m_reason) return;
    m_reason = reason;
    invalidateFilter();
}

void FusionDecisionFilter::setOutcome(Outcome outcome) {
    if (outcome == m_outcome) return;
    m_outcome = outcome;
    invalidateFilter();
}

void FusionDecisionFilter::setText(const QString& text) {
    if (text == m_text) return;
    m_text = text;
    invalidateFilter();
}

void FusionDecisionFilter::setReplayLimit(int limit) {
    if (limit == m_limit) return;
    m_limit = limit;
    invalidateFilter();
}

bool FusionDecisionFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (sourceParent.isValid()) return false;
    if (m_limit >= 0 && sourceRow >= m_limit) return false;
    const auto* model = qobject_cast<const FusionDecisionModel*>(sourceModel());
    if (!model || sourceRow >= model->rowCount()) return false;
    const PassDecision& d = model->row(sourceRow).decision;
    if (m_outcome == Outcome::kFused && !d.applied) return false;
    if (m_outcome == Outcome::kNotFused && d.applied) return false;
    if (!m_reason.isEmpty() && QString::fromStdString(d.reason) != m_reason) return false;
    if (!m_text.isEmpty()) {
        const Qt::CaseSensitivity cs = Qt::CaseInsensitive;
        if (!QString::fromStdString(d.producer).contains(m_text, cs) &&
            !QString::fromStdString(d.consumer).contains(m_text, cs) &&
            !QString::fromStdString(d.explanation).contains(m_text, cs))
            return false;
    }
    return true;
}

}  // namespace hloscope
