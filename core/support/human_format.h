// Figures written for people: "1.2 h", "3.4 s", "120 µs", "1.5 GiB", "41,881".
// Three significant digits, never an exponent; the unit moves up before a value
// would print as 1000 (as 1024 for binary sizes).
#pragma once

#include <cstdint>
#include <string>

namespace hloscope {

// A duration: ns, µs, ms, s, min, h. "-" for a negative one (none known).
std::string formatDuration(double seconds);
// A size in binary units: B, KiB, MiB, GiB, TiB. "-" for a negative one.
std::string formatByteSize(double bytes);
// An integer with thousands separators: "41,881".
std::string formatCount(int64_t count);

}  // namespace hloscope
