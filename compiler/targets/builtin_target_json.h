// The shipped target descriptions (resources/targets/*.json), compiled into
// the library by a CMake step (compiler/CMakeLists.txt generates
// builtin_target_json.cc), so an installed CLI needs no resource files.
#pragma once

#include <span>
#include <string_view>

namespace hloscope {

struct BuiltinTargetJson {
    std::string_view name;  // "h100"
    std::string_view text;  // the JSON file's text
};

std::span<const BuiltinTargetJson> builtinTargetJsonTable();

}  // namespace hloscope
