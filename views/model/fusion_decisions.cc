#include "views/model/fusion_decisions.h"

#include "compiler/runtime/execution_modes.h"

namespace hloscope {

std::vector<FusionDecisionRow> fusionDecisionRows(const DocumentState& state) {
    std::vector<FusionDecisionRow> rows;
    if (!state.snapshots) return rows;
    const auto& snapshots = *state.snapshots;
    for (size_t i = 0; i < snapshots.size(); ++i) {
        const PassSnapshot& snapshot = snapshots[i];
        if (!isFusionPassName(snapshot.pass) && snapshot.decisions.empty()) continue;
        for (const PassDecision& decision : snapshot.decisions)
            rows.push_back({QString::fromStdString(snapshot.pass), static_cast<int>(i), decision});
    }
    return rows;
}

}  // namespace hloscope
