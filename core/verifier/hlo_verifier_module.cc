// HloVerifier module-level checks: entry_computation_layout against the
// entry computation, input_output_alias and buffer_donor.
#include <set>

#include "core/verifier/hlo_verifier_internal.h"
#include "core/shape_inference/shape_inference_util.h"

namespace hloscope::verifier_internal {

using shape_inference_internal::compatible;
using shape_inference_internal::str;

Status verifyEntryComputationLayout(const HloModule& module, const HloVerifierOptions& options) {
    const auto& layout = module.entryComputationLayout();
    if (!layout) return Status::ok();
    const HloComputation* entry = module.entryComputation();
    auto sameShape = [&](const Shape& a, const Shape& b) {
        if (!compatible(a, b)) return false;
        if (!options.layoutSensitive) return true;
        return layoutsEqual(a, b, false, /*ignoreTilesAndMemorySpace=*/true);
    };
    const Shape& root = entry->root()->shape();
    if (layout->result.isValid() && !sameShape(root, layout->result)) {
        return computationError(*entry, "Shape of the root instruction of entry computation (" +
                                            shapeText(root, options.layoutSensitive) +
                                            ") should be compatible to one specified in module's "
                                            "entry computation layout (" +
                                            shapeText(layout->result, options.layoutSensitive) + ")");
    }
    if (static_cast<int64_t>(layout->parameters.size()) != entry->parameterCount()) {
        return computationError(*entry, "Number of parameters in entry computation layout (" +
                                            std::to_string(layout->parameters.size()) +
                                            ") must be same as number of parameters of entry "
                                            "computation (" +
                                            std::to_string(entry->parameterCount()) + ")");
    }
    for (int64_t i = 0; i < entry->parameterCount(); ++i) {
        const HloInstruction* parameter = entry->parameter(i);
        if (!parameter) continue;
        const Shape& expected = layout->parameters[static_cast<size_t>(i)];
        if (!sameShape(parameter->shape(), expected)) {
            return instructionError(*parameter,
                                    "Shape of the entry computation parameter " + std::to_string(i) +
                                        " is " + shapeText(parameter->shape(), options.layoutSensitive) +
                                        " should be compatible to the one specified in module's "
                                        "entry computation layout " +
                                        shapeText(expected, options.layoutSensitive));
        }
    }
    // Must-alias pairs need identical shapes, layouts and memory spaces.
    for (const InputOutputAlias& alias : module.inputOutputAliases()) {
        if (alias.kind != InputOutputAlias::Kind::kMustAlias) continue;
        if (alias.parameterNumber < 0 ||
            alias.parameterNumber >= static_cast<int64_t>(layout->parameters.size()))
            continue;
        const Shape* result = subshape(layout->result, alias.outputIndex);
        const Shape* parameter =
            subshape(layout->parameters[static_cast<size_t>(alias.parameterNumber)], alias.parameterIndex);
        if (!result || !parameter) continue;
        bool same = compatible(*result, *parameter) && layoutsEqual(*result, *parameter, false);
        if (!same) {
            return computationError(*entry, "Shape and memory space of the result at index " +
                                                indexString(alias.outputIndex) + " (" +
                                                result->toString() +
                                                ") must be the same as the shape and memory space "
                                                "of aliased parameter " +
                                                std::to_string(alias.parameterNumber) + " at index " +
                                                indexString(alias.parameterIndex) + " (" +
                                                parameter->toString() + ")");
        }
    }
    return Status::ok();
}

Status verifyInputOutputAliasing(const HloModule& module, const HloVerifierOptions& options) {
    const HloComputation* entry = module.entryComputation();
    const Shape& output = module.entryComputationLayout() && module.entryComputationLayout()->result.isValid()
                              ? module.entryComputationLayout()->result
                              : entry->root()->shape();
    std::set<std::pair<int64_t, std::vector<int64_t>>> seenParameters;
    std::set<std::vector<int64_t>> seenOutputs;
    for (const InputOutputAlias& alias : module.inputOutputAliases()) {
        std::string where = "input_output_alias " + indexString(alias.outputIndex) + ": (" +
                            std::to_string(alias.parameterNumber) + ", " +
                            indexString(alias.parameterIndex) + ")";
        if (alias.parameterNumber < 0 || alias.parameterNumber >= entry->parameterCount() ||
            !entry->parameter(alias.parameterNumber)) {
            return computationError(*entry, where + " refers to parameter " +
                                                std::to_string(alias.parameterNumber) +
                                                ", but the entry computation has " +
                                                std::to_string(entry->parameterCount()) +
                                                " parameters");
        }
        const Shape& parameterShape = entry->parameter(alias.parameterNumber)->shape();
        const Shape* parameter = subshape(parameterShape, alias.parameterIndex);
        if (!parameter) {
            return computationError(*entry, where + ": parameter index " +
                                                indexString(alias.parameterIndex) +
                                                " is not valid for parameter shape " +
                                                str(parameterShape));
        }
        const Shape* result = subshape(output, alias.outputIndex);
        if (!result) {
            return computationError(*entry, where + ": output index " + indexString(alias.outputIndex) +
                                                " is not valid for the output shape " + str(output));
        }
        if (!parameter->isArray() || !result->isArray()) {
            return computationError(*entry, where + ": aliased buffers must be arrays, got " +
                                                str(*parameter) + " and " + str(*result));
        }
        // XLA compares the aliased buffers' sizes only in layout-sensitive
        // mode (sizes depend on layouts); compare element types regardless.
        if (options.layoutSensitive && parameter->byteSize() != result->byteSize()) {
            return computationError(*entry, where + ": expected aliased input and output to have the "
                                                    "same size; input sub-shape is " +
                                                parameter->toString() + ", output sub-shape is " +
                                                result->toString());
        }
        if (!seenParameters.insert({alias.parameterNumber, alias.parameterIndex}).second) {
            return computationError(*entry, where + ": the parameter buffer is aliased more than once");
        }
        if (!seenOutputs.insert(alias.outputIndex).second) {
            return computationError(*entry, where + ": the output buffer is aliased more than once");
        }
    }
    for (const BufferDonor& donor : module.bufferDonors()) {
        std::string where = "buffer_donor (" + std::to_string(donor.parameterNumber) + ", " +
                            indexString(donor.parameterIndex) + ")";
        if (donor.parameterNumber < 0 || donor.parameterNumber >= entry->parameterCount() ||
            !entry->parameter(donor.parameterNumber)) {
            return computationError(*entry, where + " refers to a parameter the entry computation "
                                                    "does not have");
        }
        if (!subshape(entry->parameter(donor.parameterNumber)->shape(), donor.parameterIndex)) {
            return computationError(*entry, where + ": parameter index is not valid");
        }
        if (seenParameters.count({donor.parameterNumber, donor.parameterIndex})) {
            return computationError(*entry, where + ": the buffer is also in input_output_alias");
        }
    }
    return Status::ok();
}

}  // namespace hloscope::verifier_internal
