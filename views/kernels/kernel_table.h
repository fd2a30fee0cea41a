// Kernel table: every kernel of the current step as a sortable, filterable
// table (an op profile): its order in its computation (XLA's schedule in an
// optimized dump), kernel, kind, layer, ops, bytes moved, flops,
// predicted time, measured time after a run, and share of the predicted total.
// Selecting a row selects the kernel in the graph (instructionSelected);
// Export CSV writes the rows shown. The rows (views/model/kernel_rows.h) are
// computed off the GUI thread.
#pragma once

#include <QAbstractTableModel>
#include <QFutureWatcher>
#include <QHash>
#include <QWidget>
#include <memory>

#include "views/document/document_panel.h"
#include "views/model/kernel_rows.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace hloscope {

class KernelTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { kOrder, kKernel, kKind, kLayer, kOps, kBytes, kFlops, kPredicted, kMeasured, kShare, kColumnCount };
    // Qt::UserRole: the value to sort by (numbers as numbers).
    static constexpr int kSortRole = Qt::UserRole;

    using QAbstractTableModel::QAbstractTableModel;
    void setRows(KernelRows rows);
    void setMeasuredTimes(const QHash<QString, double>& seconds);
    const KernelRows& rows() const { return m_rows; }
    const KernelRow& row(int index) const { return m_rows.rows[static_cast<size_t>(index)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void applyMeasured();
    KernelRows m_rows;
    QHash<QString, double> m_measured;
};

class KernelTablePanel : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    explicit KernelTablePanel(QWidget* parent = nullptr);
    ~KernelTablePanel() override;

    KernelTableModel* model() const { return m_model; }
    QSortFilterProxyModel* filter() const { return m_filter; }
    QTableView* table() const { return m_table; }
    bool isComputing() const { return m_watcher->isRunning(); }
    QString summaryText() const;
    // The rows shown (filtered, in the table's order) as CSV.
    QString csv() const;
    bool exportCsv(const QString& path, QString* error);

public slots:
    void setState(hloscope::DocumentStatePtr state) override;
    void setMeasuredTimes(const QHash<QString, double>& seconds);
    void selectInstruction(const QString& name);

signals:
    void instructionSelected(const QString& name);
    void rowsReady();  // the rows of the newest state are shown

private:
    struct Result {
        std::shared_ptr<const KernelRows> rows;
        QString error;
        int64_t generation = -1;
    };
    void compute();
    void onComputed();
    void onCurrentRowChanged(const QModelIndex& current);

    KernelTableModel* m_model = nullptr;
    QSortFilterProxyModel* m_filter = nullptr;
    QTableView* m_table = nullptr;
    QLineEdit* m_filterEdit = nullptr;
    QLabel* m_summary = nullptr;
    QPushButton* m_exportButton = nullptr;
    QFutureWatcher<Result>* m_watcher = nullptr;
    DocumentStatePtr m_state;
    bool m_recompute = false;
    bool m_selecting = false;
};

}  // namespace hloscope
