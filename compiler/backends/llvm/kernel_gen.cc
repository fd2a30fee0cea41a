#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "compiler/backends/llvm/kernel_gen_internal.h"
#include "compiler/cost/cost_analysis.h"
#include "compiler/fusion/row_fusion.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"

namespace hloscope::llvm_codegen {

std::string KernelModule::irText() const {
    std::string text;
    llvm::raw_string_ostream stream(text);
    if (module) module->print(stream, nullptr);
    stream.flush();
    return text;
}

using llvm::Value;

Value* KernelGen::linearOf(const Index& index) {
    if (index.linear) return index.linear;
    Value* linear = c64(0);
    for (size_t d = 0; d < index.dims.size(); ++d)
        linear = m_b.CreateAdd(m_b.CreateMul(linear, c64(index.dims[d])), index.multi[d]);
    return linear;
}

Value* KernelGen::multiOf(const Index& index, size_t d) {
    if (!index.multi.empty()) return index.multi[d];
    int64_t stride = 1;
    for (size_t e = d + 1; e < index.dims.size(); ++e) stride *= index.dims[e];
    Value* v = index.linear;
    if (stride != 1) v = m_b.CreateUDiv(v, c64(stride));
    if (d > 0) v = m_b.CreateURem(v, c64(index.dims[d]));
    return v;
}

StatusOr<Index> KernelGen::sameOrScalar(const HloInstruction& user, const HloInstruction& operand,
                                        const Index& index) {
    if (operand.shape().dimensions() == index.dims) return index;
    if (operand.shape().isScalar()) return scalarIndex();
    return unsupportedAt(user,
                         "operand %" + operand.name() + " has other dimensions than the result");
}

Value* KernelGen::load(const HloInstruction& leaf, Value* base, const Index& index) {
    const PrimitiveType type = leaf.shape().elementType();
    llvm::Type* memory = m_elemental.memoryType(type);
    Value* address = m_b.CreateInBoundsGEP(memory, base, linearOf(index));
    Value* value = m_b.CreateLoad(memory, address);
    return m_elemental.fromMemory(type, value);
}

StatusOr<Value*> KernelGen::loadConstant(const HloInstruction& constant, const Index& index) {
    auto found = m_constantValues.find(&constant);
    if (found == m_constantValues.end()) {
        HLO_ASSIGN_OR_RETURN(Literal literal, literalOfConstant(constant));
        found = m_constantValues.emplace(&constant, std::move(literal)).first;
    }
    const Literal& literal = found->second;
    const PrimitiveType type = constant.shape().elementType();
    if (literal.elementCount() == 1) return m_elemental.constant(type, literal, 0);
    auto global = m_constantGlobals.find(&constant);
    if (global == m_constantGlobals.end()) {
        llvm::Type* memory = m_elemental.memoryType(type);
        const auto* bytes = static_cast<const char*>(literal.untypedData());
        llvm::Constant* data = llvm::ConstantDataArray::getRaw(
            llvm::StringRef(bytes, static_cast<size_t>(literal.sizeInBytes())),
            static_cast<uint64_t>(literal.elementCount()), memory);
        auto* variable = new llvm::GlobalVariable(*m_code.module, data->getType(), true,
                                                  llvm::GlobalValue::PrivateLinkage, data,
                                                  "constant." + std::to_string(m_code.constants++));
        variable->setAlignment(llvm::Align(64));
        global = m_constantGlobals.emplace(&constant, variable).first;
    }
    return load(constant, global->second, index);
}

StatusOr<Value*> KernelGen::gen(const HloInstruction& instruction, const Index& index) {
    const auto key = std::make_pair(&instruction, index.id);
    if (auto it = m_cache.find(key); it != m_cache.end()) return it->second.front();
    if (index.id == m_row.elementIndexId && !m_row.rowBuffers.empty())
        if (auto it = m_row.rowBuffers.find(&instruction); it != m_row.rowBuffers.end()) {
            llvm::Type* type = m_elemental.memoryType(instruction.shape().elementType());
            Value* stored =
                m_b.CreateLoad(type, m_b.CreateInBoundsGEP(type, it->second, m_row.column));
            Value* value = m_elemental.fromMemory(instruction.shape().elementType(), stored);
            m_cache[key] = {value};
            return value;
        }
    HLO_ASSIGN_OR_RETURN(Value * value, genUncached(instruction, index));
    m_cache[key] = {value};
    return value;
}

// A dispatch over opcodes: the shape and data-movement ops here, the rest through
// genShared (kernel_gen_ops.cc), the elemental ops through Elemental, anything else through
// the backend's genOther.
StatusOr<Value*> KernelGen::genUncached(const HloInstruction& instruction, const Index& index) {
    if (auto it = m_env.find(&instruction); it != m_env.end()) return it->second;
    if (auto it = m_leafPointers.find(&instruction); it != m_leafPointers.end())
        return load(instruction, it->second, index);
    const Shape& shape = instruction.shape();
    if (instruction.opcode() != HloOpcode::kGetTupleElement) {
        if (!shape.isArray())
            return unsupportedAt(instruction,
                                 "a " + shape.toString(false) + " value inside a kernel");
        // Bounded dynamic dimensions hold their bound, as in the interpreter.
        for (int64_t d = 0; d < shape.rank(); ++d)
            if (shape.isUnboundedDimension(d))
                return unsupportedAt(instruction, "unbounded dynamic shape");
        if (!m_elemental.supported(shape.elementType()))
            return unsupportedAt(
                instruction,
                "element type " + std::string(primitive_util::name(shape.elementType())));
    }
    const HloOpcode opcode = instruction.opcode();
    switch (opcode) {
        case HloOpcode::kParameter:
            return unsupportedAt(instruction, "parameter without a buffer (internal)");
        case HloOpcode::kConstant:
            return loadConstant(instruction, index);
        case HloOpcode::kIota: {
            Value* position = multiOf(index, static_cast<size_t>(instruction.iotaDimension()));
            return m_elemental.fromIndex(shape.elementType(), position);
        }
        case HloOpcode::kBroadcast: {
            const HloInstruction& operand = *instruction.operand(0);
            Index inner = makeIndex(operand.shape().dimensions());
            if (operand.shape().isScalar()) inner.linear = c64(0);
            for (int64_t d : instruction.dimensions())
                inner.multi.push_back(multiOf(index, static_cast<size_t>(d)));
            return gen(operand, inner);
        }
        case HloOpcode::kBitcast:
        case HloOpcode::kReshape: {
            const HloInstruction& operand = *instruction.operand(0);
            if (opcode == HloOpcode::kBitcast &&
                (operand.shape().elementType() != shape.elementType() ||
                 !operand.shape().hasDefaultDenseLayout() || !shape.hasDefaultDenseLayout()))
                return genLayoutBitcast(instruction, index);
            if (operand.shape().dimensions() == index.dims) return gen(operand, index);
            Index inner = makeIndex(operand.shape().dimensions());
            inner.linear = linearOf(index);
            return gen(operand, inner);
        }
        case HloOpcode::kCopy:
            return gen(*instruction.operand(0), index);
        case HloOpcode::kTranspose: {
            const HloInstruction& operand = *instruction.operand(0);
            Index inner = makeIndex(operand.shape().dimensions());
            inner.multi.assign(index.dims.size(), nullptr);
            for (size_t i = 0; i < instruction.dimensions().size(); ++i)
                inner.multi[static_cast<size_t>(instruction.dimensions(static_cast<int64_t>(i)))] =
                    multiOf(index, i);
            return gen(operand, inner);
        }
        case HloOpcode::kSlice: {
            const HloInstruction& operand = *instruction.operand(0);
            Index inner = makeIndex(operand.shape().dimensions());
            const auto& slice = instruction.slice();
            for (size_t d = 0; d < index.dims.size(); ++d) {
                Value* v = multiOf(index, d);
                if (slice[d].stride != 1) v = m_b.CreateMul(v, c64(slice[d].stride));
                if (slice[d].start != 0) v = m_b.CreateAdd(v, c64(slice[d].start));
                inner.multi.push_back(v);
            }
            return gen(operand, inner);
        }
        case HloOpcode::kReverse: {
            const HloInstruction& operand = *instruction.operand(0);
            Index inner = makeIndex(operand.shape().dimensions());
            inner.multi = multiAll(index);
            for (int64_t d : instruction.dimensions())
                inner.multi[static_cast<size_t>(d)] =
                    m_b.CreateSub(c64(index.dims[static_cast<size_t>(d)] - 1),
                                  inner.multi[static_cast<size_t>(d)]);
            return gen(operand, inner);
        }
        case HloOpcode::kBitcastConvert:
            return genBitcastConvert(instruction, index);
        case HloOpcode::kPad:
            return genPad(instruction, index);
        case HloOpcode::kConcatenate:
            return genConcatenate(instruction, index);
        case HloOpcode::kGather:
            return genGather(instruction, index);
        case HloOpcode::kDynamicSlice:
            return genDynamicSlice(instruction, index);
        case HloOpcode::kDynamicUpdateSlice:
            return genDynamicUpdateSlice(instruction, index);
        case HloOpcode::kReduce: {
            if (instruction.shape().isTuple())
                return unsupportedAt(instruction, "variadic reduce used as an array");
            HLO_ASSIGN_OR_RETURN(std::vector<Value*> values, genReduce(instruction, index));
            return values.front();
        }
        case HloOpcode::kGetTupleElement: {
            const HloInstruction& tuple = *instruction.operand(0);
            if (tuple.opcode() != HloOpcode::kReduce && tuple.opcode() != HloOpcode::kReduceWindow)
                return unsupportedAt(instruction, "get-tuple-element of a " +
                                                      std::string(hloOpcodeString(tuple.opcode())));
            HLO_ASSIGN_OR_RETURN(std::vector<Value*> values, genComponents(tuple, index));
            if (instruction.tupleIndex() < 0 ||
                instruction.tupleIndex() >= static_cast<int64_t>(values.size()))
                return unsupportedAt(instruction, "tuple index out of range");
            return values[static_cast<size_t>(instruction.tupleIndex())];
        }
        default:
            break;
    }
    if (isSharedOpcode(opcode)) return genShared(instruction, index);
    if (!isElementalOpcode(opcode)) return genOther(instruction, index);
    std::vector<Value*> operands;
    for (const HloInstruction* operand : instruction.operands()) {
        if (!operand->shape().isArray() || !m_elemental.supported(operand->shape().elementType()))
            return unsupportedAt(instruction, "operand %" + operand->name() + " of type " +
                                                  operand->shape().toString(false));
        HLO_ASSIGN_OR_RETURN(Index inner, sameOrScalar(instruction, *operand, index));
        HLO_ASSIGN_OR_RETURN(Value * value, gen(*operand, inner));
        operands.push_back(value);
    }
    return m_elemental.emit(instruction, operands);
}

StatusOr<std::vector<Value*>> KernelGen::callScalar(const HloComputation& computation,
                                                    const std::vector<Value*>& args,
                                                    bool reassociate) {
    if (static_cast<int64_t>(args.size()) != computation.parameterCount())
        return unsupportedAt(*computation.root(), "reducer arity mismatch");
    for (int64_t i = 0; i < computation.parameterCount(); ++i) {
        if (!computation.parameter(i)->shape().isScalar())
            return unsupportedAt(*computation.parameter(i), "non-scalar reducer parameter");
        m_env[computation.parameter(i)] = args[static_cast<size_t>(i)];
    }
    llvm::IRBuilderBase::FastMathFlagGuard guard(m_b);
    // A reduction's accumulation (reassociable) keeps f16/bf16 sums in f32.
    const bool rounding = m_elemental.setRoundNarrow(!reassociate);
    if (reassociate) {
        llvm::FastMathFlags flags;
        flags.setAllowReassoc();
        flags.setNoSignedZeros();
        m_b.setFastMathFlags(flags);
    }
    Index scalar = scalarIndex();  // a fresh id: nothing cached from another call is reused
    std::vector<Value*> results;
    Status status = Status::ok();
    const HloInstruction* root = computation.root();
    auto genEach = [&](const std::vector<HloInstruction*>& instructions, std::vector<Value*>& out) {
        for (const HloInstruction* instruction : instructions) {
            auto value = gen(*instruction, scalar);
            if (!value.isOk()) return value.status();
            out.push_back(*value);
        }
        return Status::ok();
    };
    const HloComputation* callee =
        root->opcode() == HloOpcode::kFusion ? root->fusedComputation()
        : root->opcode() == HloOpcode::kCall && root->calledComputations().size() == 1
            ? root->calledComputations().front()
            : nullptr;
    if (callee) {
        // A reducer that calls a computation (XLA fuses an argmax reducer's body into a
        // fusion returning the (value, index) pair): its operands, then the callee on them.
        std::vector<Value*> operands;
        status = genEach(root->operands(), operands);
        if (status.isOk()) {
            auto values = callScalar(*callee, operands, reassociate);
            if (values.isOk())
                results = std::move(*values);
            else
                status = values.status();
        }
    } else if (root->opcode() == HloOpcode::kTuple) {
        status = genEach(root->operands(), results);
    } else {
        auto value = gen(*root, scalar);
        if (value.isOk())
            results.push_back(*value);
        else
            status = value.status();
    }
    for (int64_t i = 0; i < computation.parameterCount(); ++i)
        m_env.erase(computation.parameter(i));
    m_elemental.setRoundNarrow(rounding);
    if (!status.isOk()) return status;
    return results;
}

namespace {

// Whether computing `instruction` (within its fused computation) involves a
// transcendental function: worth keeping rather than recomputing.
bool costsTranscendentals(const HloInstruction& instruction) {
    // Each instruction once: fused computations are DAGs with shared operands.
    std::vector<const HloInstruction*> stack = {&instruction};
    std::unordered_set<const HloInstruction*> seen;
    while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        if (!seen.insert(x).second) continue;
        if (CostAnalysis::isTranscendental(x->opcode())) return true;
        if (x->opcode() == HloOpcode::kReduce || x->opcode() == HloOpcode::kParameter) continue;
        for (const HloInstruction* operand : x->operands()) stack.push_back(operand);
    }
    return false;
}

constexpr int64_t kMaxRowBufferBytes = 64 << 10;

}  // namespace

Value* KernelGen::rowBufferFor(const HloInstruction& reduce, const Index& index) {
    // Hoisted, one input over the kernel's own rows, at this row.
    if (!m_spec.rowBuffers || !m_row.hoistEnd || reduce.operandCount() != 2 || m_row.dims.empty())
        return nullptr;
    const HloInstruction& operand = *reduce.operand(0);
    if (operand.shape().dimensions() != m_row.dims || reduce.dimensions().size() != 1 ||
        reduce.dimensions(0) != static_cast<int64_t>(m_row.dims.size()) - 1 ||
        index.multi != m_row.outer)
        return nullptr;
    if (m_row.rowBuffers.count(&operand) || !costsTranscendentals(operand)) return nullptr;
    const PrimitiveType type = operand.shape().elementType();
    const int64_t rowLength = m_row.dims.back();
    if (rowLength * primitive_util::byteWidth(type) > kMaxRowBufferBytes) return nullptr;
    llvm::IRBuilder<> entry(m_row.entry, m_row.entry->begin());
    llvm::AllocaInst* buffer =
        entry.CreateAlloca(m_elemental.memoryType(type), c64(rowLength), "row.buffer");
    buffer->setAlignment(llvm::Align(64));
    m_row.rowBuffers[&operand] = buffer;
    return buffer;
}

// Generates every row broadcast of the kernel (fusion::isRowBroadcast) at the
// element index first, so the reductions under them are hoisted, and their
// row buffers set up, before the element loop asks for what they keep.
Status KernelGen::hoistRowBroadcasts(const Index& element) {
    if (m_row.dims.size() < 2) return Status::ok();
    std::vector<const HloInstruction*> stack(m_spec.outputs.begin(), m_spec.outputs.end());
    std::unordered_set<const HloInstruction*> seen;
    std::vector<const HloInstruction*> broadcasts;
    while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        if (!seen.insert(x).second || m_leafPointers.count(x)) continue;
        if (fusion::isRowBroadcast(*x, m_row.dims)) broadcasts.push_back(x);
        for (const HloInstruction* operand : x->operands()) stack.push_back(operand);
    }
    for (const HloInstruction* broadcast : broadcasts)
        HLO_RETURN_IF_ERROR(gen(*broadcast, element).status());
    return Status::ok();
}

StatusOr<std::vector<Value*>> KernelGen::genReduce(const HloInstruction& reduce,
                                                   const Index& index) {
    const auto key = std::make_pair(&reduce, index.id);
    if (auto it = m_cache.find(key); it != m_cache.end()) return it->second;
    if (!m_row.hoistEnd || !rowInvariant(index)) {
        HLO_ASSIGN_OR_RETURN(std::vector<Value*> results, genReduceLoop(reduce, index));
        m_cache[key] = results;
        return results;
    }
    // Once per row: emitted in a block chain of its own that is appended to
    // the row preamble (a reduction it needs first appends itself before).
    auto hoistedKey = std::make_pair(&reduce, index.multi);
    if (auto it = m_row.hoisted.find(hoistedKey); it != m_row.hoisted.end()) return it->second;
    llvm::IRBuilderBase::InsertPoint saved = m_b.saveIP();
    llvm::BasicBlock* start = llvm::BasicBlock::Create(m_b.getContext(), "row.reduce", m_function);
    m_b.SetInsertPoint(start);
    // Only the row-invariant coordinates: a linear index the caller carried
    // along (a reshape to a scalar keeps the element's) belongs to the row.
    Index rowIndex = makeIndex(index.dims);
    rowIndex.multi = index.multi;
    if (index.dims.empty()) rowIndex.linear = c64(0);
    auto results = genHoistedReduce(reduce, rowIndex);
    llvm::BasicBlock* finish = m_b.GetInsertBlock();
    m_b.SetInsertPoint(m_row.hoistEnd);
    m_b.CreateBr(start);
    m_row.hoistEnd = finish;
    m_b.restoreIP(saved);
    if (!results.isOk()) return results.status();
    m_row.hoisted[hoistedKey] = *results;
    return *results;
}

StatusOr<std::vector<Value*>> KernelGen::genReduceLoop(const HloInstruction& reduce,
                                                       const Index& index) {
    const HloComputation* reducer = reduce.toApply();
    if (!reducer) return unsupportedAt(reduce, "reduce without to_apply");
    const int64_t n = reduce.operandCount() / 2;
    const HloInstruction& first = *reduce.operand(0);
    const std::vector<int64_t>& inDims = first.shape().dimensions();
    std::vector<int64_t> reduced = reduce.dimensions();
    std::sort(reduced.begin(), reduced.end());
    std::vector<bool> isReduced(inDims.size(), false);
    for (int64_t d : reduced) isReduced[static_cast<size_t>(d)] = true;
    int64_t reducedCount = 1;
    for (int64_t d : reduced) reducedCount *= inDims[static_cast<size_t>(d)];
    bool trailing = true;
    for (size_t i = 0; i < reduced.size(); ++i)
        trailing =
            trailing && reduced[i] == static_cast<int64_t>(inDims.size() - reduced.size() + i);

    std::vector<Value*> inits;
    for (int64_t k = 0; k < n; ++k) {
        const HloInstruction& init = *reduce.operand(n + k);
        if (!init.shape().isScalar()) return unsupportedAt(reduce, "non-scalar init value");
        HLO_ASSIGN_OR_RETURN(Value * value, gen(init, scalarIndex()));
        inits.push_back(value);
    }
    bool isOutput = &reduce == m_sharedReduce;
    for (size_t k = 0; m_outputsAreReduces && k < m_spec.outputs.size(); ++k)
        isOutput = isOutput || reduceOf(k) == &reduce;
    Value* lo = isOutput ? m_reducedBegin : c64(0);
    Value* hi = isOutput ? m_reducedEnd : c64(reducedCount);
    // Kept dimensions' positions, and the linear base of the trailing form.
    std::vector<Value*> kept = multiAll(index);
    Value* base = trailing ? m_b.CreateMul(linearOf(index), c64(reducedCount)) : nullptr;

    llvm::BasicBlock* guardBlock = m_b.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(m_b.getContext(), "reduce.loop", m_function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(m_b.getContext(), "reduce.exit", m_function);
    m_b.CreateCondBr(m_b.CreateICmpSLT(lo, hi), loop, exit);
    m_b.SetInsertPoint(loop);
    llvm::PHINode* r = m_b.CreatePHI(i64(), 2, "r");
    r->addIncoming(lo, guardBlock);
    std::vector<llvm::PHINode*> accumulators;
    for (Value* init : inits) {
        llvm::PHINode* phi = m_b.CreatePHI(init->getType(), 2, "acc");
        phi->addIncoming(init, guardBlock);
        accumulators.push_back(phi);
    }
    Index input = makeIndex(inDims);
    input.multi.assign(inDims.size(), nullptr);
    {
        Value* rest = r;
        for (size_t i = reduced.size(); i-- > 0;) {
            const int64_t size = inDims[static_cast<size_t>(reduced[i])];
            input.multi[static_cast<size_t>(reduced[i])] =
                i == 0 ? rest : m_b.CreateURem(rest, c64(size));
            if (i > 0) rest = m_b.CreateUDiv(rest, c64(size));
        }
        size_t next = 0;
        for (size_t d = 0; d < inDims.size(); ++d)
            if (!isReduced[d]) input.multi[d] = kept[next++];
        if (trailing) input.linear = m_b.CreateAdd(base, r);
    }
    Value* rowBuffer = rowBufferFor(reduce, index);
    std::vector<Value*> args(accumulators.begin(), accumulators.end());
    for (int64_t k = 0; k < n; ++k) {
        const HloInstruction& operand = *reduce.operand(k);
        if (operand.shape().dimensions() != inDims)
            return unsupportedAt(reduce, "inputs of different shapes");
        HLO_ASSIGN_OR_RETURN(Value * value, gen(operand, input));
        if (rowBuffer) {
            const PrimitiveType type = operand.shape().elementType();
            m_b.CreateStore(m_elemental.toMemory(type, value),
                            m_b.CreateInBoundsGEP(m_elemental.memoryType(type), rowBuffer, r));
        }
        args.push_back(value);
    }
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> next, callScalar(*reducer, args, true));
    if (static_cast<int64_t>(next.size()) != n)
        return unsupportedAt(reduce, "reducer result arity mismatch");
    Value* r1 = m_b.CreateAdd(r, c64(isOutput ? m_reducedStep : 1));
    llvm::BasicBlock* latch = m_b.GetInsertBlock();
    m_b.CreateCondBr(m_b.CreateICmpSLT(r1, hi), loop, exit);
    r->addIncoming(r1, latch);
    for (int64_t k = 0; k < n; ++k) {
        if (next[static_cast<size_t>(k)]->getType() !=
            accumulators[static_cast<size_t>(k)]->getType())
            return unsupportedAt(reduce, "reducer changes the accumulator type");
        accumulators[static_cast<size_t>(k)]->addIncoming(next[static_cast<size_t>(k)], latch);
    }
    m_b.SetInsertPoint(exit);
    std::vector<Value*> results;
    for (int64_t k = 0; k < n; ++k) {
        llvm::PHINode* phi = m_b.CreatePHI(inits[static_cast<size_t>(k)]->getType(), 2, "reduced");
        phi->addIncoming(inits[static_cast<size_t>(k)], guardBlock);
        phi->addIncoming(next[static_cast<size_t>(k)], latch);
        // A shared reduce's partials stay unrounded until they are combined.
        results.push_back(&reduce == m_sharedReduce || (isOutput && !m_roundOutputPartials)
                              ? static_cast<Value*>(phi)
                              : m_elemental.roundTo(reduce.operand(k)->shape().elementType(), phi));
    }
    return results;
}

StatusOr<KernelGen::OutputReductions> KernelGen::checkOutputs() const {
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        const Shape& shape = m_spec.outputs[k]->shape();
        const int c = component(k);
        if (c >= 0 ? (!shape.isTuple() || c >= shape.tupleCount() ||
                      !shape.tupleShape(c).isArray() || !isVariadicReduction(*m_spec.outputs[k]))
                   : !shape.isArray())
            return unsupportedAt(*m_spec.outputs[k],
                                 "kernel output of shape " + shape.toString(false));
    }
    const std::vector<int64_t>& dims = outputShape(0).dimensions();
    OutputReductions reductions;
    bool counted = false;
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) {
        if (outputShape(k).dimensions() != dims)
            return unsupportedAt(*m_spec.outputs[k], "kernel outputs of different shapes");
        const HloInstruction* reduce = reduceOf(k);
        if (!reduce) {
            reductions.allReduces = false;
            continue;
        }
        const int64_t rank = reduce->operand(0)->shape().rank();
        std::vector<int64_t> sorted = reduce->dimensions();
        std::sort(sorted.begin(), sorted.end());
        int64_t count = 1;
        for (size_t i = 0; i < sorted.size(); ++i) {
            count *= reduce->operand(0)->shape().dimensions(sorted[i]);
            reductions.trailing = reductions.trailing &&
                                  sorted[i] == rank - static_cast<int64_t>(sorted.size() - i);
        }
        if (counted && count != reductions.reducedElements) reductions.allReduces = false;
        reductions.reducedElements = counted ? std::max(reductions.reducedElements, count) : count;
        counted = true;
    }
    return reductions;
}

StatusOr<std::map<const HloInstruction*, std::vector<size_t>>> KernelGen::reduceGroups() const {
    std::map<const HloInstruction*, std::vector<size_t>> groups;
    for (size_t k = 0; k < m_spec.outputs.size(); ++k) groups[reduceOf(k)].push_back(k);
    for (const auto& [reduce, slots] : groups) {
        if (static_cast<int64_t>(slots.size()) != reduce->operandCount() / 2)
            return unsupportedAt(*reduce, "partial variadic outputs");
        for (size_t j = 0; j < slots.size(); ++j) {
            const HloInstruction* output = m_spec.outputs[slots[j]];
            const int expected = output->opcode() == HloOpcode::kGetTupleElement
                                     ? static_cast<int>(output->tupleIndex())
                                     : std::max(component(slots[j]), 0);
            if (expected != static_cast<int>(j))
                return unsupportedAt(*reduce, "variadic outputs out of order");
        }
    }
    return groups;
}

}  // namespace hloscope::llvm_codegen
