// Late stages of the HLO text parser: name resolution at the end of each
// computation and of the module, shape inference for instructions written
// without a shape, the checks XLA's parser makes that need resolved operands
// and called computations, and the name table.
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/async_wrapping.h"
#include "core/ir/attribute_text.h"
#include "core/text/hlo_parser_internal.h"
#include "core/shape_inference/shape_inference.h"

namespace hloscope::hlo_parser_internal {

using namespace hlo_lexer_util;

namespace {

// The i-th instruction whose shape `instruction`'s inferred shape depends on
// (operands, then the roots of called computations); nullptr past the end.
HloInstruction* dependency(const HloInstruction* instruction, size_t i) {
    size_t operands = static_cast<size_t>(instruction->operandCount());
    if (i < operands) return instruction->operand(static_cast<int64_t>(i));
    i -= operands;
    for (const CalledComputationAttribute& attr : instruction->calledComputationAttributes()) {
        if (i < attr.computations.size()) {
            HloComputation* computation = attr.computations[i];
            return computation ? computation->root() : nullptr;
        }
        i -= attr.computations.size();
    }
    return nullptr;
}

size_t dependencyCount(const HloInstruction* instruction) {
    size_t count = static_cast<size_t>(instruction->operandCount());
    for (const CalledComputationAttribute& attr : instruction->calledComputationAttributes())
        count += attr.computations.size();
    return count;
}

bool hasCalled(const HloInstruction* instruction, std::string_view name) {
    for (const auto& attr : instruction->calledComputationAttributes())
        if (attr.name == name) return true;
    return false;
}

}  // namespace

Status Parser::makeBufferShape(Shape element, Shape* out, size_t offset) {
    (void)offset;
    *out = Shape::makeBuffer(std::move(element));
    return Status::ok();
}

Status Parser::inferShapes() {
    if (m_inferSites.empty()) return Status::ok();
    std::unordered_map<const HloInstruction*, size_t> offsets;
    offsets.reserve(m_inferSites.size());
    for (const Site& site : m_inferSites) offsets.emplace(site.instruction, site.offset);
    std::unordered_set<const HloInstruction*> onStack;
    struct Frame {
        HloInstruction* instruction;
        size_t next;
    };
    std::vector<Frame> stack;

    auto inferOne = [&](HloInstruction* instruction) -> Status {
        size_t offset = offsets[instruction];
        Shape result;
        HloOpcode opcode = instruction->opcode();
        if (opcode == HloOpcode::kGetTupleElement && instruction->operandCount() == 1) {
            const Shape& tuple = instruction->operand(0)->shape();
            int64_t index = instruction->tupleIndex();
            if (!tuple.isTuple())
                return error(offset, "GTE operand must be tuple, got " + tuple.toString());
            if (index < 0 || index >= tuple.tupleCount())
                return error(offset, "GTE index " + std::to_string(index) +
                                         " out of bounds for a tuple of " +
                                         std::to_string(tuple.tupleCount()) + " elements");
            result = tuple.tupleShape(index);
        } else if (opcode == HloOpcode::kScan) {
            HLO_RETURN_IF_ERROR(inferScanShape(instruction, offset, &result));
        } else if (opcode == HloOpcode::kTuple) {
            std::vector<Shape> elements;
            elements.reserve(static_cast<size_t>(instruction->operandCount()));
            for (const HloInstruction* operand : instruction->operands())
                elements.push_back(operand->shape());
            result = Shape::makeTuple(std::move(elements));
        } else {
            StatusOr<Shape> inferred = inferShape(*instruction);
            if (!inferred.isOk())
                return error(offset, "failed to infer shape for opcode: " +
                                         std::string(hloOpcodeString(opcode)) +
                                         ", error: " + inferred.status().message());
            result = std::move(inferred).value();
            if (!result.isValid())
                return error(offset, "failed to infer shape for opcode: " +
                                         std::string(hloOpcodeString(opcode)));
        }
        instruction->setShape(std::move(result));
        return Status::ok();
    };

    for (const Site& site : m_inferSites) {
        if (site.instruction->shape().isValid()) continue;
        stack.push_back({site.instruction, 0});
        onStack.insert(site.instruction);
        while (!stack.empty()) {
            Frame& frame = stack.back();
            HloInstruction* waiting = nullptr;
            size_t count = dependencyCount(frame.instruction);
            while (frame.next < count) {
                HloInstruction* dep = dependency(frame.instruction, frame.next++);
                if (dep != nullptr && !dep->shape().isValid()) {
                    waiting = dep;
                    break;
                }
            }
            if (waiting != nullptr) {
                if (onStack.count(waiting) || !offsets.count(waiting))
                    return error(offsets[frame.instruction],
                                 "cannot infer the shape of %" + frame.instruction->name() +
                                     ": it depends on itself through %" + waiting->name());
                onStack.insert(waiting);
                stack.push_back({waiting, 0});
                continue;
            }
            HloInstruction* done = frame.instruction;
            HLO_RETURN_IF_ERROR(inferOne(done));
            onStack.erase(done);
            stack.pop_back();
        }
    }
    return Status::ok();
}

// XLA's parser infers a scan's shape from its to_apply root: the carries
// as they are, the other results with the scanned dimension inserted.
Status Parser::inferScanShape(HloInstruction* scan, size_t offset, Shape* out) {
    HLO_RETURN_IF_ERROR(checkInstruction({scan, offset, 0}));
    const HloComputation* body = scan->toApply();
    int64_t carries = 0;
    if (auto text = scan->attribute("num_carries")) parseInt64(*text, &carries);
    int64_t inputs = scan->operandCount() - carries;
    if (inputs <= 0 || body == nullptr || scan->dimensions().size() != 1)
        return error(offset, "Cannot infer shape for scan with no inputs");
    const int64_t dim = scan->dimensions(0);
    const int64_t size = scan->operand(0)->shape().dimensions(dim);
    auto insert = [&](Shape shape) {
        if (!shape.isArray() || dim > shape.rank()) return shape;
        std::vector<int64_t> dims = shape.dimensions();
        dims.insert(dims.begin() + dim, size);
        Shape result = Shape::makeArray(shape.elementType(), std::move(dims));
        return result;
    };
    const Shape& root = body->root()->shape();
    if (!root.isTuple()) {
        *out = carries > 0 ? root : insert(root);
        return Status::ok();
    }
    std::vector<Shape> elements;
    for (int64_t i = 0; i < root.tupleCount(); ++i)
        elements.push_back(i + carries < root.tupleCount() ? insert(root.tupleShape(i))
                                                           : root.tupleShape(i));
    *out = Shape::makeTuple(std::move(elements));
    return Status::ok();
}

Status Parser::runChecks() {
    for (const Site& site : m_operandShapeChecks)
        HLO_RETURN_IF_ERROR(
            checkDeclaredShape(site.offset, site.instruction->operand(site.operand)));
    for (const SignatureCheck& check : m_signatureChecks) {
        const HloInstruction* root = check.computation->root();
        if (!shapesCompatible(check.shape, root->shape()))
            return error(check.offset,
                         "Shape of computation " + check.computation->name() + ", " +
                             check.shape.toString(false) +
                             ", is not compatible with that of its root instruction " +
                             root->name() + ", " + root->shape().toString(false));
    }
    std::unordered_map<const HloComputation*, int> asyncCallers;
    for (const Site& site : m_checkSites) {
        HLO_RETURN_IF_ERROR(checkInstruction(site));
        const HloInstruction* instruction = site.instruction;
        if (instruction->opcode() == HloOpcode::kAsyncStart) {
            if (const HloComputation* called = instruction->calledComputation("calls")) {
                if (++asyncCallers[called] > 1)
                    return error(site.offset, "Computation " + called->name() +
                                                  " is called by more than one async op");
            }
        }
    }
    return Status::ok();
}

Status Parser::checkInstruction(const Site& site) {
    using O = HloOpcode;
    HloInstruction* instruction = site.instruction;
    const int64_t count = instruction->operandCount();
    auto operandShape = [&](int64_t i) -> const Shape& { return instruction->operand(i)->shape(); };
    switch (instruction->opcode()) {
        case O::kAsyncStart:
        case O::kAsyncUpdate:
        case O::kAsyncDone:
            return checkAsync(site);
        case O::kBroadcast:
            if (!instruction->hasDimensions() && count == 1 && !operandShape(0).isScalar())
                return error(site.offset, "attribute dimensions is expected but not seen");
            return Status::ok();
        case O::kConditional:
            return checkConditional(site);
        case O::kDynamicSlice: {
            int64_t rank = operandShape(0).rank();
            if (!(count == 2 && operandShape(1).rank() == 1) && count != 1 + rank)
                return error(site.offset, "Wrong number of operands.");
            return Status::ok();
        }
        case O::kDynamicUpdateSlice: {
            int64_t rank = operandShape(0).rank();
            if (!(count == 3 && operandShape(2).rank() == 1) && count != 2 + rank)
                return error(site.offset, "Wrong number of operands.");
            return Status::ok();
        }
        case O::kScan:
            return checkScan(site);
        case O::kRecvDone:
        case O::kSendDone: {
            const HloInstruction* operand = instruction->operand(0);
            O expectedOpcode = instruction->opcode() == O::kRecvDone ? O::kRecv : O::kSend;
            if (operand->opcode() == expectedOpcode &&
                instruction->attribute("channel_id") != operand->attribute("channel_id"))
                return error(site.offset, "the channel_id of %" + instruction->name() +
                                              " does not match that of its operand %" +
                                              operand->name());
            return Status::ok();
        }
        case O::kCustomCall:
            return checkOperandLayoutConstraints(site);
        default:
            return Status::ok();
    }
}

// The selector and the branches: pred with true/false computations, s32 with
// branch_computations; one operand per branch after the selector.
Status Parser::checkConditional(const Site& site) {
    HloInstruction* instruction = site.instruction;
    const int64_t count = instruction->operandCount();
    auto operandShape = [&](int64_t i) -> const Shape& { return instruction->operand(i)->shape(); };
    const Shape& selector = operandShape(0);
    if (!selector.isScalar())
        return error(site.offset, "The first operand must be a scalar");
    bool isPred = selector.elementType() == PrimitiveType::PRED;
    if (!isPred && selector.elementType() != PrimitiveType::S32)
        return error(site.offset, "The first operand must be a scalar of PRED or S32");
    size_t branches = 0;
    if (isPred) {
        if (hasCalled(instruction, "branch_computations"))
            return error(site.offset, "unexpected attribute \"branch_computations\"");
        for (std::string_view name : {"true_computation", "false_computation"})
            if (!hasCalled(instruction, name))
                return error(site.offset, "attribute " + std::string(name) +
                                              " is expected but not seen");
        branches = 2;
    } else {
        for (std::string_view name : {"true_computation", "false_computation"})
            if (hasCalled(instruction, name))
                return error(site.offset,
                             "unexpected attribute \"" + std::string(name) + "\"");
        if (!hasCalled(instruction, "branch_computations"))
            return error(site.offset,
                         "attribute branch_computations is expected but not seen");
        for (const auto& attr : instruction->calledComputationAttributes())
            if (attr.name == "branch_computations") branches = attr.computations.size();
        if (branches == 0)
            return error(site.offset, "branch_computations must not be empty");
    }
    if (static_cast<size_t>(count) != branches + 1)
        return error(site.offset, "expects " + std::to_string(branches + 1) +
                                      " operands (the branch index and one per branch), "
                                      "but has " +
                                      std::to_string(count) + " operands");
    return Status::ok();
}

// The operands against to_apply's parameters, num_carries and the scan dimension.
Status Parser::checkScan(const Site& site) {
    HloInstruction* instruction = site.instruction;
    const int64_t count = instruction->operandCount();
    auto operandShape = [&](int64_t i) -> const Shape& { return instruction->operand(i)->shape(); };
    const HloComputation* body = instruction->toApply();
    if (body && body->parameterCount() != count)
        return error(site.offset, "expects " + std::to_string(count) +
                                      " operands to match the number of parameters of "
                                      "to_apply, but to_apply has " +
                                      std::to_string(body->parameterCount()) +
                                      " parameters");
    int64_t carries = 0;
    if (auto text = instruction->attribute("num_carries")) {
        if (!parseInt64(*text, &carries) || carries < 0)
            return error(site.offset, "num_carries must be a non-negative integer");
        if (carries > count)
            return error(site.offset, "expects at least " + std::to_string(carries) +
                                          " operands to match the number of carries, but "
                                          "has " +
                                          std::to_string(count) + " operands");
    }
    // The dimension is the inputs' (the operands before the carries).
    if (instruction->dimensions().size() == 1 && count > carries) {
        int64_t dim = instruction->dimensions(0);
        int64_t rank = operandShape(0).rank();
        if (dim < 0 || dim >= rank)
            return error(site.offset, "scan dimension " + std::to_string(dim) +
                                          " is out of range for an operand of rank " +
                                          std::to_string(rank));
    }
    return Status::ok();
}

// operand_layout_constraints={shape, ...}: one shape per operand, each
// compatible with it.
Status Parser::checkOperandLayoutConstraints(const Site& site) {
    HloInstruction* instruction = site.instruction;
    const int64_t count = instruction->operandCount();
    auto operandShape = [&](int64_t i) -> const Shape& { return instruction->operand(i)->shape(); };
    auto constraints = instruction->attribute("operand_layout_constraints");
    if (!constraints) return Status::ok();
    std::string text(*constraints);
    HloParseOptions options;
    options.fileName = m_options.fileName;
    Parser sub(text, 0, text.size(), options);
    std::vector<Shape> shapes;
    Status status = [&]() -> Status {
        HLO_RETURN_IF_ERROR(sub.expectToken(TokenKind::kLbrace, "'{'"));
        if (sub.m_lexer.consumeIf(TokenKind::kRbrace)) return Status::ok();
        while (true) {
            shapes.emplace_back();
            HLO_RETURN_IF_ERROR(sub.parseShape(&shapes.back()));
            Token next = sub.m_lexer.next();
            if (next.kind == TokenKind::kComma) continue;
            if (next.kind == TokenKind::kRbrace) return Status::ok();
            return sub.expected("',' or '}' in a shape list", next);
        }
    }();
    if (!status.isOk())
        return error(site.offset,
                     "malformed operand_layout_constraints: " + status.message());
    if (static_cast<int64_t>(shapes.size()) != count)
        return error(site.offset, "Expected " + std::to_string(count) +
                                      " operand layout constraints, " +
                                      std::to_string(shapes.size()) + " given");
    for (int64_t i = 0; i < count; ++i) {
        const Shape& constraint = shapes[static_cast<size_t>(i)];
        if (!shapesCompatible(constraint, operandShape(i)))
            return error(site.offset, "Operand layout constraint shape " +
                                          shapeWithLayoutString(constraint) +
                                          " for operand " + std::to_string(i) +
                                          " is not compatible with operand shape " +
                                          shapeWithLayoutString(operandShape(i)));
    }
    return Status::ok();
}

Status Parser::checkAsync(const Site& site) {
    using O = HloOpcode;
    const HloInstruction* instruction = site.instruction;
    const O opcode = instruction->opcode();
    if (opcode == O::kAsyncStart) return Status::ok();
    const HloInstruction* previous = instruction->operand(0);
    if (previous->opcode() != O::kAsyncStart && previous->opcode() != O::kAsyncUpdate)
        return error(site.offset,
                     "AsyncUpdate and AsyncDone expect an asynchronous operation as their first "
                     "operand.");
    // The async-start of the chain: sites are checked in text order, so the
    // previous op's start is usually known already (forward references can
    // make chains out of order or even cycles; those walk, bounded).
    const HloInstruction* start = previous;
    if (previous->opcode() == O::kAsyncUpdate) {
        auto known = m_asyncStarts.find(previous);
        if (known != m_asyncStarts.end()) {
            start = known->second;
        } else {
            for (int steps = 0; start->opcode() == O::kAsyncUpdate && steps < 1000; ++steps) {
                if (start->operandCount() < 1) break;
                start = start->operand(0);
            }
        }
    }
    m_asyncStarts[instruction] = start;
    auto wrappedOpcode = [](const HloInstruction* op) -> std::optional<O> {
        if (op->extra() && op->extra()->asyncWrappedOpcode) return op->extra()->asyncWrappedOpcode;
        if (const HloComputation* called = op->calledComputation("calls"))
            if (called->root()) return called->root()->opcode();
        return std::nullopt;
    };
    if (instruction->extra() && instruction->extra()->asyncWrappedOpcode) {
        O mine = *instruction->extra()->asyncWrappedOpcode;
        std::optional<O> theirs = wrappedOpcode(previous);
        if (!theirs && start != previous) theirs = wrappedOpcode(start);
        if (theirs && *theirs != mine)
            return error(site.offset, "Expect async wrapped opcode to be " +
                                          std::string(hloOpcodeString(*theirs)) + ", but got " +
                                          std::string(hloOpcodeString(mine)));
    }
    if (auto thread = instruction->attribute("async_execution_thread")) {
        std::string expected = "main";
        if (start->opcode() == O::kAsyncStart)
            if (auto startThread = start->attribute("async_execution_thread"))
                expected = unquoteAttributeString(*startThread);
        std::string mine = unquoteAttributeString(*thread);
        if (mine != expected)
            return error(site.offset,
                         "Expect async_execution_thread to be " + expected + ", but got " + mine);
    }
    if (const HloComputation* mine = instruction->calledComputation("calls")) {
        const HloComputation* theirs = start->calledComputation("calls");
        if (theirs != nullptr && theirs != mine)
            return error(site.offset, "Expect async_wrapped_computation to be " + theirs->name() +
                                          ", but got " + mine->name());
    }
    return Status::ok();
}

// ---------------------------------------------------------------------------
// Resolution

Status Parser::resolveOperand(ComputationState& state, uint32_t user, OperandRef& ref,
                              std::vector<uint32_t>& created, HloInstruction** out) {
    uint32_t target = ref.target;
    if (target == kNone) {
        target = state.names.find(ref.name);
        if (target == kNone)
            return error(ref.offset, "instruction does not exist: " + std::string(ref.name));
    }
    if (target == user)
        return error(ref.offset,
                     "instruction " + std::string(ref.name) + " cannot be an operand of itself");
    for (uint32_t k = 0; k < ref.gteCount; ++k) {
        int64_t tupleIndex = state.gteIndices[ref.gteBegin + k];
        auto key = std::make_pair(target, tupleIndex);
        auto cached = m_gteCache.find(key);
        if (cached != m_gteCache.end()) {
            target = cached->second;
            continue;
        }
        HloInstruction* base = state.pending[target].instruction.get();
        std::string name = base->name() + "_" + std::to_string(tupleIndex);
        if (state.names.contains(name)) {
            int64_t& suffix = m_nameSuffixes[name];
            std::string candidate;
            do {
                candidate = name + "." + std::to_string(++suffix);
            } while (state.names.contains(candidate));
            name = std::move(candidate);
        }
        PendingInstruction gte;
        gte.instruction =
            std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, std::move(name), Shape());
        gte.instruction->setTupleIndex(tupleIndex);
        gte.instruction->appendOperand(base);
        gte.generated = true;
        gte.opcodeOffset = ref.offset;
        m_inferSites.push_back({gte.instruction.get(), ref.offset, 0});
        uint32_t gteIndex = static_cast<uint32_t>(state.pending.size());
        state.names.insert(gte.instruction->name(), gteIndex);
        state.pending.push_back(std::move(gte));
        created.push_back(gteIndex);
        m_gteCache.emplace(key, gteIndex);
        target = gteIndex;
    }
    HloInstruction* operand = state.pending[target].instruction.get();
    HloInstruction* userInstruction = state.pending[user].instruction.get();
    if (ref.declaredShapeOffset != kNoOffset) {
        if (operand->shape().isValid()) {
            HLO_RETURN_IF_ERROR(checkDeclaredShape(ref.declaredShapeOffset, operand));
        } else {
            m_operandShapeChecks.push_back(
                {userInstruction, ref.declaredShapeOffset,
                 static_cast<uint32_t>(userInstruction->operandCount())});
        }
    }
    *out = operand;
    return Status::ok();
}

Status Parser::finishComputation(ComputationState& state, HloComputation* computation) {
    const uint32_t originalCount = static_cast<uint32_t>(state.pending.size());
    m_gteCache.clear();
    m_nameSuffixes.clear();
    // Names of nested instructions: `<opcode>.anon`, made unique.
    for (uint32_t i = 0; i < originalCount; ++i) {
        PendingInstruction& pending = state.pending[i];
        if (!pending.anonymous) continue;
        std::string base = std::string(hloOpcodeString(pending.instruction->opcode())) + ".anon";
        std::string name = base;
        if (state.names.contains(name)) {
            int64_t& suffix = m_nameSuffixes[base];
            do {
                name = base + "." + std::to_string(++suffix);
            } while (state.names.contains(name));
        }
        pending.instruction->setName(std::move(name));
        state.names.insert(pending.instruction->name(), i);
    }
    // Generated get-tuple-elements go right before their first user; reserve
    // so that `pending` references stay valid.
    state.pending.reserve(originalCount + state.gteIndices.size());
    std::vector<uint32_t> order;
    order.reserve(originalCount + state.gteIndices.size());
    std::vector<uint32_t> created;
    for (uint32_t i = 0; i < originalCount; ++i) {
        created.clear();
        HloInstruction* instruction = state.pending[i].instruction.get();
        const uint32_t begin = state.pending[i].operandBegin;
        const uint32_t end = state.pending[i].operandEnd;
        for (uint32_t k = begin; k < end; ++k) {
            HloInstruction* operand = nullptr;
            HLO_RETURN_IF_ERROR(resolveOperand(state, i, state.operands[k], created, &operand));
            instruction->appendOperand(operand);
        }
        for (uint32_t k = state.pending[i].controlBegin; k < state.pending[i].controlEnd; ++k) {
            const NameRef& ref = state.controls[k];
            uint32_t found = state.names.find(ref.name);
            if (found == kNone)
                return error(ref.offset,
                             "instruction '" + std::string(ref.name) + "' is not defined");
            state.pending[found].instruction->addControlDependencyTo(instruction);
        }
        order.insert(order.end(), created.begin(), created.end());
        order.push_back(i);
    }
    HloInstruction* root =
        state.pending[state.root != kNone ? state.root : originalCount - 1].instruction.get();
    for (uint32_t index : order)
        computation->addInstruction(std::move(state.pending[index].instruction));
    computation->setRoot(root);
    return Status::ok();
}

Status Parser::finishModule(HloModule* module) {
    for (const CalledRef& ref : m_calledRefs) {
        auto it = m_computationNames.find(ref.name);
        if (it == m_computationNames.end())
            return error(ref.offset, "computation does not exist: " + std::string(ref.name));
        ref.instruction->mutableCalledComputationAttributes()[ref.attribute]
            .computations[ref.slot] = it->second.first;
    }
    // Shape inference and everything after parsing walk called computations: a computation
    // that calls itself is an error at the reference that closes the cycle.
    if (const auto cycle = findCallCycle(m_computations)) {
        for (const CalledRef& ref : m_calledRefs)
            if (ref.instruction == cycle->instruction && ref.name == cycle->called->name())
                return error(ref.offset, "computation " + cycle->called->name() +
                                             " is called recursively (" + cycle->path +
                                             "): a computation may not call itself, directly or through others");
    }
    HloComputation* entry = m_entry ? m_entry : m_computations.back().get();
    if (!m_inlineComputations.empty()) {
        std::unordered_set<std::string> taken;
        for (const auto& computation : m_computations) taken.insert(computation->name());
        taken.erase("_");
        for (const auto& [name, value] : m_computationNames) taken.insert(std::string(name));
        int64_t suffix = 0;
        for (HloComputation* computation : m_inlineComputations) {
            std::string name = "_";
            while (taken.count(name)) name = "_." + std::to_string(++suffix);
            taken.insert(name);
            computation->setName(std::move(name));
        }
    }
    HLO_RETURN_IF_ERROR(inferShapes());
    HLO_RETURN_IF_ERROR(runChecks());
    for (const auto& computation : m_computations) {
        for (const auto& instruction : computation->instructions()) {
            if (m_options.setDefaultLayouts)
                instruction->mutableShape().setDefaultLayoutIfMissing();
            if (instruction->opcode() == HloOpcode::kFusion)
                if (HloComputation* fused = instruction->fusedComputation())
                    fused->setFusionInstruction(instruction.get());
        }
    }
    if (m_options.setDefaultLayouts && module->entryComputationLayout()) {
        ComputationLayout layout = *module->entryComputationLayout();
        for (Shape& shape : layout.parameters) shape.setDefaultLayoutIfMissing();
        layout.result.setDefaultLayoutIfMissing();
        module->setEntryComputationLayout(std::move(layout));
    }
    for (auto& computation : m_computations) {
        bool isEntry = computation.get() == entry;
        module->addComputation(std::move(computation), isEntry);
    }
    m_computations.clear();
    // `X-start` sugar becomes an async-start calling a computation around X
    // (the printer writes the sugar back).
    return wrapAsyncSugar(*module);
}

}  // namespace hloscope::hlo_parser_internal

namespace hloscope::hlo_parser_internal {

namespace {

inline uint64_t load64(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

// Byte equality for short keys without a library call.
inline bool equalBytes(const char* a, const char* b, size_t size) {
    while (size >= 8) {
        if (load64(a) != load64(b)) return false;
        a += 8;
        b += 8;
        size -= 8;
    }
    for (size_t i = 0; i < size; ++i)
        if (a[i] != b[i]) return false;
    return true;
}

uint32_t hashName(const char* data, size_t size) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (size * 0xC2B2AE3D27D4EB4Full);
    while (size >= 8) {
        h = (h ^ load64(data)) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 29;
        data += 8;
        size -= 8;
    }
    uint64_t tail = 0;
    for (size_t i = 0; i < size; ++i)
        tail |= static_cast<uint64_t>(static_cast<uint8_t>(data[i])) << (8 * i);
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 32;
    return static_cast<uint32_t>(h);
}

}  // namespace

uint32_t NameTable::find(std::string_view name) const {
    if (m_slots.empty()) return kNone;
    const uint32_t hash = hashName(name.data(), name.size());
    const size_t mask = m_slots.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        const Slot& slot = m_slots[i];
        if (slot.generation != m_generation) return kNone;
        if (slot.hash == hash && slot.size == name.size() &&
            equalBytes(slot.data, name.data(), name.size()))
            return slot.value;
    }
}

bool NameTable::insert(std::string_view name, uint32_t value) {
    if ((m_count + 1) * 2 > m_slots.size()) grow();
    const uint32_t hash = hashName(name.data(), name.size());
    const size_t mask = m_slots.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        Slot& slot = m_slots[i];
        if (slot.generation != m_generation) {
            slot = {name.data(), static_cast<uint32_t>(name.size()), hash, value, m_generation};
            ++m_count;
            return true;
        }
        if (slot.hash == hash && slot.size == name.size() &&
            equalBytes(slot.data, name.data(), name.size()))
            return false;
    }
}

void NameTable::clear() {
    m_count = 0;
    if (++m_generation == 0) {  // wrapped: really clear
        for (Slot& slot : m_slots) slot.generation = 0;
        m_generation = 1;
    }
}

void NameTable::grow() {
    std::vector<Slot> old;
    old.swap(m_slots);
    m_slots.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    const size_t mask = m_slots.size() - 1;
    const uint32_t generation = m_generation;
    for (const Slot& slot : old) {
        if (slot.generation != generation) continue;
        size_t i = slot.hash & mask;
        while (m_slots[i].generation == generation) i = (i + 1) & mask;
        m_slots[i] = slot;
    }
}

}  // namespace hloscope::hlo_parser_internal
