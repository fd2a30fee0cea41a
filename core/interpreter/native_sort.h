// Native sort: XLA's sort on dense row-major buffers for comparators that are one compare of
// the first operand's two parameters (what jnp.sort, argsort and a top-k's sort lower to),
// for the CPU runtime. Each line along the sort dimension is ordered with std::stable_sort
// by the same keys and comparisons as the reference interpreter (doubles for FLOAT
// comparisons, total-order keys for TOTALORDER, 64-bit integers otherwise), and every
// operand is permuted alike, so the results are the interpreter's bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/support/status.h"

namespace hloscope {

struct NativeSortPlan {
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
