#include "views/passes/pass_list_model.h"

#include <QFont>
#include <QLocale>

namespace hloscope {

PassListModel::PassListModel(QObject* parent) : QAbstractTableModel(parent) {}

int PassListModel::changeCount(const PassSnapshot& s) {
    const ModuleDiff& d = s.diff;
    return static_cast<int>(d.added.size() + d.removed.size() + d.replaced.size() + d.rewired.size() +
                            d.shapeChanged.size() + d.fused.size());
}

void PassListModel::setState(DocumentStatePtr state) {
    const bool sameRows = m_state && state && m_state->passes == state->passes;
    if (!sameRows) {
        beginResetModel();
        m_state = std::move(state);
        endResetModel();
        return;
    }
    m_state = std::move(state);
    if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumnCount - 1));
}

int PassListModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !m_state) return 0;
    return static_cast<int>(m_state->passes.size()) + 1;
}

int PassListModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : kColumnCount;
}

const PassSnapshot* PassListModel::snapshotAt(int row) const {
    if (!m_state || row < 0 || row >= m_state->snapshotCount()) return nullptr;
    return &(*m_state->snapshots)[static_cast<size_t>(row)];
}

QVariant PassListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !m_state)
        return {};
    const int row = index.row();
    const PassSnapshot* s = snapshotAt(row);
    const bool enabled = row == 0 || (static_cast<size_t>(row - 1) < m_state->passEnabled.size()
                                          ? m_state->passEnabled[static_cast<size_t>(row - 1)]
                                          : true);
    const bool beyondStop = row > 0 && m_state->stopAfter >= 0 && row - 1 > m_state->stopAfter;
    switch (role) {
        case kSnapshotIndexRole: return row;
        case kRunRole: return s != nullptr;
        case kChangedRole: return s && s->changed;
        case kCurrentRole: return row == m_state->current;
        case kPassEnabledRole: return enabled;
        case Qt::FontRole:
            if (row == m_state->current) {
                QFont font;
                font.setBold(true);
                return font;
            }
            return {};
        case Qt::ToolTipRole:
            if (beyondStop) return tr("After the stop: not run");
            if (!s) return tr("Not run yet");
            if (row == 0) return tr("The module as loaded");
            return tr("%1: %2, %3 diff items").arg(QString::fromStdString(s->pass))
                .arg(!s->enabled ? tr("disabled") : s->changed ? tr("changed") : tr("unchanged"))
                .arg(changeCount(*s));
        case Qt::TextAlignmentRole:
            if (index.column() == kIndex || index.column() == kChanges || index.column() == kTime ||
                index.column() == kPeakMemory)
                return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Qt::CheckStateRole:
            if (index.column() == kEnabled && row > 0) return enabled ? Qt::Checked : Qt::Unchecked;
            return {};
        case Qt::DisplayRole:
            break;
        default:
            return {};
    }
    switch (index.column()) {
        case kIndex: return row == 0 ? QString() : QString::number(row - 1);
        case kPass:
            if (row == 0) return tr("input");
            return QString::fromStdString(m_state->passes[static_cast<size_t>(row - 1)]);
        case kChanged:
            if (beyondStop) return tr("stop");
            if (!s) return QString();
            if (row == 0) return QString();
            if (!s->enabled) return tr("off");
            return s->changed ? QStringLiteral("●") : QStringLiteral("·");
        case kChanges: return s && row > 0 ? QVariant(changeCount(*s)) : QVariant();
        case kTime:
            return s && row > 0 ? QVariant(QStringLiteral("%1 ms").arg(s->seconds * 1e3, 0, 'f', 2)) : QVariant();
        case kEnabled: return {};
        case kPeakMemory:
            return s && s->peakBytes >= 0 ? QVariant(QLocale().formattedDataSize(s->peakBytes)) : QVariant();
        default: return {};
    }
}

QVariant PassListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case kIndex: return tr("#");
        case kPass: return tr("Pass");
        case kChanged: return tr("Changed");
        case kChanges: return tr("Changes");
        case kTime: return tr("Time");
        case kEnabled: return tr("On");
        case kPeakMemory: return tr("Peak memory");
        default: return {};
    }
}

Qt::ItemFlags PassListModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
    if (index.column() == kEnabled && index.row() > 0 && m_state && !m_state->externalTimeline)
        f |= Qt::ItemIsUserCheckable;
    return f;
}

bool PassListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::CheckStateRole || index.column() != kEnabled || index.row() == 0 || !m_state ||
        m_state->externalTimeline)
        return false;
    const bool enabled = value.toInt() == Qt::Checked;
    emit passEnabledChangeRequested(index.row() - 1, enabled);
    // The row changes when the re-run's state arrives.
    return false;
}

}  // namespace hloscope
