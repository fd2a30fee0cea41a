// ThreadPool: the parallel-for the CPU runtime runs kernels on, and what
// `hloscope-cli calibrate` measures as the fixed cost of a parallel loop.
//
// Workers spin on an atomic generation counter for a short while after each
// job before they block on a condition variable, so back-to-back kernels are
// dispatched in about a microsecond (a wake through the kernel's futex costs
// tens of microseconds; workers only spin when the pool has no more threads
// than cores); an idle pool sleeps and costs nothing. The calling
// thread takes part in every job. Jobs are not re-entrant: one parallelFor
// at a time per pool.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hloscope {

class ThreadPool {
public:
    // `threads` in total, the caller included (0: hardware concurrency).
    explicit ThreadPool(int threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int threadCount() const { return static_cast<int>(m_workers.size()) + 1; }

    // Runs body(begin, end) over [0, count) split into at most `threadCount()`
    // contiguous chunks of at least `grain` iterations; returns when all are done.
    void parallelFor(int64_t count, int64_t grain,
                     const std::function<void(int64_t begin, int64_t end)>& body);

private:
    void workerLoop(int index);
    void runChunks();

    std::vector<std::thread> m_workers;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::atomic<uint64_t> m_generation{0};
    std::atomic<int> m_sleepers{0};
    std::atomic<int64_t> m_nextChunk{0};
    std::atomic<int> m_pending{0};
    std::atomic<bool> m_stop{false};
    std::chrono::microseconds m_spin{0};
    // The current job.
    const std::function<void(int64_t, int64_t)>* m_body = nullptr;
    int64_t m_count = 0;
    int64_t m_chunks = 0;
};

}  // namespace hloscope
