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

ModuleRecord ModuleRecord::of(const HloModule& module, const ModuleRecord* previous) {
    ModuleRecord record;
    size_t total = 0;
    int64_t maxId = -1;
    for (const auto& computation : module.computations()) {
        total += computation->instructions().size();
        for (const auto& instruction : computation->instructions())
            maxId = std::max(maxId, instruction->uniqueId());
    }
    record.m_instructions.reserve(total);
    record.m_printOrder.reserve(total);
    const uint64_t now = module.mutationCount();
    for (const auto& computation : module.computations()) {
        const HloInstruction* fusion = computation->fusionInstruction();
        const int64_t fusionId = fusion ? fusion->uniqueId() : -1;
        for (const auto& instruction : computation->instructions()) {
            const bool isRoot = computation->root() == instruction.get();
            const int64_t id = instruction->uniqueId();
            record.m_printOrder.push_back(id);
            if (previous) {
                const std::shared_ptr<const InstructionRecord>* was = previous->slot(id);
                if (was && (*was)->instruction == instruction.get() &&
                    (*was)->madeAt >= instruction->changeStamp() &&
                    (*was)->madeAt >= computation->propertyStamp() && (*was)->isRoot == isRoot &&
                    (*was)->fusionId == fusionId) {
                    record.m_instructions.push_back(*was);
                    continue;
                }
            }
            auto r = std::make_shared<InstructionRecord>();
            r->id = id;
            r->name = instruction->name();
            r->computation = computation->name();
            r->opcode = instruction->opcode();
            r->shape = instruction->shape().toString(true);
            r->operands.reserve(instruction->operands().size());
            for (const HloInstruction* operand : instruction->operands())
                r->operands.push_back(operand->uniqueId());
            r->fusionId = fusionId;
            r->isRoot = isRoot;
            r->instruction = instruction.get();
            r->madeAt = now;
            record.m_instructions.push_back(std::move(r));
            ++record.m_made;
        }
    }
    // Ids are dense from the parser and the module's counter; an index by id is then
    // cheaper than a hash map, and walking it sorts the records.
    const bool dense = maxId >= 0 && maxId <= 8 * static_cast<int64_t>(total) + (1 << 20) &&
                       std::all_of(record.m_instructions.begin(), record.m_instructions.end(),
                                   [](const auto& r) { return r->id >= 0; });
    if (dense) {
        std::vector<int32_t> atId(static_cast<size_t>(maxId) + 1, -1);
        bool unique = true;
        for (size_t i = 0; i < record.m_instructions.size(); ++i) {
            int32_t& slot = atId[static_cast<size_t>(record.m_instructions[i]->id)];
            unique = unique && slot < 0;
            slot = static_cast<int32_t>(i);
        }
        if (unique) {
            std::vector<std::shared_ptr<const InstructionRecord>> sorted;
            sorted.reserve(record.m_instructions.size());
            record.m_byId.assign(atId.size(), -1);
            for (size_t id = 0; id < atId.size(); ++id)
                if (atId[id] >= 0) {
                    record.m_byId[id] = static_cast<int32_t>(sorted.size());
                    sorted.push_back(std::move(record.m_instructions[static_cast<size_t>(atId[id])]));
                }
            record.m_instructions = std::move(sorted);
            return record;
        }
    }
    std::stable_sort(record.m_instructions.begin(), record.m_instructions.end(),
                     [](const auto& a, const auto& b) { return a->id < b->id; });
    record.m_sparse.reserve(record.m_instructions.size());
    for (size_t i = 0; i < record.m_instructions.size(); ++i)
        record.m_sparse.emplace(record.m_instructions[i]->id, i);
    return record;
}

const std::shared_ptr<const InstructionRecord>* ModuleRecord::slot(int64_t id) const {
    if (m_byId.empty()) {
        auto it = m_sparse.find(id);
        return it == m_sparse.end() ? nullptr : &m_instructions[it->second];
    }
    if (id < 0 || id >= static_cast<int64_t>(m_byId.size())) return nullptr;
    const int32_t index = m_byId[static_cast<size_t>(id)];
    return index < 0 ? nullptr : &m_instructions[static_cast<size_t>(index)];
}

const InstructionRecord* ModuleRecord::find(int64_t id) const {
    const std::shared_ptr<const InstructionRecord>* r = slot(id);
    return r ? r->get() : nullptr;
}

int64_t ModuleDiff::layoutChangedCount() const {
    return std::count_if(shapeChanged.begin(), shapeChanged.end(),
                         [](const ShapeChange& c) { return c.layoutOnly; });
}

ModuleDiff diffModules(const ModuleRecord& before, const ModuleRecord& after) {
    ModuleDiff diff;
    // Lookups by id are constant time (ModuleRecord::find): no sets of ids.
    const auto removed = [&](int64_t id) { return before.find(id) && !after.find(id); };
    const auto added = [&](int64_t id) { return after.find(id) && !before.find(id); };
    for (const auto& record : before.instructions())
        if (!after.find(record->id)) diff.removed.push_back(itemOf(*record));
    for (const auto& record : after.instructions())
        if (!before.find(record->id)) diff.added.push_back(itemOf(*record));

    // Fused: a removed instruction whose name reappears inside a fused
    // computation among the added ones (names point into the records).
    std::unordered_map<std::string_view, const InstructionRecord*> addedFusedByName;
    addedFusedByName.reserve(diff.added.size());
    for (const auto& record : after.instructions())
        if (record->fusionId >= 0 && added(record->id))
            addedFusedByName.emplace(record->name, record.get());
    std::unordered_set<int64_t> fusedIds;
    if (!addedFusedByName.empty()) {
        for (const auto& record : before.instructions()) {
            const InstructionRecord& r = *record;
            if (r.fusionId >= 0 || !removed(r.id)) continue;
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
        if (!removed(oldId) || !after.find(newId) || fusedIds.count(oldId)) return false;
        if (!replacedPairs.insert(oldId).second) return true;
        diff.replaced.push_back({itemOf(*before.find(oldId)), itemOf(*after.find(newId))});
        return true;
    };
    for (const auto& record : after.instructions()) {
        const InstructionRecord& now = *record;
        const InstructionRecord* was = before.find(now.id);
        if (!was || was == record.get()) continue;  // absent before, or the same record
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
    std::unordered_map<std::string_view, int64_t> oldRoots;
    for (const auto& r : before.instructions())
        if (r->isRoot) oldRoots[r->computation] = r->id;
    for (const auto& record : after.instructions()) {
        const InstructionRecord& r = *record;
        if (!r.isRoot) continue;
        auto it = oldRoots.find(r.computation);
        if (it != oldRoots.end() && it->second != r.id) noteReplacement(it->second, r.id);
    }
    return diff;
}

}  // namespace hloscope
