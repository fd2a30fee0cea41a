// hloscope-cli opt, bisect and passes: the compiler pipeline from the
// command line.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/pipeline/bisect.h"
#include "compiler/registry/pass_registry.h"
#include "compiler/pipeline/pipeline_report.h"
#include "compiler/pipeline/pipeline_session.h"
#include "compiler/registry/target_pipelines.h"
#include "core/text/hlo_printer.h"
#include "core/io/module_io.h"

namespace hloscope::cli {
namespace {

constexpr int kExitCannotEvaluate = 3;
constexpr int kExitInvalidInput = 4;     // bisect: the module does not parse or does not verify
constexpr int kExitPipelineFailed = 5;   // bisect: a pass failed or broke the module

// Peak memory of a module state for the per-pass report.
std::function<int64_t(const HloModule&)> pipelinePeakFunction() { return peakMemoryBytes; }

struct PipelineFlags {
    std::string target = "cpu";
    std::optional<std::string> passes;
    std::vector<std::string> disable;
    std::vector<std::string> options;
    std::optional<std::string> stopAfter;
    bool verify = true;
};

// Consumes the pipeline flags shared by opt and bisect; returns false (and
// sets *error) on a malformed one, true when `arg` was one of them.
bool pipelineFlag(const std::vector<std::string>& args, size_t& i, PipelineFlags& flags,
                  std::string* error, bool* consumed) {
    const std::string& arg = args[i];
    auto value = [&]() -> std::optional<std::string> {
        if (i + 1 >= args.size()) return std::nullopt;
        return args[++i];
    };
    *consumed = true;
    std::optional<std::string> v;
    if (arg == "--target") {
        if (!(v = value())) return *error = "--target needs cpu, gpu or tpu", false;
        flags.target = *v;
    } else if (arg == "--passes") {
        if (!(v = value())) return *error = "--passes needs a comma-separated list", false;
        flags.passes = *v;
    } else if (arg == "--disable") {
        if (!(v = value())) return *error = "--disable needs a pass name or index", false;
        flags.disable.push_back(*v);
    } else if (arg == "--option") {
        if (!(v = value())) return *error = "--option needs PASS.KEY=VALUE", false;
        flags.options.push_back(*v);
    } else if (arg == "--stop-after") {
        if (!(v = value())) return *error = "--stop-after needs a pass name or index", false;
        flags.stopAfter = *v;
    } else if (arg == "--no-verify") {
        flags.verify = false;
    } else {
        *consumed = false;
    }
    return true;
}

StatusOr<Pipeline> buildPipeline(const PipelineFlags& flags) {
    HLO_ASSIGN_OR_RETURN(Pipeline pipeline, targetPipeline(flags.target));
    if (flags.passes) {
        HLO_ASSIGN_OR_RETURN(Pipeline custom, pipelineFromList(*flags.passes, pipeline));
        custom.name = pipeline.name;
        pipeline = std::move(custom);
    }
    for (const std::string& d : flags.disable) HLO_RETURN_IF_ERROR(disablePasses(pipeline, d));
    for (const std::string& o : flags.options) HLO_RETURN_IF_ERROR(setPassOption(pipeline, o));
    if (flags.stopAfter) {
        HLO_ASSIGN_OR_RETURN(int index, findStep(pipeline, *flags.stopAfter));
        pipeline.steps.resize(static_cast<size_t>(index) + 1);
    }
    return pipeline;
}

}  // namespace

int runOpt(const std::vector<std::string>& args) {
    PipelineFlags flags;
    std::optional<std::string> file, dumpDir;
    bool json = false, verbose = false;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string error;
        bool consumed = false;
        if (!pipelineFlag(args, i, flags, &error, &consumed)) return usageError("opt: " + error);
        if (consumed) continue;
        const std::string& arg = args[i];
        if (arg == "--dump-dir") {
            if (i + 1 >= args.size()) return usageError("opt: --dump-dir needs a directory");
            dumpDir = args[++i];
        } else if (arg == "--json") {
            json = true;
        } else if (arg == "--verbose" || arg == "-v") {
            verbose = true;
        } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
            return usageError("opt: unknown option '" + arg + "'");
        } else if (file) {
            return usageError("opt: exactly one input file expected");
        } else {
            file = arg;
        }
    }
    if (!file) return usageError("opt: no input file");
    auto pipeline = buildPipeline(flags);
    if (!pipeline.isOk()) return usageError("opt: " + pipeline.status().message());
    const std::string name = displayName(*file);
    auto module = loadModuleFromFile(*file);
    if (!module.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, module.status()).c_str());
        return kExitFailed;
    }
    SessionOptions sessionOptions;
    sessionOptions.runner.verify = flags.verify;
    // The peak (a buffer assignment after every changing pass) is in the JSON report only.
    if (json || dumpDir) sessionOptions.peak = pipelinePeakFunction();
    auto session = PipelineSession::create(std::move(*module), *pipeline, sessionOptions);
    if (!session.isOk()) return usageError("opt: " + session.status().message());
    const auto pipelineStart = std::chrono::steady_clock::now();
    Status status = (*session)->runAll();
    if (!status.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, status).c_str());
        return kExitFailed;
    }
    const std::vector<PassSnapshot>& snapshots = (*session)->snapshots();
    PipelineReportOptions reportOptions;
    reportOptions.target = pipeline->name;
    reportOptions.module = (*session)->module().name();
    if (dumpDir) {
        std::error_code ec;
        std::filesystem::create_directories(*dumpDir, ec);
        if (ec) {
            std::fprintf(stderr, "%s: error: cannot create %s: %s\n", name.c_str(),
                         dumpDir->c_str(), ec.message().c_str());
            return kExitFailed;
        }
        for (const PassSnapshot& snapshot : snapshots) {
            Status written =
                writeTextFile((std::filesystem::path(*dumpDir) / snapshotFileName(snapshot)).string(), *snapshot.text);
            if (!written.isOk()) {
                std::fprintf(stderr, "%s: error: %s\n", name.c_str(), written.message().c_str());
                return kExitFailed;
            }
        }
        reportOptions.withFiles = true;
        Status written = writeTextFile((std::filesystem::path(*dumpDir) / "passes.json").string(),
                                   pipelineReportJson(snapshots, reportOptions));
        if (!written.isOk()) {
            std::fprintf(stderr, "%s: error: %s\n", name.c_str(), written.message().c_str());
            return kExitFailed;
        }
    }
    if (verbose) {
        for (const PassSnapshot& s : snapshots) {
            if (s.index < 0) continue;
            std::fprintf(stderr, "%2d %-34s %-9s %8.2f ms  +%zu -%zu ~%zu rewires %zu layouts %lld\n",
                         s.index, s.pass.c_str(),
                         !s.enabled ? "disabled" : s.changed ? "changed" : "unchanged",
                         s.seconds * 1e3, s.diff.added.size(), s.diff.removed.size(),
                         s.diff.replaced.size(), s.diff.rewired.size(),
                         static_cast<long long>(s.diff.layoutChangedCount()));
        }
    }
    if (verbose) {
        double total = 0;
        for (const PassSnapshot& s : snapshots) total += s.seconds;
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        std::fprintf(stderr,
                     "pipeline %s: %zu passes, %.1f ms in passes, %.1f ms with checks and "
                     "snapshots; snapshots hold %.1f MB of text; peak RSS %.1f MB\n",
                     pipeline->name.c_str(), snapshots.size() - 1, total * 1e3,
                     secondsSince(pipelineStart) * 1e3,
                     static_cast<double>((*session)->snapshotBytes()) / 1e6,
                     static_cast<double>(usage.ru_maxrss) / 1024.0);
    }
    if (json) {
        std::string report = pipelineReportJson(snapshots, reportOptions);
        std::fwrite(report.data(), 1, report.size(), stdout);
    } else {
        const std::string& text = *snapshots.back().text;
        std::fwrite(text.data(), 1, text.size(), stdout);
    }
    return kExitOk;
}

int runBisect(const std::vector<std::string>& args) {
    PipelineFlags flags;
    std::optional<std::string> file;
    uint64_t seed = 0;
    int64_t maxElements = BisectOptions().maxElements;
    BisectStrategy strategy = BisectStrategy::kBinary;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string error;
        bool consumed = false;
        if (!pipelineFlag(args, i, flags, &error, &consumed)) return usageError("bisect: " + error);
        if (consumed) continue;
        const std::string& arg = args[i];
        if (arg == "--seed") {
            if (i + 1 >= args.size()) return usageError("bisect: --seed needs a number");
            char* end = nullptr;
            const std::string& v = args[++i];
            seed = std::strtoull(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0') return usageError("bisect: --seed needs a number");
        } else if (arg == "--every-pass") {
            strategy = BisectStrategy::kEveryPass;
        } else if (arg == "--max-elements") {
            if (i + 1 >= args.size()) return usageError("bisect: --max-elements needs a number");
            maxElements = std::atoll(args[++i].c_str());
            if (maxElements <= 0) return usageError("bisect: --max-elements needs a positive number");
        } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
            return usageError("bisect: unknown option '" + arg + "'");
        } else if (file) {
            return usageError("bisect: exactly one input file expected");
        } else {
            file = arg;
        }
    }
    if (!file) return usageError("bisect: no input file");
    auto pipeline = buildPipeline(flags);
    if (!pipeline.isOk()) return usageError("bisect: " + pipeline.status().message());
    const std::string name = displayName(*file);
    auto module = loadModuleFromFile(*file);
    if (!module.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, module.status()).c_str());
        return kExitInvalidInput;
    }
    BisectOptions options;
    options.seed = seed;
    options.strategy = strategy;
    options.runner.verify = flags.verify;
    options.maxElements = maxElements;
    auto result = bisectPipeline(**module, *pipeline, options);
    if (!result.isOk()) {
        // The runner refuses an input that does not verify before any pass runs
        // (kFailedPrecondition); anything else is a pass that failed or broke the module.
        std::printf("%s\n", formatError(name, result.status()).c_str());
        return result.status().code() == StatusCode::kFailedPrecondition ? kExitInvalidInput : kExitPipelineFailed;
    }
    switch (result->outcome) {
    case BisectResult::Outcome::kNoChange:
        std::printf("%s: no pass changes the results (%s pipeline, %d changing passes, %d "
                    "evaluated after them, seed %llu)\n",
                    name.c_str(), pipeline->name.c_str(), result->changingPasses,
                    result->passesEvaluated, static_cast<unsigned long long>(seed));
        return kExitOk;
    case BisectResult::Outcome::kMismatch:
        std::printf("%s: pass %d (%s) changes the results: %s\n", name.c_str(), result->passIndex,
                    result->passName.c_str(), result->detail.c_str());
        return kExitFailed;
    case BisectResult::Outcome::kCannotEvaluate:
        std::printf("%s: cannot evaluate the module: %s\n", name.c_str(), result->detail.c_str());
        return kExitCannotEvaluate;
    }
    return kExitFailed;
}

int runPasses(const std::vector<std::string>& args) {
    if (!args.empty()) return usageError("passes: takes no arguments");
    std::printf("Passes:\n");
    for (const PassInfo& info : passRegistry())
        std::printf("  %s\n      %s\n", std::string(info.name).c_str(),
                    std::string(info.description).c_str());
    std::printf("\nTarget pipelines:\n");
    for (std::string_view target : targetNames()) {
        auto pipeline = targetPipeline(target);
        std::string steps;
        for (const PipelineStep& step : pipeline->steps) steps += (steps.empty() ? "" : ", ") + step.pass;
        std::printf("  %s: %s\n", std::string(target).c_str(), steps.c_str());
    }
    return kExitOk;
}

}  // namespace hloscope::cli
