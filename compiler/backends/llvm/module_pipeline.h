// Internal to the LLVM backends (LLVM-typed): what every generated module
// goes through before it becomes code, for the CPU's JIT (llvm_jit.cc) and
// the GPU's PTX (gpu_kernel_emitter.cc) alike: the verifier, and the new pass
// manager's O3 pipeline for the module's target machine.
#pragma once

#include <string_view>

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

#include "core/support/status.h"

namespace hloscope::llvm_codegen {

// OK for a valid module; otherwise an error naming it ("generated <what>
// module '<name>' is invalid: " and the verifier's first 2000 characters).
Status verifyGenerated(const llvm::Module& module, std::string_view what);

// Runs the O3 module pipeline for `targetMachine` with `tuning`.
void optimiseModule(llvm::Module& module, llvm::TargetMachine* targetMachine,
                    const llvm::PipelineTuningOptions& tuning);

}  // namespace hloscope::llvm_codegen
