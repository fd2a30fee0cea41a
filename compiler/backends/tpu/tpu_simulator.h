// TPU timeline simulator: how long a module prepared by the `tpu`
// pipeline (fused, tiled layouts, buffer assignment; prepareCopyForMode(m,
// "tpu_v4", ExecutionMode::kFused)) would take on a TPU, kernel by kernel,
// with what each unit does when, as a timeline.
//
// The model (every rate from the TargetDescription, "tpu" section included;
// resources/targets/tpu_v4.json and tpu_v5e.json cite each number):
//
//  * Kernels run one after the other in schedule order (the computation's
//    instruction order). Instructions that are no kernel
//    (CostAnalysis::isFree: parameters, constants, tuples, bitcasts,
//    get-tuple-elements, ...) take no time. while: the condition and body
//    simulated once and repeated trip-count times (CostAnalysis::
//    whileTripCount; unknown: once, with a note); call and async-start: the
//    callee inline; conditional: the slowest branch, with a note.
//  * A kernel is a tile loop over VMEM (the "megacore" TensorCores run one
//    block each per grid step, in lockstep; each core has the target's
//    onChipMemoryBytes of VMEM). Blocks are whole (8,128) tiles of the tiled
//    layouts: bytes moved and VMEM held are the padded sizes
//    (compiler/layout/tpu_tiling.h), not the logical ones.
//    - Dots and convolutions (kind "matmul", "convolution"): the output is cut
//      into (batch, tm, tn) tiles and the contracting dimension into tk chunks
//      (tm a multiple of 8 sublanes, tn and tk of 128), chosen among powers of
//      two by an estimate of their time such that double-buffered lhs, rhs and
//      output blocks (plus an f32 accumulator when the output is narrower and
//      K is chunked) fit VMEM. An operand block is fetched only when its block
//      index changes for that core. When no tile keeps the whole K in VMEM
//      the contracting dimension is split with an accumulator (fitsVmem false,
//      the note says so); when not even the smallest blocks fit, the excess
//      spills to HBM and is re-read every step (note).
//    - Everything else (kinds "elementwise", "reduction", "copy"): operands
//      and outputs are streamed in equal blocks; small operands that are not
//      output-sized (broadcast sources, biases) are loaded once and stay
//      resident, a reduction's small outputs are accumulated in VMEM and
//      written at the end. The block count is chosen by the same estimate.
//      When one output tile's share of the input does not fit (a reduction
//      to a few elements of a large input), the reduced dimension is chunked
//      (fitsVmem false, note); too many operands for one tile each: spill.
//  * The pipeline of a kernel (double buffering), simulated event by event:
//    the DMA of block i+1 HBM->VMEM may start once block i-1's compute has
//    freed its buffer; block i computes once its inputs are in and the output
//    buffer it writes is free (at most one earlier write-back in flight);
//    its output DMA VMEM->HBM starts when it is computed. Every DMA waits
//    dmaLatencySeconds after its issue, then moves its bytes; DMAs are
//    served in issue order by a read queue (HBM->VMEM) and a write queue
//    (VMEM->HBM), and the two queues' heads share the chip's HBM bandwidth
//    equally (in and out contend; either alone gets all of it).
//    A block's compute stage is gridStepSeconds of scalar work, then the MXU
//    and the VPU in parallel (VLIW bundles issue both), so the stage lasts
//    the longer of the two. Overlap and stalls come out of this, not out of
//    a max() of totals.
//  * MXU: mxusPerCore arrays of mxuRows x mxuColumns per core. A block's
//    (rows x k x cols) product takes ceil(k/128) x ceil(cols/128) weight
//    tiles, spread over the MXUs, each streaming max(rows, 128) rows (a
//    weight tile is not amortised over fewer rows), one row per cycle, times
//    the passes: bf16/f16 1; f32 from the dot's operand_precision: DEFAULT 1
//    (bf16 inputs, f32 accumulation), HIGH 3, HIGHEST 6 bf16 passes; other
//    types the bf16 rate over the type's matrix peak (int8 on v5e: 0.5).
//    4 MXUs x 128 x 128 x 2 flops x clock = the per-core bf16 peak.
//  * VPU: whole vector registers of sublanes x lanes 32-bit values (a
//    partial register costs a whole one) at the target's f32 vector peak;
//    one register op per elementwise op, per reduced input register (times
//    the reducer's ops), per relayout (transpose, copy); f32 matmul operands
//    are converted to bf16 on the VPU, partial products accumulated on it
//    when K is chunked. Transcendentals at the target's transcendental rate
//    per element of whole registers.
//  * Not simulated: sort, custom calls, fft, triangular solve, Cholesky,
//    top-k, scan and collectives (ICI left out): such a kernel gets the
//    analytical model's time (performance_model.h) and a note saying so.
//
// Utilisation of a unit = its busy time / the kernel's (or module's) time
// (HBM: bytes moved / (bandwidth x time)). Deterministic: equal inputs give
// equal simulations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/targets/target_description.h"
#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

// One interval on one track of the timeline.
// Tracks: "HBM->VMEM", "MXU", "VPU", "VMEM->HBM", "kernels".
struct TpuTraceEvent {
    std::string track;
    std::string name;
    std::string kernel;  // the kernel's instruction name
    double startSeconds = 0;
    double durationSeconds = 0;
    int64_t bytes = 0;
    int64_t flops = 0;
};

struct TpuKernelTiming {
    std::string name;    // instruction name
    std::string opcode;  // "fusion", "dot", "copy", ...
    // "matmul", "convolution", "elementwise", "reduction", "copy",
    // "unmodelled" (analytical time, see note).
    std::string kind;
    double startSeconds = 0;       // first execution
    double seconds = 0;            // one execution, simulated
    double analyticalSeconds = 0;  // performance_model's prediction (efficiency factors included)
    double rooflineSeconds =
        0;  // the same without efficiency factors: max(compute, memory) + launch
    double mxuUtilisation = 0, vpuUtilisation = 0, hbmUtilisation = 0;
    int64_t hbmBytes = 0;  // bytes moved, padded sizes
    int64_t flops = 0;
    int64_t vmemPeakBytes = 0;  // one core's VMEM working set
    bool fitsVmem = true;       // the minimal working set fits without splitting or spilling
    int64_t tiles = 0;          // blocks of the tile loop
    int64_t splits = 1;         // chunks of the reduced / contracting dimension
    std::string tiling;         // the tile loop in words
    std::string note;
    int64_t executions = 1;     // times it runs (enclosing loops' trip counts)
    double dmaSeconds = 0;      // its bytes at the full HBM bandwidth
    double computeSeconds = 0;  // its compute stages back to back
};

struct TpuBufferPadding {
    std::string name;   // instruction, "{i}" appended for tuple elements
    std::string shape;  // with layout
    int64_t logicalBytes = 0;
    int64_t paddedBytes = 0;
};

struct TpuSimulation {
    std::string target;
    double totalSeconds = 0;
    std::vector<TpuKernelTiming> kernels;  // schedule order; a loop body's kernels once
    std::vector<TpuTraceEvent> events;     // a loop's first iteration only
    double mxuUtilisation = 0, vpuUtilisation = 0, hbmUtilisation = 0;
    std::vector<TpuBufferPadding> padding;
    int64_t logicalBytes = 0, paddedBytes = 0;
    double analyticalSeconds = 0;    // predictModule on the same module
    std::vector<std::string> notes;  // module-level (loops, conditionals)
};

// Simulates `prepared` (the output of the tpu pipeline) on `target` (a TPU
// with a "tpu" section). Errors: not a TPU target, no entry computation.
StatusOr<TpuSimulation> simulateTpu(const HloModule& prepared, const TargetDescription& target);

// Chrome trace event format (Perfetto, chrome://tracing): one process per
// target, one thread per track, "X" events in microseconds; kernel events
// carry the kernel's figures as args.
std::string tpuChromeTraceJson(const TpuSimulation& simulation);

// Human table: per buffer logical vs padded bytes and waste, largest waste
// first, then the total.
std::string tpuPaddingReport(const TpuSimulation& simulation);

}  // namespace hloscope
