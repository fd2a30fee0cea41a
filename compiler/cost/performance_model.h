// Performance model: predicted run time of kernels and modules on a
// TargetDescription, from CostAnalysis costs (a roofline with efficiency
// factors and a per-kernel launch overhead).
//
//   kernel time = max(compute, memory) + launch
//   compute     = flops / (peak(element type, matrix unit for dots and
//                 convolutions) * efficiency[op class])
//               + transcendentals / (transcendental rate * efficiency[transcendental])
//   memory      = (bytes read + bytes written) / (bandwidth * efficiency[op class])
//
// On a CPU target with runtime figures (TargetDescription::cpuRuntime) a
// kernel with enough work runs on every core (peaks times cores, the
// all-cores bandwidth, plus the pool's dispatch cost), smaller ones on the
// calling thread, and bandwidth depends on the kernel's working set (bytes
// accessed), read off the calibrated curve: caches, then DRAM.
//
// The element type of a kernel is its dot/convolution operand type, else
// its (first) output type. Instructions that are no kernel (parameters,
// constants, bitcasts, tuples, get-tuple-elements, ...) cost nothing.
// While loops run their body and condition kernels trip-count times (1 when
// unknown), calls run their callee's kernels, conditionals their most
// expensive branch.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/cost/cost_analysis.h"
#include "compiler/targets/target_description.h"

namespace hloscope {

// A kernel's time before efficiency factors: what calibration re-fits
// (compiler/estimator/calibration.h). One execution.
struct KernelTimeParts {
    OpClass opClass = OpClass::kElementwise;
    double flopsSeconds = 0;            // flops at the peak rate (times cores used)
    double transcendentalSeconds = 0;   // transcendentals at the peak rate
    double trafficSeconds = 0;          // bytes accessed at the bandwidth
    double rowSeconds = 0;              // index arithmetic per row of its loop nest (CPU runtime figures)
    double launchSeconds = 0;
    // compute = (flops + rows) / efficiency[class] + transcendentals / efficiency[transcendental],
    // memory = traffic / efficiency[class]; max(compute, memory) + launch.
    double seconds(const std::array<double, kOpClassCount>& efficiency) const;
};

struct KernelPrediction {
    const HloInstruction* instruction = nullptr;
    InstructionCost cost;
    KernelTimeParts parts;
    double computeSeconds = 0;
    double memorySeconds = 0;
    double launchSeconds = 0;
    double totalSeconds = 0;         // one execution
    std::string boundBy;             // "compute" | "memory" | "launch"
    double executions = 1;           // trip counts of enclosing loops
    int64_t threads = 1;             // cores the kernel is spread over (CPU runtime figures)
};

struct ModulePrediction {
    std::vector<KernelPrediction> kernels;
    double totalSeconds = 0;         // sum of kernel time * executions, plus overheadSeconds
    double overheadSeconds = 0;      // fixed cost of a run (TargetDescription::CpuRuntime::runSeconds)
    int64_t kernelCount = 0;         // kernel launches (executions summed)
};

// Time of one kernel with the given cost, class and element type.
// `workElements` (elements the kernel loops over: its largest input or
// output) decides whether a CPU kernel is spread over the cores; negative:
// taken from the bytes accessed. `rows`: rows of its loop nest (output
// elements over the minor-most dimension) times the index arithmetic per
// row (in units of the target's rowSeconds); 0: none (a library call, a
// linear elementwise loop).
// `threads`: the threads a GPU kernel runs (gpuKernelThreads); on a GPU target with lanes per
// SM, fewer than SMs x lanes reach that fraction of the compute peaks. 0: all of them.
// `extraRowSeconds`: CPU loop work in seconds added to the row work (a dot or convolution
// fusion's epilogue pass over its output; predictKernelDetailed).
KernelPrediction predictCost(const InstructionCost& cost, OpClass opClass, PrimitiveType elementType,
                             const TargetDescription& target, double workElements = -1, double rows = 0,
                             double threads = 0, double extraRowSeconds = 0);
// The threads XLA's GPU emitters launch for `instruction` as one kernel, decided by its hero (a
// fusion's reduction, else its output): a reduction of rows one thread per 16 elements of a row
// in whole warps (a row shorter than a warp: one per element), at most 1024 a row; a reduction
// of columns up to 32 per output; anything else one per output element. 0 for dots and
// convolutions (library kernels that fill the GPU).
double gpuKernelThreads(const HloInstruction& instruction);
// One instruction as one kernel (a fusion: its ofFusion cost); 0 for free instructions.
double predictKernel(const HloInstruction& instruction, const TargetDescription& target);
KernelPrediction predictKernelDetailed(const HloInstruction& instruction, const TargetDescription& target);

// The module as it is: every fusion one kernel.
ModulePrediction predictModule(const HloModule& module, const TargetDescription& target);
// The module with every fusion taken apart: each non-trivial instruction is its own kernel.
ModulePrediction predictUnfused(const HloModule& module, const TargetDescription& target);

// Producer and consumer as separate kernels vs as one fused kernel, without
// building the fusion. The fused kernel computes consumer flops + producer
// flops times the number of times the consumer reads each producer element
// (broadcast, gather, dot, reduce-window re-reads), reads the pair's external
// inputs once, writes the consumer's output and, when the producer has users
// besides the consumer, the producer's output too.
struct FusionEstimate {
    double producerSeconds = 0;  // the producer alone, as its own kernel
    double unfusedSeconds = 0;
    double fusedSeconds = 0;
    double gainSeconds() const { return unfusedSeconds - fusedSeconds; }
};
FusionEstimate estimateFusion(const HloInstruction& producer, const HloInstruction& consumer,
                              const TargetDescription& target);

// What estimateFusion needs of one side (a fusion's costs walk its whole
// body): its kernel cost, class and element type.
struct KernelSummary {
    bool free = false;  // no kernel (CostAnalysis::isFree); cost is then 0
    InstructionCost cost;
    OpClass opClass = OpClass::kElementwise;
    PrimitiveType elementType = PrimitiveType::F32;
    double threads = 0;  // gpuKernelThreads
    // A fusion's reads of each parameter: how many times its kernel evaluates each
    // element of parameter k (XLA's operand utilization; 0 where unused).
    std::vector<double> parameterReads;
};
KernelSummary summarizeKernel(const HloInstruction& instruction);

// Kernel summaries by instruction, for callers that estimate many pairs
// (the fusion passes). Valid only while the instructions it has seen are not
// changed in place (a fusion's body included) and stay alive: clear it when
// that no longer holds.
class KernelSummaryCache {
public:
    // The summary, computed on first use; the reference is good until clear().
    const KernelSummary& of(const HloInstruction& instruction);
    void clear() {
        m_byId.clear();
        m_summaries.clear();
    }

private:
    // By unique id (dense within a module); instructions without one by address. Each
    // summary has a place of its own, so growing the table moves none.
    std::vector<std::unique_ptr<KernelSummary>> m_byId;
    std::unordered_map<const HloInstruction*, KernelSummary> m_summaries;
};

// estimateFusion with the two sides' summaries taken from `cache`.
FusionEstimate estimateFusion(const HloInstruction& producer, const HloInstruction& consumer,
                              const TargetDescription& target, KernelSummaryCache& cache);

}  // namespace hloscope
