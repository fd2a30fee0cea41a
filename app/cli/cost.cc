// hloscope-cli cost and explain: the performance model's predictions for a
// module, unfused and fused, and the fusion decision for one pair.
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/runtime/execution_modes.h"
#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/buffers/buffer_assignment.h"
#include "compiler/cost/performance_model.h"
#include "compiler/layers/fusion_comparison.h"
#include "compiler/pipeline/pipeline_session.h"
#include "compiler/targets/target_description.h"
#include "compiler/registry/target_pipelines.h"
#include "core/io/module_io.h"

namespace hloscope::cli {
namespace {

using Json = nlohmann::ordered_json;

StatusOr<TargetDescription> hardwareNamed(const std::string& name) {
    return resolveTargetDescription(name);
}

std::string_view pipelineFor(const TargetDescription& target) { return pipelineFamily(target.kind); }

// Runs the target pipeline on a fresh copy of the file's module, fusion on
// or off, the fusion passes using `hardware` for their cost model.
StatusOr<std::unique_ptr<PipelineSession>> runPipeline(const std::string& file,
                                                       const TargetDescription& hardware,
                                                       const std::string& hardwareArg, bool fuse,
                                                       const std::vector<std::string>& options) {
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, loadModuleFromFile(file));
    // The family's pipeline with the fusion passes' cost model on `hardware`.
    HLO_ASSIGN_OR_RETURN(Pipeline pipeline, targetPipeline(pipelineFor(hardware)));
    for (PipelineStep& step : pipeline.steps)
        if (isFusionPassName(step.pass)) step.options.set("hardware", hardwareArg);
    for (PipelineStep& step : pipeline.steps) {
        const bool fusionStep = isFusionPassName(step.pass);
        if (fusionStep && !fuse) step.enabled = false;
    }
    for (const std::string& option : options) HLO_RETURN_IF_ERROR(setPassOption(pipeline, option));
    SessionOptions sessionOptions;
    HLO_ASSIGN_OR_RETURN(auto session,
                         PipelineSession::create(std::move(module), std::move(pipeline), sessionOptions));
    HLO_RETURN_IF_ERROR(session->runAll());
    return session;
}

std::string kernelKind(const HloInstruction& instruction) {
    if (instruction.opcode() == HloOpcode::kFusion)
        return "fusion " + std::string(instruction.fusionKind());
    return std::string(hloOpcodeString(instruction.opcode()));
}

struct CommonFlags {
    std::string hardware = "cpu";
    std::vector<std::string> options;
    std::vector<std::string> positional;
    bool json = false;
};

// Parses --target/--hardware, --option, --json; returns a usage message on error.
std::optional<std::string> parseCommon(const std::vector<std::string>& args, CommonFlags& flags,
                                       std::string_view command) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--target" || arg == "--hardware") {
            if (i + 1 >= args.size()) return std::string(command) + ": " + arg + " needs a name";
            flags.hardware = args[++i];
        } else if (arg == "--option") {
            if (i + 1 >= args.size()) return std::string(command) + ": --option needs PASS.KEY=VALUE";
            flags.options.push_back(args[++i]);
        } else if (arg == "--json") {
            flags.json = true;
        } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
            return std::string(command) + ": unknown option '" + arg + "'";
        } else {
            flags.positional.push_back(arg);
        }
    }
    return std::nullopt;
}

}  // namespace

int runCost(const std::vector<std::string>& args) {
    CommonFlags flags;
    if (auto error = parseCommon(args, flags, "cost")) return usageError(*error);
    if (flags.positional.size() != 1) return usageError("cost: exactly one input file expected");
    const std::string& file = flags.positional[0];
    const std::string name = displayName(file);
    auto hardware = hardwareNamed(flags.hardware);
    if (!hardware.isOk()) return usageError("cost: " + hardware.status().message());
    // A module that already holds fusions (XLA's optimized dumps) is predicted as it is, against
    // the same ops with every fusion taken apart: what its own fusion buys. Otherwise the
    // target's pipeline runs without and with its fusion passes.
    std::unique_ptr<HloModule> optimized;
    {
        auto loaded = loadModuleFromFile(file);
        if (!loaded.isOk()) {
            std::fprintf(stderr, "%s\n", formatError(name, loaded.status()).c_str());
            return kExitFailed;
        }
        if (holdsFusions(**loaded)) optimized = std::move(*loaded);
    }
    std::unique_ptr<PipelineSession> unfused, fused;
    if (!optimized) {
        auto u = runPipeline(file, *hardware, flags.hardware, false, flags.options);
        if (!u.isOk()) {
            std::fprintf(stderr, "%s\n", formatError(name, u.status()).c_str());
            return kExitFailed;
        }
        auto f = runPipeline(file, *hardware, flags.hardware, true, flags.options);
        if (!f.isOk()) {
            std::fprintf(stderr, "%s\n", formatError(name, f.status()).c_str());
            return kExitFailed;
        }
        unfused = std::move(*u);
        fused = std::move(*f);
    }
    const HloModule& before = optimized ? *optimized : unfused->module();
    const HloModule& after = optimized ? *optimized : fused->module();
    const ModulePrediction unfusedPrediction =
        optimized ? predictUnfused(before, *hardware) : predictModule(before, *hardware);
    const ModulePrediction fusedPrediction = predictModule(after, *hardware);
    // Unfused peak of an optimized module: not known without its fusions taken apart.
    const int64_t unfusedPeak = optimized ? -1 : peakMemoryBytes(before);
    const int64_t fusedPeak = peakMemoryBytes(after);
    const double speedup = fusedPrediction.totalSeconds > 0
                               ? unfusedPrediction.totalSeconds / fusedPrediction.totalSeconds
                               : 0;
    if (flags.json) {
        Json report;
        report["module"] = after.name();
        report["hardware"] = hardware->name;
        report["pipeline"] = optimized ? std::string("none: the module's own fusions") : std::string(pipelineFor(*hardware));
        Json kernels = Json::array();
        for (const KernelPrediction& k : fusedPrediction.kernels)
            kernels.push_back(Json{{"name", k.instruction->name()},
                                   {"kind", kernelKind(*k.instruction)},
                                   {"flops", k.cost.flops},
                                   {"transcendentals", k.cost.transcendentals},
                                   {"bytes", k.cost.bytesRead + k.cost.bytesWritten},
                                   {"predicted_ms", k.totalSeconds * 1e3},
                                   {"executions", k.executions},
                                   {"bound_by", k.boundBy}});
        report["kernels"] = std::move(kernels);
        report["unfused"] = Json{{"predicted_ms", unfusedPrediction.totalSeconds * 1e3},
                                 {"kernels", unfusedPrediction.kernelCount},
                                 {"peak_bytes", unfusedPeak}};
        report["fused"] = Json{{"predicted_ms", fusedPrediction.totalSeconds * 1e3},
                               {"kernels", fusedPrediction.kernelCount},
                               {"peak_bytes", fusedPeak}};
        report["predicted_speedup"] = speedup;
        if (unfusedPeak >= 0) report["predicted_memory_saving_bytes"] = unfusedPeak - fusedPeak;
        else report["unfused"].erase("peak_bytes");
        const std::string out = report.dump(1) + "\n";
        std::fwrite(out.data(), 1, out.size(), stdout);
        return kExitOk;
    }
    if (optimized)
        std::printf("%s on %s: the module already holds fusions (an optimized dump): its own kernels, "
                    "against the same ops with every fusion taken apart\n\n",
                    name.c_str(), hardware->name.c_str());
    else
        std::printf("%s on %s (%s pipeline)\n\n", name.c_str(), hardware->name.c_str(),
                    std::string(pipelineFor(*hardware)).c_str());
    std::printf("%-36s %-16s %14s %12s %12s  %s\n", "kernel", "kind", "flops", "bytes",
                "time (us)", "bound by");
    for (const KernelPrediction& k : fusedPrediction.kernels)
        std::printf("%-36s %-16s %14.4g %12.4g %12.3f  %s%s\n",
                    ("%" + k.instruction->name()).c_str(), kernelKind(*k.instruction).c_str(),
                    k.cost.flops, k.cost.bytesRead + k.cost.bytesWritten, k.totalSeconds * 1e6,
                    k.boundBy.c_str(),
                    k.executions != 1 ? (" x" + std::to_string(static_cast<int64_t>(k.executions))).c_str() : "");
    if (unfusedPeak >= 0)
        std::printf("\nunfused: %10.3f ms predicted, %lld kernels, peak memory %lld bytes\n",
                    unfusedPrediction.totalSeconds * 1e3, static_cast<long long>(unfusedPrediction.kernelCount),
                    static_cast<long long>(unfusedPeak));
    else
        std::printf("\nunfused: %10.3f ms predicted, %lld kernels (every fusion taken apart)\n",
                    unfusedPrediction.totalSeconds * 1e3, static_cast<long long>(unfusedPrediction.kernelCount));
    std::printf("fused:   %10.3f ms predicted, %lld kernels, peak memory %lld bytes\n",
                fusedPrediction.totalSeconds * 1e3, static_cast<long long>(fusedPrediction.kernelCount),
                static_cast<long long>(fusedPeak));
    if (unfusedPeak >= 0)
        std::printf("predicted speedup %.2fx, memory saved %lld bytes\n", speedup,
                    static_cast<long long>(unfusedPeak - fusedPeak));
    else
        std::printf("predicted speedup of the module's own fusion %.2fx\n", speedup);
    return kExitOk;
}

int runExplain(const std::vector<std::string>& args) {
    CommonFlags flags;
    if (auto error = parseCommon(args, flags, "explain")) return usageError(*error);
    if (flags.positional.size() != 3)
        return usageError("explain: expected FILE PRODUCER CONSUMER");
    const std::string& file = flags.positional[0];
    auto stripPercent = [](std::string s) { return !s.empty() && s[0] == '%' ? s.substr(1) : s; };
    const std::string producer = stripPercent(flags.positional[1]);
    const std::string consumer = stripPercent(flags.positional[2]);
    const std::string name = displayName(file);
    auto hardware = hardwareNamed(flags.hardware);
    if (!hardware.isOk()) return usageError("explain: " + hardware.status().message());
    auto session = runPipeline(file, *hardware, flags.hardware, true, flags.options);
    if (!session.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, session.status()).c_str());
        return kExitFailed;
    }
    // Once an instruction is fused, decisions name the fusion that holds it:
    // accept the fusion instructions whose fused computation (in the state
    // after the pass that decided) holds the instruction by its name.
    std::vector<std::pair<const PassSnapshot*, const PassDecision*>> found;
    const std::vector<PassSnapshot>& snapshots = (*session)->snapshots();
    for (size_t s = 1; s < snapshots.size(); ++s) {
        const PassSnapshot& snapshot = snapshots[s];
        if (snapshot.decisions.empty()) continue;
        std::set<std::string> producerNames = {producer}, consumerNames = {consumer};
        // The state before the pass and after it both name fusions.
        for (const PassSnapshot* state : {&snapshots[s - 1], &snapshot}) {
            auto module = state->materialize();
            if (!module.isOk()) continue;
            for (const auto& computation : (*module)->computations()) {
                const HloInstruction* fusion = computation->fusionInstruction();
                if (!fusion) continue;
                if (computation->findInstruction(producer)) producerNames.insert(fusion->name());
                if (computation->findInstruction(consumer)) consumerNames.insert(fusion->name());
            }
        }
        for (const PassDecision& decision : snapshot.decisions)
            if (producerNames.count(decision.producer) && consumerNames.count(decision.consumer))
                found.push_back({&snapshot, &decision});
    }
    if (found.empty()) {
        // Say why no decision was needed.
        auto module = loadModuleFromFile(file);
        const HloInstruction* p = nullptr;
        const HloInstruction* c = nullptr;
        if (module.isOk())
            for (const auto& computation : (*module)->computations()) {
                if (!p) p = computation->findInstruction(producer);
                if (!c) c = computation->findInstruction(consumer);
            }
        std::string why;
        if (!p || !c) {
            why = "no instruction named %" + (!p ? producer : consumer) + " in the module";
        } else if (p->parent() != c->parent()) {
            why = "they are in different computations (" + p->parent()->name() + ", " +
                  c->parent()->name() + ")";
        } else {
            bool uses = false;
            for (const HloInstruction* operand : c->operands()) uses = uses || operand == p;
            why = uses ? "the fusion passes never considered the pair (an earlier pass removed or "
                         "replaced one of them, or neither can take part in a fusion)"
                       : "%" + consumer + " does not use %" + producer +
                             ": they are not a producer-consumer pair";
        }
        std::printf("%s: no fusion decision for %%%s -> %%%s on %s: %s\n", name.c_str(),
                    producer.c_str(), consumer.c_str(), hardware->name.c_str(), why.c_str());
        return kExitFailed;
    }
    for (const auto& [snapshot, d] : found) {
        auto label = [](const std::string& decided, const std::string& asked) {
            return "%" + decided + (decided == asked ? "" : " (holding %" + asked + ")");
        };
        std::printf("%s pass %d (%s), step %lld: %s -> %s %s [%s]\n  %s\n", name.c_str(),
                    snapshot->index, snapshot->pass.c_str(), static_cast<long long>(d->step),
                    label(d->producer, producer).c_str(), label(d->consumer, consumer).c_str(),
                    d->applied ? "fused" : "not fused", d->reason.c_str(), d->explanation.c_str());
        if (d->predictedUnfusedSeconds >= 0)
            std::printf("  predicted: %.3f us as separate kernels, %.3f us fused on %s\n",
                        d->predictedUnfusedSeconds * 1e6, d->predictedAppliedSeconds * 1e6,
                        hardware->name.c_str());
    }
    return kExitOk;
}

}  // namespace hloscope::cli
