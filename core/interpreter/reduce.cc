// Evaluator family: reduce, reduce-window, select-and-scatter (this file),
// scan, gather, scatter (gather.cc), sort, topk (sort.cc).
//
// Order follows XLA's evaluator: outputs in row-major order; for each, the
// reduced (or window) elements in row-major order, folded as
// acc = to_apply(acc..., element...). Reducers that are a single add /
// multiply / maximum / minimum / and / or / xor of their two parameters run
// natively; floating-point add reductions accumulate in double in chunks of
// 512 elements (XLA's fast path), everything else calls the computation per
// element.
#include <algorithm>
#include <complex>
#include <string>

#include "core/interpreter/ops_internal.h"
#include "core/ir/scan.h"

namespace hloscope::evaluator {

StatusOr<Literal> evaluateReduction(const HloInstruction& instruction, Operands operands,
                                    EvalContext& context) {
    switch (instruction.opcode()) {
        case HloOpcode::kReduce:
            return evaluateReduce(instruction, operands, context);
        case HloOpcode::kReduceWindow:
            return evaluateReduceWindow(instruction, operands, context);
        case HloOpcode::kSelectAndScatter:
            return evaluateSelectAndScatter(instruction, operands, context);
        case HloOpcode::kSort:
            return evaluateSort(instruction, operands, context);
        case HloOpcode::kGather:
            return evaluateGather(instruction, operands);
        case HloOpcode::kScatter:
            return evaluateScatter(instruction, operands, context);
        case HloOpcode::kTopK:
            return evaluateTopK(instruction, operands);
        case HloOpcode::kScan:
            return evaluateScan(instruction, operands, context);
        case HloOpcode::kBatchNormTraining:
        case HloOpcode::kBatchNormInference:
        case HloOpcode::kBatchNormGrad:
            return evaluateBatchNorm(instruction, operands);
        default:
            break;
    }
    return unsupported(instruction, std::string(hloOpcodeString(instruction.opcode())) +
                                        " is not a reduction operation");
}

namespace {

// Strided loops over a set of dimensions in row-major order. Adjacent
// dimensions that are contiguous in memory are merged.
struct StridedLoop {
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;

    void add(int64_t size, int64_t stride) {
        if (size == 1) return;
        if (!sizes.empty() && strides.back() == stride * size && sizes.back() != 0) {
            sizes.back() *= size;
            strides.back() = stride;
            return;
        }
        sizes.push_back(size);
        strides.push_back(stride);
    }
    int64_t count() const { return elementProduct(sizes); }

    // Calls f(offset) for every position in row-major order; stops early
    // when f returns false. Returns false when stopped.
    template <typename F>
    bool run(int64_t base, F&& f) const {
        if (sizes.empty()) return f(base);
        if (count() == 0) return true;
        const size_t outer = sizes.size() - 1;
        const int64_t inner = sizes.back();
        const int64_t innerStride = strides.back();
        std::vector<int64_t> index(outer, 0);
        int64_t offset = base;
        while (true) {
            for (int64_t j = 0; j < inner; ++j)
                if (!f(offset + j * innerStride)) return false;
            size_t i = outer;
            while (i > 0) {
                --i;
                offset += strides[i];
                if (++index[i] < sizes[i]) break;
                offset -= strides[i] * sizes[i];
                index[i] = 0;
                if (i == 0) return true;
            }
            if (outer == 0) return true;
        }
    }
};

template <typename T>
double toDouble(T v) {
    if constexpr (kIsNarrowFloat<T>)
        return static_cast<double>(toFloat(v));
    else
        return static_cast<double>(v);
}

// XLA's SetFromDouble: narrow floats convert through float.
template <typename T>
T fromDouble(double v) {
    if constexpr (kIsNarrowFloat<T>)
        return fromFloat<NarrowFloatTraits<T>::kType>(static_cast<float>(v));
    else
        return static_cast<T>(v);
}

// One native reduction step acc = op(acc, x) (or op(x, acc) when swapped).
template <typename T>
T reduceStep(BinaryComputation op, T acc, T x) {
    if constexpr (kIsNarrowFloat<T>) {
        const float a = toFloat(acc), b = toFloat(x);
        return fromFloat<NarrowFloatTraits<T>::kType>(op.swapped ? applyBinary(op.kind, b, a)
                                                                 : applyBinary(op.kind, a, b));
    } else {
        return op.swapped ? applyBinary(op.kind, x, acc) : applyBinary(op.kind, acc, x);
    }
}

// Reduction of one input with a recognised binary reducer.
template <PrimitiveType kType>
void nativeReduce(BinaryComputation op, const Literal& input, const Literal& init,
                  const StridedLoop& kept, const StridedLoop& reduced, Literal& out) {
    using T = NativeType<kType>;
    const T* x = input.data<T>().data();
    const T initValue = init.data<T>()[0];
    T* y = out.data<T>().data();
    int64_t o = 0;
    if constexpr (std::is_floating_point_v<T> || kIsNarrowFloat<T>) {
        if (op.kind == BinaryKind::kAdd) {
            kept.run(0, [&](int64_t base) {
                double acc = toDouble(initValue);
                double chunk = 0;
                int count = 0;
                reduced.run(base, [&](int64_t offset) {
                    chunk += toDouble(x[offset]);
                    if (++count == 512) {
                        acc += chunk;
                        chunk = 0;
                        count = 0;
                    }
                    return true;
                });
                if (count > 0) acc += chunk;
                y[o++] = fromDouble<T>(acc);
                return true;
            });
            return;
        }
    }
    kept.run(0, [&](int64_t base) {
        T acc = initValue;
        reduced.run(base, [&](int64_t offset) {
            acc = reduceStep(op, acc, x[offset]);
            return true;
        });
        y[o++] = acc;
        return true;
    });
}

Status checkWindowRank(const HloInstruction& instruction, const Window* window, int64_t rank) {
    if (window == nullptr) {
        if (rank == 0) return Status::ok();
        return invalid(instruction, "missing window");
    }
    if (static_cast<int64_t>(window->dimensions.size()) != rank)
        return invalid(instruction, "window rank differs from the operand rank");
    for (const WindowDimension& w : window->dimensions)
        if (w.size < 0 || w.stride < 1 || w.windowDilation < 1 || w.baseDilation < 1)
            return invalid(instruction, "window sizes, strides and dilations must be positive");
    return Status::ok();
}

// Input coordinate of window element `win` for output position `out`, or -1
// (padding / base dilation hole / out of range).
int64_t windowInput(const WindowDimension& w, int64_t inSize, int64_t out, int64_t win) {
    int64_t pos = out * w.stride + win * w.windowDilation - w.paddingLow;
    if (pos % w.baseDilation != 0) return -1;
    pos /= w.baseDilation;
    return (pos >= 0 && pos < inSize) ? pos : -1;
}

// Lists, for one output position, the linear input offsets its window
// covers (row-major window order, invalid positions skipped).
class WindowWalker {
public:
    WindowWalker(const Window* window, std::span<const int64_t> inDims)
        : m_inDims(inDims.begin(), inDims.end()), m_inStrides(rowMajorStrides(inDims)) {
        for (size_t i = 0; i < m_inDims.size(); ++i) {
            WindowDimension w;
            if (window != nullptr) w = window->dimensions[i];
            m_window.push_back(w);
            m_sizes.push_back(w.size);
        }
    }
    void offsets(std::span<const int64_t> outIndex, std::vector<int64_t>& result) {
        result.clear();
        if (elementProduct(m_sizes) == 0) return;
        const size_t rank = m_inDims.size();
        // Per-dimension valid (window index -> input offset) lists.
        m_perDim.resize(rank);
        for (size_t i = 0; i < rank; ++i) {
            m_perDim[i].clear();
            for (int64_t k = 0; k < m_sizes[i]; ++k) {
                const int64_t pos = windowInput(m_window[i], m_inDims[i], outIndex[i], k);
                if (pos >= 0) m_perDim[i].push_back(pos * m_inStrides[i]);
            }
            if (m_perDim[i].empty()) return;
        }
        m_index.assign(rank, 0);
        while (true) {
            int64_t offset = 0;
            for (size_t i = 0; i < rank; ++i) offset += m_perDim[i][m_index[i]];
            result.push_back(offset);
            size_t i = rank;
            while (i > 0) {
                --i;
                if (++m_index[i] < m_perDim[i].size()) break;
                m_index[i] = 0;
                if (i == 0) return;
            }
            if (rank == 0) return;
        }
    }

private:
    std::vector<int64_t> m_inDims;
    std::vector<int64_t> m_inStrides;
    std::vector<WindowDimension> m_window;
    std::vector<int64_t> m_sizes;
    std::vector<std::vector<int64_t>> m_perDim;  // scratch
    std::vector<size_t> m_index;                 // scratch
};

// Shapes of a variadic result: the array shape itself (one operand) or the
// tuple's elements.
StatusOr<std::vector<Shape>> resultShapes(const HloInstruction& instruction, size_t count) {
    const Shape& shape = instruction.shape();
    if (count == 1 && shape.isArray()) return std::vector<Shape>{shape};
    if (!shape.isTuple() || static_cast<size_t>(shape.tupleCount()) != count)
        return invalid(instruction, "result shape " + shape.toString(false) + " does not have " +
                                        std::to_string(count) + " element(s)");
    for (const Shape& element : shape.tupleShapes())
        if (!element.isArray()) return invalid(instruction, "result elements must be arrays");
    return shape.tupleShapes();
}

Literal packResults(std::vector<Literal> results, bool tuple) {
    if (!tuple) return std::move(results[0]);
    return Literal::makeTuple(std::move(results));
}

// Generic fold of N inputs with the computation: accumulators are the first
// N arguments, elements the next N.
class VariadicFold {
public:
    VariadicFold(EvalContext& context, const HloInstruction& instruction,
                 const HloComputation& computation, Operands inputs, Operands inits)
        : m_inputs(inputs),
          m_inits(inits),
          m_caller(context, instruction, computation, argumentTypes(inputs, inits),
                   typesOf(inits)) {
        for (const Literal* input : inputs)
            m_inputBytes.push_back(elementBytes(input->elementType()));
    }
    void start() {
        for (size_t i = 0; i < m_inits.size(); ++i)
            m_caller.setArgument(i, m_inits[i]->untypedData());
    }
    Status step(int64_t offset) {
        const size_t n = m_inputs.size();
        for (size_t i = 0; i < n; ++i)
            m_caller.setArgument(n + i, static_cast<const uint8_t*>(m_inputs[i]->untypedData()) +
                                            offset * m_inputBytes[i]);
        HLO_RETURN_IF_ERROR(m_caller.call());
        for (size_t i = 0; i < n; ++i) m_caller.setArgument(i, m_caller.result(i));
        return Status::ok();
    }
    // Stores the accumulators into element `o` of each result.
    void finish(std::vector<Literal>& results, int64_t o) {
        for (size_t i = 0; i < results.size(); ++i) {
            const int64_t bytes = elementBytes(results[i].elementType());
            std::memcpy(static_cast<uint8_t*>(results[i].untypedData()) + o * bytes,
                        m_caller.argument(i), static_cast<size_t>(bytes));
        }
    }

private:
    static std::vector<PrimitiveType> typesOf(Operands literals) {
        std::vector<PrimitiveType> types;
        for (const Literal* literal : literals) types.push_back(literal->elementType());
        return types;
    }
    static std::vector<PrimitiveType> argumentTypes(Operands inputs, Operands inits) {
        std::vector<PrimitiveType> types = typesOf(inits);
        for (const Literal* input : inputs) types.push_back(input->elementType());
        return types;
    }
    Operands m_inputs;
    Operands m_inits;
    ScalarCaller m_caller;
    std::vector<int64_t> m_inputBytes;
};

Status checkVariadicOperands(const HloInstruction& instruction, Operands operands, size_t& count) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, -1));
    if (operands.empty() || operands.size() % 2 != 0)
        return invalid(instruction, "expects N inputs and N init values");
    count = operands.size() / 2;
    const Shape& first = operands[0]->shape();
    for (size_t i = 0; i < count; ++i) {
        if (operands[i]->shape().dimensions() != first.dimensions())
            return invalid(instruction, "inputs have different dimensions");
        if (!operands[count + i]->shape().isScalar())
            return invalid(instruction, "init values must be scalars");
    }
    return Status::ok();
}

}  // namespace

StatusOr<Literal> evaluateReduce(const HloInstruction& instruction, Operands operands,
                                 EvalContext& context) {
    size_t n = 0;
    HLO_RETURN_IF_ERROR(checkVariadicOperands(instruction, operands, n));
    const HloComputation* computation = instruction.toApply();
    if (computation == nullptr) return invalid(instruction, "reduce without to_apply");
    const std::vector<int64_t>& inDims = operands[0]->shape().dimensions();
    const int64_t rank = static_cast<int64_t>(inDims.size());
    std::vector<bool> reducedDim(inDims.size(), false);
    for (int64_t d : instruction.dimensions()) {
        if (d < 0 || d >= rank || reducedDim[static_cast<size_t>(d)])
            return invalid(instruction, "bad reduce dimension " + std::to_string(d));
        reducedDim[static_cast<size_t>(d)] = true;
    }
    const std::vector<int64_t> strides = rowMajorStrides(inDims);
    StridedLoop kept, reduced;
    std::vector<int64_t> outDims;
    for (size_t d = 0; d < inDims.size(); ++d) {
        if (reducedDim[d]) {
            reduced.add(inDims[d], strides[d]);
        } else {
            kept.add(inDims[d], strides[d]);
            outDims.push_back(inDims[d]);
        }
    }
    HLO_ASSIGN_OR_RETURN(std::vector<Shape> shapes, resultShapes(instruction, n));
    std::vector<Literal> results;
    for (size_t i = 0; i < n; ++i) {
        if (shapes[i].dimensions() != outDims ||
            shapes[i].elementType() != operands[n + i]->elementType())
            return invalid(instruction, "result shape " + shapes[i].toString(false) +
                                            " does not match the reduction");
        results.emplace_back(shapes[i]);
    }
    const bool tuple = instruction.shape().isTuple();

    const PrimitiveType type = operands[0]->elementType();
    if (n == 1 && operands[1]->elementType() == type) {
        if (std::optional<BinaryComputation> op = recognizeBinaryComputation(*computation, type)) {
            dispatchPrimitiveType(type, [&]<PrimitiveType kType>() {
                nativeReduce<kType>(*op, *operands[0], *operands[1], kept, reduced, results[0]);
            });
            return packResults(std::move(results), tuple);
        }
    }
    VariadicFold fold(context, instruction, *computation, operands.first(n), operands.subspan(n));
    Status status;
    int64_t o = 0;
    kept.run(0, [&](int64_t base) {
        fold.start();
        reduced.run(base, [&](int64_t offset) {
            status = fold.step(offset);
            return status.isOk();
        });
        if (!status.isOk()) return false;
        fold.finish(results, o++);
        return true;
    });
    HLO_RETURN_IF_ERROR(status);
    return packResults(std::move(results), tuple);
}

StatusOr<Literal> evaluateReduceWindow(const HloInstruction& instruction, Operands operands,
                                       EvalContext& context) {
    size_t n = 0;
    HLO_RETURN_IF_ERROR(checkVariadicOperands(instruction, operands, n));
    const HloComputation* computation = instruction.toApply();
    if (computation == nullptr) return invalid(instruction, "reduce-window without to_apply");
    const std::vector<int64_t>& inDims = operands[0]->shape().dimensions();
    const Window* window = instruction.window();
    HLO_RETURN_IF_ERROR(checkWindowRank(instruction, window, static_cast<int64_t>(inDims.size())));
    HLO_ASSIGN_OR_RETURN(std::vector<Shape> shapes, resultShapes(instruction, n));
    std::vector<Literal> results;
    for (size_t i = 0; i < n; ++i) {
        if (shapes[i].rank() != static_cast<int64_t>(inDims.size()) ||
            shapes[i].dimensions() != shapes[0].dimensions() ||
            shapes[i].elementType() != operands[n + i]->elementType())
            return invalid(instruction, "result shape " + shapes[i].toString(false) +
                                            " does not match the reduce-window");
        results.emplace_back(shapes[i]);
    }
    const bool tuple = instruction.shape().isTuple();
    const std::vector<int64_t>& outDims = shapes[0].dimensions();
    const int64_t outCount = elementProduct(outDims);
    WindowWalker walker(window, inDims);
    std::vector<int64_t> outIndex(outDims.size(), 0);
    std::vector<int64_t> offsets;

    const PrimitiveType type = operands[0]->elementType();
    if (n == 1 && operands[1]->elementType() == type) {
        if (std::optional<BinaryComputation> op = recognizeBinaryComputation(*computation, type)) {
            dispatchPrimitiveType(type, [&]<PrimitiveType kType>() {
                using T = NativeType<kType>;
                const T* x = operands[0]->data<T>().data();
                const T init = operands[1]->data<T>()[0];
                T* y = results[0].data<T>().data();
                for (int64_t o = 0; o < outCount; ++o, nextIndex(outIndex, outDims)) {
                    walker.offsets(outIndex, offsets);
                    T acc = init;
                    for (int64_t offset : offsets) acc = reduceStep(*op, acc, x[offset]);
                    y[o] = acc;
                }
            });
            return packResults(std::move(results), tuple);
        }
    }
    VariadicFold fold(context, instruction, *computation, operands.first(n), operands.subspan(n));
    for (int64_t o = 0; o < outCount; ++o, nextIndex(outIndex, outDims)) {
        walker.offsets(outIndex, offsets);
        fold.start();
        for (int64_t offset : offsets) HLO_RETURN_IF_ERROR(fold.step(offset));
        fold.finish(results, o);
    }
    return packResults(std::move(results), tuple);
}

StatusOr<Literal> evaluateSelectAndScatter(const HloInstruction& instruction, Operands operands,
                                           EvalContext& context) {
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, 3));
    const Literal& operand = *operands[0];
    const Literal& source = *operands[1];
    const Literal& init = *operands[2];
    const HloComputation* select = instruction.calledComputation("select");
    const HloComputation* scatter = instruction.calledComputation("scatter");
    if (select == nullptr || scatter == nullptr)
        return invalid(instruction, "select-and-scatter needs select= and scatter=");
    const PrimitiveType type = operand.elementType();
    if (!init.shape().isScalar() || init.elementType() != type || source.elementType() != type)
        return invalid(instruction, "source and init value must have the operand's type");
    const Shape& outShape = instruction.shape();
    if (!outShape.isArray() || outShape.dimensions() != operand.shape().dimensions() ||
        outShape.elementType() != type)
        return invalid(instruction, "result shape must equal the operand shape");
    const std::vector<int64_t>& inDims = operand.shape().dimensions();
    const std::vector<int64_t>& srcDims = source.shape().dimensions();
    if (srcDims.size() != inDims.size())
        return invalid(instruction, "source rank differs from the operand rank");
    const Window* window = instruction.window();
    HLO_RETURN_IF_ERROR(checkWindowRank(instruction, window, static_cast<int64_t>(inDims.size())));

    Literal result(outShape);
    const int64_t bytes = elementBytes(type);
    {
        uint8_t* dst = static_cast<uint8_t*>(result.untypedData());
        const void* value = init.untypedData();
        for (int64_t i = 0; i < result.elementCount(); ++i)
            std::memcpy(dst + i * bytes, value, static_cast<size_t>(bytes));
    }
    WindowWalker walker(window, inDims);
    std::vector<int64_t> srcIndex(srcDims.size(), 0);
    std::vector<int64_t> offsets;
    const int64_t srcCount = elementProduct(srcDims);
    const uint8_t* in = static_cast<const uint8_t*>(operand.untypedData());
    const uint8_t* src = static_cast<const uint8_t*>(source.untypedData());

    std::optional<CompareComputation> selectOp =
        recognizeCompareComputation(*select, 2, 0, 1, type);
    std::optional<BinaryComputation> scatterOp = recognizeBinaryComputation(*scatter, type);
    CompareKeys keys;
    if (selectOp) keys = compareKeys(operand, selectOp->totalOrder);
    // select(a, b): true keeps the current selection a.
    auto nativeSelect = [&](int64_t a, int64_t b) {
        const ComparisonDirection d = selectOp->direction;
        const int64_t l = selectOp->swapped ? b : a;
        const int64_t r = selectOp->swapped ? a : b;
        return keys.useDouble ? compareWith(d, keys.doubles[static_cast<size_t>(l)],
                                            keys.doubles[static_cast<size_t>(r)])
                              : compareWith(d, keys.ints[static_cast<size_t>(l)],
                                            keys.ints[static_cast<size_t>(r)]);
    };
    std::optional<ScalarCaller> selectCaller, scatterCaller;
    if (!selectOp)
        selectCaller.emplace(context, instruction, *select, std::vector{type, type},
                             std::vector{PrimitiveType::PRED});
    if (!scatterOp)
        scatterCaller.emplace(context, instruction, *scatter, std::vector{type, type},
                              std::vector{type});

    uint8_t* out = static_cast<uint8_t*>(result.untypedData());
    for (int64_t s = 0; s < srcCount; ++s, nextIndex(srcIndex, srcDims)) {
        walker.offsets(srcIndex, offsets);
        if (offsets.empty()) continue;
        int64_t selected = offsets[0];
        for (size_t i = 1; i < offsets.size(); ++i) {
            bool keep;
            if (selectOp) {
                keep = nativeSelect(selected, offsets[i]);
            } else {
                selectCaller->setArgument(0, in + selected * bytes);
                selectCaller->setArgument(1, in + offsets[i] * bytes);
                HLO_RETURN_IF_ERROR(selectCaller->call());
                keep = *static_cast<const bool*>(selectCaller->result(0));
            }
            if (!keep) selected = offsets[i];
        }
        // result[selected] = scatter(source[s], result[selected]).
        if (scatterOp) {
            dispatchPrimitiveType(type, [&]<PrimitiveType kType>() {
                using T = NativeType<kType>;
                T* y = reinterpret_cast<T*>(out) + selected;
                const T value = reinterpret_cast<const T*>(src)[s];
                *y = reduceStep(*scatterOp, value, *y);
            });
        } else {
            scatterCaller->setArgument(0, src + s * bytes);
            scatterCaller->setArgument(1, out + selected * bytes);
            HLO_RETURN_IF_ERROR(scatterCaller->call());
            std::memcpy(out + selected * bytes, scatterCaller->result(0),
                        static_cast<size_t>(bytes));
        }
    }
    return result;
}

namespace {

// Row `index` along `dimension` of a stacked array, and its inverse: the
// literals are row-major, so each of the `outer` blocks before the dimension
// holds `length` rows of one row's bytes divided by `outer`.
struct RowCopy {
    int64_t outer = 1, length = 0, inner = 0;

    RowCopy(const Shape& stacked, int64_t dimension, int64_t rowBytes) {
        length = stacked.dimensions(dimension);
        for (int64_t d = 0; d < dimension; ++d) outer *= stacked.dimensions(d);
        inner = outer == 0 ? 0 : rowBytes / outer;
    }
    void take(const Literal& stacked, Literal& row, int64_t index) const {
        if (inner == 0) return;
        const auto* from = static_cast<const uint8_t*>(stacked.untypedData());
        auto* to = static_cast<uint8_t*>(row.untypedData());
        for (int64_t o = 0; o < outer; ++o)
            std::memcpy(to + o * inner, from + (o * length + index) * inner,
                        static_cast<size_t>(inner));
    }
    void put(const Literal& row, Literal& stacked, int64_t index) const {
        if (inner == 0) return;
        const auto* from = static_cast<const uint8_t*>(row.untypedData());
        auto* to = static_cast<uint8_t*>(stacked.untypedData());
        for (int64_t o = 0; o < outer; ++o)
            std::memcpy(to + (o * length + index) * inner, from + o * inner,
                        static_cast<size_t>(inner));
    }
};

}  // namespace

StatusOr<Literal> evaluateScan(const HloInstruction& instruction, Operands operands,
                               EvalContext& context) {
    HLO_ASSIGN_OR_RETURN(ScanGeometry g, scanGeometry(instruction));
    std::vector<Literal> slices;
    std::vector<RowCopy> inputRows;
    for (int64_t i = 0; i < g.inputCount; ++i) {
        const Literal& input = *operands[static_cast<size_t>(i)];
        slices.emplace_back(removeDimension(input.shape(), g.dimension));
        inputRows.emplace_back(input.shape(), g.dimension, slices.back().sizeInBytes());
    }
    std::vector<Literal> carries;
    for (int64_t j = 0; j < g.carryCount; ++j)
        carries.push_back(*operands[static_cast<size_t>(g.inputCount + j)]);
    std::vector<Literal> stacked;
    std::vector<RowCopy> outputRows;
    for (const Shape& output : g.outputShapes) {
        stacked.emplace_back(insertDimension(output, g.dimension, g.length));
        outputRows.emplace_back(stacked.back().shape(), g.dimension, Literal(output).sizeInBytes());
    }
    for (int64_t step = 0; step < g.length; ++step) {
        // Step i reads and writes index i; a reverse scan counts down.
        const int64_t index = g.reverse ? g.length - 1 - step : step;
        std::vector<const Literal*> arguments;
        for (size_t i = 0; i < slices.size(); ++i) {
            inputRows[i].take(*operands[i], slices[i], index);
            arguments.push_back(&slices[i]);
        }
        for (const Literal& carry : carries) arguments.push_back(&carry);
        HLO_ASSIGN_OR_RETURN(Literal result, context.call(*instruction.toApply(), arguments));
        std::vector<Literal> values;
        if (g.tupleResult)
            values = std::move(result.mutableTupleElements());
        else
            values.push_back(std::move(result));
        if (static_cast<int64_t>(values.size()) != g.outputCount + g.carryCount)
            return invalid(instruction,
                           "to_apply returned " + std::to_string(values.size()) + " values");
        for (size_t o = 0; o < stacked.size(); ++o) outputRows[o].put(values[o], stacked[o], index);
        for (size_t j = 0; j < carries.size(); ++j)
            carries[j] = std::move(values[stacked.size() + j]);
    }
    std::vector<Literal> results = std::move(stacked);
    for (Literal& carry : carries) results.push_back(std::move(carry));
    if (!g.tupleResult) return std::move(results.front());
    return Literal::makeTuple(std::move(results));
}

}  // namespace hloscope::evaluator
