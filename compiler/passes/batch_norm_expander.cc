#include "compiler/passes/batch_norm_expander.h"

#include <map>
#include <string>
#include <vector>

#include "compiler/passes/instruction_builder.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"

namespace hloscope {
namespace {

using H = HloInstruction*;
using passes::InstructionBuilder;

bool isBatchNorm(const HloInstruction& instruction) {
    const HloOpcode opcode = instruction.opcode();
    return opcode == HloOpcode::kBatchNormTraining || opcode == HloOpcode::kBatchNormInference ||
           opcode == HloOpcode::kBatchNormGrad;
}

// The type the expansion computes in: f64 for f64, f32 otherwise (narrow
// floats would lose the statistics' precision).
PrimitiveType computeType(PrimitiveType type) {
    return type == PrimitiveType::F64 ? PrimitiveType::F64 : PrimitiveType::F32;
}

// Expands one batch-norm op; the reducers are shared by the whole run.
class Expansion {
public:
    Expansion(HloModule& module, HloComputation& computation, H op,
              std::map<PrimitiveType, HloComputation*>& reducers)
        : m_b(module, computation, op->name()), m_op(op), m_reducers(reducers) {}

    StatusOr<H> run() {
        const HloExtraAttributes* extra = m_op->extra();
        const Shape& operand = m_op->operand(0)->shape();
        if (!extra || !extra->featureIndex || !operand.isArray())
            return invalidArgument(m_op->name() + ": batch norm without a feature_index");
        m_feature = *extra->featureIndex;
        if (m_feature < 0 || m_feature >= operand.rank())
            return invalidArgument(m_op->name() + ": feature_index " + std::to_string(m_feature) +
                                   " is outside the operand's rank " +
                                   std::to_string(operand.rank()));
        if (!primitive_util::isFloatingPoint(operand.elementType()))
            return invalidArgument(m_op->name() + ": batch norm of a non-floating-point operand");
        m_type = computeType(operand.elementType());
        m_shape = operand;
        m_shape.setElementType(m_type);
        m_featureShape = Shape::makeArray(m_type, {operand.dimensions(m_feature)});
        const int64_t features = operand.dimensions(m_feature);
        m_count = features > 0
                      ? static_cast<double>(operand.elementCount()) / static_cast<double>(features)
                      : 0.0;
        m_epsilon = extra->epsilon.value_or(0.0);
        switch (m_op->opcode()) {
            case HloOpcode::kBatchNormTraining:
                return training();
            case HloOpcode::kBatchNormInference:
                return inference();
            default:
                return grad();
        }
    }

private:
    H input(int64_t i) { return m_b.convert(m_op->operand(i), m_type); }
    H scalar(double value) { return m_b.scalar(m_type, value); }
    // One value per feature, spread over the operand's shape.
    H spread(H perFeature) { return m_b.broadcast(perFeature, m_shape, {m_feature}); }
    // Sum over every dimension but the feature dimension.
    H sum(H x) {
        HloComputation*& reducer = m_reducers[m_type];
        if (!reducer) reducer = passes::addScalarReducer(m_b.module(), HloOpcode::kAdd, m_type);
        std::vector<int64_t> dims;
        for (int64_t d = 0; d < m_shape.rank(); ++d)
            if (d != m_feature) dims.push_back(d);
        H reduce = m_b.add(HloOpcode::kReduce, m_featureShape, {x, scalar(0)}, "sum");
        reduce->setDimensions(std::move(dims));
        reduce->setCalledComputation("to_apply", reducer);
        return reduce;
    }
    H mul(H a, H b) { return m_b.binary(HloOpcode::kMultiply, a, b, "multiply"); }
    H sub(H a, H b) { return m_b.binary(HloOpcode::kSubtract, a, b, "subtract"); }
    H plus(H a, H b) { return m_b.binary(HloOpcode::kAdd, a, b, "add"); }
    H div(H a, H b) { return m_b.binary(HloOpcode::kDivide, a, b, "divide"); }
    H constantLike(H x, double value) {
        return x->shape().isScalar() ? scalar(value) : m_b.broadcast(scalar(value), x->shape(), {});
    }
    // rsqrt(variance + epsilon), per feature.
    H rsqrtOf(H variance) {
        return m_b.unary(HloOpcode::kRsqrt, plus(variance, constantLike(variance, m_epsilon)),
                         "rsqrt");
    }
    // `x` (of the compute type) back in the type of `like`.
    H result(H x, const Shape& like) { return m_b.convert(x, like.elementType()); }

    StatusOr<H> training() {
        H x = input(0), scale = input(1), offset = input(2);
        H mean = div(sum(x), constantLike(scale, m_count));
        H centred = sub(x, spread(mean));
        H variance = div(sum(mul(centred, centred)), constantLike(scale, m_count));
        H y = plus(mul(centred, spread(mul(rsqrtOf(variance), scale))), spread(offset));
        const Shape& shape = m_op->shape();
        return m_b.tuple({result(y, shape.tupleShape(0)), result(mean, shape.tupleShape(1)),
                          result(variance, shape.tupleShape(2))});
    }

    StatusOr<H> inference() {
        H x = input(0), scale = input(1), offset = input(2), mean = input(3), variance = input(4);
        H factor = mul(rsqrtOf(variance), scale);
        H y = plus(mul(sub(x, spread(mean)), spread(factor)), spread(offset));
        return result(y, m_op->shape());
    }

    StatusOr<H> grad() {
        H x = input(0), scale = input(1), mean = input(2), variance = input(3), dy = input(4);
        H rsqrt = rsqrtOf(variance);
        H centred = sub(x, spread(mean));
        H sumDy = sum(dy);
        H sumDyCentred = sum(mul(dy, centred));
        H gradScale = mul(sumDyCentred, rsqrt);
        // dx = scale * rsqrt / N * (N * dy - sum(dy) - (x - mean) * sum(dy * (x - mean)) /
        //      (variance + epsilon))
        H n = constantLike(x, m_count);
        H correction = mul(
            centred, spread(div(sumDyCentred, plus(variance, constantLike(variance, m_epsilon)))));
        H inner = sub(sub(mul(n, dy), spread(sumDy)), correction);
        H factor = div(mul(scale, rsqrt), constantLike(scale, m_count));
        H dx = mul(spread(factor), inner);
        const Shape& shape = m_op->shape();
        return m_b.tuple({result(dx, shape.tupleShape(0)), result(gradScale, shape.tupleShape(1)),
                          result(sumDy, shape.tupleShape(2))});
    }

    InstructionBuilder m_b;
    H m_op;
    std::map<PrimitiveType, HloComputation*>& m_reducers;
    int64_t m_feature = 0;
    PrimitiveType m_type = PrimitiveType::F32;
    Shape m_shape;
    Shape m_featureShape;
    double m_count = 0;
    double m_epsilon = 0;
};

}  // namespace

std::string_view BatchNormExpanderPass::description() {
    return "Rewrites batch-norm-training, batch-norm-inference and batch-norm-grad into "
           "reductions, broadcasts and elementwise operations (XLA's BatchNormExpander), so "
           "that the CPU and GPU kernels compute them.";
}

StatusOr<std::unique_ptr<HloPass>> BatchNormExpanderPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<BatchNormExpanderPass>());
}

StatusOr<bool> BatchNormExpanderPass::run(HloModule& module) {
    std::map<PrimitiveType, HloComputation*> reducers;
    std::vector<HloComputation*> computations;
    for (const auto& computation : module.computations()) computations.push_back(computation.get());
    int64_t expanded = 0;
    for (HloComputation* computation : computations) {
        std::vector<H> ops;
        for (const auto& instruction : computation->instructions())
            if (isBatchNorm(*instruction)) ops.push_back(instruction.get());
        for (H op : ops) {
            const std::string name = op->name();
            const int64_t id = op->uniqueId();
            Expansion expansion(module, *computation, op, reducers);
            HLO_ASSIGN_OR_RETURN(H replacement, expansion.run());
            HLO_RETURN_IF_ERROR(computation->replaceInstruction(op, replacement));
            recordRewrite(RewriteEvent{"expand-batch-norm", name, id, replacement->name(),
                                       replacement->uniqueId()});
            ++expanded;
        }
    }
    setStatistic("expanded", expanded);
    return expanded > 0;
}

}  // namespace hloscope
