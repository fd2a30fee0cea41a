// cuDNN convolutions (__cudnn$convForward, __cudnn$convBiasActivationForward,
// __cudnn$convBackwardInput, __cudnn$convBackwardFilter) as plain HLO
// convolutions, scaled, with bias, side input and activation.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/lowering/library_calls_internal.h"
#include "core/shape_inference/shape_inference.h"

namespace hloscope::library_calls_internal {
namespace {

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

}  // namespace

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

}  // namespace hloscope::library_calls_internal
