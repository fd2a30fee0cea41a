#include "core/ir/collective_groups.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/ir/hlo_computation.h"
#include "core/ir/attribute_text.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope {

namespace {

Status groupError(const HloInstruction& instruction, const std::string& what) {
    return Status(StatusCode::kFailedPrecondition, "%" + instruction.name() + ": " + what);
}

bool hasUseGlobalDeviceIds(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
        case HloOpcode::kReduceScatter:
            return true;
        default:
            return false;
    }
}

bool isPermute(HloOpcode opcode) {
    return opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart;
}

StatusOr<DeviceGroups> listedGroups(const HloInstruction& instruction) {
    auto text = instruction.attribute("replica_groups");
    if (!text) return DeviceGroups{};
    auto groups = shape_inference_internal::parseReplicaGroups(*text);
    if (!groups)
        return Status(StatusCode::kUnimplemented,
                      "%" + instruction.name() + ": replica_groups=" + std::string(*text) +
                          " is in a form the device groups do not model");
    return *groups;
}

// The largest id the instruction's groups (or pairs) name, -1 for none.
StatusOr<int64_t> largestId(const HloInstruction& instruction) {
    int64_t largest = -1;
    if (isPermute(instruction.opcode())) {
        HLO_ASSIGN_OR_RETURN(auto pairs, collectivePermutePairs(instruction));
        for (const auto& [source, target] : pairs) largest = std::max({largest, source, target});
        return largest;
    }
    HLO_ASSIGN_OR_RETURN(DeviceGroups groups, listedGroups(instruction));
    for (const auto& group : groups)
        for (int64_t id : group) largest = std::max(largest, id);
    return largest;
}

// The group size an all-gather or reduce-scatter's shapes imply (the
// gathered or scattered dimension's ratio), 0 when they imply none.
int64_t groupSizeFromShapes(const HloInstruction& instruction) {
    const HloOpcode opcode = instruction.opcode();
    if (opcode != HloOpcode::kAllGather && opcode != HloOpcode::kAllGatherStart &&
        opcode != HloOpcode::kReduceScatter)
        return 0;
    if (instruction.operandCount() < 1 || instruction.dimensions().size() != 1) return 0;
    const Shape& operand = instruction.operand(0)->shape();
    const Shape* result = &instruction.shape();
    if (opcode == HloOpcode::kAllGatherStart && result->isTuple() && result->tupleCount() == 2 &&
        !result->tupleShape(1).isTuple() && instruction.operandCount() == 1)
        result = &result->tupleShape(1);
    if (result->isTuple() && result->tupleCount() > 0) result = &result->tupleShape(0);
    const int64_t d = instruction.dimensions(0);
    if (!operand.isArray() || !result->isArray() || d < 0 || d >= operand.rank() ||
        d >= result->rank())
        return 0;
    const int64_t big =
        opcode == HloOpcode::kReduceScatter ? operand.dimensions(d) : result->dimensions(d);
    const int64_t small =
        opcode == HloOpcode::kReduceScatter ? result->dimensions(d) : operand.dimensions(d);
    return small > 0 && big % small == 0 ? big / small : 0;
}

}  // namespace

std::string_view collectiveGroupModeName(CollectiveGroupMode mode) {
    switch (mode) {
        case CollectiveGroupMode::kCrossReplica:
            return "cross_replica";
        case CollectiveGroupMode::kCrossPartition:
            return "cross_partition";
        case CollectiveGroupMode::kCrossReplicaAndPartition:
            return "cross_replica_and_partition";
        case CollectiveGroupMode::kFlattenedId:
            return "flattened_id";
    }
    return "unknown";
}

bool exchangesBetweenDevices(HloOpcode opcode) {
    switch (opcode) {
        case HloOpcode::kAllReduce:
        case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllGather:
        case HloOpcode::kAllGatherStart:
        case HloOpcode::kReduceScatter:
        case HloOpcode::kAllToAll:
        case HloOpcode::kRaggedAllToAll:
        case HloOpcode::kCollectiveBroadcast:
        case HloOpcode::kCollectiveReduce:
        case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteStart:
            return true;
        default:
            return false;
    }
}

StatusOr<CollectiveGroupMode> collectiveGroupMode(const HloInstruction& instruction) {
    const bool channel = instruction.attribute("channel_id").has_value();
    std::optional<bool> useGlobal;
    if (hasUseGlobalDeviceIds(instruction.opcode()))
        useGlobal = instruction.attribute("use_global_device_ids") == std::string_view("true");
    if (!channel) {
        if (useGlobal && *useGlobal)
            return groupError(instruction,
                              "Invalid combination of has_channel_id and use_global_device_ids: "
                              "use_global_device_ids=true requires a channel_id");
        return CollectiveGroupMode::kCrossReplica;
    }
    if (!useGlobal) return CollectiveGroupMode::kCrossPartition;
    return *useGlobal ? CollectiveGroupMode::kFlattenedId
                      : CollectiveGroupMode::kCrossReplicaAndPartition;
}

bool isCombinedPermute(const HloInstruction& instruction) {
    const Shape& shape = instruction.shape();
    if (instruction.opcode() != HloOpcode::kCollectivePermute || instruction.operandCount() < 2 ||
        instruction.attribute("slice_sizes") || !shape.isTuple() ||
        shape.tupleCount() != instruction.operandCount())
        return false;
    for (int64_t k = 0; k < instruction.operandCount(); ++k) {
        const Shape& operand = instruction.operand(k)->shape();
        const Shape& result = shape.tupleShape(k);
        if (!operand.isArray() || !result.isArray() ||
            operand.elementType() != result.elementType() ||
            operand.dimensions() != result.dimensions())
            return false;
    }
    return true;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> collectivePermutePairs(
    const HloInstruction& instruction) {
    auto text = instruction.attribute("source_target_pairs");
    if (!text) return std::vector<std::pair<int64_t, int64_t>>{};
    auto pairs = shape_inference_internal::parsePairs(*text);
    if (!pairs)
        return groupError(instruction, "cannot parse source_target_pairs=" + std::string(*text));
    for (const auto& [source, target] : *pairs)
        if (source < 0 || target < 0)
            return groupError(instruction, "source_target_pairs names a negative id");
    return *pairs;
}

StatusOr<DeviceGroups> collectiveDeviceGroups(const HloInstruction& instruction,
                                              const DeviceGrid& grid) {
    HLO_ASSIGN_OR_RETURN(CollectiveGroupMode mode, collectiveGroupMode(instruction));
    DeviceGroups listed;
    if (!isPermute(instruction.opcode())) {
        HLO_ASSIGN_OR_RETURN(listed, listedGroups(instruction));
        // StableHLO pads uneven groups with -1.
        for (auto& group : listed) std::erase_if(group, [](int64_t id) { return id == -1; });
        std::erase_if(listed, [](const std::vector<int64_t>& group) { return group.empty(); });
    }
    // Ids the groups list are replica, partition or device ids by mode.
    const int64_t idLimit = mode == CollectiveGroupMode::kCrossPartition ? grid.partitions
                            : mode == CollectiveGroupMode::kFlattenedId  ? grid.count()
                                                                         : grid.replicas;
    const std::string_view idKind = mode == CollectiveGroupMode::kCrossPartition ? "partition"
                                    : mode == CollectiveGroupMode::kFlattenedId  ? "device"
                                                                                 : "replica";
    if (listed.empty()) {
        if (mode == CollectiveGroupMode::kFlattenedId)
            return groupError(instruction, "replica groups must be given in flattened-id mode");
        listed.emplace_back();
        for (int64_t id = 0; id < idLimit; ++id) listed.back().push_back(id);
    }
    for (const auto& group : listed)
        for (int64_t id : group)
            if (id < 0 || id >= idLimit)
                return groupError(instruction, "replica_groups names " + std::string(idKind) + " " +
                                                   std::to_string(id) + " but the module has " +
                                                   std::to_string(idLimit) + " " +
                                                   std::string(idKind) + "s");
    DeviceGroups groups;
    switch (mode) {
        case CollectiveGroupMode::kCrossReplica:
            for (const auto& group : listed)
                for (int64_t p = 0; p < grid.partitions; ++p) {
                    groups.emplace_back();
                    for (int64_t r : group) groups.back().push_back(grid.device(r, p));
                }
            break;
        case CollectiveGroupMode::kCrossPartition:
            for (const auto& group : listed)
                for (int64_t r = 0; r < grid.replicas; ++r) {
                    groups.emplace_back();
                    for (int64_t p : group) groups.back().push_back(grid.device(r, p));
                }
            break;
        case CollectiveGroupMode::kCrossReplicaAndPartition:
            for (const auto& group : listed) {
                groups.emplace_back();
                for (int64_t r : group)
                    for (int64_t p = 0; p < grid.partitions; ++p)
                        groups.back().push_back(grid.device(r, p));
            }
            break;
        case CollectiveGroupMode::kFlattenedId:
            groups = listed;
            break;
    }
    std::vector<int> seen(static_cast<size_t>(grid.count()), 0);
    for (const auto& group : groups)
        for (int64_t device : group) ++seen[static_cast<size_t>(device)];
    // A collective-broadcast may leave devices out: they receive zeros.
    const bool partial = instruction.opcode() == HloOpcode::kCollectiveBroadcast;
    for (int64_t device = 0; device < grid.count(); ++device)
        if (seen[static_cast<size_t>(device)] > 1 ||
            (seen[static_cast<size_t>(device)] == 0 && !partial))
            return groupError(instruction,
                              "device " + std::to_string(device) + " (replica " +
                                  std::to_string(grid.replicaOf(device)) + ", partition " +
                                  std::to_string(grid.partitionOf(device)) + ") is in " +
                                  std::to_string(seen[static_cast<size_t>(device)]) +
                                  " of the collective's groups instead of one");
    return groups;
}

StatusOr<DeviceGroupPosition> deviceGroupOf(const HloInstruction& instruction,
                                            const DeviceGrid& grid, int64_t device) {
    HLO_ASSIGN_OR_RETURN(DeviceGroups groups, collectiveDeviceGroups(instruction, grid));
    for (auto& group : groups)
        for (size_t i = 0; i < group.size(); ++i)
            if (group[i] == device) return DeviceGroupPosition{std::move(group), int64_t(i)};
    // Only a collective-broadcast leaves devices out (collectiveDeviceGroups): alone, index -1.
    return DeviceGroupPosition{{device}, -1};
}

std::string deviceGridText(const DeviceGrid& grid) {
    auto count = [](int64_t n, const char* what) {
        return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
    };
    return count(grid.count(), "device") + " (" + count(grid.replicas, "replica") + " x " +
           count(grid.partitions, "partition") + ")";
}

bool isHostTransfer(const HloInstruction& instruction) {
    return instruction.attribute("is_host_transfer") == std::string_view("true");
}

bool isPeerTransfer(const HloInstruction& instruction) {
    const HloOpcode opcode = instruction.opcode();
    if (opcode != HloOpcode::kSend && opcode != HloOpcode::kRecv) return false;
    if (isHostTransfer(instruction)) return false;
    return frontendAttribute(instruction, "_xla_send_recv_source_target_pairs")
        .has_value();
}

StatusOr<PeerTransfer> peerTransferOf(const HloInstruction& instruction) {
    auto text =
        frontendAttribute(instruction, "_xla_send_recv_source_target_pairs");
    if (!isPeerTransfer(instruction) || !text)
        return groupError(instruction, "not a send or recv between devices");
    auto pairs = shape_inference_internal::parsePairs(*text);
    if (!pairs)
        return groupError(instruction, "cannot parse _xla_send_recv_source_target_pairs=" + *text);
    for (const auto& [source, target] : *pairs)
        if (source < 0 || target < 0)
            return groupError(instruction,
                              "_xla_send_recv_source_target_pairs names a negative id");
    PeerTransfer transfer;
    transfer.pairs = std::move(*pairs);
    int64_t channel = 0;
    if (auto id = instruction.attribute("channel_id"))
        channel = std::atoll(std::string(*id).c_str());
    transfer.mode =
        channel > 0 ? CollectiveGroupMode::kCrossPartition : CollectiveGroupMode::kCrossReplica;
    return transfer;
}

StatusOr<PeerLinks> peerLinks(const HloInstruction& instruction, const DeviceGrid& grid,
                              int64_t device) {
    HLO_ASSIGN_OR_RETURN(PeerTransfer transfer, peerTransferOf(instruction));
    const bool partitions = transfer.mode == CollectiveGroupMode::kCrossPartition;
    const int64_t limit = partitions ? grid.partitions : grid.replicas;
    const int64_t own = partitions ? grid.partitionOf(device) : grid.replicaOf(device);
    auto deviceOf = [&](int64_t id) {
        return partitions ? grid.device(grid.replicaOf(device), id)
                          : grid.device(id, grid.partitionOf(device));
    };
    PeerLinks links;
    for (const auto& [source, target] : transfer.pairs) {
        if (source >= limit || target >= limit)
            return groupError(instruction, "_xla_send_recv_source_target_pairs names " +
                                               std::string(partitions ? "partition " : "replica ") +
                                               std::to_string(std::max(source, target)) + " of " +
                                               std::to_string(limit));
        if (source == own) links.target = deviceOf(target);
        if (target == own) links.source = deviceOf(source);
    }
    return links;
}

StatusOr<DeviceGrid> moduleDeviceGrid(const HloModule& module) {
    const std::optional<int64_t> declaredReplicas = module.replicaCount();
    const std::optional<int64_t> declaredPartitions = module.numPartitions();
    if (declaredReplicas.value_or(1) < 1 || declaredPartitions.value_or(1) < 1)
        return Status(
            StatusCode::kFailedPrecondition,
            "module " + module.name() + ": replica_count and num_partitions must be positive");
    // What the collectives need; a count the header gives is kept.
    DeviceGrid grid{declaredReplicas.value_or(1), declaredPartitions.value_or(1)};
    int64_t flattened = 0;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions()) {
            if (isPeerTransfer(*instruction)) {
                HLO_ASSIGN_OR_RETURN(PeerTransfer transfer, peerTransferOf(*instruction));
                int64_t needed = 1;
                for (const auto& [source, target] : transfer.pairs)
                    needed = std::max({needed, source + 1, target + 1});
                if (transfer.mode == CollectiveGroupMode::kCrossPartition) {
                    if (!declaredPartitions) grid.partitions = std::max(grid.partitions, needed);
                } else if (!declaredReplicas) {
                    grid.replicas = std::max(grid.replicas, needed);
                }
                continue;
            }
            if (!exchangesBetweenDevices(instruction->opcode())) continue;
            HLO_ASSIGN_OR_RETURN(CollectiveGroupMode mode, collectiveGroupMode(*instruction));
            HLO_ASSIGN_OR_RETURN(int64_t largest, largestId(*instruction));
            // Empty groups: one group of everyone, as large as the shapes say.
            const int64_t needed = largest >= 0
                                       ? largest + 1
                                       : std::max<int64_t>(1, groupSizeFromShapes(*instruction));
            switch (mode) {
                case CollectiveGroupMode::kCrossReplica:
                case CollectiveGroupMode::kCrossReplicaAndPartition:
                    if (!declaredReplicas) grid.replicas = std::max(grid.replicas, needed);
                    break;
                case CollectiveGroupMode::kCrossPartition:
                    if (!declaredPartitions) grid.partitions = std::max(grid.partitions, needed);
                    break;
                case CollectiveGroupMode::kFlattenedId:
                    flattened = std::max(flattened, needed);
                    break;
            }
        }
    if (grid.count() < flattened) {
        if (!declaredReplicas)
            grid.replicas = (flattened + grid.partitions - 1) / grid.partitions;
        else if (!declaredPartitions)
            grid.partitions = (flattened + grid.replicas - 1) / grid.replicas;
    }
    if (grid.count() > kMaxDevices)
        return Status(StatusCode::kUnimplemented,
                      "module " + module.name() + " runs on " + std::to_string(grid.replicas) +
                          " replicas x " + std::to_string(grid.partitions) +
                          " partitions, more than the " + std::to_string(kMaxDevices) +
                          " devices evaluated at once");
    return grid;
}

}  // namespace hloscope
