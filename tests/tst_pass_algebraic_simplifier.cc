// Tests of AlgebraicSimplifierPass: one firing case per rule (CHECK lines,
// recorded rule name, same results), the floating-point traps and other
// cases that must not fire, options, a corpus sweep and timing on the
// largest model.
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTest>

#include <atomic>
#include <map>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "compiler/passes/algebraic_simplifier.h"
#include "pass_test_util.h"

using namespace hloscope;
using namespace hloscope::testing;

namespace {

std::string ruleList(const HloPass& pass) {
    std::string out;
    for (const RewriteEvent& event : pass.rewrites()) out += event.rule + " ";
    return out;
}

bool recorded(const HloPass& pass, const std::string& rule) {
    for (const RewriteEvent& event : pass.rewrites())
        if (event.rule == rule) return true;
    return false;
}

// Whether an entry parameter holds no elements. The reference evaluator
// crashes on a gather from an empty operand
// (simplifiers/gather_simplifier_test_007.hlo), so such modules are run
// through the pass and verified but not evaluated.
bool hasEmptyInput(const HloModule& module) {
    for (HloInstruction* parameter : module.entryComputation()->parameters())
        if (parameter->shape().isArray() && parameter->shape().elementCount() == 0) return true;
    return false;
}

// Send/recv block in the evaluator until a peer times out (about 15 s per
// module): such modules are run through the pass but not evaluated.
bool hasSendOrRecv(const HloModule& module) {
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            switch (instruction->opcode()) {
                case HloOpcode::kSend:
                case HloOpcode::kSendDone:
                case HloOpcode::kRecv:
                case HloOpcode::kRecvDone:
                    return true;
                default:
                    break;
            }
    return false;
}

// Whether evaluating the module would take long: the evaluator checks for
// cancellation only between instructions, so one huge instruction (a
// broadcast to 10^9 elements, a reduce-window with a 46592-wide window)
// cannot be interrupted. Such modules are run through the pass but not
// evaluated.
bool costlyToEvaluate(const HloModule& module) {
    constexpr int64_t kLimit = 16'000'000;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions()) {
            const Shape& shape = instruction->shape();
            if (!shape.isArray()) continue;
            int64_t work = shape.elementCount();
            if (const Window* window = instruction->window())
                for (const WindowDimension& d : window->dimensions)
                    work = d.size > 0 && work < kLimit ? work * d.size : work;
            if (work > kLimit) return true;
        }
    return false;
}

int64_t entryInputElements(const HloModule& module) {
    int64_t total = 0;
    for (HloInstruction* parameter : module.entryComputation()->parameters()) {
        std::vector<const Shape*> stack = {&parameter->shape()};
        while (!stack.empty()) {
            const Shape* shape = stack.back();
            stack.pop_back();
            if (shape->isTuple())
                for (const Shape& element : shape->tupleShapes()) stack.push_back(&element);
            else if (shape->isArray())
                total += shape->elementCount();
        }
    }
    return total;
}

// sameResults with a time budget: evaluations are cancelled after
// `seconds` (and loops bounded), so that a corpus module with a long
// while loop is skipped instead of stalling the sweep. Empty when the
// results agree or the original cannot be evaluated in time.
std::string sameResultsBounded(const HloModule& before, const HloModule& after, double seconds,
                               bool* evaluated) {
    *evaluated = false;
    const HloComputation* entry = before.entryComputation();
    std::vector<Literal> arguments;
    for (int64_t i = 0; i < entry->parameterCount(); ++i) {
        RandomLiteralOptions options;
        options.seed = 1 + static_cast<uint64_t>(i) * 7919;
        arguments.push_back(makeRandomLiteral(entry->parameter(i)->shape(), options));
    }
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    std::thread watchdog([&] {
        std::unique_lock lock(mutex);
        if (!done.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return finished; }))
            cancel = true;
    });
    HloEvaluatorOptions options;
    options.maxWhileIterations = 100'000;
    options.cancel = &cancel;
    HloEvaluator a(options), b(options);
    auto x = a.evaluate(before, arguments);
    auto y = x.isOk() ? b.evaluate(after, arguments) : StatusOr<Literal>(x.status());
    const bool cancelled = cancel.load();
    {
        std::lock_guard lock(mutex);
        finished = true;
    }
    done.notify_all();
    watchdog.join();
    if (!x.isOk() || cancelled) return {};
    if (!y.isOk()) return "the module no longer evaluates: " + y.status().toString();
    *evaluated = true;
    CompareSpec spec;
    spec.mode = CompareMode::kAlmost;
    spec.tolerance = 1e-5;
    return compareLiterals(*y, *x, spec);
}

}  // namespace

class TestAlgebraicSimplifier : public QObject {
    Q_OBJECT

private slots:
    void fires_data();
    void fires();
    void doesNotFire_data();
    void doesNotFire();
    void reachesFixedPoint();
    void maxIterationsBoundsSweeps();
    void removesOnlyWhatItKilled();
    void badOptions();
    void corpusSweep();
    void largestModelTiming();
    void modelsStayValid();
};

void TestAlgebraicSimplifier::fires_data() {
    QTest::addColumn<QString>("hlo");
    QTest::addColumn<QString>("checks");
    QTest::addColumn<QString>("rule");
    auto row = [](const char* name, const char* hlo, const char* checks, const char* rule) {
        QTest::newRow(name) << QString::fromUtf8(hlo) << QString::fromUtf8(checks)
                            << QString::fromUtf8(rule);
    };
    row("add-zero float -0.0", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(-0)
  z = f32[4] broadcast(c), dimensions={}
  ROOT a = f32[4] add(p, z)
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)\nCHECK-NOT: add(", "add-zero");
    row("splat constant", R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  c = f32[2,3] constant({{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}})
  ROOT m = f32[2,3] multiply(p, c)
})", "CHECK: multiply(f32[2,3] %p, f32[2,3] %broadcast\nCHECK: f32[] constant(0.5)\nCHECK: f32[2,3] broadcast(f32[] %constant{{.*}}), dimensions={}", "splat-constant-to-broadcast");
    row("splat constant written as one value", R"(HloModule m
ENTRY e {
  p = s32[100,1000] parameter(0)
  c = s32[100,1000] constant(7)
  ROOT a = s32[100,1000] add(p, c)
})", "CHECK: constant(7)\nCHECK: broadcast(", "splat-constant-to-broadcast");
    row("add-zero int lhs", R"(HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[4] constant({0, 0, 0, 0})
  ROOT a = s32[4] add(z, p)
})", "CHECK: ROOT %p = s32[4]{{.*}} parameter(0)", "add-zero");
    row("sub-zero float +0.0", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(0)
  z = f32[4] broadcast(c), dimensions={}
  ROOT s = f32[4] subtract(p, z)
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "sub-zero");
    row("mul-one", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  one = f32[4] constant({1, 1, 1, 1})
  ROOT m = f32[4] multiply(one, p)
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "mul-one");
    row("mul-zero int", R"(HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[] constant(0)
  z = s32[4] broadcast(c), dimensions={}
  ROOT m = s32[4] multiply(p, z)
})", "CHECK: ROOT %z = s32[4]{{.*}} broadcast(\nCHECK-NOT: multiply(", "mul-zero");
    row("div-one", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(1)
  one = f32[4] broadcast(c), dimensions={}
  ROOT d = f32[4] divide(p, one)
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "div-one");
    row("and-identity pred", R"(HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  c = pred[] constant(true)
  t = pred[4] broadcast(c), dimensions={}
  ROOT a = pred[4] and(p, t)
})", "CHECK: ROOT %p = pred[4]{{.*}} parameter(0)", "and-identity");
    row("and-absorb s32", R"(HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[] constant(0)
  z = s32[4] broadcast(c), dimensions={}
  ROOT a = s32[4] and(z, p)
})", "CHECK: ROOT %z = s32[4]{{.*}} broadcast(", "and-absorb");
    row("or-identity u8", R"(HloModule m
ENTRY e {
  p = u8[4] parameter(0)
  c = u8[] constant(0)
  z = u8[4] broadcast(c), dimensions={}
  ROOT o = u8[4] or(p, z)
})", "CHECK: ROOT %p = u8[4]{{.*}} parameter(0)", "or-identity");
    row("or-absorb s8 all ones", R"(HloModule m
ENTRY e {
  p = s8[4] parameter(0)
  c = s8[] constant(-1)
  ones = s8[4] broadcast(c), dimensions={}
  ROOT o = s8[4] or(p, ones)
})", "CHECK: ROOT %ones = s8[4]{{.*}} broadcast(", "or-absorb");
    row("max-self", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT m = f32[4] maximum(p, p)
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "max-self");
    row("min-self", R"(HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  ROOT m = s32[4] minimum(p, p)
})", "CHECK: ROOT %p = s32[4]{{.*}} parameter(0)", "min-self");
    row("select-constant-pred true", R"(HloModule m
ENTRY e {
  c = pred[] constant(true)
  t = pred[4] broadcast(c), dimensions={}
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] select(t, a, b)
})", "CHECK: ROOT %a = f32[4]{{.*}} parameter(0)", "select-constant-pred");
    row("select-constant-pred false", R"(HloModule m
ENTRY e {
  f = pred[4] constant({0, 0, 0, 0})
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] select(f, a, b)
})", "CHECK: ROOT %b = f32[4]{{.*}} parameter(1)", "select-constant-pred");
    row("select-same-branches", R"(HloModule m
ENTRY e {
  q = pred[4] parameter(0)
  a = f32[4] parameter(1)
  ROOT s = f32[4] select(q, a, a)
})", "CHECK: ROOT %a = f32[4]{{.*}} parameter(1)", "select-same-branches");
    row("negate-negate", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT nn = f32[4] negate(n)
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)\nCHECK-NOT: negate(", "negate-negate");
    row("not-not", R"(HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  n = s32[4] not(p)
  ROOT nn = s32[4] not(n)
})", "CHECK: ROOT %p = s32[4]{{.*}} parameter(0)", "not-not");
    row("abs-abs", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] abs(p)
  ROOT aa = f32[4] abs(a)
})", "CHECK: ROOT %a = f32[4]{{.*}} abs(f32[4]{{[^ ]*}} %p)", "abs-abs");
    row("convert-noop", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] convert(p)
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "convert-noop");
    row("convert-chain f32 f64 f32", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  d = f64[4] convert(p)
  ROOT c = f32[4] convert(d)
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)\nCHECK-NOT: f64", "convert-chain");
    row("convert-chain s8 s32 s64", R"(HloModule m
ENTRY e {
  p = s8[4] parameter(0)
  w = s32[4] convert(p)
  ROOT c = s64[4] convert(w)
})", "CHECK: ROOT %c = s64[4]{{.*}} convert(s8[4]{{[^ ]*}} %p)\nCHECK-NOT: s32[4]", "convert-chain");
    row("reshape-noop", R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reshape(p)
})", "CHECK: ROOT %p = f32[2,3]{{.*}} parameter(0)", "reshape-noop");
    row("reshape-of-reshape", R"(HloModule m
ENTRY e {
  p = f32[2,6] parameter(0)
  r1 = f32[3,4] reshape(p)
  ROOT r2 = f32[12] reshape(r1)
})", "CHECK-NOT: f32[3,4]\nCHECK: ROOT %r2 = f32[12]{{.*}} reshape(f32[2,6]{{[^ ]*}} %p)", "reshape-of-reshape");
    row("reshape-of-broadcast-scalar", R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  b = f32[2,6] broadcast(p), dimensions={}
  ROOT r = f32[3,4] reshape(b)
})", "CHECK: ROOT %{{[^ ]*}} = f32[3,4]{{.*}} broadcast(f32[] %p), dimensions={}\nCHECK-NOT: reshape(", "reshape-of-broadcast-scalar");
    row("transpose-noop", R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT t = f32[2,3] transpose(p), dimensions={0,1}
})", "CHECK: ROOT %p = f32[2,3]{{.*}} parameter(0)", "transpose-noop");
    row("transpose-of-transpose", R"(HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  t1 = f32[3,2,4] transpose(p), dimensions={1,0,2}
  ROOT t2 = f32[3,4,2] transpose(t1), dimensions={0,2,1}
})", "CHECK: ROOT %t2 = f32[3,4,2]{{.*}} transpose(f32[2,3,4]{{[^ ]*}} %p), dimensions={1,2,0}", "transpose-of-transpose");
    row("transpose-of-transpose to identity", R"(HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  t1 = f32[3,4,2] transpose(p), dimensions={1,2,0}
  ROOT t2 = f32[2,3,4] transpose(t1), dimensions={2,0,1}
})", "CHECK: ROOT %p = f32[2,3,4]{{.*}} parameter(0)\nCHECK-NOT: transpose(", "transpose-noop");
    row("transpose-of-broadcast-scalar", R"(HloModule m
ENTRY e {
  p = s32[] parameter(0)
  b = s32[2,3] broadcast(p), dimensions={}
  ROOT t = s32[3,2] transpose(b), dimensions={1,0}
})", "CHECK: ROOT %{{[^ ]*}} = s32[3,2]{{.*}} broadcast(s32[] %p), dimensions={}", "transpose-of-broadcast-scalar");
    row("broadcast-noop", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT b = f32[4] broadcast(p), dimensions={0}
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "broadcast-noop");
    row("broadcast-of-broadcast", R"(HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  b1 = f32[3,4] broadcast(p), dimensions={0}
  ROOT b2 = f32[2,3,4] broadcast(b1), dimensions={1,2}
})", "CHECK: ROOT %b2 = f32[2,3,4]{{.*}} broadcast(f32[3]{{[^ ]*}} %p), dimensions={1}", "broadcast-of-broadcast");
    row("slice-noop", R"(HloModule m
ENTRY e {
  p = f32[4,5] parameter(0)
  ROOT s = f32[4,5] slice(p), slice={[0:4], [0:5]}
})", "CHECK: ROOT %p = f32[4,5]{{.*}} parameter(0)", "slice-noop");
    row("slice-of-slice", R"(HloModule m
ENTRY e {
  p = f32[20] parameter(0)
  s1 = f32[8] slice(p), slice={[2:18:2]}
  ROOT s2 = f32[2] slice(s1), slice={[1:7:3]}
})", "CHECK: ROOT %s2 = f32[2]{{.*}} slice(f32[20]{{[^ ]*}} %p), slice={[4:11:6]}", "slice-of-slice");
    row("slice-of-concat", R"(HloModule m
ENTRY e {
  a = f32[4,2] parameter(0)
  b = f32[6,2] parameter(1)
  c = f32[10,2] concatenate(a, b), dimensions={0}
  ROOT s = f32[4,1] slice(c), slice={[5:9], [1:2]}
})", "CHECK-NOT: concatenate(\nCHECK: ROOT %s = f32[4,1]{{.*}} slice(f32[6,2]{{[^ ]*}} %b), slice={[1:5], [1:2]}", "slice-of-concat");
    row("slice-of-broadcast-scalar", R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  b = f32[8] broadcast(p), dimensions={}
  ROOT s = f32[3] slice(b), slice={[1:7:2]}
})", "CHECK: ROOT %{{[^ ]*}} = f32[3]{{.*}} broadcast(f32[] %p)", "slice-of-broadcast-scalar");
    row("concat-single", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] concatenate(p), dimensions={0}
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "concat-single");
    row("concat-empty-operand", R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  e = f32[0,3] parameter(1)
  q = f32[1,3] parameter(2)
  ROOT c = f32[3,3] concatenate(p, e, q), dimensions={0}
})", "CHECK: ROOT %c = f32[3,3]{{.*}} concatenate(f32[2,3]{{[^ ]*}} %p, f32[1,3]{{[^ ]*}} %q)", "concat-empty-operand");
    row("pad-noop", R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT q = f32[2,3] pad(p, z), padding=0_0x0_0
})", "CHECK: ROOT %p = f32[2,3]{{.*}} parameter(0)\nCHECK-NOT: pad(", "pad-noop");
    row("reduce-noop-dims add -0.0", R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(-0)
  ROOT r = f32[4] reduce(p, z), dimensions={}, to_apply=add
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "reduce-noop-dims");
    row("reduce-noop-dims max -inf", R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(y, x)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[4] reduce(p, z), dimensions={}, to_apply=max
})", "CHECK: ROOT %p = f32[4]{{.*}} parameter(0)", "reduce-noop-dims");
    row("reduce-of-empty", R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[0,3] parameter(0)
  z = f32[] constant(2.5)
  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add
})", "CHECK: ROOT %{{[^ ]*}} = f32[3]{{.*}} broadcast(f32[] %z), dimensions={}\nCHECK-NOT: reduce(", "reduce-of-empty");
    row("dot-fold-transpose", R"(HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[3,5] parameter(1)
  t = f32[2,3] transpose(a), dimensions={1,0}
  ROOT d = f32[2,5] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", "CHECK-NOT: transpose(\nCHECK: ROOT %d = f32[2,5]{{.*}} dot(f32[3,2]{{[^ ]*}} %a, f32[3,5]{{[^ ]*}} %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}", "dot-fold-transpose");
    row("dot-fold-transpose batch", R"(HloModule m
ENTRY e {
  a = f32[4,3,2] parameter(0)
  b = f32[2,3,5] parameter(1)
  t = f32[2,4,3] transpose(a), dimensions={2,0,1}
  ROOT d = f32[2,4,5] dot(t, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})", "CHECK: ROOT %d = f32[2,4,5]{{.*}} dot(f32[4,3,2]{{[^ ]*}} %a, f32[2,3,5]{{[^ ]*}} %b), lhs_batch_dims={2}, lhs_contracting_dims={1}", "dot-fold-transpose");
    row("dot-strength-reduction outer product", R"(HloModule m
ENTRY e {
  a = s32[3] parameter(0)
  b = s32[4] parameter(1)
  ROOT d = s32[3,4] dot(a, b)
})", "CHECK: broadcast(s32[3]{{[^ ]*}} %a), dimensions={0}\nCHECK: broadcast(s32[4]{{[^ ]*}} %b), dimensions={1}\nCHECK: ROOT %{{[^ ]*}} = s32[3,4]{{.*}} multiply(\nCHECK-NOT: dot(", "dot-strength-reduction");
    row("dot-strength-reduction batch vectors", R"(HloModule m
ENTRY e {
  a = s32[5] parameter(0)
  b = s32[5] parameter(1)
  ROOT d = s32[5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}
})", "CHECK: ROOT %{{[^ ]*}} = s32[5]{{.*}} multiply(s32[5]{{[^ ]*}} %a, s32[5]{{[^ ]*}} %b)", "dot-strength-reduction");
    row("dot-strength-reduction scalars", R"(HloModule m
ENTRY e {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT d = s64[] dot(a, b)
})", "CHECK: ROOT %{{[^ ]*}} = s64[] multiply(s64[] %a, s64[] %b)", "dot-strength-reduction");
    row("inside a called computation", R"(HloModule m
body {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  ROOT nn = f32[4] negate(n)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=body
})", "CHECK: body\nCHECK-NEXT: ROOT %x = f32[4]{{.*}} parameter(0)\nCHECK-NEXT: }", "negate-negate");
    row("scheduled module, in-place fold", R"(HloModule m, is_scheduled=true
ENTRY e {
  p = f32[2,6]{1,0} parameter(0)
  r1 = f32[3,4]{1,0} reshape(p)
  ROOT r2 = f32[12]{0} reshape(r1)
})", "CHECK: is_scheduled=true\nCHECK: ROOT %r2 = f32[12]{0} reshape(f32[2,6]{1,0} %p)", "reshape-of-reshape");
    row("copy-of-copy", R"(HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{0,1} copy(p)
  ROOT c2 = f32[2,3]{0,1} copy(c1)
})", "CHECK: ROOT %c1 = f32[2,3]{0,1} copy(f32[2,3]{1,0} %p)\nCHECK-NOT: %c2", "copy-of-copy");
}

void TestAlgebraicSimplifier::fires() {
    QFETCH(QString, hlo);
    QFETCH(QString, checks);
    QFETCH(QString, rule);
    auto pass = AlgebraicSimplifierPass::create({});
    QVERIFY(pass.isOk());
    auto run = runPass(**pass, hlo.toStdString());
    QVERIFY2(run.isOk(), run.status().toString().c_str());
    QVERIFY(run->changed);
    const std::string why = fileCheck(run->text, checks.toStdString());
    QVERIFY2(why.empty(), why.c_str());
    QVERIFY2(recorded(**pass, rule.toStdString()), ruleList(**pass).c_str());
    auto before = parseHloModule(hlo.toStdString());
    QVERIFY(before.isOk());
    bool evaluated = false;
    const std::string diff = sameResults(**before, *run->module, 1, 0.0, &evaluated);
    QVERIFY2(diff.empty(), diff.c_str());
    QVERIFY(evaluated);
    // A second run finds nothing left to do.
    auto again = (*pass)->run(*run->module);
    QVERIFY(again.isOk());
    QVERIFY2(!*again, ruleList(**pass).c_str());
}

void TestAlgebraicSimplifier::doesNotFire_data() {
    QTest::addColumn<QString>("hlo");
    auto row = [](const char* name, const char* hlo) {
        QTest::newRow(name) << QString::fromUtf8(hlo);
    };
    row("float x + 0.0", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(0)
  z = f32[4] broadcast(c), dimensions={}
  ROOT a = f32[4] add(p, z)
})");
    row("float x - (-0.0)", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(-0)
  z = f32[4] broadcast(c), dimensions={}
  ROOT a = f32[4] subtract(p, z)
})");
    row("constant with different elements", R"(HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  c = f32[3] constant({1, 1, 2})
  ROOT a = f32[3] multiply(p, c)
})");
    row("float x * 0.0", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(0)
  z = f32[4] broadcast(c), dimensions={}
  ROOT m = f32[4] multiply(p, z)
})");
    row("convert f32 f16 f32", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  h = f16[4] convert(p)
  ROOT c = f32[4] convert(h)
})");
    row("convert s32 f32 s32", R"(HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  f = f32[4] convert(p)
  ROOT c = s32[4] convert(f)
})");
    row("reduce no dims with init +0.0", R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p, z), dimensions={}, to_apply=add
})");
    row("reduce no dims with non-identity init", R"(HloModule m
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(1)
  ROOT r = s32[4] reduce(p, z), dimensions={}, to_apply=add
})");
    row("float dot without contracting dims", R"(HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[4] parameter(1)
  ROOT d = f32[3,4] dot(a, b)
})");
    row("dot transpose reordering free dims", R"(HloModule m
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[4,5] parameter(1)
  t = f32[2,3,4] transpose(a), dimensions={1,0,2}
  ROOT d = f32[2,3,5] dot(t, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
})");
    row("single copy kept", R"(HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT c = f32[2,3]{0,1} copy(p)
})");
    row("copy of copy with different layouts", R"(HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{0,1} copy(p)
  ROOT c2 = f32[2,3]{1,0} copy(c1)
})");
    row("root layout differs from operand", R"(HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT t = f32[2,3]{1,0} transpose(p), dimensions={0,1}
})");
    row("scheduled module needs a new instruction", R"(HloModule m, is_scheduled=true
ENTRY e {
  p = f32[] parameter(0)
  b = f32[2,6] broadcast(p), dimensions={}
  ROOT r = f32[3,4] reshape(b)
})");
    row("slice across concat operands", R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[6] parameter(1)
  c = f32[10] concatenate(a, b), dimensions={0}
  ROOT s = f32[4] slice(c), slice={[2:6]}
})");
    row("side-effecting custom call untouched", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="foo", custom_call_has_side_effect=true
})");
}

void TestAlgebraicSimplifier::doesNotFire() {
    QFETCH(QString, hlo);
    auto pass = AlgebraicSimplifierPass::create({});
    QVERIFY(pass.isOk());
    auto original = parseHloModule(hlo.toStdString());
    QVERIFY2(original.isOk(), original.status().toString().c_str());
    auto run = runPass(**pass, hlo.toStdString());
    QVERIFY2(run.isOk(), run.status().toString().c_str());
    QVERIFY2(!run->changed, ruleList(**pass).c_str());
    QVERIFY((*pass)->rewrites().empty());
    QCOMPARE(run->text, printModule(**original, HloPrintOptions::canonical()));
}

void TestAlgebraicSimplifier::reachesFixedPoint() {
    const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[2,6] parameter(0)
  c = f32[] constant(-0)
  z = f32[2,6] broadcast(c), dimensions={}
  a = f32[2,6] add(p, z)
  n1 = f32[2,6] negate(a)
  n2 = f32[2,6] negate(n1)
  r1 = f32[3,4] reshape(n2)
  r2 = f32[2,6] reshape(r1)
  one = f32[] constant(1)
  ones = f32[2,6] broadcast(one), dimensions={}
  ROOT m = f32[2,6] multiply(r2, ones)
})";
    auto pass = AlgebraicSimplifierPass::create({});
    QVERIFY(pass.isOk());
    auto run = runPass(**pass, hlo);
    QVERIFY2(run.isOk(), run.status().toString().c_str());
    QVERIFY(run->changed);
    // Everything folds away, and the dead instructions are removed.
    const std::string why = fileCheck(run->text, R"(
        CHECK: ENTRY
        CHECK-NEXT: ROOT %p = f32[2,6]{{.*}} parameter(0)
        CHECK-NEXT: }
    )");
    QVERIFY2(why.empty(), why.c_str());
    QCOMPARE(run->module->entryComputation()->instructionCount(), int64_t{1});
    auto before = parseHloModule(hlo);
    QVERIFY(before.isOk());
    const std::string diff = sameResults(**before, *run->module, 3, 0.0);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestAlgebraicSimplifier::maxIterationsBoundsSweeps() {
    // transpose-of-transpose composes to the identity in sweep 1; only
    // sweep 2 removes it.
    const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  t1 = f32[3,2] transpose(p), dimensions={1,0}
  ROOT t2 = f32[2,3] transpose(t1), dimensions={1,0}
})";
    auto one = AlgebraicSimplifierPass::create({{"max_iterations", "1"}});
    QVERIFY(one.isOk());
    auto run = runPass(**one, hlo);
    QVERIFY2(run.isOk(), run.status().toString().c_str());
    QVERIFY(run->changed);
    std::string why = fileCheck(run->text, "CHECK: ROOT %t2 = {{.*}} transpose(f32[2,3]{{[^ ]*}} %p), dimensions={0,1}");
    QVERIFY2(why.empty(), why.c_str());
    auto all = AlgebraicSimplifierPass::create({{"max_iterations", "10"}});
    QVERIFY(all.isOk());
    run = runPass(**all, hlo);
    QVERIFY2(run.isOk(), run.status().toString().c_str());
    why = fileCheck(run->text, "CHECK: ROOT %p = f32[2,3]{{.*}} parameter(0)");
    QVERIFY2(why.empty(), why.c_str());
}

void TestAlgebraicSimplifier::removesOnlyWhatItKilled() {
    // %n is shared: after negate-negate, the inner negate still has a user
    // and stays; %unused was dead before the pass and is left to DCE.
    const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  unused = f32[4] exponential(p)
  n = f32[4] negate(p)
  nn = f32[4] negate(n)
  ROOT t = (f32[4], f32[4]) tuple(nn, n)
})";
    auto pass = AlgebraicSimplifierPass::create({});
    QVERIFY(pass.isOk());
    auto run = runPass(**pass, hlo);
    QVERIFY2(run.isOk(), run.status().toString().c_str());
    QVERIFY(run->changed);
    const std::string why = fileCheck(run->text, R"(
        CHECK: %unused = f32[4]{{.*}} exponential(
        CHECK: %n = f32[4]{{.*}} negate(
        CHECK-NOT: %nn
        CHECK: ROOT %t = {{.*}} tuple(f32[4]{{[^ ]*}} %p, f32[4]{{[^ ]*}} %n)
    )");
    QVERIFY2(why.empty(), why.c_str());
}

void TestAlgebraicSimplifier::badOptions() {
    auto zero = AlgebraicSimplifierPass::create({{"max_iterations", "0"}});
    QVERIFY(!zero.isOk());
    QVERIFY2(zero.status().toString().find("max_iterations") != std::string::npos,
             zero.status().toString().c_str());
    auto text = AlgebraicSimplifierPass::create({{"max_iterations", "many"}});
    QVERIFY(!text.isOk());
    auto unknown = AlgebraicSimplifierPass::create({{"max_iteration", "3"}});
    QVERIFY(!unknown.isOk());
    QVERIFY2(unknown.status().toString().find("max_iteration") != std::string::npos,
             unknown.status().toString().c_str());
    QVERIFY(AlgebraicSimplifierPass::create({{"max_iterations", "3"}}).isOk());
    QCOMPARE(AlgebraicSimplifierPass::kName, std::string_view("algebraic-simplifier"));
    QVERIFY(!AlgebraicSimplifierPass::description().empty());
}

void TestAlgebraicSimplifier::corpusSweep() {
    const QString valid = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/valid");
    if (!QDir(valid).exists()) QSKIP("corpus not found at " HLOSCOPE_CORPUS_DIR);
    QStringList folders = {QStringLiteral("algebraic_simplifier"), QStringLiteral("simplifiers")};
    if (!QDir(valid + QStringLiteral("/simplifiers")).exists()) {
        folders.removeLast();
        for (const QString& name : QDir(valid).entryList(QDir::Dirs | QDir::NoDotAndDotDot))
            if (name.contains(QStringLiteral("simplif")) && !folders.contains(name))
                folders << name;
    }
    int files = 0, run = 0, changed = 0, evaluated = 0, skippedLarge = 0, skippedEmpty = 0, rewrites = 0;
    QStringList failures;
    std::map<std::string, int> ruleCounts;
    HloVerifierOptions verifierOptions;
    verifierOptions.allowMixedPrecision = true;
    for (const QString& folder : folders) {
        QDirIterator it(valid + QLatin1Char('/') + folder, {QStringLiteral("*.hlo")}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            ++files;
            QElapsedTimer moduleTimer;
            moduleTimer.start();
            struct Trace {
                const QString& path;
                QElapsedTimer& timer;
                ~Trace() {
                    if (qEnvironmentVariableIsSet("HLOSCOPE_TRACE") && timer.elapsed() > 200)
                        qInfo("%lld ms: %s", static_cast<long long>(timer.elapsed()),
                              qPrintable(path));
                }
            } trace{path, moduleTimer};
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly)) continue;
            const std::string text = file.readAll().toStdString();
            auto before = parseHloModule(text);
            if (!before.isOk() || !verifyModule(**before, verifierOptions).isOk()) continue;
            auto after = parseHloModule(text);
            if (!after.isOk()) continue;
            ++run;
            const std::string printedBefore = printModule(**after);
            auto pass = AlgebraicSimplifierPass::create({});
            QVERIFY(pass.isOk());
            auto didChange = (*pass)->run(**after);
            const QString name = QFileInfo(path).fileName();
            if (!didChange.isOk()) {
                failures << name + QStringLiteral(": pass error: ") +
                                QString::fromStdString(didChange.status().toString());
                continue;
            }
            if (*didChange != (printModule(**after) != printedBefore)) {
                failures << name + QStringLiteral(": changed flag is wrong");
                continue;
            }
            if (Status v = verifyModule(**after, verifierOptions); !v.isOk()) {
                failures << name + QStringLiteral(": verifier after the pass: ") +
                                QString::fromStdString(v.toString());
                continue;
            }
            if (*didChange) ++changed;
            rewrites += static_cast<int>((*pass)->rewrites().size());
            for (const RewriteEvent& event : (*pass)->rewrites()) ++ruleCounts[event.rule];
            if (entryInputElements(**before) > 1'000'000) {
                ++skippedLarge;
                continue;
            }
            if (hasEmptyInput(**before) || hasSendOrRecv(**before) ||
                costlyToEvaluate(**before)) {
                ++skippedEmpty;
                continue;
            }
            bool ran = false;
            const std::string diff = sameResultsBounded(**before, **after, 1.0, &ran);
            if (!diff.empty())
                failures << name + QStringLiteral(": results differ: ") +
                                QString::fromStdString(diff.substr(0, 300));
            if (ran) ++evaluated;
        }
    }
    qInfo("algebraic-simplifier corpus sweep (%s): %d files, %d parsed+verified and run, %d "
          "changed (%d rewrites), %d evaluated and compared, %d not evaluated (inputs > 1M elements), %d "
          "not evaluated (empty inputs, send/recv, or too costly for the evaluator)",
          qPrintable(folders.join(QStringLiteral(", "))), files, run, changed, rewrites,
          evaluated, skippedLarge, skippedEmpty);
    std::string counts;
    for (const auto& [rule, count] : ruleCounts) counts += rule + "=" + std::to_string(count) + " ";
    qInfo("rules fired: %s", counts.c_str());
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    QVERIFY(run > 0);
}

void TestAlgebraicSimplifier::largestModelTiming() {
    const QString models = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models");
    if (!QDir(models).exists()) QSKIP("corpus not found at " HLOSCOPE_CORPUS_DIR);
    QString largest;
    qint64 largestSize = -1;
    QDirIterator it(models, {QStringLiteral("*.hlo")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        if (QFileInfo(path).size() > largestSize) {
            largestSize = QFileInfo(path).size();
            largest = path;
        }
    }
    QVERIFY(!largest.isEmpty());
    QFile file(largest);
    QVERIFY(file.open(QIODevice::ReadOnly));
    auto module = parseHloModule(file.readAll().toStdString());
    QVERIFY2(module.isOk(), module.status().toString().c_str());
    const int64_t instructions = (*module)->instructionCount();
    auto pass = AlgebraicSimplifierPass::create({});
    QVERIFY(pass.isOk());
    QElapsedTimer timer;
    timer.start();
    auto changed = (*pass)->run(**module);
    const qint64 ms = timer.elapsed();
    QVERIFY2(changed.isOk(), changed.status().toString().c_str());
    std::map<std::string, int> ruleCounts;
    for (const RewriteEvent& event : (*pass)->rewrites()) ++ruleCounts[event.rule];
    std::string counts;
    for (const auto& [rule, count] : ruleCounts) counts += rule + "=" + std::to_string(count) + " ";
    qInfo("rules fired: %s", counts.c_str());
    qInfo("algebraic-simplifier on %s (%lld instructions): %lld ms, %d rewrites",
          qPrintable(QFileInfo(largest).fileName()), static_cast<long long>(instructions),
          static_cast<long long>(ms), static_cast<int>((*pass)->rewrites().size()));
    HloVerifierOptions options;
    options.allowMixedPrecision = true;
    const Status verified = verifyModule(**module, options);
    QVERIFY2(verified.isOk(), verified.toString().c_str());
}

// Every model of the corpus (too large to evaluate) still verifies after the
// pass, and the changed flag matches the printed text.
void TestAlgebraicSimplifier::modelsStayValid() {
    const QString models = QStringLiteral(HLOSCOPE_CORPUS_DIR "/hlo/models");
    if (!QDir(models).exists()) QSKIP("corpus not found at " HLOSCOPE_CORPUS_DIR);
    HloVerifierOptions options;
    options.allowMixedPrecision = true;
    int run = 0, changed = 0, rewrites = 0;
    QStringList failures;
    QDirIterator it(models, {QStringLiteral("*.hlo")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) continue;
        auto module = parseHloModule(file.readAll().toStdString());
        if (!module.isOk() || !verifyModule(**module, options).isOk()) continue;
        ++run;
        const std::string before = printModule(**module);
        auto pass = AlgebraicSimplifierPass::create({});
        QVERIFY(pass.isOk());
        auto didChange = (*pass)->run(**module);
        const QString name = QFileInfo(path).fileName();
        if (!didChange.isOk()) {
            failures << name + QStringLiteral(": ") +
                            QString::fromStdString(didChange.status().toString());
            continue;
        }
        if (*didChange != (printModule(**module) != before))
            failures << name + QStringLiteral(": changed flag is wrong");
        if (Status v = verifyModule(**module, options); !v.isOk())
            failures << name + QStringLiteral(": verifier after the pass: ") +
                            QString::fromStdString(v.toString());
        if (*didChange) ++changed;
        rewrites += static_cast<int>((*pass)->rewrites().size());
    }
    qInfo("algebraic-simplifier on models: %d run, %d changed, %d rewrites", run, changed,
          rewrites);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    QVERIFY(run > 0);
}

QTEST_GUILESS_MAIN(TestAlgebraicSimplifier)
#include "tst_pass_algebraic_simplifier.moc"
