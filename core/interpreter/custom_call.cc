// Custom calls the evaluator knows: the embedder's handler first, then TopK,
// the StableHLO interpreter's run_parallel, XLA:GPU library calls (through
// their expansion), annotations that pass their operand through and JAX's
// threefry2x32 kernels.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "core/interpreter/interpreter_internal.h"
#include "core/interpreter/multi_device.h"
#include "core/lowering/library_calls.h"

namespace hloscope::evaluator {
namespace {

// a > b in XLA's total order (floats: -NaN < -inf < ... < -0 < +0 < ... < +NaN).
bool totalOrderGreater(const Literal& literal, int64_t a, int64_t b) {
    const PrimitiveType type = literal.elementType();
    if (primitive_util::isFloatingPoint(type)) {
        auto key = [](double v) {
            uint64_t bits = std::bit_cast<uint64_t>(v);
            return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
        };
        return key(literal.getAsDouble(a)) > key(literal.getAsDouble(b));
    }
    if (primitive_util::isUnsignedInteger(type) || type == PrimitiveType::PRED)
        return literal.getAsUint64(a) > literal.getAsUint64(b);
    return literal.getAsInt64(a) > literal.getAsInt64(b);
}

// XLA's TopK custom call: each row's k largest elements (in the comparator's
// order, XLA's total order without one) and their indices.
StatusOr<Literal> evaluateTopKCustomCall(const HloInstruction& instruction, Operands operands,
                                         EvalContext& context) {
    const Shape& shape = instruction.shape();
    if (operands.size() != 1 || !shape.isTuple() || shape.tupleCount() != 2)
        return invalid(instruction, "TopK takes one operand and returns (values, indices)");
    const Literal& input = *operands[0];
    const Shape& valueShape = shape.tupleShape(0);
    if (input.shape().rank() == 0 || valueShape.rank() != input.shape().rank())
        return invalid(instruction, "TopK operand rank");
    const int64_t rank = input.shape().rank();
    const int64_t n = input.shape().dimensions(rank - 1);
    const int64_t k = valueShape.dimensions(rank - 1);
    if (k > n) return invalid(instruction, "TopK k exceeds the row length");
    const int64_t rows = n == 0 ? 0 : input.elementCount() / n;
    const PrimitiveType type = input.elementType();
    const HloComputation* comparator = instruction.toApply();
    const int64_t elementBytes = primitive_util::byteWidth(type);

    Literal values(valueShape);
    Literal indices(shape.tupleShape(1));
    const char* inputBytes = static_cast<const char*>(input.untypedData());
    char* valueBytes = values.elementCount() ? static_cast<char*>(values.untypedData()) : nullptr;
    std::vector<int64_t> order(static_cast<size_t>(n));
    Literal lhs(Shape::makeScalar(type)), rhs(Shape::makeScalar(type));
    Literal lhsIndex(Shape::makeScalar(PrimitiveType::S32)),
        rhsIndex(Shape::makeScalar(PrimitiveType::S32));
    Status failure;
    for (int64_t row = 0; row < rows; ++row) {
        for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
        const char* rowBytes = inputBytes + row * n * elementBytes;
        auto greater = [&](int64_t a, int64_t b) -> bool {
            if (!failure.isOk()) return false;
            if (comparator == nullptr) return totalOrderGreater(input, row * n + a, row * n + b);
            std::memcpy(lhs.untypedData(), rowBytes + a * elementBytes,
                        static_cast<size_t>(elementBytes));
            std::memcpy(rhs.untypedData(), rowBytes + b * elementBytes,
                        static_cast<size_t>(elementBytes));
            std::vector<const Literal*> args = {&lhs, &rhs};
            if (comparator->parameterCount() == 4) {
                lhsIndex.setFromInt64(0, a);
                rhsIndex.setFromInt64(0, b);
                args.push_back(&lhsIndex);
                args.push_back(&rhsIndex);
            }
            auto verdict = context.call(*comparator, args);
            if (!verdict.isOk()) {
                failure = verdict.status();
                return false;
            }
            return verdict->elementCount() == 1 && verdict->getAsInt64(0) != 0;
        };
        std::stable_sort(order.begin(), order.end(), greater);
        HLO_RETURN_IF_ERROR(failure);
        for (int64_t i = 0; i < k; ++i) {
            std::memcpy(valueBytes + (row * k + i) * elementBytes,
                        rowBytes + order[static_cast<size_t>(i)] * elementBytes,
                        static_cast<size_t>(elementBytes));
            indices.setFromInt64(row * k + i, order[static_cast<size_t>(i)]);
        }
    }
    return makePair(std::move(values), std::move(indices));
}

// JAX's threefry kernel: (key0, key1, x0, x1) u32 -> (y0, y1).
StatusOr<Literal> evaluateThreeFryCustomCall(const HloInstruction& instruction,
                                             Operands operands) {
    const Shape& shape = instruction.shape();
    if (operands.size() != 4 || !shape.isTuple() || shape.tupleCount() != 2)
        return invalid(instruction, "threefry2x32 takes 4 operands and returns 2 arrays");
    Literal y0(shape.tupleShape(0)), y1(shape.tupleShape(1));
    const int64_t n = y0.elementCount();
    for (const Literal* operand : operands)
        if (operand->elementType() != PrimitiveType::U32 ||
            (operand->elementCount() != n && operand->elementCount() != 1))
            return invalid(instruction, "threefry2x32 operands must be u32 of the result size");
    if (n > 0) {
        auto o0 = y0.data<uint32_t>();
        auto o1 = y1.data<uint32_t>();
        auto at = [](const Literal* l, int64_t i) {
            auto d = l->data<uint32_t>();
            return d.size() == 1 ? d[0] : d[static_cast<size_t>(i)];
        };
        for (int64_t i = 0; i < n; ++i) {
            auto out = threeFry2x32({at(operands[0], i), at(operands[1], i)},
                                    {at(operands[2], i), at(operands[3], i)});
            o0[static_cast<size_t>(i)] = out[0];
            o1[static_cast<size_t>(i)] = out[1];
        }
    }
    return makePair(std::move(y0), std::move(y1));
}

}  // namespace

StatusOr<Literal> evaluateCustomCall(const HloInstruction& instruction, Operands operands,
                                     EvalContext& context) {
    const HloEvaluatorOptions& options = context.options();
    if (options.customCallHandler) {
        if (auto handled = options.customCallHandler(instruction, operands))
            return std::move(*handled);
    }
    const std::string_view target = instruction.customCallTarget();
    if (target == "TopK") return evaluateTopKCustomCall(instruction, operands, context);
    if (target == "interpreter.run_parallel")
        return evaluateRunParallel(instruction, operands, options);
    if (isLibraryCallTarget(target)) return evaluateLibraryCall(instruction, operands, options);
    if (isAnnotationTarget(target)) {
        if (operands.size() == 1 && sameArrayShape(operands[0]->shape(), instruction.shape()))
            return *operands[0];
        return unsupported(instruction,
                           "custom-call " + std::string(target) + " that changes the shape");
    }
    if (target == "cu_threefry2x32" || target == "cu_threefry2x32_ffi" ||
        target == "hip_threefry2x32" || target == "hip_threefry2x32_ffi")
        return evaluateThreeFryCustomCall(instruction, operands);
    return unsupported(instruction,
                       "custom-call target \"" + std::string(target) + "\" is not supported");
}

}  // namespace hloscope::evaluator
