// Instruction and module attributes of the HLO text parser: routing of typed
// attributes into HloInstruction fields, verbatim capture of all others, and
// the value grammars (lists, windows, padding, dim labels, slices,
// computation references, aliasing, computation layouts). Which attributes
// are typed, and for which opcodes, is in hlo_parser_attribute_table.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "core/text/hlo_parser_internal.h"

namespace hloscope::hlo_parser_internal {

using namespace hlo_lexer_util;

// ---------------------------------------------------------------------------
// Instruction attributes

// Names of the attributes seen so far on one instruction, on a stack shared
// with nested parses (inline computations parse their own instructions'
// attributes in between): a linear search for the usual handful, a hash set
// beyond.
class SeenAttributes {
public:
    explicit SeenAttributes(std::vector<std::string_view>& stack)
        : m_stack(stack), m_base(stack.size()) {}
    ~SeenAttributes() { m_stack.resize(m_base); }

    bool contains(std::string_view name) const {
        if (m_stack.size() - m_base > kLinearLimit) return m_many.contains(name);
        return std::find(begin(), m_stack.end(), name) != m_stack.end();
    }
    void add(std::string_view name) {
        m_stack.push_back(name);
        size_t count = m_stack.size() - m_base;
        if (count == kLinearLimit + 1) {
            for (auto it = begin(); it != m_stack.end(); ++it) m_many.insert(*it, 0);
        } else if (count > kLinearLimit + 1) {
            m_many.insert(name, 0);
        }
    }

private:
    static constexpr size_t kLinearLimit = 32;
    std::vector<std::string_view>::iterator begin() const {
        return m_stack.begin() + static_cast<ptrdiff_t>(m_base);
    }

    std::vector<std::string_view>& m_stack;
    size_t m_base;
    NameTable m_many;
};

Status Parser::parseAttributes(ComputationState& state, PendingInstruction& pending,
                               const OpcodeInfo& info, size_t attributesOffset,
                               bool allowAttributes) {
    HloInstruction* instruction = pending.instruction.get();
    const std::optional<HloOpcode> op = info.attributeOpcode;
    SeenAttributes seen(m_seenAttributes);
    while (allowAttributes && m_lexer.consumeIf(TokenKind::kComma)) {
        Token nameToken = m_lexer.next();
        if (nameToken.kind != TokenKind::kIdentifier)
            return expected("an attribute name", nameToken);
        std::string_view name = nameToken.text;
        Token equal = m_lexer.next();
        if (equal.kind != TokenKind::kEqual)
            return expected("'=' after attribute name '" + std::string(name) + "'", equal);
        if (seen.contains(name))
            return error(nameToken.offset, "attribute " + std::string(name) + " already exists");
        seen.add(name);
        Attr attr = classifyAttribute(name);
        if (attr != Attr::kVerbatim && !appliesTo(attr, op)) {
            if (isComputationAttribute(attr) && attr != Attr::kSelect && attr != Attr::kScatter)
                return error(nameToken.offset, "unexpected attribute \"" + std::string(name) +
                                                   "\" for " +
                                                   std::string(hloOpcodeString(info.opcode)));
            attr = Attr::kVerbatim;
        }
        if (attr == Attr::kVerbatim)
            HLO_RETURN_IF_ERROR(parseVerbatimAttribute(instruction, op, nameToken));
        else
            HLO_RETURN_IF_ERROR(parseTypedAttribute(state, pending, attr, name, op));
    }

    // A dot always has dimension numbers (possibly all empty), however written.
    if (op == HloOpcode::kDot || op == HloOpcode::kRaggedDot || op == HloOpcode::kScaledDot) {
        auto& d = instruction->mutableExtra().dotDimensionNumbers;
        if (!d) d.emplace();
    }
    if (op) HLO_RETURN_IF_ERROR(checkAttributeSet(*instruction, *op, attributesOffset, seen));
    // Inline computations were pushed as called-computation attributes;
    // named ones still need resolving (calledRefs), handled at module end.
    (void)state;
    return Status::ok();
}

// An attribute kept as text: result_accuracy and a custom call's api_version
// checked first, mesh replica groups after.
Status Parser::parseVerbatimAttribute(HloInstruction* instruction, std::optional<HloOpcode> op,
                                      const Token& nameToken) {
    std::string_view name = nameToken.text;
    size_t valueOffset = m_lexer.cursor();
    if (name == "result_accuracy") {
        if (!allowsResultAccuracy(op))
            return error(nameToken.offset, "unexpected attribute \"result_accuracy\"");
        HLO_RETURN_IF_ERROR(checkResultAccuracy(valueOffset));
        m_lexer.resetTo(valueOffset);
    } else if (name == "api_version" && op == HloOpcode::kCustomCall) {
        Token value = m_lexer.peek();
        static constexpr std::string_view kVersions[] = {
            "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
            "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
            "API_VERSION_TYPED_FFI"};
        if (value.kind != TokenKind::kIdentifier)
            return expected("a custom-call API version", value);
        if (std::find(std::begin(kVersions), std::end(kVersions), value.text) ==
            std::end(kVersions))
            return error(
                value.offset,
                "expects custom-call API version but sees: " + std::string(value.text) +
                    ", error: Unknown API version: " + std::string(value.text));
    }
    std::string value;
    HLO_RETURN_IF_ERROR(parseVerbatimValue(&value));
    if (name == "replica_groups" && value.compare(0, 5, "mesh[") == 0)
        HLO_RETURN_IF_ERROR(checkMeshReplicaGroups(value, valueOffset));
    instruction->mutableAttributes().push_back({std::string(name), std::move(value)});
    return Status::ok();
}

// Typed attributes: stored in the instruction's fields. A dispatch over the
// attribute kinds; dimension numbers, enumerations and scalars have their own.
Status Parser::parseTypedAttribute(ComputationState& state, PendingInstruction& pending,
                                   Attr attr, std::string_view name,
                                   std::optional<HloOpcode> op) {
    HloInstruction* instruction = pending.instruction.get();
    auto extra = [&]() -> HloExtraAttributes& { return instruction->mutableExtra(); };
    switch (attr) {
        case Attr::kMetadata: {
            std::string text;
            HLO_RETURN_IF_ERROR(parseBracedVerbatim(&text));
            instruction->setMetadata(std::move(text));
            break;
        }
        case Attr::kControlPredecessors:
            HLO_RETURN_IF_ERROR(parseInstructionNames(state, pending));
            break;
        case Attr::kDimensions: {
            std::vector<int64_t> dims;
            HLO_RETURN_IF_ERROR(parseInt64List(&dims));
            instruction->setDimensions(std::move(dims));
            break;
        }
        case Attr::kSlice:
            HLO_RETURN_IF_ERROR(parseSliceValue(&extra().slice));
            break;
        case Attr::kDynamicSliceSizes:
            HLO_RETURN_IF_ERROR(parseInt64List(&extra().dynamicSliceSizes));
            break;
        case Attr::kPadding:
            HLO_RETURN_IF_ERROR(parsePaddingValue(&extra().padding));
            break;
        case Attr::kWindow: {
            Window window;
            HLO_RETURN_IF_ERROR(parseWindowValue(&window, /*braces=*/true));
            extra().window = std::move(window);
            break;
        }
        case Attr::kDimLabels: {
            ConvolutionDimensionNumbers dnums;
            HLO_RETURN_IF_ERROR(parseDimLabelsValue(&dnums));
            extra().convolutionDimensionNumbers = std::move(dnums);
            break;
        }
        case Attr::kFeatureGroupCount:
            HLO_RETURN_IF_ERROR(parseInt64Value(&extra().featureGroupCount));
            break;
        case Attr::kBatchGroupCount:
            HLO_RETURN_IF_ERROR(parseInt64Value(&extra().batchGroupCount));
            break;
        case Attr::kFftLength:
            HLO_RETURN_IF_ERROR(parseInt64List(&extra().fftLength));
            break;
        case Attr::kLhsBatchDims:
        case Attr::kRhsBatchDims:
        case Attr::kLhsContractingDims:
        case Attr::kRhsContractingDims:
        case Attr::kLhsRaggedDims:
        case Attr::kRhsGroupDims:
        case Attr::kOffsetDims:
        case Attr::kCollapsedSliceDims:
        case Attr::kStartIndexMap:
        case Attr::kOperandBatchingDims:
        case Attr::kStartIndicesBatchingDims:
        case Attr::kSliceSizes:
        case Attr::kIndexVectorDim:
        case Attr::kIndicesAreSorted:
        case Attr::kUpdateWindowDims:
        case Attr::kInsertedWindowDims:
        case Attr::kScatterDimsToOperandDims:
        case Attr::kInputBatchingDims:
        case Attr::kScatterIndicesBatchingDims:
        case Attr::kUniqueIndices:
            return parseDimensionNumbersAttribute(instruction, attr, op);
        case Attr::kDirection:
        case Attr::kType:
        case Attr::kKind:
        case Attr::kFftType:
        case Attr::kDistribution:
            return parseEnumAttribute(instruction, attr);
        case Attr::kIndex:
        case Attr::kIotaDimension:
        case Attr::kExponentBits:
        case Attr::kMantissaBits:
        case Attr::kEpsilon:
        case Attr::kFeatureIndex:
        case Attr::kCustomCallTarget:
        case Attr::kIsStable:
        case Attr::kK:
        case Attr::kLargest:
            return parseScalarAttribute(instruction, attr);
        case Attr::kBranchComputations:
        case Attr::kCalledComputations:
            HLO_RETURN_IF_ERROR(parseComputationValue(instruction, name, /*list=*/true));
            break;
        default:  // single called computations
            HLO_RETURN_IF_ERROR(parseComputationValue(instruction, name, /*list=*/false));
            break;
    }
    return Status::ok();
}

// Dot, gather and scatter dimension numbers and their flags.
Status Parser::parseDimensionNumbersAttribute(HloInstruction* instruction, Attr attr,
                                              std::optional<HloOpcode> op) {
    auto extra = [&]() -> HloExtraAttributes& { return instruction->mutableExtra(); };
    auto dot = [&]() -> DotDimensionNumbers& {
        auto& d = extra().dotDimensionNumbers;
        if (!d) d.emplace();
        return *d;
    };
    auto gather = [&]() -> GatherDimensionNumbers& {
        auto& d = extra().gatherDimensionNumbers;
        if (!d) d.emplace();
        return *d;
    };
    auto scatter = [&]() -> ScatterDimensionNumbers& {
        auto& d = extra().scatterDimensionNumbers;
        if (!d) d.emplace();
        return *d;
    };
    switch (attr) {
        case Attr::kLhsBatchDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&dot().lhsBatchDimensions));
            break;
        case Attr::kRhsBatchDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&dot().rhsBatchDimensions));
            break;
        case Attr::kLhsContractingDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&dot().lhsContractingDimensions));
            break;
        case Attr::kRhsContractingDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&dot().rhsContractingDimensions));
            break;
        case Attr::kLhsRaggedDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&dot().lhsRaggedDimensions));
            break;
        case Attr::kRhsGroupDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&dot().rhsGroupDimensions));
            break;
        case Attr::kOffsetDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&gather().offsetDims));
            break;
        case Attr::kCollapsedSliceDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&gather().collapsedSliceDims));
            break;
        case Attr::kStartIndexMap:
            HLO_RETURN_IF_ERROR(parseInt64List(&gather().startIndexMap));
            break;
        case Attr::kOperandBatchingDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&gather().operandBatchingDims));
            break;
        case Attr::kStartIndicesBatchingDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&gather().startIndicesBatchingDims));
            break;
        case Attr::kSliceSizes:
            HLO_RETURN_IF_ERROR(parseInt64List(&extra().gatherSliceSizes));
            break;
        case Attr::kIndexVectorDim:
            if (op == HloOpcode::kGather)
                HLO_RETURN_IF_ERROR(parseInt64Value(&gather().indexVectorDim));
            else
                HLO_RETURN_IF_ERROR(parseInt64Value(&scatter().indexVectorDim));
            break;
        case Attr::kIndicesAreSorted:
            HLO_RETURN_IF_ERROR(parseBoolValue(&extra().indicesAreSorted));
            break;
        case Attr::kUpdateWindowDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&scatter().updateWindowDims));
            break;
        case Attr::kInsertedWindowDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&scatter().insertedWindowDims));
            break;
        case Attr::kScatterDimsToOperandDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&scatter().scatterDimsToOperandDims));
            break;
        case Attr::kInputBatchingDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&scatter().inputBatchingDims));
            break;
        case Attr::kScatterIndicesBatchingDims:
            HLO_RETURN_IF_ERROR(parseInt64List(&scatter().scatterIndicesBatchingDims));
            break;
        case Attr::kUniqueIndices:
            HLO_RETURN_IF_ERROR(parseBoolValue(&extra().uniqueIndices));
            break;
        default:
            break;
    }
    return Status::ok();
}

// Comparison direction and type, fusion kind, fft type, random distribution.
Status Parser::parseEnumAttribute(HloInstruction* instruction, Attr attr) {
    auto extra = [&]() -> HloExtraAttributes& { return instruction->mutableExtra(); };
    switch (attr) {
        case Attr::kDirection: {
            std::string_view text;
            HLO_RETURN_IF_ERROR(parseIdentifierValue(&text, "comparison direction"));
            auto direction = parseComparisonDirection(text);
            if (!direction)
                return error(m_lexer.position() - text.size(),
                             "expects comparison direction but sees: " + std::string(text));
            extra().comparisonDirection = *direction;
            break;
        }
        case Attr::kType: {
            std::string_view text;
            HLO_RETURN_IF_ERROR(parseIdentifierValue(&text, "comparison type"));
            auto type = parseComparisonType(text);
            if (!type)
                return error(m_lexer.position() - text.size(),
                             "expects comparison type but sees: " + std::string(text));
            extra().comparisonType = *type;
            break;
        }
        case Attr::kKind: {
            std::string_view text;
            HLO_RETURN_IF_ERROR(parseIdentifierValue(&text, "fusion kind"));
            if (text != "kLoop" && text != "kInput" && text != "kOutput" && text != "kCustom")
                return error(m_lexer.position() - text.size(),
                             "expects fusion kind but sees: " + std::string(text));
            extra().fusionKind = std::string(text);
            break;
        }
        case Attr::kFftType: {
            std::string_view text;
            HLO_RETURN_IF_ERROR(parseIdentifierValue(&text, "fft type"));
            if (text != "FFT" && text != "IFFT" && text != "RFFT" && text != "IRFFT")
                return error(m_lexer.position() - text.size(),
                             "expects fft type but sees: " + std::string(text));
            extra().fftType = std::string(text);
            break;
        }
        case Attr::kDistribution: {
            std::string_view text;
            HLO_RETURN_IF_ERROR(parseIdentifierValue(&text, "random distribution"));
            if (text != "rng_uniform" && text != "rng_normal")
                return error(m_lexer.position() - text.size(),
                             "expects random distribution but sees: " + std::string(text));
            extra().distribution = std::string(text);
            break;
        }
        default:
            break;
    }
    return Status::ok();
}

// Integers, flags, epsilon and the custom-call target.
Status Parser::parseScalarAttribute(HloInstruction* instruction, Attr attr) {
    auto extra = [&]() -> HloExtraAttributes& { return instruction->mutableExtra(); };
    switch (attr) {
        case Attr::kIndex: {
            int64_t index = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&index));
            instruction->setTupleIndex(index);
            break;
        }
        case Attr::kIotaDimension: {
            int64_t dimension = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&dimension));
            instruction->setIotaDimension(dimension);
            break;
        }
        case Attr::kExponentBits: {
            int64_t bits = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&bits));
            extra().exponentBits = bits;
            break;
        }
        case Attr::kMantissaBits: {
            int64_t bits = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&bits));
            extra().mantissaBits = bits;
            break;
        }
        case Attr::kEpsilon: {
            Token value = m_lexer.next();
            double number = 0;
            bool isNumber = value.kind == TokenKind::kInt ||
                            value.kind == TokenKind::kDecimal ||
                            (value.kind == TokenKind::kIdentifier && value.text == "inf");
            if (!isNumber) return expected("a floating-point value", value);
            if (!parseDouble(value.text, &number) ||
                (std::isfinite(number) && std::fabs(number) > 3.4028234663852886e38))
                return error(value.offset, "value out of range for float");
            extra().epsilon = number;
            extra().epsilonText = std::string(value.text);
            break;
        }
        case Attr::kFeatureIndex: {
            int64_t index = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&index));
            extra().featureIndex = index;
            break;
        }
        case Attr::kCustomCallTarget: {
            std::string target;
            HLO_RETURN_IF_ERROR(parseStringValue(&target));
            extra().customCallTarget = std::move(target);
            break;
        }
        case Attr::kIsStable: {
            bool value = false;
            HLO_RETURN_IF_ERROR(parseBoolValue(&value));
            extra().isStable = value;
            break;
        }
        case Attr::kK: {
            int64_t k = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&k));
            extra().topK = k;
            break;
        }
        case Attr::kLargest: {
            bool value = false;
            HLO_RETURN_IF_ERROR(parseBoolValue(&value));
            extra().largest = value;
            break;
        }
        default:
            break;
    }
    return Status::ok();
}

// The attributes of an instruction of `opcode` taken together: those XLA
// requires present (XLA's parser rejects instructions without them), and the
// combinations it rejects.
Status Parser::checkAttributeSet(const HloInstruction& instruction, HloOpcode opcode,
                                 size_t attributesOffset, const SeenAttributes& seen) {
    RequiredAttributes required = requiredAttributes(opcode);
    for (size_t r = 0; r < required.count; ++r) {
        if (!seen.contains(required.names[r]))
            return error(attributesOffset, "attribute " + std::string(required.names[r]) +
                                               " is expected but not seen");
    }
    using O = HloOpcode;
    if (instruction.hasDimensions() && instruction.dimensions().size() != 1 &&
        oneOf(opcode, {O::kAllGather, O::kAllGatherStart, O::kReduceScatter, O::kAllToAll,
                       O::kRaggedAllToAll, O::kGetDimensionSize, O::kSetDimensionSize, O::kSort,
                       O::kConcatenate, O::kScan}))
        return error(attributesOffset, "attribute dimensions of " +
                                           std::string(hloOpcodeString(opcode)) +
                                           " expects exactly one dimension, got " +
                                           std::to_string(instruction.dimensions().size()));
    if (opcode == O::kCustomCall && instruction.calledComputation("to_apply") &&
        seen.contains("called_computations"))
        return error(attributesOffset,
                     "A single instruction can't have both to_apply and calls field");
    if (oneOf(opcode, {O::kAllReduce, O::kAllReduceStart, O::kReduceScatter}) &&
        !instruction.attribute("mode")) {
        auto global = instruction.attribute("use_global_device_ids");
        if (global && *global == "true" && !instruction.attribute("channel_id"))
            return error(attributesOffset,
                         "Cannot have use_global_device_ids=true without channel_id");
    }
    return Status::ok();
}

Status Parser::parseInt64Value(int64_t* out) {
    Token token = m_lexer.next();
    if (token.kind != TokenKind::kInt)
        return error(token.offset, "expects integer, got " + describeToken(token));
    if (!parseInt64(token.text, out))
        return error(token.offset, "integer " + std::string(token.text) + " is out of range");
    return Status::ok();
}

Status Parser::parseBoolValue(bool* out) {
    Token token = m_lexer.next();
    if (token.kind == TokenKind::kIdentifier && (token.text == "true" || token.text == "false")) {
        *out = token.text == "true";
        return Status::ok();
    }
    return error(token.offset, "expects true or false, got " + describeToken(token));
}

Status Parser::parseIdentifierValue(std::string_view* out, std::string_view what) {
    Token token = m_lexer.next();
    if (token.kind != TokenKind::kIdentifier) return expected(what, token);
    *out = token.text;
    return Status::ok();
}

Status Parser::parseStringValue(std::string* out) {
    Token token = m_lexer.next();
    if (token.kind != TokenKind::kString) return expected("a string", token);
    if (!unescapeString(token.text, out))
        return error(token.offset, "malformed escape sequence in string");
    return Status::ok();
}

Status Parser::parseInt64List(std::vector<int64_t>* out) {
    out->clear();
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace) return expected("'{' to start a list of integers", open);
    if (m_lexer.consumeIf(TokenKind::kRbrace)) return Status::ok();
    while (true) {
        int64_t value = 0;
        HLO_RETURN_IF_ERROR(parseInt64Value(&value));
        out->push_back(value);
        Token next = m_lexer.next();
        if (next.kind == TokenKind::kComma) continue;
        if (next.kind == TokenKind::kRbrace) return Status::ok();
        return expected("',' or '}' in a list of integers", next);
    }
}

// '{' ('[' start ':' limit (':' stride)? ']' (',' ...)*)? '}'
Status Parser::parseSliceValue(std::vector<SliceDimension>* out) {
    out->clear();
    Token open = m_lexer.next();
    if (open.kind != TokenKind::kLbrace) return expected("'{' to start ranges", open);
    if (m_lexer.consumeIf(TokenKind::kRbrace)) return Status::ok();
    while (true) {
        Token bracket = m_lexer.next();
        if (bracket.kind != TokenKind::kLsquare) return expected("'[' to start a range", bracket);
        int64_t values[3] = {0, 0, 1};
        int count = 0;
        while (true) {
            int64_t value = 0;
            HLO_RETURN_IF_ERROR(parseInt64Value(&value));
            if (count < 3) values[count] = value;
            ++count;
            Token next = m_lexer.next();
            if (next.kind == TokenKind::kColon) continue;
            if (next.kind == TokenKind::kRsquare) break;
            return expected("':' or ']' in a slice range", next);
        }
        if (count != 2 && count != 3)
            return error(bracket.offset, "expects [start:limit:step] or [start:limit], but sees " +
                                             std::to_string(count) + " elements.");
        out->push_back({values[0], values[1], count == 3 ? values[2] : 1});
        Token next = m_lexer.next();
        if (next.kind == TokenKind::kComma) continue;
        if (next.kind == TokenKind::kRbrace) return Status::ok();
        return expected("',' or '}' in slice ranges", next);
    }
}

}  // namespace hloscope::hlo_parser_internal
