// The module walk of the TPU timeline simulator (kernels in schedule order,
// loops, calls, conditionals), the padding report and the Chrome trace.
#include "compiler/backends/tpu/tpu_simulator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <sstream>

#include "compiler/backends/tpu/tpu_sim_internal.h"
#include "compiler/cost/cost_analysis.h"
#include "compiler/cost/performance_model.h"
#include "compiler/layout/tpu_tiling.h"
#include "core/ir/hlo_computation.h"

namespace hloscope {

namespace {

using tpu_sim::Chip;

// Kernels and events of a stretch of the timeline, with the busy time of
// each unit (executions included) for the utilisations.
struct Timeline {
    double now = 0;
    std::vector<TpuKernelTiming> kernels;
    std::vector<TpuTraceEvent> events;
    std::vector<std::string> notes;
    double mxuBusy = 0, vpuBusy = 0, hbmBytes = 0;

    void append(Timeline&& other) {
        now = other.now;
        for (TpuKernelTiming& k : other.kernels) kernels.push_back(std::move(k));
        for (TpuTraceEvent& e : other.events) events.push_back(std::move(e));
        for (std::string& n : other.notes) notes.push_back(std::move(n));
        mxuBusy += other.mxuBusy;
        vpuBusy += other.vpuBusy;
        hbmBytes += other.hbmBytes;
    }
};

class Walker {
public:
    Walker(const Chip& chip, const TargetDescription& target) : m_chip(chip), m_target(target) {}

    void computation(const HloComputation& computation, int64_t executions, Timeline& timeline) {
        for (const auto& owned : computation.instructions())
            instruction(*owned, executions, timeline);
    }

private:
    void instruction(const HloInstruction& instruction, int64_t executions, Timeline& timeline) {
        switch (instruction.opcode()) {
            case HloOpcode::kWhile:
                loop(instruction, executions, timeline);
                return;
            case HloOpcode::kCall:
            case HloOpcode::kAsyncStart:
                for (const HloComputation* callee : instruction.calledComputations())
                    if (callee != nullptr) computation(*callee, executions, timeline);
                return;
            case HloOpcode::kConditional:
                conditional(instruction, executions, timeline);
                return;
            default:
                break;
        }
        if (CostAnalysis::isFree(instruction)) return;
        kernel(instruction, executions, timeline);
    }

    void loop(const HloInstruction& loop, int64_t executions, Timeline& timeline) {
        const std::optional<int64_t> known = CostAnalysis::whileTripCount(loop);
        const int64_t trips = std::max<int64_t>(1, known.value_or(1));
        Timeline body;
        body.now = timeline.now;
        const double start = timeline.now;
        if (const HloComputation* condition = loop.whileCondition())
            computation(*condition, executions * trips, body);
        if (const HloComputation* bodyComputation = loop.whileBody())
            computation(*bodyComputation, executions * trips, body);
        const double iteration = body.now - start;
        body.mxuBusy *= static_cast<double>(trips);
        body.vpuBusy *= static_cast<double>(trips);
        body.hbmBytes *= static_cast<double>(trips);
        body.now = start + iteration * static_cast<double>(trips);
        std::string note =
            known ? "while " + loop.name() + ": " + std::to_string(trips) +
                        " iterations (the trace shows the first)"
                  : "while " + loop.name() + ": trip count unknown, 1 iteration simulated";
        TpuTraceEvent event;
        event.track = "kernels";
        event.name = loop.name() + " (" + std::to_string(trips) + " iteration" +
                     (trips == 1 ? "" : "s") + ")";
        event.kernel = loop.name();
        event.startSeconds = start;
        event.durationSeconds = body.now - start;
        body.events.push_back(std::move(event));
        body.notes.push_back(std::move(note));
        timeline.append(std::move(body));
    }

    void conditional(const HloInstruction& conditional, int64_t executions, Timeline& timeline) {
        Timeline slowest;
        std::string slowestName;
        bool first = true;
        for (const HloComputation* branch : conditional.calledComputations()) {
            if (branch == nullptr) continue;
            Timeline candidate;
            candidate.now = timeline.now;
            computation(*branch, executions, candidate);
            if (first || candidate.now > slowest.now) {
                slowest = std::move(candidate);
                slowestName = branch->name();
            }
            first = false;
        }
        if (first) return;
        slowest.notes.push_back("conditional " + conditional.name() + ": its slowest branch (" +
                                slowestName + ") simulated");
        timeline.append(std::move(slowest));
    }

    void kernel(const HloInstruction& instruction, int64_t executions, Timeline& timeline) {
        tpu_sim::KernelPlan plan = tpu_sim::planKernel(instruction, m_chip);
        const KernelPrediction prediction = predictKernelDetailed(instruction, m_target);
        std::array<double, kOpClassCount> ones;
        ones.fill(1.0);
        TpuKernelTiming timing;
        timing.name = instruction.name();
        timing.opcode = std::string(hloOpcodeString(instruction.opcode()));
        timing.kind = plan.kind;
        timing.startSeconds = timeline.now;
        timing.analyticalSeconds = prediction.totalSeconds;
        timing.rooflineSeconds = prediction.parts.seconds(ones);
        timing.executions = executions;
        timing.note = plan.note;
        timing.tiling = plan.tiling;
        const double bandwidth = m_chip.hbmBytesPerSecond;
        if (!plan.modelled) {
            timing.seconds = prediction.totalSeconds;
            timing.hbmBytes = static_cast<int64_t>(std::llround(prediction.cost.bytesAccessed()));
            timing.flops = static_cast<int64_t>(std::llround(prediction.cost.flops));
            timing.dmaSeconds = static_cast<double>(timing.hbmBytes) / bandwidth;
            timing.computeSeconds = prediction.computeSeconds;
            if (timing.seconds > 0)
                timing.hbmUtilisation = std::min(1.0, timing.dmaSeconds / timing.seconds);
        } else {
            tpu_sim::PipelineRun run = tpu_sim::runPipeline(plan, m_chip);
            timing.seconds = run.seconds;
            timing.hbmBytes = run.hbmBytes;
            timing.flops = static_cast<int64_t>(std::llround(run.flops));
            timing.vmemPeakBytes = plan.vmemPeakBytes;
            timing.fitsVmem = plan.fitsVmem;
            timing.tiles = plan.blocks;
            timing.splits = plan.splits;
            timing.dmaSeconds = run.dmaSeconds;
            timing.computeSeconds = run.computeSeconds;
            if (run.seconds > 0) {
                timing.mxuUtilisation = run.mxuBusySeconds / run.seconds;
                timing.vpuUtilisation = run.vpuBusySeconds / run.seconds;
                timing.hbmUtilisation = run.dmaSeconds / run.seconds;
            }
            for (TpuTraceEvent& event : run.events) {
                event.kernel = instruction.name();
                event.startSeconds += timeline.now;
                timeline.events.push_back(std::move(event));
            }
        }
        // One pass of this timeline; enclosing loops scale it by their trip counts.
        timeline.mxuBusy += timing.mxuUtilisation * timing.seconds;
        timeline.vpuBusy += timing.vpuUtilisation * timing.seconds;
        timeline.hbmBytes += static_cast<double>(timing.hbmBytes);
        TpuTraceEvent event;
        event.track = "kernels";
        event.name = instruction.name();
        event.kernel = instruction.name();
        event.startSeconds = timeline.now;
        event.durationSeconds = timing.seconds;
        event.bytes = timing.hbmBytes;
        event.flops = timing.flops;
        timeline.events.push_back(std::move(event));
        timeline.now += timing.seconds;
        timeline.kernels.push_back(std::move(timing));
    }

    const Chip& m_chip;
    const TargetDescription& m_target;
};

void addPadding(const std::string& name, const Shape& shape, TpuSimulation& simulation) {
    if (shape.isTuple()) {
        for (int64_t i = 0; i < shape.tupleCount(); ++i)
            addPadding(name + "{" + std::to_string(i) + "}", shape.tupleShape(i), simulation);
        return;
    }
    if (!shape.isArray()) return;
    TpuBufferPadding buffer;
    buffer.name = name;
    buffer.shape = shape.toString(/*printLayout=*/true);
    buffer.logicalBytes = logicalSizeInBytes(shape);
    buffer.paddedBytes = paddedSizeInBytes(shape);
    simulation.logicalBytes += buffer.logicalBytes;
    simulation.paddedBytes += buffer.paddedBytes;
    simulation.padding.push_back(std::move(buffer));
}

// The buffers a run allocates: every array an instruction produces in a
// computation that is not a fusion's body, except values that alias
// another (bitcasts, get-tuple-elements, tuples, a called computation's
// parameters).
void collectPadding(const HloModule& module, TpuSimulation& simulation) {
    for (const auto& computation : module.computations()) {
        if (computation->fusionInstruction() != nullptr) continue;
        const bool entry = computation.get() == module.entryComputation();
        for (const auto& owned : computation->instructions()) {
            const HloInstruction& instruction = *owned;
            switch (instruction.opcode()) {
                case HloOpcode::kParameter:
                    if (!entry) continue;
                    break;
                case HloOpcode::kConstant:
                    break;
                case HloOpcode::kWhile:
                case HloOpcode::kCall:
                case HloOpcode::kConditional:
                    continue;  // their results are their computations' buffers
                default:
                    if (CostAnalysis::isFree(instruction)) continue;
                    break;
            }
            addPadding(instruction.name(), instruction.shape(), simulation);
        }
    }
}

std::string percent(double part, double whole) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(1) << (whole > 0 ? 100.0 * part / whole : 0.0) << "%";
    return out.str();
}

void appendJsonString(std::string& out, const std::string& text) {
    out += '"';
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof(escaped), "\\u%04x", u);
            out += escaped;
        } else {
            out += c;
        }
    }
    out += '"';
}

// Shortest round-tripping form; JSON has no infinities or NaN.
void appendJsonNumber(std::string& out, double value) {
    if (!std::isfinite(value)) value = 0;
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out.append(buffer, result.ptr);
}

}  // namespace

StatusOr<TpuSimulation> simulateTpu(const HloModule& prepared, const TargetDescription& target) {
    HLO_ASSIGN_OR_RETURN(Chip chip, tpu_sim::chipFromTarget(target));
    const HloComputation* entry = prepared.entryComputation();
    if (entry == nullptr)
        return failedPrecondition("module '" + prepared.name() + "' has no entry computation");
    Timeline timeline;
    Walker(chip, target).computation(*entry, 1, timeline);
    TpuSimulation simulation;
    simulation.target = target.name;
    simulation.totalSeconds = timeline.now;
    simulation.kernels = std::move(timeline.kernels);
    simulation.events = std::move(timeline.events);
    simulation.notes = std::move(timeline.notes);
    if (simulation.totalSeconds > 0) {
        simulation.mxuUtilisation = timeline.mxuBusy / simulation.totalSeconds;
        simulation.vpuUtilisation = timeline.vpuBusy / simulation.totalSeconds;
        simulation.hbmUtilisation =
            timeline.hbmBytes / chip.hbmBytesPerSecond / simulation.totalSeconds;
    }
    simulation.analyticalSeconds = predictModule(prepared, target).totalSeconds;
    collectPadding(prepared, simulation);
    return simulation;
}

std::string tpuChromeTraceJson(const TpuSimulation& simulation) {
    // Written directly (a model's trace has up to millions of events).
    static const std::vector<std::string> tracks = {"kernels", "HBM->VMEM", "MXU", "VPU",
                                                    "VMEM->HBM"};
    auto tidOf = [&](const std::string& track) -> int64_t {
        auto it = std::find(tracks.begin(), tracks.end(), track);
        return it == tracks.end() ? static_cast<int64_t>(tracks.size()) + 1
                                  : (it - tracks.begin()) + 1;
    };
    std::string out;
    out.reserve(256 + simulation.events.size() * 160);
    out += "{\"traceEvents\":[";
    bool first = true;
    auto begin = [&] {
        if (!first) out += ",\n";
        first = false;
    };
    begin();
    out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":";
    appendJsonString(out, simulation.target + " (simulated TPU)");
    out += "}}";
    for (const std::string& track : tracks) {
        const std::string tid = std::to_string(tidOf(track));
        begin();
        out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + tid +
               ",\"args\":{\"name\":";
        appendJsonString(out, track);
        out += "}}";
        begin();
        out += "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":" + tid +
               ",\"args\":{\"sort_index\":" + tid + "}}";
    }
    std::map<std::string, const TpuKernelTiming*> byName;
    for (const TpuKernelTiming& kernel : simulation.kernels) byName.emplace(kernel.name, &kernel);
    for (const TpuTraceEvent& event : simulation.events) {
        begin();
        out += "{\"name\":";
        appendJsonString(out, event.name);
        out += ",\"cat\":";
        appendJsonString(out, event.track);
        out += ",\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(tidOf(event.track)) + ",\"ts\":";
        appendJsonNumber(out, event.startSeconds * 1e6);
        out += ",\"dur\":";
        appendJsonNumber(out, event.durationSeconds * 1e6);
        out += ",\"args\":{\"kernel\":";
        appendJsonString(out, event.kernel);
        if (event.bytes > 0) out += ",\"bytes\":" + std::to_string(event.bytes);
        if (event.flops > 0) out += ",\"flops\":" + std::to_string(event.flops);
        auto it = byName.find(event.kernel);
        if (event.track == "kernels" && event.name == event.kernel && it != byName.end()) {
            const TpuKernelTiming& k = *it->second;
            auto field = [&](const char* key, double value) {
                out += ",\"";
                out += key;
                out += "\":";
                appendJsonNumber(out, value);
            };
            out += ",\"opcode\":";
            appendJsonString(out, k.opcode);
            out += ",\"kind\":";
            appendJsonString(out, k.kind);
            field("analytical_us", k.analyticalSeconds * 1e6);
            field("mxu_utilisation", k.mxuUtilisation);
            field("vpu_utilisation", k.vpuUtilisation);
            field("hbm_utilisation", k.hbmUtilisation);
            field("vmem_peak_bytes", static_cast<double>(k.vmemPeakBytes));
            out += std::string(",\"fits_vmem\":") + (k.fitsVmem ? "true" : "false");
            field("tiles", static_cast<double>(k.tiles));
            field("splits", static_cast<double>(k.splits));
            field("executions", static_cast<double>(k.executions));
            if (!k.tiling.empty()) {
                out += ",\"tiling\":";
                appendJsonString(out, k.tiling);
            }
            if (!k.note.empty()) {
                out += ",\"note\":";
                appendJsonString(out, k.note);
            }
        }
        out += "}}";
    }
    out += "],\n\"displayTimeUnit\":\"ns\",\"otherData\":{\"target\":";
    appendJsonString(out, simulation.target);
    out += ",\"total_us\":";
    appendJsonNumber(out, simulation.totalSeconds * 1e6);
    out += ",\"analytical_us\":";
    appendJsonNumber(out, simulation.analyticalSeconds * 1e6);
    out += ",\"mxu_utilisation\":";
    appendJsonNumber(out, simulation.mxuUtilisation);
    out += ",\"vpu_utilisation\":";
    appendJsonNumber(out, simulation.vpuUtilisation);
    out += ",\"hbm_utilisation\":";
    appendJsonNumber(out, simulation.hbmUtilisation);
    out += "}}\n";
    return out;
}

std::string tpuPaddingReport(const TpuSimulation& simulation) {
    std::vector<const TpuBufferPadding*> rows;
    for (const TpuBufferPadding& buffer : simulation.padding) rows.push_back(&buffer);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const TpuBufferPadding* a, const TpuBufferPadding* b) {
                         return a->paddedBytes - a->logicalBytes > b->paddedBytes - b->logicalBytes;
                     });
    size_t nameWidth = 6, shapeWidth = 5;
    for (const TpuBufferPadding* row : rows) {
        nameWidth = std::max(nameWidth, row->name.size());
        shapeWidth = std::max(shapeWidth, row->shape.size());
    }
    std::ostringstream out;
    out << std::left << std::setw(static_cast<int>(nameWidth)) << "buffer"
        << "  " << std::setw(static_cast<int>(shapeWidth)) << "shape" << std::right << "  "
        << std::setw(12) << "logical"
        << "  " << std::setw(12) << "padded"
        << "  " << std::setw(7) << "waste"
        << "\n";
    for (const TpuBufferPadding* row : rows) {
        out << std::left << std::setw(static_cast<int>(nameWidth)) << row->name << "  "
            << std::setw(static_cast<int>(shapeWidth)) << row->shape << std::right << "  "
            << std::setw(12) << tpu_sim::formatBytes(static_cast<double>(row->logicalBytes)) << "  "
            << std::setw(12) << tpu_sim::formatBytes(static_cast<double>(row->paddedBytes)) << "  "
            << std::setw(7)
            << percent(static_cast<double>(row->paddedBytes - row->logicalBytes),
                       static_cast<double>(row->paddedBytes))
            << "\n";
    }
    out << "total: " << rows.size() << " buffer" << (rows.size() == 1 ? "" : "s") << ", logical "
        << tpu_sim::formatBytes(static_cast<double>(simulation.logicalBytes)) << ", padded "
        << tpu_sim::formatBytes(static_cast<double>(simulation.paddedBytes)) << ", waste "
        << tpu_sim::formatBytes(
               static_cast<double>(simulation.paddedBytes - simulation.logicalBytes))
        << " ("
        << percent(static_cast<double>(simulation.paddedBytes - simulation.logicalBytes),
                   static_cast<double>(simulation.paddedBytes))
        << " of the padded bytes)\n";
    return out.str();
}

}  // namespace hloscope
