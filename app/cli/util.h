// Helpers shared by the hloscope-cli subcommands.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
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

// The command ends and the process exits next: freeing a large module's instructions one by
// one (a tenth of a second for 40k) is time the user waits for nothing. A release build leaves
// `object` to the operating system, as compilers do with their IR; a sanitizer build frees it,
// so that leak checks still see every allocation.
template <typename T>
void leaveToExit(std::unique_ptr<T> object) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    object.reset();
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
    object.reset();
#else
    static_cast<void>(object.release());
#endif
#else
    static_cast<void>(object.release());
#endif
}

}  // namespace hloscope::cli
