#include "compiler/layout/layout_assignment.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/text/hlo_parser.h"

namespace hloscope {

namespace {

// Instructions whose layouts are constraints: they keep their own layouts
// and need their operands' original layouts.
bool isPinned(const HloInstruction& instruction) {
    switch (instruction.opcode()) {
        case HloOpcode::kBitcast:
        case HloOpcode::kCopyStart:
        case HloOpcode::kInfeed:
        case HloOpcode::kOutfeed:
            return true;
        case HloOpcode::kCustomCall:
            return instruction.attribute("operand_layout_constraints").has_value() ||
                   instruction.attribute("output_to_operand_aliasing").has_value();
        default: {
            auto constrained = instruction.attribute("constrain_layout");
            return constrained && *constrained == "true";
        }
    }
}

// A bitcast whose result and operand are arrays of one element type and
// count, each without a layout or with a dense row-major one: the
// reinterpretation of row-major data, i.e. a reshape.
bool isRowMajorReshapeBitcast(const HloInstruction& instruction) {
    if (instruction.opcode() != HloOpcode::kBitcast || instruction.operandCount() != 1)
        return false;
    const Shape& result = instruction.shape();
    const Shape& operand = instruction.operand(0)->shape();
    if (!result.isArray() || !operand.isArray() || result.elementType() != operand.elementType() ||
        result.elementCount() != operand.elementCount())
        return false;
    auto rowMajor = [](const Shape& shape) {
        return !shape.hasLayout() ||
               (shape.layout().tiles().empty() &&
                shape.layout().minorToMajor() == Layout::descending(shape.rank()).minorToMajor());
    };
    return rowMajor(result) && rowMajor(operand);
}

// A custom-call's operand_layout_constraints={f32[2]{0}, ...}, parsed;
// nullopt when absent, malformed or not one shape per operand.
std::optional<std::vector<Shape>> operandLayoutConstraints(const HloInstruction& instruction) {
    auto text = instruction.attribute("operand_layout_constraints");
    if (!text) return std::nullopt;
    std::string_view body = *text;
    while (!body.empty() && body.front() == ' ') body.remove_prefix(1);
    while (!body.empty() && body.back() == ' ') body.remove_suffix(1);
    if (body.size() < 2 || body.front() != '{' || body.back() != '}') return std::nullopt;
    body = body.substr(1, body.size() - 2);
    std::vector<Shape> shapes;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= body.size(); ++i) {
        const char c = i < body.size() ? body[i] : ',';
        if (c == '{' || c == '[' || c == '(') ++depth;
        if (c == '}' || c == ']' || c == ')') --depth;
        if (c != ',' || depth != 0) continue;
        std::string_view piece = body.substr(start, i - start);
        start = i + 1;
        while (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
        if (piece.empty()) continue;
        auto shape = parseShape(piece);
        if (!shape.isOk()) return std::nullopt;
        shapes.push_back(std::move(*shape));
    }
    if (static_cast<int64_t>(shapes.size()) != instruction.operandCount()) return std::nullopt;
    return shapes;
}

bool isForwarding(HloOpcode opcode) {
    return opcode == HloOpcode::kTuple || opcode == HloOpcode::kGetTupleElement ||
           opcode == HloOpcode::kOptimizationBarrier || opcode == HloOpcode::kCopyDone;
}

std::vector<int64_t> reversed(std::vector<int64_t> v) {
    std::reverse(v.begin(), v.end());
    return v;
}

Layout effectiveLayout(const Shape& shape) {
    return shape.hasLayout() ? shape.layout() : Layout::descending(shape.rank());
}

// Layouts equal (recursively) ignoring memory spaces.
bool layoutsMatch(const Shape& a, const Shape& b) {
    if (a.isTuple() || b.isTuple()) {
        if (!a.isTuple() || !b.isTuple() || a.tupleCount() != b.tupleCount()) return false;
        for (int64_t i = 0; i < a.tupleCount(); ++i)
            if (!layoutsMatch(a.tupleShape(i), b.tupleShape(i))) return false;
        return true;
    }
    if (!a.isArray() || !b.isArray()) return true;
    Layout la = effectiveLayout(a), lb = effectiveLayout(b);
    la.setMemorySpace(0);
    lb.setMemorySpace(0);
    return la == lb;
}

// Copies the array layouts of `source` into `target` where the tuple
// structures agree.
void copyLayouts(Shape& target, const Shape& source) {
    if (target.isTuple()) {
        if (!source.isTuple() || source.tupleCount() != target.tupleCount()) return;
        for (int64_t i = 0; i < target.tupleCount(); ++i)
            copyLayouts(target.mutableTupleShapes()[static_cast<size_t>(i)], source.tupleShape(i));
        return;
    }
    if (target.isArray() && source.isArray() && source.rank() == target.rank() &&
        source.hasLayout())
        target.setLayout(source.layout());
}

class Assigner {
public:
    struct Event {
        std::string rule;
        const HloInstruction* before;
        const HloInstruction* after;
    };

    Assigner(HloModule& module, LayoutTarget target) : m_module(module), m_target(target) {}

    StatusOr<bool> run();
    const std::vector<Event>& events() const { return m_events; }
    int64_t copies() const { return m_copies; }

private:
    // Layout of an array leaf for minor_to_major `m2m`, keeping the leaf's
    // memory space and sub-byte element size.
    Layout leafLayout(const Shape& leaf, std::vector<int64_t> m2m) const {
        Layout layout = targetLayout(leaf, std::move(m2m), m_target);
        if (leaf.hasLayout()) {
            layout.setMemorySpace(leaf.layout().memorySpace());
            if (primitive_util::isSubByte(leaf.elementType()))
                layout.setElementSizeInBits(leaf.layout().elementSizeInBits());
        }
        return layout;
    }
    // Row-major; on tpu with the dimensions of size 1 moved most major (the
    // same element order, so still row-major in memory), so that the tiles
    // cover real dimensions: f32[1280,320,1,1] takes {1,0,3,2:T(8,128)}
    // (1.56 MiB) rather than {3,2,1,0:T(8,128)}, whose two size-1 minor
    // dimensions padded to an 8x128 tile would take 1.56 GiB.
    std::vector<int64_t> defaultMinorToMajor(const Shape& shape) const {
        std::vector<int64_t> m2m = Layout::descending(shape.rank()).minorToMajor();
        if (m_target != LayoutTarget::kTpu) return m2m;
        std::stable_partition(m2m.begin(), m2m.end(), [&](int64_t d) {
            return shape.dimensions()[static_cast<size_t>(d)] != 1;
        });
        return m2m;
    }
    Shape withMinorToMajor(const Shape& shape, std::vector<int64_t> m2m) const {
        Shape result = shape;
        result.setLayout(leafLayout(shape, std::move(m2m)));
        return result;
    }
    // The target default for every array leaf; with `keepExisting`, leaves
    // that have a layout keep it.
    Shape defaultShape(const Shape& shape, bool keepExisting = false) const {
        Shape result = shape;
        std::function<void(Shape&)> visit = [&](Shape& s) {
            if (s.isTuple()) {
                for (Shape& element : s.mutableTupleShapes()) visit(element);
            } else if (s.isArray() && !(keepExisting && s.hasLayout())) {
                s.setLayout(leafLayout(s, defaultMinorToMajor(s)));
            }
        };
        visit(result);
        return result;
    }
    // `base` with the layouts `constraint` sets (exactly) where it sets one.
    static Shape overlay(Shape base, const Shape& constraint) {
        copyLayouts(base, constraint);
        return base;
    }

    HloInstruction* convert(HloComputation& computation, HloInstruction* operand,
                            const Shape& required);
    void require(HloComputation& computation, HloInstruction* user, int64_t index,
                 const Shape& required);
    void requireRoot(HloComputation& computation, const Shape& required);
    Shape desiredShape(const HloInstruction& instruction, bool isEntry) const;
    void applyRequirements(HloComputation& computation, HloInstruction* instruction);
    void dotRequirements(HloComputation& computation, HloInstruction* dot);
    std::optional<std::vector<int64_t>> nhwc(const HloInstruction& convolution, int which) const;
    void setShape(HloInstruction* instruction, const Shape& shape);

    HloModule& m_module;
    LayoutTarget m_target;
    std::vector<Event> m_events;
    int64_t m_copies = 0;
    bool m_changed = false;
    // Original shapes of the operands of pinned instructions.
    std::unordered_map<const HloInstruction*, Shape> m_original;
    // Conversions made in the current computation: (operand, required) -> value.
    std::map<std::pair<HloInstruction*, std::string>, HloInstruction*> m_converted;
    // Instructions added to the current computation.
    std::unordered_set<const HloInstruction*> m_added;
};

// Places each added instruction right before its first user (added ones
// without users, such as a new root copy, at the end), so that the printed
// order (and a schedule) stays operands-first.
Status placeAddedInstructions(HloComputation& computation,
                              const std::unordered_set<const HloInstruction*>& added) {
    if (added.empty()) return Status::ok();
    std::vector<HloInstruction*> order;
    order.reserve(computation.instructions().size());
    std::unordered_set<const HloInstruction*> emitted;
    std::function<void(HloInstruction*)> emitAdded = [&](HloInstruction* instruction) {
        if (!added.count(instruction) || emitted.count(instruction)) return;
        emitted.insert(instruction);
        for (HloInstruction* operand : instruction->operands()) emitAdded(operand);
        order.push_back(instruction);
    };
    for (const auto& instruction : computation.instructions()) {
        if (added.count(instruction.get())) continue;
        for (HloInstruction* operand : instruction->operands()) emitAdded(operand);
        order.push_back(instruction.get());
    }
    for (const auto& instruction : computation.instructions()) emitAdded(instruction.get());
    return computation.setInstructionOrder(order);
}

HloInstruction* Assigner::convert(HloComputation& computation, HloInstruction* operand,
                                  const Shape& required) {
    if (layoutsMatch(operand->shape(), required)) return operand;
    const auto key = std::make_pair(operand, required.toString());
    if (auto it = m_converted.find(key); it != m_converted.end()) return it->second;
    HloInstruction* result = operand;
    if (operand->shape().isArray()) {
        Shape shape = operand->shape();
        Layout layout = required.layout();
        layout.setMemorySpace(effectiveLayout(shape).memorySpace());
        shape.setLayout(std::move(layout));
        auto copy = std::make_unique<HloInstruction>(HloOpcode::kCopy,
                                                     m_module.uniqueInstructionName("copy"), shape);
        copy->appendOperand(operand);
        result = computation.addInstruction(std::move(copy));
        m_added.insert(result);
        ++m_copies;
        m_events.push_back({"insert-copy", operand, result});
    } else if (operand->shape().isTuple() && required.isTuple() &&
               required.tupleCount() == operand->shape().tupleCount()) {
        std::vector<HloInstruction*> elements;
        std::vector<Shape> shapes;
        for (int64_t i = 0; i < operand->shape().tupleCount(); ++i) {
            auto gte = std::make_unique<HloInstruction>(
                HloOpcode::kGetTupleElement, m_module.uniqueInstructionName("get-tuple-element"),
                operand->shape().tupleShape(i));
            gte->setTupleIndex(i);
            gte->appendOperand(operand);
            HloInstruction* element = computation.addInstruction(std::move(gte));
            m_added.insert(element);
            element = convert(computation, element, required.tupleShape(i));
            elements.push_back(element);
            shapes.push_back(element->shape());
        }
        auto tuple = std::make_unique<HloInstruction>(
            HloOpcode::kTuple, m_module.uniqueInstructionName("tuple"), Shape::makeTuple(shapes));
        for (HloInstruction* element : elements) tuple->appendOperand(element);
        result = computation.addInstruction(std::move(tuple));
        m_added.insert(result);
    }
    m_converted.emplace(key, result);
    return result;
}

void Assigner::require(HloComputation& computation, HloInstruction* user, int64_t index,
                       const Shape& required) {
    HloInstruction* operand = user->operand(index);
    HloInstruction* converted = convert(computation, operand, required);
    if (converted != operand) {
        user->replaceOperand(index, converted);
        m_changed = true;
    }
}

void Assigner::requireRoot(HloComputation& computation, const Shape& required) {
    HloInstruction* root = computation.root();
    if (!root || layoutsMatch(root->shape(), required)) return;
    if (root->opcode() == HloOpcode::kTuple && root->userCount() == 0 && required.isTuple() &&
        required.tupleCount() == root->operandCount()) {
        for (int64_t i = 0; i < root->operandCount(); ++i)
            require(computation, root, i, required.tupleShape(i));
        std::vector<Shape> shapes;
        for (const HloInstruction* operand : root->operands()) shapes.push_back(operand->shape());
        Shape shape = root->shape();
        copyLayouts(shape, Shape::makeTuple(shapes));
        setShape(root, shape);
        return;
    }
    HloInstruction* converted = convert(computation, root, required);
    if (converted != root) {
        computation.setRoot(converted);
        m_changed = true;
    }
}

void Assigner::setShape(HloInstruction* instruction, const Shape& shape) {
    if (instruction->shape() == shape) return;
    instruction->setShape(shape);
    m_events.push_back({"assign-layout", instruction, instruction});
    m_changed = true;
}

// NHWC-style physical orders (major-to-minor reversed into minor_to_major)
// of a gpu f16/bf16 convolution: 0 input, 1 kernel, 2 output.
std::optional<std::vector<int64_t>> Assigner::nhwc(const HloInstruction& convolution,
                                                   int which) const {
    if (m_target != LayoutTarget::kGpu || convolution.operandCount() != 2) return std::nullopt;
    const PrimitiveType type = convolution.operand(0)->shape().elementType();
    if (type != PrimitiveType::F16 && type != PrimitiveType::BF16) return std::nullopt;
    const ConvolutionDimensionNumbers* dn = convolution.convolutionDimensionNumbers();
    if (!dn) return std::nullopt;
    std::vector<int64_t> majorToMinor;
    if (which == 0) {
        majorToMinor.push_back(dn->inputBatchDimension);
        majorToMinor.insert(majorToMinor.end(), dn->inputSpatialDimensions.begin(),
                            dn->inputSpatialDimensions.end());
        majorToMinor.push_back(dn->inputFeatureDimension);
    } else if (which == 1) {
        majorToMinor.push_back(dn->kernelOutputFeatureDimension);
        majorToMinor.insert(majorToMinor.end(), dn->kernelSpatialDimensions.begin(),
                            dn->kernelSpatialDimensions.end());
        majorToMinor.push_back(dn->kernelInputFeatureDimension);
    } else {
        majorToMinor.push_back(dn->outputBatchDimension);
        majorToMinor.insert(majorToMinor.end(), dn->outputSpatialDimensions.begin(),
                            dn->outputSpatialDimensions.end());
        majorToMinor.push_back(dn->outputFeatureDimension);
    }
    const Shape& shape = which == 0   ? convolution.operand(0)->shape()
                         : which == 1 ? convolution.operand(1)->shape()
                                      : convolution.shape();
    if (!shape.isArray() || static_cast<int64_t>(majorToMinor.size()) != shape.rank())
        return std::nullopt;
    std::vector<int64_t> sorted = majorToMinor;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < shape.rank(); ++i)
        if (sorted[static_cast<size_t>(i)] != i) return std::nullopt;
    return reversed(std::move(majorToMinor));
}

Shape Assigner::desiredShape(const HloInstruction& instruction, bool isEntry) const {
    const Shape& shape = instruction.shape();
    switch (instruction.opcode()) {
        case HloOpcode::kParameter: {
            Shape desired = defaultShape(shape);
            const auto& entryLayout = m_module.entryComputationLayout();
            const int64_t n = instruction.parameterNumber();
            if (isEntry && entryLayout && n >= 0 &&
                n < static_cast<int64_t>(entryLayout->parameters.size()))
                desired = overlay(desired, entryLayout->parameters[static_cast<size_t>(n)]);
            return desired;
        }
        case HloOpcode::kCopy:
            return defaultShape(shape, /*keepExisting=*/true);
        case HloOpcode::kConvolution:
            if (auto m2m = nhwc(instruction, 2)) return withMinorToMajor(shape, *m2m);
            return defaultShape(shape);
        default:
            break;
    }
    if (isPinned(instruction)) return defaultShape(shape, /*keepExisting=*/true);
    return defaultShape(shape);
}

void Assigner::dotRequirements(HloComputation& computation, HloInstruction* dot) {
    const DotDimensionNumbers* dn = dot->dotDimensionNumbers();
    if (!dn || dot->operandCount() < 2) return;
    for (int side = 0; side < 2; ++side) {
        const Shape& shape = dot->operand(side)->shape();
        if (!shape.isArray()) continue;
        if (m_target == LayoutTarget::kCpu) {
            require(computation, dot, side, defaultShape(shape));
            continue;
        }
        if (m_target != LayoutTarget::kGpu) continue;
        const auto& batch = side == 0 ? dn->lhsBatchDimensions : dn->rhsBatchDimensions;
        const auto& contracting =
            side == 0 ? dn->lhsContractingDimensions : dn->rhsContractingDimensions;
        std::vector<int64_t> nonContracting;
        for (int64_t d = 0; d < shape.rank(); ++d)
            if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
                std::find(contracting.begin(), contracting.end(), d) == contracting.end())
                nonContracting.push_back(d);
        if (batch.size() + contracting.size() + nonContracting.size() !=
            static_cast<size_t>(shape.rank()))
            continue;  // malformed dimension numbers: leave alone
        const std::vector<int64_t> physical = reversed(effectiveLayout(shape).minorToMajor());
        auto groupMatches = [&](size_t begin, const std::vector<int64_t>& group) {
            if (begin + group.size() > physical.size()) return false;
            std::vector<int64_t> a(
                physical.begin() + static_cast<std::ptrdiff_t>(begin),
                physical.begin() + static_cast<std::ptrdiff_t>(begin + group.size()));
            std::vector<int64_t> b = group;
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            return a == b;
        };
        const size_t nb = batch.size();
        const bool ok = physical.size() == static_cast<size_t>(shape.rank()) &&
                        groupMatches(0, batch) &&
                        ((groupMatches(nb, nonContracting) &&
                          groupMatches(nb + nonContracting.size(), contracting)) ||
                         (groupMatches(nb, contracting) &&
                          groupMatches(nb + contracting.size(), nonContracting)));
        if (ok) continue;
        std::vector<int64_t> majorToMinor(batch.begin(), batch.end());
        const auto& first = side == 0 ? nonContracting : contracting;
        const auto& second = side == 0 ? contracting : nonContracting;
        majorToMinor.insert(majorToMinor.end(), first.begin(), first.end());
        majorToMinor.insert(majorToMinor.end(), second.begin(), second.end());
        require(computation, dot, side, withMinorToMajor(shape, reversed(majorToMinor)));
    }
}

void Assigner::applyRequirements(HloComputation& computation, HloInstruction* instruction) {
    const HloOpcode opcode = instruction->opcode();
    if (isPinned(*instruction)) {
        if (auto constraints = operandLayoutConstraints(*instruction)) {
            for (int64_t i = 0; i < instruction->operandCount(); ++i) {
                const Shape& operand = instruction->operand(i)->shape();
                const Shape& constraint = (*constraints)[static_cast<size_t>(i)];
                if (operand.compatible(constraint))
                    require(computation, instruction, i,
                            overlay(defaultShape(operand), constraint));
            }
            return;
        }
        for (int64_t i = 0; i < instruction->operandCount(); ++i) {
            auto it = m_original.find(instruction->operand(i));
            if (it != m_original.end())
                require(computation, instruction, i,
                        defaultShape(it->second, /*keepExisting=*/true));
        }
        return;
    }
    const Shape& result = instruction->shape();
    if (hloOpcodeKeepsLayout(opcode)) {
        if (!result.isArray()) return;
        const std::vector<int64_t> m2m = effectiveLayout(result).minorToMajor();
        for (int64_t i = 0; i < instruction->operandCount(); ++i) {
            const Shape& operand = instruction->operand(i)->shape();
            if (operand.isArray() && operand.rank() == result.rank())
                require(computation, instruction, i, withMinorToMajor(operand, m2m));
        }
        return;
    }
    switch (opcode) {
        case HloOpcode::kCall:
        case HloOpcode::kWhile:
        case HloOpcode::kFusion:
        case HloOpcode::kAsyncStart:
            for (int64_t i = 0; i < instruction->operandCount(); ++i)
                require(computation, instruction, i,
                        defaultShape(instruction->operand(i)->shape()));
            return;
        case HloOpcode::kConditional:
            for (int64_t i = 1; i < instruction->operandCount(); ++i)
                require(computation, instruction, i,
                        defaultShape(instruction->operand(i)->shape()));
            return;
        case HloOpcode::kSend:
            // send's result holds its operand's shape; both take the default.
            if (instruction->operandCount() >= 1)
                require(computation, instruction, 0,
                        defaultShape(instruction->operand(0)->shape()));
            return;
        case HloOpcode::kDot:
            dotRequirements(computation, instruction);
            return;
        case HloOpcode::kConvolution:
            if (m_target == LayoutTarget::kTpu || instruction->operandCount() != 2) return;
            for (int which = 0; which < 2; ++which) {
                const Shape& operand = instruction->operand(which)->shape();
                if (!operand.isArray()) continue;
                if (auto m2m = nhwc(*instruction, which))
                    require(computation, instruction, which, withMinorToMajor(operand, *m2m));
                else
                    require(computation, instruction, which, defaultShape(operand));
            }
            return;
        default:
            return;
    }
}

StatusOr<bool> Assigner::run() {
    for (const auto& computation : m_module.computations())
        for (const auto& instruction : computation->instructions())
            if (isPinned(*instruction))
                for (const HloInstruction* operand : instruction->operands())
                    m_original.emplace(operand, operand->shape());

    HloComputation* entry = m_module.entryComputation();
    for (const auto& computationPtr : m_module.computations()) {
        HloComputation& computation = *computationPtr;
        const bool isEntry = &computation == entry;
        m_converted.clear();
        m_added.clear();
        for (HloInstruction* instruction : computation.postOrder()) {
            const HloOpcode opcode = instruction->opcode();
            if (!isForwarding(opcode)) setShape(instruction, desiredShape(*instruction, isEntry));
            applyRequirements(computation, instruction);
            if (!isForwarding(opcode)) continue;
            Shape shape = instruction->shape();
            if (opcode == HloOpcode::kTuple) {
                std::vector<Shape> shapes;
                for (const HloInstruction* operand : instruction->operands())
                    shapes.push_back(operand->shape());
                copyLayouts(shape, Shape::makeTuple(shapes));
            } else if (instruction->operandCount() >= 1) {
                const Shape& source = instruction->operand(0)->shape();
                if (opcode == HloOpcode::kGetTupleElement || opcode == HloOpcode::kCopyDone) {
                    const int64_t index =
                        opcode == HloOpcode::kGetTupleElement ? instruction->tupleIndex() : 0;
                    if (source.isTuple() && index >= 0 && index < source.tupleCount())
                        copyLayouts(shape, source.tupleShape(index));
                } else {
                    copyLayouts(shape, source);
                }
            }
            setShape(instruction, shape);
        }
        if (HloInstruction* root = computation.root()) {
            const auto& entryLayout = m_module.entryComputationLayout();
            if (!isEntry)
                requireRoot(computation, defaultShape(root->shape()));
            else if (entryLayout && entryLayout->result.isValid())
                requireRoot(computation, overlay(root->shape(), entryLayout->result));
        }
        HLO_RETURN_IF_ERROR(placeAddedInstructions(computation, m_added));
    }

    // Fill in what a present entry_computation_layout leaves unset.
    if (entry && m_module.entryComputationLayout()) {
        ComputationLayout layout = *m_module.entryComputationLayout();
        for (size_t i = 0; i < layout.parameters.size(); ++i)
            if (static_cast<int64_t>(i) < entry->parameterCount() &&
                entry->parameter(static_cast<int64_t>(i)))
                layout.parameters[i] = overlay(entry->parameter(static_cast<int64_t>(i))->shape(),
                                               layout.parameters[i]);
        if (layout.result.isValid() && entry->root())
            layout.result = overlay(entry->root()->shape(), layout.result);
        if (!(layout == *m_module.entryComputationLayout())) {
            m_module.setEntryComputationLayout(std::move(layout));
            m_changed = true;
        }
    }
    return m_changed;
}

}  // namespace

std::string_view LayoutAssignmentPass::description() {
    return "Assigns a layout to every array shape for the target (option target=cpu|gpu|tpu): "
           "row-major by default, TPU tiles T(8,128)/T(8,128)(2,1)/T(8,128)(4,1)/T(1024) on tpu; "
           "honours the entry computation layout; inserts copies where an operand's layout is not "
           "the one its user needs (layout-preserving ops, called computations, cuBLAS-friendly "
           "dot operands and NHWC f16/bf16 convolutions on gpu). Reports copies_inserted, "
           "logical_bytes and padded_bytes.";
}

StatusOr<std::unique_ptr<HloPass>> LayoutAssignmentPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({"target"}));
    HLO_ASSIGN_OR_RETURN(std::string target, options.getString("target", "cpu"));
    LayoutTarget value;
    if (target == "cpu")
        value = LayoutTarget::kCpu;
    else if (target == "gpu")
        value = LayoutTarget::kGpu;
    else if (target == "tpu")
        value = LayoutTarget::kTpu;
    else
        return invalidArgument("layout-assignment: option target must be cpu, gpu or tpu, got '" +
                               target + "'");
    return std::unique_ptr<HloPass>(std::make_unique<LayoutAssignmentPass>(value));
}

StatusOr<bool> LayoutAssignmentPass::run(HloModule& module) {
    if (!module.entryComputation())
        return invalidArgument("layout-assignment: module has no entry computation");
    bool reshaped = false;
    if (m_target == LayoutTarget::kTpu) {
        // A bitcast written without layouts (or with dense row-major ones)
        // reinterprets row-major data: a reshape. Under tiled layouts the
        // two sides hold their bytes differently (tiles are padded per
        // row), so it becomes the reshape it stands for (a relayout on a
        // TPU; the interpreter and backends refuse bitcasts between
        // different tiled layouts).
        for (const auto& computation : module.computations()) {
            std::vector<HloInstruction*> bitcasts;
            for (const auto& instruction : computation->instructions())
                if (isRowMajorReshapeBitcast(*instruction) &&
                    instruction->shape().dimensions() !=
                        instruction->operand(0)->shape().dimensions())
                    bitcasts.push_back(instruction.get());
            if (bitcasts.empty()) continue;
            // Each reshape takes its bitcast's name and place in the order.
            std::vector<HloInstruction*> order;
            for (const auto& instruction : computation->instructions())
                order.push_back(instruction.get());
            for (HloInstruction* bitcast : bitcasts) {
                Shape shape = bitcast->shape();
                shape.clearLayout();
                const std::string name = bitcast->name();
                auto reshape = std::make_unique<HloInstruction>(
                    HloOpcode::kReshape, module.uniqueInstructionName(name), shape);
                reshape->appendOperand(bitcast->operand(0));
                HloInstruction* added = computation->addInstruction(std::move(reshape));
                std::replace(order.begin(), order.end(), bitcast, added);
                HLO_RETURN_IF_ERROR(computation->replaceInstruction(bitcast, added));
                added->setName(name);
                recordRewrite("bitcast-to-reshape", added, added);
            }
            HLO_RETURN_IF_ERROR(computation->setInstructionOrder(order));
            reshaped = true;
        }
    }
    Assigner assigner(module, m_target);
    HLO_ASSIGN_OR_RETURN(bool changed, assigner.run());
    changed = changed || reshaped;
    for (const auto& event : assigner.events())
        recordRewrite(event.rule, event.before, event.after);

    int64_t logical = 0, padded = 0;
    for (const auto& computation : module.computations()) {
        if (computation->fusionInstruction()) continue;
        const bool isEntry = computation.get() == module.entryComputation();
        for (const auto& instruction : computation->instructions()) {
            const HloOpcode opcode = instruction->opcode();
            if (opcode == HloOpcode::kGetTupleElement || opcode == HloOpcode::kTuple ||
                opcode == HloOpcode::kBitcast || (opcode == HloOpcode::kParameter && !isEntry))
                continue;
            logical = saturatingAdd(logical, logicalSizeInBytes(instruction->shape()));
            padded = saturatingAdd(padded, paddedSizeInBytes(instruction->shape()));
        }
    }
    setStatistic("copies_inserted", assigner.copies());
    setStatistic("logical_bytes", logical);
    setStatistic("padded_bytes", padded - logical);
    return changed;
}

}  // namespace hloscope
