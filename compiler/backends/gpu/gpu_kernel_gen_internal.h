// Internal to compiler/backends/gpu/*.cc (LLVM-typed): GpuKernelGen, the GPU
// kernel shapes around the shared element generator
// (compiler/backends/llvm/kernel_gen_internal.h), and GpuKernelEmitter's
// state. gpu_kernel_emitter.cc has the entries, the loop kernels and PTX
// compilation, gpu_reduction_kernel.cc the warp and block reductions,
// gpu_dot_kernel.cc dot and scaled-dot, gpu_ragged_dot.cc ragged-dot,
// gpu_scatter_kernel.cc the scatter kernel, gpu_sort_kernel.cc the sort
// kernel, gpu_fft_kernel.cc the FFT's axis kernel, gpu_row_kernel.cc the row
// kernel, gpu_rng_kernel.cc the rng-bit-generator kernel, gpu_gemm_kernel.cc
// our tiled GEMM. Never include this from a header that is not itself
// internal.
#pragma once

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/backends/gpu/gpu_kernel_emitter.h"
#include "compiler/backends/llvm/kernel_gen_internal.h"

namespace hloscope {

struct GpuKernelEmitter::Impl {
    llvm_codegen::KernelModule code;  // context, module, counters (the element generator's)
    std::string sm;
    std::unique_ptr<llvm::TargetMachine> machine;
    Status machineStatus = Status::ok();
};

namespace gpu_internal {

inline constexpr const char* kTriple = "nvptx64-nvidia-cuda";
inline constexpr unsigned kGlobalSpace = 1;  // NVPTX address spaces
inline constexpr unsigned kSharedSpace = 3;

using llvm_codegen::Index;
using llvm_codegen::KernelModule;
using llvm_codegen::unsupportedAt;
using llvm::Value;

inline int64_t product(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

inline int64_t roundUpPow2(int64_t v) {
    int64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline constexpr int64_t kLoopBlock = 256;
inline constexpr int64_t kMaxGrid = int64_t{1} << 24;

// Threads per block for `n` threads' work: kLoopBlock, or the power of two (at least a
// warp) that holds fewer.
inline int64_t loopBlock(int64_t n) {
    return n >= kLoopBlock ? kLoopBlock : std::max<int64_t>(32, roundUpPow2(n));
}

// A thread per element of `n` in blocks of loopBlock(n) (grid-stride beyond kMaxGrid blocks).
inline GpuLaunchDims loopLaunch(int64_t n) {
    const int64_t block = loopBlock(n);
    GpuLaunchDims dims;
    dims.block = {block, 1, 1};
    dims.grid = {std::clamp<int64_t>(ceilDiv(n, block), 1, kMaxGrid), 1, 1};
    return dims;
}

class GpuKernelGen : public llvm_codegen::KernelGen {
public:
    GpuKernelGen(KernelModule& code, const KernelSpec& spec) : KernelGen(code, spec) {
        m_elemental.setDeviceCode(true);
        // Partials of output reduces are combined across threads: unrounded until written.
        m_roundOutputPartials = false;
    }

    StatusOr<GpuKernelInfo> emit();
    // GpuKernelEmitter::emitFftAxis's kernel, named m_spec.name (gpu_fft_kernel.cc).
    StatusOr<GpuKernelInfo> emitFftAxis(const GpuFftAxis& axis);

protected:
    StatusOr<Value*> genOther(const HloInstruction& instruction, const Index& index) override;
    StatusOr<Value*> genScaledDot(const HloInstruction& dot, const Index& index);
    // ragged-dot (gpu_ragged_dot.cc).
    StatusOr<Value*> genRaggedDot(const HloInstruction& dot, const Index& index);
    // One pass over ragged-dot's group_sizes at its leading coordinates `prefix`: the run
    // [start, end) of group `target`, how many groups end at or before `at` (the group of
    // position `at`), and the total of the sizes (gpu_ragged_dot.cc).
    struct GroupScan {
        Value* start;
        Value* end;
        Value* groupOf;
        Value* total;
    };
    StatusOr<GroupScan> scanGroups(const HloInstruction& sizes, const std::vector<Value*>& prefix,
                                   Value* target, Value* at);
    // What a ragged-dot adds to a dot's sum: output dimensions before the
    // dot's own (the group of a ragged contraction) and an rhs dimension held
    // at one value (the group dimension of a ragged non-contracting dot).
    struct DotSumExtras {
        size_t outOffset = 0;
        int64_t rhsFixedDimension = -1;
        Value* rhsFixedValue = nullptr;
    };
    // The sum over a dot's contracting elements of operandValue(0, lhs index) *
    // operandValue(1, rhs index), values in `accumulate`'s registers (unrounded).
    StatusOr<Value*> genDotSum(
        const HloInstruction& dot, const Index& index, PrimitiveType accumulate,
        const std::function<StatusOr<Value*>(int, const Index&)>& operandValue,
        const DotSumExtras* ragged = nullptr);

private:
    Value* special(llvm::Intrinsic::ID id) {
        return m_b.CreateZExt(m_b.CreateIntrinsic(id, {}, {}), i64());
    }
    // This thread's index in the grid (x): ctaid * ntid + tid, as an i64.
    Value* globalThread() {
        return m_b.CreateAdd(m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                           special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                             special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    }
    // A kernel entry with `count` global-pointer parameters (accessed as
    // global pointers: ld.global, and 16-byte vectors where aligned).
    std::vector<Value*> beginEntry(const std::string& name, size_t count, int64_t maxThreads);
    // The leaves at params[outputs...] (outputs: by default one per spec output).
    static constexpr size_t kOutputsOfSpec = static_cast<size_t>(-1);
    void bindLeaves(const std::vector<Value*>& params, size_t outputs = kOutputsOfSpec);
    // A grid-stride loop over [0, n): `position` is this thread's element;
    // the body goes between begin and end; after end, the insert point is the
    // block after the loop.
    struct GridLoop {
        llvm::PHINode* position = nullptr;
        llvm::BasicBlock* body = nullptr;
        llvm::BasicBlock* done = nullptr;
        Value* stride = nullptr;
    };
    // firstThreadOnly: thread 0 takes every element in order, the others none.
    GridLoop beginGridLoop(int64_t n, const char* name, bool firstThreadOnly = false);
    void endGridLoop(GridLoop& loop, int64_t n);
    StatusOr<Value*> outputValue(size_t k, const Index& index);
    StatusOr<GpuKernelInfo> emitLoop(const std::vector<int64_t>& dims, GpuKernelInfo info);
    // One element per thread in a grid-stride loop.
    StatusOr<GpuKernelInfo> emitLoopStrided(const std::vector<int64_t>& dims, GpuKernelInfo info,
                                            int64_t block);
    StatusOr<GpuKernelInfo> emitBlockReduction(GpuKernelInfo info);
    // Row kernels (gpu_row_kernel.cc): a block per row for loop kernels that broadcast row
    // reductions back over their rows (row-fusion's softmax, layer norm).
    bool wantsRowKernel(const std::vector<int64_t>& dims) const;
    StatusOr<GpuKernelInfo> emitRow(const std::vector<int64_t>& dims, GpuKernelInfo info);
    StatusOr<std::vector<Value*>> genHoistedReduce(const HloInstruction& reduce,
                                                   const Index& rowIndex) override;
    // The reducer over the row kernel's threads (warp shuffles, then the warps' values through
    // shared memory between two barriers): every thread gets the row's result.
    StatusOr<std::vector<Value*>> blockCombine(const HloInstruction& reduce,
                                               std::vector<Value*> values);
    StatusOr<GpuKernelInfo> emitWarpReduction(GpuKernelInfo info);
    StatusOr<GpuKernelInfo> emitScatter(GpuKernelInfo info);
    // Where an update element goes: whether its window fits, and its row-major operand position
    // (gpu_scatter_kernel.cc).
    StatusOr<std::pair<Value*, Value*>> scatterTarget(const HloInstruction& scatter,
                                                      const Index& update,
                                                      const std::vector<int64_t>& windowOperandDims,
                                                      const std::vector<int64_t>& extent);
    // dynamic-update-slice into its operand's buffer (KernelSpec::updateInPlace): a thread
    // per update element (gpu_scatter_kernel.cc).
    StatusOr<GpuKernelInfo> emitUpdateInPlace(GpuKernelInfo info);
    // A scatter of several operands at one update element (gpu_scatter_kernel.cc).
    Status combineInOrder(const HloInstruction& scatter, int64_t count,
                          const std::vector<Value*>& params, Value* linear, const Index& update);
    // sort, in place on outputs the plan has set to the operands (gpu_sort_kernel.cc).
    StatusOr<GpuKernelInfo> emitSort(GpuKernelInfo info);
    // topk (and the TopK custom call without a comparator): a thread per input element that
    // counts its place in its row (gpu_sort_kernel.cc).
    StatusOr<GpuKernelInfo> emitTopK(GpuKernelInfo info);
    // rng-bit-generator (gpu_rng_kernel.cc): [new state, bits, state]; a thread per counter.
    StatusOr<GpuKernelInfo> emitRngBitGenerator(GpuKernelInfo info);
    // *address = reducer(*address, value), atomically.
    Status emitAtomicCombine(const HloComputation& reducer, PrimitiveType type, Value* address,
                             Value* value);
    // `value` (of `type`) from the lane `delta` above (or, butterfly, the
    // lane xor `delta`) of the warp.
    Value* shuffle(Value* value, PrimitiveType type, int64_t delta, bool butterfly);
    // Combines each output's partials across `width` lanes (a power of two
    // <= 32) with the reducer; lane 0 ends with the result.
    Status warpCombine(const std::map<const HloInstruction*, std::vector<size_t>>& groups,
                       std::vector<Value*>& partials, int64_t width);
    // Every output's partial reduction of output element `output` over the
    // reduced elements begin, begin + step, ... < end, combined across the
    // warp (lane 0 holds the warp's result); on error nothing is left.
    StatusOr<std::vector<Value*>> warpPartials(
        const std::map<const HloInstruction*, std::vector<size_t>>& groups, Value* output,
        Value* begin, Value* end, int64_t step);
    Status emitCombine(const GpuKernelInfo& info);
    void erasePartial();
    // The type a partial reduction of `type` is carried in between threads (shuffles, shared
    // memory, scratch): f32 for f16, bf16 and the small floats (their registers, as the
    // interpreter accumulates them), f64 for f64, else the type itself.
    PrimitiveType carriedType(PrimitiveType type) {
        llvm::Type* reg = m_elemental.registerType(type);
        return reg->isFloatTy()    ? PrimitiveType::F32
               : reg->isDoubleTy() ? PrimitiveType::F64
                                   : type;
    }

    std::vector<llvm::Function*> m_created;
    int64_t m_rowThreads = 0;      // a row kernel's block size while it is emitted, else 0
    Value* m_rowThread = nullptr;  // its thread's index in the block (i64)
    int m_rowSlots = 0;            // shared arrays made for its combines
};

}  // namespace gpu_internal
}  // namespace hloscope
