// Figures per layer of a LayerTree: instructions, kernels before and after the
// passes run so far, and the performance model's predicted time at that step.
//
// The tree is built on the input module; a module at a later step is matched to
// it by instruction names (passes keep them, a fusion is named after its root
// and its fused instructions keep theirs). A kernel goes to the layer of its
// own name, else of its fused root, else of the first fused instruction the
// tree knows, else of its first operand that has one; kernels matched to none
// count at the root only.
#pragma once

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

// One entry per layer of `tree`, each the sum over its subtree.
std::vector<LayerFigures> computeLayerFigures(const LayerTree& tree, const HloModule& input,
                                              const HloModule& atStep, const TargetDescription& target);

}  // namespace hloscope
