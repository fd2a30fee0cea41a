// Shape: the type of an HLO value. An array shape has an element type,
// dimensions (each possibly dynamic with a bound, `f32[<=5]`, or unbounded,
// `f32[?]`) and an optional layout; a tuple shape holds element shapes;
// token[] and opaque[] carry no data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/layout.h"
#include "core/ir/primitive_type.h"

namespace hloscope {

class Shape {
public:
    // Size of an unbounded dynamic dimension (printed `?`).
    static constexpr int64_t kUnboundedSize = INT64_MIN;

    Shape() = default;  // invalid shape
    Shape(PrimitiveType elementType, std::vector<int64_t> dimensions);

    static Shape makeArray(PrimitiveType elementType, std::vector<int64_t> dimensions);
    static Shape makeArrayWithLayout(PrimitiveType elementType, std::vector<int64_t> dimensions,
                                     std::vector<int64_t> minorToMajor);
    static Shape makeScalar(PrimitiveType elementType) { return makeArray(elementType, {}); }
    static Shape makeTuple(std::vector<Shape> elements);
    static Shape makeToken();
    static Shape makeOpaque();
    // A buffer shape `b(f32[2,4])`: element type BUFFER, the buffered array
    // shape held as the single element of tupleShapes().
    static Shape makeBuffer(Shape arrayShape) {
        Shape shape;
        shape.m_elementType = PrimitiveType::BUFFER;
        shape.m_tupleShapes.push_back(std::move(arrayShape));
        return shape;
    }

    PrimitiveType elementType() const { return m_elementType; }
    void setElementType(PrimitiveType type) { m_elementType = type; }

    bool isValid() const { return m_elementType != PrimitiveType::PRIMITIVE_TYPE_INVALID; }
    bool isArray() const { return primitive_util::isArrayType(m_elementType); }
    bool isTuple() const { return m_elementType == PrimitiveType::TUPLE; }
    bool isToken() const { return m_elementType == PrimitiveType::TOKEN; }
    bool isOpaque() const { return m_elementType == PrimitiveType::OPAQUE_TYPE; }
    bool isBuffer() const { return m_elementType == PrimitiveType::BUFFER; }
    bool isScalar() const { return isArray() && m_dimensions.empty(); }

    // Array shapes.
    int64_t rank() const { return static_cast<int64_t>(m_dimensions.size()); }
    const std::vector<int64_t>& dimensions() const { return m_dimensions; }
    int64_t dimensions(int64_t i) const { return m_dimensions[static_cast<size_t>(i)]; }
    std::vector<int64_t>& mutableDimensions() { return m_dimensions; }
    void setDimensions(std::vector<int64_t> dims);

    bool isDynamicDimension(int64_t i) const {
        return !m_dynamic.empty() && m_dynamic[static_cast<size_t>(i)];
    }
    void setDynamicDimension(int64_t i, bool dynamic);
    bool isDynamic() const;  // any dynamic dimension (recursively for tuples)
    bool isUnboundedDimension(int64_t i) const { return dimensions(i) == kUnboundedSize; }
    const std::vector<bool>& dynamicDimensions() const { return m_dynamic; }  // empty: all static

    bool hasLayout() const { return m_layout.has_value(); }
    // No layout, or the descending (row-major) minor_to_major without tiles:
    // storage in the logical row-major order a Literal uses.
    bool hasDefaultDenseLayout() const;
    const Layout& layout() const { return *m_layout; }  // requires hasLayout()
    Layout& mutableLayout();  // creates an empty layout when none
    void setLayout(Layout layout) { m_layout = std::move(layout); }
    void clearLayout() { m_layout.reset(); }
    // Gives every array (recursively) the descending layout when it has none.
    void setDefaultLayoutIfMissing();

    // Tuple shapes.
    const std::vector<Shape>& tupleShapes() const { return m_tupleShapes; }
    std::vector<Shape>& mutableTupleShapes() { return m_tupleShapes; }
    int64_t tupleCount() const { return static_cast<int64_t>(m_tupleShapes.size()); }
    const Shape& tupleShape(int64_t i) const { return m_tupleShapes[static_cast<size_t>(i)]; }

    // Number of elements of an array shape (bounds for dynamic dimensions;
    // 0 with an unbounded dimension).
    int64_t elementCount() const;
    // Bytes of the dense array (element count × byte width; sub-byte types
    // packed per the layout's element size if set, else one byte each). For
    // tuples: the sum over elements (not counting the tuple's pointer table).
    int64_t byteSize() const;

    // Text as HLO prints it: "f32[2,3]{1,0}", "(f32[], s32[4]{0})",
    // "f32[<=5]{0}", "token[]".
    std::string toString(bool printLayout = true) const;
    void appendTo(std::string& out, bool printLayout = true) const;

    // Structural equality, layouts included (a missing layout only equals a
    // missing layout).
    bool operator==(const Shape& other) const;
    bool operator!=(const Shape& other) const { return !(*this == other); }
    // Same element type, dimensions and dynamism; layouts ignored.
    bool compatible(const Shape& other) const;
    // Same dimensions (and tuple structure); element types and layouts ignored.
    bool sameDimensions(const Shape& other) const;

private:
    PrimitiveType m_elementType = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    std::vector<int64_t> m_dimensions;
    std::vector<bool> m_dynamic;  // empty when every dimension is static
    std::optional<Layout> m_layout;
    std::vector<Shape> m_tupleShapes;
};

}  // namespace hloscope
