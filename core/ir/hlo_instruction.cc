#include "core/ir/hlo_instruction.h"

#include <algorithm>
#include <array>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_printer.h"

namespace hloscope {
namespace {

const HloExtraAttributes& defaultExtra() {
    static const HloExtraAttributes kDefault;
    return kDefault;
}

void eraseOne(std::vector<HloInstruction*>& list, HloInstruction* value) {
    auto it = std::find(list.begin(), list.end(), value);
    if (it != list.end()) list.erase(it);
}

void addUnique(std::vector<HloInstruction*>& list, HloInstruction* value) {
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

// Whether `user` is listed among `operand`'s users already, `operand` having been put at
// `index` among `user`'s operands. A user is listed once however often it uses the operand,
// and exactly when the operand is among its operands, so either list answers; the shorter is
// scanned. One value can have tens of thousands of users (a module whose inlined calls all
// read one parameter), which made building such a module quadratic.
bool listedAsUser(const HloInstruction* user, const HloInstruction* operand, size_t index) {
    const std::vector<HloInstruction*>& operands = user->operands();
    const std::vector<HloInstruction*>& users = operand->users();
    if (operands.size() <= users.size()) {
        for (size_t i = 0; i < operands.size(); ++i)
            if (i != index && operands[i] == operand) return true;
        return false;
    }
    return std::find(users.begin(), users.end(), user) != users.end();
}

}  // namespace

std::string_view comparisonDirectionString(ComparisonDirection direction) {
    switch (direction) {
    case ComparisonDirection::kEq: return "EQ";
    case ComparisonDirection::kNe: return "NE";
    case ComparisonDirection::kGe: return "GE";
    case ComparisonDirection::kGt: return "GT";
    case ComparisonDirection::kLe: return "LE";
    case ComparisonDirection::kLt: return "LT";
    }
    return "EQ";
}

std::optional<ComparisonDirection> parseComparisonDirection(std::string_view text) {
    static constexpr std::array<std::pair<std::string_view, ComparisonDirection>, 6> kNames = {{
        {"EQ", ComparisonDirection::kEq},
        {"NE", ComparisonDirection::kNe},
        {"GE", ComparisonDirection::kGe},
        {"GT", ComparisonDirection::kGt},
        {"LE", ComparisonDirection::kLe},
        {"LT", ComparisonDirection::kLt},
    }};
    for (const auto& [name, value] : kNames)
        if (name == text) return value;
    return std::nullopt;
}

std::string_view comparisonTypeString(ComparisonType type) {
    switch (type) {
    case ComparisonType::kDefault: return "";
    case ComparisonType::kFloat: return "FLOAT";
    case ComparisonType::kTotalOrder: return "TOTALORDER";
    case ComparisonType::kSigned: return "SIGNED";
    case ComparisonType::kUnsigned: return "UNSIGNED";
    }
    return "";
}

std::optional<ComparisonType> parseComparisonType(std::string_view text) {
    if (text == "FLOAT") return ComparisonType::kFloat;
    if (text == "TOTALORDER") return ComparisonType::kTotalOrder;
    if (text == "SIGNED") return ComparisonType::kSigned;
    if (text == "UNSIGNED") return ComparisonType::kUnsigned;
    return std::nullopt;
}

std::string ConvolutionDimensionNumbers::toString() const {
    // Input: b, f and spatial digits placed at their dimension positions.
    // The labels run to the highest dimension named, as in XLA: a '?' (a dimension with no
    // role, as custom calls have) keeps its place before it; trailing ones are dropped.
    auto render = [](int64_t first, char firstLetter, int64_t second, char secondLetter,
                     const std::vector<int64_t>& spatial) {
        int64_t last = std::max(first, second);
        for (int64_t dim : spatial) last = std::max(last, dim);
        const size_t rank = static_cast<size_t>(std::max<int64_t>(last, 0) + 1);
        std::string out(rank, '?');
        auto put = [&](int64_t dim, char c) {
            if (dim >= 0 && static_cast<size_t>(dim) < rank) out[static_cast<size_t>(dim)] = c;
        };
        put(first, firstLetter);
        put(second, secondLetter);
        for (size_t i = 0; i < spatial.size(); ++i) {
            // Spatial dimension i is labelled by its index; XLA uses digits
            // (and letters past 9 are not produced by XLA for rank <= 12).
            char label = i < 10 ? static_cast<char>('0' + i) : static_cast<char>('a' + (i - 10));
            put(spatial[i], label);
        }
        return out;
    };
    return render(inputBatchDimension, 'b', inputFeatureDimension, 'f', inputSpatialDimensions) +
           "_" +
           render(kernelInputFeatureDimension, 'i', kernelOutputFeatureDimension, 'o',
                  kernelSpatialDimensions) +
           "->" +
           render(outputBatchDimension, 'b', outputFeatureDimension, 'f', outputSpatialDimensions);
}

const std::vector<std::string_view>& HloInstruction::typedAttributeNames() {
    static const std::vector<std::string_view> kNames = [] {
        std::vector<std::string_view> names = {
            "batch_group_count",
            "body",
            "branch_computations",
            "called_computations",
            "calls",
            "collapsed_slice_dims",
            "condition",
            "control-predecessors",
            "custom_call_target",
            "dim_labels",
            "dimensions",
            "direction",
            "distribution",
            "dynamic_slice_sizes",
            "epsilon",
            "exponent_bits",
            "false_computation",
            "feature_group_count",
            "feature_index",
            "fft_length",
            "fft_type",
            "index",
            "index_vector_dim",
            "indices_are_sorted",
            "input_batching_dims",
            "inserted_window_dims",
            "iota_dimension",
            "is_stable",
            "k",
            "kind",
            "largest",
            "lhs_batch_dims",
            "lhs_contracting_dims",
            "lhs_ragged_dims",
            "mantissa_bits",
            "metadata",
            "offset_dims",
            "operand_batching_dims",
            "padding",
            "rhs_batch_dims",
            "rhs_contracting_dims",
            "rhs_group_dims",
            "scatter",
            "scatter_dims_to_operand_dims",
            "scatter_indices_batching_dims",
            "select",
            "slice",
            "slice_sizes",
            "start_index_map",
            "start_indices_batching_dims",
            "to_apply",
            "true_computation",
            "type",
            "unique_indices",
            "update_window_dims",
            "window",
        };
        std::sort(names.begin(), names.end());
        return names;
    }();
    return kNames;
}

bool HloInstruction::isTypedAttributeName(std::string_view name) {
    const auto& names = typedAttributeNames();
    return std::binary_search(names.begin(), names.end(), name);
}

struct HloInstruction::Rare {
    std::vector<HloInstruction*> controlPredecessors;
    std::vector<HloInstruction*> controlSuccessors;
    std::string literalText;
};

namespace {
const std::vector<HloInstruction*>& emptyInstructionList() {
    static const std::vector<HloInstruction*> kEmpty;
    return kEmpty;
}
}  // namespace

HloInstruction::HloInstruction(HloOpcode opcode, std::string name, Shape shape)
    : m_opcode(opcode), m_name(std::move(name)), m_shape(std::move(shape)) {}

HloInstruction::~HloInstruction() = default;

HloInstruction::Rare& HloInstruction::rare() {
    if (!m_rare) m_rare = std::make_unique<Rare>();
    return *m_rare;
}

const std::vector<HloInstruction*>& HloInstruction::controlPredecessors() const {
    return m_rare ? m_rare->controlPredecessors : emptyInstructionList();
}

const std::vector<HloInstruction*>& HloInstruction::controlSuccessors() const {
    return m_rare ? m_rare->controlSuccessors : emptyInstructionList();
}

const std::string& HloInstruction::literalText() const {
    static const std::string kEmpty;
    return m_rare ? m_rare->literalText : kEmpty;
}

void HloInstruction::noteMutation() {
    if (!m_parent) return;
    m_parent->noteMutation();
    m_changeStamp = m_parent->changeStamp();
}

void HloInstruction::setLiteralText(std::string text) {
    noteMutation();
    if (text.empty() && !m_rare) return;
    rare().literalText = std::move(text);
}

void HloInstruction::appendOperand(HloInstruction* operand) {
    noteMutation();
    assert(operand != nullptr);
    m_operands.push_back(operand);
    if (!listedAsUser(this, operand, m_operands.size() - 1)) operand->m_users.push_back(this);
}

void HloInstruction::replaceOperand(int64_t index, HloInstruction* newOperand) {
    noteMutation();
    assert(newOperand != nullptr);
    HloInstruction* old = m_operands[static_cast<size_t>(index)];
    if (old == newOperand) return;
    m_operands[static_cast<size_t>(index)] = newOperand;
    if (std::find(m_operands.begin(), m_operands.end(), old) == m_operands.end())
        eraseOne(old->m_users, this);
    if (!listedAsUser(this, newOperand, static_cast<size_t>(index)))
        newOperand->m_users.push_back(this);
}

void HloInstruction::removeAllOperands() {
    noteMutation();
    for (HloInstruction* operand : m_operands) eraseOne(operand->m_users, this);
    m_operands.clear();
}

void HloInstruction::replaceAllUsesWith(HloInstruction* other) {
    noteMutation();
    assert(other != nullptr && other != this);
    std::vector<HloInstruction*> users = m_users;
    for (HloInstruction* user : users) {
        user->noteMutation();
        bool listed = false;  // already a user of `other`: it was among the operands
        for (HloInstruction*& operand : user->m_operands) {
            if (operand == this)
                operand = other;
            else if (operand == other)
                listed = true;
        }
        if (!listed) other->m_users.push_back(user);
    }
    m_users.clear();
    if (m_parent != nullptr && m_parent->root() == this) m_parent->setRoot(other);
}

std::unique_ptr<HloInstruction> HloInstruction::cloneWithNewOperands(
    const Shape& shape, std::span<HloInstruction* const> operands, std::string name) const {
    auto clone = std::make_unique<HloInstruction>(m_opcode, std::move(name), shape);
    clone->m_hasDimensions = m_hasDimensions;
    clone->m_dimensions = m_dimensions;
    clone->m_parameterNumber = m_parameterNumber;
    clone->m_index = m_index;
    clone->m_metadata = m_metadata;
    clone->m_calledComputations = m_calledComputations;
    clone->m_attributes = m_attributes;
    if (m_extra) clone->m_extra = std::make_unique<HloExtraAttributes>(*m_extra);
    if (m_rare && !m_rare->literalText.empty()) clone->rare().literalText = m_rare->literalText;
    for (HloInstruction* operand : operands) clone->appendOperand(operand);
    return clone;
}

void HloInstruction::copyEdgesFrom(
    const HloInstruction& original, const std::function<HloInstruction*(const HloInstruction*)>& map) {
    const auto mapAll = [&](const std::vector<HloInstruction*>& from) {
        std::vector<HloInstruction*> to;
        to.reserve(from.size());
        for (const HloInstruction* instruction : from) to.push_back(map(instruction));
        return to;
    };
    m_operands = mapAll(original.m_operands);
    m_users = mapAll(original.m_users);
    if (original.m_rare && (!original.m_rare->controlPredecessors.empty() ||
                            !original.m_rare->controlSuccessors.empty())) {
        rare().controlPredecessors = mapAll(original.m_rare->controlPredecessors);
        rare().controlSuccessors = mapAll(original.m_rare->controlSuccessors);
    }
}

void HloInstruction::addControlDependencyTo(HloInstruction* successor) {
    noteMutation();
    successor->noteMutation();
    addUnique(rare().controlSuccessors, successor);
    addUnique(successor->rare().controlPredecessors, this);
}

void HloInstruction::dropAllControlDependencies() {
    noteMutation();
    if (!m_rare) return;
    for (HloInstruction* pred : m_rare->controlPredecessors) {
        pred->noteMutation();
        eraseOne(pred->rare().controlSuccessors, this);
    }
    for (HloInstruction* succ : m_rare->controlSuccessors) {
        succ->noteMutation();
        eraseOne(succ->rare().controlPredecessors, this);
    }
    m_rare->controlPredecessors.clear();
    m_rare->controlSuccessors.clear();
}

HloExtraAttributes& HloInstruction::mutableExtra() {
    noteMutation();
    if (!m_extra) m_extra = std::make_unique<HloExtraAttributes>();
    return *m_extra;
}

const std::vector<SliceDimension>& HloInstruction::slice() const {
    return (m_extra ? *m_extra : defaultExtra()).slice;
}
const std::vector<int64_t>& HloInstruction::dynamicSliceSizes() const {
    return (m_extra ? *m_extra : defaultExtra()).dynamicSliceSizes;
}
const std::vector<PaddingDimension>& HloInstruction::padding() const {
    return (m_extra ? *m_extra : defaultExtra()).padding;
}
const Window* HloInstruction::window() const {
    return m_extra && m_extra->window ? &*m_extra->window : nullptr;
}
const ConvolutionDimensionNumbers* HloInstruction::convolutionDimensionNumbers() const {
    return m_extra && m_extra->convolutionDimensionNumbers
               ? &*m_extra->convolutionDimensionNumbers
               : nullptr;
}
const DotDimensionNumbers* HloInstruction::dotDimensionNumbers() const {
    return m_extra && m_extra->dotDimensionNumbers ? &*m_extra->dotDimensionNumbers : nullptr;
}
const GatherDimensionNumbers* HloInstruction::gatherDimensionNumbers() const {
    return m_extra && m_extra->gatherDimensionNumbers ? &*m_extra->gatherDimensionNumbers
                                                      : nullptr;
}
const ScatterDimensionNumbers* HloInstruction::scatterDimensionNumbers() const {
    return m_extra && m_extra->scatterDimensionNumbers ? &*m_extra->scatterDimensionNumbers
                                                       : nullptr;
}
std::optional<ComparisonDirection> HloInstruction::comparisonDirection() const {
    return m_extra ? m_extra->comparisonDirection : std::nullopt;
}
int64_t HloInstruction::featureGroupCount() const {
    return m_extra ? m_extra->featureGroupCount : 1;
}
int64_t HloInstruction::batchGroupCount() const { return m_extra ? m_extra->batchGroupCount : 1; }
std::string_view HloInstruction::customCallTarget() const {
    return m_extra && m_extra->customCallTarget ? std::string_view(*m_extra->customCallTarget)
                                                : std::string_view();
}
std::string_view HloInstruction::fusionKind() const {
    return m_extra && m_extra->fusionKind ? std::string_view(*m_extra->fusionKind)
                                          : std::string_view();
}

std::vector<HloComputation*> HloInstruction::calledComputations() const {
    std::vector<HloComputation*> out;
    for (const auto& attr : m_calledComputations)
        out.insert(out.end(), attr.computations.begin(), attr.computations.end());
    return out;
}

HloComputation* HloInstruction::calledComputation(std::string_view name) const {
    for (const auto& attr : m_calledComputations)
        if (attr.name == name && !attr.computations.empty()) return attr.computations.front();
    return nullptr;
}

void HloInstruction::setCalledComputation(std::string name, HloComputation* computation) {
    noteMutation();
    for (auto& attr : m_calledComputations) {
        if (attr.name == name) {
            attr.computations = {computation};
            attr.isList = false;
            return;
        }
    }
    m_calledComputations.push_back({std::move(name), {computation}, false});
}

void HloInstruction::setCalledComputationList(std::string name,
                                              std::vector<HloComputation*> computations) {
    noteMutation();
    for (auto& attr : m_calledComputations) {
        if (attr.name == name) {
            attr.computations = std::move(computations);
            attr.isList = true;
            return;
        }
    }
    m_calledComputations.push_back({std::move(name), std::move(computations), true});
}

std::optional<std::string_view> HloInstruction::attribute(std::string_view name) const {
    for (const auto& attr : m_attributes)
        if (attr.name == name) return std::string_view(attr.value);
    return std::nullopt;
}

void HloInstruction::setAttribute(std::string name, std::string value) {
    noteMutation();
    for (auto& attr : m_attributes) {
        if (attr.name == name) {
            attr.value = std::move(value);
            return;
        }
    }
    m_attributes.push_back({std::move(name), std::move(value)});
}

bool HloInstruction::removeAttribute(std::string_view name) {
    noteMutation();
    auto it = std::find_if(m_attributes.begin(), m_attributes.end(),
                           [&](const HloAttribute& a) { return a.name == name; });
    if (it == m_attributes.end()) return false;
    m_attributes.erase(it);
    return true;
}

std::string HloInstruction::metadataField(std::string_view key) const {
    // metadata text: op_type="Add" op_name="a/b" source_file="x.py" source_line=3
    std::string_view text = m_metadata;
    size_t pos = 0;
    while (pos < text.size()) {
        while (pos < text.size() && text[pos] == ' ') ++pos;
        size_t eq = text.find('=', pos);
        if (eq == std::string_view::npos) break;
        std::string_view name = text.substr(pos, eq - pos);
        size_t valueStart = eq + 1;
        std::string value;
        size_t end = valueStart;
        if (valueStart < text.size() && text[valueStart] == '"') {
            end = valueStart + 1;
            while (end < text.size() && text[end] != '"') {
                if (text[end] == '\\' && end + 1 < text.size()) {
                    value += text[end + 1];
                    end += 2;
                    continue;
                }
                value += text[end++];
            }
            ++end;  // closing quote
        } else {
            int depth = 0;
            while (end < text.size() && (depth > 0 || text[end] != ' ')) {
                if (text[end] == '{') ++depth;
                if (text[end] == '}') --depth;
                ++end;
            }
            value = std::string(text.substr(valueStart, end - valueStart));
        }
        if (name == key) return value;
        pos = end;
    }
    return {};
}

bool HloInstruction::isRoot() const { return m_parent != nullptr && m_parent->root() == this; }

bool HloInstruction::hasSideEffect() const {
    if (hloOpcodeHasSideEffect(m_opcode)) return true;
    if (m_opcode == HloOpcode::kCustomCall) {
        auto flag = attribute("custom_call_has_side_effect");
        return flag && *flag == "true";
    }
    return false;
}

std::string HloInstruction::toString() const { return printInstruction(*this); }

namespace {

bool sameComputationNames(const std::vector<CalledComputationAttribute>& a,
                          const std::vector<CalledComputationAttribute>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].name != b[i].name || a[i].isList != b[i].isList ||
            a[i].computations.size() != b[i].computations.size())
            return false;
        for (size_t j = 0; j < a[i].computations.size(); ++j) {
            const HloComputation* x = a[i].computations[j];
            const HloComputation* y = b[i].computations[j];
            if ((x == nullptr) != (y == nullptr)) return false;
            if (x && x->name() != y->name()) return false;
        }
    }
    return true;
}

bool sameNames(const std::vector<HloInstruction*>& a, const std::vector<HloInstruction*>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i]->name() != b[i]->name()) return false;
    return true;
}

bool sameExtra(const HloExtraAttributes& a, const HloExtraAttributes& b) {
    return a.slice == b.slice && a.dynamicSliceSizes == b.dynamicSliceSizes &&
           a.padding == b.padding && a.window == b.window &&
           a.convolutionDimensionNumbers == b.convolutionDimensionNumbers &&
           a.featureGroupCount == b.featureGroupCount && a.batchGroupCount == b.batchGroupCount &&
           a.dotDimensionNumbers == b.dotDimensionNumbers &&
           a.gatherDimensionNumbers == b.gatherDimensionNumbers &&
           a.gatherSliceSizes == b.gatherSliceSizes &&
           a.scatterDimensionNumbers == b.scatterDimensionNumbers &&
           a.indicesAreSorted == b.indicesAreSorted && a.uniqueIndices == b.uniqueIndices &&
           a.comparisonDirection == b.comparisonDirection &&
           a.comparisonType == b.comparisonType && a.exponentBits == b.exponentBits &&
           a.mantissaBits == b.mantissaBits && a.epsilonText == b.epsilonText &&
           a.featureIndex == b.featureIndex && a.customCallTarget == b.customCallTarget &&
           a.fusionKind == b.fusionKind && a.isStable == b.isStable && a.fftType == b.fftType &&
           a.fftLength == b.fftLength && a.distribution == b.distribution && a.topK == b.topK &&
           a.largest == b.largest && a.asyncWrappedOpcode == b.asyncWrappedOpcode;
}

}  // namespace

bool HloInstruction::identicalTo(const HloInstruction& other, bool compareNames) const {
    if (m_opcode != other.m_opcode) return false;
    if (compareNames && m_name != other.m_name) return false;
    if (m_shape != other.m_shape) return false;
    if (m_parameterNumber != other.m_parameterNumber || m_index != other.m_index) return false;
    if (m_hasDimensions != other.m_hasDimensions || m_dimensions != other.m_dimensions)
        return false;
    if (literalText() != other.literalText() || m_metadata != other.m_metadata) return false;
    if (m_attributes != other.m_attributes) return false;
    if (!sameComputationNames(m_calledComputations, other.m_calledComputations)) return false;
    if (!sameNames(m_operands, other.m_operands)) return false;
    if (!sameNames(controlPredecessors(), other.controlPredecessors())) return false;
    return sameExtra(m_extra ? *m_extra : defaultExtra(),
                     other.m_extra ? *other.m_extra : defaultExtra());
}

}  // namespace hloscope
