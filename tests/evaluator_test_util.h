// Helpers shared by the evaluator test suites: evaluate HLO text and compare
// the result with an expected literal written in XLA's literal syntax.
#pragma once

#include <QtGlobal>

#include <string>
#include <vector>

#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"

namespace hloscope::testing {

inline StatusOr<Literal> evaluateText(const std::string& text,
                                      const std::vector<Literal>& arguments = {},
                                      HloEvaluatorOptions options = {}) {
    auto module = parseHloModule(text);
    if (!module.isOk()) return module.status().withContext("parse");
    HloEvaluator evaluator(options);
    return evaluator.evaluate(**module, arguments);
}

// The literal `text` ("f32[2] {1, 2}"); a malformed expectation aborts the test.
inline Literal literal(const std::string& text) {
    auto parsed = Literal::parse(text);
    if (!parsed.isOk())
        qFatal("bad expected literal %s: %s", text.c_str(), parsed.status().toString().c_str());
    return *parsed;
}

// Empty when `text` evaluates to exactly (bitwise) `expected`.
inline std::string mismatch(const std::string& text, const std::string& expected,
                            const std::vector<Literal>& arguments = {}) {
    auto result = evaluateText(text, arguments);
    if (!result.isOk()) return "evaluation failed: " + result.status().toString();
    Literal want = literal(expected);
    if (*result == want) return {};
    return "got " + result->toString() + "\nwant " + want.toString();
}

}  // namespace hloscope::testing
