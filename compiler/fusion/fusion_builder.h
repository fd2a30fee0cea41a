// FusionBuilder creates fusion instructions the way XLA prints them (fused
// computations `fused_computation`, `fused_computation.N` with parameters
// `param_0`, `param_1`, ...; fusion instructions `%fusion`, `%fusion.N` with
// `kind=kLoop|kInput|kOutput, calls=...`). Fused instructions keep their
// names, so the pipeline's diff reports them as "fused". Removals are
// deferred to FusionBuilder::finish (batch, linear). Also here: the
// containers the fusion passes index instructions and names with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope::fusion {

// reach from it (not fused computations, reducers, comparators, ...).
std::vector<HloComputation*> fusibleComputations(const HloModule& module);

// "f32[1024,1024] (4 MB)"
std::string describeBytes(const Shape& shape);
std::string formatSeconds(double seconds);

// A map from instructions to T, indexed by unique id (dense: ids are small
// consecutive numbers within a module; instructions without an id go to a
// hash map). Absent entries read as `T{}`. For one module at a time.
template <typename T>
class InstructionMap {
public:
    T& operator[](const HloInstruction* instruction) {
        const int64_t id = instruction->uniqueId();
        if (id < 0) return m_other[instruction];
        const auto index = static_cast<size_t>(id);
        if (index >= m_dense.size()) m_dense.resize(std::max(index + 1, m_dense.size() * 2));
        return m_dense[index];
    }
    T get(const HloInstruction* instruction) const {
        const int64_t id = instruction->uniqueId();
        if (id < 0) {
            auto it = m_other.find(instruction);
            return it == m_other.end() ? T{} : it->second;
        }
        const auto index = static_cast<size_t>(id);
        return index < m_dense.size() ? m_dense[index] : T{};
    }
    void reserve(size_t ids) { m_dense.reserve(ids); }

private:
    std::vector<T> m_dense;
    std::unordered_map<const HloInstruction*, T> m_other;
};

// A set of string views (open addressing, linear probing): the module's
// names, built once per pass without a node allocation per name.
class NameSet {
public:
    void reserve(size_t count);
    // True when `name` was not in the set (the view must outlive the set).
    bool insert(std::string_view name);
    bool contains(std::string_view name) const;

private:
    size_t slotOf(std::string_view name) const;
    void grow();
    std::vector<std::string_view> m_slots;  // empty view: free (names are never empty)
    size_t m_size = 0;
    bool m_hasEmpty = false;
};

// HloComputation::postOrder (the same order) with visited marks by unique id.
std::vector<HloInstruction*> postOrderOf(const HloComputation& computation);

class FusionBuilder {
public:
    explicit FusionBuilder(HloModule& module);

    // Fuses `producer` into `consumer` (either may be a fusion): returns the
    // new fusion that replaces `consumer`. When `producerGoesAway` the
    // producer must have no other users: it is removed and its instructions
    // keep their names in the fusion; otherwise they are copied with new
    // names and the producer stays.
    HloInstruction* fuse(HloInstruction* producer, HloInstruction* consumer, bool producerGoesAway);

    // Multi-output: one fusion computing `a` and `b` (siblings or a producer
    // `a` of `b`), whose root is a tuple of both outputs (flattened when
    // either is already multi-output); their users read get-tuple-elements.
    // Returns the new fusion.
    HloInstruction* fuseMultiOutput(HloInstruction* a, HloInstruction* b);

    bool removed(const HloInstruction* instruction) const { return m_dead.get(instruction) != 0; }
    bool changed() const { return !m_deadList.empty() || !m_newComputations.empty(); }

    // Removes what was fused away (batch), puts every changed computation in
    // a topological order close to the original, and places new fused
    // computations before their callers.
    Status finish();

private:
    struct Body;
    // A fused computation this builder made (by fuse): fuse extends it in
    // place when a producer joins it. Its instruction list is put in order
    // (parameters by number, then `order`) by finish.
    struct OwnedBody {
        std::vector<HloInstruction*> order;          // non-parameters, operands first
        std::unordered_set<std::string_view> names;  // their names (unless m_uniqueNames)
        bool paramLikeNames = false;                 // one is named param_...
        bool hasDot = false;                         // a dot or convolution inside
    };
    // The instructions of a fused computation, operands first: an owned
    // body's parameters and order, else its postOrder().
    std::vector<HloInstruction*> bodyOrder(const HloComputation& computation) const;
    // Fuses `producer` into `consumer`, whose body this builder made, by
    // adding the producer's instructions to that body (fusion_builder.cc
    // says how); nullptr, having changed nothing, where fuse must rebuild.
    HloInstruction* extendInPlace(HloInstruction* producer, HloInstruction* consumer,
                                  bool producerGoesAway, OwnedBody& body);
    // Steps of extendInPlace that use the builder's state. Whether the
    // producer's instructions (`producerBody`), keeping their names in
    // `body`, would clash with a name there (or with one another).
    bool extensionRenames(const HloInstruction& producer,
                          const std::vector<HloInstruction*>& producerBody,
                          const OwnedBody& body) const;
    // Lists `clones` (the producer's, operands first) at the front of
    // `body`'s order; returns the fusion kind of the extended body `fused`.
    std::string recordClones(const std::vector<HloInstruction*>& clones,
                             const HloComputation& fused, OwnedBody& body);
    // Replaces `consumer` by a fusion of the same name and attributes that
    // calls its extended body with `operands`; the producer goes away when
    // `producerGoesAway` and nothing else uses it.
    HloInstruction* replaceExtended(HloInstruction* producer, HloInstruction* consumer,
                                    const std::vector<HloInstruction*>& operands,
                                    const std::string& kind, bool producerGoesAway);
    void own(HloComputation* computation);
    void addNewComputation(HloComputation* computation);
    std::string fusionName();
    std::string computationName();
    void markDead(HloInstruction* instruction, bool withComputation = true);
    // Whether a live fusion besides the one at hand calls `body` (m_sharedBodies).
    bool calledByOthers(const HloComputation* body) const;
    int64_t anchorOf(const HloInstruction* instruction);

    HloModule& m_module;
    // Position hints for finish (absent: 0), stored + 1 so that 0 means absent.
    InstructionMap<int64_t> m_anchor;
    std::unordered_map<const HloComputation*, bool> m_anchored;
    InstructionMap<uint8_t> m_dead;
    std::vector<HloInstruction*> m_deadList;
    std::vector<HloComputation*> m_deadComputations;
    // Fused computations of the input that more than one fusion calls, with
    // the number of live callers: such a body goes away with its last caller,
    // and a fusion rebuilt from one of them names its new body afresh.
    std::unordered_map<const HloComputation*, int64_t> m_sharedBodies;
    // New fused computations in order of their last change (a computation
    // extended in place is listed again; m_latest says which entry counts).
    std::vector<HloComputation*> m_newComputations;
    std::unordered_map<const HloComputation*, size_t> m_latest;
    std::unordered_map<const HloComputation*, OwnedBody> m_bodies;
    // Every instruction and computation name of the module (built once) and
    // those handed out since: names are made here in constant time, not by
    // HloModule::uniqueInstructionName (linear in the computation count).
    // Views of the module's names (instructions and computations outlive
    // the builder's use of them) and of those handed out (m_handedOut).
    NameSet m_names;
    // No two non-parameter instructions of the module shared a name at the start.
    bool m_uniqueNames = true;
    std::vector<std::unique_ptr<std::string>> m_handedOut;
    std::unordered_map<std::string, int64_t> m_counters;

public:
    // `stem` when free, else stem.1, stem.2, ... (reserved).
    std::string freshName(const std::string& stem);
};

}  // namespace hloscope::fusion
