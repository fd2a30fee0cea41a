// hloscope-cli's GPU helpers shared by `run` (run.cc) and gpu.cc.
#pragma once

#include <string>
#include <vector>

#include "compiler/runtime/execution_modes.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"

namespace hloscope::cli {

struct GpuEmitFlags {
    std::string dir;           // --emit-plan DIR
    std::string sm = "sm_90";  // --sm
    bool gemmSteps = true;     // --elemental-dots: dots inside kernels, no GEMM steps
    int warmup = 3;
    int repeat = 20;
    bool json = false;
    // Random float32 inputs as synthetic ones the runner generates
    // (gpu_synthetic.h), not as files: plans of large modules stay small.
    bool synthetic = true;
    uint64_t seed = 0;
};

// Writes one plan per mode (DIR/<mode>/ when several, else DIR) for a GPU
// machine; exit code.
int emitGpuPlans(const HloModule& module, const std::string& name, const std::vector<Literal>& args,
                 const std::string& target, const std::vector<ExecutionMode>& modes,
                 const GpuEmitFlags& flags);

// The predicted unfused/fused figures on `target`, to stderr (when no GPU
// can run the module).
void printGpuPrediction(const HloModule& module, const std::string& name,
                        const std::string& target);

}  // namespace hloscope::cli
