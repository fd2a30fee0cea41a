#include "compiler/backends/cpu/cpu_device.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "compiler/backends/cpu/cpu_executable.h"
#include "compiler/backends/llvm/llvm_jit.h"
#include "compiler/runtime/gemm.h"
#include "compiler/runtime/thread_pool.h"
#include "core/ir/collective_groups.h"
#include "core/text/hlo_printer.h"
#include "core/interpreter/multi_device.h"

namespace hloscope {

struct CpuDevice::Impl {
    std::mutex cacheMutex;
    // A module's executables, one per device of its grid, compiled on
    // demand; most recently used first.
    struct Entry {
        size_t fingerprint = 0;
        std::string text;  // the cache key, with the fingerprint
        // The module as given: each device's executable compiles its own clone.
        std::unique_ptr<const HloModule> module;
        DeviceGrid grid;
        std::mutex compileMutex;
        std::vector<std::shared_ptr<CpuExecutable>> byDevice;
        // Held by a run of the whole grid: two runs of one module's devices
        // at once could each hold an executable the other waits for.
        std::mutex gridMutex;
    };
    std::list<std::shared_ptr<Entry>> cache;
    // By thread count; a pool runs one job at a time (its mutex).
    struct Pool {
        explicit Pool(int threads) : pool(threads) {}
        ThreadPool pool;
        std::mutex mutex;
    };
    std::mutex poolsMutex;
    std::map<int, std::unique_ptr<Pool>> pools;
    std::string availability;
    bool ok = false;

    std::shared_ptr<Entry> entryFor(const HloModule& module);
    StatusOr<std::shared_ptr<CpuExecutable>> compiled(Entry& entry, int64_t device, bool* hit);
    // A module's entry and its executables, one per device, compiled where the cache lacks them.
    struct Prepared {
        std::shared_ptr<Entry> entry;
        std::vector<std::shared_ptr<CpuExecutable>> executables;
        double compileSeconds = 0;  // compiling those the cache lacked (wall time); 0: none
    };
    StatusOr<Prepared> prepare(std::shared_ptr<Entry> entry, const ExecutionOptions& options);
    // Runs every device (one: on the shared pool of the thread count), device d on argsOf(d);
    // `wallSeconds`: of the whole grid.
    StatusOr<std::vector<ExecutionResult>> runGrid(
        Prepared& prepared, const std::function<const std::vector<Literal>&(int64_t)>& argsOf,
        const ExecutionOptions& options, double* wallSeconds);
};

namespace {
constexpr size_t kCacheSize = 16;
// Executables of a module of many devices count one each: the most kept at once (and always
// the most recent module's).
constexpr size_t kCachedExecutables = 64;
}

CpuDevice::CpuDevice() : m_impl(std::make_unique<Impl>()) {
    auto jit = CpuJit::create();
    m_impl->ok = jit.isOk();
    if (jit.isOk()) m_impl->availability = (*jit)->cpuName();
    else m_impl->availability = jit.status().message();
}

CpuDevice::~CpuDevice() = default;

std::string CpuDevice::description() const {
    return "CPU: LLVM ORC JIT for " + m_impl->availability + ", " +
           std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads, GEMM " + gemmKernelName();
}

bool CpuDevice::available(std::string* whyNot) const {
    if (whyNot) *whyNot = m_impl->ok ? std::string() : m_impl->availability;
    return m_impl->ok;
}

std::shared_ptr<CpuDevice::Impl::Entry> CpuDevice::Impl::entryFor(const HloModule& module) {
    std::string text = printModule(module);
    const size_t fingerprint = std::hash<std::string>{}(text);
    std::lock_guard<std::mutex> lock(cacheMutex);
    for (auto it = cache.begin(); it != cache.end(); ++it)
        if ((*it)->fingerprint == fingerprint && (*it)->text == text) {
            cache.splice(cache.begin(), cache, it);
            return cache.front();
        }
    auto entry = std::make_shared<Entry>();
    entry->fingerprint = fingerprint;
    entry->text = std::move(text);
    entry->module = module.clone();
    // A grid the module does not state consistently runs as one device, as before there were
    // grids (the interpreter names the inconsistency at the first collective).
    if (StatusOr<DeviceGrid> grid = moduleDeviceGrid(module); grid.isOk()) entry->grid = *grid;
    entry->byDevice.resize(static_cast<size_t>(std::max<int64_t>(entry->grid.count(), 1)));
    cache.push_front(entry);
    size_t executables = 0;
    for (const auto& cached : cache) executables += cached->byDevice.size();
    while (cache.size() > 1 && (cache.size() > kCacheSize || executables > kCachedExecutables)) {
        executables -= cache.back()->byDevice.size();
        cache.pop_back();
    }
    return entry;
}

StatusOr<std::shared_ptr<CpuExecutable>> CpuDevice::Impl::compiled(Entry& entry, int64_t device,
                                                                   bool* hit) {
    const auto index = static_cast<size_t>(device);
    {
        std::lock_guard<std::mutex> lock(entry.compileMutex);
        if (hit) *hit = entry.byDevice[index] != nullptr;
        if (entry.byDevice[index]) return entry.byDevice[index];
    }
    // Compiled outside the lock, so that a grid's devices compile at once; two runs that
    // compile the same device at once keep the first executable stored.
    // Each executable owns its own copy of the module.
    std::unique_ptr<HloModule> copy = entry.module->clone();
    CpuCompileOptions options;
    options.replicaId = entry.grid.replicaOf(device);
    options.partitionId = entry.grid.partitionOf(device);
    options.devices = entry.grid.count();
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<CpuExecutable> executable,
                         CpuExecutable::compile(std::move(copy), options));
    std::lock_guard<std::mutex> lock(entry.compileMutex);
    if (!entry.byDevice[index]) entry.byDevice[index] = std::move(executable);
    return entry.byDevice[index];
}

StatusOr<std::shared_ptr<CpuExecutable>> CpuDevice::executableFor(const HloModule& module,
                                                                  int64_t device, bool* hit) const {
    std::shared_ptr<Impl::Entry> entry = m_impl->entryFor(module);
    if (device < 0 || device >= static_cast<int64_t>(entry->byDevice.size()))
        return invalidArgument("module '" + module.name() + "' runs on " +
                               deviceGridText(entry->grid) + ": it has no device " +
                               std::to_string(device));
    return m_impl->compiled(*entry, device, hit);
}

StatusOr<CpuDevice::Impl::Prepared> CpuDevice::Impl::prepare(std::shared_ptr<Entry> entry,
                                                             const ExecutionOptions& options) {
    if (!ok)
        return Status(StatusCode::kFailedPrecondition,
                      "the CPU backend is unavailable: " + availability);
    if (options.cancel && options.cancel->load())
        return Status(StatusCode::kCancelled, "run cancelled");
    if (options.progress) options.progress(0, "compiling");
    Prepared prepared;
    prepared.entry = std::move(entry);
    const auto devices = static_cast<int64_t>(prepared.entry->byDevice.size());
    // The devices' executables compile at once, on up to a thread per core; the calling thread
    // takes part and reports the progress.
    std::vector<std::optional<StatusOr<std::shared_ptr<CpuExecutable>>>> results(
        static_cast<size_t>(devices));
    std::vector<char> hits(static_cast<size_t>(devices), 0);
    std::atomic<int64_t> next{0}, finished{0};
    const auto start = std::chrono::steady_clock::now();
    auto work = [&](bool reports) {
        for (int64_t device = next++; device < devices; device = next++) {
            if (options.cancel && options.cancel->load()) break;
            bool hit = false;
            results[static_cast<size_t>(device)] = compiled(*prepared.entry, device, &hit);
            hits[static_cast<size_t>(device)] = hit;
            const int64_t done = ++finished;
            if (reports && options.progress && devices > 1)
                options.progress(0, "compiled " + std::to_string(done) + " of " +
                                        std::to_string(devices) + " devices");
        }
    };
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> helpers;
    for (int64_t k = 1; k < std::min<int64_t>(devices, cores); ++k)
        helpers.emplace_back(work, false);
    work(true);
    for (std::thread& helper : helpers) helper.join();
    if (options.cancel && options.cancel->load())
        return Status(StatusCode::kCancelled, "run cancelled");
    bool compiledNow = false;
    for (int64_t device = 0; device < devices; ++device) {
        StatusOr<std::shared_ptr<CpuExecutable>>& executable =
            *results[static_cast<size_t>(device)];
        if (!executable.isOk()) {
            if (devices == 1) return executable.status();
            return Status(executable.status().code(), deviceLabel(prepared.entry->grid, device) +
                                                          ": " + executable.status().message());
        }
        compiledNow = compiledNow || !hits[static_cast<size_t>(device)];
        prepared.executables.push_back(std::move(*executable));
    }
    // One device: its compile time; several: the wall time of compiling them all.
    if (devices == 1 && compiledNow)
        prepared.compileSeconds = prepared.executables.front()->compileSeconds();
    else if (compiledNow)
        prepared.compileSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return prepared;
}

StatusOr<std::vector<ExecutionResult>> CpuDevice::Impl::runGrid(
    Prepared& prepared, const std::function<const std::vector<Literal>&(int64_t)>& argsOf,
    const ExecutionOptions& options, double* wallSeconds) {
    const auto devices = static_cast<int64_t>(prepared.executables.size());
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = options.threads > 0 ? options.threads : cores;
    std::vector<ExecutionResult> results(static_cast<size_t>(devices));
    if (devices == 1) {
        Pool* pool = nullptr;
        {
            std::lock_guard<std::mutex> lock(poolsMutex);
            auto& slot = pools[threads];
            if (!slot) slot = std::make_unique<Pool>(threads);
            pool = slot.get();
        }
        std::lock_guard<std::mutex> lock(pool->mutex);
        HLO_ASSIGN_OR_RETURN(results.front(),
                             prepared.executables.front()->run(argsOf(0), options, &pool->pool));
        *wallSeconds = results.front().wallSeconds;
        return results;
    }
    // Every device at once, each with its share of the threads (pools of their own: a shared
    // one would make a device wait for a pool another device holds while it waits for that one
    // at a collective).
    std::lock_guard<std::mutex> gridLock(prepared.entry->gridMutex);
    const int share = std::max(1, threads / static_cast<int>(devices));
    std::vector<std::unique_ptr<ThreadPool>> devicePools(static_cast<size_t>(devices));
    if (share > 1)
        for (auto& pool : devicePools) pool = std::make_unique<ThreadPool>(share);
    CollectiveExchange exchange(prepared.entry->grid, options.cancel);
    const auto start = std::chrono::steady_clock::now();
    Status status = runOnDevices(exchange, [&](int64_t device) -> Status {
        const auto d = static_cast<size_t>(device);
        ExecutionOptions own = options;
        if (device != 0) own.progress = nullptr;  // device 0 reports for the grid
        HLO_ASSIGN_OR_RETURN(results[d], prepared.executables[d]->run(
                                             argsOf(device), own, devicePools[d].get(), &exchange));
        return Status::ok();
    });
    *wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!status.isOk()) {
        if (options.cancel && options.cancel->load())
            return Status(StatusCode::kCancelled, "run cancelled");
        return status;
    }
    for (ExecutionResult& result : results) result.devices = devices;
    return results;
}

StatusOr<ExecutionResult> CpuDevice::run(const HloModule& module, const std::vector<Literal>& args,
                                         const ExecutionOptions& options) const {
    HLO_ASSIGN_OR_RETURN(Impl::Prepared prepared,
                         m_impl->prepare(m_impl->entryFor(module), options));
    double wallSeconds = 0;
    HLO_ASSIGN_OR_RETURN(std::vector<ExecutionResult> results,
                         m_impl->runGrid(
                             prepared, [&](int64_t) -> const std::vector<Literal>& { return args; },
                             options, &wallSeconds));
    ExecutionResult result = std::move(results.front());
    result.wallSeconds = wallSeconds;
    for (size_t d = 1; d < results.size(); ++d)
        result.otherDeviceOutputs.push_back(std::move(results[d].outputs));
    result.device = name();
    result.compileSeconds = prepared.compileSeconds;
    return result;
}

StatusOr<std::vector<ExecutionResult>> CpuDevice::runDevices(
    const HloModule& module, std::span<const std::vector<Literal>> args,
    const ExecutionOptions& options) const {
    // The argument lists are counted before anything compiles.
    std::shared_ptr<Impl::Entry> entry = m_impl->entryFor(module);
    if (args.size() != entry->byDevice.size())
        return invalidArgument("module '" + module.name() + "' runs on " +
                               deviceGridText(entry->grid) + " but " + std::to_string(args.size()) +
                               " argument lists were given");
    HLO_ASSIGN_OR_RETURN(Impl::Prepared prepared, m_impl->prepare(std::move(entry), options));
    double wallSeconds = 0;
    HLO_ASSIGN_OR_RETURN(
        std::vector<ExecutionResult> results,
        m_impl->runGrid(
            prepared,
            [&](int64_t device) -> const std::vector<Literal>& { return args[size_t(device)]; },
            options, &wallSeconds));
    for (ExecutionResult& result : results) {
        result.device = name();
        result.compileSeconds = prepared.compileSeconds;
    }
    return results;
}

void registerCpuBackend() {
    static std::once_flag once;
    std::call_once(once, [] { registerDevice(std::make_shared<CpuDevice>()); });
}

}  // namespace hloscope
