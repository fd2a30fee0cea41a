// The XLA vs hloscope panel on a dump folder module (tests/data/xla_dump_mlp): XLA's fusion of
// the after file beside hloscope's at the step shown, per layer and per pair; a pair chosen
// names its instructions; a document that is no dump module says what to open.
#include <QListWidget>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "core/io/module_io.h"
#include "views/document/document_state.h"
#include "views/xla/xla_comparison_panel.h"
#include "tests/event_wait.h"

using namespace hloscope;

namespace {

const QString kDump = QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/data/xla_dump_mlp");

// The dump module's state: the module before optimization loaded, shown after `fused` the
// whole cpu pipeline or as loaded.
DocumentStatePtr dumpState(bool fused, int64_t generation) {
    auto before = loadModuleFromFile((kDump + QStringLiteral("/module_0001.jit_mlp.before_optimizations.txt")).toStdString());
    if (!before.isOk()) return nullptr;
    std::shared_ptr<const HloModule> input(std::move(*before));
    auto layers = std::make_shared<ModelLayers>();
    layers->module = input;
    layers->tree = LayerTree::build(*input);
    auto state = std::make_shared<DocumentState>();
    state->path = kDump.toStdString();
    state->displayName = "xla_dump_mlp/module_0001.jit_mlp";
    state->moduleId = "module_0001.jit_mlp";
    state->layers = layers;
    state->generation = generation;
    if (!fused) {
        state->module = input;
        return state;
    }
    std::shared_ptr<HloModule> stepped = input->clone();
    auto pipeline = targetPipeline("cpu");
    if (!pipeline.isOk()) return nullptr;
    auto runner = PipelineRunner::create(*stepped, std::move(*pipeline));
    if (!runner.isOk() || !(*runner)->runAll().isOk()) return nullptr;
    state->module = stepped;
    return state;
}

}  // namespace

class TestXlaComparison : public QObject {
    Q_OBJECT
private slots:
    void fusedAsXlaDid() {
        XlaComparisonPanel panel;
        QSignalSpy ready(&panel, &XlaComparisonPanel::comparisonReady);
        DocumentStatePtr state = dumpState(true, 1);
        QVERIFY(state);
        panel.setState(state);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 30000);
        QVERIFY(panel.comparison());
        QCOMPARE(panel.comparison()->edges, int64_t(9));
        QVERIFY2(panel.summaryText().contains(QLatin1String("100.0% agree")), qPrintable(panel.summaryText()));
        QCOMPARE(panel.layerTree()->topLevelItemCount(), 3);  // dense_0, dense_1, head
        QCOMPARE(panel.layerTree()->topLevelItem(0)->text(0), QStringLiteral("dense_0"));
        QCOMPARE(panel.layerTree()->topLevelItem(0)->text(2), QStringLiteral("2"));
        QCOMPARE(panel.pairList()->count(), 0);
    }

    void unfusedDiffersEverywhereXlaFused() {
        XlaComparisonPanel panel;
        QSignalSpy ready(&panel, &XlaComparisonPanel::comparisonReady);
        QSignalSpy chosen(&panel, &XlaComparisonPanel::pairSelected);
        panel.setState(dumpState(false, 1));
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 30000);
        QCOMPARE(panel.pairList()->count(), 6);
        QVERIFY(panel.pairList()->item(0)->text().startsWith(QLatin1String("fused by XLA only")));
        panel.pairList()->setCurrentRow(0);
        QCOMPARE(chosen.count(), 1);
        QVERIFY(!chosen.at(0).at(0).toString().isEmpty() && !chosen.at(0).at(1).toString().isEmpty());
    }

    void notADumpModule() {
        XlaComparisonPanel panel;
        QSignalSpy ready(&panel, &XlaComparisonPanel::comparisonReady);
        auto state = std::const_pointer_cast<DocumentState>(dumpState(false, 1));
        state->moduleId.clear();
        state->path = "/somewhere/model.hlo";
        panel.setState(state);
        HLOSCOPE_TRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 30000);
        QVERIFY(!panel.comparison());
        QVERIFY(panel.summaryText().contains(QLatin1String("before and after optimization")));
        panel.setState(nullptr);
        QCOMPARE(panel.summaryText(), QStringLiteral("No document."));
    }
};

QTEST_MAIN(TestXlaComparison)
#include "tst_xla_comparison.moc"
