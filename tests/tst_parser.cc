// HLO text parser: every syntax form XLA dumps, attribute routing, and one
// negative test per class of error (each checking line, column and the
// message's key words).
#include <QTest>
#include <ctime>
#include <fstream>
#include <sstream>

#include "core/ir/async_wrapping.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"

using namespace hloscope;

namespace {

std::unique_ptr<HloModule> parseOk(std::string_view text, HloParseOptions options = {}) {
    auto module = parseHloModule(text, options);
    if (!module.isOk()) {
        qWarning("unexpected parse error: %s", module.status().toString().c_str());
        return nullptr;
    }
    return std::move(module).value();
}

HloInstruction* find(const HloModule& module, std::string_view name) {
    for (const auto& computation : module.computations())
        if (HloInstruction* instruction = computation->findInstruction(name)) return instruction;
    return nullptr;
}

// Parses `text`, expects an error at line:column whose message contains all
// `words`.
bool failsAt(std::string_view text, int line, int column,
             std::initializer_list<const char*> words) {
    HloParseOptions options;
    options.fileName = "test.hlo";
    auto module = parseHloModule(text, options);
    if (module.isOk()) {
        qWarning("parsed but expected an error");
        return false;
    }
    const Status& status = module.status();
    bool ok = status.code() == StatusCode::kInvalidArgument && status.location() &&
              status.location()->file == "test.hlo" && status.location()->line == line &&
              status.location()->column == column;
    for (const char* word : words) ok = ok && status.message().find(word) != std::string::npos;
    if (!ok)
        qWarning("got \"%s\", expected %d:%d with the given words", status.toString().c_str(), line,
                 column);
    return ok;
}

// print -> parse -> print is a fixed point and the modules are equal.
bool roundTrips(const HloModule& module) {
    std::string first = printModule(module);
    auto reparsed = parseHloModule(first);
    if (!reparsed.isOk()) {
        qWarning("printed text does not parse: %s\n%s", reparsed.status().toString().c_str(),
                 first.c_str());
        return false;
    }
    std::string why;
    if (!module.structurallyEqual(**reparsed, &why)) {
        qWarning("reparsed module differs: %s", why.c_str());
        return false;
    }
    return printModule(**reparsed) == first;
}

}  // namespace

class TestParser : public QObject {
    Q_OBJECT
private slots:
    // Syntax forms.
    void longFormWithOperandShapes();
    void percentNamesWithoutShapes();
    void shortForm();
    void comments();
    void splitModules();
    void headerlessAndNoEntry();
    void signatures();
    void executionThread();
    void headerAttributes();
    void stackFrameTables();
    void asyncSugar();
    void realAsyncOpcodesStayThemselves();
    void forwardReferences();
    void constantLiterals();
    void layouts();
    void dynamicAndSpecialShapes();
    void bufferShapes();
    void parameterGteIota();
    void nestedInstructions();
    void compactGetTupleElement();
    void shapeInference();
    void inlineComputations();
    void defaultLayoutsOption();
    // Attributes.
    void typedAttributes();
    void dotGatherScatterAttributes();
    void verbatimAttributes();
    void typedNamesOnOtherOpcodesAreVerbatim();
    void standaloneValueParsers();
    // Errors.
    void errorExpectedToken();
    void errorUndefinedOperand();
    void errorUndefinedComputation();
    void errorRecursiveCall();
    void errorDuplicateNames();
    void errorUnknownOpcode();
    void errorMalformedShapes();
    void errorRootAndEntry();
    void errorLexical();
    void errorLiterals();
    void errorOperandShapeMismatch();
    void errorAttributes();
    void errorOperandCounts();
    void errorAsync();
    void errorSignatureMismatch();
    void errorAliasing();
    void errorSplitInSingleModule();
    // Robustness.
    void truncatedInputNeverCrashes();
    void deepNestingIsBounded();
    void largeNumbers();
};

// ---------------------------------------------------------------------------
// Syntax forms

void TestParser::longFormWithOperandShapes() {
    auto module =
        parseOk(R"(HloModule m, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}

ENTRY %main.3 (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  ROOT %add.1 = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b), metadata={op_type="Add" op_name="add"}
}
)");
    QVERIFY(module);
    QCOMPARE(module->name(), std::string("m"));
    HloComputation* entry = module->entryComputation();
    QVERIFY(entry);
    QCOMPARE(entry->name(), std::string("main.3"));
    QCOMPARE(entry->instructionCount(), int64_t(3));
    HloInstruction* add = entry->root();
    QCOMPARE(add->name(), std::string("add.1"));
    QCOMPARE(add->opcode(), HloOpcode::kAdd);
    QCOMPARE(add->operandCount(), int64_t(2));
    QCOMPARE(add->operand(0)->name(), std::string("a"));
    QCOMPARE(add->shape().toString(), std::string("f32[2]{0}"));
    QCOMPARE(add->metadata(), std::string("op_type=\"Add\" op_name=\"add\""));
    QCOMPARE(add->metadataField("op_name"), std::string("add"));
    QCOMPARE(entry->parameterCount(), int64_t(2));
    QVERIFY(module->entryComputationLayout().has_value());
    QCOMPARE(module->entryComputationLayout()->parameters.size(), size_t(2));
    QVERIFY(roundTrips(*module));
}

void TestParser::percentNamesWithoutShapes() {
    auto module = parseOk(R"(HloModule m
ENTRY %e {
  %p = f32[4]{0} parameter(0)
  %n = f32[4]{0} negate(%p)
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%p, %n)
})");
    QVERIFY(module);
    QCOMPARE(module->entryComputation()->root()->operand(1)->name(), std::string("n"));
    QVERIFY(roundTrips(*module));
}

void TestParser::shortForm() {
    auto module = parseOk(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8,4] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[8] reduce(p, c), dimensions={1}, to_apply=add
})");
    QVERIFY(module);
    HloInstruction* r = find(*module, "r");
    QVERIFY(r);
    QCOMPARE(r->toApply()->name(), std::string("add"));
    QCOMPARE(r->dimensions(), std::vector<int64_t>({1}));
    QVERIFY(!r->shape().hasLayout());
    QVERIFY(roundTrips(*module));
}

void TestParser::comments() {
    auto module = parseOk(R"(# RUN: some-tool %s | FileCheck %s
// A line comment.
HloModule m  // after the name
/* a block
   comment */
ENTRY e {
  a = f32[] parameter(0)  // trailing
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  f = f32[] parameter(4)
  g = f32[] parameter(5)
  # CHECK: tuple
  ROOT t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(a, b, c, d, f, /*index=5*/g)
})");
    QVERIFY(module);
    QCOMPARE(module->entryComputation()->root()->operandCount(), int64_t(6));
}

void TestParser::splitModules() {
    const char* text = R"(HloModule first
ENTRY e { ROOT p = f32[] parameter(0) }
// -----
HloModule second
ENTRY e { ROOT p = s32[] parameter(0) }
// -----
)";
    auto modules = parseHloModules(text);
    QVERIFY2(modules.isOk(), modules.status().toString().c_str());
    QCOMPARE(modules->size(), size_t(2));
    QCOMPARE((*modules)[1]->name(), std::string("second"));
    QCOMPARE((*modules)[1]->entryComputation()->root()->shape().elementType(), PrimitiveType::S32);
    // A single module may end with a separator line.
    auto single = parseHloModules("HloModule x\nENTRY e { ROOT p = f32[] parameter(0) }\n");
    QVERIFY(single.isOk());
    QCOMPARE(single->size(), size_t(1));
}

void TestParser::headerlessAndNoEntry() {
    auto module = parseOk(R"(
helper {
  ROOT x = f32[] parameter(0)
}
main {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=helper
})");
    QVERIFY(module);
    QCOMPARE(module->entryComputation()->name(), std::string("main"));
    QCOMPARE(module->name(), std::string("module_main"));
    QCOMPARE(module->computationCount(), int64_t(2));
    // Without ROOT the last instruction is the root.
    auto noRoot = parseOk("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a)\n}");
    QVERIFY(noRoot);
    QCOMPARE(noRoot->entryComputation()->root()->name(), std::string("b"));
}

void TestParser::signatures() {
    auto module = parseOk(R"(HloModule m
%c (x: (f32[], s32[]), y: f32[2]{0}) -> f32[2] {
  %x = (f32[], s32[]) parameter(0)
  ROOT %y = f32[2]{0} parameter(1)
}
ENTRY %e () -> f32[2] {
  ROOT %k = f32[2]{0} constant({1, 2})
})");
    QVERIFY(module);
    QCOMPARE(module->computationCount(), int64_t(2));
    QVERIFY(module->computations()[1]->isEntry());
}

void TestParser::executionThread() {
    auto module = parseOk(R"(HloModule m
%async_computation {
  %p = f32[2] parameter(0)
  ROOT %r = f32[2] custom-call(%p), custom_call_target="foo"
}, execution_thread="parallel_thread"
ENTRY %e {
  %p = f32[2] parameter(0)
  %s = ((f32[2]), f32[2], s32[]) async-start(%p), calls=%async_computation, async_execution_thread="parallel_thread"
  ROOT %d = f32[2] async-done(%s), async_execution_thread="parallel_thread"
})");
    QVERIFY(module);
    QCOMPARE(module->computations()[0]->executionThread(), std::string("parallel_thread"));
    QVERIFY(roundTrips(*module));
}

void TestParser::headerAttributes() {
    auto module = parseOk(R"(HloModule m, is_scheduled=true, replica_count=2, num_partitions=4,
  input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {1}) },
  buffer_donor={ (1, {0}) },
  entry_computation_layout={((f32[2]{0}, f32[3]{0}), f32[4]{0})->(f32[2]{0}, f32[2]{0})},
  frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2]>}},
  allow_spmd_sharding_propagation_to_parameters={true,false},
  allow_spmd_sharding_propagation_to_output={true}

ENTRY e {
  p = (f32[2], f32[3]) parameter(0)
  q = f32[4] parameter(1)
  g = f32[2] get-tuple-element(p), index=0
  ROOT t = (f32[2], f32[2]) tuple(g, g)
})");
    QVERIFY(module);
    QVERIFY(module->isScheduled());
    QCOMPARE(module->replicaCount().value_or(0), int64_t(2));
    QCOMPARE(module->numPartitions().value_or(0), int64_t(4));
    QVERIFY(module->hasInputOutputAliasAttribute());
    QCOMPARE(module->inputOutputAliases().size(), size_t(2));
    QCOMPARE(module->inputOutputAliases()[0].kind, InputOutputAlias::Kind::kMustAlias);
    QCOMPARE(module->inputOutputAliases()[1].parameterIndex, ShapeIndex({1}));
    QCOMPARE(module->bufferDonors().size(), size_t(1));
    QCOMPARE(module->entryComputationLayout()->parameters[0].tupleCount(), int64_t(2));
    const auto& attrs = module->attributes();
    QCOMPARE(attrs.size(), size_t(3));
    QCOMPARE(attrs[0].name, std::string("frontend_attributes"));
    QCOMPARE(attrs[0].value, std::string("{xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=2]>}}"));
    QCOMPARE(attrs[1].value, std::string("{true,false}"));
    QVERIFY(roundTrips(*module));
}

void TestParser::stackFrameTables() {
    auto module = parseOk(R"(HloModule m, entry_computation_layout={()->pred[]}

FileNames
1 "<embedded module>"
2 "a/b.py"

FunctionNames
1 "main"

FileLocations
1 {file_name_id=1 function_name_id=1 line=15 end_line=15 column=2 end_column=31}
2 {file_name_id=2 function_name_id=1 line=35}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}

ENTRY %e () -> pred[] {
  ROOT %c = pred[] constant(true), metadata={op_type="const" stack_frame_id=2}
})");
    QVERIFY(module);
    const StackFrameIndex& frames = module->stackFrames();
    QCOMPARE(frames.fileNames, std::vector<std::string>({"<embedded module>", "a/b.py"}));
    QCOMPARE(frames.functionNames.size(), size_t(1));
    QCOMPARE(frames.fileLocations.size(), size_t(2));
    QCOMPARE(frames.fileLocations[0].endColumn, int64_t(31));
    QCOMPARE(frames.fileLocations[1].line, int64_t(35));
    QCOMPARE(frames.stackFrames[1].fileLocationId, int64_t(2));
    QVERIFY(roundTrips(*module));
}

void TestParser::asyncSugar() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[4,4] parameter(1)
  s = ((f32[4,4], f32[4,4]), f32[4,4], u32[]) dot-start(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  u = ((f32[4,4], f32[4,4]), f32[4,4], u32[]) dot-update(s)
  ROOT d = f32[4,4] dot-done(u)
})");
    QVERIFY(module);
    HloInstruction* s = find(*module, "s");
    QCOMPARE(s->opcode(), HloOpcode::kAsyncStart);
    QVERIFY(s->extra() && s->extra()->asyncWrappedOpcode == HloOpcode::kDot);
    // The start calls a computation around the dot, which holds its attributes.
    const HloComputation* wrapper = s->calledComputation("calls");
    QVERIFY(wrapper);
    QCOMPARE(wrapper->parameterCount(), int64_t(2));
    QCOMPARE(wrapper->instructionCount(), int64_t(3));
    const HloInstruction* dot = wrapper->root();
    QCOMPARE(dot->opcode(), HloOpcode::kDot);
    QCOMPARE(dot->shape().dimensions(), std::vector<int64_t>({4, 4}));
    QVERIFY(dot->dotDimensionNumbers());
    QCOMPARE(dot->dotDimensionNumbers()->lhsContractingDimensions, std::vector<int64_t>({1}));
    QVERIFY(!s->dotDimensionNumbers());
    QCOMPARE(asyncSugarRoot(*s), dot);
    QCOMPARE(module->computationCount(), int64_t(2));
    QVERIFY(module->computations().front().get() == wrapper);
    // The sugar is printed back, without the wrapper.
    const std::string text = printModule(*module);
    QVERIFY2(text.find("dot-start(f32[4,4] %a, f32[4,4] %b), lhs_contracting_dims={1}, "
                       "rhs_contracting_dims={0}") != std::string::npos,
             text.c_str());
    QVERIFY2(text.find(wrapper->name()) == std::string::npos, text.c_str());
    QVERIFY(verifyModule(*module).isOk());
    QCOMPARE(find(*module, "u")->opcode(), HloOpcode::kAsyncUpdate);
    QCOMPARE(find(*module, "d")->opcode(), HloOpcode::kAsyncDone);
    QCOMPARE(*find(*module, "d")->extra()->asyncWrappedOpcode, HloOpcode::kDot);
    QVERIFY(roundTrips(*module));
    // A pass that changes the wrapper (here: the dot's result negated) makes the chain print in
    // full (plain async ops, which no longer name the dot), a fixed point of print -> parse.
    HloComputation* mutableWrapper = module->computations().front().get();
    auto negate = std::make_unique<HloInstruction>(HloOpcode::kNegate, "neg", dot->shape());
    negate->appendOperand(mutableWrapper->root());
    mutableWrapper->setRoot(mutableWrapper->addInstruction(std::move(negate)));
    QVERIFY(!asyncSugarRoot(*s));
    const std::string full = printModule(*module);
    for (const char* part : {"async-start(f32[4,4] %a, f32[4,4] %b), calls=%", "async-update(",
                             "async-done(", "negate("})
        QVERIFY2(full.find(part) != std::string::npos, part);
    QVERIFY2(full.find("dot-done") == std::string::npos, full.c_str());
    auto reparsed = parseHloModule(full);
    QVERIFY2(reparsed.isOk(), reparsed.status().toString().c_str());
    QCOMPARE(printModule(**reparsed), full);
}

void TestParser::realAsyncOpcodesStayThemselves() {
    auto module = parseOk(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  ars = f32[8] all-reduce-start(p), to_apply=add
  ard = f32[8] all-reduce-done(ars)
  cs = (f32[8], f32[8], u32[]) copy-start(ard)
  cd = f32[8] copy-done(cs)
  t = token[] after-all()
  snd = (f32[8], u32[], token[]) send(cd, t), channel_id=1
  sd = token[] send-done(snd), channel_id=1
  ROOT r = (f32[8], token[]) tuple(cd, sd)
})");
    QVERIFY(module);
    QCOMPARE(find(*module, "ars")->opcode(), HloOpcode::kAllReduceStart);
    QCOMPARE(find(*module, "ard")->opcode(), HloOpcode::kAllReduceDone);
    QCOMPARE(find(*module, "cs")->opcode(), HloOpcode::kCopyStart);
    QCOMPARE(find(*module, "sd")->opcode(), HloOpcode::kSendDone);
    QVERIFY(roundTrips(*module));
}

void TestParser::forwardReferences() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  ROOT r = f32[] add(f32[] x, f32[] y), control-predecessors={y}
  y = f32[] call(x), to_apply=later
  x = f32[] parameter(0)
}
later {
  ROOT p = f32[] parameter(0)
})");
    QVERIFY(module);
    HloInstruction* r = find(*module, "r");
    QCOMPARE(r->operand(0)->name(), std::string("x"));
    QCOMPARE(r->controlPredecessors().size(), size_t(1));
    QCOMPARE(find(*module, "y")->toApply()->name(), std::string("later"));
    QVERIFY(module->entryComputation()->isEntry());
}

void TestParser::constantLiterals() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  a = f32[2,3]{1,0} constant({ { 1, 2.5, -3e2 },
                                {nan, -inf, inf} })
  b = (f32[], (s32[2], pred[])) constant((1, ({1, 2}, true)))
  c = f32[1000] constant({...})
  d = c64[2] constant({(1, 2), (3.5, -4)})
  e = bf16[1] constant({nan(0x7f)})
  f = u64[] constant(18446744073709551615)
  g = s4[2] constant({-8, 7})
  h = f32[4] constant(0)
  ROOT t = pred[] constant(false)
})");
    QVERIFY(module);
    QCOMPARE(find(*module, "a")->literalText(),
             std::string("{ { 1, 2.5, -3e2 }, {nan, -inf, inf} }"));
    QCOMPARE(find(*module, "b")->literalText(), std::string("(1, ({1, 2}, true))"));
    QCOMPARE(find(*module, "c")->literalText(), std::string("{...}"));
    QCOMPARE(find(*module, "d")->literalText(), std::string("{(1, 2), (3.5, -4)}"));
    QCOMPARE(find(*module, "h")->literalText(), std::string("0"));
    QVERIFY(roundTrips(*module));
}

void TestParser::layouts() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  a = f32[8,128]{1,0:T(8,128)(2,1)} parameter(0)
  b = f32[8,128]{0,1:T(8,*)E(32)S(1)} parameter(1)
  c = s4[16]{0:L(2)E(4)} parameter(2)
  d = f32[1024]{0:T(1024)S(1)SC(0:512)(0:256,768)M(8)} parameter(3)
  s = f32[10,10]{1,0:D(D,C+~)#(u32)*(u16)} parameter(4)
  ROOT t = (f32[8,128]{1,0:T(8,128)(2,1)}) tuple(a)
})");
    QVERIFY(module);
    const Layout& a = find(*module, "a")->shape().layout();
    QCOMPARE(a.tiles().size(), size_t(2));
    QCOMPARE(a.tiles()[1].dimensions, std::vector<int64_t>({2, 1}));
    const Layout& b = find(*module, "b")->shape().layout();
    QCOMPARE(b.tiles()[0].dimensions[1], Tile::kCombineDimension);
    QCOMPARE(b.elementSizeInBits(), int64_t(32));
    QCOMPARE(b.memorySpace(), int64_t(1));
    QCOMPARE(find(*module, "c")->shape().layout().tailPaddingAlignmentInElements(), int64_t(2));
    const Layout& d = find(*module, "d")->shape().layout();
    QCOMPARE(d.splitConfigs().size(), size_t(2));
    QCOMPARE(d.splitConfigs()[1].splitIndices, std::vector<int64_t>({256, 768}));
    QCOMPARE(d.dynamicShapeMetadataPrefixBytes(), int64_t(8));
    const Layout& s = find(*module, "s")->shape().layout();
    QCOMPARE(s.dimLevelTypes().size(), size_t(2));
    QCOMPARE(s.dimLevelTypes()[1], DimLevelType::kCompressed);
    QCOMPARE(s.dimUnique(), std::vector<bool>({true, false}));
    QCOMPARE(s.dimOrdered(), std::vector<bool>({true, false}));
    QCOMPARE(s.indexPrimitiveType(), PrimitiveType::U32);
    QCOMPARE(s.pointerPrimitiveType(), PrimitiveType::U16);
    QVERIFY(roundTrips(*module));
}

void TestParser::dynamicAndSpecialShapes() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  a = f32[<=4,?,3]{2,1,0} parameter(0)
  t = token[] parameter(1)
  o = opaque[] parameter(2)
  ROOT r = (f32[<=4,?,3]{2,1,0}, token[], opaque[], ()) tuple(a, t, o, tuple())
})");
    QVERIFY(module);
    const Shape& a = find(*module, "a")->shape();
    QVERIFY(a.isDynamicDimension(0));
    QCOMPARE(a.dimensions(0), int64_t(4));
    QVERIFY(a.isUnboundedDimension(1));
    QVERIFY(!a.isDynamicDimension(2));
    QVERIFY(find(*module, "t")->shape().isToken());
    QVERIFY(find(*module, "o")->shape().isOpaque());
    QCOMPARE(find(*module, "r")->shape().tupleShape(3).tupleCount(), int64_t(0));
}

void TestParser::bufferShapes() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  p = f32[4,16] parameter(0)
  ROOT c = b(f32[4, 16]) custom-call(p), custom_call_target="Pin"
})");
    QVERIFY(module);
    const Shape& shape = module->entryComputation()->root()->shape();
    QVERIFY(shape.isBuffer());
    QCOMPARE(shape.tupleShape(0).dimensions(), std::vector<int64_t>({4, 16}));
}

void TestParser::parameterGteIota() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  p = (f32[2], s32[]) parameter(7)
  g = s32[] get-tuple-element(p), index=1
  ROOT i = s32[3,4] iota(), iota_dimension=1
})");
    QVERIFY(module);
    QCOMPARE(find(*module, "p")->parameterNumber(), int64_t(7));
    QCOMPARE(find(*module, "g")->tupleIndex(), int64_t(1));
    QCOMPARE(find(*module, "i")->iotaDimension(), int64_t(1));
    QVERIFY(roundTrips(*module));
}

void TestParser::nestedInstructions() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  add = f32[10] add(f32[10] parameter(0), f32[10] parameter(1))
  ROOT r = f32[10] add(add, f32[10] add(add, add))
})");
    QVERIFY(module);
    const HloComputation* entry = module->entryComputation();
    QCOMPARE(entry->instructionCount(), int64_t(5));
    QCOMPARE(entry->instructions()[0]->name(), std::string("parameter.anon"));
    QCOMPARE(entry->instructions()[1]->name(), std::string("parameter.anon.1"));
    QCOMPARE(entry->instructions()[3]->name(), std::string("add.anon"));
    QCOMPARE(entry->root()->operand(1)->name(), std::string("add.anon"));
    QCOMPARE(entry->parameterCount(), int64_t(2));
    QVERIFY(roundTrips(*module));
}

void TestParser::compactGetTupleElement() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  p0 = (f32[10], (f32[20], f32[30])) parameter(0)
  p0_1 = f32[5] parameter(1)
  x = f32[20] negate(f32[20] %p0#1#0)
  ROOT r = f32[20] add(x, %p0#1#0)
})");
    QVERIFY(module);
    const HloComputation* entry = module->entryComputation();
    // One get-tuple-element per (tuple, index), before its first user; the
    // name p0_1 is taken, so the first gets p0_1.1.
    QCOMPARE(entry->instructionCount(), int64_t(6));
    HloInstruction* inner = find(*module, "p0_1.1_0");
    QVERIFY(inner);
    QCOMPARE(inner->opcode(), HloOpcode::kGetTupleElement);
    QCOMPARE(inner->tupleIndex(), int64_t(0));
    QCOMPARE(inner->shape().toString(), std::string("f32[20]"));
    QCOMPARE(inner->operand(0)->name(), std::string("p0_1.1"));
    QCOMPARE(find(*module, "x")->operand(0), inner);
    QCOMPARE(find(*module, "r")->operand(1), inner);
    QVERIFY(roundTrips(*module));
}

void TestParser::shapeInference() {
    auto module = parseOk(R"(HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = add(a, b)
}
ENTRY e {
  p = f32[3,4] parameter(0)
  z = f32[] constant(0)
  t = transpose(p), dimensions={1,0}
  r = reduce(t, z), dimensions={0}, to_apply=sum
  ROOT out = tuple(r, negate(r))
})");
    QVERIFY(module);
    QCOMPARE(find(*module, "t")->shape().toString(), std::string("f32[4,3]"));
    QCOMPARE(find(*module, "r")->shape().toString(), std::string("f32[3]"));
    QCOMPARE(find(*module, "out")->shape().toString(), std::string("(f32[3], f32[3])"));
    QVERIFY(roundTrips(*module));
    // scan: carries keep their shape, the other results get the scanned dimension.
    auto scan = parseOk(
        "step {\n  x = f32[] parameter(0)\n  c = f32[] parameter(1)\n  ROOT t = "
        "(f32[], f32[]) tuple(x, c)\n}\nENTRY e {\n  ROOT s = scan(f32[4] "
        "parameter(0), f32[] parameter(1)), dimensions={0}, num_carries=1, "
        "to_apply=step\n}");
    QVERIFY(scan);
    QCOMPARE(scan->entryComputation()->root()->shape().toString(), std::string("(f32[4], f32[])"));
}

void TestParser::inlineComputations() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] call(a, b), to_apply={
    x = f32[] parameter(0)
    y = f32[] parameter(1)
    ROOT s = f32[] add(x, y)
  }
})");
    QVERIFY(module);
    QCOMPARE(module->computationCount(), int64_t(2));
    HloComputation* called = module->entryComputation()->root()->toApply();
    QVERIFY(called);
    QCOMPARE(called->name(), std::string("_"));
    QCOMPARE(module->computations()[0].get(), called);
    QVERIFY(roundTrips(*module));
}

void TestParser::defaultLayoutsOption() {
    HloParseOptions options;
    options.setDefaultLayouts = true;
    auto module = parseOk("ENTRY e {\n  p = (f32[2,3], s32[4]{0}) parameter(0)\n}", options);
    QVERIFY(module);
    QCOMPARE(module->entryComputation()->root()->shape().toString(),
             std::string("(f32[2,3]{1,0}, s32[4]{0})"));
}

// ---------------------------------------------------------------------------
// Attributes

void TestParser::typedAttributes() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  p = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  c = f32[1,4,4,16] convolution(p, k), window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=1x1 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1
  s = f32[1,4,4,3] slice(p), slice={[0:1], [0:8:2], [0:4], [0:3]}
  pd = f32[1,9,10,3] pad(p, f32[] constant(0)), padding=0_0x0_1x1_0_0x0_0
  cmp = pred[1,8,8,3] compare(p, p), direction=GE, type=TOTALORDER
  rp = f32[1,8,8,3] reduce-precision(p), exponent_bits=5, mantissa_bits=10
  cc = f32[2] custom-call(p), custom_call_target="my\"target"
  dl = f32[2] custom-call(p), dim_labels=?b01f_0?1io->b01?f, custom_call_target="labels"
  bn = (f32[1,8,8,3], f32[3], f32[3]) batch-norm-training(p, f32[3] constant({1,1,1}), f32[3] constant({0,0,0})), epsilon=0.001, feature_index=3
  srt = f32[8] sort(f32[8] parameter(2)), dimensions={0}, is_stable=true, to_apply=cmpf
  tk = (f32[2], s32[2]) topk(f32[8] parameter(3)), k=2, largest=false
  ff = c64[8] fft(c64[8] parameter(4)), fft_type=FFT, fft_length={8}
  rn = f32[4] rng(f32[] constant(0), f32[] constant(1)), distribution=rng_uniform
  ds = f32[1,2,2,3] dynamic-slice(p, s32[] constant(0), s32[] constant(0), s32[] constant(0), s32[] constant(0)), dynamic_slice_sizes={1,2,2,3}
  ROOT w = f32[1,4,4,3] reduce-window(p, f32[] constant(0)), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=sumf
}
sumf {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
cmpf {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
})");
    QVERIFY(module);
    const HloInstruction* c = find(*module, "c");
    const Window* window = c->window();
    QVERIFY(window);
    QCOMPARE(window->dimensions.size(), size_t(2));
    QCOMPARE(window->dimensions[0].stride, int64_t(2));
    QCOMPARE(window->dimensions[1].paddingHigh, int64_t(1));
    QCOMPARE(window->dimensions[1].windowDilation, int64_t(2));
    QVERIFY(window->dimensions[1].windowReversal);
    QCOMPARE(c->convolutionDimensionNumbers()->toString(), std::string("b01f_01io->b01f"));
    QCOMPARE(c->convolutionDimensionNumbers()->kernelOutputFeatureDimension, int64_t(3));
    // '?' marks a dimension with no role (custom calls): it keeps its place when printed.
    QCOMPARE(find(*module, "dl")->convolutionDimensionNumbers()->toString(),
             std::string("?b01f_0?1io->b01?f"));
    QCOMPARE(find(*module, "s")->slice()[1].stride, int64_t(2));
    QCOMPARE(find(*module, "pd")->padding()[2].interior, int64_t(0));
    QCOMPARE(find(*module, "pd")->padding()[2].edgeLow, int64_t(1));
    const HloInstruction* cmp = find(*module, "cmp");
    QCOMPARE(*cmp->comparisonDirection(), ComparisonDirection::kGe);
    QCOMPARE(cmp->extra()->comparisonType, ComparisonType::kTotalOrder);
    QCOMPARE(*find(*module, "rp")->extra()->mantissaBits, int64_t(10));
    QCOMPARE(find(*module, "cc")->customCallTarget(), std::string_view("my\"target"));
    const HloInstruction* bn = find(*module, "bn");
    QCOMPARE(bn->extra()->epsilonText, std::string("0.001"));
    QCOMPARE(*bn->extra()->featureIndex, int64_t(3));
    QCOMPARE(*find(*module, "srt")->extra()->isStable, true);
    QCOMPARE(*find(*module, "tk")->extra()->topK, int64_t(2));
    QCOMPARE(*find(*module, "tk")->extra()->largest, false);
    QCOMPARE(*find(*module, "ff")->extra()->fftType, std::string("FFT"));
    QCOMPARE(find(*module, "ff")->extra()->fftLength, std::vector<int64_t>({8}));
    QCOMPARE(*find(*module, "rn")->extra()->distribution, std::string("rng_uniform"));
    QCOMPARE(find(*module, "ds")->dynamicSliceSizes(), std::vector<int64_t>({1, 2, 2, 3}));
    QCOMPARE(find(*module, "w")->toApply()->name(), std::string("sumf"));
    QVERIFY(roundTrips(*module));
}

void TestParser::dotGatherScatterAttributes() {
    auto module = parseOk(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,3,4] parameter(0)
  y = f32[2,4,5] parameter(1)
  d = f32[2,3,5] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, operand_precision={highest,default}
  i = s32[2,1] parameter(2)
  g = f32[2,3,4] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3,4}, indices_are_sorted=true
  u = f32[2,3,4] parameter(3)
  ROOT s = f32[2,3,4] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add
})");
    QVERIFY(module);
    const DotDimensionNumbers* dot = find(*module, "d")->dotDimensionNumbers();
    QVERIFY(dot);
    QCOMPARE(dot->lhsBatchDimensions, std::vector<int64_t>({0}));
    QCOMPARE(dot->rhsContractingDimensions, std::vector<int64_t>({1}));
    QCOMPARE(*find(*module, "d")->attribute("operand_precision"),
             std::string_view("{highest,default}"));
    const HloInstruction* g = find(*module, "g");
    QCOMPARE(g->gatherDimensionNumbers()->indexVectorDim, int64_t(1));
    QCOMPARE(g->gatherDimensionNumbers()->offsetDims, std::vector<int64_t>({1, 2}));
    QCOMPARE(g->extra()->gatherSliceSizes, std::vector<int64_t>({1, 3, 4}));
    QVERIFY(g->extra()->indicesAreSorted);
    const HloInstruction* s = find(*module, "s");
    QCOMPARE(s->scatterDimensionNumbers()->indexVectorDim, int64_t(1));
    QCOMPARE(s->scatterDimensionNumbers()->scatterDimsToOperandDims, std::vector<int64_t>({0}));
    QVERIFY(s->extra()->uniqueIndices);
    QVERIFY(!s->gatherDimensionNumbers());
    QVERIFY(roundTrips(*module));
}

void TestParser::verbatimAttributes() {
    auto module = parseOk(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  p = f32[8]   parameter(0),   sharding={devices=[2,1]0,1}
  ar = f32[8] all-reduce(p), channel_id=3, replica_groups={ {0,1},
                                                          {2,3} }, use_global_device_ids=true, to_apply=add,
       backend_config={"key": "a  b", "n": {"x": [1, 2]}}, frontend_attributes={_xla="x, y"}
  ROOT ag = f32[16] all-gather(ar), replica_groups=mesh['x'=2,'y'=2] {'x'}, dimensions={0}
})");
    QVERIFY(module);
    const HloInstruction* p = find(*module, "p");
    QCOMPARE(p->attributes().size(), size_t(1));
    QCOMPARE(*p->attribute("sharding"), std::string_view("{devices=[2,1]0,1}"));
    const HloInstruction* ar = find(*module, "ar");
    const auto& attrs = ar->attributes();
    QCOMPARE(attrs.size(), size_t(5));
    QCOMPARE(attrs[0].name, std::string("channel_id"));
    QCOMPARE(attrs[1].value, std::string("{ {0,1}, {2,3} }"));
    QCOMPARE(attrs[2].value, std::string("true"));
    QCOMPARE(attrs[3].value, std::string("{\"key\": \"a  b\", \"n\": {\"x\": [1, 2]}}"));
    QCOMPARE(attrs[4].value, std::string("{_xla=\"x, y\"}"));
    QCOMPARE(*find(*module, "ag")->attribute("replica_groups"),
             std::string_view("mesh['x'=2,'y'=2] {'x'}"));
    QVERIFY(roundTrips(*module));
}

void TestParser::typedNamesOnOtherOpcodesAreVerbatim() {
    auto module = parseOk(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  c = f32[8] custom-call(p), custom_call_target="x", type=FOO, kind=bar, select=1, scatter=2, index=3
  ROOT n = f32[8] negate(c), dimensions={0}
})");
    QVERIFY(module);
    const HloInstruction* c = find(*module, "c");
    QCOMPARE(c->attributes().size(), size_t(5));
    QCOMPARE(*c->attribute("type"), std::string_view("FOO"));
    QCOMPARE(*c->attribute("kind"), std::string_view("bar"));
    QCOMPARE(*c->attribute("select"), std::string_view("1"));
    QCOMPARE(c->fusionKind(), std::string_view());
    const HloInstruction* n = find(*module, "n");
    QVERIFY(!n->hasDimensions());
    QCOMPARE(*n->attribute("dimensions"), std::string_view("{0}"));
    QVERIFY(roundTrips(*module));
}

void TestParser::standaloneValueParsers() {
    auto shape = parseShape("(f32[2,3]{1,0}, /*index=1*/ s32[<=4]{0})");
    QVERIFY2(shape.isOk(), shape.status().toString().c_str());
    QCOMPARE(shape->toString(), std::string("(f32[2,3]{1,0}, s32[<=4]{0})"));
    auto window = parseWindow("size=3x3 stride=2x2 pad=0_1x0_1");
    QVERIFY(window.isOk());
    QCOMPARE(window->dimensions.size(), size_t(2));
    QCOMPARE(window->dimensions[1].paddingHigh, int64_t(1));
    auto braced = parseWindow("{size=2}");
    QVERIFY(braced.isOk());
    auto dnums = parseConvolutionDimensionNumbers("0bf_0oi->0bf");
    QVERIFY(dnums.isOk());
    QCOMPARE(dnums->inputBatchDimension, int64_t(1));
    QCOMPARE(dnums->kernelInputFeatureDimension, int64_t(2));
    auto padding = parsePaddingConfig("0_0_0x3_-1_1");
    QVERIFY(padding.isOk());
    QCOMPARE((*padding)[1].edgeHigh, int64_t(-1));
    QCOMPARE((*padding)[1].interior, int64_t(1));
    QVERIFY(!parsePaddingConfig("1_2_3_4").isOk());
    QVERIFY(!parseWindow("size=2 stride=1x1").isOk());
    QVERIFY(!parseConvolutionDimensionNumbers("bf01_0io->0bf").isOk());
    QVERIFY(!parseShape("f32[2] extra").isOk());
}

// ---------------------------------------------------------------------------
// Errors

void TestParser::errorExpectedToken() {
    QVERIFY(failsAt("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p p)\n}", 3, 24,
                    {"expected ')' after operands", "got 'p'"}));
    QVERIFY(failsAt("ENTRY e {\n  p f32[] parameter(0)\n}", 2, 5, {"expected '='", "'f32'"}));
    QVERIFY(failsAt("HloModule m\nENTRY e {\n  p = f32[] parameter(0)", 3, 25,
                    {"expected", "end of input"}));
}

void TestParser::errorUndefinedOperand() {
    QVERIFY(failsAt("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p, q)\n}", 3, 25,
                    {"instruction does not exist: q"}));
    // Names are scoped to their computation.
    QVERIFY(
        failsAt("c {\n  ROOT x = f32[] parameter(0)\n}\nENTRY e {\n  ROOT y = f32[] negate(x)\n}",
                5, 25, {"instruction does not exist: x"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT p = f32[] parameter(0), control-predecessors={nope}\n}", 2,
                    54, {"'nope' is not defined"}));
}

void TestParser::errorUndefinedComputation() {
    QVERIFY(failsAt(
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=missing\n}", 3, 36,
        {"computation does not exist: missing"}));
}

void TestParser::errorRecursiveCall() {
    // A computation that calls itself, directly or through another, is refused at the
    // reference that closes the cycle.
    QVERIFY(failsAt("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=e\n}", 3,
                    36, {"computation e is called recursively (e -> e)"}));
    QVERIFY(failsAt("a {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=b\n}\n"
                    "b {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=a\n}\n"
                    "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=a\n}",
                    7, 36, {"computation a is called recursively (a -> b -> a)"}));
    // A computation called twice, and a chain through several, is no cycle.
    QVERIFY(parseHloModule("a {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n"
                           "b {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=a\n}\n"
                           "ENTRY e {\n  p = f32[] parameter(0)\n  x = f32[] call(p), to_apply=a\n"
                           "  ROOT y = f32[] call(x), to_apply=b\n}")
                .isOk());
}

void TestParser::errorDuplicateNames() {
    QVERIFY(failsAt("ENTRY e {\n  p = f32[] parameter(0)\n  p = f32[] parameter(1)\n}", 3, 3,
                    {"instruction already exists: p"}));
    QVERIFY(failsAt("c {\n  ROOT p = f32[] parameter(0)\n}\nc {\n  ROOT p = f32[] parameter(0)\n}",
                    4, 1, {"computation already exists: c"}));
    QVERIFY(failsAt("ENTRY e {\n  p = f32[] parameter(0)\n  q = f32[] parameter(0)\n}", 3, 23,
                    {"Duplicate parameter number 0"}));
    QVERIFY(
        failsAt("ENTRY e {\n  ROOT p = f32[2] parameter(0), sharding={replicated}, sharding={}\n}",
                2, 56, {"attribute sharding already exists"}));
}

void TestParser::errorUnknownOpcode() {
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = f32[] frobnicate()\n}", 2, 18,
                    {"Unknown opcode", "frobnicate"}));
    // Real async opcodes have no sugar.
    QVERIFY(failsAt("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] copy-update(p)\n}", 3,
                    18, {"Unknown opcode: copy-update"}));
}

void TestParser::errorMalformedShapes() {
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = g32[] parameter(0)\n}", 2, 12,
                    {"unknown primitive type 'g32'"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = f32[2,x] parameter(0)\n}", 2, 18,
                    {"expected a dimension size"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = f32[2,3]{1,0:T(8,} parameter(0)\n}", 2, 29,
                    {"expected an integer in a tile"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = f32[2,3]{0} parameter(0)\n}", 2, 20,
                    {"minor to major size is 1"}));
    QVERIFY(
        failsAt("ENTRY e {\n  ROOT x = f32[10]{0:D(X)} parameter(0)\n}", 2, 24, {"DimLevelType"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = f32[-1] parameter(0)\n}", 2, 16,
                    {"invalid dimension size -1"}));
}

void TestParser::errorRootAndEntry() {
    QVERIFY(failsAt("ENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}", 3,
                    3, {"only one ROOT"}));
    QVERIFY(
        failsAt("ENTRY a {\n  ROOT x = f32[] parameter(0)\n}\nENTRY b {\n  ROOT x = f32[] "
                "parameter(0)\n}",
                4, 1, {"only one ENTRY"}));
    QVERIFY(failsAt("ENTRY e {\n}", 2, 1, {"no instructions"}));
    QVERIFY(failsAt("HloModule m\n", 2, 1, {"computation name", "end of input"}));
}

void TestParser::errorLexical() {
    QVERIFY(failsAt("ENTRY e {\n/* never closed\n  ROOT x = f32[] parameter(0)\n}", 2, 1,
                    {"unterminated /* comment"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = f32[] custom-call(), custom_call_target=\"abc\n}", 2, 52,
                    {"unterminated string"}));
    QVERIFY(failsAt("HloModule a$b", 1, 12, {"invalid character '$'"}));
}

void TestParser::errorLiterals() {
    QVERIFY(failsAt("ENTRY e {\n  ROOT c = f32[2,3] constant({1, 2, 3, 4, 5, 6})\n}", 2, 31,
                    {"expects nested array in rank 2, but sees 1"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT c = f32[2] constant({1,{2}})\n}", 2, 31,
                    {"expects nested array in rank 1, but sees larger"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT c = u4[] constant(16)\n}", 2, 26, {"out of range", "U4"}));
    QVERIFY(
        failsAt("ENTRY e {\n  ROOT c = f16[] constant(-65520)\n}", 2, 27, {"out of range", "F16"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT c = f64[] constant(1.8e308)\n}", 2, 27,
                    {"out of range for double"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT c = bf16[1] constant({nan(0x3ff)})\n}", 2, 30,
                    {"NaN payload 0x3ff"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT c = s32[] constant(1.5)\n}", 2, 27,
                    {"expects integer for primitive type: S32"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT c = f32[2] constant({1, 2)\n}", 2, 33,
                    {"unexpected token", "')'"}));
}

void TestParser::errorOperandShapeMismatch() {
    QVERIFY(
        failsAt("ENTRY e {\n  p = f32[2,2] parameter(0)\n  ROOT a = f32[2,2] negate(f32[2,5] p)\n}",
                3, 28, {"declared operand shape f32[2,5]{1,0}", "f32[2,2]{1,0}"}));
    // Layouts and dynamic markers are ignored.
    QVERIFY(
        parseOk("ENTRY e {\n  p = f32[2,2]{0,1} parameter(0)\n  ROOT a = f32[2,2] "
                "negate(f32[<=2,2]{1,0} p)\n}"));
}

void TestParser::errorAttributes() {
    // A called computation on an opcode that takes none.
    QVERIFY(
        failsAt("c {\n  ROOT x = f32[] parameter(0)\n}\nENTRY e {\n  ROOT n = f32[] "
                "negate(f32[] parameter(0)), to_apply=c\n}",
                5, 46, {"unexpected attribute \"to_apply\""}));
    QVERIFY(failsAt("ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT t = f32[2] transpose(p)\n}", 3,
                    31, {"attribute dimensions is expected"}));
    QVERIFY(
        failsAt("ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = pred[2] compare(p, p), "
                "direction=XX\n}",
                3, 45, {"expects comparison direction but sees: XX"}));
    QVERIFY(
        failsAt("ENTRY e {\n  p = f32[1,2,1] parameter(0)\n  ROOT c = f32[1,2,1] "
                "convolution(p, p), window={size=1 pad=1_1_0}, dim_labels=b0f_0io->b0f\n}",
                3, 61, {"padding_low and padding_high"}));
    QVERIFY(
        failsAt("ENTRY e {\n  p = f32[1,2,1] parameter(0)\n  ROOT c = f32[1,2,1] "
                "convolution(p, p), dim_labels=b0f_0io->b0fb\n}",
                3, 53, {"unique output dimension numbers"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name=\"x}\n}", 2, 50,
                    {"unterminated string"}));
    QVERIFY(
        failsAt("ENTRY e {\n  ROOT x = f32[] exponential(f32[] parameter(0)), "
                "result_accuracy={mode=high}\n}",
                2, 73, {"ResultAccuracy type but sees: high"}));
    QVERIFY(
        failsAt("ENTRY e {\n  ROOT x = f32[] negate(f32[] parameter(0)), "
                "result_accuracy={mode=highest}\n}",
                2, 46, {"unexpected attribute \"result_accuracy\""}));
    QVERIFY(
        failsAt("ENTRY e {\n  ROOT x = f32[] custom-call(), custom_call_target=\"a\", "
                "api_version=API_VERSION_NOPE\n}",
                2, 69, {"Unknown API version"}));
}

void TestParser::errorOperandCounts() {
    QVERIFY(
        failsAt("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = pred[] compare(p), "
                "direction=EQ\n}",
                3, 26, {"expects 2 operands, but has 1 operands"}));
    QVERIFY(failsAt("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT t = (f32[], f32[]) tuple(p)\n}", 3,
                    32, {"expects 2 operands"}));
}

void TestParser::errorAsync() {
    QVERIFY(
        failsAt("ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT d = f32[2] custom-call-done(p)\n}", 3,
                19, {"expect an asynchronous operation"}));
    QVERIFY(
        failsAt("ENTRY e {\n  p = f32[2] parameter(0)\n  s = (f32[2], f32[2]) "
                "custom-call-start(p), custom_call_target=\"x\"\n  ROOT d = f32[2] "
                "custom-call-done(s)\n}",
                3, 24, {"((operand0_shape"}));
    QVERIFY(
        failsAt("ENTRY e {\n  p = f32[2] parameter(0)\n  s = ((f32[2]), f32[2], s32[]) "
                "custom-call-start(p), custom_call_target=\"x\"\n  ROOT d = f32[2] add-done(s)\n}",
                4, 19, {"Expect async wrapped opcode to be custom-call, but got add"}));
}

void TestParser::errorSignatureMismatch() {
    QVERIFY(failsAt("ENTRY %c () -> f32[1] {\n  ROOT x = f32[1,2] parameter(0)\n}", 1, 16,
                    {"Shape of computation c, f32[1]", "root instruction x, f32[1,2]"}));
}

void TestParser::errorAliasing() {
    QVERIFY(
        failsAt("HloModule m, input_output_alias={ {0 : (0, {0}) }\nENTRY e {\n  ROOT p = "
                "f32[] parameter(0)\n}",
                1, 38, {"Expects '}' at the end of ShapeIndex"}));
    QVERIFY(
        failsAt("HloModule m, buffer_donor={ (zero, {0}) }\nENTRY e {\n  ROOT p = f32[] "
                "parameter(0)\n}",
                1, 30, {"expects integer"}));
}

void TestParser::errorSplitInSingleModule() {
    QVERIFY(
        failsAt("HloModule a\nENTRY e { ROOT p = f32[] parameter(0) }\n// -----\nHloModule "
                "b\nENTRY e { ROOT p = f32[] parameter(0) }\n",
                3, 1, {"parseHloModules"}));
}

// ---------------------------------------------------------------------------
// Robustness

void TestParser::truncatedInputNeverCrashes() {
    const std::string text =
        R"(HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, input_output_alias={ {}: (0, {}) }

FileNames
1 "f.py"
FunctionNames
1 "g"
FileLocations
1 {file_name_id=1 function_name_id=1 line=1 end_line=1 column=1 end_column=2}
StackFrames
1 {file_location_id=1 parent_frame_id=0}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY %e (p: f32[2]) -> f32[2] {
  %p = f32[2]{0:T(2)S(1)} parameter(0), sharding={devices=[2]0,1}, metadata={op_name="a\"b"}
  %c = (f32[2], s32[]) constant(({1, nan}, -3))
  %r = f32[2] all-reduce(f32[2] %p), replica_groups={{0,1}}, to_apply=add, backend_config={"a": [1, {"b": 2}]}
  %w = f32[2] reduce-window(%r, f32[] constant(0)), window={size=2 pad=0_1}, to_apply=add
  ROOT %t = f32[2] add(%w, %p#0), control-predecessors={%r} /* done */
}
)";
    for (size_t cut = 0; cut < text.size(); ++cut) {
        auto module = parseHloModule(std::string_view(text).substr(0, cut));
        if (!module.isOk()) QVERIFY(module.status().location().has_value());
    }
}

void TestParser::deepNestingIsBounded() {
    std::string shape;
    for (int i = 0; i < 100000; ++i) shape += '(';
    auto parsed = parseShape(shape);
    QVERIFY(!parsed.isOk());
    QVERIFY(parsed.status().message().find("depth") != std::string::npos);
    std::string nested = "ENTRY e {\n  ROOT x = f32[] ";
    for (int i = 0; i < 5000; ++i) nested += "negate(";
    nested += "f32[] parameter(0)";
    for (int i = 0; i < 5000; ++i) nested += ')';
    nested += "\n}";
    auto module = parseHloModule(nested);
    QVERIFY(!module.isOk());
    QVERIFY(module.status().message().find("depth") != std::string::npos);
    std::string literal = "ENTRY e {\n  ROOT c = f32[2] constant(";
    for (int i = 0; i < 100000; ++i) literal += '{';
    QVERIFY(!parseHloModule(literal).isOk());
    std::string value = "ENTRY e {\n  ROOT p = f32[] parameter(0), foo=";
    for (int i = 0; i < 100000; ++i) value += '[';
    QVERIFY(!parseHloModule(value).isOk());
}

void TestParser::largeNumbers() {
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = f32[99999999999999999999] parameter(0)\n}", 2, 16,
                    {"out of range"}));
    QVERIFY(failsAt("ENTRY e {\n  ROOT x = f32[] parameter(99999999999999999999)\n}", 2, 28,
                    {"out of range"}));
    QVERIFY(
        failsAt("ENTRY e {\n  p = (f32[]) parameter(0)\n  ROOT x = f32[] "
                "get-tuple-element(p), index=9223372036854775808\n}",
                3, 46, {"out of range"}));
    // A huge parameter number is accepted without a huge allocation.
    QVERIFY(parseOk("ENTRY e {\n  ROOT x = f32[] parameter(9223372036854775807)\n}"));
}

// ---------------------------------------------------------------------------
// Throughput


QTEST_GUILESS_MAIN(TestParser)
#include "tst_parser.moc"
