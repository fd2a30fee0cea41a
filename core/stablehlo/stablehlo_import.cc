#include "core/stablehlo/stablehlo_import.h"

#include <algorithm>
#include <cctype>

#include "core/io/input_limits.h"
#include "core/stablehlo/stablehlo_literal.h"

namespace hloscope::stablehlo {
namespace {

constexpr int kMaxCallDepth = 64;

bool isReturnOp(std::string_view name) {
    return name == "return" || name == "func.return" || name == "stablehlo.return" ||
           name == "mhlo.return";
}

const MlirAttr* findAttr(const std::vector<NamedAttr>& attrs, std::string_view name) {
    for (const NamedAttr& a : attrs)
        if (a.name == name) return &a.value;
    return nullptr;
}

std::optional<int64_t> intAttr(const std::vector<NamedAttr>& attrs, std::string_view name) {
    const MlirAttr* a = findAttr(attrs, name);
    int64_t value = 0;
    if (a == nullptr || a->kind != MlirAttr::Kind::kInt || !parseIntegerToken(a->number, value))
        return std::nullopt;
    return value;
}

}  // namespace

// ---------------------------------------------------------------------------
// HloBuilder

HloInstruction* HloBuilder::add(HloOpcode opcode, Shape shape,
                                std::vector<HloInstruction*> operands) {
    shape.setDefaultLayoutIfMissing();
    auto instruction = std::make_unique<HloInstruction>(
        opcode, m_importer.nextName(hloOpcodeString(opcode)), std::move(shape));
    for (HloInstruction* operand : operands) instruction->appendOperand(operand);
    return m_computation->addInstruction(std::move(instruction));
}

HloInstruction* HloBuilder::unary(HloOpcode opcode, HloInstruction* x) {
    return add(opcode, x->shape(), {x});
}

HloInstruction* HloBuilder::binary(HloOpcode opcode, HloInstruction* a, HloInstruction* b) {
    return add(opcode, a->shape(), {a, b});
}

HloInstruction* HloBuilder::compare(HloInstruction* a, HloInstruction* b,
                                    ComparisonDirection direction, ComparisonType type) {
    Shape shape = a->shape();
    shape.setElementType(PrimitiveType::PRED);
    HloInstruction* c = add(HloOpcode::kCompare, std::move(shape), {a, b});
    c->mutableExtra().comparisonDirection = direction;
    c->mutableExtra().comparisonType = type;
    return c;
}

HloInstruction* HloBuilder::select(HloInstruction* pred, HloInstruction* onTrue,
                                   HloInstruction* onFalse) {
    if (pred->shape().isScalar() && !onTrue->shape().isScalar() && onTrue->shape().isArray()) {
        Shape predShape = onTrue->shape();
        predShape.setElementType(PrimitiveType::PRED);
        predShape.clearLayout();
        pred = broadcast(pred, predShape, {});
    }
    return add(HloOpcode::kSelect, onTrue->shape(), {pred, onTrue, onFalse});
}

HloInstruction* HloBuilder::clamp(HloInstruction* low, HloInstruction* x, HloInstruction* high) {
    return add(HloOpcode::kClamp, x->shape(), {low, x, high});
}

HloInstruction* HloBuilder::convert(HloInstruction* x, PrimitiveType type) {
    Shape shape = x->shape();
    shape.setElementType(type);
    return add(HloOpcode::kConvert, std::move(shape), {x});
}

HloInstruction* HloBuilder::bitcastConvert(HloInstruction* x, PrimitiveType type) {
    Shape shape = x->shape();
    shape.setElementType(type);
    return add(HloOpcode::kBitcastConvert, std::move(shape), {x});
}

HloInstruction* HloBuilder::constant(Shape shape, std::string literalText) {
    HloInstruction* c = add(HloOpcode::kConstant, std::move(shape), {});
    c->setLiteralText(std::move(literalText));
    return c;
}

HloInstruction* HloBuilder::scalar(PrimitiveType type, double value) {
    return constant(Shape::makeScalar(type), formatScalar(type, value));
}

HloInstruction* HloBuilder::scalarInt(PrimitiveType type, int64_t value) {
    return constant(Shape::makeScalar(type), formatInteger(type, value));
}

HloInstruction* HloBuilder::constantLike(double value, HloInstruction* like) {
    HloInstruction* s = scalar(like->shape().elementType(), value);
    if (like->shape().isScalar()) return s;
    return broadcast(s, like->shape(), {});
}

HloInstruction* HloBuilder::constantLikeInt(int64_t value, HloInstruction* like) {
    HloInstruction* s = scalarInt(like->shape().elementType(), value);
    if (like->shape().isScalar()) return s;
    return broadcast(s, like->shape(), {});
}

HloInstruction* HloBuilder::broadcast(HloInstruction* x, Shape shape,
                                      std::vector<int64_t> dimensions) {
    HloInstruction* b = add(HloOpcode::kBroadcast, std::move(shape), {x});
    b->setDimensions(std::move(dimensions));
    return b;
}

HloInstruction* HloBuilder::reshape(HloInstruction* x, Shape shape) {
    return add(HloOpcode::kReshape, std::move(shape), {x});
}

HloInstruction* HloBuilder::tuple(const std::vector<HloInstruction*>& elements) {
    std::vector<Shape> shapes;
    for (HloInstruction* e : elements) shapes.push_back(e->shape());
    return add(HloOpcode::kTuple, Shape::makeTuple(std::move(shapes)), elements);
}

HloInstruction* HloBuilder::getTupleElement(HloInstruction* tuple, int64_t index) {
    HloInstruction* g = add(HloOpcode::kGetTupleElement, tuple->shape().tupleShape(index), {tuple});
    g->setTupleIndex(index);
    return g;
}

std::vector<HloInstruction*> HloBuilder::unpack(HloInstruction* tuple) {
    std::vector<HloInstruction*> values;
    for (int64_t i = 0; i < tuple->shape().tupleCount(); ++i)
        values.push_back(getTupleElement(tuple, i));
    return values;
}

// ---------------------------------------------------------------------------
// Importer

Importer::Importer(const ModuleAst& ast, std::string fileName, std::string defaultName)
    : m_ast(ast), m_fileName(std::move(fileName)), m_defaultName(std::move(defaultName)) {}

std::string Importer::nextName(std::string_view base) {
    // XLA's name sanitisation: characters outside [A-Za-z0-9_.-] become '_',
    // and a leading digit gets a '_' prefix.
    std::string name;
    name.reserve(base.size() + 8);
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base.front()))) name += '_';
    for (char c : base) {
        bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
        name += ok ? c : '_';
    }
    return name + "." + std::to_string(m_nextId++);
}

StatusOr<Shape> Importer::shapeOf(const MlirType& type, TextPos pos) const {
    if (!type.unsupported.empty())
        return errorAt(pos, StatusCode::kUnimplemented, "unsupported type: " + type.unsupported);
    switch (type.kind) {
        case MlirType::Kind::kTensor: {
            Shape shape(type.elementType, type.dims);
            for (size_t i = 0; i < type.dims.size(); ++i) {
                bool bounded = i < type.bounds.size() && type.bounds[i] >= 0;
                if (type.dims[i] == Shape::kUnboundedSize) {
                    if (bounded) shape.mutableDimensions()[i] = type.bounds[i];
                    shape.setDynamicDimension(static_cast<int64_t>(i), true);
                }
            }
            // Rank and size (bounds included), before anything of this shape is allocated.
            if (Status limited = limits::checkShapeLimits(shape); !limited.isOk())
                return errorAt(pos, limited.code(),
                               "tensor type " + type.text + ": " + limited.message());
            shape.setDefaultLayoutIfMissing();
            return shape;
        }
    case MlirType::Kind::kTuple: {
        std::vector<Shape> elements;
        for (const MlirType& e : type.elements) {
            HLO_ASSIGN_OR_RETURN(Shape s, shapeOf(e, pos));
            elements.push_back(std::move(s));
        }
        return Shape::makeTuple(std::move(elements));
    }
    case MlirType::Kind::kToken: return Shape::makeToken();
    default: break;
    }
    return errorAt(pos, StatusCode::kUnimplemented,
                   "unsupported type '" + type.text + "' (only tensors, tuples and tokens)");
}

const std::vector<int64_t>* Importer::constantInts(const HloInstruction* instruction) const {
    auto it = m_constantInts.find(instruction);
    return it == m_constantInts.end() ? nullptr : &it->second;
}

void Importer::recordConstantInts(const HloInstruction* instruction, std::vector<int64_t> values) {
    m_constantInts[instruction] = std::move(values);
}

HloComputation* Importer::finishComputation(std::unique_ptr<HloComputation> computation,
                                            bool isEntry) {
    return m_module->addComputation(std::move(computation), isEntry);
}

StatusOr<std::unique_ptr<HloModule>> Importer::run() {
    std::string name = m_ast.name.empty() ? m_defaultName : m_ast.name;
    m_module = std::make_unique<HloModule>(name);
    const Func* entry = nullptr;
    const Func* lastPublic = nullptr;
    int publicCount = 0;
    for (const Func& func : m_ast.funcs) {
        if (!m_funcs.emplace(func.name, &func).second)
            return invalidAt(func.pos, "redefinition of function @" + func.name);
        if (func.name == "main") entry = &func;
        if (func.visibility == "public" && func.hasBody) {
            ++publicCount;
            lastPublic = &func;
        }
    }
    if (m_ast.funcs.empty()) return invalidAt(m_ast.pos, "no function in module");
    if (entry == nullptr) entry = lastPublic;
    if (entry == nullptr) entry = &m_ast.funcs.back();
    (void)publicCount;
    if (!entry->hasBody)
        return errorAt(entry->pos, StatusCode::kUnimplemented,
                       "entry function @" + entry->name + " has no body");
    if (m_ast.name.empty()) m_module->setName(entry->name);

    for (const Func& func : m_ast.funcs) {
        if (&func == entry || !func.hasBody) continue;
        HLO_RETURN_IF_ERROR(functionComputation(func.name, func.pos).status());
    }
    HLO_ASSIGN_OR_RETURN(HloComputation * entryComputation, lowerFunction(*entry, true));

    if (auto n = intAttr(m_ast.attributes, "mhlo.num_replicas")) m_module->setReplicaCount(*n);
    if (auto n = intAttr(m_ast.attributes, "mhlo.num_partitions")) m_module->setNumPartitions(*n);
    ComputationLayout layout;
    for (HloInstruction* p : entryComputation->parameters())
        if (p != nullptr) layout.parameters.push_back(p->shape());
    layout.result = entryComputation->root()->shape();
    m_module->setEntryComputationLayout(std::move(layout));
    return std::move(m_module);
}

StatusOr<HloComputation*> Importer::functionComputation(const std::string& name, TextPos pos) {
    if (auto it = m_lowered.find(name); it != m_lowered.end()) return it->second;
    auto it = m_funcs.find(name);
    if (it == m_funcs.end()) return invalidAt(pos, "call to undefined function @" + name);
    if (m_inProgress.count(name) != 0)
        return errorAt(pos, StatusCode::kUnimplemented,
                       "recursive call to @" + name + " (HLO has no recursion)");
    if (!it->second->hasBody)
        return errorAt(pos, StatusCode::kUnimplemented,
                       "call to external function @" + name + " (declaration without body)");
    return lowerFunction(*it->second, false);
}

StatusOr<HloComputation*> Importer::lowerFunction(const Func& func, bool isEntry) {
    if (m_depth >= kMaxCallDepth)
        return invalidAt(func.pos, "functions nested deeper than " + std::to_string(kMaxCallDepth));
    ++m_depth;
    m_inProgress.insert(func.name);
    auto computation = std::make_unique<HloComputation>(nextName(func.name));
    HloBuilder b(*this, computation.get());
    Scope scope;
    scope.computation = computation.get();
    for (size_t i = 0; i < func.args.size(); ++i) {
        const BlockArg& arg = func.args[i];
        HLO_ASSIGN_OR_RETURN(Shape shape, shapeOf(arg.type, func.pos));
        shape.setDefaultLayoutIfMissing();
        auto param = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, nextName("Arg_" + std::to_string(i)), std::move(shape));
        param->setParameterNumber(static_cast<int64_t>(i));
        if (const MlirAttr* sharding = findAttr(arg.attributes, "mhlo.sharding");
            sharding != nullptr && sharding->kind == MlirAttr::Kind::kString &&
            !sharding->str.empty())
            param->setAttribute("sharding", sharding->str);
        HloInstruction* raw = computation->addInstruction(std::move(param));
        if (!arg.name.empty()) scope.values[arg.name] = {raw};
    }
    if (func.body.blocks.size() != 1)
        return errorAt(func.pos, StatusCode::kUnimplemented,
                       "function @" + func.name + " has several blocks (control flow graph)");
    HLO_ASSIGN_OR_RETURN(std::vector<HloInstruction*> results,
                         lowerBlock(func.body.blocks.front(), scope, b));
    if (results.size() != func.resultTypes.size())
        return invalidAt(func.pos, "function @" + func.name + " returns " +
                                       std::to_string(results.size()) + " values but declares " +
                                       std::to_string(func.resultTypes.size()) + " results");
    HloInstruction* root = results.size() == 1 ? results.front() : b.tuple(results);
    computation->setRoot(root);
    HloComputation* raw = finishComputation(std::move(computation), isEntry);
    m_lowered[func.name] = raw;
    m_inProgress.erase(func.name);
    --m_depth;
    return raw;
}

StatusOr<std::vector<HloInstruction*>> Importer::lowerBlock(const Block& block, Scope& scope,
                                                            HloBuilder& b) {
    for (const Op& op : block.ops) {
        if (isReturnOp(op.name)) {
            std::vector<HloInstruction*> values;
            for (const ValueRef& ref : op.operands) {
                HLO_ASSIGN_OR_RETURN(HloInstruction * v, lookup(ref, scope, b));
                values.push_back(v);
            }
            return values;
        }
        HLO_RETURN_IF_ERROR(lowerOperation(op, scope, b));
    }
    TextPos pos = block.ops.empty() ? TextPos{} : block.ops.back().pos;
    return invalidAt(pos, "block does not end with a return operation");
}

Status Importer::lowerOperation(const Op& op, Scope& scope, HloBuilder& b) {
    std::vector<HloInstruction*> operands;
    operands.reserve(op.operands.size());
    for (const ValueRef& ref : op.operands) {
        HLO_ASSIGN_OR_RETURN(HloInstruction * v, lookup(ref, scope, b));
        operands.push_back(v);
    }
    int64_t resultCount = op.resultCount();
    if (op.hasSignature && static_cast<int64_t>(op.resultTypes.size()) != resultCount)
        return invalidAt(op.pos, "'" + op.name + "' has " + std::to_string(resultCount) +
                                     " results but " + std::to_string(op.resultTypes.size()) +
                                     " result types");
    if (!op.hasSignature && resultCount > 0)
        return invalidAt(op.pos, "'" + op.name + "' needs a type signature (': ...')");
    std::vector<Shape> resultShapes;
    for (const MlirType& type : op.resultTypes) {
        HLO_ASSIGN_OR_RETURN(Shape shape, shapeOf(type, op.pos));
        resultShapes.push_back(std::move(shape));
    }
    OpContext ctx{*this, b, scope, op, std::move(operands), std::move(resultShapes)};
    StatusOr<std::vector<HloInstruction*>> results =
        op.name.starts_with("chlo.") ? lowerChloOp(ctx) : lowerStableHloOp(ctx);
    if (!results.isOk()) {
        const Status& s = results.status();
        if (s.location().has_value()) return s;
        return s.withLocation(location(op.pos));
    }
    if (static_cast<int64_t>(results->size()) != resultCount)
        return Status(StatusCode::kInternal,
                      "lowering of '" + op.name + "' produced " +
                          std::to_string(results->size()) + " values for " +
                          std::to_string(resultCount) + " results",
                      location(op.pos));
    size_t next = 0;
    for (const ResultGroup& group : op.results) {
        std::vector<HloInstruction*> values(results->begin() + static_cast<std::ptrdiff_t>(next),
                                            results->begin() +
                                                static_cast<std::ptrdiff_t>(next + group.count));
        next += static_cast<size_t>(group.count);
        if (!scope.values.emplace(group.name, std::move(values)).second)
            return invalidAt(op.pos, "redefinition of value %" + group.name);
    }
    return Status::ok();
}

StatusOr<HloInstruction*> Importer::lookup(const ValueRef& ref, Scope& scope, HloBuilder& b) {
    for (const Scope* s = &scope; s != nullptr; s = s->parent) {
        auto it = s->values.find(ref.name);
        if (it == s->values.end()) continue;
        const std::vector<HloInstruction*>& group = it->second;
        if (!ref.hasIndex && group.size() != 1)
            return invalidAt(ref.pos, "%" + ref.name + " names " + std::to_string(group.size()) +
                                          " results; use %" + ref.name + "#<index>");
        if (ref.index < 0 || static_cast<size_t>(ref.index) >= group.size())
            return invalidAt(ref.pos, "result index " + std::to_string(ref.index) +
                                          " out of range for %" + ref.name);
        HloInstruction* value = group[static_cast<size_t>(ref.index)];
        if (s->computation == b.computation()) return value;
        if (value->opcode() == HloOpcode::kConstant) {
            HloInstruction* clone = b.constant(value->shape(), value->literalText());
            if (const std::vector<int64_t>* ints = constantInts(value))
                recordConstantInts(clone, *ints);
            if (group.size() == 1) scope.values[ref.name] = {clone};
            return clone;
        }
        return errorAt(ref.pos, StatusCode::kUnimplemented,
                       "%" + ref.name +
                           " is defined outside this region; HLO computations of this kind "
                           "cannot capture values (only constants are cloned in)");
    }
    return invalidAt(ref.pos, "use of undefined value %" + ref.name);
}

StatusOr<std::vector<HloInstruction*>> Importer::lookupGroup(const std::string& name, TextPos pos,
                                                             Scope& scope, HloBuilder& b) {
    for (const Scope* s = &scope; s != nullptr; s = s->parent) {
        auto it = s->values.find(name);
        if (it == s->values.end()) continue;
        std::vector<HloInstruction*> values;
        for (size_t i = 0; i < it->second.size(); ++i) {
            ValueRef ref{name, static_cast<int64_t>(i), true, pos};
            HLO_ASSIGN_OR_RETURN(HloInstruction * v, lookup(ref, scope, b));
            values.push_back(v);
        }
        return values;
    }
    return invalidAt(pos, "use of undefined value %" + name);
}

Status Importer::resolveCaptures(const std::vector<const Region*>& regions, TextPos pos,
                                 Scope& scope, HloBuilder& b, RegionSpec& spec) {
    std::set<std::string> seen;
    for (const Region* region : regions) {
        for (const std::string& name : capturedNames(*region)) {
            if (!seen.insert(name).second) continue;
            HLO_ASSIGN_OR_RETURN(std::vector<HloInstruction*> values,
                                 lookupGroup(name, pos, scope, b));
            spec.captureNames.push_back(name);
            spec.captureGroupSizes.push_back(values.size());
            spec.captureValues.insert(spec.captureValues.end(), values.begin(), values.end());
        }
    }
    return Status::ok();
}

void Importer::collectNames(const Region& region, std::set<std::string>& defined,
                            std::vector<std::string>& used) const {
    for (const Block& block : region.blocks) {
        for (const BlockArg& arg : block.args) defined.insert(arg.name);
        for (const Op& op : block.ops) {
            for (const ValueRef& ref : op.operands) used.push_back(ref.name);
            for (const Region& nested : op.regions) collectNames(nested, defined, used);
            for (const ResultGroup& group : op.results) defined.insert(group.name);
        }
    }
}

std::vector<std::string> Importer::capturedNames(const Region& region) const {
    std::set<std::string> defined;
    std::vector<std::string> used;
    collectNames(region, defined, used);
    std::vector<std::string> captured;
    std::set<std::string> seen;
    for (const std::string& name : used)
        if (defined.count(name) == 0 && seen.insert(name).second) captured.push_back(name);
    return captured;
}

StatusOr<HloComputation*> Importer::lowerRegion(const Region& region, const Scope& outer,
                                                const RegionSpec& spec) {
    if (region.blocks.size() != 1)
        return errorAt(region.pos, StatusCode::kUnimplemented,
                       "regions with several blocks are not supported");
    const Block& block = region.blocks.front();
    auto computation =
        std::make_unique<HloComputation>(nextName(spec.nameHint + "_" + std::to_string(m_nextRegion++)));
    HloBuilder b(*this, computation.get());
    Scope scope;
    scope.parent = &outer;
    scope.computation = computation.get();

    std::vector<Shape> shapes;
    for (const BlockArg& arg : block.args) {
        HLO_ASSIGN_OR_RETURN(Shape shape, shapeOf(arg.type, region.pos));
        shapes.push_back(std::move(shape));
    }
    for (HloInstruction* captured : spec.captureValues) shapes.push_back(captured->shape());

    auto makeParameter = [&](int64_t number, Shape shape) {
        shape.setDefaultLayoutIfMissing();
        auto param = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, nextName("Arg_" + std::to_string(number)), std::move(shape));
        param->setParameterNumber(number);
        return computation->addInstruction(std::move(param));
    };
    std::vector<HloInstruction*> values;
    if (spec.tupleParameter) {
        if (shapes.size() == 1) {
            values.push_back(makeParameter(0, shapes.front()));
        } else {
            HloInstruction* param = makeParameter(0, Shape::makeTuple(shapes));
            values = b.unpack(param);
        }
    } else {
        for (size_t i = 0; i < shapes.size(); ++i)
            values.push_back(makeParameter(static_cast<int64_t>(i), shapes[i]));
    }
    for (size_t i = 0; i < block.args.size(); ++i) scope.values[block.args[i].name] = {values[i]};
    std::vector<HloInstruction*> capturedInside(
        values.begin() + static_cast<std::ptrdiff_t>(block.args.size()), values.end());
    size_t next = 0;
    for (size_t i = 0; i < spec.captureNames.size(); ++i) {
        size_t count = i < spec.captureGroupSizes.size() ? spec.captureGroupSizes[i] : 1;
        if (next + count > capturedInside.size()) break;
        scope.values[spec.captureNames[i]] = std::vector<HloInstruction*>(
            capturedInside.begin() + static_cast<std::ptrdiff_t>(next),
            capturedInside.begin() + static_cast<std::ptrdiff_t>(next + count));
        next += count;
    }
    HLO_ASSIGN_OR_RETURN(std::vector<HloInstruction*> results, lowerBlock(block, scope, b));
    if (spec.passCapturesThrough)
        results.insert(results.end(), capturedInside.begin(), capturedInside.end());
    HloInstruction* root =
        results.size() == 1 && !spec.alwaysTupleRoot ? results.front() : b.tuple(results);
    computation->setRoot(root);
    return finishComputation(std::move(computation), false);
}

}  // namespace hloscope::stablehlo
