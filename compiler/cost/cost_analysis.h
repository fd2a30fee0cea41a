// CostAnalysis: flops, transcendentals and bytes of HLO instructions, in the
// spirit of XLA's HloCostAnalysis (our own formulas, documented below).
//
// Conventions (per instruction, as its own kernel):
//  * Elementwise ops: 1 flop per output element; transcendental opcodes (exp,
//    log, sin, cos, tan, tanh, logistic, sqrt, rsqrt, cbrt, power, erf,
//    atan2, the hyperbolic and inverse trigonometric functions, expm1, log1p)
//    count 1 transcendental per element instead (as XLA does).
//  * dot: 2 * output elements * product of the lhs contracting dimensions
//    (= 2*M*N*K per batch for any dimension numbers); ragged-dot and
//    scaled-dot alike.
//  * convolution: 2 * output elements * kernel spatial size * kernel input
//    features (the input features of one group). Padding and dilation
//    holes are counted as if they were data.
//  * reduce: (input elements - output elements) * reducer flops;
//    reduce-window: output elements * window size * reducer flops;
//    select-and-scatter: source elements * window size * select flops +
//    source elements * scatter flops; map: elements * mapped flops.
//  * gather reads the gathered slices (output bytes) and the indices, not the
//    whole operand; scatter reads updates, indices and the updated slices and
//    writes the updated slices (in place). slice / dynamic-slice read only
//    what they output; dynamic-update-slice reads and writes the update.
//  * sort: n log2 n comparisons per sorted row times the comparator's flops
//    (at least 1); fft: 5 N log2 N per transform.
//  * broadcast, reshape, transpose, copy, concatenate, pad, reverse, iota,
//    ...: 0 flops, bytes read and written.
//  * parameter, constant, bitcast, get-tuple-element, tuple, after-all,
//    add-dependency, domain, opt-barrier: no kernel, 0 bytes.
//  * while: (body + condition) * trip count (known_trip_count in the
//    backend config, or a counter initialised by a constant, incremented by
//    a constant and compared against a constant; otherwise 1 and flagged);
//    call: the callee; conditional: the most expensive branch; fusion:
//    ofFusion; custom-call: 0 flops, bytes only, flagged unknown.
//  * Operands read by one kernel are counted once even when used several
//    times. Byte sizes: dense arrays, sub-byte types packed
//    (ceil(elements * bits / 8)), tuples summed, tokens 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/targets/op_class.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

struct InstructionCost {
    double flops = 0;
    double transcendentals = 0;
    double bytesRead = 0;
    double bytesWritten = 0;
    double outputBytes = 0;  // size of the result (whether or not written by this kernel)

    double bytesAccessed() const { return bytesRead + bytesWritten; }
    InstructionCost& operator+=(const InstructionCost& other);
    InstructionCost scaled(double factor) const;
};

struct ModuleCost {
    InstructionCost total;  // entry computation, loops weighted by trip counts
    // While loops whose trip count could not be derived (counted once).
    std::vector<std::string> unknownTripCountLoops;
    // Instructions whose flops are unknown (custom-calls: bytes only).
    std::vector<std::string> unknownCostInstructions;
};

class CostAnalysis {
public:
    // Costs of one instruction as its own kernel (operands read from memory,
    // result written). Fusions: ofFusion.
    static InstructionCost of(const HloInstruction& instruction);
    // Costs of a fusion instruction: flops/transcendentals summed over the
    // fused computation; bytes only for what crosses the boundary (each
    // fusion operand read once, or only the slices read when every use of
    // the parameter is a slice/dynamic-slice/gather), the output written.
    static InstructionCost ofFusion(const HloInstruction& fusion);
    // Sum over the computation's instructions, loops weighted.
    static InstructionCost ofComputation(const HloComputation& computation);
    // Whole module (entry computation, called computations included).
    static StatusOr<ModuleCost> ofModule(const HloModule& module);

    // Trip count of a while loop when it can be derived (see above).
    static std::optional<int64_t> whileTripCount(const HloInstruction& whileInstruction);
    // Dense byte size of a shape (sub-byte packed, tuples summed).
    static double byteSize(const Shape& shape);
    // The class of work an instruction (or a fusion, by its heaviest fused
    // instruction) does.
    static OpClass opClassOf(const HloInstruction& instruction);
    // True for instructions that are not kernels (parameter, constant,
    // bitcast, get-tuple-element, tuple, ...).
    static bool isFree(const HloInstruction& instruction);
    static bool isTranscendental(HloOpcode opcode);
};

}  // namespace hloscope
