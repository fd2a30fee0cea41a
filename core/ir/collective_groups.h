// Which devices take part in a collective together, as XLA forms its groups
// (collective_ops_utils' GetParticipatingDevicesGroups): a module runs on a
// grid of replicas x partitions; device d = replica * partitions + partition
// (XLA's default device assignment). A collective's `replica_groups`, its
// channel_id and use_global_device_ids choose the group mode, and the mode
// says what the ids in the groups name:
//   cross_replica                (no channel_id) replica ids; one set of
//                                groups per partition
//   cross_partition              (channel_id, op without use_global_device_ids:
//                                all-to-all, collective-permute, ...)
//                                partition ids; one set per replica
//   cross_replica_and_partition  (channel_id, use_global_device_ids=false)
//                                replica ids, each with all its partitions
//   flattened_id                 (use_global_device_ids=true) device ids
// Empty replica_groups put every replica (partition, device) in one group.
// The verifier, the interpreter's multi-device evaluation and the GPU plan
// share these rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

struct DeviceGrid {
    int64_t replicas = 1;
    int64_t partitions = 1;

    int64_t count() const { return replicas * partitions; }
    int64_t device(int64_t replica, int64_t partition) const {
        return replica * partitions + partition;
    }
    int64_t replicaOf(int64_t device) const { return device / partitions; }
    int64_t partitionOf(int64_t device) const { return device % partitions; }
    bool operator==(const DeviceGrid&) const = default;
};
// "6 devices (2 replicas x 3 partitions)".
std::string deviceGridText(const DeviceGrid& grid);

enum class CollectiveGroupMode {
    kCrossReplica,
    kCrossPartition,
    kCrossReplicaAndPartition,
    kFlattenedId
};
std::string_view collectiveGroupModeName(CollectiveGroupMode mode);

// Collectives that exchange data between devices (the async "done" halves
// excluded).
bool exchangesBetweenDevices(HloOpcode opcode);

// The group mode of a collective; an error naming it for
// use_global_device_ids=true without a channel_id.
StatusOr<CollectiveGroupMode> collectiveGroupMode(const HloInstruction& instruction);

// The groups of device ids a collective forms on `grid`, each in the order
// its members' data is concatenated, reduced or indexed. For
// collective-permute: the sets of devices its pairs' ids index (all replicas
// of a partition, or all partitions of a replica). StableHLO's -1 padding
// ids are dropped. An error naming the
// instruction when a group names a device the grid lacks or the groups do
// not cover every device exactly once (a collective-broadcast may leave
// devices out).
using DeviceGroups = std::vector<std::vector<int64_t>>;
StatusOr<DeviceGroups> collectiveDeviceGroups(const HloInstruction& instruction,
                                              const DeviceGrid& grid);
// The group holding `device` and the device's position in it; a device a
// collective-broadcast leaves out (it receives zeros) is alone at index -1.
struct DeviceGroupPosition {
    std::vector<int64_t> group;
    int64_t index = 0;
};
StatusOr<DeviceGroupPosition> deviceGroupOf(const HloInstruction& instruction,
                                            const DeviceGrid& grid, int64_t device);

// A collective-permute of several arrays at once (XLA's combined form: N
// operands, a tuple of N results, every one moved along the same pairs), not
// the in-place form (input, output, input and output offsets, slice_sizes).
bool isCombinedPermute(const HloInstruction& instruction);

// collective-permute's source_target_pairs as (source, target) indices into
// its groups (replica ids, or partition ids with a channel_id).
StatusOr<std::vector<std::pair<int64_t, int64_t>>> collectivePermutePairs(
    const HloInstruction& instruction);

// send and recv between devices, as XLA:GPU's P2P configuration reads them:
// the pairs of their _xla_send_recv_source_target_pairs frontend attribute
// name replicas of the device's partition (channel_id absent or 0) or
// partitions of its replica (channel_id > 0). A device sends to at most one
// device and receives from at most one: the last pair naming it wins, as in
// XLA's id map. Host transfers (is_host_transfer=true) and a send or recv
// without the attribute are not peer transfers.
bool isPeerTransfer(const HloInstruction& instruction);
// is_host_transfer=true: a send, recv or done half that talks to the host.
bool isHostTransfer(const HloInstruction& instruction);
struct PeerTransfer {
    CollectiveGroupMode mode = CollectiveGroupMode::kCrossReplica;
    std::vector<std::pair<int64_t, int64_t>> pairs;  // (source id, target id)
};
StatusOr<PeerTransfer> peerTransferOf(const HloInstruction& instruction);
// The devices `device` sends to and receives from (-1: none); an error when a
// pair names an id the grid lacks.
struct PeerLinks {
    int64_t target = -1;
    int64_t source = -1;
};
StatusOr<PeerLinks> peerLinks(const HloInstruction& instruction, const DeviceGrid& grid,
                              int64_t device);

// The grid a module runs on: replica_count and num_partitions from its
// header; a count it does not give is the smallest its
// collectives' groups and pairs (and peer transfers' pairs) name, or for empty groups the group
// size an all-gather's or reduce-scatter's shapes imply (XLA's tests set the counts outside the
// text, so dumps of them carry none), 1 without collectives. More than kMaxDevices devices is an
// error.
inline constexpr int64_t kMaxDevices = 256;
StatusOr<DeviceGrid> moduleDeviceGrid(const HloModule& module);

}  // namespace hloscope
