// One GPU as the runner uses it: the driver loaded and initialised, the device's primary context
// current on this thread, its description, and RAII owners for the driver objects (device
// memory, streams, events, modules) that release them in the right order.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cuda_driver.h"

namespace hloscope::gpu {

// What results.json, the probe and --info report about the device.
struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    int ccMajor = 0;
    int ccMinor = 0;
    int smCount = 0;
    int clockKhz = 0;
    int memoryClockKhz = 0;
    int memoryBusBits = 0;
    int l2Bytes = 0;
    uint64_t globalMemoryBytes = 0;
    int driverVersion = 0;  // 13000 for CUDA 13.0

    // {"name", "compute_capability": "9.0", "sm_count", "clock_khz", "memory_clock_khz",
    //  "memory_bus_bits", "l2_bytes", "global_memory_bytes", "driver_version", "driver": "13.0"}
    nlohmann::ordered_json toJson() const;
};

// "13.0" for 13000, "12.4" for 12040.
std::string formatDriverVersion(int version);

// The driver, initialised, with one device's primary context current. Not copyable.
class GpuContext {
public:
    ~GpuContext();
    GpuContext(const GpuContext&) = delete;
    GpuContext& operator=(const GpuContext&) = delete;

    // Outcome of open(): a context, or why there is none. `noGpu` is true when the machine
    // simply has no usable GPU (no driver, cuInit fails, no such device: exit code 2) and
    // false when a present GPU failed (exit code 1).
    struct Opened {
        std::unique_ptr<GpuContext> context;
        bool noGpu = false;
        std::string error;
    };
    static Opened open(int ordinal);

    const CudaDriver& api() const { return *m_driver; }
    const DeviceInfo& info() const { return m_info; }
    int deviceCount() const { return m_deviceCount; }

private:
    GpuContext() = default;
    void queryInfo();

    std::unique_ptr<CudaDriver> m_driver;
    CUdevice m_device = 0;
    bool m_retained = false;
    int m_deviceCount = 0;
    DeviceInfo m_info;
};

// Device memory from cuMemAlloc; freed when destroyed.
class DeviceBuffer {
public:
    DeviceBuffer(const CudaDriver& api, size_t bytes);  // throws CudaError
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    CUdeviceptr get() const { return m_pointer; }
    size_t bytes() const { return m_bytes; }

private:
    const CudaDriver& m_api;
    CUdeviceptr m_pointer = 0;
    size_t m_bytes = 0;
};

// A non-blocking stream; destroyed with the object.
class Stream {
public:
    explicit Stream(const CudaDriver& api);  // throws CudaError
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    CUstream get() const { return m_stream; }
    void synchronize(const std::string& what) const;  // throws CudaError naming `what`

private:
    const CudaDriver& m_api;
    CUstream m_stream = nullptr;
};

// A timing event.
class Event {
public:
    explicit Event(const CudaDriver& api);  // throws CudaError
    ~Event();
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event(Event&& other) noexcept;
    CUevent get() const { return m_event; }
    void record(const Stream& stream) const;
    // Milliseconds from `start` to this event; both must have completed.
    float elapsedSince(const Event& start) const;

private:
    const CudaDriver* m_api;
    CUevent m_event = nullptr;
};

// A loaded PTX module.
class Module {
public:
    // cuModuleLoadDataEx of the NUL-terminated PTX text, with the JIT's error and info logs
    // captured; on failure throws CudaError whose message ends with the JIT error log.
    Module(const CudaDriver& api, const std::string& ptx);
    ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    CUfunction function(const std::string& entry) const;  // throws CudaError

private:
    const CudaDriver& m_api;
    CUmodule m_module = nullptr;
};

}  // namespace hloscope::gpu
