// Internal pieces of the TPU timeline simulator (see tpu_simulator.h for the
// model): the chip's rates derived from a TargetDescription, a kernel's plan
// (its tile loop as a sequence of grid steps) and the event-driven pipeline
// that times one plan. Not a public header: only compiler/backends/tpu uses it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backends/tpu/tpu_simulator.h"
#include "compiler/targets/target_description.h"
#include "core/ir/hlo_instruction.h"
#include "core/support/status.h"

namespace hloscope::tpu_sim {

// The simulated chip. Per-core rates unless said otherwise.
struct Chip {
    std::string name;
    int64_t cores = 1;
    int64_t mxusPerCore = 4;
    int64_t mxuRows = 128;
    int64_t mxuColumns = 128;
    int64_t sublanes = 8;
    int64_t lanes = 128;
    double clockHz = 1e9;
    double hbmBytesPerSecond = 1e12;  // the chip's, shared by every DMA
    double vmemBytes = 16 << 20;      // one core's VMEM
    double dmaLatencySeconds = 0;
    double gridStepSeconds = 0;
    // Whole vector registers the VPU processes per second: the target's f32
    // vector peak over cores x sublanes x lanes.
    double vregOpsPerSecond = 1e9;
    double transcendentalsPerSecond = 1e9;  // elements
    // MXU passes per matmul of an element type relative to bf16 (f32 takes
    // its passes from the precision config instead).
    std::map<std::string, double> matrixPeakTflops;

    // Bytes of a vector register (sublanes x lanes 32-bit words), also the
    // size of one (8,128) tile of the tiled layouts.
    int64_t vregBytes() const { return sublanes * lanes * 4; }
};

// Fails unless `target` is a TPU with a "tpu" section.
StatusOr<Chip> chipFromTarget(const TargetDescription& target);

// One step of a kernel's tile loop, all TensorCores together (megacore:
// each core runs one block of the step in lockstep).
struct GridStep {
    int64_t inBytes = 0;    // HBM->VMEM before the step's compute
    int64_t outBytes = 0;   // VMEM->HBM after it
    double mxuSeconds = 0;  // the busiest core's MXU time
    double vpuSeconds = 0;  // the busiest core's VPU time (transcendentals included)
    double mxuBusy = 0;     // MXU time averaged over the cores
    double vpuBusy = 0;
    double flops = 0;
};

// A kernel's grid steps, produced in order (a dot's steps depend on which
// blocks each core already holds).
class StepSource {
public:
    virtual ~StepSource() = default;
    virtual int64_t count() const = 0;
    virtual GridStep next() = 0;  // called count() times
};

struct KernelPlan {
    std::string kind;      // TpuKernelTiming::kind
    bool modelled = true;  // false: no TPU model, the analytical time is used
    std::string tiling;    // the tile loop in words
    std::string note;
    bool fitsVmem = true;
    int64_t vmemPeakBytes = 0;  // one core's working set
    int64_t blocks = 0;         // blocks of the tile loop (chunks included)
    int64_t splits = 1;         // chunks of the reduced / contracting dimension
    int64_t prologueBytes = 0;  // operands kept resident, loaded before the first step
    int64_t epilogueBytes = 0;  // accumulated outputs, written after the last step
    std::unique_ptr<StepSource> steps;
};

// How `kernel` (a fusion or a single instruction, not free) runs on `chip`.
KernelPlan planKernel(const HloInstruction& kernel, const Chip& chip);

// The pieces planKernel is made of (tpu_kernel_plan.cc, tpu_matmul_plan.cc).
// What a kernel's instructions ask of the VPU, and what else it holds.
struct BodyWork {
    double vregOps = 0;          // vector register ops
    double transcendentals = 0;  // elements, whole registers
    std::vector<const HloInstruction*> matrixOps;
    const HloInstruction* unmodelled = nullptr;
    bool reduction = false;
    bool elementwise = false;
};

// An operand or output of the kernel in HBM.
struct Buffer {
    int64_t bytes = 0;  // padded, scaled by the share the kernel really touches
    double elements = 0;
    bool resident = false;  // operand loaded once / output accumulated and written at the end
    const HloInstruction* source = nullptr;  // operands: the kernel's operand
};

// A kernel's operands and outputs in HBM.
struct KernelBuffers {
    std::vector<Buffer> operands;  // distinct operands, in operand order
    std::vector<Buffer> outputs;   // array leaves of the result
    double flops = 0;
};

double vpuSecondsOf(double vregOps, double transcendentals, const Chip& chip);
// "matmul", "convolution", "reduction", "elementwise" or "copy".
std::string kindOf(const BodyWork& work);
// Estimated time of a tile loop: fill (first loads), steady state (the
// slowest of DMA, compute and latency-bound DMA with two buffers), drain.
// Picks block counts and GEMM tiles; the simulation then times the choice.
double estimatePipeline(const Chip& chip, double steps, double firstIn, double lastOut,
                        double totalBytes, double computePerStep);
// Operands and outputs streamed in equal blocks; `how` is appended to the tiling text.
KernelPlan planStreamed(const BodyWork& work, KernelBuffers buffers, const Chip& chip,
                        const std::string& how = {});
// Dots and convolutions on the MXU.
KernelPlan planMatrix(const HloInstruction& kernel, const BodyWork& work,
                      const KernelBuffers& buffers, const Chip& chip);
// Whether the matrix ops' multiply-adds take less time on the VPU than on
// the MXU with K and N padded to its weight tiles (depthwise convolutions).
bool vpuIsFaster(const BodyWork& work, const Chip& chip);

// The simulated run of one plan, times from the kernel's start.
struct PipelineRun {
    double seconds = 0;
    double dmaSeconds = 0;      // bytes moved at the full HBM bandwidth
    double computeSeconds = 0;  // steps' compute stages: grid-step overhead + max(MXU, VPU)
    double mxuBusySeconds = 0;  // averaged over cores
    double vpuBusySeconds = 0;
    int64_t hbmBytes = 0;
    double flops = 0;
    int64_t steps = 0;
    std::vector<TpuTraceEvent> events;  // `kernel` left empty
};

PipelineRun runPipeline(KernelPlan& plan, const Chip& chip);

// Helpers shared by the planner and the module walk.
int64_t ceilDiv(int64_t a, int64_t b);
// Vector registers a shape occupies (its padded bytes in whole registers;
// at least one per non-empty array); tuples summed.
int64_t vregsOf(const Shape& shape, int64_t vregBytes);
std::string formatBytes(double bytes);  // "3.5 MiB"

}  // namespace hloscope::tpu_sim
