// What the performance model and buffer assignment predict for a document
// state, without Qt: the module before fusion (the snapshot just before the
// first fusion pass, or the latest snapshot when no fusion pass has run) and
// after (the latest snapshot), their predicted times on the state's target,
// kernel counts, peak memory and buffer assignments. Materializing snapshots
// of large modules takes time: panels compute this off the GUI thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/cost/performance_model.h"
#include "compiler/estimator/estimate.h"
#include "compiler/estimator/history.h"
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
    // Peaks with the entry's outputs held for the whole run (the estimator's
    // figures, what a runtime allocating the result up front holds).
    int64_t unfusedPeakBytes = 0;
    int64_t fusedPeakBytes = 0;
    double pipelineSeconds = 0;  // the passes' time over the snapshots (the compile overhead before codegen)
    // How accurate the model has been on this machine for this target (the
    // estimator's history); empty when there is no history.
    std::optional<HistoryAccuracy> accuracy;
    std::string historyPath;

    // The predicted figures as the estimator reports them.
    EstimateFigures predicted() const {
        EstimateFigures f;
        f.unfusedSeconds = unfusedPrediction.totalSeconds;
        f.fusedSeconds = fusedPrediction.totalSeconds;
        f.peakBytesUnfused = unfusedPeakBytes;
        f.peakBytesFused = fusedPeakBytes;
        f.compileSeconds = pipelineSeconds;
        return f;
    }

    double speedup() const { return predicted().speedup(); }
    double memoryReduction() const { return predicted().memoryReduction(); }
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
