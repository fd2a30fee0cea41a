// Shapes and layouts of the HLO text parser.
#include <algorithm>
#include <array>
#include <charconv>

#include "core/text/hlo_parser_internal.h"
#include "core/io/input_limits.h"

namespace hloscope::hlo_parser_internal {

using namespace hlo_lexer_util;

std::optional<PrimitiveType> primitiveTypeFromName(std::string_view name) {
    static const NameTable kTable = [] {
        NameTable table;
        // "tuple" and "buffer" are not written as element types.
#define HLO_PT_NAME(e, name, bits)                                                             \
    if (PrimitiveType::e != PrimitiveType::TUPLE && PrimitiveType::e != PrimitiveType::BUFFER) \
        table.insert(name, static_cast<uint32_t>(PrimitiveType::e));
        HLO_PRIMITIVE_TYPE_LIST(HLO_PT_NAME)
#undef HLO_PT_NAME
        return table;
    }();
    uint32_t value = kTable.find(name);
    if (value == kNone) return std::nullopt;
    return static_cast<PrimitiveType>(value);
}

bool shapesCompatible(const Shape& a, const Shape& b) {
    if (a.elementType() != b.elementType()) return false;
    if (a.isTuple() || a.isBuffer() || !a.isArray()) {
        if (a.tupleCount() != b.tupleCount()) return false;
        for (int64_t i = 0; i < a.tupleCount(); ++i)
            if (!shapesCompatible(a.tupleShape(i), b.tupleShape(i))) return false;
        return true;
    }
    return a.dimensions() == b.dimensions();
}

bool shapeLiteCompatible(const ShapeLite& lite, const Shape& shape) {
    if (lite.full) return shapesCompatible(lite.shape, shape);
    if (lite.elementType != shape.elementType()) return false;
    if (!shape.isArray()) return lite.rank == 0;
    if (lite.rank != shape.rank()) return false;
    for (int i = 0; i < lite.rank; ++i)
        if (lite.dimensions[i] != shape.dimensions(i)) return false;
    return true;
}

std::string shapeWithLayoutString(const Shape& shape) {
    Shape copy = shape;
    copy.setDefaultLayoutIfMissing();
    return copy.toString(true);
}

std::string upperTypeName(PrimitiveType type) {
    std::string name(primitive_util::name(type));
    for (char& c : name)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return name;
}

std::string formatDouble(double value) {
    char buffer[64];
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    return std::string(buffer, result.ptr);
}

void appendCollapsed(std::string& out, std::string_view text, bool insideBraces) {
    const size_t start = out.size();
    // Single quotes delimit strings only outside braces, as the attribute
    // scanners read them (inside braces, "'//'" starts a comment there too).
    int depth = insideBraces ? 1 : 0;
    bool pendingSpace = false;
    size_t i = 0;
    const size_t n = text.size();
    while (i < n) {
        char c = text[i];
        if (isSpace(c)) {
            pendingSpace = true;
            ++i;
            continue;
        }
        if (c == '/' && i + 1 < n && (text[i + 1] == '*' || text[i + 1] == '/')) {
            size_t end;
            if (text[i + 1] == '*') {
                end = text.find("*/", i + 2);
                end = end == std::string_view::npos ? n : end + 2;
            } else {
                end = text.find('\n', i);
                if (end == std::string_view::npos) end = n;
            }
            pendingSpace = true;
            i = end;
            continue;
        }
        if (pendingSpace) {
            if (out.size() > start) out += ' ';
            pendingSpace = false;
        }
        if (c == '"' || (c == '\'' && depth == 0)) {
            size_t j = i + 1;
            while (j < n && text[j] != c) j += text[j] == '\\' ? 2 : 1;
            if (j < n) {
                out.append(text.data() + i, j + 1 - i);
                i = j + 1;
                continue;
            }
        }
        // Copy a run of ordinary characters at once.
        size_t j = i + 1;
        while (j < n) {
            char d = text[j];
            if (isSpace(d) || d == '"' || d == '\'' || d == '/') break;
            ++j;
        }
        for (size_t k = i; k < j; ++k) depth += text[k] == '{' ? 1 : text[k] == '}' ? -1 : 0;
        out.append(text.data() + i, j - i);
        i = j;
    }
}

bool Parser::canBeShape() {
    const Token& token = m_lexer.peek();
    if (token.kind == TokenKind::kLparen) return true;
    if (token.kind != TokenKind::kIdentifier) return false;
    size_t after = m_lexer.skipTrivia(token.offset + token.text.size());
    char next = m_lexer.charAt(after);
    if (token.text == "b") return next == '(';
    if (next != '[') return false;
    auto type = primitiveTypeFromName(token.text);
    if (!type) return false;
    m_typeCacheOffset = token.offset;  // parsePrimitiveType reuses the lookup
    m_typeCache = *type;
    return true;
}

// An identifier directly followed by '[' that is no element type: reject it
// as a shape rather than reading it as a name or opcode.
Status Parser::checkNotAShape() {
    const Token& token = m_lexer.peek();
    if (token.kind != TokenKind::kIdentifier || token.text == "b") return Status::ok();
    if (m_lexer.charAt(m_lexer.skipTrivia(token.offset + token.text.size())) != '[')
        return Status::ok();
    return error(token.offset, "unknown primitive type '" + std::string(token.text) + "'");
}

Status Parser::parsePrimitiveType(PrimitiveType* out, size_t* offset) {
    Token token = m_lexer.next();
    *offset = token.offset;
    if (token.kind != TokenKind::kIdentifier) return expected("a shape", token);
    if (token.offset == m_typeCacheOffset) {
        *out = m_typeCache;
        return Status::ok();
    }
    auto type = primitiveTypeFromName(token.text);
    if (!type)
        return error(token.offset, "unknown primitive type '" + std::string(token.text) + "'");
    *out = *type;
    return Status::ok();
}

// '[' (dim (',' dim)*)? ']' with dim ::= int | '<=' int | '?'
Status Parser::parseDimensions(Shape* out) {
    size_t p = m_lexer.cursor();
    const size_t open = p;
    if (m_lexer.charAt(p) != '[')
        return error(p, "expected '[' to start the dimensions of a shape");
    p = m_lexer.skipTrivia(p + 1);
    // Collected in a small buffer first so that the shape's vector is
    // allocated once with the right size.
    SmallInts dims;
    SmallInts dynamicDims;
    if (m_lexer.charAt(p) == ']') {
        out->mutableDimensions().clear();
        m_lexer.resetTo(p + 1);
        return Status::ok();
    }
    const std::string_view text = m_text;
    while (true) {
        char c = m_lexer.charAt(p);
        bool dynamic = false;
        int64_t size = 0;
        if (c == '?') {
            size = Shape::kUnboundedSize;
            dynamic = true;
            ++p;
        } else {
            if (c == '<' && m_lexer.charAt(p + 1) == '=') {
                dynamic = true;
                p = m_lexer.skipTrivia(p + 2);
                c = m_lexer.charAt(p);
            }
            size_t start = p;
            if (c == '-') ++p;
            while (isDigit(m_lexer.charAt(p))) ++p;
            if (p == start || (p == start + 1 && c == '-')) {
                m_lexer.resetTo(start);
                return expected("a dimension size", m_lexer.peek());
            }
            if (!parseInt64(text.substr(start, p - start), &size))
                return error(start, "dimension size is out of range");
            if (size < 0) return error(start, "invalid dimension size " + std::to_string(size));
        }
        if (dynamic) dynamicDims.append(static_cast<int64_t>(dims.size()));
        dims.append(size);
        if (dims.size() > static_cast<size_t>(limits::kMaxRank))
            return error(open, "shape has more than " + std::to_string(limits::kMaxRank) +
                                   " dimensions (the limit)");
        p = m_lexer.skipTrivia(p);
        c = m_lexer.charAt(p);
        if (c == ',') {
            p = m_lexer.skipTrivia(p + 1);
            continue;
        }
        if (c == ']') {
            ++p;
            break;
        }
        m_lexer.resetTo(p);
        return expected("',' or ']' in the dimensions of a shape", m_lexer.peek());
    }
    if (!limits::arrayWithinLimits(dims.begin(), dims.size(), out->elementType()))
        return error(open, "shape has " + limits::arraySizeLimitMessage());
    m_lexer.resetTo(p);
    out->mutableDimensions().assign(dims.begin(), dims.end());
    for (int64_t d : dynamicDims) out->setDynamicDimension(d, true);
    return Status::ok();
}

Status Parser::parseShape(Shape* out) {
    DepthGuard guard(*this);
    const Token& first = m_lexer.peek();
    if (guard.exceeded()) return error(first.offset, "maximum nesting depth exceeded");
    if (first.kind == TokenKind::kLparen) {
        m_lexer.next();
        std::vector<Shape> elements;
        if (!m_lexer.consumeIf(TokenKind::kRparen)) {
            while (true) {
                elements.emplace_back();
                HLO_RETURN_IF_ERROR(parseShape(&elements.back()));
                if (m_lexer.consumeIf(TokenKind::kComma)) continue;
                if (m_lexer.consumeIf(TokenKind::kRparen)) break;
                return expected("',' or ')' in a tuple shape", m_lexer.peek());
            }
        }
        *out = Shape::makeTuple(std::move(elements));
        return Status::ok();
    }
    if (first.kind == TokenKind::kIdentifier && first.text == "b" &&
        m_lexer.charAt(m_lexer.skipTrivia(first.offset + 1)) == '(') {
        m_lexer.next();
        m_lexer.next();  // '('
        Shape element;
        HLO_RETURN_IF_ERROR(parseShape(&element));
        if (!element.isArray() || element.isBuffer())
            return error(first.offset, "a buffer shape b(...) must hold an array shape");
        HLO_RETURN_IF_ERROR(expectToken(TokenKind::kRparen, "')' at the end of buffer shape"));
        return makeBufferShape(std::move(element), out, first.offset);
    }
    PrimitiveType type;
    size_t typeOffset = 0;
    HLO_RETURN_IF_ERROR(parsePrimitiveType(&type, &typeOffset));
    *out = Shape();
    out->setElementType(type);
    HLO_RETURN_IF_ERROR(parseDimensions(out));
    if (!out->isArray() && out->rank() != 0)
        return error(typeOffset,
                     std::string(primitive_util::name(type)) + " shapes take no dimensions");
    // A '{' starts a layout when an integer or ':' follows (otherwise it is,
    // e.g., the body of the computation whose result shape this is).
    size_t p = m_lexer.cursor();
    if (m_lexer.charAt(p) == '{') {
        size_t q = m_lexer.skipTrivia(p + 1);
        char c = m_lexer.charAt(q);
        if (isDigit(c) || c == ':' || (c == '-' && isDigit(m_lexer.charAt(q + 1)))) {
            if (!out->isArray()) return error(p, "only array shapes have a layout");
            HLO_RETURN_IF_ERROR(parseLayout(&out->mutableLayout(), out->rank()));
        }
    }
    return Status::ok();
}

Status Parser::parseShapeLite(ShapeLite* out) {
    const Token& first = m_lexer.peek();
    out->full = false;
    if (first.kind != TokenKind::kIdentifier || first.text == "b") {
        out->full = true;
        return parseShape(&out->shape);
    }
    PrimitiveType type;
    size_t typeOffset = 0;
    HLO_RETURN_IF_ERROR(parsePrimitiveType(&type, &typeOffset));
    out->elementType = type;
    out->rank = 0;
    size_t p = m_lexer.cursor();
    if (m_lexer.charAt(p) != '[')
        return error(p, "expected '[' to start the dimensions of a shape");
    // Fast path: plain non-negative integers, no dynamic markers, no trivia.
    size_t q = p + 1;
    bool simple = true;
    if (m_lexer.charAt(q) == ']') {
        ++q;
    } else {
        while (true) {
            size_t start = q;
            int64_t value = 0;
            while (isDigit(m_lexer.charAt(q))) {
                if (value > (INT64_MAX - 9) / 10) {
                    simple = false;
                    break;
                }
                value = value * 10 + (m_lexer.charAt(q) - '0');
                ++q;
            }
            if (!simple || q == start || out->rank >= ShapeLite::kMaxRank) {
                simple = false;
                break;
            }
            out->dimensions[out->rank++] = value;
            char c = m_lexer.charAt(q);
            if (c == ',') {
                ++q;
                continue;
            }
            if (c == ']') {
                ++q;
                break;
            }
            simple = false;
            break;
        }
    }
    if (!simple) {
        // General path through the full parser.
        m_lexer.resetTo(typeOffset);
        out->full = true;
        return parseShape(&out->shape);
    }
    if (!limits::arrayWithinLimits(out->dimensions, static_cast<size_t>(out->rank), type))
        return error(p, "shape has " + limits::arraySizeLimitMessage());
    m_lexer.resetTo(q);
    if (!primitive_util::isArrayType(type) && out->rank != 0)
        return error(typeOffset,
                     std::string(primitive_util::name(type)) + " shapes take no dimensions");
    size_t r = m_lexer.cursor();
    if (m_lexer.charAt(r) == '{') {
        size_t s = m_lexer.skipTrivia(r + 1);
        char c = m_lexer.charAt(s);
        if (isDigit(c) || c == ':' || (c == '-' && isDigit(m_lexer.charAt(s + 1))))
            HLO_RETURN_IF_ERROR(parseLayout(nullptr, out->rank));
    }
    return Status::ok();
}

namespace {

// Character-level scanning helpers over the lexer's text.
struct Scan {
    HloLexer& lexer;
    std::string_view text;
    size_t p;

    char peek() {
        p = lexer.skipTrivia(p);
        return lexer.charAt(p);
    }
    bool eat(char c) {
        if (peek() != c) return false;
        ++p;
        return true;
    }
    bool eatWord(std::string_view word) {
        peek();
        if (text.substr(p, word.size()) != word) return false;
        p += word.size();
        return true;
    }
    // -?[0-9]+ ; false when absent (p unchanged) or out of range (*overflow).
    bool integer(int64_t* out, bool* overflow) {
        size_t start = peek() == '-' ? p + 1 : p;
        size_t end = start;
        while (isDigit(lexer.charAt(end))) ++end;
        if (end == start) return false;
        if (!parseInt64(text.substr(p, end - p), out)) {
            *overflow = true;
            return false;
        }
        p = end;
        return true;
    }
};

// A layout's text after its '{', read item by item (the grammar above
// Parser::parseLayout).
class LayoutReader {
public:
    LayoutReader(Parser& parser, size_t open)
        : s{parser.m_lexer, parser.m_text, open}, m_parser(parser), m_lexer(parser.m_lexer) {}

    Status expectInt(int64_t* value, std::string_view what) {
        if (s.integer(value, &m_overflow)) return Status::ok();
        m_lexer.resetTo(s.p);
        if (m_overflow) return m_parser.error(s.p, "integer out of range in " + std::string(what));
        return m_parser.expected("an integer in " + std::string(what), m_lexer.peek());
    }
    Status expectChar(char c, std::string_view what) {
        if (s.eat(c)) return Status::ok();
        m_lexer.resetTo(s.p);
        return m_parser.expected(what, m_lexer.peek());
    }

    // int_list
    Status readMinorToMajor() {
        char c = s.peek();
        if (isDigit(c) || c == '-') {
            while (true) {
                int64_t value = 0;
                HLO_RETURN_IF_ERROR(expectInt(&value, "the layout"));
                minorToMajor.append(value);
                if (!s.eat(',')) break;
            }
        }
        return Status::ok();
    }

    // What follows ':', in XLA's order.
    Status readAttributes() {
        if (s.eatWord("D(")) HLO_RETURN_IF_ERROR(readDimLevelTypes());
        if (s.eatWord("T(")) HLO_RETURN_IF_ERROR(readTiles());
        HLO_RETURN_IF_ERROR(readIntItem("L(", &tailPadding, "tail padding alignment"));
        HLO_RETURN_IF_ERROR(readTypeItem('#', &indexType, "index primitive type"));
        HLO_RETURN_IF_ERROR(readTypeItem('*', &pointerType, "pointer primitive type"));
        HLO_RETURN_IF_ERROR(readIntItem("E(", &elementSize, "element size in bits"));
        HLO_RETURN_IF_ERROR(readIntItem("S(", &memorySpace, "memory space"));
        if (s.eatWord("SC(")) HLO_RETURN_IF_ERROR(readSplitConfigs());
        if (s.peek() == 'P' && m_lexer.charAt(m_lexer.skipTrivia(s.p + 1)) == '(')
            return m_parser.error(s.p, "Layout has physical shape, but is not for a sparse array");
        return readIntItem("M(", &metadataPrefix, "dynamic shape metadata prefix bytes");
    }

    void store(Layout* out) {
        out->mutableMinorToMajor().assign(minorToMajor.begin(), minorToMajor.end());
        out->mutableTiles() = std::move(tiles);
        out->setElementSizeInBits(elementSize);
        out->setMemorySpace(memorySpace);
        if (!levelTypes.empty())
            out->setDimLevelTypes(std::move(levelTypes),
                                  anyNotUnique ? std::move(unique) : std::vector<bool>{},
                                  anyNotOrdered ? std::move(ordered) : std::vector<bool>{});
        if (tailPadding != 1) out->setTailPaddingAlignmentInElements(tailPadding);
        if (indexType != PrimitiveType::PRIMITIVE_TYPE_INVALID)
            out->setIndexPrimitiveType(indexType);
        if (pointerType != PrimitiveType::PRIMITIVE_TYPE_INVALID)
            out->setPointerPrimitiveType(pointerType);
        if (!splitConfigs.empty()) out->setSplitConfigs(std::move(splitConfigs));
        if (metadataPrefix != 0) out->setDynamicShapeMetadataPrefixBytes(metadataPrefix);
    }

    Scan s;
    SmallInts minorToMajor;
    std::vector<DimLevelType> levelTypes;
    std::vector<bool> unique, ordered;
    bool anyNotUnique = false, anyNotOrdered = false;
    std::vector<Tile> tiles;
    int64_t tailPadding = 1, elementSize = 0, memorySpace = 0, metadataPrefix = 0;
    PrimitiveType indexType = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    PrimitiveType pointerType = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    std::vector<SplitConfig> splitConfigs;

private:
    // D(...) after its "D(".
    Status readDimLevelTypes() {
        if (s.eat(')')) return Status::ok();
        while (true) {
            char c = s.peek();
            DimLevelType type;
            switch (c) {
                case 'D':
                    type = DimLevelType::kDense;
                    break;
                case 'C':
                    type = DimLevelType::kCompressed;
                    break;
                case 'S':
                    type = DimLevelType::kSingleton;
                    break;
                case 'H':
                    type = DimLevelType::kLooseCompressed;
                    break;
                default:
                    return m_parser.error(s.p,
                                          "expected a DimLevelType abbreviation (D, C, or S)");
            }
            if (isIdentifierChar(m_lexer.charAt(s.p + 1)))
                return m_parser.error(s.p, "expected a DimLevelType abbreviation (D, C, or S)");
            ++s.p;
            bool isUnique = !s.eat('+');
            bool isOrdered = !s.eat('~');
            anyNotUnique |= !isUnique;
            anyNotOrdered |= !isOrdered;
            levelTypes.push_back(type);
            unique.push_back(isUnique);
            ordered.push_back(isOrdered);
            if (s.eat(',')) continue;
            HLO_RETURN_IF_ERROR(expectChar(')', "',' or ')' in dim level types"));
            break;
        }
        return Status::ok();
    }

    // T(...)(...)... after its "T(".
    Status readTiles() {
        --s.p;
        while (s.peek() == '(') {
            ++s.p;
            Tile tile;
            if (!s.eat(')')) {
                while (true) {
                    if (s.eat('*')) {
                        tile.dimensions.push_back(Tile::kCombineDimension);
                    } else {
                        int64_t value = 0;
                        HLO_RETURN_IF_ERROR(expectInt(&value, "a tile"));
                        tile.dimensions.push_back(value);
                    }
                    if (s.eat(',')) continue;
                    HLO_RETURN_IF_ERROR(expectChar(')', "',' or ')' in a tile"));
                    break;
                }
            }
            tiles.push_back(std::move(tile));
        }
        return Status::ok();
    }

    // `word` n ')', when present.
    Status readIntItem(std::string_view word, int64_t* value, std::string_view what) {
        if (!s.eatWord(word)) return Status::ok();
        HLO_RETURN_IF_ERROR(expectInt(value, what));
        return expectChar(')', "')' to end " + std::string(what));
    }

    // `marker` '(' unsigned-type ')', when present.
    Status readTypeItem(char marker, PrimitiveType* type, std::string_view what) {
        if (s.peek() != marker || m_lexer.charAt(m_lexer.skipTrivia(s.p + 1)) != '(')
            return Status::ok();
        s.p = m_lexer.skipTrivia(s.p + 1) + 1;
        m_lexer.resetTo(s.p);
        size_t offset = 0;
        HLO_RETURN_IF_ERROR(m_parser.parsePrimitiveType(type, &offset));
        if (!primitive_util::isUnsignedInteger(*type))
            return m_parser.error(
                offset, "expecting an unsigned integer type for the " + std::string(what));
        s.p = m_lexer.position();
        return expectChar(')', "')' after the " + std::string(what));
    }

    // SC(d:i,...)(d:i,...)... after its "SC(".
    Status readSplitConfigs() {
        --s.p;
        // XLA writes SC once before all configs; a repeated SC is accepted too.
        while (s.peek() == '(' || s.eatWord("SC(")) {
            if (m_lexer.charAt(s.p) == '(') ++s.p;
            SplitConfig config;
            HLO_RETURN_IF_ERROR(expectInt(&config.dimension, "a split config"));
            HLO_RETURN_IF_ERROR(expectChar(':', "':' in a split config"));
            if (!s.eat(')')) {
                while (true) {
                    int64_t index = 0;
                    HLO_RETURN_IF_ERROR(expectInt(&index, "a split config"));
                    config.splitIndices.push_back(index);
                    if (s.eat(',')) continue;
                    HLO_RETURN_IF_ERROR(expectChar(')', "',' or ')' in a split config"));
                    break;
                }
            }
            splitConfigs.push_back(std::move(config));
        }
        return Status::ok();
    }

    Parser& m_parser;
    HloLexer& m_lexer;
    bool m_overflow = false;
};

}  // namespace

// layout ::= '{' int_list (':' D(...)? T(...)* L(n)? #(type)? *(type)? E(n)? S(n)?
//            SC(...)* P(shape)? M(n)?)? '}'
Status Parser::parseLayout(Layout* out, int64_t rank) {
    size_t open = m_lexer.cursor();
    LayoutReader reader(*this, open);
    if (!reader.s.eat('{')) return error(open, "expected '{' to start a layout");
    HLO_RETURN_IF_ERROR(reader.readMinorToMajor());
    if (reader.s.eat(':')) HLO_RETURN_IF_ERROR(reader.readAttributes());
    HLO_RETURN_IF_ERROR(reader.expectChar('}', "'}' at the end of the layout"));
    m_lexer.resetTo(reader.s.p);
    if (static_cast<int64_t>(reader.minorToMajor.size()) != rank)
        return error(open, "Dimensions size is " + std::to_string(rank) +
                               ", but minor to major size is " +
                               std::to_string(reader.minorToMajor.size()) + ".");
    if (out == nullptr) return Status::ok();
    reader.store(out);
    return Status::ok();
}

}  // namespace hloscope::hlo_parser_internal
