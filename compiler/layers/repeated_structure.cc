#include "compiler/layers/repeated_structure.h"

#include <algorithm>

namespace hloscope {

RepeatedStretch findRepeatedStretch(const std::vector<uint64_t>& tokens, const std::vector<bool>& anchor,
                                    const RepeatSearchOptions& options) {
    RepeatedStretch none;
    const int n = static_cast<int>(tokens.size());
    std::vector<int> positions;
    for (int i = 0; i < n && i < static_cast<int>(anchor.size()); ++i)
        if (anchor[static_cast<size_t>(i)]) positions.push_back(i);
    const int m = static_cast<int>(positions.size());
    if (m < options.minCopies || m > options.maxAnchors) return none;
    std::vector<uint64_t> a(static_cast<size_t>(m));
    for (int i = 0; i < m; ++i) a[static_cast<size_t>(i)] = tokens[static_cast<size_t>(positions[static_cast<size_t>(i)])];

    // For each period p, the longest run of anchors i with a[i] == a[i + p]; the copies then
    // cover run + p anchors. The best coverage wins, the smallest period among equals (a
    // multiple of the period covers as much).
    int bestPeriod = 0, bestStart = 0, bestRun = 0, bestCoverage = 0;
    for (int p = 1; p <= m / options.minCopies; ++p) {
        int run = 0, runStart = 0, longest = 0, longestStart = 0;
        for (int i = 0; i + p < m; ++i) {
            if (a[static_cast<size_t>(i)] == a[static_cast<size_t>(i + p)]) {
                if (run == 0) runStart = i;
                if (++run > longest) {
                    longest = run;
                    longestStart = runStart;
                }
            } else {
                run = 0;
            }
        }
        const int copies = (longest + p) / p;
        if (copies < options.minCopies) continue;
        const int coverage = copies * p;
        if (coverage > bestCoverage) {
            bestCoverage = coverage;
            bestPeriod = p;
            bestStart = longestStart;
            bestRun = longest;
        }
    }
    if (bestPeriod == 0) return none;
    const int copies = (bestRun + bestPeriod) / bestPeriod;

    // Cuts at each copy's first anchor, moved back over what precedes the first two copies
    // alike (at most to the previous copy's last anchor).
    std::vector<int> starts;
    for (int c = 0; c < copies; ++c)
        starts.push_back(positions[static_cast<size_t>(bestStart + c * bestPeriod)]);
    const int first = starts[0], second = starts[1];
    const int previousAnchor =
        bestStart + bestPeriod - 1 < m ? positions[static_cast<size_t>(bestStart + bestPeriod - 1)] : first;
    int back = 0;
    while (first - back - 1 >= 0 && second - back - 1 > previousAnchor &&
           tokens[static_cast<size_t>(first - back - 1)] == tokens[static_cast<size_t>(second - back - 1)])
        ++back;
    RepeatedStretch found;
    for (int start : starts) found.cuts.push_back(start - back);
    const int lastLength = found.cuts[static_cast<size_t>(copies - 1)] - found.cuts[static_cast<size_t>(copies - 2)];
    found.cuts.push_back(std::min(n, found.cuts.back() + lastLength));
    for (int c = 0; c < copies; ++c)
        if (found.cuts[static_cast<size_t>(c + 1)] - found.cuts[static_cast<size_t>(c)] < options.minCopyLength)
            return none;
    const int covered = found.cuts.back() - found.cuts.front();
    if (static_cast<double>(covered) < options.minCoverage * n) return none;
    return found;
}

}  // namespace hloscope
