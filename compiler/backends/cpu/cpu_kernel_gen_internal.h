// Internal to compiler/backends/cpu/*.cc (LLVM-typed): CpuKernelGen, the CPU's
// kernel shape around the shared element generator (KernelGen,
// compiler/backends/llvm/kernel_gen_internal.h): a loop over rows of the
// innermost output dimension with hoisted row reductions, the combiner of a
// split reduction and streaming stores (cpu_kernel_emitter.cc); and the
// streaming-store helpers (cpu_stream_store.cc). Never include this from a
// header.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/backends/cpu/cpu_kernel_emitter.h"
#include "compiler/backends/llvm/kernel_gen_internal.h"

namespace hloscope {

struct CpuKernelEmitter::Impl {
    llvm_codegen::KernelModule code;  // context, module, counters (the element generator's)
};

namespace cpu_internal {

using llvm::Value;
using llvm_codegen::Index;
using llvm_codegen::KernelModule;
using llvm_codegen::unsupportedAt;

// Streaming stores: whether the module's target has them (x86-64); the
// module's copy function, created on first use: void(ptr dst, ptr src, i64
// bytes), the whole 64-byte lines of dst written with non-temporal stores,
// the partial lines at either end by memcpy; and the fence that orders them
// before the kernel returns.
bool supportsStreamingStores(const llvm::Module& module);
llvm::Function* streamCopyFunction(llvm::Module& module);
void emitStoreFence(llvm::IRBuilderBase& b);

// The CPU kernel of cpu_kernel_emitter.h's top comment: run() emits the
// kernel function and, for a kernel of reduces, its combiner.
class CpuKernelGen : public llvm_codegen::KernelGen {
public:
    CpuKernelGen(KernelModule& code, const KernelSpec& spec) : KernelGen(code, spec) {}

    StatusOr<CpuKernelInfo> run();

protected:
    StatusOr<Value*> genOther(const HloInstruction& instruction, const Index& index) override;

private:
    // The rows of the output elements [begin, end) being emitted: `i` is the
    // row's first element, `count` its elements in the range (or in the
    // streaming chunk).
    struct RowLoop {
        llvm::BasicBlock* entry = nullptr;
        llvm::BasicBlock* row = nullptr;      // the row's preamble (hoisted reductions join it)
        llvm::BasicBlock* element = nullptr;  // the element loop
        llvm::BasicBlock* latch = nullptr;
        llvm::BasicBlock* done = nullptr;
        llvm::PHINode* i = nullptr;
        Value* count = nullptr;
        Value* column0 = nullptr;
        Value* columnEnd = nullptr;
        std::vector<Value*> outer;  // the row's coordinates (all but the last)
        Value* rowBase = nullptr;
    };
    // The kernel function with its entry block: binds the leaves, sets the
    // reduced range and returns the output pointers.
    std::vector<Value*> beginFunction();
    // The row loop's blocks and the row preamble (the insert point at its end).
    RowLoop beginRows(const std::vector<int64_t>& dims);
    // Prefetches of the next row of the leaves read at the output's positions
    // (kernels with hoisted row reductions), in the row preamble.
    void emitNextRowPrefetch(const RowLoop& loop, const std::vector<int64_t>& dims);
    // The element loop of a row: every output computed and stored (to the
    // stream buffers when streaming); the row preamble closed.
    Status emitRowElements(RowLoop& loop, const std::vector<int64_t>& dims,
                           const std::vector<Value*>& outputPointers);
    // The latch (streamed chunks copied out) and the kernel's return.
    void endRows(RowLoop& loop, const std::vector<Value*>& outputPointers);
    // The combiner of a kernel of reduces (see CpuKernelInfo), when it can
    // be made; `kernel` stays whatever happens.
    void addCombiner(CpuKernelInfo& info, llvm::Function* kernel);
    Status emitCombiner(const std::string& name);

    // Streaming stores (KernelSpec::streamOutputs), decided per kernel.
    struct Streaming {
        bool on = false;
        bool splitRows = false;       // rows longer than a chunk: chunks at multiples of `capacity`
        int64_t capacity = 0;         // elements per stack buffer
        std::vector<Value*> buffers;  // per output
        std::vector<int64_t> elementBytes;
    } m_stream;
    void planStreaming(const std::vector<int64_t>& dims);
    void allocateStreamBuffers();
    bool hasReduceInside() const;
};

}  // namespace cpu_internal
}  // namespace hloscope
