// hloscope-cli capture: runs a JAX, TensorFlow or PyTorch/XLA program with XLA's dump flags
// set, into a fresh folder, and lists the modules it dumped.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/util.h"
#include "core/io/xla_dump.h"
#include "core/support/human_format.h"

namespace hloscope::cli {
namespace {

namespace fs = std::filesystem;

}  // namespace

int runCapture(const std::vector<std::string>& args) {
    std::string folder;
    bool passes = false;
    std::vector<std::string> command;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--") {
            command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        }
        if (arg == "--dir") {
            if (i + 1 >= args.size()) return usageError("capture: --dir needs a folder");
            folder = args[++i];
        } else if (arg == "--passes") {
            passes = true;
        } else {
            return usageError("capture: unknown option '" + arg + "' (the program goes after --)");
        }
    }
    if (command.empty()) return usageError("capture: no program: hloscope-cli capture [--dir DIR] [--passes] -- CMD...");
    std::error_code error;
    if (folder.empty()) {
        std::string pattern = (fs::temp_directory_path(error) / "hloscope-capture-XXXXXX").string();
        std::vector<char> buffer(pattern.begin(), pattern.end());
        buffer.push_back('\0');
        if (!mkdtemp(buffer.data())) {
            std::fprintf(stderr, "hloscope-cli: capture: cannot make a folder in %s: %s\n",
                         fs::temp_directory_path(error).c_str(), std::strerror(errno));
            return kExitFailed;
        }
        folder = buffer.data();
    } else if (!fs::create_directories(folder, error) && error) {
        std::fprintf(stderr, "hloscope-cli: capture: cannot make %s: %s\n", folder.c_str(), error.message().c_str());
        return kExitFailed;
    }
    folder = fs::absolute(folder, error).string();
    const char* existing = std::getenv("XLA_FLAGS");
    const std::string flags = xlaDumpFlags(existing ? existing : "", folder, passes);
    std::fprintf(stderr, "hloscope-cli: capture: XLA_FLAGS=\"%s\"\n", flags.c_str());
    std::fflush(stderr);

    const pid_t child = fork();
    if (child < 0) {
        std::fprintf(stderr, "hloscope-cli: capture: cannot start %s: %s\n", command[0].c_str(), std::strerror(errno));
        return kExitFailed;
    }
    if (child == 0) {
        setenv("XLA_FLAGS", flags.c_str(), 1);
        std::vector<char*> argv;
        for (std::string& part : command) argv.push_back(part.data());
        argv.push_back(nullptr);
        execvp(argv[0], argv.data());
        std::fprintf(stderr, "hloscope-cli: capture: cannot run %s: %s\n", command[0].c_str(), std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    const std::vector<DumpedModule> modules = listDumpedModules(folder);
    std::printf("%s\n", folder.c_str());
    for (const DumpedModule& module : modules)
        std::fprintf(stderr, "  %10s  %s\n", formatByteSize(static_cast<double>(module.bytes)).c_str(),
                     fs::path(module.path).filename().c_str());
    if (code != 0) {
        std::fprintf(stderr, "hloscope-cli: capture: %s exited with %d; %zu modules dumped\n", command[0].c_str(), code,
                     modules.size());
        return kExitFailed;
    }
    if (modules.empty()) {
        std::fprintf(stderr,
                     "hloscope-cli: capture: %s dumped no module (does it run XLA: JAX, TensorFlow with "
                     "jit_compile=True, PyTorch/XLA?)\n",
                     command[0].c_str());
        return kExitFailed;
    }
    std::fprintf(stderr, "hloscope-cli: capture: %zu modules; open the folder with: hloscope %s\n", modules.size(),
                 folder.c_str());
    return kExitOk;
}

}  // namespace hloscope::cli
