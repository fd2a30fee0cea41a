// Internal declarations shared by the HLO parser's translation units:
//   hlo_parser.cc             module structure, instructions, operands, public API
//   hlo_parser_header.cc      the module header and stack-frame tables
//   hlo_parser_attributes.cc  instruction attributes (typed vs verbatim routing)
//   hlo_parser_attribute_table.cc  which attributes are typed, for which opcodes
//   hlo_parser_values.cc      value grammars (window, padding, dim labels, verbatim, ...)
//   hlo_parser_shapes.cc      shapes and layouts
//   hlo_parser_literal.cc     constant literals
//   hlo_parser_resolve.cc     name resolution, shape inference, late checks
// Not part of the public API: include core/text/hlo_parser.h instead.
//
// Parsing is one pass over the text. Instructions are created as they are
// read; operand names, control predecessors and called computations are
// resolved afterwards (at the end of each computation and of the module),
// so that operands and computations may be referenced before they are
// defined. Instructions written without a shape get theirs from shape
// inference once everything is resolved, and checks that need operand shapes
// run last. Every error carries the byte offset it points at; offsets become
// file:line:col only when an error is reported.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/text/hlo_lexer.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "core/support/status.h"

namespace hloscope::hlo_parser_internal {

inline constexpr uint32_t kNone = UINT32_MAX;
inline constexpr size_t kNoOffset = std::string_view::npos;
inline constexpr int kMaxDepth = 512;

// An operand as written: `f32[2]{0} %a`, `%a`, `a`, `%t#1#0`, or a nested
// instruction `f32[2] negate(%a)`.
struct OperandRef {
    std::string_view name;                   // empty for a nested instruction
    size_t offset = 0;                       // where the operand's text starts
    size_t declaredShapeOffset = kNoOffset;  // declared shape still to be checked
    uint32_t target = kNone;                 // pending index once known (or the nested instruction)
    uint32_t gteBegin = 0;                   // compact get-tuple-element path `#i#j`
    uint32_t gteCount = 0;                   //   (indices into ComputationState::gteIndices)
};

struct NameRef {
    std::string_view name;
    size_t offset = 0;
};

struct PendingInstruction {
    std::unique_ptr<HloInstruction> instruction;
    size_t nameOffset = 0;
    size_t opcodeOffset = 0;
    uint32_t operandBegin = 0;
    uint32_t operandEnd = 0;
    uint32_t controlBegin = 0;
    uint32_t controlEnd = 0;
    bool anonymous = false;  // a nested instruction (named `<opcode>.anon` later)
    bool generated = false;  // a get-tuple-element made for `%t#i`
};

// Open-addressing hash map from instruction name to pending index. Keys are
// views into the text (or into instruction names, which do not move).
// clear() is O(1) (a generation stamp) so one table serves many computations.
class NameTable {
public:
    // Index stored for `name`, or kNone.
    uint32_t find(std::string_view name) const;
    bool contains(std::string_view name) const { return find(name) != kNone; }
    // Inserts; returns false (and leaves the table unchanged) when present.
    bool insert(std::string_view name, uint32_t value);
    void clear();

private:
    struct Slot {
        const char* data = nullptr;
        uint32_t size = 0;
        uint32_t hash = 0;
        uint32_t value = 0;
        uint32_t generation = 0;
    };
    void grow();
    std::vector<Slot> m_slots;
    size_t m_count = 0;
    uint32_t m_generation = 1;
};

// Per-computation state while its body is parsed (pooled by nesting depth).
struct ComputationState {
    std::vector<PendingInstruction> pending;
    std::vector<OperandRef> operands;
    std::vector<NameRef> controls;
    std::vector<int64_t> gteIndices;
    NameTable names;
    std::vector<uint8_t> parameterSeen;           // by parameter number (small numbers)
    std::unordered_set<int64_t> largeParameters;  // numbers >= kMaxParameterTable
    uint32_t root = kNone;

    static constexpr int64_t kMaxParameterTable = 1 << 16;
    void clear() {
        pending.clear();
        operands.clear();
        controls.clear();
        gteIndices.clear();
        names.clear();
        parameterSeen.clear();
        largeParameters.clear();
        root = kNone;
    }
    // Records parameter number `n`; false when it was seen before.
    bool addParameter(int64_t n) {
        if (n >= kMaxParameterTable) return largeParameters.insert(n).second;
        auto index = static_cast<size_t>(n);
        if (parameterSeen.size() <= index) parameterSeen.resize(index + 1, 0);
        if (parameterSeen[index]) return false;
        parameterSeen[index] = 1;
        return true;
    }
};

// A reference to a computation by name in a called-computation attribute,
// resolved when the whole module has been read.
struct CalledRef {
    HloInstruction* instruction = nullptr;
    uint32_t attribute = 0;  // index into instruction->calledComputationAttributes()
    uint32_t slot = 0;
    std::string_view name;
    size_t offset = 0;
};

// An instruction or operand check that needs information known only after
// resolution and shape inference.
struct Site {
    HloInstruction* instruction = nullptr;
    size_t offset = 0;
    uint32_t operand = 0;  // for deferred operand shape checks
};

struct SignatureCheck {
    HloComputation* computation = nullptr;
    Shape shape;
    size_t offset = 0;
};

// A vector of integers with inline storage for the common small sizes.
class SmallInts {
public:
    static constexpr size_t kInline = 12;
    void append(int64_t value) {
        if (m_size < kInline) {
            m_inline[m_size++] = value;
            return;
        }
        if (m_size == kInline) m_heap.assign(m_inline, m_inline + kInline);
        m_heap.push_back(value);
        ++m_size;
    }
    size_t size() const { return m_size; }
    const int64_t* begin() const { return m_size <= kInline ? m_inline : m_heap.data(); }
    const int64_t* end() const { return begin() + m_size; }

private:
    int64_t m_inline[kInline];
    size_t m_size = 0;
    std::vector<int64_t> m_heap;
};

// A shape as written for an operand, parsed without allocation when it is a
// plain array shape of small rank (layout checked for syntax and dropped).
struct ShapeLite {
    static constexpr int kMaxRank = 16;
    PrimitiveType elementType = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    int rank = 0;
    int64_t dimensions[kMaxRank] = {};
    bool full = false;  // `shape` holds the parsed shape (tuples, buffers, large ranks)
    Shape shape;
};

// Effective opcode information of an instruction: for the async sugar
// `dot-start` the opcode is kAsyncStart and `wrapped` is kDot.
struct OpcodeInfo {
    HloOpcode opcode = HloOpcode::kAdd;
    std::optional<HloOpcode> wrapped;
    // The opcode whose attributes the instruction takes: the wrapped opcode
    // for `X-start`, none (nullopt) for `X-update`/`X-done` sugar.
    std::optional<HloOpcode> attributeOpcode;
};

// ---- the attribute table (hlo_parser_attribute_table.cc)
// The attributes the parser stores in fields (kVerbatim: kept as text).
enum class Attr : uint8_t {
    kVerbatim,
    kMetadata,
    kControlPredecessors,
    kDimensions,
    kSlice,
    kDynamicSliceSizes,
    kPadding,
    kWindow,
    kDimLabels,
    kFeatureGroupCount,
    kBatchGroupCount,
    kLhsBatchDims,
    kRhsBatchDims,
    kLhsContractingDims,
    kRhsContractingDims,
    kLhsRaggedDims,
    kRhsGroupDims,
    kOffsetDims,
    kCollapsedSliceDims,
    kStartIndexMap,
    kOperandBatchingDims,
    kStartIndicesBatchingDims,
    kIndexVectorDim,
    kSliceSizes,
    kIndicesAreSorted,
    kUpdateWindowDims,
    kInsertedWindowDims,
    kScatterDimsToOperandDims,
    kInputBatchingDims,
    kScatterIndicesBatchingDims,
    kUniqueIndices,
    kDirection,
    kType,
    kIndex,
    kIotaDimension,
    kExponentBits,
    kMantissaBits,
    kEpsilon,
    kFeatureIndex,
    kCustomCallTarget,
    kKind,
    kIsStable,
    kFftType,
    kFftLength,
    kDistribution,
    kK,
    kLargest,
    // Called computations.
    kToApply,
    kCalls,
    kCondition,
    kBody,
    kTrueComputation,
    kFalseComputation,
    kBranchComputations,
    kCalledComputations,
    kSelect,
    kScatter,
};

// The typed attribute `name` stands for; kVerbatim for all others.
Attr classifyAttribute(std::string_view name);
inline bool isComputationAttribute(Attr attr) { return attr >= Attr::kToApply; }
inline bool oneOf(HloOpcode op, std::initializer_list<HloOpcode> ops) {
    return std::find(ops.begin(), ops.end(), op) != ops.end();
}
// Whether typed attribute `attr` belongs to opcode `op` (the wrapped opcode
// for `X-start` sugar).
bool appliesTo(Attr attr, std::optional<HloOpcode> maybeOp);
// Attributes XLA requires, by the opcode whose attributes an instruction takes.
struct RequiredAttributes {
    std::string_view names[5];
    size_t count = 0;
};
RequiredAttributes requiredAttributes(HloOpcode op);
// Opcodes whose result_accuracy XLA accepts.
bool allowsResultAccuracy(std::optional<HloOpcode> maybeOp);

// The attribute names seen on one instruction (hlo_parser_attributes.cc).
class SeenAttributes;

class Parser {
public:
    Parser(std::string_view text, size_t begin, size_t end, const HloParseOptions& options);

    StatusOr<std::unique_ptr<HloModule>> parseModule();

    // ---- errors (hlo_parser.cc)
    Status error(size_t offset, std::string message) const;
    Status expected(std::string_view what, const Token& got) const;
    Status expectToken(TokenKind kind, std::string_view what);
    Status checkEnd();

    // ---- module structure (hlo_parser.cc; the header in hlo_parser_header.cc)
    Status parseHeader();
    Status parseStackFrames();
    Status parseTopLevelComputation();
    StatusOr<HloComputation*> parseComputationBody(std::string name);
    Status parseInstruction(ComputationState& state);
    Status parseInstructionRhs(ComputationState& state, std::string_view name, size_t nameOffset,
                               bool allowAttributes, uint32_t* index);
    Status parseOpcodeName(const Token& opcodeToken, OpcodeInfo* info);
    Status parseParameterNumber(ComputationState& state, HloInstruction* instruction);
    Status checkInstructionShape(const PendingInstruction& pending, HloOpcode opcode,
                                 bool hasShape, size_t operandsOffset, size_t opcodeOffset);
    void deferChecks(HloInstruction* instruction, HloOpcode opcode, bool hasShape,
                     size_t opcodeOffset, size_t attributesOffset);
    Status parseOperands(ComputationState& state, PendingInstruction& pending);
    Status parseOperand(ComputationState& state, OperandRef& ref);
    Status checkOperandCounts(const PendingInstruction& pending, const OpcodeInfo& info,
                              size_t offset);
    Status checkDeclaredShape(size_t shapeOffset, const HloInstruction* operand);
    // (hlo_parser_resolve.cc)
    Status finishComputation(ComputationState& state, HloComputation* computation);
    Status resolveOperand(ComputationState& state, uint32_t user, OperandRef& ref,
                          std::vector<uint32_t>& created, HloInstruction** out);
    Status finishModule(HloModule* module);
    Status inferShapes();
    Status inferScanShape(HloInstruction* scan, size_t offset, Shape* out);
    Status runChecks();
    Status checkInstruction(const Site& site);
    Status checkConditional(const Site& site);
    Status checkScan(const Site& site);
    Status checkOperandLayoutConstraints(const Site& site);
    Status checkAsync(const Site& site);

    // ---- attributes (hlo_parser_attributes.cc, hlo_parser_values.cc)
    Status parseAttributes(ComputationState& state, PendingInstruction& pending,
                           const OpcodeInfo& info, size_t attributesOffset, bool allowAttributes);
    Status parseVerbatimAttribute(HloInstruction* instruction, std::optional<HloOpcode> op,
                                  const Token& nameToken);
    Status parseTypedAttribute(ComputationState& state, PendingInstruction& pending, Attr attr,
                               std::string_view name, std::optional<HloOpcode> op);
    Status parseDimensionNumbersAttribute(HloInstruction* instruction, Attr attr,
                                          std::optional<HloOpcode> op);
    Status parseEnumAttribute(HloInstruction* instruction, Attr attr);
    Status parseScalarAttribute(HloInstruction* instruction, Attr attr);
    Status checkAttributeSet(const HloInstruction& instruction, HloOpcode opcode,
                             size_t attributesOffset, const SeenAttributes& seen);
    Status parseInt64Value(int64_t* out);
    Status parseBoolValue(bool* out);
    Status parseInt64List(std::vector<int64_t>* out);
    Status parseSliceValue(std::vector<SliceDimension>* out);
    Status parsePaddingValue(std::vector<PaddingDimension>* out);
    Status parseWindowValue(Window* out, bool braces);
    Status parseDimLabelsValue(ConvolutionDimensionNumbers* out);
    Status parseIdentifierValue(std::string_view* out, std::string_view what);
    Status parseStringValue(std::string* out);
    Status parseComputationValue(HloInstruction* instruction, std::string_view name, bool list);
    Status parseInstructionNames(ComputationState& state, PendingInstruction& pending);
    // Captures a value verbatim: balanced over (), [], {} and strings, ending
    // at a top-level ',', a closing bracket or the end of the line; whitespace
    // outside strings collapsed to single spaces, comments dropped.
    Status parseVerbatimValue(std::string* out, size_t* valueOffset = nullptr);
    Status skipComment(size_t& p);
    Status parseBracedVerbatim(std::string* out);  // `{...}` -> the text between the braces
    Status checkResultAccuracy(size_t offset);     // validates the value at offset
    Status checkMeshReplicaGroups(std::string_view value, size_t offset);
    Status checkDebugAttributes(std::string_view value, size_t offset);
    Status parseAliasing(HloModule* module);
    Status parseBufferDonor(HloModule* module);
    Status parseComputationLayout(ComputationLayout* out);
    Status parseShapeIndex(ShapeIndex* out);

    // ---- shapes (hlo_parser_shapes.cc)
    bool canBeShape();
    Status checkNotAShape();
    Status parseShape(Shape* out);
    Status parseShapeLite(ShapeLite* out);
    Status parseLayout(Layout* out, int64_t rank);  // out may be null: check and drop
    Status parseDimensions(Shape* out);
    Status parsePrimitiveType(PrimitiveType* out, size_t* offset);
    Status makeBufferShape(Shape element, Shape* out, size_t offset);

    // ---- literals (hlo_parser_literal.cc)
    Status parseConstantLiteral(HloInstruction* instruction);
    Status parseLiteral(const Shape& shape);
    Status parseDenseLiteral(const Shape& shape);

    // ---- state
    std::string_view m_text;
    HloLexer m_lexer;
    const HloParseOptions& m_options;
    int m_depth = 0;

    std::unique_ptr<HloModule> m_module;
    std::vector<std::unique_ptr<HloComputation>> m_computations;  // in completion order
    std::unordered_map<std::string_view, std::pair<HloComputation*, size_t>> m_computationNames;
    HloComputation* m_entry = nullptr;
    std::vector<CalledRef> m_calledRefs;
    std::vector<Site> m_inferSites;
    std::vector<Site> m_operandShapeChecks;
    std::vector<Site> m_checkSites;
    std::vector<SignatureCheck> m_signatureChecks;
    std::vector<HloComputation*> m_inlineComputations;
    std::vector<OperandRef> m_operandStack;          // operands of the instructions being parsed
    std::vector<std::string_view> m_seenAttributes;  // names seen, per instruction on a stack
    std::vector<std::unique_ptr<ComputationState>> m_statePool;  // by nesting depth
    ShapeLite m_declared;  // scratch for declared operand shapes
    std::map<std::pair<uint32_t, int64_t>, uint32_t> m_gteCache;  // (tuple, index) -> gte
    std::unordered_map<std::string, int64_t> m_nameSuffixes;      // for unique names
    std::unordered_map<const HloInstruction*, const HloInstruction*> m_asyncStarts;
    std::string m_scratch;
    size_t m_typeCacheOffset = kNoOffset;  // last element type looked up by canBeShape
    PrimitiveType m_typeCache = PrimitiveType::PRIMITIVE_TYPE_INVALID;
};

// RAII recursion-depth guard.
class DepthGuard {
public:
    explicit DepthGuard(Parser& parser) : m_parser(parser) { ++m_parser.m_depth; }
    ~DepthGuard() { --m_parser.m_depth; }
    bool exceeded() const { return m_parser.m_depth > kMaxDepth; }

private:
    Parser& m_parser;
};

// ---- helpers shared between translation units
// A name token: an identifier or a %name.
inline bool isName(const Token& token) {
    return token.kind == TokenKind::kIdentifier || token.kind == TokenKind::kPercentName;
}
// Primitive type from its lower-case name; nullopt for unknown names, and for
// "tuple" (not written as a type).
std::optional<PrimitiveType> primitiveTypeFromName(std::string_view name);
// XLA's ShapeUtil::Compatible: element types and dimension sizes (tuple
// structure recursively), layouts and dynamic markers ignored.
bool shapesCompatible(const Shape& a, const Shape& b);
bool shapeLiteCompatible(const ShapeLite& lite, const Shape& shape);
// A shape as XLA writes it in messages: with layout, the descending layout
// filled in for arrays that have none.
std::string shapeWithLayoutString(const Shape& shape);
// Upper-case primitive type name as in XLA messages ("F16", "U4").
std::string upperTypeName(PrimitiveType type);
// Appends `text` with whitespace runs outside strings collapsed to one space,
// comments outside strings dropped, and the ends trimmed. Strings are
// double-quoted, or single-quoted outside braces; `insideBraces`: `text` is
// the inside of a braced value.
void appendCollapsed(std::string& out, std::string_view text, bool insideBraces = false);
std::string formatDouble(double value);

}  // namespace hloscope::hlo_parser_internal
