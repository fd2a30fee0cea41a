// CpuKernelEmitter: LLVM code for the CPU backend's kernels, one function per
// kernel, all with one signature:
//
//   void kernel(void* const* buffers, int64_t begin, int64_t end,
//               int64_t reducedBegin, int64_t reducedEnd)
//
// buffers = [outputs..., leaves...]: every buffer dense and row-major (a
// Literal's storage order; pred one byte per element). A call computes the
// output elements [begin, end) of the linear (row-major) output index of
// every output (all outputs have the same dimensions).
//
// A kernel is a set of outputs (instructions whose values are stored) and a
// set of leaves (instructions whose values are read from buffers: a fusion's
// parameters, a single op's operands, a kOutput fusion's dot): a KernelSpec
// (compiler/backends/llvm/kernel_spec.h). Everything between them is
// generated element by element by the element generator the GPU backend
// shares (compiler/backends/llvm/kernel_gen_internal.h; XLA's elemental emitter):
// an instruction's value at a multi-dimensional index is computed from its
// operands' values at the mapped index, so a fused producer chain never
// touches memory. Indices carry the row-major linear index where it is known
// (elementwise ops, reshapes), so chains of those read their leaves
// contiguously and LLVM's loop vectoriser widens the innermost loop.
//
// The loop runs over rows of the innermost output dimension (outer indices
// computed once per row). A reduce is generated as an inner loop over its
// reduced elements (vectorised, with reassociation allowed for the reducer,
// as XLA does); when the kernel's outputs are reduces, [reducedBegin,
// reducedEnd) limits that loop to a range of the reduced elements (row-major
// over the reduced dimensions), so the runtime can split a reduction with
// few outputs across threads and combine the partial results with the
// kernel's combiner:
//
//   void combine(void* const* buffers, int64_t begin, int64_t end)
//
// buffers = [accumulators..., partials...] (one per output): acc = reducer(acc, partial).
// The row loop, the combiner and the streaming stores are CpuKernelGen's
// (cpu_kernel_gen_internal.h, cpu_kernel_emitter.cc, cpu_stream_store.cc).
//
// Transcendentals of f32 use the vectorisable approximations of
// compiler/runtime/fast_math.h (compiler/backends/llvm/math_ir.cc); f64 ones
// call libm.
//
// Supported element types: pred, s1..s64, u1..u64 (sub-byte ones one byte
// per element), f16, bf16, the f8 / f6 / f4 formats (one byte each; all
// narrow floats compute in f32, rounded after every op), f32, f64, c64 and
// c128 ({re, im} pairs; compiler/backends/llvm/complex_ir.cc).
// Supported ops: elementwise arithmetic, logic, shifts, compare (TOTALORDER
// too), select, clamp, convert, bitcast-convert, the
// transcendentals, broadcast, reshape, bitcast (any layouts), transpose,
// slice, reverse, pad, concatenate, iota, constant, copy, reduce (any
// reducer of supported scalar ops, variadic too) and get-tuple-element of a
// variadic reduce or reduce-window, gather, dynamic-slice,
// dynamic-update-slice, map, reduce-window (variadic too), convolution (element by element; the runtime prefers its
// GEMM convolution), select-and-scatter, collectives on one device,
// replica-id, partition-id, get/set-dimension-size, dynamic-reshape
// (compiler/backends/llvm/kernel_gen_*.cc).
// Anything else makes emitKernel() return an error naming the instruction and why;
// nothing is left in the module then, and the runtime runs that kernel with
// the interpreter instead (visibly).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "compiler/backends/llvm/kernel_spec.h"
#include "core/support/status.h"

namespace hloscope {

class CpuJit;

using CpuKernelFunction = void (*)(void* const* buffers, int64_t begin, int64_t end,
                                   int64_t reducedBegin, int64_t reducedEnd);
using CpuCombineFunction = void (*)(void* const* buffers, int64_t begin, int64_t end);


struct CpuKernelInfo {
    // Every output is a reduce over the same number of elements: the kernel
    // honours [reducedBegin, reducedEnd) and `combineName` names its combiner.
    bool splittableReduction = false;
    int64_t reducedElements = 1;  // per output element (1 for a loop kernel)
    std::string combineName;
};

class CpuKernelEmitter {
public:
    // An empty LLVM module for `jit`'s target.
    CpuKernelEmitter(const CpuJit& jit, const std::string& moduleName);
    ~CpuKernelEmitter();
    CpuKernelEmitter(const CpuKernelEmitter&) = delete;
    CpuKernelEmitter& operator=(const CpuKernelEmitter&) = delete;

    // Emits the kernel (see the top comment), or an error (the instruction
    // and why) with nothing emitted.
    StatusOr<CpuKernelInfo> emitKernel(
        const KernelSpec& spec);  // not emit(): Qt defines that as a macro
    int64_t kernelCount() const;
    // The LLVM IR emitted so far (before optimisation), for tests and dumps.
    std::string irText() const;
    // Optimises the module and adds it to `jit`; the emitter cannot emit
    // afterwards. A module without kernels adds nothing.
    Status compileInto(CpuJit& jit);

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

}  // namespace hloscope
