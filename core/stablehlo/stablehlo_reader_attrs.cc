// Types and attributes of the MLIR text reader (see stablehlo_reader.h).
#include <cctype>
#include <charconv>

#include "core/ir/shape.h"
#include "core/stablehlo/stablehlo_reader.h"

namespace hloscope::stablehlo {
namespace {

bool isIdChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}

std::string collapseWhitespace(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    bool inString = false;
    bool pendingSpace = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (inString) {
            out += c;
            if (c == '\\' && i + 1 < text.size()) {
                out += text[++i];
            } else if (c == '"') {
                inString = false;
            }
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            pendingSpace = !out.empty();
            continue;
        }
        if (pendingSpace) {
            out += ' ';
            pendingSpace = false;
        }
        out += c;
        if (c == '"') inString = true;
    }
    return out;
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool isFloatToken(std::string_view token) {
    if (token.find("0x") != std::string_view::npos || token.find("0X") != std::string_view::npos)
        return false;
    return token.find_first_of(".eE") != std::string_view::npos;
}

}  // namespace

std::optional<PrimitiveType> elementTypeFromMlir(std::string_view name) {
    if (name == "i1") return PrimitiveType::PRED;
    std::string lower;
    auto intType = [&](std::string_view prefix, char hloPrefix) -> std::optional<PrimitiveType> {
        std::string_view bits = name.substr(prefix.size());
        if (bits.empty() || bits.size() > 2) return std::nullopt;
        for (char c : bits)
            if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
        std::string hlo = std::string(1, hloPrefix) + std::string(bits);
        return primitive_util::parse(hlo);
    };
    if (name.starts_with("ui")) return intType("ui", 'u');
    if (name.starts_with("si")) return intType("si", 's');
    if (name.starts_with("i")) return intType("i", 's');
    if (name.empty() || (name.front() != 'f' && name.front() != 'b')) return std::nullopt;
    for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto type = primitive_util::parse(lower);
    if (!type || !primitive_util::isFloatingPoint(*type)) return std::nullopt;
    return type;
}

// ---------------------------------------------------------------------------
// Types

bool Reader::atType() const {
    if (lookingAt("tensor<") || lookingAt("tuple<") || lookingAt("complex<") ||
        lookingAt("!") || lookingAt("memref<") || lookingAt("vector<"))
        return true;
    std::string_view id = peekBareIdentifier();
    if (id.empty()) return false;
    if (m_pos + id.size() < m_end && m_text[m_pos + id.size()] == '<') return false;
    return id == "index" || id == "none" || elementTypeFromMlir(id).has_value();
}

Status Reader::readTypeList(std::vector<MlirType>& types) {
    while (true) {
        HLO_ASSIGN_OR_RETURN(MlirType type, readType());
        types.push_back(std::move(type));
        if (!consume(',')) return Status::ok();
    }
}

StatusOr<MlirType> Reader::readElementType() {
    skipTrivia();
    size_t start = m_pos;
    MlirType type;
    type.kind = MlirType::Kind::kElement;
    if (lookingAt("complex<")) {
        m_pos += 8;
        HLO_ASSIGN_OR_RETURN(MlirType inner, readElementType());
        HLO_RETURN_IF_ERROR(expect('>', "'>' to close complex<...>"));
        if (inner.elementType == PrimitiveType::F32) {
            type.elementType = PrimitiveType::C64;
        } else if (inner.elementType == PrimitiveType::F64) {
            type.elementType = PrimitiveType::C128;
        } else {
            type.unsupported = "complex element type other than complex<f32>/complex<f64>";
        }
    } else if (peek() == '!') {
        ++m_pos;
        HLO_ASSIGN_OR_RETURN(std::string name, suffixId());
        if (auto it = m_typeAliases.find(name); it != m_typeAliases.end()) return it->second;
        if (peek() == '<') HLO_RETURN_IF_ERROR(skipBalanced());
        if (name.starts_with("quant."))
            type.unsupported = "quantized element type";
        else
            type.unsupported = "element type !" + name;
    } else {
        std::string_view id = bareIdentifier();
        if (id.empty()) return error("expected type, found " + foundText());
        if (auto pt = elementTypeFromMlir(id)) {
            type.elementType = *pt;
        } else {
            type.unsupported = "element type '" + std::string(id) + "'";
        }
    }
    type.text = collapseWhitespace(m_text.substr(start, m_pos - start));
    if (!type.unsupported.empty()) type.unsupported += " (" + type.text + ")";
    return type;
}

StatusOr<MlirType> Reader::readTensorType() {
    size_t start = m_pos;
    m_pos += 7;  // "tensor<"
    MlirType type;
    type.kind = MlirType::Kind::kTensor;
    while (true) {
        skipTrivia();
        char c = peek();
        if (c == '*') {
            ++m_pos;
            type.unsupported = "unranked tensor";
            if (peek() != 'x') return error("expected 'x' after '*' in tensor type");
            ++m_pos;
            continue;
        }
        if (c == '?') {
            ++m_pos;
            type.dims.push_back(Shape::kUnboundedSize);
            if (peek() != 'x') return error("expected 'x' after a dimension, found " + foundText());
            ++m_pos;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            size_t p = m_pos;
            int64_t dim = 0;
            while (p < m_end && std::isdigit(static_cast<unsigned char>(m_text[p]))) {
                if (dim > (INT64_MAX - 9) / 10) return error("dimension too large");
                dim = dim * 10 + (m_text[p] - '0');
                ++p;
            }
            if (p >= m_end || m_text[p] != 'x')
                return errorAt(posOf(p), "expected 'x' after a dimension");
            m_pos = p + 1;
            type.dims.push_back(dim);
            if (type.dims.size() > 64) return error("tensor rank above 64");
            continue;
        }
        break;
    }
    HLO_ASSIGN_OR_RETURN(MlirType element, readElementType());
    type.elementType = element.elementType;
    if (type.unsupported.empty()) type.unsupported = element.unsupported;
    if (consume(',')) {
        HLO_ASSIGN_OR_RETURN(MlirAttr encoding, readAttribute(true));
        const MlirAttr* boundsAttr = nullptr;
        if (encoding.kind == MlirAttr::Kind::kDialect && encoding.str == "stablehlo.bounds")
            boundsAttr = &encoding;
        else if (encoding.kind == MlirAttr::Kind::kDialect)
            boundsAttr = encoding.field("bounds");
        if (boundsAttr != nullptr) {
            for (const MlirAttr& b : boundsAttr->elements) {
                int64_t bound = -1;
                if (b.kind == MlirAttr::Kind::kInt) {
                    const char* last = b.number.data() + b.number.size();
                    const auto [end, ec] = std::from_chars(b.number.data(), last, bound);
                    if (ec != std::errc() || end != last)
                        return error("tensor bound " + b.number + " is not a 64-bit integer");
                }
                type.bounds.push_back(bound);
            }
            if (type.bounds.size() != type.dims.size())
                return errorAt(encoding.pos, "bounds do not match the tensor rank");
        } else if (type.unsupported.empty()) {
            type.unsupported = "tensor encoding " + encoding.text;
        }
    }
    HLO_RETURN_IF_ERROR(expect('>', "'>' to close the tensor type"));
    type.text = collapseWhitespace(m_text.substr(start, m_pos - start));
    return type;
}

StatusOr<MlirType> Reader::readType() {
    HLO_RETURN_IF_ERROR(enter());
    skipTrivia();
    size_t start = m_pos;
    MlirType type;
    if (lookingAt("tensor<")) {
        HLO_ASSIGN_OR_RETURN(type, readTensorType());
    } else if (lookingAt("tuple<")) {
        m_pos += 6;
        type.kind = MlirType::Kind::kTuple;
        if (!consume('>')) {
            while (true) {
                HLO_ASSIGN_OR_RETURN(MlirType element, readType());
                if (type.unsupported.empty()) type.unsupported = element.unsupported;
                type.elements.push_back(std::move(element));
                if (consume(',')) continue;
                HLO_RETURN_IF_ERROR(expect('>', "',' or '>' in tuple type"));
                break;
            }
        }
    } else if (lookingAt("!stablehlo.token") || lookingAt("!mhlo.token")) {
        m_pos += lookingAt("!stablehlo.token") ? 16 : 11;
        type.kind = MlirType::Kind::kToken;
    } else if (lookingAt("memref<") || lookingAt("vector<")) {
        m_pos += 6;
        HLO_RETURN_IF_ERROR(skipBalanced());
        type.kind = MlirType::Kind::kOther;
        type.unsupported = "non-tensor type";
    } else if (peek() == '(') {
        ++m_pos;
        type.kind = MlirType::Kind::kFunction;
        if (!consume(')')) {
            HLO_RETURN_IF_ERROR(readTypeList(type.elements));
            HLO_RETURN_IF_ERROR(expect(')', "')' in function type"));
        }
        type.functionInputs = static_cast<int>(type.elements.size());
        HLO_RETURN_IF_ERROR(expect("->", "'->' in function type"));
        skipTrivia();
        if (peek() == '(') {
            ++m_pos;
            if (!consume(')')) {
                HLO_RETURN_IF_ERROR(readTypeList(type.elements));
                HLO_RETURN_IF_ERROR(expect(')', "')' in function type"));
            }
        } else {
            HLO_ASSIGN_OR_RETURN(MlirType result, readType());
            type.elements.push_back(std::move(result));
        }
    } else {
        HLO_ASSIGN_OR_RETURN(type, readElementType());
    }
    if (type.text.empty()) type.text = collapseWhitespace(m_text.substr(start, m_pos - start));
    leave();
    return type;
}

// ---------------------------------------------------------------------------
// Attributes

void Reader::finishText(MlirAttr& attr, size_t start) const {
    if (attr.kind == MlirAttr::Kind::kDense && m_pos - start > 256) {
        attr.text = "dense<...>";
        return;
    }
    attr.text = collapseWhitespace(m_text.substr(start, m_pos - start));
}

Status Reader::readAttrDict(std::vector<NamedAttr>& attrs, char open, char close) {
    HLO_RETURN_IF_ERROR(enter());
    std::string what = "' to open an attribute dictionary";
    what.insert(what.begin(), {'\'', open});
    HLO_RETURN_IF_ERROR(expect(open, what));
    if (consume(close)) {
        leave();
        return Status::ok();
    }
    while (true) {
        skipTrivia();
        std::string name;
        if (peek() == '"') {
            HLO_ASSIGN_OR_RETURN(name, stringLiteral());
        } else {
            name = std::string(bareIdentifier());
            if (name.empty()) return error("expected attribute name, found " + foundText());
        }
        MlirAttr value;
        if (consume('=')) {
            HLO_ASSIGN_OR_RETURN(value, readAttribute(true));
        } else {
            value.kind = MlirAttr::Kind::kUnit;
            value.pos = here();
        }
        attrs.push_back({std::move(name), std::move(value)});
        if (consume(',')) continue;
        HLO_RETURN_IF_ERROR(expect(close, std::string("',' or '") + close + "' in attribute dictionary"));
        break;
    }
    leave();
    return Status::ok();
}

Status Reader::readDenseElements(DenseData& data, int depth, std::vector<int64_t>& shape) {
    if (depth > 64) return error("dense literal nested too deeply");
    skipTrivia();
    char c = peek();
    if (c == '[') {
        ++m_pos;
        data.bracketed = true;
        int64_t count = 0;
        if (!consume(']')) {
            while (true) {
                HLO_RETURN_IF_ERROR(readDenseElements(data, depth + 1, shape));
                ++count;
                if (consume(',')) continue;
                HLO_RETURN_IF_ERROR(expect(']', "',' or ']' in dense literal"));
                break;
            }
        }
        size_t d = static_cast<size_t>(depth);
        if (shape.size() <= d) shape.resize(d + 1, -1);
        if (shape[d] == -1) {
            shape[d] = count;
        } else if (shape[d] != count) {
            return error("dense literal is not rectangular: " + std::to_string(count) +
                         " elements where " + std::to_string(shape[d]) + " were expected");
        }
        return Status::ok();
    }
    auto scalar = [&]() -> StatusOr<std::string> {
        if (consumeKeyword("true")) return std::string("true");
        if (consumeKeyword("false")) return std::string("false");
        std::string_view token = numberToken();
        if (token.empty()) return error("expected dense element value, found " + foundText());
        return std::string(token);
    };
    if (c == '(') {
        ++m_pos;
        HLO_ASSIGN_OR_RETURN(std::string re, scalar());
        HLO_RETURN_IF_ERROR(expect(',', "',' in complex value"));
        HLO_ASSIGN_OR_RETURN(std::string im, scalar());
        HLO_RETURN_IF_ERROR(expect(')', "')' to close complex value"));
        data.values.push_back(std::move(re));
        data.values.push_back(std::move(im));
        data.complexPairs = true;
        return Status::ok();
    }
    HLO_ASSIGN_OR_RETURN(std::string value, scalar());
    data.values.push_back(std::move(value));
    return Status::ok();
}

StatusOr<MlirAttr> Reader::readDense() {
    MlirAttr attr;
    attr.kind = MlirAttr::Kind::kDense;
    attr.pos = here();
    m_pos += 6;  // "dense<"
    skipTrivia();
    if (consume('>')) {
        attr.dense.bracketed = true;
        attr.dense.nestedShape = {0};
        return attr;
    }
    if (peek() == '"') {
        TextPos stringPos = here();
        HLO_ASSIGN_OR_RETURN(std::string hex, stringLiteral());
        if (!hex.starts_with("0x") && !hex.starts_with("0X"))
            return errorAt(stringPos, "expected hexadecimal dense data \"0x...\"");
        if (hex.size() % 2 != 0) return errorAt(stringPos, "odd number of hex digits in dense data");
        attr.dense.hex = true;
        attr.dense.bytes.reserve(hex.size() / 2 - 1);
        for (size_t i = 2; i < hex.size(); i += 2) {
            int hi = hexValue(hex[i]), lo = hexValue(hex[i + 1]);
            if (hi < 0 || lo < 0) return errorAt(stringPos, "invalid hex digit in dense data");
            attr.dense.bytes += static_cast<char>(hi * 16 + lo);
        }
    } else {
        std::vector<int64_t> shape;
        HLO_RETURN_IF_ERROR(readDenseElements(attr.dense, 0, shape));
        attr.dense.nestedShape = std::move(shape);
    }
    HLO_RETURN_IF_ERROR(expect('>', "'>' to close dense<...>"));
    return attr;
}

StatusOr<MlirAttr> Reader::readDenseArray() {
    MlirAttr attr;
    attr.kind = MlirAttr::Kind::kDenseArray;
    attr.pos = here();
    m_pos += 6;  // "array<"
    HLO_ASSIGN_OR_RETURN(attr.type, readElementType());
    if (consume(':')) {
        while (true) {
            MlirAttr e;
            e.pos = here();
            if (consumeKeyword("true")) {
                e.kind = MlirAttr::Kind::kBool;
                e.boolValue = true;
            } else if (consumeKeyword("false")) {
                e.kind = MlirAttr::Kind::kBool;
            } else {
                std::string_view token = numberToken();
                if (token.empty()) return error("expected array element, found " + foundText());
                e.kind = isFloatToken(token) ? MlirAttr::Kind::kFloat : MlirAttr::Kind::kInt;
                e.number = std::string(token);
            }
            attr.elements.push_back(std::move(e));
            if (!consume(',')) break;
        }
    }
    HLO_RETURN_IF_ERROR(expect('>', "'>' to close array<...>"));
    return attr;
}

StatusOr<MlirAttr> Reader::readArrayAttr(bool allowTypeSuffix) {
    MlirAttr attr;
    attr.kind = MlirAttr::Kind::kArray;
    attr.pos = here();
    ++m_pos;  // '['
    if (consume(']')) return attr;
    while (true) {
        HLO_ASSIGN_OR_RETURN(MlirAttr e, readAttribute(allowTypeSuffix));
        attr.elements.push_back(std::move(e));
        if (consume(',')) continue;
        HLO_RETURN_IF_ERROR(expect(']', "',' or ']' in array attribute"));
        break;
    }
    return attr;
}

StatusOr<MlirAttr> Reader::readConvDims() {
    // [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
    MlirAttr attr;
    attr.kind = MlirAttr::Kind::kConvDims;
    attr.pos = here();
    size_t start = m_pos;
    ConvolutionDimensionNumbers& dn = attr.conv;
    auto readLabels = [&](std::vector<std::string>& labels) -> Status {
        HLO_RETURN_IF_ERROR(expect('[', "'[' in convolution dimension numbers"));
        while (true) {
            skipTrivia();
            size_t p = m_pos;
            while (p < m_end && std::isalnum(static_cast<unsigned char>(m_text[p]))) ++p;
            if (p == m_pos) return error("expected dimension label, found " + foundText());
            labels.emplace_back(m_text.substr(m_pos, p - m_pos));
            m_pos = p;
            if (consume(',')) continue;
            return expect(']', "',' or ']' in convolution dimension numbers");
        }
    };
    std::vector<std::string> in, kernel, out;
    HLO_RETURN_IF_ERROR(readLabels(in));
    HLO_RETURN_IF_ERROR(expect('x', "'x' between input and kernel dimensions"));
    HLO_RETURN_IF_ERROR(readLabels(kernel));
    HLO_RETURN_IF_ERROR(expect("->", "'->' before output dimensions"));
    HLO_RETURN_IF_ERROR(readLabels(out));
    auto assign = [&](const std::vector<std::string>& labels, char a, char b, int64_t& da,
                      int64_t& db, std::vector<int64_t>& spatial) -> Status {
        spatial.assign(labels.size() >= 2 ? labels.size() - 2 : 0, -1);
        bool seenA = false, seenB = false;
        for (size_t i = 0; i < labels.size(); ++i) {
            const std::string& l = labels[i];
            if (l.size() == 1 && l[0] == a && !seenA) {
                da = static_cast<int64_t>(i);
                seenA = true;
            } else if (l.size() == 1 && l[0] == b && !seenB) {
                db = static_cast<int64_t>(i);
                seenB = true;
            } else {
                size_t k = 0;
                for (char ch : l) {
                    if (!std::isdigit(static_cast<unsigned char>(ch)) || k > 1000)
                        return errorAt(attr.pos, "bad convolution dimension label '" + l + "'");
                    k = k * 10 + static_cast<size_t>(ch - '0');
                }
                if (k >= spatial.size() || spatial[k] != -1)
                    return errorAt(attr.pos, "bad convolution dimension label '" + l + "'");
                spatial[k] = static_cast<int64_t>(i);
            }
        }
        if (!seenA || !seenB)
            return errorAt(attr.pos, std::string("convolution dimension numbers need '") + a +
                                         "' and '" + b + "'");
        return Status::ok();
    };
    HLO_RETURN_IF_ERROR(assign(in, 'b', 'f', dn.inputBatchDimension, dn.inputFeatureDimension,
                               dn.inputSpatialDimensions));
    HLO_RETURN_IF_ERROR(assign(kernel, 'i', 'o', dn.kernelInputFeatureDimension,
                               dn.kernelOutputFeatureDimension, dn.kernelSpatialDimensions));
    HLO_RETURN_IF_ERROR(assign(out, 'b', 'f', dn.outputBatchDimension, dn.outputFeatureDimension,
                               dn.outputSpatialDimensions));
    finishText(attr, start);
    return attr;
}

StatusOr<MlirAttr> Reader::readDialectBody(MlirAttr attr) {
    // At '<': `key = value, ...` or positional values; anything else is kept
    // opaque.
    size_t save = m_pos;
    int depth = m_depth;
    auto body = [&]() -> Status {
        ++m_pos;  // '<'
        if (consume('>')) return Status::ok();
        while (true) {
            skipTrivia();
            std::string_view id = peekBareIdentifier();
            size_t after = m_pos + id.size();
            while (after < m_end && (m_text[after] == ' ' || m_text[after] == '\n')) ++after;
            if (!id.empty() && after < m_end && m_text[after] == '=') {
                m_pos = after + 1;
                HLO_ASSIGN_OR_RETURN(MlirAttr value, readAttribute(true));
                attr.fieldNames.emplace_back(id);
                attr.fieldValues.push_back(std::move(value));
            } else {
                HLO_ASSIGN_OR_RETURN(MlirAttr value, readAttribute(true));
                attr.elements.push_back(std::move(value));
            }
            if (consume(',')) continue;
            return expect('>', "',' or '>'");
        }
    };
    Status status = body();
    if (!status.isOk()) {
        m_pos = save;
        m_depth = depth;
        attr.fieldNames.clear();
        attr.fieldValues.clear();
        attr.elements.clear();
        HLO_RETURN_IF_ERROR(skipBalanced());
        attr.kind = MlirAttr::Kind::kOpaque;
    }
    return attr;
}

StatusOr<MlirAttr> Reader::readHashAttribute() {
    MlirAttr attr;
    attr.pos = here();
    ++m_pos;  // '#'
    size_t start = m_pos;
    while (m_pos < m_end && (isIdChar(m_text[m_pos]) || m_text[m_pos] == '-')) ++m_pos;
    std::string name(m_text.substr(start, m_pos - start));
    if (name.empty()) return error("expected attribute name after '#'");
    if (peek() != '<') {
        auto it = m_attrAliases.find(name);
        if (it == m_attrAliases.end())
            return errorAt(attr.pos, "undefined attribute alias '#" + name + "'");
        return it->second;
    }
    attr.str = name;
    if (name.find('.') == std::string::npos) {
        // `#stablehlo<comparison_direction LT>`
        size_t save = m_pos;
        ++m_pos;
        std::string kind(bareIdentifier());
        std::string value(bareIdentifier());
        if (!kind.empty() && !value.empty() && consume('>')) {
            attr.kind = MlirAttr::Kind::kEnum;
            attr.enumKind = kind;
            attr.str = value;
            return attr;
        }
        m_pos = save;
        HLO_RETURN_IF_ERROR(skipBalanced());
        attr.kind = MlirAttr::Kind::kOpaque;
        return attr;
    }
    if (name == "stablehlo.conv" || name == "mhlo.conv") {
        size_t save = m_pos;
        ++m_pos;
        skipTrivia();
        if (peek() == '[') {
            HLO_ASSIGN_OR_RETURN(MlirAttr conv, readConvDims());
            HLO_RETURN_IF_ERROR(expect('>', "'>' to close #stablehlo.conv"));
            conv.pos = attr.pos;
            return conv;
        }
        if (consumeKeyword("raw")) {
            // `#stablehlo.conv<raw input_batch_dimension = 0, ...>`:
            // readDialectBody skips one character (normally '<') first.
            --m_pos;
            attr.kind = MlirAttr::Kind::kDialect;
            return readDialectBody(std::move(attr));
        }
        m_pos = save;
    }
    attr.kind = MlirAttr::Kind::kDialect;
    return readDialectBody(std::move(attr));
}

StatusOr<MlirAttr> Reader::readAttribute(bool allowTypeSuffix) {
    HLO_RETURN_IF_ERROR(enter());
    skipTrivia();
    size_t start = m_pos;
    MlirAttr attr;
    attr.pos = here();
    char c = peek();
    if (lookingAt("dense<")) {
        HLO_ASSIGN_OR_RETURN(attr, readDense());
    } else if (lookingAt("dense_resource<")) {
        m_pos += 14;
        HLO_RETURN_IF_ERROR(skipBalanced());
        attr.kind = MlirAttr::Kind::kOpaque;
        attr.str = "dense_resource";
    } else if (lookingAt("array<")) {
        HLO_ASSIGN_OR_RETURN(attr, readDenseArray());
    } else if (c == '[') {
        HLO_ASSIGN_OR_RETURN(attr, readArrayAttr(allowTypeSuffix));
    } else if (c == '{') {
        std::vector<NamedAttr> fields;
        HLO_RETURN_IF_ERROR(readAttrDict(fields, '{', '}'));
        attr.kind = MlirAttr::Kind::kDict;
        for (NamedAttr& f : fields) {
            attr.fieldNames.push_back(std::move(f.name));
            attr.fieldValues.push_back(std::move(f.value));
        }
    } else if (c == '"') {
        attr.kind = MlirAttr::Kind::kString;
        HLO_ASSIGN_OR_RETURN(attr.str, stringLiteral());
    } else if (c == '@') {
        ++m_pos;
        attr.kind = MlirAttr::Kind::kSymbol;
        HLO_ASSIGN_OR_RETURN(attr.str, symbolName());
        while (lookingAt("::@")) {
            m_pos += 3;
            HLO_ASSIGN_OR_RETURN(std::string nested, symbolName());
            attr.str += "::" + nested;
        }
    } else if (c == '#') {
        HLO_ASSIGN_OR_RETURN(attr, readHashAttribute());
    } else if (c == '<') {
        attr.kind = MlirAttr::Kind::kDialect;
        HLO_ASSIGN_OR_RETURN(attr, readDialectBody(std::move(attr)));
    } else if (c == '?') {
        ++m_pos;
        attr.kind = MlirAttr::Kind::kIdent;
        attr.str = "?";
    } else if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
        std::string_view token = numberToken();
        if (token.empty()) return error("expected attribute value, found " + foundText());
        attr.kind = isFloatToken(token) ? MlirAttr::Kind::kFloat : MlirAttr::Kind::kInt;
        attr.number = std::string(token);
    } else if (c == '(' || c == '!' || atType()) {
        attr.kind = MlirAttr::Kind::kType;
        HLO_ASSIGN_OR_RETURN(attr.type, readType());
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::string_view id = peekBareIdentifier();
        if (id == "true" || id == "false") {
            m_pos += id.size();
            attr.kind = MlirAttr::Kind::kBool;
            attr.boolValue = id == "true";
        } else if (id == "unit") {
            m_pos += id.size();
            attr.kind = MlirAttr::Kind::kUnit;
        } else if (m_pos + id.size() < m_end && m_text[m_pos + id.size()] == '<') {
            // affine_map<...>, distinct[..]<...> and other opaque forms.
            m_pos += id.size();
            HLO_RETURN_IF_ERROR(skipBalanced());
            attr.kind = MlirAttr::Kind::kOpaque;
            attr.str = std::string(id);
        } else {
            m_pos += id.size();
            attr.kind = MlirAttr::Kind::kIdent;
            attr.str = std::string(id);
        }
    } else {
        return error("expected attribute value, found " + foundText());
    }
    if (allowTypeSuffix &&
        (attr.kind == MlirAttr::Kind::kInt || attr.kind == MlirAttr::Kind::kFloat ||
         attr.kind == MlirAttr::Kind::kDense || attr.kind == MlirAttr::Kind::kBool ||
         attr.kind == MlirAttr::Kind::kOpaque)) {
        skipTrivia();
        if (peek() == ':' && peek(1) != ':') {
            ++m_pos;
            HLO_ASSIGN_OR_RETURN(attr.type, readType());
            HLO_RETURN_IF_ERROR(checkDenseCount(attr));
        }
    }
    finishText(attr, start);
    leave();
    return attr;
}

Status Reader::checkDenseCount(const MlirAttr& attr) {
    if (attr.kind != MlirAttr::Kind::kDense || attr.dense.hex || !attr.dense.bracketed ||
        attr.dense.complexPairs || attr.type.kind != MlirType::Kind::kTensor)
        return Status::ok();
    int64_t count = 1;
    for (int64_t d : attr.type.dims) {
        if (d < 0) return Status::ok();  // a dynamic dimension: nothing to compare
        if (d > 0 && count > (int64_t{1} << 40) / d) return Status::ok();  // far past any literal
        count *= d;
    }
    const auto values = static_cast<int64_t>(attr.dense.values.size());
    if (values == count) return Status::ok();
    return errorAt(attr.pos, "dense literal has " + std::to_string(values) +
                                " elements but its type " + attr.type.text + " holds " +
                                std::to_string(count));
}

}  // namespace hloscope::stablehlo
