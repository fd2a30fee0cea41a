#include "compiler/runtime/gemm.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

#include "compiler/runtime/thread_pool.h"
#include "core/ir/float_types.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/shape.h"

namespace hloscope {

// The kernels, one namespace per instruction-set level (gemm_kernel.inc).
#define HLOSCOPE_GEMM_DECLARE(ns)                                                                                 \
    namespace ns {                                                                                                \
    void gemmRowsF32(int64_t m, int64_t n, int64_t k, bool lt, bool rt, const float* lhs, const float* rhs,       \
                     float* out, int64_t row, int64_t rows, int64_t col, int64_t cols);                           \
    void gemmRowsF64(int64_t m, int64_t n, int64_t k, bool lt, bool rt, const double* lhs, const double* rhs,     \
                     double* out, int64_t row, int64_t rows, int64_t col, int64_t cols);                          \
    }
HLOSCOPE_GEMM_DECLARE(gemm_baseline)
#if defined(__x86_64__)
HLOSCOPE_GEMM_DECLARE(gemm_avx2)
HLOSCOPE_GEMM_DECLARE(gemm_avx512)
#endif
#undef HLOSCOPE_GEMM_DECLARE

namespace {

// Positions [from, from + count) hold exactly `dims` in order.
bool isBlock(const std::vector<int64_t>& dims, int64_t from) {
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i] != from + static_cast<int64_t>(i)) return false;
    return true;
}

Status notGemm(const HloInstruction& dot, const std::string& why) {
    return Status(StatusCode::kUnimplemented, "%" + dot.name() + ": not a plain GEMM: " + why);
}

}  // namespace

StatusOr<GemmPlan> planGemm(const HloInstruction& dot) {
    if (dot.opcode() != HloOpcode::kDot) return notGemm(dot, "not a dot");
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (!numbers) return notGemm(dot, "no dimension numbers");
    if (!numbers->lhsRaggedDimensions.empty() || !numbers->rhsGroupDimensions.empty())
        return notGemm(dot, "ragged dot");
    const Shape& lhs = dot.operand(0)->shape();
    const Shape& rhs = dot.operand(1)->shape();
    const Shape& out = dot.shape();
    GemmPlan plan;
    plan.type = out.elementType();
    plan.lhsType = lhs.elementType();
    plan.rhsType = rhs.elementType();
    // f32 and the narrow floats of one or two bytes (f16, bf16, the f8 family).
    auto f32Computed = [](PrimitiveType t) {
        return t == PrimitiveType::F32 ||
               (primitive_util::isFloatingPoint(t) && t != PrimitiveType::F64 &&
                !primitive_util::isSubByte(t));
    };
    if (plan.type != PrimitiveType::F64 && !f32Computed(plan.type))
        return notGemm(dot, "element type " + std::string(primitive_util::name(plan.type)));
    if (plan.type == PrimitiveType::F64
            ? plan.lhsType != plan.type || plan.rhsType != plan.type
            : !f32Computed(plan.lhsType) || !f32Computed(plan.rhsType))
        return notGemm(dot, "mixed element types");
    if (!lhs.hasDefaultDenseLayout() || !rhs.hasDefaultDenseLayout() || !out.hasDefaultDenseLayout())
        return notGemm(dot, "an operand or the result is not in the default dense layout");
    const int64_t batchRank = static_cast<int64_t>(numbers->lhsBatchDimensions.size());
    if (!isBlock(numbers->lhsBatchDimensions, 0) || !isBlock(numbers->rhsBatchDimensions, 0))
        return notGemm(dot, "batch dimensions are not the leading ones");
    const int64_t contracting = static_cast<int64_t>(numbers->lhsContractingDimensions.size());
    if (contracting != static_cast<int64_t>(numbers->rhsContractingDimensions.size()))
        return notGemm(dot, "contracting dimension counts differ");
    // Each operand: after the batch block, its free and contracting
    // dimensions in one block each; `contractingFirst` says which comes first
    // (when either block is empty both orders are the same memory).
    auto side = [&](const Shape& shape, const std::vector<int64_t>& contract, bool* contractingFirst) {
        const int64_t freeCount = shape.rank() - batchRank - contracting;
        *contractingFirst = false;
        if (contract.empty() || freeCount == 0) return isBlock(contract, batchRank + freeCount) || isBlock(contract, batchRank);
        if (isBlock(contract, batchRank)) return *contractingFirst = true;
        return isBlock(contract, batchRank + freeCount);
    };
    bool lhsContractingFirst = false, rhsContractingFirst = false;
    if (!side(lhs, numbers->lhsContractingDimensions, &lhsContractingFirst) ||
        !side(rhs, numbers->rhsContractingDimensions, &rhsContractingFirst))
        return notGemm(dot, "free or contracting dimensions are interleaved");
    auto size = [](const Shape& shape, const std::vector<int64_t>& dims) {
        int64_t p = 1;
        for (int64_t d : dims) p *= shape.dimensions()[static_cast<size_t>(d)];
        return p;
    };
    auto freeSize = [&](const Shape& shape, const std::vector<int64_t>& contract) {
        int64_t p = 1;
        for (int64_t d = batchRank; d < shape.rank(); ++d)
            if (std::find(contract.begin(), contract.end(), d) == contract.end())
                p *= shape.dimensions()[static_cast<size_t>(d)];
        return p;
    };
    plan.batch = size(lhs, numbers->lhsBatchDimensions);
    plan.k = size(lhs, numbers->lhsContractingDimensions);
    plan.m = freeSize(lhs, numbers->lhsContractingDimensions);
    plan.n = freeSize(rhs, numbers->rhsContractingDimensions);
    // Stored lhs [b, m, k] and rhs [b, k, n] are the plain forms.
    plan.lhsTransposed = lhsContractingFirst;
    plan.rhsTransposed = !rhsContractingFirst && contracting > 0 && plan.n > 1 &&
                         rhs.rank() - batchRank - contracting > 0;
    return plan;
}

namespace {

template <typename T>
using GemmRowsKernel = void (*)(int64_t m, int64_t n, int64_t k, bool lt, bool rt, const T* lhs, const T* rhs,
                                T* out, int64_t row, int64_t rows, int64_t col, int64_t cols);

// Rows [begin, end) x columns [col, col + cols) of the flattened [batch * m,
// n] output into `out` (compact: cols values per row); a range may span
// batch elements.
template <typename T>
void gemmRowRange(GemmRowsKernel<T> kernel, const GemmPlan& plan, const T* lhs, const T* rhs, T* out, int64_t begin,
                  int64_t end, int64_t col, int64_t cols) {
    while (begin < end) {
        const int64_t b = begin / plan.m, row = begin % plan.m;
        const int64_t rows = std::min(end - begin, plan.m - row);
        kernel(plan.m, plan.n, plan.k, plan.lhsTransposed, plan.rhsTransposed, lhs + b * plan.m * plan.k,
               rhs + b * plan.k * plan.n, out, row, rows, col, cols);
        out += rows * cols;
        begin += rows;
    }
}

}  // namespace

namespace {

// The widest kernels this CPU runs, chosen once.
struct GemmKernels {
    GemmRowsKernel<float> f32;
    GemmRowsKernel<double> f64;
    const char* name;
};

const GemmKernels& bestKernels() {
    static const GemmKernels kernels = []() -> GemmKernels {
#if defined(__x86_64__)
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("fma"))
            return {&gemm_avx512::gemmRowsF32, &gemm_avx512::gemmRowsF64, "avx512"};
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            return {&gemm_avx2::gemmRowsF32, &gemm_avx2::gemmRowsF64, "avx2+fma"};
#endif
        return {&gemm_baseline::gemmRowsF32, &gemm_baseline::gemmRowsF64, "baseline"};
    }();
    return kernels;
}

}  // namespace

void runGemmTile(const GemmPlan& plan, const void* lhs, const void* rhs, void* out, int64_t begin, int64_t end,
                 int64_t colBegin, int64_t colEnd) {
    assert(!plan.converts());
    const GemmKernels& kernels = bestKernels();
    const int64_t cols = colEnd - colBegin;
    if (plan.type == PrimitiveType::F64)
        gemmRowRange(kernels.f64, plan, static_cast<const double*>(lhs), static_cast<const double*>(rhs),
                     static_cast<double*>(out), begin, end, colBegin, cols);
    else
        gemmRowRange(kernels.f32, plan, static_cast<const float*>(lhs), static_cast<const float*>(rhs),
                     static_cast<float*>(out), begin, end, colBegin, cols);
}

void runGemmRows(const GemmPlan& plan, const void* lhs, const void* rhs, void* out, int64_t begin, int64_t end) {
    runGemmTile(plan, lhs, rhs, out, begin, end, 0, plan.n);
}

int64_t gemmRowGrain(const GemmPlan& plan) {
    // Blocks of at least 32 rows, or ~1 MFLOP, whichever is larger.
    const int64_t rowFlops = std::max<int64_t>(1, 2 * plan.n * plan.k);
    return std::max<int64_t>(32, (1 << 20) / rowFlops);
}

namespace {

// Narrow floats (one or two bytes) to f32 (exact) and back (round to nearest even, the
// format's overflow rule), element by element.
std::vector<float> widened(const void* data, PrimitiveType type, int64_t count) {
    std::vector<float> out(static_cast<size_t>(std::max<int64_t>(count, 0)));
    if (type == PrimitiveType::F32) {
        std::memcpy(out.data(), data, out.size() * sizeof(float));
        return out;
    }
    if (type == PrimitiveType::BF16) {
        const auto* bits = static_cast<const uint16_t*>(data);
        for (size_t i = 0; i < out.size(); ++i) {
            const uint32_t wide = uint32_t{bits[i]} << 16;
            std::memcpy(&out[i], &wide, sizeof wide);
        }
    } else if (primitive_util::bitWidth(type) == 16) {
        const auto* bits = static_cast<const uint16_t*>(data);
        for (size_t i = 0; i < out.size(); ++i) out[i] = float_util::bitsToFloat(type, bits[i]);
    } else {
        const auto* bits = static_cast<const uint8_t*>(data);
        for (size_t i = 0; i < out.size(); ++i) out[i] = float_util::bitsToFloat(type, bits[i]);
    }
    return out;
}

void narrowInto(const std::vector<float>& values, PrimitiveType type, void* out) {
    if (primitive_util::bitWidth(type) == 16) {
        auto* bits = static_cast<uint16_t*>(out);
        for (size_t i = 0; i < values.size(); ++i)
            bits[i] = static_cast<uint16_t>(float_util::floatToBits(type, values[i]));
        return;
    }
    auto* bits = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < values.size(); ++i)
        bits[i] = static_cast<uint8_t>(float_util::floatToBits(type, values[i]));
}

}  // namespace

void runGemm(const GemmPlan& plan, const void* lhs, const void* rhs, void* out, ThreadPool* pool) {
    const int64_t rowsTotal = plan.batch * plan.m;
    if (rowsTotal == 0 || plan.n == 0) return;
    if (plan.converts()) {
        GemmPlan f32 = plan;
        f32.type = f32.lhsType = f32.rhsType = PrimitiveType::F32;
        const std::vector<float> a = widened(lhs, plan.lhsType, plan.batch * plan.m * plan.k);
        const std::vector<float> b = widened(rhs, plan.rhsType, plan.batch * plan.k * plan.n);
        if (plan.type == PrimitiveType::F32) return runGemm(f32, a.data(), b.data(), out, pool);
        std::vector<float> c(static_cast<size_t>(rowsTotal * plan.n));
        runGemm(f32, a.data(), b.data(), c.data(), pool);
        narrowInto(c, plan.type, out);
        return;
    }
    const size_t size = plan.type == PrimitiveType::F64 ? sizeof(double) : sizeof(float);
    auto body = [&](int64_t begin, int64_t end) {
        runGemmRows(plan, lhs, rhs, static_cast<char*>(out) + static_cast<size_t>(begin * plan.n) * size, begin, end);
    };
    const int64_t grain = gemmRowGrain(plan);
    if (!pool || pool->threadCount() == 1 || rowsTotal <= grain) body(0, rowsTotal);
    else pool->parallelFor(rowsTotal, grain, body);
}

std::string gemmKernelName() { return bestKernels().name; }

}  // namespace hloscope
