// Shape-op family of the evaluator: broadcast, reshape, transpose, slice,
// dynamic-slice, dynamic-update-slice, concatenate, pad, reverse, iota, copy,
// bitcast, get/set-dimension-size, dynamic-reshape.
//
// Everything is built on one strided block copy over raw element bytes, so
// each op is a matter of computing offsets and strides; element types only
// matter through their storage width.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/interpreter/interpreter_internal.h"

namespace hloscope::evaluator {
namespace {

using Dims = std::vector<int64_t>;

Dims rowMajorStrides(const Dims& dims) {
    Dims strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
    return strides;
}

std::string dimsToString(const Dims& dims) {
    std::string text = "[";
    for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
    return text + "]";
}

struct Bytes16 {
    uint64_t low, high;
};

template <typename F>
void withElementBytes(int64_t bytes, F&& f) {
    switch (bytes) {
    case 1: f.template operator()<uint8_t>(); break;
    case 2: f.template operator()<uint16_t>(); break;
    case 4: f.template operator()<uint32_t>(); break;
    case 8: f.template operator()<uint64_t>(); break;
    case 16: f.template operator()<Bytes16>(); break;
    default: break;
    }
}

// For every index i within `extent`:
//   dst[dstOffset + sum(i[d] * dstStrides[d])] = src[srcOffset + sum(i[d] * srcStrides[d])]
// (offsets and strides in elements; strides may be 0 or negative).
template <typename E>
void stridedCopy(const E* src, int64_t srcOffset, const Dims& srcStrides, E* dst, int64_t dstOffset,
                 const Dims& dstStrides, const Dims& extent) {
    for (int64_t e : extent)
        if (e <= 0) return;
    const size_t rank = extent.size();
    if (rank == 0) {
        dst[dstOffset] = src[srcOffset];
        return;
    }
    const int64_t inner = extent[rank - 1];
    const int64_t ss = srcStrides[rank - 1], ds = dstStrides[rank - 1];
    Dims index(rank, 0);
    int64_t s = srcOffset, d = dstOffset;
    while (true) {
        if (ss == 1 && ds == 1) {
            std::memcpy(dst + d, src + s, static_cast<size_t>(inner) * sizeof(E));
        } else {
            const E* from = src + s;
            E* to = dst + d;
            for (int64_t k = 0; k < inner; ++k) to[k * ds] = from[k * ss];
        }
        int64_t dim = static_cast<int64_t>(rank) - 2;
        for (; dim >= 0; --dim) {
            const size_t u = static_cast<size_t>(dim);
            ++index[u];
            s += srcStrides[u];
            d += dstStrides[u];
            if (index[u] < extent[u]) break;
            s -= srcStrides[u] * extent[u];
            d -= dstStrides[u] * extent[u];
            index[u] = 0;
        }
        if (dim < 0) break;
    }
}

// Strided copy between two array literals of the same element type.
void copyBlock(const Literal& src, int64_t srcOffset, const Dims& srcStrides, Literal& dst,
               int64_t dstOffset, const Dims& dstStrides, const Dims& extent) {
    if (src.elementCount() == 0 || dst.elementCount() == 0) return;
    const void* from = src.untypedData();
    void* to = dst.untypedData();
    withElementBytes(primitive_util::byteWidth(dst.elementType()), [&]<typename E>() {
        stridedCopy(static_cast<const E*>(from), srcOffset, srcStrides, static_cast<E*>(to),
                    dstOffset, dstStrides, extent);
    });
}

// Fills `dst` with the single element of `value`.
void fillWith(Literal& dst, const Literal& value) {
    if (dst.elementCount() == 0) return;
    copyBlock(value, 0, {0}, dst, 0, {1}, {dst.elementCount()});
}

// Same bytes, new shape (row-major order unchanged).
Literal reinterpret(const Literal& src, const Shape& shape) {
    Literal result(shape);
    if (result.sizeInBytes() > 0)
        std::memcpy(result.untypedData(), src.untypedData(),
                    static_cast<size_t>(result.sizeInBytes()));
    return result;
}

const Dims& dimsOf(const Literal& literal) { return literal.shape().dimensions(); }

int64_t indexValue(const Literal& literal, int64_t i) {
    if (primitive_util::isUnsignedInteger(literal.elementType())) {
        uint64_t v = literal.getAsUint64(i);
        return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                   ? std::numeric_limits<int64_t>::max()
                   : static_cast<int64_t>(v);
    }
    return literal.getAsInt64(i);
}

// Start indices of dynamic-slice / dynamic-update-slice: one scalar operand
// per dimension (or, in the old form, a single rank-1 operand), clamped so
// that the window of `sizes` stays in bounds.
StatusOr<Dims> clampedStarts(const HloInstruction& instruction, Operands indexOperands,
                             const Dims& operandDims, const Dims& sizes) {
    const size_t rank = operandDims.size();
    Dims starts(rank, 0);
    if (indexOperands.size() == 1 && indexOperands[0]->shape().rank() == 1 &&
        indexOperands[0]->elementCount() == static_cast<int64_t>(rank) && rank != 1) {
        for (size_t i = 0; i < rank; ++i)
            starts[i] = indexValue(*indexOperands[0], static_cast<int64_t>(i));
    } else if (indexOperands.size() == rank) {
        for (size_t i = 0; i < rank; ++i) {
            if (indexOperands[i]->elementCount() != 1 ||
                !primitive_util::isInteger(indexOperands[i]->elementType()))
                return invalid(instruction,
                               "start index " + std::to_string(i) + " must be an integer scalar");
            starts[i] = indexValue(*indexOperands[i], 0);
        }
    } else {
        return invalid(instruction, "expects " + std::to_string(rank) + " start indices, got " +
                                        std::to_string(indexOperands.size()));
    }
    for (size_t i = 0; i < rank; ++i) {
        if (sizes[i] > operandDims[i] || sizes[i] < 0)
            return invalid(instruction, "slice size " + std::to_string(sizes[i]) +
                                            " exceeds dimension " + std::to_string(i));
        starts[i] = std::clamp<int64_t>(starts[i], 0, operandDims[i] - sizes[i]);
    }
    return starts;
}

StatusOr<Literal> evaluateBroadcast(const HloInstruction& instruction, const Literal& operand,
                                    Literal result) {
    const Dims& in = dimsOf(operand);
    const Dims& out = dimsOf(result);
    const Dims& map = instruction.dimensions();
    if (map.size() != in.size())
        return invalid(instruction, "broadcast dimensions do not match the operand rank");
    Dims strides(out.size(), 0);
    const Dims inStrides = rowMajorStrides(in);
    for (size_t i = 0; i < map.size(); ++i) {
        if (map[i] < 0 || map[i] >= static_cast<int64_t>(out.size()) ||
            out[static_cast<size_t>(map[i])] != in[i])
            return invalid(instruction, "broadcast dimension " + std::to_string(i) +
                                            " does not map onto the result");
        strides[static_cast<size_t>(map[i])] = inStrides[i];
    }
    copyBlock(operand, 0, strides, result, 0, rowMajorStrides(out), out);
    return result;
}

StatusOr<Literal> evaluateTranspose(const HloInstruction& instruction, const Literal& operand,
                                    Literal result) {
    const Dims& in = dimsOf(operand);
    const Dims& out = dimsOf(result);
    const Dims& perm = instruction.dimensions();
    if (perm.size() != in.size() || out.size() != in.size())
        return invalid(instruction, "transpose permutation does not match the rank");
    const Dims inStrides = rowMajorStrides(in);
    Dims strides(out.size());
    for (size_t i = 0; i < perm.size(); ++i) {
        if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(in.size()) ||
            in[static_cast<size_t>(perm[i])] != out[i])
            return invalid(instruction, "bad transpose permutation");
        strides[i] = inStrides[static_cast<size_t>(perm[i])];
    }
    copyBlock(operand, 0, strides, result, 0, rowMajorStrides(out), out);
    return result;
}

StatusOr<Literal> evaluateSlice(const HloInstruction& instruction, const Literal& operand,
                                Literal result) {
    const Dims& in = dimsOf(operand);
    const Dims& out = dimsOf(result);
    const std::vector<SliceDimension>& slice = instruction.slice();
    if (slice.size() != in.size() || out.size() != in.size())
        return invalid(instruction, "slice does not match the operand rank");
    const Dims inStrides = rowMajorStrides(in);
    Dims strides(in.size());
    int64_t offset = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        const SliceDimension& s = slice[i];
        if (s.stride < 1 || s.start < 0 || s.limit > in[i] || s.start > s.limit ||
            (s.limit - s.start + s.stride - 1) / s.stride != out[i])
            return invalid(instruction, "slice dimension " + std::to_string(i) + " out of range");
        offset += s.start * inStrides[i];
        strides[i] = s.stride * inStrides[i];
    }
    copyBlock(operand, offset, strides, result, 0, rowMajorStrides(out), out);
    return result;
}

StatusOr<Literal> evaluateDynamicSlice(const HloInstruction& instruction, Operands operands,
                                       Literal result) {
    const Literal& operand = *operands[0];
    const Dims& in = dimsOf(operand);
    const Dims& out = dimsOf(result);
    if (out.size() != in.size()) return invalid(instruction, "result rank differs from operand");
    HLO_ASSIGN_OR_RETURN(Dims starts, clampedStarts(instruction, operands.subspan(1), in, out));
    const Dims inStrides = rowMajorStrides(in);
    int64_t offset = 0;
    for (size_t i = 0; i < in.size(); ++i) offset += starts[i] * inStrides[i];
    copyBlock(operand, offset, inStrides, result, 0, rowMajorStrides(out), out);
    return result;
}

}  // namespace

Status updateSliceInto(const HloInstruction& instruction, Literal& target, Operands operands) {
    if (operands.size() < 2) return invalid(instruction, "expects operand and update");
    const Literal& update = *operands[1];
    const Dims& in = dimsOf(target);
    const Dims& up = dimsOf(update);
    if (up.size() != in.size() || update.elementType() != target.elementType())
        return invalid(instruction, "update does not match the operand");
    HLO_ASSIGN_OR_RETURN(Dims starts, clampedStarts(instruction, operands.subspan(2), in, up));
    const Dims inStrides = rowMajorStrides(in);
    int64_t offset = 0;
    for (size_t i = 0; i < in.size(); ++i) offset += starts[i] * inStrides[i];
    copyBlock(update, 0, rowMajorStrides(up), target, offset, inStrides, up);
    return Status::ok();
}

namespace {

StatusOr<Literal> evaluateDynamicUpdateSlice(const HloInstruction& instruction, Operands operands) {
    if (operands.size() < 2) return invalid(instruction, "expects operand and update");
    Literal result = *operands[0];
    HLO_RETURN_IF_ERROR(updateSliceInto(instruction, result, operands));
    return result;
}

StatusOr<Literal> evaluateConcatenate(const HloInstruction& instruction, Operands operands,
                                      Literal result) {
    const Dims& out = dimsOf(result);
    if (instruction.dimensions().size() != 1)
        return invalid(instruction, "concatenate needs one dimension");
    const int64_t dim = instruction.dimensions(0);
    if (dim < 0 || dim >= static_cast<int64_t>(out.size()))
        return invalid(instruction, "concatenate dimension out of range");
    const Dims outStrides = rowMajorStrides(out);
    int64_t position = 0;
    for (const Literal* operand : operands) {
        const Dims& in = dimsOf(*operand);
        if (in.size() != out.size() || operand->elementType() != result.elementType())
            return invalid(instruction, "concatenate operand does not match the result");
        for (size_t i = 0; i < in.size(); ++i)
            if (static_cast<int64_t>(i) != dim && in[i] != out[i])
                return invalid(instruction, "concatenate operand dimensions differ");
        if (position + in[static_cast<size_t>(dim)] > out[static_cast<size_t>(dim)])
            return invalid(instruction, "concatenate operands exceed the result");
        copyBlock(*operand, 0, rowMajorStrides(in), result,
                  position * outStrides[static_cast<size_t>(dim)], outStrides, in);
        position += in[static_cast<size_t>(dim)];
    }
    if (position != out[static_cast<size_t>(dim)])
        return invalid(instruction, "concatenate operands do not fill the result");
    return result;
}

StatusOr<Literal> evaluatePad(const HloInstruction& instruction, Operands operands,
                              Literal result) {
    if (operands.size() != 2) return invalid(instruction, "pad takes operand and padding value");
    const Literal& operand = *operands[0];
    const Literal& value = *operands[1];
    const Dims& in = dimsOf(operand);
    const Dims& out = dimsOf(result);
    const std::vector<PaddingDimension>& padding = instruction.padding();
    if (padding.size() != in.size() || out.size() != in.size() || value.elementCount() != 1 ||
        value.elementType() != result.elementType() ||
        operand.elementType() != result.elementType())
        return invalid(instruction, "pad operands do not match the padding config");
    fillWith(result, value);
    const Dims inStrides = rowMajorStrides(in);
    const Dims outStrides = rowMajorStrides(out);
    Dims srcStrides(in.size()), dstStrides(in.size()), extent(in.size());
    int64_t srcOffset = 0, dstOffset = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        const PaddingDimension& p = padding[i];
        if (p.interior < 0) return invalid(instruction, "negative interior padding");
        const int64_t step = p.interior + 1;
        const int64_t expected =
            p.edgeLow + p.edgeHigh + in[i] + std::max<int64_t>(in[i] - 1, 0) * p.interior;
        if (expected != out[i])
            return invalid(instruction, "padded dimension " + std::to_string(i) + " should be " +
                                            std::to_string(expected));
        // Operand indices j with 0 <= low + j * step < out.
        const int64_t first = p.edgeLow < 0 ? (-p.edgeLow + step - 1) / step : 0;
        const int64_t end =
            out[i] - p.edgeLow <= 0 ? 0 : std::min(in[i], (out[i] - p.edgeLow + step - 1) / step);
        extent[i] = std::max<int64_t>(end - first, 0);
        srcOffset += first * inStrides[i];
        dstOffset += (p.edgeLow + first * step) * outStrides[i];
        srcStrides[i] = inStrides[i];
        dstStrides[i] = step * outStrides[i];
    }
    copyBlock(operand, srcOffset, srcStrides, result, dstOffset, dstStrides, extent);
    return result;
}

StatusOr<Literal> evaluateReverse(const HloInstruction& instruction, const Literal& operand,
                                  Literal result) {
    const Dims& in = dimsOf(operand);
    Dims strides = rowMajorStrides(in);
    int64_t offset = 0;
    for (int64_t d : instruction.dimensions()) {
        if (d < 0 || d >= static_cast<int64_t>(in.size()))
            return invalid(instruction, "reverse dimension out of range");
        const size_t u = static_cast<size_t>(d);
        if (strides[u] < 0) continue;  // listed twice
        offset += (in[u] - 1) * strides[u];
        strides[u] = -strides[u];
    }
    if (dimsOf(result) != in) return invalid(instruction, "reverse changes the shape");
    copyBlock(operand, offset, strides, result, 0, rowMajorStrides(in), in);
    return result;
}

StatusOr<Literal> evaluateIota(const HloInstruction& instruction, Literal result) {
    const Dims& out = dimsOf(result);
    const int64_t dim = instruction.iotaDimension();
    if (dim < 0 || dim >= static_cast<int64_t>(out.size()))
        return invalid(instruction, "iota dimension out of range");
    const int64_t n = out[static_cast<size_t>(dim)];
    if (result.elementCount() == 0) return result;  // f32[1000000000000, 0]: nothing to write, nothing to allocate
    Literal values(Shape::makeArray(result.elementType(), {n}));
    for (int64_t i = 0; i < n; ++i) values.setFromInt64(i, i);
    Dims strides(out.size(), 0);
    strides[static_cast<size_t>(dim)] = 1;
    copyBlock(values, 0, strides, result, 0, rowMajorStrides(out), out);
    return result;
}

// Minor-to-major order of a shape's layout (descending when it has none).
Dims minorToMajor(const Shape& shape) {
    if (shape.hasLayout() &&
        static_cast<int64_t>(shape.layout().minorToMajor().size()) == shape.rank())
        return shape.layout().minorToMajor();
    Dims order;
    for (int64_t i = shape.rank() - 1; i >= 0; --i) order.push_back(i);
    return order;
}

bool isDescending(const Dims& minorToMajor) {
    for (size_t i = 0; i < minorToMajor.size(); ++i)
        if (minorToMajor[i] != static_cast<int64_t>(minorToMajor.size() - 1 - i)) return false;
    return true;
}

// bitcast: reinterprets the physical buffer. With equal row-major layouts
// that is the row-major order; otherwise elements are read in the operand's
// physical order and written in the result's.
StatusOr<Literal> evaluateBitcast(const HloInstruction& instruction, const Literal& operand,
                                  Literal result) {
    if (operand.elementType() != result.elementType() &&
        primitive_util::byteWidth(operand.elementType()) !=
            primitive_util::byteWidth(result.elementType()))
        return unsupported(instruction, "bitcast between element types of different widths");
    if (operand.elementCount() != result.elementCount())
        return unsupported(instruction, "bitcast that changes the element count");
    if (result.elementCount() == 0) return result;
    const Shape& inShape =
        instruction.operandCount() > 0 ? instruction.operand(0)->shape() : operand.shape();
    const Shape& outShape = instruction.shape();
    const Dims inOrder = minorToMajor(inShape), outOrder = minorToMajor(outShape);
    const std::vector<Tile>* inTiles = inShape.hasLayout() ? &inShape.layout().tiles() : nullptr;
    const std::vector<Tile>* outTiles = outShape.hasLayout() ? &outShape.layout().tiles() : nullptr;
    if ((inTiles && !inTiles->empty()) || (outTiles && !outTiles->empty())) {
        // Equal tilings over equal minor physical dimensions partition both
        // buffers alike; anything else needs the tiled physical layout.
        const bool sameTiles = inTiles && outTiles && *inTiles == *outTiles;
        size_t tileRank = 0;
        if (sameTiles)
            for (const Tile& tile : *inTiles) tileRank = std::max(tileRank, tile.dimensions.size());
        bool ok = sameTiles && tileRank <= inOrder.size() && tileRank <= outOrder.size();
        for (size_t k = 0; ok && k < tileRank; ++k)
            ok = dimsOf(operand)[static_cast<size_t>(inOrder[k])] ==
                 dimsOf(result)[static_cast<size_t>(outOrder[k])];
        if (!ok) return unsupported(instruction, "bitcast between different tiled layouts");
    }
    if (isDescending(inOrder) && isDescending(outOrder)) return reinterpret(operand, outShape);

    // Operand -> physical order (row-major over major-to-minor dimensions).
    const Dims& in = dimsOf(operand);
    const Dims inStrides = rowMajorStrides(in);
    Dims physicalDims, physicalStrides;
    for (auto it = inOrder.rbegin(); it != inOrder.rend(); ++it) {
        physicalDims.push_back(in[static_cast<size_t>(*it)]);
        physicalStrides.push_back(inStrides[static_cast<size_t>(*it)]);
    }
    Literal physical(Shape::makeArray(operand.elementType(), {operand.elementCount()}));
    copyBlock(operand, 0, physicalStrides, physical, 0, rowMajorStrides(physicalDims),
              physicalDims);
    // Physical order -> result: logical dim d sits at major-to-minor position k.
    const Dims& out = dimsOf(result);
    Dims outPhysicalDims;
    for (auto it = outOrder.rbegin(); it != outOrder.rend(); ++it)
        outPhysicalDims.push_back(out[static_cast<size_t>(*it)]);
    const Dims outPhysicalStrides = rowMajorStrides(outPhysicalDims);
    Dims srcStrides(out.size());
    for (size_t k = 0; k < outOrder.size(); ++k)
        srcStrides[static_cast<size_t>(outOrder[outOrder.size() - 1 - k])] = outPhysicalStrides[k];
    Literal typed = operand.elementType() == result.elementType()
                        ? std::move(physical)
                        : reinterpret(physical, Shape::makeArray(result.elementType(),
                                                                 {result.elementCount()}));
    copyBlock(typed, 0, srcStrides, result, 0, rowMajorStrides(out), out);
    return result;
}

}  // namespace

StatusOr<Literal> evaluateShapeOp(const HloInstruction& instruction, Operands operands,
                                  EvalContext& context) {
    const HloOpcode op = instruction.opcode();
    const Shape& shape = instruction.shape();
    if (!shape.isArray()) {
        if ((op == HloOpcode::kCopy || op == HloOpcode::kBitcast) && operands.size() == 1 &&
            shape.isTuple())
            return *operands[0];  // copy of a tuple
        return invalid(instruction, "result must be an array");
    }
    if (op == HloOpcode::kIota) return evaluateIota(instruction, Literal(shape));
    if (operands.empty()) return invalid(instruction, "missing operand");
    for (const Literal* operand : operands)
        if (!operand->isValid() || !operand->shape().isArray())
            return invalid(instruction, "operands must be arrays");
    const Literal& operand = *operands[0];
    if (op == HloOpcode::kGetDimensionSize) {
        if (instruction.dimensions().size() != 1 || instruction.dimensions(0) < 0 ||
            instruction.dimensions(0) >= operand.shape().rank())
            return invalid(instruction, "get-dimension-size dimension out of range");
        Literal result(shape);
        result.setFromInt64(0, operand.shape().dimensions(instruction.dimensions(0)));
        return result;
    }
    if (operand.elementType() != shape.elementType() && op != HloOpcode::kBitcast)
        return invalid(instruction, "operand element type differs from the result's");
    Literal result(shape);
    switch (op) {
    case HloOpcode::kCopy:
    case HloOpcode::kSetDimensionSize: return operand;
    case HloOpcode::kReshape:
    case HloOpcode::kDynamicReshape:
        if (operand.elementCount() != result.elementCount())
            return unsupported(instruction, "reshape from " + dimsToString(dimsOf(operand)) +
                                                " to " + dimsToString(dimsOf(result)) +
                                                " changes the element count");
        return reinterpret(operand, shape);
    case HloOpcode::kBroadcast: return evaluateBroadcast(instruction, operand, std::move(result));
    case HloOpcode::kTranspose: return evaluateTranspose(instruction, operand, std::move(result));
    case HloOpcode::kSlice: return evaluateSlice(instruction, operand, std::move(result));
    case HloOpcode::kDynamicSlice:
        return evaluateDynamicSlice(instruction, operands, std::move(result));
    case HloOpcode::kDynamicUpdateSlice: return evaluateDynamicUpdateSlice(instruction, operands);
    case HloOpcode::kConcatenate:
        return evaluateConcatenate(instruction, operands, std::move(result));
    case HloOpcode::kPad: return evaluatePad(instruction, operands, std::move(result));
    case HloOpcode::kReverse: return evaluateReverse(instruction, operand, std::move(result));
    case HloOpcode::kBitcast: return evaluateBitcast(instruction, operand, std::move(result));
    default: break;
    }
    return unsupported(instruction, std::string(hloOpcodeString(op)) + " is not a shape op");
}

}  // namespace hloscope::evaluator
