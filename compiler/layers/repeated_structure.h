// Repeated structure in an instruction sequence: the longest stretch made of N
// copies of one block (a model's N identical layers, printed one after the
// other), found without names.
//
// The sequence is given as one token per instruction (equal tokens: same
// opcode and shape) and a set of anchors, the instructions that mark a
// layer's shape (dots and convolutions). The period is found on the anchors'
// tokens (the longest run where anchor i equals anchor i + p, p smallest
// among equal coverages), which keeps the search quadratic in the anchors,
// not in the instructions. The cuts are then placed in the instruction
// sequence: at the first anchor of each copy, moved back over the
// instructions that precede it identically in the first two copies (a
// layer's norm before its first dot). The last copy is as long as the one
// before it.
#pragma once

#include <cstdint>
#include <vector>

namespace hloscope {

struct RepeatedStretch {
    // Copy i is positions [cuts[i], cuts[i + 1]); empty when nothing repeats.
    std::vector<int> cuts;
    int count() const { return cuts.empty() ? 0 : static_cast<int>(cuts.size()) - 1; }
};

struct RepeatSearchOptions {
    int minCopies = 2;
    int minCopyLength = 8;       // instructions per copy
    double minCoverage = 0.1;    // of the sequence, covered by the copies
    int maxAnchors = 20000;      // more anchors than this: nothing is searched
};

// `tokens` and `anchor` have one entry per position.
RepeatedStretch findRepeatedStretch(const std::vector<uint64_t>& tokens,
                                    const std::vector<bool>& anchor,
                                    const RepeatSearchOptions& options = {});

}  // namespace hloscope
