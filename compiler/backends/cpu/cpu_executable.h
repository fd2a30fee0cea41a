// CpuExecutable: a module compiled for this machine's CPU, and its runtime.
//
// Compilation turns every computation that runs as a sequence (the entry,
// and the bodies, conditions, branches and callees of while, conditional and
// call) into a thunk sequence, in the order buffer assignment assumes
// (executionSequence):
//   * kernel    a fusion or a single op, JIT'd by CpuKernelEmitter (loop or
//               reduction), run in parallel over output elements on the
//               thread pool (reductions with few outputs split over their
//               reduced elements, partial results combined);
//   * gemm      a dot that maps onto the runtime GEMM (Eigen), and kOutput
//               fusions of such a dot with an elementwise epilogue: each row
//               block is multiplied into a per-thread scratch block and the
//               epilogue kernel reads it from there while it is in cache;
//   * while / conditional / call   run their computations' thunk sequences;
//   * aliases   parameter, constant, tuple, get-tuple-element, bitcast
//               (row-major storage makes it free), barriers (reshape is a
//               copy kernel: buffer assignment gives it a buffer);
//   * fallback  anything the emitter cannot compile, run by the reference
//               interpreter on copies of its operands; every one is listed
//               in fallbacks() with the reason, and reported per run.
// Buffers: the entry computation's temporaries live in one arena laid out
// by compiler/buffers' assignment (allocations shared by buffers whose live
// ranges do not overlap), allocated once and reused by every run; called
// computations get arenas of their own (no reuse inside them). The entry's
// outputs are written in place into output storage that the next run reuses
// when the caller has dropped the returned literals (no page faults then).
//
// Runs of one executable are serialised (one arena). A module of several
// devices is compiled once per device (CpuCompileOptions' ids), and the
// executables run at once, meeting at their collectives (CpuDevice).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/execution_device.h"
#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

class CollectiveExchange;  // core/interpreter/multi_device.h
class ThreadPool;

// Kernels with fewer elements of work (output elements times the elements
// each reduces) run on the calling thread; larger ones on the thread pool.
// (calibrate writes it into the cpu target's runtime figures.)
inline constexpr int64_t kCpuParallelMinWork = 32768;

struct CpuCompileOptions {
    // A kernel whose outputs total at least this many bytes writes them with
    // non-temporal stores (KernelSpec::streamOutputs); -1: the size of
    // the last-level cache (compiler/runtime/host_caches.h; 32 MiB when
    // unknown).
    int64_t streamingStoreBytes = -1;
    // The device of the module's grid (core/ir/collective_groups.h) the
    // executable runs as: replica-id and partition-id are these constants in
    // its kernels, and its fallbacks evaluate collectives as this device.
    int64_t replicaId = 0;
    int64_t partitionId = 0;
    // The devices of that grid. With more than one, every collective is a
    // fallback (the interpreter meets the other devices through the
    // exchange); with one, a kernel passes a one-participant collective's
    // operand through.
    int64_t devices = 1;
};

// The threshold CpuCompileOptions{} uses on this machine.
int64_t defaultStreamingStoreBytes();

class CpuExecutable {
public:
    // Compiles `module` (already through the pipeline). Fails only for
    // malformed modules or an LLVM failure; unsupported instructions become
    // fallbacks.
    static StatusOr<std::unique_ptr<CpuExecutable>> compile(std::unique_ptr<HloModule> module,
                                                            const CpuCompileOptions& options = {});
    ~CpuExecutable();
    CpuExecutable(const CpuExecutable&) = delete;
    CpuExecutable& operator=(const CpuExecutable&) = delete;

    // Runs the entry computation on `args`. `pool` may be null (one thread).
    // `collectives`: the meeting point of the grid's devices when the
    // module runs on several, each device's executable on a thread of its
    // own (CpuDevice); the collectives the kernels cannot compute (those
    // between devices) are fallbacks that exchange values through it. Null:
    // one device.
    StatusOr<ExecutionResult> run(const std::vector<Literal>& args, const ExecutionOptions& options,
                                  ThreadPool* pool, CollectiveExchange* collectives = nullptr);

    const HloModule& module() const;
    double compileSeconds() const;
    // "%name: why" for every instruction run by the interpreter.
    const std::vector<std::string>& fallbacks() const;
    int64_t kernelCount() const;  // JIT'd kernels and GEMM thunks
    int64_t arenaBytes() const;   // temporaries of every thunk sequence
    // dynamic-update-slices that write into their operand's storage (a loop's state updated in
    // place) rather than into a copy of it.
    int64_t inPlaceUpdateCount() const;

    struct Impl;

private:
    explicit CpuExecutable(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace hloscope
