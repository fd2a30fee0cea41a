#include "compiler/estimator/calculator.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <system_error>

namespace hloscope {

std::string_view timeUnitName(TimeUnit unit) {
    return unit == TimeUnit::kSeconds ? "s" : "ms";
}

std::string_view memoryUnitName(MemoryUnit unit) {
    return unit == MemoryUnit::kGigabytes ? "GB" : "MB";
}

std::string CalculatorResult::errors() const {
    std::string out;
    for (const std::string* e :
         {&baselineTimeError, &baselineMemoryError, &speedupError, &memoryReductionError, &resultError})
        if (!e->empty()) out += (out.empty() ? "" : "\n") + *e;
    return out;
}

std::optional<double> parsePositive(std::string_view text, std::string_view field, std::string* error) {
    auto fail = [&](std::string message) -> std::optional<double> {
        if (error) *error = std::string(field) + " " + message;
        return std::nullopt;
    };
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    if (text.empty()) return fail("is empty: enter a number greater than zero");
    std::string_view digits = text;
    if (digits.front() == '+') digits.remove_prefix(1);
    double value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value,
                                           std::chars_format::general);
    if (ec == std::errc::result_out_of_range)
        return fail("'" + std::string(text) + "' is out of range");
    if (ec != std::errc() || end != digits.data() + digits.size())
        return fail("'" + std::string(text) + "' is not a number");
    if (!std::isfinite(value)) return fail("'" + std::string(text) + "' is not a finite number");
    if (value == 0) return fail("must be greater than zero (got 0)");
    if (value < 0) return fail("must be positive (got " + std::string(text) + ")");
    if (error) error->clear();
    return value;
}

CalculatorResult calculate(const CalculatorInput& input) {
    CalculatorResult result;
    const std::string timeField = "baseline time (" + std::string(timeUnitName(input.timeUnit)) + ")";
    const std::string memoryField =
        "baseline memory (" + std::string(memoryUnitName(input.memoryUnit)) + ")";
    const auto time = parsePositive(input.baselineTime, timeField, &result.baselineTimeError);
    const auto memory = parsePositive(input.baselineMemory, memoryField, &result.baselineMemoryError);
    const auto speedup = parsePositive(input.speedup, "speedup factor", &result.speedupError);
    const auto reduction =
        parsePositive(input.memoryReduction, "memory reduction factor", &result.memoryReductionError);
    if (!time || !memory || !speedup || !reduction) return result;
    result.optimizedTime = *time / *speedup;
    result.timeSaved = *time - result.optimizedTime;
    result.timeSavedPercent = 100.0 * result.timeSaved / *time;
    result.optimizedMemory = *memory / *reduction;
    result.memorySaved = *memory - result.optimizedMemory;
    result.memorySavedPercent = 100.0 * result.memorySaved / *memory;
    for (double v : {result.optimizedTime, result.timeSaved, result.timeSavedPercent,
                     result.optimizedMemory, result.memorySaved, result.memorySavedPercent})
        if (!std::isfinite(v)) {
            result.resultError =
                "the factors are too small for these baselines: the optimized values would not be "
                "finite";
            break;
        }
    return result;
}

double secondsToUnit(double seconds, TimeUnit unit) {
    return unit == TimeUnit::kSeconds ? seconds : seconds * 1e3;
}

double bytesToUnit(double bytes, MemoryUnit unit) {
    return unit == MemoryUnit::kGigabytes ? bytes / 1e9 : bytes / 1e6;
}

}  // namespace hloscope
