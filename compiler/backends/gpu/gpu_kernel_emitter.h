// GpuKernelEmitter: PTX for the GPU backend's kernels, from the element
// generator the CPU backend shares (compiler/backends/llvm/kernel_gen_internal.h),
// compiled by LLVM's NVPTX target for one SM version. A kernel is a
// KernelSpec (compiler/backends/llvm/kernel_spec.h).
//
// Every kernel is a PTX .entry whose parameters are 64-bit global pointers,
// in this order: [outputs..., leaves...] (plus, for a split reduction, one
// scratch array per output), every buffer dense and row-major as on the CPU
// (pred one byte per element). Two shapes of kernel:
//   * loop: one thread per output element in a grid-stride loop over the
//     row-major output index (consecutive threads write consecutive
//     elements: coalesced), or, for large element counts divisible by 4,
//     four adjacent elements per thread in one pass (16-byte vector loads
//     and stores for element-wise chains); a reduce inside, or a reduction whose kept
//     dimensions are minor and many (a column reduction: consecutive threads
//     read consecutive elements), is a loop per thread;
//   * warp reduction (every output a reduce over the same trailing
//     dimensions, many outputs or short rows): one warp per output element,
//     eight per block; lane l accumulates the elements l, l + 32, ...
//     (coalesced), the warp combines its partials with shuffles (the reducer
//     applied to values exchanged by shfl.sync), lane 0 writes;
//   * block reduction (every output a reduce over the same number of
//     elements, otherwise): one block of `block[0]` threads per output
//     element (and, when there are few outputs, `slices` blocks along grid.y
//     each taking an interleaved share of the reduced elements); thread t
//     accumulates the elements t, t + T, t + 2T, ..., each warp combines by
//     shuffles, warp 0 combines the warps' results (shared memory, one
//     barrier), and thread 0 writes the result, or the slice's partial to
//     scratch, which the combine entry (a loop kernel over the outputs:
//     [outputs..., scratch...]) reduces.
//   * row (a loop kernel that reads row reductions broadcast back over its
//     rows: row-fusion's softmax): a block per row, each reduction split
//     across the block (shuffles, then shared memory between two barriers)
//     in the row's preamble, then the row's outputs by the block's threads
//     (gpu_row_kernel.cc).
// Partial reductions of f16/bf16/small floats travel between threads in f32
// and are rounded once when written, as the interpreter accumulates.
// dot is generated element by element (a loop over the contracting elements
// per output element), so kOutput fusions (dot + epilogue) are one kernel;
// the plan (gpu_plan.h) sends plain GEMMs to cuBLAS when the runner finds it.
// f32 transcendentals use the CPU's branch-free approximations; anything
// that would need a libm call (f64 transcendentals, tan, atan2, ...) is an
// error naming the instruction, as is every op the generator does not know.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backends/llvm/kernel_spec.h"
#include "core/support/status.h"

namespace hloscope {

struct GpuLaunchDims {
    std::array<int64_t, 3> grid = {1, 1, 1};
    std::array<int64_t, 3> block = {1, 1, 1};
    int64_t sharedBytes = 0;  // static shared memory of the entry (informational)
};

enum class GpuKernelKind { kLoop, kWarpReduction, kBlockReduction };

struct GpuKernelInfo {
    std::string entry;
    GpuKernelKind kind = GpuKernelKind::kLoop;
    GpuLaunchDims launch;
    int64_t outputElements = 0;
    int64_t reducedElements = 1;        // per output element (reductions)
    int64_t slices = 1;                 // blocks per output element of a block reduction
    std::vector<int64_t> scratchBytes;  // per output, when slices > 1
    std::string combineEntry;           // when slices > 1
    GpuLaunchDims combineLaunch;
};

// A float32 (batched) matrix product out[b, m, n] = sum_k lhs[b, m, k] *
// rhs[b, k, n], lhs stored [b, k, m] when lhsTransposed, rhs [b, n, k] when
// rhsTransposed (the plan's gemm step).
// topk, or the TopK custom call: compiled as one top-k kernel writing (values, indices).
bool isGpuTopK(const HloInstruction& instruction);
// Why a custom-call has no GPU code: its target, and for a cuBLAS / cuDNN call
// that library-call-expander left in place, what the expansion said.
std::string gpuCustomCallRefusal(const HloInstruction& call);

struct GpuGemmShape {
    int64_t batch = 1, m = 0, n = 0, k = 0;
    bool lhsTransposed = false, rhsTransposed = false;
};

// One axis of a fast Fourier transform (the plan's fft steps, gpu_plan_fft.cc), for every
// element o of dst (row-major `dstDims`, the rank of `srcDims`):
//   dst[o] = scale * sum_{t < length} x(o with o[axis] = t) * w^(o[axis] * t)
// where w = exp(-/+ 2 pi i / length) comes from the twiddle table, x is src zero-extended or cut
// to the transform's extent (the interpreter's copy of the operand into its work array), and
// dst[o] is 0 when o[axis] >= length or another coordinate lies outside src. `hermitian`: src
// holds the half spectrum (length / 2 + 1) of each line, the rest being its mirror image
// conjugated (an IRFFT's last axis). Parameters [dst, src, twiddles]: complex elements are
// (re, im) pairs of f32 (f64 with doublePrecision); a real source or result holds one value per
// element; twiddles[j] = w^j for j < length.
struct GpuFftAxis {
    std::vector<int64_t> srcDims, dstDims;
    size_t axis = 0;
    int64_t length = 0;
    bool hermitian = false;
    bool realSource = false, realResult = false;
    bool doublePrecision = false;
    double scale = 1;
};

class GpuKernelEmitter {
public:
    // `sm`: "sm_80", "sm_86", "sm_89", "sm_90" or "sm_90a" (supportedSms()).
    GpuKernelEmitter(const std::string& moduleName, const std::string& sm);
    ~GpuKernelEmitter();
    GpuKernelEmitter(const GpuKernelEmitter&) = delete;
    GpuKernelEmitter& operator=(const GpuKernelEmitter&) = delete;

    static const std::vector<std::string>& supportedSms();
    static std::string defaultSm() { return "sm_90"; }

    // Emits spec's kernel (outputs of equal dimensions; the name becomes the
    // entry's), or an error (the instruction and why) with nothing left in
    // the module.
    StatusOr<GpuKernelInfo> emitKernel(const KernelSpec& spec);
    // Our own GEMM kernel (the fallback of a gemm step when cuBLAS is absent):
    // 64x64 output tiles per block of 16x16 threads, 4x4 outputs per thread,
    // lhs and rhs staged through shared memory 16 elements of k at a time;
    // parameters [out, lhs, rhs].
    StatusOr<GpuKernelInfo> emitGemm(const std::string& name, const GpuGemmShape& shape);
    // One axis of an FFT as a loop kernel (a thread per dst element, a direct sum over the
    // transform's length): exact twiddle indices, O(length) work per element.
    StatusOr<GpuKernelInfo> emitFftAxis(const std::string& name, const GpuFftAxis& axis);
    int64_t kernelCount() const;
    // The LLVM IR emitted so far (before optimisation).
    std::string irText() const;
    // Verifies, optimises (O3 with the NVPTX target's passes) and returns the
    // PTX text; the emitter cannot emit afterwards.
    StatusOr<std::string> compileToPtx();

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

}  // namespace hloscope
