// Shape inference: the opcode dispatcher and the elementwise family.
// Helpers are in shape_inference_util.cc; data movement (broadcast, reshape,
// slices, concatenate, pad, ...) in shape_inference_data_movement.cc; control
// flow and tokens in shape_inference_control.cc; dot, convolution,
// reductions and linear algebra in shape_inference_ops.cc; gather/scatter in
// shape_inference_gather.cc; collectives in shape_inference_collectives.cc.
#include "core/shape_inference/shape_inference.h"

#include <algorithm>

#include "core/ir/hlo_computation.h"
#include "core/shape_inference/shape_inference_util.h"

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

}  // namespace

// A dispatch table over opcodes; the work is in the infer* functions.
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
