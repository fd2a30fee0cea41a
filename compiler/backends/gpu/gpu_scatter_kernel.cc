// The GPU's scatter kernel (GpuKernelGen::emitScatter): one thread per update
// element, which finds its operand position (XLA's rule: a window that does
// not fit is skipped) and combines atomically into an output the plan has
// initialised with the operand (gpu_plan.cc); and dynamic-update-slice in place
// (emitUpdateInPlace), the same walk over the update with clamped starts.
#include <llvm/IR/Constants.h>

#include <algorithm>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::gpu_internal {

// Atomic read-modify-write: add as one atomic instruction, overwrite as a
// store, any other reducer in a compare-and-swap loop.
Status GpuKernelGen::emitAtomicCombine(const HloComputation& reducer, PrimitiveType type,
                                       Value* address, Value* value) {
    const HloInstruction* root = reducer.root();
    if (reducer.parameterCount() != 2)
        return unsupportedAt(*root, "scatter combiner with other than two parameters");
    llvm::Type* memory = m_elemental.memoryType(type);
    const bool isFloat = primitive_util::isFloatingPoint(type);
    if (root == reducer.parameter(1)) {
        m_b.CreateStore(m_elemental.toMemory(type, value), address);
        return Status::ok();
    }
    const bool plainAdd = root->opcode() == HloOpcode::kAdd && root->operandCount() == 2 &&
                          root->operand(0)->opcode() == HloOpcode::kParameter &&
                          root->operand(1)->opcode() == HloOpcode::kParameter &&
                          root->operand(0) != root->operand(1);
    const unsigned bits =
        static_cast<unsigned>(m_code.module->getDataLayout().getTypeSizeInBits(memory));
    if (plainAdd && (type == PrimitiveType::F32 || type == PrimitiveType::F64 ||
                     (primitive_util::isInteger(type) && bits >= 32))) {
        m_b.CreateAtomicRMW(isFloat ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add, address,
                            m_elemental.toMemory(type, value), llvm::MaybeAlign(bits / 8),
                            llvm::AtomicOrdering::Monotonic);
        return Status::ok();
    }
    // 8- and 16-bit elements: LLVM's NVPTX backend widens their compare-and-swap to the
    // aligned 32-bit word around them (masking the neighbours in).
    if (primitive_util::isComplex(type))
        return unsupportedAt(*root, "scatter combiner on " +
                                        std::string(primitive_util::name(type)) +
                                        " elements (atomic updates need one 8- to 64-bit word)");
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
        return unsupportedAt(*root, "scatter combiner on " +
                                        std::string(primitive_util::name(type)) +
                                        " elements (atomic updates need 8 to 64 bits)");
    llvm::Type* integer = m_b.getIntNTy(bits);
    auto toBits = [&](Value* v) {
        Value* stored = m_elemental.toMemory(type, v);
        return stored->getType()->isIntegerTy() ? stored : m_b.CreateBitCast(stored, integer);
    };
    auto fromBits = [&](Value* v) {
        return m_elemental.fromMemory(type,
                                      memory->isIntegerTy() ? v : m_b.CreateBitCast(v, memory));
    };
    llvm::LLVMContext& context = m_b.getContext();
    Value* initial = m_b.CreateLoad(integer, address);
    llvm::BasicBlock* before = m_b.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, "cas", m_function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(context, "cas.done", m_function);
    m_b.CreateBr(loop);
    m_b.SetInsertPoint(loop);
    llvm::PHINode* old = m_b.CreatePHI(integer, 2, "old");
    old->addIncoming(initial, before);
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> combined,
                         callScalar(reducer, {fromBits(old), value}, false));
    Value* exchange =
        m_b.CreateAtomicCmpXchg(address, old, toBits(combined.front()), llvm::MaybeAlign(bits / 8),
                                llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
    Value* seen = m_b.CreateExtractValue(exchange, 0);
    old->addIncoming(seen, m_b.GetInsertBlock());
    m_b.CreateCondBr(m_b.CreateExtractValue(exchange, 1), exit, loop);
    m_b.SetInsertPoint(exit);
    return Status::ok();
}

// The outputs' elements at `linear` replaced by the combiner of them and the
// updates' elements at `update` (one thread: plain loads and stores).
Status GpuKernelGen::combineInOrder(const HloInstruction& scatter, int64_t count,
                                    const std::vector<Value*>& params, Value* linear,
                                    const Index& update) {
    std::vector<Value*> arguments, addresses;
    std::vector<PrimitiveType> types;
    for (int64_t k = 0; k < count; ++k) {
        const PrimitiveType type = scatter.shape().tupleShape(k).elementType();
        Value* address = m_b.CreateInBoundsGEP(m_elemental.memoryType(type),
                                               params[static_cast<size_t>(k)], linear);
        arguments.push_back(
            m_elemental.fromMemory(type, m_b.CreateLoad(m_elemental.memoryType(type), address)));
        addresses.push_back(address);
        types.push_back(type);
    }
    for (int64_t k = 0; k < count; ++k) {
        HLO_ASSIGN_OR_RETURN(Value * value, gen(*scatter.operand(count + 1 + k), update));
        arguments.push_back(value);
    }
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> combined,
                         callScalar(*scatter.toApply(), arguments, false));
    if (combined.size() != static_cast<size_t>(count))
        return unsupportedAt(scatter, "scatter combiner without one result per operand");
    for (int64_t k = 0; k < count; ++k)
        m_b.CreateStore(
            m_elemental.toMemory(types[static_cast<size_t>(k)], combined[static_cast<size_t>(k)]),
            addresses[static_cast<size_t>(k)]);
    return Status::ok();
}

// Where update element `update` of `scatter` goes in the operand: whether its
// window fits (XLA's rule: one that does not is skipped) and the element's
// row-major position. `windowOperandDims` are the operand dimensions of the
// window, `extent` the window's size in every operand dimension.
StatusOr<std::pair<Value*, Value*>> GpuKernelGen::scatterTarget(
    const HloInstruction& scatter, const Index& update,
    const std::vector<int64_t>& windowOperandDims, const std::vector<int64_t>& extent) {
    const ScatterDimensionNumbers* numbers = scatter.scatterDimensionNumbers();
    const int64_t count = scatter.operandCount() / 2;
    const std::vector<int64_t>& opDims = scatter.operand(0)->shape().dimensions();
    const int64_t opRank = static_cast<int64_t>(opDims.size());
    std::vector<Value*> scatterPositions;
    for (size_t d = 0; d < update.dims.size(); ++d)
        if (std::find(numbers->updateWindowDims.begin(), numbers->updateWindowDims.end(),
                      static_cast<int64_t>(d)) == numbers->updateWindowDims.end())
            scatterPositions.push_back(multiOf(update, d));
    IndexedWindow window;
    window.indices = scatter.operand(count);
    window.indexVectorDim = numbers->indexVectorDim;
    window.indexMap = &numbers->scatterDimsToOperandDims;
    window.indexMapName = "scatter_dims_to_operand_dims";
    window.operandBatchingDims = &numbers->inputBatchingDims;
    window.indicesBatchingDims = &numbers->scatterIndicesBatchingDims;
    // Unclamped: a window that does not fit is skipped.
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> startAt,
                         windowStart(scatter, window, opRank, scatterPositions, {}, {}));
    Value* fits = m_b.getTrue();
    Value* linear = c64(0);
    size_t next = 0;
    for (int64_t d = 0; d < opRank; ++d) {
        Value* first = startAt[static_cast<size_t>(d)];
        fits = m_b.CreateAnd(
            fits, m_b.CreateAnd(m_b.CreateICmpSGE(first, c64(0)),
                                m_b.CreateICmpSLE(first, c64(opDims[static_cast<size_t>(d)] -
                                                             extent[static_cast<size_t>(d)]))));
        Value* position = first;
        if (next < windowOperandDims.size() && windowOperandDims[next] == d)
            position = m_b.CreateAdd(
                position, multiOf(update, static_cast<size_t>(numbers->updateWindowDims[next++])));
        linear =
            m_b.CreateAdd(m_b.CreateMul(linear, c64(opDims[static_cast<size_t>(d)])), position);
    }
    return std::make_pair(fits, linear);
}

// scatter (batching dimensions too) into outputs the plan has initialised with
// the operands: one thread per update element, which finds its operand
// position (XLA's rule: a window that does not fit is skipped) and combines
// atomically; with several operands (their elements combined together, which
// no atomic does) one thread applying every update in order, as the
// interpreter does.
StatusOr<GpuKernelInfo> GpuKernelGen::emitScatter(GpuKernelInfo info) {
    const HloInstruction& scatter = *m_spec.outputs[0];
    const ScatterDimensionNumbers* numbers = scatter.scatterDimensionNumbers();
    const int64_t count = scatter.operandCount() / 2;
    if (!numbers || count < 1 || scatter.operandCount() != 2 * count + 1 || !scatter.toApply())
        return unsupportedAt(scatter, "scatter without operands, indices, updates and to_apply");
    if (numbers->inputBatchingDims.size() != numbers->scatterIndicesBatchingDims.size())
        return unsupportedAt(scatter, "batching dimension counts differ");
    const bool serial = count > 1;
    const HloInstruction& operand = *scatter.operand(0);
    const HloInstruction& indices = *scatter.operand(count);
    const HloInstruction& updates = *scatter.operand(count + 1);
    const PrimitiveType type =
        serial ? PrimitiveType::PRIMITIVE_TYPE_INVALID : scatter.shape().elementType();
    const PrimitiveType indexType = indices.shape().elementType();
    if (!primitive_util::isInteger(indexType))
        return unsupportedAt(scatter, "non-integer scatter indices");
    const std::vector<int64_t>& opDims = operand.shape().dimensions();
    const std::vector<int64_t>& updDims = updates.shape().dimensions();
    const int64_t opRank = static_cast<int64_t>(opDims.size());
    auto contains = [](const std::vector<int64_t>& dims, int64_t d) {
        return std::find(dims.begin(), dims.end(), d) != dims.end();
    };
    std::vector<int64_t> windowOperandDims;
    for (int64_t d = 0; d < opRank; ++d)
        if (!contains(numbers->insertedWindowDims, d) && !contains(numbers->inputBatchingDims, d))
            windowOperandDims.push_back(d);
    if (windowOperandDims.size() != numbers->updateWindowDims.size())
        return unsupportedAt(scatter, "update_window_dims do not match the operand");
    std::vector<int64_t> extent(static_cast<size_t>(opRank), 1);
    for (size_t i = 0; i < windowOperandDims.size(); ++i)
        extent[static_cast<size_t>(windowOperandDims[i])] =
            updDims[static_cast<size_t>(numbers->updateWindowDims[i])];

    info.kind = GpuKernelKind::kLoop;
    const int64_t n = product(updDims);
    info.outputElements = n;
    if (serial) {  // one warp, of which thread 0 works
        info.launch.block = {32, 1, 1};
        info.launch.grid = {1, 1, 1};
    } else {
        info.launch = loopLaunch(n);
    }
    m_outputsAreReduces = false;
    std::vector<Value*> params = beginEntry(
        m_spec.name, static_cast<size_t>(count) + m_spec.leaves.size(), info.launch.block[0]);
    bindLeaves(params, static_cast<size_t>(count));
    llvm::LLVMContext& context = m_b.getContext();
    GridLoop loop = beginGridLoop(n, "update", serial);
    llvm::PHINode* u = loop.position;
    Index update = makeIndex(updDims);
    update.linear = updDims.empty() ? c64(0) : u;
    auto target = scatterTarget(scatter, update, windowOperandDims, extent);
    if (!target.isOk()) {
        erasePartial();
        return target.status();
    }
    const auto [fits, linear] = *target;
    llvm::BasicBlock* apply = llvm::BasicBlock::Create(context, "apply", m_function);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(context, "next", m_function);
    m_b.CreateCondBr(fits, apply, next);
    m_b.SetInsertPoint(apply);
    Status combined =
        serial ? combineInOrder(scatter, count, params, linear, update) : Status::ok();
    if (!serial) {
        auto value = gen(updates, update);
        combined = value.isOk()
                       ? emitAtomicCombine(
                             *scatter.toApply(), type,
                             m_b.CreateInBoundsGEP(m_elemental.memoryType(type), params[0], linear),
                             *value)
                       : value.status();
    }
    if (!combined.isOk()) {
        erasePartial();
        return combined;
    }
    m_b.CreateBr(next);
    m_b.SetInsertPoint(next);
    endGridLoop(loop, n);
    m_b.CreateRetVoid();
    return info;
}

// dynamic-update-slice whose output buffer is its operand's (a loop's state, gpu_plan.cc): one
// thread per update element stores it at start + its index, each start clamped so that the
// update fits, as the operation defines; the operand's other elements are left as they are.
StatusOr<GpuKernelInfo> GpuKernelGen::emitUpdateInPlace(GpuKernelInfo info) {
    const HloInstruction& dus = *m_spec.outputs[0];
    const Shape& shape = dus.shape();
    const HloInstruction& update = *dus.operand(1);
    const std::vector<int64_t>& dims = shape.dimensions();
    const std::vector<int64_t>& updDims = update.shape().dimensions();
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (!shape.isArray() || updDims.size() != dims.size() || dus.operandCount() != 2 + rank)
        return unsupportedAt(dus, "dynamic-update-slice whose update or starts do not match");
    info.kind = GpuKernelKind::kLoop;
    const int64_t n = product(updDims);
    info.outputElements = n;
    info.launch = loopLaunch(n);
    m_outputsAreReduces = false;
    std::vector<Value*> params =
        beginEntry(m_spec.name, 1 + m_spec.leaves.size(), info.launch.block[0]);
    bindLeaves(params, 1);
    GridLoop loop = beginGridLoop(n, "update");
    Index at = makeIndex(updDims);
    at.linear = updDims.empty() ? c64(0) : loop.position;
    Value* linear = c64(0);
    for (int64_t d = 0; d < rank; ++d) {
        const HloInstruction& start = *dus.operand(2 + d);
        Index scalar = makeIndex({});
        scalar.linear = c64(0);
        auto raw = gen(start, scalar);
        if (!raw.isOk()) {
            erasePartial();
            return raw.status();
        }
        const bool isSigned = primitive_util::isSignedInteger(start.shape().elementType());
        Value* first =
            isSigned ? m_b.CreateSExtOrTrunc(*raw, i64()) : m_b.CreateZExtOrTrunc(*raw, i64());
        const int64_t last =
            std::max<int64_t>(dims[static_cast<size_t>(d)] - updDims[static_cast<size_t>(d)], 0);
        if (isSigned) first = m_b.CreateSelect(m_b.CreateICmpSLT(first, c64(0)), c64(0), first);
        first = m_b.CreateSelect(
            isSigned ? m_b.CreateICmpSGT(first, c64(last)) : m_b.CreateICmpUGT(first, c64(last)),
            c64(last), first);
        linear = m_b.CreateAdd(m_b.CreateMul(linear, c64(dims[static_cast<size_t>(d)])),
                               m_b.CreateAdd(first, multiOf(at, static_cast<size_t>(d))));
    }
    auto value = gen(update, at);
    if (!value.isOk()) {
        erasePartial();
        return value.status();
    }
    const PrimitiveType type = shape.elementType();
    m_b.CreateStore(m_elemental.toMemory(type, *value),
                    m_b.CreateInBoundsGEP(m_elemental.memoryType(type), params[0], linear));
    endGridLoop(loop, n);
    m_b.CreateRetVoid();
    return info;
}

}  // namespace hloscope::gpu_internal
