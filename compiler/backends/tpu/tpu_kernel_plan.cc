// Kernel plans of the TPU timeline simulator (see tpu_simulator.h): what a
// kernel does (MXU, VPU, bytes per operand and output, padded), its tile
// loop chosen to fit VMEM, and the grid steps that loop produces.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "compiler/backends/tpu/tpu_sim_internal.h"
#include "compiler/cost/cost_analysis.h"
#include "compiler/layout/tpu_tiling.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::tpu_sim {

int64_t ceilDiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

int64_t vregsOf(const Shape& shape, int64_t vregBytes) {
    if (shape.isTuple()) {
        int64_t sum = 0;
        for (const Shape& element : shape.tupleShapes()) sum += vregsOf(element, vregBytes);
        return sum;
    }
    if (!shape.isArray() || shape.elementCount() == 0) return 0;
    return std::max<int64_t>(1, ceilDiv(paddedSizeInBytes(shape), vregBytes));
}

std::string formatBytes(double bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (std::abs(bytes) >= 1024 && unit < 4) {
        bytes /= 1024;
        ++unit;
    }
    std::ostringstream out;
    out.precision(unit == 0 ? 0 : 3);
    out << (unit == 0 ? std::fixed : std::defaultfloat) << bytes << ' ' << units[unit];
    return out.str();
}

StatusOr<Chip> chipFromTarget(const TargetDescription& target) {
    if (target.kind != TargetKind::kTpu)
        return invalidArgument("target '" + target.name + "' is not a TPU (kind " +
                               std::string(targetKindName(target.kind)) + ")");
    if (!target.tpu)
        return failedPrecondition(
            "target '" + target.name +
            "' has no \"tpu\" section (MXUs, VPU shape, clock, DMA figures) to simulate with");
    if (target.onChipMemoryBytes <= 0)
        return failedPrecondition("target '" + target.name +
                                  "' gives no VMEM size (onChipMemoryBytes)");
    const TargetDescription::TpuFigures& figures = *target.tpu;
    Chip chip;
    chip.name = target.name;
    chip.cores = std::max<int64_t>(1, target.cores);
    chip.mxusPerCore = figures.mxusPerCore;
    chip.mxuRows = figures.mxuRows;
    chip.mxuColumns = figures.mxuColumns;
    chip.sublanes = figures.vpuSublanes;
    chip.lanes = figures.vpuLanes;
    chip.clockHz = figures.clockHz;
    chip.hbmBytesPerSecond = target.memoryBandwidthBytesPerSecond;
    chip.vmemBytes = target.onChipMemoryBytes;
    chip.dmaLatencySeconds = figures.dmaLatencySeconds;
    chip.gridStepSeconds = figures.gridStepSeconds;
    const double vectorPeak = target.peakFlopsPerSecond(PrimitiveType::F32, /*matrix=*/false);
    chip.vregOpsPerSecond =
        vectorPeak / static_cast<double>(chip.cores * chip.sublanes * chip.lanes);
    chip.transcendentalsPerSecond =
        target.transcendentalsPerSecond / static_cast<double>(chip.cores);
    chip.matrixPeakTflops = target.matrixPeakTflops;
    return chip;
}

namespace {

bool isMatrixOpcode(HloOpcode opcode) {
    return opcode == HloOpcode::kDot || opcode == HloOpcode::kRaggedDot ||
           opcode == HloOpcode::kScaledDot || opcode == HloOpcode::kConvolution;
}

// Collectives and transfers (ICI and the host are not simulated).
bool isCollective(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kRaggedAllToAll:
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteStart:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectiveReduce:
        case HloOpcode::kSend:
        case HloOpcode::kRecv:
            return true;
        default:
            return false;
    }
}

// Kernels the simulator has no model for (their analytical time is used).
bool isUnmodelled(HloOpcode opcode) {
    if (isCollective(opcode)) return true;
    switch (opcode) {
        case HloOpcode::kSort:
        case HloOpcode::kCustomCall:
        case HloOpcode::kFft:
        case HloOpcode::kTriangularSolve:
        case HloOpcode::kCholesky:
        case HloOpcode::kTopK:
        case HloOpcode::kScan:
        case HloOpcode::kInfeed:
        case HloOpcode::kOutfeed:
        case HloOpcode::kWhile:
        case HloOpcode::kConditional:
        case HloOpcode::kCall:
        case HloOpcode::kAsyncStart:
            return true;
        default:
            return false;
    }
}

// Instructions of a called computation that do work (the reducer's ops).
double workingInstructions(const HloComputation* computation) {
    if (computation == nullptr) return 1;
    double count = 0;
    for (const auto& inner : computation->instructions())
        if (!CostAnalysis::isFree(*inner)) count += 1;
    return std::max(1.0, count);
}

double windowSize(const HloInstruction& instruction) {
    double size = 1;
    if (const Window* window = instruction.window())
        for (const WindowDimension& d : window->dimensions)
            size *= static_cast<double>(std::max<int64_t>(d.size, 1));
    return size;
}

BodyWork bodyWorkOf(const HloInstruction& kernel, const Chip& chip) {
    BodyWork work;
    const int64_t vregBytes = chip.vregBytes();
    const double vregElements = static_cast<double>(chip.sublanes * chip.lanes);
    std::vector<const HloInstruction*> body;
    if (kernel.opcode() == HloOpcode::kFusion && kernel.fusedComputation() != nullptr) {
        for (const auto& inner : kernel.fusedComputation()->instructions())
            body.push_back(inner.get());
    } else {
        body.push_back(&kernel);
    }
    for (const HloInstruction* instruction : body) {
        const HloOpcode opcode = instruction->opcode();
        if (CostAnalysis::isFree(*instruction)) continue;
        const double vregs = static_cast<double>(vregsOf(instruction->shape(), vregBytes));
        if (isUnmodelled(opcode)) {
            if (work.unmodelled == nullptr) work.unmodelled = instruction;
            continue;
        }
        if (isMatrixOpcode(opcode)) {
            work.matrixOps.push_back(instruction);
            continue;
        }
        switch (opcode) {
            case HloOpcode::kReduce: {
                const double inputs =
                    instruction->operandCount() > 0
                        ? static_cast<double>(vregsOf(instruction->operand(0)->shape(), vregBytes))
                        : 0;
                const double arrays =
                    std::max(1.0, static_cast<double>(instruction->operandCount()) / 2);
                work.vregOps += inputs * arrays * workingInstructions(instruction->toApply());
                work.reduction = true;
                continue;
            }
            case HloOpcode::kReduceWindow:
                work.vregOps +=
                    vregs * windowSize(*instruction) * workingInstructions(instruction->toApply());
                work.reduction = true;
                continue;
            case HloOpcode::kSelectAndScatter: {
                const double source =
                    instruction->operandCount() > 1
                        ? static_cast<double>(vregsOf(instruction->operand(1)->shape(), vregBytes))
                        : vregs;
                work.vregOps += source * (windowSize(*instruction) + 1);
                work.reduction = true;
                continue;
            }
            case HloOpcode::kBatchNormTraining:
            case HloOpcode::kBatchNormGrad:
            case HloOpcode::kBatchNormInference: {
                const double input =
                    instruction->operandCount() > 0
                        ? static_cast<double>(vregsOf(instruction->operand(0)->shape(), vregBytes))
                        : vregs;
                work.vregOps += 4 * input;
                work.reduction = opcode != HloOpcode::kBatchNormInference;
                work.elementwise = true;
                continue;
            }
            case HloOpcode::kMap:
                work.vregOps += vregs * workingInstructions(instruction->toApply());
                work.elementwise = true;
                continue;
            case HloOpcode::kTranspose:
            case HloOpcode::kCopy:
            case HloOpcode::kCopyStart:
            case HloOpcode::kIota:
            case HloOpcode::kGather:
            case HloOpcode::kRng:
            case HloOpcode::kRngBitGenerator:
                work.vregOps += vregs;  // relayout through vector registers / generated values
                continue;
            case HloOpcode::kScatter: {
                const double updates =
                    instruction->operandCount() > 2
                        ? static_cast<double>(vregsOf(instruction->operand(2)->shape(), vregBytes))
                        : vregs;
                work.vregOps += updates * workingInstructions(instruction->toApply());
                continue;
            }
            default:
                break;
        }
        if (instruction->isElementwise()) {
            work.elementwise = true;
            if (CostAnalysis::isTranscendental(opcode))
                work.transcendentals += vregs * vregElements;
            else
                work.vregOps += vregs;
        }
        // Other data movement (broadcast, reshape, slice, concatenate, pad,
        // reverse, dynamic slices) only addresses memory: no VPU op counted.
    }
    return work;
}

int64_t scaled(int64_t bytes, double scale) {
    return static_cast<int64_t>(std::llround(static_cast<double>(bytes) * scale));
}

double arrayElements(const Shape& shape) {
    if (shape.isTuple()) {
        double sum = 0;
        for (const Shape& element : shape.tupleShapes()) sum += arrayElements(element);
        return sum;
    }
    return shape.isArray() ? static_cast<double>(shape.elementCount()) : 0;
}

void appendLeaves(const Shape& shape, std::vector<const Shape*>& out) {
    if (shape.isTuple()) {
        for (const Shape& element : shape.tupleShapes()) appendLeaves(element, out);
        return;
    }
    if (shape.isArray()) out.push_back(&shape);
}

// Operands and outputs at their padded sizes, scaled down where the cost
// analysis says the kernel reads or writes only part of them (slices,
// gathers, in-place dynamic-update-slice).
KernelBuffers buffersOf(const HloInstruction& kernel) {
    KernelBuffers buffers;
    const InstructionCost cost = kernel.opcode() == HloOpcode::kFusion
                                     ? CostAnalysis::ofFusion(kernel)
                                     : CostAnalysis::of(kernel);
    buffers.flops = cost.flops;
    std::set<const HloInstruction*> seen;
    double logicalIn = 0;
    for (int64_t i = 0; i < kernel.operandCount(); ++i) {
        const HloInstruction* operand = kernel.operand(i);
        if (!seen.insert(operand).second) continue;
        Buffer buffer;
        buffer.bytes = paddedSizeInBytes(operand->shape());
        buffer.elements = arrayElements(operand->shape());
        buffer.source = operand;
        logicalIn += static_cast<double>(logicalSizeInBytes(operand->shape()));
        buffers.operands.push_back(buffer);
    }
    const double inScale = logicalIn > 0 ? std::min(1.0, cost.bytesRead / logicalIn) : 1.0;
    for (Buffer& buffer : buffers.operands) buffer.bytes = scaled(buffer.bytes, inScale);
    const double logicalOut = static_cast<double>(logicalSizeInBytes(kernel.shape()));
    const double outScale = logicalOut > 0 ? std::min(1.0, cost.bytesWritten / logicalOut) : 1.0;
    std::vector<const Shape*> leaves;
    appendLeaves(kernel.shape(), leaves);
    for (const Shape* leaf : leaves) {
        Buffer buffer;
        buffer.bytes = scaled(paddedSizeInBytes(*leaf), outScale);
        buffer.elements = static_cast<double>(leaf->elementCount());
        buffers.outputs.push_back(buffer);
    }
    return buffers;
}

// Evenly spread integer share of `total` for block `index` of `count`.
int64_t shareOf(int64_t total, int64_t index, int64_t count) {
    const auto at = [&](int64_t i) {
        return static_cast<int64_t>(static_cast<long double>(total) * i / count);
    };
    return at(index + 1) - at(index);
}

// ---------------------------------------------------------------------------
// Streamed kernels: equal blocks of every streamed operand and output.

class StreamSteps : public StepSource {
public:
    StreamSteps(int64_t blocks, int64_t cores, int64_t inBytes, int64_t outBytes,
                int64_t spillBytes, double vpuSecondsPerBlock, double flops)
        : m_blocks(blocks),
          m_cores(cores),
          m_in(inBytes),
          m_out(outBytes),
          m_spill(spillBytes),
          m_vpu(vpuSecondsPerBlock),
          m_flops(flops) {}
    int64_t count() const override { return ceilDiv(m_blocks, m_cores); }
    GridStep next() override {
        GridStep step;
        const int64_t first = m_step * m_cores;
        const int64_t last = std::min(m_blocks, first + m_cores);
        for (int64_t b = first; b < last; ++b) {
            step.inBytes += shareOf(m_in, b, m_blocks) + m_spill;
            step.outBytes += shareOf(m_out, b, m_blocks) + m_spill;
            step.flops += m_flops / static_cast<double>(m_blocks);
        }
        const int64_t active = last - first;
        step.vpuSeconds = active > 0 ? m_vpu : 0;
        step.vpuBusy = m_vpu * static_cast<double>(active) / static_cast<double>(m_cores);
        ++m_step;
        return step;
    }

private:
    int64_t m_blocks, m_cores, m_in, m_out, m_spill;
    double m_vpu, m_flops;
    int64_t m_step = 0;
};

// Working set of one core with `blocks` blocks: resident bytes plus two
// buffers of each streamed buffer's block (at least one tile each).
double streamWorkingSet(const std::vector<const Buffer*>& streamed, double fixed, int64_t blocks,
                        int64_t tile) {
    double sum = fixed;
    for (const Buffer* buffer : streamed) {
        const double block = static_cast<double>(buffer->bytes) / static_cast<double>(blocks);
        sum += 2 * std::max(block, static_cast<double>(std::min(buffer->bytes, tile)));
    }
    return sum;
}

}  // namespace

double vpuSecondsOf(double vregOps, double transcendentals, const Chip& chip) {
    return vregOps / chip.vregOpsPerSecond + transcendentals / chip.transcendentalsPerSecond;
}

std::string kindOf(const BodyWork& work) {
    if (!work.matrixOps.empty()) {
        for (const HloInstruction* op : work.matrixOps)
            if (op->opcode() != HloOpcode::kConvolution) return "matmul";
        return "convolution";
    }
    if (work.reduction) return "reduction";
    if (work.elementwise) return "elementwise";
    return "copy";
}

// The estimate that picks block counts and tiles: fill (first loads),
// steady state (the slowest of DMA, compute and latency-bound DMA with two
// buffers), drain (last compute and store).
double estimatePipeline(const Chip& chip, double steps, double firstIn, double lastOut,
                        double totalBytes, double computePerStep) {
    const double bw = chip.hbmBytesPerSecond;
    const double dmaPerStep = totalBytes / std::max(1.0, steps) / bw;
    const double stage = chip.gridStepSeconds + computePerStep;
    // With two buffers a step's loads are issued when the step two before it
    // has computed: latency, transfer and compute of one step span two steps.
    const double steady =
        steps * std::max({dmaPerStep, stage, (chip.dmaLatencySeconds + dmaPerStep + stage) / 2});
    return chip.dmaLatencySeconds + firstIn / bw + steady + chip.dmaLatencySeconds + lastOut / bw;
}

KernelPlan planStreamed(const BodyWork& work, KernelBuffers buffers, const Chip& chip,
                        const std::string& how) {
    KernelPlan plan;
    plan.kind = kindOf(work);
    const double budget = chip.vmemBytes;
    const int64_t tile = chip.vregBytes();
    double iteration = 0;
    for (const Buffer& b : buffers.operands) iteration = std::max(iteration, b.elements);
    for (const Buffer& b : buffers.outputs) iteration = std::max(iteration, b.elements);
    const double residentLimit = budget / 16;
    for (Buffer& b : buffers.operands)
        b.resident = b.elements * 2 <= iteration && static_cast<double>(b.bytes) <= residentLimit;
    const bool reduction = work.reduction;
    for (Buffer& b : buffers.outputs)
        b.resident = reduction && b.elements * 2 <= iteration &&
                     static_cast<double>(b.bytes) <= residentLimit;

    auto fixedBytes = [&] {
        double fixed = 0;
        for (const Buffer& b : buffers.operands)
            fixed += b.resident ? static_cast<double>(b.bytes) : 0;
        for (const Buffer& b : buffers.outputs)
            fixed += b.resident ? static_cast<double>(b.bytes) : 0;
        return fixed;
    };
    if (fixedBytes() > budget / 2) {  // too much to keep resident: stream it all
        for (Buffer& b : buffers.operands) b.resident = false;
        for (Buffer& b : buffers.outputs) b.resident = false;
    }
    const double fixed = fixedBytes();
    std::vector<const Buffer*> streamed;
    int64_t inBytes = 0, outBytes = 0, largest = 0, accumulatedTiles = 0;
    for (const Buffer& b : buffers.operands) {
        if (b.resident)
            plan.prologueBytes += b.bytes;
        else
            streamed.push_back(&b), inBytes += b.bytes, largest = std::max(largest, b.bytes);
    }
    bool streamedOutput = false;
    for (const Buffer& b : buffers.outputs) {
        if (b.resident) {
            plan.epilogueBytes += b.bytes;
            accumulatedTiles =
                std::max(accumulatedTiles, std::max<int64_t>(1, ceilDiv(b.bytes, tile)));
        } else {
            streamed.push_back(&b), outBytes += b.bytes, largest = std::max(largest, b.bytes);
            streamedOutput = true;
        }
    }
    const int64_t units = std::max<int64_t>(1, ceilDiv(largest, tile));
    const int64_t maxBlocks = std::min<int64_t>(units, 1 << 16);
    const double vpuTotal = vpuSecondsOf(work.vregOps, work.transcendentals, chip);

    // The smallest working set: one output tile with its share of the input.
    const bool accumulating = reduction && !streamedOutput && accumulatedTiles > 0;
    const int64_t minimalBlocks = accumulating ? std::min(accumulatedTiles, maxBlocks) : maxBlocks;
    const double minimal = streamWorkingSet(streamed, fixed, minimalBlocks, tile);
    int64_t spill = 0;
    int64_t blocks = 1;
    while (blocks < maxBlocks && streamWorkingSet(streamed, fixed, blocks, tile) > budget)
        blocks *= 2;
    blocks = std::min(blocks, maxBlocks);
    const double smallest = streamWorkingSet(streamed, fixed, blocks, tile);
    if (smallest > budget) {
        // Not even one tile of each buffer fits: the excess goes to HBM and back every block.
        spill = static_cast<int64_t>(std::ceil((smallest - budget) / 2));
        plan.fitsVmem = false;
        plan.note = "spills: one tile of each of its " + std::to_string(streamed.size()) +
                    " streamed buffers, double-buffered, with " + formatBytes(fixed) +
                    " resident needs " + formatBytes(smallest) + ", more than the " +
                    formatBytes(budget) +
                    " of VMEM; the excess is written to HBM and read back every block";
    } else {
        // Pick the block count with the best estimate among powers of two.
        double best = std::numeric_limits<double>::infinity();
        int64_t bestBlocks = blocks;
        for (int64_t n = blocks; n <= maxBlocks; n *= 2) {
            const double steps = static_cast<double>(ceilDiv(n, chip.cores));
            const double perBlockIn = static_cast<double>(inBytes) / static_cast<double>(n);
            const double perBlockOut = static_cast<double>(outBytes) / static_cast<double>(n);
            const double active = static_cast<double>(std::min(n, chip.cores));
            const double estimate = estimatePipeline(
                chip, steps, active * perBlockIn + static_cast<double>(plan.prologueBytes),
                active * perBlockOut + static_cast<double>(plan.epilogueBytes),
                static_cast<double>(inBytes + outBytes), vpuTotal / static_cast<double>(n));
            if (estimate < best) best = estimate, bestBlocks = n;
            if (n > maxBlocks / 2) break;
        }
        blocks = bestBlocks;
        if (minimal > budget && accumulating) {
            plan.fitsVmem = false;
            plan.splits = ceilDiv(blocks, accumulatedTiles);
            plan.note = "split: one output tile's share of the input, double-buffered, needs " +
                        formatBytes(minimal) + ", more than the " + formatBytes(budget) +
                        " of VMEM; the reduced dimension is chunked into " +
                        std::to_string(plan.splits) + " pieces accumulated in VMEM";
        }
    }
    plan.blocks = blocks;
    const double workingSet = streamWorkingSet(streamed, fixed, blocks, tile);
    plan.vmemPeakBytes = static_cast<int64_t>(std::min(workingSet, budget));
    std::ostringstream tiling;
    tiling << blocks << " block" << (blocks == 1 ? "" : "s") << " of "
           << formatBytes(static_cast<double>(inBytes) / blocks) << " in / "
           << formatBytes(static_cast<double>(outBytes) / blocks) << " out";
    if (plan.prologueBytes > 0)
        tiling << ", " << formatBytes(static_cast<double>(plan.prologueBytes)) << " resident";
    if (plan.epilogueBytes > 0)
        tiling << ", " << formatBytes(static_cast<double>(plan.epilogueBytes)) << " accumulated";
    if (chip.cores > 1) tiling << ", " << chip.cores << " cores";
    tiling << how;
    plan.tiling = tiling.str();
    plan.steps =
        std::make_unique<StreamSteps>(blocks, chip.cores, inBytes, outBytes, spill,
                                      vpuTotal / static_cast<double>(blocks), buffers.flops);
    return plan;
}

KernelPlan planKernel(const HloInstruction& kernel, const Chip& chip) {
    const BodyWork work = bodyWorkOf(kernel, chip);
    if (work.unmodelled != nullptr) {
        KernelPlan plan;
        plan.kind = "unmodelled";
        plan.modelled = false;
        const HloOpcode opcode = work.unmodelled->opcode();
        std::string what(hloOpcodeString(opcode));
        if (opcode == HloOpcode::kCustomCall && !work.unmodelled->customCallTarget().empty())
            what += " \"" + std::string(work.unmodelled->customCallTarget()) + "\"";
        plan.note = isCollective(opcode)
                        ? what +
                              ": inter-chip (ICI) communication is not simulated; the analytical "
                              "model's time is used"
                        : "no TPU model for " + what + ": the analytical model's time is used";
        return plan;
    }
    KernelBuffers buffers = buffersOf(kernel);
    if (!work.matrixOps.empty() && work.matrixOps.front()->operandCount() >= 2) {
        if (!vpuIsFaster(work, chip)) return planMatrix(kernel, work, buffers, chip);
        // Depthwise convolutions, tiny matrices: every multiply-add on the VPU.
        BodyWork onVpu = work;
        for (const HloInstruction* op : work.matrixOps)
            onVpu.vregOps +=
                CostAnalysis::of(*op).flops / static_cast<double>(chip.sublanes * chip.lanes);
        return planStreamed(
            onVpu, std::move(buffers), chip,
            ", multiply-adds on the VPU (padded to the 128x128 MXU they would take longer)");
    }
    return planStreamed(work, std::move(buffers), chip);
}

}  // namespace hloscope::tpu_sim
