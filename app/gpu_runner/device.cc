// Opening the GPU (driver, device, primary context), the device description, and the RAII
// owners of driver objects.
#include "device.h"

#include <cstdint>
#include <utility>

namespace hloscope::gpu {

// --- DeviceInfo ----------------------------------------------------------------------------------

std::string formatDriverVersion(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

nlohmann::ordered_json DeviceInfo::toJson() const {
    nlohmann::ordered_json j;
    j["name"] = name;
    j["compute_capability"] = std::to_string(ccMajor) + "." + std::to_string(ccMinor);
    j["sm_count"] = smCount;
    j["clock_khz"] = clockKhz;
    j["memory_clock_khz"] = memoryClockKhz;
    j["memory_bus_bits"] = memoryBusBits;
    j["l2_bytes"] = l2Bytes;
    j["global_memory_bytes"] = globalMemoryBytes;
    j["driver_version"] = driverVersion;
    j["driver"] = formatDriverVersion(driverVersion);
    return j;
}

// --- GpuContext ----------------------------------------------------------------------------------

GpuContext::Opened GpuContext::open(int ordinal) {
    Opened opened;
    std::unique_ptr<GpuContext> gpu(new GpuContext);
    gpu->m_driver = CudaDriver::load(&opened.error);
    if (!gpu->m_driver) {
        opened.noGpu = true;
        return opened;
    }
    const CudaDriver& api = *gpu->m_driver;
    if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
        opened.noGpu = true;
        opened.error = "cuInit failed: " + api.errorText(r);
        return opened;
    }
    if (CUresult r = api.cuDeviceGetCount(&gpu->m_deviceCount); r != CUDA_SUCCESS) {
        opened.noGpu = true;
        opened.error = "cuDeviceGetCount failed: " + api.errorText(r);
        return opened;
    }
    if (gpu->m_deviceCount == 0) {
        opened.noGpu = true;
        opened.error = "no CUDA device";
        return opened;
    }
    if (ordinal >= gpu->m_deviceCount) {
        opened.noGpu = true;
        opened.error = "no CUDA device " + std::to_string(ordinal) + " (the driver sees " +
                       std::to_string(gpu->m_deviceCount) + ")";
        return opened;
    }
    try {
        check(api, api.cuDeviceGet(&gpu->m_device, ordinal), "cuDeviceGet");
        gpu->m_info.ordinal = ordinal;
        gpu->queryInfo();
        CUcontext context = nullptr;
        check(api, api.cuDevicePrimaryCtxRetain(&context, gpu->m_device),
              "cuDevicePrimaryCtxRetain");
        gpu->m_retained = true;
        check(api, api.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    } catch (const CudaError& e) {
        opened.error = e.what();
        return opened;
    }
    opened.context = std::move(gpu);
    return opened;
}

GpuContext::~GpuContext() {
    if (m_retained) m_driver->cuDevicePrimaryCtxRelease(m_device);
}

// Reads the device's name, attributes, memory size and the driver version (throws CudaError).
void GpuContext::queryInfo() {
    const CudaDriver& api = *m_driver;
    char name[256] = {};
    check(api, api.cuDeviceGetName(name, sizeof name - 1, m_device), "cuDeviceGetName");
    m_info.name = name;
    auto attribute = [&](CUdevice_attribute which, const char* what) {
        int value = 0;
        check(api, api.cuDeviceGetAttribute(&value, which, m_device),
              std::string("cuDeviceGetAttribute(") + what + ")");
        return value;
    };
    m_info.ccMajor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc major");
    m_info.ccMinor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc minor");
    m_info.smCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
    m_info.clockKhz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate");
    m_info.memoryClockKhz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memory clock");
    m_info.memoryBusBits = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "bus width");
    m_info.l2Bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");
    size_t total = 0;
    check(api, api.cuDeviceTotalMem(&total, m_device), "cuDeviceTotalMem");
    m_info.globalMemoryBytes = total;
    check(api, api.cuDriverGetVersion(&m_info.driverVersion), "cuDriverGetVersion");
}

// --- DeviceBuffer, Stream, Event, Module ----------------------------------------------------

DeviceBuffer::DeviceBuffer(const CudaDriver& api, size_t bytes) : m_api(api), m_bytes(bytes) {
    check(api, api.cuMemAlloc(&m_pointer, bytes),
          "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
}

DeviceBuffer::~DeviceBuffer() {
    if (m_pointer) m_api.cuMemFree(m_pointer);
}

Stream::Stream(const CudaDriver& api) : m_api(api) {
    check(api, api.cuStreamCreate(&m_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

Stream::~Stream() {
    if (m_stream) m_api.cuStreamDestroy(m_stream);
}

void Stream::synchronize(const std::string& what) const {
    check(m_api, m_api.cuStreamSynchronize(m_stream), what + ": cuStreamSynchronize");
}

Event::Event(const CudaDriver& api) : m_api(&api) {
    check(api, api.cuEventCreate(&m_event, CU_EVENT_DEFAULT), "cuEventCreate");
}

Event::Event(Event&& other) noexcept
    : m_api(other.m_api), m_event(std::exchange(other.m_event, nullptr)) {}

Event::~Event() {
    if (m_event) m_api->cuEventDestroy(m_event);
}

void Event::record(const Stream& stream) const {
    check(*m_api, m_api->cuEventRecord(m_event, stream.get()), "cuEventRecord");
}

float Event::elapsedSince(const Event& start) const {
    float ms = 0;
    check(*m_api, m_api->cuEventElapsedTime(&ms, start.m_event, m_event), "cuEventElapsedTime");
    return ms;
}

Module::Module(const CudaDriver& api, const std::string& ptx) : m_api(api) {
    constexpr size_t kLogBytes = 1 << 16;
    std::string errorLog(kLogBytes, '\0');
    std::string infoLog(kLogBytes, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {errorLog.data(), reinterpret_cast<void*>(uintptr_t{kLogBytes}),
                      infoLog.data(), reinterpret_cast<void*>(uintptr_t{kLogBytes})};
    CUresult r = api.cuModuleLoadDataEx(&m_module, ptx.c_str(), 4, options, values);
    if (r != CUDA_SUCCESS) {
        m_module = nullptr;
        std::string log = errorLog.c_str();  // up to the JIT's terminating NUL
        while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
        std::string message = "cuModuleLoadDataEx: " + api.errorText(r);
        if (!log.empty()) message += "\nJIT error log:\n" + log;
        throw CudaError(message);
    }
}

Module::~Module() {
    if (m_module) m_api.cuModuleUnload(m_module);
}

CUfunction Module::function(const std::string& entry) const {
    CUfunction function = nullptr;
    check(m_api, m_api.cuModuleGetFunction(&function, m_module, entry.c_str()),
          "cuModuleGetFunction(" + entry + ")");
    return function;
}

}  // namespace hloscope::gpu
