// Elementwise family of the evaluator, the ops beyond plain arithmetic:
// compare (with XLA's total order for floats), select, clamp, bitcast-convert,
// reduce-precision, stochastic-convert, map and the type-changing complex
// parts (real, imag, complex, abs of complex, is-finite). Arithmetic and the
// dispatch are in elementwise.cc.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/interpreter/elementwise_internal.h"

namespace hloscope::evaluator::elementwise {
namespace {

template <typename K>
void compareLoop(ComparisonDirection direction, std::span<const K> a, std::span<const K> b,
                 std::span<bool> out) {
    if (direction == ComparisonDirection::kEq)
        return mapBinary(a, b, out, [](K x, K y) { return x == y; });
    if (direction == ComparisonDirection::kNe)
        return mapBinary(a, b, out, [](K x, K y) { return x != y; });
    if constexpr (!kIsComplex<K>) {
        switch (direction) {
        case ComparisonDirection::kGe: mapBinary(a, b, out, [](K x, K y) { return x >= y; }); break;
        case ComparisonDirection::kGt: mapBinary(a, b, out, [](K x, K y) { return x > y; }); break;
        case ComparisonDirection::kLe: mapBinary(a, b, out, [](K x, K y) { return x <= y; }); break;
        case ComparisonDirection::kLt: mapBinary(a, b, out, [](K x, K y) { return x < y; }); break;
        default: break;
        }
    }
}

// Total-order keys of floating-point values: unsigned keys ordered
// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
std::vector<uint64_t> totalOrderKeys(const Literal& literal) {
    const PrimitiveType type = literal.elementType();
    const int width = primitive_util::bitWidth(type);
    std::vector<uint64_t> keys(static_cast<size_t>(literal.elementCount()));
    dispatchPrimitiveType(type, [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        if constexpr (std::is_floating_point_v<T> || kIsNarrow<T>) {
            std::span<const T> d = literal.data<T>();
            for (size_t i = 0; i < keys.size(); ++i) {
                uint64_t bits;
                if constexpr (std::is_same_v<T, float>)
                    bits = std::bit_cast<uint32_t>(d[i]);
                else if constexpr (std::is_same_v<T, double>)
                    bits = std::bit_cast<uint64_t>(d[i]);
                else
                    bits = d[i].bits & ((uint64_t{1} << width) - 1);
                if (PT == PrimitiveType::F8E8M0FNU) {  // no sign bit
                    keys[i] = bits;
                    continue;
                }
                const uint64_t sign = uint64_t{1} << (width - 1);
                keys[i] = (bits & sign) ? (~bits & (sign | (sign - 1))) : (bits | sign);
            }
        }
    });
    return keys;
}

template <typename F>
void withElementBytes(int bytes, F&& f) {
    struct Bytes16 {
        uint64_t a, b;
    };
    switch (bytes) {
    case 1: f.template operator()<uint8_t>(); break;
    case 2: f.template operator()<uint16_t>(); break;
    case 4: f.template operator()<uint32_t>(); break;
    case 8: f.template operator()<uint64_t>(); break;
    case 16: f.template operator()<Bytes16>(); break;
    default: break;
    }
}

template <typename E>
std::span<const E> bytesOf(const Literal& literal) {
    return {static_cast<const E*>(literal.untypedData()),
            static_cast<size_t>(literal.elementCount())};
}

template <typename C>
C clampValue(C low, C x, C high) {
    if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(low)) return low;
        if (std::isnan(x)) return x;
        if (std::isnan(high)) return high;
    }
    return std::min(high, std::max(x, low));
}

// Raw bit patterns of a non-complex array's elements.
std::vector<uint64_t> rawBits(const Literal& literal) {
    std::vector<uint64_t> bits(static_cast<size_t>(literal.elementCount()));
    if (bits.empty()) return bits;
    dispatchPrimitiveType(literal.elementType(), [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        std::span<const T> d = literal.data<T>();
        for (size_t i = 0; i < bits.size(); ++i) {
            if constexpr (std::is_same_v<T, bool>)
                bits[i] = d[i] ? 1 : 0;
            else if constexpr (std::is_same_v<T, float>)
                bits[i] = std::bit_cast<uint32_t>(d[i]);
            else if constexpr (std::is_same_v<T, double>)
                bits[i] = std::bit_cast<uint64_t>(d[i]);
            else if constexpr (kIsNarrow<T>)
                bits[i] = d[i].bits & ((uint64_t{1} << primitive_util::bitWidth(PT)) - 1);
            else if constexpr (kIsInt<T>)
                bits[i] = rawInt<PT>(d[i]);
        }
    });
    return bits;
}

void storeBits(const std::vector<uint64_t>& bits, Literal& out) {
    if (bits.empty()) return;
    dispatchPrimitiveType(out.elementType(), [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        std::span<T> d = out.data<T>();
        for (size_t i = 0; i < d.size(); ++i) {
            if constexpr (std::is_same_v<T, bool>)
                d[i] = bits[i] != 0;
            else if constexpr (std::is_same_v<T, float>)
                d[i] = std::bit_cast<float>(static_cast<uint32_t>(bits[i]));
            else if constexpr (std::is_same_v<T, double>)
                d[i] = std::bit_cast<double>(bits[i]);
            else if constexpr (kIsNarrow<T>)
                d[i] = T::fromBits(static_cast<typename T::Bits>(bits[i]));
            else if constexpr (kIsInt<T>)
                d[i] = wrap<PT>(bits[i]);
        }
    });
}

double roundToType(PrimitiveType type, double value) {
    if (type == PrimitiveType::F64) return value;
    if (type == PrimitiveType::F32) return static_cast<float>(value);
    return float_util::bitsToFloat(type, float_util::doubleToBits(type, value));
}

}  // namespace

StatusOr<Literal> evaluateCompare(const HloInstruction& instruction, Operands operands,
                                  Literal result) {
    const auto direction = instruction.comparisonDirection();
    if (!direction) return invalid(instruction, "compare without direction");
    const PrimitiveType type = operands[0]->elementType();
    if (operands[1]->elementType() != type)
        return invalid(instruction, "compare operands have different element types");
    if (result.elementCount() == 0) return result;
    std::span<bool> out = result.data<bool>();
    ComparisonType comparisonType =
        instruction.extra() ? instruction.extra()->comparisonType : ComparisonType::kDefault;
    if (primitive_util::isFloatingPoint(type) && comparisonType == ComparisonType::kTotalOrder) {
        std::vector<uint64_t> a = totalOrderKeys(*operands[0]), b = totalOrderKeys(*operands[1]);
        compareLoop<uint64_t>(*direction, a, b, out);
        return result;
    }
    if (isNarrowFloat(type)) {
        std::vector<float> a = widen(*operands[0]), b = widen(*operands[1]);
        compareLoop<float>(*direction, a, b, out);
        return result;
    }
    bool ok = dispatchPrimitiveType(type, [&]<PrimitiveType PT>() -> bool {
        using T = NativeType<PT>;
        if constexpr (kIsComplex<T>) {
            if (*direction != ComparisonDirection::kEq && *direction != ComparisonDirection::kNe)
                return false;
            compareLoop<T>(*direction, operands[0]->data<T>(), operands[1]->data<T>(), out);
            return true;
        } else if constexpr (!kIsNarrow<T>) {
            compareLoop<T>(*direction, operands[0]->data<T>(), operands[1]->data<T>(), out);
            return true;
        }
        return false;
    });
    if (!ok) return unsupported(instruction, "compare direction for complex operands");
    return result;
}

StatusOr<Literal> evaluateSelect(const HloInstruction& instruction, Operands operands,
                                 Literal result) {
    const Literal& predicate = *operands[0];
    if (predicate.elementType() != PrimitiveType::PRED)
        return invalid(instruction, "select predicate must be pred");
    if (operands[1]->elementType() != result.elementType() ||
        operands[2]->elementType() != result.elementType())
        return invalid(instruction, "select operands must have the result's element type");
    if (result.elementCount() == 0) return result;
    std::span<const bool> p = predicate.data<bool>();
    void* outData = result.untypedData();
    withElementBytes(primitive_util::byteWidth(result.elementType()), [&]<typename E>() {
        std::span<E> out(static_cast<E*>(outData), static_cast<size_t>(result.elementCount()));
        mapTernary(p, bytesOf<E>(*operands[1]), bytesOf<E>(*operands[2]), out,
                   [](bool c, E t, E f) { return c ? t : f; });
    });
    return result;
}

StatusOr<Literal> evaluateClamp(const HloInstruction& instruction, Operands operands,
                                Literal result) {
    const PrimitiveType type = result.elementType();
    for (const Literal* operand : operands)
        if (operand->elementType() != type)
            return invalid(instruction, "clamp operands must have the result's element type");
    if (result.elementCount() == 0) return result;
    if (primitive_util::isFloatingPoint(type)) {
        floatKernel<3>(type, {operands[0], operands[1], operands[2]}, result,
                       [](auto lo, auto x, auto hi, auto out) {
                           using C = typename decltype(out)::element_type;
                           mapTernary(lo, x, hi, out,
                                      [](C l, C v, C h) { return clampValue(l, v, h); });
                           return true;
                       });
        return result;
    }
    bool ok = dispatchPrimitiveType(type, [&]<PrimitiveType PT>() -> bool {
        using T = NativeType<PT>;
        if constexpr (std::is_integral_v<T>) {
            mapTernary(operands[0]->data<T>(), operands[1]->data<T>(), operands[2]->data<T>(),
                       result.data<T>(), [](T l, T v, T h) { return clampValue(l, v, h); });
            return true;
        }
        return false;
    });
    if (!ok) return unsupported(instruction, "clamp of complex values");
    return result;
}

StatusOr<Literal> evaluateBitcastConvert(const HloInstruction& instruction, const Literal& operand,
                                         Literal result) {
    const PrimitiveType from = operand.elementType(), to = result.elementType();
    const int inBits = primitive_util::bitWidth(from), outBits = primitive_util::bitWidth(to);
    if (primitive_util::isComplex(from) || primitive_util::isComplex(to)) {
        if (from == to) return operand;
        // Storage is row-major whatever the layout, so reinterpreting the
        // bytes is the bitcast (a trailing dimension absorbs the width ratio).
        if (operand.sizeInBytes() != result.sizeInBytes() || primitive_util::isSubByte(from) ||
            primitive_util::isSubByte(to) || from == PrimitiveType::PRED || to == PrimitiveType::PRED)
            return invalid(instruction, "bitcast-convert shapes do not match the bit widths");
        if (result.sizeInBytes() > 0)
            std::memcpy(result.untypedData(), operand.untypedData(),
                        static_cast<size_t>(result.sizeInBytes()));
        return result;
    }
    if (inBits == outBits) {
        if (operand.elementCount() != result.elementCount())
            return invalid(instruction, "bitcast-convert element counts differ");
        if (!primitive_util::isSubByte(from) && !primitive_util::isSubByte(to) &&
            from != PrimitiveType::PRED && to != PrimitiveType::PRED) {
            if (result.sizeInBytes() > 0)
                std::memcpy(result.untypedData(), operand.untypedData(),
                            static_cast<size_t>(result.sizeInBytes()));
            return result;
        }
        storeBits(rawBits(operand), result);
        return result;
    }
    std::vector<uint64_t> in = rawBits(operand);
    std::vector<uint64_t> out(static_cast<size_t>(result.elementCount()));
    if (inBits > outBits) {  // one input element -> `ratio` outputs (extra minor dimension)
        const int ratio = inBits / outBits;
        if (inBits % outBits != 0 || out.size() != in.size() * static_cast<size_t>(ratio))
            return invalid(instruction, "bitcast-convert shapes do not match the bit widths");
        const uint64_t mask = (uint64_t{1} << outBits) - 1;
        for (size_t i = 0; i < in.size(); ++i)
            for (int j = 0; j < ratio; ++j)
                out[i * static_cast<size_t>(ratio) + static_cast<size_t>(j)] =
                    (in[i] >> (j * outBits)) & mask;
    } else {  // `ratio` inputs (the minor dimension) -> one output element
        const int ratio = outBits / inBits;
        if (outBits % inBits != 0 || in.size() != out.size() * static_cast<size_t>(ratio))
            return invalid(instruction, "bitcast-convert shapes do not match the bit widths");
        for (size_t i = 0; i < out.size(); ++i)
            for (int j = 0; j < ratio; ++j)
                out[i] |= in[i * static_cast<size_t>(ratio) + static_cast<size_t>(j)]
                          << (j * inBits);
    }
    storeBits(out, result);
    return result;
}

StatusOr<Literal> evaluateReducePrecision(const HloInstruction& instruction, const Literal& operand,
                                          Literal result) {
    const HloExtraAttributes* extra = instruction.extra();
    if (extra == nullptr || !extra->exponentBits || !extra->mantissaBits)
        return invalid(instruction, "reduce-precision needs exponent_bits and mantissa_bits");
    const int e = static_cast<int>(*extra->exponentBits);
    const int m = static_cast<int>(*extra->mantissaBits);
    if (e < 1 || m < 0) return invalid(instruction, "reduce-precision bit counts out of range");
    const PrimitiveType type = result.elementType();
    if (!primitive_util::isFloatingPoint(type) || operand.elementType() != type)
        return unsupported(instruction, "reduce-precision of non-float values");
    if (result.elementCount() == 0) return result;
    floatKernel<1>(type, {&operand}, result, [&](auto in, auto out) {
        using C = typename decltype(out)::element_type;
        mapUnary(in, out, [&](C v) { return float_util::reducePrecision(v, e, m); });
        return true;
    });
    return result;
}

// XLA's StochasticConvertDecomposer: round |x| up when random < frac(|x|) *
// 2^bits, saturate at the target's limits, NaN -> 0.
StatusOr<Literal> evaluateStochasticConvert(const HloInstruction& instruction, Operands operands,
                                            Literal result) {
    const Literal& operand = *operands[0];
    const Literal& random = *operands[1];
    const PrimitiveType from = operand.elementType(), to = result.elementType();
    const PrimitiveType randomType = random.elementType();
    if (!primitive_util::isFloatingPoint(from))
        return invalid(instruction, "stochastic-convert operand must be floating point");
    if (!primitive_util::isUnsignedInteger(randomType) ||
        primitive_util::bitWidth(randomType) != primitive_util::bitWidth(from))
        return invalid(instruction, "stochastic-convert random must be unsigned of the same width");
    if (!primitive_util::isSignedInteger(to))
        return unsupported(instruction,
                           "stochastic-convert to " + std::string(primitive_util::name(to)));
    const int64_t n = result.elementCount();
    if (n == 0) return result;
    std::vector<double> values(static_cast<size_t>(operand.elementCount()));
    if (from == PrimitiveType::F64) {
        auto d = operand.data<double>();
        values.assign(d.begin(), d.end());
    } else if (from == PrimitiveType::F32) {
        auto d = operand.data<float>();
        values.assign(d.begin(), d.end());
    } else {
        std::vector<float> w = widen(operand);
        values.assign(w.begin(), w.end());
    }
    const std::vector<uint64_t> randomBits = rawBits(random);
    const int toBits = primitive_util::bitWidth(to);
    const int64_t minValue =
        toBits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (toBits - 1));
    const int64_t maxValue =
        toBits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (toBits - 1)) - 1;
    const double minT = roundToType(from, static_cast<double>(minValue));
    const double maxT = roundToType(from, static_cast<double>(maxValue));
    const double scale = std::ldexp(1.0, primitive_util::bitWidth(randomType));
    std::vector<uint64_t> out(static_cast<size_t>(n));
    for (size_t i = 0; i < out.size(); ++i) {
        const double v = values.size() == out.size() ? values[i] : values[0];
        const uint64_t r = randomBits.size() == out.size() ? randomBits[i] : randomBits[0];
        int64_t value;
        if (v <= minT) {
            value = minValue;
        } else if (v >= maxT) {
            value = maxValue;
        } else if (std::isnan(v)) {
            value = 0;
        } else {
            const double magnitude = std::fabs(v);
            const double truncated = std::floor(magnitude);
            const double fixed = (magnitude - truncated) * scale;
            const uint64_t fixedInt = fixed >= scale ? ~uint64_t{0} : static_cast<uint64_t>(fixed);
            uint64_t t = static_cast<uint64_t>(truncated);
            if (r < fixedInt) ++t;
            value = static_cast<int64_t>(v < 0 ? uint64_t{0} - t : t);
        }
        out[i] = static_cast<uint64_t>(value);
    }
    storeBits(out, result);
    return result;
}

StatusOr<Literal> evaluateMap(const HloInstruction& instruction, Operands operands,
                              EvalContext& context, Literal result) {
    const HloComputation* computation = instruction.toApply();
    if (computation == nullptr) return invalid(instruction, "map needs to_apply");
    const int64_t n = result.elementCount();
    if (n == 0) return result;
    std::vector<Literal> scalars;
    std::vector<const Literal*> arguments;
    std::vector<int64_t> widths;
    for (const Literal* operand : operands) {
        scalars.emplace_back(Shape::makeScalar(operand->elementType()));
        widths.push_back(primitive_util::byteWidth(operand->elementType()));
    }
    for (const Literal& scalar : scalars) arguments.push_back(&scalar);
    const int64_t outWidth = primitive_util::byteWidth(result.elementType());
    char* out = static_cast<char*>(result.untypedData());
    for (int64_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < scalars.size(); ++j) {
            const int64_t index = operands[j]->elementCount() == n ? i : 0;
            std::memcpy(scalars[j].untypedData(),
                        static_cast<const char*>(operands[j]->untypedData()) + index * widths[j],
                        static_cast<size_t>(widths[j]));
        }
        HLO_ASSIGN_OR_RETURN(Literal value, context.call(*computation, arguments));
        if (value.elementType() != result.elementType() || value.elementCount() != 1)
            return invalid(instruction, "map computation must return a scalar of the result type");
        std::memcpy(out + i * outWidth, value.untypedData(), static_cast<size_t>(outWidth));
    }
    return result;
}

// real, imag, complex, is-finite, and abs of complex values (type-changing).
StatusOr<Literal> evaluateComponentOp(const HloInstruction& instruction, Operands operands,
                                      Literal result) {
    const HloOpcode op = instruction.opcode();
    const PrimitiveType type = operands[0]->elementType();
    const std::string typeName(primitive_util::name(type));
    if (result.elementCount() == 0) return result;
    auto complexParts = [&]<typename Z>() {
        using R = typename Z::value_type;
        std::span<const Z> in = operands[0]->data<Z>();
        std::span<R> out = result.data<R>();
        if (op == HloOpcode::kReal) mapUnary(in, out, [](Z z) { return z.real(); });
        if (op == HloOpcode::kImag) mapUnary(in, out, [](Z z) { return z.imag(); });
        if (op == HloOpcode::kAbs) mapUnary(in, out, [](Z z) { return std::abs(z); });
    };
    switch (op) {
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kAbs:
        if (type == PrimitiveType::C64 && result.elementType() == PrimitiveType::F32) {
            complexParts.template operator()<std::complex<float>>();
            return result;
        }
        if (type == PrimitiveType::C128 && result.elementType() == PrimitiveType::F64) {
            complexParts.template operator()<std::complex<double>>();
            return result;
        }
        if (primitive_util::isFloatingPoint(type) && type == result.elementType() &&
            op != HloOpcode::kAbs) {
            if (op == HloOpcode::kReal) return *operands[0];
            return result;  // imag of a real value: zeros
        }
        return invalid(instruction, "real/imag/abs result type does not match " + typeName);
    case HloOpcode::kComplex: {
        if (operands[1]->elementType() != type)
            return invalid(instruction, "complex operands have different types");
        if (type == PrimitiveType::F32 && result.elementType() == PrimitiveType::C64) {
            mapBinary(operands[0]->data<float>(), operands[1]->data<float>(),
                      result.data<std::complex<float>>(),
                      [](float re, float im) { return std::complex<float>(re, im); });
            return result;
        }
        if (type == PrimitiveType::F64 && result.elementType() == PrimitiveType::C128) {
            mapBinary(operands[0]->data<double>(), operands[1]->data<double>(),
                      result.data<std::complex<double>>(),
                      [](double re, double im) { return std::complex<double>(re, im); });
            return result;
        }
        return invalid(instruction, "complex of " + typeName);
    }
    case HloOpcode::kIsFinite: {
        if (!primitive_util::isFloatingPoint(type))
            return invalid(instruction, "is-finite of " + typeName);
        std::span<bool> out = result.data<bool>();
        if (type == PrimitiveType::F64) {
            mapUnary(operands[0]->data<double>(), out, [](double x) { return std::isfinite(x); });
        } else if (type == PrimitiveType::F32) {
            mapUnary(operands[0]->data<float>(), out, [](float x) { return std::isfinite(x); });
        } else {
            std::vector<float> w = widen(*operands[0]);
            mapUnary(std::span<const float>(w), out, [](float x) { return std::isfinite(x); });
        }
        return result;
    }
    default: break;
    }
    return unsupported(instruction, "unexpected opcode");
}

}  // namespace hloscope::evaluator::elementwise
