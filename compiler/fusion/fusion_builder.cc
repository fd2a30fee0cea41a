#include "compiler/fusion/fusion_builder.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <span>
#include <unordered_set>
#include <utility>

#include "compiler/fusion/fusion_legality.h"

namespace hloscope::fusion {

struct FusionBuilder::Body {
    FusionBuilder& builder;
    std::unique_ptr<HloComputation> computation;
    std::vector<HloInstruction*> outerOperands;
    std::unordered_map<const HloInstruction*, HloInstruction*> parameterFor;
    std::unordered_set<std::string> names;

    // Names stay as they were unless two merged bodies use the same one.
    // With the module's names unique, only param_N names can clash.
    std::string claim(std::string name) {
        if (builder.m_uniqueNames && !name.starts_with("param_")) return name;
        if (!names.insert(name).second) {
            name = builder.freshName(name);
            names.insert(name);
        }
        return name;
    }

    HloInstruction* parameter(HloInstruction* outer) {
        auto it = parameterFor.find(outer);
        if (it != parameterFor.end()) return it->second;
        const int64_t number = static_cast<int64_t>(outerOperands.size());
        auto instruction = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, claim("param_" + std::to_string(number)), outer->shape());
        instruction->setParameterNumber(number);
        HloInstruction* added = computation->addInstruction(std::move(instruction));
        outerOperands.push_back(outer);
        parameterFor.emplace(outer, added);
        return added;
    }

    // Creates the parameters for `x`'s operands, in operand order, with
    // `substitute` expanded into its own operands.
    void declareOperands(const HloInstruction& x, const HloInstruction* substitute) {
        for (HloInstruction* operand : x.operands()) {
            if (operand == substitute) {
                for (HloInstruction* inner : substitute->operands()) parameter(inner);
            } else {
                parameter(operand);
            }
        }
    }

    // Clones `x` (a plain instruction or a fusion's body) into the fused
    // computation; operand k of `x` is valueOf(k). Returns the clone of the root.
    HloInstruction* inlineBody(const HloInstruction& x,
                               const std::function<HloInstruction*(int64_t)>& valueOf,
                               bool keepNames) {
        auto nameFor = [&](const HloInstruction& original) {
            return claim(keepNames ? original.name() : builder.freshName(original.name() + ".clone"));
        };
        if (!isFusionOf(x)) {
            std::vector<HloInstruction*> operands;
            for (int64_t k = 0; k < x.operandCount(); ++k) operands.push_back(valueOf(k));
            auto clone = x.cloneWithNewOperands(x.shape(), operands, nameFor(x));
            clone->setMetadata(x.metadata());
            return computation->addInstruction(std::move(clone));
        }
        std::unordered_map<const HloInstruction*, HloInstruction*> mapped;
        for (HloInstruction* inner : builder.bodyOrder(*x.fusedComputation())) {
            if (inner->opcode() == HloOpcode::kParameter) {
                mapped[inner] = valueOf(inner->parameterNumber());
                continue;
            }
            std::vector<HloInstruction*> operands;
            for (HloInstruction* operand : inner->operands()) operands.push_back(mapped.at(operand));
            auto clone = inner->cloneWithNewOperands(inner->shape(), operands, nameFor(*inner));
            mapped[inner] = computation->addInstruction(std::move(clone));
        }
        return mapped.at(x.fusedComputation()->root());
    }
};

namespace {

// kInput when a root (each element of a tuple root) is a reduce or a reduce's epilogue, or a
// scatter (XLA's input-fused scatter), else kLoop.
std::string rootKind(const HloComputation& computation) {
    const HloInstruction* root = computation.root();
    std::vector<const HloInstruction*> roots{root};
    if (root->opcode() == HloOpcode::kTuple) roots.assign(root->operands().begin(), root->operands().end());
    for (const HloInstruction* r : roots)
        if (reductionUnderEpilogue(*r) || r->opcode() == HloOpcode::kScatter) return "kInput";
    return "kLoop";
}

std::string kindOf(const HloComputation& computation) {
    for (const auto& instruction : computation.instructions())
        if (isDotLike(instruction->opcode())) return "kOutput";
    return rootKind(computation);
}

// The operands of a fusion extended in place, each once, in order, with a
// lookup by instruction (a linear search up to 32 operands, an index past
// that).
class OperandList {
public:
    explicit OperandList(size_t capacity) { m_operands.reserve(capacity); }

    int64_t indexOf(const HloInstruction* x) {
        if (m_operands.size() <= 32) {
            auto it = std::find(m_operands.begin(), m_operands.end(), x);
            return it == m_operands.end() ? -1 : static_cast<int64_t>(it - m_operands.begin());
        }
        if (m_index.empty())
            for (size_t i = 0; i < m_operands.size(); ++i) m_index.emplace(m_operands[i], static_cast<int64_t>(i));
        auto it = m_index.find(x);
        return it == m_index.end() ? -1 : it->second;
    }
    void add(HloInstruction* x) {
        if (indexOf(x) >= 0) return;
        if (!m_index.empty()) m_index.emplace(x, static_cast<int64_t>(m_operands.size()));
        m_operands.push_back(x);
    }
    const std::vector<HloInstruction*>& operands() const { return m_operands; }

private:
    std::vector<HloInstruction*> m_operands;
    std::unordered_map<const HloInstruction*, int64_t> m_index;
};

// New operands: the consumer's, the producer's operands in its place.
OperandList extendedOperands(const HloInstruction& producer, const HloInstruction& consumer) {
    OperandList operands(static_cast<size_t>(consumer.operandCount() + producer.operandCount()));
    for (HloInstruction* operand : consumer.operands()) {
        if (operand == &producer) {
            for (HloInstruction* inner : producer.operands()) operands.add(inner);
        } else {
            operands.add(operand);
        }
    }
    return operands;
}

// The parameters of a body extended in place. Slot j keeps its parameter
// instruction (the uses of one whose operand moves are rewired; its shape
// follows the new operand); slots past the old count get new ones, and
// parameters past the new count are dropped.
struct ParameterPlan {
    std::vector<HloInstruction*> parameterAt;            // by new slot
    std::vector<std::unique_ptr<HloInstruction>> fresh;  // the new slots' parameters, not yet added
    // Where the uses of old parameter k go: the slot of its operand, or -1
    // for the producer's value (known once cloned).
    std::vector<int64_t> slotOf;
    std::vector<HloInstruction*> oldParameters;  // by old slot
    // The body's uses of parameters whose slot changes (taken before the
    // producer's clones become users of the reused parameters).
    std::vector<HloInstruction*> users;
};

ParameterPlan planParameters(const HloComputation& fused, const HloInstruction& producer,
                             const HloInstruction& consumer, OperandList& operands) {
    ParameterPlan plan;
    const size_t newCount = operands.operands().size();
    const size_t oldSlots = static_cast<size_t>(consumer.operandCount());
    plan.parameterAt.assign(newCount, nullptr);
    for (size_t j = 0; j < newCount; ++j) {
        if (j < oldSlots) {
            plan.parameterAt[j] = fused.parameter(static_cast<int64_t>(j));
            continue;
        }
        auto parameter = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, "param_" + std::to_string(j), operands.operands()[j]->shape());
        parameter->setParameterNumber(static_cast<int64_t>(j));
        plan.parameterAt[j] = parameter.get();
        plan.fresh.push_back(std::move(parameter));
    }
    plan.slotOf.assign(oldSlots, -1);
    for (size_t k = 0; k < oldSlots; ++k)
        if (consumer.operand(static_cast<int64_t>(k)) != &producer)
            plan.slotOf[k] = operands.indexOf(consumer.operand(static_cast<int64_t>(k)));
    plan.oldParameters.resize(oldSlots);
    for (size_t k = 0; k < oldSlots; ++k) {
        plan.oldParameters[k] = fused.parameter(static_cast<int64_t>(k));
        if (plan.slotOf[k] == static_cast<int64_t>(k)) continue;
        for (HloInstruction* user : plan.oldParameters[k]->users())
            if (std::find(plan.users.begin(), plan.users.end(), user) == plan.users.end())
                plan.users.push_back(user);
    }
    return plan;
}

// The producer's clones in a body extended in place, operands first, and
// the clone of its value.
struct ProducerClones {
    std::vector<HloInstruction*> clones;
    HloInstruction* value = nullptr;
};

// Clones the producer (the instructions of `producerBody` when it is a
// fusion) into `fused`; its operand k reads valueOfOperand(k).
ProducerClones cloneProducer(HloComputation& fused, const HloInstruction& producer,
                             const std::vector<HloInstruction*>& producerBody,
                             const auto& valueOfOperand, const auto& nameFor) {
    ProducerClones result;
    if (!isFusionOf(producer)) {
        std::vector<HloInstruction*> inner;
        for (int64_t k = 0; k < producer.operandCount(); ++k) inner.push_back(valueOfOperand(k));
        auto clone = producer.cloneWithNewOperands(producer.shape(), inner, nameFor(producer));
        clone->setMetadata(producer.metadata());
        result.value = fused.addInstruction(std::move(clone));
        result.clones.push_back(result.value);
        return result;
    }
    std::unordered_map<const HloInstruction*, HloInstruction*> mapped;
    for (HloInstruction* inner : producerBody) {
        if (inner->opcode() == HloOpcode::kParameter) {
            mapped[inner] = valueOfOperand(inner->parameterNumber());
            continue;
        }
        std::vector<HloInstruction*> innerOperands;
        for (HloInstruction* operand : inner->operands()) innerOperands.push_back(mapped.at(operand));
        auto clone = inner->cloneWithNewOperands(inner->shape(), innerOperands, nameFor(*inner));
        HloInstruction* added = fused.addInstruction(std::move(clone));
        mapped[inner] = added;
        result.clones.push_back(added);
    }
    result.value = mapped.at(producer.fusedComputation()->root());
    return result;
}

// Rewires the uses of the old parameters whose slot changed (all at once:
// one parameter's new slot may be another's old one) to the new slot's
// parameter or to `producerValue`, gives reused parameters their new
// operand's shape, drops the parameters past the new count and adds the
// new ones.
void rewireParameters(HloComputation& fused, ParameterPlan& plan,
                      const std::vector<HloInstruction*>& operands, HloInstruction* producerValue) {
    const size_t newCount = operands.size();
    const size_t oldSlots = plan.oldParameters.size();
    const int64_t oldCount = static_cast<int64_t>(oldSlots);
    auto targetOf = [&](size_t k) -> HloInstruction* {
        return plan.slotOf[k] < 0 ? producerValue : plan.parameterAt[static_cast<size_t>(plan.slotOf[k])];
    };
    auto oldSlotOf = [&](const HloInstruction* x) -> int64_t {
        if (x->opcode() != HloOpcode::kParameter || x->parent() != &fused) return -1;
        const int64_t k = x->parameterNumber();
        return k >= 0 && k < oldCount && plan.oldParameters[static_cast<size_t>(k)] == x ? k : -1;
    };
    for (HloInstruction* user : plan.users) {
        const std::vector<HloInstruction*> before = user->operands();
        for (size_t i = 0; i < before.size(); ++i) {
            const int64_t k = oldSlotOf(before[i]);
            if (k >= 0 && plan.slotOf[static_cast<size_t>(k)] != k)
                user->replaceOperand(static_cast<int64_t>(i), targetOf(static_cast<size_t>(k)));
        }
    }
    if (const int64_t k = oldSlotOf(fused.root()); k >= 0 && plan.slotOf[static_cast<size_t>(k)] != k)
        fused.setRoot(targetOf(static_cast<size_t>(k)));
    for (size_t j = 0; j < newCount && j < oldSlots; ++j)
        if (plan.slotOf[j] != static_cast<int64_t>(j)) plan.parameterAt[j]->setShape(operands[j]->shape());
    if (newCount < oldSlots) {
        // Cannot fail: these parameters have no users left and none is the root.
        [[maybe_unused]] const Status removal = fused.removeInstructions(std::span<HloInstruction* const>(
            plan.oldParameters.data() + newCount, oldSlots - newCount));
        assert(removal.isOk());
    }
    for (auto& parameter : plan.fresh) fused.addInstruction(std::move(parameter));
}

}  // namespace

void NameSet::reserve(size_t count) {
    size_t capacity = 16;
    while (capacity < 2 * count) capacity *= 2;
    if (capacity <= m_slots.size()) return;
    std::vector<std::string_view> old = std::move(m_slots);
    m_slots.assign(capacity, std::string_view());
    for (std::string_view name : old)
        if (!name.empty()) m_slots[slotOf(name)] = name;
}

size_t NameSet::slotOf(std::string_view name) const {
    const size_t mask = m_slots.size() - 1;
    size_t slot = std::hash<std::string_view>()(name) & mask;
    while (!m_slots[slot].empty() && m_slots[slot] != name) slot = (slot + 1) & mask;
    return slot;
}

void NameSet::grow() { reserve(std::max<size_t>(16, m_size + 1)); }

bool NameSet::insert(std::string_view name) {
    if (name.empty()) {
        const bool inserted = !m_hasEmpty;
        m_hasEmpty = true;
        return inserted;
    }
    if (2 * (m_size + 1) > m_slots.size()) grow();
    const size_t slot = slotOf(name);
    if (!m_slots[slot].empty()) return false;
    m_slots[slot] = name;
    ++m_size;
    return true;
}

bool NameSet::contains(std::string_view name) const {
    if (name.empty()) return m_hasEmpty;
    if (m_slots.empty()) return false;
    return !m_slots[slotOf(name)].empty();
}

std::vector<HloInstruction*> postOrderOf(const HloComputation& computation) {
    std::vector<HloInstruction*> order;
    order.reserve(computation.instructions().size());
    InstructionMap<uint8_t> visited;
    std::vector<std::pair<HloInstruction*, size_t>> stack;
    // Roots in insertion order; dependencies outside the computation are skipped.
    for (const auto& start : computation.instructions()) {
        if (visited[start.get()]) continue;
        visited[start.get()] = 1;
        stack.emplace_back(start.get(), 0);
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            const size_t operandCount = node->operands().size();
            const size_t total = operandCount + node->controlPredecessors().size();
            if (next < total) {
                HloInstruction* dependency = next < operandCount
                                                 ? node->operands()[next]
                                                 : node->controlPredecessors()[next - operandCount];
                ++next;
                if (dependency->parent() == &computation && !visited[dependency]) {
                    visited[dependency] = 1;
                    stack.emplace_back(dependency, 0);
                }
                continue;
            }
            order.push_back(node);
            stack.pop_back();
        }
    }
    return order;
}

FusionBuilder::FusionBuilder(HloModule& module) : m_module(module) {
    size_t count = 0;
    for (const auto& computation : module.computations())
        count += 1 + static_cast<size_t>(computation->instructionCount());
    m_names.reserve(count + count / 4 + 64);
    // Non-parameter names first: whether two instructions share one.
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() != HloOpcode::kParameter && !m_names.insert(instruction->name()))
                m_uniqueNames = false;
    for (const auto& computation : module.computations()) {
        m_names.insert(computation->name());
        for (const auto& instruction : computation->instructions())
            if (instruction->opcode() == HloOpcode::kParameter) m_names.insert(instruction->name());
    }
    std::unordered_map<const HloComputation*, int64_t> callers;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (isFusionOf(*instruction)) ++callers[instruction->fusedComputation()];
    for (const auto& [body, count] : callers)
        if (count > 1) m_sharedBodies.emplace(body, count);
}

bool FusionBuilder::calledByOthers(const HloComputation* body) const {
    auto shared = m_sharedBodies.find(body);
    return shared != m_sharedBodies.end() && shared->second > 1;
}

std::string FusionBuilder::freshName(const std::string& stem) {
    auto reserve = [&](std::string name) {
        if (m_names.contains(name)) return false;
        m_handedOut.push_back(std::make_unique<std::string>(std::move(name)));
        m_names.insert(*m_handedOut.back());
        return true;
    };
    if (reserve(stem)) return stem;
    int64_t& counter = m_counters[stem];
    for (;;) {
        std::string name = stem + "." + std::to_string(++counter);
        if (reserve(name)) return name;
    }
}

std::vector<HloInstruction*> FusionBuilder::bodyOrder(const HloComputation& computation) const {
    auto it = m_bodies.find(&computation);
    if (it == m_bodies.end()) return postOrderOf(computation);
    std::vector<HloInstruction*> order;
    order.reserve(computation.parameters().size() + it->second.order.size());
    order.insert(order.end(), computation.parameters().begin(), computation.parameters().end());
    order.insert(order.end(), it->second.order.begin(), it->second.order.end());
    return order;
}

void FusionBuilder::own(HloComputation* computation) {
    OwnedBody& body = m_bodies[computation];
    body = OwnedBody{};
    for (const auto& instruction : computation->instructions()) {
        if (instruction->opcode() == HloOpcode::kParameter) continue;
        body.order.push_back(instruction.get());
        if (!m_uniqueNames) body.names.insert(instruction->name());
        body.paramLikeNames = body.paramLikeNames || instruction->name().starts_with("param_");
        body.hasDot = body.hasDot || isDotLike(instruction->opcode());
    }
}

void FusionBuilder::addNewComputation(HloComputation* computation) {
    m_latest[computation] = m_newComputations.size();
    m_newComputations.push_back(computation);
}

std::string FusionBuilder::fusionName() { return freshName("fusion"); }

std::string FusionBuilder::computationName() { return freshName("fused_computation"); }

int64_t FusionBuilder::anchorOf(const HloInstruction* instruction) {
    const HloComputation* computation = instruction->parent();
    if (!m_anchored[computation]) {
        m_anchored[computation] = true;
        int64_t index = 0;
        for (const auto& x : computation->instructions()) {
            int64_t& slot = m_anchor[x.get()];
            if (slot == 0) slot = 2 * index + 1;
            ++index;
        }
    }
    const int64_t stored = m_anchor.get(instruction);
    return stored == 0 ? 0 : stored - 1;
}

void FusionBuilder::markDead(HloInstruction* instruction, bool withComputation) {
    instruction->removeAllOperands();
    uint8_t& dead = m_dead[instruction];
    if (!dead) {
        dead = 1;
        m_deadList.push_back(instruction);
    }
    if (!withComputation || !isFusionOf(*instruction)) return;
    HloComputation* body = instruction->fusedComputation();
    auto shared = m_sharedBodies.find(body);
    if (shared != m_sharedBodies.end() && --shared->second > 0) return;  // other callers remain
    m_deadComputations.push_back(body);
}


// The consumer is a fusion whose body this builder made: the producer's
// instructions are cloned into it, the producer's parameter is replaced by
// them, and the parameters are renumbered as a rebuilt body would number
// them (the consumer's operands in order, the producer's operands in its
// place). Returns nullptr, having changed nothing, where a rebuilt body would
// rename something (two instructions with one name): fuse then rebuilds.
HloInstruction* FusionBuilder::extendInPlace(HloInstruction* producer, HloInstruction* consumer,
                                             bool producerGoesAway, OwnedBody& body) {
    HloComputation* fused = consumer->fusedComputation();
    const int64_t oldCount = consumer->operandCount();
    if (body.paramLikeNames || fused->parameterCount() != oldCount) return nullptr;
    for (int64_t k = 0; k < oldCount; ++k)
        if (fused->parameter(k) == nullptr) return nullptr;

    // The producer's instructions, operands first (parameters mapped below).
    std::vector<HloInstruction*> producerBody;
    if (isFusionOf(*producer)) producerBody = bodyOrder(*producer->fusedComputation());
    else producerBody.push_back(producer);
    if (producerGoesAway && extensionRenames(*producer, producerBody, body)) return nullptr;

    OperandList operands = extendedOperands(*producer, *consumer);
    ParameterPlan plan = planParameters(*fused, *producer, *consumer, operands);
    // Clone the producer, reading the new parameters.
    auto valueOfOperand = [&](int64_t k) {
        return plan.parameterAt[static_cast<size_t>(operands.indexOf(producer->operand(k)))];
    };
    auto nameFor = [&](const HloInstruction& original) {
        return producerGoesAway ? original.name() : freshName(original.name() + ".clone");
    };
    const ProducerClones cloned = cloneProducer(*fused, *producer, producerBody, valueOfOperand, nameFor);
    rewireParameters(*fused, plan, operands.operands(), cloned.value);
    const std::string kind = recordClones(cloned.clones, *fused, body);
    return replaceExtended(producer, consumer, operands.operands(), kind, producerGoesAway);
}

// With names unique in the module (non-parameters), a name lives in one
// live instruction at a time (what is cloned with its name goes away), so
// the producer's names cannot clash with the body's: only param_N can.
bool FusionBuilder::extensionRenames(const HloInstruction& producer,
                                     const std::vector<HloInstruction*>& producerBody,
                                     const OwnedBody& body) const {
    std::unordered_set<std::string_view> local;
    for (const HloInstruction* x : producerBody) {
        if (x->opcode() == HloOpcode::kParameter && x != &producer) continue;
        const std::string& name = x->name();
        if (name.starts_with("param_")) return true;
        if (m_uniqueNames) continue;
        if (body.names.count(name) || (producerBody.size() > 1 && !local.insert(name).second))
            return true;
    }
    return false;
}

std::string FusionBuilder::recordClones(const std::vector<HloInstruction*>& clones,
                                        const HloComputation& fused, OwnedBody& body) {
    body.order.insert(body.order.begin(), clones.begin(), clones.end());
    for (HloInstruction* clone : clones) {
        if (!m_uniqueNames) body.names.insert(clone->name());
        body.hasDot = body.hasDot || isDotLike(clone->opcode());
    }
    return body.hasDot ? "kOutput" : rootKind(fused);
}

HloInstruction* FusionBuilder::replaceExtended(HloInstruction* producer, HloInstruction* consumer,
                                               const std::vector<HloInstruction*>& operands,
                                               const std::string& kind, bool producerGoesAway) {
    HloComputation* fused = consumer->fusedComputation();
    addNewComputation(fused);

    HloComputation* outer = consumer->parent();
    auto fusion = std::make_unique<HloInstruction>(HloOpcode::kFusion, consumer->name(), consumer->shape());
    for (HloInstruction* operand : operands) fusion->appendOperand(operand);
    fusion->mutableExtra().fusionKind = kind;
    fusion->setCalledComputation("calls", fused);
    fusion->setMetadata(consumer->metadata());
    for (const HloAttribute& attribute : consumer->attributes())
        fusion->setAttribute(attribute.name, attribute.value);
    HloInstruction* added = outer->addInstruction(std::move(fusion));
    fused->setFusionInstruction(added);
    m_anchor[added] = anchorOf(consumer) + 1;

    consumer->replaceAllUsesWith(added);
    if (outer->root() == consumer) outer->setRoot(added);
    markDead(consumer, /*withComputation=*/false);
    if (producerGoesAway && producer->users().empty() && outer->root() != producer)
        markDead(producer);
    return added;
}

HloInstruction* FusionBuilder::fuse(HloInstruction* producer, HloInstruction* consumer,
                                    bool producerGoesAway) {
    HloComputation* outer = consumer->parent();
    const int64_t anchor = anchorOf(consumer);
    anchorOf(producer);
    const bool consumerIsFusion = isFusionOf(*consumer);
    if (consumerIsFusion) {
        auto owned = m_bodies.find(consumer->fusedComputation());
        if (owned != m_bodies.end())
            if (HloInstruction* extended = extendInPlace(producer, consumer, producerGoesAway, owned->second))
                return extended;
    }
    // The rebuilt body takes the name of the one it replaces, unless another
    // fusion still calls that one.
    const bool keepsName = consumerIsFusion && !calledByOthers(consumer->fusedComputation());
    Body body{*this,
              std::make_unique<HloComputation>(keepsName ? consumer->fusedComputation()->name()
                                                         : computationName()),
              {},
              {},
              {}};
    body.declareOperands(*consumer, producer);
    HloInstruction* producerValue = body.inlineBody(
        *producer, [&](int64_t k) { return body.parameter(producer->operand(k)); },
        producerGoesAway);
    HloInstruction* root = body.inlineBody(
        *consumer,
        [&](int64_t k) {
            HloInstruction* operand = consumer->operand(k);
            return operand == producer ? producerValue : body.parameter(operand);
        },
        true);
    body.computation->setRoot(root);
    const std::string kind = kindOf(*body.computation);
    HloComputation* fused = m_module.addComputation(std::move(body.computation));
    addNewComputation(fused);
    own(fused);

    auto fusion = std::make_unique<HloInstruction>(
        HloOpcode::kFusion, consumerIsFusion ? consumer->name() : fusionName(), consumer->shape());
    for (HloInstruction* operand : body.outerOperands) fusion->appendOperand(operand);
    fusion->mutableExtra().fusionKind = kind;
    fusion->setCalledComputation("calls", fused);
    fusion->setMetadata(consumer->metadata());
    if (consumerIsFusion)
        for (const HloAttribute& attribute : consumer->attributes())
            fusion->setAttribute(attribute.name, attribute.value);
    HloInstruction* added = outer->addInstruction(std::move(fusion));
    fused->setFusionInstruction(added);
    m_anchor[added] = anchor + 1;

    consumer->replaceAllUsesWith(added);
    if (outer->root() == consumer) outer->setRoot(added);
    markDead(consumer);
    if (producerGoesAway && producer->users().empty() && outer->root() != producer)
        markDead(producer);
    return added;
}

HloInstruction* FusionBuilder::fuseMultiOutput(HloInstruction* a, HloInstruction* b) {
    HloComputation* outer = a->parent();
    const int64_t anchor = std::max(anchorOf(a), anchorOf(b));
    const bool bUsesA = std::find(b->operands().begin(), b->operands().end(), a) != b->operands().end();
    Body body{*this, std::make_unique<HloComputation>(computationName()), {}, {}, {}};
    body.declareOperands(*a, nullptr);
    body.declareOperands(*b, bUsesA ? a : nullptr);
    HloInstruction* aValue = body.inlineBody(
        *a, [&](int64_t k) { return body.parameter(a->operand(k)); }, true);
    HloInstruction* bValue = body.inlineBody(
        *b,
        [&](int64_t k) {
            HloInstruction* operand = b->operand(k);
            return operand == a ? aValue : body.parameter(operand);
        },
        true);
    // Outputs: tuple elements of multi-output parts, flattened.
    // A part's tuple that is one output (a variadic reduce) becomes a nested element.
    std::vector<HloInstruction*> outputs;
    std::vector<int64_t> offsets;
    std::vector<bool> flattened;
    for (HloInstruction* value : {aValue, bValue}) {
        offsets.push_back(static_cast<int64_t>(outputs.size()));
        if (value->opcode() == HloOpcode::kTuple && value->users().empty()) {
            for (HloInstruction* element : value->operands()) outputs.push_back(element);
            flattened.push_back(true);
        } else {
            outputs.push_back(value);
            flattened.push_back(false);
        }
    }
    std::vector<Shape> shapes;
    for (HloInstruction* output : outputs) shapes.push_back(output->shape());
    const Shape tupleShape = Shape::makeTuple(shapes);
    auto tuple = std::make_unique<HloInstruction>(HloOpcode::kTuple,
                                                  body.claim(freshName("tuple")), tupleShape);
    for (HloInstruction* output : outputs) tuple->appendOperand(output);
    HloInstruction* root = body.computation->addInstruction(std::move(tuple));
    body.computation->setRoot(root);
    // Old tuple roots of multi-output parts are now unused: drop them.
    std::vector<HloInstruction*> stale;
    for (HloInstruction* value : {aValue, bValue})
        if (value->opcode() == HloOpcode::kTuple && value != root && value->users().empty())
            stale.push_back(value);
    if (!stale.empty()) (void)body.computation->removeInstructions(stale);
    const std::string kind = kindOf(*body.computation);
    HloComputation* fused = m_module.addComputation(std::move(body.computation));
    addNewComputation(fused);

    auto fusion = std::make_unique<HloInstruction>(HloOpcode::kFusion, fusionName(), tupleShape);
    for (HloInstruction* operand : body.outerOperands) fusion->appendOperand(operand);
    fusion->mutableExtra().fusionKind = kind;
    fusion->setCalledComputation("calls", fused);
    fusion->setMetadata(b->metadata());
    HloInstruction* added = outer->addInstruction(std::move(fusion));
    fused->setFusionInstruction(added);
    m_anchor[added] = anchor + 1;

    auto rewire = [&](HloInstruction* part, int64_t offset, bool partFlattened) {
        if (part->shape().isTuple() && partFlattened) {
            // Users are get-tuple-elements (checked by the caller): repoint them.
            const std::vector<HloInstruction*> users = part->users();
            for (HloInstruction* user : users) {
                if (user == b) continue;
                for (int64_t k = 0; k < user->operandCount(); ++k)
                    if (user->operand(k) == part) user->replaceOperand(k, added);
                user->setTupleIndex(user->tupleIndex() + offset);
            }
            return;
        }
        const Shape& shape = part->shape();
        auto gte = std::make_unique<HloInstruction>(
            HloOpcode::kGetTupleElement, freshName("get-tuple-element"), shape);
        gte->appendOperand(added);
        gte->setTupleIndex(offset);
        HloInstruction* element = outer->addInstruction(std::move(gte));
        m_anchor[element] = anchor + 1;
        const std::vector<HloInstruction*> users = part->users();
        for (HloInstruction* user : users) {
            if (user == b || user == element) continue;
            for (int64_t k = 0; k < user->operandCount(); ++k)
                if (user->operand(k) == part) user->replaceOperand(k, element);
        }
        if (outer->root() == part) outer->setRoot(element);
    };
    rewire(a, offsets[0], flattened[0]);
    rewire(b, offsets[1], flattened[1]);
    markDead(b);
    markDead(a);
    return added;
}

Status FusionBuilder::finish() {
    std::unordered_map<HloComputation*, std::vector<HloInstruction*>> deadBy;
    for (HloInstruction* instruction : m_deadList) deadBy[instruction->parent()].push_back(instruction);
    for (auto& [computation, dead] : deadBy) HLO_RETURN_IF_ERROR(computation->removeInstructions(dead));
    std::unordered_set<const HloComputation*> deadComputations(m_deadComputations.begin(),
                                                               m_deadComputations.end());
    HLO_RETURN_IF_ERROR(m_module.removeComputations(m_deadComputations));
    // A fusion nested in a fused computation was cloned into the new ones: its computation's
    // caller is the clone now (the original went with the computation it lived in).
    for (const auto& computation : m_module.computations())
        for (const auto& instruction : computation->instructions())
            if (HloComputation* called = instruction->opcode() == HloOpcode::kFusion
                                             ? instruction->fusedComputation()
                                             : nullptr)
                called->setFusionInstruction(instruction.get());
    // Bodies extended in place: parameters by number, then operands first.
    for (auto& [computation, body] : m_bodies) {
        if (deadComputations.count(computation)) continue;
        HLO_RETURN_IF_ERROR(const_cast<HloComputation*>(computation)
                                ->setInstructionOrder(bodyOrder(*computation)));
    }

    // Instructions: a depth-first post order over operands (and control
    // predecessors), starting from the instructions sorted by anchor.
    for (auto& [computation, anchored] : m_anchored) {
        HloComputation* mutableComputation = const_cast<HloComputation*>(computation);
        if (deadComputations.count(computation)) continue;
        std::vector<HloInstruction*> byAnchor;
        byAnchor.reserve(computation->instructions().size());
        for (const auto& instruction : computation->instructions()) byAnchor.push_back(instruction.get());
        std::vector<std::pair<int64_t, HloInstruction*>> keyed;
        keyed.reserve(byAnchor.size());
        for (HloInstruction* x : byAnchor) {
            const int64_t stored = m_anchor.get(x);
            keyed.emplace_back(stored == 0 ? 0 : stored - 1, x);
        }
        std::stable_sort(keyed.begin(), keyed.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        for (size_t i = 0; i < keyed.size(); ++i) byAnchor[i] = keyed[i].second;
        std::vector<HloInstruction*> order;
        order.reserve(byAnchor.size());
        InstructionMap<uint8_t> visited;
        auto visit = [&](const HloInstruction* x) {
            uint8_t& mark = visited[x];
            if (mark) return false;
            mark = 1;
            return true;
        };
        std::vector<std::pair<HloInstruction*, size_t>> stack;
        for (HloInstruction* start : byAnchor) {
            if (!visit(start)) continue;
            stack.emplace_back(start, 0);
            while (!stack.empty()) {
                auto& [instruction, next] = stack.back();
                const size_t operandCount = instruction->operands().size();
                const size_t total = operandCount + instruction->controlPredecessors().size();
                if (next < total) {
                    HloInstruction* dependency = next < operandCount
                                                     ? instruction->operands()[next]
                                                     : instruction->controlPredecessors()[next - operandCount];
                    ++next;
                    if (visit(dependency)) stack.emplace_back(dependency, 0);
                    continue;
                }
                order.push_back(instruction);
                stack.pop_back();
            }
        }
        HLO_RETURN_IF_ERROR(mutableComputation->setInstructionOrder(order));
    }

    // Computations: each new fused computation right before its caller.
    std::unordered_map<const HloComputation*, std::vector<HloComputation*>> before;
    std::unordered_set<const HloComputation*> fresh;
    std::vector<HloComputation*> newComputations;
    for (size_t i = 0; i < m_newComputations.size(); ++i)
        if (m_latest[m_newComputations[i]] == i) newComputations.push_back(m_newComputations[i]);
    for (HloComputation* computation : newComputations) {
        if (deadComputations.count(computation)) continue;
        fresh.insert(computation);
        const HloInstruction* caller = computation->fusionInstruction();
        if (caller && caller->parent()) before[caller->parent()].push_back(computation);
    }
    std::vector<HloComputation*> order;
    std::unordered_set<const HloComputation*> placed;
    for (const auto& computation : m_module.computations()) {
        if (fresh.count(computation.get())) continue;
        auto it = before.find(computation.get());
        if (it != before.end())
            for (HloComputation* callee : it->second)
                if (placed.insert(callee).second) order.push_back(callee);
        order.push_back(computation.get());
    }
    for (HloComputation* computation : newComputations)
        if (fresh.count(computation) && placed.insert(computation).second) order.push_back(computation);
    return m_module.reorderComputations(order);
}

}  // namespace hloscope::fusion
