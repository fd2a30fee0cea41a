// HloEvaluator: walks computations in post order, keeps one literal per live
// instruction and dispatches each instruction to its family (elementwise,
// shape ops, linear algebra, reductions; see interpreter_internal.h). This file
// handles the rest: parameters, constants, tuples, calls, fusion, control
// flow, async wrappers, random numbers and well-known custom calls;
// single-participant collectives are in collectives.cc.
#include "core/interpreter/interpreter.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <numbers>
#include <optional>
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
#include "core/lowering/library_calls.h"
#include "core/interpreter/multi_device.h"
#include "core/ir/prng_layout.h"

namespace hloscope {

namespace evaluator {

Status unsupported(const HloInstruction& instruction, std::string_view what) {
    return Status(StatusCode::kUnimplemented, "%" + instruction.name() + ": " + std::string(what));
}

Status invalid(const HloInstruction& instruction, std::string_view what) {
    return Status(StatusCode::kInvalidArgument,
                  "%" + instruction.name() + ": " + std::string(what));
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

// ---------------------------------------------------------------------------
// Random bit generators, following XLA's prng.cc bit for bit.

std::array<uint32_t, 2> threeFry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> x) {
    constexpr std::array<int, 8> kRotations = {13, 15, 26, 6, 17, 29, 16, 24};
    const std::array<uint32_t, 3> ks = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
    x[0] += ks[0];
    x[1] += ks[1];
    auto rounds = [&](int first) {
        for (int r = first; r < first + 4; ++r) {
            x[0] += x[1];
            x[1] = std::rotl(x[1], kRotations[static_cast<size_t>(r)]);
            x[1] ^= x[0];
        }
    };
    for (uint32_t block = 1; block <= 5; ++block) {
        rounds(block % 2 == 1 ? 0 : 4);
        x[0] += ks[block % 3];
        x[1] += ks[(block + 1) % 3] + block;
    }
    return x;
}

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
    for (int round = 0; round < 10; ++round) {
        uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u;
        uint64_t p1 = uint64_t{x[2]} * 0xCD9E8D57u;
        x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
             static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
        key[0] += 0x9E3779B9u;
        key[1] += 0xBB67AE85u;
    }
    return x;
}

Literal makePair(Literal first, Literal second) {
    std::vector<Literal> elements;
    elements.push_back(std::move(first));
    elements.push_back(std::move(second));
    return Literal::makeTuple(std::move(elements));
}

std::array<uint32_t, 2> splitU64(uint64_t v) {
    return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}

// Writes raw bit patterns (low bits used) into an array literal of any
// non-complex element type.
void storeRawBits(Literal& literal, const std::vector<uint64_t>& bits) {
    if (literal.elementCount() == 0) return;
    dispatchPrimitiveType(literal.elementType(), [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        if constexpr (!std::is_same_v<T, std::complex<float>> &&
                      !std::is_same_v<T, std::complex<double>>) {
            std::span<T> out = literal.data<T>();
            const int width = primitive_util::bitWidth(PT);
            const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
            for (size_t i = 0; i < out.size(); ++i) {
                uint64_t b = bits[i] & mask;
                if constexpr (std::is_same_v<T, bool>) {
                    out[i] = b != 0;
                } else if constexpr (std::is_same_v<T, float>) {
                    out[i] = std::bit_cast<float>(static_cast<uint32_t>(b));
                } else if constexpr (std::is_same_v<T, double>) {
                    out[i] = std::bit_cast<double>(b);
                } else if constexpr (std::is_integral_v<T>) {
                    if constexpr (std::is_signed_v<T>) {
                        if (width < 64 && (b >> (width - 1)) != 0) b |= ~mask;  // sign-extend
                    }
                    out[i] = static_cast<T>(b);
                } else {
                    out[i] = T::fromBits(static_cast<typename T::Bits>(b));
                }
            }
        }
    });
}

// a > b in XLA's total order (floats: -NaN < -inf < ... < -0 < +0 < ... < +NaN).
bool totalOrderGreater(const Literal& literal, int64_t a, int64_t b) {
    const PrimitiveType type = literal.elementType();
    if (primitive_util::isFloatingPoint(type)) {
        auto key = [](double v) {
            uint64_t bits = std::bit_cast<uint64_t>(v);
            return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
        };
        return key(literal.getAsDouble(a)) > key(literal.getAsDouble(b));
    }
    if (primitive_util::isUnsignedInteger(type) || type == PrimitiveType::PRED)
        return literal.getAsUint64(a) > literal.getAsUint64(b);
    return literal.getAsInt64(a) > literal.getAsInt64(b);
}

StatusOr<Literal> evaluateRngBitGenerator(const HloInstruction& instruction,
                                          const Literal& stateLiteral) {
    const Shape& shape = instruction.shape();
    if (!shape.isTuple() || shape.tupleCount() != 2)
        return invalid(instruction, "rng-bit-generator must produce a (state, data) tuple");
    if (stateLiteral.elementType() != PrimitiveType::U64 || stateLiteral.shape().rank() != 1)
        return unsupported(instruction, "rng-bit-generator state must be u64[N]");
    std::span<const uint64_t> state = stateLiteral.data<uint64_t>();
    const Shape& dataShape = shape.tupleShape(1);
    const PrimitiveType type = dataShape.elementType();
    if (!dataShape.isArray() || type == PrimitiveType::PRED || primitive_util::isComplex(type))
        return unsupported(instruction, "rng-bit-generator output type " +
                                            std::string(primitive_util::name(type)));
    const int bits = primitive_util::bitWidth(type);
    if (bits != 64 && bits > 32)
        return unsupported(instruction, "rng-bit-generator output type " +
                                            std::string(primitive_util::name(type)));

    std::string algorithm = "rng_default";
    if (auto text = instruction.attribute("algorithm")) algorithm = std::string(*text);
    if (algorithm == "rng_default") algorithm = "rng_philox";  // XLA's CPU and GPU default

    const int64_t n = dataShape.elementCount();
    std::vector<uint64_t> values(static_cast<size_t>(n));
    std::vector<uint64_t> newState(state.begin(), state.end());

    if (algorithm == "rng_three_fry") {
        if (state.size() != 2) return unsupported(instruction, "three_fry state must be u64[2]");
        const auto key = splitU64(state[0]);
        const uint64_t counter = state[1];
        if (bits == 64) {
            for (int64_t i = 0; i < n; ++i) {
                auto out = threeFry2x32(key, splitU64(counter + static_cast<uint64_t>(i)));
                values[static_cast<size_t>(i)] = uint64_t{out[0]} | (uint64_t{out[1]} << 32);
            }
            newState[1] = counter + static_cast<uint64_t>(n);
        } else {
            // One dimension split into halves (core/ir/prng_layout.h).
            const ThreeFrySplit layout = threeFrySplit(dataShape.dimensions());
            const int64_t outer = layout.outer, inner = layout.inner, d = layout.size;
            const int64_t half = (d + 1) / 2;
            for (int64_t o = 0; o < outer; ++o)
                for (int64_t h = 0; h < half; ++h)
                    for (int64_t r = 0; r < inner; ++r) {
                        uint64_t linear = static_cast<uint64_t>((o * half + h) * inner + r);
                        auto out = threeFry2x32(key, splitU64(counter + linear));
                        for (int64_t k = 0; k < 2; ++k) {
                            int64_t j = 2 * h + k;
                            if (j >= d) continue;
                            values[static_cast<size_t>((o * d + j) * inner + r)] =
                                out[static_cast<size_t>(k)];
                        }
                    }
            newState[1] = counter + static_cast<uint64_t>(outer * half * inner);
        }
    } else if (algorithm == "rng_philox") {
        if (state.size() != 2 && state.size() != 3)
            return unsupported(instruction, "philox state must be u64[2] or u64[3]");
        const auto key = splitU64(state[0]);
        uint64_t lo = state[1];
        uint64_t hi = state.size() >= 3 ? state[2] : state[0];
        const int64_t vectors = bits == 64 ? (2 * n + 3) / 4 : (n + 3) / 4;
        for (int64_t i = 0; i < vectors; ++i) {
            uint64_t cLo = lo + static_cast<uint64_t>(i);
            uint64_t cHi = cLo < lo ? hi + 1 : hi;
            auto l = splitU64(cLo);
            auto h = splitU64(cHi);
            auto out = philox4x32({l[0], l[1], h[0], h[1]}, key);
            if (bits == 64) {
                for (int64_t k = 0; k < 2; ++k) {
                    int64_t index = 2 * i + k;
                    if (index < n)
                        values[static_cast<size_t>(index)] =
                            uint64_t{out[static_cast<size_t>(2 * k)]} |
                            (uint64_t{out[static_cast<size_t>(2 * k + 1)]} << 32);
                }
            } else {
                for (int64_t k = 0; k < 4; ++k) {
                    int64_t index = 4 * i + k;
                    if (index < n) values[static_cast<size_t>(index)] = out[static_cast<size_t>(k)];
                }
            }
        }
        uint64_t newLo = lo + static_cast<uint64_t>(vectors);
        uint64_t newHi = newLo < lo ? hi + 1 : hi;
        newState[1] = newLo;
        if (state.size() == 3) newState[2] = newHi;
    } else {
        return unsupported(instruction, "rng-bit-generator algorithm " + algorithm);
    }

    Literal stateOut(shape.tupleShape(0));
    if (stateOut.elementType() != PrimitiveType::U64 ||
        stateOut.elementCount() != static_cast<int64_t>(newState.size()))
        return invalid(instruction, "rng-bit-generator state shape mismatch");
    std::copy(newState.begin(), newState.end(), stateOut.data<uint64_t>().begin());
    Literal data(dataShape);
    storeRawBits(data, values);
    return makePair(std::move(stateOut), std::move(data));
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
    StatusOr<Literal> evaluateWhile(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateConditional(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateRng(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateCustomCall(const HloInstruction& instruction, Operands operands);
    StatusOr<Literal> evaluateTopKCustomCall(const HloInstruction& instruction, Operands operands);
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

StatusOr<Literal> Evaluator::evaluateCore(const HloInstruction& instruction, Operands operands) {
    const HloOpcode opcode = instruction.opcode();
    auto needOperands = [&](size_t n) -> Status {
        if (operands.size() < n)
            return invalid(instruction, "expects " + std::to_string(n) + " operand(s)");
        return Status::ok();
    };
    switch (opcode) {
        case HloOpcode::kConstant: {
            auto it = m_constants.find(&instruction);
            if (it != m_constants.end()) return it->second;
            HLO_ASSIGN_OR_RETURN(Literal literal, literalOfConstant(instruction));
            m_constants.emplace(&instruction, literal);
            return literal;
        }
        case HloOpcode::kTuple: {
            std::vector<Literal> elements;
            elements.reserve(operands.size());
            for (const Literal* operand : operands) elements.push_back(*operand);
            return Literal::makeTuple(std::move(elements));
        }
        case HloOpcode::kGetTupleElement: {
            HLO_RETURN_IF_ERROR(needOperands(1));
            const Literal& tuple = *operands[0];
            const int64_t index = instruction.tupleIndex();
            if (!tuple.isTuple() || index < 0 ||
                index >= static_cast<int64_t>(tuple.tupleElements().size()))
                return invalid(instruction,
                               "tuple index " + std::to_string(index) + " out of range");
            return tuple.tupleElement(index);
        }
        case HloOpcode::kCall:
        case HloOpcode::kFusion: {
            const HloComputation* callee = instruction.toApply();
            if (callee == nullptr) callee = instruction.calledComputation("calls");
            if (callee == nullptr) return invalid(instruction, "missing called computation");
            return call(*callee, operands);
        }
        case HloOpcode::kWhile:
            return evaluateWhile(instruction, operands);
        case HloOpcode::kConditional:
            return evaluateConditional(instruction, operands);
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kDomain:
        case HloOpcode::kAddDependency:
            HLO_RETURN_IF_ERROR(needOperands(1));
            return *operands[0];
        case HloOpcode::kAfterAll:
            return Literal(Shape::makeToken());
        case HloOpcode::kCopyStart: {
            HLO_RETURN_IF_ERROR(needOperands(1));
            if (!instruction.shape().isTuple()) return *operands[0];
            return startTuple(instruction.shape(), *operands[0], *operands[0]);
        }
        case HloOpcode::kCopyDone: {
            HLO_RETURN_IF_ERROR(needOperands(1));
            if (operands[0]->isTuple() && !operands[0]->tupleElements().empty())
                return operands[0]->tupleElement(0);
            return *operands[0];
        }
        case HloOpcode::kAsyncStart: {
            std::vector<HloComputation*> called = instruction.calledComputations();
            if (called.empty())
                return unsupported(instruction, "async-start without a computation");
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
        case HloOpcode::kAsyncUpdate:
            HLO_RETURN_IF_ERROR(needOperands(1));
            if (operands.size() == 1) return *operands[0];
            return bindLateOperands(instruction, operands);
        case HloOpcode::kAsyncDone: {
            HLO_RETURN_IF_ERROR(needOperands(1));
            if (const HloInstruction* start = asyncChainStart(instruction);
                start && asyncBindsLate(*start)) {
                const Literal& state = *operands[0];
                if (!state.isTuple() || state.tupleElements().empty() ||
                    !state.tupleElement(0).isTuple())
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
        case HloOpcode::kReplicaId:
        case HloOpcode::kPartitionId: {
            Literal result(instruction.shape());
            if (!result.isValid() || result.elementCount() != 1)
                return invalid(instruction, "expects a scalar result");
            result.setFromInt64(
                0, opcode == HloOpcode::kReplicaId ? m_options.replicaId : m_options.partitionId);
            return result;
        }
        case HloOpcode::kRng:
            return evaluateRng(instruction, operands);
        case HloOpcode::kRngBitGenerator:
            HLO_RETURN_IF_ERROR(needOperands(1));
            return evaluateRngBitGenerator(instruction, *operands[0]);
        case HloOpcode::kRngGetAndUpdateState: {
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
        case HloOpcode::kCustomCall:
            return evaluateCustomCall(instruction, operands);
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
            if (m_options.collectives != nullptr && !isHostTransfer(instruction))
                return evaluatePeerTransfer(instruction, operands, *this);
            [[fallthrough]];
        case HloOpcode::kInfeed:
        case HloOpcode::kOutfeed:
            return unsupported(
                instruction, std::string(hloOpcodeString(opcode)) + " needs a host or peer device");
        case HloOpcode::kParameter:
            return invalid(instruction, "parameter evaluated out of context");
        default:
            break;
    }
    return unsupported(instruction,
                       std::string(hloOpcodeString(opcode)) + " is not supported by the evaluator");
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

StatusOr<Literal> Evaluator::evaluateRng(const HloInstruction& instruction, Operands operands) {
    if (operands.size() != 2) return invalid(instruction, "rng takes two operands");
    std::string distribution = "rng_uniform";
    if (instruction.extra() != nullptr && instruction.extra()->distribution)
        distribution = *instruction.extra()->distribution;
    else if (auto text = instruction.attribute("distribution"))
        distribution = std::string(*text);
    const PrimitiveType type = instruction.shape().elementType();
    Literal result(instruction.shape());
    const int64_t n = result.elementCount();
    auto uniform01 = [&] { return static_cast<double>(nextRandom() >> 11) * 0x1.0p-53; };
    if (primitive_util::isFloatingPoint(type)) {
        const double a = operands[0]->getAsDouble(0);
        const double b = operands[1]->getAsDouble(0);
        if (distribution == "rng_uniform") {
            Literal scratch(Shape::makeScalar(type));
            for (int64_t i = 0; i < n; ++i) {
                // Resample values that round up to the open upper bound.
                for (int attempt = 0;; ++attempt) {
                    scratch.setFromDouble(0, a + (b - a) * uniform01());
                    double v = scratch.getAsDouble(0);
                    if ((v >= a && v < b) || attempt > 64) {
                        result.setFromDouble(i, v);
                        break;
                    }
                }
            }
        } else if (distribution == "rng_normal") {
            for (int64_t i = 0; i < n; ++i) {
                double u1 = std::max(uniform01(), 1e-300);
                double u2 = uniform01();
                result.setFromDouble(i, a + b * std::sqrt(-2.0 * std::log(u1)) *
                                                std::cos(2.0 * std::numbers::pi * u2));
            }
        } else {
            return unsupported(instruction, "distribution " + distribution);
        }
        return result;
    }
    if (primitive_util::isInteger(type) && distribution == "rng_uniform") {
        const int64_t a = operands[0]->getAsInt64(0);
        const int64_t b = operands[1]->getAsInt64(0);
        const uint64_t range = static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
        for (int64_t i = 0; i < n; ++i) {
            uint64_t offset = (b > a && range != 0) ? nextRandom() % range : 0;
            result.setFromInt64(i, static_cast<int64_t>(static_cast<uint64_t>(a) + offset));
        }
        return result;
    }
    return unsupported(instruction,
                       "rng " + distribution + " for " + std::string(primitive_util::name(type)));
}

StatusOr<Literal> Evaluator::evaluateTopKCustomCall(const HloInstruction& instruction,
                                                    Operands operands) {
    const Shape& shape = instruction.shape();
    if (operands.size() != 1 || !shape.isTuple() || shape.tupleCount() != 2)
        return invalid(instruction, "TopK takes one operand and returns (values, indices)");
    const Literal& input = *operands[0];
    const Shape& valueShape = shape.tupleShape(0);
    if (input.shape().rank() == 0 || valueShape.rank() != input.shape().rank())
        return invalid(instruction, "TopK operand rank");
    const int64_t rank = input.shape().rank();
    const int64_t n = input.shape().dimensions(rank - 1);
    const int64_t k = valueShape.dimensions(rank - 1);
    if (k > n) return invalid(instruction, "TopK k exceeds the row length");
    const int64_t rows = n == 0 ? 0 : input.elementCount() / n;
    const PrimitiveType type = input.elementType();
    const HloComputation* comparator = instruction.toApply();
    const int64_t elementBytes = primitive_util::byteWidth(type);

    Literal values(valueShape);
    Literal indices(shape.tupleShape(1));
    const char* inputBytes = static_cast<const char*>(input.untypedData());
    char* valueBytes = values.elementCount() ? static_cast<char*>(values.untypedData()) : nullptr;
    std::vector<int64_t> order(static_cast<size_t>(n));
    Literal lhs(Shape::makeScalar(type)), rhs(Shape::makeScalar(type));
    Literal lhsIndex(Shape::makeScalar(PrimitiveType::S32)),
        rhsIndex(Shape::makeScalar(PrimitiveType::S32));
    Status failure;
    for (int64_t row = 0; row < rows; ++row) {
        for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
        const char* rowBytes = inputBytes + row * n * elementBytes;
        auto greater = [&](int64_t a, int64_t b) -> bool {
            if (!failure.isOk()) return false;
            if (comparator == nullptr) return totalOrderGreater(input, row * n + a, row * n + b);
            std::memcpy(lhs.untypedData(), rowBytes + a * elementBytes,
                        static_cast<size_t>(elementBytes));
            std::memcpy(rhs.untypedData(), rowBytes + b * elementBytes,
                        static_cast<size_t>(elementBytes));
            std::vector<const Literal*> args = {&lhs, &rhs};
            if (comparator->parameterCount() == 4) {
                lhsIndex.setFromInt64(0, a);
                rhsIndex.setFromInt64(0, b);
                args.push_back(&lhsIndex);
                args.push_back(&rhsIndex);
            }
            auto verdict = call(*comparator, args);
            if (!verdict.isOk()) {
                failure = verdict.status();
                return false;
            }
            return verdict->elementCount() == 1 && verdict->getAsInt64(0) != 0;
        };
        std::stable_sort(order.begin(), order.end(), greater);
        HLO_RETURN_IF_ERROR(failure);
        for (int64_t i = 0; i < k; ++i) {
            std::memcpy(valueBytes + (row * k + i) * elementBytes,
                        rowBytes + order[static_cast<size_t>(i)] * elementBytes,
                        static_cast<size_t>(elementBytes));
            indices.setFromInt64(row * k + i, order[static_cast<size_t>(i)]);
        }
    }
    return makePair(std::move(values), std::move(indices));
}

StatusOr<Literal> Evaluator::evaluateCustomCall(const HloInstruction& instruction,
                                                Operands operands) {
    if (m_options.customCallHandler) {
        if (auto handled = m_options.customCallHandler(instruction, operands))
            return std::move(*handled);
    }
    const std::string_view target = instruction.customCallTarget();
    if (target == "TopK") return evaluateTopKCustomCall(instruction, operands);
    if (target == "interpreter.run_parallel")
        return evaluateRunParallel(instruction, operands, m_options);
    if (isLibraryCallTarget(target)) return evaluateLibraryCall(instruction, operands, m_options);
    if (isAnnotationTarget(target)) {
        if (operands.size() == 1 && sameArrayShape(operands[0]->shape(), instruction.shape()))
            return *operands[0];
        return unsupported(instruction,
                           "custom-call " + std::string(target) + " that changes the shape");
    }
    if (target == "cu_threefry2x32" || target == "cu_threefry2x32_ffi" ||
        target == "hip_threefry2x32" || target == "hip_threefry2x32_ffi") {
        // JAX's threefry kernel: (key0, key1, x0, x1) u32 -> (y0, y1).
        const Shape& shape = instruction.shape();
        if (operands.size() != 4 || !shape.isTuple() || shape.tupleCount() != 2)
            return invalid(instruction, "threefry2x32 takes 4 operands and returns 2 arrays");
        Literal y0(shape.tupleShape(0)), y1(shape.tupleShape(1));
        const int64_t n = y0.elementCount();
        for (const Literal* operand : operands)
            if (operand->elementType() != PrimitiveType::U32 ||
                (operand->elementCount() != n && operand->elementCount() != 1))
                return invalid(instruction, "threefry2x32 operands must be u32 of the result size");
        if (n > 0) {
            auto o0 = y0.data<uint32_t>();
            auto o1 = y1.data<uint32_t>();
            auto at = [](const Literal* l, int64_t i) {
                auto d = l->data<uint32_t>();
                return d.size() == 1 ? d[0] : d[static_cast<size_t>(i)];
            };
            for (int64_t i = 0; i < n; ++i) {
                auto out = threeFry2x32({at(operands[0], i), at(operands[1], i)},
                                        {at(operands[2], i), at(operands[3], i)});
                o0[static_cast<size_t>(i)] = out[0];
                o1[static_cast<size_t>(i)] = out[1];
            }
        }
        return makePair(std::move(y0), std::move(y1));
    }
    return unsupported(instruction,
                       "custom-call target \"" + std::string(target) + "\" is not supported");
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
