// Document states for the panel tests: load an example with module_io, run
// the target pipeline with a PipelineSession (fusion what-ifs as pass
// options), and fill a DocumentState as the document worker does (snapshots,
// current = the last one, module = its materialization).
#pragma once

#include <QTest>

#include <memory>
#include <string>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/pipeline/pipeline_session.h"
#include "compiler/registry/target_pipelines.h"
#include "core/io/module_io.h"
#include "views/document/document_state.h"

namespace hloscope::testing {

inline std::string examplePath(const std::string& name) {
    return std::string(HLOSCOPE_SOURCE_DIR) + "/resources/examples/" + name;
}

// Runs the `pipelineTarget` pipeline (cpu/gpu/tpu) on the example through
// pass `endIndex` (-1: all) and returns the state; fails the test (returns
// null) on any error.
inline DocumentStatePtr makeState(const std::string& example, const std::string& target = "cpu",
                                  const std::string& force = {}, const std::string& forbid = {},
                                  int endIndex = -1, int current = -1) {
    const std::string pipelineTarget = target == "cpu" ? "cpu"
                                       : target.rfind("tpu", 0) == 0 ? "tpu"
                                                                     : "gpu";
    auto module = loadModuleFromFile(examplePath(example));
    if (!module.isOk()) {
        qWarning("%s", module.status().toString().c_str());
        return nullptr;
    }
    auto pipeline = targetPipeline(pipelineTarget);
    if (!pipeline.isOk()) return nullptr;
    for (PipelineStep& step : pipeline->steps)
        if (step.pass == "fusion") {
            if (!force.empty()) step.options.set("force", force);
            if (!forbid.empty()) step.options.set("forbid", forbid);
        }
    auto state = std::make_shared<DocumentState>();
    state->path = examplePath(example);
    state->displayName = example;
    state->target = target;
    state->pipelineTarget = pipelineTarget;
    for (const PipelineStep& step : pipeline->steps) {
        state->passes.push_back(step.pass);
        state->passEnabled.push_back(step.enabled);
    }
    SessionOptions options;
    options.peak = [](const HloModule& m) { return peakMemoryBytes(m); };
    auto session = PipelineSession::create(std::move(*module), std::move(*pipeline), options);
    if (!session.isOk()) {
        qWarning("%s", session.status().toString().c_str());
        return nullptr;
    }
    const Status run = endIndex < 0 ? (*session)->runAll() : (*session)->runUntil(endIndex);
    if (!run.isOk()) {
        qWarning("%s", run.toString().c_str());
        return nullptr;
    }
    state->snapshots = std::make_shared<const std::vector<PassSnapshot>>((*session)->snapshots());
    state->current = current < 0 ? state->snapshotCount() - 1 : current;
    auto materialized = (*state->snapshots)[static_cast<size_t>(state->current)].materialize();
    if (!materialized.isOk()) return nullptr;
    state->module = std::shared_ptr<const HloModule>(std::move(*materialized));
    state->forceFusion = force;
    state->forbidFusion = forbid;
    static int64_t generation = 0;
    state->generation = ++generation;
    return state;
}

}  // namespace hloscope::testing
