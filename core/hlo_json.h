// JSON export and import of a whole module (schema in README.md, "JSON
// format"). Import validates and its errors name the JSON path, e.g.
// `model.json: $.computations[2].instructions[5].shape: expected ...`.
// Import -> export is a fixed point.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/hlo_module.h"
#include "core/status.h"

namespace hloscope {

std::string moduleToJson(const HloModule& module, int indent = 2);
StatusOr<std::unique_ptr<HloModule>> moduleFromJson(std::string_view text,
                                                    const std::string& fileName = "<input>");

}  // namespace hloscope
