// Helpers shared by the simplification passes: side effects that look
// through called computations, dead-computation removal, and keeping each
// fusion computation's back pointer (fusionInstruction()) on a live fusion.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope::passes {

// XLA's notion of side effects: an instruction has one if hasSideEffect()
// says so or any computation it calls (transitively) contains one. Results
// are memoized per computation; rebuild the analysis after changing which
// computations instructions call.
class SideEffectAnalysis {
public:
    bool hasSideEffect(const HloInstruction* instruction);
    bool hasSideEffect(const HloComputation* computation);

private:
    std::unordered_map<const HloComputation*, bool> m_computations;
};

// Removes computations that nothing outside the set calls (HloModule::removeComputations:
// one scan of the module for any number of them).
Status removeComputations(HloModule& module, const std::vector<HloComputation*>& dead);

// After fusion instructions were removed or cloned: points every fusion
// computation's fusionInstruction() at a live fusion that calls it (or
// nullptr when none does). Linear in the module.
void repointFusionComputations(HloModule& module);

// Computations of `module` that no instruction of a computation reachable
// from the entry calls (the entry itself is always reachable).
std::vector<HloComputation*> unreachableComputations(const HloModule& module);

// Clones `body`'s instructions (post order, parameters excepted) into `into`,
// parameter i standing for operands[i], the way an inliner expands a call or a
// fusion in place. Returns each of body's instructions' clone (a parameter's
// entry is its operand); `added`, when given, receives the new instructions
// in order. Rewiring the replaced instruction's uses is the caller's.
std::unordered_map<const HloInstruction*, HloInstruction*> cloneBodyInto(
    HloModule& module, HloComputation& into, const HloComputation& body,
    const std::vector<HloInstruction*>& operands, std::vector<HloInstruction*>* added = nullptr);

// Keeps the order of the computations in `existing`; each other computation
// (one an expander added) comes right before the first computation that calls
// it, so that the module prints callees first.
Status placeNewComputations(HloModule& module,
                            const std::unordered_set<const HloComputation*>& existing);

// Every computation of `module`, callees before callers (post order over
// the call graph).
std::vector<HloComputation*> calleesFirst(const HloModule& module);

}  // namespace hloscope::passes
