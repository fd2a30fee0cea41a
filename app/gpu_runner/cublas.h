// cuBLAS, optional and loaded at run time like the driver: row-major f32 matrix products for
// the plan's "gemm" steps. When the library is missing or a call fails, the runner falls back to
// the step's own kernel.
#pragma once

#include <memory>
#include <string>

#include "cuda_driver.h"

namespace hloscope::gpu {

// One row-major f32 product per batch element: out[b] = op(lhs[b]) * op(rhs[b]), with
// lhs [batch, m, k] (stored [batch, k, m] when lhsTransposed), rhs [batch, k, n] (stored
// [batch, n, k] when rhsTransposed) and out [batch, m, n], all dense.
struct GemmShape {
    int batch = 1;
    int m = 0;
    int n = 0;
    int k = 0;
    bool lhsTransposed = false;
    bool rhsTransposed = false;
};

class Cublas {
public:
    ~Cublas();
    Cublas(const Cublas&) = delete;
    Cublas& operator=(const Cublas&) = delete;

    // Loads cuBLAS ($HLOSCOPE_CUBLAS_LIBRARY, else libcublas.so.13, .so.12, .so) and creates a
    // handle bound to `stream` in the current context. nullptr with *error set when it cannot.
    static std::unique_ptr<Cublas> create(CUstream stream, std::string* error);

    // The library that was loaded ("libcublas.so.13").
    const std::string& libraryName() const { return m_libraryName; }

    // Enqueues the product on the stream; "" on success, else the cuBLAS error.
    std::string sgemm(const GemmShape& shape, CUdeviceptr lhs, CUdeviceptr rhs,
                      CUdeviceptr out) const;

private:
    Cublas() = default;
    std::string statusText(int status) const;

    using Handle = struct cublasContext*;
    SharedLibrary m_library;
    std::string m_libraryName;
    Handle m_handle = nullptr;
    int (*m_create)(Handle*) = nullptr;
    int (*m_destroy)(Handle) = nullptr;
    int (*m_setStream)(Handle, CUstream) = nullptr;
    int (*m_sgemm)(Handle, int, int, int, int, int, const float*, const float*, int, const float*,
                   int, const float*, float*, int) = nullptr;
    int (*m_sgemmStridedBatched)(Handle, int, int, int, int, int, const float*, const float*, int,
                                 long long, const float*, int, long long, const float*, float*, int,
                                 long long, int) = nullptr;
    const char* (*m_statusName)(int) = nullptr;  // optional (cuBLAS 11.4+)
};

}  // namespace hloscope::gpu
