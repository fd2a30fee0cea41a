// TimelineView: draws a run's per-unit busy intervals (TimelineEvent, e.g.
// the simulated TPU's DMA engines, MXU and VPU) as one lane per track over a
// time axis. The wheel zooms around the cursor (Ctrl not needed), dragging
// pans, a double click fits the whole run; hovering shows an event's name,
// kernel, start and duration; clicking an event selects its kernel
// (kernelActivated), and selectKernel highlights a kernel's events.
// Busy fractions per track are shown in the lane labels.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <vector>

#include "compiler/runtime/execution_device.h"

namespace hloscope {

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    // Replaces the events (any order); tracks keep their first-seen order,
    // with "kernels" first when present. An empty list clears the view.
    void setEvents(const std::vector<TimelineEvent>& events);
    void clear() { setEvents({}); }

    QStringList tracks() const { return m_tracks; }
    int eventCount() const { return static_cast<int>(m_events.size()); }
    double totalSeconds() const { return m_total; }
    // Fraction of [0, total] in which the track is busy (overlaps merged).
    double busyFraction(const QString& track) const;
    // Visible time window, in seconds.
    double viewStart() const { return m_viewStart; }
    double viewSeconds() const { return m_viewSeconds; }
    void setView(double startSeconds, double seconds);
    void fit();
    // Zooms by `factor` (> 1 zooms in) keeping time `anchorSeconds` in place.
    void zoom(double factor, double anchorSeconds);

    QString selectedKernel() const { return m_selected; }
    // Index into the events of the one drawn at a widget position, or -1.
    int eventAt(const QPointF& position) const;
    const TimelineEvent& timelineEvent(int index) const {
        return m_events[static_cast<size_t>(index)].event;
    }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return {240, 80}; }

public slots:
    void selectKernel(const QString& kernel);

signals:
    void kernelActivated(const QString& kernel);

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Item {
        TimelineEvent event;
        int track = 0;
    };
    QRectF plotRect() const;
    double timeAt(double x) const;
    double xAt(double seconds) const;
    QRectF rectOf(const Item& item) const;

    std::vector<Item> m_events;
    QStringList m_tracks;
    QVector<double> m_busy;  // per track
    double m_total = 0;
    double m_viewStart = 0;
    double m_viewSeconds = 1;
    QString m_selected;
    bool m_dragging = false;
    bool m_moved = false;
    double m_dragX = 0;
    double m_dragStart = 0;
};

}  // namespace hloscope
