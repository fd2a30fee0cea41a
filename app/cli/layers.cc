// hloscope-cli layers: the model's layer tree (compiler/layers/) with the
// figures of each layer at a pipeline step.
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/layers/fusion_comparison.h"
#include "compiler/layers/layer_figures.h"
#include "compiler/layers/layer_tree.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "compiler/runtime/execution_device.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/io/module_io.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/support/human_format.h"

namespace hloscope::cli {
namespace {

using Json = nlohmann::ordered_json;

struct LayersFlags {
    std::string file;
    std::string target = "cpu";
    std::string step;  // "" : the whole pipeline, or the module as it is when it holds fusions
    int depth = 1;
    bool json = false;
    std::string measure;  // a device to run the module at the step on ("" : none)
    int repeat = 3;
    uint64_t seed = 0;
};

// Measured seconds per layer (each the sum over its subtree) from a run's kernel times,
// the kernels found in `prepared` by name; `unplaced` gets the time of kernels in no layer.
std::vector<double> measuredPerLayer(const LayerTree& tree, const HloModule& prepared,
                                     const std::vector<MeasuredTime>& kernelTimes, double* unplaced) {
    std::unordered_map<std::string_view, const HloInstruction*> byName;
    for (const auto& computation : prepared.computations())
        for (const auto& instruction : computation->instructions())
            byName.emplace(instruction->name(), instruction.get());
    std::vector<double> seconds(static_cast<size_t>(tree.size()), 0.0);
    *unplaced = 0;
    for (const MeasuredTime& time : kernelTimes) {
        auto found = byName.find(time.name);
        const int layer = found == byName.end() ? -1 : layerOfKernel(tree, *found->second);
        if (layer <= LayerTree::kRoot) *unplaced += time.seconds;
        for (int at = layer; at >= 0; at = at == LayerTree::kRoot ? -1 : tree.layer(at).parent)
            seconds[static_cast<size_t>(at)] += time.seconds;
        if (layer < 0) seconds[LayerTree::kRoot] += time.seconds;
    }
    return seconds;
}

std::string layerLabel(const LayerTree& tree, int index) {
    const Layer& layer = tree.layer(index);
    std::string label = layer.name;
    if (layer.repeatClass >= 0) label += "  ×" + std::to_string(tree.repeatClassSize(layer.repeatClass));
    return label;
}

Json layerJson(const LayerTree& tree, const std::vector<LayerFigures>& figures, const std::vector<double>& measured,
               int index, int depth) {
    const Layer& layer = tree.layer(index);
    const LayerFigures& f = figures[static_cast<size_t>(index)];
    Json node{{"name", layer.name},
              {"key", layer.key},
              {"kind", std::string(layerKindName(layer.kind))},
              {"instructions", f.instructions},
              {"kernels_before", f.kernelsBefore},
              {"kernels_after", f.kernelsAfter},
              {"predicted_seconds", f.predictedSeconds}};
    if (!measured.empty()) node["measured_seconds"] = measured[static_cast<size_t>(index)];
    if (layer.repeatClass >= 0) {
        node["repeat_class"] = layer.repeatClass;
        node["repeats"] = tree.repeatClassSize(layer.repeatClass);
    }
    node["layers"] = static_cast<int64_t>(layer.children.size());
    if (depth > 0 && !layer.children.empty()) {
        Json children = Json::array();
        for (int child : layer.children) children.push_back(layerJson(tree, figures, measured, child, depth - 1));
        node["children"] = std::move(children);
    }
    return node;
}

// Pads to a width in columns (UTF-8: continuation bytes take none).
std::string padded(const std::string& text, int width, bool left) {
    int columns = 0;
    for (unsigned char c : text) columns += (c & 0xC0) != 0x80 ? 1 : 0;
    const std::string fill(static_cast<size_t>(std::max(0, width - columns)), ' ');
    return left ? text + fill : fill + text;
}

// The measured columns are printed only when `measured` is set.
void printRow(const std::string& label, const std::string& instructions, const std::string& kernels,
              const std::string& predicted, const std::string& share, const std::string* measured = nullptr,
              const std::string* measuredShare = nullptr) {
    std::printf("%s %s  %s  %s  %s", padded(label, 48, true).c_str(), padded(instructions, 12, false).c_str(),
                padded(kernels, 17, false).c_str(), padded(predicted, 10, false).c_str(),
                padded(share, 6, false).c_str());
    if (measured)
        std::printf("  %s  %s", padded(*measured, 10, false).c_str(),
                    padded(measuredShare ? *measuredShare : std::string(), 6, false).c_str());
    std::printf("\n");
}

std::string shareText(double part, double total) {
    char share[16];
    std::snprintf(share, sizeof share, "%.1f%%", total > 0 ? 100.0 * part / total : 0.0);
    return share;
}

void printLayer(const LayerTree& tree, const std::vector<LayerFigures>& figures, const std::vector<double>& measured,
                int index, int indent, int depth, double total) {
    const LayerFigures& f = figures[static_cast<size_t>(index)];
    std::string time, timeShare;
    if (!measured.empty()) {
        time = formatDuration(measured[static_cast<size_t>(index)]);
        timeShare = shareText(measured[static_cast<size_t>(index)], measured[LayerTree::kRoot]);
    }
    printRow(std::string(static_cast<size_t>(indent) * 2, ' ') + layerLabel(tree, index),
             formatCount(f.instructions), formatCount(f.kernelsBefore) + " → " + formatCount(f.kernelsAfter),
             formatDuration(f.predictedSeconds), shareText(f.predictedSeconds, total),
             measured.empty() ? nullptr : &time, measured.empty() ? nullptr : &timeShare);
    if (depth <= 1) return;
    for (int child : tree.layer(index).children)
        printLayer(tree, figures, measured, child, indent + 1, depth - 1, total);
}

// Runs the target's pipeline on `module` in place: all of it, or through the pass `step`
// names (or its first N passes); returns how far, in words. Bad --step: kInvalidArgument.
StatusOr<std::string> runTargetPipeline(HloModule& module, const TargetDescription& target,
                                        const std::string& targetName, const std::string& step) {
    auto pipeline = targetPipeline(pipelineFamily(target.kind));
    if (!pipeline.isOk()) return invalidArgument(pipeline.status().message());
    for (PipelineStep& s : pipeline->steps)
        if (isFusionPassName(s.pass)) s.options.set("hardware", targetName);
    RunnerOptions options;
    options.verify = false;
    options.checkChanges = false;
    const int stepCount = static_cast<int>(pipeline->steps.size());
    int end = stepCount;
    if (step != "all") {
        auto found = findStep(*pipeline, step);
        if (!found.isOk()) return invalidArgument("--step: " + found.status().message());
        const bool numbered = std::all_of(step.begin(), step.end(), [](char c) { return c >= '0' && c <= '9'; });
        end = numbered ? std::min(*found, stepCount) : *found + 1;
    }
    const std::string family(pipelineFamily(target.kind));
    HLO_ASSIGN_OR_RETURN(auto runner, PipelineRunner::create(module, std::move(*pipeline), options));
    HLO_RETURN_IF_ERROR(runner->runUntil(end));
    return end == stepCount ? "after the " + family + " pipeline (" + std::to_string(end) + " passes)"
                            : "after " + std::to_string(end) + " passes of the " + family + " pipeline";
}

std::string percent(double share) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * share);
    return buffer;
}

// What --measure found: seconds per layer (subtree sums), the time of kernels in no layer, and
// which device and mode it came from.
struct LayerMeasurement {
    std::vector<double> seconds;
    double unplaced = 0;
    std::string on;
};

// Runs the module at the step on flags.measure (the whole pipeline: fused; the input of a
// module without fusions: unfused). kExitOk, or the exit code after saying what went wrong.
int measureLayers(const LayersFlags& flags, const std::string& step, const std::string& name,
                  const HloModule& module, const LayerTree& tree, const TargetDescription& target,
                  LayerMeasurement& out) {
    if (step != "all" && step != "input")
        return usageError("layers: --measure runs the module with the whole pipeline (--step all) or as it is "
                          "(--step input), not after --step " + step);
    auto device = findDevice(flags.measure);
    if (!device.isOk()) return usageError("layers: --measure: " + device.status().message());
    if (hardwareFamily((*device)->kind()) != pipelineFamily(target.kind) && (*device)->kind() != "reference")
        return usageError("layers: --measure " + flags.measure + " runs " +
                          std::string(hardwareFamily((*device)->kind())) + " code, but the figures are for " +
                          target.name + " (" + std::string(pipelineFamily(target.kind)) +
                          "): pass a --target of the device's kind");
    std::string whyNot;
    if (!(*device)->available(&whyNot)) {
        std::fprintf(stderr, "hloscope-cli: layers: device '%s' cannot run here: %s\n", flags.measure.c_str(),
                     whyNot.c_str());
        return kExitFailed;
    }
    auto arguments = makeArguments(*module.entryComputation(), "random", flags.seed);
    if (!arguments.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, arguments.status()).c_str());
        return kExitFailed;
    }
    MeasureOptions options;
    options.repeat = flags.repeat;
    options.seed = flags.seed;
    const ExecutionMode mode =
        step == "input" && !holdsFusions(module) ? ExecutionMode::kUnfused : ExecutionMode::kFused;
    auto run = measureMode(module, flags.target, mode, **device, *arguments, options);
    if (!run.isOk()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), run.status().toString().c_str());
        return kExitFailed;
    }
    out.seconds = measuredPerLayer(tree, *run->module, run->kernelTimes, &out.unplaced);
    out.on = (*device)->name() + ", " + std::string(executionModeName(mode)) + ", median of " +
             std::to_string(flags.repeat) + " runs, whole run " + formatDuration(run->medianSeconds());
    return kExitOk;
}

}  // namespace

int runLayers(const std::vector<std::string>& args) {
    LayersFlags flags;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        auto value = [&]() -> const std::string* { return i + 1 < args.size() ? &args[++i] : nullptr; };
        if (arg == "--target" || arg == "--hardware") {
            const std::string* v = value();
            if (!v) return usageError("layers: " + arg + " needs a target name");
            flags.target = *v;
        } else if (arg == "--step") {
            const std::string* v = value();
            if (!v) return usageError("layers: --step needs a pass name, a number or 'input'");
            flags.step = *v;
        } else if (arg == "--depth") {
            const std::string* v = value();
            if (!v) return usageError("layers: --depth needs a number");
            flags.depth = std::atoi(v->c_str());
            if (flags.depth < 1) return usageError("layers: --depth needs a positive number");
        } else if (arg == "--json") {
            flags.json = true;
        } else if (arg == "--measure") {
            const std::string* v = value();
            if (!v) return usageError("layers: --measure needs a device name (hloscope-cli run --help lists them)");
            flags.measure = *v;
        } else if (arg == "--repeat" || arg == "--seed") {
            const std::string* v = value();
            if (!v || v->empty() || !std::all_of(v->begin(), v->end(), [](char c) { return c >= '0' && c <= '9'; }))
                return usageError("layers: " + arg + " needs a number");
            if (arg == "--seed") flags.seed = std::stoull(*v);
            else flags.repeat = std::atoi(v->c_str());
            if (flags.repeat < 1) return usageError("layers: --repeat needs a positive number");
        } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
            return usageError("layers: unknown option '" + arg + "'");
        } else if (flags.file.empty()) {
            flags.file = arg;
        } else {
            return usageError("layers: exactly one input file expected");
        }
    }
    if (flags.file.empty()) return usageError("layers: no input file");
    const std::string name = displayName(flags.file);
    auto target = resolveTargetDescription(flags.target);
    if (!target.isOk()) return usageError("layers: " + target.status().message());

    const auto start = std::chrono::steady_clock::now();
    auto input = loadModuleFromFile(flags.file);
    if (!input.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(name, input.status()).c_str());
        return kExitFailed;
    }
    const HloModule& module = **input;
    const LayerTree tree = LayerTree::build(module);

    // The step: the module as it is ("input"), N passes, through a named pass, or the whole
    // pipeline (the default, except for a module that already holds fusions).
    std::string step = flags.step;
    if (step.empty()) step = holdsFusions(module) ? "input" : "all";
    std::unique_ptr<HloModule> stepped = module.clone();
    std::string stepText = "the module as it is";
    if (step != "input") {
        auto ran = runTargetPipeline(*stepped, *target, flags.target, step);
        if (!ran.isOk()) {
            if (ran.status().code() == StatusCode::kInvalidArgument) return usageError("layers: " + ran.status().message());
            std::fprintf(stderr, "%s\n", formatError(name, ran.status()).c_str());
            return kExitFailed;
        }
        stepText = *ran;
    }
    const std::vector<LayerFigures> figures = computeLayerFigures(tree, module, *stepped, *target);
    const double seconds = secondsSince(start);

    // --measure: the module at the step run on a device, its kernels' times summed per layer.
    LayerMeasurement measurement;
    if (!flags.measure.empty())
        if (const int exit = measureLayers(flags, step, name, module, tree, *target, measurement); exit != kExitOk)
            return exit;
    const std::vector<double>& measured = measurement.seconds;
    const double unplaced = measurement.unplaced;
    const std::string& measuredOn = measurement.on;

    if (flags.json) {
        Json report{{"module", module.name()},
                    {"file", name},
                    {"source", tree.source()},
                    {"target", target->name},
                    {"step", step},
                    {"layers", layerJson(tree, figures, measured, LayerTree::kRoot, flags.depth)},
                    {"seconds", seconds}};
        if (!measured.empty()) {
            report["measured_on"] = measuredOn;
            report["measured_outside_layers_seconds"] = unplaced;
        }
        const std::string out = report.dump(1) + "\n";
        std::fwrite(out.data(), 1, out.size(), stdout);
        leaveToExit(std::move(stepped));
        leaveToExit(std::move(*input));
        return kExitOk;
    }
    const Layer& root = tree.layer(LayerTree::kRoot);
    const LayerFigures& total = figures[LayerTree::kRoot];
    std::printf("%s: %s instructions in %zu layers (from %s), %s on %s\n\n", name.c_str(),
                formatCount(root.instructionCount).c_str(), root.children.size(), tree.source().c_str(),
                stepText.c_str(), target->name.c_str());
    const std::string measuredTitle = "measured", shareTitle = "share";
    const bool withMeasured = !measured.empty();
    printRow("layer", "instructions", "kernels", "predicted", "share", withMeasured ? &measuredTitle : nullptr,
             withMeasured ? &shareTitle : nullptr);
    for (int child : root.children)
        printLayer(tree, figures, measured, child, 0, flags.depth, total.predictedSeconds);
    const std::string unplacedText = formatDuration(unplaced), totalText = withMeasured
                                                                              ? formatDuration(measured[LayerTree::kRoot])
                                                                              : std::string();
    if (!root.instructions.empty() || unplaced > 0)
        printRow("(outside any layer)", formatCount(static_cast<int64_t>(root.instructions.size())), "", "", "",
                 withMeasured ? &unplacedText : nullptr);
    printRow("total", formatCount(total.instructions),
             formatCount(total.kernelsBefore) + " → " + formatCount(total.kernelsAfter),
             formatDuration(total.predictedSeconds), "", withMeasured ? &totalText : nullptr);
    if (withMeasured) std::printf("\nmeasured on %s\n", measuredOn.c_str());
    std::printf("\n(%s to load, arrange and predict)\n", formatDuration(seconds).c_str());
    leaveToExit(std::move(stepped));
    leaveToExit(std::move(*input));
    return kExitOk;
}

}  // namespace hloscope::cli

namespace hloscope::cli {

int runVsXla(const std::vector<std::string>& args) {
    std::vector<std::string> files;
    std::string targetName = "h100";
    int depth = 1;
    size_t limit = 20;
    bool json = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--target" || arg == "--hardware") {
            if (i + 1 >= args.size()) return usageError("vs-xla: " + arg + " needs a target name");
            targetName = args[++i];
        } else if (arg == "--depth" || arg == "--limit") {
            if (i + 1 >= args.size()) return usageError("vs-xla: " + arg + " needs a number");
            const int n = std::atoi(args[++i].c_str());
            if (n < (arg == "--depth" ? 1 : 0)) return usageError("vs-xla: " + arg + " needs a positive number");
            if (arg == "--depth") depth = n;
            else limit = static_cast<size_t>(n);
        } else if (arg == "--json") {
            json = true;
        } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
            return usageError("vs-xla: unknown option '" + arg + "'");
        } else {
            files.push_back(arg);
        }
    }
    if (files.size() != 2) return usageError("vs-xla: expected BEFORE AFTER (XLA's module before and after optimization)");
    auto target = resolveTargetDescription(targetName);
    if (!target.isOk()) return usageError("vs-xla: " + target.status().message());
    const auto start = std::chrono::steady_clock::now();
    auto before = loadModuleFromFile(files[0]);
    if (!before.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(displayName(files[0]), before.status()).c_str());
        return kExitFailed;
    }
    auto xla = loadModuleFromFile(files[1]);
    if (!xla.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(displayName(files[1]), xla.status()).c_str());
        return kExitFailed;
    }
    if (holdsFusions(**before))
        std::fprintf(stderr, "hloscope-cli: vs-xla: %s already holds fusions: is it the module before optimization?\n",
                     displayName(files[0]).c_str());
    if (!holdsFusions(**xla))
        std::fprintf(stderr, "hloscope-cli: vs-xla: %s holds no fusion: is it the module after optimization?\n",
                     displayName(files[1]).c_str());
    const LayerTree tree = LayerTree::build(**before);
    std::unique_ptr<HloModule> ours = (*before)->clone();
    auto ran = runTargetPipeline(*ours, *target, targetName, "all");
    if (!ran.isOk()) {
        std::fprintf(stderr, "%s\n", formatError(displayName(files[0]), ran.status()).c_str());
        return kExitFailed;
    }
    const FusionComparison comparison = compareFusion(**before, tree, **xla, *ours);
    const FusionComparison::LayerCounts& total = comparison.layers[LayerTree::kRoot];
    const double seconds = secondsSince(start);
    if (json) {
        std::function<Json(int, int)> layerJson = [&](int index, int levels) {
            const FusionComparison::LayerCounts& c = comparison.layers[static_cast<size_t>(index)];
            Json node{{"name", tree.layer(index).name}, {"key", tree.layer(index).key}, {"ops", c.ops},
                      {"xla_kernels", c.xlaKernels}, {"hloscope_kernels", c.oursKernels}, {"grouped_alike", c.sameGroup}};
            if (levels > 0 && !tree.layer(index).children.empty()) {
                Json children = Json::array();
                for (int child : tree.layer(index).children) children.push_back(layerJson(child, levels - 1));
                node["children"] = std::move(children);
            }
            return node;
        };
        auto pairs = [&](const std::vector<std::pair<std::string, std::string>>& list) {
            Json out = Json::array();
            for (size_t i = 0; i < list.size() && i < limit; ++i) out.push_back({list[i].first, list[i].second});
            return out;
        };
        Json report{{"before", displayName(files[0])},
                    {"after", displayName(files[1])},
                    {"target", target->name},
                    {"edges", comparison.edges},
                    {"fused_by_both", comparison.fusedByBoth},
                    {"fused_by_neither", comparison.fusedByNeither},
                    {"fused_by_xla_only", comparison.fusedByXlaOnly.size()},
                    {"fused_by_hloscope_only", comparison.fusedByOursOnly.size()},
                    {"agreement", comparison.agreement()},
                    {"missing_ops", comparison.missing},
                    {"layers", layerJson(LayerTree::kRoot, depth)},
                    {"xla_only_pairs", pairs(comparison.fusedByXlaOnly)},
                    {"hloscope_only_pairs", pairs(comparison.fusedByOursOnly)}};
        const std::string out = report.dump(1) + "\n";
        std::fwrite(out.data(), 1, out.size(), stdout);
        return kExitOk;
    }
    std::printf("%s: %s ops; XLA (%s): %s kernels; hloscope (%s on %s): %s kernels\n",
                displayName(files[0]).c_str(), formatCount(total.ops).c_str(), displayName(files[1]).c_str(),
                formatCount(total.xlaKernels).c_str(), ran->c_str(), target->name.c_str(),
                formatCount(total.oursKernels).c_str());
    std::printf("producer -> consumer edges: %s; fused by both %s, by neither %s: %s agree; by XLA only %zu, "
                "by hloscope only %zu\n",
                formatCount(comparison.edges).c_str(), formatCount(comparison.fusedByBoth).c_str(),
                formatCount(comparison.fusedByNeither).c_str(), percent(comparison.agreement()).c_str(),
                comparison.fusedByXlaOnly.size(), comparison.fusedByOursOnly.size());
    if (comparison.missing > 0)
        std::printf("%s ops are missing from one side (removed or renamed by a pass): not compared\n",
                    formatCount(comparison.missing).c_str());
    std::printf("\n%s %s %s %s %s\n", padded("layer", 48, true).c_str(), padded("ops", 8, false).c_str(),
                padded("XLA kernels", 12, false).c_str(), padded("hloscope", 10, false).c_str(),
                padded("grouped alike", 14, false).c_str());
    std::function<void(int, int, int)> print = [&](int index, int indent, int levels) {
        const FusionComparison::LayerCounts& c = comparison.layers[static_cast<size_t>(index)];
        std::printf("%s %s %s %s %s\n",
                    padded(std::string(static_cast<size_t>(indent) * 2, ' ') + layerLabel(tree, index), 48, true).c_str(),
                    padded(formatCount(c.ops), 8, false).c_str(), padded(formatCount(c.xlaKernels), 12, false).c_str(),
                    padded(formatCount(c.oursKernels), 10, false).c_str(),
                    padded(c.ops > 0 ? percent(static_cast<double>(c.sameGroup) / static_cast<double>(c.ops)) : "-", 14, false)
                        .c_str());
        if (levels <= 1) return;
        for (int child : tree.layer(index).children) print(child, indent + 1, levels - 1);
    };
    for (int child : tree.layer(LayerTree::kRoot).children) print(child, 0, depth);
    print(LayerTree::kRoot, 0, 1);
    auto list = [&](const char* title, const std::vector<std::pair<std::string, std::string>>& pairs) {
        if (pairs.empty() || limit == 0) return;
        std::printf("\n%s (%zu%s):\n", title, pairs.size(), pairs.size() > limit ? ", the first by name" : "");
        for (size_t i = 0; i < pairs.size() && i < limit; ++i) {
            const int layer = tree.layerOf(pairs[i].second);
            std::printf("  %%%s -> %%%s%s\n", pairs[i].first.c_str(), pairs[i].second.c_str(),
                        layer > 0 ? ("  (" + tree.layer(layer).key + ")").c_str() : "");
        }
    };
    list("fused by XLA only", comparison.fusedByXlaOnly);
    list("fused by hloscope only", comparison.fusedByOursOnly);
    std::printf("\n(%s)\n", formatDuration(seconds).c_str());
    return kExitOk;
}

}  // namespace hloscope::cli
