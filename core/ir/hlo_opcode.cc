#include "core/ir/hlo_opcode.h"

#include <algorithm>
#include <array>

namespace hloscope {
namespace {

struct OpcodeInfo {
    std::string_view name;
    int arity;
};

constexpr std::array<OpcodeInfo, kHloOpcodeCount> kOpcodeInfo = {{
#define HLO_OPCODE_INFO(e, name, arity) {name, arity},
    HLO_OPCODE_LIST(HLO_OPCODE_INFO)
#undef HLO_OPCODE_INFO
}};

// Spellings sorted for binary search.
struct SortedNames {
    std::array<std::pair<std::string_view, HloOpcode>, kHloOpcodeCount> entries;
    SortedNames() {
        for (int i = 0; i < kHloOpcodeCount; ++i)
            entries[static_cast<size_t>(i)] = {kOpcodeInfo[static_cast<size_t>(i)].name,
                                               static_cast<HloOpcode>(i)};
        std::sort(entries.begin(), entries.end());
    }
};

}  // namespace

std::string_view hloOpcodeString(HloOpcode opcode) {
    return kOpcodeInfo[static_cast<size_t>(opcode)].name;
}

std::optional<HloOpcode> stringToHloOpcode(std::string_view name) {
    static const SortedNames kSorted;
    auto it = std::lower_bound(
        kSorted.entries.begin(), kSorted.entries.end(), name,
        [](const std::pair<std::string_view, HloOpcode>& e, std::string_view n) {
            return e.first < n;
        });
    if (it != kSorted.entries.end() && it->first == name) return it->second;
    return std::nullopt;
}

std::optional<int> hloOpcodeArity(HloOpcode opcode) {
    int arity = kOpcodeInfo[static_cast<size_t>(opcode)].arity;
    if (arity == kHloOpcodeIsVariadic) return std::nullopt;
    return arity;
}

bool hloOpcodeIsElementwiseUnary(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kAbs:
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtan:
    case HloOpcode::kAtanh:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kCbrt:
    case HloOpcode::kCeil:
    case HloOpcode::kClz:
    case HloOpcode::kConvert:
    case HloOpcode::kCopy:
    case HloOpcode::kCos:
    case HloOpcode::kCosh:
    case HloOpcode::kErf:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kFloor:
    case HloOpcode::kImag:
    case HloOpcode::kIsFinite:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kNegate:
    case HloOpcode::kNot:
    case HloOpcode::kPopulationCount:
    case HloOpcode::kReal:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSign:
    case HloOpcode::kSin:
    case HloOpcode::kSinh:
    case HloOpcode::kSqrt:
    case HloOpcode::kTan:
    case HloOpcode::kTanh: return true;
    default: return false;
    }
}

bool hloOpcodeIsElementwiseBinary(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kAdd:
    case HloOpcode::kAnd:
    case HloOpcode::kAtan2:
    case HloOpcode::kCompare:
    case HloOpcode::kComplex:
    case HloOpcode::kDivide:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kMulhi:
    case HloOpcode::kMultiply:
    case HloOpcode::kOr:
    case HloOpcode::kPower:
    case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kStochasticConvert:
    case HloOpcode::kSubtract:
    case HloOpcode::kXor: return true;
    default: return false;
    }
}

bool hloOpcodeIsElementwise(HloOpcode opcode) {
    return hloOpcodeIsElementwiseUnary(opcode) || hloOpcodeIsElementwiseBinary(opcode) ||
           opcode == HloOpcode::kSelect || opcode == HloOpcode::kClamp ||
           opcode == HloOpcode::kMap;
}

bool hloOpcodeIsBinaryCommutative(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMulhi:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor: return true;
    default: return false;
    }
}

bool hloOpcodeIsAsync(HloOpcode opcode) {
    return opcode == HloOpcode::kAsyncStart || opcode == HloOpcode::kAsyncUpdate ||
           opcode == HloOpcode::kAsyncDone;
}

bool hloOpcodeIsCollective(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectiveReduce:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReduceScatter: return true;
    default: return false;
    }
}

bool hloOpcodeHasSideEffect(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kRng:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier: return true;
    default: return hloOpcodeIsCollective(opcode);
    }
}

bool hloOpcodeKeepsLayout(HloOpcode opcode) {
    if (hloOpcodeIsElementwiseUnary(opcode) || hloOpcodeIsElementwiseBinary(opcode)) {
        return opcode != HloOpcode::kCopy;
    }
    switch (opcode) {
    case HloOpcode::kClamp:
    case HloOpcode::kSelect:
    case HloOpcode::kConcatenate:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kMap:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kScatter:
    case HloOpcode::kSort:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kFft: return true;
    default: return false;
    }
}

}  // namespace hloscope
