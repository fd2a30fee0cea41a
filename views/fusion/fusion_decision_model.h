// FusionDecisionModel: every PassDecision the fusion passes logged in a
// document state's snapshots (snapshot.decisions), one row each, in the
// order they were taken (the replay order). FusionDecisionFilter narrows it
// by reason, outcome (fused / not fused), text (producer, consumer or
// explanation) and replay position (only the first N decisions).
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QString>
#include <vector>

#include "views/document/document_state.h"
#include "views/model/fusion_decisions.h"
#include "views/model/seconds_text.h"

namespace hloscope {

class FusionDecisionModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        kPass,
        kStep,
        kProducer,
        kConsumer,
        kDecision,
        kReason,
        kExplanation,
        kPredictedUnfused,
        kPredictedFused,
        kPredictedGain,
        kColumnCount
    };
    enum Role {
        kSortRole = Qt::UserRole + 1,  // numbers as numbers
        kAppliedRole,                  // bool
        kReasonRole,                   // reason code
        kOrderRole,                    // replay order (row number)
    };

    explicit FusionDecisionModel(QObject* parent = nullptr);

    void setState(const DocumentStatePtr& state);
    const std::vector<FusionDecisionRow>& rows() const { return m_rows; }
    const FusionDecisionRow& row(int index) const { return m_rows[static_cast<size_t>(index)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The latest decision about (producer, consumer), or -1.
    int latestDecision(const QString& producer, const QString& consumer) const;
    // The latest decision whose producer is one of `producers` and consumer
    // one of `consumers` (an instruction and the fusions that took it in), or -1.
    int latestDecision(const QStringList& producers, const QStringList& consumers) const;

    // "1.2 ms", "35 us", "-" for negative (no model): secondsText.
    static QString formatSeconds(double seconds) { return secondsText(seconds); }

private:
    std::vector<FusionDecisionRow> m_rows;
};

class FusionDecisionFilter : public QSortFilterProxyModel {
    Q_OBJECT
public:
    enum class Outcome { kAll, kFused, kNotFused };
    explicit FusionDecisionFilter(QObject* parent = nullptr);

    void setReason(const QString& reason);  // empty: any
    void setOutcome(Outcome outcome);
    void setText(const QString& text);      // case-insensitive substring; empty: any
    void setReplayLimit(int limit);         // rows with order < limit; -1: all
    int replayLimit() const { return m_limit; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString m_reason;
    Outcome m_outcome = Outcome::kAll;
    QString m_text;
    int m_limit = -1;
};

}  // namespace hloscope
