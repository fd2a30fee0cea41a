// InstructionBuilder: adds instructions to one computation for the passes
// that expand an operation into several (scan-expander,
// batch-norm-expander, triangular-solve-expander). Each instruction is named after the expanded one
// ("<stem>.<what>", unique in the module) and gets no layout (layout
// assignment gives it one).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"

namespace hloscope::passes {

class InstructionBuilder {
public:
    using H = HloInstruction*;

    InstructionBuilder(HloModule& module, HloComputation& computation, std::string stem)
        : m_module(module), m_computation(computation), m_stem(std::move(stem)) {}

    HloModule& module() { return m_module; }
    HloComputation& computation() { return m_computation; }
    const std::string& stem() const { return m_stem; }

    H add(HloOpcode opcode, Shape shape, std::vector<H> operands, std::string_view what);
    H unary(HloOpcode opcode, H x, std::string_view what) {
        return add(opcode, x->shape(), {x}, what);
    }
    H binary(HloOpcode opcode, H a, H b, std::string_view what) {
        return add(opcode, a->shape(), {a, b}, what);
    }
    // A scalar constant of `type` (`value` written as HLO text writes it).
    H scalar(PrimitiveType type, double value, std::string_view what = "constant");
    H broadcast(H x, Shape shape, std::vector<int64_t> dimensions);
    // An s32 scalar constant (a loop step, an index).
    H index(int64_t value, std::string_view what = "constant");
    // Parameter 0, of `shape` (a loop's state).
    H parameter(Shape shape, std::string_view what = "state");
    // Zeros (false for pred) of `shape`: a broadcast scalar.
    H zeros(const Shape& shape);
    // `x` converted to `type` (`x` itself when it has it).
    H convert(H x, PrimitiveType type);
    H element(H tuple, int64_t i);
    H tuple(const std::vector<H>& elements);

private:
    HloModule& m_module;
    HloComputation& m_computation;
    std::string m_stem;
};

// A computation `(a: T[], b: T[]) -> T[]` returning `opcode`(a, b), added to
// the front of `module` (before its callers).
HloComputation* addScalarReducer(HloModule& module, HloOpcode opcode, PrimitiveType type);

}  // namespace hloscope::passes
