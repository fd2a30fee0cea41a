// HloEvaluator: the reference interpreter. Evaluates a module or a
// computation on literal arguments following XLA's operation semantics. It
// is the ground truth every pass, backend and measured speedup is checked
// against, so correctness comes first; an instruction it cannot evaluate
// yields Status(kUnimplemented) naming the instruction, never a wrong answer.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {

class CollectiveExchange;  // core/interpreter/multi_device.h

struct HloEvaluatorOptions {
    uint64_t rngSeed = 42;  // rng, rng-bit-generator fallback, rng-get-and-update-state
    int64_t maxWhileIterations = 100'000'000;  // guard against runaway loops
    int64_t replicaId = 0;  // this device's ids on the module's grid (core/ir/collective_groups.h)
    int64_t partitionId = 0;
    // Set by evaluateOnDevices (core/interpreter/multi_device.h): collectives
    // exchange values with the other devices through it. Null: one device,
    // where a collective with one participant passes its operands through
    // and one with more is an error naming it.
    CollectiveExchange* collectives = nullptr;
    const std::atomic<bool>* cancel = nullptr;  // checked between instructions
    // The most bytes of instruction results held at once; an instruction whose
    // result would go over it is an error (kResourceExhausted) naming it,
    // raised before the result is allocated. 0: limits::evaluationMemoryLimitBytes().
    int64_t memoryLimitBytes = 0;
    // Consulted for every custom-call before the built-in targets; returns
    // nullopt to decline. With a handler set, side-effecting custom-calls
    // that the root does not depend on (test checks, for instance) are
    // evaluated too, after their operands.
    using CustomCallHandler = std::function<std::optional<StatusOr<Literal>>(
        const HloInstruction& instruction, std::span<const Literal* const> operands)>;
    CustomCallHandler customCallHandler;
    // When set, called after each instruction of the evaluated computation
    // itself (not of the computations it calls: a while loop reports once,
    // with the time of all its iterations) with the wall time it took.
    std::function<void(const HloInstruction& instruction, double seconds)> onInstructionTimed;
};

class HloEvaluator {
public:
    explicit HloEvaluator(HloEvaluatorOptions options = {});

    // Evaluates the entry computation. Arguments must match the entry
    // parameters' shapes (element type and dimensions).
    StatusOr<Literal> evaluate(const HloModule& module, std::span<const Literal> arguments);
    StatusOr<Literal> evaluate(const HloComputation& computation,
                               std::span<const Literal> arguments);
    // The same on arguments held elsewhere (no copies).
    StatusOr<Literal> evaluate(const HloComputation& computation,
                               std::span<const Literal* const> arguments);

    const HloEvaluatorOptions& options() const { return m_options; }

private:
    HloEvaluatorOptions m_options;
};

// Evaluates single instructions on given operand values, one after another,
// as a backend does for instructions it cannot compile: called computations
// (fusions, reducers, loop bodies) are interpreted; random ops draw from one
// stream seeded by options.rngSeed, in call order; constants are cached.
class HloInstructionEvaluator {
public:
    explicit HloInstructionEvaluator(HloEvaluatorOptions options = {});
    ~HloInstructionEvaluator();
    HloInstructionEvaluator(const HloInstructionEvaluator&) = delete;
    HloInstructionEvaluator& operator=(const HloInstructionEvaluator&) = delete;

    // `operands` in instruction.operands() order.
    StatusOr<Literal> evaluate(const HloInstruction& instruction,
                               std::span<const Literal* const> operands);

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// Collectives on one device, as the evaluator computes them (the backends
// follow it): the participants of one group (the largest replica group,
// else the module's replicas x partitions); with one participant a
// collective passes its operands through.
int64_t collectiveParticipantCount(const HloInstruction& instruction);
// collective-permute on one device: true when a source_target pair sends
// device 0's operand to itself (the result is the operand), false when
// nothing arrives (zeros); an error naming the instruction when the module
// has more than one device or a pair names another one.
StatusOr<bool> collectivePermuteKeepsOperand(const HloInstruction& instruction);

// Seeded random arguments for `computation`'s parameters (parameter i uses
// seed + i * 0x9E3779B97F4A7C15, see makeRandomLiteral): what
// `hloscope-cli eval --seed N` and `bisect --seed N` feed a module.
std::vector<Literal> makeRandomArguments(const HloComputation& computation, uint64_t seed);

// Evaluates a single constant instruction's literal text.
StatusOr<Literal> literalOfConstant(const HloInstruction& constant);

}  // namespace hloscope
