#include "views/execution/timeline_view.h"

#include <QFontMetrics>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <utility>

namespace hloscope {
namespace {

constexpr int kLaneHeight = 22;
constexpr int kAxisHeight = 20;
constexpr int kLabelWidth = 150;

// A stable colour per kernel name, so a kernel's DMA, MXU and VPU work match.
QColor colourOf(const std::string& kernel) {
    const size_t hash = std::hash<std::string>{}(kernel);
    return QColor::fromHsv(static_cast<int>(hash % 360), 110, 225);
}

QString durationText(double seconds) {
    if (seconds >= 1) return QStringLiteral("%1 s").arg(seconds, 0, 'g', 4);
    if (seconds >= 1e-3) return QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'g', 4);
    if (seconds >= 1e-6) return QStringLiteral("%1 µs").arg(seconds * 1e6, 0, 'g', 4);
    return QStringLiteral("%1 ns").arg(seconds * 1e9, 0, 'g', 4);
}

// A tick step of 1, 2 or 5 times a power of ten giving about `count` ticks.
double tickStep(double span, int count) {
    const double raw = span / std::max(count, 1);
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (m * power >= raw) return m * power;
    return 10 * power;
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    setAccessibleName(tr("Timeline"));
}

QSize TimelineView::sizeHint() const {
    return {640, kAxisHeight +
                     kLaneHeight * static_cast<int>(std::max<qsizetype>(m_tracks.size(), 3)) + 8};
}

void TimelineView::setEvents(const std::vector<TimelineEvent>& events) {
    m_events.clear();
    m_tracks.clear();
    m_total = 0;
    for (const TimelineEvent& e : events)
        if (e.track == "kernels") {
            m_tracks << QStringLiteral("kernels");
            break;
        }
    for (const TimelineEvent& e : events) {
        const QString track = QString::fromStdString(e.track);
        int index = static_cast<int>(m_tracks.indexOf(track));
        if (index < 0) {
            index = static_cast<int>(m_tracks.size());
            m_tracks << track;
        }
        m_events.push_back({e, index});
        m_total = std::max(m_total, e.startSeconds + std::max(e.durationSeconds, 0.0));
    }
    // Busy time per track: the union of its intervals.
    m_busy = QVector<double>(m_tracks.size(), 0.0);
    for (int t = 0; t < m_tracks.size(); ++t) {
        std::vector<std::pair<double, double>> spans;
        for (const Item& item : m_events)
            if (item.track == t)
                spans.emplace_back(item.event.startSeconds,
                                   item.event.startSeconds + item.event.durationSeconds);
        std::sort(spans.begin(), spans.end());
        double busy = 0, end = -1;
        for (const auto& [a, b] : spans) {
            if (a >= end) {
                busy += b - a;
                end = b;
            } else if (b > end) {
                busy += b - end;
                end = b;
            }
        }
        m_busy[t] = busy;
    }
    m_selected.clear();
    fit();
    updateGeometry();
}

double TimelineView::busyFraction(const QString& track) const {
    const qsizetype index = m_tracks.indexOf(track);
    if (index < 0 || m_total <= 0) return 0;
    return m_busy[index] / m_total;
}

void TimelineView::setView(double startSeconds, double seconds) {
    const double span = m_total > 0 ? m_total : 1;
    m_viewSeconds = std::clamp(seconds, span * 1e-7, span * 1.05);
    m_viewStart = std::clamp(startSeconds, -span * 0.05, span * 1.05 - m_viewSeconds);
    update();
}

void TimelineView::fit() {
    const double span = m_total > 0 ? m_total : 1;
    m_viewSeconds = span * 1.02;
    m_viewStart = -span * 0.01;
    update();
}

void TimelineView::zoom(double factor, double anchorSeconds) {
    if (factor <= 0) return;
    const double seconds = m_viewSeconds / factor;
    const double fraction = m_viewSeconds > 0 ? (anchorSeconds - m_viewStart) / m_viewSeconds : 0.5;
    setView(anchorSeconds - fraction * seconds, seconds);
}

void TimelineView::selectKernel(const QString& kernel) {
    if (m_selected == kernel) return;
    m_selected = kernel;
    update();
}

QRectF TimelineView::plotRect() const {
    return QRectF(kLabelWidth, kAxisHeight, std::max(1, width() - kLabelWidth - 4),
                  kLaneHeight * static_cast<double>(m_tracks.size()));
}

double TimelineView::timeAt(double x) const {
    const QRectF plot = plotRect();
    return m_viewStart + (x - plot.left()) / plot.width() * m_viewSeconds;
}

double TimelineView::xAt(double seconds) const {
    const QRectF plot = plotRect();
    return plot.left() + (seconds - m_viewStart) / m_viewSeconds * plot.width();
}

QRectF TimelineView::rectOf(const Item& item) const {
    const QRectF plot = plotRect();
    const double left = xAt(item.event.startSeconds);
    const double right = xAt(item.event.startSeconds + item.event.durationSeconds);
    return QRectF(left, plot.top() + item.track * kLaneHeight + 3, std::max(right - left, 1.0),
                  kLaneHeight - 6);
}

int TimelineView::eventAt(const QPointF& position) const {
    // Last drawn wins (drawn in order); a 2-pixel slack for thin events.
    for (int i = static_cast<int>(m_events.size()) - 1; i >= 0; --i)
        if (rectOf(m_events[static_cast<size_t>(i)]).adjusted(-2, 0, 2, 0).contains(position))
            return i;
    return -1;
}

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    if (m_events.empty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(
            rect(), Qt::AlignCenter,
            tr("No timeline: run on a device that models its units (the simulated TPU)"));
        return;
    }
    const QRectF plot = plotRect();
    const QFontMetrics metrics(font());
    // Axis with 1-2-5 ticks.
    const double step = tickStep(m_viewSeconds, std::max(2, static_cast<int>(plot.width() / 90)));
    painter.setPen(palette().color(QPalette::Mid));
    for (double t = std::ceil(m_viewStart / step) * step; t <= m_viewStart + m_viewSeconds;
         t += step) {
        const double x = xAt(t);
        painter.drawLine(QPointF(x, plot.top() - 4), QPointF(x, plot.bottom()));
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QPointF(x + 2, plot.top() - 6),
                         durationText(std::fabs(t) < step * 1e-6 ? 0 : t));
        painter.setPen(palette().color(QPalette::Mid));
    }
    // Lanes with their busy fraction.
    for (int t = 0; t < m_tracks.size(); ++t) {
        const QRectF lane(0, plot.top() + t * kLaneHeight, width(), kLaneHeight);
        if (t % 2 == 1) painter.fillRect(lane, palette().alternateBase());
        painter.setPen(palette().color(QPalette::Text));
        const QString label = QStringLiteral("%1  %2%")
                                  .arg(m_tracks[t])
                                  .arg(100.0 * busyFraction(m_tracks[t]), 0, 'f', 0);
        painter.drawText(QRectF(4, lane.top(), kLabelWidth - 8, kLaneHeight),
                         Qt::AlignVCenter | Qt::AlignLeft,
                         metrics.elidedText(label, Qt::ElideMiddle, kLabelWidth - 8));
    }
    painter.setClipRect(plot.adjusted(0, 0, 0, 0));
    for (const Item& item : m_events) {
        const QRectF r = rectOf(item);
        if (r.right() < plot.left() || r.left() > plot.right()) continue;
        const bool selected =
            !m_selected.isEmpty() && QString::fromStdString(item.event.kernel) == m_selected;
        QColor fill = colourOf(item.event.kernel);
        if (!m_selected.isEmpty() && !selected) fill.setAlpha(90);
        painter.fillRect(r, fill);
        if (selected) {
            painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
            painter.drawRect(r);
        }
        if (r.width() > 40) {
            painter.setPen(Qt::black);
            painter.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
                             metrics.elidedText(QString::fromStdString(item.event.name),
                                                Qt::ElideRight, static_cast<int>(r.width()) - 6));
        }
    }
}

void TimelineView::wheelEvent(QWheelEvent* event) {
    if (m_events.empty()) return;
    const double steps = event->angleDelta().y() / 120.0;
    zoom(std::pow(1.25, steps), timeAt(event->position().x()));
    event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    m_dragging = true;
    m_moved = false;
    m_dragX = event->position().x();
    m_dragStart = m_viewStart;
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
    if (!m_dragging) return;
    const double dx = event->position().x() - m_dragX;
    if (std::fabs(dx) > 3) m_moved = true;
    if (m_moved) setView(m_dragStart - dx / plotRect().width() * m_viewSeconds, m_viewSeconds);
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    m_dragging = false;
    if (m_moved) return;
    const int index = eventAt(event->position());
    if (index < 0) return;
    const QString kernel = QString::fromStdString(timelineEvent(index).kernel);
    selectKernel(kernel);
    emit kernelActivated(kernel);
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*) { fit(); }

bool TimelineView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int index = eventAt(help->pos());
        if (index < 0) {
            QToolTip::hideText();
            e->ignore();
            return true;
        }
        const TimelineEvent& ev = timelineEvent(index);
        QToolTip::showText(
            help->globalPos(),
            tr("<b>%1</b><br>%2 on %3<br>start %4, %5")
                .arg(QString::fromStdString(ev.name).toHtmlEscaped(),
                     QString::fromStdString(ev.kernel).toHtmlEscaped(),
                     QString::fromStdString(ev.track).toHtmlEscaped(),
                     durationText(ev.startSeconds), durationText(ev.durationSeconds)),
            this);
        return true;
    }
    return QWidget::event(e);
}

}  // namespace hloscope
