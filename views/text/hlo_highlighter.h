// HloHighlighter: syntax colours for HLO text (and, where the tokens agree,
// StableHLO): opcodes, shapes/types, %names, attributes (key=), comments
// (// and /* */ on one line) and strings. Colours follow the palette's
// lightness so dark themes stay readable.
#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace hloscope {

class HloHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    enum class Token { kOpcode, kShape, kName, kAttribute, kComment, kString, kKeyword };

    explicit HloHighlighter(QTextDocument* document);

    QTextCharFormat format(Token token) const;
    // Chooses colours for a dark or a light background.
    void setDark(bool dark);

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        Token token;
        int group;  // capture group to colour
    };
    std::vector<Rule> m_rules;
    QTextCharFormat m_formats[7];
};

}  // namespace hloscope
