// LiveRangeChart: the buffers of a buffer assignment as horizontal bars over
// the instruction sequence (x: time step, one row per buffer, the largest
// buffers first up to a limit, coloured by kind: parameter, output,
// constant, temporary), with the live bytes over time drawn above them.
#pragma once

#include <QWidget>

#include <memory>

#include "compiler/buffers/buffer_assignment.h"
#include "core/ir/hlo_module.h"

namespace hloscope {

class LiveRangeChart : public QWidget {
    Q_OBJECT
public:
    explicit LiveRangeChart(QWidget* parent = nullptr);

    // `module` keeps the instructions the buffers point to alive.
    void setAssignment(std::shared_ptr<const BufferAssignment> assignment,
                       std::shared_ptr<const HloModule> module, const QString& title);
    void clear();
    int shownBuffers() const { return static_cast<int>(m_shown.size()); }
    void setMaxBuffers(int count) { m_maxBuffers = count; }

    QSize sizeHint() const override { return {640, 360}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::shared_ptr<const BufferAssignment> m_assignment;
    std::shared_ptr<const HloModule> m_module;
    std::vector<const LogicalBuffer*> m_shown;
    QString m_title;
    int m_maxBuffers = 40;
    int64_t m_endTime = 1;
};

}  // namespace hloscope
