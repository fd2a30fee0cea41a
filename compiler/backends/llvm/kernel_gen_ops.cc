// The shared element generator's ops beyond the element-wise and
// data-movement ones (kernel_gen_internal.h), for the CPU and GPU backends:
// collectives on one device, replica-id / partition-id, get-dimension-size,
// set-dimension-size and dynamic-reshape on bounded shapes, map, bitcasts
// that depend on layouts or element types, bitcast-convert; and the loop
// helpers the window ops (kernel_gen_window.cc) use. Every op computes what
// the reference interpreter computes (core/interpreter/interpreter.cc,
// core/evaluator_*.cc), which the CPU backend's tests check.
#include <llvm/IR/Constants.h>

#include <algorithm>

#include "compiler/backends/llvm/kernel_gen_internal.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"

namespace hloscope::llvm_codegen {

namespace {

std::string opName(const HloInstruction& instruction) {
    return std::string(hloOpcodeString(instruction.opcode()));
}

bool isCollective(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllGather:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectiveReduce:
            return true;
        default:
            return false;
    }
}

// The layout's minor-to-major order, or the default (descending) one.
std::vector<int64_t> minorToMajorOf(const Shape& shape) {
    if (shape.hasLayout() &&
        static_cast<int64_t>(shape.layout().minorToMajor().size()) == shape.rank())
        return shape.layout().minorToMajor();
    std::vector<int64_t> order;
    for (int64_t d = shape.rank() - 1; d >= 0; --d) order.push_back(d);
    return order;
}

bool isTiled(const Shape& shape) { return shape.hasLayout() && !shape.layout().tiles().empty(); }

}  // namespace

bool KernelGen::isSharedOpcode(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kReplicaId:
        case HloOpcode::kPartitionId:
        case HloOpcode::kGetDimensionSize:
        case HloOpcode::kSetDimensionSize:
        case HloOpcode::kDynamicReshape:
        case HloOpcode::kMap:
        case HloOpcode::kReduceWindow:
        case HloOpcode::kConvolution:
        case HloOpcode::kSelectAndScatter:
            return true;
        default:
            return isCollective(opcode);
    }
}

StatusOr<Value*> KernelGen::genShared(const HloInstruction& instruction, const Index& index) {
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    const PrimitiveType type = shape.elementType();
    switch (opcode) {
        case HloOpcode::kReplicaId:
        case HloOpcode::kPartitionId: {
            // The device the kernel is emitted for (replica 0, partition 0 by default).
            const int64_t id =
                opcode == HloOpcode::kReplicaId ? m_spec.replicaId : m_spec.partitionId;
            if (!primitive_util::isInteger(type))
                return unsupportedAt(instruction, opName(instruction) + " of a non-integer type");
            return llvm::ConstantInt::get(m_elemental.registerType(type),
                                          static_cast<uint64_t>(id));
        }
        case HloOpcode::kGetDimensionSize: {
            const HloInstruction& operand = *instruction.operand(0);
            if (instruction.dimensions().size() != 1 || instruction.dimensions(0) < 0 ||
                instruction.dimensions(0) >= operand.shape().rank() ||
                !primitive_util::isInteger(type))
                return unsupportedAt(instruction, "get-dimension-size dimension out of range");
            // Bounded shapes hold their bound (the interpreter's literal size).
            return llvm::ConstantInt::get(
                m_elemental.registerType(type),
                static_cast<uint64_t>(operand.shape().dimensions(instruction.dimensions(0))));
        }
        case HloOpcode::kSetDimensionSize:
        case HloOpcode::kDynamicReshape: {
            // The interpreter keeps the data: bounded dimensions at their bound.
            const HloInstruction& operand = *instruction.operand(0);
            if (operand.shape().elementCount() != shape.elementCount() ||
                operand.shape().elementType() != type)
                return unsupportedAt(instruction,
                                     opName(instruction) + " that changes the element count");
            if (operand.shape().dimensions() == index.dims) return gen(operand, index);
            Index inner = makeIndex(operand.shape().dimensions());
            inner.linear = linearOf(index);
            return gen(operand, inner);
        }
        case HloOpcode::kMap: {
            const HloComputation* computation = instruction.toApply();
            if (!computation) return unsupportedAt(instruction, "map without to_apply");
            std::vector<Value*> args;
            for (const HloInstruction* operand : instruction.operands()) {
                HLO_ASSIGN_OR_RETURN(Index inner, sameOrScalar(instruction, *operand, index));
                HLO_ASSIGN_OR_RETURN(Value * value, gen(*operand, inner));
                args.push_back(value);
            }
            HLO_ASSIGN_OR_RETURN(std::vector<Value*> results,
                                 callScalar(*computation, args, false));
            if (results.size() != 1)
                return unsupportedAt(instruction, "map computation with a tuple result");
            return results.front();
        }
        case HloOpcode::kReduceWindow:
            return genReduceWindow(instruction, index);
        case HloOpcode::kConvolution:
            return genConvolution(instruction, index);
        case HloOpcode::kSelectAndScatter:
            return genSelectAndScatter(instruction, index);
        default:
            break;
    }
    if (isCollective(opcode)) {
        if (m_spec.devices > 1)
            return unsupportedAt(instruction, opName(instruction) + " between devices");
        // One device: the operand itself (or, for a collective-permute
        // whose pairs send nothing to device 0, zeros).
        const HloInstruction& operand = *instruction.operand(0);
        if (instruction.operandCount() != 1 || !operand.shape().isArray() ||
            operand.shape().dimensions() != shape.dimensions() ||
            operand.shape().elementType() != type)
            return unsupportedAt(instruction,
                                 opName(instruction) + " of several operands or of another shape");
        if (opcode == HloOpcode::kCollectivePermute) {
            HLO_ASSIGN_OR_RETURN(const bool keeps, collectivePermuteKeepsOperand(instruction));
            if (!keeps) return m_elemental.fromIndex(type, c64(0));
            return gen(operand, index);
        }
        if (collectiveParticipantCount(instruction) != 1)
            return unsupportedAt(instruction,
                                 opName(instruction) + " with more than one participant");
        return gen(operand, index);
    }
    return genOther(instruction, index);
}

// bitcast: the operand's physical buffer reinterpreted. The result element
// at `index` sits at physical position p of the result's layout; the
// operand element at physical position p of the operand's layout is it.
StatusOr<Value*> KernelGen::genLayoutBitcast(const HloInstruction& bitcast, const Index& index) {
    const HloInstruction& operand = *bitcast.operand(0);
    const Shape& in = operand.shape();
    const Shape& out = bitcast.shape();
    const PrimitiveType from = in.elementType(), to = out.elementType();
    if (!in.isArray() || in.elementCount() != out.elementCount())
        return unsupportedAt(bitcast, "bitcast that changes the element count");
    if (from != to && (primitive_util::byteWidth(from) != primitive_util::byteWidth(to) ||
                       primitive_util::bitWidth(from) != primitive_util::bitWidth(to) ||
                       from == PrimitiveType::PRED || to == PrimitiveType::PRED ||
                       primitive_util::isSubByte(from) || primitive_util::isSubByte(to)))
        return unsupportedAt(bitcast, "bitcast between element types of different widths");
    if (isTiled(in) || isTiled(out)) return unsupportedAt(bitcast, "bitcast between tiled layouts");
    const std::vector<int64_t> inOrder = minorToMajorOf(in), outOrder = minorToMajorOf(out);
    Value* physical = c64(0);
    for (auto it = outOrder.rbegin(); it != outOrder.rend(); ++it)
        physical = m_b.CreateAdd(m_b.CreateMul(physical, c64(out.dimensions(*it))),
                                 multiOf(index, static_cast<size_t>(*it)));
    Index inner = makeIndex(in.dimensions());
    inner.multi.assign(in.dimensions().size(), nullptr);
    Value* rest = physical;
    for (size_t k = 0; k < inOrder.size(); ++k) {  // minor first
        const int64_t size = in.dimensions(inOrder[k]);
        const bool last = k + 1 == inOrder.size();
        inner.multi[static_cast<size_t>(inOrder[k])] =
            last ? rest : m_b.CreateURem(rest, c64(size));
        if (!last) rest = m_b.CreateUDiv(rest, c64(size));
    }
    if (in.rank() == 0) inner.linear = c64(0);
    HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
    if (from == to) return value;
    return m_elemental.fromRawBits(to, m_elemental.rawBits(from, value));
}

// bitcast-convert: equal widths reinterpret each element; a wider operand
// element splits into the result's minor dimension (low bits first), a
// narrower one is gathered from the operand's minor dimension. A pred is the
// byte 0 or 1, and any nonzero byte reads as true (as in the interpreter).
StatusOr<Value*> KernelGen::genBitcastConvert(const HloInstruction& convert, const Index& index) {
    const HloInstruction& operand = *convert.operand(0);
    const PrimitiveType from = operand.shape().elementType(), to = convert.shape().elementType();
    if (primitive_util::isComplex(from) || primitive_util::isComplex(to))
        return unsupportedAt(convert, "bitcast-convert of complex values");
    auto bitsOf = [&](Value* value) {
        return from == PrimitiveType::PRED ? m_b.CreateZExt(value, m_b.getInt8Ty())
                                           : m_elemental.rawBits(from, value);
    };
    auto fromBits = [&](Value* bits) {
        return to == PrimitiveType::PRED
                   ? m_b.CreateICmpNE(bits, llvm::ConstantInt::get(bits->getType(), 0))
                   : m_elemental.fromRawBits(to, bits);
    };
    const int inBits = primitive_util::bitWidth(from), outBits = primitive_util::bitWidth(to);
    if (inBits == outBits) {
        HLO_ASSIGN_OR_RETURN(Index inner, sameOrScalar(convert, operand, index));
        HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
        return fromBits(bitsOf(value));
    }
    const std::vector<int64_t>& inDims = operand.shape().dimensions();
    if (inBits > outBits) {
        const int64_t ratio = inBits / outBits;
        if (inBits % outBits != 0 || index.dims.empty() || index.dims.back() != ratio ||
            std::vector<int64_t>(index.dims.begin(), index.dims.end() - 1) != inDims)
            return unsupportedAt(convert, "bitcast-convert shapes do not match the bit widths");
        Index inner = makeIndex(inDims);
        for (size_t d = 0; d + 1 < index.dims.size(); ++d) inner.multi.push_back(multiOf(index, d));
        if (inDims.empty()) inner.linear = c64(0);
        HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
        Value* bits = bitsOf(value);
        Value* shift = m_b.CreateMul(multiOf(index, index.dims.size() - 1), c64(outBits));
        Value* part = m_b.CreateLShr(bits, m_b.CreateZExtOrTrunc(shift, bits->getType()));
        return fromBits(m_b.CreateTrunc(part, m_b.getIntNTy(static_cast<unsigned>(outBits))));
    }
    const int64_t ratio = outBits / inBits;
    if (outBits % inBits != 0 || inDims.empty() || inDims.back() != ratio ||
        std::vector<int64_t>(inDims.begin(), inDims.end() - 1) != index.dims)
        return unsupportedAt(convert, "bitcast-convert shapes do not match the bit widths");
    llvm::Type* wide = m_b.getIntNTy(static_cast<unsigned>(outBits));
    Value* combined = llvm::ConstantInt::get(wide, 0);
    for (int64_t j = 0; j < ratio; ++j) {
        Index inner = makeIndex(inDims);
        inner.multi = multiAll(index);
        inner.multi.push_back(c64(j));
        HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, inner));
        Value* part = m_b.CreateZExt(bitsOf(value), wide);
        combined = m_b.CreateOr(
            combined,
            m_b.CreateShl(part, llvm::ConstantInt::get(wide, static_cast<uint64_t>(j * inBits))));
    }
    return fromBits(combined);
}

std::vector<Value*> KernelGen::unflatten(Value* k, const std::vector<int64_t>& sizes) {
    std::vector<Value*> out(sizes.size(), nullptr);
    Value* rest = k;
    for (size_t i = sizes.size(); i-- > 0;) {
        if (sizes[i] == 1) {
            out[i] = c64(0);
            continue;
        }
        out[i] = i == 0 ? rest : m_b.CreateURem(rest, c64(sizes[i]));
        if (i > 0) rest = m_b.CreateUDiv(rest, c64(sizes[i]));
    }
    return out;
}

StatusOr<std::vector<Value*>> KernelGen::emitFold(int64_t count, const std::vector<Value*>& initial,
                                                  const FoldBody& body, const char* name) {
    if (count <= 0) return initial;
    llvm::LLVMContext& context = m_b.getContext();
    llvm::BasicBlock* before = m_b.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, name, m_function);
    llvm::BasicBlock* exit =
        llvm::BasicBlock::Create(context, std::string(name) + ".done", m_function);
    m_b.CreateBr(loop);
    m_b.SetInsertPoint(loop);
    llvm::PHINode* k = m_b.CreatePHI(i64(), 2, "k");
    k->addIncoming(c64(0), before);
    std::vector<Value*> acc;
    std::vector<llvm::PHINode*> phis;
    for (Value* value : initial) {
        llvm::PHINode* phi = m_b.CreatePHI(value->getType(), 2, "acc");
        phi->addIncoming(value, before);
        phis.push_back(phi);
        acc.push_back(phi);
    }
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> next, body(k, acc));
    if (next.size() != phis.size())
        return internalError("emitFold: the body changed the accumulator count");
    llvm::BasicBlock* latch = m_b.GetInsertBlock();
    Value* k1 = m_b.CreateAdd(k, c64(1));
    k->addIncoming(k1, latch);
    for (size_t i = 0; i < phis.size(); ++i) {
        if (next[i]->getType() != phis[i]->getType())
            return internalError("emitFold: the body changed an accumulator's type");
        phis[i]->addIncoming(next[i], latch);
    }
    m_b.CreateCondBr(m_b.CreateICmpSLT(k1, c64(count)), loop, exit);
    m_b.SetInsertPoint(exit);
    return next;
}

StatusOr<std::vector<Value*>> KernelGen::emitIf(
    Value* condition, const std::vector<Value*>& otherwise,
    const std::function<StatusOr<std::vector<Value*>>()>& then, const char* name) {
    llvm::LLVMContext& context = m_b.getContext();
    llvm::BasicBlock* before = m_b.GetInsertBlock();
    llvm::BasicBlock* inside = llvm::BasicBlock::Create(context, name, m_function);
    llvm::BasicBlock* join =
        llvm::BasicBlock::Create(context, std::string(name) + ".join", m_function);
    m_b.CreateCondBr(condition, inside, join);
    m_b.SetInsertPoint(inside);
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> values, then());
    if (values.size() != otherwise.size())
        return internalError("emitIf: branches of different arity");
    llvm::BasicBlock* insideEnd = m_b.GetInsertBlock();
    m_b.CreateBr(join);
    m_b.SetInsertPoint(join);
    std::vector<Value*> results;
    for (size_t i = 0; i < values.size(); ++i) {
        if (values[i]->getType() != otherwise[i]->getType())
            return internalError("emitIf: branches of different types");
        llvm::PHINode* phi = m_b.CreatePHI(values[i]->getType(), 2, name);
        phi->addIncoming(values[i], insideEnd);
        phi->addIncoming(otherwise[i], before);
        results.push_back(phi);
    }
    return results;
}

}  // namespace hloscope::llvm_codegen
