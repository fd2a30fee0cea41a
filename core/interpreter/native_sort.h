// Native sort: XLA's sort on dense row-major buffers for the CPU runtime, for comparators
// that are one compare of an operand's two parameters (what jnp.sort, argsort and a top-k's
// sort lower to) or a lexicographic chain of such compares over several operands: either
// `select(eq(a_i, b_i), REST, cmp(a_i, b_i))` (also with `ne` and the arms swapped: a
// value-then-index order, as in Mixtral's router) or `or(cmp(a_i, b_i), and(eq(a_i, b_i),
// REST))` (JAX's sort with several keys). Each line along the sort dimension is ordered
// with std::stable_sort by the same keys and comparisons as the reference interpreter
// (doubles for FLOAT comparisons, total-order keys for TOTALORDER, 64-bit integers
// otherwise), and every operand is permuted alike, so the results are the interpreter's
// bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/support/status.h"

namespace hloscope {

// One compare of a lexicographic comparator: operand `operand`'s elements compared in
// `direction` (the compare reads (rhs, lhs) when swapped, in total order when totalOrder).
// A key before the last one decides by `equal`, its EQ (or NE) compare of the same pair:
// in a select chain the later keys decide where the pair is equal, else this compare; in an
// or-chain this compare's true decides, else the later keys where the pair is equal.
struct NativeSortKey {
    int64_t operand = 0;
    PrimitiveType type = PrimitiveType::F32;
    ComparisonDirection direction = ComparisonDirection::kLt;
    bool swapped = false;
    bool totalOrder = false;
    bool equalTotalOrder = false;  // the EQ/NE compare is TOTALORDER
    bool orChain = false;          // or(cmp, and(eq, REST)) rather than select(eq, REST, cmp)
};

struct NativeSortPlan {
    // More than one: a lexicographic comparator (keys[0] first); one: the fields below.
    std::vector<NativeSortKey> keys;
    PrimitiveType keyType = PrimitiveType::F32;
    ComparisonDirection direction = ComparisonDirection::kLt;
    bool swapped = false;     // the compare reads (rhs, lhs)
    bool totalOrder = false;  // TOTALORDER float comparison
    std::vector<int64_t> elementBytes;  // per operand
    int64_t length = 0;                 // elements along the sort dimension
    int64_t stride = 0;                 // their distance in elements
    int64_t lines = 0;                  // lines to sort
    // A line's first element: line l = outer * stride + inner, over `innerCount`.
    int64_t innerCount = 1;
};

// The plan of `sort`, or kUnimplemented naming what it does not take.
StatusOr<NativeSortPlan> planNativeSort(const HloInstruction& sort);

// Sorts lines [begin, end) of `operands` into `results` (one buffer per operand; a result
// must not be another operand's storage).
void sortLines(const NativeSortPlan& plan, const std::vector<const uint8_t*>& operands,
               const std::vector<uint8_t*>& results, int64_t begin, int64_t end);

}  // namespace hloscope
