// The per-pass report of a pipeline run as JSON (hloscope-cli opt --json and
// the passes.json of --dump-dir):
// {"target": ..., "module": ..., "total_ms": ..., "peak_bytes_before": ...,
//  "peak_bytes_after": ..., "snapshot_bytes": ...,
//  "passes": [{"index", "name", "enabled", "changed", "time_ms", "peak_bytes",
//              "statistics": {...}, "file": "NN-name.hlo" (with a dump dir),
//              "fusion_decisions": [{"step", "producer", "consumer", "decision",
//                                    "reason", "explanation", "predicted_unfused_ms",
//                                    "predicted_fused_ms"}] (passes that decide),
//              "diff": {"added": [...], "removed": [...], "replaced": [...],
//                       "rewired": [...], "shape_changed": [...],
//                       "layout_changed": [...], "fused": [...],
//                       "rewrites": [...], "counts": {...}}}]}
#pragma once

#include <string>
#include <vector>

#include "compiler/pipeline/snapshots.h"

namespace hloscope {

struct PipelineReportOptions {
    std::string target;
    std::string module;
    bool withFiles = false;  // name each pass's dump file
    // Cap on the entries listed per diff category (the counts stay exact);
    // -1: no cap.
    int64_t maxDiffEntries = -1;
};

// File name of a pass's dump: "03-algebraic-simplifier.hlo" (index 0-based,
// input "00-input.hlo", passes numbered from 01).
std::string snapshotFileName(const PassSnapshot& snapshot);

std::string pipelineReportJson(const std::vector<PassSnapshot>& snapshots,
                               const PipelineReportOptions& options);

}  // namespace hloscope
