#include "core/ir/primitive_type.h"

#include <array>

namespace hloscope::primitive_util {
namespace {

struct TypeInfo {
    std::string_view name;
    int bits;
};

constexpr std::array<TypeInfo, kPrimitiveTypeCount + 1> kTypeInfo = {{
    {"invalid", 0},
#define HLO_PT_INFO(e, name, bits) {name, bits},
    HLO_PRIMITIVE_TYPE_LIST(HLO_PT_INFO)
#undef HLO_PT_INFO
}};

}  // namespace

std::string_view name(PrimitiveType type) {
    auto index = static_cast<size_t>(type);
    return index < kTypeInfo.size() ? kTypeInfo[index].name : "invalid";
}

std::optional<PrimitiveType> parse(std::string_view text) {
    for (size_t i = 1; i < kTypeInfo.size(); ++i) {
        if (kTypeInfo[i].name == text) return static_cast<PrimitiveType>(i);
    }
    return std::nullopt;
}

int bitWidth(PrimitiveType type) {
    auto index = static_cast<size_t>(type);
    return index < kTypeInfo.size() ? kTypeInfo[index].bits : 0;
}

int byteWidth(PrimitiveType type) {
    int bits = bitWidth(type);
    return bits == 0 ? 0 : (bits + 7) / 8;
}

bool isArrayType(PrimitiveType type) {
    return type != PrimitiveType::PRIMITIVE_TYPE_INVALID && type != PrimitiveType::TUPLE &&
           type != PrimitiveType::OPAQUE_TYPE && type != PrimitiveType::TOKEN &&
           type != PrimitiveType::BUFFER;
}

bool isF8Type(PrimitiveType type) {
    switch (type) {
    case PrimitiveType::F8E5M2:
    case PrimitiveType::F8E4M3:
    case PrimitiveType::F8E4M3FN:
    case PrimitiveType::F8E4M3B11FNUZ:
    case PrimitiveType::F8E5M2FNUZ:
    case PrimitiveType::F8E4M3FNUZ:
    case PrimitiveType::F8E3M4:
    case PrimitiveType::F8E8M0FNU: return true;
    default: return false;
    }
}

bool isSubByteFloat(PrimitiveType type) {
    return type == PrimitiveType::F6E2M3FN || type == PrimitiveType::F6E3M2FN ||
           type == PrimitiveType::F4E2M1FN;
}

bool isFloatingPoint(PrimitiveType type) {
    switch (type) {
    case PrimitiveType::F16:
    case PrimitiveType::BF16:
    case PrimitiveType::F32:
    case PrimitiveType::F64: return true;
    default: return isF8Type(type) || isSubByteFloat(type);
    }
}

bool isComplex(PrimitiveType type) {
    return type == PrimitiveType::C64 || type == PrimitiveType::C128;
}

bool isSignedInteger(PrimitiveType type) {
    switch (type) {
    case PrimitiveType::S1:
    case PrimitiveType::S2:
    case PrimitiveType::S4:
    case PrimitiveType::S8:
    case PrimitiveType::S16:
    case PrimitiveType::S32:
    case PrimitiveType::S64: return true;
    default: return false;
    }
}

bool isUnsignedInteger(PrimitiveType type) {
    switch (type) {
    case PrimitiveType::U1:
    case PrimitiveType::U2:
    case PrimitiveType::U4:
    case PrimitiveType::U8:
    case PrimitiveType::U16:
    case PrimitiveType::U32:
    case PrimitiveType::U64: return true;
    default: return false;
    }
}

bool isInteger(PrimitiveType type) { return isSignedInteger(type) || isUnsignedInteger(type); }

bool isSubByte(PrimitiveType type) {
    int bits = bitWidth(type);
    return bits > 0 && bits < 8;
}

int exponentBits(PrimitiveType type) {
    switch (type) {
    case PrimitiveType::F16: return 5;
    case PrimitiveType::BF16: return 8;
    case PrimitiveType::F32: return 8;
    case PrimitiveType::F64: return 11;
    case PrimitiveType::F8E5M2:
    case PrimitiveType::F8E5M2FNUZ: return 5;
    case PrimitiveType::F8E4M3:
    case PrimitiveType::F8E4M3FN:
    case PrimitiveType::F8E4M3B11FNUZ:
    case PrimitiveType::F8E4M3FNUZ: return 4;
    case PrimitiveType::F8E3M4: return 3;
    case PrimitiveType::F8E8M0FNU: return 8;
    case PrimitiveType::F6E2M3FN: return 2;
    case PrimitiveType::F6E3M2FN: return 3;
    case PrimitiveType::F4E2M1FN: return 2;
    default: return 0;
    }
}

int mantissaBits(PrimitiveType type) {
    switch (type) {
    case PrimitiveType::F16: return 10;
    case PrimitiveType::BF16: return 7;
    case PrimitiveType::F32: return 23;
    case PrimitiveType::F64: return 52;
    case PrimitiveType::F8E5M2:
    case PrimitiveType::F8E5M2FNUZ: return 2;
    case PrimitiveType::F8E4M3:
    case PrimitiveType::F8E4M3FN:
    case PrimitiveType::F8E4M3B11FNUZ:
    case PrimitiveType::F8E4M3FNUZ: return 3;
    case PrimitiveType::F8E3M4: return 4;
    case PrimitiveType::F8E8M0FNU: return 0;
    case PrimitiveType::F6E2M3FN: return 3;
    case PrimitiveType::F6E3M2FN: return 2;
    case PrimitiveType::F4E2M1FN: return 1;
    default: return 0;
    }
}

PrimitiveType complexComponentType(PrimitiveType type) {
    if (type == PrimitiveType::C64) return PrimitiveType::F32;
    if (type == PrimitiveType::C128) return PrimitiveType::F64;
    return PrimitiveType::PRIMITIVE_TYPE_INVALID;
}

}  // namespace hloscope::primitive_util
