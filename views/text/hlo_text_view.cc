#include "views/text/hlo_text_view.h"

#include <QFontDatabase>
#include <QMouseEvent>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTextBlock>

#include "views/text/hlo_highlighter.h"

namespace hloscope {

HloTextView::HloTextView(QWidget* parent) : QPlainTextEdit(parent) {
    setReadOnly(true);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_highlighter = new HloHighlighter(document());
    setObjectName(QStringLiteral("hloTextView"));
}

void HloTextView::setState(DocumentStatePtr state) {
    const PassSnapshot* snapshot = state ? state->currentSnapshot() : nullptr;
    std::shared_ptr<const std::string> text = snapshot ? snapshot->text : nullptr;
    if (text && text == m_text) return;
    m_text = std::move(text);
    // A page of a tab widget that is not shown loads its text when it is: a large
    // module's text costs the GUI thread a good part of a second.
    if (parentWidget() && !isVisible()) {
        m_stale = true;
        return;
    }
    load();
}

void HloTextView::load() {
    m_stale = false;
    const QString selected = m_selected;
    setModuleText(m_text ? QString::fromStdString(*m_text) : QString());
    if (!selected.isEmpty()) selectInstruction(selected);
}

void HloTextView::showEvent(QShowEvent* event) {
    QPlainTextEdit::showEvent(event);
    if (m_stale) load();
}

void HloTextView::setModuleText(const QString& text) {
    const int scroll = verticalScrollBar()->value();
    // Highlighting a whole multi-megabyte module costs seconds on the GUI
    // thread: the largest modules are shown plain.
    const bool highlight = text.size() <= kHighlightLimit;
    if (!highlight && m_highlighter->document()) m_highlighter->setDocument(nullptr);
    setPlainText(text);
    if (highlight && !m_highlighter->document()) m_highlighter->setDocument(document());
    indexLines();
    verticalScrollBar()->setValue(scroll);
    setExtraSelections({});
}

void HloTextView::indexLines() {
    static const QRegularExpression definition(
        QStringLiteral(R"(^\s*(?:ROOT\s+|ENTRY\s+)?%?([A-Za-z0-9_.\-]+)\s*(?:=\s|\())"));
    m_lines.clear();
    int line = 0;
    for (QTextBlock block = document()->begin(); block.isValid(); block = block.next(), ++line) {
        const QString text = block.text();
        if (text.isEmpty() || text.startsWith(QLatin1String("HloModule"))) continue;
        const QRegularExpressionMatch m = definition.match(text);
        if (m.hasMatch() && !m_lines.contains(m.captured(1))) m_lines.insert(m.captured(1), line);
    }
}

int HloTextView::lineOf(const QString& name) const {
    QString key = name.startsWith(QLatin1Char('%')) ? name.mid(1) : name;
    return m_lines.value(key, -1);
}

QString HloTextView::nameAt(const QString& line, int column) {
    static const QRegularExpression token(QStringLiteral(R"(%([A-Za-z0-9_.\-]+))"));
    QRegularExpressionMatchIterator it = token.globalMatch(line);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        if (column >= m.capturedStart(0) && column <= m.capturedEnd(0)) {
            QString name = m.captured(1);
            // A trailing '.' belongs to the sentence, not the name.
            while (name.endsWith(QLatin1Char('.'))) name.chop(1);
            return name;
        }
    }
    return {};
}

void HloTextView::highlightLine(int line) {
    QList<QTextEdit::ExtraSelection> selections;
    if (line >= 0) {
        QTextEdit::ExtraSelection selection;
        QColor colour = palette().color(QPalette::Highlight);
        colour.setAlpha(70);
        selection.format.setBackground(colour);
        selection.format.setProperty(QTextFormat::FullWidthSelection, true);
        selection.cursor = QTextCursor(document()->findBlockByNumber(line));
        selections.append(selection);
    }
    setExtraSelections(selections);
}

void HloTextView::selectInstruction(const QString& name) {
    m_selected = name;
    if (m_stale) return;  // selected when the text loads
    const int line = lineOf(name);
    highlightLine(line);
    if (line < 0) return;
    QTextCursor cursor(document()->findBlockByNumber(line));
    setTextCursor(cursor);
    centerCursor();
}

void HloTextView::mouseReleaseEvent(QMouseEvent* event) {
    QPlainTextEdit::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton || textCursor().hasSelection()) return;
    const QTextCursor cursor = cursorForPosition(event->position().toPoint());
    const QString name = nameAt(cursor.block().text(), cursor.positionInBlock());
    if (name.isEmpty() || lineOf(name) < 0) return;
    selectInstruction(name);
    emit instructionSelected(name);
}

}  // namespace hloscope
