// HloComputation: a named list of instructions with parameters and a root,
// owned by an HloModule. Instructions are kept in the order they were added
// (for parsed modules: text order, which for scheduled modules is the
// schedule).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/support/status.h"

namespace hloscope {

class HloComputation {
public:
    explicit HloComputation(std::string name);
    ~HloComputation();
    HloComputation(const HloComputation&) = delete;
    HloComputation& operator=(const HloComputation&) = delete;

    const std::string& name() const { return m_name; }
    void setName(std::string name) {
        notePropertyMutation();
        m_name = std::move(name);
    }

    HloModule* parent() const { return m_parent; }
    void setParent(HloModule* module) { m_parent = module; }

    bool isEntry() const;

    // Takes ownership; parameters are also indexed by parameterNumber().
    // Returns the added instruction.
    HloInstruction* addInstruction(std::unique_ptr<HloInstruction> instruction);
    // Removes an instruction that has no users (and no control edges);
    // returns an error naming it otherwise.
    Status removeInstruction(HloInstruction* instruction);
    // Removes a set of instructions at once (linear time): their operand and
    // control edges are dropped first, so they may use each other; none may
    // have users outside the set or be the root.
    Status removeInstructions(std::span<HloInstruction* const> instructions);
    // Reorders the instruction list (the print order, and the schedule of a
    // scheduled module) to `order`, which must hold each instruction of the
    // computation exactly once (linear time).
    Status setInstructionOrder(std::span<HloInstruction* const> order);
    // Redirects every use of `old` (and the root) to `replacement`, then
    // removes `old`.
    Status replaceInstruction(HloInstruction* old, HloInstruction* replacement);

    // Instructions in insertion order.
    const std::vector<std::unique_ptr<HloInstruction>>& instructions() const {
        return m_instructions;
    }
    int64_t instructionCount() const { return static_cast<int64_t>(m_instructions.size()); }

    HloInstruction* root() const { return m_root; }
    void setRoot(HloInstruction* root) {
        noteMutation();
        m_root = root;
    }

    // parameter(N) instructions by N (nullptr gaps are possible while
    // building; the verifier rejects them).
    const std::vector<HloInstruction*>& parameters() const { return m_parameters; }
    int64_t parameterCount() const { return static_cast<int64_t>(m_parameters.size()); }
    HloInstruction* parameter(int64_t i) const { return m_parameters[static_cast<size_t>(i)]; }

    // Looks up by name (linear for small computations, indexed for large).
    HloInstruction* findInstruction(std::string_view name) const;

    // Operands-before-users order (control predecessors too), deterministic.
    std::vector<HloInstruction*> postOrder() const;

    // For fusion computations: the fusion instruction that calls this one.
    HloInstruction* fusionInstruction() const { return m_fusionInstruction; }
    void setFusionInstruction(HloInstruction* fusion) {
        notePropertyMutation();
        m_fusionInstruction = fusion;
    }

    // `execution_thread="..."` annotations of async computations, verbatim
    // (empty when absent).
    const std::string& executionThread() const { return m_executionThread; }
    void setExecutionThread(std::string thread) {
        notePropertyMutation();
        m_executionThread = std::move(thread);
    }

    // The signature `(p0: f32[2], p1: s32[]) -> f32[2]` as printed.
    Shape resultShape() const;

    // Counts a change of this computation, or of one of its instructions, in its module's
    // mutation count (HloModule::mutationCount) and stamps the computation with it.
    void noteMutation();
    // The module's mutation count at the last change of the computation or anything in it
    // (HloInstruction::changeStamp).
    uint64_t changeStamp() const { return m_changeStamp; }
    // The count at the last change of what its instructions see of the computation as a
    // whole: its name, fusion instruction, execution thread, or its addition to a module.
    uint64_t propertyStamp() const { return m_propertyStamp; }
    // noteMutation() for those properties.
    void notePropertyMutation() {
        noteMutation();
        m_propertyStamp = m_changeStamp;
    }

private:
    friend class HloModule;  // clone() copies the parameter table as it is

    std::string m_name;
    HloModule* m_parent = nullptr;
    uint64_t m_changeStamp = 0;
    uint64_t m_propertyStamp = 0;
    HloInstruction* m_root = nullptr;
    HloInstruction* m_fusionInstruction = nullptr;
    std::string m_executionThread;
    std::vector<std::unique_ptr<HloInstruction>> m_instructions;
    std::vector<HloInstruction*> m_parameters;
    mutable std::unordered_map<std::string_view, HloInstruction*> m_nameIndex;
    mutable size_t m_indexedCount = 0;
};

}  // namespace hloscope
