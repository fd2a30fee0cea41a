// Shared helpers of the linear-algebra and reduction evaluator families
// (linalg.cc, conv.cc, solve_fft.cc,
// gemm.cc, reduce.cc, gather.cc,
// sort.cc). Internal: not part of the public API.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/interpreter/interpreter_internal.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/literal.h"

namespace hloscope::evaluator {

// --- Index arithmetic ---------------------------------------------------------

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> rowMajorStrides(std::span<const int64_t> dims);
int64_t elementProduct(std::span<const int64_t> dims);
// Advances a row-major multi-index over `dims`; returns false (index reset to
// zeros) after the last one.
bool nextIndex(std::span<int64_t> index, std::span<const int64_t> dims);
// Bytes one stored element of `type` occupies in a Literal buffer.
inline int64_t elementBytes(PrimitiveType type) { return primitive_util::byteWidth(type); }
bool containsDim(std::span<const int64_t> dims, int64_t d);

// --- Operand / attribute checks -----------------------------------------------

// Error unless every operand is a (non-tuple) array literal; `count` < 0
// accepts any number.
Status expectArrayOperands(const HloInstruction& instruction, Operands operands, int64_t count);
// A boolean verbatim attribute ("true"/"false"); `fallback` when absent.
StatusOr<bool> boolAttribute(const HloInstruction& instruction, std::string_view name,
                             bool fallback);
// Reads element `index` of an integer literal as a signed index; unsigned
// values beyond INT64_MAX saturate.
int64_t readIndex(const Literal& literal, int64_t index);

// --- Accumulation types -----------------------------------------------------------

// The type dot/convolution accumulate in for output type `output` with
// operand types `lhs`, `rhs`: F32 for narrow floats (F64 if an operand is
// F64), the output type for f32/f64/complex (widened to F64/C128 when an
// operand is wider), S64/U64 for integers and pred (wrapped to the output
// width at the end). PRIMITIVE_TYPE_INVALID when unsupported.
PrimitiveType accumulationType(PrimitiveType output, PrimitiveType lhs, PrimitiveType rhs);
// `literal` converted to `type` (no copy when it already has it).
StatusOr<Literal> convertedTo(const HloInstruction& instruction, const Literal& literal,
                              PrimitiveType type);
// Copies `literal` into a new literal of the same type whose dimensions are
// the source dimensions permuted: result dim i = source dim perm[i].
Literal permuted(const Literal& literal, std::span<const int64_t> perm);

// --- Scalar computations ------------------------------------------------------------

// Calls a computation of scalar parameters repeatedly (reducers, comparators,
// scatter combiners) with reusable argument literals.
class ScalarCaller {
public:
    ScalarCaller(EvalContext& context, const HloInstruction& instruction,
                 const HloComputation& computation, std::vector<PrimitiveType> argumentTypes,
                 std::vector<PrimitiveType> resultTypes);

    // Storage of argument i (one element of its type).
    void* argument(size_t i) { return m_arguments[i].untypedData(); }
    void setArgument(size_t i, const void* element) {
        std::memcpy(argument(i), element, static_cast<size_t>(m_argumentBytes[i]));
    }
    // Calls the computation; result(i) is valid until the next call.
    Status call();
    const void* result(size_t i) const { return m_resultData[i]; }
    size_t resultCount() const { return m_resultTypes.size(); }

private:
    EvalContext& m_context;
    const HloInstruction& m_instruction;
    const HloComputation& m_computation;
    std::vector<Literal> m_arguments;
    std::vector<const Literal*> m_argumentPointers;
    std::vector<int64_t> m_argumentBytes;
    std::vector<PrimitiveType> m_resultTypes;
    Literal m_result;
    std::vector<const void*> m_resultData;
};

// A computation that is a single binary operation of its two scalar
// parameters: `ROOT r = op(p0, p1)` (swapped: `op(p1, p0)`).
enum class BinaryKind { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };
struct BinaryComputation {
    BinaryKind kind;
    bool swapped;  // root is op(param1, param0)
};
// Recognises such a computation whose parameters and result all have
// element type `type` and for which a native fast path exists.
std::optional<BinaryComputation> recognizeBinaryComputation(const HloComputation& computation,
                                                            PrimitiveType type);

// A computation that is a single comparison of two of its scalar parameters:
// `ROOT c = compare(p_lhs, p_rhs), direction=D` (swapped: operands reversed).
struct CompareComputation {
    ComparisonDirection direction;
    bool swapped;
    bool totalOrder;  // floats compare in total order (type=TOTALORDER)
};
// Recognises such a computation of `parameterCount` parameters comparing
// parameters `lhs` and `rhs`, both of element type `type` (not complex).
std::optional<CompareComputation> recognizeCompareComputation(const HloComputation& computation,
                                                              int64_t parameterCount, int64_t lhs,
                                                              int64_t rhs, PrimitiveType type);
// Whether `compare`'s comparison type (type=) applies to elements of `type` (FLOAT and
// TOTALORDER to floats, SIGNED and UNSIGNED to integers of that signedness); `totalOrder`
// says whether floats compare in total order.
bool comparisonTypeFits(const HloInstruction& compare, PrimitiveType type, bool* totalOrder);

// Comparison keys: elements of one literal turned into values whose native
// comparison matches XLA's compare (doubles for FLOAT comparisons, total
// order keys for TOTALORDER, 64-bit integers otherwise; unsigned values are
// offset so that signed comparison orders them).
struct CompareKeys {
    bool useDouble = false;
    std::vector<double> doubles;
    std::vector<int64_t> ints;
};
CompareKeys compareKeys(const Literal& literal, bool totalOrder);
template <typename K>
inline bool compareWith(ComparisonDirection direction, K a, K b) {
    switch (direction) {
        case ComparisonDirection::kEq:
            return a == b;
        case ComparisonDirection::kNe:
            return a != b;
        case ComparisonDirection::kGe:
            return a >= b;
        case ComparisonDirection::kGt:
            return a > b;
        case ComparisonDirection::kLe:
            return a <= b;
        case ComparisonDirection::kLt:
            return a < b;
    }
    return false;
}

// Narrow float storage types (NarrowFloat<T>) and their PrimitiveType.
template <typename T>
struct NarrowFloatTraits {
    static constexpr bool kIsNarrow = false;
};
template <PrimitiveType P>
struct NarrowFloatTraits<NarrowFloat<P>> {
    static constexpr bool kIsNarrow = true;
    static constexpr PrimitiveType kType = P;
};
template <typename T>
inline constexpr bool kIsNarrowFloat = NarrowFloatTraits<T>::kIsNarrow;

// XLA's maximum/minimum: NaN-propagating (the first NaN operand wins), else
// std::max/std::min (which return the first operand on ties).
template <typename T>
inline T xlaMax(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (a != a) return a;
        if (b != b) return b;
    }
    return (a < b) ? b : a;
}
template <typename T>
inline T xlaMin(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (a != a) return a;
        if (b != b) return b;
    }
    return (b < a) ? b : a;
}

// Applies `kind` to (a, b) in native type T (integers wrap; callers only
// pass kinds valid for T).
template <typename T>
inline T applyBinary(BinaryKind kind, T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
        switch (kind) {
            case BinaryKind::kAnd:
            case BinaryKind::kMinimum:
            case BinaryKind::kMultiply:
                return a && b;
            case BinaryKind::kOr:
            case BinaryKind::kAdd:  // XLA evaluates pred add as bool(a + b)
            case BinaryKind::kMaximum:
                return a || b;
            case BinaryKind::kXor:
                return a != b;
        }
        return a;
    } else if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
        switch (kind) {
            case BinaryKind::kAdd:
                return static_cast<T>(static_cast<U>(W(U(a)) + W(U(b))));
            case BinaryKind::kMultiply:
                return static_cast<T>(static_cast<U>(W(U(a)) * W(U(b))));
            case BinaryKind::kMaximum:
                return xlaMax(a, b);
            case BinaryKind::kMinimum:
                return xlaMin(a, b);
            case BinaryKind::kAnd:
                return static_cast<T>(a & b);
            case BinaryKind::kOr:
                return static_cast<T>(a | b);
            case BinaryKind::kXor:
                return static_cast<T>(a ^ b);
        }
        return a;
    } else if constexpr (std::is_floating_point_v<T>) {
        switch (kind) {
            case BinaryKind::kAdd:
                return a + b;
            case BinaryKind::kMultiply:
                return a * b;
            case BinaryKind::kMaximum:
                return xlaMax(a, b);
            case BinaryKind::kMinimum:
                return xlaMin(a, b);
            default:
                return a;
        }
    } else {  // complex
        switch (kind) {
            case BinaryKind::kAdd:
                return a + b;
            case BinaryKind::kMultiply:
                return a * b;
            default:
                return a;
        }
    }
}

// Floating-point total order key (-NaN < -inf < ... < -0 < +0 < ... < inf <
// NaN), as XLA's TOTALORDER comparisons use.
inline int64_t totalOrderKey(double value) {
    int64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits < 0 ? (bits ^ INT64_MAX) : bits;
}
inline int32_t totalOrderKey(float value) {
    int32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits < 0 ? (bits ^ INT32_MAX) : bits;
}

// --- GEMM kernel (gemm.cc) -------------------------------------------

// Element strides of a batch of matrices: element (b, i, j) is at
// b * batch + i * row + j * col.
struct MatrixStrides {
    int64_t batch = 0;
    int64_t row = 0;
    int64_t col = 0;
};

// c[b][i][j] (= c + accumulate ? c : 0) += sum_k a[b, i, k] * b[b, k, j] for a
// batch of m x k by k x n products; c is contiguous [batch][m][n]. Each
// element accumulates its products in increasing k order, one rounding per
// step (bitwise equal to the naive loop), through a cache-blocked, packed
// and register-blocked kernel.
void gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a, MatrixStrides aStrides,
          const float* b, MatrixStrides bStrides, float* c, bool accumulate);
void gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const double* a, MatrixStrides aStrides,
          const double* b, MatrixStrides bStrides, double* c, bool accumulate);

// --- Family members ---------------------------------------------------------------

StatusOr<Literal> evaluateDot(const HloInstruction& instruction, Operands operands);
StatusOr<Literal> evaluateRaggedDot(const HloInstruction& instruction, Operands operands);
StatusOr<Literal> evaluateScaledDot(const HloInstruction& instruction, Operands operands);
StatusOr<Literal> evaluateConvolution(const HloInstruction& instruction, Operands operands);
StatusOr<Literal> evaluateTriangularSolve(const HloInstruction& instruction, Operands operands);
StatusOr<Literal> evaluateCholesky(const HloInstruction& instruction, Operands operands);
StatusOr<Literal> evaluateFft(const HloInstruction& instruction, Operands operands);

StatusOr<Literal> evaluateReduce(const HloInstruction& instruction, Operands operands,
                                 EvalContext& context);
StatusOr<Literal> evaluateReduceWindow(const HloInstruction& instruction, Operands operands,
                                       EvalContext& context);
StatusOr<Literal> evaluateSelectAndScatter(const HloInstruction& instruction, Operands operands,
                                           EvalContext& context);
StatusOr<Literal> evaluateGather(const HloInstruction& instruction, Operands operands);
StatusOr<Literal> evaluateScatter(const HloInstruction& instruction, Operands operands,
                                  EvalContext& context);
StatusOr<Literal> evaluateSort(const HloInstruction& instruction, Operands operands,
                               EvalContext& context);
StatusOr<Literal> evaluateTopK(const HloInstruction& instruction, Operands operands);
// batch-norm-training, -inference and -grad (batch_norm.cc), in double.
StatusOr<Literal> evaluateBatchNorm(const HloInstruction& instruction, Operands operands);
// scan (core/ir/scan.h): the body called once per step, in the scan's direction.
StatusOr<Literal> evaluateScan(const HloInstruction& instruction, Operands operands,
                               EvalContext& context);

}  // namespace hloscope::evaluator
