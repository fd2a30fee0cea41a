// fft in a GPU plan: the interpreter's algorithm (core/interpreter/solve_fft.cc) as kernels.
// The operand, its batch dimensions collapsed into one, is copied into a work array
// [batch, fft_length...] (zero-extended or cut), each trailing axis is transformed in turn
// (inverse ones scaled by 1 / n), and the work array is copied into the result (an RFFT keeps
// the first n / 2 + 1 terms of its last axis; an IRFFT transforms its last axis last, from the
// half spectrum extended by symmetry, and keeps the real part). Here the copies fold into the
// first and last axis kernels: one kernel per axis (GpuFftAxis), complex temporaries between
// them, and one twiddle table per distinct axis length, computed here in long double.
#include <cmath>
#include <map>
#include <numbers>

#include "compiler/backends/gpu/gpu_plan_builder.h"
#include "core/ir/fft_geometry.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/primitive_type.h"

namespace hloscope::gpu_plan_internal {
namespace {

// exp(sign 2 pi i j / n) for j < n, as c64 or c128.
Literal twiddleTable(int64_t n, bool inverse, bool doublePrecision) {
    Literal table(Shape(doublePrecision ? PrimitiveType::C128 : PrimitiveType::C64, {n}));
    const long double sign = inverse ? 1.0L : -1.0L;
    for (int64_t j = 0; j < n; ++j) {
        const long double angle = sign * 2.0L * std::numbers::pi_v<long double> *
                                  static_cast<long double>(j) / static_cast<long double>(n);
        table.setFromComplex(j, std::complex<double>(static_cast<double>(std::cos(angle)),
                                                     static_cast<double>(std::sin(angle))));
    }
    return table;
}

}  // namespace

Status PlanBuilder::planFft(const HloInstruction& fft, int64_t time) {
    const HloInstruction& operand = *fft.operand(0);
    auto geometry = fftGeometry(fft, operand.shape());
    if (!geometry.isOk()) return notOnGpu(fft, geometry.status().message());
    const FftGeometry& g = *geometry;
    const PrimitiveType inType = operand.shape().elementType();
    const PrimitiveType outType = fft.shape().elementType();
    auto isDouble = [](PrimitiveType t) {
        return t == PrimitiveType::C128 || t == PrimitiveType::F64;
    };
    auto isSingle = [](PrimitiveType t) {
        return t == PrimitiveType::C64 || t == PrimitiveType::F32;
    };
    if (!(isDouble(inType) && isDouble(outType)) && !(isSingle(inType) && isSingle(outType)))
        return notOnGpu(fft, "fft of " + std::string(primitive_util::name(inType)) + " to " +
                                 std::string(primitive_util::name(outType)) +
                                 " (c64/f32 and c128/f64 are compiled)");
    const bool doublePrecision = isDouble(inType);
    const size_t l = g.lengths.size();

    const int output = newBuffer("%" + fft.name(), denseBytes(fft.shape()), time);
    m_leaves[&fft] = {output};
    if (fft.shape().elementCount() == 0) return Status::ok();
    const PrimitiveType workType = doublePrecision ? PrimitiveType::C128 : PrimitiveType::C64;
    const int64_t workBytes = product(g.workDims) * primitive_util::byteWidth(workType);
    std::map<int64_t, int> tables;  // by length
    int source = m_leaves[&operand].front();
    std::vector<int64_t> sourceDims = g.inDims;
    for (size_t a = 1; a <= l; ++a) {
        const bool last = a == l;
        GpuFftAxis axis;
        axis.srcDims = sourceDims;
        axis.dstDims = last ? g.outDims : g.workDims;
        axis.axis = a;
        axis.length = g.lengths[a - 1];
        axis.hermitian = g.realOutput && last;
        axis.realSource = g.realInput && a == 1;
        axis.realResult = g.realOutput && last;
        axis.doublePrecision = doublePrecision;
        axis.scale = g.inverse && axis.length > 0 ? 1.0 / static_cast<double>(axis.length) : 1.0;
        auto table = tables.find(axis.length);
        if (table == tables.end()) {
            const int buffer =
                newBuffer("%" + fft.name() + ".twiddles." + std::to_string(axis.length),
                          axis.length * primitive_util::byteWidth(workType), 0);
            m_pinned.push_back(buffer);
            m_plan.constants.push_back(
                GpuPlanConstant{buffer, fft.name() + ".twiddles." + std::to_string(axis.length),
                                twiddleTable(axis.length, g.inverse, doublePrecision)});
            table = tables.emplace(axis.length, buffer).first;
        }
        const int destination =
            last ? output
                 : newBuffer("%" + fft.name() + ".axis." + std::to_string(a), workBytes, time);
        if (product(axis.dstDims) > 0) {
            HLO_ASSIGN_OR_RETURN(GpuKernelInfo info, m_emitter.emitFftAxis(entryName(), axis));
            GpuPlanStep step = launchStep(fft, info, {destination, source, table->second});
            if (!last) step.name = fft.name() + ".axis." + std::to_string(a);
            m_plan.steps.push_back(std::move(step));
            ++m_plan.kernels;
        }
        use(source, time);
        source = destination;
        sourceDims = axis.dstDims;
    }
    return Status::ok();
}

}  // namespace hloscope::gpu_plan_internal
