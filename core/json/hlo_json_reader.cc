// JSON import (moduleFromJson). Import never throws: the JSON text is parsed
// with the non-throwing nlohmann entry points, every value's type is checked
// before it is read, and every error is a Status(kInvalidArgument) whose
// message starts with the JSON path of the offending value. Import
// reconstructs every exported field, so import -> export is a fixed point.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ir/async_wrapping.h"
#include "core/json/hlo_json.h"
#include "core/json/hlo_json_internal.h"
#include "core/text/hlo_parser.h"

namespace hloscope {
namespace {

using namespace hlo_json_internal;

class Importer : public JsonReader {
public:
    explicit Importer(std::string fileName) : JsonReader(std::move(fileName)) {}

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

    StatusOr<Shape> readShape(const Json& value, const JsonPath& path);

    Status readHeader(const Json& root, const JsonPath& top, HloModule& module);
    Status readInputOutputAliases(const Json& value, const JsonPath& path, HloModule& module) const;
    Status readStackFrames(const Json& value, const JsonPath& path, StackFrameIndex& out) const;
    Status readComputation(const Json& value, const JsonPath& path, size_t computationIndex,
                           HloModule& module, std::optional<size_t>& entryIndex);
    StatusOr<std::unique_ptr<HloInstruction>> readInstruction(const Json& value,
                                                              const JsonPath& path,
                                                              size_t computationIndex,
                                                              size_t instructionIndex,
                                                              std::vector<PendingOperand>& refs);
    Status readReferences(const Json& value, const JsonPath& path, HloInstruction* instruction,
                          size_t instructionIndex, std::vector<PendingOperand>& refs,
                          size_t& plainKeys) const;
    Status readIndices(const Json& value, const JsonPath& path, HloInstruction& instruction,
                       size_t& plainKeys) const;
    Status readCalledComputations(const Json& value, const JsonPath& path,
                                  HloInstruction* instruction, size_t computationIndex,
                                  size_t instructionIndex);
    Status readExtra(const Json& object, const JsonPath& path, HloInstruction& instruction) const;

    std::vector<PendingCall> m_pendingCalls;
    // Instructions of large modules share few distinct shape strings.
    std::unordered_map<std::string_view, Shape> m_shapeCache;
};

// The keys of an instruction object, in export order: these, the typed
// attributes, then kTrailingInstructionKeys.
constexpr std::string_view kLeadingInstructionKeys[] = {"name",
                                                        "opcode",
                                                        "async_wrapped_opcode",
                                                        "shape",
                                                        "operands",
                                                        "control_predecessors",
                                                        "parameter_number",
                                                        "tuple_index",
                                                        "iota_dimension",
                                                        "literal",
                                                        "dimensions"};
constexpr std::string_view kTrailingInstructionKeys[] = {"called_computations", "attributes",
                                                         "metadata"};

std::span<const std::string_view> instructionKeys() {
    static const std::vector<std::string_view> keys = [] {
        std::vector<std::string_view> out(std::begin(kLeadingInstructionKeys),
                                          std::end(kLeadingInstructionKeys));
        for (const ExtraAttributeCodec& codec : extraAttributeCodecs()) out.push_back(codec.key);
        out.insert(out.end(), std::begin(kTrailingInstructionKeys),
                   std::end(kTrailingInstructionKeys));
        return out;
    }();
    return keys;
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
        HLO_RETURN_IF_ERROR(readInputOutputAliases(*value, top.key("input_output_alias"), module));
    }
    if (const Json* value = findKey(root, "buffer_donor")) {
        const JsonPath path = top.key("buffer_donor");
        if (!value->is_array()) return typeError(path, "an array", *value);
        module.setHasBufferDonorAttribute(true);
        for (size_t i = 0; i < value->size(); ++i) {
            HLO_ASSIGN_OR_RETURN(BufferDonor donor, readStruct(*this, (*value)[i], path.index(i),
                                                               bufferDonorStruct()));
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

Status Importer::readInputOutputAliases(const Json& value, const JsonPath& path,
                                        HloModule& module) const {
    if (!value.is_array()) return typeError(path, "an array", value);
    module.setHasInputOutputAliasAttribute(true);
    for (size_t i = 0; i < value.size(); ++i) {
        const Json& item = value[i];
        JsonPath itemPath = path.index(i);
        HLO_RETURN_IF_ERROR(expectObject(
            item, itemPath,
            {"output_index", "parameter_number", "parameter_index", "kind", "kind_written"}));
        InputOutputAlias alias;
        HLO_ASSIGN_OR_RETURN(const Json* outputIndex, requireKey(item, itemPath, "output_index"));
        HLO_ASSIGN_OR_RETURN(alias.outputIndex,
                             readIntList(*outputIndex, itemPath.key("output_index")));
        HLO_ASSIGN_OR_RETURN(const Json* number, requireKey(item, itemPath, "parameter_number"));
        HLO_ASSIGN_OR_RETURN(alias.parameterNumber,
                             readInt(*number, itemPath.key("parameter_number")));
        HLO_ASSIGN_OR_RETURN(const Json* paramIndex, requireKey(item, itemPath, "parameter_index"));
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
            HLO_ASSIGN_OR_RETURN(
                FileLocation location,
                readStruct(*this, (*locations)[i], listPath.index(i), fileLocationStruct()));
            out.fileLocations.push_back(location);
        }
    }
    if (const Json* frames = findKey(value, "stack_frames")) {
        JsonPath listPath = path.key("stack_frames");
        if (!frames->is_array()) return typeError(listPath, "an array", *frames);
        for (size_t i = 0; i < frames->size(); ++i) {
            HLO_ASSIGN_OR_RETURN(
                StackFrame frame,
                readStruct(*this, (*frames)[i], listPath.index(i), stackFrameStruct()));
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
    HLO_RETURN_IF_ERROR(expectObject(value, path, instructionKeys()));
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

    HLO_RETURN_IF_ERROR(readReferences(value, path, raw, instructionIndex, refs, plainKeys));
    HLO_RETURN_IF_ERROR(readIndices(value, path, *raw, plainKeys));
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
        HLO_RETURN_IF_ERROR(readCalledComputations(*called, path.key("called_computations"), raw,
                                                   computationIndex, instructionIndex));
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

// `operands` and `control_predecessors`, resolved later by readComputation().
Status Importer::readReferences(const Json& value, const JsonPath& path,
                                HloInstruction* instruction, size_t instructionIndex,
                                std::vector<PendingOperand>& refs, size_t& plainKeys) const {
    HLO_ASSIGN_OR_RETURN(const Json* operandsValue, requireKey(value, path, "operands"));
    ++plainKeys;
    const JsonPath operandsPath = path.key("operands");
    if (!operandsValue->is_array())
        return typeError(operandsPath, "an array of strings", *operandsValue);
    for (size_t i = 0; i < operandsValue->size(); ++i) {
        const Json& operand = (*operandsValue)[i];
        if (!operand.is_string()) return typeError(operandsPath.index(i), "a string", operand);
        refs.push_back(
            {instruction, operand.get_ref<const std::string&>(), instructionIndex, i, false});
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
            refs.push_back({instruction, predName, instructionIndex, i, true});
        }
    }
    return Status::ok();
}

// `parameter_number`, `tuple_index` and `iota_dimension`, each required by
// its opcode.
Status Importer::readIndices(const Json& value, const JsonPath& path, HloInstruction& instruction,
                             size_t& plainKeys) const {
    const HloOpcode opcode = instruction.opcode();
    if (const Json* number = findKey(value, "parameter_number")) {
        ++plainKeys;
        HLO_ASSIGN_OR_RETURN(int64_t n, readNonNegativeInt(*number, path.key("parameter_number")));
        instruction.setParameterNumber(n);
    } else if (opcode == HloOpcode::kParameter) {
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
        instruction.setTupleIndex(index);
    } else if (opcode == HloOpcode::kGetTupleElement) {
        return error(path, "missing required key \"tuple_index\" (opcode is get-tuple-element)");
    }
    if (iotaDimension) {
        HLO_ASSIGN_OR_RETURN(int64_t dimension,
                             readInt(*iotaDimension, path.key("iota_dimension")));
        instruction.setIotaDimension(dimension);
    } else if (opcode == HloOpcode::kIota) {
        return error(path, "missing required key \"iota_dimension\" (opcode is iota)");
    }
    return Status::ok();
}

// `called_computations`; the names are resolved by run() once every
// computation is read.
Status Importer::readCalledComputations(const Json& value, const JsonPath& path,
                                        HloInstruction* instruction, size_t computationIndex,
                                        size_t instructionIndex) {
    if (!value.is_array()) return typeError(path, "an array", value);
    auto& attributes = instruction->mutableCalledComputationAttributes();
    for (size_t i = 0; i < value.size(); ++i) {
        const Json& item = value[i];
        JsonPath itemPath = path.index(i);
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
            m_pendingCalls.push_back({instruction, attributes.size(), j,
                                      entry.get_ref<const std::string&>(), computationIndex,
                                      instructionIndex});
        }
        attributes.push_back(std::move(attr));
    }
    return Status::ok();
}

// The typed attributes, in the order of extraAttributeCodecs().
Status Importer::readExtra(const Json& object, const JsonPath& path,
                           HloInstruction& instruction) const {
    for (const ExtraAttributeCodec& codec : extraAttributeCodecs()) {
        if (const Json* value = findKey(object, codec.key))
            HLO_RETURN_IF_ERROR(codec.read(*this, *value, path.key(codec.key), instruction));
    }
    return Status::ok();
}

}  // namespace

StatusOr<std::unique_ptr<HloModule>> moduleFromJson(std::string_view text,
                                                    const std::string& fileName) {
    Importer importer(fileName);
    return importer.run(text);
}

}  // namespace hloscope
