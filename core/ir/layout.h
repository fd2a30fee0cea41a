// Layout: how an array shape is laid out in memory, as XLA prints it after the
// dimensions: `{1,0:T(8,128)(2,1)E(4)S(1)}`.
//
// Text order of the items after the colon (XLA's): D(...) T(...) L(n) #(type)
// *(type) E(n) S(n) SC(dim:idx,...) P(shape) M(n). The common items
// (minor_to_major, tiles, element size, memory space) live inline; rare ones
// (sparse dimension level types, index/pointer types, tail padding, split
// configs, physical shape, dynamic metadata prefix) in a lazily allocated
// block so that a dense layout stays small.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/primitive_type.h"

namespace hloscope {

class Shape;

// One tile of a tiled layout: `T(8,128)`. A dimension may be
// kCombineDimension, printed as `*`.
struct Tile {
    static constexpr int64_t kCombineDimension = INT64_MIN;
    std::vector<int64_t> dimensions;

    bool operator==(const Tile& other) const = default;
    std::string toString() const;  // "(8,128)"
};

enum class DimLevelType : uint8_t { kDense, kCompressed, kSingleton, kLooseCompressed };

// `SC(dimension:split_index,split_index...)`.
struct SplitConfig {
    int64_t dimension = 0;
    std::vector<int64_t> splitIndices;
    bool operator==(const SplitConfig& other) const = default;
};

class Layout {
public:
    Layout();
    explicit Layout(std::vector<int64_t> minorToMajor);
    Layout(const Layout& other);
    Layout& operator=(const Layout& other);
    Layout(Layout&&) noexcept;
    Layout& operator=(Layout&&) noexcept;
    ~Layout();

    struct Rare;  // rare attributes, defined in layout.cc

    // The descending (row-major) layout {rank-1, ..., 1, 0}.
    static Layout descending(int64_t rank);

    const std::vector<int64_t>& minorToMajor() const { return m_minorToMajor; }
    std::vector<int64_t>& mutableMinorToMajor() { return m_minorToMajor; }
    int64_t minorToMajor(size_t i) const { return m_minorToMajor[i]; }

    const std::vector<Tile>& tiles() const { return m_tiles; }
    std::vector<Tile>& mutableTiles() { return m_tiles; }

    int64_t elementSizeInBits() const { return m_elementSizeInBits; }
    void setElementSizeInBits(int64_t bits) { m_elementSizeInBits = bits; }
    int64_t memorySpace() const { return m_memorySpace; }
    void setMemorySpace(int64_t space) { m_memorySpace = space; }

    // Rare attributes; getters return defaults when unset.
    const std::vector<DimLevelType>& dimLevelTypes() const;
    const std::vector<bool>& dimUnique() const;   // empty = all unique
    const std::vector<bool>& dimOrdered() const;  // empty = all ordered
    int64_t tailPaddingAlignmentInElements() const;  // default 1
    PrimitiveType indexPrimitiveType() const;    // default invalid
    PrimitiveType pointerPrimitiveType() const;  // default invalid
    const std::vector<SplitConfig>& splitConfigs() const;
    const Shape* physicalShape() const;  // nullptr when none
    int64_t dynamicShapeMetadataPrefixBytes() const;  // default 0

    void setDimLevelTypes(std::vector<DimLevelType> types, std::vector<bool> unique = {},
                          std::vector<bool> ordered = {});
    void setTailPaddingAlignmentInElements(int64_t value);
    void setIndexPrimitiveType(PrimitiveType type);
    void setPointerPrimitiveType(PrimitiveType type);
    void setSplitConfigs(std::vector<SplitConfig> configs);
    void setPhysicalShape(const Shape& shape);
    void setDynamicShapeMetadataPrefixBytes(int64_t bytes);

    // True when nothing but minor_to_major is set.
    bool isPlainDense() const;

    // "{1,0:T(8,128)}" — always with braces.
    std::string toString() const;
    void appendTo(std::string& out) const;

    bool operator==(const Layout& other) const;
    bool operator!=(const Layout& other) const { return !(*this == other); }

private:
    Rare& rare();

    std::vector<int64_t> m_minorToMajor;
    std::vector<Tile> m_tiles;
    int64_t m_elementSizeInBits = 0;
    int64_t m_memorySpace = 0;
    std::unique_ptr<Rare> m_rare;
};

}  // namespace hloscope
