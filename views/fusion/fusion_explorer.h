// FusionExplorer: the fusion passes' decisions of a document state as a
// filterable table, a summary (kernels before/after as the performance
// model counts them, fused pairs, a histogram of reasons), a slider that
// replays the decisions one by one, a "Why not fused?" answer for any
// (producer, consumer) pair and "Force fuse" / "Forbid fuse" what-ifs on the
// selected decision. A what-if emits fusionWhatIfRequested with the
// accumulated "p:c;..." lists; the document worker re-runs the pipeline and
// a new state arrives through setState, whose predicted module time is
// shown next to the time before the what-if.
#pragma once

#include <QFutureWatcher>
#include <QPointer>
#include <QStringList>
#include <QWidget>

#include "views/document/document_panel.h"
#include "views/document/document_state.h"
#include "views/model/model_figures.h"
#include "views/fusion/fusion_decision_model.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QTableView;
class QTableWidget;
class QTextBrowser;

namespace hloscope {

class FusionExplorer : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    explicit FusionExplorer(QWidget* parent = nullptr);
    ~FusionExplorer() override;

    FusionDecisionModel* model() const { return m_model; }
    FusionDecisionFilter* filter() const { return m_filter; }
    QTableView* table() const { return m_table; }
    QSlider* replaySlider() const { return m_slider; }
    QComboBox* reasonCombo() const { return m_reasonCombo; }
    QComboBox* outcomeCombo() const { return m_outcomeCombo; }
    QLineEdit* textFilter() const { return m_textFilter; }
    QPushButton* forceButton() const { return m_forceButton; }
    QPushButton* forbidButton() const { return m_forbidButton; }

    QString summaryText() const;
    QString explanationText() const;  // the last "Why not fused?" answer
    QString whatIfText() const;       // predicted module time before/after the what-if
    QStringList forcedPairs() const { return m_force; }
    QStringList forbiddenPairs() const { return m_forbid; }
    // Model figures of the current state (null until computed).
    std::shared_ptr<const ModelFigures> figures() const { return m_figures; }
    // Reason code -> decisions with it (all decisions of the state).
    QMap<QString, int> reasonHistogram() const;

public slots:
    void setState(hloscope::DocumentStatePtr state) override;
    void selectInstruction(const QString& name);
    // Shows (and returns through explanationText) why the pair was or was
    // not fused: the latest decision record, or "never considered: <why>".
    void explainPair(const QString& producer, const QString& consumer);
    // Shows the first `step` decisions (0..rowCount); emits replayStepChanged.
    void setReplayStep(int step);
    void forceSelected();
    void forbidSelected();
    // What-if on a pair named elsewhere (a graph edge's context menu).
    void forcePair(const QString& producer, const QString& consumer);
    void forbidPair(const QString& producer, const QString& consumer);
    void clearWhatIf();

signals:
    void instructionSelected(const QString& name);
    // A decision row was chosen: the graph highlights its edge.
    void decisionSelected(const QString& producer, const QString& consumer);
    void replayStepChanged(int step);
    void fusionWhatIfRequested(const QString& force, const QString& forbid);
    // The summary (model figures) of the current state is up to date.
    void figuresUpdated();

private:
    // The constructor's steps: the widgets, their layout, their signals.
    void createWidgets();
    void layOutWidgets();
    void connectWidgets();
    void updateSummary();
    void updateWhatIfLabel();
    void requestWhatIf(bool force);
    void requestPairWhatIf(const QString& producer, const QString& consumer, bool force);
    int selectedSourceRow() const;
    // `name` and the fusion that holds it after fusion (the decisions name
    // fusions once an instruction is inside one).
    QStringList aliases(const QString& name) const;
    QString neverConsidered(const QString& producer, const QString& consumer) const;

    DocumentStatePtr m_state;
    std::shared_ptr<const ModelFigures> m_figures;
    QFutureWatcher<ModelFiguresResult>* m_watcher = nullptr;
    QString m_figuresError;
    FusionDecisionModel* m_model = nullptr;
    FusionDecisionFilter* m_filter = nullptr;
    QLabel* m_summary = nullptr;
    QTableWidget* m_histogram = nullptr;
    QComboBox* m_reasonCombo = nullptr;
    QComboBox* m_outcomeCombo = nullptr;
    QLineEdit* m_textFilter = nullptr;
    QSlider* m_slider = nullptr;
    QLabel* m_sliderLabel = nullptr;
    QTableView* m_table = nullptr;
    QLineEdit* m_producerEdit = nullptr;
    QLineEdit* m_consumerEdit = nullptr;
    QTextBrowser* m_answer = nullptr;
    QPushButton* m_forceButton = nullptr;
    QPushButton* m_forbidButton = nullptr;
    QPushButton* m_clearButton = nullptr;
    QPushButton* m_explainButton = nullptr;
    QLabel* m_whatIf = nullptr;
    QStringList m_force;
    QStringList m_forbid;
    // Predicted module time when the last what-if was requested (-1: none).
    double m_beforeWhatIfSeconds = -1;
    QString m_beforeWhatIfLabel;
};

}  // namespace hloscope
