#include "core/io/xla_dump.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace hloscope {

std::string xlaDumpFlags(const std::string& existing, const std::string& folder, bool passes) {
    std::string flags = existing.empty() ? std::string() : existing + " ";
    flags += "--xla_dump_to=" + folder + " --xla_dump_hlo_as_text";
    if (passes) flags += " --xla_dump_hlo_pass_re=.*";
    return flags;
}

std::vector<DumpedModule> listDumpedModules(const std::string& folder) {
    namespace fs = std::filesystem;
    std::vector<DumpedModule> modules;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
        if (!entry.is_regular_file(error)) continue;
        const std::string name = entry.path().filename().string();
        if (name.rfind("module_", 0) != 0) continue;
        const bool after = name.ends_with("after_optimizations.txt");
        const bool before = name.ends_with(".before_optimizations.txt");
        if (!after && !before) continue;
        // module_NNNN.NAME: the first two dot-separated parts.
        const size_t first = name.find('.');
        const size_t second = first == std::string::npos ? std::string::npos : name.find('.', first + 1);
        DumpedModule module;
        module.path = entry.path().string();
        module.id = name.substr(0, second);
        module.bytes = static_cast<int64_t>(entry.file_size(error));
        module.optimized = after;
        modules.push_back(std::move(module));
    }
    std::sort(modules.begin(), modules.end(), [](const DumpedModule& a, const DumpedModule& b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.path < b.path;
    });
    return modules;
}

}  // namespace hloscope
