// Non-temporal ("streaming") stores for kernels whose outputs are far larger
// than the last-level cache (cpu_kernel_emitter.cc): the element loop writes
// a chunk into a stack buffer (in L1), and streamCopy moves it to the output
// with full-line non-temporal vector stores, so the output lines are neither
// read for ownership nor left to evict the inputs. A third of a one-input
// elementwise kernel's memory traffic is that read for ownership.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/TargetParser/Triple.h>

#include "compiler/backends/cpu/cpu_kernel_gen_internal.h"

namespace hloscope::cpu_internal {

bool supportsStreamingStores(const llvm::Module& module) {
    const llvm::Triple triple(module.getTargetTriple());
    return triple.getArch() == llvm::Triple::x86_64;
}

// void hloscope.stream_copy(ptr dst, ptr src, i64 bytes): the unaligned head
// and the tail (less than a line each) by memcpy, the 64-byte-aligned lines
// between them by <16 x i32> loads and non-temporal stores.
llvm::Function* streamCopyFunction(llvm::Module& module) {
    constexpr const char* kName = "hloscope.stream_copy";
    if (llvm::Function* existing = module.getFunction(kName)) return existing;
    llvm::LLVMContext& context = module.getContext();
    llvm::IRBuilder<> b(context);
    auto* type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy(), b.getInt64Ty()}, false);
    auto* function = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, kName, module);
    function->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::Argument* dst = function->getArg(0);
    llvm::Argument* src = function->getArg(1);
    llvm::Argument* bytes = function->getArg(2);
    function->addParamAttr(0, llvm::Attribute::NoAlias);
    function->addParamAttr(1, llvm::Attribute::NoAlias);

    auto* entry = llvm::BasicBlock::Create(context, "entry", function);
    auto* lines = llvm::BasicBlock::Create(context, "lines", function);
    auto* tail = llvm::BasicBlock::Create(context, "tail", function);
    b.SetInsertPoint(entry);
    llvm::Value* misaligned = b.CreateAnd(b.CreatePtrToInt(dst, b.getInt64Ty()), b.getInt64(63));
    llvm::Value* toLine = b.CreateAnd(b.CreateSub(b.getInt64(64), misaligned), b.getInt64(63));
    llvm::Value* head = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, toLine, bytes);
    b.CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), head);
    llvm::Value* rest = b.CreateSub(bytes, head);
    llvm::Value* lineBytes = b.CreateAnd(rest, b.getInt64(~int64_t{63}));
    llvm::Value* lineDst = b.CreateInBoundsGEP(b.getInt8Ty(), dst, head);
    llvm::Value* lineSrc = b.CreateInBoundsGEP(b.getInt8Ty(), src, head);
    b.CreateCondBr(b.CreateICmpUGT(lineBytes, b.getInt64(0)), lines, tail);

    b.SetInsertPoint(lines);
    llvm::PHINode* offset = b.CreatePHI(b.getInt64Ty(), 2, "offset");
    offset->addIncoming(b.getInt64(0), entry);
    auto* vector = llvm::FixedVectorType::get(b.getInt32Ty(), 16);
    llvm::Value* value = b.CreateAlignedLoad(vector, b.CreateInBoundsGEP(b.getInt8Ty(), lineSrc, offset),
                                             llvm::MaybeAlign(4));
    llvm::StoreInst* store =
        b.CreateAlignedStore(value, b.CreateInBoundsGEP(b.getInt8Ty(), lineDst, offset), llvm::MaybeAlign(64));
    store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                       llvm::MDNode::get(context, {llvm::ConstantAsMetadata::get(b.getInt32(1))}));
    llvm::Value* next = b.CreateAdd(offset, b.getInt64(64));
    offset->addIncoming(next, lines);
    b.CreateCondBr(b.CreateICmpULT(next, lineBytes), lines, tail);

    b.SetInsertPoint(tail);
    b.CreateMemCpy(b.CreateInBoundsGEP(b.getInt8Ty(), lineDst, lineBytes), llvm::MaybeAlign(1),
                   b.CreateInBoundsGEP(b.getInt8Ty(), lineSrc, lineBytes), llvm::MaybeAlign(1),
                   b.CreateSub(rest, lineBytes));
    b.CreateRetVoid();
    return function;
}

void emitStoreFence(llvm::IRBuilderBase& b) {
    llvm::Module* module = b.GetInsertBlock()->getModule();
    b.CreateCall(llvm::Intrinsic::getDeclaration(module, llvm::Intrinsic::x86_sse_sfence));
}

}  // namespace hloscope::cpu_internal
