// Helpers shared by the hloscope-cli subcommands.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {
class HloComputation;
}

namespace hloscope::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// Prints "hloscope-cli: MESSAGE" and a pointer to --help; returns kExitUsage.
int usageError(const std::string& message);

// "<stdin>" for "-", else the path.
std::string displayName(const std::string& path);

// "file:line:col: error: message", or "file: error: message" when the status
// carries no position.
std::string formatError(const std::string& file, const Status& status);

double secondsSince(std::chrono::steady_clock::time_point start);

// Writes `text` to `path` atomically (core/atomic_file: a temporary file,
// fsync, rename), creating its folder when missing; an I/O error naming the
// path and the reason on failure, the previous file intact.
Status writeTextFile(const std::string& path, const std::string& text);

// Arguments for the entry computation: "random" (seeded), "zeros", or a JSON
// file of literals (one per parameter, shapes checked; errors name the file).
StatusOr<std::vector<Literal>> makeArguments(const HloComputation& entry, const std::string& inputs, uint64_t seed);

}  // namespace hloscope::cli
