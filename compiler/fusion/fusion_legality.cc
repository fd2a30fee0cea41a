#include "compiler/fusion/fusion_legality.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "compiler/buffers/in_place_update.h"
#include "compiler/cost/cost_analysis.h"
#include "compiler/fusion/fusion_format.h"
#include "compiler/fusion/in_place_fusion.h"

namespace hloscope::fusion {

namespace {

constexpr int64_t kMaxFusedConstantElements = 1024;

// The instructions a fusion's outputs are (tuple elements of a multi-output root).
std::vector<const HloInstruction*> fusionRoots(const HloInstruction& instruction) {
    if (!isFusionOf(instruction)) return {&instruction};
    const HloInstruction* root = instruction.fusedComputation()->root();
    if (root && root->opcode() == HloOpcode::kTuple)
        return {root->operands().begin(), root->operands().end()};
    return {root};
}

bool containsDot(const HloInstruction& instruction) {
    if (isDotLike(instruction.opcode())) return true;
    if (!isFusionOf(instruction)) return false;
    for (const auto& fused : instruction.fusedComputation()->instructions())
        if (isDotLike(fused->opcode())) return true;
    return false;
}

// Whether `x` only passes values through on the way from a hero to a fusion's root: an
// elementwise op (not a copy) of at most `operands` operands, or a bitcast.
bool isIntermediate(const HloInstruction& x, int64_t operands) {
    if (x.operandCount() == 0 || x.operandCount() > operands) return false;
    if (x.opcode() == HloOpcode::kBitcast) return true;
    return hloOpcodeIsElementwise(x.opcode()) && x.opcode() != HloOpcode::kCopy;
}

// A reduce, or a fusion whose output is a reduction (with or without an epilogue).
bool endsInReduction(const HloInstruction& instruction) {
    if (!isFusionOf(instruction)) return instruction.opcode() == HloOpcode::kReduce;
    for (const HloInstruction* root : fusionRoots(instruction))
        if (root && reductionUnderEpilogue(*root)) return true;
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


// A transpose the GPU emits tiled through shared memory: it moves data and, with its
// dimensions of size one dropped, swaps the two minor dimensions or the first and the last
// of three, each at least 16 long (XLA's tiled-transpose emitter).
bool isTiledTranspose(const HloInstruction& x) {
    if (!movesBetweenLayouts(x)) return false;
    std::vector<int64_t> dims;
    std::vector<int64_t> kept;  // input dimensions of size > 1, in output order
    const Shape& in = x.operand(0)->shape();
    for (int64_t d : x.dimensions())
        if (in.dimensions(d) != 1) kept.push_back(d);
    std::vector<int64_t> sorted = kept;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t& d : kept)
        d = std::lower_bound(sorted.begin(), sorted.end(), d) - sorted.begin();
    for (int64_t d : sorted) dims.push_back(in.dimensions(d));
    constexpr int64_t kMinTiled = 16;
    const size_t n = kept.size();
    if (n < 2) return false;
    // Swaps the two minor dimensions (a batch of 2-D transposes): [.., a, b] -> [.., b, a].
    bool minorSwap = kept[n - 1] == static_cast<int64_t>(n - 2) &&
                     kept[n - 2] == static_cast<int64_t>(n - 1);
    for (size_t i = 0; minorSwap && i + 2 < n; ++i) minorSwap = kept[i] == static_cast<int64_t>(i);
    if (minorSwap) return dims[n - 1] >= kMinTiled && dims[n - 2] >= kMinTiled;
    // [a, b, c] -> [c, b, a].
    if (n == 3 && kept[0] == 2 && kept[1] == 1 && kept[2] == 0)
        return dims[0] >= kMinTiled && dims[2] >= kMinTiled;
    return false;
}

// A reduction XLA's GPU reduction emitter takes (reduces "from or to contiguous
// dimensions"): with dimensions of size one dropped, the reduced dimensions, or the kept
// ones, are one run of consecutive dimensions.
bool isContiguousReduction(const HloInstruction& reduce) {
    if (reduce.opcode() != HloOpcode::kReduce) return false;
    const Shape& in = reduce.operand(0)->shape();
    std::vector<bool> reduced;
    for (int64_t d = 0; d < in.rank(); ++d) {
        if (in.dimensions(d) == 1) continue;
        reduced.push_back(std::find(reduce.dimensions().begin(), reduce.dimensions().end(), d) !=
                          reduce.dimensions().end());
    }
    auto oneRun = [&](bool value) {
        int runs = 0;
        for (size_t i = 0; i < reduced.size(); ++i)
            if (reduced[i] == value && (i == 0 || reduced[i - 1] != value)) ++runs;
        return runs <= 1;
    };
    return oneRun(true) || oneRun(false);
}

bool isReductionHero(const HloInstruction& x, bool gpu) {
    return x.opcode() == HloOpcode::kReduce && (!gpu || isContiguousReduction(x));
}

// The instruction that decides how a multi-output candidate is emitted (XLA's "real hero"):
// the candidate itself, or its fusion's root (of a tuple root: a reduction, else on the GPU a
// tiled transpose, else the first output). Inside a fusion, the GPU looks past unary
// elementwise ops and bitcasts (a reduction with an epilogue), and takes as hero the one
// tiled transpose reached through elementwise ops of up to three operands.
const HloInstruction* heroOf(const HloInstruction& instruction, bool gpu) {
    if (!isFusionOf(instruction)) return &instruction;
    const HloInstruction* root = instruction.fusedComputation()->root();
    if (root && root->opcode() == HloOpcode::kTuple && root->operandCount() > 0) {
        const HloInstruction* chosen = nullptr;
        for (const HloInstruction* output : root->operands())
            if (isReductionHero(*output, gpu)) {
                chosen = output;
                break;
            }
        if (!chosen && gpu)
            for (const HloInstruction* output : root->operands())
                if (isTiledTranspose(*output)) {
                    chosen = output;
                    break;
                }
        root = chosen ? chosen : root->operand(0);
    }
    if (!root || !gpu) return root;
    const HloInstruction* hero = root;
    while (isIntermediate(*hero, 1) && hero->operand(0)->opcode() != HloOpcode::kParameter)
        hero = hero->operand(0);
    // One tiled transpose beneath, through elementwise ops of up to three operands.
    const HloInstruction* transpose = nullptr;
    std::vector<const HloInstruction*> stack{hero};
    std::unordered_set<const HloInstruction*> seen{hero};
    while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        if (isTiledTranspose(*x)) {
            if (transpose) return hero;  // two candidates: neither is the hero
            transpose = x;
            continue;
        }
        if (!isIntermediate(*x, 3)) continue;
        for (const HloInstruction* operand : x->operands())
            if (seen.insert(operand).second) stack.push_back(operand);
    }
    return transpose ? transpose : hero;
}

bool hasDefaultOrder(const Shape& shape) {
    if (!shape.hasLayout() || shape.layout().minorToMajor().empty()) return true;
    const std::vector<int64_t>& order = shape.layout().minorToMajor();
    for (size_t i = 0; i < order.size(); ++i)
        if (order[i] != static_cast<int64_t>(order.size() - 1 - i)) return false;
    return true;
}

}  // namespace

const HloInstruction* reductionUnderEpilogue(const HloInstruction& root) {
    const HloInstruction* x = &root;
    while (x->opcode() != HloOpcode::kReduce && isIntermediate(*x, 1) &&
           x->operand(0)->opcode() != HloOpcode::kParameter)
        x = x->operand(0);
    return x->opcode() == HloOpcode::kReduce ? x : nullptr;
}

bool multiOutputCompatible(const HloInstruction& a, const HloInstruction& b,
                           const FusionConfig& config, std::string* why) {
    const bool gpu = config.target == "gpu";
    const HloInstruction* heroA = heroOf(a, gpu);
    const HloInstruction* heroB = heroOf(b, gpu);
    if (!heroA || !heroB) return false;
    auto name = [](const HloInstruction* x) { return "%" + x->name(); };
    const bool reduceA = isReductionHero(*heroA, gpu);
    const bool reduceB = isReductionHero(*heroB, gpu);
    const bool transposeA = gpu && isTiledTranspose(*heroA);
    const bool transposeB = gpu && isTiledTranspose(*heroB);
    auto loopShape = [](const HloInstruction* hero, bool special) -> const Shape& {
        return special ? hero->operand(0)->shape()
                       : (hero->shape().isTuple() ? hero->operand(0)->shape() : hero->shape());
    };
    const Shape& loopA = loopShape(heroA, reduceA || transposeA);
    const Shape& loopB = loopShape(heroB, reduceB || transposeB);
    if ((reduceA && transposeB) || (transposeA && reduceB)) {
        if (why) *why = "one is a reduction and the other a tiled transpose: no kernel emits both";
        return false;
    }
    if (reduceA && reduceB) {
        std::vector<int64_t> dimsA = heroA->dimensions(), dimsB = heroB->dimensions();
        std::sort(dimsA.begin(), dimsA.end());
        std::sort(dimsB.begin(), dimsB.end());
        if (loopA.dimensions() != loopB.dimensions() || dimsA != dimsB) {
            if (why)
                *why = name(heroA) + " reduces " + iterationSpace(a) + " but " + name(heroB) +
                       " reduces " + iterationSpace(b);
            return false;
        }
        return true;
    }
    if (transposeA && transposeB &&
        (loopA.dimensions() != loopB.dimensions() || heroA->dimensions() != heroB->dimensions())) {
        if (why)
            *why = "the transposes " + name(heroA) + " and " + name(heroB) +
                   " permute different inputs or in different orders";
        return false;
    }
    if (loopA.dimensions() == loopB.dimensions()) return true;
    if (gpu && loopA.isArray() && loopB.isArray() && loopA.elementCount() == loopB.elementCount() &&
        hasDefaultOrder(loopA) && hasDefaultOrder(loopB))
        return true;  // one loop is a bitcast of the other
    if (why)
        *why = "%" + a.name() + " iterates over " + iterationSpace(a) + " but %" + b.name() +
               " over " + iterationSpace(b);
    return false;
}

bool movesBetweenLayouts(const HloInstruction& transpose) {
    if (transpose.opcode() != HloOpcode::kTranspose) return false;
    const Shape& in = transpose.operand(0)->shape();
    int64_t last = -1;
    for (int64_t d : transpose.dimensions()) {
        if (in.dimensions(d) == 1) continue;
        if (d < last) return true;
        last = d;
    }
    return false;
}

bool isFusible(const HloInstruction& instruction) {
    return instruction.opcode() != HloOpcode::kParameter && fusibleOpcode(instruction, nullptr);
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
    if (inPlaceUpdateOf(producer))
        return fail(FusionReason::kNotFusibleOp,
                    P() + " updates a buffer in place: a dynamic-update-slice stays the root of its fusion");
    if (scatterOf(producer))
        return fail(FusionReason::kNotFusibleOp, P() + " scatters into a buffer in place: a scatter stays the root of its fusion");
    if (!fusibleOpcode(producer, &why)) return fail(FusionReason::kNotFusibleOp, P() + " " + why);
    if (!producer.shape().isArray())
        return fail(FusionReason::kNotFusibleOp, P() + " does not produce an array");
    if (endsInReduction(producer)) {
        // On the GPU a reduction takes an epilogue: unary elementwise ops and bitcasts applied
        // to its result, written by the reduction's kernel (XLA's reduction epilogue fusion).
        const bool epilogue = config.target == "gpu" && !producer.shape().isTuple() &&
                              !isFusionOf(consumer) && isIntermediate(consumer, 1);
        if (!epilogue)
            return fail(FusionReason::kReductionNotRoot,
                        P() + " is a reduction; " +
                            (config.target == "gpu"
                                 ? "only unary elementwise ops and bitcasts can follow a reduce in "
                                   "its fusion (an epilogue), and " + C() + " is not one"
                                 : "a reduce can only be the root of its fusion"));
    }
    // A dynamic-update-slice becomes the root of a kLoop fusion where the target fuses into
    // in-place updates.
    const bool inPlaceRoot = consumer.opcode() == HloOpcode::kDynamicUpdateSlice &&
                             config.fusesIntoInPlaceUpdates() && isInPlaceUpdateForm(consumer, false) &&
                             !consumer.hasSideEffect() && consumer.controlPredecessors().empty() &&
                             consumer.controlSuccessors().empty();
    const bool scatterRoot = consumer.opcode() == HloOpcode::kScatter && config.fusesIntoScatters() &&
                             consumer.operandCount() == 3 && consumer.shape().isArray() &&
                             !consumer.hasSideEffect() && consumer.controlPredecessors().empty() &&
                             consumer.controlSuccessors().empty();
    if (consumer.opcode() == HloOpcode::kParameter ||
        (!inPlaceRoot && !scatterRoot && !fusibleOpcode(consumer, &why)))
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
    if (containsDot(producer) &&
        std::count(consumer.operands().begin(), consumer.operands().end(), &producer) > 1)
        return fail(FusionReason::kNotFusibleOp,
                    C() + " reads the dot/convolution " + P() +
                        " more than once: an output fusion takes the dot's result once");
    // On the GPU a constant of more than one element stays a buffer read like a parameter
    // (fused, it would be emitted into every kernel's code); scalars fuse.
    if (producer.opcode() == HloOpcode::kConstant && config.target == "gpu" && producer.shape().isArray() &&
        producer.shape().elementCount() > 1)
        return fail(FusionReason::kNotFusibleOp,
                    P() + " is a constant of " + std::to_string(producer.shape().elementCount()) +
                        " elements: on the GPU it stays a buffer, read like a parameter (only scalar "
                        "constants fuse)");
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
    if (inPlaceUpdateOf(consumer))
        if (auto conflict = inPlaceConflict(producer, consumer))
            return fail(FusionReason::kInPlaceConflict, *conflict);
    if (scatterOf(consumer))
        if (auto conflict = scatterConflict(producer, consumer))
            return fail(FusionReason::kInPlaceConflict, *conflict);
    if (auto reason = checkLimits({&producer, &consumer}, config, detail)) return reason;
    return std::nullopt;
}

bool multiOutputCandidate(const HloInstruction& instruction, std::string* why,
                          bool tiledTransposes) {
    const HloOpcode opcode = instruction.opcode();
    if (tiledTransposes && isTiledTranspose(instruction)) return fusibleOpcode(instruction, why);
    // An output updated in place aliases its operand's buffer: a kernel of several outputs
    // could not write it there.
    for (const HloInstruction* root : fusionRoots(instruction)) {
        if (root && root->opcode() == HloOpcode::kDynamicUpdateSlice) {
            if (why) *why = "updates a buffer in place (a dynamic-update-slice output)";
            return false;
        }
        if (root && root->opcode() == HloOpcode::kScatter) {
            if (why) *why = "scatters into a buffer in place (a scatter output)";
            return false;
        }
    }
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
            // A variadic reduce's tuple is one output: a merged root holds it as a nested
            // tuple element (XLA's argmin/argmax sibling fusions).
            const bool variadic = root && root->opcode() == HloOpcode::kReduce;
            if (!root || (root->opcode() != HloOpcode::kTuple && !variadic)) {
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

}  // namespace hloscope::fusion
