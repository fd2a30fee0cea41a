// Collectives between the devices of a multi-device evaluation
// (core/interpreter/multi_device.h): each device gives its operands to the
// CollectiveExchange, which hands every member of its group all the
// group's values in group order (core/ir/collective_groups.h); each device then
// computes its own result from them, as XLA defines the op:
//   all-reduce          fold of the members' operands with to_apply, member 0
//                       first: ((v0 op v1) op v2) ...
//   all-gather          the members' operands concatenated along the gather
//                       dimension
//   reduce-scatter      the fold, cut along the scatter dimension into one
//                       slice per member; member i keeps slice i
//   all-to-all          member j's operand cut along the split dimension;
//                       member i concatenates every member's slice i, in
//                       member order (without dimensions: member i's result
//                       element j is member j's operand i)
//   collective-reduce   the fold for member 0 (the root), zeros for the others
//   collective-broadcast  member 0's operand (with StableHLO's dynamic root, the
//                       member its last operand names, per data operand)
//   collective-permute  the operand of the source whose pair targets this
//                       device's index in its group; zeros when none does
//                       (the combined form: every operand so, as a tuple)
//   ragged-all-to-all   this device's output operand, into which every
//                       member j, in member order, copies its updates for
//                       this device: rows [input_offsets[k], + send_sizes[k])
//                       of its input at its output_offsets[k], k = i*U .. i*U+U-1
//                       (i: this device's index, U updates per member)
// and send / recv between devices through the exchange's mailboxes
// (evaluatePeerTransfer).
#include <cstring>
#include <string>
#include <vector>

#include "core/ir/collective_groups.h"
#include "core/interpreter/interpreter_internal.h"
#include "core/interpreter/ops_internal.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/interpreter/multi_device.h"

namespace hloscope::evaluator {

namespace {

using Values = std::vector<Literal>;

// Row-major blocks around dimension `dim`: `outer` blocks before it, each
// holding dims[dim] runs of `inner` bytes.
struct Blocks {
    int64_t outer = 1;
    int64_t inner = 1;
};
Blocks blocksAround(const Shape& shape, int64_t dim) {
    Blocks blocks;
    for (int64_t d = 0; d < dim; ++d) blocks.outer *= shape.dimensions(d);
    for (int64_t d = dim + 1; d < shape.rank(); ++d) blocks.inner *= shape.dimensions(d);
    blocks.inner *= elementBytes(shape.elementType());
    return blocks;
}

bool sameArray(const Literal& a, const Literal& b) {
    return !a.isTuple() && !b.isTuple() && a.elementType() == b.elementType() &&
           a.shape().dimensions() == b.shape().dimensions();
}

Status checkSameShapes(const HloInstruction& instruction, const std::vector<const Literal*>& parts,
                       const DeviceGroupPosition& position, const DeviceGrid& grid) {
    for (size_t m = 1; m < parts.size(); ++m)
        if (!sameArray(*parts[0], *parts[m]))
            return invalid(instruction, deviceLabel(grid, position.group[m]) + " gives " +
                                            parts[m]->shape().toString(false) + " but " +
                                            deviceLabel(grid, position.group[0]) + " gives " +
                                            parts[0]->shape().toString(false));
    return Status::ok();
}

// Component k of every member's value (the values are tuples when the
// collective has several operands).
std::vector<const Literal*> component(const Values& values, size_t k, bool tuple) {
    std::vector<const Literal*> parts;
    for (const Literal& value : values)
        parts.push_back(tuple ? &value.tupleElement(int64_t(k)) : &value);
    return parts;
}

// Concatenation of `parts` along `dim` into a literal of `shape`.
StatusOr<Literal> concatenate(const HloInstruction& instruction,
                              const std::vector<const Literal*>& parts, int64_t dim,
                              const Shape& shape) {
    const Shape& partShape = parts[0]->shape();
    if (!shape.isArray() || dim < 0 || dim >= partShape.rank() ||
        shape.rank() != partShape.rank() ||
        shape.dimensions(dim) != partShape.dimensions(dim) * int64_t(parts.size()))
        return invalid(instruction, "result " + shape.toString(false) + " is not " +
                                        std::to_string(parts.size()) + " operands of " +
                                        partShape.toString(false) + " joined along dimension " +
                                        std::to_string(dim));
    Literal result(shape);
    const Blocks blocks = blocksAround(partShape, dim);
    const int64_t run = partShape.dimensions(dim) * blocks.inner;
    char* out = static_cast<char*>(result.untypedData());
    for (int64_t o = 0; o < blocks.outer; ++o)
        for (const Literal* part : parts) {
            std::memcpy(out, static_cast<const char*>(part->untypedData()) + o * run, size_t(run));
            out += run;
        }
    return result;
}

// Slice `index` of `count` equal slices of `value` along `dim`.
StatusOr<Literal> slice(const HloInstruction& instruction, const Literal& value, int64_t dim,
                        int64_t index, int64_t count) {
    const Shape& shape = value.shape();
    if (dim < 0 || dim >= shape.rank() || count < 1 || shape.dimensions(dim) % count != 0)
        return invalid(instruction, shape.toString(false) + " does not split into " +
                                        std::to_string(count) + " along dimension " +
                                        std::to_string(dim));
    std::vector<int64_t> dims = shape.dimensions();
    dims[size_t(dim)] /= count;
    Literal result(Shape::makeArray(shape.elementType(), dims));
    const Blocks blocks = blocksAround(shape, dim);
    const int64_t run = dims[size_t(dim)] * blocks.inner;
    const char* in = static_cast<const char*>(value.untypedData());
    char* out = static_cast<char*>(result.untypedData());
    for (int64_t o = 0; o < blocks.outer; ++o)
        std::memcpy(out + o * run, in + (o * count + index) * run, size_t(run));
    return result;
}

// ((v0 op v1) op v2) ... elementwise with the instruction's to_apply.
StatusOr<Literal> fold(const HloInstruction& instruction, const std::vector<const Literal*>& parts,
                       EvalContext& context) {
    const HloComputation* reducer = instruction.toApply();
    if (reducer == nullptr) return invalid(instruction, "missing to_apply computation");
    const PrimitiveType type = parts[0]->elementType();
    Literal acc = *parts[0];
    const int64_t n = acc.elementCount();
    if (std::optional<BinaryComputation> op = recognizeBinaryComputation(*reducer, type)) {
        dispatchPrimitiveType(type, [&]<PrimitiveType kType>() {
            using T = NativeType<kType>;
            T* a = acc.data<T>().data();
            for (size_t m = 1; m < parts.size(); ++m) {
                const T* x = parts[m]->data<T>().data();
                for (int64_t i = 0; i < n; ++i) {
                    if constexpr (kIsNarrowFloat<T>) {
                        const float l = toFloat(a[i]), r = toFloat(x[i]);
                        a[i] = fromFloat<NarrowFloatTraits<T>::kType>(
                            op->swapped ? applyBinary(op->kind, r, l)
                                        : applyBinary(op->kind, l, r));
                    } else {
                        a[i] = op->swapped ? applyBinary(op->kind, x[i], a[i])
                                           : applyBinary(op->kind, a[i], x[i]);
                    }
                }
            }
        });
        return acc;
    }
    ScalarCaller caller(context, instruction, *reducer, {type, type}, {type});
    const int64_t bytes = elementBytes(type);
    char* a = static_cast<char*>(acc.untypedData());
    for (size_t m = 1; m < parts.size(); ++m) {
        const char* x = static_cast<const char*>(parts[m]->untypedData());
        for (int64_t i = 0; i < n; ++i) {
            caller.setArgument(0, a + i * bytes);
            caller.setArgument(1, x + i * bytes);
            HLO_RETURN_IF_ERROR(caller.call());
            std::memcpy(a + i * bytes, caller.result(0), size_t(bytes));
        }
    }
    return acc;
}

int64_t onlyDimension(const HloInstruction& instruction) {
    return instruction.dimensions().size() == 1 ? instruction.dimensions(0) : -1;
}

// The array shapes of an op's results: one per operand (the tuple's
// elements, or the shape itself for one operand).
const Shape& resultShapeOf(const Shape& shape, size_t k, size_t count) {
    return count > 1 && shape.isTuple() ? shape.tupleShape(int64_t(k)) : shape;
}

StatusOr<Literal> raggedAllToAll(const HloInstruction& instruction, Operands operands,
                                 const Values& values, const DeviceGroupPosition& position) {
    if (operands.size() != 6) return invalid(instruction, "ragged-all-to-all needs 6 operands");
    const int64_t members = int64_t(position.group.size());
    Literal output = *operands[1];
    for (int64_t j = 0; j < members; ++j) {
        const Literal& sender = values[size_t(j)];
        HLO_RETURN_IF_ERROR(copyRaggedUpdates(instruction, output, sender.tupleElement(0),
                                              sender.tupleElement(2), sender.tupleElement(3),
                                              sender.tupleElement(4), position.index, members, j));
    }
    return output;
}

// all-reduce, reduce-scatter, collective-reduce: the members' values folded
// with to_apply (a reduce-scatter keeps its slice, a collective-reduce only
// at the root).
StatusOr<Literal> reduceOnDevices(const HloInstruction& instruction, Operands operands,
                                  const Values& values, const DeviceGroupPosition& position,
                                  const DeviceGrid& grid, EvalContext& context) {
    const HloOpcode opcode = instruction.opcode();
    const size_t members = position.group.size();
    const bool tuple = operands.size() > 1;
    std::vector<Literal> results;
    for (size_t k = 0; k < operands.size(); ++k) {
        std::vector<const Literal*> parts = component(values, k, tuple);
        HLO_RETURN_IF_ERROR(checkSameShapes(instruction, parts, position, grid));
        if (opcode == HloOpcode::kCollectiveReduce && position.index != 0) {
            results.emplace_back(parts[0]->shape());  // only the root receives
            continue;
        }
        HLO_ASSIGN_OR_RETURN(Literal folded, fold(instruction, parts, context));
        if (opcode == HloOpcode::kReduceScatter) {
            HLO_ASSIGN_OR_RETURN(folded,
                                 slice(instruction, folded, onlyDimension(instruction),
                                       position.index, int64_t(members)));
        }
        results.push_back(std::move(folded));
    }
    if (!tuple) return std::move(results[0]);
    return Literal::makeTuple(std::move(results));
}

// all-gather: the members' values concatenated.
StatusOr<Literal> allGatherOnDevices(const HloInstruction& instruction, Operands operands,
                                     const Values& values, const DeviceGroupPosition& position,
                                     const DeviceGrid& grid) {
    const HloOpcode opcode = instruction.opcode();
    const bool tuple = operands.size() > 1;
    const Shape& shape = instruction.shape();
    // all-gather-start's older form is (operands, results).
    const bool pairForm = opcode == HloOpcode::kAllGatherStart && shape.isTuple() &&
                          shape.tupleCount() == 2 &&
                          !sameArrayShape(operandsAsResult(operands).shape(), shape) &&
                          (tuple || !shape.tupleShape(0).isTuple());
    const Shape& results = pairForm ? shape.tupleShape(1) : shape;
    std::vector<Literal> gathered;
    for (size_t k = 0; k < operands.size(); ++k) {
        std::vector<const Literal*> parts = component(values, k, tuple);
        HLO_RETURN_IF_ERROR(checkSameShapes(instruction, parts, position, grid));
        HLO_ASSIGN_OR_RETURN(Literal joined,
                             concatenate(instruction, parts, onlyDimension(instruction),
                                         resultShapeOf(results, k, operands.size())));
        gathered.push_back(std::move(joined));
    }
    Literal result =
        tuple ? Literal::makeTuple(std::move(gathered)) : std::move(gathered[0]);
    if (pairForm) return startTuple(shape, operandsAsResult(operands), std::move(result));
    return result;
}

// all-to-all: this member's slice (or operand) of every member's value.
StatusOr<Literal> allToAllOnDevices(const HloInstruction& instruction, Operands operands,
                                    const Values& values, const DeviceGroupPosition& position) {
    const size_t members = position.group.size();
    const bool tuple = operands.size() > 1;
    const Shape& shape = instruction.shape();
    if (instruction.hasDimensions() && !instruction.dimensions().empty()) {
        if (tuple)
            return invalid(instruction,
                           "all-to-all with a split dimension takes one operand");
        const int64_t dim = onlyDimension(instruction);
        std::vector<Literal> slices;
        for (const Literal& value : values) {
            HLO_ASSIGN_OR_RETURN(Literal piece, slice(instruction, value, dim,
                                                      position.index, int64_t(members)));
            slices.push_back(std::move(piece));
        }
        std::vector<const Literal*> parts;
        for (const Literal& piece : slices) parts.push_back(&piece);
        return concatenate(instruction, parts, dim, shape);
    }
    if (operands.size() != members)
        return invalid(instruction, "all-to-all of " + std::to_string(operands.size()) +
                                        " operands among " + std::to_string(members) +
                                        " members");
    std::vector<Literal> received;
    for (const Literal& value : values)
        received.push_back(tuple ? value.tupleElement(position.index) : value);
    if (!tuple) return std::move(received[0]);
    return Literal::makeTuple(std::move(received));
}

// collective-broadcast: the root's value (StableHLO's dynamic root: one per
// operand).
StatusOr<Literal> broadcastOnDevices(const HloInstruction& instruction, Operands operands,
                                     const Values& values, const DeviceGroupPosition& position) {
    const size_t members = position.group.size();
    if (!instruction.attribute("has_dynamic_root")) return values[0];
    // StableHLO's dynamic root: the last operand holds, per data operand, the index in
    // the group of the member whose value everyone receives.
    const size_t data = operands.size() - 1;
    const Literal& roots = *operands.back();
    if (data < 1 || roots.isTuple() || roots.elementCount() != static_cast<int64_t>(data))
        return invalid(instruction, "a dynamic root needs one root index per operand");
    std::vector<Literal> received;
    for (size_t k = 0; k < data; ++k) {
        const int64_t root = roots.getAsInt64(static_cast<int64_t>(k));
        if (root < 0 || root >= static_cast<int64_t>(members))
            return invalid(instruction, "root " + std::to_string(root) + " of a group of " +
                                            std::to_string(members));
        received.push_back(
            values[static_cast<size_t>(root)].tupleElement(static_cast<int64_t>(k)));
    }
    if (data == 1) return std::move(received[0]);
    return Literal::makeTuple(std::move(received));
}

// collective-permute: the value of the member whose pair targets this one.
StatusOr<Literal> permuteOnDevices(const HloInstruction& instruction, Operands operands,
                                   const Values& values, const DeviceGroupPosition& position) {
    const HloOpcode opcode = instruction.opcode();
    const size_t members = position.group.size();
    const Shape& shape = instruction.shape();
    if (operands.size() != 1 && !isCombinedPermute(instruction))
        return unsupported(instruction,
                           "collective-permute with several operands in the in-place "
                           "form (input, output, offsets)");
    HLO_ASSIGN_OR_RETURN(auto pairs, collectivePermutePairs(instruction));
    const Shape& resultShape = opcode == HloOpcode::kCollectivePermute || !shape.isTuple()
                                   ? shape
                                   : shape.tupleShape(1);
    Literal result(resultShape);
    for (const auto& [source, target] : pairs) {
        if (source >= int64_t(members) || target >= int64_t(members))
            return invalid(instruction, "source_target_pairs names index " +
                                            std::to_string(std::max(source, target)) +
                                            " of a group of " + std::to_string(members));
        if (target == position.index) result = values[size_t(source)];
    }
    if (opcode == HloOpcode::kCollectivePermuteStart && shape.isTuple())
        return startTuple(shape, *operands[0], std::move(result));
    return result;
}

}  // namespace

StatusOr<Literal> evaluateCollectiveOnDevices(const HloInstruction& instruction, Operands operands,
                                              EvalContext& context) {
    CollectiveExchange& exchange = *context.options().collectives;
    const DeviceGrid& grid = exchange.grid();
    const HloOpcode opcode = instruction.opcode();
    const int64_t device = grid.device(context.options().replicaId, context.options().partitionId);
    HLO_ASSIGN_OR_RETURN(DeviceGroupPosition position, deviceGroupOf(instruction, grid, device));
    if (position.index < 0) return Literal(instruction.shape());  // left out of a broadcast

    Literal given = opcode == HloOpcode::kRaggedAllToAll
                        ? [&] {
                              std::vector<Literal> all;
                              for (const Literal* operand : operands) all.push_back(*operand);
                              return Literal::makeTuple(std::move(all));
                          }()
                        : operandsAsResult(operands);
    HLO_ASSIGN_OR_RETURN(
        CollectiveExchange::Values shared,
        exchange.exchange(instruction, position.group, position.index, std::move(given)));
    const Values& values = *shared;

    // A dispatch table: each collective has its own function.
    switch (opcode) {
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kCollectiveReduce:
        case HloOpcode::kReduceScatter:
            return reduceOnDevices(instruction, operands, values, position, grid, context);
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
            return allGatherOnDevices(instruction, operands, values, position, grid);
        case HloOpcode::kAllToAll:
            return allToAllOnDevices(instruction, operands, values, position);
        case HloOpcode::kCollectiveBroadcast:
            return broadcastOnDevices(instruction, operands, values, position);
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteStart:
            return permuteOnDevices(instruction, operands, values, position);
        case HloOpcode::kRaggedAllToAll:
            return raggedAllToAll(instruction, operands, values, position);
        default:
            break;
    }
    return unsupported(instruction,
                       std::string(hloOpcodeString(opcode)) + " between devices is not supported");
}

StatusOr<Literal> evaluatePeerTransfer(const HloInstruction& instruction, Operands operands,
                                       EvalContext& context) {
    CollectiveExchange& exchange = *context.options().collectives;
    const DeviceGrid& grid = exchange.grid();
    const int64_t device = grid.device(context.options().replicaId, context.options().partitionId);
    const Shape& shape = instruction.shape();
    const HloOpcode opcode = instruction.opcode();
    const std::string op(hloOpcodeString(opcode));
    auto context32 = [](int64_t value) { return Literal::scalar(PrimitiveType::U32, value); };
    const Literal token(Shape::makeToken());
    switch (opcode) {
        case HloOpcode::kSend:
        case HloOpcode::kRecv: {
            if (!shape.isTuple() || shape.tupleCount() != 3 || operands.empty())
                return invalid(instruction, op + " must give a (data, u32[], token[]) tuple");
            if (!isPeerTransfer(instruction))
                return unsupported(instruction, op + " without _xla_send_recv_source_target_pairs "
                                                     "(no peer device named)");
            HLO_ASSIGN_OR_RETURN(PeerLinks links, peerLinks(instruction, grid, device));
            if (opcode == HloOpcode::kSend) {
                const Literal& data = *operands[0];
                if (!sameArrayShape(data.shape(), shape.tupleShape(0)))
                    return invalid(instruction, "send's data differs from its result's");
                if (links.target >= 0) exchange.post(device, links.target, data);
                return Literal::makeTuple({data, context32(0), token});
            }
            const int64_t ticket = links.source >= 0 ? exchange.book(links.source, device) : 0;
            return Literal::makeTuple({Literal(shape.tupleShape(0)), context32(ticket), token});
        }
        case HloOpcode::kRecvDone: {
            if (operands.size() != 1 || !operands[0]->isTuple() ||
                operands[0]->tupleElements().size() != 3 || !shape.isTuple() ||
                shape.tupleCount() != 2)
                return invalid(instruction,
                               "recv-done takes a recv's (data, u32[], token[]) and "
                               "gives (data, token[])");
            const Literal& recv = *operands[0];
            const int64_t ticket = recv.tupleElement(1).getAsInt64(0);
            Literal data = recv.tupleElement(0);
            if (ticket != 0) {
                HLO_ASSIGN_OR_RETURN(data, exchange.take(instruction, device, ticket));
            }
            if (!sameArrayShape(data.shape(), shape.tupleShape(0)))
                return invalid(instruction, "recv-done receives " + data.shape().toString(false) +
                                                " but gives " +
                                                shape.tupleShape(0).toString(false));
            return Literal::makeTuple({std::move(data), token});
        }
        case HloOpcode::kSendDone:
            return token;
        default:
            return invalid(instruction, op + " is not a send or recv");
    }
}

}  // namespace hloscope::evaluator
