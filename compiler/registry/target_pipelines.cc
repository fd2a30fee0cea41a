#include "compiler/registry/target_pipelines.h"

#include "compiler/registry/pass_registry.h"
#include "compiler/targets/target_description.h"

namespace hloscope {

const std::vector<std::string_view>& targetNames() {
    static const std::vector<std::string_view> names = {"cpu", "gpu", "tpu"};
    return names;
}

StatusOr<Pipeline> targetPipeline(std::string_view targetOrHardware) {
    std::string target(targetOrHardware);
    std::string hardware;
    bool family = false;
    for (std::string_view name : targetNames()) family = family || name == targetOrHardware;
    if (!family) {
        auto description = resolveTargetDescription(target);
        if (!description.isOk())
            return invalidArgument("unknown target '" + target +
                                   "' (expected cpu, gpu, tpu, a hardware name (" +
                                   [] {
                                       std::string known;
                                       for (const std::string& b : builtinTargetNames())
                                           known += (known.empty() ? "" : ", ") + b;
                                       return known;
                                   }() +
                                   ") or a target .json file)");
        hardware = target;
        target = std::string(pipelineFamily(description->kind));
    }
    Pipeline pipeline;
    pipeline.name = std::string(targetOrHardware);
    pipeline.createPass = createPass;
    PassOptions fusionOptions{{"target", target}};
    if (!hardware.empty()) fusionOptions.set("hardware", hardware);
    auto add = [&](std::string pass, PassOptions options = {}) {
        pipeline.steps.push_back(PipelineStep{std::move(pass), std::move(options), true});
    };
    // XLA:GPU's cuBLAS / cuDNN calls (in modules dumped after XLA's GPU
    // passes) become the dots and convolutions they stand for.
    add("library-call-expander");
    // No kernel runs scan itself: each becomes the while loop computing it (the CPU backend
    // updates the loop's stacked outputs in place, so a step costs its row, not the state).
    add("scan-expander");
    // Batch norm becomes reductions and loops on cpu and gpu, as XLA's CPU and GPU compilers
    // expand it; the TPU model plans it as one operation.
    if (target != "tpu") add("batch-norm-expander");
    // XLA:GPU calls cuBLAS trsm; our GPU kernels run the substitution loop. The CPU backend
    // runs triangular-solve through the interpreter, the TPU model as one operation.
    if (target == "gpu") add("triangular-solve-expander");
    // Partitioning and memory-space annotations pass their value through on one device.
    add("annotation-remover");
    // Simplification, as XLA runs it before fusion.
    add("call-inliner");
    add("dce");
    add("algebraic-simplifier");
    add("tuple-simplifier");
    add("constant-folding");
    add("while-loop-invariant-code-motion");
    add("algebraic-simplifier");
    add("cse");
    add("dce");
    // Fusion on the simplified module, before layouts are fixed: priority
    // (producer-consumer) fusion driven by the target's performance model,
    // then, on gpu and tpu, sibling and producer-consumer multi-output fusion
    // (XLA's CPU backend has none).
    add("fusion", fusionOptions);
    // On cpu and gpu, row reductions join the loops that broadcast them back
    // (softmax, layer norm): the CPU emitter computes them once per row, in
    // cache; the GPU's row kernel once per row, split across a block. Before
    // multi-output fusion, which would pair the reductions with other users.
    if (target != "tpu") add("row-fusion", fusionOptions);
    if (target != "cpu") add("multi-output-fusion", fusionOptions);
    add("layout-assignment", PassOptions{{"target", target}});
    // Post-layout clean-up: copies and transposes layout assignment made
    // redundant.
    add("algebraic-simplifier");
    add("cse");
    add("dce");
    add("buffer-assignment");
    return pipeline;
}

}  // namespace hloscope
