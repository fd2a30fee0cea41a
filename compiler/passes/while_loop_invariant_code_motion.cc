#include "compiler/passes/while_loop_invariant_code_motion.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/passes/pass_util.h"

namespace hloscope {

namespace {

bool movableOpcode(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kParameter:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
    case HloOpcode::kCustomCall:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId: return false;
    default: return !hloOpcodeIsAsync(opcode) && !hloOpcodeIsCollective(opcode);
    }
}

bool hasControlEdges(const HloInstruction& instruction) {
    return !instruction.controlPredecessors().empty() || !instruction.controlSuccessors().empty();
}

bool onlyGteUsers(const HloInstruction& parameter) {
    for (const HloInstruction* user : parameter.users())
        if (user->opcode() != HloOpcode::kGetTupleElement) return false;
    return true;
}

std::unique_ptr<HloInstruction> makeGte(HloModule& module, HloInstruction* tuple, int64_t index) {
    auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement,
                                                module.uniqueInstructionName("get-tuple-element"),
                                                tuple->shape().tupleShape(index));
    gte->setTupleIndex(index);
    gte->appendOperand(tuple);
    return gte;
}

}  // namespace

std::string_view WhileLoopInvariantCodeMotionPass::description() {
    return "Loop-invariant code motion: computes instructions of a while body that depend only "
           "on loop-invariant state elements and constants once before the loop, passing their "
           "values in through new loop-state elements.";
}

StatusOr<std::unique_ptr<HloPass>> WhileLoopInvariantCodeMotionPass::create(
    const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({"hoist_constants", "hoist_size_inflating_ops"}));
    HLO_ASSIGN_OR_RETURN(bool constants, options.getBool("hoist_constants", false));
    HLO_ASSIGN_OR_RETURN(bool inflating, options.getBool("hoist_size_inflating_ops", false));
    return std::unique_ptr<HloPass>(
        std::make_unique<WhileLoopInvariantCodeMotionPass>(constants, inflating));
}

StatusOr<bool> WhileLoopInvariantCodeMotionPass::run(HloModule& module) {
    // Callers per computation: a body or condition shared with another
    // caller cannot change its parameter shape.
    std::unordered_map<const HloComputation*, int> callers;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            for (const auto& attribute : instruction->calledComputationAttributes())
                for (const HloComputation* callee : attribute.computations) ++callers[callee];
    bool changed = false;
    m_clonedFusion = false;
    for (HloComputation* computation : passes::calleesFirst(module)) {
        if (computation->fusionInstruction()) continue;
        std::vector<HloInstruction*> loops;
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kWhile) loops.push_back(instruction.get());
        for (HloInstruction* loop : loops) {
            HloComputation* body = loop->whileBody();
            HloComputation* condition = loop->whileCondition();
            if (!body || !condition || callers[body] != 1 || callers[condition] != 1) continue;
            HLO_ASSIGN_OR_RETURN(bool hoisted, hoistFrom(module, loop));
            changed = changed || hoisted;
        }
    }
    // A hoisted fusion's computation is now called by the clone.
    if (m_clonedFusion) passes::repointFusionComputations(module);
    return changed;
}

StatusOr<bool> WhileLoopInvariantCodeMotionPass::hoistFrom(HloModule& module,
                                                           HloInstruction* loop) {
    HloComputation* parent = loop->parent();
    HloComputation* body = loop->whileBody();
    HloComputation* condition = loop->whileCondition();
    const Shape state = loop->shape();  // a copy: the loop widens below
    if (!state.isTuple() || loop->operandCount() != 1 || hasControlEdges(*loop)) return false;
    if (body->parameterCount() != 1 || condition->parameterCount() != 1) return false;
    HloInstruction* parameter = body->parameter(0);
    HloInstruction* root = body->root();
    HloInstruction* conditionParameter = condition->parameter(0);
    if (!parameter || !root || !conditionParameter || root->opcode() != HloOpcode::kTuple ||
        root->userCount() != 0 || hasControlEdges(*root) || root->shape() != state ||
        parameter->shape() != state || conditionParameter->shape() != state ||
        root->operandCount() != state.tupleCount() || !onlyGteUsers(*parameter) ||
        !onlyGteUsers(*conditionParameter) || loop->operand(0)->shape() != state)
        return false;
    // A tuple sharding must mirror the state shape: leave such loops alone.
    for (const HloInstruction* widened : {static_cast<const HloInstruction*>(loop),
                                          static_cast<const HloInstruction*>(parameter),
                                          static_cast<const HloInstruction*>(root),
                                          static_cast<const HloInstruction*>(conditionParameter)})
        if (widened->attribute("sharding")) return false;
    const int64_t n = state.tupleCount();

    // Invariant state elements: passed through unchanged by the root.
    std::vector<bool> invariantElement(static_cast<size_t>(n), false);
    for (int64_t i = 0; i < n; ++i) {
        const HloInstruction* element = root->operand(i);
        invariantElement[static_cast<size_t>(i)] =
            element->opcode() == HloOpcode::kGetTupleElement && element->operand(0) == parameter &&
            element->tupleIndex() == i;
    }

    passes::SideEffectAnalysis effects;
    const std::vector<HloInstruction*> order = body->postOrder();
    std::unordered_set<const HloInstruction*> invariant;
    for (HloInstruction* instruction : order) {
        if (instruction->opcode() == HloOpcode::kGetTupleElement &&
            instruction->operand(0) == parameter) {
            const int64_t i = instruction->tupleIndex();
            if (i >= 0 && i < n && invariantElement[static_cast<size_t>(i)] &&
                !hasControlEdges(*instruction))
                invariant.insert(instruction);
            continue;
        }
        if (!movableOpcode(instruction->opcode()) || hasControlEdges(*instruction) ||
            !instruction->shape().isArray() || instruction == root)
            continue;
        bool operandsInvariant = true;
        for (const HloInstruction* operand : instruction->operands())
            operandsInvariant = operandsInvariant && invariant.count(operand) != 0;
        if (!operandsInvariant || effects.hasSideEffect(instruction)) continue;
        invariant.insert(instruction);
    }

    auto hoistable = [&](const HloInstruction* instruction) {
        if (!invariant.count(instruction)) return false;
        if (instruction->opcode() == HloOpcode::kGetTupleElement &&
            instruction->operand(0) == parameter)
            return false;  // already a loop-state element
        if (instruction->opcode() == HloOpcode::kConstant) return m_hoistConstants;
        if (!m_hoistSizeInflatingOps) {
            int64_t operandBytes = 0;
            for (const HloInstruction* operand : instruction->operands())
                operandBytes += operand->shape().byteSize();
            if (instruction->shape().byteSize() > operandBytes) return false;
        }
        return true;
    };
    // Hoisted values: hoistable instructions some user of which stays in
    // the loop (users come later in post order, so decide in reverse).
    std::unordered_set<const HloInstruction*> hoisted;
    std::vector<HloInstruction*> frontier;  // the values entering the loop
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        HloInstruction* instruction = *it;
        if (!hoistable(instruction)) continue;
        bool neededInside = false;
        for (const HloInstruction* user : instruction->users())
            neededInside = neededInside || !hoisted.count(user);
        hoisted.insert(instruction);
        if (neededInside) frontier.push_back(instruction);
    }
    if (frontier.empty()) return false;
    // Only instructions whose users are all hoisted are absorbed: one that
    // was hoisted but whose every user is absorbed needs no state element.
    // (frontier holds the rest.) Restore post order for deterministic output.
    std::unordered_set<const HloInstruction*> frontierSet(frontier.begin(), frontier.end());
    frontier.clear();
    for (HloInstruction* instruction : order)
        if (frontierSet.count(instruction)) frontier.push_back(instruction);

    // Outside values of the loop-state elements, and clones (before the
    // loop) of every invariant instruction the frontier needs.
    HloInstruction* init = loop->operand(0);
    std::vector<HloInstruction*> stateOutside(static_cast<size_t>(n), nullptr);
    auto elementOutside = [&](int64_t i) {
        HloInstruction*& value = stateOutside[static_cast<size_t>(i)];
        if (value) return value;
        if (init->opcode() == HloOpcode::kTuple && init->operand(i)->shape() == state.tupleShape(i))
            value = init->operand(i);
        else
            value = parent->addInstruction(makeGte(module, init, i));
        return value;
    };
    std::unordered_set<const HloInstruction*> needed;
    std::vector<const HloInstruction*> stack(frontier.begin(), frontier.end());
    for (const HloInstruction* x : frontier) needed.insert(x);
    while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        // A state element's value comes from the init, not the parameter.
        if (x->opcode() == HloOpcode::kGetTupleElement && x->operand(0) == parameter) continue;
        for (const HloInstruction* operand : x->operands())
            if (needed.insert(operand).second) stack.push_back(operand);
    }
    std::unordered_map<const HloInstruction*, HloInstruction*> outside;
    for (HloInstruction* instruction : order) {
        if (!needed.count(instruction)) continue;
        if (instruction->opcode() == HloOpcode::kGetTupleElement &&
            instruction->operand(0) == parameter) {
            outside[instruction] = elementOutside(instruction->tupleIndex());
            continue;
        }
        std::vector<HloInstruction*> operands;
        for (const HloInstruction* operand : instruction->operands())
            operands.push_back(outside.at(operand));
        m_clonedFusion = m_clonedFusion || instruction->opcode() == HloOpcode::kFusion;
        outside[instruction] = parent->addInstruction(instruction->cloneWithNewOperands(
            instruction->shape(), operands, module.uniqueInstructionName(instruction->name())));
    }

    // The wider loop state: the old elements, then the hoisted values.
    Shape wide = state;
    std::vector<HloInstruction*> initElements;
    for (int64_t i = 0; i < n; ++i) initElements.push_back(elementOutside(i));
    for (HloInstruction* x : frontier) {
        wide.mutableTupleShapes().push_back(x->shape());
        initElements.push_back(outside.at(x));
    }
    auto newInit = std::make_unique<HloInstruction>(HloOpcode::kTuple,
                                                    module.uniqueInstructionName("tuple"), wide);
    for (HloInstruction* element : initElements) newInit->appendOperand(element);
    HloInstruction* wideInit = parent->addInstruction(std::move(newInit));

    // `origin=` (XLA's original-value annotation) mirrors the shape; the
    // widened instructions lose it.
    for (HloInstruction* widened : {loop, parameter, root, conditionParameter})
        widened->removeAttribute("origin");
    parameter->setShape(wide);
    conditionParameter->setShape(wide);
    for (size_t k = 0; k < frontier.size(); ++k) {
        HloInstruction* x = frontier[k];
        HloInstruction* value =
            body->addInstruction(makeGte(module, parameter, n + static_cast<int64_t>(k)));
        recordRewrite("hoist-invariant", x, outside.at(x));
        x->replaceAllUsesWith(value);
        root->appendOperand(value);
    }
    root->setShape(wide);

    // The loop itself: wider in place; users other than get-tuple-elements
    // (and the parent's root) see the original state shape.
    const std::vector<HloInstruction*> users = loop->users();
    const bool wasRoot = parent->root() == loop;
    loop->replaceOperand(0, wideInit);
    loop->setShape(wide);
    HloInstruction* narrow = nullptr;
    auto narrowTuple = [&]() {
        if (narrow) return narrow;
        auto tuple = std::make_unique<HloInstruction>(HloOpcode::kTuple,
                                                      module.uniqueInstructionName("tuple"), state);
        for (int64_t i = 0; i < n; ++i) tuple->appendOperand(parent->addInstruction(makeGte(module, loop, i)));
        narrow = parent->addInstruction(std::move(tuple));
        return narrow;
    };
    for (HloInstruction* user : users) {
        if (user->opcode() == HloOpcode::kGetTupleElement) continue;
        for (int64_t i = 0; i < user->operandCount(); ++i)
            if (user->operand(i) == loop) user->replaceOperand(i, narrowTuple());
    }
    if (wasRoot) parent->setRoot(narrowTuple());

    // Remove what is now dead in the body: invariant instructions all of
    // whose users are dead too.
    std::unordered_set<const HloInstruction*> deadSet;
    std::vector<HloInstruction*> dead;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        HloInstruction* instruction = *it;
        if (!invariant.count(instruction)) continue;
        bool allUsersDead = true;
        for (const HloInstruction* user : instruction->users())
            allUsersDead = allUsersDead && deadSet.count(user) != 0;
        if (!allUsersDead) continue;
        deadSet.insert(instruction);
        dead.push_back(instruction);
    }
    HLO_RETURN_IF_ERROR(body->removeInstructions(dead));
    return true;
}

}  // namespace hloscope
