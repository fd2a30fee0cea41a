// Shape inference for collectives: all-reduce, all-gather, reduce-scatter,
// all-to-all, ragged-all-to-all, collective-permute and collective-broadcast
// (and their -start forms).
#include <algorithm>

#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::shape_inference_internal {

// ---------------------------------------------------------------------------
// Collectives.

namespace {

std::vector<Shape> operandShapes(const HloInstruction& instruction) {
    std::vector<Shape> shapes;
    for (const HloInstruction* operand : instruction.operands()) shapes.push_back(operand->shape());
    return shapes;
}

Shape tupleOrSingle(std::vector<Shape> shapes) {
    if (shapes.size() == 1) return shapes[0];
    return Shape::makeTuple(std::move(shapes));
}

}  // namespace

StatusOr<Shape> inferAllReduce(const HloInstruction& instruction) {
    if (instruction.operandCount() < 1) {
        return fail(instruction, opName(instruction) + " expects at least one operand");
    }
    std::vector<Shape> shapes = operandShapes(instruction);
    for (const Shape& shape : shapes) {
        HLO_RETURN_IF_ERROR(expectArray(instruction, shape, "operand of " + opName(instruction)));
    }
    return tupleOrSingle(std::move(shapes));
}

StatusOr<Shape> inferAllGather(const HloInstruction& instruction) {
    bool start = instruction.opcode() == HloOpcode::kAllGatherStart;
    if (instruction.operandCount() < 1) {
        return fail(instruction, opName(instruction) + " expects at least one operand");
    }
    if (instruction.dimensions().size() != 1) {
        return fail(instruction, opName(instruction) + " expects one dimension in dimensions=");
    }
    int64_t dim = instruction.dimensions(0);
    const Shape& declared = instruction.shape();
    int64_t n = instruction.operandCount();
    for (int64_t i = 0; i < n; ++i) {
        if (!instruction.operand(i)->shape().isArray()) {
            return fail(instruction, "ag->operand(i)->shape().IsArray() failed: operand " +
                                         std::to_string(i) + " is " +
                                         str(instruction.operand(i)->shape()));
        }
    }
    // The output shape(s) as declared, to derive the shard count.
    const Shape* outputs = &declared;
    if (start) {
        if (!declared.isTuple() || declared.tupleCount() < 2) {
            return fail(instruction, "ag->shape().IsTuple() failed: all-gather-start must return "
                                     "an (operands, outputs) tuple, got " +
                                         str(declared));
        }
        outputs = &declared.tupleShape(1);
    }
    auto outputAt = [&](int64_t i) -> const Shape* {
        if (n == 1) return outputs;
        if (!outputs->isTuple() || outputs->tupleCount() != n) return nullptr;
        return &outputs->tupleShape(i);
    };
    const Shape& operand0 = instruction.operand(0)->shape();
    const Shape* output0 = outputAt(0);
    if (dim < 0 || (operand0.rank() > 0 && dim >= operand0.rank())) {
        return fail(instruction, "all-gather dimension " + std::to_string(dim) +
                                     " is out of range for operand " + str(operand0));
    }
    int64_t shardCount = 1;
    if (output0 && output0->isArray() && output0->rank() > dim && operand0.rank() > dim &&
        operand0.dimensions(dim) > 0) {
        int64_t in = operand0.dimensions(dim);
        int64_t out = output0->dimensions(dim);
        shardCount = out > 0 ? (out + in - 1) / in : 1;
    }
    std::vector<Shape> gathered;
    for (int64_t i = 0; i < n; ++i) {
        const Shape& operand = instruction.operand(i)->shape();
        if (operand.rank() == 0) {
            // Scalars (seen in PyTorch/XLA dumps) pass through unchanged.
            gathered.push_back(operand);
            continue;
        }
        if (dim >= operand.rank()) {
            return fail(instruction, "all-gather dimension " + std::to_string(dim) +
                                         " is out of range for operand " + str(operand));
        }
        Shape out = operand;
        out.clearLayout();
        if (operand.dimensions(dim) != Shape::kUnboundedSize)
            out.mutableDimensions()[static_cast<size_t>(dim)] *= shardCount;
        gathered.push_back(std::move(out));
    }
    if (!start) return tupleOrSingle(std::move(gathered));
    std::vector<Shape> inputs = operandShapes(instruction);
    if (n == 1) return Shape::makeTuple({inputs[0], gathered[0]});
    return Shape::makeTuple({Shape::makeTuple(std::move(inputs)), Shape::makeTuple(std::move(gathered))});
}

StatusOr<Shape> inferReduceScatter(const HloInstruction& instruction) {
    if (instruction.operandCount() < 1) {
        return fail(instruction, "reduce-scatter expects at least one operand");
    }
    if (instruction.dimensions().size() != 1) {
        return fail(instruction, "reduce-scatter expects one dimension in dimensions=");
    }
    int64_t dim = instruction.dimensions(0);
    int64_t n = instruction.operandCount();
    for (int64_t i = 0; i < n; ++i) {
        if (!instruction.operand(i)->shape().isArray()) {
            return fail(instruction, "ars->operand(i)->shape().IsArray() failed: operand " +
                                         std::to_string(i) + " is " +
                                         str(instruction.operand(i)->shape()));
        }
    }
    const Shape& declared = instruction.shape();
    if (n > 1 && (!declared.isTuple() || declared.tupleCount() != n)) {
        return fail(instruction, "ars->shape().IsTuple() && ars->operand_count() == "
                                 "ars->shape().tuple_shapes().size() failed: " +
                                     std::to_string(n) + " operands but result shape " +
                                     str(declared));
    }
    const Shape& operand0 = instruction.operand(0)->shape();
    const Shape& output0 = n == 1 ? declared : declared.tupleShape(0);
    if (dim < 0 || (operand0.rank() > 0 && dim >= operand0.rank())) {
        return fail(instruction, "reduce-scatter dimension " + std::to_string(dim) +
                                     " is out of range for operand " + str(operand0));
    }
    int64_t shardCount = 1;
    if (output0.isArray() && output0.rank() > dim && operand0.rank() > dim &&
        output0.dimensions(dim) > 0) {
        int64_t in = operand0.dimensions(dim);
        int64_t out = output0.dimensions(dim);
        shardCount = std::max<int64_t>(1, (in + out - 1) / out);
    }
    std::vector<Shape> scattered;
    for (int64_t i = 0; i < n; ++i) {
        const Shape& operand = instruction.operand(i)->shape();
        if (operand.rank() == 0) {
            // Scalars (seen in PyTorch/XLA dumps) pass through unchanged.
            scattered.push_back(operand);
            continue;
        }
        if (dim >= operand.rank()) {
            return fail(instruction, "reduce-scatter dimension " + std::to_string(dim) +
                                         " is out of range for operand " + str(operand));
        }
        int64_t size = operand.dimensions(dim);
        if (size != Shape::kUnboundedSize && shardCount > 0 && size % shardCount != 0) {
            return fail(instruction, "reduce-scatter operand " + std::to_string(i) +
                                         " dimension " + std::to_string(dim) + " (size " +
                                         std::to_string(size) +
                                         ") must be divisible by the shard count " +
                                         std::to_string(shardCount));
        }
        Shape out = operand;
        out.clearLayout();
        if (size != Shape::kUnboundedSize) out.mutableDimensions()[static_cast<size_t>(dim)] /= shardCount;
        scattered.push_back(std::move(out));
    }
    return tupleOrSingle(std::move(scattered));
}

StatusOr<Shape> inferAllToAll(const HloInstruction& instruction) {
    if (instruction.operandCount() < 1) {
        return fail(instruction, "all-to-all expects at least one operand");
    }
    std::vector<Shape> shapes = operandShapes(instruction);
    for (const Shape& shape : shapes) {
        HLO_RETURN_IF_ERROR(expectArray(instruction, shape, "operand of all-to-all"));
    }
    if (instruction.hasDimensions() && !instruction.dimensions().empty()) {
        if (shapes.size() != 1) {
            // Array all-to-all with a split dimension takes one operand.
            int64_t d = instruction.dimensions(0);
            for (const Shape& shape : shapes) {
                if (d < 0 || d >= shape.rank()) {
                    return fail(instruction, "all-to-all split dimension " + std::to_string(d) +
                                                 " is out of range for operand " + str(shape));
                }
            }
            return Shape::makeTuple(std::move(shapes));
        }
        int64_t d = instruction.dimensions(0);
        if (d < 0 || d >= shapes[0].rank()) {
            return fail(instruction, "all-to-all split dimension " + std::to_string(d) +
                                         " is out of range for operand " + str(shapes[0]));
        }
        return shapes[0];
    }
    // Tuple all-to-all: every operand has the same shape (layouts included).
    for (size_t i = 1; i < shapes.size(); ++i) {
        bool same = compatible(shapes[0], shapes[i]);
        if (same && shapes[0].hasLayout() && shapes[i].hasLayout() &&
            shapes[0].layout().minorToMajor() != shapes[i].layout().minorToMajor())
            same = false;
        if (!same) {
            return fail(instruction, "HLO all-to-all has operands with different shapes: the 0th "
                                     "operand shape " +
                                         shapes[0].toString() + ", but the " + std::to_string(i) +
                                         "th operand has shape " + shapes[i].toString());
        }
    }
    return Shape::makeTuple(std::move(shapes));
}

StatusOr<Shape> inferRaggedAllToAll(const HloInstruction& instruction) {
    HLO_RETURN_IF_ERROR(expectOperandCount(instruction, 6));
    const Shape& input = instruction.operand(0)->shape();
    const Shape& output = instruction.operand(1)->shape();
    HLO_RETURN_IF_ERROR(expectArray(instruction, input, "ragged-all-to-all input"));
    HLO_RETURN_IF_ERROR(expectArray(instruction, output, "ragged-all-to-all output"));
    if (!sameElementTypeIgnoringFp(input.elementType(), output.elementType()) ||
        input.rank() != output.rank()) {
        return fail(instruction, "RaggedAllToAll input " + str(input) +
                                     " and output " + str(output) +
                                     " must have the same element type and rank");
    }
    const Shape& first = instruction.operand(2)->shape();
    for (int64_t i = 2; i < 6; ++i) {
        const Shape& s = instruction.operand(i)->shape();
        if (!s.isArray() || !isIntegral(s.elementType())) {
            return fail(instruction, "RaggedAllToAll operand " + std::to_string(i) +
                                         " must be an integer array, got " + str(s));
        }
        if (s.rank() != 1 && s.rank() != 2) {
            return fail(instruction, "RaggedAllToAll operand " + std::to_string(i) +
                                         " must be rank 1 or 2, got " + str(s));
        }
        if (!compatible(s, first)) {
            return fail(instruction, "RaggedAllToAll operands have different shapes (" + str(first) +
                                         ", " + str(s) + ")");
        }
    }
    return output;
}

StatusOr<Shape> inferCollectivePermute(const HloInstruction& instruction) {
    bool start = instruction.opcode() == HloOpcode::kCollectivePermuteStart;
    int64_t n = instruction.operandCount();
    if (n < 1) return fail(instruction, opName(instruction) + " expects at least one operand");
    std::vector<Shape> shapes = operandShapes(instruction);
    // The in-place form (input, output, input offsets, output offsets) has
    // tuple-shaped offsets; four plain operands are a combined permute.
    bool inplace = n == 4 && shapes[2].isTuple();
    Shape result;
    if (inplace) {
        result = shapes[1];
    } else {
        for (const Shape& shape : shapes) {
            if (!shape.isArray() && !shape.isTuple()) {
                return fail(instruction, "collective-permute operands must be arrays, got " +
                                             str(shape));
            }
        }
        result = tupleOrSingle(shapes);
    }
    if (!start) return result;
    std::vector<Shape> elements;
    if (inplace) {
        elements = {shapes[0], shapes[1]};
    } else {
        elements = {result, result};
    }
    const Shape& declared = instruction.shape();
    if (declared.isTuple()) {
        // Trailing u32[] context elements are taken as declared.
        for (int64_t i = 2; i < declared.tupleCount(); ++i) elements.push_back(declared.tupleShape(i));
    }
    return Shape::makeTuple(std::move(elements));
}

StatusOr<Shape> inferCollectiveBroadcast(const HloInstruction& instruction) {
    if (instruction.operandCount() < 1) {
        return fail(instruction, "collective-broadcast expects at least one operand");
    }
    return tupleOrSingle(operandShapes(instruction));
}

}  // namespace hloscope::shape_inference_internal
