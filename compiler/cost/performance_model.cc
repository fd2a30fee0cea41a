#include "compiler/cost/performance_model.h"

#include <unordered_map>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/ir/hlo_computation.h"

namespace hloscope {

namespace {

double elementsOf(const Shape& shape) {
    if (shape.isTuple()) return shape.tupleCount() > 0 ? elementsOf(shape.tupleShape(0)) : 0;
    return shape.isArray() ? static_cast<double>(shape.elementCount()) : 0;
}

PrimitiveType firstArrayType(const Shape& shape) {
    if (shape.isTuple()) {
        for (const Shape& element : shape.tupleShapes()) {
            PrimitiveType type = firstArrayType(element);
            if (type != PrimitiveType::PRIMITIVE_TYPE_INVALID) return type;
        }
        return PrimitiveType::PRIMITIVE_TYPE_INVALID;
    }
    return shape.isArray() ? shape.elementType() : PrimitiveType::PRIMITIVE_TYPE_INVALID;
}

bool isMatrixOp(HloOpcode opcode) {
    return opcode == HloOpcode::kDot || opcode == HloOpcode::kRaggedDot || opcode == HloOpcode::kScaledDot ||
           opcode == HloOpcode::kConvolution;
}

// The element type a kernel computes in: the operand type of its dot or
// convolution, else its output type.
PrimitiveType kernelElementType(const HloInstruction& instruction) {
    if (isMatrixOp(instruction.opcode()) && instruction.operandCount() > 0)
        return firstArrayType(instruction.operand(0)->shape());
    if (instruction.opcode() == HloOpcode::kFusion)
        if (const HloComputation* fused = instruction.fusedComputation())
            for (const auto& inner : fused->instructions())
                if (isMatrixOp(inner->opcode()) && inner->operandCount() > 0)
                    return firstArrayType(inner->operand(0)->shape());
    PrimitiveType type = firstArrayType(instruction.shape());
    return type == PrimitiveType::PRIMITIVE_TYPE_INVALID ? PrimitiveType::F32 : type;
}

InstructionCost kernelCost(const HloInstruction& instruction) {
    return instruction.opcode() == HloOpcode::kFusion ? CostAnalysis::ofFusion(instruction)
                                                      : CostAnalysis::of(instruction);
}

// Instructions whose operand index is not the output's linear index. Not
// CostAnalysis's data-movement class: bitcast-convert (elementwise in a
// loop) and collectives are not index shuffles inside a CPU kernel.
bool movesIndices(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kBroadcast:
        case HloOpcode::kTranspose:
        case HloOpcode::kReverse:
        case HloOpcode::kReshape:
        case HloOpcode::kSlice:
        case HloOpcode::kDynamicSlice:
        case HloOpcode::kDynamicUpdateSlice:
        case HloOpcode::kConcatenate:
        case HloOpcode::kPad:
        case HloOpcode::kGather:
        case HloOpcode::kIota:
        case HloOpcode::kCopy:
            return true;
        default:
            return false;
    }
}

// How much index arithmetic a kernel does per row of its loop nest: for
// each instruction that maps the output's coordinates to an operand's (a
// broadcast, transpose, slice, ... of it) one unit per dimension beyond the
// first. Plain elementwise kernels walk their buffers linearly: 0.
double indexWorkPerRow(const HloInstruction& instruction) {
    auto work = [](const HloInstruction& i) {
        return movesIndices(i.opcode()) && i.shape().isArray()
                   ? static_cast<double>(std::max<int64_t>(1, i.shape().rank() - 1))
                   : 0.0;
    };
    if (instruction.opcode() != HloOpcode::kFusion) return work(instruction);
    double total = 0;
    if (const HloComputation* fused = instruction.fusedComputation())
        for (const auto& inner : fused->instructions()) total += work(*inner);
    return total;
}

// Rows of a kernel's loop nest over `shape`: its elements over the
// minor-most dimension (layout order; the last one without a layout).
double loopRows(const Shape& shape) {
    if (shape.isTuple()) return shape.tupleCount() > 0 ? loopRows(shape.tupleShape(0)) : 0;
    if (!shape.isArray() || shape.rank() == 0) return 0;
    int64_t minor = shape.rank() - 1;
    if (shape.hasLayout() && !shape.layout().minorToMajor().empty()) minor = shape.layout().minorToMajor().front();
    const double length = static_cast<double>(shape.dimensions()[static_cast<size_t>(minor)]);
    return length > 0 ? elementsOf(shape) / length : 0;
}

int classRank(OpClass c) {
    switch (c) {
        case OpClass::kDot: return 5;
        case OpClass::kConvolution: return 4;
        case OpClass::kReduction: return 3;
        case OpClass::kTranscendental: return 2;
        case OpClass::kElementwise: return 1;
        case OpClass::kDataMovement: return 0;
    }
    return 0;
}

class Walker {
public:
    Walker(const TargetDescription& target, bool expandFusions)
        : m_target(target), m_expandFusions(expandFusions) {}

    void walk(const HloComputation& computation, double executions, ModulePrediction& out) {
        for (const auto& owned : computation.instructions()) {
            const HloInstruction& instruction = *owned;
            switch (instruction.opcode()) {
                case HloOpcode::kWhile: {
                    double trips = static_cast<double>(CostAnalysis::whileTripCount(instruction).value_or(1));
                    if (const HloComputation* body = instruction.whileBody()) walk(*body, executions * trips, out);
                    if (const HloComputation* condition = instruction.whileCondition())
                        walk(*condition, executions * trips, out);
                    continue;
                }
                case HloOpcode::kCall:
                case HloOpcode::kAsyncStart:
                    for (const HloComputation* callee : instruction.calledComputations())
                        if (callee != nullptr) walk(*callee, executions, out);
                    continue;
                case HloOpcode::kConditional: {
                    ModulePrediction best;
                    bool first = true;
                    for (const HloComputation* branch : instruction.calledComputations()) {
                        if (branch == nullptr) continue;
                        ModulePrediction candidate;
                        walk(*branch, executions, candidate);
                        if (first || candidate.totalSeconds > best.totalSeconds) best = std::move(candidate);
                        first = false;
                    }
                    append(best, out);
                    continue;
                }
                case HloOpcode::kFusion:
                    if (m_expandFusions) {
                        if (const HloComputation* fused = instruction.fusedComputation()) {
                            walk(*fused, executions, out);
                            continue;
                        }
                    }
                    break;
                default:
                    break;
            }
            if (CostAnalysis::isFree(instruction)) continue;
            KernelPrediction kernel = predictKernelDetailed(instruction, m_target);
            kernel.executions = executions;
            add(std::move(kernel), out);
        }
    }

private:
    static void add(KernelPrediction kernel, ModulePrediction& out) {
        out.totalSeconds += kernel.totalSeconds * kernel.executions;
        out.kernelCount += static_cast<int64_t>(kernel.executions);
        out.kernels.push_back(std::move(kernel));
    }
    static void append(ModulePrediction& from, ModulePrediction& out) {
        for (KernelPrediction& kernel : from.kernels) add(std::move(kernel), out);
    }

    const TargetDescription& m_target;
    bool m_expandFusions;
};

ModulePrediction predict(const HloModule& module, const TargetDescription& target, bool expandFusions) {
    ModulePrediction prediction;
    if (const HloComputation* entry = module.entryComputation())
        Walker(target, expandFusions).walk(*entry, 1, prediction);
    if (target.cpuRuntime) {
        prediction.overheadSeconds = target.cpuRuntime->runSeconds;
        prediction.totalSeconds += prediction.overheadSeconds;
    }
    return prediction;
}

double fusedReads(const HloInstruction& fusion, const HloInstruction& producer,
                  const std::vector<double>* parameterReads);

// How many times a fused consumer evaluates each element of the producer
// (`consumerReads`: the consumer's KernelSummary::parameterReads when known).
double recomputeFactor(const HloInstruction& producer, const HloInstruction& consumer,
                       const InstructionCost& consumerCost,
                       const std::vector<double>* consumerReads = nullptr) {
    const double produced = elementsOf(producer.shape());
    if (produced <= 0) return 1;
    const double consumed = elementsOf(consumer.shape());
    const bool isOperand0 = consumer.operandCount() > 0 && consumer.operand(0) == &producer;
    switch (consumer.opcode()) {
        case HloOpcode::kFusion:
            return consumer.fusedComputation() ? fusedReads(consumer, producer, consumerReads) : 1;
        case HloOpcode::kBroadcast:
            return consumed / produced;
        case HloOpcode::kGather:
        case HloOpcode::kSlice:
        case HloOpcode::kDynamicSlice:
            return isOperand0 ? consumed / produced : 1;
        case HloOpcode::kDot:
        case HloOpcode::kRaggedDot:
        case HloOpcode::kScaledDot:
        case HloOpcode::kConvolution: {
            double uses = 0;
            for (int64_t i = 0; i < std::min<int64_t>(consumer.operandCount(), 2); ++i)
                if (consumer.operand(i) == &producer)
                    uses += consumerCost.flops / 2 / std::max(1.0, elementsOf(consumer.operand(i)->shape()));
            return std::max(1.0, uses);
        }
        case HloOpcode::kReduceWindow: {
            double window = 1;
            if (const Window* w = consumer.window())
                for (const WindowDimension& d : w->dimensions) window *= static_cast<double>(d.size);
            return consumed * window / produced;
        }
        default:
            return 1;
    }
}

// How many times a fusion's kernel evaluates each element of its parameter k (XLA's
// operand utilization): the root's elements once each, every instruction passing its count on
// to its operands times the factor above (a reduce-window reads each element once per window
// that covers it, a broadcast once per copy, a slice only what it keeps); 0 for a parameter
// nothing reads.
std::vector<double> parameterReadsOf(const HloInstruction& fusion) {
    const HloComputation* fused = fusion.fusedComputation();
    const std::vector<HloInstruction*> order = fused->postOrder();
    std::unordered_map<const HloInstruction*, double> times;
    times[fused->root()] = 1;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const HloInstruction* x = *it;
        const auto found = times.find(x);
        if (found == times.end() || found->second <= 0) continue;
        const double t = found->second;
        const bool dotLike = x->opcode() == HloOpcode::kDot || x->opcode() == HloOpcode::kConvolution ||
                             x->opcode() == HloOpcode::kRaggedDot || x->opcode() == HloOpcode::kScaledDot;
        const InstructionCost cost = dotLike ? CostAnalysis::of(*x) : InstructionCost{};
        std::vector<const HloInstruction*> seen;
        for (const HloInstruction* operand : x->operands()) {
            if (std::find(seen.begin(), seen.end(), operand) != seen.end()) continue;
            seen.push_back(operand);
            times[operand] += t * recomputeFactor(*operand, *x, cost);
        }
    }
    std::vector<double> reads(static_cast<size_t>(fused->parameterCount()), 0.0);
    for (int64_t k = 0; k < fused->parameterCount(); ++k)
        if (const HloInstruction* parameter = fused->parameter(k))
            if (const auto found = times.find(parameter); found != times.end())
                reads[static_cast<size_t>(k)] = found->second;
    return reads;
}

// How many times a fusion's kernel evaluates each element of its operand `producer`: the
// reads of the parameters it feeds; 1 where it feeds none.
double fusedReads(const HloInstruction& fusion, const HloInstruction& producer,
                  const std::vector<double>* parameterReads) {
    std::vector<double> computed;
    if (!parameterReads) {
        computed = parameterReadsOf(fusion);
        parameterReads = &computed;
    }
    double reads = 0;
    bool feeds = false;
    const int64_t n = std::min<int64_t>(fusion.operandCount(),
                                        static_cast<int64_t>(parameterReads->size()));
    for (int64_t i = 0; i < n; ++i)
        if (fusion.operand(i) == &producer) {
            feeds = true;
            reads += (*parameterReads)[static_cast<size_t>(i)];
        }
    return feeds && reads > 0 ? reads : 1;
}

}  // namespace

double gpuKernelThreads(const HloInstruction& instruction) {
    const HloInstruction* hero = &instruction;
    if (instruction.opcode() == HloOpcode::kFusion) {
        const HloComputation* fused = instruction.fusedComputation();
        if (!fused || !fused->root()) return 0;
        for (const auto& inner : fused->instructions())
            if (isMatrixOp(inner->opcode())) return 0;
        hero = fused->root();
        if (hero->opcode() == HloOpcode::kTuple) {
            if (hero->operandCount() == 0) return 0;
            const HloInstruction* chosen = hero->operand(0);
            for (const HloInstruction* output : hero->operands())
                if (output->opcode() == HloOpcode::kReduce) {
                    chosen = output;
                    break;
                }
            hero = chosen;
        }
        // A reduction under an epilogue of unary elementwise ops and bitcasts.
        const HloInstruction* x = hero;
        while (x->opcode() != HloOpcode::kReduce && x->operandCount() == 1 &&
               (hloOpcodeIsElementwise(x->opcode()) || x->opcode() == HloOpcode::kBitcast))
            x = x->operand(0);
        if (x->opcode() == HloOpcode::kReduce) hero = x;
    }
    if (isMatrixOp(hero->opcode())) return 0;
    if (hero->opcode() == HloOpcode::kReduce && hero->operandCount() > 0) {
        const Shape& input = hero->operand(0)->shape();
        if (!input.isArray() || input.rank() == 0) return 1;
        double reduced = 1;
        for (int64_t d : hero->dimensions()) reduced *= static_cast<double>(input.dimensions(d));
        const double outputs = std::max(1.0, elementsOf(input) / std::max(1.0, reduced));
        int64_t minor = input.rank() - 1;
        if (input.hasLayout() && !input.layout().minorToMajor().empty())
            minor = input.layout().minorToMajor().front();
        const auto& dims = hero->dimensions();
        const bool rows = std::find(dims.begin(), dims.end(), minor) != dims.end();
        double perOutput = std::min(reduced, 32.0);
        if (rows && reduced >= 32) perOutput = std::min(1024.0, std::ceil(std::ceil(reduced / 16) / 32) * 32);
        return outputs * perOutput;
    }
    return std::max(1.0, elementsOf(hero->shape()));
}

double KernelTimeParts::seconds(const std::array<double, kOpClassCount>& efficiency) const {
    const double classFactor = efficiency[static_cast<size_t>(opClass)];
    const double transcendentalFactor = efficiency[static_cast<size_t>(OpClass::kTranscendental)];
    const double compute = (flopsSeconds + rowSeconds) / classFactor + transcendentalSeconds / transcendentalFactor;
    return std::max(compute, trafficSeconds / classFactor) + launchSeconds;
}

KernelPrediction predictCost(const InstructionCost& cost, OpClass opClass, PrimitiveType elementType,
                             const TargetDescription& target, double workElements, double rows,
                             double threads, double extraRowSeconds) {
    KernelPrediction kernel;
    kernel.cost = cost;
    KernelTimeParts& parts = kernel.parts;
    parts.opClass = opClass;
    const bool matrix = opClass == OpClass::kDot || opClass == OpClass::kConvolution;
    double bandwidth = target.memoryBandwidthBytesPerSecond;
    double cores = 1;
    parts.launchSeconds = target.kernelLaunchSeconds;
    if (const auto& runtime = target.cpuRuntime) {
        if (workElements < 0)
            workElements = cost.bytesAccessed() / std::max(1, primitive_util::byteWidth(elementType));
        const bool parallel = target.cores > 1 && workElements >= runtime->parallelMinElements;
        if (parallel) {
            cores = static_cast<double>(target.cores);
            parts.launchSeconds += runtime->parallelDispatchSeconds;
        }
        kernel.threads = static_cast<int64_t>(cores);
        if (const double curve = runtime->bandwidthAt(cost.bytesAccessed(), parallel); curve > 0) bandwidth = curve;
        parts.rowSeconds = rows * runtime->rowSeconds / cores + extraRowSeconds;
    }
    // A GPU kernel of few threads leaves SMs and lanes idle (XLA's GPU model: active SMs x
    // active lanes of the peak).
    if (target.kind == TargetKind::kGpu && target.lanesPerCore > 0 && threads > 0 && !matrix)
        cores = std::min(1.0, threads / (static_cast<double>(target.cores) *
                                         static_cast<double>(target.lanesPerCore)));
    const double peak = target.peakFlopsPerSecond(elementType, matrix) * cores;
    if (cost.flops > 0) parts.flopsSeconds = cost.flops / peak;
    if (cost.transcendentals > 0) parts.transcendentalSeconds = cost.transcendentals / (target.transcendentalsPerSecond * cores);
    if (cost.bytesAccessed() > 0) parts.trafficSeconds = cost.bytesAccessed() / bandwidth;

    const double efficiency = target.efficiencyOf(opClass);
    kernel.computeSeconds = (parts.flopsSeconds + parts.rowSeconds) / efficiency +
                            parts.transcendentalSeconds / target.efficiencyOf(OpClass::kTranscendental);
    kernel.memorySeconds = parts.trafficSeconds / efficiency;
    kernel.launchSeconds = parts.launchSeconds;
    const double work = std::max(kernel.computeSeconds, kernel.memorySeconds);
    kernel.totalSeconds = work + kernel.launchSeconds;
    if (kernel.launchSeconds > work) kernel.boundBy = "launch";
    else if (kernel.computeSeconds >= kernel.memorySeconds) kernel.boundBy = "compute";
    else kernel.boundBy = "memory";
    return kernel;
}

namespace {

// The CPU backend's GEMM (Eigen's blocked product per batch element) runs small matrices
// below the rate that the calibration measures on a 256x256x256 product: each dimension d
// keeps a share d / (d + c) of it, relative to the calibration's shape, at most 1. The c
// are fitted to the backend's f32 GEMM on two threads over 45 timings of 27 shapes from
// 4x4x4 to 1024x256x512: the modelled time is within a factor 1.17 of the measured one for
// half of them and 1.9 at worst, where the full rate is off by 1.6x for half of them and
// up to 40x (4x4x4).
double cpuGemmShapeEfficiency(const HloInstruction& dot) {
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (!numbers || dot.operandCount() < 2) return 1;
    const Shape& lhs = dot.operand(0)->shape();
    const Shape& rhs = dot.operand(1)->shape();
    if (!lhs.isArray() || !rhs.isArray()) return 1;
    auto product = [](const Shape& shape, const std::vector<int64_t>& dims) {
        double n = 1;
        for (int64_t d : dims)
            if (d >= 0 && d < shape.rank()) n *= static_cast<double>(shape.dimensions(d));
        return n;
    };
    const double batch = product(lhs, numbers->lhsBatchDimensions);
    const double k = product(lhs, numbers->lhsContractingDimensions);
    const double m = elementsOf(lhs) / std::max(1.0, batch * k);
    const double n = elementsOf(rhs) / std::max(1.0, batch * k);
    if (m <= 0 || n <= 0 || k <= 0) return 1;
    auto share = [](double d, double c) { return d / (d + c); };
    auto shape = [&](double mm, double nn, double kk) {
        return share(mm, 16) * share(nn, 12) * share(kk, 4);
    };
    return std::min(1.0, shape(m, n, k) / shape(256, 256, 256));
}

// The rate a kernel's matrix products keep of the calibrated GEMM rate on the CPU: 1 for
// other targets and kernels without a dot; a fusion's dots weighed by their flops.
double cpuMatrixEfficiency(const HloInstruction& instruction, const TargetDescription& target) {
    if (target.kind != TargetKind::kCpu) return 1;
    if (instruction.opcode() == HloOpcode::kDot) return cpuGemmShapeEfficiency(instruction);
    const HloComputation* fused =
        instruction.opcode() == HloOpcode::kFusion ? instruction.fusedComputation() : nullptr;
    if (!fused) return 1;
    double flops = 0;
    double scaled = 0;
    for (const auto& inner : fused->instructions()) {
        if (inner->opcode() != HloOpcode::kDot) continue;
        const double f = CostAnalysis::of(*inner).flops;
        flops += f;
        scaled += f / cpuGemmShapeEfficiency(*inner);
    }
    return flops > 0 && scaled > 0 ? flops / scaled : 1;
}

// The CPU backend runs a fusion of a dot and its epilogue as the GEMM into
// tiles of about 4 MiB per thread, then the epilogue's loop over each tile:
// a second pass over the output after the product, reading the tile back
// from cache and writing the result; a convolution's epilogue likewise
// follows the convolution over its output. Its time, at the bandwidth of the
// tiles' working set plus the loop's per-row work; 0 for other kernels and
// targets. For kernels of the dot or convolution class (a fusion of that
// class holds the product: CostAnalysis::opClassOf).
double cpuEpilogueSeconds(const HloInstruction& instruction, const TargetDescription& target) {
    if (!target.cpuRuntime || instruction.opcode() != HloOpcode::kFusion) return 0;
    const HloComputation* fused = instruction.fusedComputation();
    if (!fused || !fused->root()) return 0;
    const HloInstruction* root = fused->root();
    while (root->opcode() == HloOpcode::kBitcast && root->operandCount() == 1) root = root->operand(0);
    if (root->opcode() == HloOpcode::kDot || root->opcode() == HloOpcode::kConvolution ||
        root->opcode() == HloOpcode::kParameter)
        return 0;  // no epilogue
    const auto& runtime = *target.cpuRuntime;
    const double bytes = CostAnalysis::byteSize(instruction.shape());
    const bool parallel = target.cores > 1 && elementsOf(instruction.shape()) >= runtime.parallelMinElements;
    const double cores = parallel ? static_cast<double>(target.cores) : 1.0;
    constexpr double kTileBytes = 4.0 * 1024 * 1024;
    const double bandwidth = runtime.bandwidthAt(std::min(bytes, kTileBytes * cores), parallel);
    const double pass = bandwidth > 0 ? 2 * bytes / bandwidth : 0;
    return pass + loopRows(instruction.shape()) * runtime.rowSeconds / cores;
}

}  // namespace

KernelPrediction predictKernelDetailed(const HloInstruction& instruction, const TargetDescription& target) {
    if (CostAnalysis::isFree(instruction)) {
        KernelPrediction none;
        none.instruction = &instruction;
        none.boundBy = "launch";
        return none;
    }
    double work = elementsOf(instruction.shape());
    for (const HloInstruction* operand : instruction.operands()) work = std::max(work, elementsOf(operand->shape()));
    const OpClass opClass = CostAnalysis::opClassOf(instruction);
    // Row costs: only a CPU runtime has them, and only loop kernels (not a
    // library call, not a reduction's own loop).
    const bool rowed = target.cpuRuntime && opClass != OpClass::kDot && opClass != OpClass::kConvolution &&
                       opClass != OpClass::kReduction;
    const InstructionCost cost = kernelCost(instruction);
    // A small matrix product's flops take longer at the GEMM's rate: they count as more.
    InstructionCost timed = cost;
    if (opClass == OpClass::kDot) timed.flops /= cpuMatrixEfficiency(instruction, target);
    // A dot or convolution fusion's epilogue pass runs after its product on the same cores:
    // row work.
    const double epilogue = opClass == OpClass::kDot || opClass == OpClass::kConvolution
                                ? cpuEpilogueSeconds(instruction, target)
                                : 0;
    KernelPrediction kernel =
        predictCost(timed, opClass, kernelElementType(instruction), target, work,
                    rowed ? loopRows(instruction.shape()) * indexWorkPerRow(instruction) : 0,
                    target.kind == TargetKind::kGpu ? gpuKernelThreads(instruction) : 0, epilogue);
    kernel.cost = cost;
    kernel.instruction = &instruction;
    return kernel;
}

double predictKernel(const HloInstruction& instruction, const TargetDescription& target) {
    return predictKernelDetailed(instruction, target).totalSeconds;
}

ModulePrediction predictModule(const HloModule& module, const TargetDescription& target) {
    return predict(module, target, /*expandFusions=*/false);
}

ModulePrediction predictUnfused(const HloModule& module, const TargetDescription& target) {
    return predict(module, target, /*expandFusions=*/true);
}

KernelSummary summarizeKernel(const HloInstruction& instruction) {
    KernelSummary summary;
    summary.free = CostAnalysis::isFree(instruction);
    if (!summary.free) summary.cost = kernelCost(instruction);
    summary.opClass = CostAnalysis::opClassOf(instruction);
    summary.elementType = kernelElementType(instruction);
    summary.threads = summary.free ? 0 : gpuKernelThreads(instruction);
    if (instruction.opcode() == HloOpcode::kFusion && instruction.fusedComputation())
        summary.parameterReads = parameterReadsOf(instruction);
    return summary;
}

const KernelSummary& KernelSummaryCache::of(const HloInstruction& instruction) {
    if (const int64_t id = instruction.uniqueId(); id >= 0) {
        const auto index = static_cast<size_t>(id);
        if (index >= m_byId.size()) m_byId.resize(std::max(index + 1, 2 * m_byId.size()));
        std::unique_ptr<KernelSummary>& slot = m_byId[index];
        if (!slot) slot = std::make_unique<KernelSummary>(summarizeKernel(instruction));
        return *slot;
    }
    auto it = m_summaries.find(&instruction);
    if (it == m_summaries.end()) it = m_summaries.emplace(&instruction, summarizeKernel(instruction)).first;
    return it->second;
}

namespace {

FusionEstimate estimateFromSummaries(const HloInstruction& producer, const HloInstruction& consumer,
                                     const KernelSummary& p, const KernelSummary& c,
                                     const TargetDescription& target) {
    FusionEstimate estimate;
    // Each side's cost is computed once (a fusion's walks its body) and used
    // both for the separate kernels and for the fused one.
    const InstructionCost& producerCost = p.cost;
    const InstructionCost& consumerCost = c.cost;
    estimate.producerSeconds =
        p.free ? 0 : predictCost(producerCost, p.opClass, p.elementType, target, -1, 0, p.threads).totalSeconds;
    const double consumerSeconds =
        c.free ? 0 : predictCost(consumerCost, c.opClass, c.elementType, target, -1, 0, c.threads).totalSeconds;
    estimate.unfusedSeconds = estimate.producerSeconds + consumerSeconds;
    const double factor = recomputeFactor(producer, consumer, consumerCost, &c.parameterReads);

    InstructionCost fused;
    fused.flops = consumerCost.flops + producerCost.flops * factor;
    fused.transcendentals = consumerCost.transcendentals + producerCost.transcendentals * factor;
    // External inputs, each read once: what the producer reads (slice- and
    // gather-aware), plus the consumer's other operands the producer does not read.
    fused.bytesRead = producerCost.bytesRead;
    const auto& producerOperands = producer.operands();
    const auto& consumerOperands = consumer.operands();
    for (size_t i = 0; i < consumerOperands.size(); ++i) {
        const HloInstruction* operand = consumerOperands[i];
        if (operand == &producer ||
            std::find(producerOperands.begin(), producerOperands.end(), operand) != producerOperands.end() ||
            std::find(consumerOperands.begin(), consumerOperands.begin() + static_cast<std::ptrdiff_t>(i),
                      operand) != consumerOperands.begin() + static_cast<std::ptrdiff_t>(i))
            continue;
        fused.bytesRead += CostAnalysis::byteSize(operand->shape());
    }
    fused.outputBytes = consumerCost.outputBytes;
    fused.bytesWritten = consumerCost.bytesWritten;
    bool otherUsers = producer.isRoot();
    for (const HloInstruction* user : producer.users())
        if (user != &consumer) otherUsers = true;
    if (otherUsers) fused.bytesWritten += producerCost.outputBytes;

    // The fused kernel is launched as its hero's: the consumer's, or a reduction producer's
    // under an elementwise consumer.
    OpClass opClass = c.opClass;
    PrimitiveType type = c.elementType;
    double threads = c.threads;
    if (classRank(p.opClass) > classRank(opClass)) {
        opClass = p.opClass;
        type = p.elementType;
        threads = p.threads;
    }
    if (p.free || c.free) threads = p.free ? c.threads : p.threads;
    estimate.fusedSeconds = predictCost(fused, opClass, type, target, -1, 0, threads).totalSeconds;
    return estimate;
}

}  // namespace

FusionEstimate estimateFusion(const HloInstruction& producer, const HloInstruction& consumer,
                              const TargetDescription& target) {
    return estimateFromSummaries(producer, consumer, summarizeKernel(producer),
                                 summarizeKernel(consumer), target);
}

FusionEstimate estimateFusion(const HloInstruction& producer, const HloInstruction& consumer,
                              const TargetDescription& target, KernelSummaryCache& cache) {
    const KernelSummary& p = cache.of(producer);
    const KernelSummary& c = cache.of(consumer);
    return estimateFromSummaries(producer, consumer, p, c, target);
}

}  // namespace hloscope
