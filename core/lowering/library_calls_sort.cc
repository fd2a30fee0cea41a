// CUB's radix sort (xla.gpu.ext.cub_sort and its unsized-scratch variant) as
// a stable HLO sort with a comparator of its own.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/lowering/library_calls_internal.h"
#include "core/shape_inference/shape_inference.h"

namespace hloscope::library_calls_internal {

// A stable sort of each row (the last dimension) by its keys, the values
// moved with them. Radix sort orders floats by their bits made monotonic,
// which is the total order except that -0 and +0 are equal keys (CUB
// documents this): the comparator compares the keys with zeros made +0.
StatusOr<H> expandCubSort(Builder& b, HloInstruction& call) {
    const int64_t n = call.operandCount();
    if (n != 1 && n != 2) return invalidAt(call, "sorts keys or (keys, values)");
    const Shape& keys = call.operand(0)->shape();
    if (!keys.isArray() || keys.rank() == 0)
        return invalidAt(call, "needs keys with at least one dimension");
    const PrimitiveType keyType = keys.elementType();
    if (!primitive_util::isFloatingPoint(keyType) && !primitive_util::isInteger(keyType))
        return unimplementedAt(call, "sorts " + std::string(primitive_util::name(keyType)) +
                                         " keys (radix sort takes integers and floats)");
    if (n == 2 && !call.operand(1)->shape().isArray())
        return invalidAt(call, "has values that are not an array");
    if (n == 2 && !sameDimensions(call.operand(1)->shape(), keys))
        return invalidAt(call, "has values " + call.operand(1)->shape().toString(false) +
                                   " that do not match its keys " + keys.toString(false));
    std::optional<Shape> scratch;
    HLO_ASSIGN_OR_RETURN(std::vector<Shape> arrays,
                         resultArrays(call, static_cast<size_t>(n), &scratch));
    for (int64_t i = 0; i < n; ++i)
        if (!arrays[static_cast<size_t>(i)].compatible(call.operand(i)->shape()))
            return invalidAt(call, "returns " + arrays[static_cast<size_t>(i)].toString(false) +
                                       " for its operand " +
                                       call.operand(i)->shape().toString(false));
    HLO_ASSIGN_OR_RETURN(Json config, configOf(call, ""));
    bool descending = false;
    if (const Json* value = config.is_object() ? field(config, "descending") : nullptr) {
        if (!value->is_boolean())
            return invalidAt(call, "backend_config: descending is not a bool");
        descending = value->get<bool>();
    }

    // The comparator: (key0, key1[, value0, value1]) -> key0 < key1 (or >).
    HloModule& module = *call.parent()->parent();
    HloComputation* comparator = module.addComputation(
        std::make_unique<HloComputation>(module.uniqueComputationName(call.name() + ".compare")));
    {
        Builder c(*comparator, call);
        std::vector<H> parameters;
        for (int64_t i = 0; i < 2 * n; ++i) {
            auto parameter = std::make_unique<HloInstruction>(
                HloOpcode::kParameter, module.uniqueInstructionName(call.name() + ".p"),
                Shape::makeScalar(call.operand(i / 2)->shape().elementType()));
            parameter->setParameterNumber(i);
            parameters.push_back(comparator->addInstruction(std::move(parameter)));
        }
        H lhs = parameters[0], rhs = parameters[1];
        ComparisonType type = ComparisonType::kDefault;
        if (primitive_util::isFloatingPoint(keyType)) {
            type = ComparisonType::kTotalOrder;
            auto positiveZero = [&](H x) {
                H zero = c.scalar(keyType, 0);
                H isZero = c.add(HloOpcode::kCompare, Shape::makeScalar(PrimitiveType::PRED),
                                 {x, zero}, "is_zero");
                isZero->mutableExtra().comparisonDirection = ComparisonDirection::kEq;
                return c.select(isZero, zero, x);
            };
            lhs = positiveZero(lhs);
            rhs = positiveZero(rhs);
        }
        H less = c.add(HloOpcode::kCompare, Shape::makeScalar(PrimitiveType::PRED), {lhs, rhs},
                       descending ? "greater" : "less");
        less->mutableExtra().comparisonDirection =
            descending ? ComparisonDirection::kGt : ComparisonDirection::kLt;
        less->mutableExtra().comparisonType = type;
        comparator->setRoot(less);
    }
    // Printed before the computation that sorts with it.
    std::vector<HloComputation*> order;
    for (const auto& computation : module.computations()) {
        if (computation.get() == comparator) continue;
        if (computation.get() == call.parent()) order.push_back(comparator);
        order.push_back(computation.get());
    }
    HLO_RETURN_IF_ERROR(module.reorderComputations(order));

    std::vector<H> operands(call.operands().begin(), call.operands().end());
    Shape sortShape = n == 1 ? arrays[0] : Shape::makeTuple({arrays[0], arrays[1]});
    H sort = b.add(HloOpcode::kSort, sortShape, operands, "sort");
    sort->setDimensions({keys.rank() - 1});
    sort->mutableExtra().isStable = true;
    sort->setCalledComputation("to_apply", comparator);
    std::vector<H> elements;
    if (n == 1) {
        elements.push_back(sort);
    } else {
        for (int64_t i = 0; i < n; ++i) {
            H element = b.add(HloOpcode::kGetTupleElement, arrays[static_cast<size_t>(i)], {sort},
                              "sorted");
            element->setTupleIndex(i);
            elements.push_back(element);
        }
    }
    if (!call.shape().isTuple()) return elements.front();
    if (scratch) elements.push_back(b.zeros(*scratch));
    return b.tuple(elements);
}

}  // namespace hloscope::library_calls_internal
