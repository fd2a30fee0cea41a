// GpuPlan: everything one GPU run needs, self-contained, so that it can run
// next to the app or be copied to a GPU machine (hloscope-gpu-runner,
// app/gpu_runner; the format is documented in docs/gpu_plan_format.md):
// one PTX module with every kernel, the launch dimensions of each step, the
// buffers (offsets in one device arena, packed by live range as
// compiler/buffers/heap_layout does for the CPU), the inputs and large
// constants as raw bytes, and the outputs to copy back.
//
// buildGpuPlan takes a module already through a `gpu` pipeline (fused or
// unfused) and turns its entry computation, in buffer assignment's
// execution order, into steps:
//   * kernel   a fusion or single op, through GpuKernelEmitter (a fusion
//              whose outputs differ in shape becomes one kernel per shape);
//              split reductions add their combine kernel; a sort is copies
//              of its operands into its outputs and one kernel sorting them
//              in place; top-k is one kernel; an fft is one kernel per transformed
//              axis with a twiddle table per axis length as a constant; an
//              rng-bit-generator is one kernel writing its new state and bits;
//   * gemm     a float32 dot that is a plain (batched) matrix product, and
//              the dot of a kOutput fusion (whose epilogue is then a kernel
//              reading the product): the runner calls cuBLAS, or runs the
//              step's fallback kernel (our own PTX) when cuBLAS is absent;
//   * aliases  parameter, constant, tuple, get-tuple-element, bitcast,
//              reshape (dense row-major storage makes them free) cost no step,
//              nor do collectives with one participant (their operands' buffers,
//              as the interpreter passes the values on);
//   * memset   zeros (a collective-permute that receives nothing, the context
//              elements of async-start tuples);
// async-start/-update/-done and copy-start/-done route buffers, the wrapped
// computation planned in place; calls are inlined; a tuple-shaped entry
// parameter has one input per array leaf;
//   * copy, branch, jump  a while loop: its state buffers, the condition's
//              steps, a branch out on its pred[] result, the body's steps,
//              copies of the body's result into the state, a jump back;
//   * switch, copy, jump  a conditional: each branch's steps, copies of its
//              result into the conditional's buffers, a jump past the others.
// Ops the emitter cannot compile are errors naming the instruction: a GPU
// plan never falls back silently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/gpu/gpu_kernel_emitter.h"
#include "compiler/runtime/execution_device.h"
#include "core/ir/collective_groups.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {

inline constexpr int kGpuPlanVersion = 1;
inline constexpr int64_t kGpuBufferAlignment = 256;

struct GpuPlanBuffer {
    int id = 0;
    int64_t offset = 0;
    int64_t bytes = 0;
    std::string name;  // "%instruction" (and ".k" for a leaf of a tuple)
};

struct GpuPlanArray {
    int buffer = -1;
    PrimitiveType type = PrimitiveType::F32;
    std::vector<int64_t> dims;
    int64_t bytes = 0;
    int64_t device = 0;  // whose arena holds it (multi-device plans)
};

struct GpuPlanInput {
    int64_t parameter = 0;
    int64_t device = 0;  // the device whose argument it is (multi-device plans)
    std::string name;
    GpuPlanArray array;
    // A tuple-shaped parameter has one input per array leaf: leaf k (depth
    // first) of the parameter whose shape is `tupleShape` (HLO text); -1 and
    // empty for an array parameter.
    int64_t leaf = -1;
    std::string tupleShape;
    // >= 0: a float32 input the runner generates (gpu_synthetic.h) instead
    // of reading a file.
    int64_t syntheticSeed = -1;
};

struct GpuPlanConstant {
    int buffer = -1;
    std::string name;
    Literal value;
};

enum class GpuStepKind { kKernel, kCopy, kMemset, kGemm, kBranch, kJump, kSwitch };

struct GpuPlanStep {
    GpuStepKind kind = GpuStepKind::kKernel;
    std::string
        name;  // the instruction it computes ("fusion.3"; a combine step: "fusion.3.combine")
    std::string opcode;       // the instruction's opcode
    std::string instruction;  // the instruction's name (step times are summed per instruction)
    // The device whose arena the step's buffers are in (0 on one device). A multi-device
    // kernel step may read other devices' buffers: argDevices[i] is the device of args[i]
    // (empty: all `device`'s); a copy's source is on srcDevice (-1: `device`). A branch or
    // switch of a multi-device plan reads its predicate on every device, which must agree.
    // While a plan is built, -1 stands for every device (the step is repeated per device).
    int64_t device = -1;
    std::vector<int64_t> argDevices;
    int64_t srcDevice = -1;
    // kKernel
    std::string entry;
    GpuLaunchDims launch;
    std::vector<int> args;  // buffer ids, one pointer parameter each
    // kCopy / kMemset
    int src = -1, dst = -1;
    int64_t bytes = 0;
    int value = 0;
    // kGemm: row-major out[batch, m, n] = lhs[batch, m, k] . rhs[batch, k, n]
    // (lhs stored [batch, k, m] when lhsTransposed, rhs [batch, n, k] when
    // rhsTransposed).
    int64_t batch = 1, m = 0, n = 0, k = 0;
    int lhs = -1, rhs = -1, out = -1;
    bool lhsTransposed = false, rhsTransposed = false;
    std::vector<GpuPlanStep> fallback;  // one kernel step
    // kBranch: when the byte of buffer `predicate` is 0, go on at step `target` (the step after
    // a while loop). kJump: go on at step `target`; a jump back (a while loop's, to its
    // condition) at most `limit` times per execution of the loop, then an error. kSwitch: a
    // conditional; buffer `predicate` holds its selector, of type `indexType` ("pred": true
    // goes on at targets[0], false at targets[1]; "s32": targets[index], out of range the
    // last, as the interpreter does).
    int predicate = -1;
    int target = -1;
    int64_t limit = 0;
    std::string indexType;
    std::vector<int> targets;
};

struct GpuPlan {
    std::string module;
    // The devices it runs (core/ir/collective_groups.h): every device has an arena of arenaBytes
    // laid out alike, device d's at d * arenaBytes; inputs and outputs name their device, and
    // constants are copied into every arena.
    int64_t replicas = 1, partitions = 1;
    int64_t devices() const { return replicas * partitions; }
    std::string mode;  // "fused" / "unfused"
    std::string sm;
    std::string ptx;
    int64_t arenaBytes = 0;
    std::vector<GpuPlanBuffer> buffers;
    std::vector<GpuPlanInput> inputs;
    std::vector<GpuPlanConstant> constants;
    std::vector<GpuPlanArray> outputs;  // the entry result's array leaves, depth first
    std::vector<GpuPlanStep> steps;
    int warmup = 3;
    int repeat = 20;
    int64_t kernels = 0;        // kernel and gemm steps
    double compileSeconds = 0;  // PTX generation
    // The kernels as LLVM IR before NVPTX code generation (GpuPlanOptions::keepHostIr; for
    // emulateGpuPlan, gpu_emulator.h); never written to a plan directory.
    std::string hostIr;
};

struct GpuPlanOptions {
    std::string sm = "sm_90";
    std::string mode = "fused";
    // Float32 dots as gemm steps (cuBLAS in the runner, our tiled GEMM kernel
    // without it); false: dots generated element by element inside kernels.
    bool gemmSteps = true;
    int warmup = 3;
    int repeat = 20;
    // A while loop's jump limit (the interpreter's guard against runaway loops).
    int64_t maxWhileIterations = 100'000'000;
    // Keep the kernels' LLVM IR in GpuPlan::hostIr (for the host emulator).
    bool keepHostIr = false;
};

// The plan of `module` (through a gpu pipeline), or an error naming the
// first instruction it cannot run on the GPU and why.
StatusOr<GpuPlan> buildGpuPlan(const HloModule& module, const GpuPlanOptions& options);

// Writes `plan` into `dir` (created): plan.json, kernels.ptx, inputs/*.bin
// from `args` (one per entry parameter, in order), constants/*.bin,
// `moduleText` as module.hlo (the module the outputs are checked against)
// and `preparedText` (the module as the pipeline left it, which the plan
// runs; the estimator predicts from it) as prepared.hlo.
// An input whose literal is marked synthetic (syntheticInputs(), below) is
// written as "generate" with its seed rather than as a file.
Status writeGpuPlan(const GpuPlan& plan, const std::vector<Literal>& args,
                    const std::string& moduleText, const std::string& preparedText,
                    const std::string& dir, const std::vector<int64_t>& syntheticSeeds = {});

// Arguments for `entry`'s parameters: float32 ones synthetic (seed base +
// parameter number; `seeds` gets them, -1 for the others), the others
// random as makeRandomArguments makes them.
std::vector<Literal> syntheticArguments(const HloComputation& entry, uint64_t base,
                                        std::vector<int64_t>& seeds);

// A multi-device plan: `deviceArgs[d]` are device d's arguments (device d's
// input files are inputs/device<d>.<parameter>.bin, device 0's as above).
Status writeGpuPlanOnDevices(const GpuPlan& plan,
                             const std::vector<std::vector<Literal>>& deviceArgs,
                             const std::string& moduleText, const std::string& preparedText,
                             const std::string& dir,
                             const std::vector<int64_t>& syntheticSeeds = {});

// A plan directory as written, read back (no PTX compilation): the plan's
// description (ptx holds the text), the inputs as literals (device 0's; every
// device's in deviceInputs), module.hlo.
struct GpuPlanFiles {
    GpuPlan plan;
    std::vector<Literal> inputs;
    std::vector<std::vector<Literal>> deviceInputs;
    std::string moduleText;
    std::string preparedText;
};
StatusOr<GpuPlanFiles> readGpuPlan(const std::string& dir);

// What the runner measured (results.json and outputs/*.bin).
struct GpuStepTime {
    std::string name;
    std::string kind;
    std::string used;  // "kernel", "cublas", "copy", "memset", "branch", "jump"
    // Summed over the step's executions in a run (steps inside while loops run once per
    // iteration).
    double medianMs = 0, minMs = 0, maxMs = 0;
    int64_t iterations = -1;  // a jump step: the times it jumped in the last run
};
struct GpuRunResults {
    std::map<std::string, std::string>
        device;          // name, compute_capability, sm_count, driver, clock_khz, ...
    std::string cublas;  // library used, empty when none
    int warmup = 0, repeat = 0;
    std::vector<double> runMs;
    double medianMs = 0, minMs = 0, maxMs = 0;
    double moduleLoadMs = 0;
    std::vector<GpuStepTime> steps;
    // Typed by the plan's outputs; a sampled output (runner --sample N) is a
    // rank-1 array of its elements 0, stride, 2 * stride, ...
    std::vector<Literal> outputs;
    std::vector<int64_t> sampleStrides;  // per output; 1: complete
};

// The measured time of every instruction the plan computes: the medians of
// its steps (a split reduction's combine, a kOutput fusion's GEMM and
// epilogue, a dot's operand transposes, the kernels of a fusion split by
// output shape) summed, in plan order.
std::vector<MeasuredTime> instructionTimesOf(const GpuPlan& plan, const GpuRunResults& results);

// Elements 0, stride, 2 * stride, ... of `literal` as a rank-1 literal
// (the literal itself for stride 1).
Literal sampleLiteral(const Literal& literal, int64_t stride);
// `resultsDir`: where the runner wrote (the plan directory by default).
StatusOr<GpuRunResults> readGpuResults(const GpuPlan& plan, const std::string& resultsDir);

// `outputs` (typed by the plan's outputs: every device's leaves in plan order) by device:
// [d] is device d's leaves, depth first.
std::vector<std::vector<Literal>> outputsByDevice(const GpuPlan& plan,
                                                  std::vector<Literal> outputs);

}  // namespace hloscope
