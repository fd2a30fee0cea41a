// Differential testing: random well-formed HLO modules
// (tests/random_hlo.h) run on every execution path we have, each compared
// with the reference interpreter on the module within the per-type tolerance
// (compareWithTolerance, via checkOutputs):
//   * cpu unfused and cpu fused: the cpu pipeline without and with its
//     fusion passes, on the CPU device;
//   * tpu-sim: the module with operand_precision={highest,highest} on every
//     dot (bf16_6x on the MXU, close to f32), through the tpu_v4 pipeline
//     fused and unfused, on the simulated TPU;
//   * every pass of the cpu, tpu_v4 and h100 pipelines: bisectPipeline
//     evaluates the module after each pass that changed it.
// A mismatch prints the seed, the stage and the module text, and fails.
//
// HLOSCOPE_DIFF_CASES=N runs N cases (default 200), seeds
// HLOSCOPE_DIFF_FIRST_SEED (default 1) onwards; HLOSCOPE_DIFF_SEED=S runs
// the one case of seed S (reproducing a reported mismatch).
//
// Interpreter fallbacks (instructions a device could not compile and ran on
// the reference interpreter) are no failure; the sweep reports them per
// stage and reason ("opcode kind: why", the instruction looked up in the
// module the device ran), with the first seed of each;
// HLOSCOPE_DIFF_FALLBACKS=1 prints every one with its fused computation.
#include <QTest>
#include <chrono>
#include <cstdlib>
#include <set>

#include "compiler/backends/cpu/cpu_device.h"
#include "compiler/backends/tpu/tpu_device.h"
#include "compiler/pipeline/bisect.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/registry/target_pipelines.h"
#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "tests/corpus_run_util.h"
#include "tests/random_hlo.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

uint64_t envNumber(const char* name, uint64_t fallback) {
    const char* value = std::getenv(name);
    if (!value || !*value) return fallback;
    return std::strtoull(value, nullptr, 10);
}

StatusOr<std::unique_ptr<HloModule>> parseAndVerify(const std::string& text) {
    auto module = loadModule(text, "random.hlo");
    if (!module.isOk()) return module.status();
    Status verified = verifyModule(**module);
    if (!verified.isOk()) return verified;
    return module;
}

class DifferentialRunner {
public:
    // `cpu` and `tpu` stand for the CPU device and the simulated TPU (tests
    // of the runner itself give others).
    DifferentialRunner(const ExecutionDevice& cpu, const ExecutionDevice& tpu)
        : m_interpreter(*findDevice("interpreter")), m_cpu(cpu), m_tpu(tpu) {}

    // The failures of one case ("stage: detail"); empty when every stage matches.
    std::vector<std::string> run(uint64_t seed) {
        std::vector<std::string> failures;
        const RandomHlo plain = generateRandomHlo(seed);
        RandomHloOptions highestOptions;
        highestOptions.highestPrecision = true;
        const RandomHlo highest = generateRandomHlo(seed, highestOptions);
        auto module = parseAndVerify(plain.text);
        auto highestModule = parseAndVerify(highest.text);
        if (!module.isOk() || !highestModule.isOk()) {
            failures.push_back("generator: " + (module.isOk() ? highestModule.status().toString()
                                                              : module.status().toString()));
            return failures;
        }
        const std::vector<Literal> args = makeRandomArguments(*(*module)->entryComputation(), seed);
        auto reference = runBounded(*m_interpreter, **module, args, 60);
        if (!reference.isOk()) {
            failures.push_back("interpreter: " + reference.status().toString());
            return failures;
        }
        auto check = [&](const std::string& stage, const ExecutionDevice& device,
                         const HloModule& source, std::string_view target, ExecutionMode mode) {
            const auto start = std::chrono::steady_clock::now();
            auto prepared = prepareCopyForMode(source, target, mode);
            if (!prepared.isOk()) {
                failures.push_back(stage + ": pipeline: " + prepared.status().toString());
                return;
            }
            auto actual = runBounded(device, *prepared->module, args, 60);
            m_seconds[stage] +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (!actual.isOk()) {
                failures.push_back(stage + ": run: " + actual.status().toString());
                return;
            }
            if (!actual->fallbacks.empty()) {
                ++m_withFallbacks[stage];
                countFallbacks(seed, stage, device, *prepared->module, actual->fallbacks);
            }
            const OutputCheck result = checkOutputs(reference->outputs, actual->outputs);
            if (!result.passed) failures.push_back(stage + ": " + result.detail);
        };
        check("cpu unfused", m_cpu, **module, "cpu", ExecutionMode::kUnfused);
        check("cpu fused", m_cpu, **module, "cpu", ExecutionMode::kFused);
        check("tpu-sim unfused", m_tpu, **highestModule, "tpu_v4", ExecutionMode::kUnfused);
        check("tpu-sim fused", m_tpu, **highestModule, "tpu_v4", ExecutionMode::kFused);
        for (const char* target : {"cpu", "tpu_v4", "h100"}) {
            const auto start = std::chrono::steady_clock::now();
            const std::string stage = std::string("passes of ") + target;
            auto copy =
                parseAndVerify(std::string_view(target) == "tpu_v4" ? highest.text : plain.text);
            auto pipeline = targetPipeline(target);
            if (!copy.isOk() || !pipeline.isOk()) {
                failures.push_back(
                    stage + ": " +
                    (copy.isOk() ? pipeline.status().toString() : copy.status().toString()));
                continue;
            }
            BisectOptions options;
            options.seed = seed;
            options.timeLimitSeconds = 60;
            auto bisect = bisectPipeline(**copy, std::move(*pipeline), options);
            m_seconds[stage] +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (!bisect.isOk()) {
                failures.push_back(stage + ": " + bisect.status().toString());
                continue;
            }
            m_passesEvaluated += bisect->passesEvaluated;
            if (bisect->outcome == BisectResult::Outcome::kMismatch)
                failures.push_back(stage + ": pass " + std::to_string(bisect->passIndex) + " (" +
                                   bisect->passName + "): " + bisect->detail);
            else if (bisect->outcome == BisectResult::Outcome::kCannotEvaluate)
                failures.push_back(stage + ": cannot evaluate: " + bisect->detail);
        }
        for (const auto& [kind, count] : plain.kinds) m_kinds[kind] += count;
        return failures;
    }

    // Per stage, the instructions a device ran on the interpreter, by reason
    // ("opcode kind: why", instruction names left out), and the cases.
    struct FallbackCount {
        int instructions = 0;
        int cases = 0;
        uint64_t firstSeed = 0;
    };
    const std::map<std::string, std::map<std::string, FallbackCount>>& fallbackReasons() const {
        return m_fallbackReasons;
    }

    // Runs `seeds`; a failing case is reported with its seed and module text.
    QStringList runAll(const std::vector<uint64_t>& seeds) {
        QStringList failures;
        for (uint64_t seed : seeds) {
            const std::vector<std::string> caseFailures = run(seed);
            if (caseFailures.empty()) continue;
            std::string report = "seed " + std::to_string(seed) +
                                 " (HLOSCOPE_DIFF_SEED=" + std::to_string(seed) + "):\n";
            for (const std::string& failure : caseFailures) report += "  " + failure + "\n";
            report += generateRandomHlo(seed).text;
            qWarning("%s", report.c_str());
            failures << QString::fromStdString(report);
        }
        return failures;
    }

    const std::map<std::string, double>& seconds() const { return m_seconds; }
    const std::map<std::string, int>& kinds() const { return m_kinds; }
    // Cases in which a device ran some instruction on the interpreter.
    const std::map<std::string, int>& withFallbacks() const { return m_withFallbacks; }
    int64_t passesEvaluated() const { return m_passesEvaluated; }

private:
    ExecutionDevicePtr m_interpreter;
    const ExecutionDevice& m_cpu;
    const ExecutionDevice& m_tpu;
    std::map<std::string, double> m_seconds;
    std::map<std::string, int> m_kinds;
    std::map<std::string, int> m_withFallbacks;
    std::map<std::string, std::map<std::string, FallbackCount>> m_fallbackReasons;
    int64_t m_passesEvaluated = 0;

    // Counts `fallbacks` ("%name: why") by reason. The instruction is looked
    // up in the module the device ran (for the simulated TPU, the one it
    // hands the CPU backend); HLOSCOPE_DIFF_FALLBACKS=1 prints each with its
    // fused computation.
    void countFallbacks(uint64_t seed, const std::string& stage, const ExecutionDevice& device,
                        const HloModule& prepared, const std::vector<std::string>& fallbacks) {
        std::shared_ptr<const HloModule> ran;
        if (const auto* tpu = dynamic_cast<const TpuDevice*>(&device)) {
            if (auto cpuModule = tpu->cpuModule(prepared); cpuModule.isOk()) ran = *cpuModule;
        }
        const HloModule& module = ran ? *ran : prepared;
        std::set<std::string> reasonsOfCase;
        for (const std::string& fallback : fallbacks) {
            const std::string name = fallback.substr(1, fallback.find(':') - 1);
            std::string why = fallback;
            while (why.rfind('%', 0) == 0 && why.find(": ") != std::string::npos)
                why = why.substr(why.find(": ") + 2);
            const HloInstruction* instruction = nullptr;
            for (const auto& computation : module.computations())
                if (HloInstruction* found = computation->findInstruction(name)) instruction = found;
            std::string key = "?";
            if (instruction) {
                key = std::string(hloOpcodeString(instruction->opcode()));
                if (!instruction->fusionKind().empty())
                    key += " " + std::string(instruction->fusionKind());
            }
            key += ": " + why;
            FallbackCount& count = m_fallbackReasons[stage][key];
            ++count.instructions;
            if (reasonsOfCase.insert(key).second && count.cases++ == 0) count.firstSeed = seed;
            if (std::getenv("HLOSCOPE_DIFF_FALLBACKS")) {
                std::string detail = instruction ? printInstruction(*instruction) : "not found";
                if (instruction && instruction->fusedComputation())
                    detail += "\n" + printComputation(*instruction->fusedComputation());
                qInfo("fallback: seed %llu, %s: %s\n%s", static_cast<unsigned long long>(seed),
                      stage.c_str(), fallback.c_str(), detail.c_str());
            }
        }
    }
};

// The interpreter with 0.01 added to the first element of its first
// output: what a backend with a small bug looks like.
class SlightlyWrongDevice : public ExecutionDevice {
public:
    std::string name() const override { return "slightly-wrong"; }
    std::string kind() const override { return "cpu"; }
    std::string description() const override { return "the interpreter, off by 0.01"; }
    bool available(std::string*) const override { return true; }
    StatusOr<ExecutionResult> run(const HloModule& module, const std::vector<Literal>& args,
                                  const ExecutionOptions& options) const override {
        auto result = (*findDevice("interpreter"))->run(module, args, options);
        if (result.isOk() && !result->outputs.empty() &&
            result->outputs.front().elementType() == PrimitiveType::F32 &&
            result->outputs.front().elementCount() > 0) {
            Literal& first = result->outputs.front();
            first.setFromDouble(0, first.getAsDouble(0) + 0.01);
        }
        return result;
    }
};

}  // namespace

class TestDifferential : public QObject {
    Q_OBJECT

private slots:
    // The generator: deterministic, every module parses and verifies, and
    // over 300 seeds every kind of step the issue names occurs, with values
    // used twice (diamonds) and tuple roots.
    void generatorIsDeterministicAndCovers() {
        std::map<std::string, int> kinds;
        int diamonds = 0;
        for (uint64_t seed = 1; seed <= 300; ++seed) {
            const RandomHlo a = generateRandomHlo(seed);
            QCOMPARE(generateRandomHlo(seed).text, a.text);
            if (seed > 1) QVERIFY(a.text != generateRandomHlo(seed - 1).text);
            auto module = parseAndVerify(a.text);
            QVERIFY2(
                module.isOk(),
                qPrintable(QString::fromStdString("seed " + std::to_string(seed) + ": " +
                                                  module.status().toString() + "\n" + a.text)));
            for (const auto& [kind, count] : a.kinds) kinds[kind] += count;
            bool diamond = false;
            for (const auto& instruction : (*module)->entryComputation()->instructions())
                diamond = diamond || (instruction->opcode() != HloOpcode::kConstant &&
                                      instruction->users().size() > 1);
            diamonds += diamond;
            int64_t elements = 0;
            for (const auto& instruction : (*module)->entryComputation()->instructions())
                if (instruction->shape().isArray())
                    elements = std::max(elements, instruction->shape().elementCount());
            QVERIFY2(elements <= 65536, qPrintable(QString::number(seed)));
            RandomHloOptions highest;
            highest.highestPrecision = true;
            const RandomHlo h = generateRandomHlo(seed, highest);
            QCOMPARE(h.text.find("operand_precision") != std::string::npos,
                     a.text.find(" dot(") != std::string::npos);
        }
        for (const char* kind : {"dot-matrix",      "dot-vector",
                                 "dot-batch",       "reduce-row",
                                 "reduce-column",   "reduce-full",
                                 "reduce-add",      "reduce-maximum",
                                 "reduce-minimum",  "broadcast",
                                 "slice",           "slice-strided",
                                 "concatenate",     "select",
                                 "reshape",         "transpose",
                                 "tuple-root",      "unary-exponential",
                                 "unary-tanh",      "unary-domain-log",
                                 "unary-safe-log",  "unary-domain-sqrt",
                                 "binary-divide",   "binary-power",
                                 "bf16-add",        "s32-multiply",
                                 "convert-f32-s32", "convert-s32-f32"})
            QVERIFY2(kinds[kind] > 0, kind);
        QVERIFY2(diamonds > 150, qPrintable(QString::number(diamonds)));
    }

    // The runner reports a wrong backend with the seed, the stage and the
    // module text (the seed's first output is f32, away from 0 and NaN).
    void runnerReportsAMismatch() {
        SlightlyWrongDevice wrong;
        TpuDevice tpu;
        DifferentialRunner runner(wrong, tpu);
        const uint64_t seed = 3;
        const QStringList failures = runner.runAll({seed});
        QCOMPARE(failures.size(), 1);
        const QString report = failures.front();
        QVERIFY2(report.startsWith(QStringLiteral("seed 3 (HLOSCOPE_DIFF_SEED=3)")),
                 qPrintable(report));
        QVERIFY2(report.contains(QStringLiteral("cpu unfused: ")), qPrintable(report));
        QVERIFY2(report.contains(QStringLiteral("cpu fused: ")), qPrintable(report));
        QVERIFY2(!report.contains(QStringLiteral("tpu-sim")), qPrintable(report));
        QVERIFY2(report.contains(QStringLiteral("ENTRY %main {")), qPrintable(report));
    }

    // The sweep: HLOSCOPE_DIFF_CASES cases, or the one of HLOSCOPE_DIFF_SEED.
    void differentialSweep() {
        CpuDevice cpu;
        std::string why;
        QVERIFY2(cpu.available(&why), why.c_str());
        std::vector<uint64_t> seeds;
        if (const uint64_t one = envNumber("HLOSCOPE_DIFF_SEED", 0); one != 0) {
            seeds.push_back(one);
        } else {
            const uint64_t first = envNumber("HLOSCOPE_DIFF_FIRST_SEED", 1);
            const uint64_t cases = envNumber("HLOSCOPE_DIFF_CASES", 200);
            for (uint64_t i = 0; i < cases; ++i) seeds.push_back(first + i);
        }
        TpuDevice tpu;
        DifferentialRunner runner(cpu, tpu);
        const auto start = std::chrono::steady_clock::now();
        const QStringList failures = runner.runAll(seeds);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo(
            "differential: %zu cases (seeds %llu..%llu), %lld failing, %lld pass evaluations, "
            "%.1f s",
            seeds.size(), static_cast<unsigned long long>(seeds.front()),
            static_cast<unsigned long long>(seeds.back()), static_cast<long long>(failures.size()),
            static_cast<long long>(runner.passesEvaluated()), seconds);
        for (const auto& [stage, stageSeconds] : runner.seconds())
            qInfo("  %s: %.1f s, %d cases with interpreter fallbacks", stage.c_str(), stageSeconds,
                  runner.withFallbacks().count(stage) ? runner.withFallbacks().at(stage) : 0);
        for (const auto& [stage, reasons] : runner.fallbackReasons())
            for (const auto& [reason, count] : reasons)
                qInfo("  %s fallback: %s: %d instructions in %d cases (first: seed %llu)",
                      stage.c_str(), reason.c_str(), count.instructions, count.cases,
                      static_cast<unsigned long long>(count.firstSeed));
        QVERIFY2(failures.isEmpty(),
                 qPrintable(QString::number(failures.size()) +
                            QStringLiteral(" failing cases; first:\n") + failures.value(0)));
    }
};

QTEST_GUILESS_MAIN(TestDifferential)
#include "tst_differential.moc"
