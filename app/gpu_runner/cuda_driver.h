// The CUDA driver API as hloscope-gpu-runner uses it: loaded at run time with dlopen, so the
// program builds without CUDA's headers or libraries and runs (to say "no GPU found") on machines
// that have neither. Declares the few types, constants and entry points it needs, a table of
// function pointers filled from libcuda.so.1, and the error helpers every caller goes through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>

namespace hloscope::gpu {

// --- Types (layout-compatible with cuda.h) -----------------------------------------------------

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit on every platform the runner supports
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

constexpr CUresult CUDA_SUCCESS = 0;

// CUjit_option values for cuModuleLoadDataEx.
enum CUjit_option : int {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

// CUdevice_attribute values read for the device description.
enum CUdevice_attribute : int {
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

// CUfunction_attribute: needed to launch with more than 48 KiB of dynamic shared memory.
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;

// --- dlopen handle -----------------------------------------------------------------------------

// Owns one dlopen handle; closes it when destroyed.
class SharedLibrary {
public:
    SharedLibrary() = default;
    ~SharedLibrary();
    SharedLibrary(const SharedLibrary&) = delete;
    SharedLibrary& operator=(const SharedLibrary&) = delete;

    // dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE): the library stays mapped after
    // dlclose, since driver threads may outlive the handle. false with *error = dlerror().
    bool open(const std::string& name, std::string* error);
    // dlsym, or nullptr.
    void* symbol(const char* name) const;
    bool isOpen() const { return m_handle != nullptr; }

private:
    void* m_handle = nullptr;
};

// Stores in *fn the first of `names` that `library` exports; false when it exports none.
template <typename Fn>
bool loadSymbol(const SharedLibrary& library, Fn* fn, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (void* p = library.symbol(name)) {
            *fn = reinterpret_cast<Fn>(p);
            return true;
        }
    }
    return false;
}

// --- The driver API table ----------------------------------------------------------------------

// The driver entry points the runner calls, resolved from libcuda. Versioned symbols (`_v2`)
// are preferred where the driver exports them, as cuda.h's macros would choose.
struct CudaDriver {
    CUresult (*cuInit)(unsigned flags) = nullptr;
    CUresult (*cuDriverGetVersion)(int* version) = nullptr;
    CUresult (*cuDeviceGetCount)(int* count) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
    CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;
    CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;
    CUresult (*cuDeviceTotalMem)(size_t* bytes, CUdevice device) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;
    CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
    CUresult (*cuMemGetInfo)(size_t* free, size_t* total) = nullptr;
    CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned numOptions,
                                   CUjit_option* options, void** optionValues) = nullptr;
    CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
    CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module,
                                    const char* name) = nullptr;
    CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value) = nullptr;
    CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ,
                               unsigned blockX, unsigned blockY, unsigned blockZ,
                               unsigned sharedBytes, CUstream stream, void** kernelParams,
                               void** extra) = nullptr;
    CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes) = nullptr;
    CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
    CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes) = nullptr;
    CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes) = nullptr;
    CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                  CUstream stream) = nullptr;
    CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count,
                                CUstream stream) = nullptr;
    CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags) = nullptr;
    CUresult (*cuStreamDestroy)(CUstream stream) = nullptr;
    CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
    CUresult (*cuEventCreate)(CUevent* event, unsigned flags) = nullptr;
    CUresult (*cuEventDestroy)(CUevent event) = nullptr;
    CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
    CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
    CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end) = nullptr;
    CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
    CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;

    // The library name that was loaded ("libcuda.so.1", or $HLOSCOPE_CUDA_LIBRARY).
    std::string libraryName;

    // Loads the driver library ($HLOSCOPE_CUDA_LIBRARY, else libcuda.so.1) and resolves every
    // entry point. On failure returns nullptr and sets *error to a one-line reason
    // ("cannot load libcuda.so.1 (...)", "libcuda.so.1 does not export cuInit").
    static std::unique_ptr<CudaDriver> load(std::string* error);

    // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; the number when the driver does not know it.
    std::string errorText(CUresult result) const;

    // "CUDA_ERROR_NO_DEVICE" (or "CUDA error N"): the name alone.
    std::string errorName(CUresult result) const;

private:
    SharedLibrary m_library;
};

// A failed driver (or cuBLAS) call. The message names the call and the error; callers prefix
// where it happened (the step, the phase).
class CudaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Throws CudaError("<what>: <errorText>") unless result is CUDA_SUCCESS.
void check(const CudaDriver& driver, CUresult result, const std::string& what);

}  // namespace hloscope::gpu
