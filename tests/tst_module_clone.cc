// HloModule::clone(): a deep copy that prints the same text and keeps what the printer does
// not show (unique ids, name counters, users' order, control edges, the parameter table, the
// fusion computations' back pointers), shares nothing with the original, and lets passes run
// on it as on the original. The corpus sweep clones every module of ../shared/corpus/hlo
// (a sample in a sanitizer run) and skips when the corpus is absent.
#include <QDir>
#include <QDirIterator>
#include <QTest>

#include <set>

#include "core/io/module_io.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"
#include "tests/sanitizer_run.h"

using namespace hloscope;

namespace {

const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo");

// Everything clone() promises, as one message naming the first difference; empty when equal.
std::string differences(const HloModule& original, const HloModule& copy) {
    if (&original == &copy) return "the copy is the original";
    if (printModule(original) != printModule(copy)) return "printed texts differ";
    std::string whyNot;
    if (!original.structurallyEqual(copy, &whyNot)) return "not structurally equal: " + whyNot;
    if (original.isScheduled() != copy.isScheduled()) return "is_scheduled differs";
    if (original.computationCount() != copy.computationCount()) return "computation count";
    if ((original.entryComputation() == nullptr) != (copy.entryComputation() == nullptr) ||
        (original.entryComputation() &&
         original.entryComputation()->name() != copy.entryComputation()->name()))
        return "entry computation differs";
    std::set<const HloInstruction*> originals;
    std::set<const HloComputation*> originalComputations;
    for (const auto& computation : original.computations()) {
        originalComputations.insert(computation.get());
        for (const auto& instruction : computation->instructions())
            originals.insert(instruction.get());
    }
    const auto sameNames = [](const std::vector<HloInstruction*>& a,
                              const std::vector<HloInstruction*>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i)
            if ((a[i] == nullptr) != (b[i] == nullptr) || (a[i] && a[i]->name() != b[i]->name()))
                return false;
        return true;
    };
    for (size_t c = 0; c < original.computations().size(); ++c) {
        const HloComputation& from = *original.computations()[c];
        const HloComputation& to = *copy.computations()[c];
        const std::string where = "computation " + from.name() + ": ";
        if (to.parent() != &copy) return where + "parent is not the copy";
        if (originalComputations.count(&to)) return where + "shared with the original";
        if (from.executionThread() != to.executionThread()) return where + "execution thread";
        if (!sameNames(from.parameters(), to.parameters())) return where + "parameter table";
        if ((from.fusionInstruction() == nullptr) != (to.fusionInstruction() == nullptr) ||
            (from.fusionInstruction() &&
             (from.fusionInstruction()->name() != to.fusionInstruction()->name() ||
              originals.count(to.fusionInstruction()))))
            return where + "fusion instruction";
        for (size_t i = 0; i < from.instructions().size(); ++i) {
            const HloInstruction& a = *from.instructions()[i];
            const HloInstruction& b = *to.instructions()[i];
            const std::string at = where + "%" + a.name() + ": ";
            if (originals.count(&b)) return at + "shared with the original";
            if (b.parent() != &to) return at + "parent";
            if (a.uniqueId() != b.uniqueId()) return at + "unique id";
            if (!sameNames(a.operands(), b.operands())) return at + "operands";
            if (!sameNames(a.users(), b.users())) return at + "users or their order";
            if (!sameNames(a.controlPredecessors(), b.controlPredecessors()))
                return at + "control predecessors";
            if (!sameNames(a.controlSuccessors(), b.controlSuccessors()))
                return at + "control successors";
            for (const HloInstruction* edge : b.operands())
                if (originals.count(edge)) return at + "an operand is the original's";
            for (const HloInstruction* edge : b.users())
                if (originals.count(edge)) return at + "a user is the original's";
            for (const HloComputation* called : b.calledComputations())
                if (originalComputations.count(called))
                    return at + "calls a computation of the original";
        }
    }
    return {};
}

constexpr const char* kScheduled = R"(HloModule scheduled, is_scheduled=true, entry_computation_layout={(f32[4]{0}, f32[4]{0})->(f32[4]{0}, f32[4]{0})}, input_output_alias={ {0}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }, replica_count=2, frontend_attributes={xla.sdy.meshes="x"}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %a, f32[] %b)
}

%fused (p0: f32[4], p1: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  ROOT %m = f32[4]{0} multiply(f32[4]{0} %p0, f32[4]{0} %p1)
}

ENTRY %main (x: f32[4], y: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %fusion = f32[4]{0} fusion(f32[4]{0} %x, f32[4]{0} %y), kind=kLoop, calls=%fused, metadata={op_name="jit(f)/mul"}
  %neg = f32[4]{0} negate(f32[4]{0} %x), control-predecessors={%fusion}
  %ar = f32[4]{0} all-reduce(f32[4]{0} %neg), replica_groups={{0,1}}, to_apply=%add
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(f32[4]{0} %fusion, f32[4]{0} %ar)
}
)";

}  // namespace

class TestModuleClone : public QObject {
    Q_OBJECT
private slots:
    void keepsWhatThePrinterDoesNotShow() {
        auto parsed = parseHloModule(kScheduled);
        QVERIFY2(parsed.isOk(), parsed.status().message().c_str());
        HloModule& module = **parsed;
        // Users in an order that printing and parsing would not give back: %x's users become
        // [%neg, %fusion] by replacing %fusion's use of %x with %y and back.
        HloInstruction* fusion = module.entryComputation()->findInstruction("fusion");
        HloInstruction* x = module.entryComputation()->findInstruction("x");
        HloInstruction* y = module.entryComputation()->findInstruction("y");
        QVERIFY(fusion && x && y);
        fusion->replaceOperand(0, y);
        fusion->replaceOperand(0, x);
        QCOMPARE(x->users().front()->name(), std::string("neg"));
        // Ids no parse gives: gaps, and a counter ahead of them.
        x->setUniqueId(1000);
        const std::string unique = module.uniqueInstructionName("add");

        std::unique_ptr<HloModule> copy = module.clone();
        QVERIFY2(differences(module, *copy).empty(), differences(module, *copy).c_str());
        QVERIFY(copy->isScheduled());
        QCOMPARE(copy->replicaCount(), std::optional<int64_t>(2));
        QCOMPARE(copy->inputOutputAliases(), module.inputOutputAliases());
        QCOMPARE(copy->bufferDonors(), module.bufferDonors());
        QCOMPARE(copy->attributes(), module.attributes());
        QCOMPARE(copy->entryComputationLayout(), module.entryComputationLayout());
        QCOMPARE(copy->entryComputation()->findInstruction("x")->uniqueId(), int64_t{1000});
        QCOMPARE(copy->entryComputation()->findInstruction("x")->users().front()->name(),
                 std::string("neg"));
        // The counters continue where the original's are.
        QCOMPARE(copy->nextUniqueId(), module.nextUniqueId());
        QCOMPARE(copy->uniqueInstructionName("add"), module.uniqueInstructionName("add"));
        QVERIFY(copy->uniqueInstructionName("add") != unique);
        // The fusion computation points back to the copy's fusion.
        const HloComputation* fused = copy->findComputation("fused");
        QVERIFY(fused);
        QCOMPARE(fused->fusionInstruction(), copy->entryComputation()->findInstruction("fusion"));
        QVERIFY(verifyModule(*copy).isOk());
    }

    void copyIsIndependent() {
        auto parsed = parseHloModule(kScheduled);
        QVERIFY(parsed.isOk());
        const std::string before = printModule(**parsed);
        std::unique_ptr<HloModule> copy = (*parsed)->clone();
        HloComputation* entry = copy->entryComputation();
        HloInstruction* neg = entry->findInstruction("neg");
        neg->setName("renamed");
        neg->setMetadata("op_name=\"changed\"");
        QVERIFY(entry->replaceInstruction(entry->findInstruction("ar"), neg).isOk());
        copy->setIsScheduled(false);
        QCOMPARE(printModule(**parsed), before);
        QVERIFY(printModule(*copy) != before);
        // The original outlives nothing of the copy's: destroying the copy first is safe.
        copy.reset();
        QCOMPARE(printModule(**parsed), before);
    }

    void examplesAndCorpus() {
        QStringList files;
        QDirIterator examples(QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples"),
                              {QStringLiteral("*.hlo")}, QDir::Files);
        while (examples.hasNext()) files << examples.next();
        QStringList corpus;
        QDirIterator it(kCorpus, {QStringLiteral("*.hlo")}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) corpus << it.next();
        corpus.sort();
        if (corpus.isEmpty()) qInfo("../shared/corpus is absent: only the examples are cloned");
        files << testing::corpusSample(corpus);
        int cloned = 0;
        QStringList failures;
        for (const QString& file : files) {
            auto text = readFileToString(file.toStdString());
            QVERIFY(text.isOk());
            auto modules = loadModules(*text, file.toStdString());
            if (!modules.isOk()) continue;  // invalid/ holds modules that must not load
            for (const auto& module : *modules) {
                const std::string why = differences(*module, *module->clone());
                if (!why.empty()) failures << file + QStringLiteral(": ") + QString::fromStdString(why);
                ++cloned;
            }
        }
        qInfo("%d modules cloned, %lld differences", cloned, static_cast<long long>(failures.size()));
        QVERIFY2(failures.isEmpty(), qPrintable(failures.mid(0, 10).join(QLatin1Char('\n'))));
    }
};

QTEST_GUILESS_MAIN(TestModuleClone)
#include "tst_module_clone.moc"
