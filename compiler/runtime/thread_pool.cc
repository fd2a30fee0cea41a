#include "compiler/runtime/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HLOSCOPE_PAUSE() _mm_pause()
#else
#define HLOSCOPE_PAUSE() std::this_thread::yield()
#endif

namespace hloscope {
namespace {

// How long an idle worker spins before it blocks.
constexpr std::chrono::microseconds kSpin{200};

}  // namespace

ThreadPool::ThreadPool(int threads) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (threads <= 0) threads = cores;
    // Spinning only pays when every thread has a core of its own.
    m_spin = threads <= cores ? kSpin : std::chrono::microseconds(0);
    for (int i = 1; i < threads; ++i) m_workers.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop.store(true);
        m_generation.fetch_add(1);
    }
    m_wake.notify_all();
    for (std::thread& worker : m_workers) worker.join();
}

void ThreadPool::runChunks() {
    for (;;) {
        const int64_t chunk = m_nextChunk.fetch_add(1, std::memory_order_acq_rel);
        if (chunk >= m_chunks) return;
        const int64_t begin = m_count * chunk / m_chunks;
        const int64_t end = m_count * (chunk + 1) / m_chunks;
        (*m_body)(begin, end);
    }
}

void ThreadPool::workerLoop(int) {
    uint64_t seen = 0;
    for (;;) {
        // Spin for the next job, then sleep.
        const auto deadline = std::chrono::steady_clock::now() + m_spin;
        uint64_t generation = m_generation.load(std::memory_order_acquire);
        // (Yielding between bursts: a worker that shares a core with the
        // dispatcher must not hold it for the whole spin.)
        while (generation == seen && std::chrono::steady_clock::now() < deadline) {
            for (int i = 0; i < 64 && generation == seen; ++i) {
                HLOSCOPE_PAUSE();
                generation = m_generation.load(std::memory_order_acquire);
            }
            if (generation == seen) std::this_thread::yield();
        }
        if (generation == seen) {
            std::unique_lock<std::mutex> lock(m_mutex);
            // seq_cst: either this worker sees the new generation or the
            // dispatcher sees it asleep and wakes it.
            m_sleepers.fetch_add(1);
            m_wake.wait(lock, [&] {
                generation = m_generation.load();
                return generation != seen;
            });
            m_sleepers.fetch_sub(1);
        }
        if (m_stop.load()) return;
        seen = generation;
        runChunks();
        m_pending.fetch_sub(1, std::memory_order_acq_rel);
    }
}

void ThreadPool::parallelFor(int64_t count, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& body) {
    if (count <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    // Every chunk has at least `grain` iterations.
    const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(threadCount(), count / grain));
    if (chunks <= 1 || m_workers.empty()) {
        body(0, count);
        return;
    }
    m_body = &body;
    m_count = count;
    m_chunks = chunks;
    m_nextChunk.store(0, std::memory_order_relaxed);
    m_pending.store(static_cast<int>(m_workers.size()), std::memory_order_relaxed);
    m_generation.fetch_add(1);
    if (m_sleepers.load() > 0) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_wake.notify_all();
    }
    runChunks();
    // Every worker acknowledges the job (so none still reads m_body when
    // the next one starts). After a short spin, yield: when the scheduler
    // has put a worker on this thread's core, spinning would hold the core
    // for the rest of the time slice while the worker waits for it (whole
    // processes ran 5-10x slower that way on a 2-core VM).
    for (int spins = 0; m_pending.load(std::memory_order_acquire) > 0; ++spins) {
        if (spins < 2048) HLOSCOPE_PAUSE();
        else std::this_thread::yield();
    }
}

}  // namespace hloscope
