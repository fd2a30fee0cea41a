// HloVerifier helpers: error formatting, attribute-text parsing (frontend
// attributes, output_to_operand_aliasing), shape indices and layouts,
// literal dimensions and reshape bitcast tests.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/verifier/hlo_verifier_internal.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::verifier_internal {

Status instructionError(const HloInstruction& instruction, std::string_view message) {
    std::string text = "%" + instruction.name();
    if (instruction.parent()) text += " in computation " + instruction.parent()->name();
    text += ": ";
    text += message;
    return failedPrecondition(std::move(text));
}

namespace {

struct AliasCursor {
    std::string_view text;
    size_t pos = 0;
    bool consume(char c) {
        pos = skipAttributeSpaces(text, pos);
        if (pos < text.size() && text[pos] == c) {
            ++pos;
            return true;
        }
        return false;
    }
    std::optional<int64_t> integer() {
        pos = skipAttributeSpaces(text, pos);
        size_t start = pos;
        if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) ++pos;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
        if (pos == start || (pos == start + 1 && !std::isdigit(static_cast<unsigned char>(text[start]))))
            return std::nullopt;
        // from_chars: an index past int64's range is "not an integer", not an exception.
        int64_t value = 0;
        const char* first = text.data() + start + (text[start] == '+' ? 1 : 0);
        const auto [end, ec] = std::from_chars(first, text.data() + pos, value);
        if (ec != std::errc() || end != text.data() + pos) return std::nullopt;
        return value;
    }
    std::optional<std::vector<int64_t>> index() {
        if (!consume('{')) return std::nullopt;
        std::vector<int64_t> out;
        if (consume('}')) return out;
        while (true) {
            auto v = integer();
            if (!v) return std::nullopt;
            out.push_back(*v);
            if (consume('}')) return out;
            if (!consume(',')) return std::nullopt;
        }
    }
};

}  // namespace

std::optional<std::vector<OperandAlias>> parseOperandAliasing(std::string_view text) {
    AliasCursor c{text};
    std::vector<OperandAlias> out;
    if (!c.consume('{')) return std::nullopt;
    if (c.consume('}')) return out;
    while (true) {
        OperandAlias alias;
        auto outputIndex = c.index();
        if (!outputIndex || !c.consume(':') || !c.consume('(')) return std::nullopt;
        auto number = c.integer();
        if (!number || !c.consume(',')) return std::nullopt;
        auto operandIndex = c.index();
        if (!operandIndex) return std::nullopt;
        // Optional trailing kind (may-alias / must-alias).
        c.pos = skipAttributeSpaces(text, c.pos);
        while (c.pos < text.size() && text[c.pos] != ')') ++c.pos;
        if (!c.consume(')')) return std::nullopt;
        alias.outputIndex = *outputIndex;
        alias.operandNumber = *number;
        alias.operandIndex = *operandIndex;
        out.push_back(std::move(alias));
        if (c.consume('}')) break;
        if (!c.consume(',')) return std::nullopt;
    }
    return out;
}

const Shape* subshape(const Shape& shape, const std::vector<int64_t>& index) {
    const Shape* current = &shape;
    for (int64_t i : index) {
        if (!current->isTuple() || i < 0 || i >= current->tupleCount()) return nullptr;
        current = &current->tupleShape(i);
    }
    return current;
}

std::string indexString(const std::vector<int64_t>& index) {
    std::string out = "{";
    for (size_t i = 0; i < index.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(index[i]);
    }
    out += "}";
    return out;
}

Layout effectiveLayout(const Shape& shape) {
    if (shape.hasLayout()) return shape.layout();
    return Layout::descending(shape.rank());
}

Status computationError(const HloComputation& computation, std::string_view message) {
    return failedPrecondition("computation " + computation.name() + ": " + std::string(message));
}

std::string shapeText(const Shape& shape, bool withLayout) { return shape.toString(withLayout); }

// Layouts of two shapes equal (recursively), a missing layout counting as
// the descending one. `minorToMajorOnly` compares only minor_to_major;
// `ignoreTilesAndMemorySpace` drops tiles and memory spaces.
bool layoutsEqual(const Shape& a, const Shape& b, bool minorToMajorOnly,
                  bool ignoreTilesAndMemorySpace) {
    if (a.isTuple() && b.isTuple()) {
        if (a.tupleCount() != b.tupleCount()) return false;
        for (int64_t i = 0; i < a.tupleCount(); ++i)
            if (!layoutsEqual(a.tupleShape(i), b.tupleShape(i), minorToMajorOnly,
                              ignoreTilesAndMemorySpace))
                return false;
        return true;
    }
    if (!a.isArray() || !b.isArray() || a.rank() != b.rank()) return true;
    Layout la = effectiveLayout(a);
    Layout lb = effectiveLayout(b);
    if (minorToMajorOnly) return la.minorToMajor() == lb.minorToMajor();
    if (ignoreTilesAndMemorySpace) {
        la.mutableTiles().clear();
        lb.mutableTiles().clear();
        la.setMemorySpace(0);
        lb.setMemorySpace(0);
    }
    if (a.rank() == 0) return la.isPlainDense() == lb.isPlainDense() && (la.isPlainDense() || la == lb);
    return la == lb;
}

namespace {

// Non-degenerate dimensions of an array in physical (major-to-minor) order.
std::vector<int64_t> physicalSizes(const Shape& shape) {
    Layout layout = effectiveLayout(shape);
    std::vector<int64_t> sizes;
    const auto& m2m = layout.minorToMajor();
    for (size_t i = m2m.size(); i-- > 0;) {
        int64_t d = m2m[i];
        if (d >= 0 && d < shape.rank() && shape.dimensions(d) != 1) sizes.push_back(shape.dimensions(d));
    }
    return sizes;
}

bool isRowMajorIgnoringDegenerate(const Shape& shape) {
    Layout layout = effectiveLayout(shape);
    int64_t previous = -1;
    const auto& m2m = layout.minorToMajor();
    for (size_t i = m2m.size(); i-- > 0;) {
        int64_t d = m2m[i];
        if (d < 0 || d >= shape.rank()) return false;
        if (shape.dimensions(d) == 1) continue;
        if (d < previous) return false;
        previous = d;
    }
    return true;
}

}  // namespace

// Whether a reshape between the two layouts keeps the physical element order.
bool reshapeIsBitcast(const Shape& from, const Shape& to) {
    if (isRowMajorIgnoringDegenerate(from) && isRowMajorIgnoringDegenerate(to)) return true;
    return physicalSizes(from) == physicalSizes(to) && [&] {
        // Same non-degenerate sizes: the logical row-major order must agree
        // with the physical order in both.
        std::vector<int64_t> a, b;
        for (int64_t d : from.dimensions())
            if (d != 1) a.push_back(d);
        for (int64_t d : to.dimensions())
            if (d != 1) b.push_back(d);
        return a == b && isRowMajorIgnoringDegenerate(from) == isRowMajorIgnoringDegenerate(to);
    }();
}

// The dimensions of a dense array literal `{{1, 2}, {3, 4}}` (comments
// ignored, missing commas between sub-arrays tolerated as XLA does); nullopt
// when the text is not a plain dense array literal (elided `{...}`, scalars,
// tuples); an empty vector when the nesting is ragged.
std::optional<std::vector<int64_t>> literalDimensions(std::string_view text, int64_t rank) {
    if (text.find("...") != std::string_view::npos) return std::nullopt;
    std::vector<int64_t> dims(static_cast<size_t>(rank), -1);
    std::vector<int64_t> children;  // per open brace: items seen so far
    bool expectItem = false;        // inside innermost level, after '{' or ','
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            size_t end = text.find("*/", i + 2);
            if (end == std::string_view::npos) return std::nullopt;
            i = end + 1;
            continue;
        }
        if (c == '{') {
            if (!children.empty()) ++children.back();
            if (static_cast<int64_t>(children.size()) >= rank) return std::nullopt;
            children.push_back(0);
            expectItem = true;
        } else if (c == '}') {
            if (children.empty()) return std::nullopt;
            size_t level = children.size() - 1;
            if (dims[level] == -1) dims[level] = children.back();
            else if (dims[level] != children.back()) return std::vector<int64_t>{};
            children.pop_back();
            expectItem = false;
        } else if (c == ',') {
            expectItem = true;
        } else if (c == '(') {
            // A complex value (re, im) is one item.
            size_t end = text.find(')', i);
            if (end == std::string_view::npos || children.empty()) return std::nullopt;
            if (expectItem) ++children.back();
            expectItem = false;
            i = end;
        } else if (!std::isspace(static_cast<unsigned char>(c))) {
            if (children.empty()) return std::nullopt;
            if (expectItem) ++children.back();
            expectItem = false;
        }
    }
    if (!children.empty()) return std::nullopt;
    for (int64_t d : dims)
        if (d == -1) return std::nullopt;
    return dims;
}

}  // namespace hloscope::verifier_internal
