#include "views/inspector/tiling_diagram.h"

#include <QPainter>

#include <algorithm>

#include "compiler/layout/tpu_tiling.h"

namespace hloscope {

TilingDiagram::TilingDiagram(QWidget* parent) : QWidget(parent) {
    setVisible(false);
}

void TilingDiagram::clear() {
    m_valid = false;
    setVisible(false);
    update();
}

bool TilingDiagram::setShape(const Shape& shape) {
    if (!shape.isArray() || !shape.hasLayout() || shape.layout().tiles().empty() || shape.rank() == 0) {
        clear();
        return false;
    }
    const Layout& layout = shape.layout();
    const std::vector<int64_t>& m2m = layout.minorToMajor();
    if (static_cast<int64_t>(m2m.size()) != shape.rank()) {
        clear();
        return false;
    }
    m_columns = shape.dimensions(m2m[0]);
    m_rows = shape.rank() >= 2 ? shape.dimensions(m2m[1]) : 1;
    const Tile& first = layout.tiles().front();
    const auto& t = first.dimensions;
    auto tileOf = [](int64_t size, int64_t extent) {
        return size == Tile::kCombineDimension || size <= 0 ? std::max<int64_t>(extent, 1) : size;
    };
    m_tileColumns = t.empty() ? 1 : tileOf(t.back(), m_columns);
    m_tileRows = t.size() >= 2 ? tileOf(t[t.size() - 2], m_rows) : 1;
    m_logicalBytes = logicalSizeInBytes(shape);
    m_paddedBytes = paddedSizeInBytes(shape);
    m_tiles.clear();
    for (const Tile& tile : layout.tiles()) m_tiles += QStringLiteral("T") + QString::fromStdString(tile.toString());
    m_valid = true;
    setVisible(true);
    update();
    return true;
}

QString TilingDiagram::caption() const {
    if (!m_valid) return {};
    const double padding =
        m_paddedBytes > 0 ? 100.0 * static_cast<double>(m_paddedBytes - m_logicalBytes) / static_cast<double>(m_paddedBytes) : 0;
    return tr("%1 x %2 (minor dims) in %3 x %4 tiles %5: %6 B logical, %7 B padded (%8% padding)")
        .arg(m_rows)
        .arg(m_columns)
        .arg(m_tileRows)
        .arg(m_tileColumns)
        .arg(m_tiles)
        .arg(m_logicalBytes)
        .arg(m_paddedBytes)
        .arg(padding, 0, 'f', 1);
}

void TilingDiagram::paintEvent(QPaintEvent*) {
    if (!m_valid) return;
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, false);
    const QRectF area = rect().adjusted(4, 4, -4, -24);
    const int64_t tilesDown = (m_rows + m_tileRows - 1) / m_tileRows;
    const int64_t tilesAcross = (m_columns + m_tileColumns - 1) / m_tileColumns;
    // Draw at most 12 x 12 tiles; the rest is summarised by the caption.
    const int64_t shownDown = std::min<int64_t>(tilesDown, 12);
    const int64_t shownAcross = std::min<int64_t>(tilesAcross, 12);
    const double cellW = area.width() / static_cast<double>(shownAcross);
    const double cellH = area.height() / static_cast<double>(shownDown);
    const QColor data(80, 140, 220), pad(235, 190, 120);
    for (int64_t r = 0; r < shownDown; ++r)
        for (int64_t c = 0; c < shownAcross; ++c) {
            const QRectF cell(area.left() + static_cast<double>(c) * cellW,
                              area.top() + static_cast<double>(r) * cellH, cellW, cellH);
            // Fraction of this tile holding data (tiles on the last row/column may be partial).
            const int64_t tileRow = (r == shownDown - 1) ? tilesDown - 1 : r;
            const int64_t tileCol = (c == shownAcross - 1) ? tilesAcross - 1 : c;
            const double fillRows = static_cast<double>(std::min(m_tileRows, m_rows - tileRow * m_tileRows)) /
                                    static_cast<double>(m_tileRows);
            const double fillCols =
                static_cast<double>(std::min(m_tileColumns, m_columns - tileCol * m_tileColumns)) /
                static_cast<double>(m_tileColumns);
            painter.fillRect(cell, QBrush(pad, Qt::BDiagPattern));
            painter.fillRect(QRectF(cell.topLeft(), QSizeF(cell.width() * fillCols, cell.height() * fillRows)), data);
            painter.setPen(QPen(palette().color(QPalette::WindowText), 1));
            painter.drawRect(cell);
        }
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRectF(4, rect().bottom() - 20, rect().width() - 8, 18), Qt::AlignLeft | Qt::AlignVCenter,
                     tr("%1 x %2 tiles of %3 x %4%5; hatched: padding")
                         .arg(tilesDown)
                         .arg(tilesAcross)
                         .arg(m_tileRows)
                         .arg(m_tileColumns)
                         .arg(tilesDown > 12 || tilesAcross > 12 ? tr(" (first/last shown)") : QString()));
}

}  // namespace hloscope
