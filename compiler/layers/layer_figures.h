// Figures per layer of a LayerTree: instructions, kernels before and after the
// passes run so far, and the performance model's predicted time at that step.
//
// The tree is built on the input module; a module at a later step is matched to
// it by instruction names (passes keep them, a fusion is named after its root
// and its fused instructions keep theirs). A kernel goes to the layer of its
// own name, else of its fused root, else of the first fused instruction the
// tree knows, else of its op_name scope, else (made by a pass) of the ops it
// reads or feeds (layersOf); kernels matched to none count at the root only.
#pragma once

#include <unordered_map>

#include <cstdint>
#include <vector>

#include "compiler/layers/layer_tree.h"

namespace hloscope {

class HloInstruction;
class HloModule;
struct TargetDescription;

struct LayerFigures {
    int64_t instructions = 0;
    int64_t kernelsBefore = 0;      // the input module, every fusion taken apart
    int64_t kernelsAfter = 0;       // the module at the step, every fusion one kernel
    double predictedSeconds = 0;    // at the step, loops weighted by their trip counts
};

// The layer a kernel of `module` (the input or a later step) belongs to; -1 when none.
int layerOfKernel(const LayerTree& tree, const HloInstruction& kernel);

// The layer of every instruction of `computation` (of the input or a later step, matched to
// the tree by names): its own name, an op of its fused computation or its op_name scope; an
// instruction a pass made under a new name (a batch-norm expander's ops, a rewritten chain)
// joins the layer of the ops it reads, else of the ops it feeds, through chains of such
// instructions (never the root, a computation's own layer or the folded parameters'). -1 where
// none is found.
std::unordered_map<const HloInstruction*, int> layersOf(const LayerTree& tree, const HloComputation& computation);

// One entry per layer of `tree`, each the sum over its subtree.
std::vector<LayerFigures> computeLayerFigures(const LayerTree& tree, const HloModule& input,
                                              const HloModule& atStep, const TargetDescription& target);

}  // namespace hloscope
