#include "core/interpreter/multi_device.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <thread>

#include "core/ir/hlo_computation.h"
#include "core/io/input_limits.h"

namespace hloscope {

std::string deviceLabel(const DeviceGrid& grid, int64_t device) {
    return "device " + std::to_string(device) + " (replica " +
           std::to_string(grid.replicaOf(device)) + ", partition " +
           std::to_string(grid.partitionOf(device)) + ")";
}

CollectiveExchange::CollectiveExchange(DeviceGrid grid, const std::atomic<bool>* cancel)
    : m_grid(grid),
      m_cancel(cancel),
      m_waiters(static_cast<size_t>(grid.count())),
      m_finished(static_cast<size_t>(grid.count()), false),
      m_abandoned(static_cast<size_t>(grid.count()), false),
      m_finalStatus(static_cast<size_t>(grid.count())) {}

StatusOr<CollectiveExchange::Values> CollectiveExchange::exchange(const HloInstruction& instruction,
                                                                  const std::vector<int64_t>& group,
                                                                  int64_t index, Literal value) {
    const size_t size = group.size();
    const int64_t device = group[static_cast<size_t>(index)];
    std::unique_lock lock(m_mutex);
    OpId op{instruction.parent() ? instruction.parent()->name() : std::string(),
            instruction.name()};
    const int64_t run = m_runs[{device, op}]++;
    const Key key{std::move(op), group.front(), run};
    Slot& slot = m_slots[key];
    if (slot.values.empty()) {
        slot.values.resize(size);
        slot.given.assign(size, false);
    }
    slot.values[static_cast<size_t>(index)] = std::move(value);
    slot.given[static_cast<size_t>(index)] = true;
    if (++slot.count == size) {
        slot.result = std::make_shared<const std::vector<Literal>>(std::move(slot.values));
        m_changed.notify_all();
    }
    const std::function<bool()> ready = [&slot] { return slot.result != nullptr; };
    const std::function<std::string()> gaveUp = [&]() -> std::string {
        for (size_t m = 0; m < size; ++m) {
            const auto member = static_cast<size_t>(group[m]);
            if (slot.given[m] || !m_finished[member]) continue;
            const Status& status = m_finalStatus[member];
            std::string why = status.isOk()
                                  ? deviceLabel(m_grid, group[m]) + " finished without reaching it"
                                  : deviceLabel(m_grid, group[m]) + " failed: " + status.message();
            // Leave the slot to the members still to come; they fail the same way.
            return " waits in vain for the other members (execution " + std::to_string(run + 1) +
                   "): " + why;
        }
        return {};
    };
    HLO_RETURN_IF_ERROR(waitUntil(lock, instruction, device, ready, gaveUp));
    Values result = slot.result;
    if (++slot.readers == size) m_slots.erase(key);
    return result;
}

Status CollectiveExchange::waitUntil(std::unique_lock<std::mutex>& lock,
                                     const HloInstruction& instruction, int64_t device,
                                     const std::function<bool()>& ready,
                                     const std::function<std::string()>& gaveUp) {
    const auto self = static_cast<size_t>(device);
    m_waiters[self] = Waiter{&ready, &gaveUp, &instruction};
    Status outcome = Status::ok();
    while (!ready()) {
        if (std::string why = gaveUp(); !why.empty()) {
            m_abandoned[self] = true;
            outcome = Status(StatusCode::kFailedPrecondition,
                             "%" + instruction.name() + ": " + deviceLabel(m_grid, device) + why);
            break;
        }
        if (m_cancel != nullptr && m_cancel->load()) {
            outcome = Status(StatusCode::kCancelled, "%" + instruction.name() + ": cancelled");
            break;
        }
        if (m_deadlock.empty()) {
            // Deadlocked when every device still running waits for what is not there
            // (and has not yet seen that a device it waits for has finished).
            bool stuck = true;
            std::string where;
            for (size_t d = 0; d < m_waiters.size() && stuck; ++d) {
                if (m_finished[d]) continue;
                const Waiter& waiter = m_waiters[d];
                stuck = waiter.at != nullptr && !(*waiter.ready)() && (*waiter.gaveUp)().empty();
                if (stuck)
                    where += (where.empty() ? "" : ", ") +
                             deviceLabel(m_grid, static_cast<int64_t>(d)) + " at %" +
                             waiter.at->name();
            }
            if (stuck) {
                m_deadlock =
                    "deadlock: every device still running waits for another (" + where + ")";
                m_changed.notify_all();
            }
        }
        if (!m_deadlock.empty()) {
            outcome = Status(StatusCode::kFailedPrecondition,
                             "%" + instruction.name() + ": " + m_deadlock);
            break;
        }
        m_changed.wait_for(lock, std::chrono::milliseconds(50));
    }
    m_waiters[self] = Waiter{};
    return outcome;
}

void CollectiveExchange::post(int64_t source, int64_t target, Literal value) {
    std::lock_guard lock(m_mutex);
    const Link link{source, target};
    m_mail[link].emplace(m_posted[link]++, std::move(value));
    m_changed.notify_all();
}

int64_t CollectiveExchange::book(int64_t source, int64_t target) {
    std::lock_guard lock(m_mutex);
    const Link link{source, target};
    m_bookings.push_back(Booking{link, m_booked[link]++});
    return static_cast<int64_t>(m_bookings.size());
}

StatusOr<Literal> CollectiveExchange::take(const HloInstruction& instruction, int64_t target,
                                           int64_t ticket) {
    std::unique_lock lock(m_mutex);
    if (ticket < 1 || ticket > static_cast<int64_t>(m_bookings.size()) ||
        m_bookings[static_cast<size_t>(ticket - 1)].link.second != target)
        return Status(StatusCode::kInvalidArgument,
                      "%" + instruction.name() + ": " + deviceLabel(m_grid, target) +
                          " has no receive " + std::to_string(ticket) +
                          " booked (a recv-done needs its recv's context)");
    const Booking booking = m_bookings[static_cast<size_t>(ticket - 1)];
    const int64_t source = booking.link.first;
    std::map<int64_t, Literal>& box = m_mail[booking.link];
    const std::function<bool()> ready = [&] { return box.count(booking.sequence) > 0; };
    const std::function<std::string()> gaveUp = [&]() -> std::string {
        if (!m_finished[static_cast<size_t>(source)]) return {};
        const Status& status = m_finalStatus[static_cast<size_t>(source)];
        return " waits in vain for send " + std::to_string(booking.sequence + 1) + " from " +
               deviceLabel(m_grid, source) + ": " +
               (status.isOk() ? "it finished without sending it"
                              : "it failed: " + status.message());
    };
    HLO_RETURN_IF_ERROR(waitUntil(lock, instruction, target, ready, gaveUp));
    auto it = box.find(booking.sequence);
    Literal value = std::move(it->second);
    box.erase(it);
    return value;
}

bool CollectiveExchange::abandoned(int64_t device) {
    std::lock_guard lock(m_mutex);
    return m_abandoned[static_cast<size_t>(device)];
}

void CollectiveExchange::finish(int64_t device, const Status& status) {
    std::lock_guard lock(m_mutex);
    m_finished[static_cast<size_t>(device)] = true;
    m_finalStatus[static_cast<size_t>(device)] = status;
    m_changed.notify_all();
}

StatusOr<std::vector<Literal>> evaluateOnDevices(const HloModule& module, const DeviceGrid& grid,
                                                 std::span<const std::vector<Literal>> arguments,
                                                 const HloEvaluatorOptions& options) {
    const int64_t count = grid.count();
    if (count < 1 || static_cast<int64_t>(arguments.size()) != count)
        return Status(StatusCode::kInvalidArgument, "module " + module.name() + " runs on " +
                                                        std::to_string(count) +
                                                        " devices but arguments were given for " +
                                                        std::to_string(arguments.size()));
    const HloComputation* entry = module.entryComputation();
    if (entry == nullptr)
        return Status(StatusCode::kInvalidArgument,
                      "module " + module.name() + " has no entry computation");
    const std::vector<const HloComputation*> programs(static_cast<size_t>(count), entry);
    return evaluateProgramsOnDevices(programs, grid, arguments, options);
}

StatusOr<std::vector<Literal>> evaluateProgramsOnDevices(
    std::span<const HloComputation* const> programs, const DeviceGrid& grid,
    std::span<const std::vector<Literal>> arguments, const HloEvaluatorOptions& options) {
    const int64_t count = grid.count();
    if (count < 1 || static_cast<int64_t>(arguments.size()) != count ||
        static_cast<int64_t>(programs.size()) != count)
        return Status(StatusCode::kInvalidArgument,
                      std::to_string(count) + " devices but " + std::to_string(programs.size()) +
                          " programs and arguments for " + std::to_string(arguments.size()));
    CollectiveExchange exchange(grid, options.cancel);
    std::vector<Literal> values(static_cast<size_t>(count));
    HLO_RETURN_IF_ERROR(runOnDevices(exchange, [&](int64_t device) -> Status {
        HloEvaluatorOptions own = options;
        own.replicaId = grid.replicaOf(device);
        own.partitionId = grid.partitionOf(device);
        own.collectives = &exchange;
        // The devices share the interpreter's memory budget.
        if (own.memoryLimitBytes == 0)
            own.memoryLimitBytes = limits::evaluationMemoryLimitBytes() / count;
        HloEvaluator evaluator(own);
        HLO_ASSIGN_OR_RETURN(values[static_cast<size_t>(device)],
                             evaluator.evaluate(*programs[static_cast<size_t>(device)],
                                                std::span(arguments[static_cast<size_t>(device)])));
        return Status::ok();
    }));
    return values;
}

Status runOnDevices(CollectiveExchange& exchange,
                    const std::function<Status(int64_t device)>& body) {
    const DeviceGrid& grid = exchange.grid();
    const int64_t count = grid.count();
    std::vector<Status> statuses(static_cast<size_t>(count));
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(count));
    for (int64_t device = 0; device < count; ++device)
        threads.emplace_back([&, device] {
            Status status = body(device);
            exchange.finish(device, status);
            statuses[static_cast<size_t>(device)] = std::move(status);
        });
    for (std::thread& thread : threads) thread.join();

    // The first failure that is not a member waiting for a failed one.
    const Status* waiting = nullptr;
    int64_t waitingDevice = 0;
    for (int64_t device = 0; device < count; ++device) {
        const Status& status = statuses[static_cast<size_t>(device)];
        if (status.isOk()) continue;
        if (exchange.abandoned(device)) {
            if (waiting == nullptr) {
                waiting = &status;
                waitingDevice = device;
            }
            continue;
        }
        return Status(status.code(), deviceLabel(grid, device) + ": " + status.message());
    }
    if (waiting != nullptr)
        return Status(waiting->code(),
                      deviceLabel(grid, waitingDevice) + ": " + waiting->message());
    return Status::ok();
}

void replicateScalars(const HloComputation& entry, const std::vector<Literal>& first,
                      std::vector<Literal>& arguments) {
    for (int64_t i = 0; i < entry.parameterCount() && size_t(i) < arguments.size(); ++i)
        if (entry.parameter(i)->shape().isArray() && entry.parameter(i)->shape().rank() == 0)
            arguments[size_t(i)] = first[size_t(i)];
}

StatusOr<Literal> evaluateRunParallel(const HloInstruction& instruction,
                                      std::span<const Literal* const> operands,
                                      const HloEvaluatorOptions& options) {
    auto fail = [&](const std::string& what) {
        return Status(StatusCode::kInvalidArgument, "%" + instruction.name() + ": " + what);
    };
    // "program_grid": "RxC" (replicas x partitions); "program_computations": each device's
    // computation by name, row-major (the called computations list each once).
    auto unquoted = [&](const char* name) {
        std::string value(instruction.attribute(name).value_or(""));
        if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
        return value;
    };
    const std::string shape = unquoted("program_grid");
    int64_t rows = 0, columns = 0;
    if (std::sscanf(shape.c_str(), "%" SCNd64 "x%" SCNd64, &rows, &columns) != 2)
        return fail("run_parallel needs its program_grid (replicas x partitions), got \"" + shape +
                    "\"");
    std::map<std::string, const HloComputation*> byName;
    for (const HloComputation* computation : instruction.calledComputations())
        if (computation) byName[computation->name()] = computation;
    const std::string names = unquoted("program_computations");
    std::vector<const HloComputation*> programs;
    for (size_t start = 0; start <= names.size() && !names.empty();) {
        size_t end = names.find(',', start);
        if (end == std::string::npos) end = names.size();
        const std::string name = names.substr(start, end - start);
        auto it = byName.find(name);
        if (it == byName.end()) return fail("run_parallel names no called computation " + name);
        programs.push_back(it->second);
        start = end + 1;
    }
    if (static_cast<int64_t>(programs.size()) != rows * columns)
        return fail("run_parallel needs a computation per program of its " + shape + " grid");
    if (rows < 1 || columns < 1)
        return fail("run_parallel needs a [replicas][partitions] matrix of programs, got " + shape);
    const DeviceGrid grid{rows, columns};
    if (grid.count() > kMaxDevices)
        return fail("run_parallel on more than " + std::to_string(kMaxDevices) + " devices");
    std::vector<std::vector<Literal>> arguments(programs.size());
    size_t next = 0;
    for (size_t d = 0; d < programs.size(); ++d)
        for (int64_t p = 0; p < programs[d]->parameterCount(); ++p) {
            if (next >= operands.size())
                return fail("run_parallel has too few operands for its programs");
            arguments[d].push_back(*operands[next++]);
        }
    if (next != operands.size())
        return fail("run_parallel has more operands than its programs take");
    HloEvaluatorOptions own = options;
    own.collectives = nullptr;
    own.customCallHandler = nullptr;  // the caller's handler is not shared between threads
    own.onInstructionTimed = nullptr;
    HLO_ASSIGN_OR_RETURN(std::vector<Literal> results,
                         evaluateProgramsOnDevices(programs, grid, arguments, own));
    std::vector<Literal> flat;
    for (Literal& result : results) {
        if (result.isTuple())
            for (const Literal& element : result.tupleElements()) flat.push_back(element);
        else
            flat.push_back(std::move(result));
    }
    if (!instruction.shape().isTuple()) {
        if (flat.size() != 1)
            return fail("run_parallel returns one value but its programs give " +
                        std::to_string(flat.size()));
        return std::move(flat.front());
    }
    if (static_cast<int64_t>(flat.size()) != instruction.shape().tupleCount())
        return fail("run_parallel returns " + std::to_string(instruction.shape().tupleCount()) +
                    " values but its programs give " + std::to_string(flat.size()));
    return Literal::makeTuple(std::move(flat));
}

std::vector<std::vector<Literal>> makeDeviceArguments(const HloComputation& entry,
                                                      const DeviceGrid& grid, uint64_t seed) {
    std::vector<std::vector<Literal>> arguments;
    for (int64_t device = 0; device < grid.count(); ++device) {
        arguments.push_back(makeRandomArguments(entry, seed + static_cast<uint64_t>(device)));
        replicateScalars(entry, arguments.front(), arguments.back());
    }
    return arguments;
}

}  // namespace hloscope
