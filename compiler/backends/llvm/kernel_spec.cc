#include "compiler/backends/llvm/kernel_spec.h"

#include <utility>

namespace hloscope {

bool isElementalOpcode(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kAbs:
        case HloOpcode::kAdd:
        case HloOpcode::kAnd:
        case HloOpcode::kAtan2:
        case HloOpcode::kCbrt:
        case HloOpcode::kCeil:
        case HloOpcode::kClamp:
        case HloOpcode::kClz:
        case HloOpcode::kCompare:
        case HloOpcode::kConvert:
        case HloOpcode::kBitcastConvert:
        case HloOpcode::kCos:
        case HloOpcode::kDivide:
        case HloOpcode::kErf:
        case HloOpcode::kExp:
        case HloOpcode::kExpm1:
        case HloOpcode::kFloor:
        case HloOpcode::kIsFinite:
        case HloOpcode::kLog:
        case HloOpcode::kLog1p:
        case HloOpcode::kLogistic:
        case HloOpcode::kMaximum:
        case HloOpcode::kMinimum:
        case HloOpcode::kMultiply:
        case HloOpcode::kNegate:
        case HloOpcode::kNot:
        case HloOpcode::kOr:
        case HloOpcode::kPopulationCount:
        case HloOpcode::kPower:
        case HloOpcode::kReducePrecision:
        case HloOpcode::kRemainder:
        case HloOpcode::kRoundNearestAfz:
        case HloOpcode::kRoundNearestEven:
        case HloOpcode::kRsqrt:
        case HloOpcode::kSelect:
        case HloOpcode::kShiftLeft:
        case HloOpcode::kShiftRightArithmetic:
        case HloOpcode::kShiftRightLogical:
        case HloOpcode::kSign:
        case HloOpcode::kSin:
        case HloOpcode::kSqrt:
        case HloOpcode::kStochasticConvert:
        case HloOpcode::kSubtract:
        case HloOpcode::kTan:
        case HloOpcode::kTanh:
        case HloOpcode::kXor:
        case HloOpcode::kSinh:
        case HloOpcode::kCosh:
        case HloOpcode::kAsin:
        case HloOpcode::kAcos:
        case HloOpcode::kAtan:
        case HloOpcode::kAsinh:
        case HloOpcode::kAcosh:
        case HloOpcode::kAtanh:
        case HloOpcode::kComplex:
        case HloOpcode::kReal:
        case HloOpcode::kImag:
            return true;
        default:
            return false;
    }
}

bool isKernelOpcode(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kBroadcast:
        case HloOpcode::kTranspose:
        case HloOpcode::kSlice:
        case HloOpcode::kReverse:
        case HloOpcode::kPad:
        case HloOpcode::kConcatenate:
        case HloOpcode::kIota:
        case HloOpcode::kCopy:
        case HloOpcode::kReduce:
        case HloOpcode::kGather:
        case HloOpcode::kDynamicSlice:
        case HloOpcode::kReshape:
        case HloOpcode::kDynamicUpdateSlice:
        case HloOpcode::kBitcast:
        case HloOpcode::kReduceWindow:
        case HloOpcode::kConvolution:
        case HloOpcode::kSelectAndScatter:
        case HloOpcode::kMap:
        case HloOpcode::kReplicaId:
        case HloOpcode::kPartitionId:
        case HloOpcode::kGetDimensionSize:
        case HloOpcode::kSetDimensionSize:
        case HloOpcode::kDynamicReshape:
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllGather:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectiveReduce:
            return true;
        default:
            return isElementalOpcode(opcode);
    }
}

bool isVariadicReduction(const HloInstruction& instruction) {
    return instruction.shape().isTuple() && (instruction.opcode() == HloOpcode::kReduce ||
                                             instruction.opcode() == HloOpcode::kReduceWindow);
}

void KernelSpec::addOutputs(const HloInstruction& root) {
    if (root.opcode() == HloOpcode::kTuple) {
        for (const HloInstruction* element : root.operands()) {
            if (isVariadicReduction(*element)) {
                // A nested variadic reduce: its components, in the result's leaf order.
                if (outputComponents.size() < outputs.size())
                    outputComponents.resize(outputs.size(), -1);
                addOutputs(*element);
                continue;
            }
            outputs.push_back(element);
            if (!outputComponents.empty()) outputComponents.push_back(-1);
        }
    } else if (isVariadicReduction(root)) {
        for (int64_t k = 0; k < root.shape().tupleCount(); ++k) {
            outputs.push_back(&root);
            outputComponents.push_back(static_cast<int>(k));
        }
    } else {
        outputs.push_back(&root);
    }
}

const Shape& KernelSpec::outputShape(size_t k) const {
    const Shape& shape = outputs[k]->shape();
    const int c = k < outputComponents.size() ? outputComponents[k] : -1;
    return c >= 0 ? shape.tupleShape(c) : shape;
}

namespace {

// Elements output `output` reduces (0: not a reduce).
int64_t reducedCount(const HloInstruction* output) {
    if (output->opcode() == HloOpcode::kGetTupleElement) output = output->operand(0);
    if (output->opcode() != HloOpcode::kReduce) return 0;
    int64_t count = 1;
    for (int64_t d : output->dimensions()) count *= output->operand(0)->shape().dimensions(d);
    return count;
}

}  // namespace

std::vector<std::vector<size_t>> KernelSpec::outputGroups() const {
    std::vector<std::pair<std::pair<std::vector<int64_t>, int64_t>, std::vector<size_t>>> groups;
    for (size_t k = 0; k < outputs.size(); ++k) {
        auto key = std::make_pair(outputShape(k).dimensions(), reducedCount(outputs[k]));
        auto it = groups.begin();
        while (it != groups.end() && it->first != key) ++it;
        if (it == groups.end())
            groups.push_back({std::move(key), {k}});
        else
            it->second.push_back(k);
    }
    std::vector<std::vector<size_t>> result;
    for (auto& group : groups) result.push_back(std::move(group.second));
    return result;
}

KernelSpec KernelSpec::part(const std::vector<size_t>& members, std::string partName) const {
    KernelSpec result = *this;
    result.name = std::move(partName);
    result.outputs.clear();
    result.outputComponents.clear();
    for (size_t k : members) {
        result.outputs.push_back(outputs[k]);
        if (!outputComponents.empty()) result.outputComponents.push_back(outputComponents[k]);
    }
    return result;
}

}  // namespace hloscope
