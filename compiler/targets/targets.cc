#include "compiler/targets/targets.h"

namespace hloscope {

const std::vector<std::string_view>& targetNames() {
    static const std::vector<std::string_view> names = {"cpu", "gpu", "tpu"};
    return names;
}

StatusOr<Pipeline> targetPipeline(std::string_view target) {
    bool known = false;
    for (std::string_view name : targetNames()) known = known || name == target;
    if (!known)
        return invalidArgument("unknown target '" + std::string(target) +
                               "' (expected cpu, gpu or tpu)");
    Pipeline pipeline;
    pipeline.name = std::string(target);
    auto add = [&](std::string pass, PassOptions options = {}) {
        pipeline.steps.push_back(PipelineStep{std::move(pass), std::move(options), true});
    };
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
    // (producer-consumer) fusion driven by the target's performance model.
    // (multi-output-fusion follows it once it handles every corpus model;
    // run it with --passes meanwhile.)
    add("fusion", PassOptions{{"target", std::string(target)}});
    add("layout-assignment", PassOptions{{"target", std::string(target)}});
    // Post-layout clean-up: copies and transposes layout assignment made
    // redundant.
    add("algebraic-simplifier");
    add("cse");
    add("dce");
    add("buffer-assignment");
    return pipeline;
}

}  // namespace hloscope
