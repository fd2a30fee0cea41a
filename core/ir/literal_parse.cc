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
//
// This file holds the lexer, shapes, layouts, tuples and the entry points;
// dense array values and their elements are in literal_parse_elements.cc.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/ir/literal.h"
#include "core/ir/literal_internal.h"
#include "core/ir/literal_parse_internal.h"

namespace hloscope {
namespace literal_parse_internal {
namespace {

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

}  // namespace

Token Lexer::peek() {
    size_t saved = m_pos;
    Token token = next();
    m_pos = saved;
    return token;
}

Token Lexer::next() {
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

size_t Lexer::skipToNonSpace() {
    skipSpaceAndComments();
    return m_pos;
}

void Lexer::skipSpaceAndComments() {
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

std::string describe(const Token& token) {
    if (token.kind == Tok::kEnd) return "end of input";
    return "'" + std::string(token.text) + "'";
}

StatusOr<Literal> LiteralParser::parseWithShape() {
    StatusOr<Literal> literal = parseShapedLiteral(0);
    if (!literal.isOk()) return literal.status();
    HLO_RETURN_IF_ERROR(expectEnd());
    return literal;
}

StatusOr<Literal> LiteralParser::parseValueOnly(const Shape& shape) {
    StatusOr<Literal> literal = parseValue(shape, 0);
    if (!literal.isOk()) return literal.status();
    HLO_RETURN_IF_ERROR(expectEnd());
    return literal;
}

StatusOr<Shape> LiteralParser::parseShapeOnly() {
    StatusOr<Shape> shape = parseShape(/*inTuple=*/true, 0);
    if (!shape.isOk()) return shape.status();
    HLO_RETURN_IF_ERROR(expectEnd());
    return shape;
}

Status LiteralParser::error(size_t pos, std::string message) const {
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

Status LiteralParser::expect(Tok kind, std::string_view what) {
    Token token = m_lexer.next();
    if (token.kind != kind) {
        return error(token.pos, "expected " + std::string(what) + ", got " + describe(token));
    }
    return Status::ok();
}

Status LiteralParser::expectEnd() {
    Token token = m_lexer.next();
    if (token.kind != Tok::kEnd) {
        return error(token.pos, "expected end of literal, got " + describe(token));
    }
    return Status::ok();
}

StatusOr<Literal> LiteralParser::parseShapedLiteral(int depth) {
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

StatusOr<int64_t> LiteralParser::parseNonNegativeInt(std::string_view what) {
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

bool LiteralParser::braceIsLayout(bool inTuple, size_t rank) {
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

StatusOr<Shape> LiteralParser::parseShape(bool inTuple, int depth) {
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

StatusOr<Layout> LiteralParser::parseLayout(int64_t rank) {
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

StatusOr<Literal> LiteralParser::parseValue(const Shape& shape, int depth) {
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

Status LiteralParser::skipElementShapePrefix(const Shape& expected) {
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

StatusOr<Literal> LiteralParser::parseTuple(const Shape& shape, int depth) {
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

}  // namespace literal_parse_internal

using literal_parse_internal::LiteralParser;

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
