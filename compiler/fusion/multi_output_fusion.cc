#include "compiler/fusion/multi_output_fusion.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/cost/cost_analysis.h"
#include "compiler/fusion/fusion_builder.h"
#include "compiler/fusion/fusion_format.h"
#include "compiler/fusion/fusion_legality.h"

namespace hloscope {

using fusion::FusionBuilder;
using fusion::FusionConfig;

namespace {

constexpr double kMinSharedOperandBytes = 1024;

}  // namespace

// "Does `to` depend on `from`?" for the cycle checks. Every instruction
// has a position in a topological order (operands before users; a
// get-tuple-element has its tuple's), so a search from `to` only
// visits instructions positioned after `from`. The order is computed once;
// when two instructions merge into a multi-output fusion, only the stretch
// of the order between them is rearranged (Pearce and Kelly's dynamic
// topological order): ancestors of the later one move before the fusion,
// descendants of the earlier one after it. The pass stays near-linear on
// modules with tens of thousands of instructions.
class MultiOutputFusionPass::Reachability {
public:
    explicit Reachability(HloComputation& computation) : m_computation(computation) {}

    // Whether `to` depends on `from` through operands or control edges,
    // not counting a direct operand edge from `from` when `skipDirect`.
    bool reaches(const HloInstruction* from, const HloInstruction* to, bool skipDirect) {
        if (!m_valid) renumber();
        const int64_t limit = position(from);
        ++m_stamp;
        std::vector<const HloInstruction*>& stack = m_stack;
        stack.clear();
        auto visit = [&](const HloInstruction* x) {
            if (x == from) return true;
            const size_t slot = slotOf(x);
            if (m_seen[slot] != m_stamp && position(x) >= limit) {
                m_seen[slot] = m_stamp;
                stack.push_back(x);
            }
            return false;
        };
        for (const HloInstruction* operand : to->operands())
            if (!(skipDirect && operand == from) && visit(operand)) return true;
        for (const HloInstruction* predecessor : to->controlPredecessors())
            if (visit(predecessor)) return true;
        while (!stack.empty()) {
            const HloInstruction* x = stack.back();
            stack.pop_back();
            for (const HloInstruction* operand : x->operands())
                if (visit(operand)) return true;
            for (const HloInstruction* predecessor : x->controlPredecessors())
                if (visit(predecessor)) return true;
        }
        return false;
    }

    // Before `a` and `b` merge: the instructions between them in the order
    // that must end up before (ancestors of the later) or after
    // (descendants of the earlier) the fusion.
    struct MergePlan {
        std::vector<const HloInstruction*> before, after;
        std::vector<int64_t> slots;  // the positions the stretch may use
        bool valid = false;
    };
    MergePlan planMerge(const HloInstruction* a, const HloInstruction* b) {
        MergePlan plan;
        if (!m_valid) return plan;
        if (position(a) > position(b)) std::swap(a, b);
        const int64_t lo = position(a), hi = position(b);
        ++m_stamp;
        // Descendants of `a` (users and control successors) before `b`.
        std::vector<const HloInstruction*> stack = {a};
        while (!stack.empty()) {
            const HloInstruction* x = stack.back();
            stack.pop_back();
            auto follow = [&](const HloInstruction* y) {
                if (y == b) return;
                const size_t slot = slotOf(y);
                if (m_seen[slot] != m_stamp && position(y) < hi) {
                    m_seen[slot] = m_stamp;
                    if (!isElement(y)) plan.after.push_back(y);
                    stack.push_back(y);
                }
            };
            for (const HloInstruction* y : x->users()) follow(y);
            for (const HloInstruction* y : x->controlSuccessors()) follow(y);
        }
        // Ancestors of `b` after `a`.
        stack = {b};
        while (!stack.empty()) {
            const HloInstruction* x = stack.back();
            stack.pop_back();
            auto follow = [&](const HloInstruction* y) {
                if (y == a) return;
                const size_t slot = slotOf(y);
                if (m_seen[slot] != m_stamp && position(y) > lo) {
                    m_seen[slot] = m_stamp;
                    if (!isElement(y)) plan.before.push_back(y);
                    stack.push_back(y);
                }
            };
            for (const HloInstruction* y : x->operands()) follow(y);
            for (const HloInstruction* y : x->controlPredecessors()) follow(y);
        }
        // Sorted by position, each position looked up once.
        std::vector<std::pair<int64_t, const HloInstruction*>> keyed;
        plan.slots = {lo, hi};
        auto byPosition = [&](std::vector<const HloInstruction*>& group) {
            keyed.clear();
            for (const HloInstruction* x : group) keyed.emplace_back(position(x), x);
            std::sort(keyed.begin(), keyed.end(),
                      [](const auto& l, const auto& r) { return l.first < r.first; });
            for (size_t i = 0; i < keyed.size(); ++i) {
                group[i] = keyed[i].second;
                plan.slots.push_back(keyed[i].first);
            }
        };
        byPosition(plan.before);
        byPosition(plan.after);
        std::sort(plan.slots.begin(), plan.slots.end());
        plan.valid = true;
        return plan;
    }

    // After the merge: `fused` (and its get-tuple-elements) sit between the
    // plan's two groups.
    void applyMerge(const MergePlan& plan, const HloInstruction* fused) {
        if (!plan.valid || !m_valid) {
            m_valid = false;
            return;
        }
        size_t next = 0;
        for (const HloInstruction* x : plan.before) m_position[slotOf(x)] = plan.slots[next++];
        m_position[slotOf(fused)] = plan.slots[next++];
        ++next;  // one spare: a and b give two positions, the fusion takes one
        for (const HloInstruction* x : plan.after) m_position[slotOf(x)] = plan.slots[next++];
    }

private:
    // A get-tuple-element has no position of its own: it is where its tuple
    // is (so it moves with it and never ties with anything else).
    static bool isElement(const HloInstruction* x) {
        return x->opcode() == HloOpcode::kGetTupleElement;
    }
    int64_t position(const HloInstruction* x) {
        while (isElement(x)) x = x->operand(0);
        return m_position[slotOf(x)];
    }

    size_t slotOf(const HloInstruction* x) {
        const int64_t id = x->uniqueId();
        if (m_dense && id >= 0) {
            if (static_cast<size_t>(id) >= m_position.size()) grow(static_cast<size_t>(id) + 1);
            return static_cast<size_t>(id);
        }
        auto [it, inserted] = m_slots.emplace(x, m_position.size());
        if (inserted) grow(m_position.size() + 1);
        return it->second;
    }

    void grow(size_t size) {
        m_position.resize(size, -1);
        m_seen.resize(size, 0);
    }

    void renumber() {
        const auto& instructions = m_computation.instructions();
        int64_t maxId = -1;
        bool idsKnown = true;
        for (const auto& instruction : instructions) {
            maxId = std::max(maxId, instruction->uniqueId());
            idsKnown = idsKnown && instruction->uniqueId() >= 0;
        }
        const size_t count = instructions.size();
        // Unique ids index the arrays when they are reasonably dense.
        m_dense = idsKnown && maxId < std::max<int64_t>(16 * static_cast<int64_t>(count), 1 << 22);
        m_slots.clear();
        m_position.clear();
        m_seen.clear();
        grow(m_dense ? static_cast<size_t>(maxId + 1) : 0);
        m_stamp = 0;
        // Iterative post-order over operands and control predecessors;
        // positions are spaced so that get-tuple-elements can share.
        std::unordered_set<const HloInstruction*> open;
        std::vector<std::pair<const HloInstruction*, size_t>> work;
        int64_t next = 0;
        for (const auto& root : instructions) {
            if (m_position[slotOf(root.get())] >= 0 || open.count(root.get())) continue;
            work.emplace_back(root.get(), 0);
            open.insert(root.get());
            while (!work.empty()) {
                auto& [x, k] = work.back();
                const size_t operandCount = x->operands().size();
                const size_t total = operandCount + x->controlPredecessors().size();
                if (k < total) {
                    const HloInstruction* y = k < operandCount ? x->operand(static_cast<int64_t>(k))
                                                              : x->controlPredecessors()[k - operandCount];
                    ++k;
                    if (m_position[slotOf(y)] < 0 && open.insert(y).second) work.emplace_back(y, 0);
                    continue;
                }
                m_position[slotOf(x)] = next++;
                work.pop_back();
            }
        }
        m_valid = true;
    }

    HloComputation& m_computation;
    bool m_valid = false;
    bool m_dense = false;
    std::unordered_map<const HloInstruction*, size_t> m_slots;  // when ids are sparse
    std::vector<int64_t> m_position;
    std::vector<uint32_t> m_seen;
    uint32_t m_stamp = 0;
    std::vector<const HloInstruction*> m_stack;
};

std::string_view MultiOutputFusionPass::description() {
    return "Multi-output fusion: siblings reading the same large operand (two reductions of one "
           "input) become one fusion with a tuple root, and a producer also needed outside is "
           "fused into its reduction/loop consumer exposing both outputs; never creates cycles. "
           "Options as fusion.";
}

StatusOr<std::unique_ptr<HloPass>> MultiOutputFusionPass::create(const PassOptions& options) {
    HLO_ASSIGN_OR_RETURN(FusionConfig config, fusion::parseFusionConfig(options));
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<FusionCostModel> model,
                         makeFusionCostModel(config.target, config.costModel, config.hardware));
    return std::unique_ptr<HloPass>(
        std::make_unique<MultiOutputFusionPass>(std::move(config), std::move(model)));
}

namespace {

// The box of `operand` that `reader` reads, per dimension [begin, end): the union of the
// slices it takes when it reads the operand only through slices (inside a fusion: through the
// parameter the operand binds), else the whole operand.
std::vector<std::pair<int64_t, int64_t>> readBox(const HloInstruction& reader, const HloInstruction& operand) {
    const std::vector<int64_t>& dims = operand.shape().dimensions();
    std::vector<std::pair<int64_t, int64_t>> whole;
    for (int64_t d : dims) whole.emplace_back(0, d);
    std::vector<const HloInstruction*> uses;
    if (reader.opcode() == HloOpcode::kFusion && reader.fusedComputation()) {
        for (int64_t k = 0; k < reader.operandCount(); ++k)
            if (reader.operand(k) == &operand) {
                const HloInstruction* parameter = reader.fusedComputation()->parameter(k);
                if (!parameter) return whole;
                uses.insert(uses.end(), parameter->users().begin(), parameter->users().end());
            }
    } else {
        uses.push_back(&reader);
    }
    std::vector<std::pair<int64_t, int64_t>> box;
    for (const HloInstruction* use : uses) {
        if (use->opcode() != HloOpcode::kSlice) return whole;
        const std::vector<SliceDimension>& slice = use->slice();
        if (slice.size() != dims.size()) return whole;
        if (box.empty()) {
            for (const SliceDimension& d : slice) box.emplace_back(d.start, d.limit);
            continue;
        }
        for (size_t d = 0; d < dims.size(); ++d) {
            box[d].first = std::min(box[d].first, slice[d].start);
            box[d].second = std::max(box[d].second, slice[d].limit);
        }
    }
    return box.empty() ? whole : box;
}

bool boxesOverlap(const std::vector<std::pair<int64_t, int64_t>>& a, const std::vector<std::pair<int64_t, int64_t>>& b) {
    for (size_t d = 0; d < a.size() && d < b.size(); ++d)
        if (a[d].second <= b[d].first || b[d].second <= a[d].first) return false;
    return true;
}

// Whether `instruction` (or what it fuses) moves data between layouts: a transpose that is not
// a relabelling of dimensions of size one.
bool physicallyTransposes(const HloInstruction& instruction) {
    if (instruction.opcode() != HloOpcode::kFusion || !instruction.fusedComputation())
        return fusion::movesBetweenLayouts(instruction);
    for (const auto& x : instruction.fusedComputation()->instructions())
        if (fusion::movesBetweenLayouts(*x)) return true;
    return false;
}

}  // namespace

void MultiOutputFusionPass::fuseSiblings(HloComputation& computation, FusionBuilder& builder,
                                         Reachability& reach, int64_t& step) {
    auto pairForced = [&](const HloInstruction& a, const HloInstruction& b) {
        return m_config.forced(a, b) || m_config.forced(b, a);
    };
    auto pairForbidden = [&](const HloInstruction& a, const HloInstruction& b) {
        return m_config.forbidden(a, b) || m_config.forbidden(b, a);
    };
    // The GPU and the CPU share any operand that is not a scalar (XLA's profitable operand);
    // the TPU only one of at least kMinSharedOperandBytes.
    const bool gpu = m_config.target == "gpu";
    const bool anyArray = gpu || m_config.target == "cpu";
    const std::vector<HloInstruction*> order = fusion::postOrderOf(computation);
    for (HloInstruction* shared : order) {
        if (builder.removed(shared) || !shared->shape().isArray() || shared->userCount() < 2)
            continue;
        std::vector<HloInstruction*> users;
        std::unordered_set<const HloInstruction*> seen;
        for (HloInstruction* user : shared->users())
            if (seen.insert(user).second &&
                fusion::multiOutputCandidate(*user, nullptr, gpu))
                users.push_back(user);
        if (users.size() < 2) continue;
        const double bytes = CostAnalysis::byteSize(shared->shape());
        HloInstruction* group = users[0];
        for (size_t i = 1; i < users.size(); ++i) {
            HloInstruction* other = users[i];
            PassDecision decision;
            decision.step = ++step;
            decision.producer = group->name();
            decision.consumer = other->name();
            const std::string a = "%" + group->name(), b = "%" + other->name();
            std::string detail;
            std::optional<FusionReason> reason;
            if (pairForbidden(*group, *other)) {
                reason = FusionReason::kForbiddenByUser;
                detail = "forbid= names " + a + ":" + b;
            } else if (!fusion::multiOutputCompatible(*group, *other, m_config, &detail)) {
                reason = FusionReason::kNotSiblings;
            } else if (!boxesOverlap(readBox(*group, *shared), readBox(*other, *shared))) {
                reason = FusionReason::kNoPredictedGain;
                detail = a + " and " + b + " read disjoint parts of %" + shared->name() +
                         ": nothing would be read once for both";
            } else if (reach.reaches(group, other, false) || reach.reaches(other, group, false)) {
                reason = FusionReason::kMultiOutputCycle;
                detail = "one of " + a + " and " + b +
                         " depends on the other: fusing them would create a cycle";
            } else if (auto limit = fusion::checkLimits({group, other}, m_config, &detail)) {
                reason = limit;
            } else if (!pairForced(*group, *other) && !m_config.disableCostModel &&
                       (anyArray ? shared->shape().elementCount() <= 1
                                 : bytes < kMinSharedOperandBytes)) {
                reason = FusionReason::kNoPredictedGain;
                detail = "the shared operand %" + shared->name() + " is only " +
                         fusion::describeBytes(shared->shape()) + ": reading it once saves little";
            }
            if (reason) {
                decision.reason = std::string(fusionReasonCode(*reason));
                decision.explanation = detail;
                recordDecision(std::move(decision));
                continue;
            }
            decision.applied = true;
            decision.reason = std::string(fusionReasonCode(
                pairForced(*group, *other) ? FusionReason::kForcedByUser : FusionReason::kFused));
            decision.explanation = "siblings " + a + " and " + b + " read %" + shared->name() +
                                   " " + fusion::describeBytes(shared->shape()) +
                                   " once instead of twice";
            recordDecision(std::move(decision));
            const auto plan = reach.planMerge(group, other);
            HloInstruction* fused = builder.fuseMultiOutput(group, other);
            recordRewrite("multi-output-sibling", other, fused);
            reach.applyMerge(plan, fused);
            group = fused;
        }
    }
}

void MultiOutputFusionPass::fuseIntoConsumers(HloComputation& computation, FusionBuilder& builder,
                                              Reachability& reach, int64_t& step) {
    for (HloInstruction* producer : fusion::postOrderOf(computation)) {
        if (builder.removed(producer) || producer->shape().isTuple() ||
            fusion::distinctUseCount(*producer) < 2 ||
            !fusion::multiOutputCandidate(*producer, nullptr))
            continue;
        std::vector<HloInstruction*> users;
        std::unordered_set<const HloInstruction*> seen;
        for (HloInstruction* user : producer->users())
            if (seen.insert(user).second) users.push_back(user);
        for (HloInstruction* consumer : users) {
            if (consumer->opcode() != HloOpcode::kReduce &&
                !(consumer->opcode() == HloOpcode::kFusion && consumer->fusionKind() == "kInput"))
                continue;  // only reductions are worth a second output
            if (!fusion::multiOutputCandidate(*consumer, nullptr)) continue;
            PassDecision decision;
            decision.step = ++step;
            decision.producer = producer->name();
            decision.consumer = consumer->name();
            const std::string p = "%" + producer->name(), c = "%" + consumer->name();
            std::string detail;
            std::optional<FusionReason> reason =
                fusion::checkPair(*producer, *consumer, m_config, &detail, true);
            if (!reason && physicallyTransposes(*producer)) {
                reason = FusionReason::kConsumerIsNotFusible;
                detail = p + " transposes data between layouts: the reduction " + c +
                         " would read it in the transposed order, not in the order it reduces";
            }
            FusionTimes times;
            if (!reason && reach.reaches(producer, consumer, true)) {
                reason = FusionReason::kMultiOutputCycle;
                detail = c + " also reaches " + p +
                         " through an instruction that stays outside: fusing would create a cycle";
            }
            if (!reason) {
                times = m_model->estimate(*producer, *consumer);
                decision.predictedUnfusedSeconds = times.unfusedSeconds;
                decision.predictedAppliedSeconds = times.fusedSeconds;
                if (!m_config.forced(*producer, *consumer) && !m_config.disableCostModel &&
                    times.fusedSeconds >= times.unfusedSeconds) {
                    reason = FusionReason::kNoPredictedGain;
                    detail = "exposing " + p + " from " + c + " gains nothing: predicted " +
                             fusion::formatSeconds(times.fusedSeconds) + " fused vs " +
                             fusion::formatSeconds(times.unfusedSeconds) + " unfused";
                }
            }
            if (reason) {
                decision.reason = std::string(fusionReasonCode(*reason));
                decision.explanation = detail;
                recordDecision(std::move(decision));
                continue;
            }
            decision.applied = true;
            decision.reason = std::string(fusionReasonCode(
                m_config.forced(*producer, *consumer) ? FusionReason::kForcedByUser
                                                      : FusionReason::kFused));
            decision.explanation = "fusing " + p + " into " + c + " and exposing both outputs saves re-reading " +
                                   fusion::describeBytes(producer->shape());
            recordDecision(std::move(decision));
            const auto plan = reach.planMerge(producer, consumer);
            HloInstruction* fused = builder.fuseMultiOutput(producer, consumer);
            recordRewrite("multi-output-producer", producer, fused);
            reach.applyMerge(plan, fused);
            break;
        }
    }
}

StatusOr<bool> MultiOutputFusionPass::run(HloModule& module) {
    if (module.entryComputation() == nullptr)
        return failedPrecondition("module " + module.name() + " has no entry computation");
    FusionBuilder builder(module);
    int64_t step = 0;
    for (HloComputation* computation : fusion::fusibleComputations(module)) {
        Reachability reach(*computation);
        fuseSiblings(*computation, builder, reach, step);
        fuseIntoConsumers(*computation, builder, reach, step);
    }
    const bool changed = builder.changed();
    HLO_RETURN_IF_ERROR(builder.finish());
    return changed;
}


}  // namespace hloscope
