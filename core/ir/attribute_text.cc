#include "core/ir/attribute_text.h"

#include <cctype>

#include "core/text/hlo_lexer.h"

namespace hloscope {

size_t skipAttributeSpaces(std::string_view text, size_t pos) {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    return pos;
}

// End (exclusive) of a balanced block starting at text[pos] in "{[(".
size_t balancedBlockEnd(std::string_view text, size_t pos) {
    int depth = 0;
    bool inString = false;
    for (size_t i = pos; i < text.size(); ++i) {
        char c = text[i];
        if (inString) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                inString = false;
            }
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[' || c == '(') {
            ++depth;
        } else if (c == '}' || c == ']' || c == ')') {
            if (--depth == 0) return i + 1;
        }
    }
    return text.size();
}

std::vector<std::pair<std::string, std::string>> parseKeyValueBlock(std::string_view text) {
    std::vector<std::pair<std::string, std::string>> out;
    size_t pos = skipAttributeSpaces(text, 0);
    if (pos < text.size() && text[pos] == '{') ++pos;
    while (true) {
        pos = skipAttributeSpaces(text, pos);
        if (pos >= text.size() || text[pos] == '}') break;
        size_t keyStart = pos;
        while (pos < text.size() && text[pos] != '=' && text[pos] != ',' && text[pos] != '}') ++pos;
        std::string key(text.substr(keyStart, pos - keyStart));
        while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
        if (key.size() >= 2 && key.front() == '"' && key.back() == '"')
            key = key.substr(1, key.size() - 2);
        std::string value;
        if (pos < text.size() && text[pos] == '=') {
            pos = skipAttributeSpaces(text, pos + 1);
            if (pos < text.size() && text[pos] == '"') {
                ++pos;
                while (pos < text.size() && text[pos] != '"') {
                    if (text[pos] == '\\' && pos + 1 < text.size()) ++pos;
                    value += text[pos++];
                }
                ++pos;
            } else if (pos < text.size() && (text[pos] == '{' || text[pos] == '[' || text[pos] == '(')) {
                size_t end = balancedBlockEnd(text, pos);
                value = std::string(text.substr(pos, end - pos));
                pos = end;
            } else {
                size_t start = pos;
                while (pos < text.size() && text[pos] != ',' && text[pos] != '}') ++pos;
                value = std::string(text.substr(start, pos - start));
                while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
                    value.pop_back();
            }
        }
        out.emplace_back(std::move(key), std::move(value));
        pos = skipAttributeSpaces(text, pos);
        if (pos < text.size() && text[pos] == ',') ++pos;
        else if (pos < text.size() && text[pos] != '}') ++pos;  // tolerate junk
    }
    return out;
}

std::optional<std::string> frontendAttribute(const HloInstruction& instruction,
                                             std::string_view key) {
    auto text = instruction.attribute("frontend_attributes");
    if (!text) return std::nullopt;
    for (auto& [k, v] : parseKeyValueBlock(*text))
        if (k == key) return v;
    return std::nullopt;
}

std::string unquoteAttributeString(std::string_view text) {
    std::string out;
    if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
        hlo_lexer_util::unescapeString(text, &out))
        return out;
    return std::string(text);
}

}  // namespace hloscope
