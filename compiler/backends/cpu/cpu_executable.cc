#include "compiler/backends/cpu/cpu_executable.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_set>

#include "compiler/backends/cpu/cpu_executable_internal.h"
#include "compiler/backends/llvm/dot_plan.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/buffers/heap_layout.h"
#include "compiler/buffers/in_place_update.h"
#include "compiler/runtime/host_caches.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_conditional.h"
#include "core/interpreter/interpreter.h"

namespace hloscope {
namespace cpu_exec {

void collectLeaves(const Shape& shape, std::vector<const Shape*>& out) {
    if (shape.isTuple()) {
        for (const Shape& element : shape.tupleShapes()) collectLeaves(element, out);
    } else {
        out.push_back(&shape);
    }
}

int64_t denseBytes(const Shape& shape) {
    if (!shape.isArray()) return 0;
    return std::max<int64_t>(shape.elementCount(), 0) *
           primitive_util::byteWidth(shape.elementType());
}

}  // namespace cpu_exec

namespace {

size_t leafCount(const Shape& shape) {
    if (!shape.isTuple()) return 1;
    size_t count = 0;
    for (const Shape& element : shape.tupleShapes()) count += leafCount(element);
    return count;
}

// The depth-first number of the array leaf at `path` (a shape index), or
// nullopt when the path does not end at a leaf.
std::optional<size_t> leafNumber(const Shape& shape, const std::vector<int64_t>& path) {
    const Shape* cursor = &shape;
    size_t leaf = 0;
    for (int64_t index : path) {
        if (!cursor->isTuple() || index < 0 || index >= cursor->tupleCount()) return std::nullopt;
        for (int64_t before = 0; before < index; ++before)
            leaf += leafCount(cursor->tupleShape(before));
        cursor = &cursor->tupleShape(index);
    }
    if (cursor->isTuple()) return std::nullopt;
    return leaf;
}

// The CPU's epilogue fusions (dot_plan.h): a dot, or a convolution its GEMM
// convolution runs, followed by an epilogue kernel; operands parameters.
constexpr EpilogueRules kCpuEpilogues{/*convolutions=*/true, /*producerAlone=*/false,
                                      /*throughCopies=*/false};

}  // namespace

using namespace cpu_exec;

// Whether `update` (a dynamic-update-slice) may write into its operand's storage instead of
// copying the operand into a buffer of its own: the loop-carried `ys = dynamic-update-slice(ys,
// y, i, ...)` of a scan, which otherwise copies the whole state every step. The storage must
// belong to this program's activation (a while body's state element, got by one
// get-tuple-element of its parameter, or the output of a kernel or an earlier in-place update
// here), and every other reader of the operand must run before the update and read it as a
// copy (no tuple, get-tuple-element, view bitcast or in-place update keeps its storage). Dense
// default layouts only.
bool CpuExecutable::Impl::canUpdateInPlace(const Program& program, const HloInstruction& update,
                                           int64_t bufferOperand) const {
    if (program.isEntry || bufferOperand < 0 || bufferOperand >= update.operandCount()) return false;
    const HloInstruction* operand = update.operand(bufferOperand);
    const ThunkKind kind = program.thunks[static_cast<size_t>(program.slotOf.at(operand))].kind;
    if (kind == ThunkKind::kGetTupleElement) {
        if (!program.privateParameters || !isOnlyViewOfParameterElement(*operand)) return false;
    } else if (kind != ThunkKind::kKernel && kind != ThunkKind::kUpdateInPlace) {
        return false;
    }
    return otherReadersRunFirst(
        update, bufferOperand,
        [&](const HloInstruction* i) -> int64_t {
            auto it = program.slotOf.find(i);
            return it == program.slotOf.end() ? -1 : it->second;
        },
        // An earlier reader, already planned: a thunk whose value is its operand's storage
        // (or holds it, as a tuple does) rather than a copy.
        [&](const HloInstruction* user) {
            const ThunkKind kind =
                program.thunks[static_cast<size_t>(program.slotOf.at(user))].kind;
            return kind == ThunkKind::kTuple || kind == ThunkKind::kGetTupleElement ||
                   kind == ThunkKind::kAlias || kind == ThunkKind::kUpdateInPlace;
        });
}

// A kLoop fusion rooted at a dynamic-update-slice of one of its parameters, in a loop body,
// writes the update into that operand's storage as a lone update does: a kernel part computes
// the update's elements first (it may read the buffer: the fusion rules let in only reads at
// the update's own position), then the update is copied in at the starts, which must be
// parameters or constants of the fusion.
bool CpuExecutable::Impl::planFusedUpdateInPlace(Program& program, Thunk& thunk, CpuKernelEmitter& emitter) {
    const HloInstruction& fusion = *thunk.instruction;
    const HloComputation* fused = fusion.fusedComputation();
    if (fused == nullptr || fusion.shape().isTuple()) return false;
    const HloInstruction* update = fused->root();
    if (update == nullptr || !isInPlaceUpdateForm(*update, true) ||
        update->operand(0)->opcode() != HloOpcode::kParameter)
        return false;
    const int64_t buffer = update->operand(0)->parameterNumber();
    std::vector<int> startOperands;
    std::vector<Literal> startConstants;
    for (int64_t i = 2; i < update->operandCount(); ++i) {
        const HloInstruction* start = update->operand(i);
        if (start->opcode() == HloOpcode::kParameter) {
            startOperands.push_back(static_cast<int>(start->parameterNumber()));
            startConstants.emplace_back();
        } else if (start->opcode() == HloOpcode::kConstant) {
            auto value = Literal::parseValue(start->literalText(), start->shape());
            if (!value.isOk()) return false;
            startOperands.push_back(-1);
            startConstants.push_back(std::move(*value));
        } else {
            return false;
        }
    }
    if (!canUpdateInPlace(program, fusion, buffer)) return false;
    const HloInstruction* piece = update->operand(1);
    Thunk part;
    if (piece->opcode() != HloOpcode::kParameter) {
        part.kind = ThunkKind::kKernel;
        part.instruction = &fusion;
        part.spec.name = "kernel" + std::to_string(functionCounter++);
        part.spec.replicaId = replicaId;
        part.spec.partitionId = partitionId;
        part.spec.devices = devices;
        for (int64_t i = 0; i < fused->parameterCount(); ++i) part.spec.leaves.push_back(fused->parameter(i));
        part.spec.addOutputs(*piece);
        auto info = emitter.emitKernel(part.spec);
        if (!info.isOk()) return false;
        part.info = *info;
        part.outputElements = std::max<int64_t>(piece->shape().elementCount(), 0);
        part.outputBytes = {denseBytes(piece->shape())};
        thunk.scratch.bytes = denseBytes(piece->shape());
        thunk.parts.push_back(std::move(part));
        ++kernels;
    } else {
        thunk.updateOperand = static_cast<int>(piece->parameterNumber());
    }
    thunk.kind = ThunkKind::kUpdateInPlace;
    thunk.fusedUpdate = update;
    thunk.inPlaceOperand = static_cast<int>(buffer);
    thunk.startOperands = std::move(startOperands);
    thunk.startConstants = std::move(startConstants);
    return true;
}

template <typename Plan>
void CpuExecutable::Impl::planNative(Thunk& thunk, StatusOr<Plan> plan, cpu_exec::ThunkKind kind,
                                     std::shared_ptr<const Plan>& slot) {
    if (!plan.isOk()) {
        makeFallback(thunk, plan.status());
        return;
    }
    thunk.kind = kind;
    slot = std::make_shared<const Plan>(std::move(*plan));
    ++kernels;
}

void CpuExecutable::Impl::makeFallback(Thunk& thunk, const Status& why) {
    thunk.kind = ThunkKind::kFallback;
    std::string message = why.message();
    const std::string prefix = "%" + thunk.instruction->name() + ": ";
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
    thunk.fallbackReason = message;
    fallbacks.push_back("%" + thunk.instruction->name() + ": " + message);
}

// A dispatch over the opcodes whose thunk needs no buffer of its own: parameters, constants,
// tuples, get-tuple-element and aliases (views of their operand). False for every other.
StatusOr<bool> CpuExecutable::Impl::planWithoutBuffers(Thunk& thunk) {
    const HloInstruction& instruction = *thunk.instruction;
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    switch (opcode) {
        case HloOpcode::kParameter:
            thunk.kind = ThunkKind::kParameter;
            return true;
        case HloOpcode::kConstant: {
            thunk.kind = ThunkKind::kConstant;
            HLO_ASSIGN_OR_RETURN(thunk.constant, literalOfConstant(instruction));
            return true;
        }
        case HloOpcode::kTuple:
            thunk.kind = ThunkKind::kTuple;
            return true;
        case HloOpcode::kGetTupleElement:
            thunk.kind = ThunkKind::kGetTupleElement;
            return true;
        case HloOpcode::kAfterAll:
        case HloOpcode::kAddDependency:
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kDomain:
            thunk.kind = opcode == HloOpcode::kAfterAll ? ThunkKind::kEmpty : ThunkKind::kAlias;
            return true;
        case HloOpcode::kBitcast: {
            // A view (buffer assignment aliases bitcasts to their operand); a
            // reshape is a copy kernel, since the assignment gives it a buffer
            // of its own and may reuse the operand's once it is dead.
            const Shape& from = instruction.operand(0)->shape();
            if (shape.isArray() && from.isArray() && from.elementType() == shape.elementType() &&
                from.elementCount() == shape.elementCount() && from.hasDefaultDenseLayout() &&
                shape.hasDefaultDenseLayout()) {
                thunk.kind = ThunkKind::kAlias;
                return true;
            }
            return false;
        }
        default:
            return false;
    }
}

StatusOr<bool> CpuExecutable::Impl::planCallees(Thunk& thunk, CpuKernelEmitter& emitter) {
    const HloInstruction& instruction = *thunk.instruction;
    const HloOpcode opcode = instruction.opcode();
    auto calleeProgram = [&](const HloComputation* computation,
                             bool privateParameters = false) -> StatusOr<Program*> {
        if (!computation)
            return invalidArgument("%" + instruction.name() + ": missing called computation");
        return buildProgram(*computation, false, emitter, privateParameters);
    };
    if (opcode == HloOpcode::kWhile) {
        HLO_ASSIGN_OR_RETURN(Program * condition, calleeProgram(instruction.whileCondition()));
        // The body runs on the loop's own copy of its state.
        HLO_ASSIGN_OR_RETURN(Program * body, calleeProgram(instruction.whileBody(), true));
        thunk.kind = ThunkKind::kWhile;
        thunk.callees = {condition, body};
        return true;
    }
    if (opcode == HloOpcode::kCall) {
        const HloComputation* callee = instruction.toApply();
        if (!callee) callee = instruction.calledComputation("calls");
        HLO_ASSIGN_OR_RETURN(Program * program, calleeProgram(callee));
        thunk.kind = ThunkKind::kCall;
        thunk.callees = {program};
        return true;
    }
    if (opcode == HloOpcode::kConditional) {
        const std::vector<HloComputation*> branches = conditionalBranches(instruction);
        if (branches.empty())
            return invalidArgument("%" + instruction.name() + ": conditional has no branches");
        thunk.kind = ThunkKind::kConditional;
        for (const HloComputation* branch : branches) {
            HLO_ASSIGN_OR_RETURN(Program * program, calleeProgram(branch));
            thunk.callees.push_back(program);
        }
        return true;
    }
    return false;
}

void CpuExecutable::Impl::planDotThunk(Thunk& thunk, CpuKernelEmitter& emitter) {
    auto plan = planGemm(*thunk.instruction);
    if (!plan.isOk()) {
        Status canonical = planCanonicalDot(thunk, emitter);
        if (!canonical.isOk()) makeFallback(thunk, plan.status());
        return;
    }
    thunk.kind = ThunkKind::kGemm;
    thunk.plan = *plan;
    thunk.gemmOperands = {thunk.operands[0], thunk.operands[1]};
    ++kernels;
}

Status CpuExecutable::Impl::planFusionSpec(Thunk& thunk, CpuKernelEmitter& emitter) {
    const HloInstruction& instruction = *thunk.instruction;
    const Shape& shape = instruction.shape();
    const HloComputation* fused = instruction.fusedComputation();
    for (int64_t i = 0; i < fused->parameterCount(); ++i) {
        thunk.spec.leaves.push_back(fused->parameter(i));
        thunk.leafOperands.push_back(static_cast<int>(fused->parameter(i)->parameterNumber()));
    }
    Status failure = Status::ok();
    const HloInstruction* producer = epilogueProducer(instruction, kCpuEpilogues);
    thunk.epilogueInPlace = producer && shape.isArray() &&
                            primitive_util::byteWidth(shape.elementType()) ==
                                primitive_util::byteWidth(producer->shape().elementType());
    if (producer && producer->opcode() == HloOpcode::kConvolution) {
        auto plan = planConvolution(*producer);
        if (plan.isOk()) {
            thunk.spec.leaves.push_back(producer);
            thunk.leafOperands.push_back(-1);
            thunk.gemmOperands = {
                thunk.operands[static_cast<size_t>(producer->operand(0)->parameterNumber())],
                thunk.operands[static_cast<size_t>(producer->operand(1)->parameterNumber())]};
            thunk.scratch.bytes = thunk.epilogueInPlace ? 0 : denseBytes(producer->shape());
            thunk.convolution = std::make_shared<const ConvPlan>(std::move(*plan));
            thunk.kind = ThunkKind::kConvolutionEpilogue;
        } else {
            // Not for the GEMM runtime: the whole fusion element by element.
            thunk.epilogueInPlace = false;
        }
    } else if (const HloInstruction* dot = producer) {
        Status plan = planDotOperands(thunk, *dot, emitter);
        if (plan.isOk()) {
            thunk.spec.leaves.push_back(dot);
            thunk.leafOperands.push_back(-1);
            thunk.gemmOperands = {
                thunk.operands[static_cast<size_t>(dot->operand(0)->parameterNumber())],
                thunk.operands[static_cast<size_t>(dot->operand(1)->parameterNumber())]};
            thunk.dotElementBytes = primitive_util::byteWidth(dot->shape().elementType());
            thunk.kind = ThunkKind::kGemmEpilogue;
        } else {
            failure = plan;
        }
    }
    thunk.spec.addOutputs(*fused->root());
    return failure;
}

Status CpuExecutable::Impl::planKernelParts(Thunk& thunk,
                                            const std::vector<std::vector<size_t>>& groups,
                                            const std::vector<const Shape*>& leaves,
                                            CpuKernelEmitter& emitter) {
    std::vector<Thunk> parts;
    for (const std::vector<size_t>& members : groups) {
        Thunk part;
        part.kind = ThunkKind::kKernel;
        part.instruction = thunk.instruction;
        part.spec = thunk.spec.part(members, thunk.spec.name + ".part" + std::to_string(members.front()));
        part.partOutputs = members;
        part.outputElements = std::max<int64_t>(leaves[members.front()]->elementCount(), 0);
        for (size_t k : members) part.outputBytes.push_back(denseBytes(*leaves[k]));
        if (part.outputElements == 0) continue;  // nothing to compute
        HLO_ASSIGN_OR_RETURN(part.info, emitter.emitKernel(part.spec));
        parts.push_back(std::move(part));
    }
    thunk.kind = ThunkKind::kKernel;
    thunk.parts = std::move(parts);
    thunk.outputElements = 0;
    for (const Shape* leaf : leaves) thunk.outputBytes.push_back(denseBytes(*leaf));
    kernels += static_cast<int64_t>(thunk.parts.size());
    return Status::ok();
}

void CpuExecutable::Impl::planKernelThunk(Thunk& thunk, const std::vector<const Shape*>& leaves,
                                          CpuKernelEmitter& emitter, Status failure) {
    if (failure.isOk() && thunk.spec.outputs.size() != thunk.buffers.size())
        failure =
            Status(StatusCode::kUnimplemented, "kernel outputs do not match the result's leaves");
    if (failure.isOk() && thunk.kind == ThunkKind::kEmpty) {
        const std::vector<std::vector<size_t>> groups = thunk.spec.outputGroups();
        if (groups.size() > 1) {
            failure = planKernelParts(thunk, groups, leaves, emitter);
            if (failure.isOk()) return;
        }
    }
    if (failure.isOk()) {
        int64_t outputBytes = 0;
        for (const Shape* leaf : leaves) outputBytes += denseBytes(*leaf);
        thunk.spec.streamOutputs =
            thunk.kind == ThunkKind::kEmpty && outputBytes >= streamingStoreBytes;
        auto info = emitter.emitKernel(thunk.spec);
        if (info.isOk()) {
            thunk.info = *info;
            if (thunk.kind != ThunkKind::kGemmEpilogue &&
                thunk.kind != ThunkKind::kConvolutionEpilogue)
                thunk.kind = ThunkKind::kKernel;
            thunk.outputElements = std::max<int64_t>(leaves.front()->elementCount(), 0);
            for (const Shape* leaf : leaves) thunk.outputBytes.push_back(denseBytes(*leaf));
            ++kernels;
            return;
        }
        failure = info.status();
    }
    makeFallback(thunk, failure);
}

// The thunk of one instruction: an in-place update, one without buffers (planWithoutBuffers),
// a call of other programs (planCallees), a GEMM, a GEMM convolution, or a kernel (with a GEMM
// or convolution before it for an epilogue fusion); the interpreter where no kernel is made.
Status CpuExecutable::Impl::planThunk(Program& program, Thunk& thunk, CpuKernelEmitter& emitter) {
    const HloInstruction& instruction = *thunk.instruction;
    const HloOpcode opcode = instruction.opcode();
    for (const HloInstruction* operand : instruction.operands())
        thunk.operands.push_back(program.slotOf.at(operand));
    if (opcode == HloOpcode::kDynamicUpdateSlice && isInPlaceUpdateForm(instruction, true) &&
        canUpdateInPlace(program, instruction, 0)) {
        thunk.kind = ThunkKind::kUpdateInPlace;
        return Status::ok();
    }
    if (opcode == HloOpcode::kFusion && planFusedUpdateInPlace(program, thunk, emitter)) return Status::ok();
    HLO_ASSIGN_OR_RETURN(const bool viewed, planWithoutBuffers(thunk));
    if (viewed) return Status::ok();
    std::vector<const Shape*> leaves;
    collectLeaves(instruction.shape(), leaves);
    for (const Shape* leaf : leaves) thunk.buffers.push_back(LeafBuffer{-1, denseBytes(*leaf), -1});
    HLO_ASSIGN_OR_RETURN(const bool called, planCallees(thunk, emitter));
    if (called) return Status::ok();
    for (const HloInstruction* operand : instruction.operands())
        if (!operand->shape().isArray()) {
            makeFallback(thunk, Status(StatusCode::kUnimplemented,
                                       "operand %" + operand->name() + " is a tuple"));
            return Status::ok();
        }
    thunk.spec.name = "kernel" + std::to_string(functionCounter++);
    thunk.spec.replicaId = replicaId;
    thunk.spec.partitionId = partitionId;
    thunk.spec.devices = devices;
    if (opcode == HloOpcode::kDot) {
        planDotThunk(thunk, emitter);
        return Status::ok();
    }
    // A convolution the im2col + GEMM runtime takes; any other (bf16,
    // integers, batch groups, ...) is an element-wise kernel below.
    if (opcode == HloOpcode::kConvolution) {
        if (auto plan = planConvolution(instruction); plan.isOk()) {
            thunk.kind = ThunkKind::kConvolution;
            thunk.convolution = std::make_shared<const ConvPlan>(std::move(*plan));
            ++kernels;
            return Status::ok();
        }
    }
    // A sort by one compare of its keys and a scatter of the forms the runtime takes run
    // natively (core/interpreter/native_{sort,scatter}.h); any other is the interpreter's.
    if (opcode == HloOpcode::kSort) {
        planNative(thunk, planNativeSort(instruction), ThunkKind::kSort, thunk.sort);
        return Status::ok();
    }
    if (opcode == HloOpcode::kScatter) {
        planNative(thunk, planNativeScatter(instruction), ThunkKind::kScatter, thunk.scatter);
        return Status::ok();
    }
    Status failure = Status::ok();
    if (opcode == HloOpcode::kFusion) {
        if (!instruction.fusedComputation())
            return invalidArgument("%" + instruction.name() + ": fusion without a computation");
        failure = planFusionSpec(thunk, emitter);
    } else if (isKernelOpcode(opcode)) {
        std::unordered_set<const HloInstruction*> seen;
        for (int64_t i = 0; i < instruction.operandCount(); ++i) {
            if (seen.insert(instruction.operand(i)).second) {
                thunk.spec.leaves.push_back(instruction.operand(i));
                thunk.leafOperands.push_back(static_cast<int>(i));
            }
        }
        thunk.spec.addOutputs(instruction);
    } else {
        failure = Status(StatusCode::kUnimplemented, std::string(hloOpcodeString(opcode)) +
                                                         " is not compiled by the CPU backend");
    }
    planKernelThunk(thunk, leaves, emitter, failure);
    return Status::ok();
}

// A dot whose batch / contracting dimensions are not where the GEMM wants
// them (attention's [b, s, h, d] x [b, s, h, d] -> [b, h, s, s]): each
// operand is transposed into [batch, free, contracting] (lhs) or [batch,
// contracting, free] (rhs) order by a JIT'd kernel, then multiplied as a
// plain GEMM; the result order (batch, lhs free, rhs free) needs nothing.
Status CpuExecutable::Impl::planCanonicalDot(Thunk& thunk, CpuKernelEmitter& emitter) {
    HLO_RETURN_IF_ERROR(planDotOperands(thunk, *thunk.instruction, emitter));
    thunk.kind = ThunkKind::kGemm;
    thunk.gemmOperands = {thunk.operands[0], thunk.operands[1]};
    ++kernels;
    return Status::ok();
}

Status CpuExecutable::Impl::planDotOperands(Thunk& thunk, const HloInstruction& dot,
                                            CpuKernelEmitter& emitter) {
    if (auto plan = planGemm(dot); plan.isOk()) {
        thunk.plan = *plan;
        return Status::ok();
    }
    Status status = permuteDotOperands(thunk, dot, emitter);
    if (!status.isOk())
        for (int side = 0; side < 2; ++side) {
            thunk.permuteName[side].clear();
            thunk.permuted[side] = LeafBuffer{};
            thunk.permutedElements[side] = 0;
        }
    return status;
}

Status CpuExecutable::Impl::permuteDotOperands(Thunk& thunk, const HloInstruction& dot,
                                               CpuKernelEmitter& emitter) {
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (!numbers || !numbers->lhsRaggedDimensions.empty() || !numbers->rhsGroupDimensions.empty())
        return Status(StatusCode::kUnimplemented, "not a dot_general");
    HloInstruction* sides[2] = {dot.operand(0), dot.operand(1)};
    HloInstruction* canonicalOperands[2];
    for (int side = 0; side < 2; ++side) {
        const Shape& shape = sides[side]->shape();
        if (!shape.isArray()) return Status(StatusCode::kUnimplemented, "tuple operand");
        const std::vector<int64_t> order = gemmOperandOrder(*numbers, side, shape.rank());
        if (isIdentityOrder(order)) {
            canonicalOperands[side] = sides[side];
            continue;
        }
        std::vector<int64_t> dims;
        for (int64_t d : order) dims.push_back(shape.dimensions(d));
        Shape permutedShape(shape.elementType(), dims);
        auto transpose = std::make_unique<HloInstruction>(
            HloOpcode::kTranspose, dot.name() + ".operand" + std::to_string(side), permutedShape);
        transpose->setDimensions(order);
        transpose->appendOperand(sides[side]);
        KernelSpec spec;
        spec.name = "kernel" + std::to_string(functionCounter++);
        spec.replicaId = replicaId;
        spec.partitionId = partitionId;
        spec.devices = devices;
        spec.outputs = {transpose.get()};
        spec.leaves = {sides[side]};
        HLO_RETURN_IF_ERROR(emitter.emitKernel(spec).status());
        thunk.permuteName[side] = spec.name;
        thunk.permuted[side] = LeafBuffer{-1,
                                          std::max<int64_t>(permutedShape.elementCount(), 0) *
                                              primitive_util::byteWidth(shape.elementType()),
                                          -1};
        thunk.permutedElements[side] = std::max<int64_t>(permutedShape.elementCount(), 0);
        canonicalOperands[side] = transpose.get();
        synthetic.push_back(std::move(transpose));
    }
    const DotDimensionNumbers canonical =
        gemmDotNumbers(*numbers, canonicalOperands[0]->shape().rank());
    Shape resultShape(dot.shape().elementType(), dot.shape().dimensions());
    auto canonicalDot =
        std::make_unique<HloInstruction>(HloOpcode::kDot, dot.name() + ".canonical", resultShape);
    canonicalDot->mutableExtra().dotDimensionNumbers = canonical;
    canonicalDot->appendOperand(canonicalOperands[0]);
    canonicalDot->appendOperand(canonicalOperands[1]);
    HLO_ASSIGN_OR_RETURN(thunk.plan, planGemm(*canonicalDot));
    synthetic.push_back(std::move(canonicalDot));
    return Status::ok();
}

StatusOr<Program*> CpuExecutable::Impl::buildProgram(const HloComputation& computation,
                                                     bool isEntry, CpuKernelEmitter& emitter,
                                                     bool privateParameters) {
    const auto key = std::make_pair(&computation, privateParameters);
    if (auto it = programOf.find(key); it != programOf.end()) return it->second;
    auto owned = std::make_unique<Program>();
    Program* program = owned.get();
    programs.push_back(std::move(owned));
    programOf[key] = program;
    program->computation = &computation;
    program->isEntry = isEntry;
    program->privateParameters = privateParameters;
    const std::vector<const HloInstruction*> sequence =
        executionSequence(computation, module->isScheduled());
    program->thunks.resize(sequence.size());
    for (size_t i = 0; i < sequence.size(); ++i) program->slotOf[sequence[i]] = static_cast<int>(i);
    for (size_t i = 0; i < sequence.size(); ++i) {
        for (const HloInstruction* operand : sequence[i]->operands())
            if (!program->slotOf.count(operand))
                return invalidArgument("%" + sequence[i]->name() + ": operand %" + operand->name() +
                                       " is not in computation " + computation.name());
        program->thunks[i].instruction = sequence[i];
        HLO_RETURN_IF_ERROR(planThunk(*program, program->thunks[i], emitter));
    }
    if (!computation.root() || !program->slotOf.count(computation.root()))
        return invalidArgument("computation " + computation.name() + " has no root");
    program->rootSlot = program->slotOf.at(computation.root());
    program->values.resize(sequence.size());
    program->owned.resize(sequence.size());
    return program;
}

Status CpuExecutable::Impl::layOutBuffers(Program& program) {
    int64_t next = 0;
    if (program.isEntry) {
        BufferAssignmentOptions options;
        options.tuplePointerBytes = 0;
        auto assignment = assignBuffers(*module, options);
        if (assignment.isOk()) {
            // The entry's buffers (other than parameters, constants and
            // outputs written in place into the output storage), and each
            // thunk's permuted operand copies and scratch (live only while it
            // runs, time = its position + 1, as the assignment counts), packed
            // by live range into one heap.
            std::vector<HeapInterval> intervals;
            std::vector<LeafBuffer*> leaves;
            for (const LogicalBuffer& buffer : assignment->buffers) {
                if (buffer.allocation < 0 || buffer.isTupleTable || buffer.isCalleeTemporary)
                    continue;
                const BufferAllocation& allocation =
                    assignment->allocations[static_cast<size_t>(buffer.allocation)];
                if (allocation.isParameter || allocation.isConstant) continue;
                auto it = program.slotOf.find(buffer.instruction);
                if (it == program.slotOf.end()) continue;
                Thunk& thunk = program.thunks[static_cast<size_t>(it->second)];
                const std::optional<size_t> leaf =
                    leafNumber(buffer.instruction->shape(), buffer.shapeIndex);
                if (!leaf || *leaf >= thunk.buffers.size()) continue;
                LeafBuffer& target = thunk.buffers[*leaf];
                if (target.output >= 0 || target.offset >= 0 ||
                    target.bytes > alignUp(buffer.sizeBytes) + kAlignment)
                    continue;
                intervals.push_back({buffer.defineTime, buffer.lastUseTime,
                                     std::max(target.bytes, buffer.sizeBytes)});
                leaves.push_back(&target);
                target.offset = 0;  // placed below
            }
            for (size_t i = 0; i < program.thunks.size(); ++i) {
                Thunk& thunk = program.thunks[i];
                const auto time = static_cast<int64_t>(i) + 1;
                for (LeafBuffer& buffer : thunk.permuted)
                    if (buffer.bytes > 0) {
                        intervals.push_back({time, time, buffer.bytes});
                        leaves.push_back(&buffer);
                    }
                if (thunk.scratch.bytes > 0) {
                    intervals.push_back({time, time, thunk.scratch.bytes});
                    leaves.push_back(&thunk.scratch);
                }
            }
            const HeapLayout heap = packHeap(intervals, kAlignment);
            for (size_t i = 0; i < leaves.size(); ++i) leaves[i]->offset = heap.offsets[i];
            next = heap.bytes;
        }
    }
    // Everything not placed by the assignment (called computations, while
    // state, sizes the assignment computed differently): its own region.
    for (Thunk& thunk : program.thunks) {
        for (LeafBuffer& buffer : thunk.buffers)
            if (buffer.offset < 0 && buffer.output < 0) {
                buffer.offset = next;
                next += alignUp(std::max<int64_t>(buffer.bytes, 1));
            }
        for (LeafBuffer& buffer : thunk.permuted)
            if (buffer.bytes > 0 && buffer.offset < 0) {
                buffer.offset = next;
                next += alignUp(buffer.bytes);
            }
        if (thunk.scratch.bytes > 0 && thunk.scratch.offset < 0) {
            thunk.scratch.offset = next;
            next += alignUp(thunk.scratch.bytes);
        }
    }
    program.arenaBytes = next;
    program.arena.reset(next > 0 ? new uint8_t[static_cast<size_t>(next)] : nullptr);
    return Status::ok();
}

Status CpuExecutable::Impl::assignOutputs() {
    Program& entry = *programs.front();
    const HloInstruction* root = entry.computation->root();
    collectLeaves(root->shape(), outputShapes);
    outputStorage.resize(outputShapes.size());
    outputPointers.assign(outputShapes.size(), nullptr);
    // Output leaf k -> (slot, leaf) that defines it, through aliases.
    std::function<void(int, std::vector<int64_t>, int)> claim =
        [&](int slot, std::vector<int64_t> path, int output) {
            Thunk& thunk = entry.thunks[static_cast<size_t>(slot)];
            switch (thunk.kind) {
                case ThunkKind::kTuple:
                    if (path.empty()) return;
                    {
                        const int64_t index = path.front();
                        path.erase(path.begin());
                        if (index < static_cast<int64_t>(thunk.operands.size()))
                            claim(thunk.operands[static_cast<size_t>(index)], path, output);
                    }
                    return;
                case ThunkKind::kGetTupleElement:
                    path.insert(path.begin(), thunk.instruction->tupleIndex());
                    claim(thunk.operands[0], path, output);
                    return;
                case ThunkKind::kAlias:
                    claim(thunk.operands[0], path, output);
                    return;
                case ThunkKind::kKernel:
                case ThunkKind::kGemm:
                case ThunkKind::kGemmEpilogue:
                case ThunkKind::kConvolution:
                case ThunkKind::kConvolutionEpilogue:
                case ThunkKind::kWhile:
                case ThunkKind::kCall:
                case ThunkKind::kConditional: {
                    const std::optional<size_t> leaf = leafNumber(thunk.instruction->shape(), path);
                    if (leaf && *leaf < thunk.buffers.size() && thunk.buffers[*leaf].output < 0)
                        thunk.buffers[*leaf].output = output;
                    return;
                }
                default:
                    return;
            }
        };
    // Leaf k's path from the root.
    std::function<void(const Shape&, std::vector<int64_t>&, int&)> walk =
        [&](const Shape& shape, std::vector<int64_t>& path, int& k) {
            if (shape.isTuple()) {
                for (int64_t i = 0; i < shape.tupleCount(); ++i) {
                    path.push_back(i);
                    walk(shape.tupleShape(i), path, k);
                    path.pop_back();
                }
            } else {
                claim(entry.rootSlot, path, k++);
            }
        };
    std::vector<int64_t> path;
    int k = 0;
    walk(root->shape(), path, k);
    return Status::ok();
}

Status CpuExecutable::Impl::resolveFunctions() {
    for (auto& program : programs)
        for (Thunk& thunk : program->thunks)
            for (int side = 0; side < 2; ++side)
                if (!thunk.permuteName[side].empty()) {
                    HLO_ASSIGN_OR_RETURN(void* address, jit->lookup(thunk.permuteName[side]));
                    thunk.permute[side] = reinterpret_cast<CpuKernelFunction>(address);
                }
    for (auto& program : programs)
        for (Thunk& thunk : program->thunks) {
            if (thunk.kind != ThunkKind::kKernel && thunk.kind != ThunkKind::kGemmEpilogue &&
                thunk.kind != ThunkKind::kConvolutionEpilogue &&
                !(thunk.kind == ThunkKind::kUpdateInPlace && !thunk.parts.empty()))
                continue;
            auto resolve = [&](Thunk& kernel) -> Status {
                HLO_ASSIGN_OR_RETURN(void* address, jit->lookup(kernel.spec.name));
                kernel.kernel = reinterpret_cast<CpuKernelFunction>(address);
                if (kernel.info.splittableReduction) {
                    HLO_ASSIGN_OR_RETURN(void* combine, jit->lookup(kernel.info.combineName));
                    kernel.combine = reinterpret_cast<CpuCombineFunction>(combine);
                }
                return Status::ok();
            };
            if (thunk.parts.empty()) {
                HLO_RETURN_IF_ERROR(resolve(thunk));
            } else {
                for (Thunk& part : thunk.parts) HLO_RETURN_IF_ERROR(resolve(part));
            }
        }
    return Status::ok();
}

int64_t defaultStreamingStoreBytes() {
    const int64_t bytes = hostCaches().lastLevelBytes();
    return bytes > 0 ? bytes : int64_t{32} << 20;
}

StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::compile(std::unique_ptr<HloModule> module,
                                                                const CpuCompileOptions& options) {
    const auto start = Clock::now();
    if (!module || !module->entryComputation())
        return invalidArgument("module has no entry computation");
    auto impl = std::make_unique<Impl>();
    impl->module = std::move(module);
    impl->streamingStoreBytes = options.streamingStoreBytes >= 0 ? options.streamingStoreBytes
                                                                 : defaultStreamingStoreBytes();
    impl->replicaId = options.replicaId;
    impl->partitionId = options.partitionId;
    impl->devices = options.devices;
    HLO_ASSIGN_OR_RETURN(impl->jit, CpuJit::create());
    CpuKernelEmitter emitter(*impl->jit, impl->module->name());
    HLO_RETURN_IF_ERROR(
        impl->buildProgram(*impl->module->entryComputation(), true, emitter).status());
    HLO_RETURN_IF_ERROR(emitter.compileInto(*impl->jit));
    HLO_RETURN_IF_ERROR(impl->resolveFunctions());
    HLO_RETURN_IF_ERROR(impl->assignOutputs());
    for (auto& program : impl->programs) HLO_RETURN_IF_ERROR(impl->layOutBuffers(*program));
    impl->compileSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    return std::unique_ptr<CpuExecutable>(new CpuExecutable(std::move(impl)));
}

CpuExecutable::CpuExecutable(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
CpuExecutable::~CpuExecutable() = default;

const HloModule& CpuExecutable::module() const { return *m_impl->module; }
double CpuExecutable::compileSeconds() const { return m_impl->compileSeconds; }
const std::vector<std::string>& CpuExecutable::fallbacks() const { return m_impl->fallbacks; }
int64_t CpuExecutable::kernelCount() const { return m_impl->kernels; }
int64_t CpuExecutable::inPlaceUpdateCount() const {
    int64_t count = 0;
    for (const auto& program : m_impl->programs)
        for (const Thunk& thunk : program->thunks) count += thunk.kind == ThunkKind::kUpdateInPlace;
    return count;
}

int64_t CpuExecutable::arenaBytes() const {
    int64_t total = 0;
    for (const auto& program : m_impl->programs) total += program->arenaBytes;
    return total;
}

}  // namespace hloscope
