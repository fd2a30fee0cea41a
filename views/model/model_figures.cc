#include "views/model/model_figures.h"

#include "compiler/layers/fusion_comparison.h"

#include <filesystem>

#include "compiler/runtime/execution_modes.h"

namespace hloscope {

StatusOr<TargetDescription> targetForName(const std::string& target) {
    if (target.empty() || target == "cpu") return loadCpuTarget();
    if (target == "gpu") return builtinTargetDescription("h100");
    if (target == "tpu") return builtinTargetDescription("tpu_v5e");
    return builtinTargetDescription(target);
}

StatusOr<ModelFigures> computeModelFigures(const DocumentState& state) {
    if (!state.snapshots || state.snapshots->empty())
        return invalidArgument("the document has no module yet");
    ModelFigures figures;
    HLO_ASSIGN_OR_RETURN(figures.target, targetForName(state.target));
    const std::vector<PassSnapshot>& snapshots = *state.snapshots;
    figures.fusedSnapshot = static_cast<int>(snapshots.size()) - 1;
    figures.unfusedSnapshot = figures.fusedSnapshot;
    for (size_t i = 1; i < snapshots.size(); ++i)
        if (isFusionPassName(snapshots[i].pass)) {
            figures.unfusedSnapshot = static_cast<int>(i) - 1;
            figures.fusionRan = true;
            break;
        }
    auto materialize = [&](int index) -> StatusOr<std::shared_ptr<const HloModule>> {
        if (index == state.current && state.module) return state.module;
        HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                             snapshots[static_cast<size_t>(index)].materialize());
        return std::shared_ptr<const HloModule>(std::move(module));
    };
    HLO_ASSIGN_OR_RETURN(figures.fused, materialize(figures.fusedSnapshot));
    if (figures.unfusedSnapshot == figures.fusedSnapshot) {
        figures.unfused = figures.fused;
    } else {
        HLO_ASSIGN_OR_RETURN(figures.unfused, materialize(figures.unfusedSnapshot));
    }
    // A module that held fusions when loaded (an XLA dump after optimization): "unfused" is the
    // same ops with every fusion taken apart, so the speedup is what its own fusion buys.
    figures.unfusedPrediction = holdsFusions(*figures.unfused) ? predictUnfused(*figures.unfused, figures.target)
                                                               : predictModule(*figures.unfused, figures.target);
    figures.fusedPrediction = predictModule(*figures.fused, figures.target);
    HLO_ASSIGN_OR_RETURN(BufferAssignment fusedBuffers, assignBuffers(*figures.fused));
    figures.fusedBuffers = std::make_shared<const BufferAssignment>(std::move(fusedBuffers));
    if (figures.unfused == figures.fused) {
        figures.unfusedBuffers = figures.fusedBuffers;
    } else {
        HLO_ASSIGN_OR_RETURN(BufferAssignment unfusedBuffers, assignBuffers(*figures.unfused));
        figures.unfusedBuffers = std::make_shared<const BufferAssignment>(std::move(unfusedBuffers));
    }
    figures.unfusedPeakBytes = peakMemoryBytesWithOutputsHeld(*figures.unfused);
    figures.fusedPeakBytes = peakMemoryBytesWithOutputsHeld(*figures.fused);
    for (const PassSnapshot& snapshot : snapshots) figures.pipelineSeconds += snapshot.seconds;
    // The history is optional: no file, or one that cannot be read, leaves
    // the accuracy out.
    figures.historyPath = EstimateHistory::defaultPath();
    if (!figures.historyPath.empty() && std::filesystem::exists(figures.historyPath))
        if (auto history = EstimateHistory::open(figures.historyPath); history.isOk())
            if (auto accuracy = (*history)->accuracy(figures.target.name, machineName()); accuracy.isOk())
                figures.accuracy = *accuracy;
    return figures;
}

}  // namespace hloscope

namespace hloscope {

ModelFiguresResult computeModelFiguresResult(std::shared_ptr<const DocumentState> state) {
    ModelFiguresResult result;
    if (!state) {
        result.error = "no document";
        return result;
    }
    result.generation = state->generation;
    StatusOr<ModelFigures> figures = computeModelFigures(*state);
    if (!figures.isOk()) {
        result.error = figures.status().toString();
        return result;
    }
    result.figures = std::make_shared<const ModelFigures>(std::move(*figures));
    return result;
}

}  // namespace hloscope
