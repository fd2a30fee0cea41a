// LayerTree (compiler/layers/): layers from op_name scopes (JAX, TensorFlow), from repeated
// structure (PyTorch/XLA's flat names, no metadata), from called computations and from
// consecutive groups; repeat classes; per-layer figures before and after the cpu pipeline;
// and the corpus models' top levels (skipped when ../shared/corpus is absent).
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QTest>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>

#include "compiler/layers/fusion_comparison.h"
#include "compiler/layers/layer_figures.h"
#include "compiler/layers/layer_tree.h"
#include "compiler/layers/repeated_structure.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/registry/target_pipelines.h"
#include "compiler/targets/target_description.h"
#include "core/io/module_io.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "tests/sanitizer_run.h"

using namespace hloscope;
using hloscope::testing::corpusSample;

namespace {

// How each op of a block is named: (block, op) -> op_name, "" for no metadata.
using Namer = std::function<std::string(int block, const std::string& op)>;

// `blocks` identical dense blocks of 8 instructions each (dot, bias broadcast, add, tanh,
// multiply, negate, exponential, add), each with its own weight and bias parameters.
std::string denseModel(int blocks, const Namer& name) {
    std::string params = "  %x.0 = f32[8,16]{1,0} parameter(0)\n";
    std::string body;
    auto meta = [&](int block, const std::string& op) {
        const std::string n = name(block, op);
        return n.empty() ? std::string() : ", metadata={op_name=\"" + n + "\"}";
    };
    int parameter = 1;
    for (int b = 1; b <= blocks; ++b) {
        const std::string s = std::to_string(b);
        params += "  %w." + s + " = f32[16,16]{1,0} parameter(" + std::to_string(parameter++) + ")\n";
        params += "  %b." + s + " = f32[16]{0} parameter(" + std::to_string(parameter++) + ")\n";
        const std::string prev = "%x." + std::to_string(b - 1);
        body += "  %dot." + s + " = f32[8,16]{1,0} dot(" + prev + ", %w." + s +
                "), lhs_contracting_dims={1}, rhs_contracting_dims={0}" + meta(b, "dot_general") + "\n";
        body += "  %bias." + s + " = f32[8,16]{1,0} broadcast(%b." + s + "), dimensions={1}" +
                meta(b, "broadcast_in_dim") + "\n";
        body += "  %add." + s + " = f32[8,16]{1,0} add(%dot." + s + ", %bias." + s + ")" + meta(b, "add") + "\n";
        body += "  %tanh." + s + " = f32[8,16]{1,0} tanh(%add." + s + ")" + meta(b, "tanh") + "\n";
        body += "  %mul." + s + " = f32[8,16]{1,0} multiply(%tanh." + s + ", %tanh." + s + ")" + meta(b, "mul") + "\n";
        body += "  %neg." + s + " = f32[8,16]{1,0} negate(%mul." + s + ")" + meta(b, "neg") + "\n";
        body += "  %exp." + s + " = f32[8,16]{1,0} exponential(%neg." + s + ")" + meta(b, "exp") + "\n";
        body += "  " + std::string(b == blocks ? "ROOT " : "") + "%x." + s + " = f32[8,16]{1,0} add(%mul." + s +
                ", %exp." + s + ")" + meta(b, "add") + "\n";
    }
    return "HloModule dense\n\nENTRY %main {\n" + params + body + "}\n";
}

std::unique_ptr<HloModule> parse(const std::string& text) {
    auto module = parseHloModule(text);
    if (!module.isOk()) qFatal("%s", module.status().toString().c_str());
    return std::move(*module);
}

QStringList childNames(const LayerTree& tree, int index) {
    QStringList names;
    for (int child : tree.layer(index).children) names << QString::fromStdString(tree.layer(child).name);
    return names;
}

// Every instruction of `computation` (its parameters included) is held by exactly one layer.
void checkEveryInstructionPlaced(const LayerTree& tree, const HloComputation& computation) {
    for (const auto& x : computation.instructions()) {
        const int layer = tree.layerOf(x->name());
        QVERIFY2(layer >= 0, x->name().c_str());
    }
    int64_t owned = 0;
    for (const Layer& layer : tree.layers()) owned += static_cast<int64_t>(layer.instructions.size());
    QCOMPARE(owned, tree.layer(LayerTree::kRoot).instructionCount);
}

}  // namespace

class TestLayerTree : public QObject {
    Q_OBJECT
private slots:
    void opNameScopes() {
        QCOMPARE(opNameScope("jit(f)/jit(main)/block_3/attention/dot_general"),
                 (std::vector<std::string>{"jit(f)", "jit(main)", "block_3", "attention"}));
        QCOMPARE(opNameScope("transpose(jvp(model/x))/dense/dot_general"),
                 (std::vector<std::string>{"transpose(jvp(model/x))", "dense"}));
        QCOMPARE(opNameScope("model/dense_1/MatMul"), (std::vector<std::string>{"model", "dense_1"}));
        QVERIFY(opNameScope("aten__addmm").empty());
        QVERIFY(opNameScope("").empty());
    }

    // JAX: jit(f)/jit(main)/block_N/{dense,act}/op; the shared prefix goes, the op goes.
    void jaxScopes() {
        auto module = parse(denseModel(6, [](int b, const std::string& op) {
            const bool dense = op == "dot_general" || op == "broadcast_in_dim";
            return "jit(f)/jit(main)/block_" + std::to_string(b - 1) + (dense ? "/dense/" : "/act/") + op;
        }));
        const LayerTree tree = LayerTree::build(*module);
        QCOMPARE(tree.source(), std::string("names"));
        QCOMPARE(childNames(tree, LayerTree::kRoot),
                 (QStringList{"13 parameters", "block_0", "block_1", "block_2", "block_3", "block_4", "block_5"}));
        const int block2 = tree.find("block_2");
        QVERIFY(block2 > 0);
        QCOMPARE(tree.layer(block2).instructionCount, int64_t(8));
        QCOMPARE(childNames(tree, block2), (QStringList{"dense", "act"}));
        QCOMPARE(tree.layer(tree.find("block_2/dense")).instructionCount, int64_t(2));
        QCOMPARE(tree.layerOf("tanh.3"), tree.find("block_2/act"));
        // Equal blocks share a repeat class; the parameters are folded and in none.
        QVERIFY(tree.layer(block2).repeatClass >= 0);
        QCOMPARE(static_cast<int>(tree.repeatsOf(block2).size()), 6);
        QCOMPARE(tree.repeatClassSize(tree.layer(block2).repeatClass), 6);
        QCOMPARE(tree.layer(tree.find("13 parameters")).kind, LayerKind::kParameters);
        QCOMPARE(tree.layer(tree.find("13 parameters")).repeatClass, -1);
        QCOMPARE(tree.path(tree.find("block_2/act")),
                 (std::vector<int>{LayerTree::kRoot, block2, tree.find("block_2/act")}));
        QVERIFY(tree.contains(block2, tree.find("block_2/act")));
        QVERIFY(!tree.contains(tree.find("block_1"), tree.find("block_2/act")));
        checkEveryInstructionPlaced(tree, *module->entryComputation());
    }

    // An instruction a pass made under a new name keeps its metadata: its layer is that of its
    // op_name scope; one with neither goes by its operands.
    void newNamesByScope() {
        auto namer = [](int b, const std::string& op) {
            return "jit(f)/jit(main)/block_" + std::to_string(b - 1) + "/act/" + op;
        };
        auto module = parse(denseModel(6, namer));
        const LayerTree tree = LayerTree::build(*module);
        std::string text = denseModel(6, namer);
        for (size_t at = text.find("tanh.3"); at != std::string::npos; at = text.find("tanh.3", at + 1))
            text.replace(at, 6, "fresh.1");
        auto later = parse(text);
        const HloInstruction* fresh = later->entryComputation()->findInstruction("fresh.1");
        QVERIFY(fresh);
        QCOMPARE(tree.layerOf("fresh.1"), -1);
        QCOMPARE(layerOfKernel(tree, *fresh), tree.find("block_2/act"));
        QCOMPARE(tree.layerOfOpName("jit(f)/jit(main)/block_4/act/exp"), tree.find("block_4/act"));
        // "block_4" holds only "act": the two are one layer, "block_4/act".
        QCOMPARE(tree.layerOfOpName("jit(f)/jit(main)/block_4/no_such_scope/exp"), tree.find("block_4/act"));
        QCOMPARE(tree.layerOfOpName("other(g)/block_4/act/exp"), -1);
        QCOMPARE(tree.layerOfOpName(""), -1);
    }

    // Instructions a pass made under new names and without metadata (a batch-norm expander's):
    // a chain that reads a layer's op joins that layer; a chain that reads only parameters (and
    // constants) joins the layer of the ops it feeds, never the folded parameters' layer.
    void passMadeChainsJoinTheirNeighbours() {
        const std::string scope = "jit(f)/jit(main)/";
        auto op = [&](const std::string& block) { return ", metadata={op_name=\"" + scope + block + "/op\"}"; };
        const std::string input = "HloModule m\nENTRY e {\n"
            "  p = f32[8] parameter(0)\n  scale = f32[8] parameter(1)\n"
            "  a = f32[8] negate(p)" + op("block_a") + "\n"
            "  b = f32[8] exponential(a)" + op("block_b") + "\n"
            "  ROOT c = f32[8] tanh(b)" + op("block_c") + "\n}\n";
        auto module = parse(input);
        const LayerTree tree = LayerTree::build(*module);
        const int blockA = tree.find("block_a"), blockC = tree.find("block_c");
        QVERIFY(blockA > 0 && blockC > 0);
        // Later: a.1 and a.2 (new, reading a) between a and b; s.1 and s.2 (new, from the
        // parameter scale and a constant) feeding c.
        auto later = parse("HloModule m\nENTRY e {\n"
            "  p = f32[8] parameter(0)\n  scale = f32[8] parameter(1)\n"
            "  a = f32[8] negate(p)" + op("block_a") + "\n"
            "  a.1 = f32[8] multiply(a, a)\n  a.2 = f32[8] add(a.1, p)\n"
            "  b = f32[8] exponential(a.2)" + op("block_b") + "\n"
            "  k.1 = f32[] constant(2)\n  k.2 = f32[8] broadcast(k.1), dimensions={}\n"
            "  s.1 = f32[8] multiply(scale, k.2)\n  s.2 = f32[8] sqrt(s.1)\n"
            "  c.0 = f32[8] add(b, s.2)\n"
            "  ROOT c = f32[8] tanh(c.0)" + op("block_c") + "\n}\n");
        const auto owners = layersOf(tree, *later->entryComputation());
        auto layerOf = [&](const char* name) { return owners.at(later->entryComputation()->findInstruction(name)); };
        QCOMPARE(layerOf("a.1"), blockA);
        QCOMPARE(layerOf("a.2"), blockA);
        QCOMPARE(layerOf("c.0"), tree.find("block_b"));  // reads b first
        QCOMPARE(layerOf("s.1"), tree.find("block_b"));  // feeds c.0, which joined block_b
        QCOMPARE(layerOf("s.2"), tree.find("block_b"));
        QCOMPARE(layerOf("k.2"), tree.find("block_b"));
        QVERIFY(tree.layer(layerOf("scale")).kind == LayerKind::kParameters || layerOf("scale") < 0 ||
                layerOf("scale") == LayerTree::kRoot);
        QCOMPARE(layerOf("c"), blockC);
    }

    // TensorFlow: model/block_N/dense/MatMul; an instruction without metadata joins its user's
    // scope; single-child scopes become one ("dense/inner").
    void tensorFlowScopes() {
        auto module = parse(denseModel(6, [](int b, const std::string& op) -> std::string {
            if (op == "broadcast_in_dim") return "";  // no metadata: joins its user (add)
            const std::string block = "model/block_" + std::to_string(b - 1);
            return op == "dot_general" || op == "add" ? block + "/dense/inner/" + op : block + "/" + op;
        }));
        const LayerTree tree = LayerTree::build(*module);
        QCOMPARE(tree.source(), std::string("names"));
        QCOMPARE(childNames(tree, LayerTree::kRoot).mid(1),
                 (QStringList{"block_0", "block_1", "block_2", "block_3", "block_4", "block_5"}));
        const int block0 = tree.find("block_0");
        QCOMPARE(childNames(tree, block0), QStringList{"dense/inner"});
        QCOMPARE(tree.layerOf("bias.1"), tree.find("block_0/dense/inner"));
        QCOMPARE(tree.layer(tree.find("block_0/dense/inner")).instructionCount, int64_t(4));
        QCOMPARE(tree.layer(block0).instructions.size(), size_t(4));  // tanh, mul, neg, exp
        checkEveryInstructionPlaced(tree, *module->entryComputation());
    }

    // PyTorch/XLA's flat names (aten__addmm) and no metadata at all: the repeats are the layers.
    void repeatsWithoutScopes_data() {
        QTest::addColumn<bool>("flatNames");
        QTest::newRow("pytorch-xla flat names") << true;
        QTest::newRow("no metadata") << false;
    }
    void repeatsWithoutScopes() {
        QFETCH(bool, flatNames);
        auto module = parse(denseModel(6, [flatNames](int, const std::string& op) {
            return flatNames ? "aten__" + op : std::string();
        }));
        const LayerTree tree = LayerTree::build(*module);
        QCOMPARE(tree.source(), std::string("repeats"));
        QCOMPARE(childNames(tree, LayerTree::kRoot),
                 (QStringList{"13 parameters", "layer 1", "layer 2", "layer 3", "layer 4", "layer 5", "layer 6"}));
        for (int i = 1; i <= 6; ++i) {
            const Layer& layer = tree.layer(tree.find("layer " + std::to_string(i)));
            QCOMPARE(layer.kind, LayerKind::kRepeat);
            QCOMPARE(layer.instructionCount, int64_t(8));
            QCOMPARE(tree.repeatClassSize(layer.repeatClass), 6);
        }
        QCOMPARE(tree.layerOf("dot.4"), tree.find("layer 4"));
        QCOMPARE(tree.layerOf("x.4"), tree.find("layer 4"));
        checkEveryInstructionPlaced(tree, *module->entryComputation());
    }

    // The finder itself: a prologue, five copies of a block, an epilogue; the cuts move back
    // over what precedes each copy's first anchor alike.
    void repeatedStretchCuts() {
        // tokens: prologue 7 8, then 5 x (1 2 [3] 4 5) where 3 is the anchor, then 9 9.
        std::vector<uint64_t> tokens = {7, 8};
        for (int c = 0; c < 5; ++c) tokens.insert(tokens.end(), {1, 2, 3, 4, 5});
        tokens.insert(tokens.end(), {9, 9});
        std::vector<bool> anchors;
        for (uint64_t t : tokens) anchors.push_back(t == 3);
        RepeatSearchOptions options;
        options.minCopyLength = 5;
        const RepeatedStretch found = findRepeatedStretch(tokens, anchors, options);
        QCOMPARE(found.count(), 5);
        QCOMPARE(found.cuts, (std::vector<int>{2, 7, 12, 17, 22, 27}));
        // Copies shorter than the minimum are no layers.
        options.minCopyLength = 6;
        QCOMPARE(findRepeatedStretch(tokens, anchors, options).count(), 0);
        // Nothing repeats: nothing found.
        std::vector<uint64_t> distinct(40);
        for (size_t i = 0; i < distinct.size(); ++i) distinct[i] = i;
        QCOMPARE(findRepeatedStretch(distinct, std::vector<bool>(40, true)).count(), 0);
    }

    // A while loop whose body is a model: a call layer holding the body's layers; the small
    // condition is no layer of its own, its instructions belong to the call layer.
    void whileBodyIsALayer() {
        std::string dense = denseModel(6, [](int b, const std::string& op) {
            return "jit(f)/jit(main)/while/body/block_" + std::to_string(b - 1) + "/" + op;
        });
        // The dense entry becomes the body: it takes and returns (counter, x) and reads weights
        // from its own parameters made into constants of the right shapes.
        std::string body = "%body (state: (s32[], f32[8,16])) -> (s32[], f32[8,16]) {\n"
                           "  %state = (s32[], f32[8,16]{1,0}) parameter(0)\n"
                           "  %i = s32[] get-tuple-element(%state), index=0\n"
                           "  %x.0 = f32[8,16]{1,0} get-tuple-element(%state), index=1\n"
                           "  %one = s32[] constant(1)\n"
                           "  %next = s32[] add(%i, %one)\n";
        for (int b = 1; b <= 6; ++b) {
            const std::string s = std::to_string(b);
            body += "  %cw." + s + " = f32[] constant(0.5)\n";
            body += "  %w." + s + " = f32[16,16]{1,0} broadcast(%cw." + s + "), dimensions={}\n";
            body += "  %cb." + s + " = f32[] constant(0.1)\n";
            body += "  %b." + s + " = f32[16]{0} broadcast(%cb." + s + "), dimensions={}\n";
        }
        const size_t start = dense.find("  %dot.1");
        std::string ops = dense.substr(start, dense.rfind('}') - start);
        ops.replace(ops.find("ROOT "), 5, "");
        body += ops + "  ROOT %out = (s32[], f32[8,16]{1,0}) tuple(%next, %x.6)\n}\n\n";
        const std::string text =
            "HloModule loop\n\n" + body +
            "%cond (cstate: (s32[], f32[8,16])) -> pred[] {\n"
            "  %cstate = (s32[], f32[8,16]{1,0}) parameter(0)\n"
            "  %ci = s32[] get-tuple-element(%cstate), index=0\n"
            "  %n = s32[] constant(4)\n"
            "  ROOT %lt = pred[] compare(%ci, %n), direction=LT\n}\n\n"
            "ENTRY %main {\n"
            "  %x = f32[8,16]{1,0} parameter(0)\n"
            "  %zero = s32[] constant(0)\n"
            "  %init = (s32[], f32[8,16]{1,0}) tuple(%zero, %x)\n"
            "  %loop = (s32[], f32[8,16]{1,0}) while(%init), condition=%cond, body=%body, "
            "metadata={op_name=\"jit(f)/jit(main)/while\"}\n"
            "  ROOT %result = f32[8,16]{1,0} get-tuple-element(%loop), index=1\n}\n";
        auto module = parse(text);
        const LayerTree tree = LayerTree::build(*module);
        QCOMPARE(childNames(tree, LayerTree::kRoot), QStringList{"loop"});
        const int loop = tree.find("loop");
        QCOMPARE(tree.layer(loop).kind, LayerKind::kCall);
        QCOMPARE(tree.layer(loop).caller->name(), std::string("loop"));
        QCOMPARE(childNames(tree, loop), QStringList{"body"});
        const int body_ = tree.find("loop/body");
        QCOMPARE(tree.layer(body_).kind, LayerKind::kComputation);
        // The body's own scope prefix (while/body) goes: its layers are the blocks.
        QVERIFY(childNames(tree, body_).contains(QStringLiteral("block_3")));
        QCOMPARE(tree.layerOf("dot.4"), tree.find("loop/body/block_3"));
        QCOMPARE(tree.layerOf("lt"), loop);  // the condition's
        QCOMPARE(tree.layerOf("x"), LayerTree::kRoot);
    }

    // No names, nothing repeated: consecutive groups, at most maxChildren a level.
    void groupsWhenNothingElse() {
        std::string text = "HloModule chain\n\nENTRY %main {\n  %v0 = f32[1]{0} parameter(0)\n";
        const char* ops[] = {"negate", "exponential", "tanh", "abs", "sqrt", "log", "sine", "cosine"};
        for (int i = 1; i <= 300; ++i) {
            // Shapes grow so that no stretch repeats.
            text += "  " + std::string(i == 300 ? "ROOT " : "") + "%v" + std::to_string(i) + " = f32[1]{0} " +
                    ops[(i * 7 + i / 8) % 8] + "(%v" + std::to_string(i - 1) + ")\n";
        }
        text += "}\n";
        auto module = parse(text);
        LayerTreeOptions options;
        options.maxChildren = 10;
        const LayerTree tree = LayerTree::build(*module, options);
        QVERIFY(tree.source() == "groups" || tree.source() == "repeats");
        QVERIFY(tree.layer(LayerTree::kRoot).children.size() <= 10);
        for (const Layer& layer : tree.layers()) QVERIFY(layer.children.size() <= 10);
        checkEveryInstructionPlaced(tree, *module->entryComputation());
    }

    // More scopes than maxChildren: consecutive groups of them, named by their ends.
    void largeLevelsSplit() {
        auto module = parse(denseModel(12, [](int b, const std::string& op) {
            return "model/block_" + std::to_string(b - 1) + "/" + op;
        }));
        LayerTreeOptions options;
        options.maxChildren = 5;
        const LayerTree tree = LayerTree::build(*module, options);
        const QStringList top = childNames(tree, LayerTree::kRoot);
        QVERIFY2(top.size() <= 5, qPrintable(top.join(QLatin1Char(','))));
        QVERIFY(top.contains(QStringLiteral("block_0 – block_3")));
        QCOMPARE(tree.layer(tree.find("block_0 – block_3")).instructionCount, int64_t(32));
        checkEveryInstructionPlaced(tree, *module->entryComputation());
    }

    // Figures: every non-trivial op a kernel before, the fused module's kernels after, summed up
    // the tree; the cpu pipeline keeps names, so each block keeps its kernels.
    void figuresBeforeAndAfterFusion() {
        auto module = parse(denseModel(6, [](int b, const std::string& op) {
            return "jit(f)/jit(main)/block_" + std::to_string(b - 1) + "/" + op;
        }));
        const LayerTree tree = LayerTree::build(*module);
        auto stepped = module->clone();
        auto pipeline = targetPipeline("cpu");
        QVERIFY(pipeline.isOk());
        auto runner = PipelineRunner::create(*stepped, std::move(*pipeline));
        QVERIFY(runner.isOk());
        QVERIFY((*runner)->runAll().isOk());
        auto target = resolveTargetDescription("cpu");
        QVERIFY(target.isOk());
        const std::vector<LayerFigures> figures = computeLayerFigures(tree, *module, *stepped, *target);
        const LayerFigures& total = figures[LayerTree::kRoot];
        QCOMPARE(total.instructions, int64_t(61));
        QCOMPARE(total.kernelsBefore, int64_t(6 * 8));  // every instruction but the parameters
        QVERIFY(total.kernelsAfter < total.kernelsBefore);
        QVERIFY(total.predictedSeconds > 0);
        int64_t sumAfter = 0;
        double sumSeconds = 0;
        for (int child : tree.layer(LayerTree::kRoot).children) {
            sumAfter += figures[static_cast<size_t>(child)].kernelsAfter;
            sumSeconds += figures[static_cast<size_t>(child)].predictedSeconds;
            if (tree.layer(child).kind == LayerKind::kParameters) continue;
            QVERIFY2(figures[static_cast<size_t>(child)].kernelsAfter >= 1, tree.layer(child).name.c_str());
            QVERIFY(figures[static_cast<size_t>(child)].kernelsAfter <
                    figures[static_cast<size_t>(child)].kernelsBefore);
        }
        QCOMPARE(sumAfter, total.kernelsAfter);  // every kernel matched to a block
        QVERIFY(qAbs(sumSeconds - total.predictedSeconds) <= 1e-12 + 1e-9 * total.predictedSeconds);
    }

    // XLA vs hloscope on a dump pair (tests/data/xla_dump_mlp): ops matched by name through
    // XLA's fusions (".clone" copies), per-layer kernel counts, edges fused by one side only.
    void xlaVersusHloscope() {
        const std::string dir = HLOSCOPE_SOURCE_DIR "/tests/data/xla_dump_mlp/";
        auto before = loadModuleFromFile(dir + "module_0001.jit_mlp.before_optimizations.txt");
        auto xlaText = loadModuleFromFile(dir + "module_0001.jit_mlp.sm_90a_gpu_after_optimizations.txt");
        QVERIFY2(before.isOk() && xlaText.isOk(), "the dump pair loads");
        const HloModule& xla = **xlaText;
        QVERIFY(!holdsFusions(**before));
        QVERIFY(holdsFusions(xla));
        const auto kernels = kernelOfOps(xla);
        QCOMPARE(kernels.at("add.8"), std::string("loop_maximum_fusion"));
        QCOMPARE(kernels.at("maximum.11"), std::string("loop_maximum_fusion"));
        QCOMPARE(kernels.at("reduce.17"), std::string("input_reduce_fusion"));
        QCOMPARE(kernels.at("dot.6"), std::string("dot.6"));
        QCOMPARE(kernels.at("add.21"), std::string("input_reduce_fusion"));  // the reduce's region goes with it
        const LayerTree tree = LayerTree::build(**before);  // layers by name even for ten ops
        QCOMPARE(childNames(tree, LayerTree::kRoot), (QStringList{"dense_0", "dense_1", "head"}));

        // XLA against itself: every edge decided alike, every op grouped alike.
        const FusionComparison self = compareFusion(**before, tree, xla, xla);
        QCOMPARE(self.ops.size(), size_t(10));
        QCOMPARE(self.edges, int64_t(9));
        QCOMPARE(self.fusedByBoth, int64_t(6));
        QCOMPARE(self.fusedByNeither, int64_t(3));
        QCOMPARE(self.agreement(), 1.0);
        QCOMPARE(self.layers[LayerTree::kRoot].xlaKernels, int64_t(4));
        QCOMPARE(self.layers[static_cast<size_t>(tree.find("dense_0"))].xlaKernels, int64_t(2));
        QCOMPARE(self.layers[LayerTree::kRoot].sameGroup, int64_t(10));

        // Against no fusion at all: the six pairs XLA fused are XLA's alone.
        const FusionComparison none = compareFusion(**before, tree, xla, **before);
        QCOMPARE(static_cast<int64_t>(none.fusedByXlaOnly.size()), int64_t(6));
        QVERIFY(none.fusedByOursOnly.empty());
        QCOMPARE(none.fusedByNeither, int64_t(3));
        QVERIFY(std::find(none.fusedByXlaOnly.begin(), none.fusedByXlaOnly.end(),
                          std::make_pair(std::string("tanh.15"), std::string("reduce.17"))) != none.fusedByXlaOnly.end());
        QCOMPARE(none.layers[static_cast<size_t>(tree.find("dense_0"))].oursKernels, int64_t(5));
        QCOMPARE(none.layers[LayerTree::kRoot].sameGroup, int64_t(2));  // the two dots, alone on both sides

        // hloscope's cpu pipeline fuses this model as XLA did.
        auto ours = (*before)->clone();
        auto pipeline = targetPipeline("cpu");
        QVERIFY(pipeline.isOk());
        auto runner = PipelineRunner::create(*ours, std::move(*pipeline));
        QVERIFY(runner.isOk());
        QVERIFY((*runner)->runAll().isOk());
        const FusionComparison real = compareFusion(**before, tree, xla, *ours);
        QCOMPARE(real.missing, int64_t(0));
        QCOMPARE(real.agreement(), 1.0);

        // An op the optimized module lacks is not compared.
        std::string renamedText = printModule(xla);
        for (size_t at = renamedText.find("dot.12"); at != std::string::npos; at = renamedText.find("dot.12", at + 1))
            renamedText.replace(at, 6, "gemm.1");
        auto renamed = parseHloModule(renamedText);
        QVERIFY(renamed.isOk());
        const FusionComparison lacking = compareFusion(**before, tree, **renamed, **renamed);
        QCOMPARE(lacking.missing, int64_t(1));
        QCOMPARE(lacking.edges, int64_t(7));  // the two edges of dot.12 are not compared
    }

    // Every corpus model: a top level of at most maxChildren layers, every entry instruction in
    // a layer; JAX's gemma by its names, Mixtral (no metadata) by its repeats.
    void corpusModels() {
        const QString dir = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models");
        if (!QDir(dir).exists()) QSKIP("../shared/corpus is absent");
        QStringList files;
        QDirIterator it(dir, {QStringLiteral("*.hlo")}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) files << it.next();
        files.sort();
        int arranged = 0;
        for (const QString& file : corpusSample(files)) {
            auto module = loadModuleFromFile(file.toStdString());
            if (!module.isOk()) continue;  // the corpus holds a few that do not parse
            const auto start = std::chrono::steady_clock::now();
            const LayerTree tree = LayerTree::build(**module);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const QString name = QFileInfo(file).fileName();
            const Layer& root = tree.layer(LayerTree::kRoot);
            qInfo("%-60s %6lld instructions, %2zu layers from %-7s (%.0f ms)", qPrintable(name),
                  static_cast<long long>(root.instructionCount), root.children.size(), tree.source().c_str(),
                  seconds * 1e3);
            QVERIFY2(root.children.size() + root.instructions.size() <= 40 + 12, qPrintable(name));
            for (const Layer& layer : tree.layers())
                QVERIFY2(layer.children.size() <= 40, qPrintable(name + QLatin1Char(' ') + QString::fromStdString(layer.key)));
            for (const auto& x : (*module)->entryComputation()->instructions())
                QVERIFY2(tree.layerOf(x->name()) >= 0, qPrintable(name + QLatin1Char(' ') + QString::fromStdString(x->name())));
            if (name == QLatin1String("gemma2_2b_keras_jax.hlo")) {
                QCOMPARE(tree.source(), std::string("names"));
                const QStringList top = childNames(tree, LayerTree::kRoot);
                QVERIFY(top.contains(QStringLiteral("decoder_block_0")));
                QVERIFY(top.contains(QStringLiteral("decoder_block_25")));
                QCOMPARE(tree.layer(tree.find("decoder_block_3")).instructionCount, int64_t(198));
                QCOMPARE(tree.repeatClassSize(tree.layer(tree.find("decoder_block_3")).repeatClass), 12);
            }
            if (name == QLatin1String("bert__bert_single_graph_2.hlo")) {
                // PyTorch/XLA: op names without model scopes (aten__mul, aten__norm.1/...), so
                // consecutive groups, each named by the program line most of it comes from.
                QCOMPARE(tree.source(), std::string("groups"));
                const QStringList top = childNames(tree, LayerTree::kRoot);
                QCOMPARE(top.size(), 22);
                QCOMPARE(top.first(), QStringLiteral("128 parameters"));
                QCOMPARE(top.at(1), QStringLiteral("instructions 1–39 · functional.py:1624"));
                QCOMPARE(top.at(5), QStringLiteral("instructions 157–195 · adamw_fp32_optim_params.py"));
            }
            if (name == QLatin1String("hlo_mixtral_8x7b_bf16_1x8.hlo")) {
                QCOMPARE(tree.source(), std::string("repeats"));
                QCOMPARE(tree.layer(tree.find("layer B2")).instructionCount, int64_t(345));
                QCOMPARE(tree.repeatClassSize(tree.layer(tree.find("layer B2")).repeatClass), 30);
            }
            ++arranged;
        }
        QVERIFY(arranged > 0);
    }
};

QTEST_GUILESS_MAIN(TestLayerTree)
#include "tst_layer_tree.moc"
