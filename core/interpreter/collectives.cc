// Collectives on a single participant, as the evaluator computes them
// (between devices: collectives_devices.cc):
// with one participant in its group a collective passes its operands
// through; collective-permute keeps its operand when a source_target pair
// sends device 0's data to itself and gives zeros otherwise; the async
// start/done halves pair operands and results in tuples. The backends
// (compiler/backends/cpu, gpu) follow the same rules through
// collectiveParticipantCount() and collectivePermuteKeepsOperand().
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "core/ir/collective_groups.h"
#include "core/interpreter/interpreter_internal.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/hlo_module.h"

namespace hloscope::evaluator {

namespace {

// Size of the largest replica group in `replica_groups=` text ("{{0,1},{2,3}}"
// or the iota form "[2,2]<=[4]"); nullopt when the list is empty or absent.
std::optional<int64_t> largestReplicaGroup(std::optional<std::string_view> text) {
    if (!text) return std::nullopt;
    std::string_view t = *text;
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    if (t.empty()) return std::nullopt;
    if (t.front() == '[') {
        size_t close = t.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        std::string_view dims = t.substr(1, close - 1);
        size_t comma = dims.rfind(',');
        std::string_view last = comma == std::string_view::npos ? dims : dims.substr(comma + 1);
        int64_t value = 0;
        for (char c : last)
            if (c >= '0' && c <= '9') value = value * 10 + (c - '0');
        return value;
    }
    int64_t best = 0, count = 0, depth = 0;
    bool inNumber = false, any = false;
    for (char c : t) {
        bool digit = c >= '0' && c <= '9';
        if (digit && !inNumber) {
            ++count;
            any = true;
        }
        inNumber = digit;
        if (c == '{') {
            ++depth;
            if (depth == 2) count = 0;
        } else if (c == '}') {
            if (depth == 2) best = std::max(best, count);
            --depth;
        }
    }
    if (!any) return std::nullopt;
    return best;
}

}  // namespace

int64_t deviceCount(const HloInstruction& instruction) {
    const HloModule* module =
        instruction.parent() != nullptr ? instruction.parent()->parent() : nullptr;
    if (module == nullptr) return 1;
    return module->replicaCount().value_or(1) * module->numPartitions().value_or(1);
}

// Number of participants in one group of a collective.
int64_t participantCount(const HloInstruction& instruction) {
    if (auto size = largestReplicaGroup(instruction.attribute("replica_groups"))) return *size;
    return deviceCount(instruction);
}

Literal operandsAsResult(Operands operands) {
    if (operands.size() == 1) return *operands[0];
    std::vector<Literal> elements;
    for (const Literal* operand : operands) elements.push_back(*operand);
    return Literal::makeTuple(std::move(elements));
}

// A literal of tuple `shape` with elements 0 and 1 given and zeros elsewhere
// (the (operands, result, context...) tuples of async "start" ops).
Literal startTuple(const Shape& shape, Literal first, Literal second) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tupleCount(); ++i)
        elements.push_back(i == 0   ? std::move(first)
                           : i == 1 ? std::move(second)
                                    : Literal(shape.tupleShape(i)));
    return Literal::makeTuple(std::move(elements));
}

bool sameArrayShape(const Shape& a, const Shape& b) {
    if (a.isTuple() != b.isTuple()) return false;
    if (a.isTuple()) {
        if (a.tupleCount() != b.tupleCount()) return false;
        for (int64_t i = 0; i < a.tupleCount(); ++i)
            if (!sameArrayShape(a.tupleShape(i), b.tupleShape(i))) return false;
        return true;
    }
    return a.elementType() == b.elementType() && a.dimensions() == b.dimensions();
}

Status copyRaggedUpdates(const HloInstruction& instruction, Literal& output, const Literal& input,
                         const Literal& inputOffsets, const Literal& sendSizes,
                         const Literal& outputOffsets, int64_t receiver, int64_t members,
                         int64_t sender) {
    const std::string from = members > 1 ? " of member " + std::to_string(sender) : "";
    if (input.isTuple() || output.isTuple() || input.shape().rank() == 0 ||
        output.shape().rank() == 0 || input.elementType() != output.elementType())
        return invalid(instruction,
                       "ragged-all-to-all input and output must be arrays of one "
                       "element type with rows");
    const int64_t updates = inputOffsets.elementCount();
    if (sendSizes.elementCount() != updates || outputOffsets.elementCount() != updates ||
        updates % members != 0)
        return invalid(instruction, "ragged-all-to-all offsets" + from + " hold " +
                                        std::to_string(updates) + ", " +
                                        std::to_string(sendSizes.elementCount()) + " and " +
                                        std::to_string(outputOffsets.elementCount()) +
                                        " updates, not the same multiple of the " +
                                        std::to_string(members) + " members");
    const int64_t inRows = input.shape().dimensions(0);
    const int64_t outRows = output.shape().dimensions(0);
    const int64_t rowBytes = outRows == 0 ? 0 : output.sizeInBytes() / outRows;
    if (inRows > 0 && outRows > 0 && input.sizeInBytes() / inRows != rowBytes)
        return invalid(instruction, "ragged-all-to-all input and output rows differ");
    const int64_t perMember = updates / members;
    for (int64_t u = 0; u < perMember; ++u) {
        const int64_t k = receiver * perMember + u;
        const int64_t inOffset = inputOffsets.getAsInt64(k);
        const int64_t size = sendSizes.getAsInt64(k);
        const int64_t outOffset = outputOffsets.getAsInt64(k);
        if (size < 0 || inOffset < 0 || outOffset < 0 || inOffset + size > inRows ||
            outOffset + size > outRows)
            return invalid(instruction,
                           "ragged-all-to-all update " + std::to_string(k) + from + ": rows [" +
                               std::to_string(inOffset) + ", " + std::to_string(inOffset + size) +
                               ") of " + std::to_string(inRows) + " to rows [" +
                               std::to_string(outOffset) + ", " + std::to_string(outOffset + size) +
                               ") of " + std::to_string(outRows) + " out of range");
        if (size > 0 && rowBytes > 0)
            std::memcpy(static_cast<char*>(output.untypedData()) + outOffset * rowBytes,
                        static_cast<const char*>(input.untypedData()) + inOffset * rowBytes,
                        static_cast<size_t>(size * rowBytes));
    }
    return Status::ok();
}

StatusOr<Literal> evaluateCollective(const HloInstruction& instruction, Operands operands,
                                     EvalContext& context) {
    const HloOpcode opcode = instruction.opcode();
    // "done" halves: the start's result is the value (element 1 of a
    // (operand, result, ...) tuple for the tuple-shaped starts).
    if (opcode == HloOpcode::kAllReduceDone || opcode == HloOpcode::kAllGatherDone ||
        opcode == HloOpcode::kCollectivePermuteDone) {
        const Literal& start = *operands[0];
        if (start.isTuple() && !instruction.shape().isTuple() && start.tupleElements().size() >= 2)
            return start.tupleElement(1);
        if (start.isTuple() && start.tupleElements().size() >= 2 &&
            sameArrayShape(start.tupleElement(1).shape(), instruction.shape()) &&
            !sameArrayShape(start.shape(), instruction.shape()))
            return start.tupleElement(1);
        return start;
    }

    if (context.options().collectives != nullptr && exchangesBetweenDevices(opcode))
        return evaluateCollectiveOnDevices(instruction, operands, context);

    if (opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart) {
        if (isCombinedPermute(instruction)) {
            HLO_ASSIGN_OR_RETURN(const bool selfPair, collectivePermuteKeepsOperand(instruction));
            return selfPair ? operandsAsResult(operands) : Literal(instruction.shape());
        }
        if (operands.size() != 1)
            return unsupported(instruction,
                               "collective-permute with several operands in the in-place form "
                               "(input, output, offsets)");
        HLO_ASSIGN_OR_RETURN(const bool selfPair, collectivePermuteKeepsOperand(instruction));
        const Shape& resultShape =
            opcode == HloOpcode::kCollectivePermute || !instruction.shape().isTuple()
                ? instruction.shape()
                : instruction.shape().tupleShape(1);
        Literal result = selfPair ? *operands[0] : Literal(resultShape);
        if (opcode == HloOpcode::kCollectivePermuteStart && instruction.shape().isTuple())
            return startTuple(instruction.shape(), *operands[0], std::move(result));
        return result;
    }

    if (participantCount(instruction) != 1)
        return unsupported(
            instruction, std::string(hloOpcodeString(opcode)) + " with more than one participant");

    switch (opcode) {
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectiveReduce:
            return operandsAsResult(operands);
        case HloOpcode::kAllGather:
            return operandsAsResult(operands);
        case HloOpcode::kAllGatherStart: {
            const Shape& shape = instruction.shape();
            Literal value = operandsAsResult(operands);
            // Older form: (operand(s), result(s)).
            if (shape.isTuple() && shape.tupleCount() == 2 && !sameArrayShape(value.shape(), shape))
                return startTuple(shape, value, value);
            return value;
        }
        case HloOpcode::kRaggedAllToAll: {
            // Operands: input, output, input_offsets, send_sizes, output_offsets,
            // recv_sizes. One participant: its own updates into its output.
            if (operands.size() != 6)
                return invalid(instruction, "ragged-all-to-all needs 6 operands");
            Literal output = *operands[1];
            HLO_RETURN_IF_ERROR(copyRaggedUpdates(instruction, output, *operands[0], *operands[2],
                                                  *operands[3], *operands[4], 0, 1, 0));
            return output;
        }
        default:
            break;
    }
    return unsupported(instruction, std::string(hloOpcodeString(opcode)) + " is not supported");
}

}  // namespace hloscope::evaluator

namespace hloscope {

using evaluator::unsupported;

int64_t collectiveParticipantCount(const HloInstruction& instruction) {
    return evaluator::participantCount(instruction);
}

StatusOr<bool> collectivePermuteKeepsOperand(const HloInstruction& instruction) {
    if (evaluator::deviceCount(instruction) != 1)
        return unsupported(instruction, "collective-permute over more than one device");
    bool selfPair = false;
    if (auto pairs = instruction.attribute("source_target_pairs")) {
        // Pairs can only name device 0 here.
        for (char c : *pairs)
            if (c >= '1' && c <= '9')
                return unsupported(instruction, "collective-permute pair names another device");
        selfPair = pairs->find('0') != std::string_view::npos;
    }
    return selfPair;
}

}  // namespace hloscope
