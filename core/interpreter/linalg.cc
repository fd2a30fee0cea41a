// Evaluator family: dot, ragged-dot, scaled-dot (this file), convolution
// (conv.cc), triangular-solve, cholesky, fft
// (solve_fft.cc).
//
// Dot semantics (XLA): result dimensions are the batch dimensions (in
// lhs_batch_dims order), then the lhs free dimensions, then the rhs free
// dimensions (each in increasing order). Operands are converted to an
// accumulation type first (F32 for narrow floats, like XLA's CPU backend;
// the output type otherwise; 64-bit for integers, wrapped at the end) and
// every element sums its products in contracting order.
#include <algorithm>
#include <complex>
#include <numeric>
#include <string>
#include <utility>

#include "core/interpreter/ops_internal.h"
#include "core/ir/scaled_dot.h"

namespace hloscope::evaluator {

StatusOr<Literal> evaluateLinalg(const HloInstruction& instruction, Operands operands,
                                 EvalContext& context) {
    (void)context;
    switch (instruction.opcode()) {
        case HloOpcode::kDot:
            return evaluateDot(instruction, operands);
        case HloOpcode::kRaggedDot:
            return evaluateRaggedDot(instruction, operands);
        case HloOpcode::kScaledDot:
            return evaluateScaledDot(instruction, operands);
        case HloOpcode::kConvolution:
            return evaluateConvolution(instruction, operands);
        case HloOpcode::kTriangularSolve:
            return evaluateTriangularSolve(instruction, operands);
        case HloOpcode::kCholesky:
            return evaluateCholesky(instruction, operands);
        case HloOpcode::kFft:
            return evaluateFft(instruction, operands);
        default:
            break;
    }
    return unsupported(instruction, std::string(hloOpcodeString(instruction.opcode())) +
                                        " is not a linear-algebra operation");
}

namespace {

std::string dimsText(std::span<const int64_t> dims) {
    std::string text = "{";
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) text += ",";
        text += std::to_string(dims[i]);
    }
    return text + "}";
}

Shape withElementType(const Shape& shape, PrimitiveType type) {
    Shape result = shape;
    result.setElementType(type);
    return result;
}

// Operand dimensions split into batch / free / contracting groups.
struct DotPlan {
    std::vector<int64_t> lhsBatch, lhsFree, lhsContracting;
    std::vector<int64_t> rhsBatch, rhsFree, rhsContracting;
    int64_t batch = 1, m = 1, n = 1, k = 1;
    std::vector<int64_t> resultDims;  // batch, lhs free, rhs free
};

Status checkDims(const HloInstruction& instruction, std::span<const int64_t> dims, int64_t rank,
                 std::vector<bool>& used, const char* what) {
    for (int64_t d : dims) {
        if (d < 0 || d >= rank)
            return invalid(instruction, std::string(what) + " " + dimsText(dims) +
                                            " out of range for rank " + std::to_string(rank));
        if (used[static_cast<size_t>(d)])
            return invalid(instruction,
                           std::string(what) + " repeats dimension " + std::to_string(d));
        used[static_cast<size_t>(d)] = true;
    }
    return Status::ok();
}

// `rhsExcluded`: rhs dimensions that are neither batch, contracting nor free
// (ragged-dot's group dimension).
StatusOr<DotPlan> planDot(const HloInstruction& instruction, const Shape& lhs, const Shape& rhs,
                          const DotDimensionNumbers& dn,
                          std::span<const int64_t> rhsExcluded = {}) {
    DotPlan plan;
    if (dn.lhsBatchDimensions.size() != dn.rhsBatchDimensions.size() ||
        dn.lhsContractingDimensions.size() != dn.rhsContractingDimensions.size())
        return invalid(instruction, "lhs and rhs batch/contracting dimension counts differ");
    std::vector<bool> lhsUsed(static_cast<size_t>(lhs.rank()), false);
    std::vector<bool> rhsUsed(static_cast<size_t>(rhs.rank()), false);
    HLO_RETURN_IF_ERROR(
        checkDims(instruction, dn.lhsBatchDimensions, lhs.rank(), lhsUsed, "lhs_batch_dims"));
    HLO_RETURN_IF_ERROR(checkDims(instruction, dn.lhsContractingDimensions, lhs.rank(), lhsUsed,
                                  "lhs_contracting_dims"));
    HLO_RETURN_IF_ERROR(
        checkDims(instruction, dn.rhsBatchDimensions, rhs.rank(), rhsUsed, "rhs_batch_dims"));
    HLO_RETURN_IF_ERROR(checkDims(instruction, dn.rhsContractingDimensions, rhs.rank(), rhsUsed,
                                  "rhs_contracting_dims"));
    HLO_RETURN_IF_ERROR(checkDims(instruction, rhsExcluded, rhs.rank(), rhsUsed, "rhs_group_dims"));
    plan.lhsBatch = dn.lhsBatchDimensions;
    plan.rhsBatch = dn.rhsBatchDimensions;
    plan.lhsContracting = dn.lhsContractingDimensions;
    plan.rhsContracting = dn.rhsContractingDimensions;
    for (size_t i = 0; i < plan.lhsBatch.size(); ++i) {
        const int64_t size = lhs.dimensions(plan.lhsBatch[i]);
        if (size != rhs.dimensions(plan.rhsBatch[i]))
            return invalid(instruction, "batch dimension sizes differ: lhs " +
                                            std::to_string(size) + " vs rhs " +
                                            std::to_string(rhs.dimensions(plan.rhsBatch[i])));
        plan.batch *= size;
        plan.resultDims.push_back(size);
    }
    for (size_t i = 0; i < plan.lhsContracting.size(); ++i) {
        const int64_t size = lhs.dimensions(plan.lhsContracting[i]);
        if (size != rhs.dimensions(plan.rhsContracting[i]))
            return invalid(instruction, "contracting dimension sizes differ: lhs " +
                                            std::to_string(size) + " vs rhs " +
                                            std::to_string(rhs.dimensions(plan.rhsContracting[i])));
        plan.k *= size;
    }
    for (int64_t d = 0; d < lhs.rank(); ++d) {
        if (lhsUsed[static_cast<size_t>(d)]) continue;
        plan.lhsFree.push_back(d);
        plan.m *= lhs.dimensions(d);
        plan.resultDims.push_back(lhs.dimensions(d));
    }
    for (int64_t d = 0; d < rhs.rank(); ++d) {
        if (rhsUsed[static_cast<size_t>(d)]) continue;
        plan.rhsFree.push_back(d);
        plan.n *= rhs.dimensions(d);
        plan.resultDims.push_back(rhs.dimensions(d));
    }
    return plan;
}

// Stride of `group` (dims in iteration order) collapsed into one dimension,
// or nullopt when the group is not uniformly strided.
std::optional<int64_t> collapsedStride(std::span<const int64_t> group,
                                       std::span<const int64_t> sizes,
                                       std::span<const int64_t> strides) {
    std::optional<int64_t> stride;
    int64_t expected = 0;
    for (size_t i = group.size(); i-- > 0;) {
        const size_t d = static_cast<size_t>(group[i]);
        if (sizes[d] <= 1) continue;
        if (!stride) {
            stride = strides[d];
        } else if (strides[d] != expected) {
            return std::nullopt;
        }
        expected = strides[d] * sizes[d];
    }
    return stride.value_or(0);
}

// A batch of matrices (rows x cols) over an operand literal: strided in
// place when each group collapses, else a transposed copy.
struct MatrixOperand {
    Literal literal;
    MatrixStrides strides;
};

MatrixOperand matrixOperand(const Literal& literal, std::span<const int64_t> batchDims,
                            std::span<const int64_t> rowDims, std::span<const int64_t> colDims) {
    const std::vector<int64_t>& dims = literal.shape().dimensions();
    const std::vector<int64_t> strides = rowMajorStrides(dims);
    std::optional<int64_t> b = collapsedStride(batchDims, dims, strides);
    std::optional<int64_t> r = collapsedStride(rowDims, dims, strides);
    std::optional<int64_t> c = collapsedStride(colDims, dims, strides);
    if (b && r && c) return {literal, {*b, *r, *c}};
    std::vector<int64_t> perm(batchDims.begin(), batchDims.end());
    perm.insert(perm.end(), rowDims.begin(), rowDims.end());
    perm.insert(perm.end(), colDims.begin(), colDims.end());
    int64_t rows = 1, cols = 1;
    for (int64_t d : rowDims) rows *= dims[static_cast<size_t>(d)];
    for (int64_t d : colDims) cols *= dims[static_cast<size_t>(d)];
    return {permuted(literal, perm), {rows * cols, cols, 1}};
}

// Naive batched product for integer (wrapping uint64) and complex types.
template <typename T>
void naiveGemm(int64_t batch, int64_t m, int64_t n, int64_t k, const T* a, MatrixStrides as,
               const T* b, MatrixStrides bs, T* c) {
    for (int64_t bi = 0; bi < batch; ++bi) {
        for (int64_t i = 0; i < m; ++i) {
            T* row = c + (bi * m + i) * n;
            for (int64_t j = 0; j < n; ++j) row[j] = T(0);
            for (int64_t p = 0; p < k; ++p) {
                const T aip = a[bi * as.batch + i * as.row + p * as.col];
                const T* bp = b + bi * bs.batch + p * bs.row;
                for (int64_t j = 0; j < n; ++j) row[j] = row[j] + aip * bp[j * bs.col];
            }
        }
    }
}

// Multiplies lhs (already of type `acc`) by rhs per `plan` into `result`
// (of type `acc`, contiguous [batch][m][n]).
Status runGemm(const HloInstruction& instruction, PrimitiveType acc, const DotPlan& plan,
               const Literal& lhs, const Literal& rhs, Literal& result) {
    MatrixOperand a = matrixOperand(lhs, plan.lhsBatch, plan.lhsFree, plan.lhsContracting);
    MatrixOperand b = matrixOperand(rhs, plan.rhsBatch, plan.rhsContracting, plan.rhsFree);
    switch (acc) {
        case PrimitiveType::F32:
            gemm(plan.batch, plan.m, plan.n, plan.k, std::as_const(a.literal).data<float>().data(),
                 a.strides, std::as_const(b.literal).data<float>().data(), b.strides,
                 result.data<float>().data(), false);
            return Status::ok();
        case PrimitiveType::F64:
            gemm(plan.batch, plan.m, plan.n, plan.k, std::as_const(a.literal).data<double>().data(),
                 a.strides, std::as_const(b.literal).data<double>().data(), b.strides,
                 result.data<double>().data(), false);
            return Status::ok();
        case PrimitiveType::S64:
        case PrimitiveType::U64:
            naiveGemm(plan.batch, plan.m, plan.n, plan.k,
                      static_cast<const uint64_t*>(std::as_const(a.literal).untypedData()),
                      a.strides,
                      static_cast<const uint64_t*>(std::as_const(b.literal).untypedData()),
                      b.strides, static_cast<uint64_t*>(result.untypedData()));
            return Status::ok();
        case PrimitiveType::C64:
            naiveGemm(plan.batch, plan.m, plan.n, plan.k,
                      std::as_const(a.literal).data<std::complex<float>>().data(), a.strides,
                      std::as_const(b.literal).data<std::complex<float>>().data(), b.strides,
                      result.data<std::complex<float>>().data());
            return Status::ok();
        case PrimitiveType::C128:
            naiveGemm(plan.batch, plan.m, plan.n, plan.k,
                      std::as_const(a.literal).data<std::complex<double>>().data(), a.strides,
                      std::as_const(b.literal).data<std::complex<double>>().data(), b.strides,
                      result.data<std::complex<double>>().data());
            return Status::ok();
        default:
            break;
    }
    return unsupported(instruction,
                       "dot accumulating in " + std::string(primitive_util::name(acc)));
}

// The dot of two literals with result shape `resultShape` (its element type
// decides the accumulation type).
StatusOr<Literal> dotLiterals(const HloInstruction& instruction, const Literal& lhs,
                              const Literal& rhs, const DotDimensionNumbers& dn,
                              const Shape& resultShape) {
    HLO_ASSIGN_OR_RETURN(DotPlan plan, planDot(instruction, lhs.shape(), rhs.shape(), dn));
    if (!resultShape.isArray() || resultShape.dimensions() != plan.resultDims)
        return invalid(instruction, "result shape " + resultShape.toString(false) +
                                        " does not match the dot's dimensions " +
                                        dimsText(plan.resultDims));
    const PrimitiveType out = resultShape.elementType();
    const PrimitiveType acc = accumulationType(out, lhs.elementType(), rhs.elementType());
    if (acc == PrimitiveType::PRIMITIVE_TYPE_INVALID)
        return unsupported(instruction,
                           "dot of " + std::string(primitive_util::name(lhs.elementType())) +
                               " and " + std::string(primitive_util::name(rhs.elementType())) +
                               " into " + std::string(primitive_util::name(out)));
    HLO_ASSIGN_OR_RETURN(Literal a, convertedTo(instruction, lhs, acc));
    HLO_ASSIGN_OR_RETURN(Literal b, convertedTo(instruction, rhs, acc));
    Literal result(withElementType(resultShape, acc));
    HLO_RETURN_IF_ERROR(runGemm(instruction, acc, plan, a, b, result));
    return convertedTo(instruction, result, out);
}

const DotDimensionNumbers& dotNumbersOf(const HloInstruction& instruction) {
    static const DotDimensionNumbers kNone;
    const DotDimensionNumbers* dn = instruction.dotDimensionNumbers();
    return dn != nullptr ? *dn : kNone;
}

// --- ragged-dot ---------------------------------------------------------------------

enum class RaggedMode { kNonContracting, kContracting, kBatch };

template <typename T>
void raggedKernel(RaggedMode mode, int64_t groups, int64_t batch, int64_t m, int64_t n, int64_t k,
                  const T* a, const T* b, const std::vector<int64_t>& groupOf, T* c) {
    // a: [batch][m][k]; b: [groups?][batch][k][n]; c: [groups?][batch][m][n].
    switch (mode) {
        case RaggedMode::kNonContracting:
            for (int64_t bi = 0; bi < batch; ++bi)
                for (int64_t i = 0; i < m; ++i) {
                    const int64_t g = groupOf[static_cast<size_t>(bi * m + i)];
                    if (g < 0) continue;
                    T* row = c + (bi * m + i) * n;
                    const T* bg = b + (g * batch + bi) * k * n;
                    for (int64_t p = 0; p < k; ++p) {
                        const T aip = a[(bi * m + i) * k + p];
                        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + aip * bg[p * n + j];
                    }
                }
            break;
        case RaggedMode::kContracting:
            for (int64_t bi = 0; bi < batch; ++bi)
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t p = 0; p < k; ++p) {
                        const int64_t g = groupOf[static_cast<size_t>(bi * k + p)];
                        if (g < 0) continue;
                        T* row = c + ((g * batch + bi) * m + i) * n;
                        const T aip = a[(bi * m + i) * k + p];
                        const T* bp = b + (bi * k + p) * n;
                        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + aip * bp[j];
                    }
            break;
        case RaggedMode::kBatch:
            for (int64_t bi = 0; bi < batch; ++bi) {
                if (groupOf[static_cast<size_t>(bi)] < 0) continue;
                for (int64_t i = 0; i < m; ++i) {
                    T* row = c + (bi * m + i) * n;
                    for (int64_t p = 0; p < k; ++p) {
                        const T aip = a[(bi * m + i) * k + p];
                        const T* bp = b + (bi * k + p) * n;
                        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + aip * bp[j];
                    }
                }
            }
            break;
    }
    (void)groups;
}

// Unravels row-major `linear` over `sizes` into coordinates of `dims` of
// `full` (an lhs multi-index).
void scatterCoordinates(int64_t linear, std::span<const int64_t> dims,
                        std::span<const int64_t> sizes, std::vector<int64_t>& full) {
    for (size_t i = dims.size(); i-- > 0;) {
        const int64_t size = sizes[static_cast<size_t>(dims[i])];
        full[static_cast<size_t>(dims[i])] = size > 0 ? linear % size : 0;
        if (size > 0) linear /= size;
    }
}

}  // namespace

StatusOr<Literal> evaluateDot(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 2));
    return dotLiterals(instruction, *operands[0], *operands[1], dotNumbersOf(instruction),
                       instruction.shape());
}

namespace {

// A ragged-dot's mode, ragged lhs dimension, group count, dot plan and the
// group_sizes prefix dimensions (lhs dimensions outer to the ragged one).
struct RaggedDotGeometry {
    RaggedMode mode = RaggedMode::kNonContracting;
    int64_t ragged = 0;
    int64_t groups = 0;
    DotPlan plan;
    std::vector<int64_t> prefix;
};

// The dimension numbers, group_sizes and result shape checked against each other.
StatusOr<RaggedDotGeometry> raggedDotGeometry(const HloInstruction& instruction,
                                              const Literal& lhs, const Literal& rhs,
                                              const Literal& groupSizes) {
    RaggedDotGeometry g;
    const DotDimensionNumbers& dn = dotNumbersOf(instruction);
    if (dn.lhsRaggedDimensions.size() != 1)
        return invalid(instruction, "ragged-dot needs exactly one lhs_ragged_dims");
    if (!primitive_util::isInteger(groupSizes.elementType()) || groupSizes.shape().rank() < 1)
        return invalid(instruction, "group_sizes must be an integer array");
    const int64_t ragged = g.ragged = dn.lhsRaggedDimensions[0];
    if (ragged < 0 || ragged >= lhs.shape().rank())
        return invalid(instruction, "lhs_ragged_dims out of range");
    RaggedMode& mode = g.mode;
    mode = RaggedMode::kNonContracting;
    if (containsDim(dn.lhsContractingDimensions, ragged))
        mode = RaggedMode::kContracting;
    else if (containsDim(dn.lhsBatchDimensions, ragged))
        mode = RaggedMode::kBatch;
    const size_t expectedGroupDims = mode == RaggedMode::kNonContracting ? 1 : 0;
    if (dn.rhsGroupDimensions.size() != expectedGroupDims)
        return invalid(instruction, mode == RaggedMode::kNonContracting
                                        ? "ragged non-contracting dot needs one rhs_group_dims"
                                        : "this ragged-dot mode takes no rhs_group_dims");
    HLO_ASSIGN_OR_RETURN(g.plan,
                         planDot(instruction, lhs.shape(), rhs.shape(), dn, dn.rhsGroupDimensions));
    const DotPlan& plan = g.plan;
    const std::vector<int64_t>& gsDims = groupSizes.shape().dimensions();
    const int64_t groups = g.groups = gsDims.back();
    if (mode == RaggedMode::kNonContracting &&
        rhs.shape().dimensions(dn.rhsGroupDimensions[0]) != groups)
        return invalid(instruction, "rhs group dimension size differs from the group count");
    std::vector<int64_t> expected = plan.resultDims;
    if (mode == RaggedMode::kContracting) expected.insert(expected.begin(), groups);
    const Shape& resultShape = instruction.shape();
    if (!resultShape.isArray() || resultShape.dimensions() != expected)
        return invalid(instruction, "result shape " + resultShape.toString(false) +
                                        " does not match ragged-dot dimensions " +
                                        dimsText(expected));
    return g;
}

// The group_sizes prefix dimensions, matched against the lhs.
Status raggedDotPrefix(const HloInstruction& instruction, const Literal& lhs,
                       const Literal& groupSizes, RaggedDotGeometry& g) {
    const RaggedMode mode = g.mode;
    const int64_t ragged = g.ragged;
    const DotPlan& plan = g.plan;
    const std::vector<int64_t>& gsDims = groupSizes.shape().dimensions();
    const std::vector<int64_t>& lhsDims = lhs.shape().dimensions();
    std::vector<int64_t>& prefix = g.prefix;
    if (gsDims.size() > 1) {
        if (mode == RaggedMode::kBatch) {
            for (int64_t d : plan.lhsBatch) {
                if (d == ragged) break;
                prefix.push_back(d);
            }
        } else {
            prefix = plan.lhsBatch;
            const std::vector<int64_t>& inner =
                mode == RaggedMode::kNonContracting ? plan.lhsFree : plan.lhsContracting;
            std::vector<int64_t> sorted = inner;
            std::sort(sorted.begin(), sorted.end());
            for (int64_t d : sorted)
                if (d < ragged) prefix.push_back(d);
        }
        if (prefix.size() + 1 != gsDims.size())
            return unsupported(instruction, "group_sizes of rank " + std::to_string(gsDims.size()) +
                                                " for this ragged-dot");
        for (size_t i = 0; i < prefix.size(); ++i)
            if (lhsDims[static_cast<size_t>(prefix[i])] != gsDims[i])
                return invalid(instruction, "group_sizes dimensions do not match lhs");
    }
    return Status::ok();
}

// The group of each (batch, ragged-side) position of the lhs, -1 past the
// last group.
std::vector<int64_t> raggedGroupOf(const RaggedDotGeometry& geometry, const Literal& lhs,
                                   const Literal& groupSizes) {
    const RaggedMode mode = geometry.mode;
    const int64_t ragged = geometry.ragged;
    const int64_t groups = geometry.groups;
    const DotPlan& plan = geometry.plan;
    const std::vector<int64_t>& prefix = geometry.prefix;
    const std::vector<int64_t>& gsDims = groupSizes.shape().dimensions();
    const std::vector<int64_t>& lhsDims = lhs.shape().dimensions();
    // Cumulative group ends per prefix position.
    const int64_t prefixCount = elementProduct(std::span(gsDims).first(gsDims.size() - 1));
    std::vector<int64_t> ends(static_cast<size_t>(prefixCount * groups));
    for (int64_t p = 0; p < prefixCount; ++p) {
        int64_t total = 0;
        for (int64_t g = 0; g < groups; ++g) {
            total += std::max<int64_t>(0, readIndex(groupSizes, p * groups + g));
            ends[static_cast<size_t>(p * groups + g)] = total;
        }
    }
    auto groupOfIndex = [&](const std::vector<int64_t>& full) -> int64_t {
        int64_t p = 0;
        for (size_t i = 0; i < prefix.size(); ++i)
            p = p * gsDims[i] + full[static_cast<size_t>(prefix[i])];
        const int64_t r = full[static_cast<size_t>(ragged)];
        const int64_t* e = ends.data() + p * groups;
        for (int64_t g = 0; g < groups; ++g)
            if (r < e[g]) return g;
        return -1;
    };
    std::vector<int64_t> batchSizes;
    for (int64_t d : plan.lhsBatch) batchSizes.push_back(lhsDims[static_cast<size_t>(d)]);
    std::vector<int64_t> groupOf;
    std::vector<int64_t> full(lhsDims.size(), 0);
    auto setBatch = [&](int64_t bi) {
        for (size_t i = plan.lhsBatch.size(); i-- > 0;) {
            full[static_cast<size_t>(plan.lhsBatch[i])] = bi % batchSizes[i];
            bi /= batchSizes[i];
        }
    };
    const int64_t inner = mode == RaggedMode::kNonContracting ? plan.m
                          : mode == RaggedMode::kContracting  ? plan.k
                                                              : 1;
    const std::vector<int64_t>& innerDims =
        mode == RaggedMode::kNonContracting ? plan.lhsFree : plan.lhsContracting;
    groupOf.resize(static_cast<size_t>(plan.batch * inner));
    for (int64_t bi = 0; bi < plan.batch; ++bi) {
        setBatch(bi);
        for (int64_t x = 0; x < inner; ++x) {
            if (mode != RaggedMode::kBatch) scatterCoordinates(x, innerDims, lhsDims, full);
            groupOf[static_cast<size_t>(bi * inner + x)] = groupOfIndex(full);
        }
    }
    return groupOf;
}

// The product in the accumulation type, converted to the result's.
StatusOr<Literal> raggedDotProduct(const HloInstruction& instruction, const RaggedDotGeometry& g,
                                   const Literal& lhs, const Literal& rhs,
                                   const std::vector<int64_t>& groupOf) {
    const RaggedMode mode = g.mode;
    const int64_t groups = g.groups;
    const DotPlan& plan = g.plan;
    const DotDimensionNumbers& dn = dotNumbersOf(instruction);
    const Shape& resultShape = instruction.shape();
    const PrimitiveType out = resultShape.elementType();
    const PrimitiveType acc = accumulationType(out, lhs.elementType(), rhs.elementType());
    if (acc == PrimitiveType::PRIMITIVE_TYPE_INVALID)
        return unsupported(instruction,
                           "ragged-dot into " + std::string(primitive_util::name(out)));
    HLO_ASSIGN_OR_RETURN(Literal a, convertedTo(instruction, lhs, acc));
    HLO_ASSIGN_OR_RETURN(Literal b, convertedTo(instruction, rhs, acc));
    std::vector<int64_t> lhsPerm = plan.lhsBatch;
    lhsPerm.insert(lhsPerm.end(), plan.lhsFree.begin(), plan.lhsFree.end());
    lhsPerm.insert(lhsPerm.end(), plan.lhsContracting.begin(), plan.lhsContracting.end());
    std::vector<int64_t> rhsPerm = dn.rhsGroupDimensions;
    rhsPerm.insert(rhsPerm.end(), plan.rhsBatch.begin(), plan.rhsBatch.end());
    rhsPerm.insert(rhsPerm.end(), plan.rhsContracting.begin(), plan.rhsContracting.end());
    rhsPerm.insert(rhsPerm.end(), plan.rhsFree.begin(), plan.rhsFree.end());
    a = permuted(a, lhsPerm);
    b = permuted(b, rhsPerm);
    Literal result(withElementType(resultShape, acc));
    switch (acc) {
        case PrimitiveType::F32:
            raggedKernel(mode, groups, plan.batch, plan.m, plan.n, plan.k,
                         std::as_const(a).data<float>().data(),
                         std::as_const(b).data<float>().data(), groupOf,
                         result.data<float>().data());
            break;
        case PrimitiveType::F64:
            raggedKernel(mode, groups, plan.batch, plan.m, plan.n, plan.k,
                         std::as_const(a).data<double>().data(),
                         std::as_const(b).data<double>().data(), groupOf,
                         result.data<double>().data());
            break;
        case PrimitiveType::S64:
        case PrimitiveType::U64:
            raggedKernel(mode, groups, plan.batch, plan.m, plan.n, plan.k,
                         static_cast<const uint64_t*>(std::as_const(a).untypedData()),
                         static_cast<const uint64_t*>(std::as_const(b).untypedData()), groupOf,
                         static_cast<uint64_t*>(result.untypedData()));
            break;
        case PrimitiveType::C64:
            raggedKernel(mode, groups, plan.batch, plan.m, plan.n, plan.k,
                         std::as_const(a).data<std::complex<float>>().data(),
                         std::as_const(b).data<std::complex<float>>().data(), groupOf,
                         result.data<std::complex<float>>().data());
            break;
        case PrimitiveType::C128:
            raggedKernel(mode, groups, plan.batch, plan.m, plan.n, plan.k,
                         std::as_const(a).data<std::complex<double>>().data(),
                         std::as_const(b).data<std::complex<double>>().data(), groupOf,
                         result.data<std::complex<double>>().data());
            break;
        default:
            return unsupported(instruction, "ragged-dot accumulating in " +
                                                std::string(primitive_util::name(acc)));
    }
    return convertedTo(instruction, result, out);
}

}  // namespace

StatusOr<Literal> evaluateRaggedDot(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 3));
    const Literal& lhs = *operands[0];
    const Literal& rhs = *operands[1];
    const Literal& groupSizes = *operands[2];
    HLO_ASSIGN_OR_RETURN(RaggedDotGeometry geometry,
                         raggedDotGeometry(instruction, lhs, rhs, groupSizes));
    HLO_RETURN_IF_ERROR(raggedDotPrefix(instruction, lhs, groupSizes, geometry));
    const std::vector<int64_t> groupOf = raggedGroupOf(geometry, lhs, groupSizes);
    return raggedDotProduct(instruction, geometry, lhs, rhs, groupOf);
}

namespace {

// operand * broadcast(scale) in the target type (scale blocks repeat along
// every dimension whose size the scale's divides); a scalar scale is ignored
// as XLA's rewriter does.
StatusOr<Literal> dequantize(const HloInstruction& instruction, const Literal& operand,
                             const Literal& scale) {
    if (scale.shape().rank() == 0) return operand;
    const std::vector<int64_t>& dims = operand.shape().dimensions();
    const std::vector<int64_t>& scaleDims = scale.shape().dimensions();
    if (scaleDims.size() != dims.size())
        return invalid(instruction, "scale rank differs from operand rank");
    std::vector<int64_t> block(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
        if (scaleDims[i] <= 0 ? dims[i] != 0 : dims[i] % scaleDims[i] != 0)
            return invalid(instruction, "scale dimension " + std::to_string(i) +
                                            " does not divide the operand dimension");
        block[i] = scaleDims[i] > 0 ? dims[i] / scaleDims[i] : 1;
    }
    const PrimitiveType type = scaledDotType(operand.elementType(), scale.elementType());
    HLO_ASSIGN_OR_RETURN(Literal value, convertedTo(instruction, operand, type));
    HLO_ASSIGN_OR_RETURN(Literal factor, convertedTo(instruction, scale, type));
    const std::vector<int64_t> scaleStrides = rowMajorStrides(scaleDims);
    std::vector<int64_t> index(dims.size(), 0);
    const int64_t count = operand.elementCount();
    for (int64_t linear = 0; linear < count; ++linear) {
        int64_t s = 0;
        for (size_t i = 0; i < dims.size(); ++i) s += (index[i] / block[i]) * scaleStrides[i];
        // Products of two values of `type` are exact in double (or the
        // rounding matches the type's own multiply), so one rounding here
        // equals a multiply in `type`.
        if (primitive_util::isComplex(type))
            value.setFromComplex(linear, value.getAsComplex(linear) * factor.getAsComplex(s));
        else
            value.setFromDouble(linear, value.getAsDouble(linear) * factor.getAsDouble(s));
        nextIndex(index, dims);
    }
    return value;
}

}  // namespace

StatusOr<Literal> evaluateScaledDot(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 4));
    // Operands: lhs, rhs, lhs_scale, rhs_scale.
    HLO_ASSIGN_OR_RETURN(Literal lhs, dequantize(instruction, *operands[0], *operands[2]));
    HLO_ASSIGN_OR_RETURN(Literal rhs, dequantize(instruction, *operands[1], *operands[3]));
    const PrimitiveType common = scaledDotType(lhs.elementType(), rhs.elementType());
    HLO_ASSIGN_OR_RETURN(lhs, convertedTo(instruction, lhs, common));
    HLO_ASSIGN_OR_RETURN(rhs, convertedTo(instruction, rhs, common));
    const PrimitiveType out = instruction.shape().elementType();
    const PrimitiveType dotType = scaledDotType(common, out);
    HLO_ASSIGN_OR_RETURN(Literal result,
                         dotLiterals(instruction, lhs, rhs, dotNumbersOf(instruction),
                                     withElementType(instruction.shape(), dotType)));
    return convertedTo(instruction, result, out);
}

}  // namespace hloscope::evaluator
