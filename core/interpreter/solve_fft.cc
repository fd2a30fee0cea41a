// triangular-solve, cholesky and fft. All three compute in double (or
// complex<double>) and round once into the result type.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include "core/interpreter/ops_internal.h"
#include "core/ir/fft_geometry.h"

namespace hloscope::evaluator {

namespace {

using Complex = std::complex<double>;

template <typename S>
S conjugate(S v) {
    if constexpr (std::is_same_v<S, Complex>)
        return std::conj(v);
    else
        return v;
}

template <typename S>
S readElement(const Literal& literal, int64_t index) {
    if constexpr (std::is_same_v<S, Complex>)
        return literal.getAsComplex(index);
    else
        return literal.getAsDouble(index);
}

template <typename S>
void writeElement(Literal& literal, int64_t index, S value) {
    if constexpr (std::is_same_v<S, Complex>)
        literal.setFromComplex(index, value);
    else
        literal.setFromDouble(index, value);
}

// Checks a batch of square matrices [..., n, n]; returns n.
StatusOr<int64_t> squareSize(const HloInstruction& instruction, const Shape& shape,
                             const char* what) {
    if (shape.rank() < 2 ||
        shape.dimensions(shape.rank() - 1) != shape.dimensions(shape.rank() - 2))
        return invalid(instruction, std::string(what) +
                                        " must be a batch of square matrices, got " +
                                        shape.toString(false));
    return shape.dimensions(shape.rank() - 1);
}

enum class Transpose { kNo, kTranspose, kAdjoint };

template <typename S>
void solveBatch(const Literal& a, const Literal& b, Literal& x, int64_t batch, int64_t m,
                int64_t rows, int64_t cols, bool leftSide, bool lower, bool unitDiagonal,
                Transpose transpose) {
    std::vector<S> am(static_cast<size_t>(m * m));
    std::vector<S> xm(static_cast<size_t>(rows * cols));
    // M = op(A) restricted to the triangle that is read.
    auto tri = [&](int64_t i, int64_t j) -> S {
        if (i == j) return unitDiagonal ? S(1) : am[static_cast<size_t>(i * m + i)];
        const bool inTriangle = lower ? i > j : i < j;
        return inTriangle ? am[static_cast<size_t>(i * m + j)] : S(0);
    };
    auto op = [&](int64_t i, int64_t j) -> S {
        switch (transpose) {
            case Transpose::kNo:
                return tri(i, j);
            case Transpose::kTranspose:
                return tri(j, i);
            case Transpose::kAdjoint:
                return conjugate(tri(j, i));
        }
        return S(0);
    };
    const bool opLower = lower == (transpose == Transpose::kNo);
    for (int64_t bi = 0; bi < batch; ++bi) {
        for (int64_t i = 0; i < m * m; ++i)
            am[static_cast<size_t>(i)] = readElement<S>(a, bi * m * m + i);
        for (int64_t i = 0; i < rows * cols; ++i)
            xm[static_cast<size_t>(i)] = readElement<S>(b, bi * rows * cols + i);
        auto X = [&](int64_t r, int64_t c) -> S& { return xm[static_cast<size_t>(r * cols + c)]; };
        if (leftSide) {  // op(A) X = B, X is m x cols
            for (int64_t step = 0; step < m; ++step) {
                const int64_t i = opLower ? step : m - 1 - step;
                for (int64_t c = 0; c < cols; ++c) {
                    S s = X(i, c);
                    if (opLower)
                        for (int64_t j = 0; j < i; ++j) s -= op(i, j) * X(j, c);
                    else
                        for (int64_t j = i + 1; j < m; ++j) s -= op(i, j) * X(j, c);
                    X(i, c) = s / op(i, i);
                }
            }
        } else {  // X op(A) = B, X is rows x m
            for (int64_t r = 0; r < rows; ++r) {
                for (int64_t step = 0; step < m; ++step) {
                    const int64_t j = opLower ? m - 1 - step : step;
                    S s = X(r, j);
                    if (opLower)
                        for (int64_t i = j + 1; i < m; ++i) s -= X(r, i) * op(i, j);
                    else
                        for (int64_t i = 0; i < j; ++i) s -= X(r, i) * op(i, j);
                    X(r, j) = s / op(j, j);
                }
            }
        }
        for (int64_t i = 0; i < rows * cols; ++i)
            writeElement(x, bi * rows * cols + i, xm[static_cast<size_t>(i)]);
    }
}

template <typename S>
void choleskyBatch(const Literal& a, Literal& out, int64_t batch, int64_t n, bool lower) {
    std::vector<S> am(static_cast<size_t>(n * n));
    std::vector<S> l(static_cast<size_t>(n * n));
    for (int64_t bi = 0; bi < batch; ++bi) {
        for (int64_t i = 0; i < n * n; ++i)
            am[static_cast<size_t>(i)] = readElement<S>(a, bi * n * n + i);
        // The lower triangle of the (Hermitian) input, read from the
        // triangle `lower` selects.
        auto in = [&](int64_t i, int64_t j) -> S {
            return lower ? am[static_cast<size_t>(i * n + j)]
                         : conjugate(am[static_cast<size_t>(j * n + i)]);
        };
        std::fill(l.begin(), l.end(), S(0));
        auto L = [&](int64_t i, int64_t j) -> S& { return l[static_cast<size_t>(i * n + j)]; };
        for (int64_t j = 0; j < n; ++j) {
            double d = std::real(in(j, j));
            for (int64_t k = 0; k < j; ++k) d -= std::norm(L(j, k));
            const double diag = std::sqrt(d);  // NaN when not positive definite
            L(j, j) = S(diag);
            for (int64_t i = j + 1; i < n; ++i) {
                S s = in(i, j);
                for (int64_t k = 0; k < j; ++k) s -= L(i, k) * conjugate(L(j, k));
                L(i, j) = s / S(diag);
            }
        }
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
                const S v =
                    lower ? (j <= i ? L(i, j) : S(0)) : (j >= i ? conjugate(L(j, i)) : S(0));
                writeElement(out, bi * n * n + i * n + j, v);
            }
    }
}

}  // namespace

StatusOr<Literal> evaluateTriangularSolve(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 2));
    const Literal& a = *operands[0];
    const Literal& b = *operands[1];
    HLO_ASSIGN_OR_RETURN(bool leftSide, boolAttribute(instruction, "left_side", false));
    HLO_ASSIGN_OR_RETURN(bool lower, boolAttribute(instruction, "lower", false));
    HLO_ASSIGN_OR_RETURN(bool unitDiagonal, boolAttribute(instruction, "unit_diagonal", false));
    Transpose transpose = Transpose::kNo;
    if (std::optional<std::string_view> t = instruction.attribute("transpose_a")) {
        if (*t == "TRANSPOSE")
            transpose = Transpose::kTranspose;
        else if (*t == "ADJOINT")
            transpose = Transpose::kAdjoint;
        else if (*t != "NO_TRANSPOSE")
            return invalid(instruction, "unknown transpose_a=" + std::string(*t));
    }
    HLO_ASSIGN_OR_RETURN(int64_t m, squareSize(instruction, a.shape(), "triangular-solve a"));
    const Shape& bShape = b.shape();
    const int64_t rank = bShape.rank();
    if (rank != a.shape().rank()) return invalid(instruction, "a and b ranks differ");
    for (int64_t i = 0; i + 2 < rank; ++i)
        if (bShape.dimensions(i) != a.shape().dimensions(i))
            return invalid(instruction, "a and b batch dimensions differ");
    const int64_t rows = bShape.dimensions(rank - 2);
    const int64_t cols = bShape.dimensions(rank - 1);
    if ((leftSide ? rows : cols) != m)
        return invalid(instruction,
                       "b's " + std::string(leftSide ? "rows" : "columns") + " do not match a");
    const Shape& outShape = instruction.shape();
    if (!outShape.isArray() || outShape.dimensions() != bShape.dimensions())
        return invalid(instruction, "result shape differs from b");
    const PrimitiveType type = outShape.elementType();
    if (!primitive_util::isFloatingPoint(type) && !primitive_util::isComplex(type))
        return unsupported(instruction,
                           "triangular-solve of " + std::string(primitive_util::name(type)));
    Literal x(outShape);
    const int64_t batch =
        elementProduct(std::span(bShape.dimensions()).first(static_cast<size_t>(rank - 2)));
    if (primitive_util::isComplex(type))
        solveBatch<Complex>(a, b, x, batch, m, rows, cols, leftSide, lower, unitDiagonal,
                            transpose);
    else
        solveBatch<double>(a, b, x, batch, m, rows, cols, leftSide, lower, unitDiagonal, transpose);
    return x;
}

StatusOr<Literal> evaluateCholesky(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 1));
    const Literal& a = *operands[0];
    HLO_ASSIGN_OR_RETURN(bool lower, boolAttribute(instruction, "lower", false));
    HLO_ASSIGN_OR_RETURN(int64_t n, squareSize(instruction, a.shape(), "cholesky operand"));
    const Shape& outShape = instruction.shape();
    if (!outShape.isArray() || outShape.dimensions() != a.shape().dimensions())
        return invalid(instruction, "result shape differs from the operand");
    const PrimitiveType type = outShape.elementType();
    if (!primitive_util::isFloatingPoint(type) && !primitive_util::isComplex(type))
        return unsupported(instruction, "cholesky of " + std::string(primitive_util::name(type)));
    Literal out(outShape);
    const int64_t batch = n == 0 ? 0 : a.elementCount() / (n * n);
    if (primitive_util::isComplex(type))
        choleskyBatch<Complex>(a, out, batch, n, lower);
    else
        choleskyBatch<double>(a, out, batch, n, lower);
    return out;
}

// --- fft -----------------------------------------------------------------------------

namespace {

using FftComplex = std::complex<long double>;

// exp(sign * 2 pi i t / n) for t in [0, n).
std::vector<FftComplex> twiddles(size_t n, bool inverse) {
    const long double sign = inverse ? 1.0L : -1.0L;
    std::vector<FftComplex> table(n);
    for (size_t t = 0; t < n; ++t) {
        const long double angle = sign * 2.0L * std::numbers::pi_v<long double> *
                                  static_cast<long double>(t) / static_cast<long double>(n);
        table[t] = FftComplex(std::cos(angle), std::sin(angle));
    }
    return table;
}

// In-place unnormalised DFT of x: radix-2 for powers of two, the direct sum
// with exact twiddle indices otherwise.
void dft(std::vector<FftComplex>& x, const std::vector<FftComplex>& twiddle,
         std::vector<FftComplex>& scratch) {
    const size_t n = x.size();
    if (n <= 1) return;
    if ((n & (n - 1)) == 0) {
        for (size_t i = 1, j = 0; i < n; ++i) {
            size_t bit = n >> 1;
            for (; j & bit; bit >>= 1) j ^= bit;
            j ^= bit;
            if (i < j) std::swap(x[i], x[j]);
        }
        for (size_t len = 2; len <= n; len <<= 1) {
            const size_t step = n / len;
            for (size_t start = 0; start < n; start += len)
                for (size_t k = 0; k < len / 2; ++k) {
                    const FftComplex u = x[start + k];
                    const FftComplex v = x[start + k + len / 2] * twiddle[k * step];
                    x[start + k] = u + v;
                    x[start + k + len / 2] = u - v;
                }
        }
        return;
    }
    scratch.assign(n, FftComplex(0));
    for (size_t k = 0; k < n; ++k) {
        FftComplex sum(0);
        for (size_t t = 0; t < n; ++t) sum += x[t] * twiddle[(k * t) % n];
        scratch[k] = sum;
    }
    x.swap(scratch);
}

// Transforms every line of `data` (row-major `dims`) along `axis`.
void transformAxis(std::vector<FftComplex>& data, std::span<const int64_t> dims, size_t axis,
                   bool inverse) {
    const int64_t n = dims[axis];
    if (n <= 1) {
        return;
    }
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= dims[i];
    for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
    std::vector<FftComplex> line(static_cast<size_t>(n)), scratch;
    const std::vector<FftComplex> twiddle = twiddles(static_cast<size_t>(n), inverse);
    const long double scale = inverse ? 1.0L / static_cast<long double>(n) : 1.0L;
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            FftComplex* base = data.data() + o * n * inner + i;
            for (int64_t t = 0; t < n; ++t) line[static_cast<size_t>(t)] = base[t * inner];
            dft(line, twiddle, scratch);
            for (int64_t t = 0; t < n; ++t) base[t * inner] = line[static_cast<size_t>(t)] * scale;
        }
}

// Copies the overlapping region of two row-major arrays [batch, a...] and
// [batch, b...] (missing elements stay as they are in dst).
template <typename Get, typename Set>
void copyOverlap(std::span<const int64_t> srcDims, std::span<const int64_t> dstDims, Get get,
                 Set set) {
    std::vector<int64_t> common(srcDims.size());
    for (size_t i = 0; i < srcDims.size(); ++i) common[i] = std::min(srcDims[i], dstDims[i]);
    if (elementProduct(common) == 0) return;
    const std::vector<int64_t> srcStrides = rowMajorStrides(srcDims);
    const std::vector<int64_t> dstStrides = rowMajorStrides(dstDims);
    std::vector<int64_t> index(common.size(), 0);
    do {
        int64_t s = 0, d = 0;
        for (size_t i = 0; i < common.size(); ++i) {
            s += index[i] * srcStrides[i];
            d += index[i] * dstStrides[i];
        }
        set(d, get(s));
    } while (nextIndex(index, common));
}

}  // namespace

StatusOr<Literal> evaluateFft(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 1));
    const Literal& input = *operands[0];
    auto geometry = fftGeometry(instruction, input.shape());
    if (!geometry.isOk()) return invalid(instruction, geometry.status().message());
    const std::vector<int64_t>& lengths = geometry->lengths;
    const size_t l = lengths.size();
    const Shape& outShape = instruction.shape();
    const bool forward = !geometry->inverse;
    const bool realInput = geometry->realInput;
    const bool realOutput = geometry->realOutput;
    const bool inComplex = primitive_util::isComplex(input.shape().elementType());
    const std::vector<int64_t>& inDims = geometry->inDims;
    const std::vector<int64_t>& outDims = geometry->outDims;

    // Work array [batch, lengths...]; IRFFT keeps only the half spectrum of
    // the last axis until its final step.
    std::vector<int64_t> workDims = geometry->workDims;
    const int64_t lastLength = lengths.back();
    // The work array is complex<double>; refuse absurd transform sizes
    // instead of exhausting memory.
    constexpr int64_t kMaxWorkElements = int64_t{1} << 28;
    {
        std::vector<int64_t> fullDims = workDims;
        fullDims.back() = std::max(fullDims.back(), lastLength);
        const int64_t outElements = elementProduct(outDims);
        if (elementProduct(fullDims) > kMaxWorkElements || outElements > kMaxWorkElements)
            return Status(StatusCode::kResourceExhausted,
                          "%" + instruction.name() + ": fft too large to evaluate");
    }
    std::vector<FftComplex> work(static_cast<size_t>(elementProduct(workDims)), FftComplex(0));
    copyOverlap(
        inDims, workDims,
        [&](int64_t i) {
            return inComplex ? FftComplex(input.getAsComplex(i)) : FftComplex(input.getAsDouble(i));
        },
        [&](int64_t i, FftComplex v) { work[static_cast<size_t>(i)] = v; });

    if (!realOutput) {
        for (size_t axis = 1; axis <= l; ++axis) transformAxis(work, workDims, axis, !forward);
    } else {
        for (size_t axis = 1; axis < l; ++axis) transformAxis(work, workDims, axis, true);
        // Last axis: Hermitian extension, inverse transform, real part.
        const int64_t half = workDims.back();
        std::vector<int64_t> fullDims = workDims;
        fullDims.back() = lastLength;
        std::vector<FftComplex> full(static_cast<size_t>(elementProduct(fullDims)));
        const int64_t lines = half == 0 ? 0 : static_cast<int64_t>(work.size()) / half;
        for (int64_t line = 0; line < lines; ++line) {
            const FftComplex* h = work.data() + line * half;
            FftComplex* x = full.data() + line * lastLength;
            for (int64_t k = 0; k < lastLength; ++k)
                x[k] = k < half ? h[k] : std::conj(h[lastLength - k]);
        }
        work.swap(full);
        workDims = fullDims;
        transformAxis(work, workDims, l, true);
    }

    Literal result(outShape);
    std::vector<int64_t> resultDims = outDims;
    if (realInput) {
        // Keep the non-redundant half of the last axis.
        std::vector<int64_t> keep = workDims;
        keep.back() = std::min(workDims.back(), lastLength / 2 + 1);
        std::vector<FftComplex> half(static_cast<size_t>(elementProduct(keep)));
        copyOverlap(
            workDims, keep, [&](int64_t i) { return work[static_cast<size_t>(i)]; },
            [&](int64_t i, FftComplex v) { half[static_cast<size_t>(i)] = v; });
        work.swap(half);
        workDims = keep;
    }
    copyOverlap(
        workDims, resultDims, [&](int64_t i) { return work[static_cast<size_t>(i)]; },
        [&](int64_t i, FftComplex v) {
            if (realOutput)
                result.setFromDouble(i, static_cast<double>(v.real()));
            else
                result.setFromComplex(i, std::complex<double>(v));
        });
    return result;
}

}  // namespace hloscope::evaluator
