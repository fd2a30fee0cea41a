// HloEvaluator: walks computations in post order, keeps one literal per live
// instruction and dispatches each instruction to its family (elementwise,
// shape ops, linear algebra, reductions; see interpreter_internal.h). This file
// handles the rest: parameters, constants, tuples, calls, fusion, control
// flow and async wrappers; random numbers are in rng.cc, well-known custom
// calls in custom_call.cc and single-participant collectives in
// collectives.cc.
#include "core/interpreter/interpreter.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/ir/async_wrapping.h"
#include "core/ir/collective_groups.h"
#include "core/interpreter/interpreter_internal.h"
#include "core/ir/hlo_conditional.h"
#include "core/io/input_limits.h"
#include "core/interpreter/multi_device.h"

namespace hloscope {

namespace evaluator {

Status unsupported(const HloInstruction& instruction, std::string_view what) {
    return Status(StatusCode::kUnimplemented, "%" + instruction.name() + ": " + std::string(what));
}

Status invalid(const HloInstruction& instruction, std::string_view what) {
    return Status(StatusCode::kInvalidArgument,
                  "%" + instruction.name() + ": " + std::string(what));
}

Status needOperands(const HloInstruction& instruction, Operands operands, size_t n) {
    if (operands.size() < n)
        return invalid(instruction, "expects " + std::to_string(n) + " operand(s)");
    return Status::ok();
}

Family familyOf(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kCopy:
        case HloOpcode::kBroadcast:
        case HloOpcode::kReshape:
        case HloOpcode::kTranspose:
        case HloOpcode::kSlice:
        case HloOpcode::kDynamicSlice:
        case HloOpcode::kDynamicUpdateSlice:
        case HloOpcode::kConcatenate:
        case HloOpcode::kPad:
        case HloOpcode::kReverse:
        case HloOpcode::kIota:
        case HloOpcode::kBitcast:
        case HloOpcode::kGetDimensionSize:
        case HloOpcode::kSetDimensionSize:
        case HloOpcode::kDynamicReshape:
            return Family::kShapeOp;
        case HloOpcode::kDot:
        case HloOpcode::kRaggedDot:
        case HloOpcode::kScaledDot:
        case HloOpcode::kConvolution:
        case HloOpcode::kTriangularSolve:
        case HloOpcode::kCholesky:
        case HloOpcode::kFft:
            return Family::kLinalg;
        case HloOpcode::kReduce:
        case HloOpcode::kReduceWindow:
        case HloOpcode::kSelectAndScatter:
        case HloOpcode::kSort:
        case HloOpcode::kGather:
        case HloOpcode::kScatter:
        case HloOpcode::kTopK:
        case HloOpcode::kScan:
        case HloOpcode::kBatchNormTraining:
        case HloOpcode::kBatchNormInference:
        case HloOpcode::kBatchNormGrad:
            return Family::kReduction;
        default:
            break;
    }
    if (hloOpcodeIsElementwise(opcode)) return Family::kElementwise;
    return Family::kCore;
}

}  // namespace evaluator

namespace {

using evaluator::EvalContext;
using evaluator::evaluateCollective;
using evaluator::invalid;
using evaluator::needOperands;
using evaluator::Operands;
using evaluator::sameArrayShape;
using evaluator::startTuple;
using evaluator::unsupported;

constexpr int kMaxCallDepth = 200;

// An async-update that binds more operands (`call-update(%start, %p0)`): the
// previous state's bound operands with these appended, its other elements
// kept where the shapes agree (placeholders otherwise).
StatusOr<Literal> bindLateOperands(const HloInstruction& instruction, Operands operands) {
    const Literal& previous = *operands[0];
    const Shape& shape = instruction.shape();
    if (!previous.isTuple() || previous.tupleElements().empty() ||
        !previous.tupleElement(0).isTuple() || !shape.isTuple() || shape.tupleCount() < 1)
        return invalid(instruction, "async-update operand is not an async-start tuple");
    std::vector<Literal> bound = previous.tupleElement(0).tupleElements();
    for (size_t i = 1; i < operands.size(); ++i) bound.push_back(*operands[i]);
    std::vector<Literal> elements;
    elements.push_back(Literal::makeTuple(std::move(bound)));
    for (int64_t i = 1; i < shape.tupleCount(); ++i) {
        const auto index = static_cast<size_t>(i);
        const bool kept = index < previous.tupleElements().size() &&
                          sameArrayShape(previous.tupleElement(i).shape(), shape.tupleShape(i));
        elements.push_back(kept ? previous.tupleElement(i) : Literal(shape.tupleShape(i)));
    }
    return Literal::makeTuple(std::move(elements));
}

StatusOr<Literal> evaluateTuple(Operands operands) {
    std::vector<Literal> elements;
    elements.reserve(operands.size());
    for (const Literal* operand : operands) elements.push_back(*operand);
    return Literal::makeTuple(std::move(elements));
}

StatusOr<Literal> evaluateGetTupleElement(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(needOperands(instruction, operands, 1));
    const Literal& tuple = *operands[0];
    const int64_t index = instruction.tupleIndex();
    if (!tuple.isTuple() || index < 0 ||
        index >= static_cast<int64_t>(tuple.tupleElements().size()))
        return invalid(instruction, "tuple index " + std::to_string(index) + " out of range");
    return tuple.tupleElement(index);
}

// optimization-barrier, domain, add-dependency: the first operand.
StatusOr<Literal> evaluatePassThrough(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(needOperands(instruction, operands, 1));
    return *operands[0];
}

StatusOr<Literal> evaluateCopyStart(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(needOperands(instruction, operands, 1));
    if (!instruction.shape().isTuple()) return *operands[0];
    return startTuple(instruction.shape(), *operands[0], *operands[0]);
}

StatusOr<Literal> evaluateCopyDone(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(needOperands(instruction, operands, 1));
    if (operands[0]->isTuple() && !operands[0]->tupleElements().empty())
        return operands[0]->tupleElement(0);
    return *operands[0];
}

StatusOr<Literal> evaluateAsyncUpdate(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(needOperands(instruction, operands, 1));
    if (operands.size() == 1) return *operands[0];
    return bindLateOperands(instruction, operands);
}

// ---------------------------------------------------------------------------
// The evaluator proper.

struct ComputationPlan {
    std::vector<const HloInstruction*> order;        // reachable from the root
    std::vector<std::vector<int32_t>> operandSlots;  // per order position
    std::vector<int32_t> useCounts;                  // operand occurrences
    int32_t rootSlot = -1;
    int64_t parameterCount = 0;
    std::vector<int64_t> resultBytes;  // per order position: the result's size
    // Per order position: a get-tuple-element that is the only view of its element of the
    // computation's tuple parameter (every user of the parameter a get-tuple-element, none
    // other of that index). In a while body, whose state the loop owns, it moves the element
    // out of the state instead of sharing it, so that a dynamic-update-slice that is its last
    // reader updates the storage in place (Evaluator::call).
    std::vector<char> movesElement;
};

// Bytes of a shape's arrays, saturating (tuples of limit-sized arrays cannot
// overflow the sum).
int64_t resultByteSize(const Shape& shape) {
    if (!shape.isTuple()) return shape.isArray() ? shape.byteSize() : 0;
    int64_t total = 0;
    for (int64_t i = 0; i < shape.tupleCount(); ++i) {
        const int64_t element = resultByteSize(shape.tupleShape(i));
        total = element > INT64_MAX - total ? INT64_MAX : total + element;
    }
    return total;
}

std::string mebibytes(int64_t bytes) {
    return std::to_string((bytes + (int64_t{1} << 20) - 1) >> 20) + " MiB";
}

class Evaluator final : public EvalContext {
public:
    explicit Evaluator(const HloEvaluatorOptions& options)
        : m_options(options),
          m_randomState(options.rngSeed),
          m_rngStateLow(options.rngSeed),
          m_memoryLimit(options.memoryLimitBytes > 0 ? options.memoryLimitBytes
                                                     : limits::evaluationMemoryLimitBytes()) {}

    StatusOr<Literal> call(const HloComputation& computation,
                           std::span<const Literal* const> arguments) override;
    const HloEvaluatorOptions& options() const override { return m_options; }
    // One instruction on its operands' values (HloInstructionEvaluator).
    StatusOr<Literal> evaluateOne(const HloInstruction& instruction, Operands operands) {
        if (cancelled()) return Status(StatusCode::kCancelled, "evaluation cancelled");
        return evaluateInstruction(instruction, operands);
    }
    uint64_t nextRandom() override {
        // splitmix64
        uint64_t z = (m_randomState += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

private:
    StatusOr<const ComputationPlan*> planFor(const HloComputation& computation);
    StatusOr<Literal> evaluateInstruction(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateCore(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateConstant(const HloInstruction& instruction);
    StatusOr<Literal> evaluateCalled(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateWhile(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateConditional(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateAsyncStart(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateAsyncDone(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateDeviceId(const HloInstruction& instruction);
    StatusOr<Literal> evaluateRngGetAndUpdateState(const HloInstruction& instruction);
    StatusOr<Literal> evaluateTransfer(const HloInstruction& instruction, Operands operands);
    bool cancelled() const {
        return m_options.cancel != nullptr && m_options.cancel->load(std::memory_order_relaxed);
    }

    HloEvaluatorOptions m_options;
    uint64_t m_randomState;
    uint64_t m_rngStateLow;
    uint64_t m_rngStateHigh = 0;
    int m_depth = 0;
    // The state a while loop hands its body's next call (evaluateWhile): the call may move
    // elements out of it (ComputationPlan::movesElement). Taken by that call alone.
    Literal* m_ownedState = nullptr;
    int64_t m_memoryLimit;
    int64_t m_liveBytes = 0;  // results held by the active frames
    std::unordered_map<const HloComputation*, std::unique_ptr<ComputationPlan>> m_plans;
    std::unordered_map<const HloInstruction*, Literal> m_constants;
    struct Frame {
        std::vector<Literal> slots;
        std::vector<const Literal*> values;
        std::vector<int32_t> remaining;
        std::vector<const Literal*> operands;
    };
    std::vector<std::unique_ptr<Frame>> m_frames;  // by call depth
    const HloComputation* m_lastComputation = nullptr;
    const ComputationPlan* m_lastPlan = nullptr;
};

StatusOr<const ComputationPlan*> Evaluator::planFor(const HloComputation& computation) {
    if (&computation == m_lastComputation) return m_lastPlan;  // reducers, map bodies
    auto it = m_plans.find(&computation);
    if (it != m_plans.end()) {
        m_lastComputation = &computation;
        m_lastPlan = it->second.get();
        return m_lastPlan;
    }
    const HloInstruction* root = computation.root();
    if (root == nullptr)
        return invalidArgument("computation " + computation.name() + " has no root");

    // Only what the root depends on is evaluated (plus, with a custom-call
    // handler, the side-effecting custom-calls it may want to see, and between
    // devices the sends: another device waits for what they post).
    std::unordered_set<const HloInstruction*> reachable;
    std::vector<const HloInstruction*> stack = {root};
    reachable.insert(root);
    for (const auto& instruction : computation.instructions()) {
        const HloOpcode opcode = instruction->opcode();
        const bool wanted = (m_options.customCallHandler && opcode == HloOpcode::kCustomCall &&
                             instruction->hasSideEffect()) ||
                            (m_options.collectives != nullptr &&
                             (opcode == HloOpcode::kSend || opcode == HloOpcode::kSendDone));
        if (wanted && reachable.insert(instruction.get()).second)
            stack.push_back(instruction.get());
    }
    while (!stack.empty()) {
        const HloInstruction* node = stack.back();
        stack.pop_back();
        auto visit = [&](const HloInstruction* dep) {
            if (dep != nullptr && reachable.insert(dep).second) stack.push_back(dep);
        };
        for (const HloInstruction* operand : node->operands()) visit(operand);
        for (const HloInstruction* pred : node->controlPredecessors()) visit(pred);
    }

    auto plan = std::make_unique<ComputationPlan>();
    std::unordered_map<const HloInstruction*, int32_t> slotOf;
    for (const HloInstruction* instruction : computation.postOrder()) {
        if (!reachable.count(instruction)) continue;
        slotOf[instruction] = static_cast<int32_t>(plan->order.size());
        plan->order.push_back(instruction);
    }
    plan->useCounts.assign(plan->order.size(), 0);
    plan->operandSlots.resize(plan->order.size());
    for (size_t i = 0; i < plan->order.size(); ++i) {
        for (const HloInstruction* operand : plan->order[i]->operands()) {
            auto found = slotOf.find(operand);
            if (found == slotOf.end())
                return invalid(*plan->order[i], "operand %" + operand->name() +
                                                    " is not in computation " + computation.name());
            plan->operandSlots[i].push_back(found->second);
            ++plan->useCounts[static_cast<size_t>(found->second)];
        }
    }
    auto rootSlot = slotOf.find(root);
    if (rootSlot == slotOf.end())
        return invalidArgument("root of computation " + computation.name() +
                               " is not one of its instructions");
    plan->rootSlot = rootSlot->second;
    plan->parameterCount = computation.parameterCount();
    plan->resultBytes.reserve(plan->order.size());
    for (const HloInstruction* instruction : plan->order)
        plan->resultBytes.push_back(instruction->opcode() == HloOpcode::kParameter
                                        ? 0
                                        : resultByteSize(instruction->shape()));
    for (const HloInstruction* instruction : plan->order) {
        bool moves = instruction->opcode() == HloOpcode::kGetTupleElement &&
                     instruction->operand(0)->opcode() == HloOpcode::kParameter;
        if (moves)
            for (const HloInstruction* user : instruction->operand(0)->users())
                moves = moves && user->opcode() == HloOpcode::kGetTupleElement &&
                        (user == instruction || user->tupleIndex() != instruction->tupleIndex());
        plan->movesElement.push_back(moves);
    }
    const ComputationPlan* result = plan.get();
    m_plans.emplace(&computation, std::move(plan));
    return result;
}

StatusOr<Literal> Evaluator::call(const HloComputation& computation,
                                  std::span<const Literal* const> arguments) {
    Literal* const ownedState = std::exchange(m_ownedState, nullptr);  // this call's alone
    if (m_depth >= kMaxCallDepth)
        return Status(StatusCode::kResourceExhausted, "computation " + computation.name() +
                                                          ": calls nested more than " +
                                                          std::to_string(kMaxCallDepth) + " deep");
    // The depth, and the bytes this call's results hold (released however it
    // ends), are restored on the way out.
    struct DepthGuard {
        int& depth;
        int64_t& liveBytes;
        int64_t liveAtEntry;
        DepthGuard(int& d, int64_t& live) : depth(d), liveBytes(live), liveAtEntry(live) {
            ++depth;
        }
        ~DepthGuard() {
            --depth;
            liveBytes = liveAtEntry;
        }
    } guard(m_depth, m_liveBytes);

    HLO_ASSIGN_OR_RETURN(const ComputationPlan* plan, planFor(computation));
    if (static_cast<int64_t>(arguments.size()) != plan->parameterCount)
        return invalidArgument("computation " + computation.name() + " takes " +
                               std::to_string(plan->parameterCount) + " argument(s), got " +
                               std::to_string(arguments.size()));

    // Per-depth scratch (only one call is active per depth), so small
    // computations called per element (reducers, map) allocate little.
    if (m_frames.size() < static_cast<size_t>(m_depth))
        m_frames.push_back(std::make_unique<Frame>());
    Frame& frame = *m_frames[static_cast<size_t>(m_depth) - 1];
    const size_t count = plan->order.size();
    std::vector<Literal>& slots = frame.slots;
    std::vector<const Literal*>& values = frame.values;  // parameters alias the arguments
    if (slots.size() < count) slots.resize(count);       // emptied as values die
    values.assign(count, nullptr);
    frame.remaining.assign(plan->useCounts.begin(), plan->useCounts.end());
    for (size_t i = 0; i < count; ++i) {
        if (cancelled()) return Status(StatusCode::kCancelled, "evaluation cancelled");
        const HloInstruction& instruction = *plan->order[i];
        const std::vector<int32_t>& operandSlots = plan->operandSlots[i];
        if (instruction.opcode() == HloOpcode::kParameter) {
            const int64_t number = instruction.parameterNumber();
            if (number < 0 || number >= static_cast<int64_t>(arguments.size()))
                return invalid(instruction, "parameter number out of range");
            values[i] = arguments[static_cast<size_t>(number)];
        } else {
            // Checked before the result is allocated (shapes were checked for
            // overflow when the module was read).
            const int64_t bytes = plan->resultBytes[i];
            if (bytes > m_memoryLimit - m_liveBytes)
                return Status(StatusCode::kResourceExhausted,
                              "%" + instruction.name() + ": its result needs " + mebibytes(bytes) +
                                  " with " + mebibytes(m_liveBytes) +
                                  " held already; the interpreter's memory limit is " +
                                  mebibytes(m_memoryLimit) +
                                  " (HLOSCOPE_EVAL_MEMORY_MB raises it)");
            frame.operands.clear();
            for (int32_t slot : operandSlots)
                frame.operands.push_back(values[static_cast<size_t>(slot)]);
            const auto first =
                operandSlots.empty() ? size_t{0} : static_cast<size_t>(operandSlots.front());
            if (plan->movesElement[i] && ownedState != nullptr && values[first] == ownedState &&
                ownedState->isTuple() && instruction.tupleIndex() >= 0 &&
                instruction.tupleIndex() <
                    static_cast<int64_t>(ownedState->tupleElements().size())) {
                // The loop's own state element, read by nothing else: moved, not shared.
                slots[i] = std::move(
                    ownedState
                        ->mutableTupleElements()[static_cast<size_t>(instruction.tupleIndex())]);
            } else if (instruction.opcode() == HloOpcode::kDynamicUpdateSlice &&
                       !operandSlots.empty() && values[first] == &slots[first] &&
                       frame.remaining[first] == 1 &&
                       static_cast<int32_t>(first) != plan->rootSlot &&
                       !(m_options.onInstructionTimed && m_depth == 1)) {
                // Its operand's last reader: the update is written into the operand's value
                // (copied first only where its storage is shared).
                Literal target = std::move(slots[first]);
                frame.operands[0] = &target;
                HLO_RETURN_IF_ERROR(
                    evaluator::updateSliceInto(instruction, target, frame.operands));
                slots[i] = std::move(target);
            } else if (m_options.onInstructionTimed && m_depth == 1) {
                const auto start = std::chrono::steady_clock::now();
                HLO_ASSIGN_OR_RETURN(slots[i], evaluateInstruction(instruction, frame.operands));
                m_options.onInstructionTimed(
                    instruction,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                        .count());
            } else {
                HLO_ASSIGN_OR_RETURN(slots[i], evaluateInstruction(instruction, frame.operands));
            }
            values[i] = &slots[i];
            m_liveBytes += bytes;
        }
        // Free values nothing later needs.
        auto release = [&](size_t slot) {
            if (values[slot] != &slots[slot]) return;  // a parameter: the caller's
            m_liveBytes -= plan->resultBytes[slot];
            slots[slot] = Literal();
        };
        for (int32_t slot : operandSlots)
            if (--frame.remaining[static_cast<size_t>(slot)] == 0 && slot != plan->rootSlot)
                release(static_cast<size_t>(slot));
        if (frame.remaining[i] == 0 && static_cast<int32_t>(i) != plan->rootSlot) release(i);
    }
    const size_t root = static_cast<size_t>(plan->rootSlot);
    if (values[root] != &slots[root]) return *values[root];  // the root is a parameter
    return std::move(slots[root]);
}

StatusOr<Literal> Evaluator::evaluateInstruction(const HloInstruction& instruction,
                                                 Operands operands) {
    switch (evaluator::familyOf(instruction.opcode())) {
        case evaluator::Family::kElementwise:
            return evaluator::evaluateElementwise(instruction, operands, *this);
        case evaluator::Family::kShapeOp:
            return evaluator::evaluateShapeOp(instruction, operands, *this);
        case evaluator::Family::kLinalg:
            return evaluator::evaluateLinalg(instruction, operands, *this);
        case evaluator::Family::kReduction:
            return evaluator::evaluateReduction(instruction, operands, *this);
        case evaluator::Family::kCore:
            break;
    }
    return evaluateCore(instruction, operands);
}

// A dispatch table: each case hands its opcode to the function that evaluates it.
StatusOr<Literal> Evaluator::evaluateCore(const HloInstruction& instruction, Operands operands) {
    const HloOpcode opcode = instruction.opcode();
    switch (opcode) {
        case HloOpcode::kConstant:
            return evaluateConstant(instruction);
        case HloOpcode::kTuple:
            return evaluateTuple(operands);
        case HloOpcode::kGetTupleElement:
            return evaluateGetTupleElement(instruction, operands);
        case HloOpcode::kCall:
        case HloOpcode::kFusion:
            return evaluateCalled(instruction, operands);
        case HloOpcode::kWhile:
            return evaluateWhile(instruction, operands);
        case HloOpcode::kConditional:
            return evaluateConditional(instruction, operands);
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kDomain:
        case HloOpcode::kAddDependency:
            return evaluatePassThrough(instruction, operands);
        case HloOpcode::kAfterAll:
            return Literal(Shape::makeToken());
        case HloOpcode::kCopyStart:
            return evaluateCopyStart(instruction, operands);
        case HloOpcode::kCopyDone:
            return evaluateCopyDone(instruction, operands);
        case HloOpcode::kAsyncStart:
            return evaluateAsyncStart(instruction, operands);
        case HloOpcode::kAsyncUpdate:
            return evaluateAsyncUpdate(instruction, operands);
        case HloOpcode::kAsyncDone:
            return evaluateAsyncDone(instruction, operands);
        case HloOpcode::kReplicaId:
        case HloOpcode::kPartitionId:
            return evaluateDeviceId(instruction);
        case HloOpcode::kRng:
            return evaluator::evaluateRng(instruction, operands, *this);
        case HloOpcode::kRngBitGenerator:
            return evaluator::evaluateRngBitGenerator(instruction, operands);
        case HloOpcode::kRngGetAndUpdateState:
            return evaluateRngGetAndUpdateState(instruction);
        case HloOpcode::kCustomCall:
            return evaluator::evaluateCustomCall(instruction, operands, *this);
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllReduceDone:
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
        case HloOpcode::kAllGatherDone:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kRaggedAllToAll:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectiveReduce:
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteStart:
        case HloOpcode::kCollectivePermuteDone:
            return evaluateCollective(instruction, operands, *this);
        case HloOpcode::kSend:
        case HloOpcode::kSendDone:
        case HloOpcode::kRecv:
        case HloOpcode::kRecvDone:
        case HloOpcode::kInfeed:
        case HloOpcode::kOutfeed:
            return evaluateTransfer(instruction, operands);
        case HloOpcode::kParameter:
            return invalid(instruction, "parameter evaluated out of context");
        default:
            break;
    }
    return unsupported(instruction,
                       std::string(hloOpcodeString(opcode)) + " is not supported by the evaluator");
}

StatusOr<Literal> Evaluator::evaluateConstant(const HloInstruction& instruction) {
    auto it = m_constants.find(&instruction);
    if (it != m_constants.end()) return it->second;
    HLO_ASSIGN_OR_RETURN(Literal literal, literalOfConstant(instruction));
    m_constants.emplace(&instruction, literal);
    return literal;
}

StatusOr<Literal> Evaluator::evaluateCalled(const HloInstruction& instruction, Operands operands) {
    const HloComputation* callee = instruction.toApply();
    if (callee == nullptr) callee = instruction.calledComputation("calls");
    if (callee == nullptr) return invalid(instruction, "missing called computation");
    return call(*callee, operands);
}

StatusOr<Literal> Evaluator::evaluateAsyncStart(const HloInstruction& instruction,
                                                Operands operands) {
    std::vector<HloComputation*> called = instruction.calledComputations();
    if (called.empty()) return unsupported(instruction, "async-start without a computation");
    const Shape& shape = instruction.shape();
    std::vector<Literal> operandValues;
    for (const Literal* operand : operands) operandValues.push_back(*operand);
    // Operands bound later by async-update: the computation runs at
    // the done, on all of them.
    if (asyncBindsLate(instruction) && shape.isTuple() && shape.tupleCount() >= 2)
        return startTuple(shape, Literal::makeTuple(std::move(operandValues)),
                          Literal(shape.tupleShape(1)));
    HLO_ASSIGN_OR_RETURN(Literal result, call(*called.front(), operands));
    if (!shape.isTuple() || shape.tupleCount() < 2) return result;
    Literal first = shape.tupleShape(0).isTuple() || operands.empty()
                        ? Literal::makeTuple(std::move(operandValues))
                        : *operands[0];
    return startTuple(shape, std::move(first), std::move(result));
}

StatusOr<Literal> Evaluator::evaluateAsyncDone(const HloInstruction& instruction,
                                               Operands operands) {
    HLO_RETURN_IF_ERROR(needOperands(instruction, operands, 1));
    if (const HloInstruction* start = asyncChainStart(instruction);
        start && asyncBindsLate(*start)) {
        const Literal& state = *operands[0];
        if (!state.isTuple() || state.tupleElements().empty() || !state.tupleElement(0).isTuple())
            return invalid(instruction, "async-done operand is not an async-start tuple");
        const HloComputation& called = *start->calledComputation("calls");
        const std::vector<Literal>& bound = state.tupleElement(0).tupleElements();
        if (static_cast<int64_t>(bound.size()) != called.parameterCount())
            return invalid(instruction, "its chain binds " + std::to_string(bound.size()) +
                                            " operands; " + called.name() + " takes " +
                                            std::to_string(called.parameterCount()));
        std::vector<const Literal*> arguments;
        for (const Literal& value : bound) arguments.push_back(&value);
        return call(called, arguments);
    }
    const Literal& start = *operands[0];
    if (!start.isTuple() || start.tupleElements().size() < 2)
        return invalid(instruction, "async-done operand is not an async-start tuple");
    return start.tupleElement(1);
}

StatusOr<Literal> Evaluator::evaluateDeviceId(const HloInstruction& instruction) {
    Literal result(instruction.shape());
    if (!result.isValid() || result.elementCount() != 1)
        return invalid(instruction, "expects a scalar result");
    result.setFromInt64(0, instruction.opcode() == HloOpcode::kReplicaId ? m_options.replicaId
                                                                          : m_options.partitionId);
    return result;
}

StatusOr<Literal> Evaluator::evaluateRngGetAndUpdateState(const HloInstruction& instruction) {
    Literal result(instruction.shape());
    if (result.elementType() != PrimitiveType::U64 || result.elementCount() < 1)
        return invalid(instruction, "expects a u64 result");
    std::span<uint64_t> out = result.data<uint64_t>();
    out[0] = m_rngStateLow;
    if (out.size() > 1) out[1] = m_rngStateHigh;
    int64_t delta = 1;
    if (auto text = instruction.attribute("delta")) {
        auto parsed = std::from_chars(text->data(), text->data() + text->size(), delta);
        if (parsed.ec != std::errc())
            return invalid(instruction, "bad delta " + std::string(*text));
    }
    uint64_t old = m_rngStateLow;
    m_rngStateLow += static_cast<uint64_t>(delta);
    if (m_rngStateLow < old) ++m_rngStateHigh;
    return result;
}

// send/recv between the devices of a multi-device evaluation; host transfers,
// infeed and outfeed have no device to talk to.
StatusOr<Literal> Evaluator::evaluateTransfer(const HloInstruction& instruction,
                                              Operands operands) {
    const HloOpcode opcode = instruction.opcode();
    const bool peer = opcode == HloOpcode::kSend || opcode == HloOpcode::kSendDone ||
                      opcode == HloOpcode::kRecv || opcode == HloOpcode::kRecvDone;
    if (peer && m_options.collectives != nullptr && !isHostTransfer(instruction))
        return evaluatePeerTransfer(instruction, operands, *this);
    return unsupported(instruction,
                       std::string(hloOpcodeString(opcode)) + " needs a host or peer device");
}

StatusOr<Literal> Evaluator::evaluateWhile(const HloInstruction& instruction, Operands operands) {
    if (operands.size() != 1) return invalid(instruction, "while takes one operand");
    const HloComputation* condition = instruction.whileCondition();
    const HloComputation* body = instruction.whileBody();
    if (condition == nullptr || body == nullptr)
        return invalid(instruction, "while needs condition and body computations");
    Literal state = *operands[0];
    for (int64_t iteration = 0;; ++iteration) {
        const Literal* argument = &state;
        HLO_ASSIGN_OR_RETURN(Literal predicate, call(*condition, std::span(&argument, 1)));
        if (predicate.elementType() != PrimitiveType::PRED || predicate.elementCount() != 1)
            return invalid(instruction, "while condition must return pred[]");
        if (!predicate.data<bool>()[0]) break;
        if (iteration >= m_options.maxWhileIterations)
            return Status(StatusCode::kResourceExhausted,
                          "%" + instruction.name() + ": while loop exceeded " +
                              std::to_string(m_options.maxWhileIterations) + " iterations");
        m_ownedState = &state;  // the body may move its elements (ComputationPlan::movesElement)
        auto next = call(*body, std::span(&argument, 1));
        m_ownedState = nullptr;
        HLO_ASSIGN_OR_RETURN(state, std::move(next));
    }
    return state;
}

StatusOr<Literal> Evaluator::evaluateConditional(const HloInstruction& instruction,
                                                 Operands operands) {
    if (operands.empty()) return invalid(instruction, "conditional needs a selector operand");
    const std::vector<HloComputation*> branches = conditionalBranches(instruction);
    if (branches.empty() || std::find(branches.begin(), branches.end(), nullptr) != branches.end())
        return invalid(instruction, "conditional has no branch computations");
    const Literal& selector = *operands[0];
    if (selector.elementCount() != 1) return invalid(instruction, "selector must be a scalar");
    int64_t branch;
    if (selector.elementType() == PrimitiveType::PRED) {
        branch = selector.data<bool>()[0] ? 0 : 1;
    } else {
        int64_t index = selector.getAsInt64(0);
        branch = index < 0 || index >= static_cast<int64_t>(branches.size())
                     ? static_cast<int64_t>(branches.size()) - 1
                     : index;
    }
    const size_t argument = static_cast<size_t>(branch) + 1;
    if (argument >= operands.size())
        return invalid(instruction,
                       "conditional has no operand for branch " + std::to_string(branch));
    return call(*branches[static_cast<size_t>(branch)], operands.subspan(argument, 1));
}

bool argumentMatches(const Literal& argument, const Shape& shape) {
    if (!argument.isValid()) return false;
    if (shape.isTuple()) {
        if (!argument.isTuple() ||
            static_cast<int64_t>(argument.tupleElements().size()) != shape.tupleCount())
            return false;
        for (int64_t i = 0; i < shape.tupleCount(); ++i)
            if (!argumentMatches(argument.tupleElement(i), shape.tupleShape(i))) return false;
        return true;
    }
    if (shape.isToken() || shape.isOpaque())
        return argument.shape().elementType() == shape.elementType();
    if (argument.elementType() != shape.elementType() || argument.shape().rank() != shape.rank())
        return false;
    for (int64_t i = 0; i < shape.rank(); ++i)
        if (argument.shape().dimensions(i) != shape.dimensions(i)) return false;
    return true;
}

}  // namespace

std::vector<Literal> makeRandomArguments(const HloComputation& computation, uint64_t seed) {
    std::vector<Literal> arguments;
    for (int64_t i = 0; i < computation.parameterCount(); ++i) {
        RandomLiteralOptions options;
        options.seed = seed + static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
        arguments.push_back(makeRandomLiteral(computation.parameter(i)->shape(), options));
    }
    return arguments;
}

HloEvaluator::HloEvaluator(HloEvaluatorOptions options) : m_options(options) {}

StatusOr<Literal> HloEvaluator::evaluate(const HloModule& module,
                                         std::span<const Literal> arguments) {
    const HloComputation* entry = module.entryComputation();
    if (entry == nullptr) return invalidArgument("module " + module.name() + " has no entry");
    return evaluate(*entry, arguments);
}

StatusOr<Literal> HloEvaluator::evaluate(const HloComputation& computation,
                                         std::span<const Literal> arguments) {
    std::vector<const Literal*> pointers;
    for (const Literal& argument : arguments) pointers.push_back(&argument);
    return evaluate(computation, std::span<const Literal* const>(pointers));
}

StatusOr<Literal> HloEvaluator::evaluate(const HloComputation& computation,
                                         std::span<const Literal* const> arguments) {
    if (static_cast<int64_t>(arguments.size()) != computation.parameterCount())
        return invalidArgument("computation " + computation.name() + " takes " +
                               std::to_string(computation.parameterCount()) + " argument(s), got " +
                               std::to_string(arguments.size()));
    for (size_t i = 0; i < arguments.size(); ++i) {
        const HloInstruction* parameter = computation.parameter(static_cast<int64_t>(i));
        if (parameter == nullptr)
            return invalidArgument("computation " + computation.name() + " has no parameter " +
                                   std::to_string(i));
        if (!argumentMatches(*arguments[i], parameter->shape()))
            return invalidArgument("argument " + std::to_string(i) + " has shape " +
                                   arguments[i]->shape().toString(false) + " but parameter %" +
                                   parameter->name() + " expects " +
                                   parameter->shape().toString(false));
    }
    Evaluator evaluator(m_options);
    return evaluator.call(computation, arguments);
}

struct HloInstructionEvaluator::Impl {
    explicit Impl(const HloEvaluatorOptions& options) : evaluator(options) {}
    Evaluator evaluator;
};

HloInstructionEvaluator::HloInstructionEvaluator(HloEvaluatorOptions options)
    : m_impl(std::make_unique<Impl>(options)) {}
HloInstructionEvaluator::~HloInstructionEvaluator() = default;

StatusOr<Literal> HloInstructionEvaluator::evaluate(const HloInstruction& instruction,
                                                    std::span<const Literal* const> operands) {
    if (static_cast<int64_t>(operands.size()) != instruction.operandCount())
        return invalidArgument("%" + instruction.name() + " takes " +
                               std::to_string(instruction.operandCount()) + " operand(s), " +
                               std::to_string(operands.size()) + " given");
    return m_impl->evaluator.evaluateOne(instruction, operands);
}

StatusOr<Literal> literalOfConstant(const HloInstruction& constant) {
    const std::string& text = constant.literalText();
    if (text.find("...") != std::string::npos)
        return evaluator::unsupported(constant, "constant value was elided from the dump");
    auto literal = Literal::parseValue(text, constant.shape());
    if (!literal.isOk()) return literal.status().withContext("%" + constant.name());
    return literal;
}

}  // namespace hloscope
