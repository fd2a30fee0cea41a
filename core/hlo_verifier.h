// HloVerifier: structural and shape checks modelled on XLA's HloVerifier.
// Rejects what XLA's verifier rejects (../shared/corpus/hlo/invalid/verifier):
// wrong shapes, wrong operand counts, bad attributes, bad called
// computations, parameter numbering, root/entry layout mismatches, cycles,
// aliasing errors, etc. Every error names the instruction (and computation).
#pragma once

#include "core/hlo_module.h"
#include "core/status.h"

namespace hloscope {

struct HloVerifierOptions {
    // Require that every array shape has a layout (XLA's layout-sensitive mode).
    bool layoutSensitive = false;
    // Allow mixed precision in elementwise binary ops (XLA allows it off by default).
    bool allowMixedPrecision = false;
};

Status verifyModule(const HloModule& module, const HloVerifierOptions& options = {});

}  // namespace hloscope
