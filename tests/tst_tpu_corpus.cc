// The simulated TPU on real modules: every example and corpus model runs on the
// simulated TPU with a timeline, a padding report and per-kernel utilisation:
//  * every model of ../shared/corpus/hlo/models (its subfolders included) and every
//    built-in example, prepared by the tpu pipeline (tpu_v4, fused and
//    unfused), simulates: a timeline for its kernels, the padding of its
//    tiled buffers, utilisations within [0, 1], finite times; the figures
//    are printed (simulated against the analytical model, padding waste);
//  * every evaluable module of hlo/valid/{xla_tests,evaluator,fusion}
//    (tests/corpus_run_util.h) runs fused on the tpu-sim device and matches
//    the interpreter on its TPU numerics (emulateTpuNumerics) within the
//    per-type tolerance; TPU numerics rejecting a module that verifies is a
//    failure.
// Skips cleanly when the corpus is absent.
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QTest>
#include <chrono>
#include <cmath>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/tpu/tpu_device.h"
#include "compiler/backends/tpu/tpu_simulator.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/targets/target_description.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "tests/corpus_run_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

// What a simulation must hold; empty when it does.
std::string problemsOf(const TpuSimulation& s) {
    if (!std::isfinite(s.totalSeconds) || s.totalSeconds < 0) return "total time not finite";
    if (!s.kernels.empty() && s.events.empty()) return "kernels but no timeline";
    if (s.paddedBytes < s.logicalBytes) return "padded bytes below logical bytes";
    for (const TpuKernelTiming& k : s.kernels) {
        if (!std::isfinite(k.seconds) || k.seconds < 0) return k.name + ": time not finite";
        for (double u : {k.mxuUtilisation, k.vpuUtilisation, k.hbmUtilisation})
            if (!(u >= 0 && u <= 1 + 1e-6)) return k.name + ": utilisation outside [0, 1]";
    }
    return {};
}

}  // namespace

class TestTpuCorpus : public QObject {
    Q_OBJECT
private slots:
    void everyModelSimulates() {
        const auto target = builtinTargetDescription("tpu_v4");
        QVERIFY(target.isOk());
        QStringList files;
        // The corpus models (a sample in a sanitizer run), then every example.
        // Paths relative to `dir`, sorted, so that a sample is the same on every machine.
        auto add = [&files](const QString& dir, bool sampled) {
            QStringList names;
            QDirIterator it(dir, {QStringLiteral("*.hlo")}, QDir::Files,
                            QDirIterator::Subdirectories);
            while (it.hasNext()) names << QDir(dir).relativeFilePath(it.next());
            names.sort();
            for (const QString& name : sampled ? corpusSample(names) : names)
                files << dir + QLatin1Char('/') + name;
        };
        add(QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models"), true);
        add(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples"), false);
        if (!QDir(QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models")).exists())
            qInfo("../shared/corpus is absent: only the built-in examples are simulated");
        int simulated = 0;
        QStringList failures;
        for (const QString& file : files) {
            const QString name = QFileInfo(file).fileName();
            auto module = loadModuleFromFile(file.toStdString());
            if (!module.isOk() || !verifyModule(**module).isOk()) {
                qInfo("%s: does not load or verify: skipped", qPrintable(name));
                continue;
            }
            const auto start = std::chrono::steady_clock::now();
            double seconds[2] = {0, 0}, analytical[2] = {0, 0};
            int64_t kernels = 0, logical = 0, padded = 0;
            bool ok = true;
            for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
                auto prepared = prepareCopyForMode(**module, "tpu_v4", mode);
                const QString label =
                    name + QLatin1Char(' ') + QLatin1String(executionModeName(mode).data());
                if (!prepared.isOk()) {
                    failures << label + QStringLiteral(": tpu pipeline: ") +
                                    QString::fromStdString(prepared.status().toString());
                    ok = false;
                    break;
                }
                auto simulation = simulateTpu(*prepared->module, *target);
                if (!simulation.isOk()) {
                    failures << label + QStringLiteral(": ") +
                                    QString::fromStdString(simulation.status().toString());
                    ok = false;
                    break;
                }
                if (const std::string problem = problemsOf(*simulation); !problem.empty()) {
                    failures << label + QStringLiteral(": ") + QString::fromStdString(problem);
                    ok = false;
                }
                const int m = mode == ExecutionMode::kFused ? 1 : 0;
                seconds[m] = simulation->totalSeconds;
                analytical[m] = simulation->analyticalSeconds;
                if (m == 1) {
                    kernels = static_cast<int64_t>(simulation->kernels.size());
                    logical = simulation->logicalBytes;
                    padded = simulation->paddedBytes;
                }
            }
            if (!ok) continue;
            ++simulated;
            qInfo(
                "%-62s fused %5lld kernels: simulated %10.4f ms (analytical %10.4f), unfused "
                "%10.4f ms "
                "(%10.4f); padding %.1f%% of %lld bytes (%.1f s)",
                qPrintable(name), static_cast<long long>(kernels), seconds[1] * 1e3,
                analytical[1] * 1e3, seconds[0] * 1e3, analytical[0] * 1e3,
                padded > 0
                    ? 100.0 * static_cast<double>(padded - logical) / static_cast<double>(padded)
                    : 0.0,
                static_cast<long long>(padded),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        qInfo("%d of %lld models and examples simulated fused and unfused on tpu_v4", simulated,
              static_cast<long long>(files.size()));
        QVERIFY(simulated >= 9);  // the examples at least
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }

    void corpusModulesRunOnTheDevice() {
        if (!QDir(kValidCorpus).exists())
            QSKIP("../shared/corpus is absent: the tpu-sim corpus sweep is skipped");
        TpuDevice tpu;
        std::string why;
        if (!tpu.available(&why)) QSKIP(why.c_str());
        auto interpreter = findDevice("interpreter");
        QVERIFY(interpreter.isOk());
        CorpusTally tally;
        int evaluated = 0, withFallbacks = 0;
        QStringList failures;
        const auto start = std::chrono::steady_clock::now();
        auto visit = [&](EvaluableModule& m) {
            auto prepared = prepareCopyForMode(*m.module, "tpu_v4", ExecutionMode::kFused);
            if (!prepared.isOk()) {
                tally.skip("the tpu pipeline rejects it (verifier)");
                return;
            }
            auto actual = runBounded(tpu, *prepared->module, m.args, 60);
            if (!actual.isOk()) {
                failures << m.name + QStringLiteral(": ") +
                                QString::fromStdString(actual.status().toString());
                return;
            }
            ++evaluated;
            if (!actual->fallbacks.empty()) ++withFallbacks;
            if (!actual->simulated || (actual->kernelTimes.size() > 0 && actual->timeline.empty()))
                failures << m.name + QStringLiteral(": no simulated times or timeline");
            const OutputCheck check = checkOutputs(m.reference, actual->outputs);
            if (!check.passed)
                failures << m.name + QStringLiteral(": ") + QString::fromStdString(check.detail);
        };
        // The reference: the interpreter on TPU numerics.
        // As in tst_cpu_corpus: an f32 sum bitcast to s32 shows any summation
        // order but the interpreter's as an integer difference.
        const std::map<QString, std::string> skipNames = {
            {QStringLiteral("fusion/hlo_fusion_analysis_test_009.hlo"),
             "f32 sum bitcast to s32 (summation order)"}};
        // TPU numerics rejecting a module is a failure, unless the module
        // does not verify: emulateTpuNumerics does not run on it and the tpu
        // pipeline would reject it too (a skip, as in `visit`).
        auto numericsRejected = [&](const EvaluableModule& m, const Status& status) {
            HloVerifierOptions options;
            options.allowMixedPrecision = true;
            if (!verifyModule(*m.module, options).isOk()) {
                tally.skip(
                    "does not verify (TPU numerics and the tpu pipeline need a valid module)");
                return;
            }
            failures << m.name + QStringLiteral(": the device's numerics reject it: ") +
                            QString::fromStdString(status.toString());
        };
        forEachEvaluableModule(
            {QStringLiteral("xla_tests"), QStringLiteral("evaluator"), QStringLiteral("fusion")},
            **interpreter, tally, visit,
            [&](const HloModule& module) { return tpu.numericsModule(module); }, skipNames,
            numericsRejected);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo(
            "tpu-sim corpus: %d modules, %d run fused and checked, %d skipped, %lld failures, %d "
            "with interpreter "
            "fallbacks (%.0f s)",
            tally.modules, evaluated, tally.skipped, static_cast<long long>(failures.size()),
            withFallbacks, seconds);
        for (const auto& [reason, count] : tally.skipReasons)
            qInfo("  skipped: %s: %d", reason.c_str(), count);
        for (const QString& failure : failures) qWarning("%s", qPrintable(failure));
        QVERIFY(evaluated > 0);
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }
};

QTEST_GUILESS_MAIN(TestTpuCorpus)
#include "tst_tpu_corpus.moc"
