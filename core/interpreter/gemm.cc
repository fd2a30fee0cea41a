// Single-threaded f32/f64 GEMM for the evaluator's dot and convolution.
//
// BLIS-style: the k x n operand is packed into KC x NR column panels, the
// m x k operand into MC x KC blocks of MR-row panels, and an MR x NR
// register-blocked micro-kernel accumulates each tile. The micro-kernel is
// written with GCC/Clang vector extensions (plain SSE2 code at -O2, no
// -march flags or intrinsics needed; on x86 an AVX2 copy of it, chosen at run
// time, does 8 floats or 4 doubles a vector); other compilers get the same
// loops on scalars. Every C element accumulates its products in increasing k order
// with one rounding per multiply and per add (-ffp-contract stays off in ISO
// mode), so results are bitwise equal to the naive triple loop.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/interpreter/ops_internal.h"

namespace hloscope::evaluator {

namespace {

#if defined(__GNUC__) || defined(__clang__)
#define HLOSCOPE_GEMM_VECTOR 1
#endif

template <typename T>
struct KernelShape;
template <>
struct KernelShape<float> {
    static constexpr int kMr = 6;
    static constexpr int kNr = 8;
    static constexpr int64_t kKc = 256;
    static constexpr int64_t kMc = 120;
    static constexpr int64_t kNc = 2048;
};
template <>
struct KernelShape<double> {
    static constexpr int kMr = 6;
    static constexpr int kNr = 4;
    static constexpr int64_t kKc = 256;
    static constexpr int64_t kMc = 96;
    static constexpr int64_t kNc = 1024;
};

#ifdef HLOSCOPE_GEMM_VECTOR
// 16-byte vectors: 4 floats or 2 doubles (SSE2); 32-byte ones for the AVX2 kernel below.
typedef float FloatVector __attribute__((vector_size(16)));
typedef double DoubleVector __attribute__((vector_size(16)));
typedef float FloatVector8 __attribute__((vector_size(32)));
typedef double DoubleVector4 __attribute__((vector_size(32)));
template <typename T, int Bytes = 16>
struct VectorOf {
    using type = std::conditional_t<std::is_same_v<T, float>,
                                    std::conditional_t<Bytes == 16, FloatVector, FloatVector8>,
                                    std::conditional_t<Bytes == 16, DoubleVector, DoubleVector4>>;
};

template <typename V>
inline V loadVector(const void* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <typename V, typename T>
inline V broadcastVector(T x) {
    if constexpr (sizeof(V) / sizeof(T) == 4)
        return V{x, x, x, x};
    else
        return V{x, x};
}
template <typename V>
inline void storeVector(void* p, V v) {
    std::memcpy(p, &v, sizeof v);
}

// c (MR x NR tile, row stride ldc) (+)= sum over kc of a-panel x b-panel.
// a: kc x MR (MR contiguous per k), b: kc x NR (NR contiguous per k).
template <typename T>
void microKernel(int64_t kc, const T* __restrict a, const T* __restrict b, T* __restrict c,
                 int64_t ldc, bool accumulate) {
    using V = typename VectorOf<T>::type;
    constexpr int kMr = KernelShape<T>::kMr;
    constexpr int kNr = KernelShape<T>::kNr;
    constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(T));
    constexpr int kCols = kNr / kLanes;  // vectors per row (2)
    static_assert(kCols == 2, "micro-kernel expects two vectors per row");
    V c0[kMr], c1[kMr];
    for (int i = 0; i < kMr; ++i) {
        if (accumulate) {
            c0[i] = loadVector<V>(c + i * ldc);
            c1[i] = loadVector<V>(c + i * ldc + kLanes);
        } else {
            c0[i] = V{};
            c1[i] = V{};
        }
    }
    for (int64_t p = 0; p < kc; ++p) {
        const V b0 = loadVector<V>(b + p * kNr);
        const V b1 = loadVector<V>(b + p * kNr + kLanes);
        const T* ap = a + p * kMr;
#pragma GCC unroll 8
        for (int i = 0; i < kMr; ++i) {
            const V ai = broadcastVector<V>(ap[i]);
            c0[i] += ai * b0;
            c1[i] += ai * b1;
        }
    }
    for (int i = 0; i < kMr; ++i) {
        storeVector(c + i * ldc, c0[i]);
        storeVector(c + i * ldc + kLanes, c1[i]);
    }
}

#if defined(__x86_64__) || defined(__i386__)
#define HLOSCOPE_GEMM_AVX2 1
// The same tile with one 32-byte vector per row, in a function compiled for AVX2 and called
// only where the CPU has it (plain AVX2 arithmetic: a multiply and an add per term, no FMA,
// so its results are bitwise those of the SSE2 kernel).

template <typename T>
__attribute__((target("avx2"))) void microKernelAvx2(int64_t kc, const T* __restrict a,
                                                     const T* __restrict b, T* __restrict c,
                                                     int64_t ldc, bool accumulate) {
    using V = typename VectorOf<T, 32>::type;
    constexpr int kMr = KernelShape<T>::kMr;
    static_assert(KernelShape<T>::kNr * sizeof(T) == sizeof(V), "one vector per row");
    V acc[kMr];
    for (int i = 0; i < kMr; ++i) {
        if (accumulate)
            std::memcpy(&acc[i], c + i * ldc, sizeof(V));
        else
            acc[i] = V{};
    }
    for (int64_t p = 0; p < kc; ++p) {
        V bv;
        std::memcpy(&bv, b + p * KernelShape<T>::kNr, sizeof bv);
        const T* ap = a + p * kMr;
#pragma GCC unroll 8
        for (int i = 0; i < kMr; ++i) acc[i] += ap[i] * bv;
    }
    for (int i = 0; i < kMr; ++i) std::memcpy(c + i * ldc, &acc[i], sizeof(V));
}

bool cpuHasAvx2() {
    static const bool has = __builtin_cpu_supports("avx2");
    return has;
}
#endif

template <typename T>
void runMicroKernel(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool accumulate) {
#ifdef HLOSCOPE_GEMM_AVX2
    if (cpuHasAvx2()) return microKernelAvx2<T>(kc, a, b, c, ldc, accumulate);
#endif
    microKernel<T>(kc, a, b, c, ldc, accumulate);
}
#else
template <typename T>
void runMicroKernel(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool accumulate) {
    constexpr int kMr = KernelShape<T>::kMr;
    constexpr int kNr = KernelShape<T>::kNr;
    T acc[kMr][kNr];
    for (int i = 0; i < kMr; ++i)
        for (int j = 0; j < kNr; ++j) acc[i][j] = accumulate ? c[i * ldc + j] : T(0);
    for (int64_t p = 0; p < kc; ++p) {
        const T* ap = a + p * kMr;
        const T* bp = b + p * kNr;
        for (int i = 0; i < kMr; ++i)
            for (int j = 0; j < kNr; ++j) acc[i][j] += ap[i] * bp[j];
    }
    for (int i = 0; i < kMr; ++i)
        for (int j = 0; j < kNr; ++j) c[i * ldc + j] = acc[i][j];
}
#endif

// Packs rows [row0, row0 + mc) x cols [col0, col0 + kc) of `a` into MR-row
// panels: panel r holds, for each k, MR consecutive row values (zero-padded).
template <typename T>
void packA(const T* a, int64_t rowStride, int64_t colStride, int64_t row0, int64_t mc, int64_t col0,
           int64_t kc, T* out) {
    constexpr int kMr = KernelShape<T>::kMr;
    for (int64_t ir = 0; ir < mc; ir += kMr) {
        const int64_t mr = std::min<int64_t>(kMr, mc - ir);
        T* dst = out + (ir / kMr) * kc * kMr;
        const T* src = a + (row0 + ir) * rowStride + col0 * colStride;
        if (mr == kMr) {
            for (int64_t p = 0; p < kc; ++p) {
                const T* s = src + p * colStride;
                for (int i = 0; i < kMr; ++i) dst[p * kMr + i] = s[i * rowStride];
            }
        } else {
            for (int64_t p = 0; p < kc; ++p) {
                const T* s = src + p * colStride;
                for (int i = 0; i < kMr; ++i) dst[p * kMr + i] = i < mr ? s[i * rowStride] : T(0);
            }
        }
    }
}

// Packs rows [row0, row0 + kc) x cols [col0, col0 + nc) of `b` into NR-column
// panels: panel c holds, for each k, NR consecutive column values.
template <typename T>
void packB(const T* b, int64_t rowStride, int64_t colStride, int64_t row0, int64_t kc, int64_t col0,
           int64_t nc, T* out) {
    constexpr int kNr = KernelShape<T>::kNr;
    for (int64_t jr = 0; jr < nc; jr += kNr) {
        const int64_t nr = std::min<int64_t>(kNr, nc - jr);
        T* dst = out + (jr / kNr) * kc * kNr;
        const T* src = b + row0 * rowStride + (col0 + jr) * colStride;
        if (nr == kNr && colStride == 1) {
            for (int64_t p = 0; p < kc; ++p)
                std::memcpy(dst + p * kNr, src + p * rowStride, sizeof(T) * kNr);
        } else {
            for (int64_t p = 0; p < kc; ++p) {
                const T* s = src + p * rowStride;
                for (int j = 0; j < kNr; ++j) dst[p * kNr + j] = j < nr ? s[j * colStride] : T(0);
            }
        }
    }
}

template <typename T>
void gemmImpl(int64_t batch, int64_t m, int64_t n, int64_t k, const T* a, MatrixStrides as,
              const T* b, MatrixStrides bs, T* c, bool accumulate) {
    using Blocking = KernelShape<T>;
    constexpr int kMr = Blocking::kMr;
    constexpr int kNr = Blocking::kNr;
    if (batch <= 0 || m <= 0 || n <= 0) return;
    if (k <= 0) {
        if (!accumulate) std::fill(c, c + batch * m * n, T(0));
        return;
    }
    const int64_t kcMax = std::min(Blocking::kKc, k);
    const int64_t ncMax = std::min(Blocking::kNc, n);
    const int64_t mcMax = std::min(Blocking::kMc, m);
    std::vector<T> packedB(static_cast<size_t>(kcMax * ((ncMax + kNr - 1) / kNr) * kNr));
    std::vector<T> packedA(static_cast<size_t>(kcMax * ((mcMax + kMr - 1) / kMr) * kMr));
    T edge[kMr * kNr];
    for (int64_t bi = 0; bi < batch; ++bi) {
        const T* ab = a + bi * as.batch;
        const T* bb = b + bi * bs.batch;
        T* cb = c + bi * m * n;
        for (int64_t jc = 0; jc < n; jc += ncMax) {
            const int64_t nc = std::min(ncMax, n - jc);
            for (int64_t pc = 0; pc < k; pc += kcMax) {
                const int64_t kc = std::min(kcMax, k - pc);
                const bool acc = accumulate || pc > 0;
                packB(bb, bs.row, bs.col, pc, kc, jc, nc, packedB.data());
                for (int64_t ic = 0; ic < m; ic += mcMax) {
                    const int64_t mc = std::min(mcMax, m - ic);
                    packA(ab, as.row, as.col, ic, mc, pc, kc, packedA.data());
                    for (int64_t jr = 0; jr < nc; jr += kNr) {
                        const int64_t nr = std::min<int64_t>(kNr, nc - jr);
                        const T* bp = packedB.data() + (jr / kNr) * kc * kNr;
                        for (int64_t ir = 0; ir < mc; ir += kMr) {
                            const int64_t mr = std::min<int64_t>(kMr, mc - ir);
                            const T* ap = packedA.data() + (ir / kMr) * kc * kMr;
                            T* ct = cb + (ic + ir) * n + jc + jr;
                            if (mr == kMr && nr == kNr) {
                                runMicroKernel<T>(kc, ap, bp, ct, n, acc);
                                continue;
                            }
                            for (int64_t i = 0; i < mr; ++i)
                                for (int64_t j = 0; j < nr; ++j)
                                    edge[i * kNr + j] = acc ? ct[i * n + j] : T(0);
                            runMicroKernel<T>(kc, ap, bp, edge, kNr, true);
                            for (int64_t i = 0; i < mr; ++i)
                                for (int64_t j = 0; j < nr; ++j) ct[i * n + j] = edge[i * kNr + j];
                        }
                    }
                }
            }
        }
    }
}

}  // namespace

void gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a, MatrixStrides aStrides,
          const float* b, MatrixStrides bStrides, float* c, bool accumulate) {
    gemmImpl<float>(batch, m, n, k, a, aStrides, b, bStrides, c, accumulate);
}

void gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const double* a, MatrixStrides aStrides,
          const double* b, MatrixStrides bStrides, double* c, bool accumulate) {
    gemmImpl<double>(batch, m, n, k, a, aStrides, b, bStrides, c, accumulate);
}

}  // namespace hloscope::evaluator
