// Literal storage, generic element access, conversion, equality and random
// generation. Text lives in literal_text.cc, JSON in literal_json.cc.
#include "core/ir/literal.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/io/input_limits.h"
#include "core/ir/literal_internal.h"

namespace hloscope {
namespace {

// ---------------------------------------------------------------------------
// Compile-time type traits over PrimitiveType.

template <PrimitiveType T>
constexpr bool kIsPred = T == PrimitiveType::PRED;
template <PrimitiveType T>
constexpr bool kIsInteger = std::is_integral_v<NativeType<T>> && !kIsPred<T>;
template <PrimitiveType T>
constexpr bool kIsSigned = kIsInteger<T>&& std::is_signed_v<NativeType<T>>;
template <PrimitiveType T>
constexpr bool kIsNarrow = std::is_same_v<NativeType<T>, NarrowFloat<T>>;
template <PrimitiveType T>
constexpr bool kIsComplex = std::is_same_v<NativeType<T>, std::complex<float>> ||
                            std::is_same_v<NativeType<T>, std::complex<double>>;

// Value bits of an integer type (sub-byte types included).
template <PrimitiveType T>
constexpr int integerBits() {
    switch (T) {
        case PrimitiveType::S1:
        case PrimitiveType::U1:
            return 1;
        case PrimitiveType::S2:
        case PrimitiveType::U2:
            return 2;
        case PrimitiveType::S4:
        case PrimitiveType::U4:
            return 4;
        default:
            return static_cast<int>(sizeof(NativeType<T>) * 8);
    }
}

template <PrimitiveType T>
constexpr int64_t signedMin() {
    return integerBits<T>() == 64 ? std::numeric_limits<int64_t>::min()
                                  : -(int64_t{1} << (integerBits<T>() - 1));
}
template <PrimitiveType T>
constexpr int64_t signedMax() {
    return integerBits<T>() == 64 ? std::numeric_limits<int64_t>::max()
                                  : (int64_t{1} << (integerBits<T>() - 1)) - 1;
}
template <PrimitiveType T>
constexpr uint64_t unsignedMax() {
    return integerBits<T>() == 64 ? std::numeric_limits<uint64_t>::max()
                                  : (uint64_t{1} << integerBits<T>()) - 1;
}

// ---------------------------------------------------------------------------
// A type-erased element value: the common currency of conversions.

struct Scalar {
    enum class Kind : uint8_t { kBool, kSigned, kUnsigned, kFloat, kComplex };
    Kind kind = Kind::kSigned;
    bool b = false;
    int64_t s = 0;
    uint64_t u = 0;
    double re = 0;
    double im = 0;
};

// Two's-complement wrap of a 64-bit pattern into integer type T.
template <PrimitiveType T>
NativeType<T> wrapInteger(uint64_t raw) {
    constexpr int kBits = integerBits<T>();
    if constexpr (kBits < 64) {
        raw &= (uint64_t{1} << kBits) - 1;
        if constexpr (kIsSigned<T>) {
            if (raw & (uint64_t{1} << (kBits - 1))) {
                return static_cast<NativeType<T>>(static_cast<int64_t>(raw) -
                                                  (int64_t{1} << kBits));
            }
        }
    }
    return static_cast<NativeType<T>>(raw);
}

// XLA's float -> integer convert: truncation toward zero, saturating at the
// type's bounds, NaN -> 0.
template <PrimitiveType T>
NativeType<T> saturateInteger(double value) {
    if (std::isnan(value)) return 0;
    if constexpr (kIsSigned<T>) {
        if (value >= static_cast<double>(signedMax<T>())) return signedMax<T>();
        if (value <= static_cast<double>(signedMin<T>())) return signedMin<T>();
        return static_cast<NativeType<T>>(static_cast<int64_t>(value));
    } else {
        if (value <= 0) return 0;
        if (value >= static_cast<double>(unsignedMax<T>())) {
            return static_cast<NativeType<T>>(unsignedMax<T>());
        }
        return static_cast<NativeType<T>>(static_cast<uint64_t>(value));
    }
}

int64_t saturateInt64(double value) {
    if (std::isnan(value)) return 0;
    if (value >= 0x1p63) return std::numeric_limits<int64_t>::max();
    if (value <= -0x1p63) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(value);
}

uint64_t saturateUint64(double value) {
    if (std::isnan(value) || value <= 0) return 0;
    if (value >= 0x1p64) return std::numeric_limits<uint64_t>::max();
    return static_cast<uint64_t>(value);
}

// Integer -> double with round-to-odd, so that a second rounding to a format
// of at most 51 significand bits gives the correctly rounded result.
double integerToDoubleRoundOdd(bool negative, uint64_t magnitude) {
    double value = 0;
    if (magnitude < (uint64_t{1} << 53)) {
        value = static_cast<double>(magnitude);
    } else {
        const int shift = 64 - std::countl_zero(magnitude) - 53;
        uint64_t high = magnitude >> shift;
        if ((magnitude & ((uint64_t{1} << shift) - 1)) != 0) high |= 1;
        value = std::ldexp(static_cast<double>(high), shift);
    }
    return negative ? -value : value;
}

double signedToDoubleRoundOdd(int64_t v) {
    const bool negative = v < 0;
    const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    return integerToDoubleRoundOdd(negative, magnitude);
}

template <PrimitiveType T>
Scalar readElement(const NativeType<T>& v) {
    Scalar s;
    if constexpr (kIsPred<T>) {
        s.kind = Scalar::Kind::kBool;
        s.b = v;
    } else if constexpr (kIsSigned<T>) {
        s.kind = Scalar::Kind::kSigned;
        s.s = v;
    } else if constexpr (kIsInteger<T>) {
        s.kind = Scalar::Kind::kUnsigned;
        s.u = v;
    } else if constexpr (kIsNarrow<T>) {
        s.kind = Scalar::Kind::kFloat;
        s.re = static_cast<double>(float_util::bitsToFloat(T, v.bits));
    } else if constexpr (kIsComplex<T>) {
        s.kind = Scalar::Kind::kComplex;
        s.re = static_cast<double>(v.real());
        s.im = static_cast<double>(v.imag());
    } else {
        s.kind = Scalar::Kind::kFloat;
        s.re = static_cast<double>(v);
    }
    return s;
}

template <typename F>
F integerToFloat(const Scalar& s) {
    // C++ int -> float conversions round once, to nearest.
    return s.kind == Scalar::Kind::kSigned ? static_cast<F>(s.s) : static_cast<F>(s.u);
}

template <PrimitiveType T>
NativeType<T> makeElement(const Scalar& s) {
    using K = Scalar::Kind;
    if constexpr (kIsPred<T>) {
        switch (s.kind) {
            case K::kBool:
                return s.b;
            case K::kSigned:
                return s.s != 0;
            case K::kUnsigned:
                return s.u != 0;
            case K::kFloat:
                return s.re != 0;  // NaN -> true, as XLA's `x != 0`
            case K::kComplex:
                return s.re != 0 || s.im != 0;
        }
        return false;
    } else if constexpr (kIsInteger<T>) {
        switch (s.kind) {
            case K::kBool:
                return static_cast<NativeType<T>>(s.b ? 1 : 0);
            case K::kSigned:
                return wrapInteger<T>(static_cast<uint64_t>(s.s));
            case K::kUnsigned:
                return wrapInteger<T>(s.u);
            case K::kFloat:
            case K::kComplex:
                return saturateInteger<T>(s.re);
        }
        return 0;
    } else if constexpr (kIsNarrow<T>) {
        double value = 0;
        switch (s.kind) {
            case K::kBool:
                value = s.b ? 1 : 0;
                break;
            case K::kSigned:
                value = signedToDoubleRoundOdd(s.s);
                break;
            case K::kUnsigned:
                value = integerToDoubleRoundOdd(false, s.u);
                break;
            case K::kFloat:
            case K::kComplex:
                value = s.re;
                break;
        }
        using Bits = typename NativeType<T>::Bits;
        return NativeType<T>::fromBits(static_cast<Bits>(float_util::doubleToBits(T, value)));
    } else if constexpr (kIsComplex<T>) {
        using C = typename NativeType<T>::value_type;
        switch (s.kind) {
            case K::kBool:
                return NativeType<T>(s.b ? C(1) : C(0), C(0));
            case K::kSigned:
            case K::kUnsigned:
                return NativeType<T>(integerToFloat<C>(s), C(0));
            case K::kFloat:
                return NativeType<T>(static_cast<C>(s.re), C(0));
            case K::kComplex:
                return NativeType<T>(static_cast<C>(s.re), static_cast<C>(s.im));
        }
        return {};
    } else {
        using F = NativeType<T>;
        switch (s.kind) {
            case K::kBool:
                return s.b ? F(1) : F(0);
            case K::kSigned:
            case K::kUnsigned:
                return integerToFloat<F>(s);
            case K::kFloat:
            case K::kComplex:
                return static_cast<F>(s.re);
        }
        return F(0);
    }
}

Scalar readAt(const Literal& literal, int64_t index) {
    assert(literal_internal::holdsElements(literal.shape()) && index >= 0 &&
           index < literal.elementCount());
    return dispatchPrimitiveType(literal.elementType(), [&]<PrimitiveType T>() {
        return readElement<T>(literal.data<NativeType<T>>()[static_cast<size_t>(index)]);
    });
}

void writeAt(Literal& literal, int64_t index, const Scalar& value) {
    assert(literal_internal::holdsElements(literal.shape()) && index >= 0 &&
           index < literal.elementCount());
    dispatchPrimitiveType(literal.elementType(), [&]<PrimitiveType T>() {
        literal.data<NativeType<T>>()[static_cast<size_t>(index)] = makeElement<T>(value);
    });
}

size_t nativeSize(PrimitiveType type) {
    return dispatchPrimitiveType(type, [&]<PrimitiveType T>() { return sizeof(NativeType<T>); });
}

// ---------------------------------------------------------------------------
// Deterministic random numbers: splitmix64 (identical on every platform).

class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : m_state(seed) {}
    uint64_t next() {
        uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform01() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
    int64_t uniformInt(int64_t low, int64_t high) {  // [low, high], small ranges
        const auto span = static_cast<uint64_t>(high - low) + 1;
        return low + static_cast<int64_t>(next() % span);
    }

private:
    uint64_t m_state;
};

void fillRandom(Literal& literal, SplitMix64& rng, const RandomLiteralOptions& options) {
    if (literal.isTuple()) {
        for (Literal& element : literal.mutableTupleElements()) fillRandom(element, rng, options);
        return;
    }
    if (!literal_internal::holdsElements(literal.shape())) return;
    const PrimitiveType type = literal.elementType();
    const int64_t count = literal.elementCount();
    const double low = std::min(options.low, options.high);
    const double high = std::max(options.low, options.high);
    auto uniformFloat = [&] { return low + (high - low) * rng.uniform01(); };

    if (type == PrimitiveType::PRED) {
        for (int64_t i = 0; i < count; ++i)
            literal.setFromInt64(i, static_cast<int64_t>(rng.next() >> 63));
    } else if (primitive_util::isInteger(type)) {
        const int bits = primitive_util::bitWidth(type);
        int64_t lo = 0;
        int64_t hi = 16;
        if (primitive_util::isSignedInteger(type)) {
            lo = bits < 8 ? -(int64_t{1} << (bits - 1)) : -8;
            hi = bits < 8 ? (int64_t{1} << (bits - 1)) - 1 : 8;
        } else if (bits < 8) {
            hi = (int64_t{1} << bits) - 1;
        }
        for (int64_t i = 0; i < count; ++i) literal.setFromInt64(i, rng.uniformInt(lo, hi));
    } else if (type == PrimitiveType::F8E8M0FNU) {
        // Unsigned power-of-two scales: 2^k, k in [-4, 4].
        for (int64_t i = 0; i < count; ++i)
            literal.setFromDouble(i, std::ldexp(1.0, static_cast<int>(rng.uniformInt(-4, 4))));
    } else if (primitive_util::isComplex(type)) {
        for (int64_t i = 0; i < count; ++i) {
            double re = uniformFloat();
            double im = uniformFloat();
            literal.setFromComplex(i, {re, im});
        }
    } else {
        for (int64_t i = 0; i < count; ++i) literal.setFromDouble(i, uniformFloat());
    }
}

}  // namespace

// ---------------------------------------------------------------------------
// Construction and storage.

Literal::Literal() = default;

Literal::Literal(const Shape& shape) : m_shape(shape) {
    if (shape.isTuple()) {
        m_tuple.reserve(shape.tupleShapes().size());
        for (const Shape& element : shape.tupleShapes()) m_tuple.emplace_back(element);
    } else if (literal_internal::holdsElements(shape)) {
        const auto bytes = static_cast<size_t>(std::max<int64_t>(shape.elementCount(), 0)) *
                           nativeSize(shape.elementType());
        m_buffer = std::make_shared<std::vector<uint8_t>>(bytes, uint8_t{0});
    }
}

Literal Literal::fromStorage(const Shape& shape, std::shared_ptr<std::vector<uint8_t>> storage) {
    assert(shape.isArray() && storage &&
           storage->size() == static_cast<size_t>(std::max<int64_t>(shape.elementCount(), 0)) *
                                  nativeSize(shape.elementType()));
    Literal literal;
    literal.m_shape = shape;
    literal.m_buffer = std::move(storage);
    return literal;
}

Literal::Literal(const Literal& other) = default;
Literal& Literal::operator=(const Literal& other) = default;
Literal::Literal(Literal&&) noexcept = default;
Literal& Literal::operator=(Literal&&) noexcept = default;
Literal::~Literal() = default;

Literal Literal::makeTuple(std::vector<Literal> elements) {
    std::vector<Shape> shapes;
    shapes.reserve(elements.size());
    for (const Literal& element : elements) shapes.push_back(element.shape());
    Literal literal;
    literal.m_shape = Shape::makeTuple(std::move(shapes));
    literal.m_tuple = std::move(elements);
    return literal;
}

int64_t Literal::elementCount() const {
    return literal_internal::holdsElements(m_shape) ? std::max<int64_t>(m_shape.elementCount(), 0)
                                                    : 0;
}

void* Literal::untypedData() {
    detach();
    return m_buffer ? m_buffer->data() : nullptr;
}

const void* Literal::untypedData() const { return m_buffer ? m_buffer->data() : nullptr; }

int64_t Literal::sizeInBytes() const {
    return m_buffer ? static_cast<int64_t>(m_buffer->size()) : 0;
}

void Literal::detach() {
    if (m_buffer && m_buffer.use_count() > 1) {
        m_buffer = std::make_shared<std::vector<uint8_t>>(*m_buffer);
    }
}

int64_t Literal::linearIndex(std::span<const int64_t> index) const {
    assert(static_cast<int64_t>(index.size()) == m_shape.rank());
    int64_t linear = 0;
    for (size_t i = 0; i < index.size(); ++i) {
        linear = linear * m_shape.dimensions(static_cast<int64_t>(i)) + index[i];
    }
    return linear;
}

// ---------------------------------------------------------------------------
// Generic element access.

double Literal::getAsDouble(int64_t index) const {
    Scalar s = readAt(*this, index);
    switch (s.kind) {
        case Scalar::Kind::kBool:
            return s.b ? 1.0 : 0.0;
        case Scalar::Kind::kSigned:
            return static_cast<double>(s.s);
        case Scalar::Kind::kUnsigned:
            return static_cast<double>(s.u);
        case Scalar::Kind::kFloat:
        case Scalar::Kind::kComplex:
            return s.re;
    }
    return 0;
}

int64_t Literal::getAsInt64(int64_t index) const {
    Scalar s = readAt(*this, index);
    switch (s.kind) {
        case Scalar::Kind::kBool:
            return s.b ? 1 : 0;
        case Scalar::Kind::kSigned:
            return s.s;
        case Scalar::Kind::kUnsigned:
            return static_cast<int64_t>(s.u);
        case Scalar::Kind::kFloat:
        case Scalar::Kind::kComplex:
            return saturateInt64(s.re);
    }
    return 0;
}

uint64_t Literal::getAsUint64(int64_t index) const {
    Scalar s = readAt(*this, index);
    switch (s.kind) {
        case Scalar::Kind::kBool:
            return s.b ? 1 : 0;
        case Scalar::Kind::kSigned:
            return static_cast<uint64_t>(s.s);
        case Scalar::Kind::kUnsigned:
            return s.u;
        case Scalar::Kind::kFloat:
        case Scalar::Kind::kComplex:
            return saturateUint64(s.re);
    }
    return 0;
}

std::complex<double> Literal::getAsComplex(int64_t index) const {
    Scalar s = readAt(*this, index);
    if (s.kind == Scalar::Kind::kComplex) return {s.re, s.im};
    return {getAsDouble(index), 0.0};
}

void Literal::setFromDouble(int64_t index, double value) {
    Scalar s;
    s.kind = Scalar::Kind::kFloat;
    s.re = value;
    writeAt(*this, index, s);
}

void Literal::setFromInt64(int64_t index, int64_t value) {
    Scalar s;
    s.kind = Scalar::Kind::kSigned;
    s.s = value;
    writeAt(*this, index, s);
}

void Literal::setFromComplex(int64_t index, std::complex<double> value) {
    Scalar s;
    s.kind = Scalar::Kind::kComplex;
    s.re = value.real();
    s.im = value.imag();
    writeAt(*this, index, s);
}

// ---------------------------------------------------------------------------
// Equality and conversion.

bool Literal::operator==(const Literal& other) const {
    if (m_shape.elementType() != other.m_shape.elementType()) return false;
    if (isTuple()) {
        if (m_tuple.size() != other.m_tuple.size()) return false;
        for (size_t i = 0; i < m_tuple.size(); ++i) {
            if (m_tuple[i] != other.m_tuple[i]) return false;
        }
        return true;
    }
    if (!literal_internal::holdsElements(m_shape)) return true;  // token, opaque, invalid
    if (m_shape.dimensions() != other.m_shape.dimensions()) return false;
    const int64_t bytes = sizeInBytes();
    if (bytes != other.sizeInBytes()) return false;
    return bytes == 0 ||
           std::memcmp(untypedData(), other.untypedData(), static_cast<size_t>(bytes)) == 0;
}

namespace {

// Direct loops for the common float conversions (the generic path goes
// through a Scalar per element). Each rounds once, as the generic path does.
bool convertFast(const Literal& from, Literal& to) {
    const PrimitiveType s = from.elementType(), d = to.elementType();
    const size_t n = static_cast<size_t>(from.elementCount());
    auto isNarrow = [](PrimitiveType t) {
        return primitive_util::isFloatingPoint(t) && t != PrimitiveType::F32 &&
               t != PrimitiveType::F64;
    };
    if (s == PrimitiveType::F32 && d == PrimitiveType::F64) {
        auto in = from.data<float>();
        auto out = to.data<double>();
        for (size_t i = 0; i < n; ++i) out[i] = in[i];
        return true;
    }
    if (s == PrimitiveType::F64 && d == PrimitiveType::F32) {
        auto in = from.data<double>();
        auto out = to.data<float>();
        for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
        return true;
    }
    if (s == PrimitiveType::F32 && isNarrow(d)) {
        auto in = from.data<float>();
        dispatchPrimitiveType(d, [&]<PrimitiveType D>() {
            if constexpr (requires { NativeType<D>::fromBits(0); }) {
                auto out = to.data<NativeType<D>>();
                for (size_t i = 0; i < n; ++i) out[i] = fromFloat<D>(in[i]);
            }
        });
        return true;
    }
    if (isNarrow(s) && d == PrimitiveType::F32) {
        auto out = to.data<float>();
        dispatchPrimitiveType(s, [&]<PrimitiveType S>() {
            if constexpr (requires { NativeType<S>::fromBits(0); }) {
                auto in = from.data<NativeType<S>>();
                for (size_t i = 0; i < n; ++i) out[i] = toFloat<S>(in[i]);
            }
        });
        return true;
    }
    return false;
}

}  // namespace

StatusOr<Literal> Literal::convert(PrimitiveType type) const {
    if (!literal_internal::holdsElements(m_shape)) {
        return invalidArgument("convert: literal of shape " + m_shape.toString() +
                               " is not an array");
    }
    if (!primitive_util::isArrayType(type) || primitive_util::bitWidth(type) == 0) {
        return invalidArgument("convert: " + std::string(primitive_util::name(type)) +
                               " is not an array element type");
    }
    const PrimitiveType from = elementType();
    if (primitive_util::isComplex(from) && !primitive_util::isComplex(type)) {
        return unimplemented("Converting from type " + std::string(primitive_util::name(from)) +
                             " to type " + std::string(primitive_util::name(type)) +
                             " is not implemented.");
    }
    Shape shape = m_shape;
    shape.setElementType(type);
    if (shape.hasLayout()) shape.mutableLayout().setElementSizeInBits(0);
    if (type == from) {
        Literal same = *this;
        same.m_shape = std::move(shape);
        return same;
    }
    Literal result(shape);
    const int64_t count = elementCount();
    if (convertFast(*this, result)) return result;
    constexpr int64_t kChunk = 4096;
    std::vector<Scalar> chunk(static_cast<size_t>(std::min(count, kChunk)));
    for (int64_t start = 0; start < count; start += kChunk) {
        const int64_t n = std::min(kChunk, count - start);
        dispatchPrimitiveType(from, [&]<PrimitiveType S>() {
            auto in = data<NativeType<S>>().subspan(static_cast<size_t>(start));
            for (int64_t i = 0; i < n; ++i)
                chunk[static_cast<size_t>(i)] = readElement<S>(in[static_cast<size_t>(i)]);
        });
        dispatchPrimitiveType(type, [&]<PrimitiveType D>() {
            auto out = result.data<NativeType<D>>().subspan(static_cast<size_t>(start));
            for (int64_t i = 0; i < n; ++i)
                out[static_cast<size_t>(i)] = makeElement<D>(chunk[static_cast<size_t>(i)]);
        });
    }
    return result;
}

// ---------------------------------------------------------------------------
// Size guard for parsed input.

namespace {

bool addLiteralBytes(const Shape& shape, int64_t& total, int64_t limit) {
    if (shape.isTuple()) {
        for (const Shape& element : shape.tupleShapes()) {
            if (!addLiteralBytes(element, total, limit)) return false;
        }
        return true;
    }
    if (!literal_internal::holdsElements(shape)) return true;
    int64_t bytes = static_cast<int64_t>(nativeSize(shape.elementType()));
    for (int64_t dim : shape.dimensions()) {
        if (dim < 0) return true;  // unbounded: no elements
        if (__builtin_mul_overflow(bytes, dim, &bytes)) return false;
    }
    return !__builtin_add_overflow(total, bytes, &total) && total <= limit;
}

}  // namespace

Status literal_internal::checkLiteralSize(const Shape& shape) {
    int64_t total = 0;
    const int64_t limit = limits::maxParsedLiteralBytes();
    if (addLiteralBytes(shape, total, limit)) return Status::ok();
    return invalidArgument("a literal of shape " + shape.toString(false) +
                           " is too large (more than " + std::to_string(limit >> 20) +
                           " MiB; HLOSCOPE_MAX_LITERAL_MB raises it)");
}

// ---------------------------------------------------------------------------
// Random literals.

Literal makeRandomLiteral(const Shape& shape, const RandomLiteralOptions& options) {
    Literal literal(shape);
    SplitMix64 rng(options.seed);
    fillRandom(literal, rng, options);
    return literal;
}

}  // namespace hloscope
