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

namespace {

// Myers' greedy algorithm on a[0, n) and b[0, m) (line codes); appends the
// script (positions offset by aOff / bOff) to `out`. False, with nothing
// appended, when more than `maxEdits` edits are needed.
bool myers(const int* a, int n, const int* b, int m, int maxEdits, int aOff, int bOff,
           std::vector<DiffLine>& out) {
    const int max = n + m;
    const int offset = max + 1;
    std::vector<int> v(static_cast<size_t>(2 * max + 3), 0);
    std::vector<std::vector<int>> trace;  // v over k in [-d-1, d+1] at the start of round d
    int found = -1;
    for (int d = 0; d <= max && d <= maxEdits; ++d) {
        trace.emplace_back(v.begin() + (offset - d - 1), v.begin() + (offset + d + 2));
        for (int k = -d; k <= d; k += 2) {
            int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? v[offset + k + 1]
                                                                                   : v[offset + k - 1] + 1;
            int y = x - k;
            while (x < n && y < m && a[x] == b[y]) ++x, ++y;
            v[offset + k] = x;
            if (x >= n && y >= m) {
                found = d;
                break;
            }
        }
        if (found >= 0) break;
    }
    if (found < 0) return false;
    std::vector<DiffLine> reversed;
    int x = n, y = m;
    for (int d = found; d >= 0; --d) {
        const std::vector<int>& t = trace[static_cast<size_t>(d)];
        auto at = [&](int k) { return t[static_cast<size_t>(k + d + 1)]; };
        const int k = x - y;
        const int prevK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
        const int prevX = d == 0 ? 0 : at(prevK);
        const int prevY = d == 0 ? 0 : prevX - prevK;
        while (x > prevX && y > prevY) {
            --x, --y;
            reversed.push_back({DiffLine::kEqual, aOff + x, bOff + y});
        }
        if (d > 0) {
            if (x == prevX) reversed.push_back({DiffLine::kAdded, -1, bOff + prevY});
            else reversed.push_back({DiffLine::kRemoved, aOff + prevX, -1});
        }
        x = prevX, y = prevY;
    }
    out.insert(out.end(), reversed.rbegin(), reversed.rend());
    return true;
}

class Differ {
public:
    Differ(const std::vector<int>& a, const std::vector<int>& b, int maxEdits, std::vector<DiffLine>& out)
        : m_a(a), m_b(b), m_maxEdits(maxEdits), m_out(out) {}

    // Diffs a[a0, a1) against b[b0, b1).
    void diff(int a0, int a1, int b0, int b1) {
        while (a0 < a1 && b0 < b1 && m_a[a0] == m_b[b0]) m_out.push_back({DiffLine::kEqual, a0++, b0++});
        std::vector<DiffLine> tail;
        while (a0 < a1 && b0 < b1 && m_a[a1 - 1] == m_b[b1 - 1]) tail.push_back({DiffLine::kEqual, --a1, --b1});
        middle(a0, a1, b0, b1);
        m_out.insert(m_out.end(), tail.rbegin(), tail.rend());
    }

private:
    void replaceAll(int a0, int a1, int b0, int b1) {
        for (int i = a0; i < a1; ++i) m_out.push_back({DiffLine::kRemoved, i, -1});
        for (int j = b0; j < b1; ++j) m_out.push_back({DiffLine::kAdded, -1, j});
    }

    void middle(int a0, int a1, int b0, int b1) {
        const int n = a1 - a0, m = b1 - b0;
        if (n == 0 || m == 0) return replaceAll(a0, a1, b0, b1);
        // Myers' minimal script while its cost stays bounded (O((n+m) D)).
        const int budget = static_cast<int>(std::min<int64_t>(m_maxEdits, std::max<int64_t>(64, 20000000 / (n + m))));
        if (myers(m_a.data() + a0, n, m_b.data() + b0, m, budget, a0, b0, m_out)) return;
        // Too many edits for Myers: anchor on lines unique to both sides (the
        // longest increasing run of them, as patience diff does) and recurse
        // into the gaps.
        std::unordered_map<int, std::pair<int, int>> inA, inB;  // code -> (count, position)
        for (int i = a0; i < a1; ++i) {
            auto& e = inA[m_a[i]];
            ++e.first, e.second = i;
        }
        for (int j = b0; j < b1; ++j) {
            auto& e = inB[m_b[j]];
            ++e.first, e.second = j;
        }
        std::vector<std::pair<int, int>> pairs;  // (a position, b position), by a
        for (int i = a0; i < a1; ++i) {
            const auto& ea = inA[m_a[i]];
            if (ea.first != 1) continue;
            auto it = inB.find(m_a[i]);
            if (it != inB.end() && it->second.first == 1) pairs.push_back({i, it->second.second});
        }
        // Longest increasing subsequence of the b positions.
        std::vector<int> tails, tailIndex, previous(pairs.size(), -1);
        for (size_t p = 0; p < pairs.size(); ++p) {
            const int bj = pairs[p].second;
            const size_t pos = static_cast<size_t>(std::lower_bound(tails.begin(), tails.end(), bj) - tails.begin());
            if (pos == tails.size()) tails.push_back(bj), tailIndex.push_back(static_cast<int>(p));
            else tails[pos] = bj, tailIndex[pos] = static_cast<int>(p);
            previous[p] = pos > 0 ? tailIndex[pos - 1] : -1;
        }
        if (tails.empty()) return replaceAll(a0, a1, b0, b1);
        std::vector<std::pair<int, int>> anchors;
        for (int p = tailIndex.back(); p >= 0; p = previous[static_cast<size_t>(p)])
            anchors.push_back(pairs[static_cast<size_t>(p)]);
        std::reverse(anchors.begin(), anchors.end());
        int ai = a0, bj = b0;
        for (const auto& [ia, jb] : anchors) {
            diff(ai, ia, bj, jb);
            m_out.push_back({DiffLine::kEqual, ia, jb});
            ai = ia + 1, bj = jb + 1;
        }
        diff(ai, a1, bj, b1);
    }

    const std::vector<int>& m_a;
    const std::vector<int>& m_b;
    int m_maxEdits;
    std::vector<DiffLine>& m_out;
};

}  // namespace

std::vector<DiffLine> diffLines(const std::vector<std::string_view>& before,
                                const std::vector<std::string_view>& after, int maxEdits) {
    std::unordered_map<std::string_view, int> codes;
    auto code = [&](std::string_view line) {
        return codes.emplace(line, static_cast<int>(codes.size())).first->second;
    };
    std::vector<int> a, b;
    a.reserve(before.size());
    b.reserve(after.size());
    for (std::string_view line : before) a.push_back(code(line));
    for (std::string_view line : after) b.push_back(code(line));
    std::vector<DiffLine> out;
    out.reserve(std::max(a.size(), b.size()));
    Differ(a, b, maxEdits, out).diff(0, static_cast<int>(a.size()), 0, static_cast<int>(b.size()));
    return out;
}

}  // namespace hloscope
