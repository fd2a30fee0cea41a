#include "compiler/backends/cpu/cpu_executable.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/backends/cpu/cpu_kernel_emitter.h"
#include "compiler/backends/cpu/llvm_jit.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/runtime/gemm.h"
#include "compiler/runtime/thread_pool.h"
#include "core/hlo_computation.h"
#include "core/hlo_evaluator.h"

namespace hloscope {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kAlignment = 64;
int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

// A value at run time: an array's storage, or a tuple of values.
struct RtValue {
    uint8_t* data = nullptr;
    std::vector<RtValue> elements;
    bool isTuple = false;
};

// Array leaves of a shape, depth first.
void collectLeaves(const Shape& shape, std::vector<const Shape*>& out) {
    if (shape.isTuple()) {
        for (const Shape& element : shape.tupleShapes()) collectLeaves(element, out);
    } else {
        out.push_back(&shape);
    }
}

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
        for (int64_t before = 0; before < index; ++before) leaf += leafCount(cursor->tupleShape(before));
        cursor = &cursor->tupleShape(index);
    }
    if (cursor->isTuple()) return std::nullopt;
    return leaf;
}

// Bytes of an array in Literal storage (sub-byte types one byte each, unlike
// Shape::byteSize with a packed layout).
int64_t denseBytes(const Shape& shape) {
    if (!shape.isArray()) return 0;
    return std::max<int64_t>(shape.elementCount(), 0) * primitive_util::byteWidth(shape.elementType());
}

void leavesOf(const RtValue& value, std::vector<uint8_t*>& out) {
    if (value.isTuple) {
        for (const RtValue& element : value.elements) leavesOf(element, out);
    } else {
        out.push_back(value.data);
    }
}

// A value over consecutive leaf pointers for `shape`.
RtValue valueOver(const Shape& shape, const std::vector<uint8_t*>& leaves, size_t& next) {
    RtValue value;
    if (shape.isTuple()) {
        value.isTuple = true;
        for (const Shape& element : shape.tupleShapes()) value.elements.push_back(valueOver(element, leaves, next));
    } else {
        value.data = next < leaves.size() ? leaves[next] : nullptr;
        ++next;
    }
    return value;
}

RtValue valueOfLiteral(const Literal& literal) {
    RtValue value;
    if (literal.isTuple()) {
        value.isTuple = true;
        for (const Literal& element : literal.tupleElements()) value.elements.push_back(valueOfLiteral(element));
    } else if (literal.isValid() && literal.shape().isArray()) {
        value.data = static_cast<uint8_t*>(const_cast<void*>(literal.untypedData()));
    }
    return value;
}

Literal literalOfValue(const Shape& shape, const RtValue& value) {
    if (shape.isTuple()) {
        std::vector<Literal> elements;
        for (size_t i = 0; i < shape.tupleShapes().size(); ++i)
            elements.push_back(literalOfValue(shape.tupleShapes()[i],
                                              i < value.elements.size() ? value.elements[i] : RtValue{}));
        return Literal::makeTuple(std::move(elements));
    }
    Literal literal(shape);
    const int64_t bytes = denseBytes(shape);
    if (shape.isArray() && bytes > 0 && value.data) std::memcpy(literal.untypedData(), value.data, static_cast<size_t>(bytes));
    return literal;
}

enum class ThunkKind {
    kParameter, kConstant, kTuple, kGetTupleElement, kAlias, kEmpty,
    kKernel, kGemm, kGemmEpilogue, kWhile, kConditional, kCall, kFallback
};

struct Program;

struct LeafBuffer {
    int64_t offset = -1;  // in the program's arena
    int64_t bytes = 0;
    int output = -1;      // entry output storage index instead
};

struct Thunk {
    ThunkKind kind = ThunkKind::kEmpty;
    const HloInstruction* instruction = nullptr;
    std::vector<int> operands;         // slots of the operands
    std::vector<LeafBuffer> buffers;   // leaves this thunk defines (kernels, gemm, control flow)
    // kKernel / kGemmEpilogue
    CpuKernelSpec spec;
    std::vector<int> leafOperands;     // per spec leaf: index into operands; -1: the dot (epilogue)
    CpuKernelInfo info;
    CpuKernelFunction kernel = nullptr;
    CpuCombineFunction combine = nullptr;
    int64_t outputElements = 0;
    std::vector<int64_t> outputBytes;  // per kernel output
    // kGemm / kGemmEpilogue
    // Operands permuted into [batch, free, contracting] order first (a dot
    // whose batch or contracting dimensions are elsewhere): per operand a
    // transpose kernel writing `permutedBuffers[i]`; null kernel: as is.
    CpuKernelFunction permute[2] = {nullptr, nullptr};
    std::string permuteName[2];
    LeafBuffer permuted[2];
    int64_t permutedElements[2] = {0, 0};
    GemmPlan plan;
    std::vector<int> gemmOperands;     // lhs, rhs slots
    int64_t dotElementBytes = 4;
    // kConstant
    Literal constant;
    // control flow
    std::vector<Program*> callees;     // while: condition, body; conditional: branches; call: callee
    std::string fallbackReason;
};

struct Program {
    const HloComputation* computation = nullptr;
    bool isEntry = false;
    std::vector<Thunk> thunks;  // thunk i defines slot i
    std::unordered_map<const HloInstruction*, int> slotOf;
    int rootSlot = -1;
    int64_t arenaBytes = 0;
    std::unique_ptr<uint8_t[]> arena;
    // Frame (one activation at a time: HLO has no recursion).
    std::vector<RtValue> values;
    std::vector<Literal> owned;  // fallback results and copies
};

// The values a kernel computed by `root` stores: a tuple's elements, a
// variadic reduce's components, or the root itself.
void addKernelOutputs(CpuKernelSpec& spec, const HloInstruction& root) {
    if (root.opcode() == HloOpcode::kTuple) {
        for (const HloInstruction* element : root.operands()) spec.outputs.push_back(element);
    } else if (root.shape().isTuple() && root.opcode() == HloOpcode::kReduce) {
        for (int64_t k = 0; k < root.shape().tupleCount(); ++k) {
            spec.outputs.push_back(&root);
            spec.outputComponents.push_back(static_cast<int>(k));
        }
    } else {
        spec.outputs.push_back(&root);
    }
}

// The dot of a kOutput-style fusion whose other instructions form an
// elementwise epilogue reading the dot at the output's own index, or nullptr.
const HloInstruction* epilogueDot(const HloInstruction& fusion) {
    const HloComputation* fused = fusion.fusedComputation();
    if (!fused || !fusion.shape().isArray()) return nullptr;
    const HloInstruction* dot = nullptr;
    for (const auto& instruction : fused->instructions()) {
        if (instruction->opcode() != HloOpcode::kDot) continue;
        if (dot) return nullptr;
        dot = instruction.get();
    }
    if (!dot || dot == fused->root()) return nullptr;
    if (dot->shape().dimensions() != fusion.shape().dimensions()) return nullptr;
    for (const HloInstruction* operand : dot->operands())
        if (operand->opcode() != HloOpcode::kParameter) return nullptr;
    // Everything that depends on the dot: elementwise of the output's dimensions.
    std::unordered_set<const HloInstruction*> dependent{dot};
    for (const HloInstruction* instruction : fused->postOrder()) {
        bool depends = false;
        for (const HloInstruction* operand : instruction->operands()) depends = depends || dependent.count(operand);
        if (!depends) continue;
        if (!instruction->isElementwise() || instruction->shape().dimensions() != dot->shape().dimensions())
            return nullptr;
        dependent.insert(instruction);
    }
    return dependent.count(fused->root()) ? dot : nullptr;
}

}  // namespace

struct CpuExecutable::Impl {
    std::unique_ptr<HloModule> module;
    std::unique_ptr<CpuJit> jit;
    // Instructions made by the compiler (canonical dots, their transposes);
    // destroyed before the module.
    std::vector<std::unique_ptr<HloInstruction>> synthetic;
    std::vector<std::unique_ptr<Program>> programs;  // [0] is the entry
    std::unordered_map<const HloComputation*, Program*> programOf;
    std::vector<std::string> fallbacks;
    int64_t kernels = 0;
    double compileSeconds = 0;
    int64_t functionCounter = 0;
    std::mutex runMutex;
    // Entry outputs: flattened root leaves and their recycled storage.
    std::vector<const Shape*> outputShapes;
    std::vector<std::shared_ptr<std::vector<uint8_t>>> outputStorage;
    std::vector<uint8_t*> outputPointers;
    // Partial-reduction scratch, grown on demand.
    std::vector<std::unique_ptr<uint8_t[]>> scratch;
    std::vector<int64_t> scratchBytes;

    StatusOr<Program*> buildProgram(const HloComputation& computation, bool isEntry, CpuKernelEmitter& emitter);
    Status planThunk(Program& program, Thunk& thunk, CpuKernelEmitter& emitter);
    Status planCanonicalDot(Thunk& thunk, CpuKernelEmitter& emitter);
    void makeFallback(Thunk& thunk, const Status& why);
    Status layOutBuffers(Program& program);
    Status assignOutputs();
    Status resolveFunctions();
};

namespace {

struct RunContext {
    RunContext(const ExecutionOptions& options_, ThreadPool* pool_, const HloEvaluatorOptions& evaluatorOptions)
        : options(options_), pool(pool_), evaluator(evaluatorOptions) {}
    const ExecutionOptions& options;
    ThreadPool* pool;
    HloInstructionEvaluator evaluator;
    InstructionTimes times;  // of the entry's thunks
    int64_t entryTotal = 1;
    double lastProgress = -1;
    bool cancelled() const { return options.cancel && options.cancel->load(std::memory_order_relaxed); }
    int threads() const { return pool ? pool->threadCount() : 1; }
};

}  // namespace

void CpuExecutable::Impl::makeFallback(Thunk& thunk, const Status& why) {
    thunk.kind = ThunkKind::kFallback;
    std::string message = why.message();
    const std::string prefix = "%" + thunk.instruction->name() + ": ";
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
    thunk.fallbackReason = message;
    fallbacks.push_back("%" + thunk.instruction->name() + ": " + message);
}

Status CpuExecutable::Impl::planThunk(Program& program, Thunk& thunk, CpuKernelEmitter& emitter) {
    const HloInstruction& instruction = *thunk.instruction;
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    auto slot = [&](const HloInstruction* operand) { return program.slotOf.at(operand); };
    for (const HloInstruction* operand : instruction.operands()) thunk.operands.push_back(slot(operand));
    switch (opcode) {
    case HloOpcode::kParameter: thunk.kind = ThunkKind::kParameter; return Status::ok();
    case HloOpcode::kConstant: {
        thunk.kind = ThunkKind::kConstant;
        auto literal = literalOfConstant(instruction);
        if (!literal.isOk()) return literal.status();
        thunk.constant = std::move(*literal);
        return Status::ok();
    }
    case HloOpcode::kTuple: thunk.kind = ThunkKind::kTuple; return Status::ok();
    case HloOpcode::kGetTupleElement: thunk.kind = ThunkKind::kGetTupleElement; return Status::ok();
    case HloOpcode::kAfterAll: case HloOpcode::kAddDependency: case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
        thunk.kind = opcode == HloOpcode::kAfterAll ? ThunkKind::kEmpty : ThunkKind::kAlias;
        return Status::ok();
    case HloOpcode::kBitcast: {
        // A view (buffer assignment aliases bitcasts to their operand); a
        // reshape is a copy kernel, since the assignment gives it a buffer
        // of its own and may reuse the operand's once it is dead.
        const Shape& from = instruction.operand(0)->shape();
        if (shape.isArray() && from.isArray() && from.elementType() == shape.elementType() &&
            from.elementCount() == shape.elementCount() && from.hasDefaultDenseLayout() && shape.hasDefaultDenseLayout()) {
            thunk.kind = ThunkKind::kAlias;
            return Status::ok();
        }
        break;
    }
    default: break;
    }
    std::vector<const Shape*> leaves;
    collectLeaves(shape, leaves);
    for (const Shape* leaf : leaves) thunk.buffers.push_back(LeafBuffer{-1, denseBytes(*leaf), -1});

    auto calleeProgram = [&](const HloComputation* computation) -> StatusOr<Program*> {
        if (!computation) return invalidArgument("%" + instruction.name() + ": missing called computation");
        return buildProgram(*computation, false, emitter);
    };
    if (opcode == HloOpcode::kWhile) {
        HLO_ASSIGN_OR_RETURN(Program * condition, calleeProgram(instruction.whileCondition()));
        HLO_ASSIGN_OR_RETURN(Program * body, calleeProgram(instruction.whileBody()));
        thunk.kind = ThunkKind::kWhile;
        thunk.callees = {condition, body};
        return Status::ok();
    }
    if (opcode == HloOpcode::kCall) {
        const HloComputation* callee = instruction.toApply();
        if (!callee) callee = instruction.calledComputation("calls");
        HLO_ASSIGN_OR_RETURN(Program * program_, calleeProgram(callee));
        thunk.kind = ThunkKind::kCall;
        thunk.callees = {program_};
        return Status::ok();
    }
    if (opcode == HloOpcode::kConditional) {
        std::vector<HloComputation*> branches;
        if (instruction.calledComputation("true_computation")) {
            branches = {instruction.calledComputation("true_computation"),
                        instruction.calledComputation("false_computation")};
        } else {
            for (const auto& attribute : instruction.calledComputationAttributes())
                if (attribute.name == "branch_computations") branches = attribute.computations;
        }
        if (branches.empty()) return invalidArgument("%" + instruction.name() + ": conditional has no branches");
        thunk.kind = ThunkKind::kConditional;
        for (const HloComputation* branch : branches) {
            HLO_ASSIGN_OR_RETURN(Program * program_, calleeProgram(branch));
            thunk.callees.push_back(program_);
        }
        return Status::ok();
    }
    for (const HloInstruction* operand : instruction.operands())
        if (!operand->shape().isArray()) {
            makeFallback(thunk, Status(StatusCode::kUnimplemented, "operand %" + operand->name() + " is a tuple"));
            return Status::ok();
        }
    const std::string functionName = "kernel" + std::to_string(functionCounter++);
    thunk.spec.name = functionName;
    if (opcode == HloOpcode::kDot) {
        auto plan = planGemm(instruction);
        if (!plan.isOk()) {
            Status canonical = planCanonicalDot(thunk, emitter);
            if (!canonical.isOk()) makeFallback(thunk, plan.status());
            return Status::ok();
        }
        thunk.kind = ThunkKind::kGemm;
        thunk.plan = *plan;
        thunk.gemmOperands = {thunk.operands[0], thunk.operands[1]};
        ++kernels;
        return Status::ok();
    }
    Status failure = Status::ok();
    if (opcode == HloOpcode::kFusion) {
        const HloComputation* fused = instruction.fusedComputation();
        if (!fused) return invalidArgument("%" + instruction.name() + ": fusion without a computation");
        for (int64_t i = 0; i < fused->parameterCount(); ++i) {
            thunk.spec.leaves.push_back(fused->parameter(i));
            thunk.leafOperands.push_back(static_cast<int>(fused->parameter(i)->parameterNumber()));
        }
        if (const HloInstruction* dot = epilogueDot(instruction)) {
            auto plan = planGemm(*dot);
            if (plan.isOk()) {
                thunk.spec.leaves.push_back(dot);
                thunk.leafOperands.push_back(-1);
                thunk.plan = *plan;
                thunk.gemmOperands = {thunk.operands[static_cast<size_t>(dot->operand(0)->parameterNumber())],
                                      thunk.operands[static_cast<size_t>(dot->operand(1)->parameterNumber())]};
                thunk.dotElementBytes = primitive_util::byteWidth(dot->shape().elementType());
                thunk.kind = ThunkKind::kGemmEpilogue;
            } else {
                failure = plan.status();
            }
        }
        addKernelOutputs(thunk.spec, *fused->root());
    } else if (isKernelOpcode(opcode)) {
        std::unordered_set<const HloInstruction*> seen;
        for (int64_t i = 0; i < instruction.operandCount(); ++i) {
            if (seen.insert(instruction.operand(i)).second) {
                thunk.spec.leaves.push_back(instruction.operand(i));
                thunk.leafOperands.push_back(static_cast<int>(i));
            }
        }
        addKernelOutputs(thunk.spec, instruction);
    } else {
        failure = Status(StatusCode::kUnimplemented,
                         std::string(hloOpcodeString(opcode)) + " is not compiled by the CPU backend");
    }
    if (failure.isOk() && thunk.spec.outputs.size() != thunk.buffers.size())
        failure = Status(StatusCode::kUnimplemented, "kernel outputs do not match the result's leaves");
    if (failure.isOk()) {
        auto info = emitter.emit(thunk.spec);
        if (info.isOk()) {
            thunk.info = *info;
            if (thunk.kind != ThunkKind::kGemmEpilogue) thunk.kind = ThunkKind::kKernel;
            thunk.outputElements = std::max<int64_t>(leaves.front()->elementCount(), 0);
            for (const Shape* leaf : leaves) thunk.outputBytes.push_back(denseBytes(*leaf));
            ++kernels;
            return Status::ok();
        }
        failure = info.status();
    }
    makeFallback(thunk, failure);
    return Status::ok();
}

// A dot whose batch / contracting dimensions are not where the GEMM wants
// them (attention's [b, s, h, d] x [b, s, h, d] -> [b, h, s, s]): each
// operand is transposed into [batch, free, contracting] (lhs) or [batch,
// contracting, free] (rhs) order by a JIT'd kernel, then multiplied as a
// plain GEMM; the result order (batch, lhs free, rhs free) needs nothing.
Status CpuExecutable::Impl::planCanonicalDot(Thunk& thunk, CpuKernelEmitter& emitter) {
    const HloInstruction& dot = *thunk.instruction;
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (!numbers || !numbers->lhsRaggedDimensions.empty() || !numbers->rhsGroupDimensions.empty())
        return Status(StatusCode::kUnimplemented, "not a dot_general");
    HloInstruction* sides[2] = {dot.operand(0), dot.operand(1)};
    const std::vector<int64_t>* batch[2] = {&numbers->lhsBatchDimensions, &numbers->rhsBatchDimensions};
    const std::vector<int64_t>* contracting[2] = {&numbers->lhsContractingDimensions,
                                                  &numbers->rhsContractingDimensions};
    HloInstruction* canonicalOperands[2];
    for (int side = 0; side < 2; ++side) {
        const Shape& shape = sides[side]->shape();
        if (!shape.isArray()) return Status(StatusCode::kUnimplemented, "tuple operand");
        std::vector<int64_t> order(batch[side]->begin(), batch[side]->end());
        std::vector<int64_t> free;
        for (int64_t d = 0; d < shape.rank(); ++d)
            if (std::find(batch[side]->begin(), batch[side]->end(), d) == batch[side]->end() &&
                std::find(contracting[side]->begin(), contracting[side]->end(), d) == contracting[side]->end())
                free.push_back(d);
        if (side == 0) {
            order.insert(order.end(), free.begin(), free.end());
            order.insert(order.end(), contracting[side]->begin(), contracting[side]->end());
        } else {
            order.insert(order.end(), contracting[side]->begin(), contracting[side]->end());
            order.insert(order.end(), free.begin(), free.end());
        }
        bool identity = true;
        for (size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == static_cast<int64_t>(i);
        if (identity) {
            canonicalOperands[side] = sides[side];
            continue;
        }
        std::vector<int64_t> dims;
        for (int64_t d : order) dims.push_back(shape.dimensions(d));
        Shape permutedShape(shape.elementType(), dims);
        auto transpose = std::make_unique<HloInstruction>(HloOpcode::kTranspose,
                                                          dot.name() + ".operand" + std::to_string(side), permutedShape);
        transpose->setDimensions(order);
        transpose->appendOperand(sides[side]);
        CpuKernelSpec spec;
        spec.name = "kernel" + std::to_string(functionCounter++);
        spec.outputs = {transpose.get()};
        spec.leaves = {sides[side]};
        HLO_RETURN_IF_ERROR(emitter.emit(spec).status());
        thunk.permuteName[side] = spec.name;
        thunk.permuted[side] = LeafBuffer{-1, std::max<int64_t>(permutedShape.elementCount(), 0) *
                                                  primitive_util::byteWidth(shape.elementType()), -1};
        thunk.permutedElements[side] = std::max<int64_t>(permutedShape.elementCount(), 0);
        canonicalOperands[side] = transpose.get();
        synthetic.push_back(std::move(transpose));
    }
    const int64_t batchRank = static_cast<int64_t>(numbers->lhsBatchDimensions.size());
    const int64_t contractingRank = static_cast<int64_t>(numbers->lhsContractingDimensions.size());
    DotDimensionNumbers canonical;
    for (int64_t i = 0; i < batchRank; ++i) {
        canonical.lhsBatchDimensions.push_back(i);
        canonical.rhsBatchDimensions.push_back(i);
    }
    const int64_t lhsRank = canonicalOperands[0]->shape().rank();
    for (int64_t i = 0; i < contractingRank; ++i) {
        canonical.lhsContractingDimensions.push_back(lhsRank - contractingRank + i);
        canonical.rhsContractingDimensions.push_back(batchRank + i);
    }
    Shape resultShape(dot.shape().elementType(), dot.shape().dimensions());
    auto canonicalDot = std::make_unique<HloInstruction>(HloOpcode::kDot, dot.name() + ".canonical", resultShape);
    canonicalDot->mutableExtra().dotDimensionNumbers = canonical;
    canonicalDot->appendOperand(canonicalOperands[0]);
    canonicalDot->appendOperand(canonicalOperands[1]);
    HLO_ASSIGN_OR_RETURN(thunk.plan, planGemm(*canonicalDot));
    synthetic.push_back(std::move(canonicalDot));
    thunk.kind = ThunkKind::kGemm;
    thunk.gemmOperands = {thunk.operands[0], thunk.operands[1]};
    ++kernels;
    return Status::ok();
}

StatusOr<Program*> CpuExecutable::Impl::buildProgram(const HloComputation& computation, bool isEntry,
                                                     CpuKernelEmitter& emitter) {
    if (auto it = programOf.find(&computation); it != programOf.end()) return it->second;
    auto owned = std::make_unique<Program>();
    Program* program = owned.get();
    programs.push_back(std::move(owned));
    programOf[&computation] = program;
    program->computation = &computation;
    program->isEntry = isEntry;
    const std::vector<const HloInstruction*> sequence = executionSequence(computation, module->isScheduled());
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
            std::vector<int64_t> allocationOffset(assignment->allocations.size(), -1);
            for (const BufferAllocation& allocation : assignment->allocations) {
                if (allocation.isParameter || allocation.isConstant) continue;
                allocationOffset[static_cast<size_t>(allocation.index)] = next;
                next += alignUp(allocation.sizeBytes);
            }
            for (const LogicalBuffer& buffer : assignment->buffers) {
                if (buffer.allocation < 0 || buffer.isTupleTable || buffer.isCalleeTemporary) continue;
                auto it = program.slotOf.find(buffer.instruction);
                if (it == program.slotOf.end()) continue;
                Thunk& thunk = program.thunks[static_cast<size_t>(it->second)];
                const std::optional<size_t> leaf = leafNumber(buffer.instruction->shape(), buffer.shapeIndex);
                if (!leaf || *leaf >= thunk.buffers.size()) continue;
                const int64_t offset = allocationOffset[static_cast<size_t>(buffer.allocation)];
                if (offset >= 0 && thunk.buffers[*leaf].bytes <= alignUp(buffer.sizeBytes) + kAlignment)
                    thunk.buffers[*leaf].offset = offset;
            }
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
            if (buffer.bytes > 0) {
                buffer.offset = next;
                next += alignUp(buffer.bytes);
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
    std::function<void(int, std::vector<int64_t>, int)> claim = [&](int slot, std::vector<int64_t> path, int output) {
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
        case ThunkKind::kKernel: case ThunkKind::kGemm: case ThunkKind::kGemmEpilogue: case ThunkKind::kWhile:
        case ThunkKind::kCall: case ThunkKind::kConditional: {
            const std::optional<size_t> leaf = leafNumber(thunk.instruction->shape(), path);
            if (leaf && *leaf < thunk.buffers.size() && thunk.buffers[*leaf].output < 0)
                thunk.buffers[*leaf].output = output;
            return;
        }
        default: return;
        }
    };
    // Leaf k's path from the root.
    std::function<void(const Shape&, std::vector<int64_t>&, int&)> walk = [&](const Shape& shape,
                                                                              std::vector<int64_t>& path, int& k) {
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
            if (thunk.kind != ThunkKind::kKernel && thunk.kind != ThunkKind::kGemmEpilogue) continue;
            HLO_ASSIGN_OR_RETURN(void* address, jit->lookup(thunk.spec.name));
            thunk.kernel = reinterpret_cast<CpuKernelFunction>(address);
            if (thunk.info.splittableReduction) {
                HLO_ASSIGN_OR_RETURN(void* combine, jit->lookup(thunk.info.combineName));
                thunk.combine = reinterpret_cast<CpuCombineFunction>(combine);
            }
        }
    return Status::ok();
}

StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::compile(std::unique_ptr<HloModule> module) {
    const auto start = Clock::now();
    if (!module || !module->entryComputation()) return invalidArgument("module has no entry computation");
    auto impl = std::make_unique<Impl>();
    impl->module = std::move(module);
    HLO_ASSIGN_OR_RETURN(impl->jit, CpuJit::create());
    CpuKernelEmitter emitter(*impl->jit, impl->module->name());
    HLO_RETURN_IF_ERROR(impl->buildProgram(*impl->module->entryComputation(), true, emitter).status());
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
int64_t CpuExecutable::arenaBytes() const {
    int64_t total = 0;
    for (const auto& program : m_impl->programs) total += program->arenaBytes;
    return total;
}

namespace {

// Executes thunk sequences (recursively for control flow).
class Runner {
public:
    Runner(CpuExecutable::Impl& impl, RunContext& context) : m_impl(impl), m_context(context) {}

    Status runProgram(Program& program, const std::vector<RtValue>& parameters);

private:
    Status runThunk(Program& program, size_t slot, const std::vector<RtValue>& parameters);
    uint8_t* bufferPointer(Program& program, const LeafBuffer& buffer) {
        if (buffer.output >= 0) return m_impl.outputPointers[static_cast<size_t>(buffer.output)];
        return program.arena.get() + buffer.offset;
    }
    RtValue ownValue(Program& program, const Thunk& thunk) {
        std::vector<uint8_t*> leaves;
        for (const LeafBuffer& buffer : thunk.buffers) leaves.push_back(bufferPointer(program, buffer));
        size_t next = 0;
        return valueOver(thunk.instruction->shape(), leaves, next);
    }
    // body(begin, end) over [0, n): on this thread when `small`, or with
    // one thread; else in chunks of at least `grain` on the pool.
    void forRange(int64_t n, int64_t grain, bool small, const std::function<void(int64_t, int64_t)>& body) {
        if (small || !m_context.pool || m_context.threads() == 1) body(0, n);
        else m_context.pool->parallelFor(n, grain, body);
    }
    // A kernel over all n output elements (each reducing `reduced`), in
    // parallel above ~32K elements of work.
    void runElements(CpuKernelFunction kernel, void* const* pointers, int64_t n, int64_t reduced) {
        const double work = static_cast<double>(n) * static_cast<double>(reduced);
        forRange(n, std::max<int64_t>(1, 16384 / reduced), work < 32768,
                 [&](int64_t begin, int64_t end) { kernel(pointers, begin, end, 0, reduced); });
    }
    // The kernel's buffer table: its outputs, then its leaves (null for an
    // epilogue's dot, which the caller fills in).
    std::vector<void*> kernelPointers(Program& program, const Thunk& thunk) {
        std::vector<void*> pointers;
        for (const LeafBuffer& buffer : thunk.buffers) pointers.push_back(bufferPointer(program, buffer));
        for (int operand : thunk.leafOperands)
            pointers.push_back(operand < 0 ? nullptr
                                           : program.values[static_cast<size_t>(thunk.operands[static_cast<size_t>(operand)])].data);
        return pointers;
    }
    void runKernel(Program& program, Thunk& thunk);
    void runGemmEpilogue(Program& program, Thunk& thunk);
    // Copies `from` into the leaves of `to` (same shape). A source that is
    // another leaf of `to` (a loop body swapping state elements) is staged
    // first so no copy reads what an earlier one overwrote.
    static void copyValue(const Shape& shape, const RtValue& from, const RtValue& to) {
        std::vector<uint8_t*> a, b;
        leavesOf(from, a);
        leavesOf(to, b);
        std::vector<const Shape*> shapes;
        collectLeaves(shape, shapes);
        const size_t count = std::min({shapes.size(), a.size(), b.size()});
        bool crossed = false;
        for (size_t i = 0; i < count && !crossed; ++i)
            for (size_t j = 0; j < count; ++j)
                if (j != i && a[i] && a[i] == b[j]) crossed = true;
        std::vector<std::vector<uint8_t>> staged;
        if (crossed)
            for (size_t i = 0; i < count; ++i) {
                const auto bytes = static_cast<size_t>(denseBytes(*shapes[i]));
                staged.emplace_back(a[i] ? a[i] : nullptr, a[i] ? a[i] + bytes : nullptr);
                a[i] = staged.back().empty() ? a[i] : staged.back().data();
            }
        for (size_t i = 0; i < count; ++i)
            if (a[i] != b[i] && a[i] && b[i]) std::memcpy(b[i], a[i], static_cast<size_t>(denseBytes(*shapes[i])));
    }
    uint8_t* scratch(size_t index, int64_t bytes) {
        if (m_impl.scratch.size() <= index) {
            m_impl.scratch.resize(index + 1);
            m_impl.scratchBytes.resize(index + 1, 0);
        }
        if (m_impl.scratchBytes[index] < bytes) {
            m_impl.scratch[index].reset(new uint8_t[static_cast<size_t>(bytes)]);
            m_impl.scratchBytes[index] = bytes;
        }
        return m_impl.scratch[index].get();
    }

    CpuExecutable::Impl& m_impl;
    RunContext& m_context;
};

void Runner::runKernel(Program& program, Thunk& thunk) {
    const size_t outputs = thunk.spec.outputs.size();
    const std::vector<void*> pointers = kernelPointers(program, thunk);
    const int64_t n = thunk.outputElements;
    const int64_t reduced = std::max<int64_t>(thunk.info.reducedElements, 1);
    if (n == 0) return;
    const int threads = m_context.threads();
    const double work = static_cast<double>(n) * static_cast<double>(reduced);
    if (threads > 1 && work >= 32768 && thunk.info.splittableReduction && thunk.combine && n < threads &&
        reduced >= 4096) {
        // Split the reduced elements: part 0 into the outputs, the others
        // into scratch, then combine.
        std::vector<std::vector<void*>> parts(static_cast<size_t>(threads), pointers);
        for (int t = 1; t < threads; ++t) {
            int64_t total = 0;
            for (size_t k = 0; k < outputs; ++k) total += alignUp(thunk.outputBytes[k]);
            uint8_t* base = scratch(static_cast<size_t>(t), total);
            int64_t offset = 0;
            for (size_t k = 0; k < outputs; ++k) {
                parts[static_cast<size_t>(t)][k] = base + offset;
                offset += alignUp(thunk.outputBytes[k]);
            }
        }
        m_context.pool->parallelFor(threads, 1, [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t) {
                const int64_t lo = reduced * t / threads, hi = reduced * (t + 1) / threads;
                thunk.kernel(parts[static_cast<size_t>(t)].data(), 0, n, lo, hi);
            }
        });
        for (int t = 1; t < threads; ++t) {
            std::vector<void*> combine(pointers.begin(), pointers.begin() + static_cast<std::ptrdiff_t>(outputs));
            combine.insert(combine.end(), parts[static_cast<size_t>(t)].begin(),
                           parts[static_cast<size_t>(t)].begin() + static_cast<std::ptrdiff_t>(outputs));
            thunk.combine(combine.data(), 0, n);
        }
        return;
    }
    runElements(thunk.kernel, pointers.data(), n, reduced);
}

void Runner::runGemmEpilogue(Program& program, Thunk& thunk) {
    const std::vector<void*> pointers = kernelPointers(program, thunk);
    const GemmPlan& plan = thunk.plan;
    const uint8_t* lhs = program.values[static_cast<size_t>(thunk.gemmOperands[0])].data;
    const uint8_t* rhs = program.values[static_cast<size_t>(thunk.gemmOperands[1])].data;
    const int64_t rows = plan.batch * plan.m;
    if (rows == 0 || plan.n == 0) return;
    const size_t dotSlot = pointers.size() - 1;
    const int64_t rowBytes = plan.n * thunk.dotElementBytes;
    // Row blocks of about 128 KiB: the GEMM writes one into a per-thread
    // scratch block and the epilogue reads it back from cache.
    const int64_t block = std::max<int64_t>(1, std::min<int64_t>(gemmRowGrain(plan), (128 << 10) / std::max<int64_t>(rowBytes, 1)));
    auto body = [&](int64_t begin, int64_t end) {
        thread_local std::vector<uint8_t> scratchBlock;
        if (scratchBlock.size() < static_cast<size_t>(block * rowBytes))
            scratchBlock.resize(static_cast<size_t>(block * rowBytes));
        std::vector<void*> local = pointers;
        for (int64_t r0 = begin; r0 < end; r0 += block) {
            const int64_t r1 = std::min(end, r0 + block);
            runGemmRows(plan, lhs, rhs, scratchBlock.data(), r0, r1);
            // The epilogue reads the dot at the output's linear index.
            local[dotSlot] = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(scratchBlock.data()) -
                                                     static_cast<uintptr_t>(r0 * rowBytes));
            thunk.kernel(local.data(), r0 * plan.n, r1 * plan.n, 0, 1);
        }
    };
    const int64_t grain = std::max(block, gemmRowGrain(plan));
    forRange(rows, grain, rows <= grain, body);
}

Status Runner::runThunk(Program& program, size_t slot, const std::vector<RtValue>& parameters) {
    Thunk& thunk = program.thunks[slot];
    RtValue& value = program.values[slot];
    auto operandValue = [&](size_t i) -> const RtValue& {
        return program.values[static_cast<size_t>(thunk.operands[i])];
    };
    const HloInstruction& instruction = *thunk.instruction;
    switch (thunk.kind) {
    case ThunkKind::kParameter: {
        const auto number = static_cast<size_t>(instruction.parameterNumber());
        if (number >= parameters.size()) return internalError("%" + instruction.name() + ": no argument");
        value = parameters[number];
        return Status::ok();
    }
    case ThunkKind::kConstant: value = valueOfLiteral(thunk.constant); return Status::ok();
    case ThunkKind::kTuple:
        value = RtValue{};
        value.isTuple = true;
        for (size_t i = 0; i < thunk.operands.size(); ++i) value.elements.push_back(operandValue(i));
        return Status::ok();
    case ThunkKind::kGetTupleElement: {
        const RtValue& tuple = operandValue(0);
        const auto index = static_cast<size_t>(instruction.tupleIndex());
        if (!tuple.isTuple || index >= tuple.elements.size())
            return internalError("%" + instruction.name() + ": tuple index out of range");
        value = tuple.elements[index];
        return Status::ok();
    }
    case ThunkKind::kAlias: value = thunk.operands.empty() ? RtValue{} : operandValue(0); return Status::ok();
    case ThunkKind::kEmpty: value = RtValue{}; return Status::ok();
    case ThunkKind::kKernel:
        value = ownValue(program, thunk);
        runKernel(program, thunk);
        return Status::ok();
    case ThunkKind::kGemm: {
        value = ownValue(program, thunk);
        const void* sides[2] = {operandValue(0).data, operandValue(1).data};
        for (int side = 0; side < 2; ++side) {
            if (!thunk.permute[side]) continue;
            uint8_t* target = program.arena.get() + thunk.permuted[side].offset;
            void* buffers[2] = {target, const_cast<void*>(sides[side])};
            runElements(thunk.permute[side], buffers, thunk.permutedElements[side], 1);
            sides[side] = target;
        }
        runGemm(thunk.plan, sides[0], sides[1], value.data, m_context.pool);
        return Status::ok();
    }
    case ThunkKind::kGemmEpilogue:
        value = ownValue(program, thunk);
        runGemmEpilogue(program, thunk);
        return Status::ok();
    case ThunkKind::kWhile: {
        value = ownValue(program, thunk);
        copyValue(instruction.shape(), operandValue(0), value);
        Program& condition = *thunk.callees[0];
        Program& body = *thunk.callees[1];
        for (int64_t iteration = 0;; ++iteration) {
            if (m_context.cancelled()) return Status(StatusCode::kCancelled, "run cancelled");
            if (iteration >= m_context.options.maxWhileIterations)
                return Status(StatusCode::kResourceExhausted,
                              "%" + instruction.name() + ": more than " +
                                  std::to_string(m_context.options.maxWhileIterations) + " iterations");
            HLO_RETURN_IF_ERROR(runProgram(condition, {value}));
            const RtValue& predicate = condition.values[static_cast<size_t>(condition.rootSlot)];
            if (!predicate.data || *predicate.data == 0) break;
            HLO_RETURN_IF_ERROR(runProgram(body, {value}));
            copyValue(instruction.shape(), body.values[static_cast<size_t>(body.rootSlot)], value);
        }
        return Status::ok();
    }
    case ThunkKind::kCall: {
        value = ownValue(program, thunk);
        std::vector<RtValue> arguments;
        for (size_t i = 0; i < thunk.operands.size(); ++i) arguments.push_back(operandValue(i));
        Program& callee = *thunk.callees[0];
        HLO_RETURN_IF_ERROR(runProgram(callee, arguments));
        copyValue(instruction.shape(), callee.values[static_cast<size_t>(callee.rootSlot)], value);
        return Status::ok();
    }
    case ThunkKind::kConditional: {
        value = ownValue(program, thunk);
        const RtValue& selector = operandValue(0);
        const PrimitiveType type = instruction.operand(0)->shape().elementType();
        const auto branches = static_cast<int64_t>(thunk.callees.size());
        int64_t branch = 0;
        if (type == PrimitiveType::PRED) {
            branch = selector.data && *selector.data ? 0 : 1;
        } else {
            int32_t index = 0;
            if (selector.data) std::memcpy(&index, selector.data, sizeof(index));
            branch = index < 0 || index >= branches ? branches - 1 : index;
        }
        if (static_cast<size_t>(branch) + 1 >= thunk.operands.size())
            return internalError("%" + instruction.name() + ": no operand for branch " + std::to_string(branch));
        Program& callee = *thunk.callees[static_cast<size_t>(branch)];
        HLO_RETURN_IF_ERROR(runProgram(callee, {operandValue(static_cast<size_t>(branch) + 1)}));
        copyValue(instruction.shape(), callee.values[static_cast<size_t>(callee.rootSlot)], value);
        return Status::ok();
    }
    case ThunkKind::kFallback: {
        std::vector<Literal> operands;
        operands.reserve(thunk.operands.size());
        for (size_t i = 0; i < thunk.operands.size(); ++i)
            operands.push_back(literalOfValue(instruction.operand(static_cast<int64_t>(i))->shape(), operandValue(i)));
        std::vector<const Literal*> pointers;
        for (const Literal& operand : operands) pointers.push_back(&operand);
        HLO_ASSIGN_OR_RETURN(Literal result, m_context.evaluator.evaluate(instruction, pointers));
        program.owned[slot] = std::move(result);
        value = valueOfLiteral(program.owned[slot]);
        if (!thunk.buffers.empty()) {
            // Into its buffers when it has some (entry outputs written in place).
            RtValue own = ownValue(program, thunk);
            copyValue(instruction.shape(), value, own);
            value = own;
        }
        return Status::ok();
    }
    }
    return internalError("unknown thunk kind");
}

Status Runner::runProgram(Program& program, const std::vector<RtValue>& parameters) {
    const bool timed = program.isEntry;
    for (size_t slot = 0; slot < program.thunks.size(); ++slot) {
        if (m_context.cancelled()) return Status(StatusCode::kCancelled, "run cancelled");
        const Thunk& thunk = program.thunks[slot];
        const bool measure = timed && thunk.kind != ThunkKind::kParameter;
        const auto start = measure ? Clock::now() : Clock::time_point{};
        HLO_RETURN_IF_ERROR(runThunk(program, slot, parameters));
        if (!measure) continue;
        m_context.times.add(*thunk.instruction, std::chrono::duration<double>(Clock::now() - start).count());
        if (m_context.options.progress) {
            const int64_t done = m_context.times.count();
            const double fraction = static_cast<double>(done) / static_cast<double>(m_context.entryTotal);
            if (fraction - m_context.lastProgress >= 0.01 || done == m_context.entryTotal) {
                m_context.lastProgress = fraction;
                m_context.options.progress(std::min(fraction, 1.0), thunk.instruction->name());
            }
        }
    }
    return Status::ok();
}

}  // namespace

StatusOr<ExecutionResult> CpuExecutable::run(const std::vector<Literal>& args, const ExecutionOptions& options,
                                             ThreadPool* pool) {
    std::lock_guard<std::mutex> lock(m_impl->runMutex);
    Program& entry = *m_impl->programs.front();
    const HloComputation& computation = *entry.computation;
    if (static_cast<int64_t>(args.size()) != computation.parameterCount())
        return invalidArgument("module '" + m_impl->module->name() + "' takes " +
                               std::to_string(computation.parameterCount()) + " argument(s), " +
                               std::to_string(args.size()) + " given");
    std::vector<RtValue> parameters;
    for (int64_t i = 0; i < computation.parameterCount(); ++i) {
        const Shape& expected = computation.parameter(i)->shape();
        const Literal& arg = args[static_cast<size_t>(i)];
        if (!arg.shape().sameDimensions(expected) || arg.shape().elementType() != expected.elementType())
            return invalidArgument("argument " + std::to_string(i) + " has shape " + arg.shape().toString(false) +
                                   " but parameter %" + computation.parameter(i)->name() + " expects " +
                                   expected.toString(false));
        parameters.push_back(valueOfLiteral(arg));
    }
    // Output storage: reused when the caller has dropped the last run's literals.
    for (size_t k = 0; k < m_impl->outputShapes.size(); ++k) {
        auto& storage = m_impl->outputStorage[k];
        const auto bytes = static_cast<size_t>(denseBytes(*m_impl->outputShapes[k]));
        if (!storage || storage.use_count() > 1 || storage->size() != bytes)
            storage = std::make_shared<std::vector<uint8_t>>(bytes);
        m_impl->outputPointers[k] = storage->data();
    }

    ExecutionResult result;
    result.device = "cpu";
    HloEvaluatorOptions evaluatorOptions;
    evaluatorOptions.rngSeed = options.rngSeed;
    evaluatorOptions.maxWhileIterations = options.maxWhileIterations;
    evaluatorOptions.cancel = options.cancel;
    RunContext context(options, pool, evaluatorOptions);
    context.entryTotal = std::max<int64_t>(
        1, static_cast<int64_t>(entry.thunks.size()) - computation.parameterCount());
    if (options.progress) options.progress(0, {});
    Runner runner(*m_impl, context);
    const auto start = Clock::now();
    Status status = runner.runProgram(entry, parameters);
    if (!status.isOk()) {
        for (auto& program : m_impl->programs)
            for (Literal& owned : program->owned) owned = Literal();
        return status;
    }
    // Outputs: in place where a kernel wrote them, copied otherwise; the
    // root's tuple elements (nested tuples as tuple literals), as the
    // interpreter returns them.
    std::vector<uint8_t*> leaves;
    leavesOf(entry.values[static_cast<size_t>(entry.rootSlot)], leaves);
    size_t nextLeaf = 0;
    std::function<Literal(const Shape&)> build = [&](const Shape& shape) -> Literal {
        if (shape.isTuple()) {
            std::vector<Literal> elements;
            for (const Shape& element : shape.tupleShapes()) elements.push_back(build(element));
            return Literal::makeTuple(std::move(elements));
        }
        const size_t k = nextLeaf++;
        if (!shape.isArray() || k >= m_impl->outputShapes.size()) return Literal(shape);
        uint8_t* target = m_impl->outputPointers[k];
        const auto bytes = static_cast<size_t>(denseBytes(shape));
        if (k < leaves.size() && leaves[k] != target && leaves[k] && bytes > 0) std::memcpy(target, leaves[k], bytes);
        return Literal::fromStorage(shape, m_impl->outputStorage[k]);
    };
    const Shape& rootShape = computation.root()->shape();
    if (rootShape.isTuple()) {
        for (const Shape& element : rootShape.tupleShapes()) result.outputs.push_back(build(element));
    } else {
        result.outputs.push_back(build(rootShape));
    }
    result.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (auto& program : m_impl->programs)
        for (Literal& owned : program->owned) owned = Literal();
    context.times.moveInto(result);
    result.fallbacks = m_impl->fallbacks;
    if (options.progress) options.progress(1, {});
    return result;
}

}  // namespace hloscope
