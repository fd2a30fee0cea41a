#include "app/cli/tpu.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "compiler/backends/tpu/tpu_device.h"

namespace hloscope::cli {
namespace {

const TpuDevice* asTpu(const ExecutionDevice& device) {
    return dynamic_cast<const TpuDevice*>(&device);
}

std::string bytesText(int64_t bytes) {
    char buffer[32];
    if (bytes >= (int64_t{1} << 30))
        std::snprintf(buffer, sizeof buffer, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
    else if (bytes >= (int64_t{1} << 20))
        std::snprintf(buffer, sizeof buffer, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
    else if (bytes >= 1024)
        std::snprintf(buffer, sizeof buffer, "%.1f KiB", static_cast<double>(bytes) / 1024);
    else
        std::snprintf(buffer, sizeof buffer, "%lld B", static_cast<long long>(bytes));
    return buffer;
}

}  // namespace

bool isTpuSimulator(const ExecutionDevice& device) { return asTpu(device) != nullptr; }

void printTpuSimulations(const ExecutionDevice& device,
                         const std::vector<ModeMeasurement>& reports) {
    const TpuDevice* tpu = asTpu(device);
    if (!tpu) return;
    for (const ModeMeasurement& report : reports) {
        const std::string mode(executionModeName(report.mode));
        auto simulation = tpu->simulation(*report.module);
        if (!simulation.isOk()) {
            std::printf("%s: simulation details unavailable: %s\n", mode.c_str(),
                        simulation.status().message().c_str());
            continue;
        }
        const TpuSimulation& s = *simulation;
        std::printf(
            "%s on %s (simulated): %.4f ms, analytical model %.4f ms; MXU %.1f%%, VPU %.1f%%, HBM "
            "%.1f%%\n",
            mode.c_str(), s.target.c_str(), s.totalSeconds * 1e3, s.analyticalSeconds * 1e3,
            100 * s.mxuUtilisation, 100 * s.vpuUtilisation, 100 * s.hbmUtilisation);
        const int64_t waste = s.paddedBytes - s.logicalBytes;
        std::printf(
            "%s: padding of the tiled layouts: %s logical, %s allocated (%s waste, %.1f%%)\n",
            mode.c_str(), bytesText(s.logicalBytes).c_str(), bytesText(s.paddedBytes).c_str(),
            bytesText(waste).c_str(),
            s.paddedBytes > 0
                ? 100.0 * static_cast<double>(waste) / static_cast<double>(s.paddedBytes)
                : 0.0);
        std::vector<const TpuKernelTiming*> top;
        for (const TpuKernelTiming& k : s.kernels) top.push_back(&k);
        std::stable_sort(top.begin(), top.end(),
                         [](const TpuKernelTiming* a, const TpuKernelTiming* b) {
                             return a->seconds * static_cast<double>(a->executions) >
                                    b->seconds * static_cast<double>(b->executions);
                         });
        if (top.size() > 10) top.resize(10);
        std::printf("%s: %-28s %-12s %10s %6s %6s %6s %11s  %s\n", mode.c_str(), "kernel", "kind",
                    "ms", "MXU%", "VPU%", "HBM%", "VMEM", "tiling / note");
        for (const TpuKernelTiming* k : top)
            std::printf("%s: %-28s %-12s %10.4f %6.1f %6.1f %6.1f %11s  %s%s%s\n", mode.c_str(),
                        k->name.c_str(), k->kind.c_str(),
                        k->seconds * static_cast<double>(k->executions) * 1e3,
                        100 * k->mxuUtilisation, 100 * k->vpuUtilisation, 100 * k->hbmUtilisation,
                        bytesText(k->vmemPeakBytes).c_str(), k->tiling.c_str(),
                        k->note.empty() ? "" : "; ", k->note.c_str());
        for (const std::string& note : s.notes)
            std::printf("%s: note: %s\n", mode.c_str(), note.c_str());
    }
}

nlohmann::ordered_json tpuSimulationJson(const ExecutionDevice& device,
                                         const ModeMeasurement& report) {
    using Json = nlohmann::ordered_json;
    const TpuDevice* tpu = asTpu(device);
    if (!tpu || !report.module) return Json();
    auto simulation = tpu->simulation(*report.module);
    if (!simulation.isOk()) return Json();
    const TpuSimulation& s = *simulation;
    Json j;
    j["target"] = s.target;
    j["total_ms"] = s.totalSeconds * 1e3;
    j["analytical_ms"] = s.analyticalSeconds * 1e3;
    j["mxu_utilisation"] = s.mxuUtilisation;
    j["vpu_utilisation"] = s.vpuUtilisation;
    j["hbm_utilisation"] = s.hbmUtilisation;
    j["logical_bytes"] = s.logicalBytes;
    j["padded_bytes"] = s.paddedBytes;
    Json kernels = Json::array();
    for (const TpuKernelTiming& k : s.kernels)
        kernels.push_back({{"name", k.name},
                           {"kind", k.kind},
                           {"ms", k.seconds * 1e3},
                           {"executions", k.executions},
                           {"analytical_ms", k.analyticalSeconds * 1e3},
                           {"mxu_utilisation", k.mxuUtilisation},
                           {"vpu_utilisation", k.vpuUtilisation},
                           {"hbm_utilisation", k.hbmUtilisation},
                           {"hbm_bytes", k.hbmBytes},
                           {"vmem_peak_bytes", k.vmemPeakBytes},
                           {"fits_vmem", k.fitsVmem},
                           {"tiling", k.tiling},
                           {"note", k.note}});
    j["kernels"] = std::move(kernels);
    Json padding = Json::array();
    for (const TpuBufferPadding& p : s.padding)
        if (p.paddedBytes != p.logicalBytes)
            padding.push_back({{"name", p.name},
                               {"shape", p.shape},
                               {"logical_bytes", p.logicalBytes},
                               {"padded_bytes", p.paddedBytes}});
    j["padded_buffers"] = std::move(padding);
    j["notes"] = s.notes;
    return j;
}

}  // namespace hloscope::cli
