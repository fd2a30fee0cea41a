// Evaluating a module on every device of its grid at once (replicas x
// partitions, core/ir/collective_groups.h): one HloEvaluator per device, each
// on its own thread with its replica-id and partition-id, meeting the others
// at every collective through a CollectiveExchange. The collectives then
// compute what XLA's do between devices (collectives.cc):
// all-reduce folds the group's operands in group order with its to_apply,
// all-gather concatenates them, reduce-scatter keeps the member's slice of
// the fold, all-to-all sends chunk j to member j, collective-permute and
// collective-broadcast copy between devices, ragged-all-to-all copies row
// ranges into the receivers' outputs.
//
// send / recv between devices (peer transfers) go through the exchange's
// mailboxes: a send posts, a recv books, its recv-done takes.
//
// A device that fails, or finishes without reaching a collective the others
// wait at, ends the evaluation with an error naming the device and the
// instruction; so do devices that all wait on each other (a deadlock, as
// devices whose control flow diverged, or receives that precede their sends
// in a ring): the evaluation never hangs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/ir/collective_groups.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {

// The meeting point of the devices' evaluators. Thread-safe.
class CollectiveExchange {
public:
    explicit CollectiveExchange(DeviceGrid grid, const std::atomic<bool>* cancel = nullptr);
    CollectiveExchange(const CollectiveExchange&) = delete;
    CollectiveExchange& operator=(const CollectiveExchange&) = delete;

    const DeviceGrid& grid() const { return m_grid; }

    // `device` (member `index` of `group`) gives `value` for its next
    // execution of `instruction` and waits for the group's other members'
    // values for the same execution; returns every member's value in group
    // order (shared by the members). An error when a member has finished or
    // failed without giving its value, or on cancellation.
    using Values = std::shared_ptr<const std::vector<Literal>>;
    StatusOr<Values> exchange(const HloInstruction& instruction, const std::vector<int64_t>& group,
                              int64_t index, Literal value);

    // Peer transfers (send / recv, core/ir/collective_groups.h peerLinks):
    // `source` posts its next value for `target` without waiting; `target`
    // books the next value from `source` (values pair with bookings in
    // order, as NCCL matches a peer's sends with its receives) and later
    // takes it by the booking's ticket (never 0), waiting until it is
    // posted. An error when the source has finished without posting it, or
    // on cancellation.
    void post(int64_t source, int64_t target, Literal value);
    int64_t book(int64_t source, int64_t target);
    StatusOr<Literal> take(const HloInstruction& instruction, int64_t target, int64_t ticket);

    // `device` has finished (`status` says how); wakes members waiting for it.
    void finish(int64_t device, const Status& status);
    // Whether `device` stopped at a collective because another member had
    // finished or failed (its error follows from theirs).
    bool abandoned(int64_t device);

private:
    struct Slot {
        std::vector<Literal> values;
        std::vector<bool> given;
        size_t count = 0;
        size_t readers = 0;
        Values result;
    };
    // An op is known by its computation's name and its own, not its address: devices may run
    // copies of one module (the CPU backend compiles an executable per device).
    using OpId = std::pair<std::string, std::string>;
    using Key = std::tuple<OpId, int64_t, int64_t>;                   // (op, first member, run)
    using Link = std::pair<int64_t, int64_t>;                         // (source, target)
    struct Booking {
        Link link;
        int64_t sequence = 0;
    };
    // Waits (the lock held between checks) until `ready`, failing with what
    // `gaveUp` says when it says something, on cancellation, or when every
    // device still running waits for something that cannot come (a
    // deadlock, named by where each device waits).
    Status waitUntil(std::unique_lock<std::mutex>& lock, const HloInstruction& instruction,
                     int64_t device, const std::function<bool()>& ready,
                     const std::function<std::string()>& gaveUp);

    DeviceGrid m_grid;
    const std::atomic<bool>* m_cancel;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::map<Key, Slot> m_slots;
    std::map<std::pair<int64_t, OpId>, int64_t> m_runs;  // (device, op) -> count
    std::map<Link, std::map<int64_t, Literal>> m_mail;  // posted, not yet taken, by sequence
    std::map<Link, int64_t> m_posted, m_booked;
    std::vector<Booking> m_bookings;  // ticket t is m_bookings[t - 1]
    // Per device while it waits (null `at` otherwise): what it waits for and where.
    struct Waiter {
        const std::function<bool()>* ready = nullptr;
        const std::function<std::string()>* gaveUp = nullptr;
        const HloInstruction* at = nullptr;
    };
    std::vector<Waiter> m_waiters;
    std::string m_deadlock;
    std::vector<bool> m_finished;
    std::vector<bool> m_abandoned;
    std::vector<Status> m_finalStatus;
};

// Evaluates `module`'s entry on every device of `grid`; `arguments[d]` are
// device d's (device d = replica * partitions + partition). Returns the
// results by device. `options` apply to every device (its replica and
// partition ids and exchange are set per device; without a memory limit
// the devices share the interpreter's budget equally); the first error,
// naming the device, ends the evaluation.
StatusOr<std::vector<Literal>> evaluateOnDevices(const HloModule& module, const DeviceGrid& grid,
                                                 std::span<const std::vector<Literal>> arguments,
                                                 const HloEvaluatorOptions& options = {});

// Runs `body(device)` for every device of `exchange`'s grid at once, each on a thread of its
// own, and tells the exchange when each has finished. Returns the first failure that is not a
// device waiting for a failed one (else the first of those), its message prefixed with the
// device (deviceLabel); OK when every device succeeded.
Status runOnDevices(CollectiveExchange& exchange,
                    const std::function<Status(int64_t device)>& body);

// The same with a program per device: `programs[d]` is device d's computation
// (the StableHLO interpreter's run_parallel gives each device its function).
StatusOr<std::vector<Literal>> evaluateProgramsOnDevices(
    std::span<const HloComputation* const> programs, const DeviceGrid& grid,
    std::span<const std::vector<Literal>> arguments, const HloEvaluatorOptions& options = {});

// The StableHLO interpreter's `interpreter.run_parallel` (imported as a
// custom-call whose called computations are its programs, row-major, and
// whose "programs" attribute is their [replicas][partitions] matrix): the
// operands dealt to the programs in order (each takes as many as it has
// parameters), every program run on its device, the results of all of them
// in order as a tuple (one result: the result itself).
StatusOr<Literal> evaluateRunParallel(const HloInstruction& instruction,
                                      std::span<const Literal* const> operands,
                                      const HloEvaluatorOptions& options);

// Seeded random arguments for each device: device d's arrays use seed + d
// (makeRandomArguments), so that devices hold different data; scalar
// parameters are device 0's on every device, since SPMD programs take loop
// bounds and flags replicated (devices that disagree on a trip count would
// not meet at the loop's collectives).
std::vector<std::vector<Literal>> makeDeviceArguments(const HloComputation& entry,
                                                      const DeviceGrid& grid, uint64_t seed);
// Sets `arguments`' scalar parameters to `first`'s.
void replicateScalars(const HloComputation& entry, const std::vector<Literal>& first,
                      std::vector<Literal>& arguments);

// "device 3 (replica 1, partition 1)".
std::string deviceLabel(const DeviceGrid& grid, int64_t device);

}  // namespace hloscope
