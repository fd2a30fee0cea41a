// Internals of the JSON reader and writer (core/json/hlo_json.h), shared by
// hlo_json_*.cc and not part of the library's interface.
//
// The typed instruction attributes and the small fixed-shape objects of the
// format (window dimensions, dimension numbers, stack-frame entries, buffer
// donors) are described by tables in hlo_json_attributes.cc: each entry names
// a JSON key and the codec that reads and writes its value, so that the
// reader and the writer walk the same list in the same order.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope::hlo_json_internal {

using Json = nlohmann::ordered_json;

inline constexpr std::string_view kFormatName = "hloscope-module";
inline constexpr int64_t kFormatVersion = 1;
// Import rejects deeper JSON before building a DOM.
inline constexpr int kMaxNestingDepth = 64;

// `text` in double quotes, with `"` and `\` escaped and newlines as `\n`.
std::string quoteText(std::string_view text);

// "an object", "a string", ... for type errors.
std::string_view typeName(const Json& value);

// Levenshtein distance, for "did you mean" hints on unknown keys.
size_t editDistance(std::string_view a, std::string_view b);

// A JSON path such as `$.computations[2].instructions[5].shape`, built
// lazily: each level points at its parent on the stack and the text is
// rendered only for an error message. Derive paths only from named (lvalue)
// paths, so that no level outlives its parent.
class JsonPath {
public:
    static JsonPath root() { return JsonPath(); }

    JsonPath key(std::string_view key) const& { return JsonPath(this, key, 0, false); }
    JsonPath index(size_t index) const& { return JsonPath(this, {}, index, true); }
    JsonPath key(std::string_view) const&& = delete;
    JsonPath index(size_t) const&& = delete;

    std::string toString() const {
        std::string out;
        appendTo(out);
        return out;
    }

private:
    JsonPath() = default;
    JsonPath(const JsonPath* parent, std::string_view key, size_t index, bool isIndex)
        : m_parent(parent), m_key(key), m_index(index), m_isIndex(isIndex) {}

    void appendTo(std::string& out) const;
    static bool isPlainKey(std::string_view key);

    const JsonPath* m_parent = nullptr;
    std::string_view m_key;
    size_t m_index = 0;
    bool m_isIndex = false;
};

// Typed reads of JSON values. Every error is a Status(kInvalidArgument)
// located in the file being read, whose message starts with the JSON path of
// the offending value.
class JsonReader {
public:
    explicit JsonReader(std::string fileName) : m_fileName(std::move(fileName)) {}

    const std::string& fileName() const { return m_fileName; }

    Status error(const JsonPath& path, std::string_view message) const {
        return error(path.toString(), message);
    }
    Status error(std::string path, std::string_view message) const;
    Status typeError(const JsonPath& path, std::string_view expected, const Json& value) const;

    // `value` must be an object whose keys are all in `allowedKeys`; an
    // unknown key's error suggests the first closest allowed key.
    Status expectObject(const Json& value, const JsonPath& path,
                        std::span<const std::string_view> allowedKeys) const;
    Status expectObject(const Json& value, const JsonPath& path,
                        std::initializer_list<std::string_view> allowedKeys) const {
        return expectObject(
            value, path,
            std::span<const std::string_view>(allowedKeys.begin(), allowedKeys.size()));
    }
    StatusOr<const Json*> requireKey(const Json& object, const JsonPath& path,
                                     std::string_view key) const;
    static const Json* findKey(const Json& object, std::string_view key);

    StatusOr<int64_t> readInt(const Json& value, const JsonPath& path) const;
    StatusOr<int64_t> readNonNegativeInt(const Json& value, const JsonPath& path) const;
    StatusOr<bool> readBool(const Json& value, const JsonPath& path) const;
    StatusOr<std::string> readString(const Json& value, const JsonPath& path) const;
    StatusOr<std::vector<int64_t>> readIntList(const Json& value, const JsonPath& path) const;
    StatusOr<std::vector<std::string>> readStringList(const Json& value,
                                                      const JsonPath& path) const;
    // An array of minSize to 3 integers.
    StatusOr<std::vector<int64_t>> readTriple(const Json& value, const JsonPath& path,
                                              size_t minSize) const;
    StatusOr<std::vector<HloAttribute>> readAttributes(const Json& value,
                                                       const JsonPath& path) const;

    // File location of a 0-based byte offset into `text`.
    SourceLocation locationOf(std::string_view text, size_t offset) const;
    // Rejects nesting deeper than kMaxNestingDepth.
    Status checkNestingDepth(std::string_view text) const;
    // The error for a `text` that nlohmann failed to parse, with line:col.
    Status syntaxError(std::string_view text) const;

private:
    std::string m_fileName;
};

// Writer helpers.
Json intList(const std::vector<int64_t>& values);
Json attributeList(const std::vector<HloAttribute>& attributes);

// ----------------------------------------------------------------------------
// Fixed-shape objects: one JsonField per key, in export order.
// ----------------------------------------------------------------------------

template <typename T>
struct JsonField {
    enum class Kind : uint8_t { kInt, kRequiredInt, kIntList, kRequiredIntList, kBool };

    static constexpr JsonField optionalInt(std::string_view key, int64_t T::*member) {
        return {key, Kind::kInt, member, nullptr, nullptr};
    }
    static constexpr JsonField requiredInt(std::string_view key, int64_t T::*member) {
        return {key, Kind::kRequiredInt, member, nullptr, nullptr};
    }
    static constexpr JsonField optionalIntList(std::string_view key,
                                               std::vector<int64_t> T::*member) {
        return {key, Kind::kIntList, nullptr, member, nullptr};
    }
    static constexpr JsonField requiredIntList(std::string_view key,
                                               std::vector<int64_t> T::*member) {
        return {key, Kind::kRequiredIntList, nullptr, member, nullptr};
    }
    static constexpr JsonField optionalBool(std::string_view key, bool T::*member) {
        return {key, Kind::kBool, nullptr, nullptr, member};
    }

    bool required() const { return kind == Kind::kRequiredInt || kind == Kind::kRequiredIntList; }

    std::string_view key;
    Kind kind;
    int64_t T::*intMember;
    std::vector<int64_t> T::*listMember;
    bool T::*boolMember;
};

// An object type of the format: its fields in export order. Import reads
// the fields in that order too, or, with `requiredFirst`, the required
// fields first and then the others.
template <typename T>
class JsonStruct {
public:
    JsonStruct(std::initializer_list<JsonField<T>> fields, bool requiredFirst = false)
        : m_fields(fields), m_requiredFirst(requiredFirst) {
        for (const JsonField<T>& field : m_fields) m_keys.push_back(field.key);
    }

    std::span<const JsonField<T>> fields() const { return m_fields; }
    std::span<const std::string_view> keys() const { return m_keys; }
    bool requiredFirst() const { return m_requiredFirst; }

private:
    std::vector<JsonField<T>> m_fields;
    std::vector<std::string_view> m_keys;
    bool m_requiredFirst;
};

const JsonStruct<WindowDimension>& windowDimensionStruct();
const JsonStruct<ConvolutionDimensionNumbers>& convolutionDimensionNumbersStruct();
const JsonStruct<DotDimensionNumbers>& dotDimensionNumbersStruct();
const JsonStruct<GatherDimensionNumbers>& gatherDimensionNumbersStruct();
const JsonStruct<ScatterDimensionNumbers>& scatterDimensionNumbersStruct();
const JsonStruct<FileLocation>& fileLocationStruct();
const JsonStruct<StackFrame>& stackFrameStruct();
const JsonStruct<BufferDonor>& bufferDonorStruct();

template <typename T>
Status readStructField(const JsonReader& reader, const Json& object, const JsonPath& path,
                       const JsonField<T>& field, T& out) {
    using Kind = typename JsonField<T>::Kind;
    const Json* value = nullptr;
    if (field.required()) {
        HLO_ASSIGN_OR_RETURN(value, reader.requireKey(object, path, field.key));
    } else {
        value = JsonReader::findKey(object, field.key);
        if (value == nullptr) return Status::ok();
    }
    const JsonPath fieldPath = path.key(field.key);
    switch (field.kind) {
        case Kind::kInt:
        case Kind::kRequiredInt: {
            HLO_ASSIGN_OR_RETURN(out.*field.intMember, reader.readInt(*value, fieldPath));
            break;
        }
        case Kind::kIntList:
        case Kind::kRequiredIntList: {
            HLO_ASSIGN_OR_RETURN(out.*field.listMember, reader.readIntList(*value, fieldPath));
            break;
        }
        case Kind::kBool: {
            HLO_ASSIGN_OR_RETURN(out.*field.boolMember, reader.readBool(*value, fieldPath));
            break;
        }
    }
    return Status::ok();
}

// Reads an object of type T; absent optional keys keep T's defaults.
template <typename T>
StatusOr<T> readStruct(const JsonReader& reader, const Json& value, const JsonPath& path,
                       const JsonStruct<T>& type) {
    HLO_RETURN_IF_ERROR(reader.expectObject(value, path, type.keys()));
    T out{};
    for (int pass = 0; pass < (type.requiredFirst() ? 2 : 1); ++pass) {
        for (const JsonField<T>& field : type.fields()) {
            if (type.requiredFirst() && field.required() != (pass == 0)) continue;
            HLO_RETURN_IF_ERROR(readStructField(reader, value, path, field, out));
        }
    }
    return out;
}

// Writes every field of `value`, in order.
template <typename T>
Json structToJson(const T& value, const JsonStruct<T>& type) {
    using Kind = typename JsonField<T>::Kind;
    Json out = Json::object();
    for (const JsonField<T>& field : type.fields()) {
        std::string key(field.key);
        switch (field.kind) {
            case Kind::kInt:
            case Kind::kRequiredInt:
                out[key] = value.*field.intMember;
                break;
            case Kind::kIntList:
            case Kind::kRequiredIntList:
                out[key] = intList(value.*field.listMember);
                break;
            case Kind::kBool:
                out[key] = value.*field.boolMember;
                break;
        }
    }
    return out;
}

// ----------------------------------------------------------------------------
// Typed instruction attributes (HloExtraAttributes)
// ----------------------------------------------------------------------------

// One typed attribute: its JSON key and its codec.
struct ExtraAttributeCodec {
    std::string_view key;
    // Reads `value`, found at `path`, into `instruction`. Allocates the
    // instruction's HloExtraAttributes only when it sets a field.
    Status (*read)(const JsonReader& reader, const Json& value, const JsonPath& path,
                   HloInstruction& instruction);
    // Adds `key` to `out` when the attribute is set (differs from its default).
    void (*write)(const HloExtraAttributes& extra, std::string_view key, Json& out);
};

// All typed attributes, in export order (the order of HloExtraAttributes).
std::span<const ExtraAttributeCodec> extraAttributeCodecs();

}  // namespace hloscope::hlo_json_internal
