// What the performance model and buffer assignment predict for a document
// state, without Qt: the module before fusion (the snapshot just before the
// first fusion pass, or the latest snapshot when no fusion pass has run) and
// after (the latest snapshot), their predicted times on the state's target,
// kernel counts, peak memory and buffer assignments. Materializing snapshots
// of large modules takes time: panels compute this off the GUI thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/cost/performance_model.h"
#include "compiler/targets/target_description.h"
#include "views/document/document_state.h"

namespace hloscope {

// The hardware a state's `target` names ("cpu": the calibrated CPU
// description when one was measured, else the built-in one; "h100", "a100",
// "tpu_v4", "tpu_v5e"; a pipeline family "gpu"/"tpu" maps to h100/tpu_v5e;
// empty: cpu).
StatusOr<TargetDescription> targetForName(const std::string& target);

struct ModelFigures {
    TargetDescription target;
    int unfusedSnapshot = -1;  // index into the state's snapshots
    int fusedSnapshot = -1;
    std::shared_ptr<const HloModule> unfused;
    std::shared_ptr<const HloModule> fused;
    ModulePrediction unfusedPrediction;  // predictModule(unfused)
    ModulePrediction fusedPrediction;    // predictModule(fused)
    std::shared_ptr<const BufferAssignment> unfusedBuffers;  // refers into *unfused
    std::shared_ptr<const BufferAssignment> fusedBuffers;    // refers into *fused
    bool fusionRan = false;  // a fusion pass is among the snapshots

    double speedup() const {
        return fusedPrediction.totalSeconds > 0
                   ? unfusedPrediction.totalSeconds / fusedPrediction.totalSeconds
                   : 0;
    }
    double memoryReduction() const {
        return fusedBuffers && unfusedBuffers && fusedBuffers->peakLiveBytes > 0
                   ? static_cast<double>(unfusedBuffers->peakLiveBytes) /
                         static_cast<double>(fusedBuffers->peakLiveBytes)
                   : 0;
    }
};

StatusOr<ModelFigures> computeModelFigures(const DocumentState& state);

}  // namespace hloscope

namespace hloscope {

// computeModelFigures packaged for a worker thread (QtConcurrent needs a
// default-constructible result): figures, or the error message.
struct ModelFiguresResult {
    std::shared_ptr<const ModelFigures> figures;
    std::string error;
    int64_t generation = -1;  // the state's generation
};
ModelFiguresResult computeModelFiguresResult(std::shared_ptr<const DocumentState> state);

}  // namespace hloscope
