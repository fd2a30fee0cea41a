// JSON export and import of a whole module. The schema is described in
// docs/json_format.md; keep the two in sync.
//
// Export writes every key in a fixed order (nlohmann::ordered_json), so the
// text is a deterministic function of the module, and import reconstructs
// every exported field, so import -> export is a fixed point.
//
// Import never throws: the JSON text is parsed with the non-throwing
// nlohmann entry points, every value's type is checked before it is read,
// and every error is a Status(kInvalidArgument) whose message starts with
// the JSON path of the offending value.
#include "core/json/hlo_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ir/async_wrapping.h"
#include "core/text/hlo_parser.h"

namespace hloscope {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kFormatName = "hloscope-module";
constexpr int64_t kFormatVersion = 1;
// Import rejects deeper JSON before building a DOM (see Importer::run).
constexpr int kMaxNestingDepth = 64;

// ----------------------------------------------------------------------------
// Export
// ----------------------------------------------------------------------------

Json intList(const std::vector<int64_t>& values) {
    Json out = Json::array();
    for (int64_t v : values) out.push_back(v);
    return out;
}

Json attributeList(const std::vector<HloAttribute>& attributes) {
    Json out = Json::array();
    for (const HloAttribute& attr : attributes) {
        Json entry = Json::object();
        entry["name"] = attr.name;
        entry["value"] = attr.value;
        out.push_back(std::move(entry));
    }
    return out;
}

Json windowToJson(const Window& window) {
    Json out = Json::array();
    for (const WindowDimension& d : window.dimensions) {
        Json dim = Json::object();
        dim["size"] = d.size;
        dim["stride"] = d.stride;
        dim["padding_low"] = d.paddingLow;
        dim["padding_high"] = d.paddingHigh;
        dim["window_dilation"] = d.windowDilation;
        dim["base_dilation"] = d.baseDilation;
        dim["window_reversal"] = d.windowReversal;
        out.push_back(std::move(dim));
    }
    return out;
}

Json convolutionDnumsToJson(const ConvolutionDimensionNumbers& d) {
    Json out = Json::object();
    out["input_batch_dimension"] = d.inputBatchDimension;
    out["input_feature_dimension"] = d.inputFeatureDimension;
    out["input_spatial_dimensions"] = intList(d.inputSpatialDimensions);
    out["kernel_input_feature_dimension"] = d.kernelInputFeatureDimension;
    out["kernel_output_feature_dimension"] = d.kernelOutputFeatureDimension;
    out["kernel_spatial_dimensions"] = intList(d.kernelSpatialDimensions);
    out["output_batch_dimension"] = d.outputBatchDimension;
    out["output_feature_dimension"] = d.outputFeatureDimension;
    out["output_spatial_dimensions"] = intList(d.outputSpatialDimensions);
    return out;
}

Json dotDnumsToJson(const DotDimensionNumbers& d) {
    Json out = Json::object();
    out["lhs_batch_dims"] = intList(d.lhsBatchDimensions);
    out["rhs_batch_dims"] = intList(d.rhsBatchDimensions);
    out["lhs_contracting_dims"] = intList(d.lhsContractingDimensions);
    out["rhs_contracting_dims"] = intList(d.rhsContractingDimensions);
    out["lhs_ragged_dims"] = intList(d.lhsRaggedDimensions);
    out["rhs_group_dims"] = intList(d.rhsGroupDimensions);
    return out;
}

Json gatherDnumsToJson(const GatherDimensionNumbers& d) {
    Json out = Json::object();
    out["offset_dims"] = intList(d.offsetDims);
    out["collapsed_slice_dims"] = intList(d.collapsedSliceDims);
    out["start_index_map"] = intList(d.startIndexMap);
    out["operand_batching_dims"] = intList(d.operandBatchingDims);
    out["start_indices_batching_dims"] = intList(d.startIndicesBatchingDims);
    out["index_vector_dim"] = d.indexVectorDim;
    return out;
}

Json scatterDnumsToJson(const ScatterDimensionNumbers& d) {
    Json out = Json::object();
    out["update_window_dims"] = intList(d.updateWindowDims);
    out["inserted_window_dims"] = intList(d.insertedWindowDims);
    out["scatter_dims_to_operand_dims"] = intList(d.scatterDimsToOperandDims);
    out["input_batching_dims"] = intList(d.inputBatchingDims);
    out["scatter_indices_batching_dims"] = intList(d.scatterIndicesBatchingDims);
    out["index_vector_dim"] = d.indexVectorDim;
    return out;
}

// Typed attributes of HloExtraAttributes, only those that are set, in the
// order of the struct.
void extraToJson(const HloExtraAttributes& e, Json& out) {
    if (!e.slice.empty()) {
        Json slice = Json::array();
        for (const SliceDimension& d : e.slice)
            slice.push_back(Json::array({d.start, d.limit, d.stride}));
        out["slice"] = std::move(slice);
    }
    if (!e.dynamicSliceSizes.empty()) out["dynamic_slice_sizes"] = intList(e.dynamicSliceSizes);
    if (!e.padding.empty()) {
        Json padding = Json::array();
        for (const PaddingDimension& d : e.padding)
            padding.push_back(Json::array({d.edgeLow, d.edgeHigh, d.interior}));
        out["padding"] = std::move(padding);
    }
    if (e.window) out["window"] = windowToJson(*e.window);
    if (e.convolutionDimensionNumbers)
        out["convolution_dimension_numbers"] =
            convolutionDnumsToJson(*e.convolutionDimensionNumbers);
    if (e.featureGroupCount != 1) out["feature_group_count"] = e.featureGroupCount;
    if (e.batchGroupCount != 1) out["batch_group_count"] = e.batchGroupCount;
    if (e.dotDimensionNumbers)
        out["dot_dimension_numbers"] = dotDnumsToJson(*e.dotDimensionNumbers);
    if (e.gatherDimensionNumbers)
        out["gather_dimension_numbers"] = gatherDnumsToJson(*e.gatherDimensionNumbers);
    if (!e.gatherSliceSizes.empty()) out["slice_sizes"] = intList(e.gatherSliceSizes);
    if (e.scatterDimensionNumbers)
        out["scatter_dimension_numbers"] = scatterDnumsToJson(*e.scatterDimensionNumbers);
    if (e.indicesAreSorted) out["indices_are_sorted"] = true;
    if (e.uniqueIndices) out["unique_indices"] = true;
    if (e.comparisonDirection)
        out["comparison_direction"] =
            std::string(comparisonDirectionString(*e.comparisonDirection));
    if (e.comparisonType != ComparisonType::kDefault)
        out["comparison_type"] = std::string(comparisonTypeString(e.comparisonType));
    if (e.exponentBits) out["exponent_bits"] = *e.exponentBits;
    if (e.mantissaBits) out["mantissa_bits"] = *e.mantissaBits;
    if (e.epsilon) {
        // The text as written when known (lossless), else the number.
        if (!e.epsilonText.empty())
            out["epsilon"] = e.epsilonText;
        else if (std::isfinite(*e.epsilon))
            out["epsilon"] = *e.epsilon;
        else  // JSON has no inf/nan numbers
            out["epsilon"] = std::isnan(*e.epsilon) ? "nan" : (*e.epsilon > 0 ? "inf" : "-inf");
    }
    if (e.featureIndex) out["feature_index"] = *e.featureIndex;
    if (e.customCallTarget) out["custom_call_target"] = *e.customCallTarget;
    if (e.fusionKind) out["fusion_kind"] = *e.fusionKind;
    if (e.isStable) out["is_stable"] = *e.isStable;
    if (e.fftType) out["fft_type"] = *e.fftType;
    if (!e.fftLength.empty()) out["fft_length"] = intList(e.fftLength);
    if (e.distribution) out["distribution"] = *e.distribution;
    if (e.topK) out["top_k"] = *e.topK;
    if (e.largest) out["largest"] = *e.largest;
}

Json instructionToJson(const HloInstruction& instruction) {
    Json out = Json::object();
    const HloOpcode opcode = instruction.opcode();
    out["name"] = instruction.name();
    out["opcode"] = std::string(hloOpcodeString(opcode));
    const HloExtraAttributes* extra = instruction.extra();
    if (extra && extra->asyncWrappedOpcode && asyncWrittenAsSugar(instruction))
        out["async_wrapped_opcode"] = std::string(hloOpcodeString(*extra->asyncWrappedOpcode));
    out["shape"] = instruction.shape().toString();

    Json operands = Json::array();
    for (const HloInstruction* operand : instruction.operands())
        operands.push_back(operand->name());
    out["operands"] = std::move(operands);
    if (!instruction.controlPredecessors().empty()) {
        Json preds = Json::array();
        for (const HloInstruction* pred : instruction.controlPredecessors())
            preds.push_back(pred->name());
        out["control_predecessors"] = std::move(preds);
    }

    if (opcode == HloOpcode::kParameter || instruction.parameterNumber() != -1)
        out["parameter_number"] = instruction.parameterNumber();
    // tupleIndex() and iotaDimension() share one slot.
    if (opcode == HloOpcode::kIota)
        out["iota_dimension"] = instruction.iotaDimension();
    else if (opcode == HloOpcode::kGetTupleElement || instruction.tupleIndex() != 0)
        out["tuple_index"] = instruction.tupleIndex();
    if (opcode == HloOpcode::kConstant || !instruction.literalText().empty())
        out["literal"] = instruction.literalText();
    if (instruction.hasDimensions()) out["dimensions"] = intList(instruction.dimensions());

    if (extra) extraToJson(*extra, out);

    if (!instruction.calledComputationAttributes().empty()) {
        Json called = Json::array();
        for (const CalledComputationAttribute& attr : instruction.calledComputationAttributes()) {
            Json entry = Json::object();
            entry["name"] = attr.name;
            Json names = Json::array();
            for (const HloComputation* computation : attr.computations) {
                if (computation)
                    names.push_back(computation->name());
                else
                    names.push_back(nullptr);
            }
            entry["computations"] = std::move(names);
            entry["is_list"] = attr.isList;
            called.push_back(std::move(entry));
        }
        out["called_computations"] = std::move(called);
    }
    if (!instruction.attributes().empty())
        out["attributes"] = attributeList(instruction.attributes());
    if (!instruction.metadata().empty()) out["metadata"] = instruction.metadata();
    return out;
}

Json computationToJson(const HloComputation& computation) {
    Json out = Json::object();
    out["name"] = computation.name();
    out["is_entry"] = computation.isEntry();
    if (!computation.executionThread().empty())
        out["execution_thread"] = computation.executionThread();
    if (computation.root())
        out["root"] = computation.root()->name();
    else
        out["root"] = nullptr;
    Json instructions = Json::array();
    for (const auto& instruction : computation.instructions())
        instructions.push_back(instructionToJson(*instruction));
    out["instructions"] = std::move(instructions);
    return out;
}

Json stackFramesToJson(const StackFrameIndex& frames) {
    Json out = Json::object();
    Json fileNames = Json::array();
    for (const std::string& name : frames.fileNames) fileNames.push_back(name);
    out["file_names"] = std::move(fileNames);
    Json functionNames = Json::array();
    for (const std::string& name : frames.functionNames) functionNames.push_back(name);
    out["function_names"] = std::move(functionNames);
    Json locations = Json::array();
    for (const FileLocation& loc : frames.fileLocations) {
        Json entry = Json::object();
        entry["file_name_id"] = loc.fileNameId;
        entry["function_name_id"] = loc.functionNameId;
        entry["line"] = loc.line;
        entry["end_line"] = loc.endLine;
        entry["column"] = loc.column;
        entry["end_column"] = loc.endColumn;
        locations.push_back(std::move(entry));
    }
    out["file_locations"] = std::move(locations);
    Json stackFrames = Json::array();
    for (const StackFrame& frame : frames.stackFrames) {
        Json entry = Json::object();
        entry["file_location_id"] = frame.fileLocationId;
        entry["parent_frame_id"] = frame.parentFrameId;
        stackFrames.push_back(std::move(entry));
    }
    out["stack_frames"] = std::move(stackFrames);
    return out;
}

Json moduleToJsonValue(const HloModule& module) {
    Json out = Json::object();
    out["format"] = std::string(kFormatName);
    out["version"] = kFormatVersion;
    out["name"] = module.name();
    out["is_scheduled"] = module.isScheduled();
    if (const auto& layout = module.entryComputationLayout()) {
        Json entry = Json::object();
        Json parameters = Json::array();
        for (const Shape& shape : layout->parameters) parameters.push_back(shape.toString());
        entry["parameters"] = std::move(parameters);
        entry["result"] = layout->result.toString();
        out["entry_computation_layout"] = std::move(entry);
    }
    if (module.replicaCount()) out["replica_count"] = *module.replicaCount();
    if (module.numPartitions()) out["num_partitions"] = *module.numPartitions();
    if (module.hasInputOutputAliasAttribute() || !module.inputOutputAliases().empty()) {
        Json aliases = Json::array();
        for (const InputOutputAlias& alias : module.inputOutputAliases()) {
            Json entry = Json::object();
            entry["output_index"] = intList(alias.outputIndex);
            entry["parameter_number"] = alias.parameterNumber;
            entry["parameter_index"] = intList(alias.parameterIndex);
            const bool must = alias.kind == InputOutputAlias::Kind::kMustAlias;
            if (alias.kindWritten || must) entry["kind"] = must ? "must-alias" : "may-alias";
            // Only the odd state "must-alias but not written" needs the flag.
            if (must && !alias.kindWritten) entry["kind_written"] = false;
            aliases.push_back(std::move(entry));
        }
        out["input_output_alias"] = std::move(aliases);
    }
    if (module.hasBufferDonorAttribute() || !module.bufferDonors().empty()) {
        Json donors = Json::array();
        for (const BufferDonor& donor : module.bufferDonors()) {
            Json entry = Json::object();
            entry["parameter_number"] = donor.parameterNumber;
            entry["parameter_index"] = intList(donor.parameterIndex);
            donors.push_back(std::move(entry));
        }
        out["buffer_donor"] = std::move(donors);
    }
    if (!module.attributes().empty()) out["attributes"] = attributeList(module.attributes());
    if (!module.stackFrames().empty())
        out["stack_frames"] = stackFramesToJson(module.stackFrames());
    Json computations = Json::array();
    for (const auto& computation : module.computations())
        computations.push_back(computationToJson(*computation));
    out["computations"] = std::move(computations);
    return out;
}

// Pretty printing: objects one key per line, arrays that hold no objects on
// one line ("operands": ["a", "b"], "slice": [[0, 4, 1], [2, 8, 2]]), other
// arrays one element per line. Scalars use nlohmann's own formatting.
void appendJsonString(std::string& out, std::string_view text) {
    // Fast path for the common case: printable ASCII that needs no escape.
    bool plain = true;
    for (char c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f ||
            c == '"' || c == '\\') {
            plain = false;
            break;
        }
    }
    if (plain) {
        out += '"';
        out += text;
        out += '"';
        return;
    }
    out += Json(text).dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

void appendScalar(std::string& out, const Json& value) {
    char buffer[24];
    switch (value.type()) {
        case Json::value_t::string:
            appendJsonString(out, value.get_ref<const std::string&>());
            return;
        case Json::value_t::number_integer: {
            auto result = std::to_chars(buffer, buffer + sizeof(buffer), value.get<int64_t>());
            out.append(buffer, result.ptr);
            return;
        }
        case Json::value_t::number_unsigned: {
            auto result = std::to_chars(buffer, buffer + sizeof(buffer), value.get<uint64_t>());
            out.append(buffer, result.ptr);
            return;
        }
        case Json::value_t::boolean:
            out += value.get<bool>() ? "true" : "false";
            return;
        default:
            out += value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
            return;
    }
}

bool holdsNoObjects(const Json& array) {
    for (const Json& element : array) {
        if (element.is_object()) return false;
        if (element.is_array() && !holdsNoObjects(element)) return false;
    }
    return true;
}

void appendInline(std::string& out, const Json& value) {
    if (!value.is_array()) {
        appendScalar(out, value);
        return;
    }
    out += '[';
    bool first = true;
    for (const Json& element : value) {
        if (!first) out += ", ";
        first = false;
        appendInline(out, element);
    }
    out += ']';
}

void appendPretty(std::string& out, const Json& value, int indent, int level) {
    auto newline = [&](int depth) {
        out += '\n';
        out.append(static_cast<size_t>(depth) * static_cast<size_t>(indent), ' ');
    };
    if (value.is_object()) {
        if (value.empty()) {
            out += "{}";
            return;
        }
        out += '{';
        bool first = true;
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (!first) out += ',';
            first = false;
            newline(level + 1);
            appendJsonString(out, it.key());
            out += ": ";
            appendPretty(out, it.value(), indent, level + 1);
        }
        newline(level);
        out += '}';
    } else if (value.is_array() && !value.empty() && !holdsNoObjects(value)) {
        out += '[';
        bool first = true;
        for (const Json& element : value) {
            if (!first) out += ',';
            first = false;
            newline(level + 1);
            appendPretty(out, element, indent, level + 1);
        }
        newline(level);
        out += ']';
    } else {
        appendInline(out, value);
    }
}

// ----------------------------------------------------------------------------
// Import: JSON reading helpers
// ----------------------------------------------------------------------------

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

    void appendTo(std::string& out) const {
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

    static bool isPlainKey(std::string_view key) {
        if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
        for (char c : key) {
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-'))
                return false;
        }
        return true;
    }

    const JsonPath* m_parent = nullptr;
    std::string_view m_key;
    size_t m_index = 0;
    bool m_isIndex = false;
};

// Levenshtein distance, for "did you mean" hints on unknown keys.
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

class Importer {
public:
    explicit Importer(std::string fileName) : m_fileName(std::move(fileName)) {}

    StatusOr<std::unique_ptr<HloModule>> run(std::string_view text);

private:
    // Named references, resolved once their targets have all been read. The
    // names view strings of the JSON document, which outlives them; the
    // indices rebuild the JSON path for an error message.
    struct PendingOperand {
        HloInstruction* instruction;
        std::string_view name;
        size_t instructionIndex;  // in the computation's "instructions"
        size_t listIndex;         // in "operands" / "control_predecessors"
        bool control;
    };
    struct PendingCall {
        HloInstruction* instruction;
        size_t attributeIndex;    // in the instruction's called-computation attributes
        size_t computationIndex;  // in that attribute's computations
        std::string_view name;
        size_t moduleComputationIndex;
        size_t instructionIndex;
    };

    Status error(const JsonPath& path, std::string_view message) const {
        return error(path.toString(), message);
    }
    Status error(std::string path, std::string_view message) const {
        std::string text = std::move(path);
        text += ": ";
        text += message;
        return Status(StatusCode::kInvalidArgument, std::move(text),
                      SourceLocation{m_fileName, 0, 0});
    }
    Status typeError(const JsonPath& path, std::string_view expected, const Json& value) const {
        return error(path,
                     "expected " + std::string(expected) + ", got " + std::string(typeName(value)));
    }

    Status syntaxError(std::string_view text) const;
    Status checkNestingDepth(std::string_view text) const;
    // file:line:col of a 0-based byte offset into `text`.
    SourceLocation locationOf(std::string_view text, size_t offset) const;

    Status expectObject(const Json& value, const JsonPath& path,
                        std::initializer_list<std::string_view> allowedKeys) const;
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
    StatusOr<Shape> readShape(const Json& value, const JsonPath& path);
    StatusOr<std::vector<HloAttribute>> readAttributes(const Json& value,
                                                       const JsonPath& path) const;

    // Optional key helpers: leave `out` untouched when the key is absent.
    Status optionalInt(const Json& object, const JsonPath& path, std::string_view key,
                       int64_t& out) const;
    Status optionalIntList(const Json& object, const JsonPath& path, std::string_view key,
                           std::vector<int64_t>& out) const;

    Status readHeader(const Json& root, const JsonPath& top, HloModule& module);
    Status readStackFrames(const Json& value, const JsonPath& path, StackFrameIndex& out) const;
    Status readComputation(const Json& value, const JsonPath& path, size_t computationIndex,
                           HloModule& module, std::optional<size_t>& entryIndex);
    StatusOr<std::unique_ptr<HloInstruction>> readInstruction(const Json& value,
                                                              const JsonPath& path,
                                                              size_t computationIndex,
                                                              size_t instructionIndex,
                                                              std::vector<PendingOperand>& refs);
    Status readExtra(const Json& object, const JsonPath& path, HloInstruction& instruction) const;
    StatusOr<Window> readWindow(const Json& value, const JsonPath& path) const;
    StatusOr<ConvolutionDimensionNumbers> readConvolutionDnums(const Json& value,
                                                               const JsonPath& path) const;
    StatusOr<DotDimensionNumbers> readDotDnums(const Json& value, const JsonPath& path) const;
    StatusOr<GatherDimensionNumbers> readGatherDnums(const Json& value, const JsonPath& path) const;
    StatusOr<ScatterDimensionNumbers> readScatterDnums(const Json& value,
                                                       const JsonPath& path) const;
    StatusOr<std::vector<int64_t>> readTriple(const Json& value, const JsonPath& path,
                                              size_t minSize) const;

    std::string m_fileName;
    std::vector<PendingCall> m_pendingCalls;
    // Instructions of large modules share few distinct shape strings.
    std::unordered_map<std::string_view, Shape> m_shapeCache;
};

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

SourceLocation Importer::locationOf(std::string_view text, size_t offset) const {
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

Status Importer::checkNestingDepth(std::string_view text) const {
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

Status Importer::syntaxError(std::string_view text) const {
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

const Json* Importer::findKey(const Json& object, std::string_view key) {
    // Objects hold a handful of keys: a scan beats building a std::string.
    for (auto it = object.begin(); it != object.end(); ++it)
        if (it.key() == key) return &it.value();
    return nullptr;
}

Status Importer::expectObject(const Json& value, const JsonPath& path,
                              std::initializer_list<std::string_view> allowedKeys) const {
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

StatusOr<const Json*> Importer::requireKey(const Json& object, const JsonPath& path,
                                           std::string_view key) const {
    const Json* value = findKey(object, key);
    if (value == nullptr) return error(path, "missing required key " + quoteText(key));
    return value;
}

StatusOr<int64_t> Importer::readInt(const Json& value, const JsonPath& path) const {
    if (value.is_number_unsigned()) {
        auto v = value.get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return error(path, "integer " + std::to_string(v) + " is out of range for int64");
        return static_cast<int64_t>(v);
    }
    if (value.is_number_integer()) return value.get<int64_t>();
    return typeError(path, "an integer", value);
}

StatusOr<int64_t> Importer::readNonNegativeInt(const Json& value, const JsonPath& path) const {
    HLO_ASSIGN_OR_RETURN(int64_t v, readInt(value, path));
    if (v < 0) return error(path, "expected a non-negative integer, got " + std::to_string(v));
    return v;
}

StatusOr<bool> Importer::readBool(const Json& value, const JsonPath& path) const {
    if (!value.is_boolean()) return typeError(path, "a boolean", value);
    return value.get<bool>();
}

StatusOr<std::string> Importer::readString(const Json& value, const JsonPath& path) const {
    if (!value.is_string()) return typeError(path, "a string", value);
    return value.get<std::string>();
}

StatusOr<std::vector<int64_t>> Importer::readIntList(const Json& value,
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

StatusOr<std::vector<std::string>> Importer::readStringList(const Json& value,
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

StatusOr<Shape> Importer::readShape(const Json& value, const JsonPath& path) {
    if (!value.is_string()) return typeError(path, "a shape string", value);
    const std::string& text = value.get_ref<const std::string&>();
    auto cached = m_shapeCache.find(text);
    if (cached != m_shapeCache.end()) return cached->second;
    StatusOr<Shape> shape = parseShape(text);
    if (!shape.isOk())
        return error(path,
                     "cannot parse shape " + quoteText(text) + ": " + shape.status().message());
    m_shapeCache.emplace(text, *shape);
    return std::move(shape).value();
}

StatusOr<std::vector<HloAttribute>> Importer::readAttributes(const Json& value,
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

Status Importer::optionalInt(const Json& object, const JsonPath& path, std::string_view key,
                             int64_t& out) const {
    if (const Json* value = findKey(object, key)) {
        HLO_ASSIGN_OR_RETURN(out, readInt(*value, path.key(key)));
    }
    return Status::ok();
}

Status Importer::optionalIntList(const Json& object, const JsonPath& path, std::string_view key,
                                 std::vector<int64_t>& out) const {
    if (const Json* value = findKey(object, key)) {
        HLO_ASSIGN_OR_RETURN(out, readIntList(*value, path.key(key)));
    }
    return Status::ok();
}

// ----------------------------------------------------------------------------
// Import: module
// ----------------------------------------------------------------------------

StatusOr<std::unique_ptr<HloModule>> Importer::run(std::string_view text) {
    // nlohmann copies and destroys values recursively: bound the nesting
    // before building a DOM (the schema itself needs fewer than 10 levels).
    HLO_RETURN_IF_ERROR(checkNestingDepth(text));
    Json root = Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/false,
                            /*ignore_comments=*/false);
    if (root.is_discarded()) return syntaxError(text);

    const JsonPath top = JsonPath::root();
    HLO_RETURN_IF_ERROR(
        expectObject(root, top,
                     {"format", "version", "name", "is_scheduled", "entry_computation_layout",
                      "replica_count", "num_partitions", "input_output_alias", "buffer_donor",
                      "attributes", "stack_frames", "computations"}));
    HLO_ASSIGN_OR_RETURN(const Json* format, requireKey(root, top, "format"));
    HLO_ASSIGN_OR_RETURN(std::string formatName, readString(*format, top.key("format")));
    if (formatName != kFormatName)
        return error(top.key("format"),
                     "expected " + quoteText(kFormatName) + ", got " + quoteText(formatName));
    HLO_ASSIGN_OR_RETURN(const Json* version, requireKey(root, top, "version"));
    HLO_ASSIGN_OR_RETURN(int64_t versionNumber, readInt(*version, top.key("version")));
    if (versionNumber != kFormatVersion)
        return error(top.key("version"),
                     "unsupported format version " + std::to_string(versionNumber) +
                         " (this build reads version " + std::to_string(kFormatVersion) + ")");
    HLO_ASSIGN_OR_RETURN(const Json* name, requireKey(root, top, "name"));
    HLO_ASSIGN_OR_RETURN(std::string moduleName, readString(*name, top.key("name")));

    auto module = std::make_unique<HloModule>(std::move(moduleName));
    HLO_RETURN_IF_ERROR(readHeader(root, top, *module));

    HLO_ASSIGN_OR_RETURN(const Json* computations, requireKey(root, top, "computations"));
    const JsonPath computationsPath = top.key("computations");
    if (!computations->is_array()) return typeError(computationsPath, "an array", *computations);

    std::unordered_map<std::string_view, size_t> computationIndex;
    computationIndex.reserve(computations->size());
    std::optional<size_t> entryIndex;
    for (size_t i = 0; i < computations->size(); ++i) {
        const JsonPath itemPath = computationsPath.index(i);
        HLO_RETURN_IF_ERROR(readComputation((*computations)[i], itemPath, i, *module, entryIndex));
        const std::string& computationName = module->computations().back()->name();
        auto [it, inserted] = computationIndex.emplace(computationName, i);
        if (!inserted)
            return error(itemPath.key("name"),
                         "duplicate computation name " + quoteText(computationName) +
                             " (first defined at " + computationsPath.index(it->second).toString() +
                             ")");
    }

    // Called computations may name any computation of the module.
    for (const PendingCall& call : m_pendingCalls) {
        auto it = computationIndex.find(call.name);
        if (it == computationIndex.end()) {
            std::string path = "$.computations[" + std::to_string(call.moduleComputationIndex) +
                               "].instructions[" + std::to_string(call.instructionIndex) +
                               "].called_computations[" + std::to_string(call.attributeIndex) +
                               "].computations[" + std::to_string(call.computationIndex) + "]";
            return error(std::move(path), "unknown computation " + quoteText(call.name));
        }
        HloComputation* callee = module->computations()[it->second].get();
        auto& attributes = call.instruction->mutableCalledComputationAttributes();
        attributes[call.attributeIndex].computations[call.computationIndex] = callee;
    }
    // As the text parser does: a fused computation knows its fusion.
    for (const auto& computation : module->computations()) {
        for (const auto& instruction : computation->instructions()) {
            if (instruction->opcode() != HloOpcode::kFusion) continue;
            HloComputation* fused = instruction->fusedComputation();
            if (fused != nullptr && fused->fusionInstruction() == nullptr)
                fused->setFusionInstruction(instruction.get());
        }
    }
    // As the text parser does: `X-start` sugar calls a computation around X.
    HLO_RETURN_IF_ERROR(wrapAsyncSugar(*module));
    return module;
}

Status Importer::readHeader(const Json& root, const JsonPath& top, HloModule& module) {
    if (const Json* value = findKey(root, "is_scheduled")) {
        HLO_ASSIGN_OR_RETURN(bool scheduled, readBool(*value, top.key("is_scheduled")));
        module.setIsScheduled(scheduled);
    }
    if (const Json* value = findKey(root, "entry_computation_layout")) {
        const JsonPath path = top.key("entry_computation_layout");
        HLO_RETURN_IF_ERROR(expectObject(*value, path, {"parameters", "result"}));
        HLO_ASSIGN_OR_RETURN(const Json* parameters, requireKey(*value, path, "parameters"));
        HLO_ASSIGN_OR_RETURN(const Json* result, requireKey(*value, path, "result"));
        ComputationLayout layout;
        JsonPath parametersPath = path.key("parameters");
        if (!parameters->is_array())
            return typeError(parametersPath, "an array of shape strings", *parameters);
        for (size_t i = 0; i < parameters->size(); ++i) {
            HLO_ASSIGN_OR_RETURN(Shape shape, readShape((*parameters)[i], parametersPath.index(i)));
            layout.parameters.push_back(std::move(shape));
        }
        HLO_ASSIGN_OR_RETURN(layout.result, readShape(*result, path.key("result")));
        module.setEntryComputationLayout(std::move(layout));
    }
    if (const Json* value = findKey(root, "replica_count")) {
        HLO_ASSIGN_OR_RETURN(int64_t n, readInt(*value, top.key("replica_count")));
        module.setReplicaCount(n);
    }
    if (const Json* value = findKey(root, "num_partitions")) {
        HLO_ASSIGN_OR_RETURN(int64_t n, readInt(*value, top.key("num_partitions")));
        module.setNumPartitions(n);
    }
    if (const Json* value = findKey(root, "input_output_alias")) {
        const JsonPath path = top.key("input_output_alias");
        if (!value->is_array()) return typeError(path, "an array", *value);
        module.setHasInputOutputAliasAttribute(true);
        for (size_t i = 0; i < value->size(); ++i) {
            const Json& item = (*value)[i];
            JsonPath itemPath = path.index(i);
            HLO_RETURN_IF_ERROR(expectObject(
                item, itemPath,
                {"output_index", "parameter_number", "parameter_index", "kind", "kind_written"}));
            InputOutputAlias alias;
            HLO_ASSIGN_OR_RETURN(const Json* outputIndex,
                                 requireKey(item, itemPath, "output_index"));
            HLO_ASSIGN_OR_RETURN(alias.outputIndex,
                                 readIntList(*outputIndex, itemPath.key("output_index")));
            HLO_ASSIGN_OR_RETURN(const Json* number,
                                 requireKey(item, itemPath, "parameter_number"));
            HLO_ASSIGN_OR_RETURN(alias.parameterNumber,
                                 readInt(*number, itemPath.key("parameter_number")));
            HLO_ASSIGN_OR_RETURN(const Json* paramIndex,
                                 requireKey(item, itemPath, "parameter_index"));
            HLO_ASSIGN_OR_RETURN(alias.parameterIndex,
                                 readIntList(*paramIndex, itemPath.key("parameter_index")));
            if (const Json* kind = findKey(item, "kind")) {
                JsonPath kindPath = itemPath.key("kind");
                HLO_ASSIGN_OR_RETURN(std::string kindText, readString(*kind, kindPath));
                if (kindText == "must-alias")
                    alias.kind = InputOutputAlias::Kind::kMustAlias;
                else if (kindText == "may-alias")
                    alias.kind = InputOutputAlias::Kind::kMayAlias;
                else
                    return error(kindPath, "expected \"may-alias\" or \"must-alias\", got " +
                                               quoteText(kindText));
                alias.kindWritten = true;
            }
            if (const Json* written = findKey(item, "kind_written")) {
                HLO_ASSIGN_OR_RETURN(alias.kindWritten,
                                     readBool(*written, itemPath.key("kind_written")));
            }
            module.mutableInputOutputAliases().push_back(std::move(alias));
        }
    }
    if (const Json* value = findKey(root, "buffer_donor")) {
        const JsonPath path = top.key("buffer_donor");
        if (!value->is_array()) return typeError(path, "an array", *value);
        module.setHasBufferDonorAttribute(true);
        for (size_t i = 0; i < value->size(); ++i) {
            const Json& item = (*value)[i];
            JsonPath itemPath = path.index(i);
            HLO_RETURN_IF_ERROR(
                expectObject(item, itemPath, {"parameter_number", "parameter_index"}));
            BufferDonor donor;
            HLO_ASSIGN_OR_RETURN(const Json* number,
                                 requireKey(item, itemPath, "parameter_number"));
            HLO_ASSIGN_OR_RETURN(donor.parameterNumber,
                                 readInt(*number, itemPath.key("parameter_number")));
            HLO_ASSIGN_OR_RETURN(const Json* paramIndex,
                                 requireKey(item, itemPath, "parameter_index"));
            HLO_ASSIGN_OR_RETURN(donor.parameterIndex,
                                 readIntList(*paramIndex, itemPath.key("parameter_index")));
            module.mutableBufferDonors().push_back(std::move(donor));
        }
    }
    if (const Json* value = findKey(root, "attributes")) {
        HLO_ASSIGN_OR_RETURN(module.mutableAttributes(),
                             readAttributes(*value, top.key("attributes")));
    }
    if (const Json* value = findKey(root, "stack_frames")) {
        HLO_RETURN_IF_ERROR(
            readStackFrames(*value, top.key("stack_frames"), module.mutableStackFrames()));
    }
    return Status::ok();
}

Status Importer::readStackFrames(const Json& value, const JsonPath& path,
                                 StackFrameIndex& out) const {
    HLO_RETURN_IF_ERROR(expectObject(
        value, path, {"file_names", "function_names", "file_locations", "stack_frames"}));
    if (const Json* names = findKey(value, "file_names")) {
        HLO_ASSIGN_OR_RETURN(out.fileNames, readStringList(*names, path.key("file_names")));
    }
    if (const Json* names = findKey(value, "function_names")) {
        HLO_ASSIGN_OR_RETURN(out.functionNames, readStringList(*names, path.key("function_names")));
    }
    if (const Json* locations = findKey(value, "file_locations")) {
        JsonPath listPath = path.key("file_locations");
        if (!locations->is_array()) return typeError(listPath, "an array", *locations);
        for (size_t i = 0; i < locations->size(); ++i) {
            const Json& item = (*locations)[i];
            JsonPath itemPath = listPath.index(i);
            HLO_RETURN_IF_ERROR(expectObject(
                item, itemPath,
                {"file_name_id", "function_name_id", "line", "end_line", "column", "end_column"}));
            FileLocation loc;
            HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "file_name_id", loc.fileNameId));
            HLO_RETURN_IF_ERROR(
                optionalInt(item, itemPath, "function_name_id", loc.functionNameId));
            HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "line", loc.line));
            HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "end_line", loc.endLine));
            HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "column", loc.column));
            HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "end_column", loc.endColumn));
            out.fileLocations.push_back(loc);
        }
    }
    if (const Json* frames = findKey(value, "stack_frames")) {
        JsonPath listPath = path.key("stack_frames");
        if (!frames->is_array()) return typeError(listPath, "an array", *frames);
        for (size_t i = 0; i < frames->size(); ++i) {
            const Json& item = (*frames)[i];
            JsonPath itemPath = listPath.index(i);
            HLO_RETURN_IF_ERROR(
                expectObject(item, itemPath, {"file_location_id", "parent_frame_id"}));
            StackFrame frame;
            HLO_RETURN_IF_ERROR(
                optionalInt(item, itemPath, "file_location_id", frame.fileLocationId));
            HLO_RETURN_IF_ERROR(
                optionalInt(item, itemPath, "parent_frame_id", frame.parentFrameId));
            out.stackFrames.push_back(frame);
        }
    }
    return Status::ok();
}

// ----------------------------------------------------------------------------
// Import: computations and instructions
// ----------------------------------------------------------------------------

Status Importer::readComputation(const Json& value, const JsonPath& path, size_t computationIndex,
                                 HloModule& module, std::optional<size_t>& entryIndex) {
    HLO_RETURN_IF_ERROR(expectObject(
        value, path, {"name", "is_entry", "execution_thread", "root", "instructions"}));
    HLO_ASSIGN_OR_RETURN(const Json* nameValue, requireKey(value, path, "name"));
    HLO_ASSIGN_OR_RETURN(std::string name, readString(*nameValue, path.key("name")));
    if (name.empty()) return error(path.key("name"), "computation name is empty");
    bool isEntry = false;
    if (const Json* entry = findKey(value, "is_entry")) {
        HLO_ASSIGN_OR_RETURN(isEntry, readBool(*entry, path.key("is_entry")));
    }
    if (isEntry) {
        if (entryIndex)
            return error(path.key("is_entry"),
                         "a second entry computation (the first is "
                         "$.computations[" +
                             std::to_string(*entryIndex) + "])");
        entryIndex = computationIndex;
    }
    auto computation = std::make_unique<HloComputation>(std::move(name));
    if (const Json* thread = findKey(value, "execution_thread")) {
        HLO_ASSIGN_OR_RETURN(std::string threadName,
                             readString(*thread, path.key("execution_thread")));
        computation->setExecutionThread(std::move(threadName));
    }
    HLO_ASSIGN_OR_RETURN(const Json* rootValue, requireKey(value, path, "root"));
    if (!rootValue->is_null() && !rootValue->is_string())
        return typeError(path.key("root"), "a string or null", *rootValue);

    HLO_ASSIGN_OR_RETURN(const Json* instructions, requireKey(value, path, "instructions"));
    const JsonPath instructionsPath = path.key("instructions");
    if (!instructions->is_array()) return typeError(instructionsPath, "an array", *instructions);

    // name -> (instruction, index in the list); the keys view the names the
    // instructions own.
    std::unordered_map<std::string_view, std::pair<HloInstruction*, size_t>> byName;
    byName.reserve(instructions->size());
    std::vector<PendingOperand> refs;
    for (size_t i = 0; i < instructions->size(); ++i) {
        const JsonPath itemPath = instructionsPath.index(i);
        HLO_ASSIGN_OR_RETURN(
            std::unique_ptr<HloInstruction> instruction,
            readInstruction((*instructions)[i], itemPath, computationIndex, i, refs));
        HloInstruction* raw = instruction.get();
        auto [it, inserted] = byName.emplace(raw->name(), std::make_pair(raw, i));
        if (!inserted)
            return error(itemPath.key("name"),
                         "duplicate instruction name " + quoteText(raw->name()) +
                             " in computation " + quoteText(computation->name()) +
                             " (first defined at " +
                             instructionsPath.index(it->second.second).toString() + ")");
        computation->addInstruction(std::move(instruction));
    }

    // Operands and control predecessors may be defined later in the list.
    for (const PendingOperand& ref : refs) {
        auto it = byName.find(ref.name);
        if (it == byName.end()) {
            const JsonPath itemPath = instructionsPath.index(ref.instructionIndex);
            const JsonPath listPath =
                itemPath.key(ref.control ? "control_predecessors" : "operands");
            return error(
                listPath.index(ref.listIndex),
                std::string(ref.control ? "unknown control predecessor " : "unknown operand ") +
                    quoteText(ref.name) + " (no such instruction in computation " +
                    quoteText(computation->name()) + ")");
        }
        if (ref.control)
            it->second.first->addControlDependencyTo(ref.instruction);
        else
            ref.instruction->appendOperand(it->second.first);
    }
    if (rootValue->is_string()) {
        const std::string& rootName = rootValue->get_ref<const std::string&>();
        auto it = byName.find(rootName);
        if (it == byName.end())
            return error(path.key("root"), "unknown root instruction " + quoteText(rootName) +
                                               " (no such instruction in computation " +
                                               quoteText(computation->name()) + ")");
        computation->setRoot(it->second.first);
    }
    module.addComputation(std::move(computation), isEntry);
    return Status::ok();
}

StatusOr<std::unique_ptr<HloInstruction>> Importer::readInstruction(
    const Json& value, const JsonPath& path, size_t computationIndex, size_t instructionIndex,
    std::vector<PendingOperand>& refs) {
    HLO_RETURN_IF_ERROR(expectObject(
        value, path,
        {"name", "opcode", "async_wrapped_opcode", "shape", "operands", "control_predecessors",
         "parameter_number", "tuple_index", "iota_dimension", "literal", "dimensions",
         // typed attributes (HloExtraAttributes)
         "slice", "dynamic_slice_sizes", "padding", "window", "convolution_dimension_numbers",
         "feature_group_count", "batch_group_count", "dot_dimension_numbers",
         "gather_dimension_numbers", "slice_sizes", "scatter_dimension_numbers",
         "indices_are_sorted", "unique_indices", "comparison_direction", "comparison_type",
         "exponent_bits", "mantissa_bits", "epsilon", "feature_index", "custom_call_target",
         "fusion_kind", "is_stable", "fft_type", "fft_length", "distribution", "top_k", "largest",
         // the rest
         "called_computations", "attributes", "metadata"}));
    // Keys read here rather than by readExtra(); counted to skip readExtra()
    // for the many instructions without typed attributes.
    size_t plainKeys = 0;

    HLO_ASSIGN_OR_RETURN(const Json* nameValue, requireKey(value, path, "name"));
    HLO_ASSIGN_OR_RETURN(std::string name, readString(*nameValue, path.key("name")));
    if (name.empty()) return error(path.key("name"), "instruction name is empty");

    HLO_ASSIGN_OR_RETURN(const Json* opcodeValue, requireKey(value, path, "opcode"));
    HLO_ASSIGN_OR_RETURN(std::string opcodeText, readString(*opcodeValue, path.key("opcode")));
    std::optional<HloOpcode> opcode = stringToHloOpcode(opcodeText);
    if (!opcode) return error(path.key("opcode"), "unknown opcode " + quoteText(opcodeText));

    HLO_ASSIGN_OR_RETURN(const Json* shapeValue, requireKey(value, path, "shape"));
    HLO_ASSIGN_OR_RETURN(Shape shape, readShape(*shapeValue, path.key("shape")));
    plainKeys += 3;

    auto instruction = std::make_unique<HloInstruction>(*opcode, std::move(name), std::move(shape));
    HloInstruction* raw = instruction.get();

    if (const Json* wrapped = findKey(value, "async_wrapped_opcode")) {
        ++plainKeys;
        const JsonPath wrappedPath = path.key("async_wrapped_opcode");
        HLO_ASSIGN_OR_RETURN(std::string wrappedText, readString(*wrapped, wrappedPath));
        std::optional<HloOpcode> wrappedOpcode = stringToHloOpcode(wrappedText);
        if (!wrappedOpcode) return error(wrappedPath, "unknown opcode " + quoteText(wrappedText));
        raw->mutableExtra().asyncWrappedOpcode = *wrappedOpcode;
    }

    HLO_ASSIGN_OR_RETURN(const Json* operandsValue, requireKey(value, path, "operands"));
    ++plainKeys;
    {
        const JsonPath operandsPath = path.key("operands");
        if (!operandsValue->is_array())
            return typeError(operandsPath, "an array of strings", *operandsValue);
        for (size_t i = 0; i < operandsValue->size(); ++i) {
            const Json& operand = (*operandsValue)[i];
            if (!operand.is_string()) return typeError(operandsPath.index(i), "a string", operand);
            refs.push_back(
                {raw, operand.get_ref<const std::string&>(), instructionIndex, i, false});
        }
    }
    if (const Json* preds = findKey(value, "control_predecessors")) {
        ++plainKeys;
        const JsonPath predsPath = path.key("control_predecessors");
        if (!preds->is_array()) return typeError(predsPath, "an array of strings", *preds);
        for (size_t i = 0; i < preds->size(); ++i) {
            const Json& pred = (*preds)[i];
            if (!pred.is_string()) return typeError(predsPath.index(i), "a string", pred);
            const std::string& predName = pred.get_ref<const std::string&>();
            for (size_t j = 0; j < i; ++j)
                if ((*preds)[j].get_ref<const std::string&>() == predName)
                    return error(predsPath.index(i),
                                 "duplicate control predecessor " + quoteText(predName));
            refs.push_back({raw, predName, instructionIndex, i, true});
        }
    }

    if (const Json* number = findKey(value, "parameter_number")) {
        ++plainKeys;
        HLO_ASSIGN_OR_RETURN(int64_t n, readNonNegativeInt(*number, path.key("parameter_number")));
        raw->setParameterNumber(n);
    } else if (*opcode == HloOpcode::kParameter) {
        return error(path, "missing required key \"parameter_number\" (opcode is parameter)");
    }
    const Json* tupleIndex = findKey(value, "tuple_index");
    const Json* iotaDimension = findKey(value, "iota_dimension");
    plainKeys += (tupleIndex ? 1 : 0) + (iotaDimension ? 1 : 0);
    if (tupleIndex && iotaDimension)
        return error(path.key("iota_dimension"),
                     "\"tuple_index\" and \"iota_dimension\" are exclusive");
    if (tupleIndex) {
        HLO_ASSIGN_OR_RETURN(int64_t index, readInt(*tupleIndex, path.key("tuple_index")));
        raw->setTupleIndex(index);
    } else if (*opcode == HloOpcode::kGetTupleElement) {
        return error(path, "missing required key \"tuple_index\" (opcode is get-tuple-element)");
    }
    if (iotaDimension) {
        HLO_ASSIGN_OR_RETURN(int64_t dimension,
                             readInt(*iotaDimension, path.key("iota_dimension")));
        raw->setIotaDimension(dimension);
    } else if (*opcode == HloOpcode::kIota) {
        return error(path, "missing required key \"iota_dimension\" (opcode is iota)");
    }
    if (const Json* literal = findKey(value, "literal")) {
        ++plainKeys;
        HLO_ASSIGN_OR_RETURN(std::string text, readString(*literal, path.key("literal")));
        raw->setLiteralText(std::move(text));
    }
    if (const Json* dims = findKey(value, "dimensions")) {
        ++plainKeys;
        HLO_ASSIGN_OR_RETURN(std::vector<int64_t> dimensions,
                             readIntList(*dims, path.key("dimensions")));
        raw->setDimensions(std::move(dimensions));
    }

    const Json* called = findKey(value, "called_computations");
    const Json* attrs = findKey(value, "attributes");
    const Json* metadata = findKey(value, "metadata");
    plainKeys += (called ? 1 : 0) + (attrs ? 1 : 0) + (metadata ? 1 : 0);
    if (value.size() > plainKeys) HLO_RETURN_IF_ERROR(readExtra(value, path, *raw));

    if (called) {
        JsonPath calledPath = path.key("called_computations");
        if (!called->is_array()) return typeError(calledPath, "an array", *called);
        auto& attributes = raw->mutableCalledComputationAttributes();
        for (size_t i = 0; i < called->size(); ++i) {
            const Json& item = (*called)[i];
            JsonPath itemPath = calledPath.index(i);
            HLO_RETURN_IF_ERROR(expectObject(item, itemPath, {"name", "computations", "is_list"}));
            CalledComputationAttribute attr;
            HLO_ASSIGN_OR_RETURN(const Json* attrName, requireKey(item, itemPath, "name"));
            HLO_ASSIGN_OR_RETURN(attr.name, readString(*attrName, itemPath.key("name")));
            if (attr.name.empty()) return error(itemPath.key("name"), "attribute name is empty");
            for (const CalledComputationAttribute& previous : attributes)
                if (previous.name == attr.name)
                    return error(itemPath.key("name"),
                                 "duplicate called-computation attribute " + quoteText(attr.name));
            if (const Json* isList = findKey(item, "is_list")) {
                HLO_ASSIGN_OR_RETURN(attr.isList, readBool(*isList, itemPath.key("is_list")));
            }
            HLO_ASSIGN_OR_RETURN(const Json* names, requireKey(item, itemPath, "computations"));
            JsonPath namesPath = itemPath.key("computations");
            if (!names->is_array())
                return typeError(namesPath, "an array of computation names", *names);
            for (size_t j = 0; j < names->size(); ++j) {
                const Json& entry = (*names)[j];
                attr.computations.push_back(nullptr);
                if (entry.is_null()) continue;  // an unset slot, kept as such
                if (!entry.is_string())
                    return typeError(namesPath.index(j), "a computation name", entry);
                m_pendingCalls.push_back({raw, attributes.size(), j,
                                          entry.get_ref<const std::string&>(), computationIndex,
                                          instructionIndex});
            }
            attributes.push_back(std::move(attr));
        }
    }
    if (attrs) {
        HLO_ASSIGN_OR_RETURN(raw->mutableAttributes(),
                             readAttributes(*attrs, path.key("attributes")));
    }
    if (metadata) {
        HLO_ASSIGN_OR_RETURN(std::string text, readString(*metadata, path.key("metadata")));
        raw->setMetadata(std::move(text));
    }
    return instruction;
}

StatusOr<std::vector<int64_t>> Importer::readTriple(const Json& value, const JsonPath& path,
                                                    size_t minSize) const {
    HLO_ASSIGN_OR_RETURN(std::vector<int64_t> values, readIntList(value, path));
    if (values.size() < minSize || values.size() > 3)
        return error(path, "expected " + std::to_string(minSize) + " to 3 integers, got " +
                               std::to_string(values.size()));
    return values;
}

StatusOr<Window> Importer::readWindow(const Json& value, const JsonPath& path) const {
    if (value.is_string()) {  // HLO text form, e.g. "size=3x3 stride=2x2"
        StatusOr<Window> window = parseWindow(value.get<std::string>());
        if (!window.isOk())
            return error(path, "cannot parse window " + quoteText(value.get<std::string>()) + ": " +
                                   window.status().message());
        return std::move(window).value();
    }
    if (!value.is_array()) return typeError(path, "an array of window dimensions", value);
    Window window;
    for (size_t i = 0; i < value.size(); ++i) {
        const Json& item = value[i];
        JsonPath itemPath = path.index(i);
        HLO_RETURN_IF_ERROR(expectObject(item, itemPath,
                                         {"size", "stride", "padding_low", "padding_high",
                                          "window_dilation", "base_dilation", "window_reversal"}));
        WindowDimension d;
        HLO_ASSIGN_OR_RETURN(const Json* size, requireKey(item, itemPath, "size"));
        HLO_ASSIGN_OR_RETURN(d.size, readInt(*size, itemPath.key("size")));
        HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "stride", d.stride));
        HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "padding_low", d.paddingLow));
        HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "padding_high", d.paddingHigh));
        HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "window_dilation", d.windowDilation));
        HLO_RETURN_IF_ERROR(optionalInt(item, itemPath, "base_dilation", d.baseDilation));
        if (const Json* reversal = findKey(item, "window_reversal")) {
            HLO_ASSIGN_OR_RETURN(d.windowReversal,
                                 readBool(*reversal, itemPath.key("window_reversal")));
        }
        window.dimensions.push_back(d);
    }
    return window;
}

StatusOr<ConvolutionDimensionNumbers> Importer::readConvolutionDnums(const Json& value,
                                                                     const JsonPath& path) const {
    if (value.is_string()) {  // dim_labels text, e.g. "b01f_01io->b01f"
        StatusOr<ConvolutionDimensionNumbers> dnums =
            parseConvolutionDimensionNumbers(value.get<std::string>());
        if (!dnums.isOk())
            return error(path, "cannot parse dim_labels " + quoteText(value.get<std::string>()) +
                                   ": " + dnums.status().message());
        return std::move(dnums).value();
    }
    HLO_RETURN_IF_ERROR(expectObject(
        value, path,
        {"input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
         "kernel_input_feature_dimension", "kernel_output_feature_dimension",
         "kernel_spatial_dimensions", "output_batch_dimension", "output_feature_dimension",
         "output_spatial_dimensions"}));
    ConvolutionDimensionNumbers d;
    struct IntField {
        std::string_view key;
        int64_t* target;
    };
    for (const IntField& field :
         {IntField{"input_batch_dimension", &d.inputBatchDimension},
          IntField{"input_feature_dimension", &d.inputFeatureDimension},
          IntField{"kernel_input_feature_dimension", &d.kernelInputFeatureDimension},
          IntField{"kernel_output_feature_dimension", &d.kernelOutputFeatureDimension},
          IntField{"output_batch_dimension", &d.outputBatchDimension},
          IntField{"output_feature_dimension", &d.outputFeatureDimension}}) {
        HLO_ASSIGN_OR_RETURN(const Json* v, requireKey(value, path, field.key));
        HLO_ASSIGN_OR_RETURN(*field.target, readInt(*v, path.key(field.key)));
    }
    HLO_RETURN_IF_ERROR(
        optionalIntList(value, path, "input_spatial_dimensions", d.inputSpatialDimensions));
    HLO_RETURN_IF_ERROR(
        optionalIntList(value, path, "kernel_spatial_dimensions", d.kernelSpatialDimensions));
    HLO_RETURN_IF_ERROR(
        optionalIntList(value, path, "output_spatial_dimensions", d.outputSpatialDimensions));
    return d;
}

StatusOr<DotDimensionNumbers> Importer::readDotDnums(const Json& value,
                                                     const JsonPath& path) const {
    HLO_RETURN_IF_ERROR(
        expectObject(value, path,
                     {"lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims",
                      "rhs_contracting_dims", "lhs_ragged_dims", "rhs_group_dims"}));
    DotDimensionNumbers d;
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "lhs_batch_dims", d.lhsBatchDimensions));
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "rhs_batch_dims", d.rhsBatchDimensions));
    HLO_RETURN_IF_ERROR(
        optionalIntList(value, path, "lhs_contracting_dims", d.lhsContractingDimensions));
    HLO_RETURN_IF_ERROR(
        optionalIntList(value, path, "rhs_contracting_dims", d.rhsContractingDimensions));
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "lhs_ragged_dims", d.lhsRaggedDimensions));
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "rhs_group_dims", d.rhsGroupDimensions));
    return d;
}

StatusOr<GatherDimensionNumbers> Importer::readGatherDnums(const Json& value,
                                                           const JsonPath& path) const {
    HLO_RETURN_IF_ERROR(
        expectObject(value, path,
                     {"offset_dims", "collapsed_slice_dims", "start_index_map",
                      "operand_batching_dims", "start_indices_batching_dims", "index_vector_dim"}));
    GatherDimensionNumbers d;
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "offset_dims", d.offsetDims));
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "collapsed_slice_dims", d.collapsedSliceDims));
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "start_index_map", d.startIndexMap));
    HLO_RETURN_IF_ERROR(
        optionalIntList(value, path, "operand_batching_dims", d.operandBatchingDims));
    HLO_RETURN_IF_ERROR(
        optionalIntList(value, path, "start_indices_batching_dims", d.startIndicesBatchingDims));
    HLO_ASSIGN_OR_RETURN(const Json* indexVectorDim, requireKey(value, path, "index_vector_dim"));
    HLO_ASSIGN_OR_RETURN(d.indexVectorDim, readInt(*indexVectorDim, path.key("index_vector_dim")));
    return d;
}

StatusOr<ScatterDimensionNumbers> Importer::readScatterDnums(const Json& value,
                                                             const JsonPath& path) const {
    HLO_RETURN_IF_ERROR(
        expectObject(value, path,
                     {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                      "input_batching_dims", "scatter_indices_batching_dims", "index_vector_dim"}));
    ScatterDimensionNumbers d;
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "update_window_dims", d.updateWindowDims));
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "inserted_window_dims", d.insertedWindowDims));
    HLO_RETURN_IF_ERROR(
        optionalIntList(value, path, "scatter_dims_to_operand_dims", d.scatterDimsToOperandDims));
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "input_batching_dims", d.inputBatchingDims));
    HLO_RETURN_IF_ERROR(optionalIntList(value, path, "scatter_indices_batching_dims",
                                        d.scatterIndicesBatchingDims));
    HLO_ASSIGN_OR_RETURN(const Json* indexVectorDim, requireKey(value, path, "index_vector_dim"));
    HLO_ASSIGN_OR_RETURN(d.indexVectorDim, readInt(*indexVectorDim, path.key("index_vector_dim")));
    return d;
}

Status Importer::readExtra(const Json& object, const JsonPath& path,
                           HloInstruction& instruction) const {
    // mutableExtra() allocates; call it only for keys that are present.
    auto extra = [&]() -> HloExtraAttributes& { return instruction.mutableExtra(); };
    auto keyOf = [&](std::string_view key) { return path.key(key); };

    if (const Json* v = findKey(object, "slice")) {
        JsonPath p = keyOf("slice");
        if (!v->is_array()) return typeError(p, "an array of [start, limit, stride] triples", *v);
        std::vector<SliceDimension> slice;
        for (size_t i = 0; i < v->size(); ++i) {
            HLO_ASSIGN_OR_RETURN(std::vector<int64_t> t, readTriple((*v)[i], p.index(i), 2));
            slice.push_back({t[0], t[1], t.size() > 2 ? t[2] : 1});
        }
        extra().slice = std::move(slice);
    }
    if (const Json* v = findKey(object, "dynamic_slice_sizes")) {
        HLO_ASSIGN_OR_RETURN(extra().dynamicSliceSizes,
                             readIntList(*v, keyOf("dynamic_slice_sizes")));
    }
    if (const Json* v = findKey(object, "padding")) {
        JsonPath p = keyOf("padding");
        if (v->is_string()) {  // HLO text form, e.g. "0_1x2_3_1"
            StatusOr<std::vector<PaddingDimension>> padding =
                parsePaddingConfig(v->get<std::string>());
            if (!padding.isOk())
                return error(p, "cannot parse padding " + quoteText(v->get<std::string>()) + ": " +
                                    padding.status().message());
            extra().padding = std::move(padding).value();
        } else {
            if (!v->is_array())
                return typeError(p, "an array of [low, high, interior] triples", *v);
            std::vector<PaddingDimension> padding;
            for (size_t i = 0; i < v->size(); ++i) {
                HLO_ASSIGN_OR_RETURN(std::vector<int64_t> t, readTriple((*v)[i], p.index(i), 2));
                padding.push_back({t[0], t[1], t.size() > 2 ? t[2] : 0});
            }
            extra().padding = std::move(padding);
        }
    }
    if (const Json* v = findKey(object, "window")) {
        HLO_ASSIGN_OR_RETURN(Window window, readWindow(*v, keyOf("window")));
        extra().window = std::move(window);
    }
    if (const Json* v = findKey(object, "convolution_dimension_numbers")) {
        HLO_ASSIGN_OR_RETURN(ConvolutionDimensionNumbers d,
                             readConvolutionDnums(*v, keyOf("convolution_dimension_numbers")));
        extra().convolutionDimensionNumbers = std::move(d);
    }
    if (const Json* v = findKey(object, "feature_group_count")) {
        HLO_ASSIGN_OR_RETURN(extra().featureGroupCount, readInt(*v, keyOf("feature_group_count")));
    }
    if (const Json* v = findKey(object, "batch_group_count")) {
        HLO_ASSIGN_OR_RETURN(extra().batchGroupCount, readInt(*v, keyOf("batch_group_count")));
    }
    if (const Json* v = findKey(object, "dot_dimension_numbers")) {
        HLO_ASSIGN_OR_RETURN(DotDimensionNumbers d,
                             readDotDnums(*v, keyOf("dot_dimension_numbers")));
        extra().dotDimensionNumbers = std::move(d);
    }
    if (const Json* v = findKey(object, "gather_dimension_numbers")) {
        HLO_ASSIGN_OR_RETURN(GatherDimensionNumbers d,
                             readGatherDnums(*v, keyOf("gather_dimension_numbers")));
        extra().gatherDimensionNumbers = std::move(d);
    }
    if (const Json* v = findKey(object, "slice_sizes")) {
        HLO_ASSIGN_OR_RETURN(extra().gatherSliceSizes, readIntList(*v, keyOf("slice_sizes")));
    }
    if (const Json* v = findKey(object, "scatter_dimension_numbers")) {
        HLO_ASSIGN_OR_RETURN(ScatterDimensionNumbers d,
                             readScatterDnums(*v, keyOf("scatter_dimension_numbers")));
        extra().scatterDimensionNumbers = std::move(d);
    }
    if (const Json* v = findKey(object, "indices_are_sorted")) {
        HLO_ASSIGN_OR_RETURN(bool flag, readBool(*v, keyOf("indices_are_sorted")));
        if (flag) extra().indicesAreSorted = true;
    }
    if (const Json* v = findKey(object, "unique_indices")) {
        HLO_ASSIGN_OR_RETURN(bool flag, readBool(*v, keyOf("unique_indices")));
        if (flag) extra().uniqueIndices = true;
    }
    if (const Json* v = findKey(object, "comparison_direction")) {
        JsonPath p = keyOf("comparison_direction");
        HLO_ASSIGN_OR_RETURN(std::string text, readString(*v, p));
        std::optional<ComparisonDirection> direction = parseComparisonDirection(text);
        if (!direction)
            return error(p, "unknown comparison direction " + quoteText(text) +
                                " (expected EQ, NE, GE, GT, LE or LT)");
        extra().comparisonDirection = *direction;
    }
    if (const Json* v = findKey(object, "comparison_type")) {
        JsonPath p = keyOf("comparison_type");
        HLO_ASSIGN_OR_RETURN(std::string text, readString(*v, p));
        std::optional<ComparisonType> type = parseComparisonType(text);
        if (!type)
            return error(p, "unknown comparison type " + quoteText(text) +
                                " (expected FLOAT, TOTALORDER, SIGNED or UNSIGNED)");
        extra().comparisonType = *type;
    }
    if (const Json* v = findKey(object, "exponent_bits")) {
        HLO_ASSIGN_OR_RETURN(int64_t bits, readInt(*v, keyOf("exponent_bits")));
        extra().exponentBits = bits;
    }
    if (const Json* v = findKey(object, "mantissa_bits")) {
        HLO_ASSIGN_OR_RETURN(int64_t bits, readInt(*v, keyOf("mantissa_bits")));
        extra().mantissaBits = bits;
    }
    if (const Json* v = findKey(object, "epsilon")) {
        JsonPath p = keyOf("epsilon");
        if (v->is_string()) {
            std::string text = v->get<std::string>();
            double number = 0;
            const char* begin = text.data();
            if (begin != text.data() + text.size() && *begin == '+')
                ++begin;  // from_chars rejects '+'

            const char* end = text.data() + text.size();
            auto [ptr, ec] = std::from_chars(begin, end, number);
            if (text.empty() || ec != std::errc() || ptr != end)
                return error(p, "cannot parse epsilon " + quoteText(text) + " as a number");
            extra().epsilon = number;
            extra().epsilonText = std::move(text);
        } else if (v->is_number()) {
            extra().epsilon = v->get<double>();
        } else {
            return typeError(p, "a number or a numeric string", *v);
        }
    }
    if (const Json* v = findKey(object, "feature_index")) {
        HLO_ASSIGN_OR_RETURN(int64_t index, readInt(*v, keyOf("feature_index")));
        extra().featureIndex = index;
    }
    if (const Json* v = findKey(object, "custom_call_target")) {
        HLO_ASSIGN_OR_RETURN(std::string target, readString(*v, keyOf("custom_call_target")));
        extra().customCallTarget = std::move(target);
    }
    if (const Json* v = findKey(object, "fusion_kind")) {
        HLO_ASSIGN_OR_RETURN(std::string kind, readString(*v, keyOf("fusion_kind")));
        extra().fusionKind = std::move(kind);
    }
    if (const Json* v = findKey(object, "is_stable")) {
        HLO_ASSIGN_OR_RETURN(bool stable, readBool(*v, keyOf("is_stable")));
        extra().isStable = stable;
    }
    if (const Json* v = findKey(object, "fft_type")) {
        HLO_ASSIGN_OR_RETURN(std::string type, readString(*v, keyOf("fft_type")));
        extra().fftType = std::move(type);
    }
    if (const Json* v = findKey(object, "fft_length")) {
        HLO_ASSIGN_OR_RETURN(extra().fftLength, readIntList(*v, keyOf("fft_length")));
    }
    if (const Json* v = findKey(object, "distribution")) {
        HLO_ASSIGN_OR_RETURN(std::string distribution, readString(*v, keyOf("distribution")));
        extra().distribution = std::move(distribution);
    }
    if (const Json* v = findKey(object, "top_k")) {
        HLO_ASSIGN_OR_RETURN(int64_t k, readInt(*v, keyOf("top_k")));
        extra().topK = k;
    }
    if (const Json* v = findKey(object, "largest")) {
        HLO_ASSIGN_OR_RETURN(bool largest, readBool(*v, keyOf("largest")));
        extra().largest = largest;
    }
    return Status::ok();
}

}  // namespace

std::string moduleToJson(const HloModule& module, int indent) {
    Json value = moduleToJsonValue(module);
    // Invalid UTF-8 in names or verbatim text is replaced by U+FFFD rather
    // than throwing.
    std::string out;
    if (indent < 0)
        out = value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
    else
        appendPretty(out, value, indent, 0);
    out += '\n';
    return out;
}

StatusOr<std::unique_ptr<HloModule>> moduleFromJson(std::string_view text,
                                                    const std::string& fileName) {
    Importer importer(fileName);
    return importer.run(text);
}

}  // namespace hloscope
