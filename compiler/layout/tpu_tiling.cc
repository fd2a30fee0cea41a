#include "compiler/layout/tpu_tiling.h"

#include <algorithm>

namespace hloscope {

namespace {

int64_t elementBits(const Shape& shape) {
    if (shape.hasLayout() && shape.layout().elementSizeInBits() > 0)
        return shape.layout().elementSizeInBits();
    if (primitive_util::isSubByte(shape.elementType()))
        return primitive_util::bitWidth(shape.elementType());
    return 8 * static_cast<int64_t>(primitive_util::byteWidth(shape.elementType()));
}

// Sizes of non-negative counts, saturating at kMaxSizeInBytes: a tiled shape near the largest
// array the readers accept (2^62 bytes) pads beyond what an int64_t holds.
int64_t saturatingMul(int64_t a, int64_t b) {
    int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product) || product > kMaxSizeInBytes) return kMaxSizeInBytes;
    return product;
}

int64_t bytesFor(int64_t elements, int64_t bits) {
    return saturatingAdd(saturatingMul(elements / 8, bits),
                         (saturatingMul(elements % 8, bits) + 7) / 8);
}

int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Dimension sizes in physical major-to-minor order (unbounded: 0).
std::vector<int64_t> physicalDims(const Shape& shape) {
    std::vector<int64_t> dims;
    const int64_t rank = shape.rank();
    const bool haveLayout = shape.hasLayout() &&
                            static_cast<int64_t>(shape.layout().minorToMajor().size()) == rank;
    for (int64_t i = rank; i-- > 0;) {
        const int64_t d = haveLayout ? shape.layout().minorToMajor(static_cast<size_t>(i)) : i;
        const int64_t size = d >= 0 && d < rank ? shape.dimensions(d) : 0;
        dims.push_back(size == Shape::kUnboundedSize ? 0 : size);
    }
    return dims;
}

}  // namespace

std::string_view layoutTargetName(LayoutTarget target) {
    switch (target) {
    case LayoutTarget::kCpu: return "cpu";
    case LayoutTarget::kGpu: return "gpu";
    case LayoutTarget::kTpu: return "tpu";
    }
    return "cpu";
}

std::vector<Tile> tpuDefaultTiles(const Shape& shape) {
    if (!shape.isArray() || shape.rank() == 0) return {};
    const int64_t bits = shape.elementType() == PrimitiveType::PRED
                             ? 8
                             : (primitive_util::isSubByte(shape.elementType())
                                    ? primitive_util::bitWidth(shape.elementType())
                                    : 8 * primitive_util::byteWidth(shape.elementType()));
    const int64_t pack = bits >= 32 ? 1 : 32 / std::max<int64_t>(bits, 1);
    std::vector<Tile> tiles;
    if (shape.rank() >= 2) {
        tiles.push_back(Tile{{8, 128}});
        if (pack > 1) tiles.push_back(Tile{{pack, 1}});
        return tiles;
    }
    const int64_t n = shape.dimensions(0) == Shape::kUnboundedSize ? 0 : shape.dimensions(0);
    if (pack == 1) {
        tiles.push_back(Tile{{n >= 1024 ? 1024 : 128}});
        return tiles;
    }
    tiles.push_back(Tile{{n >= 1024 ? 1024 : 128 * pack}});
    tiles.push_back(Tile{{128}});
    tiles.push_back(Tile{{pack, 1}});
    return tiles;
}

Layout targetLayout(const Shape& shape, std::vector<int64_t> minorToMajor, LayoutTarget target) {
    Layout layout(std::move(minorToMajor));
    if (target == LayoutTarget::kTpu) layout.mutableTiles() = tpuDefaultTiles(shape);
    return layout;
}

int64_t logicalSizeInBytes(const Shape& shape) {
    if (shape.isTuple()) {
        int64_t sum = 0;
        for (const Shape& element : shape.tupleShapes())
            sum = saturatingAdd(sum, logicalSizeInBytes(element));
        return sum;
    }
    if (!shape.isArray()) return 0;
    return bytesFor(shape.elementCount(), elementBits(shape));
}

int64_t paddedSizeInBytes(const Shape& shape) {
    if (shape.isTuple()) {
        int64_t sum = 0;
        for (const Shape& element : shape.tupleShapes())
            sum = saturatingAdd(sum, paddedSizeInBytes(element));
        return sum;
    }
    if (!shape.isArray()) return 0;
    if (!shape.hasLayout() || shape.layout().tiles().empty()) return logicalSizeInBytes(shape);
    std::vector<int64_t> dims = physicalDims(shape);
    for (const Tile& tile : shape.layout().tiles()) {
        const size_t k = tile.dimensions.size();
        if (k == 0) continue;
        while (dims.size() < k) dims.insert(dims.begin(), 1);
        const size_t first = dims.size() - k;
        std::vector<int64_t> counts, sizes;
        for (size_t i = 0; i < k; ++i) {
            const int64_t d = dims[first + i];
            const int64_t t = tile.dimensions[i];
            if (t == Tile::kCombineDimension || t <= 0) {
                counts.push_back(1);
                sizes.push_back(d);
            } else {
                counts.push_back(ceilDiv(d, t));
                sizes.push_back(t);
            }
        }
        dims.resize(first);
        dims.insert(dims.end(), counts.begin(), counts.end());
        dims.insert(dims.end(), sizes.begin(), sizes.end());
    }
    int64_t elements = 1;
    for (int64_t d : dims) elements = saturatingMul(elements, d);
    return bytesFor(elements, elementBits(shape));
}

}  // namespace hloscope
