// Line diff between two texts, Qt-free. Common prefix and suffix lines are
// matched first; the middle gets Myers' O(ND) shortest edit script while the
// edit distance stays within a budget (`maxEdits`, lowered for long texts so
// the work stays near 2e7 steps). Beyond it, lines that occur once on each
// side anchor the texts (patience diff: their longest increasing run) and
// the gaps between anchors are diffed the same way; a gap without anchors is
// reported as removed then added. The script is always correct; it is
// minimal whenever Myers finished.
#pragma once

#include <string_view>
#include <vector>

namespace hloscope {

struct DiffLine {
    enum Kind { kEqual, kRemoved, kAdded };
    Kind kind = kEqual;
    int left = -1;   // 0-based line in the old text (-1 for kAdded)
    int right = -1;  // 0-based line in the new text (-1 for kRemoved)
    bool operator==(const DiffLine&) const = default;
};

// Lines without their '\n' (a trailing newline does not start a new line).
std::vector<std::string_view> splitLines(std::string_view text);

// The edit script, in order: every old line appears once as kEqual or
// kRemoved, every new line once as kEqual or kAdded.
std::vector<DiffLine> diffLines(const std::vector<std::string_view>& before,
                                const std::vector<std::string_view>& after, int maxEdits = 4000);

}  // namespace hloscope
