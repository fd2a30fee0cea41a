#include "app/cli/util.h"

#include <cstdio>
#include <filesystem>

#include "core/io/atomic_file.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/hlo_instruction.h"
#include "core/io/input_limits.h"
#include "core/io/module_io.h"

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

Status writeTextFile(const std::string& path, const std::string& text) {
    std::error_code ignored;  // a folder that cannot be made shows as the write failing
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
    return writeFileAtomically(path, text);
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

StatusOr<std::vector<Literal>> makeArguments(const HloComputation& entry, const std::string& inputs, uint64_t seed) {
    std::vector<Literal> arguments;
    // Parameters past the interpreter's budget are refused before they are made.
    int64_t bytes = 0;
    for (int64_t i = 0; i < entry.parameterCount(); ++i)
        bytes += entry.parameter(i)->shape().byteSize();
    if (bytes > limits::evaluationMemoryLimitBytes())
        return Status(StatusCode::kResourceExhausted,
                      "the entry computation " + entry.name() + "'s parameters need " +
                          std::to_string(bytes >> 20) + " MiB, more than the interpreter's " +
                          std::to_string(limits::evaluationMemoryLimitBytes() >> 20) +
                          " MiB budget (HLOSCOPE_EVAL_MEMORY_MB)");
    if (inputs == "random") return makeRandomArguments(entry, seed);
    if (inputs == "zeros") {
        for (int64_t i = 0; i < entry.parameterCount(); ++i)
            arguments.emplace_back(entry.parameter(i)->shape());
        return arguments;
    }
    HLO_ASSIGN_OR_RETURN(std::string text, readFileToString(inputs));
    HLO_ASSIGN_OR_RETURN(arguments, literalsFromJson(text, inputs));
    if (static_cast<int64_t>(arguments.size()) != entry.parameterCount())
        return Status(StatusCode::kInvalidArgument,
                      "the entry computation " + entry.name() + " takes " +
                          std::to_string(entry.parameterCount()) + " argument(s), " + inputs +
                          " holds " + std::to_string(arguments.size()),
                      SourceLocation{inputs, 0, 0});
    for (int64_t i = 0; i < entry.parameterCount(); ++i) {
        const Shape& want = entry.parameter(i)->shape();
        const Shape& got = arguments[static_cast<size_t>(i)].shape();
        if (!want.compatible(got))
            return Status(StatusCode::kInvalidArgument,
                          "argument " + std::to_string(i) + " has shape " + got.toString(false) +
                              ", parameter " + entry.parameter(i)->name() + " wants " +
                              want.toString(false),
                          SourceLocation{inputs, 0, 0});
    }
    return arguments;
}

}  // namespace hloscope::cli
