// Shared machinery of the fusion passes: options and per-target limits,
// the legality rules (which producer-consumer pairs may fuse, and why not),
// and FusionBuilder, which creates fusion instructions the way XLA prints
// them (fused computations `fused_computation`, `fused_computation.N` with
// parameters `param_0`, `param_1`, ...; fusion instructions `%fusion`,
// `%fusion.N` with `kind=kLoop|kInput|kOutput, calls=...`). Fused
// instructions keep their names, so the pipeline's diff reports them as
// "fused". Removals are deferred to FusionBuilder::finish (batch, linear).
//
// Per-target defaults (options override them):
//   target  max_operands  max_fused_instructions  on-chip budget  tile elements
//   cpu     128           256                     1 MiB (L2)      4096
//   gpu     96            256                     228 KiB (smem)  1024
//   tpu     64            512                     16 MiB (VMEM)   2048
// The on-chip estimate of a fused kernel is, over its distinct operands,
// sum(min(operand bytes, tile elements * element bytes)).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/fusion/fusion_decision.h"
#include "compiler/pipeline/hlo_pass.h"
#include "core/ir/hlo_module.h"

namespace hloscope::fusion {

struct FusionConfig {
    std::string target = "cpu";
    // The performance model's hardware (hardware=NAME|file.json); empty: the
    // family's default (cpu: shipped cpu.json, gpu: h100, tpu: tpu_v5e).
    std::string hardware;
    std::string costModel = "performance";
    int64_t maxOperands = 128;
    int64_t maxFusedInstructions = 256;
    double onChipBudgetBytes = 1 << 20;
    int64_t tileElements = 4096;
    bool disableCostModel = false;
    std::set<std::pair<std::string, std::string>> force;
    std::set<std::pair<std::string, std::string>> forbid;

    // Pairs are named by the user's instruction names; once an instruction
    // is inside a fusion, the fusion answers for it.
    bool forced(const HloInstruction& a, const HloInstruction& b) const {
        return !force.empty() && namesPair(force, a, b);
    }
    bool forbidden(const HloInstruction& a, const HloInstruction& b) const {
        return !forbid.empty() && namesPair(forbid, a, b);
    }
    static std::vector<std::string> namesOf(const HloInstruction& x) {
        std::vector<std::string> names = {x.name()};
        if (x.opcode() == HloOpcode::kFusion && x.fusedComputation())
            for (const auto& inner : x.fusedComputation()->instructions())
                if (inner->opcode() != HloOpcode::kParameter) names.push_back(inner->name());
        return names;
    }
    static bool namesPair(const std::set<std::pair<std::string, std::string>>& pairs,
                          const HloInstruction& a, const HloInstruction& b) {
        const std::vector<std::string> first = namesOf(a), second = namesOf(b);
        for (const std::string& p : first)
            for (const std::string& c : second)
                if (pairs.count({p, c})) return true;
        return false;
    }
};

// Options of both passes: target, max_operands, max_fused_instructions,
// force, forbid, disable_cost_model, cost_model.
StatusOr<FusionConfig> parseFusionConfig(const PassOptions& options);

// Why the pair cannot fuse, or nullopt when it can (forbid= included,
// force= not: the caller decides). `detail` gets a short explanation;
// `producerUses` is distinctUseCount(producer) when the caller knows it.
std::optional<FusionReason> checkPair(const HloInstruction& producer,
                                      const HloInstruction& consumer, const FusionConfig& config,
                                      std::string* detail, bool multiOutput = false,
                                      int64_t producerUses = -1);
// Whether `instruction` may be part of a multi-output fusion: a reduce, an
// elementwise op, or a kLoop/kInput fusion (a multi-output one only when
// every user is a get-tuple-element); `why` says why not.
bool multiOutputCandidate(const HloInstruction& instruction, std::string* why);
// The iteration space of a fusion candidate: the reduce input dimensions
// and reduced dimensions for reductions, else the output dimensions.
std::string iterationSpace(const HloInstruction& instruction);

// Checks that apply to any fused kernel built from `parts` (operand count,
// size, on-chip budget); nullopt when within limits.
std::optional<FusionReason> checkLimits(const std::vector<const HloInstruction*>& parts,
                                        const FusionConfig& config, std::string* detail);

// Expensive to recompute: transcendentals, reduce, reduce-window, dot,
// convolution (or a fusion containing one).
bool isExpensive(const HloInstruction& instruction);
// Distinct users, plus one when the instruction is its computation's root.
int64_t distinctUseCount(const HloInstruction& instruction);
// Computations fusion may rewrite: the entry and what while/conditional/call
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
    HloInstruction* extendInPlace(HloInstruction* producer, HloInstruction* consumer,
                                  bool producerGoesAway, OwnedBody& body);
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
