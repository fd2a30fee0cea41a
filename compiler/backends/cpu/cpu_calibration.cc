#include "compiler/backends/cpu/cpu_calibration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/cpu/cpu_executable.h"
#include "compiler/estimator/history.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/runtime/host_caches.h"
#include "compiler/runtime/thread_pool.h"
#include "core/interpreter/interpreter.h"
#include "core/io/atomic_file.h"
#include "core/text/hlo_parser.h"

namespace hloscope {

namespace {

// The efficiency factors a calibration starts from (indexed by OpClass): what the CPU
// backend's kernels reach of the peaks the calibration measures, fitted on the development
// machine by `tests/bench/estimator_accuracy.py --fit-shipped` (a quick calibration, then
// `calibrate --from-history` over the kernels of the 33 corpus modules of
// tests/bench/estimator_corpus.txt; the examples were left out). Dot and convolution are
// measured on this machine by the calibration itself (probeLibraryRates); their entries here
// are used only when the CPU backend cannot run.
constexpr double kShippedEfficiency[kOpClassCount] = {0.926, 0.401, 0.596, 0.8, 0.6, 0.638};
constexpr int kShippedKernels[kOpClassCount] = {69, 20, 4, 0, 0, 76};

std::string shippedEfficiencySource(int opClass) {
    if (kShippedKernels[opClass] == 0)
        return "hloscope modelling assumption (the CPU backend could not run here to measure it)";
    return "shipped with hloscope: fitted by calibrate --from-history to " + std::to_string(kShippedKernels[opClass]) +
           " kernels of this class measured on the development machine (x86-64, 2 cores, AVX2; 33 corpus modules, "
           "tests/bench/estimator_accuracy.py --fit-shipped); hloscope-cli calibrate --from-history refits it to "
           "this machine's own measurements";
}

using Stage = std::function<bool(const std::string&)>;

using Clock = std::chrono::steady_clock;
volatile double g_sink = 0;

// Best (smallest) time of `repeats` runs of `body`.
double bestSeconds(int repeats, const std::function<void()>& body) {
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        auto start = Clock::now();
        body();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
}

// STREAM triad a = b + s*c over arrays far larger than the caches, split
// over `threads` threads of the runtime's thread pool, each streaming its own
// contiguous part (first touched by the thread that later uses it, so pages
// sit on its node); bytes/s (3 arrays). One thread: the single-core figure;
// every core: the bound a multi-threaded kernel is measured against.
double measureBandwidth(size_t elements, int repeats, int threads) {
    ThreadPool pool(threads);
    std::vector<float> a(elements), b(elements), c(elements);
    const int64_t count = static_cast<int64_t>(elements);
    const int64_t grain = std::max<int64_t>(1, count / pool.threadCount());
    pool.parallelFor(count, grain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) a[size_t(i)] = 0.f, b[size_t(i)] = 1.f, c[size_t(i)] = 2.f;
    });
    const float s = 0.5f;
    double seconds = bestSeconds(repeats, [&] {
        pool.parallelFor(count, grain, [&](int64_t begin, int64_t end) {
            float* __restrict pa = a.data();
            const float* __restrict pb = b.data();
            const float* __restrict pc = c.data();
            for (int64_t i = begin; i < end; ++i) pa[i] = pb[i] + s * pc[i];
        });
        g_sink = g_sink + a[elements / 2];
    });
    return 3.0 * static_cast<double>(elements) * sizeof(float) / seconds;
}

// Independent multiply-add chains (16 accumulators of 8 lanes: the compiler
// vectorises and keeps them in registers); flops/s of type T, one core.
template <typename T>
double measureFlops(int64_t iterations, int repeats) {
    constexpr int kChains = 128;
    double seconds = bestSeconds(repeats, [&] {
        T acc[kChains];
        for (int j = 0; j < kChains; ++j) acc[j] = static_cast<T>(j) * T(0.001);
        const T m = T(0.999999), a = T(0.000001);
        for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 128
            for (int j = 0; j < kChains; ++j) acc[j] = acc[j] * m + a;
        }
        T sum = 0;
        for (int j = 0; j < kChains; ++j) sum += acc[j];
        g_sink = g_sink + static_cast<double>(sum);
    });
    return 2.0 * kChains * static_cast<double>(iterations) / seconds;
}

// expf and sinf over an array (the libm calls the CPU evaluator uses); results/s.
double measureTranscendentals(size_t elements, int repeats) {
    std::vector<float> x(elements), y(elements);
    for (size_t i = 0; i < elements; ++i) x[i] = static_cast<float>(i % 1000) * 0.001f;
    double seconds = bestSeconds(repeats, [&] {
        for (size_t i = 0; i < elements; ++i) y[i] = std::exp(x[i]) + std::sin(x[i]);
        g_sink = g_sink + y[elements / 3];
    });
    return 2.0 * static_cast<double>(elements) / seconds;
}

// Fixed cost of a parallel loop on the runtime's thread pool
// (compiler/runtime/thread_pool.h): a tiny parallelFor over every thread,
// back to back; seconds per loop.
double measureDispatch(int threads, int dispatches) {
    ThreadPool pool(threads);
    std::atomic<int64_t> work{0};
    auto dispatch = [&] {
        pool.parallelFor(pool.threadCount(), 1, [&](int64_t begin, int64_t end) {
            work.fetch_add(end - begin, std::memory_order_relaxed);  // the tiny loop body
        });
    };
    for (int i = 0; i < 1000; ++i) dispatch();  // warm up
    std::vector<double> samples;
    for (int round = 0; round < 5; ++round) {
        auto start = Clock::now();
        for (int i = 0; i < dispatches; ++i) dispatch();
        samples.push_back(std::chrono::duration<double>(Clock::now() - start).count() / dispatches);
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

// Runs single-op modules on the CPU backend and reads its kernel timings.
class BackendProbe {
public:
    explicit BackendProbe(std::vector<std::string>& notes) : m_notes(notes) {}
    bool available() const { return m_device.available(nullptr); }

    // Median over `rounds` runs of the summed kernel time of `hlo` with
    // `threads` threads (after one compiling, warming run); 0 on failure.
    // `overhead`: the median of the run's wall time less its kernels.
    double kernelSeconds(const std::string& hlo, int threads, int rounds, double* overhead = nullptr) const {
        auto module = parseHloModule(hlo);
        if (!module.isOk()) {
            m_notes.push_back("internal module: " + module.status().message());
            return 0;
        }
        const std::vector<Literal> args = makeRandomArguments(*(*module)->entryComputation(), 7);
        ExecutionOptions options;
        options.threads = threads;
        std::vector<double> samples, rest;
        for (int r = 0; r <= rounds; ++r) {
            auto result = m_device.run(**module, args, options);
            if (!result.isOk()) {
                m_notes.push_back(result.status().message());
                return 0;
            }
            double seconds = 0;
            for (const MeasuredTime& time : result->kernelTimes) seconds += time.seconds;
            if (r > 0) samples.push_back(seconds);
            if (r > 0) rest.push_back(std::max(0.0, result->wallSeconds - seconds));
        }
        if (overhead) *overhead = median(rest);
        return median(samples);
    }

private:
    CpuDevice m_device;
    std::vector<std::string>& m_notes;
};

// A module applying `op` to one f32 array of `elements`.
std::string unaryModule(const std::string& op, int64_t elements) {
    const std::string shape = "f32[" + std::to_string(elements) + "]";
    return "HloModule probe_" + op + "\n\nENTRY main {\n  p = " + shape + " parameter(0)\n  ROOT r = " + shape +
           " " + op + "(p)\n}\n";
}


// The backend's fixed costs: a 16-element kernel (its cost on the calling
// thread) and the rest of its run.
void probeFixedCosts(const BackendProbe& probe, int rounds, TargetDescription& target,
                     TargetDescription::CpuRuntime& runtime, const std::string& measured) {
    double runOverhead = 0;
    const double tiny = probe.kernelSeconds(unaryModule("negate", 16), 1, rounds * 4, &runOverhead);
    if (tiny <= 0) return;
    target.kernelLaunchSeconds = tiny;
    target.sources["$.kernelLaunchSeconds"] = measured +
                                              ": median time the CPU backend reports for a 16-element negate kernel "
                                              "(its fixed cost on the calling thread)";
    runtime.runSeconds = runOverhead;
    target.sources["$.cpuRuntime.runSeconds"] =
        measured + ": median wall time of a run of a one-kernel module less the kernel's time";
}

// Bandwidth by working set: an elementwise add of two arrays (working set
// 12 bytes per element) on one thread and on every core, repeated so that
// what fits stays in the caches.
void probeBandwidthCurve(const BackendProbe& probe, int rounds, bool quick, int threads, double dispatch,
                         TargetDescription& target, TargetDescription::CpuRuntime& runtime,
                         const std::string& measured) {
    const size_t largest = quick ? (size_t(64) << 20) : (size_t(256) << 20);
    for (size_t bytes = size_t(16) << 10; bytes <= largest; bytes *= 4) {
        const int64_t n = static_cast<int64_t>(bytes / 12);
        const std::string shape = "f32[" + std::to_string(n) + "]";
        const std::string add = "HloModule probe_add\n\nENTRY main {\n  a = " + shape + " parameter(0)\n  b = " +
                                shape + " parameter(1)\n  ROOT r = " + shape + " add(a, b)\n}\n";
        const int probeRounds = bytes >= (size_t(64) << 20) ? std::max(3, rounds / 4) : rounds;
        const double one = probe.kernelSeconds(add, 1, probeRounds) - target.kernelLaunchSeconds;
        if (one <= 0) continue;
        double all = one;
        if (n >= kCpuParallelMinWork && threads > 1) {
            all = probe.kernelSeconds(add, threads, probeRounds) - target.kernelLaunchSeconds - dispatch;
            if (all <= 0) all = one;
        }
        const double moved = 12.0 * static_cast<double>(n);
        runtime.bandwidthCurve.push_back({moved, moved / one, moved / all});
    }
    target.sources["$.cpuRuntime.bandwidthCurve"] =
        measured + ": the CPU backend's elementwise add of two f32 arrays at working sets of 16 KiB to " +
        std::to_string(largest >> 20) + " MiB, repeated (rows: working set bytes, bytes/s on one thread, bytes/s on " +
        std::to_string(threads) + " threads; kernel and dispatch costs taken off)";
}

// A row's fixed cost: a transpose writing 64K elements as 16K rows of 4
// against a negate walking them linearly (the transpose works out its
// operand's index per row, and rows shorter than a vector run scalar).
void probeRowCost(const BackendProbe& probe, int rounds, TargetDescription& target,
                  TargetDescription::CpuRuntime& runtime, const std::string& measured) {
    const std::string rowsModule =
        "HloModule probe_rows\n\nENTRY main {\n  p = f32[4,16384] parameter(0)\n  ROOT r = "
        "f32[16384,4] transpose(p), dimensions={1,0}\n}\n";
    const double rowed = probe.kernelSeconds(rowsModule, 1, rounds);
    const double flat = probe.kernelSeconds(unaryModule("negate", 65536), 1, rounds);
    if (flat <= 0 || rowed <= flat) return;
    runtime.rowSeconds = (rowed - flat) / 16384;
    target.sources["$.cpuRuntime.rowSeconds"] = measured +
                                                ": a transpose writing 64K f32 elements as 16K rows of 4 against a "
                                                "linear negate of as many, on the CPU backend, per row";
}

// The backend's vectorised transcendentals over 16K in-cache elements
// (64 KiB in, 64 KiB out: the L2 cache); false when they did not run.
bool probeTranscendentals(const BackendProbe& probe, int rounds, TargetDescription& target,
                          const std::string& measured) {
    const int64_t n = 16384;
    double total = 0;
    const char* functions[] = {"exponential", "log", "sine", "tanh", "logistic"};
    for (const char* op : functions) total += probe.kernelSeconds(unaryModule(op, n), 1, rounds);
    const double perFunction = total / std::size(functions) - target.kernelLaunchSeconds;
    if (perFunction <= 0) return false;
    target.transcendentalsPerSecond = static_cast<double>(n) / perFunction;
    target.sources["$.transcendentalsPerSecond"] =
        measured + ": the CPU backend's vectorised exp, log, sin, tanh and logistic over 16K in-cache f32 elements "
                   "on one thread (results/s, mean time of the five)";
    return true;
}

// The GEMM's and convolution's rates, one thread, as efficiencies over the
// f32 peak; the GEMM's rate becomes the peak when it beats the portable loop.
void probeLibraryRates(const BackendProbe& probe, int rounds, TargetDescription& target,
                       const std::string& measured) {
    double peak = target.vectorPeakTflops["f32"] * 1e12;
    const std::string dot =
        "HloModule probe_dot\n\nENTRY main {\n  a = f32[256,256] parameter(0)\n  b = f32[256,256] "
        "parameter(1)\n  ROOT d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    if (const double seconds = probe.kernelSeconds(dot, 1, rounds); seconds > 0) {
        const double rate = 2.0 * 256 * 256 * 256 / seconds;
        if (rate > peak) {
            // The GEMM's hand-vectorised FMAs beat the portable loop: it is
            // the best f32 rate this core showed.
            peak = rate;
            for (const char* type : {"f32", "bf16", "f16"}) {
                target.vectorPeakTflops[type] = rate / 1e12;
                target.sources[std::string("$.peakTflops.vector.") + type] =
                    measured + ": the CPU backend's f32 GEMM (256x256x256, one thread), faster than the portable "
                               "multiply-add loop" +
                    (std::string(type) == "f32" ? "" : " (XLA CPU computes this type in f32)");
            }
        }
        target.efficiency[static_cast<size_t>(OpClass::kDot)] = std::clamp(rate / peak, 0.01, 1.0);
        target.sources["$.efficiency.dot"] =
            measured + ": the CPU backend's f32 GEMM (256x256x256, one thread) over the f32 peak";
    }
    const std::string convolution =
        "HloModule probe_convolution\n\nENTRY main {\n  x = f32[1,32,32,64] parameter(0)\n  w = f32[3,3,64,64] "
        "parameter(1)\n  ROOT c = f32[1,32,32,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
        "dim_labels=b01f_01io->b01f\n}\n";
    if (const double seconds = probe.kernelSeconds(convolution, 1, rounds); seconds > 0) {
        const double rate = 2.0 * 32 * 32 * 64 * 64 * 9 / seconds;
        target.efficiency[static_cast<size_t>(OpClass::kConvolution)] = std::clamp(rate / peak, 0.01, 1.0);
        target.sources["$.efficiency.convolution"] =
            measured + ": the CPU backend's f32 3x3 convolution (32x32x64 -> 64, one thread) over the f32 peak";
    }
}

// Everything the CPU backend itself tells: its fixed costs, bandwidth
// curve, row cost, transcendental and library rates, and the runtime
// figures (cpuRuntime; kept out when no bandwidth probe ran). False when the
// backend cannot run here or its transcendentals did not run.
bool probeCpuBackend(TargetDescription& target, bool quick, int threads, const std::string& measured,
                     std::vector<std::string>& notes, const Stage& stage) {
    BackendProbe probe(notes);
    if (!probe.available()) {
        notes.push_back("the CPU backend cannot run here; its figures keep the loop measurements");
        return false;
    }
    const int rounds = quick ? 9 : 31;
    // kernelLaunchSeconds holds the pool's dispatch cost until the probe
    // replaces it with a kernel's own.
    const double dispatch = target.kernelLaunchSeconds;
    const std::string dispatchSource = target.sources["$.kernelLaunchSeconds"];
    TargetDescription::CpuRuntime runtime;
    runtime.parallelMinElements = static_cast<double>(kCpuParallelMinWork);
    target.sources["$.cpuRuntime.parallelMinElements"] =
        "the CPU backend's rule (compiler/backends/cpu/cpu_executable.h, kCpuParallelMinWork): kernels with fewer "
        "elements of work run on the calling thread";
    runtime.parallelDispatchSeconds = dispatch;
    target.sources["$.cpuRuntime.parallelDispatchSeconds"] = dispatchSource;
    if (!stage("the CPU backend's fixed costs")) return false;
    probeFixedCosts(probe, rounds, target, runtime, measured);
    if (!stage("the CPU backend's bandwidth by working set")) return false;
    probeBandwidthCurve(probe, rounds, quick, threads, dispatch, target, runtime, measured);
    if (!stage("the cost of a row")) return false;
    probeRowCost(probe, rounds, target, runtime, measured);
    if (!stage("vectorised transcendentals")) return false;
    const bool transcendentals = probeTranscendentals(probe, rounds, target, measured);
    if (!stage("GEMM and convolution")) return false;
    probeLibraryRates(probe, rounds, target, measured);
    if (runtime.bandwidthCurve.empty())
        notes.push_back("no bandwidth probe ran; the model keeps one bandwidth figure");
    else
        target.cpuRuntime = std::move(runtime);
    return transcendentals;
}


}  // namespace

StatusOr<CpuCalibration> calibrateCpu(const CpuCalibrationOptions& options) {
    const bool quick = options.quick;
    const int repeats = quick ? 2 : 5;
    constexpr int kStages = 9;
    int done = 0;
    auto stage = [&](const std::string& name) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return false;
        if (options.progress) options.progress(name, done, kStages);
        ++done;
        return true;
    };
    auto cancelled = [] { return Status(StatusCode::kCancelled, "calibration cancelled"); };
    CpuCalibration result;
    TargetDescription& target = result.target;
    const std::string measured = "measured by hloscope-cli calibrate on this machine";

    target.name = "cpu";
    target.kind = TargetKind::kCpu;
    target.hasMatrixUnit = false;
    target.sources["$.matrixUnit"] = "hloscope: CPUs have no matrix unit in this model (dots run at the vector rate)";

    if (!stage("memory bandwidth (triad)")) return cancelled();
    const size_t triadElements = quick ? (size_t(1) << 23) : (size_t(1) << 25);
    const double bandwidth = measureBandwidth(triadElements, repeats, 1);
    target.memoryBandwidthBytesPerSecond = bandwidth;
    target.sources["$.memoryBandwidthBytesPerSecond"] =
        measured + ": single-core triad a = b + s*c over 3 arrays of " + (quick ? "32" : "128") + " MiB";
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    target.memoryBandwidthAllCoresBytesPerSecond = measureBandwidth(triadElements, repeats, static_cast<int>(hardware));
    target.sources["$.memoryBandwidthAllCoresBytesPerSecond"] =
        measured + ": the same triad split over " + std::to_string(hardware) +
        " threads of the runtime's thread pool, each streaming its own first-touched part";
    if (!stage("multiply-add throughput")) return cancelled();
    const int64_t iterations = quick ? 2000000 : 10000000;
    const double f32 = measureFlops<float>(iterations, repeats);
    const double f64 = measureFlops<double>(iterations, repeats);
    target.vectorPeakTflops["f32"] = f32 / 1e12;
    target.vectorPeakTflops["f64"] = f64 / 1e12;
    target.vectorPeakTflops["bf16"] = f32 / 1e12;
    target.vectorPeakTflops["f16"] = f32 / 1e12;
    target.sources["$.peakTflops.vector.f32"] =
        measured + ": single-core f32 multiply-add throughput (128 independent chains, compiler-vectorised)";
    target.sources["$.peakTflops.vector.f64"] = measured + ": single-core f64 multiply-add throughput";
    target.sources["$.peakTflops.vector.bf16"] =
        measured + ": the f32 rate (XLA CPU computes bf16 elementwise work in f32)";
    target.sources["$.peakTflops.vector.f16"] =
        measured + ": the f32 rate (XLA CPU computes f16 elementwise work in f32)";
    if (!stage("the thread pool's dispatch cost")) return cancelled();
    target.kernelLaunchSeconds = measureDispatch(static_cast<int>(hardware), quick ? 2000 : 20000);
    target.sources["$.kernelLaunchSeconds"] =
        measured + ": median fixed cost of a tiny parallelFor on the runtime's spinning thread pool of " +
        std::to_string(hardware) + " threads (compiler/runtime/thread_pool.h)";
    target.cores = hardware;
    target.sources["$.cores"] = measured + ": std::thread::hardware_concurrency()";
    const HostCaches caches = hostCaches();
    target.cacheBytes = static_cast<double>(caches.lastLevelBytes());
    target.onChipMemoryBytes = static_cast<double>(caches.l1dBytes);
    target.sources["$.cacheBytes"] =
        measured + ": the last-level cache one core sees (" + caches.source + "; 0: not reported)";
    target.sources["$.onChipMemoryBytes"] = measured + ": the L1 data cache per core (" + caches.source + ")";
    for (int i = 0; i < kOpClassCount; ++i) {
        const std::string name(opClassName(static_cast<OpClass>(i)));
        target.efficiency[static_cast<size_t>(i)] = kShippedEfficiency[i];
        target.sources["$.efficiency." + name] = shippedEfficiencySource(i);
    }

    // What the CPU backend's own kernels achieve (its loops are vectorised
    // for this CPU, the plain loops above are not); libm's rate when the
    // backend cannot run here.
    const bool backend = probeCpuBackend(target, quick, static_cast<int>(hardware), measured, result.notes, stage);
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return cancelled();
    if (!backend) {
        const size_t elements = quick ? (size_t(1) << 20) : (size_t(1) << 22);
        target.transcendentalsPerSecond = measureTranscendentals(elements, repeats);
        target.sources["$.transcendentalsPerSecond"] = measured + ": single-core libm expf + sinf results per second";
    }
    const std::string host = machineName();
    const std::string by = std::string("hloscope-cli calibrate") + (quick ? " --quick" : "");
    target.description = "This CPU (" + host + "), one core's throughput; measured by " + by + ".";
    target.calibrated.unixTime = static_cast<int64_t>(std::time(nullptr));
    target.calibrated.host = host;
    target.calibrated.by = by;
    if (auto check = targetDescriptionFromJson(targetDescriptionToJson(target)); !check.isOk())
        return Status(StatusCode::kInternal, "the calibration does not read back: " + check.status().message());
    return result;

}

StatusOr<std::string> cacheCpuCalibration(const TargetDescription& target) {
    const std::string path = cpuTargetCachePath();
    if (path.empty()) return Status(StatusCode::kFailedPrecondition, "no cache folder (neither XDG_CACHE_HOME nor HOME is set)");
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
    HLO_RETURN_IF_ERROR(writeFileAtomically(path, targetDescriptionToJson(target)));
    return path;
}

StatusOr<TargetDescription> ensureCpuCalibration(const CpuCalibrationOptions& options, bool* measuredNow) {
    if (measuredNow) *measuredNow = false;
    const std::string cached = cpuTargetCachePath();
    if (!cached.empty() && std::ifstream(cached).good()) return loadTargetDescription(cached);
    HLO_ASSIGN_OR_RETURN(CpuCalibration calibration, calibrateCpu(options));
    if (measuredNow) *measuredNow = true;
    if (!cached.empty()) HLO_RETURN_IF_ERROR(cacheCpuCalibration(calibration.target).status());
    return calibration.target;
}

}  // namespace hloscope
