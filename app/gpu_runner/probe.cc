// --probe (copy bandwidth and launch overhead, for the GPU target description) and --info.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "device.h"
#include "runner.h"

namespace hloscope::gpu {

namespace {

using ojson = nlohmann::ordered_json;

// Two kernels for the probe, in PTX the driver JIT-compiles for any sm_80 or newer device:
// an empty one (launch overhead) and a grid-stride copy of 16-byte vectors (bandwidth).
constexpr const char* kProbePtx = R"PTX(
.version 7.8
.target sm_80
.address_size 64

// hloscope_probe_empty(): does nothing; times the launch path alone.
.visible .entry hloscope_probe_empty()
{
    ret;
}

// hloscope_probe_copy(dst, src, count): dst[i] = src[i] for `count` 16-byte vectors, in a
// grid-stride loop.
.visible .entry hloscope_probe_copy(
    .param .u64 hloscope_probe_copy_dst,
    .param .u64 hloscope_probe_copy_src,
    .param .u64 hloscope_probe_copy_count
)
{
    .reg .pred  %p<2>;
    .reg .b32   %r<9>;
    .reg .b64   %rd<9>;

    ld.param.u64        %rd1, [hloscope_probe_copy_dst];
    ld.param.u64        %rd2, [hloscope_probe_copy_src];
    ld.param.u64        %rd3, [hloscope_probe_copy_count];
    cvta.to.global.u64  %rd1, %rd1;
    cvta.to.global.u64  %rd2, %rd2;
    mov.u32             %r1, %ctaid.x;
    mov.u32             %r2, %ntid.x;
    mov.u32             %r3, %tid.x;
    mov.u32             %r4, %nctaid.x;
    cvt.u64.u32         %rd4, %r3;
    mad.wide.u32        %rd4, %r1, %r2, %rd4;       // i = blockIdx.x * blockDim.x + threadIdx.x
    mul.wide.u32        %rd5, %r4, %r2;             // stride = gridDim.x * blockDim.x
$L_loop:
    setp.ge.u64         %p1, %rd4, %rd3;
    @%p1 bra            $L_done;
    shl.b64             %rd6, %rd4, 4;              // byte offset of vector i
    add.s64             %rd7, %rd2, %rd6;
    add.s64             %rd8, %rd1, %rd6;
    ld.global.v4.u32    {%r5, %r6, %r7, %r8}, [%rd7];
    st.global.v4.u32    [%rd8], {%r5, %r6, %r7, %r8};
    add.s64             %rd4, %rd4, %rd5;
    bra.uni             $L_loop;
$L_done:
    ret;
}
)PTX";

constexpr int kCopyWarmups = 2;
constexpr int kCopyRepeats = 10;
constexpr int kLaunches = 10000;
constexpr int kSyncedLaunches = 1000;
constexpr unsigned kCopyBlock = 256;
constexpr unsigned char kPattern = 0x5a;

// GB/s for a copy of `bytes` taking `ms`, counting the bytes read and the bytes written.
double copyGbs(uint64_t bytes, double ms) {
    return ms > 0 ? 2.0 * double(bytes) / (ms * 1e-3) / 1e9 : 0.0;
}

// The measurements, each on the probe's own stream.
class Prober {
public:
    Prober(const GpuContext& gpu, uint64_t bytes)
        : m_gpu(gpu),
          m_api(gpu.api()),
          m_stream(m_api),
          m_module(m_api, kProbePtx),
          m_empty(m_module.function("hloscope_probe_empty")),
          m_copy(m_module.function("hloscope_probe_copy")),
          m_bytes(bytes),
          m_src(m_api, bytes),
          m_dst(m_api, bytes) {}

    // Best of kCopyRepeats timed calls of `copy` (after kCopyWarmups), in milliseconds.
    template <typename Copy>
    double bestCopyMs(Copy copy) {
        for (int i = 0; i < kCopyWarmups; ++i) copy();
        Event start(m_api), end(m_api);
        double best = 0;
        for (int i = 0; i < kCopyRepeats; ++i) {
            start.record(m_stream);
            copy();
            end.record(m_stream);
            m_stream.synchronize("copy bandwidth");
            double ms = end.elapsedSince(start);
            best = i == 0 ? ms : std::min(best, ms);
        }
        return best;
    }

    double copyEngineGbs() {
        return copyGbs(
            m_bytes, bestCopyMs([&] {
                check(m_api,
                      m_api.cuMemcpyDtoDAsync(m_dst.get(), m_src.get(), m_bytes, m_stream.get()),
                      "cuMemcpyDtoDAsync");
            }));
    }

    // The copy kernel's bandwidth; first checks that it copies.
    double copyKernelGbs() {
        fill();
        launchCopy();
        m_stream.synchronize("copy kernel");
        verifyCopied();
        return copyGbs(m_bytes, bestCopyMs([&] { launchCopy(); }));
    }

    // Mean microseconds per launch over kLaunches back-to-back empty launches (events).
    double launchOverheadUs() {
        for (int i = 0; i < 100; ++i) launchEmpty();
        Event start(m_api), end(m_api);
        start.record(m_stream);
        for (int i = 0; i < kLaunches; ++i) launchEmpty();
        end.record(m_stream);
        m_stream.synchronize("launch overhead");
        return end.elapsedSince(start) * 1e3 / kLaunches;
    }

    // Mean wall-clock microseconds of one empty launch plus cuStreamSynchronize.
    double launchSyncUs() {
        for (int i = 0; i < 100; ++i) {
            launchEmpty();
            m_stream.synchronize("launch + sync");
        }
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < kSyncedLaunches; ++i) {
            launchEmpty();
            m_stream.synchronize("launch + sync");
        }
        auto elapsed = std::chrono::steady_clock::now() - start;
        return std::chrono::duration<double, std::micro>(elapsed).count() / kSyncedLaunches;
    }

private:
    void launchEmpty() {
        check(m_api,
              m_api.cuLaunchKernel(m_empty, 1, 1, 1, 1, 1, 1, 0, m_stream.get(), nullptr, nullptr),
              "cuLaunchKernel(hloscope_probe_empty)");
    }

    void launchCopy() {
        CUdeviceptr dst = m_dst.get();
        CUdeviceptr src = m_src.get();
        unsigned long long count = m_bytes / 16;
        void* params[] = {&dst, &src, &count};
        uint64_t blocksNeeded = (count + kCopyBlock - 1) / kCopyBlock;
        unsigned grid =
            unsigned(std::clamp<uint64_t>(blocksNeeded, 1, uint64_t(m_gpu.info().smCount) * 8));
        check(m_api,
              m_api.cuLaunchKernel(m_copy, grid, 1, 1, kCopyBlock, 1, 1, 0, m_stream.get(), params,
                                   nullptr),
              "cuLaunchKernel(hloscope_probe_copy)");
    }

    // src = the pattern, dst = zeros.
    void fill() {
        check(m_api, m_api.cuMemsetD8Async(m_src.get(), kPattern, m_bytes, m_stream.get()),
              "cuMemsetD8Async");
        check(m_api, m_api.cuMemsetD8Async(m_dst.get(), 0, m_bytes, m_stream.get()),
              "cuMemsetD8Async");
    }

    // The first and last 4 KiB of dst must hold the pattern.
    void verifyCopied() {
        const size_t probe = std::min<uint64_t>(4096, m_bytes);
        std::vector<unsigned char> head(probe), tail(probe);
        check(m_api, m_api.cuMemcpyDtoH(head.data(), m_dst.get(), probe), "cuMemcpyDtoH");
        check(m_api, m_api.cuMemcpyDtoH(tail.data(), m_dst.get() + m_bytes - probe, probe),
              "cuMemcpyDtoH");
        auto isPattern = [](unsigned char b) { return b == kPattern; };
        if (!std::all_of(head.begin(), head.end(), isPattern) ||
            !std::all_of(tail.begin(), tail.end(), isPattern)) {
            throw CudaError("the probe's copy kernel did not copy its buffer");
        }
    }

    const GpuContext& m_gpu;
    const CudaDriver& m_api;
    Stream m_stream;
    Module m_module;
    CUfunction m_empty;
    CUfunction m_copy;
    uint64_t m_bytes;
    DeviceBuffer m_src;
    DeviceBuffer m_dst;
};

// The requested size clamped to a quarter of the free memory, in whole 256-byte blocks.
uint64_t probeBytes(const CudaDriver& api, uint64_t requested) {
    size_t freeBytes = 0, totalBytes = 0;
    check(api, api.cuMemGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
    uint64_t bytes = std::min<uint64_t>(requested, freeBytes / 4);
    return bytes / 256 * 256;
}

// Opens the device, or reports why not; nullptr then, with *exitCode set.
std::unique_ptr<GpuContext> openOrReport(int device, int* exitCode) {
    GpuContext::Opened opened = GpuContext::open(device);
    if (!opened.context) {
        if (opened.noGpu) {
            *exitCode = reportNoGpu(opened.error);
        } else {
            printError(opened.error);
            *exitCode = kExitError;
        }
    }
    return std::move(opened.context);
}

}  // namespace

int runProbeCommand(const ProbeOptions& options) {
    int exitCode = kExitOk;
    std::unique_ptr<GpuContext> gpu = openOrReport(options.device, &exitCode);
    if (!gpu) return exitCode;
    try {
        uint64_t bytes = probeBytes(gpu->api(), options.bytes);
        if (bytes < 4096) throw CudaError("too little free device memory to probe");
        ojson result;
        result["format"] = "hloscope-gpu-probe";
        result["version"] = 1;
        result["device"] = gpu->info().toJson();
        Prober prober(*gpu, bytes);
        result["copy_bandwidth_gbs"] = prober.copyEngineGbs();
        result["copy_kernel_bandwidth_gbs"] = prober.copyKernelGbs();
        result["launch_overhead_us"] = prober.launchOverheadUs();
        result["launch_sync_us"] = prober.launchSyncUs();
        result["bytes"] = bytes;
        writeFileReplacing(options.outputFile, result.dump(2) + "\n");
        std::printf(
            "%s: copy %.1f GB/s, copy kernel %.1f GB/s, launch %.2f us, launch+sync %.2f us\n",
            gpu->info().name.c_str(), result["copy_bandwidth_gbs"].get<double>(),
            result["copy_kernel_bandwidth_gbs"].get<double>(),
            result["launch_overhead_us"].get<double>(), result["launch_sync_us"].get<double>());
    } catch (const std::exception& e) {
        printError("probe: " + std::string(e.what()));
        return kExitError;
    }
    return kExitOk;
}

int runInfoCommand(int device) {
    int exitCode = kExitOk;
    std::unique_ptr<GpuContext> gpu = openOrReport(device, &exitCode);
    if (!gpu) return exitCode;
    ojson info;
    info["format"] = "hloscope-gpu-info";
    info["version"] = 1;
    info["device_count"] = gpu->deviceCount();
    info["device"] = gpu->info().toJson();
    std::cout << info.dump(2) << '\n';
    return kExitOk;
}

}  // namespace hloscope::gpu
