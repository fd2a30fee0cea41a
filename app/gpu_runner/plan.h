// A GPU execution plan (format "hloscope-gpu-plan", version 1; see the format note in
// README.md beside this file): plan.json read into typed structs and checked in full, files
// included, before anything touches the GPU.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hloscope::gpu {

constexpr int kPlanFormatVersion = 1;

// One buffer: a byte range of the arena.
struct PlanBuffer {
    int64_t id = 0;
    uint64_t offset = 0;
    uint64_t bytes = 0;
    std::string name;
};

// An input or constant: `bytes` bytes of `path` uploaded to the start of buffer `buffer`.
struct PlanUpload {
    std::string where;  // "inputs[0]", for messages
    int64_t buffer = 0;
    int64_t device = -1;  // an input's device; -1: every device (constants)
    std::string file;  // as written in the plan
    std::string path;  // resolved against the plan directory
    uint64_t bytes = 0;
    // >= 0: no file; float32 values generated with this seed (synthetic inputs,
    // compiler/backends/gpu/gpu_synthetic.h).
    int64_t generateSeed = -1;
};

// An output: the first `bytes` bytes of buffer `buffer`, written to outputs/<index>.bin.
struct PlanOutput {
    int64_t index = 0;
    int64_t buffer = 0;
    uint64_t device = 0;  // whose arena holds it
    uint64_t bytes = 0;
    uint64_t elements = 0;  // the product of "dims" (bytes / elements is the element size)
};

// A kernel launch: an .entry of the plan's PTX module, each argument one 64-bit device pointer
// (arena base + buffer offset), in order.
struct KernelLaunch {
    std::string entry;
    std::array<uint32_t, 3> grid = {1, 1, 1};
    std::array<uint32_t, 3> block = {1, 1, 1};
    uint32_t sharedBytes = 0;
    std::vector<int64_t> args;
    std::vector<uint64_t> argDevices;  // per argument (multi-device plans); empty: the step's
};

// A row-major matrix product (see Cublas::sgemm for the layout).
struct GemmOp {
    std::string type;  // "f32" is the only type cuBLAS runs; others use the fallback
    int batch = 1;
    int m = 0;
    int n = 0;
    int k = 0;
    int64_t lhs = 0;
    int64_t rhs = 0;
    int64_t out = 0;
    bool lhsTransposed = false;
    bool rhsTransposed = false;
    std::optional<KernelLaunch> fallback;
};

enum class StepKind { Kernel, Copy, Memset, Gemm, Branch, Jump, Switch };

const char* stepKindName(StepKind kind);

struct PlanStep {
    StepKind kind = StepKind::Kernel;
    std::string name;
    std::string where;         // "steps[3] (fusion.2)", for messages
    // The device whose arena the step's buffers are in; a copy reads from srcDevice. A
    // branch or switch of a multi-device plan reads its predicate on every device, which
    // must agree.
    uint64_t device = 0;
    uint64_t srcDevice = 0;
    KernelLaunch kernel;       // Kernel
    int64_t src = 0, dst = 0;  // Copy
    int64_t buffer = 0;        // Memset
    uint8_t value = 0;         // Memset
    uint64_t bytes = 0;        // Copy, Memset
    GemmOp gemm;               // Gemm
    // Branch: when the first byte of buffer `buffer` (a pred) is 0, go on at step `target`
    // (a later step, or the step count: the end). Jump: go on at step `target`; a jump back
    // (a while loop's way back to its condition) at most `limit` times per execution of the
    // loop (a branch leaving the loop, to the step after the jump, starts the count again);
    // one more is an error. Switch: a conditional; buffer `buffer` holds its selector, a pred
    // (`indexIsPred`: true goes on at targets[0], false at targets[1]) or an s32 (targets[i],
    // out of range the last).
    uint64_t target = 0;
    uint64_t limit = 0;
    bool indexIsPred = false;
    std::vector<uint64_t> targets;
};

struct Plan {
    std::string dir;       // as given on the command line
    std::string planFile;  // dir + "/plan.json", the prefix of every message about the plan
    std::string module;
    std::string mode;
    std::string sm;
    std::string ptxFile;  // as written; empty when the plan has no kernels and names none
    std::string ptxPath;
    std::string ptxText;  // the module, read during validation
    uint64_t arenaBytes = 0;  // per device: device d's arena starts at d * arenaBytes
    uint64_t devices = 1;     // "replicas" x "partitions"
    std::map<int64_t, PlanBuffer> buffers;
    std::vector<PlanUpload> inputs;
    std::vector<PlanUpload> constants;
    std::vector<PlanOutput> outputs;
    std::vector<PlanStep> steps;
    int warmup = 3;
    int repeat = 20;

    const PlanBuffer& buffer(int64_t id) const { return buffers.at(id); }
};

// Reads DIR/plan.json and checks it completely: format and version, every buffer inside the
// arena, every reference to a defined buffer, sizes that fit their buffers, launch shapes, the
// input/constant files present with the stated sizes, the PTX module present and defining
// each kernel entry with as many parameters as the step passes. On failure returns false with
// *error = "<dir>/plan.json: <where>: <what>" (JSON syntax errors: "line L, column C: ...").
bool loadPlan(const std::string& dir, Plan* plan, std::string* error);

// The .entry functions of a PTX module and their parameter counts (comments skipped).
std::map<std::string, int> scanPtxEntries(const std::string& ptx);

}  // namespace hloscope::gpu
