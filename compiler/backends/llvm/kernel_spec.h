// KernelSpec: what one kernel of the LLVM backends computes, the same for the
// CPU (cpu_kernel_emitter.h) and the GPU (gpu_kernel_emitter.h): a set of
// outputs (instructions whose values are stored) and a set of leaves
// (instructions whose values are read from buffers: a fusion's parameters, a
// single op's operands, a kOutput fusion's dot). Everything between them is
// generated element by element by the shared element generator
// (kernel_gen_internal.h). Buffers are [outputs..., leaves...], every one
// dense and row-major (a Literal's storage order; pred one byte per element).
//
// No LLVM type appears here: backends' public headers include this one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/hlo_instruction.h"

namespace hloscope {

// Opcodes a kernel can hold besides the shape and data-movement ops: the
// elementwise ops with a scalar lowering (Elemental, elemental_ir.h).
bool isElementalOpcode(HloOpcode opcode);
// Whether `opcode` as a single instruction makes a kernel (elementwise ops,
// broadcast, transpose, slice, reverse, pad, concatenate, iota, copy,
// reshape, bitcast, reduce, gather, dynamic-slice, dynamic-update-slice,
// reduce-window, convolution, select-and-scatter, map, collectives on one
// device, replica-id, partition-id, get/set-dimension-size,
// dynamic-reshape). Types are checked when emitting.
bool isKernelOpcode(HloOpcode opcode);

// A variadic (tuple-shaped) reduce or reduce-window: its components are
// kernel outputs of their own.
bool isVariadicReduction(const HloInstruction& instruction);

struct KernelSpec {
    std::string name;                            // function name, unique in its module
    std::vector<const HloInstruction*> outputs;  // arrays of equal dimensions
    // Per output: -1, or component k of a variadic (tuple-shaped) reduce or
    // reduce-window. Empty: all -1.
    std::vector<int> outputComponents;
    std::vector<const HloInstruction*> leaves;  // buffers[outputs.size() + i] holds leaves[i]
    // CPU only: write the outputs with non-temporal stores (the runtime asks
    // for it when they are far larger than the last-level cache): each row,
    // or chunk of a long row, is computed into a stack buffer and streamed
    // out in whole cache lines. Ignored where it does not apply: reduction
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
    // The outputs grouped by iteration space (dimensions, and the elements each reduces: 0 for
    // none), in order of first appearance: one kernel computes one group. A multi-output
    // fusion whose outputs differ (a loop output beside a reduction of it) needs a kernel per
    // group.
    std::vector<std::vector<size_t>> outputGroups() const;
    // The kernel of the outputs `members` (indices into outputs), named `partName`, reading
    // the same leaves.
    KernelSpec part(const std::vector<size_t>& members, std::string partName) const;
};

}  // namespace hloscope
