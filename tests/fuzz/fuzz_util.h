// Shared by the libFuzzer targets: the input as text, and a check that
// aborts (so libFuzzer records a crash) when an invariant of a successful parse
// does not hold. Parse errors are the expected outcome for most inputs and are
// not findings; crashes, sanitizer reports, timeouts and memory blow-ups are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace hloscope::fuzz {

// Inputs larger than this are skipped: the targets look for parser and
// compiler bugs, not for how long a 1 MB module takes (the file-size limit is
// tested on its own).
inline constexpr size_t kMaxInputBytes = 64 * 1024;

inline std::string_view asText(const uint8_t* data, size_t size) {
    return std::string_view(reinterpret_cast<const char*>(data), size);
}

[[noreturn]] inline void fail(const char* what, const std::string& detail) {
    std::fprintf(stderr, "fuzz invariant failed: %s\n%s\n", what, detail.c_str());
    std::abort();
}

}  // namespace hloscope::fuzz
