#include "core/interpreter/native_sort.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <utility>
#include <string>

#include "core/interpreter/ops_internal.h"
#include "core/ir/float_types.h"

namespace hloscope {

namespace {

using evaluator::compareWith;
using evaluator::totalOrderKey;

Status notPlanned(const HloInstruction& sort, const std::string& why) {
    return Status(StatusCode::kUnimplemented, "%" + sort.name() + ": " + why);
}

bool floatKey(PrimitiveType type) {
    return type == PrimitiveType::F32 || type == PrimitiveType::F64 || type == PrimitiveType::F16 ||
           type == PrimitiveType::BF16;
}

// Element i of a key buffer as the interpreter's CompareKeys holds it.
double doubleAt(PrimitiveType type, const uint8_t* data, int64_t i) {
    switch (type) {
    case PrimitiveType::F32: return reinterpret_cast<const float*>(data)[i];
    case PrimitiveType::F64: return reinterpret_cast<const double*>(data)[i];
    case PrimitiveType::F16: return toFloat(reinterpret_cast<const Half*>(data)[i]);
    case PrimitiveType::BF16: return toFloat(reinterpret_cast<const BFloat16*>(data)[i]);
    default: return 0;
    }
}

int64_t intAt(PrimitiveType type, const uint8_t* data, int64_t i) {
    switch (type) {
    case PrimitiveType::S8: return reinterpret_cast<const int8_t*>(data)[i];
    case PrimitiveType::S16: return reinterpret_cast<const int16_t*>(data)[i];
    case PrimitiveType::S32: return reinterpret_cast<const int32_t*>(data)[i];
    case PrimitiveType::S64: return reinterpret_cast<const int64_t*>(data)[i];
    // Unsigned values offset so that signed comparison orders them.
    case PrimitiveType::U8: return static_cast<int64_t>(uint64_t{reinterpret_cast<const uint8_t*>(data)[i]} ^ (uint64_t{1} << 63));
    case PrimitiveType::U16: return static_cast<int64_t>(uint64_t{reinterpret_cast<const uint16_t*>(data)[i]} ^ (uint64_t{1} << 63));
    case PrimitiveType::U32: return static_cast<int64_t>(uint64_t{reinterpret_cast<const uint32_t*>(data)[i]} ^ (uint64_t{1} << 63));
    case PrimitiveType::U64: return static_cast<int64_t>(reinterpret_cast<const uint64_t*>(data)[i] ^ (uint64_t{1} << 63));
    default: return 0;
    }
}

bool sortableKeyType(PrimitiveType type) {
    switch (type) {
    case PrimitiveType::F32: case PrimitiveType::F64: case PrimitiveType::F16: case PrimitiveType::BF16:
    case PrimitiveType::S8: case PrimitiveType::S16: case PrimitiveType::S32: case PrimitiveType::S64:
    case PrimitiveType::U8: case PrimitiveType::U16: case PrimitiveType::U32: case PrimitiveType::U64: return true;
    default: return false;
    }
}

// `node` as a compare of the comparator's parameters 2i and 2i+1 (either order): key i, with
// the element types the comparison type allows (as recognizeCompareComputation).
std::optional<NativeSortKey> compareKey(const HloInstruction* node, const std::vector<PrimitiveType>& types) {
    if (node == nullptr || node->opcode() != HloOpcode::kCompare || node->operandCount() != 2 ||
        !node->shape().isScalar() || node->shape().elementType() != PrimitiveType::PRED)
        return std::nullopt;
    const HloInstruction* a = node->operand(0);
    const HloInstruction* b = node->operand(1);
    if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter) return std::nullopt;
    const int64_t pa = a->parameterNumber(), pb = b->parameterNumber();
    if (pa < 0 || pb < 0 || pa / 2 != pb / 2 || pa == pb || pa / 2 >= static_cast<int64_t>(types.size()))
        return std::nullopt;
    const std::optional<ComparisonDirection> direction = node->comparisonDirection();
    if (!direction) return std::nullopt;
    NativeSortKey key;
    key.operand = pa / 2;
    key.type = types[static_cast<size_t>(key.operand)];
    key.direction = *direction;
    key.swapped = pa % 2 == 1;
    for (const HloInstruction* p : {a, b})
        if (!p->shape().isScalar() || p->shape().elementType() != key.type) return std::nullopt;
    if (!sortableKeyType(key.type) || !evaluator::comparisonTypeFits(*node, key.type, &key.totalOrder))
        return std::nullopt;
    return key;
}

bool isPredicate(const HloInstruction* node, HloOpcode opcode) {
    return node != nullptr && node->opcode() == opcode && node->operandCount() == (opcode == HloOpcode::kSelect ? 3 : 2) &&
           node->shape().isScalar() && node->shape().elementType() == PrimitiveType::PRED;
}

// `node` as a lexicographic chain of compares (the header's two forms), appended to `keys`.
bool compareChain(const HloInstruction* node, const std::vector<PrimitiveType>& types,
                  std::vector<NativeSortKey>& keys) {
    if (keys.size() > 2 * types.size() + 4) return false;
    if (const auto key = compareKey(node, types)) {
        keys.push_back(*key);
        return true;
    }
    if (isPredicate(node, HloOpcode::kSelect)) {
        const auto test = compareKey(node->operand(0), types);
        if (!test || (test->direction != ComparisonDirection::kEq && test->direction != ComparisonDirection::kNe))
            return false;
        const bool eq = test->direction == ComparisonDirection::kEq;
        const HloInstruction* rest = node->operand(eq ? 1 : 2);
        auto key = compareKey(node->operand(eq ? 2 : 1), types);
        if (!key || key->operand != test->operand) return false;
        key->equalTotalOrder = test->totalOrder;
        keys.push_back(*key);
        return compareChain(rest, types, keys);
    }
    if (isPredicate(node, HloOpcode::kOr)) {
        for (int side = 0; side < 2; ++side) {
            auto key = compareKey(node->operand(side), types);
            const HloInstruction* both = node->operand(1 - side);
            if (!key || !isPredicate(both, HloOpcode::kAnd)) continue;
            for (int inner = 0; inner < 2; ++inner) {
                const auto test = compareKey(both->operand(inner), types);
                if (!test || test->direction != ComparisonDirection::kEq || test->operand != key->operand) continue;
                key->equalTotalOrder = test->totalOrder;
                key->orChain = true;
                keys.push_back(*key);
                return compareChain(both->operand(1 - inner), types, keys);
            }
        }
    }
    return false;
}

}  // namespace

StatusOr<NativeSortPlan> planNativeSort(const HloInstruction& sort) {
    if (sort.opcode() != HloOpcode::kSort || sort.operandCount() < 1) return notPlanned(sort, "not a sort");
    const Shape& first = sort.operand(0)->shape();
    const std::vector<int64_t>& dims = first.dimensions();
    const int64_t n = sort.operandCount();
    const Shape& out = sort.shape();
    if (out.isTuple() ? out.tupleCount() != n : n != 1) return notPlanned(sort, "sort result does not match its operands");
    NativeSortPlan plan;
    std::vector<PrimitiveType> types;
    for (int64_t i = 0; i < n; ++i) {
        const Shape& operand = sort.operand(i)->shape();
        const Shape& result = out.isTuple() ? out.tupleShape(i) : out;
        if (!operand.isArray() || !operand.hasDefaultDenseLayout() || !result.isArray() ||
            !result.hasDefaultDenseLayout() || operand.dimensions() != dims || result.dimensions() != dims ||
            result.elementType() != operand.elementType())
            return notPlanned(sort, "a sort of non-default layouts or differing shapes is not compiled by the CPU backend");
        const int64_t bits = primitive_util::bitWidth(operand.elementType());
        if (bits < 8 || bits % 8 != 0) return notPlanned(sort, "a sort of sub-byte elements is not compiled by the CPU backend");
        plan.elementBytes.push_back(bits / 8);
        types.push_back(operand.elementType());
    }
    const HloComputation* comparator = sort.toApply();
    if (comparator == nullptr) return notPlanned(sort, "sort without a comparator");
    if (comparator->parameterCount() != 2 * n || !compareChain(comparator->root(), types, plan.keys)) {
        if (!sortableKeyType(types.front()))
            return notPlanned(sort, "a sort by " + std::string(primitive_util::name(types.front())) +
                                        " keys is not compiled by the CPU backend");
        return notPlanned(sort, "a sort whose comparator is neither one compare of an operand nor a "
                                "lexicographic chain of them is not compiled by the CPU backend");
    }
    const NativeSortKey& key = plan.keys.front();
    plan.keyType = key.type;
    plan.direction = key.direction;
    plan.swapped = key.swapped;
    plan.totalOrder = key.totalOrder;
    const auto rank = static_cast<int64_t>(dims.size());
    if (rank == 0) return notPlanned(sort, "a sort of scalars is not compiled by the CPU backend");
    int64_t dim = rank - 1;
    if (sort.hasDimensions()) {
        if (sort.dimensions().size() != 1) return notPlanned(sort, "sort takes exactly one dimension");
        dim = sort.dimensions(0);
    }
    if (dim < 0 || dim >= rank) return notPlanned(sort, "sort dimension out of range");
    plan.length = dims[static_cast<size_t>(dim)];
    plan.stride = 1;
    for (int64_t d = dim + 1; d < rank; ++d) plan.stride *= dims[static_cast<size_t>(d)];
    plan.innerCount = plan.stride;
    int64_t outer = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= dims[static_cast<size_t>(d)];
    plan.lines = outer * plan.innerCount;
    return plan;
}

namespace {

// compare(b, a) in direction d is compare(a, b) in the mirrored direction.
ComparisonDirection mirrored(ComparisonDirection d) {
    switch (d) {
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    default: return d;
    }
}

// Sorts (key, position) pairs by their keys: the comparator sees the same keys in the same
// places as the interpreter's sort of positions, so std::stable_sort makes the same order.
template <typename K>
void sortPairs(std::vector<std::pair<K, int64_t>>& items, ComparisonDirection d) {
    using Item = std::pair<K, int64_t>;
    switch (d) {
    case ComparisonDirection::kLt:
        std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.first < y.first; });
        return;
    case ComparisonDirection::kGt:
        std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.first > y.first; });
        return;
    default:
        std::stable_sort(items.begin(), items.end(),
                         [d](const Item& x, const Item& y) { return compareWith(d, x.first, y.first); });
        return;
    }
}

template <typename K>
void sortLinesWith(const NativeSortPlan& plan, const std::vector<const uint8_t*>& operands,
                   const std::vector<uint8_t*>& results, int64_t begin, int64_t end, const auto& keyAt) {
    const int64_t length = plan.length, stride = plan.stride;
    const ComparisonDirection d = plan.swapped ? mirrored(plan.direction) : plan.direction;
    std::vector<std::pair<K, int64_t>> items(static_cast<size_t>(length));
    for (int64_t line = begin; line < end; ++line) {
        const int64_t base = (line / plan.innerCount) * length * stride + line % plan.innerCount;
        for (int64_t j = 0; j < length; ++j) items[static_cast<size_t>(j)] = {keyAt(base + j * stride), j};
        sortPairs(items, d);
        for (size_t i = 0; i < operands.size(); ++i) {
            const int64_t bytes = plan.elementBytes[i];
            const uint8_t* from = operands[i];
            uint8_t* to = results[i];
            for (int64_t j = 0; j < length; ++j)
                std::memcpy(to + (base + j * stride) * bytes,
                            from + (base + items[static_cast<size_t>(j)].second * stride) * bytes,
                            static_cast<size_t>(bytes));
        }
    }
}

// The keys of one line, as the interpreter compares them: doubles for FLOAT comparisons of
// floats, total-order keys for TOTALORDER, 64-bit integers otherwise.
struct LineKeys {
    bool useDouble = false;
    std::vector<double> doubles;
    std::vector<int64_t> ints;

    void fill(PrimitiveType type, bool totalOrder, const uint8_t* data, int64_t base, int64_t stride, int64_t length) {
        useDouble = floatKey(type) && !totalOrder;
        if (useDouble) {
            doubles.resize(static_cast<size_t>(length));
            for (int64_t j = 0; j < length; ++j) doubles[static_cast<size_t>(j)] = doubleAt(type, data, base + j * stride);
            return;
        }
        ints.resize(static_cast<size_t>(length));
        for (int64_t j = 0; j < length; ++j)
            ints[static_cast<size_t>(j)] = floatKey(type) ? totalOrderKey(doubleAt(type, data, base + j * stride))
                                                          : intAt(type, data, base + j * stride);
    }
    bool compare(ComparisonDirection d, int64_t x, int64_t y) const {
        const auto a = static_cast<size_t>(x), b = static_cast<size_t>(y);
        return useDouble ? compareWith(d, doubles[a], doubles[b]) : compareWith(d, ints[a], ints[b]);
    }
};

// Lines sorted by a lexicographic comparator: positions ordered by the comparator's
// booleans, evaluated key by key as the computation does.
void sortLinesLexicographic(const NativeSortPlan& plan, const std::vector<const uint8_t*>& operands,
                            const std::vector<uint8_t*>& results, int64_t begin, int64_t end) {
    const int64_t length = plan.length, stride = plan.stride;
    const size_t count = plan.keys.size();
    std::vector<LineKeys> compared(count), equal(count);
    std::vector<int64_t> perm(static_cast<size_t>(length));
    for (int64_t line = begin; line < end; ++line) {
        const int64_t base = (line / plan.innerCount) * length * stride + line % plan.innerCount;
        for (size_t k = 0; k < count; ++k) {
            const NativeSortKey& key = plan.keys[k];
            const uint8_t* data = operands[static_cast<size_t>(key.operand)];
            compared[k].fill(key.type, key.totalOrder, data, base, stride, length);
            if (k + 1 < count) equal[k].fill(key.type, key.equalTotalOrder, data, base, stride, length);
        }
        std::iota(perm.begin(), perm.end(), int64_t{0});
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
            for (size_t k = 0;; ++k) {
                const NativeSortKey& key = plan.keys[k];
                const bool decided = compared[k].compare(key.direction, key.swapped ? y : x, key.swapped ? x : y);
                if (k + 1 == count) return decided;
                const bool same = equal[k].compare(ComparisonDirection::kEq, x, y);
                if (key.orChain) {
                    if (decided) return true;
                    if (!same) return false;
                } else if (!same) {
                    return decided;
                }
            }
        });
        for (size_t i = 0; i < operands.size(); ++i) {
            const int64_t bytes = plan.elementBytes[i];
            for (int64_t j = 0; j < length; ++j)
                std::memcpy(results[i] + (base + j * stride) * bytes,
                            operands[i] + (base + perm[static_cast<size_t>(j)] * stride) * bytes,
                            static_cast<size_t>(bytes));
        }
    }
}

}  // namespace

void sortLines(const NativeSortPlan& plan, const std::vector<const uint8_t*>& operands,
               const std::vector<uint8_t*>& results, int64_t begin, int64_t end) {
    if (plan.keys.size() > 1) {
        sortLinesLexicographic(plan, operands, results, begin, end);
        return;
    }
    const uint8_t* keys = operands[plan.keys.empty() ? 0 : static_cast<size_t>(plan.keys.front().operand)];
    const PrimitiveType type = plan.keyType;
    if (!floatKey(type)) {
        sortLinesWith<int64_t>(plan, operands, results, begin, end,
                               [&](int64_t at) { return intAt(type, keys, at); });
    } else if (plan.totalOrder) {
        sortLinesWith<int64_t>(plan, operands, results, begin, end,
                               [&](int64_t at) { return totalOrderKey(doubleAt(type, keys, at)); });
    } else if (type == PrimitiveType::F32) {
        // f32 keys compare as the doubles they widen to: compare them as floats.
        const auto* values = reinterpret_cast<const float*>(keys);
        sortLinesWith<float>(plan, operands, results, begin, end, [&](int64_t at) { return values[at]; });
    } else {
        sortLinesWith<double>(plan, operands, results, begin, end,
                              [&](int64_t at) { return doubleAt(type, keys, at); });
    }
}

}  // namespace hloscope
