// InspectorWidget: properties, links to operands/users, metadata, cost and
// predicted time, measured times, TPU tiling drawing and padded sizes.
#include <QSignalSpy>
#include <QTest>
#include <QUrl>

#include "compiler/cost/cost_analysis.h"
#include "compiler/cost/performance_model.h"
#include "compiler/layout/tpu_tiling.h"
#include "core/text/hlo_parser.h"
#include "tests/panel_test_util.h"
#include "views/model/model_figures.h"
#include "views/fusion/fusion_decision_model.h"
#include "views/inspector/inspector_widget.h"
#include "views/inspector/tiling_diagram.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

const HloInstruction* find(const HloModule& module, const std::string& name) {
    for (const auto& c : module.computations())
        for (const auto& i : c->instructions())
            if (i->name() == name) return i.get();
    return nullptr;
}

}  // namespace

class TestInspector : public QObject {
    Q_OBJECT
private slots:
    void propertiesOfAnUnfusedDot() {
        // Snapshot 0: the module as loaded (no fusion yet).
        DocumentStatePtr state = makeState("relu_matmul_bias.hlo", "cpu", {}, {}, -1, 0);
        QVERIFY(state);
        InspectorWidget inspector;
        inspector.setState(state);
        inspector.selectInstruction(QStringLiteral("dot.4"));
        QCOMPARE(inspector.currentInstruction(), QStringLiteral("dot.4"));
        const QString text = inspector.propertiesText();
        QVERIFY2(text.contains(QStringLiteral("Opcode\ndot\n")),
                 qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("f32[128,512]")));
        QVERIFY(text.contains(QStringLiteral("Minor-to-major")));
        QVERIFY(text.contains(QStringLiteral("{1,0}")));
        QVERIFY(text.contains(QStringLiteral("jit(relu_matmul_bias)/jit(main)/dot_general")));
        // Operands and users.
        QVERIFY(text.contains(QStringLiteral("Operands (2)")));
        QVERIFY(text.contains(QStringLiteral("%Arg_0.1")));
        QVERIFY(text.contains(QStringLiteral("Users (1)")));
        QVERIFY(text.contains(QStringLiteral("%add.6")));
        // Cost analysis: 2*M*N*K flops.
        const HloInstruction* dot = find(*state->module, "dot.4");
        QCOMPARE(CostAnalysis::of(*dot).flops, 2.0 * 128 * 512 * 256);
        QVERIFY2(text.contains(QStringLiteral("flops\n33.55 M\n")),
                 qPrintable(text));
        // Predicted time on the state's target.
        auto target = targetForName("cpu");
        QVERIFY(target.isOk());
        const KernelPrediction p = predictKernelDetailed(*dot, *target);
        QVERIFY(text.contains(FusionDecisionModel::formatSeconds(p.totalSeconds)));
        QVERIFY(text.contains(QStringLiteral("not measured")));
        // No tiling on cpu.
        QVERIFY(!inspector.tilingDiagram()->hasTiling());
    }

    // A root tuple of 250 values: the first 200 are listed, then how many more.
    void longOperandListsAreCut() {
        std::string text = "HloModule wide\nENTRY e {\n  p = f32[4] parameter(0)\n";
        std::string tuple = "  ROOT t = (";
        std::string operands;
        for (int i = 0; i < 250; ++i) {
            text += "  n" + std::to_string(i) + " = f32[4] negate(p)\n";
            tuple += std::string(i ? ", " : "") + "f32[4]";
            operands += std::string(i ? ", " : "") + "n" + std::to_string(i);
        }
        text += tuple + ") tuple(" + operands + ")\n}\n";
        auto module = parseHloModule(text);
        QVERIFY2(module.isOk(), module.status().toString().c_str());
        auto state = std::make_shared<DocumentState>();
        state->target = "cpu";
        state->module = std::shared_ptr<const HloModule>(std::move(*module));
        InspectorWidget inspector;
        inspector.setState(state);
        inspector.selectInstruction(QStringLiteral("t"));
        const QString shown = inspector.propertiesText();
        QVERIFY(shown.contains(QStringLiteral("Operands (250)")));
        QVERIFY(shown.contains(QStringLiteral("199: %n199")));
        QVERIFY2(!shown.contains(QStringLiteral("%n200")), qPrintable(shown));
        QVERIFY(shown.contains(QStringLiteral("… and 50 more")));
        inspector.selectInstruction(QStringLiteral("p"));
        QVERIFY(inspector.propertiesText().contains(QStringLiteral("Users (250)")));
        QVERIFY(inspector.propertiesText().contains(QStringLiteral("… and 50 more")));
    }

    void linksSelectOperandsAndUsers() {
        DocumentStatePtr state = makeState("relu_matmul_bias.hlo", "cpu", {}, {}, -1, 0);
        InspectorWidget inspector;
        inspector.setState(state);
        inspector.selectInstruction(QStringLiteral("add.6"));
        QVERIFY(inspector.propertiesHtml().contains(QStringLiteral("href=\"inst:dot.4\"")));
        QSignalSpy spy(&inspector, &InspectorWidget::instructionSelected);
        inspector.activateLink(QUrl(QStringLiteral("inst:dot.4")));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toString(), QStringLiteral("dot.4"));
        QCOMPARE(inspector.currentInstruction(), QStringLiteral("dot.4"));
        inspector.activateLink(QUrl(QStringLiteral("https://example.com")));
        QCOMPARE(spy.count(), 1);
    }

    void measuredTimes() {
        DocumentStatePtr state = makeState("relu_matmul_bias.hlo", "cpu", {}, {}, -1, 0);
        InspectorWidget inspector;
        inspector.setState(state);
        inspector.selectInstruction(QStringLiteral("dot.4"));
        inspector.setMeasuredTimes({{QStringLiteral("dot.4"), 0.0125}});
        QVERIFY2(inspector.propertiesText().contains(QStringLiteral("12.5 ms (execution panel's last run)")),
                 qPrintable(inspector.propertiesText()));
    }

    void unknownInstruction() {
        DocumentStatePtr state = makeState("relu_matmul_bias.hlo", "cpu", {}, {}, -1, 0);
        InspectorWidget inspector;
        inspector.setState(state);
        inspector.selectInstruction(QStringLiteral("no.such"));
        QVERIFY(inspector.propertiesText().isEmpty());
        inspector.setState(nullptr);  // no crash without a state
        inspector.selectInstruction(QStringLiteral("dot.4"));
        QVERIFY(inspector.propertiesText().isEmpty());
    }

    void fusedInstructionsAndFusions() {
        DocumentStatePtr state = makeState("relu_matmul_bias.hlo", "cpu");
        QVERIFY(state);
        const HloInstruction* fusion = nullptr;
        for (const auto& i : state->module->entryComputation()->instructions())
            if (i->opcode() == HloOpcode::kFusion) fusion = i.get();
        QVERIFY(fusion);
        InspectorWidget inspector;
        inspector.setState(state);
        inspector.selectInstruction(QString::fromStdString(fusion->name()));
        QVERIFY(inspector.propertiesText().contains(QStringLiteral("Fusion kind")));
        // An instruction inside the fused computation is no kernel of its own.
        const HloInstruction* inner = fusion->fusedComputation()->root();
        inspector.selectInstruction(QString::fromStdString(inner->name()));
        QVERIFY2(inspector.propertiesText().contains(QStringLiteral("part of a fused kernel")),
                 qPrintable(inspector.propertiesText()));
    }

    void tpuTilingAndPadding() {
        DocumentStatePtr state = makeState("relu_matmul_bias.hlo", "tpu_v5e");
        QVERIFY(state);
        // Bias broadcast source: f32[512] gets T(128)... pick a rank-2 instruction.
        const HloInstruction* tiled = nullptr;
        for (const auto& i : state->module->entryComputation()->instructions())
            if (i->shape().isArray() && i->shape().rank() == 2 && i->shape().hasLayout() &&
                !i->shape().layout().tiles().empty())
                tiled = i.get();
        QVERIFY(tiled);
        InspectorWidget inspector;
        inspector.setState(state);
        inspector.selectInstruction(QString::fromStdString(tiled->name()));
        TilingDiagram* diagram = inspector.tilingDiagram();
        QVERIFY(diagram->hasTiling());
        QCOMPARE(diagram->tileRows(), int64_t(8));
        QCOMPARE(diagram->tileColumns(), int64_t(128));
        QCOMPARE(diagram->paddedBytes(), paddedSizeInBytes(tiled->shape()));
        QCOMPARE(diagram->logicalBytes(), logicalSizeInBytes(tiled->shape()));
        QVERIFY(inspector.propertiesText().contains(QStringLiteral("T(8,128)")));
        diagram->resize(300, 200);
        QImage image(diagram->size(), QImage::Format_ARGB32);
        diagram->render(&image);  // paints without crashing

        // A padded shape: f32[3,5] in T(8,128) occupies 8 x 128 floats.
        Shape small = Shape::makeArrayWithLayout(PrimitiveType::F32, {3, 5}, {1, 0});
        small.mutableLayout().mutableTiles().push_back(Tile{{8, 128}});
        QVERIFY(diagram->setShape(small));
        QCOMPARE(diagram->paddedBytes(), int64_t(8 * 128 * 4));
        QCOMPARE(diagram->logicalBytes(), int64_t(3 * 5 * 4));
        QVERIFY2(diagram->caption().contains(QStringLiteral("3 x 5 (minor dims) in 8 x 128 tiles T(8,128): 60 B logical, 4096 B padded (98.5% padding)")), qPrintable(diagram->caption()));
        diagram->render(&image);
    }
};

QTEST_MAIN(TestInspector)
#include "tst_inspector.moc"
