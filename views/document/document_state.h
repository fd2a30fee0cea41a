// DocumentState: one immutable picture of an open document, the only thing
// the views bind to. A worker (DocumentWorker) owns the live PipelineSession
// and, after loading, after each pass step and after every what-if re-run,
// emits a new std::shared_ptr<const DocumentState>; every panel takes it in
// one slot (`setState`) and never sees the mutable session. States share
// what did not change (snapshot texts, the module at a step), so emitting
// one per step is cheap.
#pragma once

#include <QMetaType>

#include <memory>
#include <string>
#include <vector>

#include "compiler/pipeline/snapshots.h"
#include "views/model/model_layers.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

struct DocumentState {
    std::string path;         // file or dump folder; empty for a built-in example
    std::string displayName;  // window title: file name or example name
    std::string target;       // "cpu", "h100", "a100", "tpu_v4", "tpu_v5e"
    std::string pipelineTarget;  // pipeline family of `target`: "cpu", "gpu" or "tpu"
    // Pass names of the whole pipeline, in order (snapshots may cover a prefix).
    std::vector<std::string> passes;
    std::vector<bool> passEnabled;
    // snapshots[0] is the loaded module; snapshots[i + 1] the state after pass i.
    std::shared_ptr<const std::vector<PassSnapshot>> snapshots;
    int current = 0;  // index into *snapshots of the state shown
    // *snapshots[current] materialised (stable unique ids across steps).
    std::shared_ptr<const HloModule> module;
    // The state before `current` (null at 0), for before/after views.
    std::shared_ptr<const HloModule> previous;
    // What-if settings in effect ("p:c;..." as the fusion pass takes them).
    std::string forceFusion;
    std::string forbidFusion;
    int64_t generation = 0;  // bumps with every emitted state
    // Pass index the pipeline stops after (-1: runs to the end).
    int stopAfter = -1;
    // True for an XLA dump folder's own per-pass files: `passes` and
    // `snapshots` replay XLA's timeline (no re-runs, targets or what-ifs).
    bool externalTimeline = false;
    std::string moduleId;  // dump module id ("module_0001.jit_f"); empty otherwise
    // The loaded module's layers (names, repeats, called computations), shared by every
    // state of the document; null before the first state of a document is published.
    ModelLayersPtr layers;

    const PassSnapshot* currentSnapshot() const;
    int snapshotCount() const;
};

using DocumentStatePtr = std::shared_ptr<const DocumentState>;

}  // namespace hloscope

// Queued connections between the worker thread and the views carry it.
Q_DECLARE_METATYPE(hloscope::DocumentStatePtr)
