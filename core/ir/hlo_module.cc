#include "core/ir/hlo_module.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/support/pointer_index.h"

namespace hloscope {

HloModule::HloModule(std::string name) : m_name(std::move(name)) {}

HloModule::~HloModule() = default;

std::unique_ptr<HloModule> HloModule::clone() const {
    auto copy = std::make_unique<HloModule>(m_name);
    std::unordered_map<const HloComputation*, HloComputation*> computations;
    std::unordered_map<const HloInstruction*, HloInstruction*> instructions;
    computations.reserve(m_computations.size());
    instructions.reserve(static_cast<size_t>(instructionCount()));
    computations.emplace(nullptr, nullptr);
    instructions.emplace(nullptr, nullptr);

    // Computations and instructions first, edges after: an instruction may be listed before
    // its operands (control edges, or a module whose text order is not a post order).
    for (const auto& computation : m_computations) {
        auto computationCopy = std::make_unique<HloComputation>(computation->name());
        computationCopy->setExecutionThread(computation->executionThread());
        computationCopy->m_parent = copy.get();
        for (const auto& instruction : computation->instructions()) {
            auto instructionCopy =
                instruction->cloneWithNewOperands(instruction->shape(), {}, instruction->name());
            instructionCopy->setUniqueId(instruction->uniqueId());
            instructionCopy->setParent(computationCopy.get());
            instructions.emplace(instruction.get(), instructionCopy.get());
            computationCopy->m_instructions.push_back(std::move(instructionCopy));
        }
        computations.emplace(computation.get(), computationCopy.get());
        copy->m_computations.push_back(std::move(computationCopy));
    }
    // Every edge stays inside the module; one that does not is a programming error.
    const auto mapInstruction = [&](const HloInstruction* instruction) -> HloInstruction* {
        auto it = instructions.find(instruction);
        assert(it != instructions.end() && "an edge leaves the module");
        return it == instructions.end() ? nullptr : it->second;
    };
    const auto mapComputation = [&](const HloComputation* computation) -> HloComputation* {
        auto it = computations.find(computation);
        assert(it != computations.end() && "a called computation is not in the module");
        return it == computations.end() ? nullptr : it->second;
    };
    for (size_t c = 0; c < m_computations.size(); ++c) {
        const HloComputation& computation = *m_computations[c];
        HloComputation& computationCopy = *copy->m_computations[c];
        computationCopy.m_root = mapInstruction(computation.root());
        computationCopy.m_fusionInstruction = mapInstruction(computation.fusionInstruction());
        computationCopy.m_parameters.reserve(computation.m_parameters.size());
        for (const HloInstruction* parameter : computation.m_parameters)
            computationCopy.m_parameters.push_back(mapInstruction(parameter));
        for (size_t i = 0; i < computation.m_instructions.size(); ++i) {
            HloInstruction& instructionCopy = *computationCopy.m_instructions[i];
            instructionCopy.copyEdgesFrom(*computation.m_instructions[i], mapInstruction);
            for (CalledComputationAttribute& attribute :
                 instructionCopy.mutableCalledComputationAttributes())
                for (HloComputation*& called : attribute.computations)
                    called = mapComputation(called);
        }
    }
    copy->m_entry = mapComputation(m_entry);
    copy->m_nextUniqueId = m_nextUniqueId;
    copy->m_nameCounter = m_nameCounter;
    copy->m_entryComputationLayout = m_entryComputationLayout;
    copy->m_isScheduled = m_isScheduled;
    copy->m_replicaCount = m_replicaCount;
    copy->m_numPartitions = m_numPartitions;
    copy->m_aliases = m_aliases;
    copy->m_hasAliasAttribute = m_hasAliasAttribute;
    copy->m_bufferDonors = m_bufferDonors;
    copy->m_hasBufferDonorAttribute = m_hasBufferDonorAttribute;
    copy->m_attributes = m_attributes;
    copy->m_stackFrames = m_stackFrames;
    return copy;
}

HloComputation* HloModule::addComputation(std::unique_ptr<HloComputation> computation,
                                          bool isEntry) {
    noteMutation();
    HloComputation* raw = computation.get();
    raw->setParent(this);
    raw->notePropertyMutation();
    for (const auto& instruction : raw->instructions()) {
        if (instruction->uniqueId() < 0) instruction->setUniqueId(nextUniqueId());
        instruction->noteMutation();
    }
    if (m_usedNamesBuilt) {
        m_usedNames.insert(raw->name());
        for (const auto& instruction : raw->instructions()) m_usedNames.insert(instruction->name());
    }
    m_computations.push_back(std::move(computation));
    if (isEntry) m_entry = raw;
    return raw;
}

Status HloModule::removeComputation(HloComputation* computation) {
    noteMutation();
    for (const auto& other : m_computations) {
        for (const auto& instruction : other->instructions()) {
            // calledComputationAttributes(), not calledComputations(): no
            // allocation per instruction (this loop runs over the module).
            for (const auto& attribute : instruction->calledComputationAttributes()) {
                for (const HloComputation* called : attribute.computations) {
                    if (called == computation)
                        return failedPrecondition("cannot remove computation " +
                                                  computation->name() + ": %" +
                                                  instruction->name() + " calls it");
                }
            }
        }
    }
    if (computation == m_entry)
        return failedPrecondition("cannot remove the entry computation " + computation->name());
    auto it = std::find_if(m_computations.begin(), m_computations.end(),
                           [&](const auto& p) { return p.get() == computation; });
    if (it == m_computations.end())
        return notFound("computation " + computation->name() + " is not in module " + m_name);
    m_computations.erase(it);
    return Status::ok();
}

Status HloModule::removeComputations(std::span<HloComputation* const> computations) {
    noteMutation();
    if (computations.empty()) return Status::ok();
    PointerIndex doomed(computations.size());
    for (const HloComputation* computation : computations) doomed.insert(computation, 0);
    auto isDoomed = [&](const HloComputation* c) { return doomed.find(c) != PointerIndex::kAbsent; };
    for (const HloComputation* computation : computations) {
        if (computation == m_entry)
            return failedPrecondition("cannot remove the entry computation " + computation->name());
        if (computation->parent() != this)
            return notFound("computation " + computation->name() + " is not in module " + m_name);
    }
    for (const auto& other : m_computations) {
        if (isDoomed(other.get())) continue;
        for (const auto& instruction : other->instructions())
            for (const auto& attribute : instruction->calledComputationAttributes())
                for (const HloComputation* called : attribute.computations)
                    if (called && isDoomed(called))
                        return failedPrecondition("cannot remove computation " + called->name() +
                                                  ": %" + instruction->name() + " calls it");
    }
    std::erase_if(m_computations, [&](const auto& p) { return isDoomed(p.get()); });
    return Status::ok();
}

Status HloModule::reorderComputations(std::span<HloComputation* const> order) {
    noteMutation();
    if (order.size() != m_computations.size())
        return invalidArgument("reorderComputations: expected " +
                               std::to_string(m_computations.size()) + " computations, got " +
                               std::to_string(order.size()));
    std::unordered_map<const HloComputation*, size_t> position;
    position.reserve(order.size());
    for (size_t i = 0; i < order.size(); ++i)
        if (!position.emplace(order[i], i).second)
            return invalidArgument("reorderComputations: a computation appears twice");
    std::vector<std::unique_ptr<HloComputation>> reordered(m_computations.size());
    for (auto& computation : m_computations) {
        auto it = position.find(computation.get());
        if (it == position.end())
            return invalidArgument("reorderComputations: " + computation->name() + " is missing");
        reordered[it->second] = std::move(computation);
    }
    m_computations = std::move(reordered);
    return Status::ok();
}

HloComputation* HloModule::findComputation(std::string_view name) const {
    for (const auto& computation : m_computations)
        if (computation->name() == name) return computation.get();
    return nullptr;
}

int64_t HloModule::instructionCount() const {
    int64_t count = 0;
    for (const auto& computation : m_computations) count += computation->instructionCount();
    return count;
}

void HloModule::renumber() {
    noteMutation();
    m_nextUniqueId = 0;
    for (const auto& computation : m_computations)
        for (const auto& instruction : computation->instructions()) {
            instruction->setUniqueId(m_nextUniqueId++);
            instruction->noteMutation();  // records keyed by id are stale
        }
}

namespace {

// "add.12" -> "add"; names without a numeric suffix are their own base.
std::string_view nameBase(std::string_view name) {
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot + 1 == name.size()) return name;
    for (size_t i = dot + 1; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return name;
    return name.substr(0, dot);
}

}  // namespace

std::string HloModule::uniqueInstructionName(std::string_view base) {
    if (!m_usedNamesBuilt) {
        size_t count = m_computations.size();
        for (const auto& computation : m_computations) count += computation->instructions().size();
        m_usedNames.reserve(count + count / 2);
        for (const auto& computation : m_computations) {
            m_usedNames.insert(computation->name());
            for (const auto& instruction : computation->instructions())
                m_usedNames.insert(instruction->name());
        }
        m_usedNamesBuilt = true;
    }
    const std::string stem(nameBase(base.empty() ? std::string_view("instruction") : base));
    // Computations added since register their names (addComputation);
    // instructions take theirs from here.
    for (;;) {
        std::string name = stem + "." + std::to_string(++m_nameCounter);
        if (m_usedNames.insert(name)) return name;
    }
}

std::string HloModule::uniqueComputationName(std::string_view base) {
    return uniqueInstructionName(base);
}

bool HloModule::structurallyEqual(const HloModule& other, std::string* whyNot) const {
    auto fail = [&](std::string reason) {
        if (whyNot) *whyNot = std::move(reason);
        return false;
    };
    if (m_name != other.m_name) return fail("module names differ: " + m_name + " vs " + other.m_name);
    if (m_entryComputationLayout != other.m_entryComputationLayout)
        return fail("entry_computation_layout differs");
    if (m_isScheduled != other.m_isScheduled) return fail("is_scheduled differs");
    if (m_replicaCount != other.m_replicaCount) return fail("replica_count differs");
    if (m_numPartitions != other.m_numPartitions) return fail("num_partitions differs");
    if (m_aliases != other.m_aliases || m_hasAliasAttribute != other.m_hasAliasAttribute)
        return fail("input_output_alias differs");
    if (m_bufferDonors != other.m_bufferDonors ||
        m_hasBufferDonorAttribute != other.m_hasBufferDonorAttribute)
        return fail("buffer_donor differs");
    if (m_attributes != other.m_attributes) return fail("module attributes differ");
    if (m_stackFrames != other.m_stackFrames) return fail("stack frame tables differ");
    if (m_computations.size() != other.m_computations.size())
        return fail("computation counts differ: " + std::to_string(m_computations.size()) +
                    " vs " + std::to_string(other.m_computations.size()));
    for (size_t c = 0; c < m_computations.size(); ++c) {
        const HloComputation& a = *m_computations[c];
        const HloComputation& b = *other.m_computations[c];
        if (a.name() != b.name())
            return fail("computation " + std::to_string(c) + " names differ: " + a.name() +
                        " vs " + b.name());
        if (a.isEntry() != b.isEntry()) return fail("entry differs at " + a.name());
        if (a.executionThread() != b.executionThread())
            return fail("execution thread differs in " + a.name());
        if (a.instructionCount() != b.instructionCount())
            return fail("instruction counts differ in " + a.name());
        if ((a.root() == nullptr) != (b.root() == nullptr) ||
            (a.root() && a.root()->name() != b.root()->name()))
            return fail("roots differ in " + a.name());
        for (size_t i = 0; i < a.instructions().size(); ++i) {
            const HloInstruction& x = *a.instructions()[i];
            const HloInstruction& y = *b.instructions()[i];
            if (!x.identicalTo(y))
                return fail("instruction %" + x.name() + " in " + a.name() + " differs from %" +
                            y.name());
        }
    }
    return true;
}

std::optional<HloCallCycle> findCallCycle(std::span<const std::unique_ptr<HloComputation>> computations) {
    // Depth-first with an explicit stack (a deep but acyclic call chain must not overflow the
    // caller's stack): 1 = on the current path, 2 = done.
    using Calls = std::vector<std::pair<const HloInstruction*, const HloComputation*>>;
    struct Frame {
        const HloComputation* computation;
        Calls calls;
        size_t next = 0;
    };
    auto callsOf = [](const HloComputation& computation) {
        Calls calls;
        for (const auto& instruction : computation.instructions())
            for (const CalledComputationAttribute& attribute : instruction->calledComputationAttributes())
                for (const HloComputation* called : attribute.computations)
                    if (called) calls.emplace_back(instruction.get(), called);
        return calls;
    };
    std::unordered_map<const HloComputation*, int> state;
    for (const auto& start : computations) {
        if (state[start.get()] != 0) continue;
        std::vector<Frame> stack;
        state[start.get()] = 1;
        stack.push_back({start.get(), callsOf(*start)});
        while (!stack.empty()) {
            Frame& frame = stack.back();
            if (frame.next == frame.calls.size()) {
                state[frame.computation] = 2;
                stack.pop_back();
                continue;
            }
            const auto [instruction, called] = frame.calls[frame.next++];
            int& calledState = state[called];
            if (calledState == 2) continue;
            if (calledState == 1) {
                size_t from = 0;
                while (stack[from].computation != called) ++from;
                HloCallCycle cycle{instruction, called, {}};
                for (size_t i = from; i < stack.size(); ++i) cycle.path += stack[i].computation->name() + " -> ";
                cycle.path += called->name();
                return cycle;
            }
            calledState = 1;
            stack.push_back({called, callsOf(*called)});
        }
    }
    return std::nullopt;
}

}  // namespace hloscope
