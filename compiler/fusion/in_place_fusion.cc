#include "compiler/fusion/in_place_fusion.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/fusion/fusion_legality.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/literal.h"
#include "core/ir/primitive_type.h"

namespace hloscope::fusion {

namespace {

// What XLA counts as a non-elementwise op here: anything but elementwise ops, bitcasts,
// parameters, constants and fusions.
bool isNonElementwise(const HloInstruction& x) {
    switch (x.opcode()) {
    case HloOpcode::kFusion:
    case HloOpcode::kBitcast:
    case HloOpcode::kParameter:
    case HloOpcode::kConstant: return false;
    default: return !hloOpcodeIsElementwise(x.opcode());
    }
}

// The non-elementwise instructions of `x`: itself, or those of its fused computation.
std::vector<const HloInstruction*> nonElementwiseOf(const HloInstruction& x) {
    std::vector<const HloInstruction*> found;
    if (!isFusionOf(x)) {
        if (isNonElementwise(x)) found.push_back(&x);
        return found;
    }
    for (const auto& inner : x.fusedComputation()->instructions())
        if (isNonElementwise(*inner)) found.push_back(inner.get());
    return found;
}

// The dynamic-update-slices of `x`: itself, or those of its fused computation.
int64_t updatesIn(const HloInstruction& x) {
    if (!isFusionOf(x)) return x.opcode() == HloOpcode::kDynamicUpdateSlice ? 1 : 0;
    int64_t count = 0;
    for (const auto& inner : x.fusedComputation()->instructions())
        count += inner->opcode() == HloOpcode::kDynamicUpdateSlice;
    return count;
}

// The operand of `consumer` that holds the buffer `update` writes in place, or -1 when the
// buffer is computed inside the fusion.
int64_t bufferOperand(const HloInstruction& consumer, const HloInstruction& update) {
    if (&update == &consumer) return 0;
    const HloInstruction* x = update.operand(0);
    while (x->opcode() == HloOpcode::kBitcast) x = x->operand(0);
    return x->opcode() == HloOpcode::kParameter ? x->parameterNumber() : -1;
}

// `x` as seen outside `owner`: a parameter of owner's fused computation is the fusion's operand.
const HloInstruction* outside(const HloInstruction& owner, const HloInstruction* x) {
    if (isFusionOf(owner) && x->opcode() == HloOpcode::kParameter && x->parent() == owner.fusedComputation() &&
        x->parameterNumber() < owner.operandCount())
        return owner.operand(x->parameterNumber());
    return x;
}

// The value of an integer scalar constant.
std::optional<int64_t> constantIndex(const HloInstruction* x) {
    if (x->opcode() != HloOpcode::kConstant || !x->shape().isArray() || x->shape().rank() != 0 ||
        !primitive_util::isInteger(x->shape().elementType()))
        return std::nullopt;
    auto literal = Literal::parseValue(x->literalText(), Shape(x->shape().elementType(), {}));
    if (!literal.isOk()) return std::nullopt;
    return literal->getAsInt64(0);
}

// Whether a value `from` computes reaches anything but `update` through a non-elementwise op
// (bitcasts count here: they may reorder elements).
bool readBesidesUpdate(const HloInstruction* from, const HloInstruction* update,
                       std::unordered_map<const HloInstruction*, bool>& memo) {
    if (auto known = memo.find(from); known != memo.end()) return known->second;
    memo[from] = false;  // a cycle cannot occur; guards re-entry while computing
    bool result = from != update && from->opcode() != HloOpcode::kParameter &&
                  (from->opcode() == HloOpcode::kBitcast || isNonElementwise(*from));
    for (const HloInstruction* user : from->users()) {
        if (result) break;
        result = readBesidesUpdate(user, update, memo);
    }
    memo[from] = result;
    return result;
}

bool sameArrayShape(const Shape& a, const Shape& b) {
    return a.isArray() && b.isArray() && a.elementType() == b.elementType() && a.dimensions() == b.dimensions();
}

// `instruction` when it is an `opcode`, else its fused computation's root when that is one.
const HloInstruction* selfOrFusedRoot(const HloInstruction& instruction, HloOpcode opcode) {
    if (instruction.opcode() == opcode) return &instruction;
    if (!isFusionOf(instruction)) return nullptr;
    const HloInstruction* root = instruction.fusedComputation()->root();
    return root && root->opcode() == opcode ? root : nullptr;
}

}  // namespace

const HloInstruction* inPlaceUpdateOf(const HloInstruction& instruction) {
    return selfOrFusedRoot(instruction, HloOpcode::kDynamicUpdateSlice);
}

std::optional<std::string> inPlaceConflict(const HloInstruction& producer, const HloInstruction& consumer) {
    const HloInstruction* update = inPlaceUpdateOf(consumer);
    if (update == nullptr || update->operandCount() < 2) return std::nullopt;
    const int64_t k = bufferOperand(consumer, *update);
    if (k < 0 || k >= consumer.operandCount()) return std::nullopt;
    const HloInstruction* buffer = consumer.operand(k);
    const std::string p = "%" + producer.name(), c = "%" + consumer.name(), b = "%" + buffer->name();
    for (int64_t i = 0; i < consumer.operandCount(); ++i)
        if (i != k && consumer.operand(i) == buffer)
            return c + " updates " + b + " in place and also reads it through another operand";
    const auto& operands = producer.operands();
    if (buffer != &producer && std::find(operands.begin(), operands.end(), buffer) == operands.end())
        return std::nullopt;
    const std::vector<const HloInstruction*> reads = nonElementwiseOf(producer);
    if (reads.size() > 1)
        return p + " reads " + b + ", which " + c + " updates in place, through more than one non-elementwise op";
    if (reads.empty()) {
        if (!isFusionOf(consumer)) return std::nullopt;
        // Elementwise: safe unless a non-elementwise op of the consumer (other than the update)
        // reads the value the producer gives it.
        const HloComputation* fused = consumer.fusedComputation();
        std::vector<const HloInstruction*> stack;
        for (int64_t i = 0; i < consumer.operandCount() && i < fused->parameterCount(); ++i)
            if (consumer.operand(i) == &producer) stack.push_back(fused->parameter(i));
        std::unordered_set<const HloInstruction*> seen;
        while (!stack.empty()) {
            const HloInstruction* x = stack.back();
            stack.pop_back();
            if (!seen.insert(x).second) continue;
            if (x != update && isNonElementwise(*x))
                return c + " reads " + p + " through %" + x->name() + " and updates " + b + " in place";
            for (const HloInstruction* user : x->users()) stack.push_back(user);
        }
        return std::nullopt;
    }
    if (updatesIn(consumer) > 1) return c + " holds more than one dynamic-update-slice";
    const HloInstruction* read = reads.front();
    const std::string r = "%" + read->name();
    const int64_t rank = update->shape().isArray() ? update->shape().rank() : 0;
    if (read->opcode() == HloOpcode::kSlice) {
        if (!sameArrayShape(read->shape(), update->operand(1)->shape()))
            return r + " is not the shape of the update " + c + " writes into " + b;
        const std::vector<SliceDimension>& slice = read->slice();
        for (int64_t i = 0; i < rank && 2 + i < update->operandCount(); ++i) {
            const auto start = constantIndex(outside(consumer, update->operand(2 + i)));
            const SliceDimension& dim = slice[static_cast<size_t>(i)];
            if (!start || *start != dim.start || dim.stride != 1)
                return r + " reads " + b + " at another offset than " + c + " writes it in place";
        }
    } else if (read->opcode() == HloOpcode::kDynamicSlice) {
        if (!sameArrayShape(read->shape(), update->operand(1)->shape()))
            return r + " is not the shape of the update " + c + " writes into " + b;
        for (int64_t i = 0; i < rank && 1 + i < read->operandCount() && 2 + i < update->operandCount(); ++i) {
            const HloInstruction* from = outside(producer, read->operand(1 + i));
            const HloInstruction* to = outside(consumer, update->operand(2 + i));
            const auto a = constantIndex(from), z = constantIndex(to);
            if (a != z || (!a && from != to))
                return r + " reads " + b + " at start indices that may differ from those " + c + " writes at";
        }
    } else {
        return p + " reads " + b + " through %" + read->name() + " (a " +
               std::string(hloOpcodeString(read->opcode())) + "), and " + c + " updates " + b + " in place";
    }
    if (isFusionOf(consumer)) {
        const HloComputation* fused = consumer.fusedComputation();
        std::unordered_map<const HloInstruction*, bool> memo;
        for (int64_t i = 0; i < consumer.operandCount() && i < fused->parameterCount(); ++i)
            if (consumer.operand(i) == &producer)
                for (const HloInstruction* user : fused->parameter(i)->users())
                    if (readBesidesUpdate(user, update, memo))
                        return c + " passes " + p + "'s slice of " + b +
                               " through a non-elementwise op before the in-place update";
    }
    return std::nullopt;
}

const HloInstruction* scatterOf(const HloInstruction& instruction) {
    return selfOrFusedRoot(instruction, HloOpcode::kScatter);
}

std::optional<std::string> scatterConflict(const HloInstruction& producer, const HloInstruction& consumer) {
    const HloInstruction* scatter = scatterOf(consumer);
    if (scatter == nullptr || scatter->operandCount() < 1) return std::nullopt;
    const HloInstruction* buffer = outside(consumer, scatter->operand(0));
    const std::string p = "%" + producer.name(), c = "%" + consumer.name();
    if (buffer == &producer)
        return p + " is the operand " + c + " scatters into in place: it stays outside the scatter's fusion";
    const auto& operands = producer.operands();
    if (std::find(operands.begin(), operands.end(), buffer) != operands.end())
        return p + " reads %" + buffer->name() + ", the operand " + c + " scatters into in place";
    return std::nullopt;
}

}  // namespace hloscope::fusion
