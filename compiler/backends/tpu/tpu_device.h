// TpuDevice ("tpu-sim", kind "tpu-sim"): the simulated TPU as an
// ExecutionDevice. Nobody runs a TPU here; a run combines two models:
//
//  * Times are SIMULATED (ExecutionResult::simulated is true): simulateTpu
//    (tpu_simulator.h) on the module as given, which is expected to be the
//    `tpu` pipeline's output (prepareCopyForMode(m, "tpu", mode), what
//    `run` and the execution panel hand a device of kind "tpu-sim"), on the
//    generation's target (tpu_v4 or tpu_v5e). wallSeconds is the simulated
//    total, kernelTimes/instructionTimes the simulated kernels (seconds
//    summed over a loop's iterations, count the executions), timeline the
//    simulated units' busy intervals. compileSeconds is 0 and peakBytes 0:
//    nothing simulates a TPU compiler or its allocator (buffer assignment's
//    peak of the prepared module is what measureMode reports).
//  * Outputs are computed with TPU numerics: emulateTpuNumerics
//    (tpu_precision.h: f32 dots and convolutions as the MXU's bf16 passes)
//    applied to the module, laid out again for the CPU by the cpu pipeline
//    without new fusions, and run on the CPU backend (cpu_device.h). Two
//    kinds of the tpu pipeline's fusions are no kernel the CPU backend
//    compiles, and are inlined (their instructions in the fusion's place)
//    before the cpu pipeline, so that they run as JIT'd kernels and GEMMs
//    rather than on the interpreter (the values are the same):
//      - a fusion with a dot or convolution other than one GEMM of two
//        parameters with an elementwise epilogue: the MXU passes the
//        emulation made of an f32 dot (six dots at HIGHEST, each of
//        converted operands) in a kOutput fusion;
//      - a multi-output fusion whose outputs differ in shape: the tpu
//        pipeline's producer-consumer multi-output fusion of a reduce with
//        the value it reduces (the CPU's kernels have one output shape).
//    The CPU backend's remaining interpreter fallbacks pass through as the
//    result's fallbacks. A module of several devices runs on every device
//    of its grid there (ExecutionResult::devices); the simulated times are
//    one chip's (inter-chip communication is not simulated).
//
// The simulation and the CPU-ready module are cached per module text (the 8
// most recently used), so repeated runs of one module (warm-up, timed runs)
// simulate and prepare it once. Available where the CPU backend is.
//
// registerTpuBackend() adds (or replaces) the "tpu-sim" (v4) and
// "tpu-sim-v5e" devices in the registry; the CLI and the GUI call it at
// start-up.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/backends/tpu/tpu_simulator.h"
#include "compiler/runtime/execution_device.h"
#include "core/support/status.h"

namespace hloscope {

enum class TpuGeneration { kV4, kV5e };

std::string_view tpuGenerationName(TpuGeneration generation);  // "v4", "v5e"
// The shipped target of a generation: "tpu_v4", "tpu_v5e".
std::string tpuTargetName(TpuGeneration generation);
// "v4"/"tpu_v4" or "v5e"/"tpu_v5e"; nullopt otherwise.
std::optional<TpuGeneration> parseTpuGeneration(std::string_view text);

class TpuDevice : public ExecutionDevice {
public:
    explicit TpuDevice(TpuGeneration generation = TpuGeneration::kV4);
    ~TpuDevice() override;
    // "tpu-sim" for v4, "tpu-sim-v5e" for v5e.
    std::string name() const override;
    std::string kind() const override { return "tpu-sim"; }
    std::string description() const override;
    bool available(std::string* whyNot) const override;
    StatusOr<ExecutionResult> run(const HloModule& module, const std::vector<Literal>& args,
                                  const ExecutionOptions& options) const override;
    // emulateTpuNumerics of the module (tpu_precision.h).
    StatusOr<std::unique_ptr<HloModule>> numericsModule(const HloModule& module) const override;
    std::string modelTarget() const override { return tpuTargetName(m_generation); }

    TpuGeneration generation() const { return m_generation; }
    // The simulation of `module` on this generation (from the cache, or
    // simulated now): what run() reports, with the per-kernel utilisation,
    // padding and notes the ExecutionResult has no room for.
    StatusOr<TpuSimulation> simulation(const HloModule& module) const;
    // The module run() hands the CPU backend for `module`'s outputs (TPU
    // numerics, fusions the CPU cannot compile inlined, laid out for the
    // CPU): where the names of run()'s fallbacks are found.
    StatusOr<std::shared_ptr<const HloModule>> cpuModule(const HloModule& module) const;

    struct Impl;

private:
    TpuGeneration m_generation;
    std::unique_ptr<Impl> m_impl;
};

// Registers a TpuDevice of each generation (replacing ones registered before).
void registerTpuBackend();
// The registered name of a generation's device: "tpu-sim", "tpu-sim-v5e".
std::string tpuDeviceName(TpuGeneration generation);

}  // namespace hloscope
