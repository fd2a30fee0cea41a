// HLO text printer. The canonical form is XLA's long form: `%` names,
// operand shapes, layouts, typed attributes in a fixed order, then verbatim
// attributes in their original order, then metadata.
//
// print -> parse -> print is a fixed point.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

// Prints one module's canonical text again and again (printModule with
// HloPrintOptions::canonical()), reusing what has not changed since it was printed
// (HloInstruction::changeStamp): the whole text of a computation that did not change
// and calls no computation that changed, else the line of every instruction that, like
// its operands, control predecessors and called computations, has not changed. After
// a pass that touched a few hundred of 40,000 instructions it costs a copy of the
// text. It keeps what it printed of the module it printed last and starts over for
// another module, known by its address: a cache must not outlive its module (the
// pipeline runner owns one per module). Async ops, and computations holding one, are
// always printed again. A stamp that a mutator failed to bump shows as stale text,
// which the pipeline runner's mutation audit compares with a full print.
class HloTextCache {
public:
    HloTextCache();
    ~HloTextCache();
    HloTextCache(const HloTextCache&) = delete;
    HloTextCache& operator=(const HloTextCache&) = delete;

    std::string print(const HloModule& module);
    // Lines reused and printed by the last print().
    int64_t reusedLines() const;
    int64_t printedLines() const;
    // Computations whose whole text the last print() reused.
    int64_t reusedComputations() const;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

// Text of the typed attributes as they appear in HLO (for JSON and views).
std::string windowToString(const Window& window);
std::string paddingConfigToString(const std::vector<PaddingDimension>& padding);
std::string sliceToString(const std::vector<SliceDimension>& slice);  // "{[0:2], [1:3:2]}"

}  // namespace hloscope
