// HloVerifier: structural and shape checks modelled on XLA's HloVerifier.
// Rejects what XLA's verifier rejects (../shared/corpus/hlo/invalid/verifier):
// wrong shapes, wrong operand counts, bad attributes, bad called
// computations, parameter numbering, root/entry layout mismatches, cycles,
// aliasing errors, etc. Every error names the instruction (and computation):
// "%name in computation comp: <rule violated>".
#pragma once

#include "core/ir/hlo_module.h"
#include "core/support/status.h"

namespace hloscope {

struct HloVerifierOptions {
    // XLA's layout-sensitive mode: compare layouts where XLA does (tuples,
    // get-tuple-element, calls, copy-start, entry layout, ...), reject layout
    // changes by layout-preserving ops and non-bitcast size changes.
    bool layoutSensitive = false;
    // Allow mixed precision in elementwise binary ops (XLA allows it off by default).
    bool allowMixedPrecision = false;
    // XLA rejects unbounded dynamic dimensions (`f32[?]`) by default.
    bool allowUnboundedDynamism = false;
    // XLA's verify_instruction_name_unchanged: metadata scheduling_name must
    // equal the instruction name.
    bool verifyInstructionNameUnchanged = false;
    // XLA's verify_broadcast_dimensions_order: broadcast dimensions= must be
    // strictly increasing.
    bool verifyBroadcastDimensionsOrder = false;
    // XLA's collective-deadlock verification: in scheduled modules, sends and
    // recvs annotated with _xla_send_recv_source_target_pairs must pair up
    // within their computation, with unique and acyclic source-target pairs.
    bool verifyNoSendRecvDeadlocks = false;
    // XLA's verify_reshape_is_bitcast: every (unfused) reshape must be a
    // physical bitcast under the shapes' layouts.
    bool verifyReshapeIsBitcast = false;
};

Status verifyModule(const HloModule& module, const HloVerifierOptions& options = {});

// verifyModule for a module that verified when its mutation count was `stamp`
// (HloModule::mutationCount): the module-wide checks (names, call graph, channels,
// async pairs, entry layout, aliasing, buffers) run in full; computations are checked
// when they changed after `stamp` and instructions when they, an operand, a user, a
// control predecessor, a called computation or their computation's properties did
// (HloInstruction::changeStamp). A header change after `stamp` checks everything.
// Accepts exactly what verifyModule accepts as long as every mutator stamps what it
// changes; the pipeline runner's mutation audit runs both and compares.
Status verifyModuleChangedSince(const HloModule& module, uint64_t stamp,
                                const HloVerifierOptions& options = {});

}  // namespace hloscope
