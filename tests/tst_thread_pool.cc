// ThreadPool (compiler/runtime/thread_pool.h): every index runs exactly once,
// chunks respect the grain, jobs run back to back and after the workers have
// gone to sleep, and pools of any size start and stop cleanly.
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "compiler/runtime/thread_pool.h"

using namespace hloscope;

class TestThreadPool : public QObject {
    Q_OBJECT

private:
    static bool coversOnce(ThreadPool& pool, int64_t count, int64_t grain, int64_t* chunks = nullptr) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
        std::atomic<int64_t> calls{0};
        std::atomic<bool> smallChunk{false};
        pool.parallelFor(count, grain, [&](int64_t begin, int64_t end) {
            calls.fetch_add(1);
            if (end - begin < grain && end - begin != count) smallChunk = true;
            for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        });
        if (chunks) *chunks = calls.load();
        for (auto& h : hits)
            if (h.load() != 1) return false;
        return !smallChunk.load();
    }

private slots:
    void coversEveryIndexOnce() {
        for (int threads : {1, 2, 3, 8}) {
            ThreadPool pool(threads);
            QCOMPARE(pool.threadCount(), threads);
            for (int64_t count : {1, 2, 7, 64, 1000, 100003})
                for (int64_t grain : {1, 16, 4096})
                    QVERIFY2(coversOnce(pool, count, grain),
                             qPrintable(QString("threads %1 count %2 grain %3").arg(threads).arg(count).arg(grain)));
        }
    }

    void chunkCountFollowsThreadsAndGrain() {
        ThreadPool pool(4);
        int64_t chunks = 0;
        QVERIFY(coversOnce(pool, 1000, 1, &chunks));
        QCOMPARE(chunks, int64_t(4));
        QVERIFY(coversOnce(pool, 1000, 400, &chunks));
        QCOMPARE(chunks, int64_t(2));
        QVERIFY(coversOnce(pool, 10, 100, &chunks));
        QCOMPARE(chunks, int64_t(1));
    }

    void zeroAndNegativeCountsDoNothing() {
        ThreadPool pool(3);
        int calls = 0;
        pool.parallelFor(0, 1, [&](int64_t, int64_t) { ++calls; });
        pool.parallelFor(-5, 1, [&](int64_t, int64_t) { ++calls; });
        QCOMPARE(calls, 0);
    }

    void backToBackJobs() {
        ThreadPool pool(4);
        std::atomic<int64_t> sum{0};
        for (int job = 0; job < 20000; ++job)
            pool.parallelFor(8, 1, [&](int64_t begin, int64_t end) { sum.fetch_add(end - begin); });
        QCOMPARE(sum.load(), int64_t(20000 * 8));
    }

    void jobsAfterWorkersSleep() {
        ThreadPool pool(3);
        for (int round = 0; round < 3; ++round) {
            // Longer than the workers spin: they block, and must be woken.
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            QVERIFY(coversOnce(pool, 999, 1));
        }
    }

    void destroyWhileSpinningOrAsleep() {
        for (int i = 0; i < 50; ++i) {
            ThreadPool pool(4);
            QVERIFY(coversOnce(pool, 100, 1));
            if (i % 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        { ThreadPool idle(4); }  // never used
    }

    void defaultUsesHardwareConcurrency() {
        ThreadPool pool;
        QCOMPARE(pool.threadCount(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "tst_thread_pool.moc"
