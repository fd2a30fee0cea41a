#include "compiler/fusion/fusion_format.h"

#include <charconv>
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
    if (seconds < 0) return "n/a";
    // to_chars with a precision writes what printf's %.3g writes, without its cost (the fusion
    // passes format two figures per logged decision).
    char buffer[64];
    const bool ms = seconds >= 1e-3;
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, seconds * (ms ? 1e3 : 1e6),
                                         std::chars_format::general, 3);
    std::string out(buffer, ec == std::errc() ? end : buffer);
    out += ms ? " ms" : " us";
    return out;
}

}  // namespace hloscope::fusion
