#include "views/graph/graph_view.h"

#include "compiler/layers/layer_figures.h"
#include "core/support/human_format.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"

#include <QCheckBox>
#include <QGraphicsOpacityEffect>
#include <QSettings>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QShortcut>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <chrono>

#include "core/ir/hlo_module.h"
#include "core/support/thread_handoff.h"

namespace hloscope {

struct GraphView::LayoutOutcome {
    std::shared_ptr<const VisibleGraph> graph;
    std::shared_ptr<const layout::LayoutResult> layout;
    quint64 signature = 0;
    bool reused = false;
    bool prefetch = false;
    int epoch = 0;
    double milliseconds = 0;
};

namespace {

using LayoutCache = std::vector<std::pair<quint64, std::shared_ptr<const layout::LayoutResult>>>;

// The worker's part: the visible graph and its layout (from the cache when
// an equal graph was laid out before).
template <typename Outcome>
std::shared_ptr<Outcome> layOut(const HloModule& module, const CollapseState& collapse, const GraphMetrics& metrics,
                                bool edgeLabels, const LayoutCache& cache, const std::atomic<bool>* cancel) {
    QElapsedTimer timer;
    timer.start();
    auto outcome = std::make_shared<Outcome>();
    auto graph = std::make_shared<VisibleGraph>(GraphBuilder::build(module, collapse, metrics));
    outcome->signature = graph->signature(edgeLabels);
    for (const auto& [signature, layout] : cache) {
        if (signature == outcome->signature) {
            outcome->layout = layout;
            outcome->reused = true;
            break;
        }
    }
    if (!outcome->layout) {
        layout::LayoutOptions options;
        options.cancel = cancel;
        outcome->layout =
            std::make_shared<layout::LayoutResult>(layout::computeLayout(graph->toLayoutGraph(edgeLabels), options));
    }
    outcome->graph = std::move(graph);
    outcome->milliseconds = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    return outcome;
}

}  // namespace

GraphView::GraphView(QWidget* parent) : QWidget(parent) {
    qRegisterMetaType<hloscope::DocumentStatePtr>();
    m_scene = new GraphScene(this);
    m_canvas = new GraphCanvas(this);
    m_canvas->setScene(m_scene);
    m_minimap = new GraphMinimap(m_canvas, m_canvas);

    auto* toolbar = new QHBoxLayout;
    toolbar->setContentsMargins(4, 2, 4, 2);
    m_searchEdit = new QLineEdit(this);
    m_searchEdit->setPlaceholderText(tr("Search name, opcode or shape"));
    m_searchEdit->setClearButtonEnabled(true);
    m_searchEdit->setMinimumWidth(160);
    auto* previous = new QToolButton(this);
    previous->setText(QStringLiteral("▲"));
    previous->setToolTip(tr("Previous match (Shift+Enter)"));
    auto* next = new QToolButton(this);
    next->setText(QStringLiteral("▼"));
    next->setToolTip(tr("Next match (Enter)"));
    m_matchLabel = new QLabel(this);
    auto* fit = new QToolButton(this);
    fit->setText(tr("Fit"));
    fit->setToolTip(tr("Fit the graph in the view (F)"));
    m_shapesBox = new QCheckBox(tr("Shapes"), this);
    m_labelsBox = new QCheckBox(tr("Edge labels"), this);
    m_minimapBox = new QCheckBox(tr("Minimap"), this);
    m_minimapBox->setObjectName(QStringLiteral("minimapBox"));
    m_minimapBox->setChecked(QSettings().value(QStringLiteral("graph/minimap"), true).toBool());
    m_minimapBox->setToolTip(tr("Show the overview of the whole graph in the corner"));
    m_compareBox = new QCheckBox(tr("Before/after"), this);
    m_compareBox->setToolTip(tr("Show the state before this step beside it"));
    m_heatBox = new QCheckBox(tr("Heat map"), this);
    m_heatBox->setChecked(true);
    m_heatBox->setToolTip(tr("Colour kernels by measured time (run them in the Execution panel)"));
    m_heatBox->hide();
    m_statusLabel = new QLabel(this);
    toolbar->addWidget(m_searchEdit, 1);
    toolbar->addWidget(previous);
    toolbar->addWidget(next);
    toolbar->addWidget(m_matchLabel);
    toolbar->addSpacing(12);
    toolbar->addWidget(fit);
    toolbar->addWidget(m_shapesBox);
    toolbar->addWidget(m_labelsBox);
    toolbar->addWidget(m_minimapBox);
    toolbar->addWidget(m_compareBox);
    toolbar->addWidget(m_heatBox);
    toolbar->addStretch();
    toolbar->addWidget(m_statusLabel);
    m_toolbar = new QWidget(this);
    m_toolbar->setLayout(toolbar);
    m_header = new QLabel(this);
    m_header->setContentsMargins(6, 2, 6, 2);
    m_header->hide();
    auto* pane = new QWidget(this);
    auto* paneLayout = new QVBoxLayout(pane);
    paneLayout->setContentsMargins(0, 0, 0, 0);
    paneLayout->setSpacing(0);
    paneLayout->addWidget(m_header);
    m_breadcrumb = new QLabel(this);
    m_breadcrumb->setObjectName(QStringLiteral("layerBreadcrumb"));
    m_breadcrumb->setContentsMargins(6, 2, 6, 2);
    m_breadcrumb->setTextFormat(Qt::RichText);
    m_breadcrumb->setToolTip(tr("Double-click a layer to drill into it; Backspace goes back up"));
    m_breadcrumb->hide();
    connect(m_breadcrumb, &QLabel::linkActivated, this, [this](const QString& key) { drillInto(key); });
    paneLayout->addWidget(m_breadcrumb);
    paneLayout->addWidget(m_canvas, 1);
    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->addWidget(pane);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_toolbar);
    layout->addWidget(m_splitter, 1);

    connect(m_searchEdit, &QLineEdit::returnPressed, this, [this] {
        if (m_searchEdit->text() != m_searchText) search(m_searchEdit->text());
        else if (QGuiApplication::keyboardModifiers() & Qt::ShiftModifier) findPrevious();
        else findNext();
    });
    connect(m_searchEdit, &QLineEdit::textChanged, this, [this](const QString& text) {
        if (text.isEmpty()) search(QString());
    });
    connect(previous, &QToolButton::clicked, this, [this] {
        if (m_searchEdit->text() != m_searchText) search(m_searchEdit->text());
        else findPrevious();
    });
    connect(next, &QToolButton::clicked, this, [this] {
        if (m_searchEdit->text() != m_searchText) search(m_searchEdit->text());
        else findNext();
    });
    connect(fit, &QToolButton::clicked, this, &GraphView::fitToView);
    connect(m_shapesBox, &QCheckBox::toggled, this, &GraphView::setShowShapes);
    connect(m_minimapBox, &QCheckBox::toggled, this, [this](bool on) {
        QSettings().setValue(QStringLiteral("graph/minimap"), on);
        emit m_canvas->viewChanged();
    });
    auto* translucent = new QGraphicsOpacityEffect(m_minimap);
    translucent->setOpacity(0.75);
    m_minimap->setGraphicsEffect(translucent);
    connect(m_labelsBox, &QCheckBox::toggled, this, &GraphView::setShowEdgeLabels);
    connect(m_compareBox, &QCheckBox::toggled, this, &GraphView::setCompareMode);
    connect(m_heatBox, &QCheckBox::toggled, this, &GraphView::setShowHeatMap);

    auto shortcut = [this](const QKeySequence& keys, auto slot) {
        auto* s = new QShortcut(keys, this);
        s->setContext(Qt::WidgetWithChildrenShortcut);
        connect(s, &QShortcut::activated, this, slot);
    };
    shortcut(QKeySequence(Qt::Key_Backspace), [this] {
        const VisibleGraph* g = m_scene->graph();
        if (g && g->breadcrumb.size() > 1) drillInto(g->breadcrumb[g->breadcrumb.size() - 2].first);
    });
    shortcut(QKeySequence(Qt::CTRL | Qt::Key_Equal), &GraphView::zoomIn);
    shortcut(QKeySequence(Qt::CTRL | Qt::Key_Plus), &GraphView::zoomIn);
    shortcut(QKeySequence(Qt::CTRL | Qt::Key_Minus), &GraphView::zoomOut);
    shortcut(QKeySequence(Qt::Key_F), &GraphView::fitToView);
    shortcut(QKeySequence::Find, [this] { m_searchEdit->setFocus(); m_searchEdit->selectAll(); });

    connect(m_scene, &QGraphicsScene::selectionChanged, this, &GraphView::onSceneSelectionChanged);
    connect(m_canvas, &GraphCanvas::itemDoubleClicked, this, &GraphView::onItemDoubleClicked);
    connect(m_canvas, &GraphCanvas::edgeContextMenu, this, &GraphView::onEdgeContextMenu);
    connect(m_canvas, &GraphCanvas::nodeContextMenu, this, &GraphView::onNodeContextMenu);
    connect(m_canvas, &GraphCanvas::viewChanged, this, [this] {
        // A sixth of the canvas width (at most 160 px), translucent, in the corner; none on
        // narrow canvases or when switched off.
        const QSize viewport = m_canvas->viewport()->size();
        const int width = std::min(160, viewport.width() / 6);
        m_minimap->setVisible(m_minimapBox->isChecked() && width >= 80 && viewport.height() >= 200);
        if (m_minimap->size() != QSize(width, width * 3 / 4)) {
            m_minimap->setFixedSize(width, width * 3 / 4);
            m_minimap->invalidate();
        }
        m_minimap->move(viewport.width() - m_minimap->width() - 8, viewport.height() - m_minimap->height() - 8);
        m_minimap->update();
    });

    m_watcher = new QFutureWatcher<std::shared_ptr<LayoutOutcome>>(this);
    connect(m_watcher, &QFutureWatcher<std::shared_ptr<LayoutOutcome>>::finished, this,
            &GraphView::onLayoutDone);
}

GraphView::~GraphView() {
    if (m_cancel) m_cancel->store(true);
    if (m_prefetchCancel) m_prefetchCancel->store(true);
    m_watcher->waitForFinished();
    // The scene is a child destroyed after this object's members: no more
    // selection callbacks into them.
    if (m_scene) m_scene->disconnect(this);
    if (m_before) m_before->disconnect(this);
}

bool GraphView::darkPalette() const { return palette().color(QPalette::Window).lightness() < 128; }

GraphMetrics GraphView::metrics() const {
    QFont font = this->font();
    font.setPointSizeF(9);
    font.setBold(true);
    const QFontMetricsF fm(font);
    GraphMetrics m;
    m.charWidth = std::max(fm.averageCharWidth(), fm.horizontalAdvance(QStringLiteral("abcdefghij.0123")) / 15.0);
    m.lineHeight = fm.height() + 1;
    m.showShapes = m_showShapes;
    return m;
}

void GraphView::setModule(std::shared_ptr<const HloModule> module) {
    auto state = std::make_shared<DocumentState>();
    state->module = std::move(module);
    state->displayName = state->module ? state->module->name() : std::string();
    setState(state);
}

void GraphView::setState(DocumentStatePtr state) {
    if (adoptState(std::move(state))) {
        updateCompanion();
        requestLayout();
    }
}

bool GraphView::adoptState(DocumentStatePtr state) {
    const DocumentStatePtr previous = m_state;
    m_state = std::move(state);
    m_module = m_state ? m_state->module : nullptr;
    if (!m_module) {
        if (m_cancel) m_cancel->store(true);
        ++m_request;
        m_pending = false;
        m_scene->clearGraph();
        m_minimap->invalidate();
        m_statusLabel->clear();
        m_header->setText(m_leader ? tr("Before: nothing (this is the loaded module)") : QString());
        updateCompanion();
        return false;
    }
    const QString documentKey =
        QString::fromStdString(m_state->path) + QLatin1Char('\n') + QString::fromStdString(m_state->displayName);
    if (!previous || documentKey != m_documentKey) {
        m_documentKey = documentKey;
        m_collapse = GraphBuilder::initialState(*m_module, m_state->layers);
        clearLayoutCache();
        m_fitPending = true;
        m_selected.clear();
        m_times.clear();
        m_heatBox->hide();
    }
    return true;
}

void GraphView::setCompareMode(bool on) {
    if (m_leader || m_compare == on) return;  // the companion has no companion
    m_compare = on;
    emit compareModeChanged(on);
    {
        const QSignalBlocker blocker(m_compareBox);
        m_compareBox->setChecked(on);
    }
    if (on && !m_before) {
        m_before = new GraphView;
        m_before->m_leader = this;
        m_before->m_toolbar->hide();
        m_before->m_header->show();
        m_before->m_showHeat = false;
        m_splitter->insertWidget(0, m_before);
        connect(m_before, &GraphView::instructionSelected, this, [this](const QString& name) {
            selectInstruction(name);
            emit instructionSelected(name);
        });
        // Zooming one side zooms the other by as much; each fits and pans on its own.
        connect(m_before->m_canvas, &GraphCanvas::zoomed, this, [this](double factor) {
            if (m_syncing) return;
            m_syncing = true;
            m_canvas->zoomBy(factor);
            m_syncing = false;
        });
        connect(m_canvas, &GraphCanvas::zoomed, this, [this](double factor) {
            if (m_syncing || !m_compare || !m_before) return;
            m_syncing = true;
            m_before->m_canvas->zoomBy(factor);
            m_syncing = false;
        });
    }
    if (m_before) m_before->setVisible(on);
    m_header->setVisible(on);
    if (on) {
        const int half = std::max(1, m_splitter->width() / 2);
        m_splitter->setSizes({half, half});
        updateCompanion();
        if (m_before->m_module) m_before->requestLayout();
    }
}

void GraphView::updateCompanion() {
    if (!m_compare || !m_before) return;
    const PassSnapshot* snapshot = m_state && m_state->current > 0 ? m_state->currentSnapshot() : nullptr;
    m_header->setText(snapshot ? tr("After: %1 (step %2)")
                                     .arg(QString::fromStdString(snapshot->pass))
                                     .arg(m_state->current)
                               : tr("After: the loaded module"));
    if (!m_state || !m_state->previous) {
        m_before->m_diffOf.reset();
        m_before->setState(nullptr);
        return;
    }
    auto before = std::make_shared<DocumentState>();
    before->path = m_state->path;
    before->displayName = m_state->displayName;
    before->target = m_state->target;
    before->module = m_state->previous;
    before->generation = m_state->generation;
    m_before->m_diffOf = m_state;
    const PassSnapshot* previous =
        m_state->snapshots && m_state->current >= 2 ? &(*m_state->snapshots)[m_state->current - 1] : nullptr;
    m_before->m_header->setText(previous ? tr("Before: %1 (step %2)")
                                               .arg(QString::fromStdString(previous->pass))
                                               .arg(m_state->current - 1)
                                         : tr("Before: the loaded module"));
    m_before->adoptState(before);  // laid out by requestLayout, with this view's collapse state
}

void GraphView::setMeasuredTimes(const QHash<QString, double>& seconds) {
    m_times = seconds;
    m_heatBox->setVisible(!seconds.isEmpty());
    if (!seconds.isEmpty()) setShowHeatMap(true);
    else applyHeat();
}

void GraphView::setMeasuredDevice(const QString& device) {
    m_measuredDevice = device;
    m_heatBox->setText(device.isEmpty() ? tr("Heat map") : tr("Heat map (%1)").arg(device));
}

void GraphView::setShowHeatMap(bool on) {
    m_showHeat = on;
    {
        const QSignalBlocker blocker(m_heatBox);
        m_heatBox->setChecked(on);
    }
    applyHeat();
}

void GraphView::applyHeat() {
    m_heatItems = m_scene->setHeat(m_showHeat ? m_times : QHash<QString, double>());
    if (m_heatItems > 0) {
        const GraphNode* node = m_scene->graph() ? m_scene->graph()->node(m_scene->hottestKey()) : nullptr;
        const QString hottest = node && !node->instruction.isEmpty() ? node->instruction : m_scene->hottestKey();
        m_heatBox->setToolTip(tr("Time per kernel measured on %1, %2 coloured; hottest: %3 (%4)")
                                  .arg(m_measuredDevice.isEmpty() ? tr("the device") : m_measuredDevice)
                                  .arg(m_heatItems)
                                  .arg(hottest)
                                  .arg(QString::fromStdString(formatDuration(m_scene->hottestSeconds()))));
    }
}

bool GraphView::highlightEdge(const QString& producer, const QString& consumer) {
    m_pendingEdge = qMakePair(producer, consumer);
    if (!m_scene->graph() || m_pending) return true;  // tried when the layout arrives
    return showPendingEdge();
}

bool GraphView::showPendingEdge() {
    const auto [producer, consumer] = m_pendingEdge;
    if (producer.isEmpty()) return false;
    if (GraphEdgeItem* item = m_scene->findEdge(producer, consumer)) {
        m_pendingEdge = {};
        m_scene->setHighlightedEdge(item);
        if (m_canvas->zoom() < 0.5) m_canvas->setTransform(QTransform::fromScale(0.8, 0.8));
        m_canvas->centerOn(item->boundingRect().center());
        emit m_canvas->viewChanged();
        return true;
    }
    m_scene->setHighlightedEdge(nullptr);
    // Both ends inside one collapsed node: open it and try again after the layout.
    const VisibleGraph* graph = m_scene->graph();
    const QString from = graph->shownBy.value(producer), to = graph->shownBy.value(consumer);
    const GraphNode* node = graph->node(from);
    if (!from.isEmpty() && from == to && node && node->expandable && !m_collapse.expanded.contains(from)) {
        setExpanded(from, true);
        return true;
    }
    m_pendingEdge = {};
    return false;
}

void GraphView::requestLayout() {
    if (m_compare && m_before && m_before->m_module) {
        m_before->m_collapse = m_collapse;
        m_before->m_showShapes = m_showShapes;
        m_before->m_showEdgeLabels = m_showEdgeLabels;
        m_before->requestLayout();
    }
    if (!m_module) return;
    if (m_cancel) m_cancel->store(true);
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const quint64 request = ++m_request;
    m_pending = true;
    m_error.clear();
    m_statusLabel->setText(tr("Laying out…"));
    emit layoutStarted();
    if (m_watcher->isRunning()) {
        // onLayoutDone() starts the newest request when the running one ends.
        m_relayoutQueued = true;
        return;
    }
    m_relayoutQueued = false;
    std::shared_ptr<const HloModule> module = m_module;
    const CollapseState collapse = m_collapse;
    const GraphMetrics metrics = this->metrics();
    const bool edgeLabels = m_showEdgeLabels;
    const auto cache = m_cache;
    const auto cancel = m_cancel;
    m_watcher->setProperty("request", QVariant::fromValue(request));
    m_watcher->setFuture(QtConcurrent::run(handoff::wrap([=]() -> std::shared_ptr<LayoutOutcome> {
        return layOut<LayoutOutcome>(*module, collapse, metrics, edgeLabels, cache, cancel.get());
    })));
}

void GraphView::clearLayoutCache() {
    m_cache.clear();
    ++m_cacheEpoch;
    m_prefetched = {nullptr, -1};
}

bool GraphView::isPrefetching() const {
    return m_watcher->isRunning() && m_watcher->property("request").toULongLong() == 0;
}

void GraphView::startPrefetch() {
    if (m_leader || m_pending || m_watcher->isRunning() || !m_state || !m_state->snapshots) return;
    // Graphviz cannot be interrupted: a prefetch whose layout takes long would hold back the
    // next layout the user asks for (another step, another file). Graphs that took over half a
    // second to lay out are laid out when asked for only.
    if (m_lastLayoutMs > kPrefetchLimitMs) return;
    const auto snapshots = m_state->snapshots;
    // The next step that changed the module (unchanged ones reuse the layout).
    int next = m_state->current + 1;
    while (next < static_cast<int>(snapshots->size()) && !(*snapshots)[static_cast<size_t>(next)].changed) ++next;
    if (next >= static_cast<int>(snapshots->size()) || next > m_state->current + 8) return;
    if (m_prefetched == qMakePair(static_cast<const void*>(snapshots.get()), next)) return;
    m_prefetched = qMakePair(static_cast<const void*>(snapshots.get()), next);
    if (!m_prefetchCancel) m_prefetchCancel = std::make_shared<std::atomic<bool>>(false);
    const CollapseState collapse = m_collapse;
    const GraphMetrics metrics = this->metrics();
    const bool edgeLabels = m_showEdgeLabels;
    const auto cache = m_cache;
    const auto cancel = m_prefetchCancel;
    const int epoch = m_cacheEpoch;
    m_watcher->setProperty("request", QVariant::fromValue(quint64(0)));  // 0: a prefetch
    m_watcher->setFuture(QtConcurrent::run(handoff::wrap([=]() -> std::shared_ptr<LayoutOutcome> {
        auto module = (*snapshots)[static_cast<size_t>(next)].materialize();
        if (!module.isOk() || cancel->load()) return nullptr;
        auto outcome = layOut<LayoutOutcome>(**module, collapse, metrics, edgeLabels, cache, cancel.get());
        outcome->prefetch = true;
        outcome->epoch = epoch;
        outcome->graph.reset();  // only the layout is kept
        return outcome;
    })));
}

void GraphView::onLayoutDone() {
    const quint64 request = m_watcher->property("request").toULongLong();
    handoff::receive();
    std::shared_ptr<LayoutOutcome> outcome = m_watcher->future().result();
    if (request == 0) {  // a prefetch: into the cache
        if (outcome && outcome->epoch == m_cacheEpoch && !outcome->reused && outcome->layout &&
            outcome->layout->ok()) {
            std::erase_if(m_cache, [&](const auto& entry) { return entry.first == outcome->signature; });
            m_cache.insert(m_cache.begin() + std::min<size_t>(1, m_cache.size()), {outcome->signature, outcome->layout});
            if (m_cache.size() > 8) m_cache.resize(8);
        }
        if (m_relayoutQueued) requestLayout();
        return;
    }
    if (request != m_request || m_relayoutQueued) {
        // Superseded: start the newest request now.
        if (m_relayoutQueued) requestLayout();
        return;
    }
    m_pending = false;
    if (!outcome || !outcome->layout || !outcome->layout->ok()) {
        m_error = outcome && outcome->layout ? QString::fromStdString(outcome->layout->error)
                                             : tr("layout failed");
        m_statusLabel->setText(tr("Layout failed: %1").arg(m_error));
        emit layoutFailed(m_error);
        return;
    }
    m_lastLayoutMs = outcome->milliseconds;
    m_lastReused = outcome->reused;
    // LRU of layouts, most recent first.
    std::erase_if(m_cache, [&](const auto& entry) { return entry.first == outcome->signature; });
    m_cache.insert(m_cache.begin(), {outcome->signature, outcome->layout});
    if (m_cache.size() > 8) m_cache.resize(8);

    QElapsedTimer timer;
    timer.start();
    // Where nodes were, for the fade-out of removed ones.
    QHash<int64_t, QPair<QRectF, QString>> before;
    for (GraphNodeItem* item : m_scene->nodeItems())
        if (item->node().uniqueId >= 0)
            before.insert(item->node().uniqueId, qMakePair(item->sceneBoundingRect().adjusted(6, 6, -6, -6),
                                                           item->node().subtitle));
    const QTransform transform = m_canvas->transform();
    const QPointF center = m_canvas->mapToScene(m_canvas->viewport()->rect().center());

    m_selecting = true;
    m_scene->populate(outcome->graph, outcome->layout, darkPalette());
    m_scene->setShowShapes(m_showShapes);
    m_scene->setShowEdgeLabels(m_showEdgeLabels);
    const PassSnapshot* snapshot = m_state && m_state->current > 0 ? m_state->currentSnapshot() : nullptr;
    if (m_leader) {  // before/after: this is the before side
        const PassSnapshot* step = m_diffOf && m_diffOf->current > 0 ? m_diffOf->currentSnapshot() : nullptr;
        m_scene->applyRemoved(step ? &step->diff : nullptr);
        snapshot = nullptr;  // no fade-outs here
    } else {
        m_scene->applyDiff(snapshot ? &snapshot->diff : nullptr);
    }
    applyHeat();
    if (snapshot && !before.isEmpty()) {
        QVector<QPair<QRectF, QString>> ghosts;
        auto addGhost = [&](int64_t id) {
            auto it = before.find(id);
            if (it != before.end()) ghosts.push_back(*it);
        };
        for (const DiffItem& removed : snapshot->diff.removed) addGhost(removed.id);
        for (const auto& fused : snapshot->diff.fused) addGhost(fused.instruction.id);
        if (!ghosts.isEmpty() && ghosts.size() <= 2000) m_scene->fadeOut(ghosts);
    }
    if (!m_selected.isEmpty()) {
        const QString key = outcome->graph->shownBy.value(m_selected);
        if (GraphNodeItem* item = m_scene->nodeItem(key)) {
            item->setSelected(true);
            m_scene->emphasiseEdgesOf(key);
        }
    }
    m_selecting = false;
    m_lastPopulateMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    if (m_fitPending) {
        m_fitPending = false;
        showReadable();
    } else {
        m_canvas->setTransform(transform);
        m_canvas->centerOn(center);
    }
    if (!m_searchText.isEmpty()) {
        m_matches = m_scene->findMatches(m_searchText);
        m_matchIndex = m_matches.isEmpty() ? -1 : std::min(std::max(m_matchIndex, 0), int(m_matches.size()) - 1);
        m_scene->setHighlighted(m_matches);
        m_matchLabel->setText(m_matches.isEmpty() ? tr("no match")
                                                  : tr("%1 of %2").arg(m_matchIndex + 1).arg(m_matches.size()));
    }
    if (!m_pendingEdge.first.isEmpty()) showPendingEdge();
    m_minimap->invalidate();
    const VisibleGraph& g = *outcome->graph;
    updateBreadcrumb();
    m_statusLabel->setText(tr("%1 nodes, %2 edges, %3 instructions%4")
                               .arg(g.nodes.size())
                               .arg(g.edges.size())
                               .arg(g.instructionCount)
                               .arg(g.layered     ? tr(" (by layers)")
                                    : g.groupSize ? tr(" (grouped by %1)").arg(g.groupSize)
                                                  : QString()));
    emit layoutFinished();
    startPrefetch();
}

void GraphView::setCollapseState(const CollapseState& state) {
    m_collapse = state;
    requestLayout();
}

void GraphView::setExpanded(const QString& key, bool expanded) {
    if (expanded == m_collapse.expanded.contains(key)) return;
    if (expanded) m_collapse.expanded.insert(key);
    else m_collapse.expanded.remove(key);
    requestLayout();
}

void GraphView::toggleExpanded(const QString& key) { setExpanded(key, !m_collapse.expanded.contains(key)); }

void GraphView::drillInto(const QString& layerNodeKey) {
    if (m_leader) {
        m_leader->drillInto(layerNodeKey);
        return;
    }
    const bool whole = layerNodeKey.isEmpty() || layerNodeKey == QLatin1String("layer:");
    const QString focus = whole ? QString() : layerNodeKey;
    if (!focus.isEmpty() && (!m_collapse.layers || !GraphBuilder::canDrillInto(m_collapse.layers->tree, focus)))
        return;
    if (focus == m_collapse.focus) return;
    m_collapse.focus = focus;
    m_fitPending = true;
    requestLayout();
}

int GraphView::expandAllLike(const QString& layerNodeKey) {
    if (!m_collapse.layers || !layerNodeKey.startsWith(QLatin1String("layer:"))) return 0;
    const LayerTree& tree = m_collapse.layers->tree;
    const int layer = tree.find(layerNodeKey.mid(6).toStdString());
    if (layer <= 0) return 0;
    int expanded = 0;
    for (int repeat : tree.repeatsOf(layer)) {
        // Its ancestors too, so that every repeat is visible.
        for (int i : tree.path(repeat))
            if (i > 0) m_collapse.expanded.insert(QStringLiteral("layer:") + QString::fromStdString(tree.layer(i).key));
        ++expanded;
    }
    requestLayout();
    return expanded;
}

int GraphView::expandKernelsOf(const QString& layerNodeKey) {
    if (!m_collapse.layers || !m_module || !m_module->entryComputation()) return 0;
    const LayerTree& tree = m_collapse.layers->tree;
    const int layer = layerNodeKey.startsWith(QLatin1String("layer:")) ? tree.find(layerNodeKey.mid(6).toStdString()) : -1;
    if (layer <= 0 || tree.layer(layer).instructionCount > GraphBuilder::kLargeGraphNodes) return 0;
    int fusions = 0;
    for (const auto& x : m_module->entryComputation()->instructions()) {
        if (x->opcode() != HloOpcode::kFusion) continue;
        const int owner = layerOfKernel(tree, *x);
        if (owner < 0 || !tree.contains(layer, owner)) continue;
        m_collapse.expanded.insert(QString::fromStdString(x->name()));
        ++fusions;
    }
    // The layer (unless drilled into) and every layer inside it open.
    for (int i = layer; i < tree.size(); ++i) {
        if (!tree.contains(layer, i)) continue;
        if (QStringLiteral("layer:") + QString::fromStdString(tree.layer(i).key) == m_collapse.focus) continue;
        m_collapse.expanded.insert(QStringLiteral("layer:") + QString::fromStdString(tree.layer(i).key));
    }
    requestLayout();
    return fusions;
}

void GraphView::updateBreadcrumb() {
    const VisibleGraph* g = m_scene->graph();
    if (!g || !g->layered || m_leader) {
        m_breadcrumb->hide();
        return;
    }
    QStringList parts;
    for (qsizetype i = 0; i < g->breadcrumb.size(); ++i) {
        const QString name = g->breadcrumb[i].second.toHtmlEscaped();
        parts << (i + 1 < g->breadcrumb.size()
                      ? QStringLiteral("<a href=\"%1\">%2</a>").arg(g->breadcrumb[i].first.toHtmlEscaped(), name)
                      : QStringLiteral("<b>%1</b>").arg(name));
    }
    m_breadcrumb->setText(tr("Layers: ") + parts.join(QStringLiteral(" › ")));
    m_breadcrumb->show();
}

void GraphView::onNodeContextMenu(GraphNodeItem* item, const QPoint& globalPos) {
    const GraphNode node = item->node();
    if (node.opcode != QLatin1String("layer") || !m_collapse.layers) return;
    QMenu menu(this);
    const LayerTree& tree = m_collapse.layers->tree;
    if (GraphBuilder::canDrillInto(tree, node.key))
        menu.addAction(tr("Drill into %1").arg(node.title), this, [this, key = node.key] { drillInto(key); });
    menu.addAction(tr("Expand in place"), this, [this, key = node.key] { setExpanded(key, true); });
    const int layer = tree.find(node.key.mid(6).toStdString());
    const int repeats = layer > 0 ? static_cast<int>(tree.repeatsOf(layer).size()) : 1;
    if (repeats > 1)
        menu.addAction(tr("Expand every layer like this (%1)").arg(repeats), this,
                       [this, key = node.key] { expandAllLike(key); });
    if (layer > 0 && tree.layer(layer).instructionCount <= GraphBuilder::kLargeGraphNodes)
        menu.addAction(tr("Show its kernels (each fusion around its ops)"), this,
                       [this, key = node.key] { expandKernelsOf(key); });
    menu.exec(globalPos);
}

void GraphView::setShowShapes(bool show) {
    if (m_showShapes == show) return;
    m_showShapes = show;
    const QSignalBlocker blocker(m_shapesBox);
    m_shapesBox->setChecked(show);
    requestLayout();  // nodes get a third line
}

void GraphView::setShowEdgeLabels(bool show) {
    if (m_showEdgeLabels == show) return;
    m_showEdgeLabels = show;
    const QSignalBlocker blocker(m_labelsBox);
    m_labelsBox->setChecked(show);
    requestLayout();
}

void GraphView::zoomIn() { m_canvas->zoomBy(1.25); }
void GraphView::zoomOut() { m_canvas->zoomBy(0.8); }

void GraphView::showReadable() {
    fitToView();
    // Inside a layer drilled into, the whole layer is what was asked for.
    if (!m_collapse.focus.isEmpty()) return;
    if (m_canvas->zoom() >= kReadableZoom || !m_module || !m_module->entryComputation()) return;
    // Too small to read when fitted: labels at the font's own size, centred on the outputs.
    m_canvas->setTransform(QTransform());
    const HloInstruction* root = m_module->entryComputation()->root();
    const GraphNodeItem* item =
        root && m_scene->graph() ? m_scene->nodeItem(m_scene->graph()->shownBy.value(QString::fromStdString(root->name())))
                                 : nullptr;
    if (item) {
        m_canvas->centerOn(item);
    } else {
        m_canvas->centerOn(m_scene->graphRect().center());
    }
    emit m_canvas->viewChanged();
}

void GraphView::fitToView() {
    const QRectF rect = m_scene->graphRect();
    if (rect.isEmpty()) return;
    m_canvas->fitInView(rect.adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
    // Huge graphs: do not zoom out to nothing; show the top at a readable size.
    if (m_canvas->zoom() < 0.05) {
        m_canvas->setTransform(QTransform::fromScale(0.05, 0.05));
        m_canvas->centerOn(rect.center().x(), rect.top() + m_canvas->viewport()->height() / 0.1);
    }
    emit m_canvas->viewChanged();
}

int GraphView::search(const QString& text) {
    m_searchText = text;
    if (m_searchEdit->text() != text) {
        const QSignalBlocker blocker(m_searchEdit);
        m_searchEdit->setText(text);
    }
    m_matches = m_scene->findMatches(text);
    m_scene->setHighlighted(m_matches);
    m_matchIndex = m_matches.isEmpty() ? -1 : 0;
    if (text.isEmpty()) m_matchLabel->clear();
    else if (m_matches.isEmpty()) m_matchLabel->setText(tr("no match"));
    showMatch();
    return static_cast<int>(m_matches.size());
}

bool GraphView::findNext() {
    if (m_matches.isEmpty()) return false;
    m_matchIndex = (m_matchIndex + 1) % static_cast<int>(m_matches.size());
    showMatch();
    return true;
}

bool GraphView::findPrevious() {
    if (m_matches.isEmpty()) return false;
    m_matchIndex = (m_matchIndex - 1 + static_cast<int>(m_matches.size())) % static_cast<int>(m_matches.size());
    showMatch();
    return true;
}

QString GraphView::currentMatchKey() const {
    return m_matchIndex >= 0 && m_matchIndex < m_matches.size() ? m_matches[m_matchIndex] : QString();
}

void GraphView::showMatch() {
    const QString key = currentMatchKey();
    if (key.isEmpty()) return;
    m_matchLabel->setText(tr("%1 of %2").arg(m_matchIndex + 1).arg(m_matches.size()));
    if (GraphNodeItem* item = m_scene->nodeItem(key)) {
        if (m_canvas->zoom() < 0.5) m_canvas->setTransform(QTransform::fromScale(0.8, 0.8));
        m_canvas->centerOn(item);
        emit m_canvas->viewChanged();
    }
}

void GraphView::selectInstruction(const QString& name) {
    if (!m_scene->graph()) {
        m_selected = name;
        return;
    }
    const QString key = m_scene->graph()->shownBy.value(name, name);
    m_selecting = true;
    m_scene->clearSelection();
    m_selected = name;
    if (GraphNodeItem* item = m_scene->nodeItem(key)) {
        item->setSelected(true);
        m_canvas->centerOn(item);
        emit m_canvas->viewChanged();
    }
    m_scene->emphasiseEdgesOf(key);
    m_selecting = false;
    if (m_compare && m_before) m_before->selectInstruction(name);
}

void GraphView::onSceneSelectionChanged() {
    if (m_selecting) return;
    const QList<QGraphicsItem*> selected = m_scene->selectedItems();
    if (selected.isEmpty()) {
        m_scene->emphasiseEdgesOf(QString());
        return;
    }
    if (selected.front()->type() != GraphNodeItem::Type) return;
    const GraphNode& node = static_cast<GraphNodeItem*>(selected.front())->node();
    m_scene->emphasiseEdgesOf(node.key);
    if (node.instruction.isEmpty()) return;  // a group
    m_selected = node.instruction;
    if (m_compare && m_before) m_before->selectInstruction(node.instruction);
    emit instructionSelected(node.instruction);
}

void GraphView::onItemDoubleClicked(QGraphicsItem* item) {
    if (item->type() == GraphNodeItem::Type) {
        const GraphNode& node = static_cast<GraphNodeItem*>(item)->node();
        // A layer of the entry computation drills in; anything else expands in place.
        if (node.opcode == QLatin1String("layer") && m_collapse.layers &&
            GraphBuilder::canDrillInto(m_collapse.layers->tree, node.key))
            drillInto(node.key);
        else if (node.expandable) (m_leader ? m_leader : this)->toggleExpanded(node.key);
    } else if (item->type() == GraphClusterItem::Type) {
        QString key = static_cast<GraphClusterItem*>(item)->cluster().key;
        // A computation's sub-cluster collapses its instruction.
        if (!m_collapse.expanded.contains(key)) key = static_cast<GraphClusterItem*>(item)->cluster().parent;
        if (m_collapse.expanded.contains(key)) (m_leader ? m_leader : this)->setExpanded(key, false);
    }
}

QMenu* GraphView::createEdgeMenu(const GraphEdge& edge, QWidget* parent) {
    auto* menu = new QMenu(parent);
    const QString producer = edge.producer, consumer = edge.consumer;
    menu->addSection(QStringLiteral("%1 → %2").arg(producer, consumer));
    menu->addAction(tr("Why not fused?"), this, [=, this] { emit whyNotFusedRequested(producer, consumer); });
    menu->addAction(tr("Force fuse"), this, [=, this] { emit forceFusionRequested(producer, consumer); });
    menu->addAction(tr("Forbid fuse"), this, [=, this] { emit forbidFusionRequested(producer, consumer); });
    return menu;
}

void GraphView::onEdgeContextMenu(GraphEdgeItem* item, const QPoint& globalPos) {
    const GraphEdge edge = item->edge();
    if (edge.producer.isEmpty() || edge.multiplicity > 1) return;  // between groups
    emit edgeActivated(edge.producer, edge.consumer);
    QMenu* menu = createEdgeMenu(edge, this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(globalPos);
}

}  // namespace hloscope
