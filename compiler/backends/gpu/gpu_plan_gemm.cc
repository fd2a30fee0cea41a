// The GPU plan's GEMMs: a float32 dot that is a (batched) matrix product
// becomes a gemm step (cuBLAS where the runner finds it, our tiled GEMM
// kernel otherwise); one whose dimensions are elsewhere has its operands
// transposed by kernels first; a kOutput fusion of such a dot and an
// elementwise epilogue (dot_plan.h) becomes the gemm step and a kernel for
// the epilogue reading the product.
#include <algorithm>
#include <optional>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "compiler/backends/llvm/dot_plan.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::gpu_plan_internal {
namespace {

// A float32 dot that is a (batched) matrix product: batch dimensions
// leading in both operands, and after them each operand's free dimensions
// and contracting dimensions in two contiguous runs (either order; the
// contracting ones in the same order on both sides): row-major storage then
// is [batch, m, k] or [batch, k, m] for lhs and [batch, k, n] or
// [batch, n, k] for rhs, what the gemm step (cuBLAS) computes.
std::optional<GpuGemmShape> gemmShapeOf(const HloInstruction& dot) {
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (!numbers || !numbers->lhsRaggedDimensions.empty() || !numbers->rhsGroupDimensions.empty())
        return std::nullopt;
    const Shape& lhs = dot.operand(0)->shape();
    const Shape& rhs = dot.operand(1)->shape();
    if (dot.shape().elementType() != PrimitiveType::F32 ||
        lhs.elementType() != PrimitiveType::F32 || rhs.elementType() != PrimitiveType::F32)
        return std::nullopt;
    const int64_t nb = static_cast<int64_t>(numbers->lhsBatchDimensions.size());
    const int64_t nc = static_cast<int64_t>(numbers->lhsContractingDimensions.size());
    if (nc == 0 || numbers->rhsContractingDimensions.size() != static_cast<size_t>(nc))
        return std::nullopt;
    GpuGemmShape gemm;
    for (int64_t i = 0; i < nb; ++i) {
        if (numbers->lhsBatchDimensions[static_cast<size_t>(i)] != i ||
            numbers->rhsBatchDimensions[static_cast<size_t>(i)] != i)
            return std::nullopt;
        gemm.batch *= lhs.dimensions(i);
    }
    // Whether `contracting` is the run [start, start + nc) in order.
    auto isRun = [&](const std::vector<int64_t>& contracting, int64_t start) {
        for (int64_t i = 0; i < nc; ++i)
            if (contracting[static_cast<size_t>(i)] != start + i) return false;
        return true;
    };
    auto product = [](const Shape& shape, int64_t from, int64_t to) {
        int64_t n = 1;
        for (int64_t d = from; d < to; ++d) n *= shape.dimensions(d);
        return n;
    };
    const int64_t lhsRank = lhs.rank(), rhsRank = rhs.rank();
    if (isRun(numbers->lhsContractingDimensions, lhsRank - nc)) {
        gemm.m = product(lhs, nb, lhsRank - nc);
    } else if (isRun(numbers->lhsContractingDimensions, nb)) {
        gemm.lhsTransposed = true;
        gemm.m = product(lhs, nb + nc, lhsRank);
    } else {
        return std::nullopt;
    }
    if (isRun(numbers->rhsContractingDimensions, nb)) {
        gemm.n = product(rhs, nb + nc, rhsRank);
    } else if (isRun(numbers->rhsContractingDimensions, rhsRank - nc)) {
        gemm.rhsTransposed = true;
        gemm.n = product(rhs, nb, rhsRank - nc);
    } else {
        return std::nullopt;
    }
    gemm.k = 1;
    for (int64_t d : numbers->lhsContractingDimensions) gemm.k *= lhs.dimensions(d);
    if (gemm.batch * gemm.m * gemm.n * gemm.k == 0) return std::nullopt;
    return gemm;
}

// The GPU's epilogue fusions (dot_plan.h): a dot alone or with an epilogue, its
// operands parameters through same-dimension copies (dense row-major buffers).
constexpr EpilogueRules kGpuEpilogues{/*convolutions=*/false, /*producerAlone=*/true,
                                      /*throughCopies=*/true};

}  // namespace

Status PlanBuilder::planGemm(const HloInstruction& instruction, const HloInstruction& dot,
                             const GpuGemmShape& gemm, const std::vector<int>& operandBuffers,
                             int outBuffer, int64_t time) {
    GpuPlanStep step;
    step.kind = GpuStepKind::kGemm;
    step.name = instruction.name();
    step.opcode = std::string(hloOpcodeString(instruction.opcode()));
    step.instruction = instruction.name();
    step.batch = gemm.batch;
    step.m = gemm.m;
    step.n = gemm.n;
    step.k = gemm.k;
    step.lhsTransposed = gemm.lhsTransposed;
    step.rhsTransposed = gemm.rhsTransposed;
    step.lhs = operandBuffers[0];
    step.rhs = operandBuffers[1];
    step.out = outBuffer;
    // The fallback: our tiled GEMM kernel.
    HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, m_emitter.emitGemm(entryName(), gemm));
    step.fallback.push_back(
        launchStep(instruction, info, {outBuffer, operandBuffers[0], operandBuffers[1]}));
    m_plan.steps.push_back(std::move(step));
    ++m_plan.kernels;
    return Status::ok();
}

StatusOr<bool> PlanBuilder::planPermutedGemm(const HloInstruction& instruction,
                                             const HloInstruction& dot,
                                             const std::vector<int>& operandBuffers, int outBuffer,
                                             int64_t time) {
    const DotDimensionNumbers* numbers = dot.dotDimensionNumbers();
    if (!numbers || !numbers->lhsRaggedDimensions.empty() || !numbers->rhsGroupDimensions.empty())
        return false;
    if (dot.shape().elementType() != PrimitiveType::F32) return false;
    // An outer product (no contracting dimension) or an empty one is no GEMM.
    if (numbers->lhsContractingDimensions.empty() || dot.shape().elementCount() == 0) return false;
    for (int side = 0; side < 2; ++side)
        if (!dot.operand(side)->shape().isArray() || dot.operand(side)->shape().elementCount() == 0)
            return false;
    HloInstruction* canonical[2] = {nullptr, nullptr};
    int buffers[2] = {operandBuffers[0], operandBuffers[1]};
    for (int side = 0; side < 2; ++side) {
        const Shape& shape = dot.operand(side)->shape();
        if (!shape.isArray() || shape.elementType() != PrimitiveType::F32) return false;
        const std::vector<int64_t> order = gemmOperandOrder(*numbers, side, shape.rank());
        // The operand as a leaf of its own (its buffer), never the module's instruction.
        HloInstruction* standIn = synthetic(std::make_unique<HloInstruction>(
            HloOpcode::kParameter, dot.name() + ".operand" + std::to_string(side),
            Shape(shape.elementType(), shape.dimensions())));
        if (isIdentityOrder(order)) {
            canonical[side] = standIn;
            continue;
        }
        std::vector<int64_t> dims;
        for (int64_t d : order) dims.push_back(shape.dimensions(d));
        HloInstruction* transpose = synthetic(std::make_unique<HloInstruction>(
            HloOpcode::kTranspose, dot.name() + ".transposed" + std::to_string(side),
            Shape(shape.elementType(), dims)));
        transpose->setDimensions(order);
        transpose->appendOperand(standIn);
        const int permuted =
            newBuffer("%" + transpose->name(), denseBytes(transpose->shape()), time);
        KernelSpec spec;
        spec.name = entryName();
        spec.outputs = {transpose};
        spec.leaves = {standIn};
        std::vector<GpuPlanStep> extra;
        HLO_ASSIGN_OR_RETURN(GpuPlanStep step,
                             kernelStep(instruction, spec, {permuted, buffers[side]}, time, extra));
        step.name = instruction.name() + ".transpose" + std::to_string(side);
        pushKernel(std::move(step), extra);
        canonical[side] = transpose;
        buffers[side] = permuted;
    }
    const DotDimensionNumbers numbersOut = gemmDotNumbers(*numbers, canonical[0]->shape().rank());
    HloInstruction* canonicalDot = synthetic(std::make_unique<HloInstruction>(
        HloOpcode::kDot, dot.name() + ".canonical",
        Shape(dot.shape().elementType(), dot.shape().dimensions())));
    canonicalDot->mutableExtra().dotDimensionNumbers = numbersOut;
    canonicalDot->appendOperand(canonical[0]);
    canonicalDot->appendOperand(canonical[1]);
    auto gemm = gemmShapeOf(*canonicalDot);
    if (!gemm)
        return internalError("%" + dot.name() + ": the permuted dot is not a GEMM (internal)");
    HLO_RETURN_IF_ERROR(
        planGemm(instruction, *canonicalDot, *gemm, {buffers[0], buffers[1]}, outBuffer, time));
    return true;
}

StatusOr<bool> PlanBuilder::planDotGemm(const HloInstruction& dot, int outBuffer, int64_t time) {
    if (!m_options.gemmSteps) return false;
    const std::vector<int> operands = {operandBuffer(dot, 0), operandBuffer(dot, 1)};
    if (auto gemm = gemmShapeOf(dot)) {
        HLO_RETURN_IF_ERROR(planGemm(dot, dot, *gemm, operands, outBuffer, time));
        return true;
    }
    return planPermutedGemm(dot, dot, operands, outBuffer, time);
}

StatusOr<bool> PlanBuilder::planEpilogueGemm(const HloInstruction& fusion, KernelSpec& spec,
                                             std::vector<int>& leafBuffers,
                                             const std::vector<int>& outputs, int64_t time) {
    const HloInstruction* dot =
        m_options.gemmSteps ? epilogueProducer(fusion, kGpuEpilogues) : nullptr;
    if (!dot || dot->shape().elementType() != PrimitiveType::F32) return false;
    const std::vector<int> dotOperands = {
        operandBuffer(fusion, parameterBehind(dot->operand(0))->parameterNumber()),
        operandBuffer(fusion, parameterBehind(dot->operand(1))->parameterNumber())};
    const bool root = dot == fusion.fusedComputation()->root();
    // The product into the output (a dot alone) or a temporary the epilogue reads.
    const int productBuffer =
        root ? outputs[0]
             : newBuffer("%" + fusion.name() + ".dot", denseBytes(dot->shape()), time);
    bool planned = false;
    if (auto gemm = gemmShapeOf(*dot)) {
        HLO_RETURN_IF_ERROR(planGemm(fusion, *dot, *gemm, dotOperands, productBuffer, time));
        planned = true;
    } else {
        HLO_ASSIGN_OR_RETURN(
            planned, planPermutedGemm(fusion, *dot, dotOperands, productBuffer, time));
    }
    if (planned && root) return true;
    if (planned) {
        m_plan.steps.back().name = fusion.name() + ".dot";
        spec.leaves.push_back(dot);
        leafBuffers.push_back(productBuffer);
    } else if (!root) {
        m_plan.buffers.pop_back();  // the unused temporary
        m_live.pop_back();
    }
    return false;
}

}  // namespace hloscope::gpu_plan_internal
