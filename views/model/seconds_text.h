// How the panels write a time: "1.2 ms", "35 us", "-" for a negative one (no
// model). One format across the fusion table, the inspector, the execution
// results and the estimator.
#pragma once

#include <QString>

namespace hloscope {

QString secondsText(double seconds);

}  // namespace hloscope
