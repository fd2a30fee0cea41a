#include "views/passes/pass_stepper_widget.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QItemSelectionModel>
#include <QMenu>
#include <QStyle>
#include <QScrollBar>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/passes/pass_list_model.h"

namespace hloscope {

void HideUnchangedProxy::setHideUnchanged(bool hide) {
    if (hide == m_hide) return;
    m_hide = hide;
    invalidateRowsFilter();
}

bool HideUnchangedProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (!m_hide || sourceRow == 0) return true;
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    if (index.data(PassListModel::kCurrentRole).toBool()) return true;
    // Passes not run yet stay: whether they change anything is unknown.
    if (!index.data(PassListModel::kRunRole).toBool()) return true;
    return index.data(PassListModel::kChangedRole).toBool();
}

PassStepperWidget::PassStepperWidget(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("passStepper"));
    m_model = new PassListModel(this);
    m_proxy = new HideUnchangedProxy(this);
    m_proxy->setSourceModel(m_model);
    m_view = new QTableView(this);
    m_view->setModel(m_proxy);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    m_view->setWordWrap(false);
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Every column as wide as its contents: pass names are never cut (the table scrolls).
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->setObjectName(QStringLiteral("passTable"));

    auto makeButton = [this](QStyle::StandardPixmap icon, const QString& tip, auto slot) {
        auto* b = new QToolButton(this);
        b->setIcon(style()->standardIcon(icon));
        b->setToolTip(tip);
        b->setAutoRaise(true);
        connect(b, &QToolButton::clicked, this, slot);
        return b;
    };
    auto* first = makeButton(QStyle::SP_MediaSkipBackward, tr("First (Home)"), &PassStepperWidget::stepFirst);
    auto* previous = makeButton(QStyle::SP_MediaSeekBackward, tr("Previous pass (Up)"), &PassStepperWidget::stepPrevious);
    m_play = new QToolButton(this);
    m_play->setCheckable(true);
    m_play->setAutoRaise(true);
    m_play->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
    m_play->setToolTip(tr("Play / pause"));
    m_play->setObjectName(QStringLiteral("playButton"));
    auto* next = makeButton(QStyle::SP_MediaSeekForward, tr("Next pass (Down)"), &PassStepperWidget::stepNext);
    auto* last = makeButton(QStyle::SP_MediaSkipForward, tr("Last (End)"), &PassStepperWidget::stepLast);
    m_hide = new QCheckBox(tr("Hide unchanged"), this);
    m_hide->setObjectName(QStringLiteral("hideUnchanged"));

    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w : {static_cast<QWidget*>(first), static_cast<QWidget*>(previous),
                       static_cast<QWidget*>(m_play), static_cast<QWidget*>(next),
                       static_cast<QWidget*>(last)})
        controls->addWidget(w);
    controls->addStretch(1);
    controls->addWidget(m_hide);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(controls);
    layout->addWidget(m_view, 1);

    m_timer = new QTimer(this);
    m_timer->setInterval(600);
    connect(m_timer, &QTimer::timeout, this, &PassStepperWidget::playTick);
    connect(m_play, &QToolButton::toggled, this, &PassStepperWidget::setPlaying);
    connect(m_hide, &QCheckBox::toggled, this, &PassStepperWidget::setHideUnchanged);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (m_syncing || !current.isValid()) return;
                request(m_proxy->mapToSource(current).row());
            });
    m_view->installEventFilter(this);
    connect(m_view, &QTableView::customContextMenuRequested, this, &PassStepperWidget::showContextMenu);
    connect(m_model, &PassListModel::passEnabledChangeRequested, this,
            &PassStepperWidget::passEnabledRequested);
}

bool PassStepperWidget::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_view && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Home) return stepFirst(), true;
        if (key == Qt::Key_End) return stepLast(), true;
        if (key == Qt::Key_Space) return setPlaying(!isPlaying()), true;
    }
    return QWidget::eventFilter(watched, event);
}

bool PassStepperWidget::isPlaying() const { return m_timer->isActive(); }

int PassStepperWidget::currentIndex() const { return m_state ? m_state->current : -1; }

void PassStepperWidget::setState(DocumentStatePtr state) {
    m_state = state;
    m_syncing = true;  // model and filter updates move the view's current row
    m_model->setState(std::move(state));
    m_proxy->refresh();
    // Wide enough for the index and the longest pass name without scrolling.
    m_view->resizeColumnsToContents();
    const int wanted = m_view->horizontalHeader()->sectionSize(PassListModel::kIndex) +
                       m_view->horizontalHeader()->sectionSize(PassListModel::kPass) +
                       m_view->horizontalHeader()->sectionSize(PassListModel::kChanged) +
                       m_view->verticalScrollBar()->sizeHint().width() + 2 * m_view->frameWidth();
    m_view->setMinimumWidth(std::min(wanted, 480));
    m_syncing = false;
    // The state answers the last request (the worker handles them in order;
    // a re-run or a stop may land elsewhere than asked).
    m_requested = -1;
    syncCurrentRow();
}

void PassStepperWidget::syncCurrentRow() {
    if (!m_state) return;
    const QModelIndex source = m_model->index(m_state->current, PassListModel::kPass);
    const QModelIndex proxyIndex = m_proxy->mapFromSource(source);
    if (!proxyIndex.isValid()) return;
    m_syncing = true;
    m_view->selectionModel()->setCurrentIndex(
        proxyIndex, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(proxyIndex);
    m_syncing = false;
}

void PassStepperWidget::setHideUnchanged(bool hide) {
    if (m_hide->isChecked() != hide) m_hide->setChecked(hide);
    m_proxy->setHideUnchanged(hide);
    syncCurrentRow();
}

int PassStepperWidget::visibleNeighbour(int delta) const {
    if (!m_state) return -1;
    const QModelIndex proxyIndex = m_proxy->mapFromSource(m_model->index(m_state->current, 0));
    if (!proxyIndex.isValid()) return -1;
    const int row = std::clamp(proxyIndex.row() + delta, 0, m_proxy->rowCount() - 1);
    return m_proxy->mapToSource(m_proxy->index(row, 0)).row();
}

void PassStepperWidget::request(int snapshotIndex) {
    if (!m_state || snapshotIndex < 0 || snapshotIndex == m_state->current) return;
    m_requested = snapshotIndex;
    emit stepRequested(snapshotIndex);
}

void PassStepperWidget::stepNext() { request(visibleNeighbour(+1)); }
void PassStepperWidget::stepPrevious() { request(visibleNeighbour(-1)); }
void PassStepperWidget::stepFirst() { request(0); }
void PassStepperWidget::stepLast() {
    if (m_proxy->rowCount() > 0) request(m_proxy->mapToSource(m_proxy->index(m_proxy->rowCount() - 1, 0)).row());
}

void PassStepperWidget::setPlaying(bool playing) {
    if (m_play->isChecked() != playing) m_play->setChecked(playing);
    m_play->setIcon(style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    if (playing) m_timer->start();
    else m_timer->stop();
}

void PassStepperWidget::setPlayInterval(int milliseconds) { m_timer->setInterval(milliseconds); }

void PassStepperWidget::playTick() {
    if (!m_state || m_requested >= 0) return;  // the last step has not arrived yet
    const int next = visibleNeighbour(+1);
    if (next < 0 || next == m_state->current) {
        setPlaying(false);
        return;
    }
    request(next);
}

QMenu* PassStepperWidget::createContextMenu(int row, QWidget* parent) {
    auto* menu = new QMenu(parent);
    if (!m_state || row < 0 || row >= m_model->rowCount()) return menu;
    if (row > 0 && !m_state->externalTimeline) {
        const int pass = row - 1;
        const bool enabled = m_model->index(row, 0).data(PassListModel::kPassEnabledRole).toBool();
        menu->addAction(tr("Stop after this pass"), this, [this, pass] { emit stopAfterRequested(pass); });
        menu->addAction(enabled ? tr("Disable pass") : tr("Enable pass"), this,
                        [this, pass, enabled] { emit passEnabledRequested(pass, !enabled); });
    }
    if (m_state->stopAfter >= 0)
        menu->addAction(tr("Run to the end"), this, [this] { emit stopAfterRequested(-1); });
    menu->addAction(tr("Show this snapshot"), this, [this, row] { request(row); });
    return menu;
}

void PassStepperWidget::showContextMenu(const QPoint& position) {
    const QModelIndex proxyIndex = m_view->indexAt(position);
    if (!m_state || !proxyIndex.isValid()) return;
    QMenu* menu = createContextMenu(m_proxy->mapToSource(proxyIndex).row(), this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(m_view->viewport()->mapToGlobal(position));
}

}  // namespace hloscope
