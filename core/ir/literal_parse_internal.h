// Internal to the literal text parser (literal_parse.cc: lexer, shapes,
// layouts, tuples and the entry points; literal_parse_elements.cc: dense
// array values and their elements). Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope::literal_parse_internal {

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

class Lexer {
public:
    explicit Lexer(std::string_view text) : m_text(text) {}

    size_t position() const { return m_pos; }
    void reset(size_t pos) { m_pos = pos; }
    std::string_view text() const { return m_text; }

    Token peek();
    Token next();
    // Raw scan helpers for layouts: position of the next non-space, non-comment char.
    size_t skipToNonSpace();

private:
    void skipSpaceAndComments();

    std::string_view m_text;
    size_t m_pos = 0;
};

// "'text'", or "end of input".
std::string describe(const Token& token);

class LiteralParser {
public:
    explicit LiteralParser(std::string_view text) : m_lexer(text) {}

    StatusOr<Literal> parseWithShape();
    StatusOr<Literal> parseValueOnly(const Shape& shape);
    StatusOr<Shape> parseShapeOnly();

private:
    static constexpr int kMaxDepth = 256;

    // kInvalidArgument with the line and column of `pos`.
    Status error(size_t pos, std::string message) const;
    Status expect(Tok kind, std::string_view what);
    Status expectEnd();

    // Shapes, layouts and tuples (literal_parse.cc).
    // "shape value", or XLA's shapeless tuple form "( shape value, ... )".
    StatusOr<Literal> parseShapedLiteral(int depth);
    StatusOr<int64_t> parseNonNegativeInt(std::string_view what);
    // Decides whether a '{' right after an array shape's dimensions opens a
    // layout (true) or the value (false). Inside a tuple shape it is always a
    // layout. Otherwise it is one when it reads as a layout ("{1,0}",
    // "{0:T(128)}", "{}") and a value follows it; "f32[1] {0}" is a value.
    bool braceIsLayout(bool inTuple, size_t rank);
    StatusOr<Shape> parseShape(bool inTuple, int depth);
    // '{' minor_to_major [':' attributes] '}'; attributes are skipped.
    StatusOr<Layout> parseLayout(int64_t rank);
    StatusOr<Literal> parseValue(const Shape& shape, int depth);
    // A tuple element may carry its own shape prefix ("f32[2] {1, 2}").
    Status skipElementShapePrefix(const Shape& expected);
    StatusOr<Literal> parseTuple(const Shape& shape, int depth);

    // Dense arrays and elements (literal_parse_elements.cc).
    static std::string indexString(const std::vector<int64_t>& seen, size_t dim);
    // XLA's dense-literal state machine: nesting is checked against the
    // shape; commas are separators.
    StatusOr<Literal> parseDense(const Shape& shape);
    Status outOfRange(const Token& token, PrimitiveType type, const std::string& range) const;
    // Parses one element token (the '(' of a complex pair has been consumed).
    Status parseElement(Literal& literal, int64_t index, const Token& token);
    static bool isIntegerText(std::string_view text);
    static bool parseInteger(std::string_view text, bool& negative, uint64_t& magnitude);
    // Stores a floating-point token as native type `type` at `dst`.
    Status parseFloating(PrimitiveType type, const Token& token, uint8_t* dst);
    static void storeNarrowBits(PrimitiveType type, uint32_t bits, uint8_t* dst);
    Status storeNaN(PrimitiveType type, const Token& token, bool negative, bool hasPayload,
                    uint64_t payload, uint8_t* dst);

    Lexer m_lexer;
};

}  // namespace hloscope::literal_parse_internal
