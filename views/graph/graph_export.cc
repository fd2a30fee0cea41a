// GraphView::exportImage: the scene as a PNG (or any image format Qt writes)
// or an SVG drawing.
#include "views/graph/graph_view.h"

#include <QFileInfo>
#include <QImage>
#include <QImageWriter>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>

#include "core/ir/hlo_module.h"

namespace hloscope {

bool GraphView::exportImage(const QString& path, QString* error) {
    auto fail = [&](const QString& message) {
        if (error) *error = message;
        return false;
    };
    if (!m_scene->graph()) return fail(tr("no graph to export"));
    const QRectF source = m_scene->itemsBoundingRect().adjusted(-20, -20, 20, 20);
    if (source.isEmpty()) return fail(tr("the graph is empty"));
    const QString suffix = QFileInfo(path).suffix().toLower();
    // Written through QSaveFile: a failed or interrupted export leaves the previous file whole
    // (flush() before commit(): Qt 6.4's commit misses an error in its own final flush).
    QSaveFile file(path);
    if (suffix == QLatin1String("svg")) {
        if (!file.open(QIODevice::WriteOnly))
            return fail(tr("cannot write %1: %2").arg(path, file.errorString()));
        QSvgGenerator generator;
        generator.setOutputDevice(&file);
        generator.setSize(source.size().toSize());
        generator.setViewBox(QRectF(QPointF(0, 0), source.size()));
        generator.setTitle(QString::fromStdString(m_module ? m_module->name() : std::string()));
        generator.setDescription(tr("hloscope graph"));
        QPainter painter;
        if (!painter.begin(&generator)) return fail(tr("cannot write %1").arg(path));
        m_scene->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
        painter.end();
        if (file.size() <= 0 || !file.flush() || !file.commit())
            return fail(tr("cannot write %1: %2").arg(path, file.errorString()));
        return true;
    }
    const QByteArray format = suffix.isEmpty() ? QByteArray("png") : suffix.toLatin1();
    if (!QImageWriter::supportedImageFormats().contains(format))
        return fail(tr("unsupported image format '%1' (use .png or .svg)").arg(suffix));
    // Keep the image within 16384 px a side and 128 Mpixel.
    double scale = 2.0;
    scale = std::min(scale, 16384.0 / source.width());
    scale = std::min(scale, 16384.0 / source.height());
    scale = std::min(scale, std::sqrt(128e6 / (source.width() * source.height())));
    QImage image((source.size() * scale).toSize().expandedTo(QSize(1, 1)), QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) return fail(tr("not enough memory for a %1×%2 image").arg(image.width()).arg(image.height()));
    image.fill(palette().color(QPalette::Base));
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        m_scene->render(&painter, QRectF(image.rect()), source);
    }
    if (!file.open(QIODevice::WriteOnly))
        return fail(tr("cannot write %1: %2").arg(path, file.errorString()));
    QImageWriter writer(&file, format);
    if (!writer.write(image)) return fail(tr("cannot write %1: %2").arg(path, writer.errorString()));
    if (!file.flush() || !file.commit())
        return fail(tr("cannot write %1: %2").arg(path, file.errorString()));
    return true;
}

}  // namespace hloscope
