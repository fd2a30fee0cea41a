// hloscope-cli layers: the model's layer tree (compiler/layers/) with the
// figures of each layer at a pipeline step.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "compiler/layers/layer_figures.h"
#include "compiler/layers/layer_tree.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
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
};

bool holdsFusions(const HloModule& module) {
    for (const auto& computation : module.computations())
        if (computation->fusionInstruction()) return true;
    return false;
}

std::string layerLabel(const LayerTree& tree, int index) {
    const Layer& layer = tree.layer(index);
    std::string label = layer.name;
    if (layer.repeatClass >= 0) label += "  ×" + std::to_string(tree.repeatClassSize(layer.repeatClass));
    return label;
}

Json layerJson(const LayerTree& tree, const std::vector<LayerFigures>& figures, int index, int depth) {
    const Layer& layer = tree.layer(index);
    const LayerFigures& f = figures[static_cast<size_t>(index)];
    Json node{{"name", layer.name},
              {"key", layer.key},
              {"kind", std::string(layerKindName(layer.kind))},
              {"instructions", f.instructions},
              {"kernels_before", f.kernelsBefore},
              {"kernels_after", f.kernelsAfter},
              {"predicted_seconds", f.predictedSeconds}};
    if (layer.repeatClass >= 0) {
        node["repeat_class"] = layer.repeatClass;
        node["repeats"] = tree.repeatClassSize(layer.repeatClass);
    }
    node["layers"] = static_cast<int64_t>(layer.children.size());
    if (depth > 0 && !layer.children.empty()) {
        Json children = Json::array();
        for (int child : layer.children) children.push_back(layerJson(tree, figures, child, depth - 1));
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

void printRow(const std::string& label, const std::string& instructions, const std::string& kernels,
              const std::string& predicted, const std::string& share) {
    std::printf("%s %s  %s  %s  %s\n", padded(label, 48, true).c_str(), padded(instructions, 12, false).c_str(),
                padded(kernels, 17, false).c_str(), padded(predicted, 10, false).c_str(),
                padded(share, 6, false).c_str());
}

void printLayer(const LayerTree& tree, const std::vector<LayerFigures>& figures, int index, int indent,
                int depth, double total) {
    const LayerFigures& f = figures[static_cast<size_t>(index)];
    char share[16];
    std::snprintf(share, sizeof share, "%.1f%%", total > 0 ? 100.0 * f.predictedSeconds / total : 0.0);
    printRow(std::string(static_cast<size_t>(indent) * 2, ' ') + layerLabel(tree, index),
             formatCount(f.instructions), formatCount(f.kernelsBefore) + " → " + formatCount(f.kernelsAfter),
             formatDuration(f.predictedSeconds), share);
    if (depth <= 1) return;
    for (int child : tree.layer(index).children) printLayer(tree, figures, child, indent + 1, depth - 1, total);
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
        auto pipeline = targetPipeline(pipelineFamily(target->kind));
        if (!pipeline.isOk()) return usageError("layers: " + pipeline.status().message());
        for (PipelineStep& s : pipeline->steps)
            if (isFusionPassName(s.pass)) s.options.set("hardware", flags.target);
        RunnerOptions options;
        options.verify = false;
        options.checkChanges = false;
        const int stepCount = static_cast<int>(pipeline->steps.size());
        int end = stepCount;
        if (step != "all") {
            auto found = findStep(*pipeline, step);
            if (!found.isOk()) return usageError("layers: --step: " + found.status().message());
            const bool numbered = std::all_of(step.begin(), step.end(), [](char c) { return c >= '0' && c <= '9'; });
            end = numbered ? std::min(*found, stepCount) : *found + 1;
        }
        const std::string family(pipelineFamily(target->kind));
        auto runner = PipelineRunner::create(*stepped, std::move(*pipeline), options);
        Status status = runner.isOk() ? (*runner)->runUntil(end) : runner.status();
        if (!status.isOk()) {
            std::fprintf(stderr, "%s\n", formatError(name, status).c_str());
            return kExitFailed;
        }
        stepText = end == stepCount ? "after the " + family + " pipeline (" + std::to_string(end) + " passes)"
                                    : "after " + std::to_string(end) + " passes of the " + family + " pipeline";
    }
    const std::vector<LayerFigures> figures = computeLayerFigures(tree, module, *stepped, *target);
    const double seconds = secondsSince(start);

    if (flags.json) {
        Json report{{"module", module.name()},
                    {"file", name},
                    {"source", tree.source()},
                    {"target", target->name},
                    {"step", step},
                    {"layers", layerJson(tree, figures, LayerTree::kRoot, flags.depth)},
                    {"seconds", seconds}};
        const std::string out = report.dump(1) + "\n";
        std::fwrite(out.data(), 1, out.size(), stdout);
        return kExitOk;
    }
    const Layer& root = tree.layer(LayerTree::kRoot);
    const LayerFigures& total = figures[LayerTree::kRoot];
    std::printf("%s: %s instructions in %zu layers (from %s), %s on %s\n\n", name.c_str(),
                formatCount(root.instructionCount).c_str(), root.children.size(), tree.source().c_str(),
                stepText.c_str(), target->name.c_str());
    printRow("layer", "instructions", "kernels", "predicted", "share");
    for (int child : root.children) printLayer(tree, figures, child, 0, flags.depth, total.predictedSeconds);
    if (!root.instructions.empty())
        printRow("(outside any layer)", formatCount(static_cast<int64_t>(root.instructions.size())), "", "", "");
    printRow("total", formatCount(total.instructions),
             formatCount(total.kernelsBefore) + " → " + formatCount(total.kernelsAfter),
             formatDuration(total.predictedSeconds), "");
    std::printf("\n(%s to load, arrange and predict)\n", formatDuration(seconds).c_str());
    return kExitOk;
}

}  // namespace hloscope::cli
