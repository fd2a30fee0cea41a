#include "compiler/runtime/convolution.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "compiler/runtime/gemm.h"
#include "compiler/runtime/thread_pool.h"
#include "core/ir/hlo_instruction.h"

namespace hloscope {

namespace {

Status refuse(const HloInstruction& convolution, const std::string& why) {
    return Status(StatusCode::kUnimplemented, "%" + convolution.name() + ": " + why);
}

// Advances a row-major multi-index; false after the last one.
bool advance(std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
    for (size_t d = index.size(); d-- > 0;) {
        if (++index[d] < sizes[d]) return true;
        index[d] = 0;
    }
    return false;
}

// Scratch of one worker thread, reused across blocks and runs.
template <typename T>
struct Scratch {
    std::vector<T> patches;
    std::vector<T> tile;
};

template <typename T>
Scratch<T>& scratch() {
    thread_local Scratch<T> buffers;
    return buffers;
}

template <typename T>
class Runner {
public:
    Runner(const ConvPlan& plan, const T* lhs, const T* rhs, T* out)
        : m_plan(plan), m_g(plan.geometry), m_dn(*plan.geometry.dn), m_lhs(lhs), m_rhs(rhs), m_out(out) {
        const size_t sr = static_cast<size_t>(m_g.spatialRank);
        for (size_t i = 0; i < sr; ++i) m_windowSizes.push_back(m_g.window[i].size);
        packKernel();
        if (m_plan.direct) tabulateTaps();
    }

    // Output rows [begin, end).
    void block(int64_t begin, int64_t end) {
        if (m_plan.direct) {
            directBlock(begin, end);
            return;
        }
        const int64_t count = end - begin;
        const int64_t groups = m_g.featureGroups;
        Scratch<T>& buffers = scratch<T>();
        buffers.patches.resize(static_cast<size_t>(count * m_plan.k));
        if (!m_plan.outputInPlace) buffers.tile.resize(static_cast<size_t>(count * m_plan.groupOut));
        GemmPlan gemm;
        gemm.type = gemm.lhsType = gemm.rhsType = m_plan.type;
        gemm.m = count;
        gemm.n = m_plan.groupOut;
        gemm.k = m_plan.k;
        for (int64_t group = 0; group < groups; ++group) {
            gather(begin, end, group, buffers.patches.data());
            const T* kernel = m_packed.data() + group * m_plan.k * m_plan.groupOut;
            T* target = m_plan.outputInPlace ? m_out + begin * m_g.outFeatures : buffers.tile.data();
            runGemmRows(gemm, buffers.patches.data(), kernel, target, 0, count);
            if (!m_plan.outputInPlace) scatter(begin, end, group, buffers.tile.data());
        }
    }

private:
    // Grouped convolutions with little work per group (depthwise: one input
    // and one output feature per group), where a GEMM per group would be
    // all overhead: each output row accumulates, window position by window
    // position, every group's few products over a row of all features.
    void directBlock(int64_t begin, int64_t end) {
        const size_t sr = static_cast<size_t>(m_g.spatialRank);
        const int64_t kin = m_g.kernelIn;
        const int64_t groups = m_g.featureGroups;
        const int64_t groupOut = m_plan.groupOut;
        const int64_t features = m_g.outFeatures;
        const int64_t featureStride = m_g.lhsStrides[static_cast<size_t>(m_dn.inputFeatureDimension)];
        const int64_t batchStride = m_g.lhsStrides[static_cast<size_t>(m_dn.inputBatchDimension)];
        const int64_t outFeatureStride = m_g.outStrides[static_cast<size_t>(m_dn.outputFeatureDimension)];
        thread_local std::vector<T> rowBuffer;
        rowBuffer.resize(static_cast<size_t>(features));
        std::vector<int64_t> spatial(sr, 0), win(sr, 0);
        const bool depthwise = kin == 1 && groupOut == 1 && featureStride == 1;
        std::vector<Tap> taps;
        // Rows in order: the first decoded, the next ones by counting on.
        int64_t batch = 0;
        if (begin < end) decode(begin, batch, spatial);
        for (int64_t row = begin; row < end; ++row, batch += advance(spatial, m_g.outSpatialSizes) ? 0 : 1) {
            T* acc = m_plan.outputInPlace ? m_out + row * features : rowBuffer.data();
            const T* base = m_lhs + batch * batchStride;
            std::fill(win.begin(), win.end(), 0);
            int64_t position = 0;
            if (depthwise) {
                taps.clear();
                do {
                    const int64_t offset = tapOffset(spatial, win);
                    if (offset >= 0) taps.push_back({base + offset, m_packed.data() + position * groups});
                    ++position;
                } while (advance(win, m_windowSizes));
                depthwiseRow(acc, taps, groups);
            } else {
                std::fill(acc, acc + features, T(0));
                do {
                    const int64_t offset = tapOffset(spatial, win);
                    const T* w = m_packed.data() + position * groups * kin * groupOut;
                    ++position;
                    if (offset < 0) continue;  // padding or a dilation hole
                    const T* in = base + offset;
                    for (int64_t g = 0; g < groups; ++g)
                        for (int64_t c = 0; c < kin; ++c) {
                            const T x = in[(g * kin + c) * featureStride];
                            const T* wg = w + (g * kin + c) * groupOut;
                            T* out = acc + g * groupOut;
                            for (int64_t o = 0; o < groupOut; ++o) out[o] += x * wg[o];
                        }
                } while (advance(win, m_windowSizes));
            }
            if (m_plan.outputInPlace) continue;
            const int64_t target = outputOffset(batch, spatial);
            for (int64_t f = 0; f < features; ++f) m_out[target + f * outFeatureStride] = acc[f];
        }
    }

    // One window position of a depthwise row: its input features and their weights.
    struct Tap {
        const T* in;
        const T* w;
    };

    // A depthwise row: acc[g] = the sum over the taps, in window order, of
    // in[g] * w[g]. Sixteen features at a time summed over every tap in
    // registers, then stored once (accumulating in memory tap by tap waited
    // on each store being read back).
    static void depthwiseRow(T* __restrict acc, const std::vector<Tap>& taps, int64_t n) {
        constexpr int64_t kChunk = 16;
        int64_t g = 0;
        for (; g + kChunk <= n; g += kChunk) {
            T sum[kChunk] = {};
            for (const Tap& tap : taps)
                for (int64_t j = 0; j < kChunk; ++j) sum[j] += tap.in[g + j] * tap.w[g + j];
            for (int64_t j = 0; j < kChunk; ++j) acc[g + j] = sum[j];
        }
        for (; g < n; ++g) {
            T sum = T(0);
            for (const Tap& tap : taps) sum += tap.in[g] * tap.w[g];
            acc[g] = sum;
        }
    }

    // Direct plans: W[window position][group][input feature][output feature of the group].
    // GEMM plans: W[group][window position][input feature][output feature of the group].
    void packKernel() {
        const int64_t kin = m_g.kernelIn;
        const int64_t groupOut = m_plan.groupOut;
        m_packed.resize(static_cast<size_t>(m_g.featureGroups * m_plan.k * groupOut));
        const int64_t inStride = m_g.rhsStrides[static_cast<size_t>(m_dn.kernelInputFeatureDimension)];
        const int64_t outStride = m_g.rhsStrides[static_cast<size_t>(m_dn.kernelOutputFeatureDimension)];
        std::vector<int64_t> win(m_windowSizes.size(), 0);
        int64_t position = 0;
        do {
            int64_t offset = 0;
            for (size_t i = 0; i < win.size(); ++i) {
                const WindowDimension& w = m_g.window[i];
                const int64_t k = w.windowReversal ? w.size - 1 - win[i] : win[i];
                offset += k * m_g.rhsStrides[static_cast<size_t>(m_dn.kernelSpatialDimensions[i])];
            }
            for (int64_t group = 0; group < m_g.featureGroups; ++group)
                for (int64_t ci = 0; ci < kin; ++ci) {
                    const int64_t slot = m_plan.direct ? (position * m_g.featureGroups + group) * kin + ci
                                                       : group * m_plan.k + position * kin + ci;
                    T* row = m_packed.data() + slot * groupOut;
                    const T* src = m_rhs + offset + ci * inStride + group * groupOut * outStride;
                    for (int64_t o = 0; o < groupOut; ++o) row[o] = src[o * outStride];
                }
            ++position;
        } while (advance(win, m_windowSizes));
    }

    // Output row r = b * spatialCount + s: its batch and spatial index.
    void decode(int64_t row, int64_t& batch, std::vector<int64_t>& spatial) const {
        batch = row / m_plan.spatialCount;
        int64_t rest = row % m_plan.spatialCount;
        for (size_t i = spatial.size(); i-- > 0;) {
            spatial[i] = rest % m_g.outSpatialSizes[i];
            rest /= m_g.outSpatialSizes[i];
        }
    }

    // The input element (spatial part of its offset) that window position
    // `win` of output position `spatial` reads; -1 on padding or a
    // base-dilation hole.
    int64_t inputOffset(const std::vector<int64_t>& spatial, const std::vector<int64_t>& win) const {
        int64_t offset = 0;
        for (size_t i = 0; i < spatial.size(); ++i) {
            const int64_t pos = convolutionInputPosition(m_g.window[i], m_g.inSpatialSizes[i], spatial[i], win[i]);
            if (pos < 0) return -1;
            offset += pos * m_g.lhsStrides[static_cast<size_t>(m_dn.inputSpatialDimensions[i])];
        }
        return offset;
    }

    // The direct plans' taps: per spatial dimension, the input offset that
    // window position `win` of output position `out` reads (the dimension's
    // stride times inputOffset's position; -1 on padding or a dilation hole)
    // at m_taps[i][out * window size + win], so that each of a row's window
    // positions costs a few additions instead of inputOffset's arithmetic.
    void tabulateTaps() {
        m_taps.resize(m_windowSizes.size());
        for (size_t i = 0; i < m_taps.size(); ++i) {
            const int64_t outSize = m_g.outSpatialSizes[i];
            const int64_t size = m_windowSizes[i];
            const int64_t stride = m_g.lhsStrides[static_cast<size_t>(m_dn.inputSpatialDimensions[i])];
            m_taps[i].resize(static_cast<size_t>(outSize * size));
            for (int64_t out = 0; out < outSize; ++out)
                for (int64_t win = 0; win < size; ++win) {
                    const int64_t pos = convolutionInputPosition(m_g.window[i], m_g.inSpatialSizes[i], out, win);
                    m_taps[i][static_cast<size_t>(out * size + win)] = pos < 0 ? -1 : pos * stride;
                }
        }
    }

    // inputOffset from the tables of tabulateTaps.
    int64_t tapOffset(const std::vector<int64_t>& spatial, const std::vector<int64_t>& win) const {
        int64_t offset = 0;
        for (size_t i = 0; i < spatial.size(); ++i) {
            const int64_t part = m_taps[i][static_cast<size_t>(spatial[i] * m_windowSizes[i] + win[i])];
            if (part < 0) return -1;
            offset += part;
        }
        return offset;
    }

    // Offset of output element (batch, spatial..., feature 0).
    int64_t outputOffset(int64_t batch, const std::vector<int64_t>& spatial) const {
        int64_t offset = batch * m_g.outStrides[static_cast<size_t>(m_dn.outputBatchDimension)];
        for (size_t i = 0; i < spatial.size(); ++i)
            offset += spatial[i] * m_g.outStrides[static_cast<size_t>(m_dn.outputSpatialDimensions[i])];
        return offset;
    }

    void gather(int64_t begin, int64_t end, int64_t group, T* patches) const {
        const size_t sr = static_cast<size_t>(m_g.spatialRank);
        const int64_t kin = m_g.kernelIn;
        const int64_t featureStride = m_g.lhsStrides[static_cast<size_t>(m_dn.inputFeatureDimension)];
        const int64_t batchStride = m_g.lhsStrides[static_cast<size_t>(m_dn.inputBatchDimension)];
        std::vector<int64_t> spatial(sr, 0), win(sr, 0);
        for (int64_t row = begin; row < end; ++row) {
            int64_t batch = 0;
            decode(row, batch, spatial);
            const T* base = m_lhs + batch * batchStride + group * kin * featureStride;
            T* dst = patches + (row - begin) * m_plan.k;
            std::fill(win.begin(), win.end(), 0);
            do {
                const int64_t offset = inputOffset(spatial, win);
                if (offset < 0) std::fill(dst, dst + kin, T(0));
                else if (featureStride == 1) std::memcpy(dst, base + offset, static_cast<size_t>(kin) * sizeof(T));
                else
                    for (int64_t ci = 0; ci < kin; ++ci) dst[ci] = base[offset + ci * featureStride];
                dst += kin;
            } while (advance(win, m_windowSizes));
        }
    }

    void scatter(int64_t begin, int64_t end, int64_t group, const T* tile) const {
        const int64_t featureStride = m_g.outStrides[static_cast<size_t>(m_dn.outputFeatureDimension)];
        std::vector<int64_t> spatial(static_cast<size_t>(m_g.spatialRank), 0);
        for (int64_t row = begin; row < end; ++row) {
            int64_t batch = 0;
            decode(row, batch, spatial);
            const int64_t offset = outputOffset(batch, spatial) + group * m_plan.groupOut * featureStride;
            const T* src = tile + (row - begin) * m_plan.groupOut;
            for (int64_t o = 0; o < m_plan.groupOut; ++o) m_out[offset + o * featureStride] = src[o];
        }
    }

    const ConvPlan& m_plan;
    const ConvGeometry& m_g;
    const ConvolutionDimensionNumbers& m_dn;
    const T* m_lhs;
    const T* m_rhs;
    T* m_out;
    std::vector<int64_t> m_windowSizes;
    std::vector<std::vector<int64_t>> m_taps;  // direct plans: tabulateTaps
    std::vector<T> m_packed;
};

template <typename T>
void run(const ConvPlan& plan, const T* lhs, const T* rhs, T* out, ThreadPool* pool,
         const std::function<void(int64_t, int64_t)>& afterRows) {
    const int64_t outputElements = plan.rows * plan.geometry.outFeatures;
    if (outputElements == 0) return;
    if (plan.k == 0) {  // an empty window or no input features: sums of nothing
        std::fill(out, out + outputElements, T(0));
        if (afterRows && plan.outputInPlace) afterRows(0, plan.rows);
        return;
    }
    Runner<T> runner(plan, lhs, rhs, out);
    // Blocks of ~256 KiB of patches, at least 32 rows, and enough of them
    // for every thread.
    const int threads = pool ? pool->threadCount() : 1;
    int64_t rowsPerBlock = std::max<int64_t>(32, (int64_t{256} << 10) / (plan.k * int64_t(sizeof(T))));
    rowsPerBlock = std::min(rowsPerBlock, std::max<int64_t>(1, (plan.rows + threads - 1) / threads));
    const int64_t blocks = (plan.rows + rowsPerBlock - 1) / rowsPerBlock;
    auto body = [&](int64_t first, int64_t last) {
        for (int64_t b = first; b < last; ++b) {
            const int64_t begin = b * rowsPerBlock, end = std::min(plan.rows, (b + 1) * rowsPerBlock);
            runner.block(begin, end);
            if (afterRows && plan.outputInPlace) afterRows(begin, end);
        }
    };
    if (pool && threads > 1 && blocks > 1 && plan.flops() > 1e6) pool->parallelFor(blocks, 1, body);
    else body(0, blocks);
}

}  // namespace

StatusOr<ConvPlan> planConvolution(const HloInstruction& convolution) {
    if (convolution.opcode() != HloOpcode::kConvolution || convolution.operandCount() != 2)
        return refuse(convolution, "not a two-operand convolution");
    const Shape& lhs = convolution.operand(0)->shape();
    const Shape& rhs = convolution.operand(1)->shape();
    const Shape& out = convolution.shape();
    if (!lhs.isArray() || !rhs.isArray() || !out.isArray()) return refuse(convolution, "tuple-shaped convolution");
    const PrimitiveType type = out.elementType();
    if ((type != PrimitiveType::F32 && type != PrimitiveType::F64) || lhs.elementType() != type ||
        rhs.elementType() != type)
        return refuse(convolution, "im2col + GEMM convolution handles f32 and f64 with one element type, not " +
                                       out.toString(false));
    if (!lhs.hasDefaultDenseLayout() || !rhs.hasDefaultDenseLayout() || !out.hasDefaultDenseLayout())
        return refuse(convolution, "convolution operands or result not in the default dense layout");
    if (convolution.batchGroupCount() > 1)
        return refuse(convolution, "batch_group_count > 1 (a backward filter convolution) is not mapped onto GEMM");
    HLO_ASSIGN_OR_RETURN(ConvGeometry geometry, convolutionGeometry(convolution, lhs, rhs, out));
    ConvPlan plan;
    plan.type = type;
    for (const WindowDimension& w : geometry.window) plan.windowPositions *= w.size;
    for (int64_t s : geometry.outSpatialSizes) plan.spatialCount *= s;
    plan.k = plan.windowPositions * geometry.kernelIn;
    plan.groupOut = geometry.outFeatures / geometry.featureGroups;
    plan.rows = geometry.outBatch * plan.spatialCount;
    const ConvolutionDimensionNumbers& dn = *geometry.dn;
    bool nhwc = dn.outputBatchDimension == 0 && dn.outputFeatureDimension == geometry.spatialRank + 1;
    for (int64_t i = 0; i < geometry.spatialRank; ++i)
        nhwc = nhwc && dn.outputSpatialDimensions[static_cast<size_t>(i)] == i + 1;
    // A GEMM per group pays off only with some work per group.
    plan.direct = geometry.featureGroups > 1 && plan.k * plan.groupOut <= 64;
    plan.outputInPlace = nhwc && (geometry.featureGroups == 1 || plan.direct);
    plan.geometry = std::move(geometry);
    return plan;
}

void runConvolution(const ConvPlan& plan, const void* lhs, const void* rhs, void* out, ThreadPool* pool,
                    const std::function<void(int64_t, int64_t)>& afterRows) {
    if (plan.type == PrimitiveType::F64)
        run(plan, static_cast<const double*>(lhs), static_cast<const double*>(rhs), static_cast<double*>(out), pool,
            afterRows);
    else
        run(plan, static_cast<const float*>(lhs), static_cast<const float*>(rhs), static_cast<float*>(out), pool,
            afterRows);
}

}  // namespace hloscope
