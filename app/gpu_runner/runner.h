// The three things hloscope-gpu-runner does (run a plan, probe the device, print device info),
// their options, and the exit codes they share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hloscope::gpu {

constexpr const char* kRunnerName = "hloscope-gpu-runner";
// The project version (CMakeLists.txt: project(VERSION), the hloscope tree's when built inside it).
constexpr const char* kRunnerVersion = HLOSCOPE_VERSION;

constexpr int kExitOk = 0;
constexpr int kExitError = 1;   // a bad plan, or a CUDA error while running it
constexpr int kExitNoGpu = 2;   // no driver, no device
constexpr int kExitUsage = 64;  // bad command line (EX_USAGE)

struct RunOptions {
    std::string planDir;
    std::string outputDir;      // empty: write into the plan directory
    std::optional<int> repeat;  // overrides the plan's
    std::optional<int> warmup;
    int device = 0;
    bool useCublas = true;
    bool quiet = false;
    // > 0: outputs with more elements are written as every stride-th
    // element (stride = ceil(elements / sample)), results.json says the stride.
    uint64_t sample = 0;
};

struct ProbeOptions {
    std::string outputFile;
    uint64_t bytes = uint64_t(1) << 30;  // clamped to a quarter of the free memory
    int device = 0;
};

// Validates and runs a plan; writes outputs/<index>.bin and results.json. Returns an exit code.
int runPlanCommand(const RunOptions& options);

// Measures copy bandwidth and launch overhead and writes OUT.json. Returns an exit code.
int runProbeCommand(const ProbeOptions& options);

// Prints the device description as JSON on stdout. Returns an exit code.
int runInfoCommand(int device);

// Writes "hloscope-gpu-runner: MESSAGE" to stderr.
void printError(const std::string& message);

// Writes the one "hloscope-gpu-runner: no GPU found: REASON" line; returns kExitNoGpu.
int reportNoGpu(const std::string& reason);

// Median, minimum and maximum of a non-empty sample.
struct Summary {
    double median = 0;
    double min = 0;
    double max = 0;
};
Summary summarize(std::vector<double> values);

// Writes `text` to `path` through a temporary file in the same folder, fsync and rename, so a
// kill mid-write leaves the previous file whole (the runner builds without hloscope's core/, whose
// writeFileAtomically does the same); throws std::runtime_error naming the path.
void writeFileReplacing(const std::string& path, const std::string& text);

}  // namespace hloscope::gpu
