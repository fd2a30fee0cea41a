#include "views/graph/graph_view.h"

#include <QCheckBox>
#include <QContextMenuEvent>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QImage>
#include <QImageWriter>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QShortcut>
#include <QSvgGenerator>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <chrono>

#include "core/hlo_module.h"

namespace hloscope {

// --- canvas ----------------------------------------------------------------------

GraphCanvas::GraphCanvas(QWidget* parent) : QGraphicsView(parent) {
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlag(QGraphicsView::DontSavePainterState, true);
}

double GraphCanvas::zoom() const { return transform().m11(); }

void GraphCanvas::zoomBy(double factor) {
    const double next = zoom() * factor;
    if (next < 0.005 || next > 8) return;
    scale(factor, factor);
    emit viewChanged();
}

void GraphCanvas::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) return QGraphicsView::wheelEvent(event);
    zoomBy(std::pow(1.15, steps));
    event->accept();
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
    QGraphicsItem* item = itemAt(event->pos());
    // Prefer a node over the cluster behind it.
    for (QGraphicsItem* candidate : items(event->pos())) {
        if (candidate->type() == GraphNodeItem::Type) {
            item = candidate;
            break;
        }
    }
    if (item) {
        emit itemDoubleClicked(item);
        event->accept();
        return;
    }
    QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphCanvas::contextMenuEvent(QContextMenuEvent* event) {
    for (QGraphicsItem* item : items(event->pos())) {
        if (item->type() == GraphEdgeItem::Type) {
            emit edgeContextMenu(static_cast<GraphEdgeItem*>(item), event->globalPos());
            event->accept();
            return;
        }
    }
    QGraphicsView::contextMenuEvent(event);
}

void GraphCanvas::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    emit viewChanged();
}

void GraphCanvas::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    emit viewChanged();
}

// --- minimap ------------------------------------------------------------------

GraphMinimap::GraphMinimap(GraphCanvas* canvas, QWidget* parent) : QWidget(parent), m_canvas(canvas) {
    setFixedSize(200, 150);
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Overview: click or drag to move the view"));
}

void GraphMinimap::invalidate() {
    m_dirty = true;
    update();
}

QTransform GraphMinimap::sceneToWidget() const {
    const QRectF scene = m_canvas->scene() ? m_canvas->scene()->sceneRect() : QRectF();
    if (scene.isEmpty()) return {};
    const double s = std::min((width() - 4) / scene.width(), (height() - 4) / scene.height());
    const double ox = (width() - scene.width() * s) / 2, oy = (height() - scene.height() * s) / 2;
    QTransform t;
    t.translate(ox, oy);
    t.scale(s, s);
    t.translate(-scene.left(), -scene.top());
    return t;
}

QRectF GraphMinimap::viewportInScene() const {
    return m_canvas->mapToScene(m_canvas->viewport()->rect()).boundingRect();
}

void GraphMinimap::centerOnWidgetPoint(const QPointF& point) {
    bool invertible = false;
    const QTransform inverse = sceneToWidget().inverted(&invertible);
    if (!invertible) return;
    m_canvas->centerOn(inverse.map(point));
    update();
}

void GraphMinimap::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QColor base = palette().color(QPalette::Base);
    painter.fillRect(rect(), base);
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(rect().adjusted(0, 0, -1, -1));
    QGraphicsScene* scene = m_canvas->scene();
    if (!scene || scene->sceneRect().isEmpty()) return;
    if (m_dirty || m_cache.size() != size()) {
        m_cache = QImage(size(), QImage::Format_ARGB32_Premultiplied);
        m_cache.fill(Qt::transparent);
        QPainter cachePainter(&m_cache);
        cachePainter.setTransform(sceneToWidget());
        scene->render(&cachePainter, scene->sceneRect(), scene->sceneRect());
        m_dirty = false;
    }
    painter.drawImage(0, 0, m_cache);
    const QRectF frame = sceneToWidget().mapRect(viewportInScene()).intersected(QRectF(rect()));
    painter.setPen(QPen(QColor(0, 120, 215), 1.5));
    painter.setBrush(QColor(0, 120, 215, 40));
    painter.drawRect(frame);
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) { centerOnWidgetPoint(event->position()); }

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) centerOnWidgetPoint(event->position());
}

// --- view ---------------------------------------------------------------------

struct GraphView::LayoutOutcome {
    std::shared_ptr<const VisibleGraph> graph;
    std::shared_ptr<const layout::LayoutResult> layout;
    quint64 signature = 0;
    bool reused = false;
    double milliseconds = 0;
};

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
    m_statusLabel = new QLabel(this);
    toolbar->addWidget(m_searchEdit, 1);
    toolbar->addWidget(previous);
    toolbar->addWidget(next);
    toolbar->addWidget(m_matchLabel);
    toolbar->addSpacing(12);
    toolbar->addWidget(fit);
    toolbar->addWidget(m_shapesBox);
    toolbar->addWidget(m_labelsBox);
    toolbar->addStretch();
    toolbar->addWidget(m_statusLabel);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(toolbar);
    layout->addWidget(m_canvas, 1);

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
    connect(m_labelsBox, &QCheckBox::toggled, this, &GraphView::setShowEdgeLabels);

    auto shortcut = [this](const QKeySequence& keys, auto slot) {
        auto* s = new QShortcut(keys, this);
        s->setContext(Qt::WidgetWithChildrenShortcut);
        connect(s, &QShortcut::activated, this, slot);
    };
    shortcut(QKeySequence(Qt::CTRL | Qt::Key_Equal), &GraphView::zoomIn);
    shortcut(QKeySequence(Qt::CTRL | Qt::Key_Plus), &GraphView::zoomIn);
    shortcut(QKeySequence(Qt::CTRL | Qt::Key_Minus), &GraphView::zoomOut);
    shortcut(QKeySequence(Qt::Key_F), &GraphView::fitToView);
    shortcut(QKeySequence::Find, [this] { m_searchEdit->setFocus(); m_searchEdit->selectAll(); });

    connect(m_scene, &QGraphicsScene::selectionChanged, this, &GraphView::onSceneSelectionChanged);
    connect(m_canvas, &GraphCanvas::itemDoubleClicked, this, &GraphView::onItemDoubleClicked);
    connect(m_canvas, &GraphCanvas::edgeContextMenu, this, &GraphView::onEdgeContextMenu);
    connect(m_canvas, &GraphCanvas::viewChanged, this, [this] {
        m_minimap->move(m_canvas->viewport()->width() - m_minimap->width() - 8,
                        m_canvas->viewport()->height() - m_minimap->height() - 8);
        m_minimap->update();
    });

    m_watcher = new QFutureWatcher<std::shared_ptr<LayoutOutcome>>(this);
    connect(m_watcher, &QFutureWatcher<std::shared_ptr<LayoutOutcome>>::finished, this,
            &GraphView::onLayoutDone);
}

GraphView::~GraphView() {
    if (m_cancel) m_cancel->store(true);
    m_watcher->waitForFinished();
    // The scene is a child destroyed after this object's members: no more
    // selection callbacks into them.
    if (m_scene) m_scene->disconnect(this);
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
        return;
    }
    const QString documentKey =
        QString::fromStdString(m_state->path) + QLatin1Char('\n') + QString::fromStdString(m_state->displayName);
    if (!previous || documentKey != m_documentKey) {
        m_documentKey = documentKey;
        m_collapse = GraphBuilder::initialState(*m_module);
        m_cache.clear();
        m_fitPending = true;
        m_selected.clear();
    }
    requestLayout();
}

void GraphView::requestLayout() {
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
    m_watcher->setFuture(QtConcurrent::run([=]() -> std::shared_ptr<LayoutOutcome> {
        QElapsedTimer timer;
        timer.start();
        auto outcome = std::make_shared<LayoutOutcome>();
        auto graph = std::make_shared<VisibleGraph>(GraphBuilder::build(*module, collapse, metrics));
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
            options.cancel = cancel.get();
            outcome->layout =
                std::make_shared<layout::LayoutResult>(layout::computeLayout(graph->toLayoutGraph(edgeLabels), options));
        }
        outcome->graph = std::move(graph);
        outcome->milliseconds = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        return outcome;
    }));
}

void GraphView::onLayoutDone() {
    const quint64 request = m_watcher->property("request").toULongLong();
    std::shared_ptr<LayoutOutcome> outcome = m_watcher->future().result();
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
    m_scene->applyDiff(snapshot ? &snapshot->diff : nullptr);
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
        fitToView();
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
    m_minimap->invalidate();
    const VisibleGraph& g = *outcome->graph;
    m_statusLabel->setText(tr("%1 nodes, %2 edges, %3 instructions%4")
                               .arg(g.nodes.size())
                               .arg(g.edges.size())
                               .arg(g.instructionCount)
                               .arg(g.groupSize ? tr(" (grouped by %1)").arg(g.groupSize) : QString()));
    emit layoutFinished();
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
    emit instructionSelected(node.instruction);
}

void GraphView::onItemDoubleClicked(QGraphicsItem* item) {
    if (item->type() == GraphNodeItem::Type) {
        const GraphNode& node = static_cast<GraphNodeItem*>(item)->node();
        if (node.expandable) toggleExpanded(node.key);
    } else if (item->type() == GraphClusterItem::Type) {
        QString key = static_cast<GraphClusterItem*>(item)->cluster().key;
        // A computation's sub-cluster collapses its instruction.
        if (!m_collapse.expanded.contains(key)) key = static_cast<GraphClusterItem*>(item)->cluster().parent;
        if (m_collapse.expanded.contains(key)) setExpanded(key, false);
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

bool GraphView::exportImage(const QString& path, QString* error) {
    auto fail = [&](const QString& message) {
        if (error) *error = message;
        return false;
    };
    if (!m_scene->graph()) return fail(tr("no graph to export"));
    const QRectF source = m_scene->itemsBoundingRect().adjusted(-20, -20, 20, 20);
    if (source.isEmpty()) return fail(tr("the graph is empty"));
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("svg")) {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(source.size().toSize());
        generator.setViewBox(QRectF(QPointF(0, 0), source.size()));
        generator.setTitle(QString::fromStdString(m_module ? m_module->name() : std::string()));
        generator.setDescription(tr("hloscope graph"));
        QPainter painter;
        if (!painter.begin(&generator)) return fail(tr("cannot write %1").arg(path));
        m_scene->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
        painter.end();
        if (QFileInfo(path).size() <= 0) return fail(tr("cannot write %1").arg(path));
        return true;
    }
    const QByteArray format = suffix.isEmpty() ? QByteArray("png") : suffix.toLatin1();
    if (!QImageWriter::supportedImageFormats().contains(format))
        return fail(tr("unsupported image format '%1' (use .png or .svg)").arg(suffix));
    // Keep the image within 16384 px a side and 128 Mpixel.
    double scale = 2.0;
    scale = std::min(scale, 16384.0 / source.width());
    scale = std::min(scale, 16384.0 / source.height());
    scale = std::min(scale, std::sqrt(128e6 / (source.width() * source.height())));
    QImage image((source.size() * scale).toSize().expandedTo(QSize(1, 1)), QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) return fail(tr("not enough memory for a %1×%2 image").arg(image.width()).arg(image.height()));
    image.fill(palette().color(QPalette::Base));
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        m_scene->render(&painter, QRectF(image.rect()), source);
    }
    QImageWriter writer(path, format);
    if (!writer.write(image)) return fail(tr("cannot write %1: %2").arg(path, writer.errorString()));
    return true;
}

}  // namespace hloscope
