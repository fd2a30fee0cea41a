// HloVerifier: module structure, per-instruction shape checks against shape
// inference, threads, original values and layout-sensitive checks.
// Module-level checks (entry layout, aliasing) are in hlo_verifier_module.cc,
// attribute parsing in hlo_verifier_util.cc, called computations and
// sharding consistency in hlo_verifier_calls.cc, opcode-specific checks in
// hlo_verifier_opcode_specific.cc, collectives/async/custom calls in
// hlo_verifier_ops.cc and start/done pairs, channels and buffers in
// hlo_verifier_channels.cc.
#include "core/verifier/hlo_verifier.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/change_stamps.h"
#include "core/support/name_hash_set.h"
#include "core/support/pointer_index.h"
#include "core/verifier/hlo_verifier_internal.h"
#include "core/shape_inference/shape_inference.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope {
namespace {

using namespace verifier_internal;
using shape_inference_internal::compatible;
using shape_inference_internal::compatibleIgnoringFp;
using shape_inference_internal::str;

// Rewrites an inference error "%name: msg" into "%name in computation c: msg".
Status withComputation(const HloInstruction& instruction, const Status& status) {
    std::string prefix = "%" + instruction.name() + ": ";
    const std::string& message = status.message();
    if (message.rfind(prefix, 0) == 0)
        return instructionError(instruction, message.substr(prefix.size()));
    return instructionError(instruction, message);
}

// Opcodes whose declared shape must match the inferred one exactly (XLA's
// CheckShape: no implicit layout or precision change).
bool isExactShapeOpcode(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kBitcast:
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kConstant:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kParameter:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kTuple:
    case HloOpcode::kWhile: return true;
    default: return false;
    }
}

bool compareMinorToMajorOnly(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kCopyStart:
    case HloOpcode::kConstant:
    case HloOpcode::kInfeed:
    case HloOpcode::kRecv:
    case HloOpcode::kSend: return true;
    default: return false;
    }
}

// Opcodes exempt from XLA's mixed-precision operand check.
bool allowsMixedPrecisionOperands(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kConstant:
    case HloOpcode::kConvolution:
    case HloOpcode::kDot:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall:
    case HloOpcode::kDomain:
    case HloOpcode::kFusion:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kParameter:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kSort:
    case HloOpcode::kTuple:
    case HloOpcode::kWhile:
    case HloOpcode::kScan:
    case HloOpcode::kRng:
    case HloOpcode::kAddDependency:
    case HloOpcode::kStochasticConvert: return true;
    default: return false;
    }
}

// Opcodes whose result follows the operands' dynamism elementwise.
bool checksDynamism(HloOpcode opcode) {
    return hloOpcodeIsElementwiseUnary(opcode) || hloOpcodeIsElementwiseBinary(opcode) ||
           opcode == HloOpcode::kSelect || opcode == HloOpcode::kClamp;
}

bool dynamismEqual(const Shape& a, const Shape& b) {
    if (a.isTuple() && b.isTuple()) {
        if (a.tupleCount() != b.tupleCount()) return false;
        for (int64_t i = 0; i < a.tupleCount(); ++i)
            if (!dynamismEqual(a.tupleShape(i), b.tupleShape(i))) return false;
        return true;
    }
    if (!a.isArray() || !b.isArray() || a.rank() != b.rank()) return true;
    for (int64_t i = 0; i < a.rank(); ++i) {
        if (a.isUnboundedDimension(i) || b.isUnboundedDimension(i)) continue;
        if (a.isDynamicDimension(i) != b.isDynamicDimension(i)) return false;
    }
    return true;
}

bool hasUnboundedDimension(const Shape& shape) {
    if (shape.isTuple()) {
        for (const Shape& element : shape.tupleShapes())
            if (hasUnboundedDimension(element)) return true;
        return false;
    }
    if (!shape.isArray()) return false;
    for (int64_t i = 0; i < shape.rank(); ++i)
        if (shape.isUnboundedDimension(i)) return true;
    return false;
}


// Whether an element before `item` in `items` has its name: the exact check behind a
// NameHashSet, whose shared hash would otherwise read as a repeated name.
template <typename Items, typename Item, typename NameOf>
bool repeatsName(const Items& items, const Item& item, NameOf nameOf) {
    const std::string_view name = nameOf(&item);
    for (const auto& other : items) {
        if (&*other == &item) return false;
        if (nameOf(other) == name) return true;
    }
    return false;
}

class Verifier {
public:
    Verifier(const HloModule& module, const HloVerifierOptions& options,
             std::optional<uint64_t> since = std::nullopt)
        : m_module(module), m_options(options), m_since(since) {
        if (m_since && module.headerStamp() > *m_since) m_since.reset();
    }

    Status run();

private:
    Status verifyStructure();
    Status verifyComputation(const HloComputation& computation);
    Status verifyAcyclic(const HloComputation& computation);
    Status verifyInstruction(const HloInstruction& instruction);
    Status verifyShape(const HloInstruction& instruction);
    Status verifyMixedPrecision(const HloInstruction& instruction);
    Status verifyLayoutSensitive(const HloInstruction& instruction);
    Status verifyOriginalValue(const HloInstruction& instruction);
    Status verifyThreads(const HloInstruction& instruction);
    bool changed(const HloInstruction& instruction) const;
    bool callsChanged() const;

    const HloModule& m_module;
    const HloVerifierOptions& m_options;
    std::optional<uint64_t> m_since;  // verify only what changed after this count
    std::unordered_set<const HloComputation*> m_computations;
};

Status Verifier::run() {
    HLO_RETURN_IF_ERROR(verifyStructure());
    HLO_RETURN_IF_ERROR(verifyAsyncPairs(m_module, m_since));
    HLO_RETURN_IF_ERROR(verifyChannels(m_module));
    for (const auto& computation : m_module.computations()) {
        // In a computation that did not change, only the computations its instructions call
        // can have changed.
        const bool unchanged = m_since && computation->changeStamp() <= *m_since;
        for (const auto& instruction : computation->instructions()) {
            if (unchanged && instruction->calledComputationAttributes().empty()) continue;
            if (m_since && !changed(*instruction)) continue;
            HLO_RETURN_IF_ERROR(verifyInstruction(*instruction));
        }
    }
    HLO_RETURN_IF_ERROR(verifyEntryComputationLayout(m_module, m_options));
    HLO_RETURN_IF_ERROR(verifyInputOutputAliasing(m_module, m_options));
    HLO_RETURN_IF_ERROR(verifyLayoutConstrainedAllReduce(m_module));
    HLO_RETURN_IF_ERROR(verifyBuffers(m_module, m_since));
    if (m_options.verifyNoSendRecvDeadlocks) HLO_RETURN_IF_ERROR(verifySendRecvDeadlocks(m_module));
    return Status::ok();
}

Status Verifier::verifyStructure() {
    const HloComputation* entry = m_module.entryComputation();
    if (!entry) return failedPrecondition("module " + m_module.name() + " has no entry computation");
    NameHashSet names;
    names.reserve(m_module.computations().size());
    m_computations.reserve(m_module.computations().size());
    for (const auto& computation : m_module.computations()) {
        m_computations.insert(computation.get());
        if (!names.insert(computation->name()) &&
            repeatsName(m_module.computations(), *computation,
                        [](const auto& c) -> std::string_view { return c->name(); })) {
            return computationError(*computation, "computation name is not unique within the module");
        }
    }
    if (!m_computations.count(entry)) {
        return failedPrecondition("module " + m_module.name() +
                                  ": the entry computation is not one of the module's computations");
    }
    if (entry->fusionInstruction()) {
        return computationError(*entry, "module entry computation cannot be a fusion computation");
    }
    // Instruction names need only be unique within a computation: XLA's
    // parser uniquifies names across the module, so text may repeat them.
    for (const auto& computation : m_module.computations()) {
        if (m_since && computation->changeStamp() <= *m_since) continue;
        HLO_RETURN_IF_ERROR(verifyComputation(*computation));
    }
    if (m_since && !callsChanged()) return Status::ok();
    return verifyCallGraphAcyclic(m_module);
}

// A call cycle needs a new call edge: an instruction stamped since (a new one, or one
// whose called computations were set) or a computation added since.
bool Verifier::callsChanged() const {
    const uint64_t since = *m_since;
    for (const auto& computation : m_module.computations()) {
        if (computation->propertyStamp() > since) return true;
        if (computation->changeStamp() <= since) continue;
        for (const auto& instruction : computation->instructions())
            if (instruction->changeStamp() > since &&
                !instruction->calledComputationAttributes().empty())
                return true;
    }
    return false;
}

// What a line of the printer depends on, and also the users (an instruction's checks
// look at some of them) and its computation's properties.
bool Verifier::changed(const HloInstruction& instruction) const {
    const uint64_t since = *m_since;
    if (changedSince(instruction, since)) return true;
    if (instruction.parent() && instruction.parent()->propertyStamp() > since) return true;
    return std::any_of(instruction.users().begin(), instruction.users().end(),
                       [since](const HloInstruction* user) { return user->changeStamp() > since; });
}

Status Verifier::verifyComputation(const HloComputation& computation) {
    if (computation.parent() && computation.parent() != &m_module) {
        return computationError(computation, "parent() does not point to the module");
    }
    if (!computation.root()) return computationError(computation, "computation has no root instruction");
    if (computation.root()->parent() != &computation) {
        return computationError(computation, "root instruction %" + computation.root()->name() +
                                                 " does not belong to the computation");
    }
    NameHashSet names;
    names.reserve(computation.instructions().size());
    std::map<int64_t, const HloInstruction*> parameterNumbers;
    for (const auto& instruction : computation.instructions()) {
        if (instruction->parent() != &computation) {
            return instructionError(*instruction,
                                    "parent() does not point to the containing computation");
        }
        if (!names.insert(instruction->name()) &&
            repeatsName(computation.instructions(), *instruction,
                        [](const auto& i) -> std::string_view { return i->name(); })) {
            return instructionError(*instruction,
                                    "instruction name is not unique within the computation");
        }
        if (instruction->opcode() == HloOpcode::kParameter) {
            int64_t number = instruction->parameterNumber();
            if (number < 0) {
                return instructionError(*instruction, "parameter number " + std::to_string(number) +
                                                          " is negative");
            }
            auto [it, inserted] = parameterNumbers.emplace(number, instruction.get());
            if (!inserted) {
                return instructionError(*instruction, "parameter number " + std::to_string(number) +
                                                          " is also used by %" + it->second->name());
            }
        }
        for (int64_t i = 0; i < instruction->operandCount(); ++i) {
            const HloInstruction* operand = instruction->operand(i);
            if (operand->parent() != &computation) {
                return instructionError(
                    *instruction, "operand " + std::to_string(i) + " (%" + operand->name() +
                                      ") is in a different computation: " +
                                      (operand->parent() ? operand->parent()->name() : "(null)") +
                                      " vs " + computation.name());
            }
        }
        for (const HloInstruction* predecessor : instruction->controlPredecessors()) {
            if (predecessor->parent() != &computation) {
                return instructionError(*instruction, "control predecessor %" + predecessor->name() +
                                                          " is in a different computation");
            }
        }
        for (const CalledComputationAttribute& attribute : instruction->calledComputationAttributes()) {
            for (const HloComputation* called : attribute.computations) {
                if (!called || !m_computations.count(called)) {
                    return instructionError(*instruction, "called computation in " + attribute.name +
                                                              "= is not part of the module");
                }
            }
        }
    }
    int64_t expected = 0;
    for (const auto& [number, parameter] : parameterNumbers) {
        if (number != expected) {
            return computationError(computation, "parameter numbers must be 0.." +
                                                     std::to_string(parameterNumbers.size() - 1) +
                                                     " without gaps, but parameter " +
                                                     std::to_string(expected) + " is missing");
        }
        ++expected;
    }
    HLO_RETURN_IF_ERROR(verifyAcyclic(computation));
    if (m_module.isScheduled()) {
        // The text order of a scheduled module is its schedule: operands and
        // control predecessors come first.
        std::unordered_set<const HloInstruction*> seen;
        for (const auto& instruction : computation.instructions()) {
            for (const HloInstruction* operand : instruction->operands()) {
                if (!seen.count(operand)) {
                    return instructionError(*instruction, "instruction is scheduled before its "
                                                          "operand %" +
                                                              operand->name());
                }
            }
            for (const HloInstruction* predecessor : instruction->controlPredecessors()) {
                if (!seen.count(predecessor)) {
                    return instructionError(*instruction, "instruction is scheduled before its "
                                                          "control predecessor %" +
                                                              predecessor->name());
                }
            }
            seen.insert(instruction.get());
        }
    }
    return Status::ok();
}

Status Verifier::verifyAcyclic(const HloComputation& computation) {
    // Iterative DFS over operands and control predecessors; states by the instruction's
    // position (verifyComputation has checked that operands are in the computation).
    const auto& instructions = computation.instructions();
    PointerIndex position(instructions.size());
    for (size_t i = 0; i < instructions.size(); ++i)
        position.insert(instructions[i].get(), static_cast<uint32_t>(i));
    // 1 = visiting, 2 = done; the last entry stands for anything not listed (done: the
    // DFS does not walk out of the computation).
    std::vector<uint8_t> state(instructions.size() + 1, 0);
    state.back() = 2;
    const auto stateOf = [&](const HloInstruction* x) -> uint8_t& {
        const uint32_t at = position.find(x);
        return at == PointerIndex::kAbsent ? state.back() : state[at];
    };
    std::vector<std::pair<const HloInstruction*, size_t>> stack;
    for (const auto& start : instructions) {
        if (stateOf(start.get()) == 2) continue;
        stack.assign(1, {start.get(), 0});
        stateOf(start.get()) = 1;
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            size_t operandCount = node->operands().size();
            size_t total = operandCount + node->controlPredecessors().size();
            if (next >= total) {
                stateOf(node) = 2;
                stack.pop_back();
                continue;
            }
            const HloInstruction* child = next < operandCount
                                              ? node->operands()[next]
                                              : node->controlPredecessors()[next - operandCount];
            ++next;
            uint8_t& childState = stateOf(child);
            if (childState == 1) {
                return instructionError(*child, "the computation has a cycle through %" +
                                                    child->name() + " (operands and control "
                                                                    "predecessors)");
            }
            if (childState == 0) {
                childState = 1;
                stack.emplace_back(child, 0);
            }
        }
    }
    return Status::ok();
}

Status Verifier::verifyInstruction(const HloInstruction& instruction) {
    HloOpcode opcode = instruction.opcode();
    if (auto arity = hloOpcodeArity(opcode)) {
        if (instruction.operandCount() != *arity) {
            return instructionError(instruction, "expected " + std::to_string(*arity) +
                                                     " operands for " +
                                                     std::string(hloOpcodeString(opcode)) +
                                                     " instruction, found " +
                                                     std::to_string(instruction.operandCount()));
        }
    }
    const Shape& shape = instruction.shape();
    if (!shape.isValid()) return instructionError(instruction, "instruction has no valid shape");
    if (!m_options.allowUnboundedDynamism && hasUnboundedDimension(shape)) {
        return instructionError(instruction, "Unbounded dynamism is disabled for instruction with "
                                             "shape " +
                                                 str(shape));
    }
    if (shape.isArray() && shape.hasLayout()) {
        const Layout& layout = shape.layout();
        if (static_cast<int64_t>(layout.minorToMajor().size()) != shape.rank()) {
            return instructionError(instruction, "Instruction has mismatched minor-to-major size and "
                                                 "dimension size: " +
                                                     shape.toString());
        }
        if (layout.elementSizeInBits() != 0 && !primitive_util::isSubByte(shape.elementType())) {
            return instructionError(instruction,
                                    "The XLA CPU/GPU backend does not support custom element sizes "
                                    "on non-sub-byte types: " +
                                        shape.toString());
        }
    }
    if (m_options.verifyInstructionNameUnchanged) {
        std::string schedulingName = instruction.metadataField("scheduling_name");
        if (!schedulingName.empty() && schedulingName != instruction.name() &&
            instruction.name().find(".remat") == std::string::npos &&
            instruction.name().find(".clone") == std::string::npos) {
            return instructionError(instruction, "Expected instruction name to remain the same. Was '" +
                                                     schedulingName + "' is '" + instruction.name() +
                                                     "'.");
        }
    }
    HLO_RETURN_IF_ERROR(verifyCalledComputations(instruction, m_options));
    HLO_RETURN_IF_ERROR(verifyShape(instruction));
    HLO_RETURN_IF_ERROR(verifyOpcodeSpecific(instruction, m_options));
    HLO_RETURN_IF_ERROR(verifyThreads(instruction));
    HLO_RETURN_IF_ERROR(verifyOriginalValue(instruction));
    if (m_options.layoutSensitive) HLO_RETURN_IF_ERROR(verifyLayoutSensitive(instruction));
    return Status::ok();
}

Status Verifier::verifyMixedPrecision(const HloInstruction& instruction) {
    if (m_options.allowMixedPrecision || allowsMixedPrecisionOperands(instruction.opcode()))
        return Status::ok();
    PrimitiveType fpType = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    std::vector<const Shape*> pending;
    for (const HloInstruction* operand : instruction.operands()) pending.push_back(&operand->shape());
    while (!pending.empty()) {
        const Shape* shape = pending.back();
        pending.pop_back();
        if (shape->isTuple()) {
            for (const Shape& element : shape->tupleShapes()) pending.push_back(&element);
            continue;
        }
        if (!primitive_util::isFloatingPoint(shape->elementType())) continue;
        if (fpType == PrimitiveType::PRIMITIVE_TYPE_INVALID) {
            fpType = shape->elementType();
        } else if (fpType != shape->elementType()) {
            return instructionError(instruction,
                                    "Seen floating point types of different precisions in " +
                                        std::string(hloOpcodeString(instruction.opcode())) +
                                        " operands, but mixed precision is disallowed");
        }
    }
    return Status::ok();
}

Status Verifier::verifyShape(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(verifyMixedPrecision(instruction));
    StatusOr<Shape> inferred = inferShape(instruction);
    if (!inferred.isOk()) {
        if (inferred.status().code() == StatusCode::kUnimplemented) return Status::ok();
        return withComputation(instruction, inferred.status());
    }
    const Shape& declared = instruction.shape();
    HloOpcode opcode = instruction.opcode();
    bool exact = isExactShapeOpcode(opcode);
    bool equal = (exact || !m_options.allowMixedPrecision) ? compatible(declared, *inferred)
                                                           : compatibleIgnoringFp(declared, *inferred);
    if (equal && checksDynamism(opcode)) equal = dynamismEqual(declared, *inferred);
    bool layoutSensitiveCompare = m_options.layoutSensitive && exact;
    if (m_options.layoutSensitive && opcode == HloOpcode::kCopy && declared.isArray() &&
        inferred->isArray()) {
        // Host offloading copies may not change precision or (device <->
        // host) transpose.
        int64_t to = effectiveLayout(declared).memorySpace();
        int64_t from = effectiveLayout(*inferred).memorySpace();
        constexpr int64_t kHostMemorySpace = 5;
        if (to != from && (to == kHostMemorySpace || from == kHostMemorySpace)) {
            if (to == kHostMemorySpace) {
                equal = declared.elementType() == inferred->elementType();
            } else {
                Layout a = effectiveLayout(declared);
                Layout b = effectiveLayout(*inferred);
                a.setMemorySpace(0);
                b.setMemorySpace(0);
                equal = compatible(declared, *inferred) && a == b;
            }
            if (!equal) {
                return instructionError(instruction, "Expected instruction to have shape equal to " +
                                                         inferred->toString() +
                                                         ", actual shape is " + declared.toString());
            }
            return Status::ok();
        }
    }
    if (equal && layoutSensitiveCompare) {
        equal = layoutsEqual(declared, *inferred, compareMinorToMajorOnly(opcode));
    }
    if (!equal) {
        return instructionError(instruction, "Expected instruction to have shape equal to " +
                                                 shapeText(*inferred, layoutSensitiveCompare) +
                                                 ", actual shape is " +
                                                 shapeText(declared, layoutSensitiveCompare));
    }
    return Status::ok();
}

Status Verifier::verifyThreads(const HloInstruction& instruction) {
    if (hloOpcodeIsAsync(instruction.opcode())) return Status::ok();
    const HloComputation* parent = instruction.parent();
    auto threadName = [](const HloComputation* c) {
        return c->executionThread().empty() ? std::string("main") : c->executionThread();
    };
    std::string parentThread = threadName(parent);
    for (const CalledComputationAttribute& attribute : instruction.calledComputationAttributes()) {
        for (const HloComputation* called : attribute.computations) {
            if (!called) continue;
            std::string calledThread = threadName(called);
            if (calledThread == parentThread) continue;
            if (attribute.name == "to_apply") {
                return instructionError(instruction, instruction.name() +
                                                         " to_apply computation execution thread "
                                                         "does not match (" +
                                                         calledThread + " vs " + parentThread + ")");
            }
            return instructionError(instruction,
                                    "callable instruction expects parent computation thread name "
                                    "same as called computation's thread name (" +
                                        parentThread + " vs " + calledThread + ")");
        }
    }
    return Status::ok();
}

// `origin={...}` (XLA's original value) must mirror the shape's tuple tree.
Status Verifier::verifyOriginalValue(const HloInstruction& instruction) {
    auto text = instruction.attribute("origin");
    if (!text) return Status::ok();
    std::string_view value = *text;
    // Strip the outer braces.
    size_t start = skipAttributeSpaces(value, 0);
    if (start >= value.size() || value[start] != '{') return Status::ok();
    std::string_view inner = value.substr(start + 1);
    if (!inner.empty() && inner.back() == '}') inner.remove_suffix(1);
    // Recursive descent: a node is `(node, node, ...)` or `{...}` (a leaf).
    std::function<bool(std::string_view&, const Shape&)> match =
        [&](std::string_view& rest, const Shape& shape) -> bool {
        size_t p = skipAttributeSpaces(rest, 0);
        rest.remove_prefix(p);
        if (rest.empty()) return false;
        if (rest.front() == '(') {
            if (!shape.isTuple()) return false;
            rest.remove_prefix(1);
            int64_t index = 0;
            while (true) {
                p = skipAttributeSpaces(rest, 0);
                rest.remove_prefix(p);
                if (!rest.empty() && rest.front() == ')') {
                    rest.remove_prefix(1);
                    break;
                }
                if (index >= shape.tupleCount()) return false;
                if (!match(rest, shape.tupleShape(index))) return false;
                ++index;
                p = skipAttributeSpaces(rest, 0);
                rest.remove_prefix(p);
                if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
            }
            return index == shape.tupleCount();
        }
        if (rest.front() == '[') {
            // A marker such as [synthetic_call] stands for the whole value.
            size_t end = balancedBlockEnd(rest, 0);
            rest.remove_prefix(end);
            return true;
        }
        if (rest.front() == '{') {
            if (shape.isTuple()) return false;
            size_t end = balancedBlockEnd(rest, 0);
            rest.remove_prefix(end);
            return true;
        }
        return false;
    };
    std::string_view rest = inner;
    if (!match(rest, instruction.shape())) {
        return instructionError(instruction, "Mismatched tuple structure between the original value "
                                             "origin=" +
                                                 std::string(value) + " and the shape " +
                                                 str(instruction.shape()));
    }
    return Status::ok();
}

Status Verifier::verifyLayoutSensitive(const HloInstruction& instruction) {
    HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    if (opcode == HloOpcode::kBitcast && instruction.operandCount() == 1) {
        const Shape& operand = instruction.operand(0)->shape();
        if (shape.isArray() && operand.isArray() && shape.byteSize() != operand.byteSize()) {
            return instructionError(instruction, "Bitcast cannot have different shape sizes of output (" +
                                                     std::to_string(shape.byteSize()) +
                                                     ") and operand (" +
                                                     std::to_string(operand.byteSize()) + ")");
        }
    }
    if (!hloOpcodeKeepsLayout(opcode) || !shape.isArray()) return Status::ok();
    Layout result = effectiveLayout(shape);
    for (const HloInstruction* operand : instruction.operands()) {
        const Shape& operandShape = operand->shape();
        if (!operandShape.isArray() || operandShape.rank() != shape.rank()) continue;
        Layout layout = effectiveLayout(operandShape);
        if (opcode == HloOpcode::kDynamicSlice || opcode == HloOpcode::kDynamicUpdateSlice) {
            constexpr int64_t kHostMemorySpace = 5;
            int64_t from = layout.memorySpace();
            int64_t to = result.memorySpace();
            if (opcode == HloOpcode::kDynamicSlice && from == 0 && to == kHostMemorySpace) {
                return instructionError(instruction, "DynamicSlice instruction shouldn't change layout "
                                                     "memory space from device to host");
            }
            if (opcode == HloOpcode::kDynamicUpdateSlice && from == kHostMemorySpace && to == 0) {
                return instructionError(instruction, "DynamicUpdateSlice instruction shouldn't change "
                                                     "layout memory space from host to device");
            }
        }
        Layout a = result;
        Layout b = layout;
        a.mutableTiles().clear();
        b.mutableTiles().clear();
        a.setMemorySpace(0);
        b.setMemorySpace(0);
        // Element sizes may differ (sub-byte operands of converts, compares,
        // selects, scatters, ...).
        a.setElementSizeInBits(0);
        b.setElementSizeInBits(0);
        if (!(a == b)) {
            return instructionError(instruction, "Instruction shouldn't change layouts: from " +
                                                     shape.toString() + " to " +
                                                     operandShape.toString());
        }
    }
    return Status::ok();
}

}  // namespace

Status verifyModule(const HloModule& module, const HloVerifierOptions& options) {
    Verifier verifier(module, options);
    return verifier.run();
}

Status verifyModuleChangedSince(const HloModule& module, uint64_t stamp,
                                const HloVerifierOptions& options) {
    Verifier verifier(module, options, stamp);
    return verifier.run();
}

}  // namespace hloscope
