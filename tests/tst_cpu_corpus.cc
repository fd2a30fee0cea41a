// The CPU backend on real modules: every evaluable module of
// ../shared/corpus/hlo/valid/{xla_tests,evaluator,fusion} runs fused and
// unfused (the cpu pipeline with and without its fusion passes) on the CPU
// device and matches the reference interpreter on the original module within
// the per-type tolerance (what `hloscope-cli run --check` checks).
// "Evaluable": the interpreter runs it within 20 s on seeded random
// arguments (collectives with one participant included: the interpreter
// defines them on one device, and the backends follow it); modules with
// send / recv / infeed / outfeed (values from the host or another device),
// more than 20M elements in parameters or result, or that the verifier
// rejects are counted as skipped. Instructions the backend cannot
// compile run on the interpreter (reported); the tally of reasons is
// printed. Skips cleanly when the corpus is absent.
#include <QtTest>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/runtime/execution_modes.h"
#include "core/hlo_computation.h"
#include "core/hlo_evaluator.h"
#include "core/module_io.h"
#include "tests/corpus_run_util.h"

using namespace hloscope;

using namespace hloscope::testing;

class TestCpuCorpus : public QObject {
    Q_OBJECT

private slots:
    void corpusMatchesInterpreter() {
        if (!QDir(kValidCorpus).exists())
            QSKIP("../shared/corpus is absent: the CPU corpus sweep is skipped");
        CpuDevice cpu;
        std::string why;
        QVERIFY2(cpu.available(&why), why.c_str());
        auto interpreter = findDevice("interpreter");
        QVERIFY(interpreter.isOk());
        int evaluated = 0, withFallbacks = 0;
        CorpusTally tally;
        std::map<std::string, int> fallbackReasons;
        QStringList failures;
        const auto start = std::chrono::steady_clock::now();
        // Bitcasts an f32 sum to s32: any summation order but the
        // interpreter's (ours vectorises with reassociation, as XLA's does)
        // shows as an integer difference.
        const std::map<QString, std::string> skipNames = {
            {QStringLiteral("fusion/hlo_fusion_analysis_test_009.hlo"),
             "f32 sum bitcast to s32 (summation order)"}};
        auto visit = [&](EvaluableModule& m) {
            bool counted = false;
            for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
                auto copy = loadModuleFromFile(m.path.toStdString());
                auto prepared = prepareForMode(std::move(*copy), "cpu", mode);
                if (!prepared.isOk()) {
                    if (!counted) tally.skip("the pipeline rejects it (verifier)");
                    counted = true;
                    break;
                }
                auto actual = runBounded(cpu, **prepared, m.args, 60);
                const QString label =
                    m.name + QLatin1Char(' ') + QLatin1String(executionModeName(mode).data());
                if (!actual.isOk()) {
                    failures << label + QStringLiteral(": ") +
                                    QString::fromStdString(actual.status().toString());
                    continue;
                }
                const OutputCheck check = checkOutputs(m.reference, actual->outputs);
                if (!check.passed)
                    failures << label + QStringLiteral(": ") + QString::fromStdString(check.detail);
                if (mode == ExecutionMode::kFused) {
                    if (!actual->fallbacks.empty()) ++withFallbacks;
                    for (const std::string& fallback : actual->fallbacks) {
                        std::string reason = fallback.substr(fallback.find(": ") + 2);
                        if (reason.rfind('%', 0) == 0 && reason.find(": ") != std::string::npos)
                            reason = reason.substr(reason.find(": ") + 2);
                        ++fallbackReasons[reason];
                    }
                }
            }
            if (!counted) ++evaluated;
        };
        forEachEvaluableModule(
            {QStringLiteral("xla_tests"), QStringLiteral("evaluator"), QStringLiteral("fusion")},
            **interpreter, tally, visit, {}, skipNames);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo(
            "CPU corpus: %d modules, %d evaluated fused and unfused, %d skipped, %lld failures, "
            "%d with interpreter fallbacks (%.0f s)",
            tally.modules, evaluated, tally.skipped, static_cast<long long>(failures.size()),
            withFallbacks, seconds);
        for (const auto& [reason, count] : tally.skipReasons)
            qInfo("  skipped: %s: %d", reason.c_str(), count);
        std::vector<std::pair<int, std::string>> reasons;
        for (const auto& [reason, count] : fallbackReasons) reasons.emplace_back(count, reason);
        std::sort(reasons.rbegin(), reasons.rend());
        for (size_t i = 0; i < reasons.size() && i < 15; ++i)
            qInfo("  fallback: %s: %d", reasons[i].second.c_str(), reasons[i].first);
        for (const QString& failure : failures) qWarning("%s", qPrintable(failure));
        QVERIFY(evaluated > 0);
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }
};

QTEST_GUILESS_MAIN(TestCpuCorpus)
#include "tst_cpu_corpus.moc"
