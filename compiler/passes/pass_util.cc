#include "compiler/passes/pass_util.h"

#include <unordered_set>

namespace hloscope::passes {

bool SideEffectAnalysis::hasSideEffect(const HloInstruction* instruction) {
    if (instruction->hasSideEffect()) return true;
    for (const auto& attribute : instruction->calledComputationAttributes())
        for (const HloComputation* computation : attribute.computations)
            if (computation && hasSideEffect(computation)) return true;
    return false;
}

bool SideEffectAnalysis::hasSideEffect(const HloComputation* computation) {
    auto [it, inserted] = m_computations.emplace(computation, false);
    if (!inserted) return it->second;  // known, or on the current path (cycle: false)
    bool result = false;
    for (const auto& instruction : computation->instructions()) {
        if (hasSideEffect(instruction.get())) {
            result = true;
            break;
        }
    }
    m_computations[computation] = result;
    return result;
}

Status removeComputations(HloModule& module, const std::vector<HloComputation*>& dead) {
    // At once: one scan of the module checks that nothing left calls a removed computation
    // (calls among the removed ones are fine), however many there are.
    return module.removeComputations(dead);
}

void repointFusionComputations(HloModule& module) {
    std::unordered_set<const HloInstruction*> liveFusions;
    std::unordered_map<HloComputation*, HloInstruction*> firstCaller;
    for (const auto& computation : module.computations()) {
        for (const auto& instruction : computation->instructions()) {
            if (instruction->opcode() != HloOpcode::kFusion) continue;
            liveFusions.insert(instruction.get());
            if (HloComputation* fused = instruction->fusedComputation())
                firstCaller.emplace(fused, instruction.get());
        }
    }
    for (const auto& computation : module.computations()) {
        HloInstruction* current = computation->fusionInstruction();
        // `current` may dangle: compare the pointer before dereferencing it.
        if (current == nullptr) continue;
        if (liveFusions.count(current) && current->fusedComputation() == computation.get())
            continue;
        auto it = firstCaller.find(computation.get());
        computation->setFusionInstruction(it == firstCaller.end() ? nullptr : it->second);
    }
}

std::vector<HloComputation*> unreachableComputations(const HloModule& module) {
    std::unordered_set<const HloComputation*> reachable;
    std::vector<const HloComputation*> stack;
    if (const HloComputation* entry = module.entryComputation()) {
        reachable.insert(entry);
        stack.push_back(entry);
    }
    while (!stack.empty()) {
        const HloComputation* computation = stack.back();
        stack.pop_back();
        for (const auto& instruction : computation->instructions())
            for (const auto& attribute : instruction->calledComputationAttributes())
                for (const HloComputation* callee : attribute.computations)
                    if (callee && reachable.insert(callee).second) stack.push_back(callee);
    }
    std::vector<HloComputation*> dead;
    for (const auto& computation : module.computations())
        if (!reachable.count(computation.get())) dead.push_back(computation.get());
    return dead;
}

std::vector<HloComputation*> calleesFirst(const HloModule& module) {
    std::vector<HloComputation*> order;
    std::unordered_set<const HloComputation*> visited;
    for (const auto& start : module.computations()) {
        if (!visited.insert(start.get()).second) continue;
        // (computation, callees not yet visited)
        std::vector<std::pair<HloComputation*, std::vector<HloComputation*>>> stack;
        auto callees = [](HloComputation* c) {
            std::vector<HloComputation*> out;
            for (const auto& instruction : c->instructions())
                for (const auto& attribute : instruction->calledComputationAttributes())
                    for (HloComputation* callee : attribute.computations)
                        if (callee) out.push_back(callee);
            return out;
        };
        stack.emplace_back(start.get(), callees(start.get()));
        while (!stack.empty()) {
            auto& [computation, pending] = stack.back();
            if (pending.empty()) {
                order.push_back(computation);
                stack.pop_back();
                continue;
            }
            HloComputation* next = pending.back();
            pending.pop_back();
            if (visited.insert(next).second) stack.emplace_back(next, callees(next));
        }
    }
    return order;
}

std::unordered_map<const HloInstruction*, HloInstruction*> cloneBodyInto(
    HloModule& module, HloComputation& into, const HloComputation& body,
    const std::vector<HloInstruction*>& operands, std::vector<HloInstruction*>* added) {
    std::unordered_map<const HloInstruction*, HloInstruction*> clones;
    for (int64_t i = 0; i < body.parameterCount(); ++i)
        clones[body.parameter(i)] = operands[static_cast<size_t>(i)];
    for (HloInstruction* original : body.postOrder()) {
        if (original->opcode() == HloOpcode::kParameter) continue;
        std::vector<HloInstruction*> cloneOperands;
        cloneOperands.reserve(original->operands().size());
        for (const HloInstruction* operand : original->operands())
            cloneOperands.push_back(clones.at(operand));
        HloInstruction* clone = into.addInstruction(original->cloneWithNewOperands(
            original->shape(), cloneOperands, module.uniqueInstructionName(original->name())));
        clones[original] = clone;
        if (added != nullptr) added->push_back(clone);
    }
    return clones;
}

Status placeNewComputations(HloModule& module,
                            const std::unordered_set<const HloComputation*>& existing) {
    std::vector<HloComputation*> order;
    std::unordered_set<const HloComputation*> placed;
    auto place = [&](auto&& self, HloComputation* computation) -> void {
        if (!placed.insert(computation).second) return;
        for (const auto& instruction : computation->instructions())
            for (HloComputation* called : instruction->calledComputations())
                if (!existing.count(called)) self(self, called);
        order.push_back(computation);
    };
    std::vector<HloComputation*> all;
    for (const auto& computation : module.computations()) all.push_back(computation.get());
    for (HloComputation* computation : all)
        if (existing.count(computation)) place(place, computation);
    for (HloComputation* computation : all) place(place, computation);
    return module.reorderComputations(order);
}

}  // namespace hloscope::passes
