// Shape inference helpers shared by the shape_inference*.cc files and the
// verifier: messages, shape comparisons, window arithmetic, reducer
// signatures and attribute-text parsing.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "core/ir/hlo_computation.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope {
namespace shape_inference_internal {

Status fail(const HloInstruction& instruction, std::string_view message) {
    std::string text = "%";
    text += instruction.name();
    text += ": ";
    text += message;
    return failedPrecondition(std::move(text));
}

std::string str(const Shape& shape) { return shape.toString(/*printLayout=*/false); }

std::string str(std::span<const int64_t> values) {
    std::string out = "{";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(values[i]);
    }
    out += '}';
    return out;
}

std::string typeName(PrimitiveType type) { return std::string(primitive_util::name(type)); }

bool isFloat(PrimitiveType type) { return primitive_util::isFloatingPoint(type); }

bool isSignedOrFloat(PrimitiveType type) {
    return primitive_util::isSignedInteger(type) || primitive_util::isFloatingPoint(type);
}

bool isIntegral(PrimitiveType type) { return primitive_util::isInteger(type); }

bool sameElementTypeIgnoringFp(PrimitiveType a, PrimitiveType b) {
    if (a == b) return true;
    return isFloat(a) && isFloat(b);
}

PrimitiveType higherPrecision(PrimitiveType a, PrimitiveType b) {
    if (a == b || !isFloat(a) || !isFloat(b)) return a;
    int bitsA = primitive_util::bitWidth(a);
    int bitsB = primitive_util::bitWidth(b);
    if (bitsA != bitsB) return bitsA > bitsB ? a : b;
    // Same width: prefer more mantissa bits (f16 over bf16), as XLA does.
    return primitive_util::mantissaBits(a) >= primitive_util::mantissaBits(b) ? a : b;
}

bool dimEqual(int64_t a, int64_t b) {
    return a == b || a == Shape::kUnboundedSize || b == Shape::kUnboundedSize;
}

bool sameDims(const Shape& a, const Shape& b) {
    if (a.rank() != b.rank()) return false;
    for (int64_t i = 0; i < a.rank(); ++i)
        if (!dimEqual(a.dimensions(i), b.dimensions(i))) return false;
    return true;
}

namespace {
bool compatibleImpl(const Shape& a, const Shape& b, bool ignoreFp) {
    if (a.isBuffer() || b.isBuffer()) {
        return a.isBuffer() && b.isBuffer() && a.tupleCount() == 1 && b.tupleCount() == 1 &&
               compatibleImpl(a.tupleShape(0), b.tupleShape(0), ignoreFp);
    }
    if (a.isTuple() || b.isTuple()) {
        if (!a.isTuple() || !b.isTuple() || a.tupleCount() != b.tupleCount()) return false;
        for (int64_t i = 0; i < a.tupleCount(); ++i)
            if (!compatibleImpl(a.tupleShape(i), b.tupleShape(i), ignoreFp)) return false;
        return true;
    }
    if (a.isArray() != b.isArray()) return false;
    if (!a.isArray()) return a.elementType() == b.elementType();
    bool typesMatch = ignoreFp ? sameElementTypeIgnoringFp(a.elementType(), b.elementType())
                               : a.elementType() == b.elementType();
    return typesMatch && sameDims(a, b);
}
}  // namespace

bool compatible(const Shape& a, const Shape& b) { return compatibleImpl(a, b, false); }
bool compatibleIgnoringFp(const Shape& a, const Shape& b) { return compatibleImpl(a, b, true); }

Shape makeArray(PrimitiveType type, std::vector<int64_t> dims, const std::vector<bool>& dynamic) {
    Shape shape(type, std::move(dims));
    for (size_t i = 0; i < dynamic.size() && i < shape.dimensions().size(); ++i)
        if (dynamic[i]) shape.setDynamicDimension(static_cast<int64_t>(i), true);
    return shape;
}

int64_t dilatedBound(int64_t bound, int64_t dilation) {
    if (bound <= 0) return 0;
    return (bound - 1) * dilation + 1;
}

int64_t stridedBound(int64_t bound, int64_t windowSize, int64_t stride) {
    if (windowSize > bound || stride <= 0) return 0;
    return (bound - windowSize) / stride + 1;
}

StatusOr<Shape> inferWindowOutputShape(const HloInstruction& instruction, const Shape& base,
                                       const Window& window, PrimitiveType elementType) {
    if (static_cast<int64_t>(window.dimensions.size()) != base.rank()) {
        return fail(instruction, "window has " + std::to_string(window.dimensions.size()) +
                                     " dimensions but the base shape " + str(base) + " has rank " +
                                     std::to_string(base.rank()));
    }
    std::vector<int64_t> dims(window.dimensions.size());
    std::vector<bool> dynamic(window.dimensions.size());
    for (size_t i = 0; i < window.dimensions.size(); ++i) {
        const WindowDimension& w = window.dimensions[i];
        if (w.size <= 0) return fail(instruction, "window has a non-positive dimension size");
        if (w.stride <= 0) return fail(instruction, "window has a non-positive stride");
        if (w.baseDilation < 1)
            return fail(instruction, "window has a non-positive base area dilation factor");
        if (w.windowDilation < 1)
            return fail(instruction, "window has a non-positive window dilation factor");
        int64_t baseSize = base.dimensions(static_cast<int64_t>(i));
        if (baseSize == Shape::kUnboundedSize) {
            dims[i] = Shape::kUnboundedSize;
            continue;
        }
        int64_t padded = w.paddingLow + dilatedBound(baseSize, w.baseDilation) + w.paddingHigh;
        dims[i] = stridedBound(padded, dilatedBound(w.size, w.windowDilation), w.stride);
        dynamic[i] = base.isDynamicDimension(static_cast<int64_t>(i));
    }
    return makeArray(elementType, std::move(dims), dynamic);
}

std::optional<ProgramShape> programShape(const HloComputation* computation) {
    if (!computation || !computation->root()) return std::nullopt;
    ProgramShape program;
    for (const HloInstruction* parameter : computation->parameters()) {
        if (!parameter) return std::nullopt;
        program.parameters.push_back(parameter->shape());
    }
    program.result = computation->root()->shape();
    return program;
}

Status verifyReducerShape(const HloInstruction& instruction, const ProgramShape& reducer,
                          std::span<const Shape* const> initShapes,
                          std::span<const PrimitiveType> inputTypes, int64_t inputs) {
    if (static_cast<int64_t>(reducer.parameters.size()) != inputs * 2) {
        return fail(instruction, "reduction function must take " + std::to_string(inputs * 2) +
                                     " parameters, but takes " +
                                     std::to_string(reducer.parameters.size()) + " parameter(s)");
    }
    const Shape& accumulator = reducer.result;
    std::vector<const Shape*> accumulators;
    if (accumulator.isArray()) {
        if (inputs != 1) {
            return fail(instruction, "reduction function must produce a tuple with " +
                                         std::to_string(inputs) +
                                         " elements, but produces a scalar");
        }
        accumulators.push_back(&accumulator);
    } else if (accumulator.isTuple()) {
        if (accumulator.tupleCount() != inputs) {
            return fail(instruction, "reduction function must produce a tuple with " +
                                         std::to_string(inputs) + " elements, but has " +
                                         std::to_string(accumulator.tupleCount()) + " elements");
        }
        for (const Shape& element : accumulator.tupleShapes()) accumulators.push_back(&element);
    } else {
        return fail(instruction,
                    "reduction function must produce a scalar or tuple of scalars, but has shape " +
                        str(accumulator));
    }
    for (const Shape* element : accumulators) {
        if (!element->isArray() || element->rank() != 0) {
            return fail(instruction,
                        "reduction function must return a scalar or tuple of scalars but returns "
                        "shape " +
                            str(accumulator));
        }
    }
    for (int64_t i = 0; i < inputs; ++i) {
        const Shape& acc = *accumulators[static_cast<size_t>(i)];
        const Shape& param = reducer.parameters[static_cast<size_t>(i)];
        const Shape& inputParam = reducer.parameters[static_cast<size_t>(inputs + i)];
        if (!compatible(acc, param)) {
            return fail(instruction, "reduction function's " + std::to_string(i) +
                                         "-th parameter shape differs from the result shape: " +
                                         str(param) + " vs " + str(acc));
        }
        if (i < static_cast<int64_t>(initShapes.size()) &&
            !compatibleIgnoringFp(acc, *initShapes[static_cast<size_t>(i)])) {
            return fail(instruction, "reduction function's accumulator shape at index " +
                                         std::to_string(i) + " differs from the init_value shape: " +
                                         str(acc) + " vs " +
                                         str(*initShapes[static_cast<size_t>(i)]));
        }
        if (i < static_cast<int64_t>(inputTypes.size())) {
            Shape inputElement = Shape::makeScalar(inputTypes[static_cast<size_t>(i)]);
            if (!compatibleIgnoringFp(inputElement, inputParam)) {
                return fail(instruction, "reduction function's " + std::to_string(inputs + i) +
                                             "-th parameter shape differs from the input element "
                                             "type: " +
                                             str(inputParam) + " vs " + str(inputElement));
            }
        }
        if (!compatibleIgnoringFp(acc, inputParam)) {
            return fail(instruction, "reduction function's " + std::to_string(inputs + i) +
                                         "-th parameter shape must match the result shape, but "
                                         "got " +
                                         str(inputParam) + " vs " + str(acc));
        }
    }
    return Status::ok();
}

StatusOr<const HloComputation*> requireComputation(const HloInstruction& instruction,
                                                   std::string_view attribute) {
    const HloComputation* computation = instruction.calledComputation(attribute);
    if (!computation) {
        return fail(instruction, "missing called computation `" + std::string(attribute) + "=`");
    }
    return computation;
}

namespace {

// A tiny cursor over attribute text.
struct Cursor {
    std::string_view text;
    size_t pos = 0;

    void skipSpace() {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    }
    bool consume(char c) {
        skipSpace();
        if (pos < text.size() && text[pos] == c) {
            ++pos;
            return true;
        }
        return false;
    }
    bool peek(char c) {
        skipSpace();
        return pos < text.size() && text[pos] == c;
    }
    std::optional<int64_t> integer() {
        skipSpace();
        int64_t value = 0;
        const char* begin = text.data() + pos;
        const char* end = text.data() + text.size();
        auto result = std::from_chars(begin, end, value);
        if (result.ec != std::errc()) return std::nullopt;
        pos += static_cast<size_t>(result.ptr - begin);
        return value;
    }
    bool atEnd() {
        skipSpace();
        return pos >= text.size();
    }
    // `[a,b,...]` into `out`.
    bool bracketList(std::vector<int64_t>& out) {
        if (!consume('[')) return false;
        if (consume(']')) return true;
        while (true) {
            auto value = integer();
            if (!value) return false;
            out.push_back(*value);
            if (consume(']')) return true;
            if (!consume(',')) return false;
        }
    }
    // `'name'` (single-quoted, no escapes).
    std::optional<std::string_view> quoted() {
        if (!consume('\'')) return std::nullopt;
        const size_t end = text.find('\'', pos);
        if (end == std::string_view::npos) return std::nullopt;
        std::string_view name = text.substr(pos, end - pos);
        pos = end + 1;
        return name;
    }
    // `word` (letters and underscores).
    bool keyword(std::string_view word) {
        skipSpace();
        if (text.substr(pos, word.size()) != word) return false;
        pos += word.size();
        return true;
    }
    // `{a,b,...}` into `out`.
    bool braceList(std::vector<int64_t>& out) {
        if (!consume('{')) return false;
        if (consume('}')) return true;
        while (true) {
            auto value = integer();
            if (!value) return false;
            out.push_back(*value);
            if (consume('}')) return true;
            if (!consume(',')) return false;
        }
    }
};

}  // namespace

namespace {

constexpr int64_t kMaxGroupDevices = int64_t{1} << 24;

// XLA's mesh form, `mesh['x'=2,'y'=4(, device_ids=(...))?] {'y'}`: devices laid
// out over the named axes (row-major ids, or `device_ids` in that order); a
// group varies the listed axes, in the listed order, and fixes the others.
std::optional<std::vector<std::vector<int64_t>>> parseMeshGroups(Cursor& cursor) {
    if (!cursor.keyword("mesh") || !cursor.consume('[')) return std::nullopt;
    std::vector<std::string_view> names;
    std::vector<int64_t> sizes;
    std::vector<int64_t> devices;
    while (!cursor.consume(']')) {
        if (!names.empty() && !cursor.consume(',')) return std::nullopt;
        if (cursor.keyword("device_ids")) {
            if (!cursor.consume('=') || !cursor.consume('(')) return std::nullopt;
            while (!cursor.consume(')')) {
                if (!devices.empty() && !cursor.consume(',')) return std::nullopt;
                auto id = cursor.integer();
                if (!id || *id < 0) return std::nullopt;
                devices.push_back(*id);
            }
            continue;
        }
        auto name = cursor.quoted();
        if (!name || !cursor.consume('=')) return std::nullopt;
        auto size = cursor.integer();
        if (!size || *size <= 0 || *size > kMaxGroupDevices) return std::nullopt;
        names.push_back(*name);
        sizes.push_back(*size);
    }
    int64_t total = 1;
    for (int64_t size : sizes) {
        total *= size;
        if (total > kMaxGroupDevices) return std::nullopt;
    }
    if (devices.empty())
        for (int64_t id = 0; id < total; ++id) devices.push_back(id);
    if (names.empty() || static_cast<int64_t>(devices.size()) != total) return std::nullopt;
    std::vector<size_t> grouped;
    if (!cursor.consume('{')) return std::nullopt;
    while (!cursor.consume('}')) {
        if (!grouped.empty() && !cursor.consume(',')) return std::nullopt;
        auto name = cursor.quoted();
        if (!name) return std::nullopt;
        auto at = std::find(names.begin(), names.end(), *name);
        if (at == names.end()) return std::nullopt;
        const auto axis = static_cast<size_t>(at - names.begin());
        if (std::find(grouped.begin(), grouped.end(), axis) != grouped.end()) return std::nullopt;
        grouped.push_back(axis);
    }
    if (!cursor.atEnd()) return std::nullopt;
    // Axes in the order groups are read: the fixed ones, then the grouped ones.
    std::vector<size_t> order;
    for (size_t axis = 0; axis < names.size(); ++axis)
        if (std::find(grouped.begin(), grouped.end(), axis) == grouped.end()) order.push_back(axis);
    order.insert(order.end(), grouped.begin(), grouped.end());
    int64_t groupSize = 1;
    for (size_t axis : grouped) groupSize *= sizes[axis];
    std::vector<int64_t> strides(names.size(), 1);
    for (size_t axis = names.size() - 1; axis > 0; --axis)
        strides[axis - 1] = strides[axis] * sizes[axis];
    std::vector<std::vector<int64_t>> groups;
    std::vector<int64_t> index(names.size(), 0);
    for (int64_t n = 0; n < total; ++n) {
        if (n % groupSize == 0) groups.emplace_back();
        int64_t position = 0;
        for (size_t axis = 0; axis < names.size(); ++axis) position += index[axis] * strides[axis];
        groups.back().push_back(devices[static_cast<size_t>(position)]);
        for (size_t k = order.size(); k-- > 0;) {
            if (++index[order[k]] < sizes[order[k]]) break;
            index[order[k]] = 0;
        }
    }
    return groups;
}

}  // namespace

std::optional<std::vector<std::vector<int64_t>>> parseReplicaGroups(std::string_view text) {
    Cursor cursor{text};
    std::vector<std::vector<int64_t>> groups;
    if (cursor.peek('m')) return parseMeshGroups(cursor);
    if (cursor.peek('[')) {
        // Iota form: [groups,size]<=[reshape dims]T(perm)
        std::vector<int64_t> shape;
        std::vector<int64_t> reshape;
        std::vector<int64_t> perm;
        if (!cursor.bracketList(shape) || shape.size() != 2) return std::nullopt;
        if (!cursor.consume('<') || !cursor.consume('=')) return std::nullopt;
        if (!cursor.bracketList(reshape) || reshape.empty()) return std::nullopt;
        if (cursor.consume('T')) {
            if (!cursor.consume('(')) return std::nullopt;
            while (!cursor.consume(')')) {
                auto value = cursor.integer();
                if (!value) return std::nullopt;
                perm.push_back(*value);
                cursor.consume(',');
            }
        }
        if (!cursor.atEnd()) return std::nullopt;
        int64_t total = 1;
        for (int64_t d : reshape) {
            if (d <= 0 || d > (int64_t{1} << 24)) return std::nullopt;
            total *= d;
            if (total > (int64_t{1} << 24)) return std::nullopt;
        }
        if (shape[0] < 0 || shape[1] < 0 || shape[0] * shape[1] != total) return std::nullopt;
        if (perm.empty()) {
            for (size_t i = 0; i < reshape.size(); ++i) perm.push_back(static_cast<int64_t>(i));
        }
        if (perm.size() != reshape.size()) return std::nullopt;
        std::vector<bool> seen(perm.size());
        for (int64_t p : perm) {
            if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)])
                return std::nullopt;
            seen[static_cast<size_t>(p)] = true;
        }
        // Ids 0..total-1 laid out as `reshape`, transposed by `perm`, read in
        // row-major order.
        size_t rank = reshape.size();
        std::vector<int64_t> strides(rank, 1);
        for (size_t i = rank - 1; i > 0; --i) strides[i - 1] = strides[i] * reshape[i];
        std::vector<int64_t> tdims(rank);
        for (size_t i = 0; i < rank; ++i) tdims[i] = reshape[static_cast<size_t>(perm[i])];
        std::vector<int64_t> flat;
        flat.reserve(static_cast<size_t>(total));
        std::vector<int64_t> index(rank, 0);
        for (int64_t n = 0; n < total; ++n) {
            int64_t id = 0;
            for (size_t i = 0; i < rank; ++i) id += index[i] * strides[static_cast<size_t>(perm[i])];
            flat.push_back(id);
            for (size_t i = rank; i-- > 0;) {
                if (++index[i] < tdims[i]) break;
                index[i] = 0;
            }
        }
        for (int64_t g = 0; g < shape[0]; ++g) {
            groups.emplace_back(flat.begin() + g * shape[1], flat.begin() + (g + 1) * shape[1]);
        }
        return groups;
    }
    if (!cursor.consume('{')) return std::nullopt;
    if (cursor.consume('}')) return cursor.atEnd() ? std::optional(groups) : std::nullopt;
    while (true) {
        std::vector<int64_t> group;
        if (!cursor.braceList(group)) return std::nullopt;
        groups.push_back(std::move(group));
        if (cursor.consume('}')) break;
        if (!cursor.consume(',')) return std::nullopt;
    }
    if (!cursor.atEnd()) return std::nullopt;
    return groups;
}

std::optional<std::vector<std::pair<int64_t, int64_t>>> parsePairs(std::string_view text) {
    auto lists = parseReplicaGroups(text);
    if (!lists) return std::nullopt;
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (const auto& list : *lists) {
        if (list.size() != 2) return std::nullopt;
        pairs.emplace_back(list[0], list[1]);
    }
    return pairs;
}

std::optional<bool> boolAttribute(const HloInstruction& instruction, std::string_view name) {
    auto value = instruction.attribute(name);
    if (!value) return std::nullopt;
    return *value == "true";
}

std::optional<int64_t> intAttribute(const HloInstruction& instruction, std::string_view name) {
    auto value = instruction.attribute(name);
    if (!value) return std::nullopt;
    Cursor cursor{*value};
    auto result = cursor.integer();
    if (!result || !cursor.atEnd()) return std::nullopt;
    return result;
}


Status expectOperandCount(const HloInstruction& instruction, int64_t count) {
    if (instruction.operandCount() != count) {
        return fail(instruction, opName(instruction) + " expects " + std::to_string(count) +
                                     " operand(s), found " +
                                     std::to_string(instruction.operandCount()));
    }
    return Status::ok();
}

Status expectAtLeastOperands(const HloInstruction& instruction, int64_t count) {
    if (instruction.operandCount() < count) {
        return fail(instruction, opName(instruction) + " expects at least " +
                                     std::to_string(count) + " operand(s), found " +
                                     std::to_string(instruction.operandCount()));
    }
    return Status::ok();
}

Status expectArray(const HloInstruction& instruction, const Shape& shape, std::string_view what) {
    if (!shape.isArray()) {
        return fail(instruction, "Expected array argument for " + std::string(what) +
                                     ", but got " + str(shape));
    }
    return Status::ok();
}

std::string opName(const HloInstruction& instruction) {
    return std::string(hloOpcodeString(instruction.opcode()));
}

bool isSortedUnique(const std::vector<int64_t>& values) {
    for (size_t i = 1; i < values.size(); ++i)
        if (values[i - 1] >= values[i]) return false;
    return true;
}

bool allUnique(const std::vector<int64_t>& values) {
    return std::set<int64_t>(values.begin(), values.end()).size() == values.size();
}

bool contains(const std::vector<int64_t>& values, int64_t value) {
    return std::find(values.begin(), values.end(), value) != values.end();
}

Status checkDimsInRange(const HloInstruction& instruction, const std::vector<int64_t>& dims,
                        int64_t rank, std::string_view what) {
    for (int64_t d : dims) {
        if (d < 0 || d >= rank) {
            return fail(instruction, std::string(what) + " " + str(dims) +
                                         " contains an out-of-range dimension " + std::to_string(d) +
                                         " (rank " + std::to_string(rank) + ")");
        }
    }
    return Status::ok();
}

// The reducer program shape of `to_apply`.
StatusOr<ProgramShape> reducerProgram(const HloInstruction& instruction, std::string_view attribute) {
    HLO_ASSIGN_OR_RETURN(const HloComputation* computation,
                         requireComputation(instruction, attribute));
    auto program = programShape(computation);
    if (!program) {
        return fail(instruction, "called computation %" + computation->name() +
                                     " has no root or a gap in its parameter numbers");
    }
    return *program;
}

}  // namespace shape_inference_internal
}  // namespace hloscope
