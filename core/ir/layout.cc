#include "core/ir/layout.h"

#include "core/ir/shape.h"

namespace hloscope {

struct Layout::Rare {
    std::vector<DimLevelType> dimLevelTypes;
    std::vector<bool> dimUnique;
    std::vector<bool> dimOrdered;
    int64_t tailPaddingAlignmentInElements = 1;
    PrimitiveType indexPrimitiveType = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    PrimitiveType pointerPrimitiveType = PrimitiveType::PRIMITIVE_TYPE_INVALID;
    std::vector<SplitConfig> splitConfigs;
    std::shared_ptr<const Shape> physicalShape;
    int64_t dynamicShapeMetadataPrefixBytes = 0;

    bool operator==(const Rare& other) const {
        bool physicalEqual = (physicalShape == nullptr) == (other.physicalShape == nullptr) &&
                             (physicalShape == nullptr || *physicalShape == *other.physicalShape);
        return dimLevelTypes == other.dimLevelTypes && dimUnique == other.dimUnique &&
               dimOrdered == other.dimOrdered &&
               tailPaddingAlignmentInElements == other.tailPaddingAlignmentInElements &&
               indexPrimitiveType == other.indexPrimitiveType &&
               pointerPrimitiveType == other.pointerPrimitiveType &&
               splitConfigs == other.splitConfigs && physicalEqual &&
               dynamicShapeMetadataPrefixBytes == other.dynamicShapeMetadataPrefixBytes;
    }
};

namespace {
const Layout::Rare& defaultRare() {
    static const Layout::Rare kDefault;
    return kDefault;
}
}  // namespace

Layout::Layout() = default;
Layout::Layout(std::vector<int64_t> minorToMajor) : m_minorToMajor(std::move(minorToMajor)) {}

Layout::Layout(const Layout& other)
    : m_minorToMajor(other.m_minorToMajor),
      m_tiles(other.m_tiles),
      m_elementSizeInBits(other.m_elementSizeInBits),
      m_memorySpace(other.m_memorySpace),
      m_rare(other.m_rare ? std::make_unique<Rare>(*other.m_rare) : nullptr) {}

Layout& Layout::operator=(const Layout& other) {
    if (this != &other) {
        m_minorToMajor = other.m_minorToMajor;
        m_tiles = other.m_tiles;
        m_elementSizeInBits = other.m_elementSizeInBits;
        m_memorySpace = other.m_memorySpace;
        m_rare = other.m_rare ? std::make_unique<Rare>(*other.m_rare) : nullptr;
    }
    return *this;
}

Layout::~Layout() = default;
Layout::Layout(Layout&&) noexcept = default;
Layout& Layout::operator=(Layout&&) noexcept = default;

Layout Layout::descending(int64_t rank) {
    std::vector<int64_t> m2m(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) m2m[static_cast<size_t>(i)] = rank - 1 - i;
    return Layout(std::move(m2m));
}

Layout::Rare& Layout::rare() {
    if (!m_rare) m_rare = std::make_unique<Rare>();
    return *m_rare;
}

const std::vector<DimLevelType>& Layout::dimLevelTypes() const {
    return (m_rare ? *m_rare : defaultRare()).dimLevelTypes;
}
const std::vector<bool>& Layout::dimUnique() const {
    return (m_rare ? *m_rare : defaultRare()).dimUnique;
}
const std::vector<bool>& Layout::dimOrdered() const {
    return (m_rare ? *m_rare : defaultRare()).dimOrdered;
}
int64_t Layout::tailPaddingAlignmentInElements() const {
    return (m_rare ? *m_rare : defaultRare()).tailPaddingAlignmentInElements;
}
PrimitiveType Layout::indexPrimitiveType() const {
    return (m_rare ? *m_rare : defaultRare()).indexPrimitiveType;
}
PrimitiveType Layout::pointerPrimitiveType() const {
    return (m_rare ? *m_rare : defaultRare()).pointerPrimitiveType;
}
const std::vector<SplitConfig>& Layout::splitConfigs() const {
    return (m_rare ? *m_rare : defaultRare()).splitConfigs;
}
const Shape* Layout::physicalShape() const {
    return m_rare ? m_rare->physicalShape.get() : nullptr;
}
int64_t Layout::dynamicShapeMetadataPrefixBytes() const {
    return (m_rare ? *m_rare : defaultRare()).dynamicShapeMetadataPrefixBytes;
}

void Layout::setDimLevelTypes(std::vector<DimLevelType> types, std::vector<bool> unique,
                              std::vector<bool> ordered) {
    Rare& r = rare();
    r.dimLevelTypes = std::move(types);
    r.dimUnique = std::move(unique);
    r.dimOrdered = std::move(ordered);
}
void Layout::setTailPaddingAlignmentInElements(int64_t value) {
    rare().tailPaddingAlignmentInElements = value;
}
void Layout::setIndexPrimitiveType(PrimitiveType type) { rare().indexPrimitiveType = type; }
void Layout::setPointerPrimitiveType(PrimitiveType type) { rare().pointerPrimitiveType = type; }
void Layout::setSplitConfigs(std::vector<SplitConfig> configs) {
    rare().splitConfigs = std::move(configs);
}
void Layout::setPhysicalShape(const Shape& shape) {
    rare().physicalShape = std::make_shared<const Shape>(shape);
}
void Layout::setDynamicShapeMetadataPrefixBytes(int64_t bytes) {
    rare().dynamicShapeMetadataPrefixBytes = bytes;
}

bool Layout::isPlainDense() const {
    return m_tiles.empty() && m_elementSizeInBits == 0 && m_memorySpace == 0 &&
           (!m_rare || *m_rare == defaultRare());
}

bool Layout::operator==(const Layout& other) const {
    if (m_minorToMajor != other.m_minorToMajor || m_tiles != other.m_tiles ||
        m_elementSizeInBits != other.m_elementSizeInBits ||
        m_memorySpace != other.m_memorySpace)
        return false;
    const Rare& a = m_rare ? *m_rare : defaultRare();
    const Rare& b = other.m_rare ? *other.m_rare : defaultRare();
    return a == b;
}

std::string Tile::toString() const {
    std::string out = "(";
    for (size_t i = 0; i < dimensions.size(); ++i) {
        if (i) out += ',';
        if (dimensions[i] == kCombineDimension)
            out += '*';
        else
            out += std::to_string(dimensions[i]);
    }
    out += ')';
    return out;
}

namespace {
char dimLevelTypeLetter(DimLevelType type) {
    switch (type) {
    case DimLevelType::kDense: return 'D';
    case DimLevelType::kCompressed: return 'C';
    case DimLevelType::kSingleton: return 'S';
    case DimLevelType::kLooseCompressed: return 'H';
    }
    return 'D';
}
}  // namespace

void Layout::appendTo(std::string& out) const {
    out += '{';
    for (size_t i = 0; i < m_minorToMajor.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(m_minorToMajor[i]);
    }
    if (isPlainDense()) {
        out += '}';
        return;
    }
    out += ':';
    const Rare& r = m_rare ? *m_rare : defaultRare();
    if (!r.dimLevelTypes.empty()) {
        out += "D(";
        for (size_t i = 0; i < r.dimLevelTypes.size(); ++i) {
            if (i) out += ',';
            out += dimLevelTypeLetter(r.dimLevelTypes[i]);
            if (i < r.dimUnique.size() && !r.dimUnique[i]) out += '+';
            if (i < r.dimOrdered.size() && !r.dimOrdered[i]) out += '~';
        }
        out += ')';
    }
    if (!m_tiles.empty()) {
        out += 'T';
        for (const Tile& tile : m_tiles) out += tile.toString();
    }
    if (r.tailPaddingAlignmentInElements != 1) {
        out += "L(" + std::to_string(r.tailPaddingAlignmentInElements) + ")";
    }
    if (r.indexPrimitiveType != PrimitiveType::PRIMITIVE_TYPE_INVALID) {
        out += "#(";
        out += primitive_util::name(r.indexPrimitiveType);
        out += ')';
    }
    if (r.pointerPrimitiveType != PrimitiveType::PRIMITIVE_TYPE_INVALID) {
        out += "*(";
        out += primitive_util::name(r.pointerPrimitiveType);
        out += ')';
    }
    if (m_elementSizeInBits != 0) out += "E(" + std::to_string(m_elementSizeInBits) + ")";
    if (m_memorySpace != 0) out += "S(" + std::to_string(m_memorySpace) + ")";
    for (const SplitConfig& config : r.splitConfigs) {
        out += "SC(" + std::to_string(config.dimension) + ":";
        for (size_t i = 0; i < config.splitIndices.size(); ++i) {
            if (i) out += ',';
            out += std::to_string(config.splitIndices[i]);
        }
        out += ')';
    }
    if (r.physicalShape) {
        out += "P(";
        r.physicalShape->appendTo(out, /*printLayout=*/true);
        out += ')';
    }
    if (r.dynamicShapeMetadataPrefixBytes != 0) {
        out += "M(" + std::to_string(r.dynamicShapeMetadataPrefixBytes) + ")";
    }
    out += '}';
}

std::string Layout::toString() const {
    std::string out;
    appendTo(out);
    return out;
}

}  // namespace hloscope
