// The HLO text parser's attribute table: which attribute names it stores in
// fields (the rest are kept verbatim), which opcodes take each, which ones
// XLA requires of an opcode, and which opcodes accept result_accuracy.
#include <algorithm>

#include "core/text/hlo_parser_internal.h"

namespace hloscope::hlo_parser_internal {

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

}  // namespace hloscope::hlo_parser_internal
