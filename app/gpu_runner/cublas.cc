// cuBLAS through dlopen: loading, handle creation and the row-major SGEMM mapping.
#include "cublas.h"

#include <cstdlib>
#include <vector>

namespace hloscope::gpu {

namespace {

constexpr int kCublasSuccess = 0;
constexpr int kOpN = 0;  // CUBLAS_OP_N
constexpr int kOpT = 1;  // CUBLAS_OP_T

// The library names tried in order: an explicit $HLOSCOPE_CUBLAS_LIBRARY alone, else the
// versions the runner knows.
std::vector<std::string> cublasCandidates() {
    const char* overridePath = std::getenv("HLOSCOPE_CUBLAS_LIBRARY");
    if (overridePath && *overridePath) return {overridePath};
    return {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
}

}  // namespace

Cublas::~Cublas() {
    if (m_handle && m_destroy) m_destroy(m_handle);
}

std::unique_ptr<Cublas> Cublas::create(CUstream stream, std::string* error) {
    std::unique_ptr<Cublas> blas(new Cublas);
    std::string reasons;
    for (const std::string& name : cublasCandidates()) {
        std::string dlError;
        if (blas->m_library.open(name, &dlError)) {
            blas->m_libraryName = name;
            break;
        }
        reasons += (reasons.empty() ? "" : "; ") + dlError;
    }
    if (!blas->m_library.isOpen()) {
        *error = "cannot load cuBLAS (" + reasons + ")";
        return nullptr;
    }
    const SharedLibrary& lib = blas->m_library;
    if (!loadSymbol(lib, &blas->m_create, {"cublasCreate_v2"}) ||
        !loadSymbol(lib, &blas->m_destroy, {"cublasDestroy_v2"}) ||
        !loadSymbol(lib, &blas->m_setStream, {"cublasSetStream_v2"}) ||
        !loadSymbol(lib, &blas->m_sgemm, {"cublasSgemm_v2"}) ||
        !loadSymbol(lib, &blas->m_sgemmStridedBatched, {"cublasSgemmStridedBatched"})) {
        *error = blas->m_libraryName + " lacks the cuBLAS v2 SGEMM entry points";
        return nullptr;
    }
    loadSymbol(lib, &blas->m_statusName, {"cublasGetStatusName"});
    if (int status = blas->m_create(&blas->m_handle); status != kCublasSuccess) {
        blas->m_handle = nullptr;
        *error = "cublasCreate_v2: " + blas->statusText(status);
        return nullptr;
    }
    if (int status = blas->m_setStream(blas->m_handle, stream); status != kCublasSuccess) {
        *error = "cublasSetStream_v2: " + blas->statusText(status);
        return nullptr;
    }
    return blas;
}

std::string Cublas::statusText(int status) const {
    const char* name = m_statusName ? m_statusName(status) : nullptr;
    return name ? std::string(name) : "cuBLAS status " + std::to_string(status);
}

// cuBLAS is column-major: a row-major [r, c] matrix is its column-major transpose. So the
// row-major product out = L * R is computed as the column-major out^T = R^T * L^T, with the
// operands swapped and n, m exchanged; a transposed operand flips its op and leading dimension.
std::string Cublas::sgemm(const GemmShape& s, CUdeviceptr lhs, CUdeviceptr rhs,
                          CUdeviceptr out) const {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const int opRhs = s.rhsTransposed ? kOpT : kOpN;
    const int ldRhs = s.rhsTransposed ? s.k : s.n;
    const int opLhs = s.lhsTransposed ? kOpT : kOpN;
    const int ldLhs = s.lhsTransposed ? s.m : s.k;
    auto* a = reinterpret_cast<const float*>(rhs);
    auto* b = reinterpret_cast<const float*>(lhs);
    auto* c = reinterpret_cast<float*>(out);
    int status = kCublasSuccess;
    if (s.batch == 1) {
        status = m_sgemm(m_handle, opRhs, opLhs, s.n, s.m, s.k, &alpha, a, ldRhs, b, ldLhs, &beta,
                         c, s.n);
    } else {
        const long long strideRhs = static_cast<long long>(s.k) * s.n;
        const long long strideLhs = static_cast<long long>(s.m) * s.k;
        const long long strideOut = static_cast<long long>(s.m) * s.n;
        status = m_sgemmStridedBatched(m_handle, opRhs, opLhs, s.n, s.m, s.k, &alpha, a, ldRhs,
                                       strideRhs, b, ldLhs, strideLhs, &beta, c, s.n, strideOut,
                                       s.batch);
    }
    return status == kCublasSuccess ? std::string() : statusText(status);
}

}  // namespace hloscope::gpu
