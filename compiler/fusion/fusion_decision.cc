#include "compiler/fusion/fusion_decision.h"

namespace hloscope {

std::string_view fusionReasonCode(FusionReason reason) {
    switch (reason) {
    case FusionReason::kFused: return "fused";
    case FusionReason::kNotFusibleOp: return "not-fusible-op";
    case FusionReason::kConsumerIsNotFusible: return "consumer-is-not-fusible";
    case FusionReason::kWouldDuplicateExpensiveWork: return "would-duplicate-expensive-work";
    case FusionReason::kTooManyOperands: return "too-many-operands";
    case FusionReason::kFusionTooLarge: return "fusion-too-large";
    case FusionReason::kNoPredictedGain: return "no-predicted-gain";
    case FusionReason::kLayoutMismatch: return "layout-mismatch";
    case FusionReason::kMultiOutputCycle: return "multi-output-cycle";
    case FusionReason::kBudgetExceeded: return "budget-exceeded";
    case FusionReason::kForcedByUser: return "forced-by-user";
    case FusionReason::kForbiddenByUser: return "forbidden-by-user";
    case FusionReason::kReductionNotRoot: return "reduction-not-root";
    case FusionReason::kNotSiblings: return "not-siblings";
    case FusionReason::kNotAllConsumers: return "not-all-consumers";
    case FusionReason::kInPlaceConflict: return "in-place-conflict";
    }
    return "unknown";
}

const std::vector<FusionReason>& allFusionReasons() {
    static const std::vector<FusionReason> reasons = {
        FusionReason::kFused,           FusionReason::kNotFusibleOp,
        FusionReason::kConsumerIsNotFusible, FusionReason::kWouldDuplicateExpensiveWork,
        FusionReason::kTooManyOperands, FusionReason::kFusionTooLarge,
        FusionReason::kNoPredictedGain, FusionReason::kLayoutMismatch,
        FusionReason::kMultiOutputCycle, FusionReason::kBudgetExceeded,
        FusionReason::kForcedByUser,    FusionReason::kForbiddenByUser,
        FusionReason::kReductionNotRoot, FusionReason::kNotSiblings,
        FusionReason::kNotAllConsumers, FusionReason::kInPlaceConflict,
    };
    return reasons;
}

}  // namespace hloscope
