// TargetDescription: the hardware figures the performance model uses, kept
// as data in resources/targets/<name>.json (embedded into the library at
// build time, so an installed CLI needs no resource files).
//
// JSON format: every number is an object {"value": N, "source": "..."}; the
// source (datasheet, whitepaper, public documentation, or "measured by
// hloscope-cli calibrate on this machine") is mandatory.
//   {
//     "name": "h100", "kind": "gpu", "description": "...",
//     "matrixUnit": {"value": true, "source": "..."},
//     "peakTflops": {"matrix": {"bf16": {...}, ...}, "vector": {"f32": {...}, ...}},
//     "transcendentalsPerSecond": {...}, "memoryBandwidthBytesPerSecond": {...},
//     "cacheBytes": {...}, "onChipMemoryBytes": {...}, "kernelLaunchSeconds": {...},
//     "cores": {...},
//     "efficiency": {"elementwise": {...}, "transcendental": {...}, "reduction": {...},
//                    "dot": {...}, "convolution": {...}, "data_movement": {...}},
//     "cpuRuntime": {...},  // optional, CPU targets (calibrate)
//     "tpu": {"mxusPerCore": {...}, "mxuRows": {...}, "mxuColumns": {...},
//             "vpuSublanes": {...}, "vpuLanes": {...}, "clockHz": {...},
//             "hbmCapacityBytes": {...}, "dmaLatencySeconds": {...},
//             "gridStepSeconds": {...}}  // optional, TPU targets (simulator)
//   }
// Dots and convolutions run at the matrix rate when the target has a matrix
// unit (tensor cores, MXU) and a matrix figure for the element type; all
// other work at the vector rate. Unknown element types fall back to f32.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/targets/op_class.h"
#include "core/ir/primitive_type.h"
#include "core/support/status.h"

namespace hloscope {

enum class TargetKind { kCpu, kGpu, kTpu };
std::string_view targetKindName(TargetKind kind);

struct TargetDescription {
    std::string name;
    TargetKind kind = TargetKind::kCpu;
    std::string description;
    bool hasMatrixUnit = false;
    std::map<std::string, double> matrixPeakTflops;  // element type name -> TFLOP/s
    std::map<std::string, double> vectorPeakTflops;
    double transcendentalsPerSecond = 0;
    double memoryBandwidthBytesPerSecond = 0;
    // Triad bandwidth with every core streaming (0: not measured); what a
    // multi-threaded kernel can reach. Optional in JSON.
    double memoryBandwidthAllCoresBytesPerSecond = 0;
    double cacheBytes = 0;          // last-level cache / L2 / CMEM
    double onChipMemoryBytes = 0;   // shared memory per SM / VMEM / L1 per core
    double kernelLaunchSeconds = 0;
    int64_t cores = 1;              // CPU cores, SMs, TensorCores
    // GPU: FP32 lanes (CUDA cores) per SM, optional (0: not modelled). A kernel with fewer
    // threads than cores x lanes reaches that fraction of the compute peaks (XLA's
    // GpuPerformanceModel: active SMs x active lanes).
    int64_t lanesPerCore = 0;
    // Set by a calibration of this machine (JSON "calibrated", optional): when (seconds since
    // 1970), on which host and by what ("hloscope-cli calibrate --quick"). unixTime 0: the
    // figures are not a calibration (a built-in or hand-written target).
    struct Calibrated {
        int64_t unixTime = 0;
        std::string host;
        std::string by;
    };
    Calibrated calibrated;
    std::array<double, kOpClassCount> efficiency{1, 1, 1, 1, 1, 1};  // indexed by OpClass

    // How a CPU backend runs its kernels (optional; JSON "cpuRuntime", written
    // by `hloscope-cli calibrate`). When present, kernelLaunchSeconds is the
    // fixed cost of one kernel on the calling thread, and the model spreads
    // kernels of at least parallelMinElements elements of work over every
    // core (compute at cores x the per-core peaks, plus
    // parallelDispatchSeconds), reads a kernel's memory bandwidth off the
    // curve at its working set (its bytes accessed), so kernels whose data
    // sits in a cache run at the cache's rate, and adds runSeconds once per
    // module run. Absent: one figure for all.
    struct BandwidthPoint {
        double workingSetBytes = 0;
        double oneCore = 0;   // bytes/s, one thread
        double allCores = 0;  // bytes/s, every core
    };
    struct CpuRuntime {
        std::vector<BandwidthPoint> bandwidthCurve;  // ascending working sets
        double parallelMinElements = 0;
        double parallelDispatchSeconds = 0;
        double runSeconds = 0;  // fixed cost of one module run beyond its kernels
        // Cost of starting one row of a kernel's loop nest (the output's
        // minor-most dimension): index arithmetic the elements of a row
        // share. Matters for kernels whose rows are a few elements long.
        double rowSeconds = 0;
        // Bandwidth at `workingSetBytes`, log-log interpolated along the
        // curve and clamped at its ends.
        double bandwidthAt(double workingSetBytes, bool allCores) const;
    };
    std::optional<CpuRuntime> cpuRuntime;

    // What the TPU timeline simulator (compiler/backends/tpu/tpu_simulator.h)
    // needs beyond the roofline figures (optional; JSON "tpu", every value
    // sourced). Per TensorCore unless said otherwise; `cores` TensorCores
    // share the chip's HBM bandwidth.
    struct TpuFigures {
        int64_t mxusPerCore = 0;  // matrix units per TensorCore
        int64_t mxuRows = 0;      // systolic array: rows (contracting) x
        int64_t mxuColumns = 0;   //   columns (output features), 128 x 128
        int64_t vpuSublanes = 0;  // vector register: sublanes x lanes of
        int64_t vpuLanes = 0;     //   32-bit values, 8 x 128
        double clockHz = 0;
        double hbmCapacityBytes = 0;   // per chip
        double dmaLatencySeconds = 0;  // from a DMA's issue to its first bytes
        double gridStepSeconds = 0;    // scalar-unit work of one pipeline step
    };
    std::optional<TpuFigures> tpu;
    // JSON path of every number ("$.peakTflops.matrix.bf16") -> its source.
    std::map<std::string, std::string> sources;

    // Peak FLOP/s for work on `type` (matrix rate when `matrix` and
    // available, else vector rate; unknown types use f32).
    double peakFlopsPerSecond(PrimitiveType type, bool matrix) const;
    double efficiencyOf(OpClass opClass) const { return efficiency[static_cast<size_t>(opClass)]; }
};

// Parses a target description; errors name the JSON path ("$.efficiency.dot.source").
StatusOr<TargetDescription> targetDescriptionFromJson(std::string_view jsonText);
StatusOr<TargetDescription> loadTargetDescription(const std::string& path);
// The same description as JSON (round-trips through targetDescriptionFromJson).
std::string targetDescriptionToJson(const TargetDescription& target);

// Names of the shipped targets: "a100", "cpu", "h100", "tpu_v4", "tpu_v5e".
const std::vector<std::string>& builtinTargetNames();
// A shipped target: read from `resourcesDir`/<name>.json when a directory is
// given and the file exists, else from the text compiled into the library.
StatusOr<TargetDescription> builtinTargetDescription(std::string_view name,
                                                     const std::string& resourcesDir = {});
// The compiled-in JSON text of a shipped target (nullopt when unknown).
std::optional<std::string_view> builtinTargetJson(std::string_view name);

// Per-machine CPU calibration cache: $XDG_CACHE_HOME/hloscope/cpu-<hostname>.json
// (XDG_CACHE_HOME defaulting to $HOME/.cache). Empty when neither is set.
std::string cpuTargetCachePath();

// How the source of an efficiency factor that `calibrate --from-history` fitted begins.
inline constexpr std::string_view kFittedFromHistorySource = "fitted by hloscope-cli calibrate --from-history";

// One line on the figures a target carries, for an estimate's header: "calibrated on vm
// 2026-11-29 by hloscope-cli calibrate --quick (today); efficiency factors as shipped", or
// "not calibrated for this machine: hloscope's built-in cpu figures (...)".
std::string calibrationSummary(const TargetDescription& target, int64_t nowUnixTime);
// The calibrated description of this machine when cached, else the shipped cpu.json.
StatusOr<TargetDescription> loadCpuTarget();
// A hardware name ("cpu": loadCpuTarget(); "h100", "a100", "tpu_v4",
// "tpu_v5e": shipped) or the path of a target .json file.
StatusOr<TargetDescription> resolveTargetDescription(const std::string& nameOrPath);
// The pipeline family of a target kind: "cpu", "gpu" or "tpu".
std::string_view pipelineFamily(TargetKind kind);

}  // namespace hloscope
