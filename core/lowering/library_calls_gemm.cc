// cuBLAS gemms (__cublas$gemm, __cublas$lt$matmul, __cublas$lt$matmul$f8)
// and XLA's block-scaled dot (__op$block_scaled_dot) as plain HLO: a dot or
// scaled-dot with the config's scaling, bias and epilogue.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/lowering/library_calls_internal.h"
#include "core/shape_inference/shape_inference.h"

namespace hloscope::library_calls_internal {
namespace {

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

}  // namespace

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

}  // namespace hloscope::library_calls_internal
