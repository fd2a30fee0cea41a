#include "compiler/layers/layer_tree.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/layers/repeated_structure.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/ir/shape.h"

namespace hloscope {

std::string_view layerKindName(LayerKind kind) {
    switch (kind) {
        case LayerKind::kModule: return "module";
        case LayerKind::kScope: return "scope";
        case LayerKind::kRepeat: return "repeat";
        case LayerKind::kCall: return "call";
        case LayerKind::kComputation: return "computation";
        case LayerKind::kParameters: return "parameters";
        case LayerKind::kGroup: return "group";
    }
    return "layer";
}

std::vector<std::string> opNameScope(std::string_view opName) {
    // Split at '/' outside parentheses: "transpose(jvp(f))/dense/dot_general".
    std::vector<std::string> components;
    std::string current;
    int depth = 0;
    for (char c : opName) {
        if (c == '(') ++depth;
        if (c == ')' && depth > 0) --depth;
        if (c == '/' && depth == 0) {
            if (!current.empty()) components.push_back(std::move(current));
            current.clear();
            continue;
        }
        current += c;
    }
    if (!current.empty()) components.push_back(std::move(current));
    if (!components.empty()) components.pop_back();  // the op itself
    return components;
}

namespace {

uint64_t splitMix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t hashText(std::string_view text, uint64_t seed = 0xcbf29ce484222325ULL) {
    uint64_t h = seed;
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

// Equal for instructions of the same opcode and shape (layouts aside).
uint64_t tokenOf(const HloInstruction& x) {
    return hashText(x.shape().toString(false), hashText(hloOpcodeString(x.opcode())));
}

bool isCallLike(const HloInstruction& x) {
    return x.opcode() == HloOpcode::kWhile || x.opcode() == HloOpcode::kCall ||
           x.opcode() == HloOpcode::kConditional;
}

bool isAnchor(const HloInstruction& x) {
    return x.opcode() == HloOpcode::kDot || x.opcode() == HloOpcode::kConvolution;
}

bool isSecondaryAnchor(const HloInstruction& x) {
    switch (x.opcode()) {
        case HloOpcode::kReduce:
        case HloOpcode::kReduceWindow:
        case HloOpcode::kCustomCall:
        case HloOpcode::kGather:
        case HloOpcode::kScatter:
        case HloOpcode::kSort:
        case HloOpcode::kWhile:
        case HloOpcode::kCall:
        case HloOpcode::kConditional:
        case HloOpcode::kFusion:
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllGather:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kCollectivePermute: return true;
        default: return false;
    }
}

bool startsWith(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
    return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

void keepCommonPrefix(std::vector<std::string>& prefix, const std::vector<std::string>& path) {
    size_t k = 0;
    while (k < prefix.size() && k < path.size() && prefix[k] == path[k]) ++k;
    prefix.resize(k);
}

}  // namespace

class LayerTreeBuilder {
public:
    LayerTreeBuilder(const HloModule& module, const LayerTreeOptions& options)
        : m_module(module), m_options(options) {}

    LayerTree build() {
        const HloComputation* entry = m_module.entryComputation();
        const int root = add(-1, m_module.name(), LayerKind::kModule, entry);
        if (entry) {
            computeModulePrefix();
            m_tree.m_source = arrangeComputation(root, *entry, 0);
        }
        finish();
        return std::move(m_tree);
    }

private:
    struct Draft {
        Layer layer;
        int mergedInto = -1;  // compressed into that layer
    };

    int add(int parent, std::string name, LayerKind kind, const HloComputation* computation) {
        Draft draft;
        draft.layer.name = std::move(name);
        draft.layer.kind = kind;
        draft.layer.parent = parent;
        draft.layer.computation = computation;
        const int index = static_cast<int>(m_drafts.size());
        m_drafts.push_back(std::move(draft));
        if (parent >= 0) m_drafts[static_cast<size_t>(parent)].layer.children.push_back(index);
        return index;
    }
    Layer& at(int index) { return m_drafts[static_cast<size_t>(index)].layer; }

    // The op_name scope prefix every named instruction of the module shares.
    void computeModulePrefix() {
        bool first = true;
        for (const auto& computation : m_module.computations()) {
            if (computation->fusionInstruction()) continue;
            for (const auto& x : computation->instructions()) {
                std::vector<std::string> scope = opNameScope(x->metadataField("op_name"));
                if (scope.empty()) continue;
                if (first) {
                    m_prefix = std::move(scope);
                    first = false;
                } else {
                    keepCommonPrefix(m_prefix, scope);
                }
            }
        }
    }

    // Instructions of `computation` and of what it calls, fusions counted as one.
    int64_t arrangedSize(const HloComputation& computation) {
        if (auto it = m_sizes.find(&computation); it != m_sizes.end()) return it->second;
        m_sizes[&computation] = 0;  // a cycle (invalid input) counts nothing more
        int64_t size = computation.instructionCount();
        for (const auto& x : computation.instructions())
            if (isCallLike(*x))
                for (const HloComputation* callee : x->calledComputations()) size += arrangedSize(*callee);
        m_sizes[&computation] = size;
        return size;
    }

    int64_t calleeSize(const HloInstruction& x) {
        int64_t size = 0;
        for (const HloComputation* callee : x.calledComputations()) size += arrangedSize(*callee);
        return size;
    }

    void own(int layer, const HloInstruction* x) {
        at(layer).instructions.push_back(x);
        m_byInstruction[x->name()] = layer;
    }

    // Names inside `x` (fused and small callee instructions) resolve to `layer`.
    void mapNested(const HloInstruction& x, int layer) {
        for (const HloComputation* callee : x.calledComputations()) {
            if (!m_mapped.insert(callee).second) continue;
            for (const auto& y : callee->instructions()) {
                m_byInstruction.emplace(y->name(), layer);
                mapNested(*y, layer);
            }
        }
    }

    // `x` into `layer`: as its own instruction, or as a call layer with its callees arranged.
    void place(int layer, const HloInstruction* x) {
        if (!isCallLike(*x) || calleeSize(*x) < m_options.minCallInstructions) {
            own(layer, x);
            mapNested(*x, layer);
            return;
        }
        const int call = add(layer, x->name(), LayerKind::kCall, x->parent());
        at(call).caller = x;
        own(call, x);
        for (const CalledComputationAttribute& attribute : x->calledComputationAttributes()) {
            for (size_t i = 0; i < attribute.computations.size(); ++i) {
                const HloComputation* callee = attribute.computations[i];
                if (arrangedSize(*callee) < m_options.minCallInstructions ||
                    !m_arranged.insert(callee).second) {
                    m_mapped.insert(callee);
                    for (const auto& y : callee->instructions()) m_byInstruction.emplace(y->name(), call);
                    continue;
                }
                std::string name = attribute.name;
                if (name == "branch_computations") name = "branch " + std::to_string(i + 1);
                else if (name == "to_apply") name = "callee";
                else if (name.ends_with("_computation")) name.resize(name.size() - 12);
                const int child = add(call, name, LayerKind::kComputation, callee);
                arrangeComputation(child, *callee, 0);
            }
        }
    }

    // Arranges a computation's instructions under `layer`; returns how ("names", "repeats",
    // "groups", "flat").
    std::string arrangeComputation(int layer, const HloComputation& computation, int depth) {
        std::vector<const HloInstruction*> parameters, rest;
        for (const auto& x : computation.instructions())
            (x->opcode() == HloOpcode::kParameter ? parameters : rest).push_back(x.get());
        if (static_cast<int>(parameters.size()) > m_options.maxLooseParameters) {
            const int folded = add(layer, std::to_string(parameters.size()) + " parameters",
                                   LayerKind::kParameters, &computation);
            for (const HloInstruction* p : parameters) own(folded, p);
        } else {
            for (const HloInstruction* p : parameters) own(layer, p);
        }
        return arrangeInstructions(layer, rest, depth);
    }

    std::string arrangeInstructions(int layer, const std::vector<const HloInstruction*>& items, int depth) {
        if (depth == 0 && static_cast<int>(items.size()) > m_options.flatUpTo && arrangeByNames(layer, items))
            return "names";
        if (static_cast<int>(items.size()) <= m_options.maxChildren) {
            for (const HloInstruction* x : items) place(layer, x);
            return "flat";
        }
        if (depth < 2 && arrangeByRepeats(layer, items, depth)) return "repeats";
        if (static_cast<int>(items.size()) > (depth == 0 ? m_options.maxChildren : m_options.maxLeafInstructions)) {
            arrangeInGroups(layer, items);
            return "groups";
        }
        for (const HloInstruction* x : items) place(layer, x);
        return "flat";
    }

    bool arrangeByNames(int layer, const std::vector<const HloInstruction*>& items) {
        std::unordered_map<const HloInstruction*, size_t> index;
        std::vector<std::vector<std::string>> scopes(items.size());
        std::vector<std::string> local;
        bool firstNamed = true;
        size_t named = 0;
        for (size_t i = 0; i < items.size(); ++i) {
            index[items[i]] = i;
            std::vector<std::string> scope = opNameScope(items[i]->metadataField("op_name"));
            if (startsWith(scope, m_prefix)) scope.erase(scope.begin(), scope.begin() + static_cast<std::ptrdiff_t>(m_prefix.size()));
            if (scope.empty()) continue;
            if (firstNamed) {
                local = scope;
                firstNamed = false;
            } else {
                keepCommonPrefix(local, scope);
            }
            scopes[i] = std::move(scope);
            ++named;
        }
        if (named * 2 < items.size()) return false;
        std::unordered_set<std::string> tops;
        for (auto& scope : scopes) {
            if (scope.empty()) continue;
            scope.erase(scope.begin(), scope.begin() + static_cast<std::ptrdiff_t>(local.size()));
            if (!scope.empty()) tops.insert(scope.front());
        }
        if (tops.size() < 2) return false;
        // Instructions without a scope take their first user's, else an operand's.
        for (size_t i = items.size(); i-- > 0;) {
            if (!scopes[i].empty()) continue;
            for (const HloInstruction* user : items[i]->users())
                if (auto it = index.find(user); it != index.end() && !scopes[it->second].empty()) {
                    scopes[i] = scopes[it->second];
                    break;
                }
        }
        for (size_t i = 0; i < items.size(); ++i) {
            if (!scopes[i].empty()) continue;
            for (const HloInstruction* operand : items[i]->operands())
                if (auto it = index.find(operand); it != index.end() && !scopes[it->second].empty()) {
                    scopes[i] = scopes[it->second];
                    break;
                }
        }
        if (layer == 0) {
            m_entryScopePrefix = m_prefix;
            m_entryScopePrefix.insert(m_entryScopePrefix.end(), local.begin(), local.end());
        }
        std::map<std::vector<std::string>, int> byPath;
        std::function<int(const std::vector<std::string>&, size_t)> layerFor =
            [&](const std::vector<std::string>& scope, size_t length) -> int {
            if (length == 0) return layer;
            std::vector<std::string> path(scope.begin(), scope.begin() + static_cast<std::ptrdiff_t>(length));
            if (auto it = byPath.find(path); it != byPath.end()) return it->second;
            const int parent = layerFor(scope, length - 1);
            const int created = add(parent, scope[length - 1], LayerKind::kScope, at(layer).computation);
            byPath.emplace(std::move(path), created);
            return created;
        };
        // Many instructions without any scope: one "unnamed" layer, arranged without names.
        std::vector<const HloInstruction*> unnamed;
        for (size_t i = 0; i < items.size(); ++i)
            if (scopes[i].empty() && !(isCallLike(*items[i]) && calleeSize(*items[i]) >= m_options.minCallInstructions))
                unnamed.push_back(items[i]);
        const bool foldUnnamed = static_cast<int>(unnamed.size()) > m_options.maxChildren / 2;
        if (foldUnnamed) {
            const int group = add(layer, "unnamed", LayerKind::kGroup, at(layer).computation);
            arrangeInstructions(group, unnamed, 1);
        }
        for (size_t i = 0; i < items.size(); ++i) {
            if (foldUnnamed && m_byInstruction.count(items[i]->name())) continue;
            // A loop or call holding layers of its own stands at this level unless named.
            const bool bigCall = isCallLike(*items[i]) && calleeSize(*items[i]) >= m_options.minCallInstructions;
            const bool ownScope = !opNameScope(items[i]->metadataField("op_name")).empty();
            const bool dominant = bigCall && calleeSize(*items[i]) * 4 > static_cast<int64_t>(items.size());
            place(bigCall && (!ownScope || dominant) ? layer : layerFor(scopes[i], scopes[i].size()), items[i]);
        }
        if (layer == 0)
            for (const auto& [path, scope] : byPath) {
                std::string joined;
                for (const std::string& part : path) joined += (joined.empty() ? "" : "/") + part;
                m_entryScopes[joined] = scope;
            }
        // A scope of very many instructions of its own is arranged again, without names.
        for (const auto& [path, scope] : byPath) {
            if (static_cast<int>(at(scope).instructions.size()) <= m_options.maxLeafInstructions) continue;
            std::vector<const HloInstruction*> own;
            std::swap(own, at(scope).instructions);
            arrangeInstructions(scope, own, 1);
        }
        return true;
    }

    bool arrangeByRepeats(int layer, const std::vector<const HloInstruction*>& items, int depth) {
        std::vector<uint64_t> tokens;
        for (const HloInstruction* x : items) tokens.push_back(tokenOf(*x));
        RepeatSearchOptions search;
        search.minCopyLength = m_options.minRepeatInstructions;
        // The largest stretch, then more in what lies before and after it (a training step's
        // forward and backward layers are two stretches).
        std::vector<std::vector<int>> stretches;
        std::function<void(int, int)> searchIn = [&](int begin, int end) {
            if (end - begin < 2 * m_options.minRepeatInstructions) return;
            const std::vector<uint64_t> t(tokens.begin() + begin, tokens.begin() + end);
            // Dots and convolutions mark the copies; where there are too few, the other heavy ops.
            std::vector<bool> a;
            int anchorCount = 0;
            for (int i = begin; i < end; ++i) {
                a.push_back(isAnchor(*items[static_cast<size_t>(i)]));
                anchorCount += a.back() ? 1 : 0;
            }
            if (anchorCount < 4)
                for (int i = begin; i < end; ++i) a[static_cast<size_t>(i - begin)] = isSecondaryAnchor(*items[static_cast<size_t>(i)]);
            RepeatedStretch found = findRepeatedStretch(t, a, search);
            if (found.count() < 2) return;
            for (int& cut : found.cuts) cut += begin;
            stretches.push_back(found.cuts);
            searchIn(begin, found.cuts.front());
            searchIn(found.cuts.back(), end);
        };
        searchIn(0, static_cast<int>(items.size()));
        if (stretches.empty()) return false;
        std::sort(stretches.begin(), stretches.end());
        auto range = [&](int begin, int end) {
            return std::vector<const HloInstruction*>(items.begin() + begin, items.begin() + end);
        };
        auto gap = [&](const std::string& name, int begin, int end) {
            if (end - begin <= 0) return;
            if (end - begin < m_options.minRepeatInstructions) {
                for (int i = begin; i < end; ++i) place(layer, items[static_cast<size_t>(i)]);
                return;
            }
            const std::vector<const HloInstruction*> members = range(begin, end);
            const int group = add(layer, name + sourceHint(members), LayerKind::kGroup, at(layer).computation);
            arrangeInstructions(group, members, depth + 1);
        };
        const std::string word = depth == 0 ? "layer " : "block ";
        // Too many copies for one level: every stretch but the largest becomes a group of its
        // copies ("layer B1–B31"); all of them when that is still too many.
        size_t largest = 0, copies = 0;
        for (size_t s = 0; s < stretches.size(); ++s) {
            copies += stretches[s].size() - 1;
            if (stretches[s].back() - stretches[s].front() >
                stretches[largest].back() - stretches[largest].front())
                largest = s;
        }
        const size_t levelSize = copies + 2 * stretches.size() + 1;
        const bool groupOthers = levelSize > static_cast<size_t>(m_options.maxChildren);
        const bool groupAll =
            groupOthers && stretches[largest].size() - 1 + 3 * stretches.size() > static_cast<size_t>(m_options.maxChildren);
        int position = 0;
        for (size_t s = 0; s < stretches.size(); ++s) {
            const std::vector<int>& cuts = stretches[s];
            gap(s == 0 ? "prologue" : "instructions " + std::to_string(position + 1) + "–" + std::to_string(cuts.front()),
                position, cuts.front());
            // Several stretches: "layer A1", "layer B1"; one: "layer 1".
            const std::string letter = stretches.size() == 1 ? "" : std::string(1, static_cast<char>('A' + std::min<size_t>(s, 25)));
            const int count = static_cast<int>(cuts.size()) - 1;
            int parent = layer;
            if (groupAll || (groupOthers && s != largest))
                parent = add(layer, word + letter + "1–" + letter + std::to_string(count), LayerKind::kGroup,
                             at(layer).computation);
            for (int c = 0; c < count; ++c) {
                const int copy = add(parent, word + letter + std::to_string(c + 1), LayerKind::kRepeat, at(layer).computation);
                arrangeInstructions(copy, range(cuts[static_cast<size_t>(c)], cuts[static_cast<size_t>(c + 1)]), depth + 1);
            }
            position = cuts.back();
        }
        gap("epilogue", position, static_cast<int>(items.size()));
        return true;
    }

    // What a run of instructions mostly comes from in the program, when their metadata says
    // (PyTorch/XLA's op names carry no model scopes, but source_file and source_line do):
    // " · optimization.py:446" when one line covers at least half of those that name one,
    // " · functional.py" when one file does, else "".
    static std::string sourceHint(const std::vector<const HloInstruction*>& items) {
        std::unordered_map<std::string, int> files, lines;
        int named = 0;
        for (const HloInstruction* x : items) {
            std::string file = x->metadataField("source_file");
            if (file.empty()) continue;
            file = file.substr(file.find_last_of('/') + 1);
            ++named;
            ++files[file];
            const std::string line = x->metadataField("source_line");
            if (!line.empty()) ++lines[file + ":" + line];
        }
        auto most = [](const std::unordered_map<std::string, int>& counts) {
            const std::pair<const std::string, int>* best = nullptr;
            for (const auto& entry : counts)
                if (!best || entry.second > best->second || (entry.second == best->second && entry.first < best->first))
                    best = &entry;
            return best;
        };
        if (named == 0) return {};
        if (const auto* line = most(lines); line && 2 * line->second >= named) return " · " + line->first;
        if (const auto* file = most(files); file && 2 * file->second >= named) return " · " + file->first;
        return {};
    }

    // Consecutive instructions in groups of about equal size; a loop or call holding layers of
    // its own stands between them at this level.
    void arrangeInGroups(int layer, const std::vector<const HloInstruction*>& items) {
        const int n = static_cast<int>(items.size());
        const int groups = std::clamp((n + m_options.maxChildren - 1) / m_options.maxChildren, 2,
                                      std::max(2, m_options.maxChildren - 2));
        const int size = (n + groups - 1) / groups;
        std::vector<const HloInstruction*> pending;
        int pendingStart = 0;
        auto flush = [&](int end) {
            if (pending.empty()) return;
            const int group = add(layer,
                                  "instructions " + std::to_string(pendingStart + 1) + "–" + std::to_string(end) +
                                      sourceHint(pending),
                                  LayerKind::kGroup, at(layer).computation);
            for (const HloInstruction* x : pending) place(group, x);
            pending.clear();
        };
        for (int i = 0; i < n; ++i) {
            const HloInstruction* x = items[static_cast<size_t>(i)];
            if (isCallLike(*x) && calleeSize(*x) >= m_options.minCallInstructions) {
                flush(i);
                place(layer, x);
                continue;
            }
            if (pending.empty()) pendingStart = i;
            pending.push_back(x);
            if (static_cast<int>(pending.size()) == size) flush(i + 1);
        }
        flush(n);
    }

    // Scope layers that only hold one scope become one ("attention/rotary").
    void compressChains(int index) {
        for (int child : std::vector<int>(at(index).children)) compressChains(child);
        Layer& layer = at(index);
        if (layer.kind != LayerKind::kScope || !layer.instructions.empty() || layer.children.size() != 1)
            return;
        const int only = layer.children.front();
        Layer& child = at(only);
        if (child.kind != LayerKind::kScope) return;
        layer.name += "/" + child.name;
        layer.children = std::move(child.children);
        layer.instructions = std::move(child.instructions);
        for (int grandchild : layer.children) at(grandchild).parent = index;
        m_drafts[static_cast<size_t>(only)].mergedInto = index;
    }

    // Levels of more than maxChildren layers become consecutive groups of them.
    void splitLargeLevels(int index) {
        for (int child : std::vector<int>(at(index).children)) splitLargeLevels(child);
        if (static_cast<int>(at(index).children.size()) <= m_options.maxChildren) return;
        // The folded parameters stay first, on their own.
        std::vector<int> children;
        std::vector<int> kept;
        for (int child : at(index).children)
            (at(child).kind == LayerKind::kParameters ? kept : children).push_back(child);
        const int room = std::max(2, m_options.maxChildren - static_cast<int>(kept.size()));
        const int k = static_cast<int>(children.size());
        const int groups = (k + room - 1) / room;
        const int per = (k + groups - 1) / groups;
        at(index).children = kept;
        for (int begin = 0; begin < k; begin += per) {
            const int end = std::min(k, begin + per);
            const std::string name = at(children[static_cast<size_t>(begin)]).name + " – " +
                                     at(children[static_cast<size_t>(end - 1)]).name;
            const int group = add(index, name, LayerKind::kGroup, at(index).computation);
            for (int i = begin; i < end; ++i) {
                const int child = children[static_cast<size_t>(i)];
                at(child).parent = group;
                at(group).children.push_back(child);
            }
        }
    }

    void finish() {
        compressChains(0);
        splitLargeLevels(0);
        // Renumber the live layers in tree order.
        std::vector<int> newIndex(m_drafts.size(), -1);
        std::vector<int> order;
        std::function<void(int)> visit = [&](int index) {
            newIndex[static_cast<size_t>(index)] = static_cast<int>(order.size());
            order.push_back(index);
            for (int child : at(index).children) visit(child);
        };
        visit(0);
        std::vector<Layer>& layers = m_tree.m_layers;
        layers.reserve(order.size());
        for (int old : order) {
            Layer layer = std::move(at(old));
            layer.parent = layer.parent >= 0 ? newIndex[static_cast<size_t>(layer.parent)] : -1;
            for (int& child : layer.children) child = newIndex[static_cast<size_t>(child)];
            layer.depth = layer.parent >= 0 ? layers[static_cast<size_t>(layer.parent)].depth + 1 : 0;
            layers.push_back(std::move(layer));
        }
        for (const auto& [path, owner] : m_entryScopes) {
            int live = owner;
            while (m_drafts[static_cast<size_t>(live)].mergedInto >= 0)
                live = m_drafts[static_cast<size_t>(live)].mergedInto;
            const int mapped = newIndex[static_cast<size_t>(live)];
            if (mapped >= 0) m_tree.m_byScope.emplace(path, mapped);
        }
        m_tree.m_scopePrefix = m_entryScopePrefix;
        for (auto& [name, owner] : m_byInstruction) {
            int live = owner;
            while (m_drafts[static_cast<size_t>(live)].mergedInto >= 0)
                live = m_drafts[static_cast<size_t>(live)].mergedInto;
            const int mapped = newIndex[static_cast<size_t>(live)];
            if (mapped >= 0) m_tree.m_byInstruction.emplace(name, mapped);
        }
        // Keys: the path of names, unique among siblings.
        for (size_t i = 0; i < layers.size(); ++i) {
            Layer& layer = layers[i];
            if (layer.parent < 0) continue;
            const std::string& parentKey = layers[static_cast<size_t>(layer.parent)].key;
            std::string key = parentKey.empty() ? layer.name : parentKey + "/" + layer.name;
            std::string unique = key;
            for (int n = 2; m_tree.m_byKey.count(unique); ++n) unique = key + "#" + std::to_string(n);
            layer.key = unique;
            m_tree.m_byKey.emplace(unique, static_cast<int>(i));
        }
        m_tree.m_byKey.emplace("", 0);
        // Counts and structure signatures, children before parents.
        std::vector<uint64_t> signature(layers.size(), 0);
        for (size_t i = layers.size(); i-- > 0;) {
            Layer& layer = layers[i];
            int64_t count = 0;
            uint64_t sum = 0;
            for (const HloInstruction* x : layer.instructions) {
                ++count;
                sum += splitMix(tokenOf(*x));
            }
            for (int child : layer.children) {
                count += layers[static_cast<size_t>(child)].instructionCount;
                sum += signature[static_cast<size_t>(child)];
            }
            layer.instructionCount = count;
            signature[i] = sum + splitMix(static_cast<uint64_t>(count));
        }
        std::map<uint64_t, std::vector<int>> bySignature;
        for (size_t i = 1; i < layers.size(); ++i) {
            const Layer& layer = layers[i];
            if (layer.kind == LayerKind::kParameters || layer.kind == LayerKind::kComputation ||
                layer.kind == LayerKind::kGroup ||
                layer.instructionCount < m_options.minRepeatInstructions)
                continue;
            bySignature[signature[i]].push_back(static_cast<int>(i));
        }
        std::vector<std::vector<int>> classes;
        for (auto& [sig, members] : bySignature)
            if (members.size() >= 2) classes.push_back(members);
        std::sort(classes.begin(), classes.end());  // by first member: tree order
        for (const std::vector<int>& members : classes) {
            const int id = static_cast<int>(m_tree.m_repeatClassSizes.size());
            m_tree.m_repeatClassSizes.push_back(static_cast<int>(members.size()));
            for (int member : members) layers[static_cast<size_t>(member)].repeatClass = id;
        }
    }

    const HloModule& m_module;
    LayerTreeOptions m_options;
    LayerTree m_tree;
    std::vector<Draft> m_drafts;
    std::vector<std::string> m_prefix;
    std::vector<std::string> m_entryScopePrefix;
    std::map<std::string, int> m_entryScopes;
    std::unordered_map<std::string, int> m_byInstruction;
    std::unordered_map<const HloComputation*, int64_t> m_sizes;
    std::unordered_set<const HloComputation*> m_mapped;
    std::unordered_set<const HloComputation*> m_arranged;
};

LayerTree LayerTree::build(const HloModule& module, const LayerTreeOptions& options) {
    return LayerTreeBuilder(module, options).build();
}

int LayerTree::layerOf(std::string_view instructionName) const {
    auto it = m_byInstruction.find(instructionName);
    return it == m_byInstruction.end() ? -1 : it->second;
}

int LayerTree::layerOfOpName(std::string_view opName) const {
    if (m_byScope.empty() || opName.empty()) return -1;
    std::vector<std::string> scope = opNameScope(opName);
    if (!startsWith(scope, m_scopePrefix)) return -1;
    scope.erase(scope.begin(), scope.begin() + static_cast<std::ptrdiff_t>(m_scopePrefix.size()));
    // The longest scope path the tree has.
    for (size_t length = scope.size(); length > 0; --length) {
        std::string joined;
        for (size_t i = 0; i < length; ++i) joined += (i ? "/" : "") + scope[i];
        if (auto it = m_byScope.find(joined); it != m_byScope.end()) return it->second;
    }
    return -1;
}

int LayerTree::find(std::string_view key) const {
    auto it = m_byKey.find(key);
    return it == m_byKey.end() ? -1 : it->second;
}

std::vector<int> LayerTree::path(int index) const {
    std::vector<int> result;
    for (int i = index; i >= 0; i = m_layers[static_cast<size_t>(i)].parent) result.push_back(i);
    std::reverse(result.begin(), result.end());
    return result;
}

bool LayerTree::contains(int ancestor, int index) const {
    for (int i = index; i >= 0; i = m_layers[static_cast<size_t>(i)].parent)
        if (i == ancestor) return true;
    return false;
}

std::vector<int> LayerTree::repeatsOf(int index) const {
    const int repeatClass = m_layers[static_cast<size_t>(index)].repeatClass;
    if (repeatClass < 0) return {index};
    std::vector<int> result;
    for (size_t i = 0; i < m_layers.size(); ++i)
        if (m_layers[i].repeatClass == repeatClass) result.push_back(static_cast<int>(i));
    return result;
}

int LayerTree::repeatClassSize(int repeatClass) const {
    return repeatClass >= 0 && repeatClass < static_cast<int>(m_repeatClassSizes.size())
               ? m_repeatClassSizes[static_cast<size_t>(repeatClass)]
               : 1;
}

}  // namespace hloscope
