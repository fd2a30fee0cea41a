// hloscope-cli eval and conform: the reference evaluator from the command
// line.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "app/cli/conformance.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/literal.h"
#include "core/io/module_io.h"
#include "core/interpreter/multi_device.h"

namespace hloscope::cli {
namespace {

double cpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

int64_t outputElements(const Shape& shape) {
    if (shape.isTuple()) {
        int64_t total = 0;
        for (int64_t i = 0; i < shape.tupleCount(); ++i) total += outputElements(shape.tupleShape(i));
        return total;
    }
    return shape.isArray() ? shape.elementCount() : 0;
}

std::string oneLine(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

struct EvalFlags {
    std::string file;
    std::string inputs = "random";
    uint64_t seed = 0;
    std::string format = "hlo";
    bool bench = false;
    bool profile = false;
    bool showInputs = false;
    int repeat = 0;  // 0: 1 normally, 5 with --bench
};

struct InstructionTime {
    const HloInstruction* instruction = nullptr;
    double seconds = 0;
    int64_t runs = 0;
};

void printProfile(const std::unordered_map<const HloInstruction*, InstructionTime>& times,
                  double totalSeconds) {
    std::vector<InstructionTime> rows;
    for (const auto& [instruction, time] : times) rows.push_back(time);
    std::sort(rows.begin(), rows.end(),
              [](const InstructionTime& a, const InstructionTime& b) { return a.seconds > b.seconds; });
    std::printf("\n%-32s %-18s %12s %8s %14s\n", "instruction", "opcode", "ms/run", "share",
                "elements/s");
    const size_t shown = std::min<size_t>(rows.size(), 25);
    for (size_t i = 0; i < shown; ++i) {
        const InstructionTime& row = rows[i];
        const double perRun = row.seconds / static_cast<double>(row.runs);
        const int64_t elements = outputElements(row.instruction->shape());
        std::string rate = perRun > 0 && elements > 0
                               ? std::to_string(static_cast<int64_t>(static_cast<double>(elements) / perRun))
                               : "-";
        std::printf("%-32s %-18s %12.3f %7.1f%% %14s\n", ("%" + row.instruction->name()).c_str(),
                    std::string(hloOpcodeString(row.instruction->opcode())).c_str(), perRun * 1e3,
                    totalSeconds > 0 ? 100.0 * row.seconds / totalSeconds : 0.0, rate.c_str());
    }
    if (rows.size() > shown) std::printf("... %zu more instructions\n", rows.size() - shown);
}

void printLiteral(const Literal& literal, const std::string& format) {
    std::string out = format == "json" ? literalToJson(literal) : literal.toString();
    out += '\n';
    std::fwrite(out.data(), 1, out.size(), stdout);
}

// The eval flags; an exit code on a usage error.
std::optional<int> parseEvalFlags(const std::vector<std::string>& args, EvalFlags& flags) {
    std::optional<std::string> file;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        auto value = [&](const char* what) -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            (void)what;
            return args[++i];
        };
        if (arg == "--inputs") {
            auto v = value("inputs");
            if (!v) return usageError("--inputs needs random, zeros or FILE.json");
            flags.inputs = *v;
        } else if (arg == "--seed") {
            auto v = value("seed");
            char* end = nullptr;
            if (!v || v->empty()) return usageError("--seed needs a number");
            flags.seed = std::strtoull(v->c_str(), &end, 10);
            if (*end != '\0') return usageError("--seed needs a number, got '" + *v + "'");
        } else if (arg == "--format") {
            auto v = value("format");
            if (!v || (*v != "hlo" && *v != "json"))
                return usageError("--format needs hlo or json");
            flags.format = *v;
        } else if (arg == "--bench") {
            flags.bench = true;
        } else if (arg == "--profile") {
            flags.profile = true;
        } else if (arg == "--show-inputs") {
            flags.showInputs = true;
        } else if (arg == "--repeat") {
            auto v = value("repeat");
            flags.repeat = v ? std::atoi(v->c_str()) : 0;
            if (flags.repeat < 1) return usageError("--repeat needs a positive number");
        } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
            return usageError("eval: unknown option '" + arg + "'");
        } else if (file) {
            return usageError("eval: exactly one input file expected");
        } else {
            file = arg;
        }
    }
    if (!file) return usageError("eval: no input file");
    flags.file = *file;
    return std::nullopt;
}

// A module on several devices (replicas x partitions) runs on all of them;
// random arrays differ per device (seed + device), scalars are device 0's
// everywhere (makeDeviceArguments). Empty for one device; an exit code on failure.
std::optional<int> makeDeviceArguments(const HloComputation& entry, const EvalFlags& flags,
                                       const DeviceGrid& grid,
                                       const std::vector<Literal>& arguments,
                                       std::vector<std::vector<Literal>>& deviceArguments) {
    if (grid.count() <= 1) return std::nullopt;
    for (int64_t device = 0; device < grid.count(); ++device) {
        if (flags.inputs != "random") {
            deviceArguments.push_back(arguments);
            continue;
        }
        auto own = makeArguments(entry, flags.inputs, flags.seed + static_cast<uint64_t>(device));
        if (!own.isOk()) {
            std::fprintf(stderr, "%s\n", formatError(flags.inputs, own.status()).c_str());
            return kExitFailed;
        }
        deviceArguments.push_back(std::move(*own));
        replicateScalars(entry, deviceArguments.front(), deviceArguments.back());
    }
    return std::nullopt;
}

void printInputs(const EvalFlags& flags, const DeviceGrid& grid,
                 const std::vector<Literal>& arguments,
                 const std::vector<std::vector<Literal>>& deviceArguments) {
    if (deviceArguments.empty())
        for (const Literal& argument : arguments) printLiteral(argument, flags.format);
    for (size_t device = 0; device < deviceArguments.size(); ++device) {
        std::printf("// inputs of %s\n", deviceLabel(grid, int64_t(device)).c_str());
        for (const Literal& argument : deviceArguments[device]) printLiteral(argument, flags.format);
    }
}

// What the evaluation runs measured and returned (the last run's result).
struct EvalRuns {
    int repeat = 1;
    std::unordered_map<const HloInstruction*, InstructionTime> times;  // --profile
    std::vector<double> wall, cpu;
    std::vector<Literal> result;  // per device
    int checks = 0;               // checks the last run passed
};

// Evaluates the module `runs.repeat` times; an exit code on failure.
std::optional<int> evaluateRuns(const HloModule& module, const std::string& name,
                                const EvalFlags& flags, const DeviceGrid& grid,
                                const std::vector<Literal>& arguments,
                                const std::vector<std::vector<Literal>>& deviceArguments,
                                EvalRuns& runs) {
    std::mutex timesMutex;  // devices report from their own threads
    for (int run = 0; run < runs.repeat; ++run) {
        CheckRunner checkRunner;
        HloEvaluatorOptions options;
        options.rngSeed = flags.seed;
        checkRunner.install(options);
        if (!deviceArguments.empty() && options.customCallHandler)
            options.customCallHandler = [&, inner = options.customCallHandler](
                                            const HloInstruction& instruction,
                                            std::span<const Literal* const> operands) {
                std::lock_guard lock(timesMutex);
                return inner(instruction, operands);
            };
        if (flags.profile)
            options.onInstructionTimed = [&](const HloInstruction& instruction, double seconds) {
                std::lock_guard lock(timesMutex);
                InstructionTime& t = runs.times[&instruction];
                t.instruction = &instruction;
                t.seconds += seconds;
                ++t.runs;
            };
        const auto start = std::chrono::steady_clock::now();
        const double cpuStart = cpuSeconds();
        StatusOr<std::vector<Literal>> values = std::vector<Literal>{};
        if (deviceArguments.empty()) {
            HloEvaluator evaluator(options);
            StatusOr<Literal> value = evaluator.evaluate(module, arguments);
            if (value.isOk())
                values->push_back(std::move(*value));
            else
                values = value.status();
        } else {
            values = evaluateOnDevices(module, grid, deviceArguments, options);
        }
        runs.cpu.push_back(cpuSeconds() - cpuStart);
        runs.wall.push_back(secondsSince(start));
        if (!values.isOk()) {
            std::fprintf(stderr, "%s\n", oneLine(formatError(name, values.status())).c_str());
            return kExitFailed;
        }
        runs.checks = checkRunner.checks();
        runs.result = std::move(*values);
    }
    return std::nullopt;
}

// The result (each device's, labelled, for several), and the checks passed.
void printResult(const std::string& name, const EvalFlags& flags, const DeviceGrid& grid,
                 const EvalRuns& runs) {
    if (runs.result.size() == 1) {
        printLiteral(runs.result[0], flags.format);
    } else {
        for (size_t device = 0; device < runs.result.size(); ++device) {
            if (flags.format == "hlo")
                std::printf("// %s\n", deviceLabel(grid, int64_t(device)).c_str());
            printLiteral(runs.result[device], flags.format);
        }
    }
    if (runs.checks > 0) std::fprintf(stderr, "%s: %d check(s) passed\n", name.c_str(), runs.checks);
}

// --bench / --profile: run times, throughput, and the per-instruction profile.
void printBench(const std::string& name, const EvalFlags& flags, const HloComputation& entry,
                const EvalRuns& runs) {
    std::vector<double> sortedWall = runs.wall, sortedCpu = runs.cpu;
    std::sort(sortedWall.begin(), sortedWall.end());
    std::sort(sortedCpu.begin(), sortedCpu.end());
    int64_t instructions = 0, elements = 0;
    for (const auto& instruction : entry.instructions()) {
        ++instructions;
        if (instruction->opcode() != HloOpcode::kParameter &&
            instruction->opcode() != HloOpcode::kConstant)
            elements += outputElements(instruction->shape());
    }
    const double median = sortedWall[sortedWall.size() / 2];
    std::printf("%s: %d run(s); wall min %.3f s, median %.3f s; CPU median %.3f s\n",
                name.c_str(), runs.repeat, sortedWall.front(), median,
                sortedCpu[sortedCpu.size() / 2]);
    std::printf("entry: %lld instructions, %lld elements computed per run, %.1f M elements/s\n",
                static_cast<long long>(instructions), static_cast<long long>(elements),
                median > 0 ? static_cast<double>(elements) / median / 1e6 : 0.0);
    if (flags.profile) {
        double total = 0;
        for (double w : runs.wall) total += w;
        printProfile(runs.times, total);
    }
}

}  // namespace

int runEval(const std::vector<std::string>& args) {
    EvalFlags flags;
    if (auto exit = parseEvalFlags(args, flags)) return *exit;
    const std::string name = displayName(flags.file);
    auto module = loadModuleFromFile(flags.file);
    if (!module.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, module.status()).c_str());
        return kExitFailed;
    }
    const HloComputation* entry = (*module)->entryComputation();
    if (entry == nullptr) {
        std::fprintf(stderr, "%s: error: module has no entry computation\n", name.c_str());
        return kExitFailed;
    }
    auto arguments = makeArguments(*entry, flags.inputs, flags.seed);
    if (!arguments.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(flags.inputs, arguments.status()).c_str());
        return kExitFailed;
    }
    auto grid = moduleDeviceGrid(**module);
    if (!grid.isOk()) {
        std::fprintf(stderr, "%s\n", oneLine(formatError(name, grid.status())).c_str());
        return kExitFailed;
    }
    std::vector<std::vector<Literal>> deviceArguments;
    if (auto exit = makeDeviceArguments(*entry, flags, *grid, *arguments, deviceArguments))
        return *exit;
    if (flags.showInputs) printInputs(flags, *grid, *arguments, deviceArguments);

    EvalRuns runs;
    runs.repeat = flags.repeat > 0 ? flags.repeat : (flags.bench || flags.profile ? 5 : 1);
    if (auto exit = evaluateRuns(**module, name, flags, *grid, *arguments, deviceArguments, runs))
        return *exit;
    if (!flags.bench && !flags.profile) {
        printResult(name, flags, *grid, runs);
        return kExitOk;
    }
    printBench(name, flags, *entry, runs);
    return kExitOk;
}

int runConform(const std::vector<std::string>& args) {
    bool quiet = false;
    std::vector<std::string> files;
    for (const std::string& arg : args) {
        if (arg == "--quiet" || arg == "-q") quiet = true;
        else if (arg.size() > 1 && arg[0] == '-' && arg != "-")
            return usageError("conform: unknown option '" + arg + "'");
        else files.push_back(arg);
    }
    if (files.empty()) return usageError("conform: no input files");
    int passed = 0, failed = 0, unsupported = 0;
    for (const std::string& file : files) {
        const std::string name = displayName(file);
        auto text = readFileToString(file);
        if (!text.isOk()) {
            ++failed;
            std::printf("%s\n", formatError(name, text.status()).c_str());
            continue;
        }
        for (const ConformanceCase& c : runConformance(*text, name)) {
            switch (c.outcome) {
            case CaseOutcome::kPassed: ++passed; break;
            case CaseOutcome::kFailed: ++failed; break;
            case CaseOutcome::kUnsupported: ++unsupported; break;
            }
            if (quiet && c.outcome == CaseOutcome::kPassed) continue;
            std::string line = name + "#" + std::to_string(c.index) + ": " +
                               std::string(caseOutcomeName(c.outcome));
            if (!c.detail.empty()) line += ": " + oneLine(c.detail);
            std::printf("%s\n", line.c_str());
        }
        std::fflush(stdout);
    }
    std::printf("%d passed, %d failed, %d unsupported\n", passed, failed, unsupported);
    return failed == 0 ? kExitOk : kExitFailed;
}

}  // namespace hloscope::cli
