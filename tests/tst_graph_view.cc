// Graph view: GraphBuilder counts on every example, fused / expanded
// fusions after the fusion pass, while/call expansion, large-module
// grouping, GraphView layout in the worker, search, selection signals,
// edge menu signals, PNG/SVG export, diff cues after a fusion step,
// layout reuse between steps, heat map of measured times, the fusion
// explorer's pair as a highlighted edge, before/after side by side,
// Mixtral opening grouped (corpus).
#include <QFile>
#include <QFileInfo>
#include <QLineF>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

#include <QDir>
#include <QMenu>
#include <QTemporaryDir>
#include <set>

#include "compiler/pipeline/pipeline_session.h"
#include "compiler/registry/target_pipelines.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "core/io/module_io.h"
#include "views/graph/graph_view.h"
#include "tests/event_wait.h"

using namespace hloscope;

namespace {

std::shared_ptr<const HloModule> loadFile(const QString& path) {
    auto module = loadModuleFromFile(path.toStdString());
    if (!module.isOk()) qFatal("%s: %s", qPrintable(path), module.status().message().c_str());
    return std::shared_ptr<const HloModule>(std::move(*module));
}

std::shared_ptr<const HloModule> parse(const char* text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("%s", module.status().message().c_str());
    return std::shared_ptr<const HloModule>(std::move(*module));
}

QStringList examples() {
    QDir dir(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples"));
    QStringList out;
    for (const QString& f : dir.entryList({QStringLiteral("*.hlo")}, QDir::Files, QDir::Name))
        out << dir.filePath(f);
    return out;
}

int64_t entryEdges(const HloComputation& c) {
    int64_t n = 0;
    for (const auto& i : c.instructions()) n += i->operandCount();
    return n;
}

// Runs the cpu pipeline through `fusion` and returns the session.
std::unique_ptr<PipelineSession> fusedSession(const QString& path) {
    auto module = loadModuleFromFile(path.toStdString());
    if (!module.isOk()) qFatal("%s", module.status().message().c_str());
    auto pipeline = targetPipeline("cpu");
    auto session = PipelineSession::create(std::move(*module), *pipeline);
    if (!session.isOk()) qFatal("%s", session.status().message().c_str());
    Status s = (*session)->runThrough("fusion");
    if (!s.isOk()) qFatal("%s", s.message().c_str());
    return std::move(*session);
}

DocumentStatePtr stateAt(const std::vector<PassSnapshot>& snapshots, int current, const std::string& name) {
    auto state = std::make_shared<DocumentState>();
    state->path = name;
    state->displayName = name;
    state->snapshots = std::make_shared<const std::vector<PassSnapshot>>(snapshots);
    state->current = current;
    auto module = snapshots[static_cast<size_t>(current)].materialize();
    if (!module.isOk()) qFatal("%s", module.status().message().c_str());
    state->module = std::shared_ptr<const HloModule>(std::move(*module));
    return state;
}

int snapshotOf(const std::vector<PassSnapshot>& snapshots, const std::string& pass) {
    for (size_t i = 0; i < snapshots.size(); ++i)
        if (snapshots[i].pass == pass) return static_cast<int>(i);
    return -1;
}

const char* kWhile = R"(HloModule w
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[4] multiply(x, x)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
callee {
  a = f32[4] parameter(0)
  ROOT e = f32[4] exponential(a)
}
ENTRY e {
  x0 = f32[4] parameter(0)
  c = f32[4] call(x0), to_apply=callee
  z = s32[] constant(0)
  t0 = (s32[], f32[4]) tuple(z, c)
  w = (s32[], f32[4]) while(t0), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";

}  // namespace

class TestGraphView : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void categories();
    void buildsEveryExample_data();
    void buildsEveryExample();
    void fusionsCollapsedAndExpanded();
    void whileAndCallExpand();
    void largeModulesAreGrouped();
    void viewLaysOutExamples();
    void searchNextPrevious();
    void selectionSignals();
    void expandByToggle();
    void edgeMenuSignals();
    void exportPngAndSvg();
    void diffCuesAfterFusionStep();
    void unchangedStepReusesLayout();
    void heatMapOfMeasuredTimes();
    void fusionPairHighlightsEdge();
    void beforeAfterSideBySide();
    void mixtralOpensGrouped();
};

void TestGraphView::initTestCase() { QVERIFY(!examples().isEmpty()); }

void TestGraphView::categories() {
    auto m = parse(kWhile);
    const HloComputation* e = m->entryComputation();
    QCOMPARE(nodeCategoryOf(*e->findInstruction("x0")), NodeCategory::kParameter);
    QCOMPARE(nodeCategoryOf(*e->findInstruction("z")), NodeCategory::kConstant);
    QCOMPARE(nodeCategoryOf(*e->findInstruction("w")), NodeCategory::kControlFlow);
    QCOMPARE(nodeCategoryOf(*e->findInstruction("t0")), NodeCategory::kTuple);
    // Distinct colours per category, in both palettes.
    QSet<QRgb> light, dark;
    for (int c = 0; c <= static_cast<int>(NodeCategory::kGroup); ++c) {
        light.insert(nodeCategoryColor(static_cast<NodeCategory>(c), false).rgb());
        dark.insert(nodeCategoryColor(static_cast<NodeCategory>(c), true).rgb());
    }
    QCOMPARE(light.size(), static_cast<int>(NodeCategory::kGroup) + 1);
    QCOMPARE(dark.size(), static_cast<int>(NodeCategory::kGroup) + 1);
}

void TestGraphView::buildsEveryExample_data() {
    QTest::addColumn<QString>("path");
    for (const QString& path : examples()) QTest::newRow(qPrintable(QFileInfo(path).fileName())) << path;
}

void TestGraphView::buildsEveryExample() {
    QFETCH(QString, path);
    auto module = loadFile(path);
    const HloComputation& entry = *module->entryComputation();
    const CollapseState initial = GraphBuilder::initialState(*module);
    if (initial.grouped) {  // large: groups of consecutive instructions
        QVERIFY(entry.instructionCount() > GraphBuilder::kLargeGraphNodes);
        const VisibleGraph grouped = GraphBuilder::build(*module, initial);
        QCOMPARE(static_cast<int64_t>(grouped.nodes.size()),
                 (entry.instructionCount() + grouped.groupSize - 1) / grouped.groupSize);
        const layout::LayoutResult r = layout::computeLayout(grouped.toLayoutGraph(false));
        QVERIFY2(r.ok(), r.error.c_str());
    }
    // Counts of the ungrouped graph (not laid out when large).
    const VisibleGraph g = GraphBuilder::build(*module, CollapseState{});
    QCOMPARE(static_cast<int64_t>(g.nodes.size()), entry.instructionCount());
    QCOMPARE(static_cast<int64_t>(g.edges.size()), entryEdges(entry));
    QVERIFY(g.clusters.empty());
    for (const auto& i : entry.instructions()) {
        const GraphNode* node = g.node(QString::fromStdString(i->name()));
        QVERIFY(node);
        QCOMPARE(node->uniqueId, i->uniqueId());
        QCOMPARE(node->category, nodeCategoryOf(*i));
        QVERIFY(node->width > 0 && node->height > 0);
    }
    // Edge endpoints are nodes and follow the operands.
    for (const GraphEdge& e : g.edges) {
        QVERIFY(g.node(e.from) && g.node(e.to));
        QCOMPARE(e.from, e.producer);
        QCOMPARE(e.to, e.consumer);
    }
    if (initial.grouped) return;
    const layout::LayoutResult r = layout::computeLayout(g.toLayoutGraph(false));
    QVERIFY2(r.ok(), r.error.c_str());
}

void TestGraphView::fusionsCollapsedAndExpanded() {
    auto session = fusedSession(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/bert_encoder_forward.hlo"));
    std::shared_ptr<const HloModule> module(session->snapshots().back().materialize().value().release());
    const HloComputation& entry = *module->entryComputation();
    std::vector<const HloInstruction*> fusions;
    for (const auto& i : entry.instructions())
        if (i->opcode() == HloOpcode::kFusion) fusions.push_back(i.get());
    QVERIFY2(fusions.size() >= 2, "the fusion pass fused nothing");

    // Collapsed: one node per entry instruction, labelled with kind and size.
    const VisibleGraph collapsed = GraphBuilder::build(*module, {});
    QCOMPARE(static_cast<int64_t>(collapsed.nodes.size()), entry.instructionCount());
    QCOMPARE(static_cast<int64_t>(collapsed.edges.size()), entryEdges(entry));
    int fusionNodes = 0;
    for (const GraphNode& n : collapsed.nodes) {
        if (n.category != NodeCategory::kFusion) continue;
        ++fusionNodes;
        QVERIFY(n.expandable);
        QVERIFY(n.innerCount > 0);
        QVERIFY2(n.title.contains(QStringLiteral("%1 ops").arg(n.innerCount)), qPrintable(n.title));
    }
    QCOMPARE(fusionNodes, static_cast<int>(fusions.size()));
    // Fused instructions are shown by their fusion.
    const HloComputation* fused = fusions.front()->fusedComputation();
    for (const auto& i : fused->instructions())
        QCOMPARE(collapsed.shownBy.value(QString::fromStdString(i->name())),
                 QString::fromStdString(fusions.front()->name()));

    // Expanded: a cluster with the fused instructions, parameters replaced
    // by edges from the outer operands into their users.
    for (const HloInstruction* fusion : fusions) {
        CollapseState state;
        const QString key = QString::fromStdString(fusion->name());
        state.expanded.insert(key);
        const VisibleGraph g = GraphBuilder::build(*module, state);
        const HloComputation* body = fusion->fusedComputation();
        int64_t omitted = 0, parameterUses = 0, unusedParameters = 0, innerEdges = 0;
        for (const HloInstruction* p : body->parameters()) {
            if (p->userCount() > 0 && p != body->root()) ++omitted;
            else ++unusedParameters;
        }
        for (const HloInstruction* p : body->parameters()) {
            if (!(p->userCount() > 0 && p != body->root())) continue;
            std::set<const HloInstruction*> users(p->users().begin(), p->users().end());
            for (const HloInstruction* u : users)
                for (const HloInstruction* o : u->operands()) parameterUses += (o == p);
        }
        for (const auto& i : body->instructions()) {
            if (i->opcode() == HloOpcode::kParameter && i->userCount() > 0 && i.get() != body->root()) continue;
            for (const HloInstruction* o : i->operands())
                innerEdges += !(o->opcode() == HloOpcode::kParameter && o->userCount() > 0 && o != body->root());
        }
        QCOMPARE(static_cast<int64_t>(g.nodes.size()), entry.instructionCount() - 1 + body->instructionCount() - omitted);
        QCOMPARE(g.clusters.size(), size_t{1});
        QCOMPARE(g.clusters[0].key, key);
        QVERIFY(g.clusters[0].label.contains(QLatin1String("1 kernel")));
        QCOMPARE(static_cast<int64_t>(g.edges.size()),
                 entryEdges(entry) - fusion->operandCount() + innerEdges + parameterUses + unusedParameters);
        int inside = 0;
        for (const GraphNode& n : g.nodes) {
            if (n.cluster != key) continue;
            ++inside;
            QVERIFY(n.key.startsWith(key + '/'));
        }
        QCOMPARE(static_cast<int64_t>(inside), body->instructionCount() - omitted);
        // Every outer operand reaches the cluster.
        for (const HloInstruction* operand : fusion->operands()) {
            bool reaches = false;
            for (const GraphEdge& e : g.edges)
                reaches |= e.from == QString::fromStdString(operand->name()) && e.to.startsWith(key + '/');
            QVERIFY2(reaches || operand->opcode() == HloOpcode::kFusion, operand->name().c_str());
        }
        const layout::LayoutResult r = layout::computeLayout(g.toLayoutGraph(false));
        QVERIFY2(r.ok(), r.error.c_str());
    }
}

void TestGraphView::whileAndCallExpand() {
    auto m = parse(kWhile);
    const VisibleGraph collapsed = GraphBuilder::build(*m, {});
    QCOMPARE(collapsed.nodes.size(), size_t{6});
    QVERIFY(collapsed.node(QStringLiteral("w"))->expandable);
    QVERIFY(collapsed.node(QStringLiteral("c"))->expandable);
    QCOMPARE(collapsed.node(QStringLiteral("w"))->innerCount, 9);  // 3 + 6 non-parameters
    CollapseState state;
    state.expanded = {QStringLiteral("w"), QStringLiteral("c")};
    const VisibleGraph g = GraphBuilder::build(*m, state);
    // while: a cluster with one sub-cluster per computation, parameters drawn.
    QVERIFY(g.clusterIndex.contains(QStringLiteral("w")));
    QVERIFY(g.clusterIndex.contains(QStringLiteral("w/cond")));
    QVERIFY(g.clusterIndex.contains(QStringLiteral("w/body")));
    QVERIFY(g.node(QStringLiteral("w/body/p")));
    QVERIFY(g.node(QStringLiteral("w/cond/lt")));
    // call: parameter replaced, x0 feeds the exponential directly.
    QVERIFY(!g.node(QStringLiteral("c/a")));
    auto hasEdge = [&](const char* from, const char* to) {
        for (const GraphEdge& e : g.edges)
            if (e.from == QLatin1String(from) && e.to == QLatin1String(to)) return true;
        return false;
    };
    QVERIFY(hasEdge("x0", "c/e"));
    QVERIFY(hasEdge("c/e", "t0"));
    QVERIFY(hasEdge("t0", "w/body/p"));
    QVERIFY(hasEdge("t0", "w/cond/p"));
    QVERIFY(hasEdge("w/body/t", "r"));
    const layout::LayoutResult r = layout::computeLayout(g.toLayoutGraph(true));
    QVERIFY2(r.ok(), r.error.c_str());
}

void TestGraphView::largeModulesAreGrouped() {
    std::string text = "HloModule big\nENTRY e {\n  v0 = f32[8] parameter(0)\n";
    const int n = GraphBuilder::kLargeGraphNodes + 500;
    for (int i = 1; i < n; ++i) {
        text += "  v" + std::to_string(i) + " = f32[8] add(v" + std::to_string(i - 1) + ", v" +
                std::to_string(i > 3 ? i - 3 : 0) + ")\n";
    }
    // One value used far below where it is made.
    text += "  far = f32[8] add(v0, v" + std::to_string(n - 1) + ")\n";
    text += "  ROOT r = f32[8] negate(far)\n}\n";
    auto m = parse(text.c_str());
    const CollapseState state = GraphBuilder::initialState(*m);
    QVERIFY(state.grouped);
    const VisibleGraph g = GraphBuilder::build(*m, state);
    QVERIFY(g.groupSize > 0);
    QVERIFY(g.nodes.size() <= 130);
    QCOMPARE(static_cast<int64_t>(g.nodes.size()), (n + 2 + g.groupSize - 1) / g.groupSize);
    int64_t carried = 0;
    int unrouted = 0;
    for (const GraphEdge& e : g.edges) {
        QVERIFY(e.from != e.to);
        carried += e.multiplicity;
        // Edges between groups more than two apart are left out of dot's
        // layout (one virtual node per rank crossed) and drawn afterwards.
        const int span = std::abs(e.to.mid(6).toInt() - e.from.mid(6).toInt());
        QCOMPARE(e.route, span <= 2);
        unrouted += !e.route;
    }
    QCOMPARE(unrouted, 1);  // v0 -> far
    QVERIFY(carried > 0);
    QCOMPARE(g.shownBy.value(QStringLiteral("v0")), QStringLiteral("group:0"));
    // Expanding a group shows its instructions in a cluster.
    CollapseState expanded = state;
    expanded.expanded.insert(QStringLiteral("group:1"));
    const VisibleGraph e = GraphBuilder::build(*m, expanded);
    QVERIFY(e.clusterIndex.contains(QStringLiteral("group:1")));
    QCOMPARE(static_cast<int>(e.nodes.size()), static_cast<int>(g.nodes.size()) - 1 + g.groupSize);
    const layout::LayoutResult r = layout::computeLayout(e.toLayoutGraph(false));
    QVERIFY2(r.ok(), r.error.c_str());
    QVERIFY(!GraphBuilder::initialState(*parse(kWhile)).grouped);
}

void TestGraphView::viewLaysOutExamples() {
    GraphView view;
    view.resize(900, 700);
    for (const QString& path : examples()) {
        auto module = loadFile(path);
        view.setModule(module);
        QVERIFY(view.isLayoutPending());
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
        QVERIFY2(view.lastError().isEmpty(), qPrintable(view.lastError()));
        if (view.collapseState().grouped) {
            QCOMPARE(view.graphScene()->nodeItems().size(), static_cast<qsizetype>(view.visibleGraph()->nodes.size()));
            QVERIFY(view.graphScene()->nodeItems().size() < 200);
            continue;
        }
        QCOMPARE(static_cast<int64_t>(view.graphScene()->nodeItems().size()),
                 module->entryComputation()->instructionCount());
        QCOMPARE(static_cast<int64_t>(view.graphScene()->edgeItems().size()),
                 entryEdges(*module->entryComputation()));
        QVERIFY(!view.graphScene()->graphRect().isEmpty());
    }
}

void TestGraphView::searchNextPrevious() {
    GraphView view;
    view.resize(800, 600);
    auto module = loadFile(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo"));
    view.setModule(module);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    int expected = 0;
    for (const auto& i : module->entryComputation()->instructions()) {
        const bool hit = QString::fromStdString(i->name()).contains(QLatin1String("dot"), Qt::CaseInsensitive) ||
                         QString::fromUtf8(hloOpcodeString(i->opcode()).data()).contains(QLatin1String("dot")) ||
                         QString::fromStdString(i->shape().toString()).contains(QLatin1String("dot"));
        expected += hit;
    }
    QVERIFY(expected >= 2);
    QCOMPARE(view.search(QStringLiteral("DOT")), expected);
    QCOMPARE(view.currentMatch(), 0);
    const QString first = view.currentMatchKey();
    QVERIFY(view.graphScene()->nodeItem(first)->isHighlighted());
    // The view is centred on the match.
    const QPointF center = view.canvas()->mapToScene(view.canvas()->viewport()->rect().center());
    QVERIFY(QLineF(center, view.graphScene()->nodeItem(first)->sceneBoundingRect().center()).length() < 40);
    QVERIFY(view.findNext());
    QCOMPARE(view.currentMatch(), 1);
    QVERIFY(view.currentMatchKey() != first);
    QVERIFY(view.findPrevious());
    QCOMPARE(view.currentMatchKey(), first);
    QVERIFY(view.findPrevious());  // wraps
    QCOMPARE(view.currentMatch(), expected - 1);
    // Shape search.
    QVERIFY(view.search(QStringLiteral("f32[")) > 0);
    QCOMPARE(view.search(QStringLiteral("no-such-thing")), 0);
    QVERIFY(!view.findNext());
    QCOMPARE(view.search(QString()), 0);
}

void TestGraphView::selectionSignals() {
    GraphView view;
    auto module = loadFile(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/relu_matmul_bias.hlo"));
    view.setModule(module);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QSignalSpy spy(&view, &GraphView::instructionSelected);
    const QString name = QString::fromStdString(module->entryComputation()->root()->name());
    // Clicking (selecting the item) emits the instruction's name.
    GraphNodeItem* item = view.graphScene()->nodeItem(name);
    QVERIFY(item);
    item->setSelected(true);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toString(), name);
    // A real mouse click on another node.
    const QString other = QString::fromStdString(module->entryComputation()->parameter(0)->name());
    view.resize(900, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    GraphNodeItem* otherItem = view.graphScene()->nodeItem(other);
    view.canvas()->centerOn(otherItem);
    const QPoint at = view.canvas()->mapFromScene(otherItem->sceneBoundingRect().center());
    QTest::mouseClick(view.canvas()->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy.at(1).at(0).toString(), other);
    // The slot selects without echoing the signal.
    view.selectInstruction(name);
    QVERIFY(item->isSelected());
    QVERIFY(!otherItem->isSelected());
    QCOMPARE(view.selectedInstruction(), name);
    QCOMPARE(spy.count(), 2);
    int emphasised = 0;
    for (GraphEdgeItem* e : view.graphScene()->edgeItems()) emphasised += e->edge().to == name;
    QVERIFY(emphasised > 0);
}

void TestGraphView::expandByToggle() {
    GraphView view;
    view.setModule(parse(kWhile));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QCOMPARE(view.visibleGraph()->clusters.size(), size_t{0});
    view.toggleExpanded(QStringLiteral("w"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QVERIFY(view.graphScene()->clusterItem(QStringLiteral("w")));
    QVERIFY(view.graphScene()->nodeItem(QStringLiteral("w/body/y")));
    // Selecting a hidden instruction after collapsing selects its container.
    view.toggleExpanded(QStringLiteral("w"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QVERIFY(!view.graphScene()->clusterItem(QStringLiteral("w")));
    view.selectInstruction(QStringLiteral("y"));
    QVERIFY(view.graphScene()->nodeItem(QStringLiteral("w"))->isSelected());
}

void TestGraphView::edgeMenuSignals() {
    GraphView view;
    view.setModule(parse(kWhile));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QSignalSpy why(&view, &GraphView::whyNotFusedRequested);
    QSignalSpy force(&view, &GraphView::forceFusionRequested);
    QSignalSpy forbid(&view, &GraphView::forbidFusionRequested);
    const GraphEdge edge = view.graphScene()->edgeItems().front()->edge();
    std::unique_ptr<QMenu> menu(view.createEdgeMenu(edge, nullptr));
    QList<QAction*> actions;
    for (QAction* a : menu->actions())
        if (!a->isSeparator()) actions << a;
    QCOMPARE(actions.size(), 3);
    for (QAction* a : actions) a->trigger();
    QCOMPARE(why.count(), 1);
    QCOMPARE(force.count(), 1);
    QCOMPARE(forbid.count(), 1);
    QCOMPARE(why.at(0).at(0).toString(), edge.producer);
    QCOMPARE(why.at(0).at(1).toString(), edge.consumer);
}

void TestGraphView::exportPngAndSvg() {
    GraphView view;
    QString error;
    QTemporaryDir dir;
    QVERIFY(!view.exportImage(dir.filePath(QStringLiteral("empty.png")), &error));
    QVERIFY(!error.isEmpty());
    view.setModule(loadFile(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/softmax.hlo")));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    const QString png = dir.filePath(QStringLiteral("g.png"));
    const QString svg = dir.filePath(QStringLiteral("g.svg"));
    QVERIFY2(view.exportImage(png, &error), qPrintable(error));
    QVERIFY2(view.exportImage(svg, &error), qPrintable(error));
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 100 && image.height() > 100);
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray content = file.readAll();
    QVERIFY(content.contains("<svg"));
    QVERIFY(content.size() > 1000);
    QVERIFY(!view.exportImage(dir.filePath(QStringLiteral("g.nosuchformat")), &error));
    QVERIFY(error.contains(QLatin1String("unsupported")));
    QVERIFY(!view.exportImage(QStringLiteral("/nonexistent-dir/x/g.png"), &error));
    QVERIFY(error.contains(QLatin1String("cannot write")));
}

void TestGraphView::diffCuesAfterFusionStep() {
    auto session = fusedSession(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/bert_encoder_forward.hlo"));
    const auto& snapshots = session->snapshots();
    const int fusion = snapshotOf(snapshots, "fusion");
    QVERIFY(fusion > 0);
    QVERIFY(!snapshots[static_cast<size_t>(fusion)].diff.fused.empty());
    GraphView view;
    view.resize(900, 700);
    view.setState(stateAt(snapshots, fusion - 1, "bert"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    view.setState(stateAt(snapshots, fusion, "bert"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QSet<int64_t> fusionIds;
    for (const auto& f : snapshots[static_cast<size_t>(fusion)].diff.fused) fusionIds.insert(f.fusion.id);
    int fusedCues = 0;
    for (GraphNodeItem* item : view.graphScene()->nodeItems()) {
        if (item->cues() & kCueFusedInto) {
            ++fusedCues;
            QVERIFY(fusionIds.contains(item->node().uniqueId));
            QCOMPARE(item->node().category, NodeCategory::kFusion);
        }
    }
    QVERIFY(fusedCues > 0);
    // Instructions that moved into fusions fade out where they were.
    QVERIFY(view.graphScene()->ghostCount() > 0);
    HLOSCOPE_TRY_COMPARE_WITH_TIMEOUT(view.graphScene()->ghostCount(), 0, 5000);
    // Expanded, the fusion's cluster carries the cue.
    const GraphNodeItem* cued = nullptr;
    for (GraphNodeItem* item : view.graphScene()->nodeItems())
        if (item->cues() & kCueFusedInto) cued = item;
    const QString key = cued->node().key;
    view.setExpanded(key, true);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QVERIFY(view.graphScene()->clusterItem(key));
    QVERIFY(view.graphScene()->clusterItem(key)->cues() & kCueFusedInto);
    // Back at the input: no cues.
    view.setState(stateAt(snapshots, 0, "bert"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    for (GraphNodeItem* item : view.graphScene()->nodeItems()) QCOMPARE(item->cues(), 0u);
}

void TestGraphView::unchangedStepReusesLayout() {
    auto session = fusedSession(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/mlp.hlo"));
    const auto& snapshots = session->snapshots();
    // A step that changed nothing structurally (or the same state twice).
    int unchanged = -1;
    for (size_t i = 1; i < snapshots.size(); ++i)
        if (!snapshots[i].changed) unchanged = static_cast<int>(i);
    QVERIFY(unchanged > 0);
    GraphView view;
    view.setState(stateAt(snapshots, unchanged - 1, "mlp"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QHash<QString, QPointF> positions;
    for (GraphNodeItem* item : view.graphScene()->nodeItems()) positions.insert(item->node().key, item->pos());
    view.setState(stateAt(snapshots, unchanged, "mlp"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QVERIFY(view.lastLayoutReused());
    for (GraphNodeItem* item : view.graphScene()->nodeItems())
        QCOMPARE(item->pos(), positions.value(item->node().key));
}

void TestGraphView::heatMapOfMeasuredTimes() {
    auto session = fusedSession(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/bert_encoder_forward.hlo"));
    const auto& snapshots = session->snapshots();
    const int fusion = snapshotOf(snapshots, "fusion");
    GraphView view;
    view.resize(900, 700);
    const DocumentStatePtr state = stateAt(snapshots, fusion, "bert");
    view.setState(state);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    // Times for every entry instruction: the i-th gets i microseconds.
    QHash<QString, double> times;
    const HloComputation* entry = state->module->entryComputation();
    double i = 0;
    QString hottest;
    for (const HloInstruction* instruction : entry->postOrder()) {
        if (instruction->opcode() == HloOpcode::kParameter) continue;
        times.insert(QString::fromStdString(instruction->name()), ++i * 1e-6);
        hottest = QString::fromStdString(instruction->name());
    }
    // A name inside a fused computation counts on its (collapsed) fusion.
    const HloInstruction* aFusion = nullptr;
    for (const HloInstruction* instruction : entry->postOrder())
        if (instruction->opcode() == HloOpcode::kFusion) aFusion = instruction;
    QVERIFY(aFusion);
    const QString fusionName = QString::fromStdString(aFusion->name());
    const QString inner = QString::fromStdString(aFusion->fusedComputation()->root()->name());
    const double fusionAlone = times.value(fusionName);
    times.insert(inner, 5e-6);
    view.setMeasuredTimes(times);
    QVERIFY(view.heatItemCount() > 0);
    QCOMPARE(view.graphScene()->hottestKey(), view.visibleGraph()->shownBy.value(hottest));
    GraphNodeItem* hot = view.graphScene()->nodeItem(view.graphScene()->hottestKey());
    QVERIFY(hot);
    QCOMPARE(hot->heat(), 1.0);
    QVERIFY(hot->toolTip().contains(QLatin1String("measured")));
    GraphNodeItem* fused = view.graphScene()->nodeItem(view.visibleGraph()->shownBy.value(fusionName));
    QVERIFY(fused);
    QVERIFY(qAbs(fused->heat() - std::sqrt((fusionAlone + 5e-6) / view.graphScene()->hottestSeconds())) < 1e-9);
    for (GraphNodeItem* item : view.graphScene()->nodeItems())
        if (item->node().category == NodeCategory::kParameter) QCOMPARE(item->heat(), -1.0);
    // The map survives a relayout (expanding the fusion colours its cluster).
    view.setExpanded(view.visibleGraph()->shownBy.value(fusionName), true);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    GraphClusterItem* cluster = view.graphScene()->clusterItem(view.visibleGraph()->shownBy.value(fusionName));
    QVERIFY(cluster);
    QVERIFY(cluster->heat() > 0);
    // Off, then cleared.
    view.setShowHeatMap(false);
    QCOMPARE(view.heatItemCount(), 0);
    for (GraphNodeItem* item : view.graphScene()->nodeItems()) QCOMPARE(item->heat(), -1.0);
    view.setShowHeatMap(true);
    QVERIFY(view.heatItemCount() > 0);
    view.setMeasuredTimes({});
    QCOMPARE(view.heatItemCount(), 0);
}

void TestGraphView::fusionPairHighlightsEdge() {
    auto session = fusedSession(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/bert_encoder_forward.hlo"));
    const auto& snapshots = session->snapshots();
    const int fusion = snapshotOf(snapshots, "fusion");
    // A pair the pass refused (both ends stay outside fusions or in
    // different ones) and one it fused (both inside one fusion).
    const PassDecision* refused = nullptr;
    const PassDecision* fused = nullptr;
    for (const PassDecision& d : snapshots[static_cast<size_t>(fusion)].decisions) {
        if (d.reason == "fused" && !fused) fused = &d;
        if (d.reason != "fused" && !refused) refused = &d;
    }
    QVERIFY(fused && refused);
    GraphView view;
    view.resize(900, 700);
    view.setState(stateAt(snapshots, fusion - 1, "bert"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    // Before fusion every pair is an edge of its own.
    QVERIFY(view.highlightEdge(QString::fromStdString(fused->producer), QString::fromStdString(fused->consumer)));
    GraphEdgeItem* edge = view.graphScene()->highlightedEdge();
    QVERIFY(edge);
    QCOMPARE(edge->edge().producer, QString::fromStdString(fused->producer));
    QCOMPARE(edge->edge().consumer, QString::fromStdString(fused->consumer));
    QVERIFY(edge->isHighlighted());
    // After fusion the fused pair is inside a collapsed fusion: it opens.
    view.setState(stateAt(snapshots, fusion, "bert"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QVERIFY(!view.graphScene()->highlightedEdge());
    const QString holder = view.visibleGraph()->shownBy.value(QString::fromStdString(fused->consumer));
    QVERIFY(!view.collapseState().expanded.contains(holder));
    QVERIFY(view.highlightEdge(QString::fromStdString(fused->producer), QString::fromStdString(fused->consumer)));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(view.graphScene()->highlightedEdge() != nullptr, 30000);
    QVERIFY(view.collapseState().expanded.contains(holder));
    QCOMPARE(view.graphScene()->highlightedEdge()->edge().consumer, QString::fromStdString(fused->consumer));
    // A pair that is not in the graph highlights nothing.
    QVERIFY(!view.highlightEdge(QStringLiteral("no-such-producer"), QStringLiteral("no-such-consumer")));
    QVERIFY(!view.graphScene()->highlightedEdge());
}

void TestGraphView::beforeAfterSideBySide() {
    auto session = fusedSession(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples/bert_encoder_forward.hlo"));
    const auto& snapshots = session->snapshots();
    const int fusion = snapshotOf(snapshots, "fusion");
    auto state = std::const_pointer_cast<DocumentState>(stateAt(snapshots, fusion, "bert"));
    state->previous = stateAt(snapshots, fusion - 1, "bert")->module;
    GraphView view;
    view.resize(1400, 700);
    view.show();
    view.setState(state);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QVERIFY(!view.beforeView());
    view.setCompareMode(true);
    GraphView* before = view.beforeView();
    QVERIFY(before);
    QVERIFY(before->isVisible());
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!before->isLayoutPending() && before->visibleGraph(), 30000);
    // The left side is the module before fusion: more nodes, and those the
    // step moved into fusions are marked as going away.
    QVERIFY(before->visibleGraph()->nodes.size() > view.visibleGraph()->nodes.size());
    int removed = 0;
    for (GraphNodeItem* item : before->graphScene()->nodeItems()) removed += (item->cues() & kCueRemoved) != 0;
    std::set<int64_t> gone;
    for (const auto& f : snapshots[static_cast<size_t>(fusion)].diff.fused) gone.insert(f.instruction.id);
    for (const auto& r : snapshots[static_cast<size_t>(fusion)].diff.removed) gone.insert(r.id);
    QCOMPARE(removed, static_cast<int>(gone.size()));
    for (GraphNodeItem* item : view.graphScene()->nodeItems()) QVERIFY(!(item->cues() & kCueRemoved));
    // Selection on either side selects on both and reaches the outside once.
    QSignalSpy selected(&view, &GraphView::instructionSelected);
    const QString parameter = QString::fromStdString(state->module->entryComputation()->parameter(0)->name());
    before->graphScene()->nodeItem(parameter)->setSelected(true);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).toString(), parameter);
    QVERIFY(view.graphScene()->nodeItem(parameter)->isSelected());
    // Zooming either side zooms the other by as much; each fits on its own.
    const double beforeZoom = before->canvas()->zoom(), afterZoom = view.canvas()->zoom();
    view.zoomIn();
    QVERIFY(qAbs(before->canvas()->zoom() - beforeZoom * 1.25) < 1e-9);
    QVERIFY(qAbs(view.canvas()->zoom() - afterZoom * 1.25) < 1e-9);
    before->zoomOut();
    QVERIFY(qAbs(before->canvas()->zoom() - beforeZoom) < 1e-9);
    QVERIFY(qAbs(view.canvas()->zoom() - afterZoom) < 1e-9);
    // Expanding a fusion on the right lays out both sides with it.
    QString fusionKey;
    for (GraphNodeItem* item : view.graphScene()->nodeItems())
        if (item->node().category == NodeCategory::kFusion) fusionKey = item->node().key;
    view.setExpanded(fusionKey, true);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending() && !before->isLayoutPending(), 30000);
    QVERIFY(before->collapseState().expanded.contains(fusionKey));
    // At the loaded module there is nothing before.
    view.setState(stateAt(snapshots, 0, "bert"));
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 30000);
    QVERIFY(!before->visibleGraph());
    view.setCompareMode(false);
    QVERIFY(!before->isVisible());
}

void TestGraphView::mixtralOpensGrouped() {
    const QString path = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models/xla/hlo_mixtral_8x7b_bf16_2x8.hlo");
    if (!QFileInfo::exists(path)) QSKIP("Mixtral corpus model not available");
    auto module = loadFile(path);
    GraphView view;
    view.setModule(module);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 120000);
    QVERIFY2(view.lastError().isEmpty(), qPrintable(view.lastError()));
    QVERIFY(view.collapseState().grouped);
    const VisibleGraph* g = view.visibleGraph();
    QVERIFY(g->nodes.size() <= 130);
    QVERIFY(g->groupSize > 0);
    const QString root = QString::fromStdString(module->entryComputation()->root()->name());
    QVERIFY(g->shownBy.value(root).startsWith(QLatin1String("group:")));
    // Search finds instructions hidden in groups.
    QVERIFY(view.search(root) >= 1);
    view.setExpanded(g->shownBy.value(root), true);
    HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(!view.isLayoutPending(), 120000);
    QVERIFY(view.graphScene()->nodeItem(root));
}

QTEST_MAIN(TestGraphView)
#include "tst_graph_view.moc"
