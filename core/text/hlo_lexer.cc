#include "core/text/hlo_lexer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace hloscope {

using namespace hlo_lexer_util;

std::string describeToken(const Token& token) {
    switch (token.kind) {
        case TokenKind::kEof:
            return "end of input";
        case TokenKind::kError:
            if (token.text.empty()) return "invalid character";
            return "invalid character '" + std::string(token.text.substr(0, 1)) + "'";
        case TokenKind::kIdentifier:
            return "'" + std::string(token.text) + "'";
        case TokenKind::kPercentName:
            return "'%" + std::string(token.text) + "'";
        case TokenKind::kInt:
        case TokenKind::kDecimal:
            return "number " + std::string(token.text);
        case TokenKind::kString: {
            std::string_view text = token.text;
            if (text.size() > 40) return "string " + std::string(text.substr(0, 37)) + "...";
            return "string " + std::string(text);
        }
        default:
            return "'" + std::string(token.text) + "'";
    }
}

HloLexer::HloLexer(std::string_view text, size_t begin, size_t end)
    : m_text(text), m_end(end > text.size() ? text.size() : end), m_pos(begin) {
    if (m_pos > m_end) m_pos = m_end;
}

size_t HloLexer::skipTrivia(size_t pos, bool* unterminated) const {
    const char* data = m_text.data();
    while (pos < m_end) {
        char c = data[pos];
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            ++pos;
            continue;
        }
        if (c == '/' && pos + 1 < m_end) {
            char d = data[pos + 1];
            if (d == '*') {
                size_t close = pos + 2;
                bool found = false;
                while (close + 1 < m_end) {
                    const void* star = std::memchr(data + close, '*', m_end - close - 1);
                    if (star == nullptr) break;
                    close = static_cast<size_t>(static_cast<const char*>(star) - data);
                    if (data[close + 1] == '/') {
                        found = true;
                        break;
                    }
                    ++close;
                }
                if (!found) {
                    if (unterminated) *unterminated = true;
                    return pos;
                }
                pos = close + 2;
                continue;
            }
            if (d == '/') {
                const void* newline = std::memchr(data + pos, '\n', m_end - pos);
                pos =
                    newline ? static_cast<size_t>(static_cast<const char*>(newline) - data) : m_end;
                continue;
            }
            return pos;
        }
        if (c == '#') {
            // A '#' comment line: only blanks before it on its line.
            size_t back = pos;
            while (back > 0 && (data[back - 1] == ' ' || data[back - 1] == '\t')) --back;
            if (back == 0 || data[back - 1] == '\n' || data[back - 1] == '\r') {
                const void* newline = std::memchr(data + pos, '\n', m_end - pos);
                pos =
                    newline ? static_cast<size_t>(static_cast<const char*>(newline) - data) : m_end;
                continue;
            }
            return pos;
        }
        return pos;
    }
    return m_end;
}

size_t HloLexer::cursor() {
    if (m_hasToken) return m_token.offset;
    bool unterminated = false;
    size_t pos = skipTrivia(m_pos, &unterminated);
    if (unterminated) m_unterminatedComment = pos;
    m_hasToken = false;
    m_pos = pos;
    return pos;
}

size_t HloLexer::lexNumber(size_t start) const {
    const char* data = m_text.data();
    size_t pos = start;
    if (pos < m_end && data[pos] == '-') ++pos;
    size_t digitsStart = pos;
    while (pos < m_end && isDigit(data[pos])) ++pos;
    bool intDigits = pos > digitsStart;
    bool fraction = false;
    if (pos < m_end && data[pos] == '.') {
        size_t afterDot = pos + 1;
        size_t fracEnd = afterDot;
        while (fracEnd < m_end && isDigit(data[fracEnd])) ++fracEnd;
        // "1." and "1.5" and ".5" are decimals; "." alone is not. A dot
        // followed by an identifier character other than a digit ends the
        // number (e.g. never happens in HLO, but keep names like 1.x out).
        if (intDigits || fracEnd > afterDot) {
            fraction = true;
            pos = fracEnd;
        }
    }
    if (!intDigits && !fraction) return start;
    if (pos < m_end && (data[pos] == 'e' || data[pos] == 'E')) {
        size_t exp = pos + 1;
        if (exp < m_end && (data[exp] == '+' || data[exp] == '-')) ++exp;
        size_t expDigits = exp;
        while (exp < m_end && isDigit(data[exp])) ++exp;
        if (exp > expDigits) pos = exp;
    }
    return pos;
}

size_t HloLexer::lexString(size_t start) const {
    const char* data = m_text.data();
    char quote = data[start];
    size_t pos = start + 1;
    while (pos < m_end) {
        char c = data[pos];
        if (c == quote) return pos + 1;
        if (c == '\\') {
            pos += 2;
            continue;
        }
        ++pos;
    }
    return std::string_view::npos;
}

void HloLexer::lexToken() {
    bool unterminated = false;
    size_t pos = m_pos;
    if (pos < m_end) {
        char first = m_text[pos];
        // Most tokens follow a single space or nothing at all.
        if (first == ' ' && pos + 1 < m_end) first = m_text[++pos];
        if (first == ' ' || first == '\n' || first == '\t' || first == '\r' || first == '/' ||
            first == '#')
            pos = skipTrivia(pos, &unterminated);
    }
    m_hasToken = true;
    m_token.offset = pos;
    if (unterminated) {
        m_unterminatedComment = pos;
        m_token.kind = TokenKind::kError;
        m_token.text = m_text.substr(pos, 2);
        m_tokenEnd = pos;
        return;
    }
    if (pos >= m_end) {
        m_token.kind = TokenKind::kEof;
        m_token.text = {};
        m_tokenEnd = m_end;
        return;
    }
    const char* data = m_text.data();
    char c = data[pos];
    if (isIdentifierStart(c)) {
        size_t end = pos + 1;
        while (end < m_end && isIdentifierChar(data[end])) ++end;
        m_token.kind = TokenKind::kIdentifier;
        m_token.text = m_text.substr(pos, end - pos);
        m_tokenEnd = end;
        return;
    }
    if (isDigit(c) || (c == '-' && pos + 1 < m_end && data[pos + 1] != '>')) {
        lexNumericToken(pos);
        return;
    }
    lexPunctuation(pos);
}

// A number, or -inf / -nan, at `pos`.
void HloLexer::lexNumericToken(size_t pos) {
    const char* data = m_text.data();
    const char c = data[pos];
    auto single = [&](TokenKind kind) {
        m_token.kind = kind;
        m_token.text = m_text.substr(pos, 1);
        m_tokenEnd = pos + 1;
    };
    if (c == '-') {
        // -inf, -nan
        std::string_view rest = m_text.substr(pos + 1, m_end - pos - 1);
        for (std::string_view word : {std::string_view("inf"), std::string_view("nan")}) {
            if (rest.substr(0, 3) == word && (rest.size() == 3 || !isIdentifierChar(rest[3]))) {
                m_token.kind = TokenKind::kDecimal;
                m_token.text = m_text.substr(pos, 4);
                m_tokenEnd = pos + 4;
                return;
            }
        }
    }
    size_t end = lexNumber(pos);
    if (end == pos) {
        single(TokenKind::kError);
        return;
    }
    std::string_view text = m_text.substr(pos, end - pos);
    bool decimal = text.find_first_of(".eE") != std::string_view::npos;
    m_token.kind = decimal ? TokenKind::kDecimal : TokenKind::kInt;
    m_token.text = text;
    m_tokenEnd = end;
}

// A flat dispatch over the first character (%names, strings and
// punctuation): one case per token, kept together as the token table.
void HloLexer::lexPunctuation(size_t pos) {
    const char* data = m_text.data();
    const char c = data[pos];
    auto single = [&](TokenKind kind) {
        m_token.kind = kind;
        m_token.text = m_text.substr(pos, 1);
        m_tokenEnd = pos + 1;
    };
    switch (c) {
        case '%': {
            size_t end = pos + 1;
            if (end < m_end && isIdentifierStart(data[end])) {
                ++end;
                while (end < m_end && isIdentifierChar(data[end])) ++end;
                m_token.kind = TokenKind::kPercentName;
                m_token.text = m_text.substr(pos + 1, end - pos - 1);
                m_tokenEnd = end;
                return;
            }
            single(TokenKind::kError);
            return;
        }
        case '"':
        case '\'': {
            size_t end = lexString(pos);
            if (end == std::string_view::npos) {
                m_token.kind = TokenKind::kError;
                m_token.text = m_text.substr(pos, 1);
                m_tokenEnd = pos;
                return;
            }
            m_token.kind = TokenKind::kString;
            m_token.text = m_text.substr(pos, end - pos);
            m_tokenEnd = end;
            return;
        }
        case '=':
            single(TokenKind::kEqual);
            return;
        case ',':
            single(TokenKind::kComma);
            return;
        case ':':
            single(TokenKind::kColon);
            return;
        case '(':
            single(TokenKind::kLparen);
            return;
        case ')':
            single(TokenKind::kRparen);
            return;
        case '{':
            single(TokenKind::kLbrace);
            return;
        case '}':
            single(TokenKind::kRbrace);
            return;
        case '[':
            single(TokenKind::kLsquare);
            return;
        case ']':
            single(TokenKind::kRsquare);
            return;
        case '*':
            single(TokenKind::kAsterisk);
            return;
        case '?':
            single(TokenKind::kQuestion);
            return;
        case '#':
            single(TokenKind::kOctothorp);
            return;
        case '+':
            single(TokenKind::kPlus);
            return;
        case '~':
            single(TokenKind::kTilde);
            return;
        case '-':
            if (pos + 1 < m_end && data[pos + 1] == '>') {
                m_token.kind = TokenKind::kArrow;
                m_token.text = m_text.substr(pos, 2);
                m_tokenEnd = pos + 2;
                return;
            }
            single(TokenKind::kError);
            return;
        case '<':
            if (pos + 1 < m_end && data[pos + 1] == '=') {
                m_token.kind = TokenKind::kLeq;
                m_token.text = m_text.substr(pos, 2);
                m_tokenEnd = pos + 2;
                return;
            }
            single(TokenKind::kError);
            return;
        case '.':
            if (pos + 2 < m_end && data[pos + 1] == '.' && data[pos + 2] == '.') {
                m_token.kind = TokenKind::kDots;
                m_token.text = m_text.substr(pos, 3);
                m_tokenEnd = pos + 3;
                return;
            }
            single(TokenKind::kError);
            return;
        default:
            single(TokenKind::kError);
            return;
    }
}

namespace hlo_lexer_util {

bool parseIntMagnitude(std::string_view text, bool* negative, uint64_t* magnitude) {
    size_t i = 0;
    *negative = false;
    if (!text.empty() && text[0] == '-') {
        *negative = true;
        i = 1;
    }
    if (i >= text.size()) return false;
    uint64_t value = 0;
    for (; i < text.size(); ++i) {
        char c = text[i];
        if (!isDigit(c)) return false;
        uint64_t digit = static_cast<uint64_t>(c - '0');
        if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
        value = value * 10 + digit;
    }
    *magnitude = value;
    return true;
}

bool parseInt64(std::string_view text, int64_t* out) {
    bool negative = false;
    uint64_t magnitude = 0;
    if (!parseIntMagnitude(text, &negative, &magnitude)) return false;
    if (negative) {
        if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1)
            return false;
        *out = magnitude == 0 ? 0 : static_cast<int64_t>(0 - magnitude);
        return true;
    }
    if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(magnitude);
    return true;
}

bool parseDouble(std::string_view text, double* out) {
    bool negative = !text.empty() && text[0] == '-';
    std::string_view body = negative ? text.substr(1) : text;
    if (body == "inf") {
        *out = negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
        return true;
    }
    if (body == "nan") {
        *out = negative ? -std::numeric_limits<double>::quiet_NaN()
                        : std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    double value = 0;
    auto result = std::from_chars(body.data(), body.data() + body.size(), value);
    if (result.ec == std::errc::result_out_of_range) {
        // Underflow rounds to zero; overflow is an error.
        size_t e = body.find_first_of("eE");
        bool negativeExponent =
            e != std::string_view::npos && e + 1 < body.size() && body[e + 1] == '-';
        if (!negativeExponent) return false;
        value = 0;
    } else if (result.ec != std::errc() || result.ptr != body.data() + body.size()) {
        return false;
    }
    *out = negative ? -value : value;
    return true;
}

bool unescapeString(std::string_view quoted, std::string* out) {
    out->clear();
    if (quoted.size() < 2) return false;
    std::string_view body = quoted.substr(1, quoted.size() - 2);
    if (body.find('\\') == std::string_view::npos) {
        out->assign(body);
        return true;
    }
    out->reserve(body.size());
    for (size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        if (c != '\\') {
            *out += c;
            continue;
        }
        if (++i >= body.size()) return false;
        char e = body[i];
        switch (e) {
            case 'n':
                *out += '\n';
                break;
            case 't':
                *out += '\t';
                break;
            case 'r':
                *out += '\r';
                break;
            case 'a':
                *out += '\a';
                break;
            case 'b':
                *out += '\b';
                break;
            case 'f':
                *out += '\f';
                break;
            case 'v':
                *out += '\v';
                break;
            case '\\':
                *out += '\\';
                break;
            case '"':
                *out += '"';
                break;
            case '\'':
                *out += '\'';
                break;
            case '?':
                *out += '?';
                break;
            case 'x': {
                unsigned value = 0;
                size_t digits = 0;
                while (i + 1 < body.size() && digits < 2) {
                    char h = body[i + 1];
                    unsigned d;
                    if (h >= '0' && h <= '9')
                        d = static_cast<unsigned>(h - '0');
                    else if (h >= 'a' && h <= 'f')
                        d = static_cast<unsigned>(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F')
                        d = static_cast<unsigned>(h - 'A' + 10);
                    else
                        break;
                    value = value * 16 + d;
                    ++digits;
                    ++i;
                }
                if (digits == 0) return false;
                *out += static_cast<char>(value);
                break;
            }
            default:
                if (e >= '0' && e <= '7') {
                    unsigned value = static_cast<unsigned>(e - '0');
                    size_t digits = 1;
                    while (i + 1 < body.size() && digits < 3 && body[i + 1] >= '0' &&
                           body[i + 1] <= '7') {
                        value = value * 8 + static_cast<unsigned>(body[i + 1] - '0');
                        ++digits;
                        ++i;
                    }
                    if (value > 255) return false;
                    *out += static_cast<char>(value);
                    break;
                }
                return false;
        }
    }
    return true;
}

void lineAndColumn(std::string_view text, size_t offset, int* line, int* column) {
    if (offset > text.size()) offset = text.size();
    int lineNumber = 1;
    size_t lineStart = 0;
    const char* data = text.data();
    size_t pos = 0;
    while (pos < offset) {
        const void* newline = std::memchr(data + pos, '\n', offset - pos);
        if (newline == nullptr) break;
        pos = static_cast<size_t>(static_cast<const char*>(newline) - data) + 1;
        ++lineNumber;
        lineStart = pos;
    }
    *line = lineNumber;
    *column = static_cast<int>(offset - lineStart) + 1;
}

}  // namespace hlo_lexer_util
}  // namespace hloscope
