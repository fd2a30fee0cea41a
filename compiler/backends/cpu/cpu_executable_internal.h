// Private to cpu_executable.cc (compilation) and cpu_executable_run.cc
// (the runtime): thunks, thunk sequences and CpuExecutable::Impl.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/backends/cpu/cpu_executable.h"
#include "compiler/backends/cpu/cpu_kernel_emitter.h"
#include "compiler/backends/llvm/llvm_jit.h"
#include "compiler/runtime/convolution.h"
#include "compiler/runtime/gemm.h"
#include "core/interpreter/native_scatter.h"
#include "core/interpreter/native_sort.h"
#include "core/ir/literal.h"

namespace hloscope::cpu_exec {

using Clock = std::chrono::steady_clock;

constexpr int64_t kAlignment = 64;
inline int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

// A value at run time: an array's storage, or a tuple of values.
struct RtValue {
    uint8_t* data = nullptr;
    std::vector<RtValue> elements;
    bool isTuple = false;
};

// Array leaves of a shape, depth first.
void collectLeaves(const Shape& shape, std::vector<const Shape*>& out);
// Bytes of an array in Literal storage (sub-byte types one byte each, unlike
// Shape::byteSize with a packed layout).
int64_t denseBytes(const Shape& shape);

enum class ThunkKind {
    kParameter,
    kConstant,
    kTuple,
    kGetTupleElement,
    kAlias,
    kEmpty,
    kKernel,
    kGemm,
    kGemmEpilogue,
    kConvolution,
    kConvolutionEpilogue,
    kWhile,
    kConditional,
    kCall,
    kFallback,
    // A dynamic-update-slice writing its update into its operand's storage (which it then is):
    // planned only where nothing reads the operand afterwards (canUpdateInPlace). Also a kLoop
    // fusion rooted at one (Thunk::fusedUpdate): its update computed first by a kernel part.
    kUpdateInPlace,
    // A scatter the runtime runs natively (core/interpreter/native_scatter.h): the operand copied into
    // the output, then the updates combined into it.
    kScatter,
    // A sort whose comparator is one compare of its keys (core/interpreter/native_sort.h),
    // lines sorted in parallel.
    kSort
};

struct Program;

struct LeafBuffer {
    int64_t offset = -1;  // in the program's arena
    int64_t bytes = 0;
    int output = -1;      // entry output storage index instead
};

struct Thunk {
    ThunkKind kind = ThunkKind::kEmpty;
    const HloInstruction* instruction = nullptr;
    std::vector<int> operands;         // slots of the operands
    std::vector<LeafBuffer> buffers;   // leaves this thunk defines (kernels, gemm, control flow)
    // kKernel / kGemmEpilogue / kConvolutionEpilogue
    KernelSpec spec;
    std::vector<int> leafOperands;     // per spec leaf: index into operands; -1: the dot (epilogue)
    CpuKernelInfo info;
    CpuKernelFunction kernel = nullptr;
    CpuCombineFunction combine = nullptr;
    int64_t outputElements = 0;
    std::vector<int64_t> outputBytes;  // per kernel output
    // kGemm / kGemmEpilogue
    // Operands permuted into [batch, free, contracting] order first (a dot
    // whose batch or contracting dimensions are elsewhere): per operand a
    // transpose kernel writing `permutedBuffers[i]`; null kernel: as is.
    CpuKernelFunction permute[2] = {nullptr, nullptr};
    std::string permuteName[2];
    LeafBuffer permuted[2];
    int64_t permutedElements[2] = {0, 0};
    GemmPlan plan;
    std::vector<int> gemmOperands;     // lhs, rhs slots
    int64_t dotElementBytes = 4;
    // kGemmEpilogue / kConvolutionEpilogue: the output holds elements of the
    // dot's or convolution's size, so the library writes the output itself
    // and the epilogue rewrites it in place (it reads its producer only at
    // each element's own index); else the producer goes to scratch first.
    bool epilogueInPlace = false;
    // kConvolution / kConvolutionEpilogue (the convolution's operands are
    // gemmOperands; an epilogue's convolution result lives in `scratch`
    // unless epilogueInPlace).
    std::shared_ptr<const ConvPlan> convolution;
    LeafBuffer scratch;
    // kScatter
    std::shared_ptr<const NativeScatterPlan> scatter;
    // kSort
    std::shared_ptr<const NativeSortPlan> sort;
    // kConstant
    Literal constant;
    // control flow
    std::vector<Program*> callees;     // while: condition, body; conditional: branches; call: callee
    std::string fallbackReason;
    // kKernel whose outputs differ in iteration space (KernelSpec::outputGroups): one kernel per
    // group, run in order. A part holds its spec, info, functions, outputElements and
    // outputBytes; `partOutputs` are its outputs' indices into this thunk's buffers.
    std::vector<Thunk> parts;
    std::vector<size_t> partOutputs;
    // kUpdateInPlace of a fusion rooted at a dynamic-update-slice (that root): the buffer is
    // operand `inPlaceOperand`; the update is operand `updateOperand`, or (-1) what parts[0]
    // computes into `scratch` from the fusion's operands; start d is operand startOperands[d],
    // or (-1) the constant startConstants[d].
    const HloInstruction* fusedUpdate = nullptr;
    int inPlaceOperand = 0;
    int updateOperand = -1;
    std::vector<int> startOperands;
    std::vector<Literal> startConstants;
};

struct Program {
    const HloComputation* computation = nullptr;
    bool isEntry = false;
    // Its parameters' storage belongs to this program's activation (a while body's: the loop's
    // state, which the loop copied from its operand), so it may be updated in place.
    bool privateParameters = false;
    std::vector<Thunk> thunks;  // thunk i defines slot i
    std::unordered_map<const HloInstruction*, int> slotOf;
    int rootSlot = -1;
    int64_t arenaBytes = 0;
    std::unique_ptr<uint8_t[]> arena;
    // Frame (one activation at a time: HLO has no recursion).
    std::vector<RtValue> values;
    std::vector<Literal> owned;  // fallback results and copies
};

}  // namespace hloscope::cpu_exec

namespace hloscope {

struct CpuExecutable::Impl {
    using Program = cpu_exec::Program;
    using Thunk = cpu_exec::Thunk;

    std::unique_ptr<HloModule> module;
    std::unique_ptr<CpuJit> jit;
    // Instructions made by the compiler (canonical dots, their transposes);
    // destroyed before the module.
    std::vector<std::unique_ptr<HloInstruction>> synthetic;
    std::vector<std::unique_ptr<Program>> programs;  // [0] is the entry
    // Per computation, built as a while body (private parameters) or otherwise.
    std::map<std::pair<const HloComputation*, bool>, Program*> programOf;
    std::vector<std::string> fallbacks;
    int64_t kernels = 0;
    double compileSeconds = 0;
    int64_t functionCounter = 0;
    int64_t streamingStoreBytes = 0;  // resolved CpuCompileOptions::streamingStoreBytes
    int64_t replicaId = 0;            // CpuCompileOptions' device
    int64_t partitionId = 0;
    int64_t devices = 1;
    std::mutex runMutex;
    // Entry outputs: flattened root leaves and their recycled storage.
    std::vector<const Shape*> outputShapes;
    std::vector<std::shared_ptr<std::vector<uint8_t>>> outputStorage;
    std::vector<uint8_t*> outputPointers;
    // Partial-reduction scratch, grown on demand.
    std::vector<std::unique_ptr<uint8_t[]>> scratch;
    std::vector<int64_t> scratchBytes;
    // The largest set of per-thread GEMM epilogue tiles a run used.
    int64_t tileScratchBytes = 0;

    StatusOr<Program*> buildProgram(const HloComputation& computation, bool isEntry,
                                    CpuKernelEmitter& emitter, bool privateParameters = false);
    Status planThunk(Program& program, Thunk& thunk, CpuKernelEmitter& emitter);
    // Steps of planThunk: a thunk without buffers of its own (true when planned), a while, call or conditional (true when planned), a
    // dot, a fusion's kernel spec (its GEMM or convolution planned first where it has one; the
    // reason it cannot be a kernel, or OK) and the kernel itself (the interpreter on failure).
    StatusOr<bool> planWithoutBuffers(Thunk& thunk);
    StatusOr<bool> planCallees(Thunk& thunk, CpuKernelEmitter& emitter);
    void planDotThunk(Thunk& thunk, CpuKernelEmitter& emitter);
    Status planFusionSpec(Thunk& thunk, CpuKernelEmitter& emitter);
    void planKernelThunk(Thunk& thunk, const std::vector<const Shape*>& leaves,
                         CpuKernelEmitter& emitter, Status failure);
    // thunk.parts: a kernel per group of outputs of one iteration space.
    Status planKernelParts(Thunk& thunk, const std::vector<std::vector<size_t>>& groups,
                           const std::vector<const Shape*>& leaves, CpuKernelEmitter& emitter);
    Status planCanonicalDot(Thunk& thunk, CpuKernelEmitter& emitter);
    // thunk.plan for `dot` (the thunk's own or an epilogue fusion's), with
    // transpose kernels for operands whose dimensions are not in GEMM order.
    Status planDotOperands(Thunk& thunk, const HloInstruction& dot, CpuKernelEmitter& emitter);
    Status permuteDotOperands(Thunk& thunk, const HloInstruction& dot, CpuKernelEmitter& emitter);
    void makeFallback(Thunk& thunk, const Status& why);
    // A thunk the runtime runs natively (kSort, kScatter) from its plan, or the interpreter's
    // with the plan's reason.
    template <typename Plan>
    void planNative(Thunk& thunk, StatusOr<Plan> plan, cpu_exec::ThunkKind kind,
                    std::shared_ptr<const Plan>& slot);
    // Whether `instruction` (a dynamic-update-slice, or a fusion rooted at one) may write into
    // the storage of its operand `bufferOperand`.
    bool canUpdateInPlace(const Program& program, const HloInstruction& instruction, int64_t bufferOperand) const;
    // A fusion rooted at a dynamic-update-slice of one of its parameters, updated in place
    // (false: plan it as any kernel).
    bool planFusedUpdateInPlace(Program& program, Thunk& thunk, CpuKernelEmitter& emitter);
    Status layOutBuffers(Program& program);
    Status assignOutputs();
    Status resolveFunctions();
};

}  // namespace hloscope
