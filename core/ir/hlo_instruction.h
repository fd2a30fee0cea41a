// HloInstruction: one node of an HLO computation, modelled on XLA's.
//
// Attributes come in three kinds:
//  * Typed attributes that shape inference, the verifier, the evaluator and
//    passes need (dimensions, slice, window, dot/conv/gather/scatter
//    dimension numbers, comparison direction, called computations, ...).
//    They are parsed into the fields below and printed from them.
//  * Everything else XLA may attach (sharding, frontend_attributes,
//    backend_config, channel_id, replica_groups, custom_call_has_side_effect,
//    ...) is kept verbatim, in order, as (name, text) pairs in attributes(),
//    so that printing loses nothing. Typed accessors such as
//    attribute("channel_id") read them.
//  * metadata={...} is kept verbatim (the text between the braces).
//
// The set of typed attribute names is kTypedAttributeNames below; the parser
// routes exactly those into fields, all others into attributes().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_opcode.h"
#include "core/ir/shape.h"

namespace hloscope {

class HloComputation;
class HloModule;

// `slice={[start:limit:stride], ...}`
struct SliceDimension {
    int64_t start = 0;
    int64_t limit = 0;
    int64_t stride = 1;
    bool operator==(const SliceDimension&) const = default;
};

// `padding=low_high_interior x ...` (interior omitted when 0)
struct PaddingDimension {
    int64_t edgeLow = 0;
    int64_t edgeHigh = 0;
    int64_t interior = 0;
    bool operator==(const PaddingDimension&) const = default;
};

// One dimension of `window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1
// rhs_dilate=1x1 rhs_reversal=0x1}`.
struct WindowDimension {
    int64_t size = 1;
    int64_t stride = 1;
    int64_t paddingLow = 0;
    int64_t paddingHigh = 0;
    int64_t windowDilation = 1;  // rhs_dilate
    int64_t baseDilation = 1;    // lhs_dilate
    bool windowReversal = false;  // rhs_reversal
    bool operator==(const WindowDimension&) const = default;
};

struct Window {
    std::vector<WindowDimension> dimensions;
    bool operator==(const Window&) const = default;
};

// From `dim_labels=b01f_01io->b01f`.
struct ConvolutionDimensionNumbers {
    int64_t inputBatchDimension = 0;
    int64_t inputFeatureDimension = 0;
    std::vector<int64_t> inputSpatialDimensions;
    int64_t kernelInputFeatureDimension = 0;
    int64_t kernelOutputFeatureDimension = 0;
    std::vector<int64_t> kernelSpatialDimensions;
    int64_t outputBatchDimension = 0;
    int64_t outputFeatureDimension = 0;
    std::vector<int64_t> outputSpatialDimensions;
    bool operator==(const ConvolutionDimensionNumbers&) const = default;
    std::string toString() const;  // "b01f_01io->b01f"
};

// lhs_batch_dims, rhs_batch_dims, lhs_contracting_dims, rhs_contracting_dims
// (and ragged-dot's lhs_ragged_dims, rhs_group_dims).
struct DotDimensionNumbers {
    std::vector<int64_t> lhsBatchDimensions;
    std::vector<int64_t> rhsBatchDimensions;
    std::vector<int64_t> lhsContractingDimensions;
    std::vector<int64_t> rhsContractingDimensions;
    std::vector<int64_t> lhsRaggedDimensions;
    std::vector<int64_t> rhsGroupDimensions;
    bool operator==(const DotDimensionNumbers&) const = default;
};

// offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
// start_indices_batching_dims, index_vector_dim.
struct GatherDimensionNumbers {
    std::vector<int64_t> offsetDims;
    std::vector<int64_t> collapsedSliceDims;
    std::vector<int64_t> startIndexMap;
    std::vector<int64_t> operandBatchingDims;
    std::vector<int64_t> startIndicesBatchingDims;
    int64_t indexVectorDim = 0;
    bool operator==(const GatherDimensionNumbers&) const = default;
};

// update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
// input_batching_dims, scatter_indices_batching_dims, index_vector_dim.
struct ScatterDimensionNumbers {
    std::vector<int64_t> updateWindowDims;
    std::vector<int64_t> insertedWindowDims;
    std::vector<int64_t> scatterDimsToOperandDims;
    std::vector<int64_t> inputBatchingDims;
    std::vector<int64_t> scatterIndicesBatchingDims;
    int64_t indexVectorDim = 0;
    bool operator==(const ScatterDimensionNumbers&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
std::string_view comparisonDirectionString(ComparisonDirection direction);  // "EQ"
std::optional<ComparisonDirection> parseComparisonDirection(std::string_view text);

// `type=` of compare; kDefault means the attribute was absent.
enum class ComparisonType : uint8_t { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
std::string_view comparisonTypeString(ComparisonType type);  // "FLOAT", "TOTALORDER", ...
std::optional<ComparisonType> parseComparisonType(std::string_view text);

// A verbatim attribute: `name=value` with value exactly as written (the
// parser collapses whitespace outside string literals to single spaces).
struct HloAttribute {
    std::string name;
    std::string value;
    bool operator==(const HloAttribute&) const = default;
};

// A called-computation attribute: `to_apply=%add`, `calls=%fused`,
// `condition=%c, body=%b`, `branch_computations={%a, %b}`,
// `true_computation=...`, `called_computations={...}`, `select=`, `scatter=`.
struct CalledComputationAttribute {
    std::string name;  // attribute name, e.g. "to_apply"
    std::vector<HloComputation*> computations;
    bool isList = false;  // printed as {%a, %b}
};

// std::optional-like holder that keeps its value on the heap, so that an
// unset large attribute costs one pointer in HloExtraAttributes.
template <typename T>
class BoxedOptional {
public:
    BoxedOptional() = default;
    BoxedOptional(std::nullopt_t) {}
    BoxedOptional(const T& value) : m_value(std::make_unique<T>(value)) {}
    BoxedOptional(T&& value) : m_value(std::make_unique<T>(std::move(value))) {}
    BoxedOptional(const std::optional<T>& value)
        : m_value(value ? std::make_unique<T>(*value) : nullptr) {}
    BoxedOptional(const BoxedOptional& other)
        : m_value(other.m_value ? std::make_unique<T>(*other.m_value) : nullptr) {}
    BoxedOptional(BoxedOptional&&) noexcept = default;
    BoxedOptional& operator=(const BoxedOptional& other) {
        if (this != &other) m_value = other.m_value ? std::make_unique<T>(*other.m_value) : nullptr;
        return *this;
    }
    BoxedOptional& operator=(BoxedOptional&&) noexcept = default;
    BoxedOptional& operator=(std::nullopt_t) {
        m_value.reset();
        return *this;
    }
    template <typename U>
        requires(std::is_constructible_v<T, U &&> &&
                 !std::is_same_v<std::decay_t<U>, BoxedOptional> &&
                 !std::is_same_v<std::decay_t<U>, std::nullopt_t>)
    BoxedOptional& operator=(U&& value) {
        m_value = std::make_unique<T>(std::forward<U>(value));
        return *this;
    }
    friend bool operator==(const BoxedOptional& a, const T& b) { return a && *a == b; }

    bool has_value() const { return m_value != nullptr; }
    explicit operator bool() const { return has_value(); }
    T& operator*() { return *m_value; }
    const T& operator*() const { return *m_value; }
    T* operator->() { return m_value.get(); }
    const T* operator->() const { return m_value.get(); }
    T& value() { return *m_value; }
    const T& value() const { return *m_value; }
    template <typename... Args>
    T& emplace(Args&&... args) {
        m_value = std::make_unique<T>(std::forward<Args>(args)...);
        return *m_value;
    }
    void reset() { m_value.reset(); }

    bool operator==(const BoxedOptional& other) const {
        if (has_value() != other.has_value()) return false;
        return !has_value() || *m_value == *other.m_value;
    }

private:
    std::unique_ptr<T> m_value;
};

// Typed attributes that only a few opcodes use, allocated on first use.
struct HloExtraAttributes {
    std::vector<SliceDimension> slice;             // slice=
    std::vector<int64_t> dynamicSliceSizes;        // dynamic_slice_sizes=
    std::vector<PaddingDimension> padding;         // padding= (pad)
    BoxedOptional<Window> window;                  // window=
    BoxedOptional<ConvolutionDimensionNumbers> convolutionDimensionNumbers;  // dim_labels=
    int64_t featureGroupCount = 1;                 // feature_group_count=
    int64_t batchGroupCount = 1;                   // batch_group_count=
    BoxedOptional<DotDimensionNumbers> dotDimensionNumbers;
    BoxedOptional<GatherDimensionNumbers> gatherDimensionNumbers;
    std::vector<int64_t> gatherSliceSizes;         // slice_sizes=
    BoxedOptional<ScatterDimensionNumbers> scatterDimensionNumbers;
    bool indicesAreSorted = false;                 // indices_are_sorted=true
    bool uniqueIndices = false;                    // unique_indices=true
    std::optional<ComparisonDirection> comparisonDirection;  // direction=
    ComparisonType comparisonType = ComparisonType::kDefault;  // type=
    std::optional<int64_t> exponentBits;           // exponent_bits=
    std::optional<int64_t> mantissaBits;           // mantissa_bits=
    std::optional<double> epsilon;                 // epsilon= (batch norm)
    std::string epsilonText;                       // epsilon exactly as written
    std::optional<int64_t> featureIndex;           // feature_index=
    BoxedOptional<std::string> customCallTarget;   // custom_call_target="..."
    BoxedOptional<std::string> fusionKind;         // kind=kLoop|kInput|kOutput|kCustom
    std::optional<bool> isStable;                  // is_stable= (sort)
    BoxedOptional<std::string> fftType;            // fft_type=FFT|IFFT|RFFT|IRFFT
    std::vector<int64_t> fftLength;                // fft_length=
    BoxedOptional<std::string> distribution;       // distribution=rng_uniform|rng_normal
    std::optional<int64_t> topK;                   // k= (topk)
    std::optional<bool> largest;                   // largest= (topk)
    std::optional<HloOpcode> asyncWrappedOpcode;   // `dot-start` sugar: wrapped opcode
};

class HloInstruction {
public:
    // Attribute names routed into typed fields by the parser (sorted).
    static const std::vector<std::string_view>& typedAttributeNames();
    static bool isTypedAttributeName(std::string_view name);

    HloInstruction(HloOpcode opcode, std::string name, Shape shape);
    ~HloInstruction();
    HloInstruction(const HloInstruction&) = delete;
    HloInstruction& operator=(const HloInstruction&) = delete;

    HloOpcode opcode() const { return m_opcode; }
    void setOpcode(HloOpcode opcode) {
        noteMutation();
        m_opcode = opcode;
    }
    const std::string& name() const { return m_name; }
    void setName(std::string name) {
        noteMutation();
        m_name = std::move(name);
    }
    const Shape& shape() const { return m_shape; }
    Shape& mutableShape() {
        noteMutation();
        return m_shape;
    }
    void setShape(Shape shape) {
        noteMutation();
        m_shape = std::move(shape);
    }

    // Unique within the module; assigned when added to a computation of a
    // module (or by HloModule::renumber()). -1 before that.
    int64_t uniqueId() const { return m_uniqueId; }
    void setUniqueId(int64_t id) {
        noteMutation();
        m_uniqueId = id;
    }

    HloComputation* parent() const { return m_parent; }
    void setParent(HloComputation* parent) { m_parent = parent; }

    // Operands and users. appendOperand/replaceOperand keep users in sync.
    const std::vector<HloInstruction*>& operands() const { return m_operands; }
    HloInstruction* operand(int64_t i) const { return m_operands[static_cast<size_t>(i)]; }
    int64_t operandCount() const { return static_cast<int64_t>(m_operands.size()); }
    void appendOperand(HloInstruction* operand);
    void replaceOperand(int64_t index, HloInstruction* newOperand);
    void removeAllOperands();
    const std::vector<HloInstruction*>& users() const { return m_users; }
    int64_t userCount() const { return static_cast<int64_t>(m_users.size()); }
    // Replaces every use of this instruction by `other` (control edges too).
    void replaceAllUsesWith(HloInstruction* other);

    // Control dependencies: `control-predecessors={%a, %b}`.
    const std::vector<HloInstruction*>& controlPredecessors() const;
    const std::vector<HloInstruction*>& controlSuccessors() const;
    void addControlDependencyTo(HloInstruction* successor);  // this -> successor
    void dropAllControlDependencies();

    // parameter(N)
    int64_t parameterNumber() const { return m_parameterNumber; }
    void setParameterNumber(int64_t n) {
        noteMutation();
        m_parameterNumber = n;
    }
    // get-tuple-element index=N, iota iota_dimension=N (same slot).
    int64_t tupleIndex() const { return m_index; }
    void setTupleIndex(int64_t i) {
        noteMutation();
        m_index = i;
    }
    int64_t iotaDimension() const { return m_index; }
    void setIotaDimension(int64_t d) {
        noteMutation();
        m_index = d;
    }

    // constant(...): the literal text as written between the parentheses,
    // whitespace collapsed.
    const std::string& literalText() const;
    void setLiteralText(std::string text);

    // dimensions={...}; hasDimensions() distinguishes `dimensions={}` from absent.
    bool hasDimensions() const { return m_hasDimensions; }
    const std::vector<int64_t>& dimensions() const { return m_dimensions; }
    int64_t dimensions(int64_t i) const { return m_dimensions[static_cast<size_t>(i)]; }
    void setDimensions(std::vector<int64_t> dims) {
        noteMutation();
        m_dimensions = std::move(dims);
        m_hasDimensions = true;
    }
    void clearDimensions() {
        noteMutation();
        m_dimensions.clear();
        m_hasDimensions = false;
    }

    // Rarely used typed attributes; extra() is nullptr when none is set.
    const HloExtraAttributes* extra() const { return m_extra.get(); }
    HloExtraAttributes& mutableExtra();

    // Convenience accessors over extra(); defaults when unset.
    const std::vector<SliceDimension>& slice() const;
    const std::vector<int64_t>& dynamicSliceSizes() const;
    const std::vector<PaddingDimension>& padding() const;
    const Window* window() const;
    const ConvolutionDimensionNumbers* convolutionDimensionNumbers() const;
    const DotDimensionNumbers* dotDimensionNumbers() const;
    const GatherDimensionNumbers* gatherDimensionNumbers() const;
    const ScatterDimensionNumbers* scatterDimensionNumbers() const;
    std::optional<ComparisonDirection> comparisonDirection() const;
    int64_t featureGroupCount() const;
    int64_t batchGroupCount() const;
    std::string_view customCallTarget() const;  // "" when none
    std::string_view fusionKind() const;        // "" when none

    // Called computations, in the order their attributes were written.
    const std::vector<CalledComputationAttribute>& calledComputationAttributes() const {
        return m_calledComputations;
    }
    std::vector<CalledComputationAttribute>& mutableCalledComputationAttributes() {
        noteMutation();
        return m_calledComputations;
    }
    // All called computations, flattened.
    std::vector<HloComputation*> calledComputations() const;
    // The single computation of attribute `name` (e.g. "to_apply", "body"),
    // nullptr when absent.
    HloComputation* calledComputation(std::string_view name) const;
    void setCalledComputation(std::string name, HloComputation* computation);
    void setCalledComputationList(std::string name, std::vector<HloComputation*> computations);
    // Convenience: to_apply / calls / condition / body.
    HloComputation* toApply() const { return calledComputation("to_apply"); }
    HloComputation* fusedComputation() const { return calledComputation("calls"); }
    HloComputation* whileCondition() const { return calledComputation("condition"); }
    HloComputation* whileBody() const { return calledComputation("body"); }

    // Verbatim attributes.
    const std::vector<HloAttribute>& attributes() const { return m_attributes; }
    std::vector<HloAttribute>& mutableAttributes() {
        noteMutation();
        return m_attributes;
    }
    // Value text of attribute `name`, nullopt when absent.
    std::optional<std::string_view> attribute(std::string_view name) const;
    // Sets (replacing) or appends a verbatim attribute.
    void setAttribute(std::string name, std::string value);
    bool removeAttribute(std::string_view name);

    // metadata={...}: the text between the braces, verbatim.
    const std::string& metadata() const { return m_metadata; }
    void setMetadata(std::string metadata) {
        noteMutation();
        m_metadata = std::move(metadata);
    }
    // A field of the metadata (op_type, op_name, source_file, source_line...),
    // unquoted; "" when absent.
    std::string metadataField(std::string_view key) const;

    bool isRoot() const;
    bool isElementwise() const { return hloOpcodeIsElementwise(m_opcode); }
    // Side effects: side-effecting opcodes, custom calls marked
    // custom_call_has_side_effect=true, and collectives.
    bool hasSideEffect() const;

    // One line of canonical HLO text (without ROOT and indentation):
    // "%name = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b), metadata={...}".
    std::string toString() const;

    // Structural equality of everything but operands/users/parent/id:
    // opcode, name, shape and every attribute. Called computations are
    // compared by name. Operands are compared by name.
    bool identicalTo(const HloInstruction& other, bool compareNames = true) const;

    // A copy with another shape, operands and name: opcode, dimensions,
    // indices, typed and verbatim attributes, called computations, metadata
    // and constant text are copied; control edges, users, parent and unique
    // id are not. The clone is not in any computation yet.
    std::unique_ptr<HloInstruction> cloneWithNewOperands(
        const Shape& shape, std::span<HloInstruction* const> operands, std::string name) const;

    // Counts a change of this instruction in its module's mutation count
    // (HloModule::mutationCount); every mutator above calls it, the mutable
    // accessors when they are called. Nothing for an instruction outside a module.
    // Mutators that change another instruction's printed form (replaceAllUsesWith
    // its users' operands, control edges their successors) count that one too.
    void noteMutation();
    // The module's mutation count at this instruction's last counted change (or
    // when it was added to a module's computation): a record made when the count was
    // at least this still describes the instruction. What is derived from an
    // instruction and its operands (its printed line, its verification) is
    // current when none of their stamps is newer than the derivation.
    uint64_t changeStamp() const { return m_changeStamp; }

private:
    friend class HloModule;  // clone() copies users and control edges in their order

    // For HloModule::clone(): this copy's operands, users and control edges become
    // `original`'s, in the same order, each instruction mapped to its copy through `map`.
    void copyEdgesFrom(const HloInstruction& original,
                       const std::function<HloInstruction*(const HloInstruction*)>& map);

    HloOpcode m_opcode;
    bool m_hasDimensions = false;
    std::string m_name;
    Shape m_shape;
    int64_t m_uniqueId = -1;
    int64_t m_parameterNumber = -1;
    int64_t m_index = 0;
    HloComputation* m_parent = nullptr;
    uint64_t m_changeStamp = 0;
    std::vector<HloInstruction*> m_operands;
    std::vector<HloInstruction*> m_users;
    std::vector<int64_t> m_dimensions;
    std::string m_metadata;
    std::vector<CalledComputationAttribute> m_calledComputations;
    std::vector<HloAttribute> m_attributes;
    std::unique_ptr<HloExtraAttributes> m_extra;
    // Fields few instructions use (control edges, constant text), allocated
    // on first use to keep the common instruction small.
    struct Rare;
    std::unique_ptr<Rare> m_rare;
    Rare& rare();
};

}  // namespace hloscope
