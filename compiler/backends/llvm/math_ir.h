// Internal to the LLVM backends (LLVM-typed): vectorisable float32
// approximations (compiler/runtime/fast_math.h, the reference they mirror
// operation for operation; same accuracy): `x` is a float value, the result
// a float. Branch-free, so the loop vectoriser widens them like any other
// arithmetic; the GPU uses them where the CPU could call libm (math_ir.cc).
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace hloscope::llvm_codegen {

llvm::Value* emitFastExp(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastLog(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastTanh(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastLogistic(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastSin(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastCos(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* emitFastErf(llvm::IRBuilderBase& b, llvm::Value* x);

}  // namespace hloscope::llvm_codegen
