// The canonical HLO printer: programmatic modules against expected text, and
// golden files (tests/golden/printer/NAME.hlo -> NAME.expected.hlo).
#include <QDir>
#include <QFile>
#include <QTest>

#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

using namespace hloscope;

namespace {

Shape f32(std::vector<int64_t> dims) {
    std::vector<int64_t> m2m;
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) m2m.push_back(i);
    return Shape::makeArrayWithLayout(PrimitiveType::F32, std::move(dims), std::move(m2m));
}

HloInstruction* addParameter(HloComputation& computation, int64_t number, std::string name,
                             Shape shape) {
    auto instruction =
        std::make_unique<HloInstruction>(HloOpcode::kParameter, std::move(name), std::move(shape));
    instruction->setParameterNumber(number);
    return computation.addInstruction(std::move(instruction));
}

HloInstruction* addOp(HloComputation& computation, HloOpcode opcode, std::string name, Shape shape,
                      std::vector<HloInstruction*> operands) {
    auto instruction =
        std::make_unique<HloInstruction>(opcode, std::move(name), std::move(shape));
    for (HloInstruction* operand : operands) instruction->appendOperand(operand);
    return computation.addInstruction(std::move(instruction));
}

// relu(dot(x, w) + b) with a reducer computation for good measure.
std::unique_ptr<HloModule> buildModule() {
    auto module = std::make_unique<HloModule>("relu_matmul");
    auto add = std::make_unique<HloComputation>("add");
    HloInstruction* a = addParameter(*add, 0, "a", Shape::makeScalar(PrimitiveType::F32));
    HloInstruction* b = addParameter(*add, 1, "b", Shape::makeScalar(PrimitiveType::F32));
    add->setRoot(addOp(*add, HloOpcode::kAdd, "sum", Shape::makeScalar(PrimitiveType::F32), {a, b}));
    HloComputation* addComputation = module->addComputation(std::move(add));

    auto entry = std::make_unique<HloComputation>("main");
    HloInstruction* x = addParameter(*entry, 0, "x", f32({2, 3}));
    HloInstruction* w = addParameter(*entry, 1, "w", f32({3, 4}));
    HloInstruction* bias = addParameter(*entry, 2, "b", f32({4}));
    HloInstruction* dot = addOp(*entry, HloOpcode::kDot, "dot", f32({2, 4}), {x, w});
    DotDimensionNumbers dnums;
    dnums.lhsContractingDimensions = {1};
    dnums.rhsContractingDimensions = {0};
    dot->mutableExtra().dotDimensionNumbers = dnums;
    dot->setMetadata("op_type=\"MatMul\" op_name=\"jit(f)/dot\"");
    HloInstruction* broadcast = addOp(*entry, HloOpcode::kBroadcast, "bcast", f32({2, 4}), {bias});
    broadcast->setDimensions({1});
    HloInstruction* sum = addOp(*entry, HloOpcode::kAdd, "add", f32({2, 4}), {dot, broadcast});
    auto zero = std::make_unique<HloInstruction>(HloOpcode::kConstant, "zero",
                                                 Shape::makeScalar(PrimitiveType::F32));
    zero->setLiteralText("0");
    HloInstruction* zeroInstruction = entry->addInstruction(std::move(zero));
    HloInstruction* zeros = addOp(*entry, HloOpcode::kBroadcast, "zeros", f32({2, 4}), {zeroInstruction});
    zeros->setDimensions({});
    HloInstruction* relu = addOp(*entry, HloOpcode::kMaximum, "relu", f32({2, 4}), {sum, zeros});
    HloInstruction* reduce =
        addOp(*entry, HloOpcode::kReduce, "total", Shape::makeScalar(PrimitiveType::F32),
              {relu, zeroInstruction});
    reduce->setDimensions({0, 1});
    reduce->setCalledComputation("to_apply", addComputation);
    HloInstruction* tuple = addOp(*entry, HloOpcode::kTuple, "out",
                                  Shape::makeTuple({f32({2, 4}), Shape::makeScalar(PrimitiveType::F32)}),
                                  {relu, reduce});
    tuple->setAttribute("sharding", "{{replicated}, {maximal device=0}}");
    entry->setRoot(tuple);
    module->addComputation(std::move(entry), /*isEntry=*/true);
    module->setEntryComputationLayout(ComputationLayout{
        {f32({2, 3}), f32({3, 4}), f32({4})},
        Shape::makeTuple({f32({2, 4}), Shape::makeScalar(PrimitiveType::F32)})});
    return module;
}

QString readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(file.readAll());
}

}  // namespace

class TestPrinter : public QObject {
    Q_OBJECT
private slots:
    void canonicalModule();
    void compactForm();
    void attributeForms();
    void asyncSugar();
    void moduleHeader();
    void stackFrames();
    void indexComments();
    void golden_data();
    void golden();
};

void TestPrinter::canonicalModule() {
    auto module = buildModule();
    const std::string expected =
        "HloModule relu_matmul, entry_computation_layout={(f32[2,3]{1,0}, f32[3,4]{1,0}, "
        "f32[4]{0})->(f32[2,4]{1,0}, f32[])}\n"
        "\n"
        "%add (a: f32[], b: f32[]) -> f32[] {\n"
        "  %a = f32[] parameter(0)\n"
        "  %b = f32[] parameter(1)\n"
        "  ROOT %sum = f32[] add(f32[] %a, f32[] %b)\n"
        "}\n"
        "\n"
        "ENTRY %main (x: f32[2,3]{1,0}, w: f32[3,4]{1,0}, b: f32[4]{0}) -> (f32[2,4]{1,0}, f32[]) {\n"
        "  %x = f32[2,3]{1,0} parameter(0)\n"
        "  %w = f32[3,4]{1,0} parameter(1)\n"
        "  %b = f32[4]{0} parameter(2)\n"
        "  %dot = f32[2,4]{1,0} dot(f32[2,3]{1,0} %x, f32[3,4]{1,0} %w), lhs_contracting_dims={1}, "
        "rhs_contracting_dims={0}, metadata={op_type=\"MatMul\" op_name=\"jit(f)/dot\"}\n"
        "  %bcast = f32[2,4]{1,0} broadcast(f32[4]{0} %b), dimensions={1}\n"
        "  %add = f32[2,4]{1,0} add(f32[2,4]{1,0} %dot, f32[2,4]{1,0} %bcast)\n"
        "  %zero = f32[] constant(0)\n"
        "  %zeros = f32[2,4]{1,0} broadcast(f32[] %zero), dimensions={}\n"
        "  %relu = f32[2,4]{1,0} maximum(f32[2,4]{1,0} %add, f32[2,4]{1,0} %zeros)\n"
        "  %total = f32[] reduce(f32[2,4]{1,0} %relu, f32[] %zero), dimensions={0,1}, "
        "to_apply=%add\n"
        "  ROOT %out = (f32[2,4]{1,0}, f32[]) tuple(f32[2,4]{1,0} %relu, f32[] %total), "
        "sharding={{replicated}, {maximal device=0}}\n"
        "}\n";
    QCOMPARE(QString::fromStdString(printModule(*module)), QString::fromStdString(expected));
}

void TestPrinter::compactForm() {
    auto module = buildModule();
    std::string text = printModule(*module, HloPrintOptions::compact());
    QVERIFY(text.find("%dot = f32[2,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}") !=
            std::string::npos);
    QVERIFY(text.find("metadata=") == std::string::npos);
    HloPrintOptions noPercent = HloPrintOptions::compact();
    noPercent.printPercent = false;
    text = printModule(*module, noPercent);
    QVERIFY(text.find("ROOT out = (f32[2,4]{1,0}, f32[]) tuple(relu, total)") != std::string::npos);
}

void TestPrinter::attributeForms() {
    HloComputation computation("c");
    HloInstruction* p = addParameter(computation, 0, "p", f32({8, 8}));
    HloInstruction* slice = addOp(computation, HloOpcode::kSlice, "s", f32({4, 2}), {p});
    slice->mutableExtra().slice = {{0, 8, 2}, {1, 3, 1}};
    QCOMPARE(printInstruction(*slice),
             std::string("%s = f32[4,2]{1,0} slice(f32[8,8]{1,0} %p), slice={[0:8:2], [1:3]}"));

    HloInstruction* pad = addOp(computation, HloOpcode::kPad, "pad", f32({10, 17}), {p, p});
    pad->mutableExtra().padding = {{1, 1, 0}, {0, 2, 1}};
    QVERIFY(printInstruction(*pad).ends_with("padding=1_1_0x0_2_1"));
    pad->mutableExtra().padding = {{1, 1, 0}, {0, 2, 0}};
    QVERIFY(printInstruction(*pad).ends_with("padding=1_1x0_2"));

    HloInstruction* rw = addOp(computation, HloOpcode::kReduceWindow, "rw", f32({4, 4}), {p, p});
    Window window;
    window.dimensions = {{2, 2, 0, 1, 1, 1, false}, {3, 1, 1, 1, 2, 1, true}};
    rw->mutableExtra().window = window;
    QVERIFY(printInstruction(*rw).ends_with(
        "window={size=2x3 stride=2x1 pad=0_1x1_1 rhs_dilate=1x2 rhs_reversal=0x1}"));

    HloInstruction* conv = addOp(computation, HloOpcode::kConvolution, "conv", f32({1, 1}), {p, p});
    ConvolutionDimensionNumbers cdn;
    cdn.inputBatchDimension = 0;
    cdn.inputFeatureDimension = 3;
    cdn.inputSpatialDimensions = {1, 2};
    cdn.kernelSpatialDimensions = {0, 1};
    cdn.kernelInputFeatureDimension = 2;
    cdn.kernelOutputFeatureDimension = 3;
    cdn.outputBatchDimension = 0;
    cdn.outputFeatureDimension = 3;
    cdn.outputSpatialDimensions = {1, 2};
    conv->mutableExtra().convolutionDimensionNumbers = cdn;
    conv->mutableExtra().featureGroupCount = 2;
    QVERIFY(printInstruction(*conv).ends_with("dim_labels=b01f_01io->b01f, feature_group_count=2"));

    HloInstruction* cmp = addOp(computation, HloOpcode::kCompare, "cmp",
                                Shape::makeArrayWithLayout(PrimitiveType::PRED, {8, 8}, {1, 0}),
                                {p, p});
    cmp->mutableExtra().comparisonDirection = ComparisonDirection::kLt;
    cmp->mutableExtra().comparisonType = ComparisonType::kTotalOrder;
    QVERIFY(printInstruction(*cmp).ends_with("direction=LT, type=TOTALORDER"));

    HloInstruction* gte = addOp(computation, HloOpcode::kGetTupleElement, "g", f32({8, 8}), {p});
    gte->setTupleIndex(1);
    QVERIFY(printInstruction(*gte).ends_with("get-tuple-element(f32[8,8]{1,0} %p), index=1"));

    HloInstruction* custom = addOp(computation, HloOpcode::kCustomCall, "cc", f32({8, 8}), {p});
    custom->mutableExtra().customCallTarget = "my\"target";
    custom->setAttribute("backend_config", "\"{}\"");
    custom->addControlDependencyTo(gte);
    QVERIFY(printInstruction(*custom).ends_with(
        "custom_call_target=\"my\\\"target\", backend_config=\"{}\""));
    QVERIFY(printInstruction(*gte).ends_with("control-predecessors={%cc}"));
}

void TestPrinter::asyncSugar() {
    HloComputation computation("c");
    HloInstruction* p = addParameter(computation, 0, "p", f32({4}));
    HloInstruction* start = addOp(computation, HloOpcode::kAsyncStart, "start",
                                  Shape::makeTuple({f32({4}), f32({4})}), {p});
    start->mutableExtra().asyncWrappedOpcode = HloOpcode::kAbs;
    QVERIFY(printInstruction(*start).find(" abs-start(") != std::string::npos);
    HloInstruction* done = addOp(computation, HloOpcode::kAsyncDone, "done", f32({4}), {start});
    QVERIFY(printInstruction(*done).find(" async-done(") != std::string::npos);
}

void TestPrinter::moduleHeader() {
    HloModule module("m");
    module.setIsScheduled(true);
    module.setHasInputOutputAliasAttribute(true);
    module.mutableInputOutputAliases().push_back({{0}, 0, {}, InputOutputAlias::Kind::kMustAlias, true});
    module.mutableInputOutputAliases().push_back({{1}, 1, {0}, InputOutputAlias::Kind::kMayAlias, false});
    module.setHasBufferDonorAttribute(true);
    module.mutableBufferDonors().push_back({2, {}});
    module.setReplicaCount(2);
    module.setNumPartitions(4);
    module.mutableAttributes().push_back({"frontend_attributes", "{attr=\"x\"}"});
    std::string text = printModule(module);
    QCOMPARE(text.substr(0, text.find('\n')),
             std::string("HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, "
                         "must-alias), {1}: (1, {0}) }, buffer_donor={ (2, {}) }, "
                         "replica_count=2, num_partitions=4, frontend_attributes={attr=\"x\"}"));
}

void TestPrinter::stackFrames() {
    HloModule module("m");
    StackFrameIndex& frames = module.mutableStackFrames();
    frames.fileNames = {"a.py"};
    frames.functionNames = {"main"};
    frames.fileLocations = {{1, 1, 10, 10, 2, 8}};
    frames.stackFrames = {{1, 0}};
    std::string text = printModule(module);
    QVERIFY(text.find("FileNames\n1 \"a.py\"\n\nFunctionNames\n1 \"main\"\n\nFileLocations\n"
                      "1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=2 "
                      "end_column=8}\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=0}\n") !=
            std::string::npos);
}

void TestPrinter::indexComments() {
    HloComputation computation("c");
    std::vector<HloInstruction*> params;
    std::vector<Shape> shapes;
    for (int i = 0; i < 7; ++i) {
        params.push_back(addParameter(computation, i, "p" + std::to_string(i),
                                      Shape::makeScalar(PrimitiveType::S32)));
        shapes.push_back(Shape::makeScalar(PrimitiveType::S32));
    }
    HloInstruction* tuple =
        addOp(computation, HloOpcode::kTuple, "t", Shape::makeTuple(shapes), params);
    QVERIFY(printInstruction(*tuple).find("s32[] %p4, /*index=5*/s32[] %p5, s32[] %p6)") !=
            std::string::npos);
}

void TestPrinter::golden_data() {
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("expected");
    QDir dir(QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/golden/printer"));
    const auto inputs = dir.entryList({QStringLiteral("*.hlo")}, QDir::Files, QDir::Name);
    int rows = 0;
    for (const QString& name : inputs) {
        if (name.endsWith(QLatin1String(".expected.hlo"))) continue;
        QString expected = name.left(name.size() - 4) + QStringLiteral(".expected.hlo");
        QTest::newRow(qPrintable(name)) << dir.filePath(name) << dir.filePath(expected);
        ++rows;
    }
    if (rows == 0) QTest::newRow("missing") << QString() << QString();
}

void TestPrinter::golden() {
    QFETCH(QString, input);
    QFETCH(QString, expected);
    QVERIFY2(!input.isEmpty(), "no golden files in tests/golden/printer");
    const QString text = readFile(input);
    const QString want = readFile(expected);
    QVERIFY2(!text.isEmpty(), qPrintable(input));
    QVERIFY2(!want.isEmpty(), qPrintable(expected));
    HloParseOptions options;
    options.fileName = input.toStdString();
    auto module = parseHloModule(text.toStdString(), options);
    QVERIFY2(module.isOk(), module.status().toString().c_str());
    QCOMPARE(QString::fromStdString(printModule(**module)), want);
}

QTEST_APPLESS_MAIN(TestPrinter)
#include "tst_printer.moc"
