// Execution devices: the registry, the reference interpreter as a device
// (results equal to HloEvaluator's, per-instruction and per-kernel times,
// progress, cancel, argument checks).
#include <QtTest>

#include <atomic>

#include "compiler/cost/cost_analysis.h"
#include "compiler/runtime/interpreter_device.h"
#include "core/hlo_evaluator.h"
#include "core/hlo_parser.h"
#include "core/module_io.h"

using namespace hloscope;

namespace {

std::unique_ptr<HloModule> loadExample(const char* name) {
    auto module = loadModuleFromFile(std::string(HLOSCOPE_SOURCE_DIR) + "/resources/examples/" + name);
    if (!module.isOk()) qFatal("%s", module.status().toString().c_str());
    return std::move(*module);
}

class UnavailableDevice : public ExecutionDevice {
public:
    std::string name() const override { return "test-unavailable"; }
    std::string kind() const override { return "gpu"; }
    std::string description() const override { return "a device this machine does not have"; }
    bool available(std::string* whyNot) const override {
        if (whyNot) *whyNot = "no such hardware here";
        return false;
    }
    StatusOr<ExecutionResult> run(const HloModule&, const std::vector<Literal>&,
                                  const ExecutionOptions&) const override {
        return failedPrecondition("not available");
    }
};

}  // namespace

class TestRuntime : public QObject {
    Q_OBJECT
private slots:
    void registryListsInterpreter() {
        const auto devices = availableDevices();
        QVERIFY(!devices.empty());
        QCOMPARE(QString::fromStdString(devices.front()->name()), QStringLiteral("interpreter"));
        QCOMPARE(QString::fromStdString(devices.front()->kind()), QStringLiteral("reference"));
        std::string why = "unset";
        QVERIFY(devices.front()->available(&why));
        QVERIFY(why.empty());
        auto found = findDevice("interpreter");
        QVERIFY(found.isOk());
        auto missing = findDevice("warp-drive");
        QVERIFY(!missing.isOk());
        QVERIFY(missing.status().message().find("interpreter") != std::string::npos);
    }

    void unavailableDevicesAreListedButNotAvailable() {
        registerDevice(std::make_shared<UnavailableDevice>());
        bool listed = false;
        for (const auto& d : allDevices()) listed |= d->name() == "test-unavailable";
        QVERIFY(listed);
        for (const auto& d : availableDevices()) QVERIFY(d->name() != "test-unavailable");
        std::string why;
        QVERIFY(!(*findDevice("test-unavailable"))->available(&why));
        QCOMPARE(QString::fromStdString(why), QStringLiteral("no such hardware here"));
    }

    void interpreterMatchesEvaluator() {
        auto module = loadExample("relu_matmul_bias.hlo");
        const auto args = makeRandomArguments(*module->entryComputation(), 7);
        InterpreterDevice device;
        std::vector<double> fractions;
        ExecutionOptions options;
        options.progress = [&](double f, const std::string&) { fractions.push_back(f); };
        auto result = device.run(*module, args, options);
        QVERIFY2(result.isOk(), result.isOk() ? "" : result.status().toString().c_str());
        HloEvaluator evaluator;
        auto expected = evaluator.evaluate(*module, args);
        QVERIFY(expected.isOk());
        QCOMPARE(result->outputs.size(), size_t(1));
        QVERIFY(result->outputs[0] == *expected);
        QVERIFY(result->wallSeconds > 0);
        QCOMPARE(QString::fromStdString(result->device), QStringLiteral("interpreter"));
        // Every entry instruction but parameters timed once; kernels are the non-free ones.
        QCOMPARE(result->instructionTimes.size(),
                 module->entryComputation()->instructions().size() -
                     static_cast<size_t>(module->entryComputation()->parameterCount()));
        size_t kernels = 0;
        for (const auto& instruction : module->entryComputation()->instructions())
            kernels += CostAnalysis::isFree(*instruction) ? 0 : 1;
        QCOMPARE(result->kernelTimes.size(), kernels);
        bool sawDot = false;
        for (const MeasuredTime& t : result->kernelTimes) {
            QCOMPARE(t.count, int64_t(1));
            QVERIFY(t.seconds >= 0);
            QVERIFY(t.opcode != "parameter");
            sawDot |= t.name == "dot.4" && t.opcode == "dot";
        }
        QVERIFY(sawDot);
        // Progress: starts at 0, never decreases, ends at 1.
        QVERIFY(fractions.size() >= 3);
        QCOMPARE(fractions.front(), 0.0);
        QCOMPARE(fractions.back(), 1.0);
        for (size_t i = 1; i < fractions.size(); ++i) QVERIFY(fractions[i] >= fractions[i - 1]);
    }

    void tupleResultsAreSplit() {
        auto module = parseHloModule(R"(HloModule t
ENTRY e {
  a = f32[3] parameter(0)
  n = f32[3] negate(a)
  s = s32[] constant(4)
  ROOT t = (f32[3], s32[]) tuple(n, s)
}
)");
        QVERIFY(module.isOk());
        std::vector<Literal> args = {Literal::vector<float>(PrimitiveType::F32, {1, -2, 3})};
        auto result = InterpreterDevice().run(**module, args, {});
        QVERIFY(result.isOk());
        QCOMPARE(result->outputs.size(), size_t(2));
        QCOMPARE(result->outputs[0].getAsDouble(1), 2.0);
        QCOMPARE(result->outputs[1].getAsInt64(0), int64_t(4));
    }

    void wrongArgumentCountIsAnError() {
        auto module = loadExample("relu_matmul_bias.hlo");
        auto result = InterpreterDevice().run(*module, {}, {});
        QVERIFY(!result.isOk());
        QVERIFY(result.status().message().find("takes 3 argument(s), 0 given") != std::string::npos);
    }

    void cancelBeforeAndDuring() {
        auto module = loadExample("mlp.hlo");
        const auto args = makeRandomArguments(*module->entryComputation(), 1);
        std::atomic<bool> cancel{true};
        ExecutionOptions options;
        options.cancel = &cancel;
        auto before = InterpreterDevice().run(*module, args, options);
        QVERIFY(!before.isOk());
        QCOMPARE(before.status().code(), StatusCode::kCancelled);

        // Cancelled from the progress callback after the first instruction.
        cancel = false;
        int calls = 0;
        options.progress = [&](double fraction, const std::string&) {
            ++calls;
            if (fraction > 0) cancel = true;
        };
        auto during = InterpreterDevice().run(*module, args, options);
        QVERIFY(!during.isOk());
        QCOMPARE(during.status().code(), StatusCode::kCancelled);
        QVERIFY(calls >= 2);
    }
};

QTEST_GUILESS_MAIN(TestRuntime)
#include "tst_runtime.moc"
