// How the panels write a time: "1.2 ms", "35 µs", "1.5 h", "-" for a negative one
// (no model); core/support/human_format.h's formatDuration. One format across the
// fusion table, the inspector, the execution results and the estimator.
#pragma once

#include <QString>

namespace hloscope {

QString secondsText(double seconds);

}  // namespace hloscope
