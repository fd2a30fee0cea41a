// constant(...) literals: checked against the constant's shape the way XLA's
// parser checks them (nesting, element counts, value ranges, NaN payloads);
// the text itself is kept with whitespace collapsed.
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>

#include "core/text/hlo_parser_internal.h"

namespace hloscope::hlo_parser_internal {

using namespace hlo_lexer_util;

namespace {

struct FloatFormat {
    double maxFinite = 0;
    int mantissaBits = 0;
    bool nanPayloads = false;  // IEEE-like NaN encodings that carry a payload
    bool isUnsigned = false;
    bool saturates = false;  // no inf/NaN: out-of-range values clamp
};

FloatFormat floatFormat(PrimitiveType type) {
    switch (type) {
        case PrimitiveType::F16:
            return {65504.0, 10, true, false, false};
        case PrimitiveType::BF16:
            return {3.3895313892515355e38, 7, true, false, false};
        case PrimitiveType::F32:
            return {static_cast<double>(FLT_MAX), 23, true, false, false};
        case PrimitiveType::F64:
            return {DBL_MAX, 52, true, false, false};
        case PrimitiveType::F8E5M2:
            return {57344.0, 2, true, false, false};
        case PrimitiveType::F8E4M3:
            return {240.0, 3, true, false, false};
        case PrimitiveType::F8E3M4:
            return {15.5, 4, true, false, false};
        case PrimitiveType::F8E4M3FN:
            return {448.0, 3, false, false, false};
        case PrimitiveType::F8E4M3B11FNUZ:
            return {30.0, 3, false, false, false};
        case PrimitiveType::F8E5M2FNUZ:
            return {57344.0, 2, false, false, false};
        case PrimitiveType::F8E4M3FNUZ:
            return {240.0, 3, false, false, false};
        case PrimitiveType::F8E8M0FNU:
            return {std::ldexp(1.0, 127), 0, false, true, false};
        case PrimitiveType::F6E2M3FN:
            return {7.5, 3, false, false, true};
        case PrimitiveType::F6E3M2FN:
            return {28.0, 2, false, false, true};
        case PrimitiveType::F4E2M1FN:
            return {6.0, 1, false, false, true};
        default:
            return {DBL_MAX, 52, true, false, false};
    }
}

// True when a finite `value` rounds to a finite value of the format (round to
// nearest even); out-of-range values round to infinity/NaN.
bool fitsFloatFormat(double value, const FloatFormat& format) {
    double magnitude = std::fabs(value);
    if (format.saturates || magnitude <= format.maxFinite) return true;
    int exponent = 0;
    std::frexp(format.maxFinite, &exponent);  // max = m * 2^exponent, m in [0.5, 1)
    double ulp = std::ldexp(1.0, exponent - 1 - format.mantissaBits);
    double threshold = format.maxFinite + ulp / 2;
    if (magnitude < threshold) return true;
    if (magnitude > threshold) return false;
    // A tie rounds to the even neighbour: to max when max's last mantissa
    // bit is 0.
    double mantissa = format.maxFinite / ulp;
    return std::fmod(mantissa, 2.0) == 0.0;
}

}  // namespace

Status Parser::parseConstantLiteral(HloInstruction* instruction) {
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLparen) return expected("'(' before the constant literal", open);
    size_t begin = open.offset + 1;
    HLO_RETURN_IF_ERROR(parseLiteral(instruction->shape()));
    Token close = m_lexer.next();
    if (close.kind != TokenKind::kRparen) return expected("')' after the constant literal", close);
    m_scratch.clear();
    appendCollapsed(m_scratch, m_text.substr(begin, close.offset - begin));
    instruction->setLiteralText(m_scratch);
    return Status::ok();
}

Status Parser::parseLiteral(const Shape& shape) {
    DepthGuard guard(*this);
    if (guard.exceeded()) return error(m_lexer.peek().offset, "maximum nesting depth exceeded");
    if (shape.isTuple()) {
        Token open = m_lexer.next();
        if (open.kind != TokenKind::kLparen)
            return expected("'(' in front of tuple elements", open);
        if (m_lexer.peekKind() != TokenKind::kRparen) {
            for (int64_t i = 0; i < shape.tupleCount(); ++i) {
                if (i > 0) {
                    Token comma = m_lexer.next();
                    if (comma.kind != TokenKind::kComma)
                        return expected("',' to separate tuple elements", comma);
                }
                HLO_RETURN_IF_ERROR(parseLiteral(shape.tupleShape(i)));
            }
        }
        Token close = m_lexer.next();
        if (close.kind != TokenKind::kRparen)
            return expected("')' at the end of the tuple with " +
                                std::to_string(shape.tupleCount()) + " elements",
                            close);
        return Status::ok();
    }
    if (!shape.isArray() || shape.isBuffer())
        return error(m_lexer.peek().offset,
                     "a constant of shape " + shape.toString() + " cannot have a literal");
    return parseDenseLiteral(shape);
}

namespace {

// XLA's dense-literal check over the tokens of one array value: nesting and
// element counts against the shape, then each element's type and range.
class DenseLiteralChecker {
public:
    DenseLiteralChecker(Parser& parser, const Shape& shape)
        : m_parser(parser),
          m_lexer(parser.m_lexer),
          m_shape(shape),
          m_rank(shape.rank()),
          m_type(shape.elementType()),
          m_isPred(m_type == PrimitiveType::PRED),
          m_isInteger(primitive_util::isInteger(m_type)),
          m_isFloat(primitive_util::isFloatingPoint(m_type)),
          m_isComplex(primitive_util::isComplex(m_type)),
          m_seen(static_cast<size_t>(m_rank), 0) {}

    // A dispatch over the value's tokens until its outer braces close.
    Status run() {
        do {
            const Token& token = m_lexer.peek();
            switch (token.kind) {
                case TokenKind::kLbrace:
                    HLO_RETURN_IF_ERROR(openBrace(token));
                    break;
                case TokenKind::kRbrace:
                    HLO_RETURN_IF_ERROR(closeBrace(token));
                    break;
                case TokenKind::kDots:
                    HLO_RETURN_IF_ERROR(elision(token));
                    break;
                case TokenKind::kComma:
                    m_lexer.next();
                    break;
                case TokenKind::kLparen:
                    HLO_RETURN_IF_ERROR(complexValue(token));
                    break;
                case TokenKind::kInt:
                case TokenKind::kDecimal:
                case TokenKind::kIdentifier:
                    HLO_RETURN_IF_ERROR(scalarValue(token));
                    break;
                default:
                    return hard(error(token.offset, "unexpected token type in a literal: " +
                                                        describeToken(token)));
            }
        } while (m_nest > 0);
        return Status::ok();
    }

private:
    Status error(size_t offset, std::string message) const {
        return m_parser.error(offset, std::move(message));
    }
    int64_t dim(int64_t i) const { return m_shape.dimensions(i); }
    std::string indexString(int64_t upTo) const {
        std::string out = "[";
        for (int64_t i = 0; i < upTo; ++i) {
            if (i) out += ',';
            out += std::to_string(m_seen[static_cast<size_t>(i)] - 1);
        }
        return out + "]";
    }
    std::string shapeString() const { return m_shape.toString(false); }

    Status addOneElement(size_t offset) {
        if (m_rank > 0) {
            if (m_nest != m_rank)
                return error(offset, "expects nested array in rank " + std::to_string(m_rank) +
                                         ", but sees " + std::to_string(m_nest));
            int64_t& count = m_seen[static_cast<size_t>(m_rank - 1)];
            ++count;
            if (count > dim(m_rank - 1))
                return error(offset, "expects " + std::to_string(dim(m_rank - 1)) +
                                         " elements on the minor-most dimension, but sees more");
        }
        return Status::ok();
    }

    // A failure, or the recorded soft failure before it.
    Status hard(Status status) const {
        if (status.isOk() || !m_soft) return status;
        return *m_soft;
    }

    // Range check of a floating-point value for `component` (the element
    // type, or a complex number's component type).
    Status checkFloat(size_t offset, double value, PrimitiveType component,
                      std::string_view part) const {
        if (!std::isfinite(value)) return Status::ok();
        FloatFormat format = floatFormat(component);
        bool fits = fitsFloatFormat(value, format) && !(format.isUnsigned && value < 0);
        if (fits) return Status::ok();
        std::string low = format.isUnsigned ? "0" : formatDouble(-format.maxFinite);
        std::string high = formatDouble(format.maxFinite);
        if (!part.empty())
            return error(offset, std::string(part) + " part " + formatDouble(value) +
                                     " is out of range for literal's primitive type " +
                                     upperTypeName(m_type) + ", namely [" + low + ", " + high +
                                     "].");
        return error(offset, "value " + formatDouble(value) +
                                 " is out of range for literal's primitive type " +
                                 upperTypeName(m_type) + " namely [" + low + ", " + high + "].");
    }

    // A number token (or inf/nan) as a double; reads a NaN payload `(0x..)`.
    Status readDouble(const Token& token, double* value, uint64_t* payload) {
        *payload = 0;
        if (!parseDouble(token.text, value))
            return error(token.offset, "Constant is out of range for double (+/-" +
                                           formatDouble(DBL_MAX) + ") and so is unparsable.");
        std::string_view word = token.text.substr(token.text[0] == '-' ? 1 : 0);
        if (word == "nan" && m_lexer.charAt(m_lexer.position()) == '(') {
            size_t p = m_lexer.position() + 1;
            if (m_lexer.charAt(p) != '0' || m_lexer.charAt(p + 1) != 'x')
                return error(p - 1, "expects a NaN payload of the form nan(0x...)");
            p += 2;
            uint64_t bits = 0;
            size_t digits = 0;
            while (true) {
                char c = m_lexer.charAt(p);
                int d = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
                if (d < 0) break;
                if (bits >> 60) return error(token.offset, "NaN payload out of range");
                bits = bits * 16 + static_cast<uint64_t>(d);
                ++digits;
                ++p;
            }
            if (digits == 0 || m_lexer.charAt(p) != ')')
                return error(token.offset, "expects a NaN payload of the form nan(0x...)");
            if (bits == 0 || bits > (uint64_t{1} << 52) - 1)
                return error(token.offset, "NaN payload out of range");
            *payload = bits;
            m_lexer.resetTo(p + 1);
        }
        return Status::ok();
    }

    Status checkNanPayload(size_t offset, uint64_t payload, PrimitiveType component) const {
        if (payload == 0) return Status::ok();
        FloatFormat format = floatFormat(component);
        auto hex = [](uint64_t v) {
            char buffer[20];
            std::snprintf(buffer, sizeof(buffer), "%llx", static_cast<unsigned long long>(v));
            return std::string(buffer);
        };
        std::string where = " to a literal in shape " + shapeString() + " at linear index " +
                            std::to_string(m_linearIndex);
        if (!format.nanPayloads)
            return error(offset, "tries to set NaN payload 0x" + hex(payload) + where + ", but " +
                                     std::string(primitive_util::name(component)) +
                                     " does not support payloads");
        uint64_t mask = (uint64_t{1} << format.mantissaBits) - 1;
        if (payload > mask)
            return error(offset, "tries to set NaN payload 0x" + hex(payload) + where +
                                     ", but the NaN payload is out of range (0x" + hex(mask) + ")");
        return Status::ok();
    }

    Status openBrace(const Token& token) {
        ++m_nest;
        if (m_nest > m_rank)
            return hard(error(token.offset, "expects nested array in rank " +
                                                std::to_string(m_rank) + ", but sees larger"));
        if (m_nest > 1) {
            int64_t& count = m_seen[static_cast<size_t>(m_nest - 2)];
            ++count;
            if (count > dim(m_nest - 2))
                return hard(error(token.offset, "expects " + std::to_string(dim(m_nest - 2)) +
                                                    " elements in the " + indexString(m_nest - 2) +
                                                    "th element, but sees more"));
        }
        m_lexer.next();
        return Status::ok();
    }

    Status closeBrace(const Token& token) {
        if (m_nest == 0) return hard(error(token.offset, "unexpected '}' token"));
        --m_nest;
        int64_t& count = m_seen[static_cast<size_t>(m_nest)];
        if (count != dim(m_nest))
            return hard(error(token.offset, "expects " + std::to_string(dim(m_nest)) +
                                                " elements in the " + indexString(m_nest) +
                                                "th element, but sees " + std::to_string(count)));
        count = 0;
        m_lexer.next();
        return Status::ok();
    }

    // `...`: the elided rest of the outermost dimension.
    Status elision(const Token& token) {
        if (m_nest != 1)
            return hard(error(token.offset,
                              "expects `...` at nest level 1, but sees it at nest level " +
                                  std::to_string(m_nest)));
        m_seen[0] = dim(0);
        m_lexer.next();
        return Status::ok();
    }

    // `(re, im)`.
    Status complexValue(const Token& token) {
        if (!m_isComplex)
            return hard(error(token.offset,
                              "unexpected '(' in literal. Parens are only valid for complex "
                              "literals"));
        HLO_RETURN_IF_ERROR(hard(addOneElement(token.offset)));
        m_lexer.next();
        PrimitiveType component = primitive_util::complexComponentType(m_type);
        double parts[2];
        for (int i = 0; i < 2; ++i) {
            Token number = m_lexer.next();
            bool isNumber = number.kind == TokenKind::kInt || number.kind == TokenKind::kDecimal ||
                            (number.kind == TokenKind::kIdentifier &&
                             (number.text == "inf" || number.text == "nan"));
            if (!isNumber)
                return hard(error(number.offset,
                                  i == 0 ? "expect floating-point value for real part of complex "
                                           "number"
                                         : "expect floating-point value for imaginary part of "
                                           "complex number"));
            uint64_t payload = 0;
            HLO_RETURN_IF_ERROR(hard(readDouble(number, &parts[i], &payload)));
            HLO_RETURN_IF_ERROR(hard(checkFloat(number.offset, parts[i], component,
                                                i == 0 ? "real" : "imaginary")));
            HLO_RETURN_IF_ERROR(hard(checkNanPayload(number.offset, payload, component)));
            Token separator = m_lexer.next();
            if (i == 0 && separator.kind != TokenKind::kComma)
                return hard(
                    error(separator.offset, "expect comma after real part of complex literal"));
            if (i == 1 && separator.kind != TokenKind::kRparen)
                return hard(error(separator.offset, "expect ')' after complex number"));
        }
        ++m_linearIndex;
        return Status::ok();
    }

    // A number, true/false, inf or nan.
    Status scalarValue(const Token& token) {
        Token value = token;
        bool isBool = value.kind == TokenKind::kIdentifier &&
                      (value.text == "true" || value.text == "false");
        bool isWord = value.kind == TokenKind::kIdentifier &&
                      (value.text == "inf" || value.text == "nan");
        if (value.kind == TokenKind::kIdentifier && !isBool && !isWord)
            return hard(error(value.offset,
                              "unexpected token type in a literal: " + describeToken(value)));
        if (Status status = addOneElement(value.offset); !status.isOk() && !m_soft)
            m_soft = std::move(status);
        m_lexer.next();
        if (isBool) {
            if (!m_isPred)
                return hard(error(value.offset, "expects a value of primitive type " +
                                                    upperTypeName(m_type) + ", got " +
                                                    std::string(value.text)));
        } else if (m_isInteger || m_isPred) {
            HLO_RETURN_IF_ERROR(integerValue(value));
        } else if (m_isFloat) {
            double number = 0;
            uint64_t payload = 0;
            HLO_RETURN_IF_ERROR(hard(readDouble(value, &number, &payload)));
            HLO_RETURN_IF_ERROR(hard(checkFloat(value.offset, number, m_type, {})));
            HLO_RETURN_IF_ERROR(hard(checkNanPayload(value.offset, payload, m_type)));
        } else {
            return hard(
                error(value.offset, "unsupported primitive type " + upperTypeName(m_type)));
        }
        ++m_linearIndex;
        return Status::ok();
    }

    // An integer (or pred) element: an integer token within the type's range.
    Status integerValue(const Token& value) {
        if (value.kind != TokenKind::kInt)
            return hard(error(value.offset,
                              "expects integer for primitive type: " + upperTypeName(m_type)));
        bool negative = false;
        uint64_t magnitude = 0;
        if (!parseIntMagnitude(value.text, &negative, &magnitude) ||
            (negative &&
             magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1))
            return hard(error(value.offset, "expects integer for primitive type: " +
                                                upperTypeName(m_type) + " (out of range)"));
        if (!m_isInteger) return Status::ok();
        int bits = primitive_util::bitWidth(m_type);
        bool isUnsigned = primitive_util::isUnsignedInteger(m_type);
        bool ok;
        std::string range;
        if (isUnsigned) {
            uint64_t max =
                bits >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
            // XLA reinterprets a negative value as its two's complement; only
            // u64 can hold that.
            ok = negative ? (bits >= 64) : magnitude <= max;
            range = "[0, " + std::to_string(max) + "]";
        } else {
            uint64_t maxPositive = (uint64_t{1} << (bits - 1)) - 1;
            ok = negative ? magnitude <= maxPositive + 1 : magnitude <= maxPositive;
            range = "[-" + std::to_string(maxPositive + 1) + ", " + std::to_string(maxPositive) +
                    "]";
        }
        if (!ok)
            return hard(error(value.offset, "value " + std::string(value.text) +
                                                " is out of range for literal's primitive type " +
                                                upperTypeName(m_type) + " namely " + range + "."));
        return Status::ok();
    }

    Parser& m_parser;
    HloLexer& m_lexer;
    const Shape& m_shape;
    const int64_t m_rank;
    const PrimitiveType m_type;
    const bool m_isPred;
    const bool m_isInteger;
    const bool m_isFloat;
    const bool m_isComplex;
    int64_t m_nest = 0;
    int64_t m_linearIndex = 0;
    std::vector<int64_t> m_seen;
    // XLA's parser records nesting/count problems of a single value without
    // failing right away (so `f32[4] constant(0)` is accepted); they surface
    // when a later check fails, as the first error.
    std::optional<Status> m_soft;
};

}  // namespace

Status Parser::parseDenseLiteral(const Shape& shape) {
    return DenseLiteralChecker(*this, shape).run();
}

}  // namespace hloscope::hlo_parser_internal
