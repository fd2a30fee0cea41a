// JSON export/import (core/json/hlo_json.h): programmatic modules covering every
// header and typed attribute, HLO text snippets, export -> import -> export
// byte identity and structural equality, one negative test per error class
// (each checking the JSON path in the message), and round trips of the
// bundled examples and a sample of the conformance corpus.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <algorithm>

#include "core/io/module_io.h"
#include "core/ir/async_wrapping.h"
#include "core/json/hlo_json.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

using namespace hloscope;

namespace {

const QString kExamplesDir = QStringLiteral(HLOSCOPE_SOURCE_DIR "/resources/examples");
const QString kCorpusValidDir = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/valid");
constexpr int kCorpusSampleSize = 200;

Shape f32(std::vector<int64_t> dims) {
    std::vector<int64_t> m2m;
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) m2m.push_back(i);
    return Shape::makeArrayWithLayout(PrimitiveType::F32, std::move(dims), std::move(m2m));
}

Shape s32(std::vector<int64_t> dims) {
    std::vector<int64_t> m2m;
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) m2m.push_back(i);
    return Shape::makeArrayWithLayout(PrimitiveType::S32, std::move(dims), std::move(m2m));
}

Shape scalar(PrimitiveType type = PrimitiveType::F32) { return Shape::makeScalar(type); }

HloInstruction* addParameter(HloComputation& computation, int64_t number, std::string name,
                             Shape shape) {
    auto instruction =
        std::make_unique<HloInstruction>(HloOpcode::kParameter, std::move(name), std::move(shape));
    instruction->setParameterNumber(number);
    return computation.addInstruction(std::move(instruction));
}

HloInstruction* addOp(HloComputation& computation, HloOpcode opcode, std::string name, Shape shape,
                      std::vector<HloInstruction*> operands = {}) {
    auto instruction = std::make_unique<HloInstruction>(opcode, std::move(name), std::move(shape));
    for (HloInstruction* operand : operands) instruction->appendOperand(operand);
    return computation.addInstruction(std::move(instruction));
}

HloComputation* addScalarAdd(HloModule& module, std::string name) {
    auto computation = std::make_unique<HloComputation>(std::move(name));
    HloInstruction* a = addParameter(*computation, 0, "a", scalar());
    HloInstruction* b = addParameter(*computation, 1, "b", scalar());
    computation->setRoot(addOp(*computation, HloOpcode::kAdd, "sum", scalar(), {a, b}));
    return module.addComputation(std::move(computation));
}

// A module that sets every header attribute, every field of
// HloExtraAttributes and every other instruction field at least once.
std::unique_ptr<HloModule> buildEverythingModule() {
    auto module = std::make_unique<HloModule>("everything");
    module->setIsScheduled(true);
    module->setReplicaCount(2);
    module->setNumPartitions(4);
    module->setHasInputOutputAliasAttribute(true);
    module->mutableInputOutputAliases().push_back(
        {{0}, 0, {}, InputOutputAlias::Kind::kMayAlias, false});
    module->mutableInputOutputAliases().push_back(
        {{1}, 1, {0}, InputOutputAlias::Kind::kMustAlias, true});
    module->mutableInputOutputAliases().push_back(
        {{2}, 2, {}, InputOutputAlias::Kind::kMayAlias, true});
    module->mutableInputOutputAliases().push_back(
        {{3}, 2, {1}, InputOutputAlias::Kind::kMustAlias, false});
    module->setHasBufferDonorAttribute(true);
    module->mutableBufferDonors().push_back({1, {}});
    module->mutableBufferDonors().push_back({2, {0, 1}});
    module->mutableAttributes().push_back(
        {"frontend_attributes", "{xla.sdy.meshes=\"{mesh = #sdy.mesh<[]>}\"}"});
    module->mutableAttributes().push_back({"allow_spmd_sharding_propagation_to_output", "{true}"});
    StackFrameIndex& frames = module->mutableStackFrames();
    frames.fileNames = {"model.py", "layers.py"};
    frames.functionNames = {"forward", "<lambda>"};
    frames.fileLocations = {{1, 1, 10, 10, 4, 20}, {2, 2, 3, 5, 0, 1}};
    frames.stackFrames = {{1, 0}, {2, 1}};

    HloComputation* add = addScalarAdd(*module, "add");

    auto fused = std::make_unique<HloComputation>("fused_negate");
    HloInstruction* fp = addParameter(*fused, 0, "param_0", f32({8, 8}));
    fused->setRoot(addOp(*fused, HloOpcode::kNegate, "neg", f32({8, 8}), {fp}));
    HloComputation* fusedComputation = module->addComputation(std::move(fused));

    auto less = std::make_unique<HloComputation>("less");
    HloInstruction* l0 = addParameter(*less, 0, "lhs", scalar());
    HloInstruction* l1 = addParameter(*less, 1, "rhs", scalar());
    HloInstruction* lt =
        addOp(*less, HloOpcode::kCompare, "lt", scalar(PrimitiveType::PRED), {l0, l1});
    lt->mutableExtra().comparisonDirection = ComparisonDirection::kLt;
    lt->mutableExtra().comparisonType = ComparisonType::kTotalOrder;
    less->setRoot(lt);
    HloComputation* lessComputation = module->addComputation(std::move(less));

    auto cond = std::make_unique<HloComputation>("cond");
    HloInstruction* cp = addParameter(*cond, 0, "state", s32({}));
    auto limit = std::make_unique<HloInstruction>(HloOpcode::kConstant, "limit", s32({}));
    limit->setLiteralText("10");
    HloInstruction* limitInstruction = cond->addInstruction(std::move(limit));
    HloInstruction* cmp = addOp(*cond, HloOpcode::kCompare, "cmp", scalar(PrimitiveType::PRED),
                                {cp, limitInstruction});
    cmp->mutableExtra().comparisonDirection = ComparisonDirection::kLt;
    cond->setRoot(cmp);
    HloComputation* condComputation = module->addComputation(std::move(cond));

    auto body = std::make_unique<HloComputation>("body");
    HloInstruction* bp = addParameter(*body, 0, "state", s32({}));
    body->setRoot(addOp(*body, HloOpcode::kNegate, "next", s32({}), {bp}));
    HloComputation* bodyComputation = module->addComputation(std::move(body));

    auto asyncBody = std::make_unique<HloComputation>("async_wrapped");
    HloInstruction* ap = addParameter(*asyncBody, 0, "p", f32({8, 8}));
    HloInstruction* cc = addOp(*asyncBody, HloOpcode::kCustomCall, "cc", f32({8, 8}), {ap});
    cc->mutableExtra().customCallTarget = "foo";
    asyncBody->setRoot(cc);
    asyncBody->setExecutionThread("sparsecore");
    HloComputation* asyncComputation = module->addComputation(std::move(asyncBody));

    auto entry = std::make_unique<HloComputation>("main");
    HloComputation& e = *entry;
    HloInstruction* p0 = addParameter(e, 0, "p0", f32({8, 8}));
    HloInstruction* p1 = addParameter(e, 1, "p1", s32({4, 1}));
    HloInstruction* p2 = addParameter(e, 2, "p2", f32({1, 8, 8, 4}));

    HloInstruction* slice = addOp(e, HloOpcode::kSlice, "slice", f32({4, 3}), {p0});
    slice->mutableExtra().slice = {{0, 4, 1}, {2, 8, 2}};

    auto zero = std::make_unique<HloInstruction>(HloOpcode::kConstant, "zero", s32({}));
    zero->setLiteralText("0");
    HloInstruction* zeroInstruction = e.addInstruction(std::move(zero));
    auto fzero = std::make_unique<HloInstruction>(HloOpcode::kConstant, "fzero", scalar());
    fzero->setLiteralText("0");
    HloInstruction* fzeroInstruction = e.addInstruction(std::move(fzero));
    auto vector = std::make_unique<HloInstruction>(HloOpcode::kConstant, "vector", s32({3}));
    vector->setLiteralText("{1, 2, 3}");
    vector->setMetadata("op_type=\"Const\" op_name=\"caf\xc3\xa9/\\\"quoted\\\"\" source_line=7");
    e.addInstruction(std::move(vector));

    HloInstruction* ds = addOp(e, HloOpcode::kDynamicSlice, "ds", f32({2, 2}),
                               {p0, zeroInstruction, zeroInstruction});
    ds->mutableExtra().dynamicSliceSizes = {2, 2};

    HloInstruction* pad = addOp(e, HloOpcode::kPad, "pad", f32({9, 17}), {p0, fzeroInstruction});
    pad->mutableExtra().padding = {{0, 1, 0}, {1, 0, 1}};

    HloInstruction* rw =
        addOp(e, HloOpcode::kReduceWindow, "rw", f32({4, 4}), {p0, fzeroInstruction});
    Window window;
    window.dimensions.push_back({2, 2, 0, 0, 1, 1, false});
    window.dimensions.push_back({3, 1, 1, 1, 2, 1, true});
    rw->mutableExtra().window = window;
    rw->setCalledComputation("to_apply", add);

    HloInstruction* conv = addOp(e, HloOpcode::kConvolution, "conv", f32({1, 8, 8, 4}), {p2, p2});
    ConvolutionDimensionNumbers cdn;
    cdn.inputBatchDimension = 0;
    cdn.inputFeatureDimension = 3;
    cdn.inputSpatialDimensions = {1, 2};
    cdn.kernelInputFeatureDimension = 2;
    cdn.kernelOutputFeatureDimension = 3;
    cdn.kernelSpatialDimensions = {0, 1};
    cdn.outputBatchDimension = 0;
    cdn.outputFeatureDimension = 3;
    cdn.outputSpatialDimensions = {1, 2};
    conv->mutableExtra().convolutionDimensionNumbers = cdn;
    conv->mutableExtra().window = Window{{{3, 1, 1, 1, 1, 1, false}, {3, 1, 1, 1, 1, 1, false}}};
    conv->mutableExtra().featureGroupCount = 2;
    conv->mutableExtra().batchGroupCount = 3;

    HloInstruction* dot = addOp(e, HloOpcode::kRaggedDot, "rdot", f32({8, 8}), {p0, p0, p1});
    DotDimensionNumbers dnums;
    dnums.lhsBatchDimensions = {};
    dnums.rhsBatchDimensions = {};
    dnums.lhsContractingDimensions = {1};
    dnums.rhsContractingDimensions = {0};
    dnums.lhsRaggedDimensions = {0};
    dnums.rhsGroupDimensions = {1};
    dot->mutableExtra().dotDimensionNumbers = dnums;

    HloInstruction* gather = addOp(e, HloOpcode::kGather, "gather", f32({4, 8}), {p0, p1});
    GatherDimensionNumbers gdn;
    gdn.offsetDims = {1};
    gdn.collapsedSliceDims = {0};
    gdn.startIndexMap = {0};
    gdn.operandBatchingDims = {};
    gdn.startIndicesBatchingDims = {};
    gdn.indexVectorDim = 1;
    gather->mutableExtra().gatherDimensionNumbers = gdn;
    gather->mutableExtra().gatherSliceSizes = {1, 8};
    gather->mutableExtra().indicesAreSorted = true;

    HloInstruction* scatter =
        addOp(e, HloOpcode::kScatter, "scatter", f32({8, 8}), {p0, p1, gather});
    ScatterDimensionNumbers sdn;
    sdn.updateWindowDims = {1};
    sdn.insertedWindowDims = {0};
    sdn.scatterDimsToOperandDims = {0};
    sdn.inputBatchingDims = {};
    sdn.scatterIndicesBatchingDims = {};
    sdn.indexVectorDim = 1;
    scatter->mutableExtra().scatterDimensionNumbers = sdn;
    scatter->mutableExtra().uniqueIndices = true;
    scatter->mutableExtra().indicesAreSorted = true;
    scatter->setCalledComputation("to_apply", add);

    HloInstruction* rp = addOp(e, HloOpcode::kReducePrecision, "rp", f32({8, 8}), {p0});
    rp->mutableExtra().exponentBits = 5;
    rp->mutableExtra().mantissaBits = 10;

    HloInstruction* bn =
        addOp(e, HloOpcode::kBatchNormTraining, "bnt",
              Shape::makeTuple({f32({1, 8, 8, 4}), f32({4}), f32({4})}), {p2, slice, slice});
    bn->mutableExtra().epsilon = 0.001;
    bn->mutableExtra().epsilonText = "1e-3";
    bn->mutableExtra().featureIndex = 3;
    HloInstruction* bni = addOp(e, HloOpcode::kBatchNormInference, "bni", f32({1, 8, 8, 4}),
                                {p2, slice, slice, slice, slice});
    bni->mutableExtra().epsilon = 0.5;  // no text: exported as a JSON number
    bni->mutableExtra().featureIndex = 3;

    HloInstruction* custom = addOp(e, HloOpcode::kCustomCall, "custom", f32({8, 8}), {p0});
    custom->mutableExtra().customCallTarget = "my\"target\\x";
    custom->setAttribute("custom_call_has_side_effect", "true");
    custom->setAttribute("backend_config", "{\"a\": [1, 2]}");
    custom->setAttribute("api_version", "API_VERSION_TYPED_FFI");

    HloInstruction* fusion = addOp(e, HloOpcode::kFusion, "fusion", f32({8, 8}), {p0});
    fusion->mutableExtra().fusionKind = "kLoop";
    fusion->setCalledComputation("calls", fusedComputation);

    HloInstruction* sort = addOp(e, HloOpcode::kSort, "sort", f32({8, 8}), {p0});
    sort->setDimensions({1});
    sort->mutableExtra().isStable = true;
    sort->setCalledComputation("to_apply", lessComputation);

    HloInstruction* fft =
        addOp(e, HloOpcode::kFft, "fft",
              Shape::makeArrayWithLayout(PrimitiveType::C64, {8, 5}, {1, 0}), {p0});
    fft->mutableExtra().fftType = "RFFT";
    fft->mutableExtra().fftLength = {8};

    HloInstruction* rng =
        addOp(e, HloOpcode::kRng, "rng", f32({8}), {fzeroInstruction, fzeroInstruction});
    rng->mutableExtra().distribution = "rng_uniform";

    HloInstruction* topk =
        addOp(e, HloOpcode::kTopK, "topk", Shape::makeTuple({f32({8, 2}), s32({8, 2})}), {p0});
    topk->mutableExtra().topK = 2;
    topk->mutableExtra().largest = false;

    HloInstruction* start = addOp(e, HloOpcode::kAsyncStart, "cc-start",
                                  Shape::makeTuple({Shape::makeTuple({f32({8, 8})}), f32({8, 8}),
                                                    scalar(PrimitiveType::U32)}),
                                  {p0});
    start->mutableExtra().asyncWrappedOpcode = HloOpcode::kCustomCall;
    start->setCalledComputation("calls", asyncComputation);
    HloInstruction* done = addOp(e, HloOpcode::kAsyncDone, "cc-done", f32({8, 8}), {start});
    done->mutableExtra().asyncWrappedOpcode = HloOpcode::kCustomCall;

    HloInstruction* iota = addOp(e, HloOpcode::kIota, "iota", s32({4, 8}));
    iota->setIotaDimension(1);
    HloInstruction* gte = addOp(e, HloOpcode::kGetTupleElement, "gte", f32({4}), {bn});
    gte->setTupleIndex(1);
    HloInstruction* bcast =
        addOp(e, HloOpcode::kBroadcast, "bcast", f32({8, 8}), {fzeroInstruction});
    bcast->setDimensions({});
    HloInstruction* transpose = addOp(e, HloOpcode::kTranspose, "transpose", f32({8, 8}), {p0});
    transpose->setDimensions({1, 0});

    HloInstruction* loop = addOp(e, HloOpcode::kWhile, "loop", s32({}), {zeroInstruction});
    loop->setCalledComputation("condition", condComputation);
    loop->setCalledComputation("body", bodyComputation);
    HloInstruction* conditional = addOp(e, HloOpcode::kConditional, "conditional", s32({}),
                                        {zeroInstruction, zeroInstruction, zeroInstruction});
    conditional->setCalledComputationList("branch_computations",
                                          {bodyComputation, bodyComputation});

    // Control edges: rng after fft, custom after both.
    fft->addControlDependencyTo(rng);
    fft->addControlDependencyTo(custom);
    rng->addControlDependencyTo(custom);

    HloInstruction* tuple =
        addOp(e, HloOpcode::kTuple, "out",
              Shape::makeTuple({f32({8, 8}), f32({8, 8}), f32({8, 8}), s32({}), f32({4})}),
              {fusion, custom, done, loop, gte});
    tuple->setAttribute(
        "sharding", "{{replicated}, {maximal device=0}, {replicated}, {replicated}, {replicated}}");
    e.setRoot(tuple);
    module->addComputation(std::move(entry), /*isEntry=*/true);

    module->setEntryComputationLayout(ComputationLayout{
        {f32({8, 8}), s32({4, 1}), f32({1, 8, 8, 4})},
        Shape::makeTuple({f32({8, 8}), f32({8, 8}), f32({8, 8}), s32({}), f32({4})})});
    return module;
}

// The first line where two texts differ, for readable failures.
QString firstDifference(const std::string& a, const std::string& b) {
    QStringList la = QString::fromStdString(a).split('\n');
    QStringList lb = QString::fromStdString(b).split('\n');
    for (qsizetype i = 0; i < std::max(la.size(), lb.size()); ++i) {
        QString x = i < la.size() ? la[i] : QStringLiteral("<end>");
        QString y = i < lb.size() ? lb[i] : QStringLiteral("<end>");
        if (x != y)
            return QStringLiteral("line %1:\n  first:  %2\n  second: %3").arg(i + 1).arg(x, y);
    }
    return {};
}

// export -> import -> export: byte identity, structural equality and the
// same canonical HLO text. Returns an empty string on success.
QString roundTripFailure(const HloModule& module) {
    for (int indent : {2, -1, 0, 4}) {
        std::string json = moduleToJson(module, indent);
        StatusOr<std::unique_ptr<HloModule>> imported = moduleFromJson(json, "roundtrip.json");
        if (!imported.isOk())
            return QStringLiteral("indent %1: import failed: %2")
                .arg(indent)
                .arg(QString::fromStdString(imported.status().toString()));
        std::string why;
        if (!module.structurallyEqual(**imported, &why))
            return QStringLiteral("indent %1: not structurally equal: %2")
                .arg(indent)
                .arg(QString::fromStdString(why));
        std::string again = moduleToJson(**imported, indent);
        if (again != json)
            return QStringLiteral(
                       "indent %1: export -> import -> export is not byte-identical at %2")
                .arg(indent)
                .arg(firstDifference(json, again));
        std::string text = printModule(module);
        std::string importedText = printModule(**imported);
        if (text != importedText)
            return QStringLiteral("indent %1: printed HLO differs at %2")
                .arg(indent)
                .arg(firstDifference(text, importedText));
    }
    return {};
}

StatusOr<std::unique_ptr<HloModule>> importText(const QString& json) {
    return moduleFromJson(json.toStdString(), "bad.json");
}

// A module skeleton: one entry computation holding `instructions` (a JSON
// array body), with root `root`.
QString moduleJson(const QString& instructions, const QString& root = QStringLiteral("\"p\""),
                   const QString& extraComputations = {}, const QString& extraTopLevel = {}) {
    return QStringLiteral(R"({"format": "hloscope-module", "version": 1, "name": "m", %4
  "computations": [%3
    {"name": "main", "is_entry": true, "root": %2, "instructions": [%1]}]})")
        .arg(instructions, root, extraComputations, extraTopLevel);
}

const QString kParam = QStringLiteral(
    R"({"name": "p", "opcode": "parameter", "shape": "f32[2]{0}", "operands": [], "parameter_number": 0})");

}  // namespace

class TestJson : public QObject {
    Q_OBJECT
private slots:
    void exportLayout();
    void exportTypedAttributes();
    void everythingRoundTrips();
    void emptyAndMinimalModules();
    void forwardReferencesResolve();
    void recursiveCallIsAnError();
    void nullCalledComputationAndRootSurvive();
    void optionalKeysTakeDefaults();
    void textFormsOfTypedAttributes();
    void hloSnippetsRoundTrip_data();
    void hloSnippetsRoundTrip();
    void asyncSugarThroughJson();
    void syntaxErrorHasLineAndColumn();
    void deepNestingIsRejected();
    void truncatedAndCorruptedInputFailsCleanly();
    void importErrors_data();
    void importErrors();
    void documentedExampleIsExact();
    void examplesRoundTrip_data();
    void examplesRoundTrip();
    void corpusSampleRoundTrips_data();
    void corpusSampleRoundTrips();
};

void TestJson::exportLayout() {
    auto module = buildEverythingModule();
    std::string json = moduleToJson(*module);
    QJsonParseError parseError;
    QJsonDocument document = QJsonDocument::fromJson(QByteArray::fromStdString(json), &parseError);
    QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
    QJsonObject root = document.object();
    QCOMPARE(root.value("format").toString(), QStringLiteral("hloscope-module"));
    QCOMPARE(root.value("version").toInt(), 1);
    QCOMPARE(root.value("name").toString(), QStringLiteral("everything"));
    QCOMPARE(root.value("is_scheduled").toBool(), true);
    QCOMPARE(root.value("replica_count").toInt(), 2);
    QCOMPARE(root.value("num_partitions").toInt(), 4);
    QJsonObject layout = root.value("entry_computation_layout").toObject();
    QCOMPARE(layout.value("parameters").toArray().at(1).toString(),
             QStringLiteral("s32[4,1]{1,0}"));
    QCOMPARE(layout.value("result").toString(),
             QStringLiteral("(f32[8,8]{1,0}, f32[8,8]{1,0}, f32[8,8]{1,0}, s32[], f32[4]{0})"));
    QJsonArray aliases = root.value("input_output_alias").toArray();
    QCOMPARE(aliases.size(), 4);
    QVERIFY(!aliases.at(0).toObject().contains("kind"));  // may-alias, not written
    QCOMPARE(aliases.at(1).toObject().value("kind").toString(), QStringLiteral("must-alias"));
    QVERIFY(!aliases.at(1).toObject().contains("kind_written"));
    QCOMPARE(aliases.at(2).toObject().value("kind").toString(), QStringLiteral("may-alias"));
    QCOMPARE(aliases.at(3).toObject().value("kind_written").toBool(true), false);
    QCOMPARE(root.value("buffer_donor")
                 .toArray()
                 .at(1)
                 .toObject()
                 .value("parameter_index")
                 .toArray()
                 .size(),
             2);
    QJsonArray attributes = root.value("attributes").toArray();
    QCOMPARE(attributes.size(), 2);
    QCOMPARE(attributes.at(0).toObject().value("name").toString(),
             QStringLiteral("frontend_attributes"));
    QJsonObject frames = root.value("stack_frames").toObject();
    QCOMPARE(frames.value("file_names").toArray().at(1).toString(), QStringLiteral("layers.py"));
    QCOMPARE(frames.value("file_locations").toArray().at(0).toObject().value("end_column").toInt(),
             20);
    QCOMPARE(
        frames.value("stack_frames").toArray().at(1).toObject().value("parent_frame_id").toInt(),
        1);

    // Computations in module order; the entry last and flagged.
    QJsonArray computations = root.value("computations").toArray();
    QStringList names;
    for (const QJsonValue& c : computations) names << c.toObject().value("name").toString();
    QCOMPARE(names,
             QStringList({"add", "fused_negate", "less", "cond", "body", "async_wrapped", "main"}));
    QCOMPARE(computations.at(0).toObject().value("is_entry").toBool(), false);
    QCOMPARE(computations.last().toObject().value("is_entry").toBool(), true);
    QCOMPARE(computations.at(5).toObject().value("execution_thread").toString(),
             QStringLiteral("sparsecore"));
    QVERIFY(!computations.at(0).toObject().contains("execution_thread"));
    QCOMPARE(computations.last().toObject().value("root").toString(), QStringLiteral("out"));

    // Keys of an instruction come in a fixed order.
    const std::string compact = moduleToJson(*module, -1);
    QVERIFY(compact.find('\n') == compact.size() - 1);
    QVERIFY(
        compact.find(R"({"name":"p0","opcode":"parameter","shape":"f32[8,8]{1,0}","operands":[],)"
                     R"("parameter_number":0})") != std::string::npos);
    QVERIFY(compact.find(R"({"name":"sum","opcode":"add","shape":"f32[]","operands":["a","b"]})") !=
            std::string::npos);
    // Module keys too.
    QVERIFY(
        compact.rfind(
            R"({"format":"hloscope-module","version":1,"name":"everything","is_scheduled":true,)"
            R"("entry_computation_layout":)",
            0) == 0);
}

void TestJson::exportTypedAttributes() {
    auto module = buildEverythingModule();
    const std::string json = moduleToJson(*module, -1);
    auto contains = [&](const char* needle) {
        bool found = json.find(needle) != std::string::npos;
        if (!found) qWarning("missing in export: %s", needle);
        return found;
    };
    QVERIFY(contains(R"("slice":[[0,4,1],[2,8,2]])"));
    QVERIFY(contains(R"("dynamic_slice_sizes":[2,2])"));
    QVERIFY(contains(R"("padding":[[0,1,0],[1,0,1]])"));
    QVERIFY(contains(
        R"("window":[{"size":2,"stride":2,"padding_low":0,"padding_high":0,"window_dilation":1,)"
        R"("base_dilation":1,"window_reversal":false},{"size":3,"stride":1,"padding_low":1,)"
        R"("padding_high":1,"window_dilation":2,"base_dilation":1,"window_reversal":true}])"));
    QVERIFY(contains(
        R"("convolution_dimension_numbers":{"input_batch_dimension":0,"input_feature_dimension":3,)"
        R"("input_spatial_dimensions":[1,2],"kernel_input_feature_dimension":2,)"
        R"("kernel_output_feature_dimension":3,"kernel_spatial_dimensions":[0,1],)"
        R"("output_batch_dimension":0,"output_feature_dimension":3,"output_spatial_dimensions":[1,2]})"));
    QVERIFY(contains(R"("feature_group_count":2,"batch_group_count":3)"));
    QVERIFY(contains(
        R"("dot_dimension_numbers":{"lhs_batch_dims":[],"rhs_batch_dims":[],"lhs_contracting_dims":[1],)"
        R"("rhs_contracting_dims":[0],"lhs_ragged_dims":[0],"rhs_group_dims":[1]})"));
    QVERIFY(contains(
        R"("gather_dimension_numbers":{"offset_dims":[1],"collapsed_slice_dims":[0],"start_index_map":[0],)"
        R"("operand_batching_dims":[],"start_indices_batching_dims":[],"index_vector_dim":1},)"
        R"("slice_sizes":[1,8],"indices_are_sorted":true})"));
    QVERIFY(contains(
        R"("scatter_dimension_numbers":{"update_window_dims":[1],"inserted_window_dims":[0],)"
        R"("scatter_dims_to_operand_dims":[0],"input_batching_dims":[],)"
        R"("scatter_indices_batching_dims":[],"index_vector_dim":1},"indices_are_sorted":true,)"
        R"("unique_indices":true,"called_computations":[{"name":"to_apply","computations":["add"],)"
        R"("is_list":false}]})"));
    QVERIFY(contains(R"("comparison_direction":"LT","comparison_type":"TOTALORDER")"));
    QVERIFY(contains(R"("exponent_bits":5,"mantissa_bits":10)"));
    QVERIFY(contains(R"("epsilon":"1e-3","feature_index":3)"));
    QVERIFY(contains(R"("epsilon":0.5,"feature_index":3)"));
    QVERIFY(contains(
        R"("custom_call_target":"my\"target\\x","attributes":[{"name":"custom_call_has_side_effect",)"
        R"("value":"true"},{"name":"backend_config","value":"{\"a\": [1, 2]}"},)"
        R"({"name":"api_version","value":"API_VERSION_TYPED_FFI"}])"));
    QVERIFY(contains(
        R"("fusion_kind":"kLoop","called_computations":[{"name":"calls","computations":["fused_negate"],)"
        R"("is_list":false}])"));
    QVERIFY(contains(R"("dimensions":[1],"is_stable":true)"));
    QVERIFY(contains(R"("fft_type":"RFFT","fft_length":[8])"));
    QVERIFY(contains(R"("distribution":"rng_uniform")"));
    QVERIFY(contains(R"("top_k":2,"largest":false)"));
    QVERIFY(contains(R"("opcode":"async-start","async_wrapped_opcode":"custom-call")"));
    QVERIFY(
        contains(R"("opcode":"iota","shape":"s32[4,8]{1,0}","operands":[],"iota_dimension":1})"));
    QVERIFY(contains(R"("operands":["bnt"],"tuple_index":1})"));
    QVERIFY(contains(
        R"("name":"bcast","opcode":"broadcast","shape":"f32[8,8]{1,0}","operands":["fzero"],"dimensions":[]})"));
    QVERIFY(contains(R"("literal":"{1, 2, 3}","metadata":"op_type=\"Const\" op_name=\"caf)"));
    QVERIFY(contains(
        R"("called_computations":[{"name":"condition","computations":["cond"],"is_list":false},)"
        R"({"name":"body","computations":["body"],"is_list":false}])"));
    QVERIFY(contains(
        R"({"name":"branch_computations","computations":["body","body"],"is_list":true})"));
    QVERIFY(
        contains(R"("name":"rng","opcode":"rng","shape":"f32[8]{0}","operands":["fzero","fzero"],)"
                 R"("control_predecessors":["fft"])"));
    QVERIFY(contains(R"("control_predecessors":["fft","rng"])"));
    // Unset typed attributes are absent: only the instructions that set
    // them carry these keys.
    auto count = [&](const char* needle) {
        int n = 0;
        for (size_t pos = json.find(needle); pos != std::string::npos;
             pos = json.find(needle, pos + 1))
            ++n;
        return n;
    };
    QCOMPARE(count(R"("feature_group_count")"), 1);
    QCOMPARE(count(R"("comparison_type")"), 1);
    QCOMPARE(count(R"("comparison_direction")"), 2);
    QCOMPARE(count(R"("window")"), 2);
    QCOMPARE(count(R"("epsilon")"), 2);
    QCOMPARE(count(R"("dimensions")"), 3);
    QCOMPARE(count(R"("literal")"), 4);
    QCOMPARE(count(R"("async_wrapped_opcode")"), 2);
}

void TestJson::everythingRoundTrips() {
    auto module = buildEverythingModule();
    QString failure = roundTripFailure(*module);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));

    // The imported module is fully linked: users, parameters, entry, fusion.
    auto imported = moduleFromJson(moduleToJson(*module), "everything.json");
    QVERIFY2(imported.isOk(), imported.status().toString().c_str());
    HloModule& m = **imported;
    QCOMPARE(m.computationCount(), module->computationCount());
    QVERIFY(m.entryComputation() != nullptr);
    QCOMPARE(QString::fromStdString(m.entryComputation()->name()), QStringLiteral("main"));
    HloComputation* main = m.entryComputation();
    QCOMPARE(main->parameterCount(), 3);
    QCOMPARE(QString::fromStdString(main->parameter(2)->name()), QStringLiteral("p2"));
    HloInstruction* p0 = main->findInstruction("p0");
    QVERIFY(p0 != nullptr);
    QCOMPARE(p0->userCount(), module->entryComputation()->findInstruction("p0")->userCount());
    HloInstruction* fusion = main->findInstruction("fusion");
    QVERIFY(fusion->fusedComputation() != nullptr);
    QCOMPARE(fusion->fusedComputation()->fusionInstruction(), fusion);
    QCOMPARE(fusion->fusedComputation(), m.findComputation("fused_negate"));
    HloInstruction* custom = main->findInstruction("custom");
    QCOMPARE(custom->controlPredecessors().size(), size_t(2));
    QCOMPARE(main->findInstruction("fft")->controlSuccessors().size(), size_t(2));
    QVERIFY(custom->hasSideEffect());
    QCOMPARE(main->root(), main->findInstruction("out"));
    QCOMPARE(QString::fromStdString(m.findComputation("async_wrapped")->executionThread()),
             QStringLiteral("sparsecore"));
}

void TestJson::emptyAndMinimalModules() {
    HloModule empty("empty");
    QString failure = roundTripFailure(empty);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    QCOMPARE(QString::fromStdString(moduleToJson(empty, -1)),
             QStringLiteral(
                 R"({"format":"hloscope-module","version":1,"name":"empty","is_scheduled":false,)"
                 R"("computations":[]})"
                 "\n"));

    // A computation without a root and a module without an entry.
    HloModule noRoot("no_root");
    auto computation = std::make_unique<HloComputation>("c");
    addParameter(*computation, 0, "x", f32({2}));
    noRoot.addComputation(std::move(computation));
    failure = roundTripFailure(noRoot);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    QVERIFY(moduleToJson(noRoot, -1).find(R"("is_entry":false,"root":null)") != std::string::npos);

    // Empty header attribute lists are kept as present-but-empty.
    HloModule header("header");
    header.setHasInputOutputAliasAttribute(true);
    header.setHasBufferDonorAttribute(true);
    failure = roundTripFailure(header);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    QVERIFY(moduleToJson(header, -1).find(R"("input_output_alias":[],"buffer_donor":[])") !=
            std::string::npos);
}

void TestJson::forwardReferencesResolve() {
    // Operands, control predecessors and the root may name instructions that
    // come later in the list; called computations may come later too.
    const std::string json =
        R"({"format": "hloscope-module", "version": 1, "name": "m", "computations": [
    {"name": "main", "is_entry": true, "root": "r", "instructions": [
        {"name": "r", "opcode": "call", "shape": "f32[2]{0}", "operands": ["n"], "control_predecessors": ["p"],
         "called_computations": [{"name": "to_apply", "computations": ["later"], "is_list": false}]},
        {"name": "n", "opcode": "negate", "shape": "f32[2]{0}", "operands": ["p"]},
        {"name": "p", "opcode": "parameter", "shape": "f32[2]{0}", "operands": [], "parameter_number": 0}]},
    {"name": "later", "root": "q", "instructions": [
        {"name": "q", "opcode": "parameter", "shape": "f32[2]{0}", "operands": [], "parameter_number": 0}]}]})";
    auto imported = moduleFromJson(json, "forward.json");
    QVERIFY2(imported.isOk(), imported.status().toString().c_str());
    HloComputation* main = (*imported)->findComputation("main");
    QVERIFY(main != nullptr);
    QCOMPARE((*imported)->entryComputation(), main);
    HloInstruction* r = main->findInstruction("r");
    QCOMPARE(r->operand(0), main->findInstruction("n"));
    QCOMPARE(r->controlPredecessors().front(), main->findInstruction("p"));
    QCOMPARE(r->toApply(), (*imported)->findComputation("later"));
    QCOMPARE(main->root(), r);
    QCOMPARE(main->findInstruction("p")->users().size(), size_t(1));
    QCOMPARE(main->parameterCount(), 1);
    QString failure = roundTripFailure(**imported);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

void TestJson::nullCalledComputationAndRootSurvive() {
    HloModule module("nulls");
    auto computation = std::make_unique<HloComputation>("main");
    HloInstruction* x = addParameter(*computation, 0, "x", f32({2}));
    HloInstruction* call = addOp(*computation, HloOpcode::kCall, "call", f32({2}), {x});
    call->setCalledComputationList("branch_computations", {nullptr});
    call->setTupleIndex(3);  // an index slot on an opcode that does not print it
    module.addComputation(std::move(computation), true);
    QString failure = roundTripFailure(module);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    const std::string json = moduleToJson(module, -1);
    QVERIFY(json.find(R"("computations":[null],"is_list":true)") != std::string::npos);
    QVERIFY(json.find(R"("root":null)") != std::string::npos);
    QVERIFY(json.find(R"("tuple_index":3)") != std::string::npos);
}

void TestJson::optionalKeysTakeDefaults() {
    // Hand-written JSON may leave out optional keys of nested objects.
    QString json = moduleJson(kParam + QStringLiteral(R"(,
        {"name": "rw", "opcode": "reduce-window", "shape": "f32[1]{0}", "operands": ["p", "p"],
         "window": [{"size": 2}], "slice": [[0, 2]], "padding": [[1, 2]],
         "dot_dimension_numbers": {"lhs_contracting_dims": [0]},
         "gather_dimension_numbers": {"index_vector_dim": 1},
         "scatter_dimension_numbers": {"index_vector_dim": 2},
         "indices_are_sorted": false})"),
                              QStringLiteral("\"rw\""));
    auto imported = importText(json);
    QVERIFY2(imported.isOk(), imported.status().toString().c_str());
    const HloInstruction* rw = (*imported)->entryComputation()->findInstruction("rw");
    QVERIFY(rw->window() != nullptr);
    QCOMPARE(rw->window()->dimensions.size(), size_t(1));
    QCOMPARE(rw->window()->dimensions[0], (WindowDimension{2, 1, 0, 0, 1, 1, false}));
    QCOMPARE(rw->slice().front(), (SliceDimension{0, 2, 1}));
    QCOMPARE(rw->padding().front(), (PaddingDimension{1, 2, 0}));
    QCOMPARE(rw->dotDimensionNumbers()->lhsContractingDimensions, std::vector<int64_t>{0});
    QVERIFY(rw->dotDimensionNumbers()->rhsContractingDimensions.empty());
    QCOMPARE(rw->gatherDimensionNumbers()->indexVectorDim, int64_t(1));
    QCOMPARE(rw->scatterDimensionNumbers()->indexVectorDim, int64_t(2));
    QVERIFY(!rw->extra()->indicesAreSorted);
    // The imported module exports in the canonical (complete) form, which is
    // then a fixed point.
    QString failure = roundTripFailure(**imported);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

void TestJson::textFormsOfTypedAttributes() {
    // window, padding and convolution_dimension_numbers also accept their
    // HLO text forms (one grammar: the parser's).
    QString json = moduleJson(kParam + QStringLiteral(R"(,
        {"name": "c", "opcode": "convolution", "shape": "f32[1,1,1,1]{3,2,1,0}", "operands": ["p", "p"],
         "window": "size=3x3 stride=2x2 pad=0_1x1_0 rhs_reversal=0x1",
         "convolution_dimension_numbers": "b01f_01io->b01f", "padding": "0_1x2_3_1"})"),
                              QStringLiteral("\"c\""));
    auto imported = importText(json);
    QVERIFY2(imported.isOk(), imported.status().toString().c_str());
    const HloInstruction* c = (*imported)->entryComputation()->findInstruction("c");
    QVERIFY(c->window() != nullptr);
    QCOMPARE(c->window()->dimensions.size(), size_t(2));
    QCOMPARE(c->window()->dimensions[1], (WindowDimension{3, 2, 1, 0, 1, 1, true}));
    QVERIFY(c->convolutionDimensionNumbers() != nullptr);
    QCOMPARE(QString::fromStdString(c->convolutionDimensionNumbers()->toString()),
             QStringLiteral("b01f_01io->b01f"));
    QCOMPARE(c->convolutionDimensionNumbers()->inputFeatureDimension, int64_t(3));
    QCOMPARE(c->padding().size(), size_t(2));
    QCOMPARE(c->padding()[1], (PaddingDimension{2, 3, 1}));

    auto bad = importText(moduleJson(kParam + QStringLiteral(R"(,
        {"name": "c", "opcode": "convolution", "shape": "f32[1]{0}", "operands": ["p", "p"],
         "window": "size=3x3 stride=banana"})"),
                                     QStringLiteral("\"c\"")));
    QVERIFY(!bad.isOk());
    QVERIFY2(bad.status().message().rfind(
                 "$.computations[0].instructions[1].window: cannot parse window", 0) == 0,
             bad.status().message().c_str());
}

void TestJson::hloSnippetsRoundTrip_data() {
    QTest::addColumn<QString>("hlo");
    auto row = [](const char* name, const char* body) {
        QTest::newRow(name) << QString::fromUtf8(body);
    };
    row("header",
        R"(HloModule header, is_scheduled=true, entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}, replica_count=2, num_partitions=2, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }, frontend_attributes={attr="v"}

ENTRY %main (p0: f32[2], p1: s32[]) -> f32[2] {
  %p0 = f32[2]{0} parameter(0)
  %p1 = s32[] parameter(1)
  ROOT %neg = f32[2]{0} negate(f32[2]{0} %p0), metadata={op_type="Neg" op_name="n" source_file="a.py" source_line=3}
}
)");
    row("slice_pad_dynamic_slice", R"(HloModule m

ENTRY %main (p: f32[8,8], i: s32[]) -> (f32[4,3], f32[9,17], f32[2,2]) {
  %p = f32[8,8]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %slice = f32[4,3]{1,0} slice(f32[8,8]{1,0} %p), slice={[0:4], [2:8:2]}
  %zero = f32[] constant(0)
  %pad = f32[9,17]{1,0} pad(f32[8,8]{1,0} %p, f32[] %zero), padding=0_1x1_0_1
  %ds = f32[2,2]{1,0} dynamic-slice(f32[8,8]{1,0} %p, s32[] %i, s32[] %i), dynamic_slice_sizes={2,2}
  ROOT %t = (f32[4,3]{1,0}, f32[9,17]{1,0}, f32[2,2]{1,0}) tuple(%slice, %pad, %ds)
}
)");
    row("reduce_window_and_reduce", R"(HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[8,8]) -> (f32[4,4], f32[8]) {
  %p = f32[8,8]{1,0} parameter(0)
  %zero = f32[] constant(0)
  %rw = f32[4,4]{1,0} reduce-window(f32[8,8]{1,0} %p, f32[] %zero), window={size=2x3 stride=2x2 pad=0_0x1_1 lhs_dilate=1x1 rhs_dilate=1x2 rhs_reversal=0x1}, to_apply=%add
  %r = f32[8]{0} reduce(f32[8,8]{1,0} %p, f32[] %zero), dimensions={1}, to_apply=%add
  ROOT %t = (f32[4,4]{1,0}, f32[8]{0}) tuple(%rw, %r)
}
)");
    row("convolution", R"(HloModule m

ENTRY %main (x: f32[1,8,8,4], w: f32[3,3,2,4]) -> f32[1,8,8,4] {
  %x = f32[1,8,8,4]{3,2,1,0} parameter(0)
  %w = f32[3,3,2,4]{3,2,1,0} parameter(1)
  ROOT %conv = f32[1,8,8,4]{3,2,1,0} convolution(f32[1,8,8,4]{3,2,1,0} %x, f32[3,3,2,4]{3,2,1,0} %w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
)");
    row("dot_gather_scatter", R"(HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[8,8], idx: s32[4,1], upd: f32[4,8]) -> (f32[8,8], f32[4,8], f32[8,8]) {
  %p = f32[8,8]{1,0} parameter(0)
  %idx = s32[4,1]{1,0} parameter(1)
  %upd = f32[4,8]{1,0} parameter(2)
  %dot = f32[8,8]{1,0} dot(f32[8,8]{1,0} %p, f32[8,8]{1,0} %p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %gather = f32[4,8]{1,0} gather(f32[8,8]{1,0} %p, s32[4,1]{1,0} %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, indices_are_sorted=true
  %scatter = f32[8,8]{1,0} scatter(f32[8,8]{1,0} %p, s32[4,1]{1,0} %idx, f32[4,8]{1,0} %upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=%add
  ROOT %t = (f32[8,8]{1,0}, f32[4,8]{1,0}, f32[8,8]{1,0}) tuple(%dot, %gather, %scatter)
}
)");
    row("compare_sort_topk", R"(HloModule m

%less (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %lt = pred[] compare(f32[] %a, f32[] %b), direction=LT, type=TOTALORDER
}

ENTRY %main (p: f32[8]) -> (f32[8], (f32[2], s32[2])) {
  %p = f32[8]{0} parameter(0)
  %sort = f32[8]{0} sort(f32[8]{0} %p), dimensions={0}, is_stable=true, to_apply=%less
  %topk = (f32[2]{0}, s32[2]{0}) topk(f32[8]{0} %p), k=2, largest=true
  ROOT %t = (f32[8]{0}, (f32[2]{0}, s32[2]{0})) tuple(%sort, %topk)
}
)");
    row("batch_norm_precision_fft_rng", R"(HloModule m

ENTRY %main (x: f32[2,4], s: f32[4]) -> (f32[2,4], (f32[2,4], f32[4], f32[4]), c64[2,3], f32[4]) {
  %x = f32[2,4]{1,0} parameter(0)
  %s = f32[4]{0} parameter(1)
  %rp = f32[2,4]{1,0} reduce-precision(f32[2,4]{1,0} %x), exponent_bits=5, mantissa_bits=10
  %bn = (f32[2,4]{1,0}, f32[4]{0}, f32[4]{0}) batch-norm-training(f32[2,4]{1,0} %x, f32[4]{0} %s, f32[4]{0} %s), epsilon=0.001, feature_index=1
  %fft = c64[2,3]{1,0} fft(f32[2,4]{1,0} %x), fft_type=RFFT, fft_length={4}
  %zero = f32[] constant(0)
  %one = f32[] constant(1)
  %rng = f32[4]{0} rng(f32[] %zero, f32[] %one), distribution=rng_uniform
  ROOT %t = (f32[2,4]{1,0}, (f32[2,4]{1,0}, f32[4]{0}, f32[4]{0}), c64[2,3]{1,0}, f32[4]{0}) tuple(%rp, %bn, %fft, %rng)
}
)");
    row("fusion_custom_call_control", R"(HloModule m

%fused (param_0: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0)
  ROOT %neg = f32[4]{0} negate(f32[4]{0} %param_0)
}

ENTRY %main (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4]{0} parameter(0)
  %fusion = f32[4]{0} fusion(f32[4]{0} %x), kind=kLoop, calls=%fused
  %cc = f32[4]{0} custom-call(f32[4]{0} %x), custom_call_target="my_target", custom_call_has_side_effect=true, backend_config="{\"k\": 1}", control-predecessors={%fusion}
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%fusion, %cc), sharding={{replicated}, {maximal device=0}}
}
)");
    row("while_conditional_iota_gte", R"(HloModule m

%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[4]{0}) %s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(s32[] %i, s32[] %n), direction=LT
}

%body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
  %s = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[4]{0}) %s), index=0
  %v = f32[4]{0} get-tuple-element((s32[], f32[4]{0}) %s), index=1
  %one = s32[] constant(1)
  %next = s32[] add(s32[] %i, s32[] %one)
  ROOT %t = (s32[], f32[4]{0}) tuple(s32[] %next, f32[4]{0} %v)
}

%b0 (x: f32[4]) -> f32[4] {
  ROOT %x = f32[4]{0} parameter(0)
}

%b1 (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %neg = f32[4]{0} negate(f32[4]{0} %x)
}

ENTRY %main (v: f32[4], k: s32[]) -> ((s32[], f32[4]), f32[4], s32[2,3]) {
  %v = f32[4]{0} parameter(0)
  %k = s32[] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(s32[] %zero, f32[4]{0} %v)
  %loop = (s32[], f32[4]{0}) while((s32[], f32[4]{0}) %init), condition=%cond, body=%body
  %cond.1 = f32[4]{0} conditional(s32[] %k, f32[4]{0} %v, f32[4]{0} %v), branch_computations={%b0, %b1}
  %iota = s32[2,3]{1,0} iota(), iota_dimension=1
  ROOT %t = ((s32[], f32[4]{0}), f32[4]{0}, s32[2,3]{1,0}) tuple(%loop, %cond.1, %iota)
}
)");
    row("async_sugar", R"(HloModule m, is_scheduled=true

%async_comp (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %cc = f32[4]{0} custom-call(f32[4]{0} %p), custom_call_target="foo"
}, execution_thread="sparsecore"

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %start = ((f32[4]{0}), f32[4]{0}, u32[]) custom-call-start(f32[4]{0} %x), async_execution_thread="sparsecore", custom_call_target="foo"
  ROOT %done = f32[4]{0} custom-call-done(((f32[4]{0}), f32[4]{0}, u32[]) %start)
}
)");
    row("stack_frames", R"(HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

FileNames
1 "model.py"

FunctionNames
1 "forward"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}

ENTRY %main (x: f32[2]) -> f32[2] {
  %x = f32[2]{0} parameter(0)
  ROOT %neg = f32[2]{0} negate(f32[2]{0} %x), metadata={op_type="neg" stack_frame_id=1}
}
)");
}

void TestJson::hloSnippetsRoundTrip() {
    QFETCH(QString, hlo);
    HloParseOptions options;
    options.fileName = QTest::currentDataTag();
    auto module = parseHloModule(hlo.toStdString(), options);
    QVERIFY2(module.isOk(), module.status().toString().c_str());
    QString failure = roundTripFailure(**module);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

// XLA's async sugar: the wrapper computation travels in the JSON and is not wrapped again on
// import, also once a pass has changed it (then the chain is plain async ops, as in text).
void TestJson::asyncSugarThroughJson() {
    auto module = parseHloModule(R"(HloModule m
square {
  p = f32[4] parameter(0)
  ROOT m = f32[4] multiply(p, p)
}
ENTRY e {
  x = f32[4] parameter(0)
  f = ((f32[4]), f32[4], s32[]) fusion-start(x), kind=kLoop, calls=square
  fd = f32[4] fusion-done(f)
  c = ((), (), s32[]) call-start(), to_apply=square
  cu = ((f32[4]), (), s32[]) call-update(c, fd)
  ROOT cd = f32[4] call-done(cu)
})");
    QVERIFY2(module.isOk(), module.status().toString().c_str());
    QCOMPARE((*module)->computationCount(), int64_t(4));
    QString failure = roundTripFailure(**module);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    // A pass changes the fusion's wrapper.
    HloInstruction* start = (*module)->entryComputation()->findInstruction("f");
    HloComputation* wrapper = start->calledComputation("calls");
    QVERIFY(wrapper && asyncSugarRoot(*start));
    auto negate =
        std::make_unique<HloInstruction>(HloOpcode::kNegate, "neg", wrapper->root()->shape());
    negate->appendOperand(wrapper->root());
    wrapper->setRoot(wrapper->addInstruction(std::move(negate)));
    auto imported = moduleFromJson(moduleToJson(**module), "changed.json");
    QVERIFY2(imported.isOk(), imported.status().toString().c_str());
    QCOMPARE((*imported)->computationCount(), int64_t(4));
    const std::string text = printModule(**module);
    QCOMPARE(printModule(**imported), text);
    QVERIFY(text.find("async-start(f32[4] %x), calls=%") != std::string::npos);
    QVERIFY(text.find("call-done(") != std::string::npos);
    // A sugar start without a wrapper (as a program may build one) whose shape is not
    // ((operands...), result, ...) is an import error naming it.
    HloModule built("built");
    auto entry = std::make_unique<HloComputation>("e");
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, "p",
                                              Shape::makeArray(PrimitiveType::F32, {4}));
    p->setParameterNumber(0);
    HloInstruction* parameter = entry->addInstruction(std::move(p));
    auto bad = std::make_unique<HloInstruction>(HloOpcode::kAsyncStart, "bad",
                                                Shape::makeArray(PrimitiveType::F32, {4}));
    bad->appendOperand(parameter);
    bad->mutableExtra().asyncWrappedOpcode = HloOpcode::kNegate;
    entry->setRoot(entry->addInstruction(std::move(bad)));
    built.addComputation(std::move(entry), true);
    auto broken = moduleFromJson(moduleToJson(built), "broken.json");
    QVERIFY(!broken.isOk());
    QVERIFY2(broken.status().message().find("async-start bad") != std::string::npos &&
                 broken.status().message().find("((operand0_shape") != std::string::npos,
             broken.status().toString().c_str());
}

void TestJson::syntaxErrorHasLineAndColumn() {
    const std::string text =
        "{\n  \"format\": \"hloscope-module\",\n  \"version\": 1,\n  \"name\": m\n}\n";
    auto result = moduleFromJson(text, "model.json");
    QVERIFY(!result.isOk());
    const Status& status = result.status();
    QCOMPARE(status.code(), StatusCode::kInvalidArgument);
    QVERIFY(status.location().has_value());
    QCOMPARE(QString::fromStdString(status.location()->file), QStringLiteral("model.json"));
    QCOMPARE(status.location()->line, 4);
    QCOMPARE(status.location()->column, 11);
    QVERIFY2(status.message().rfind("$: invalid JSON at line 4, column 11: syntax error", 0) == 0,
             status.message().c_str());
    QVERIFY2(status.toString().rfind("model.json:4:11: error: ", 0) == 0,
             status.toString().c_str());

    // Truncated input points past the end.
    result = moduleFromJson("{\"format\": \"hloscope-module\"", "t.json");
    QVERIFY(!result.isOk());
    QCOMPARE(result.status().location()->line, 1);
    QCOMPARE(result.status().location()->column, 29);
    QVERIFY(result.status().message().find("unexpected end of input") != std::string::npos);

    // Empty input.
    result = moduleFromJson("", "empty.json");
    QVERIFY(!result.isOk());
    QCOMPARE(result.status().location()->line, 1);
    QCOMPARE(result.status().location()->column, 1);
}

void TestJson::deepNestingIsRejected() {
    // nlohmann builds and copies values recursively; import bounds the depth
    // before parsing so that hostile input cannot exhaust the stack.
    std::string deep =
        "{\"format\": \"hloscope-module\", \"version\": 1, \"name\": \"m\",\n \"attributes\": " +
        std::string(200000, '[') + std::string(200000, ']') + ", \"computations\": []}";
    auto result = moduleFromJson(deep, "deep.json");
    QVERIFY(!result.isOk());
    QCOMPARE(result.status().code(), StatusCode::kInvalidArgument);
    QVERIFY2(result.status().message().find("nesting deeper than") != std::string::npos,
             result.status().message().c_str());
    QCOMPARE(result.status().location()->line, 2);
    QCOMPARE(result.status().location()->column, 79);  // the bracket that is one too deep
    // Brackets inside strings do not count.
    HloModule module("brackets");
    std::string brackets(500, '[');
    brackets += "\"\\";
    brackets.append(500, '{');
    module.mutableAttributes().push_back({"a", brackets});
    QString failure = roundTripFailure(module);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

void TestJson::truncatedAndCorruptedInputFailsCleanly() {
    auto module = buildEverythingModule();
    const std::string json = moduleToJson(*module);
    int failures = 0;
    for (size_t length = 0; length < json.size() - 1; length += 7) {
        auto result = moduleFromJson(std::string_view(json).substr(0, length), "cut.json");
        QVERIFY2(!result.isOk(),
                 qPrintable(QStringLiteral("prefix of %1 bytes imported").arg(length)));
        QCOMPARE(result.status().code(), StatusCode::kInvalidArgument);
        QVERIFY(result.status().location()->line > 0);  // a syntax error always has line:col
        ++failures;
    }
    QVERIFY(failures > 100);
    // Single-character corruptions: never a crash; an error names a path.
    const char replacements[] = {'x', '"', '1', '[', '}', ',', ' ', '-'};
    for (size_t i = 0; i < json.size(); i += 5) {
        std::string corrupt = json;
        corrupt[i] = replacements[i % sizeof(replacements)];
        auto result = moduleFromJson(corrupt, "corrupt.json");
        if (result.isOk()) continue;  // e.g. a changed name or a space in a string
        QCOMPARE(result.status().code(), StatusCode::kInvalidArgument);
        QVERIFY2(result.status().message().rfind("$", 0) == 0, result.status().message().c_str());
    }
}

void TestJson::importErrors_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected");  // the message starts with this

    const QString i1 = QStringLiteral("$.computations[0].instructions[1]");
    auto withSecond = [](const QString& second, const QString& root = QStringLiteral("\"p\"")) {
        return moduleJson(kParam + QStringLiteral(",\n") + second, root);
    };

    // Wrong types.
    QTest::newRow("type: root not an object")
        << QStringLiteral("[1, 2]") << QStringLiteral("$: expected an object, got an array");
    QTest::newRow("type: version")
        << QStringLiteral(
               R"({"format": "hloscope-module", "version": "1", "name": "m", "computations": []})")
        << QStringLiteral("$.version: expected an integer, got a string");
    QTest::newRow("type: operands")
        << withSecond(R"({"name": "n", "opcode": "negate", "shape": "f32[2]{0}", "operands": "p"})")
        << i1 + ".operands: expected an array of strings, got a string";
    QTest::newRow("type: operand entry")
        << withSecond(R"({"name": "n", "opcode": "negate", "shape": "f32[2]{0}", "operands": [7]})")
        << i1 + ".operands[0]: expected a string, got an integer";
    QTest::newRow("type: dimensions")
        << withSecond(
               R"({"name": "n", "opcode": "reverse", "shape": "f32[2]{0}", "operands": ["p"], "dimensions": [0.5]})")
        << i1 + ".dimensions[0]: expected an integer, got a floating-point number";
    QTest::newRow("type: is_entry")
        << QStringLiteral(
               R"({"format": "hloscope-module", "version": 1, "name": "m", "computations": [{"name": "c", "is_entry": 1, "root": null, "instructions": []}]})")
        << QStringLiteral("$.computations[0].is_entry: expected a boolean, got an integer");
    QTest::newRow("type: window dim")
        << withSecond(
               R"({"name": "n", "opcode": "reduce-window", "shape": "f32[2]{0}", "operands": ["p", "p"], "window": [{"size": 2, "stride": true}]})")
        << i1 + ".window[0].stride: expected an integer, got a boolean";
    QTest::newRow("type: slice triple")
        << withSecond(
               R"({"name": "n", "opcode": "slice", "shape": "f32[2]{0}", "operands": ["p"], "slice": [[0, 1, 1, 1]]})")
        << i1 + ".slice[0]: expected 2 to 3 integers, got 4";
    QTest::newRow("type: stack frame")
        << moduleJson(kParam, "\"p\"", {}, R"("stack_frames": {"file_names": ["a", 3]},)")
        << QStringLiteral("$.stack_frames.file_names[1]: expected a string, got an integer");

    // Missing required keys.
    QTest::newRow("missing: format")
        << QStringLiteral(R"({"version": 1, "name": "m", "computations": []})")
        << QStringLiteral("$: missing required key \"format\"");
    QTest::newRow("missing: computations")
        << QStringLiteral(R"({"format": "hloscope-module", "version": 1, "name": "m"})")
        << QStringLiteral("$: missing required key \"computations\"");
    QTest::newRow("missing: shape")
        << withSecond(R"({"name": "n", "opcode": "negate", "operands": ["p"]})")
        << i1 + ": missing required key \"shape\"";
    QTest::newRow("missing: parameter_number")
        << moduleJson(
               R"({"name": "p", "opcode": "parameter", "shape": "f32[2]{0}", "operands": []})")
        << QStringLiteral(
               "$.computations[0].instructions[0]: missing required key \"parameter_number\"");
    QTest::newRow("missing: root")
        << QStringLiteral(
               R"({"format": "hloscope-module", "version": 1, "name": "m", "computations": [{"name": "c", "instructions": []}]})")
        << QStringLiteral("$.computations[0]: missing required key \"root\"");
    QTest::newRow("missing: gather index_vector_dim")
        << withSecond(
               R"({"name": "n", "opcode": "gather", "shape": "f32[2]{0}", "operands": ["p", "p"], "gather_dimension_numbers": {"offset_dims": []}})")
        << i1 + ".gather_dimension_numbers: missing required key \"index_vector_dim\"";

    // Unknown keys (typos must not vanish).
    QTest::newRow("unknown key: instruction")
        << withSecond(
               R"({"name": "n", "opcode": "negate", "shape": "f32[2]{0}", "operands": ["p"], "metdata": "x"})")
        << i1 + ".metdata: unknown key \"metdata\" (did you mean \"metadata\"?)";
    QTest::newRow("unknown key: top level")
        << moduleJson(kParam, "\"p\"", {}, R"("replica_cont": 2,)")
        << QStringLiteral(
               "$.replica_cont: unknown key \"replica_cont\" (did you mean \"replica_count\"?)");
    QTest::newRow("unknown key: nested")
        << withSecond(
               R"({"name": "n", "opcode": "dot", "shape": "f32[2]{0}", "operands": ["p", "p"], "dot_dimension_numbers": {"lhs_contracting": [0]}})")
        << i1 + ".dot_dimension_numbers.lhs_contracting: unknown key \"lhs_contracting\"";
    QTest::newRow("unknown key: odd characters")
        << moduleJson(kParam, "\"p\"", {}, R"("a.b c": 1,)")
        << QStringLiteral("$[\"a.b c\"]: unknown key \"a.b c\"");
    QTest::newRow("unknown key: no suggestion")
        << withSecond(
               R"({"name": "n", "opcode": "negate", "shape": "f32[2]{0}", "operands": ["p"], "zzzzzzzz": 1})")
        << i1 + ".zzzzzzzz: unknown key \"zzzzzzzz\"";

    // Bad shapes.
    QTest::newRow("bad shape")
        << withSecond(R"({"name": "n", "opcode": "negate", "shape": "f32[2,", "operands": ["p"]})")
        << i1 + ".shape: cannot parse shape \"f32[2,\": ";
    QTest::newRow("bad shape: entry layout")
        << moduleJson(
               kParam, "\"p\"", {},
               R"("entry_computation_layout": {"parameters": ["f32[2]{0}", "q32[]"], "result": "f32[2]{0}"},)")
        << QStringLiteral(
               "$.entry_computation_layout.parameters[1]: cannot parse shape \"q32[]\": ");

    // Unknown references.
    QTest::newRow("unknown operand")
        << withSecond(
               R"({"name": "n", "opcode": "add", "shape": "f32[2]{0}", "operands": ["p", "q"]})")
        << i1 + ".operands[1]: unknown operand \"q\"";
    QTest::newRow("unknown control predecessor")
        << withSecond(
               R"({"name": "n", "opcode": "negate", "shape": "f32[2]{0}", "operands": ["p"], "control_predecessors": ["zz"]})")
        << i1 + ".control_predecessors[0]: unknown control predecessor \"zz\"";
    QTest::newRow("unknown root")
        << moduleJson(kParam, "\"nope\"")
        << QStringLiteral("$.computations[0].root: unknown root instruction \"nope\"");
    QTest::newRow("unknown computation")
        << withSecond(
               R"({"name": "n", "opcode": "call", "shape": "f32[2]{0}", "operands": ["p"], "called_computations": [{"name": "to_apply", "computations": ["missing"], "is_list": false}]})")
        << i1 + ".called_computations[0].computations[0]: unknown computation \"missing\"";
    QTest::newRow("operand in another computation")
        << moduleJson(
               R"({"name": "n", "opcode": "negate", "shape": "f32[2]{0}", "operands": ["x"]})",
               "\"n\"",
               R"({"name": "other", "root": "x", "instructions": [{"name": "x", "opcode": "parameter", "shape": "f32[2]{0}", "operands": [], "parameter_number": 0}]},)")
        << QStringLiteral("$.computations[1].instructions[0].operands[0]: unknown operand \"x\"");

    // Duplicates.
    QTest::newRow("duplicate instruction")
        << withSecond(
               R"({"name": "p", "opcode": "negate", "shape": "f32[2]{0}", "operands": ["p"]})")
        << i1 + ".name: duplicate instruction name \"p\"";
    QTest::newRow("duplicate computation")
        << moduleJson(kParam, "\"p\"", R"({"name": "main", "root": null, "instructions": []},)")
        << QStringLiteral(
               "$.computations[1].name: duplicate computation name \"main\" (first defined at "
               "$.computations[0])");
    QTest::newRow("duplicate control predecessor")
        << withSecond(
               R"({"name": "n", "opcode": "negate", "shape": "f32[2]{0}", "operands": ["p"], "control_predecessors": ["p", "p"]})")
        << i1 + ".control_predecessors[1]: duplicate control predecessor \"p\"";
    QTest::newRow("duplicate called attribute")
        << withSecond(
               R"({"name": "n", "opcode": "call", "shape": "f32[2]{0}", "operands": ["p"], "called_computations": [{"name": "to_apply", "computations": ["main"]}, {"name": "to_apply", "computations": ["main"]}]})")
        << i1 + ".called_computations[1].name: duplicate called-computation attribute \"to_apply\"";
    QTest::newRow("two entries")
        << moduleJson(kParam, "\"p\"",
                      R"({"name": "e", "is_entry": true, "root": null, "instructions": []},)")
        << QStringLiteral(
               "$.computations[1].is_entry: a second entry computation (the first is "
               "$.computations[0])");

    // Unknown opcodes and enumerations.
    QTest::newRow("unknown opcode")
        << withSecond(
               R"({"name": "n", "opcode": "ad", "shape": "f32[2]{0}", "operands": ["p", "p"]})")
        << i1 + ".opcode: unknown opcode \"ad\"";
    QTest::newRow("unknown wrapped opcode")
        << withSecond(
               R"({"name": "n", "opcode": "async-start", "async_wrapped_opcode": "frob", "shape": "f32[2]{0}", "operands": ["p"]})")
        << i1 + ".async_wrapped_opcode: unknown opcode \"frob\"";
    QTest::newRow("unknown direction")
        << withSecond(
               R"({"name": "n", "opcode": "compare", "shape": "pred[2]{0}", "operands": ["p", "p"], "comparison_direction": "LTE"})")
        << i1 + ".comparison_direction: unknown comparison direction \"LTE\"";
    QTest::newRow("unknown alias kind")
        << moduleJson(
               kParam, "\"p\"", {},
               R"("input_output_alias": [{"output_index": [], "parameter_number": 0, "parameter_index": [], "kind": "might-alias"}],)")
        << QStringLiteral(
               "$.input_output_alias[0].kind: expected \"may-alias\" or \"must-alias\", got "
               "\"might-alias\"");

    // Integer ranges and format identification.
    QTest::newRow("range: int64 overflow")
        << withSecond(
               R"({"name": "n", "opcode": "reverse", "shape": "f32[2]{0}", "operands": ["p"], "dimensions": [9223372036854775808]})")
        << i1 + ".dimensions[0]: integer 9223372036854775808 is out of range for int64";
    QTest::newRow("range: negative parameter")
        << moduleJson(
               R"({"name": "p", "opcode": "parameter", "shape": "f32[2]{0}", "operands": [], "parameter_number": -1})")
        << QStringLiteral(
               "$.computations[0].instructions[0].parameter_number: expected a non-negative "
               "integer, got -1");
    QTest::newRow("format name")
        << QStringLiteral(R"({"format": "other", "version": 1, "name": "m", "computations": []})")
        << QStringLiteral("$.format: expected \"hloscope-module\", got \"other\"");
    QTest::newRow("format version")
        << QStringLiteral(
               R"({"format": "hloscope-module", "version": 2, "name": "m", "computations": []})")
        << QStringLiteral("$.version: unsupported format version 2");
    QTest::newRow("bad epsilon")
        << withSecond(
               R"({"name": "n", "opcode": "batch-norm-training", "shape": "f32[2]{0}", "operands": ["p", "p", "p"], "epsilon": "small"})")
        << i1 + ".epsilon: cannot parse epsilon \"small\" as a number";
    QTest::newRow("empty name")
        << withSecond(
               R"({"name": "", "opcode": "negate", "shape": "f32[2]{0}", "operands": ["p"]})")
        << i1 + ".name: instruction name is empty";
}

void TestJson::importErrors() {
    QFETCH(QString, json);
    QFETCH(QString, expected);
    auto result = moduleFromJson(json.toStdString(), "bad.json");
    QVERIFY2(!result.isOk(), "import unexpectedly succeeded");
    const Status& status = result.status();
    QCOMPARE(status.code(), StatusCode::kInvalidArgument);
    QVERIFY(status.location().has_value());
    QCOMPARE(QString::fromStdString(status.location()->file), QStringLiteral("bad.json"));
    const QString message = QString::fromStdString(status.message());
    QVERIFY2(message.startsWith(expected),
             qPrintable(QStringLiteral("got: %1\nexpected prefix: %2").arg(message, expected)));
    QVERIFY2(
        QString::fromStdString(status.toString()).startsWith(QStringLiteral("bad.json: error: $")),
        status.toString().c_str());
}

void TestJson::documentedExampleIsExact() {
    // docs/json_format.md shows an HLO module and its export; both must stay
    // exactly what the code does.
    QFile file(QStringLiteral(HLOSCOPE_SOURCE_DIR "/docs/json_format.md"));
    QVERIFY2(file.open(QIODevice::ReadOnly), "docs/json_format.md is missing");
    const QString doc = QString::fromUtf8(file.readAll());
    auto block = [&](const QString& fence, const QString& startsWith) -> QString {
        for (qsizetype at = doc.indexOf(fence); at >= 0; at = doc.indexOf(fence, at + 1)) {
            qsizetype begin = at + fence.size();
            qsizetype end = doc.indexOf(QStringLiteral("\n```"), begin);
            if (end < 0) break;
            QString body = doc.mid(begin, end - begin + 1);
            if (body.startsWith(startsWith)) return body;
        }
        return {};
    };
    const QString json =
        block(QStringLiteral("```json\n"), QStringLiteral("{\n  \"format\": \"hloscope-module\""));
    QVERIFY2(!json.isEmpty(), "no full-module ```json example in docs/json_format.md");
    const QString hlo = block(QStringLiteral("```\n"), QStringLiteral("HloModule "));
    QVERIFY2(!hlo.isEmpty(), "no HLO example in docs/json_format.md");

    auto imported = moduleFromJson(json.toStdString(), "json_format.md");
    QVERIFY2(imported.isOk(), imported.status().toString().c_str());
    QCOMPARE(QString::fromStdString(moduleToJson(**imported)), json);
    QCOMPARE(QString::fromStdString(printModule(**imported)), hlo);

    auto parsed = parseHloModule(hlo.toStdString());
    QVERIFY2(parsed.isOk(), parsed.status().toString().c_str());
    QCOMPARE(QString::fromStdString(moduleToJson(**parsed)), json);
}

void TestJson::examplesRoundTrip_data() {
    QTest::addColumn<QString>("path");
    QDir dir(kExamplesDir);
    const QStringList files = dir.entryList({QStringLiteral("*.hlo")}, QDir::Files, QDir::Name);
    if (files.isEmpty()) QSKIP(qPrintable(QStringLiteral("no examples in %1").arg(kExamplesDir)));
    for (const QString& file : files) QTest::newRow(qPrintable(file)) << dir.filePath(file);
}

namespace {

// Parses every module of `path` and round-trips it through JSON.
QString fileRoundTripFailure(const QString& path, bool* parsed) {
    *parsed = false;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return QStringLiteral("cannot open %1").arg(path);
    const std::string text = file.readAll().toStdString();
    HloParseOptions options;
    options.fileName = path.toStdString();
    auto modules = parseHloModules(text, options);
    if (!modules.isOk()) return QString::fromStdString(modules.status().toString());
    *parsed = true;
    for (const auto& module : *modules) {
        QString failure = roundTripFailure(*module);
        if (!failure.isEmpty())
            return QStringLiteral("module %1: %2")
                .arg(QString::fromStdString(module->name()), failure);
    }
    return {};
}

}  // namespace

void TestJson::examplesRoundTrip() {
    QFETCH(QString, path);
    bool parsed = false;
    QString failure = fileRoundTripFailure(path, &parsed);
    QVERIFY2(parsed, qPrintable(failure));  // bundled examples must parse
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

void TestJson::corpusSampleRoundTrips_data() {
    QTest::addColumn<QString>("path");
    if (!QDir(kCorpusValidDir).exists())
        QSKIP(qPrintable(
            QStringLiteral("corpus not found at %1 (it lives in ../shared/corpus beside a "
                           "developer checkout); skipping")
                .arg(kCorpusValidDir)));
    QStringList files;
    QDirIterator it(kCorpusValidDir, {QStringLiteral("*.hlo")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) files << it.next();
    files.sort();
    if (files.isEmpty()) QSKIP("corpus has no .hlo files");
    // An evenly spread, deterministic sample.
    const qsizetype step = std::max<qsizetype>(1, files.size() / kCorpusSampleSize);
    for (qsizetype i = 0; i < files.size(); i += step)
        QTest::newRow(qPrintable(QDir(kCorpusValidDir).relativeFilePath(files[i]))) << files[i];
}

void TestJson::corpusSampleRoundTrips() {
    QFETCH(QString, path);
    bool parsed = false;
    QString failure = fileRoundTripFailure(path, &parsed);
    // Parser coverage is tst_corpus's business; here only the JSON round trip counts.
    if (!parsed) QSKIP(qPrintable(QStringLiteral("does not parse: %1").arg(failure)));
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

void TestJson::recursiveCallIsAnError() {
    // JSON can name any computation in to_apply, the one it is in among them: loading such a
    // module is an error naming the instruction (nothing after loading could walk it).
    auto module = parseHloModule("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}");
    QVERIFY(module.isOk());
    HloComputation* entry = (*module)->entryComputation();
    auto call = std::make_unique<HloInstruction>(HloOpcode::kCall, "again", entry->root()->shape());
    call->appendOperand(entry->root());
    CalledComputationAttribute attribute;
    attribute.name = "to_apply";
    attribute.computations = {entry};
    call->mutableCalledComputationAttributes().push_back(attribute);
    entry->setRoot(entry->addInstruction(std::move(call)));
    const std::string json = moduleToJson(**module);
    auto loaded = loadModule(json, "recursive.json");
    QVERIFY(!loaded.isOk());
    const QString message = QString::fromStdString(loaded.status().toString());
    QVERIFY2(message.contains(QStringLiteral("recursive.json")), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("%again in computation e calls computation e recursively (e -> e)")),
             qPrintable(message));
}

QTEST_APPLESS_MAIN(TestJson)
#include "tst_json.moc"
