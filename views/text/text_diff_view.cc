#include "views/text/text_diff_view.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTextBlock>
#include <QTextCursor>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <string_view>
#include <utility>

#include "core/support/thread_handoff.h"
#include "views/text/hlo_highlighter.h"

namespace hloscope {
namespace {

enum class RowKind { kEqual, kRemoved, kAdded, kChanged, kFold };
constexpr qsizetype kMaxRows = 20000;

QPlainTextEdit* makeEdit(QWidget* parent, const QString& name) {
    auto* edit = new QPlainTextEdit(parent);
    edit->setReadOnly(true);
    edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    edit->setObjectName(name);
    new HloHighlighter(edit->document());
    return edit;
}

// Writes `lines` into `edit`, colouring each block by `kinds`.
void fill(QPlainTextEdit* edit, const QStringList& lines, const std::vector<RowKind>& kinds) {
    edit->setPlainText(lines.join(QLatin1Char('\n')));
    const bool dark = edit->palette().color(QPalette::Base).lightness() < 128;
    const QColor removed = dark ? QColor(0x5a, 0x1e, 0x1e) : QColor(0xff, 0xdc, 0xdc);
    const QColor added = dark ? QColor(0x1e, 0x4a, 0x24) : QColor(0xd8, 0xf8, 0xd8);
    const QColor fold = dark ? QColor(0x30, 0x30, 0x40) : QColor(0xe8, 0xec, 0xf4);
    const QColor filler = dark ? QColor(0x28, 0x28, 0x28) : QColor(0xf0, 0xf0, 0xf0);
    QTextCursor cursor(edit->document());
    cursor.beginEditBlock();
    QTextBlock block = edit->document()->begin();
    for (size_t i = 0; i < kinds.size() && block.isValid(); ++i, block = block.next()) {
        QColor colour;
        switch (kinds[i]) {
            case RowKind::kEqual: continue;
            case RowKind::kRemoved: colour = removed; break;
            case RowKind::kAdded: colour = added; break;
            case RowKind::kChanged: colour = filler; break;
            case RowKind::kFold: colour = fold; break;
        }
        QTextBlockFormat format;
        format.setBackground(colour);
        cursor.setPosition(block.position());
        cursor.setBlockFormat(format);
    }
    cursor.endEditBlock();
}

}  // namespace

TextDiffView::TextDiffView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("textDiffView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* header = new QHBoxLayout;
    m_title = new QLabel(tr("No previous snapshot"), this);
    m_modeBox = new QComboBox(this);
    m_modeBox->addItem(tr("Side by side"));
    m_modeBox->addItem(tr("Unified"));
    header->addWidget(m_title, 1);
    header->addWidget(m_modeBox);
    layout->addLayout(header);
    m_stack = new QStackedWidget(this);
    auto* splitter = new QSplitter(Qt::Horizontal, m_stack);
    m_left = makeEdit(splitter, QStringLiteral("diffBefore"));
    m_right = makeEdit(splitter, QStringLiteral("diffAfter"));
    splitter->addWidget(m_left);
    splitter->addWidget(m_right);
    m_unified = makeEdit(m_stack, QStringLiteral("diffUnified"));
    m_stack->addWidget(splitter);
    m_stack->addWidget(m_unified);
    layout->addWidget(m_stack, 1);
    // The two sides scroll together.
    connect(m_left->verticalScrollBar(), &QScrollBar::valueChanged, m_right->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(m_right->verticalScrollBar(), &QScrollBar::valueChanged, m_left->verticalScrollBar(),
            &QScrollBar::setValue);
    m_watcher = new QFutureWatcher<Result>(this);
    connect(m_watcher, &QFutureWatcher<Result>::finished, this, &TextDiffView::diffFinished);
    connect(m_modeBox, &QComboBox::currentIndexChanged, this,
            [this](int index) { setMode(index == 0 ? Mode::kSideBySide : Mode::kUnified); });
}

void TextDiffView::setMode(Mode mode) {
    m_modeBox->setCurrentIndex(mode == Mode::kSideBySide ? 0 : 1);
    if (mode == m_mode) return;
    m_mode = mode;
    if (!m_pending) render();
}

void TextDiffView::setContextLines(int lines) {
    if (lines == m_context) return;
    m_context = lines;
    if (!m_pending) render();
}

void TextDiffView::setState(DocumentStatePtr state) {
    const PassSnapshot* current = state ? state->currentSnapshot() : nullptr;
    if (!current || state->current == 0) {
        m_beforeText.reset();
        m_afterText.reset();
        auto text = current && current->text ? current->text : std::make_shared<const std::string>();
        setSnapshotTexts(text, text, tr("Input module: no previous snapshot"));
        return;
    }
    const PassSnapshot& previous = (*state->snapshots)[static_cast<size_t>(state->current - 1)];
    if (previous.text == m_beforeText && current->text == m_afterText) return;
    m_beforeText = previous.text;
    m_afterText = current->text;
    setSnapshotTexts(previous.text, current->text,
                     tr("After %1 (pass %2)").arg(QString::fromStdString(current->pass)).arg(current->index));
}

void TextDiffView::setTexts(const QString& before, const QString& after, const QString& title) {
    m_beforeText.reset();
    m_afterText.reset();
    setSnapshotTexts(std::make_shared<const std::string>(before.toStdString()),
                     std::make_shared<const std::string>(after.toStdString()), title);
}

void TextDiffView::setSnapshotTexts(std::shared_ptr<const std::string> before,
                                    std::shared_ptr<const std::string> after, const QString& title) {
    m_pendingBefore = before ? std::move(before) : std::make_shared<const std::string>();
    m_pendingAfter = after ? std::move(after) : std::make_shared<const std::string>();
    m_pendingTitle = title;
    m_pending = true;
    if (isVisible()) startDiff();
}

TextDiffView::Result TextDiffView::computeDiff(std::shared_ptr<const std::string> before,
                                               std::shared_ptr<const std::string> after, QString title) {
    Result r;
    const std::vector<std::string_view> a = splitLines(*before), b = splitLines(*after);
    r.diff = diffLines(a, b);
    for (std::string_view line : a) r.before << QString::fromUtf8(line.data(), static_cast<qsizetype>(line.size()));
    for (std::string_view line : b) r.after << QString::fromUtf8(line.data(), static_cast<qsizetype>(line.size()));
    for (const DiffLine& d : r.diff) {
        r.added += d.kind == DiffLine::kAdded;
        r.removed += d.kind == DiffLine::kRemoved;
    }
    r.title = title.isEmpty() ? tr("Diff") : title;
    if (!before->empty() || !after->empty()) r.title += tr(": +%1 −%2 lines").arg(r.added).arg(r.removed);
    return r;
}

void TextDiffView::startDiff() {
    if (!m_pending || m_watcher->isRunning()) return;  // a running diff restarts when done
    m_pending = false;
    m_resultTaken = false;
    m_title->setText(tr("Comparing…"));
    m_watcher->setFuture(QtConcurrent::run(
        handoff::wrap(&TextDiffView::computeDiff), std::exchange(m_pendingBefore, nullptr),
        std::exchange(m_pendingAfter, nullptr), std::exchange(m_pendingTitle, QString())));
}

void TextDiffView::diffFinished() {
    if (!m_resultTaken) {
        m_resultTaken = true;
        // Texts that arrived meanwhile make this result stale.
        if (!m_pending) {
            handoff::receive();
            apply(m_watcher->future().takeResult());
        }
    }
    if (m_pending && isVisible()) startDiff();
}

void TextDiffView::ensureDiff() {
    if (m_watcher->isRunning()) m_watcher->waitForFinished();
    if (!m_resultTaken && m_watcher->future().isValid() && m_watcher->future().isResultReadyAt(0)) {
        m_resultTaken = true;
        if (!m_pending) {
            handoff::receive();
            apply(m_watcher->future().takeResult());
        }
    }
    if (!m_pending) return;
    m_pending = false;
    apply(computeDiff(std::exchange(m_pendingBefore, nullptr), std::exchange(m_pendingAfter, nullptr),
                      std::exchange(m_pendingTitle, QString())));
}

void TextDiffView::apply(Result result) {
    m_before = std::move(result.before);
    m_after = std::move(result.after);
    m_diff = std::move(result.diff);
    m_added = result.added;
    m_removed = result.removed;
    m_title->setText(result.title);
    render();
}

void TextDiffView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    startDiff();
}

void TextDiffView::render() {
    // Which diff entries are shown (within m_context of a change).
    const int count = static_cast<int>(m_diff.size());
    std::vector<bool> shown(static_cast<size_t>(count), m_context < 0);
    if (m_context >= 0) {
        for (int i = 0; i < count; ++i) {
            if (m_diff[static_cast<size_t>(i)].kind == DiffLine::kEqual) continue;
            for (int j = std::max(0, i - m_context); j <= std::min(count - 1, i + m_context); ++j)
                shown[static_cast<size_t>(j)] = true;
        }
    }
    auto line = [](const QStringList& lines, int i) {
        return i >= 0 && i < lines.size() ? lines[i] : QString();
    };
    QStringList left, right, unified;
    std::vector<RowKind> leftKinds, rightKinds, unifiedKinds;
    int i = 0;
    while (i < count) {
        if (!shown[static_cast<size_t>(i)]) {
            int j = i;
            while (j < count && !shown[static_cast<size_t>(j)]) ++j;
            const QString fold = tr("… %1 unchanged lines").arg(j - i);
            left << fold, right << fold, unified << fold;
            leftKinds.push_back(RowKind::kFold), rightKinds.push_back(RowKind::kFold);
            unifiedKinds.push_back(RowKind::kFold);
            i = j;
            continue;
        }
        const DiffLine& d = m_diff[static_cast<size_t>(i)];
        if (d.kind == DiffLine::kEqual) {
            left << line(m_before, d.left), right << line(m_after, d.right);
            unified << QStringLiteral("  ") + line(m_after, d.right);
            leftKinds.push_back(RowKind::kEqual), rightKinds.push_back(RowKind::kEqual);
            unifiedKinds.push_back(RowKind::kEqual);
            ++i;
            continue;
        }
        // A run of changes: removed lines then added lines, paired side by side.
        std::vector<int> removed, added;
        while (i < count && shown[static_cast<size_t>(i)] &&
               m_diff[static_cast<size_t>(i)].kind != DiffLine::kEqual) {
            const DiffLine& c = m_diff[static_cast<size_t>(i)];
            (c.kind == DiffLine::kRemoved ? removed : added).push_back(c.kind == DiffLine::kRemoved ? c.left : c.right);
            ++i;
        }
        for (int r : removed) unified << QStringLiteral("- ") + line(m_before, r), unifiedKinds.push_back(RowKind::kRemoved);
        for (int a : added) unified << QStringLiteral("+ ") + line(m_after, a), unifiedKinds.push_back(RowKind::kAdded);
        const size_t rows = std::max(removed.size(), added.size());
        for (size_t r = 0; r < rows; ++r) {
            if (r < removed.size()) left << line(m_before, removed[r]), leftKinds.push_back(RowKind::kRemoved);
            else left << QString(), leftKinds.push_back(RowKind::kChanged);
            if (r < added.size()) right << line(m_after, added[r]), rightKinds.push_back(RowKind::kAdded);
            else right << QString(), rightKinds.push_back(RowKind::kChanged);
        }
    }
    // Long diffs are cut: a widget with 100k highlighted rows takes seconds
    // to fill, and nobody reads them; the counts in the title stay exact.
    auto cut = [](QStringList& rows, std::vector<RowKind>& kinds) {
        if (rows.size() <= kMaxRows) return;
        const qsizetype hidden = rows.size() - kMaxRows;
        rows.resize(kMaxRows);
        kinds.resize(static_cast<size_t>(kMaxRows));
        rows << tr("… %1 more rows not shown (export the texts to compare them in full)").arg(hidden);
        kinds.push_back(RowKind::kFold);
    };
    cut(left, leftKinds), cut(right, rightKinds), cut(unified, unifiedKinds);
    if (m_mode == Mode::kSideBySide) {
        fill(m_left, left, leftKinds);
        fill(m_right, right, rightKinds);
        m_unified->clear();
        m_stack->setCurrentIndex(0);
    } else {
        fill(m_unified, unified, unifiedKinds);
        m_left->clear();
        m_right->clear();
        m_stack->setCurrentIndex(1);
    }
}

}  // namespace hloscope
