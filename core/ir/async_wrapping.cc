#include "core/ir/async_wrapping.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

namespace {

std::optional<HloOpcode> wrappedOpcodeOf(const HloInstruction& instruction) {
    if (instruction.opcode() != HloOpcode::kAsyncStart || !instruction.extra()) return std::nullopt;
    return instruction.extra()->asyncWrappedOpcode;
}

// The last async-start or async-update of the chain `start` begins.
const HloInstruction* lastBeforeDone(const HloInstruction& start) {
    const HloInstruction* last = &start;
    for (int guard = 0; guard < 10000; ++guard) {
        const HloInstruction* next = nullptr;
        for (const HloInstruction* user : last->users())
            if (user->opcode() == HloOpcode::kAsyncUpdate && user->operandCount() > 0 &&
                user->operand(0) == last)
                next = user;
        if (!next) break;
        last = next;
    }
    return last;
}

// Sets `thread` on `computation` and, recursively, on every computation it
// calls (XLA's SetThreadName).
void setExecutionThread(HloComputation& computation, const std::string& thread, int depth = 0) {
    computation.setExecutionThread(thread);
    if (depth > 200) return;
    for (const auto& instruction : computation.instructions())
        for (HloComputation* called : instruction->calledComputations())
            if (called && called->executionThread() != thread)
                setExecutionThread(*called, thread, depth + 1);
}

// The start's attributes move to the wrapped instruction; the start keeps its
// async wrapped opcode, the verbatim attributes every instruction may carry
// (async_execution_thread, backend_config, frontend_attributes, ...) and its
// metadata.
void keepOnlyAsyncAttributes(HloInstruction& start, HloOpcode wrapped, HloComputation* wrapper) {
    start.mutableExtra() = HloExtraAttributes{};
    start.mutableExtra().asyncWrappedOpcode = wrapped;
    start.clearDimensions();
    start.setTupleIndex(0);
    start.mutableCalledComputationAttributes().clear();
    start.setCalledComputation("calls", wrapper);
    // Attributes of the wrapped op (custom_call_target's companions, an
    // output_to_operand_aliasing of its result, ...) leave the start.
    std::vector<HloAttribute>& attributes = start.mutableAttributes();
    std::erase_if(attributes, [](const HloAttribute& attribute) {
        static constexpr std::string_view kAsyncOwn[] = {
            "async_execution_thread", "backend_config", "frontend_attributes",
            "original_value",         "sharding",       "statistics_viz"};
        return std::find(std::begin(kAsyncOwn), std::end(kAsyncOwn), attribute.name) ==
               std::end(kAsyncOwn);
    });
}

Status wrapOne(HloModule& module, HloInstruction& start, HloOpcode wrapped,
               std::unique_ptr<HloComputation>* out) {
    const Shape& shape = start.shape();
    if (!shape.isTuple() || shape.tupleCount() < 2 || !shape.tupleShape(0).isTuple())
        return invalidArgument("async-start " + start.name() +
                               ": AsyncStart and AsyncUpdate expect the shape to be in the form of "
                               "((operand0_shape, operand1_shape, ...), output_shape, ...)");
    const std::string opcodeName(hloOpcodeString(wrapped));
    auto wrapper =
        std::make_unique<HloComputation>(module.uniqueComputationName("wrapped_" + opcodeName));
    // Operands may be bound late (`call-update(%start, %p0)`): the wrapper
    // takes those of the last op before the done.
    const HloInstruction* last = lastBeforeDone(start);
    const Shape& bound = last->shape().isTuple() && last->shape().tupleCount() >= 2 &&
                                 last->shape().tupleShape(0).isTuple()
                             ? last->shape()
                             : shape;
    const std::vector<Shape>& operandShapes = bound.tupleShape(0).tupleShapes();
    std::vector<HloInstruction*> parameters;
    for (size_t i = 0; i < operandShapes.size(); ++i) {
        auto parameter = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, module.uniqueInstructionName("async_param"), operandShapes[i]);
        parameter->setParameterNumber(static_cast<int64_t>(i));
        parameters.push_back(wrapper->addInstruction(std::move(parameter)));
    }
    // The result: the done's shape (the start's may be a placeholder when
    // operands come late).
    const HloInstruction* done = nullptr;
    for (const HloInstruction* user : last->users())
        if (user->opcode() == HloOpcode::kAsyncDone && user->operandCount() > 0 &&
            user->operand(0) == last)
            done = user;
    std::unique_ptr<HloInstruction> op =
        start.cloneWithNewOperands(done ? done->shape() : shape.tupleShape(1), parameters,
                                   module.uniqueInstructionName(start.name() + ".wrapped"));
    op->setOpcode(wrapped);
    op->mutableExtra().asyncWrappedOpcode.reset();
    HloInstruction* root = wrapper->addInstruction(std::move(op));
    wrapper->setRoot(root);
    if (wrapped == HloOpcode::kFusion)
        if (HloComputation* fused = root->fusedComputation()) fused->setFusionInstruction(root);
    // As XLA's parser does: the wrapper and everything it calls run on the
    // start's thread.
    if (auto thread = start.attribute("async_execution_thread"); thread && thread->size() >= 2) {
        std::string name(thread->substr(1, thread->size() - 2));
        setExecutionThread(*wrapper, name == "main" ? std::string() : name);
    }
    keepOnlyAsyncAttributes(start, wrapped, wrapper.get());
    *out = std::move(wrapper);
    return Status::ok();
}

}  // namespace

const HloInstruction* asyncSugarRoot(const HloInstruction& instruction) {
    std::optional<HloOpcode> wrapped = wrappedOpcodeOf(instruction);
    if (!wrapped) return nullptr;
    const auto& called = instruction.calledComputationAttributes();
    if (called.size() != 1 || called[0].name != "calls" || called[0].computations.size() != 1)
        return nullptr;
    const HloComputation* wrapper = called[0].computations[0];
    const HloInstruction* root = wrapper ? wrapper->root() : nullptr;
    if (!root || root->opcode() != *wrapped) return nullptr;
    if (wrapper->instructionCount() != wrapper->parameterCount() + 1) return nullptr;
    if (root->operandCount() != wrapper->parameterCount()) return nullptr;
    for (int64_t i = 0; i < root->operandCount(); ++i)
        if (root->operand(i) != wrapper->parameter(i)) return nullptr;
    return root;
}

bool asyncWrittenAsSugar(const HloInstruction& instruction) {
    const HloInstruction* start = asyncChainStart(instruction);
    if (!start || !start->extra() || !start->extra()->asyncWrappedOpcode) return true;
    return !start->calledComputation("calls") || asyncSugarRoot(*start);
}

const HloInstruction* asyncChainStart(const HloInstruction& instruction) {
    if (instruction.opcode() == HloOpcode::kAsyncStart) return &instruction;
    if (instruction.opcode() != HloOpcode::kAsyncUpdate &&
        instruction.opcode() != HloOpcode::kAsyncDone)
        return nullptr;
    const HloInstruction* current = &instruction;
    for (int guard = 0; guard < 10000; ++guard) {
        if (current->operandCount() < 1) return nullptr;
        current = current->operand(0);
        if (current->opcode() == HloOpcode::kAsyncStart) return current;
        if (current->opcode() != HloOpcode::kAsyncUpdate) return nullptr;
    }
    return nullptr;
}

bool asyncBindsLate(const HloInstruction& start) {
    const HloComputation* called = start.calledComputation("calls");
    return start.opcode() == HloOpcode::kAsyncStart && called &&
           called->parameterCount() > start.operandCount();
}

Status wrapAsyncSugar(HloModule& module) {
    // Wrappers made for each computation, placed before it.
    std::unordered_map<const HloComputation*, std::vector<std::unique_ptr<HloComputation>>> made;
    for (const auto& computation : module.computations()) {
        for (const auto& instruction : computation->instructions()) {
            std::optional<HloOpcode> wrapped = wrappedOpcodeOf(*instruction);
            // Wrapped already; or a plain async-start (calls=) that a changed
            // wrapper was written as (a fusion-start's calls= is its fusion's).
            if (!wrapped || asyncSugarRoot(*instruction)) continue;
            if (instruction->calledComputation("calls") && *wrapped != HloOpcode::kFusion) continue;
            std::unique_ptr<HloComputation> wrapper;
            HLO_RETURN_IF_ERROR(wrapOne(module, *instruction, *wrapped, &wrapper));
            made[computation.get()].push_back(std::move(wrapper));
        }
    }
    if (made.empty()) return Status::ok();
    std::vector<HloComputation*> existing;
    for (const auto& computation : module.computations()) existing.push_back(computation.get());
    std::vector<HloComputation*> order;
    for (HloComputation* computation : existing) {
        auto it = made.find(computation);
        if (it != made.end())
            for (std::unique_ptr<HloComputation>& wrapper : it->second)
                order.push_back(module.addComputation(std::move(wrapper)));
        order.push_back(computation);
    }
    return module.reorderComputations(order);
}

}  // namespace hloscope
