// Collectives between the devices of a multi-device GPU plan, and the expansion of a built
// plan into per-device steps (PlanBuilder::planCollective, expandForDevices;
// gpu_plan_builder.h). Every device has an arena laid out alike, so a collective reads the
// group's operands at the same buffer in the other devices' arenas: device d's result is
// written by steps pinned to d, after every device's operand steps (the plan runs devices
// in lockstep). Values follow the interpreter's multi-device rules
// (core/interpreter/collectives_devices.cc):
//   all-reduce        a kernel folding the G members' operands with map(to_apply), member 0
//                     first (collective-reduce: for member 0, zeros for the others)
//   reduce-scatter    the same fold, sliced to member i's part (a kernel per member index)
//   all-gather        a concatenate kernel of the G operands
//   all-to-all        a kernel concatenating every member's slice i (with a split
//                     dimension), or copies of member j's operand i (the tuple form)
//   collective-broadcast, collective-permute  copies from the source device (memset zeros
//                     where a permute sends nothing; the combined form: per operand)
//   ragged-all-to-all gpu_plan_ragged.cc
#include <map>
#include <string>
#include <tuple>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::gpu_plan_internal {

// One collective between devices while PlanBuilder::planCollective plans it: the operands'
// and results' buffers, the kernels made so far, and the steps of each device.
struct PlanBuilder::Exchange {
    Exchange(PlanBuilder& planBuilder, const HloInstruction& collective)
        : builder(planBuilder),
          instruction(collective),
          opcode(collective.opcode()),
          op(hloOpcodeString(opcode)),
          dim(collective.dimensions().size() == 1 ? collective.dimensions(0) : -1) {}

    PlanBuilder& builder;
    const HloInstruction& instruction;
    HloOpcode opcode;
    std::string op;
    int64_t dim;  // the split or concatenated dimension, if the op has one (else -1)
    Leaves operands;
    Leaves results;
    // Kernels by (leaf, group size, member index); each device launches its own.
    std::map<std::tuple<size_t, int64_t, int64_t>, GpuKernelInfo> kernels;

    // Synthetic operands p0..p(G-1) of leaf k's shape, read from the members' arenas.
    std::vector<HloInstruction*> standIns(size_t k, int64_t members) {
        std::vector<HloInstruction*> params;
        const Shape& leaf = *operands.shapes[k];
        for (int64_t m = 0; m < members; ++m)
            params.push_back(builder.synthetic(std::make_unique<HloInstruction>(
                HloOpcode::kParameter, instruction.name() + ".member" + std::to_string(m),
                Shape(leaf.elementType(), leaf.dimensions()))));
        return params;
    }
    // map(to_apply) over the members' values, member 0 first.
    StatusOr<HloInstruction*> fold(const std::vector<HloInstruction*>& params) {
        HloComputation* reducer = instruction.toApply();
        if (!reducer) return notOnGpu(instruction, op + " without to_apply");
        HloInstruction* acc = params.front();
        for (size_t m = 1; m < params.size(); ++m) {
            HloInstruction* map = builder.synthetic(std::make_unique<HloInstruction>(
                HloOpcode::kMap, instruction.name() + ".fold" + std::to_string(m),
                Shape(acc->shape().elementType(), acc->shape().dimensions())));
            map->appendOperand(acc);
            map->appendOperand(params[m]);
            map->setCalledComputation("to_apply", reducer);
            acc = map;
        }
        return acc;
    }
    // Part `index` of `count` equal parts of `value` along `dim`.
    StatusOr<HloInstruction*> sliceOf(HloInstruction* value, int64_t index, int64_t count) {
        const Shape& from = value->shape();
        if (dim < 0 || dim >= from.rank() || from.dimensions(dim) % count != 0)
            return notOnGpu(instruction, op + ": " + from.toString(false) +
                                             " does not split into " + std::to_string(count) +
                                             " along dimension " + std::to_string(dim));
        std::vector<int64_t> dims = from.dimensions();
        const int64_t size = dims[static_cast<size_t>(dim)] / count;
        dims[static_cast<size_t>(dim)] = size;
        HloInstruction* slice = builder.synthetic(std::make_unique<HloInstruction>(
            HloOpcode::kSlice, instruction.name() + ".slice" + std::to_string(index),
            Shape(from.elementType(), dims)));
        std::vector<SliceDimension> bounds;
        for (int64_t d = 0; d < from.rank(); ++d)
            bounds.push_back(d == dim ? SliceDimension{index * size, (index + 1) * size, 1}
                                      : SliceDimension{0, from.dimensions(d), 1});
        slice->mutableExtra().slice = bounds;
        slice->appendOperand(value);
        return slice;
    }
    HloInstruction* concatenate(const std::vector<HloInstruction*>& parts, const Shape& to) {
        HloInstruction* joined = builder.synthetic(std::make_unique<HloInstruction>(
            HloOpcode::kConcatenate, instruction.name() + ".joined",
            Shape(to.elementType(), to.dimensions())));
        for (HloInstruction* part : parts) joined->appendOperand(part);
        joined->setDimensions({dim});
        return joined;
    }
    // What member `index`'s result leaf k is of the members' operands `params`.
    StatusOr<HloInstruction*> exchangedValue(const std::vector<HloInstruction*>& params, size_t k,
                                             int64_t members, int64_t index) {
        switch (opcode) {
            case HloOpcode::kAllReduce:
            case HloOpcode::kAllReduceStart:
            case HloOpcode::kCollectiveReduce:
                return fold(params);
            case HloOpcode::kReduceScatter: {
                HLO_ASSIGN_OR_RETURN(HloInstruction * folded, fold(params));
                return sliceOf(folded, index, members);
            }
            case HloOpcode::kAllGather:
            case HloOpcode::kAllGatherStart:
                return concatenate(params, *results.shapes[k]);
            case HloOpcode::kAllToAll: {
                std::vector<HloInstruction*> pieces;
                for (HloInstruction* param : params) {
                    HLO_ASSIGN_OR_RETURN(HloInstruction * piece, sliceOf(param, index, members));
                    pieces.push_back(piece);
                }
                return concatenate(pieces, *results.shapes[k]);
            }
            default:
                return notOnGpu(instruction, op + " between devices is not supported");
        }
    }
    StatusOr<GpuKernelInfo> kernelFor(size_t k, int64_t members, int64_t index) {
        const auto key = std::make_tuple(k, members, index);
        if (auto it = kernels.find(key); it != kernels.end()) return it->second;
        const std::vector<HloInstruction*> params = standIns(k, members);
        HLO_ASSIGN_OR_RETURN(HloInstruction * root, exchangedValue(params, k, members, index));
        if (!sameArrayShape(root->shape(), *results.shapes[k]))
            return notOnGpu(instruction, op + " computes " + root->shape().toString(false) +
                                             " but declares " + results.shapes[k]->toString(false));
        KernelSpec spec;
        spec.name = builder.entryName();
        spec.outputs = {root};
        spec.leaves.assign(params.begin(), params.end());
        HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, builder.m_emitter.emitKernel(spec));
        if (info.slices > 1)
            return internalError("%" + instruction.name() + ": split exchange kernel");
        ++builder.m_plan.kernels;
        kernels.emplace(key, info);
        return info;
    }
    void copyStep(int src, int64_t srcDevice, int dst, int64_t device, int64_t bytes) {
        builder.addCopy(instruction, instruction.name(), src, dst, bytes, device, srcDevice);
    }
    void zeroStep(int dst, int64_t device, int64_t bytes) {
        builder.addMemset(instruction, instruction.name() + ".zeros", dst, bytes, 0, device);
    }
    void zeroResults(int64_t device) {
        for (size_t k = 0; k < results.ids.size(); ++k)
            zeroStep(results.ids[k], device, denseBytes(*results.shapes[k]));
    }
    // collective-permute: a copy from the member that sends to member `index`, or zeros.
    Status permuteTo(int64_t device, const std::vector<int64_t>& group, int64_t index) {
        const int64_t members = static_cast<int64_t>(group.size());
        HLO_ASSIGN_OR_RETURN(auto pairs, collectivePermutePairs(instruction));
        int64_t source = -1;
        for (const auto& [from, to] : pairs) {
            if (from >= members || to >= members)
                return notOnGpu(instruction, "source_target_pairs names index " +
                                                 std::to_string(std::max(from, to)) +
                                                 " of a group of " + std::to_string(members));
            if (to == index) source = from;
        }
        for (size_t k = 0; k < results.ids.size(); ++k) {
            if (source >= 0) {
                copyStep(operands.ids[k], group[static_cast<size_t>(source)], results.ids[k],
                         device, denseBytes(*results.shapes[k]));
            } else {
                zeroStep(results.ids[k], device, denseBytes(*results.shapes[k]));
            }
        }
        return Status::ok();
    }
    // The tuple form of all-to-all: result element j is member j's operand `index`.
    Status allToAllCopies(int64_t device, const std::vector<int64_t>& group, int64_t index) {
        const int64_t members = static_cast<int64_t>(group.size());
        if (static_cast<int64_t>(operands.ids.size()) != members)
            return notOnGpu(instruction, "all-to-all of " + std::to_string(operands.ids.size()) +
                                             " operands among " + std::to_string(members) +
                                             " members");
        for (int64_t j = 0; j < members; ++j)
            copyStep(operands.ids[static_cast<size_t>(index)], group[static_cast<size_t>(j)],
                     results.ids[static_cast<size_t>(j)], device,
                     denseBytes(*results.shapes[static_cast<size_t>(j)]));
        return Status::ok();
    }
    // Member `index`'s results computed by exchange kernels reading the group's operands.
    Status exchangeKernels(int64_t device, const std::vector<int64_t>& group, int64_t index) {
        const int64_t members = static_cast<int64_t>(group.size());
        for (size_t k = 0; k < results.ids.size(); ++k) {
            if (denseBytes(*results.shapes[k]) == 0) continue;
            const bool perMember =
                opcode == HloOpcode::kReduceScatter || opcode == HloOpcode::kAllToAll;
            HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, kernelFor(k, members, perMember ? index : -1));
            std::vector<int> args{results.ids[k]};
            std::vector<int64_t> argDevices{device};
            for (int64_t member : group) {
                args.push_back(operands.ids[k]);
                argDevices.push_back(member);
            }
            GpuPlanStep step = launchStep(instruction, info, std::move(args));
            step.device = device;
            step.argDevices = std::move(argDevices);
            builder.m_plan.steps.push_back(std::move(step));
        }
        return Status::ok();
    }
    // A dispatch over the collectives: device `device`'s steps as member `index` of `group`
    // (null: left out of a collective-broadcast's groups, which gets zeros).
    Status planDevice(int64_t device, const std::vector<int64_t>* group, int64_t index) {
        if (group == nullptr) {
            zeroResults(device);
            return Status::ok();
        }
        switch (opcode) {
            case HloOpcode::kCollectiveBroadcast:
                for (size_t k = 0; k < results.ids.size(); ++k)
                    copyStep(operands.ids[k], group->front(), results.ids[k], device,
                             denseBytes(*results.shapes[k]));
                return Status::ok();
            case HloOpcode::kCollectivePermute:
            case HloOpcode::kCollectivePermuteStart:
                return permuteTo(device, *group, index);
            case HloOpcode::kAllToAll:
                if (!instruction.hasDimensions() || instruction.dimensions().empty())
                    return allToAllCopies(device, *group, index);
                return exchangeKernels(device, *group, index);
            case HloOpcode::kCollectiveReduce:
                // Only the root (member 0) receives the fold; the others get zeros.
                if (index != 0) {
                    zeroResults(device);
                    return Status::ok();
                }
                return exchangeKernels(device, *group, index);
            default:
                return exchangeKernels(device, *group, index);
        }
    }
};

Status PlanBuilder::planCollective(const HloInstruction& instruction, int64_t time) {
    const HloOpcode opcode = instruction.opcode();
    const Shape& shape = instruction.shape();
    const std::string op(hloOpcodeString(opcode));
    if (opcode == HloOpcode::kCollectiveBroadcast && instruction.attribute("has_dynamic_root"))
        return notOnGpu(instruction, "collective-broadcast whose root is known only at run time");
    if (opcode == HloOpcode::kRaggedAllToAll) return planRaggedAllToAll(instruction, time);
    Exchange exchange(*this, instruction);
    Leaves& operands = exchange.operands;
    for (const HloInstruction* operand : instruction.operands())
        operands.append(leavesOfValue(*operand));
    HLO_ASSIGN_OR_RETURN(DeviceGroups groups, collectiveDeviceGroups(instruction, m_grid));
    struct Position {
        const std::vector<int64_t>* group = nullptr;
        int64_t index = 0;
    };
    std::vector<Position> positions(static_cast<size_t>(m_grid.count()));
    for (const auto& group : groups)
        for (size_t i = 0; i < group.size(); ++i)
            positions[static_cast<size_t>(group[i])] = Position{&group, static_cast<int64_t>(i)};

    // The exchanged result: element 1 of the start ops' (operands, result) tuples.
    const bool permute =
        opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart;
    const bool permuteTuple = opcode == HloOpcode::kCollectivePermuteStart && shape.isTuple();
    const bool gatherPair = opcode == HloOpcode::kAllGatherStart && shape.isTuple() &&
                            shape.tupleCount() == 2 && leafCount(shape) == 2 * operands.ids.size();
    const Shape& resultShape = permuteTuple || gatherPair ? shape.tupleShape(1) : shape;
    const std::vector<const Shape*> resultLeaves = leavesOf(resultShape);
    if (permute && instruction.operandCount() != 1 && !isCombinedPermute(instruction))
        return notOnGpu(instruction, op + " with several operands in the in-place form");
    if (resultLeaves.size() != operands.ids.size())
        return notOnGpu(instruction, op + " whose result differs from the value it exchanges");
    Leaves& results = exchange.results;
    for (size_t k = 0; k < resultLeaves.size(); ++k) {
        results.ids.push_back(newBuffer(
            "%" + instruction.name() + (resultLeaves.size() > 1 ? "." + std::to_string(k) : ""),
            denseBytes(*resultLeaves[k]), time));
        results.shapes.push_back(resultLeaves[k]);
    }
    for (int64_t device = 0; device < m_grid.count(); ++device) {
        const Position& at = positions[static_cast<size_t>(device)];
        HLO_RETURN_IF_ERROR(exchange.planDevice(device, at.group, at.index));
    }
    for (int buffer : operands.ids) use(buffer, time);

    Leaves value = results;
    if (permuteTuple || gatherPair) {
        value = operands;
        value.append(results);
        for (int64_t k = 2; k < shape.tupleCount(); ++k)
            value.append(zeroLeaves(instruction, shape.tupleShape(k), time));
    }
    if (!sameLeaves(leavesOf(shape), value.shapes))
        return notOnGpu(instruction, op + " whose result differs from the value it passes on");
    m_leaves[&instruction] = value.ids;
    return Status::ok();
}

void PlanBuilder::expandForDevices() {
    const int64_t devices = m_grid.count();
    auto isControl = [](GpuStepKind kind) {
        return kind == GpuStepKind::kBranch || kind == GpuStepKind::kJump ||
               kind == GpuStepKind::kSwitch;
    };
    std::vector<GpuPlanStep> built = std::move(m_plan.steps);
    m_plan.steps.clear();
    // Where each built step starts among the expanded ones (targets are renumbered).
    std::vector<int> first(built.size() + 1, 0);
    int index = 0;
    for (size_t i = 0; i < built.size(); ++i) {
        first[i] = index;
        index += built[i].device < 0 && !isControl(built[i].kind) ? static_cast<int>(devices) : 1;
    }
    first[built.size()] = index;
    auto renumber = [&](int target) {
        return target >= 0 && static_cast<size_t>(target) <= built.size()
                   ? first[static_cast<size_t>(target)]
                   : target;
    };
    auto pin = [](GpuPlanStep& step, int64_t device) {
        step.device = device;
        for (GpuPlanStep& fallback : step.fallback) fallback.device = device;
    };
    for (GpuPlanStep& step : built) {
        if (isControl(step.kind)) {
            step.target = renumber(step.target);
            for (int& target : step.targets) target = renumber(target);
            pin(step, 0);
            m_plan.steps.push_back(std::move(step));
        } else if (step.device >= 0) {
            pin(step, step.device);
            m_plan.steps.push_back(std::move(step));
        } else {
            for (int64_t device = 0; device < devices; ++device) {
                GpuPlanStep copy = step;
                pin(copy, device);
                m_plan.steps.push_back(std::move(copy));
            }
        }
    }
    if (devices == 1) return;
    std::vector<GpuPlanInput> inputs;
    std::vector<GpuPlanArray> outputs;
    for (int64_t device = 0; device < devices; ++device) {
        for (GpuPlanInput input : m_plan.inputs) {
            input.device = device;
            input.array.device = device;
            inputs.push_back(std::move(input));
        }
        for (GpuPlanArray output : m_plan.outputs) {
            output.device = device;
            outputs.push_back(std::move(output));
        }
    }
    m_plan.inputs = std::move(inputs);
    m_plan.outputs = std::move(outputs);
}

}  // namespace hloscope::gpu_plan_internal
