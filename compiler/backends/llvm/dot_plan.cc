#include "compiler/backends/llvm/dot_plan.h"

#include <algorithm>
#include <unordered_set>

#include "core/ir/hlo_computation.h"

namespace hloscope {

const HloInstruction* parameterBehind(const HloInstruction* operand) {
    while (operand->opcode() == HloOpcode::kCopy &&
           operand->operand(0)->shape().dimensions() == operand->shape().dimensions())
        operand = operand->operand(0);
    return operand->opcode() == HloOpcode::kParameter ? operand : nullptr;
}

const HloInstruction* epilogueProducer(const HloInstruction& fusion, const EpilogueRules& rules) {
    const HloComputation* fused = fusion.fusedComputation();
    if (!fused || !fusion.shape().isArray()) return nullptr;
    const HloInstruction* producer = nullptr;
    for (const auto& instruction : fused->instructions()) {
        if (instruction->opcode() != HloOpcode::kDot &&
            instruction->opcode() != HloOpcode::kConvolution)
            continue;
        if (producer) return nullptr;
        producer = instruction.get();
    }
    if (!producer) return nullptr;
    if (producer->opcode() == HloOpcode::kConvolution && !rules.convolutions) return nullptr;
    for (const HloInstruction* operand : producer->operands())
        if (rules.throughCopies ? !parameterBehind(operand)
                                : operand->opcode() != HloOpcode::kParameter)
            return nullptr;
    if (producer == fused->root()) return rules.producerAlone ? producer : nullptr;
    if (producer->shape().dimensions() != fusion.shape().dimensions()) return nullptr;
    // Everything that depends on the producer: elementwise of the output's dimensions.
    std::unordered_set<const HloInstruction*> dependent{producer};
    for (const HloInstruction* instruction : fused->postOrder()) {
        bool depends = false;
        for (const HloInstruction* operand : instruction->operands())
            depends = depends || dependent.count(operand);
        if (!depends) continue;
        if (!instruction->isElementwise() ||
            instruction->shape().dimensions() != producer->shape().dimensions())
            return nullptr;
        dependent.insert(instruction);
    }
    return dependent.count(fused->root()) ? producer : nullptr;
}

std::vector<int64_t> gemmOperandOrder(const DotDimensionNumbers& numbers, int side, int64_t rank) {
    const std::vector<int64_t>& batch =
        side == 0 ? numbers.lhsBatchDimensions : numbers.rhsBatchDimensions;
    const std::vector<int64_t>& contracting =
        side == 0 ? numbers.lhsContractingDimensions : numbers.rhsContractingDimensions;
    std::vector<int64_t> order(batch.begin(), batch.end());
    std::vector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d)
        if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
            std::find(contracting.begin(), contracting.end(), d) == contracting.end())
            free.push_back(d);
    if (side == 0) order.insert(order.end(), free.begin(), free.end());
    order.insert(order.end(), contracting.begin(), contracting.end());
    if (side == 1) order.insert(order.end(), free.begin(), free.end());
    return order;
}

bool isIdentityOrder(const std::vector<int64_t>& order) {
    for (size_t i = 0; i < order.size(); ++i)
        if (order[i] != static_cast<int64_t>(i)) return false;
    return true;
}

DotDimensionNumbers gemmDotNumbers(const DotDimensionNumbers& numbers, int64_t lhsRank) {
    const int64_t batchRank = static_cast<int64_t>(numbers.lhsBatchDimensions.size());
    const int64_t contractingRank = static_cast<int64_t>(numbers.lhsContractingDimensions.size());
    DotDimensionNumbers out;
    for (int64_t i = 0; i < batchRank; ++i) {
        out.lhsBatchDimensions.push_back(i);
        out.rhsBatchDimensions.push_back(i);
    }
    for (int64_t i = 0; i < contractingRank; ++i) {
        out.lhsContractingDimensions.push_back(lhsRank - contractingRank + i);
        out.rhsContractingDimensions.push_back(batchRank + i);
    }
    return out;
}

}  // namespace hloscope
