// HLO text printer. The canonical form is XLA's long form: `%` names,
// operand shapes, layouts, typed attributes in a fixed order, then verbatim
// attributes in their original order, then metadata.
//
// print -> parse -> print is a fixed point.
#pragma once

#include <string>

#include "core/ir/hlo_module.h"

namespace hloscope {

struct HloPrintOptions {
    bool printOperandShapes = true;  // "add(f32[2]{0} %a, ...)" vs "add(%a, ...)"
    bool printPercent = true;        // "%name" vs "name"
    bool printLayouts = true;
    bool printMetadata = true;
    bool printVerbatimAttributes = true;  // sharding, backend_config, ...
    bool printStackFrames = true;
    bool indexComments = true;  // "/*index=5*/" before every 5th tuple operand

    static HloPrintOptions canonical() { return {}; }
    // Short form: no operand shapes, no metadata (for the GUI).
    static HloPrintOptions compact();
};

std::string printModule(const HloModule& module, const HloPrintOptions& options = {});
std::string printComputation(const HloComputation& computation,
                             const HloPrintOptions& options = {});
// One instruction line without indentation or ROOT.
std::string printInstruction(const HloInstruction& instruction,
                             const HloPrintOptions& options = {});
void appendInstruction(std::string& out, const HloInstruction& instruction,
                       const HloPrintOptions& options);

// Text of the typed attributes as they appear in HLO (for JSON and views).
std::string windowToString(const Window& window);
std::string paddingConfigToString(const std::vector<PaddingDimension>& padding);
std::string sliceToString(const std::vector<SliceDimension>& slice);  // "{[0:2], [1:3:2]}"

}  // namespace hloscope
