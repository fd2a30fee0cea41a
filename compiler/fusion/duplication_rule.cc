#include "compiler/fusion/duplication_rule.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "compiler/cost/cost_analysis.h"
#include "compiler/fusion/fusion_builder.h"
#include "compiler/fusion/fusion_legality.h"

namespace hloscope::fusion {

namespace {

// Instructions a producer may reach before the search gives up on it.
constexpr size_t kMaxReach = 512;

// At most one operand that is a real input: broadcasts, iotas, scalar constants and operands
// of lower rank than the output do not count (XLA's "effectively at most unary").
bool effectivelyAtMostUnary(const HloInstruction& instruction) {
    int64_t outputRank = 0;
    if (instruction.shape().isArray()) outputRank = instruction.shape().rank();
    int64_t inputs = 0;
    for (const HloInstruction* operand : instruction.operands()) {
        const HloOpcode opcode = operand->opcode();
        if (opcode == HloOpcode::kBroadcast || opcode == HloOpcode::kIota) continue;
        if (isScalarConstant(*operand)) continue;
        int64_t trueRank = 0;
        if (operand->shape().isArray())
            for (int64_t d : operand->shape().dimensions()) trueRank += d > 1 ? 1 : 0;
        if (trueRank >= outputRank) ++inputs;
    }
    return inputs <= 1;
}

class Rule {
public:
    Rule(const HloComputation& computation, const FusionConfig& config)
        : m_computation(computation), m_config(config) {}

    std::unordered_map<const HloInstruction*, std::string> run() {
        const std::vector<HloInstruction*> order = postOrderOf(m_computation);
        for (size_t i = 0; i < order.size(); ++i) m_position[order[i]] = static_cast<int64_t>(i);
        for (const HloInstruction* consumer : order)
            for (const HloInstruction* producer : consumer->operands()) consider(*producer);
        return std::move(m_result);
    }

private:
    void consider(const HloInstruction& producer) {
        if (!m_considered.insert(&producer).second) return;
        if (distinctUseCount(producer) < 2 || !producer.shape().isArray()) return;  // no duplicate
        if (producer.opcode() == HloOpcode::kParameter || effectivelyAtMostUnary(producer)) return;
        double inputBytes = 0;
        std::unordered_set<const HloInstruction*> unique;
        for (const HloInstruction* operand : producer.operands())
            if (unique.insert(operand).second) inputBytes += CostAnalysis::byteSize(operand->shape());
        if (inputBytes <= CostAnalysis::byteSize(producer.shape())) return;
        if (!reach(producer)) return;
        m_memo.clear();
        m_blocker.clear();
        for (const HloInstruction* user : producer.users())
            if (!fusesOnAllPaths(producer, *user)) {
                m_result.emplace(&producer,
                                 "%" + producer.name() + " reads more than it writes and has " +
                                     std::to_string(distinctUseCount(producer)) +
                                     " uses, but cannot fuse along every path to %" + user->name() +
                                     " (" + m_blocker +
                                     "): a copy would stay a kernel of its own and read its inputs "
                                     "again, so XLA does not duplicate it");
                return;
            }
    }

    // The instructions `producer` reaches before its last user (m_reached); false when there are
    // too many to follow.
    bool reach(const HloInstruction& producer) {
        m_reached.clear();
        int64_t last = 0;
        for (const HloInstruction* user : producer.users()) last = std::max(last, m_position[user]);
        std::vector<const HloInstruction*> stack{&producer};
        while (!stack.empty()) {
            const HloInstruction* x = stack.back();
            stack.pop_back();
            for (const HloInstruction* user : x->users()) {
                if (m_position[user] > last || !m_reached.insert(user).second) continue;
                if (m_reached.size() > kMaxReach) return false;
                stack.push_back(user);
            }
        }
        return true;
    }

    bool fusesOnAllPaths(const HloInstruction& producer, const HloInstruction& consumer) {
        if (&consumer == &producer) return true;
        if (auto it = m_memo.find(&consumer); it != m_memo.end()) return it->second;
        bool ok = true;
        if (!isFusible(consumer)) {
            m_blocker = "%" + consumer.name() + " does not fuse";
            ok = false;
        }
        for (int64_t i = 0; ok && i < consumer.operandCount(); ++i) {
            const HloInstruction* operand = consumer.operand(i);
            if (operand != &producer && !m_reached.count(operand)) continue;  // not on a path
            if (operand != &producer && m_result.count(operand)) {
                m_blocker = "%" + operand->name() + " is not duplicated into %" + consumer.name();
                ok = false;
            } else if (auto reason = checkPair(*operand, consumer, m_config, nullptr)) {
                m_blocker = "%" + operand->name() + " cannot fuse into %" + consumer.name();
                ok = false;
            } else {
                ok = fusesOnAllPaths(producer, *operand);
            }
        }
        m_memo[&consumer] = ok;
        return ok;
    }

    const HloComputation& m_computation;
    const FusionConfig& m_config;
    std::unordered_map<const HloInstruction*, int64_t> m_position;
    std::unordered_set<const HloInstruction*> m_considered;
    std::unordered_set<const HloInstruction*> m_reached;
    std::unordered_map<const HloInstruction*, bool> m_memo;
    std::string m_blocker;
    std::unordered_map<const HloInstruction*, std::string> m_result;
};

}  // namespace

std::unordered_map<const HloInstruction*, std::string> doNotDuplicate(
    const HloComputation& computation, const FusionConfig& config) {
    return Rule(computation, config).run();
}

}  // namespace hloscope::fusion
