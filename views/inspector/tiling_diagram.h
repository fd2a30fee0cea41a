// TilingDiagram: a small drawing of how a tiled layout (TPU T(8,128)...)
// covers the two minor-most physical dimensions of an array: the tile grid,
// the data in colour and the padding up to tile multiples hatched, with the
// logical and padded byte sizes (paddedSizeInBytes). Hidden for untiled
// layouts.
#pragma once

#include <QWidget>

#include "core/ir/shape.h"

namespace hloscope {

class TilingDiagram : public QWidget {
    Q_OBJECT
public:
    explicit TilingDiagram(QWidget* parent = nullptr);

    // Shows `shape` when it is an array with a tiled layout; returns whether
    // it does (otherwise the diagram is cleared and hidden).
    bool setShape(const Shape& shape);
    void clear();

    bool hasTiling() const { return m_valid; }
    int64_t rows() const { return m_rows; }          // second-minor physical dimension (1 for rank 1)
    int64_t columns() const { return m_columns; }    // minor-most physical dimension
    int64_t tileRows() const { return m_tileRows; }
    int64_t tileColumns() const { return m_tileColumns; }
    int64_t logicalBytes() const { return m_logicalBytes; }
    int64_t paddedBytes() const { return m_paddedBytes; }
    QString caption() const;

    QSize sizeHint() const override { return {320, 180}; }
    QSize minimumSizeHint() const override { return {160, 100}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    bool m_valid = false;
    int64_t m_rows = 0, m_columns = 0, m_tileRows = 1, m_tileColumns = 1;
    int64_t m_logicalBytes = 0, m_paddedBytes = 0;
    QString m_tiles;
};

}  // namespace hloscope
