#include "compiler/passes/constant_folding.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/passes/pass_util.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/literal.h"

namespace hloscope {

namespace {

bool foldableOpcode(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
    case HloOpcode::kCustomCall:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
    case HloOpcode::kDomain:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kTuple:
    case HloOpcode::kBitcast:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize: return false;
    default: return !hloOpcodeIsAsync(opcode) && !hloOpcodeIsCollective(opcode);
    }
}

bool isDynamic(const Shape& shape) {
    for (int64_t i = 0; i < static_cast<int64_t>(shape.dimensions().size()); ++i)
        if (shape.isDynamicDimension(i)) return true;
    return false;
}

// Evaluates `instruction` on constant operand values: a one-instruction
// computation whose parameters stand for the operands.
StatusOr<Literal> evaluateOn(const HloInstruction& instruction,
                             const std::vector<const Literal*>& values) {
    HloComputation scratch("constant_folding_scratch");
    std::vector<HloInstruction*> parameters;
    std::vector<Literal> arguments;
    for (size_t i = 0; i < values.size(); ++i) {
        auto parameter = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, "p" + std::to_string(i), instruction.operand(i)->shape());
        parameter->setParameterNumber(static_cast<int64_t>(i));
        parameters.push_back(scratch.addInstruction(std::move(parameter)));
        arguments.push_back(*values[i]);
    }
    HloInstruction* clone = scratch.addInstruction(
        instruction.cloneWithNewOperands(instruction.shape(), parameters, "folded"));
    scratch.setRoot(clone);
    HloEvaluator evaluator;
    return evaluator.evaluate(scratch, arguments);
}

}  // namespace

std::string_view ConstantFoldingPass::description() {
    return "Constant folding: evaluates instructions whose operands are all constants with the "
           "reference interpreter and replaces them by constants (not side-effecting, random, "
           "control-flow or custom-call ops; results up to max_elements elements).";
}

StatusOr<std::unique_ptr<HloPass>> ConstantFoldingPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({"max_elements"}));
    HLO_ASSIGN_OR_RETURN(int64_t maxElements, options.getInt("max_elements", 65536));
    if (maxElements < 0)
        return invalidArgument("option max_elements must be >= 0, got " +
                               std::to_string(maxElements));
    return std::unique_ptr<HloPass>(std::make_unique<ConstantFoldingPass>(maxElements));
}

StatusOr<bool> ConstantFoldingPass::run(HloModule& module) {
    std::unordered_set<const HloComputation*> fused;
    for (const auto& computation : module.computations()) {
        if (computation->fusionInstruction()) fused.insert(computation.get());
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kFusion && instruction->fusedComputation())
                fused.insert(instruction->fusedComputation());
    }
    passes::SideEffectAnalysis effects;
    bool changed = false;
    for (const auto& computation : module.computations()) {
        if (fused.count(computation.get())) continue;
        // Values of the constants seen so far (parsed once).
        std::unordered_map<const HloInstruction*, Literal> values;
        auto valueOf = [&](const HloInstruction* constant) -> const Literal* {
            auto it = values.find(constant);
            if (it != values.end()) return &it->second;
            auto literal = literalOfConstant(*constant);
            if (!literal.isOk()) return nullptr;
            return &values.emplace(constant, std::move(*literal)).first->second;
        };
        std::vector<HloInstruction*> folded;
        for (HloInstruction* instruction : computation->postOrder()) {
            if (!foldableOpcode(instruction->opcode())) continue;
            const Shape& shape = instruction->shape();
            if (!shape.isArray() || isDynamic(shape)) continue;
            if (instruction->operandCount() == 0 && instruction->opcode() != HloOpcode::kIota)
                continue;
            if (!instruction->controlPredecessors().empty() ||
                !instruction->controlSuccessors().empty())
                continue;
            const int64_t elements = shape.elementCount();
            // Nothing to gain from an empty array, whose text can still be huge
            // (f32[1000000000000,0] prints a million million braces).
            if (elements > m_maxElements || elements == 0) continue;
            if (instruction->opcode() == HloOpcode::kIota && elements > kMaxExpandingElements)
                continue;
            if (instruction->opcode() == HloOpcode::kBroadcast &&
                elements > kMaxExpandingElements &&
                elements > instruction->operand(0)->shape().elementCount())
                continue;
            std::vector<const Literal*> operandValues;
            bool allConstant = true;
            for (const HloInstruction* operand : instruction->operands()) {
                const Literal* value = operand->opcode() == HloOpcode::kConstant &&
                                               operand->shape().isArray()
                                           ? valueOf(operand)
                                           : nullptr;
                if (value == nullptr) {
                    allConstant = false;
                    break;
                }
                operandValues.push_back(value);
            }
            if (!allConstant || effects.hasSideEffect(instruction)) continue;
            auto result = evaluateOn(*instruction, operandValues);
            if (!result.isOk() || !result->shape().isArray()) continue;
            std::string text = result->valueToString();
            // Only fold what the text form carries exactly.
            auto reparsed = Literal::parseValue(text, shape);
            if (!reparsed.isOk() || !(*reparsed == *result)) continue;
            auto constant = std::make_unique<HloInstruction>(
                HloOpcode::kConstant, module.uniqueInstructionName("constant"), shape);
            constant->setLiteralText(std::move(text));
            HloInstruction* added = computation->addInstruction(std::move(constant));
            values.emplace(added, std::move(*reparsed));
            recordRewrite("fold-constant", instruction, added);
            instruction->replaceAllUsesWith(added);
            if (computation->root() == instruction) computation->setRoot(added);
            folded.push_back(instruction);
        }
        if (folded.empty()) continue;
        HLO_RETURN_IF_ERROR(computation->removeInstructions(folded));
        changed = true;
    }
    return changed;
}

}  // namespace hloscope
