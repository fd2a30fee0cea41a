// Typed reading of JSON values for the JSON reader: JSON paths, type and
// range checks, and the error messages that name the offending value.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "core/json/hlo_json_internal.h"

namespace hloscope::hlo_json_internal {

std::string quoteText(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    out += '"';
    return out;
}

std::string_view typeName(const Json& value) {
    switch (value.type()) {
        case Json::value_t::null:
            return "null";
        case Json::value_t::object:
            return "an object";
        case Json::value_t::array:
            return "an array";
        case Json::value_t::string:
            return "a string";
        case Json::value_t::boolean:
            return "a boolean";
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned:
            return "an integer";
        case Json::value_t::number_float:
            return "a floating-point number";
        case Json::value_t::binary:
            return "binary data";
        case Json::value_t::discarded:
            return "nothing";
    }
    return "an unknown value";
}

void JsonPath::appendTo(std::string& out) const {
    if (m_parent == nullptr) {
        out += '$';
        return;
    }
    m_parent->appendTo(out);
    if (m_isIndex) {
        out += '[';
        out += std::to_string(m_index);
        out += ']';
    } else if (isPlainKey(m_key)) {
        out += '.';
        out += m_key;
    } else {  // only unknown keys can be odd: `$["a.b c"]`
        out += '[';
        out += quoteText(m_key);
        out += ']';
    }
}

bool JsonPath::isPlainKey(std::string_view key) {
    if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
    for (char c : key) {
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t above = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

Status JsonReader::error(std::string path, std::string_view message) const {
    std::string text = std::move(path);
    text += ": ";
    text += message;
    return Status(StatusCode::kInvalidArgument, std::move(text), SourceLocation{m_fileName, 0, 0});
}

Status JsonReader::typeError(const JsonPath& path, std::string_view expected,
                             const Json& value) const {
    return error(path,
                 "expected " + std::string(expected) + ", got " + std::string(typeName(value)));
}

namespace {

// A SAX handler that accepts everything and records where a syntax error is;
// used only after the DOM parse failed, to report line:col.
class SyntaxErrorLocator : public nlohmann::json_sax<Json> {
public:
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::json::exception& ex) override {
        m_failed = true;
        m_position = position;
        m_message = ex.what();
        return false;
    }

    bool failed() const { return m_failed; }
    size_t position() const { return m_position; }
    const std::string& message() const { return m_message; }

private:
    bool m_failed = false;
    size_t m_position = 0;
    std::string m_message;
};

}  // namespace

SourceLocation JsonReader::locationOf(std::string_view text, size_t offset) const {
    offset = std::min(offset, text.size());
    int line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    }
    return SourceLocation{m_fileName, line, static_cast<int>(offset - lineStart) + 1};
}

Status JsonReader::checkNestingDepth(std::string_view text) const {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxNestingDepth) {
                SourceLocation location = locationOf(text, i);
                return Status(StatusCode::kInvalidArgument,
                              "$: invalid JSON at line " + std::to_string(location.line) +
                                  ", column " + std::to_string(location.column) +
                                  ": nesting deeper than " + std::to_string(kMaxNestingDepth) +
                                  " levels",
                              std::move(location));
            }
        } else if (c == ']' || c == '}') {
            if (depth > 0) --depth;
        }
    }
    return Status::ok();
}

Status JsonReader::syntaxError(std::string_view text) const {
    SyntaxErrorLocator locator;
    Json::sax_parse(text.begin(), text.end(), &locator, Json::input_format_t::json,
                    /*strict=*/true, /*ignore_comments=*/false);
    std::string message = locator.failed() ? locator.message() : "malformed document";
    // Strip nlohmann's "[json.exception.parse_error.101] " and "parse error at
    // line N, column M: " prefixes; the location goes into the SourceLocation.
    if (!message.empty() && message.front() == '[') {
        size_t close = message.find("] ");
        if (close != std::string::npos) message.erase(0, close + 2);
    }
    if (message.rfind("parse error at line ", 0) == 0) {
        size_t colon = message.find(": ");
        if (colon != std::string::npos) message.erase(0, colon + 2);
    }
    SourceLocation location{m_fileName, 0, 0};
    if (locator.failed()) {
        // nlohmann's position counts the characters read, the offending one
        // included: the 0-based offset of that character is position - 1.
        location = locationOf(text, locator.position() > 0 ? locator.position() - 1 : 0);
    }
    std::string where = location.line > 0 ? " at line " + std::to_string(location.line) +
                                                ", column " + std::to_string(location.column)
                                          : std::string();
    return Status(StatusCode::kInvalidArgument, "$: invalid JSON" + where + ": " + message,
                  std::move(location));
}

const Json* JsonReader::findKey(const Json& object, std::string_view key) {
    // Objects hold a handful of keys: a scan beats building a std::string.
    for (auto it = object.begin(); it != object.end(); ++it)
        if (it.key() == key) return &it.value();
    return nullptr;
}

Status JsonReader::expectObject(const Json& value, const JsonPath& path,
                                std::span<const std::string_view> allowedKeys) const {
    if (!value.is_object()) return typeError(path, "an object", value);
    for (auto it = value.begin(); it != value.end(); ++it) {
        const std::string& key = it.key();
        if (std::find(allowedKeys.begin(), allowedKeys.end(), key) != allowedKeys.end()) continue;
        std::string message = "unknown key " + quoteText(key);
        std::string_view best;
        size_t bestDistance = 3;  // suggest only close matches
        for (std::string_view allowed : allowedKeys) {
            size_t distance = editDistance(key, allowed);
            if (distance < bestDistance) {
                bestDistance = distance;
                best = allowed;
            }
        }
        if (!best.empty()) message += " (did you mean " + quoteText(best) + "?)";
        return error(path.key(key), message);
    }
    return Status::ok();
}

StatusOr<const Json*> JsonReader::requireKey(const Json& object, const JsonPath& path,
                                             std::string_view key) const {
    const Json* value = findKey(object, key);
    if (value == nullptr) return error(path, "missing required key " + quoteText(key));
    return value;
}

StatusOr<int64_t> JsonReader::readInt(const Json& value, const JsonPath& path) const {
    if (value.is_number_unsigned()) {
        auto v = value.get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return error(path, "integer " + std::to_string(v) + " is out of range for int64");
        return static_cast<int64_t>(v);
    }
    if (value.is_number_integer()) return value.get<int64_t>();
    return typeError(path, "an integer", value);
}

StatusOr<int64_t> JsonReader::readNonNegativeInt(const Json& value, const JsonPath& path) const {
    HLO_ASSIGN_OR_RETURN(int64_t v, readInt(value, path));
    if (v < 0) return error(path, "expected a non-negative integer, got " + std::to_string(v));
    return v;
}

StatusOr<bool> JsonReader::readBool(const Json& value, const JsonPath& path) const {
    if (!value.is_boolean()) return typeError(path, "a boolean", value);
    return value.get<bool>();
}

StatusOr<std::string> JsonReader::readString(const Json& value, const JsonPath& path) const {
    if (!value.is_string()) return typeError(path, "a string", value);
    return value.get<std::string>();
}

StatusOr<std::vector<int64_t>> JsonReader::readIntList(const Json& value,
                                                       const JsonPath& path) const {
    if (!value.is_array()) return typeError(path, "an array of integers", value);
    std::vector<int64_t> out;
    out.reserve(value.size());
    for (size_t i = 0; i < value.size(); ++i) {
        HLO_ASSIGN_OR_RETURN(int64_t v, readInt(value[i], path.index(i)));
        out.push_back(v);
    }
    return out;
}

StatusOr<std::vector<std::string>> JsonReader::readStringList(const Json& value,
                                                              const JsonPath& path) const {
    if (!value.is_array()) return typeError(path, "an array of strings", value);
    std::vector<std::string> out;
    out.reserve(value.size());
    for (size_t i = 0; i < value.size(); ++i) {
        HLO_ASSIGN_OR_RETURN(std::string s, readString(value[i], path.index(i)));
        out.push_back(std::move(s));
    }
    return out;
}

StatusOr<std::vector<HloAttribute>> JsonReader::readAttributes(const Json& value,
                                                               const JsonPath& path) const {
    if (!value.is_array())
        return typeError(path, "an array of {\"name\", \"value\"} objects", value);
    std::vector<HloAttribute> out;
    out.reserve(value.size());
    for (size_t i = 0; i < value.size(); ++i) {
        JsonPath itemPath = path.index(i);
        const Json& item = value[i];
        HLO_RETURN_IF_ERROR(expectObject(item, itemPath, {"name", "value"}));
        HLO_ASSIGN_OR_RETURN(const Json* name, requireKey(item, itemPath, "name"));
        HLO_ASSIGN_OR_RETURN(const Json* text, requireKey(item, itemPath, "value"));
        HloAttribute attr;
        HLO_ASSIGN_OR_RETURN(attr.name, readString(*name, itemPath.key("name")));
        if (attr.name.empty()) return error(itemPath.key("name"), "attribute name is empty");
        HLO_ASSIGN_OR_RETURN(attr.value, readString(*text, itemPath.key("value")));
        out.push_back(std::move(attr));
    }
    return out;
}

StatusOr<std::vector<int64_t>> JsonReader::readTriple(const Json& value, const JsonPath& path,
                                                      size_t minSize) const {
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> values, readIntList(value, path));
    if (values.size() < minSize || values.size() > 3)
        return error(path, "expected " + std::to_string(minSize) + " to 3 integers, got " +
                               std::to_string(values.size()));
    return values;
}

}  // namespace hloscope::hlo_json_internal
