#include "core/ir/shape.h"

namespace hloscope {

Shape::Shape(PrimitiveType elementType, std::vector<int64_t> dimensions)
    : m_elementType(elementType), m_dimensions(std::move(dimensions)) {}

Shape Shape::makeArray(PrimitiveType elementType, std::vector<int64_t> dimensions) {
    return Shape(elementType, std::move(dimensions));
}

Shape Shape::makeArrayWithLayout(PrimitiveType elementType, std::vector<int64_t> dimensions,
                                 std::vector<int64_t> minorToMajor) {
    Shape shape(elementType, std::move(dimensions));
    shape.m_layout = Layout(std::move(minorToMajor));
    return shape;
}

Shape Shape::makeTuple(std::vector<Shape> elements) {
    Shape shape;
    shape.m_elementType = PrimitiveType::TUPLE;
    shape.m_tupleShapes = std::move(elements);
    return shape;
}

Shape Shape::makeToken() {
    Shape shape;
    shape.m_elementType = PrimitiveType::TOKEN;
    return shape;
}

Shape Shape::makeOpaque() {
    Shape shape;
    shape.m_elementType = PrimitiveType::OPAQUE_TYPE;
    return shape;
}

void Shape::setDimensions(std::vector<int64_t> dims) {
    m_dimensions = std::move(dims);
    if (!m_dynamic.empty()) m_dynamic.resize(m_dimensions.size(), false);
}

void Shape::setDynamicDimension(int64_t i, bool dynamic) {
    if (m_dynamic.empty()) {
        if (!dynamic) return;
        m_dynamic.assign(m_dimensions.size(), false);
    }
    m_dynamic[static_cast<size_t>(i)] = dynamic;
    bool any = false;
    for (bool d : m_dynamic) any |= d;
    if (!any) m_dynamic.clear();
}

bool Shape::isDynamic() const {
    if (isTuple()) {
        for (const Shape& element : m_tupleShapes)
            if (element.isDynamic()) return true;
        return false;
    }
    return !m_dynamic.empty();
}

Layout& Shape::mutableLayout() {
    if (!m_layout) m_layout.emplace();
    return *m_layout;
}

void Shape::setDefaultLayoutIfMissing() {
    if (isTuple()) {
        for (Shape& element : m_tupleShapes) element.setDefaultLayoutIfMissing();
    } else if (isArray() && !m_layout) {
        m_layout = Layout::descending(rank());
    }
}

int64_t Shape::elementCount() const {
    int64_t count = 1;
    for (int64_t d : m_dimensions) {
        if (d == kUnboundedSize) return 0;
        count *= d;
    }
    return count;
}

int64_t Shape::byteSize() const {
    if (isBuffer()) return m_tupleShapes.empty() ? 0 : m_tupleShapes.front().byteSize();
    if (isTuple()) {
        int64_t total = 0;
        for (const Shape& element : m_tupleShapes) total += element.byteSize();
        return total;
    }
    if (!isArray()) return 0;
    int64_t count = elementCount();
    if (m_layout && m_layout->elementSizeInBits() > 0)
        return (count * m_layout->elementSizeInBits() + 7) / 8;
    return count * primitive_util::byteWidth(m_elementType);
}

void Shape::appendTo(std::string& out, bool printLayout) const {
    if (isBuffer()) {
        out += "b(";
        if (!m_tupleShapes.empty()) m_tupleShapes.front().appendTo(out, printLayout);
        out += ')';
        return;
    }
    if (isTuple()) {
        out += '(';
        for (size_t i = 0; i < m_tupleShapes.size(); ++i) {
            if (i) out += ", ";
            m_tupleShapes[i].appendTo(out, printLayout);
        }
        out += ')';
        return;
    }
    out += primitive_util::name(m_elementType);
    out += '[';
    for (size_t i = 0; i < m_dimensions.size(); ++i) {
        if (i) out += ',';
        if (m_dimensions[i] == kUnboundedSize) {
            out += '?';
            continue;
        }
        if (isDynamicDimension(static_cast<int64_t>(i))) out += "<=";
        out += std::to_string(m_dimensions[i]);
    }
    out += ']';
    if (printLayout && m_layout && isArray() &&
        (!m_dimensions.empty() || !m_layout->isPlainDense() ||
         !m_layout->minorToMajor().empty())) {
        m_layout->appendTo(out);
    }
}

std::string Shape::toString(bool printLayout) const {
    std::string out;
    appendTo(out, printLayout);
    return out;
}

namespace {
// A scalar's plain `{}` layout is not printed, so it equals no layout.
bool layoutsEqual(const std::optional<Layout>& a, const std::optional<Layout>& b, bool scalar) {
    if (scalar) {
        bool aTrivial = !a || a->isPlainDense();
        bool bTrivial = !b || b->isPlainDense();
        if (aTrivial || bTrivial) return aTrivial == bTrivial;
    }
    return a == b;
}
}  // namespace

bool Shape::operator==(const Shape& other) const {
    return m_elementType == other.m_elementType && m_dimensions == other.m_dimensions &&
           m_dynamic == other.m_dynamic &&
           layoutsEqual(m_layout, other.m_layout, isArray() && m_dimensions.empty()) &&
           m_tupleShapes == other.m_tupleShapes;
}

bool Shape::compatible(const Shape& other) const {
    if (m_elementType != other.m_elementType) return false;
    if (isTuple() || isBuffer()) {
        if (m_tupleShapes.size() != other.m_tupleShapes.size()) return false;
        for (size_t i = 0; i < m_tupleShapes.size(); ++i)
            if (!m_tupleShapes[i].compatible(other.m_tupleShapes[i])) return false;
        return true;
    }
    return m_dimensions == other.m_dimensions && m_dynamic == other.m_dynamic;
}

bool Shape::hasDefaultDenseLayout() const {
    if (!m_layout) return true;
    return m_layout->tiles().empty() && m_layout->minorToMajor() == Layout::descending(rank()).minorToMajor();
}

bool Shape::sameDimensions(const Shape& other) const {
    if (isTuple() != other.isTuple() || isBuffer() != other.isBuffer()) return false;
    if (isTuple() || isBuffer()) {
        if (m_tupleShapes.size() != other.m_tupleShapes.size()) return false;
        for (size_t i = 0; i < m_tupleShapes.size(); ++i)
            if (!m_tupleShapes[i].sameDimensions(other.m_tupleShapes[i])) return false;
        return true;
    }
    return m_dimensions == other.m_dimensions;
}

}  // namespace hloscope
