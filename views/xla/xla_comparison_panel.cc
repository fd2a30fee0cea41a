#include "views/xla/xla_comparison_panel.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <functional>

#include "core/io/module_io.h"
#include "core/ir/hlo_module.h"
#include "core/support/human_format.h"
#include "core/support/thread_handoff.h"
#include "views/document/document_loader.h"

namespace hloscope {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString percent(int64_t part, int64_t whole) {
    return whole > 0 ? QString::number(100.0 * static_cast<double>(part) / static_cast<double>(whole), 'f', 1) +
                           QLatin1Char('%')
                     : QStringLiteral("-");
}

// XLA's optimized module of the state's dump module; empty when the state is no such module.
QString xlaFileOf(const DocumentState& state) {
    if (state.moduleId.empty() || state.path.empty()) return {};
    auto modules = document_loader::listDumpFolder(q(state.path));
    if (!modules.isOk()) return {};
    for (const DumpModuleInfo& module : *modules)
        if (module.id == q(state.moduleId) && !module.beforeOptimizations.isEmpty())
            return module.afterOptimizations;
    return {};
}

XlaComparisonPanel::Result computeComparison(const DocumentStatePtr& state) {
    XlaComparisonPanel::Result result;
    result.generation = state->generation;
    if (!state->module || !state->layers) {
        result.error = QObject::tr("No document.");
        return result;
    }
    result.xlaFile = xlaFileOf(*state);
    if (result.xlaFile.isEmpty()) {
        result.error = QObject::tr(
            "Open a module of an XLA dump folder that holds it before and after optimization "
            "(module_NNNN.NAME.before_optimizations.txt and ...after_optimizations.txt, as "
            "--xla_dump_to writes them, or File → Capture From Program) to see XLA's fusion beside "
            "hloscope's.");
        return result;
    }
    auto xla = loadModuleFromFile(result.xlaFile.toStdString());
    if (!xla.isOk()) {
        result.error = q(xla.status().toString());
        return result;
    }
    result.comparison = std::make_shared<const FusionComparison>(
        compareFusion(*state->layers->module, state->layers->tree, **xla, *state->module));
    return result;
}

}  // namespace

XlaComparisonPanel::XlaComparisonPanel(QWidget* parent) : QWidget(parent) {
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_layers = new QTreeWidget(this);
    m_layers->setObjectName(QStringLiteral("xlaLayers"));
    m_layers->setHeaderLabels({tr("Layer"), tr("Ops"), tr("XLA kernels"), tr("hloscope kernels"), tr("Grouped alike")});
    m_layers->setRootIsDecorated(true);
    m_layers->setUniformRowHeights(true);
    m_pairs = new QListWidget(this);
    m_pairs->setObjectName(QStringLiteral("xlaPairs"));
    m_pairs->setToolTip(tr("Producer → consumer pairs one side fused and the other did not; choose one to see its edge"));
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_layers);
    split->addWidget(m_pairs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);
    m_watcher = new QFutureWatcher<Result>(this);
    connect(m_watcher, &QFutureWatcher<Result>::finished, this, &XlaComparisonPanel::onComputed);
    connect(m_pairs, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (!item) return;
        emit pairSelected(item->data(Qt::UserRole).toString(), item->data(Qt::UserRole + 1).toString());
    });
    m_summary->setText(tr("No document."));
}

XlaComparisonPanel::~XlaComparisonPanel() { m_watcher->waitForFinished(); }

void XlaComparisonPanel::setState(DocumentStatePtr state) {
    m_state = std::move(state);
    if (!m_state) {
        m_comparison.reset();
        m_summary->setText(tr("No document."));
        fill();
        return;
    }
    if (m_watcher->isRunning()) {
        m_recompute = true;
        return;
    }
    compute();
}

void XlaComparisonPanel::compute() {
    m_summary->setText(tr("Comparing with XLA's fusion..."));
    const DocumentStatePtr state = m_state;
    m_watcher->setFuture(QtConcurrent::run(handoff::wrap([state]() { return computeComparison(state); })));
}

void XlaComparisonPanel::onComputed() {
    handoff::receive();
    const Result result = m_watcher->result();
    if (m_recompute) {
        m_recompute = false;
        if (m_state && result.generation != m_state->generation) {
            compute();
            return;
        }
    }
    if (!m_state || result.generation != m_state->generation) return;
    m_comparison = result.comparison;
    m_xlaFile = result.xlaFile;
    if (!m_comparison) m_summary->setText(result.error);
    fill();
    emit comparisonReady();
}

QString XlaComparisonPanel::summaryText() const { return m_summary->text(); }

void XlaComparisonPanel::fill() {
    m_layers->clear();
    m_pairs->clear();
    if (!m_comparison || !m_state || !m_state->layers) return;
    const FusionComparison& c = *m_comparison;
    const LayerTree& tree = m_state->layers->tree;
    const FusionComparison::LayerCounts& total = c.layers[LayerTree::kRoot];
    const PassSnapshot* snapshot = m_state->currentSnapshot();
    const QString step = snapshot && m_state->current > 0
                             ? tr("after step %1 (%2)").arg(m_state->current).arg(q(snapshot->pass))
                             : tr("at the loaded module (no pass run yet)");
    QString text = tr("XLA (%1): %2 kernels; hloscope %3: %4 kernels, for %5 ops. Producer → consumer "
                      "edges: %6; both fused %7, neither %8, <b>%9 agree</b>; XLA only %10, hloscope only %11.")
                       .arg(QFileInfo(m_xlaFile).fileName().toHtmlEscaped())
                       .arg(q(formatCount(total.xlaKernels)), step, q(formatCount(total.oursKernels)),
                            q(formatCount(total.ops)), q(formatCount(c.edges)), q(formatCount(c.fusedByBoth)),
                            q(formatCount(c.fusedByNeither)), percent(c.fusedByBoth + c.fusedByNeither, c.edges))
                       .arg(c.fusedByXlaOnly.size())
                       .arg(c.fusedByOursOnly.size());
    if (c.missing > 0)
        text += tr(" %1 ops one side lacks (renamed by a pass, or a library call) are left out.").arg(c.missing);
    m_summary->setText(text);
    std::function<void(int, QTreeWidgetItem*)> add = [&](int index, QTreeWidgetItem* parent) {
        const FusionComparison::LayerCounts& counts = c.layers[static_cast<size_t>(index)];
        if (counts.ops == 0) return;
        QTreeWidgetItem* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_layers);
        item->setText(0, q(tree.layer(index).name));
        item->setText(1, q(formatCount(counts.ops)));
        item->setText(2, q(formatCount(counts.xlaKernels)));
        item->setText(3, q(formatCount(counts.oursKernels)));
        item->setText(4, percent(counts.sameGroup, counts.ops));
        for (int column = 1; column < 5; ++column) item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
        if (counts.xlaKernels != counts.oursKernels) item->setForeground(3, QColor(190, 90, 0));
        for (int child : tree.layer(index).children) add(child, item);
    };
    for (int child : tree.layer(LayerTree::kRoot).children) add(child, nullptr);
    m_layers->expandToDepth(0);
    for (int column = 0; column < 5; ++column) m_layers->resizeColumnToContents(column);
    auto list = [&](const QString& who, const std::vector<std::pair<std::string, std::string>>& pairs) {
        for (const auto& [producer, consumer] : pairs) {
            const int layer = tree.layerOf(consumer);
            auto* item = new QListWidgetItem(
                tr("%1: %2 → %3%4")
                    .arg(who, q(producer), q(consumer),
                         layer > 0 ? QStringLiteral("  (") + q(tree.layer(layer).key) + QLatin1Char(')') : QString()),
                m_pairs);
            item->setData(Qt::UserRole, q(producer));
            item->setData(Qt::UserRole + 1, q(consumer));
        }
    };
    list(tr("fused by XLA only"), c.fusedByXlaOnly);
    list(tr("fused by hloscope only"), c.fusedByOursOnly);
}

}  // namespace hloscope
