#include "views/model/seconds_text.h"

#include "core/support/human_format.h"

namespace hloscope {

QString secondsText(double seconds) { return QString::fromStdString(formatDuration(seconds)); }

}  // namespace hloscope
