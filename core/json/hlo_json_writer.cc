// JSON export (moduleToJson). Every key is written in a fixed order
// (nlohmann::ordered_json), so the text is a deterministic function of the
// module; typed attributes follow extraAttributeCodecs().
#include <charconv>
#include <string>
#include <string_view>
#include <utility>

#include "core/ir/async_wrapping.h"
#include "core/json/hlo_json.h"
#include "core/json/hlo_json_internal.h"

namespace hloscope {
namespace hlo_json_internal {

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

namespace {

// Typed attributes of HloExtraAttributes, only those that are set.
void extraToJson(const HloExtraAttributes& extra, Json& out) {
    for (const ExtraAttributeCodec& codec : extraAttributeCodecs())
        codec.write(extra, codec.key, out);
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
    for (const FileLocation& location : frames.fileLocations)
        locations.push_back(structToJson(location, fileLocationStruct()));
    out["file_locations"] = std::move(locations);
    Json stackFrames = Json::array();
    for (const StackFrame& frame : frames.stackFrames)
        stackFrames.push_back(structToJson(frame, stackFrameStruct()));
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
        for (const BufferDonor& donor : module.bufferDonors())
            donors.push_back(structToJson(donor, bufferDonorStruct()));
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

}  // namespace
}  // namespace hlo_json_internal

std::string moduleToJson(const HloModule& module, int indent) {
    using namespace hlo_json_internal;
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

}  // namespace hloscope
