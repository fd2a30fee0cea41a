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
// parameters, a single op's operands, a kOutput fusion's dot). Everything
// between them is generated element by element (XLA's elemental emitter):
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
//
// Transcendentals of f32 use the vectorisable approximations of
// compiler/runtime/fast_math.h (cpu_math_ir.cc); f64 ones call libm.
//
// Supported element types: pred, s1..s64, u1..u64 (sub-byte ones one byte
// per element), f16, bf16, the f8 / f6 / f4 formats (one byte each; all
// narrow floats compute in f32, rounded after every op), f32, f64, c64 and
// c128 ({re, im} pairs; cpu_complex_ir.cc).
// Supported ops: elementwise arithmetic, logic, shifts, compare (TOTALORDER
// too), select, clamp, convert, bitcast-convert, the
// transcendentals, broadcast, reshape, bitcast (any layouts), transpose,
// slice, reverse, pad, concatenate, iota, constant, copy, reduce (any
// reducer of supported scalar ops, variadic too) and get-tuple-element of a
// variadic reduce or reduce-window, gather, dynamic-slice,
// dynamic-update-slice, map, reduce-window (variadic too), convolution (element by element; the runtime prefers its
// GEMM convolution), select-and-scatter, collectives on one device,
// replica-id, partition-id, get/set-dimension-size, dynamic-reshape
// (kernel_gen_internal.h).
// Anything else makes emitKernel() return an error naming the instruction and why;
// nothing is left in the module then, and the runtime runs that kernel with
// the interpreter instead (visibly).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/support/status.h"

namespace hloscope {

class CpuJit;

using CpuKernelFunction = void (*)(void* const* buffers, int64_t begin, int64_t end,
                                   int64_t reducedBegin, int64_t reducedEnd);
using CpuCombineFunction = void (*)(void* const* buffers, int64_t begin, int64_t end);

// Opcodes a kernel can hold besides the shape and data-movement ops the
// header lists: the elementwise ops with a scalar lowering (cpu_elemental.cc).
bool isElementalOpcode(HloOpcode opcode);
// Whether `opcode` as a single instruction makes a kernel (elementwise ops,
// broadcast, transpose, slice, reverse, pad, concatenate, iota, copy,
// reshape, bitcast, reduce, gather, dynamic-slice, dynamic-update-slice,
// reduce-window, convolution, select-and-scatter, map, collectives on one
// device, replica-id, partition-id, get/set-dimension-size,
// dynamic-reshape). Types are checked when emitting.
bool isKernelOpcode(HloOpcode opcode);

struct CpuKernelSpec {
    std::string name;                            // function name, unique in the JIT
    std::vector<const HloInstruction*> outputs;  // arrays of equal dimensions
    // Per output: -1, or component k of a variadic (tuple-shaped) reduce or
    // reduce-window. Empty: all -1.
    std::vector<int> outputComponents;
    std::vector<const HloInstruction*> leaves;  // buffers[outputs.size() + i] holds leaves[i]
    // Write the outputs with non-temporal stores (the runtime asks for it
    // when they are far larger than the last-level cache): each row, or
    // chunk of a long row, is computed into a stack buffer and streamed out
    // in whole cache lines. Ignored where it does not apply: reduction
    // kernels, non-x86 targets, rows shorter than 256 bytes, and long rows
    // of a kernel with a reduction inside (its per-row work would repeat).
    bool streamOutputs = false;
    // Keep a hoisted row reduction's transcendental input in a stack row
    // buffer for the element loop (see KernelGen); off for the GPU, whose
    // threads compute one element each.
    bool rowBuffers = true;
    // The device the kernel runs for: replica-id and partition-id are these
    // constants (a multi-device GPU plan emits such a kernel per device).
    int64_t replicaId = 0;
    int64_t partitionId = 0;
    // The devices of its grid: with more than one, collectives are not
    // compiled (their values come from the other devices).
    int64_t devices = 1;
    // GPU only: the single output is a dynamic-update-slice whose buffer is its operand's, so
    // the kernel writes the update's elements at the clamped start indices and nothing else.
    bool updateInPlace = false;

    // Adds the values a kernel computed by `root` stores: a tuple's elements,
    // a variadic reduce's or reduce-window's components, or the root itself.
    void addOutputs(const HloInstruction& root);
    // Output k's array shape (its component's, for a variadic one).
    const Shape& outputShape(size_t k) const;
};

// A variadic (tuple-shaped) reduce or reduce-window: its components are
// kernel outputs of their own.
bool isVariadicReduction(const HloInstruction& instruction);

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
        const CpuKernelSpec& spec);  // not emit(): Qt defines that as a macro
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
