// hloscope-cli subcommands. Each returns the process exit code:
// 0 success, 1 failure (a file failed), 2 bad usage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hloscope::cli {

int runParse(const std::vector<std::string>& args);
int runPrint(const std::vector<std::string>& args);
int runStats(const std::vector<std::string>& args);
int runEval(const std::vector<std::string>& args);     // eval.cc
int runConform(const std::vector<std::string>& args);  // eval.cc
int runOpt(const std::vector<std::string>& args);      // opt.cc
int runBisect(const std::vector<std::string>& args);   // opt.cc
int runPasses(const std::vector<std::string>& args);   // opt.cc
int runCost(const std::vector<std::string>& args);     // cost.cc
int runExplain(const std::vector<std::string>& args);  // cost.cc
int runCalibrate(const std::vector<std::string>& args);  // calibrate.cc
int runCalibrateFromHistory(const std::vector<std::string>& args);  // calibrate_fit.cc
int runRun(const std::vector<std::string>& args);        // run.cc
int runImportRun(const std::vector<std::string>& args);  // gpu.cc
int runCalibrateGpuProbe(const std::vector<std::string>& args);  // gpu.cc
int runCalc(const std::vector<std::string>& args);       // estimate.cc
int runEstimate(const std::vector<std::string>& args);   // estimate.cc
int runLayers(const std::vector<std::string>& args);     // layers.cc
int runVsXla(const std::vector<std::string>& args);      // layers.cc
int runCapture(const std::vector<std::string>& args);    // capture.cc
int runParity(const std::vector<std::string>& args);     // parity.cc

// Usage text of the whole tool.
std::string usage();
// The part of usage() about one command; empty for an unknown command.
std::string commandUsage(const std::string& command);

}  // namespace hloscope::cli
