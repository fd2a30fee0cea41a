// The pass manager (compiler/pipeline): running, stopping and resuming,
// instrumentation hooks, the runner's own checks (verifier, change claims),
// snapshots (sharing, materialize with stable ids), structured diffs, the
// JSON report, pipeline edits, and bisect. Uses small passes defined here so
// that the framework is tested apart from the real passes.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "compiler/pipeline/bisect.h"
#include "compiler/pipeline/module_diff.h"
#include "compiler/registry/pass_registry.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/pipeline/pipeline_report.h"
#include "compiler/pipeline/snapshots.h"
#include "compiler/registry/target_pipelines.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"

using namespace hloscope;

namespace {

const char* kModule = R"(HloModule m

ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %add = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %y)
  %zero = f32[] constant(0)
  %unused = f32[4]{0} broadcast(f32[] %zero), dimensions={}
  ROOT %mul = f32[4]{0} multiply(f32[4]{0} %add, f32[4]{0} %x)
}
)";

std::unique_ptr<HloModule> parse(const char* text = kModule) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("%s", module.status().toString().c_str());
    return std::move(*module);
}

// Does nothing, truthfully.
class NoopPass : public HloPass {
public:
    std::string_view name() const override { return "noop"; }
    StatusOr<bool> run(HloModule&) override { return false; }
};

// Removes instructions nobody uses (a tiny DCE).
class SweepPass : public HloPass {
public:
    std::string_view name() const override { return "sweep"; }
    StatusOr<bool> run(HloModule& module) override {
        bool changed = false;
        for (const auto& computation : module.computations()) {
            bool again = true;
            while (again) {
                again = false;
                std::vector<HloInstruction*> dead;
                for (const auto& i : computation->instructions())
                    if (i->userCount() == 0 && i.get() != computation->root() &&
                        i->opcode() != HloOpcode::kParameter)
                        dead.push_back(i.get());
                for (HloInstruction* d : dead) recordRewrite("dead", d);
                HLO_RETURN_IF_ERROR(computation->removeInstructions(dead));
                again = changed = changed || !dead.empty();
                again = !dead.empty();
            }
        }
        return changed;
    }
};

// Replaces every add by a subtract (a miscompile bisect must catch), as a new
// instruction.
class AddToSubtractPass : public HloPass {
public:
    std::string_view name() const override { return "add-to-subtract"; }
    StatusOr<bool> run(HloModule& module) override {
        bool changed = false;
        for (const auto& computation : module.computations()) {
            std::vector<HloInstruction*> adds;
            for (const auto& i : computation->instructions())
                if (i->opcode() == HloOpcode::kAdd) adds.push_back(i.get());
            for (HloInstruction* add : adds) {
                auto sub = std::make_unique<HloInstruction>(
                    HloOpcode::kSubtract, module.uniqueInstructionName("subtract"), add->shape());
                sub->appendOperand(add->operand(0));
                sub->appendOperand(add->operand(1));
                HloInstruction* raw = computation->addInstruction(std::move(sub));
                recordRewrite("add-to-subtract", add, raw);
                HLO_RETURN_IF_ERROR(computation->replaceInstruction(add, raw));
                changed = true;
            }
        }
        return changed;
    }
};

// Raises the constant named "bound" to 999,999: a loop the module's results
// do not depend on runs that long (slow to interpret, not different).
class LengthenLoopPass : public HloPass {
public:
    std::string_view name() const override { return "lengthen"; }
    StatusOr<bool> run(HloModule& module) override {
        for (const auto& computation : module.computations())
            if (HloInstruction* bound = computation->findInstruction("bound")) {
                bound->setLiteralText("999999");
                return true;
            }
        return false;
    }
};

// Swaps the operands of multiply in place (semantics-preserving rewiring).
class SwapOperandsPass : public HloPass {
public:
    std::string_view name() const override { return "swap"; }
    StatusOr<bool> run(HloModule& module) override {
        HloInstruction* root = module.entryComputation()->root();
        HloInstruction* a = root->operand(0);
        HloInstruction* b = root->operand(1);
        root->replaceOperand(0, b);
        root->replaceOperand(1, a);
        return true;
    }
};

// Changes a layout without saying so.
class LyingPass : public HloPass {
public:
    std::string_view name() const override { return "liar"; }
    StatusOr<bool> run(HloModule& module) override {
        module.entryComputation()->root()->setName("renamed");
        return false;
    }
};

// Breaks the module (wrong shape).
class BreakingPass : public HloPass {
public:
    std::string_view name() const override { return "breaker"; }
    StatusOr<bool> run(HloModule& module) override {
        for (const auto& i : module.entryComputation()->instructions())
            if (i->opcode() == HloOpcode::kAdd) i->setShape(Shape::makeArray(PrimitiveType::F32, {5}));
        return true;
    }
};

// Changes the root's layout-free shape into one with a different layout
// (rank 2 module needed).
class RelayoutPass : public HloPass {
public:
    std::string_view name() const override { return "relayout"; }
    StatusOr<bool> run(HloModule& module) override {
        for (const auto& i : module.entryComputation()->instructions())
            if (i->opcode() == HloOpcode::kNegate)
                i->setShape(Shape::makeArrayWithLayout(PrimitiveType::F32, {2, 3}, {0, 1}));
        return true;
    }
};

struct Recorder : PassInstrumentation {
    QStringList events;
    Status beforePipeline(const HloModule&) override {
        events << QStringLiteral("start");
        return Status::ok();
    }
    void beforePass(const PassRunInfo& info, const HloModule&) override {
        events << QStringLiteral("before %1").arg(info.index);
    }
    Status afterPass(const PassRunInfo& info, const HloModule&, const PassRunResult& r) override {
        events << QStringLiteral("after %1 %2%3")
                      .arg(info.index)
                      .arg(r.changed ? QStringLiteral("changed") : QStringLiteral("unchanged"))
                      .arg(r.enabled ? QString() : QStringLiteral(" disabled"));
        return Status::ok();
    }
};

Pipeline stepsNamed(std::initializer_list<const char*> names) {
    Pipeline p;
    p.name = "test";
    for (const char* n : names) p.steps.push_back(PipelineStep{n, {}, true});
    return p;
}

template <typename... Passes>
std::vector<std::unique_ptr<HloPass>> passes() {
    std::vector<std::unique_ptr<HloPass>> v;
    (v.push_back(std::make_unique<Passes>()), ...);
    return v;
}

}  // namespace

class TestPipeline : public QObject {
    Q_OBJECT
private slots:
    void runsInOrderWithHooks();
    void stopAndResume();
    void disabledStepsAreSkipped();
    void lyingPassIsAnError();
    void verifierNamesTheBreakingPass();
    void snapshotsShareUnchangedText();
    void materializeRestoresIds();
    void diffAddedRemovedReplaced();
    void diffRewiredAndLayout();
    void diffFused();
    void reportJson();
    void pipelineEdits();
    void targetsListKnownPasses();
    void bisectNamesTheFirstBadPass();
    void bisectSearchesByHalving();
    void bisectCannotEvaluate();
    void bisectStopsWhereEvaluationGetsTooSlow();
    void toleranceComparison();
    void cancellation();
    void scheduleStaysValid();
    void incrementalStateMatchesFull();
    void incrementalPrintReprintsUsersOfAChange();
    void incrementalVerifierChecksUsersOfAChange();
    void incrementalPrintReusesUnchangedComputations();
    void incrementalVerifierChecksCallsOfAChange();
};

void TestPipeline::runsInOrderWithHooks() {
    auto module = parse();
    PipelineRunner runner(*module, stepsNamed({"noop", "sweep"}), passes<NoopPass, SweepPass>());
    Recorder recorder;
    runner.addInstrumentation(&recorder);
    QVERIFY(runner.runAll().isOk());
    QCOMPARE(recorder.events, QStringList({"start", "before 0", "after 0 unchanged", "before 1",
                                           "after 1 changed"}));
    QVERIFY(runner.finished());
    QVERIFY(module->entryComputation()->findInstruction("unused") == nullptr);
}

void TestPipeline::stopAndResume() {
    auto module = parse();
    PipelineRunner runner(*module, stepsNamed({"noop", "sweep", "noop"}),
                          passes<NoopPass, SweepPass, NoopPass>());
    Recorder recorder;
    runner.addInstrumentation(&recorder);
    QVERIFY(runner.runThrough("noop").isOk());
    QCOMPARE(runner.nextIndex(), 1);
    QVERIFY(module->entryComputation()->findInstruction("unused") != nullptr);
    QVERIFY(runner.runNext().isOk());
    QCOMPARE(runner.nextIndex(), 2);
    QVERIFY(runner.runAll().isOk());
    QVERIFY(runner.finished());
    QCOMPARE(recorder.events.count(QStringLiteral("start")), 1);  // one pipeline, resumed
    QVERIFY(runner.runNext().isOk());  // nothing left: a no-op
}

void TestPipeline::disabledStepsAreSkipped() {
    auto module = parse();
    Pipeline pipeline = stepsNamed({"sweep"});
    pipeline.steps[0].enabled = false;
    std::vector<std::unique_ptr<HloPass>> none(1);
    PipelineRunner runner(*module, pipeline, std::move(none));
    Recorder recorder;
    runner.addInstrumentation(&recorder);
    QVERIFY(runner.runAll().isOk());
    QCOMPARE(recorder.events.last(), QStringLiteral("after 0 unchanged disabled"));
    QVERIFY(module->entryComputation()->findInstruction("unused") != nullptr);
}

void TestPipeline::lyingPassIsAnError() {
    auto module = parse();
    PipelineRunner runner(*module, stepsNamed({"liar"}), passes<LyingPass>());
    Status status = runner.runAll();
    QVERIFY(!status.isOk());
    QVERIFY2(status.message().find("pass 0 (liar) reported no change but changed the module") !=
                 std::string::npos,
             status.toString().c_str());
}

void TestPipeline::verifierNamesTheBreakingPass() {
    auto module = parse();
    PipelineRunner runner(*module, stepsNamed({"noop", "breaker"}), passes<NoopPass, BreakingPass>());
    Status status = runner.runAll();
    QVERIFY(!status.isOk());
    QVERIFY2(status.message().find("pass 1 (breaker) broke the module") != std::string::npos,
             status.toString().c_str());
    // With the verifier off the same pipeline runs through.
    auto again = parse();
    RunnerOptions options;
    options.verify = false;
    PipelineRunner lax(*again, stepsNamed({"breaker"}), passes<BreakingPass>(), options);
    QVERIFY(lax.runAll().isOk());
}

void TestPipeline::snapshotsShareUnchangedText() {
    auto module = parse();
    PipelineRunner runner(*module, stepsNamed({"noop", "sweep", "noop"}),
                          passes<NoopPass, SweepPass, NoopPass>());
    SnapshotRecorder recorder([](const HloModule& m) { return m.instructionCount(); });
    runner.addInstrumentation(&recorder);
    QVERIFY(runner.runAll().isOk());
    const auto& s = recorder.snapshots();
    QCOMPARE(s.size(), size_t{4});
    QCOMPARE(s[0].pass, std::string("input"));
    QCOMPARE(s[1].text.get(), s[0].text.get());  // noop: shared
    QVERIFY(s[2].text.get() != s[1].text.get());  // sweep changed it
    QCOMPARE(s[3].text.get(), s[2].text.get());
    QCOMPARE(s[0].peakBytes, int64_t{6});  // the "peak" function here counts instructions
    QCOMPARE(s[2].peakBytes, int64_t{4});
    QCOMPARE(recorder.textBytes(),
             static_cast<int64_t>(s[0].text->size() + s[2].text->size()));
    QVERIFY(s[2].text->find("%unused") == std::string::npos);
    QCOMPARE(s[2].diff.rewrites.size(), size_t{2});  // unused, then zero
    QCOMPARE(s[2].diff.rewrites[0].rule, std::string("dead"));
}

void TestPipeline::materializeRestoresIds() {
    auto module = parse();
    PipelineRunner runner(*module, stepsNamed({"add-to-subtract"}), passes<AddToSubtractPass>());
    SnapshotRecorder recorder;
    runner.addInstrumentation(&recorder);
    QVERIFY(runner.runAll().isOk());
    auto restored = recorder.snapshots().back().materialize();
    QVERIFY2(restored.isOk(), restored.status().toString().c_str());
    for (const auto& computation : module->computations())
        for (const auto& instruction : computation->instructions()) {
            HloInstruction* twin =
                (*restored)->findComputation(computation->name())->findInstruction(instruction->name());
            QVERIFY(twin != nullptr);
            QCOMPARE(twin->uniqueId(), instruction->uniqueId());
        }
    // The input snapshot still has the add with its original id.
    auto input = recorder.snapshots().front().materialize();
    QVERIFY(input.isOk());
    QVERIFY((*input)->entryComputation()->findInstruction("add") != nullptr);
    QVERIFY((*restored)->nextUniqueId() > module->instructionCount());
}

void TestPipeline::diffAddedRemovedReplaced() {
    auto module = parse();
    const int64_t addId = module->entryComputation()->findInstruction("add")->uniqueId();
    PipelineRunner runner(*module, stepsNamed({"add-to-subtract"}), passes<AddToSubtractPass>());
    SnapshotRecorder recorder;
    runner.addInstrumentation(&recorder);
    QVERIFY(runner.runAll().isOk());
    const ModuleDiff& diff = recorder.snapshots().back().diff;
    QCOMPARE(diff.added.size(), size_t{1});
    QCOMPARE(diff.added[0].opcode, std::string("subtract"));
    QCOMPARE(diff.removed.size(), size_t{1});
    QCOMPARE(diff.removed[0].id, addId);
    QCOMPARE(diff.replaced.size(), size_t{1});
    QCOMPARE(diff.replaced[0].before.name, std::string("add"));
    QCOMPARE(diff.replaced[0].after.opcode, std::string("subtract"));
    QVERIFY(diff.rewired.empty());  // the multiply's change is the replacement
    QCOMPARE(diff.rewrites.size(), size_t{1});
    QCOMPARE(diff.rewrites[0].rule, std::string("add-to-subtract"));
    QCOMPARE(diff.rewrites[0].beforeId, addId);
}

void TestPipeline::diffRewiredAndLayout() {
    auto module = parse();
    ModuleRecord before = ModuleRecord::of(*module);
    SwapOperandsPass swap;
    QVERIFY(*swap.run(*module));
    ModuleDiff diff = diffModules(before, ModuleRecord::of(*module));
    QCOMPARE(diff.rewired.size(), size_t{2});
    QCOMPARE(diff.rewired[0].user.name, std::string("mul"));
    QCOMPARE(diff.rewired[0].operandIndex, int64_t{0});
    QCOMPARE(diff.rewired[0].before.name, std::string("add"));
    QCOMPARE(diff.rewired[0].after.name, std::string("x"));
    QVERIFY(diff.added.empty() && diff.removed.empty() && diff.replaced.empty());

    auto m2 = parse(R"(HloModule r
ENTRY %e (p: f32[2,3]) -> f32[2,3] {
  %p = f32[2,3]{1,0} parameter(0)
  ROOT %n = f32[2,3]{1,0} negate(%p)
})");
    ModuleRecord b2 = ModuleRecord::of(*m2);
    RelayoutPass relayout;
    QVERIFY(*relayout.run(*m2));
    ModuleDiff d2 = diffModules(b2, ModuleRecord::of(*m2));
    QCOMPARE(d2.shapeChanged.size(), size_t{1});
    QVERIFY(d2.shapeChanged[0].layoutOnly);
    QCOMPARE(d2.shapeChanged[0].before, std::string("f32[2,3]{1,0}"));
    QCOMPARE(d2.shapeChanged[0].after, std::string("f32[2,3]{0,1}"));
    QCOMPARE(d2.layoutChangedCount(), int64_t{1});
}

void TestPipeline::diffFused() {
    // The same computation before and after "fusing" the add and multiply
    // (the fused computation keeps the instructions' names, as XLA does).
    auto before = parse(R"(HloModule f
ENTRY %e (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %add = f32[4]{0} add(%x, %y)
  ROOT %mul = f32[4]{0} multiply(%add, %x)
})");
    auto after = parse(R"(HloModule f
%fused (p0: f32[4], p1: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  %add = f32[4]{0} add(%p0, %p1)
  ROOT %mul = f32[4]{0} multiply(%add, %p0)
}
ENTRY %e (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  ROOT %fusion = f32[4]{0} fusion(%x, %y), kind=kLoop, calls=%fused
})");
    // Give the entry parameters the same ids in both, new ids to the rest.
    ModuleRecord b = ModuleRecord::of(*before);
    int64_t next = 100;
    for (const auto& c : after->computations())
        for (const auto& i : c->instructions()) {
            HloInstruction* same = c->isEntry() && i->opcode() == HloOpcode::kParameter
                                       ? before->entryComputation()->findInstruction(i->name())
                                       : nullptr;
            i->setUniqueId(same ? same->uniqueId() : next++);
        }
    ModuleDiff diff = diffModules(b, ModuleRecord::of(*after));
    QCOMPARE(diff.fused.size(), size_t{2});
    for (const auto& f : diff.fused) QCOMPARE(f.fusion.name, std::string("fusion"));
    QCOMPARE(diff.removed.size(), size_t{2});
}

void TestPipeline::reportJson() {
    auto module = parse();
    PipelineRunner runner(*module, stepsNamed({"noop", "add-to-subtract"}),
                          passes<NoopPass, AddToSubtractPass>());
    SnapshotRecorder recorder([](const HloModule&) { return int64_t{48}; });
    runner.addInstrumentation(&recorder);
    QVERIFY(runner.runAll().isOk());
    PipelineReportOptions options;
    options.target = "test";
    options.module = "m";
    options.withFiles = true;
    const QJsonObject report =
        QJsonDocument::fromJson(QByteArray::fromStdString(pipelineReportJson(recorder.snapshots(), options)))
            .object();
    QCOMPARE(report.value("target").toString(), QStringLiteral("test"));
    QCOMPARE(report.value("peak_bytes_before").toInt(), 48);
    const QJsonArray passList = report.value("passes").toArray();
    QCOMPARE(passList.size(), 2);
    const QJsonObject second = passList[1].toObject();
    QCOMPARE(second.value("name").toString(), QStringLiteral("add-to-subtract"));
    QCOMPARE(second.value("changed").toBool(), true);
    QCOMPARE(second.value("file").toString(), QStringLiteral("02-add-to-subtract.hlo"));
    QVERIFY(second.value("time_ms").isDouble());
    QCOMPARE(second.value("peak_bytes").toInt(), 48);
    const QJsonObject diff = second.value("diff").toObject();
    for (const char* key : {"added", "removed", "replaced", "rewired", "layout_changed", "fused"})
        QVERIFY2(diff.value(key).isArray(), key);
    QCOMPARE(diff.value("replaced").toArray().size(), 1);
    QCOMPARE(diff.value("counts").toObject().value("added").toInt(), 1);
    QCOMPARE(passList[0].toObject().value("changed").toBool(), false);
}

void TestPipeline::pipelineEdits() {
    auto cpu = targetPipeline("cpu");
    QVERIFY(cpu.isOk());
    QVERIFY(!targetPipeline("fpga").isOk());
    Pipeline p = *cpu;
    QVERIFY(disablePasses(p, "cse").isOk());
    int disabled = 0;
    for (const PipelineStep& s : p.steps) disabled += s.pass == "cse" && !s.enabled;
    QVERIFY(disabled >= 1);
    QVERIFY(disablePasses(p, "0").isOk());
    QVERIFY(!p.steps[0].enabled);
    Status unknown = disablePasses(p, "no-such-pass");
    QVERIFY(!unknown.isOk());
    QVERIFY(unknown.message().find("no pass 'no-such-pass'") != std::string::npos);
    QVERIFY(!disablePasses(p, "999").isOk());
    QVERIFY(setPassOption(p, "layout-assignment.target=tpu").isOk());
    auto layout = findStep(p, "layout-assignment");
    QVERIFY(layout.isOk());
    QCOMPARE(*p.steps[static_cast<size_t>(*layout)].options.getString("target", ""), std::string("tpu"));
    QVERIFY(!setPassOption(p, "missing-dot").isOk());
    QVERIFY(!setPassOption(p, "nosuch.key=1").isOk());
    // Option parsing.
    PassOptions options{{"n", "12"}, {"flag", "on"}, {"bad", "x1"}};
    QCOMPARE(*options.getInt("n", 0), int64_t{12});
    QCOMPARE(*options.getBool("flag", false), true);
    QVERIFY(!options.getInt("bad", 0).isOk());
    QCOMPARE(*options.getInt("absent", 7), int64_t{7});
    Status known = options.checkKnown({"n", "flag"});
    QVERIFY(!known.isOk());
    QVERIFY(known.message().find("'bad'") != std::string::npos);
    QVERIFY(!createPass("no-such-pass", {}).isOk());
}

void TestPipeline::targetsListKnownPasses() {
    // Every pass a target pipeline names is registered (or the pipeline
    // could not be created): a test that fails while a pass is missing.
    for (std::string_view target : targetNames()) {
        auto pipeline = targetPipeline(target);
        QVERIFY(pipeline.isOk());
        for (const PipelineStep& step : pipeline->steps)
            QVERIFY2(findPass(step.pass) != nullptr, step.pass.c_str());
    }
    // The registry is sorted and every entry has a description.
    const auto& registry = passRegistry();
    for (size_t i = 0; i < registry.size(); ++i) {
        QVERIFY(!registry[i].description.empty());
        if (i > 0) QVERIFY(registry[i - 1].name < registry[i].name);
    }
}

void TestPipeline::bisectNamesTheFirstBadPass() {
    auto module = parse();
    PipelineRunner runner(*module, stepsNamed({"noop", "sweep", "add-to-subtract", "noop"}),
                          passes<NoopPass, SweepPass, AddToSubtractPass, NoopPass>());
    BisectOptions five;
    five.seed = 5;
    auto result = bisectRunner(runner, five);
    QVERIFY2(result.isOk(), result.status().toString().c_str());
    QCOMPARE(result->outcome, BisectResult::Outcome::kMismatch);
    QCOMPARE(result->passIndex, 2);
    QCOMPARE(result->passName, std::string("add-to-subtract"));
    QVERIFY2(result->detail.find("elements differ") != std::string::npos, result->detail.c_str());
    QCOMPARE(result->passesEvaluated, 2);  // sweep and add-to-subtract changed the module

    auto good = parse();
    PipelineRunner clean(*good, stepsNamed({"sweep", "swap"}), passes<SweepPass, SwapOperandsPass>());
    auto ok = bisectRunner(clean, five);
    QVERIFY(ok.isOk());
    QCOMPARE(ok->outcome, BisectResult::Outcome::kNoChange);
}

void TestPipeline::bisectSearchesByHalving() {
    // Eight changing passes, the seventh (index 6) breaks the results. Halving evaluates the
    // result, then indices 3, 5 and 6; every-pass evaluates 0 through 6.
    auto steps = [] {
        return stepsNamed({"swap", "swap", "swap", "swap", "swap", "swap", "add-to-subtract",
                           "swap"});
    };
    auto instances = [] {
        return passes<SwapOperandsPass, SwapOperandsPass, SwapOperandsPass, SwapOperandsPass,
                      SwapOperandsPass, SwapOperandsPass, AddToSubtractPass, SwapOperandsPass>();
    };
    for (BisectStrategy strategy : {BisectStrategy::kBinary, BisectStrategy::kEveryPass}) {
        auto module = parse();
        PipelineRunner runner(*module, steps(), instances());
        BisectOptions options;
        options.strategy = strategy;
        auto result = bisectRunner(runner, options);
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        QCOMPARE(result->outcome, BisectResult::Outcome::kMismatch);
        QCOMPARE(result->passIndex, 6);
        QCOMPARE(result->passName, std::string("add-to-subtract"));
        QVERIFY2(result->detail.find("elements differ") != std::string::npos,
                 result->detail.c_str());
        if (strategy == BisectStrategy::kBinary) {
            QCOMPARE(result->passesEvaluated, 4);
            QCOMPARE(result->changingPasses, 8);
        } else {
            QCOMPARE(result->passesEvaluated, 7);
            QCOMPARE(result->changingPasses, 7);  // it stops at the first difference
        }
    }
    // Nothing breaks: one evaluation of the result against eight.
    for (BisectStrategy strategy : {BisectStrategy::kBinary, BisectStrategy::kEveryPass}) {
        auto module = parse();
        PipelineRunner runner(*module, stepsNamed({"swap", "swap", "swap", "swap", "sweep",
                                                   "swap", "swap", "swap"}),
                              passes<SwapOperandsPass, SwapOperandsPass, SwapOperandsPass,
                                     SwapOperandsPass, SweepPass, SwapOperandsPass,
                                     SwapOperandsPass, SwapOperandsPass>());
        BisectOptions options;
        options.strategy = strategy;
        auto result = bisectRunner(runner, options);
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        QCOMPARE(result->outcome, BisectResult::Outcome::kNoChange);
        QCOMPARE(result->changingPasses, 8);
        QCOMPARE(result->passesEvaluated, strategy == BisectStrategy::kBinary ? 1 : 8);
    }
}

void TestPipeline::bisectCannotEvaluate() {
    auto module = parse(R"(HloModule c
ENTRY %e (x: f32[2]) -> f32[2] {
  %x = f32[2]{0} parameter(0)
  ROOT %k = f32[2]{0} custom-call(%x), custom_call_target="my_kernel"
})");
    PipelineRunner runner(*module, stepsNamed({"noop"}), passes<NoopPass>());
    auto result = bisectRunner(runner);
    QVERIFY(result.isOk());
    QCOMPARE(result->outcome, BisectResult::Outcome::kCannotEvaluate);
    QVERIFY2(result->detail.find("%k") != std::string::npos, result->detail.c_str());
}

void TestPipeline::bisectStopsWhereEvaluationGetsTooSlow() {
    // After "lengthen" the loop runs 999,999 times (seconds in the interpreter, beyond the
    // 4x + 1 s budget): not a mismatch, but "cannot evaluate" after that pass.
    auto module = parse(R"(HloModule slow
cond {
  s = (s32[], f32[8192]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  bound = s32[] constant(1)
  ROOT lt = pred[] compare(i, bound), direction=LT
}
body {
  s = (s32[], f32[8192]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8192] get-tuple-element(s), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  w = f32[8192] add(v, v)
  ROOT t = (s32[], f32[8192]) tuple(n, w)
}
ENTRY e {
  x = f32[2] parameter(0)
  z = s32[] constant(0)
  zv = f32[] constant(0)
  v = f32[8192] broadcast(zv), dimensions={}
  init = (s32[], f32[8192]) tuple(z, v)
  w = (s32[], f32[8192]) while(init), condition=cond, body=body
  c = s32[] get-tuple-element(w), index=0
  f = f32[] convert(c)
  zero = f32[] constant(0)
  m = f32[] multiply(f, zero)
  b = f32[2] broadcast(m), dimensions={}
  ROOT r = f32[2] add(x, b)
})");
    for (BisectStrategy strategy : {BisectStrategy::kBinary, BisectStrategy::kEveryPass}) {
        auto copy = module->clone();
        PipelineRunner runner(*copy, stepsNamed({"sweep", "lengthen", "noop"}),
                              passes<SweepPass, LengthenLoopPass, NoopPass>());
        BisectOptions options;
        options.strategy = strategy;
        auto result = bisectRunner(runner, options);
        QVERIFY2(result.isOk(), result.status().toString().c_str());
        QCOMPARE(result->outcome, BisectResult::Outcome::kCannotEvaluate);
        QCOMPARE(result->passIndex, 1);
        QCOMPARE(result->passName, std::string("lengthen"));
        QVERIFY2(result->detail.find("after pass 1 (lengthen) the module takes more than") == 0,
                 result->detail.c_str());
    }
}

void TestPipeline::toleranceComparison() {
    auto f32 = [](std::vector<double> v) { return Literal::vector(PrimitiveType::F32, v); };
    QVERIFY(compareWithTolerance(f32({1, 2}), f32({1, 2.00001})).empty());
    QVERIFY(!compareWithTolerance(f32({1, 2}), f32({1, 2.01})).empty());
    const double nan = std::numeric_limits<double>::quiet_NaN();
    QVERIFY(compareWithTolerance(f32({nan}), f32({nan})).empty());
    QVERIFY(!compareWithTolerance(f32({nan}), f32({0})).empty());
    auto s32 = [](std::vector<int64_t> v) { return Literal::vector(PrimitiveType::S32, v); };
    QVERIFY(!compareWithTolerance(s32({1}), s32({2})).empty());
    QVERIFY(!compareWithTolerance(f32({1}), f32({1, 2})).empty());
}

void TestPipeline::cancellation() {
    auto module = parse();
    std::atomic<bool> cancel{true};
    RunnerOptions options;
    options.cancel = &cancel;
    PipelineRunner runner(*module, stepsNamed({"noop"}), passes<NoopPass>(), options);
    Status status = runner.runAll();
    QCOMPARE(status.code(), StatusCode::kCancelled);
    QCOMPARE(runner.nextIndex(), 0);
}

void TestPipeline::scheduleStaysValid() {
    // The pass appends its subtract at the end; in a scheduled module the
    // runner moves it before its first user so the schedule stays valid.
    auto module = parse(R"(HloModule s, is_scheduled=true
ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %add = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %y)
  ROOT %mul = f32[4]{0} multiply(f32[4]{0} %add, f32[4]{0} %x)
})");
    QVERIFY(module->isScheduled());
    PipelineRunner runner(*module, stepsNamed({"add-to-subtract"}), passes<AddToSubtractPass>());
    Status status = runner.runAll();
    QVERIFY2(status.isOk(), status.toString().c_str());
    const std::string text = printModule(*module, HloPrintOptions::canonical());
    QVERIFY(text.find("subtract") < text.find("%mul"));
}

namespace {

// The diff's entries as names, to compare two diffs.
QStringList describe(const ModuleDiff& diff) {
    QStringList out;
    for (const DiffItem& i : diff.added) out << QStringLiteral("+%1").arg(i.name.c_str());
    for (const DiffItem& i : diff.removed) out << QStringLiteral("-%1").arg(i.name.c_str());
    for (const auto& r : diff.replaced)
        out << QStringLiteral("%1=>%2").arg(r.before.name.c_str(), r.after.name.c_str());
    for (const auto& r : diff.rewired)
        out << QStringLiteral("%1#%2:%3->%4")
                   .arg(r.user.name.c_str())
                   .arg(r.operandIndex)
                   .arg(r.before.name.c_str(), r.after.name.c_str());
    for (const auto& c : diff.shapeChanged)
        out << QStringLiteral("%1:%2->%3").arg(c.instruction.name.c_str(), c.before.c_str(),
                                               c.after.c_str());
    for (const auto& f : diff.fused)
        out << QStringLiteral("%1~>%2").arg(f.instruction.name.c_str(), f.fusion.name.c_str());
    return out;
}

}  // namespace

// After each pass the incremental print, record and verifier agree with the full ones
// and reuse what did not change.
void TestPipeline::incrementalStateMatchesFull() {
    auto module = parse();
    HloTextCache cache;
    QCOMPARE(cache.print(*module), printModule(*module));
    QCOMPARE(cache.printedLines(), int64_t{6});
    QCOMPARE(cache.print(*module), printModule(*module));
    QCOMPARE(cache.reusedLines(), int64_t{6});
    QCOMPARE(cache.printedLines(), int64_t{0});

    ModuleRecord record = ModuleRecord::of(*module);
    QCOMPARE(record.madeCount(), int64_t{6});
    uint64_t verifiedAt = module->mutationCount();
    std::vector<std::unique_ptr<HloPass>> steps;
    steps.push_back(std::make_unique<AddToSubtractPass>());
    steps.push_back(std::make_unique<SwapOperandsPass>());
    steps.push_back(std::make_unique<SweepPass>());
    steps.push_back(std::make_unique<NoopPass>());
    for (const auto& pass : steps) {
        const QByteArray where(pass->name().data(), static_cast<int>(pass->name().size()));
        QVERIFY2(pass->run(*module).isOk(), where.constData());
        QCOMPARE(cache.print(*module), printModule(*module));
        QVERIFY2(cache.reusedLines() > 0, where.constData());
        const ModuleRecord full = ModuleRecord::of(*module);
        const ModuleRecord incremental = ModuleRecord::of(*module, &record);
        QCOMPARE(describe(diffModules(record, incremental)), describe(diffModules(record, full)));
        QCOMPARE(incremental.idsInPrintOrder(), full.idsInPrintOrder());
        QVERIFY2(incremental.madeCount() < full.madeCount(), where.constData());
        QVERIFY(verifyModuleChangedSince(*module, verifiedAt).isOk());
        verifiedAt = module->mutationCount();
        record = ModuleRecord::of(*module, &incremental);
        QCOMPARE(record.madeCount(), int64_t{0});
    }
    // The sweep removed %unused and %zero; subtract replaced add.
    QVERIFY(cache.print(*module).find("%unused") == std::string::npos);
    QVERIFY(cache.print(*module).find("subtract(") != std::string::npos);
}

// A change of an operand's shape, a rename and a called computation's rename reprint
// the lines that show them, not only the changed instruction's.
void TestPipeline::incrementalPrintReprintsUsersOfAChange() {
    auto module = parse(R"(HloModule r
%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
ENTRY %e (p: f32[2,3]) -> f32[2] {
  %p = f32[2,3]{1,0} parameter(0)
  %n = f32[2,3]{1,0} negate(%p)
  %zero = f32[] constant(0)
  ROOT %r = f32[2]{0} reduce(%n, %zero), dimensions={1}, to_apply=%add_f32
})");
    HloTextCache cache;
    QCOMPARE(cache.print(*module), printModule(*module));
    RelayoutPass relayout;
    QVERIFY(*relayout.run(*module));
    std::string text = cache.print(*module);
    QCOMPARE(text, printModule(*module));
    QVERIFY(text.find("reduce(f32[2,3]{0,1} %n") != std::string::npos);
    QCOMPARE(cache.printedLines(), int64_t{2});  // %n and its user %r

    module->entryComputation()->findInstruction("zero")->setName("nought");
    text = cache.print(*module);
    QCOMPARE(text, printModule(*module));
    QVERIFY(text.find("f32[] %nought)") != std::string::npos);

    module->findComputation("add_f32")->setName("sum");
    text = cache.print(*module);
    QCOMPARE(text, printModule(*module));
    QVERIFY(text.find("to_apply=%sum") != std::string::npos);

    // Control edges show on the successor.
    HloInstruction* n = module->entryComputation()->findInstruction("n");
    module->entryComputation()->findInstruction("nought")->addControlDependencyTo(n);
    text = cache.print(*module);
    QCOMPARE(text, printModule(*module));
    QVERIFY(text.find("control-predecessors={%nought}") != std::string::npos);
}

// The incremental verifier checks the users of a changed instruction, and everything
// after a header change.
void TestPipeline::incrementalVerifierChecksUsersOfAChange() {
    auto module = parse();
    QVERIFY(verifyModule(*module).isOk());
    const uint64_t verifiedAt = module->mutationCount();
    QVERIFY(verifyModuleChangedSince(*module, verifiedAt).isOk());
    // %x becomes f32[5]: %x itself is valid, its users %add and %mul are not.
    module->entryComputation()->findInstruction("x")->setShape(
        Shape::makeArrayWithLayout(PrimitiveType::F32, {5}, {0}));
    Status status = verifyModuleChangedSince(*module, verifiedAt);
    QVERIFY(!status.isOk());
    QCOMPARE(status.message(), verifyModule(*module).message());

    auto other = parse();
    const uint64_t at = other->mutationCount();
    other->entryComputation()->findInstruction("add")->setShape(
        Shape::makeArrayWithLayout(PrimitiveType::F32, {3}, {0}));
    QVERIFY(!verifyModuleChangedSince(*other, at).isOk());
    // Nothing changed after the later count: nothing is checked.
    QVERIFY(verifyModuleChangedSince(*other, other->mutationCount()).isOk());
    // A header change checks everything again.
    other->setName("renamed");
    QVERIFY(!verifyModuleChangedSince(*other, other->mutationCount() - 1).isOk());
}

namespace {

const char* kTwoCalls = R"(HloModule c
%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
%max_f32 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(f32[] %x, f32[] %y)
}
ENTRY %e (p: f32[2,3]) -> f32[2] {
  %p = f32[2,3]{1,0} parameter(0)
  %n = f32[2,3]{1,0} negate(%p)
  %zero = f32[] constant(0)
  %r = f32[2]{0} reduce(%n, %zero), dimensions={1}, to_apply=%add_f32
  ROOT %q = f32[2]{0} reduce(%n, %zero), dimensions={1}, to_apply=%max_f32
})";

}  // namespace

// A computation that did not change, and calls none that did, is reused whole; a change
// inside a called computation reprints it and keeps its callers' text.
void TestPipeline::incrementalPrintReusesUnchangedComputations() {
    auto module = parse(kTwoCalls);
    HloTextCache cache;
    QCOMPARE(cache.print(*module), printModule(*module));
    QCOMPARE(cache.reusedComputations(), int64_t{0});
    QCOMPARE(cache.print(*module), printModule(*module));
    QCOMPARE(cache.reusedComputations(), int64_t{3});

    // A change in the entry: both reducers are reused.
    module->entryComputation()->findInstruction("zero")->setName("nought");
    std::string text = cache.print(*module);
    QCOMPARE(text, printModule(*module));
    QCOMPARE(cache.reusedComputations(), int64_t{2});
    QCOMPARE(cache.printedLines(), int64_t{3});  // %nought and its users %r, %q

    // A change inside %max_f32: it is printed again; the entry and %add_f32 are reused.
    module->findComputation("max_f32")->findInstruction("m")->setName("biggest");
    text = cache.print(*module);
    QCOMPARE(text, printModule(*module));
    QVERIFY(text.find("ROOT %biggest = f32[] maximum") != std::string::npos);
    QCOMPARE(cache.reusedComputations(), int64_t{1});

    // A called computation's rename shows in its caller's line.
    module->findComputation("add_f32")->setName("sum");
    text = cache.print(*module);
    QCOMPARE(text, printModule(*module));
    QVERIFY(text.find("to_apply=%sum") != std::string::npos);
    QCOMPARE(cache.reusedComputations(), int64_t{1});  // %max_f32

    // Nothing changed since: everything is reused.
    QCOMPARE(cache.print(*module), printModule(*module));
    QCOMPARE(cache.reusedComputations(), int64_t{3});
}

// The incremental verifier checks a caller whose callee changed (in a computation that
// did not), and looks for call cycles when a call changed.
void TestPipeline::incrementalVerifierChecksCallsOfAChange() {
    auto module = parse(kTwoCalls);
    QVERIFY(verifyModule(*module).isOk());
    uint64_t at = module->mutationCount();
    // %max_f32 now maps f32[2] to f32[2], valid in itself: the reduce %q calling it in
    // the unchanged entry no longer verifies.
    HloComputation* max = module->findComputation("max_f32");
    for (const char* name : {"x", "y", "m"})
        max->findInstruction(name)->setShape(
            Shape::makeArrayWithLayout(PrimitiveType::F32, {2}, {0}));
    Status status = verifyModuleChangedSince(*module, at);
    QVERIFY(!status.isOk());
    QCOMPARE(status.message(), verifyModule(*module).message());
    QVERIFY2(status.message().find("%q") != std::string::npos, status.message().c_str());

    // A reducer that calls itself: a call cycle made by a changed call.
    auto other = parse(kTwoCalls);
    at = other->mutationCount();
    HloComputation* add = other->findComputation("add_f32");
    HloInstruction* sum = add->findInstruction("s");
    auto call = std::make_unique<HloInstruction>(HloOpcode::kCall, "again", sum->shape());
    call->appendOperand(add->findInstruction("a"));
    call->appendOperand(add->findInstruction("b"));
    call->setCalledComputation("to_apply", add);
    add->addInstruction(std::move(call));
    status = verifyModuleChangedSince(*other, at);
    QVERIFY(!status.isOk());
    QVERIFY2(status.message().find("recursively") != std::string::npos, status.message().c_str());
}

QTEST_APPLESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
