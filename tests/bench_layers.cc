// bench_layers: the graph by the model's layers (not run by CTest).
//   (a) file -> top level drawn by GraphView (parse, layer tree, build, layout, scene); goal < 2 s
//   (b) drilling into a layer (build + layout of its contents); goal < 300 ms
//   (c) a pass step on the hierarchy (the next state's layered graph: build + layout); goal < 100 ms
// Usage: bench_layers [MODEL.hlo...]   (default: the corpus' Mixtral and gemma2; QT_QPA_PLATFORM=offscreen)
#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <algorithm>
#include <cstdio>

#include "compiler/layers/layer_tree.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "core/io/module_io.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "views/document/document_state.h"
#include "views/graph/graph_view.h"

using namespace hloscope;

namespace {

double ms(const QElapsedTimer& t) { return static_cast<double>(t.nsecsElapsed()) / 1e6; }

bool waitLayout(GraphView& view) {
    QElapsedTimer t;
    t.start();
    while (view.isLayoutPending() && t.elapsed() < 120000)
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 5);
    QCoreApplication::processEvents();
    return !view.isLayoutPending() && view.lastError().isEmpty();
}

// Build and layout of one collapse state, the median of three (and of the build alone).
double buildAndLayout(const HloModule& module, const CollapseState& state, size_t* nodes = nullptr,
                      double* buildOnly = nullptr) {
    std::vector<double> times, builds;
    for (int i = 0; i < 3; ++i) {
        QElapsedTimer t;
        t.start();
        const VisibleGraph graph = GraphBuilder::build(module, state);
        builds.push_back(ms(t));
        const layout::LayoutResult r = layout::computeLayout(graph.toLayoutGraph(false));
        times.push_back(ms(t));
        if (nodes) *nodes = graph.nodes.size();
    }
    std::sort(times.begin(), times.end());
    std::sort(builds.begin(), builds.end());
    if (buildOnly) *buildOnly = builds[1];
    return times[1];
}

void bench(const QString& path) {
    std::printf("%s\n", qPrintable(QFileInfo(path).fileName()));
    if (!QFileInfo::exists(path)) {
        std::printf("    skipped: file not found\n");
        return;
    }
    GraphView view;
    view.resize(1400, 900);
    view.show();
    QCoreApplication::processEvents();
    QElapsedTimer total;
    total.start();
    auto loaded = loadModuleFromFile(path.toStdString());
    if (!loaded.isOk()) {
        std::printf("    load failed: %s\n", loaded.status().message().c_str());
        return;
    }
    std::shared_ptr<const HloModule> module(std::move(*loaded));
    const double parse = ms(total);
    QElapsedTimer t;
    t.start();
    auto layers = std::make_shared<ModelLayers>();
    layers->module = module;
    layers->tree = LayerTree::build(*module);
    const double tree = ms(t);
    auto state = std::make_shared<DocumentState>();
    state->path = path.toStdString();
    state->displayName = state->path;
    state->module = module;
    state->layers = layers;
    view.setState(state);
    const bool ok = waitLayout(view);
    QCoreApplication::processEvents();
    std::printf("    (a) %lld instructions: parse %.0f ms, layer tree %.0f ms, build+layout %.0f ms, populate %.0f ms; "
                "top level drawn %.0f ms after the file was opened (goal < 2000): %zu nodes, %zu edges %s\n",
                static_cast<long long>(module->instructionCount()), parse, tree, view.lastLayoutMs(),
                view.lastPopulateMs(), ms(total), view.visibleGraph()->nodes.size(), view.visibleGraph()->edges.size(),
                ok ? "" : "FAILED");

    // (b) The largest layer of the top level that can be drilled into.
    CollapseState collapse = view.collapseState();
    int largest = -1;
    for (int child : layers->tree.layer(LayerTree::kRoot).children) {
        const QString key = QStringLiteral("layer:") + QString::fromStdString(layers->tree.layer(child).key);
        if (layers->tree.layer(child).kind == LayerKind::kParameters || !GraphBuilder::canDrillInto(layers->tree, key))
            continue;
        if (largest < 0 || layers->tree.layer(child).instructionCount > layers->tree.layer(largest).instructionCount)
            largest = child;
    }
    if (largest > 0) {
        collapse.focus = QStringLiteral("layer:") + QString::fromStdString(layers->tree.layer(largest).key);
        size_t nodes = 0;
        double build = 0;
        const double drill = buildAndLayout(*module, collapse, &nodes, &build);
        std::printf("    (b) drill into %s (%lld instructions): %zu nodes, build+layout %.0f ms (build %.0f; goal < 300)\n",
                    layers->tree.layer(largest).name.c_str(),
                    static_cast<long long>(layers->tree.layer(largest).instructionCount), nodes, drill, build);
        collapse.focus.clear();
    }

    // (c) The module after the cpu pipeline's first pass that changes it, drawn by the same layers.
    auto stepped = module->clone();
    auto pipeline = targetPipeline("cpu");
    if (!pipeline.isOk()) return;
    RunnerOptions options;
    options.verify = false;
    auto runner = PipelineRunner::create(*stepped, std::move(*pipeline), options);
    if (!runner.isOk() || !(*runner)->runThrough("fusion").isOk()) {
        std::printf("    (c) the cpu pipeline did not run\n");
        return;
    }
    size_t nodes = 0;
    double build = 0;
    const double step = buildAndLayout(*stepped, collapse, &nodes, &build);
    std::printf("    (c) the top level after fusion: %zu nodes, build+layout %.0f ms (build %.0f; goal < 100)\n", nodes,
                step, build);
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QStringList files;
    for (int i = 1; i < argc; ++i) files << QString::fromLocal8Bit(argv[i]);
    if (files.isEmpty())
        files << QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models/xla/hlo_mixtral_8x7b_bf16_1x8.hlo")
              << QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models/xla/gemma2_2b_keras_jax.hlo");
    for (const QString& file : files) bench(file);
    return 0;
}
