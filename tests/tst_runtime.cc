// Execution devices: the registry, the reference interpreter as a device
// (results equal to HloEvaluator's, per-instruction and per-kernel times,
// progress, cancel, argument checks); execution modes (unfused / fused
// modules) and the output check against the reference.
#include <QFileInfo>
#include <QTest>

#include <atomic>
#include <cmath>

#include "compiler/cost/cost_analysis.h"
#include "compiler/runtime/execution_modes.h"
#include "compiler/runtime/interpreter_device.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"
#include "core/io/module_io.h"

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

    // Plan export (ExecutionDevice::exportPlan / importResults) is the GPU
    // device's: a device that runs here refuses both, writes nothing, and the
    // registry finds no exporter of a kind none of whose devices exports.
    void planExportIsRefusedByDevicesThatRunHere() {
        auto device = findDevice("interpreter");
        QVERIFY(device.isOk());
        QVERIFY(!(*device)->supportsPlanExport());
        auto module = loadExample("mlp.hlo");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        PlanExportOptions options;
        options.dir = dir.filePath(QStringLiteral("plan")).toStdString();
        options.mode = "fused";
        auto plan = (*device)->exportPlan(*module, *module, options);
        QVERIFY(!plan.isOk());
        QCOMPARE(plan.status().code(), StatusCode::kUnimplemented);
        QVERIFY2(plan.status().message().find("interpreter") != std::string::npos,
                 plan.status().message().c_str());
        QVERIFY(!QFileInfo::exists(QString::fromStdString(options.dir)));
        auto runs = (*device)->importResults(dir.path().toStdString());
        QVERIFY(!runs.isOk());
        QCOMPARE(runs.status().code(), StatusCode::kUnimplemented);

        registerDevice(std::make_shared<UnavailableDevice>());  // kind "gpu", exports nothing
        auto exporter = findPlanExporter("gpu");
        QVERIFY(!exporter.isOk());
        QCOMPARE(exporter.status().code(), StatusCode::kFailedPrecondition);
        QVERIFY(!findPlanExporter("reference").isOk());
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

    void outputCheck() {
        const Literal a = Literal::vector<float>(PrimitiveType::F32, {1, 2, NAN});
        const Literal b = Literal::vector<float>(PrimitiveType::F32, {1, 2.5, NAN});
        OutputCheck same = checkOutputs({a}, {a});
        QCOMPARE(same.maxAbsError, 0.0);
        QVERIFY(same.passed);
        OutputCheck off = checkOutputs({a}, {b});
        QCOMPARE(off.maxAbsError, 0.5);
        QCOMPARE(off.maxRelError, 0.25);
        QVERIFY(!off.passed);
        QVERIFY(!off.detail.empty());
        const Literal c = Literal::vector<float>(PrimitiveType::F32, {1, 2, 3});
        QVERIFY(std::isinf(checkOutputs({a}, {c}).maxAbsError));  // NaN on one side only
        const Literal d = Literal::vector<float>(PrimitiveType::F32, {1, 2});
        QVERIFY(std::isinf(checkOutputs({c}, {d}).maxAbsError));  // shapes differ
        QVERIFY(!checkOutputs({c}, {d}).passed);
        const Literal t1 = Literal::makeTuple({c, Literal::scalar<int32_t>(PrimitiveType::S32, 4)});
        const Literal t2 = Literal::makeTuple({c, Literal::scalar<int32_t>(PrimitiveType::S32, 7)});
        QCOMPARE(checkOutputs({t1}, {t2}).maxAbsError, 3.0);
        OutputCheck count = checkOutputs({c, c}, {c});
        QVERIFY(!count.passed);
        QVERIFY(count.detail.find("1 outputs, the reference has 2") != std::string::npos);
        // Within float tolerance: passes, with the error still reported.
        const Literal e = Literal::vector<float>(PrimitiveType::F32, {1, 2, 3.0000005f});
        OutputCheck close = checkOutputs({c}, {e});
        QVERIFY(close.passed);
        QVERIFY(close.maxAbsError > 0);
    }

    // checkDeviceOutputs: device 0, then every other device both runs return; a difference on
    // device 2 alone fails the check and is named; a run that returns device 0 alone checks one.
    void deviceOutputCheck() {
        const Literal c = Literal::vector<float>(PrimitiveType::F32, {1, 2, 3});
        const Literal off = Literal::vector<float>(PrimitiveType::F32, {1, 2, 5});
        ExecutionResult expected;
        expected.devices = 3;
        expected.outputs = {c};
        expected.otherDeviceOutputs = {{c}, {c}};
        ExecutionResult actual = expected;
        int64_t checked = 0;
        OutputCheck same = checkDeviceOutputs(expected, actual, &checked);
        QVERIFY(same.passed);
        QCOMPARE(checked, int64_t(3));
        actual.otherDeviceOutputs[1] = {off};
        OutputCheck wrong = checkDeviceOutputs(expected, actual, &checked);
        QVERIFY(!wrong.passed);
        QCOMPARE(wrong.maxAbsError, 2.0);
        QVERIFY2(wrong.detail.rfind("device 2: ", 0) == 0, wrong.detail.c_str());
        actual.otherDeviceOutputs.clear();
        QVERIFY(checkDeviceOutputs(expected, actual, &checked).passed);
        QCOMPARE(checked, int64_t(1));
    }

    void unfusedAndFusedModules() {
        for (const char* target : {"cpu", "gpu", "tpu"}) {
            auto unfused = prepareForMode(loadExample("softmax.hlo"), target, ExecutionMode::kUnfused);
            auto fused = prepareForMode(loadExample("softmax.hlo"), target, ExecutionMode::kFused);
            QVERIFY2(unfused.isOk(), unfused.status().toString().c_str());
            QVERIFY2(fused.isOk(), fused.status().toString().c_str());
            auto fusions = [](const HloModule& m) {
                int n = 0;
                for (const HloInstruction* i : m.entryComputation()->postOrder()) n += i->opcode() == HloOpcode::kFusion;
                return n;
            };
            QCOMPARE(fusions(**unfused), 0);
            QVERIFY(fusions(**fused) > 0);
            // Both compute what the input computes.
            auto input = loadExample("softmax.hlo");
            const auto args = makeRandomArguments(*input->entryComputation(), 3);
            auto reference = InterpreterDevice().run(*input, args, {});
            auto a = InterpreterDevice().run(**unfused, args, {});
            auto b = InterpreterDevice().run(**fused, args, {});
            QVERIFY(reference.isOk() && a.isOk() && b.isOk());
            QVERIFY(checkOutputs(reference->outputs, a->outputs).passed);
            QVERIFY(checkOutputs(reference->outputs, b->outputs).passed);
        }
        QCOMPARE(executionModeName(ExecutionMode::kUnfused), std::string_view("unfused"));
        auto bad = prepareForMode(loadExample("softmax.hlo"), "z80", ExecutionMode::kFused);
        QVERIFY(!bad.isOk());
        QVERIFY(bad.status().message().find("z80") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestRuntime)
#include "tst_runtime.moc"
