#include "compiler/passes/tuple_simplifier.h"

#include <vector>

namespace hloscope {

namespace {

bool hasControlEdges(const HloInstruction& instruction) {
    return !instruction.controlPredecessors().empty() || !instruction.controlSuccessors().empty();
}

// gte(tuple(...), i) -> the tuple's operand i.
HloInstruction* gteOfTuple(const HloInstruction& gte) {
    const HloInstruction* tuple = gte.operand(0);
    if (tuple->opcode() != HloOpcode::kTuple) return nullptr;
    const int64_t index = gte.tupleIndex();
    if (index < 0 || index >= tuple->operandCount()) return nullptr;
    HloInstruction* element = tuple->operand(index);
    return element->shape() == gte.shape() ? element : nullptr;
}

// tuple(gte(x, 0), ..., gte(x, n-1)) -> x.
HloInstruction* tupleOfGtes(const HloInstruction& tuple) {
    if (tuple.operandCount() == 0) return nullptr;
    HloInstruction* source = nullptr;
    for (int64_t i = 0; i < tuple.operandCount(); ++i) {
        const HloInstruction* gte = tuple.operand(i);
        if (gte->opcode() != HloOpcode::kGetTupleElement || gte->tupleIndex() != i) return nullptr;
        if (source == nullptr) source = gte->operand(0);
        if (gte->operand(0) != source) return nullptr;
    }
    if (!source->shape().isTuple() || source->shape().tupleCount() != tuple.operandCount())
        return nullptr;
    return source->shape() == tuple.shape() ? source : nullptr;
}

}  // namespace

std::string_view TupleSimplifierPass::description() {
    return "Tuple simplification: get-tuple-element of a tuple becomes the tuple's operand, and "
           "a tuple that repacks every element of one tuple value in order becomes that value "
           "(only when the shapes, layouts included, are identical).";
}

StatusOr<std::unique_ptr<HloPass>> TupleSimplifierPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<TupleSimplifierPass>());
}

StatusOr<bool> TupleSimplifierPass::run(HloModule& module) {
    bool changed = false;
    for (const auto& computation : module.computations()) {
        std::vector<HloInstruction*> replaced;
        for (HloInstruction* instruction : computation->postOrder()) {
            if (hasControlEdges(*instruction)) continue;
            HloInstruction* replacement = nullptr;
            const char* rule = nullptr;
            if (instruction->opcode() == HloOpcode::kGetTupleElement) {
                replacement = gteOfTuple(*instruction);
                rule = "gte-of-tuple";
            } else if (instruction->opcode() == HloOpcode::kTuple) {
                replacement = tupleOfGtes(*instruction);
                rule = "tuple-of-gtes";
            }
            if (replacement == nullptr) continue;
            recordRewrite(rule, instruction, replacement);
            instruction->replaceAllUsesWith(replacement);
            if (computation->root() == instruction) computation->setRoot(replacement);
            replaced.push_back(instruction);
        }
        if (replaced.empty()) continue;
        HLO_RETURN_IF_ERROR(computation->removeInstructions(replaced));
        changed = true;
    }
    return changed;
}

}  // namespace hloscope
