// Literal: a concrete value of an HLO shape — a dense array of any primitive
// type, or a tuple of literals. Used by the reference evaluator, constants,
// random input generation and result comparison.
//
// Storage: arrays keep their elements contiguously in row-major order of the
// logical dimensions (the shape's layout is carried but does not change the
// storage order). Element storage types (NativeType<T>):
//   pred -> bool; s1/s2/s4/s8 -> int8_t; u1/u2/u4/u8 -> uint8_t (sub-byte
//   values are kept sign-/zero-extended, one per byte, always in range);
//   s16..s64, u16..u64 -> the fixed-width integers; f16/bf16/f8/f6/f4 ->
//   NarrowFloat<T>; f32 -> float; f64 -> double; c64 -> std::complex<float>;
//   c128 -> std::complex<double>.
//
// Text syntax is XLA's. Printing uses XLA's one-line form:
// `f32[2,2] { { 1, 2 }, { 3, 4 } }`, `(f32[], s32[2]) ( 1.5, {1, 2} )`,
// `pred[] true`, `pred[2] {1, 0}`, `f32[] nan`, `-inf`, `bf16[2] {1, 2.5}`;
// parsing also takes the compact `{{1,2},{3,4}}`, `(1.5, {1, 2})`, comments,
// `{...}` (elided values: zeros) and a bare scalar for a non-scalar shape
// (every element). See literal_text.cc / literal_parse.cc.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/float_types.h"
#include "core/ir/shape.h"
#include "core/support/status.h"

namespace hloscope {

template <PrimitiveType T>
struct NativeTypeOf;
#define HLO_NATIVE_TYPE(PT, CT)         \
    template <>                         \
    struct NativeTypeOf<PrimitiveType::PT> { using type = CT; };
HLO_NATIVE_TYPE(PRED, bool)
HLO_NATIVE_TYPE(S1, int8_t)
HLO_NATIVE_TYPE(S2, int8_t)
HLO_NATIVE_TYPE(S4, int8_t)
HLO_NATIVE_TYPE(S8, int8_t)
HLO_NATIVE_TYPE(S16, int16_t)
HLO_NATIVE_TYPE(S32, int32_t)
HLO_NATIVE_TYPE(S64, int64_t)
HLO_NATIVE_TYPE(U1, uint8_t)
HLO_NATIVE_TYPE(U2, uint8_t)
HLO_NATIVE_TYPE(U4, uint8_t)
HLO_NATIVE_TYPE(U8, uint8_t)
HLO_NATIVE_TYPE(U16, uint16_t)
HLO_NATIVE_TYPE(U32, uint32_t)
HLO_NATIVE_TYPE(U64, uint64_t)
HLO_NATIVE_TYPE(F32, float)
HLO_NATIVE_TYPE(F64, double)
HLO_NATIVE_TYPE(C64, std::complex<float>)
HLO_NATIVE_TYPE(C128, std::complex<double>)
#undef HLO_NATIVE_TYPE
#define HLO_NATIVE_NARROW(PT) \
    template <>               \
    struct NativeTypeOf<PrimitiveType::PT> { using type = NarrowFloat<PrimitiveType::PT>; };
HLO_NATIVE_NARROW(F16)
HLO_NATIVE_NARROW(BF16)
HLO_NATIVE_NARROW(F8E5M2)
HLO_NATIVE_NARROW(F8E4M3)
HLO_NATIVE_NARROW(F8E4M3FN)
HLO_NATIVE_NARROW(F8E4M3B11FNUZ)
HLO_NATIVE_NARROW(F8E5M2FNUZ)
HLO_NATIVE_NARROW(F8E4M3FNUZ)
HLO_NATIVE_NARROW(F8E3M4)
HLO_NATIVE_NARROW(F8E8M0FNU)
HLO_NATIVE_NARROW(F6E2M3FN)
HLO_NATIVE_NARROW(F6E3M2FN)
HLO_NATIVE_NARROW(F4E2M1FN)
#undef HLO_NATIVE_NARROW

template <PrimitiveType T>
using NativeType = typename NativeTypeOf<T>::type;

// Calls f.template operator()<T>() with T the compile-time PrimitiveType equal
// to `type` (array types only). Returns f's result.
template <typename F>
decltype(auto) dispatchPrimitiveType(PrimitiveType type, F&& f);

class Literal {
public:
    Literal();  // an invalid (empty) literal
    // Zero-initialised literal of `shape` (tuples recursively; token/opaque
    // hold nothing). Dynamic dimensions use their bound.
    explicit Literal(const Shape& shape);
    Literal(const Literal& other);
    Literal& operator=(const Literal& other);
    Literal(Literal&&) noexcept;
    Literal& operator=(Literal&&) noexcept;
    ~Literal();

    static Literal makeTuple(std::vector<Literal> elements);
    // An array literal over existing storage of exactly its byte size
    // (elementCount * native size; not sub-byte types), shared copy-on-write:
    // what a runtime that recycles output buffers hands out. Its owner may
    // reuse `storage` once use_count() says the literal is gone.
    static Literal fromStorage(const Shape& shape, std::shared_ptr<std::vector<uint8_t>> storage);
    template <typename T>
    static Literal scalar(PrimitiveType type, T value);  // value converted with setFromDouble/Int64
    // R1 helper: Literal::vector<float>(PrimitiveType::F32, {1, 2, 3}).
    template <typename T>
    static Literal vector(PrimitiveType type, const std::vector<T>& values);

    const Shape& shape() const { return m_shape; }
    bool isValid() const { return m_shape.isValid(); }
    bool isTuple() const { return m_shape.isTuple(); }
    PrimitiveType elementType() const { return m_shape.elementType(); }
    int64_t elementCount() const;  // arrays only

    // Typed contiguous access; T must be NativeType<elementType()>.
    template <typename T>
    std::span<T> data();
    template <typename T>
    std::span<const T> data() const;
    // Raw element bytes (size = elementCount() * sizeof(native type)).
    void* untypedData();
    const void* untypedData() const;
    int64_t sizeInBytes() const;

    // Slow generic element access by linear (row-major) index, converting
    // through double/int64/complex. Integer <-> float follows C++ semantics
    // with XLA's saturation for float -> int (NaN -> 0).
    double getAsDouble(int64_t index) const;
    int64_t getAsInt64(int64_t index) const;
    uint64_t getAsUint64(int64_t index) const;
    std::complex<double> getAsComplex(int64_t index) const;
    void setFromDouble(int64_t index, double value);
    void setFromInt64(int64_t index, int64_t value);
    void setFromComplex(int64_t index, std::complex<double> value);
    // Multi-dimensional index <-> linear index (row-major).
    int64_t linearIndex(std::span<const int64_t> index) const;

    // Tuples.
    const std::vector<Literal>& tupleElements() const { return m_tuple; }
    std::vector<Literal>& mutableTupleElements() { return m_tuple; }
    const Literal& tupleElement(int64_t i) const { return m_tuple[static_cast<size_t>(i)]; }

    // Same shape (element type and dimensions, layouts ignored) and bitwise
    // equal elements (so NaN == NaN with equal bits, -0 != +0).
    bool operator==(const Literal& other) const;
    bool operator!=(const Literal& other) const { return !(*this == other); }

    // XLA literal text with the shape prefix: "f32[2] {1, 2}". Floats print
    // with the shortest representation that round-trips for the type.
    std::string toString() const;
    // Only the value part: "{1, 2}" (what appears inside constant(...)).
    std::string valueToString() const;

    // Parses "f32[2] {1, 2}" (shape prefix required).
    static StatusOr<Literal> parse(std::string_view text);
    // Parses a value ("{1, 2}", "3.5", "nan", "true", "(1, {2})") for `shape`
    // (the form inside constant(...)). Errors name the offset as column.
    static StatusOr<Literal> parseValue(std::string_view text, const Shape& shape);

    // Converts element type (convert semantics: round-to-nearest-even for
    // floats, saturating float->int with NaN->0, wrap for int->int).
    StatusOr<Literal> convert(PrimitiveType type) const;

private:
    Shape m_shape;
    std::shared_ptr<std::vector<uint8_t>> m_buffer;  // copy-on-write storage
    std::vector<Literal> m_tuple;
    void detach();  // makes m_buffer unique before writes
};

struct RandomLiteralOptions {
    uint64_t seed = 0;
    // Floats: uniform in [low, high]; ints: uniform in a small type-aware
    // range; pred: fair coin. Narrower ranges for exp-like inputs are up to
    // the caller.
    double low = -1.0;
    double high = 1.0;
};

// Deterministic random literal of `shape` (tuples recursively): the same
// seed and shape always give the same values, on every platform.
Literal makeRandomLiteral(const Shape& shape, const RandomLiteralOptions& options);

// JSON: {"shape": "f32[2]{0}", "values": [1, 2]} (nested arrays by
// dimension; "nan", "inf", "-inf" as strings; complex as [re, im];
// tuples: {"shape": "(...)", "elements": [...]}).
std::string literalToJson(const Literal& literal);
StatusOr<Literal> literalFromJson(std::string_view text, const std::string& fileName = "<input>");
// A JSON array of literals (one per argument), or a single literal object.
StatusOr<std::vector<Literal>> literalsFromJson(std::string_view text,
                                                const std::string& fileName = "<input>");

}  // namespace hloscope

#include "core/ir/literal_inl.h"
