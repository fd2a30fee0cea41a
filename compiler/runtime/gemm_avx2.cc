// Eigen GEMM kernels for AVX2+FMA CPUs (built with -mavx2 -mfma, run only
// where the CPU has them); see gemm_kernel.inc.
#include <cstdint>
#define HLOSCOPE_GEMM_NAMESPACE gemm_avx2
#include "compiler/runtime/gemm_kernel.inc"
