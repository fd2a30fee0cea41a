// Helpers for pass tests: parse HLO text, run a pass, match the printed
// result against CHECK lines (a small FileCheck), and check that the pass
// preserved the module's results on seeded random inputs. fileCheck and sameResults are
// compiled once, in pass_test_util.cc (the hloscope_test_support library).
//
// CHECK lines (one per line of `checks`, leading spaces ignored):
//   CHECK: text        the next occurrence of `text` at or after the cursor
//   CHECK-NEXT: text   on the line right after the previous match
//   CHECK-SAME: text   on the same line as the previous match, further right
//   CHECK-NOT: text    not between the previous match and the next one
//                      (or the end)
// `text` is literal except `{{regex}}` parts (std::regex ECMAScript).
#pragma once

#include <QtGlobal>

#include <memory>
#include <string>
#include <vector>

#include "app/cli/conformance.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"
#include "core/ir/literal.h"

namespace hloscope::testing {

struct PassRun {
    bool changed = false;
    std::unique_ptr<HloModule> module;
    std::string text;  // canonical print after the pass
};

// Parses `hlo`, runs `pass`, verifies the result; errors name the stage.
template <typename Pass>
StatusOr<PassRun> runPass(Pass& pass, const std::string& hlo) {
    auto module = parseHloModule(hlo);
    if (!module.isOk()) return module.status().withContext("parse");
    auto changed = pass.run(**module);
    if (!changed.isOk()) return changed.status().withContext("pass");
    HloVerifierOptions options;
    options.allowMixedPrecision = true;
    if (Status verified = verifyModule(**module, options); !verified.isOk())
        return verified.withContext("verifier after the pass");
    PassRun run;
    run.changed = *changed;
    run.text = printModule(**module, HloPrintOptions::canonical());
    run.module = std::move(*module);
    return run;
}

// Empty when `text` satisfies `checks`; otherwise which CHECK failed and the text.
std::string fileCheck(const std::string& text, const std::string& checks);

// Evaluates `before` and `after` on the same seeded random inputs and
// compares the results (floats within `relativeTolerance` of each other,
// everything else exactly). Empty when they agree or the module cannot be
// evaluated (`*evaluated` tells which).
std::string sameResults(const HloModule& before, const HloModule& after, uint64_t seed = 1,
                        double tolerance = 1e-5, bool* evaluated = nullptr);

}  // namespace hloscope::testing
