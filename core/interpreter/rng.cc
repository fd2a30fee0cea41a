// Random numbers: rng from the evaluator's random stream, rng-bit-generator
// following XLA's prng.cc bit for bit (three_fry and philox), and the
// threefry2x32 block the custom-call kernels of the same name use.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/interpreter/interpreter_internal.h"
#include "core/ir/prng_layout.h"

namespace hloscope::evaluator {
namespace {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
    for (int round = 0; round < 10; ++round) {
        uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u;
        uint64_t p1 = uint64_t{x[2]} * 0xCD9E8D57u;
        x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
             static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
        key[0] += 0x9E3779B9u;
        key[1] += 0xBB67AE85u;
    }
    return x;
}

std::array<uint32_t, 2> splitU64(uint64_t v) {
    return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}

// Writes raw bit patterns (low bits used) into an array literal of any
// non-complex element type.
void storeRawBits(Literal& literal, const std::vector<uint64_t>& bits) {
    if (literal.elementCount() == 0) return;
    dispatchPrimitiveType(literal.elementType(), [&]<PrimitiveType PT>() {
        using T = NativeType<PT>;
        if constexpr (!std::is_same_v<T, std::complex<float>> &&
                      !std::is_same_v<T, std::complex<double>>) {
            std::span<T> out = literal.data<T>();
            const int width = primitive_util::bitWidth(PT);
            const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
            for (size_t i = 0; i < out.size(); ++i) {
                uint64_t b = bits[i] & mask;
                if constexpr (std::is_same_v<T, bool>) {
                    out[i] = b != 0;
                } else if constexpr (std::is_same_v<T, float>) {
                    out[i] = std::bit_cast<float>(static_cast<uint32_t>(b));
                } else if constexpr (std::is_same_v<T, double>) {
                    out[i] = std::bit_cast<double>(b);
                } else if constexpr (std::is_integral_v<T>) {
                    if constexpr (std::is_signed_v<T>) {
                        if (width < 64 && (b >> (width - 1)) != 0) b |= ~mask;  // sign-extend
                    }
                    out[i] = static_cast<T>(b);
                } else {
                    out[i] = T::fromBits(static_cast<typename T::Bits>(b));
                }
            }
        }
    });
}

}  // namespace

std::array<uint32_t, 2> threeFry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> x) {
    constexpr std::array<int, 8> kRotations = {13, 15, 26, 6, 17, 29, 16, 24};
    const std::array<uint32_t, 3> ks = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
    x[0] += ks[0];
    x[1] += ks[1];
    auto rounds = [&](int first) {
        for (int r = first; r < first + 4; ++r) {
            x[0] += x[1];
            x[1] = std::rotl(x[1], kRotations[static_cast<size_t>(r)]);
            x[1] ^= x[0];
        }
    };
    for (uint32_t block = 1; block <= 5; ++block) {
        rounds(block % 2 == 1 ? 0 : 4);
        x[0] += ks[block % 3];
        x[1] += ks[(block + 1) % 3] + block;
    }
    return x;
}

Literal makePair(Literal first, Literal second) {
    std::vector<Literal> elements;
    elements.push_back(std::move(first));
    elements.push_back(std::move(second));
    return Literal::makeTuple(std::move(elements));
}

StatusOr<Literal> evaluateRngBitGenerator(const HloInstruction& instruction, Operands operands) {
    HLO_RETURN_IF_ERROR(needOperands(instruction, operands, 1));
    const Literal& stateLiteral = *operands[0];
    const Shape& shape = instruction.shape();
    if (!shape.isTuple() || shape.tupleCount() != 2)
        return invalid(instruction, "rng-bit-generator must produce a (state, data) tuple");
    if (stateLiteral.elementType() != PrimitiveType::U64 || stateLiteral.shape().rank() != 1)
        return unsupported(instruction, "rng-bit-generator state must be u64[N]");
    std::span<const uint64_t> state = stateLiteral.data<uint64_t>();
    const Shape& dataShape = shape.tupleShape(1);
    const PrimitiveType type = dataShape.elementType();
    if (!dataShape.isArray() || type == PrimitiveType::PRED || primitive_util::isComplex(type))
        return unsupported(instruction, "rng-bit-generator output type " +
                                            std::string(primitive_util::name(type)));
    const int bits = primitive_util::bitWidth(type);
    if (bits != 64 && bits > 32)
        return unsupported(instruction, "rng-bit-generator output type " +
                                            std::string(primitive_util::name(type)));

    std::string algorithm = "rng_default";
    if (auto text = instruction.attribute("algorithm")) algorithm = std::string(*text);
    if (algorithm == "rng_default") algorithm = "rng_philox";  // XLA's CPU and GPU default

    const int64_t n = dataShape.elementCount();
    std::vector<uint64_t> values(static_cast<size_t>(n));
    std::vector<uint64_t> newState(state.begin(), state.end());

    if (algorithm == "rng_three_fry") {
        if (state.size() != 2) return unsupported(instruction, "three_fry state must be u64[2]");
        const auto key = splitU64(state[0]);
        const uint64_t counter = state[1];
        if (bits == 64) {
            for (int64_t i = 0; i < n; ++i) {
                auto out = threeFry2x32(key, splitU64(counter + static_cast<uint64_t>(i)));
                values[static_cast<size_t>(i)] = uint64_t{out[0]} | (uint64_t{out[1]} << 32);
            }
            newState[1] = counter + static_cast<uint64_t>(n);
        } else {
            // One dimension split into halves (core/ir/prng_layout.h).
            const ThreeFrySplit layout = threeFrySplit(dataShape.dimensions());
            const int64_t outer = layout.outer, inner = layout.inner, d = layout.size;
            const int64_t half = (d + 1) / 2;
            for (int64_t o = 0; o < outer; ++o)
                for (int64_t h = 0; h < half; ++h)
                    for (int64_t r = 0; r < inner; ++r) {
                        uint64_t linear = static_cast<uint64_t>((o * half + h) * inner + r);
                        auto out = threeFry2x32(key, splitU64(counter + linear));
                        for (int64_t k = 0; k < 2; ++k) {
                            int64_t j = 2 * h + k;
                            if (j >= d) continue;
                            values[static_cast<size_t>((o * d + j) * inner + r)] =
                                out[static_cast<size_t>(k)];
                        }
                    }
            newState[1] = counter + static_cast<uint64_t>(outer * half * inner);
        }
    } else if (algorithm == "rng_philox") {
        if (state.size() != 2 && state.size() != 3)
            return unsupported(instruction, "philox state must be u64[2] or u64[3]");
        const auto key = splitU64(state[0]);
        uint64_t lo = state[1];
        uint64_t hi = state.size() >= 3 ? state[2] : state[0];
        const int64_t vectors = bits == 64 ? (2 * n + 3) / 4 : (n + 3) / 4;
        for (int64_t i = 0; i < vectors; ++i) {
            uint64_t cLo = lo + static_cast<uint64_t>(i);
            uint64_t cHi = cLo < lo ? hi + 1 : hi;
            auto l = splitU64(cLo);
            auto h = splitU64(cHi);
            auto out = philox4x32({l[0], l[1], h[0], h[1]}, key);
            if (bits == 64) {
                for (int64_t k = 0; k < 2; ++k) {
                    int64_t index = 2 * i + k;
                    if (index < n)
                        values[static_cast<size_t>(index)] =
                            uint64_t{out[static_cast<size_t>(2 * k)]} |
                            (uint64_t{out[static_cast<size_t>(2 * k + 1)]} << 32);
                }
            } else {
                for (int64_t k = 0; k < 4; ++k) {
                    int64_t index = 4 * i + k;
                    if (index < n) values[static_cast<size_t>(index)] = out[static_cast<size_t>(k)];
                }
            }
        }
        uint64_t newLo = lo + static_cast<uint64_t>(vectors);
        uint64_t newHi = newLo < lo ? hi + 1 : hi;
        newState[1] = newLo;
        if (state.size() == 3) newState[2] = newHi;
    } else {
        return unsupported(instruction, "rng-bit-generator algorithm " + algorithm);
    }

    Literal stateOut(shape.tupleShape(0));
    if (stateOut.elementType() != PrimitiveType::U64 ||
        stateOut.elementCount() != static_cast<int64_t>(newState.size()))
        return invalid(instruction, "rng-bit-generator state shape mismatch");
    std::copy(newState.begin(), newState.end(), stateOut.data<uint64_t>().begin());
    Literal data(dataShape);
    storeRawBits(data, values);
    return makePair(std::move(stateOut), std::move(data));
}

StatusOr<Literal> evaluateRng(const HloInstruction& instruction, Operands operands,
                              EvalContext& context) {
    if (operands.size() != 2) return invalid(instruction, "rng takes two operands");
    std::string distribution = "rng_uniform";
    if (instruction.extra() != nullptr && instruction.extra()->distribution)
        distribution = *instruction.extra()->distribution;
    else if (auto text = instruction.attribute("distribution"))
        distribution = std::string(*text);
    const PrimitiveType type = instruction.shape().elementType();
    Literal result(instruction.shape());
    const int64_t n = result.elementCount();
    auto uniform01 = [&] {
        return static_cast<double>(context.nextRandom() >> 11) * 0x1.0p-53;
    };
    if (primitive_util::isFloatingPoint(type)) {
        const double a = operands[0]->getAsDouble(0);
        const double b = operands[1]->getAsDouble(0);
        if (distribution == "rng_uniform") {
            Literal scratch(Shape::makeScalar(type));
            for (int64_t i = 0; i < n; ++i) {
                // Resample values that round up to the open upper bound.
                for (int attempt = 0;; ++attempt) {
                    scratch.setFromDouble(0, a + (b - a) * uniform01());
                    double v = scratch.getAsDouble(0);
                    if ((v >= a && v < b) || attempt > 64) {
                        result.setFromDouble(i, v);
                        break;
                    }
                }
            }
        } else if (distribution == "rng_normal") {
            for (int64_t i = 0; i < n; ++i) {
                double u1 = std::max(uniform01(), 1e-300);
                double u2 = uniform01();
                result.setFromDouble(i, a + b * std::sqrt(-2.0 * std::log(u1)) *
                                                std::cos(2.0 * std::numbers::pi * u2));
            }
        } else {
            return unsupported(instruction, "distribution " + distribution);
        }
        return result;
    }
    if (primitive_util::isInteger(type) && distribution == "rng_uniform") {
        const int64_t a = operands[0]->getAsInt64(0);
        const int64_t b = operands[1]->getAsInt64(0);
        const uint64_t range = static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
        for (int64_t i = 0; i < n; ++i) {
            uint64_t offset = (b > a && range != 0) ? context.nextRandom() % range : 0;
            result.setFromInt64(i, static_cast<int64_t>(static_cast<uint64_t>(a) + offset));
        }
        return result;
    }
    return unsupported(instruction,
                       "rng " + distribution + " for " + std::string(primitive_util::name(type)));
}

}  // namespace hloscope::evaluator
