// Small helpers shared by the pass suites: semantics of a test module
// against its untouched parse, rule counts, and occurrences in printed text.
#pragma once

#include <string>

#include "compiler/pipeline/hlo_pass.h"
#include "tests/pass_test_util.h"

namespace hloscope::testing {

// Empty when `after` computes what `hlo` computes (and could be evaluated).
inline std::string semantics(const std::string& hlo, const HloModule& after) {
    auto before = parseHloModule(hlo);
    if (!before.isOk()) return before.status().toString();
    bool evaluated = false;
    std::string why = sameResults(**before, after, 1, 1e-5, &evaluated);
    if (why.empty() && !evaluated) return "the module could not be evaluated";
    if (why.empty()) {
        auto reparsed = parseHloModule(printModule(after, HloPrintOptions::canonical()));
        if (!reparsed.isOk()) return "the printed result does not parse: " + reparsed.status().toString();
    }
    return why;
}

// How often `what` occurs in `text` (overlapping occurrences count).
inline int countOf(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

inline int ruleCount(const HloPass& pass, const std::string& rule) {
    int n = 0;
    for (const auto& event : pass.rewrites()) n += event.rule == rule;
    return n;
}

}  // namespace hloscope::testing
