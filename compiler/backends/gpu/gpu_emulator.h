// Runs a GPU plan on the host CPU, so that the GPU backend's kernels and plans are checked
// against the interpreter where there is no GPU (CI, and most sessions).
//
// The plan's kernels, as LLVM IR before NVPTX code generation (GpuPlan::hostIr, kept when
// GpuPlanOptions::keepHostIr), are compiled for the host by the JIT the CPU backend shares
// (compiler/backends/llvm/llvm_jit.h), with the NVPTX special registers, bar.sync and warp shuffles replaced by calls into this emulator.
// A launch runs its blocks one after another (so shared memory is one buffer). A kernel
// without barriers or shuffles runs its threads one after another, as a GPU may run them in
// any order; one with them runs a block's threads as fibers: a barrier waits for the block's
// threads that have not returned, as bar.sync does, and a shuffle exchanges values between
// the lanes of a warp with PTX's clamp rule; threads waiting at different points are an error,
// not a hang. Steps run in the runner's order with its
// control flow (branch, switch, jump and their limits); gemm steps run their fallback kernel.
// Not checked here: NVPTX's code generation, the driver, cuBLAS and timing.
#pragma once

#include <vector>

#include "compiler/backends/gpu/gpu_plan.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {

// The plan's outputs (its entry result's array leaves, depth first) for `args` (one per entry
// parameter). Errors: a plan without hostIr, an NVPTX intrinsic the emulator lacks, a loop past
// its limit (naming the step).
StatusOr<std::vector<Literal>> emulateGpuPlan(const GpuPlan& plan,
                                              const std::vector<Literal>& args);
// A multi-device plan (GpuPlan::devices()): `args[d]` are device d's arguments; the outputs by
// device. A branch or switch whose predicate differs between devices is an error naming it.
StatusOr<std::vector<std::vector<Literal>>> emulateGpuPlanOnDevices(
    const GpuPlan& plan, const std::vector<std::vector<Literal>>& args);

}  // namespace hloscope
