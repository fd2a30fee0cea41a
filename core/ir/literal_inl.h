// Template implementations for literal.h (included at its end).
#pragma once

#include <cassert>

namespace hloscope {

template <typename F>
decltype(auto) dispatchPrimitiveType(PrimitiveType type, F&& f) {
    switch (type) {
#define HLO_DISPATCH_CASE(PT, name, bits) \
    case PrimitiveType::PT: return f.template operator()<PrimitiveType::PT>();
        HLO_DISPATCH_CASE(PRED, , )
        HLO_DISPATCH_CASE(S1, , )
        HLO_DISPATCH_CASE(S2, , )
        HLO_DISPATCH_CASE(S4, , )
        HLO_DISPATCH_CASE(S8, , )
        HLO_DISPATCH_CASE(S16, , )
        HLO_DISPATCH_CASE(S32, , )
        HLO_DISPATCH_CASE(S64, , )
        HLO_DISPATCH_CASE(U1, , )
        HLO_DISPATCH_CASE(U2, , )
        HLO_DISPATCH_CASE(U4, , )
        HLO_DISPATCH_CASE(U8, , )
        HLO_DISPATCH_CASE(U16, , )
        HLO_DISPATCH_CASE(U32, , )
        HLO_DISPATCH_CASE(U64, , )
        HLO_DISPATCH_CASE(F16, , )
        HLO_DISPATCH_CASE(BF16, , )
        HLO_DISPATCH_CASE(F32, , )
        HLO_DISPATCH_CASE(F64, , )
        HLO_DISPATCH_CASE(F8E5M2, , )
        HLO_DISPATCH_CASE(F8E4M3, , )
        HLO_DISPATCH_CASE(F8E4M3FN, , )
        HLO_DISPATCH_CASE(F8E4M3B11FNUZ, , )
        HLO_DISPATCH_CASE(F8E5M2FNUZ, , )
        HLO_DISPATCH_CASE(F8E4M3FNUZ, , )
        HLO_DISPATCH_CASE(F8E3M4, , )
        HLO_DISPATCH_CASE(F8E8M0FNU, , )
        HLO_DISPATCH_CASE(F6E2M3FN, , )
        HLO_DISPATCH_CASE(F6E3M2FN, , )
        HLO_DISPATCH_CASE(F4E2M1FN, , )
        HLO_DISPATCH_CASE(C64, , )
        HLO_DISPATCH_CASE(C128, , )
#undef HLO_DISPATCH_CASE
    default: break;
    }
    assert(false && "dispatchPrimitiveType: not an array element type");
    return f.template operator()<PrimitiveType::F32>();
}

template <typename T>
std::span<T> Literal::data() {
    detach();
    assert(m_buffer);
    return {reinterpret_cast<T*>(m_buffer->data()), m_buffer->size() / sizeof(T)};
}

template <typename T>
std::span<const T> Literal::data() const {
    if (!m_buffer) return {};
    return {reinterpret_cast<const T*>(m_buffer->data()), m_buffer->size() / sizeof(T)};
}

template <typename T>
Literal Literal::scalar(PrimitiveType type, T value) {
    Literal literal(Shape::makeScalar(type));
    if constexpr (std::is_floating_point_v<T>)
        literal.setFromDouble(0, static_cast<double>(value));
    else
        literal.setFromInt64(0, static_cast<int64_t>(value));
    return literal;
}

template <typename T>
Literal Literal::vector(PrimitiveType type, const std::vector<T>& values) {
    Literal literal(Shape::makeArrayWithLayout(type, {static_cast<int64_t>(values.size())}, {0}));
    for (size_t i = 0; i < values.size(); ++i) {
        if constexpr (std::is_floating_point_v<T>)
            literal.setFromDouble(static_cast<int64_t>(i), static_cast<double>(values[i]));
        else
            literal.setFromInt64(static_cast<int64_t>(i), static_cast<int64_t>(values[i]));
    }
    return literal;
}

}  // namespace hloscope
