// The CPU backend on real modules: every evaluable module of
// ../shared/corpus/hlo/valid/{xla_tests,evaluator,fusion} runs fused and
// unfused (the cpu pipeline with and without its fusion passes) on the CPU
// device and matches the reference interpreter on the original module within
// the per-type tolerance (what `hloscope-cli run --check` checks).
// "Evaluable": the interpreter runs it within 20 s on seeded random
// arguments; modules with collectives (their results depend on other
// replicas), more than 20M elements in parameters or result, or that the
// verifier rejects are counted as skipped. Instructions the backend cannot
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

using namespace hloscope;

namespace {

const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/valid");

// Collectives, and the ops whose results depend on other devices or the host.
bool isCollective(HloOpcode opcode) {
    switch (opcode) {
    case HloOpcode::kReplicaId: case HloOpcode::kPartitionId: case HloOpcode::kSend: case HloOpcode::kRecv:
    case HloOpcode::kInfeed: case HloOpcode::kOutfeed:
        return true;
    default: return hloOpcodeIsCollective(opcode);
    }
}

int64_t leafElements(const Shape& shape) {
    if (shape.isTuple()) {
        int64_t total = 0;
        for (const Shape& element : shape.tupleShapes()) total += leafElements(element);
        return total;
    }
    return shape.isArray() ? std::max<int64_t>(shape.elementCount(), 0) : 0;
}

// Runs `device` with a watchdog that cancels after `seconds`.
StatusOr<ExecutionResult> runBounded(const ExecutionDevice& device, const HloModule& module,
                                     const std::vector<Literal>& args, double seconds) {
    std::atomic<bool> cancel{false};
    std::atomic<bool> done{false};
    std::thread watchdog([&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (!done.load() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        cancel.store(true);
    });
    ExecutionOptions options;
    options.cancel = &cancel;
    options.threads = 2;
    options.maxWhileIterations = 1'000'000;
    StatusOr<ExecutionResult> result = internalError("not run");
    try {
        result = device.run(module, args, options);
    } catch (const std::exception& e) {  // the interpreter on absurd shapes (iota of f32[1e12, 0])
        result = internalError(std::string("exception: ") + e.what());
    }
    done.store(true);
    watchdog.join();
    return result;
}

}  // namespace

class TestCpuCorpus : public QObject {
    Q_OBJECT

private slots:
    void corpusMatchesInterpreter() {
        if (!QDir(kCorpus).exists()) QSKIP("../shared/corpus is absent: the CPU corpus sweep is skipped");
        CpuDevice cpu;
        std::string why;
        QVERIFY2(cpu.available(&why), why.c_str());
        auto interpreter = findDevice("interpreter");
        QVERIFY(interpreter.isOk());
        int modules = 0, evaluated = 0, skipped = 0, withFallbacks = 0;
        std::map<std::string, int> skipReasons;
        std::map<std::string, int> fallbackReasons;
        QStringList failures;
        const auto start = std::chrono::steady_clock::now();
        for (const char* folder : {"xla_tests", "evaluator", "fusion"}) {
            QDirIterator it(kCorpus + QLatin1Char('/') + QLatin1String(folder), {QStringLiteral("*.hlo")}, QDir::Files);
            QStringList files;
            while (it.hasNext()) files << it.next();
            files.sort();
            for (const QString& path : files) {
                ++modules;
                const QString name = QLatin1String(folder) + QLatin1Char('/') + QFileInfo(path).fileName();
                auto module = loadModuleFromFile(path.toStdString());
                if (!module.isOk()) {
                    ++skipped, ++skipReasons["does not parse"];
                    continue;
                }
                const HloComputation* entry = (*module)->entryComputation();
                bool collective = false;
                for (const auto& computation : (*module)->computations())
                    for (const auto& instruction : computation->instructions())
                        collective = collective || isCollective(instruction->opcode());
                if (collective) {
                    ++skipped, ++skipReasons["collectives"];
                    continue;
                }
                int64_t elements = leafElements(entry->root()->shape());
                for (const HloInstruction* parameter : entry->parameters()) elements += leafElements(parameter->shape());
                if (elements > 20'000'000) {
                    ++skipped, ++skipReasons["over 20M elements"];
                    continue;
                }
                // Bitcasts an f32 sum to s32: any summation order but the
                // interpreter's (ours vectorises with reassociation, as XLA's
                // does) shows as an integer difference.
                if (name == QStringLiteral("fusion/hlo_fusion_analysis_test_009.hlo")) {
                    ++skipped, ++skipReasons["f32 sum bitcast to s32 (summation order)"];
                    continue;
                }
                const std::vector<Literal> args = makeRandomArguments(*entry, 11);
                auto reference = runBounded(**interpreter, **module, args, 20);
                if (!reference.isOk()) {
                    ++skipped, ++skipReasons["the interpreter cannot run it"];
                    continue;
                }
                bool counted = false;
                for (ExecutionMode mode : {ExecutionMode::kUnfused, ExecutionMode::kFused}) {
                    auto copy = loadModuleFromFile(path.toStdString());
                    auto prepared = prepareForMode(std::move(*copy), "cpu", mode);
                    if (!prepared.isOk()) {
                        if (!counted) ++skipped, ++skipReasons["the pipeline rejects it (verifier)"];
                        counted = true;
                        break;
                    }
                    auto actual = runBounded(cpu, **prepared, args, 60);
                    const QString label = name + QLatin1Char(' ') + QLatin1String(executionModeName(mode).data());
                    if (!actual.isOk()) {
                        failures << label + QStringLiteral(": ") + QString::fromStdString(actual.status().toString());
                        continue;
                    }
                    const OutputCheck check = checkOutputs(reference->outputs, actual->outputs);
                    if (!check.passed) failures << label + QStringLiteral(": ") + QString::fromStdString(check.detail);
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
            }
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("CPU corpus: %d modules, %d evaluated fused and unfused, %d skipped, %lld failures, "
              "%d with interpreter fallbacks (%.0f s)",
              modules, evaluated, skipped, static_cast<long long>(failures.size()), withFallbacks, seconds);
        for (const auto& [reason, count] : skipReasons) qInfo("  skipped: %s: %d", reason.c_str(), count);
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
