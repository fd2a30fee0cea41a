#include "core/interpreter/native_scatter.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/interpreter/ops_internal.h"
#include "core/ir/float_types.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/primitive_type.h"

namespace hloscope {

namespace {

Status notPlanned(const HloInstruction& scatter, const std::string& why) {
    return Status(StatusCode::kUnimplemented, "%" + scatter.name() + ": " + why);
}

std::vector<int64_t> rowMajorStridesOf(const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
    return strides;
}

bool contains(const std::vector<int64_t>& values, int64_t value) {
    return std::find(values.begin(), values.end(), value) != values.end();
}

// One window's element: `old` combined with `update` (old first unless swapped), by the
// interpreter's arithmetic (evaluator::applyBinary: wrapping integers, NaN-propagating
// maximum and minimum, narrow floats computed in f32).
template <typename Storage, typename Compute>
struct Combiner {
    bool overwrite;
    evaluator::BinaryKind kind;
    bool swapped;
    void operator()(Storage* old, const Storage* update) const {
        if (overwrite) {
            *old = *update;
            return;
        }
        const Compute a = load(*old), b = load(*update);
        *old = store(swapped ? evaluator::applyBinary(kind, b, a) : evaluator::applyBinary(kind, a, b));
    }
    static Compute load(Storage v) {
        if constexpr (std::is_same_v<Storage, Compute>) return v;
        else return toFloat(v);
    }
    static Storage store(Compute v) {
        if constexpr (std::is_same_v<Storage, Compute>) return v;
        else if constexpr (std::is_same_v<Storage, Half>) return fromFloat<PrimitiveType::F16>(v);
        else return fromFloat<PrimitiveType::BF16>(v);
    }
};

template <typename Index>
int64_t readIndex(const void* indices, int64_t at) {
    return static_cast<int64_t>(static_cast<const Index*>(indices)[at]);
}

template <typename Storage, typename Compute, typename Index>
void scatterTyped(const NativeScatterPlan& plan, const void* indices, const void* updatesData, void* resultData) {
    const auto* updates = static_cast<const Storage*>(updatesData);
    auto* result = static_cast<Storage*>(resultData);
    const Combiner<Storage, Compute> combine{plan.overwrite, plan.kind, plan.swapped};
    const size_t rank = plan.operandDims.size();
    int64_t scatterCount = 1;
    for (int64_t size : plan.scatterSizes) scatterCount *= size;
    int64_t windowCount = 1;
    for (int64_t size : plan.windowSizes) windowCount *= size;
    if (windowCount == 0) return;
    // The innermost window dimension runs as a contiguous loop where both sides are.
    const size_t windowRank = plan.windowSizes.size();
    const bool innerContiguous = windowRank > 0 && plan.updateWindowStrides[windowRank - 1] == 1 &&
                                 plan.operandWindowStrides[windowRank - 1] == 1;
    const int64_t inner = innerContiguous ? plan.windowSizes[windowRank - 1] : 1;
    const size_t outerRank = innerContiguous ? windowRank - 1 : windowRank;
    const int64_t outerCount = windowCount / inner;
    std::vector<int64_t> scatterIndex(plan.scatterSizes.size(), 0);
    std::vector<int64_t> windowIndex(outerRank, 0);
    std::vector<int64_t> start(rank, 0);
    for (int64_t s = 0; s < scatterCount; ++s) {
        int64_t indexBase = 0, updateBase = 0;
        for (size_t i = 0; i < scatterIndex.size(); ++i) {
            indexBase += scatterIndex[i] * plan.indexScatterStrides[i];
            updateBase += scatterIndex[i] * plan.updateScatterStrides[i];
        }
        std::fill(start.begin(), start.end(), 0);
        for (int64_t k = 0; k < plan.indexVectorSize; ++k)
            start[static_cast<size_t>(plan.scatterDimsToOperandDims[static_cast<size_t>(k)])] =
                readIndex<Index>(indices, indexBase + k * plan.indexVectorStride);
        for (size_t i = 0; i < plan.batchOperandDims.size(); ++i)
            start[static_cast<size_t>(plan.batchOperandDims[i])] =
                scatterIndex[static_cast<size_t>(plan.batchScatterPositions[i])];
        bool fits = true;
        int64_t operandBase = 0;
        for (size_t d = 0; d < rank; ++d) {
            const int64_t v = start[d];
            if (v < 0 || v > plan.operandDims[d] - plan.windowExtent[d]) {
                fits = false;
                break;
            }
            operandBase += v * plan.operandStrides[d];
        }
        if (fits) {
            std::fill(windowIndex.begin(), windowIndex.end(), 0);
            for (int64_t w = 0; w < outerCount; ++w) {
                int64_t o = operandBase, u = updateBase;
                for (size_t i = 0; i < outerRank; ++i) {
                    o += windowIndex[i] * plan.operandWindowStrides[i];
                    u += windowIndex[i] * plan.updateWindowStrides[i];
                }
                Storage* out = result + o;
                const Storage* in = updates + u;
                if (innerContiguous) {
                    for (int64_t j = 0; j < inner; ++j) combine(out + j, in + j);
                } else {
                    combine(out, in);
                }
                for (size_t i = outerRank; i-- > 0;) {
                    if (++windowIndex[i] < plan.windowSizes[i]) break;
                    windowIndex[i] = 0;
                }
            }
        }
        for (size_t i = scatterIndex.size(); i-- > 0;) {
            if (++scatterIndex[i] < plan.scatterSizes[i]) break;
            scatterIndex[i] = 0;
        }
    }
}

template <typename Storage, typename Compute>
void scatterWithIndex(const NativeScatterPlan& plan, const void* indices, const void* updates, void* result) {
    if (plan.indexType == PrimitiveType::S64)
        scatterTyped<Storage, Compute, int64_t>(plan, indices, updates, result);
    else
        scatterTyped<Storage, Compute, int32_t>(plan, indices, updates, result);
}

}  // namespace

StatusOr<NativeScatterPlan> planNativeScatter(const HloInstruction& scatter) {
    if (scatter.opcode() != HloOpcode::kScatter) return notPlanned(scatter, "not a scatter");
    if (scatter.operandCount() != 3)
        return notPlanned(scatter, "a scatter of several operands is not compiled by the CPU backend");
    const ScatterDimensionNumbers* dn = scatter.scatterDimensionNumbers();
    if (dn == nullptr) return notPlanned(scatter, "scatter without dimension numbers");
    if (dn->inputBatchingDims.size() != dn->scatterIndicesBatchingDims.size())
        return notPlanned(scatter, "scatter batching dimensions are not paired");
    const Shape& operand = scatter.operand(0)->shape();
    const Shape& indices = scatter.operand(1)->shape();
    const Shape& updates = scatter.operand(2)->shape();
    for (const Shape* shape : {&operand, &indices, &updates, &scatter.shape()})
        if (!shape->isArray() || !shape->hasDefaultDenseLayout())
            return notPlanned(scatter, "a scatter of non-default layouts is not compiled by the CPU backend");
    NativeScatterPlan plan;
    plan.type = operand.elementType();
    switch (plan.type) {
    case PrimitiveType::F32:
    case PrimitiveType::F64:
    case PrimitiveType::F16:
    case PrimitiveType::BF16:
    case PrimitiveType::S32:
    case PrimitiveType::S64:
    case PrimitiveType::U32: break;
    default:
        return notPlanned(scatter, "a scatter of " + std::string(primitive_util::name(plan.type)) +
                                       " is not compiled by the CPU backend");
    }
    if (updates.elementType() != plan.type || scatter.shape().elementType() != plan.type ||
        scatter.shape().dimensions() != operand.dimensions())
        return notPlanned(scatter, "scatter types or shapes differ");
    plan.indexType = indices.elementType();
    if (plan.indexType != PrimitiveType::S32 && plan.indexType != PrimitiveType::S64)
        return notPlanned(scatter, "scatter indices of " + std::string(primitive_util::name(plan.indexType)) +
                                       " are not compiled by the CPU backend");

    // The update computation.
    const HloComputation* computation = scatter.toApply();
    if (computation == nullptr || computation->parameterCount() != 2 || computation->root() == nullptr)
        return notPlanned(scatter, "scatter without a two-parameter update computation");
    const HloInstruction* p0 = computation->parameter(0);
    const HloInstruction* p1 = computation->parameter(1);
    const HloInstruction* root = computation->root();
    for (const HloInstruction* node : {p0, p1, root})
        if (node == nullptr || !node->shape().isScalar() || node->shape().elementType() != plan.type)
            return notPlanned(scatter, "scatter's update computation is not scalar of its type");
    if (root == p1) {
        plan.overwrite = true;
    } else {
        const auto binary = evaluator::recognizeBinaryComputation(*computation, plan.type);
        if (!binary || binary->kind == evaluator::BinaryKind::kAnd || binary->kind == evaluator::BinaryKind::kOr ||
            binary->kind == evaluator::BinaryKind::kXor)
            return notPlanned(scatter, "a scatter combining with " + std::string(hloOpcodeString(root->opcode())) +
                                           " is not compiled by the CPU backend");
        plan.kind = binary->kind;
        plan.swapped = binary->swapped;
    }

    // Geometry (the verifier has checked the dimension numbers against the shapes).
    plan.operandDims = operand.dimensions();
    plan.operandStrides = rowMajorStridesOf(plan.operandDims);
    plan.operandElements = operand.elementCount();
    const std::vector<int64_t>& updateDims = updates.dimensions();
    const std::vector<int64_t> updateStrides = rowMajorStridesOf(updateDims);
    const std::vector<int64_t>& indexDims = indices.dimensions();
    const std::vector<int64_t> indexStrides = rowMajorStridesOf(indexDims);
    const auto indexRank = static_cast<int64_t>(indexDims.size());
    if (dn->indexVectorDim < 0 || dn->indexVectorDim > indexRank)
        return notPlanned(scatter, "scatter index_vector_dim out of range");
    if (dn->indexVectorDim < indexRank) {
        plan.indexVectorSize = indexDims[static_cast<size_t>(dn->indexVectorDim)];
        plan.indexVectorStride = indexStrides[static_cast<size_t>(dn->indexVectorDim)];
    }
    plan.scatterDimsToOperandDims = dn->scatterDimsToOperandDims;
    if (static_cast<int64_t>(plan.scatterDimsToOperandDims.size()) != plan.indexVectorSize)
        return notPlanned(scatter, "scatter index vector and scatter_dims_to_operand_dims differ in length");
    std::vector<int64_t> indexBatchDims;
    for (int64_t d = 0; d < indexRank; ++d)
        if (d != dn->indexVectorDim) indexBatchDims.push_back(d);
    std::vector<int64_t> updateScatterDims;
    for (int64_t d = 0; d < static_cast<int64_t>(updateDims.size()); ++d)
        if (!contains(dn->updateWindowDims, d)) updateScatterDims.push_back(d);
    if (updateScatterDims.size() != indexBatchDims.size())
        return notPlanned(scatter, "scatter updates and indices disagree on the scatter dimensions");
    for (size_t i = 0; i < updateScatterDims.size(); ++i) {
        const auto u = static_cast<size_t>(updateScatterDims[i]);
        const auto x = static_cast<size_t>(indexBatchDims[i]);
        if (updateDims[u] != indexDims[x])
            return notPlanned(scatter, "scatter updates and indices disagree on the scatter dimensions");
        plan.scatterSizes.push_back(updateDims[u]);
        plan.updateScatterStrides.push_back(updateStrides[u]);
        plan.indexScatterStrides.push_back(indexStrides[x]);
    }
    for (size_t i = 0; i < dn->inputBatchingDims.size(); ++i) {
        const int64_t operandDim = dn->inputBatchingDims[i];
        const auto at = std::find(indexBatchDims.begin(), indexBatchDims.end(), dn->scatterIndicesBatchingDims[i]);
        if (operandDim < 0 || operandDim >= static_cast<int64_t>(plan.operandDims.size()) || at == indexBatchDims.end())
            return notPlanned(scatter, "scatter batching dimensions out of range");
        const auto position = static_cast<size_t>(at - indexBatchDims.begin());
        if (plan.scatterSizes[position] != plan.operandDims[static_cast<size_t>(operandDim)])
            return notPlanned(scatter, "scatter batching dimension sizes differ");
        plan.batchOperandDims.push_back(operandDim);
        plan.batchScatterPositions.push_back(static_cast<int64_t>(position));
    }
    std::vector<int64_t> windowOperandDims;
    for (int64_t d = 0; d < static_cast<int64_t>(plan.operandDims.size()); ++d)
        if (!contains(dn->insertedWindowDims, d) && !contains(dn->inputBatchingDims, d)) windowOperandDims.push_back(d);
    if (windowOperandDims.size() != dn->updateWindowDims.size())
        return notPlanned(scatter, "scatter window dimensions do not match the operand");
    plan.windowExtent.assign(plan.operandDims.size(), 1);
    for (size_t i = 0; i < windowOperandDims.size(); ++i) {
        const auto o = static_cast<size_t>(windowOperandDims[i]);
        const auto u = static_cast<size_t>(dn->updateWindowDims[i]);
        if (u >= updateDims.size()) return notPlanned(scatter, "scatter update_window_dims out of range");
        plan.windowSizes.push_back(updateDims[u]);
        plan.updateWindowStrides.push_back(updateStrides[u]);
        plan.operandWindowStrides.push_back(plan.operandStrides[o]);
        plan.windowExtent[o] = updateDims[u];
    }
    for (int64_t d : plan.scatterDimsToOperandDims)
        if (d < 0 || d >= static_cast<int64_t>(plan.operandDims.size()))
            return notPlanned(scatter, "scatter_dims_to_operand_dims out of range");
    return plan;
}

void runNativeScatter(const NativeScatterPlan& plan, const void* indices, const void* updates, void* result) {
    switch (plan.type) {
    case PrimitiveType::F32: scatterWithIndex<float, float>(plan, indices, updates, result); break;
    case PrimitiveType::F64: scatterWithIndex<double, double>(plan, indices, updates, result); break;
    case PrimitiveType::F16: scatterWithIndex<Half, float>(plan, indices, updates, result); break;
    case PrimitiveType::BF16: scatterWithIndex<BFloat16, float>(plan, indices, updates, result); break;
    case PrimitiveType::S32: scatterWithIndex<int32_t, int32_t>(plan, indices, updates, result); break;
    case PrimitiveType::S64: scatterWithIndex<int64_t, int64_t>(plan, indices, updates, result); break;
    case PrimitiveType::U32: scatterWithIndex<uint32_t, uint32_t>(plan, indices, updates, result); break;
    default: break;
    }
}

}  // namespace hloscope
