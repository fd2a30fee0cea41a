// The speedup/memory calculator of the estimator panel, without Qt:
//   optimized time   = baseline time / speedup factor
//   optimized memory = baseline memory / memory reduction factor
//   savings          = baseline - optimized (absolute) and 100 * savings / baseline (%)
// Every input arrives as the text the user typed; each field is checked on
// its own and a bad one (empty, not a number, not finite, zero, negative)
// gets a message naming the field, so results are never NaN or infinite.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hloscope {

enum class TimeUnit { kMilliseconds, kSeconds };
enum class MemoryUnit { kMegabytes, kGigabytes };

std::string_view timeUnitName(TimeUnit unit);      // "ms", "s"
std::string_view memoryUnitName(MemoryUnit unit);  // "MB", "GB"

struct CalculatorInput {
    std::string baselineTime;     // in timeUnit
    std::string baselineMemory;   // in memoryUnit
    std::string speedup;          // factor, > 0
    std::string memoryReduction;  // factor, > 0
    TimeUnit timeUnit = TimeUnit::kMilliseconds;
    MemoryUnit memoryUnit = MemoryUnit::kMegabytes;
};

struct CalculatorResult {
    // One message per bad field (empty when the field is fine).
    std::string baselineTimeError;
    std::string baselineMemoryError;
    std::string speedupError;
    std::string memoryReductionError;
    std::string resultError;  // the inputs are fine but a result is not representable

    // In the input's units; meaningful only when ok().
    double optimizedTime = 0;
    double timeSaved = 0;
    double timeSavedPercent = 0;
    double optimizedMemory = 0;
    double memorySaved = 0;
    double memorySavedPercent = 0;

    bool ok() const {
        return baselineTimeError.empty() && baselineMemoryError.empty() && speedupError.empty() &&
               memoryReductionError.empty() && resultError.empty();
    }
    // Every message, one per line.
    std::string errors() const;
};

// Parses one positive, finite number; on failure returns nullopt and sets
// `error` to a message starting with `field` ("speedup factor is empty").
std::optional<double> parsePositive(std::string_view text, std::string_view field, std::string* error);

CalculatorResult calculate(const CalculatorInput& input);

// Unit conversions the panel uses to fill the form from the model.
double secondsToUnit(double seconds, TimeUnit unit);
double bytesToUnit(double bytes, MemoryUnit unit);  // MB = 1e6 bytes, GB = 1e9 bytes

}  // namespace hloscope
