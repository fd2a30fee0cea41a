// Pipelines: ordered lists of pass steps (a registry name, its options, and
// whether it is enabled), and the runner that executes them one by one with
// MLIR-style instrumentation hooks around every pass.
//
// The runner itself checks two things after every pass (both on by default):
//   * the verifier: a failure is an error naming the pass that broke the
//     module;
//   * the change claim: a pass under which the module's mutation count
//     (HloModule::mutationCount) did not move changed nothing; otherwise the
//     module is printed and compared with its text before the pass: a pass
//     that reports "unchanged" but changed the text is an error (and a pass
//     that reports "changed" without changing anything is corrected to
//     "unchanged"). RunnerOptions::auditMutations prints after every pass and
//     fails a pass that changed the text without a counted mutation (the
//     tests run with it on).
// Both are incremental: the text reuses the lines of instructions whose change
// stamps did not move (HloTextCache) and the verifier checks what changed since
// it last ran (verifyModuleChangedSince); the verifier runs on a second thread
// while the module is printed. The audit also prints and verifies the whole
// module and fails a pass after which the two disagree: a mutator that did not
// stamp what it changed.
// For scheduled modules it also keeps the schedule valid after each pass
// that changed the module (new instructions go just before their first user,
// as XLA's HloSchedule::Update places them).
// Everything else (snapshots, diffs, bisecting, the GUI's stepper) is an
// instrumentation. Runs can stop after any pass and resume later.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/pipeline/hlo_pass.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

struct PipelineStep {
    std::string pass;  // registry name
    PassOptions options;
    bool enabled = true;
};

struct Pipeline {
    std::string name;  // "cpu", "gpu", "tpu", or "custom"
    std::vector<PipelineStep> steps;
    // Makes each step's pass by its name (the registry's createPass for the target pipelines).
    PassFactory createPass;
};

// Command-line style edits of a pipeline.
// "a,b,c" -> a custom pipeline of those passes, made by `base`'s factory (options from
// `base` steps of the same name are kept).
StatusOr<Pipeline> pipelineFromList(std::string_view commaSeparated, const Pipeline& base);
// Disables the steps named (or numbered, 0-based) in `which` ("cse,3");
// unknown names are errors.
Status disablePasses(Pipeline& pipeline, std::string_view which);
// "pass.key=value": sets an option on every step running `pass`.
Status setPassOption(Pipeline& pipeline, std::string_view assignment);
// Index of the first step named `name` (or the number itself), or an error.
StatusOr<int> findStep(const Pipeline& pipeline, std::string_view name);

struct PassRunInfo {
    int index = 0;  // position in the pipeline
    const PipelineStep* step = nullptr;
    const HloPass* pass = nullptr;  // null for disabled steps
};

struct PassRunResult {
    bool enabled = true;
    bool changed = false;
    double seconds = 0;
    std::vector<RewriteEvent> rewrites;
    std::vector<PassDecision> decisions;
    std::map<std::string, int64_t> statistics;
    // The module printed after the pass (shared with the previous state when
    // unchanged); null when change checking is off.
    std::shared_ptr<const std::string> text;
};

class PassInstrumentation {
public:
    virtual ~PassInstrumentation() = default;
    // Called once, before the first pass runs (with the input module).
    virtual Status beforePipeline(const HloModule& module) { return Status::ok(); }
    // What the runner calls in its place: with the input's canonical text when the runner
    // printed it (change checking on), else null.
    virtual Status beforePipelinePrinted(const HloModule& module,
                                         const std::shared_ptr<const std::string>& text) {
        return beforePipeline(module);
    }
    virtual void beforePass(const PassRunInfo& info, const HloModule& module) {}
    // Called after a pass ran, while the verifier checks the module on another thread: it
    // may read the module to make ready what afterPass needs. The module may not verify
    // (afterPass follows only when it does), so this must only read what the printer reads.
    virtual void prepareAfterPass(const PassRunInfo& info, const HloModule& module,
                                  const PassRunResult& result) {}
    // A failing status stops the pipeline (e.g. bisect found a mismatch).
    virtual Status afterPass(const PassRunInfo& info, const HloModule& module,
                             const PassRunResult& result) {
        return Status::ok();
    }
};

// HLOSCOPE_AUDIT_MUTATIONS=1 in the environment.
bool auditMutationsFromEnvironment();

struct RunnerOptions {
    bool verify = true;
    bool checkChanges = true;
    // Print after every pass, counted mutations or not (default: HLOSCOPE_AUDIT_MUTATIONS=1).
    bool auditMutations = auditMutationsFromEnvironment();
    // Print and verify the whole module after every changing pass instead of what the pass
    // changed (bisect runs so: its verdicts rest on nothing but the module).
    bool fullChecks = false;
    const std::atomic<bool>* cancel = nullptr;  // checked between passes
};

class HloTextCache;

class PipelineRunner {
public:
    // Creates every enabled step's pass with the pipeline's factory (errors name the step).
    static StatusOr<std::unique_ptr<PipelineRunner>> create(HloModule& module, Pipeline pipeline,
                                                            RunnerOptions options = {});
    // For tests and embedders: explicit pass instances, one per step (null
    // for disabled steps).
    PipelineRunner(HloModule& module, Pipeline pipeline,
                   std::vector<std::unique_ptr<HloPass>> passes, RunnerOptions options = {});
    ~PipelineRunner();

    void addInstrumentation(PassInstrumentation* instrumentation);  // not owned
    void removeInstrumentation(PassInstrumentation* instrumentation);

    // Verifies and prints the input and hands it to the instrumentation (beforePipeline);
    // the first step does it when not done yet. Fails, running nothing, when the input
    // does not verify.
    Status start();
    Status runAll();                     // from the next step to the end
    Status runNext();                    // one step
    Status runUntil(int endIndex);       // steps [next, endIndex)
    Status runThrough(std::string_view name);  // up to and including the first step so named

    int nextIndex() const { return m_next; }
    int stepCount() const { return static_cast<int>(m_pipeline.steps.size()); }
    bool finished() const { return m_next >= stepCount(); }
    const Pipeline& pipeline() const { return m_pipeline; }
    HloModule& module() { return m_module; }

private:
    // The module's text now: only the lines of changed instructions are printed again;
    // with the audit on, compared with a full print.
    StatusOr<std::shared_ptr<const std::string>> printNow(const std::string& where);
    // Verifies what changed since the last verification; the audit verifies all, too,
    // and sets *auditFailed when only that found an error.
    Status verifyNow(const std::string& where, bool* auditFailed);
    HloModule& m_module;
    Pipeline m_pipeline;
    std::vector<std::unique_ptr<HloPass>> m_passes;
    RunnerOptions m_options;
    std::vector<PassInstrumentation*> m_instrumentations;
    std::shared_ptr<const std::string> m_text;  // current printed module
    std::unique_ptr<HloTextCache> m_textCache;   // prints only the changed lines
    uint64_t m_verifiedAt = 0;  // the module's mutation count when it last verified
    int m_next = 0;
    bool m_started = false;
};

}  // namespace hloscope
