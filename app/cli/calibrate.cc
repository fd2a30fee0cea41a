// hloscope-cli calibrate: measures this CPU (compiler/backends/cpu/cpu_calibration.h) and
// writes the cpu target description, every figure's source saying how it was measured.
// `calibrate --from-history` re-fits the efficiency factors from the estimator's history
// (calibrate_fit.cc); `calibrate --gpu-probe` reads a GPU probe (gpu.cc).

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/backends/cpu/cpu_calibration.h"
#include "compiler/targets/target_description.h"

namespace hloscope::cli {

int runCalibrate(const std::vector<std::string>& args) {
    if (std::find(args.begin(), args.end(), "--from-history") != args.end()) return runCalibrateFromHistory(args);
    if (std::find(args.begin(), args.end(), "--gpu-probe") != args.end()) return runCalibrateGpuProbe(args);
    std::string output;
    bool quick = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--quick") quick = true;
        else if (args[i] == "--output" && i + 1 < args.size()) output = args[++i];
        else return usageError("calibrate: unknown argument '" + args[i] + "'");
    }
    std::fprintf(stderr, "calibrate: measuring%s...\n", quick ? " (quick)" : "");
    CpuCalibrationOptions options;
    options.quick = quick;
    auto calibration = calibrateCpu(options);
    if (!calibration.isOk()) {
        std::fprintf(stderr, "%s\n", formatError("calibrate", calibration.status()).c_str());
        return 1;
    }
    for (const std::string& note : calibration->notes) std::fprintf(stderr, "calibrate: %s\n", note.c_str());
    const TargetDescription& target = calibration->target;
    const std::string json = targetDescriptionToJson(target);
    std::fputs(json.c_str(), stdout);
    std::vector<std::string> paths;
    if (!output.empty()) paths.push_back(output);
    if (std::string cache = cpuTargetCachePath(); !cache.empty()) paths.push_back(cache);
    for (const std::string& path : paths) {
        if (Status written = writeTextFile(path, json); !written.isOk()) {
            std::fprintf(stderr, "calibrate: %s\n", written.message().c_str());
            return 1;
        }
        std::fprintf(stderr, "calibrate: wrote %s\n", path.c_str());
    }
    return 0;
}

}  // namespace hloscope::cli
