// Corpus sweeps for pass tests: run a pass over the corpus modules whose
// file names contain a pattern, verify each result, compare results with
// the untouched module where the evaluator can run it; and time a pass on
// the largest model of the corpus.
#pragma once

#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <string>

#include "tests/pass_test_util.h"

namespace hloscope::testing {

inline const QString& corpusHloDir() {
    static const QString dir = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo");
    return dir;
}

inline bool readText(const QString& path, std::string* text) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return false;
    *text = file.readAll().toStdString();
    return true;
}

struct SweepStats {
    int files = 0;      // names matched
    int run = 0;        // parsed and verified before, pass run
    int evaluated = 0;  // results compared
    int changed = 0;    // the pass reported a change
};

inline int64_t inputElements(const HloModule& module) {
    int64_t total = 0;
    const HloComputation* entry = module.entryComputation();
    for (int64_t i = 0; i < entry->parameterCount(); ++i) {
        const Shape& shape = entry->parameter(i)->shape();
        if (shape.isArray()) total += shape.elementCount();
        else if (shape.isTuple())
            for (const Shape& element : shape.tupleShapes())
                total += element.isArray() ? element.elementCount() : 1 << 20;
    }
    return total;
}

// sameResults with a bound of 64 while-loop iterations (corpus modules may
// loop forever: their tests never run them); past it the module counts as
// not evaluable.
inline std::string sameResultsBounded(const HloModule& before, const HloModule& after,
                                      bool* evaluated) {
    *evaluated = false;
    const HloComputation* entry = before.entryComputation();
    std::vector<Literal> arguments;
    for (int64_t i = 0; i < entry->parameterCount(); ++i) {
        RandomLiteralOptions options;
        options.seed = 1 + static_cast<uint64_t>(i) * 7919;
        arguments.push_back(makeRandomLiteral(entry->parameter(i)->shape(), options));
    }
    HloEvaluatorOptions options;
    options.maxWhileIterations = 64;
    HloEvaluator a(options), b(options);
    auto x = a.evaluate(before, arguments);
    if (!x.isOk()) return {};
    auto y = b.evaluate(after, arguments);
    if (!y.isOk()) return "the module no longer evaluates: " + y.status().toString();
    *evaluated = true;
    CompareSpec spec;
    spec.mode = CompareMode::kAlmost;
    spec.tolerance = 1e-5;
    return compareLiterals(*y, *x, spec);
}

// Largest array any instruction of the module produces (element count).
inline int64_t largestArray(const HloModule& module) {
    int64_t largest = 0;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->shape().isArray())
                largest = std::max(largest, instruction->shape().elementCount());
    return largest;
}

// Empty on success; otherwise which file failed and why. `makePass` returns
// a fresh pass (StatusOr<unique_ptr<HloPass>>).
template <typename MakePass>
std::string sweepCorpus(const QString& pattern, MakePass makePass, SweepStats* stats) {
    QDirIterator it(corpusHloDir() + QStringLiteral("/valid"), {QStringLiteral("*.hlo")},
                    QDir::Files, QDirIterator::Subdirectories);
    QStringList paths;
    while (it.hasNext()) {
        const QString path = it.next();
        if (QFileInfo(path).fileName().contains(pattern)) paths << path;
    }
    paths.sort();
    HloVerifierOptions verifierOptions;
    verifierOptions.allowMixedPrecision = true;
    const bool trace = qEnvironmentVariableIsSet("HLOSCOPE_SWEEP_TRACE");
    for (const QString& path : paths) {
        ++stats->files;
        if (trace) qInfo("sweep: %s", qPrintable(path));
        std::string text;
        if (!readText(path, &text)) return "cannot read " + path.toStdString();
        auto module = parseHloModule(text);
        auto untouched = parseHloModule(text);
        if (!module.isOk() || !untouched.isOk()) continue;
        if (!verifyModule(**module, verifierOptions).isOk()) continue;
        auto pass = makePass();
        if (!pass.isOk()) return "cannot create the pass: " + pass.status().toString();
        auto changed = (*pass)->run(**module);
        const std::string where = path.toStdString() + ": ";
        if (!changed.isOk()) return where + "pass failed: " + changed.status().toString();
        ++stats->run;
        if (Status verified = verifyModule(**module, verifierOptions); !verified.isOk())
            return where + "verifier after the pass: " + verified.toString();
        const std::string printedBefore = printModule(**untouched, HloPrintOptions::canonical());
        const std::string printedAfter = printModule(**module, HloPrintOptions::canonical());
        if (*changed != (printedBefore != printedAfter))
            return where + "run() returned " + (*changed ? "true" : "false") +
                   " but the text " + (*changed ? "did not change" : "changed");
        if (*changed) ++stats->changed;
        if (auto reparsed = parseHloModule(printedAfter); !reparsed.isOk())
            return where + "printed result does not parse: " + reparsed.status().toString();
        // Too big for the reference interpreter within the sweep's budget.
        if (inputElements(**untouched) > (1 << 20) || largestArray(**untouched) > (1 << 22))
            continue;
        bool evaluated = false;
        QElapsedTimer timer;
        timer.start();
        std::string why = sameResultsBounded(**untouched, **module, &evaluated);
        if (timer.elapsed() > 1000)
            qInfo("slow evaluation (%lld ms): %s", static_cast<long long>(timer.elapsed()),
                  qPrintable(path));
        if (!why.empty()) return where + "results differ: " + why;
        if (evaluated) ++stats->evaluated;
    }
    return {};
}

// Runs a fresh pass on the largest model (Mixtral); returns milliseconds
// of the run alone, or -1 with *why set.
template <typename MakePass>
double timeOnLargestModel(MakePass makePass, std::string* why) {
    const QString path =
        corpusHloDir() + QStringLiteral("/models/xla/hlo_mixtral_8x7b_bf16_2x8.hlo");
    std::string text;
    if (!readText(path, &text)) {
        *why = "cannot read " + path.toStdString();
        return -1;
    }
    auto module = parseHloModule(text);
    if (!module.isOk()) {
        *why = module.status().toString();
        return -1;
    }
    auto pass = makePass();
    if (!pass.isOk()) {
        *why = pass.status().toString();
        return -1;
    }
    QElapsedTimer timer;
    timer.start();
    auto changed = (*pass)->run(**module);
    const double ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    if (!changed.isOk()) {
        *why = changed.status().toString();
        return -1;
    }
    HloVerifierOptions options;
    options.allowMixedPrecision = true;
    if (Status verified = verifyModule(**module, options); !verified.isOk()) {
        *why = "verifier after the pass: " + verified.toString();
        return -1;
    }
    return ms;
}

}  // namespace hloscope::testing
