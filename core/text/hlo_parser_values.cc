// Value grammars of the HLO text parser: padding, windows, dim labels,
// computation references, control predecessors, verbatim attribute values
// (with the checks XLA makes on some of them: result_accuracy, mesh
// replica groups, debug_attributes), and the module header's aliasing,
// buffer donors and entry computation layout.
#include <algorithm>
#include <cstring>

#include "core/text/hlo_parser_internal.h"

namespace hloscope::hlo_parser_internal {

using namespace hlo_lexer_util;

namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

// Characters the verbatim scanner must look at; all others are skipped fast.
struct SpecialChars {
    bool table[256] = {};
    SpecialChars() {
        for (unsigned char c : std::string_view("\"'{}()[],\n\r/")) table[c] = true;
    }
};

// Scans a run of [0-9_x-] characters (a padding or DxD pattern) at p.
size_t scanPattern(const HloLexer& lexer, size_t p) {
    while (true) {
        char c = lexer.charAt(p);
        if (isDigit(c) || c == '_' || c == 'x' || c == '-') {
            ++p;
            continue;
        }
        return p;
    }
}

// Splits `text` at `separator` into integers; false on a malformed part.
bool splitInts(std::string_view text, char separator, std::vector<int64_t>* out) {
    out->clear();
    size_t start = 0;
    while (true) {
        size_t end = text.find(separator, start);
        std::string_view part = text.substr(
            start, end == std::string_view::npos ? std::string_view::npos : end - start);
        int64_t value = 0;
        if (!parseInt64(part, &value)) return false;
        out->push_back(value);
        if (end == std::string_view::npos) return true;
        start = end + 1;
    }
}

}  // namespace

// low_high(_interior)? ('x' low_high(_interior)?)*
Status Parser::parsePaddingValue(std::vector<PaddingDimension>* out) {
    out->clear();
    size_t start = m_lexer.cursor();
    size_t end = scanPattern(m_lexer, start);
    if (end == start || isIdentifierChar(m_lexer.charAt(end)))
        return error(start, "expects padding config, e.g., '0_0_0x3_3_1'");
    std::string_view text = m_text.substr(start, end - start);
    std::vector<int64_t> parts;
    size_t pos = 0;
    while (true) {
        size_t x = text.find('x', pos);
        std::string_view dim =
            text.substr(pos, x == std::string_view::npos ? std::string_view::npos : x - pos);
        if (!splitInts(dim, '_', &parts) || (parts.size() != 2 && parts.size() != 3))
            return error(start,
                         "expects padding config pattern like 'low_high_interior' or 'low_high'");
        out->push_back({parts[0], parts[1], parts.size() == 3 ? parts[2] : 0});
        if (x == std::string_view::npos) break;
        pos = x + 1;
    }
    m_lexer.resetTo(end);
    return Status::ok();
}

// '{' (size=DxD | stride=DxD | pad=LxH... | lhs_dilate=DxD | rhs_dilate=DxD |
//      rhs_reversal=DxD)* '}'
Status Parser::parseWindowValue(Window* out, bool braces) {
    size_t loc = m_lexer.cursor();
    if (braces) {
        Token open = m_lexer.next();
        if (open.kind != TokenKind::kLbrace) return expected("'{' to start window attribute", open);
    }
    std::vector<int64_t> size, stride, lhsDilate, rhsDilate, reversal;
    std::vector<std::pair<int64_t, int64_t>> pad;
    bool seenPad = false;
    while (true) {
        const Token& token = m_lexer.peek();
        if (braces ? token.kind == TokenKind::kRbrace : token.kind == TokenKind::kEof) break;
        Token field = m_lexer.next();
        if (field.kind != TokenKind::kIdentifier || m_lexer.peekKind() != TokenKind::kEqual)
            return error(field.offset, "expects sub-attributes in window");
        m_lexer.next();
        size_t valueStart = m_lexer.cursor();
        size_t valueEnd = scanPattern(m_lexer, valueStart);
        std::string_view value = m_text.substr(valueStart, valueEnd - valueStart);
        std::string fieldName(field.text);
        if (field.text == "pad") {
            if (seenPad) return error(field.offset, "sub-attribute 'pad=' already exists");
            seenPad = true;
            std::vector<int64_t> parts;
            size_t pos = 0;
            if (value.empty() || isIdentifierChar(m_lexer.charAt(valueEnd)))
                return error(valueStart, "expects window pad pattern, e.g., '0_0x3_3'");
            while (true) {
                size_t x = value.find('x', pos);
                std::string_view dim = value.substr(
                    pos, x == std::string_view::npos ? std::string_view::npos : x - pos);
                if (!splitInts(dim, '_', &parts) || parts.size() != 2)
                    return error(valueStart,
                                 "expects padding_low and padding_high separated by '_'");
                pad.push_back({parts[0], parts[1]});
                if (x == std::string_view::npos) break;
                pos = x + 1;
            }
        } else {
            std::vector<int64_t>* target = field.text == "size"           ? &size
                                           : field.text == "stride"       ? &stride
                                           : field.text == "lhs_dilate"   ? &lhsDilate
                                           : field.text == "rhs_dilate"   ? &rhsDilate
                                           : field.text == "rhs_reversal" ? &reversal
                                                                          : nullptr;
            if (target == nullptr)
                return error(field.offset, "unexpected attribute name: " + fieldName);
            if (!target->empty())
                return error(field.offset, "sub-attribute '" + fieldName + "=' already exists");
            if (value.empty() || isIdentifierChar(m_lexer.charAt(valueEnd)) ||
                !splitInts(value, 'x', target))
                return error(valueStart, "expects sub-attribute '" + fieldName + "=ixj...'");
        }
        m_lexer.resetTo(valueEnd);
    }
    if (braces) m_lexer.next();  // '}'
    auto sameSize = [&](const std::vector<int64_t>& v, std::string_view name) -> Status {
        if (!v.empty() && v.size() != size.size())
            return error(loc, "expects '" + std::string(name) + "=' has the same size as 'size='");
        return Status::ok();
    };
    HLO_RETURN_IF_ERROR(sameSize(stride, "stride"));
    HLO_RETURN_IF_ERROR(sameSize(lhsDilate, "lhs_dilate"));
    HLO_RETURN_IF_ERROR(sameSize(rhsDilate, "rhs_dilate"));
    HLO_RETURN_IF_ERROR(sameSize(reversal, "rhs_reversal"));
    if (!pad.empty() && pad.size() != size.size())
        return error(loc, "expects 'pad=' has the same size as 'size='");
    out->dimensions.clear();
    for (size_t i = 0; i < size.size(); ++i) {
        WindowDimension d;
        d.size = size[i];
        d.stride = stride.empty() ? 1 : stride[i];
        if (!pad.empty()) {
            d.paddingLow = pad[i].first;
            d.paddingHigh = pad[i].second;
        }
        d.baseDilation = lhsDilate.empty() ? 1 : lhsDilate[i];
        d.windowDilation = rhsDilate.empty() ? 1 : rhsDilate[i];
        d.windowReversal = reversal.empty() ? false : reversal[i] == 1;
        out->dimensions.push_back(d);
    }
    return Status::ok();
}

// lhs '_' rhs '->' out, e.g. b01f_01io->b01f
Status Parser::parseDimLabelsValue(ConvolutionDimensionNumbers* out) {
    size_t start = m_lexer.cursor();
    auto isLabel = [](char c) {
        return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '?';
    };
    size_t p = start;
    auto run = [&]() {
        size_t b = p;
        while (isLabel(m_lexer.charAt(p))) ++p;
        return m_text.substr(b, p - b);
    };
    std::string_view lhs = run();
    bool ok = !lhs.empty() && m_lexer.charAt(p) == '_';
    std::string_view rhs, output;
    if (ok) {
        ++p;
        rhs = run();
        ok = !rhs.empty() && m_lexer.charAt(p) == '-' && m_lexer.charAt(p + 1) == '>';
    }
    if (ok) {
        p += 2;
        output = run();
        ok = !output.empty() && !isIdentifierChar(m_lexer.charAt(p));
    }
    if (!ok || lhs.size() < 2 || rhs.size() < 2 || output.size() < 2)
        return error(start, "expects dim labels pattern, e.g., 'bf0_0io->0bf'");
    std::string text(m_text.substr(start, p - start));
    auto unique = [](std::string_view s) {
        for (size_t i = 0; i < s.size(); ++i) {
            if (s[i] == '?') continue;
            if (s.find(s[i], i + 1) != std::string_view::npos) return false;
        }
        return true;
    };
    // Fills batch/feature (or input/output feature) and spatial positions.
    auto decode = [&](std::string_view labels, char first, char second, std::string_view which,
                      int64_t* firstOut, int64_t* secondOut,
                      std::vector<int64_t>* spatial) -> Status {
        if (!unique(labels))
            return error(start, "expects unique " + std::string(which) +
                                    " dimension numbers, but sees " + std::string(labels));
        size_t count = 0;
        for (char c : labels)
            if (c != first && c != second && c != '?') ++count;
        spatial->assign(count, -1);
        for (size_t i = 0; i < labels.size(); ++i) {
            char c = labels[i];
            if (c == '?') continue;
            if (c == first) {
                *firstOut = static_cast<int64_t>(i);
            } else if (c == second) {
                *secondOut = static_cast<int64_t>(i);
            } else if (isDigit(c) && static_cast<size_t>(c - '0') < count) {
                (*spatial)[static_cast<size_t>(c - '0')] = static_cast<int64_t>(i);
            } else {
                return error(start, "expects [0-" + std::to_string(labels.size() - 1) + first +
                                        second + "?] in " + std::string(which) +
                                        " dimension numbers");
            }
        }
        return Status::ok();
    };
    ConvolutionDimensionNumbers dnums;
    HLO_RETURN_IF_ERROR(decode(lhs, 'b', 'f', "lhs", &dnums.inputBatchDimension,
                               &dnums.inputFeatureDimension, &dnums.inputSpatialDimensions));
    HLO_RETURN_IF_ERROR(decode(rhs, 'i', 'o', "rhs", &dnums.kernelInputFeatureDimension,
                               &dnums.kernelOutputFeatureDimension,
                               &dnums.kernelSpatialDimensions));
    HLO_RETURN_IF_ERROR(decode(output, 'b', 'f', "output", &dnums.outputBatchDimension,
                               &dnums.outputFeatureDimension, &dnums.outputSpatialDimensions));
    if (dnums.inputSpatialDimensions.size() != dnums.outputSpatialDimensions.size() ||
        dnums.inputSpatialDimensions.size() != dnums.kernelSpatialDimensions.size())
        return error(start,
                     "input, kernel, and output must have same number of spatial "
                     "dimensions, but got " +
                         std::to_string(dnums.inputSpatialDimensions.size()) + ", " +
                         std::to_string(dnums.kernelSpatialDimensions.size()) + ", " +
                         std::to_string(dnums.outputSpatialDimensions.size()) + ", respectively.");
    *out = std::move(dnums);
    m_lexer.resetTo(p);
    return Status::ok();
}

Status Parser::parseComputationValue(HloInstruction* instruction, std::string_view name,
                                     bool list) {
    auto& attributes = instruction->mutableCalledComputationAttributes();
    attributes.push_back({std::string(name), {}, list});
    const uint32_t index = static_cast<uint32_t>(attributes.size() - 1);
    auto one = [&]() -> Status {
        const Token& token = m_lexer.peek();
        if (token.kind == TokenKind::kLbrace) {
            HLO_ASSIGN_OR_RETURN(HloComputation * computation, parseComputationBody("_"));
            m_inlineComputations.push_back(computation);
            instruction->mutableCalledComputationAttributes()[index].computations.push_back(
                computation);
            return Status::ok();
        }
        if (token.kind != TokenKind::kIdentifier && token.kind != TokenKind::kPercentName)
            return expected("a computation name", token);
        auto& computations = instruction->mutableCalledComputationAttributes()[index].computations;
        m_calledRefs.push_back({instruction, index, static_cast<uint32_t>(computations.size()),
                                token.text, token.offset});
        computations.push_back(nullptr);
        m_lexer.next();
        return Status::ok();
    };
    if (!list) return one();
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace) return expected("'{' to start a computation list", open);
    if (m_lexer.consumeIf(TokenKind::kRbrace)) return Status::ok();
    while (true) {
        HLO_RETURN_IF_ERROR(one());
        Token next = m_lexer.next();
        if (next.kind == TokenKind::kComma) continue;
        if (next.kind == TokenKind::kRbrace) return Status::ok();
        return expected("',' or '}' in a computation list", next);
    }
}

Status Parser::parseInstructionNames(ComputationState& state, PendingInstruction& pending) {
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace)
        return error(open.offset, "expects '{' at the beginning of instruction name list, got " +
                                      describeToken(open));
    pending.controlBegin = static_cast<uint32_t>(state.controls.size());
    while (true) {
        Token name = m_lexer.next();
        if (name.kind != TokenKind::kIdentifier && name.kind != TokenKind::kPercentName)
            return error(name.offset, "expects a instruction name, got " + describeToken(name));
        state.controls.push_back({name.text, name.offset});
        Token next = m_lexer.next();
        if (next.kind == TokenKind::kComma) continue;
        if (next.kind == TokenKind::kRbrace) break;
        return error(next.offset,
                     "expects '}' at the end of instruction name list, got " + describeToken(next));
    }
    pending.controlEnd = static_cast<uint32_t>(state.controls.size());
    return Status::ok();
}

// ---------------------------------------------------------------------------
// Verbatim values

Status Parser::parseVerbatimValue(std::string* out, size_t* valueOffset) {
    static const SpecialChars kSpecial;
    const size_t start = m_lexer.cursor();
    if (valueOffset) *valueOffset = start;
    const char* data = m_text.data();
    const size_t end = m_lexer.end();
    std::string stack;  // open brackets
    size_t p = start;
    auto skipString = [&](char quote) -> bool {
        size_t q = p + 1;
        while (q < end) {
            char c = data[q];
            if (c == quote) {
                p = q + 1;
                return true;
            }
            q += c == '\\' ? 2 : 1;
        }
        return false;
    };
    while (true) {
        while (p < end && !kSpecial.table[static_cast<unsigned char>(data[p])]) ++p;
        if (p >= end) break;
        char c = data[p];
        bool inBraces = !stack.empty() && stack.back() == '{';
        if (stack.empty()) {
            if (c == ',' || c == '}' || c == ')' || c == ']' || c == '\n' || c == '\r') break;
            if (c == '/' && p + 1 < end && (data[p + 1] == '/' || data[p + 1] == '*')) break;
        }
        if (c == '/' && p + 1 < end && (data[p + 1] == '/' || data[p + 1] == '*')) {
            // A comment inside brackets: what it holds does not count.
            HLO_RETURN_IF_ERROR(skipComment(p));
            continue;
        }
        switch (c) {
            case '"':
                if (!skipString('"')) return error(p, "unterminated string");
                continue;
            case '\'':
                if (!inBraces) {
                    if (!skipString('\'')) return error(p, "unterminated string");
                    continue;
                }
                break;
            case '{':
                if (stack.size() >= static_cast<size_t>(kMaxDepth))
                    return error(p, "maximum nesting depth exceeded");
                stack.push_back('{');
                break;
            case '(':
            case '[':
                if (!inBraces) {
                    if (stack.size() >= static_cast<size_t>(kMaxDepth))
                        return error(p, "maximum nesting depth exceeded");
                    stack.push_back(c);
                }
                break;
            case '}':
                if (!inBraces) return error(p, "unbalanced '}' in attribute value");
                stack.pop_back();
                break;
            case ')':
            case ']':
                if (!inBraces) {
                    char open = c == ')' ? '(' : '[';
                    if (stack.back() != open)
                        return error(p, std::string("unbalanced '") + c + "' in attribute value");
                    stack.pop_back();
                }
                break;
            default:
                break;
        }
        ++p;
    }
    if (!stack.empty()) return error(start, "unterminated attribute value");
    std::string_view text = m_text.substr(start, p - start);
    out->clear();
    appendCollapsed(*out, text);
    if (out->empty()) {
        m_lexer.resetTo(start);
        return expected("an attribute value", m_lexer.peek());
    }
    m_lexer.resetTo(p);
    return Status::ok();
}

// Moves `p` past the comment starting there ("//" to the end of the line,
// "/*" to "*/").
Status Parser::skipComment(size_t& p) {
    const std::string_view text = m_text.substr(0, m_lexer.end());
    if (text[p + 1] == '/') {
        const size_t newline = text.find('\n', p);
        p = newline == std::string_view::npos ? text.size() : newline;
        return Status::ok();
    }
    const size_t close = text.find("*/", p + 2);
    if (close == std::string_view::npos) return error(p, "unterminated /* comment");
    p = close + 2;
    return Status::ok();
}

Status Parser::parseBracedVerbatim(std::string* out) {
    const size_t open = m_lexer.cursor();
    if (m_lexer.charAt(open) != '{') return expected("'{'", m_lexer.peek());
    const char* data = m_text.data();
    const size_t end = m_lexer.end();
    size_t p = open + 1;
    int depth = 1;
    bool collapse = false;  // whitespace or comments outside strings to normalize
    while (p < end) {
        char c = data[p];
        if (c == '"') {
            // Find the closing quote fast; a quote preceded by an odd number
            // of backslashes is escaped.
            size_t q = p + 1;
            while (true) {
                const void* hit = q < end ? std::memchr(data + q, '"', end - q) : nullptr;
                if (hit == nullptr) return error(p, "unterminated string");
                size_t h = static_cast<size_t>(static_cast<const char*>(hit) - data);
                size_t b = h;
                while (b > p + 1 && data[b - 1] == '\\') --b;
                if (((h - b) & 1) == 0) {
                    q = h;
                    break;
                }
                q = h + 1;
            }
            p = q + 1;
            continue;
        }
        if (c == '/' && p + 1 < end && (data[p + 1] == '/' || data[p + 1] == '*')) {
            // A comment: braces inside it do not count (the collapsed text drops it).
            HLO_RETURN_IF_ERROR(skipComment(p));
            collapse = true;
            continue;
        }
        if (c == '{') {
            if (++depth > kMaxDepth) return error(p, "maximum nesting depth exceeded");
        } else if (c == '}') {
            if (--depth == 0) break;
        } else if (c == '\n' || c == '\t' || c == '\r' || c == '/' ||
                   (c == ' ' && (p + 1 >= end || isSpace(data[p + 1])))) {
            collapse = true;
        }
        ++p;
    }
    if (depth != 0) return error(open, "unterminated '{'");
    std::string_view text = m_text.substr(open + 1, p - open - 1);
    if (!text.empty() && (text.front() == ' ' || text.back() == ' ')) collapse = true;
    if (collapse) {
        out->clear();
        appendCollapsed(*out, text, /*insideBraces=*/true);
    } else {
        out->assign(text);
    }
    m_lexer.resetTo(p + 1);
    return Status::ok();
}

// result_accuracy={mode=highest} or {tolerance={rtol=..., atol=..., ulps=...}}
Status Parser::checkResultAccuracy(size_t offset) {
    m_lexer.resetTo(offset);
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace)
        return expected("'{' to start result precision list", open);
    Token name = m_lexer.next();
    if (name.kind != TokenKind::kIdentifier || !m_lexer.consumeIf(TokenKind::kEqual))
        return error(name.offset, "expects string for result_accuracy spec");
    if (name.text == "mode") {
        Token mode = m_lexer.next();
        if (mode.kind != TokenKind::kIdentifier) return expected("ResultAccuracy type", mode);
        if (!equalsIgnoreCase(mode.text, "default") && !equalsIgnoreCase(mode.text, "highest") &&
            !equalsIgnoreCase(mode.text, "tolerance"))
            return error(mode.offset,
                         "expects ResultAccuracy type but sees: " + std::string(mode.text) +
                             ", error: Unknown accuracy mode: " + std::string(mode.text));
    } else if (name.text == "tolerance") {
        Token inner = m_lexer.next();
        if (inner.kind != TokenKind::kLbrace)
            return expected("'{' to start result accuracy list", inner);
        if (!m_lexer.consumeIf(TokenKind::kRbrace)) {
            while (true) {
                Token field = m_lexer.next();
                if (field.kind != TokenKind::kIdentifier || !m_lexer.consumeIf(TokenKind::kEqual))
                    return error(field.offset, "expects string for result_accuracy tolerance type");
                if (field.text != "ulps" && field.text != "rtol" && field.text != "atol")
                    return error(field.offset,
                                 "invalid attribute name: " + std::string(field.text));
                Token value = m_lexer.next();
                double number = 0;
                if ((value.kind != TokenKind::kInt && value.kind != TokenKind::kDecimal) ||
                    !parseDouble(value.text, &number))
                    return expected("decimal or integer", value);
                Token next = m_lexer.next();
                if (next.kind == TokenKind::kComma) continue;
                if (next.kind == TokenKind::kRbrace) break;
                return expected("'}' at the end of result precision", next);
            }
        }
    } else {
        return error(name.offset, "invalid attribute name: " + std::string(name.text));
    }
    Token close = m_lexer.next();
    if (close.kind != TokenKind::kRbrace) return expected("'}' to end result_accuracy", close);
    return Status::ok();
}

// replica_groups=mesh['a'=2,'b'=2(, device_ids=(...))?] {'a', ...}
Status Parser::checkMeshReplicaGroups(std::string_view value, size_t offset) {
    size_t p = 5;  // after "mesh["
    auto skipSpaces = [&] {
        while (p < value.size() && value[p] == ' ') ++p;
    };
    auto readName = [&](std::string* name) -> bool {
        skipSpaces();
        if (p >= value.size()) return false;
        char quote = value[p];
        if (quote == '\'' || quote == '"') {
            size_t close = value.find(quote, p + 1);
            if (close == std::string_view::npos) return false;
            *name = std::string(value.substr(p + 1, close - p - 1));
            p = close + 1;
            return true;
        }
        size_t b = p;
        while (p < value.size() && isIdentifierChar(value[p])) ++p;
        *name = std::string(value.substr(b, p - b));
        return p > b;
    };
    auto readInt = [&](int64_t* v) -> bool {
        skipSpaces();
        size_t b = p;
        if (p < value.size() && value[p] == '-') ++p;
        while (p < value.size() && isDigit(value[p])) ++p;
        return parseInt64(value.substr(b, p - b), v);
    };
    std::vector<std::string> axes;
    std::vector<int64_t> sizes;
    std::string meshText;
    int64_t deviceCount = -1;
    skipSpaces();
    if (p < value.size() && value[p] != ']') {
        while (true) {
            skipSpaces();
            if (value.compare(p, 11, "device_ids=") == 0) {
                p += 11;
                skipSpaces();
                if (p >= value.size() || value[p] != '(')
                    return error(offset, "expected '(' for device_ids");
                size_t close = value.find(')', p);
                if (close == std::string_view::npos)
                    return error(offset, "expected ')' to end device_ids");
                std::string_view list = value.substr(p + 1, close - p - 1);
                p = close + 1;
                if (list.find('[') == std::string_view::npos) {
                    deviceCount = list.empty() ? 0 : 1;
                    for (char c : list) deviceCount += c == ',';
                }
            } else {
                std::string name;
                int64_t size = 0;
                if (!readName(&name) || p >= value.size() || value[p] != '=') {
                    return error(offset, "malformed mesh in replica_groups");
                }
                ++p;
                if (!readInt(&size)) return error(offset, "malformed mesh in replica_groups");
                axes.push_back(name);
                sizes.push_back(size);
            }
            skipSpaces();
            if (p < value.size() && value[p] == ',') {
                ++p;
                continue;
            }
            break;
        }
    }
    skipSpaces();
    if (p >= value.size() || value[p] != ']') return error(offset, "expected ']' to end mesh axes");
    meshText = std::string(value.substr(0, p + 1));
    ++p;
    int64_t product = 1;
    for (int64_t s : sizes) product *= s > 0 && product < (int64_t{1} << 40) ? s : 1;
    if (deviceCount >= 0 && deviceCount != product)
        return error(offset, "Expected " + std::to_string(product) +
                                 " device_ids based on mesh axes, but got " +
                                 std::to_string(deviceCount));
    skipSpaces();
    if (p >= value.size() || value[p] != '{')
        return error(offset, "expected '{' with the replica group axes after the mesh");
    ++p;
    skipSpaces();
    if (p < value.size() && value[p] == '}') return Status::ok();
    while (true) {
        std::string name;
        if (!readName(&name)) return error(offset, "malformed axis list in replica_groups");
        auto it = std::find(axes.begin(), axes.end(), name);
        if (it == axes.end()) {
            int64_t index = 0;
            if (!parseInt64(name, &index))
                return error(offset, "axis '" + name +
                                         "' is not a valid axis name or index in mesh " + meshText);
            if (index < 0 || index >= static_cast<int64_t>(axes.size()))
                return error(offset, "axis index " + name + " is out of bounds for mesh " +
                                         meshText + " which has " + std::to_string(axes.size()) +
                                         " axes");
        }
        // Sub-axis `:(pre)size`.
        if (p < value.size() && value[p] == ':') {
            ++p;
            while (p < value.size() && value[p] != ',' && value[p] != '}') ++p;
        }
        skipSpaces();
        if (p < value.size() && value[p] == ',') {
            ++p;
            continue;
        }
        if (p < value.size() && value[p] == '}') return Status::ok();
        return error(offset, "malformed axis list in replica_groups");
    }
}

// debug_attributes={ {"name"}:({log_mode=..., callback_id=..., ...}), ... }
Status Parser::checkDebugAttributes(std::string_view value, size_t offset) {
    size_t pos = 0;
    while ((pos = value.find("log_mode=", pos)) != std::string_view::npos) {
        pos += 9;
        size_t end = pos;
        while (end < value.size() && isIdentifierChar(value[end])) ++end;
        std::string_view mode = value.substr(pos, end - pos);
        if (mode != "default" && mode != "fusion_debugger" && mode != "disabled" && mode != "none")
            return error(offset, "Invalid debug_log_mode value: " + std::string(mode));
    }
    return Status::ok();
}

// ---------------------------------------------------------------------------
// Module header values

Status Parser::parseShapeIndex(ShapeIndex* out) {
    out->clear();
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace)
        return error(open.offset,
                     "Expects '{' at the start of ShapeIndex, got " + describeToken(open));
    while (m_lexer.peekKind() != TokenKind::kRbrace) {
        int64_t value = 0;
        HLO_RETURN_IF_ERROR(parseInt64Value(&value));
        out->push_back(value);
        if (!m_lexer.consumeIf(TokenKind::kComma)) break;
    }
    Token close = m_lexer.next();
    if (close.kind != TokenKind::kRbrace)
        return error(close.offset,
                     "Expects '}' at the end of ShapeIndex, got " + describeToken(close));
    return Status::ok();
}

// input_output_alias={ {out}: (param, {index}(, must-alias|may-alias)?), ... }
Status Parser::parseAliasing(HloModule* module) {
    const std::string format =
        "Expected format: <output_shape_index>: (<input_param>, <input_param_shape_index>) OR "
        "<output_shape_index>: <input_param>";
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace)
        return error(open.offset, "Expects '{' at the start of aliasing description");
    auto& aliases = module->mutableInputOutputAliases();
    aliases.clear();
    auto expectFormat = [&](TokenKind kind) -> Status {
        Token token = m_lexer.next();
        if (token.kind != kind)
            return error(token.offset, format + ", got " + describeToken(token));
        return Status::ok();
    };
    while (m_lexer.peekKind() != TokenKind::kRbrace) {
        InputOutputAlias alias;
        HLO_RETURN_IF_ERROR(parseShapeIndex(&alias.outputIndex));
        HLO_RETURN_IF_ERROR(expectFormat(TokenKind::kColon));
        HLO_RETURN_IF_ERROR(expectFormat(TokenKind::kLparen));
        HLO_RETURN_IF_ERROR(parseInt64Value(&alias.parameterNumber));
        HLO_RETURN_IF_ERROR(expectFormat(TokenKind::kComma));
        HLO_RETURN_IF_ERROR(parseShapeIndex(&alias.parameterIndex));
        if (m_lexer.consumeIf(TokenKind::kComma)) {
            Token kind = m_lexer.next();
            if (kind.kind == TokenKind::kIdentifier && kind.text == "must-alias") {
                alias.kind = InputOutputAlias::Kind::kMustAlias;
            } else if (kind.kind == TokenKind::kIdentifier && kind.text == "may-alias") {
                alias.kind = InputOutputAlias::Kind::kMayAlias;
            } else {
                return error(kind.offset, "Unexpected aliasing kind; expected SYSTEM or USER");
            }
            alias.kindWritten = true;
        }
        HLO_RETURN_IF_ERROR(expectFormat(TokenKind::kRparen));
        aliases.push_back(std::move(alias));
        if (!m_lexer.consumeIf(TokenKind::kComma)) break;
    }
    Token close = m_lexer.next();
    if (close.kind != TokenKind::kRbrace)
        return error(close.offset,
                     "Expects '}' at the end of aliasing description, got " + describeToken(close));
    module->setHasInputOutputAliasAttribute(true);
    return Status::ok();
}

// buffer_donor={ (param, {index}), ... }
Status Parser::parseBufferDonor(HloModule* module) {
    const std::string format = "Expected format: (<input_param>, <input_param_shape_index>)";
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace)
        return error(open.offset, "Expects '{' at the start of buffer donor description");
    auto& donors = module->mutableBufferDonors();
    donors.clear();
    auto expectFormat = [&](TokenKind kind) -> Status {
        Token token = m_lexer.next();
        if (token.kind != kind)
            return error(token.offset, format + ", got " + describeToken(token));
        return Status::ok();
    };
    while (m_lexer.peekKind() != TokenKind::kRbrace) {
        BufferDonor donor;
        HLO_RETURN_IF_ERROR(expectFormat(TokenKind::kLparen));
        HLO_RETURN_IF_ERROR(parseInt64Value(&donor.parameterNumber));
        HLO_RETURN_IF_ERROR(expectFormat(TokenKind::kComma));
        HLO_RETURN_IF_ERROR(parseShapeIndex(&donor.parameterIndex));
        HLO_RETURN_IF_ERROR(expectFormat(TokenKind::kRparen));
        donors.push_back(std::move(donor));
        if (!m_lexer.consumeIf(TokenKind::kComma)) break;
    }
    Token close = m_lexer.next();
    if (close.kind != TokenKind::kRbrace)
        return error(close.offset, "Expects '}' at the end of buffer donor description, got " +
                                       describeToken(close));
    module->setHasBufferDonorAttribute(true);
    return Status::ok();
}

// entry_computation_layout={(shape, ...)->shape}
Status Parser::parseComputationLayout(ComputationLayout* out) {
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace)
        return expected("'{' at the start of the computation layout", open);
    Token paren = m_lexer.next();
    if (paren.kind != TokenKind::kLparen) return expected("'(' before parameter shape list", paren);
    out->parameters.clear();
    while (m_lexer.peekKind() != TokenKind::kRparen) {
        Shape shape;
        HLO_RETURN_IF_ERROR(parseShape(&shape));
        out->parameters.push_back(std::move(shape));
        if (m_lexer.peekKind() == TokenKind::kRparen) break;
        Token comma = m_lexer.next();
        if (comma.kind != TokenKind::kComma) return expected("',' between parameter shapes", comma);
    }
    m_lexer.next();
    Token arrow = m_lexer.next();
    if (arrow.kind != TokenKind::kArrow) return expected("'->' before result shape", arrow);
    HLO_RETURN_IF_ERROR(parseShape(&out->result));
    Token close = m_lexer.next();
    if (close.kind != TokenKind::kRbrace)
        return expected("'}' at the end of computation layouts", close);
    return Status::ok();
}

}  // namespace hloscope::hlo_parser_internal
