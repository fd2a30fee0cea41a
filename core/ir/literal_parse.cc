// Literal text parsing (Literal::parse, Literal::parseValue) in XLA's syntax.
//
// Accepts what XLA's HLO parser accepts inside constant(...): nested braces
// checked against the shape, "{...}" for elided values (they read as zeros),
// /*comments*/, nan / -nan / nan(0x..) / inf / -inf, true / false (and
// integers for pred), integers up to 2^64-1 for u64, exponents, complex pairs
// "(re, im)" and tuples. A bare scalar for a non-scalar shape
// ("f32[4096,4096] constant(0)", which XLA's parser lets through) fills every
// element. Values out of the element type's range are errors, as in XLA.
// Errors are kInvalidArgument with the line and column in the text.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/ir/literal.h"
#include "core/ir/literal_internal.h"

namespace hloscope {
namespace {

// ---------------------------------------------------------------------------
// Lexing.

enum class Tok {
    kLbrace,
    kRbrace,
    kLparen,
    kRparen,
    kLsquare,
    kRsquare,
    kComma,
    kColon,
    kDots,
    kLeq,
    kQuestion,
    kNumber,
    kIdent,
    kEnd,
    kError
};

struct Token {
    Tok kind = Tok::kEnd;
    size_t pos = 0;
    std::string_view text;
};

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

class Lexer {
public:
    explicit Lexer(std::string_view text) : m_text(text) {}

    size_t position() const { return m_pos; }
    void reset(size_t pos) { m_pos = pos; }
    std::string_view text() const { return m_text; }

    Token peek() {
        size_t saved = m_pos;
        Token token = next();
        m_pos = saved;
        return token;
    }

    Token next() {
        skipSpaceAndComments();
        Token token;
        token.pos = m_pos;
        if (m_pos >= m_text.size()) return token;
        const char c = m_text[m_pos];
        auto single = [&](Tok kind) {
            token.kind = kind;
            token.text = m_text.substr(m_pos, 1);
            ++m_pos;
            return token;
        };
        switch (c) {
            case '{':
                return single(Tok::kLbrace);
            case '}':
                return single(Tok::kRbrace);
            case '(':
                return single(Tok::kLparen);
            case ')':
                return single(Tok::kRparen);
            case '[':
                return single(Tok::kLsquare);
            case ']':
                return single(Tok::kRsquare);
            case ',':
                return single(Tok::kComma);
            case ':':
                return single(Tok::kColon);
            case '?':
                return single(Tok::kQuestion);
            default:
                break;
        }
        if (c == '<' && m_text.substr(m_pos, 2) == "<=") {
            token.kind = Tok::kLeq;
            token.text = m_text.substr(m_pos, 2);
            m_pos += 2;
            return token;
        }
        if (m_text.substr(m_pos, 3) == "...") {
            token.kind = Tok::kDots;
            token.text = m_text.substr(m_pos, 3);
            m_pos += 3;
            return token;
        }
        size_t start = m_pos;
        size_t p = m_pos;
        if (c == '-' || c == '+') ++p;
        if (p < m_text.size() && isIdentStart(m_text[p])) {
            // Identifier, possibly signed (-inf, -nan), with a NaN payload.
            while (p < m_text.size() && isIdentChar(m_text[p])) ++p;
            std::string_view word = m_text.substr(start, p - start);
            if ((word == "nan" || word == "-nan" || word == "+nan") &&
                m_text.substr(p, 3) == "(0x") {
                size_t close = m_text.find(')', p);
                if (close != std::string_view::npos) p = close + 1;
            }
            token.kind = Tok::kIdent;
            token.text = m_text.substr(start, p - start);
            m_pos = p;
            return token;
        }
        // Number: [+-]? (digits ('.' digits?)? | '.' digits) ([eE] [+-]? digits)?
        size_t digitsStart = p;
        while (p < m_text.size() && isDigit(m_text[p])) ++p;
        bool sawDigits = p > digitsStart;
        if (p < m_text.size() && m_text[p] == '.') {
            size_t fractionStart = ++p;
            while (p < m_text.size() && isDigit(m_text[p])) ++p;
            sawDigits = sawDigits || p > fractionStart;
        }
        if (sawDigits && p < m_text.size() && (m_text[p] == 'e' || m_text[p] == 'E')) {
            size_t q = p + 1;
            if (q < m_text.size() && (m_text[q] == '+' || m_text[q] == '-')) ++q;
            if (q < m_text.size() && isDigit(m_text[q])) {
                while (q < m_text.size() && isDigit(m_text[q])) ++q;
                p = q;
            }
        }
        if (!sawDigits) {
            token.kind = Tok::kError;
            token.text = m_text.substr(start, 1);
            m_pos = start + 1;
            return token;
        }
        // A number glued to letters ("12abc") is malformed.
        token.kind = p < m_text.size() && isIdentChar(m_text[p]) ? Tok::kError : Tok::kNumber;
        token.text = m_text.substr(start, p - start);
        m_pos = p;
        return token;
    }

    // Raw scan helpers for layouts: position of the next non-space, non-comment char.
    size_t skipToNonSpace() {
        skipSpaceAndComments();
        return m_pos;
    }

private:
    void skipSpaceAndComments() {
        while (m_pos < m_text.size()) {
            char c = m_text[m_pos];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                ++m_pos;
            } else if (m_text.substr(m_pos, 2) == "/*") {
                size_t end = m_text.find("*/", m_pos + 2);
                m_pos = end == std::string_view::npos ? m_text.size() : end + 2;
            } else if (m_text.substr(m_pos, 2) == "//") {
                size_t end = m_text.find('\n', m_pos);
                m_pos = end == std::string_view::npos ? m_text.size() : end + 1;
            } else {
                break;
            }
        }
    }

    std::string_view m_text;
    size_t m_pos = 0;
};

std::string describe(const Token& token) {
    if (token.kind == Tok::kEnd) return "end of input";
    return "'" + std::string(token.text) + "'";
}

bool isFloatType(PrimitiveType type) { return primitive_util::isFloatingPoint(type); }

// ---------------------------------------------------------------------------
// Parsing.

class LiteralParser {
public:
    explicit LiteralParser(std::string_view text) : m_lexer(text) {}

    StatusOr<Literal> parseWithShape() {
        StatusOr<Literal> literal = parseShapedLiteral(0);
        if (!literal.isOk()) return literal.status();
        HLO_RETURN_IF_ERROR(expectEnd());
        return literal;
    }

    StatusOr<Literal> parseValueOnly(const Shape& shape) {
        StatusOr<Literal> literal = parseValue(shape, 0);
        if (!literal.isOk()) return literal.status();
        HLO_RETURN_IF_ERROR(expectEnd());
        return literal;
    }

    StatusOr<Shape> parseShapeOnly() {
        StatusOr<Shape> shape = parseShape(/*inTuple=*/true, 0);
        if (!shape.isOk()) return shape.status();
        HLO_RETURN_IF_ERROR(expectEnd());
        return shape;
    }

private:
    static constexpr int kMaxDepth = 256;

    Status error(size_t pos, std::string message) const {
        int line = 1;
        int column = 1;
        std::string_view text = m_lexer.text();
        for (size_t i = 0; i < pos && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        return Status(StatusCode::kInvalidArgument, std::move(message),
                      SourceLocation{"", line, column});
    }

    Status expect(Tok kind, std::string_view what) {
        Token token = m_lexer.next();
        if (token.kind != kind) {
            return error(token.pos, "expected " + std::string(what) + ", got " + describe(token));
        }
        return Status::ok();
    }

    Status expectEnd() {
        Token token = m_lexer.next();
        if (token.kind != Tok::kEnd) {
            return error(token.pos, "expected end of literal, got " + describe(token));
        }
        return Status::ok();
    }

    // "shape value", or XLA's shapeless tuple form "( shape value, ... )".
    StatusOr<Literal> parseShapedLiteral(int depth) {
        if (depth > kMaxDepth) return error(m_lexer.position(), "literal nested too deeply");
        const size_t start = m_lexer.position();
        Token first = m_lexer.peek();
        StatusOr<Shape> shape = parseShape(/*inTuple=*/false, depth);
        if (shape.isOk()) return parseValue(*shape, depth);
        if (first.kind != Tok::kLparen) return shape.status();
        // Not a tuple shape: try "( f32[] 1, s32[2] {1, 2} )".
        const Status shapeError = shape.status();
        m_lexer.reset(start);
        m_lexer.next();  // '('
        std::vector<Literal> elements;
        if (m_lexer.peek().kind != Tok::kRparen) {
            while (true) {
                StatusOr<Literal> element = parseShapedLiteral(depth + 1);
                if (!element.isOk()) {
                    // Report whichever reading got further.
                    const auto& a = element.status().location();
                    const auto& b = shapeError.location();
                    bool shapeFurther =
                        a && b &&
                        (b->line > a->line || (b->line == a->line && b->column > a->column));
                    return shapeFurther ? shapeError : element.status();
                }
                elements.push_back(std::move(element).value());
                Token token = m_lexer.next();
                if (token.kind == Tok::kRparen) break;
                if (token.kind != Tok::kComma) {
                    return error(token.pos,
                                 "expected ',' or ')' in tuple literal, got " + describe(token));
                }
            }
        } else {
            m_lexer.next();
        }
        return Literal::makeTuple(std::move(elements));
    }

    StatusOr<int64_t> parseNonNegativeInt(std::string_view what) {
        Token token = m_lexer.next();
        int64_t value = -1;
        if (token.kind == Tok::kNumber) {
            auto r =
                std::from_chars(token.text.data(), token.text.data() + token.text.size(), value);
            if (r.ec != std::errc() || r.ptr != token.text.data() + token.text.size()) value = -1;
        }
        if (value < 0)
            return error(token.pos, "expected " + std::string(what) + ", got " + describe(token));
        return value;
    }

    // Decides whether a '{' right after an array shape's dimensions opens a
    // layout (true) or the value (false). Inside a tuple shape it is always a
    // layout. Otherwise it is one when it reads as a layout ("{1,0}",
    // "{0:T(128)}", "{}") and a value follows it; "f32[1] {0}" is a value.
    bool braceIsLayout(bool inTuple, size_t rank) {
        if (inTuple) return true;
        const size_t saved = m_lexer.position();
        m_lexer.next();  // '{'
        bool layout = false;
        size_t entries = 0;
        bool attributes = false;
        while (true) {
            Token t = m_lexer.next();
            if (t.kind == Tok::kNumber &&
                t.text.find_first_not_of("0123456789") == std::string_view::npos) {
                ++entries;
                Token sep = m_lexer.peek();
                if (sep.kind == Tok::kComma) {
                    m_lexer.next();
                    continue;
                }
                if (sep.kind == Tok::kRbrace || sep.kind == Tok::kColon) continue;
                break;
            }
            if (t.kind == Tok::kColon) {
                attributes = true;
                size_t close = m_lexer.text().find('}', m_lexer.position());
                if (close == std::string_view::npos) break;
                m_lexer.reset(close);
                continue;
            }
            if (t.kind == Tok::kRbrace) {
                Tok after = m_lexer.peek().kind;
                const bool valueFollows = after == Tok::kLbrace || after == Tok::kNumber ||
                                          after == Tok::kIdent || after == Tok::kLparen ||
                                          after == Tok::kDots;
                // A rank-1 value "{5}" looks like the layout "{0}": only a
                // one-entry list is taken as a rank-1 layout. Values of other
                // ranks never start with a number.
                layout = valueFollows && (attributes || rank != 1 || entries == 1);
            }
            break;
        }
        m_lexer.reset(saved);
        return layout;
    }

    StatusOr<Shape> parseShape(bool inTuple, int depth) {
        if (depth > kMaxDepth) return error(m_lexer.position(), "shape nested too deeply");
        Token token = m_lexer.next();
        if (token.kind == Tok::kLparen) {
            std::vector<Shape> elements;
            if (m_lexer.peek().kind == Tok::kRparen) {
                m_lexer.next();
                return Shape::makeTuple({});
            }
            while (true) {
                HLO_ASSIGN_OR_RETURN(Shape element, parseShape(/*inTuple=*/true, depth + 1));
                elements.push_back(std::move(element));
                Token sep = m_lexer.next();
                if (sep.kind == Tok::kRparen) break;
                if (sep.kind != Tok::kComma) {
                    return error(sep.pos,
                                 "expected ',' or ')' in tuple shape, got " + describe(sep));
                }
            }
            return Shape::makeTuple(std::move(elements));
        }
        if (token.kind != Tok::kIdent) {
            return error(token.pos, "expected a shape such as f32[2,3], got " + describe(token));
        }
        std::optional<PrimitiveType> type = primitive_util::parse(token.text);
        if (!type || *type == PrimitiveType::TUPLE ||
            (primitive_util::bitWidth(*type) == 0 && *type != PrimitiveType::TOKEN &&
             *type != PrimitiveType::OPAQUE_TYPE)) {
            return error(token.pos, "unknown element type '" + std::string(token.text) + "'");
        }
        HLO_RETURN_IF_ERROR(expect(Tok::kLsquare, "'[' after the element type"));
        std::vector<int64_t> dims;
        std::vector<bool> dynamic;
        if (m_lexer.peek().kind != Tok::kRsquare) {
            while (true) {
                Token t = m_lexer.peek();
                if (t.kind == Tok::kQuestion) {
                    m_lexer.next();
                    dims.push_back(Shape::kUnboundedSize);
                    dynamic.push_back(true);
                } else {
                    bool bounded = t.kind == Tok::kLeq;
                    if (bounded) m_lexer.next();
                    HLO_ASSIGN_OR_RETURN(int64_t dim, parseNonNegativeInt("a dimension size"));
                    dims.push_back(dim);
                    dynamic.push_back(bounded);
                }
                Token sep = m_lexer.next();
                if (sep.kind == Tok::kRsquare) break;
                if (sep.kind != Tok::kComma) {
                    return error(sep.pos,
                                 "expected ',' or ']' in dimensions, got " + describe(sep));
                }
            }
        } else {
            m_lexer.next();
        }
        if (*type == PrimitiveType::TOKEN) return Shape::makeToken();
        if (*type == PrimitiveType::OPAQUE_TYPE) return Shape::makeOpaque();
        Shape shape = Shape::makeArray(*type, dims);
        for (size_t i = 0; i < dynamic.size(); ++i) {
            if (dynamic[i]) shape.setDynamicDimension(static_cast<int64_t>(i), true);
        }
        if (m_lexer.peek().kind == Tok::kLbrace && braceIsLayout(inTuple, dims.size())) {
            HLO_ASSIGN_OR_RETURN(Layout layout, parseLayout(static_cast<int64_t>(dims.size())));
            shape.setLayout(std::move(layout));
        }
        return shape;
    }

    // '{' minor_to_major [':' attributes] '}'; attributes are skipped.
    StatusOr<Layout> parseLayout(int64_t rank) {
        Token open = m_lexer.next();  // '{'
        std::vector<int64_t> minorToMajor;
        Token t = m_lexer.peek();
        if (t.kind == Tok::kNumber) {
            while (true) {
                HLO_ASSIGN_OR_RETURN(int64_t dim, parseNonNegativeInt("a layout dimension"));
                minorToMajor.push_back(dim);
                if (m_lexer.peek().kind != Tok::kComma) break;
                m_lexer.next();
            }
        }
        Token sep = m_lexer.next();
        if (sep.kind == Tok::kColon) {
            size_t close = m_lexer.text().find('}', m_lexer.position());
            if (close == std::string_view::npos) return error(sep.pos, "unterminated layout");
            m_lexer.reset(close + 1);
        } else if (sep.kind != Tok::kRbrace) {
            return error(sep.pos, "expected ',', ':' or '}' in layout, got " + describe(sep));
        }
        if (static_cast<int64_t>(minorToMajor.size()) != rank) {
            return error(open.pos, "layout has " + std::to_string(minorToMajor.size()) +
                                       " dimensions but the shape has rank " +
                                       std::to_string(rank));
        }
        return Layout(std::move(minorToMajor));
    }

    StatusOr<Literal> parseValue(const Shape& shape, int depth) {
        if (depth > kMaxDepth) return error(m_lexer.position(), "literal nested too deeply");
        if (shape.isTuple()) return parseTuple(shape, depth);
        if (shape.isToken() || shape.isOpaque()) {
            Token token = m_lexer.next();
            std::string_view word = shape.isToken() ? "token" : "opaque";
            if (token.kind != Tok::kIdent || token.text != word) {
                return error(token.pos,
                             "expected '" + std::string(word) + "', got " + describe(token));
            }
            return Literal(shape);
        }
        if (!literal_internal::holdsElements(shape))
            return error(m_lexer.position(), "invalid shape for a literal");
        return parseDense(shape);
    }

    // A tuple element may carry its own shape prefix ("f32[2] {1, 2}").
    Status skipElementShapePrefix(const Shape& expected) {
        Token token = m_lexer.peek();
        if (token.kind != Tok::kIdent || !primitive_util::parse(token.text)) return Status::ok();
        const size_t after = token.pos + token.text.size();
        if (after >= m_lexer.text().size() || m_lexer.text()[after] != '[') return Status::ok();
        HLO_ASSIGN_OR_RETURN(Shape prefix, parseShape(/*inTuple=*/false, 0));
        if (prefix.elementType() != expected.elementType() ||
            prefix.dimensions() != expected.dimensions()) {
            return error(token.pos, "element shape " + prefix.toString(false) +
                                        " does not match the expected " + expected.toString(false));
        }
        return Status::ok();
    }

    StatusOr<Literal> parseTuple(const Shape& shape, int depth) {
        HLO_RETURN_IF_ERROR(expect(Tok::kLparen, "'(' to start a tuple literal"));
        const auto count = static_cast<size_t>(shape.tupleCount());
        std::vector<Literal> elements;
        elements.reserve(count);
        if (m_lexer.peek().kind == Tok::kRparen) {
            Token close = m_lexer.next();
            if (count != 0) {
                return error(close.pos,
                             "expected " + std::to_string(count) + " tuple elements, got 0");
            }
            return Literal::makeTuple({});
        }
        while (true) {
            if (elements.size() == count) {
                return error(m_lexer.peek().pos,
                             "too many tuple elements: the shape has " + std::to_string(count));
            }
            const Shape& elementShape = shape.tupleShape(static_cast<int64_t>(elements.size()));
            if (!elementShape.isTuple()) HLO_RETURN_IF_ERROR(skipElementShapePrefix(elementShape));
            HLO_ASSIGN_OR_RETURN(Literal element, parseValue(elementShape, depth + 1));
            elements.push_back(std::move(element));
            Token sep = m_lexer.next();
            if (sep.kind == Tok::kRparen) {
                if (elements.size() != count) {
                    return error(sep.pos, "expected " + std::to_string(count) +
                                              " tuple elements, got " +
                                              std::to_string(elements.size()));
                }
                break;
            }
            if (sep.kind != Tok::kComma) {
                return error(sep.pos, "expected ',' or ')' in tuple literal, got " + describe(sep));
            }
        }
        Literal literal = Literal::makeTuple(std::move(elements));
        return literal;
    }

    static std::string indexString(const std::vector<int64_t>& seen, size_t dim) {
        std::string out = "[";
        for (size_t i = 0; i < dim; ++i) {
            if (i > 0) out += ',';
            out += std::to_string(seen[i] - 1);
        }
        return out + "]";
    }

    // XLA's dense-literal state machine: nesting is checked against the
    // shape; commas are separators.
    StatusOr<Literal> parseDense(const Shape& shape) {
        if (Status size = literal_internal::checkLiteralSize(shape); !size.isOk()) {
            return error(m_lexer.peek().pos, size.message());
        }
        Literal literal(shape);
        const PrimitiveType type = shape.elementType();
        const auto rank = static_cast<size_t>(shape.rank());
        const int64_t count = literal.elementCount();
        Token first = m_lexer.peek();
        if (rank == 0 || first.kind == Tok::kNumber || first.kind == Tok::kIdent ||
            first.kind == Tok::kLparen) {
            // A scalar; for a non-scalar shape ("f32[4096,4096] constant(0)",
            // which XLA's parser lets through) it fills every element.
            Token token = m_lexer.next();
            if (count == 0) return error(token.pos, "a scalar value for a shape with no elements");
            HLO_RETURN_IF_ERROR(parseElement(literal, 0, token));
            if (count > 1) {
                auto* bytes = static_cast<uint8_t*>(literal.untypedData());
                const auto width = static_cast<size_t>(literal.sizeInBytes() / count);
                for (int64_t i = 1; i < count; ++i) {
                    std::memcpy(bytes + static_cast<size_t>(i) * width, bytes, width);
                }
            }
            return literal;
        }
        if (first.kind != Tok::kLbrace)
            return error(first.pos, "expected '{' to start an array value, but sees " +
                                        describe(first));
        std::vector<int64_t> dims(shape.dimensions());
        for (int64_t& d : dims) d = std::max<int64_t>(d, 0);  // unbounded: no elements
        std::vector<int64_t> seen(rank, 0);
        size_t nest = 0;
        int64_t linear = 0;
        const std::string rankText = std::to_string(rank);
        do {
            Token token = m_lexer.next();
            switch (token.kind) {
                case Tok::kLbrace:
                    ++nest;
                    if (nest > rank) {
                        return error(token.pos, "expected nested array of rank " + rankText +
                                                    ", but sees a deeper one");
                    }
                    if (nest > 1 && ++seen[nest - 2] > dims[nest - 2]) {
                        return error(token.pos, "expected " + std::to_string(dims[nest - 2]) +
                                                    " elements in the " +
                                                    indexString(seen, nest - 2) +
                                                    "th element, but sees more");
                    }
                    break;
                case Tok::kRbrace:
                    if (nest == 0) return error(token.pos, "unexpected '}'");
                    --nest;
                    if (seen[nest] != dims[nest]) {
                        return error(token.pos, "expected " + std::to_string(dims[nest]) +
                                                    " elements in the " + indexString(seen, nest) +
                                                    "th element, but sees " +
                                                    std::to_string(seen[nest]));
                    }
                    seen[nest] = 0;
                    break;
                case Tok::kComma:
                    break;
                case Tok::kDots:
                    if (nest != 1) {
                        return error(token.pos, "'...' is only allowed at nesting level 1, not " +
                                                    std::to_string(nest));
                    }
                    seen[0] = dims[0];  // elided values: left as zeros
                    break;
                case Tok::kNumber:
                case Tok::kIdent:
                case Tok::kLparen:
                    if (nest != rank) {
                        return error(token.pos, "expected nested array of rank " + rankText +
                                                    ", but sees a value at nesting level " +
                                                    std::to_string(nest));
                    }
                    if (++seen[rank - 1] > dims[rank - 1] || linear >= count) {
                        return error(token.pos,
                                     "expected " + std::to_string(dims[rank - 1]) +
                                         " elements on the minor-most dimension, but sees more");
                    }
                    HLO_RETURN_IF_ERROR(parseElement(literal, linear++, token));
                    break;
                case Tok::kEnd:
                    return error(token.pos, "unexpected end of literal: expected '}'");
                default:
                    return error(token.pos, "unexpected " + describe(token) + " in a " +
                                                std::string(primitive_util::name(type)) +
                                                " literal");
            }
        } while (nest > 0);
        return literal;
    }

    Status outOfRange(const Token& token, PrimitiveType type, const std::string& range) const {
        return error(token.pos, "value " + std::string(token.text) +
                                    " is out of range for literal's primitive type " +
                                    std::string(primitive_util::name(type)) + " namely " + range);
    }

    // Parses one element token (the '(' of a complex pair has been consumed).
    Status parseElement(Literal& literal, int64_t index, const Token& token) {
        const PrimitiveType type = literal.elementType();
        const std::string typeName(primitive_util::name(type));
        if (primitive_util::isComplex(type)) {
            if (token.kind != Tok::kLparen) {
                return error(token.pos, "expected a complex value (re, im) for " + typeName +
                                            ", got " + describe(token));
            }
            const PrimitiveType component = primitive_util::complexComponentType(type);
            auto* base = static_cast<uint8_t*>(literal.untypedData()) +
                         static_cast<size_t>(index) * (type == PrimitiveType::C64 ? 8 : 16);
            Token re = m_lexer.next();
            HLO_RETURN_IF_ERROR(parseFloating(component, re, base));
            HLO_RETURN_IF_ERROR(expect(Tok::kComma, "',' between the real and imaginary parts"));
            Token im = m_lexer.next();
            HLO_RETURN_IF_ERROR(
                parseFloating(component, im, base + (type == PrimitiveType::C64 ? 4 : 8)));
            return expect(Tok::kRparen, "')' after the imaginary part");
        }
        if (token.kind == Tok::kLparen) {
            return error(token.pos, "unexpected '(' in a " + typeName +
                                        " literal; parentheses are only valid for complex values");
        }
        if (type == PrimitiveType::PRED) {
            if (token.kind == Tok::kIdent && (token.text == "true" || token.text == "false")) {
                literal.setFromInt64(index, token.text == "true" ? 1 : 0);
                return Status::ok();
            }
            bool negative = false;
            uint64_t magnitude = 0;
            if (token.kind == Tok::kNumber && parseInteger(token.text, negative, magnitude)) {
                literal.setFromInt64(index, magnitude != 0 ? 1 : 0);
                return Status::ok();
            }
            return error(token.pos,
                         "expected true, false or an integer for pred, got " + describe(token));
        }
        if (primitive_util::isInteger(type)) {
            bool negative = false;
            uint64_t magnitude = 0;
            if (token.kind != Tok::kNumber || !isIntegerText(token.text)) {
                return error(token.pos, "expected an integer for primitive type " + typeName +
                                            ", got " + describe(token));
            }
            if (!parseInteger(token.text, negative, magnitude)) {
                return error(token.pos, "integer " + std::string(token.text) + " is too large");
            }
            const int bits = primitive_util::bitWidth(type);
            if (primitive_util::isSignedInteger(type)) {
                const uint64_t limit = uint64_t{1} << (bits - 1);  // |min|; max = limit - 1
                if (negative ? magnitude > limit : magnitude >= limit) {
                    return outOfRange(
                        token, type,
                        "[-" + std::to_string(limit) + ", " + std::to_string(limit - 1) + "].");
                }
                literal.setFromInt64(index, negative ? static_cast<int64_t>(0 - magnitude)
                                                     : static_cast<int64_t>(magnitude));
            } else {
                const uint64_t max =
                    bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
                if ((negative && magnitude != 0) || magnitude > max) {
                    return outOfRange(token, type, "[0, " + std::to_string(max) + "].");
                }
                literal.setFromInt64(index, static_cast<int64_t>(magnitude));
            }
            return Status::ok();
        }
        if (isFloatType(type)) {
            auto* base = static_cast<uint8_t*>(literal.untypedData());
            const int width = primitive_util::byteWidth(type);
            return parseFloating(type, token,
                                 base + static_cast<size_t>(index) * static_cast<size_t>(width));
        }
        return error(token.pos, "unsupported element type " + typeName);
    }

    static bool isIntegerText(std::string_view text) {
        return text.find_first_of(".eE") == std::string_view::npos;
    }

    static bool parseInteger(std::string_view text, bool& negative, uint64_t& magnitude) {
        negative = !text.empty() && text.front() == '-';
        if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
        if (!isIntegerText(text)) return false;
        auto r = std::from_chars(text.data(), text.data() + text.size(), magnitude);
        return r.ec == std::errc() && r.ptr == text.data() + text.size();
    }

    // Stores a floating-point token as native type `type` at `dst`.
    Status parseFloating(PrimitiveType type, const Token& token, uint8_t* dst) {
        const std::string typeName(primitive_util::name(type));
        double value = 0;
        bool isNaN = false;
        bool negative = false;
        uint64_t payload = 0;
        bool hasPayload = false;
        if (token.kind == Tok::kIdent) {
            std::string_view word = token.text;
            negative = word.front() == '-';
            if (word.front() == '-' || word.front() == '+') word.remove_prefix(1);
            if (word == "inf") {
                value = negative ? -std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::infinity();
            } else if (word == "nan" || (word.substr(0, 6) == "nan(0x" && word.back() == ')')) {
                isNaN = true;
                if (word.size() > 3) {
                    std::string_view hex = word.substr(6, word.size() - 7);  // nan(0x...)
                    auto r = std::from_chars(hex.data(), hex.data() + hex.size(), payload, 16);
                    if (r.ec != std::errc() || r.ptr != hex.data() + hex.size() || payload == 0) {
                        return error(token.pos, "invalid NaN payload in " + describe(token));
                    }
                    hasPayload = true;
                }
            } else {
                return error(token.pos, "expected a floating-point value for primitive type " +
                                            typeName + ", got " + describe(token));
            }
        } else if (token.kind == Tok::kNumber) {
            if (!literal_internal::parseDecimal(token.text, value)) {
                // from_chars reports both overflow and underflow as out of range.
                std::string_view text = token.text;
                size_t e = text.find_first_of("eE");
                bool underflow = e != std::string_view::npos
                                     ? text.substr(e + 1, 1) == "-"
                                     : text.find('.') != std::string_view::npos &&
                                           text.find_first_of("123456789") > text.find('.');
                if (!underflow) {
                    return error(token.pos, "value " + std::string(token.text) +
                                                " is out of range for literal's primitive type " +
                                                typeName);
                }
                value = text.front() == '-' ? -0.0 : 0.0;
            }
        } else {
            return error(token.pos, "expected a floating-point value for primitive type " +
                                        typeName + ", got " + describe(token));
        }

        if (isNaN) return storeNaN(type, token, negative, hasPayload, payload, dst);
        if (type == PrimitiveType::F64) {
            std::memcpy(dst, &value, sizeof(value));
            return Status::ok();
        }
        bool finiteResult = true;
        if (type == PrimitiveType::F32) {
            auto f = static_cast<float>(value);
            finiteResult = std::isfinite(f);
            std::memcpy(dst, &f, sizeof(f));
        } else {
            uint32_t bits = float_util::doubleToBits(type, value);
            finiteResult = std::isfinite(float_util::bitsToFloat(type, bits));
            storeNarrowBits(type, bits, dst);
        }
        if (std::isfinite(value) && !finiteResult) {
            return error(token.pos, "value " + std::string(token.text) +
                                        " is out of range for literal's primitive type " +
                                        typeName);
        }
        return Status::ok();
    }

    static void storeNarrowBits(PrimitiveType type, uint32_t bits, uint8_t* dst) {
        if (primitive_util::byteWidth(type) == 2) {
            auto b16 = static_cast<uint16_t>(bits);
            std::memcpy(dst, &b16, sizeof(b16));
        } else {
            *dst = static_cast<uint8_t>(bits);
        }
    }

    Status storeNaN(PrimitiveType type, const Token& token, bool negative, bool hasPayload,
                    uint64_t payload, uint8_t* dst) {
        const std::string typeName(primitive_util::name(type));
        if (!literal_internal::hasNanPayload(type)) {
            if (hasPayload) return error(token.pos, typeName + " does not support NaN payloads");
            // The format's own NaN (or, for the MX formats, ml_dtypes' mapping).
            const double nan = std::numeric_limits<double>::quiet_NaN();
            storeNarrowBits(type, float_util::doubleToBits(type, negative ? -nan : nan), dst);
            return Status::ok();
        }
        const int mantissaBits = primitive_util::mantissaBits(type);
        const uint64_t mantissaMask = (uint64_t{1} << mantissaBits) - 1;
        if (hasPayload && payload > mantissaMask) {
            return error(token.pos, "NaN payload " + std::string(token.text) +
                                        " is out of range for " + typeName);
        }
        if (!hasPayload) payload = uint64_t{1} << (mantissaBits - 1);  // quiet NaN
        if (type == PrimitiveType::F64) {
            uint64_t bits = (negative ? uint64_t{1} << 63 : 0) | (uint64_t{0x7FF} << 52) | payload;
            std::memcpy(dst, &bits, sizeof(bits));
        } else if (type == PrimitiveType::F32) {
            auto bits = static_cast<uint32_t>((negative ? 1u << 31 : 0u) | 0x7F800000u | payload);
            std::memcpy(dst, &bits, sizeof(bits));
        } else {
            const int total = primitive_util::bitWidth(type);
            const int exponentBits = primitive_util::exponentBits(type);
            uint64_t bits = (negative ? uint64_t{1} << (total - 1) : 0) |
                            (((uint64_t{1} << exponentBits) - 1) << mantissaBits) | payload;
            storeNarrowBits(type, static_cast<uint32_t>(bits), dst);
        }
        return Status::ok();
    }

    Lexer m_lexer;
};

}  // namespace

StatusOr<Shape> literal_internal::parseShapeText(std::string_view text) {
    return LiteralParser(text).parseShapeOnly();
}

StatusOr<Literal> Literal::parse(std::string_view text) {
    return LiteralParser(text).parseWithShape();
}

StatusOr<Literal> Literal::parseValue(std::string_view text, const Shape& shape) {
    return LiteralParser(text).parseValueOnly(shape);
}

}  // namespace hloscope
