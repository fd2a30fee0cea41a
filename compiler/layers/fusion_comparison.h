// XLA vs hloscope: two fusings of the same model compared op by op. The
// module before optimization names the ops; XLA's optimized module and
// hloscope's fused module each put every op in a kernel (a fusion holds the
// ops fused into it under their own names; XLA's ".clone" suffixes are
// ignored). The comparison says, per layer of the model, how many kernels each
// made of its ops and how many ops sit in a kernel of the same make-up in
// both, and for every producer -> consumer edge between ops whether each
// fused it; the edges fused by one side only are where the two differ.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/layers/layer_tree.h"

namespace hloscope {

class HloModule;

// Whether the module already holds fusions (an optimized dump such as XLA's
// *after_optimizations* files).
bool holdsFusions(const HloModule& module);

// Op name -> the name of the kernel (entry-level or loop-body instruction) holding it, for
// every instruction of a possibly fused module; fused instructions map to their fusion.
std::unordered_map<std::string, std::string> kernelOfOps(const HloModule& module);
// Op name -> every kernel holding a copy of it (a producer fused into several consumers is in
// each of them), in the module's order. `regions`: also the instructions of the regions fused
// ops call (a reduce's reducer), which may share names with the model's ops.
std::unordered_map<std::string, std::vector<std::string>> kernelsOfOps(const HloModule& module,
                                                                       bool regions = true);

struct FusionComparison {
    struct Op {
        std::string name;
        std::string xlaKernel;   // empty: XLA's module lacks it (removed or renamed)
        std::string oursKernel;  // empty: hloscope's module lacks it
        int layer = -1;          // in the tree of the module before optimization
        bool sameGroup = false;  // its kernel holds the same ops on both sides
    };
    std::vector<Op> ops;  // the non-trivial ops of the module before optimization, in order

    struct LayerCounts {
        int64_t ops = 0;
        int64_t xlaKernels = 0;
        int64_t oursKernels = 0;
        int64_t sameGroup = 0;  // ops in a kernel of the same make-up on both sides
    };
    std::vector<LayerCounts> layers;  // by layer index, subtree sums

    // Producer -> consumer edges between two ops both sides have.
    int64_t edges = 0;
    int64_t fusedByBoth = 0;
    int64_t fusedByNeither = 0;
    std::vector<std::pair<std::string, std::string>> fusedByXlaOnly;
    std::vector<std::pair<std::string, std::string>> fusedByOursOnly;
    int64_t missing = 0;  // ops one side does not have

    // Share of the edges both decided alike.
    double agreement() const {
        return edges > 0 ? static_cast<double>(fusedByBoth + fusedByNeither) / static_cast<double>(edges) : 1.0;
    }
};

// `before`: the module before optimization (its layers: `tree`); `xla`: XLA's optimized module;
// `ours`: hloscope's pipeline run on `before`.
FusionComparison compareFusion(const HloModule& before, const LayerTree& tree, const HloModule& xla,
                               const HloModule& ours);

}  // namespace hloscope
