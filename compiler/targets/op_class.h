// The classes of work an instruction does, as the cost and performance models and the fusion
// cost model tell them apart: a target description gives each class its efficiency (the share
// of peak a kernel of that class reaches), and CostAnalysis::opClassOf classifies.
#pragma once

#include <optional>
#include <string_view>

namespace hloscope {

enum class OpClass { kElementwise, kTranscendental, kReduction, kDot, kConvolution, kDataMovement };
inline constexpr int kOpClassCount = 6;
std::string_view opClassName(OpClass opClass);  // "elementwise", "data_movement", ...
std::optional<OpClass> opClassNamed(std::string_view name);  // its inverse; nullopt for other names

}  // namespace hloscope
