// Instruction and module attributes of the HLO text parser: routing of typed
// attributes into HloInstruction fields, verbatim capture of all others, and
// the value grammars (lists, windows, padding, dim labels, slices,
// computation references, aliasing, computation layouts).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "core/text/hlo_parser_internal.h"

namespace hloscope::hlo_parser_internal {

using namespace hlo_lexer_util;

namespace {

enum class Attr : uint8_t {
    kVerbatim,
    kMetadata,
    kControlPredecessors,
    kDimensions,
    kSlice,
    kDynamicSliceSizes,
    kPadding,
    kWindow,
    kDimLabels,
    kFeatureGroupCount,
    kBatchGroupCount,
    kLhsBatchDims,
    kRhsBatchDims,
    kLhsContractingDims,
    kRhsContractingDims,
    kLhsRaggedDims,
    kRhsGroupDims,
    kOffsetDims,
    kCollapsedSliceDims,
    kStartIndexMap,
    kOperandBatchingDims,
    kStartIndicesBatchingDims,
    kIndexVectorDim,
    kSliceSizes,
    kIndicesAreSorted,
    kUpdateWindowDims,
    kInsertedWindowDims,
    kScatterDimsToOperandDims,
    kInputBatchingDims,
    kScatterIndicesBatchingDims,
    kUniqueIndices,
    kDirection,
    kType,
    kIndex,
    kIotaDimension,
    kExponentBits,
    kMantissaBits,
    kEpsilon,
    kFeatureIndex,
    kCustomCallTarget,
    kKind,
    kIsStable,
    kFftType,
    kFftLength,
    kDistribution,
    kK,
    kLargest,
    // Called computations.
    kToApply,
    kCalls,
    kCondition,
    kBody,
    kTrueComputation,
    kFalseComputation,
    kBranchComputations,
    kCalledComputations,
    kSelect,
    kScatter,
};

Attr classifyAttribute(std::string_view name) {
    if (name == "metadata") return Attr::kMetadata;  // by far the most common
    static const std::pair<std::string_view, Attr> kNames[] = {
        {"metadata", Attr::kMetadata},
        {"control-predecessors", Attr::kControlPredecessors},
        {"dimensions", Attr::kDimensions},
        {"slice", Attr::kSlice},
        {"dynamic_slice_sizes", Attr::kDynamicSliceSizes},
        {"padding", Attr::kPadding},
        {"window", Attr::kWindow},
        {"dim_labels", Attr::kDimLabels},
        {"feature_group_count", Attr::kFeatureGroupCount},
        {"batch_group_count", Attr::kBatchGroupCount},
        {"lhs_batch_dims", Attr::kLhsBatchDims},
        {"rhs_batch_dims", Attr::kRhsBatchDims},
        {"lhs_contracting_dims", Attr::kLhsContractingDims},
        {"rhs_contracting_dims", Attr::kRhsContractingDims},
        {"lhs_ragged_dims", Attr::kLhsRaggedDims},
        {"rhs_group_dims", Attr::kRhsGroupDims},
        {"offset_dims", Attr::kOffsetDims},
        {"collapsed_slice_dims", Attr::kCollapsedSliceDims},
        {"start_index_map", Attr::kStartIndexMap},
        {"operand_batching_dims", Attr::kOperandBatchingDims},
        {"start_indices_batching_dims", Attr::kStartIndicesBatchingDims},
        {"index_vector_dim", Attr::kIndexVectorDim},
        {"slice_sizes", Attr::kSliceSizes},
        {"indices_are_sorted", Attr::kIndicesAreSorted},
        {"update_window_dims", Attr::kUpdateWindowDims},
        {"inserted_window_dims", Attr::kInsertedWindowDims},
        {"scatter_dims_to_operand_dims", Attr::kScatterDimsToOperandDims},
        {"input_batching_dims", Attr::kInputBatchingDims},
        {"scatter_indices_batching_dims", Attr::kScatterIndicesBatchingDims},
        {"unique_indices", Attr::kUniqueIndices},
        {"direction", Attr::kDirection},
        {"type", Attr::kType},
        {"index", Attr::kIndex},
        {"iota_dimension", Attr::kIotaDimension},
        {"exponent_bits", Attr::kExponentBits},
        {"mantissa_bits", Attr::kMantissaBits},
        {"epsilon", Attr::kEpsilon},
        {"feature_index", Attr::kFeatureIndex},
        {"custom_call_target", Attr::kCustomCallTarget},
        {"kind", Attr::kKind},
        {"is_stable", Attr::kIsStable},
        {"fft_type", Attr::kFftType},
        {"fft_length", Attr::kFftLength},
        {"distribution", Attr::kDistribution},
        {"k", Attr::kK},
        {"largest", Attr::kLargest},
        {"to_apply", Attr::kToApply},
        {"calls", Attr::kCalls},
        {"condition", Attr::kCondition},
        {"body", Attr::kBody},
        {"true_computation", Attr::kTrueComputation},
        {"false_computation", Attr::kFalseComputation},
        {"branch_computations", Attr::kBranchComputations},
        {"called_computations", Attr::kCalledComputations},
        {"select", Attr::kSelect},
        {"scatter", Attr::kScatter},
    };
    static const NameTable kTable = [] {
        NameTable table;
        for (const auto& [text, attr] : kNames) table.insert(text, static_cast<uint32_t>(attr));
        return table;
    }();
    uint32_t value = kTable.find(name);
    return value == kNone ? Attr::kVerbatim : static_cast<Attr>(value);
}

bool isComputationAttribute(Attr attr) { return attr >= Attr::kToApply; }

bool oneOf(HloOpcode op, std::initializer_list<HloOpcode> ops) {
    return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// Whether typed attribute `attr` belongs to opcode `op` (the wrapped opcode
// for `X-start` sugar).
bool appliesTo(Attr attr, std::optional<HloOpcode> maybeOp) {
    using O = HloOpcode;
    if (attr == Attr::kMetadata || attr == Attr::kControlPredecessors) return true;
    if (!maybeOp) return false;
    HloOpcode op = *maybeOp;
    switch (attr) {
        case Attr::kDimensions:
            return oneOf(op, {O::kBroadcast, O::kConcatenate, O::kReduce, O::kReverse,
                              O::kTranspose, O::kSort, O::kMap, O::kAllGather, O::kAllGatherStart,
                              O::kReduceScatter, O::kAllToAll, O::kRaggedAllToAll,
                              O::kGetDimensionSize, O::kSetDimensionSize, O::kScan});
        case Attr::kSlice:
            return op == O::kSlice;
        case Attr::kDynamicSliceSizes:
            return op == O::kDynamicSlice;
        case Attr::kPadding:
            return op == O::kPad;
        case Attr::kWindow:
            return oneOf(op,
                         {O::kConvolution, O::kReduceWindow, O::kSelectAndScatter, O::kCustomCall});
        case Attr::kDimLabels:
        case Attr::kFeatureGroupCount:
        case Attr::kBatchGroupCount:
            return oneOf(op, {O::kConvolution, O::kCustomCall});
        case Attr::kLhsBatchDims:
        case Attr::kRhsBatchDims:
        case Attr::kLhsContractingDims:
        case Attr::kRhsContractingDims:
            return oneOf(op, {O::kDot, O::kRaggedDot, O::kScaledDot});
        case Attr::kLhsRaggedDims:
        case Attr::kRhsGroupDims:
            return op == O::kRaggedDot;
        case Attr::kOffsetDims:
        case Attr::kCollapsedSliceDims:
        case Attr::kStartIndexMap:
        case Attr::kOperandBatchingDims:
        case Attr::kStartIndicesBatchingDims:
        case Attr::kSliceSizes:
            return op == O::kGather;
        case Attr::kIndexVectorDim:
        case Attr::kIndicesAreSorted:
            return oneOf(op, {O::kGather, O::kScatter});
        case Attr::kUpdateWindowDims:
        case Attr::kInsertedWindowDims:
        case Attr::kScatterDimsToOperandDims:
        case Attr::kInputBatchingDims:
        case Attr::kScatterIndicesBatchingDims:
        case Attr::kUniqueIndices:
            return op == O::kScatter;
        case Attr::kDirection:
        case Attr::kType:
            return op == O::kCompare;
        case Attr::kIndex:
            return op == O::kGetTupleElement;
        case Attr::kIotaDimension:
            return op == O::kIota;
        case Attr::kExponentBits:
        case Attr::kMantissaBits:
            return op == O::kReducePrecision;
        case Attr::kEpsilon:
        case Attr::kFeatureIndex:
            return oneOf(op, {O::kBatchNormTraining, O::kBatchNormInference, O::kBatchNormGrad});
        case Attr::kCustomCallTarget:
            return op == O::kCustomCall;
        case Attr::kKind:
            return op == O::kFusion;
        case Attr::kIsStable:
            return op == O::kSort;
        case Attr::kFftType:
        case Attr::kFftLength:
            return op == O::kFft;
        case Attr::kDistribution:
            return op == O::kRng;
        case Attr::kK:
        case Attr::kLargest:
            return op == O::kTopK;
        case Attr::kToApply:
            return oneOf(op, {O::kAllReduce, O::kAllReduceStart, O::kReduceScatter, O::kReduce,
                              O::kReduceWindow, O::kMap, O::kSort, O::kScatter, O::kCall,
                              O::kCustomCall, O::kScan, O::kCollectiveReduce});
        case Attr::kCalls:
            return oneOf(op, {O::kFusion, O::kAsyncStart, O::kAsyncUpdate, O::kAsyncDone});
        case Attr::kCondition:
        case Attr::kBody:
            return op == O::kWhile;
        case Attr::kTrueComputation:
        case Attr::kFalseComputation:
        case Attr::kBranchComputations:
            return op == O::kConditional;
        case Attr::kCalledComputations:
            return op == O::kCustomCall;
        case Attr::kSelect:
        case Attr::kScatter:
            return op == O::kSelectAndScatter;
        default:
            return false;
    }
}

// Attributes XLA requires, by the opcode whose attributes an instruction takes.
struct RequiredAttributes {
    std::string_view names[5];
    size_t count = 0;
};

RequiredAttributes requiredAttributes(HloOpcode op) {
    using O = HloOpcode;
    switch (op) {
        case O::kIota:
            return {{"iota_dimension"}, 1};
        case O::kTopK:
            return {{"k"}, 1};
        case O::kAllGather:
        case O::kAllGatherStart:
            return {{"dimensions"}, 1};
        case O::kAllReduce:
        case O::kAllReduceStart:
            return {{"to_apply"}, 1};
        case O::kReduceScatter:
            return {{"to_apply", "dimensions"}, 2};
        case O::kCollectivePermute:
        case O::kCollectivePermuteStart:
            return {{"source_target_pairs"}, 1};
        case O::kAsyncStart:
            return {{"calls"}, 1};
        case O::kSort:
            return {{"dimensions", "to_apply"}, 2};
        case O::kWhile:
            return {{"condition", "body"}, 2};
        case O::kGetTupleElement:
            return {{"index"}, 1};
        case O::kCall:
        case O::kReduceWindow:
            return {{"to_apply"}, 1};
        case O::kConvolution:
            return {{"dim_labels"}, 1};
        case O::kFft:
            return {{"fft_type", "fft_length"}, 2};
        case O::kCompare:
            return {{"direction"}, 1};
        case O::kConcatenate:
            return {{"dimensions"}, 1};
        case O::kMap:
            return {{"to_apply"}, 1};
        case O::kScan:
            return {{"to_apply", "dimensions", "num_carries"}, 3};
        case O::kReduce:
            return {{"to_apply", "dimensions"}, 2};
        case O::kReverse:
            return {{"dimensions"}, 1};
        case O::kSelectAndScatter:
            return {{"select", "scatter"}, 2};
        case O::kSlice:
            return {{"slice"}, 1};
        case O::kDynamicSlice:
            return {{"dynamic_slice_sizes"}, 1};
        case O::kTranspose:
            return {{"dimensions"}, 1};
        case O::kBatchNormTraining:
        case O::kBatchNormInference:
        case O::kBatchNormGrad:
            return {{"epsilon", "feature_index"}, 2};
        case O::kPad:
            return {{"padding"}, 1};
        case O::kFusion:
            return {{"calls", "kind"}, 2};
        case O::kRng:
            return {{"distribution"}, 1};
        case O::kRngGetAndUpdateState:
            return {{"delta"}, 1};
        case O::kRngBitGenerator:
            return {{"algorithm"}, 1};
        case O::kReducePrecision:
            return {{"exponent_bits", "mantissa_bits"}, 2};
        case O::kCustomCall:
            return {{"custom_call_target"}, 1};
        case O::kGather:
            return {{"offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
                     "slice_sizes"},
                    5};
        case O::kScatter:
            return {{"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                     "index_vector_dim", "to_apply"},
                    5};
        case O::kDomain:
            return {{"domain"}, 1};
        case O::kGetDimensionSize:
        case O::kSetDimensionSize:
            return {{"dimensions"}, 1};
        default:
            return {};
    }
}

// Opcodes whose result_accuracy XLA accepts.
bool allowsResultAccuracy(std::optional<HloOpcode> maybeOp) {
    using O = HloOpcode;
    return maybeOp && oneOf(*maybeOp, {O::kAcos,  O::kAcosh, O::kAsin,  O::kAsinh,    O::kAtanh,
                                       O::kExpm1, O::kLog,   O::kLog1p, O::kLogistic, O::kSqrt,
                                       O::kCbrt,  O::kRsqrt, O::kTanh,  O::kErf,      O::kSin,
                                       O::kSinh,  O::kCos,   O::kCosh,  O::kTan,      O::kExp});
}

}  // namespace

// ---------------------------------------------------------------------------
// Instruction attributes

Status Parser::parseAttributes(ComputationState& state, PendingInstruction& pending,
                               const OpcodeInfo& info, size_t attributesOffset,
                               bool allowAttributes) {
    HloInstruction* instruction = pending.instruction.get();
    const std::optional<HloOpcode> op = info.attributeOpcode;
    // Names seen so far, on a stack shared with nested parses (inline
    // computations parse their own instructions' attributes in between).
    struct SeenScope {
        std::vector<std::string_view>& stack;
        size_t base;
        ~SeenScope() { stack.resize(base); }
    } scope{m_seenAttributes, m_seenAttributes.size()};
    auto seenBegin = [&] { return m_seenAttributes.begin() + static_cast<ptrdiff_t>(scope.base); };
    // Linear search for the usual handful of attributes, a hash set beyond.
    constexpr size_t kLinearLimit = 32;
    NameTable many;
    auto wasSeen = [&](std::string_view name) {
        if (m_seenAttributes.size() - scope.base > kLinearLimit) return many.contains(name);
        return std::find(seenBegin(), m_seenAttributes.end(), name) != m_seenAttributes.end();
    };
    auto markSeen = [&](std::string_view name) {
        m_seenAttributes.push_back(name);
        size_t count = m_seenAttributes.size() - scope.base;
        if (count == kLinearLimit + 1) {
            for (auto it = seenBegin(); it != m_seenAttributes.end(); ++it) many.insert(*it, 0);
        } else if (count > kLinearLimit + 1) {
            many.insert(name, 0);
        }
    };
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
    while (allowAttributes && m_lexer.consumeIf(TokenKind::kComma)) {
        Token nameToken = m_lexer.next();
        if (nameToken.kind != TokenKind::kIdentifier)
            return expected("an attribute name", nameToken);
        std::string_view name = nameToken.text;
        Token equal = m_lexer.next();
        if (equal.kind != TokenKind::kEqual)
            return expected("'=' after attribute name '" + std::string(name) + "'", equal);
        if (wasSeen(name))
            return error(nameToken.offset, "attribute " + std::string(name) + " already exists");
        markSeen(name);
        Attr attr = classifyAttribute(name);
        if (attr != Attr::kVerbatim && !appliesTo(attr, op)) {
            if (isComputationAttribute(attr) && attr != Attr::kSelect && attr != Attr::kScatter)
                return error(nameToken.offset, "unexpected attribute \"" + std::string(name) +
                                                   "\" for " +
                                                   std::string(hloOpcodeString(info.opcode)));
            attr = Attr::kVerbatim;
        }
        if (attr == Attr::kVerbatim) {
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
            continue;
        }
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
            case Attr::kKind: {
                std::string_view text;
                HLO_RETURN_IF_ERROR(parseIdentifierValue(&text, "fusion kind"));
                if (text != "kLoop" && text != "kInput" && text != "kOutput" && text != "kCustom")
                    return error(m_lexer.position() - text.size(),
                                 "expects fusion kind but sees: " + std::string(text));
                extra().fusionKind = std::string(text);
                break;
            }
            case Attr::kIsStable: {
                bool value = false;
                HLO_RETURN_IF_ERROR(parseBoolValue(&value));
                extra().isStable = value;
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
            case Attr::kFftLength:
                HLO_RETURN_IF_ERROR(parseInt64List(&extra().fftLength));
                break;
            case Attr::kDistribution: {
                std::string_view text;
                HLO_RETURN_IF_ERROR(parseIdentifierValue(&text, "random distribution"));
                if (text != "rng_uniform" && text != "rng_normal")
                    return error(m_lexer.position() - text.size(),
                                 "expects random distribution but sees: " + std::string(text));
                extra().distribution = std::string(text);
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
            case Attr::kBranchComputations:
            case Attr::kCalledComputations:
                HLO_RETURN_IF_ERROR(parseComputationValue(instruction, name, /*list=*/true));
                break;
            default:  // single called computations
                HLO_RETURN_IF_ERROR(parseComputationValue(instruction, name, /*list=*/false));
                break;
        }
    }

    // A dot always has dimension numbers (possibly all empty), however written.
    if (op == HloOpcode::kDot || op == HloOpcode::kRaggedDot || op == HloOpcode::kScaledDot) dot();
    // Required attributes (XLA's parser rejects instructions without them).
    if (op) {
        RequiredAttributes required = requiredAttributes(*op);
        for (size_t r = 0; r < required.count; ++r) {
            if (!wasSeen(required.names[r]))
                return error(attributesOffset, "attribute " + std::string(required.names[r]) +
                                                   " is expected but not seen");
        }
        using O = HloOpcode;
        HloOpcode opcode = *op;
        if (instruction->hasDimensions() && instruction->dimensions().size() != 1 &&
            oneOf(opcode, {O::kAllGather, O::kAllGatherStart, O::kReduceScatter, O::kAllToAll,
                           O::kRaggedAllToAll, O::kGetDimensionSize, O::kSetDimensionSize, O::kSort,
                           O::kConcatenate, O::kScan}))
            return error(attributesOffset, "attribute dimensions of " +
                                               std::string(hloOpcodeString(opcode)) +
                                               " expects exactly one dimension, got " +
                                               std::to_string(instruction->dimensions().size()));
        if (opcode == O::kCustomCall && instruction->calledComputation("to_apply") &&
            wasSeen("called_computations"))
            return error(attributesOffset,
                         "A single instruction can't have both to_apply and calls field");
        if (oneOf(opcode, {O::kAllReduce, O::kAllReduceStart, O::kReduceScatter}) &&
            !instruction->attribute("mode")) {
            auto global = instruction->attribute("use_global_device_ids");
            if (global && *global == "true" && !instruction->attribute("channel_id"))
                return error(attributesOffset,
                             "Cannot have use_global_device_ids=true without channel_id");
        }
    }
    // Inline computations were pushed as called-computation attributes;
    // named ones still need resolving (calledRefs), handled at module end.
    (void)state;
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
