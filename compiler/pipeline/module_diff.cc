#include "compiler/pipeline/module_diff.h"

#include <algorithm>
#include <unordered_set>

namespace hloscope {
namespace {

DiffItem itemOf(const InstructionRecord& r) {
    return DiffItem{r.id, r.name, r.computation, std::string(hloOpcodeString(r.opcode))};
}

// "f32[2,3]{1,0}" -> "f32[2,3]" (drops every {...} layout group).
std::string withoutLayouts(const std::string& shape) {
    std::string out;
    int depth = 0;
    for (char c : shape) {
        if (c == '{') ++depth;
        if (depth == 0) out += c;
        if (c == '}' && depth > 0) --depth;
    }
    return out;
}

}  // namespace

ModuleRecord ModuleRecord::of(const HloModule& module) {
    ModuleRecord record;
    size_t total = 0;
    for (const auto& computation : module.computations()) total += computation->instructions().size();
    record.m_instructions.reserve(total);
    record.m_printOrder.reserve(total);
    for (const auto& computation : module.computations()) {
        const HloInstruction* fusion = computation->fusionInstruction();
        for (const auto& instruction : computation->instructions()) {
            InstructionRecord r;
            r.id = instruction->uniqueId();
            r.name = instruction->name();
            r.computation = computation->name();
            r.opcode = instruction->opcode();
            r.shape = instruction->shape().toString(true);
            r.operands.reserve(instruction->operands().size());
            for (const HloInstruction* operand : instruction->operands())
                r.operands.push_back(operand->uniqueId());
            r.fusionId = fusion ? fusion->uniqueId() : -1;
            r.isRoot = computation->root() == instruction.get();
            record.m_printOrder.push_back(r.id);
            record.m_instructions.push_back(std::move(r));
        }
    }
    std::sort(record.m_instructions.begin(), record.m_instructions.end(),
              [](const InstructionRecord& a, const InstructionRecord& b) { return a.id < b.id; });
    record.m_index.reserve(record.m_instructions.size());
    for (size_t i = 0; i < record.m_instructions.size(); ++i)
        record.m_index.emplace(record.m_instructions[i].id, i);
    return record;
}

const InstructionRecord* ModuleRecord::find(int64_t id) const {
    auto it = m_index.find(id);
    return it == m_index.end() ? nullptr : &m_instructions[it->second];
}

int64_t ModuleDiff::layoutChangedCount() const {
    return std::count_if(shapeChanged.begin(), shapeChanged.end(),
                         [](const ShapeChange& c) { return c.layoutOnly; });
}

ModuleDiff diffModules(const ModuleRecord& before, const ModuleRecord& after) {
    ModuleDiff diff;
    std::unordered_set<int64_t> removedIds, addedIds;
    for (const InstructionRecord& r : before.instructions())
        if (!after.find(r.id)) {
            diff.removed.push_back(itemOf(r));
            removedIds.insert(r.id);
        }
    for (const InstructionRecord& r : after.instructions())
        if (!before.find(r.id)) {
            diff.added.push_back(itemOf(r));
            addedIds.insert(r.id);
        }

    // Fused: a removed instruction whose name reappears inside a fused
    // computation among the added ones.
    std::unordered_map<std::string, const InstructionRecord*> addedFusedByName;
    for (const InstructionRecord& r : after.instructions())
        if (addedIds.count(r.id) && r.fusionId >= 0) addedFusedByName.emplace(r.name, &r);
    std::unordered_set<int64_t> fusedIds;
    if (!addedFusedByName.empty()) {
        for (const InstructionRecord& r : before.instructions()) {
            if (!removedIds.count(r.id) || r.fusionId >= 0) continue;
            auto it = addedFusedByName.find(r.name);
            if (it == addedFusedByName.end()) continue;
            const InstructionRecord* fusion = after.find(it->second->fusionId);
            if (!fusion) continue;
            diff.fused.push_back({itemOf(r), itemOf(*fusion)});
            fusedIds.insert(r.id);
        }
    }

    // Replacements and rewiring, from the operand lists of instructions
    // present in both states, and from computation roots.
    std::unordered_set<int64_t> replacedPairs;  // before id (one replacement each)
    auto noteReplacement = [&](int64_t oldId, int64_t newId) {
        if (!removedIds.count(oldId) || !after.find(newId) || fusedIds.count(oldId)) return false;
        if (!replacedPairs.insert(oldId).second) return true;
        diff.replaced.push_back({itemOf(*before.find(oldId)), itemOf(*after.find(newId))});
        return true;
    };
    for (const InstructionRecord& now : after.instructions()) {
        const InstructionRecord* was = before.find(now.id);
        if (!was) continue;
        if (was->shape != now.shape) {
            const bool layoutOnly = withoutLayouts(was->shape) == withoutLayouts(now.shape);
            diff.shapeChanged.push_back({itemOf(now), was->shape, now.shape, layoutOnly});
        }
        if (was->operands == now.operands) continue;
        const size_t n = std::max(was->operands.size(), now.operands.size());
        for (size_t i = 0; i < n; ++i) {
            const int64_t oldId = i < was->operands.size() ? was->operands[i] : -1;
            const int64_t newId = i < now.operands.size() ? now.operands[i] : -1;
            if (oldId == newId) continue;
            if (oldId >= 0 && newId >= 0 && noteReplacement(oldId, newId)) continue;
            ModuleDiff::Rewire rewire;
            rewire.user = itemOf(now);
            rewire.operandIndex = static_cast<int64_t>(i);
            if (oldId >= 0) {
                if (const InstructionRecord* o = before.find(oldId)) rewire.before = itemOf(*o);
            }
            if (newId >= 0) {
                if (const InstructionRecord* o = after.find(newId)) rewire.after = itemOf(*o);
            }
            diff.rewired.push_back(std::move(rewire));
        }
    }
    // Roots: a removed root replaced by an added instruction.
    std::unordered_map<std::string, int64_t> oldRoots;
    for (const InstructionRecord& r : before.instructions())
        if (r.isRoot) oldRoots[r.computation] = r.id;
    for (const InstructionRecord& r : after.instructions()) {
        if (!r.isRoot) continue;
        auto it = oldRoots.find(r.computation);
        if (it != oldRoots.end() && it->second != r.id) noteReplacement(it->second, r.id);
    }
    return diff;
}

}  // namespace hloscope
