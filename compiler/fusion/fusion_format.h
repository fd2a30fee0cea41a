// Sizes and times as the fusion passes write them in decision details and
// reports.
#pragma once

#include <string>

#include "core/ir/shape.h"

namespace hloscope::fusion {

// "1.5 MB", "12.0 KB", "512 B" (decimal units).
std::string humanBytes(double bytes);
// "f32[1024,1024] (4.2 MB)"
std::string describeBytes(const Shape& shape);
// "1.25 ms", "830 us"; "n/a" for a negative time.
std::string formatSeconds(double seconds);

}  // namespace hloscope::fusion
