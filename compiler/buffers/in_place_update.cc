#include "compiler/buffers/in_place_update.h"

namespace hloscope {

bool isInPlaceUpdateForm(const HloInstruction& update, bool denseDefaultLayouts) {
    if (update.opcode() != HloOpcode::kDynamicUpdateSlice || update.operandCount() < 2)
        return false;
    const HloInstruction* operand = update.operand(0);
    const Shape& shape = update.shape();
    const Shape& piece = update.operand(1)->shape();
    if (!shape.isArray() || !operand->shape().isArray() || !piece.isArray() ||
        piece.elementType() != shape.elementType() ||
        operand->shape().elementType() != shape.elementType() ||
        !operand->shape().sameDimensions(shape) || piece.rank() != shape.rank() ||
        update.operandCount() != 2 + shape.rank() || update.operand(1) == operand)
        return false;
    if (denseDefaultLayouts &&
        (!shape.hasDefaultDenseLayout() || !operand->shape().hasDefaultDenseLayout() ||
         !piece.hasDefaultDenseLayout()))
        return false;
    for (int64_t i = 2; i < update.operandCount(); ++i) {
        const Shape& start = update.operand(i)->shape();
        if (update.operand(i) == operand || !start.isArray() || start.rank() != 0 ||
            !primitive_util::isInteger(start.elementType()) ||
            primitive_util::isSubByte(start.elementType()))
            return false;
    }
    return true;
}

bool isOnlyViewOfParameterElement(const HloInstruction& operand) {
    if (operand.opcode() != HloOpcode::kGetTupleElement || !operand.shape().isArray()) return false;
    const HloInstruction* parameter = operand.operand(0);
    if (parameter->opcode() != HloOpcode::kParameter) return false;
    for (const HloInstruction* user : parameter->users())
        if (user->opcode() != HloOpcode::kGetTupleElement ||
            (user != &operand && user->tupleIndex() == operand.tupleIndex()))
            return false;
    return true;
}

bool otherReadersRunFirst(const HloInstruction& update,
                          const std::function<int64_t(const HloInstruction*)>& position,
                          const std::function<bool(const HloInstruction*)>& keepsView) {
    return otherReadersRunFirst(update, 0, position, keepsView);
}

bool otherReadersRunFirst(const HloInstruction& update, int64_t bufferOperand,
                          const std::function<int64_t(const HloInstruction*)>& position,
                          const std::function<bool(const HloInstruction*)>& keepsView) {
    const int64_t at = position(&update);
    if (at < 0 || bufferOperand < 0 || bufferOperand >= update.operandCount()) return false;
    for (const HloInstruction* user : update.operand(bufferOperand)->users()) {
        if (user == &update) continue;
        const int64_t where = position(user);
        if (where < 0 || where >= at || keepsView(user)) return false;
    }
    return true;
}

}  // namespace hloscope
