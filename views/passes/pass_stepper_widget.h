// PassStepperWidget: the pass list (PassListModel) with stepping controls:
// first / previous / play-pause / next / last buttons, Up/Down/Home/End keys
// in the list, a "hide unchanged" filter (rows of passes that ran and changed
// nothing are hidden; the input and the current row stay), and a context
// menu ("Stop after this pass", "Disable pass"/"Enable pass", "Run to the
// end"). It never steps itself: it emits stepRequested(snapshot index) and
// follows the states that come back (Play waits for each step's state).
#pragma once

#include <QSortFilterProxyModel>
#include <QWidget>

#include "views/document/document_panel.h"
#include "views/document/document_state.h"

class QCheckBox;
class QMenu;
class QTableView;
class QTimer;
class QToolButton;

namespace hloscope {

class PassListModel;

class HideUnchangedProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setHideUnchanged(bool hide);
    bool hideUnchanged() const { return m_hide; }
    // Re-filters (the current row always stays visible).
    void refresh() { invalidateRowsFilter(); }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    bool m_hide = false;
};

class PassStepperWidget : public QWidget, public DocumentPanel {
    Q_OBJECT
public:
    explicit PassStepperWidget(QWidget* parent = nullptr);

    PassListModel* model() const { return m_model; }
    HideUnchangedProxy* proxy() const { return m_proxy; }
    QTableView* view() const { return m_view; }
    bool isPlaying() const;
    int currentIndex() const;  // snapshot index of the state shown (-1: none)
    // The context menu of a source row (what a right click shows; the
    // caller owns it).
    QMenu* createContextMenu(int row, QWidget* parent = nullptr);

public slots:
    void setState(hloscope::DocumentStatePtr state) override;
    void setHideUnchanged(bool hide);
    void stepNext();
    void stepPrevious();
    void stepFirst();
    void stepLast();
    void setPlaying(bool playing);
    void setPlayInterval(int milliseconds);

signals:
    void stepRequested(int snapshotIndex);
    void passEnabledRequested(int pass, bool enabled);
    void stopAfterRequested(int pass);  // -1: run to the end

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // The snapshot index `delta` visible rows away from the current one.
    int visibleNeighbour(int delta) const;
    void request(int snapshotIndex);
    void showContextMenu(const QPoint& position);
    void syncCurrentRow();
    void playTick();

    PassListModel* m_model = nullptr;
    HideUnchangedProxy* m_proxy = nullptr;
    QTableView* m_view = nullptr;
    QCheckBox* m_hide = nullptr;
    QToolButton* m_play = nullptr;
    QTimer* m_timer = nullptr;
    DocumentStatePtr m_state;
    int m_requested = -1;  // last step asked for, until its state arrives
    bool m_syncing = false;
};

}  // namespace hloscope
