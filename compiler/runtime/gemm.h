// GEMM for the CPU runtime: a dot as a batch of row-major matrix products,
// out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n], computed by Eigen's
// blocked, cache-tiled GEMM (the library XLA's CPU backend calls for dots),
// parallel over blocks of output rows on our ThreadPool.
//
// Why Eigen (not oneDNN, not our own code generation): Eigen is header-only
// and in Debian (libeigen3-dev), its GEMM reaches most of the machine's peak
// for f32/f64 once compiled for the host's vector unit, and XLA:CPU uses it,
// so measured fused/unfused ratios compare like with like. Eigen picks its
// SIMD kernels at compile time: the kernels are built twice, for x86-64
// baseline and for AVX2+FMA, and the fastest one this CPU supports runs.
// (An AVX-512 build measured no faster here: 44 GFLOP/s f32 per core with
// either, bench_gemm.)
//
// planGemm says whether a dot maps onto this form: f32 or f64 (or f16, bf16, f8 and f32
// mixed, multiplied in f32); dense
// operands and result in the default descending layout; batch dimensions
// first and in order in both operands; each operand's free and contracting
// dimensions in one contiguous block each (either order, so a transposed
// operand costs nothing), contracting dimensions in the same order in both.
// Anything else is an error saying why (the caller falls back).
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/primitive_type.h"
#include "core/support/status.h"

namespace hloscope {

class HloInstruction;
class ThreadPool;

struct GemmPlan {
    // The result's element type: F32 or F64, or a narrow float of one or two bytes (f16,
    // bf16, the f8 family; computed in f32).
    PrimitiveType type = PrimitiveType::F32;
    // The operands' element types: both F64 with an F64 result; else each F32 or a narrow float.
    PrimitiveType lhsType = PrimitiveType::F32;
    PrimitiveType rhsType = PrimitiveType::F32;
    int64_t batch = 1;
    int64_t m = 1;  // product of the lhs free dimensions
    int64_t n = 1;  // product of the rhs free dimensions
    int64_t k = 1;  // product of the contracting dimensions
    bool lhsTransposed = false;  // lhs stored as [b, k, m]
    bool rhsTransposed = false;  // rhs stored as [b, n, k]
    // 2*b*m*n*k.
    double flops() const { return 2.0 * batch * m * n * k; }
    // Whether an operand or the result is a narrow float: runGemm then widens the operands to
    // f32, multiplies in f32 (f32 accumulation, as the reference interpreter) and rounds the
    // result to nearest even. runGemmRows and runGemmTile take only plans that do not convert.
    bool converts() const {
        return lhsType != type || rhsType != type ||
               (type != PrimitiveType::F32 && type != PrimitiveType::F64);
    }
};

StatusOr<GemmPlan> planGemm(const HloInstruction& dot);

// Runs the plan on dense buffers (lhs, rhs, out as planned). `pool` null:
// on this thread.
void runGemm(const GemmPlan& plan, const void* lhs, const void* rhs, void* out, ThreadPool* pool);

// Rows [begin, end) of the flattened [batch * m] output, on this thread,
// written to `out` (which holds just those rows: (end - begin) * n values),
// so a caller can apply an epilogue to a block while it is hot in cache.
void runGemmRows(const GemmPlan& plan, const void* lhs, const void* rhs, void* out, int64_t begin, int64_t end);
// Rows [begin, end) x columns [colBegin, colEnd) of the flattened output,
// written compactly to `out` ((end - begin) * (colEnd - colBegin) values):
// an epilogue over a wide output tiles it, so that neither operand is
// re-packed once per small row block.
void runGemmTile(const GemmPlan& plan, const void* lhs, const void* rhs, void* out, int64_t begin, int64_t end,
                 int64_t colBegin, int64_t colEnd);
// The smallest row block worth a thread (about 1 MFLOP, at least 32 rows).
int64_t gemmRowGrain(const GemmPlan& plan);

// "avx2+fma" or "baseline": the kernel runGemm uses on this CPU.
std::string gemmKernelName();

}  // namespace hloscope
