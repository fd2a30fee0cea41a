#include "compiler/passes/instruction_builder.h"

#include "core/stablehlo/stablehlo_literal.h"

namespace hloscope::passes {

HloInstruction* InstructionBuilder::add(HloOpcode opcode, Shape shape, std::vector<H> operands,
                                        std::string_view what) {
    auto instruction = std::make_unique<HloInstruction>(
        opcode, m_module.uniqueInstructionName(m_stem + "." + std::string(what)), std::move(shape));
    for (H operand : operands) instruction->appendOperand(operand);
    return m_computation.addInstruction(std::move(instruction));
}

HloInstruction* InstructionBuilder::scalar(PrimitiveType type, double value,
                                           std::string_view what) {
    H c = add(HloOpcode::kConstant, Shape::makeScalar(type), {}, what);
    c->setLiteralText(type == PrimitiveType::PRED ? (value != 0 ? "true" : "false")
                                                  : stablehlo::formatScalar(type, value));
    return c;
}

HloInstruction* InstructionBuilder::index(int64_t value, std::string_view what) {
    H c = add(HloOpcode::kConstant, Shape::makeScalar(PrimitiveType::S32), {}, what);
    c->setLiteralText(std::to_string(value));
    return c;
}

HloInstruction* InstructionBuilder::parameter(Shape shape, std::string_view what) {
    auto p = std::make_unique<HloInstruction>(
        HloOpcode::kParameter, m_module.uniqueInstructionName(m_stem + "." + std::string(what)),
        std::move(shape));
    p->setParameterNumber(0);
    return m_computation.addInstruction(std::move(p));
}

HloInstruction* InstructionBuilder::broadcast(H x, Shape shape, std::vector<int64_t> dimensions) {
    H b = add(HloOpcode::kBroadcast, std::move(shape), {x}, "broadcast");
    b->setDimensions(std::move(dimensions));
    return b;
}

HloInstruction* InstructionBuilder::zeros(const Shape& shape) {
    H zero = scalar(shape.elementType(), 0, "zero");
    H b = add(HloOpcode::kBroadcast, shape, {zero}, "zeros");
    b->setDimensions({});
    return b;
}

HloInstruction* InstructionBuilder::convert(H x, PrimitiveType type) {
    if (x->shape().elementType() == type) return x;
    Shape shape = x->shape();
    shape.setElementType(type);
    return add(HloOpcode::kConvert, std::move(shape), {x}, "convert");
}

HloInstruction* InstructionBuilder::element(H tuple, int64_t i) {
    H g = add(HloOpcode::kGetTupleElement, tuple->shape().tupleShape(i), {tuple}, "element");
    g->setTupleIndex(i);
    return g;
}

HloInstruction* InstructionBuilder::tuple(const std::vector<H>& elements) {
    std::vector<Shape> shapes;
    for (H e : elements) shapes.push_back(e->shape());
    return add(HloOpcode::kTuple, Shape::makeTuple(std::move(shapes)), elements, "tuple");
}

HloComputation* addScalarReducer(HloModule& module, HloOpcode opcode, PrimitiveType type) {
    const std::string typeName(primitive_util::name(type));
    auto computation = std::make_unique<HloComputation>(
        module.uniqueComputationName(std::string(hloOpcodeString(opcode)) + "_" + typeName));
    std::vector<HloInstruction*> parameters;
    for (int64_t i = 0; i < 2; ++i) {
        auto parameter = std::make_unique<HloInstruction>(
            HloOpcode::kParameter, module.uniqueInstructionName(i == 0 ? "lhs" : "rhs"),
            Shape::makeScalar(type));
        parameter->setParameterNumber(i);
        parameters.push_back(computation->addInstruction(std::move(parameter)));
    }
    auto root = std::make_unique<HloInstruction>(
        opcode, module.uniqueInstructionName(std::string(hloOpcodeString(opcode))),
        Shape::makeScalar(type));
    root->appendOperand(parameters[0]);
    root->appendOperand(parameters[1]);
    computation->setRoot(computation->addInstruction(std::move(root)));
    HloComputation* added = module.addComputation(std::move(computation));
    std::vector<HloComputation*> order = {added};
    for (const auto& existing : module.computations())
        if (existing.get() != added) order.push_back(existing.get());
    (void)module.reorderComputations(order);
    return added;
}

}  // namespace hloscope::passes
