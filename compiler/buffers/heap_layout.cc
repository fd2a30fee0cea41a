#include "compiler/buffers/heap_layout.h"

#include <algorithm>
#include <numeric>

namespace hloscope {
namespace {

int64_t alignUp(int64_t value, int64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

HeapLayout packHeap(const std::vector<HeapInterval>& intervals, int64_t alignment) {
    HeapLayout layout;
    layout.offsets.assign(intervals.size(), 0);
    std::vector<size_t> order(intervals.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (intervals[a].bytes != intervals[b].bytes)
            return intervals[a].bytes > intervals[b].bytes;
        return intervals[a].start < intervals[b].start;
    });
    struct Placed {
        int64_t offset;
        int64_t bytes;
        size_t index;
    };
    std::vector<Placed> placed;
    std::vector<Placed> overlapping;
    for (size_t index : order) {
        const HeapInterval& interval = intervals[index];
        const int64_t size = alignUp(std::max<int64_t>(interval.bytes, 1), alignment);
        overlapping.clear();
        for (const Placed& p : placed) {
            const HeapInterval& other = intervals[p.index];
            if (other.start <= interval.end && interval.start <= other.end)
                overlapping.push_back(p);
        }
        std::sort(overlapping.begin(), overlapping.end(),
                  [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
        // The smallest gap it fits in; else above everything.
        int64_t best = -1, bestGap = 0, cursor = 0;
        for (const Placed& p : overlapping) {
            const int64_t gap = p.offset - cursor;
            if (gap >= size && (best < 0 || gap < bestGap)) {
                best = cursor;
                bestGap = gap;
            }
            cursor = std::max(cursor, p.offset + p.bytes);
        }
        const int64_t offset = best >= 0 ? best : cursor;
        layout.offsets[index] = offset;
        layout.bytes = std::max(layout.bytes, offset + size);
        placed.push_back({offset, size, index});
    }
    return layout;
}

}  // namespace hloscope
