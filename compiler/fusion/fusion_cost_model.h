// Cost models the fusion passes ask "is fusing this producer into this
// consumer faster?":
//   * PerformanceModelFusionCost: the performance model's estimateFusion
//     (compiler/cost/performance_model.h) on a TargetDescription (default).
//   * BytesFusionCostModel: a small deterministic roofline on bytes and
//     flops with fixed per-target figures, independent of the target JSON
//     files (what the fusion tests use to pin outcomes):
//       kernel time = launch + max(bytes / bandwidth, flops / flop rate)
//     where bytes are the distinct operands read plus the output written.
//     The fused kernel reads the pair's external operands once, writes the
//     consumer's output (and the producer's when it has other users), and
//     recomputes the producer once per element the consumer reads.
#pragma once

#include <memory>
#include <string_view>

#include "compiler/cost/performance_model.h"
#include "compiler/targets/target_description.h"
#include "core/ir/hlo_instruction.h"
#include "core/support/status.h"

namespace hloscope {

struct FusionTimes {
    double producerSeconds = 0;  // the producer alone, as its own kernel
    double unfusedSeconds = 0;   // producer + consumer as separate kernels
    double fusedSeconds = 0;     // both as one kernel
};

class FusionCostModel {
public:
    virtual ~FusionCostModel() = default;
    // Predicted seconds of producer and consumer as separate kernels, and as
    // one fused kernel.
    virtual FusionTimes estimate(const HloInstruction& producer,
                                 const HloInstruction& consumer) const = 0;
    // The same, where the model may keep what it learns of each instruction
    // in `cache` (one pass run: instructions are not changed in place).
    virtual FusionTimes estimate(const HloInstruction& producer, const HloInstruction& consumer,
                                 KernelSummaryCache& cache) const {
        (void)cache;
        return estimate(producer, consumer);
    }
};

class PerformanceModelFusionCost : public FusionCostModel {
public:
    explicit PerformanceModelFusionCost(TargetDescription target) : m_target(std::move(target)) {}
    FusionTimes estimate(const HloInstruction& producer,
                         const HloInstruction& consumer) const override;
    FusionTimes estimate(const HloInstruction& producer, const HloInstruction& consumer,
                         KernelSummaryCache& cache) const override;
    const TargetDescription& target() const { return m_target; }

private:
    TargetDescription m_target;
};

class BytesFusionCostModel : public FusionCostModel {
public:
    struct Figures {
        double bytesPerSecond = 50e9;
        double flopsPerSecond = 1e12;
        double launchSeconds = 1e-6;
    };
    explicit BytesFusionCostModel(Figures figures) : m_figures(figures) {}
    using FusionCostModel::estimate;
    // cpu: 50 GB/s, 1 TFLOP/s, 1 us launch; gpu: 2 TB/s, 50 TFLOP/s, 5 us;
    // tpu: 1.2 TB/s, 100 TFLOP/s, 2 us.
    static Figures figuresFor(std::string_view target);
    FusionTimes estimate(const HloInstruction& producer,
                         const HloInstruction& consumer) const override;
    // One instruction (or fusion) as its own kernel; 0 for free ones.
    double kernelSeconds(const HloInstruction& instruction) const;

private:
    Figures m_figures;
};

// The model the passes use for `target` (cpu|gpu|tpu) and `kind`
// ("performance": `hardware`'s description (resolveTargetDescription), by
// default the shipped cpu / h100 / tpu_v5e; "bytes": BytesFusionCostModel).
// A hardware of another family than `target` is an error.
StatusOr<std::unique_ptr<FusionCostModel>> makeFusionCostModel(std::string_view target,
                                                               std::string_view kind,
                                                               const std::string& hardware = {});

}  // namespace hloscope
