// GraphView: the module's dataflow graph. Binds to a
// DocumentState: shows state->module, with the diff of the step (added,
// replaced, rewired, fused, layout changed) as visual cues. Layout runs in
// a worker through hloscope_graph_layout; layouts are cached by graph
// signature, so a step that does not change the structure keeps every
// node where it was. Zoom (wheel, Ctrl+=, Ctrl+-), pan (drag), fit (F),
// minimap, search with next/previous, expand/collapse by double-click,
// edge context menu (why not fused / force / forbid), PNG/SVG export.
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QWidget>
#include <atomic>
#include <memory>

#include "views/document/document_panel.h"
#include "views/document/document_state.h"
#include "views/graph/graph_builder.h"
#include "views/graph/graph_canvas.h"
#include "views/graph/graph_scene.h"

class QCheckBox;
class QLabel;
class QSplitter;
class QLineEdit;
class QMenu;
class QToolButton;

namespace hloscope {

class GraphView : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);
    ~GraphView() override;

    GraphScene* graphScene() const { return m_scene; }
    GraphCanvas* canvas() const { return m_canvas; }
    GraphMinimap* minimap() const { return m_minimap; }
    const VisibleGraph* visibleGraph() const { return m_scene->graph(); }
    const CollapseState& collapseState() const { return m_collapse; }
    bool isLayoutPending() const { return m_pending; }
    QString lastError() const { return m_error; }
    // Milliseconds of the last build + layout (worker) and scene population.
    double lastLayoutMs() const { return m_lastLayoutMs; }
    double lastPopulateMs() const { return m_lastPopulateMs; }
    int cachedLayoutCount() const { return static_cast<int>(m_cache.size()); }
    bool isPrefetching() const;
    // Forgets every cached layout (the next one is computed afresh).
    void clearLayoutCache();
    bool lastLayoutReused() const { return m_lastReused; }

    // Before/after: a second view, left of this one, shows the state before
    // the step (state->previous) with what the step removes marked; zoom,
    // pan, expansion and selection follow this view.
    bool compareMode() const { return m_compare; }
    GraphView* beforeView() const { return m_before; }
    // Heat map of measured times (setMeasuredTimes); shown when on.
    bool heatMapShown() const { return m_showHeat; }
    int heatItemCount() const { return m_heatItems; }

    // Search: returns the number of matches and shows the first.
    int search(const QString& text);
    bool findNext();
    bool findPrevious();
    int matchCount() const { return static_cast<int>(m_matches.size()); }
    int currentMatch() const { return m_matchIndex; }
    QString currentMatchKey() const;

    void setExpanded(const QString& key, bool expanded);
    void toggleExpanded(const QString& key);
    // Drawn by layers: shows only the contents of the layer of this node key ("layer:<key>";
    // "layer:" or empty: the whole module). The breadcrumb above the graph goes back.
    void drillInto(const QString& layerNodeKey);
    QString focusLayer() const { return m_collapse.focus; }
    // Expands every layer of the same structure as this one ("expand all like this").
    int expandAllLike(const QString& layerNodeKey);
    // Shows how a layer's ops became kernels at this step: the layer and its sub-layers open,
    // every fusion in them expanded around its ops. Returns the fusions expanded (0 for a
    // layer of more than GraphBuilder::kLargeGraphNodes instructions: drill in first).
    int expandKernelsOf(const QString& layerNodeKey);
    QLabel* breadcrumb() const { return m_breadcrumb; }
    void setCollapseState(const CollapseState& state);  // relayout
    void setShowShapes(bool show);
    void setShowEdgeLabels(bool show);  // relayout: labels get room
    void setCompareMode(bool on);
    void setShowHeatMap(bool on);
    void zoomIn();
    void zoomOut();
    void fitToView();
    // Fits the graph; when that is too small to read, shows the outputs at the font's size.
    void showReadable();
    static constexpr double kReadableZoom = 0.9;

    // The edge menu: "Why not fused?", "Force fuse", "Forbid fuse".
    QMenu* createEdgeMenu(const GraphEdge& edge, QWidget* parent);
    // PNG (or any image format Qt writes) or SVG, chosen by the suffix.
    bool exportImage(const QString& path, QString* error);
    QString selectedInstruction() const { return m_selected; }

public slots:
    void setState(hloscope::DocumentStatePtr state) override;
    void setModule(std::shared_ptr<const hloscope::HloModule> module);  // no diff
    void selectInstruction(const QString& name);
    // Measured seconds per instruction name (the execution panel's run);
    // coloured as a heat map, times of hidden instructions summed on the
    // node showing them. Empty: no heat map.
    void setMeasuredTimes(const QHash<QString, double>& seconds);
    // The device the heat map's times come from, named on its check box.
    void setMeasuredDevice(const QString& device);
    // Highlights the edge producer -> consumer and centres it; when both are
    // inside one collapsed fusion, expands it first. False: not shown.
    bool highlightEdge(const QString& producer, const QString& consumer);

signals:
    void instructionSelected(const QString& name);
    void edgeActivated(const QString& producer, const QString& consumer);
    void whyNotFusedRequested(const QString& producer, const QString& consumer);
    void forceFusionRequested(const QString& producer, const QString& consumer);
    void forbidFusionRequested(const QString& producer, const QString& consumer);
    void compareModeChanged(bool on);
    void layoutStarted();
    void layoutFinished();
    void layoutFailed(const QString& message);

private:
    struct LayoutJob;
    struct LayoutOutcome;
    void requestLayout();
    void onLayoutDone();
    void onSceneSelectionChanged();
    void onItemDoubleClicked(QGraphicsItem* item);
    void onNodeContextMenu(GraphNodeItem* item, const QPoint& globalPos);
    void updateBreadcrumb();
    void onEdgeContextMenu(GraphEdgeItem* edge, const QPoint& globalPos);
    void showMatch();
    bool adoptState(DocumentStatePtr state);  // false: no module
    // While idle, lays out the next changed step's graph into the cache, so
    // stepping forward finds it there.
    void startPrefetch();
    void updateCompanion();
    void applyHeat();
    bool showPendingEdge();
    GraphMetrics metrics() const;
    bool darkPalette() const;

    GraphScene* m_scene = nullptr;
    GraphCanvas* m_canvas = nullptr;
    GraphMinimap* m_minimap = nullptr;
    QLineEdit* m_searchEdit = nullptr;
    QLabel* m_matchLabel = nullptr;
    QLabel* m_statusLabel = nullptr;
    QCheckBox* m_shapesBox = nullptr;
    QCheckBox* m_labelsBox = nullptr;
    QCheckBox* m_minimapBox = nullptr;
    QString m_measuredDevice;
    QLabel* m_breadcrumb = nullptr;
    QCheckBox* m_compareBox = nullptr;
    QCheckBox* m_heatBox = nullptr;
    QWidget* m_toolbar = nullptr;
    QSplitter* m_splitter = nullptr;
    QLabel* m_header = nullptr;  // "After: pass" in compare mode
    GraphView* m_before = nullptr;  // compare mode's left view (created on demand)
    GraphView* m_leader = nullptr;  // set on that left view: the view it follows
    DocumentStatePtr m_diffOf;  // companion: marks what this state's step removes
    bool m_compare = false;
    bool m_syncing = false;
    QHash<QString, double> m_times;
    bool m_showHeat = true;
    int m_heatItems = 0;
    QPair<QString, QString> m_pendingEdge;

    DocumentStatePtr m_state;
    std::shared_ptr<const HloModule> m_module;
    QString m_documentKey;
    CollapseState m_collapse;
    bool m_showShapes = false;
    bool m_showEdgeLabels = false;
    bool m_fitPending = true;

    QFutureWatcher<std::shared_ptr<LayoutOutcome>>* m_watcher = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    quint64 m_request = 0;
    bool m_pending = false;
    bool m_relayoutQueued = false;
    QString m_error;
    double m_lastLayoutMs = 0;
    static constexpr double kPrefetchLimitMs = 500;  // no prefetch after a slower layout
    double m_lastPopulateMs = 0;
    bool m_lastReused = false;
    std::vector<std::pair<quint64, std::shared_ptr<const layout::LayoutResult>>> m_cache;  // LRU
    int m_cacheEpoch = 0;  // bumps when the cache is cleared (prefetches of before are dropped)
    std::shared_ptr<std::atomic<bool>> m_prefetchCancel;
    QPair<const void*, int> m_prefetched{nullptr, -1};  // snapshots and index last prefetched

    QStringList m_matches;
    int m_matchIndex = -1;
    QString m_searchText;
    QString m_selected;
    bool m_selecting = false;
};

}  // namespace hloscope
