// hloscope-gpu-runner: runs a GPU execution plan written by hloscope through the CUDA driver API
// (loaded at run time), or probes the GPU. The command line, and the outermost error handling.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "plan.h"
#include "runner.h"

namespace {

using namespace hloscope::gpu;

constexpr const char* kUsage =
    "usage: hloscope-gpu-runner PLAN_DIR [--output DIR] [--repeat N] [--warmup N]\n"
    "                           [--device ORDINAL] [--no-cublas] [--sample N] [--quiet]\n"
    "       hloscope-gpu-runner --probe OUT.json [--bytes N] [--device ORDINAL]\n"
    "       hloscope-gpu-runner --info [--device ORDINAL]\n"
    "       hloscope-gpu-runner --help | --version\n"
    "\n"
    "Runs the GPU execution plan in PLAN_DIR (plan.json, kernels.ptx, inputs/, constants/):\n"
    "warm-up runs, timed runs, then per-step timed runs; writes outputs/<index>.bin and\n"
    "results.json into PLAN_DIR (or --output DIR). --repeat and --warmup override the plan's\n"
    "counts; --no-cublas runs gemm steps with their fallback kernels; --sample N writes an\n"
    "output of more than N elements as every stride-th element (results.json: sample_stride).\n"
    "\n"
    "--probe measures copy bandwidth (copy engine and a copy kernel, over --bytes N bytes,\n"
    "default 1 GiB, at most a quarter of the free memory; K, M, G suffixes allowed) and kernel\n"
    "launch overhead, and writes them with the device description to OUT.json.\n"
    "--info prints the device description as JSON.\n"
    "\n"
    "The CUDA driver is loaded at run time (libcuda.so.1, or $HLOSCOPE_CUDA_LIBRARY); cuBLAS\n"
    "optionally (libcublas.so.13/.12, or $HLOSCOPE_CUBLAS_LIBRARY).\n"
    "\n"
    "Exit codes: 0 ok, 1 bad plan or run error, 2 no GPU, 64 bad usage.\n";

enum class Mode { Run, Probe, Info, Help, Version };

struct CommandLine {
    Mode mode = Mode::Run;
    RunOptions run;
    ProbeOptions probe;
};

// A usage error: thrown by the parser, reported with the usage text, exit code 64.
struct UsageError {
    std::string message;
};

// A non-negative integer, with an optional K/M/G (binary) suffix when `suffixes` is set.
uint64_t parseCount(const std::string& option, const std::string& text, bool suffixes) {
    if (text.empty() || text[0] == '-' || text[0] == '+') {
        throw UsageError{option + " needs a non-negative integer, not \"" + text + "\""};
    }
    char* end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    unsigned shift = 0;
    if (suffixes && *end) {
        switch (*end) {
            case 'K':
            case 'k':
                shift = 10;
                break;
            case 'M':
            case 'm':
                shift = 20;
                break;
            case 'G':
            case 'g':
                shift = 30;
                break;
            default:
                break;
        }
        if (shift) ++end;
    }
    if (errno || end == text.c_str() || *end || (shift && value > (~0ull >> shift))) {
        throw UsageError{option + " needs a non-negative integer, not \"" + text + "\""};
    }
    return value << shift;
}

int parseInt(const std::string& option, const std::string& text, int min) {
    uint64_t value = parseCount(option, text, false);
    if (value > 1000000000 || int(value) < min) {
        throw UsageError{option + " must be between " + std::to_string(min) + " and 1000000000"};
    }
    return int(value);
}

CommandLine parseCommandLine(const std::vector<std::string>& args) {
    CommandLine cl;
    bool probe = false, info = false, runOnlyOption = false, bytesGiven = false;
    std::vector<std::string> positional;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw UsageError{arg + " needs a value"};
            return args[++i];
        };
        if (arg == "--help" || arg == "-h") return {Mode::Help, {}, {}};
        if (arg == "--version") return {Mode::Version, {}, {}};
        if (arg == "--probe") {
            probe = true;
            cl.probe.outputFile = value();
        } else if (arg == "--info") {
            info = true;
        } else if (arg == "--bytes") {
            bytesGiven = true;
            cl.probe.bytes = parseCount(arg, value(), true);
            if (cl.probe.bytes < 4096) throw UsageError{"--bytes must be at least 4096"};
        } else if (arg == "--device") {
            cl.run.device = cl.probe.device = parseInt(arg, value(), 0);
        } else if (arg == "--output") {
            runOnlyOption = true;
            cl.run.outputDir = value();
        } else if (arg == "--repeat") {
            runOnlyOption = true;
            cl.run.repeat = parseInt(arg, value(), 1);
        } else if (arg == "--warmup") {
            runOnlyOption = true;
            cl.run.warmup = parseInt(arg, value(), 0);
        } else if (arg == "--no-cublas") {
            runOnlyOption = true;
            cl.run.useCublas = false;
        } else if (arg == "--sample") {
            runOnlyOption = true;
            cl.run.sample = static_cast<uint64_t>(parseInt(arg, value(), 1));
        } else if (arg == "--quiet" || arg == "-q") {
            cl.run.quiet = true;
        } else if (arg.size() > 1 && arg[0] == '-') {
            throw UsageError{"unknown option " + arg};
        } else {
            positional.push_back(arg);
        }
    }
    if (probe && info) throw UsageError{"--probe and --info do not go together"};
    if (probe || info) {
        if (!positional.empty()) throw UsageError{"unexpected argument " + positional[0]};
        if (runOnlyOption)
            throw UsageError{
                "--output, --repeat, --warmup and --no-cublas apply to plan runs only"};
        if (info && bytesGiven) throw UsageError{"--bytes applies to --probe only"};
        cl.mode = probe ? Mode::Probe : Mode::Info;
        return cl;
    }
    if (positional.empty()) throw UsageError{"no plan directory given"};
    if (positional.size() > 1) throw UsageError{"more than one plan directory given"};
    if (bytesGiven) throw UsageError{"--bytes applies to --probe only"};
    cl.run.planDir = positional[0];
    return cl;
}

int dispatch(const CommandLine& cl) {
    switch (cl.mode) {
        case Mode::Help:
            std::fputs(kUsage, stdout);
            return kExitOk;
        case Mode::Version:
            std::printf("%s %s\nplan format %d\n", kRunnerName, kRunnerVersion, kPlanFormatVersion);
            return kExitOk;
        case Mode::Probe:
            return runProbeCommand(cl.probe);
        case Mode::Info:
            return runInfoCommand(cl.probe.device);
        case Mode::Run:
            return runPlanCommand(cl.run);
    }
    return kExitError;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<std::string> args(argv + 1, argv + argc);
        CommandLine cl;
        try {
            cl = parseCommandLine(args);
        } catch (const UsageError& e) {
            printError(e.message);
            std::fprintf(stderr, "run '%s --help' for usage\n", kRunnerName);
            return kExitUsage;
        }
        return dispatch(cl);
    } catch (const std::exception& e) {
        printError(std::string("internal error: ") + e.what());
    } catch (...) {
        printError("internal error");
    }
    return kExitError;
}
