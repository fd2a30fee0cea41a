// Loading libcuda with dlopen and resolving the driver entry points; error text helpers.
#include "cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>

namespace hloscope::gpu {

// --- SharedLibrary -------------------------------------------------------------------------------

SharedLibrary::~SharedLibrary() {
    if (m_handle) dlclose(m_handle);
}

bool SharedLibrary::open(const std::string& name, std::string* error) {
    dlerror();  // clear any stale message
    m_handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!m_handle) {
        const char* message = dlerror();
        *error = message ? message : "dlopen failed";
    }
    return m_handle != nullptr;
}

void* SharedLibrary::symbol(const char* name) const {
    return m_handle ? dlsym(m_handle, name) : nullptr;
}

// --- CudaDriver ----------------------------------------------------------------------------------

namespace {

// Resolves every entry point of `d` from `lib`; the name of the first one missing, or "".
std::string resolveDriverSymbols(const SharedLibrary& lib, CudaDriver& d) {
    // Each entry: the symbols to try, newest ABI first.
#define HLOSCOPE_CU(field, ...) \
    if (!loadSymbol(lib, &d.field, {__VA_ARGS__})) return #field;
    HLOSCOPE_CU(cuInit, "cuInit")
    HLOSCOPE_CU(cuDriverGetVersion, "cuDriverGetVersion")
    HLOSCOPE_CU(cuDeviceGetCount, "cuDeviceGetCount")
    HLOSCOPE_CU(cuDeviceGet, "cuDeviceGet")
    HLOSCOPE_CU(cuDeviceGetName, "cuDeviceGetName")
    HLOSCOPE_CU(cuDeviceGetAttribute, "cuDeviceGetAttribute")
    HLOSCOPE_CU(cuDeviceTotalMem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem")
    HLOSCOPE_CU(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
    HLOSCOPE_CU(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
                "cuDevicePrimaryCtxRelease")
    HLOSCOPE_CU(cuCtxSetCurrent, "cuCtxSetCurrent")
    HLOSCOPE_CU(cuMemGetInfo, "cuMemGetInfo_v2", "cuMemGetInfo")
    HLOSCOPE_CU(cuModuleLoadDataEx, "cuModuleLoadDataEx")
    HLOSCOPE_CU(cuModuleUnload, "cuModuleUnload")
    HLOSCOPE_CU(cuModuleGetFunction, "cuModuleGetFunction")
    HLOSCOPE_CU(cuFuncSetAttribute, "cuFuncSetAttribute")
    HLOSCOPE_CU(cuLaunchKernel, "cuLaunchKernel")
    HLOSCOPE_CU(cuMemAlloc, "cuMemAlloc_v2", "cuMemAlloc")
    HLOSCOPE_CU(cuMemFree, "cuMemFree_v2", "cuMemFree")
    HLOSCOPE_CU(cuMemcpyHtoD, "cuMemcpyHtoD_v2", "cuMemcpyHtoD")
    HLOSCOPE_CU(cuMemcpyDtoH, "cuMemcpyDtoH_v2", "cuMemcpyDtoH")
    HLOSCOPE_CU(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync")
    HLOSCOPE_CU(cuMemsetD8Async, "cuMemsetD8Async")
    HLOSCOPE_CU(cuStreamCreate, "cuStreamCreate")
    HLOSCOPE_CU(cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy")
    HLOSCOPE_CU(cuStreamSynchronize, "cuStreamSynchronize")
    HLOSCOPE_CU(cuEventCreate, "cuEventCreate")
    HLOSCOPE_CU(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy")
    HLOSCOPE_CU(cuEventRecord, "cuEventRecord")
    HLOSCOPE_CU(cuEventSynchronize, "cuEventSynchronize")
    HLOSCOPE_CU(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime")
    HLOSCOPE_CU(cuGetErrorName, "cuGetErrorName")
    HLOSCOPE_CU(cuGetErrorString, "cuGetErrorString")
#undef HLOSCOPE_CU
    return {};
}

}  // namespace

std::unique_ptr<CudaDriver> CudaDriver::load(std::string* error) {
    auto driver = std::make_unique<CudaDriver>();
    const char* overridePath = std::getenv("HLOSCOPE_CUDA_LIBRARY");
    driver->libraryName = overridePath && *overridePath ? overridePath : "libcuda.so.1";
    std::string dlError;
    if (!driver->m_library.open(driver->libraryName, &dlError)) {
        *error = "cannot load " + driver->libraryName + " (" + dlError + ")";
        return nullptr;
    }
    std::string missing = resolveDriverSymbols(driver->m_library, *driver);
    if (!missing.empty()) {
        *error = driver->libraryName + " does not export " + missing;
        return nullptr;
    }
    return driver;
}

namespace {

// Names of the errors met before the driver is usable, for when cuGetErrorName cannot say (the
// stub library answers every call with CUDA_ERROR_STUB_LIBRARY and names nothing).
const char* knownErrorName(CUresult result) {
    switch (result) {
        case 3:
            return "CUDA_ERROR_NOT_INITIALIZED";
        case 34:
            return "CUDA_ERROR_STUB_LIBRARY";
        case 35:
            return "CUDA_ERROR_INSUFFICIENT_DRIVER";
        case 46:
            return "CUDA_ERROR_DEVICES_UNAVAILABLE";
        case 100:
            return "CUDA_ERROR_NO_DEVICE";
        case 101:
            return "CUDA_ERROR_INVALID_DEVICE";
        case 999:
            return "CUDA_ERROR_UNKNOWN";
        default:
            return nullptr;
    }
}

}  // namespace

std::string CudaDriver::errorName(CUresult result) const {
    const char* name = nullptr;
    if (cuGetErrorName && cuGetErrorName(result, &name) == CUDA_SUCCESS && name) return name;
    if (const char* known = knownErrorName(result)) return known;
    return "CUDA error " + std::to_string(result);
}

std::string CudaDriver::errorText(CUresult result) const {
    std::string text = errorName(result);
    const char* description = nullptr;
    if (cuGetErrorString && cuGetErrorString(result, &description) == CUDA_SUCCESS && description) {
        text += " (" + std::string(description) + ")";
    }
    return text;
}

void check(const CudaDriver& driver, CUresult result, const std::string& what) {
    if (result != CUDA_SUCCESS) throw CudaError(what + ": " + driver.errorText(result));
}

}  // namespace hloscope::gpu
