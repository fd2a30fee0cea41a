#include "views/kernels/kernel_table.h"

#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "core/support/human_format.h"
#include "core/support/thread_handoff.h"

namespace hloscope {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString flopsText(double flops) {
    if (flops <= 0) return QStringLiteral("0");
    static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P"};
    int unit = 0;
    while (flops >= 999.5 && unit + 1 < static_cast<int>(std::size(kUnits))) {
        flops /= 1000;
        ++unit;
    }
    return QString::number(flops, 'g', 3) + QLatin1String(kUnits[unit]);
}

}  // namespace

// --- model -----------------------------------------------------------------------------

void KernelTableModel::setRows(KernelRows rows) {
    beginResetModel();
    m_rows = std::move(rows);
    applyMeasured();
    endResetModel();
}

void KernelTableModel::setMeasuredTimes(const QHash<QString, double>& seconds) {
    m_measured = seconds;
    applyMeasured();
    if (!m_rows.rows.empty()) emit dataChanged(index(0, kMeasured), index(rowCount() - 1, kMeasured));
}

void KernelTableModel::applyMeasured() {
    for (KernelRow& row : m_rows.rows) row.measuredSeconds = m_measured.value(q(row.name), -1.0);
}

int KernelTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.rows.size());
}

int KernelTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant KernelTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const KernelRow& r = row(index.row());
    const double share = m_rows.totalPredictedSeconds > 0 ? r.predictedSeconds / m_rows.totalPredictedSeconds : 0;
    if (role == kSortRole) {
        switch (index.column()) {
            case kOrder: return static_cast<qlonglong>(r.order);
            case kKernel: return q(r.name);
            case kKind: return q(r.kind);
            case kLayer: return q(r.layer);
            case kOps: return static_cast<qlonglong>(r.ops);
            case kBytes: return r.bytes;
            case kFlops: return r.flops;
            case kPredicted: return r.predictedSeconds;
            case kMeasured: return r.measuredSeconds;
            case kShare: return share;
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole)
        return index.column() >= kOps || index.column() == kOrder ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                                  : QVariant();
    if (role == Qt::ToolTipRole && index.column() == kPredicted && r.executions != 1)
        return tr("%1 executions of %2").arg(r.executions).arg(q(formatDuration(r.predictedSeconds / r.executions)));
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case kBytes: return q(formatByteSize(r.bytes));
        case kFlops: return flopsText(r.flops);
        case kPredicted: return q(formatDuration(r.predictedSeconds));
        case kMeasured: return q(formatDuration(r.measuredSeconds));
        case kShare: return QString::number(100 * share, 'f', 1) + QLatin1Char('%');
        default: return data(index, kSortRole);  // order, names and counts as they are
    }
}

QVariant KernelTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case kOrder: return tr("#");
        case kKernel: return tr("Kernel");
        case kKind: return tr("Kind");
        case kLayer: return tr("Layer");
        case kOps: return tr("Ops");
        case kBytes: return tr("Bytes");
        case kFlops: return tr("Flops");
        case kPredicted: return tr("Predicted");
        case kMeasured: return tr("Measured");
        case kShare: return tr("Share");
    }
    return {};
}

// --- panel -----------------------------------------------------------------------------

KernelTablePanel::KernelTablePanel(QWidget* parent) : QWidget(parent) {
    m_model = new KernelTableModel(this);
    m_filter = new QSortFilterProxyModel(this);
    m_filter->setSourceModel(m_model);
    m_filter->setSortRole(KernelTableModel::kSortRole);
    m_filter->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setFilterKeyColumn(-1);  // any column: name, kind or layer
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("kernelTable"));
    m_table->setModel(m_filter);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);  // the cost command's order until a header is clicked
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_filterEdit = new QLineEdit(this);
    m_filterEdit->setPlaceholderText(tr("Filter by kernel, kind or layer"));
    m_filterEdit->setClearButtonEnabled(true);
    m_summary = new QLabel(this);
    m_exportButton = new QPushButton(tr("Export CSV..."), this);
    m_exportButton->setEnabled(false);
    auto* bar = new QHBoxLayout;
    bar->addWidget(m_filterEdit, 1);
    bar->addWidget(m_summary);
    bar->addWidget(m_exportButton);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_table, 1);

    m_watcher = new QFutureWatcher<Result>(this);
    connect(m_watcher, &QFutureWatcher<Result>::finished, this, &KernelTablePanel::onComputed);
    connect(m_filterEdit, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_filter->setFilterFixedString(text);
        m_summary->setText(summaryText());
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { onCurrentRowChanged(current); });
    connect(m_exportButton, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export kernels"), QStringLiteral("kernels.csv"),
                                                          tr("CSV (*.csv)"));
        if (path.isEmpty()) return;
        QString error;
        if (!exportCsv(path, &error)) m_summary->setText(error);
    });
}

KernelTablePanel::~KernelTablePanel() { m_watcher->waitForFinished(); }

void KernelTablePanel::setState(DocumentStatePtr state) {
    m_state = std::move(state);
    if (!m_state || !m_state->module) {
        m_model->setRows({});
        m_summary->setText(tr("No document."));
        m_exportButton->setEnabled(false);
        return;
    }
    if (m_watcher->isRunning()) {
        m_recompute = true;  // for the newest state, when the running computation ends
        return;
    }
    compute();
}

void KernelTablePanel::compute() {
    m_summary->setText(tr("Computing..."));
    const DocumentStatePtr state = m_state;
    m_watcher->setFuture(QtConcurrent::run(handoff::wrap([state]() -> Result {
        Result result;
        result.generation = state->generation;
        auto rows = computeKernelRows(*state);
        if (rows.isOk()) result.rows = std::make_shared<const KernelRows>(std::move(*rows));
        else result.error = q(rows.status().message());
        return result;
    })));
}

void KernelTablePanel::onComputed() {
    handoff::receive();
    const Result result = m_watcher->result();
    if (m_recompute) {
        m_recompute = false;
        if (m_state && m_state->module && result.generation != m_state->generation) {
            compute();
            return;
        }
    }
    if (!m_state || result.generation != m_state->generation) return;
    if (!result.rows) {
        m_model->setRows({});
        m_summary->setText(result.error);
        m_exportButton->setEnabled(false);
        return;
    }
    m_model->setRows(*result.rows);
    m_table->resizeColumnsToContents();
    // The layer (a path of scopes) takes the room that is left.
    m_table->horizontalHeader()->setSectionResizeMode(KernelTableModel::kLayer, QHeaderView::Stretch);
    m_exportButton->setEnabled(m_model->rowCount() > 0);
    m_summary->setText(summaryText());
    emit rowsReady();
}

QString KernelTablePanel::summaryText() const {
    const KernelRows& rows = m_model->rows();
    if (rows.rows.empty()) return tr("No kernels.");
    const QString shown = m_filter->rowCount() == m_model->rowCount()
                              ? QString::number(m_model->rowCount())
                              : tr("%1 of %2").arg(m_filter->rowCount()).arg(m_model->rowCount());
    return tr("%1 kernels, predicted %2 on %3%4")
        .arg(shown, q(formatDuration(rows.totalPredictedSeconds)), q(rows.target),
             rows.scheduled ? tr("; # is the module's schedule") : QString());
}

void KernelTablePanel::setMeasuredTimes(const QHash<QString, double>& seconds) { m_model->setMeasuredTimes(seconds); }

void KernelTablePanel::selectInstruction(const QString& name) {
    if (m_selecting) return;
    for (int r = 0; r < m_filter->rowCount(); ++r) {
        const QModelIndex index = m_filter->index(r, KernelTableModel::kKernel);
        if (index.data().toString() != name) continue;
        m_selecting = true;
        m_table->setCurrentIndex(index);
        m_table->scrollTo(index);
        m_selecting = false;
        return;
    }
}

void KernelTablePanel::onCurrentRowChanged(const QModelIndex& current) {
    if (m_selecting || !current.isValid()) return;
    const QString name = m_filter->index(current.row(), KernelTableModel::kKernel).data().toString();
    m_selecting = true;
    emit instructionSelected(name);
    m_selecting = false;
}

QString KernelTablePanel::csv() const {
    std::vector<KernelRow> rows;
    for (int r = 0; r < m_filter->rowCount(); ++r)
        rows.push_back(m_model->row(m_filter->mapToSource(m_filter->index(r, 0)).row()));
    return q(kernelRowsCsv(rows));
}

bool KernelTablePanel::exportCsv(const QString& path, QString* error) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    file.write(csv().toUtf8());
    if (!file.commit()) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

}  // namespace hloscope
