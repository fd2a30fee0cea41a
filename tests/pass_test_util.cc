// The compiled half of pass_test_util.h: the CHECK-line matcher (std::regex, which costs
// every test that instantiates it seconds of compilation) and the seeded-inputs comparison.
#include "tests/pass_test_util.h"

#include <regex>

namespace hloscope::testing {

namespace {

std::regex checkPattern(const std::string& text) {
    std::string pattern;
    for (size_t i = 0; i < text.size();) {
        if (text.compare(i, 2, "{{") == 0) {
            size_t end = text.find("}}", i + 2);
            if (end == std::string::npos) end = text.size();
            pattern += "(?:" + text.substr(i + 2, end - i - 2) + ")";
            i = end + 2;
            continue;
        }
        const char c = text[i++];
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) pattern += '\\';
        pattern += c;
    }
    return std::regex(pattern);
}

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

std::string fileCheck(const std::string& text, const std::string& checks) {
    std::vector<std::string> lines;
    for (size_t start = 0; start <= text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    size_t line = 0, column = 0;  // cursor: where the next search starts
    bool haveMatch = false;
    size_t matchLine = 0;
    std::vector<std::string> pendingNot;
    auto fail = [&](const std::string& what) { return what + "\n--- in ---\n" + text; };
    auto notViolated = [&](size_t fromLine, size_t fromCol, size_t toLine, size_t toCol,
                           std::string* which) {
        for (const std::string& n : pendingNot) {
            std::regex re = checkPattern(n);
            for (size_t l = fromLine; l <= toLine && l < lines.size(); ++l) {
                size_t b = l == fromLine ? fromCol : 0;
                size_t e = l == toLine ? toCol : lines[l].size();
                if (b > lines[l].size() || e < b) continue;
                if (std::regex_search(lines[l].substr(b, e - b), re)) {
                    *which = n;
                    return true;
                }
            }
        }
        return false;
    };
    size_t start = 0;
    while (start <= checks.size()) {
        size_t end = checks.find('\n', start);
        if (end == std::string::npos) end = checks.size();
        const std::string raw = trim(checks.substr(start, end - start));
        start = end + 1;
        if (raw.empty()) continue;
        const size_t colon = raw.find(':');
        if (colon == std::string::npos) return "malformed check line: " + raw;
        const std::string kind = raw.substr(0, colon);
        const std::string pattern = trim(raw.substr(colon + 1));
        if (kind == "CHECK-NOT") {
            pendingNot.push_back(pattern);
            continue;
        }
        std::regex re = checkPattern(pattern);
        std::smatch m;
        size_t foundLine = lines.size(), foundEnd = 0;
        if (kind == "CHECK" || kind == "CHECK-LABEL") {
            for (size_t l = line; l < lines.size(); ++l) {
                const size_t b = l == line ? column : 0;
                if (b > lines[l].size()) continue;
                const std::string rest = lines[l].substr(b);
                if (std::regex_search(rest, m, re)) {
                    foundLine = l;
                    foundEnd = b + static_cast<size_t>(m.position(0) + m.length(0));
                    break;
                }
            }
        } else if (kind == "CHECK-NEXT" || kind == "CHECK-SAME") {
            if (!haveMatch) return fail(kind + " without a previous match: " + pattern);
            const size_t l = kind == "CHECK-NEXT" ? matchLine + 1 : matchLine;
            const size_t b = kind == "CHECK-NEXT" ? 0 : column;
            if (l < lines.size() && b <= lines[l].size()) {
                const std::string rest = lines[l].substr(b);
                if (std::regex_search(rest, m, re)) {
                    foundLine = l;
                    foundEnd = b + static_cast<size_t>(m.position(0) + m.length(0));
                }
            }
        } else {
            return "unknown check kind: " + kind;
        }
        if (foundLine == lines.size()) return fail(kind + ": not found: " + pattern);
        std::string which;
        if (notViolated(line, column, foundLine, foundEnd, &which))
            return fail("CHECK-NOT: found: " + which);
        pendingNot.clear();
        haveMatch = true;
        matchLine = foundLine;
        line = foundLine;
        column = foundEnd;
    }
    std::string which;
    if (notViolated(line, column, lines.size() - 1, lines.back().size(), &which))
        return fail("CHECK-NOT: found: " + which);
    return {};
}

std::string sameResults(const HloModule& before, const HloModule& after, uint64_t seed,
                        double tolerance, bool* evaluated) {
    if (evaluated) *evaluated = false;
    const HloComputation* entry = before.entryComputation();
    std::vector<Literal> arguments;
    for (int64_t i = 0; i < entry->parameterCount(); ++i) {
        RandomLiteralOptions options;
        options.seed = seed + static_cast<uint64_t>(i) * 7919;
        arguments.push_back(makeRandomLiteral(entry->parameter(i)->shape(), options));
    }
    HloEvaluator a, b;
    auto x = a.evaluate(before, arguments);
    if (!x.isOk()) return {};
    auto y = b.evaluate(after, arguments);
    if (!y.isOk()) return "the module no longer evaluates: " + y.status().toString();
    if (evaluated) *evaluated = true;
    CompareSpec spec;
    spec.mode = CompareMode::kAlmost;
    spec.tolerance = tolerance;
    return compareLiterals(*y, *x, spec);
}

}  // namespace hloscope::testing
