// Shape inference for tuples, control flow, calls, tokens and side-effecting
// ops (send/recv, infeed/outfeed, rng, copy-start/done, ...).
#include "core/ir/hlo_computation.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::shape_inference_internal {
namespace {

StatusOr<Shape> calledRootShape(const HloInstruction& instruction, std::string_view attribute) {
    HLO_ASSIGN_OR_RETURN(const HloComputation* computation,
                         requireComputation(instruction, attribute));
    if (!computation->root()) {
        return fail(instruction, "called computation %" + computation->name() + " has no root");
    }
    return computation->root()->shape();
}

}  // namespace

// ---------------------------------------------------------------------------
// Tuples, control flow and calls.

StatusOr<Shape> inferGetTupleElement(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    if (!operand.isTuple()) {
        return fail(instruction, "get-tuple-element operand must be a tuple, got " + str(operand));
    }
    int64_t index = instruction.tupleIndex();
    if (index < 0 || index >= operand.tupleCount()) {
        return fail(instruction, "tuple index " + std::to_string(index) +
                                     " is out of range for operand shape " + str(operand));
    }
    return operand.tupleShape(index);
}

StatusOr<Shape> inferTuple(const HloInstruction& instruction) {
    std::vector<Shape> elements;
    for (const HloInstruction* operand : instruction.operands()) elements.push_back(operand->shape());
    return Shape::makeTuple(std::move(elements));
}

StatusOr<Shape> inferWhile(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    HLO_RETURN_IF_ERROR(requireComputation(instruction, "condition").status());
    HLO_RETURN_IF_ERROR(requireComputation(instruction, "body").status());
    return instruction.operand(0)->shape();
}

StatusOr<Shape> inferConditional(const HloInstruction& instruction) {
    std::vector<HloComputation*> branches;
    if (const HloComputation* t = instruction.calledComputation("true_computation")) {
        const HloComputation* f = instruction.calledComputation("false_computation");
        if (!f) return fail(instruction, "conditional has true_computation but no false_computation");
        branches = {const_cast<HloComputation*>(t), const_cast<HloComputation*>(f)};
    } else {
        for (const CalledComputationAttribute& a : instruction.calledComputationAttributes())
            if (a.name == "branch_computations") branches = a.computations;
    }
    if (branches.empty()) return fail(instruction, "conditional has no branch computations");
    for (const HloComputation* branch : branches) {
        if (!branch || !branch->root()) return fail(instruction, "conditional branch has no root");
    }
    return branches[0]->root()->shape();
}

StatusOr<Shape> inferSend(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& token = instruction.operand(1)->shape();
    if (!token.isToken()) {
        return fail(instruction, "send's second operand must be a token, got " + str(token));
    }
    return Shape::makeTuple({instruction.operand(0)->shape(),
                             Shape::makeScalar(PrimitiveType::U32), Shape::makeToken()});
}

StatusOr<Shape> inferSendDone(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const HloInstruction* operand = instruction.operand(0);
    if (operand->opcode() != HloOpcode::kSend && operand->opcode() != HloOpcode::kGetTupleElement) {
        return fail(instruction, "The operand of a send-done instruction needs to be send or "
                                 "get-tuple-element, found " +
                                     std::string(hloOpcodeString(operand->opcode())));
    }
    // Pipelined send-done (collective send/recv combining) may also return
    // the sent data with the token.
    const Shape& declared = instruction.shape();
    const Shape& send = operand->shape();
    if (declared.isTuple() && declared.tupleCount() == 2 && send.isTuple() && send.tupleCount() >= 1)
        return Shape::makeTuple({send.tupleShape(0), Shape::makeToken()});
    return Shape::makeToken();
}

StatusOr<Shape> inferRecv(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& token = instruction.operand(0)->shape();
    if (!token.isToken()) {
        return fail(instruction, "recv's operand must be a token, got " + str(token));
    }
    const Shape& declared = instruction.shape();
    if (!declared.isTuple() || declared.tupleCount() < 1) {
        return fail(instruction, "recv must return a (data, u32[], token[]) tuple, got " +
                                     str(declared));
    }
    return Shape::makeTuple(
        {declared.tupleShape(0), Shape::makeScalar(PrimitiveType::U32), Shape::makeToken()});
}

StatusOr<Shape> inferRecvDone(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const HloInstruction* operand = instruction.operand(0);
    if (operand->opcode() != HloOpcode::kRecv && operand->opcode() != HloOpcode::kGetTupleElement) {
        return fail(instruction, "The operand of a recv-done instruction needs to be recv or "
                                 "get-tuple-element, found " +
                                     std::string(hloOpcodeString(operand->opcode())));
    }
    const Shape& recv = operand->shape();
    if (!recv.isTuple() || recv.tupleCount() < 1) {
        return fail(instruction, "recv-done operand must be a tuple, got " + str(recv));
    }
    return Shape::makeTuple({recv.tupleShape(0), Shape::makeToken()});
}

StatusOr<Shape> inferInfeed(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    if (!instruction.operand(0)->shape().isToken()) {
        return fail(instruction, "infeed's operand must be a token, got " +
                                     str(instruction.operand(0)->shape()));
    }
    const Shape& declared = instruction.shape();
    if (!declared.isTuple() || declared.tupleCount() != 2 || !declared.tupleShape(1).isToken()) {
        return fail(instruction, "infeed must return a (data, token[]) tuple, got " + str(declared));
    }
    return Shape::makeTuple({declared.tupleShape(0), Shape::makeToken()});
}

StatusOr<Shape> inferOutfeed(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    if (!instruction.operand(1)->shape().isToken()) {
        return fail(instruction, "outfeed's second operand must be a token, got " +
                                     str(instruction.operand(1)->shape()));
    }
    return Shape::makeToken();
}

StatusOr<Shape> inferAfterAll(const HloInstruction& instruction) {
    for (int64_t i = 0; i < instruction.operandCount(); ++i) {
        if (!instruction.operand(i)->shape().isToken()) {
            return fail(instruction, "after-all operand " + std::to_string(i) +
                                         " must be a token, got " +
                                         str(instruction.operand(i)->shape()));
        }
    }
    return Shape::makeToken();
}

StatusOr<Shape> inferAddDependency(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    return instruction.operand(0)->shape();
}

StatusOr<Shape> inferGetDimensionSize(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of get-dimension-size"));
    if (instruction.dimensions().size() != 1) {
        return fail(instruction, "get-dimension-size expects one dimension in dimensions=");
    }
    int64_t d = instruction.dimensions(0);
    if (d < 0 || d >= operand.rank()) {
        return fail(instruction, "get-dimension-size dimension " + std::to_string(d) +
                                     " is out of range for operand " + str(operand));
    }
    return Shape::makeScalar(PrimitiveType::S32);
}

StatusOr<Shape> inferSetDimensionSize(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& operand = instruction.operand(0)->shape();
    const Shape& size = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of set-dimension-size"));
    if (!size.isArray() || size.rank() != 0 || size.elementType() != PrimitiveType::S32) {
        return fail(instruction, "set-dimension-size size operand must be an s32 scalar, got " +
                                     str(size));
    }
    if (instruction.dimensions().size() != 1) {
        return fail(instruction, "set-dimension-size expects one dimension in dimensions=");
    }
    int64_t d = instruction.dimensions(0);
    if (d < 0 || d >= operand.rank()) {
        return fail(instruction, "set-dimension-size dimension " + std::to_string(d) +
                                     " is out of range for operand " + str(operand));
    }
    Shape result = operand;
    result.clearLayout();
    // XLA marks the dimension dynamic; a constant size equal to the bound may
    // be printed static. Follow the declared dynamism of that dimension.
    const Shape& declared = instruction.shape();
    bool dynamic = !(declared.isArray() && declared.rank() == operand.rank() &&
                     !declared.isDynamicDimension(d));
    result.setDynamicDimension(d, dynamic);
    return result;
}

StatusOr<Shape> inferTopK(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, operand, "operand of top-k operation"));
    if (operand.rank() == 0) return fail(instruction, "top-k operand must have rank >= 1");
    const HloExtraAttributes* extra = instruction.extra();
    if (!extra || !extra->topK) return fail(instruction, "top-k requires k=");
    int64_t k = *extra->topK;
    int64_t last = operand.rank() - 1;
    if (k < 0 || (operand.dimensions(last) != Shape::kUnboundedSize && operand.dimensions(last) < k)) {
        return fail(instruction, "k=" + std::to_string(k) +
                                     " is larger than the last dimension of size " +
                                     std::to_string(operand.dimensions(last)));
    }
    std::vector<int64_t> dims = operand.dimensions();
    std::vector<bool> dynamic;
    for (int64_t i = 0; i < operand.rank(); ++i)
        dynamic.push_back(i != last && operand.isDynamicDimension(i));
    dims[static_cast<size_t>(last)] = k;
    Shape values = makeArray(operand.elementType(), dims, dynamic);
    Shape indices = makeArray(PrimitiveType::S32, dims, dynamic);
    return Shape::makeTuple({values, indices});
}

StatusOr<Shape> inferRng(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 2));
    const Shape& a = instruction.operand(0)->shape();
    const Shape& b = instruction.operand(1)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, a, "rng operand"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, b, "rng operand"));
    if (!declared.isArray()) return fail(instruction, "rng result must be an array");
    if (a.rank() != 0 || b.rank() != 0) {
        return fail(instruction, "rng operands must be scalars, got " + str(a) + " and " + str(b));
    }
    if (a.elementType() != b.elementType()) {
        return fail(instruction, "Expected compatible element types for rng operands, got " +
                                     typeName(a.elementType()) + " and " + typeName(b.elementType()));
    }
    if (declared.elementType() != a.elementType()) {
        return fail(instruction, "Expected compatible element types for rng result and operands, "
                                 "got " +
                                     typeName(declared.elementType()) + " and " +
                                     typeName(a.elementType()));
    }
    const HloExtraAttributes* extra = instruction.extra();
    std::string distribution = extra && extra->distribution ? *extra->distribution : "";
    if (distribution == "rng_normal" && !isFloat(a.elementType())) {
        return fail(instruction, "rng_normal requires floating-point operands, got " +
                                     typeName(a.elementType()));
    }
    if (distribution == "rng_uniform" && !isFloat(a.elementType()) && !isIntegral(a.elementType()) &&
        a.elementType() != PrimitiveType::PRED) {
        return fail(instruction, "rng_uniform requires numeric operands, got " +
                                     typeName(a.elementType()));
    }
    Shape result = declared;
    result.clearLayout();
    return result;
}

StatusOr<Shape> inferRngBitGenerator(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& state = instruction.operand(0)->shape();
    const Shape& declared = instruction.shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, state, "rng-bit-generator state"));
    // XLA checks only the (state, data) form; other forms are trusted.
    if (!declared.isTuple()) {
        return unimplemented("%" + instruction.name() +
                             ": rng-bit-generator without a (state, data) tuple result");
    }
    if (declared.tupleCount() != 2) {
        return fail(instruction, "Expected tuple shape with 2 elements for RngBitGenerator, got " +
                                     str(declared));
    }
    Shape stateOut = state;
    stateOut.clearLayout();
    Shape data = declared.tupleShape(1);
    data.clearLayout();
    return Shape::makeTuple({stateOut, data});
}

StatusOr<Shape> inferCopyStart(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const Shape& operand = instruction.operand(0)->shape();
    return Shape::makeTuple({operand, operand, Shape::makeScalar(PrimitiveType::U32)});
}

StatusOr<Shape> inferCopyDone(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const HloInstruction* operand = instruction.operand(0);
    if (operand->opcode() != HloOpcode::kCopyStart) {
        return fail(instruction,
                    "The operand of a copy-done instruction needs to be copy-start, found " +
                        std::string(hloOpcodeString(operand->opcode())));
    }
    const Shape& shape = operand->shape();
    if (!shape.isTuple() || shape.tupleCount() < 1) {
        return fail(instruction, "copy-done operand must be a tuple, got " + str(shape));
    }
    return shape.tupleShape(0);
}

StatusOr<Shape> inferStartDone(const HloInstruction& instruction, HloOpcode startOpcode,
                               int64_t element) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 1));
    const HloInstruction* operand = instruction.operand(0);
    if (operand->opcode() != startOpcode) {
        return fail(instruction, "The operand of a " + opName(instruction) +
                                     " instruction needs to be " +
                                     std::string(hloOpcodeString(startOpcode)) + ", found " +
                                     std::string(hloOpcodeString(operand->opcode())));
    }
    const Shape& shape = operand->shape();
    if (element < 0) return shape;
    if (!shape.isTuple() || shape.tupleCount() <= element) {
        return fail(instruction, "operand of " + opName(instruction) + " must be a tuple, got " +
                                     str(shape));
    }
    return shape.tupleShape(element);
}

StatusOr<Shape> inferCall(const HloInstruction& instruction) {
    return calledRootShape(instruction, "to_apply");
}

StatusOr<Shape> inferFusion(const HloInstruction& instruction) {
    return calledRootShape(instruction, "calls");
}

}  // namespace hloscope::shape_inference_internal
