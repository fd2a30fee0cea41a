// LayerTree: a module's instructions arranged as the model's own layers, so
// that a graph of tens of thousands of instructions reads as a few dozen
// named parts ("decoder_block_3", "layer 7 of 32", "352 parameters").
//
// Each computation that is shown (the entry, and the bodies of while loops,
// calls and conditionals) is arranged by the first of these that applies:
//   1. Names: the scopes of the instructions' op_name metadata (JAX's
//      "jit(f)/jit(main)/decoder_block_3/attention/dot_general", TensorFlow's
//      "model/dense_1/MatMul"), without the prefix every instruction shares
//      and without the last component (the op itself). Instructions without
//      a scope join the layer of their first user (else of an operand).
//   2. Repeats: N structurally identical stretches of the instruction
//      sequence (compiler/layers/repeated_structure.h) are N layers, with the
//      instructions before and after them as a prologue and an epilogue.
//   3. Groups: consecutive instructions, so that no level holds more than
//      LayerTreeOptions::maxChildren nodes.
// A while loop, call or conditional whose called computations are larger
// than LayerTreeOptions::minCallInstructions is a layer of its own holding
// the instruction and its callees' layers. A computation's parameters beyond
// LayerTreeOptions::maxLooseParameters fold into one "N parameters" layer.
// A level with more than maxChildren layers is split into consecutive groups.
//
// Layers with the same structure (the multiset of their instructions' opcodes
// and shapes) share a repeat class, so a view can open every repeat of a layer
// at once. Fusion computations are not arranged: a fusion is one instruction
// of the layer that holds it. The tree refers to the module's instructions:
// it is valid while the module is alive and unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hloscope {

class HloComputation;
class HloInstruction;
class HloModule;

enum class LayerKind {
    kModule,      // the root: the entry computation
    kScope,       // a name scope of the op_name metadata
    kRepeat,      // one of N structurally identical stretches
    kCall,        // a while loop, call or conditional and its callees
    kComputation, // a called computation of a kCall layer: "body", "condition", "branch 1"
    kParameters,  // a computation's parameters, folded
    kGroup,       // consecutive instructions or layers
};

std::string_view layerKindName(LayerKind kind);

struct Layer {
    std::string name;  // shown: "decoder_block_3", "layer 7", "while.12", "352 parameters"
    std::string key;   // unique in the tree, stable across pass steps: "decoder_block_3/attention"
    LayerKind kind = LayerKind::kScope;
    int parent = -1;
    std::vector<int> children;                       // in instruction order
    std::vector<const HloInstruction*> instructions;  // its own, not its children's
    const HloComputation* computation = nullptr;     // that holds `instructions`
    const HloInstruction* caller = nullptr;          // kCall: the while, call or conditional
    int64_t instructionCount = 0;                    // in the whole subtree
    int repeatClass = -1;  // layers of equal structure share it; -1: none like it
    int depth = 0;         // 0 for the root
};

struct LayerTreeOptions {
    int maxChildren = 40;           // layers per level before consecutive grouping
    int flatUpTo = 0;               // names arrange a computation of more instructions than this
    int maxLooseParameters = 6;     // more parameters than this fold into one layer
    int minCallInstructions = 24;   // smaller callees stay inside their caller's node
    int minRepeatInstructions = 8;  // a repeat shorter than this is not a layer
    int maxLeafInstructions = 400;  // a leaf layer larger than this is split again
};

class LayerTree {
public:
    static LayerTree build(const HloModule& module, const LayerTreeOptions& options = {});

    int size() const { return static_cast<int>(m_layers.size()); }
    const Layer& layer(int index) const { return m_layers[static_cast<size_t>(index)]; }
    const std::vector<Layer>& layers() const { return m_layers; }
    static constexpr int kRoot = 0;

    // How the root's children were found: "names", "repeats", "groups" or "flat" (few enough
    // instructions to show as they are).
    const std::string& source() const { return m_source; }

    // The layer that holds the instruction of this name as its own; -1 when none does.
    int layerOf(std::string_view instructionName) const;
    // The deepest layer of the entry computation whose name scope an op_name falls in (an
    // instruction a pass made, named anew but keeping its metadata); -1 when none.
    int layerOfOpName(std::string_view opName) const;
    // The layer of this key; -1 when none has it.
    int find(std::string_view key) const;
    // The layers from the root down to `index`, both included (a breadcrumb).
    std::vector<int> path(int index) const;
    // Whether `ancestor` is `index` or one of its ancestors.
    bool contains(int ancestor, int index) const;
    // Every layer of `index`'s repeat class, in tree order (only `index` when it has none).
    std::vector<int> repeatsOf(int index) const;
    // The number of layers in each repeat class, by class.
    int repeatClassSize(int repeatClass) const;

private:
    friend class LayerTreeBuilder;
    // Looked up by string_view without a copy.
    struct NameHash {
        using is_transparent = void;
        size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
    };
    using NameMap = std::unordered_map<std::string, int, NameHash, std::equal_to<>>;
    std::vector<Layer> m_layers;
    std::string m_source = "flat";
    NameMap m_byInstruction;
    NameMap m_byKey;
    NameMap m_byScope;  // the entry's scope paths ("decoder_block_3/attention") -> layer
    std::vector<std::string> m_scopePrefix;  // what op_names of the entry drop before their path
    std::vector<int> m_repeatClassSizes;
};

// The scope of an op_name ("jit(f)/jit(main)/block_3/attention/dot_general"):
// its components without the last one. Exposed for tests.
std::vector<std::string> opNameScope(std::string_view opName);

}  // namespace hloscope
