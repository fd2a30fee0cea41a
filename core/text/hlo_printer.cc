#include "core/text/hlo_printer.h"

#include <charconv>
#include <cstdio>
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/async_wrapping.h"
#include "core/ir/change_stamps.h"

namespace hloscope {
namespace {

constexpr int kIndexCommentInterval = 5;

void appendInt(std::string& out, int64_t value) {
    char buffer[24];
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out.append(buffer, result.ptr);
}

void appendIntList(std::string& out, const std::vector<int64_t>& values) {
    out += '{';
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ',';
        appendInt(out, values[i]);
    }
    out += '}';
}

void appendShapeIndex(std::string& out, const ShapeIndex& index) { appendIntList(out, index); }

void appendName(std::string& out, const std::string& name, const HloPrintOptions& options) {
    if (options.printPercent) out += '%';
    out += name;
}

void appendQuoted(std::string& out, std::string_view text) {
    out += '"';
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    out += '"';
}

// ", name=" separator helper.
void beginAttribute(std::string& out, std::string_view name) {
    out += ", ";
    out += name;
    out += '=';
}

void appendIntListAttribute(std::string& out, std::string_view name,
                            const std::vector<int64_t>& values) {
    beginAttribute(out, name);
    appendIntList(out, values);
}

void appendNonEmptyIntListAttribute(std::string& out, std::string_view name,
                                    const std::vector<int64_t>& values) {
    if (!values.empty()) appendIntListAttribute(out, name, values);
}

void appendDotDimensions(std::string& out, const DotDimensionNumbers& dnums) {
    appendNonEmptyIntListAttribute(out, "lhs_batch_dims", dnums.lhsBatchDimensions);
    appendNonEmptyIntListAttribute(out, "lhs_contracting_dims", dnums.lhsContractingDimensions);
    appendNonEmptyIntListAttribute(out, "rhs_batch_dims", dnums.rhsBatchDimensions);
    appendNonEmptyIntListAttribute(out, "rhs_contracting_dims", dnums.rhsContractingDimensions);
    appendNonEmptyIntListAttribute(out, "lhs_ragged_dims", dnums.lhsRaggedDimensions);
    appendNonEmptyIntListAttribute(out, "rhs_group_dims", dnums.rhsGroupDimensions);
}

void appendGatherDimensions(std::string& out, const GatherDimensionNumbers& dnums) {
    appendIntListAttribute(out, "offset_dims", dnums.offsetDims);
    appendIntListAttribute(out, "collapsed_slice_dims", dnums.collapsedSliceDims);
    appendIntListAttribute(out, "start_index_map", dnums.startIndexMap);
    appendNonEmptyIntListAttribute(out, "operand_batching_dims", dnums.operandBatchingDims);
    appendNonEmptyIntListAttribute(out, "start_indices_batching_dims",
                                   dnums.startIndicesBatchingDims);
    beginAttribute(out, "index_vector_dim");
    appendInt(out, dnums.indexVectorDim);
}

void appendScatterDimensions(std::string& out, const ScatterDimensionNumbers& dnums) {
    appendIntListAttribute(out, "update_window_dims", dnums.updateWindowDims);
    appendIntListAttribute(out, "inserted_window_dims", dnums.insertedWindowDims);
    appendIntListAttribute(out, "scatter_dims_to_operand_dims", dnums.scatterDimsToOperandDims);
    appendNonEmptyIntListAttribute(out, "input_batching_dims", dnums.inputBatchingDims);
    appendNonEmptyIntListAttribute(out, "scatter_indices_batching_dims",
                                   dnums.scatterIndicesBatchingDims);
    beginAttribute(out, "index_vector_dim");
    appendInt(out, dnums.indexVectorDim);
}

std::string formatDouble(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.17g", value);
    return buffer;
}

void appendBool(std::string& out, bool value) { out += value ? "true" : "false"; }

// Typed attributes in a fixed canonical order.
void appendTypedAttributes(std::string& out, const HloInstruction& instruction) {
    HloOpcode opcode = instruction.opcode();
    if (opcode == HloOpcode::kGetTupleElement) {
        beginAttribute(out, "index");
        appendInt(out, instruction.tupleIndex());
    }
    if (opcode == HloOpcode::kIota) {
        beginAttribute(out, "iota_dimension");
        appendInt(out, instruction.iotaDimension());
    }
    const HloExtraAttributes* extra = instruction.extra();
    if (extra && extra->fusionKind) {
        beginAttribute(out, "kind");
        out += *extra->fusionKind;
    }
    if (instruction.hasDimensions()) appendIntListAttribute(out, "dimensions", instruction.dimensions());
    if (!extra) return;
    if (!extra->slice.empty() || opcode == HloOpcode::kSlice) {
        beginAttribute(out, "slice");
        out += sliceToString(extra->slice);
    }
    if (!extra->dynamicSliceSizes.empty() || opcode == HloOpcode::kDynamicSlice)
        appendIntListAttribute(out, "dynamic_slice_sizes", extra->dynamicSliceSizes);
    if (!extra->padding.empty()) {
        beginAttribute(out, "padding");
        out += paddingConfigToString(extra->padding);
    }
    if (extra->window) {
        beginAttribute(out, "window");
        out += '{';
        out += windowToString(*extra->window);
        out += '}';
    }
    if (extra->convolutionDimensionNumbers) {
        beginAttribute(out, "dim_labels");
        out += extra->convolutionDimensionNumbers->toString();
    }
    if (extra->featureGroupCount != 1) {
        beginAttribute(out, "feature_group_count");
        appendInt(out, extra->featureGroupCount);
    }
    if (extra->batchGroupCount != 1) {
        beginAttribute(out, "batch_group_count");
        appendInt(out, extra->batchGroupCount);
    }
    if (extra->dotDimensionNumbers) appendDotDimensions(out, *extra->dotDimensionNumbers);
    if (extra->gatherDimensionNumbers) {
        appendGatherDimensions(out, *extra->gatherDimensionNumbers);
        appendIntListAttribute(out, "slice_sizes", extra->gatherSliceSizes);
    }
    if (extra->scatterDimensionNumbers) appendScatterDimensions(out, *extra->scatterDimensionNumbers);
    if (extra->indicesAreSorted) out += ", indices_are_sorted=true";
    if (extra->uniqueIndices) out += ", unique_indices=true";
    if (extra->comparisonDirection) {
        beginAttribute(out, "direction");
        out += comparisonDirectionString(*extra->comparisonDirection);
    }
    if (extra->comparisonType != ComparisonType::kDefault) {
        beginAttribute(out, "type");
        out += comparisonTypeString(extra->comparisonType);
    }
    if (extra->exponentBits) {
        beginAttribute(out, "exponent_bits");
        appendInt(out, *extra->exponentBits);
    }
    if (extra->mantissaBits) {
        beginAttribute(out, "mantissa_bits");
        appendInt(out, *extra->mantissaBits);
    }
    if (extra->epsilon) {
        beginAttribute(out, "epsilon");
        out += extra->epsilonText.empty() ? formatDouble(*extra->epsilon) : extra->epsilonText;
    }
    if (extra->featureIndex) {
        beginAttribute(out, "feature_index");
        appendInt(out, *extra->featureIndex);
    }
    if (extra->customCallTarget) {
        beginAttribute(out, "custom_call_target");
        appendQuoted(out, *extra->customCallTarget);
    }
    if (extra->isStable) {
        beginAttribute(out, "is_stable");
        appendBool(out, *extra->isStable);
    }
    if (extra->fftType) {
        beginAttribute(out, "fft_type");
        out += *extra->fftType;
    }
    if (!extra->fftLength.empty()) appendIntListAttribute(out, "fft_length", extra->fftLength);
    if (extra->distribution) {
        beginAttribute(out, "distribution");
        out += *extra->distribution;
    }
    if (extra->topK) {
        beginAttribute(out, "k");
        appendInt(out, *extra->topK);
    }
    if (extra->largest) {
        beginAttribute(out, "largest");
        appendBool(out, *extra->largest);
    }
}

void appendOpcode(std::string& out, const HloInstruction& instruction) {
    const HloExtraAttributes* extra = instruction.extra();
    if (extra && extra->asyncWrappedOpcode && hloOpcodeIsAsync(instruction.opcode()) &&
        asyncWrittenAsSugar(instruction)) {
        out += hloOpcodeString(*extra->asyncWrappedOpcode);
        switch (instruction.opcode()) {
        case HloOpcode::kAsyncStart: out += "-start"; break;
        case HloOpcode::kAsyncUpdate: out += "-update"; break;
        default: out += "-done"; break;
        }
        return;
    }
    out += hloOpcodeString(instruction.opcode());
}

void appendSignature(std::string& out, const HloComputation& computation,
                     const HloPrintOptions& options) {
    out += '(';
    bool first = true;
    for (const HloInstruction* parameter : computation.parameters()) {
        if (parameter == nullptr) continue;
        if (!first) out += ", ";
        first = false;
        out += parameter->name();
        out += ": ";
        parameter->shape().appendTo(out, options.printLayouts);
    }
    out += ") -> ";
    computation.resultShape().appendTo(out, options.printLayouts);
}

// What HloTextCache puts in place of printing an instruction line or a computation.
struct LinePrinter {
    std::function<void(std::string&, const HloInstruction&)> instruction;
    std::function<void(std::string&, const HloComputation&)> computation;
};

void appendComputation(std::string& out, const HloComputation& computation,
                       const HloPrintOptions& options, const LinePrinter* line = nullptr) {
    if (computation.isEntry()) out += "ENTRY ";
    appendName(out, computation.name(), options);
    out += ' ';
    appendSignature(out, computation, options);
    out += " {\n";
    for (const auto& instruction : computation.instructions()) {
        out += "  ";
        if (instruction.get() == computation.root()) out += "ROOT ";
        if (line)
            line->instruction(out, *instruction);
        else
            appendInstruction(out, *instruction, options);
        out += '\n';
    }
    out += '}';
    if (!computation.executionThread().empty()) {
        out += ", execution_thread=";
        appendQuoted(out, computation.executionThread());
    }
    out += '\n';
}

void appendStackFrames(std::string& out, const StackFrameIndex& frames) {
    if (frames.empty()) return;
    auto appendNames = [&](std::string_view title, const std::vector<std::string>& names) {
        out += title;
        out += '\n';
        for (size_t i = 0; i < names.size(); ++i) {
            appendInt(out, static_cast<int64_t>(i + 1));
            out += ' ';
            appendQuoted(out, names[i]);
            out += '\n';
        }
        out += '\n';
    };
    appendNames("FileNames", frames.fileNames);
    appendNames("FunctionNames", frames.functionNames);
    out += "FileLocations\n";
    for (size_t i = 0; i < frames.fileLocations.size(); ++i) {
        const FileLocation& loc = frames.fileLocations[i];
        appendInt(out, static_cast<int64_t>(i + 1));
        out += " {file_name_id=";
        appendInt(out, loc.fileNameId);
        out += " function_name_id=";
        appendInt(out, loc.functionNameId);
        out += " line=";
        appendInt(out, loc.line);
        out += " end_line=";
        appendInt(out, loc.endLine);
        out += " column=";
        appendInt(out, loc.column);
        out += " end_column=";
        appendInt(out, loc.endColumn);
        out += "}\n";
    }
    out += "\nStackFrames\n";
    for (size_t i = 0; i < frames.stackFrames.size(); ++i) {
        appendInt(out, static_cast<int64_t>(i + 1));
        out += " {file_location_id=";
        appendInt(out, frames.stackFrames[i].fileLocationId);
        out += " parent_frame_id=";
        appendInt(out, frames.stackFrames[i].parentFrameId);
        out += "}\n";
    }
    out += '\n';
}

void appendHeader(std::string& out, const HloModule& module, const HloPrintOptions& options) {
    out += "HloModule ";
    out += module.name();
    if (module.isScheduled()) out += ", is_scheduled=true";
    if (module.hasInputOutputAliasAttribute()) {
        out += ", input_output_alias={ ";
        bool first = true;
        for (const InputOutputAlias& alias : module.inputOutputAliases()) {
            if (!first) out += ", ";
            first = false;
            appendShapeIndex(out, alias.outputIndex);
            out += ": (";
            appendInt(out, alias.parameterNumber);
            out += ", ";
            appendShapeIndex(out, alias.parameterIndex);
            if (alias.kind == InputOutputAlias::Kind::kMustAlias)
                out += ", must-alias";
            else if (alias.kindWritten)
                out += ", may-alias";
            out += ')';
        }
        out += " }";
    }
    if (module.hasBufferDonorAttribute()) {
        out += ", buffer_donor={ ";
        bool first = true;
        for (const BufferDonor& donor : module.bufferDonors()) {
            if (!first) out += ", ";
            first = false;
            out += '(';
            appendInt(out, donor.parameterNumber);
            out += ", ";
            appendShapeIndex(out, donor.parameterIndex);
            out += ')';
        }
        out += " }";
    }
    if (const auto& layout = module.entryComputationLayout()) {
        out += ", entry_computation_layout={(";
        for (size_t i = 0; i < layout->parameters.size(); ++i) {
            if (i) out += ", ";
            layout->parameters[i].appendTo(out, true);
        }
        out += ")->";
        layout->result.appendTo(out, true);
        out += '}';
    }
    if (module.replicaCount()) {
        out += ", replica_count=";
        appendInt(out, *module.replicaCount());
    }
    if (module.numPartitions()) {
        out += ", num_partitions=";
        appendInt(out, *module.numPartitions());
    }
    if (options.printVerbatimAttributes) {
        for (const HloAttribute& attr : module.attributes()) {
            beginAttribute(out, attr.name);
            out += attr.value;
        }
    }
    out += "\n\n";
}

}  // namespace

HloPrintOptions HloPrintOptions::compact() {
    HloPrintOptions options;
    options.printOperandShapes = false;
    options.printMetadata = false;
    options.printStackFrames = false;
    return options;
}

std::string sliceToString(const std::vector<SliceDimension>& slice) {
    std::string out = "{";
    for (size_t i = 0; i < slice.size(); ++i) {
        if (i) out += ", ";
        out += '[';
        appendInt(out, slice[i].start);
        out += ':';
        appendInt(out, slice[i].limit);
        if (slice[i].stride != 1) {
            out += ':';
            appendInt(out, slice[i].stride);
        }
        out += ']';
    }
    out += '}';
    return out;
}

std::string paddingConfigToString(const std::vector<PaddingDimension>& padding) {
    bool anyInterior = false;
    for (const PaddingDimension& dim : padding) anyInterior |= dim.interior != 0;
    std::string out;
    for (size_t i = 0; i < padding.size(); ++i) {
        if (i) out += 'x';
        appendInt(out, padding[i].edgeLow);
        out += '_';
        appendInt(out, padding[i].edgeHigh);
        if (anyInterior) {
            out += '_';
            appendInt(out, padding[i].interior);
        }
    }
    return out;
}

std::string windowToString(const Window& window) {
    const auto& dims = window.dimensions;
    if (dims.empty()) return {};
    std::string out;
    auto appendField = [&](std::string_view name, auto get, bool always, auto isDefault) {
        bool allDefault = true;
        for (const WindowDimension& d : dims) allDefault &= isDefault(d);
        if (allDefault && !always) return;
        if (!out.empty()) out += ' ';
        out += name;
        out += '=';
        for (size_t i = 0; i < dims.size(); ++i) {
            if (i) out += 'x';
            get(dims[i]);
        }
    };
    appendField(
        "size", [&](const WindowDimension& d) { appendInt(out, d.size); }, true,
        [](const WindowDimension&) { return false; });
    appendField(
        "stride", [&](const WindowDimension& d) { appendInt(out, d.stride); }, false,
        [](const WindowDimension& d) { return d.stride == 1; });
    appendField(
        "pad",
        [&](const WindowDimension& d) {
            appendInt(out, d.paddingLow);
            out += '_';
            appendInt(out, d.paddingHigh);
        },
        false, [](const WindowDimension& d) { return d.paddingLow == 0 && d.paddingHigh == 0; });
    appendField(
        "lhs_dilate", [&](const WindowDimension& d) { appendInt(out, d.baseDilation); }, false,
        [](const WindowDimension& d) { return d.baseDilation == 1; });
    appendField(
        "rhs_dilate", [&](const WindowDimension& d) { appendInt(out, d.windowDilation); }, false,
        [](const WindowDimension& d) { return d.windowDilation == 1; });
    appendField(
        "rhs_reversal", [&](const WindowDimension& d) { out += d.windowReversal ? '1' : '0'; },
        false, [](const WindowDimension& d) { return !d.windowReversal; });
    return out;
}

void appendInstruction(std::string& out, const HloInstruction& instruction,
                       const HloPrintOptions& options) {
    // `X-start` sugar: the attributes are those of the wrapped X.
    const HloInstruction* wrapped = asyncSugarRoot(instruction);
    const HloInstruction& attributes = wrapped ? *wrapped : instruction;
    appendName(out, instruction.name(), options);
    out += " = ";
    instruction.shape().appendTo(out, options.printLayouts);
    out += ' ';
    appendOpcode(out, instruction);
    out += '(';
    switch (instruction.opcode()) {
    case HloOpcode::kParameter: appendInt(out, instruction.parameterNumber()); break;
    case HloOpcode::kConstant: out += instruction.literalText(); break;
    default: {
        const auto& operands = instruction.operands();
        for (size_t i = 0; i < operands.size(); ++i) {
            if (i) out += ", ";
            if (options.indexComments && i != 0 && i % kIndexCommentInterval == 0) {
                out += "/*index=";
                appendInt(out, static_cast<int64_t>(i));
                out += "*/";
            }
            if (options.printOperandShapes) {
                operands[i]->shape().appendTo(out, options.printLayouts);
                out += ' ';
            }
            appendName(out, operands[i]->name(), options);
        }
        break;
    }
    }
    out += ')';
    appendTypedAttributes(out, attributes);
    for (const CalledComputationAttribute& attr : attributes.calledComputationAttributes()) {
        beginAttribute(out, attr.name);
        if (attr.isList) out += '{';
        for (size_t i = 0; i < attr.computations.size(); ++i) {
            if (i) out += ", ";
            appendName(out, attr.computations[i] ? attr.computations[i]->name() : "<null>",
                       options);
        }
        if (attr.isList) out += '}';
    }
    if (!instruction.controlPredecessors().empty()) {
        out += ", control-predecessors={";
        const auto& preds = instruction.controlPredecessors();
        for (size_t i = 0; i < preds.size(); ++i) {
            if (i) out += ", ";
            appendName(out, preds[i]->name(), options);
        }
        out += '}';
    }
    if (options.printVerbatimAttributes) {
        for (const HloAttribute& attr : attributes.attributes()) {
            beginAttribute(out, attr.name);
            out += attr.value;
        }
    }
    if (options.printMetadata && !attributes.metadata().empty()) {
        out += ", metadata={";
        out += attributes.metadata();
        out += '}';
    }
}

std::string printInstruction(const HloInstruction& instruction, const HloPrintOptions& options) {
    std::string out;
    appendInstruction(out, instruction, options);
    return out;
}

std::string printComputation(const HloComputation& computation, const HloPrintOptions& options) {
    std::string out;
    appendComputation(out, computation, options);
    return out;
}

namespace {

std::string printModuleWith(const HloModule& module, const HloPrintOptions& options,
                            const LinePrinter* line, size_t sizeHint = 0) {
    std::string out;
    size_t estimate = 64;
    for (const auto& computation : module.computations())
        estimate += static_cast<size_t>(computation->instructionCount()) * 120;
    out.reserve(std::max(estimate, sizeHint));
    appendHeader(out, module, options);
    if (options.printStackFrames) appendStackFrames(out, module.stackFrames());
    // Wrappers of `X-start` sugar are implied by it.
    std::unordered_set<const HloComputation*> implied;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kAsyncStart && asyncSugarRoot(*instruction))
                implied.insert(instruction->calledComputation("calls"));
    bool first = true;
    for (const auto& computation : module.computations()) {
        if (implied.count(computation.get())) continue;
        if (!first) out += '\n';
        first = false;
        if (line)
            line->computation(out, *computation);
        else
            appendComputation(out, *computation, options);
    }
    return out;
}

}  // namespace

std::string printModule(const HloModule& module, const HloPrintOptions& options) {
    return printModuleWith(module, options, nullptr);
}

struct HloTextCache::State {
    struct Line {
        const HloInstruction* instruction = nullptr;
        uint64_t printedAt = 0;
        std::string text;
    };
    // A computation's whole text, from "ENTRY " or its name to the newline after '}'.
    struct Block {
        uint64_t printedAt = 0;
        bool entry = false;
        bool reusable = false;  // no async op in it
        std::vector<const HloComputation*> called;  // by its instructions, distinct
        std::string text;
    };
    const HloModule* module = nullptr;
    std::vector<Line> lines;  // by unique id
    // By computation: a removed computation's entry stays, and one added later at its
    // address is stamped when added, so its block is printed again.
    std::unordered_map<const HloComputation*, Block> blocks;
    size_t lastSize = 0;
    int64_t reused = 0;
    int64_t printed = 0;
    int64_t reusedComputations = 0;

    void appendLine(std::string& out, const HloInstruction& instruction, uint64_t now);
    bool blockIsCurrent(const Block& block, const HloComputation& computation) const;
};

HloTextCache::HloTextCache() : m_state(std::make_unique<State>()) {}
HloTextCache::~HloTextCache() = default;

int64_t HloTextCache::reusedLines() const { return m_state->reused; }
int64_t HloTextCache::printedLines() const { return m_state->printed; }
int64_t HloTextCache::reusedComputations() const { return m_state->reusedComputations; }

void HloTextCache::State::appendLine(std::string& out, const HloInstruction& instruction,
                                     uint64_t now) {
    const int64_t id = instruction.uniqueId();
    // Ids are dense from the parser and the module's counter; a sparse one is not cached.
    if (id < 0 || id > 4 * static_cast<int64_t>(lines.size()) + (1 << 20)) {
        appendInstruction(out, instruction, HloPrintOptions::canonical());
        ++printed;
        return;
    }
    if (lines.size() <= static_cast<size_t>(id)) lines.resize(static_cast<size_t>(id) + 1);
    Line& line = lines[static_cast<size_t>(id)];
    if (line.instruction == &instruction && !changedSince(instruction, line.printedAt)) {
        out += line.text;
        ++reused;
        return;
    }
    line.text.clear();
    appendInstruction(line.text, instruction, HloPrintOptions::canonical());
    line.instruction = &instruction;
    line.printedAt = now;
    out += line.text;
    ++printed;
}

// The computation's stamp covers its signature, its instructions and their operands
// and control edges (all inside it); its lines also show the names of the computations
// they call, which the block checks by their stamps. Those pointers are read only when
// the computation's own stamp says its instructions still call them.
bool HloTextCache::State::blockIsCurrent(const Block& block,
                                         const HloComputation& computation) const {
    if (!block.reusable || block.text.empty() || computation.changeStamp() > block.printedAt ||
        block.entry != computation.isEntry())
        return false;
    for (const HloComputation* called : block.called)
        if (called->changeStamp() > block.printedAt) return false;
    return true;
}

std::string HloTextCache::print(const HloModule& module) {
    State& s = *m_state;
    if (s.module != &module) {
        s.lines.clear();
        s.blocks.clear();
        s.module = &module;
    }
    s.reused = 0;
    s.printed = 0;
    s.reusedComputations = 0;
    const uint64_t now = module.mutationCount();
    LinePrinter line;
    line.instruction = [&](std::string& out, const HloInstruction& instruction) {
        s.appendLine(out, instruction, now);
    };
    line.computation = [&](std::string& out, const HloComputation& computation) {
        State::Block& block = s.blocks[&computation];
        if (s.blockIsCurrent(block, computation)) {
            out += block.text;
            s.reused += computation.instructionCount();
            ++s.reusedComputations;
            return;
        }
        block.text.clear();
        appendComputation(block.text, computation, HloPrintOptions::canonical(), &line);
        block.printedAt = now;
        block.entry = computation.isEntry();
        block.reusable = true;
        block.called.clear();
        for (const auto& instruction : computation.instructions()) {
            if (hloOpcodeIsAsync(instruction->opcode())) block.reusable = false;
            for (const CalledComputationAttribute& attribute :
                 instruction->calledComputationAttributes())
                for (const HloComputation* called : attribute.computations)
                    if (called) block.called.push_back(called);
        }
        std::sort(block.called.begin(), block.called.end());
        block.called.erase(std::unique(block.called.begin(), block.called.end()),
                           block.called.end());
        out += block.text;
    };
    // Room for the last text and a little growth: no copying as the text grows.
    std::string text =
        printModuleWith(module, HloPrintOptions::canonical(), &line, s.lastSize + s.lastSize / 16);
    s.lastSize = text.size();
    return text;
}

}  // namespace hloscope
