// Kernel plans for dots and convolutions (see tpu_simulator.h): the GEMM a
// matrix op amounts to, its (batch, tm, tn) output tiles and tk chunks of K
// chosen to fit VMEM, and the grid steps that tile loop produces.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "compiler/backends/tpu/tpu_precision.h"
#include "compiler/backends/tpu/tpu_sim_internal.h"
#include "compiler/cost/cost_analysis.h"
#include "compiler/layout/tpu_tiling.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::tpu_sim {

namespace {

struct Gemm {
    int64_t batch = 1, m = 1, n = 1, k = 1;
    int64_t lhsBytesPerElement = 4, rhsBytesPerElement = 4, outBytesPerElement = 4;
    int64_t rowTile = 8;  // sublane tile of the lhs type (16 for 16-bit, 32 for 8-bit)
    double passes = 1;
    bool lhsF32 = false, rhsF32 = false;
    double flops = 0;
};

int64_t product(const Shape& shape, const std::vector<int64_t>& dims) {
    int64_t result = 1;
    for (int64_t d : dims)
        if (d >= 0 && d < shape.rank()) result *= std::max<int64_t>(shape.dimensions(d), 0);
    return result;
}

Gemm gemmOf(const HloInstruction& op, const Chip& chip, std::string& note) {
    Gemm g;
    const Shape& lhs = op.operand(0)->shape();
    const Shape& rhs = op.operand(1)->shape();
    const Shape& out =
        op.shape().isTuple() && op.shape().tupleCount() > 0 ? op.shape().tupleShape(0) : op.shape();
    g.flops = CostAnalysis::of(op).flops;
    if (op.opcode() == HloOpcode::kConvolution && op.convolutionDimensionNumbers() != nullptr &&
        out.isArray()) {
        const ConvolutionDimensionNumbers& cd = *op.convolutionDimensionNumbers();
        const int64_t groups = std::max<int64_t>(1, op.featureGroupCount()) *
                               std::max<int64_t>(1, op.batchGroupCount());
        int64_t spatial = 1;
        for (int64_t d : cd.outputSpatialDimensions)
            spatial *= std::max<int64_t>(out.dimensions(d), 0);
        int64_t window = 1;
        for (int64_t d : cd.kernelSpatialDimensions)
            window *= std::max<int64_t>(rhs.dimensions(d), 0);
        g.batch = groups;
        g.m = std::max<int64_t>(out.dimensions(cd.outputBatchDimension), 0) * spatial;
        g.n = ceilDiv(std::max<int64_t>(out.dimensions(cd.outputFeatureDimension), 0), groups);
        g.k = window * std::max<int64_t>(rhs.dimensions(cd.kernelInputFeatureDimension), 0);
    } else if (const DotDimensionNumbers* dn = op.dotDimensionNumbers();
               dn != nullptr && lhs.isArray() && rhs.isArray()) {
        g.batch = product(lhs, dn->lhsBatchDimensions);
        g.k = product(lhs, dn->lhsContractingDimensions);
        const int64_t inner = std::max<int64_t>(1, g.batch * g.k);
        g.m = lhs.elementCount() / inner;
        g.n = rhs.elementCount() / inner;
    }
    g.lhsBytesPerElement = std::max(1, primitive_util::byteWidth(lhs.elementType()));
    g.rhsBytesPerElement = std::max(1, primitive_util::byteWidth(rhs.elementType()));
    g.outBytesPerElement =
        out.isArray() ? std::max(1, primitive_util::byteWidth(out.elementType())) : 4;
    g.rowTile = std::max<int64_t>(chip.sublanes, chip.sublanes * 4 / g.lhsBytesPerElement);
    const PrimitiveType type = lhs.elementType();
    g.lhsF32 = type == PrimitiveType::F32;
    g.rhsF32 = rhs.elementType() == PrimitiveType::F32;
    if (g.lhsF32 || g.rhsF32) {
        // As many passes as the numerics (tpu_precision) computes products.
        StatusOr<int64_t> passes = tpuMxuPasses(op);
        if (passes.isOk()) {
            g.passes = static_cast<double>(*passes);
        } else {
            g.passes = 1;
            note = passes.status().message();
        }
    } else if (type == PrimitiveType::BF16 || type == PrimitiveType::F16) {
        g.passes = 1;
    } else {
        const std::string name(primitive_util::name(type));
        auto bf16 = chip.matrixPeakTflops.find("bf16");
        auto own = chip.matrixPeakTflops.find(name);
        if (bf16 != chip.matrixPeakTflops.end() && own != chip.matrixPeakTflops.end() &&
            own->second > 0) {
            g.passes = bf16->second / own->second;
        } else {
            g.passes = 1;
            note = "no MXU rate for " + name + ": the bf16 rate is assumed";
        }
    }
    return g;
}

// The fusion operands that feed a matrix op's operand through unary data
// movement and conversions (its HBM source), by kernel operand index.
std::set<int64_t> sourcesOf(const HloInstruction* value, const HloInstruction& kernel) {
    std::set<int64_t> sources;
    std::vector<const HloInstruction*> stack = {value};
    std::set<const HloInstruction*> seen;
    while (!stack.empty()) {
        const HloInstruction* at = stack.back();
        stack.pop_back();
        if (!seen.insert(at).second) continue;
        if (at->opcode() == HloOpcode::kParameter) {
            if (kernel.opcode() == HloOpcode::kFusion) sources.insert(at->parameterNumber());
            continue;
        }
        switch (at->opcode()) {
            case HloOpcode::kConvert:
            case HloOpcode::kBitcast:
            case HloOpcode::kCopy:
            case HloOpcode::kTranspose:
            case HloOpcode::kReshape:
            case HloOpcode::kBroadcast:
            case HloOpcode::kReducePrecision:
            case HloOpcode::kSlice:
            case HloOpcode::kNegate:
            case HloOpcode::kPad:
                for (const HloInstruction* operand : at->operands()) stack.push_back(operand);
                break;
            default:
                break;
        }
    }
    return sources;
}

struct GemmTiles {
    int64_t tb = 1, tm = 1, tn = 1, tk = 1;
};

struct GemmLayout {
    Gemm g;
    int64_t mp = 0, np = 0, kp = 0;
    double lhsHbm = 0, rhsHbm = 0, outHbm = 0, extraHbm = 0;  // streamed bytes in HBM
    double resident = 0;
    double epilogueOps = 0, epilogueTranscendentals = 0;  // over the whole output
};

double gemmWorkingSet(const GemmLayout& l, const GemmTiles& t) {
    const double tb = static_cast<double>(t.tb), tm = static_cast<double>(t.tm),
                 tn = static_cast<double>(t.tn), tk = static_cast<double>(t.tk);
    const bool chunked = t.tk < l.kp;
    const double outputShare = tb * tm * tn / (static_cast<double>(l.g.batch) * l.mp * l.np);
    double ws =
        2 * tb * tm * tk * l.g.lhsBytesPerElement + 2 * tb * tk * tn * l.g.rhsBytesPerElement +
        2 * tb * tm * tn * l.g.outBytesPerElement + 2 * l.extraHbm * outputShare + l.resident;
    if (chunked && l.g.outBytesPerElement != 4) ws += tb * tm * tn * 4;  // f32 accumulator
    return ws;
}

double mxuCycles(const Chip& chip, const Gemm& g, int64_t tb, int64_t rows, int64_t kk,
                 int64_t cols) {
    const int64_t weightTiles = ceilDiv(kk, chip.mxuRows) * ceilDiv(cols, chip.mxuColumns);
    const int64_t rounds = ceilDiv(weightTiles, chip.mxusPerCore);
    return static_cast<double>(tb * rounds * std::max(rows, chip.mxuRows)) * g.passes;
}

// Fewer output tiles than cores: the cores share the K chunks instead.
bool splitsK(int64_t tiles, int64_t kChunks, int64_t cores) { return tiles < cores && kChunks > 1; }

int64_t gemmSteps(int64_t tiles, int64_t kChunks, int64_t cores) {
    return splitsK(tiles, kChunks, cores) ? ceilDiv(tiles * kChunks, cores)
                                          : ceilDiv(tiles, cores) * kChunks;
}

class GemmSteps : public StepSource {
public:
    GemmSteps(const GemmLayout& layout, const GemmTiles& tiles, const Chip& chip)
        : m_l(layout), m_t(tiles), m_chip(chip) {
        m_bBlocks = ceilDiv(m_l.g.batch, m_t.tb);
        m_mBlocks = ceilDiv(m_l.mp, m_t.tm);
        m_nBlocks = ceilDiv(m_l.np, m_t.tn);
        m_kChunks = ceilDiv(m_l.kp, m_t.tk);
        m_tiles = m_bBlocks * m_mBlocks * m_nBlocks;
        m_splitK = splitsK(m_tiles, m_kChunks, chip.cores);
        m_lastLhs.assign(static_cast<size_t>(chip.cores), -1);
        m_lastRhs.assign(static_cast<size_t>(chip.cores), -1);
        const double total = static_cast<double>(m_l.g.batch) * m_l.mp * m_l.kp;
        m_lhsScale = total > 0 ? m_l.lhsHbm / total : 0;
        const double rhsTotal = static_cast<double>(m_l.g.batch) * m_l.kp * m_l.np;
        m_rhsScale = rhsTotal > 0 ? m_l.rhsHbm / rhsTotal : 0;
    }
    int64_t count() const override { return gemmSteps(m_tiles, m_kChunks, m_chip.cores); }

    GridStep next() override {
        GridStep step;
        const int64_t group = m_step / m_kChunks;
        const int64_t stepChunk = m_step % m_kChunks;
        const int64_t first =
            m_step * m_chip.cores;  // split K: the step's first (tile, chunk) item
        ++m_step;
        const double outputTotal = static_cast<double>(m_l.g.batch) * m_l.mp * m_l.np;
        const double macTotal = outputTotal * static_cast<double>(m_l.kp);
        double mxuMax = 0, vpuMax = 0, mxuSum = 0, vpuSum = 0, inBytes = 0, outBytes = 0;
        for (int64_t core = 0; core < m_chip.cores; ++core) {
            // Output tiles go to the cores in turn; with fewer tiles than
            // cores, the K chunks do (each core accumulates a partial sum).
            const int64_t tile =
                m_splitK ? (first + core) / m_kChunks : group * m_chip.cores + core;
            const int64_t chunk = m_splitK ? (first + core) % m_kChunks : stepChunk;
            if (tile >= m_tiles) break;
            const int64_t nj = tile % m_nBlocks;
            const int64_t mi = (tile / m_nBlocks) % m_mBlocks;
            const int64_t bb = tile / (m_nBlocks * m_mBlocks);
            const int64_t tb = std::min(m_t.tb, m_l.g.batch - bb * m_t.tb);
            const int64_t rows = std::min(m_t.tm, m_l.mp - mi * m_t.tm);
            const int64_t cols = std::min(m_t.tn, m_l.np - nj * m_t.tn);
            const int64_t kk = std::min(m_t.tk, m_l.kp - chunk * m_t.tk);
            const int64_t lhsId = (bb * m_mBlocks + mi) * m_kChunks + chunk;
            const int64_t rhsId = (bb * m_kChunks + chunk) * m_nBlocks + nj;
            const size_t c = static_cast<size_t>(core);
            if (m_lastLhs[c] != lhsId) inBytes += static_cast<double>(tb * rows * kk) * m_lhsScale;
            if (m_lastRhs[c] != rhsId) inBytes += static_cast<double>(tb * kk * cols) * m_rhsScale;
            m_lastLhs[c] = lhsId;
            m_lastRhs[c] = rhsId;
            const double outputShare = static_cast<double>(tb * rows * cols) / outputTotal;
            if (chunk == 0) inBytes += m_l.extraHbm * outputShare;
            double vregOps = 0, transcendentals = 0;
            const double accVregs = static_cast<double>(tb * ceilDiv(rows, m_chip.sublanes) *
                                                        ceilDiv(cols, m_chip.lanes));
            if (m_kChunks > 1) vregOps += accVregs;
            const double conversions = m_l.g.passes > 1 ? 2 : 1;
            if (m_l.g.lhsF32)
                vregOps += conversions * static_cast<double>(tb * ceilDiv(rows, m_chip.sublanes) *
                                                             ceilDiv(kk, m_chip.lanes));
            if (m_l.g.rhsF32)
                vregOps += conversions * static_cast<double>(tb * ceilDiv(kk, m_chip.sublanes) *
                                                             ceilDiv(cols, m_chip.lanes));
            if (chunk == m_kChunks - 1) {
                outBytes += m_l.outHbm * outputShare;
                vregOps += m_l.epilogueOps * outputShare;
                transcendentals += m_l.epilogueTranscendentals * outputShare;
            }
            const double mxu = mxuCycles(m_chip, m_l.g, tb, rows, kk, cols) / m_chip.clockHz;
            const double vpu = vpuSecondsOf(vregOps, transcendentals, m_chip);
            mxuMax = std::max(mxuMax, mxu);
            vpuMax = std::max(vpuMax, vpu);
            mxuSum += mxu;
            vpuSum += vpu;
            step.flops += macTotal > 0
                              ? m_l.g.flops * static_cast<double>(tb * rows * kk * cols) / macTotal
                              : 0;
        }
        const double cores = static_cast<double>(m_chip.cores);
        step.inBytes = static_cast<int64_t>(std::llround(inBytes));
        step.outBytes = static_cast<int64_t>(std::llround(outBytes));
        step.mxuSeconds = mxuMax;
        step.vpuSeconds = vpuMax;
        step.mxuBusy = mxuSum / cores;
        step.vpuBusy = vpuSum / cores;
        return step;
    }

private:
    GemmLayout m_l;
    GemmTiles m_t;
    const Chip& m_chip;
    int64_t m_bBlocks = 1, m_mBlocks = 1, m_nBlocks = 1, m_kChunks = 1, m_tiles = 1;
    bool m_splitK = false;
    double m_lhsScale = 0, m_rhsScale = 0;
    std::vector<int64_t> m_lastLhs, m_lastRhs;
    int64_t m_step = 0;
};

// Powers of two from `from` below `limit`, then `limit` itself when at most `cap`.
std::vector<int64_t> tileCandidates(int64_t from, int64_t limit, int64_t cap) {
    std::vector<int64_t> result;
    for (int64_t t = from; t < limit && t <= cap; t *= 2) result.push_back(t);
    if (limit <= cap || result.empty()) result.push_back(limit);
    return result;
}

double gemmEstimate(const GemmLayout& l, const GemmTiles& t, const Chip& chip) {
    const int64_t bBlocks = ceilDiv(l.g.batch, t.tb), mBlocks = ceilDiv(l.mp, t.tm),
                  nBlocks = ceilDiv(l.np, t.tn), kChunks = ceilDiv(l.kp, t.tk);
    const double steps =
        static_cast<double>(gemmSteps(bBlocks * mBlocks * nBlocks, kChunks, chip.cores));
    const double lhsReads = kChunks == 1 ? 1 : static_cast<double>(nBlocks);
    const double rhsReads = kChunks == 1 && nBlocks == 1 ? 1 : static_cast<double>(mBlocks);
    const double traffic = l.lhsHbm * lhsReads + l.rhsHbm * rhsReads + l.outHbm + l.extraHbm;
    const double mxu = mxuCycles(chip, l.g, t.tb, t.tm, t.tk, t.tn) / chip.clockHz;
    const double vpu = vpuSecondsOf(
        static_cast<double>(t.tb * ceilDiv(t.tm, chip.sublanes) * ceilDiv(t.tn, chip.lanes)) *
            (kChunks > 1 ? 1 : 0),
        0, chip);
    const double share =
        static_cast<double>(t.tb * t.tm * t.tn) / (static_cast<double>(l.g.batch) * l.mp * l.np);
    const double active = static_cast<double>(std::min<int64_t>(
        chip.cores, bBlocks * mBlocks * nBlocks *
                        (splitsK(bBlocks * mBlocks * nBlocks, kChunks, chip.cores) ? kChunks : 1)));
    const double firstIn = active * (l.lhsHbm / static_cast<double>(bBlocks * mBlocks * kChunks) +
                                     l.rhsHbm / static_cast<double>(bBlocks * nBlocks * kChunks)) +
                           l.resident;
    return estimatePipeline(chip, steps, firstIn, active * l.outHbm * share, traffic,
                            std::max(mxu, vpu));
}

// The GEMM of `op` (the kernel's largest matrix op; the others add their MXU passes) with
// its padded sizes and its traffic: the lhs' and rhs' HBM sources, the other operands
// resident in VMEM or streamed with the output tiles, the output and the epilogue's work.
GemmLayout gemmLayoutOf(const HloInstruction& kernel, const BodyWork& work,
                        const KernelBuffers& buffers, const Chip& chip, const HloInstruction* op,
                        std::string& typeNote) {
    GemmLayout l;
    l.g = gemmOf(*op, chip, typeNote);
    for (const HloInstruction* other : work.matrixOps)
        if (other != op) l.g.flops += CostAnalysis::of(*other).flops;
    const double otherFactor = work.matrixOps.size() > 1 && CostAnalysis::of(*op).flops > 0
                                   ? l.g.flops / CostAnalysis::of(*op).flops
                                   : 1;
    l.g.passes *= otherFactor;
    l.mp = std::max<int64_t>(1, ceilDiv(l.g.m, l.g.rowTile) * l.g.rowTile);
    l.np = std::max<int64_t>(1, ceilDiv(l.g.n, chip.mxuColumns) * chip.mxuColumns);
    l.kp = std::max<int64_t>(1, ceilDiv(l.g.k, chip.mxuRows) * chip.mxuRows);
    l.g.batch = std::max<int64_t>(1, l.g.batch);

    // HBM sources of the lhs and rhs; the other operands stream with the output tiles or stay
    // resident.
    std::set<int64_t> lhsSources, rhsSources;
    if (kernel.opcode() == HloOpcode::kFusion) {
        lhsSources = sourcesOf(op->operand(0), kernel);
        rhsSources = sourcesOf(op->operand(1), kernel);
    } else {
        lhsSources = {0};
        rhsSources = {1};
    }
    // By kernel operand (an operand feeding both sides, x @ x^T, counts on both).
    auto feeds = [&](const std::set<int64_t>& sources, const HloInstruction* operand) {
        for (int64_t index : sources)
            if (index >= 0 && index < kernel.operandCount() && kernel.operand(index) == operand)
                return true;
        return false;
    };
    const double residentLimit = chip.vmemBytes / 16;
    for (const Buffer& b : buffers.operands) {
        const bool lhs = feeds(lhsSources, b.source), rhs = feeds(rhsSources, b.source);
        if (lhs) l.lhsHbm += static_cast<double>(b.bytes);
        if (rhs) l.rhsHbm += static_cast<double>(b.bytes);
        if (lhs || rhs) continue;
        if (static_cast<double>(b.bytes) <= residentLimit)
            l.resident += static_cast<double>(b.bytes);
        else
            l.extraHbm += static_cast<double>(b.bytes);
    }
    if (lhsSources.empty())
        l.lhsHbm = static_cast<double>(paddedSizeInBytes(op->operand(0)->shape()));
    if (rhsSources.empty())
        l.rhsHbm = static_cast<double>(paddedSizeInBytes(op->operand(1)->shape()));
    for (const Buffer& b : buffers.outputs) l.outHbm += static_cast<double>(b.bytes);
    l.epilogueOps = work.vregOps;
    l.epilogueTranscendentals = work.transcendentals;
    return l;
}

// The tiles with the best estimate whose working set fits VMEM; when none fits, the smallest
// (their excess in `spill` bytes). `plan`'s note says why it spills or splits K.
GemmTiles chooseGemmTiles(const GemmLayout& l, const Chip& chip, KernelPlan& plan,
                          int64_t& spill) {
    const double budget = chip.vmemBytes;
    GemmTiles best;
    double bestEstimate = std::numeric_limits<double>::infinity();
    bool fullKFits = false;
    const std::vector<int64_t> tms = tileCandidates(l.g.rowTile, l.mp, 4096);
    const std::vector<int64_t> tns = tileCandidates(chip.mxuColumns, l.np, 8192);
    const std::vector<int64_t> tks = tileCandidates(chip.mxuRows, l.kp, 1 << 30);
    const std::vector<int64_t> tbs = tileCandidates(1, l.g.batch, 1 << 30);
    GemmTiles smallest{1, tms.front(), tns.front(), tks.front()};
    for (int64_t tb : tbs)
        for (int64_t tm : tms)
            for (int64_t tn : tns)
                for (int64_t tk : tks) {
                    const GemmTiles t{tb, tm, tn, tk};
                    if (gemmWorkingSet(l, t) > budget) continue;
                    if (tk == l.kp) fullKFits = true;
                    const double estimate = gemmEstimate(l, t, chip);
                    if (estimate < bestEstimate) bestEstimate = estimate, best = t;
                }
    const GemmTiles minimalFullK{1, tms.front(), tns.front(), l.kp};
    if (!std::isfinite(bestEstimate)) {
        best = smallest;
        const double ws = gemmWorkingSet(l, best);
        spill = static_cast<int64_t>(std::ceil(ws - budget));
        plan.fitsVmem = false;
        plan.note = "spills: the smallest blocks (" + std::to_string(best.tm) + "x" +
                    std::to_string(best.tk) + " by " + std::to_string(best.tk) + "x" +
                    std::to_string(best.tn) + ") need " + formatBytes(ws) +
                    " of VMEM, more than its " + formatBytes(budget) +
                    "; the excess is written to HBM and read back "
                    "every block";
    } else if (!fullKFits) {
        plan.fitsVmem = false;
        plan.note = "split: one output tile (" + std::to_string(minimalFullK.tm) + "x" +
                    std::to_string(minimalFullK.tn) +
                    ") with the whole contracting dimension (K=" + std::to_string(l.g.k) +
                    ") needs " + formatBytes(gemmWorkingSet(l, minimalFullK)) +
                    " of VMEM, more than its " + formatBytes(budget) + "; K is chunked into " +
                    std::to_string(ceilDiv(l.kp, best.tk)) + " pieces accumulated in VMEM";
    }
    return best;
}

}  // namespace

KernelPlan planMatrix(const HloInstruction& kernel, const BodyWork& work,
                      const KernelBuffers& buffers, const Chip& chip) {
    KernelPlan plan;
    plan.kind = kindOf(work);
    // The largest matrix op sets the tile loop; others (rare) add their MXU time.
    const HloInstruction* op = work.matrixOps.front();
    for (const HloInstruction* candidate : work.matrixOps)
        if (CostAnalysis::of(*candidate).flops > CostAnalysis::of(*op).flops) op = candidate;
    std::string typeNote;
    GemmLayout l = gemmLayoutOf(kernel, work, buffers, chip, op, typeNote);
    plan.prologueBytes = static_cast<int64_t>(l.resident);
    int64_t spill = 0;
    const GemmTiles best = chooseGemmTiles(l, chip, plan, spill);
    if (!typeNote.empty()) plan.note += (plan.note.empty() ? "" : "; ") + typeNote;
    const int64_t kChunks = ceilDiv(l.kp, best.tk);
    plan.splits = kChunks;
    plan.blocks =
        ceilDiv(l.g.batch, best.tb) * ceilDiv(l.mp, best.tm) * ceilDiv(l.np, best.tn) * kChunks;
    const double budget = chip.vmemBytes;
    plan.vmemPeakBytes = static_cast<int64_t>(std::min(gemmWorkingSet(l, best), budget));
    std::ostringstream tiling;
    tiling << "GEMM " << (l.g.batch > 1 ? std::to_string(l.g.batch) + "x" : "") << l.g.m << "x"
           << l.g.k << "x" << l.g.n << " (padded " << l.mp << "x" << l.kp << "x" << l.np
           << "), tiles " << (best.tb > 1 ? std::to_string(best.tb) + "x" : "") << best.tm << "x"
           << best.tk << "x" << best.tn << ", " << plan.blocks << " blocks, " << l.g.passes
           << " MXU pass" << (l.g.passes == 1 ? "" : "es");
    if (chip.cores > 1)
        tiling << ", " << chip.cores << " cores"
               << (splitsK(plan.blocks / kChunks, kChunks, chip.cores) ? " sharing the K chunks"
                                                                       : "");
    plan.tiling = tiling.str();
    if (spill > 0) {
        // Spilled bytes go out and come back with every block: fold them into the output stream and
        // the inputs.
        l.outHbm += static_cast<double>(spill) * static_cast<double>(plan.blocks);
        l.extraHbm += static_cast<double>(spill) * static_cast<double>(plan.blocks);
    }
    plan.steps = std::make_unique<GemmSteps>(l, best, chip);
    return plan;
}

// Whether the matrix ops' multiply-adds take less time on the VPU (two
// register ops per multiply-add) than on the MXU with K and N padded to its
// 128 x 128 weight tiles (a depthwise convolution: K = window, N = 1 per group).
bool vpuIsFaster(const BodyWork& work, const Chip& chip) {
    double mxu = 0, vpu = 0;
    for (const HloInstruction* op : work.matrixOps) {
        if (op->operandCount() < 2) return false;
        std::string unused;
        const Gemm g = gemmOf(*op, chip, unused);
        const int64_t mp = std::max<int64_t>(1, ceilDiv(g.m, g.rowTile) * g.rowTile);
        mxu += mxuCycles(chip, g, std::max<int64_t>(1, g.batch), mp, std::max<int64_t>(1, g.k),
                         std::max<int64_t>(1, g.n)) /
               chip.clockHz;
        vpu += g.flops / static_cast<double>(chip.sublanes * chip.lanes) / chip.vregOpsPerSecond;
    }
    return vpu < mxu;
}

}  // namespace hloscope::tpu_sim
