#include "core/lowering/library_calls.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <unordered_set>

#include "core/ir/hlo_computation.h"
#include "core/interpreter/interpreter.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser_internal.h"
#include "core/shape_inference/shape_inference.h"
#include "core/stablehlo/stablehlo_literal.h"

namespace hloscope {
namespace {

using Json = nlohmann::json;
using H = HloInstruction*;

constexpr std::string_view kGemm = "__cublas$gemm";
constexpr std::string_view kLtMatmul = "__cublas$lt$matmul";
constexpr std::string_view kLtMatmulF8 = "__cublas$lt$matmul$f8";
constexpr std::string_view kConvForward = "__cudnn$convForward";
constexpr std::string_view kConvBiasActivation = "__cudnn$convBiasActivationForward";
constexpr std::string_view kConvBackwardInput = "__cudnn$convBackwardInput";
constexpr std::string_view kConvBackwardFilter = "__cudnn$convBackwardFilter";
constexpr std::string_view kBlockScaledDot = "__op$block_scaled_dot";
constexpr std::string_view kCubSort = "xla.gpu.ext.cub_sort";
constexpr std::string_view kCubSortUnsized = "xla.gpu.ext.cub_sort_unassigned_scratch_size";

Status invalidAt(const HloInstruction& call, const std::string& why) {
    return Status(StatusCode::kInvalidArgument,
                  "%" + call.name() + ": " + std::string(call.customCallTarget()) + " " + why);
}

Status unimplementedAt(const HloInstruction& call, const std::string& why) {
    return Status(StatusCode::kUnimplemented,
                  "%" + call.name() + ": " + std::string(call.customCallTarget()) + " " + why);
}

// ---------------------------------------------------------------------------
// backend_config

// "lowerCamelCase" spelling of a snake_case key, as protobuf's JSON printer
// writes it by default.
std::string camelCase(std::string_view snake) {
    std::string out;
    bool upper = false;
    for (char c : snake) {
        if (c == '_') {
            upper = true;
            continue;
        }
        out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return out;
}

const Json* field(const Json& object, std::string_view key) {
    if (!object.is_object()) return nullptr;
    if (auto it = object.find(std::string(key)); it != object.end()) return &*it;
    if (auto it = object.find(camelCase(key)); it != object.end()) return &*it;
    return nullptr;
}

// A number written as a JSON number or a string ("0", "1.5").
std::optional<double> numberOf(const Json* value) {
    if (value == nullptr) return std::nullopt;
    if (value->is_number()) return value->get<double>();
    if (value->is_boolean()) return value->get<bool>() ? 1.0 : 0.0;
    if (value->is_string()) {
        const std::string& text = value->get_ref<const std::string&>();
        char* end = nullptr;
        const double parsed = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size()) return parsed;
    }
    return std::nullopt;
}

StatusOr<std::vector<int64_t>> intList(const HloInstruction& call, const Json& object,
                                       std::string_view key) {
    std::vector<int64_t> out;
    const Json* list = field(object, key);
    if (list == nullptr) return out;
    if (!list->is_array())
        return invalidAt(call, "backend_config: " + std::string(key) + " is not a list");
    for (const Json& item : *list) {
        auto value = numberOf(&item);
        if (!value || *value != std::floor(*value))
            return invalidAt(call, "backend_config: " + std::string(key) + " holds a non-integer");
        out.push_back(static_cast<int64_t>(*value));
    }
    return out;
}

// The config object: the backend_config attribute, unquoted, with bare keys
// quoted (some XLA tests write `{conv_result_scale:1}`) and trailing commas
// dropped, and the
// GpuBackendConfig wrapper's `wrapper` member taken when present. A null
// Json when the call has no backend_config.
StatusOr<Json> configOf(const HloInstruction& call, std::string_view wrapper) {
    auto attribute = call.attribute("backend_config");
    if (!attribute) return Json();
    std::string text = hlo_parser_internal::unquoteString(*attribute);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Json();
    static const std::regex bareKey(R"re(([\{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:)re");
    text = std::regex_replace(text, bareKey, "$1\"$2\":");
    static const std::regex trailingComma(R"re(,(\s*[\}\]]))re");
    text = std::regex_replace(text, trailingComma, "$1");
    Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object())
        return invalidAt(call, "has a backend_config that is not a JSON object");
    if (const Json* inner = field(json, wrapper)) {
        if (!inner->is_object())
            return invalidAt(call, "backend_config: " + std::string(wrapper) + " is not an object");
        return *inner;
    }
    return json;
}

// An enum written as its name or its number; `names[i]` is value i's name.
StatusOr<std::string> enumOf(const HloInstruction& call, const Json& object, std::string_view key,
                             const std::vector<std::string_view>& names) {
    const Json* value = field(object, key);
    if (value == nullptr) return std::string(names[0]);
    if (value->is_string()) {
        const std::string& text = value->get_ref<const std::string&>();
        if (text.empty()) return std::string(names[0]);
        for (std::string_view name : names)
            if (text == name) return text;
    }
    if (auto number = numberOf(value);
        number && *number >= 0 && *number < names.size() && *number == std::floor(*number))
        return std::string(names[static_cast<size_t>(*number)]);
    return unimplementedAt(call, std::string(key) + " " + value->dump() + " is not supported");
}

// ---------------------------------------------------------------------------
// Building

class Builder {
public:
    Builder(HloComputation& computation, const HloInstruction& call)
        : m_computation(computation), m_module(*computation.parent()), m_stem(call.name()) {}

    H add(HloOpcode opcode, Shape shape, std::vector<H> operands, std::string_view what) {
        auto instruction = std::make_unique<HloInstruction>(
            opcode, m_module.uniqueInstructionName(m_stem + "." + std::string(what)),
            std::move(shape));
        for (H operand : operands) instruction->appendOperand(operand);
        H added = m_computation.addInstruction(std::move(instruction));
        m_added.push_back(added);
        return added;
    }
    H scalar(PrimitiveType type, double value) {
        H c = add(HloOpcode::kConstant, Shape::makeScalar(type), {}, "constant");
        c->setLiteralText(stablehlo::formatScalar(type, value));
        return c;
    }
    // `value` broadcast to `like`'s shape.
    H splat(double value, H like) {
        H s = scalar(like->shape().elementType(), value);
        if (like->shape().isScalar()) return s;
        return broadcast(s, like->shape(), {});
    }
    H broadcast(H x, Shape shape, std::vector<int64_t> dimensions) {
        H b = add(HloOpcode::kBroadcast, std::move(shape), {x}, "broadcast");
        b->setDimensions(std::move(dimensions));
        return b;
    }
    H binary(HloOpcode opcode, H a, H b, std::string_view what) {
        return add(opcode, a->shape(), {a, b}, what);
    }
    H unary(HloOpcode opcode, H x, std::string_view what) {
        return add(opcode, x->shape(), {x}, what);
    }
    H convert(H x, PrimitiveType type) {
        if (x->shape().elementType() == type) return x;
        Shape shape = x->shape();
        shape.setElementType(type);
        return add(HloOpcode::kConvert, std::move(shape), {x}, "convert");
    }
    H scale(H x, double factor, std::string_view what) {
        if (factor == 1) return x;
        return binary(HloOpcode::kMultiply, x, splat(factor, x), what);
    }
    H select(H pred, H onTrue, H onFalse) {
        return add(HloOpcode::kSelect, onTrue->shape(), {pred, onTrue, onFalse}, "select");
    }
    H positive(H x) {
        Shape shape = x->shape();
        shape.setElementType(PrimitiveType::PRED);
        H c = add(HloOpcode::kCompare, std::move(shape), {x, splat(0, x)}, "positive");
        c->mutableExtra().comparisonDirection = ComparisonDirection::kGt;
        return c;
    }
    // Zeros of a workspace or scratch buffer's shape.
    H zeros(const Shape& shape) {
        H zero = scalar(shape.elementType(), 0);
        return broadcast(zero, shape, {});
    }
    H tuple(const std::vector<H>& elements) {
        std::vector<Shape> shapes;
        for (H e : elements) shapes.push_back(e->shape());
        return add(HloOpcode::kTuple, Shape::makeTuple(std::move(shapes)), elements, "tuple");
    }

    const std::vector<H>& added() const { return m_added; }
    // Removes what was built (an error midway).
    void discard() {
        if (!m_added.empty()) (void)m_computation.removeInstructions(m_added);
        m_added.clear();
    }

private:
    HloComputation& m_computation;
    HloModule& m_module;
    std::string m_stem;
    std::vector<H> m_added;
};

bool isWorkspace(const Shape& shape) {
    return shape.isArray() && shape.rank() == 1 &&
           (shape.elementType() == PrimitiveType::U8 || shape.elementType() == PrimitiveType::S8);
}

bool sameDimensions(const Shape& a, const Shape& b) {
    if (a.rank() != b.rank()) return false;
    for (int64_t d = 0; d < a.rank(); ++d)
        if (a.dimensions(d) != b.dimensions(d)) return false;
    return true;
}

// The result's leading arrays (`count` of them) and its trailing workspace:
// a tuple (arrays..., workspace) or, when `count` is 1, the array alone.
StatusOr<std::vector<Shape>> resultArrays(const HloInstruction& call, size_t count,
                                          std::optional<Shape>* workspace) {
    const Shape& shape = call.shape();
    if (shape.isArray()) {
        if (count != 1)
            return invalidAt(call, "must return a tuple of " + std::to_string(count) + " results");
        return std::vector<Shape>{shape};
    }
    if (!shape.isTuple()) return invalidAt(call, "has a result that is neither array nor tuple");
    const size_t n = static_cast<size_t>(shape.tupleCount());
    if (n < count || n > count + 1)
        return invalidAt(call, "returns " + std::to_string(n) + " values; expected " +
                                   std::to_string(count) + " and a workspace");
    std::vector<Shape> arrays;
    for (size_t i = 0; i < count; ++i) {
        const Shape& element = shape.tupleShape(static_cast<int64_t>(i));
        if (!element.isArray())
            return invalidAt(call, "result " + std::to_string(i) + " is not an array");
        arrays.push_back(element);
    }
    if (n == count + 1) {
        const Shape& last = shape.tupleShape(static_cast<int64_t>(count));
        if (!isWorkspace(last))
            return invalidAt(call, "ends in " + last.toString(false) + ", not a u8/s8 workspace");
        *workspace = last;
    }
    return arrays;
}

// ---------------------------------------------------------------------------
// cuBLAS

struct GemmConfig {
    double alphaReal = 1;
    double alphaImag = 0;
    double beta = 0;
    DotDimensionNumbers dims;
    std::string epilogue = "DEFAULT";
    bool bias = false;
    bool aux = false;
    std::string activation;        // "", "RELU", "GELU"
    std::string operandPrecision;  // "{highest,highest}" from precision_config, or ""
};

StatusOr<GemmConfig> gemmConfig(const HloInstruction& call) {
    HLO_ASSIGN_OR_RETURN(Json json, configOf(call, "gemm_backend_config"));
    if (json.is_null())
        return invalidAt(call, "has no backend_config: its dimension numbers are unknown");
    GemmConfig config;
    if (auto v = numberOf(field(json, "alpha_real"))) config.alphaReal = *v;
    if (auto v = numberOf(field(json, "alpha_imag"))) config.alphaImag = *v;
    if (auto v = numberOf(field(json, "beta"))) config.beta = *v;
    const Json* dims = field(json, "dot_dimension_numbers");
    if (dims == nullptr || !dims->is_object())
        return invalidAt(call, "backend_config has no dot_dimension_numbers");
    HLO_ASSIGN_OR_RETURN(config.dims.lhsContractingDimensions,
                         intList(call, *dims, "lhs_contracting_dimensions"));
    HLO_ASSIGN_OR_RETURN(config.dims.rhsContractingDimensions,
                         intList(call, *dims, "rhs_contracting_dimensions"));
    HLO_ASSIGN_OR_RETURN(config.dims.lhsBatchDimensions,
                         intList(call, *dims, "lhs_batch_dimensions"));
    HLO_ASSIGN_OR_RETURN(config.dims.rhsBatchDimensions,
                         intList(call, *dims, "rhs_batch_dimensions"));
    HLO_ASSIGN_OR_RETURN(config.epilogue, enumOf(call, json, "epilogue",
                                                 {"DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU",
                                                  "GELU_AUX", "BIAS_GELU", "BIAS_GELU_AUX"}));
    const std::string& e = config.epilogue;
    config.bias = e.rfind("BIAS", 0) == 0;
    config.aux = e.size() > 4 && e.compare(e.size() - 4, 4, "_AUX") == 0;
    if (e.find("RELU") != std::string::npos) config.activation = "RELU";
    if (e.find("GELU") != std::string::npos) config.activation = "GELU";
    if (const Json* precision = field(json, "precision_config")) {
        const Json* operands = field(*precision, "operand_precision");
        if (operands && operands->is_array() && operands->size() == 2) {
            std::string text = "{";
            for (const Json& item : *operands) {
                if (!item.is_string()) return invalidAt(call, "backend_config: operand_precision");
                std::string name = item.get<std::string>();
                for (char& c : name)
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                text += (text.size() > 1 ? "," : "") + name;
            }
            config.operandPrecision = text + "}";
        }
    }
    if (auto damax = numberOf(field(json, "damax_output")); damax && *damax != 0)
        return unimplementedAt(call, "with damax_output (an fp8 scaling output) is not supported");
    return config;
}

std::string complexText(PrimitiveType type, double re, double im) {
    const PrimitiveType part = primitive_util::complexComponentType(type);
    return "(" + stablehlo::formatScalar(part, re) + ", " + stablehlo::formatScalar(part, im) + ")";
}

// tanh-approximated gelu, as cuBLASLt's GELU epilogues compute it.
H geluTanh(Builder& b, H x) {
    H cube =
        b.binary(HloOpcode::kMultiply, x, b.binary(HloOpcode::kMultiply, x, x, "square"), "cube");
    H inner = b.binary(HloOpcode::kAdd, x, b.scale(cube, 0.044715, "gelu.cubic"), "gelu.inner");
    H t = b.unary(HloOpcode::kTanh, b.scale(inner, std::sqrt(2.0 / M_PI), "gelu.scaled"),
                  "gelu.tanh");
    H onePlus = b.binary(HloOpcode::kAdd, t, b.splat(1, t), "gelu.one_plus");
    return b.binary(HloOpcode::kMultiply, b.scale(x, 0.5, "gelu.half"), onePlus, "gelu");
}

StatusOr<H> expandGemm(Builder& b, HloInstruction& call) {
    const bool f8 = call.customCallTarget() == kLtMatmulF8;
    if (call.customCallTarget() != kGemm && call.customCallTarget() != kLtMatmul && !f8)
        return unimplementedAt(call, "is not supported");
    HLO_ASSIGN_OR_RETURN(GemmConfig config, gemmConfig(call));
    std::optional<Shape> workspace;
    HLO_ASSIGN_OR_RETURN(std::vector<Shape> results,
                         resultArrays(call, config.aux ? 2 : 1, &workspace));
    const Shape& d = results[0];
    const PrimitiveType type = d.elementType();
    size_t expected = 2 + (config.beta != 0 ? 1 : 0) + (config.bias ? 1 : 0);
    // An fp8 gemm's dequantising scales: a_scale and b_scale after a, b (and c),
    // D = a_scale * b_scale * (A B), accumulated in f32 as cuBLASLt does.
    H scale = nullptr;
    if (f8 && static_cast<size_t>(call.operandCount()) == expected + 2) {
        if (config.bias || config.activation != "" || config.aux)
            return unimplementedAt(call, "with an epilogue is not supported");
        for (int64_t i = 0; i < 2; ++i) {
            const Shape& s = call.operand(static_cast<int64_t>(expected) + i)->shape();
            if (!s.isArray() || s.rank() != 0 || s.elementType() != PrimitiveType::F32)
                return invalidAt(call, "has a scale of shape " + s.toString(false) +
                                           "; a_scale and b_scale are f32 scalars");
        }
        scale = b.binary(HloOpcode::kMultiply, call.operand(static_cast<int64_t>(expected)),
                         call.operand(static_cast<int64_t>(expected) + 1), "ab_scale");
    } else if (f8 && static_cast<size_t>(call.operandCount()) > expected) {
        return unimplementedAt(call, "with c, d or amax scales (" +
                                         std::to_string(call.operandCount()) +
                                         " operands) is not supported");
    }
    if (scale != nullptr) expected += 2;
    if (static_cast<size_t>(call.operandCount()) != expected)
        return invalidAt(call, "takes " + std::to_string(expected) + " operands (a, b" +
                                   (config.beta != 0 ? ", c" : "") + (config.bias ? ", bias" : "") +
                                   "), not " + std::to_string(call.operandCount()));
    if (config.alphaImag != 0 && !primitive_util::isComplex(type))
        return invalidAt(call, "has an imaginary alpha but a real result");
    if (config.activation == "GELU" && !primitive_util::isFloatingPoint(type))
        return invalidAt(call, "applies GELU to a non-float result");

    Shape dotShape = d;
    if (scale != nullptr) dotShape.setElementType(PrimitiveType::F32);
    H dot = b.add(HloOpcode::kDot, dotShape, {call.operand(0), call.operand(1)}, "dot");
    dot->mutableExtra().dotDimensionNumbers = config.dims;
    if (!config.operandPrecision.empty())
        dot->setAttribute("operand_precision", config.operandPrecision);
    auto inferred = inferShape(*dot);
    if (!inferred.isOk())
        return invalidAt(
            call, "backend_config's dot does not fit the operands: " + inferred.status().message());
    if (!sameDimensions(*inferred, d))
        return invalidAt(call, "returns " + d.toString(false) + " but its dot gives " +
                                   inferred->toString(false));
    H x = dot;
    if (scale != nullptr)
        x = b.convert(
            b.binary(HloOpcode::kMultiply, dot, b.broadcast(scale, dotShape, {}), "scaled"), type);
    if (config.alphaImag != 0) {
        H alpha = b.add(HloOpcode::kConstant, Shape::makeScalar(type), {}, "alpha");
        alpha->setLiteralText(complexText(type, config.alphaReal, config.alphaImag));
        x = b.binary(HloOpcode::kMultiply, x, b.broadcast(alpha, d, {}), "alpha");
    } else {
        x = b.scale(x, config.alphaReal, "alpha");
    }
    int64_t next = 2;
    if (config.beta != 0) {
        H c = call.operand(next++);
        if (!sameDimensions(c->shape(), d) || !c->shape().isArray())
            return invalidAt(
                call, "adds c of shape " + c->shape().toString(false) + " to " + d.toString(false));
        x = b.binary(HloOpcode::kAdd, x, b.scale(b.convert(c, type), config.beta, "beta"), "add_c");
    }
    if (config.bias) {
        H bias = call.operand(next++);
        if (!bias->shape().isArray() || bias->shape().rank() != 1 || d.rank() == 0 ||
            bias->shape().dimensions(0) != d.dimensions(d.rank() - 1))
            return invalidAt(call, "has a bias of shape " + bias->shape().toString(false) +
                                       "; it must be a vector as long as the result's last "
                                       "dimension");
        H spread = b.broadcast(b.convert(bias, type), d, {d.rank() - 1});
        x = b.binary(HloOpcode::kAdd, x, spread, "bias");
    }
    H preActivation = x;
    if (config.activation == "RELU") x = b.binary(HloOpcode::kMaximum, x, b.splat(0, x), "relu");
    if (config.activation == "GELU") x = geluTanh(b, x);
    if (!call.shape().isTuple()) return x;
    std::vector<H> elements = {x};
    if (config.aux) elements.push_back(b.convert(preActivation, results[1].elementType()));
    if (workspace) elements.push_back(b.zeros(*workspace));
    return b.tuple(elements);
}

// XLA's block-scaled dot (its block_scaling_rewriter's input): lhs [B,] M x K
// and rhs [B,] N x K, both contracted on their last dimension, each times its
// scale per block of K (the rhs's may be absent), the product times an
// optional scalar global scale: a scaled-dot.
StatusOr<H> expandBlockScaledDot(Builder& b, HloInstruction& call) {
    const int64_t n = call.operandCount();
    if (n < 3 || n > 5 || !call.shape().isArray())
        return invalidAt(call,
                         "takes lhs, rhs, lhs_scale[, rhs_scale][, global_scale] and "
                         "returns an array");
    for (H operand : call.operands())
        if (!operand->shape().isArray())
            return invalidAt(call, "has a non-array operand %" + operand->name());
    H lhs = call.operand(0);
    H rhs = call.operand(1);
    const int64_t rank = lhs->shape().rank();
    if ((rank != 2 && rank != 3) || rhs->shape().rank() != rank)
        return invalidAt(call, "needs operands of rank 2 or 3 (batch, rows, contracted)");
    H lhsScale = call.operand(2);
    H rhsScale = nullptr;
    H global = nullptr;
    for (int64_t i = 3; i < n; ++i) {
        H operand = call.operand(i);
        if (operand->shape().rank() == 0 && global == nullptr && i == n - 1)
            global = operand;
        else if (rhsScale == nullptr && i == 3)
            rhsScale = operand;
        else
            return invalidAt(call, "has an operand %" + operand->name() +
                                       " that is neither the rhs scale nor a scalar global scale");
    }
    // An absent rhs scale: a scalar, which scaled-dot ignores.
    if (rhsScale == nullptr) rhsScale = b.scalar(PrimitiveType::F32, 1);
    const Shape& d = call.shape();
    H dot = b.add(HloOpcode::kScaledDot, d, {lhs, rhs, lhsScale, rhsScale}, "scaled_dot");
    DotDimensionNumbers dims;
    dims.lhsContractingDimensions = {rank - 1};
    dims.rhsContractingDimensions = {rank - 1};
    if (rank == 3) dims.lhsBatchDimensions = dims.rhsBatchDimensions = {0};
    dot->mutableExtra().dotDimensionNumbers = dims;
    auto inferred = inferShape(*dot);
    if (!inferred.isOk())
        return invalidAt(
            call, "is not a block-scaled dot of its operands: " + inferred.status().message());
    if (!sameDimensions(*inferred, d))
        return invalidAt(call, "returns " + d.toString(false) + " but its dot gives " +
                                   inferred->toString(false));
    if (global == nullptr) return dot;
    if (!primitive_util::isFloatingPoint(d.elementType()))
        return invalidAt(call, "scales a non-float result");
    H factor = b.broadcast(b.convert(global, d.elementType()), d, {});
    return b.binary(HloOpcode::kMultiply, dot, factor, "global_scale");
}

// ---------------------------------------------------------------------------
// CUB

// A stable sort of each row (the last dimension) by its keys, the values
// moved with them. Radix sort orders floats by their bits made monotonic,
// which is the total order except that -0 and +0 are equal keys (CUB
// documents this): the comparator compares the keys with zeros made +0.
StatusOr<H> expandCubSort(Builder& b, HloInstruction& call) {
    const int64_t n = call.operandCount();
    if (n != 1 && n != 2) return invalidAt(call, "sorts keys or (keys, values)");
    const Shape& keys = call.operand(0)->shape();
    if (!keys.isArray() || keys.rank() == 0)
        return invalidAt(call, "needs keys with at least one dimension");
    const PrimitiveType keyType = keys.elementType();
    if (!primitive_util::isFloatingPoint(keyType) && !primitive_util::isInteger(keyType))
        return unimplementedAt(call, "sorts " + std::string(primitive_util::name(keyType)) +
                                         " keys (radix sort takes integers and floats)");
    if (n == 2 && !call.operand(1)->shape().isArray())
        return invalidAt(call, "has values that are not an array");
    if (n == 2 && !sameDimensions(call.operand(1)->shape(), keys))
        return invalidAt(call, "has values " + call.operand(1)->shape().toString(false) +
                                   " that do not match its keys " + keys.toString(false));
    std::optional<Shape> scratch;
    HLO_ASSIGN_OR_RETURN(std::vector<Shape> arrays,
                         resultArrays(call, static_cast<size_t>(n), &scratch));
    for (int64_t i = 0; i < n; ++i)
        if (!arrays[static_cast<size_t>(i)].compatible(call.operand(i)->shape()))
            return invalidAt(call, "returns " + arrays[static_cast<size_t>(i)].toString(false) +
                                       " for its operand " +
                                       call.operand(i)->shape().toString(false));
    HLO_ASSIGN_OR_RETURN(Json config, configOf(call, ""));
    bool descending = false;
    if (const Json* value = config.is_object() ? field(config, "descending") : nullptr) {
        if (!value->is_boolean())
            return invalidAt(call, "backend_config: descending is not a bool");
        descending = value->get<bool>();
    }

    // The comparator: (key0, key1[, value0, value1]) -> key0 < key1 (or >).
    HloModule& module = *call.parent()->parent();
    HloComputation* comparator = module.addComputation(
        std::make_unique<HloComputation>(module.uniqueComputationName(call.name() + ".compare")));
    {
        Builder c(*comparator, call);
        std::vector<H> parameters;
        for (int64_t i = 0; i < 2 * n; ++i) {
            auto parameter = std::make_unique<HloInstruction>(
                HloOpcode::kParameter, module.uniqueInstructionName(call.name() + ".p"),
                Shape::makeScalar(call.operand(i / 2)->shape().elementType()));
            parameter->setParameterNumber(i);
            parameters.push_back(comparator->addInstruction(std::move(parameter)));
        }
        H lhs = parameters[0], rhs = parameters[1];
        ComparisonType type = ComparisonType::kDefault;
        if (primitive_util::isFloatingPoint(keyType)) {
            type = ComparisonType::kTotalOrder;
            auto positiveZero = [&](H x) {
                H zero = c.scalar(keyType, 0);
                H isZero = c.add(HloOpcode::kCompare, Shape::makeScalar(PrimitiveType::PRED),
                                 {x, zero}, "is_zero");
                isZero->mutableExtra().comparisonDirection = ComparisonDirection::kEq;
                return c.select(isZero, zero, x);
            };
            lhs = positiveZero(lhs);
            rhs = positiveZero(rhs);
        }
        H less = c.add(HloOpcode::kCompare, Shape::makeScalar(PrimitiveType::PRED), {lhs, rhs},
                       descending ? "greater" : "less");
        less->mutableExtra().comparisonDirection =
            descending ? ComparisonDirection::kGt : ComparisonDirection::kLt;
        less->mutableExtra().comparisonType = type;
        comparator->setRoot(less);
    }
    // Printed before the computation that sorts with it.
    std::vector<HloComputation*> order;
    for (const auto& computation : module.computations()) {
        if (computation.get() == comparator) continue;
        if (computation.get() == call.parent()) order.push_back(comparator);
        order.push_back(computation.get());
    }
    HLO_RETURN_IF_ERROR(module.reorderComputations(order));

    std::vector<H> operands(call.operands().begin(), call.operands().end());
    Shape sortShape = n == 1 ? arrays[0] : Shape::makeTuple({arrays[0], arrays[1]});
    H sort = b.add(HloOpcode::kSort, sortShape, operands, "sort");
    sort->setDimensions({keys.rank() - 1});
    sort->mutableExtra().isStable = true;
    sort->setCalledComputation("to_apply", comparator);
    std::vector<H> elements;
    if (n == 1) {
        elements.push_back(sort);
    } else {
        for (int64_t i = 0; i < n; ++i) {
            H element = b.add(HloOpcode::kGetTupleElement, arrays[static_cast<size_t>(i)], {sort},
                              "sorted");
            element->setTupleIndex(i);
            elements.push_back(element);
        }
    }
    if (!call.shape().isTuple()) return elements.front();
    if (scratch) elements.push_back(b.zeros(*scratch));
    return b.tuple(elements);
}

// ---------------------------------------------------------------------------
// cuDNN

struct ConvConfig {
    double resultScale = 1;
    double sideInputScale = 0;
    double leakyReluAlpha = 0;
    std::string activation = "kNone";
};

StatusOr<ConvConfig> convConfig(const HloInstruction& call) {
    HLO_ASSIGN_OR_RETURN(Json json, configOf(call, "cudnn_conv_backend_config"));
    ConvConfig config;
    if (json.is_null()) return config;
    if (auto v = numberOf(field(json, "conv_result_scale"))) config.resultScale = *v;
    if (auto v = numberOf(field(json, "side_input_scale"))) config.sideInputScale = *v;
    if (auto v = numberOf(field(json, "leakyrelu_alpha"))) config.leakyReluAlpha = *v;
    HLO_ASSIGN_OR_RETURN(config.activation,
                         enumOf(call, json, "activation_mode",
                                {"kNone", "kSigmoid", "kRelu", "kRelu6", "kReluX", "kTanh",
                                 "kBandPass", "kElu", "kLeakyRelu", "kGeluExact"}));
    return config;
}

StatusOr<H> activate(Builder& b, const HloInstruction& call, const ConvConfig& config, H x) {
    const std::string& mode = config.activation;
    const bool isFloat = primitive_util::isFloatingPoint(x->shape().elementType());
    if (mode == "kNone") return x;
    if (mode == "kRelu") return b.binary(HloOpcode::kMaximum, x, b.splat(0, x), "relu");
    if (!isFloat) return invalidAt(call, "applies " + mode + " to a non-float result");
    if (mode == "kSigmoid") return b.unary(HloOpcode::kLogistic, x, "sigmoid");
    if (mode == "kTanh") return b.unary(HloOpcode::kTanh, x, "tanh");
    if (mode == "kRelu6")
        return b.add(HloOpcode::kClamp, x->shape(), {b.splat(0, x), x, b.splat(6, x)}, "relu6");
    if (mode == "kElu")
        return b.select(b.positive(x), x, b.unary(HloOpcode::kExpm1, x, "elu.expm1"));
    if (mode == "kLeakyRelu")
        return b.select(b.positive(x), x, b.scale(x, config.leakyReluAlpha, "leaky"));
    if (mode == "kGeluExact") {
        H e = b.unary(HloOpcode::kErf, b.scale(x, 1 / std::sqrt(2.0), "gelu.scaled"), "gelu.erf");
        H onePlus = b.binary(HloOpcode::kAdd, e, b.splat(1, e), "gelu.one_plus");
        return b.binary(HloOpcode::kMultiply, b.scale(x, 0.5, "gelu.half"), onePlus, "gelu");
    }
    return unimplementedAt(call, "activation " + mode + " is not supported");
}

// The convolution that computes the call's first result from `lhs` and
// `rhs`, with `window` and `dims`; checked against the result's shape.
StatusOr<H> convolution(Builder& b, const HloInstruction& call, const Shape& result, H lhs, H rhs,
                        Window window, ConvolutionDimensionNumbers dims, int64_t featureGroups,
                        int64_t batchGroups) {
    H conv = b.add(HloOpcode::kConvolution, result, {lhs, rhs}, "convolution");
    HloExtraAttributes& extra = conv->mutableExtra();
    extra.window = std::move(window);
    extra.convolutionDimensionNumbers = std::move(dims);
    extra.featureGroupCount = featureGroups;
    extra.batchGroupCount = batchGroups;
    auto inferred = inferShape(*conv);
    if (!inferred.isOk())
        return invalidAt(call, "does not describe a convolution: " + inferred.status().message());
    if (!sameDimensions(*inferred, result))
        return invalidAt(call, "returns " + result.toString(false) + " but its convolution gives " +
                                   inferred->toString(false));
    return conv;
}

// A window of `rank` spatial dimensions (absent: size 1 everywhere).
Window windowOf(const HloInstruction& call, size_t rank) {
    if (const Window* window = call.window()) return *window;
    Window window;
    window.dimensions.resize(rank);
    return window;
}

// The backward convolutions assume what XLA's rewriter does: no base
// dilation, no reversal, one group.
Status checkBackward(const HloInstruction& call, const Window& window) {
    if (call.featureGroupCount() != 1 || call.batchGroupCount() != 1)
        return unimplementedAt(call, "with feature or batch groups is not supported");
    for (const WindowDimension& w : window.dimensions)
        if (w.baseDilation != 1 || w.windowReversal)
            return unimplementedAt(call, "with lhs dilation or window reversal is not supported");
    return Status::ok();
}

// Convolution dimension numbers from each side's roles: (batch, feature,
// spatial) of the input and the output, (input feature, output feature,
// spatial) of the kernel.
struct Roles {
    int64_t first;
    int64_t second;
    const std::vector<int64_t>& spatial;
};
ConvolutionDimensionNumbers dimensionNumbers(Roles input, Roles kernel, Roles output) {
    ConvolutionDimensionNumbers dims;
    dims.inputBatchDimension = input.first;
    dims.inputFeatureDimension = input.second;
    dims.inputSpatialDimensions = input.spatial;
    dims.kernelInputFeatureDimension = kernel.first;
    dims.kernelOutputFeatureDimension = kernel.second;
    dims.kernelSpatialDimensions = kernel.spatial;
    dims.outputBatchDimension = output.first;
    dims.outputFeatureDimension = output.second;
    dims.outputSpatialDimensions = output.spatial;
    return dims;
}

// d input[x] = sum over k of grad dilated by the stride, at
// x - ((K-1)D - pad_lo) + k D, times the filter reversed in space, its input
// and output features swapped.
StatusOr<H> backwardInput(Builder& b, const HloInstruction& call,
                          const ConvolutionDimensionNumbers& fwd, const Window& window,
                          const Shape& result) {
    HLO_RETURN_IF_ERROR(checkBackward(call, window));
    H grad = call.operand(0);
    H filter = call.operand(1);
    Window w;
    for (size_t i = 0; i < window.dimensions.size(); ++i) {
        const WindowDimension& f = window.dimensions[i];
        const int64_t inputSize = result.dimensions(fwd.inputSpatialDimensions[i]);
        const int64_t gradSize = grad->shape().dimensions(fwd.outputSpatialDimensions[i]);
        const int64_t extent = (f.size - 1) * f.windowDilation;
        WindowDimension g;
        g.size = f.size;
        g.windowDilation = f.windowDilation;
        g.baseDilation = f.stride;
        g.paddingLow = extent - f.paddingLow;
        g.paddingHigh = inputSize + extent - ((gradSize - 1) * f.stride + 1) - g.paddingLow;
        w.dimensions.push_back(g);
    }
    H reversed = b.add(HloOpcode::kReverse, filter->shape(), {filter}, "reverse");
    reversed->setDimensions(fwd.kernelSpatialDimensions);
    return convolution(
        b, call, result, grad, reversed, std::move(w),
        dimensionNumbers(
            {fwd.outputBatchDimension, fwd.outputFeatureDimension, fwd.outputSpatialDimensions},
            {fwd.kernelOutputFeatureDimension, fwd.kernelInputFeatureDimension,
             fwd.kernelSpatialDimensions},
            {fwd.inputBatchDimension, fwd.inputFeatureDimension, fwd.inputSpatialDimensions}),
        1, 1);
}

// d filter[i, o, k] = sum over batch and y of input[y S + k D - pad_lo] times
// grad[y]: the input's batch contracted against the gradient's, the gradient
// as the window, strided by the forward dilation.
StatusOr<H> backwardFilter(Builder& b, const HloInstruction& call,
                           const ConvolutionDimensionNumbers& fwd, const Window& window,
                           const Shape& result) {
    HLO_RETURN_IF_ERROR(checkBackward(call, window));
    H input = call.operand(0);
    H grad = call.operand(1);
    Window w;
    for (size_t i = 0; i < window.dimensions.size(); ++i) {
        const WindowDimension& f = window.dimensions[i];
        const int64_t inputSize = input->shape().dimensions(fwd.inputSpatialDimensions[i]);
        const int64_t gradSize = grad->shape().dimensions(fwd.outputSpatialDimensions[i]);
        WindowDimension g;
        g.size = gradSize;
        g.stride = f.windowDilation;
        g.windowDilation = f.stride;
        g.paddingLow = f.paddingLow;
        g.paddingHigh = (f.size - 1) * f.windowDilation + (gradSize - 1) * f.stride + 1 -
                        inputSize - f.paddingLow;
        w.dimensions.push_back(g);
    }
    return convolution(
        b, call, result, input, grad, std::move(w),
        dimensionNumbers(
            {fwd.inputFeatureDimension, fwd.inputBatchDimension, fwd.inputSpatialDimensions},
            {fwd.outputBatchDimension, fwd.outputFeatureDimension, fwd.outputSpatialDimensions},
            {fwd.kernelInputFeatureDimension, fwd.kernelOutputFeatureDimension,
             fwd.kernelSpatialDimensions}),
        1, 1);
}

StatusOr<H> expandConv(Builder& b, HloInstruction& call) {
    const std::string_view target = call.customCallTarget();
    HLO_ASSIGN_OR_RETURN(ConvConfig config, convConfig(call));
    std::optional<Shape> scratch;
    HLO_ASSIGN_OR_RETURN(std::vector<Shape> results, resultArrays(call, 1, &scratch));
    const Shape& result = results[0];
    const ConvolutionDimensionNumbers* fwd = call.convolutionDimensionNumbers();
    if (fwd == nullptr) return invalidAt(call, "has no dim_labels");
    const size_t spatial = fwd->inputSpatialDimensions.size();
    const Window window = windowOf(call, spatial);
    if (window.dimensions.size() != spatial)
        return invalidAt(call, "has a window of " + std::to_string(window.dimensions.size()) +
                                   " dimensions for " + std::to_string(spatial) + " spatial ones");
    const bool biasActivation = target == kConvBiasActivation;
    const int64_t minOperands = biasActivation ? 3 : 2;
    const int64_t maxOperands = biasActivation ? 4 : 2;
    if (call.operandCount() < minOperands || call.operandCount() > maxOperands)
        return invalidAt(call, "takes " + std::to_string(minOperands) +
                                   (maxOperands > minOperands ? " or 4" : "") + " operands, not " +
                                   std::to_string(call.operandCount()));
    for (H operand : call.operands())
        if (!operand->shape().isArray())
            return invalidAt(call, "has a non-array operand %" + operand->name());
    H x = nullptr;
    if (target == kConvForward || biasActivation) {
        HLO_ASSIGN_OR_RETURN(
            x, convolution(b, call, result, call.operand(0), call.operand(1), window, *fwd,
                           call.featureGroupCount(), call.batchGroupCount()));
    } else if (target == kConvBackwardInput) {
        HLO_ASSIGN_OR_RETURN(x, backwardInput(b, call, *fwd, window, result));
    } else if (target == kConvBackwardFilter) {
        HLO_ASSIGN_OR_RETURN(x, backwardFilter(b, call, *fwd, window, result));
    } else {
        return unimplementedAt(call, "is not supported");
    }
    x = b.scale(x, config.resultScale, "scale");
    if (biasActivation) {
        const PrimitiveType type = result.elementType();
        if (call.operandCount() == 4 && config.sideInputScale != 0) {
            H side = call.operand(3);
            if (!sameDimensions(side->shape(), result))
                return invalidAt(call, "has a side input of shape " +
                                           side->shape().toString(false) + " for a result of " +
                                           result.toString(false));
            x = b.binary(HloOpcode::kAdd, x,
                         b.scale(b.convert(side, type), config.sideInputScale, "side_scale"),
                         "side_input");
        }
        H bias = call.operand(2);
        const int64_t feature = fwd->outputFeatureDimension;
        if (bias->shape().rank() != 1 || bias->shape().dimensions(0) != result.dimensions(feature))
            return invalidAt(call, "has a bias of shape " + bias->shape().toString(false) +
                                       "; it must be a vector of the output features (" +
                                       std::to_string(result.dimensions(feature)) + ")");
        x = b.binary(HloOpcode::kAdd, x, b.broadcast(b.convert(bias, type), result, {feature}),
                     "bias");
        HLO_ASSIGN_OR_RETURN(x, activate(b, call, config, x));
    } else if (config.activation != "kNone") {
        return invalidAt(call, "has activation_mode " + config.activation +
                                   "; only the bias-activation convolution applies one");
    }
    if (!call.shape().isTuple()) return x;
    std::vector<H> elements = {x};
    if (scratch) elements.push_back(b.zeros(*scratch));
    return b.tuple(elements);
}

}  // namespace

bool isLibraryCallTarget(std::string_view target) {
    return target == kGemm || target == kLtMatmul || target == kLtMatmulF8 ||
           target == kConvForward || target == kConvBiasActivation ||
           target == kConvBackwardInput || target == kConvBackwardFilter ||
           target == kBlockScaledDot || target == kCubSort || target == kCubSortUnsized;
}

bool isAnnotationTarget(std::string_view target) {
    return target == "Sharding" || target == "SPMDFullToShardShape" ||
           target == "SPMDShardToFullShape" || target == "MoveToHost" || target == "MoveToDevice" ||
           target == "annotate_device_placement" || target == "LayoutConstraint";
}

bool isPassThroughAnnotation(const HloInstruction& instruction) {
    return instruction.opcode() == HloOpcode::kCustomCall &&
           isAnnotationTarget(instruction.customCallTarget()) && instruction.operandCount() == 1 &&
           instruction.shape().compatible(instruction.operand(0)->shape());
}

bool isLibraryCall(const HloInstruction& instruction) {
    return instruction.opcode() == HloOpcode::kCustomCall &&
           isLibraryCallTarget(instruction.customCallTarget());
}

StatusOr<HloInstruction*> expandLibraryCall(HloInstruction& call) {
    assert(isLibraryCall(call));
    HloComputation* computation = call.parent();
    if (computation == nullptr || computation->parent() == nullptr)
        return Status(StatusCode::kInternal, "%" + call.name() + " is not in a module");
    if (!call.controlPredecessors().empty() || !call.controlSuccessors().empty())
        return unimplementedAt(call, "with control dependencies is not expanded");
    std::vector<H> order;
    for (const auto& instruction : computation->instructions()) order.push_back(instruction.get());
    Builder b(*computation, call);
    const std::string_view target = call.customCallTarget();
    StatusOr<H> expanded = target.rfind("__cublas$", 0) == 0 ? expandGemm(b, call)
                           : target == kBlockScaledDot       ? expandBlockScaledDot(b, call)
                           : target.rfind(kCubSort, 0) == 0  ? expandCubSort(b, call)
                                                             : expandConv(b, call);
    if (!expanded.isOk()) {
        b.discard();
        return expanded.status();
    }
    H result = *expanded;
    result->setMetadata(call.metadata());
    // The new instructions take the call's place in the instruction order.
    std::vector<H> placed;
    placed.reserve(order.size() + b.added().size());
    for (H instruction : order) {
        if (instruction == &call)
            placed.insert(placed.end(), b.added().begin(), b.added().end());
        else
            placed.push_back(instruction);
    }
    HloInstruction& replaced = call;
    HLO_RETURN_IF_ERROR(computation->replaceInstruction(&replaced, result));
    HLO_RETURN_IF_ERROR(computation->setInstructionOrder(placed));
    return result;
}

namespace {

// A module holding only a copy of `call`, on parameters of its operands'
// shapes, expanded; its entry's root stands for the call.
StatusOr<std::unique_ptr<HloModule>> expandedAlone(const HloInstruction& call,
                                                   std::span<const Shape> operandShapes) {
    auto module = std::make_unique<HloModule>("library_call");
    HloComputation* computation =
        module->addComputation(std::make_unique<HloComputation>("library_call"), /*isEntry=*/true);
    std::vector<H> parameters;
    for (size_t i = 0; i < operandShapes.size(); ++i) {
        auto parameter = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, call.operand(static_cast<int64_t>(i))->name(), operandShapes[i]);
        parameter->setParameterNumber(static_cast<int64_t>(i));
        parameters.push_back(computation->addInstruction(std::move(parameter)));
    }
    H clone = computation->addInstruction(
        call.cloneWithNewOperands(call.shape(), parameters, call.name()));
    computation->setRoot(clone);
    HLO_ASSIGN_OR_RETURN(H root, expandLibraryCall(*clone));
    computation->setRoot(root);
    return module;
}

}  // namespace

Status libraryCallStatus(const HloInstruction& call) {
    std::vector<Shape> shapes;
    for (const HloInstruction* operand : call.operands()) shapes.push_back(operand->shape());
    return expandedAlone(call, shapes).status();
}

StatusOr<Literal> evaluateLibraryCall(const HloInstruction& call,
                                      std::span<const Literal* const> operands,
                                      const HloEvaluatorOptions& options) {
    std::vector<Shape> shapes;
    for (const Literal* operand : operands) shapes.push_back(operand->shape());
    HLO_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, expandedAlone(call, shapes));
    return HloEvaluator(options).evaluate(*module->entryComputation(), operands);
}

}  // namespace hloscope
