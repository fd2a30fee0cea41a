// The CPU executable's runtime: thunk sequences executed on the thread
// pool (compilation is in cpu_executable.cc).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>

#include "compiler/backends/cpu/cpu_executable_internal.h"
#include "compiler/runtime/thread_pool.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"

namespace hloscope {
namespace {

using namespace cpu_exec;

void leavesOf(const RtValue& value, std::vector<uint8_t*>& out) {
    if (value.isTuple) {
        for (const RtValue& element : value.elements) leavesOf(element, out);
    } else {
        out.push_back(value.data);
    }
}

// A value over consecutive leaf pointers for `shape`.
RtValue valueOver(const Shape& shape, const std::vector<uint8_t*>& leaves, size_t& next) {
    RtValue value;
    if (shape.isTuple()) {
        value.isTuple = true;
        for (const Shape& element : shape.tupleShapes()) value.elements.push_back(valueOver(element, leaves, next));
    } else {
        value.data = next < leaves.size() ? leaves[next] : nullptr;
        ++next;
    }
    return value;
}

RtValue valueOfLiteral(const Literal& literal) {
    RtValue value;
    if (literal.isTuple()) {
        value.isTuple = true;
        for (const Literal& element : literal.tupleElements()) value.elements.push_back(valueOfLiteral(element));
    } else if (literal.isValid() && literal.shape().isArray()) {
        value.data = static_cast<uint8_t*>(const_cast<void*>(literal.untypedData()));
    }
    return value;
}

Literal literalOfValue(const Shape& shape, const RtValue& value) {
    if (shape.isTuple()) {
        std::vector<Literal> elements;
        for (size_t i = 0; i < shape.tupleShapes().size(); ++i)
            elements.push_back(literalOfValue(shape.tupleShapes()[i],
                                              i < value.elements.size() ? value.elements[i] : RtValue{}));
        return Literal::makeTuple(std::move(elements));
    }
    Literal literal(shape);
    const int64_t bytes = denseBytes(shape);
    if (shape.isArray() && bytes > 0 && value.data) std::memcpy(literal.untypedData(), value.data, static_cast<size_t>(bytes));
    return literal;
}

// Whether `literal` holds what `shape` declares: its tuple structure, and arrays of its element
// types and dimensions (a fallback's value is copied into buffers of the declared sizes).
bool holdsDeclared(const Literal& literal, const Shape& shape) {
    if (shape.isTuple() != literal.isTuple()) return false;
    if (shape.isTuple()) {
        if (literal.tupleElements().size() != shape.tupleShapes().size()) return false;
        for (size_t i = 0; i < shape.tupleShapes().size(); ++i)
            if (!holdsDeclared(literal.tupleElements()[i], shape.tupleShapes()[i])) return false;
        return true;
    }
    return !shape.isArray() || (literal.shape().elementType() == shape.elementType() &&
                                literal.shape().dimensions() == shape.dimensions());
}

// A start index of a dynamic-update-slice (an integer scalar of 1 to 8 bytes).
int64_t readIndex(const Shape& shape, const uint8_t* data) {
    if (!data) return 0;
    const bool isSigned = primitive_util::isSignedInteger(shape.elementType());
    switch (primitive_util::byteWidth(shape.elementType())) {
        case 1:
            return isSigned ? int64_t{*reinterpret_cast<const int8_t*>(data)} : int64_t{*data};
        case 2: {
            uint16_t v;
            std::memcpy(&v, data, 2);
            return isSigned ? int64_t{static_cast<int16_t>(v)} : int64_t{v};
        }
        case 4: {
            uint32_t v;
            std::memcpy(&v, data, 4);
            return isSigned ? int64_t{static_cast<int32_t>(v)} : int64_t{v};
        }
        default: {
            int64_t v;
            std::memcpy(&v, data, 8);
            return v;
        }
    }
}

// dynamic-update-slice into `target` (the operand's storage, row-major): the update's rows
// copied at the start indices (`startOf(d)`: dimension d's start, as stored), each clamped so
// the update fits, as the operation defines. Runs every step of a loop: no allocation.
template <typename StartOf>
void updateInPlace(const HloInstruction& instruction, uint8_t* target, const uint8_t* piece,
                   const StartOf& startOf) {
    const Shape& shape = instruction.shape();
    const Shape& update = instruction.operand(1)->shape();
    const int64_t rank = shape.rank();
    const auto width = static_cast<int64_t>(primitive_util::byteWidth(shape.elementType()));
    if (update.elementCount() <= 0 || !target || !piece) return;
    // The update's first element in the target.
    int64_t base = 0;
    for (int64_t d = rank - 1, stride = width; d >= 0; stride *= shape.dimensions(d), --d) {
        const int64_t limit = std::max<int64_t>(shape.dimensions(d) - update.dimensions(d), 0);
        base += std::clamp<int64_t>(readIndex(instruction.operand(2 + d)->shape(), startOf(d)), 0,
                                    limit) *
                stride;
    }
    if (rank == 0) {
        std::memcpy(target, piece, static_cast<size_t>(width));
        return;
    }
    // Row r of the update (its minor dimension) lands at base plus r's index in the other
    // dimensions times the target's strides.
    const int64_t rowBytes = update.dimensions(rank - 1) * width;
    const int64_t rows = update.elementCount() / update.dimensions(rank - 1);
    for (int64_t row = 0; row < rows; ++row) {
        int64_t offset = base;
        int64_t rest = row;
        for (int64_t d = rank - 2, stride = shape.dimensions(rank - 1) * width; d >= 0 && rest > 0;
             stride *= shape.dimensions(d), --d) {
            offset += rest % update.dimensions(d) * stride;
            rest /= update.dimensions(d);
        }
        std::memcpy(target + offset, piece + row * rowBytes, static_cast<size_t>(rowBytes));
    }
}

struct RunContext {
    RunContext(const ExecutionOptions& options_, ThreadPool* pool_, const HloEvaluatorOptions& evaluatorOptions)
        : options(options_), pool(pool_), evaluator(evaluatorOptions) {}
    const ExecutionOptions& options;
    ThreadPool* pool;
    HloInstructionEvaluator evaluator;
    InstructionTimes times;  // of the entry's thunks
    int64_t entryTotal = 1;
    double lastProgress = -1;
    bool cancelled() const { return options.cancel && options.cancel->load(std::memory_order_relaxed); }
    int threads() const { return pool ? pool->threadCount() : 1; }
};

// Executes thunk sequences (recursively for control flow).
class Runner {
public:
    Runner(CpuExecutable::Impl& impl, RunContext& context) : m_impl(impl), m_context(context) {}

    Status runProgram(Program& program, const std::vector<RtValue>& parameters);

private:
    Status runThunk(Program& program, size_t slot, const std::vector<RtValue>& parameters);
    // The thunk kinds that run other programs, and the interpreter's fallback; each sets the
    // thunk's value.
    Status runWhile(Program& program, Thunk& thunk, RtValue& value);
    Status runConditional(Program& program, Thunk& thunk, RtValue& value);
    Status runFallback(Program& program, size_t slot, RtValue& value);
    uint8_t* bufferPointer(Program& program, const LeafBuffer& buffer) {
        if (buffer.output >= 0) return m_impl.outputPointers[static_cast<size_t>(buffer.output)];
        return program.arena.get() + buffer.offset;
    }
    RtValue ownValue(Program& program, const Thunk& thunk) {
        std::vector<uint8_t*> leaves;
        for (const LeafBuffer& buffer : thunk.buffers) leaves.push_back(bufferPointer(program, buffer));
        size_t next = 0;
        return valueOver(thunk.instruction->shape(), leaves, next);
    }
    // body(begin, end) over [0, n): on this thread when `small`, or with
    // one thread; else in chunks of at least `grain` on the pool.
    void forRange(int64_t n, int64_t grain, bool small, const std::function<void(int64_t, int64_t)>& body) {
        if (small || !m_context.pool || m_context.threads() == 1) body(0, n);
        else m_context.pool->parallelFor(n, grain, body);
    }
    // A kernel over all n output elements (each reducing `reduced`), in
    // parallel above ~32K elements of work.
    void runElements(CpuKernelFunction kernel, void* const* pointers, int64_t n, int64_t reduced) {
        const double work = static_cast<double>(n) * static_cast<double>(reduced);
        forRange(n, std::max<int64_t>(1, 16384 / reduced), work < static_cast<double>(kCpuParallelMinWork),
                 [&](int64_t begin, int64_t end) { kernel(pointers, begin, end, 0, reduced); });
    }
    // The kernel's buffer table: its outputs, then its leaves (null for an
    // epilogue's dot, which the caller fills in).
    std::vector<void*> kernelPointers(Program& program, const Thunk& thunk) {
        std::vector<void*> pointers;
        for (const LeafBuffer& buffer : thunk.buffers) pointers.push_back(bufferPointer(program, buffer));
        for (int operand : thunk.leafOperands)
            pointers.push_back(operand < 0 ? nullptr
                                           : program.values[static_cast<size_t>(thunk.operands[static_cast<size_t>(operand)])].data);
        return pointers;
    }
    void runKernel(Program& program, Thunk& thunk);
    // kUpdateInPlace of a fusion: its update (computed by its kernel part, or an operand)
    // written into `target` at its starts.
    void runFusedUpdate(Program& program, const Thunk& thunk, uint8_t* target);
    // One kernel (a thunk's own, or one of its parts) over its buffer table.
    void runKernelOn(const Thunk& thunk, const std::vector<void*>& pointers);
    void runGemmEpilogue(Program& program, Thunk& thunk);
    void runConvolutionEpilogue(Program& program, Thunk& thunk);
    // kSort: the lines in parallel, from copies of the operands where an output shares their storage.
    void runSortThunk(Program& program, const Thunk& thunk, RtValue& value);
    // kScatter: the operand into the output (unless it is the output's storage), then the updates.
    void runScatterThunk(const Thunk& thunk, const uint8_t* operand, const uint8_t* indices,
                         const uint8_t* updates, uint8_t* result);
    // The GEMM's lhs and rhs: the operands, or their permuted copies (the
    // transpose kernels run here).
    struct GemmSides {
        const void* lhs;
        const void* rhs;
    };
    GemmSides gemmSides(Program& program, const Thunk& thunk) {
        const void* sides[2];
        for (int side = 0; side < 2; ++side) {
            sides[side] = program.values[static_cast<size_t>(thunk.gemmOperands[static_cast<size_t>(side)])].data;
            if (!thunk.permute[side]) continue;
            uint8_t* target = program.arena.get() + thunk.permuted[side].offset;
            void* buffers[2] = {target, const_cast<void*>(sides[side])};
            runElements(thunk.permute[side], buffers, thunk.permutedElements[side], 1);
            sides[side] = target;
        }
        return {sides[0], sides[1]};
    }
    // Copies `from` into the leaves of `to` (same shape). A source that is
    // another leaf of `to` (a loop body swapping state elements) is staged
    // first so no copy reads what an earlier one overwrote.
    static void copyValue(const Shape& shape, const RtValue& from, const RtValue& to) {
        std::vector<uint8_t*> a, b;
        leavesOf(from, a);
        leavesOf(to, b);
        std::vector<const Shape*> shapes;
        collectLeaves(shape, shapes);
        const size_t count = std::min({shapes.size(), a.size(), b.size()});
        bool crossed = false;
        for (size_t i = 0; i < count && !crossed; ++i)
            for (size_t j = 0; j < count; ++j)
                if (j != i && a[i] && a[i] == b[j]) crossed = true;
        std::vector<std::vector<uint8_t>> staged;
        if (crossed)
            for (size_t i = 0; i < count; ++i) {
                const auto bytes = static_cast<size_t>(denseBytes(*shapes[i]));
                staged.emplace_back(a[i] ? a[i] : nullptr, a[i] ? a[i] + bytes : nullptr);
                a[i] = staged.back().empty() ? a[i] : staged.back().data();
            }
        for (size_t i = 0; i < count; ++i)
            if (a[i] != b[i] && a[i] && b[i]) std::memcpy(b[i], a[i], static_cast<size_t>(denseBytes(*shapes[i])));
    }
    uint8_t* scratch(size_t index, int64_t bytes) {
        if (m_impl.scratch.size() <= index) {
            m_impl.scratch.resize(index + 1);
            m_impl.scratchBytes.resize(index + 1, 0);
        }
        if (m_impl.scratchBytes[index] < bytes) {
            m_impl.scratch[index].reset(new uint8_t[static_cast<size_t>(bytes)]);
            m_impl.scratchBytes[index] = bytes;
        }
        return m_impl.scratch[index].get();
    }

    CpuExecutable::Impl& m_impl;
    RunContext& m_context;
};

namespace {

// An output's storage: where it starts and how many bytes it has.
struct Storage {
    uint8_t* data;
    int64_t bytes;
};

// `input` (`bytes` long) as a thunk writing `outputs` reads it: a copy (kept in `copies`) where
// buffer assignment gave an output storage that overlaps it, else `input` itself.
const uint8_t* unaliased(const uint8_t* input, int64_t bytes, const std::vector<Storage>& outputs,
                         std::deque<std::vector<uint8_t>>& copies) {
    for (const Storage& output : outputs)
        if (input < output.data + output.bytes && output.data < input + bytes)
            return copies.emplace_back(input, input + bytes).data();
    return input;
}

}  // namespace

void Runner::runSortThunk(Program& program, const Thunk& thunk, RtValue& value) {
    const HloInstruction& sort = *thunk.instruction;
    const NativeSortPlan& plan = *thunk.sort;
    std::vector<uint8_t*> results;
    std::vector<Storage> outputs;
    const auto addResult = [&](uint8_t* data, const Shape& shape) {
        results.push_back(data);
        outputs.push_back({data, denseBytes(shape)});
    };
    if (value.isTuple)
        for (size_t i = 0; i < value.elements.size(); ++i)
            addResult(value.elements[i].data, sort.shape().tupleShape(static_cast<int64_t>(i)));
    else
        addResult(value.data, sort.shape());
    std::vector<const uint8_t*> operands;
    std::deque<std::vector<uint8_t>> copies;
    for (size_t i = 0; i < thunk.operands.size(); ++i)
        operands.push_back(unaliased(program.values[static_cast<size_t>(thunk.operands[i])].data,
                                     denseBytes(sort.operand(static_cast<int64_t>(i))->shape()), outputs, copies));
    const double work = static_cast<double>(plan.lines) * static_cast<double>(plan.length);
    forRange(plan.lines, 1, work < 32768.0,
             [&](int64_t begin, int64_t end) { sortLines(plan, operands, results, begin, end); });
}

void Runner::runScatterThunk(const Thunk& thunk, const uint8_t* operand, const uint8_t* indices,
                             const uint8_t* updates, uint8_t* result) {
    const HloInstruction& scatter = *thunk.instruction;
    const std::vector<Storage> outputs{{result, denseBytes(scatter.shape())}};
    std::deque<std::vector<uint8_t>> copies;
    indices = unaliased(indices, denseBytes(scatter.operand(1)->shape()), outputs, copies);
    updates = unaliased(updates, denseBytes(scatter.operand(2)->shape()), outputs, copies);
    // The operand may be the output's own storage: the scatter then updates it in place.
    if (operand != result) std::memmove(result, operand, static_cast<size_t>(outputs[0].bytes));
    runNativeScatter(*thunk.scatter, indices, updates, result);
}

void Runner::runFusedUpdate(Program& program, const Thunk& thunk, uint8_t* target) {
    const auto operandData = [&](int operand) -> uint8_t* {
        return program.values[static_cast<size_t>(thunk.operands[static_cast<size_t>(operand)])].data;
    };
    const uint8_t* piece = nullptr;
    if (thunk.parts.empty()) {
        piece = operandData(thunk.updateOperand);
    } else {
        uint8_t* out = program.arena.get() + thunk.scratch.offset;
        std::vector<void*> pointers = {out};
        for (size_t i = 0; i < thunk.operands.size(); ++i) pointers.push_back(operandData(static_cast<int>(i)));
        runKernelOn(thunk.parts.front(), pointers);
        piece = out;
    }
    updateInPlace(*thunk.fusedUpdate, target, piece, [&](int64_t d) -> const uint8_t* {
        const int operand = thunk.startOperands[static_cast<size_t>(d)];
        return operand >= 0 ? operandData(operand)
                            : static_cast<const uint8_t*>(thunk.startConstants[static_cast<size_t>(d)].untypedData());
    });
}

void Runner::runKernel(Program& program, Thunk& thunk) {
    const std::vector<void*> pointers = kernelPointers(program, thunk);
    if (thunk.parts.empty()) {
        runKernelOn(thunk, pointers);
        return;
    }
    const size_t outputs = thunk.buffers.size();
    for (const Thunk& part : thunk.parts) {
        std::vector<void*> own;
        for (size_t k : part.partOutputs) own.push_back(pointers[k]);
        own.insert(own.end(), pointers.begin() + static_cast<std::ptrdiff_t>(outputs), pointers.end());
        runKernelOn(part, own);
    }
}

void Runner::runKernelOn(const Thunk& thunk, const std::vector<void*>& pointers) {
    const size_t outputs = thunk.spec.outputs.size();
    const int64_t n = thunk.outputElements;
    const int64_t reduced = std::max<int64_t>(thunk.info.reducedElements, 1);
    if (n == 0) return;
    const int threads = m_context.threads();
    const double work = static_cast<double>(n) * static_cast<double>(reduced);
    if (threads > 1 && work >= static_cast<double>(kCpuParallelMinWork) && thunk.info.splittableReduction && thunk.combine && n < threads &&
        reduced >= 4096) {
        // Split the reduced elements: part 0 into the outputs, the others
        // into scratch, then combine.
        std::vector<std::vector<void*>> parts(static_cast<size_t>(threads), pointers);
        for (int t = 1; t < threads; ++t) {
            int64_t total = 0;
            for (size_t k = 0; k < outputs; ++k) total += alignUp(thunk.outputBytes[k]);
            uint8_t* base = scratch(static_cast<size_t>(t), total);
            int64_t offset = 0;
            for (size_t k = 0; k < outputs; ++k) {
                parts[static_cast<size_t>(t)][k] = base + offset;
                offset += alignUp(thunk.outputBytes[k]);
            }
        }
        m_context.pool->parallelFor(threads, 1, [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t) {
                const int64_t lo = reduced * t / threads, hi = reduced * (t + 1) / threads;
                thunk.kernel(parts[static_cast<size_t>(t)].data(), 0, n, lo, hi);
            }
        });
        for (int t = 1; t < threads; ++t) {
            std::vector<void*> combine(pointers.begin(), pointers.begin() + static_cast<std::ptrdiff_t>(outputs));
            combine.insert(combine.end(), parts[static_cast<size_t>(t)].begin(),
                           parts[static_cast<size_t>(t)].begin() + static_cast<std::ptrdiff_t>(outputs));
            thunk.combine(combine.data(), 0, n);
        }
        return;
    }
    runElements(thunk.kernel, pointers.data(), n, reduced);
}

void Runner::runGemmEpilogue(Program& program, Thunk& thunk) {
    const std::vector<void*> pointers = kernelPointers(program, thunk);
    const GemmPlan& plan = thunk.plan;
    const GemmSides sides = gemmSides(program, thunk);
    const void* lhs = sides.lhs;
    const void* rhs = sides.rhs;
    const int64_t rows = plan.batch * plan.m;
    if (rows == 0 || plan.n == 0) return;
    const size_t dotSlot = pointers.size() - 1;
    const int64_t elementBytes = thunk.dotElementBytes;
    if (plan.converts()) {
        // A dot of narrow floats: the whole product (widened, multiplied in f32, rounded to
        // the dot's type), then the epilogue over the whole output.
        std::vector<uint8_t> product(static_cast<size_t>(rows * plan.n * elementBytes));
        runGemm(plan, lhs, rhs, product.data(), m_context.pool);
        std::vector<void*> local = pointers;
        local[dotSlot] = product.data();
        runElements(thunk.kernel, local.data(), rows * plan.n, 1);
        return;
    }
    const int64_t grain = gemmRowGrain(plan);
    // Output tiles the GEMM writes into a per-thread scratch block and the
    // epilogue reads back from cache. Each GEMM call packs its whole rhs
    // column range and lhs row range again, so tiles must not be small
    // (with 1 MiB row blocks BERT's 1024x768x3072 FFN GEMM packed its 9 MiB
    // rhs 12 times and ran 1.2x slower than the plain dot; 128 KiB blocks
    // made relu(x@w+b) 4096x1024x1024 1.5x slower): each thread's share of
    // the rows in as few blocks of about kBlockBytes (and at least kMinRows
    // rows) as cover it, so the blocks also divide evenly between the threads. Wide outputs (a
    // vocabulary projection: 30522 columns) are cut into 1024-column tiles
    // of about 4 MiB instead, which re-pack each operand a few times rather
    // than once per small row block (which made BERT's decoder GEMM 2.4x
    // slower).
    constexpr int64_t kBlockBytes = int64_t{4} << 20;
    const int64_t threads = m_context.threads();
    int64_t cols = plan.n;
    int64_t blockRows = 0;
    if (plan.n * elementBytes * 256 > kBlockBytes) {
        cols = 1024;
        blockRows = std::max<int64_t>(grain, kBlockBytes / (cols * elementBytes));
    } else {
        // At least kMinRows rows per call: one rhs pack costs about as much
        // as 40 rows of its GEMM here (bytes at ~10 GB/s against FMAs at
        // ~190 GFLOP/s per core, whatever k and n), so 512-row blocks keep
        // re-packing under 10%.
        constexpr int64_t kMinRows = 512;
        const int64_t share = (rows + threads - 1) / threads;
        const int64_t target = std::max(kMinRows, kBlockBytes / std::max<int64_t>(plan.n * elementBytes, 1));
        const int64_t pieces = std::max<int64_t>(1, (share + target - 1) / target);
        blockRows = std::max(grain, (share + pieces - 1) / pieces);
    }
    // Enough tiles for every thread.
    const int64_t colBlocks = (plan.n + cols - 1) / cols;
    if (colBlocks < threads)
        blockRows = std::max(grain, std::min(blockRows, (rows * colBlocks + threads - 1) / threads));
    const int64_t rowBlocks = (rows + blockRows - 1) / blockRows;
    // Full-width tiles of an in-place epilogue: the GEMM writes the output's
    // own rows, which the epilogue then rewrites; no scratch.
    uint8_t* inPlace = thunk.epilogueInPlace && cols == plan.n ? bufferPointer(program, thunk.buffers[0]) : nullptr;
    if (!inPlace)
        m_impl.tileScratchBytes = std::max(m_impl.tileScratchBytes, blockRows * cols * elementBytes * threads);
    auto body = [&](int64_t first, int64_t last) {
        std::vector<void*> local = pointers;
        if (inPlace) {
            local[dotSlot] = inPlace;
            for (int64_t item = first; item < last; ++item) {
                const int64_t r0 = item * blockRows, r1 = std::min(rows, r0 + blockRows);
                runGemmTile(plan, lhs, rhs, inPlace + r0 * plan.n * elementBytes, r0, r1, 0, plan.n);
                thunk.kernel(local.data(), r0 * plan.n, r1 * plan.n, 0, 1);
            }
            return;
        }
        thread_local std::vector<uint8_t> scratchBlock;
        const auto bytes = static_cast<size_t>(blockRows * cols * elementBytes);
        if (scratchBlock.size() < bytes) scratchBlock.resize(bytes);
        const auto base = reinterpret_cast<uintptr_t>(scratchBlock.data());
        for (int64_t item = first; item < last; ++item) {
            const int64_t r0 = item / colBlocks * blockRows, r1 = std::min(rows, r0 + blockRows);
            const int64_t c0 = item % colBlocks * cols, c1 = std::min(plan.n, c0 + cols);
            runGemmTile(plan, lhs, rhs, scratchBlock.data(), r0, r1, c0, c1);
            // The epilogue reads the dot at the output's linear index.
            if (c0 == 0 && c1 == plan.n) {
                local[dotSlot] = reinterpret_cast<void*>(base - static_cast<uintptr_t>(r0 * plan.n * elementBytes));
                thunk.kernel(local.data(), r0 * plan.n, r1 * plan.n, 0, 1);
                continue;
            }
            const int64_t width = c1 - c0;
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t linear = r * plan.n + c0;  // at scratch element (r - r0) * width
                local[dotSlot] = reinterpret_cast<void*>(
                    base + static_cast<uintptr_t>(((r - r0) * width - linear) * elementBytes));
                thunk.kernel(local.data(), linear, linear + width, 0, 1);
            }
        }
    };
    const int64_t items = rowBlocks * colBlocks;
    forRange(items, 1, items == 1, body);
}

// The convolution into the thunk's scratch buffer, the epilogue kernel over
// each block of output rows right after it (in-place plans), or over the
// whole output afterwards.
void Runner::runConvolutionEpilogue(Program& program, Thunk& thunk) {
    std::vector<void*> pointers = kernelPointers(program, thunk);
    uint8_t* result = thunk.epilogueInPlace ? bufferPointer(program, thunk.buffers[0])
                                            : program.arena.get() + thunk.scratch.offset;
    pointers.back() = result;
    const ConvPlan& plan = *thunk.convolution;
    const void* lhs = program.values[static_cast<size_t>(thunk.gemmOperands[0])].data;
    const void* rhs = program.values[static_cast<size_t>(thunk.gemmOperands[1])].data;
    if (plan.outputInPlace) {
        const int64_t features = plan.geometry.outFeatures;
        runConvolution(plan, lhs, rhs, result, m_context.pool, [&](int64_t begin, int64_t end) {
            thunk.kernel(pointers.data(), begin * features, end * features, 0, 1);
        });
        return;
    }
    runConvolution(plan, lhs, rhs, result, m_context.pool);
    runElements(thunk.kernel, pointers.data(), thunk.outputElements, 1);
}

// A dispatch over the thunk kinds.
Status Runner::runThunk(Program& program, size_t slot, const std::vector<RtValue>& parameters) {
    Thunk& thunk = program.thunks[slot];
    RtValue& value = program.values[slot];
    auto operandValue = [&](size_t i) -> const RtValue& {
        return program.values[static_cast<size_t>(thunk.operands[i])];
    };
    const HloInstruction& instruction = *thunk.instruction;
    switch (thunk.kind) {
    case ThunkKind::kParameter: {
        const auto number = static_cast<size_t>(instruction.parameterNumber());
        if (number >= parameters.size()) return internalError("%" + instruction.name() + ": no argument");
        value = parameters[number];
        return Status::ok();
    }
    case ThunkKind::kConstant: value = valueOfLiteral(thunk.constant); return Status::ok();
    case ThunkKind::kTuple:
        value = RtValue{};
        value.isTuple = true;
        for (size_t i = 0; i < thunk.operands.size(); ++i) value.elements.push_back(operandValue(i));
        return Status::ok();
    case ThunkKind::kGetTupleElement: {
        const RtValue& tuple = operandValue(0);
        const auto index = static_cast<size_t>(instruction.tupleIndex());
        if (!tuple.isTuple || index >= tuple.elements.size())
            return internalError("%" + instruction.name() + ": tuple index out of range");
        value = tuple.elements[index];
        return Status::ok();
    }
    case ThunkKind::kAlias: value = thunk.operands.empty() ? RtValue{} : operandValue(0); return Status::ok();
    case ThunkKind::kUpdateInPlace: {
        if (thunk.fusedUpdate) {
            value = operandValue(static_cast<size_t>(thunk.inPlaceOperand));
            runFusedUpdate(program, thunk, value.data);
            return Status::ok();
        }
        value = operandValue(0);
        updateInPlace(instruction, value.data, operandValue(1).data,
                      [&](int64_t d) { return operandValue(static_cast<size_t>(2 + d)).data; });
        return Status::ok();
    }
    case ThunkKind::kEmpty: value = RtValue{}; return Status::ok();
    case ThunkKind::kKernel:
        value = ownValue(program, thunk);
        runKernel(program, thunk);
        return Status::ok();
    case ThunkKind::kGemm: {
        value = ownValue(program, thunk);
        const GemmSides sides = gemmSides(program, thunk);
        runGemm(thunk.plan, sides.lhs, sides.rhs, value.data, m_context.pool);
        return Status::ok();
    }
    case ThunkKind::kGemmEpilogue:
        value = ownValue(program, thunk);
        runGemmEpilogue(program, thunk);
        return Status::ok();
    case ThunkKind::kConvolution:
        value = ownValue(program, thunk);
        runConvolution(*thunk.convolution, operandValue(0).data, operandValue(1).data, value.data, m_context.pool);
        return Status::ok();
    case ThunkKind::kConvolutionEpilogue:
        value = ownValue(program, thunk);
        runConvolutionEpilogue(program, thunk);
        return Status::ok();
    case ThunkKind::kScatter:
        value = ownValue(program, thunk);
        runScatterThunk(thunk, operandValue(0).data, operandValue(1).data, operandValue(2).data, value.data);
        return Status::ok();
    case ThunkKind::kSort:
        value = ownValue(program, thunk);
        runSortThunk(program, thunk, value);
        return Status::ok();
    case ThunkKind::kWhile:
        return runWhile(program, thunk, value);
    case ThunkKind::kCall: {
        value = ownValue(program, thunk);
        std::vector<RtValue> arguments;
        for (size_t i = 0; i < thunk.operands.size(); ++i) arguments.push_back(operandValue(i));
        Program& callee = *thunk.callees[0];
        HLO_RETURN_IF_ERROR(runProgram(callee, arguments));
        copyValue(instruction.shape(), callee.values[static_cast<size_t>(callee.rootSlot)], value);
        return Status::ok();
    }
    case ThunkKind::kConditional:
        return runConditional(program, thunk, value);
    case ThunkKind::kFallback:
        return runFallback(program, slot, value);
    }
    return internalError("unknown thunk kind");
}

Status Runner::runWhile(Program& program, Thunk& thunk, RtValue& value) {
    const HloInstruction& instruction = *thunk.instruction;
    const RtValue& init = program.values[static_cast<size_t>(thunk.operands[0])];
    value = ownValue(program, thunk);
    copyValue(instruction.shape(), init, value);
    Program& condition = *thunk.callees[0];
    Program& body = *thunk.callees[1];
    for (int64_t iteration = 0;; ++iteration) {
        if (m_context.cancelled()) return Status(StatusCode::kCancelled, "run cancelled");
        if (iteration >= m_context.options.maxWhileIterations)
            return Status(StatusCode::kResourceExhausted,
                          "%" + instruction.name() + ": more than " +
                              std::to_string(m_context.options.maxWhileIterations) + " iterations");
        HLO_RETURN_IF_ERROR(runProgram(condition, {value}));
        const RtValue& predicate = condition.values[static_cast<size_t>(condition.rootSlot)];
        if (!predicate.data || *predicate.data == 0) break;
        HLO_RETURN_IF_ERROR(runProgram(body, {value}));
        copyValue(instruction.shape(), body.values[static_cast<size_t>(body.rootSlot)], value);
    }
    return Status::ok();
}

Status Runner::runConditional(Program& program, Thunk& thunk, RtValue& value) {
    const HloInstruction& instruction = *thunk.instruction;
    auto operandValue = [&](size_t i) -> const RtValue& {
        return program.values[static_cast<size_t>(thunk.operands[i])];
    };
    value = ownValue(program, thunk);
    const RtValue& selector = operandValue(0);
    const PrimitiveType type = instruction.operand(0)->shape().elementType();
    const auto branches = static_cast<int64_t>(thunk.callees.size());
    int64_t branch = 0;
    if (type == PrimitiveType::PRED) {
        branch = selector.data && *selector.data ? 0 : 1;
    } else {
        int32_t index = 0;
        if (selector.data) std::memcpy(&index, selector.data, sizeof(index));
        branch = index < 0 || index >= branches ? branches - 1 : index;
    }
    if (static_cast<size_t>(branch) + 1 >= thunk.operands.size())
        return internalError("%" + instruction.name() + ": no operand for branch " + std::to_string(branch));
    Program& callee = *thunk.callees[static_cast<size_t>(branch)];
    HLO_RETURN_IF_ERROR(runProgram(callee, {operandValue(static_cast<size_t>(branch) + 1)}));
    copyValue(instruction.shape(), callee.values[static_cast<size_t>(callee.rootSlot)], value);
    return Status::ok();
}

Status Runner::runFallback(Program& program, size_t slot, RtValue& value) {
    Thunk& thunk = program.thunks[slot];
    const HloInstruction& instruction = *thunk.instruction;
    auto operandValue = [&](size_t i) -> const RtValue& {
        return program.values[static_cast<size_t>(thunk.operands[i])];
    };
    std::vector<Literal> operands;
    operands.reserve(thunk.operands.size());
    for (size_t i = 0; i < thunk.operands.size(); ++i)
        operands.push_back(literalOfValue(instruction.operand(static_cast<int64_t>(i))->shape(), operandValue(i)));
    std::vector<const Literal*> pointers;
    for (const Literal& operand : operands) pointers.push_back(&operand);
    HLO_ASSIGN_OR_RETURN(Literal result, m_context.evaluator.evaluate(instruction, pointers));
    if (!holdsDeclared(result, instruction.shape()))
        return Status(StatusCode::kInvalidArgument,
                      "%" + instruction.name() + ": the interpreter gives " +
                          result.shape().toString(false) + " where the instruction declares " +
                          instruction.shape().toString(false));
    program.owned[slot] = std::move(result);
    value = valueOfLiteral(program.owned[slot]);
    if (!thunk.buffers.empty()) {
        // Into its buffers when it has some (entry outputs written in place).
        RtValue own = ownValue(program, thunk);
        copyValue(instruction.shape(), value, own);
        value = own;
    }
    return Status::ok();
}

Status Runner::runProgram(Program& program, const std::vector<RtValue>& parameters) {
    const bool timed = program.isEntry;
    for (size_t slot = 0; slot < program.thunks.size(); ++slot) {
        if (m_context.cancelled()) return Status(StatusCode::kCancelled, "run cancelled");
        const Thunk& thunk = program.thunks[slot];
        const bool measure = timed && thunk.kind != ThunkKind::kParameter;
        const auto start = measure ? Clock::now() : Clock::time_point{};
        HLO_RETURN_IF_ERROR(runThunk(program, slot, parameters));
        if (!measure) continue;
        m_context.times.add(*thunk.instruction, std::chrono::duration<double>(Clock::now() - start).count());
        if (m_context.options.progress) {
            const int64_t done = m_context.times.count();
            const double fraction = static_cast<double>(done) / static_cast<double>(m_context.entryTotal);
            if (fraction - m_context.lastProgress >= 0.01 || done == m_context.entryTotal) {
                m_context.lastProgress = fraction;
                m_context.options.progress(std::min(fraction, 1.0), thunk.instruction->name());
            }
        }
    }
    return Status::ok();
}

}  // namespace

StatusOr<ExecutionResult> CpuExecutable::run(const std::vector<Literal>& args,
                                             const ExecutionOptions& options, ThreadPool* pool,
                                             CollectiveExchange* collectives) {
    std::lock_guard<std::mutex> lock(m_impl->runMutex);
    Program& entry = *m_impl->programs.front();
    const HloComputation& computation = *entry.computation;
    if (static_cast<int64_t>(args.size()) != computation.parameterCount())
        return invalidArgument("module '" + m_impl->module->name() + "' takes " +
                               std::to_string(computation.parameterCount()) + " argument(s), " +
                               std::to_string(args.size()) + " given");
    std::vector<RtValue> parameters;
    for (int64_t i = 0; i < computation.parameterCount(); ++i) {
        const Shape& expected = computation.parameter(i)->shape();
        const Literal& arg = args[static_cast<size_t>(i)];
        if (!arg.shape().sameDimensions(expected) || arg.shape().elementType() != expected.elementType())
            return invalidArgument("argument " + std::to_string(i) + " has shape " + arg.shape().toString(false) +
                                   " but parameter %" + computation.parameter(i)->name() + " expects " +
                                   expected.toString(false));
        parameters.push_back(valueOfLiteral(arg));
    }
    // Output storage: reused when the caller has dropped the last run's literals.
    for (size_t k = 0; k < m_impl->outputShapes.size(); ++k) {
        auto& storage = m_impl->outputStorage[k];
        const auto bytes = static_cast<size_t>(denseBytes(*m_impl->outputShapes[k]));
        if (!storage || storage.use_count() > 1 || storage->size() != bytes)
            storage = std::make_shared<std::vector<uint8_t>>(bytes);
        m_impl->outputPointers[k] = storage->data();
    }

    ExecutionResult result;
    result.device = "cpu";
    HloEvaluatorOptions evaluatorOptions;
    evaluatorOptions.rngSeed = options.rngSeed;
    evaluatorOptions.maxWhileIterations = options.maxWhileIterations;
    evaluatorOptions.cancel = options.cancel;
    evaluatorOptions.replicaId = m_impl->replicaId;
    evaluatorOptions.partitionId = m_impl->partitionId;
    evaluatorOptions.collectives = collectives;
    RunContext context(options, pool, evaluatorOptions);
    context.entryTotal = std::max<int64_t>(
        1, static_cast<int64_t>(entry.thunks.size()) - computation.parameterCount());
    if (options.progress) options.progress(0, {});
    Runner runner(*m_impl, context);
    const auto start = Clock::now();
    Status status = runner.runProgram(entry, parameters);
    if (!status.isOk()) {
        for (auto& program : m_impl->programs)
            for (Literal& owned : program->owned) owned = Literal();
        return status;
    }
    // Outputs: in place where a kernel wrote them, copied otherwise; the
    // root's tuple elements (nested tuples as tuple literals), as the
    // interpreter returns them.
    std::vector<uint8_t*> leaves;
    leavesOf(entry.values[static_cast<size_t>(entry.rootSlot)], leaves);
    size_t nextLeaf = 0;
    std::function<Literal(const Shape&)> build = [&](const Shape& shape) -> Literal {
        if (shape.isTuple()) {
            std::vector<Literal> elements;
            for (const Shape& element : shape.tupleShapes()) elements.push_back(build(element));
            return Literal::makeTuple(std::move(elements));
        }
        const size_t k = nextLeaf++;
        if (!shape.isArray() || k >= m_impl->outputShapes.size()) return Literal(shape);
        uint8_t* target = m_impl->outputPointers[k];
        const auto bytes = static_cast<size_t>(denseBytes(shape));
        if (k < leaves.size() && leaves[k] != target && leaves[k] && bytes > 0) std::memcpy(target, leaves[k], bytes);
        return Literal::fromStorage(shape, m_impl->outputStorage[k]);
    };
    const Shape& rootShape = computation.root()->shape();
    if (rootShape.isTuple()) {
        for (const Shape& element : rootShape.tupleShapes()) result.outputs.push_back(build(element));
    } else {
        result.outputs.push_back(build(rootShape));
    }
    result.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (auto& program : m_impl->programs)
        for (Literal& owned : program->owned) owned = Literal();
    context.times.moveInto(result);
    result.fallbacks = m_impl->fallbacks;
    // What this executable holds for a run: its arenas, output storage,
    // scratch (partial reductions, GEMM epilogue tiles) and the arguments.
    result.peakBytes = arenaBytes() + m_impl->tileScratchBytes;
    for (const auto& storage : m_impl->outputStorage) result.peakBytes += storage ? static_cast<int64_t>(storage->size()) : 0;
    for (int64_t bytes : m_impl->scratchBytes) result.peakBytes += bytes;
    for (const Literal& arg : args) result.peakBytes += arg.sizeInBytes();
    if (options.progress) options.progress(1, {});
    return result;
}

}  // namespace hloscope
