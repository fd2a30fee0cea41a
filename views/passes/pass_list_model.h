// PassListModel: one row per snapshot of a DocumentState: row 0 is the input
// module, row i + 1 the pipeline's pass i (rows exist for passes not run
// yet). Columns: index, pass, changed marker, change count (diff items),
// time, enabled (checkable: toggling asks for a re-run through
// passEnabledChangeRequested, the model itself only mirrors states), peak
// memory. The current snapshot's row is bold.
#pragma once

#include <QAbstractTableModel>

#include "views/document/document_state.h"

namespace hloscope {

class PassListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { kIndex, kPass, kChanged, kChanges, kTime, kEnabled, kPeakMemory, kColumnCount };
    enum Role {
        kSnapshotIndexRole = Qt::UserRole + 1,  // int: the snapshot this row shows
        kRunRole,                               // bool: the pass has run
        kChangedRole,                           // bool: the pass changed the module
        kCurrentRole,                           // bool: the row shown now
        kPassEnabledRole,                       // bool
    };

    explicit PassListModel(QObject* parent = nullptr);

    DocumentStatePtr state() const { return m_state; }
    // Diff items of a snapshot (added, removed, replaced, rewired, shape
    // changes, fused).
    static int changeCount(const PassSnapshot& snapshot);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

public slots:
    void setState(hloscope::DocumentStatePtr state);

signals:
    void passEnabledChangeRequested(int pass, bool enabled);

private:
    const PassSnapshot* snapshotAt(int row) const;
    DocumentStatePtr m_state;
};

}  // namespace hloscope
