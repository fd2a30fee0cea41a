// Internals of AlgebraicSimplifierPass shared by its rule files:
// algebraic_simplifier.cc (driver, constant classification),
// algebraic_simplifier_elementwise.cc (identities, convert),
// algebraic_simplifier_shape.cc (reshape, transpose, broadcast, slice,
// concatenate, pad, reduce, copy), algebraic_simplifier_dot.cc (dot).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"

namespace hloscope::simplifier {

// What every element of a constant (or a broadcast of a constant) is.
struct ConstantFacts {
    bool known = false;          // a readable constant
    bool additiveIdentity = false;  // x + c == x exactly: ints 0, floats -0.0
    bool subtractiveIdentity = false;  // x - c == x exactly: ints 0, floats +0.0
    bool one = false;            // ints 1, floats 1.0 (not complex, not pred)
    bool zeroBits = false;       // pred false, ints 0 (not floats)
    bool allOnesBits = false;    // pred true, ints with every bit set
};

// One rule's result: `replacement` replaces the instruction (it has exactly
// the instruction's shape); nullptr means the rule rewrote the instruction in
// place.
struct Rewrite {
    std::string_view rule;
    HloInstruction* replacement = nullptr;
};
using RuleResult = std::optional<Rewrite>;

class Context {
public:
    Context(HloModule& module, HloComputation& computation)
        : m_module(module), m_computation(computation),
          m_canAddInstructions(!module.isScheduled()) {}

    HloModule& module() { return m_module; }
    HloComputation& computation() { return m_computation; }
    // False for scheduled modules: new instructions would break the schedule.
    bool canAddInstructions() const { return m_canAddInstructions; }

    // Facts about `instruction` when it is a constant or a broadcast of one.
    const ConstantFacts& constantFacts(const HloInstruction* instruction);

    // Creates an instruction with `opcode`, `shape` and `operands`, checks its
    // shape against shape inference (element type and dimensions) and adds
    // it to the computation; nullptr (nothing added) when inference disagrees
    // or instructions may not be added. `configure` sets attributes before
    // the check.
    template <typename Configure>
    HloInstruction* add(HloOpcode opcode, const Shape& shape,
                        std::span<HloInstruction* const> operands, std::string_view baseName,
                        Configure&& configure) {
        if (!m_canAddInstructions) return nullptr;
        auto instruction = std::make_unique<HloInstruction>(
            opcode, m_module.uniqueInstructionName(baseName), shape);
        for (HloInstruction* operand : operands) instruction->appendOperand(operand);
        configure(*instruction);
        return finishAdd(std::move(instruction));
    }

    // An instruction lost a use (in-place rewrites call this for the operand
    // they dropped): a candidate for dead-code removal after the sweep.
    void lostUse(HloInstruction* instruction) { m_lostUse.push_back(instruction); }
    std::vector<HloInstruction*>& lostUses() { return m_lostUse; }

private:
    HloInstruction* finishAdd(std::unique_ptr<HloInstruction> instruction);

    HloModule& m_module;
    HloComputation& m_computation;
    bool m_canAddInstructions;
    std::unordered_map<const HloInstruction*, ConstantFacts> m_facts;
    std::vector<HloInstruction*> m_lostUse;
};

// A shape with `reference`'s convention: descending layout when `reference`
// has a layout, none otherwise.
Shape shapeLike(const Shape& reference, PrimitiveType type, std::vector<int64_t> dimensions);

// Rule families; each returns the first rule that fired, if any.
RuleResult simplifyElementwise(Context& context, HloInstruction* instruction);
RuleResult simplifyConvert(Context& context, HloInstruction* instruction);
RuleResult simplifyShapeOp(Context& context, HloInstruction* instruction);
RuleResult simplifyDot(Context& context, HloInstruction* instruction);

}  // namespace hloscope::simplifier
