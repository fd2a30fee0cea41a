// batch-norm-training, batch-norm-inference and batch-norm-grad, evaluated
// directly in double precision (the reference that the compiler's
// batch-norm-expander is checked against). The statistics run over every
// dimension but feature_index:
//   training:  mean = E[x], var = E[(x - mean)^2] (biased),
//              y = (x - mean) * rsqrt(var + epsilon) * scale + offset
//   inference: y as above, from the given mean and variance
//   grad:      grad_offset = sum(dy), grad_scale = sum(dy * (x - mean)) * rsqrt(var + epsilon),
//              dx = scale * rsqrt(var + epsilon) / N *
//                   (N * dy - sum(dy) - (x - mean) * sum(dy * (x - mean)) / (var + epsilon))
// (the formulas of XLA's BatchNormExpander; N is the element count per feature).
#include <cmath>
#include <string>
#include <vector>

#include "core/interpreter/ops_internal.h"

namespace hloscope::evaluator {

namespace {

// Feature index of each element of an array of `dims` with features along
// dimension `feature`.
struct FeatureLayout {
    int64_t features = 0;
    int64_t inner = 1;  // elements between consecutive features
    int64_t count = 0;  // all elements
    int64_t featureOf(int64_t element) const { return (element / inner) % features; }
};

StatusOr<FeatureLayout> featureLayout(const HloInstruction& instruction, const Literal& operand) {
    const HloExtraAttributes* extra = instruction.extra();
    if (!extra || !extra->featureIndex) return invalid(instruction, "has no feature_index");
    const std::vector<int64_t>& dims = operand.shape().dimensions();
    const int64_t feature = *extra->featureIndex;
    if (feature < 0 || feature >= static_cast<int64_t>(dims.size()))
        return invalid(instruction, "feature_index " + std::to_string(feature) +
                                        " is outside the operand's " + std::to_string(dims.size()) +
                                        " dimensions");
    FeatureLayout layout;
    layout.features = dims[static_cast<size_t>(feature)];
    for (size_t d = static_cast<size_t>(feature) + 1; d < dims.size(); ++d) layout.inner *= dims[d];
    layout.count = operand.elementCount();
    return layout;
}

std::vector<double> valuesOf(const Literal& literal) {
    std::vector<double> values(static_cast<size_t>(literal.elementCount()));
    for (size_t i = 0; i < values.size(); ++i)
        values[i] = literal.getAsDouble(static_cast<int64_t>(i));
    return values;
}

Literal literalOf(const Shape& shape, const std::vector<double>& values) {
    Literal result(shape);
    for (size_t i = 0; i < values.size(); ++i)
        result.setFromDouble(static_cast<int64_t>(i), values[i]);
    return result;
}

Status checkFloatingOperands(const HloInstruction& instruction, Operands operands,
                             int64_t features) {
    for (size_t i = 0; i < operands.size(); ++i) {
        const Shape& shape = operands[i]->shape();
        if (!primitive_util::isFloatingPoint(shape.elementType()))
            return unsupported(instruction,
                               "operand " + std::to_string(i) + " of type " +
                                   std::string(primitive_util::name(shape.elementType())) +
                                   " (batch norm takes floating-point arrays)");
        const bool full = i == 0 || (instruction.opcode() == HloOpcode::kBatchNormGrad && i == 4);
        if (!full && (shape.rank() != 1 || shape.dimensions(0) != features))
            return invalid(instruction, "operand " + std::to_string(i) + " is " + shape.toString() +
                                            ", not one value per feature (" +
                                            std::to_string(features) + ")");
        if (full && shape.dimensions() != operands[0]->shape().dimensions())
            return invalid(instruction, "operand " + std::to_string(i) + " is " + shape.toString() +
                                            ", not the operand's shape");
    }
    return Status::ok();
}

}  // namespace

StatusOr<Literal> evaluateBatchNorm(const HloInstruction& instruction, Operands operands) {
    const HloOpcode opcode = instruction.opcode();
    const int64_t expected = opcode == HloOpcode::kBatchNormTraining ? 3 : 5;
    HLO_RETURN_IF_ERROR(expectArrayOperands(instruction, operands, expected));
    HLO_ASSIGN_OR_RETURN(FeatureLayout layout, featureLayout(instruction, *operands[0]));
    HLO_RETURN_IF_ERROR(checkFloatingOperands(instruction, operands, layout.features));
    const double epsilon = instruction.extra()->epsilon.value_or(0.0);
    const std::vector<double> x = valuesOf(*operands[0]);
    const std::vector<double> scale = valuesOf(*operands[1]);
    const auto features = static_cast<size_t>(layout.features);
    const double perFeature = layout.features > 0 ? static_cast<double>(layout.count) /
                                                        static_cast<double>(layout.features)
                                                  : 0.0;
    const Shape& operandShape = operands[0]->shape();
    auto feature = [&](size_t i) {
        return static_cast<size_t>(layout.featureOf(static_cast<int64_t>(i)));
    };

    std::vector<double> mean(features, 0.0), variance(features, 0.0);
    if (opcode == HloOpcode::kBatchNormTraining) {
        for (size_t i = 0; i < x.size(); ++i) mean[feature(i)] += x[i];
        for (double& m : mean) m /= perFeature;
        for (size_t i = 0; i < x.size(); ++i) {
            const double centred = x[i] - mean[feature(i)];
            variance[feature(i)] += centred * centred;
        }
        for (double& v : variance) v /= perFeature;
    } else {
        mean = valuesOf(*operands[opcode == HloOpcode::kBatchNormGrad ? 2 : 3]);
        variance = valuesOf(*operands[opcode == HloOpcode::kBatchNormGrad ? 3 : 4]);
    }
    std::vector<double> rsqrt(features);
    for (size_t f = 0; f < features; ++f) rsqrt[f] = 1.0 / std::sqrt(variance[f] + epsilon);

    if (opcode != HloOpcode::kBatchNormGrad) {
        const std::vector<double> offset = valuesOf(*operands[2]);
        std::vector<double> y(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            const size_t f = feature(i);
            y[i] = (x[i] - mean[f]) * rsqrt[f] * scale[f] + offset[f];
        }
        Literal output = literalOf(operandShape, y);
        if (opcode == HloOpcode::kBatchNormInference) return output;
        const Shape& featureShape = operands[1]->shape();
        std::vector<Literal> elements;
        elements.push_back(std::move(output));
        elements.push_back(literalOf(featureShape, mean));
        elements.push_back(literalOf(featureShape, variance));
        return Literal::makeTuple(std::move(elements));
    }

    const std::vector<double> dy = valuesOf(*operands[4]);
    std::vector<double> sumDy(features, 0.0), sumDyCentred(features, 0.0);
    for (size_t i = 0; i < x.size(); ++i) {
        const size_t f = feature(i);
        sumDy[f] += dy[i];
        sumDyCentred[f] += dy[i] * (x[i] - mean[f]);
    }
    std::vector<double> dx(x.size()), gradScale(features);
    for (size_t i = 0; i < x.size(); ++i) {
        const size_t f = feature(i);
        dx[i] = scale[f] * rsqrt[f] / perFeature *
                (perFeature * dy[i] - sumDy[f] -
                 (x[i] - mean[f]) * sumDyCentred[f] / (variance[f] + epsilon));
    }
    for (size_t f = 0; f < features; ++f) gradScale[f] = sumDyCentred[f] * rsqrt[f];
    const Shape& featureShape = operands[1]->shape();
    std::vector<Literal> elements;
    elements.push_back(literalOf(operands[4]->shape(), dx));
    elements.push_back(literalOf(featureShape, gradScale));
    elements.push_back(literalOf(featureShape, sumDy));
    return Literal::makeTuple(std::move(elements));
}

}  // namespace hloscope::evaluator
