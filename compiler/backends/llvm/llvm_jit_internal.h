// Internal to the LLVM backends (compiler/backends/llvm, cpu and gpu .cc
// files; LLVM-typed): the edge between generated modules and CpuJit
// (llvm_jit.h). Never include this from a public header.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>

#include "compiler/backends/llvm/llvm_jit.h"
#include "core/support/status.h"

namespace hloscope::llvm_codegen {

// An llvm::Error as a Status (kInternal, `context: message`); OK for success.
Status toStatus(llvm::Error error, std::string_view context);

// Sets the JIT target's triple and data layout on a module about to be
// emitted into (so the emitter sees the real type sizes).
void configureModule(const CpuJit& jit, llvm::Module& module);

// The kernels' "prefer-vector-width" for a CPU with `features` (LLVM's
// feature string): "512" with AVX-512, else empty (LLVM's own choice);
// HLOSCOPE_CPU_VECTOR_WIDTH=128|256|512 overrides it.
std::string preferredVectorWidth(std::string_view features);

// Verifies the module, gives its functions the host CPU's target-cpu /
// target-features / prefer-vector-width attributes, optimises it at O3 (loop and SLP
// vectorisation) and adds it to the JIT.
Status addModule(CpuJit& jit, std::unique_ptr<llvm::LLVMContext> context,
                 std::unique_ptr<llvm::Module> module);

}  // namespace hloscope::llvm_codegen
