// hloscope_graph_layout: Graphviz dot layouts of small graphs (distinct
// positions, edges pointing down, clusters holding their nodes, edge
// labels), bad input, cancellation, and concurrent callers.
#include <QTest>

#include <atomic>
#include <cmath>
#include <set>
#include <thread>

#include "views/layout/graph_layout.h"

using namespace hloscope::layout;

namespace {

// A diamond a -> {b, c} -> d, plus e -> d, with {b, c} in a cluster nested in another.
LayoutGraph diamond(bool labels = false) {
    LayoutGraph g;
    g.clusters = {{"outer", "outer cluster", ""}, {"inner", "inner cluster", "outer"}};
    g.nodes = {{"a", 80, 30, ""}, {"b", 60, 30, "inner"}, {"c", 100, 40, "inner"},
               {"d", 70, 30, "outer"}, {"e", 50, 30, ""}};
    g.edges = {{"a", "b", labels ? "f32[8]" : ""}, {"a", "c", ""}, {"b", "d", ""},
               {"c", "d", labels ? "f32[8,16]{1,0}" : ""}, {"e", "d", ""}};
    return g;
}

// A chain of `n` nodes with a skip edge every third node.
LayoutGraph chain(int n, const std::string& prefix = "n") {
    LayoutGraph g;
    for (int i = 0; i < n; ++i) g.nodes.push_back({prefix + std::to_string(i), 60, 30, ""});
    for (int i = 0; i + 1 < n; ++i) g.edges.push_back({g.nodes[i].id, g.nodes[i + 1].id, ""});
    for (int i = 0; i + 3 < n; i += 3) g.edges.push_back({g.nodes[i].id, g.nodes[i + 3].id, ""});
    return g;
}

bool overlaps(const LayoutRect& a, const LayoutRect& b) {
    return a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 &&
           b.y < a.y + a.height - 0.5;
}

// Checks the invariants of a layout of `g`; returns an empty string when fine.
QString checkLayout(const LayoutGraph& g, const LayoutResult& r) {
    if (!r.ok()) return QString::fromStdString("not ok: " + r.error);
    if (r.nodes.size() != g.nodes.size() || r.edges.size() != g.edges.size() ||
        r.clusters.size() != g.clusters.size())
        return "sizes differ";
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].id] = i;
    for (size_t i = 0; i < r.nodes.size(); ++i) {
        const NodeGeometry& n = r.nodes[i];
        if (std::abs(n.width - g.nodes[i].width) > 1 || std::abs(n.height - g.nodes[i].height) > 1)
            return QString("node %1 size %2x%3").arg(i).arg(n.width).arg(n.height);
        if (!r.bounds.contains(n.center)) return QString("node %1 outside the bounds").arg(i);
        for (size_t j = i + 1; j < r.nodes.size(); ++j)
            if (overlaps(n.rect(), r.nodes[j].rect())) return QString("nodes %1 and %2 overlap").arg(i).arg(j);
    }
    for (size_t i = 0; i < g.edges.size(); ++i) {
        const NodeGeometry& from = r.nodes[index[g.edges[i].from]];
        const NodeGeometry& to = r.nodes[index[g.edges[i].to]];
        if (!(to.center.y > from.center.y)) return QString("edge %1 does not go down").arg(i);
        const EdgeGeometry& e = r.edges[i];
        if (e.points.size() < 4 || (e.points.size() - 1) % 3 != 0)
            return QString("edge %1 has %2 points").arg(i).arg(e.points.size());
        if (!e.hasArrow) return QString("edge %1 has no arrow").arg(i);
        // Starts at the tail node, ends (arrow tip) at the head node.
        LayoutRect tail = from.rect(), head = to.rect();
        if (!LayoutRect{tail.x - 2, tail.y - 2, tail.width + 4, tail.height + 4}.contains(e.points.front()))
            return QString("edge %1 does not start at its tail").arg(i);
        if (!LayoutRect{head.x - 2, head.y - 2, head.width + 4, head.height + 4}.contains(e.arrowTip))
            return QString("edge %1 does not end at its head").arg(i);
        if (!g.edges[i].label.empty() && !e.hasLabel) return QString("edge %1 has no label position").arg(i);
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        // Every enclosing cluster contains the node.
        std::string c = g.nodes[i].cluster;
        while (!c.empty()) {
            size_t k = 0;
            while (g.clusters[k].id != c) ++k;
            const LayoutRect node = r.nodes[i].rect();
            const LayoutRect box = r.clusters[k].box;
            if (!box.contains({node.x, node.y}) || !box.contains({node.x + node.width, node.y + node.height}))
                return QString("node %1 outside cluster %2").arg(i).arg(QString::fromStdString(c));
            c = g.clusters[k].parent;
        }
    }
    return {};
}

}  // namespace

class TestGraphLayout : public QObject {
    Q_OBJECT
private slots:
    void diamondWithClusters();
    void nodesOutsideClustersStayOutside();
    void edgeLabels();
    void multiEdgesAndFanOut();
    void unroutedEdges();
    void polylinesAboveTheSplineLimit();
    void emptyGraph();
    void badInput_data();
    void badInput();
    void cancelledBeforeStart();
    void concurrentLayouts();
};

void TestGraphLayout::diamondWithClusters() {
    const LayoutGraph g = diamond();
    const LayoutResult r = computeLayout(g);
    const QString problem = checkLayout(g, r);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    std::set<std::pair<long, long>> positions;
    for (const NodeGeometry& n : r.nodes) positions.insert({std::lround(n.center.x), std::lround(n.center.y)});
    QCOMPARE(positions.size(), g.nodes.size());
    // Inner cluster inside the outer one.
    const LayoutRect outer = r.clusters[0].box, inner = r.clusters[1].box;
    QVERIFY(outer.contains({inner.x, inner.y}));
    QVERIFY(outer.contains({inner.x + inner.width, inner.y + inner.height}));
    QVERIFY(inner.width > 0 && inner.height > 0);
    // Label centre inside its cluster.
    QVERIFY(outer.contains(r.clusters[0].labelCenter));
    // Ranks: a above b and c, which are above d.
    QVERIFY(r.nodes[0].center.y < r.nodes[1].center.y);
    QVERIFY(r.nodes[1].center.y < r.nodes[3].center.y);
    QVERIFY(r.bounds.width > 0 && r.bounds.height > 0);
    QCOMPARE(r.bounds.x, 0.0);
    QCOMPARE(r.bounds.y, 0.0);
}

void TestGraphLayout::nodesOutsideClustersStayOutside() {
    const LayoutGraph g = diamond();
    const LayoutResult r = computeLayout(g);
    QVERIFY(r.ok());
    // a and e are in no cluster: not inside the inner cluster's box.
    for (size_t i : {size_t{0}, size_t{4}}) {
        const LayoutRect box = r.clusters[1].box;
        QVERIFY(!box.contains(r.nodes[i].center, -0.5));
    }
}

void TestGraphLayout::edgeLabels() {
    const LayoutGraph g = diamond(true);
    const LayoutResult r = computeLayout(g);
    const QString problem = checkLayout(g, r);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(r.edges[0].hasLabel);
    QVERIFY(r.edges[3].hasLabel);
    QVERIFY(!r.edges[1].hasLabel);
    QVERIFY(r.bounds.contains(r.edges[3].labelCenter));
}

void TestGraphLayout::multiEdgesAndFanOut() {
    LayoutGraph g;
    g.nodes = {{"x", 60, 30, ""}, {"y", 60, 30, ""}};
    for (int i = 0; i < 6; ++i) g.nodes.push_back({"u" + std::to_string(i), 60, 30, ""});
    g.edges = {{"x", "y", ""}, {"x", "y", ""}};  // add(x, x)-like duplicate operands
    for (int i = 0; i < 6; ++i) g.edges.push_back({"y", "u" + std::to_string(i), ""});
    const LayoutResult r = computeLayout(g);
    const QString problem = checkLayout(g, r);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    // The two parallel edges are routed separately.
    QVERIFY(r.edges[0].points.size() >= 4 && r.edges[1].points.size() >= 4);
}

// Edges with route=false take no part in dot's layout (no rank constraint):
// each gets one curve from the bottom of its producer to the top of its
// consumer, with an arrow.
void TestGraphLayout::unroutedEdges() {
    LayoutGraph g = chain(12);
    g.edges.push_back({"n0", "n11", "", false});
    const LayoutResult r = computeLayout(g);
    const QString problem = checkLayout(g, r);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const EdgeGeometry& e = r.edges.back();
    QCOMPARE(e.points.size(), size_t(4));
    QVERIFY(e.hasArrow);
    const NodeGeometry& from = r.nodes[0];
    const NodeGeometry& to = r.nodes[11];
    QCOMPARE(e.points.front().x, from.center.x);
    QCOMPARE(e.points.front().y, from.center.y + from.height / 2);
    QCOMPARE(e.arrowTip.x, to.center.x);
    QCOMPARE(e.arrowTip.y, to.center.y - to.height / 2);
    // Same layout for the routed edges as without the extra edge.
    const LayoutResult plain = computeLayout(chain(12));
    for (size_t i = 0; i < plain.nodes.size(); ++i) QCOMPARE(r.nodes[i].center.y, plain.nodes[i].center.y);
}

void TestGraphLayout::polylinesAboveTheSplineLimit() {
    const LayoutGraph g = chain(30);
    LayoutOptions curved;
    LayoutOptions straight;
    straight.splineEdgeLimit = 5;
    const LayoutResult a = computeLayout(g, curved);
    const LayoutResult b = computeLayout(g, straight);
    QVERIFY(a.ok() && b.ok());
    QString problem = checkLayout(g, b);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    // Polylines: every Bezier segment's control points lie on the line
    // between its ends (dot writes polylines as degenerate Beziers).
    auto straightSegments = [](const LayoutResult& r) {
        for (const EdgeGeometry& e : r.edges) {
            for (size_t i = 0; i + 3 < e.points.size(); i += 3) {
                const LayoutPoint p0 = e.points[i], p1 = e.points[i + 1], p3 = e.points[i + 3];
                const double cross = (p3.x - p0.x) * (p1.y - p0.y) - (p3.y - p0.y) * (p1.x - p0.x);
                const double length = std::hypot(p3.x - p0.x, p3.y - p0.y);
                if (length > 1 && std::abs(cross) / length > 0.5) return false;
            }
        }
        return true;
    };
    QVERIFY(straightSegments(b));
    QVERIFY(!straightSegments(a));  // the skip edges curve around the chain
}

void TestGraphLayout::emptyGraph() {
    const LayoutResult r = computeLayout(LayoutGraph{});
    QVERIFY(r.ok());
    QVERIFY(r.nodes.empty());
}

void TestGraphLayout::badInput_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("message");
    QTest::newRow("duplicate node") << 0 << "duplicate node id 'a'";
    QTest::newRow("unknown edge end") << 1 << "names an unknown node";
    QTest::newRow("unknown cluster") << 2 << "unknown cluster 'nope'";
    QTest::newRow("cluster cycle") << 3 << "its own ancestor";
    QTest::newRow("zero size") << 4 << "non-positive size";
}

void TestGraphLayout::badInput() {
    QFETCH(int, which);
    QFETCH(QString, message);
    LayoutGraph g = diamond();
    switch (which) {
        case 0: g.nodes.push_back({"a", 10, 10, ""}); break;
        case 1: g.edges.push_back({"a", "zz", ""}); break;
        case 2: g.nodes[0].cluster = "nope"; break;
        case 3: g.clusters[0].parent = "inner"; break;
        case 4: g.nodes[2].height = 0; break;
    }
    const LayoutResult r = computeLayout(g);
    QCOMPARE(r.status, LayoutResult::Status::kError);
    QVERIFY2(QString::fromStdString(r.error).contains(message), r.error.c_str());
}

void TestGraphLayout::cancelledBeforeStart() {
    std::atomic<bool> cancel{true};
    LayoutOptions options;
    options.cancel = &cancel;
    const LayoutResult r = computeLayout(chain(50), options);
    QCOMPARE(r.status, LayoutResult::Status::kCancelled);
    cancel = false;
    QVERIFY(computeLayout(chain(50), options).ok());
}

void TestGraphLayout::concurrentLayouts() {
    // Serial reference layouts, then the same graphs from 8 threads at once:
    // each result must be valid and identical to its reference.
    std::vector<LayoutGraph> graphs;
    for (int t = 0; t < 8; ++t) graphs.push_back(t % 2 ? diamond(t % 4 == 1) : chain(20 + 5 * t, "t" + std::to_string(t)));
    std::vector<LayoutResult> reference;
    for (const LayoutGraph& g : graphs) reference.push_back(computeLayout(g));
    std::vector<LayoutResult> results(graphs.size());
    std::vector<std::thread> threads;
    for (int round = 0; round < 3; ++round) {
        threads.clear();
        for (size_t t = 0; t < graphs.size(); ++t)
            threads.emplace_back([&, t] { results[t] = computeLayout(graphs[t]); });
        for (std::thread& thread : threads) thread.join();
        for (size_t t = 0; t < graphs.size(); ++t) {
            const QString problem = checkLayout(graphs[t], results[t]);
            QVERIFY2(problem.isEmpty(), qPrintable(QString("graph %1: %2").arg(t).arg(problem)));
            for (size_t i = 0; i < results[t].nodes.size(); ++i) {
                QCOMPARE(results[t].nodes[i].center.x, reference[t].nodes[i].center.x);
                QCOMPARE(results[t].nodes[i].center.y, reference[t].nodes[i].center.y);
            }
        }
    }
}

QTEST_GUILESS_MAIN(TestGraphLayout)
#include "tst_graph_layout.moc"
