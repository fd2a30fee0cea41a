// HloVerifier checks of the opcode families with module-level context:
// collectives (replica groups, shard counts, source-target pairs), async
// chains and custom calls (aliasing, well-known targets).
#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "core/ir/async_wrapping.h"
#include "core/verifier/hlo_verifier_internal.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::verifier_internal {
namespace {

using shape_inference_internal::boolAttribute;
using shape_inference_internal::compatible;
using shape_inference_internal::intAttribute;
using shape_inference_internal::parsePairs;
using shape_inference_internal::parseReplicaGroups;
using shape_inference_internal::str;

std::string opName(const HloInstruction& instruction) {
    return std::string(hloOpcodeString(instruction.opcode()));
}

// A buffer shape b(T) aliases like its array T.
const Shape& unwrapBuffer(const Shape& shape) {
    return shape.isBuffer() && shape.tupleCount() == 1 ? shape.tupleShape(0) : shape;
}

const HloModule* moduleOf(const HloInstruction& instruction) {
    return instruction.parent() ? instruction.parent()->parent() : nullptr;
}

int64_t replicaCount(const HloInstruction& instruction) {
    const HloModule* module = moduleOf(instruction);
    return module && module->replicaCount() ? *module->replicaCount() : 1;
}

int64_t partitionCount(const HloInstruction& instruction) {
    const HloModule* module = moduleOf(instruction);
    return module && module->numPartitions() ? *module->numPartitions() : 1;
}

// The shared rule (collective_groups.cc), its error placed at the instruction.
StatusOr<GroupMode> groupMode(const HloInstruction& instruction) {
    StatusOr<GroupMode> mode = collectiveGroupMode(instruction);
    if (mode.isOk()) return mode;
    std::string message = mode.status().message();
    const std::string prefix = "%" + instruction.name() + ": ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    return instructionError(instruction, message);
}

std::string_view groupModeName(GroupMode mode) { return collectiveGroupModeName(mode); }

using Groups = std::vector<std::vector<int64_t>>;

// nullopt when the groups use a form we do not model (e.g. the mesh-axes
// form `mesh['x'=2,'y'=2] {'y'}`); such instructions skip group checks.
std::optional<Groups> replicaGroups(const HloInstruction& instruction) {
    auto text = instruction.attribute("replica_groups");
    if (!text) return Groups{};
    return parseReplicaGroups(*text);
}

Status checkReplicaGroups(const HloInstruction& instruction, const Groups& groups, GroupMode mode,
                          bool uniformSize) {
    if (groups.empty()) {
        if (mode == GroupMode::kFlattenedId) {
            return instructionError(instruction, "Replica groups must be specified in flattened-id mode");
        }
        return Status::ok();
    }
    std::set<int64_t> seen;
    for (const auto& group : groups) {
        if (group.empty()) {
            return instructionError(instruction, "Instruction cannot have an empty replica group");
        }
        for (int64_t id : group) {
            if (!seen.insert(id).second) {
                return instructionError(instruction, "Replica " + std::to_string(id) +
                                                         " is repeated in instruction's replica-groups");
            }
        }
    }
    int64_t n = static_cast<int64_t>(seen.size());
    for (int64_t i = 0; i < n; ++i) {
        if (!seen.count(i)) {
            return instructionError(instruction, "Replica " + std::to_string(i) +
                                                     " is not named in instruction's replica-groups");
        }
    }
    int64_t replicas = replicaCount(instruction);
    int64_t partitions = partitionCount(instruction);
    int64_t expected = 1;
    std::string what;
    switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition:
        expected = replicas;
        what = "replicas";
        break;
    case GroupMode::kCrossPartition:
        expected = partitions;
        what = "partitions";
        break;
    case GroupMode::kFlattenedId:
        expected = replicas * partitions;
        what = "flattened IDs";
        break;
    }
    if (expected != 1 && n != expected) {
        return instructionError(instruction, "In " + std::string(groupModeName(mode)) +
                                                 " mode, replica groups should contain " +
                                                 std::to_string(expected) + " " + what +
                                                 ", but found " + std::to_string(n));
    }
    if (uniformSize) {
        size_t size = groups[0].size();
        for (const auto& group : groups) {
            if (group.size() != size) {
                return instructionError(instruction, "Replica groups expected to be of uniform size");
            }
        }
    }
    return Status::ok();
}

int64_t subgroupSize(const HloInstruction& instruction, const Groups& groups, GroupMode mode) {
    switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition: {
        int64_t size = groups.empty() ? replicaCount(instruction)
                                      : static_cast<int64_t>(groups[0].size());
        if (mode == GroupMode::kCrossReplicaAndPartition) size *= partitionCount(instruction);
        return size;
    }
    case GroupMode::kFlattenedId: return groups.empty() ? 1 : static_cast<int64_t>(groups[0].size());
    case GroupMode::kCrossPartition:
        return groups.empty() ? partitionCount(instruction) : static_cast<int64_t>(groups[0].size());
    }
    return 1;
}

int64_t ceilOfRatio(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

Status checkShardCount(const HloInstruction& instruction, int64_t shardCount, int64_t subgroup) {
    if (subgroup != 1 && shardCount != subgroup) {
        return instructionError(instruction, "shard_count = " + std::to_string(shardCount) +
                                                 ", subgroup_size = " + std::to_string(subgroup) +
                                                 ": the gathered/scattered dimension does not match "
                                                 "the replica group size");
    }
    return Status::ok();
}

Status checkBufferOffset(const HloInstruction& instruction, const Shape& buffer, const Shape& offset) {
    if (!offset.isTuple()) return instructionError(instruction, "Buffer offset is not tuple.");
    bool allArrays = true;
    bool allTuples = true;
    for (const Shape& element : offset.tupleShapes()) {
        allArrays = allArrays && element.isArray();
        allTuples = allTuples && element.isTuple();
    }
    if (!allArrays && !allTuples) {
        return instructionError(instruction, "Buffer offset should either be a tuple of arrays or a "
                                             "tuple of tuples.");
    }
    if (allTuples) {
        for (const Shape& element : offset.tupleShapes()) {
            if (element.tupleCount() != buffer.rank()) {
                return instructionError(instruction, "Buffer offset index should have the same number "
                                                     "of elements as the buffer's rank.");
            }
        }
    } else if (offset.tupleCount() != buffer.rank()) {
        return instructionError(instruction, "Buffer offset index should have the same number of "
                                             "elements as the buffer's rank.");
    }
    return Status::ok();
}

bool isInplaceCollectivePermute(const HloInstruction& instruction) {
    return instruction.operandCount() == 4 && instruction.operand(2)->shape().isTuple();
}

Status checkInplaceCollectivePermute(const HloInstruction& instruction) {
    if (!isInplaceCollectivePermute(instruction)) return Status::ok();
    const Shape& input = instruction.operand(0)->shape();
    const Shape& output = instruction.operand(1)->shape();
    const Shape& inputOffset = instruction.operand(2)->shape();
    const Shape& outputOffset = instruction.operand(3)->shape();
    if (input.isArray() && output.isArray()) {
        HLO_RETURN_IF_ERROR(checkBufferOffset(instruction, input, inputOffset));
        HLO_RETURN_IF_ERROR(checkBufferOffset(instruction, output, outputOffset));
    } else if (input.isTuple() && output.isTuple()) {
        if (input.tupleCount() != output.tupleCount()) {
            return instructionError(instruction, "Unmatching input buffers and output buffers.");
        }
        if (!inputOffset.isTuple() || inputOffset.tupleCount() != input.tupleCount()) {
            return instructionError(instruction, "Unmatching input buffers and input offset.");
        }
        for (int64_t i = 0; i < input.tupleCount(); ++i)
            HLO_RETURN_IF_ERROR(checkBufferOffset(instruction, input.tupleShape(i), inputOffset.tupleShape(i)));
        if (!outputOffset.isTuple() || outputOffset.tupleCount() != output.tupleCount()) {
            return instructionError(instruction, "Unmatching output buffers and output offset.");
        }
        for (int64_t i = 0; i < output.tupleCount(); ++i)
            HLO_RETURN_IF_ERROR(
                checkBufferOffset(instruction, output.tupleShape(i), outputOffset.tupleShape(i)));
    } else {
        return instructionError(instruction, "Unmatching input buffers and output buffers.");
    }
    return Status::ok();
}

Status checkSourceTargetPairs(const HloInstruction& instruction, GroupMode mode) {
    auto text = instruction.attribute("source_target_pairs");
    if (!text) return Status::ok();
    auto pairs = parsePairs(*text);
    if (!pairs) {
        return instructionError(instruction, "cannot parse source_target_pairs=" + std::string(*text));
    }
    int64_t limit = mode == GroupMode::kCrossReplica ? replicaCount(instruction)
                                                      : partitionCount(instruction);
    size_t allowed = 1;
    if (instruction.operandCount() == 4 && isInplaceCollectivePermute(instruction)) {
        const Shape& offsets = instruction.operand(2)->shape();
        if (instruction.operand(0)->shape().isArray()) {
            allowed = offsets.isTuple() ? static_cast<size_t>(offsets.tupleCount()) : 1;
        } else if (offsets.isTuple() && offsets.tupleCount() > 0 && offsets.tupleShape(0).isTuple()) {
            allowed = static_cast<size_t>(offsets.tupleShape(0).tupleCount());
        }
        allowed = std::max<size_t>(allowed, 1);
    }
    std::map<int64_t, size_t> sources;
    std::map<int64_t, size_t> targets;
    auto check = [&](int64_t id, std::map<int64_t, size_t>& seen, std::string_view role) -> Status {
        if (id < 0) {
            return instructionError(instruction, std::string(role) + " " + std::to_string(id) +
                                                     " in the instruction's source-target pair must "
                                                     "be >= 0");
        }
        if (limit != 1 && id >= limit) {
            return instructionError(instruction, std::string(role) + " " + std::to_string(id) +
                                                     " in the instruction's source-target pair must "
                                                     "be < " +
                                                     std::to_string(limit));
        }
        size_t& count = seen[id];
        if (count == allowed) {
            if (allowed == 1) {
                return instructionError(instruction, std::string(role) + " " + std::to_string(id) +
                                                         " appears more than once in instruction's "
                                                         "source-target pairs: " +
                                                         std::string(*text));
            }
            return instructionError(instruction, std::string(role) + " " + std::to_string(id) +
                                                     " appears more than " + std::to_string(allowed) +
                                                     " times in instruction's source-target pairs: " +
                                                     std::string(*text));
        }
        ++count;
        return Status::ok();
    };
    for (const auto& [source, target] : *pairs) {
        HLO_RETURN_IF_ERROR(check(source, sources, "Source"));
        HLO_RETURN_IF_ERROR(check(target, targets, "Target"));
    }
    return Status::ok();
}

}  // namespace

Status verifyCollective(const HloInstruction& instruction) {
    HloOpcode opcode = instruction.opcode();
    switch (opcode) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: {
        HLO_ASSIGN_OR_RETURN(GroupMode mode, groupMode(instruction));
        auto groups = replicaGroups(instruction);
        if (groups) HLO_RETURN_IF_ERROR(checkReplicaGroups(instruction, *groups, mode, /*uniformSize=*/false));
        if (auto channel = intAttribute(instruction, "channel_id"); channel && *channel <= 0) {
            return instructionError(instruction, "All reduce channel id must be greater than 0");
        }
        const HloComputation* reducer = instruction.toApply();
        if (!reducer) return instructionError(instruction, opName(instruction) + " requires to_apply=");
        if (reducer->parameterCount() != 2) {
            return instructionError(instruction, "all-reduce computation " + reducer->name() +
                                                     " must take 2 parameters, takes " +
                                                     std::to_string(reducer->parameterCount()));
        }
        break;
    }
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter: {
        HLO_ASSIGN_OR_RETURN(GroupMode mode, groupMode(instruction));
        auto groups = replicaGroups(instruction);
        if (!groups) break;
        HLO_RETURN_IF_ERROR(checkReplicaGroups(instruction, *groups, mode, true));
        if (instruction.dimensions().size() != 1 || instruction.operandCount() < 1) break;
        int64_t dim = instruction.dimensions(0);
        const Shape& operand = instruction.operand(0)->shape();
        const Shape& declared = instruction.shape();
        const Shape* output = &declared;
        if (opcode == HloOpcode::kAllGatherStart) {
            if (!declared.isTuple() || declared.tupleCount() < 2) break;  // inference reports it
            output = &declared.tupleShape(1);
        }
        if (instruction.operandCount() > 1) {
            if (!output->isTuple() || output->tupleCount() < 1) break;
            output = &output->tupleShape(0);
        }
        if (!operand.isArray() || !output->isArray() || dim < 0 || dim >= operand.rank() ||
            dim >= output->rank())
            break;
        int64_t shardCount = opcode == HloOpcode::kReduceScatter
                                 ? ceilOfRatio(operand.dimensions(dim), output->dimensions(dim))
                                 : ceilOfRatio(output->dimensions(dim), operand.dimensions(dim));
        HLO_RETURN_IF_ERROR(checkShardCount(instruction, shardCount, subgroupSize(instruction, *groups, mode)));
        break;
    }
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll: {
        HLO_ASSIGN_OR_RETURN(GroupMode mode, groupMode(instruction));
        auto groups = replicaGroups(instruction);
        if (!groups) break;
        HLO_RETURN_IF_ERROR(checkReplicaGroups(instruction, *groups, mode, true));
        // With empty groups the split count is the replica (or partition)
        // count, which only the module header can tell; skip when unset.
        const HloModule* module = moduleOf(instruction);
        bool countKnown = !groups->empty() ||
                          (module && (mode == GroupMode::kCrossReplica ? module->replicaCount().has_value()
                                                                       : module->numPartitions().has_value()));
        if (opcode == HloOpcode::kAllToAll && countKnown) {
            int64_t splitCount = subgroupSize(instruction, *groups, mode);
            bool hasSplitDimension = instruction.hasDimensions() && !instruction.dimensions().empty();
            if (hasSplitDimension) {
                if (instruction.operandCount() != 1) {
                    return instructionError(instruction, "all-to-all with a split dimension must "
                                                         "have one operand, found " +
                                                             std::to_string(instruction.operandCount()));
                }
                const Shape& operand = instruction.operand(0)->shape();
                int64_t d = instruction.dimensions(0);
                if (operand.isArray() && d >= 0 && d < operand.rank() && splitCount > 0 &&
                    operand.dimensions(d) != Shape::kUnboundedSize &&
                    operand.dimensions(d) % splitCount != 0) {
                    return instructionError(instruction,
                                            "The dimension size of split_dimension (" +
                                                std::to_string(operand.dimensions(d)) +
                                                ") must be divisible by split_count (" +
                                                std::to_string(splitCount) + ")");
                }
            } else if (instruction.operandCount() != splitCount) {
                return instructionError(instruction, "hlo->operand_count() == split_count failed: "
                                                     "all-to-all has " +
                                                         std::to_string(instruction.operandCount()) +
                                                         " operands but the split count is " +
                                                         std::to_string(splitCount));
            }
        }
        break;
    }
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: {
        HLO_ASSIGN_OR_RETURN(GroupMode mode, groupMode(instruction));
        HLO_RETURN_IF_ERROR(checkInplaceCollectivePermute(instruction));
        HLO_RETURN_IF_ERROR(checkSourceTargetPairs(instruction, mode));
        break;
    }
    default: break;
    }
    return Status::ok();
}

namespace {

// Parameter and result shapes of the computation an async chain runs.
struct AsyncSignature {
    std::vector<Shape> parameters;
    Shape result;
};

const HloInstruction* asyncChainDone(const HloInstruction* instruction) {
    int guard = 0;
    while (instruction && instruction->opcode() != HloOpcode::kAsyncDone && guard++ < 10000) {
        const HloInstruction* next = nullptr;
        for (const HloInstruction* user : instruction->users()) {
            if ((user->opcode() == HloOpcode::kAsyncUpdate || user->opcode() == HloOpcode::kAsyncDone) &&
                user->operandCount() > 0 && user->operand(0) == instruction) {
                next = user;
                break;
            }
        }
        instruction = next;
    }
    return instruction;
}

std::optional<AsyncSignature> asyncSignature(const HloInstruction& instruction) {
    const HloComputation* computation = instruction.calledComputation("calls");
    const HloInstruction* start = asyncChainStart(instruction);
    if (!computation && start) computation = start->calledComputation("calls");
    AsyncSignature signature;
    if (computation) {
        auto program = shape_inference_internal::programShape(computation);
        if (!program) return std::nullopt;
        signature.parameters = program->parameters;
        signature.result = program->result;
        return signature;
    }
    // `op-start` sugar a program built without its wrapper (the parser and the
    // JSON reader add one, core/ir/async_wrapping.h): its operands are those
    // bound before the done, its result the done's shape.
    if (!start) return std::nullopt;
    const HloInstruction* done = asyncChainDone(start);
    const HloInstruction* last = done && done->operandCount() > 0 ? done->operand(0) : start;
    const Shape& lastShape = last->shape();
    if (!lastShape.isTuple() || lastShape.tupleCount() < 2 || !lastShape.tupleShape(0).isTuple())
        return std::nullopt;
    signature.parameters = lastShape.tupleShape(0).tupleShapes();
    signature.result = done ? done->shape() : lastShape.tupleShape(1);
    return signature;
}

bool shapesSame(const Shape& a, const Shape& b, const HloVerifierOptions& options,
                bool ignoreMemorySpace = false) {
    if (!compatible(a, b)) return false;
    if (!options.layoutSensitive) return true;
    if (a.isTuple() && b.isTuple()) {
        for (int64_t i = 0; i < a.tupleCount(); ++i)
            if (!shapesSame(a.tupleShape(i), b.tupleShape(i), options, ignoreMemorySpace)) return false;
        return true;
    }
    if (!a.isArray() || !b.isArray()) return true;
    Layout la = effectiveLayout(a);
    Layout lb = effectiveLayout(b);
    if (ignoreMemorySpace) {
        la.setMemorySpace(0);
        lb.setMemorySpace(0);
    }
    return la == lb;
}

std::string shapeText(const Shape& shape) { return shape.toString(true); }

// Whether `bound` (the async shape at {1}) is a valid binding of `result`:
// the whole result, or a tuple that is a prefix of a tuple result (the empty
// tuple binds nothing).
bool isResultPrefix(const Shape& bound, const Shape& result, const HloVerifierOptions& options) {
    if (shapesSame(bound, result, options)) return true;
    if (!bound.isTuple()) return false;
    if (bound.tupleCount() == 0) return true;
    if (!result.isTuple() || bound.tupleCount() > result.tupleCount()) return false;
    for (int64_t i = 0; i < bound.tupleCount(); ++i)
        if (!shapesSame(bound.tupleShape(i), result.tupleShape(i), options)) return false;
    return true;
}

bool isParameterPrefix(const Shape& bound, const std::vector<Shape>& parameters,
                       const HloVerifierOptions& options) {
    if (!bound.isTuple() || bound.tupleCount() > static_cast<int64_t>(parameters.size())) return false;
    for (int64_t i = 0; i < bound.tupleCount(); ++i)
        if (!shapesSame(bound.tupleShape(i), parameters[static_cast<size_t>(i)], options)) return false;
    return true;
}

Status checkAsyncForm(const HloInstruction& instruction, const Shape& shape) {
    if (!shape.isTuple() || shape.tupleCount() < 2 || !shape.tupleShape(0).isTuple()) {
        return instructionError(instruction,
                                instruction.name() + " (opcode: " + opName(instruction) +
                                    ") expects the async shape to be in the form of ((op0_shape, "
                                    "op1_shape, ...), output_shape, ...), found " +
                                    str(shape));
    }
    return Status::ok();
}

Status checkAsyncAliasing(const HloInstruction& instruction, const AsyncSignature& signature,
                          const HloVerifierOptions& options) {
    auto text = instruction.attribute("output_to_operand_aliasing");
    if (!text) return Status::ok();
    auto aliases = parseOperandAliasing(*text);
    if (!aliases) {
        return instructionError(instruction, "cannot parse output_to_operand_aliasing=" + std::string(*text));
    }
    // For `op-start` sugar the aliasing belongs to the wrapped op: indices
    // refer to its result. Otherwise they refer to the fully bound async
    // shape ((parameters), result).
    bool sugar = !instruction.calledComputation("calls") && instruction.extra() &&
                 instruction.extra()->asyncWrappedOpcode;
    Shape fullShape = sugar ? signature.result
                            : Shape::makeTuple({Shape::makeTuple(signature.parameters), signature.result});
    for (const OperandAlias& alias : *aliases) {
        if (alias.outputIndex.empty() && !sugar) {
            return instructionError(instruction, "Output index should not be empty.");
        }
        if (alias.operandNumber < 0) {
            return instructionError(instruction, "Negative operand number in aliasing config.");
        }
        if (alias.operandNumber >= static_cast<int64_t>(signature.parameters.size())) {
            return instructionError(instruction, "Operand number " + std::to_string(alias.operandNumber) +
                                                     " in aliasing config is out of bounds.");
        }
        // Output indices refer to the async shape; an index beyond what is
        // bound yet refers to the fully bound shape ((parameters), result).
        const Shape* output = sugar ? subshape(fullShape, alias.outputIndex)
                                    : subshape(instruction.shape(), alias.outputIndex);
        if (!output && !sugar) output = subshape(fullShape, alias.outputIndex);
        if (!output) return instructionError(instruction, "Invalid aliasing output shape index.");
        const Shape* operand =
            subshape(signature.parameters[static_cast<size_t>(alias.operandNumber)], alias.operandIndex);
        if (!operand) return instructionError(instruction, "Invalid aliasing operand shape index.");
        // An empty tuple is an output that is not bound yet.
        if (output->isTuple() && output->tupleCount() == 0) continue;
        if (!shapesSame(unwrapBuffer(*operand), unwrapBuffer(*output), options)) {
            return instructionError(instruction, "Different aliasing shapes: " + shapeText(*operand) +
                                                     " vs " + shapeText(*output));
        }
    }
    return Status::ok();
}

}  // namespace

Status verifyAsync(const HloInstruction& instruction, const HloVerifierOptions& options) {
    HloOpcode opcode = instruction.opcode();
    auto signature = asyncSignature(instruction);
    const std::string prefix = opName(instruction);
    if (opcode == HloOpcode::kAsyncStart) {
        const Shape& shape = instruction.shape();
        HLO_RETURN_IF_ERROR(checkAsyncForm(instruction, shape));
        const Shape& bound = shape.tupleShape(0);
        if (bound.tupleCount() != instruction.operandCount()) {
            return instructionError(instruction, prefix + " expects " + std::to_string(bound.tupleCount()) +
                                                     " operands, found " +
                                                     std::to_string(instruction.operandCount()));
        }
        if (!signature) return Status::ok();
        if (!isParameterPrefix(bound, signature->parameters, options)) {
            return instructionError(instruction, prefix +
                                                     " expects the async shape at index {0} to be a "
                                                     "tuple with shapes that match the prefix of the "
                                                     "async computation parameter shape (" +
                                                     shapeText(bound) + ")");
        }
        for (int64_t i = 0; i < instruction.operandCount(); ++i) {
            if (!shapesSame(instruction.operand(i)->shape(), bound.tupleShape(i), options)) {
                return instructionError(instruction, prefix + " expects the shape of operand " +
                                                         std::to_string(i) +
                                                         " to match the async shape at index {0, " +
                                                         std::to_string(i) + "} (" +
                                                         shapeText(instruction.operand(i)->shape()) +
                                                         " vs " + shapeText(bound.tupleShape(i)) + ")");
            }
        }
        if (!isResultPrefix(shape.tupleShape(1), signature->result, options)) {
            return instructionError(instruction, prefix +
                                                     " expects the async shape at index {1} to be a "
                                                     "tuple with shapes that match the prefix of the "
                                                     "async computation result shape (" +
                                                     shapeText(shape.tupleShape(1)) + " vs " +
                                                     shapeText(signature->result) + ")");
        }
        return checkAsyncAliasing(instruction, *signature, options);
    }
    if (instruction.operandCount() < 1) {
        return instructionError(instruction, prefix + " expects at least one operand");
    }
    const HloInstruction* previous = instruction.operand(0);
    if (previous->opcode() != HloOpcode::kAsyncStart && previous->opcode() != HloOpcode::kAsyncUpdate) {
        if (opcode == HloOpcode::kAsyncUpdate) {
            return instructionError(instruction, "The first operand of a async-update instruction "
                                                 "needs to be AsyncStart or AsyncUpdate, found " +
                                                     opName(*previous));
        }
        return instructionError(instruction, "The operand of a async-done instruction needs to be "
                                             "async-start or async-update, found " +
                                                 opName(*previous));
    }
    const Shape& previousShape = previous->shape();
    if (!previousShape.isTuple() || previousShape.tupleCount() < 2 || !previousShape.tupleShape(0).isTuple())
        return Status::ok();  // reported at the previous instruction
    int64_t previouslyBound = previousShape.tupleShape(0).tupleCount();
    if (opcode == HloOpcode::kAsyncUpdate) {
        const Shape& shape = instruction.shape();
        HLO_RETURN_IF_ERROR(checkAsyncForm(instruction, shape));
        const Shape& bound = shape.tupleShape(0);
        int64_t newOperands = instruction.operandCount() - 1;
        int64_t newlyBound = bound.tupleCount() - previouslyBound;
        if (newOperands != newlyBound) {
            return instructionError(instruction, prefix + " has " + std::to_string(newOperands) +
                                                     " new operands, but the shape indicates " +
                                                     std::to_string(newlyBound) +
                                                     " new bound parameters");
        }
        if (!signature) return Status::ok();
        if (!isParameterPrefix(bound, signature->parameters, options)) {
            return instructionError(instruction, prefix +
                                                     " expects the async shape at index {0} to be a "
                                                     "tuple with shapes that match the prefix of the "
                                                     "async computation parameter shape (" +
                                                     shapeText(bound) + ")");
        }
        for (int64_t i = 1; i < instruction.operandCount(); ++i) {
            int64_t slot = previouslyBound + i - 1;
            if (!shapesSame(instruction.operand(i)->shape(), bound.tupleShape(slot), options)) {
                return instructionError(instruction, prefix + " expects the shape of operand " +
                                                         std::to_string(i) +
                                                         " to match the async shape at index {0, " +
                                                         std::to_string(slot) + "}");
            }
        }
        if (!isResultPrefix(shape.tupleShape(1), signature->result, options)) {
            return instructionError(instruction, prefix +
                                                     " expects the async shape at index {1} to be a "
                                                     "tuple with shapes that match the prefix of the "
                                                     "async computation result shape (" +
                                                     shapeText(shape.tupleShape(1)) + " vs " +
                                                     shapeText(signature->result) + ")");
        }
        return Status::ok();
    }
    // async-done
    if (!signature) return Status::ok();
    if (previouslyBound != static_cast<int64_t>(signature->parameters.size())) {
        return instructionError(instruction, prefix +
                                                 " expects the operands of the previous async "
                                                 "instruction to be fully bound (" +
                                                 std::to_string(previouslyBound) + " of " +
                                                 std::to_string(signature->parameters.size()) +
                                                 " parameters bound)");
    }
    if (!shapesSame(instruction.shape(), signature->result, options)) {
        return instructionError(instruction, prefix +
                                                 " expects its shape to match the async computation "
                                                 "result shape (" +
                                                 shapeText(instruction.shape()) + " vs " +
                                                 shapeText(signature->result) + ")");
    }
    return Status::ok();
}

Status verifyCustomCall(const HloInstruction& instruction, const HloVerifierOptions& options) {
    std::string_view target = instruction.customCallTarget();
    std::optional<std::vector<OperandAlias>> aliases;
    if (auto text = instruction.attribute("output_to_operand_aliasing")) {
        aliases = parseOperandAliasing(*text);
        if (!aliases) {
            return instructionError(instruction, "cannot parse output_to_operand_aliasing=" +
                                                     std::string(*text));
        }
        for (const OperandAlias& alias : *aliases) {
            if (alias.operandNumber < 0 || alias.operandNumber >= instruction.operandCount()) {
                return instructionError(instruction, "Invalid aliasing operand index " +
                                                         std::to_string(alias.operandNumber) + ".");
            }
            const Shape* operand = subshape(instruction.operand(alias.operandNumber)->shape(),
                                            alias.operandIndex);
            if (!operand) return instructionError(instruction, "Invalid aliasing operand shape index.");
            const Shape* output = subshape(instruction.shape(), alias.outputIndex);
            if (!output) return instructionError(instruction, "Invalid aliasing output shape index.");
            if (!shapesSame(unwrapBuffer(*operand), unwrapBuffer(*output), options,
                            /*ignoreMemorySpace=*/true)) {
                return instructionError(instruction, "Different aliasing shapes: " + shapeText(*operand) +
                                                         " vs " + shapeText(*output));
            }
        }
    }
    if (target == "Pin" || target == "Unpin") {
        if (!aliases || aliases->size() != 1) {
            return instructionError(instruction, "custom-call to " + std::string(target) +
                                                     " must have one output-to-operand aliasing");
        }
    }
    if (target == "GetRngSeed") {
        if (instruction.operandCount() != 0) {
            return instructionError(instruction, "custom-call to GetRngSeed must have 0 operands, found " +
                                                     std::to_string(instruction.operandCount()));
        }
        const Shape& shape = instruction.shape();
        if (!shape.isArray() || shape.elementType() != PrimitiveType::U64 || shape.rank() != 0) {
            return instructionError(instruction, "custom-call to GetRngSeed must return U64 type, got " +
                                                     str(shape));
        }
    }
    return Status::ok();
}

}  // namespace hloscope::verifier_internal
