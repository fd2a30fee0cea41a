// Lexer for HLO text. A single forward pass over a std::string_view: tokens
// are views into the text (no allocation), positions are byte offsets that
// are turned into line:column only when an error is reported.
//
// Trivia skipped between tokens: whitespace, `/* ... */` (including
// `/*index=N*/`), `// ...` to the end of the line, and `#` lines (FileCheck
// comments: a `#` that is the first non-blank character of its line).
//
// The parser also works directly on characters for the small sub-grammars
// (shapes, layouts, windows, padding, dim labels): it asks for the position
// after trivia, scans, and resets the lexer to where it stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hloscope {

enum class TokenKind : uint8_t {
    kEof,
    kError,        // a character that starts no token, or an unterminated string/comment
    kIdentifier,   // [A-Za-z_][A-Za-z0-9_.-]*
    kPercentName,  // %name (text excludes the '%')
    kInt,          // -?[0-9]+
    kDecimal,      // -?digits with '.' and/or exponent, -inf, -nan
    kString,       // "..." or '...' (text includes the quotes, escapes not processed)
    kEqual,
    kComma,
    kColon,
    kLparen,
    kRparen,
    kLbrace,
    kRbrace,
    kLsquare,
    kRsquare,
    kArrow,      // ->
    kLeq,        // <=
    kAsterisk,   // *
    kQuestion,   // ?
    kOctothorp,  // # (not at the start of a line)
    kPlus,
    kTilde,
    kDots,  // ...
};

struct Token {
    TokenKind kind = TokenKind::kEof;
    size_t offset = 0;      // byte offset of the first character (the '%' of a %name)
    std::string_view text;  // the token's characters (a %name's text excludes '%')
};

// A short human description of a token for "expected X, got Y" messages:
// "','", "identifier 'foo'", "end of input", ...
std::string describeToken(const Token& token);

class HloLexer {
public:
    // Lexes text[begin, end).
    explicit HloLexer(std::string_view text, size_t begin = 0, size_t end = std::string_view::npos);

    std::string_view text() const { return m_text; }
    size_t end() const { return m_end; }

    // The current token (lexed on demand; stays until next()).
    const Token& peek() {
        if (!m_hasToken) lexToken();
        return m_token;
    }
    TokenKind peekKind() { return peek().kind; }
    // Returns the current token and moves past it.
    Token next() {
        if (!m_hasToken) lexToken();
        m_hasToken = false;
        m_pos = m_tokenEnd;
        return m_token;
    }
    // Consumes the current token if it has kind `kind`.
    bool consumeIf(TokenKind kind) {
        if (peek().kind != kind) return false;
        next();
        return true;
    }

    // Character-level access. cursor() skips trivia and returns the offset of
    // the next character (any buffered token is dropped and re-lexed later).
    size_t cursor();
    // Continues lexing at `offset` (used after character-level scanning).
    void resetTo(size_t offset) {
        m_pos = offset;
        m_hasToken = false;
    }
    // Offset just past the last consumed token (or the reset position).
    size_t position() const { return m_pos; }
    char charAt(size_t offset) const { return offset < m_end ? m_text[offset] : '\0'; }

    // Skips trivia starting at `offset`; returns the offset of the first
    // non-trivia character (m_end at end). On an unterminated `/*` returns
    // the comment's offset and sets *unterminated.
    size_t skipTrivia(size_t offset, bool* unterminated = nullptr) const;

    // Offset of an unterminated comment seen by the last lex, or npos.
    size_t unterminatedComment() const { return m_unterminatedComment; }

private:
    void lexToken();
    void lexNumericToken(size_t pos);  // a number, -inf or -nan at pos
    void lexPunctuation(size_t pos);   // any other token at pos
    size_t lexNumber(size_t start) const;  // returns end offset, or start on failure
    size_t lexString(size_t start) const;  // returns end offset, or npos when unterminated

    std::string_view m_text;
    size_t m_end;
    size_t m_pos;
    size_t m_tokenEnd = 0;
    size_t m_unterminatedComment = std::string_view::npos;
    bool m_hasToken = false;
    Token m_token;
};

namespace hlo_lexer_util {

// Character classes: bit 1 identifier start [A-Za-z_], bit 2 identifier
// character [A-Za-z0-9_.-].
struct CharClasses {
    uint8_t table[256] = {};
    constexpr CharClasses() {
        for (int c = 0; c < 256; ++c) {
            bool start = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
            bool part = start || (c >= '0' && c <= '9') || c == '.' || c == '-';
            table[c] = static_cast<uint8_t>((start ? 1 : 0) | (part ? 2 : 0));
        }
    }
};
inline constexpr CharClasses kCharClasses{};

inline bool isIdentifierStart(char c) {
    return kCharClasses.table[static_cast<unsigned char>(c)] & 1;
}
inline bool isIdentifierChar(char c) {
    return kCharClasses.table[static_cast<unsigned char>(c)] & 2;
}
inline bool isDigit(char c) { return c >= '0' && c <= '9'; }
inline bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Parses -?[0-9]+ (the whole of `text`) into an int64; false on overflow or
// malformed text.
bool parseInt64(std::string_view text, int64_t* out);
// Parses an optional '-' and digits: the magnitude as uint64 (false when it
// exceeds 2^64-1).
bool parseIntMagnitude(std::string_view text, bool* negative, uint64_t* magnitude);
// Parses a decimal/int token (or inf/-inf/nan/-nan) into a double. Returns
// false for a value out of the range of double (overflow; underflow gives 0).
bool parseDouble(std::string_view text, double* out);

// Unescapes the body of a quoted string token (C escapes as absl::CUnescape:
// \n \t \r \\ \" \' \? \a \b \f \v, octal \NNN, hex \xHH). The token's text
// includes the quotes. Returns false on a malformed escape.
bool unescapeString(std::string_view quoted, std::string* out);

// 1-based line and column of `offset` in `text`.
void lineAndColumn(std::string_view text, size_t offset, int* line, int* column);

}  // namespace hlo_lexer_util

}  // namespace hloscope
