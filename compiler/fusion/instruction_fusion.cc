#include "compiler/fusion/instruction_fusion.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/fusion/duplication_rule.h"
#include "compiler/fusion/fusion_builder.h"
#include "compiler/fusion/fusion_format.h"
#include "compiler/fusion/fusion_legality.h"
#include "core/ir/primitive_type.h"

namespace hloscope {

using fusion::FusionBuilder;
using fusion::FusionConfig;

namespace {

// Gains below a nanosecond (a scalar constant moved into a kernel) are noise:
// fusing for them only multiplies kernels' bodies.
constexpr double kMinGainSeconds = 1e-9;

struct ConsumerPlan {
    HloInstruction* consumer = nullptr;
    std::optional<FusionReason> illegal;
    std::string detail;
    FusionTimes times;
    bool forced = false;
};

struct ProducerPlan {
    std::vector<const ConsumerPlan*> consumers;
    int64_t legal = 0;
    bool allConsumersLegal = false;  // every consumer but bitcasts, and not the root
    bool goesAway = false;           // all legal and no bitcast reads it: fused, it is gone
    double gain = 0;
};

bool isCandidate(const HloInstruction& instruction) {
    switch (instruction.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kAfterAll: return false;
    default: return !instruction.users().empty();
    }
}

struct CachedPair {
    int64_t uses = -1;
    ConsumerPlan plan;
};

class PriorityFusion {
public:
    PriorityFusion(const FusionConfig& config, const FusionCostModel& model, FusionBuilder& builder,
                   std::function<void(PassDecision)> record,
                   std::function<void(const HloInstruction*, const HloInstruction*)> rewrite)
        : m_config(config), m_model(model), m_builder(builder), m_record(std::move(record)),
          m_rewrite(std::move(rewrite)) {}

    void run(HloComputation& computation) {
        // XLA's CPU instruction fusion does not duplicate a producer that cannot fuse along
        // every path to its consumers (fusion/duplication_rule.h).
        m_doNotDuplicate.clear();
        if (m_config.target == "cpu") m_doNotDuplicate = fusion::doNotDuplicate(computation, m_config);
        for (HloInstruction* instruction : fusion::postOrderOf(computation)) push(instruction);
        while (!m_queue.empty()) {
            const Entry top = m_queue.top();
            m_queue.pop();
            if (m_builder.removed(top.instruction) || state(top.instruction).version != top.version)
                continue;
            if (state(top.instruction).dirty) {
                state(top.instruction).dirty = false;
                // A neighbour changed since this entry was keyed: re-key it,
                // and process it now only if it is still the best.
                const double key = keyOf(evaluate(top.instruction));
                State& s = state(top.instruction);
                const uint64_t version = ++s.version;
                s.key = key;
                m_queue.push({key, top.sequence, top.instruction, version});
                continue;
            }
            process(top.instruction);
        }
    }

private:
    struct Entry {
        double gain;
        int64_t sequence;
        HloInstruction* instruction;
        uint64_t version;
        bool operator<(const Entry& other) const {
            if (gain != other.gain) return gain < other.gain;
            return sequence > other.sequence;  // earlier first among equals
        }
    };

    struct State {
        uint64_t version = 0;
        int64_t sequence = -1;  // -1: never pushed
        double key = 0;
        bool dirty = false;
        bool tooManyConsumers = false;
        // Verdicts by consumer (the producer has at most kMaxConsumers).
        std::vector<std::pair<const HloInstruction*, CachedPair>> pairs;
        // Last reason logged by consumer.
        std::vector<std::pair<const HloInstruction*, std::string_view>> logged;
    };

    State& state(const HloInstruction* instruction) { return m_states[instruction]; }

    // Drops the entries of consumers fused away since (when there are many).
    template <typename Entries>
    void prune(Entries& entries, size_t live) {
        if (entries.size() <= 2 * live + 8) return;
        std::erase_if(entries, [&](const auto& entry) { return m_builder.removed(entry.first); });
    }

    ProducerPlan evaluate(HloInstruction* producer) {
        ProducerPlan plan;
        // users() holds each user once.
        const std::vector<HloInstruction*>& users = producer->users();
        State& s = state(producer);
        prune(s.pairs, users.size());
        // No reallocation below: the plan points into s.pairs.
        s.pairs.reserve(s.pairs.size() + users.size());
        const int64_t uses = static_cast<int64_t>(users.size()) + (producer->isRoot() ? 1 : 0);
        double tp = 0;
        double sum = 0;
        plan.consumers.reserve(users.size());
        int64_t bitcasts = 0;
        for (HloInstruction* consumer : users) {
            // A bitcast that keeps the element width reads the producer's buffer as it is: as in
            // XLA, it neither takes the producer nor keeps it from fusing into the others.
            if (consumer->opcode() == HloOpcode::kBitcast && consumer->shape().isArray() &&
                producer->shape().isArray() &&
                primitive_util::bitWidth(consumer->shape().elementType()) ==
                    primitive_util::bitWidth(producer->shape().elementType())) {
                ++bitcasts;
                continue;
            }
            // Instructions are never changed in place during the pass (fusion
            // makes new ones), so a pair's verdict only depends on how many
            // users the producer has: cache it.
            auto found = std::find_if(s.pairs.begin(), s.pairs.end(),
                                      [&](const auto& entry) { return entry.first == consumer; });
            if (found == s.pairs.end()) {
                s.pairs.emplace_back(consumer, CachedPair{});
                found = s.pairs.end() - 1;
            }
            CachedPair& cached = found->second;
            if (cached.uses != uses) {
                cached.uses = uses;
                ConsumerPlan& item = cached.plan;
                item = ConsumerPlan{};
                item.consumer = consumer;
                item.illegal =
                    fusion::checkPair(*producer, *consumer, m_config, &item.detail, false, uses);
                if (!item.illegal && uses > 1)
                    if (auto rule = m_doNotDuplicate.find(producer); rule != m_doNotDuplicate.end()) {
                        item.illegal = FusionReason::kNotAllConsumers;
                        item.detail = rule->second;
                    }
                item.forced = m_config.forced(*producer, *consumer);
                if (!item.illegal) item.times = m_model.estimate(*producer, *consumer, m_costs);
            }
            const ConsumerPlan& item = cached.plan;
            if (!item.illegal) {
                tp = item.times.producerSeconds;
                sum += item.times.unfusedSeconds - item.times.fusedSeconds;
                ++plan.legal;
            }
            plan.consumers.push_back(&item);
        }
        plan.allConsumersLegal = plan.legal == static_cast<int64_t>(plan.consumers.size()) &&
                                 !producer->isRoot() && plan.legal > 0;
        plan.goesAway = plan.allConsumersLegal && bitcasts == 0;
        // Each pair's unfused time counts the producer once; it is saved once when the
        // producer goes away. A producer kept only for bitcasts counts as gone, as XLA's
        // priority fusion counts it (the bitcasts are views, left out of the estimate).
        plan.gain = sum - static_cast<double>(plan.allConsumersLegal ? plan.legal - 1 : plan.legal) * tp;
        // All or none, as XLA fuses: a producer that cannot go into every consumer (or is
        // the root, an output) stays a kernel instead of being computed twice.
        if (plan.legal == 0 || !plan.allConsumersLegal) plan.gain = -1e300;
        return plan;
    }

    // A producer with more consumers than this is not fused (it would be
    // recomputed in every one of them); the limit also keeps re-evaluation
    // linear on modules where one value feeds thousands of instructions.
    static constexpr int64_t kMaxConsumers = 64;

    double keyOf(const ProducerPlan& plan) const {
        double key = plan.gain;
        // Pairs that fuse regardless of gain go first.
        bool any = false;
        for (const ConsumerPlan* item : plan.consumers)
            any = any || (!item->illegal && (item->forced || m_config.disableCostModel));
        if (any) key = std::max(key, 1e300);
        return key;
    }

    // First evaluation: keyed now.
    void push(HloInstruction* instruction) {
        if (!isCandidate(*instruction) || m_builder.removed(instruction)) return;
        if (instruction->userCount() > kMaxConsumers) {
            logTooManyConsumers(instruction);
            return;
        }
        {
            State& s = state(instruction);
            ++s.version;
            if (s.sequence < 0) s.sequence = m_sequences++;
        }
        const double key = keyOf(evaluate(instruction));
        State& s = state(instruction);
        s.key = key;
        m_queue.push({key, s.sequence, instruction, s.version});
    }

    void logTooManyConsumers(HloInstruction* instruction) {
        State& s = state(instruction);
        if (s.tooManyConsumers) return;
        s.tooManyConsumers = true;
        const int64_t step = ++m_step;
        for (const HloInstruction* consumer : instruction->users()) {
            PassDecision decision;
            decision.step = step;
            decision.producer = instruction->name();
            decision.consumer = consumer->name();
            decision.reason = std::string(fusionReasonCode(FusionReason::kWouldDuplicateExpensiveWork));
            decision.explanation = "%" + instruction->name() + " has " +
                                   std::to_string(instruction->userCount()) + " consumers (more than " +
                                   std::to_string(kMaxConsumers) +
                                   "); fusing it would recompute it in every one";
            m_record(std::move(decision));
        }
    }

    // A neighbour changed: re-keyed lazily when its entry (with the old key)
    // is popped; at most one pending entry per instruction, so a producer with
    // many consumers is not re-evaluated after every fusion of one of them.
    void markDirty(HloInstruction* instruction) {
        if (!isCandidate(*instruction) || m_builder.removed(instruction)) return;
        State& s = state(instruction);
        if (s.sequence < 0 || instruction->userCount() > kMaxConsumers) {
            push(instruction);
            return;
        }
        if (s.dirty) return;
        s.dirty = true;
        const uint64_t version = ++s.version;
        m_queue.push({s.key, s.sequence, instruction, version});
    }

    // Whether a decision with this verdict is logged: a pair re-evaluated
    // with the same verdict (not applied) is logged once.
    bool shouldLog(const HloInstruction* producer, const HloInstruction* consumer, bool applied,
                   std::string_view reason) {
        auto& logged = state(producer).logged;
        auto found = std::find_if(logged.begin(), logged.end(),
                                  [&](const auto& entry) { return entry.first == consumer; });
        if (found == logged.end()) {
            prune(logged, static_cast<size_t>(producer->userCount()));
            logged.emplace_back(consumer, std::string_view());
            found = logged.end() - 1;
        }
        if (!applied && found->second == reason) return false;
        found->second = reason;
        return true;
    }

    void process(HloInstruction* producer) {
        const ProducerPlan plan = evaluate(producer);
        const int64_t step = ++m_step;
        const bool gain = plan.gain > kMinGainSeconds;
        std::vector<HloInstruction*> chosen;
        // Why the producer cannot go into every consumer (for the legal ones' log).
        std::string notAll;
        if (!plan.allConsumersLegal) {
            if (producer->isRoot())
                notAll = "%" + producer->name() + " is the computation's root (an output): it stays a kernel";
            for (const ConsumerPlan* entry : plan.consumers)
                if (entry->illegal && notAll.empty())
                    notAll = "%" + producer->name() + " cannot fuse into %" + entry->consumer->name() + " (" +
                             std::string(fusionReasonCode(*entry->illegal)) +
                             "); fused into some consumers only it would be computed twice, so it fuses "
                             "into none";
        }
        for (const ConsumerPlan* entry : plan.consumers) {
            const ConsumerPlan& item = *entry;
            const bool fuse =
                !item.illegal && (item.forced || (plan.allConsumersLegal && (m_config.disableCostModel || gain)));
            const FusionReason reason = item.illegal                              ? *item.illegal
                                        : !fuse && !plan.allConsumersLegal ? FusionReason::kNotAllConsumers
                                        : !fuse                                   ? FusionReason::kNoPredictedGain
                                        : item.forced                             ? FusionReason::kForcedByUser
                                                                                  : FusionReason::kFused;
            if (fuse) chosen.push_back(item.consumer);
            if (!shouldLog(producer, item.consumer, fuse, fusionReasonCode(reason))) continue;
            PassDecision decision;
            decision.step = step;
            decision.producer = producer->name();
            decision.consumer = item.consumer->name();
            decision.reason = std::string(fusionReasonCode(reason));
            const std::string p = "%" + producer->name();
            const std::string c = "%" + item.consumer->name();
            if (item.illegal) {
                decision.explanation = item.detail;
                if (item.forced && *item.illegal != FusionReason::kForbiddenByUser)
                    decision.explanation = "force= names " + p + ":" + c + " but " + item.detail;
                m_record(std::move(decision));
                continue;
            }
            if (reason == FusionReason::kNotAllConsumers) {
                decision.explanation = notAll;
                m_record(std::move(decision));
                continue;
            }
            decision.predictedUnfusedSeconds = item.times.unfusedSeconds;
            decision.predictedAppliedSeconds = item.times.fusedSeconds;
            const std::string times = "predicted " + fusion::formatSeconds(item.times.fusedSeconds) +
                                      " fused vs " +
                                      fusion::formatSeconds(item.times.unfusedSeconds) + " unfused";
            if (!fuse) {
                decision.explanation = "fusing " + p + " into " + c + " gains nothing: " + times +
                                       " (total over its consumers: " +
                                       fusion::formatSeconds(-plan.gain) + " slower)";
            } else {
                decision.applied = true;
                const std::string saves = "fusing " + p + " into " + c +
                                          " saves writing and re-reading " +
                                          fusion::describeBytes(producer->shape());
                if (item.forced)
                    decision.explanation = "force= names " + p + ":" + c + "; " + saves;
                else
                    decision.explanation =
                        saves + (m_config.disableCostModel ? " (cost model disabled)" : "; " + times);
            }
            m_record(std::move(decision));
        }
        if (chosen.empty()) return;
        const bool producerGoesAway =
            static_cast<int64_t>(chosen.size()) == static_cast<int64_t>(plan.consumers.size()) && plan.goesAway;
        std::vector<HloInstruction*> created;
        for (size_t i = 0; i < chosen.size(); ++i) {
            HloInstruction* consumer = chosen[i];
            const bool last = i + 1 == chosen.size();
            m_rewrite(consumer, nullptr);
            HloInstruction* fused = m_builder.fuse(producer, consumer, producerGoesAway && last);
            m_rewrite(nullptr, fused);
            created.push_back(fused);
        }
        for (HloInstruction* fused : created) {
            push(fused);
            for (HloInstruction* operand : fused->operands()) markDirty(operand);
        }
        if (!m_builder.removed(producer)) markDirty(producer);
    }

public:
    // Before the priority loop, where the target fuses into in-place updates: each
    // dynamic-update-slice, from the computation's end back, takes the producers that feed
    // only it, nearest first, as XLA's instruction fusion visits consumers from the root down
    // (the update claims its operands' chains before they fuse elsewhere, and the in-place
    // rules see the slices that read its buffer: fusion/in_place_fusion.h).
    void fuseIntoInPlaceUpdates(HloComputation& computation) {
        const std::vector<HloInstruction*> order = fusion::postOrderOf(computation);
        std::unordered_map<const HloInstruction*, size_t> position;
        for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
        const auto placeOf = [&](const HloInstruction* x) {
            auto found = position.find(x);
            return found == position.end() ? size_t{0} : found->second;
        };
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            HloInstruction* consumer = *it;
            if (m_builder.removed(consumer) || consumer->opcode() != HloOpcode::kDynamicUpdateSlice) continue;
            for (bool progress = true; progress;) {
                progress = false;
                std::vector<HloInstruction*> operands;
                for (HloInstruction* operand : consumer->operands())
                    if (std::find(operands.begin(), operands.end(), operand) == operands.end())
                        operands.push_back(operand);
                std::stable_sort(operands.begin(), operands.end(), [&](const HloInstruction* a, const HloInstruction* b) {
                    return placeOf(a) > placeOf(b);
                });
                for (HloInstruction* producer : operands) {
                    // Only what feeds this update alone (shared producers are the priority
                    // loop's, over all their consumers); scalar constants come at the end.
                    if (producer->userCount() != 1 || producer->isRoot() || fusion::isScalarConstant(*producer) ||
                        producer->opcode() == HloOpcode::kParameter)
                        continue;
                    std::string detail;
                    const std::optional<FusionReason> illegal =
                        fusion::checkPair(*producer, *consumer, m_config, &detail, false, 1);
                    const FusionReason reason = illegal ? *illegal : FusionReason::kFused;
                    if (shouldLog(producer, consumer, !illegal, fusionReasonCode(reason))) {
                        PassDecision decision;
                        decision.step = ++m_step;
                        decision.producer = producer->name();
                        decision.consumer = consumer->name();
                        decision.reason = std::string(fusionReasonCode(reason));
                        decision.applied = !illegal;
                        decision.explanation =
                            illegal ? detail
                                    : "%" + producer->name() + " feeds only the in-place update %" + consumer->name() +
                                          ", which takes it into its kernel: saves writing and re-reading " +
                                          fusion::describeBytes(producer->shape());
                        m_record(std::move(decision));
                    }
                    if (illegal) continue;
                    m_rewrite(consumer, nullptr);
                    consumer = m_builder.fuse(producer, consumer, true);
                    m_rewrite(nullptr, consumer);
                    progress = true;
                    break;
                }
            }
        }
    }

    // After the priority loop: every scalar constant goes into each of its users that can
    // take it (as XLA's priority fusion ends), on the GPU and the TPU a user that is no fusion
    // becoming one; the constant goes away when every user took it.
    void sinkScalarConstants(HloComputation& computation) {
        std::vector<HloInstruction*> constants;
        for (const auto& instruction : computation.instructions())
            if (fusion::isScalarConstant(*instruction) && !m_builder.removed(instruction.get()) &&
                !instruction->users().empty() && !instruction->isRoot())
                constants.push_back(instruction.get());
        for (HloInstruction* constant : constants) {
            const std::vector<HloInstruction*> users = constant->users();
            std::vector<HloInstruction*> legal;
            for (HloInstruction* user : users) {
                if (m_builder.removed(user)) continue;
                // XLA's CPU fusion makes no kernel of a constant and one other instruction: the
                // constant goes only into users that are fusions already.
                if (m_config.target == "cpu" && user->opcode() != HloOpcode::kFusion) continue;
                std::string detail;
                if (!fusion::checkPair(*constant, *user, m_config, &detail, false, 1)) legal.push_back(user);
            }
            if (legal.empty()) continue;
            const int64_t step = ++m_step;
            for (size_t i = 0; i < legal.size(); ++i) {
                HloInstruction* user = legal[i];
                PassDecision decision;
                decision.step = step;
                decision.applied = true;
                decision.producer = constant->name();
                decision.consumer = user->name();
                decision.reason = std::string(fusionReasonCode(FusionReason::kFused));
                decision.explanation = "the scalar constant %" + constant->name() + " is folded into %" +
                                       user->name() +
                                       " (after the priority loop every scalar constant goes into the users "
                                       "that can take it)";
                m_record(std::move(decision));
                m_rewrite(user, nullptr);
                HloInstruction* fused =
                    m_builder.fuse(constant, user, legal.size() == users.size() && i + 1 == legal.size());
                m_rewrite(nullptr, fused);
            }
        }
    }

private:
    const FusionConfig& m_config;
    const FusionCostModel& m_model;
    FusionBuilder& m_builder;
    std::function<void(PassDecision)> m_record;
    std::function<void(const HloInstruction*, const HloInstruction*)> m_rewrite;
    std::priority_queue<Entry> m_queue;
    fusion::InstructionMap<State> m_states;
    std::unordered_map<const HloInstruction*, std::string> m_doNotDuplicate;
    int64_t m_sequences = 0;
    KernelSummaryCache m_costs;
    int64_t m_step = 0;
};

}  // namespace

std::string_view FusionPass::description() {
    return "Producer-consumer fusion driven by the performance model, as XLA's priority fusion: "
           "producers are fused into their consumers in order of predicted gain, creating kLoop "
           "(elementwise and data movement), kInput (reduce roots) and kOutput (dot/convolution "
           "with elementwise epilogue) fusions; every pair considered is logged with a reason. "
           "Options: target=cpu|gpu|tpu, hardware=NAME|file.json, max_operands, max_fused_instructions, "
           "cost_model=performance|bytes, disable_cost_model, force=p:c;..., forbid=p:c;...";
}

StatusOr<std::unique_ptr<HloPass>> FusionPass::create(const PassOptions& options) {
    HLO_ASSIGN_OR_RETURN(FusionConfig config, fusion::parseFusionConfig(options));
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<FusionCostModel> model,
                         makeFusionCostModel(config.target, config.costModel, config.hardware));
    return std::unique_ptr<HloPass>(std::make_unique<FusionPass>(std::move(config), std::move(model)));
}

StatusOr<bool> FusionPass::run(HloModule& module) {
    if (module.entryComputation() == nullptr)
        return failedPrecondition("module " + module.name() + " has no entry computation");
    FusionBuilder builder(module);
    const HloInstruction* pendingBefore = nullptr;
    PriorityFusion fusion(
        m_config, *m_model, builder, [this](PassDecision d) { recordDecision(std::move(d)); },
        [&](const HloInstruction* before, const HloInstruction* after) {
            if (before) {
                pendingBefore = before;
                return;
            }
            recordRewrite("fuse", pendingBefore, after);
        });
    for (HloComputation* computation : fusion::fusibleComputations(module)) {
        if (m_config.fusesIntoInPlaceUpdates()) fusion.fuseIntoInPlaceUpdates(*computation);
        fusion.run(*computation);
        fusion.sinkScalarConstants(*computation);
    }
    const bool changed = builder.changed();
    HLO_RETURN_IF_ERROR(builder.finish());
    return changed;
}

}  // namespace hloscope
