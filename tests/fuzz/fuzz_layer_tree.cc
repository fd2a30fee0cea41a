// libFuzzer target: the layer-tree builder (compiler/layers/layer_tree.h) on every module that
// parses and verifies. The input's length picks the options (from the app's defaults down to
// a handful of children per level), so the name, repeat and grouping arrangements and the
// splitting of large levels are all reached. A tree that breaks its own invariants is a
// finding: parents and children that disagree, an instruction in two layers, counts that do
// not add up, keys that do not find their layer, a breadcrumb that does not lead to it.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/layers/layer_tree.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "core/verifier/hlo_verifier.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

namespace {

std::string where(const LayerTree& tree, int index) {
    const Layer& layer = tree.layer(index);
    return "layer " + std::to_string(index) + " '" + layer.key + "' (" +
           std::string(layerKindName(layer.kind)) + ")";
}

void checkTree(const HloModule& module, const LayerTree& tree) {
    std::unordered_map<std::string, int> nameCount;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions()) ++nameCount[instruction->name()];
    if (tree.size() < 1) fuzz::fail("layer tree", "no root layer");
    if (tree.layer(LayerTree::kRoot).parent != -1) fuzz::fail("layer tree", "the root has a parent");
    std::unordered_map<const HloInstruction*, int> owner;
    std::unordered_set<std::string> keys;
    for (int i = 0; i < tree.size(); ++i) {
        const Layer& layer = tree.layer(i);
        if (!keys.insert(layer.key).second) fuzz::fail("layer keys", "duplicate key at " + where(tree, i));
        if (tree.find(layer.key) != i) fuzz::fail("layer find", where(tree, i) + " is not found by its key");
        if (i != LayerTree::kRoot) {
            if (layer.parent < 0 || layer.parent >= tree.size())
                fuzz::fail("layer parent", where(tree, i) + " has parent " + std::to_string(layer.parent));
            const Layer& parent = tree.layer(layer.parent);
            int seen = 0;
            for (int child : parent.children) seen += child == i;
            if (seen != 1) fuzz::fail("layer children", where(tree, i) + " is not once among its parent's children");
            if (layer.depth != parent.depth + 1) fuzz::fail("layer depth", where(tree, i));
        }
        int64_t count = static_cast<int64_t>(layer.instructions.size());
        for (int child : layer.children) {
            if (child <= 0 || child >= tree.size()) fuzz::fail("layer children", where(tree, i) + " names no layer");
            if (tree.layer(child).parent != i) fuzz::fail("layer children", where(tree, child) + " has another parent");
            count += tree.layer(child).instructionCount;
        }
        if (count != layer.instructionCount)
            fuzz::fail("layer count", where(tree, i) + " counts " + std::to_string(layer.instructionCount) +
                                          " instructions, its own and its children's are " +
                                          std::to_string(count));
        for (const HloInstruction* instruction : layer.instructions) {
            if (!owner.emplace(instruction, i).second)
                fuzz::fail("layer instructions", instruction->name() + " is in " + where(tree, owner[instruction]) +
                                                     " and in " + where(tree, i));
            if (nameCount[instruction->name()] == 1 && tree.layerOf(instruction->name()) != i)
                fuzz::fail("layerOf", instruction->name() + " is not found in " + where(tree, i));
        }
        const std::vector<int> path = tree.path(i);
        if (path.empty() || path.front() != LayerTree::kRoot || path.back() != i)
            fuzz::fail("layer path", "the breadcrumb of " + where(tree, i) + " does not lead from the root to it");
        for (int step : path)
            if (!tree.contains(step, i)) fuzz::fail("layer contains", where(tree, step) + " does not contain " + where(tree, i));
        bool self = false;
        for (int repeat : tree.repeatsOf(i)) self = self || repeat == i;
        if (!self) fuzz::fail("layer repeats", where(tree, i) + " is not among its own repeats");
        if (layer.repeatClass >= 0 && tree.repeatClassSize(layer.repeatClass) < 1)
            fuzz::fail("layer repeats", where(tree, i) + " has an empty repeat class");
    }
    // Every instruction of the entry is in the tree.
    if (const HloComputation* entry = module.entryComputation()) {
        for (const auto& instruction : entry->instructions())
            if (!owner.count(instruction.get()))
                fuzz::fail("layer instructions", "the entry's " + instruction->name() + " is in no layer");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    auto module = parseHloModule(fuzz::asText(data, size));
    if (!module.isOk() || !verifyModule(**module).isOk()) return 0;
    LayerTreeOptions options;  // the app's
    switch (size % 3) {
        case 1:  // small levels: grouping and splitting at every level
            options.maxChildren = 3;
            options.maxLooseParameters = 1;
            options.minCallInstructions = 2;
            options.minRepeatInstructions = 2;
            options.maxLeafInstructions = 4;
            break;
        case 2:  // arranged however few instructions there are
            options.maxChildren = 6;
            options.minRepeatInstructions = 1;
            options.maxLeafInstructions = 16;
            break;
        default:
            break;
    }
    checkTree(**module, LayerTree::build(**module, options));
    return 0;
}
