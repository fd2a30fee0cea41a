// The execution panel's remote-GPU jobs, run on a worker thread: writing
// GPU plans of the document's module for a GPU machine (unfused and/or
// fused, as the panel's mode says), and reading a GPU machine's results back
// as measurements checked against the reference interpreter. Both go through
// the registered GPU device (ExecutionDevice::exportPlan / importResults,
// compiler/runtime/execution_device.h): without one they fail and say so.
#pragma once

#include <QString>

#include "views/execution/execution_panel.h"

namespace hloscope {

// The (mode label, snapshot index) pairs a run of `mode` measures: unfused
// is the snapshot before the first fusion pass, fused the latest.
std::vector<std::pair<QString, int>> snapshotsForMode(const DocumentState& state,
                                                      ExecutionPanel::Mode mode);

ExecutionPanel::Outcome exportGpuPlansJob(const DocumentStatePtr& state, ExecutionPanel::Mode mode,
                                          uint64_t seed, const QString& dir, const QString& sm);
ExecutionPanel::Outcome importGpuResultsJob(const QString& dir);

}  // namespace hloscope
