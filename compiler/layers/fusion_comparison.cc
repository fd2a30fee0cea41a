#include "compiler/layers/fusion_comparison.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/cost/cost_analysis.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"

namespace hloscope {
namespace {

// XLA names a fused copy "add.5.clone" (or "add.5.clone.1"): the op is "add.5".
std::string opName(const std::string& name) {
    const size_t clone = name.find(".clone");
    return clone == std::string::npos ? name : name.substr(0, clone);
}

// Calls add(op name, kernel) for every op inside the fused computation and what it calls (the
// fusions nested in it; with `regions`, also a reduce's, scatter's or sort's region).
template <typename Add>
void mapFused(const HloComputation& computation, const std::string& kernel, bool regions, Add&& add) {
    for (const auto& x : computation.instructions()) {
        if (x->opcode() == HloOpcode::kParameter) continue;
        add(opName(x->name()), kernel);
        for (const HloComputation* callee : x->calledComputations())
            if (regions || x->opcode() == HloOpcode::kFusion) mapFused(*callee, kernel, regions, add);
    }
}

// The computations whose instructions are kernels: the entry and what loops, calls and
// conditionals run (not fusion bodies, not a reduce's or a sort's region).
std::vector<const HloComputation*> kernelComputations(const HloModule& module) {
    std::vector<const HloComputation*> out;
    std::set<const HloComputation*> seen;
    std::vector<const HloComputation*> pending;
    if (module.entryComputation()) pending.push_back(module.entryComputation());
    while (!pending.empty()) {
        const HloComputation* computation = pending.back();
        pending.pop_back();
        if (!seen.insert(computation).second) continue;
        out.push_back(computation);
        for (const auto& x : computation->instructions())
            if (x->opcode() == HloOpcode::kWhile || x->opcode() == HloOpcode::kCall ||
                x->opcode() == HloOpcode::kConditional || x->opcode() == HloOpcode::kAsyncStart)
                for (const HloComputation* callee : x->calledComputations()) pending.push_back(callee);
    }
    return out;
}

}  // namespace

bool holdsFusions(const HloModule& module) {
    for (const auto& computation : module.computations())
        if (computation->fusionInstruction()) return true;
    return false;
}

namespace {

// Calls add(op name, kernel) for every op of the module: a kernel is itself, a fused op its fusion.
template <typename Add>
void forEachOpKernel(const HloModule& module, bool regions, Add&& add) {
    for (const HloComputation* computation : kernelComputations(module)) {
        for (const auto& x : computation->instructions()) {
            add(opName(x->name()), x->name());
            if (x->opcode() == HloOpcode::kFusion && x->fusedComputation())
                mapFused(*x->fusedComputation(), x->name(), regions, add);
        }
    }
}

}  // namespace

std::unordered_map<std::string, std::string> kernelOfOps(const HloModule& module) {
    std::unordered_map<std::string, std::string> out;
    forEachOpKernel(module, true, [&](std::string op, const std::string& kernel) { out.emplace(std::move(op), kernel); });
    return out;
}

std::unordered_map<std::string, std::vector<std::string>> kernelsOfOps(const HloModule& module, bool regions) {
    std::unordered_map<std::string, std::vector<std::string>> out;
    forEachOpKernel(module, regions, [&](std::string op, const std::string& kernel) {
        std::vector<std::string>& kernels = out[std::move(op)];
        if (std::find(kernels.begin(), kernels.end(), kernel) == kernels.end()) kernels.push_back(kernel);
    });
    return out;
}

FusionComparison compareFusion(const HloModule& before, const LayerTree& tree, const HloModule& xla,
                               const HloModule& ours) {
    FusionComparison result;
    result.layers.assign(static_cast<size_t>(tree.size()), {});
    const auto xlaKernels = kernelOfOps(xla);
    const auto oursKernels = kernelOfOps(ours);
    // The ops: the non-trivial instructions of the module before optimization.
    std::unordered_map<const HloInstruction*, size_t> index;
    for (const HloComputation* computation : kernelComputations(before)) {
        for (const auto& x : computation->instructions()) {
            if (CostAnalysis::isFree(*x) || x->opcode() == HloOpcode::kWhile || x->opcode() == HloOpcode::kCall ||
                x->opcode() == HloOpcode::kConditional)
                continue;
            FusionComparison::Op op;
            op.name = x->name();
            if (auto it = xlaKernels.find(op.name); it != xlaKernels.end()) op.xlaKernel = it->second;
            if (auto it = oursKernels.find(op.name); it != oursKernels.end()) op.oursKernel = it->second;
            op.layer = tree.layerOf(op.name);
            if (op.xlaKernel.empty() || op.oursKernel.empty()) ++result.missing;
            index.emplace(x.get(), result.ops.size());
            result.ops.push_back(std::move(op));
        }
    }
    // The make-up of each kernel: the set of ops (by position) it holds, on each side.
    std::map<std::string, std::set<size_t>> xlaGroups, oursGroups;
    for (size_t i = 0; i < result.ops.size(); ++i) {
        if (!result.ops[i].xlaKernel.empty()) xlaGroups[result.ops[i].xlaKernel].insert(i);
        if (!result.ops[i].oursKernel.empty()) oursGroups[result.ops[i].oursKernel].insert(i);
    }
    for (size_t i = 0; i < result.ops.size(); ++i) {
        FusionComparison::Op& op = result.ops[i];
        if (op.xlaKernel.empty() || op.oursKernel.empty()) continue;
        op.sameGroup = xlaGroups[op.xlaKernel] == oursGroups[op.oursKernel];
    }
    // Per layer: ops, distinct kernels on each side, ops grouped alike; then subtree sums.
    std::vector<std::set<std::string>> xlaPerLayer(static_cast<size_t>(tree.size())),
        oursPerLayer(static_cast<size_t>(tree.size()));
    for (const FusionComparison::Op& op : result.ops) {
        const size_t layer = static_cast<size_t>(op.layer >= 0 ? op.layer : LayerTree::kRoot);
        ++result.layers[layer].ops;
        if (op.sameGroup) ++result.layers[layer].sameGroup;
        if (!op.xlaKernel.empty()) xlaPerLayer[layer].insert(op.xlaKernel);
        if (!op.oursKernel.empty()) oursPerLayer[layer].insert(op.oursKernel);
    }
    // A kernel spanning layers counts once in each; subtree sums count it in the union.
    for (int i = tree.size() - 1; i >= 0; --i) {
        const size_t s = static_cast<size_t>(i);
        result.layers[s].xlaKernels = static_cast<int64_t>(xlaPerLayer[s].size());
        result.layers[s].oursKernels = static_cast<int64_t>(oursPerLayer[s].size());
        if (i == 0) break;
        const size_t parent = static_cast<size_t>(tree.layer(i).parent);
        result.layers[parent].ops += result.layers[s].ops;
        result.layers[parent].sameGroup += result.layers[s].sameGroup;
        xlaPerLayer[parent].insert(xlaPerLayer[s].begin(), xlaPerLayer[s].end());
        oursPerLayer[parent].insert(oursPerLayer[s].begin(), oursPerLayer[s].end());
    }
    // Producer -> consumer edges between ops.
    for (const auto& [consumer, ci] : index) {
        const FusionComparison::Op& c = result.ops[ci];
        std::set<const HloInstruction*> seen;
        for (const HloInstruction* producer : consumer->operands()) {
            auto it = index.find(producer);
            if (it == index.end() || !seen.insert(producer).second) continue;
            const FusionComparison::Op& p = result.ops[it->second];
            if (p.xlaKernel.empty() || p.oursKernel.empty() || c.xlaKernel.empty() || c.oursKernel.empty()) continue;
            ++result.edges;
            const bool byXla = p.xlaKernel == c.xlaKernel, byOurs = p.oursKernel == c.oursKernel;
            if (byXla && byOurs) ++result.fusedByBoth;
            else if (!byXla && !byOurs) ++result.fusedByNeither;
            else if (byXla) result.fusedByXlaOnly.emplace_back(p.name, c.name);
            else result.fusedByOursOnly.emplace_back(p.name, c.name);
        }
    }
    auto byName = [](auto& pairs) { std::sort(pairs.begin(), pairs.end()); };
    byName(result.fusedByXlaOnly);
    byName(result.fusedByOursOnly);
    return result;
}

}  // namespace hloscope
