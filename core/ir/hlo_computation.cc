#include "core/ir/hlo_computation.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/hlo_module.h"
#include "core/support/pointer_index.h"

namespace hloscope {

HloComputation::HloComputation(std::string name) : m_name(std::move(name)) {}

HloComputation::~HloComputation() = default;

bool HloComputation::isEntry() const {
    return m_parent != nullptr && m_parent->entryComputation() == this;
}

void HloComputation::noteMutation() {
    if (!m_parent) return;
    m_parent->noteMutation();
    m_changeStamp = m_parent->mutationCount();
}

HloInstruction* HloComputation::addInstruction(std::unique_ptr<HloInstruction> instruction) {
    noteMutation();
    HloInstruction* raw = instruction.get();
    raw->setParent(this);
    if (m_parent != nullptr) {
        if (raw->uniqueId() < 0) raw->setUniqueId(m_parent->nextUniqueId());
        m_parent->noteName(raw->name());
    }
    raw->noteMutation();
    if (raw->opcode() == HloOpcode::kParameter && raw->parameterNumber() >= 0) {
        auto number = static_cast<size_t>(raw->parameterNumber());
        // Parameter numbers are bounded by the instruction count in practice;
        // a huge number (malformed input) must not allocate a huge table.
        if (number < m_instructions.size() + 1 + (1u << 16)) {
            if (m_parameters.size() <= number) m_parameters.resize(number + 1, nullptr);
            if (m_parameters[number] == nullptr) m_parameters[number] = raw;
        }
    }
    m_instructions.push_back(std::move(instruction));
    return raw;
}

Status HloComputation::removeInstruction(HloInstruction* instruction) {
    noteMutation();
    if (instruction->userCount() != 0)
        return failedPrecondition("cannot remove %" + instruction->name() + " from " + m_name +
                                  ": it still has " + std::to_string(instruction->userCount()) +
                                  " user(s)");
    if (instruction == m_root)
        return failedPrecondition("cannot remove %" + instruction->name() +
                                  ": it is the root of " + m_name);
    auto it = std::find_if(m_instructions.begin(), m_instructions.end(),
                           [&](const auto& p) { return p.get() == instruction; });
    if (it == m_instructions.end())
        return notFound("%" + instruction->name() + " is not in computation " + m_name);
    instruction->removeAllOperands();
    instruction->dropAllControlDependencies();
    if (instruction->opcode() == HloOpcode::kParameter) {
        for (auto& p : m_parameters)
            if (p == instruction) p = nullptr;
        while (!m_parameters.empty() && m_parameters.back() == nullptr) m_parameters.pop_back();
    }
    m_nameIndex.clear();
    m_indexedCount = 0;
    m_instructions.erase(it);
    return Status::ok();
}

Status HloComputation::removeInstructions(std::span<HloInstruction* const> instructions) {
    noteMutation();
    if (instructions.empty()) return Status::ok();
    PointerIndex doomed(instructions.size());
    for (HloInstruction* instruction : instructions) doomed.insert(instruction, 0);
    for (HloInstruction* instruction : instructions) {
        if (instruction->parent() != this)
            return notFound("%" + instruction->name() + " is not in computation " + m_name);
        if (instruction == m_root)
            return failedPrecondition("cannot remove %" + instruction->name() +
                                      ": it is the root of " + m_name);
        for (HloInstruction* user : instruction->users())
            if (doomed.find(user) == PointerIndex::kAbsent)
                return failedPrecondition("cannot remove %" + instruction->name() + " from " +
                                          m_name + ": %" + user->name() + " still uses it");
    }
    for (HloInstruction* instruction : instructions) {
        instruction->removeAllOperands();
        instruction->dropAllControlDependencies();
        if (instruction->opcode() == HloOpcode::kParameter)
            for (auto& p : m_parameters)
                if (p == instruction) p = nullptr;
    }
    while (!m_parameters.empty() && m_parameters.back() == nullptr) m_parameters.pop_back();
    m_nameIndex.clear();
    m_indexedCount = 0;
    std::erase_if(m_instructions,
                  [&](const auto& p) { return doomed.find(p.get()) != PointerIndex::kAbsent; });
    return Status::ok();
}

Status HloComputation::setInstructionOrder(std::span<HloInstruction* const> order) {
    noteMutation();
    if (order.size() != m_instructions.size())
        return invalidArgument("instruction order for " + m_name + " has " +
                               std::to_string(order.size()) + " entries, the computation " +
                               std::to_string(m_instructions.size()));
    PointerIndex slot(m_instructions.size());
    for (size_t i = 0; i < m_instructions.size(); ++i)
        slot.insert(m_instructions[i].get(), static_cast<uint32_t>(i));
    std::vector<size_t> indices;
    indices.reserve(order.size());
    std::vector<bool> taken(m_instructions.size(), false);
    for (HloInstruction* instruction : order) {
        const uint32_t at = slot.find(instruction);
        if (at == PointerIndex::kAbsent || taken[at])
            return invalidArgument("instruction order for " + m_name + " names %" +
                                   (instruction ? instruction->name() : std::string("null")) +
                                   " twice or from elsewhere");
        taken[at] = true;
        indices.push_back(at);
    }
    std::vector<std::unique_ptr<HloInstruction>> reordered;
    reordered.reserve(m_instructions.size());
    for (size_t index : indices) reordered.push_back(std::move(m_instructions[index]));
    m_instructions = std::move(reordered);
    return Status::ok();
}

Status HloComputation::replaceInstruction(HloInstruction* old, HloInstruction* replacement) {
    noteMutation();
    if (old == replacement) return Status::ok();
    old->replaceAllUsesWith(replacement);
    if (m_root == old) m_root = replacement;
    return removeInstruction(old);
}

HloInstruction* HloComputation::findInstruction(std::string_view name) const {
    constexpr size_t kLinearLimit = 16;
    if (m_instructions.size() <= kLinearLimit) {
        for (const auto& instruction : m_instructions)
            if (instruction->name() == name) return instruction.get();
        return nullptr;
    }
    // Names may change (setName) while the index exists: validate hits and
    // rebuild on a miss.
    auto lookup = [&]() -> HloInstruction* {
        auto it = m_nameIndex.find(name);
        if (it != m_nameIndex.end() && it->second->name() == name) return it->second;
        return nullptr;
    };
    if (m_indexedCount != m_instructions.size()) {
        for (size_t i = m_indexedCount; i < m_instructions.size(); ++i)
            m_nameIndex.emplace(m_instructions[i]->name(), m_instructions[i].get());
        m_indexedCount = m_instructions.size();
    }
    if (HloInstruction* hit = lookup()) return hit;
    m_nameIndex.clear();
    for (const auto& instruction : m_instructions)
        m_nameIndex.emplace(instruction->name(), instruction.get());
    return lookup();
}

std::vector<HloInstruction*> HloComputation::postOrder() const {
    std::vector<HloInstruction*> order;
    order.reserve(m_instructions.size());
    // One table: an instruction of this computation maps to its visited flag's index; an
    // operand that is not in it belongs elsewhere (a fused computation's caller) and is skipped.
    PointerIndex index(m_instructions.size());
    for (const auto& instruction : m_instructions)
        index.insert(instruction.get(), static_cast<uint32_t>(index.size()));
    std::vector<char> visited(m_instructions.size(), 0);
    // Iterative DFS; roots first in insertion order so the result is
    // deterministic and close to the text order.
    std::vector<std::pair<HloInstruction*, size_t>> stack;
    for (size_t i = 0; i < m_instructions.size(); ++i) {
        if (visited[i]) continue;
        stack.push_back({m_instructions[i].get(), 0});
        visited[i] = 1;
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            const size_t operandCount = node->operands().size();
            const size_t total = operandCount + node->controlPredecessors().size();
            if (next < total) {
                HloInstruction* dep = next < operandCount
                                          ? node->operands()[next]
                                          : node->controlPredecessors()[next - operandCount];
                ++next;
                const uint32_t found = index.find(dep);
                if (found != PointerIndex::kAbsent && !visited[found]) {
                    visited[found] = 1;
                    stack.push_back({dep, 0});
                }
                continue;
            }
            order.push_back(node);
            stack.pop_back();
        }
    }
    return order;
}

Shape HloComputation::resultShape() const { return m_root ? m_root->shape() : Shape(); }

}  // namespace hloscope
