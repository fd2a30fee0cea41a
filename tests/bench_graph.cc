// bench_graph: graph view timings (not run by CTest).
//   (a) Mixtral corpus model: file -> first drawn graph (parse, build,
//       layout, scene populated); goal < 2 s.
//   (b) layout of a 500-node visible graph; goal < 300 ms.
//   (c) redraw after each pass step on the BERT-like example; goal < 100 ms.
// Usage: bench_graph [mixtral.hlo]   (QT_QPA_PLATFORM=offscreen for headless)
#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <algorithm>
#include <cstdio>

#include "compiler/pipeline/pipeline_session.h"
#include "compiler/registry/target_pipelines.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/io/module_io.h"
#include "views/graph/graph_view.h"

using namespace hloscope;

namespace {

double ms(const QElapsedTimer& t) { return static_cast<double>(t.nsecsElapsed()) / 1e6; }

bool waitLayout(GraphView& view, int timeoutMs = 120000) {
    QElapsedTimer t;
    t.start();
    while (view.isLayoutPending() && t.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 5);
    QCoreApplication::processEvents();
    return !view.isLayoutPending() && view.lastError().isEmpty();
}

void benchMixtral(const QString& path) {
    std::printf("(a) Mixtral file to first drawn graph: %s\n", qPrintable(path));
    if (!QFileInfo::exists(path)) {
        std::printf("    skipped: file not found\n");
        return;
    }
    GraphView view;
    view.resize(1200, 800);
    view.show();
    QCoreApplication::processEvents();
    QElapsedTimer total;
    total.start();
    QElapsedTimer t;
    t.start();
    auto module = loadModuleFromFile(path.toStdString());
    if (!module.isOk()) {
        std::printf("    load failed: %s\n", module.status().message().c_str());
        return;
    }
    const double parse = ms(t);
    std::shared_ptr<const HloModule> shared(std::move(*module));
    t.restart();
    view.setModule(shared);
    const bool ok = waitLayout(view);
    QCoreApplication::processEvents();  // first paint
    const double shown = ms(t);
    std::printf("    %lld instructions; parse %.0f ms; build+layout (worker) %.0f ms; populate %.1f ms; "
                "graph shown %.0f ms after parse; total %.0f ms (goal < 2000) %s\n",
                static_cast<long long>(shared->instructionCount()), parse, view.lastLayoutMs(),
                view.lastPopulateMs(), shown, ms(total), ok ? "" : "FAILED");
    std::printf("    visible: %zu nodes, %zu edges (grouped by %d)\n", view.visibleGraph()->nodes.size(),
                view.visibleGraph()->edges.size(), view.visibleGraph()->groupSize);

    // (b) 500 visible nodes: expand Mixtral groups until the graph has ~500 nodes.
    CollapseState state = view.collapseState();
    VisibleGraph g = GraphBuilder::build(*shared, state);
    for (int group = 0; g.nodes.size() < 500 && group < 200; ++group) {
        state.expanded.insert(QStringLiteral("group:%1").arg(group));
        g = GraphBuilder::build(*shared, state);
    }
    const layout::LayoutGraph input = g.toLayoutGraph(false);
    const auto routed = std::count_if(input.edges.begin(), input.edges.end(), [](const auto& e) { return e.route; });
    std::printf("    %zu of %zu edges routed by dot\n", static_cast<size_t>(routed), input.edges.size());
    std::vector<double> times;
    for (int i = 0; i < 3; ++i) {
        const layout::LayoutResult r = layout::computeLayout(input);
        if (!r.ok()) std::printf("    layout failed: %s\n", r.error.c_str());
        times.push_back(r.seconds * 1e3);
    }
    std::sort(times.begin(), times.end());
    std::printf("(b) layout of a %zu-node, %zu-edge, %zu-cluster Mixtral view: median %.0f ms, min %.0f ms "
                "(goal < 300)\n",
                input.nodes.size(), input.edges.size(), input.clusters.size(), times[1], times[0]);
}

void benchSyntheticLayout() {
    // A layered DAG of 500 nodes, 1-2 operands each from the previous 20.
    layout::LayoutGraph g;
    for (int i = 0; i < 500; ++i) g.nodes.push_back({"n" + std::to_string(i), 110, 40, ""});
    unsigned seed = 1;
    for (int i = 1; i < 500; ++i) {
        for (int k = 0; k < 1 + (i % 3 == 0); ++k) {
            seed = seed * 1103515245 + 12345;
            const int p = i - 1 - static_cast<int>((seed >> 16) % std::min(i, 20));
            g.edges.push_back({"n" + std::to_string(p), "n" + std::to_string(i), ""});
        }
    }
    std::vector<double> times;
    for (int i = 0; i < 3; ++i) times.push_back(layout::computeLayout(g).seconds * 1e3);
    std::sort(times.begin(), times.end());
    std::printf("(b) layout of a synthetic 500-node, %zu-edge DAG: median %.0f ms (goal < 300)\n", g.edges.size(),
                times[1]);
}

void benchBertSteps() {
    const std::string path = HLOSCOPE_SOURCE_DIR "/resources/examples/bert_encoder_forward.hlo";
    auto module = loadModuleFromFile(path);
    auto pipeline = targetPipeline("cpu");
    if (!module.isOk() || !pipeline.isOk()) return;
    auto session = PipelineSession::create(std::move(*module), *pipeline);
    if (!session.isOk() || !(*session)->runAll().isOk()) {
        std::printf("(c) pipeline failed\n");
        return;
    }
    const auto snapshots = std::make_shared<const std::vector<PassSnapshot>>((*session)->snapshots());
    std::vector<DocumentStatePtr> states;
    for (int i = 0; i < static_cast<int>(snapshots->size()); ++i) {
        auto state = std::make_shared<DocumentState>();
        state->path = path;
        state->displayName = "bert";
        state->snapshots = snapshots;
        state->current = i;
        state->module = std::shared_ptr<const HloModule>((*snapshots)[static_cast<size_t>(i)].materialize().value().release());
        states.push_back(state);
    }
    GraphView view;
    view.resize(1200, 800);
    view.show();
    view.setState(states[0]);
    waitLayout(view);
    std::printf("(c) BERT forward (%lld entry instructions), redraw after each cpu pipeline step (goal < 100 ms):\n",
                static_cast<long long>(states[0]->module->entryComputation()->instructionCount()));
    std::vector<std::vector<double>> perRound(3);
    // Rounds: 0 steps as soon as the last redraw is done (a prefetch of the
    // next step may still be running), 1 steps at a user's pace (300 ms
    // apart: the prefetch is done), 2 replays steps already seen.
    for (int round = 0; round < 3; ++round) {
        if (round == 1) {
            view.setState(states[0]);
            waitLayout(view);
            view.clearLayoutCache();
        }
        for (size_t i = 1; i < states.size(); ++i) {
            if (round == 1) {
                QElapsedTimer pause;
                pause.start();
                while (pause.elapsed() < 300) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
            }
            QElapsedTimer t;
            t.start();
            view.setState(states[i]);
            waitLayout(view);
            const double elapsed = ms(t);
            perRound[static_cast<size_t>(round)].push_back(elapsed);
            std::printf("    %s step %2zu %-34s %s %7.1f ms (worker %.1f, populate %.1f)%s\n",
                        round == 0 ? "first " : round == 1 ? "paced " : "replay", i, (*snapshots)[i].pass.c_str(),
                        (*snapshots)[i].changed ? "changed" : "same   ", elapsed, view.lastLayoutMs(),
                        view.lastPopulateMs(), view.lastLayoutReused() ? " (layout reused)" : "");
        }
    }
    const char* names[3] = {"stepping at once", "stepping 300 ms apart", "replay"};
    for (size_t r = 0; r < perRound.size(); ++r) {
        std::vector<double>& all = perRound[r];
        std::sort(all.begin(), all.end());
        std::printf("    %-22s median %.1f ms, max %.1f ms\n", names[r], all[all.size() / 2], all.back());
    }
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    const QString mixtral = argc > 1 ? QString::fromLocal8Bit(argv[1])
                                     : QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models/xla/hlo_mixtral_8x7b_bf16_2x8.hlo");
    benchMixtral(mixtral);
    benchSyntheticLayout();
    benchBertSteps();
    return 0;
}
