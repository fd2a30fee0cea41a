// Heap layout: places buffers with known live ranges in one arena, so that
// buffers alive at the same time never share bytes and the arena comes close
// to the peak of live bytes (what buffer assignment's peakLiveBytes
// predicts), rather than to the sum of its allocations.
//
// Greedy, as XLA's heap simulator's "global decreasing size best fit": the
// buffers by size, largest first (then earliest start, then index); each
// goes into the smallest gap between the already placed buffers whose live
// ranges intersect its own that it fits in, else above them. Deterministic.
#pragma once

#include <cstdint>
#include <vector>

namespace hloscope {

struct HeapInterval {
    int64_t start = 0;  // first time step the buffer is live
    int64_t end = 0;    // last one (inclusive)
    int64_t bytes = 0;
};

struct HeapLayout {
    std::vector<int64_t> offsets;  // per interval, multiples of the alignment
    int64_t bytes = 0;             // the arena's size
};

// `alignment`: a power of two; every offset and size is rounded up to it.
HeapLayout packHeap(const std::vector<HeapInterval>& intervals, int64_t alignment);

}  // namespace hloscope
