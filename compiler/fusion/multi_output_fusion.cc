#include "compiler/fusion/multi_output_fusion.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/cost/cost_analysis.h"

namespace hloscope {

using fusion::FusionBuilder;
using fusion::FusionConfig;

namespace {

constexpr double kMinSharedOperandBytes = 1024;

class Reachability {
public:
    explicit Reachability(HloComputation& computation) : m_computation(computation) {}
    void invalidate() { m_valid = false; }

    // Whether `to` depends on `from` through operands or control edges,
    // not counting a direct operand edge from `from` when `skipDirect`.
    bool reaches(const HloInstruction* from, const HloInstruction* to, bool skipDirect) {
        if (!m_valid) {
            m_index.clear();
            int64_t i = 0;
            for (const HloInstruction* instruction : m_computation.postOrder()) m_index[instruction] = i++;
            m_valid = true;
        }
        const int64_t limit = m_index[from];
        std::unordered_set<const HloInstruction*> seen;
        std::vector<const HloInstruction*> stack;
        auto visit = [&](const HloInstruction* x) {
            if (x == from) return true;
            if (m_index[x] > limit && seen.insert(x).second) stack.push_back(x);
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

private:
    HloComputation& m_computation;
    std::unordered_map<const HloInstruction*, int64_t> m_index;
    bool m_valid = false;
};

}  // namespace

std::string_view MultiOutputFusionPass::description() {
    return "Multi-output fusion: siblings reading the same large operand (two reductions of one "
           "input) become one fusion with a tuple root, and a producer also needed outside is "
           "fused into its reduction/loop consumer exposing both outputs; never creates cycles. "
           "Options as fusion.";
}

StatusOr<std::unique_ptr<HloPass>> MultiOutputFusionPass::create(const PassOptions& options) {
    HLO_ASSIGN_OR_RETURN(FusionConfig config, fusion::parseFusionConfig(options));
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<FusionCostModel> model,
                         makeFusionCostModel(config.target, config.costModel));
    return std::unique_ptr<HloPass>(
        std::make_unique<MultiOutputFusionPass>(std::move(config), std::move(model)));
}

StatusOr<bool> MultiOutputFusionPass::run(HloModule& module) {
    if (module.entryComputation() == nullptr)
        return failedPrecondition("module " + module.name() + " has no entry computation");
    FusionBuilder builder(module);
    int64_t step = 0;
    auto pairForced = [&](const HloInstruction& a, const HloInstruction& b) {
        return m_config.forced(a, b) || m_config.forced(b, a);
    };
    auto pairForbidden = [&](const HloInstruction& a, const HloInstruction& b) {
        return m_config.forbidden(a, b) || m_config.forbidden(b, a);
    };
    for (HloComputation* computation : fusion::fusibleComputations(module)) {
        Reachability reach(*computation);
        const std::vector<HloInstruction*> order = computation->postOrder();
        // Sibling fusion: users of one shared operand.
        for (HloInstruction* shared : order) {
            if (builder.removed(shared) || !shared->shape().isArray() || shared->userCount() < 2)
                continue;
            std::vector<HloInstruction*> users;
            std::unordered_set<const HloInstruction*> seen;
            for (HloInstruction* user : shared->users())
                if (seen.insert(user).second && fusion::multiOutputCandidate(*user, nullptr))
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
                } else if (fusion::iterationSpace(*group) != fusion::iterationSpace(*other)) {
                    reason = FusionReason::kNotSiblings;
                    detail = a + " iterates over " + fusion::iterationSpace(*group) + " but " + b +
                             " over " + fusion::iterationSpace(*other);
                } else if (reach.reaches(group, other, false) || reach.reaches(other, group, false)) {
                    reason = FusionReason::kMultiOutputCycle;
                    detail = "one of " + a + " and " + b +
                             " depends on the other: fusing them would create a cycle";
                } else if (auto limit = fusion::checkLimits({group, other}, m_config, &detail)) {
                    reason = limit;
                } else if (!pairForced(*group, *other) && !m_config.disableCostModel &&
                           bytes < kMinSharedOperandBytes) {
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
                HloInstruction* fused = builder.fuseMultiOutput(group, other);
                recordRewrite("multi-output-sibling", other, fused);
                reach.invalidate();
                group = fused;
            }
        }
        // Producer-consumer multi-output fusion.
        for (HloInstruction* producer : computation->postOrder()) {
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
                HloInstruction* fused = builder.fuseMultiOutput(producer, consumer);
                recordRewrite("multi-output-producer", producer, fused);
                reach.invalidate();
                break;
            }
        }
    }
    const bool changed = builder.changed();
    HLO_RETURN_IF_ERROR(builder.finish());
    return changed;
}

}  // namespace hloscope
