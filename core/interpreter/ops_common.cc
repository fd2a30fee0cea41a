// Helpers shared by the linear-algebra and reduction evaluator families.
#include <algorithm>
#include <string>

#include "core/interpreter/ops_internal.h"

namespace hloscope::evaluator {

std::vector<int64_t> rowMajorStrides(std::span<const int64_t> dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= dims[i];
    }
    return strides;
}

int64_t elementProduct(std::span<const int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

bool nextIndex(std::span<int64_t> index, std::span<const int64_t> dims) {
    for (size_t i = dims.size(); i-- > 0;) {
        if (++index[i] < dims[i]) return true;
        index[i] = 0;
    }
    return false;
}

bool containsDim(std::span<const int64_t> dims, int64_t d) {
    return std::find(dims.begin(), dims.end(), d) != dims.end();
}

Status expectArrayOperands(const HloInstruction& instruction, Operands operands, int64_t count) {
    if (count >= 0 && static_cast<int64_t>(operands.size()) != count)
        return invalid(instruction, "expects " + std::to_string(count) + " operand(s), got " +
                                        std::to_string(operands.size()));
    for (size_t i = 0; i < operands.size(); ++i) {
        const Literal* operand = operands[i];
        if (operand == nullptr || !operand->isValid() || !operand->shape().isArray())
            return invalid(instruction, "operand " + std::to_string(i) + " is not an array");
    }
    return Status::ok();
}

StatusOr<bool> boolAttribute(const HloInstruction& instruction, std::string_view name,
                             bool fallback) {
    std::optional<std::string_view> value = instruction.attribute(name);
    if (!value) return fallback;
    if (*value == "true") return true;
    if (*value == "false") return false;
    return invalid(instruction,
                   std::string(name) + "=" + std::string(*value) + " is not true or false");
}

int64_t readIndex(const Literal& literal, int64_t index) {
    if (primitive_util::isUnsignedInteger(literal.elementType())) {
        const uint64_t v = literal.getAsUint64(index);
        return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
    return literal.getAsInt64(index);
}

PrimitiveType accumulationType(PrimitiveType output, PrimitiveType lhs, PrimitiveType rhs) {
    using primitive_util::isComplex;
    using primitive_util::isFloatingPoint;
    const bool wideOperand = lhs == PrimitiveType::F64 || rhs == PrimitiveType::F64 ||
                             lhs == PrimitiveType::C128 || rhs == PrimitiveType::C128;
    if (isFloatingPoint(output))
        return output == PrimitiveType::F64 || wideOperand ? PrimitiveType::F64
                                                           : PrimitiveType::F32;
    if (isComplex(output))
        return output == PrimitiveType::C128 || wideOperand ? PrimitiveType::C128
                                                            : PrimitiveType::C64;
    if (primitive_util::isInteger(output) || output == PrimitiveType::PRED) {
        if (isFloatingPoint(lhs) || isFloatingPoint(rhs)) return PrimitiveType::F64;
        if (isComplex(lhs) || isComplex(rhs)) return PrimitiveType::PRIMITIVE_TYPE_INVALID;
        return primitive_util::isUnsignedInteger(output) ? PrimitiveType::U64 : PrimitiveType::S64;
    }
    return PrimitiveType::PRIMITIVE_TYPE_INVALID;
}

StatusOr<Literal> convertedTo(const HloInstruction& instruction, const Literal& literal,
                              PrimitiveType type) {
    if (literal.elementType() == type) return literal;
    StatusOr<Literal> converted = literal.convert(type);
    if (!converted.isOk()) return converted.status().withContext("%" + instruction.name());
    return converted;
}

namespace {

template <typename E>
void permuteElements(const E* src, E* dst, std::span<const int64_t> dstDims,
                     std::span<const int64_t> srcStridesForDst) {
    const size_t rank = dstDims.size();
    const int64_t total = elementProduct(dstDims);
    if (total == 0) return;
    if (rank == 0) {
        dst[0] = src[0];
        return;
    }
    const int64_t inner = dstDims[rank - 1];
    const int64_t innerStride = srcStridesForDst[rank - 1];
    std::vector<int64_t> index(rank, 0);
    int64_t srcOffset = 0;
    int64_t dstOffset = 0;
    while (true) {
        const E* s = src + srcOffset;
        E* d = dst + dstOffset;
        for (int64_t j = 0; j < inner; ++j) d[j] = s[j * innerStride];
        dstOffset += inner;
        if (dstOffset >= total) break;
        // Advance the outer (all but the innermost) dimensions.
        for (size_t i = rank - 1; i-- > 0;) {
            srcOffset += srcStridesForDst[i];
            if (++index[i] < dstDims[i]) break;
            srcOffset -= srcStridesForDst[i] * dstDims[i];
            index[i] = 0;
        }
    }
}

struct Bytes16 {
    uint64_t lo, hi;
};

}  // namespace

Literal permuted(const Literal& literal, std::span<const int64_t> perm) {
    const std::vector<int64_t>& srcDims = literal.shape().dimensions();
    std::vector<int64_t> dstDims(perm.size());
    const std::vector<int64_t> srcStrides = rowMajorStrides(srcDims);
    std::vector<int64_t> stridesForDst(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
        dstDims[i] = srcDims[static_cast<size_t>(perm[i])];
        stridesForDst[i] = srcStrides[static_cast<size_t>(perm[i])];
    }
    Literal result(Shape::makeArray(literal.elementType(), dstDims));
    const void* src = literal.untypedData();
    void* dst = result.untypedData();
    switch (elementBytes(literal.elementType())) {
        case 1:
            permuteElements(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), dstDims,
                            stridesForDst);
            break;
        case 2:
            permuteElements(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), dstDims,
                            stridesForDst);
            break;
        case 4:
            permuteElements(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), dstDims,
                            stridesForDst);
            break;
        case 8:
            permuteElements(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), dstDims,
                            stridesForDst);
            break;
        default:
            permuteElements(static_cast<const Bytes16*>(src), static_cast<Bytes16*>(dst), dstDims,
                            stridesForDst);
            break;
    }
    return result;
}

// --- ScalarCaller ----------------------------------------------------------------

ScalarCaller::ScalarCaller(EvalContext& context, const HloInstruction& instruction,
                           const HloComputation& computation,
                           std::vector<PrimitiveType> argumentTypes,
                           std::vector<PrimitiveType> resultTypes)
    : m_context(context),
      m_instruction(instruction),
      m_computation(computation),
      m_resultTypes(std::move(resultTypes)) {
    m_arguments.reserve(argumentTypes.size());
    for (PrimitiveType type : argumentTypes) {
        m_arguments.emplace_back(Shape::makeScalar(type));
        m_argumentBytes.push_back(elementBytes(type));
    }
    for (const Literal& argument : m_arguments) m_argumentPointers.push_back(&argument);
    m_resultData.assign(m_resultTypes.size(), nullptr);
}

Status ScalarCaller::call() {
    StatusOr<Literal> result = m_context.call(m_computation, m_argumentPointers);
    if (!result.isOk()) return result.status();
    m_result = std::move(result).value();
    const Literal& value = m_result;
    auto check = [&](const Literal& element, size_t i) -> Status {
        if (!element.shape().isScalar() || element.elementType() != m_resultTypes[i])
            return invalid(m_instruction, "computation " + m_computation.name() + " returned " +
                                              element.shape().toString(false) + ", expected " +
                                              std::string(primitive_util::name(m_resultTypes[i])) +
                                              "[]");
        m_resultData[i] = element.untypedData();
        return Status::ok();
    };
    if (value.isTuple()) {
        if (value.tupleElements().size() != m_resultTypes.size())
            return invalid(m_instruction, "computation " + m_computation.name() + " returned " +
                                              std::to_string(value.tupleElements().size()) +
                                              " values, expected " +
                                              std::to_string(m_resultTypes.size()));
        for (size_t i = 0; i < m_resultTypes.size(); ++i)
            HLO_RETURN_IF_ERROR(check(value.tupleElement(static_cast<int64_t>(i)), i));
        return Status::ok();
    }
    if (m_resultTypes.size() != 1)
        return invalid(m_instruction, "computation " + m_computation.name() +
                                          " returned one value, expected " +
                                          std::to_string(m_resultTypes.size()));
    return check(value, 0);
}

// --- Binary computations ---------------------------------------------------------------

std::optional<BinaryComputation> recognizeBinaryComputation(const HloComputation& computation,
                                                            PrimitiveType type) {
    if (computation.parameterCount() != 2) return std::nullopt;
    const HloInstruction* p0 = computation.parameter(0);
    const HloInstruction* p1 = computation.parameter(1);
    const HloInstruction* root = computation.root();
    if (p0 == nullptr || p1 == nullptr || root == nullptr) return std::nullopt;
    for (const HloInstruction* node : {p0, p1, root})
        if (!node->shape().isScalar() || node->shape().elementType() != type) return std::nullopt;
    if (root->operandCount() != 2) return std::nullopt;
    bool swapped;
    if (root->operand(0) == p0 && root->operand(1) == p1)
        swapped = false;
    else if (root->operand(0) == p1 && root->operand(1) == p0)
        swapped = true;
    else
        return std::nullopt;
    BinaryKind kind;
    switch (root->opcode()) {
        case HloOpcode::kAdd:
            kind = BinaryKind::kAdd;
            break;
        case HloOpcode::kMultiply:
            kind = BinaryKind::kMultiply;
            break;
        case HloOpcode::kMaximum:
            kind = BinaryKind::kMaximum;
            break;
        case HloOpcode::kMinimum:
            kind = BinaryKind::kMinimum;
            break;
        case HloOpcode::kAnd:
            kind = BinaryKind::kAnd;
            break;
        case HloOpcode::kOr:
            kind = BinaryKind::kOr;
            break;
        case HloOpcode::kXor:
            kind = BinaryKind::kXor;
            break;
        default:
            return std::nullopt;
    }
    const bool bitwise =
        kind == BinaryKind::kAnd || kind == BinaryKind::kOr || kind == BinaryKind::kXor;
    if (type == PrimitiveType::PRED) return BinaryComputation{kind, swapped};
    if (primitive_util::isInteger(type)) {
        if (primitive_util::isSubByte(type)) return std::nullopt;
        return BinaryComputation{kind, swapped};
    }
    if (primitive_util::isFloatingPoint(type)) {
        if (bitwise) return std::nullopt;
        return BinaryComputation{kind, swapped};
    }
    if (primitive_util::isComplex(type)) {
        if (kind != BinaryKind::kAdd && kind != BinaryKind::kMultiply) return std::nullopt;
        return BinaryComputation{kind, swapped};
    }
    return std::nullopt;
}

// --- Comparisons ------------------------------------------------------------------

std::optional<CompareComputation> recognizeCompareComputation(const HloComputation& computation,
                                                              int64_t parameterCount, int64_t lhs,
                                                              int64_t rhs, PrimitiveType type) {
    if (computation.parameterCount() != parameterCount || primitive_util::isComplex(type))
        return std::nullopt;
    const HloInstruction* pl = computation.parameter(lhs);
    const HloInstruction* pr = computation.parameter(rhs);
    const HloInstruction* root = computation.root();
    if (pl == nullptr || pr == nullptr || root == nullptr) return std::nullopt;
    for (const HloInstruction* p : {pl, pr})
        if (!p->shape().isScalar() || p->shape().elementType() != type) return std::nullopt;
    if (root->opcode() != HloOpcode::kCompare || root->operandCount() != 2 ||
        !root->shape().isScalar() || root->shape().elementType() != PrimitiveType::PRED)
        return std::nullopt;
    std::optional<ComparisonDirection> direction = root->comparisonDirection();
    if (!direction) return std::nullopt;
    CompareComputation result{*direction, false, false};
    if (root->operand(0) == pl && root->operand(1) == pr)
        result.swapped = false;
    else if (root->operand(0) == pr && root->operand(1) == pl)
        result.swapped = true;
    else
        return std::nullopt;
    if (!comparisonTypeFits(*root, type, &result.totalOrder)) return std::nullopt;
    return result;
}

bool comparisonTypeFits(const HloInstruction& compare, PrimitiveType type, bool* totalOrder) {
    const ComparisonType ct =
        compare.extra() != nullptr ? compare.extra()->comparisonType : ComparisonType::kDefault;
    const bool isFloat = primitive_util::isFloatingPoint(type);
    *totalOrder = false;
    switch (ct) {
        case ComparisonType::kDefault:
            return true;
        case ComparisonType::kFloat:
            return isFloat;
        case ComparisonType::kTotalOrder:
            *totalOrder = isFloat;
            return isFloat;
        case ComparisonType::kSigned:
            return !isFloat && !primitive_util::isUnsignedInteger(type);
        case ComparisonType::kUnsigned:
            return !isFloat && !primitive_util::isSignedInteger(type);
    }
    return false;
}

CompareKeys compareKeys(const Literal& literal, bool totalOrder) {
    CompareKeys keys;
    const PrimitiveType type = literal.elementType();
    const int64_t count = literal.elementCount();
    if (primitive_util::isFloatingPoint(type)) {
        if (totalOrder) {
            keys.ints.resize(static_cast<size_t>(count));
            for (int64_t i = 0; i < count; ++i)
                keys.ints[static_cast<size_t>(i)] = totalOrderKey(literal.getAsDouble(i));
        } else {
            keys.useDouble = true;
            keys.doubles.resize(static_cast<size_t>(count));
            for (int64_t i = 0; i < count; ++i)
                keys.doubles[static_cast<size_t>(i)] = literal.getAsDouble(i);
        }
        return keys;
    }
    keys.ints.resize(static_cast<size_t>(count));
    if (primitive_util::isUnsignedInteger(type)) {
        for (int64_t i = 0; i < count; ++i)
            keys.ints[static_cast<size_t>(i)] =
                static_cast<int64_t>(literal.getAsUint64(i) ^ (uint64_t{1} << 63));
    } else {
        for (int64_t i = 0; i < count; ++i)
            keys.ints[static_cast<size_t>(i)] = literal.getAsInt64(i);
    }
    return keys;
}

}  // namespace hloscope::evaluator
