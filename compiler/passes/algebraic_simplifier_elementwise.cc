// Algebraic simplifier: element-wise identities and convert rules.
#include "compiler/passes/algebraic_simplifier_internal.h"

namespace hloscope::simplifier {
namespace {

using PT = PrimitiveType;

// `candidate` may replace `instruction`: identical shape, layout included.
RuleResult replaceWith(std::string_view rule, const HloInstruction* instruction,
                       HloInstruction* candidate) {
    if (candidate->shape() != instruction->shape()) return std::nullopt;
    return Rewrite{rule, candidate};
}

bool isArithmetic(PT type) {
    return primitive_util::isInteger(type) || primitive_util::isFloatingPoint(type) ||
           primitive_util::isComplex(type);
}

bool isBitwise(PT type) { return type == PT::PRED || primitive_util::isInteger(type); }

RuleResult simplifyBinary(Context& context, HloInstruction* instruction) {
    HloInstruction* lhs = instruction->operand(0);
    HloInstruction* rhs = instruction->operand(1);
    const PT type = instruction->shape().elementType();
    // Mixed-precision operands: leave alone (replacements must keep types).
    if (lhs->shape().elementType() != type || rhs->shape().elementType() != type)
        return std::nullopt;
    switch (instruction->opcode()) {
        case HloOpcode::kAdd: {
            if (!isArithmetic(type)) return std::nullopt;
            if (context.constantFacts(rhs).additiveIdentity)
                if (auto r = replaceWith("add-zero", instruction, lhs)) return r;
            if (context.constantFacts(lhs).additiveIdentity)
                return replaceWith("add-zero", instruction, rhs);
            return std::nullopt;
        }
        case HloOpcode::kSubtract:
            if (isArithmetic(type) && context.constantFacts(rhs).subtractiveIdentity)
                return replaceWith("sub-zero", instruction, lhs);
            return std::nullopt;
        case HloOpcode::kMultiply: {
            if (!isArithmetic(type)) return std::nullopt;
            if (context.constantFacts(rhs).one)
                if (auto r = replaceWith("mul-one", instruction, lhs)) return r;
            if (context.constantFacts(lhs).one)
                if (auto r = replaceWith("mul-one", instruction, rhs)) return r;
            if (primitive_util::isInteger(type)) {
                if (context.constantFacts(rhs).zeroBits)
                    if (auto r = replaceWith("mul-zero", instruction, rhs)) return r;
                if (context.constantFacts(lhs).zeroBits)
                    return replaceWith("mul-zero", instruction, lhs);
            }
            return std::nullopt;
        }
        case HloOpcode::kDivide:
            if ((primitive_util::isInteger(type) || primitive_util::isFloatingPoint(type)) &&
                context.constantFacts(rhs).one)
                return replaceWith("div-one", instruction, lhs);
            return std::nullopt;
        case HloOpcode::kAnd:
        case HloOpcode::kOr: {
            if (!isBitwise(type)) return std::nullopt;
            const bool isAnd = instruction->opcode() == HloOpcode::kAnd;
            // and: all-ones is the identity, zero absorbs; or: the reverse.
            const std::string_view identityRule = isAnd ? "and-identity" : "or-identity";
            const std::string_view absorbRule = isAnd ? "and-absorb" : "or-absorb";
            for (int side = 0; side < 2; ++side) {
                HloInstruction* constant = side == 0 ? rhs : lhs;
                HloInstruction* other = side == 0 ? lhs : rhs;
                const ConstantFacts& facts = context.constantFacts(constant);
                const bool identity = isAnd ? facts.allOnesBits : facts.zeroBits;
                const bool absorbing = isAnd ? facts.zeroBits : facts.allOnesBits;
                if (identity)
                    if (auto r = replaceWith(identityRule, instruction, other)) return r;
                if (absorbing)
                    if (auto r = replaceWith(absorbRule, instruction, constant)) return r;
            }
            if (lhs == rhs) return replaceWith(isAnd ? "and-self" : "or-self", instruction, lhs);
            return std::nullopt;
        }
        case HloOpcode::kMaximum:
        case HloOpcode::kMinimum:
            if (lhs == rhs)
                return replaceWith(
                    instruction->opcode() == HloOpcode::kMaximum ? "max-self" : "min-self",
                    instruction, lhs);
            return std::nullopt;
        default:
            return std::nullopt;
    }
}

RuleResult simplifySelect(Context& context, HloInstruction* instruction) {
    HloInstruction* predicate = instruction->operand(0);
    HloInstruction* onTrue = instruction->operand(1);
    HloInstruction* onFalse = instruction->operand(2);
    if (onTrue == onFalse) return replaceWith("select-same-branches", instruction, onTrue);
    if (predicate->shape().elementType() != PT::PRED) return std::nullopt;
    const ConstantFacts& facts = context.constantFacts(predicate);
    if (facts.allOnesBits) return replaceWith("select-constant-pred", instruction, onTrue);
    if (facts.zeroBits) return replaceWith("select-constant-pred", instruction, onFalse);
    return std::nullopt;
}

// op(op(x)) -> x for involutions (negate, not).
RuleResult simplifyInvolution(std::string_view rule, HloInstruction* instruction) {
    HloInstruction* inner = instruction->operand(0);
    if (inner->opcode() != instruction->opcode() || inner->hasSideEffect()) return std::nullopt;
    return replaceWith(rule, instruction, inner->operand(0));
}

// Whether `to` represents every value of `from` exactly (so converting
// through `to` loses nothing).
bool representsExactly(PT from, PT to) {
    if (from == to) return true;
    using namespace primitive_util;
    auto isStandardFloat = [](PT t) {
        return t == PT::F16 || t == PT::BF16 || t == PT::F32 || t == PT::F64;
    };
    if (from == PT::PRED)
        return (isInteger(to) && bitWidth(to) >= 8) || isStandardFloat(to);
    if (isInteger(from) && isInteger(to)) {
        const bool fromSigned = isSignedInteger(from), toSigned = isSignedInteger(to);
        if (fromSigned == toSigned) return bitWidth(to) >= bitWidth(from);
        return !fromSigned && toSigned && bitWidth(to) > bitWidth(from);
    }
    if (isInteger(from) && isStandardFloat(to)) {
        const int magnitudeBits = bitWidth(from) - (isSignedInteger(from) ? 1 : 0);
        return magnitudeBits <= mantissaBits(to) + 1;
    }
    if (isStandardFloat(from) && isStandardFloat(to)) {
        return (from == PT::F16 || from == PT::BF16) ? (to == PT::F32 || to == PT::F64)
                                                     : (from == PT::F32 && to == PT::F64);
    }
    return from == PT::C64 && to == PT::C128;
}

}  // namespace

RuleResult simplifyElementwise(Context& context, HloInstruction* instruction) {
    switch (instruction->opcode()) {
        case HloOpcode::kAdd:
        case HloOpcode::kSubtract:
        case HloOpcode::kMultiply:
        case HloOpcode::kDivide:
        case HloOpcode::kAnd:
        case HloOpcode::kOr:
        case HloOpcode::kMaximum:
        case HloOpcode::kMinimum:
            if (instruction->operandCount() != 2) return std::nullopt;
            return simplifyBinary(context, instruction);
        case HloOpcode::kSelect:
            if (instruction->operandCount() != 3) return std::nullopt;
            return simplifySelect(context, instruction);
        case HloOpcode::kNegate:
            if (instruction->operandCount() != 1) return std::nullopt;
            return simplifyInvolution("negate-negate", instruction);
        case HloOpcode::kNot:
            if (instruction->operandCount() != 1) return std::nullopt;
            return simplifyInvolution("not-not", instruction);
        case HloOpcode::kAbs: {
            if (instruction->operandCount() != 1) return std::nullopt;
            HloInstruction* inner = instruction->operand(0);
            if (inner->opcode() != HloOpcode::kAbs) return std::nullopt;
            return replaceWith("abs-abs", instruction, inner);
        }
        default:
            return std::nullopt;
    }
}

RuleResult simplifyConvert(Context& context, HloInstruction* instruction) {
    if (instruction->operandCount() != 1) return std::nullopt;
    HloInstruction* operand = instruction->operand(0);
    if (operand->shape().elementType() == instruction->shape().elementType())
        return replaceWith("convert-noop", instruction, operand);
    if (operand->opcode() != HloOpcode::kConvert || operand->operandCount() != 1)
        return std::nullopt;
    HloInstruction* source = operand->operand(0);
    if (!source->shape().isArray() || source->shape().isDynamic()) return std::nullopt;
    const PT from = source->shape().elementType();
    const PT middle = operand->shape().elementType();
    if (!representsExactly(from, middle)) return std::nullopt;
    if (from == instruction->shape().elementType())
        if (auto r = replaceWith("convert-chain", instruction, source)) return r;
    // Converting the exactly-converted value equals converting the source:
    // the outer convert reads the source directly.
    instruction->replaceOperand(0, source);
    context.lostUse(operand);
    return Rewrite{"convert-chain", nullptr};
}

}  // namespace hloscope::simplifier
