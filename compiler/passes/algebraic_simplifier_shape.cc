// Algebraic simplifier: reshape, transpose, broadcast, slice, concatenate,
// pad, reduce and copy rules.
#include <cmath>
#include <limits>
#include <numeric>

#include "compiler/passes/algebraic_simplifier_internal.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/literal.h"

namespace hloscope::simplifier {
namespace {

using PT = PrimitiveType;

RuleResult replaceWith(std::string_view rule, const HloInstruction* instruction,
                       HloInstruction* candidate) {
    if (candidate->shape() != instruction->shape()) return std::nullopt;
    return Rewrite{rule, candidate};
}

RuleResult inPlace(std::string_view rule) { return Rewrite{rule, nullptr}; }

bool isScalarBroadcast(const HloInstruction* instruction) {
    return instruction->opcode() == HloOpcode::kBroadcast && instruction->operandCount() == 1 &&
           instruction->operand(0)->shape().isScalar();
}

// op(broadcast(scalar)) -> broadcast(scalar) with the instruction's shape.
RuleResult broadcastScalarAs(Context& context, std::string_view rule,
                             HloInstruction* instruction, HloInstruction* scalar) {
    if (scalar->shape().elementType() != instruction->shape().elementType())
        return std::nullopt;
    HloInstruction* operands[] = {scalar};
    HloInstruction* broadcast =
        context.add(HloOpcode::kBroadcast, instruction->shape(), operands, "broadcast",
                    [](HloInstruction& b) { b.setDimensions({}); });
    if (broadcast == nullptr) return std::nullopt;
    return Rewrite{rule, broadcast};
}

bool isIdentityPermutation(const std::vector<int64_t>& permutation) {
    for (size_t i = 0; i < permutation.size(); ++i)
        if (permutation[i] != static_cast<int64_t>(i)) return false;
    return true;
}

bool validIndices(const std::vector<int64_t>& indices, int64_t bound) {
    for (int64_t i : indices)
        if (i < 0 || i >= bound) return false;
    return true;
}

RuleResult simplifyReshape(Context& context, HloInstruction* instruction) {
    HloInstruction* operand = instruction->operand(0);
    if (operand->shape() == instruction->shape())
        return replaceWith("reshape-noop", instruction, operand);
    if (operand->opcode() == HloOpcode::kReshape && operand->operandCount() == 1) {
        HloInstruction* source = operand->operand(0);
        if (!source->shape().isArray() || source->shape().isDynamic() ||
            source->shape().elementCount() != instruction->shape().elementCount())
            return std::nullopt;
        // Reshapes follow the logical row-major order: two compose into one.
        instruction->replaceOperand(0, source);
        context.lostUse(operand);
        return inPlace("reshape-of-reshape");
    }
    if (isScalarBroadcast(operand))
        return broadcastScalarAs(context, "reshape-of-broadcast-scalar", instruction,
                                 operand->operand(0));
    return std::nullopt;
}

RuleResult simplifyTranspose(Context& context, HloInstruction* instruction) {
    HloInstruction* operand = instruction->operand(0);
    const std::vector<int64_t>& permutation = instruction->dimensions();
    const int64_t rank = instruction->shape().rank();
    if (static_cast<int64_t>(permutation.size()) != rank || !validIndices(permutation, rank))
        return std::nullopt;
    if (isIdentityPermutation(permutation))
        if (auto r = replaceWith("transpose-noop", instruction, operand)) return r;
    if (operand->opcode() == HloOpcode::kTranspose && operand->operandCount() == 1) {
        const std::vector<int64_t>& inner = operand->dimensions();
        if (static_cast<int64_t>(inner.size()) != rank || !validIndices(inner, rank))
            return std::nullopt;
        // Result dimension i is the inner result's dimension permutation[i],
        // which is the source's dimension inner[permutation[i]].
        std::vector<int64_t> composed(static_cast<size_t>(rank));
        for (size_t i = 0; i < composed.size(); ++i)
            composed[i] = inner[static_cast<size_t>(permutation[i])];
        instruction->setDimensions(std::move(composed));
        instruction->replaceOperand(0, operand->operand(0));
        context.lostUse(operand);
        return inPlace("transpose-of-transpose");
    }
    if (isScalarBroadcast(operand))
        return broadcastScalarAs(context, "transpose-of-broadcast-scalar", instruction,
                                 operand->operand(0));
    return std::nullopt;
}

RuleResult simplifyBroadcast(Context& context, HloInstruction* instruction) {
    HloInstruction* operand = instruction->operand(0);
    const std::vector<int64_t>& dims = instruction->dimensions();
    const int64_t rank = instruction->shape().rank();
    if (static_cast<int64_t>(dims.size()) != operand->shape().rank() ||
        !validIndices(dims, rank))
        return std::nullopt;
    if (static_cast<int64_t>(dims.size()) == rank && isIdentityPermutation(dims))
        if (auto r = replaceWith("broadcast-noop", instruction, operand)) return r;
    if (operand->opcode() == HloOpcode::kBroadcast && operand->operandCount() == 1) {
        HloInstruction* source = operand->operand(0);
        const std::vector<int64_t>& inner = operand->dimensions();
        if (static_cast<int64_t>(inner.size()) != source->shape().rank() ||
            !validIndices(inner, operand->shape().rank()))
            return std::nullopt;
        // Source dimension j -> inner dimension inner[j] -> dims[inner[j]].
        std::vector<int64_t> composed(inner.size());
        for (size_t j = 0; j < inner.size(); ++j)
            composed[j] = dims[static_cast<size_t>(inner[j])];
        instruction->setDimensions(std::move(composed));
        instruction->replaceOperand(0, source);
        context.lostUse(operand);
        return inPlace("broadcast-of-broadcast");
    }
    return std::nullopt;
}

RuleResult simplifySlice(Context& context, HloInstruction* instruction) {
    HloInstruction* operand = instruction->operand(0);
    const std::vector<SliceDimension>& slice = instruction->slice();
    const int64_t rank = instruction->shape().rank();
    if (static_cast<int64_t>(slice.size()) != rank || operand->shape().rank() != rank)
        return std::nullopt;
    for (const SliceDimension& d : slice)
        if (d.stride < 1 || d.start < 0 || d.limit < d.start) return std::nullopt;
    bool full = true;
    for (int64_t i = 0; i < rank; ++i) {
        const SliceDimension& d = slice[static_cast<size_t>(i)];
        full = full && d.start == 0 && d.stride == 1 && d.limit == operand->shape().dimensions(i);
    }
    if (full) return replaceWith("slice-noop", instruction, operand);
    if (operand->opcode() == HloOpcode::kSlice && operand->operandCount() == 1) {
        const std::vector<SliceDimension>& inner = operand->slice();
        HloInstruction* source = operand->operand(0);
        if (static_cast<int64_t>(inner.size()) != rank || source->shape().rank() != rank)
            return std::nullopt;
        std::vector<SliceDimension> composed(static_cast<size_t>(rank));
        for (size_t i = 0; i < composed.size(); ++i) {
            const SliceDimension& a = inner[i];
            const SliceDimension& b = slice[i];
            if (a.stride < 1) return std::nullopt;
            const int64_t count = instruction->shape().dimensions(static_cast<int64_t>(i));
            SliceDimension& c = composed[i];
            if (count == 0) {
                c = SliceDimension{0, 0, 1};
                continue;
            }
            // Element k is inner[b.start + k*b.stride] = source[a.start + (b.start + k*b.stride)*a.stride].
            c.start = a.start + b.start * a.stride;
            c.stride = a.stride * b.stride;
            c.limit = c.start + (count - 1) * c.stride + 1;
            if (c.limit > source->shape().dimensions(static_cast<int64_t>(i))) return std::nullopt;
        }
        instruction->mutableExtra().slice = std::move(composed);
        instruction->replaceOperand(0, source);
        context.lostUse(operand);
        return inPlace("slice-of-slice");
    }
    if (operand->opcode() == HloOpcode::kConcatenate && operand->dimensions().size() == 1) {
        const int64_t axis = operand->dimensions(0);
        if (axis < 0 || axis >= rank) return std::nullopt;
        const SliceDimension& d = slice[static_cast<size_t>(axis)];
        const int64_t count = instruction->shape().dimensions(axis);
        if (count == 0) return std::nullopt;
        const int64_t first = d.start, last = d.start + (count - 1) * d.stride;
        int64_t offset = 0;
        for (int64_t k = 0; k < operand->operandCount(); ++k) {
            HloInstruction* piece = operand->operand(k);
            if (piece->shape().rank() != rank) return std::nullopt;
            const int64_t size = piece->shape().dimensions(axis);
            if (first >= offset && last < offset + size) {
                std::vector<SliceDimension> moved = slice;
                moved[static_cast<size_t>(axis)] =
                    SliceDimension{first - offset, last - offset + 1, d.stride};
                instruction->mutableExtra().slice = std::move(moved);
                instruction->replaceOperand(0, piece);
                context.lostUse(operand);
                return inPlace("slice-of-concat");
            }
            offset += size;
        }
        return std::nullopt;
    }
    if (isScalarBroadcast(operand))
        return broadcastScalarAs(context, "slice-of-broadcast-scalar", instruction,
                                 operand->operand(0));
    return std::nullopt;
}

RuleResult simplifyConcatenate(Context& context, HloInstruction* instruction) {
    if (instruction->operandCount() == 1)
        return replaceWith("concat-single", instruction, instruction->operand(0));
    if (instruction->dimensions().size() != 1) return std::nullopt;
    const int64_t axis = instruction->dimensions(0);
    std::vector<HloInstruction*> kept;
    for (HloInstruction* operand : instruction->operands()) {
        if (axis < 0 || axis >= operand->shape().rank()) return std::nullopt;
        if (operand->shape().dimensions(axis) != 0) kept.push_back(operand);
    }
    if (kept.empty() || static_cast<int64_t>(kept.size()) == instruction->operandCount())
        return std::nullopt;
    for (HloInstruction* operand : instruction->operands()) context.lostUse(operand);
    instruction->removeAllOperands();
    for (HloInstruction* operand : kept) instruction->appendOperand(operand);
    return inPlace("concat-empty-operand");
}

RuleResult simplifyPad(HloInstruction* instruction) {
    if (instruction->operandCount() != 2) return std::nullopt;
    const std::vector<PaddingDimension>& padding = instruction->padding();
    if (static_cast<int64_t>(padding.size()) != instruction->shape().rank()) return std::nullopt;
    for (const PaddingDimension& d : padding)
        if (d.edgeLow != 0 || d.edgeHigh != 0 || d.interior != 0) return std::nullopt;
    return replaceWith("pad-noop", instruction, instruction->operand(0));
}

// Whether reduce(x, init) over no dimensions, which computes
// reducer(init, x) per element, is exactly x.
bool initIsReducerIdentity(Context& context, const HloInstruction* reduce) {
    const HloComputation* reducer = reduce->toApply();
    const HloInstruction* init = reduce->operand(1);
    if (reducer == nullptr || reducer->parameterCount() != 2 || reducer->instructionCount() != 3)
        return false;
    const HloInstruction* root = reducer->root();
    const PT type = reduce->shape().elementType();
    if (root == nullptr || root->operandCount() != 2 || root->shape().rank() != 0 ||
        root->shape().elementType() != type || init->shape().elementType() != type)
        return false;
    const HloInstruction* p0 = reducer->parameter(0);
    const HloInstruction* p1 = reducer->parameter(1);
    if (p0 == nullptr || p1 == nullptr || p0 == p1) return false;
    if (!((root->operand(0) == p0 && root->operand(1) == p1) ||
          (root->operand(0) == p1 && root->operand(1) == p0)))
        return false;
    if (p0->shape().elementType() != type || p1->shape().elementType() != type) return false;
    const ConstantFacts& facts = context.constantFacts(init);
    if (!facts.known) return false;
    const bool isFloat = primitive_util::isFloatingPoint(type);
    const bool isInt = primitive_util::isInteger(type);
    switch (root->opcode()) {
        case HloOpcode::kAdd:
            return type != PT::PRED && facts.additiveIdentity;
        case HloOpcode::kMultiply:
            return facts.one;
        case HloOpcode::kAnd:
            return (isInt || type == PT::PRED) && facts.allOnesBits;
        case HloOpcode::kOr:
            return (isInt || type == PT::PRED) && facts.zeroBits;
        case HloOpcode::kMaximum:
        case HloOpcode::kMinimum: {
            if (init->opcode() != HloOpcode::kConstant || (!isFloat && !isInt)) return false;
            auto literal = literalOfConstant(*init);
            if (!literal.isOk() || literal->elementCount() != 1) return false;
            const bool isMax = root->opcode() == HloOpcode::kMaximum;
            if (isFloat) {
                const double v = literal->getAsDouble(0);
                return std::isinf(v) && (isMax ? v < 0 : v > 0);
            }
            const int bits = primitive_util::bitWidth(type);
            if (primitive_util::isSignedInteger(type)) {
                const int64_t v = literal->getAsInt64(0);
                const int64_t lowest = bits >= 64 ? std::numeric_limits<int64_t>::min()
                                                  : -(int64_t{1} << (bits - 1));
                const int64_t highest = bits >= 64 ? std::numeric_limits<int64_t>::max()
                                                   : (int64_t{1} << (bits - 1)) - 1;
                return v == (isMax ? lowest : highest);
            }
            const uint64_t v = literal->getAsUint64(0);
            const uint64_t highest =
                bits >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
            return v == (isMax ? 0 : highest);
        }
        default:
            return false;
    }
}

RuleResult simplifyReduce(Context& context, HloInstruction* instruction) {
    // Single-input reduces only (variadic ones produce tuples anyway).
    if (instruction->operandCount() != 2 || !instruction->operand(1)->shape().isScalar())
        return std::nullopt;
    HloInstruction* input = instruction->operand(0);
    HloInstruction* init = instruction->operand(1);
    if (input->shape().elementCount() == 0 &&
        init->shape().elementType() == instruction->shape().elementType())
        return broadcastScalarAs(context, "reduce-of-empty", instruction, init);
    if (instruction->hasDimensions() && instruction->dimensions().empty() &&
        initIsReducerIdentity(context, instruction))
        return replaceWith("reduce-noop-dims", instruction, input);
    return std::nullopt;
}

}  // namespace

RuleResult simplifyShapeOp(Context& context, HloInstruction* instruction) {
    if (instruction->operandCount() < 1) return std::nullopt;
    switch (instruction->opcode()) {
        case HloOpcode::kReshape:
            if (instruction->operandCount() != 1) return std::nullopt;
            return simplifyReshape(context, instruction);
        case HloOpcode::kTranspose:
            if (instruction->operandCount() != 1) return std::nullopt;
            return simplifyTranspose(context, instruction);
        case HloOpcode::kBroadcast:
            if (instruction->operandCount() != 1) return std::nullopt;
            return simplifyBroadcast(context, instruction);
        case HloOpcode::kSlice:
            if (instruction->operandCount() != 1) return std::nullopt;
            return simplifySlice(context, instruction);
        case HloOpcode::kConcatenate:
            return simplifyConcatenate(context, instruction);
        case HloOpcode::kPad:
            return simplifyPad(instruction);
        case HloOpcode::kReduce:
            return simplifyReduce(context, instruction);
        case HloOpcode::kCopy: {
            if (instruction->operandCount() != 1) return std::nullopt;
            HloInstruction* inner = instruction->operand(0);
            if (inner->opcode() != HloOpcode::kCopy) return std::nullopt;
            // The inner copy already produced this exact shape and layout.
            return replaceWith("copy-of-copy", instruction, inner);
        }
        default:
            return std::nullopt;
    }
}

}  // namespace hloscope::simplifier
