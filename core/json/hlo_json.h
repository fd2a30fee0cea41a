// JSON export and import of a whole module (schema in docs/json_format.md).
// Import validates and its errors name the JSON path, e.g.
// `model.json: $.computations[2].instructions[5].shape: expected ...`.
// Import -> export is a fixed point.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

// The whole module as JSON text ending in a newline. indent >= 0: objects one
// key per line indented by `indent` spaces per level, arrays without objects
// on one line; indent < 0: everything on one compact line. Deterministic:
// equal modules give byte-identical text.
std::string moduleToJson(const HloModule& module, int indent = 2);

// Parses and validates JSON written by moduleToJson (or by hand). Errors are
// Status(kInvalidArgument) whose message starts with the JSON path and whose
// location names `fileName` (with line:col for JSON syntax errors).
StatusOr<std::unique_ptr<HloModule>> moduleFromJson(std::string_view text,
                                                    const std::string& fileName = "<input>");

}  // namespace hloscope
