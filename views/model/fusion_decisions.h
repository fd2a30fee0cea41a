// The fusion passes' decisions of a document state, one row each, in the
// order they were taken (the replay order): every PassDecision logged in the
// state's snapshots by a fusion pass (or any pass that logged decisions).
// The fusion explorer's table model shows them; the data has no widgets.
#pragma once

#include <QString>
#include <vector>

#include "compiler/pipeline/hlo_pass.h"
#include "views/document/document_state.h"

namespace hloscope {

struct FusionDecisionRow {
    QString pass;
    int snapshot = 0;  // index into the state's snapshots
    PassDecision decision;
};

std::vector<FusionDecisionRow> fusionDecisionRows(const DocumentState& state);

}  // namespace hloscope
