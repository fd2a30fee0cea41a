// FusionExplorer and FusionDecisionModel on the BERT example's fusion
// decisions after the cpu pipeline: model consistency, filters, replay,
// "why (not) fused?", what-if requests and the what-if round trip.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTableView>
#include <QTest>

#include "compiler/runtime/execution_modes.h"
#include "compiler/cost/performance_model.h"
#include "tests/panel_test_util.h"
#include "views/fusion/fusion_explorer.h"
#include "tests/event_wait.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

int firstRow(const FusionDecisionModel& model, bool applied) {
    for (int i = 0; i < model.rowCount(); ++i)
        if (model.row(i).decision.applied == applied) return i;
    return -1;
}

void selectSourceRow(FusionExplorer& explorer, int sourceRow) {
    const QModelIndex proxy = explorer.filter()->mapFromSource(explorer.model()->index(sourceRow, 0));
    QVERIFY(proxy.isValid());
    explorer.table()->selectionModel()->setCurrentIndex(
        proxy, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

}  // namespace

class TestFusionExplorer : public QObject {
    Q_OBJECT
private:
    DocumentStatePtr m_bert;

private slots:
    void initTestCase() {
        m_bert = makeState("bert_encoder_forward.hlo", "cpu");
        QVERIFY(m_bert);
    }

    void modelHoldsEveryFusionDecision() {
        FusionDecisionModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setState(m_bert);
        size_t expected = 0;
        for (const PassSnapshot& s : *m_bert->snapshots)
            if (isFusionPassName(s.pass)) expected += s.decisions.size();
        QVERIFY(expected > 0);
        QCOMPARE(static_cast<size_t>(model.rowCount()), expected);
        QCOMPARE(model.columnCount(), int(FusionDecisionModel::kColumnCount));
        const int fused = firstRow(model, true), notFused = firstRow(model, false);
        QVERIFY(fused >= 0);
        QVERIFY(notFused >= 0);
        const PassDecision& d = model.row(fused).decision;
        QCOMPARE(model.data(model.index(fused, FusionDecisionModel::kProducer)).toString(),
                 QString::fromStdString(d.producer));
        QCOMPARE(model.data(model.index(fused, FusionDecisionModel::kDecision)).toString(), QStringLiteral("fused"));
        QCOMPARE(model.data(model.index(notFused, FusionDecisionModel::kDecision)).toString(),
                 QStringLiteral("not fused"));
        QCOMPARE(model.data(model.index(fused, FusionDecisionModel::kPredictedGain), FusionDecisionModel::kSortRole)
                     .toDouble(),
                 d.predictedUnfusedSeconds - d.predictedAppliedSeconds);
        QCOMPARE(model.headerData(FusionDecisionModel::kPredictedGain, Qt::Horizontal).toString(),
                 QStringLiteral("Gain (predicted)"));
        // A new state resets the model (the tester checks the signals).
        model.setState(nullptr);
        QCOMPARE(model.rowCount(), 0);
        model.setState(m_bert);
        QCOMPARE(static_cast<size_t>(model.rowCount()), expected);
    }

    void filters() {
        FusionExplorer explorer;
        QAbstractItemModelTester tester(explorer.filter(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        explorer.setState(m_bert);
        FusionDecisionFilter* filter = explorer.filter();
        const int all = explorer.model()->rowCount();
        QCOMPARE(filter->rowCount(), all);

        explorer.outcomeCombo()->setCurrentIndex(1);  // fused
        int fused = 0;
        for (const auto& row : explorer.model()->rows()) fused += row.decision.applied;
        QCOMPARE(filter->rowCount(), fused);
        for (int r = 0; r < filter->rowCount(); ++r)
            QVERIFY(filter->data(filter->index(r, 0), FusionDecisionModel::kAppliedRole).toBool());
        explorer.outcomeCombo()->setCurrentIndex(2);  // not fused
        QCOMPARE(filter->rowCount(), all - fused);
        explorer.outcomeCombo()->setCurrentIndex(0);

        // By reason: the histogram's counts.
        const QMap<QString, int> histogram = explorer.reasonHistogram();
        QVERIFY(histogram.size() >= 2);
        const QString reason = histogram.lastKey();
        const int index = explorer.reasonCombo()->findData(reason);
        QVERIFY2(index > 0, qPrintable(reason));
        explorer.reasonCombo()->setCurrentIndex(index);
        QCOMPARE(filter->rowCount(), histogram.value(reason));
        explorer.reasonCombo()->setCurrentIndex(0);

        // By text: a producer name.
        const QString producer = QString::fromStdString(explorer.model()->row(0).decision.producer);
        explorer.textFilter()->setText(producer);
        QVERIFY(filter->rowCount() >= 1);
        QVERIFY(filter->rowCount() < all);
        for (int r = 0; r < filter->rowCount(); ++r) {
            const QString text = filter->data(filter->index(r, FusionDecisionModel::kProducer)).toString() +
                                 filter->data(filter->index(r, FusionDecisionModel::kConsumer)).toString() +
                                 filter->data(filter->index(r, FusionDecisionModel::kExplanation)).toString();
            QVERIFY(text.contains(producer, Qt::CaseInsensitive));
        }
        explorer.textFilter()->setText(QStringLiteral("no-such-instruction-anywhere"));
        QCOMPARE(filter->rowCount(), 0);
    }

    void replaySlider() {
        FusionExplorer explorer;
        explorer.setState(m_bert);
        const int all = explorer.model()->rowCount();
        QVERIFY(all >= 3);
        QCOMPARE(explorer.replaySlider()->maximum(), all);
        QCOMPARE(explorer.replaySlider()->value(), all);
        QSignalSpy spy(&explorer, &FusionExplorer::replayStepChanged);
        explorer.replaySlider()->setValue(3);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.takeFirst().at(0).toInt(), 3);
        QCOMPARE(explorer.filter()->rowCount(), 3);
        // The rows shown are the first three decisions, in order.
        for (int r = 0; r < 3; ++r)
            QCOMPARE(explorer.filter()->data(explorer.filter()->index(r, 0), FusionDecisionModel::kOrderRole).toInt(), r);
        QVERIFY(explorer.explanationText().contains(QStringLiteral("Decision 3")));
        explorer.setReplayStep(0);
        QCOMPARE(explorer.filter()->rowCount(), 0);
        explorer.setReplayStep(all);
        QCOMPARE(explorer.filter()->rowCount(), all);
        QCOMPARE(spy.count(), 2);
    }

    void explainFusedNotFusedAndNeverConsidered() {
        FusionExplorer explorer;
        QSignalSpy figures(&explorer, &FusionExplorer::figuresUpdated);
        explorer.setState(m_bert);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(figures.count() == 1, 60000);
        const FusionDecisionModel& model = *explorer.model();

        const PassDecision& fused = model.row(model.latestDecision(
            QString::fromStdString(model.row(firstRow(model, true)).decision.producer),
            QString::fromStdString(model.row(firstRow(model, true)).decision.consumer))).decision;
        explorer.explainPair(QString::fromStdString(fused.producer), QString::fromStdString(fused.consumer));
        QString text = explorer.explanationText();
        QVERIFY2(text.contains(QStringLiteral(": fused by ")), qPrintable(text));
        QVERIFY(text.contains(QString::fromStdString(fused.reason)));

        const PassDecision& notFused = model.row(firstRow(model, false)).decision;
        const int latest = model.latestDecision(QString::fromStdString(notFused.producer),
                                                QString::fromStdString(notFused.consumer));
        const PassDecision& last = model.row(latest).decision;
        explorer.explainPair(QString::fromStdString(notFused.producer), QString::fromStdString(notFused.consumer));
        text = explorer.explanationText();
        QVERIFY2(text.contains(last.applied ? QStringLiteral(": fused by ") : QStringLiteral(": not fused by ")),
                 qPrintable(text));
        QVERIFY(text.contains(QString::fromStdString(last.reason)));
        QVERIFY(text.contains(QString::fromStdString(last.explanation)));

        // A pair the pass never looked at: two parameters.
        const HloComputation* entry = explorer.figures()->unfused->entryComputation();
        QVERIFY(entry->parameterCount() >= 2);
        const QString p0 = QString::fromStdString(entry->parameter(0)->name());
        const QString p1 = QString::fromStdString(entry->parameter(1)->name());
        QCOMPARE(model.latestDecision(p0, p1), -1);
        explorer.explainPair(p0, p1);
        QVERIFY2(explorer.explanationText().startsWith(QStringLiteral("never considered: ")),
                 qPrintable(explorer.explanationText()));
        // A parameter feeding a user: checkPair's reason (parameters are not fusible).
        const HloInstruction* param = nullptr;
        for (HloInstruction* p : entry->parameters())
            if (p->userCount() > 0 &&
                model.latestDecision(QString::fromStdString(p->name()),
                                     QString::fromStdString(p->users().front()->name())) < 0) {
                param = p;
                break;
            }
        if (param) {
            explorer.explainPair(QString::fromStdString(param->name()),
                                 QString::fromStdString(param->users().front()->name()));
            QVERIFY2(explorer.explanationText().startsWith(QStringLiteral("never considered: not-fusible-op")),
                     qPrintable(explorer.explanationText()));
        }
        explorer.explainPair(QStringLiteral("nope"), QStringLiteral("nada"));
        QVERIFY(explorer.explanationText().contains(QStringLiteral("there is no instruction %nope")));
        // Summary: kernels before/after from the performance model.
        QVERIFY(explorer.summaryText().contains(
            QStringLiteral("Kernels before fusion: <b>%1</b>, after: <b>%2</b>")
                .arg(explorer.figures()->unfusedPrediction.kernelCount)
                .arg(explorer.figures()->fusedPrediction.kernelCount)));
        QVERIFY(explorer.figures()->fusedPrediction.kernelCount < explorer.figures()->unfusedPrediction.kernelCount);
    }

    void whatIfRequestsAccumulate() {
        FusionExplorer explorer;
        explorer.setState(m_bert);
        QSignalSpy spy(&explorer, &FusionExplorer::fusionWhatIfRequested);
        QSignalSpy selected(&explorer, &FusionExplorer::instructionSelected);
        const FusionDecisionModel& model = *explorer.model();
        const int notFused = firstRow(model, false), fused = firstRow(model, true);
        const PassDecision& a = model.row(notFused).decision;
        const PassDecision& b = model.row(fused).decision;
        const QString pairA = QString::fromStdString(a.producer + ":" + a.consumer);
        const QString pairB = QString::fromStdString(b.producer + ":" + b.consumer);

        selectSourceRow(explorer, notFused);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).toString(), QString::fromStdString(a.producer));
        explorer.forceButton()->click();
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toString(), pairA);
        QCOMPARE(spy.at(0).at(1).toString(), QString());

        selectSourceRow(explorer, fused);
        explorer.forbidButton()->click();
        QCOMPARE(spy.count(), 2);
        QCOMPARE(spy.at(1).at(0).toString(), pairA);
        QCOMPARE(spy.at(1).at(1).toString(), pairB);

        // Forcing a forbidden pair moves it from one list to the other.
        explorer.forceButton()->click();
        QCOMPARE(spy.at(2).at(0).toString(), pairA + u';' + pairB);
        QCOMPARE(spy.at(2).at(1).toString(), QString());
    }

    void whatIfRoundTripShowsPredictedTimes() {
        FusionExplorer explorer;
        QSignalSpy figures(&explorer, &FusionExplorer::figuresUpdated);
        explorer.setState(m_bert);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(figures.count() == 1, 60000);
        const double before = explorer.figures()->fusedPrediction.totalSeconds;
        const FusionDecisionModel& model = *explorer.model();
        const int fusedRow = firstRow(model, true);
        const PassDecision d = model.row(fusedRow).decision;
        QSignalSpy spy(&explorer, &FusionExplorer::fusionWhatIfRequested);
        selectSourceRow(explorer, fusedRow);
        explorer.forbidButton()->click();
        QCOMPARE(spy.count(), 1);
        // The worker's part: re-run with the requested options.
        DocumentStatePtr next = makeState("bert_encoder_forward.hlo", "cpu", spy.at(0).at(0).toString().toStdString(),
                                          spy.at(0).at(1).toString().toStdString());
        QVERIFY(next);
        explorer.setState(next);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(figures.count() == 2, 60000);
        QCOMPARE(explorer.forbiddenPairs(), QStringList{QString::fromStdString(d.producer + ":" + d.consumer)});
        // The decision log names the pair as the pass saw it: the consumer may
        // already sit in a fusion by then; explainPair resolves that.
        explorer.explainPair(QString::fromStdString(d.producer), QString::fromStdString(d.consumer));
        QVERIFY2(explorer.explanationText().contains(QStringLiteral(": not fused by fusion")),
                 qPrintable(explorer.explanationText()));
        QVERIFY2(explorer.explanationText().contains(QStringLiteral("forbidden-by-user")),
                 qPrintable(explorer.explanationText()));
        const QString text = explorer.whatIfText();
        QVERIFY2(text.contains(QStringLiteral("before the what-if ") + FusionDecisionModel::formatSeconds(before)),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral(", after ") +
                               FusionDecisionModel::formatSeconds(explorer.figures()->fusedPrediction.totalSeconds)),
                 qPrintable(text));
    }
};

QTEST_MAIN(TestFusionExplorer)
#include "tst_fusion_explorer.moc"
