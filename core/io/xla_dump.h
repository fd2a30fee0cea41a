// XLA dump folders as a capture makes them: the XLA_FLAGS that make a program
// dump its modules as text, and the module files a dump folder holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hloscope {

// XLA_FLAGS for a program to dump its modules into `folder` as text: `existing` (the flags the
// caller had set) first, then --xla_dump_to=FOLDER --xla_dump_hlo_as_text, and with `passes`
// --xla_dump_hlo_pass_re=.* (a file after every pass).
std::string xlaDumpFlags(const std::string& existing, const std::string& folder, bool passes);

// A module file of a dump folder.
struct DumpedModule {
    std::string path;
    std::string id;  // "module_0001.jit_f": the prefix its files share
    int64_t bytes = 0;
    bool optimized = false;  // *after_optimizations*
};

// The module files of a dump folder (module_NNNN.NAME.before_optimizations.txt and
// ...after_optimizations.txt; per-pass files left out), largest first.
std::vector<DumpedModule> listDumpedModules(const std::string& folder);

}  // namespace hloscope
