// The graph view by the model's layers: GraphBuilder with a LayerTree (layer nodes, their
// counts, edges carrying values and bytes, expansion in place, drilling in with the outside
// layers and a breadcrumb) and GraphView's drill-in, breadcrumb and "expand all like this".
#include <QLabel>
#include <QTest>

#include "compiler/layers/layer_tree.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "views/document/document_state.h"
#include "views/graph/graph_items.h"
#include "views/graph/graph_scene.h"
#include "views/graph/graph_view.h"
#include "views/model/seconds_text.h"
#include "tests/event_wait.h"

using namespace hloscope;

namespace {

// 10 blocks of 5 dense sub-layers of 8 instructions (JAX-style names
// jit(f)/jit(main)/block_B/dense_K/op): 400 instructions and 101 parameters.
std::string layeredModel() {
    std::string params = "  %x.0 = f32[8,16]{1,0} parameter(0)\n", body;
    int parameter = 1, n = 0;
    for (int b = 0; b < 10; ++b) {
        for (int k = 0; k < 5; ++k, ++n) {
            const std::string s = std::to_string(n + 1), prev = "%x." + std::to_string(n);
            const std::string meta = ", metadata={op_name=\"jit(f)/jit(main)/block_" + std::to_string(b) +
                                     "/dense_" + std::to_string(k) + "/op\"}";
            params += "  %w." + s + " = f32[16,16]{1,0} parameter(" + std::to_string(parameter++) + ")\n";
            params += "  %b." + s + " = f32[16]{0} parameter(" + std::to_string(parameter++) + ")\n";
            body += "  %dot." + s + " = f32[8,16]{1,0} dot(" + prev + ", %w." + s +
                    "), lhs_contracting_dims={1}, rhs_contracting_dims={0}" + meta + "\n";
            body += "  %bias." + s + " = f32[8,16]{1,0} broadcast(%b." + s + "), dimensions={1}" + meta + "\n";
            body += "  %add." + s + " = f32[8,16]{1,0} add(%dot." + s + ", %bias." + s + ")" + meta + "\n";
            body += "  %tanh." + s + " = f32[8,16]{1,0} tanh(%add." + s + ")" + meta + "\n";
            body += "  %mul." + s + " = f32[8,16]{1,0} multiply(%tanh." + s + ", %tanh." + s + ")" + meta + "\n";
            body += "  %neg." + s + " = f32[8,16]{1,0} negate(%mul." + s + ")" + meta + "\n";
            body += "  %exp." + s + " = f32[8,16]{1,0} exponential(%neg." + s + ")" + meta + "\n";
            body += "  " + std::string(n == 49 ? "ROOT " : "") + "%x." + s + " = f32[8,16]{1,0} add(%mul." + s +
                    ", %exp." + s + ")" + meta + "\n";
        }
    }
    return "HloModule layered\n\nENTRY %main {\n" + params + body + "}\n";
}

ModelLayersPtr layersOf(std::shared_ptr<const HloModule> module) {
    auto layers = std::make_shared<ModelLayers>();
    layers->module = module;
    layers->tree = LayerTree::build(*module);
    return layers;
}

std::shared_ptr<const HloModule> parsed() {
    auto module = parseHloModule(layeredModel());
    if (!module.isOk()) qFatal("%s", module.status().toString().c_str());
    return std::shared_ptr<const HloModule>(std::move(*module));
}

// A document of the layered module, as the document worker publishes it.
std::shared_ptr<DocumentState> layeredState(const std::shared_ptr<const HloModule>& module) {
    auto state = std::make_shared<DocumentState>();
    state->path = "layered";
    state->displayName = "layered";
    state->module = module;
    state->layers = layersOf(module);
    return state;
}

// Shows `state` in `view` and waits for its layout.
void showLaidOut(GraphView& view, const std::shared_ptr<DocumentState>& state) {
    view.resize(900, 700);
    view.show();
    view.setState(state);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
}

QStringList nodeKeys(const VisibleGraph& graph) {
    QStringList keys;
    for (const GraphNode& node : graph.nodes) keys << node.key;
    return keys;
}

const GraphEdge* edgeBetween(const VisibleGraph& graph, const QString& from, const QString& to) {
    for (const GraphEdge& edge : graph.edges)
        if (edge.from == from && edge.to == to) return &edge;
    return nullptr;
}

}  // namespace

class TestLayerGraph : public QObject {
    Q_OBJECT
private slots:
    void topLevelIsTheLayers() {
        auto module = parsed();
        const ModelLayersPtr layers = layersOf(module);
        const CollapseState state = GraphBuilder::initialState(*module, layers);
        QVERIFY(state.grouped);
        QVERIFY(state.layers);
        // Without layers the same module is small enough to draw whole.
        QVERIFY(!GraphBuilder::initialState(*module).grouped);
        const VisibleGraph graph = GraphBuilder::build(*module, state);
        QVERIFY(graph.layered);
        QCOMPARE(nodeKeys(graph), (QStringList{"layer:101 parameters", "layer:block_0", "layer:block_1", "layer:block_2",
                                               "layer:block_3", "layer:block_4", "layer:block_5", "layer:block_6",
                                               "layer:block_7", "layer:block_8", "layer:block_9"}));
        const GraphNode* block = graph.node(QStringLiteral("layer:block_3"));
        QVERIFY(block && block->expandable);
        QCOMPARE(block->title, QStringLiteral("block_3  ×10"));
        QCOMPARE(block->subtitle, QStringLiteral("40 ops · 40 kernels"));
        QCOMPARE(graph.node(QStringLiteral("layer:101 parameters"))->category, NodeCategory::kParameter);
        // Consecutive blocks exchange one f32[8,16] value (512 bytes); the parameters feed all, unrouted.
        const GraphEdge* chain = edgeBetween(graph, QStringLiteral("layer:block_2"), QStringLiteral("layer:block_3"));
        QVERIFY(chain);
        QCOMPARE(chain->multiplicity, 1);
        QCOMPARE(chain->bytes, 512.0);
        const GraphEdge* weights = edgeBetween(graph, QStringLiteral("layer:101 parameters"), QStringLiteral("layer:block_3"));
        QVERIFY(weights);
        QCOMPARE(weights->multiplicity, 10);  // 5 weights and 5 biases
        QVERIFY(!weights->route);
        // Every instruction is shown by the layer that hides it.
        QCOMPARE(graph.shownBy.value(QStringLiteral("tanh.17")), QStringLiteral("layer:block_3"));
        QCOMPARE(graph.breadcrumb.size(), 1);
    }

    void expandInPlace() {
        auto module = parsed();
        CollapseState state = GraphBuilder::initialState(*module, layersOf(module));
        state.expanded.insert(QStringLiteral("layer:block_3"));
        const VisibleGraph graph = GraphBuilder::build(*module, state);
        QVERIFY(graph.clusterIndex.contains(QStringLiteral("layer:block_3")));
        QVERIFY(graph.node(QStringLiteral("layer:block_3/dense_2")));
        QCOMPARE(graph.node(QStringLiteral("layer:block_3/dense_2"))->cluster, QStringLiteral("layer:block_3"));
        QVERIFY(!graph.node(QStringLiteral("layer:block_3")));
        // The value entering block_3 now reaches its first sub-layer.
        QVERIFY(edgeBetween(graph, QStringLiteral("layer:block_2"), QStringLiteral("layer:block_3/dense_0")));
        state.expanded.insert(QStringLiteral("layer:block_3/dense_2"));
        const VisibleGraph deeper = GraphBuilder::build(*module, state);
        QVERIFY(deeper.node(QStringLiteral("tanh.18")));
        QCOMPARE(deeper.node(QStringLiteral("tanh.18"))->cluster, QStringLiteral("layer:block_3/dense_2"));
    }

    void drillIn() {
        auto module = parsed();
        const ModelLayersPtr layers = layersOf(module);
        QVERIFY(GraphBuilder::canDrillInto(layers->tree, QStringLiteral("layer:block_3")));
        QVERIFY(!GraphBuilder::canDrillInto(layers->tree, QStringLiteral("layer:no_such_layer")));
        QVERIFY(!GraphBuilder::canDrillInto(layers->tree, QStringLiteral("tanh.18")));
        CollapseState state = GraphBuilder::initialState(*module, layers);
        state.focus = QStringLiteral("layer:block_3");
        const VisibleGraph graph = GraphBuilder::build(*module, state);
        const QStringList keys = nodeKeys(graph);
        // Its five sub-layers, and outside: the block before, the one after and the parameters.
        for (int k = 0; k < 5; ++k) QVERIFY(keys.contains(QStringLiteral("layer:block_3/dense_%1").arg(k)));
        QVERIFY(keys.contains(QStringLiteral("layer:block_2")));
        QVERIFY(keys.contains(QStringLiteral("layer:block_4")));
        QVERIFY(keys.contains(QStringLiteral("layer:101 parameters")));
        QVERIFY(!keys.contains(QStringLiteral("layer:block_7")));
        QCOMPARE(keys.size(), 8);
        QVERIFY(edgeBetween(graph, QStringLiteral("layer:block_2"), QStringLiteral("layer:block_3/dense_0")));
        QVERIFY(edgeBetween(graph, QStringLiteral("layer:block_3/dense_4"), QStringLiteral("layer:block_4")));
        QCOMPARE(graph.breadcrumb.size(), 2);
        QCOMPARE(graph.breadcrumb.back().second, QStringLiteral("block_3"));
    }

    // The tree is the loaded module's; a later step is matched by names: after fusion, each
    // layer's kernels are fewer than its ops.
    void laterStepsByName() {
        auto module = parsed();
        const ModelLayersPtr layers = layersOf(module);
        auto stepped = module->clone();
        auto pipeline = targetPipeline("cpu");
        QVERIFY(pipeline.isOk());
        auto runner = PipelineRunner::create(*stepped, std::move(*pipeline));
        QVERIFY(runner.isOk());
        QVERIFY((*runner)->runThrough("fusion").isOk());
        const VisibleGraph graph = GraphBuilder::build(*stepped, GraphBuilder::initialState(*module, layers));
        const GraphNode* block = graph.node(QStringLiteral("layer:block_3"));
        QVERIFY(block);
        QVERIFY2(block->subtitle.endsWith(QLatin1String(" kernels")) || block->subtitle.endsWith(QLatin1String(" kernel")),
                 qPrintable(block->subtitle));
        const int kernels = block->subtitle.section(QStringLiteral(" · "), 1).section(QLatin1Char(' '), 0, 0).toInt();
        QVERIFY2(kernels >= 1 && kernels < 40, qPrintable(block->subtitle));
    }

    // After a run, the heat map sums each layer's measured kernel times on its node: the
    // hottest layer is the one whose kernels took longest, its node says the time.
    void measuredTimesOnLayers() {
        auto module = parsed();
        const auto state = layeredState(module);
        GraphView view;
        showLaidOut(view, state);
        if (QTest::currentTestFailed()) return;
        QVERIFY(view.visibleGraph()->layered);
        QHash<QString, double> times;
        int inBlock3 = 0, inBlock0 = 0;
        const QHash<QString, QString>& shownBy = view.visibleGraph()->shownBy;
        for (auto it = shownBy.cbegin(); it != shownBy.cend(); ++it) {
            if (it.value() == QLatin1String("layer:block_3") && inBlock3 < 3) {
                times.insert(it.key(), 2e-3);
                ++inBlock3;
            } else if (it.value() == QLatin1String("layer:block_0") && inBlock0 < 1) {
                times.insert(it.key(), 1e-3);
                ++inBlock0;
            }
        }
        QCOMPARE(inBlock3, 3);
        QCOMPARE(inBlock0, 1);
        view.setMeasuredTimes(times);
        QVERIFY(view.heatMapShown());
        QCOMPARE(view.heatItemCount(), 2);
        auto* scene = view.findChild<GraphScene*>();
        QVERIFY(scene);
        QCOMPARE(scene->hottestKey(), QStringLiteral("layer:block_3"));
        QCOMPARE(scene->hottestSeconds(), 6e-3);
        GraphNodeItem* block3 = scene->nodeItem(QStringLiteral("layer:block_3"));
        QVERIFY(block3);
        QVERIFY(block3->heat() == 1.0);
        QCOMPARE(block3->heatText(), secondsText(6e-3) + QStringLiteral(" · 86%"));
    }

    void viewDrillsInAndBack() {
        auto module = parsed();
        const auto state = layeredState(module);
        GraphView view;
        showLaidOut(view, state);
        if (QTest::currentTestFailed()) return;
        QVERIFY(view.visibleGraph()->layered);
        QVERIFY(view.breadcrumb()->isVisible());
        view.drillInto(QStringLiteral("layer:block_3"));
        QCOMPARE(view.focusLayer(), QStringLiteral("layer:block_3"));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending() && view.visibleGraph()->breadcrumb.size() == 2, 30000);
        QVERIFY(view.breadcrumb()->text().contains(QLatin1String("block_3")));
        QVERIFY(view.breadcrumb()->text().contains(QLatin1String("href=\"layer:\"")));
        // The breadcrumb's link to the module goes back.
        emit view.breadcrumb()->linkActivated(QStringLiteral("layer:"));
        QVERIFY(view.focusLayer().isEmpty());
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending() && view.visibleGraph()->breadcrumb.size() == 1, 30000);
        // After fusion, a layer's kernels: every fusion in it drawn around its ops.
        {
            auto stepped = std::shared_ptr<HloModule>(module->clone());
            auto pipeline = targetPipeline("cpu");
            QVERIFY(pipeline.isOk());
            auto runner = PipelineRunner::create(*stepped, std::move(*pipeline));
            QVERIFY(runner.isOk());
            QVERIFY((*runner)->runThrough("fusion").isOk());
            auto fused = std::make_shared<DocumentState>(*state);
            fused->module = stepped;
            fused->generation = state->generation + 1;
            view.setState(fused);
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
            const int fusions = view.expandKernelsOf(QStringLiteral("layer:block_3"));
            QVERIFY(fusions >= 1);
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
            int fusionClusters = 0;
            for (const GraphCluster& cluster : view.visibleGraph()->clusters)
                fusionClusters += cluster.category == NodeCategory::kFusion ? 1 : 0;
            QCOMPARE(fusionClusters, fusions);
            QVERIFY(view.visibleGraph()->clusterIndex.contains(QStringLiteral("layer:block_3")));
            QCOMPARE(view.expandKernelsOf(QStringLiteral("layer:no_such_layer")), 0);
            view.setState(state);
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
            view.setCollapseState(GraphBuilder::initialState(*module, state->layers));
            HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
        }
        // "Expand every layer like this": the ten blocks.
        QCOMPARE(view.expandAllLike(QStringLiteral("layer:block_0")), 10);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending() && view.visibleGraph()->clusters.size() == 10, 30000);
    }
};

QTEST_MAIN(TestLayerGraph)
#include "tst_layer_graph.moc"
