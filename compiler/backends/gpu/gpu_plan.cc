#include "compiler/backends/gpu/gpu_plan.h"

#include <algorithm>
#include <chrono>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/buffers/heap_layout.h"
#include "compiler/fusion/fusion_legality.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/hlo_computation.h"
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

int64_t product(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

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
bool readsDeviceIds(const KernelSpec& spec) {
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
                                              const KernelSpec& spec,
                                              const std::vector<int>& args, int64_t time,
                                              std::vector<GpuPlanStep>& extra) {
    if (m_grid.count() == 1 || !readsDeviceIds(spec))
        return kernelStepOnce(instruction, spec, args, time, extra);
    std::vector<GpuPlanStep> all;
    for (int64_t device = 0; device < m_grid.count(); ++device) {
        KernelSpec own = spec;
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
                                                  const KernelSpec& spec,
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

Status PlanBuilder::addKernel(const HloInstruction& instruction, KernelSpec spec,
                              const std::vector<int>& outputs, const std::vector<int>& leaves,
                              int64_t time) {
    // A fusion output that applies unary elementwise ops or bitcasts to a reduce (a reduction
    // epilogue): the reduce first, by a reduction kernel of its own into a buffer that the
    // outputs' kernel reads like a leaf (else each thread would reduce a whole row alone).
    std::vector<int> leafBuffers = leaves;
    for (size_t k = 0; k < spec.outputs.size() && instruction.opcode() == HloOpcode::kFusion; ++k) {
        if (!spec.outputComponents.empty() && spec.outputComponents[k] >= 0) continue;
        const HloInstruction* reduce = fusion::reductionUnderEpilogue(*spec.outputs[k]);
        if (!reduce || reduce == spec.outputs[k] || !reduce->shape().isArray() ||
            std::find(spec.leaves.begin(), spec.leaves.end(), reduce) != spec.leaves.end())
            continue;
        const int buffer = newBuffer("%" + instruction.name() + "." + reduce->name(),
                                     denseBytes(reduce->shape()), time);
        if (product(reduce->shape().dimensions()) > 0) {
            KernelSpec reduction = spec.part({}, entryName());
            reduction.outputs = {reduce};
            std::vector<int> args{buffer};
            args.insert(args.end(), leafBuffers.begin(), leafBuffers.end());
            std::vector<GpuPlanStep> extra;
            HLO_ASSIGN_OR_RETURN(GpuPlanStep step, kernelStep(instruction, reduction, args, time, extra));
            step.name += "." + reduce->name();
            pushKernel(std::move(step), extra);
        }
        spec.leaves.push_back(reduce);
        leafBuffers.push_back(buffer);
    }
    // One kernel per group of outputs with the same dimensions and reduction.
    const std::vector<std::vector<size_t>> groups = spec.outputGroups();
    for (const std::vector<size_t>& members : groups) {
        KernelSpec part = spec.part(members, entryName());
        std::vector<int> args;
        for (size_t k : members) args.push_back(outputs[k]);
        if (product(spec.outputShape(members.front()).dimensions()) == 0) continue;  // nothing to compute
        args.insert(args.end(), leafBuffers.begin(), leafBuffers.end());
        std::vector<GpuPlanStep> extra;
        HLO_ASSIGN_OR_RETURN(GpuPlanStep step, kernelStep(instruction, part, args, time, extra));
        if (groups.size() > 1) step.name += ".part" + std::to_string(members.front());
        pushKernel(std::move(step), extra);
    }
    return Status::ok();
}

Status PlanBuilder::planParameter(const HloInstruction& instruction) {
    const Shape& shape = instruction.shape();
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

// A dispatch over the opcodes planned without a kernel of their own: entry parameters and
// constants as pinned buffers, tuples and views as their operands' buffers, and the control
// flow and fft with their own planners. False for everything else.
StatusOr<bool> PlanBuilder::planWithoutKernel(const HloInstruction& instruction, int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    auto aliasOf = [&](const HloInstruction* operand) {
        m_leaves[&instruction] = m_leaves[operand];
        return true;
    };
    switch (opcode) {
        case HloOpcode::kParameter:
            HLO_RETURN_IF_ERROR(planParameter(instruction));
            return true;
        case HloOpcode::kConstant: {
            if (!shape.isArray())
                return notOnGpu(instruction, "tuple constants are not supported on the GPU");
            HLO_ASSIGN_OR_RETURN(Literal literal, literalOfConstant(instruction));
            const int buffer = newBuffer("%" + instruction.name(), denseBytes(shape), 0);
            m_pinned.push_back(buffer);
            m_leaves[&instruction] = {buffer};
            m_plan.constants.push_back(
                GpuPlanConstant{buffer, instruction.name(), std::move(literal)});
            return true;
        }
        case HloOpcode::kTuple: {
            std::vector<int> leaves;
            for (const HloInstruction* operand : instruction.operands())
                for (int b : m_leaves[operand]) leaves.push_back(b);
            m_leaves[&instruction] = leaves;
            return true;
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
            return true;
        }
        case HloOpcode::kAfterAll:
            m_leaves[&instruction] = {};
            return true;
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kAddDependency:
        case HloOpcode::kDomain:
            return aliasOf(instruction.operand(0));
        case HloOpcode::kBitcast:
        case HloOpcode::kReshape:
        case HloOpcode::kCopy: {
            // A copy of a tuple: its leaves' buffers (values are never written twice).
            if (opcode == HloOpcode::kCopy && shape.isTuple() &&
                sameLeaves(leavesOf(shape), leavesOf(instruction.operand(0)->shape())))
                return aliasOf(instruction.operand(0));
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
                 (from.hasDefaultDenseLayout() && shape.hasDefaultDenseLayout())))
                return aliasOf(instruction.operand(0));
            break;
        }
        case HloOpcode::kWhile:
            HLO_RETURN_IF_ERROR(planWhile(instruction, time));
            return true;
        case HloOpcode::kDynamicUpdateSlice: {
            HLO_ASSIGN_OR_RETURN(const bool inPlace, planUpdateInPlace(instruction, time));
            if (inPlace) return true;
            break;
        }
        case HloOpcode::kConditional:
            HLO_RETURN_IF_ERROR(planConditional(instruction, time));
            return true;
        case HloOpcode::kFft:
            HLO_RETURN_IF_ERROR(planFft(instruction, time));
            return true;
        default:
            break;
    }
    return false;
}

void PlanBuilder::pushKernel(GpuPlanStep step, std::vector<GpuPlanStep>& extra) {
    m_plan.steps.push_back(std::move(step));
    for (GpuPlanStep& e : extra) m_plan.steps.push_back(std::move(e));
    ++m_plan.kernels;
}

void PlanBuilder::bindOperandLeaves(const HloInstruction& instruction, int64_t first,
                                    KernelSpec& spec, std::vector<int>& buffers) {
    std::unordered_set<const HloInstruction*> seen;
    for (int64_t i = first; i < instruction.operandCount(); ++i)
        if (seen.insert(instruction.operand(i)).second) {
            spec.leaves.push_back(instruction.operand(i));
            buffers.push_back(operandBuffer(instruction, i));
        }
}

void PlanBuilder::bindFusionLeaves(const HloInstruction& fusion, KernelSpec& spec,
                                   std::vector<int>& buffers) {
    const HloComputation* fused = fusion.fusedComputation();
    for (int64_t i = 0; i < fused->parameterCount(); ++i) {
        spec.leaves.push_back(fused->parameter(i));
        buffers.push_back(operandBuffer(fusion, fused->parameter(i)->parameterNumber()));
    }
}

std::vector<int> PlanBuilder::newOutputs(const HloInstruction& instruction, int64_t time) {
    const std::vector<const Shape*> leaves = leavesOf(instruction.shape());
    std::vector<int> outputs;
    for (size_t i = 0; i < leaves.size(); ++i)
        outputs.push_back(
            newBuffer("%" + instruction.name() + (leaves.size() > 1 ? "." + std::to_string(i) : ""),
                      denseBytes(*leaves[i]), time));
    m_leaves[&instruction] = outputs;
    return outputs;
}

Status PlanBuilder::addWholeKernel(const HloInstruction& instruction, KernelSpec spec,
                                   const std::vector<int>& args, int64_t time) {
    if (product(leavesOf(instruction.shape()).front()->dimensions()) == 0) return Status::ok();
    spec.name = entryName();
    spec.outputs = {&instruction};
    std::vector<GpuPlanStep> extra;
    HLO_ASSIGN_OR_RETURN(GpuPlanStep step, kernelStep(instruction, spec, args, time, extra));
    pushKernel(std::move(step), extra);
    return Status::ok();
}

Status PlanBuilder::planScatterRoot(const HloInstruction& instruction,
                                    const HloInstruction& scatter, int output, int64_t time) {
    KernelSpec spec;
    std::vector<int> leafBuffers;
    if (instruction.opcode() == HloOpcode::kFusion)
        bindFusionLeaves(instruction, spec, leafBuffers);
    else
        bindOperandLeaves(instruction, 0, spec, leafBuffers);
    std::vector<int> args = {output};
    args.insert(args.end(), leafBuffers.begin(), leafBuffers.end());
    for (const HloInstruction* written :
         {static_cast<const HloInstruction*>(scatter.operand(0)), &scatter}) {
        KernelSpec part = spec;
        part.name = entryName();
        part.outputs = {written};
        std::vector<GpuPlanStep> extra;
        HLO_ASSIGN_OR_RETURN(GpuPlanStep step, kernelStep(instruction, part, args, time, extra));
        step.name = instruction.name() + (written == &scatter ? "" : ".init");
        pushKernel(std::move(step), extra);
    }
    return Status::ok();
}

StatusOr<bool> PlanBuilder::planWholeKernel(const HloInstruction& instruction,
                                            const std::vector<int>& outputs, int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    const std::vector<const Shape*> leaves = leavesOf(shape);
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
        HLO_RETURN_IF_ERROR(planScatterRoot(instruction, *scatterRoot, outputs[0], time));
        return true;
    }
    // The rest are one kernel for the whole instruction (sort, top-k: their emitters read and
    // write `args` themselves); none when it has no elements.
    if (opcode == HloOpcode::kScatter) {
        // Several operands: the outputs set to the operands, then one kernel whose thread 0
        // applies the updates in order (the combiner updates all operands' elements together,
        // which no atomic does; XLA expands such scatters into a loop too).
        const int64_t n = instruction.operandCount() / 2;
        if (instruction.operandCount() != 2 * n + 1 || outputs.size() != static_cast<size_t>(n))
            return notOnGpu(instruction, "scatter whose result does not match its operands");
        for (int64_t k = 0; k < n; ++k)
            addCopy(instruction, instruction.name() + ".init." + std::to_string(k),
                    operandBuffer(instruction, k), outputs[static_cast<size_t>(k)],
                    denseBytes(*leaves[static_cast<size_t>(k)]));
        KernelSpec spec;
        std::vector<int> args = outputs;
        bindOperandLeaves(instruction, n, spec, args);
        HLO_RETURN_IF_ERROR(addWholeKernel(instruction, std::move(spec), args, time));
        return true;
    }
    if (opcode == HloOpcode::kSort) {
        // The outputs set to the operands, then sorted in place by one kernel.
        if (outputs.size() != static_cast<size_t>(instruction.operandCount()))
            return notOnGpu(instruction, "sort whose result does not match its operands");
        for (size_t k = 0; k < outputs.size(); ++k)
            addCopy(instruction, instruction.name() + ".init." + std::to_string(k),
                    operandBuffer(instruction, static_cast<int64_t>(k)), outputs[k],
                    denseBytes(*leaves[k]));
        HLO_RETURN_IF_ERROR(addWholeKernel(instruction, KernelSpec(), outputs, time));
        return true;
    }
    if (isGpuTopK(instruction)) {
        // Values and indices from one kernel reading the operand.
        if (outputs.size() != 2 || instruction.operandCount() != 1)
            return notOnGpu(instruction, "top-k of other than one operand and (values, indices)");
        HLO_RETURN_IF_ERROR(addWholeKernel(
            instruction, KernelSpec(), {outputs[0], outputs[1], operandBuffer(instruction, 0)},
            time));
        return true;
    }
    if (opcode == HloOpcode::kRngBitGenerator) {
        // The new state and the bits from one kernel reading the state.
        if (outputs.size() != 2 || instruction.operandCount() != 1)
            return notOnGpu(instruction, "rng-bit-generator of other than (state, bits)");
        HLO_RETURN_IF_ERROR(addWholeKernel(
            instruction, KernelSpec(), {outputs[0], outputs[1], operandBuffer(instruction, 0)},
            time));
        return true;
    }
    return false;
}

Status PlanBuilder::planKernels(const HloInstruction& instruction, const std::vector<int>& outputs,
                                int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    KernelSpec spec;
    std::vector<int> leafBuffers;
    if (opcode == HloOpcode::kDot) {
        HLO_ASSIGN_OR_RETURN(const bool gemm, planDotGemm(instruction, outputs[0], time));
        if (gemm) return Status::ok();
        bindOperandLeaves(instruction, 0, spec, leafBuffers);
        spec.addOutputs(instruction);
    } else if (opcode == HloOpcode::kFusion) {
        const HloComputation* fused = instruction.fusedComputation();
        if (!fused)
            return invalidArgument("%" + instruction.name() + ": fusion without a computation");
        bindFusionLeaves(instruction, spec, leafBuffers);
        HLO_ASSIGN_OR_RETURN(const bool done,
                             planEpilogueGemm(instruction, spec, leafBuffers, outputs, time));
        if (done) return Status::ok();
        spec.addOutputs(*fused->root());
    } else if (isKernelOpcode(opcode) || opcode == HloOpcode::kScaledDot ||
               opcode == HloOpcode::kRaggedDot) {
        bindOperandLeaves(instruction, 0, spec, leafBuffers);
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

// The steps of one instruction: routing (planRouting), what needs no kernel of its own
// (planWithoutKernel), the instructions one kernel computes whole (planWholeKernel), and
// every other as kernels, GEMMs first where they apply (planKernels).
Status PlanBuilder::planInstruction(const HloInstruction& instruction, int64_t time) {
    for (const HloInstruction* operand : instruction.operands()) {
        auto it = m_leaves.find(operand);
        if (it == m_leaves.end())
            return internalError("%" + instruction.name() + ": operand %" + operand->name() +
                                 " has no buffer");
        for (int b : it->second) use(b, time);
    }
    HLO_ASSIGN_OR_RETURN(const bool routed, planRouting(instruction, time));
    if (routed) return Status::ok();
    HLO_ASSIGN_OR_RETURN(const bool planned, planWithoutKernel(instruction, time));
    if (planned) return Status::ok();
    for (const HloInstruction* operand : instruction.operands())
        if (!operand->shape().isArray())
            return notOnGpu(
                instruction,
                "operand %" + operand->name() + " is " +
                    (operand->shape().isTuple() ? std::string("a tuple")
                                                : "of shape " + operand->shape().toString(false)));
    const std::vector<int> outputs = newOutputs(instruction, time);
    HLO_ASSIGN_OR_RETURN(const bool whole, planWholeKernel(instruction, outputs, time));
    if (whole) return Status::ok();
    return planKernels(instruction, outputs, time);
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
