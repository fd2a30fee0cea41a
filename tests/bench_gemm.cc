// bench_gemm: GFLOP/s of the CPU runtime's GEMM (compiler/runtime/gemm.h)
// on the CPU backend benchmark's shapes (x[4096,1024] @ w[1024,1024], square
// 1024 and 2048), f32 and f64, on 1 thread and on every core.
// Usage: bench_gemm [repeats]   (not run by CTest)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "compiler/runtime/gemm.h"
#include "compiler/runtime/thread_pool.h"

using namespace hloscope;

namespace {

template <typename T>
double medianSeconds(const GemmPlan& plan, ThreadPool* pool, int repeats) {
    std::vector<T> a(static_cast<size_t>(plan.m * plan.k)), b(static_cast<size_t>(plan.k * plan.n)),
        c(static_cast<size_t>(plan.m * plan.n));
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> u(-1, 1);
    for (T& x : a) x = static_cast<T>(u(rng));
    for (T& x : b) x = static_cast<T>(u(rng));
    runGemm(plan, a.data(), b.data(), c.data(), pool);  // warm-up
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        runGemm(plan, a.data(), b.data(), c.data(), pool);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::printf("GEMM kernel: %s; %d hardware threads; median of %d runs\n", gemmKernelName().c_str(), cores, repeats);
    std::printf("%-6s %-22s %8s %12s %12s\n", "type", "m x k x n", "threads", "ms", "GFLOP/s");
    struct Shape3 {
        int64_t m, k, n;
    };
    for (const Shape3 s : {Shape3{4096, 1024, 1024}, Shape3{1024, 1024, 1024}, Shape3{2048, 2048, 2048}}) {
        for (PrimitiveType type : {PrimitiveType::F32, PrimitiveType::F64}) {
            for (int threads : {1, cores}) {
                GemmPlan plan;
                plan.type = plan.lhsType = plan.rhsType = type;
                plan.m = s.m;
                plan.k = s.k;
                plan.n = s.n;
                ThreadPool pool(threads);
                const double seconds = type == PrimitiveType::F32 ? medianSeconds<float>(plan, &pool, repeats)
                                                                   : medianSeconds<double>(plan, &pool, repeats);
                char dims[64];
                std::snprintf(dims, sizeof dims, "%lld x %lld x %lld", static_cast<long long>(s.m),
                              static_cast<long long>(s.k), static_cast<long long>(s.n));
                std::printf("%-6s %-22s %8d %12.2f %12.1f\n", type == PrimitiveType::F32 ? "f32" : "f64", dims,
                            threads, seconds * 1e3, plan.flops() / seconds / 1e9);
                if (threads == cores) break;
            }
        }
    }
    return 0;
}
