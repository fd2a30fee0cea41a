// SnapshotRecorder: the instrumentation behind "step through the passes and
// see what changed". It keeps, for the input and after every pass:
//   * a snapshot of the module: its canonical text, shared with the previous
//     snapshot when the pass changed nothing (a 40k-instruction module costs
//     its text size per *changing* pass), plus the unique ids of its
//     instructions in print order, so materialize() rebuilds an HloModule
//     whose ids match the live module's (stable identities for the GUI);
//   * the structured diff against the previous state (module_diff.h) with
//     the pass's named rewrites;
//   * wall time, statistics and the peak memory after the pass.
// Requires the runner's change checking (it reuses the printed text).
#pragma once

#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/pipeline/module_diff.h"
#include "compiler/pipeline/pipeline.h"

namespace hloscope {

struct PassSnapshot {
    int index = -1;          // -1: the input module
    std::string pass;        // "input" for index -1
    bool enabled = true;
    bool changed = false;
    double seconds = 0;
    ModuleDiff diff;
    std::vector<PassDecision> decisions;  // e.g. fusion's decision log
    std::map<std::string, int64_t> statistics;
    int64_t peakBytes = -1;  // -1 when no peak function is set
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const std::vector<int64_t>> ids;  // unique ids in print order

    // Parses the snapshot back into a module with the recorded unique ids.
    StatusOr<std::unique_ptr<HloModule>> materialize() const;
};

class SnapshotRecorder : public PassInstrumentation {
public:
    // `peak` computes the module's peak memory (buffer assignment); optional.
    explicit SnapshotRecorder(std::function<int64_t(const HloModule&)> peak = {});

    Status beforePipeline(const HloModule& module) override;
    // The input's snapshot takes `text` when given (the runner's print of it).
    Status beforePipelinePrinted(const HloModule& module,
                                 const std::shared_ptr<const std::string>& text) override;
    // Records what a changing pass left (and diffs it) while the verifier runs.
    void prepareAfterPass(const PassRunInfo& info, const HloModule& module,
                          const PassRunResult& result) override;
    Status afterPass(const PassRunInfo& info, const HloModule& module,
                     const PassRunResult& result) override;

    // snapshots()[0] is the input; then one per step run so far.
    const std::vector<PassSnapshot>& snapshots() const { return m_snapshots; }
    // Bytes held by distinct snapshot texts (shared ones counted once).
    int64_t textBytes() const;

private:
    std::function<int64_t(const HloModule&)> m_peak;
    std::vector<PassSnapshot> m_snapshots;
    ModuleRecord m_record;  // current state
    std::shared_ptr<const std::vector<int64_t>> m_ids;
    // What prepareAfterPass made for the step it names.
    struct Prepared {
        int index = -1;
        ModuleRecord record;
        ModuleDiff diff;
    };
    std::optional<Prepared> m_prepared;
};

}  // namespace hloscope
