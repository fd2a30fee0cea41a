// Shape inference and the HLO verifier: hand-written HLO snippets.
//  * inference: per opcode family, the shape inferShape() gives an
//    instruction (and the module verifies);
//  * rejection: at least one module per error class, checking that the
//    message names the offending instruction and the rule;
//  * programmatic modules for what text cannot express (missing entry,
//    duplicate computation names, cycles).
#include <QTest>

#include "core/text/hlo_parser.h"
#include "core/verifier/hlo_verifier.h"
#include "core/shape_inference/shape_inference.h"

using namespace hloscope;

namespace {

std::unique_ptr<HloModule> parseOrNull(const QString& text, QString* error) {
    const QByteArray utf8 = text.toUtf8();
    auto module = parseHloModule(std::string_view(utf8.constData(), static_cast<size_t>(utf8.size())));
    if (!module.isOk()) {
        *error = QString::fromStdString(module.status().toString());
        return nullptr;
    }
    return std::move(module).value();
}

const HloInstruction* findInstruction(const HloModule& module, const std::string& name) {
    for (const auto& computation : module.computations())
        if (const HloInstruction* instruction = computation->findInstruction(name)) return instruction;
    return nullptr;
}

QString text(const Status& status) { return QString::fromStdString(status.message()); }

// The reducer every reduce-like snippet uses.
const char* const kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

QString withAdd(const char* body) { return QString::fromLatin1(kAdd) + QString::fromLatin1(body); }

HloInstruction* addInstruction(HloComputation& computation, HloOpcode opcode, std::string name,
                               Shape shape, std::vector<HloInstruction*> operands = {}) {
    auto instruction = std::make_unique<HloInstruction>(opcode, std::move(name), std::move(shape));
    for (HloInstruction* operand : operands) instruction->appendOperand(operand);
    return computation.addInstruction(std::move(instruction));
}

HloInstruction* addParameter(HloComputation& computation, int64_t number, std::string name,
                             Shape shape) {
    HloInstruction* parameter =
        addInstruction(computation, HloOpcode::kParameter, std::move(name), std::move(shape));
    parameter->setParameterNumber(number);
    return parameter;
}

}  // namespace

class TestVerifier : public QObject {
    Q_OBJECT
private slots:
    void inferredShapes_data();
    void inferredShapes();
    void rejected_data();
    void rejected();
    void unimplementedOpcodesTrustDeclaredShape();
    void dynamicDimensionsPropagate();
    void layoutSensitiveChecks();
    void optionsEnableChecks();
    void missingEntryIsRejected();
    void duplicateComputationNamesAreRejected();
    void recursiveCallsAreRejected();
    void cyclesAreRejected();
    void parameterGapsAreRejected();
    void operandCountIsChecked();
    void constantLiteralMustMatchShape();
};

void TestVerifier::inferredShapes_data() {
    QTest::addColumn<QString>("hlo");
    QTest::addColumn<QString>("instruction");
    QTest::addColumn<QString>("expected");

    // Elementwise.
    QTest::newRow("add") << QStringLiteral(R"(ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ROOT r = f32[2,3] add(a, b)
})") << "r" << "f32[2,3]";
    QTest::newRow("compare-pred") << QStringLiteral(R"(ENTRY e {
  a = s32[4] parameter(0)
  ROOT r = pred[4] compare(a, a), direction=LT
})") << "r" << "pred[4]";
    QTest::newRow("convert") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = bf16[4] convert(a)
})") << "r" << "bf16[4]";
    QTest::newRow("is-finite") << QStringLiteral(R"(ENTRY e {
  a = f16[3] parameter(0)
  ROOT r = pred[3] is-finite(a)
})") << "r" << "pred[3]";
    QTest::newRow("abs-complex") << QStringLiteral(R"(ENTRY e {
  a = c64[3] parameter(0)
  ROOT r = f32[3] abs(a)
})") << "r" << "f32[3]";
    QTest::newRow("imag") << QStringLiteral(R"(ENTRY e {
  a = c128[3] parameter(0)
  ROOT r = f64[3] imag(a)
})") << "r" << "f64[3]";
    QTest::newRow("complex") << QStringLiteral(R"(ENTRY e {
  a = f32[3] parameter(0)
  ROOT r = c64[3] complex(a, a)
})") << "r" << "c64[3]";
    QTest::newRow("bitcast-convert-narrow") << QStringLiteral(R"(ENTRY e {
  a = f32[2] parameter(0)
  ROOT r = u8[2,4] bitcast-convert(a)
})") << "r" << "u8[2,4]";
    QTest::newRow("bitcast-convert-widen") << QStringLiteral(R"(ENTRY e {
  a = u16[5,2] parameter(0)
  ROOT r = s32[5] bitcast-convert(a)
})") << "r" << "s32[5]";
    QTest::newRow("stochastic-convert") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  r = u32[4] parameter(1)
  ROOT c = bf16[4] stochastic-convert(a, r)
})") << "c" << "bf16[4]";
    QTest::newRow("reduce-precision") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(a), exponent_bits=5, mantissa_bits=10
})") << "r" << "f32[4]";
    QTest::newRow("select-scalar-pred") << QStringLiteral(R"(ENTRY e {
  p = pred[] parameter(0)
  a = f32[2,2] parameter(1)
  ROOT r = f32[2,2] select(p, a, a)
})") << "r" << "f32[2,2]";
    QTest::newRow("clamp-scalar-bounds") << QStringLiteral(R"(ENTRY e {
  lo = f32[] parameter(0)
  a = f32[5] parameter(1)
  ROOT r = f32[5] clamp(lo, a, lo)
})") << "r" << "f32[5]";

    // Data movement.
    QTest::newRow("broadcast") << QStringLiteral(R"(ENTRY e {
  a = f32[3] parameter(0)
  ROOT r = f32[2,3,4] broadcast(a), dimensions={1}
})") << "r" << "f32[2,3,4]";
    QTest::newRow("reshape") << QStringLiteral(R"(ENTRY e {
  a = f32[6,4] parameter(0)
  ROOT r = f32[2,3,4] reshape(a)
})") << "r" << "f32[2,3,4]";
    QTest::newRow("transpose") << QStringLiteral(R"(ENTRY e {
  a = f32[2,3,4] parameter(0)
  ROOT r = f32[4,2,3] transpose(a), dimensions={2,0,1}
})") << "r" << "f32[4,2,3]";
    QTest::newRow("slice-strided") << QStringLiteral(R"(ENTRY e {
  a = f32[10,8] parameter(0)
  ROOT r = f32[3,8] slice(a), slice={[1:8:3], [0:8]}
})") << "r" << "f32[3,8]";
    QTest::newRow("dynamic-slice") << QStringLiteral(R"(ENTRY e {
  a = f32[10,8] parameter(0)
  i = s32[] parameter(1)
  ROOT r = f32[2,8] dynamic-slice(a, i, i), dynamic_slice_sizes={2,8}
})") << "r" << "f32[2,8]";
    QTest::newRow("dynamic-update-slice") << QStringLiteral(R"(ENTRY e {
  a = f32[10,8] parameter(0)
  u = f32[2,8] parameter(1)
  i = s32[] parameter(2)
  ROOT r = f32[10,8] dynamic-update-slice(a, u, i, i)
})") << "r" << "f32[10,8]";
    QTest::newRow("concatenate") << QStringLiteral(R"(ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,5] parameter(1)
  ROOT r = f32[2,8] concatenate(a, b), dimensions={1}
})") << "r" << "f32[2,8]";
    QTest::newRow("pad-interior-negative") << QStringLiteral(R"(ENTRY e {
  a = f32[4,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[9,4] pad(a, z), padding=1_1_1x0_-1
})") << "r" << "f32[9,4]";
    QTest::newRow("reverse") << QStringLiteral(R"(ENTRY e {
  a = f32[4,5] parameter(0)
  ROOT r = f32[4,5] reverse(a), dimensions={0,1}
})") << "r" << "f32[4,5]";
    QTest::newRow("iota") << QStringLiteral(R"(ENTRY e {
  ROOT r = s32[4,5] iota(), iota_dimension=1
})") << "r" << "s32[4,5]";

    // Dot and convolution.
    QTest::newRow("dot-batch") << QStringLiteral(R"(ENTRY e {
  a = f32[8,2,3] parameter(0)
  b = f32[8,3,5] parameter(1)
  ROOT r = f32[8,2,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})") << "r" << "f32[8,2,5]";
    QTest::newRow("dot-preferred-type") << QStringLiteral(R"(ENTRY e {
  a = s8[2,3] parameter(0)
  b = s8[3,5] parameter(1)
  ROOT r = s32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})") << "r" << "s32[2,5]";
    QTest::newRow("ragged-dot") << QStringLiteral(R"(ENTRY e {
  a = f32[11,5] parameter(0)
  b = f32[3,5,7] parameter(1)
  g = s64[3] parameter(2)
  ROOT r = f32[11,7] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})") << "r" << "f32[11,7]";
    QTest::newRow("convolution") << QStringLiteral(R"(ENTRY e {
  x = f32[1,10,10,3] parameter(0)
  k = f32[3,3,3,8] parameter(1)
  ROOT r = f32[1,5,5,8] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})") << "r" << "f32[1,5,5,8]";
    QTest::newRow("convolution-grouped") << QStringLiteral(R"(ENTRY e {
  x = f32[2,8,7] parameter(0)
  k = f32[3,2,8] parameter(1)
  ROOT r = f32[2,8,5] convolution(x, k), window={size=3}, dim_labels=bf0_0io->bf0, feature_group_count=4
})") << "r" << "f32[2,8,5]";

    // Reductions, windows, sort.
    QTest::newRow("reduce") << withAdd(R"(ENTRY e {
  a = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,4] reduce(a, z), dimensions={1}, to_apply=add
})") << "r" << "f32[2,4]";
    QTest::newRow("reduce-variadic") << QStringLiteral(R"(
argmax {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  ROOT t = (f32[], s32[]) tuple(a, b)
}
ENTRY e {
  v = f32[5,7] parameter(0)
  i = s32[5,7] parameter(1)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[5], s32[5]) reduce(v, i, z, zi), dimensions={1}, to_apply=argmax
})") << "r" << "(f32[5], s32[5])";
    QTest::newRow("reduce-window") << withAdd(R"(ENTRY e {
  a = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] reduce-window(a, z), window={size=2x2 stride=2x2}, to_apply=add
})") << "r" << "f32[2,3]";
    QTest::newRow("select-and-scatter") << withAdd(R"(
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
ENTRY e {
  a = f32[4,6] parameter(0)
  s = f32[2,3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,6] select-and-scatter(a, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
})") << "r" << "f32[4,6]";
    QTest::newRow("sort-pair") << QStringLiteral(R"(
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT less = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  ROOT r = (f32[8], s32[8]) sort(k, v), dimensions={0}, to_apply=lt
})") << "r" << "(f32[8], s32[8])";
    QTest::newRow("map") << withAdd(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[4] map(a, a), dimensions={0}, to_apply=add
})") << "r" << "f32[4]";

    // Gather / scatter.
    QTest::newRow("gather") << QStringLiteral(R"(ENTRY e {
  a = f32[3,4] parameter(0)
  i = s32[5,1] parameter(1)
  ROOT r = f32[5,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})") << "r" << "f32[5,4]";
    QTest::newRow("gather-batching") << QStringLiteral(R"(ENTRY e {
  a = f32[2,3,4] parameter(0)
  i = s32[2,5,1] parameter(1)
  ROOT r = f32[2,5,4] gather(a, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
})") << "r" << "f32[2,5,4]";
    QTest::newRow("scatter") << withAdd(R"(ENTRY e {
  a = f32[3,4] parameter(0)
  i = s32[5] parameter(1)
  u = f32[5,4] parameter(2)
  ROOT r = f32[3,4] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})") << "r" << "f32[3,4]";

    // Linear algebra, fft, batch norm.
    QTest::newRow("fft-rfft") << QStringLiteral(R"(ENTRY e {
  a = f32[4,8] parameter(0)
  ROOT r = c64[4,5] fft(a), fft_type=RFFT, fft_length={8}
})") << "r" << "c64[4,5]";
    QTest::newRow("fft-irfft") << QStringLiteral(R"(ENTRY e {
  a = c64[4,5] parameter(0)
  ROOT r = f32[4,8] fft(a), fft_type=IRFFT, fft_length={8}
})") << "r" << "f32[4,8]";
    QTest::newRow("triangular-solve") << QStringLiteral(R"(ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[4,3] parameter(1)
  ROOT r = f32[4,3] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
})") << "r" << "f32[4,3]";
    QTest::newRow("cholesky") << QStringLiteral(R"(ENTRY e {
  a = f32[2,4,4] parameter(0)
  ROOT r = f32[2,4,4] cholesky(a), lower=true
})") << "r" << "f32[2,4,4]";
    QTest::newRow("batch-norm-training") << QStringLiteral(R"(ENTRY e {
  x = f32[2,3,4,5] parameter(0)
  s = f32[5] parameter(1)
  ROOT r = (f32[2,3,4,5], f32[5], f32[5]) batch-norm-training(x, s, s), epsilon=0.001, feature_index=3
})") << "r" << "(f32[2,3,4,5], f32[5], f32[5])";

    // Control flow and tuples.
    QTest::newRow("while") << QStringLiteral(R"(
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[4]) tuple(j, v)
}
ENTRY e {
  init = (s32[], f32[4]) parameter(0)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
})") << "w" << "(s32[], f32[4])";
    QTest::newRow("conditional-indexed") << QStringLiteral(R"(
b0 {
  p = f32[4] parameter(0)
  ROOT r = f32[4] negate(p)
}
b1 {
  p = f32[4] parameter(0)
  ROOT r = f32[4] abs(p)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[4] parameter(1)
  ROOT c = f32[4] conditional(i, x, x), branch_computations={b0, b1}
})") << "c" << "f32[4]";
    QTest::newRow("call-fusion") << QStringLiteral(R"(
f {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT m = f32[4] multiply(p0, p1)
}
ENTRY e {
  a = f32[4] parameter(0)
  c = f32[4] call(a, a), to_apply=f
  ROOT r = f32[4] fusion(c, a), kind=kLoop, calls=f
})") << "r" << "f32[4]";
    QTest::newRow("get-tuple-element") << QStringLiteral(R"(ENTRY e {
  t = (f32[2], (s32[], u8[3])) parameter(0)
  ROOT r = (s32[], u8[3]) get-tuple-element(t), index=1
})") << "r" << "(s32[], u8[3])";

    // Collectives.
    QTest::newRow("all-reduce-variadic") << withAdd(R"(ENTRY e {
  a = f32[4] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT r = (f32[4], f32[2,2]) all-reduce(a, b), replica_groups={{0,1}}, to_apply=add
})") << "r" << "(f32[4], f32[2,2])";
    QTest::newRow("all-gather") << QStringLiteral(R"(ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT r = f32[16,3] all-gather(a), dimensions={0}, replica_groups={{0,1,2,3}}
})") << "r" << "f32[16,3]";
    QTest::newRow("all-gather-start") << QStringLiteral(R"(ENTRY e {
  a = f32[4,3] parameter(0)
  s = (f32[4,3], f32[4,6]) all-gather-start(a), dimensions={1}, replica_groups={{0,1}}
  ROOT d = f32[4,6] all-gather-done(s)
})") << "s" << "(f32[4,3], f32[4,6])";
    QTest::newRow("reduce-scatter") << withAdd(R"(ENTRY e {
  a = f32[8,3] parameter(0)
  ROOT r = f32[2,3] reduce-scatter(a), dimensions={0}, replica_groups={{0,1,2,3}}, to_apply=add
})") << "r" << "f32[2,3]";
    QTest::newRow("all-to-all-tuple") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = (f32[4], f32[4]) all-to-all(a, a), replica_groups={{0,1}}
})") << "r" << "(f32[4], f32[4])";
    QTest::newRow("collective-permute-start") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  s = (f32[4], f32[4], u32[], u32[]) collective-permute-start(a), source_target_pairs={{0,1},{1,0}}
  ROOT d = f32[4] collective-permute-done(s)
})") << "s" << "(f32[4], f32[4], u32[], u32[])";
    QTest::newRow("replica-id") << QStringLiteral(R"(ENTRY e {
  ROOT r = u32[] replica-id()
})") << "r" << "u32[]";

    // Tokens and side effects.
    QTest::newRow("send-recv") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  t = token[] after-all()
  s = (f32[4], u32[], token[]) send(a, t), channel_id=1
  sd = token[] send-done(s), channel_id=1
  r = (f32[4], u32[], token[]) recv(sd), channel_id=2
  ROOT rd = (f32[4], token[]) recv-done(r), channel_id=2
})") << "rd" << "(f32[4], token[])";
    QTest::newRow("infeed-outfeed") << QStringLiteral(R"(ENTRY e {
  t = token[] after-all()
  i = (f32[3], token[]) infeed(t)
  v = f32[3] get-tuple-element(i), index=0
  k = token[] get-tuple-element(i), index=1
  ROOT o = token[] outfeed(v, k)
})") << "o" << "token[]";
    QTest::newRow("set-dimension-size") << QStringLiteral(R"(ENTRY e {
  a = f32[8] parameter(0)
  n = s32[] parameter(1)
  ROOT r = f32[<=8] set-dimension-size(a, n), dimensions={0}
})") << "r" << "f32[<=8]";
    QTest::newRow("get-dimension-size") << QStringLiteral(R"(ENTRY e {
  a = f32[<=8] parameter(0)
  ROOT r = s32[] get-dimension-size(a), dimensions={0}
})") << "r" << "s32[]";
    QTest::newRow("topk") << QStringLiteral(R"(ENTRY e {
  a = f32[4,10] parameter(0)
  ROOT r = (f32[4,3], s32[4,3]) topk(a), k=3, largest=true
})") << "r" << "(f32[4,3], s32[4,3])";
    QTest::newRow("rng-bit-generator") << QStringLiteral(R"(ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[4,4]) rng-bit-generator(s), algorithm=rng_default
})") << "r" << "(u64[2], u32[4,4])";
    QTest::newRow("copy-start-done") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  s = (f32[4], f32[4], u32[]) copy-start(a)
  ROOT d = f32[4] copy-done(s)
})") << "s" << "(f32[4], f32[4], u32[])";
    QTest::newRow("opt-barrier") << QStringLiteral(R"(ENTRY e {
  a = (f32[4], s32[]) parameter(0)
  ROOT r = (f32[4], s32[]) opt-barrier(a)
})") << "r" << "(f32[4], s32[])";
}

void TestVerifier::inferredShapes() {
    QFETCH(QString, hlo);
    QFETCH(QString, instruction);
    QFETCH(QString, expected);
    QString error;
    auto module = parseOrNull(hlo, &error);
    QVERIFY2(module, qPrintable(error));
    const HloInstruction* target = findInstruction(*module, instruction.toStdString());
    QVERIFY(target);
    StatusOr<Shape> inferred = inferShape(*target);
    QVERIFY2(inferred.isOk(), qPrintable(text(inferred.status())));
    QCOMPARE(QString::fromStdString(inferred->toString(/*printLayout=*/false)), expected);
    Status status = verifyModule(*module);
    QVERIFY2(status.isOk(), qPrintable(text(status)));
}

void TestVerifier::rejected_data() {
    QTest::addColumn<QString>("hlo");
    QTest::addColumn<QString>("instruction");  // must be named as %instruction
    QTest::addColumn<QString>("rule");         // substring of the message

    QTest::newRow("declared-shape") << QStringLiteral(R"(ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT r = f32[3,2] add(a, a)
})") << "r" << "Expected instruction to have shape equal to f32[2,3]";
    // scan (core/ir/scan.h): the body against the operands, the result against the body.
    QTest::newRow("scan-slice")
        << QStringLiteral(R"(f {
  x = f32[4] parameter(0)
  c = f32[] parameter(1)
  ROOT t = (f32[], f32[]) tuple(c, c)
}
ENTRY e {
  a = f32[4,3] parameter(0)
  i = f32[] constant(0)
  ROOT r = (f32[4], f32[]) scan(a, i), dimensions={0}, num_carries=1, to_apply=f
})") << "r"
        << "to_apply parameter 0 is f32[4], expected f32[3] (the input's slice)";
    QTest::newRow("scan-carry") << QStringLiteral(R"(f {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  b = f32[2] broadcast(c), dimensions={}
  ROOT t = (f32[], f32[2]) tuple(x, b)
}
ENTRY e {
  a = f32[4] parameter(0)
  i = f32[] constant(0)
  ROOT r = (f32[4], f32[2]) scan(a, i), dimensions={0}, num_carries=1, to_apply=f
})") << "r"
                                << "to_apply returns carry 0 as f32[2], its initial value is f32[]";
    QTest::newRow("scan-lengths") << QStringLiteral(R"(f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  c = f32[] parameter(2)
  ROOT t = (f32[], f32[]) tuple(x, c)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[5] parameter(1)
  i = f32[] constant(0)
  ROOT r = (f32[4], f32[]) scan(a, b, i), dimensions={0}, num_carries=1, to_apply=f
})") << "r"
                                  << "scan inputs differ in length along dimension 0: 4 and 5";
    QTest::newRow("scan-result")
        << QStringLiteral(R"(f {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  ROOT t = (f32[], f32[]) tuple(x, c)
}
ENTRY e {
  a = f32[4] parameter(0)
  i = f32[] constant(0)
  ROOT r = (f32[3], f32[]) scan(a, i), dimensions={0}, num_carries=1, to_apply=f
})") << "r"
        << "scan result 0 is f32[3], expected f32[4] (output 0 stacked along dimension 0)";
    QTest::newRow("scan-output-tuple") << QStringLiteral(R"(f {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  p = (f32[], f32[]) tuple(x, x)
  ROOT t = ((f32[], f32[]), f32[]) tuple(p, c)
}
ENTRY e {
  a = f32[4] parameter(0)
  i = f32[] constant(0)
  ROOT r = ((f32[], f32[]), f32[]) scan(a, i), dimensions={0}, num_carries=1, to_apply=f
})") << "r"
                                       << "scan output 0 ((f32[], f32[])) is not an array";
    QTest::newRow("binary-element-types") << QStringLiteral(R"(ENTRY e {
  a = f32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT r = f32[2] add(a, b)
})") << "r" << "different element types";
    QTest::newRow("mixed-precision") << QStringLiteral(R"(ENTRY e {
  a = f32[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT r = f32[2] add(a, b)
})") << "r" << "mixed precision is disallowed";
    QTest::newRow("implicit-broadcast") << QStringLiteral(R"(ENTRY e {
  a = f32[1,3] parameter(0)
  b = f32[2,3] parameter(1)
  ROOT r = f32[2,3] add(a, b)
})") << "r" << "Implicit broadcast is not allowed";
    QTest::newRow("unary-type") << QStringLiteral(R"(ENTRY e {
  a = s32[2] parameter(0)
  ROOT r = s32[2] exponential(a)
})") << "r" << "floating or complex";
    QTest::newRow("compare-type") << QStringLiteral(R"(ENTRY e {
  a = s32[] parameter(0)
  ROOT r = pred[] compare(a, a), direction=LT, type=UNSIGNED
})") << "r" << "Expected comparison type SIGNED";
    QTest::newRow("select-tuple") << QStringLiteral(R"(ENTRY e {
  p = pred[] parameter(0)
  t = (f32[], f32[]) parameter(1)
  ROOT r = (f32[], f32[]) select(p, t, t)
})") << "r" << "Expected array argument for select";
    QTest::newRow("broadcast-duplicate") << QStringLiteral(R"(ENTRY e {
  a = f32[2,2] parameter(0)
  ROOT r = f32[2,2] broadcast(a), dimensions={1,1}
})") << "r" << "is used twice";
    QTest::newRow("broadcast-size") << QStringLiteral(R"(ENTRY e {
  a = f32[3] parameter(0)
  ROOT r = f32[2,4] broadcast(a), dimensions={1}
})") << "r" << "does not match result dimension";
    QTest::newRow("reshape-count") << QStringLiteral(R"(ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT r = f32[7] reshape(a)
})") << "r" << "changes the element count";
    QTest::newRow("transpose-permutation") << QStringLiteral(R"(ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT r = f32[3,2] transpose(a), dimensions={1,1}
})") << "r" << "not a permutation";
    QTest::newRow("slice-bounds") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[3] slice(a), slice={[2:5]}
})") << "r" << "exceeds the dimension size";
    QTest::newRow("concatenate-dims") << QStringLiteral(R"(ENTRY e {
  a = f32[2,1] parameter(0)
  b = f32[3,1] parameter(1)
  ROOT r = f32[3,2] concatenate(a, b), dimensions={1}
})") << "r" << "differ in dimensions other than the one being concatenated";
    QTest::newRow("iota-dimension") << QStringLiteral(R"(ENTRY e {
  ROOT r = s32[4] iota(), iota_dimension=-1
})") << "r" << "cannot be negative";
    QTest::newRow("dot-contracting") << QStringLiteral(R"(ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT r = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})") << "r" << "contracting dimension sizes do not match";
    QTest::newRow("convolution-features") << QStringLiteral(R"(ENTRY e {
  x = f32[1,10,10,3] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  ROOT r = f32[1,8,8,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
})") << "r" << "feature_group_count";
    QTest::newRow("scaled-dot-scales") << QStringLiteral(R"(ENTRY e {
  a = bf16[2,10] parameter(0)
  b = bf16[10,2] parameter(1)
  s = bf16[] constant(1)
  ROOT r = f32[2,2] scaled-dot(a, b, s, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})") << "r" << "At least one of the scales should be not a scalar";
    QTest::newRow("reduce-reducer-arity") << QStringLiteral(R"(
neg {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=neg
})") << "r" << "reduction function must take 2 parameters";
    QTest::newRow("reduce-dimension") << withAdd(R"(ENTRY e {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(a, z), dimensions={1}, to_apply=add
})") << "r" << "out-of-bounds dimension";
    QTest::newRow("sort-comparator") << withAdd(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[4] sort(a), dimensions={0}, to_apply=add
})") << "r" << "comparator must return pred[]";
    QTest::newRow("gather-index-map") << QStringLiteral(R"(ENTRY e {
  a = f32[3,4] parameter(0)
  i = s32[5,2] parameter(1)
  ROOT r = f32[5,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})") << "r" << "start_index_map";
    QTest::newRow("scatter-mapping") << withAdd(R"(ENTRY e {
  a = f32[3,4] parameter(0)
  i = s32[5] parameter(1)
  u = f32[5,4] parameter(2)
  ROOT r = f32[3,4] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={7}, index_vector_dim=1, to_apply=add
})") << "r" << "Invalid scatter_dims_to_operand_dims mapping";
    QTest::newRow("get-tuple-element-index") << QStringLiteral(R"(ENTRY e {
  t = (f32[], s32[]) parameter(0)
  ROOT r = f32[] get-tuple-element(t), index=2
})") << "r" << "out of range";
    QTest::newRow("get-tuple-element-operand") << QStringLiteral(R"(ENTRY e {
  t = f32[2] parameter(0)
  ROOT r = f32[] get-tuple-element(t), index=0
})") << "r" << "must be a tuple";
    QTest::newRow("while-condition") << QStringLiteral(R"(
cond {
  p = s32[] parameter(0)
  ROOT c = s32[] add(p, p)
}
body {
  p = s32[] parameter(0)
  ROOT r = s32[] add(p, p)
}
ENTRY e {
  i = s32[] parameter(0)
  ROOT w = s32[] while(i), condition=cond, body=body
})") << "w" << "scalar predicate";
    QTest::newRow("while-body-shape") << QStringLiteral(R"(
cond {
  p = s32[] parameter(0)
  ROOT c = pred[] compare(p, p), direction=LT
}
body {
  p = s32[] parameter(0)
  ROOT r = f32[] convert(p)
}
ENTRY e {
  i = s32[] parameter(0)
  ROOT w = s32[] while(i), condition=cond, body=body
})") << "w" << "while body body returns f32[]";
    QTest::newRow("conditional-parameter") << QStringLiteral(R"(
t {
  p = f32[2] parameter(0)
  ROOT r = f32[2] negate(p)
}
f {
  p = s32[2] parameter(0)
  ROOT r = f32[2] convert(p)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[2] parameter(1)
  ROOT r = f32[2] conditional(c, x, x), true_computation=t, false_computation=f
})") << "r" << "shape does not match parameter";
    QTest::newRow("call-operand") << QStringLiteral(R"(
callee {
  ROOT p = (s32[], f32[4]) parameter(0)
}
ENTRY e {
  a = (f32[4], s32[]) parameter(0)
  ROOT r = (s32[], f32[4]) call(a), to_apply=callee
})") << "r" << "shape does not match parameter";
    QTest::newRow("fusion-parameters") << QStringLiteral(R"(
fused {
  p0 = f32[10] parameter(0)
  p1 = f32[10] parameter(1)
  ROOT o = f32[10] add(p0, p1)
}
ENTRY e {
  a = f32[10] parameter(0)
  ROOT r = f32[10] fusion(a), kind=kLoop, calls=fused
})") << "r" << "greater than the number of operands";
    QTest::newRow("called-thread") << QStringLiteral(R"(
callee {
  ROOT p = f32[] parameter(0)
}, execution_thread="parallel_thread"
ENTRY e {
  a = f32[] parameter(0)
  ROOT r = f32[] call(a), to_apply=callee
})") << "r" << "to_apply computation execution thread does not match (parallel_thread vs main)";
    QTest::newRow("composite-call") << withAdd(R"(ENTRY e {
  a = f32[] parameter(0)
  ROOT r = f32[] call(a, a), is_composite=true, to_apply=add
})") << "r" << "A composite call op must have frontend attributes";
    QTest::newRow("collective-permute-source") << QStringLiteral(R"(ENTRY e {
  a = f32[8] parameter(0)
  ROOT r = f32[8] collective-permute(a), source_target_pairs={{0,1},{0,2}}
})") << "r" << "Source 0 appears more than once";
    QTest::newRow("replica-groups-uniform") << withAdd(R"(ENTRY e {
  a = f32[8] parameter(0)
  ROOT r = f32[4] reduce-scatter(a), replica_groups={{0,1},{2,3,4}}, dimensions={0}, to_apply=add
})") << "r" << "Replica groups expected to be of uniform size";
    QTest::newRow("shard-count") << withAdd(R"(ENTRY e {
  a = f32[8] parameter(0)
  ROOT r = f32[8] reduce-scatter(a), replica_groups={{0,1}}, dimensions={0}, to_apply=add
})") << "r" << "shard_count = 1, subgroup_size = 2";
    QTest::newRow("flattened-id-groups") << withAdd(R"(ENTRY e {
  a = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(a), replica_groups={}, channel_id=1, use_global_device_ids=true, to_apply=add
})") << "r" << "Replica groups must be specified in flattened-id mode";
    QTest::newRow("all-to-all-split-count") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = (f32[4], f32[4], f32[4]) all-to-all(a, a, a), replica_groups={{0,1}}
})") << "r" << "split_count";
    QTest::newRow("copy-start-consumers") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  s = (f32[4], f32[4], u32[]) copy-start(a)
  d1 = f32[4] copy-done(s)
  d2 = f32[4] copy-done(s)
  ROOT t = (f32[4], f32[4]) tuple(d1, d2)
})") << "s" << "copy-start instruction requires one consumer, found 2";
    QTest::newRow("async-done-shape") << QStringLiteral(R"(
wrapped {
  p = f32[2,3] parameter(0)
  ROOT c = f32[3,2] custom-call(p), custom_call_target="foo"
}
ENTRY e {
  a = f32[2,3] parameter(0)
  s = ((f32[2,3]), f32[3,2], u32[]) async-start(a), calls=wrapped
  ROOT d = f32[2,3] async-done(s)
})") << "d" << "expects its shape to match the async computation result shape";
    QTest::newRow("custom-call-aliasing") << QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[8] custom-call(a), custom_call_target="foo", output_to_operand_aliasing={{}: (0, {})}
})") << "r" << "Different aliasing shapes";
    QTest::newRow("rng-types") << QStringLiteral(R"(ENTRY e {
  a = f32[] constant(0)
  b = f16[] constant(1)
  ROOT r = f32[10] rng(a, b), distribution=rng_normal
})") << "r" << "Expected compatible element types";
    QTest::newRow("unbounded-dynamism") << QStringLiteral(R"(ENTRY e {
  ROOT p = f32[?,784] parameter(0)
})") << "p" << "Unbounded dynamism is disabled";
    QTest::newRow("entry-layout") << QStringLiteral(R"(HloModule m, entry_computation_layout={(f32[2])->f32[3]}
ENTRY e {
  ROOT a = f32[2] parameter(0)
})") << "e" << "should be compatible to one specified in module's entry computation layout";
    QTest::newRow("alias-parameter") << QStringLiteral(R"(HloModule m, input_output_alias={ {}: (3, {}, may-alias) }
ENTRY e {
  ROOT a = f32[2] parameter(0)
})") << "e" << "refers to parameter 3";
    QTest::newRow("sharding-consistency") << QStringLiteral(R"(
cond {
  p = s32[] parameter(0), sharding={maximal device=0}
  ROOT c = pred[] compare(p, p), direction=LT
}
body {
  p = s32[] parameter(0), sharding={replicated}
  ROOT r = s32[] add(p, p)
}
ENTRY e {
  i = s32[] parameter(0)
  ROOT w = s32[] while(i), condition=cond, body=body
})") << "w" << "Inconsistent while sharding among instructions";
    QTest::newRow("original-value") << QStringLiteral(R"(ENTRY e {
  ROOT p = f32[] parameter(0), origin={({"a"}, {"b"})}
})") << "p" << "Mismatched tuple structure";
}

void TestVerifier::rejected() {
    QFETCH(QString, hlo);
    QFETCH(QString, instruction);
    QFETCH(QString, rule);
    QString error;
    auto module = parseOrNull(hlo, &error);
    QVERIFY2(module, qPrintable(error));
    Status status = verifyModule(*module);
    QVERIFY2(!status.isOk(), "the verifier accepted the module");
    QCOMPARE(status.code(), StatusCode::kFailedPrecondition);
    QString message = text(status);
    // Module-level errors name the entry computation instead of an instruction.
    QString named = instruction == QLatin1String("e") ? QStringLiteral("computation e")
                                                        : QLatin1Char('%') + instruction;
    QVERIFY2(message.contains(named), qPrintable(message));
    QVERIFY2(message.contains(rule), qPrintable(message));
}

void TestVerifier::unimplementedOpcodesTrustDeclaredShape() {
    QString error;
    auto module = parseOrNull(QStringLiteral(R"(ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = (f32[7], s8[2]) custom-call(a), custom_call_target="anything"
})"),
                              &error);
    QVERIFY2(module, qPrintable(error));
    const HloInstruction* call = findInstruction(*module, "r");
    QVERIFY(call);
    QCOMPARE(inferShape(*call).status().code(), StatusCode::kUnimplemented);
    QVERIFY(verifyModule(*module).isOk());
}

void TestVerifier::dynamicDimensionsPropagate() {
    QString error;
    auto module = parseOrNull(QStringLiteral(R"(ENTRY e {
  a = f32[<=4,3] parameter(0)
  b = f32[<=4,3] add(a, a)
  ROOT c = f32[<=12] reshape(b)
})"),
                              &error);
    QVERIFY2(module, qPrintable(error));
    StatusOr<Shape> add = inferShape(*findInstruction(*module, "b"));
    QVERIFY(add.isOk());
    QCOMPARE(QString::fromStdString(add->toString(false)), QStringLiteral("f32[<=4,3]"));
    StatusOr<Shape> reshape = inferShape(*findInstruction(*module, "c"));
    QVERIFY(reshape.isOk());
    QCOMPARE(QString::fromStdString(reshape->toString(false)), QStringLiteral("f32[<=12]"));
    QVERIFY(verifyModule(*module).isOk());

    // Dropping the dynamism of an elementwise result is a mismatch.
    auto bad = parseOrNull(QStringLiteral(R"(ENTRY e {
  a = f32[<=4] parameter(0)
  ROOT b = f32[4] negate(a)
})"),
                           &error);
    QVERIFY2(bad, qPrintable(error));
    Status status = verifyModule(*bad);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("%b")), qPrintable(text(status)));
}

void TestVerifier::layoutSensitiveChecks() {
    HloVerifierOptions sensitive;
    sensitive.layoutSensitive = true;
    struct Case {
        const char* hlo;
        const char* rule;
    };
    const Case cases[] = {
        {R"(ENTRY e {
  a = f32[4,5]{0,1} parameter(0)
  i = s32[] parameter(1)
  ROOT r = f32[3,4]{1,0} dynamic-slice(a, i, i), dynamic_slice_sizes={3,4}
})",
         "Instruction shouldn't change layouts"},
        {R"(ENTRY e {
  a = f32[2]{0} parameter(0)
  ROOT r = f32[3]{0} bitcast(a)
})",
         "Bitcast cannot have different shape sizes"},
        {R"(HloModule m, entry_computation_layout={(f32[3,3]{1,0})->f32[3,3]{1,0}}
ENTRY e {
  a = f32[3,3]{1,0} parameter(0)
  ROOT r = f32[3,3]{0,1} copy(a)
})",
         "should be compatible"},
    };
    for (const Case& c : cases) {
        QString error;
        auto module = parseOrNull(QString::fromLatin1(c.hlo), &error);
        QVERIFY2(module, qPrintable(error));
        QVERIFY2(verifyModule(*module).isOk(), c.hlo);  // fine without layout sensitivity
        Status status = verifyModule(*module, sensitive);
        QVERIFY2(!status.isOk(), c.hlo);
        QVERIFY2(text(status).contains(QLatin1String(c.rule)), qPrintable(text(status)));
    }
}

void TestVerifier::optionsEnableChecks() {
    QString error;
    auto named = parseOrNull(QStringLiteral(R"(ENTRY e {
  ROOT p = f32[2] parameter(0), metadata={scheduling_name="q"}
})"),
                             &error);
    QVERIFY2(named, qPrintable(error));
    QVERIFY(verifyModule(*named).isOk());
    HloVerifierOptions options;
    options.verifyInstructionNameUnchanged = true;
    Status status = verifyModule(*named, options);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("Expected instruction name to remain the same")),
             qPrintable(text(status)));

    auto reshape = parseOrNull(QStringLiteral(R"(ENTRY e {
  p = f32[8,3]{1,0} parameter(0)
  ROOT r = f32[4,2,3]{0,1,2} reshape(p)
})"),
                               &error);
    QVERIFY2(reshape, qPrintable(error));
    QVERIFY(verifyModule(*reshape).isOk());
    HloVerifierOptions bitcast;
    bitcast.verifyReshapeIsBitcast = true;
    status = verifyModule(*reshape, bitcast);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("%r")), qPrintable(text(status)));

    auto unordered = parseOrNull(QStringLiteral(R"(ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT r = f32[3,2] broadcast(a), dimensions={1,0}
})"),
                                 &error);
    QVERIFY2(unordered, qPrintable(error));
    QVERIFY(verifyModule(*unordered).isOk());
    HloVerifierOptions ordered;
    ordered.verifyBroadcastDimensionsOrder = true;
    status = verifyModule(*unordered, ordered);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("Broadcast dimensions should be ordered")),
             qPrintable(text(status)));

    auto unbounded = parseOrNull(QStringLiteral(R"(ENTRY e {
  ROOT p = f32[?,3] parameter(0)
})"),
                                 &error);
    QVERIFY2(unbounded, qPrintable(error));
    HloVerifierOptions allow;
    allow.allowUnboundedDynamism = true;
    QVERIFY(verifyModule(*unbounded, allow).isOk());

    auto mixed = parseOrNull(QStringLiteral(R"(ENTRY e {
  a = f32[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT r = f32[2] add(a, b)
})"),
                             &error);
    QVERIFY2(mixed, qPrintable(error));
    HloVerifierOptions mixedOk;
    mixedOk.allowMixedPrecision = true;
    QVERIFY(verifyModule(*mixed, mixedOk).isOk());
}

void TestVerifier::missingEntryIsRejected() {
    HloModule module("m");
    auto computation = std::make_unique<HloComputation>("c");
    HloInstruction* p = addParameter(*computation, 0, "p", Shape::makeScalar(PrimitiveType::F32));
    computation->setRoot(p);
    module.addComputation(std::move(computation));
    module.setEntryComputation(nullptr);
    Status status = verifyModule(module);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("no entry computation")), qPrintable(text(status)));
}

void TestVerifier::duplicateComputationNamesAreRejected() {
    HloModule module("m");
    for (int i = 0; i < 2; ++i) {
        auto computation = std::make_unique<HloComputation>("same");
        HloInstruction* p = addParameter(*computation, 0, "p" + std::to_string(i),
                                         Shape::makeScalar(PrimitiveType::F32));
        computation->setRoot(p);
        module.addComputation(std::move(computation), /*isEntry=*/i == 1);
    }
    Status status = verifyModule(module);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("computation same")), qPrintable(text(status)));
    QVERIFY2(text(status).contains(QStringLiteral("not unique")), qPrintable(text(status)));
}

void TestVerifier::recursiveCallsAreRejected() {
    // The parser refuses the text; a pass that rewires a call into a cycle meets the verifier.
    auto module = parseHloModule(
        "HloModule m\n"
        "a {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n"
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=a\n}");
    QVERIFY(module.isOk());
    QVERIFY(verifyModule(**module).isOk());
    HloComputation* entry = (*module)->entryComputation();
    HloComputation* a = (*module)->findComputation("a");
    QVERIFY(a);
    HloInstruction* negate = a->root();
    // a's root now calls e, which calls a.
    auto recursive = std::make_unique<HloInstruction>(HloOpcode::kCall, "again", negate->shape());
    recursive->appendOperand(negate);
    CalledComputationAttribute attribute;
    attribute.name = "to_apply";
    attribute.computations = {entry};
    recursive->mutableCalledComputationAttributes().push_back(attribute);
    HloInstruction* again = a->addInstruction(std::move(recursive));
    a->setRoot(again);
    Status status = verifyModule(**module);
    QVERIFY(!status.isOk());
    // Named from whichever computation the walk starts at.
    const QString message = text(status);
    QVERIFY2((message.contains(QStringLiteral("%again in computation a: calls computation e recursively")) &&
              message.contains(QStringLiteral("(the call graph has a cycle: e -> a -> e)"))) ||
                 (message.contains(QStringLiteral("%c in computation e: calls computation a recursively")) &&
                  message.contains(QStringLiteral("(the call graph has a cycle: a -> e -> a)"))),
             qPrintable(message));
}

void TestVerifier::cyclesAreRejected() {
    HloModule module("m");
    auto computation = std::make_unique<HloComputation>("main");
    Shape scalar = Shape::makeScalar(PrimitiveType::F32);
    HloInstruction* p = addParameter(*computation, 0, "p", scalar);
    HloInstruction* a = addInstruction(*computation, HloOpcode::kNegate, "a", scalar, {p});
    HloInstruction* b = addInstruction(*computation, HloOpcode::kNegate, "b", scalar, {a});
    b->addControlDependencyTo(a);  // a waits for b, b uses a
    computation->setRoot(b);
    module.addComputation(std::move(computation), /*isEntry=*/true);
    Status status = verifyModule(module);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("cycle")), qPrintable(text(status)));
    QVERIFY2(text(status).contains(QStringLiteral("%a")) || text(status).contains(QStringLiteral("%b")),
             qPrintable(text(status)));
}

void TestVerifier::parameterGapsAreRejected() {
    HloModule module("m");
    auto computation = std::make_unique<HloComputation>("main");
    Shape scalar = Shape::makeScalar(PrimitiveType::F32);
    HloInstruction* p0 = addParameter(*computation, 0, "p0", scalar);
    HloInstruction* p2 = addParameter(*computation, 2, "p2", scalar);
    computation->setRoot(addInstruction(*computation, HloOpcode::kAdd, "s", scalar, {p0, p2}));
    module.addComputation(std::move(computation), /*isEntry=*/true);
    Status status = verifyModule(module);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("parameter 1 is missing")), qPrintable(text(status)));
}

void TestVerifier::operandCountIsChecked() {
    HloModule module("m");
    auto computation = std::make_unique<HloComputation>("main");
    Shape vector = Shape::makeArray(PrimitiveType::F32, {2});
    HloInstruction* p = addParameter(*computation, 0, "p", vector);
    computation->setRoot(addInstruction(*computation, HloOpcode::kNegate, "n", vector, {p, p}));
    module.addComputation(std::move(computation), /*isEntry=*/true);
    Status status = verifyModule(module);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("%n in computation main")), qPrintable(text(status)));
    QVERIFY2(text(status).contains(QStringLiteral("expected 1 operands for negate instruction, found 2")),
             qPrintable(text(status)));
    // inferShape never crashes on a bad operand count either.
    QCOMPARE(inferShape(*module.entryComputation()->root()).status().code(),
             StatusCode::kFailedPrecondition);
}

void TestVerifier::constantLiteralMustMatchShape() {
    HloModule module("m");
    auto computation = std::make_unique<HloComputation>("main");
    auto constant = std::make_unique<HloInstruction>(HloOpcode::kConstant, "c",
                                                     Shape::makeArray(PrimitiveType::F32, {3}));
    constant->setLiteralText("{1, 2}");
    computation->setRoot(computation->addInstruction(std::move(constant)));
    module.addComputation(std::move(computation), /*isEntry=*/true);
    Status status = verifyModule(module);
    QVERIFY(!status.isOk());
    QVERIFY2(text(status).contains(QStringLiteral("%c")), qPrintable(text(status)));
    QVERIFY2(text(status).contains(QStringLiteral("constant literal does not match its shape")),
             qPrintable(text(status)));
}

QTEST_APPLESS_MAIN(TestVerifier)
#include "tst_verifier.moc"
