// TextDiffView: the previous and the current snapshot texts, line-diffed
// (Myers, line_diff.h), side by side (aligned, filler lines opposite
// insertions) or unified. Removed lines are red, added lines green; runs of
// unchanged lines beyond `contextLines` around a change are folded into one
// "… N unchanged lines" row (contextLines < 0 shows everything).
#pragma once

#include <QFutureWatcher>
#include <QString>
#include <QWidget>
#include <memory>
#include <string>
#include <vector>

#include "views/document/document_panel.h"
#include "views/document/document_state.h"
#include "views/text/line_diff.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QStackedWidget;

namespace hloscope {

class TextDiffView : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    enum class Mode { kSideBySide, kUnified };

    explicit TextDiffView(QWidget* parent = nullptr);

    void setMode(Mode mode);
    Mode mode() const { return m_mode; }
    void setContextLines(int lines);
    int contextLines() const { return m_context; }
    // Diffs two texts (setState calls it with the snapshot texts). The diff
    // runs on a pool thread while the view is shown; the accessors below
    // wait for it.
    void setTexts(const QString& before, const QString& after, const QString& title = {});
    void setSnapshotTexts(std::shared_ptr<const std::string> before,
                          std::shared_ptr<const std::string> after, const QString& title = {});

    // The diff is computed when the view is shown or asked for (a hidden
    // view costs nothing per step).
    const std::vector<DiffLine>& diff() { return ensureDiff(), m_diff; }
    int addedCount() { return ensureDiff(), m_added; }
    int removedCount() { return ensureDiff(), m_removed; }
    QPlainTextEdit* leftEdit() { return ensureDiff(), m_left; }
    QPlainTextEdit* rightEdit() { return ensureDiff(), m_right; }
    QPlainTextEdit* unifiedEdit() { return ensureDiff(), m_unified; }

public slots:
    void setState(hloscope::DocumentStatePtr state) override;

protected:
    void showEvent(QShowEvent* event) override;

private:
    struct Result {
        QStringList before, after;
        std::vector<DiffLine> diff;
        int added = 0, removed = 0;
        QString title;
    };
    static Result computeDiff(std::shared_ptr<const std::string> before,
                              std::shared_ptr<const std::string> after, QString title);
    void startDiff();
    void diffFinished();
    void ensureDiff();
    void apply(Result result);
    void render();

    Mode m_mode = Mode::kSideBySide;
    int m_context = 3;
    std::shared_ptr<const std::string> m_pendingBefore, m_pendingAfter;
    QString m_pendingTitle;
    bool m_pending = false;
    bool m_resultTaken = true;
    QFutureWatcher<Result>* m_watcher = nullptr;
    QStringList m_before, m_after;
    std::vector<DiffLine> m_diff;
    int m_added = 0, m_removed = 0;
    std::shared_ptr<const std::string> m_beforeText, m_afterText;
    QLabel* m_title = nullptr;
    QComboBox* m_modeBox = nullptr;
    QStackedWidget* m_stack = nullptr;
    QPlainTextEdit* m_left = nullptr;
    QPlainTextEdit* m_right = nullptr;
    QPlainTextEdit* m_unified = nullptr;
};

}  // namespace hloscope
