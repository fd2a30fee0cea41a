// Eigen GEMM kernels for AVX-512 CPUs (built with -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma, run only
// where the CPU has them); a shared library of its own with hidden visibility,
// see gemm_kernel.inc.
#include <cstdint>
// GCC 12 warns inside its own avx512fintrin.h (the deliberately undefined
// vectors of _mm512_undefined_ps) once Eigen's code inlines them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define HLOSCOPE_GEMM_NAMESPACE gemm_avx512
#define HLOSCOPE_GEMM_EXPORT __attribute__((visibility("default")))
#include "compiler/runtime/gemm_kernel.inc"
