// Eigen GEMM kernels for any x86-64 (SSE2) CPU; see gemm_kernel.inc.
#include <cstdint>
#define HLOSCOPE_GEMM_NAMESPACE gemm_baseline
#include "compiler/runtime/gemm_kernel.inc"
