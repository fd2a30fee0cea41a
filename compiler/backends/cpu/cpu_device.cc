#include "compiler/backends/cpu/cpu_device.h"

#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "compiler/backends/cpu/cpu_executable.h"
#include "compiler/backends/cpu/llvm_jit.h"
#include "compiler/runtime/gemm.h"
#include "compiler/runtime/thread_pool.h"
#include "core/hlo_parser.h"
#include "core/hlo_printer.h"

namespace hloscope {

struct CpuDevice::Impl {
    std::mutex cacheMutex;
    // Most recently used first: (fingerprint, module text, executable).
    struct Entry {
        size_t fingerprint;
        std::string text;
        std::shared_ptr<CpuExecutable> executable;
    };
    std::list<Entry> cache;
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
};

namespace {
constexpr size_t kCacheSize = 16;
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

StatusOr<std::shared_ptr<CpuExecutable>> CpuDevice::executableFor(const HloModule& module, bool* hit) const {
    std::string text = printModule(module);
    const size_t fingerprint = std::hash<std::string>{}(text);
    {
        std::lock_guard<std::mutex> lock(m_impl->cacheMutex);
        for (auto it = m_impl->cache.begin(); it != m_impl->cache.end(); ++it)
            if (it->fingerprint == fingerprint && it->text == text) {
                m_impl->cache.splice(m_impl->cache.begin(), m_impl->cache, it);
                if (hit) *hit = true;
                return m_impl->cache.front().executable;
            }
    }
    if (hit) *hit = false;
    // The executable owns its own copy of the module (parsed back from the text).
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> copy, parseHloModule(text));
    copy->setIsScheduled(module.isScheduled());
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<CpuExecutable> compiled, CpuExecutable::compile(std::move(copy)));
    std::shared_ptr<CpuExecutable> executable = std::move(compiled);
    std::lock_guard<std::mutex> lock(m_impl->cacheMutex);
    m_impl->cache.push_front(Impl::Entry{fingerprint, std::move(text), executable});
    while (m_impl->cache.size() > kCacheSize) m_impl->cache.pop_back();
    return executable;
}

StatusOr<ExecutionResult> CpuDevice::run(const HloModule& module, const std::vector<Literal>& args,
                                         const ExecutionOptions& options) const {
    std::string why;
    if (!available(&why)) return Status(StatusCode::kFailedPrecondition, "the CPU backend is unavailable: " + why);
    if (options.cancel && options.cancel->load()) return Status(StatusCode::kCancelled, "run cancelled");
    HLO_RETURN_IF_ERROR(requireOneDevice(module, "the CPU backend"));
    if (options.progress) options.progress(0, "compiling");
    bool hit = false;
    HLO_ASSIGN_OR_RETURN(std::shared_ptr<CpuExecutable> executable, executableFor(module, &hit));
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = options.threads > 0 ? options.threads : cores;
    Impl::Pool* pool = nullptr;
    {
        std::lock_guard<std::mutex> lock(m_impl->poolsMutex);
        auto& slot = m_impl->pools[threads];
        if (!slot) slot = std::make_unique<Impl::Pool>(threads);
        pool = slot.get();
    }
    std::lock_guard<std::mutex> lock(pool->mutex);
    HLO_ASSIGN_OR_RETURN(ExecutionResult result, executable->run(args, options, &pool->pool));
    result.device = name();
    result.compileSeconds = hit ? 0.0 : executable->compileSeconds();
    return result;
}

void registerCpuBackend() {
    static std::once_flag once;
    std::call_once(once, [] { registerDevice(std::make_shared<CpuDevice>()); });
}

}  // namespace hloscope
