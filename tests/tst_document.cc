// DocumentLoader and DocumentWorker: every input kind, errors that keep the
// previous document, XLA dump folders, stepping through the cpu pipeline,
// target switches, pass toggles and fusion what-ifs.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include "core/text/hlo_printer.h"
#include "compiler/pipeline/pipeline_session.h"
#include "compiler/registry/target_pipelines.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/json/hlo_json.h"
#include "core/support/thread_handoff.h"
#include "views/document/document_loader.h"
#include "views/document/document_worker.h"
#include "tests/event_wait.h"

using namespace hloscope;

namespace {

bool writeFile(const QString& path, const std::string& text) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    return f.write(text.data(), static_cast<qint64>(text.size())) == static_cast<qint64>(text.size());
}

std::string exampleText(const QString& file) {
    QFile f(QStringLiteral(":/examples/") + file);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll().toStdString();
}

int fusionCount(const HloModule& module) {
    int n = 0;
    for (const auto& c : module.computations())
        for (const auto& i : c->instructions()) n += i->opcode() == HloOpcode::kFusion;
    return n;
}

const HloInstruction* findInstruction(const HloModule& module, const std::string& name) {
    for (const auto& c : module.computations())
        for (const auto& i : c->instructions())
            if (i->name() == name) return i.get();
    return nullptr;
}

int passIndex(const DocumentState& state, const std::string& pass) {
    for (size_t i = 0; i < state.passes.size(); ++i)
        if (state.passes[i] == pass) return static_cast<int>(i);
    return -1;
}

const char* const kStableHlo = R"(func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = stablehlo.multiply %0, %b : tensor<2xf32>
  return %1 : tensor<2xf32>
}
)";

}  // namespace

class TestDocument : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { qRegisterMetaType<hloscope::DocumentStatePtr>(); }

    void examplesAreEmbedded() {
        const auto& examples = document_loader::examples();
        QVERIFY(examples.size() >= 9);
        bool hasMlp = false;
        for (const ExampleInfo& e : examples) hasMlp = hasMlp || e.name == QLatin1String("mlp");
        QVERIFY(hasMlp);
    }

    void loadEachExample() {
        for (const ExampleInfo& e : document_loader::examples()) {
            DocumentWorker worker;
            QSignalSpy states(&worker, &DocumentWorker::stateChanged);
            QSignalSpy failures(&worker, &DocumentWorker::failed);
            worker.openExample(e.name);
            QVERIFY2(failures.isEmpty(), qPrintable(e.name + QLatin1String(": ") +
                                                    (failures.isEmpty() ? QString() : failures[0][0].toString())));
            QCOMPARE(states.size(), 1);
            DocumentStatePtr state = worker.state();
            QVERIFY(state);
            QCOMPARE(QString::fromStdString(state->displayName), e.name);
            QVERIFY(state->path.empty());
            QCOMPARE(state->current, 0);
            QCOMPARE(state->snapshotCount(), 1);
            QVERIFY(state->module);
            QVERIFY(!state->previous);
            QVERIFY(!state->passes.empty());
            QCOMPARE(state->passEnabled.size(), state->passes.size());
            QCOMPARE(state->target, std::string("cpu"));
        }
    }

    void unknownExampleFails() {
        DocumentWorker worker;
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        worker.openExample(QStringLiteral("no_such_model"));
        QCOMPARE(failures.size(), 1);
        QVERIFY(failures[0][0].toString().contains(QLatin1String("mlp")));
        QVERIFY(!worker.state());
    }

    void loadJsonAndMlir() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto module = document_loader::loadExample(QStringLiteral("mlp"));
        QVERIFY(module.isOk());
        const QString json = dir.filePath(QStringLiteral("mlp.json"));
        QVERIFY(writeFile(json, moduleToJson(*module->module)));
        const QString mlir = dir.filePath(QStringLiteral("add_mul.mlir"));
        QVERIFY(writeFile(mlir, kStableHlo));

        DocumentWorker worker;
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        worker.open(json);
        QVERIFY2(failures.isEmpty(), qPrintable(failures.isEmpty() ? QString() : failures[0][0].toString()));
        QCOMPARE(worker.state()->displayName, std::string("mlp.json"));
        QCOMPARE(worker.state()->module->name(), module->module->name());
        worker.open(mlir);
        QVERIFY2(failures.isEmpty(), qPrintable(failures.isEmpty() ? QString() : failures[0][0].toString()));
        DocumentStatePtr state = worker.state();
        QCOMPARE(state->displayName, std::string("add_mul.mlir"));
        QVERIFY(state->module->entryComputation());
        int multiplies = 0;
        for (const auto& i : state->module->entryComputation()->instructions())
            multiplies += i->opcode() == HloOpcode::kMultiply;
        QCOMPARE(multiplies, 1);
        QCOMPARE(state->path, QFileInfo(mlir).absoluteFilePath().toStdString());
    }

    void malformedFileKeepsPreviousState() {
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad.hlo"));
        QVERIFY(writeFile(bad, "HloModule bad\n\nENTRY %main (p: f32[4]) -> f32[4] {\n"
                               "  %p = f32[4] parameter(0)\n  ROOT %r = f32[4] frobnicate(%p)\n}\n"));
        DocumentWorker worker;
        worker.openExample(QStringLiteral("mlp"));
        worker.stepTo(2);
        DocumentStatePtr before = worker.state();
        QVERIFY(before);
        QSignalSpy states(&worker, &DocumentWorker::stateChanged);
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        worker.open(bad);
        QCOMPARE(failures.size(), 1);
        const QString message = failures[0][0].toString();
        QVERIFY2(QRegularExpression(QStringLiteral(R"(bad\.hlo:5:\d+: error: )")).match(message).hasMatch(),
                 qPrintable(message));
        QCOMPARE(states.size(), 0);
        QCOMPARE(worker.state(), before);
        // The previous document still works.
        worker.stepTo(3);
        QCOMPARE(states.size(), 1);
        QCOMPARE(worker.state()->current, 3);
        QCOMPARE(worker.state()->displayName, std::string("mlp"));
        // Missing files too.
        worker.open(dir.filePath(QStringLiteral("missing.hlo")));
        QCOMPARE(failures.size(), 2);
        QVERIFY(failures[1][0].toString().contains(QLatin1String("missing.hlo")));
        QCOMPARE(worker.state()->displayName, std::string("mlp"));
    }

    // A module that parses but does not verify opens at its input; running a pass on it
    // says why not.
    void unverifiableModuleOpensAtItsInput() {
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("mismatch.hlo"));
        QVERIFY(writeFile(bad, "HloModule mismatch\n\nENTRY %main (a: f32[2], b: f32[3]) -> f32[2] {\n"
                               "  %a = f32[2] parameter(0)\n  %b = f32[3] parameter(1)\n"
                               "  ROOT %c = f32[2] add(%a, %b)\n}\n"));
        DocumentWorker worker;
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        worker.open(bad);
        QVERIFY2(failures.isEmpty(), qPrintable(failures.isEmpty() ? QString() : failures[0][0].toString()));
        QVERIFY(worker.state());
        QCOMPARE(worker.state()->current, 0);
        QCOMPARE(worker.state()->snapshotCount(), 1);
        QVERIFY(worker.state()->currentSnapshot()->text->find("add(") != std::string::npos);
        worker.stepTo(1);
        QCOMPARE(failures.size(), 1);
        QVERIFY2(failures[0][0].toString().contains(QLatin1String("does not verify")),
                 qPrintable(failures[0][0].toString()));
    }

    void dumpFolder() {
        // A synthetic --xla_dump_to folder: module 1 with per-pass files made
        // from our own cpu pipeline's snapshots, module 2 with only the
        // before/after files, a link leading outside and unrelated files.
        QTemporaryDir dir, outside;
        auto loaded = document_loader::loadExample(QStringLiteral("softmax"));
        QVERIFY(loaded.isOk());
        auto pipeline = targetPipeline("cpu");
        QVERIFY(pipeline.isOk());
        auto session = PipelineSession::create(std::move(loaded->module), *pipeline);
        QVERIFY(session.isOk());
        QVERIFY((*session)->runAll().isOk());
        const std::vector<PassSnapshot>& snapshots = (*session)->snapshots();
        const QString prefix = dir.filePath(QStringLiteral("module_0001.jit_softmax."));
        QVERIFY(writeFile(prefix + QStringLiteral("before_optimizations.txt"), *snapshots[0].text));
        QVERIFY(writeFile(prefix + QStringLiteral("after_optimizations.txt"), *snapshots.back().text));
        int changed = 0;
        for (size_t i = 1; i < snapshots.size(); ++i) {
            const QString name = prefix + QStringLiteral("%1.cpu-pipeline.after_%2.txt")
                                              .arg(i, 4, 10, QLatin1Char('0'))
                                              .arg(QString::fromStdString(snapshots[i].pass));
            QVERIFY(writeFile(name, *snapshots[i].text));
            changed += *snapshots[i].text != *snapshots[i - 1].text;
        }
        QVERIFY(changed > 0);
        QVERIFY(writeFile(dir.filePath(QStringLiteral("module_0002.jit_mlp.before_optimizations.txt")),
                          exampleText(QStringLiteral("mlp.hlo"))));
        QVERIFY(writeFile(dir.filePath(QStringLiteral("module_0001.jit_softmax.ir-no-opt.ll")), "; llvm"));
        const QString secret = outside.filePath(QStringLiteral("secret.txt"));
        QVERIFY(writeFile(secret, exampleText(QStringLiteral("mlp.hlo"))));
        QVERIFY(QFile::link(secret, dir.filePath(QStringLiteral("module_0003.jit_x.before_optimizations.txt"))));

        auto modules = document_loader::listDumpFolder(dir.path());
        QVERIFY(modules.isOk());
        QCOMPARE(modules->size(), size_t(2));  // the link outside is not followed
        QCOMPARE((*modules)[0].id, QStringLiteral("module_0001.jit_softmax"));
        QCOMPARE((*modules)[0].moduleName, QStringLiteral("jit_softmax"));
        QCOMPARE((*modules)[0].passes.size(), snapshots.size() - 1);
        QCOMPARE((*modules)[0].passes[0].pipeline, QStringLiteral("cpu-pipeline"));
        QCOMPARE((*modules)[0].passes[0].pass, QString::fromStdString(snapshots[1].pass));
        QVERIFY(!(*modules)[0].afterOptimizations.isEmpty());
        QCOMPARE((*modules)[1].id, QStringLiteral("module_0002.jit_mlp"));
        QVERIFY((*modules)[1].passes.empty());
        QVERIFY(!document_loader::loadDumpModule(dir.path(), QStringLiteral("module_0003.jit_x")).isOk());
        QVERIFY(!document_loader::listDumpFolder(outside.path()).isOk());

        // Opening the folder opens its first module with XLA's timeline.
        DocumentWorker worker;
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        worker.open(dir.path());
        QVERIFY2(failures.isEmpty(), qPrintable(failures.isEmpty() ? QString() : failures[0][0].toString()));
        DocumentStatePtr state = worker.state();
        QVERIFY(state->externalTimeline);
        QCOMPARE(state->moduleId, std::string("module_0001.jit_softmax"));
        QCOMPARE(state->passes.size(), snapshots.size() - 1);
        QCOMPARE(state->passes[0], "cpu-pipeline: " + snapshots[1].pass);
        QCOMPARE(state->snapshotCount(), static_cast<int>(snapshots.size()));
        int withDiff = 0;
        for (size_t i = 1; i < snapshots.size(); ++i) {
            const PassSnapshot& s = (*state->snapshots)[i];
            QCOMPARE(s.changed, *snapshots[i].text != *snapshots[i - 1].text);
            if (!s.changed) QVERIFY(s.diff.empty());
            if (!s.changed) QCOMPARE(s.text, (*state->snapshots)[i - 1].text);
            withDiff += !s.diff.empty();
        }
        QVERIFY(withDiff > 0);
        // Stepping materialises XLA's module; names keep their ids.
        const std::string entryParam = state->module->entryComputation()->parameter(0)->name();
        const int64_t id = findInstruction(*state->module, entryParam)->uniqueId();
        worker.stepTo(state->snapshotCount() - 1);
        state = worker.state();
        QCOMPARE(state->current, state->snapshotCount() - 1);
        QVERIFY(fusionCount(*state->module) > 0);
        QCOMPARE(findInstruction(*state->module, entryParam)->uniqueId(), id);
        // No re-runs on XLA's timeline; the target only labels it.
        worker.setPassEnabled(0, false);
        QCOMPARE(failures.size(), 1);
        QVERIFY(failures[0][0].toString().contains(QLatin1String("dump")));
        worker.setTarget(QStringLiteral("h100"));
        QCOMPARE(worker.state()->target, std::string("h100"));
        QCOMPARE(worker.state()->current, state->current);
        // The second module has no per-pass files: our pipeline runs on it.
        worker.openDumpModule(dir.path(), QStringLiteral("module_0002.jit_mlp"));
        state = worker.state();
        QVERIFY(!state->externalTimeline);
        QCOMPARE(state->moduleId, std::string("module_0002.jit_mlp"));
        QCOMPARE(state->pipelineTarget, std::string("gpu"));
        worker.openDumpModule(dir.path(), QStringLiteral("module_0009.nothing"));
        QCOMPARE(failures.size(), 2);
        QCOMPARE(worker.state(), state);
    }

    void stepThroughCpuPipeline() {
        DocumentWorker worker;
        QSignalSpy states(&worker, &DocumentWorker::stateChanged);
        QSignalSpy progress(&worker, &DocumentWorker::progress);
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        worker.openExample(QStringLiteral("mlp"));
        DocumentStatePtr first = worker.state();
        const int passes = static_cast<int>(first->passes.size());
        QVERIFY(passes > 5);
        std::shared_ptr<const HloModule> previousModule = first->module;
        for (int i = 1; i <= passes; ++i) {
            const int progressBefore = static_cast<int>(progress.size());
            worker.stepTo(i);
            QVERIFY2(failures.isEmpty(), qPrintable(failures.isEmpty() ? QString() : failures[0][0].toString()));
            QCOMPARE(states.size(), i + 1);
            DocumentStatePtr state = qvariant_cast<DocumentStatePtr>(states.back()[0]);
            QCOMPARE(state, worker.state());
            QCOMPARE(state->current, i);
            QCOMPARE(state->snapshotCount(), i + 1);
            QCOMPARE(state->currentSnapshot()->pass, state->passes[static_cast<size_t>(i - 1)]);
            QVERIFY(state->module);
            QCOMPARE(state->previous, previousModule);  // cached, not re-parsed
            QVERIFY(state->generation > 0);
            // One "running" and one "ran" report per pass.
            QCOMPARE(static_cast<int>(progress.size()) - progressBefore, 2);
            QCOMPARE(progress.back()[1].toInt(), i);
            QCOMPARE(progress.back()[2].toInt(), passes);
            // Unchanged passes share the materialised module.
            if (!state->currentSnapshot()->changed) QCOMPARE(state->module, state->previous);
            // The module shown (a copy of the session's, or parsed from the snapshot) is
            // the snapshot's, ids included.
            QCOMPARE(printModule(*state->module), *state->currentSnapshot()->text);
            std::vector<int64_t> ids;
            for (const auto& computation : state->module->computations())
                for (const auto& instruction : computation->instructions())
                    ids.push_back(instruction->uniqueId());
            QCOMPARE(ids, *state->currentSnapshot()->ids);
            previousModule = state->module;
        }
        DocumentStatePtr last = worker.state();
        QVERIFY(fusionCount(*last->module) > 0);
        // Stepping back is served from the snapshots (no pass runs).
        const int progressBefore = static_cast<int>(progress.size());
        worker.stepTo(1);
        QCOMPARE(worker.state()->current, 1);
        QCOMPARE(static_cast<int>(progress.size()), progressBefore);
        QCOMPARE(worker.state()->snapshots, last->snapshots);
        // Out of range steps clamp.
        worker.stepTo(1000);
        QCOMPARE(worker.state()->current, passes);
        worker.stepTo(-4);
        QCOMPARE(worker.state()->current, 0);
    }

    void targetSwitchKeepsStep() {
        DocumentWorker worker;
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        worker.openExample(QStringLiteral("softmax"));
        worker.stepTo(4);
        const int64_t paramId = worker.state()->module->entryComputation()->parameter(0)->uniqueId();
        worker.setTarget(QStringLiteral("tpu_v4"));
        QVERIFY2(failures.isEmpty(), qPrintable(failures.isEmpty() ? QString() : failures[0][0].toString()));
        DocumentStatePtr state = worker.state();
        QCOMPARE(state->target, std::string("tpu_v4"));
        QCOMPARE(state->pipelineTarget, std::string("tpu"));
        QCOMPARE(state->current, 4);
        QCOMPARE(state->snapshotCount(), 5);
        QCOMPARE(state->module->entryComputation()->parameter(0)->uniqueId(), paramId);
        // Layouts differ once layout assignment ran: tiled on TPU.
        worker.stepTo(static_cast<int>(state->passes.size()));
        const std::string tpuText = *worker.state()->currentSnapshot()->text;
        QVERIFY(tpuText.find(":T(") != std::string::npos);
        worker.setTarget(QStringLiteral("a100"));
        QCOMPARE(worker.state()->pipelineTarget, std::string("gpu"));
        QCOMPARE(worker.state()->current, static_cast<int>(state->passes.size()));
        QVERIFY(worker.state()->currentSnapshot()->text->find(":T(") == std::string::npos);
        worker.setTarget(QStringLiteral("z80"));
        QCOMPARE(failures.size(), 1);
        QVERIFY(failures[0][0].toString().contains(QLatin1String("z80")));
        QCOMPARE(worker.state()->target, std::string("a100"));
    }

    void passTogglesAndStop() {
        DocumentWorker worker;
        worker.openExample(QStringLiteral("mlp"));
        const int dce = passIndex(*worker.state(), "dce");
        QVERIFY(dce >= 0);
        worker.stepTo(dce + 1);
        worker.setPassEnabled(dce, false);
        DocumentStatePtr state = worker.state();
        QVERIFY(!state->passEnabled[static_cast<size_t>(dce)]);
        QCOMPARE(state->current, dce + 1);
        QVERIFY(!state->currentSnapshot()->enabled);
        QVERIFY(!state->currentSnapshot()->changed);
        worker.setPassEnabled(dce, true);
        QVERIFY(worker.state()->currentSnapshot()->enabled);
        worker.setStopAfter(2);
        QCOMPARE(worker.state()->stopAfter, 2);
        worker.stepTo(1000);
        QCOMPARE(worker.state()->current, 3);
        QCOMPARE(worker.state()->snapshotCount(), 4);
        worker.setStopAfter(-1);
        worker.stepTo(1000);
        QCOMPARE(worker.state()->current, static_cast<int>(worker.state()->passes.size()));
    }

    void fusionWhatIfChangesDecisions() {
        DocumentWorker worker;
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        worker.openExample(QStringLiteral("softmax"));
        const int fusion = passIndex(*worker.state(), "fusion");
        QVERIFY(fusion >= 0);
        worker.stepTo(fusion + 1);
        DocumentStatePtr before = worker.state();
        const PassDecision* fused = nullptr;
        for (const PassDecision& d : before->currentSnapshot()->decisions)
            if (d.applied) {
                fused = &d;
                break;
            }
        QVERIFY(fused);
        const std::string pair = fused->producer + ":" + fused->consumer;
        worker.setFusionWhatIf(QString(), QString::fromStdString(pair));
        QVERIFY2(failures.isEmpty(), qPrintable(failures.isEmpty() ? QString() : failures[0][0].toString()));
        DocumentStatePtr after = worker.state();
        QCOMPARE(after->current, fusion + 1);
        QCOMPARE(after->forbidFusion, pair);
        // The pair is refused (the decision may name the fusion that holds
        // the producer by then) and never fused.
        bool forbidden = false, stillFused = false;
        for (const PassDecision& d : after->currentSnapshot()->decisions) {
            forbidden = forbidden || d.reason == "forbidden-by-user";
            stillFused = stillFused || (d.applied && d.producer == fused->producer && d.consumer == fused->consumer);
        }
        QVERIFY(forbidden);
        QVERIFY(!stillFused);
        QVERIFY(*after->currentSnapshot()->text != *before->currentSnapshot()->text);
        // Clearing the what-if restores the original decisions.
        worker.setFusionWhatIf(QString(), QString());
        QCOMPARE(*worker.state()->currentSnapshot()->text, *before->currentSnapshot()->text);
        // A malformed what-if is an error and keeps the state.
        DocumentStatePtr kept = worker.state();
        worker.setFusionWhatIf(QStringLiteral("no-colon"), QString());
        QCOMPARE(failures.size(), 1);
        QCOMPARE(worker.state(), kept);
    }

    void workerOnThread() {
        QThread thread;
        auto* worker = new DocumentWorker;
        worker->moveToThread(&thread);
        // Deleted in its thread as the thread finishes (a deleteLater queued before quit() may
        // never run once the loop has stopped).
        connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
        thread.start();
        // The signals are received here, in this thread, as the GUI receives them (a
        // QSignalSpy would record them in the worker's thread while this one reads it).
        std::vector<DocumentStatePtr> states;
        std::vector<bool> busy;
        QObject receiver;
        connect(worker, &DocumentWorker::stateChanged, &receiver,
                [&states](const DocumentStatePtr& state) {
                    handoff::receive();  // built on the worker's thread
                    states.push_back(state);
                });
        connect(worker, &DocumentWorker::busyChanged, &receiver,
                [&busy](bool on) { busy.push_back(on); });
        QMetaObject::invokeMethod(worker, [worker] { worker->openExample(QStringLiteral("layernorm")); },
                                  Qt::QueuedConnection);
        QMetaObject::invokeMethod(worker, [worker] { worker->stepTo(1000); }, Qt::QueuedConnection);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(states.size() == 2, 60000);
        const DocumentStatePtr& state = states[1];
        QCOMPARE(state->current, static_cast<int>(state->passes.size()));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(busy.size() == 4, 10000);
        QCOMPARE(busy.back(), false);
        thread.quit();
        thread.wait();
    }

    void cancelStopsAtAPassBoundary() {
        // A cancel request set while passes run stops the run; the state
        // shows the last pass reached and the document stays usable.
        DocumentWorker worker;
        worker.openExample(QStringLiteral("bert_encoder_forward"));
        QSignalSpy failures(&worker, &DocumentWorker::failed);
        connect(&worker, &DocumentWorker::progress, &worker,
                [&worker](const QString&, int done, int) {
                    if (done == 2) worker.cancel();
                });
        worker.stepTo(1000);
        QCOMPARE(failures.size(), 1);
        QVERIFY(failures[0][0].toString().contains(QLatin1String("cancelled")));
        QVERIFY(worker.state()->current >= 2);
        QVERIFY(worker.state()->current < static_cast<int>(worker.state()->passes.size()));
        QCOMPARE(worker.state()->current, worker.state()->snapshotCount() - 1);
    }
};

QTEST_GUILESS_MAIN(TestDocument)
#include "tst_document.moc"
