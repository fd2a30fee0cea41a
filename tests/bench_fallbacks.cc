// bench_fallbacks [--fused-only] FILE...: what the CPU backend leaves to the interpreter. Each
// module is prepared unfused and fused (only fused with --fused-only) for the cpu target (compiler/runtime/execution_modes.h) and
// compiled by the CPU backend without running it; prints, per file and mode, the kernel count,
// the compile time and every interpreter fallback ("%name: why"), then one line per reason
// with the files it occurs in. docs/performance.md keeps the table over the examples and the
// corpus models.
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/backends/cpu/cpu_executable.h"
#include "compiler/runtime/execution_modes.h"
#include "core/io/module_io.h"

using namespace hloscope;

int main(int argc, char** argv) {
    int first = 1;
    std::vector<ExecutionMode> modes = {ExecutionMode::kUnfused, ExecutionMode::kFused};
    if (argc > 1 && std::string(argv[1]) == "--fused-only") {
        modes = {ExecutionMode::kFused};
        first = 2;
    }
    if (argc <= first) {
        std::fprintf(stderr, "usage: bench_fallbacks [--fused-only] FILE...\n");
        return 2;
    }
    std::map<std::string, std::set<std::string>> filesByReason;
    int failed = 0;
    for (int a = first; a < argc; ++a) {
        const std::string file = argv[a];
        std::string name = file.substr(file.find_last_of('/') + 1);
        for (ExecutionMode mode : modes) {
            auto loaded = loadModuleFromFile(file);
            if (!loaded.isOk()) {
                std::printf("%s: %s\n", name.c_str(), loaded.status().toString().c_str());
                ++failed;
                break;
            }
            auto prepared = prepareForMode(std::move(*loaded), "cpu", mode);
            if (!prepared.isOk()) {
                std::printf("%s %s: %s\n", name.c_str(), executionModeName(mode).data(),
                            prepared.status().toString().c_str());
                ++failed;
                continue;
            }
            const auto start = std::chrono::steady_clock::now();
            auto executable = CpuExecutable::compile(std::move(*prepared));
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (!executable.isOk()) {
                std::printf("%s %s: %s\n", name.c_str(), executionModeName(mode).data(),
                            executable.status().toString().c_str());
                ++failed;
                continue;
            }
            const std::vector<std::string>& fallbacks = (*executable)->fallbacks();
            std::printf("%s %s: %lld kernels, compiled in %.2f s, %zu fallbacks\n", name.c_str(),
                        executionModeName(mode).data(), static_cast<long long>((*executable)->kernelCount()), seconds,
                        fallbacks.size());
            for (const std::string& fallback : fallbacks) {
                std::printf("    %s\n", fallback.c_str());
                const size_t colon = fallback.find(": ");
                filesByReason[colon == std::string::npos ? fallback : fallback.substr(colon + 2)].insert(name);
            }
        }
    }
    std::printf("\nreasons (files):\n");
    for (const auto& [reason, files] : filesByReason) {
        std::string list;
        for (const std::string& f : files) list += (list.empty() ? "" : ", ") + f;
        std::printf("  %s (%zu: %s)\n", reason.c_str(), files.size(), list.c_str());
    }
    return failed == 0 ? 0 : 1;
}
