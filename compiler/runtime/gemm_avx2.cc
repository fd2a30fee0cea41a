// Eigen GEMM kernels for AVX2+FMA CPUs (built with -mavx2 -mfma, run only
// where the CPU has them); a shared library of its own with hidden visibility,
// see gemm_kernel.inc.
#include <cstdint>
#define HLOSCOPE_GEMM_NAMESPACE gemm_avx2
#define HLOSCOPE_GEMM_EXPORT __attribute__((visibility("default")))
#include "compiler/runtime/gemm_kernel.inc"
