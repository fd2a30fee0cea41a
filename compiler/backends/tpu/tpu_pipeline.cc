// The event-driven double-buffered pipeline of one kernel (see
// tpu_simulator.h): DMAs with issue latency, served in issue order by a
// read queue (HBM->VMEM) and a write queue (VMEM->HBM) whose heads share the
// HBM bandwidth; an in-order compute stage; two buffers per side.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <utility>

#include "compiler/backends/tpu/tpu_sim_internal.h"

namespace hloscope::tpu_sim {

namespace {

// Steps recorded one by one at each end of a long loop; the middle ones are
// merged into one event per track.
constexpr int64_t kDetailedSteps = 16;

struct Transfer {
    int64_t bytes = 0;
    double remaining = 0;
    double issue = 0;
    double dataStart = 0;  // issue + latency: from then on it moves data
    bool active = false;
    bool in = true;
    int64_t step = 0;  // -1: resident operands, -2: accumulated outputs
};

struct StepState {
    GridStep work;
    int64_t index = 0;
    bool inDone = false;
};

// The merged middle of a long loop, per track.
struct Merged {
    double start = std::numeric_limits<double>::infinity();
    double end = 0;
    int64_t bytes = 0;
    double flops = 0;
    int64_t first = -1, last = -1;
    void add(double s, double e, int64_t b, double f, int64_t step) {
        start = std::min(start, s);
        end = std::max(end, e);
        bytes += b;
        flops += f;
        if (first < 0) first = step;
        last = step;
    }
};

class Pipeline {
public:
    Pipeline(KernelPlan& plan, const Chip& chip)
        : m_plan(plan), m_chip(chip), m_count(plan.steps->count()) {}

    PipelineRun run() {
        if (m_plan.prologueBytes > 0)
            addTransfer(m_plan.prologueBytes, true, -1);
        else
            m_prologueDone = true;
        while (true) {
            issueWhatIsReady();
            if (finished()) break;
            const double next = nextEventTime();
            if (!std::isfinite(next))
                break;  // nothing can move: cannot happen with a consistent plan
            advanceTo(next);
        }
        flushMerged();
        m_run.seconds = m_now;
        m_run.steps = m_count;
        m_run.dmaSeconds = static_cast<double>(m_run.hbmBytes) / m_chip.hbmBytesPerSecond;
        return std::move(m_run);
    }

private:
    bool detailed(int64_t step) const {
        return step < kDetailedSteps || step >= m_count - kDetailedSteps;
    }

    void addTransfer(int64_t bytes, bool in, int64_t step) {
        Transfer t;
        t.bytes = bytes;
        t.remaining = static_cast<double>(bytes);
        t.issue = m_now;
        t.dataStart = m_now + m_chip.dmaLatencySeconds;
        t.in = in;
        t.step = step;
        m_transfers.push_back(t);
        m_run.hbmBytes += bytes;
        if (!in) ++m_outsInFlight;
    }

    bool finished() const {
        return m_computed == m_count && !m_computing && m_transfers.empty() && m_epilogueIssued;
    }

    void issueWhatIsReady() {
        bool changed = true;
        while (changed) {
            changed = false;
            // Block i's input may load once block i-2 has been computed
            // (its buffer is free): two input buffers.
            if (m_fetched < m_count && m_fetched <= m_computed + 1) {
                StepState state;
                state.work = m_plan.steps->next();
                state.index = m_fetched++;
                state.inDone = state.work.inBytes <= 0;
                m_window.push_back(state);
                if (state.work.inBytes > 0) addTransfer(state.work.inBytes, true, state.index);
                changed = true;
            }
            if (!m_computing && !m_window.empty() && m_prologueDone && m_window.front().inDone &&
                (m_window.front().work.outBytes <= 0 || m_outsInFlight < 2)) {
                startCompute();
                changed = true;
            }
            if (m_computed == m_count && !m_computing && !m_epilogueIssued) {
                m_epilogueIssued = true;
                if (m_plan.epilogueBytes > 0) addTransfer(m_plan.epilogueBytes, false, -2);
                changed = true;
            }
        }
    }

    void startCompute() {
        const StepState& state = m_window.front();
        const GridStep& w = state.work;
        const double begin = m_now + m_chip.gridStepSeconds;
        const double duration = m_chip.gridStepSeconds + std::max(w.mxuSeconds, w.vpuSeconds);
        m_computing = true;
        m_computeEnd = m_now + duration;
        m_run.computeSeconds += duration;
        m_run.mxuBusySeconds += w.mxuBusy;
        m_run.vpuBusySeconds += w.vpuBusy;
        m_run.flops += w.flops;
        const std::string step = std::to_string(state.index);
        if (w.mxuSeconds > 0)
            record("MXU", "MXU step " + step, begin, w.mxuSeconds, 0, w.flops, state.index,
                   m_mergedMxu);
        if (w.vpuSeconds > 0)
            record("VPU", "VPU step " + step, begin, w.vpuSeconds, 0,
                   w.mxuSeconds > 0 ? 0 : w.flops, state.index, m_mergedVpu);
    }

    void record(const char* track, std::string name, double start, double duration, int64_t bytes,
                double flops, int64_t step, Merged& merged) {
        if (step >= 0 && !detailed(step)) {
            merged.add(start, start + duration, bytes, flops, step);
            return;
        }
        TpuTraceEvent event;
        event.track = track;
        event.name = std::move(name);
        event.startSeconds = start;
        event.durationSeconds = duration;
        event.bytes = bytes;
        event.flops = static_cast<int64_t>(std::llround(flops));
        m_run.events.push_back(std::move(event));
    }

    void flushMerged() {
        auto emit = [&](const char* track, const char* what, const Merged& merged) {
            if (merged.first < 0) return;
            TpuTraceEvent event;
            event.track = track;
            event.name = std::string(what) + " steps " + std::to_string(merged.first) + ".." +
                         std::to_string(merged.last) + " (merged)";
            event.startSeconds = merged.start;
            event.durationSeconds = merged.end - merged.start;
            event.bytes = merged.bytes;
            event.flops = static_cast<int64_t>(std::llround(merged.flops));
            m_run.events.push_back(std::move(event));
        };
        emit("HBM->VMEM", "DMA in", m_mergedIn);
        emit("MXU", "MXU", m_mergedMxu);
        emit("VPU", "VPU", m_mergedVpu);
        emit("VMEM->HBM", "DMA out", m_mergedOut);
    }

    // The transfers moving data now: the oldest active one of each queue.
    std::pair<Transfer*, Transfer*> heads() {
        Transfer* in = nullptr;
        Transfer* out = nullptr;
        for (Transfer& t : m_transfers) {
            if (!t.active) continue;
            if (t.in && in == nullptr) in = &t;
            if (!t.in && out == nullptr) out = &t;
        }
        return {in, out};
    }

    double nextEventTime() {
        double next = std::numeric_limits<double>::infinity();
        if (m_computing) next = std::min(next, m_computeEnd);
        for (const Transfer& t : m_transfers)
            if (!t.active) next = std::min(next, t.dataStart);
        const auto [in, out] = heads();
        const double sharers = (in != nullptr ? 1 : 0) + (out != nullptr ? 1 : 0);
        for (const Transfer* head : {in, out})
            if (head != nullptr)
                next = std::min(next, m_now + head->remaining * sharers / m_chip.hbmBytesPerSecond);
        return next;
    }

    void advanceTo(double next) {
        const auto [in, out] = heads();
        const double sharers = (in != nullptr ? 1 : 0) + (out != nullptr ? 1 : 0);
        if (sharers > 0) {
            const double moved = (next - m_now) * m_chip.hbmBytesPerSecond / sharers;
            if (in != nullptr) in->remaining -= moved;
            if (out != nullptr) out->remaining -= moved;
        }
        m_now = std::max(m_now, next);
        // Transfers done (in issue order, so equal times resolve the same way every run).
        for (size_t i = 0; i < m_transfers.size();) {
            Transfer& t = m_transfers[i];
            if (t.active && t.remaining <= 1e-9 * static_cast<double>(t.bytes) + 1e-3) {
                complete(t);
                m_transfers.erase(m_transfers.begin() + static_cast<std::ptrdiff_t>(i));
            } else {
                ++i;
            }
        }
        for (Transfer& t : m_transfers)
            if (!t.active && t.dataStart <= m_now) t.active = true;
        if (m_computing && m_computeEnd <= m_now) finishCompute();
    }

    void complete(const Transfer& t) {
        const double duration = m_now - t.issue;
        if (t.in) {
            if (t.step == -1) {
                m_prologueDone = true;
                record("HBM->VMEM", "DMA in resident operands", t.issue, duration, t.bytes, 0, -1,
                       m_mergedIn);
                return;
            }
            for (StepState& state : m_window)
                if (state.index == t.step) state.inDone = true;
            record("HBM->VMEM", "DMA in step " + std::to_string(t.step), t.issue, duration, t.bytes,
                   0, t.step, m_mergedIn);
            return;
        }
        --m_outsInFlight;
        if (t.step == -2)
            record("VMEM->HBM", "DMA out accumulated outputs", t.issue, duration, t.bytes, 0, -2,
                   m_mergedOut);
        else
            record("VMEM->HBM", "DMA out step " + std::to_string(t.step), t.issue, duration,
                   t.bytes, 0, t.step, m_mergedOut);
    }

    void finishCompute() {
        m_computing = false;
        const StepState state = m_window.front();
        m_window.pop_front();
        ++m_computed;
        if (state.work.outBytes > 0) addTransfer(state.work.outBytes, false, state.index);
    }

    KernelPlan& m_plan;
    const Chip& m_chip;
    const int64_t m_count;
    PipelineRun m_run;
    double m_now = 0;
    std::vector<Transfer> m_transfers;
    std::deque<StepState> m_window;  // fetched, not yet computed
    int64_t m_fetched = 0;
    int64_t m_computed = 0;
    int64_t m_outsInFlight = 0;
    bool m_computing = false;
    double m_computeEnd = 0;
    bool m_prologueDone = false;
    bool m_epilogueIssued = false;
    Merged m_mergedIn, m_mergedMxu, m_mergedVpu, m_mergedOut;
};

}  // namespace

PipelineRun runPipeline(KernelPlan& plan, const Chip& chip) { return Pipeline(plan, chip).run(); }

}  // namespace hloscope::tpu_sim
