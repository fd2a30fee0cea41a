// HLO text parser. Accepts everything XLA dumps: the long form with operand
// shapes, `%` names without them, the short form without `%`,
// `/*index=N*/` and `//` comments, `#` comment lines, modules without a
// `HloModule` header, `ENTRY` or not (the last computation is then the
// entry), `// -----` split files (parseHloModules), the stack-frame tables of
// newer JAX dumps, and the async `op-start`/`op-update`/`op-done` sugar.
//
// Errors are Status(kInvalidArgument) with a SourceLocation (file, 1-based
// line and column) and a message naming what was expected. No input, however
// broken, crashes or hangs the parser (recursion depth and sizes are bounded).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

struct HloParseOptions {
    std::string fileName = "<input>";  // used in error locations
    // Give every array shape without a layout the descending layout (XLA's
    // parser does this); off keeps the text's absence of a layout.
    bool setDefaultLayouts = false;
};

// Parses one module. A text holding `// -----` splits is an error here.
StatusOr<std::unique_ptr<HloModule>> parseHloModule(std::string_view text,
                                                     const HloParseOptions& options = {});

// Parses a text that may hold several modules separated by `// -----` lines.
StatusOr<std::vector<std::unique_ptr<HloModule>>> parseHloModules(
    std::string_view text, const HloParseOptions& options = {});

// Parses a shape such as "f32[2,3]{1,0}" or "(f32[], s32[<=4]{0})".
StatusOr<Shape> parseShape(std::string_view text);

// Parses the value of a typed attribute or a whole instruction attribute
// list fragment, e.g. parseWindow("size=3x3 stride=2x2"). Used by JSON
// import so that attribute text has one grammar.
StatusOr<Window> parseWindow(std::string_view text);
StatusOr<ConvolutionDimensionNumbers> parseConvolutionDimensionNumbers(std::string_view text);
StatusOr<std::vector<PaddingDimension>> parsePaddingConfig(std::string_view text);

}  // namespace hloscope
