// Literal text parsing: dense array values (XLA's state machine over nested
// braces, elided "...", a bare scalar filling every element) and their
// elements: integers checked against the element type's range, floats
// (nan, inf, NaN payloads, narrow formats), pred and complex pairs.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/ir/literal.h"
#include "core/ir/literal_internal.h"
#include "core/ir/literal_parse_internal.h"

namespace hloscope::literal_parse_internal {
namespace {

bool isFloatType(PrimitiveType type) { return primitive_util::isFloatingPoint(type); }

}  // namespace

std::string LiteralParser::indexString(const std::vector<int64_t>& seen, size_t dim) {
    std::string out = "[";
    for (size_t i = 0; i < dim; ++i) {
        if (i > 0) out += ',';
        out += std::to_string(seen[i] - 1);
    }
    return out + "]";
}

StatusOr<Literal> LiteralParser::parseDense(const Shape& shape) {
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

Status LiteralParser::outOfRange(const Token& token, PrimitiveType type, const std::string& range) const {
    return error(token.pos, "value " + std::string(token.text) +
                                " is out of range for literal's primitive type " +
                                std::string(primitive_util::name(type)) + " namely " + range);
}

Status LiteralParser::parseElement(Literal& literal, int64_t index, const Token& token) {
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

bool LiteralParser::isIntegerText(std::string_view text) {
    return text.find_first_of(".eE") == std::string_view::npos;
}

bool LiteralParser::parseInteger(std::string_view text, bool& negative, uint64_t& magnitude) {
    negative = !text.empty() && text.front() == '-';
    if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
    if (!isIntegerText(text)) return false;
    auto r = std::from_chars(text.data(), text.data() + text.size(), magnitude);
    return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

Status LiteralParser::parseFloating(PrimitiveType type, const Token& token, uint8_t* dst) {
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

void LiteralParser::storeNarrowBits(PrimitiveType type, uint32_t bits, uint8_t* dst) {
    if (primitive_util::byteWidth(type) == 2) {
        auto b16 = static_cast<uint16_t>(bits);
        std::memcpy(dst, &b16, sizeof(b16));
    } else {
        *dst = static_cast<uint8_t>(bits);
    }
}

Status LiteralParser::storeNaN(PrimitiveType type, const Token& token, bool negative, bool hasPayload,
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

}  // namespace hloscope::literal_parse_internal
