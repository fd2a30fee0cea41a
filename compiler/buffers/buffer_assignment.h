// Buffer assignment: an analysis of a module's memory use, usable outside
// passes (the GUI's memory view, per-pass peak-memory reports).
//
// Model (after XLA's buffer assignment, simplified):
//  * The entry computation runs in one sequence: the module's instruction
//    order when the module is scheduled (and that order is topologically
//    valid), its post order otherwise. Time t = 1..N is the position in the
//    sequence; entry parameters and constants are defined at 0.
//  * Each instruction defines one logical buffer per array leaf of its shape,
//    except ops that alias their operands: get-tuple-element, bitcast,
//    optimization-barrier, add-dependency, domain, while (its output is the
//    init's buffers, updated in place) and parameters of non-entry
//    computations (the caller's values). A tuple-shaped result also defines a
//    pointer table of `tuplePointerBytes` (8) bytes per element of its
//    top-level tuple (0 disables it). call and conditional define new output
//    buffers.
//  * Sizes: paddedSizeInBytes (compiler/layout/tpu_tiling.h): the tiled
//    storage size for tiled layouts, the dense size otherwise (sub-byte types
//    packed: ceil(bits * n / 8)).
//  * Live range [define, last use]: a use by any instruction that reads the
//    value (through aliases too); entry parameters and constants live the
//    whole program; the entry root's buffers (outputs) live to the end.
//  * while / conditional / call / async-start: the called computations' own
//    peak live bytes (computed the same way, recursively, memoized; the
//    largest branch of a conditional, max(body, condition) for a while) are a
//    temporary buffer live at the call's time. Fusions and reducers allocate
//    nothing beyond their result. Constants inside called computations count
//    as ordinary buffers of those computations.
//  * Reuse: entry parameters, constants and outputs get allocations of their
//    own; the other buffers, by size descending (then define time, then id),
//    go into the smallest existing reusable allocation none of whose buffers'
//    live ranges overlap theirs, or a new one. An output aliased to a
//    parameter by input_output_alias shares the parameter's allocation and
//    adds no bytes of its own.
// Results are deterministic.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

struct LogicalBuffer {
    int64_t id = 0;
    const HloInstruction* instruction = nullptr;  // the defining instruction
    std::vector<int64_t> shapeIndex;              // leaf index; {} for a pointer table or temporary
    int64_t sizeBytes = 0;
    int64_t defineTime = 0;
    int64_t lastUseTime = 0;
    int64_t allocation = -1;  // index into BufferAssignment::allocations, -1 when not assigned
    bool isEntryParameter = false;
    bool isOutput = false;
    bool isConstant = false;
    bool isTupleTable = false;         // a tuple's pointer table
    bool isCalleeTemporary = false;    // a called computation's peak at a while/call/conditional
    bool isAliasedToParameter = false; // an output sharing a parameter's allocation
};

struct BufferAllocation {
    int64_t index = 0;
    int64_t sizeBytes = 0;
    std::vector<int64_t> buffers;  // LogicalBuffer ids
    bool isParameter = false;
    bool isOutput = false;
    bool isConstant = false;
    bool isReused = false;  // holds more than one buffer
};

struct BufferAssignment {
    std::vector<LogicalBuffer> buffers;  // buffers[i].id == i
    std::vector<BufferAllocation> allocations;
    int64_t peakBytesNoReuse = 0;    // sum of every buffer (aliased outputs excluded)
    int64_t peakLiveBytes = 0;       // max over time of live bytes
    int64_t totalAllocatedBytes = 0; // sum of allocation sizes, with reuse
    std::vector<std::pair<int64_t, int64_t>> liveBytesOverTime;  // (time, live bytes), t = 0..N
};

struct BufferAssignmentOptions {
    int64_t tuplePointerBytes = 8;  // per tuple element; 0: tuples cost nothing
    bool assignAllocations = true;  // false: live ranges and peaks only
    // The entry's outputs live from the start of the run, as when the
    // runtime (hloscope's CPU backend, a caller-allocated result) holds
    // their storage for the whole run; else from their definition.
    bool outputsLiveFromStart = false;
};

StatusOr<BufferAssignment> assignBuffers(const HloModule& module,
                                         const BufferAssignmentOptions& options = {});

// The order a computation's instructions run in, as assignBuffers assumes:
// instruction order for scheduled modules when it is topologically valid,
// post order otherwise. Runtimes that use an assignment execute in it.
std::vector<const HloInstruction*> executionSequence(const HloComputation& computation, bool scheduled);

// peakLiveBytes of the entry schedule (no allocation step); 0 when the
// module cannot be analysed.
int64_t peakMemoryBytes(const HloModule& module);
// The same with the entry's outputs held for the whole run (what a runtime
// that allocates the result before running needs; the estimator's figure).
int64_t peakMemoryBytesWithOutputsHeld(const HloModule& module);

}  // namespace hloscope
