#include "compiler/fusion/fusion_cost_model.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/cost/cost_analysis.h"
#include "compiler/cost/performance_model.h"

namespace hloscope {

namespace {

double elements(const Shape& shape) {
    if (!shape.isArray()) return 1;
    return static_cast<double>(std::max<int64_t>(1, shape.elementCount()));
}

double workOf(const InstructionCost& cost) { return cost.flops + 10 * cost.transcendentals; }

}  // namespace

FusionTimes PerformanceModelFusionCost::estimate(const HloInstruction& producer,
                                                 const HloInstruction& consumer) const {
    const FusionEstimate estimate = estimateFusion(producer, consumer, m_target);
    FusionTimes times;
    times.producerSeconds = estimate.producerSeconds;
    times.unfusedSeconds = estimate.unfusedSeconds;
    times.fusedSeconds = estimate.fusedSeconds;
    return times;
}

FusionTimes PerformanceModelFusionCost::estimate(const HloInstruction& producer,
                                                 const HloInstruction& consumer,
                                                 KernelSummaryCache& cache) const {
    const FusionEstimate estimate = estimateFusion(producer, consumer, m_target, cache);
    FusionTimes times;
    times.producerSeconds = estimate.producerSeconds;
    times.unfusedSeconds = estimate.unfusedSeconds;
    times.fusedSeconds = estimate.fusedSeconds;
    return times;
}

BytesFusionCostModel::Figures BytesFusionCostModel::figuresFor(std::string_view target) {
    if (target == "gpu") return {2e12, 50e12, 5e-6};
    if (target == "tpu") return {1.2e12, 100e12, 2e-6};
    return {50e9, 1e12, 1e-6};
}

double BytesFusionCostModel::kernelSeconds(const HloInstruction& instruction) const {
    if (CostAnalysis::isFree(instruction)) return 0;
    const InstructionCost cost = CostAnalysis::of(instruction);
    return m_figures.launchSeconds + std::max(cost.bytesAccessed() / m_figures.bytesPerSecond,
                                              workOf(cost) / m_figures.flopsPerSecond);
}

FusionTimes BytesFusionCostModel::estimate(const HloInstruction& producer,
                                           const HloInstruction& consumer) const {
    FusionTimes times;
    times.producerSeconds = kernelSeconds(producer);
    times.unfusedSeconds = times.producerSeconds + kernelSeconds(consumer);
    const bool producerFree = CostAnalysis::isFree(producer);
    const InstructionCost p = producerFree ? InstructionCost{} : CostAnalysis::of(producer);
    const InstructionCost c = CostAnalysis::isFree(consumer) ? InstructionCost{}
                                                             : CostAnalysis::of(consumer);
    // How often the fused kernel recomputes each producer element: the
    // consumer's elements per producer element (broadcast-like consumers),
    // once for reductions.
    double factor = 1;
    if (consumer.opcode() != HloOpcode::kReduce)
        factor = std::max(1.0, elements(consumer.shape()) / elements(producer.shape()));
    double bytes = 0;
    std::unordered_set<const HloInstruction*> seen{&producer};
    for (const HloInstruction* operand : producer.operands())
        if (seen.insert(operand).second) bytes += CostAnalysis::byteSize(operand->shape());
    for (const HloInstruction* operand : consumer.operands())
        if (seen.insert(operand).second) bytes += CostAnalysis::byteSize(operand->shape());
    bytes += CostAnalysis::byteSize(consumer.shape());
    bool otherUsers = producer.isRoot();
    for (const HloInstruction* user : producer.users()) otherUsers = otherUsers || user != &consumer;
    if (otherUsers) bytes += CostAnalysis::byteSize(producer.shape());
    const double work = workOf(c) + workOf(p) * factor;
    times.fusedSeconds = m_figures.launchSeconds +
                         std::max(bytes / m_figures.bytesPerSecond, work / m_figures.flopsPerSecond);
    return times;
}

StatusOr<std::unique_ptr<FusionCostModel>> makeFusionCostModel(std::string_view target,
                                                               std::string_view kind,
                                                               const std::string& hardware) {
    if (target != "cpu" && target != "gpu" && target != "tpu")
        return invalidArgument("fusion target must be cpu, gpu or tpu, not '" +
                               std::string(target) + "'");
    if (kind == "bytes")
        return std::unique_ptr<FusionCostModel>(
            std::make_unique<BytesFusionCostModel>(BytesFusionCostModel::figuresFor(target)));
    if (kind != "performance")
        return invalidArgument("cost_model must be performance or bytes, not '" +
                               std::string(kind) + "'");
    TargetDescription description;
    if (hardware.empty()) {
        const std::string_view name = target == "gpu" ? "h100" : target == "tpu" ? "tpu_v5e" : "cpu";
        HLO_ASSIGN_OR_RETURN(description, builtinTargetDescription(name));
    } else {
        auto resolved = resolveTargetDescription(hardware);
        if (!resolved.isOk()) return resolved.status().withContext("option hardware");
        description = std::move(*resolved);
        if (pipelineFamily(description.kind) != target)
            return invalidArgument("option hardware: " + description.name + " is a " +
                                   std::string(pipelineFamily(description.kind)) +
                                   " target, not " + std::string(target));
    }
    return std::unique_ptr<FusionCostModel>(
        std::make_unique<PerformanceModelFusionCost>(std::move(description)));
}

}  // namespace hloscope
