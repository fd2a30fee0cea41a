// hloscope-cli: headless access to everything hloscope does.
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/gpu/gpu_device.h"
#include "compiler/backends/tpu/tpu_device.h"

int main(int argc, char** argv) {
    hloscope::registerCpuBackend();
    hloscope::registerGpuBackend();
    hloscope::registerTpuBackend();
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::fputs(hloscope::cli::usage().c_str(), stderr);
        return 2;
    }
    const std::string command = args.front();
    args.erase(args.begin());
    if (command == "--help" || command == "-h" || command == "help") {
        std::fputs(hloscope::cli::usage().c_str(), stdout);
        return 0;
    }
    if (command == "--version") {
        std::puts("hloscope-cli " HLOSCOPE_VERSION);
        return 0;
    }
    // COMMAND --help: that command's part of the usage text.
    for (const std::string& arg : args) {
        if (arg == "--") break;  // the rest belongs to capture's program
        if (arg == "--help" || arg == "-h") {
            const std::string text = hloscope::cli::commandUsage(command);
            if (text.empty()) break;
            std::fputs(text.c_str(), stdout);
            return 0;
        }
    }
    if (command == "parse") return hloscope::cli::runParse(args);
    if (command == "print") return hloscope::cli::runPrint(args);
    if (command == "stats") return hloscope::cli::runStats(args);
    if (command == "eval") return hloscope::cli::runEval(args);
    if (command == "conform") return hloscope::cli::runConform(args);
    if (command == "opt") return hloscope::cli::runOpt(args);
    if (command == "bisect") return hloscope::cli::runBisect(args);
    if (command == "passes") return hloscope::cli::runPasses(args);
    if (command == "cost") return hloscope::cli::runCost(args);
    if (command == "explain") return hloscope::cli::runExplain(args);
    if (command == "calibrate") return hloscope::cli::runCalibrate(args);
    if (command == "run") return hloscope::cli::runRun(args);
    if (command == "import-run") return hloscope::cli::runImportRun(args);
    if (command == "calc") return hloscope::cli::runCalc(args);
    if (command == "estimate") return hloscope::cli::runEstimate(args);
    if (command == "layers") return hloscope::cli::runLayers(args);
    if (command == "vs-xla") return hloscope::cli::runVsXla(args);
    if (command == "capture") return hloscope::cli::runCapture(args);
    if (command == "parity") return hloscope::cli::runParity(args);
    std::fprintf(stderr, "hloscope-cli: unknown command '%s'\n\n%s", command.c_str(),
                 hloscope::cli::usage().c_str());
    return 2;
}
