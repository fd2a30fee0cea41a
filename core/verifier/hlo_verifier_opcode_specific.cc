// HloVerifier: opcode-specific checks beyond shape inference: no implicit
// broadcasts, comparison types, iota types, broadcast/reshape element types,
// reducer parameter types, constant literals against their shapes, outfeed
// shapes, add-dependency tokens and scans; collectives, async ops and custom
// calls go to hlo_verifier_ops.cc.
#include <algorithm>
#include <string>
#include <string_view>

#include "core/ir/scan.h"
#include "core/shape_inference/shape_inference_util.h"
#include "core/text/hlo_parser.h"
#include "core/verifier/hlo_verifier_internal.h"

namespace hloscope::verifier_internal {
namespace {

using shape_inference_internal::compatible;
using shape_inference_internal::str;

// No implicit broadcasts in elementwise operations.
Status verifyNoImplicitBroadcast(const HloInstruction& instruction) {
    const HloOpcode opcode = instruction.opcode();
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
    return Status::ok();
}

Status verifyComparisonType(const HloInstruction& instruction) {
    const HloExtraAttributes* extra = instruction.extra();
    if (!extra || extra->comparisonType == ComparisonType::kDefault) return Status::ok();
    if (instruction.operandCount() != 2 || !instruction.operand(1)->shape().isArray())
        return Status::ok();
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
    return Status::ok();
}

Status verifyIotaType(const HloInstruction& instruction) {
    PrimitiveType type = instruction.shape().elementType();
    if (!primitive_util::isInteger(type) && !primitive_util::isFloatingPoint(type) &&
        !primitive_util::isComplex(type)) {
        return instructionError(instruction,
                                "Only support iota of integral, floating point or complex "
                                "primitive types, got " +
                                    std::string(primitive_util::name(type)));
    }
    return Status::ok();
}

// broadcast (dimensions in order, when asked), reshape and dynamic-reshape:
// the element type kept; a reshape outside fusions a bitcast, when asked.
Status verifyBroadcastOrReshape(const HloInstruction& instruction,
                                const HloVerifierOptions& options) {
    const HloOpcode opcode = instruction.opcode();
    if (opcode == HloOpcode::kBroadcast && options.verifyBroadcastDimensionsOrder) {
        const auto& dims = instruction.dimensions();
        if (!std::is_sorted(dims.begin(), dims.end())) {
            return instructionError(instruction, "Broadcast dimensions should be ordered, got " +
                                                     shape_inference_internal::str(dims));
        }
    }
    if (instruction.operandCount() == 1 && instruction.shape().isArray() &&
        instruction.operand(0)->shape().isArray() &&
        instruction.shape().elementType() != instruction.operand(0)->shape().elementType()) {
        return instructionError(instruction,
                                std::string(hloOpcodeString(opcode)) +
                                    " must not change the element type: operand is " +
                                    str(instruction.operand(0)->shape()) + ", result is " +
                                    str(instruction.shape()));
    }
    if (opcode == HloOpcode::kReshape && options.verifyReshapeIsBitcast &&
        !instruction.parent()->fusionInstruction() && instruction.operandCount() == 1 &&
        !reshapeIsBitcast(instruction.operand(0)->shape(), instruction.shape())) {
        return instructionError(instruction, "Reshape should be a physical bitcast, got " +
                                                 instruction.operand(0)->shape().toString() +
                                                 " -> " + instruction.shape().toString());
    }
    return Status::ok();
}

// reduce, map, reduce-window: to_apply's parameters of the operands' types.
Status verifyToApplyTypes(const HloInstruction& instruction, const HloVerifierOptions& options) {
    if (options.allowMixedPrecision) return Status::ok();
    const HloComputation* toApply = instruction.toApply();
    if (!toApply) return Status::ok();
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
    return Status::ok();
}

Status verifyConstantLiteral(const HloInstruction& instruction) {
    const Shape& shape = instruction.shape();
    if (!shape.isArray() || shape.rank() == 0 || instruction.literalText().empty())
        return Status::ok();
    std::string_view text = instruction.literalText();
    size_t brace = text.find('{');
    if (brace == std::string_view::npos) return Status::ok();
    auto dims = literalDimensions(text.substr(brace), shape.rank());
    if (!dims) return Status::ok();
    if (dims->empty() || *dims != shape.dimensions()) {
        std::string found = dims->empty() ? "a ragged literal" : "dimensions " +
                                                                     shape_inference_internal::str(*dims);
        return instructionError(instruction, "constant literal does not match its shape " +
                                                 str(shape) + ": found " + found);
    }
    return Status::ok();
}

Status verifyOutfeedShape(const HloInstruction& instruction) {
    auto text = instruction.attribute("outfeed_shape");
    if (!text || instruction.operandCount() < 1) return Status::ok();
    StatusOr<Shape> parsed = parseShape(*text);
    if (parsed.isOk() && !compatible(*parsed, instruction.operand(0)->shape())) {
        return instructionError(instruction, "Expected outfeed shape to be equal to operand's "
                                             "shape " +
                                                 str(instruction.operand(0)->shape()) +
                                                 ", actual shape is " + str(*parsed));
    }
    return Status::ok();
}

Status verifyAddDependency(const HloInstruction& instruction) {
    if (instruction.operandCount() == 2 && !instruction.operand(1)->shape().isToken()) {
        return instructionError(instruction, "Expected operand 1 to be token-shaped, actual "
                                             "shape is " +
                                                 str(instruction.operand(1)->shape()));
    }
    return Status::ok();
}

Status verifyScan(const HloInstruction& instruction, const HloVerifierOptions& options) {
    if (auto geometry = scanGeometry(instruction); !geometry.isOk()) {
        // scanGeometry names the instruction; say where it is too.
        std::string_view message = geometry.status().message();
        const std::string prefix = "%" + instruction.name() + ": ";
        if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
        return instructionError(instruction, message);
    }
    if (options.layoutSensitive && instruction.attribute("is_associative") &&
        *instruction.attribute("is_associative") == "false") {
        return instructionError(instruction,
                                "Non-associative scan reached layout-sensitive HloVerifier");
    }
    return Status::ok();
}

}  // namespace

Status verifyOpcodeSpecific(const HloInstruction& instruction, const HloVerifierOptions& options) {
    const HloOpcode opcode = instruction.opcode();
    HLO_RETURN_IF_ERROR(verifyNoImplicitBroadcast(instruction));
    switch (opcode) {
    case HloOpcode::kCompare: HLO_RETURN_IF_ERROR(verifyComparisonType(instruction)); break;
    case HloOpcode::kIota: HLO_RETURN_IF_ERROR(verifyIotaType(instruction)); break;
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kDynamicReshape:
        HLO_RETURN_IF_ERROR(verifyBroadcastOrReshape(instruction, options));
        break;
    case HloOpcode::kReduce:
    case HloOpcode::kMap:
    case HloOpcode::kReduceWindow:
        HLO_RETURN_IF_ERROR(verifyToApplyTypes(instruction, options));
        break;
    case HloOpcode::kConstant: HLO_RETURN_IF_ERROR(verifyConstantLiteral(instruction)); break;
    case HloOpcode::kOutfeed: HLO_RETURN_IF_ERROR(verifyOutfeedShape(instruction)); break;
    case HloOpcode::kAddDependency: HLO_RETURN_IF_ERROR(verifyAddDependency(instruction)); break;
    case HloOpcode::kCustomCall: HLO_RETURN_IF_ERROR(verifyCustomCall(instruction, options)); break;
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone: HLO_RETURN_IF_ERROR(verifyAsync(instruction, options)); break;
    case HloOpcode::kScan: HLO_RETURN_IF_ERROR(verifyScan(instruction, options)); break;
    default: break;
    }
    if (hloOpcodeIsCollective(opcode)) HLO_RETURN_IF_ERROR(verifyCollective(instruction));
    return Status::ok();
}

}  // namespace hloscope::verifier_internal
