#include "app/cli_util.h"

#include <cstdio>

namespace hloscope::cli {

int usageError(const std::string& message) {
    std::fprintf(stderr, "hloscope-cli: %s\nRun 'hloscope-cli --help' for usage.\n",
                 message.c_str());
    return kExitUsage;
}

std::string displayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string formatError(const std::string& file, const Status& status) {
    if (status.location() && status.location()->isValid()) {
        SourceLocation loc = *status.location();
        if (loc.file.empty()) loc.file = file;
        return loc.toString() + ": error: " + status.message();
    }
    return file + ": error: " + status.message();
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace hloscope::cli
