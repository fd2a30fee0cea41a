// HloTextView: the current module's text (read-only, highlighted). Selecting
// an instruction scrolls to and highlights the line defining it; clicking a
// %name emits instructionSelected(name). Binds to DocumentState: shows the
// text of the current snapshot (reloaded only when that text changes; a hidden page
// of a tab widget loads it when shown).
#pragma once

#include <QHash>
#include <QPlainTextEdit>
#include <memory>
#include <string>

#include "views/document/document_panel.h"
#include "views/document/document_state.h"

namespace hloscope {

class HloHighlighter;

class HloTextView : public QPlainTextEdit, public DocumentPanel {
    Q_OBJECT
public:
    explicit HloTextView(QWidget* parent = nullptr);

    // Texts longer than this (characters) are not highlighted.
    static constexpr qsizetype kHighlightLimit = 2'000'000;

    HloHighlighter* highlighter() const { return m_highlighter; }
    // Shows `text` (no document needed; setState calls it).
    void setModuleText(const QString& text);
    // 0-based line defining instruction (or computation) `name`; -1 if none.
    int lineOf(const QString& name) const;
    QString selectedInstruction() const { return m_selected; }
    // The %name (without '%') at `column` of `line`, or "".
    static QString nameAt(const QString& line, int column);

public slots:
    void setState(hloscope::DocumentStatePtr state) override;
    void selectInstruction(const QString& name);

signals:
    void instructionSelected(const QString& name);

protected:
    void mouseReleaseEvent(QMouseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void load();  // shows m_text
    void indexLines();
    void highlightLine(int line);

    HloHighlighter* m_highlighter = nullptr;
    std::shared_ptr<const std::string> m_text;  // the snapshot text shown
    bool m_stale = false;  // m_text is not loaded yet (the view is hidden)
    QHash<QString, int> m_lines;
    QString m_selected;
};

}  // namespace hloscope
