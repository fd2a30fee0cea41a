// Conformance runner for the StableHLO interpreter's test files (the
// StableHLO repository's interpret/ and testdata/ suites, and files written
// the same way): every case is imported, evaluated with the reference
// evaluator, and its check operations applied.
//
// A case is one `// -----` chunk of a file (a whole file without splits is one
// case). Checks are the `check.*` operations, either as ops
// (`check.expect_eq_const %0, dense<...>`) or as custom calls
// (`stablehlo.custom_call @check.expect_close(%2, %1)`), which the StableHLO
// importer turns into custom-calls named after the check. Their semantics
// follow the StableHLO interpreter's:
//   expect_eq, expect_eq_const      exact equality (floats: equal values with
//                                   the same sign, or both NaN)
//   expect_almost_eq[_const]        |actual - expected| <= tolerance (the
//                                   op's `tolerance`, default 1e-4; 1e-3 for
//                                   the custom-call form, as the StableHLO
//                                   interpreter applies it); NaN matches NaN
//   expect_close                    min_ulp_difference <= ULP distance <=
//                                   max_ulp_difference (custom-call form:
//                                   0..3); non-finite values must match
//   eq                              integers exact, floats as almost_eq 1e-4
// A case passes when it evaluates and runs at least one check, all of which
// hold. It is unsupported when it cannot be imported or evaluated for a
// reason we report as not implemented (quantized types, multi-process
// programs), or has no checks; anything else is a failure.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/interpreter/interpreter.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {

enum class CaseOutcome { kPassed, kFailed, kUnsupported };
std::string_view caseOutcomeName(CaseOutcome outcome);  // "passed", "failed", "unsupported"

struct ConformanceCase {
    int index = 0;      // 1-based case number within the file
    int firstLine = 1;  // where the case's chunk starts
    CaseOutcome outcome = CaseOutcome::kUnsupported;
    std::string detail;  // why it failed / what is unsupported; empty when passed
    int checks = 0;      // checks applied
};

struct ConformanceOptions {
    const std::atomic<bool>* cancel = nullptr;
    int64_t maxWhileIterations = 10'000'000;
};

// Runs every case of a StableHLO test file given as text.
std::vector<ConformanceCase> runConformance(std::string_view text, const std::string& fileName,
                                            const ConformanceOptions& options = {});

// The check.* custom-calls (and interpreter.probe, whose recorded values
// check.expect_serialized_eq compares with), for evaluations that want them
// applied (the conformance runner, `hloscope-cli eval`). A failed check is a
// kFailedPrecondition status naming the instruction; `checks` counts those
// applied. Declines (nullopt) targets that are not checks.
class CheckRunner {
public:
    std::optional<StatusOr<Literal>> operator()(const HloInstruction& instruction,
                                                std::span<const Literal* const> operands);
    int checks() const { return m_checks; }
    // Installs this runner as `options`'s custom-call handler (the runner
    // must outlive the evaluation).
    void install(HloEvaluatorOptions& options);

private:
    int m_checks = 0;
    std::map<std::string, std::vector<Literal>> m_probes;  // interpreter.probe values by id
};

// ULP distance between two values of floating-point type `type` (given as
// doubles holding exactly representable values): 0 when bitwise equal or both
// NaN; the distance in representable values when both are finite; the
// maximum uint64_t otherwise.
uint64_t ulpDistance(PrimitiveType type, double a, double b);

// Compares `actual` with `expected` element by element. Returns an empty
// string when they match, else a description of the first mismatches.
enum class CompareMode { kExact, kAlmost, kUlp };
struct CompareSpec {
    CompareMode mode = CompareMode::kExact;
    double tolerance = 1e-4;        // kAlmost
    uint64_t minUlp = 0, maxUlp = 0;  // kUlp
};
std::string compareLiterals(const Literal& actual, const Literal& expected,
                            const CompareSpec& spec);

}  // namespace hloscope
