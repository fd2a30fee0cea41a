// StableHLO import (core/stablehlo/stablehlo_parser.h): snippets per op family checked
// against the HLO they become, CHLO decompositions checked numerically with
// the evaluator, one negative test per error class (with line:col), a
// robustness sweep over truncated/mutated input, and a sweep over the
// StableHLO corpus (../shared/corpus/stablehlo) whose failures must be
// listed with a reason in tests/stablehlo_exceptions.tsv.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTest>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "core/interpreter/interpreter.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "core/stablehlo/stablehlo_parser.h"

using namespace hloscope;

namespace {

const QString kCorpus = QStringLiteral(HLOSCOPE_CORPUS_DIR "/stablehlo");

HloVerifierOptions verifierOptions() {
    HloVerifierOptions options;
    options.allowUnboundedDynamism = true;
    return options;
}

// Imports a single-module snippet; fails the test (returning nullptr) when
// it does not import or does not verify.
std::unique_ptr<HloModule> import(const char* text) {
    auto modules = parseStableHlo(text, "snippet.mlir");
    if (!modules.isOk()) {
        qWarning("import failed: %s", modules.status().toString().c_str());
        return nullptr;
    }
    if (modules->size() != 1) {
        qWarning("expected one module, got %zu", modules->size());
        return nullptr;
    }
    Status verified = verifyModule(*modules->front(), verifierOptions());
    if (!verified.isOk()) {
        qWarning("verifier: %s", verified.toString().c_str());
        return nullptr;
    }
    return std::move(modules->front());
}

QString printed(const HloModule& module) {
    HloPrintOptions options;
    options.printOperandShapes = false;
    return QString::fromStdString(printModule(module, options));
}

#define EXPECT_LINE(text, line)                                                  \
    QVERIFY2((text).contains(QStringLiteral(line)),                              \
             qPrintable(QStringLiteral("missing: ") + QStringLiteral(line) +      \
                        QStringLiteral("\n--- in ---\n") + (text)))

const HloInstruction* findByOpcode(const HloComputation& computation, HloOpcode opcode) {
    for (const auto& instruction : computation.instructions())
        if (instruction->opcode() == opcode) return instruction.get();
    return nullptr;
}

Status importStatus(const char* text) {
    auto modules = parseStableHlo(text, "bad.mlir");
    return modules.isOk() ? Status::ok() : modules.status();
}

// Evaluates a parameterless module; returns its result (a tuple for several
// results).
Literal evaluate(const HloModule& module) {
    HloEvaluator evaluator;
    std::vector<Literal> arguments;
    auto result = evaluator.evaluate(module, arguments);
    if (!result.isOk()) {
        qWarning("evaluation failed: %s", result.status().toString().c_str());
        return Literal();
    }
    return std::move(*result);
}

bool near(double actual, double expected, double tolerance) {
    return std::fabs(actual - expected) <= tolerance * (1 + std::fabs(expected));
}

// ---- Corpus sweep -----------------------------------------------------------

QStringList mlirFilesUnder(const QString& relative, bool recursive) {
    QStringList files;
    QDirIterator it(kCorpus + QLatin1Char('/') + relative, {QStringLiteral("*.mlir")}, QDir::Files,
                    recursive ? QDirIterator::Subdirectories : QDirIterator::NoIteratorFlags);
    while (it.hasNext()) files << it.next();
    files.sort();
    return files;
}

// stage -> (file:line -> reason)
std::map<QString, std::map<QString, QString>> loadExceptions() {
    std::map<QString, std::map<QString, QString>> exceptions;
    QFile file(QStringLiteral(HLOSCOPE_SOURCE_DIR "/tests/stablehlo_exceptions.tsv"));
    if (!file.open(QIODevice::ReadOnly)) return exceptions;
    while (!file.atEnd()) {
        QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
        QStringList parts = line.split(QLatin1Char('\t'));
        if (parts.size() < 3) continue;
        exceptions[parts[0]][parts[1]] = parts[2];
    }
    return exceptions;
}

struct FolderResult {
    int chunks = 0;
    int imported = 0;
};

}  // namespace

class TestStableHlo : public QObject {
    Q_OBJECT
private slots:
    void elementwisePrettyAndGeneric();
    void denseLiterals();
    void typesAndLocations();
    void dataMovement();
    void dotAndConvolution();
    void reduceSortWhileIf();
    void functionsAndCalls();
    void customCallsAndChecks();
    void chloStructure();
    void chloNumerics();
    void dynamicOpsWithConstantShapes();
    void chunksAndFormatDetection();
    void genericModuleForm();
    void errorSyntax();
    void errorUndefinedValue();
    void errorUnknownOperation();
    void errorQuantizedType();
    void errorDenseLiteral();
    void errorChloWithoutDecomposition();
    void errorUndefinedFunction();
    void errorDeepNesting();
    void errorEmptyInput();
    void robustAgainstTruncationAndMutation();
    void corpusSweep();
};

void TestStableHlo::elementwisePrettyAndGeneric() {
    auto module = import(R"(
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = "stablehlo.multiply"(%0, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = stablehlo.abs %1 : tensor<2xf32>
  %3 = stablehlo.compare  GE, %2, %b,  TOTALORDER : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %4 = stablehlo.select %3, %2, %b : tensor<2xi1>, tensor<2xf32>
  %5 = "stablehlo.compare"(%4, %a) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %6 = stablehlo.convert %5 : (tensor<2xi1>) -> tensor<2xf32>
  return %6 : tensor<2xf32>
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    EXPECT_LINE(text, "HloModule main, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}");
    EXPECT_LINE(text, "ENTRY %main.1 (Arg_0.2: f32[2]{0}, Arg_1.3: f32[2]{0}) -> f32[2]{0} {");
    EXPECT_LINE(text, "%add.4 = f32[2]{0} add(%Arg_0.2, %Arg_1.3)");
    EXPECT_LINE(text, "%multiply.5 = f32[2]{0} multiply(%add.4, %Arg_1.3)");
    EXPECT_LINE(text, "%abs.6 = f32[2]{0} abs(%multiply.5)");
    EXPECT_LINE(text, "%compare.7 = pred[2]{0} compare(%abs.6, %Arg_1.3), direction=GE, type=TOTALORDER");
    EXPECT_LINE(text, "%select.8 = f32[2]{0} select(%compare.7, %abs.6, %Arg_1.3)");
    // FLOAT is the default comparison type of f32 and is not printed.
    EXPECT_LINE(text, "%compare.9 = pred[2]{0} compare(%select.8, %Arg_0.2), direction=LT\n");
    EXPECT_LINE(text, "ROOT %convert.10 = f32[2]{0} convert(%compare.9)");
}

void TestStableHlo::denseLiterals() {
    auto module = import(R"(
func.func @main() -> (tensor<2xf32>, tensor<2x2xi32>, tensor<2x2xbf16>, tensor<2xi1>, tensor<complex<f32>>, tensor<3xf32>, tensor<2xi4>, tensor<ui8>, tensor<4xui8>, tensor<f16>, tensor<f16>, tensor<100x100xf32>, tensor<2xf64>, tensor<2xcomplex<f64>>) {
  %0 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
  %1 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %2 = stablehlo.constant dense<1.5> : tensor<2x2xbf16>
  %3 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %4 = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f32>>
  %5 = stablehlo.constant dense<[0x7FC00000, 0xFF800000, 0x7F800001]> : tensor<3xf32>
  %6 = stablehlo.constant dense<[-8, 7]> : tensor<2xi4>
  %7 = stablehlo.constant dense<255> : tensor<ui8>
  %8 = stablehlo.constant dense<"0xFF"> : tensor<4xui8>
  %9 = stablehlo.constant dense<"0x003C"> : tensor<f16>
  %10 = stablehlo.constant dense<0.1> : tensor<f16>
  %11 = stablehlo.constant dense<0.0> : tensor<100x100xf32>
  %12 = stablehlo.constant dense<[1.000000e-01, -2.5E+10]> : tensor<2xf64>
  %13 = stablehlo.constant dense<"0x000000000000F03F0000000000000040000000000000084000000000000010C0"> : tensor<2xcomplex<f64>>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<2xf32>, tensor<2x2xi32>, tensor<2x2xbf16>, tensor<2xi1>, tensor<complex<f32>>, tensor<3xf32>, tensor<2xi4>, tensor<ui8>, tensor<4xui8>, tensor<f16>, tensor<f16>, tensor<100x100xf32>, tensor<2xf64>, tensor<2xcomplex<f64>>
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    EXPECT_LINE(text, "f32[2]{0} constant({1, 2})");                    // hex blob
    EXPECT_LINE(text, "s32[2,2]{1,0} constant({{1, 2}, {3, 4}})");
    EXPECT_LINE(text, "bf16[2,2]{1,0} constant({{1.5, 1.5}, {1.5, 1.5}})");  // splat
    EXPECT_LINE(text, "pred[2]{0} constant({true, false})");
    EXPECT_LINE(text, "c64[] constant((1, -2))");
    EXPECT_LINE(text, "f32[3]{0} constant({nan, -inf, nan(0x1)})");    // hex floats
    EXPECT_LINE(text, "s4[2]{0} constant({-8, 7})");
    EXPECT_LINE(text, "u8[] constant(255)");
    EXPECT_LINE(text, "u8[4]{0} constant({255, 255, 255, 255})");       // hex splat
    EXPECT_LINE(text, "f16[] constant(1)");
    EXPECT_LINE(text, "f16[] constant(0.099975586)");                   // rounded to f16
    EXPECT_LINE(text, "f64[2]{0} constant({0.1, -2.5e+10})");
    EXPECT_LINE(text, "c128[2]{0} constant({(1, 2), (3, -4)})");
    // Large splats become a scalar constant plus a broadcast.
    EXPECT_LINE(text, "f32[100,100]{1,0} broadcast(%constant.13), dimensions={}");
    // The evaluator reads the literal text back.
    Literal result = evaluate(*module);
    QVERIFY(result.isTuple());
    QCOMPARE(result.tupleElement(0).getAsDouble(1), 2.0);
    QCOMPARE(result.tupleElement(6).getAsInt64(0), int64_t{-8});
    QCOMPARE(result.tupleElement(13).getAsComplex(1), std::complex<double>(3, -4));
}

void TestStableHlo::typesAndLocations() {
    auto module = import(R"(#loc1 = loc("x.py":1:2)
#map = affine_map<(d0) -> (d0)>
module @types attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 4 : i32} {
  func.func @main(%t: tuple<tensor<f32>, tensor<2xi32>>, %k: !stablehlo.token, %d: tensor<?x3xf32>,
                  %e: tensor<?xf32, #stablehlo.bounds<5>> loc(#loc1)) -> tensor<2xi32> {
    %0 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>, tensor<2xi32>>) -> tensor<2xi32> loc(#loc1)
    return %0 : tensor<2xi32> loc("y.py":3:4)
  } loc(#loc1)
} loc(#loc1)
)");
    QVERIFY(module);
    QString text = printed(*module);
    EXPECT_LINE(text, "HloModule types, entry_computation_layout={((f32[], s32[2]{0}), token[], "
                      "f32[?,3]{1,0}, f32[<=5]{0})->s32[2]{0}}, replica_count=4, num_partitions=2");
    EXPECT_LINE(text, "ROOT %get-tuple-element.6 = s32[2]{0} get-tuple-element(%Arg_0.2), index=1");
}

void TestStableHlo::dataMovement() {
    auto module = import(R"(
func.func @main(%x: tensor<1x3xf32>, %i: tensor<i32>, %cst: tensor<f32>) -> (tensor<5x3x3xf32>, tensor<2x3xi32>, tensor<1x2xf32>, tensor<1x3xf32>, tensor<3xf32>, tensor<1x3xf32>) {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 2] : (tensor<1x3xf32>) -> tensor<4x2x3xf32>
  %1 = stablehlo.transpose %0, dims = [2, 1, 0] : (tensor<4x2x3xf32>) -> tensor<3x2x4xf32>
  %2 = stablehlo.slice %1 [0:2, 0:2:1, 1:4:2] : (tensor<3x2x4xf32>) -> tensor<2x2x2xf32>
  %3 = stablehlo.concatenate %2, %2, dim = 0 : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<4x2x2xf32>
  %4 = stablehlo.pad %3, %cst, low = [0, 1, 0], high = [1, 0, 0], interior = [0, 0, 1] : (tensor<4x2x2xf32>, tensor<f32>) -> tensor<5x3x3xf32>
  %5 = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %6 = stablehlo.dynamic_slice %x, %i, %i, sizes = [1, 2] : (tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
  %7 = stablehlo.reverse %x, dims = [1] : tensor<1x3xf32>
  %8 = stablehlo.reshape %x : (tensor<1x3xf32>) -> tensor<3xf32>
  %9 = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 3>, strides = array<i64: 1, 1>} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  return %4, %5, %6, %7, %8, %9 : tensor<5x3x3xf32>, tensor<2x3xi32>, tensor<1x2xf32>, tensor<1x3xf32>, tensor<3xf32>, tensor<1x3xf32>
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    // Degenerate broadcast dimensions are reshaped away first, as XLA does.
    EXPECT_LINE(text, "%reshape.5 = f32[3]{0} reshape(%Arg_0.2)");
    EXPECT_LINE(text, "%broadcast.6 = f32[4,2,3]{2,1,0} broadcast(%reshape.5), dimensions={2}");
    EXPECT_LINE(text, "transpose(%broadcast.6), dimensions={2,1,0}");
    EXPECT_LINE(text, "slice(%transpose.7), slice={[0:2], [0:2], [1:4:2]}");
    EXPECT_LINE(text, "concatenate(%slice.8, %slice.8), dimensions={0}");
    EXPECT_LINE(text, "pad(%concatenate.9, %Arg_2.4), padding=0_1_0x1_0_0x0_0_1");
    EXPECT_LINE(text, "s32[2,3]{1,0} iota(), iota_dimension=1");
    EXPECT_LINE(text, "dynamic-slice(%Arg_0.2, %Arg_1.3, %Arg_1.3), dynamic_slice_sizes={1,2}");
    EXPECT_LINE(text, "reverse(%Arg_0.2), dimensions={1}");
    EXPECT_LINE(text, "slice(%Arg_0.2), slice={[0:1], [0:3]}");
}

void TestStableHlo::dotAndConvolution() {
    auto module = import(R"(
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x16xf32>, %v: tensor<4xf32>, %m: tensor<3x4xf32>, %idx: tensor<2x1xi32>, %upd: tensor<2xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<3xf32>, tensor<2x4xf32>, tensor<4xf32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGH, DEFAULT] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %2 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x4x4x16xf32>
  %3 = "stablehlo.convolution"(%x, %w) {dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, window_strides = array<i64: 2, 1>, padding = dense<[[1, 1], [0, 0]]> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x4x4x16xf32>
  %4 = stablehlo.dot %m, %v : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  %5 = "stablehlo.gather"(%m, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  %6 = "stablehlo.scatter"(%v, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = true}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<3xf32>, tensor<2x4xf32>, tensor<4xf32>
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    EXPECT_LINE(text, "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                      "rhs_contracting_dims={1}, operand_precision={high,default}");
    EXPECT_LINE(text, "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                      "rhs_contracting_dims={1}\n");
    EXPECT_LINE(text, "convolution(%Arg_2.4, %Arg_3.5), window={size=3x3 stride=2x1 pad=1_1x0_0 "
                      "rhs_dilate=1x2}, dim_labels=b01f_01io->b01f");
    QCOMPARE(text.count(QStringLiteral("dim_labels=b01f_01io->b01f")), 2);
    EXPECT_LINE(text, "dot(%Arg_5.7, %Arg_4.6), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
    EXPECT_LINE(text, "gather(%Arg_5.7, %Arg_6.8), offset_dims={1}, collapsed_slice_dims={0}, "
                      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true");
    EXPECT_LINE(text, "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                      "index_vector_dim=1, unique_indices=true, to_apply=%region_0.");
}

void TestStableHlo::reduceSortWhileIf() {
    auto module = import(R"(
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xi32>, %z: tensor<f32>, %zi: tensor<i32>, %p: tensor<i1>) -> (tensor<2xf32>, tensor<3xf32>, tensor<3xi32>, tensor<2x3xf32>, tensor<i32>, tensor<2x3xf32>, tensor<f32>, tensor<i32>) {
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %1:2 = stablehlo.reduce(%x init: %z), (%y init: %zi) across dimensions = [0] : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
      %m = stablehlo.maximum %a, %b : tensor<f32>
      %n = stablehlo.add %c, %d : tensor<i32>
      stablehlo.return %m, %n : tensor<f32>, tensor<i32>
    }
  %2 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %limit = stablehlo.constant dense<10> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %3:2 = stablehlo.while(%i = %zi, %acc = %x) : tensor<i32>, tensor<2x3xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %next = stablehlo.add %i, %one : tensor<i32>
      %acc2 = stablehlo.add %acc, %acc : tensor<2x3xf32>
      stablehlo.return %next, %acc2 : tensor<i32>, tensor<2x3xf32>
    }
  %4 = "stablehlo.if"(%p) ({
    stablehlo.return %z : tensor<f32>
  }, {
    %neg = stablehlo.negate %z : tensor<f32>
    stablehlo.return %neg : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  %5 = "stablehlo.case"(%zi) ({
    stablehlo.return %one : tensor<i32>
  }, {
    stablehlo.return %limit : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  return %0, %1#0, %1#1, %2, %3#0, %3#1, %4, %5 : tensor<2xf32>, tensor<3xf32>, tensor<3xi32>, tensor<2x3xf32>, tensor<i32>, tensor<2x3xf32>, tensor<f32>, tensor<i32>
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    // `applies` form: a two-parameter region with the op.
    EXPECT_LINE(text, "%region_0.7 (Arg_0.8: f32[], Arg_1.9: f32[]) -> f32[] {");
    EXPECT_LINE(text, "ROOT %add.10 = f32[] add(%Arg_0.8, %Arg_1.9)");
    EXPECT_LINE(text, "%reduce.11 = f32[2]{0} reduce(%Arg_0.2, %Arg_2.4), dimensions={1}, to_apply=%region_0.7");
    // Multi-input reduce: block arguments (acc0, acc1, x0, x1), tuple result.
    EXPECT_LINE(text, "%region_1.12 (Arg_0.13: f32[], Arg_1.14: s32[], Arg_2.15: f32[], Arg_3.16: s32[]) -> (f32[], s32[])");
    EXPECT_LINE(text, "%maximum.17 = f32[] maximum(%Arg_0.13, %Arg_2.15)");
    EXPECT_LINE(text, "%reduce.20 = (f32[3]{0}, s32[3]{0}) reduce(%Arg_0.2, %Arg_1.3, %Arg_2.4, %Arg_3.5), dimensions={0}, to_apply=%region_1.12");
    EXPECT_LINE(text, "get-tuple-element(%reduce.20), index=1");
    EXPECT_LINE(text, "sort(%Arg_0.2), dimensions={1}, is_stable=true, to_apply=%region_2.23");
    // While: values used from outside become extra loop-carried values.
    EXPECT_LINE(text, "%tuple.30 = (s32[], f32[2,3]{1,0}, s32[], s32[]) tuple(%Arg_3.5, %Arg_0.2, %constant.28, %constant.29)");
    EXPECT_LINE(text, "while(%tuple.30), condition=%region_3.31, body=%region_4.38");
    EXPECT_LINE(text, "ROOT %compare.37 = pred[] compare(%get-tuple-element.33, %get-tuple-element.35), direction=LT");
    EXPECT_LINE(text, "tuple(%add.44, %add.45, %get-tuple-element.42, %get-tuple-element.43)");
    // If / case: each branch takes the value it uses from outside (a tuple
    // when it uses several).
    EXPECT_LINE(text, "%region_5.50 (Arg_0.51: f32[]) -> f32[] {");
    EXPECT_LINE(text, "conditional(%Arg_4.6, %Arg_2.4, %Arg_2.4), true_computation=%region_5.50, "
                      "false_computation=%region_6.52");
    EXPECT_LINE(text, "conditional(%Arg_3.5, %constant.29, %constant.28), "
                      "branch_computations={%region_7.56, %region_8.58}");
}

void TestStableHlo::functionsAndCalls() {
    auto module = import(R"(
module @calls {
  func.func public @main(%x: tensor<f32>) -> tensor<f32> {
    %0:2 = call @helper(%x) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
    %1 = func.call @"<lambda>"(%0#1) : (tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
  func.func private @helper(%a: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
    %0 = stablehlo.negate %a : tensor<f32>
    return %a, %0 : tensor<f32>, tensor<f32>
  }
  func.func private @"<lambda>"(%a: tensor<f32>) -> tensor<f32> {
    return %a : tensor<f32>
  }
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    EXPECT_LINE(text, "HloModule calls, entry_computation_layout={(f32[])->f32[]}");
    EXPECT_LINE(text, "%helper.1 (Arg_0.2: f32[]) -> (f32[], f32[]) {");
    EXPECT_LINE(text, "ROOT %tuple.4 = (f32[], f32[]) tuple(%Arg_0.2, %negate.3)");
    EXPECT_LINE(text, "%_lambda_.5 (Arg_0.6: f32[]) -> f32[] {");  // sanitised name
    EXPECT_LINE(text, "%call.9 = (f32[], f32[]) call(%Arg_0.8), to_apply=%helper.1");
    EXPECT_LINE(text, "ROOT %call.12 = f32[] call(%get-tuple-element.11), to_apply=%_lambda_.5");
    QCOMPARE(module->entryComputation()->name(), std::string("main.7"));
    QCOMPARE(module->computationCount(), int64_t{3});

    // Without @main the single public function is the entry.
    auto noMain = import(R"(
func.func private @twice(%a: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.add %a, %a : tensor<i32>
  func.return %0 : tensor<i32>
}
func.func @run() -> tensor<i32> {
  %c = stablehlo.constant dense<21> : tensor<i32>
  %0 = func.call @twice(%c) : (tensor<i32>) -> tensor<i32>
  func.return %0 : tensor<i32>
}
)");
    QVERIFY(noMain);
    QCOMPARE(noMain->name(), std::string("run"));
    QVERIFY(noMain->entryComputation()->name().starts_with("run."));
    Literal result = evaluate(*noMain);
    QCOMPARE(result.getAsInt64(0), int64_t{42});
}

void TestStableHlo::customCallsAndChecks() {
    auto module = import(R"(
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<f32>) {
  stablehlo.custom_call @check.expect_close(%x, %x) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  check.expect_eq_const %x, dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_close %x, %x, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>
  "check.expect_almost_eq_const"(%x) <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : (tensor<2xf32>) -> ()
  %0:2 = stablehlo.custom_call @foo(%x) {backend_config = "cfg", api_version = 2 : i32} : (tensor<2xf32>) -> (tensor<2xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<f32>
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    EXPECT_LINE(text, "%custom-call.3 = () custom-call(%Arg_0.2, %Arg_0.2), custom_call_target=\"check.expect_close\", custom_call_has_side_effect=true");
    EXPECT_LINE(text, "%constant.4 = f32[2]{0} constant({1, 2})");
    EXPECT_LINE(text, "custom-call(%Arg_0.2, %constant.4), custom_call_target=\"check.expect_eq_const\", custom_call_has_side_effect=true");
    EXPECT_LINE(text, "custom_call_target=\"check.expect_close\", custom_call_has_side_effect=true, max_ulp_difference=3");
    EXPECT_LINE(text, "custom-call(%Arg_0.2, %constant.7), custom_call_target=\"check.expect_almost_eq_const\"");
    EXPECT_LINE(text, "%custom-call.9 = (f32[2]{0}, f32[]) custom-call(%Arg_0.2), custom_call_target=\"foo\", backend_config=\"cfg\", api_version=API_VERSION_STATUS_RETURNING");
}

void TestStableHlo::chloStructure() {
    auto module = import(R"(
func.func @main(%b: tensor<2xbf16>, %v: tensor<5xf32>, %s: tensor<3xf32>, %m: tensor<2x3xf32>, %c: tensor<complex<f32>>) -> (tensor<2xbf16>, tensor<2xf32>, tensor<2xi32>, tensor<2x3xf32>, tensor<5xf32>, tensor<5xi1>, tensor<complex<f32>>, tensor<5xf32>) {
  %0 = chlo.lgamma %b : tensor<2xbf16> -> tensor<2xbf16>
  %1:2 = chlo.top_k(%v, k = 2) : tensor<5xf32> -> (tensor<2xf32>, tensor<2xi32>)
  %2 = chlo.broadcast_add %s, %m : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = chlo.tan %v : tensor<5xf32> -> tensor<5xf32>
  %4 = chlo.is_inf %v : tensor<5xf32> -> tensor<5xi1>
  %5 = "chlo.square"(%c) : (tensor<complex<f32>>) -> tensor<complex<f32>>
  %6 = "chlo.sinh"(%v) : (tensor<5xf32>) -> tensor<5xf32>
  return %0, %1#0, %1#1, %2, %3, %4, %5, %6 : tensor<2xbf16>, tensor<2xf32>, tensor<2xi32>, tensor<2x3xf32>, tensor<5xf32>, tensor<5xi1>, tensor<complex<f32>>, tensor<5xf32>
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    // bf16 lgamma is computed in f32.
    EXPECT_LINE(text, "%convert.7 = f32[2]{0} convert(%Arg_0.2)");
    EXPECT_LINE(text, "bf16[2]{0} convert(%select.");
    EXPECT_LINE(text, "(f32[2]{0}, s32[2]{0}) topk(%Arg_1.3), k=2, largest=true");
    EXPECT_LINE(text, "f32[2,3]{1,0} broadcast(%Arg_2.4), dimensions={1}");
    EXPECT_LINE(text, "f32[5]{0} tan(%Arg_1.3)");
    EXPECT_LINE(text, "f32[5]{0} sinh(%Arg_1.3)");
    EXPECT_LINE(text, "c64[] complex(");
    const HloComputation* entry = module->entryComputation();
    QVERIFY(findByOpcode(*entry, HloOpcode::kLog1p) != nullptr);
    QVERIFY(findByOpcode(*entry, HloOpcode::kIsFinite) != nullptr);
}

void TestStableHlo::chloNumerics() {
    auto module = import(R"(
func.func @main() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f64>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i64>, tensor<complex<f32>>, tensor<f16>, tensor<f64>) {
  %five = stablehlo.constant dense<5.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %halfd = stablehlo.constant dense<0.5> : tensor<f64>
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %0 = chlo.lgamma %five : tensor<f32> -> tensor<f32>
  %1 = chlo.digamma %one : tensor<f32> -> tensor<f32>
  %2 = chlo.erf_inv %half : tensor<f32> -> tensor<f32>
  %3 = chlo.erf_inv %halfd : tensor<f64> -> tensor<f64>
  %4 = chlo.erfc %half : tensor<f32> -> tensor<f32>
  %5 = chlo.next_after %one, %two : tensor<f32>, tensor<f32> -> tensor<f32>
  %6 = chlo.bessel_i1e %one : tensor<f32> -> tensor<f32>
  %7 = chlo.polygamma %one, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  %a = stablehlo.constant dense<240> : tensor<ui8>
  %b = stablehlo.constant dense<16> : tensor<ui8>
  %8 = "chlo.mulhi"(%a, %b) : (tensor<ui8>, tensor<ui8>) -> tensor<ui8>
  %c = stablehlo.constant dense<-3> : tensor<i64>
  %d = stablehlo.constant dense<9223372036854775807> : tensor<i64>
  %9 = "chlo.mulhi"(%c, %d) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %z = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
  %10 = "chlo.square"(%z) : (tensor<complex<f32>>) -> tensor<complex<f32>>
  %h = stablehlo.constant dense<2.0> : tensor<f16>
  %11 = chlo.lgamma %h : tensor<f16> -> tensor<f16>
  %q = stablehlo.constant dense<2.0> : tensor<f64>
  %onep = stablehlo.constant dense<1.0> : tensor<f64>
  %12 = chlo.zeta %q, %onep : tensor<f64>, tensor<f64> -> tensor<f64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f64>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i64>, tensor<complex<f32>>, tensor<f16>, tensor<f64>
}
)");
    QVERIFY(module);
    Literal r = evaluate(*module);
    QVERIFY(r.isTuple());
    auto value = [&](int i) { return r.tupleElement(i).getAsDouble(0); };
    QVERIFY2(near(value(0), std::log(24.0), 1e-5), qPrintable(QString::number(value(0))));
    QVERIFY2(near(value(1), -0.5772156649, 1e-5), qPrintable(QString::number(value(1))));
    QVERIFY2(near(value(2), 0.4769362762, 1e-5), qPrintable(QString::number(value(2))));
    QVERIFY2(near(value(3), 0.4769362762044699, 1e-12), qPrintable(QString::number(value(3), 'g', 17)));
    QVERIFY2(near(value(4), std::erfc(0.5), 1e-5), qPrintable(QString::number(value(4))));
    QCOMPARE(value(5), static_cast<double>(std::nextafter(1.0f, 2.0f)));
    QVERIFY2(near(value(6), 0.2079104154, 1e-5), qPrintable(QString::number(value(6))));
    QVERIFY2(near(value(7), M_PI * M_PI / 6, 1e-4), qPrintable(QString::number(value(7))));
    QCOMPARE(r.tupleElement(8).getAsInt64(0), int64_t{15});
    // High 64 bits of -3 * (2^63 - 1) = -2 (two's complement).
    QCOMPARE(r.tupleElement(9).getAsInt64(0), int64_t{-2});
    QCOMPARE(r.tupleElement(10).getAsComplex(0), std::complex<double>(-3, 4));
    QVERIFY2(near(value(11), 0.0, 1e-2), qPrintable(QString::number(value(11))));
    QVERIFY2(near(value(12), M_PI * M_PI / 6, 1e-12), qPrintable(QString::number(value(12), 'g', 17)));
}

void TestStableHlo::dynamicOpsWithConstantShapes() {
    auto module = import(R"(
func.func @main(%x: tensor<2x3xf32>, %u: tensor<?x3xf32>) -> (tensor<4x2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<?x3xf32>) {
  %shape = stablehlo.constant dense<[4, 2, 3]> : tensor<3xi64>
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [1, 2] : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<4x2x3xf32>
  %s2 = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %1 = stablehlo.dynamic_reshape %x, %s2 : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  %start = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %limit = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %stride = stablehlo.constant dense<1> : tensor<2xi64>
  %2 = stablehlo.real_dynamic_slice %x, %start, %limit, %stride : (tensor<2x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xf32>
  %3 = stablehlo.get_dimension_size %u, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %4 = stablehlo.add %u, %u : tensor<?x3xf32>
  return %0, %1, %2, %3, %4 : tensor<4x2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<?x3xf32>
}
)");
    QVERIFY(module);
    QString text = printed(*module);
    EXPECT_LINE(text, "f32[4,2,3]{2,1,0} broadcast(%Arg_0.2), dimensions={1,2}");
    EXPECT_LINE(text, "f32[3,2]{1,0} reshape(%Arg_0.2)");
    EXPECT_LINE(text, "f32[2,2]{1,0} slice(%Arg_0.2), slice={[0:2], [1:3]}");
    EXPECT_LINE(text, "s32[] get-dimension-size(%Arg_1.3), dimensions={0}");
    EXPECT_LINE(text, "f32[?,3]{1,0} add(%Arg_1.3, %Arg_1.3)");
}

void TestStableHlo::chunksAndFormatDetection() {
    const char* text = R"(// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @first() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<1> : tensor<i32>
  func.return
}

// -----

// Only a comment here.

// -----

#loc = loc(unknown)
module {
  func.func @second() -> tensor<i32> {
    %0 = stablehlo.constant dense<2> : tensor<i32>
    func.return %0 : tensor<i32>
  }
}
)";
    QCOMPARE(detectModuleFormat(text), ModuleFormat::kStableHlo);
    QCOMPARE(detectModuleFormat("#loc1 = loc(\"a\")\nmodule @m {\n}"), ModuleFormat::kStableHlo);
    QCOMPARE(detectModuleFormat("// c\nfunc.func @f() {\n}"), ModuleFormat::kStableHlo);
    auto modules = loadModules(text, "split.mlir");
    QVERIFY2(modules.isOk(), modules.status().toString().c_str());
    QCOMPARE(modules->size(), size_t{2});
    QCOMPARE((*modules)[0]->name(), std::string("first"));
    QCOMPARE((*modules)[1]->name(), std::string("second"));
    // An empty function returns an empty tuple.
    QCOMPARE((*modules)[0]->entryComputation()->root()->shape().toString(), std::string("()"));
    auto chunks = parseStableHloChunks(text, "split.mlir");
    QCOMPARE(chunks.size(), size_t{2});
    QCOMPARE(chunks[0].firstLine, 1);
    QCOMPARE(chunks[1].firstLine, 14);
}

void TestStableHlo::genericModuleForm() {
    const char* text = R"("builtin.module"() <{sym_name = "generic"}> ({
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2xf32>):
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_replicas = 2 : i32} : () -> ()
)";
    QCOMPARE(detectModuleFormat(text), ModuleFormat::kStableHlo);
    auto module = import(text);
    QVERIFY(module);
    QString hlo = printed(*module);
    EXPECT_LINE(hlo, "HloModule generic, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, replica_count=2");
    EXPECT_LINE(hlo, "ROOT %add.3 = f32[2]{0} add(%Arg_0.2, %Arg_0.2)");
}

void TestStableHlo::errorSyntax() {
    Status status = importStatus("func.func @main(%a: tensor<2xf32) -> tensor<2xf32> {\n}\n");
    QCOMPARE(status.code(), StatusCode::kInvalidArgument);
    QVERIFY(status.location().has_value());
    QCOMPARE(status.location()->line, 1);
    QCOMPARE(status.location()->column, 33);
    QVERIFY2(QString::fromStdString(status.message()).contains(QStringLiteral("expected '>'")),
             status.toString().c_str());
    QVERIFY(status.toString().starts_with("bad.mlir:1:33: error:"));
    // A bound past int64's range is an error at the type, not an exception.
    status = importStatus(
        "func.func @main(%a: tensor<?xf32, #stablehlo.bounds<99999999999999999999>>) -> "
        "tensor<?xf32, #stablehlo.bounds<99999999999999999999>> {\n"
        "  return %a : tensor<?xf32, #stablehlo.bounds<99999999999999999999>>\n}\n");
    QCOMPARE(status.code(), StatusCode::kInvalidArgument);
    QVERIFY2(QString::fromStdString(status.message()).contains(QStringLiteral("not a 64-bit integer")),
             status.toString().c_str());
    QCOMPARE(status.location()->line, 1);
}

void TestStableHlo::errorUndefinedValue() {
    Status status = importStatus(
        "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
        "  %0 = stablehlo.add %a, %nope : tensor<f32>\n"
        "  return %0 : tensor<f32>\n}\n");
    QCOMPARE(status.code(), StatusCode::kInvalidArgument);
    QCOMPARE(status.location()->line, 2);
    QCOMPARE(status.location()->column, 26);
    QVERIFY(QString::fromStdString(status.message()).contains(QStringLiteral("%nope")));
}

void TestStableHlo::errorUnknownOperation() {
    Status status = importStatus(
        "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
        "  %0 = stablehlo.frobnicate %a : tensor<f32>\n"
        "  return %0 : tensor<f32>\n}\n");
    QCOMPARE(status.code(), StatusCode::kUnimplemented);
    QCOMPARE(status.location()->line, 2);
    QCOMPARE(status.location()->column, 3);
    QVERIFY(QString::fromStdString(status.message()).contains(QStringLiteral("stablehlo.frobnicate")));
}

void TestStableHlo::errorQuantizedType() {
    Status status = importStatus(
        "func.func @main(%a: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-1>> {\n"
        "  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-1>>\n"
        "  return %0 : tensor<2x!quant.uniform<i8:f32, 0.5:-1>>\n}\n");
    QCOMPARE(status.code(), StatusCode::kUnimplemented);
    QCOMPARE(status.location()->line, 2);
    QVERIFY(QString::fromStdString(status.message()).contains(QStringLiteral("quantized")));
}

void TestStableHlo::errorDenseLiteral() {
    Status status = importStatus(
        "func.func @main() -> tensor<2xf32> {\n"
        "  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n");
    QCOMPARE(status.code(), StatusCode::kInvalidArgument);
    QCOMPARE(status.location()->line, 2);
    QCOMPARE(status.location()->column, 27);
    QVERIFY(QString::fromStdString(status.message()).contains(QStringLiteral("3 elements")));
    // The same in an attribute: rows that do not fill the type's matrix.
    Status pairs = importStatus(
        "func.func @main(%x : tensor<2xi64>) -> tensor<2xi64> {\n"
        "  %0 = \"stablehlo.collective_permute\"(%x) {\n"
        "    source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x3xi64>\n"
        "  } : (tensor<2xi64>) -> tensor<2xi64>\n"
        "  return %0 : tensor<2xi64>\n}\n");
    QCOMPARE(pairs.code(), StatusCode::kInvalidArgument);
    QCOMPARE(pairs.location()->line, 3);
    QCOMPARE(pairs.location()->column, 27);
    QVERIFY2(QString::fromStdString(pairs.message()).contains(QStringLiteral("4 elements but its type tensor<2x3xi64> holds 6")),
             pairs.message().c_str());
    Status hex = importStatus(
        "func.func @main() -> tensor<2xf32> {\n"
        "  %0 = stablehlo.constant dense<\"0x0000\"> : tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n");
    QCOMPARE(hex.code(), StatusCode::kInvalidArgument);
    QCOMPARE(hex.location()->line, 2);
}

void TestStableHlo::errorChloWithoutDecomposition() {
    Status status = importStatus(
        "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %g: tensor<1xi64>) -> tensor<2x4xf32> {\n"
        "  %0 = \"chlo.ragged_dot\"(%a, %b, %g) : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>\n"
        "  return %0 : tensor<2x4xf32>\n}\n");
    QCOMPARE(status.code(), StatusCode::kUnimplemented);
    QCOMPARE(status.location()->line, 2);
    QVERIFY(QString::fromStdString(status.message()).contains(QStringLiteral("chlo.ragged_dot")));
}

void TestStableHlo::errorUndefinedFunction() {
    Status status = importStatus(
        "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
        "  %0 = func.call @missing(%a) : (tensor<f32>) -> tensor<f32>\n"
        "  return %0 : tensor<f32>\n}\n");
    QCOMPARE(status.code(), StatusCode::kInvalidArgument);
    QCOMPARE(status.location()->line, 2);
    QVERIFY(QString::fromStdString(status.message()).contains(QStringLiteral("@missing")));
}

void TestStableHlo::errorDeepNesting() {
    std::string deepDense = "func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<" +
                            std::string(20000, '[') + "1" + std::string(20000, ']') +
                            "> : tensor<f32>\n  return %0 : tensor<f32>\n}\n";
    Status a = importStatus(deepDense.c_str());
    QCOMPARE(a.code(), StatusCode::kInvalidArgument);
    std::string deepRegions = "func.func @main() {\n";
    for (int i = 0; i < 2000; ++i) deepRegions += "  \"stablehlo.while\"() ({\n";
    Status b = importStatus(deepRegions.c_str());
    QCOMPARE(b.code(), StatusCode::kInvalidArgument);
    QVERIFY(QString::fromStdString(b.message()).contains(QStringLiteral("nesting")));
    std::string deepTypes = "func.func @main(%a: ";
    for (int i = 0; i < 20000; ++i) deepTypes += "tuple<";
    Status c = importStatus(deepTypes.c_str());
    QCOMPARE(c.code(), StatusCode::kInvalidArgument);
}

void TestStableHlo::errorEmptyInput() {
    Status status = importStatus("// nothing but a comment\n");
    QCOMPARE(status.code(), StatusCode::kInvalidArgument);
    QCOMPARE(status.location()->line, 1);
}

void TestStableHlo::robustAgainstTruncationAndMutation() {
    const std::string text = R"(#loc = loc("f.py":1:1)
module @m attributes {mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<2x3xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<3xf32>) {
    %c = stablehlo.constant dense<"0x0000803F0000004000004040"> : tensor<3xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
    %1 = "stablehlo.sort"(%0) <{dimension = 0 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %p = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) : (tensor<3xf32>) -> tensor<3xf32>
    %2 = chlo.erf_inv %1 : tensor<3xf32> -> tensor<3xf32>
    stablehlo.custom_call @check.expect_close(%2, %c) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
    return %2 : tensor<3xf32> loc(#loc)
  }
}
)";
    QVERIFY(parseStableHlo(text, "robust.mlir").isOk());
    int failures = 0;
    for (size_t n = 0; n <= text.size(); ++n)
        if (!parseStableHlo(text.substr(0, n), "robust.mlir").isOk()) ++failures;
    QVERIFY(failures > 0);
    std::mt19937 rng(7);
    const std::string alphabet = "{}()<>[]%@#:,=\"x?-0a\n^";
    for (int k = 0; k < 2000; ++k) {
        std::string mutated = text;
        for (int j = 0; j < 3; ++j)
            mutated[rng() % mutated.size()] = alphabet[rng() % alphabet.size()];
        auto result = parseStableHlo(mutated, "robust.mlir");
        if (!result.isOk()) QVERIFY(result.status().code() != StatusCode::kOk);
    }
}

void TestStableHlo::corpusSweep() {
    if (!QDir(kCorpus).exists())
        QSKIP(qPrintable(QStringLiteral("StableHLO corpus not found at %1 (it lives in "
                                        "../shared/corpus beside a developer checkout); skipping")
                             .arg(kCorpus)));
    const auto exceptions = loadExceptions();
    auto listedIn = [&](const QString& stage) {
        auto it = exceptions.find(stage);
        return it == exceptions.end() ? std::map<QString, QString>() : it->second;
    };
    const std::map<QString, QString> listedImport = listedIn(QStringLiteral("import"));
    const std::map<QString, QString> listedVerify = listedIn(QStringLiteral("verify"));
    std::set<QString> seenImport, seenVerify;
    QStringList unexpected, stale;
    struct Folder {
        QString path;
        bool recursive;
        bool counted;  // part of the interpret+testdata import-rate goal
    };
    const std::vector<Folder> folders = {
        {QStringLiteral("interpret"), true, true},
        {QStringLiteral("testdata"), false, true},
        {QStringLiteral("math"), false, false},
        {QStringLiteral("testdata/dynamic"), false, false},
        {QStringLiteral("testdata/quantized"), false, false},
    };
    int goalChunks = 0, goalImported = 0;
    for (const Folder& folder : folders) {
        FolderResult result;
        int verified = 0;
        for (const QString& path : mlirFilesUnder(folder.path, folder.recursive)) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            QByteArray bytes = file.readAll();
            std::string text(bytes.constData(), static_cast<size_t>(bytes.size()));
            QString name = QDir(kCorpus).relativeFilePath(path);
            if (detectModuleFormat(text) != ModuleFormat::kStableHlo)
                unexpected << name + QStringLiteral(": not detected as StableHLO");
            for (StableHloChunk& chunk : parseStableHloChunks(text, name.toStdString())) {
                ++result.chunks;
                QString id = name + QLatin1Char(':') + QString::number(chunk.firstLine);
                bool importListed = listedImport.count(id) != 0;
                if (importListed) seenImport.insert(id);
                if (!chunk.module.isOk()) {
                    if (!importListed)
                        unexpected << id + QStringLiteral(" (import): ") +
                                          QString::fromStdString(chunk.module.status().toString());
                    continue;
                }
                ++result.imported;
                if (importListed) stale << QStringLiteral("import\t") + id;
                Status status = verifyModule(**chunk.module, verifierOptions());
                bool verifyListed = listedVerify.count(id) != 0;
                if (verifyListed) seenVerify.insert(id);
                if (status.isOk()) {
                    ++verified;
                    if (verifyListed) stale << QStringLiteral("verify\t") + id;
                } else if (!verifyListed) {
                    unexpected << id + QStringLiteral(" (verify): ") +
                                      QString::fromStdString(status.toString());
                }
            }
        }
        qInfo("%s: %d chunks, %d imported (%.2f%%), %d verified", qPrintable(folder.path),
              result.chunks, result.imported,
              result.chunks ? 100.0 * result.imported / result.chunks : 0.0, verified);
        if (folder.counted) {
            goalChunks += result.chunks;
            goalImported += result.imported;
        }
        QVERIFY2(result.chunks > 0, qPrintable(folder.path));
    }
    for (const auto& [id, reason] : listedImport)
        if (seenImport.count(id) == 0) stale << QStringLiteral("import\t") + id + QStringLiteral(" (no such chunk)");
    for (const auto& [id, reason] : listedVerify)
        if (seenVerify.count(id) == 0) stale << QStringLiteral("verify\t") + id + QStringLiteral(" (no such chunk)");
    for (int i = 0; i < unexpected.size() && i < 40; ++i)
        qWarning("unexpected: %s", qPrintable(unexpected[i]));
    for (const QString& s : stale)
        qWarning("stale exception (remove it from stablehlo_exceptions.tsv): %s", qPrintable(s));
    double rate = goalChunks ? static_cast<double>(goalImported) / goalChunks : 0;
    qInfo("interpret + testdata: %d of %d chunks imported (%.2f%%)", goalImported, goalChunks,
          100 * rate);
    QVERIFY(rate >= 0.999);
    QVERIFY(unexpected.isEmpty());
    QVERIFY(stale.isEmpty());
}

QTEST_APPLESS_MAIN(TestStableHlo)
#include "tst_stablehlo.moc"
