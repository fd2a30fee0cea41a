#include "compiler/fusion/fusion_util.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <functional>
#include <unordered_set>

#include "compiler/cost/cost_analysis.h"
#include "compiler/passes/pass_util.h"

namespace hloscope::fusion {

namespace {

constexpr int64_t kMaxFusedConstantElements = 1024;

StatusOr<std::set<std::pair<std::string, std::string>>> parsePairs(std::string_view key,
                                                                   const std::string& text) {
    std::set<std::pair<std::string, std::string>> pairs;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(';', start);
        if (end == std::string::npos) end = text.size();
        std::string item = text.substr(start, end - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) {
            const size_t colon = item.find(':');
            std::string a = colon == std::string::npos ? std::string() : item.substr(0, colon);
            std::string b = colon == std::string::npos ? std::string() : item.substr(colon + 1);
            if (!a.empty() && a[0] == '%') a.erase(0, 1);
            if (!b.empty() && b[0] == '%') b.erase(0, 1);
            if (a.empty() || b.empty() || b.find(':') != std::string::npos)
                return invalidArgument("option " + std::string(key) + ": '" + item +
                                       "' is not producer:consumer");
            pairs.emplace(std::move(a), std::move(b));
        }
        start = end + 1;
    }
    return pairs;
}

bool isFusionOf(const HloInstruction& instruction) {
    return instruction.opcode() == HloOpcode::kFusion && instruction.fusedComputation() != nullptr;
}

// The instructions a fusion's outputs are (tuple elements of a multi-output root).
std::vector<const HloInstruction*> fusionRoots(const HloInstruction& instruction) {
    if (!isFusionOf(instruction)) return {&instruction};
    const HloInstruction* root = instruction.fusedComputation()->root();
    if (root && root->opcode() == HloOpcode::kTuple)
        return {root->operands().begin(), root->operands().end()};
    return {root};
}

bool isDotLike(HloOpcode opcode) {
    return opcode == HloOpcode::kDot || opcode == HloOpcode::kConvolution;
}

bool containsDot(const HloInstruction& instruction) {
    if (isDotLike(instruction.opcode())) return true;
    if (!isFusionOf(instruction)) return false;
    for (const auto& fused : instruction.fusedComputation()->instructions())
        if (isDotLike(fused->opcode())) return true;
    return false;
}

bool endsInReduction(const HloInstruction& instruction) {
    for (const HloInstruction* root : fusionRoots(instruction))
        if (root && root->opcode() == HloOpcode::kReduce) return true;
    return false;
}

// Opcodes a loop/input/output fusion may contain.
bool fusibleOpcode(const HloInstruction& instruction, std::string* why) {
    const HloOpcode opcode = instruction.opcode();
    switch (opcode) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kIota:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kGather:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kDot:
    case HloOpcode::kConvolution: break;
    case HloOpcode::kConstant:
        if (!instruction.shape().isArray() ||
            instruction.shape().elementCount() > kMaxFusedConstantElements) {
            if (why) *why = "is a large constant (kept as a buffer)";
            return false;
        }
        break;
    case HloOpcode::kFusion: {
        const std::string_view kind = instruction.fusionKind();
        if (!isFusionOf(instruction) || (kind != "kLoop" && kind != "kInput" && kind != "kOutput")) {
            if (why) *why = "is a " + std::string(kind.empty() ? "custom" : kind) + " fusion";
            return false;
        }
        break;
    }
    default:
        if (hloOpcodeIsElementwise(opcode) && opcode != HloOpcode::kMap &&
            opcode != HloOpcode::kRng)
            break;
        if (why) *why = "is a " + std::string(hloOpcodeString(opcode)) + ", which does not fuse";
        return false;
    }
    if (instruction.hasSideEffect()) {
        if (why) *why = "has side effects";
        return false;
    }
    if (!instruction.controlPredecessors().empty() || !instruction.controlSuccessors().empty()) {
        if (why) *why = "has control dependencies";
        return false;
    }
    return true;
}

double elementBytes(const Shape& shape) {
    const double elements = static_cast<double>(std::max<int64_t>(1, shape.elementCount()));
    return CostAnalysis::byteSize(shape) / elements;
}

int64_t bodySize(const HloInstruction& instruction) {
    if (!isFusionOf(instruction)) return 1;
    const HloComputation* fused = instruction.fusedComputation();
    return fused->instructionCount() - fused->parameterCount();
}

std::string humanBytes(double bytes) {
    char buffer[64];
    if (bytes >= 1e9) std::snprintf(buffer, sizeof buffer, "%.1f GB", bytes / 1e9);
    else if (bytes >= 1e6) std::snprintf(buffer, sizeof buffer, "%.1f MB", bytes / 1e6);
    else if (bytes >= 1e3) std::snprintf(buffer, sizeof buffer, "%.1f KB", bytes / 1e3);
    else std::snprintf(buffer, sizeof buffer, "%.0f B", bytes);
    return buffer;
}

}  // namespace

StatusOr<FusionConfig> parseFusionConfig(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({"target", "max_operands", "max_fused_instructions", "force",
                                             "forbid", "disable_cost_model", "cost_model", "hardware"}));
    FusionConfig config;
    HLO_ASSIGN_OR_RETURN(config.target, options.getString("target", "cpu"));
    if (config.target == "gpu") {
        config.maxOperands = 96;
        config.onChipBudgetBytes = 228 * 1024;
        config.tileElements = 1024;
    } else if (config.target == "tpu") {
        config.maxOperands = 64;
        config.maxFusedInstructions = 512;
        config.onChipBudgetBytes = 16 << 20;
        config.tileElements = 2048;
    } else if (config.target != "cpu") {
        return invalidArgument("option target: must be cpu, gpu or tpu, not '" + config.target +
                               "'");
    }
    HLO_ASSIGN_OR_RETURN(config.maxOperands, options.getInt("max_operands", config.maxOperands));
    HLO_ASSIGN_OR_RETURN(config.maxFusedInstructions,
                         options.getInt("max_fused_instructions", config.maxFusedInstructions));
    if (config.maxOperands < 1) return invalidArgument("option max_operands: must be at least 1");
    if (config.maxFusedInstructions < 2)
        return invalidArgument("option max_fused_instructions: must be at least 2");
    HLO_ASSIGN_OR_RETURN(config.disableCostModel, options.getBool("disable_cost_model", false));
    HLO_ASSIGN_OR_RETURN(config.costModel, options.getString("cost_model", "performance"));
    if (config.costModel != "performance" && config.costModel != "bytes")
        return invalidArgument("option cost_model: must be performance or bytes, not '" +
                               config.costModel + "'");
    HLO_ASSIGN_OR_RETURN(config.hardware, options.getString("hardware", ""));
    HLO_ASSIGN_OR_RETURN(std::string force, options.getString("force", ""));
    HLO_ASSIGN_OR_RETURN(std::string forbid, options.getString("forbid", ""));
    HLO_ASSIGN_OR_RETURN(config.force, parsePairs("force", force));
    HLO_ASSIGN_OR_RETURN(config.forbid, parsePairs("forbid", forbid));
    return config;
}

bool isExpensive(const HloInstruction& instruction) {
    auto expensive = [](const HloInstruction& x) {
        const HloOpcode opcode = x.opcode();
        return CostAnalysis::isTranscendental(opcode) || opcode == HloOpcode::kReduce ||
               opcode == HloOpcode::kReduceWindow || isDotLike(opcode);
    };
    if (!isFusionOf(instruction)) return expensive(instruction);
    for (const auto& fused : instruction.fusedComputation()->instructions())
        if (expensive(*fused)) return true;
    return false;
}

int64_t distinctUseCount(const HloInstruction& instruction) {
    // users() holds each user once (HloInstruction keeps it duplicate-free).
    return instruction.userCount() + (instruction.isRoot() ? 1 : 0);
}

std::vector<HloComputation*> fusibleComputations(const HloModule& module) {
    std::vector<HloComputation*> result;
    if (!module.entryComputation()) return result;
    std::unordered_set<const HloComputation*> seen{module.entryComputation()};
    std::vector<HloComputation*> stack{module.entryComputation()};
    while (!stack.empty()) {
        HloComputation* computation = stack.back();
        stack.pop_back();
        result.push_back(computation);
        for (const auto& instruction : computation->instructions()) {
            const HloOpcode opcode = instruction->opcode();
            if (opcode != HloOpcode::kWhile && opcode != HloOpcode::kConditional &&
                opcode != HloOpcode::kCall)
                continue;
            for (const auto& attribute : instruction->calledComputationAttributes())
                for (HloComputation* called : attribute.computations)
                    if (called && seen.insert(called).second) stack.push_back(called);
        }
    }
    return result;
}

std::string describeBytes(const Shape& shape) {
    return shape.toString(false) + " (" + humanBytes(CostAnalysis::byteSize(shape)) + ")";
}

std::string formatSeconds(double seconds) {
    char buffer[64];
    if (seconds < 0) return "n/a";
    if (seconds >= 1e-3) std::snprintf(buffer, sizeof buffer, "%.3g ms", seconds * 1e3);
    else std::snprintf(buffer, sizeof buffer, "%.3g us", seconds * 1e6);
    return buffer;
}

std::optional<FusionReason> checkLimits(const std::vector<const HloInstruction*>& parts,
                                        const FusionConfig& config, std::string* detail) {
    // Distinct outside operands, in order of first appearance (small: a
    // kernel has at most a few hundred operands; a set only past that).
    std::vector<const HloInstruction*> operands;
    std::unordered_set<const HloInstruction*> operandSet;
    constexpr size_t kLinearLimit = 64;
    auto firstSeen = [&](const HloInstruction* operand) {
        if (operandSet.empty()) {
            if (std::find(operands.begin(), operands.end(), operand) != operands.end()) return false;
            operands.push_back(operand);
            if (operands.size() > kLinearLimit) operandSet.insert(operands.begin(), operands.end());
            return true;
        }
        if (!operandSet.insert(operand).second) return false;
        operands.push_back(operand);
        return true;
    };
    int64_t size = 0;
    int64_t outputs = 0;
    double onChip = 0;
    for (const HloInstruction* part : parts) {
        size += bodySize(*part);
        outputs += part->shape().isTuple() ? part->shape().tupleCount() : 1;
        for (const HloInstruction* operand : part->operands()) {
            if (std::find(parts.begin(), parts.end(), operand) != parts.end() || !firstSeen(operand))
                continue;
            const Shape& shape = operand->shape();
            onChip += std::min(CostAnalysis::byteSize(shape),
                               static_cast<double>(config.tileElements) * elementBytes(shape));
        }
    }
    // Producer-consumer fusion: the producer's output is no output of the
    // fused kernel unless it is multi-output (counted by the caller).
    if (parts.size() == 2 && parts[1] != nullptr &&
        std::find(parts[1]->operands().begin(), parts[1]->operands().end(), parts[0]) !=
            parts[1]->operands().end())
        outputs -= parts[0]->shape().isTuple() ? parts[0]->shape().tupleCount() : 1;
    const int64_t count = static_cast<int64_t>(operands.size()) + std::max<int64_t>(outputs, 1);
    if (count > config.maxOperands) {
        if (detail)
            *detail = "the fused kernel would take " + std::to_string(count) +
                      " operands and outputs, more than the " + config.target + " limit of " +
                      std::to_string(config.maxOperands);
        return FusionReason::kTooManyOperands;
    }
    if (size > config.maxFusedInstructions) {
        if (detail)
            *detail = "the fused kernel would hold " + std::to_string(size) +
                      " instructions, more than max_fused_instructions=" +
                      std::to_string(config.maxFusedInstructions);
        return FusionReason::kFusionTooLarge;
    }
    if (onChip > config.onChipBudgetBytes) {
        if (detail)
            *detail = "the fused operand tiles need about " + humanBytes(onChip) +
                      " on chip, more than the " + config.target + " budget of " +
                      humanBytes(config.onChipBudgetBytes);
        return FusionReason::kBudgetExceeded;
    }
    return std::nullopt;
}

std::optional<FusionReason> checkPair(const HloInstruction& producer,
                                      const HloInstruction& consumer, const FusionConfig& config,
                                      std::string* detail, bool multiOutput,
                                      int64_t producerUses) {
    // Built only for the explanation of a failure.
    auto P = [&] { return "%" + producer.name(); };
    auto C = [&] { return "%" + consumer.name(); };
    auto fail = [&](FusionReason reason, std::string text) {
        if (detail) *detail = std::move(text);
        return reason;
    };
    if (config.forbidden(producer, consumer))
        return fail(FusionReason::kForbiddenByUser, "forbid= names " + P() + ":" + C());
    std::string why;
    if (producer.opcode() == HloOpcode::kParameter)
        return fail(FusionReason::kNotFusibleOp, P() + " is a parameter");
    if (!fusibleOpcode(producer, &why)) return fail(FusionReason::kNotFusibleOp, P() + " " + why);
    if (!producer.shape().isArray())
        return fail(FusionReason::kNotFusibleOp, P() + " does not produce an array");
    if (endsInReduction(producer))
        return fail(FusionReason::kReductionNotRoot,
                    P() + " is a reduction; a reduce can only be the root of its fusion");
    if (consumer.opcode() == HloOpcode::kParameter || !fusibleOpcode(consumer, &why))
        return fail(FusionReason::kConsumerIsNotFusible,
                    C() + (consumer.opcode() == HloOpcode::kParameter ? " is a parameter" : " " + why));
    if (isDotLike(consumer.opcode()))
        return fail(FusionReason::kConsumerIsNotFusible,
                    C() + " is a " + std::string(hloOpcodeString(consumer.opcode())) +
                        ": its operands are not fused");
    if (isFusionOf(consumer)) {
        const HloComputation* fused = consumer.fusedComputation();
        for (int64_t k = 0; k < consumer.operandCount() && k < fused->parameterCount(); ++k) {
            if (consumer.operand(k) != &producer || !fused->parameter(k)) continue;
            for (const HloInstruction* user : fused->parameter(k)->users())
                if (isDotLike(user->opcode()))
                    return fail(FusionReason::kConsumerIsNotFusible,
                                P() + " feeds the " + std::string(hloOpcodeString(user->opcode())) +
                                    " inside " + C() + ": its operands are not fused");
        }
    }
    if (containsDot(producer) &&
        (isFusionOf(consumer) || !hloOpcodeIsElementwise(consumer.opcode())))
        return fail(FusionReason::kNotFusibleOp,
                    P() + " is a dot/convolution: only an elementwise epilogue can fuse into it");
    const int64_t uses = producerUses >= 0 ? producerUses : distinctUseCount(producer);
    if (uses > 1 && !multiOutput && isExpensive(producer)) {
        const InstructionCost cost = CostAnalysis::of(producer);
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%.3g GFLOP",
                      (cost.flops + cost.transcendentals) / 1e9);
        return fail(FusionReason::kWouldDuplicateExpensiveWork,
                    P() + " has " + std::to_string(uses) + " users and costs " + buffer +
                        "; fusing it would recompute it " + std::to_string(uses) + " times");
    }
    // Same minor-to-major order (a shape without one is in the default,
    // descending order); both shapes have the same rank.
    auto sameLayout = [](const Shape& a, const Shape& b) {
        auto explicitOrder = [](const Shape& shape) -> const std::vector<int64_t>* {
            if (shape.hasLayout() && !shape.layout().minorToMajor().empty())
                return &shape.layout().minorToMajor();
            return nullptr;
        };
        const std::vector<int64_t>* x = explicitOrder(a);
        const std::vector<int64_t>* y = explicitOrder(b);
        if (x && y) return *x == *y;
        if (!x && !y) return true;
        const std::vector<int64_t>& order = x ? *x : *y;
        const int64_t rank = x ? b.rank() : a.rank();
        if (static_cast<int64_t>(order.size()) != rank) return false;
        for (int64_t i = 0; i < rank; ++i)
            if (order[static_cast<size_t>(i)] != rank - 1 - i) return false;
        return true;
    };
    if (!isFusionOf(consumer) && hloOpcodeIsElementwise(consumer.opcode()) &&
        producer.shape().isArray() && producer.shape().rank() >= 2 && consumer.shape().isArray() &&
        producer.shape().rank() == consumer.shape().rank() &&
        !sameLayout(producer.shape(), consumer.shape()))
        return fail(FusionReason::kLayoutMismatch,
                    P() + " is laid out " + producer.shape().toString() + " but " + C() +
                        " reads it as " + consumer.shape().toString() +
                        ": the fused kernel would read it transposed");
    if (auto reason = checkLimits({&producer, &consumer}, config, detail)) return reason;
    return std::nullopt;
}

bool multiOutputCandidate(const HloInstruction& instruction, std::string* why) {
    const HloOpcode opcode = instruction.opcode();
    if (opcode == HloOpcode::kReduce) {
        if (!instruction.shape().isArray()) {
            if (why) *why = "is a variadic reduce";
            return false;
        }
        return fusibleOpcode(instruction, why);
    }
    if (opcode == HloOpcode::kFusion) {
        if (!fusibleOpcode(instruction, why)) return false;
        if (instruction.fusionKind() == "kOutput") {
            if (why) *why = "is a kOutput fusion";
            return false;
        }
        if (instruction.shape().isTuple()) {
            const HloInstruction* root = instruction.fusedComputation()->root();
            if (!root || root->opcode() != HloOpcode::kTuple) {
                if (why) *why = "returns a tuple that is not a tuple of outputs";
                return false;
            }
            if (instruction.isRoot()) {
                if (why) *why = "is a multi-output root";
                return false;
            }
            for (const HloInstruction* user : instruction.users())
                if (user->opcode() != HloOpcode::kGetTupleElement) {
                    if (why) *why = "has a user that is not a get-tuple-element";
                    return false;
                }
        }
        return true;
    }
    if (hloOpcodeIsElementwise(opcode) && instruction.shape().isArray())
        return fusibleOpcode(instruction, why);
    if (why) *why = "is a " + std::string(hloOpcodeString(opcode)) + ", not a loop or reduction";
    return false;
}

std::string iterationSpace(const HloInstruction& instruction) {
    std::string key;
    for (const HloInstruction* root : fusionRoots(instruction)) {
        std::string one;
        if (root->opcode() == HloOpcode::kReduce) {
            one = root->operand(0)->shape().toString(false) + " reduce{";
            for (int64_t d : root->dimensions()) one += std::to_string(d) + ",";
            one += "}";
        } else {
            one = root->shape().toString(false);
            one = one.substr(one.find('['));
        }
        if (key.empty()) key = one;
        else if (key != one) return "mixed";
    }
    return key;
}

// ---------------------------------------------------------------------------
// FusionBuilder

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

std::string kindOf(const HloComputation& computation) {
    for (const auto& instruction : computation.instructions())
        if (isDotLike(instruction->opcode())) return "kOutput";
    const HloInstruction* root = computation.root();
    std::vector<const HloInstruction*> roots{root};
    if (root->opcode() == HloOpcode::kTuple) roots.assign(root->operands().begin(), root->operands().end());
    for (const HloInstruction* r : roots)
        if (r->opcode() == HloOpcode::kReduce) return "kInput";
    return "kLoop";
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
    // With names unique in the module (non-parameters), a name lives in one
    // live instruction at a time (what is cloned with its name goes away), so
    // the producer's names cannot clash with the body's: only param_N can.
    if (producerGoesAway) {
        std::unordered_set<std::string_view> local;
        for (const HloInstruction* x : producerBody) {
            if (x->opcode() == HloOpcode::kParameter && x != producer) continue;
            const std::string& name = x->name();
            if (name.starts_with("param_")) return nullptr;
            if (m_uniqueNames) continue;
            if (body.names.count(name) || (producerBody.size() > 1 && !local.insert(name).second))
                return nullptr;
        }
    }

    // New operands: the consumer's, the producer's operands in its place.
    std::vector<HloInstruction*> operands;
    operands.reserve(static_cast<size_t>(oldCount + producer->operandCount()));
    std::unordered_map<const HloInstruction*, int64_t> indexMap;
    auto indexOf = [&](const HloInstruction* x) -> int64_t {
        if (operands.size() <= 32) {
            auto it = std::find(operands.begin(), operands.end(), x);
            return it == operands.end() ? -1 : static_cast<int64_t>(it - operands.begin());
        }
        if (indexMap.empty())
            for (size_t i = 0; i < operands.size(); ++i) indexMap.emplace(operands[i], static_cast<int64_t>(i));
        auto it = indexMap.find(x);
        return it == indexMap.end() ? -1 : it->second;
    };
    auto add = [&](HloInstruction* x) {
        if (indexOf(x) >= 0) return;
        if (!indexMap.empty()) indexMap.emplace(x, static_cast<int64_t>(operands.size()));
        operands.push_back(x);
    };
    for (HloInstruction* operand : consumer->operands()) {
        if (operand == producer) {
            for (HloInstruction* inner : producer->operands()) add(inner);
        } else {
            add(operand);
        }
    }

    // Parameters: slot j keeps its parameter instruction (the uses of one
    // whose operand moves are rewired below; its shape follows the new
    // operand); slots past the old count get new ones, and parameters past
    // the new count are dropped.
    const size_t newCount = operands.size();
    const size_t oldSlots = static_cast<size_t>(oldCount);
    std::vector<HloInstruction*> parameterAt(newCount, nullptr);
    std::vector<std::unique_ptr<HloInstruction>> fresh;
    for (size_t j = 0; j < newCount; ++j) {
        if (j < oldSlots) {
            parameterAt[j] = fused->parameter(static_cast<int64_t>(j));
            continue;
        }
        auto parameter = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, "param_" + std::to_string(j), operands[j]->shape());
        parameter->setParameterNumber(static_cast<int64_t>(j));
        parameterAt[j] = parameter.get();
        fresh.push_back(std::move(parameter));
    }
    // Where the uses of old parameter k go: the slot of its operand, or the
    // producer's value (known once cloned).
    std::vector<int64_t> slotOf(oldSlots, -1);
    for (size_t k = 0; k < oldSlots; ++k)
        if (consumer->operand(static_cast<int64_t>(k)) != producer)
            slotOf[k] = indexOf(consumer->operand(static_cast<int64_t>(k)));

    // The body's uses of parameters whose slot changes (taken before the
    // producer's clones become users of the reused parameters).
    std::vector<HloInstruction*> oldParameters(oldSlots);
    std::vector<HloInstruction*> users;
    for (size_t k = 0; k < oldSlots; ++k) {
        oldParameters[k] = fused->parameter(static_cast<int64_t>(k));
        if (slotOf[k] == static_cast<int64_t>(k)) continue;
        for (HloInstruction* user : oldParameters[k]->users())
            if (std::find(users.begin(), users.end(), user) == users.end()) users.push_back(user);
    }

    // Clone the producer, reading the new parameters.
    auto valueOfOperand = [&](int64_t k) { return parameterAt[static_cast<size_t>(indexOf(producer->operand(k)))]; };
    auto nameFor = [&](const HloInstruction& original) {
        return producerGoesAway ? original.name() : freshName(original.name() + ".clone");
    };
    std::vector<HloInstruction*> clones;
    HloInstruction* producerValue = nullptr;
    if (!isFusionOf(*producer)) {
        std::vector<HloInstruction*> inner;
        for (int64_t k = 0; k < producer->operandCount(); ++k) inner.push_back(valueOfOperand(k));
        auto clone = producer->cloneWithNewOperands(producer->shape(), inner, nameFor(*producer));
        clone->setMetadata(producer->metadata());
        producerValue = fused->addInstruction(std::move(clone));
        clones.push_back(producerValue);
    } else {
        std::unordered_map<const HloInstruction*, HloInstruction*> mapped;
        for (HloInstruction* inner : producerBody) {
            if (inner->opcode() == HloOpcode::kParameter) {
                mapped[inner] = valueOfOperand(inner->parameterNumber());
                continue;
            }
            std::vector<HloInstruction*> innerOperands;
            for (HloInstruction* operand : inner->operands()) innerOperands.push_back(mapped.at(operand));
            auto clone = inner->cloneWithNewOperands(inner->shape(), innerOperands, nameFor(*inner));
            HloInstruction* added = fused->addInstruction(std::move(clone));
            mapped[inner] = added;
            clones.push_back(added);
        }
        producerValue = mapped.at(producer->fusedComputation()->root());
    }

    // Rewire the uses of the old parameters whose slot changed (all at once:
    // one parameter's new slot may be another's old one).
    auto targetOf = [&](size_t k) -> HloInstruction* {
        return slotOf[k] < 0 ? producerValue : parameterAt[static_cast<size_t>(slotOf[k])];
    };
    auto oldSlotOf = [&](const HloInstruction* x) -> int64_t {
        if (x->opcode() != HloOpcode::kParameter || x->parent() != fused) return -1;
        const int64_t k = x->parameterNumber();
        return k >= 0 && k < oldCount && oldParameters[static_cast<size_t>(k)] == x ? k : -1;
    };
    for (HloInstruction* user : users) {
        const std::vector<HloInstruction*> before = user->operands();
        for (size_t i = 0; i < before.size(); ++i) {
            const int64_t k = oldSlotOf(before[i]);
            if (k >= 0 && slotOf[static_cast<size_t>(k)] != k)
                user->replaceOperand(static_cast<int64_t>(i), targetOf(static_cast<size_t>(k)));
        }
    }
    if (const int64_t k = oldSlotOf(fused->root()); k >= 0 && slotOf[static_cast<size_t>(k)] != k)
        fused->setRoot(targetOf(static_cast<size_t>(k)));
    for (size_t j = 0; j < newCount && j < oldSlots; ++j)
        if (slotOf[j] != static_cast<int64_t>(j)) parameterAt[j]->setShape(operands[j]->shape());
    if (newCount < oldSlots) {
        // Cannot fail: these parameters have no users left and none is the root.
        [[maybe_unused]] const Status removal = fused->removeInstructions(
            std::span<HloInstruction* const>(oldParameters.data() + newCount, oldSlots - newCount));
        assert(removal.isOk());
    }
    for (auto& parameter : fresh) fused->addInstruction(std::move(parameter));

    // Book-keeping: the producer's clones come first in the body order.
    body.order.insert(body.order.begin(), clones.begin(), clones.end());
    for (HloInstruction* clone : clones) {
        if (!m_uniqueNames) body.names.insert(clone->name());
        body.hasDot = body.hasDot || isDotLike(clone->opcode());
    }
    std::string kind = "kLoop";
    if (body.hasDot) {
        kind = "kOutput";
    } else {
        const HloInstruction* root = fused->root();
        std::vector<const HloInstruction*> roots{root};
        if (root->opcode() == HloOpcode::kTuple) roots.assign(root->operands().begin(), root->operands().end());
        for (const HloInstruction* r : roots)
            if (r->opcode() == HloOpcode::kReduce) kind = "kInput";
    }
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
    std::vector<HloInstruction*> outputs;
    std::vector<int64_t> offsets;
    for (HloInstruction* value : {aValue, bValue}) {
        offsets.push_back(static_cast<int64_t>(outputs.size()));
        if (value->opcode() == HloOpcode::kTuple && value->users().empty()) {
            for (HloInstruction* element : value->operands()) outputs.push_back(element);
        } else {
            outputs.push_back(value);
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

    auto rewire = [&](HloInstruction* part, int64_t offset) {
        if (part->shape().isTuple()) {
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
    rewire(a, offsets[0]);
    rewire(b, offsets[1]);
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
