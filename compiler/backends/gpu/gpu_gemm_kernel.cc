// Our own tiled GEMM kernel (GpuKernelEmitter::emitGemm), the fallback of a
// plan's gemm steps when the runner finds no cuBLAS.
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"

namespace hloscope {

StatusOr<GpuKernelInfo> GpuKernelEmitter::emitGemm(const std::string& name,
                                                   const GpuGemmShape& shape) {
    HLO_RETURN_IF_ERROR(m_impl->machineStatus);
    if (m_impl->code.compiled) return internalError("GpuKernelEmitter: emit after compileToPtx");
    if (shape.batch <= 0 || shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch > 65535)
        return invalidArgument("GEMM " + name + ": unsupported shape");
    using llvm::Value;
    constexpr int64_t kTile = 64, kDepth = 16, kThreads = 16, kPer = 4;
    llvm::LLVMContext& context = *m_impl->code.context;
    llvm::Module& module = *m_impl->code.module;
    llvm::IRBuilder<> b(context);
    llvm::Type* f32 = b.getFloatTy();
    llvm::Type* i64 = b.getInt64Ty();
    auto c = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
    auto* type = llvm::FunctionType::get(b.getVoidTy(),
                                         {b.getPtrTy(1), b.getPtrTy(1), b.getPtrTy(1)}, false);
    llvm::Function* function =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, module);
    function->setCallingConv(llvm::CallingConv::PTX_Kernel);
    for (unsigned i = 0; i < 3; ++i) {
        function->getArg(i)->addAttr(llvm::Attribute::NoAlias);
        function->getArg(i)->addAttr(llvm::Attribute::getWithAlignment(context, llvm::Align(256)));
    }
    llvm::NamedMDNode* annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
    for (auto [key, value] : {std::pair<const char*, int64_t>{"kernel", 1},
                              {"maxntidx", kThreads},
                              {"maxntidy", kThreads}}) {
        llvm::Metadata* fields[] = {
            llvm::ValueAsMetadata::get(function), llvm::MDString::get(context, key),
            llvm::ConstantAsMetadata::get(b.getInt32(static_cast<uint32_t>(value)))};
        annotations->addOperand(llvm::MDNode::get(context, fields));
    }
    auto* tileType = llvm::ArrayType::get(f32, kDepth * kTile);
    auto sharedTile = [&](const char* which) {
        auto* v =
            new llvm::GlobalVariable(module, tileType, false, llvm::GlobalValue::InternalLinkage,
                                     llvm::UndefValue::get(tileType), name + which, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, gpu_internal::kSharedSpace);
        v->setAlignment(llvm::Align(16));
        return v;
    };
    llvm::GlobalVariable* tileA = sharedTile(".a");  // [kk][mm]
    llvm::GlobalVariable* tileB = sharedTile(".b");  // [kk][nn]
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", function);
    b.SetInsertPoint(entry);
    auto special = [&](llvm::Intrinsic::ID id) {
        return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), i64);
    };
    Value* tx = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* ty = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y);
    Value* n0 = b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), c(kTile));
    Value* m0 = b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y), c(kTile));
    Value* batch = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z);
    Value* t = b.CreateAdd(b.CreateMul(ty, c(kThreads)), tx);  // 0..255
    Value* lhs =
        b.CreateInBoundsGEP(f32, function->getArg(1), b.CreateMul(batch, c(shape.m * shape.k)));
    Value* rhs =
        b.CreateInBoundsGEP(f32, function->getArg(2), b.CreateMul(batch, c(shape.k * shape.n)));
    Value* out =
        b.CreateInBoundsGEP(f32, function->getArg(0), b.CreateMul(batch, c(shape.m * shape.n)));
    Value* zero = llvm::ConstantFP::get(f32, 0.0);
    // Loads element (row, column) of a row-major [rows, columns] matrix, 0 outside.
    auto guardedLoad = [&](Value* base, Value* row, Value* column, int64_t rows, int64_t columns) {
        Value* inside =
            b.CreateAnd(b.CreateICmpULT(row, c(rows)), b.CreateICmpULT(column, c(columns)));
        Value* position =
            b.CreateSelect(inside, b.CreateAdd(b.CreateMul(row, c(columns)), column), c(0));
        Value* loaded = b.CreateLoad(f32, b.CreateInBoundsGEP(f32, base, position));
        return b.CreateSelect(inside, loaded, zero);
    };
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, "k.tile", function);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "store", function);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* k0 = b.CreatePHI(i64, 2, "k0");
    k0->addIncoming(c(0), entry);
    std::vector<llvm::PHINode*> acc;
    for (int64_t i = 0; i < kPer * kPer; ++i) {
        acc.push_back(b.CreatePHI(f32, 2, "acc"));
        acc.back()->addIncoming(zero, entry);
    }
    // Stage the tiles: 1024 elements each, 4 per thread, consecutive threads
    // on consecutive addresses of the stored matrix.
    for (int64_t r = 0; r < 4; ++r) {
        Value *mm, *kkA, *value;
        if (!shape.lhsTransposed) {  // stored [m, k]: k fastest
            kkA = b.CreateAnd(t, c(kDepth - 1));
            mm = b.CreateAdd(b.CreateLShr(t, 4), c(16 * r));
            value = guardedLoad(lhs, b.CreateAdd(m0, mm), b.CreateAdd(k0, kkA), shape.m, shape.k);
        } else {  // stored [k, m]: m fastest
            mm = b.CreateAnd(t, c(kTile - 1));
            kkA = b.CreateAdd(b.CreateLShr(t, 6), c(4 * r));
            value = guardedLoad(lhs, b.CreateAdd(k0, kkA), b.CreateAdd(m0, mm), shape.k, shape.m);
        }
        b.CreateStore(value,
                      b.CreateInBoundsGEP(tileType, tileA,
                                          {c(0), b.CreateAdd(b.CreateMul(kkA, c(kTile)), mm)}));
        Value *nn, *kkB;
        if (!shape.rhsTransposed) {  // stored [k, n]: n fastest
            nn = b.CreateAnd(t, c(kTile - 1));
            kkB = b.CreateAdd(b.CreateLShr(t, 6), c(4 * r));
            value = guardedLoad(rhs, b.CreateAdd(k0, kkB), b.CreateAdd(n0, nn), shape.k, shape.n);
        } else {  // stored [n, k]: k fastest
            kkB = b.CreateAnd(t, c(kDepth - 1));
            nn = b.CreateAdd(b.CreateLShr(t, 4), c(16 * r));
            value = guardedLoad(rhs, b.CreateAdd(n0, nn), b.CreateAdd(k0, kkB), shape.n, shape.k);
        }
        b.CreateStore(value,
                      b.CreateInBoundsGEP(tileType, tileB,
                                          {c(0), b.CreateAdd(b.CreateMul(kkB, c(kTile)), nn)}));
    }
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    std::vector<Value*> sums(acc.begin(), acc.end());
    Value* rowBase = b.CreateMul(ty, c(kPer));
    Value* columnBase = b.CreateMul(tx, c(kPer));
    for (int64_t kk = 0; kk < kDepth; ++kk) {
        Value* a[kPer];
        Value* bv[kPer];
        for (int64_t i = 0; i < kPer; ++i) {
            a[i] = b.CreateLoad(
                f32, b.CreateInBoundsGEP(tileType, tileA,
                                         {c(0), b.CreateAdd(rowBase, c(kk * kTile + i))}));
            bv[i] = b.CreateLoad(
                f32, b.CreateInBoundsGEP(tileType, tileB,
                                         {c(0), b.CreateAdd(columnBase, c(kk * kTile + i))}));
        }
        for (int64_t i = 0; i < kPer; ++i)
            for (int64_t j = 0; j < kPer; ++j)
                sums[static_cast<size_t>(i * kPer + j)] =
                    b.CreateIntrinsic(llvm::Intrinsic::fma, {f32},
                                      {a[i], bv[j], sums[static_cast<size_t>(i * kPer + j)]});
    }
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    Value* k1 = b.CreateAdd(k0, c(kDepth));
    k0->addIncoming(k1, loop);
    for (size_t i = 0; i < acc.size(); ++i) acc[i]->addIncoming(sums[i], loop);
    b.CreateCondBr(b.CreateICmpULT(k1, c(shape.k)), loop, done);
    b.SetInsertPoint(done);
    for (int64_t i = 0; i < kPer; ++i)
        for (int64_t j = 0; j < kPer; ++j) {
            Value* row = b.CreateAdd(m0, b.CreateAdd(rowBase, c(i)));
            Value* column = b.CreateAdd(n0, b.CreateAdd(columnBase, c(j)));
            llvm::BasicBlock* write = llvm::BasicBlock::Create(context, "write", function);
            llvm::BasicBlock* next = llvm::BasicBlock::Create(context, "next", function);
            b.CreateCondBr(
                b.CreateAnd(b.CreateICmpULT(row, c(shape.m)), b.CreateICmpULT(column, c(shape.n))),
                write, next);
            b.SetInsertPoint(write);
            b.CreateStore(
                sums[static_cast<size_t>(i * kPer + j)],
                b.CreateInBoundsGEP(f32, out, b.CreateAdd(b.CreateMul(row, c(shape.n)), column)));
            b.CreateBr(next);
            b.SetInsertPoint(next);
        }
    b.CreateRetVoid();
    ++m_impl->code.kernels;
    GpuKernelInfo info;
    info.entry = name;
    info.kind = GpuKernelKind::kLoop;
    info.outputElements = shape.batch * shape.m * shape.n;
    info.launch.block = {kThreads, kThreads, 1};
    info.launch.grid = {(shape.n + kTile - 1) / kTile, (shape.m + kTile - 1) / kTile, shape.batch};
    info.launch.sharedBytes = 2 * kDepth * kTile * 4;
    return info;
}

}  // namespace hloscope
