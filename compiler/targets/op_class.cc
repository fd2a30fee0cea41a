#include "compiler/targets/op_class.h"

namespace hloscope {

std::string_view opClassName(OpClass opClass) {
    switch (opClass) {
        case OpClass::kElementwise: return "elementwise";
        case OpClass::kTranscendental: return "transcendental";
        case OpClass::kReduction: return "reduction";
        case OpClass::kDot: return "dot";
        case OpClass::kConvolution: return "convolution";
        case OpClass::kDataMovement: return "data_movement";
    }
    return "elementwise";
}

std::optional<OpClass> opClassNamed(std::string_view name) {
    for (int i = 0; i < kOpClassCount; ++i)
        if (opClassName(static_cast<OpClass>(i)) == name) return static_cast<OpClass>(i);
    return std::nullopt;
}

}  // namespace hloscope
