// Window ops of the shared element generator (kernel_gen_internal.h), one
// output element at a time, in the reference interpreter's order:
//   * reduce-window: the init value, then the reducer over the window's
//     positions in row-major order, padding and base-dilation holes skipped
//     (core/interpreter/reduce.cc); narrow floats rounded after every step;
//   * convolution: the evaluator's accumulation type (f32 for f32 and
//     narrower floats, f64, s64 / u64 for integers), window positions in
//     row-major order and, within each, the input features of the output
//     feature's group; every dim_labels, stride, padding, lhs / rhs
//     dilation, window reversal, feature_group_count and batch_group_count
//     (core/interpreter/convolution_geometry.h, core/interpreter/conv.cc);
//   * select-and-scatter: each output element starts at the init value and
//     combines, in row-major source order, the source elements whose
//     window selects it (the select function over the window in row-major
//     order keeps its current choice while it returns true).
// The CPU backend keeps its im2col + GEMM convolution (compiler/runtime/
// convolution.h) wherever that applies; this is for everything else, and
// for the GPU.
#include <llvm/IR/Constants.h>

#include "compiler/backends/llvm/kernel_gen_internal.h"
#include "core/interpreter/convolution_geometry.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::llvm_codegen {

namespace {

struct Tap {
    Value* position = nullptr;  // clamped into [0, size) where invalid
    Value* valid = nullptr;
};

// The input position of window offset `win` for output position `out` (the
// evaluator's windowInput / convolutionInputPosition): invalid on padding,
// base-dilation holes and outside the input.
Tap windowTap(llvm::IRBuilderBase& b, const WindowDimension& w, int64_t inSize, Value* out,
              Value* win) {
    auto c = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
    Value* position = b.CreateAdd(b.CreateSub(b.CreateMul(out, c(w.stride)), c(w.paddingLow)),
                                  b.CreateMul(win, c(w.windowDilation)));
    Value* valid = b.getTrue();
    if (w.baseDilation > 1) {
        valid = b.CreateICmpEQ(b.CreateSRem(position, c(w.baseDilation)), c(0));
        position = b.CreateSDiv(position, c(w.baseDilation));
    }
    valid = b.CreateAnd(
        valid, b.CreateAnd(b.CreateICmpSGE(position, c(0)), b.CreateICmpSLT(position, c(inSize))));
    return {b.CreateSelect(valid, position, c(0)), valid};
}

// floor(a / d) for d > 0.
Value* floorDiv(llvm::IRBuilderBase& b, Value* a, int64_t d) {
    Value* q = b.CreateSDiv(a, b.getInt64(static_cast<uint64_t>(d)));
    Value* r = b.CreateSRem(a, b.getInt64(static_cast<uint64_t>(d)));
    return b.CreateSub(q, b.CreateZExt(b.CreateICmpSLT(r, b.getInt64(0)), b.getInt64Ty()));
}

// The window of an op over an operand of `rank` dimensions (none for rank 0).
StatusOr<std::vector<WindowDimension>> windowOf(const HloInstruction& instruction, int64_t rank) {
    const Window* window = instruction.window();
    if (!window) {
        if (rank == 0) return std::vector<WindowDimension>{};
        return unsupportedAt(instruction, "missing window");
    }
    if (static_cast<int64_t>(window->dimensions.size()) != rank)
        return unsupportedAt(instruction, "window rank differs from the operand rank");
    for (const WindowDimension& w : window->dimensions)
        if (w.size < 0 || w.stride < 1 || w.windowDilation < 1 || w.baseDilation < 1)
            return unsupportedAt(instruction,
                                 "window sizes, strides and dilations must be positive");
    return window->dimensions;
}

int64_t product(const std::vector<int64_t>& values) {
    int64_t n = 1;
    for (int64_t v : values) n *= v;
    return n;
}

// The evaluator's accumulation type for a convolution or dot
// (core/interpreter/ops_common.cc, accumulationType).
PrimitiveType accumulationTypeOf(PrimitiveType out, PrimitiveType lhs, PrimitiveType rhs) {
    using primitive_util::isFloatingPoint;
    const bool wide = lhs == PrimitiveType::F64 || rhs == PrimitiveType::F64 ||
                      lhs == PrimitiveType::C128 || rhs == PrimitiveType::C128;
    if (isFloatingPoint(out))
        return out == PrimitiveType::F64 || wide ? PrimitiveType::F64 : PrimitiveType::F32;
    if (primitive_util::isComplex(out))
        return out == PrimitiveType::C128 || wide ? PrimitiveType::C128 : PrimitiveType::C64;
    if (primitive_util::isInteger(out) || out == PrimitiveType::PRED) {
        if (isFloatingPoint(lhs) || isFloatingPoint(rhs)) return PrimitiveType::F64;
        if (primitive_util::isComplex(lhs) || primitive_util::isComplex(rhs))
            return PrimitiveType::PRIMITIVE_TYPE_INVALID;
        return primitive_util::isUnsignedInteger(out) ? PrimitiveType::U64 : PrimitiveType::S64;
    }
    return PrimitiveType::PRIMITIVE_TYPE_INVALID;
}

}  // namespace

StatusOr<std::vector<Value*>> KernelGen::genComponents(const HloInstruction& multi,
                                                       const Index& index) {
    if (multi.opcode() == HloOpcode::kReduceWindow) return genReduceWindowValues(multi, index);
    return genReduce(multi, index);
}

StatusOr<Value*> KernelGen::genReduceWindow(const HloInstruction& reduceWindow,
                                            const Index& index) {
    if (!reduceWindow.shape().isArray())
        return unsupportedAt(reduceWindow, "variadic reduce-window used as an array");
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> values, genReduceWindowValues(reduceWindow, index));
    return values.front();
}

// Each output element folds its window's taps in row-major order from the
// init values, acc = to_apply(acc..., inputs at the tap...); taps in the
// padding are skipped, as the interpreter does.
StatusOr<std::vector<Value*>> KernelGen::genReduceWindowValues(const HloInstruction& reduceWindow,
                                                               const Index& index) {
    const auto key = std::make_pair(&reduceWindow, index.id);
    if (auto it = m_cache.find(key); it != m_cache.end()) return it->second;
    const int64_t n = reduceWindow.operandCount() / 2;
    if (n < 1 || reduceWindow.operandCount() != 2 * n)
        return unsupportedAt(reduceWindow, "reduce-window without inputs and init values");
    const HloComputation* reducer = reduceWindow.toApply();
    if (!reducer) return unsupportedAt(reduceWindow, "reduce-window without to_apply");
    const HloInstruction& first = *reduceWindow.operand(0);
    const std::vector<int64_t>& inDims = first.shape().dimensions();
    for (int64_t i = 0; i < n; ++i) {
        const Shape& input = reduceWindow.operand(i)->shape();
        if (!input.isArray() || input.dimensions() != inDims)
            return unsupportedAt(reduceWindow, "reduce-window inputs of different shapes");
        if (!reduceWindow.operand(n + i)->shape().isScalar())
            return unsupportedAt(reduceWindow, "non-scalar init value");
    }
    HLO_ASSIGN_OR_RETURN(std::vector<WindowDimension> window,
                         windowOf(reduceWindow, static_cast<int64_t>(inDims.size())));
    if (index.dims.size() != inDims.size())
        return unsupportedAt(reduceWindow, "result rank differs from the operand's");
    std::vector<int64_t> sizes;
    for (const WindowDimension& w : window) sizes.push_back(w.size);
    std::vector<Value*> inits;
    for (int64_t i = 0; i < n; ++i) {
        HLO_ASSIGN_OR_RETURN(Value * init, gen(*reduceWindow.operand(n + i), scalarIndex()));
        inits.push_back(init);
    }
    const std::vector<Value*> out = multiAll(index);
    auto body = [&](Value* k, const std::vector<Value*>& acc) -> StatusOr<std::vector<Value*>> {
        const std::vector<Value*> win = unflatten(k, sizes);
        Index at = makeIndex(inDims);
        Value* valid = m_b.getTrue();
        for (size_t d = 0; d < inDims.size(); ++d) {
            const Tap tap = windowTap(m_b, window[d], inDims[d], out[d], win[d]);
            at.multi.push_back(tap.position);
            valid = m_b.CreateAnd(valid, tap.valid);
        }
        if (inDims.empty()) at.linear = c64(0);
        return emitIf(
            valid, acc,
            [&]() -> StatusOr<std::vector<Value*>> {
                std::vector<Value*> args = acc;
                for (int64_t i = 0; i < n; ++i) {
                    HLO_ASSIGN_OR_RETURN(Value * x, gen(*reduceWindow.operand(i), at));
                    args.push_back(x);
                }
                return callScalar(*reducer, args, false);
            },
            "window.tap");
    };
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> result,
                         emitFold(product(sizes), inits, body, "window"));
    m_cache[key] = result;
    return result;
}

StatusOr<Value*> KernelGen::genConvolution(const HloInstruction& convolution, const Index& index) {
    if (convolution.operandCount() != 2)
        return unsupportedAt(convolution, "convolution without two operands");
    const HloInstruction& lhs = *convolution.operand(0);
    const HloInstruction& rhs = *convolution.operand(1);
    HLO_ASSIGN_OR_RETURN(ConvGeometry g, convolutionGeometry(convolution, lhs.shape(), rhs.shape(),
                                                             convolution.shape()));
    const PrimitiveType outType = convolution.shape().elementType();
    const PrimitiveType lhsType = lhs.shape().elementType(), rhsType = rhs.shape().elementType();
    const PrimitiveType accType = accumulationTypeOf(outType, lhsType, rhsType);
    if (accType == PrimitiveType::PRIMITIVE_TYPE_INVALID || !m_elemental.supported(lhsType) ||
        !m_elemental.supported(rhsType))
        return unsupportedAt(
            convolution, "convolution of " + std::string(primitive_util::name(lhsType)) + " and " +
                             std::string(primitive_util::name(rhsType)) + " into " +
                             std::string(primitive_util::name(outType)));
    const ConvolutionDimensionNumbers& dn = *g.dn;
    const std::vector<Value*> out = multiAll(index);
    Value* b = out[static_cast<size_t>(dn.outputBatchDimension)];
    Value* f = out[static_cast<size_t>(dn.outputFeatureDimension)];
    const int64_t outGroupF = g.outFeatures / g.featureGroups;
    const int64_t outGroupB = g.outFeatures / g.batchGroups;
    const int64_t batchGroupSize = g.inBatch / g.batchGroups;
    if (outGroupF == 0 || outGroupB == 0)
        return m_elemental.fromIndex(outType, c64(0));  // no output features
    Value* featureBase = m_b.CreateMul(m_b.CreateUDiv(f, c64(outGroupF)), c64(g.kernelIn));
    Value* lhsBatch =
        m_b.CreateAdd(b, m_b.CreateMul(m_b.CreateUDiv(f, c64(outGroupB)), c64(batchGroupSize)));
    std::vector<int64_t> sizes;
    for (const WindowDimension& w : g.window) sizes.push_back(w.size);
    Value* zero = m_elemental.zero(accType);
    const auto spatial = static_cast<size_t>(g.spatialRank);
    auto features = [&](const std::vector<Value*>& positions, const std::vector<Value*>& kernelAt,
                        const std::vector<Value*>& sum) {
        return emitFold(
            g.kernelIn, sum,
            [&](Value* iz, const std::vector<Value*>& partial) -> StatusOr<std::vector<Value*>> {
                Index l = makeIndex(lhs.shape().dimensions());
                l.multi.assign(spatial + 2, nullptr);
                l.multi[static_cast<size_t>(dn.inputBatchDimension)] = lhsBatch;
                l.multi[static_cast<size_t>(dn.inputFeatureDimension)] =
                    m_b.CreateAdd(featureBase, iz);
                Index r = makeIndex(rhs.shape().dimensions());
                r.multi.assign(spatial + 2, nullptr);
                r.multi[static_cast<size_t>(dn.kernelOutputFeatureDimension)] = f;
                r.multi[static_cast<size_t>(dn.kernelInputFeatureDimension)] = iz;
                for (size_t i = 0; i < spatial; ++i) {
                    l.multi[static_cast<size_t>(dn.inputSpatialDimensions[i])] = positions[i];
                    r.multi[static_cast<size_t>(dn.kernelSpatialDimensions[i])] = kernelAt[i];
                }
                HLO_ASSIGN_OR_RETURN(Value * x, gen(lhs, l));
                HLO_ASSIGN_OR_RETURN(Value * y, gen(rhs, r));
                x = m_elemental.convert(lhsType, accType, x);
                y = m_elemental.convert(rhsType, accType, y);
                return std::vector<Value*>{m_elemental.multiplyAdd(accType, partial[0], x, y)};
            },
            "conv.feature");
    };
    auto windowBody = [&](Value* k,
                          const std::vector<Value*>& sum) -> StatusOr<std::vector<Value*>> {
        const std::vector<Value*> win = unflatten(k, sizes);
        std::vector<Value*> positions, kernelAt;
        Value* valid = m_b.getTrue();
        for (size_t i = 0; i < spatial; ++i) {
            const WindowDimension& w = g.window[i];
            const Tap tap =
                windowTap(m_b, w, g.inSpatialSizes[i],
                          out[static_cast<size_t>(dn.outputSpatialDimensions[i])], win[i]);
            positions.push_back(tap.position);
            valid = m_b.CreateAnd(valid, tap.valid);
            kernelAt.push_back(w.windowReversal ? m_b.CreateSub(c64(w.size - 1), win[i]) : win[i]);
        }
        return emitIf(
            valid, sum, [&] { return features(positions, kernelAt, sum); }, "conv.tap");
    };
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> result,
                         emitFold(product(sizes), {zero}, windowBody, "conv.window"));
    return m_elemental.convert(accType, outType, result.front());
}

StatusOr<Value*> KernelGen::genSelectAndScatter(const HloInstruction& selectAndScatter,
                                                const Index& index) {
    const HloComputation* select = selectAndScatter.calledComputation("select");
    const HloComputation* scatter = selectAndScatter.calledComputation("scatter");
    if (!select || !scatter || selectAndScatter.operandCount() != 3)
        return unsupportedAt(selectAndScatter,
                             "select-and-scatter needs select=, scatter= and three operands");
    const HloInstruction& operand = *selectAndScatter.operand(0);
    const HloInstruction& source = *selectAndScatter.operand(1);
    const std::vector<int64_t>& inDims = operand.shape().dimensions();
    const std::vector<int64_t>& sourceDims = source.shape().dimensions();
    if (sourceDims.size() != inDims.size() || index.dims != inDims ||
        !selectAndScatter.operand(2)->shape().isScalar())
        return unsupportedAt(selectAndScatter, "select-and-scatter shapes do not match");
    HLO_ASSIGN_OR_RETURN(std::vector<WindowDimension> window,
                         windowOf(selectAndScatter, static_cast<int64_t>(inDims.size())));
    std::vector<int64_t> sizes;
    for (const WindowDimension& w : window) sizes.push_back(w.size);
    HLO_ASSIGN_OR_RETURN(Value * init, gen(*selectAndScatter.operand(2), scalarIndex()));
    const size_t rank = inDims.size();
    const std::vector<Value*> here = multiAll(index);
    // Per dimension, the source positions whose window can reach this
    // element: s * stride in [p + low - (size - 1) * dilation, p + low]
    // (p: the element's position in the base-dilated input), at most `span`.
    std::vector<Value*> first;
    std::vector<int64_t> spans;
    for (size_t d = 0; d < rank; ++d) {
        const WindowDimension& w = window[d];
        Value* reach =
            m_b.CreateAdd(m_b.CreateMul(here[d], c64(w.baseDilation)), c64(w.paddingLow));
        Value* lowest =
            m_b.CreateSub(reach, c64(std::max<int64_t>(w.size - 1, 0) * w.windowDilation));
        first.push_back(m_b.CreateNeg(floorDiv(m_b, m_b.CreateNeg(lowest), w.stride)));  // ceil
        spans.push_back(std::max<int64_t>(w.size - 1, 0) * w.windowDilation / w.stride + 1);
    }
    llvm::Type* valueType = m_elemental.registerType(operand.shape().elementType());
    auto candidate = [&](Value* j,
                         const std::vector<Value*>& acc) -> StatusOr<std::vector<Value*>> {
        const std::vector<Value*> step = unflatten(j, spans);
        std::vector<Value*> s;
        Value* inRange = m_b.getTrue();
        for (size_t d = 0; d < rank; ++d) {
            Value* position = m_b.CreateAdd(first[d], step[d]);
            inRange = m_b.CreateAnd(inRange,
                                    m_b.CreateAnd(m_b.CreateICmpSGE(position, c64(0)),
                                                  m_b.CreateICmpSLT(position, c64(sourceDims[d]))));
            s.push_back(m_b.CreateSelect(inRange, position, c64(0)));
        }
        return emitIf(
            inRange, acc,
            [&]() -> StatusOr<std::vector<Value*>> {
                // The window's selection: [have, value, position per dimension].
                std::vector<Value*> initial = {m_b.getFalse(),
                                               llvm::Constant::getNullValue(valueType)};
                for (size_t d = 0; d < rank; ++d) initial.push_back(c64(0));
                auto choose =
                    [&](Value* k,
                        const std::vector<Value*>& chosen) -> StatusOr<std::vector<Value*>> {
                    const std::vector<Value*> win = unflatten(k, sizes);
                    Index at = makeIndex(inDims);
                    Value* valid = m_b.getTrue();
                    for (size_t d = 0; d < rank; ++d) {
                        const Tap tap = windowTap(m_b, window[d], inDims[d], s[d], win[d]);
                        at.multi.push_back(tap.position);
                        valid = m_b.CreateAnd(valid, tap.valid);
                    }
                    if (rank == 0) at.linear = c64(0);
                    return emitIf(
                        valid, chosen,
                        [&]() -> StatusOr<std::vector<Value*>> {
                            HLO_ASSIGN_OR_RETURN(Value * x, gen(operand, at));
                            HLO_ASSIGN_OR_RETURN(std::vector<Value*> keep,
                                                 callScalar(*select, {chosen[1], x}, false));
                            Value* take =
                                m_b.CreateOr(m_b.CreateNot(chosen[0]), m_b.CreateNot(keep.front()));
                            std::vector<Value*> next = {m_b.getTrue(),
                                                        m_b.CreateSelect(take, x, chosen[1])};
                            for (size_t d = 0; d < rank; ++d)
                                next.push_back(m_b.CreateSelect(take, at.multi[d], chosen[2 + d]));
                            return next;
                        },
                        "select.tap");
                };
                HLO_ASSIGN_OR_RETURN(std::vector<Value*> chosen,
                                     emitFold(product(sizes), initial, choose, "select"));
                Value* selectsHere = chosen[0];
                for (size_t d = 0; d < rank; ++d)
                    selectsHere =
                        m_b.CreateAnd(selectsHere, m_b.CreateICmpEQ(chosen[2 + d], here[d]));
                return emitIf(
                    selectsHere, acc,
                    [&]() -> StatusOr<std::vector<Value*>> {
                        Index from = makeIndex(sourceDims);
                        from.multi = s;
                        if (rank == 0) from.linear = c64(0);
                        HLO_ASSIGN_OR_RETURN(Value * value, gen(source, from));
                        return callScalar(*scatter, {value, acc[0]}, false);
                    },
                    "scatter");
            },
            "candidate");
    };
    HLO_ASSIGN_OR_RETURN(std::vector<Value*> result,
                         emitFold(product(spans), {init}, candidate, "sources"));
    return result.front();
}

}  // namespace hloscope::llvm_codegen
