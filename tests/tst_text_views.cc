// HloHighlighter formats, the Myers line diff on hand-made texts,
// TextDiffView rendering, and HloTextView's selection <-> line mapping.
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <random>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "views/document/document_worker.h"
#include "views/text/hlo_highlighter.h"
#include "views/text/hlo_text_view.h"
#include "views/text/line_diff.h"
#include "views/text/text_diff_view.h"
#include "tests/event_wait.h"

using namespace hloscope;

namespace {

// The format applied at `column` of the first block of `document`.
QTextCharFormat formatAt(QTextDocument& document, int block, int column) {
    const QTextBlock b = document.findBlockByNumber(block);
    for (const QTextLayout::FormatRange& r : b.layout()->formats())
        if (column >= r.start && column < r.start + r.length) return r.format;
    return {};
}

std::vector<std::string> toStrings(const std::vector<std::string_view>& v) {
    return std::vector<std::string>(v.begin(), v.end());
}

// Applies a diff script to `before` and checks it yields `after`, and that
// it is well-formed (every line once, in order).
bool scriptValid(const std::vector<std::string_view>& before, const std::vector<std::string_view>& after,
                 const std::vector<DiffLine>& script) {
    std::vector<std::string_view> rebuilt;
    int left = 0, right = 0;
    for (const DiffLine& d : script) {
        if (d.kind != DiffLine::kAdded && d.left != left++) return false;
        if (d.kind != DiffLine::kRemoved && d.right != right++) return false;
        if (d.kind == DiffLine::kEqual && before[static_cast<size_t>(d.left)] != after[static_cast<size_t>(d.right)])
            return false;
        if (d.kind != DiffLine::kRemoved) rebuilt.push_back(after[static_cast<size_t>(d.right)]);
    }
    return left == static_cast<int>(before.size()) && right == static_cast<int>(after.size()) &&
           rebuilt == after;
}

int edits(const std::vector<DiffLine>& script) {
    int n = 0;
    for (const DiffLine& d : script) n += d.kind != DiffLine::kEqual;
    return n;
}

// Edit distance (insertions + deletions) by the LCS table, for checking
// minimality.
int lcsDistance(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
    std::vector<std::vector<int>> t(a.size() + 1, std::vector<int>(b.size() + 1, 0));
    for (size_t i = a.size(); i-- > 0;)
        for (size_t j = b.size(); j-- > 0;)
            t[i][j] = a[i] == b[j] ? t[i + 1][j + 1] + 1 : std::max(t[i + 1][j], t[i][j + 1]);
    return static_cast<int>(a.size() + b.size()) - 2 * t[0][0];
}

const char* const kModule = R"(HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

// a comment
%add.1 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main.2 (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0), metadata={op_name="jit(f)/sin"}
  %sine.3 = f32[4]{0} sine(%p)
  ROOT %r = f32[4]{0} multiply(%sine.3, %p)
}
)";

}  // namespace

class TestTextViews : public QObject {
    Q_OBJECT
private slots:
    void highlighterFormats() {
        QTextDocument document;
        HloHighlighter highlighter(&document);
        highlighter.setDark(false);
        document.setPlainText(QString::fromUtf8(kModule));
        highlighter.rehighlight();  // (a new highlighter also rehighlights from the event loop)
        const QString line10 = document.findBlockByNumber(10).text();
        QCOMPARE(line10.left(5), QStringLiteral("  %p "));
        auto colour = [&](HloHighlighter::Token t) { return highlighter.format(t).foreground().color(); };
        QCOMPARE(formatAt(document, 10, 3).foreground().color(), colour(HloHighlighter::Token::kName));
        const int shape = static_cast<int>(line10.indexOf(QLatin1String("f32[4]")));
        QCOMPARE(formatAt(document, 10, shape + 2).foreground().color(), colour(HloHighlighter::Token::kShape));
        const int opcode = static_cast<int>(line10.indexOf(QLatin1String("parameter")));
        QCOMPARE(formatAt(document, 10, opcode).foreground().color(), colour(HloHighlighter::Token::kOpcode));
        QVERIFY(formatAt(document, 10, opcode).fontWeight() == QFont::Bold);
        const int attribute = static_cast<int>(line10.indexOf(QLatin1String("metadata")));
        QCOMPARE(formatAt(document, 10, attribute).foreground().color(), colour(HloHighlighter::Token::kAttribute));
        const int string = static_cast<int>(line10.indexOf(QLatin1String("\"jit")));
        QCOMPARE(formatAt(document, 10, string + 3).foreground().color(), colour(HloHighlighter::Token::kString));
        QCOMPARE(formatAt(document, 2, 4).foreground().color(), colour(HloHighlighter::Token::kComment));
        QVERIFY(formatAt(document, 2, 4).fontItalic());
        QCOMPARE(formatAt(document, 0, 2).foreground().color(), colour(HloHighlighter::Token::kKeyword));
        // Dark palettes get other colours.
        const QColor light = colour(HloHighlighter::Token::kOpcode);
        highlighter.setDark(true);
        QVERIFY(colour(HloHighlighter::Token::kOpcode) != light);
        QCOMPARE(formatAt(document, 10, opcode).foreground().color(), colour(HloHighlighter::Token::kOpcode));
    }

    void lineDiffHandMade() {
        auto check = [](const std::string& a, const std::string& b, int expectedEdits) {
            const auto before = splitLines(a), after = splitLines(b);
            const auto script = diffLines(before, after);
            QVERIFY(scriptValid(before, after, script));
            QCOMPARE(edits(script), expectedEdits);
        };
        check("", "", 0);
        check("a\nb\nc\n", "a\nb\nc\n", 0);
        check("", "x\ny\n", 2);
        check("x\ny\n", "", 2);
        check("a\nb\nc\n", "a\nc\n", 1);
        check("a\nb\nc\n", "a\nB\nc\n", 2);
        check("a\nb\nc\nd\n", "b\nc\nd\ne\n", 2);
        check("a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n", 5);  // Myers' paper example

        // The exact script on a small case.
        const auto before = splitLines("a\nb\nc\n"), after = splitLines("a\nx\nc\n");
        const std::vector<DiffLine> expected = {{DiffLine::kEqual, 0, 0},
                                                {DiffLine::kRemoved, 1, -1},
                                                {DiffLine::kAdded, -1, 1},
                                                {DiffLine::kEqual, 2, 2}};
        QCOMPARE(diffLines(before, after), expected);
        QCOMPARE(toStrings(splitLines("p\nq")), (std::vector<std::string>{"p", "q"}));
    }

    void lineDiffIsMinimalOnRandomTexts() {
        std::mt19937 random(7);
        for (int round = 0; round < 200; ++round) {
            std::vector<std::string> a, b;
            const int n = static_cast<int>(random() % 12), m = static_cast<int>(random() % 12);
            for (int i = 0; i < n; ++i) a.push_back(std::string(1, static_cast<char>('a' + random() % 4)));
            for (int i = 0; i < m; ++i) b.push_back(std::string(1, static_cast<char>('a' + random() % 4)));
            const std::vector<std::string_view> av(a.begin(), a.end()), bv(b.begin(), b.end());
            const auto script = diffLines(av, bv);
            QVERIFY(scriptValid(av, bv, script));
            QCOMPARE(edits(script), lcsDistance(av, bv));
        }
    }

    void lineDiffEditLimitStaysCorrect() {
        std::vector<std::string> a, b;
        for (int i = 0; i < 300; ++i) a.push_back("a" + std::to_string(i)), b.push_back("b" + std::to_string(i));
        const std::vector<std::string_view> av(a.begin(), a.end()), bv(b.begin(), b.end());
        const auto script = diffLines(av, bv, 10);
        QVERIFY(scriptValid(av, bv, script));
        QCOMPARE(edits(script), 600);
    }

    void diffViewRendersChanges() {
        TextDiffView view;
        view.setContextLines(-1);
        view.setTexts(QStringLiteral("a\nb\nc\nd\n"), QStringLiteral("a\nB\nc\nd\ne\n"));
        QCOMPARE(view.addedCount(), 2);
        QCOMPARE(view.removedCount(), 1);
        QCOMPARE(view.leftEdit()->toPlainText(), QStringLiteral("a\nb\nc\nd\n"));
        QCOMPARE(view.rightEdit()->toPlainText(), QStringLiteral("a\nB\nc\nd\ne"));
        // Changed lines are coloured, equal ones not.
        auto background = [](QPlainTextEdit* edit, int line) {
            return edit->document()->findBlockByNumber(line).blockFormat().background();
        };
        QCOMPARE(background(view.leftEdit(), 0).style(), Qt::NoBrush);
        QVERIFY(background(view.leftEdit(), 1).style() != Qt::NoBrush);
        QVERIFY(background(view.rightEdit(), 1).style() != Qt::NoBrush);
        QVERIFY(background(view.leftEdit(), 1).color() != background(view.rightEdit(), 1).color());
        QVERIFY(background(view.rightEdit(), 4).style() != Qt::NoBrush);
        view.setMode(TextDiffView::Mode::kUnified);
        QCOMPARE(view.unifiedEdit()->toPlainText(), QStringLiteral("  a\n- b\n+ B\n  c\n  d\n+ e"));
        // Context folding.
        QString before, after;
        for (int i = 0; i < 40; ++i) before += QStringLiteral("line %1\n").arg(i);
        after = before;
        after.replace(QStringLiteral("line 20\n"), QStringLiteral("line twenty\n"));
        view.setContextLines(2);
        view.setTexts(before, after);
        const QStringList lines = view.unifiedEdit()->toPlainText().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 8);  // fold, 2 context, -, +, 2 context, fold
        QCOMPARE(lines[0], QStringLiteral("… 18 unchanged lines"));
        QCOMPARE(lines[3], QStringLiteral("- line 20"));
        QCOMPARE(lines[7], QStringLiteral("… 17 unchanged lines"));
    }

    void diffRunsInBackgroundWhenShown() {
        TextDiffView view;
        view.resize(600, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* after = view.findChild<QPlainTextEdit*>(QStringLiteral("diffAfter"));
        QVERIFY(after);
        view.setTexts(QStringLiteral("a\nb\n"), QStringLiteral("a\nc\n"));
        HLOSCOPE_TRY_COMPARE(after->toPlainText(), QStringLiteral("a\nc"));
        // Texts replaced while a diff runs: the last ones win.
        view.setTexts(QStringLiteral("x\n"), QStringLiteral("y\n"));
        view.setTexts(QStringLiteral("p\n"), QStringLiteral("q\n"));
        HLOSCOPE_TRY_COMPARE(after->toPlainText(), QStringLiteral("q"));
        HLOSCOPE_TRY_VERIFY(view.findChild<QLabel*>()->text().contains(QStringLiteral("+1 −1")));
    }

    void diffViewFollowsStates() {
        DocumentWorker worker;
        TextDiffView view;
        connect(&worker, &DocumentWorker::stateChanged, &view, &TextDiffView::setState);
        worker.openExample(QStringLiteral("mlp"));
        QCOMPARE(view.addedCount(), 0);
        QCOMPARE(view.removedCount(), 0);
        const int passes = static_cast<int>(worker.state()->passes.size());
        int changedPasses = 0;
        for (int i = 1; i <= passes; ++i) {
            worker.stepTo(i);
            const PassSnapshot& s = *worker.state()->currentSnapshot();
            QCOMPARE(view.addedCount() + view.removedCount() > 0, *s.text != *(*worker.state()->snapshots)[static_cast<size_t>(i - 1)].text);
            changedPasses += view.addedCount() > 0;
        }
        QVERIFY(changedPasses > 0);
    }

    void selectionScrollsToLine() {
        HloTextView view;
        view.resize(400, 120);
        view.setModuleText(QString::fromUtf8(kModule));
        QCOMPARE(view.lineOf(QStringLiteral("sine.3")), 11);
        QCOMPARE(view.lineOf(QStringLiteral("%r")), 12);
        QCOMPARE(view.lineOf(QStringLiteral("x")), 4);
        QCOMPARE(view.lineOf(QStringLiteral("add.1")), 3);  // computations too
        QCOMPARE(view.lineOf(QStringLiteral("nope")), -1);
        view.selectInstruction(QStringLiteral("sine.3"));
        QCOMPARE(view.textCursor().blockNumber(), 11);
        QCOMPARE(view.extraSelections().size(), 1);
        QCOMPARE(view.extraSelections()[0].cursor.blockNumber(), 11);
        QCOMPARE(view.selectedInstruction(), QStringLiteral("sine.3"));
        view.selectInstruction(QStringLiteral("nope"));
        QVERIFY(view.extraSelections().isEmpty());
    }

    void clickOnNameEmitsSelection() {
        QCOMPARE(HloTextView::nameAt(QStringLiteral("  ROOT %r = f32[4]{0} multiply(%sine.3, %p)"), 33),
                 QStringLiteral("sine.3"));
        QCOMPARE(HloTextView::nameAt(QStringLiteral("  ROOT %r = f32[4]{0} multiply(%sine.3, %p)"), 15),
                 QString());
        HloTextView view;
        view.resize(700, 400);
        view.setModuleText(QString::fromUtf8(kModule));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy selected(&view, &HloTextView::instructionSelected);
        // Click on "%sine.3" in the ROOT line.
        QTextCursor cursor(view.document()->findBlockByNumber(12));
        cursor.setPosition(cursor.block().position() + cursor.block().text().indexOf(QLatin1String("%sine")) + 2);
        const QPoint point = view.cursorRect(cursor).center();
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, point);
        QCOMPARE(selected.size(), 1);
        QCOMPARE(selected[0][0].toString(), QStringLiteral("sine.3"));
        QCOMPARE(view.textCursor().blockNumber(), 11);
    }

    void textViewFollowsStates() {
        DocumentWorker worker;
        HloTextView view;
        connect(&worker, &DocumentWorker::stateChanged, &view, &HloTextView::setState);
        worker.openExample(QStringLiteral("sin_plus_exp"));
        QCOMPARE(view.toPlainText().toStdString(), *worker.state()->currentSnapshot()->text);
        const std::string name = worker.state()->module->entryComputation()->root()->name();
        view.selectInstruction(QString::fromStdString(name));
        QVERIFY(view.textCursor().block().text().contains(QString::fromStdString(name)));
    }

    // A text view on a tab that is not shown loads the text (and the selection made
    // meanwhile) when its tab is shown.
    void hiddenTabLoadsTextWhenShown() {
        DocumentWorker worker;
        QTabWidget tabs;
        tabs.addTab(new QWidget, QStringLiteral("Graph"));
        auto* view = new HloTextView;
        tabs.addTab(view, QStringLiteral("Text"));
        connect(&worker, &DocumentWorker::stateChanged, view, &HloTextView::setState);
        tabs.resize(700, 400);
        tabs.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tabs));
        worker.openExample(QStringLiteral("sin_plus_exp"));
        QVERIFY(view->toPlainText().isEmpty());
        const std::string name = worker.state()->module->entryComputation()->root()->name();
        view->selectInstruction(QString::fromStdString(name));
        tabs.setCurrentWidget(view);
        QCOMPARE(view->toPlainText().toStdString(), *worker.state()->currentSnapshot()->text);
        QVERIFY(view->textCursor().block().text().contains(QString::fromStdString(name)));
        QCOMPARE(view->extraSelections().size(), 1);
    }
};

QTEST_MAIN(TestTextViews)
#include "tst_text_views.moc"
