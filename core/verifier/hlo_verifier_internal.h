// Helpers shared by the hlo_verifier*.cc files. Not part of the public core
// API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/collective_groups.h"
#include "core/ir/hlo_module.h"
#include "core/ir/attribute_text.h"
#include "core/verifier/hlo_verifier.h"
#include "core/support/status.h"

namespace hloscope::verifier_internal {

// "%name in computation comp: message" (kFailedPrecondition).
Status instructionError(const HloInstruction& instruction, std::string_view message);

using ::hloscope::frontendAttribute;
using ::hloscope::parseKeyValueBlock;

// `output_to_operand_aliasing={{1}: (0, {}), ...}`.
struct OperandAlias {
    std::vector<int64_t> outputIndex;
    int64_t operandNumber = 0;
    std::vector<int64_t> operandIndex;
};
std::optional<std::vector<OperandAlias>> parseOperandAliasing(std::string_view text);

// The subshape at `index`, nullptr when the index is invalid.
const Shape* subshape(const Shape& shape, const std::vector<int64_t>& index);
std::string indexString(const std::vector<int64_t>& index);  // "{1, 0}"

// Layout of an array shape; the default descending layout when it has none.
Layout effectiveLayout(const Shape& shape);

// "computation c: message" (kFailedPrecondition), for module-level errors.
Status computationError(const HloComputation& computation, std::string_view message);
std::string shapeText(const Shape& shape, bool withLayout);

// Layouts of two shapes equal (recursively), a missing layout counting as
// the descending one. `minorToMajorOnly` compares only minor_to_major;
// `ignoreTilesAndMemorySpace` drops tiles and memory spaces.
bool layoutsEqual(const Shape& a, const Shape& b, bool minorToMajorOnly,
                  bool ignoreTilesAndMemorySpace = false);

// Whether a reshape between the two shapes' layouts keeps the physical
// element order.
bool reshapeIsBitcast(const Shape& from, const Shape& to);

// The dimensions of a dense array literal `{{1, 2}, {3, 4}}` (comments
// ignored, missing commas between sub-arrays tolerated as XLA does); nullopt
// when the text is not a plain dense array literal (elided `{...}`, scalars,
// tuples); an empty vector when the nesting is ragged.
std::optional<std::vector<int64_t>> literalDimensions(std::string_view text, int64_t rank);

// Module-level checks (hlo_verifier_module.cc).
Status verifyEntryComputationLayout(const HloModule& module, const HloVerifierOptions& options);
Status verifyInputOutputAliasing(const HloModule& module, const HloVerifierOptions& options);

// No computation calls itself, directly or through others: the module's call graph is
// acyclic, which everything that walks called computations relies on (hlo_verifier_calls.cc).
Status verifyCallGraphAcyclic(const HloModule& module);

// The computations an instruction calls (call, while, conditional, fusion)
// against its operands and result (hlo_verifier_calls.cc).
Status verifyCalledComputations(const HloInstruction& instruction,
                                const HloVerifierOptions& options);
// The `sharding=` of `instruction` and the `related` instructions (a loop's
// body root and parameters, a conditional's branch roots) agree; a tuple
// sharding whose elements all equal a single sharding is that sharding.
Status verifyShardingConsistency(const HloInstruction& instruction,
                                 const std::vector<const HloInstruction*>& related);
// Checks particular to an opcode beyond shape inference
// (hlo_verifier_opcode_specific.cc); collectives, async ops and custom calls
// go on to the checks below.
Status verifyOpcodeSpecific(const HloInstruction& instruction, const HloVerifierOptions& options);

// Collective group mode (XLA's CollectiveOpGroupMode, core/ir/collective_groups.h).
using GroupMode = CollectiveGroupMode;

// Checks of the opcode families in hlo_verifier_ops.cc; each returns the
// first violation.
Status verifyCollective(const HloInstruction& instruction);
Status verifyAsync(const HloInstruction& instruction, const HloVerifierOptions& options);
Status verifyCustomCall(const HloInstruction& instruction, const HloVerifierOptions& options);
// With `since`, only computations changed after it (and those whose root is a send or
// recv, which depend on the async ops that wrap them).
Status verifyAsyncPairs(const HloModule& module, std::optional<uint64_t> since = std::nullopt);
Status verifyChannels(const HloModule& module);
Status verifyLayoutConstrainedAllReduce(const HloModule& module);
// Buffer shapes b(...): custom calls must alias every buffer they take or
// produce, exactly once; a buffer value has a single writer.
// With `since`, only computations changed after it.
Status verifyBuffers(const HloModule& module, std::optional<uint64_t> since = std::nullopt);
// XLA's collective-deadlock check for send/recv pairs annotated with
// _xla_send_recv_source_target_pairs in scheduled modules.
Status verifySendRecvDeadlocks(const HloModule& module);

}  // namespace hloscope::verifier_internal
