// A seeded generator of random well-formed HLO modules for differential
// testing (tst_differential): the same seed always gives the same
// module text, on every platform (its own integer RNG, no std distributions).
//
// A module is an entry computation of 4 to options.maxSteps steps over f32
// values mostly, some s32 and bf16: elementwise chains (unary, binary,
// transcendental), broadcasts, reductions (row, column, full; add, max,
// min), dots (matrix, matrix-vector, batched; either contracting dimension),
// slices (with strides), concatenations, selects on compares, reshapes,
// transposes, converts; values are reused (diamonds), and the root is a
// tuple of the values nothing else uses 70% of the time. Parameters are made as needed;
// every value has at most options.maxElements elements.
//
// Domains: a domain-sensitive op (log, sqrt, rsqrt, divide, atan2, floor,
// ceil, round, sign, compare, f32 -> s32 convert) applies to an "exact"
// value (a parameter, or what negate, abs, max, min, slice, concatenate,
// broadcast, reshape, transpose and select make of exact values) as it is,
// so NaN, inf and -inf occur and must match by the tolerance rules; to
// other values it applies in a safe form (log(|x| + 1), sqrt(|x|), x /
// (|y| + 1), ...), because a last-ulp difference between two correct
// implementations of an inexact value would flip a sign, a NaN or an
// integer there and show as a false mismatch.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace hloscope::testing {

struct RandomHloOptions {
    int maxSteps = 16;
    int64_t maxElements = 65536;
    // operand_precision={highest,highest} on every dot (the simulated TPU
    // then computes f32 dots as bf16_6x, close to f32).
    bool highestPrecision = false;
};

struct RandomHlo {
    std::string text;
    // How many times each kind of step was taken ("dot", "reduce-row",
    // "unary-unsafe", "tuple-root", ...), for coverage checks.
    std::map<std::string, int> kinds;
};

RandomHlo generateRandomHlo(uint64_t seed, const RandomHloOptions& options = {});

}  // namespace hloscope::testing
