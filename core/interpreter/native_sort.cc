#include "core/interpreter/native_sort.h"

#include <algorithm>
#include <cstring>
#include <numeric>
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

}  // namespace

StatusOr<NativeSortPlan> planNativeSort(const HloInstruction& sort) {
    if (sort.opcode() != HloOpcode::kSort || sort.operandCount() < 1) return notPlanned(sort, "not a sort");
    const Shape& first = sort.operand(0)->shape();
    const std::vector<int64_t>& dims = first.dimensions();
    const int64_t n = sort.operandCount();
    const Shape& out = sort.shape();
    if (out.isTuple() ? out.tupleCount() != n : n != 1) return notPlanned(sort, "sort result does not match its operands");
    NativeSortPlan plan;
    plan.keyType = first.elementType();
    switch (plan.keyType) {
    case PrimitiveType::F32: case PrimitiveType::F64: case PrimitiveType::F16: case PrimitiveType::BF16:
    case PrimitiveType::S8: case PrimitiveType::S16: case PrimitiveType::S32: case PrimitiveType::S64:
    case PrimitiveType::U8: case PrimitiveType::U16: case PrimitiveType::U32: case PrimitiveType::U64: break;
    default:
        return notPlanned(sort, "a sort by " + std::string(primitive_util::name(plan.keyType)) +
                                    " keys is not compiled by the CPU backend");
    }
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
    }
    const HloComputation* comparator = sort.toApply();
    if (comparator == nullptr) return notPlanned(sort, "sort without a comparator");
    const auto compare = evaluator::recognizeCompareComputation(*comparator, 2 * n, 0, 1, plan.keyType);
    if (!compare)
        return notPlanned(sort, "a sort whose comparator is more than one compare of its first operand is not "
                                "compiled by the CPU backend");
    plan.direction = compare->direction;
    plan.swapped = compare->swapped;
    plan.totalOrder = compare->totalOrder;
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

}  // namespace

void sortLines(const NativeSortPlan& plan, const std::vector<const uint8_t*>& operands,
               const std::vector<uint8_t*>& results, int64_t begin, int64_t end) {
    const uint8_t* keys = operands[0];
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
