// Internal to the library-call expansion (library_calls*.cc): the targets,
// backend_config reading, the instruction builder and the expansions of
// each library (cuBLAS in library_calls_gemm.cc, cuDNN in
// library_calls_conv.cc, CUB in library_calls_sort.cc). Not part of the
// public API.
#pragma once

#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/lowering/library_calls.h"
#include "core/stablehlo/stablehlo_literal.h"

namespace hloscope::library_calls_internal {

using Json = nlohmann::json;
using H = HloInstruction*;

inline constexpr std::string_view kGemm = "__cublas$gemm";
inline constexpr std::string_view kLtMatmul = "__cublas$lt$matmul";
inline constexpr std::string_view kLtMatmulF8 = "__cublas$lt$matmul$f8";
inline constexpr std::string_view kConvForward = "__cudnn$convForward";
inline constexpr std::string_view kConvBiasActivation = "__cudnn$convBiasActivationForward";
inline constexpr std::string_view kConvBackwardInput = "__cudnn$convBackwardInput";
inline constexpr std::string_view kConvBackwardFilter = "__cudnn$convBackwardFilter";
inline constexpr std::string_view kBlockScaledDot = "__op$block_scaled_dot";
inline constexpr std::string_view kCubSort = "xla.gpu.ext.cub_sort";
inline constexpr std::string_view kCubSortUnsized =
    "xla.gpu.ext.cub_sort_unassigned_scratch_size";

// "%call: <target> why", kInvalidArgument and kUnimplemented.
Status invalidAt(const HloInstruction& call, const std::string& why);
Status unimplementedAt(const HloInstruction& call, const std::string& why);

// backend_config (library_calls.cc). `key` is found in its snake_case or
// lowerCamelCase spelling.
const Json* field(const Json& object, std::string_view key);
// A number written as a JSON number or a string ("0", "1.5").
std::optional<double> numberOf(const Json* value);
StatusOr<std::vector<int64_t>> intList(const HloInstruction& call, const Json& object,
                                       std::string_view key);
// The config object: the backend_config attribute, unquoted, with bare keys
// quoted (some XLA tests write `{conv_result_scale:1}`) and trailing commas
// dropped, and the GpuBackendConfig wrapper's `wrapper` member taken when
// present. A null Json when the call has no backend_config.
StatusOr<Json> configOf(const HloInstruction& call, std::string_view wrapper);
// An enum written as its name or its number; `names[i]` is value i's name.
StatusOr<std::string> enumOf(const HloInstruction& call, const Json& object, std::string_view key,
                             const std::vector<std::string_view>& names);

// Adds instructions standing for a call to the call's computation, named
// after it, and remembers them (to place them, or to remove them on error).
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

bool sameDimensions(const Shape& a, const Shape& b);
// The result's leading arrays (`count` of them) and its trailing workspace:
// a tuple (arrays..., workspace) or, when `count` is 1, the array alone.
StatusOr<std::vector<Shape>> resultArrays(const HloInstruction& call, size_t count,
                                          std::optional<Shape>* workspace);

// The expansions: the instruction standing for the call's result, built
// with `b`.
StatusOr<H> expandGemm(Builder& b, HloInstruction& call);
StatusOr<H> expandBlockScaledDot(Builder& b, HloInstruction& call);
StatusOr<H> expandCubSort(Builder& b, HloInstruction& call);
StatusOr<H> expandConv(Builder& b, HloInstruction& call);

}  // namespace hloscope::library_calls_internal
