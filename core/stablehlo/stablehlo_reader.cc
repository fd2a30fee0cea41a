#include "core/stablehlo/stablehlo_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace hloscope::stablehlo {
namespace {

constexpr int kMaxDepth = 128;

bool isIdStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}
bool isSuffixChar(char c) { return isIdChar(c) || c == '-'; }

}  // namespace

LineIndex::LineIndex(std::string_view text) {
    m_lineStarts.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n') m_lineStarts.push_back(i + 1);
}

TextPos LineIndex::at(size_t offset) const {
    auto it = std::upper_bound(m_lineStarts.begin(), m_lineStarts.end(), offset);
    size_t line = static_cast<size_t>(it - m_lineStarts.begin());
    TextPos pos;
    pos.line = static_cast<int>(line);
    pos.column = static_cast<int>(offset - m_lineStarts[line - 1] + 1);
    return pos;
}

Reader::Reader(std::string_view text, size_t begin, size_t end, const std::string& fileName,
               const LineIndex& lines)
    : m_text(text), m_pos(begin), m_end(std::min(end, text.size())), m_fileName(fileName),
      m_lines(lines) {}

SourceLocation Reader::location(TextPos pos) const {
    return SourceLocation{m_fileName, pos.line, pos.column};
}

// ---------------------------------------------------------------------------
// Lexical helpers

void Reader::skipTrivia() {
    while (m_pos < m_end) {
        char c = m_text[m_pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            ++m_pos;
            continue;
        }
        if (c == '/' && m_pos + 1 < m_end && m_text[m_pos + 1] == '/') {
            while (m_pos < m_end && m_text[m_pos] != '\n') ++m_pos;
            continue;
        }
        // `loc(...)` annotations may follow almost anything; they carry no
        // semantics for the import.
        if (c == 'l' && lookingAt("loc(") &&
            (m_pos == 0 || !isSuffixChar(m_text[m_pos - 1]))) {
            m_pos += 3;
            if (!skipBalanced().isOk()) m_pos = m_end;
            continue;
        }
        break;
    }
}

bool Reader::atEnd() {
    skipTrivia();
    return m_pos >= m_end;
}

char Reader::peek(size_t ahead) const {
    return m_pos + ahead < m_end ? m_text[m_pos + ahead] : '\0';
}

bool Reader::lookingAt(std::string_view s) const {
    return m_pos + s.size() <= m_end && m_text.substr(m_pos, s.size()) == s;
}

bool Reader::consume(char c) {
    skipTrivia();
    if (peek() != c) return false;
    ++m_pos;
    return true;
}

bool Reader::consume(std::string_view s) {
    skipTrivia();
    if (!lookingAt(s)) return false;
    m_pos += s.size();
    return true;
}

bool Reader::consumeKeyword(std::string_view word) {
    skipTrivia();
    if (!lookingAt(word)) return false;
    if (m_pos + word.size() < m_end && isIdChar(m_text[m_pos + word.size()])) return false;
    m_pos += word.size();
    return true;
}

Status Reader::expect(char c, std::string_view what) {
    if (consume(c)) return Status::ok();
    return error("expected " + std::string(what) + ", found " + foundText());
}

Status Reader::expect(std::string_view s, std::string_view what) {
    if (consume(s)) return Status::ok();
    return error("expected " + std::string(what) + ", found " + foundText());
}

std::string_view Reader::bareIdentifier() {
    skipTrivia();
    if (!isIdStart(peek())) return {};
    size_t start = m_pos;
    while (m_pos < m_end && isIdChar(m_text[m_pos])) ++m_pos;
    return m_text.substr(start, m_pos - start);
}

std::string_view Reader::peekBareIdentifier() const {
    if (!isIdStart(peek())) return {};
    size_t end = m_pos;
    while (end < m_end && isIdChar(m_text[end])) ++end;
    return m_text.substr(m_pos, end - m_pos);
}

StatusOr<std::string> Reader::suffixId() {
    size_t start = m_pos;
    if (peek() == '"') return stringLiteral();
    while (m_pos < m_end && isSuffixChar(m_text[m_pos])) ++m_pos;
    if (m_pos == start) return error("expected a name, found " + foundText());
    return std::string(m_text.substr(start, m_pos - start));
}

StatusOr<std::string> Reader::stringLiteral() {
    skipTrivia();
    if (peek() != '"') return error("expected string literal, found " + foundText());
    TextPos start = here();
    ++m_pos;
    std::string out;
    while (m_pos < m_end) {
        char c = m_text[m_pos++];
        if (c == '"') return out;
        if (c == '\n') break;
        if (c != '\\') {
            out += c;
            continue;
        }
        if (m_pos >= m_end) break;
        char e = m_text[m_pos++];
        switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        default:
            if (std::isxdigit(static_cast<unsigned char>(e)) && m_pos < m_end &&
                std::isxdigit(static_cast<unsigned char>(m_text[m_pos]))) {
                char hex[3] = {e, m_text[m_pos++], 0};
                out += static_cast<char>(std::strtol(hex, nullptr, 16));
            } else {
                out += e;
            }
        }
    }
    return errorAt(start, "unterminated string literal");
}

StatusOr<std::string> Reader::symbolName() {
    if (peek() == '"') return stringLiteral();
    size_t start = m_pos;
    while (m_pos < m_end && isSuffixChar(m_text[m_pos])) ++m_pos;
    if (m_pos == start) return error("expected symbol name after '@', found " + foundText());
    return std::string(m_text.substr(start, m_pos - start));
}

std::string_view Reader::numberToken() {
    skipTrivia();
    size_t p = m_pos;
    if (p < m_end && (m_text[p] == '-' || m_text[p] == '+')) ++p;
    if (p >= m_end || !std::isdigit(static_cast<unsigned char>(m_text[p]))) return {};
    if (m_text[p] == '0' && p + 1 < m_end && (m_text[p + 1] == 'x' || m_text[p + 1] == 'X')) {
        p += 2;
        while (p < m_end && std::isxdigit(static_cast<unsigned char>(m_text[p]))) ++p;
    } else {
        while (p < m_end && std::isdigit(static_cast<unsigned char>(m_text[p]))) ++p;
        if (p < m_end && m_text[p] == '.') {
            ++p;
            while (p < m_end && std::isdigit(static_cast<unsigned char>(m_text[p]))) ++p;
        }
        if (p < m_end && (m_text[p] == 'e' || m_text[p] == 'E')) {
            size_t q = p + 1;
            if (q < m_end && (m_text[q] == '+' || m_text[q] == '-')) ++q;
            if (q < m_end && std::isdigit(static_cast<unsigned char>(m_text[q]))) {
                p = q;
                while (p < m_end && std::isdigit(static_cast<unsigned char>(m_text[p]))) ++p;
            }
        }
    }
    std::string_view token = m_text.substr(m_pos, p - m_pos);
    m_pos = p;
    return token;
}

StatusOr<int64_t> Reader::integer() {
    skipTrivia();
    TextPos start = here();
    std::string_view token = numberToken();
    if (token.empty()) return error("expected integer, found " + foundText());
    int64_t value = 0;
    bool negative = token.front() == '-';
    std::string_view digits = token.substr(negative || token.front() == '+' ? 1 : 0);
    int base = 10;
    if (digits.starts_with("0x") || digits.starts_with("0X")) {
        digits.remove_prefix(2);
        base = 16;
    }
    uint64_t magnitude = 0;
    auto result = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
    if (result.ec != std::errc() || result.ptr != digits.data() + digits.size())
        return errorAt(start, "expected integer, found '" + std::string(token) + "'");
    value = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
    return value;
}

Status Reader::skipBalanced() {
    skipTrivia();
    TextPos start = here();
    std::vector<char> closers;
    auto closerOf = [](char c) {
        switch (c) {
        case '(': return ')';
        case '[': return ']';
        case '{': return '}';
        case '<': return '>';
        default: return '\0';
        }
    };
    if (closerOf(peek()) == '\0') return error("expected a bracketed group, found " + foundText());
    while (m_pos < m_end) {
        char c = m_text[m_pos];
        if (c == '"') {
            HLO_ASSIGN_OR_RETURN(std::string ignored, stringLiteral());
            (void)ignored;
            continue;
        }
        if (c == '-' && peek(1) == '>') {
            m_pos += 2;
            continue;
        }
        ++m_pos;
        if (char closer = closerOf(c)) {
            closers.push_back(closer);
        } else if (!closers.empty() && c == closers.back()) {
            closers.pop_back();
            if (closers.empty()) return Status::ok();
        }
    }
    return errorAt(start, "unbalanced brackets");
}

TextPos Reader::here() const { return m_lines.at(m_pos); }
TextPos Reader::posOf(size_t offset) const { return m_lines.at(offset); }

Status Reader::error(std::string message) const { return errorAt(here(), std::move(message)); }

Status Reader::errorAt(TextPos pos, std::string message) const {
    return Status(StatusCode::kInvalidArgument, std::move(message), location(pos));
}

std::string Reader::foundText() const {
    if (m_pos >= m_end) return "end of input";
    size_t end = m_pos;
    if (isSuffixChar(m_text[end])) {
        while (end < m_end && end - m_pos < 24 && isSuffixChar(m_text[end])) ++end;
    } else {
        ++end;
    }
    return "'" + std::string(m_text.substr(m_pos, end - m_pos)) + "'";
}

Status Reader::enter() {
    if (++m_depth > kMaxDepth) {
        --m_depth;
        return error("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    return Status::ok();
}

// ---------------------------------------------------------------------------
// Structure

StatusOr<ModuleAst> Reader::readModule() {
    ModuleAst module;
    skipTrivia();
    module.pos = here();
    while (!atEnd()) HLO_RETURN_IF_ERROR(readTopLevelItem(module));
    return module;
}

Status Reader::readTopLevelItem(ModuleAst& module) {
    skipTrivia();
    char c = peek();
    if (c == '#' || c == '!') return readAliasDefinition();
    TextPos start = here();
    if (consumeKeyword("module")) {
        if (module.pos.line == 0 || module.funcs.empty()) module.pos = start;
        skipTrivia();
        if (peek() == '@') {
            ++m_pos;
            HLO_ASSIGN_OR_RETURN(module.name, symbolName());
        }
        if (consumeKeyword("attributes"))
            HLO_RETURN_IF_ERROR(readAttrDict(module.attributes, '{', '}'));
        HLO_RETURN_IF_ERROR(expect('{', "'{' to open the module body"));
        return readModuleBody(module);
    }
    if (lookingAt("func.func")) return readFunc(module);
    if (c == '"') return readGenericTopLevel(module);
    return error("expected 'module' or 'func.func', found " + foundText());
}

Status Reader::readAliasDefinition() {
    skipTrivia();
    char sigil = peek();
    ++m_pos;
    HLO_ASSIGN_OR_RETURN(std::string name, suffixId());
    HLO_RETURN_IF_ERROR(expect('=', "'=' in alias definition"));
    // `#loc3 = loc(...)`: skipTrivia would swallow the value; skip it here.
    while (m_pos < m_end && (peek() == ' ' || peek() == '\t')) ++m_pos;
    if (lookingAt("loc(")) {
        m_pos += 3;
        return skipBalanced();
    }
    if (sigil == '!') {
        HLO_ASSIGN_OR_RETURN(MlirType type, readType());
        m_typeAliases[name] = std::move(type);
        return Status::ok();
    }
    HLO_ASSIGN_OR_RETURN(MlirAttr attr, readAttribute(true));
    m_attrAliases[name] = std::move(attr);
    return Status::ok();
}

Status Reader::readModuleBody(ModuleAst& module) {
    HLO_RETURN_IF_ERROR(enter());
    while (true) {
        skipTrivia();
        if (m_pos >= m_end) return error("expected '}' to close the module, found end of input");
        if (consume('}')) break;
        char c = peek();
        if (c == '#' || c == '!') {
            HLO_RETURN_IF_ERROR(readAliasDefinition());
            continue;
        }
        if (lookingAt("func.func")) {
            HLO_RETURN_IF_ERROR(readFunc(module));
            continue;
        }
        if (c == '"') {
            HLO_RETURN_IF_ERROR(readGenericTopLevel(module));
            continue;
        }
        if (lookingAt("module"))
            return Status(StatusCode::kUnimplemented, "nested modules are not supported",
                          location(here()));
        if (lookingAt("sdy.mesh") || lookingAt("\"sdy.mesh\"")) {
            // Shardy mesh declarations: `sdy.mesh @mesh = <...>`; no HLO meaning.
            while (m_pos < m_end && peek() != '\n') ++m_pos;
            continue;
        }
        return error("expected 'func.func' or '}' in module body, found " + foundText());
    }
    leave();
    return Status::ok();
}

Status Reader::readGenericTopLevel(ModuleAst& module) {
    Block block;
    HLO_RETURN_IF_ERROR(readOperation(block));
    return addGenericOp(block.ops.front(), module, 0);
}

Status Reader::addGenericOp(Op& op, ModuleAst& module, int depth) {
    if (depth > 4)
        return errorAt(op.pos, "modules nested too deeply");
    auto stringAttr = [&](std::string_view name) -> std::string {
        const MlirAttr* a = op.attr(name);
        return a != nullptr && a->kind == MlirAttr::Kind::kString ? a->str : std::string();
    };
    if (op.name == "builtin.module") {
        if (module.funcs.empty()) {
            module.pos = op.pos;
            module.name = stringAttr("sym_name");
            for (const NamedAttr& a : op.attributes)
                if (a.name != "sym_name") module.attributes.push_back(a);
        }
        for (Region& region : op.regions)
            for (Block& block : region.blocks)
                for (Op& nested : block.ops) HLO_RETURN_IF_ERROR(addGenericOp(nested, module, depth + 1));
        return Status::ok();
    }
    if (op.name != "func.func") {
        if (op.name.starts_with("sdy.")) return Status::ok();
        return Status(StatusCode::kUnimplemented,
                      "unsupported top-level operation '" + op.name + "'", location(op.pos));
    }
    Func func;
    func.pos = op.pos;
    func.name = stringAttr("sym_name");
    if (func.name.empty()) return errorAt(op.pos, "func.func without sym_name");
    std::string visibility = stringAttr("sym_visibility");
    func.visibility = visibility.empty() ? "public" : visibility;
    const MlirAttr* type = op.attr("function_type");
    if (type == nullptr || type->kind != MlirAttr::Kind::kType ||
        type->type.kind != MlirType::Kind::kFunction)
        return errorAt(op.pos, "func.func needs function_type = (...) -> (...)");
    const MlirType& fn = type->type;
    const MlirAttr* argAttrs = op.attr("arg_attrs");
    for (int i = 0; i < fn.functionInputs; ++i) {
        BlockArg arg;
        arg.type = fn.elements[static_cast<size_t>(i)];
        if (argAttrs != nullptr && static_cast<size_t>(i) < argAttrs->elements.size()) {
            const MlirAttr& dict = argAttrs->elements[static_cast<size_t>(i)];
            for (size_t f = 0; f < dict.fieldNames.size(); ++f)
                arg.attributes.push_back({dict.fieldNames[f], dict.fieldValues[f]});
        }
        func.args.push_back(std::move(arg));
    }
    for (size_t i = static_cast<size_t>(fn.functionInputs); i < fn.elements.size(); ++i) {
        func.resultTypes.push_back(fn.elements[i]);
        func.resultAttributes.emplace_back();
    }
    if (!op.regions.empty() && !op.regions.front().blocks.empty()) {
        func.hasBody = true;
        func.body = std::move(op.regions.front());
        std::vector<BlockArg>& blockArgs = func.body.blocks.front().args;
        if (blockArgs.size() != func.args.size())
            return errorAt(func.body.pos, "entry block has " + std::to_string(blockArgs.size()) +
                                              " arguments for " + std::to_string(func.args.size()) +
                                              " function inputs");
        for (size_t i = 0; i < blockArgs.size(); ++i) func.args[i].name = blockArgs[i].name;
    }
    module.funcs.push_back(std::move(func));
    return Status::ok();
}

Status Reader::readFunc(ModuleAst& module) {
    skipTrivia();
    Func func;
    func.pos = here();
    m_pos += std::string_view("func.func").size();
    func.visibility = "public";
    for (std::string_view v : {"public", "private", "nested"})
        if (consumeKeyword(v)) func.visibility = std::string(v);
    HLO_RETURN_IF_ERROR(expect('@', "'@' and the function name"));
    HLO_ASSIGN_OR_RETURN(func.name, symbolName());
    HLO_RETURN_IF_ERROR(expect('(', "'(' to open the argument list"));
    if (!consume(')')) {
        while (true) {
            BlockArg arg;
            skipTrivia();
            if (peek() == '%') {
                ++m_pos;
                HLO_ASSIGN_OR_RETURN(arg.name, suffixId());
                HLO_RETURN_IF_ERROR(expect(':', "':' and the argument type"));
            }
            HLO_ASSIGN_OR_RETURN(arg.type, readType());
            skipTrivia();
            if (peek() == '{') HLO_RETURN_IF_ERROR(readAttrDict(arg.attributes, '{', '}'));
            func.args.push_back(std::move(arg));
            if (consume(',')) continue;
            HLO_RETURN_IF_ERROR(expect(')', "',' or ')' in the argument list"));
            break;
        }
    }
    if (consume("->")) {
        // Result attributes only exist in the parenthesised form; otherwise
        // a '{' opens the body.
        auto readResult = [&](bool withAttributes) -> Status {
            HLO_ASSIGN_OR_RETURN(MlirType type, readType());
            func.resultTypes.push_back(std::move(type));
            func.resultAttributes.emplace_back();
            skipTrivia();
            if (withAttributes && peek() == '{')
                HLO_RETURN_IF_ERROR(readAttrDict(func.resultAttributes.back(), '{', '}'));
            return Status::ok();
        };
        skipTrivia();
        if (peek() == '(') {
            ++m_pos;
            if (!consume(')')) {
                while (true) {
                    HLO_RETURN_IF_ERROR(readResult(true));
                    if (consume(',')) continue;
                    HLO_RETURN_IF_ERROR(expect(')', "',' or ')' in the result list"));
                    break;
                }
            }
        } else {
            HLO_RETURN_IF_ERROR(readResult(false));
        }
    }
    if (consumeKeyword("attributes")) HLO_RETURN_IF_ERROR(readAttrDict(func.attributes, '{', '}'));
    skipTrivia();
    if (peek() == '{') {
        func.hasBody = true;
        HLO_RETURN_IF_ERROR(readRegion(func.body, &func.args));
    }
    module.funcs.push_back(std::move(func));
    return Status::ok();
}

Status Reader::readBlockArgs(std::vector<BlockArg>& args) {
    HLO_RETURN_IF_ERROR(expect('(', "'(' to open block arguments"));
    if (consume(')')) return Status::ok();
    while (true) {
        BlockArg arg;
        HLO_RETURN_IF_ERROR(expect('%', "block argument name"));
        HLO_ASSIGN_OR_RETURN(arg.name, suffixId());
        HLO_RETURN_IF_ERROR(expect(':', "':' and the block argument type"));
        HLO_ASSIGN_OR_RETURN(arg.type, readType());
        args.push_back(std::move(arg));
        if (consume(',')) continue;
        return expect(')', "',' or ')' in block arguments");
    }
}

Status Reader::readRegion(Region& region, const std::vector<BlockArg>* entryArgs) {
    HLO_RETURN_IF_ERROR(enter());
    skipTrivia();
    region.pos = here();
    HLO_RETURN_IF_ERROR(expect('{', "'{' to open a region"));
    Block current;
    if (entryArgs != nullptr) current.args = *entryArgs;
    bool labelled = false;
    while (true) {
        skipTrivia();
        if (m_pos >= m_end) return error("expected '}' to close the region, found end of input");
        if (consume('}')) break;
        if (peek() == '^') {
            if (labelled || !current.ops.empty()) {
                region.blocks.push_back(std::move(current));
                current = Block();
            }
            labelled = true;
            ++m_pos;
            HLO_ASSIGN_OR_RETURN(std::string label, suffixId());
            (void)label;
            skipTrivia();
            if (peek() == '(') {
                current.args.clear();
                HLO_RETURN_IF_ERROR(readBlockArgs(current.args));
            }
            HLO_RETURN_IF_ERROR(expect(':', "':' after the block label"));
            continue;
        }
        HLO_RETURN_IF_ERROR(readOperation(current));
    }
    region.blocks.push_back(std::move(current));
    leave();
    return Status::ok();
}

Status Reader::readValueRef(ValueRef& ref) {
    skipTrivia();
    ref.pos = here();
    if (peek() != '%') return error("expected SSA value ('%name'), found " + foundText());
    ++m_pos;
    HLO_ASSIGN_OR_RETURN(ref.name, suffixId());
    if (peek() == '#') {
        ++m_pos;
        HLO_ASSIGN_OR_RETURN(ref.index, integer());
        ref.hasIndex = true;
    }
    return Status::ok();
}

Status Reader::readOperation(Block& block) {
    HLO_RETURN_IF_ERROR(enter());
    Op op;
    skipTrivia();
    op.pos = here();
    if (peek() == '%') {
        while (true) {
            ResultGroup group;
            HLO_RETURN_IF_ERROR(expect('%', "result name"));
            HLO_ASSIGN_OR_RETURN(group.name, suffixId());
            skipTrivia();
            if (peek() == ':' && std::isdigit(static_cast<unsigned char>(peek(1)))) {
                ++m_pos;
                HLO_ASSIGN_OR_RETURN(group.count, integer());
                if (group.count < 0 || group.count > 1000000)
                    return error("bad result count " + std::to_string(group.count));
            }
            op.results.push_back(std::move(group));
            if (consume(',')) continue;
            break;
        }
        HLO_RETURN_IF_ERROR(expect('=', "'=' after the result names"));
    }
    skipTrivia();
    TextPos namePos = here();
    if (peek() == '"') {
        HLO_ASSIGN_OR_RETURN(op.name, stringLiteral());
        if (op.results.empty()) op.pos = namePos;
        HLO_RETURN_IF_ERROR(readGenericOp(op));
    } else {
        std::string_view name = bareIdentifier();
        if (name.empty()) return error("expected operation name, found " + foundText());
        op.name = std::string(name);
        HLO_RETURN_IF_ERROR(readPrettyOp(op));
    }
    block.ops.push_back(std::move(op));
    leave();
    return Status::ok();
}

Status Reader::readGenericOp(Op& op) {
    HLO_RETURN_IF_ERROR(expect('(', "'(' to open the operand list"));
    if (!consume(')')) {
        while (true) {
            ValueRef ref;
            HLO_RETURN_IF_ERROR(readValueRef(ref));
            op.operands.push_back(std::move(ref));
            if (consume(',')) continue;
            HLO_RETURN_IF_ERROR(expect(')', "',' or ')' in the operand list"));
            break;
        }
    }
    skipTrivia();
    if (peek() == '[')
        return Status(StatusCode::kUnimplemented, "operations with block successors are not supported",
                      location(here()));
    if (consume("<{")) {
        --m_pos;  // back onto '{'
        HLO_RETURN_IF_ERROR(readAttrDict(op.attributes, '{', '}'));
        HLO_RETURN_IF_ERROR(expect('>', "'>' to close the properties"));
    }
    skipTrivia();
    if (peek() == '(') {
        ++m_pos;
        if (!consume(')')) {
            while (true) {
                op.regions.emplace_back();
                HLO_RETURN_IF_ERROR(readRegion(op.regions.back()));
                if (consume(',')) continue;
                HLO_RETURN_IF_ERROR(expect(')', "',' or ')' after a region"));
                break;
            }
        }
    }
    skipTrivia();
    if (peek() == '{') HLO_RETURN_IF_ERROR(readAttrDict(op.attributes, '{', '}'));
    HLO_RETURN_IF_ERROR(expect(':', "':' and the operation's function type"));
    return readSignature(op);
}

}  // namespace hloscope::stablehlo
