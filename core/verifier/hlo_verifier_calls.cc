// HloVerifier: the call graph is acyclic, the computations an instruction calls (call,
// while, conditional, fusion) against its operands and result, and sharding consistency
// among the instructions a loop or conditional ties together.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "core/shape_inference/shape_inference_util.h"
#include "core/verifier/hlo_verifier_internal.h"

namespace hloscope::verifier_internal {
namespace {

using shape_inference_internal::compatible;
using shape_inference_internal::str;

Status checkParameterCount(const HloInstruction& instruction, const HloComputation* computation,
                           int64_t expected) {
    if (computation->parameterCount() != expected) {
        return instructionError(instruction, "expected computation " + computation->name() +
                                                 " called from %" + instruction.name() +
                                                 " to have " + std::to_string(expected) +
                                                 " parameters, has " +
                                                 std::to_string(computation->parameterCount()));
    }
    return Status::ok();
}

Status operandMatchesParameter(const HloInstruction& instruction,
                               const HloVerifierOptions& options, int64_t operandNumber,
                               const HloComputation* computation, int64_t parameterNumber) {
    const HloInstruction* operand = instruction.operand(operandNumber);
    const HloInstruction* parameter = computation->parameter(parameterNumber);
    if (!parameter) return Status::ok();
    bool same = compatible(operand->shape(), parameter->shape());
    if (same && options.layoutSensitive)
        same = layoutsEqual(operand->shape(), parameter->shape(), false);
    if (!same) {
        return instructionError(
            instruction, "operand " + std::to_string(operandNumber) + " (%" + operand->name() +
                             ") shape does not match parameter " +
                             std::to_string(parameterNumber) + " of computation " +
                             computation->name() + ": " +
                             shapeText(operand->shape(), options.layoutSensitive) + " vs " +
                             shapeText(parameter->shape(), options.layoutSensitive));
    }
    return Status::ok();
}

// A composite call's frontend attributes: composite.name non-empty,
// composite.attributes absent or non-empty, composite.version an integer.
Status verifyCompositeCall(const HloInstruction& instruction) {
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
    return Status::ok();
}

Status verifyCall(const HloInstruction& instruction, const HloVerifierOptions& options) {
    const HloComputation* callee = instruction.toApply();
    if (!callee) return instructionError(instruction, "call requires to_apply=");
    HLO_RETURN_IF_ERROR(checkParameterCount(instruction, callee, instruction.operandCount()));
    for (int64_t i = 0; i < callee->parameterCount(); ++i)
        HLO_RETURN_IF_ERROR(operandMatchesParameter(instruction, options, i, callee, i));
    if (shape_inference_internal::boolAttribute(instruction, "is_composite").value_or(false))
        return verifyCompositeCall(instruction);
    return Status::ok();
}

Status verifyWhile(const HloInstruction& instruction, const HloVerifierOptions& options) {
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
    if (instruction.operandCount() != 1) return Status::ok();  // arity error reported elsewhere
    HLO_RETURN_IF_ERROR(operandMatchesParameter(instruction, options, 0, body, 0));
    HLO_RETURN_IF_ERROR(operandMatchesParameter(instruction, options, 0, condition, 0));
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
    return Status::ok();
}

Status verifyConditional(const HloInstruction& instruction, const HloVerifierOptions& options) {
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
        HLO_RETURN_IF_ERROR(operandMatchesParameter(instruction, options,
                                                    static_cast<int64_t>(j) + 1, branches[j], 0));
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
    return Status::ok();
}

Status verifyFusion(const HloInstruction& instruction, const HloVerifierOptions& options) {
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
        if (same && options.layoutSensitive)
            same = layoutsEqual(parameter->shape(), operand, false);
        if (!same) {
            return instructionError(instruction, "Shape mismatch between parameter number " +
                                                     std::to_string(i) + " (" +
                                                     str(parameter->shape()) +
                                                     ") and its operand (" + str(operand) + ")");
        }
    }
    return Status::ok();
}

}  // namespace

Status verifyCalledComputations(const HloInstruction& instruction,
                                const HloVerifierOptions& options) {
    switch (instruction.opcode()) {
    case HloOpcode::kCall: return verifyCall(instruction, options);
    case HloOpcode::kWhile: return verifyWhile(instruction, options);
    case HloOpcode::kConditional: return verifyConditional(instruction, options);
    case HloOpcode::kFusion: return verifyFusion(instruction, options);
    default: break;
    }
    return Status::ok();
}

Status verifyShardingConsistency(const HloInstruction& instruction,
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
                size_t end = balancedBlockEnd(inner, pos);
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

Status verifyCallGraphAcyclic(const HloModule& module) {
    if (const auto cycle = module.findCallCycle())
        return instructionError(*cycle->instruction, "calls computation " + cycle->called->name() +
                                                         " recursively (the call graph has a cycle: " +
                                                         cycle->path + ")");
    return Status::ok();
}

}  // namespace hloscope::verifier_internal
