// XLA's primitive (element) types and their properties.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hloscope {

// X(enum, text name, bit width). Sub-byte and f8/f6/f4 types are included;
// TUPLE/OPAQUE_TYPE/TOKEN/BUFFER are not array element types (bit width 0).
// BUFFER is the type of a buffer shape `b(f32[2,4])` (see Shape::makeBuffer).
#define HLO_PRIMITIVE_TYPE_LIST(X)       \
    X(PRED, "pred", 8)                   \
    X(S1, "s1", 1)                       \
    X(S2, "s2", 2)                       \
    X(S4, "s4", 4)                       \
    X(S8, "s8", 8)                       \
    X(S16, "s16", 16)                    \
    X(S32, "s32", 32)                    \
    X(S64, "s64", 64)                    \
    X(U1, "u1", 1)                       \
    X(U2, "u2", 2)                       \
    X(U4, "u4", 4)                       \
    X(U8, "u8", 8)                       \
    X(U16, "u16", 16)                    \
    X(U32, "u32", 32)                    \
    X(U64, "u64", 64)                    \
    X(F16, "f16", 16)                    \
    X(BF16, "bf16", 16)                  \
    X(F32, "f32", 32)                    \
    X(F64, "f64", 64)                    \
    X(F8E5M2, "f8e5m2", 8)               \
    X(F8E4M3, "f8e4m3", 8)               \
    X(F8E4M3FN, "f8e4m3fn", 8)           \
    X(F8E4M3B11FNUZ, "f8e4m3b11fnuz", 8) \
    X(F8E5M2FNUZ, "f8e5m2fnuz", 8)       \
    X(F8E4M3FNUZ, "f8e4m3fnuz", 8)       \
    X(F8E3M4, "f8e3m4", 8)               \
    X(F8E8M0FNU, "f8e8m0fnu", 8)         \
    X(F6E2M3FN, "f6e2m3fn", 6)           \
    X(F6E3M2FN, "f6e3m2fn", 6)           \
    X(F4E2M1FN, "f4e2m1fn", 4)           \
    X(C64, "c64", 64)                    \
    X(C128, "c128", 128)                 \
    X(TUPLE, "tuple", 0)                 \
    X(OPAQUE_TYPE, "opaque", 0)          \
    X(TOKEN, "token", 0)                 \
    X(BUFFER, "buffer", 0)

enum class PrimitiveType : uint8_t {
    PRIMITIVE_TYPE_INVALID = 0,
#define HLO_PT_ENUM(e, name, bits) e,
    HLO_PRIMITIVE_TYPE_LIST(HLO_PT_ENUM)
#undef HLO_PT_ENUM
};

inline constexpr int kPrimitiveTypeCount = 0
#define HLO_PT_COUNT(e, name, bits) +1
    HLO_PRIMITIVE_TYPE_LIST(HLO_PT_COUNT)
#undef HLO_PT_COUNT
    ;

namespace primitive_util {

// Lower-case text name as printed in HLO ("f32", "opaque"); "invalid" for
// PRIMITIVE_TYPE_INVALID.
std::string_view name(PrimitiveType type);
// Parses a lower-case name; nullopt when unknown.
std::optional<PrimitiveType> parse(std::string_view name);

int bitWidth(PrimitiveType type);
// Bytes one element occupies in a dense unpacked buffer (sub-byte types take
// one byte each; 0 for non-array types).
int byteWidth(PrimitiveType type);

bool isArrayType(PrimitiveType type);  // everything but TUPLE, OPAQUE_TYPE, TOKEN, invalid
bool isFloatingPoint(PrimitiveType type);  // f16, bf16, f32, f64, f8/f6/f4
bool isF8Type(PrimitiveType type);
bool isSubByteFloat(PrimitiveType type);  // f6 and f4 variants
bool isComplex(PrimitiveType type);
bool isSignedInteger(PrimitiveType type);
bool isUnsignedInteger(PrimitiveType type);
bool isInteger(PrimitiveType type);  // signed or unsigned, not pred
bool isSubByte(PrimitiveType type);  // bit width < 8 (s1..s4, u1..u4, f4, f6)

// For floating-point types: exponent and explicit mantissa bits; 0 otherwise.
int exponentBits(PrimitiveType type);
int mantissaBits(PrimitiveType type);
// The real component type of a complex type (c64 -> f32).
PrimitiveType complexComponentType(PrimitiveType type);

}  // namespace primitive_util
}  // namespace hloscope
