// The explicit, sorted registry of every pass hloscope knows, shared by the
// CLI (`hloscope-cli opt --passes ...`, `--help`) and the GUI's pass list.
// No static initialisers: pass_registry.cc lists the passes by hand.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

struct PassInfo {
    std::string_view name;
    std::string_view description;  // one paragraph
    // Creates a configured instance; rejects unknown or malformed options.
    StatusOr<std::unique_ptr<HloPass>> (*create)(const PassOptions& options);
};

// Sorted by name.
const std::vector<PassInfo>& passRegistry();
const PassInfo* findPass(std::string_view name);
// Creates a pass by name; an unknown name is an error listing the known ones.
StatusOr<std::unique_ptr<HloPass>> createPass(std::string_view name, const PassOptions& options);

}  // namespace hloscope
