// Internal to the LLVM backends (compiler/backends/llvm, cpu and gpu .cc
// files; LLVM-typed): KernelGen, the element generator both backends' kernels
// are made of: an instruction's value at an index, computed from its
// operands' values at mapped indices (XLA's elemental emitter), reductions as
// loops. A fused producer chain never touches memory; indices carry the
// row-major linear index where it is known (elementwise ops, reshapes), so
// chains of those read their leaves contiguously.
//
// The backends derive their kernel shapes from it: the CPU's CpuKernelGen
// (cpu_kernel_gen_internal.h) drives it over rows, the GPU's GpuKernelGen
// (gpu_kernel_gen_internal.h) over one element per thread, with reductions
// split across the threads of a block (reducedStep). kernel_gen.cc holds the
// generator's core (indices, loads, constants, shape ops, reductions, row
// hoisting), kernel_gen_indexing.cc pad, concatenate, gather, dynamic-slice
// and dynamic-update-slice, kernel_gen_ops.cc collectives on one device, map,
// bitcasts and the loop helpers, kernel_gen_window.cc reduce-window,
// convolution and select-and-scatter. Never include this from a header that
// is not itself internal.
#pragma once

#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/backends/llvm/elemental_ir.h"
#include "compiler/backends/llvm/kernel_spec.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope::llvm_codegen {

// The LLVM module a backend's emitter fills with kernels, and its counters.
struct KernelModule {
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;  // declared after its context: destroyed first
    int64_t kernels = 0;
    int64_t constants = 0;
    bool compiled = false;

    // The LLVM IR emitted so far (before optimisation); empty once compiled away.
    std::string irText() const;
};

using llvm::Value;

inline Status unsupportedAt(const HloInstruction& instruction, const std::string& why) {
    return Status(StatusCode::kUnimplemented, "%" + instruction.name() + ": " + why);
}

// An index into an array of `dims`: the multi-dimensional index, the
// row-major linear one, or both. `id` keys the value cache:
// values generated at one index object are reused for equal ids only.
struct Index {
    std::vector<int64_t> dims;
    std::vector<Value*> multi;  // empty when only `linear` is known (and rank > 0)
    Value* linear = nullptr;
    int id = 0;
};

class KernelGen {
public:
    KernelGen(KernelModule& code, const KernelSpec& spec)
        : m_code(code), m_spec(spec), m_b(*code.context), m_elemental(m_b, *code.module) {}
    virtual ~KernelGen() = default;

protected:
    llvm::Type* i64() { return m_b.getInt64Ty(); }
    Value* c64(int64_t v) { return m_b.getInt64(static_cast<uint64_t>(v)); }
    Index makeIndex(std::vector<int64_t> dims) {
        Index index;
        index.dims = std::move(dims);
        index.id = m_nextId++;
        return index;
    }
    Index scalarIndex() {
        Index index = makeIndex({});
        index.linear = c64(0);
        return index;
    }
    Value* linearOf(const Index& index);
    Value* multiOf(const Index& index, size_t d);
    std::vector<Value*> multiAll(const Index& index) {
        std::vector<Value*> out;
        for (size_t d = 0; d < index.dims.size(); ++d) out.push_back(multiOf(index, d));
        return out;
    }
    // The index of `operand` of an elementwise-class instruction of `index`'s
    // dimensions: the same one, or the scalar index for a scalar operand.
    StatusOr<Index> sameOrScalar(const HloInstruction& user, const HloInstruction& operand,
                                 const Index& index);

    StatusOr<Value*> gen(const HloInstruction& instruction, const Index& index);
    int component(size_t k) const {
        return k < m_spec.outputComponents.size() ? m_spec.outputComponents[k] : -1;
    }
    // The reduce behind output k (itself, a get-tuple-element's operand, or a
    // variadic reduce's component), or nullptr.
    const HloInstruction* reduceOf(size_t k) const {
        const HloInstruction* output = m_spec.outputs[k];
        if (output->opcode() == HloOpcode::kGetTupleElement) output = output->operand(0);
        return output->opcode() == HloOpcode::kReduce ? output : nullptr;
    }
    // Output k's array shape (a variadic reduce's component, or the output's own).
    const Shape& outputShape(size_t k) const { return m_spec.outputShape(k); }
    StatusOr<Value*> genUncached(const HloInstruction& instruction, const Index& index);
    // An op the shared generator does not know (dot, custom-call, ...): a
    // backend's own lowering, or an error naming the instruction and the backend.
    virtual StatusOr<Value*> genOther(const HloInstruction& instruction, const Index& index) = 0;
    StatusOr<std::vector<Value*>> genReduce(const HloInstruction& reduce, const Index& index);
    StatusOr<std::vector<Value*>> callScalar(const HloComputation& computation,
                                             const std::vector<Value*>& args, bool reassociate);
    StatusOr<Value*> loadConstant(const HloInstruction& constant, const Index& index);
    Value* load(const HloInstruction& leaf, Value* base, const Index& index);
    StatusOr<Value*> genPad(const HloInstruction& pad, const Index& index);
    StatusOr<Value*> genConcatenate(const HloInstruction& concat, const Index& index);
    StatusOr<Value*> genGather(const HloInstruction& gather, const Index& index);
    StatusOr<Value*> genDynamicSlice(const HloInstruction& slice, const Index& index);
    StatusOr<Value*> genDynamicUpdateSlice(const HloInstruction& dus, const Index& index);
    // Start index `d` (i64, not yet clamped) of a dynamic-slice or
    // dynamic-update-slice whose start operands begin at operand `first`:
    // one integer scalar (or one-element array) per dimension, or one index
    // vector, as the interpreter reads them.
    StatusOr<Value*> startIndex(const HloInstruction& instruction, int64_t first, int64_t d);
    // Where the operand window of a gather's slice or a scatter's update starts (XLA's rule,
    // as the evaluator reads it), one i64 per operand dimension: for dimension indexMap[k],
    // component k of the index vector read from `indices` at `positions` (a gather's batch
    // positions of its result, a scatter's scatter positions of its update, in order) passed
    // through `clampStart(dim, start)`; for operandBatchingDims[i], the position of
    // indicesBatchingDims[i] among the indices' dimensions without index_vector_dim, through
    // `clampBatch(dim, start)`; 0 elsewhere. An empty function keeps the value as it is.
    struct IndexedWindow {
        const HloInstruction* indices = nullptr;
        int64_t indexVectorDim = 0;
        const std::vector<int64_t>* indexMap = nullptr;  // start_index_map, scatter_dims_to_...
        const char* indexMapName = "";                    // for errors
        const std::vector<int64_t>* operandBatchingDims = nullptr;
        const std::vector<int64_t>* indicesBatchingDims = nullptr;
    };
    using ClampIndex = std::function<Value*(int64_t dim, Value* start)>;
    StatusOr<std::vector<Value*>> windowStart(const HloInstruction& user,
                                              const IndexedWindow& window, int64_t operandRank,
                                              const std::vector<Value*>& positions,
                                              const ClampIndex& clampStart,
                                              const ClampIndex& clampBatch);

    // What a kernel's outputs reduce, once checked: every output an array (or an array
    // component of a variadic reduction) of output 0's dimensions, else an error naming it.
    struct OutputReductions {
        bool allReduces = true;       // every output a reduce (reduceOf), all of one length
        bool trailing = true;         // every reduce over the trailing dimensions of its input
        int64_t reducedElements = 0;  // the most elements a reduce among the outputs reduces
    };
    StatusOr<OutputReductions> checkOutputs() const;
    // Output slots grouped by their reduce (a variadic reduce's components in tuple order), as
    // the combiners of split reductions need them; an error where a variadic reduce's
    // components are not all outputs, in order.
    StatusOr<std::map<const HloInstruction*, std::vector<size_t>>> reduceGroups() const;

    // Ops beyond the element-wise and data-movement ones, for both backends
    // (kernel_gen_ops.cc, kernel_gen_window.cc): collectives on one device,
    // replica-id / partition-id, get/set-dimension-size, map, bitcasts that
    // depend on layouts, bitcast-convert, reduce-window, convolution and
    // select-and-scatter, each element by element as the interpreter
    // computes it.
    static bool isSharedOpcode(HloOpcode opcode);
    StatusOr<Value*> genShared(const HloInstruction& instruction, const Index& index);
    StatusOr<Value*> genLayoutBitcast(const HloInstruction& bitcast, const Index& index);
    StatusOr<Value*> genBitcastConvert(const HloInstruction& convert, const Index& index);
    StatusOr<Value*> genReduceWindow(const HloInstruction& reduceWindow, const Index& index);
    // A (variadic) reduce-window's values at `index`, one per input (cached).
    StatusOr<std::vector<Value*>> genReduceWindowValues(const HloInstruction& reduceWindow,
                                                        const Index& index);
    // The components of a variadic reduce or reduce-window at `index`.
    StatusOr<std::vector<Value*>> genComponents(const HloInstruction& multi, const Index& index);
    StatusOr<Value*> genConvolution(const HloInstruction& convolution, const Index& index);
    StatusOr<Value*> genSelectAndScatter(const HloInstruction& selectAndScatter,
                                         const Index& index);
    // A counted loop at the insert point: `body(k, acc)` (which may add
    // blocks) returns the accumulators' next values for k = 0, ..., count - 1;
    // the result is their values after the last step (`initial` for count 0).
    using FoldBody =
        std::function<StatusOr<std::vector<Value*>>(Value* k, const std::vector<Value*>& acc)>;
    StatusOr<std::vector<Value*>> emitFold(int64_t count, const std::vector<Value*>& initial,
                                           const FoldBody& body, const char* name);
    // `then()` emitted in a block of its own, run only where `condition`
    // holds: its values there, `otherwise` elsewhere. Values generated
    // inside must be at indices made inside (they do not dominate the rest).
    StatusOr<std::vector<Value*>> emitIf(Value* condition, const std::vector<Value*>& otherwise,
                                         const std::function<StatusOr<std::vector<Value*>>()>& then,
                                         const char* name);
    // Per-dimension decomposition of a row-major position `k` in `sizes`.
    std::vector<Value*> unflatten(Value* k, const std::vector<int64_t>& sizes);

    KernelModule& m_code;
    const KernelSpec& m_spec;
    llvm::IRBuilder<> m_b;
    Elemental m_elemental;
    llvm::Function* m_function = nullptr;
    std::unordered_map<const HloInstruction*, Value*> m_leafPointers;
    std::unordered_map<const HloInstruction*, Value*> m_env;  // scalar computations' parameters
    std::map<std::pair<const HloInstruction*, int>, std::vector<Value*>> m_cache;
    std::unordered_map<const HloInstruction*, llvm::GlobalVariable*> m_constantGlobals;
    std::unordered_map<const HloInstruction*, Literal> m_constantValues;
    Value* m_reducedBegin = nullptr;
    Value* m_reducedEnd = nullptr;
    // The reduced loop of an output reduce visits [m_reducedBegin,
    // m_reducedEnd) in steps of this (the GPU's threads of a block
    // interleave: coalesced loads); inner reductions always step by 1.
    int64_t m_reducedStep = 1;
    // Row hoisting, while a row's element loop is emitted: a reduction
    // whose index is the same for the whole row (row-fusion's softmax /
    // layer-norm kernels) is computed once per row in the row's preamble,
    // which ends at `hoistEnd` (no terminator until the element loop is
    // done); a hoisted reduction's transcendental operand that the element
    // loop needs again at the same positions (softmax's exp) is kept in a
    // stack row buffer instead of being recomputed. Reset per kernel.
    struct RowScope {
        llvm::BasicBlock* entry = nullptr;     // for the row buffers' allocas
        llvm::BasicBlock* hoistEnd = nullptr;  // null: not inside a row's element loop
        std::vector<int64_t> dims;             // the kernel's output dimensions
        std::vector<Value*> outer;             // the row's coordinates (all but the last)
        Value* column = nullptr;
        int elementIndexId = -1;
        std::map<std::pair<const HloInstruction*, std::vector<Value*>>, std::vector<Value*>>
            hoisted;
        std::unordered_map<const HloInstruction*, Value*> rowBuffers;  // operand -> buffer
    } m_row;
    bool rowInvariant(const Index& index) const {
        if (index.dims.empty()) return true;
        if (index.multi.empty()) return false;
        for (Value* v : index.multi)
            if (!llvm::isa<llvm::Constant>(v) &&
                std::find(m_row.outer.begin(), m_row.outer.end(), v) == m_row.outer.end())
                return false;
        return true;
    }
    StatusOr<std::vector<Value*>> genReduceLoop(const HloInstruction& reduce, const Index& index);
    // A row-invariant reduction hoisted into the row preamble (genReduce): the whole reduction
    // here; the GPU's row kernel splits it across the block's threads and combines.
    virtual StatusOr<std::vector<Value*>> genHoistedReduce(const HloInstruction& reduce,
                                                           const Index& rowIndex) {
        return genReduceLoop(reduce, rowIndex);
    }
    // A reduce whose loop takes this thread's share, [m_reducedBegin, m_reducedEnd) in steps of
    // m_reducedStep, as an output reduce's does (the GPU row kernel's hoisted reductions).
    const HloInstruction* m_sharedReduce = nullptr;
    // Round an output reduce's partial to its type at the end of its loop (the CPU's splits);
    // the GPU keeps partials unrounded until they are combined and written.
    bool m_roundOutputPartials = true;
    Value* rowBufferFor(const HloInstruction& reduce, const Index& index);
    Status hoistRowBroadcasts(const Index& element);
    // The coordinates of row `row` (every dimension but the last) of a row-major array of `dims`.
    std::vector<Value*> rowCoordinates(Value* row, const std::vector<int64_t>& dims) {
        std::vector<Value*> outer(dims.empty() ? 0 : dims.size() - 1, nullptr);
        Value* rest = row;
        for (size_t d = outer.size(); d-- > 0;) {
            outer[d] = d == 0 ? rest : m_b.CreateURem(rest, c64(dims[d]));
            if (d > 0) rest = m_b.CreateUDiv(rest, c64(dims[d]));
        }
        return outer;
    }
    // Opens the row scope of an element loop over the row of `element` (whose last coordinate
    // is `column`): reductions the same for the whole row are hoisted into `preamble`, which
    // stays open (no terminator) until the loop is emitted.
    void openRowScope(llvm::BasicBlock* entry, llvm::BasicBlock* preamble, const Index& element,
                      Value* column) {
        m_row.entry = entry;
        m_row.hoistEnd = preamble;
        m_row.dims = element.dims;
        m_row.outer.assign(element.multi.begin(),
                           element.multi.empty() ? element.multi.end() : element.multi.end() - 1);
        m_row.column = column;
        m_row.elementIndexId = element.id;
    }
    // Every output is a reduce whose loop takes [m_reducedBegin, m_reducedEnd).
    bool m_outputsAreReduces = false;
    int m_nextId = 1;
};

}  // namespace hloscope::llvm_codegen
