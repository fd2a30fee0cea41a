// Shape inference: the opcode dispatcher and the elementwise and
// data-movement families. Helpers are in shape_inference_util.cc; control
// flow and tokens in shape_inference_control.cc; dot, convolution,
// reductions and linear algebra in shape_inference_ops.cc; gather/scatter in
// shape_inference_gather.cc; collectives in shape_inference_collectives.cc.
#include "core/shape_inference/shape_inference.h"

#include <algorithm>
#include <set>

#include "core/ir/hlo_computation.h"
#include "core/shape_inference/shape_inference_internal.h"

namespace hloscope {
namespace {

using namespace shape_inference_internal;

// ---------------------------------------------------------------------------
// Elementwise.

StatusOr<Shape> inferUnary(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& shape = instruction.operand(0)->shape();
    HloOpcode opcode = instruction.opcode();
    if (opcode == HloOpcode::kCopy || opcode == HloOpcode::kDomain) return shape;
    HLO_RETURN_IF_ERROR(expectArray(instruction, shape, "operand of unary operation"));
    PrimitiveType type = shape.elementType();
    auto typeError = [&](std::string_view expected) {
        return fail(instruction, "expected element type in shape to be " + std::string(expected) +
                                     " for " + opName(instruction) + " operation; got " +
                                     typeName(type));
    };
    switch (opcode) {
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
        if (!isFloat(type)) return typeError("floating");
        return shape;
    case HloOpcode::kCos:
    case HloOpcode::kSin:
    case HloOpcode::kTan:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSqrt:
    case HloOpcode::kCbrt:
    case HloOpcode::kTanh:
    case HloOpcode::kErf:
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtan:
    case HloOpcode::kAtanh:
    case HloOpcode::kCosh:
    case HloOpcode::kSinh:
        if (!isFloat(type) && !primitive_util::isComplex(type))
            return typeError("floating or complex");
        return shape;
    case HloOpcode::kReal:
    case HloOpcode::kImag:
        if (primitive_util::isComplex(type)) {
            Shape result = shape;
            result.setElementType(primitive_util::complexComponentType(type));
            return result;
        }
        if (isFloat(type)) return shape;
        return typeError("floating or complex");
    case HloOpcode::kAbs:
        if (primitive_util::isComplex(type)) {
            Shape result = shape;
            result.setElementType(primitive_util::complexComponentType(type));
            return result;
        }
        if (isSignedOrFloat(type)) return shape;
        return typeError("signed, floating or complex");
    case HloOpcode::kClz:
    case HloOpcode::kPopulationCount:
        if (!isIntegral(type)) return typeError("integral");
        return shape;
    case HloOpcode::kNegate:
        if (!isIntegral(type) && !isFloat(type) && !primitive_util::isComplex(type))
            return typeError("integral, floating or complex");
        return shape;
    case HloOpcode::kSign:
        if (!isSignedOrFloat(type) && !primitive_util::isComplex(type))
            return typeError("signed or complex");
        return shape;
    case HloOpcode::kNot:
        if (type != PrimitiveType::PRED && !isIntegral(type))
            return typeError("pred or integral");
        return shape;
    case HloOpcode::kIsFinite: {
        if (!isFloat(type)) return typeError("floating point");
        Shape result = shape;
        result.setElementType(PrimitiveType::PRED);
        return result;
    }
    default: break;
    }
    return fail(instruction, "unknown operation for unary shape inference");
}

// Combines two same-rank array shapes, allowing degenerate (size-1) and
// unbounded dimensions to broadcast, as XLA's shape inference does.
StatusOr<Shape> combineElementwise(const HloInstruction& instruction, const Shape& lhs,
                                   const Shape& rhs, PrimitiveType resultType) {
    if (lhs.rank() != rhs.rank()) {
        return fail(instruction, "binary op " + opName(instruction) +
                                     " with different ranks: " + str(lhs) + " and " + str(rhs));
    }
    std::vector<int64_t> dims(static_cast<size_t>(lhs.rank()));
    std::vector<bool> dynamic(static_cast<size_t>(lhs.rank()));
    for (int64_t i = 0; i < lhs.rank(); ++i) {
        int64_t a = lhs.dimensions(i);
        int64_t b = rhs.dimensions(i);
        bool dynA = lhs.isDynamicDimension(i);
        bool dynB = rhs.isDynamicDimension(i);
        size_t k = static_cast<size_t>(i);
        if (a == b) {
            dims[k] = a;
            dynamic[k] = dynA || dynB;
        } else if (a == Shape::kUnboundedSize) {
            dims[k] = b;
            dynamic[k] = dynB;
        } else if (b == Shape::kUnboundedSize) {
            dims[k] = a;
            dynamic[k] = dynA;
        } else if (a == 1 && !dynA) {
            dims[k] = b;
            dynamic[k] = dynB;
        } else if (b == 1 && !dynB) {
            dims[k] = a;
            dynamic[k] = dynA;
        } else if (dynA || dynB) {
            // Bounded dynamic dimensions of different bounds: the smaller
            // bound wins (XLA's most specific dimension).
            dims[k] = std::min(a, b);
            dynamic[k] = dynA && dynB ? true : (a < b ? dynA : dynB);
        } else {
            return fail(instruction, "binary op " + opName(instruction) +
                                         " with incompatible shapes: " + str(lhs) + " and " +
                                         str(rhs));
        }
    }
    return makeArray(resultType, std::move(dims), dynamic);
}

StatusOr<Shape> inferBinary(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& lhs = instruction.operand(0)->shape();
    const Shape& rhs = instruction.operand(1)->shape();
    HloOpcode opcode = instruction.opcode();
    HLO_RETURN_IF_ERROR(expectArray(instruction, lhs, "lhs of binary operation " + opName(instruction)));
    HLO_RETURN_IF_ERROR(expectArray(instruction, rhs, "rhs of binary operation " + opName(instruction)));
    PrimitiveType lt = lhs.elementType();
    PrimitiveType rt = rhs.elementType();
    if (!sameElementTypeIgnoringFp(lt, rt)) {
        return fail(instruction, "binary op " + opName(instruction) +
                                     " with different element types: " + str(lhs) + " and " +
                                     str(rhs));
    }
    PrimitiveType resultType = higherPrecision(lt, rt);
    switch (opcode) {
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
        if (lt != PrimitiveType::PRED && !isIntegral(lt)) {
            return fail(instruction, "expected pred or integral type in argument to " +
                                         opName(instruction) + " operation; got " + typeName(lt));
        }
        break;
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
        if (!isIntegral(lt)) {
            return fail(instruction, "expected integral type in argument to " +
                                         opName(instruction) + " operation; got " + typeName(lt));
        }
        break;
    case HloOpcode::kAtan2:
        if (!isFloat(lt) && !primitive_util::isComplex(lt)) {
            return fail(instruction, "expected floating or complex type in argument to atan2; got " +
                                         typeName(lt));
        }
        break;
    case HloOpcode::kComplex:
        if (lt != PrimitiveType::F32 && lt != PrimitiveType::F64) {
            return fail(instruction,
                        "expected f32 or f64 arguments to complex operation; got " + typeName(lt));
        }
        if (lt != rt) {
            return fail(instruction, "complex operation with different element types: " +
                                         typeName(lt) + " and " + typeName(rt));
        }
        resultType = lt == PrimitiveType::F32 ? PrimitiveType::C64 : PrimitiveType::C128;
        break;
    case HloOpcode::kCompare: resultType = PrimitiveType::PRED; break;
    default: break;
    }
    return combineElementwise(instruction, lhs, rhs, resultType);
}

StatusOr<Shape> inferConvert(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of convert"));
    if (!declared.isArray()) {
        return fail(instruction, "convert result must be an array, got " + str(declared));
    }
    PrimitiveType from = operand.elementType();
    PrimitiveType to = declared.elementType();
    if (primitive_util::isComplex(from) && !primitive_util::isComplex(to)) {
        return fail(instruction, "conversion from complex to real type " + typeName(from) +
                                     " => " + typeName(to) + " is not implemented");
    }
    Shape result = operand;
    result.setElementType(to);
    result.clearLayout();
    return result;
}

StatusOr<Shape> inferBitcastConvert(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of bitcast-convert"));
    if (!declared.isArray()) {
        return fail(instruction, "bitcast-convert result must be an array, got " + str(declared));
    }
    PrimitiveType from = operand.elementType();
    PrimitiveType to = declared.elementType();
    if (primitive_util::isComplex(from) != primitive_util::isComplex(to)) {
        return fail(instruction, "conversion between complex and real type " + typeName(from) +
                                     " => " + typeName(to) + " is not supported");
    }
    int fromBits = primitive_util::bitWidth(from);
    int toBits = primitive_util::bitWidth(to);
    Shape result = operand;
    result.clearLayout();
    result.setElementType(to);
    if (fromBits == toBits) return result;
    if (fromBits > toBits) {
        if (toBits == 0 || fromBits % toBits != 0) {
            return fail(instruction, "cannot bitcast-convert " + typeName(from) + " to " +
                                         typeName(to) + ": bit widths do not divide");
        }
        std::vector<int64_t> dims = operand.dimensions();
        std::vector<bool> dynamic;
        for (int64_t i = 0; i < operand.rank(); ++i) dynamic.push_back(operand.isDynamicDimension(i));
        dims.push_back(fromBits / toBits);
        return makeArray(to, std::move(dims), dynamic);
    }
    if (fromBits == 0 || toBits % fromBits != 0) {
        return fail(instruction, "cannot bitcast-convert " + typeName(from) + " to " +
                                     typeName(to) + ": bit widths do not divide");
    }
    int64_t ratio = toBits / fromBits;
    if (operand.rank() == 0 || operand.dimensions(operand.rank() - 1) != ratio) {
        return fail(instruction, "bitcast-convert from " + typeName(from) + " to " + typeName(to) +
                                     " requires the operand's last dimension to be " +
                                     std::to_string(ratio) + ", got " + str(operand));
    }
    std::vector<int64_t> dims(operand.dimensions().begin(), operand.dimensions().end() - 1);
    std::vector<bool> dynamic;
    for (int64_t i = 0; i + 1 < operand.rank(); ++i) dynamic.push_back(operand.isDynamicDimension(i));
    return makeArray(to, std::move(dims), dynamic);
}

StatusOr<Shape> inferStochasticConvert(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& random = instruction.operand(1)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of stochastic-convert"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, random, "random operand of stochastic-convert"));
    if (!declared.isArray()) {
        return fail(instruction, "stochastic-convert result must be an array");
    }
    if (!isFloat(operand.elementType())) {
        return fail(instruction, "stochastic-convert operand must be floating point, got " +
                                     typeName(operand.elementType()));
    }
    if (!primitive_util::isUnsignedInteger(random.elementType()) ||
        primitive_util::bitWidth(random.elementType()) !=
            primitive_util::bitWidth(operand.elementType())) {
        return fail(instruction,
                    "stochastic-convert random operand must be an unsigned integer of the same bit "
                    "width as the operand, got " +
                        str(random) + " for " + str(operand));
    }
    if (!sameDims(operand, random)) {
        return fail(instruction, "stochastic-convert random operand " + str(random) +
                                     " must have the operand's dimensions " + str(operand));
    }
    Shape result = operand;
    result.clearLayout();
    result.setElementType(declared.elementType());
    return result;
}

StatusOr<Shape> inferReducePrecision(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of reduce-precision"));
    if (!isFloat(operand.elementType())) {
        return fail(instruction, "reduce-precision requires a floating-point operand, got " +
                                     typeName(operand.elementType()));
    }
    const HloExtraAttributes* extra = instruction.extra();
    if (!extra || !extra->exponentBits || !extra->mantissaBits) {
        return fail(instruction, "reduce-precision requires exponent_bits and mantissa_bits");
    }
    if (*extra->exponentBits < 1) {
        return fail(instruction, "reduce-precision exponent_bits must be at least 1, got " +
                                     std::to_string(*extra->exponentBits));
    }
    if (*extra->mantissaBits < 0) {
        return fail(instruction, "reduce-precision mantissa_bits must be non-negative, got " +
                                     std::to_string(*extra->mantissaBits));
    }
    return operand;
}

StatusOr<Shape> inferSelect(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 3));
    const Shape& pred = instruction.operand(0)->shape();
    const Shape& onTrue = instruction.operand(1)->shape();
    const Shape& onFalse = instruction.operand(2)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, pred, "select pred"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, onTrue, "select"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, onFalse, "select"));
    if (!compatibleIgnoringFp(onTrue, onFalse)) {
        return fail(instruction, "operands to select must be the same shape; got " + str(onTrue) +
                                     " and " + str(onFalse));
    }
    if (pred.elementType() != PrimitiveType::PRED) {
        return fail(instruction, "select's pred operand must have PRED element type; got " +
                                     str(pred));
    }
    if (pred.rank() != 0 && !sameDims(pred, onTrue)) {
        return fail(instruction,
                    "operands to select and predicate must be the same shape (or the predicate a "
                    "scalar); got " +
                        str(pred) + " and " + str(onTrue));
    }
    PrimitiveType type = higherPrecision(onTrue.elementType(), onFalse.elementType());
    HLO_ASSIGN_OR_RETURN(Shape result, combineElementwise(instruction, onTrue, onFalse, type));
    if (pred.rank() != 0) {
        for (int64_t i = 0; i < pred.rank(); ++i)
            if (pred.isDynamicDimension(i)) result.setDynamicDimension(i, true);
    }
    return result;
}

StatusOr<Shape> inferClamp(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 3));
    const Shape& min = instruction.operand(0)->shape();
    const Shape& operand = instruction.operand(1)->shape();
    const Shape& max = instruction.operand(2)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, min, "clamp min"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "clamp operand"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, max, "clamp max"));
    if (!sameElementTypeIgnoringFp(min.elementType(), operand.elementType()) ||
        !sameElementTypeIgnoringFp(max.elementType(), operand.elementType())) {
        return fail(instruction, "clamp with incompatible element types: " + str(min) + ", " +
                                     str(operand) + ", " + str(max));
    }
    for (const Shape* bound : {&min, &max}) {
        if (bound->rank() != 0 && !sameDims(*bound, operand)) {
            return fail(instruction,
                        "clamp with incompatible shapes: " + str(min) + ", " + str(operand) +
                            ", " + str(max) + " (min and max must be scalars or the operand's shape)");
        }
    }
    return operand;
}

// ---------------------------------------------------------------------------
// Shape-changing data movement.

StatusOr<Shape> inferBroadcast(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of broadcast"));
    if (!declared.isArray()) return fail(instruction, "broadcast result must be an array");
    const std::vector<int64_t>& dims = instruction.dimensions();
    if (static_cast<int64_t>(dims.size()) != operand.rank()) {
        return fail(instruction, "broadcast has " + std::to_string(dims.size()) +
                                     " dimensions but its operand " + str(operand) + " has rank " +
                                     std::to_string(operand.rank()));
    }
    Shape result = makeArray(operand.elementType(), declared.dimensions());
    for (int64_t i = 0; i < declared.rank(); ++i)
        if (declared.isDynamicDimension(i)) result.setDynamicDimension(i, true);
    for (size_t i = 0; i < dims.size(); ++i) {
        int64_t out = dims[i];
        if (out < 0 || out >= declared.rank()) {
            return fail(instruction, "broadcast dimension " + std::to_string(out) +
                                         " is out of bounds for result rank " +
                                         std::to_string(declared.rank()));
        }
        for (size_t j = 0; j < i; ++j) {
            if (dims[j] == out) {
                return fail(instruction, "broadcast dimension " + std::to_string(out) +
                                             " is used twice in " + str(dims));
            }
        }
        int64_t operandSize = operand.dimensions(static_cast<int64_t>(i));
        if (!dimEqual(operandSize, declared.dimensions(out))) {
            return fail(instruction, "broadcast operand dimension " + std::to_string(i) +
                                         " (size " + std::to_string(operandSize) +
                                         ") does not match result dimension " +
                                         std::to_string(out) + " (size " +
                                         std::to_string(declared.dimensions(out)) + ")");
        }
        result.setDynamicDimension(out, operand.isDynamicDimension(static_cast<int64_t>(i)) ||
                                            declared.isDynamicDimension(out));
    }
    return result;
}

bool hasUnbounded(const Shape& shape) {
    for (int64_t d : shape.dimensions())
        if (d == Shape::kUnboundedSize) return true;
    return false;
}

StatusOr<Shape> inferReshape(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of reshape"));
    if (!declared.isArray()) return fail(instruction, "reshape result must be an array");
    if (!hasUnbounded(operand) && !hasUnbounded(declared) &&
        operand.elementCount() != declared.elementCount()) {
        return fail(instruction, "reshape from " + str(operand) + " to " + str(declared) +
                                     " changes the element count (" +
                                     std::to_string(operand.elementCount()) + " vs " +
                                     std::to_string(declared.elementCount()) + ")");
    }
    Shape result = makeArray(operand.elementType(), declared.dimensions());
    // Dynamism of a reshape depends on how dimensions group; XLA's dynamic
    // dimension inference decides it. Keep the declared dynamism, but a
    // fully static operand cannot produce a dynamic result.
    if (operand.isDynamic()) {
        for (int64_t i = 0; i < declared.rank(); ++i)
            if (declared.isDynamicDimension(i)) result.setDynamicDimension(i, true);
    }
    return result;
}

StatusOr<Shape> inferDynamicReshape(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectAtLeastOperands(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of dynamic-reshape"));
    if (!declared.isArray()) return fail(instruction, "dynamic-reshape result must be an array");
    if (instruction.operandCount() != declared.rank() + 1) {
        return fail(instruction, "dynamic-reshape to rank " + std::to_string(declared.rank()) +
                                     " expects " + std::to_string(declared.rank()) +
                                     " dimension size operands, found " +
                                     std::to_string(instruction.operandCount() - 1));
    }
    for (int64_t i = 1; i < instruction.operandCount(); ++i) {
        const Shape& size = instruction.operand(i)->shape();
        if (!size.isArray() || size.rank() != 0 || !isIntegral(size.elementType())) {
            return fail(instruction, "dynamic-reshape size operand " + std::to_string(i) +
                                         " must be an integer scalar, got " + str(size));
        }
    }
    Shape result = declared;
    result.clearLayout();
    result.setElementType(operand.elementType());
    return result;
}

StatusOr<Shape> inferTranspose(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "transpose"));
    const std::vector<int64_t>& perm = instruction.dimensions();
    bool isPermutation = static_cast<int64_t>(perm.size()) == operand.rank();
    std::vector<bool> seen(perm.size());
    for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)]) {
            isPermutation = false;
            break;
        }
        seen[static_cast<size_t>(p)] = true;
    }
    if (!isPermutation) {
        return fail(instruction, "transpose dimensions " + str(perm) +
                                     " are not a permutation of the operand dimensions (operand "
                                     "shape is " +
                                     str(operand) + ")");
    }
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    for (int64_t p : perm) {
        dims.push_back(operand.dimensions(p));
        dynamic.push_back(operand.isDynamicDimension(p));
    }
    return makeArray(operand.elementType(), std::move(dims), dynamic);
}

StatusOr<Shape> inferSlice(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of slice"));
    const std::vector<SliceDimension>& slice = instruction.slice();
    if (static_cast<int64_t>(slice.size()) != operand.rank()) {
        return fail(instruction, "slice index count (" + std::to_string(slice.size()) +
                                     ") does not match the operand rank of " + str(operand));
    }
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < operand.rank(); ++i) {
        const SliceDimension& s = slice[static_cast<size_t>(i)];
        int64_t size = operand.dimensions(i);
        if (s.start < 0) {
            return fail(instruction, "negative start index to slice: " + std::to_string(s.start));
        }
        if (size != Shape::kUnboundedSize && s.limit > size) {
            return fail(instruction, "slice limit index " + std::to_string(s.limit) +
                                         " of dimension " + std::to_string(i) +
                                         " exceeds the dimension size " + std::to_string(size) +
                                         " of operand " + str(operand));
        }
        if (s.start > s.limit) {
            return fail(instruction, "slice start index " + std::to_string(s.start) +
                                         " is greater than the limit index " +
                                         std::to_string(s.limit) + " in dimension " +
                                         std::to_string(i));
        }
        if (s.stride <= 0) {
            return fail(instruction, "slice stride must be positive, got " +
                                         std::to_string(s.stride));
        }
        dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
        bool fullDim = s.start == 0 && s.limit == size && s.stride == 1;
        dynamic.push_back(operand.isDynamicDimension(i) && fullDim);
    }
    return makeArray(operand.elementType(), std::move(dims), dynamic);
}

Status checkStartIndices(const HloInstruction& instruction, int64_t firstIndex, int64_t rank,
                         std::string_view what) {
    int64_t count = instruction.operandCount() - firstIndex;
    const Shape* single = count == 1 ? &instruction.operand(firstIndex)->shape() : nullptr;
    if (single && single->isArray() && (rank != 1 || single->rank() == 1)) {
        // Legacy form: one rank-1 index vector.
        const Shape& indices = *single;
        if (indices.rank() != 1 || !isIntegral(indices.elementType())) {
            return fail(instruction, std::string(what) +
                                         " start indices must be a rank-1 integer array or one "
                                         "integer scalar per dimension, got " +
                                         str(indices));
        }
        if (indices.dimensions(0) != rank) {
            return fail(instruction, std::string(what) + " start indices " + str(indices) +
                                         " do not match the operand rank " + std::to_string(rank));
        }
        return Status::ok();
    }
    if (count != rank) {
        return fail(instruction, std::string(what) + " expects " + std::to_string(rank) +
                                     " start index operands (one per operand dimension), found " +
                                     std::to_string(count));
    }
    PrimitiveType first = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    for (int64_t i = firstIndex; i < instruction.operandCount(); ++i) {
        const Shape& index = instruction.operand(i)->shape();
        if (!index.isArray() || index.rank() != 0 || !isIntegral(index.elementType())) {
            return fail(instruction, std::string(what) + " start index operand " +
                                         std::to_string(i) + " must be an integer scalar, got " +
                                         str(index));
        }
        if (first == PrimitiveType::PRIMITIVE_TYPE_INVALID) {
            first = index.elementType();
        } else if (index.elementType() != first) {
            return fail(instruction, std::string(what) +
                                         " start indices must all have the same type, got " +
                                         typeName(first) + " and " + typeName(index.elementType()));
        }
    }
    return Status::ok();
}

StatusOr<Shape> inferDynamicSlice(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectAtLeastOperands(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of dynamic slice"));
    HLO_RETURN_IF_ERROR(checkStartIndices(instruction, 1, operand.rank(), "dynamic-slice"));
    const std::vector<int64_t>& sizes = instruction.dynamicSliceSizes();
    if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
        return fail(instruction, "dynamic_slice_sizes " + str(sizes) +
                                     " does not match the rank of operand " + str(operand));
    }
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < operand.rank(); ++i) {
        int64_t size = sizes[static_cast<size_t>(i)];
        int64_t bound = operand.dimensions(i);
        if (size < 0) {
            return fail(instruction, "negative size index to dynamic slice: " + std::to_string(size));
        }
        if (bound != Shape::kUnboundedSize && size > bound) {
            return fail(instruction, "dynamic slice size " + std::to_string(size) +
                                         " in dimension " + std::to_string(i) +
                                         " exceeds the operand dimension " + std::to_string(bound));
        }
        dynamic.push_back(operand.isDynamicDimension(i) && size == bound);
    }
    return makeArray(operand.elementType(), sizes, dynamic);
}

StatusOr<Shape> inferDynamicUpdateSlice(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectAtLeastOperands(instruction, 2));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& update = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of dynamic update slice"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, update, "update of dynamic update slice"));
    HLO_RETURN_IF_ERROR(checkStartIndices(instruction, 2, operand.rank(), "dynamic-update-slice"));
    if (update.rank() != operand.rank()) {
        return fail(instruction, "dynamic-update-slice update rank " + std::to_string(update.rank()) +
                                     " does not match the operand rank " +
                                     std::to_string(operand.rank()));
    }
    if (!sameElementTypeIgnoringFp(operand.elementType(), update.elementType())) {
        return fail(instruction, "dynamic-update-slice update element type " +
                                     typeName(update.elementType()) +
                                     " does not match the operand element type " +
                                     typeName(operand.elementType()));
    }
    for (int64_t i = 0; i < operand.rank(); ++i) {
        int64_t u = update.dimensions(i);
        int64_t o = operand.dimensions(i);
        if (u < 0 && u != Shape::kUnboundedSize) {
            return fail(instruction, "negative update size in dimension " + std::to_string(i));
        }
        if (o != Shape::kUnboundedSize && u != Shape::kUnboundedSize && u > o) {
            return fail(instruction, "dynamic-update-slice update dimension " + std::to_string(i) +
                                         " (size " + std::to_string(u) +
                                         ") exceeds the operand dimension (size " +
                                         std::to_string(o) + ")");
        }
    }
    return operand;
}

StatusOr<Shape> inferConcatenate(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectAtLeastOperands(instruction, 1));
    if (instruction.dimensions().size() != 1) {
        return fail(instruction, "concatenate expects exactly one dimension in dimensions=, got " +
                                     str(instruction.dimensions()));
    }
    int64_t dimension = instruction.dimensions(0);
    const Shape& first = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, first, "operand of concatenation"));
    if (dimension < 0 || dimension >= first.rank()) {
        return fail(instruction, "concatenate dimension out of bounds: " + std::to_string(dimension));
    }
    std::vector<int64_t> dims = first.dimensions();
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < first.rank(); ++i) dynamic.push_back(first.isDynamicDimension(i));
    PrimitiveType type = first.elementType();
    for (int64_t k = 1; k < instruction.operandCount(); ++k) {
        const Shape& shape = instruction.operand(k)->shape();
        HLO_RETURN_IF_ERROR(expectArray(instruction, shape, "operand of concatenation"));
        if (shape.rank() != first.rank()) {
            return fail(instruction, "cannot concatenate arrays with different ranks: " +
                                         str(first) + " vs " + str(shape));
        }
        if (!sameElementTypeIgnoringFp(first.elementType(), shape.elementType())) {
            return fail(instruction, "cannot concatenate arrays with different element types: " +
                                         typeName(first.elementType()) + " vs " +
                                         typeName(shape.elementType()));
        }
        type = higherPrecision(type, shape.elementType());
        for (int64_t i = 0; i < first.rank(); ++i) {
            size_t u = static_cast<size_t>(i);
            if (i == dimension) {
                if (dims[u] == Shape::kUnboundedSize || shape.dimensions(i) == Shape::kUnboundedSize)
                    dims[u] = Shape::kUnboundedSize;
                else
                    dims[u] += shape.dimensions(i);
                dynamic[u] = dynamic[u] || shape.isDynamicDimension(i);
                continue;
            }
            if (!dimEqual(first.dimensions(i), shape.dimensions(i))) {
                return fail(instruction,
                            "cannot concatenate arrays that differ in dimensions other than the "
                            "one being concatenated; dimension " +
                                std::to_string(i) + " in both shapes must be equal: " + str(first) +
                                " vs " + str(shape));
            }
            dynamic[u] = dynamic[u] || shape.isDynamicDimension(i);
        }
    }
    return makeArray(type, std::move(dims), dynamic);
}

StatusOr<Shape> inferPad(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& value = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of pad"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, value, "padding value of pad"));
    if (value.rank() != 0) {
        return fail(instruction, "pad requires a scalar padding value, got " + str(value));
    }
    if (!sameElementTypeIgnoringFp(operand.elementType(), value.elementType())) {
        return fail(instruction, "the element types of the operands to pad do not match: " +
                                     str(operand) + " and " + str(value));
    }
    const std::vector<PaddingDimension>& padding = instruction.padding();
    if (static_cast<int64_t>(padding.size()) != operand.rank()) {
        return fail(instruction, "the rank of the operand " + str(operand) +
                                     " and the padding configuration (" +
                                     std::to_string(padding.size()) + " dimensions) do not match");
    }
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < operand.rank(); ++i) {
        const PaddingDimension& p = padding[static_cast<size_t>(i)];
        if (p.interior < 0) {
            return fail(instruction, "interior padding cannot be negative: " +
                                         std::to_string(p.interior));
        }
        int64_t size = operand.dimensions(i);
        if (size == Shape::kUnboundedSize) {
            dims.push_back(Shape::kUnboundedSize);
            dynamic.push_back(false);
            continue;
        }
        int64_t out = p.edgeLow + p.edgeHigh + size + std::max<int64_t>(size - 1, 0) * p.interior;
        if (out < 0) {
            return fail(instruction, "padding results in a negative size for dimension " +
                                         std::to_string(i));
        }
        dims.push_back(out);
        dynamic.push_back(operand.isDynamicDimension(i));
    }
    return makeArray(higherPrecision(operand.elementType(), value.elementType()), std::move(dims),
                     dynamic);
}

StatusOr<Shape> inferReverse(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of reverse"));
    std::set<int64_t> seen;
    for (int64_t d : instruction.dimensions()) {
        if (d < 0 || d >= operand.rank()) {
            return fail(instruction, "one of the reverse dimensions (" + std::to_string(d) +
                                         ") is out of range for operand " + str(operand));
        }
        if (!seen.insert(d).second) {
            return fail(instruction, "reverse dimensions are not unique: " +
                                         str(instruction.dimensions()));
        }
    }
    return operand;
}

StatusOr<Shape> inferIota(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 0));
    const Shape& declared = instruction.shape();
    if (!declared.isArray()) return fail(instruction, "iota result must be an array");
    if (declared.rank() == 0) return fail(instruction, "iota does not support scalars");
    int64_t d = instruction.iotaDimension();
    if (d < 0) {
        return fail(instruction, "iota dimension cannot be negative, got " + std::to_string(d));
    }
    if (d >= declared.rank()) {
        return fail(instruction, "iota dimension " + std::to_string(d) +
                                     " is out of range for rank " + std::to_string(declared.rank()));
    }
    Shape result = declared;
    result.clearLayout();
    return result;
}

}  // namespace

StatusOr<Shape> inferShape(const HloInstruction& instruction) {
    HloOpcode opcode = instruction.opcode();
    if (hloOpcodeIsElementwiseUnary(opcode)) {
        switch (opcode) {
        case HloOpcode::kConvert: return inferConvert(instruction);
        case HloOpcode::kBitcastConvert: return inferBitcastConvert(instruction);
        case HloOpcode::kReducePrecision: return inferReducePrecision(instruction);
        default: return inferUnary(instruction);
        }
    }
    if (opcode == HloOpcode::kStochasticConvert) return inferStochasticConvert(instruction);
    if (hloOpcodeIsElementwiseBinary(opcode)) return inferBinary(instruction);

    switch (opcode) {
    case HloOpcode::kDomain:
    case HloOpcode::kOptimizationBarrier:
        HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
        return instruction.operand(0)->shape();
    case HloOpcode::kSelect: return inferSelect(instruction);
    case HloOpcode::kClamp: return inferClamp(instruction);
    case HloOpcode::kBroadcast: return inferBroadcast(instruction);
    case HloOpcode::kReshape: return inferReshape(instruction);
    case HloOpcode::kDynamicReshape: return inferDynamicReshape(instruction);
    case HloOpcode::kTranspose: return inferTranspose(instruction);
    case HloOpcode::kSlice: return inferSlice(instruction);
    case HloOpcode::kDynamicSlice: return inferDynamicSlice(instruction);
    case HloOpcode::kDynamicUpdateSlice: return inferDynamicUpdateSlice(instruction);
    case HloOpcode::kConcatenate: return inferConcatenate(instruction);
    case HloOpcode::kPad: return inferPad(instruction);
    case HloOpcode::kReverse: return inferReverse(instruction);
    case HloOpcode::kIota: return inferIota(instruction);
    case HloOpcode::kDot: return inferDot(instruction);
    case HloOpcode::kRaggedDot: return inferRaggedDot(instruction);
    case HloOpcode::kScaledDot: return inferScaledDot(instruction);
    case HloOpcode::kConvolution: return inferConvolution(instruction);
    case HloOpcode::kReduce: return inferReduce(instruction);
    case HloOpcode::kReduceWindow: return inferReduceWindow(instruction);
    case HloOpcode::kSelectAndScatter: return inferSelectAndScatter(instruction);
    case HloOpcode::kSort: return inferSort(instruction);
    case HloOpcode::kGather: return inferGather(instruction);
    case HloOpcode::kScatter: return inferScatter(instruction);
    case HloOpcode::kMap: return inferMap(instruction);
    case HloOpcode::kFft: return inferFft(instruction);
    case HloOpcode::kTriangularSolve: return inferTriangularSolve(instruction);
    case HloOpcode::kCholesky: return inferCholesky(instruction);
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad: return inferBatchNorm(instruction);
    case HloOpcode::kRng: return inferRng(instruction);
    case HloOpcode::kRngBitGenerator: return inferRngBitGenerator(instruction);
    case HloOpcode::kRngGetAndUpdateState:
        HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 0));
        return Shape::makeArray(PrimitiveType::U64, {2});
    case HloOpcode::kWhile: return inferWhile(instruction);
    case HloOpcode::kConditional: return inferConditional(instruction);
    case HloOpcode::kCall: return inferCall(instruction);
    case HloOpcode::kFusion: return inferFusion(instruction);
    case HloOpcode::kTuple: return inferTuple(instruction);
    case HloOpcode::kGetTupleElement: return inferGetTupleElement(instruction);
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: return inferAllReduce(instruction);
    case HloOpcode::kAllReduceDone:
        return inferStartDone(instruction, HloOpcode::kAllReduceStart, -1);
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: return inferAllGather(instruction);
    case HloOpcode::kAllGatherDone:
        return inferStartDone(instruction, HloOpcode::kAllGatherStart, 1);
    case HloOpcode::kReduceScatter: return inferReduceScatter(instruction);
    case HloOpcode::kAllToAll: return inferAllToAll(instruction);
    case HloOpcode::kRaggedAllToAll: return inferRaggedAllToAll(instruction);
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: return inferCollectivePermute(instruction);
    case HloOpcode::kCollectivePermuteDone:
        return inferStartDone(instruction, HloOpcode::kCollectivePermuteStart, 1);
    case HloOpcode::kCollectiveBroadcast: return inferCollectiveBroadcast(instruction);
    case HloOpcode::kSend: return inferSend(instruction);
    case HloOpcode::kSendDone: return inferSendDone(instruction);
    case HloOpcode::kRecv: return inferRecv(instruction);
    case HloOpcode::kRecvDone: return inferRecvDone(instruction);
    case HloOpcode::kInfeed: return inferInfeed(instruction);
    case HloOpcode::kOutfeed: return inferOutfeed(instruction);
    case HloOpcode::kAfterAll: return inferAfterAll(instruction);
    case HloOpcode::kAddDependency: return inferAddDependency(instruction);
    case HloOpcode::kGetDimensionSize: return inferGetDimensionSize(instruction);
    case HloOpcode::kSetDimensionSize: return inferSetDimensionSize(instruction);
    case HloOpcode::kTopK: return inferTopK(instruction);
    case HloOpcode::kCopyStart: return inferCopyStart(instruction);
    case HloOpcode::kCopyDone: return inferCopyDone(instruction);
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
        HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 0));
        return Shape::makeScalar(PrimitiveType::U32);
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kBitcast: {
        Shape result = instruction.shape();
        return result;
    }
    case HloOpcode::kCustomCall:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kScan:
    case HloOpcode::kCollectiveReduce:
    case HloOpcode::kShuffle:
        return unimplemented("%" + instruction.name() + ": the shape of " + opName(instruction) +
                             " cannot be inferred from the IR alone");
    default: break;
    }
    return unimplemented("%" + instruction.name() + ": no shape inference for " +
                         opName(instruction));
}

}  // namespace hloscope
