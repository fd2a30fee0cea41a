#include "views/model/seconds_text.h"

namespace hloscope {

QString secondsText(double seconds) {
    if (seconds < 0) return QStringLiteral("-");
    if (seconds >= 1) return QString::number(seconds, 'g', 4) + QStringLiteral(" s");
    if (seconds >= 1e-3) return QString::number(seconds * 1e3, 'g', 4) + QStringLiteral(" ms");
    if (seconds >= 1e-6) return QString::number(seconds * 1e6, 'g', 4) + QStringLiteral(" us");
    return QString::number(seconds * 1e9, 'g', 4) + QStringLiteral(" ns");
}

}  // namespace hloscope
