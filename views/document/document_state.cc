#include "views/document/document_state.h"

namespace hloscope {

const PassSnapshot* DocumentState::currentSnapshot() const {
    if (!snapshots || current < 0 || current >= static_cast<int>(snapshots->size())) return nullptr;
    return &(*snapshots)[static_cast<size_t>(current)];
}

int DocumentState::snapshotCount() const {
    return snapshots ? static_cast<int>(snapshots->size()) : 0;
}

}  // namespace hloscope
