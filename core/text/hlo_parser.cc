// HLO text parser: module structure (computations; the header and stack
// frames are in hlo_parser_header.cc), instructions, operands, and the public
// API. See hlo_parser_internal.h for the overall design and where the other
// parts live.
#include "core/text/hlo_parser.h"

#include <algorithm>
#include <cstring>

#include "core/text/hlo_parser_internal.h"

namespace hloscope {
namespace hlo_parser_internal {

using namespace hlo_lexer_util;

namespace {

// Opcode by spelling through a hash table (stringToHloOpcode searches).
std::optional<HloOpcode> opcodeFromName(std::string_view name) {
    static const NameTable kTable = [] {
        NameTable table;
        for (int i = 0; i < kHloOpcodeCount; ++i)
            table.insert(hloOpcodeString(static_cast<HloOpcode>(i)), static_cast<uint32_t>(i));
        return table;
    }();
    uint32_t index = kTable.find(name);
    if (index == kNone) return std::nullopt;
    return static_cast<HloOpcode>(index);
}

// Opcodes whose shape XLA's parser can infer when the text omits it.
bool canInferShape(HloOpcode op) {
    using O = HloOpcode;
    switch (op) {
        case O::kAsyncStart:
        case O::kAsyncUpdate:
        case O::kAsyncDone:
        case O::kAllGather:
        case O::kAllGatherStart:
        case O::kAllGatherDone:
        case O::kAllReduce:
        case O::kAllReduceStart:
        case O::kAllReduceDone:
        case O::kAllToAll:
        case O::kCollectiveBroadcast:
        case O::kCollectivePermute:
        case O::kCollectivePermuteStart:
        case O::kCollectivePermuteDone:
        case O::kCopyDone:
        case O::kCopyStart:
        case O::kDynamicReshape:
        case O::kDynamicSlice:
        case O::kDynamicUpdateSlice:
        case O::kRaggedAllToAll:
        case O::kRecv:
        case O::kRecvDone:
        case O::kReduceScatter:
        case O::kSend:
        case O::kSendDone:
        case O::kSlice:
        case O::kBitcast:
        case O::kBitcastConvert:
        case O::kConstant:
        case O::kConvert:
        case O::kCustomCall:
        case O::kFusion:
        case O::kInfeed:
        case O::kIota:
        case O::kOutfeed:
        case O::kParameter:
        case O::kReducePrecision:
        case O::kReshape:
        case O::kRng:
        case O::kRngBitGenerator:
        case O::kRngGetAndUpdateState:
        case O::kStochasticConvert:
        case O::kCollectiveReduce:
        case O::kShuffle:
            return false;
        default:
            return true;
    }
}

// Opcodes that have dedicated asynchronous forms; `X-start`/`X-update`/
// `X-done` sugar is not accepted for them.
bool hasOwnAsyncForm(HloOpcode op) {
    using O = HloOpcode;
    return op == O::kAllReduce || op == O::kAllGather || op == O::kCollectivePermute ||
           op == O::kCopy || op == O::kSend || op == O::kRecv || hloOpcodeIsAsync(op);
}

// Fixed operand counts as XLA's parser checks them (nullopt: variadic).
std::optional<int64_t> expectedOperandCount(HloOpcode op) {
    using O = HloOpcode;
    switch (op) {
        case O::kConvolution:
            return 2;
        case O::kRaggedAllToAll:
        case O::kAsyncStart:
        case O::kAsyncUpdate:
        case O::kAsyncDone:
            return std::nullopt;
        default:
            break;
    }
    if (auto arity = hloOpcodeArity(op)) return *arity;
    return std::nullopt;
}

}  // namespace

Parser::Parser(std::string_view text, size_t begin, size_t end, const HloParseOptions& options)
    : m_text(text), m_lexer(text, begin, end), m_options(options) {}

Status Parser::error(size_t offset, std::string message) const {
    int line = 0, column = 0;
    lineAndColumn(m_text, offset, &line, &column);
    return Status(StatusCode::kInvalidArgument, std::move(message),
                  SourceLocation{m_options.fileName, line, column});
}

Status Parser::expected(std::string_view what, const Token& got) const {
    if (got.kind == TokenKind::kError) {
        if (m_lexer.unterminatedComment() == got.offset)
            return error(got.offset, "unterminated /* comment");
        char c = m_lexer.charAt(got.offset);
        if (c == '"' || c == '\'') return error(got.offset, "unterminated string");
    }
    return error(got.offset, "expected " + std::string(what) + ", got " + describeToken(got));
}

Status Parser::expectToken(TokenKind kind, std::string_view what) {
    Token token = m_lexer.next();
    if (token.kind != kind) return expected(what, token);
    return Status::ok();
}

Status Parser::checkEnd() {
    const Token& token = m_lexer.peek();
    if (token.kind != TokenKind::kEof) return expected("end of input", token);
    return Status::ok();
}

// ---------------------------------------------------------------------------
// Module structure

StatusOr<std::unique_ptr<HloModule>> Parser::parseModule() {
    m_module = std::make_unique<HloModule>("");
    const Token& first = m_lexer.peek();
    bool header = first.kind == TokenKind::kIdentifier && first.text == "HloModule";
    if (header) HLO_RETURN_IF_ERROR(parseHeader());
    HLO_RETURN_IF_ERROR(parseStackFrames());
    do {
        HLO_RETURN_IF_ERROR(parseTopLevelComputation());
    } while (m_lexer.peekKind() != TokenKind::kEof);
    HLO_RETURN_IF_ERROR(finishModule(m_module.get()));
    if (!header) {
        HloComputation* entry = m_module->entryComputation();
        m_module->setName("module_" + (entry ? entry->name() : std::string()));
    }
    return std::move(m_module);
}

// ('ENTRY')? name ('(' params ')' '->' shape)? '{' instructions '}'
// (',' execution_thread="...")?
Status Parser::parseTopLevelComputation() {
    Token token = m_lexer.next();
    size_t entryOffset = kNoOffset;
    if (token.kind == TokenKind::kIdentifier && token.text == "ENTRY") {
        entryOffset = token.offset;
        token = m_lexer.next();
    }
    if (!isName(token)) return expected("a computation name", token);
    const Token nameToken = token;
    std::optional<SignatureCheck> signature;
    if (m_lexer.consumeIf(TokenKind::kLparen)) {
        if (!m_lexer.consumeIf(TokenKind::kRparen)) {
            while (true) {
                Token param = m_lexer.next();
                if (!isName(param)) return expected("a parameter name", param);
                m_lexer.consumeIf(TokenKind::kColon);
                Shape shape;
                HLO_RETURN_IF_ERROR(parseShape(&shape));
                Token next = m_lexer.next();
                if (next.kind == TokenKind::kComma) continue;
                if (next.kind == TokenKind::kRparen) break;
                return expected("',' or ')' in the parameter list", next);
            }
        }
        HLO_RETURN_IF_ERROR(expectToken(TokenKind::kArrow, "'->' after the parameter list"));
        signature.emplace();
        signature->offset = m_lexer.cursor();
        HLO_RETURN_IF_ERROR(parseShape(&signature->shape));
    }
    HLO_ASSIGN_OR_RETURN(HloComputation * computation,
                         parseComputationBody(std::string(nameToken.text)));
    if (signature) {
        signature->computation = computation;
        m_signatureChecks.push_back(std::move(*signature));
    }
    while (m_lexer.consumeIf(TokenKind::kComma)) {
        Token attr = m_lexer.next();
        if (attr.kind != TokenKind::kIdentifier) return expected("an attribute name", attr);
        HLO_RETURN_IF_ERROR(expectToken(TokenKind::kEqual, "'=' after attribute name"));
        if (attr.text != "execution_thread")
            return error(attr.offset, "unexpected attribute \"" + std::string(attr.text) +
                                          "\" of a computation; only execution_thread is allowed");
        std::string thread;
        HLO_RETURN_IF_ERROR(parseStringValue(&thread));
        computation->setExecutionThread(std::move(thread));
    }
    auto [it, inserted] =
        m_computationNames.emplace(nameToken.text, std::make_pair(computation, nameToken.offset));
    if (!inserted)
        return error(nameToken.offset,
                     "computation already exists: " + std::string(nameToken.text));
    if (entryOffset != kNoOffset) {
        if (m_entry != nullptr) return error(entryOffset, "expects only one ENTRY");
        m_entry = computation;
    }
    return Status::ok();
}

StatusOr<HloComputation*> Parser::parseComputationBody(std::string name) {
    DepthGuard guard(*this);
    Token open = m_lexer.next();
    if (guard.exceeded()) return error(open.offset, "maximum nesting depth exceeded");
    if (open.kind != TokenKind::kLbrace)
        return expected("'{' at the beginning of the instruction list", open);
    // States are pooled by nesting depth so their buffers are reused.
    const size_t level = static_cast<size_t>(m_depth);
    while (m_statePool.size() <= level) m_statePool.push_back(std::make_unique<ComputationState>());
    ComputationState& state = *m_statePool[level];
    state.clear();
    if (m_lexer.peekKind() == TokenKind::kRbrace)
        return error(m_lexer.peek().offset, "computation " + name + " has no instructions");
    while (m_lexer.peekKind() != TokenKind::kRbrace) HLO_RETURN_IF_ERROR(parseInstruction(state));
    m_lexer.next();
    auto computation = std::make_unique<HloComputation>(std::move(name));
    HLO_RETURN_IF_ERROR(finishComputation(state, computation.get()));
    HloComputation* raw = computation.get();
    m_computations.push_back(std::move(computation));
    return raw;
}

Status Parser::parseInstruction(ComputationState& state) {
    Token token = m_lexer.next();
    size_t rootOffset = kNoOffset;
    if (token.kind == TokenKind::kIdentifier && token.text == "ROOT") {
        rootOffset = token.offset;
        token = m_lexer.next();
    }
    if (!isName(token)) return expected("an instruction name", token);
    HLO_RETURN_IF_ERROR(expectToken(TokenKind::kEqual, "'=' after the instruction name"));
    if (rootOffset != kNoOffset && state.root != kNone)
        return error(rootOffset, "one computation should have only one ROOT");
    uint32_t index = kNone;
    HLO_RETURN_IF_ERROR(parseInstructionRhs(state, token.text, token.offset, true, &index));
    if (rootOffset != kNoOffset) state.root = index;
    return Status::ok();
}

Status Parser::parseInstructionRhs(ComputationState& state, std::string_view name,
                                   size_t nameOffset, bool allowAttributes, uint32_t* index) {
    DepthGuard guard(*this);
    if (guard.exceeded()) return error(nameOffset, "maximum nesting depth exceeded");
    Shape shape;
    const bool hasShape = canBeShape();
    if (hasShape)
        HLO_RETURN_IF_ERROR(parseShape(&shape));
    else
        HLO_RETURN_IF_ERROR(checkNotAShape());
    Token opcodeToken = m_lexer.next();
    if (opcodeToken.kind != TokenKind::kIdentifier) return expected("an opcode", opcodeToken);

    OpcodeInfo info;
    HLO_RETURN_IF_ERROR(parseOpcodeName(opcodeToken, &info));
    if (!hasShape && !canInferShape(info.opcode))
        return error(opcodeToken.offset,
                     "cannot infer shape for opcode: " + std::string(hloOpcodeString(info.opcode)) +
                         "; the instruction needs a shape");

    PendingInstruction pending;
    pending.instruction =
        std::make_unique<HloInstruction>(info.opcode, std::string(name), std::move(shape));
    pending.nameOffset = nameOffset;
    pending.opcodeOffset = opcodeToken.offset;
    pending.anonymous = name.empty();
    HloInstruction* instruction = pending.instruction.get();
    if (info.wrapped) instruction->mutableExtra().asyncWrappedOpcode = *info.wrapped;

    const size_t operandsOffset = m_lexer.cursor();
    pending.operandBegin = pending.operandEnd = static_cast<uint32_t>(state.operands.size());
    if (info.opcode == HloOpcode::kParameter) {
        HLO_RETURN_IF_ERROR(parseParameterNumber(state, instruction));
    } else if (info.opcode == HloOpcode::kConstant) {
        HLO_RETURN_IF_ERROR(parseConstantLiteral(instruction));
    } else {
        HLO_RETURN_IF_ERROR(parseOperands(state, pending));
    }
    HLO_RETURN_IF_ERROR(checkOperandCounts(pending, info, operandsOffset));

    // Nested instructions take no attributes (a ',' after them separates
    // operands) but are still checked for the attributes XLA requires.
    const size_t attributesOffset = m_lexer.position();
    HLO_RETURN_IF_ERROR(parseAttributes(state, pending, info, attributesOffset, allowAttributes));

    HLO_RETURN_IF_ERROR(checkInstructionShape(pending, info.opcode, hasShape, operandsOffset,
                                              opcodeToken.offset));
    deferChecks(instruction, info.opcode, hasShape, opcodeToken.offset, attributesOffset);

    *index = static_cast<uint32_t>(state.pending.size());
    if (!name.empty()) {
        if (!state.names.insert(name, *index))
            return error(nameOffset, "instruction already exists: " + std::string(name));
    }
    state.pending.push_back(std::move(pending));
    return Status::ok();
}

// The opcode `token` names, or the async sugar `X-start`, `X-update`,
// `X-done` of an opcode X without an async form of its own.
Status Parser::parseOpcodeName(const Token& opcodeToken, OpcodeInfo* info) {
    if (auto op = opcodeFromName(opcodeToken.text)) {
        info->opcode = *op;
        info->attributeOpcode = *op;
    } else {
        bool matched = false;
        static constexpr std::pair<std::string_view, HloOpcode> kSuffixes[] = {
            {"-start", HloOpcode::kAsyncStart},
            {"-update", HloOpcode::kAsyncUpdate},
            {"-done", HloOpcode::kAsyncDone}};
        for (const auto& [suffix, asyncOpcode] : kSuffixes) {
            std::string_view text = opcodeToken.text;
            if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix)
                continue;
            auto wrapped = opcodeFromName(text.substr(0, text.size() - suffix.size()));
            if (wrapped && !hasOwnAsyncForm(*wrapped)) {
                info->opcode = asyncOpcode;
                info->wrapped = *wrapped;
                if (asyncOpcode == HloOpcode::kAsyncStart) info->attributeOpcode = *wrapped;
                matched = true;
            }
            break;
        }
        if (!matched) {
            std::string text(opcodeToken.text);
            return error(opcodeToken.offset,
                         "expects opcode but sees: " + text + ", error: Unknown opcode: " + text);
        }
    }
    return Status::ok();
}

// `(n)` of a parameter: a number not seen before in the computation.
Status Parser::parseParameterNumber(ComputationState& state, HloInstruction* instruction) {
    HLO_RETURN_IF_ERROR(expectToken(TokenKind::kLparen, "'(' before the parameter number"));
    Token number = m_lexer.next();
    int64_t value = 0;
    if (number.kind != TokenKind::kInt)
        return error(number.offset, "expects integer, got " + describeToken(number));
    if (!parseInt64(number.text, &value))
        return error(number.offset, "parameter number is out of range");
    if (value < 0) return error(number.offset, "parameter number must be >= 0");
    HLO_RETURN_IF_ERROR(expectToken(TokenKind::kRparen, "')' after the parameter number"));
    if (!state.addParameter(value))
        return error(number.offset, "Duplicate parameter number " + std::to_string(value));
    instruction->setParameterNumber(value);
    return Status::ok();
}

// Checks that need only the instruction itself.
Status Parser::checkInstructionShape(const PendingInstruction& pending, HloOpcode opcode,
                                     bool hasShape, size_t operandsOffset, size_t opcodeOffset) {
    const HloInstruction* instruction = pending.instruction.get();
    const Shape& result = instruction->shape();
    switch (opcode) {
        case HloOpcode::kTuple:
            if (hasShape) {
                int64_t expectedCount = result.isTuple() ? result.tupleCount() : 0;
                int64_t count = pending.operandEnd - pending.operandBegin;
                if (count != expectedCount)
                    return error(operandsOffset, "expects " + std::to_string(expectedCount) +
                                                     " operands, but has " + std::to_string(count) +
                                                     " operands");
            }
            break;
        case HloOpcode::kRecv:
            if (!result.isTuple() || result.tupleCount() == 0)
                return error(opcodeOffset,
                             "recv must have a non-empty tuple shape, got " + result.toString());
            break;
        case HloOpcode::kInfeed:
            if (!result.isTuple() || result.tupleCount() == 0)
                return error(opcodeOffset, "infeed must have a non-empty tuple shape");
            break;
        case HloOpcode::kAsyncStart:
        case HloOpcode::kAsyncUpdate:
            if (!result.isTuple() || result.tupleCount() < 2 || !result.tupleShape(0).isTuple())
                return error(opcodeOffset,
                             "AsyncStart and AsyncUpdate expect the shape to be in the form of "
                             "((operand0_shape, operand1_shape, ...), output_shape, ...)");
            break;
        default:
            break;
    }
    return Status::ok();
}

// Later stages: shape inference and checks needing resolved operands.
void Parser::deferChecks(HloInstruction* instruction, HloOpcode opcode, bool hasShape,
                         size_t opcodeOffset, size_t attributesOffset) {
    if (!hasShape) m_inferSites.push_back({instruction, opcodeOffset, 0});
    switch (opcode) {
        case HloOpcode::kAsyncStart:
        case HloOpcode::kAsyncUpdate:
        case HloOpcode::kAsyncDone:
        case HloOpcode::kConditional:
        case HloOpcode::kDynamicSlice:
        case HloOpcode::kDynamicUpdateSlice:
        case HloOpcode::kScan:
        case HloOpcode::kRecvDone:
        case HloOpcode::kSendDone:
            m_checkSites.push_back({instruction, opcodeOffset, 0});
            break;
        case HloOpcode::kBroadcast:
            if (!instruction->hasDimensions())
                m_checkSites.push_back({instruction, attributesOffset, 0});
            break;
        case HloOpcode::kCustomCall:
            if (instruction->attribute("operand_layout_constraints"))
                m_checkSites.push_back({instruction, opcodeOffset, 0});
            break;
        default:
            break;
    }
}

Status Parser::checkOperandCounts(const PendingInstruction& pending, const OpcodeInfo& info,
                                  size_t offset) {
    using O = HloOpcode;
    const int64_t count = pending.operandEnd - pending.operandBegin;
    const O op = info.opcode;
    if (op == O::kParameter || op == O::kConstant) return Status::ok();
    auto expectCount = [&](int64_t expectedCount) -> Status {
        if (count == expectedCount) return Status::ok();
        return error(offset, "expects " + std::to_string(expectedCount) + " operands, but has " +
                                 std::to_string(count) + " operands");
    };
    if (op == O::kAsyncUpdate || op == O::kAsyncDone) {
        // The first operand is the previous async op; async-update may bind
        // further operands.
        if (count == 0) return error(offset, "No operand found for AsyncUpdate and AsyncDone");
        return Status::ok();
    }
    // `X-start` sugar may bind only some of X's operands (the rest come with
    // X-update), so its count is not checked.
    if (op == O::kAsyncStart || op == O::kTuple) return Status::ok();
    const O effective = op;
    if (auto fixed = expectedOperandCount(effective)) return expectCount(*fixed);
    switch (effective) {
        case O::kReduce:
        case O::kReduceWindow:
            if (count < 2 || count % 2 != 0)
                return error(offset, "expects an even number of operands (at least 2), but has " +
                                         std::to_string(count) + " operands");
            break;
        case O::kScatter:
            if (count < 3 || count % 2 == 0)
                return error(offset, "expects an odd number of operands (at least 3), but has " +
                                         std::to_string(count) + " operands");
            break;
        case O::kDynamicSlice:
            if (count < 1) return error(offset, "Expected at least one operand.");
            break;
        case O::kDynamicUpdateSlice:
            if (count < 2) return error(offset, "Expected at least two operands.");
            break;
        case O::kDynamicReshape:
            if (count < 1) return error(offset, "DynamicReshape requires at least one operand.");
            break;
        case O::kConditional:
        case O::kSort:
        case O::kConcatenate:
        case O::kMap:
        case O::kScan:
            if (count < 1) return error(offset, "expects at least one operand");
            break;
        default:
            break;
    }
    return Status::ok();
}

// operands ::= '(' (operand (',' operand)*)? ')'
Status Parser::parseOperands(ComputationState& state, PendingInstruction& pending) {
    HLO_RETURN_IF_ERROR(expectToken(TokenKind::kLparen, "'(' before the operands"));
    const size_t base = m_operandStack.size();
    if (!m_lexer.consumeIf(TokenKind::kRparen)) {
        while (true) {
            OperandRef ref;
            HLO_RETURN_IF_ERROR(parseOperand(state, ref));
            m_operandStack.push_back(ref);
            Token next = m_lexer.next();
            if (next.kind == TokenKind::kComma) continue;
            if (next.kind == TokenKind::kRparen) break;
            return expected("')' after operands", next);
        }
    }
    pending.operandBegin = static_cast<uint32_t>(state.operands.size());
    state.operands.insert(state.operands.end(),
                          m_operandStack.begin() + static_cast<ptrdiff_t>(base),
                          m_operandStack.end());
    pending.operandEnd = static_cast<uint32_t>(state.operands.size());
    m_operandStack.resize(base);
    return Status::ok();
}

// operand ::= shape? name ('#' int)* | shape? opcode operands
Status Parser::parseOperand(ComputationState& state, OperandRef& ref) {
    const size_t start = m_lexer.cursor();
    ref.offset = start;
    bool hasDeclared = false;
    if (canBeShape()) {
        HLO_RETURN_IF_ERROR(parseShapeLite(&m_declared));
        hasDeclared = true;
    } else {
        HLO_RETURN_IF_ERROR(checkNotAShape());
    }
    const Token& token = m_lexer.peek();
    if (!isName(token)) return expected("an operand", token);
    if (token.kind == TokenKind::kIdentifier &&
        m_lexer.charAt(m_lexer.skipTrivia(token.offset + token.text.size())) == '(') {
        // A nested instruction, e.g. add(f32[] parameter(0), ...).
        m_lexer.resetTo(start);
        uint32_t nested = kNone;
        HLO_RETURN_IF_ERROR(parseInstructionRhs(state, {}, start, false, &nested));
        ref.target = nested;
        return Status::ok();
    }
    Token name = m_lexer.next();
    ref.name = name.text;
    if (!hasDeclared) ref.offset = name.offset;
    ref.gteBegin = static_cast<uint32_t>(state.gteIndices.size());
    while (m_lexer.consumeIf(TokenKind::kOctothorp)) {
        Token index = m_lexer.next();
        int64_t value = 0;
        if (index.kind != TokenKind::kInt)
            return error(index.offset, "expects integer, got " + describeToken(index));
        if (!parseInt64(index.text, &value))
            return error(index.offset, "tuple index is out of range");
        state.gteIndices.push_back(value);
        ++ref.gteCount;
    }
    // Operands are nearly always defined earlier (and recently, so the
    // table slot is still in cache): resolve now when possible.
    uint32_t found = state.names.find(ref.name);
    if (found != kNone) ref.target = found;
    if (hasDeclared) {
        ref.declaredShapeOffset = start;
        if (found != kNone && ref.gteCount == 0) {
            const HloInstruction* target = state.pending[found].instruction.get();
            if (target->shape().isValid()) {
                if (!shapeLiteCompatible(m_declared, target->shape()))
                    return checkDeclaredShape(start, target);
                ref.declaredShapeOffset = kNoOffset;
            }
        }
    }
    return Status::ok();
}

Status Parser::checkDeclaredShape(size_t shapeOffset, const HloInstruction* operand) {
    const size_t saved = m_lexer.position();
    m_lexer.resetTo(shapeOffset);
    Shape declared;
    Status status = parseShape(&declared);
    m_lexer.resetTo(saved);
    HLO_RETURN_IF_ERROR(status);
    if (shapesCompatible(declared, operand->shape())) return Status::ok();
    return error(shapeOffset, "The declared operand shape " + shapeWithLayoutString(declared) +
                                  " is not compatible with the shape of the operand instruction " +
                                  shapeWithLayoutString(operand->shape()) + ".");
}

}  // namespace hlo_parser_internal

// ---------------------------------------------------------------------------
// Public API

namespace {

using hlo_parser_internal::Parser;

const HloParseOptions& defaultOptions() {
    static const HloParseOptions kOptions;
    return kOptions;
}

// [begin, end) ranges of the modules of a text split by `// -----` lines, and
// the offsets of those lines.
struct Split {
    std::vector<std::pair<size_t, size_t>> chunks;
    std::vector<size_t> separators;
};

Split splitModules(std::string_view text) {
    Split split;
    size_t chunkStart = 0;
    size_t lineStart = 0;
    while (lineStart <= text.size()) {
        size_t lineEnd = text.find('\n', lineStart);
        if (lineEnd == std::string_view::npos) lineEnd = text.size();
        std::string_view line = text.substr(lineStart, lineEnd - lineStart);
        size_t first = line.find_first_not_of(" \t\r");
        if (first != std::string_view::npos && line.compare(first, 8, "// -----") == 0 &&
            line.find_first_not_of("- \t\r", first + 2) == std::string_view::npos) {
            split.chunks.push_back({chunkStart, lineStart});
            split.separators.push_back(lineStart + first);
            chunkStart = lineEnd;
        }
        if (lineEnd == text.size()) break;
        lineStart = lineEnd + 1;
    }
    split.chunks.push_back({chunkStart, text.size()});
    return split;
}

// True when text[begin, end) holds nothing but whitespace and comments.
bool onlyTrivia(std::string_view text, size_t begin, size_t end) {
    HloLexer lexer(text, begin, end);
    return lexer.peekKind() == TokenKind::kEof;
}

}  // namespace

StatusOr<std::unique_ptr<HloModule>> parseHloModule(std::string_view text,
                                                    const HloParseOptions& options) {
    Split split = splitModules(text);
    if (split.separators.size() > 0) {
        int nonEmpty = 0;
        for (const auto& [begin, end] : split.chunks)
            if (!onlyTrivia(text, begin, end)) ++nonEmpty;
        if (nonEmpty > 1) {
            Parser parser(text, 0, text.size(), options);
            return parser.error(split.separators.front(),
                                "the text holds several modules separated by '// -----'; "
                                "parse it with parseHloModules");
        }
    }
    Parser parser(text, 0, text.size(), options);
    return parser.parseModule();
}

StatusOr<std::vector<std::unique_ptr<HloModule>>> parseHloModules(std::string_view text,
                                                                  const HloParseOptions& options) {
    Split split = splitModules(text);
    std::vector<std::unique_ptr<HloModule>> modules;
    for (const auto& [begin, end] : split.chunks) {
        if (split.chunks.size() > 1 && onlyTrivia(text, begin, end)) continue;
        Parser parser(text, begin, end, options);
        HLO_ASSIGN_OR_RETURN(auto module, parser.parseModule());
        modules.push_back(std::move(module));
    }
    if (modules.empty()) {
        Parser parser(text, 0, text.size(), options);
        HLO_ASSIGN_OR_RETURN(auto module, parser.parseModule());
        modules.push_back(std::move(module));
    }
    return modules;
}

StatusOr<Shape> parseShape(std::string_view text) {
    Parser parser(text, 0, text.size(), defaultOptions());
    Shape shape;
    HLO_RETURN_IF_ERROR(parser.parseShape(&shape));
    HLO_RETURN_IF_ERROR(parser.checkEnd());
    return shape;
}

StatusOr<Window> parseWindow(std::string_view text) {
    Parser parser(text, 0, text.size(), defaultOptions());
    Window window;
    bool braces = parser.m_lexer.peekKind() == TokenKind::kLbrace;
    HLO_RETURN_IF_ERROR(parser.parseWindowValue(&window, braces));
    HLO_RETURN_IF_ERROR(parser.checkEnd());
    return window;
}

StatusOr<ConvolutionDimensionNumbers> parseConvolutionDimensionNumbers(std::string_view text) {
    Parser parser(text, 0, text.size(), defaultOptions());
    ConvolutionDimensionNumbers dnums;
    HLO_RETURN_IF_ERROR(parser.parseDimLabelsValue(&dnums));
    HLO_RETURN_IF_ERROR(parser.checkEnd());
    return dnums;
}

StatusOr<std::vector<PaddingDimension>> parsePaddingConfig(std::string_view text) {
    Parser parser(text, 0, text.size(), defaultOptions());
    std::vector<PaddingDimension> padding;
    HLO_RETURN_IF_ERROR(parser.parsePaddingValue(&padding));
    HLO_RETURN_IF_ERROR(parser.checkEnd());
    return padding;
}

}  // namespace hloscope
