#include "views/text/line_diff.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace hloscope {

std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

std::vector<DiffLine> diffLines(const std::vector<std::string_view>& before,
                                const std::vector<std::string_view>& after, int maxEdits) {
    std::vector<DiffLine> out;
    const int n = static_cast<int>(before.size()), m = static_cast<int>(after.size());
    int prefix = 0;
    while (prefix < n && prefix < m && before[prefix] == after[prefix]) ++prefix;
    int suffix = 0;
    while (suffix < n - prefix && suffix < m - prefix &&
           before[n - 1 - suffix] == after[m - 1 - suffix])
        ++suffix;
    for (int i = 0; i < prefix; ++i) out.push_back({DiffLine::kEqual, i, i});

    // Middle: lines as integers.
    std::unordered_map<std::string_view, int> codes;
    auto code = [&](std::string_view line) {
        return codes.emplace(line, static_cast<int>(codes.size())).first->second;
    };
    std::vector<int> a, b;
    for (int i = prefix; i < n - suffix; ++i) a.push_back(code(before[i]));
    for (int j = prefix; j < m - suffix; ++j) b.push_back(code(after[j]));
    const int N = static_cast<int>(a.size()), M = static_cast<int>(b.size());
    std::vector<DiffLine> middle;  // built backwards
    if (N > 0 || M > 0) {
        const int max = N + M;
        const int offset = max + 1;
        std::vector<int> v(static_cast<size_t>(2 * max + 3), 0);
        std::vector<std::vector<int>> trace;  // v over k in [-d-1, d+1] at the start of round d
        int found = -1;
        for (int d = 0; d <= max && d <= maxEdits; ++d) {
            trace.emplace_back(v.begin() + (offset - d - 1), v.begin() + (offset + d + 2));
            for (int k = -d; k <= d; k += 2) {
                int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                            ? v[offset + k + 1]
                            : v[offset + k - 1] + 1;
                int y = x - k;
                while (x < N && y < M && a[x] == b[y]) ++x, ++y;
                v[offset + k] = x;
                if (x >= N && y >= M) {
                    found = d;
                    break;
                }
            }
            if (found >= 0) break;
        }
        if (found < 0) {
            // Too many edits: everything in the middle is replaced.
            for (int j = M - 1; j >= 0; --j) middle.push_back({DiffLine::kAdded, -1, prefix + j});
            for (int i = N - 1; i >= 0; --i) middle.push_back({DiffLine::kRemoved, prefix + i, -1});
        } else {
            int x = N, y = M;
            for (int d = found; d >= 0; --d) {
                const std::vector<int>& t = trace[static_cast<size_t>(d)];
                auto at = [&](int k) { return t[static_cast<size_t>(k + d + 1)]; };
                const int k = x - y;
                const int prevK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
                const int prevX = d == 0 ? 0 : at(prevK);
                const int prevY = d == 0 ? 0 : prevX - prevK;
                while (x > prevX && y > prevY) {
                    --x, --y;
                    middle.push_back({DiffLine::kEqual, prefix + x, prefix + y});
                }
                if (d > 0) {
                    if (x == prevX) middle.push_back({DiffLine::kAdded, -1, prefix + prevY});
                    else middle.push_back({DiffLine::kRemoved, prefix + prevX, -1});
                }
                x = prevX, y = prevY;
            }
        }
    }
    out.insert(out.end(), middle.rbegin(), middle.rend());
    for (int i = 0; i < suffix; ++i)
        out.push_back({DiffLine::kEqual, n - suffix + i, m - suffix + i});
    return out;
}

}  // namespace hloscope
