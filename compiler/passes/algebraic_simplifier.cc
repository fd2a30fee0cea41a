#include "compiler/passes/algebraic_simplifier.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "compiler/passes/algebraic_simplifier_internal.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/literal.h"
#include "core/shape_inference/shape_inference.h"

namespace hloscope {
namespace simplifier {
namespace {

// Constants larger than this are not inspected (rewrites with them are rare
// and reading them would cost time on real models).
constexpr int64_t kMaxInspectedElements = 1 << 16;

ConstantFacts factsOfLiteral(const Literal& literal) {
    ConstantFacts facts;
    const PrimitiveType type = literal.elementType();
    const int64_t count = literal.elementCount();
    const bool isFloat = primitive_util::isFloatingPoint(type);
    const bool isComplex = primitive_util::isComplex(type);
    const bool isInt = primitive_util::isInteger(type);
    const bool isPred = type == PrimitiveType::PRED;
    if (!isFloat && !isComplex && !isInt && !isPred) return facts;
    facts.known = true;
    facts.additiveIdentity = !isPred;
    facts.subtractiveIdentity = !isPred;
    facts.one = isFloat || isInt;
    facts.zeroBits = isInt || isPred;
    facts.allOnesBits = isInt || isPred;
    const int bits = primitive_util::bitWidth(type);
    const uint64_t unsignedMax =
        bits >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
    for (int64_t i = 0; i < count; ++i) {
        if (isComplex) {
            const std::complex<double> v = literal.getAsComplex(i);
            const bool zeroRe = v.real() == 0, zeroIm = v.imag() == 0;
            facts.additiveIdentity = facts.additiveIdentity && zeroRe && zeroIm &&
                                     std::signbit(v.real()) && std::signbit(v.imag());
            facts.subtractiveIdentity = facts.subtractiveIdentity && zeroRe && zeroIm &&
                                        !std::signbit(v.real()) && !std::signbit(v.imag());
        } else if (isFloat) {
            const double v = literal.getAsDouble(i);
            facts.additiveIdentity = facts.additiveIdentity && v == 0 && std::signbit(v);
            facts.subtractiveIdentity = facts.subtractiveIdentity && v == 0 && !std::signbit(v);
            facts.one = facts.one && v == 1.0;
        } else {
            const bool isSigned = primitive_util::isSignedInteger(type);
            const int64_t v = isPred || isSigned ? literal.getAsInt64(i) : 0;
            const uint64_t u = isPred || isSigned ? 0 : literal.getAsUint64(i);
            const bool zero = isPred || isSigned ? v == 0 : u == 0;
            facts.additiveIdentity = facts.additiveIdentity && zero;
            facts.subtractiveIdentity = facts.subtractiveIdentity && zero;
            facts.zeroBits = facts.zeroBits && zero;
            facts.one = facts.one && (isSigned ? v == 1 : u == 1);
            facts.allOnesBits = facts.allOnesBits &&
                                (isPred ? v != 0 : isSigned ? v == -1 : u == unsignedMax);
        }
    }
    return facts;
}

}  // namespace

const ConstantFacts& Context::constantFacts(const HloInstruction* instruction) {
    auto it = m_facts.find(instruction);
    if (it != m_facts.end()) return it->second;
    ConstantFacts facts;
    const HloInstruction* constant = instruction;
    if (constant->opcode() == HloOpcode::kBroadcast && constant->operandCount() == 1)
        constant = constant->operand(0);
    if (constant->opcode() == HloOpcode::kConstant && constant->shape().isArray() &&
        !constant->shape().isDynamic() &&
        constant->shape().elementCount() <= kMaxInspectedElements) {
        auto literal = literalOfConstant(*constant);
        if (literal.isOk() && literal->shape().isArray()) facts = factsOfLiteral(*literal);
    }
    return m_facts.emplace(instruction, facts).first->second;
}

HloInstruction* Context::finishAdd(std::unique_ptr<HloInstruction> instruction) {
    auto inferred = inferShape(*instruction);
    if (!inferred.isOk() || !inferred->compatible(instruction->shape())) {
        instruction->removeAllOperands();
        return nullptr;
    }
    return m_computation.addInstruction(std::move(instruction));
}

Shape shapeLike(const Shape& reference, PrimitiveType type, std::vector<int64_t> dimensions) {
    Shape shape(type, std::move(dimensions));
    if (reference.hasLayout()) shape.setLayout(Layout::descending(shape.rank()));
    return shape;
}

namespace {

// Whether the driver may look at `instruction` at all.
bool rewritable(const HloInstruction* instruction) {
    if (instruction->hasSideEffect()) return false;
    if (!instruction->controlPredecessors().empty() || !instruction->controlSuccessors().empty())
        return false;
    if (!instruction->shape().isArray() || instruction->shape().isDynamic()) return false;
    for (const HloInstruction* operand : instruction->operands())
        if (!operand->shape().isArray() || operand->shape().isDynamic()) return false;
    return true;
}

// A constant whose elements are all equal (a splat) becomes a broadcast of
// its scalar, as XLA's simplifier does: the module no longer carries (and a
// runtime no longer holds) its bytes, and fusion can fold the broadcast
// into its users.
RuleResult simplifyConstant(Context& context, HloInstruction* constant) {
    const Shape& shape = constant->shape();
    if (!shape.isArray() || shape.rank() == 0 || shape.elementCount() < 2) return {};
    // Big constants written out element by element are rarely splats and
    // costly to read: only those of at most 64K elements are read (a splat
    // written as one value, "constant(0.5)" for an array, always).
    const bool oneValue = constant->literalText().find('{') == std::string::npos;
    std::string text;
    if (oneValue) {
        // The scalar it repeats, read as one (the array is never materialised).
        auto element = Literal::parseValue(constant->literalText(), Shape(shape.elementType(), {}));
        if (!element.isOk()) return {};
        text = element->valueToString();
        auto reparsed = Literal::parseValue(text, element->shape());
        if (!reparsed.isOk() || !(*reparsed == *element)) return {};
    } else {
        if (shape.elementCount() > 65536) return {};
        auto literal = literalOfConstant(*constant);
        if (!literal.isOk() || !literal->shape().isArray()) return {};
        const auto* bytes = static_cast<const uint8_t*>(literal->untypedData());
        const int64_t size = literal->sizeInBytes();
        const int64_t elementBytes = size / literal->elementCount();
        if (elementBytes <= 0 || elementBytes * literal->elementCount() != size) return {};
        for (int64_t offset = elementBytes; offset < size; offset += elementBytes)
            if (std::memcmp(bytes, bytes + offset, static_cast<size_t>(elementBytes)) != 0) return {};
        Literal element(Shape(shape.elementType(), {}));
        std::memcpy(element.untypedData(), bytes, static_cast<size_t>(elementBytes));
        text = element.valueToString();
        auto reparsed = Literal::parseValue(text, element.shape());
        if (!reparsed.isOk() || !(*reparsed == element)) return {};  // only what the text carries exactly
    }
    Shape scalarShape(shape.elementType(), {});
    if (shape.hasLayout()) scalarShape.setLayout(Layout::descending(0));
    HloInstruction* scalar = context.add(HloOpcode::kConstant, scalarShape, {}, "constant",
                                         [&](HloInstruction& i) { i.setLiteralText(text); });
    if (!scalar) return {};
    HloInstruction* operands[] = {scalar};
    HloInstruction* broadcast = context.add(HloOpcode::kBroadcast, shape, operands, "broadcast",
                                            [](HloInstruction& i) { i.setDimensions({}); });
    if (!broadcast) return {};
    return Rewrite{"splat-constant-to-broadcast", broadcast};
}

RuleResult simplifyOne(Context& context, HloInstruction* instruction) {
    switch (instruction->opcode()) {
        case HloOpcode::kConstant:
            return simplifyConstant(context, instruction);
        case HloOpcode::kConvert:
            return simplifyConvert(context, instruction);
        case HloOpcode::kDot:
            return simplifyDot(context, instruction);
        case HloOpcode::kReshape:
        case HloOpcode::kTranspose:
        case HloOpcode::kBroadcast:
        case HloOpcode::kSlice:
        case HloOpcode::kConcatenate:
        case HloOpcode::kPad:
        case HloOpcode::kReduce:
        case HloOpcode::kCopy:
            return simplifyShapeOp(context, instruction);
        default:
            return simplifyElementwise(context, instruction);
    }
}

bool removable(const HloInstruction* instruction,
               const std::unordered_set<HloInstruction*>& dead) {
    if (instruction->isRoot() || instruction->opcode() == HloOpcode::kParameter ||
        instruction->hasSideEffect() || !instruction->controlPredecessors().empty() ||
        !instruction->controlSuccessors().empty())
        return false;
    for (HloInstruction* user : instruction->users())
        if (!dead.count(user)) return false;
    return true;
}

// Removes the instructions that lost their last use during the sweep, and
// the operands that only they used.
Status removeNewlyDead(HloComputation& computation, std::vector<HloInstruction*> candidates) {
    std::unordered_set<HloInstruction*> dead;
    std::vector<HloInstruction*> order;
    while (!candidates.empty()) {
        HloInstruction* instruction = candidates.back();
        candidates.pop_back();
        if (dead.count(instruction) || instruction->parent() != &computation ||
            !removable(instruction, dead))
            continue;
        dead.insert(instruction);
        order.push_back(instruction);
        for (HloInstruction* operand : instruction->operands()) candidates.push_back(operand);
    }
    return computation.removeInstructions(order);
}

}  // namespace
}  // namespace simplifier

std::string_view AlgebraicSimplifierPass::description() {
    return "Applies exact local algebraic rewrites (x+(-0.0), x*1, integer x*0, "
           "convert/reshape/transpose/broadcast/slice chains and no-ops, "
           "concatenate/pad/reduce no-ops, dot canonicalisation, copy-of-copy) until a fixed "
           "point. Floating-point rewrites are only applied when exact in IEEE arithmetic; "
           "side-effecting instructions, roots' shapes and layouts are never changed. "
           "Option max_iterations (default 10) bounds the number of sweeps.";
}

StatusOr<std::unique_ptr<HloPass>> AlgebraicSimplifierPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({"max_iterations"}));
    HLO_ASSIGN_OR_RETURN(int64_t maxIterations, options.getInt("max_iterations", 10));
    if (maxIterations < 1)
        return invalidArgument("option max_iterations must be at least 1, got " +
                               std::to_string(maxIterations));
    return std::unique_ptr<HloPass>(new AlgebraicSimplifierPass(maxIterations));
}

StatusOr<bool> AlgebraicSimplifierPass::run(HloModule& module) {
    using namespace simplifier;
    if (m_maxIterations < 1)
        return invalidArgument("max_iterations must be at least 1, got " +
                               std::to_string(m_maxIterations));
    bool changed = false;
    for (int64_t iteration = 0; iteration < m_maxIterations; ++iteration) {
        bool changedThisSweep = false;
        std::vector<HloComputation*> computations;
        for (const auto& computation : module.computations())
            computations.push_back(computation.get());
        for (HloComputation* computation : computations) {
            Context context(module, *computation);
            for (HloInstruction* instruction : computation->postOrder()) {
                // Replaced earlier in this sweep, or dead before it.
                if (instruction->userCount() == 0 && !instruction->isRoot()) continue;
                if (!rewritable(instruction)) continue;
                RuleResult result = simplifyOne(context, instruction);
                if (!result) continue;
                if (result->replacement == nullptr) {
                    changedThisSweep = true;
                    recordRewrite(std::string(result->rule), instruction, instruction);
                    continue;
                }
                HloInstruction* replacement = result->replacement;
                if (replacement->shape() != instruction->shape()) {
                    // Rules only return existing instructions after
                    // checking; new ones get the instruction's shape. Never
                    // change a shape or layout.
                    continue;
                }
                changedThisSweep = true;
                recordRewrite(std::string(result->rule), instruction, replacement);
                instruction->replaceAllUsesWith(replacement);
                context.lostUses().push_back(instruction);
            }
            HLO_RETURN_IF_ERROR(removeNewlyDead(*computation, std::move(context.lostUses())));
        }
        changed = changed || changedThisSweep;
        if (!changedThisSweep) break;
    }
    return changed;
}

}  // namespace hloscope
