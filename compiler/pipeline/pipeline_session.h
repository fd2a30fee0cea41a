// PipelineSession: one module going through one pipeline, step by step, with
// its snapshots and diffs: the single API the CLI's `opt` and the GUI's pass
// stepper use. It owns the working module, the runner and the snapshot
// recorder; snapshots() grows by one PassSnapshot per step run (index 0 is
// the input). A GUI drives it from a worker thread (a session is not
// thread-safe) and hands the immutable PassSnapshot values to the views.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "compiler/pipeline/pipeline.h"
#include "compiler/pipeline/snapshots.h"

namespace hloscope {

struct SessionOptions {
    RunnerOptions runner;
    // Peak memory of a module state (buffer assignment); null: not reported.
    std::function<int64_t(const HloModule&)> peak;
};

class PipelineSession {
public:
    static StatusOr<std::unique_ptr<PipelineSession>> create(std::unique_ptr<HloModule> module,
                                                             Pipeline pipeline,
                                                             SessionOptions options = {});

    // Verifies and records the input (snapshots()[0]) without running a pass; the first
    // step does it when not done yet. Fails when the input does not verify.
    Status start();
    Status step();                // runs the next pass
    Status runUntil(int endIndex);  // runs passes [next, endIndex)
    Status runThrough(std::string_view pass);
    Status runAll();

    const std::vector<PassSnapshot>& snapshots() const { return m_recorder.snapshots(); }
    const Pipeline& pipeline() const { return m_runner->pipeline(); }
    int nextIndex() const { return m_runner->nextIndex(); }
    bool finished() const { return m_runner->finished(); }
    // The working module (its state after the last pass run).
    const HloModule& module() const { return *m_module; }
    int64_t snapshotBytes() const { return m_recorder.textBytes(); }

    // Extra instrumentation (not owned), e.g. a bisect or a progress reporter.
    void addInstrumentation(PassInstrumentation* instrumentation);

private:
    PipelineSession(std::unique_ptr<HloModule> module, SessionOptions options);
    std::unique_ptr<HloModule> m_module;
    SnapshotRecorder m_recorder;
    std::unique_ptr<PipelineRunner> m_runner;
};

}  // namespace hloscope
