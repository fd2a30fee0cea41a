// The structure of XLA's `scan` instruction, read and checked once for the
// interpreter, the verifier and the scan expander.
//
//   result = scan(inputs..., inits...), dimensions={d}, num_carries=k,
//            is_reverse=..., is_associative=..., to_apply=body
//
// The last k operands are the initial carries, the others the scanned inputs.
// At step i (i = 0..length-1, or length-1..0 when is_reverse) the body
// receives each input's slice i along dimension d, with d removed, followed
// by the carries; it returns the step's outputs followed by the new carries
// (a tuple, or the one value itself when there is exactly one). The scan's
// result lists each output stacked along d (the value of step i at index i,
// whichever the direction), then the final carries: a tuple, or the one
// value itself when the body returns a single value. is_associative only
// allows an implementation to reorder the steps; the value is the same.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/shape.h"
#include "core/support/status.h"

namespace hloscope {

struct ScanGeometry {
    int64_t dimension = 0;
    int64_t length = 0;
    int64_t inputCount = 0;
    int64_t carryCount = 0;
    int64_t outputCount = 0;
    bool reverse = false;
    // The result is a tuple (outputs..., carries...); false when the body
    // returns one value and the result is that value (stacked or not).
    bool tupleResult = true;
    // Per step: each output's shape (the stacked result without d) and each
    // carry's shape.
    std::vector<Shape> outputShapes;
    std::vector<Shape> carryShapes;
};

// The scan's structure, checked against its operands, its body and its
// result shape. Errors name the instruction and what disagrees.
StatusOr<ScanGeometry> scanGeometry(const HloInstruction& scan);

// `shape` with a dimension of `size` inserted at `dimension` (a stacked
// output), and with `dimension` removed (an input's slice).
Shape insertDimension(const Shape& shape, int64_t dimension, int64_t size);
Shape removeDimension(const Shape& shape, int64_t dimension);

}  // namespace hloscope
