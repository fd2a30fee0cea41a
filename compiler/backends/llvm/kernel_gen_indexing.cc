// Data-movement ops of the shared element generator (kernel_gen_internal.h)
// that map an output index to operand indices with bounds: pad (edge and
// interior padding), concatenate, gather, dynamic-slice and
// dynamic-update-slice (start indices clamped as XLA clamps them).
#include <llvm/IR/Constants.h>

#include <algorithm>

#include "compiler/backends/llvm/kernel_gen_internal.h"

namespace hloscope::llvm_codegen {

StatusOr<Value*> KernelGen::genPad(const HloInstruction& pad, const Index& index) {
    const HloInstruction& operand = *pad.operand(0);
    const std::vector<PaddingDimension>& padding = pad.padding();
    if (padding.size() != index.dims.size()) return unsupportedAt(pad, "padding rank mismatch");
    Index inner = makeIndex(operand.shape().dimensions());
    Value* valid = m_b.getTrue();
    for (size_t d = 0; d < index.dims.size(); ++d) {
        const int64_t size = operand.shape().dimensions(static_cast<int64_t>(d));
        const int64_t step = padding[d].interior + 1;
        Value* t = m_b.CreateSub(multiOf(index, d), c64(padding[d].edgeLow));
        Value* q = t;
        if (step != 1) {
            Value* rem = m_b.CreateSRem(t, c64(step));
            valid = m_b.CreateAnd(valid, m_b.CreateICmpEQ(rem, c64(0)));
            q = m_b.CreateSDiv(t, c64(step));
        }
        valid = m_b.CreateAnd(valid, m_b.CreateICmpSGE(t, c64(0)));
        valid = m_b.CreateAnd(valid, m_b.CreateICmpSLT(q, c64(size)));
        // Clamped into range so the (discarded) load stays inside the buffer.
        Value* clamped = m_b.CreateSelect(m_b.CreateICmpSLT(q, c64(0)), c64(0), q);
        clamped = m_b.CreateSelect(m_b.CreateICmpSGE(clamped, c64(size)),
                                   c64(std::max<int64_t>(size - 1, 0)), clamped);
        inner.multi.push_back(clamped);
    }
    HLO_ASSIGN_OR_RETURN(Value * padValue, gen(*pad.operand(1), scalarIndex()));
    if (operand.shape().elementCount() == 0) return padValue;
    HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
    return m_b.CreateSelect(valid, value, padValue);
}

StatusOr<Value*> KernelGen::genConcatenate(const HloInstruction& concat, const Index& index) {
    if (concat.dimensions().size() != 1)
        return unsupportedAt(concat, "concatenate without one dimension");
    const auto dim = static_cast<size_t>(concat.dimensions(0));
    Value* position = multiOf(index, dim);
    Value* result = nullptr;
    int64_t offset = 0;
    for (const HloInstruction* operand : concat.operands()) {
        const int64_t size = operand->shape().dimensions(static_cast<int64_t>(dim));
        if (size == 0) continue;
        Index inner = makeIndex(operand->shape().dimensions());
        inner.multi = multiAll(index);
        Value* local = m_b.CreateSub(position, c64(offset));
        Value* clamped = m_b.CreateSelect(m_b.CreateICmpSLT(local, c64(0)), c64(0), local);
        clamped = m_b.CreateSelect(m_b.CreateICmpSGE(clamped, c64(size)), c64(size - 1), clamped);
        inner.multi[dim] = clamped;
        HLO_ASSIGN_OR_RETURN(Value * value, gen(*operand, inner));
        result = result ? m_b.CreateSelect(m_b.CreateICmpSGE(position, c64(offset)), value, result)
                        : value;
        offset += size;
    }
    if (!result) return unsupportedAt(concat, "concatenate of empty operands");
    return result;
}

namespace {

// An integer index value (any width and signedness) as i64.
Value* indexToI64(llvm::IRBuilderBase& b, Value* value, PrimitiveType type) {
    if (value->getType()->isIntegerTy(64)) return value;
    return primitive_util::isUnsignedInteger(type) ? b.CreateZExt(value, b.getInt64Ty())
                                                   : b.CreateSExt(value, b.getInt64Ty());
}

// clamp(v, 0, hi) for i64 values.
Value* clampIndex(llvm::IRBuilderBase& b, Value* v, int64_t hi) {
    Value* lo = b.CreateSelect(b.CreateICmpSLT(v, b.getInt64(0)), b.getInt64(0), v);
    return b.CreateSelect(b.CreateICmpSGT(lo, b.getInt64(static_cast<uint64_t>(hi))),
                          b.getInt64(static_cast<uint64_t>(hi)), lo);
}

}  // namespace

StatusOr<Value*> KernelGen::genGather(const HloInstruction& gather, const Index& index) {
    const GatherDimensionNumbers* numbers = gather.gatherDimensionNumbers();
    const HloExtraAttributes* extra = gather.extra();
    if (!numbers || !extra || gather.operandCount() != 2)
        return unsupportedAt(gather, "gather without dimension numbers");
    if (numbers->operandBatchingDims.size() != numbers->startIndicesBatchingDims.size())
        return unsupportedAt(gather, "batching dimension counts differ");
    const HloInstruction& operand = *gather.operand(0);
    const HloInstruction& indices = *gather.operand(1);
    const PrimitiveType indexType = indices.shape().elementType();
    if (!primitive_util::isInteger(indexType))
        return unsupportedAt(gather, "non-integer gather indices");
    const std::vector<int64_t>& sliceSizes = extra->gatherSliceSizes;
    const int64_t operandRank = operand.shape().rank();
    if (static_cast<int64_t>(sliceSizes.size()) != operandRank)
        return unsupportedAt(gather, "slice_sizes rank");
    // Batch positions of the output (not offset dims), in order.
    std::vector<Value*> batch;
    for (size_t d = 0; d < index.dims.size(); ++d)
        if (std::find(numbers->offsetDims.begin(), numbers->offsetDims.end(),
                      static_cast<int64_t>(d)) == numbers->offsetDims.end())
            batch.push_back(multiOf(index, d));
    IndexedWindow window;
    window.indices = &indices;
    window.indexVectorDim = numbers->indexVectorDim;
    window.indexMap = &numbers->startIndexMap;
    window.indexMapName = "start_index_map";
    window.operandBatchingDims = &numbers->operandBatchingDims;
    window.indicesBatchingDims = &numbers->startIndicesBatchingDims;
    // Starts clamped so that the slice fits, batch positions into the dimension.
    HLO_ASSIGN_OR_RETURN(
        std::vector<Value*> start,
        windowStart(
            gather, window, operandRank, batch,
            [&](int64_t dim, Value* first) {
                const int64_t hi =
                    operand.shape().dimensions(dim) - sliceSizes[static_cast<size_t>(dim)];
                return clampIndex(m_b, first, std::max<int64_t>(hi, 0));
            },
            [&](int64_t dim, Value* position) {
                return clampIndex(m_b, position,
                                  std::max<int64_t>(operand.shape().dimensions(dim) - 1, 0));
            }));
    auto contains = [](const std::vector<int64_t>& dims, int64_t d) {
        return std::find(dims.begin(), dims.end(), d) != dims.end();
    };
    Index source = makeIndex(operand.shape().dimensions());
    size_t offset = 0;
    for (int64_t d = 0; d < operandRank; ++d) {
        Value* position = start[static_cast<size_t>(d)];
        const bool collapsed =
            contains(numbers->collapsedSliceDims, d) || contains(numbers->operandBatchingDims, d);
        if (!collapsed) {
            if (offset >= numbers->offsetDims.size())
                return unsupportedAt(gather, "offset_dims mismatch");
            position = m_b.CreateAdd(
                position, multiOf(index, static_cast<size_t>(numbers->offsetDims[offset++])));
        }
        source.multi.push_back(position);
    }
    if (operandRank == 0) source.linear = c64(0);
    return gen(operand, source);
}

StatusOr<std::vector<Value*>> KernelGen::windowStart(const HloInstruction& user,
                                                     const IndexedWindow& window,
                                                     int64_t operandRank,
                                                     const std::vector<Value*>& positions,
                                                     const ClampIndex& clampStart,
                                                     const ClampIndex& clampBatch) {
    const HloInstruction& indices = *window.indices;
    const PrimitiveType indexType = indices.shape().elementType();
    const int64_t indicesRank = indices.shape().rank();
    const bool implicitVector = window.indexVectorDim >= indicesRank;
    std::vector<Value*> start(static_cast<size_t>(operandRank), c64(0));
    for (size_t k = 0; k < window.indexMap->size(); ++k) {
        Index at = makeIndex(indices.shape().dimensions());
        size_t next = 0;
        for (int64_t d = 0; d < indicesRank; ++d) {
            if (!implicitVector && d == window.indexVectorDim)
                at.multi.push_back(c64(static_cast<int64_t>(k)));
            else
                at.multi.push_back(next < positions.size() ? positions[next++] : c64(0));
        }
        if (indicesRank == 0) at.linear = c64(0);
        HLO_ASSIGN_OR_RETURN(Value * raw, gen(indices, at));
        const int64_t dim = (*window.indexMap)[k];
        if (dim < 0 || dim >= operandRank)
            return unsupportedAt(user, std::string(window.indexMapName) + " out of range");
        Value* first = indexToI64(m_b, raw, indexType);
        start[static_cast<size_t>(dim)] = clampStart ? clampStart(dim, first) : first;
    }
    // Operand batching dimension i is at the position of indices batching
    // dimension i (the indices' dimensions without index_vector_dim, in order).
    for (size_t i = 0; i < window.operandBatchingDims->size(); ++i) {
        const int64_t from = (*window.indicesBatchingDims)[i];
        const int64_t position = from < window.indexVectorDim ? from : from - 1;
        const int64_t dim = (*window.operandBatchingDims)[i];
        if (position < 0 || position >= static_cast<int64_t>(positions.size()) || dim < 0 ||
            dim >= operandRank)
            return unsupportedAt(user, "batching dimensions out of range");
        Value* at = positions[static_cast<size_t>(position)];
        start[static_cast<size_t>(dim)] = clampBatch ? clampBatch(dim, at) : at;
    }
    return start;
}

StatusOr<Value*> KernelGen::startIndex(const HloInstruction& instruction, int64_t first,
                                       int64_t d) {
    const int64_t rank = instruction.operand(0)->shape().rank();
    const int64_t count = instruction.operandCount() - first;
    const HloInstruction* start = nullptr;
    Index at;
    if (count == 1 && rank != 1) {  // one index vector
        start = instruction.operand(first);
        if (start->shape().rank() != 1 || start->shape().dimensions(0) != rank)
            return unsupportedAt(instruction, "start index vector of another length");
        at = makeIndex(start->shape().dimensions());
        at.multi.push_back(c64(d));
    } else if (count == rank) {
        start = instruction.operand(first + d);
        if (start->shape().elementCount() != 1)
            return unsupportedAt(instruction,
                                 "start index " + std::to_string(d) + " is not a single integer");
        at = makeIndex(start->shape().dimensions());
        at.linear = c64(0);
    } else {
        return unsupportedAt(instruction, "expects " + std::to_string(rank) + " start indices");
    }
    const PrimitiveType type = start->shape().elementType();
    if (!primitive_util::isInteger(type))
        return unsupportedAt(instruction, "non-integer start index");
    HLO_ASSIGN_OR_RETURN(Value * raw, gen(*start, at));
    return indexToI64(m_b, raw, type);
}

StatusOr<Value*> KernelGen::genDynamicSlice(const HloInstruction& slice, const Index& index) {
    const HloInstruction& operand = *slice.operand(0);
    const int64_t rank = operand.shape().rank();
    Index source = makeIndex(operand.shape().dimensions());
    for (int64_t d = 0; d < rank; ++d) {
        HLO_ASSIGN_OR_RETURN(Value * start, startIndex(slice, 1, d));
        const int64_t hi = operand.shape().dimensions(d) - slice.shape().dimensions(d);
        Value* clamped = clampIndex(m_b, start, std::max<int64_t>(hi, 0));
        source.multi.push_back(m_b.CreateAdd(clamped, multiOf(index, static_cast<size_t>(d))));
    }
    if (rank == 0) source.linear = c64(0);
    return gen(operand, source);
}

// dynamic-update-slice at `index`: the update's element where the index lies
// in the update's window (its start clamped so the window fits, as XLA
// clamps), the operand's elsewhere.
StatusOr<Value*> KernelGen::genDynamicUpdateSlice(const HloInstruction& dus, const Index& index) {
    const HloInstruction& operand = *dus.operand(0);
    const HloInstruction& update = *dus.operand(1);
    const int64_t rank = operand.shape().rank();
    if (update.shape().elementCount() == 0) return gen(operand, index);
    Value* inside = m_b.getTrue();
    Index at = makeIndex(update.shape().dimensions());
    for (int64_t d = 0; d < rank; ++d) {
        HLO_ASSIGN_OR_RETURN(Value * start, startIndex(dus, 2, d));
        const int64_t size = update.shape().dimensions(d);
        const int64_t hi = operand.shape().dimensions(d) - size;
        Value* first = clampIndex(m_b, start, std::max<int64_t>(hi, 0));
        Value* offset = m_b.CreateSub(multiOf(index, static_cast<size_t>(d)), first);
        // Unsigned: a negative offset is out of the window too.
        inside = m_b.CreateAnd(inside, m_b.CreateICmpULT(offset, c64(size)));
        at.multi.push_back(offset);
    }
    if (rank == 0) at.linear = c64(0);
    // Both sides are generated in their own blocks, so neither reads memory
    // outside its own array.
    llvm::BasicBlock* fromUpdate =
        llvm::BasicBlock::Create(m_b.getContext(), "dus.update", m_function);
    llvm::BasicBlock* fromOperand =
        llvm::BasicBlock::Create(m_b.getContext(), "dus.operand", m_function);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(m_b.getContext(), "dus.join", m_function);
    m_b.CreateCondBr(inside, fromUpdate, fromOperand);
    m_b.SetInsertPoint(fromUpdate);
    Index updateAt = at;  // a fresh id: values cached in this block stay in it
    updateAt.id = m_nextId++;
    HLO_ASSIGN_OR_RETURN(Value * updated, gen(update, updateAt));
    llvm::BasicBlock* updateEnd = m_b.GetInsertBlock();
    m_b.CreateBr(join);
    m_b.SetInsertPoint(fromOperand);
    Index operandAt = index;
    operandAt.id = m_nextId++;
    HLO_ASSIGN_OR_RETURN(Value * kept, gen(operand, operandAt));
    llvm::BasicBlock* operandEnd = m_b.GetInsertBlock();
    m_b.CreateBr(join);
    m_b.SetInsertPoint(join);
    llvm::PHINode* value = m_b.CreatePHI(updated->getType(), 2, "dus");
    value->addIncoming(updated, updateEnd);
    value->addIncoming(kept, operandEnd);
    return value;
}

}  // namespace hloscope::llvm_codegen
