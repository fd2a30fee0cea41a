// The attribute tables of the JSON format: the fields of its fixed-shape
// objects and the typed instruction attributes (HloExtraAttributes), each a
// JSON key with its codec. Adding a typed attribute is one entry in
// extraAttributeCodecs() (and a row in docs/json_format.md).
#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/json/hlo_json_internal.h"
#include "core/text/hlo_parser.h"

namespace hloscope::hlo_json_internal {

// ----------------------------------------------------------------------------
// Fixed-shape objects
// ----------------------------------------------------------------------------

const JsonStruct<WindowDimension>& windowDimensionStruct() {
    using F = JsonField<WindowDimension>;
    using T = WindowDimension;
    static const JsonStruct<T> type({
        F::requiredInt("size", &T::size),
        F::optionalInt("stride", &T::stride),
        F::optionalInt("padding_low", &T::paddingLow),
        F::optionalInt("padding_high", &T::paddingHigh),
        F::optionalInt("window_dilation", &T::windowDilation),
        F::optionalInt("base_dilation", &T::baseDilation),
        F::optionalBool("window_reversal", &T::windowReversal),
    });
    return type;
}

const JsonStruct<ConvolutionDimensionNumbers>& convolutionDimensionNumbersStruct() {
    using F = JsonField<ConvolutionDimensionNumbers>;
    using T = ConvolutionDimensionNumbers;
    static const JsonStruct<T> type(
        {
            F::requiredInt("input_batch_dimension", &T::inputBatchDimension),
            F::requiredInt("input_feature_dimension", &T::inputFeatureDimension),
            F::optionalIntList("input_spatial_dimensions", &T::inputSpatialDimensions),
            F::requiredInt("kernel_input_feature_dimension", &T::kernelInputFeatureDimension),
            F::requiredInt("kernel_output_feature_dimension", &T::kernelOutputFeatureDimension),
            F::optionalIntList("kernel_spatial_dimensions", &T::kernelSpatialDimensions),
            F::requiredInt("output_batch_dimension", &T::outputBatchDimension),
            F::requiredInt("output_feature_dimension", &T::outputFeatureDimension),
            F::optionalIntList("output_spatial_dimensions", &T::outputSpatialDimensions),
        },
        /*requiredFirst=*/true);
    return type;
}

const JsonStruct<DotDimensionNumbers>& dotDimensionNumbersStruct() {
    using F = JsonField<DotDimensionNumbers>;
    using T = DotDimensionNumbers;
    static const JsonStruct<T> type({
        F::optionalIntList("lhs_batch_dims", &T::lhsBatchDimensions),
        F::optionalIntList("rhs_batch_dims", &T::rhsBatchDimensions),
        F::optionalIntList("lhs_contracting_dims", &T::lhsContractingDimensions),
        F::optionalIntList("rhs_contracting_dims", &T::rhsContractingDimensions),
        F::optionalIntList("lhs_ragged_dims", &T::lhsRaggedDimensions),
        F::optionalIntList("rhs_group_dims", &T::rhsGroupDimensions),
    });
    return type;
}

const JsonStruct<GatherDimensionNumbers>& gatherDimensionNumbersStruct() {
    using F = JsonField<GatherDimensionNumbers>;
    using T = GatherDimensionNumbers;
    static const JsonStruct<T> type({
        F::optionalIntList("offset_dims", &T::offsetDims),
        F::optionalIntList("collapsed_slice_dims", &T::collapsedSliceDims),
        F::optionalIntList("start_index_map", &T::startIndexMap),
        F::optionalIntList("operand_batching_dims", &T::operandBatchingDims),
        F::optionalIntList("start_indices_batching_dims", &T::startIndicesBatchingDims),
        F::requiredInt("index_vector_dim", &T::indexVectorDim),
    });
    return type;
}

const JsonStruct<ScatterDimensionNumbers>& scatterDimensionNumbersStruct() {
    using F = JsonField<ScatterDimensionNumbers>;
    using T = ScatterDimensionNumbers;
    static const JsonStruct<T> type({
        F::optionalIntList("update_window_dims", &T::updateWindowDims),
        F::optionalIntList("inserted_window_dims", &T::insertedWindowDims),
        F::optionalIntList("scatter_dims_to_operand_dims", &T::scatterDimsToOperandDims),
        F::optionalIntList("input_batching_dims", &T::inputBatchingDims),
        F::optionalIntList("scatter_indices_batching_dims", &T::scatterIndicesBatchingDims),
        F::requiredInt("index_vector_dim", &T::indexVectorDim),
    });
    return type;
}

const JsonStruct<FileLocation>& fileLocationStruct() {
    using F = JsonField<FileLocation>;
    using T = FileLocation;
    static const JsonStruct<T> type({
        F::optionalInt("file_name_id", &T::fileNameId),
        F::optionalInt("function_name_id", &T::functionNameId),
        F::optionalInt("line", &T::line),
        F::optionalInt("end_line", &T::endLine),
        F::optionalInt("column", &T::column),
        F::optionalInt("end_column", &T::endColumn),
    });
    return type;
}

const JsonStruct<StackFrame>& stackFrameStruct() {
    using F = JsonField<StackFrame>;
    using T = StackFrame;
    static const JsonStruct<T> type({
        F::optionalInt("file_location_id", &T::fileLocationId),
        F::optionalInt("parent_frame_id", &T::parentFrameId),
    });
    return type;
}

const JsonStruct<BufferDonor>& bufferDonorStruct() {
    using F = JsonField<BufferDonor>;
    using T = BufferDonor;
    static const JsonStruct<T> type({
        F::requiredInt("parameter_number", &T::parameterNumber),
        F::requiredIntList("parameter_index", &T::parameterIndex),
    });
    return type;
}

namespace {

using Extra = HloExtraAttributes;

// ----------------------------------------------------------------------------
// Field codecs: decode a JSON value into a field's value type, encode it back
// ----------------------------------------------------------------------------

StatusOr<int64_t> decodeInt(const JsonReader& reader, const Json& value, const JsonPath& path) {
    return reader.readInt(value, path);
}
StatusOr<bool> decodeBool(const JsonReader& reader, const Json& value, const JsonPath& path) {
    return reader.readBool(value, path);
}
StatusOr<std::string> decodeString(const JsonReader& reader, const Json& value,
                                   const JsonPath& path) {
    return reader.readString(value, path);
}
StatusOr<std::vector<int64_t>> decodeIntList(const JsonReader& reader, const Json& value,
                                             const JsonPath& path) {
    return reader.readIntList(value, path);
}

Json encodeInt(int64_t value) { return value; }
Json encodeBool(bool value) { return value; }
Json encodeString(const std::string& value) { return value; }
Json encodeIntList(const std::vector<int64_t>& value) { return intList(value); }

// The names of an enumeration, shared with the HLO text parser and printer.
template <typename E>
struct EnumNames {
    using Enum = E;
    std::string_view noun;  // "comparison direction"
    std::optional<E> (*parse)(std::string_view);
    std::string_view (*name)(E);
    std::span<const E> values;  // the accepted values, listed in errors

    // "EQ, NE, GE, GT, LE or LT"
    std::string valueList() const {
        std::string out;
        for (size_t i = 0; i < values.size(); ++i) {
            if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
            out += name(values[i]);
        }
        return out;
    }
};

constexpr ComparisonDirection kComparisonDirections[] = {
    ComparisonDirection::kEq, ComparisonDirection::kNe, ComparisonDirection::kGe,
    ComparisonDirection::kGt, ComparisonDirection::kLe, ComparisonDirection::kLt};
constexpr EnumNames<ComparisonDirection> kComparisonDirectionNames{
    "comparison direction", &parseComparisonDirection, &comparisonDirectionString,
    kComparisonDirections};

constexpr ComparisonType kComparisonTypes[] = {ComparisonType::kFloat, ComparisonType::kTotalOrder,
                                               ComparisonType::kSigned, ComparisonType::kUnsigned};
constexpr EnumNames<ComparisonType> kComparisonTypeNames{"comparison type", &parseComparisonType,
                                                         &comparisonTypeString, kComparisonTypes};

template <const auto& Names>
auto decodeEnum(const JsonReader& reader, const Json& value, const JsonPath& path)
    -> StatusOr<typename std::remove_cvref_t<decltype(Names)>::Enum> {
    HLO_ASSIGN_OR_RETURN(std::string text, reader.readString(value, path));
    auto parsed = Names.parse(text);
    if (!parsed)
        return reader.error(path, "unknown " + std::string(Names.noun) + " " + quoteText(text) +
                                      " (expected " + Names.valueList() + ")");
    return *parsed;
}

template <const auto& Names>
Json encodeEnum(typename std::remove_cvref_t<decltype(Names)>::Enum value) {
    return std::string(Names.name(value));
}

template <typename T, const JsonStruct<T>& (*Type)()>
StatusOr<T> decodeStruct(const JsonReader& reader, const Json& value, const JsonPath& path) {
    return readStruct(reader, value, path, Type());
}

template <typename T, const JsonStruct<T>& (*Type)()>
Json encodeStruct(const T& value) {
    return structToJson(value, Type());
}

// A value in HLO text syntax, parsed with the HLO parser's grammar.
template <typename T>
StatusOr<T> decodeHloText(const JsonReader& reader, const Json& value, const JsonPath& path,
                          std::string_view noun, StatusOr<T> (*parse)(std::string_view)) {
    const std::string& text = value.get_ref<const std::string&>();
    StatusOr<T> parsed = parse(text);
    if (!parsed.isOk())
        return reader.error(path, "cannot parse " + std::string(noun) + " " + quoteText(text) +
                                      ": " + parsed.status().message());
    return parsed;
}

// ----------------------------------------------------------------------------
// Attribute codecs: a field codec bound to a member of HloExtraAttributes
// ----------------------------------------------------------------------------

// Whether a field differs from its default, and its value when it does.
template <typename T>
bool isSet(const std::optional<T>& field, const std::optional<T>&) {
    return field.has_value();
}
template <typename T>
bool isSet(const BoxedOptional<T>& field, const BoxedOptional<T>&) {
    return field.has_value();
}
template <typename T>
bool isSet(const T& field, const T& defaultValue) {
    return field != defaultValue;
}
template <typename T>
const T& valueOf(const std::optional<T>& field) {
    return *field;
}
template <typename T>
const T& valueOf(const BoxedOptional<T>& field) {
    return *field;
}
template <typename T>
const T& valueOf(const T& field) {
    return field;
}

const Extra& defaultExtra() {
    static const Extra defaults;
    return defaults;
}

template <auto Member, auto Decode>
Status readAttribute(const JsonReader& reader, const Json& value, const JsonPath& path,
                     HloInstruction& instruction) {
    HLO_ASSIGN_OR_RETURN(instruction.mutableExtra().*Member, Decode(reader, value, path));
    return Status::ok();
}

template <auto Member, auto Encode>
void writeAttribute(const Extra& extra, std::string_view key, Json& out) {
    const auto& field = extra.*Member;
    if (isSet(field, defaultExtra().*Member)) out[std::string(key)] = Encode(valueOf(field));
}

template <auto Member, auto Decode, auto Encode>
constexpr ExtraAttributeCodec attribute(std::string_view key) {
    return {key, &readAttribute<Member, Decode>, &writeAttribute<Member, Encode>};
}

// int64_t (written when not its default) or std::optional<int64_t>.
template <auto Member>
constexpr ExtraAttributeCodec intAttribute(std::string_view key) {
    return attribute<Member, &decodeInt, &encodeInt>(key);
}
// std::optional<bool>.
template <auto Member>
constexpr ExtraAttributeCodec boolAttribute(std::string_view key) {
    return attribute<Member, &decodeBool, &encodeBool>(key);
}
// BoxedOptional<std::string>.
template <auto Member>
constexpr ExtraAttributeCodec stringAttribute(std::string_view key) {
    return attribute<Member, &decodeString, &encodeString>(key);
}
// std::vector<int64_t>, written when not empty.
template <auto Member>
constexpr ExtraAttributeCodec intListAttribute(std::string_view key) {
    return attribute<Member, &decodeIntList, &encodeIntList>(key);
}
// An enumeration by name.
template <auto Member, const auto& Names>
constexpr ExtraAttributeCodec enumAttribute(std::string_view key) {
    return attribute<Member, &decodeEnum<Names>, &encodeEnum<Names>>(key);
}
// BoxedOptional of a fixed-shape object.
template <auto Member, typename T, const JsonStruct<T>& (*Type)()>
constexpr ExtraAttributeCodec structAttribute(std::string_view key) {
    return attribute<Member, &decodeStruct<T, Type>, &encodeStruct<T, Type>>(key);
}

// A plain bool written only when true; false on import leaves the
// instruction untouched.
template <auto Member>
Status readFlag(const JsonReader& reader, const Json& value, const JsonPath& path,
                HloInstruction& instruction) {
    HLO_ASSIGN_OR_RETURN(bool flag, reader.readBool(value, path));
    if (flag) instruction.mutableExtra().*Member = true;
    return Status::ok();
}
template <auto Member>
constexpr ExtraAttributeCodec flagAttribute(std::string_view key) {
    return {key, &readFlag<Member>, &writeAttribute<Member, &encodeBool>};
}

// ----------------------------------------------------------------------------
// Attributes with their own codecs
// ----------------------------------------------------------------------------

// Lists of [a, b, c] triples whose third entry may be left out.
template <typename T>
StatusOr<std::vector<T>> decodeTriples(const JsonReader& reader, const Json& value,
                                       const JsonPath& path, std::string_view description,
                                       int64_t defaultThird) {
    if (!value.is_array()) return reader.typeError(path, description, value);
    std::vector<T> out;
    for (size_t i = 0; i < value.size(); ++i) {
        HLO_ASSIGN_OR_RETURN(std::vector<int64_t> t, reader.readTriple(value[i], path.index(i), 2));
        out.push_back(T{t[0], t[1], t.size() > 2 ? t[2] : defaultThird});
    }
    return out;
}

template <typename T>
Json encodeTriples(const std::vector<T>& values) {
    Json out = Json::array();
    for (const T& value : values) {
        const auto& [a, b, c] = value;
        out.push_back(Json::array({a, b, c}));
    }
    return out;
}

// `slice`: [[start, limit, stride], ...], stride 1 when left out.
StatusOr<std::vector<SliceDimension>> decodeSlice(const JsonReader& reader, const Json& value,
                                                  const JsonPath& path) {
    return decodeTriples<SliceDimension>(reader, value, path,
                                         "an array of [start, limit, stride] triples", 1);
}

// `padding`: [[low, high, interior], ...], interior 0 when left out, or the
// HLO text ("0_1x2_3_1").
StatusOr<std::vector<PaddingDimension>> decodePadding(const JsonReader& reader, const Json& value,
                                                      const JsonPath& path) {
    if (value.is_string())
        return decodeHloText(reader, value, path, "padding", &parsePaddingConfig);
    return decodeTriples<PaddingDimension>(reader, value, path,
                                           "an array of [low, high, interior] triples", 0);
}

// `window`: an array of window-dimension objects, or the HLO text
// ("size=3x3 stride=2x2").
StatusOr<Window> decodeWindow(const JsonReader& reader, const Json& value, const JsonPath& path) {
    if (value.is_string()) return decodeHloText(reader, value, path, "window", &parseWindow);
    if (!value.is_array()) return reader.typeError(path, "an array of window dimensions", value);
    Window window;
    for (size_t i = 0; i < value.size(); ++i) {
        HLO_ASSIGN_OR_RETURN(WindowDimension d,
                             readStruct(reader, value[i], path.index(i), windowDimensionStruct()));
        window.dimensions.push_back(d);
    }
    return window;
}

Json encodeWindow(const Window& window) {
    Json out = Json::array();
    for (const WindowDimension& d : window.dimensions)
        out.push_back(structToJson(d, windowDimensionStruct()));
    return out;
}

// `convolution_dimension_numbers`: an object, or the dim_labels text
// ("b01f_01io->b01f").
StatusOr<ConvolutionDimensionNumbers> decodeConvolutionDimensionNumbers(const JsonReader& reader,
                                                                        const Json& value,
                                                                        const JsonPath& path) {
    if (value.is_string())
        return decodeHloText(reader, value, path, "dim_labels", &parseConvolutionDimensionNumbers);
    return readStruct(reader, value, path, convolutionDimensionNumbersStruct());
}

// `epsilon`: the text as written (lossless) or a number; the text is kept.
Status readEpsilon(const JsonReader& reader, const Json& value, const JsonPath& path,
                   HloInstruction& instruction) {
    if (value.is_string()) {
        std::string text = value.get<std::string>();
        double number = 0;
        const char* begin = text.data();
        const char* end = text.data() + text.size();
        if (begin != end && *begin == '+') ++begin;  // from_chars rejects '+'
        auto [ptr, ec] = std::from_chars(begin, end, number);
        if (text.empty() || ec != std::errc() || ptr != end)
            return reader.error(path, "cannot parse epsilon " + quoteText(text) + " as a number");
        instruction.mutableExtra().epsilon = number;
        instruction.mutableExtra().epsilonText = std::move(text);
    } else if (value.is_number()) {
        instruction.mutableExtra().epsilon = value.get<double>();
    } else {
        return reader.typeError(path, "a number or a numeric string", value);
    }
    return Status::ok();
}

void writeEpsilon(const Extra& extra, std::string_view key, Json& out) {
    if (!extra.epsilon) return;
    Json& slot = out[std::string(key)];
    if (!extra.epsilonText.empty())
        slot = extra.epsilonText;
    else if (std::isfinite(*extra.epsilon))
        slot = *extra.epsilon;
    else  // JSON has no inf/nan numbers
        slot = std::isnan(*extra.epsilon) ? "nan" : (*extra.epsilon > 0 ? "inf" : "-inf");
}

using D = ConvolutionDimensionNumbers;

// The order of HloExtraAttributes; docs/json_format.md lists the same order.
const ExtraAttributeCodec kExtraAttributeCodecs[] = {
    attribute<&Extra::slice, &decodeSlice, &encodeTriples<SliceDimension>>("slice"),
    intListAttribute<&Extra::dynamicSliceSizes>("dynamic_slice_sizes"),
    attribute<&Extra::padding, &decodePadding, &encodeTriples<PaddingDimension>>("padding"),
    attribute<&Extra::window, &decodeWindow, &encodeWindow>("window"),
    attribute<&Extra::convolutionDimensionNumbers, &decodeConvolutionDimensionNumbers,
              &encodeStruct<D, &convolutionDimensionNumbersStruct>>(
        "convolution_dimension_numbers"),
    intAttribute<&Extra::featureGroupCount>("feature_group_count"),
    intAttribute<&Extra::batchGroupCount>("batch_group_count"),
    structAttribute<&Extra::dotDimensionNumbers, DotDimensionNumbers, &dotDimensionNumbersStruct>(
        "dot_dimension_numbers"),
    structAttribute<&Extra::gatherDimensionNumbers, GatherDimensionNumbers,
                    &gatherDimensionNumbersStruct>("gather_dimension_numbers"),
    intListAttribute<&Extra::gatherSliceSizes>("slice_sizes"),
    structAttribute<&Extra::scatterDimensionNumbers, ScatterDimensionNumbers,
                    &scatterDimensionNumbersStruct>("scatter_dimension_numbers"),
    flagAttribute<&Extra::indicesAreSorted>("indices_are_sorted"),
    flagAttribute<&Extra::uniqueIndices>("unique_indices"),
    enumAttribute<&Extra::comparisonDirection, kComparisonDirectionNames>("comparison_direction"),
    enumAttribute<&Extra::comparisonType, kComparisonTypeNames>("comparison_type"),
    intAttribute<&Extra::exponentBits>("exponent_bits"),
    intAttribute<&Extra::mantissaBits>("mantissa_bits"),
    {"epsilon", &readEpsilon, &writeEpsilon},
    intAttribute<&Extra::featureIndex>("feature_index"),
    stringAttribute<&Extra::customCallTarget>("custom_call_target"),
    stringAttribute<&Extra::fusionKind>("fusion_kind"),
    boolAttribute<&Extra::isStable>("is_stable"),
    stringAttribute<&Extra::fftType>("fft_type"),
    intListAttribute<&Extra::fftLength>("fft_length"),
    stringAttribute<&Extra::distribution>("distribution"),
    intAttribute<&Extra::topK>("top_k"),
    boolAttribute<&Extra::largest>("largest"),
};

}  // namespace

std::span<const ExtraAttributeCodec> extraAttributeCodecs() { return kExtraAttributeCodecs; }

}  // namespace hloscope::hlo_json_internal
