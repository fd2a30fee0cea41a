// Structured differences between two states of a module, keyed by the
// instructions' unique ids (stable across passes: a pass that modifies an
// instruction in place keeps its id; new instructions get new ids).
//
// ModuleRecord is a compact, immutable description of one state (one
// InstructionRecord per instruction); diffModules() compares two records:
//   added / removed     instructions that appear / disappear;
//   replaced            a removed instruction whose uses (or root role) went
//                       to another instruction, new or existing (old -> new);
//   rewired             an instruction present in both whose operand list
//                       changed (and that is not explained by a replacement);
//   shape_changed       same instruction, different shape; layout_changed when
//                       only the layout differs;
//   fused               a removed instruction that reappears (same name) in a
//                       fused computation: old -> the fusion instruction.
// The pass's named rewrites (RewriteEvent) are attached by the runner.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/pipeline/hlo_pass.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

struct InstructionRecord {
    int64_t id = -1;
    std::string name;
    std::string computation;
    HloOpcode opcode = HloOpcode::kParameter;
    std::string shape;  // with layout
    std::vector<int64_t> operands;  // unique ids
    int64_t fusionId = -1;  // the fusion instruction whose computation holds it
    bool isRoot = false;
    // What it was made from: the instruction and the module's mutation count then.
    const HloInstruction* instruction = nullptr;
    uint64_t madeAt = 0;
};

class ModuleRecord {
public:
    // With `previous`, a record of an earlier state of the same module, the records of
    // instructions that did not change since (HloInstruction::changeStamp) are shared
    // with it rather than made again, and diffModules skips them.
    static ModuleRecord of(const HloModule& module, const ModuleRecord* previous = nullptr);

    // Sorted by id.
    const std::vector<std::shared_ptr<const InstructionRecord>>& instructions() const {
        return m_instructions;
    }
    const InstructionRecord* find(int64_t id) const;
    // Unique ids in the order the printer writes the instructions (what a
    // snapshot needs to restore identities after re-parsing its text).
    const std::vector<int64_t>& idsInPrintOrder() const { return m_printOrder; }
    // Records made anew by of() (the rest were shared with `previous`).
    int64_t madeCount() const { return m_made; }

private:
    const std::shared_ptr<const InstructionRecord>* slot(int64_t id) const;

    std::vector<std::shared_ptr<const InstructionRecord>> m_instructions;  // sorted by id
    std::vector<int32_t> m_byId;  // id -> index into m_instructions, -1 for none
    std::unordered_map<int64_t, size_t> m_sparse;  // used instead when ids are sparse
    std::vector<int64_t> m_printOrder;
    int64_t m_made = 0;
};

struct DiffItem {
    int64_t id = -1;
    std::string name;
    std::string computation;
    std::string opcode;
};

struct ModuleDiff {
    struct Replacement {
        DiffItem before, after;
    };
    struct Rewire {
        DiffItem user;
        int64_t operandIndex = -1;
        DiffItem before, after;  // before.id == -1: an operand was appended
    };
    struct ShapeChange {
        DiffItem instruction;
        std::string before, after;
        bool layoutOnly = false;
    };
    struct Fused {
        DiffItem instruction;  // as it was before
        DiffItem fusion;       // the fusion instruction it moved into
    };

    std::vector<DiffItem> added;
    std::vector<DiffItem> removed;
    std::vector<Replacement> replaced;
    std::vector<Rewire> rewired;
    std::vector<ShapeChange> shapeChanged;  // layoutOnly entries are "layout changed"
    std::vector<Fused> fused;
    std::vector<RewriteEvent> rewrites;

    bool empty() const {
        return added.empty() && removed.empty() && replaced.empty() && rewired.empty() &&
               shapeChanged.empty() && fused.empty();
    }
    int64_t layoutChangedCount() const;
};

ModuleDiff diffModules(const ModuleRecord& before, const ModuleRecord& after);

}  // namespace hloscope
