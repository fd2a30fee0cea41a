// Loading a module from a file or text, choosing the format by content
// (HLO text, JSON or StableHLO).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

enum class ModuleFormat { kHloText, kJson, kStableHlo, kUnknown };
std::string_view moduleFormatName(ModuleFormat format);

// Looks at the first non-blank, non-comment characters.
ModuleFormat detectModuleFormat(std::string_view text);

// Reads a whole file ("-" reads standard input).
StatusOr<std::string> readFileToString(const std::string& path);

// Parses `text` (named `fileName` in errors) in the detected format. An HLO
// text holding several `// -----` modules yields several modules.
StatusOr<std::vector<std::unique_ptr<HloModule>>> loadModules(std::string_view text,
                                                              const std::string& fileName);
// Exactly one module expected.
StatusOr<std::unique_ptr<HloModule>> loadModule(std::string_view text,
                                                const std::string& fileName);
StatusOr<std::unique_ptr<HloModule>> loadModuleFromFile(const std::string& path);

// Checks that printing `module` as canonical HLO text, parsing it back and
// printing again gives the same text and a structurally equal module. The
// error names the first difference (`fileName` labels the printed text).
Status checkRoundTrip(const HloModule& module, const std::string& fileName);

}  // namespace hloscope
