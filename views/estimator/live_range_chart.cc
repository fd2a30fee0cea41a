#include "views/estimator/live_range_chart.h"

#include <QPainter>

#include <algorithm>

namespace hloscope {

LiveRangeChart::LiveRangeChart(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(200);
}

void LiveRangeChart::clear() {
    m_assignment.reset();
    m_module.reset();
    m_shown.clear();
    update();
}

void LiveRangeChart::setAssignment(std::shared_ptr<const BufferAssignment> assignment,
                                   std::shared_ptr<const HloModule> module, const QString& title) {
    m_assignment = std::move(assignment);
    m_module = std::move(module);
    m_title = title;
    m_shown.clear();
    m_endTime = 1;
    if (m_assignment) {
        for (const LogicalBuffer& buffer : m_assignment->buffers) {
            if (buffer.sizeBytes <= 0) continue;
            m_shown.push_back(&buffer);
            m_endTime = std::max(m_endTime, buffer.lastUseTime);
        }
        if (!m_assignment->liveBytesOverTime.empty())
            m_endTime = std::max(m_endTime, m_assignment->liveBytesOverTime.back().first);
        std::stable_sort(m_shown.begin(), m_shown.end(), [](const LogicalBuffer* a, const LogicalBuffer* b) {
            return a->sizeBytes > b->sizeBytes;
        });
        if (static_cast<int>(m_shown.size()) > m_maxBuffers) m_shown.resize(static_cast<size_t>(m_maxBuffers));
        std::stable_sort(m_shown.begin(), m_shown.end(), [](const LogicalBuffer* a, const LogicalBuffer* b) {
            return a->defineTime < b->defineTime;
        });
    }
    update();
}

void LiveRangeChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    painter.setPen(palette().color(QPalette::Text));
    if (!m_assignment) {
        painter.drawText(rect(), Qt::AlignCenter, tr("No buffer assignment yet."));
        return;
    }
    const int left = 50, right = 10, top = 24, profileHeight = 50, bottom = 20;
    painter.drawText(QRect(left, 2, width() - left - right, 20), Qt::AlignLeft | Qt::AlignVCenter,
                     tr("%1: %2 largest of %3 buffers, peak %4 MB live (predicted)")
                         .arg(m_title)
                         .arg(m_shown.size())
                         .arg(m_assignment->buffers.size())
                         .arg(static_cast<double>(m_assignment->peakLiveBytes) / 1e6, 0, 'f', 3));
    const double plotWidth = std::max(10, width() - left - right);
    auto x = [&](int64_t t) { return left + plotWidth * static_cast<double>(t) / static_cast<double>(m_endTime); };
    // Live bytes over time.
    const QRectF profile(left, top, plotWidth, profileHeight);
    painter.drawRect(profile);
    if (m_assignment->peakLiveBytes > 0 && !m_assignment->liveBytesOverTime.empty()) {
        QPolygonF line;
        for (const auto& [t, bytes] : m_assignment->liveBytesOverTime)
            line << QPointF(x(t), profile.bottom() - profile.height() * static_cast<double>(bytes) /
                                                           static_cast<double>(m_assignment->peakLiveBytes));
        painter.setPen(QPen(QColor(200, 60, 60), 1.5));
        painter.drawPolyline(line);
    }
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(0, top, left - 4, profileHeight), Qt::AlignRight | Qt::AlignVCenter, tr("live"));
    // One bar per buffer.
    const double barsTop = top + profileHeight + 6;
    const double rowHeight =
        m_shown.empty() ? 0 : std::max(2.0, (height() - barsTop - bottom) / static_cast<double>(m_shown.size()));
    for (size_t i = 0; i < m_shown.size(); ++i) {
        const LogicalBuffer& b = *m_shown[i];
        QColor color(90, 140, 210);
        if (b.isEntryParameter) color = QColor(120, 180, 120);
        else if (b.isOutput) color = QColor(220, 150, 60);
        else if (b.isConstant) color = QColor(160, 160, 160);
        else if (b.isCalleeTemporary) color = QColor(170, 110, 200);
        const double y = barsTop + rowHeight * static_cast<double>(i);
        const double x0 = x(b.defineTime), x1 = std::max(x(b.lastUseTime), x0 + 2);
        painter.fillRect(QRectF(x0, y + 0.5, x1 - x0, std::max(1.0, rowHeight - 1)), color);
    }
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(left, height() - bottom, static_cast<int>(plotWidth), bottom), Qt::AlignCenter,
                     tr("instruction sequence (0..%1); green: parameters, orange: outputs, grey: constants, "
                        "blue: temporaries")
                         .arg(m_endTime));
}

}  // namespace hloscope
