#include "views/text/hlo_highlighter.h"

#include <QColor>
#include <QGuiApplication>
#include <QPalette>

namespace hloscope {

HloHighlighter::HloHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
    const QString types = QStringLiteral(
        "pred|s2|s4|s8|s16|s32|s64|u2|u4|u8|u16|u32|u64|f16|bf16|f32|f64|c64|c128|"
        "f8e4m3fn|f8e5m2|f8e4m3b11fnuz|f8e4m3fnuz|f8e5m2fnuz|f8e4m3|f8e3m4|token");
    // Later rules win where they overlap (applied in order).
    m_rules.push_back({QRegularExpression(QStringLiteral(R"(\b([a-z][a-z0-9_\-]*)(?=\())")),
                       Token::kOpcode, 1});
    m_rules.push_back({QRegularExpression(QStringLiteral(R"(\b([a-z_][a-z0-9_]*)=)")),
                       Token::kAttribute, 1});
    m_rules.push_back({QRegularExpression(QStringLiteral(R"(\b(?:)") + types +
                                          QStringLiteral(R"()\[[0-9,?<=]*\](?:\{[^}]*\})?)")),
                       Token::kShape, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral(R"(\b(?:)") + types +
                                          QStringLiteral(R"()\b(?!\[))")),
                       Token::kShape, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral(R"(tensor<[^>]*>)")), Token::kShape, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral(
                           R"(\b(HloModule|ENTRY|ROOT|func\.func|return|module)\b)")),
                       Token::kKeyword, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral(R"(%[A-Za-z0-9_.\-]+)")), Token::kName, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral(R"("(?:[^"\\]|\\.)*")")), Token::kString, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral(R"(/\*.*?\*/)")), Token::kComment, 0});
    m_rules.push_back({QRegularExpression(QStringLiteral(R"(//.*$)")), Token::kComment, 0});
    const QPalette palette = QGuiApplication::palette();
    setDark(palette.color(QPalette::Base).lightness() < 128);
}

void HloHighlighter::setDark(bool dark) {
    auto set = [&](Token token, QColor light, QColor darkColor, bool bold = false, bool italic = false) {
        QTextCharFormat f;
        f.setForeground(dark ? darkColor : light);
        if (bold) f.setFontWeight(QFont::Bold);
        f.setFontItalic(italic);
        m_formats[static_cast<int>(token)] = f;
    };
    set(Token::kOpcode, QColor(0x00, 0x4b, 0xa0), QColor(0x82, 0xaa, 0xff), true);
    set(Token::kShape, QColor(0x26, 0x7f, 0x4a), QColor(0x9c, 0xdc, 0x8c));
    set(Token::kName, QColor(0x80, 0x30, 0x90), QColor(0xe0, 0x9c, 0xf0));
    set(Token::kAttribute, QColor(0x8a, 0x5a, 0x00), QColor(0xf0, 0xc0, 0x70));
    set(Token::kComment, QColor(0x70, 0x70, 0x70), QColor(0x90, 0x90, 0x90), false, true);
    set(Token::kString, QColor(0xa3, 0x15, 0x15), QColor(0xf0, 0x90, 0x80));
    set(Token::kKeyword, QColor(0x00, 0x00, 0x00), QColor(0xff, 0xff, 0xff), true);
    rehighlight();
}

QTextCharFormat HloHighlighter::format(Token token) const {
    return m_formats[static_cast<int>(token)];
}

void HloHighlighter::highlightBlock(const QString& text) {
    for (const Rule& rule : m_rules) {
        QRegularExpressionMatchIterator it = rule.pattern.globalMatch(text);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            setFormat(static_cast<int>(m.capturedStart(rule.group)),
                      static_cast<int>(m.capturedLength(rule.group)),
                      m_formats[static_cast<int>(rule.token)]);
        }
    }
}

}  // namespace hloscope
