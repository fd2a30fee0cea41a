// Private to compiler/backends/cpu/*.cc: the LLVM-typed edge between the
// kernel emitter and the JIT. Never include this from a header.
#pragma once

#include <memory>
#include <string_view>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>

#include "compiler/backends/cpu/llvm_jit.h"
#include "core/support/status.h"

namespace hloscope::cpu_internal {

// An llvm::Error as a Status (kInternal, `context: message`); OK for success.
Status toStatus(llvm::Error error, std::string_view context);

// Sets the JIT target's triple and data layout on a module about to be
// emitted into (so the emitter sees the real type sizes).
void configureModule(const CpuJit& jit, llvm::Module& module);

// Verifies the module, gives its functions the host CPU's target-cpu /
// target-features attributes, optimises it at O3 (loop and SLP
// vectorisation) and adds it to the JIT.
Status addModule(CpuJit& jit, std::unique_ptr<llvm::LLVMContext> context,
                 std::unique_ptr<llvm::Module> module);

// Vectorisable float32 approximations (compiler/runtime/fast_math.h, the
// reference they mirror operation for operation; same accuracy): `x` is a
// float value, the result a float. Branch-free, so the loop vectoriser
// widens them like any other arithmetic (cpu_math_ir.cc).
llvm::Value* emitFastExp(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastLog(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastTanh(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastLogistic(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastSin(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastCos(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastErf(llvm::IRBuilderBase& b, llvm::Value* x);

// Streaming stores (cpu_stream_store.cc): whether the module's target has
// them (x86-64); the module's copy function, created on first use:
// void(ptr dst, ptr src, i64 bytes), the whole 64-byte lines of dst written
// with non-temporal stores, the partial lines at either end by memcpy; and
// the fence that orders them before the kernel returns.
bool supportsStreamingStores(const llvm::Module& module);
llvm::Function* streamCopyFunction(llvm::Module& module);
void emitStoreFence(llvm::IRBuilderBase& b);

}  // namespace hloscope::cpu_internal
