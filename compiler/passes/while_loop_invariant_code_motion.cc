#include "compiler/passes/while_loop_invariant_code_motion.h"

#include <optional>
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

// The parts of a while loop that hoisting rewrites.
struct LoopParts {
    HloInstruction* loop = nullptr;
    HloComputation* parent = nullptr;
    HloComputation* body = nullptr;
    HloInstruction* parameter = nullptr;           // the body's
    HloInstruction* root = nullptr;                // the body's, a tuple
    HloInstruction* conditionParameter = nullptr;
    Shape state;                                   // a copy: the loop widens
    int64_t n = 0;                                 // loop-state elements
};

// The loop's parts, or nullopt when the loop is left alone (see the header).
std::optional<LoopParts> loopParts(HloInstruction* loop) {
    HloComputation* parent = loop->parent();
    HloComputation* body = loop->whileBody();
    HloComputation* condition = loop->whileCondition();
    const Shape state = loop->shape();  // a copy: the loop widens below
    if (!state.isTuple() || loop->operandCount() != 1 || hasControlEdges(*loop)) return std::nullopt;
    if (body->parameterCount() != 1 || condition->parameterCount() != 1) return std::nullopt;
    HloInstruction* parameter = body->parameter(0);
    HloInstruction* root = body->root();
    HloInstruction* conditionParameter = condition->parameter(0);
    if (!parameter || !root || !conditionParameter || root->opcode() != HloOpcode::kTuple ||
        root->userCount() != 0 || hasControlEdges(*root) || root->shape() != state ||
        parameter->shape() != state || conditionParameter->shape() != state ||
        root->operandCount() != state.tupleCount() || !onlyGteUsers(*parameter) ||
        !onlyGteUsers(*conditionParameter) || loop->operand(0)->shape() != state)
        return std::nullopt;
    // A tuple sharding must mirror the state shape: leave such loops alone.
    for (const HloInstruction* widened : {static_cast<const HloInstruction*>(loop),
                                          static_cast<const HloInstruction*>(parameter),
                                          static_cast<const HloInstruction*>(root),
                                          static_cast<const HloInstruction*>(conditionParameter)})
        if (widened->attribute("sharding")) return std::nullopt;
    return LoopParts{loop, parent, body, parameter, root, conditionParameter, state, state.tupleCount()};
}

// The invariant instructions of the body (`order` is its post order).
std::unordered_set<const HloInstruction*> invariantInstructions(const LoopParts& loop,
                                                                const std::vector<HloInstruction*>& order) {
    const int64_t n = loop.n;
    // Invariant state elements: passed through unchanged by the root.
    std::vector<bool> invariantElement(static_cast<size_t>(n), false);
    for (int64_t i = 0; i < n; ++i) {
        const HloInstruction* element = loop.root->operand(i);
        invariantElement[static_cast<size_t>(i)] =
            element->opcode() == HloOpcode::kGetTupleElement && element->operand(0) == loop.parameter &&
            element->tupleIndex() == i;
    }

    passes::SideEffectAnalysis effects;
    std::unordered_set<const HloInstruction*> invariant;
    for (HloInstruction* instruction : order) {
        if (instruction->opcode() == HloOpcode::kGetTupleElement &&
            instruction->operand(0) == loop.parameter) {
            const int64_t i = instruction->tupleIndex();
            if (i >= 0 && i < n && invariantElement[static_cast<size_t>(i)] &&
                !hasControlEdges(*instruction))
                invariant.insert(instruction);
            continue;
        }
        if (!movableOpcode(instruction->opcode()) || hasControlEdges(*instruction) ||
            !instruction->shape().isArray() || instruction == loop.root)
            continue;
        bool operandsInvariant = true;
        for (const HloInstruction* operand : instruction->operands())
            operandsInvariant = operandsInvariant && invariant.count(operand) != 0;
        if (!operandsInvariant || effects.hasSideEffect(instruction)) continue;
        invariant.insert(instruction);
    }
    return invariant;
}

// The values entering the loop through new state elements, in post order:
// hoistable instructions some user of which stays in the loop.
std::vector<HloInstruction*> hoistFrontier(const LoopParts& loop, const std::vector<HloInstruction*>& order,
                                           const std::unordered_set<const HloInstruction*>& invariant,
                                           bool hoistConstants, bool hoistSizeInflatingOps) {
    auto hoistable = [&](const HloInstruction* instruction) {
        if (!invariant.count(instruction)) return false;
        if (instruction->opcode() == HloOpcode::kGetTupleElement &&
            instruction->operand(0) == loop.parameter)
            return false;  // already a loop-state element
        if (instruction->opcode() == HloOpcode::kConstant) return hoistConstants;
        if (!hoistSizeInflatingOps) {
            int64_t operandBytes = 0;
            for (const HloInstruction* operand : instruction->operands())
                operandBytes += operand->shape().byteSize();
            if (instruction->shape().byteSize() > operandBytes) return false;
        }
        return true;
    };
    // Users come later in post order, so decide in reverse.
    std::unordered_set<const HloInstruction*> hoisted;
    std::vector<HloInstruction*> frontier;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        HloInstruction* instruction = *it;
        if (!hoistable(instruction)) continue;
        bool neededInside = false;
        for (const HloInstruction* user : instruction->users())
            neededInside = neededInside || !hoisted.count(user);
        hoisted.insert(instruction);
        if (neededInside) frontier.push_back(instruction);
    }
    if (frontier.empty()) return frontier;
    // Only instructions whose users are all hoisted are absorbed: one that
    // was hoisted but whose every user is absorbed needs no state element.
    // (frontier holds the rest.) Restore post order for deterministic output.
    std::unordered_set<const HloInstruction*> frontierSet(frontier.begin(), frontier.end());
    frontier.clear();
    for (HloInstruction* instruction : order)
        if (frontierSet.count(instruction)) frontier.push_back(instruction);
    return frontier;
}

// Outside values of the loop-state elements (made on first need), and
// clones (before the loop) of every invariant instruction the frontier needs.
struct OutsideValues {
    std::vector<HloInstruction*> state;
    std::unordered_map<const HloInstruction*, HloInstruction*> clones;
    bool clonedFusion = false;
};

// The outside value of loop-state element `i`: the init tuple's operand, or
// a get-tuple-element of the init.
HloInstruction* elementOutside(HloModule& module, const LoopParts& loop, OutsideValues& values, int64_t i) {
    HloInstruction* init = loop.loop->operand(0);
    HloInstruction*& value = values.state[static_cast<size_t>(i)];
    if (value) return value;
    if (init->opcode() == HloOpcode::kTuple && init->operand(i)->shape() == loop.state.tupleShape(i))
        value = init->operand(i);
    else
        value = loop.parent->addInstruction(makeGte(module, init, i));
    return value;
}

OutsideValues cloneBeforeLoop(HloModule& module, const LoopParts& loop, const std::vector<HloInstruction*>& order,
                              const std::vector<HloInstruction*>& frontier) {
    OutsideValues values;
    values.state.assign(static_cast<size_t>(loop.n), nullptr);
    std::unordered_set<const HloInstruction*> needed;
    std::vector<const HloInstruction*> stack(frontier.begin(), frontier.end());
    for (const HloInstruction* x : frontier) needed.insert(x);
    while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        // A state element's value comes from the init, not the parameter.
        if (x->opcode() == HloOpcode::kGetTupleElement && x->operand(0) == loop.parameter) continue;
        for (const HloInstruction* operand : x->operands())
            if (needed.insert(operand).second) stack.push_back(operand);
    }
    auto& outside = values.clones;
    for (HloInstruction* instruction : order) {
        if (!needed.count(instruction)) continue;
        if (instruction->opcode() == HloOpcode::kGetTupleElement &&
            instruction->operand(0) == loop.parameter) {
            outside[instruction] = elementOutside(module, loop, values, instruction->tupleIndex());
            continue;
        }
        std::vector<HloInstruction*> operands;
        for (const HloInstruction* operand : instruction->operands())
            operands.push_back(outside.at(operand));
        values.clonedFusion = values.clonedFusion || instruction->opcode() == HloOpcode::kFusion;
        outside[instruction] = loop.parent->addInstruction(instruction->cloneWithNewOperands(
            instruction->shape(), operands, module.uniqueInstructionName(instruction->name())));
    }
    return values;
}

// The wider loop state: the old elements, then the hoisted values (the
// frontier's clones). Returns the new init tuple, before the loop.
HloInstruction* wideInit(HloModule& module, const LoopParts& loop, OutsideValues& values,
                         const std::vector<HloInstruction*>& frontier, const Shape& wide) {
    std::vector<HloInstruction*> initElements;
    for (int64_t i = 0; i < loop.n; ++i) initElements.push_back(elementOutside(module, loop, values, i));
    for (HloInstruction* x : frontier) initElements.push_back(values.clones.at(x));
    auto newInit = std::make_unique<HloInstruction>(HloOpcode::kTuple,
                                                    module.uniqueInstructionName("tuple"), wide);
    for (HloInstruction* element : initElements) newInit->appendOperand(element);
    return loop.parent->addInstruction(std::move(newInit));
}

// The loop itself: wider in place, reading `init`; users other than
// get-tuple-elements (and the parent's root) see the original state shape.
void widenLoop(HloModule& module, const LoopParts& loop, HloInstruction* init, const Shape& wide) {
    HloComputation* parent = loop.parent;
    HloInstruction* whileLoop = loop.loop;
    const std::vector<HloInstruction*> users = whileLoop->users();
    const bool wasRoot = parent->root() == whileLoop;
    whileLoop->replaceOperand(0, init);
    whileLoop->setShape(wide);
    HloInstruction* narrow = nullptr;
    auto narrowTuple = [&]() {
        if (narrow) return narrow;
        auto tuple = std::make_unique<HloInstruction>(HloOpcode::kTuple,
                                                      module.uniqueInstructionName("tuple"), loop.state);
        for (int64_t i = 0; i < loop.n; ++i)
            tuple->appendOperand(parent->addInstruction(makeGte(module, whileLoop, i)));
        narrow = parent->addInstruction(std::move(tuple));
        return narrow;
    };
    for (HloInstruction* user : users) {
        if (user->opcode() == HloOpcode::kGetTupleElement) continue;
        for (int64_t i = 0; i < user->operandCount(); ++i)
            if (user->operand(i) == whileLoop) user->replaceOperand(i, narrowTuple());
    }
    if (wasRoot) parent->setRoot(narrowTuple());
}

// Removes what is now dead in the body: invariant instructions all of
// whose users are dead too.
Status removeDeadInvariants(HloComputation& body, const std::vector<HloInstruction*>& order,
                            const std::unordered_set<const HloInstruction*>& invariant) {
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
    return body.removeInstructions(dead);
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
                                                           HloInstruction* whileLoop) {
    const std::optional<LoopParts> parts = loopParts(whileLoop);
    if (!parts) return false;
    const LoopParts& loop = *parts;
    const std::vector<HloInstruction*> order = loop.body->postOrder();
    const std::unordered_set<const HloInstruction*> invariant = invariantInstructions(loop, order);
    const std::vector<HloInstruction*> frontier =
        hoistFrontier(loop, order, invariant, m_hoistConstants, m_hoistSizeInflatingOps);
    if (frontier.empty()) return false;
    OutsideValues values = cloneBeforeLoop(module, loop, order, frontier);
    m_clonedFusion = m_clonedFusion || values.clonedFusion;

    Shape wide = loop.state;
    for (HloInstruction* x : frontier) wide.mutableTupleShapes().push_back(x->shape());
    HloInstruction* init = wideInit(module, loop, values, frontier, wide);

    // `origin=` (XLA's original-value annotation) mirrors the shape; the
    // widened instructions lose it.
    for (HloInstruction* widened : {whileLoop, loop.parameter, loop.root, loop.conditionParameter})
        widened->removeAttribute("origin");
    loop.parameter->setShape(wide);
    loop.conditionParameter->setShape(wide);
    for (size_t k = 0; k < frontier.size(); ++k) {
        HloInstruction* x = frontier[k];
        HloInstruction* value =
            loop.body->addInstruction(makeGte(module, loop.parameter, loop.n + static_cast<int64_t>(k)));
        recordRewrite("hoist-invariant", x, values.clones.at(x));
        x->replaceAllUsesWith(value);
        loop.root->appendOperand(value);
    }
    loop.root->setShape(wide);
    widenLoop(module, loop, init, wide);
    HLO_RETURN_IF_ERROR(removeDeadInvariants(*loop.body, order, invariant));
    return true;
}

}  // namespace hloscope
