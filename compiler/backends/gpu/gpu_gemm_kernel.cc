// Our own tiled GEMM kernel (GpuKernelEmitter::emitGemm), the fallback of a
// plan's gemm steps when the runner finds no cuBLAS.
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>

#include "compiler/backends/gpu/gpu_kernel_gen_internal.h"

namespace hloscope {
namespace {

using llvm::Value;

constexpr int64_t kTile = 64, kDepth = 16, kThreads = 16, kPer = 4;

// The GEMM entry being emitted: 64x64 output tiles per block of 16x16 threads, 4x4 outputs
// per thread, lhs and rhs staged through shared memory 16 elements of k at a time.
class GemmKernel {
public:
    GemmKernel(llvm::Module& module, const std::string& name, const GpuGemmShape& shape)
        : m_context(module.getContext()),
          m_module(module),
          m_name(name),
          m_shape(shape),
          m_b(m_context),
          m_f32(m_b.getFloatTy()),
          m_i64(m_b.getInt64Ty()),
          m_tileType(llvm::ArrayType::get(m_f32, kDepth * kTile)) {}

    void emit() {
        beginEntry();
        llvm::BasicBlock* entry = m_b.GetInsertBlock();
        llvm::BasicBlock* loop = llvm::BasicBlock::Create(m_context, "k.tile", m_function);
        llvm::BasicBlock* done = llvm::BasicBlock::Create(m_context, "store", m_function);
        m_b.CreateBr(loop);
        m_b.SetInsertPoint(loop);
        llvm::PHINode* k0 = m_b.CreatePHI(m_i64, 2, "k0");
        k0->addIncoming(c(0), entry);
        std::vector<llvm::PHINode*> acc;
        for (int64_t i = 0; i < kPer * kPer; ++i) {
            acc.push_back(m_b.CreatePHI(m_f32, 2, "acc"));
            acc.back()->addIncoming(m_zero, entry);
        }
        stageTiles(k0);
        m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
        std::vector<Value*> sums(acc.begin(), acc.end());
        multiplyTiles(sums);
        m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
        Value* k1 = m_b.CreateAdd(k0, c(kDepth));
        k0->addIncoming(k1, loop);
        for (size_t i = 0; i < acc.size(); ++i) acc[i]->addIncoming(sums[i], loop);
        m_b.CreateCondBr(m_b.CreateICmpULT(k1, c(m_shape.k)), loop, done);
        m_b.SetInsertPoint(done);
        storeResults(sums);
        m_b.CreateRetVoid();
    }

private:
    Value* c(int64_t v) { return m_b.getInt64(static_cast<uint64_t>(v)); }
    Value* special(llvm::Intrinsic::ID id) {
        return m_b.CreateZExt(m_b.CreateIntrinsic(id, {}, {}), m_i64);
    }
    llvm::GlobalVariable* sharedTile(const char* which) {
        auto* v = new llvm::GlobalVariable(
            m_module, m_tileType, false, llvm::GlobalValue::InternalLinkage,
            llvm::UndefValue::get(m_tileType), m_name + which, nullptr,
            llvm::GlobalValue::NotThreadLocal, gpu_internal::kSharedSpace);
        v->setAlignment(llvm::Align(16));
        return v;
    }
    // The entry [out, lhs, rhs] with its annotations and shared tiles, the thread's
    // coordinates and the batch's matrices.
    void beginEntry() {
        auto* type = llvm::FunctionType::get(
            m_b.getVoidTy(), {m_b.getPtrTy(1), m_b.getPtrTy(1), m_b.getPtrTy(1)}, false);
        m_function =
            llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, m_name, m_module);
        m_function->setCallingConv(llvm::CallingConv::PTX_Kernel);
        for (unsigned i = 0; i < 3; ++i) {
            m_function->getArg(i)->addAttr(llvm::Attribute::NoAlias);
            m_function->getArg(i)->addAttr(
                llvm::Attribute::getWithAlignment(m_context, llvm::Align(256)));
        }
        llvm::NamedMDNode* annotations = m_module.getOrInsertNamedMetadata("nvvm.annotations");
        for (auto [key, value] : {std::pair<const char*, int64_t>{"kernel", 1},
                                  {"maxntidx", kThreads},
                                  {"maxntidy", kThreads}}) {
            llvm::Metadata* fields[] = {
                llvm::ValueAsMetadata::get(m_function), llvm::MDString::get(m_context, key),
                llvm::ConstantAsMetadata::get(m_b.getInt32(static_cast<uint32_t>(value)))};
            annotations->addOperand(llvm::MDNode::get(m_context, fields));
        }
        m_tileA = sharedTile(".a");  // [kk][mm]
        m_tileB = sharedTile(".b");  // [kk][nn]
        llvm::BasicBlock* entry = llvm::BasicBlock::Create(m_context, "entry", m_function);
        m_b.SetInsertPoint(entry);
        m_tx = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
        m_ty = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y);
        m_n0 = m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), c(kTile));
        m_m0 = m_b.CreateMul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y), c(kTile));
        Value* batch = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z);
        m_t = m_b.CreateAdd(m_b.CreateMul(m_ty, c(kThreads)), m_tx);  // 0..255
        m_lhs = m_b.CreateInBoundsGEP(m_f32, m_function->getArg(1),
                                      m_b.CreateMul(batch, c(m_shape.m * m_shape.k)));
        m_rhs = m_b.CreateInBoundsGEP(m_f32, m_function->getArg(2),
                                      m_b.CreateMul(batch, c(m_shape.k * m_shape.n)));
        m_out = m_b.CreateInBoundsGEP(m_f32, m_function->getArg(0),
                                      m_b.CreateMul(batch, c(m_shape.m * m_shape.n)));
        m_zero = llvm::ConstantFP::get(m_f32, 0.0);
    }
    // Loads element (row, column) of a row-major [rows, columns] matrix, 0 outside.
    Value* guardedLoad(Value* base, Value* row, Value* column, int64_t rows, int64_t columns) {
        Value* inside =
            m_b.CreateAnd(m_b.CreateICmpULT(row, c(rows)), m_b.CreateICmpULT(column, c(columns)));
        Value* position =
            m_b.CreateSelect(inside, m_b.CreateAdd(m_b.CreateMul(row, c(columns)), column), c(0));
        Value* loaded = m_b.CreateLoad(m_f32, m_b.CreateInBoundsGEP(m_f32, base, position));
        return m_b.CreateSelect(inside, loaded, m_zero);
    }
    Value* tileSlot(llvm::GlobalVariable* tile, Value* position) {
        return m_b.CreateInBoundsGEP(m_tileType, tile, {c(0), position});
    }
    // Stages the tiles at k0: 1024 elements each, 4 per thread, consecutive
    // threads on consecutive addresses of the stored matrix.
    void stageTiles(Value* k0) {
        for (int64_t r = 0; r < 4; ++r) {
            Value *mm, *kkA, *value;
            if (!m_shape.lhsTransposed) {  // stored [m, k]: k fastest
                kkA = m_b.CreateAnd(m_t, c(kDepth - 1));
                mm = m_b.CreateAdd(m_b.CreateLShr(m_t, 4), c(16 * r));
                value = guardedLoad(m_lhs, m_b.CreateAdd(m_m0, mm), m_b.CreateAdd(k0, kkA),
                                    m_shape.m, m_shape.k);
            } else {  // stored [k, m]: m fastest
                mm = m_b.CreateAnd(m_t, c(kTile - 1));
                kkA = m_b.CreateAdd(m_b.CreateLShr(m_t, 6), c(4 * r));
                value = guardedLoad(m_lhs, m_b.CreateAdd(k0, kkA), m_b.CreateAdd(m_m0, mm),
                                    m_shape.k, m_shape.m);
            }
            m_b.CreateStore(value,
                            tileSlot(m_tileA, m_b.CreateAdd(m_b.CreateMul(kkA, c(kTile)), mm)));
            Value *nn, *kkB;
            if (!m_shape.rhsTransposed) {  // stored [k, n]: n fastest
                nn = m_b.CreateAnd(m_t, c(kTile - 1));
                kkB = m_b.CreateAdd(m_b.CreateLShr(m_t, 6), c(4 * r));
                value = guardedLoad(m_rhs, m_b.CreateAdd(k0, kkB), m_b.CreateAdd(m_n0, nn),
                                    m_shape.k, m_shape.n);
            } else {  // stored [n, k]: k fastest
                kkB = m_b.CreateAnd(m_t, c(kDepth - 1));
                nn = m_b.CreateAdd(m_b.CreateLShr(m_t, 4), c(16 * r));
                value = guardedLoad(m_rhs, m_b.CreateAdd(m_n0, nn), m_b.CreateAdd(k0, kkB),
                                    m_shape.n, m_shape.k);
            }
            m_b.CreateStore(value,
                            tileSlot(m_tileB, m_b.CreateAdd(m_b.CreateMul(kkB, c(kTile)), nn)));
        }
    }
    // The thread's 4x4 sums over the staged depth (its rows and columns set here).
    void multiplyTiles(std::vector<Value*>& sums) {
        m_rowBase = m_b.CreateMul(m_ty, c(kPer));
        m_columnBase = m_b.CreateMul(m_tx, c(kPer));
        for (int64_t kk = 0; kk < kDepth; ++kk) {
            Value* a[kPer];
            Value* bv[kPer];
            for (int64_t i = 0; i < kPer; ++i) {
                a[i] = m_b.CreateLoad(
                    m_f32, tileSlot(m_tileA, m_b.CreateAdd(m_rowBase, c(kk * kTile + i))));
                bv[i] = m_b.CreateLoad(
                    m_f32, tileSlot(m_tileB, m_b.CreateAdd(m_columnBase, c(kk * kTile + i))));
            }
            for (int64_t i = 0; i < kPer; ++i)
                for (int64_t j = 0; j < kPer; ++j)
                    sums[static_cast<size_t>(i * kPer + j)] = m_b.CreateIntrinsic(
                        llvm::Intrinsic::fma, {m_f32},
                        {a[i], bv[j], sums[static_cast<size_t>(i * kPer + j)]});
        }
    }
    // The thread's outputs that lie inside the matrix.
    void storeResults(const std::vector<Value*>& sums) {
        for (int64_t i = 0; i < kPer; ++i)
            for (int64_t j = 0; j < kPer; ++j) {
                Value* row = m_b.CreateAdd(m_m0, m_b.CreateAdd(m_rowBase, c(i)));
                Value* column = m_b.CreateAdd(m_n0, m_b.CreateAdd(m_columnBase, c(j)));
                llvm::BasicBlock* write = llvm::BasicBlock::Create(m_context, "write", m_function);
                llvm::BasicBlock* next = llvm::BasicBlock::Create(m_context, "next", m_function);
                m_b.CreateCondBr(m_b.CreateAnd(m_b.CreateICmpULT(row, c(m_shape.m)),
                                               m_b.CreateICmpULT(column, c(m_shape.n))),
                                 write, next);
                m_b.SetInsertPoint(write);
                m_b.CreateStore(sums[static_cast<size_t>(i * kPer + j)],
                                m_b.CreateInBoundsGEP(
                                    m_f32, m_out,
                                    m_b.CreateAdd(m_b.CreateMul(row, c(m_shape.n)), column)));
                m_b.CreateBr(next);
                m_b.SetInsertPoint(next);
            }
    }

    llvm::LLVMContext& m_context;
    llvm::Module& m_module;
    const std::string& m_name;
    const GpuGemmShape& m_shape;
    llvm::IRBuilder<> m_b;
    llvm::Type* m_f32;
    llvm::Type* m_i64;
    llvm::ArrayType* m_tileType;
    llvm::Function* m_function = nullptr;
    llvm::GlobalVariable* m_tileA = nullptr;
    llvm::GlobalVariable* m_tileB = nullptr;
    Value* m_tx = nullptr;
    Value* m_ty = nullptr;
    Value* m_t = nullptr;  // the thread's index in the block
    Value* m_m0 = nullptr;
    Value* m_n0 = nullptr;
    Value* m_lhs = nullptr;
    Value* m_rhs = nullptr;
    Value* m_out = nullptr;
    Value* m_zero = nullptr;
    Value* m_rowBase = nullptr;
    Value* m_columnBase = nullptr;
};

}  // namespace

StatusOr<GpuKernelInfo> GpuKernelEmitter::emitGemm(const std::string& name,
                                                   const GpuGemmShape& shape) {
    HLO_RETURN_IF_ERROR(m_impl->machineStatus);
    if (m_impl->code.compiled) return internalError("GpuKernelEmitter: emit after compileToPtx");
    if (shape.batch <= 0 || shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch > 65535)
        return invalidArgument("GEMM " + name + ": unsupported shape");
    GemmKernel(*m_impl->code.module, name, shape).emit();
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
