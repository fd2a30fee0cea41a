// XLA's rule against duplicating producers (its CPU and generic instruction fusion): a
// producer that reads more than one relevant input, and more bytes than it writes, is fused
// into its consumers only if it can fuse into every one of them along every path by which it
// reaches them. Otherwise one of its copies would stay a kernel of its own, and each copy would
// read its inputs again.
#pragma once

#include <string>
#include <unordered_map>

#include "compiler/fusion/fusion_config.h"
#include "core/ir/hlo_computation.h"

namespace hloscope::fusion {

// The producers of `computation` that must not be duplicated, each with why (naming the pair
// on a path that does not fuse). Computed on the computation as it is; a producer whose users
// lie beyond a bounded neighbourhood is left out (the rule is not applied to it).
std::unordered_map<const HloInstruction*, std::string> doNotDuplicate(
    const HloComputation& computation, const FusionConfig& config);

}  // namespace hloscope::fusion
