// HloVerifier: module structure, per-instruction shape checks against shape
// inference, called computations, threads, shardings and layout-sensitive
// checks. Module-level checks (entry layout, aliasing) are in
// hlo_verifier_module.cc, attribute parsing in hlo_verifier_util.cc,
// collectives/async/custom calls in hlo_verifier_ops.cc and start/done
// pairs, channels and buffers in hlo_verifier_channels.cc.
#include "core/verifier/hlo_verifier.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/text/hlo_parser.h"
#include "core/verifier/hlo_verifier_internal.h"
#include "core/ir/scan.h"
#include "core/shape_inference/shape_inference.h"
#include "core/shape_inference/shape_inference_internal.h"

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


class Verifier {
public:
    Verifier(const HloModule& module, const HloVerifierOptions& options)
        : m_module(module), m_options(options) {}

    Status run();

private:
    Status verifyStructure();
    Status verifyComputation(const HloComputation& computation);
    Status verifyAcyclic(const HloComputation& computation);
    Status verifyInstruction(const HloInstruction& instruction);
    Status verifyShape(const HloInstruction& instruction);
    Status verifyMixedPrecision(const HloInstruction& instruction);
    Status verifyCalledComputations(const HloInstruction& instruction);
    Status verifyOpcodeSpecific(const HloInstruction& instruction);
    Status verifyLayoutSensitive(const HloInstruction& instruction);
    Status verifyOriginalValue(const HloInstruction& instruction);
    Status verifyShardingConsistency(const HloInstruction& instruction,
                                     const std::vector<const HloInstruction*>& related);
    Status verifyThreads(const HloInstruction& instruction);

    const HloModule& m_module;
    const HloVerifierOptions& m_options;
    std::unordered_set<const HloComputation*> m_computations;
};

Status Verifier::run() {
    HLO_RETURN_IF_ERROR(verifyStructure());
    HLO_RETURN_IF_ERROR(verifyAsyncPairs(m_module));
    HLO_RETURN_IF_ERROR(verifyChannels(m_module));
    for (const auto& computation : m_module.computations()) {
        for (const auto& instruction : computation->instructions()) {
            HLO_RETURN_IF_ERROR(verifyInstruction(*instruction));
        }
    }
    HLO_RETURN_IF_ERROR(verifyEntryComputationLayout(m_module, m_options));
    HLO_RETURN_IF_ERROR(verifyInputOutputAliasing(m_module, m_options));
    HLO_RETURN_IF_ERROR(verifyLayoutConstrainedAllReduce(m_module));
    HLO_RETURN_IF_ERROR(verifyBuffers(m_module));
    if (m_options.verifyNoSendRecvDeadlocks) HLO_RETURN_IF_ERROR(verifySendRecvDeadlocks(m_module));
    return Status::ok();
}

Status Verifier::verifyStructure() {
    const HloComputation* entry = m_module.entryComputation();
    if (!entry) return failedPrecondition("module " + m_module.name() + " has no entry computation");
    std::set<std::string> names;
    for (const auto& computation : m_module.computations()) {
        m_computations.insert(computation.get());
        if (!names.insert(computation->name()).second) {
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
        HLO_RETURN_IF_ERROR(verifyComputation(*computation));
    }
    return Status::ok();
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
    std::set<std::string_view> names;
    std::map<int64_t, const HloInstruction*> parameterNumbers;
    for (const auto& instruction : computation.instructions()) {
        if (instruction->parent() != &computation) {
            return instructionError(*instruction,
                                    "parent() does not point to the containing computation");
        }
        if (!names.insert(instruction->name()).second) {
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
    // Iterative DFS over operands and control predecessors.
    std::unordered_map<const HloInstruction*, int> state;  // 1 = visiting, 2 = done
    for (const auto& start : computation.instructions()) {
        if (state[start.get()] == 2) continue;
        std::vector<std::pair<const HloInstruction*, size_t>> stack = {{start.get(), 0}};
        state[start.get()] = 1;
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            size_t operandCount = node->operands().size();
            size_t total = operandCount + node->controlPredecessors().size();
            if (next >= total) {
                state[node] = 2;
                stack.pop_back();
                continue;
            }
            const HloInstruction* child = next < operandCount
                                              ? node->operands()[next]
                                              : node->controlPredecessors()[next - operandCount];
            ++next;
            int& childState = state[child];
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
    HLO_RETURN_IF_ERROR(verifyCalledComputations(instruction));
    HLO_RETURN_IF_ERROR(verifyShape(instruction));
    HLO_RETURN_IF_ERROR(verifyOpcodeSpecific(instruction));
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

Status Verifier::verifyCalledComputations(const HloInstruction& instruction) {
    HloOpcode opcode = instruction.opcode();
    auto parameterCount = [&](const HloComputation* computation, int64_t expected) -> Status {
        if (computation->parameterCount() != expected) {
            return instructionError(instruction, "expected computation " + computation->name() +
                                                     " called from %" + instruction.name() +
                                                     " to have " + std::to_string(expected) +
                                                     " parameters, has " +
                                                     std::to_string(computation->parameterCount()));
        }
        return Status::ok();
    };
    auto operandMatchesParameter = [&](int64_t operandNumber, const HloComputation* computation,
                                       int64_t parameterNumber) -> Status {
        const HloInstruction* operand = instruction.operand(operandNumber);
        const HloInstruction* parameter = computation->parameter(parameterNumber);
        if (!parameter) return Status::ok();
        bool same = compatible(operand->shape(), parameter->shape());
        if (same && m_options.layoutSensitive)
            same = layoutsEqual(operand->shape(), parameter->shape(), false);
        if (!same) {
            return instructionError(
                instruction, "operand " + std::to_string(operandNumber) + " (%" + operand->name() +
                                 ") shape does not match parameter " +
                                 std::to_string(parameterNumber) + " of computation " +
                                 computation->name() + ": " +
                                 shapeText(operand->shape(), m_options.layoutSensitive) + " vs " +
                                 shapeText(parameter->shape(), m_options.layoutSensitive));
        }
        return Status::ok();
    };
    switch (opcode) {
    case HloOpcode::kCall: {
        const HloComputation* callee = instruction.toApply();
        if (!callee) return instructionError(instruction, "call requires to_apply=");
        HLO_RETURN_IF_ERROR(parameterCount(callee, instruction.operandCount()));
        for (int64_t i = 0; i < callee->parameterCount(); ++i)
            HLO_RETURN_IF_ERROR(operandMatchesParameter(i, callee, i));
        if (shape_inference_internal::boolAttribute(instruction, "is_composite").value_or(false)) {
            auto attributes = instruction.attribute("frontend_attributes");
            if (!attributes) {
                return instructionError(instruction,
                                        "A composite call op must have frontend attributes");
            }
            auto map = parseKeyValueBlock(*attributes);
            auto find = [&](std::string_view key) -> const std::string* {
                for (const auto& [k, v] : map)
                    if (k == key) return &v;
                return nullptr;
            };
            const std::string* name = find("composite.name");
            if (!name || name->empty()) {
                return instructionError(instruction,
                                        "A composite call op must have frontend attributes with "
                                        "key composite.name whose value is non-empty");
            }
            const std::string* attrs = find("composite.attributes");
            if (attrs && attrs->empty()) {
                return instructionError(instruction,
                                        "A composite call op must have frontend attributes with "
                                        "key composite.attributes whose value is default: {} or "
                                        "non-empty");
            }
            if (const std::string* version = find("composite.version")) {
                bool valid = !version->empty() &&
                             std::all_of(version->begin(), version->end(),
                                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
                if (!valid) {
                    return instructionError(instruction,
                                            "A composite call op must have frontend attributes "
                                            "with a composite.version whose value is a "
                                            "non-negative integer but got: " +
                                                *version);
                }
            }
        }
        break;
    }
    case HloOpcode::kWhile: {
        const HloComputation* body = instruction.whileBody();
        const HloComputation* condition = instruction.whileCondition();
        if (!body || !condition) {
            return instructionError(instruction, "while requires condition= and body=");
        }
        if (condition->parameterCount() != 1) {
            return instructionError(instruction, "While condition must have exactly 1 parameter; had " +
                                                     std::to_string(condition->parameterCount()));
        }
        if (body->parameterCount() != 1) {
            return instructionError(instruction, "While body must have exactly 1 parameter; had " +
                                                     std::to_string(body->parameterCount()));
        }
        if (instruction.operandCount() != 1) break;  // arity error reported elsewhere
        HLO_RETURN_IF_ERROR(operandMatchesParameter(0, body, 0));
        HLO_RETURN_IF_ERROR(operandMatchesParameter(0, condition, 0));
        const Shape& conditionShape = condition->root()->shape();
        if (!compatible(conditionShape, Shape::makeScalar(PrimitiveType::PRED))) {
            return instructionError(instruction,
                                    "Conditional computation shape does not lead to a scalar "
                                    "predicate shape: " +
                                        str(conditionShape));
        }
        const Shape& bodyShape = body->root()->shape();
        if (!compatible(bodyShape, instruction.operand(0)->shape())) {
            return instructionError(instruction, "while body " + body->name() + " returns " +
                                                     str(bodyShape) +
                                                     " but the loop carries " +
                                                     str(instruction.operand(0)->shape()));
        }
        std::vector<const HloInstruction*> related = {&instruction, body->root(), body->parameter(0),
                                                      condition->parameter(0)};
        HLO_RETURN_IF_ERROR(verifyShardingConsistency(instruction, related));
        break;
    }
    case HloOpcode::kConditional: {
        if (instruction.operandCount() < 1) {
            return instructionError(instruction, "conditional expects at least one operand");
        }
        std::vector<const HloComputation*> branches;
        if (const HloComputation* t = instruction.calledComputation("true_computation")) {
            branches.push_back(t);
            if (const HloComputation* f = instruction.calledComputation("false_computation"))
                branches.push_back(f);
        } else {
            for (const CalledComputationAttribute& a : instruction.calledComputationAttributes())
                if (a.name == "branch_computations")
                    branches.assign(a.computations.begin(), a.computations.end());
        }
        const Shape& index = instruction.operand(0)->shape();
        if (!index.isArray() || index.rank() != 0) {
            return instructionError(instruction,
                                    "The first operand of conditional must be a scalar. Got " +
                                        str(index));
        }
        if (index.elementType() == PrimitiveType::PRED) {
            if (branches.size() != 2) {
                return instructionError(instruction, "a conditional with a pred[] selector must have "
                                                     "2 branches, found " +
                                                         std::to_string(branches.size()));
            }
        } else if (index.elementType() != PrimitiveType::S32) {
            return instructionError(instruction,
                                    "The first operand of indexed conditional must be a scalar of "
                                    "S32. Got type " +
                                        std::string(primitive_util::name(index.elementType())));
        } else if (branches.empty()) {
            return instructionError(instruction, "conditional has no branch computations");
        }
        if (instruction.operandCount() != static_cast<int64_t>(branches.size()) + 1) {
            return instructionError(instruction, "expected " + std::to_string(branches.size() + 1) +
                                                     " operands for conditional instruction, found " +
                                                     std::to_string(instruction.operandCount()));
        }
        std::vector<const HloInstruction*> related = {&instruction};
        for (size_t j = 0; j < branches.size(); ++j) {
            if (branches[j]->parameterCount() != 1) {
                return instructionError(instruction, "Branch computation " + branches[j]->name() +
                                                         " must have 1 parameter instead of " +
                                                         std::to_string(branches[j]->parameterCount()));
            }
            HLO_RETURN_IF_ERROR(operandMatchesParameter(static_cast<int64_t>(j) + 1, branches[j], 0));
            const Shape& root = branches[j]->root()->shape();
            if (!compatible(root, instruction.shape())) {
                return instructionError(instruction,
                                        "Expected instruction to have shape equal to " + str(root) +
                                            " (root of branch " + branches[j]->name() +
                                            "), actual shape is " + str(instruction.shape()));
            }
            related.push_back(branches[j]->root());
        }
        HLO_RETURN_IF_ERROR(verifyShardingConsistency(instruction, related));
        break;
    }
    case HloOpcode::kFusion: {
        const HloComputation* fused = instruction.fusedComputation();
        if (!fused) return instructionError(instruction, "fusion requires calls=");
        if (fused->parameterCount() > instruction.operandCount()) {
            return instructionError(instruction, "Fused parameter count (" +
                                                     std::to_string(fused->parameterCount()) +
                                                     ") is greater than the number of operands (" +
                                                     std::to_string(instruction.operandCount()) +
                                                     ") passed to the fusion instruction");
        }
        for (int64_t i = 0; i < fused->parameterCount(); ++i) {
            const HloInstruction* parameter = fused->parameter(i);
            if (!parameter) continue;
            const Shape& operand = instruction.operand(i)->shape();
            bool same = compatible(parameter->shape(), operand);
            if (same && m_options.layoutSensitive)
                same = layoutsEqual(parameter->shape(), operand, false);
            if (!same) {
                return instructionError(instruction, "Shape mismatch between parameter number " +
                                                         std::to_string(i) + " (" +
                                                         str(parameter->shape()) +
                                                         ") and its operand (" + str(operand) + ")");
            }
        }
        break;
    }
    default: break;
    }
    return Status::ok();
}

Status Verifier::verifyShardingConsistency(const HloInstruction& instruction,
                                           const std::vector<const HloInstruction*>& related) {
    auto normalize = [](std::string_view text) {
        std::string out;
        for (char c : text)
            if (!std::isspace(static_cast<unsigned char>(c))) out += c;
        return out;
    };
    const HloInstruction* reference = nullptr;
    std::string referenceSharding;
    for (const HloInstruction* other : related) {
        if (!other) continue;
        auto sharding = other->attribute("sharding");
        if (!sharding) continue;
        std::string text = normalize(*sharding);
        if (!reference) {
            reference = other;
            referenceSharding = text;
            continue;
        }
        if (text == referenceSharding) continue;
        // A tuple sharding whose elements all equal a single sharding is the
        // same sharding.
        bool equivalent = false;
        const std::string& a = text.size() > referenceSharding.size() ? text : referenceSharding;
        const std::string& b = text.size() > referenceSharding.size() ? referenceSharding : text;
        if (a.size() > 2 && a.front() == '{' && a[1] == '{') {
            std::string inner = a.substr(1, a.size() - 2);
            std::string rebuilt;
            size_t count = 0;
            size_t pos = 0;
            equivalent = true;
            while (pos < inner.size()) {
                size_t end = balancedEnd(inner, pos);
                if (inner.substr(pos, end - pos) != b) {
                    equivalent = false;
                    break;
                }
                ++count;
                pos = end;
                if (pos < inner.size() && inner[pos] == ',') ++pos;
            }
            if (count == 0) equivalent = false;
        }
        if (!equivalent) {
            return instructionError(instruction,
                                    "Inconsistent " +
                                        std::string(hloOpcodeString(instruction.opcode())) +
                                        " sharding among instructions: %" + reference->name() +
                                        " has sharding=" + std::string(*reference->attribute("sharding")) +
                                        " but %" + other->name() + " has sharding=" + std::string(*sharding));
        }
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

Status Verifier::verifyOpcodeSpecific(const HloInstruction& instruction) {
    HloOpcode opcode = instruction.opcode();
    // No implicit broadcasts in elementwise operations.
    if ((hloOpcodeIsElementwiseUnary(opcode) || hloOpcodeIsElementwiseBinary(opcode) ||
         opcode == HloOpcode::kSelect || opcode == HloOpcode::kClamp) &&
        opcode != HloOpcode::kBitcastConvert && instruction.shape().isArray()) {
        for (const HloInstruction* operand : instruction.operands()) {
            const Shape& s = operand->shape();
            if (!s.isArray()) continue;
            bool scalarAllowed = (opcode == HloOpcode::kSelect && operand == instruction.operand(0)) ||
                                 (opcode == HloOpcode::kClamp && operand != instruction.operand(1));
            if (scalarAllowed && s.rank() == 0) continue;
            if (!shape_inference_internal::sameDims(s, instruction.shape())) {
                return instructionError(instruction,
                                        "Implicit broadcast is not allowed in HLO. Found different "
                                        "shapes for instruction " +
                                            std::string(hloOpcodeString(opcode)) + ": output " +
                                            str(instruction.shape()) + ", operand " + str(s));
            }
        }
    }
    switch (opcode) {
    case HloOpcode::kCompare: {
        const HloExtraAttributes* extra = instruction.extra();
        if (!extra || extra->comparisonType == ComparisonType::kDefault) break;
        if (instruction.operandCount() != 2 || !instruction.operand(1)->shape().isArray()) break;
        PrimitiveType type = instruction.operand(1)->shape().elementType();
        ComparisonType actual = extra->comparisonType;
        if (primitive_util::isFloatingPoint(type) || primitive_util::isComplex(type)) {
            if (actual != ComparisonType::kFloat && actual != ComparisonType::kTotalOrder &&
                !primitive_util::isComplex(type)) {
                return instructionError(instruction,
                                        "Expected comparison type FLOAT or TOTALORDER, actual: " +
                                            std::string(comparisonTypeString(actual)));
            }
        } else {
            ComparisonType expected = primitive_util::isSignedInteger(type)
                                          ? ComparisonType::kSigned
                                          : ComparisonType::kUnsigned;
            if (actual != expected) {
                return instructionError(instruction,
                                        "Expected comparison type " +
                                            std::string(comparisonTypeString(expected)) +
                                            ", actual: " + std::string(comparisonTypeString(actual)));
            }
        }
        break;
    }
    case HloOpcode::kIota: {
        PrimitiveType type = instruction.shape().elementType();
        if (!primitive_util::isInteger(type) && !primitive_util::isFloatingPoint(type) &&
            !primitive_util::isComplex(type)) {
            return instructionError(instruction,
                                    "Only support iota of integral, floating point or complex "
                                    "primitive types, got " +
                                        std::string(primitive_util::name(type)));
        }
        break;
    }
    case HloOpcode::kBroadcast:
        if (m_options.verifyBroadcastDimensionsOrder) {
            const auto& dims = instruction.dimensions();
            if (!std::is_sorted(dims.begin(), dims.end())) {
                return instructionError(instruction, "Broadcast dimensions should be ordered, got " +
                                                         shape_inference_internal::str(dims));
            }
        }
        [[fallthrough]];
    case HloOpcode::kReshape:
    case HloOpcode::kDynamicReshape: {
        if (instruction.operandCount() == 1 && instruction.shape().isArray() &&
            instruction.operand(0)->shape().isArray() &&
            instruction.shape().elementType() != instruction.operand(0)->shape().elementType()) {
            return instructionError(instruction,
                                    std::string(hloOpcodeString(opcode)) +
                                        " must not change the element type: operand is " +
                                        str(instruction.operand(0)->shape()) + ", result is " +
                                        str(instruction.shape()));
        }
        if (opcode == HloOpcode::kReshape && m_options.verifyReshapeIsBitcast &&
            !instruction.parent()->fusionInstruction() && instruction.operandCount() == 1 &&
            !reshapeIsBitcast(instruction.operand(0)->shape(), instruction.shape())) {
            return instructionError(instruction, "Reshape should be a physical bitcast, got " +
                                                     instruction.operand(0)->shape().toString() +
                                                     " -> " + instruction.shape().toString());
        }
        break;
    }
    case HloOpcode::kReduce:
    case HloOpcode::kMap:
    case HloOpcode::kReduceWindow: {
        if (m_options.allowMixedPrecision) break;
        const HloComputation* toApply = instruction.toApply();
        if (!toApply) break;
        for (int64_t i = 0; i < instruction.operandCount() && i < toApply->parameterCount(); ++i) {
            const HloInstruction* parameter = toApply->parameter(i);
            if (!parameter) continue;
            if (parameter->shape().elementType() != instruction.operand(i)->shape().elementType()) {
                return instructionError(instruction,
                                        "Shape mismatch between to_apply computation parameter and "
                                        "operand " +
                                            std::to_string(i) + ": " + str(parameter->shape()) +
                                            " vs " + str(instruction.operand(i)->shape()));
            }
        }
        break;
    }
    case HloOpcode::kConstant: {
        const Shape& shape = instruction.shape();
        if (!shape.isArray() || shape.rank() == 0 || instruction.literalText().empty()) break;
        std::string_view text = instruction.literalText();
        size_t brace = text.find('{');
        if (brace == std::string_view::npos) break;
        auto dims = literalDimensions(text.substr(brace), shape.rank());
        if (!dims) break;
        if (dims->empty() || *dims != shape.dimensions()) {
            std::string found = dims->empty() ? "a ragged literal" : "dimensions " +
                                                                         shape_inference_internal::str(*dims);
            return instructionError(instruction, "constant literal does not match its shape " +
                                                     str(shape) + ": found " + found);
        }
        break;
    }
    case HloOpcode::kOutfeed: {
        auto text = instruction.attribute("outfeed_shape");
        if (!text || instruction.operandCount() < 1) break;
        StatusOr<Shape> parsed = parseShape(*text);
        if (parsed.isOk() && !compatible(*parsed, instruction.operand(0)->shape())) {
            return instructionError(instruction, "Expected outfeed shape to be equal to operand's "
                                                 "shape " +
                                                     str(instruction.operand(0)->shape()) +
                                                     ", actual shape is " + str(*parsed));
        }
        break;
    }
    case HloOpcode::kAddDependency: {
        if (instruction.operandCount() == 2 && !instruction.operand(1)->shape().isToken()) {
            return instructionError(instruction, "Expected operand 1 to be token-shaped, actual "
                                                 "shape is " +
                                                     str(instruction.operand(1)->shape()));
        }
        break;
    }
    case HloOpcode::kCustomCall: HLO_RETURN_IF_ERROR(verifyCustomCall(instruction, m_options)); break;
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone: HLO_RETURN_IF_ERROR(verifyAsync(instruction, m_options)); break;
    case HloOpcode::kScan:
        if (auto geometry = scanGeometry(instruction); !geometry.isOk()) {
            // scanGeometry names the instruction; say where it is too.
            std::string_view message = geometry.status().message();
            const std::string prefix = "%" + instruction.name() + ": ";
            if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
            return instructionError(instruction, message);
        }
        if (m_options.layoutSensitive && instruction.attribute("is_associative") &&
            *instruction.attribute("is_associative") == "false") {
            return instructionError(instruction,
                                    "Non-associative scan reached layout-sensitive HloVerifier");
        }
        break;
    default: break;
    }
    if (hloOpcodeIsCollective(opcode)) HLO_RETURN_IF_ERROR(verifyCollective(instruction));
    return Status::ok();
}

// `origin={...}` (XLA's original value) must mirror the shape's tuple tree.
Status Verifier::verifyOriginalValue(const HloInstruction& instruction) {
    auto text = instruction.attribute("origin");
    if (!text) return Status::ok();
    std::string_view value = *text;
    // Strip the outer braces.
    size_t start = skipSpaces(value, 0);
    if (start >= value.size() || value[start] != '{') return Status::ok();
    std::string_view inner = value.substr(start + 1);
    if (!inner.empty() && inner.back() == '}') inner.remove_suffix(1);
    // Recursive descent: a node is `(node, node, ...)` or `{...}` (a leaf).
    std::function<bool(std::string_view&, const Shape&)> match =
        [&](std::string_view& rest, const Shape& shape) -> bool {
        size_t p = skipSpaces(rest, 0);
        rest.remove_prefix(p);
        if (rest.empty()) return false;
        if (rest.front() == '(') {
            if (!shape.isTuple()) return false;
            rest.remove_prefix(1);
            int64_t index = 0;
            while (true) {
                p = skipSpaces(rest, 0);
                rest.remove_prefix(p);
                if (!rest.empty() && rest.front() == ')') {
                    rest.remove_prefix(1);
                    break;
                }
                if (index >= shape.tupleCount()) return false;
                if (!match(rest, shape.tupleShape(index))) return false;
                ++index;
                p = skipSpaces(rest, 0);
                rest.remove_prefix(p);
                if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
            }
            return index == shape.tupleCount();
        }
        if (rest.front() == '[') {
            // A marker such as [synthetic_call] stands for the whole value.
            size_t end = balancedEnd(rest, 0);
            rest.remove_prefix(end);
            return true;
        }
        if (rest.front() == '{') {
            if (shape.isTuple()) return false;
            size_t end = balancedEnd(rest, 0);
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

}  // namespace hloscope
