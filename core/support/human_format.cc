#include "core/support/human_format.h"

#include <cmath>
#include <cstdio>

namespace hloscope {
namespace {

// Three significant digits without an exponent: "4", "4.5", "12.3", "120".
std::string threeDigits(double value) {
    char buffer[32];
    if (value >= 99.95) std::snprintf(buffer, sizeof buffer, "%.0f", value);
    else if (value >= 9.995) std::snprintf(buffer, sizeof buffer, "%.1f", value);
    else std::snprintf(buffer, sizeof buffer, "%.3g", value);
    std::string text = buffer;
    // "%.1f" of 12.0 is "12.0": drop a zero fraction as %g would.
    if (const auto dot = text.find('.'); dot != std::string::npos) {
        while (text.back() == '0') text.pop_back();
        if (text.back() == '.') text.pop_back();
    }
    return text;
}

}  // namespace

std::string formatDuration(double seconds) {
    if (seconds < 0 || std::isnan(seconds)) return "-";
    if (seconds == 0) return "0 s";
    if (std::isinf(seconds)) return "inf";
    if (seconds >= 3600) return threeDigits(seconds / 3600) + " h";
    if (seconds >= 59.95) return threeDigits(seconds / 60) + " min";
    struct Unit {
        double scale;
        const char* name;
    };
    static constexpr Unit kUnits[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}, {1e-9, "ns"}};
    for (const Unit& unit : kUnits)
        if (seconds / unit.scale >= 0.9995 || unit.scale == 1e-9)
            return threeDigits(seconds / unit.scale) + " " + unit.name;
    return "0 s";
}

std::string formatByteSize(double bytes) {
    if (bytes < 0 || std::isnan(bytes)) return "-";
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int unit = 0;
    double value = bytes;
    while (value >= 1023.5 && unit + 1 < static_cast<int>(std::size(kUnits))) {
        value /= 1024;
        ++unit;
    }
    if (unit == 0) return std::to_string(static_cast<int64_t>(std::llround(value))) + " B";
    return threeDigits(value) + " " + kUnits[unit];
}

std::string formatCount(int64_t count) {
    const bool negative = count < 0;
    const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(count) : static_cast<uint64_t>(count);
    const std::string digits = std::to_string(magnitude);
    std::string result;
    const int n = static_cast<int>(digits.size());
    for (int i = 0; i < n; ++i) {
        if (i > 0 && (n - i) % 3 == 0) result += ',';
        result += digits[static_cast<size_t>(i)];
    }
    return negative ? "-" + result : result;
}

}  // namespace hloscope
