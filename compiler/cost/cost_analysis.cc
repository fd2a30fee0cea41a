#include "compiler/cost/cost_analysis.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/literal.h"

namespace hloscope {

InstructionCost& InstructionCost::operator+=(const InstructionCost& other) {
    flops += other.flops;
    transcendentals += other.transcendentals;
    bytesRead += other.bytesRead;
    bytesWritten += other.bytesWritten;
    outputBytes += other.outputBytes;
    return *this;
}

InstructionCost InstructionCost::scaled(double factor) const {
    InstructionCost cost = *this;
    cost.flops *= factor;
    cost.transcendentals *= factor;
    cost.bytesRead *= factor;
    cost.bytesWritten *= factor;
    cost.outputBytes *= factor;
    return cost;
}

namespace {

double elements(const Shape& shape) {
    if (shape.isTuple()) {
        double total = 0;
        for (const Shape& element : shape.tupleShapes()) total += elements(element);
        return total;
    }
    if (!shape.isArray()) return 0;
    return static_cast<double>(shape.elementCount());
}

// Element count of the first array of a (possibly tuple) shape.
double firstElements(const Shape& shape) {
    if (shape.isTuple()) return shape.tupleCount() > 0 ? firstElements(shape.tupleShape(0)) : 0;
    return elements(shape);
}

double product(const Shape& shape, const std::vector<int64_t>& dims) {
    double result = 1;
    for (int64_t d : dims)
        if (shape.isArray() && d >= 0 && d < shape.rank())
            result *= static_cast<double>(std::max<int64_t>(shape.dimensions(d), 0));
    return result;
}

bool isFreeOpcode(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kParameter:
        case HloOpcode::kConstant:
        case HloOpcode::kBitcast:
        case HloOpcode::kGetTupleElement:
        case HloOpcode::kTuple:
        case HloOpcode::kAfterAll:
        case HloOpcode::kAddDependency:
        case HloOpcode::kDomain:
        case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kPartitionId:
        case HloOpcode::kReplicaId:
        case HloOpcode::kGetDimensionSize:
        case HloOpcode::kAsyncDone:
        case HloOpcode::kAsyncUpdate:
        case HloOpcode::kCopyDone:
        case HloOpcode::kAllGatherDone:
        case HloOpcode::kAllReduceDone:
        case HloOpcode::kCollectivePermuteDone:
        case HloOpcode::kSendDone:
        case HloOpcode::kRecvDone:
            return true;
        default:
            return false;
    }
}

bool isDataMovementOpcode(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kBroadcast:
        case HloOpcode::kReshape:
        case HloOpcode::kDynamicReshape:
        case HloOpcode::kTranspose:
        case HloOpcode::kCopy:
        case HloOpcode::kCopyStart:
        case HloOpcode::kSlice:
        case HloOpcode::kDynamicSlice:
        case HloOpcode::kDynamicUpdateSlice:
        case HloOpcode::kConcatenate:
        case HloOpcode::kPad:
        case HloOpcode::kReverse:
        case HloOpcode::kIota:
        case HloOpcode::kGather:
        case HloOpcode::kBitcastConvert:
        case HloOpcode::kSetDimensionSize:
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
        case HloOpcode::kAllToAll:
        case HloOpcode::kRaggedAllToAll:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteStart:
        case HloOpcode::kSend:
        case HloOpcode::kRecv:
        case HloOpcode::kInfeed:
        case HloOpcode::kOutfeed:
        case HloOpcode::kShuffle:
            return true;
        default:
            return false;
    }
}

std::optional<int64_t> scalarIntConstant(const HloInstruction* instruction) {
    if (instruction == nullptr || instruction->opcode() != HloOpcode::kConstant) return std::nullopt;
    const Shape& shape = instruction->shape();
    if (!shape.isScalar() || !(primitive_util::isInteger(shape.elementType()))) return std::nullopt;
    auto literal = literalOfConstant(*instruction);
    if (!literal.isOk()) return std::nullopt;
    return literal->getAsInt64(0);
}

// gte(parameter 0, index) of a loop computation.
std::optional<int64_t> loopStateIndex(const HloInstruction* instruction) {
    if (instruction == nullptr || instruction->opcode() != HloOpcode::kGetTupleElement) return std::nullopt;
    const HloInstruction* operand = instruction->operand(0);
    if (operand->opcode() != HloOpcode::kParameter) return std::nullopt;
    return instruction->tupleIndex();
}

std::optional<int64_t> tripCountFromBackendConfig(const HloInstruction& loop) {
    auto config = loop.attribute("backend_config");
    if (!config) return std::nullopt;
    static const std::regex pattern(R"re("known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)"?)re");
    std::string text(*config);
    std::smatch match;
    if (!std::regex_search(text, match, pattern)) return std::nullopt;
    try {
        return std::stoll(match[1].str());
    } catch (...) {
        return std::nullopt;
    }
}

// Number of iterations of `for (i = init; i DIR bound; i += step)`. Computed in
// 128 bits: the constants come from the module (e.g. INT64_MIN to INT64_MAX), and
// a count beyond int64 is no count.
__extension__ typedef __int128 Wide;  // (GCC and clang; -Wpedantic knows it as an extension)

std::optional<int64_t> countIterations(Wide init, Wide bound, Wide step,
                                       ComparisonDirection direction) {
    auto ceilDiv = [](Wide a, Wide b) { return (a + b - 1) / b; };
    std::optional<Wide> count;
    if (step > 0) {
        switch (direction) {
            case ComparisonDirection::kLt:
                count = init >= bound ? 0 : ceilDiv(bound - init, step);
                break;
            case ComparisonDirection::kLe:
                count = init > bound ? 0 : (bound - init) / step + 1;
                break;
            case ComparisonDirection::kNe:
                if (init > bound || (bound - init) % step != 0) return std::nullopt;
                count = (bound - init) / step;
                break;
            default: return std::nullopt;
        }
    } else if (step < 0) {
        switch (direction) {
            case ComparisonDirection::kGt:
                count = init <= bound ? 0 : ceilDiv(init - bound, -step);
                break;
            case ComparisonDirection::kGe:
                count = init < bound ? 0 : (init - bound) / -step + 1;
                break;
            case ComparisonDirection::kNe:
                if (init < bound || (init - bound) % -step != 0) return std::nullopt;
                count = (init - bound) / -step;
                break;
            default: return std::nullopt;
        }
    }
    if (!count || *count > INT64_MAX) return std::nullopt;
    return static_cast<int64_t>(*count);
}

ComparisonDirection swapped(ComparisonDirection direction) {
    switch (direction) {
        case ComparisonDirection::kLt: return ComparisonDirection::kGt;
        case ComparisonDirection::kLe: return ComparisonDirection::kGe;
        case ComparisonDirection::kGt: return ComparisonDirection::kLt;
        case ComparisonDirection::kGe: return ComparisonDirection::kLe;
        default: return direction;
    }
}

std::optional<int64_t> tripCountFromPattern(const HloInstruction& loop) {
    const HloComputation* condition = loop.whileCondition();
    const HloComputation* body = loop.whileBody();
    if (condition == nullptr || body == nullptr || loop.operandCount() != 1) return std::nullopt;
    const HloInstruction* compare = condition->root();
    if (compare == nullptr || compare->opcode() != HloOpcode::kCompare) return std::nullopt;
    auto direction = compare->comparisonDirection();
    if (!direction) return std::nullopt;
    std::optional<int64_t> index = loopStateIndex(compare->operand(0));
    std::optional<int64_t> bound = scalarIntConstant(compare->operand(1));
    if (!index || !bound) {
        index = loopStateIndex(compare->operand(1));
        bound = scalarIntConstant(compare->operand(0));
        *direction = swapped(*direction);
    }
    if (!index || !bound) return std::nullopt;
    const HloInstruction* init = loop.operand(0);
    if (init->opcode() != HloOpcode::kTuple || *index >= init->operandCount()) return std::nullopt;
    std::optional<int64_t> start = scalarIntConstant(init->operand(*index));
    const HloInstruction* bodyRoot = body->root();
    if (!start || bodyRoot == nullptr || bodyRoot->opcode() != HloOpcode::kTuple ||
        *index >= bodyRoot->operandCount())
        return std::nullopt;
    const HloInstruction* update = bodyRoot->operand(*index);
    int64_t sign = 1;
    if (update->opcode() == HloOpcode::kSubtract) sign = -1;
    else if (update->opcode() != HloOpcode::kAdd) return std::nullopt;
    std::optional<int64_t> step;
    if (loopStateIndex(update->operand(0)) == index) step = scalarIntConstant(update->operand(1));
    else if (sign > 0 && loopStateIndex(update->operand(1)) == index)
        step = scalarIntConstant(update->operand(0));
    if (!step) return std::nullopt;
    return countIterations(*start, *bound, sign * static_cast<Wide>(*step), *direction);
}

// Computes costs with a per-computation cache and records what it could not
// cost exactly.
class Analyzer {
public:
    InstructionCost instruction(const HloInstruction& instruction);
    InstructionCost fusion(const HloInstruction& fusion);
    InstructionCost computation(const HloComputation& computation);
    // Flops (and transcendentals) of one application of a small computation
    // (reducers, comparators); at least 1 flop.
    double applyFlops(const HloComputation* computation);

    std::vector<std::string> unknownTripCountLoops;
    std::vector<std::string> unknownCostInstructions;

private:
    InstructionCost kernelBytes(const HloInstruction& instruction) const;
    // The cost of one op family, given `cost`, the kernel's bytes
    // (kernelBytes). Dot, ragged/scaled dot and convolution:
    InstructionCost contraction(const HloInstruction& instruction, InstructionCost cost);
    // Reduce, reduce-window, select-and-scatter, map and the reducing collectives:
    InstructionCost reduction(const HloInstruction& instruction, InstructionCost cost);
    // Slice, dynamic-slice, dynamic-update-slice, gather and scatter:
    InstructionCost indexedAccess(const HloInstruction& instruction, InstructionCost cost);
    // Sort, top-k, FFT, batch norm, Cholesky and triangular solve:
    InstructionCost algorithm(const HloInstruction& instruction, InstructionCost cost);
    // While, call, async-start and conditional (the called computations' costs):
    InstructionCost controlFlow(const HloInstruction& instruction, InstructionCost cost);
    std::unordered_map<const HloComputation*, InstructionCost> m_cache;
    std::unordered_set<const HloInstruction*> m_flagged;
};

InstructionCost Analyzer::kernelBytes(const HloInstruction& instruction) const {
    InstructionCost cost;
    // Each distinct operand once (in operand order; operand lists are short,
    // a set only for long ones).
    const auto& operands = instruction.operands();
    if (operands.size() <= 16) {
        for (size_t i = 0; i < operands.size(); ++i)
            if (std::find(operands.begin(), operands.begin() + static_cast<std::ptrdiff_t>(i), operands[i]) ==
                operands.begin() + static_cast<std::ptrdiff_t>(i))
                cost.bytesRead += CostAnalysis::byteSize(operands[i]->shape());
    } else {
        std::unordered_set<const HloInstruction*> seen;
        for (const HloInstruction* operand : operands)
            if (seen.insert(operand).second) cost.bytesRead += CostAnalysis::byteSize(operand->shape());
    }
    cost.outputBytes = CostAnalysis::byteSize(instruction.shape());
    cost.bytesWritten = cost.outputBytes;
    return cost;
}

double Analyzer::applyFlops(const HloComputation* computation) {
    if (computation == nullptr) return 1;
    InstructionCost cost = this->computation(*computation);
    return std::max(1.0, cost.flops + cost.transcendentals);
}

InstructionCost Analyzer::computation(const HloComputation& computation) {
    if (auto it = m_cache.find(&computation); it != m_cache.end()) return it->second;
    InstructionCost total;
    for (const auto& instruction : computation.instructions()) total += this->instruction(*instruction);
    m_cache.emplace(&computation, total);
    return total;
}

InstructionCost Analyzer::fusion(const HloInstruction& fusionInstruction) {
    InstructionCost cost;
    const HloComputation* fused = fusionInstruction.fusedComputation();
    if (fused == nullptr) return kernelBytes(fusionInstruction);
    InstructionCost inner = computation(*fused);
    cost.flops = inner.flops;
    cost.transcendentals = inner.transcendentals;
    // Bytes crossing the boundary: each distinct operand once; a parameter
    // only ever sliced/gathered reads the slices.
    // Byte counts are whole numbers: the order they are summed in does not matter.
    std::vector<std::pair<const HloInstruction*, double>> readPerOperand;
    readPerOperand.reserve(fused->parameters().size());
    for (const HloInstruction* parameter : fused->parameters()) {
        int64_t number = parameter->parameterNumber();
        if (number < 0 || number >= fusionInstruction.operandCount()) continue;
        const HloInstruction* operand = fusionInstruction.operand(number);
        double full = CostAnalysis::byteSize(operand->shape());
        double read = full;
        bool onlySliced = !parameter->users().empty();
        double sliced = 0;
        for (const HloInstruction* user : parameter->users()) {
            HloOpcode op = user->opcode();
            bool slicing = (op == HloOpcode::kSlice || op == HloOpcode::kDynamicSlice ||
                            op == HloOpcode::kGather) &&
                           user->operand(0) == parameter;
            if (!slicing) {
                onlySliced = false;
                break;
            }
            sliced += CostAnalysis::byteSize(user->shape());
        }
        if (onlySliced) read = std::min(full, sliced);
        auto entry = std::find_if(readPerOperand.begin(), readPerOperand.end(),
                                  [&](const auto& item) { return item.first == operand; });
        if (entry == readPerOperand.end()) readPerOperand.emplace_back(operand, read);
        else entry->second = std::max(entry->second, read);
    }
    for (const auto& [operand, bytes] : readPerOperand) cost.bytesRead += bytes;
    cost.outputBytes = CostAnalysis::byteSize(fusionInstruction.shape());
    cost.bytesWritten = cost.outputBytes;
    return cost;
}

InstructionCost Analyzer::instruction(const HloInstruction& instruction) {
    const HloOpcode opcode = instruction.opcode();
    if (isFreeOpcode(opcode)) return {};
    const Shape& shape = instruction.shape();
    const double outElements = elements(shape);
    InstructionCost cost = kernelBytes(instruction);

    if ((instruction.isElementwise() && !isDataMovementOpcode(opcode)) || opcode == HloOpcode::kRng ||
        opcode == HloOpcode::kRngBitGenerator || opcode == HloOpcode::kReducePrecision ||
        opcode == HloOpcode::kStochasticConvert) {
        if (CostAnalysis::isTranscendental(opcode)) cost.transcendentals = outElements;
        else cost.flops = firstElements(shape);
        return cost;
    }
    // By op family; `cost` holds the bytes every kernel reads and writes.
    switch (opcode) {
        case HloOpcode::kDot:
        case HloOpcode::kRaggedDot:
        case HloOpcode::kScaledDot:
        case HloOpcode::kConvolution: return contraction(instruction, cost);
        case HloOpcode::kReduce:
        case HloOpcode::kReduceWindow:
        case HloOpcode::kSelectAndScatter:
        case HloOpcode::kMap:
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kCollectiveReduce: return reduction(instruction, cost);
        case HloOpcode::kSlice:
        case HloOpcode::kDynamicSlice:
        case HloOpcode::kDynamicUpdateSlice:
        case HloOpcode::kGather:
        case HloOpcode::kScatter: return indexedAccess(instruction, cost);
        case HloOpcode::kSort:
        case HloOpcode::kTopK:
        case HloOpcode::kFft:
        case HloOpcode::kBatchNormTraining:
        case HloOpcode::kBatchNormInference:
        case HloOpcode::kBatchNormGrad:
        case HloOpcode::kCholesky:
        case HloOpcode::kTriangularSolve: return algorithm(instruction, cost);
        case HloOpcode::kFusion: return fusion(instruction);
        case HloOpcode::kWhile:
        case HloOpcode::kCall:
        case HloOpcode::kAsyncStart:
        case HloOpcode::kConditional: return controlFlow(instruction, cost);
        case HloOpcode::kCustomCall:
            if (m_flagged.insert(&instruction).second) unknownCostInstructions.push_back(instruction.name());
            return cost;
        default:
            // Data movement and everything else: bytes only.
            return cost;
    }
}

InstructionCost Analyzer::contraction(const HloInstruction& instruction, InstructionCost cost) {
    const Shape& shape = instruction.shape();
    const double outElements = elements(shape);
    switch (instruction.opcode()) {
        case HloOpcode::kDot:
        case HloOpcode::kRaggedDot:
        case HloOpcode::kScaledDot: {
            const DotDimensionNumbers* dims = instruction.dotDimensionNumbers();
            double contracting = 1;
            if (dims != nullptr && instruction.operandCount() > 0)
                contracting = product(instruction.operand(0)->shape(), dims->lhsContractingDimensions);
            cost.flops = 2 * outElements * contracting;
            return cost;
        }
        case HloOpcode::kConvolution: {
            const ConvolutionDimensionNumbers* dims = instruction.convolutionDimensionNumbers();
            if (dims == nullptr || instruction.operandCount() < 2) return cost;
            const Shape& kernel = instruction.operand(1)->shape();
            double spatial = product(kernel, dims->kernelSpatialDimensions);
            double inputFeatures = product(kernel, {dims->kernelInputFeatureDimension});
            cost.flops = 2 * outElements * spatial * inputFeatures;
            return cost;
        }
        default: return cost;
    }
}

InstructionCost Analyzer::reduction(const HloInstruction& instruction, InstructionCost cost) {
    const Shape& shape = instruction.shape();
    switch (instruction.opcode()) {
        case HloOpcode::kReduce: {
            int64_t inputs = instruction.operandCount() / 2;
            if (inputs == 0) return cost;
            double inElements = elements(instruction.operand(0)->shape());
            double perResult = firstElements(shape);
            cost.flops = std::max(0.0, inElements - perResult) * applyFlops(instruction.toApply());
            return cost;
        }
        case HloOpcode::kReduceWindow: {
            double window = 1;
            if (const Window* w = instruction.window())
                for (const WindowDimension& d : w->dimensions) window *= static_cast<double>(d.size);
            cost.flops = firstElements(shape) * window * applyFlops(instruction.toApply());
            return cost;
        }
        case HloOpcode::kSelectAndScatter: {
            double window = 1;
            if (const Window* w = instruction.window())
                for (const WindowDimension& d : w->dimensions) window *= static_cast<double>(d.size);
            double source = instruction.operandCount() > 1 ? elements(instruction.operand(1)->shape()) : 0;
            cost.flops = source * window * applyFlops(instruction.calledComputation("select")) +
                         source * applyFlops(instruction.calledComputation("scatter"));
            return cost;
        }
        case HloOpcode::kMap:
            cost.flops = firstElements(shape) * applyFlops(instruction.toApply());
            return cost;
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kCollectiveReduce: {
            double in = 0;
            for (const HloInstruction* operand : instruction.operands()) in += elements(operand->shape());
            cost.flops = in * applyFlops(instruction.toApply());
            return cost;
        }
        default: return cost;
    }
}

InstructionCost Analyzer::indexedAccess(const HloInstruction& instruction, InstructionCost cost) {
    switch (instruction.opcode()) {
        case HloOpcode::kSlice:
        case HloOpcode::kDynamicSlice: {
            cost.bytesRead = cost.outputBytes;
            for (int64_t i = 1; i < instruction.operandCount(); ++i)
                cost.bytesRead += CostAnalysis::byteSize(instruction.operand(i)->shape());
            return cost;
        }
        case HloOpcode::kDynamicUpdateSlice: {
            if (instruction.operandCount() < 2) return cost;
            double update = CostAnalysis::byteSize(instruction.operand(1)->shape());
            cost.bytesRead = update;
            for (int64_t i = 2; i < instruction.operandCount(); ++i)
                cost.bytesRead += CostAnalysis::byteSize(instruction.operand(i)->shape());
            cost.bytesWritten = update;
            return cost;
        }
        case HloOpcode::kGather: {
            cost.bytesRead = cost.outputBytes;
            if (instruction.operandCount() > 1)
                cost.bytesRead += CostAnalysis::byteSize(instruction.operand(1)->shape());
            return cost;
        }
        case HloOpcode::kScatter: {
            // operands..., indices, updates... (variadic: N operands, 1 indices, N updates).
            int64_t n = (instruction.operandCount() - 1) / 2;
            if (n <= 0) return cost;
            double updates = 0, updateElements = 0;
            for (int64_t i = n + 1; i < instruction.operandCount(); ++i) {
                updates += CostAnalysis::byteSize(instruction.operand(i)->shape());
                updateElements += elements(instruction.operand(i)->shape());
            }
            double indices = CostAnalysis::byteSize(instruction.operand(n)->shape());
            cost.bytesRead = 2 * updates + indices;  // the updates and the slices they update
            cost.bytesWritten = updates;
            cost.flops = updateElements * applyFlops(instruction.calledComputation("to_apply"));
            return cost;
        }
        default: return cost;
    }
}

InstructionCost Analyzer::algorithm(const HloInstruction& instruction, InstructionCost cost) {
    const Shape& shape = instruction.shape();
    switch (instruction.opcode()) {
        case HloOpcode::kSort: {
            if (instruction.operandCount() == 0) return cost;
            const Shape& keys = instruction.operand(0)->shape();
            double total = elements(keys);
            double n = 1;
            if (keys.isArray() && instruction.hasDimensions() && !instruction.dimensions().empty())
                n = product(keys, {instruction.dimensions(0)});
            else if (keys.isArray() && keys.rank() > 0)
                n = static_cast<double>(keys.dimensions(keys.rank() - 1));
            if (n > 1)
                cost.flops = total * std::log2(n) * applyFlops(instruction.calledComputation("to_apply"));
            return cost;
        }
        case HloOpcode::kTopK: {
            if (instruction.operandCount() == 0) return cost;
            const Shape& input = instruction.operand(0)->shape();
            double k = 1;
            if (instruction.extra() && instruction.extra()->topK) k = static_cast<double>(*instruction.extra()->topK);
            cost.flops = elements(input) * std::max(1.0, std::log2(std::max(2.0, k)));
            return cost;
        }
        case HloOpcode::kFft: {
            double n = 1;
            for (int64_t length : instruction.extra() ? instruction.extra()->fftLength : std::vector<int64_t>{})
                n *= static_cast<double>(length);
            if (n <= 1 || instruction.operandCount() == 0) return cost;
            std::string_view type = instruction.extra() && instruction.extra()->fftType
                                        ? std::string_view(*instruction.extra()->fftType) : "FFT";
            double timeDomain = type == "IRFFT" ? elements(shape) : elements(instruction.operand(0)->shape());
            double batch = std::max(1.0, timeDomain / n);
            cost.flops = batch * 5 * n * std::log2(n);
            return cost;
        }
        case HloOpcode::kBatchNormTraining:
            cost.flops = 7 * elements(instruction.operand(0)->shape());
            cost.transcendentals = firstElements(instruction.operand(1)->shape());
            return cost;
        case HloOpcode::kBatchNormInference:
            cost.flops = 4 * elements(shape);
            cost.transcendentals = firstElements(instruction.operand(1)->shape());
            return cost;
        case HloOpcode::kBatchNormGrad:
            cost.flops = 11 * elements(instruction.operand(0)->shape());
            cost.transcendentals = firstElements(instruction.operand(1)->shape());
            return cost;
        case HloOpcode::kCholesky: {
            const Shape& a = instruction.operand(0)->shape();
            if (a.isArray() && a.rank() >= 2) {
                double n = static_cast<double>(a.dimensions(a.rank() - 1));
                cost.flops = elements(a) / (n * n) * n * n * n / 3;
                cost.transcendentals = elements(a) / (n * n) * n;
            }
            return cost;
        }
        case HloOpcode::kTriangularSolve: {
            const Shape& a = instruction.operand(0)->shape();
            if (a.isArray() && a.rank() >= 2) {
                double n = static_cast<double>(a.dimensions(a.rank() - 1));
                cost.flops = elements(shape) * n;  // n^2 per right-hand side column
            }
            return cost;
        }
        default: return cost;
    }
}

InstructionCost Analyzer::controlFlow(const HloInstruction& instruction, InstructionCost cost) {
    switch (instruction.opcode()) {
        case HloOpcode::kWhile: {
            InstructionCost perIteration;
            if (const HloComputation* body = instruction.whileBody()) perIteration += computation(*body);
            if (const HloComputation* condition = instruction.whileCondition())
                perIteration += computation(*condition);
            std::optional<int64_t> trips = CostAnalysis::whileTripCount(instruction);
            if (!trips) {
                if (m_flagged.insert(&instruction).second) unknownTripCountLoops.push_back(instruction.name());
                trips = 1;
            }
            InstructionCost total = perIteration.scaled(static_cast<double>(*trips));
            total.outputBytes = cost.outputBytes;
            return total;
        }
        case HloOpcode::kCall:
        case HloOpcode::kAsyncStart: {
            InstructionCost total;
            for (const HloComputation* callee : instruction.calledComputations())
                if (callee != nullptr) total += computation(*callee);
            total.outputBytes = cost.outputBytes;
            return total;
        }
        case HloOpcode::kConditional: {
            InstructionCost best;
            bool first = true;
            for (const HloComputation* branch : instruction.calledComputations()) {
                if (branch == nullptr) continue;
                InstructionCost c = computation(*branch);
                auto weight = [](const InstructionCost& x) {
                    return x.flops + x.transcendentals + x.bytesAccessed();
                };
                if (first || weight(c) > weight(best)) best = c;
                first = false;
            }
            if (instruction.operandCount() > 0)
                best.bytesRead += CostAnalysis::byteSize(instruction.operand(0)->shape());
            best.outputBytes = cost.outputBytes;
            return best;
        }
        default: return cost;
    }
}

}  // namespace

double CostAnalysis::byteSize(const Shape& shape) {
    if (shape.isTuple()) {
        double total = 0;
        for (const Shape& element : shape.tupleShapes()) total += byteSize(element);
        return total;
    }
    if (shape.isBuffer()) return shape.tupleCount() > 0 ? byteSize(shape.tupleShape(0)) : 0;
    if (!shape.isArray()) return 0;
    double bits = static_cast<double>(primitive_util::bitWidth(shape.elementType()));
    return std::ceil(static_cast<double>(shape.elementCount()) * bits / 8.0);
}

bool CostAnalysis::isTranscendental(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kExp:
        case HloOpcode::kExpm1:
        case HloOpcode::kLog:
        case HloOpcode::kLog1p:
        case HloOpcode::kSin:
        case HloOpcode::kCos:
        case HloOpcode::kTan:
        case HloOpcode::kTanh:
        case HloOpcode::kLogistic:
        case HloOpcode::kSqrt:
        case HloOpcode::kRsqrt:
        case HloOpcode::kCbrt:
        case HloOpcode::kPower:
        case HloOpcode::kErf:
        case HloOpcode::kAtan2:
        case HloOpcode::kAcos:
        case HloOpcode::kAcosh:
        case HloOpcode::kAsin:
        case HloOpcode::kAsinh:
        case HloOpcode::kAtan:
        case HloOpcode::kAtanh:
        case HloOpcode::kCosh:
        case HloOpcode::kSinh:
            return true;
        default:
            return false;
    }
}

bool CostAnalysis::isFree(const HloInstruction& instruction) { return isFreeOpcode(instruction.opcode()); }

OpClass CostAnalysis::opClassOf(const HloInstruction& instruction) {
    switch (instruction.opcode()) {
        case HloOpcode::kDot:
        case HloOpcode::kRaggedDot:
        case HloOpcode::kScaledDot:
            return OpClass::kDot;
        case HloOpcode::kConvolution:
            return OpClass::kConvolution;
        case HloOpcode::kReduce:
        case HloOpcode::kReduceWindow:
        case HloOpcode::kSelectAndScatter:
        case HloOpcode::kSort:
        case HloOpcode::kTopK:
        case HloOpcode::kScatter:
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kBatchNormTraining:
        case HloOpcode::kBatchNormGrad:
            return OpClass::kReduction;
        case HloOpcode::kFusion: {
            const HloComputation* fused = instruction.fusedComputation();
            if (fused == nullptr) return OpClass::kElementwise;
            // The heaviest class inside: dot > convolution > reduction >
            // transcendental > elementwise > data movement.
            auto rank = [](OpClass c) {
                switch (c) {
                    case OpClass::kDot: return 5;
                    case OpClass::kConvolution: return 4;
                    case OpClass::kReduction: return 3;
                    case OpClass::kTranscendental: return 2;
                    case OpClass::kElementwise: return 1;
                    case OpClass::kDataMovement: return 0;
                }
                return 0;
            };
            OpClass best = OpClass::kDataMovement;
            for (const auto& inner : fused->instructions()) {
                if (isFreeOpcode(inner->opcode())) continue;
                OpClass c = opClassOf(*inner);
                if (rank(c) > rank(best)) best = c;
            }
            return best;
        }
        default:
            break;
    }
    if (isTranscendental(instruction.opcode())) return OpClass::kTranscendental;
    if (isDataMovementOpcode(instruction.opcode()) || isFreeOpcode(instruction.opcode()))
        return OpClass::kDataMovement;
    return OpClass::kElementwise;
}

std::optional<int64_t> CostAnalysis::whileTripCount(const HloInstruction& whileInstruction) {
    if (whileInstruction.opcode() != HloOpcode::kWhile) return std::nullopt;
    if (auto fromConfig = tripCountFromBackendConfig(whileInstruction)) return fromConfig;
    return tripCountFromPattern(whileInstruction);
}

InstructionCost CostAnalysis::of(const HloInstruction& instruction) {
    Analyzer analyzer;
    return analyzer.instruction(instruction);
}

InstructionCost CostAnalysis::ofFusion(const HloInstruction& fusion) {
    Analyzer analyzer;
    return analyzer.fusion(fusion);
}

InstructionCost CostAnalysis::ofComputation(const HloComputation& computation) {
    Analyzer analyzer;
    return analyzer.computation(computation);
}

StatusOr<ModuleCost> CostAnalysis::ofModule(const HloModule& module) {
    const HloComputation* entry = module.entryComputation();
    if (entry == nullptr) return failedPrecondition("module '" + module.name() + "' has no entry computation");
    Analyzer analyzer;
    ModuleCost cost;
    cost.total = analyzer.computation(*entry);
    cost.unknownTripCountLoops = std::move(analyzer.unknownTripCountLoops);
    cost.unknownCostInstructions = std::move(analyzer.unknownCostInstructions);
    return cost;
}

}  // namespace hloscope
