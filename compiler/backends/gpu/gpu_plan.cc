#include "compiler/backends/gpu/gpu_plan.h"

#include <algorithm>
#include <chrono>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/buffers/heap_layout.h"
#include "core/ir/async_wrapping.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/hlo_instruction.h"

namespace hloscope {
namespace gpu_plan_internal {

Status notOnGpu(const HloInstruction& instruction, const std::string& why) {
    return Status(StatusCode::kUnimplemented, "%" + instruction.name() + ": " + why);
}

int64_t denseBytes(const Shape& shape) {
    return std::max<int64_t>(shape.elementCount(), 0) *
           primitive_util::byteWidth(shape.elementType());
}

void collectLeaves(const Shape& shape, std::vector<const Shape*>& out) {
    if (shape.isTuple()) {
        for (const Shape& element : shape.tupleShapes()) collectLeaves(element, out);
    } else if (shape.isArray()) {
        out.push_back(&shape);
    }
}

size_t leafCount(const Shape& shape) {
    std::vector<const Shape*> leaves;
    collectLeaves(shape, leaves);
    return leaves.size();
}

std::vector<const Shape*> leavesOf(const Shape& shape) {
    std::vector<const Shape*> leaves;
    collectLeaves(shape, leaves);
    return leaves;
}

bool sameArrayShape(const Shape& a, const Shape& b) {
    if (a.isTuple() != b.isTuple()) return false;
    if (a.isTuple()) {
        if (a.tupleCount() != b.tupleCount()) return false;
        for (int64_t i = 0; i < a.tupleCount(); ++i)
            if (!sameArrayShape(a.tupleShape(i), b.tupleShape(i))) return false;
        return true;
    }
    return a.elementType() == b.elementType() && a.dimensions() == b.dimensions();
}

bool sameLeaves(const std::vector<const Shape*>& a, const std::vector<const Shape*>& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k)
        if (!sameArrayShape(*a[k], *b[k])) return false;
    return true;
}

std::pair<size_t, size_t> elementLeaves(const Shape& tuple, int64_t k) {
    size_t first = 0;
    for (int64_t i = 0; i < k; ++i) first += leafCount(tuple.tupleShape(i));
    return {first, leafCount(tuple.tupleShape(k))};
}

namespace {

int64_t product(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

// Elements each output reduces (0: not a reduce), the kernel-shape key.
int64_t reducedCount(const HloInstruction* output) {
    if (output->opcode() == HloOpcode::kGetTupleElement) output = output->operand(0);
    if (output->opcode() != HloOpcode::kReduce) return 0;
    int64_t count = 1;
    for (int64_t d : output->dimensions()) count *= output->operand(0)->shape().dimensions(d);
    return count;
}

// A float32 dot that is a (batched) matrix product: batch dimensions
// leading in both operands, and after them each operand's free dimensions
// and contracting dimensions in two contiguous runs (either order; the
// contracting ones in the same order on both sides): row-major storage then
// is [batch, m, k] or [batch, k, m] for lhs and [batch, k, n] or
// [batch, n, k] for rhs, what the gemm step (cuBLAS) computes.
using GemmShape = GpuGemmShape;
std::optional<GemmShape> gemmShapeOf(const HloInstruction& dot) {
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (!numbers || !numbers->lhsRaggedDimensions.empty() || !numbers->rhsGroupDimensions.empty())
        return std::nullopt;
    const Shape& lhs = dot.operand(0)->shape();
    const Shape& rhs = dot.operand(1)->shape();
    if (dot.shape().elementType() != PrimitiveType::F32 ||
        lhs.elementType() != PrimitiveType::F32 || rhs.elementType() != PrimitiveType::F32)
        return std::nullopt;
    const int64_t nb = static_cast<int64_t>(numbers->lhsBatchDimensions.size());
    const int64_t nc = static_cast<int64_t>(numbers->lhsContractingDimensions.size());
    if (nc == 0 || numbers->rhsContractingDimensions.size() != static_cast<size_t>(nc))
        return std::nullopt;
    GemmShape gemm;
    for (int64_t i = 0; i < nb; ++i) {
        if (numbers->lhsBatchDimensions[static_cast<size_t>(i)] != i ||
            numbers->rhsBatchDimensions[static_cast<size_t>(i)] != i)
            return std::nullopt;
        gemm.batch *= lhs.dimensions(i);
    }
    // Whether `contracting` is the run [start, start + nc) in order.
    auto isRun = [&](const std::vector<int64_t>& contracting, int64_t start) {
        for (int64_t i = 0; i < nc; ++i)
            if (contracting[static_cast<size_t>(i)] != start + i) return false;
        return true;
    };
    auto product = [](const Shape& shape, int64_t from, int64_t to) {
        int64_t n = 1;
        for (int64_t d = from; d < to; ++d) n *= shape.dimensions(d);
        return n;
    };
    const int64_t lhsRank = lhs.rank(), rhsRank = rhs.rank();
    if (isRun(numbers->lhsContractingDimensions, lhsRank - nc)) {
        gemm.m = product(lhs, nb, lhsRank - nc);
    } else if (isRun(numbers->lhsContractingDimensions, nb)) {
        gemm.lhsTransposed = true;
        gemm.m = product(lhs, nb + nc, lhsRank);
    } else {
        return std::nullopt;
    }
    if (isRun(numbers->rhsContractingDimensions, nb)) {
        gemm.n = product(rhs, nb + nc, rhsRank);
    } else if (isRun(numbers->rhsContractingDimensions, rhsRank - nc)) {
        gemm.rhsTransposed = true;
        gemm.n = product(rhs, nb, rhsRank - nc);
    } else {
        return std::nullopt;
    }
    gemm.k = 1;
    for (int64_t d : numbers->lhsContractingDimensions) gemm.k *= lhs.dimensions(d);
    if (gemm.batch * gemm.m * gemm.n * gemm.k == 0) return std::nullopt;
    return gemm;
}

// The fused parameter behind `operand`, through copies of the same
// dimensions (layout changes, which dense row-major buffers do not have),
// or nullptr.
const HloInstruction* parameterBehind(const HloInstruction* operand) {
    while (operand->opcode() == HloOpcode::kCopy &&
           operand->operand(0)->shape().dimensions() == operand->shape().dimensions())
        operand = operand->operand(0);
    return operand->opcode() == HloOpcode::kParameter ? operand : nullptr;
}

// The dot of a kOutput fusion whose other instructions are an elementwise
// epilogue of it at the output's own index (as the CPU backend plans them).
const HloInstruction* epilogueDot(const HloInstruction& fusion) {
    const HloComputation* fused = fusion.fusedComputation();
    if (!fused || !fusion.shape().isArray()) return nullptr;
    const HloInstruction* dot = nullptr;
    for (const auto& instruction : fused->instructions()) {
        if (instruction->opcode() == HloOpcode::kConvolution) return nullptr;
        if (instruction->opcode() != HloOpcode::kDot) continue;
        if (dot) return nullptr;
        dot = instruction.get();
    }
    if (!dot) return nullptr;
    for (const HloInstruction* operand : dot->operands())
        if (!parameterBehind(operand)) return nullptr;
    if (dot == fused->root()) return dot;
    if (dot->shape().dimensions() != fusion.shape().dimensions()) return nullptr;
    std::unordered_set<const HloInstruction*> dependent{dot};
    for (const HloInstruction* instruction : fused->postOrder()) {
        bool depends = false;
        for (const HloInstruction* operand : instruction->operands())
            depends = depends || dependent.count(operand);
        if (!depends) continue;
        if (!instruction->isElementwise() ||
            instruction->shape().dimensions() != dot->shape().dimensions())
            return nullptr;
        dependent.insert(instruction);
    }
    return dependent.count(fused->root()) ? dot : nullptr;
}

}  // namespace

GpuPlanStep launchStep(const HloInstruction& instruction, const GpuKernelInfo& info,
                       std::vector<int> args) {
    GpuPlanStep step;
    step.kind = GpuStepKind::kKernel;
    step.name = instruction.name();
    step.opcode = std::string(hloOpcodeString(instruction.opcode()));
    step.instruction = instruction.name();
    step.entry = info.entry;
    step.launch = info.launch;
    step.args = std::move(args);
    return step;
}

namespace {

// Whether `instruction` or a computation it calls holds replica-id or partition-id.
bool readsDeviceIds(const HloInstruction& instruction,
                    std::unordered_set<const HloComputation*>& seen) {
    if (instruction.opcode() == HloOpcode::kReplicaId ||
        instruction.opcode() == HloOpcode::kPartitionId)
        return true;
    for (const HloComputation* called : instruction.calledComputations())
        if (called && seen.insert(called).second)
            for (const auto& inner : called->instructions())
                if (readsDeviceIds(*inner, seen)) return true;
    return false;
}

// Whether the kernel of `spec` computes replica-id or partition-id.
bool readsDeviceIds(const CpuKernelSpec& spec) {
    std::unordered_set<const HloInstruction*> leaves(spec.leaves.begin(), spec.leaves.end());
    std::unordered_set<const HloInstruction*> visited;
    std::unordered_set<const HloComputation*> seen;
    std::vector<const HloInstruction*> stack(spec.outputs.begin(), spec.outputs.end());
    while (!stack.empty()) {
        const HloInstruction* instruction = stack.back();
        stack.pop_back();
        if (leaves.count(instruction) || !visited.insert(instruction).second) continue;
        if (readsDeviceIds(*instruction, seen)) return true;
        for (const HloInstruction* operand : instruction->operands()) stack.push_back(operand);
    }
    return false;
}

}  // namespace

StatusOr<GpuPlanStep> PlanBuilder::kernelStep(const HloInstruction& instruction,
                                              const CpuKernelSpec& spec,
                                              const std::vector<int>& args, int64_t time,
                                              std::vector<GpuPlanStep>& extra) {
    if (m_grid.count() == 1 || !readsDeviceIds(spec))
        return kernelStepOnce(instruction, spec, args, time, extra);
    std::vector<GpuPlanStep> all;
    for (int64_t device = 0; device < m_grid.count(); ++device) {
        CpuKernelSpec own = spec;
        own.name = spec.name + "_d" + std::to_string(device);
        own.replicaId = m_grid.replicaOf(device);
        own.partitionId = m_grid.partitionOf(device);
        std::vector<GpuPlanStep> more;
        HLO_ASSIGN_OR_RETURN(GpuPlanStep step, kernelStepOnce(instruction, own, args, time, more));
        step.device = device;
        all.push_back(std::move(step));
        for (GpuPlanStep& e : more) {
            e.device = device;
            all.push_back(std::move(e));
        }
    }
    GpuPlanStep first = std::move(all.front());
    extra.insert(extra.begin(), std::make_move_iterator(all.begin() + 1),
                 std::make_move_iterator(all.end()));
    return first;
}

StatusOr<GpuPlanStep> PlanBuilder::kernelStepOnce(const HloInstruction& instruction,
                                                  const CpuKernelSpec& spec,
                                                  const std::vector<int>& args, int64_t time,
                                                  std::vector<GpuPlanStep>& extra) {
    HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, m_emitter.emitKernel(spec));
    GpuPlanStep step = launchStep(instruction, info, args);
    if (info.slices > 1) {
        std::vector<int> scratch;
        for (size_t k = 0; k < info.scratchBytes.size(); ++k)
            scratch.push_back(newBuffer("%" + instruction.name() + ".partials." + std::to_string(k),
                                        info.scratchBytes[k], time));
        step.args.insert(step.args.end(), scratch.begin(), scratch.end());
        GpuPlanStep combine;
        combine.kind = GpuStepKind::kKernel;
        combine.name = instruction.name() + ".combine";
        combine.opcode = step.opcode;
        combine.instruction = step.instruction;
        combine.entry = info.combineEntry;
        combine.launch = info.combineLaunch;
        combine.args.assign(args.begin(),
                            args.begin() + static_cast<std::ptrdiff_t>(spec.outputs.size()));
        combine.args.insert(combine.args.end(), scratch.begin(), scratch.end());
        extra.push_back(std::move(combine));
    }
    return step;
}

Status PlanBuilder::addKernel(const HloInstruction& instruction, CpuKernelSpec spec,
                              const std::vector<int>& outputs, const std::vector<int>& leafBuffers,
                              int64_t time) {
    // One kernel per group of outputs with the same dimensions and reduction.
    std::vector<std::pair<std::pair<std::vector<int64_t>, int64_t>, std::vector<size_t>>> groups;
    for (size_t k = 0; k < spec.outputs.size(); ++k) {
        auto key = std::make_pair(spec.outputShape(k).dimensions(), reducedCount(spec.outputs[k]));
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const auto& g) { return g.first == key; });
        if (it == groups.end())
            groups.push_back({key, {k}});
        else
            it->second.push_back(k);
    }
    for (const auto& [key, members] : groups) {
        CpuKernelSpec part;
        part.name = entryName();
        part.leaves = spec.leaves;
        std::vector<int> args;
        for (size_t k : members) {
            part.outputs.push_back(spec.outputs[k]);
            if (!spec.outputComponents.empty())
                part.outputComponents.push_back(spec.outputComponents[k]);
            args.push_back(outputs[k]);
        }
        if (product(key.first) == 0) continue;  // nothing to compute
        args.insert(args.end(), leafBuffers.begin(), leafBuffers.end());
        std::vector<GpuPlanStep> extra;
        HLO_ASSIGN_OR_RETURN(GpuPlanStep step, kernelStep(instruction, part, args, time, extra));
        if (groups.size() > 1) step.name += ".part" + std::to_string(members.front());
        m_plan.steps.push_back(std::move(step));
        for (GpuPlanStep& e : extra) m_plan.steps.push_back(std::move(e));
        ++m_plan.kernels;
    }
    return Status::ok();
}

Status PlanBuilder::planGemm(const HloInstruction& instruction, const HloInstruction& dot,
                             const GemmShape& gemm, const std::vector<int>& operandBuffers,
                             int outBuffer, int64_t time) {
    GpuPlanStep step;
    step.kind = GpuStepKind::kGemm;
    step.name = instruction.name();
    step.opcode = std::string(hloOpcodeString(instruction.opcode()));
    step.instruction = instruction.name();
    step.batch = gemm.batch;
    step.m = gemm.m;
    step.n = gemm.n;
    step.k = gemm.k;
    step.lhsTransposed = gemm.lhsTransposed;
    step.rhsTransposed = gemm.rhsTransposed;
    step.lhs = operandBuffers[0];
    step.rhs = operandBuffers[1];
    step.out = outBuffer;
    // The fallback: our tiled GEMM kernel.
    HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, m_emitter.emitGemm(entryName(), gemm));
    step.fallback.push_back(
        launchStep(instruction, info, {outBuffer, operandBuffers[0], operandBuffers[1]}));
    m_plan.steps.push_back(std::move(step));
    ++m_plan.kernels;
    return Status::ok();
}

StatusOr<bool> PlanBuilder::planPermutedGemm(const HloInstruction& instruction,
                                             const HloInstruction& dot,
                                             const std::vector<int>& operandBuffers, int outBuffer,
                                             int64_t time) {
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (!numbers || !numbers->lhsRaggedDimensions.empty() || !numbers->rhsGroupDimensions.empty())
        return false;
    if (dot.shape().elementType() != PrimitiveType::F32) return false;
    // An outer product (no contracting dimension) or an empty one is no GEMM.
    if (numbers->lhsContractingDimensions.empty() || dot.shape().elementCount() == 0) return false;
    for (int side = 0; side < 2; ++side)
        if (!dot.operand(side)->shape().isArray() || dot.operand(side)->shape().elementCount() == 0)
            return false;
    const std::vector<int64_t>* batch[2] = {&numbers->lhsBatchDimensions,
                                            &numbers->rhsBatchDimensions};
    const std::vector<int64_t>* contracting[2] = {&numbers->lhsContractingDimensions,
                                                  &numbers->rhsContractingDimensions};
    HloInstruction* canonical[2] = {nullptr, nullptr};
    int buffers[2] = {operandBuffers[0], operandBuffers[1]};
    for (int side = 0; side < 2; ++side) {
        const Shape& shape = dot.operand(side)->shape();
        if (!shape.isArray() || shape.elementType() != PrimitiveType::F32) return false;
        std::vector<int64_t> order(batch[side]->begin(), batch[side]->end());
        std::vector<int64_t> free;
        for (int64_t d = 0; d < shape.rank(); ++d)
            if (std::find(batch[side]->begin(), batch[side]->end(), d) == batch[side]->end() &&
                std::find(contracting[side]->begin(), contracting[side]->end(), d) ==
                    contracting[side]->end())
                free.push_back(d);
        if (side == 0) order.insert(order.end(), free.begin(), free.end());
        order.insert(order.end(), contracting[side]->begin(), contracting[side]->end());
        if (side == 1) order.insert(order.end(), free.begin(), free.end());
        // The operand as a leaf of its own (its buffer), never the module's instruction.
        HloInstruction* standIn = synthetic(std::make_unique<HloInstruction>(
            HloOpcode::kParameter, dot.name() + ".operand" + std::to_string(side),
            Shape(shape.elementType(), shape.dimensions())));
        bool identity = true;
        for (size_t i = 0; i < order.size(); ++i)
            identity = identity && order[i] == static_cast<int64_t>(i);
        if (identity) {
            canonical[side] = standIn;
            continue;
        }
        std::vector<int64_t> dims;
        for (int64_t d : order) dims.push_back(shape.dimensions(d));
        HloInstruction* transpose = synthetic(std::make_unique<HloInstruction>(
            HloOpcode::kTranspose, dot.name() + ".transposed" + std::to_string(side),
            Shape(shape.elementType(), dims)));
        transpose->setDimensions(order);
        transpose->appendOperand(standIn);
        const int permuted =
            newBuffer("%" + transpose->name(), denseBytes(transpose->shape()), time);
        CpuKernelSpec spec;
        spec.name = entryName();
        spec.outputs = {transpose};
        spec.leaves = {standIn};
        std::vector<GpuPlanStep> extra;
        HLO_ASSIGN_OR_RETURN(GpuPlanStep step,
                             kernelStep(instruction, spec, {permuted, buffers[side]}, time, extra));
        step.name = instruction.name() + ".transpose" + std::to_string(side);
        m_plan.steps.push_back(std::move(step));
        for (GpuPlanStep& e : extra) m_plan.steps.push_back(std::move(e));
        ++m_plan.kernels;
        canonical[side] = transpose;
        buffers[side] = permuted;
    }
    const int64_t batchRank = static_cast<int64_t>(numbers->lhsBatchDimensions.size());
    const int64_t contractingRank = static_cast<int64_t>(numbers->lhsContractingDimensions.size());
    DotDimensionNumbers numbersOut;
    for (int64_t i = 0; i < batchRank; ++i) {
        numbersOut.lhsBatchDimensions.push_back(i);
        numbersOut.rhsBatchDimensions.push_back(i);
    }
    const int64_t lhsRank = canonical[0]->shape().rank();
    for (int64_t i = 0; i < contractingRank; ++i) {
        numbersOut.lhsContractingDimensions.push_back(lhsRank - contractingRank + i);
        numbersOut.rhsContractingDimensions.push_back(batchRank + i);
    }
    HloInstruction* canonicalDot = synthetic(std::make_unique<HloInstruction>(
        HloOpcode::kDot, dot.name() + ".canonical",
        Shape(dot.shape().elementType(), dot.shape().dimensions())));
    canonicalDot->mutableExtra().dotDimensionNumbers = numbersOut;
    canonicalDot->appendOperand(canonical[0]);
    canonicalDot->appendOperand(canonical[1]);
    auto gemm = gemmShapeOf(*canonicalDot);
    if (!gemm)
        return internalError("%" + dot.name() + ": the permuted dot is not a GEMM (internal)");
    HLO_RETURN_IF_ERROR(
        planGemm(instruction, *canonicalDot, *gemm, {buffers[0], buffers[1]}, outBuffer, time));
    return true;
}

PlanBuilder::Leaves PlanBuilder::zeroLeaves(const HloInstruction& instruction, const Shape& shape,
                                            int64_t time) {
    Leaves zeros;
    for (const Shape* leaf : leavesOf(shape)) {
        const int buffer =
            newBuffer("%" + instruction.name() + ".zeros" + std::to_string(m_plan.buffers.size()),
                      denseBytes(*leaf), time);
        addMemset(instruction, instruction.name() + ".zero", buffer, denseBytes(*leaf), 0, -1);
        zeros.ids.push_back(buffer);
        zeros.shapes.push_back(leaf);
    }
    return zeros;
}

StatusOr<PlanBuilder::Leaves> PlanBuilder::planCalled(const HloInstruction& caller,
                                                      const HloComputation* computation,
                                                      const std::vector<Leaves>& arguments) {
    if (!computation) return notOnGpu(caller, "missing called computation");
    if (computation->parameterCount() != static_cast<int64_t>(arguments.size()))
        return notOnGpu(caller, "called computation's parameters do not match the operands");
    for (int64_t i = 0; i < computation->parameterCount(); ++i) {
        const HloInstruction* parameter = computation->parameter(i);
        const Leaves& argument = arguments[static_cast<size_t>(i)];
        if (!sameLeaves(leavesOf(parameter->shape()), argument.shapes))
            return notOnGpu(caller, "operand shapes differ from %" + parameter->name() + "'s");
        m_leaves[parameter] = argument.ids;
    }
    for (const HloInstruction* inner : executionSequence(*computation, m_module.isScheduled()))
        if (inner->opcode() != HloOpcode::kParameter)
            HLO_RETURN_IF_ERROR(planInstruction(*inner, m_time++));
    return leavesOfValue(*computation->root());
}

StatusOr<bool> PlanBuilder::planRouting(const HloInstruction& instruction, int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    const std::string op(hloOpcodeString(opcode));
    // The result's leaves are `value`'s, whose shapes must be the result's.
    auto route = [&](const Leaves& value) -> StatusOr<bool> {
        if (!sameLeaves(leavesOf(shape), value.shapes))
            return notOnGpu(instruction, op + " whose result differs from the value it passes on");
        m_leaves[&instruction] = value.ids;
        return true;
    };
    Leaves operands;
    std::vector<Leaves> arguments;
    for (const HloInstruction* operand : instruction.operands()) {
        arguments.push_back(leavesOfValue(*operand));
        operands.append(arguments.back());
    }
    // Element 1 of a (operands, result, context...) tuple, or the value itself.
    auto startResult = [&](const HloInstruction& start) -> StatusOr<bool> {
        const Shape& from = start.shape();
        const Leaves all = leavesOfValue(start);
        if (from.isTuple() && from.tupleCount() >= 2 &&
            (!shape.isTuple() ||
             (sameArrayShape(from.tupleShape(1), shape) && !sameArrayShape(from, shape))))
            return route(all.slice(elementLeaves(from, 1)));
        return route(all);
    };
    // A start op's (operands, result, zeros...) tuple.
    auto startTuple = [&](const Leaves& first, const Leaves& result) -> StatusOr<bool> {
        Leaves all = first;
        all.append(result);
        for (int64_t k = 2; k < shape.tupleCount(); ++k)
            all.append(zeroLeaves(instruction, shape.tupleShape(k), time));
        return route(all);
    };
    if ((opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv ||
         opcode == HloOpcode::kSendDone || opcode == HloOpcode::kRecvDone) &&
        !isHostTransfer(instruction)) {
        HLO_RETURN_IF_ERROR(planPeerTransfer(instruction, time));
        return true;
    }
    if (opcode == HloOpcode::kRaggedAllToAll) {
        HLO_RETURN_IF_ERROR(planRaggedAllToAll(instruction, time));
        return true;
    }
    if (m_grid.count() > 1 && exchangesBetweenDevices(opcode)) {
        HLO_RETURN_IF_ERROR(planCollective(instruction, time));
        return true;
    }
    // A fusion around what no loop kernel computes is planned in place, as a call: a
    // collective between devices (XLA:GPU's Triton collective fusions; no kernel reads other
    // arenas), a sort (XLA:GPU's sort fusions, the iota of its indices fused in) or a scatter
    // of several operands (each its own steps).
    if (opcode == HloOpcode::kFusion && instruction.fusedComputation()) {
        const auto& inside = instruction.fusedComputation()->instructions();
        const bool severalDevices = m_grid.count() > 1;
        if (std::any_of(inside.begin(), inside.end(), [&](const auto& i) {
                return (severalDevices &&
                        (exchangesBetweenDevices(i->opcode()) || isPeerTransfer(*i))) ||
                       i->opcode() == HloOpcode::kSort ||
                       (i->opcode() == HloOpcode::kScatter && i->operandCount() > 3);
            })) {
            HLO_ASSIGN_OR_RETURN(
                Leaves result, planCalled(instruction, instruction.fusedComputation(), arguments));
            return route(result);
        }
    }
    switch (opcode) {
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectiveReduce: {
            // One participant: the operands are the result (the evaluator's
            // operandsAsResult); an older all-gather-start pairs them twice.
            if (collectiveParticipantCount(instruction) != 1)
                return notOnGpu(instruction, op + " with more than one participant");
            if (opcode == HloOpcode::kAllGatherStart && shape.isTuple() &&
                shape.tupleCount() == 2 && operands.ids.size() * 2 == leafCount(shape)) {
                Leaves twice = operands;
                twice.append(operands);
                return route(twice);
            }
            return route(operands);
        }
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteStart: {
            if (isCombinedPermute(instruction)) {
                HLO_ASSIGN_OR_RETURN(const bool keeps, collectivePermuteKeepsOperand(instruction));
                return route(keeps ? operands : zeroLeaves(instruction, shape, time));
            }
            if (instruction.operandCount() != 1)
                return notOnGpu(instruction, op + " with several operands in the in-place form");
            HLO_ASSIGN_OR_RETURN(const bool keeps, collectivePermuteKeepsOperand(instruction));
            const bool tuple = opcode == HloOpcode::kCollectivePermuteStart && shape.isTuple();
            const Shape& resultShape = tuple ? shape.tupleShape(1) : shape;
            const Leaves result = keeps ? operands : zeroLeaves(instruction, resultShape, time);
            return tuple ? startTuple(operands, result) : route(result);
        }
        case HloOpcode::kAllReduceDone:
        case HloOpcode::kAllGatherDone:
        case HloOpcode::kCollectivePermuteDone:
            return startResult(*instruction.operand(0));
        case HloOpcode::kAsyncStart: {
            std::vector<HloComputation*> called = instruction.calledComputations();
            if (called.empty()) return notOnGpu(instruction, "async-start without a computation");
            // Operands bound later by async-updates: the computation runs at the done.
            if (asyncBindsLate(instruction) && shape.isTuple() && shape.tupleCount() >= 2)
                return startTuple(operands, zeroLeaves(instruction, shape.tupleShape(1), time));
            HLO_ASSIGN_OR_RETURN(Leaves result, planCalled(instruction, called.front(), arguments));
            if (!shape.isTuple() || shape.tupleCount() < 2) return route(result);
            const bool wrapped = shape.tupleShape(0).isTuple() || arguments.empty();
            return startTuple(wrapped ? operands : arguments.front(), result);
        }
        case HloOpcode::kAsyncUpdate: {
            if (arguments.size() == 1) return route(arguments.at(0));
            // Binds more operands: they join the bound ones (element 0).
            const Shape& previous = instruction.operand(0)->shape();
            if (!previous.isTuple() || previous.tupleCount() < 1 || !shape.isTuple())
                return notOnGpu(instruction, "async-update operand is not an async-start tuple");
            Leaves all = arguments[0].slice(elementLeaves(previous, 0));
            for (size_t i = 1; i < arguments.size(); ++i) all.append(arguments[i]);
            for (int64_t k = 1; k < shape.tupleCount(); ++k)
                all.append(k < previous.tupleCount() &&
                                   sameArrayShape(previous.tupleShape(k), shape.tupleShape(k))
                               ? arguments[0].slice(elementLeaves(previous, k))
                               : zeroLeaves(instruction, shape.tupleShape(k), time));
            return route(all);
        }
        case HloOpcode::kAsyncDone: {
            if (const HloInstruction* start = asyncChainStart(instruction);
                start && asyncBindsLate(*start)) {
                const HloComputation* called = start->calledComputation("calls");
                const Shape& state = instruction.operand(0)->shape();
                if (!state.isTuple() || state.tupleCount() < 1 || !state.tupleShape(0).isTuple() ||
                    state.tupleShape(0).tupleCount() != called->parameterCount())
                    return notOnGpu(instruction, "its chain binds operands " + called->name() +
                                                     " does not take");
                const Leaves bound = arguments.at(0).slice(elementLeaves(state, 0));
                std::vector<Leaves> parameters;
                for (int64_t k = 0; k < called->parameterCount(); ++k)
                    parameters.push_back(bound.slice(elementLeaves(state.tupleShape(0), k)));
                HLO_ASSIGN_OR_RETURN(Leaves result, planCalled(instruction, called, parameters));
                return route(result);
            }
            const Shape& start = instruction.operand(0)->shape();
            if (!start.isTuple() || start.tupleCount() < 2)
                return notOnGpu(instruction, "async-done operand is not an async-start tuple");
            return route(arguments.at(0).slice(elementLeaves(start, 1)));
        }
        case HloOpcode::kCopyStart:
            if (!shape.isTuple()) return route(arguments.at(0));
            return startTuple(arguments.at(0), arguments.at(0));
        case HloOpcode::kCopyDone: {
            const Shape& start = instruction.operand(0)->shape();
            if (start.isTuple() && start.tupleCount() > 0)
                return route(arguments.at(0).slice(elementLeaves(start, 0)));
            return route(arguments.at(0));
        }
        case HloOpcode::kCall: {
            const HloComputation* callee = instruction.toApply();
            if (!callee) callee = instruction.calledComputation("calls");
            HLO_ASSIGN_OR_RETURN(Leaves result, planCalled(instruction, callee, arguments));
            return route(result);
        }
        case HloOpcode::kSetDimensionSize:
        case HloOpcode::kDynamicReshape: {
            // Bounded dimensions at their bound: the same bytes (as the evaluator).
            const Shape& from = instruction.operand(0)->shape();
            if (!from.isArray() || from.elementType() != shape.elementType() ||
                from.elementCount() != shape.elementCount())
                return false;
            m_leaves[&instruction] = m_leaves[instruction.operand(0)];
            return true;
        }
        default:
            return false;
    }
}

Status PlanBuilder::planInstruction(const HloInstruction& instruction, int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    std::vector<int> operandLeaves;
    for (const HloInstruction* operand : instruction.operands()) {
        auto it = m_leaves.find(operand);
        if (it == m_leaves.end())
            return internalError("%" + instruction.name() + ": operand %" + operand->name() +
                                 " has no buffer");
        for (int b : it->second) use(b, time);
    }
    auto aliasOf = [&](const HloInstruction* operand) {
        m_leaves[&instruction] = m_leaves[operand];
    };
    HLO_ASSIGN_OR_RETURN(const bool routed, planRouting(instruction, time));
    if (routed) return Status::ok();
    switch (opcode) {
        case HloOpcode::kParameter: {
            if (shape.isTuple()) {  // one input per array leaf
                const std::vector<const Shape*> leaves = leavesOf(shape);
                std::vector<int> buffers;
                for (size_t k = 0; k < leaves.size(); ++k) {
                    const int buffer = newBuffer("%" + instruction.name() + "." + std::to_string(k),
                                                 denseBytes(*leaves[k]), 0);
                    m_pinned.push_back(buffer);
                    buffers.push_back(buffer);
                    GpuPlanInput input;
                    input.parameter = instruction.parameterNumber();
                    input.name = instruction.name();
                    input.array = GpuPlanArray{buffer, leaves[k]->elementType(),
                                               leaves[k]->dimensions(), denseBytes(*leaves[k])};
                    input.leaf = static_cast<int64_t>(k);
                    input.tupleShape = shape.toString(false);
                    m_plan.inputs.push_back(std::move(input));
                }
                m_leaves[&instruction] = buffers;
                return Status::ok();
            }
            if (!shape.isArray())
                return notOnGpu(instruction, "entry parameter of shape " + shape.toString(false));
            const int buffer = newBuffer("%" + instruction.name(), denseBytes(shape), 0);
            m_pinned.push_back(buffer);
            m_leaves[&instruction] = {buffer};
            GpuPlanInput input;
            input.parameter = instruction.parameterNumber();
            input.name = instruction.name();
            input.array =
                GpuPlanArray{buffer, shape.elementType(), shape.dimensions(), denseBytes(shape)};
            m_plan.inputs.push_back(std::move(input));
            return Status::ok();
        }
        case HloOpcode::kConstant: {
            if (!shape.isArray())
                return notOnGpu(instruction, "tuple constants are not supported on the GPU");
            HLO_ASSIGN_OR_RETURN(Literal literal, literalOfConstant(instruction));
            const int buffer = newBuffer("%" + instruction.name(), denseBytes(shape), 0);
            m_pinned.push_back(buffer);
            m_leaves[&instruction] = {buffer};
            m_plan.constants.push_back(
                GpuPlanConstant{buffer, instruction.name(), std::move(literal)});
            return Status::ok();
        }
        case HloOpcode::kTuple: {
            std::vector<int> leaves;
            for (const HloInstruction* operand : instruction.operands())
                for (int b : m_leaves[operand]) leaves.push_back(b);
            m_leaves[&instruction] = leaves;
            return Status::ok();
        }
        case HloOpcode::kGetTupleElement: {
            const HloInstruction& tuple = *instruction.operand(0);
            size_t first = 0;
            for (int64_t i = 0; i < instruction.tupleIndex(); ++i)
                first += leafCount(tuple.shape().tupleShape(i));
            const std::vector<int>& all = m_leaves[&tuple];
            const size_t count = leafCount(shape);
            if (first + count > all.size())
                return internalError("%" + instruction.name() + ": tuple index out of range");
            m_leaves[&instruction] =
                std::vector<int>(all.begin() + static_cast<std::ptrdiff_t>(first),
                                 all.begin() + static_cast<std::ptrdiff_t>(first + count));
            return Status::ok();
        }
        case HloOpcode::kAfterAll:
            m_leaves[&instruction] = {};
            return Status::ok();
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kAddDependency:
        case HloOpcode::kDomain:
            aliasOf(instruction.operand(0));
            return Status::ok();
        case HloOpcode::kBitcast:
        case HloOpcode::kReshape:
        case HloOpcode::kCopy: {
            // A copy of a tuple: its leaves' buffers (values are never written twice).
            if (opcode == HloOpcode::kCopy && shape.isTuple() &&
                sameLeaves(leavesOf(shape), leavesOf(instruction.operand(0)->shape()))) {
                aliasOf(instruction.operand(0));
                return Status::ok();
            }
            // Dense row-major storage: the same bytes (a copy is a value copy,
            // and buffers are never written twice).
            // A bitcast between element types of one width keeps the bytes too.
            const Shape& from = instruction.operand(0)->shape();
            const bool sameBytes = from.elementType() == shape.elementType() ||
                                   (opcode == HloOpcode::kBitcast &&
                                    primitive_util::bitWidth(from.elementType()) ==
                                        primitive_util::bitWidth(shape.elementType()) &&
                                    primitive_util::bitWidth(from.elementType()) % 8 == 0 &&
                                    from.elementType() != PrimitiveType::PRED &&
                                    shape.elementType() != PrimitiveType::PRED);
            if (shape.isArray() && from.isArray() && sameBytes &&
                from.elementCount() == shape.elementCount() &&
                (opcode != HloOpcode::kCopy || from.dimensions() == shape.dimensions()) &&
                (opcode == HloOpcode::kReshape ||
                 (from.hasDefaultDenseLayout() && shape.hasDefaultDenseLayout()))) {
                aliasOf(instruction.operand(0));
                return Status::ok();
            }
            break;
        }
        case HloOpcode::kWhile:
            return planWhile(instruction, time);
        case HloOpcode::kDynamicUpdateSlice: {
            HLO_ASSIGN_OR_RETURN(const bool inPlace, planUpdateInPlace(instruction, time));
            if (inPlace) return Status::ok();
            break;
        }
        case HloOpcode::kConditional:
            return planConditional(instruction, time);
        case HloOpcode::kFft:
            return planFft(instruction, time);
        default:
            break;
    }
    for (const HloInstruction* operand : instruction.operands())
        if (!operand->shape().isArray())
            return notOnGpu(
                instruction,
                "operand %" + operand->name() + " is " +
                    (operand->shape().isTuple() ? std::string("a tuple")
                                                : "of shape " + operand->shape().toString(false)));
    std::vector<const Shape*> leaves;
    collectLeaves(shape, leaves);
    std::vector<int> outputs;
    for (size_t i = 0; i < leaves.size(); ++i)
        outputs.push_back(
            newBuffer("%" + instruction.name() + (leaves.size() > 1 ? "." + std::to_string(i) : ""),
                      denseBytes(*leaves[i]), time));
    m_leaves[&instruction] = outputs;
    auto operandBuffer = [&](int64_t i) { return m_leaves[instruction.operand(i)].front(); };

    CpuKernelSpec spec;
    std::vector<int> leafBuffers;
    // scatter, alone or as a fusion's root: the output initialised with the
    // operand by a loop kernel, then the scatter kernel's atomic updates.
    const HloInstruction* scatterRoot =
        opcode == HloOpcode::kScatter ? &instruction
        : opcode == HloOpcode::kFusion && instruction.fusedComputation() &&
                instruction.fusedComputation()->root()->opcode() == HloOpcode::kScatter
            ? instruction.fusedComputation()->root()
            : nullptr;
    if (scatterRoot && !shape.isArray() && opcode != HloOpcode::kScatter)
        return notOnGpu(instruction, "scatter of several operands inside a fusion");
    if (scatterRoot && shape.isArray()) {
        if (opcode == HloOpcode::kFusion) {
            const HloComputation* fused = instruction.fusedComputation();
            for (int64_t i = 0; i < fused->parameterCount(); ++i) {
                spec.leaves.push_back(fused->parameter(i));
                leafBuffers.push_back(operandBuffer(fused->parameter(i)->parameterNumber()));
            }
        } else {
            std::unordered_set<const HloInstruction*> seen;
            for (int64_t i = 0; i < instruction.operandCount(); ++i)
                if (seen.insert(instruction.operand(i)).second) {
                    spec.leaves.push_back(instruction.operand(i));
                    leafBuffers.push_back(operandBuffer(i));
                }
        }
        std::vector<int> args = {outputs[0]};
        args.insert(args.end(), leafBuffers.begin(), leafBuffers.end());
        for (const HloInstruction* output :
             {static_cast<const HloInstruction*>(scatterRoot->operand(0)), scatterRoot}) {
            CpuKernelSpec part = spec;
            part.name = entryName();
            part.outputs = {output};
            std::vector<GpuPlanStep> extra;
            HLO_ASSIGN_OR_RETURN(GpuPlanStep step,
                                 kernelStep(instruction, part, args, time, extra));
            step.name = instruction.name() + (output == scatterRoot ? "" : ".init");
            m_plan.steps.push_back(std::move(step));
            for (GpuPlanStep& e : extra) m_plan.steps.push_back(std::move(e));
            ++m_plan.kernels;
        }
        return Status::ok();
    }
    // One kernel for the whole instruction (sort, top-k: their emitters read and write `args`
    // themselves); none when it has no elements.
    auto wholeKernel = [&](const std::vector<int>& args) -> Status {
        if (product(leaves.front()->dimensions()) == 0) return Status::ok();
        spec.name = entryName();
        spec.outputs = {&instruction};
        std::vector<GpuPlanStep> extra;
        HLO_ASSIGN_OR_RETURN(GpuPlanStep step, kernelStep(instruction, spec, args, time, extra));
        m_plan.steps.push_back(std::move(step));
        for (GpuPlanStep& e : extra) m_plan.steps.push_back(std::move(e));
        ++m_plan.kernels;
        return Status::ok();
    };
    if (opcode == HloOpcode::kScatter) {
        // Several operands: the outputs set to the operands, then one kernel whose thread 0
        // applies the updates in order (the combiner updates all operands' elements together,
        // which no atomic does; XLA expands such scatters into a loop too).
        const int64_t n = instruction.operandCount() / 2;
        if (instruction.operandCount() != 2 * n + 1 || outputs.size() != static_cast<size_t>(n))
            return notOnGpu(instruction, "scatter whose result does not match its operands");
        for (int64_t k = 0; k < n; ++k)
            addCopy(instruction, instruction.name() + ".init." + std::to_string(k),
                    operandBuffer(k), outputs[static_cast<size_t>(k)],
                    denseBytes(*leaves[static_cast<size_t>(k)]));
        std::unordered_set<const HloInstruction*> seen;
        std::vector<int> args = outputs;
        for (int64_t i = n; i < instruction.operandCount(); ++i)
            if (seen.insert(instruction.operand(i)).second) {
                spec.leaves.push_back(instruction.operand(i));
                args.push_back(operandBuffer(i));
            }
        return wholeKernel(args);
    }
    if (opcode == HloOpcode::kSort) {
        // The outputs set to the operands, then sorted in place by one kernel.
        if (outputs.size() != static_cast<size_t>(instruction.operandCount()))
            return notOnGpu(instruction, "sort whose result does not match its operands");
        for (size_t k = 0; k < outputs.size(); ++k)
            addCopy(instruction, instruction.name() + ".init." + std::to_string(k),
                    operandBuffer(static_cast<int64_t>(k)), outputs[k], denseBytes(*leaves[k]));
        return wholeKernel(outputs);
    }
    if (isGpuTopK(instruction)) {
        // Values and indices from one kernel reading the operand.
        if (outputs.size() != 2 || instruction.operandCount() != 1)
            return notOnGpu(instruction, "top-k of other than one operand and (values, indices)");
        return wholeKernel({outputs[0], outputs[1], operandBuffer(0)});
    }
    if (opcode == HloOpcode::kRngBitGenerator) {
        // The new state and the bits from one kernel reading the state.
        if (outputs.size() != 2 || instruction.operandCount() != 1)
            return notOnGpu(instruction, "rng-bit-generator of other than (state, bits)");
        return wholeKernel({outputs[0], outputs[1], operandBuffer(0)});
    }
    if (opcode == HloOpcode::kDot) {
        if (auto gemm = gemmShapeOf(instruction); gemm && m_options.gemmSteps)
            return planGemm(instruction, instruction, *gemm, {operandBuffer(0), operandBuffer(1)},
                            outputs[0], time);
        if (m_options.gemmSteps) {
            HLO_ASSIGN_OR_RETURN(
                bool planned,
                planPermutedGemm(instruction, instruction, {operandBuffer(0), operandBuffer(1)},
                                 outputs[0], time));
            if (planned) return Status::ok();
        }
        std::unordered_set<const HloInstruction*> seen;
        for (int64_t i = 0; i < instruction.operandCount(); ++i)
            if (seen.insert(instruction.operand(i)).second) {
                spec.leaves.push_back(instruction.operand(i));
                leafBuffers.push_back(operandBuffer(i));
            }
        spec.addOutputs(instruction);
    } else if (opcode == HloOpcode::kFusion) {
        const HloComputation* fused = instruction.fusedComputation();
        if (!fused)
            return invalidArgument("%" + instruction.name() + ": fusion without a computation");
        for (int64_t i = 0; i < fused->parameterCount(); ++i) {
            spec.leaves.push_back(fused->parameter(i));
            leafBuffers.push_back(operandBuffer(fused->parameter(i)->parameterNumber()));
        }
        const HloInstruction* dot = m_options.gemmSteps ? epilogueDot(instruction) : nullptr;
        if (dot && dot->shape().elementType() == PrimitiveType::F32) {
            const std::vector<int> dotOperands = {
                operandBuffer(parameterBehind(dot->operand(0))->parameterNumber()),
                operandBuffer(parameterBehind(dot->operand(1))->parameterNumber())};
            const bool root = dot == fused->root();
            // The product into the output (a dot alone) or a temporary the epilogue reads.
            const int product =
                root ? outputs[0]
                     : newBuffer("%" + instruction.name() + ".dot", denseBytes(dot->shape()), time);
            bool planned = false;
            if (auto gemm = gemmShapeOf(*dot)) {
                HLO_RETURN_IF_ERROR(planGemm(instruction, *dot, *gemm, dotOperands, product, time));
                planned = true;
            } else {
                HLO_ASSIGN_OR_RETURN(
                    planned, planPermutedGemm(instruction, *dot, dotOperands, product, time));
            }
            if (planned && root) return Status::ok();
            if (planned) {
                m_plan.steps.back().name = instruction.name() + ".dot";
                spec.leaves.push_back(dot);
                leafBuffers.push_back(product);
            } else if (!root) {
                m_plan.buffers.pop_back();  // the unused temporary
                m_live.pop_back();
            }
        }
        spec.addOutputs(*fused->root());
    } else if (isKernelOpcode(opcode) || opcode == HloOpcode::kScaledDot ||
               opcode == HloOpcode::kRaggedDot) {
        std::unordered_set<const HloInstruction*> seen;
        for (int64_t i = 0; i < instruction.operandCount(); ++i)
            if (seen.insert(instruction.operand(i)).second) {
                spec.leaves.push_back(instruction.operand(i));
                leafBuffers.push_back(operandBuffer(i));
            }
        spec.addOutputs(instruction);
    } else if (opcode == HloOpcode::kCustomCall) {
        return notOnGpu(instruction, gpuCustomCallRefusal(instruction));
    } else {
        return notOnGpu(instruction, std::string(hloOpcodeString(opcode)) +
                                         " is not compiled by the GPU backend");
    }
    if (spec.outputs.size() != outputs.size())
        return notOnGpu(instruction, "kernel outputs do not match the result's leaves");
    return addKernel(instruction, std::move(spec), outputs, leafBuffers, time);
}

StatusOr<GpuPlan> PlanBuilder::build() {
    const auto start = std::chrono::steady_clock::now();
    const HloComputation* entry = m_module.entryComputation();
    if (!entry) return invalidArgument("module '" + m_module.name() + "' has no entry computation");
    m_plan.module = m_module.name();
    m_plan.mode = m_options.mode;
    m_plan.sm = m_options.sm;
    m_plan.warmup = m_options.warmup;
    m_plan.repeat = m_options.repeat;
    HLO_ASSIGN_OR_RETURN(m_grid, moduleDeviceGrid(m_module));
    m_plan.replicas = m_grid.replicas;
    m_plan.partitions = m_grid.partitions;
    const std::vector<const HloInstruction*> sequence =
        executionSequence(*entry, m_module.isScheduled());
    for (const HloInstruction* instruction : sequence)
        HLO_RETURN_IF_ERROR(planInstruction(*instruction, m_time++));
    const int64_t time = m_time;
    const HloInstruction* root = entry->root();
    std::vector<const Shape*> rootLeaves;
    collectLeaves(root->shape(), rootLeaves);
    const std::vector<int>& rootBuffers = m_leaves[root];
    if (rootBuffers.size() != rootLeaves.size())
        return internalError("the entry result's buffers do not match its shape");
    for (size_t i = 0; i < rootLeaves.size(); ++i) {
        m_pinned.push_back(rootBuffers[i]);
        m_plan.outputs.push_back(GpuPlanArray{rootBuffers[i], rootLeaves[i]->elementType(),
                                              rootLeaves[i]->dimensions(),
                                              denseBytes(*rootLeaves[i])});
    }
    expandForDevices();
    for (int b : m_pinned) m_live[static_cast<size_t>(b)] = Interval{0, time};
    std::vector<HeapInterval> intervals;
    for (size_t i = 0; i < m_plan.buffers.size(); ++i)
        intervals.push_back(HeapInterval{m_live[i].start, m_live[i].end,
                                         std::max<int64_t>(m_plan.buffers[i].bytes, 1)});
    HeapLayout layout = packHeap(intervals, kGpuBufferAlignment);
    for (size_t i = 0; i < m_plan.buffers.size(); ++i) m_plan.buffers[i].offset = layout.offsets[i];
    std::sort(m_plan.inputs.begin(), m_plan.inputs.end(),
              [](const GpuPlanInput& a, const GpuPlanInput& b) {
                  return std::make_tuple(a.device, a.parameter, a.leaf) <
                         std::make_tuple(b.device, b.parameter, b.leaf);
              });
    m_plan.arenaBytes = std::max<int64_t>(layout.bytes, kGpuBufferAlignment);
    if (m_options.keepHostIr) m_plan.hostIr = m_emitter.irText();
    HLO_ASSIGN_OR_RETURN(m_plan.ptx, m_emitter.compileToPtx());
    m_plan.compileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(m_plan);
}

}  // namespace gpu_plan_internal

StatusOr<GpuPlan> buildGpuPlan(const HloModule& module, const GpuPlanOptions& options) {
    gpu_plan_internal::PlanBuilder builder(module, options);
    return builder.build();
}

}  // namespace hloscope
