// Internal to the StableHLO importer: helpers shared by the operation
// lowerings (stablehlo_ops.cc, stablehlo_ops_regions.cc, chlo_decompose.cc).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/stablehlo/stablehlo_import.h"

namespace hloscope::stablehlo {

using Values = std::vector<HloInstruction*>;

Status opError(const OpContext& ctx, std::string message);
Status opUnimplemented(const OpContext& ctx, std::string message);
Status expectOperands(const OpContext& ctx, size_t count);
Status expectResults(const OpContext& ctx, size_t count);

// Flattens integer-valued attributes: integers, arrays (nested), dense
// arrays and dense elements (splats expanded by the attribute's type).
bool flattenInts(const MlirAttr& attr, std::vector<int64_t>& out);
// The first present attribute of `names` as an integer list; `fallback`
// when absent (an error when absent and `fallback` is nullopt).
StatusOr<std::vector<int64_t>> intsAttr(const OpContext& ctx,
                                        std::initializer_list<std::string_view> names,
                                        std::optional<std::vector<int64_t>> fallback);
StatusOr<int64_t> intAttr(const OpContext& ctx, std::initializer_list<std::string_view> names,
                          std::optional<int64_t> fallback);
bool boolAttr(const OpContext& ctx, std::initializer_list<std::string_view> names, bool fallback);
bool attrIsTrue(const MlirAttr* attr, bool fallback);
// Enum-like value: #stablehlo<kind VALUE>, a bare identifier, or a string.
std::string enumValue(const MlirAttr* attr);
std::string enumAttr(const OpContext& ctx, std::initializer_list<std::string_view> names);
// Integer field of a dialect attribute such as #stablehlo.gather<...>.
std::vector<int64_t> fieldInts(const MlirAttr& attr, std::string_view name);

// One value per result: the instruction itself for one result, its
// get-tuple-elements for several.
Values resultsOf(OpContext& ctx, HloInstruction* instruction);
// The shape of the op's results: the single result's, or a tuple.
Shape resultShape(const OpContext& ctx);

// `"text"` with quotes, backslashes and newlines escaped.
std::string quoteString(std::string_view text);
// HLO text for an MLIR attribute kept verbatim (numbers as written,
// strings quoted, everything else as its MLIR text).
std::string verbatimValue(const MlirAttr& attr);
// `{{0,1},{2,3}}` from a 2-D integer dense attribute.
std::string intMatrixText(const MlirAttr& attr);
// Sets sharding= / frontend_attributes= from mhlo.sharding and
// mhlo.frontend_attributes.
void applyCommonAttributes(const OpContext& ctx, HloInstruction* instruction);
// `operand_precision={high,default}` when any precision is not DEFAULT.
void applyPrecisionConfig(const OpContext& ctx, HloInstruction* instruction);

// StableHLO broadcast_in_dim as XLA builds it: degenerate (size-1 ->
// size-N) dimensions are first reshaped away.
HloInstruction* broadcastInDim(HloBuilder& b, HloInstruction* operand, const Shape& shape,
                               const std::vector<int64_t>& dimensions);

// Region-carrying and communication operations (stablehlo_ops_regions.cc);
// nullopt when `name` (without the dialect prefix) is not one of them.
std::optional<StatusOr<Values>> lowerRegionOp(OpContext& ctx, std::string_view name);

}  // namespace hloscope::stablehlo
