// XLA:GPU's library calls as plain HLO (library_calls.h): the targets,
// backend_config reading, the result's arrays and workspace, and the public
// entry points. The expansions are in library_calls_gemm.cc (cuBLAS, the
// block-scaled dot), library_calls_conv.cc (cuDNN) and
// library_calls_sort.cc (CUB).
#include "core/lowering/library_calls.h"

#include <cassert>
#include <cmath>
#include <optional>
#include <regex>

#include "core/interpreter/interpreter.h"
#include "core/lowering/library_calls_internal.h"
#include "core/ir/attribute_text.h"

namespace hloscope {
namespace library_calls_internal {
namespace {

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

bool isWorkspace(const Shape& shape) {
    return shape.isArray() && shape.rank() == 1 &&
           (shape.elementType() == PrimitiveType::U8 || shape.elementType() == PrimitiveType::S8);
}

}  // namespace

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
        // Dimension numbers and sizes: anything past 2^53 is not a dimension
        // and would not convert to an integer exactly.
        if (std::fabs(*value) > 9007199254740992.0)
            return invalidAt(call, "backend_config: " + std::string(key) + " holds " +
                                       item.dump() + ", out of range");
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
    std::string text = unquoteAttributeString(*attribute);
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

}  // namespace library_calls_internal

namespace {

using namespace library_calls_internal;

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
