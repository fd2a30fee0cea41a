// libFuzzer target: parse -> verify -> a target's whole compiler pipeline
// (simplification, constant folding, CSE/DCE, layout assignment, fusion,
// buffer assignment). The input's length modulo 5 picks the target (so every seed, a plain
// HLO file, is a valid input and mutations visit all five); the runner
// verifies the module after every pass, so a pass that breaks a valid module
// is a finding (the runner's error names the pass).
#include <array>

#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    static constexpr std::array<std::string_view, 5> kTargets = {"cpu", "h100", "a100", "tpu_v4",
                                                                 "tpu_v5e"};
    std::string_view target = kTargets[size % kTargets.size()];
    auto module = loadModule(fuzz::asText(data, size), "fuzz.hlo");
    if (!module.isOk() || !verifyModule(**module).isOk()) return 0;
    auto pipeline = targetPipeline(target);
    if (!pipeline.isOk()) fuzz::fail("target pipeline", pipeline.status().toString());
    auto runner = PipelineRunner::create(**module, *pipeline);
    if (!runner.isOk()) fuzz::fail("pipeline runner", runner.status().toString());
    Status status = (*runner)->runAll();
    // Passes may refuse a module with a clear error (an unsupported case); an
    // internal error (a pass that left an invalid module, or changed it while
    // reporting no change) is a bug.
    if (!status.isOk() && status.code() == StatusCode::kInternal)
        fuzz::fail(("pipeline " + std::string(target)).c_str(), status.toString());
    return 0;
}
