#include "compiler/fusion/fusion_format.h"

#include <cstdio>

#include "compiler/cost/cost_analysis.h"

namespace hloscope::fusion {

std::string humanBytes(double bytes) {
    char buffer[64];
    if (bytes >= 1e9) std::snprintf(buffer, sizeof buffer, "%.1f GB", bytes / 1e9);
    else if (bytes >= 1e6) std::snprintf(buffer, sizeof buffer, "%.1f MB", bytes / 1e6);
    else if (bytes >= 1e3) std::snprintf(buffer, sizeof buffer, "%.1f KB", bytes / 1e3);
    else std::snprintf(buffer, sizeof buffer, "%.0f B", bytes);
    return buffer;
}

std::string describeBytes(const Shape& shape) {
    return shape.toString(false) + " (" + humanBytes(CostAnalysis::byteSize(shape)) + ")";
}

std::string formatSeconds(double seconds) {
    char buffer[64];
    if (seconds < 0) return "n/a";
    if (seconds >= 1e-3) std::snprintf(buffer, sizeof buffer, "%.3g ms", seconds * 1e3);
    else std::snprintf(buffer, sizeof buffer, "%.3g us", seconds * 1e6);
    return buffer;
}

}  // namespace hloscope::fusion
