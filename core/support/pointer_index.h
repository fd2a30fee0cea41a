// PointerIndex: a map from pointers to small indices in one flat table (open
// addressing, linear probing), for the hot traversals that ask "is this
// instruction one of mine, and which?" once per edge. One allocation for the
// whole table instead of a node per key, as std::unordered_map makes.
// Keys are never null and never erased; the table is sized up front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hloscope {

class PointerIndex {
public:
    static constexpr uint32_t kAbsent = UINT32_MAX;

    // Room for `count` keys without growing.
    explicit PointerIndex(size_t count) {
        size_t capacity = 16;
        while (capacity < 2 * count) capacity *= 2;
        m_keys.assign(capacity, nullptr);
        m_values.resize(capacity);
        m_mask = capacity - 1;
    }

    // Adds `key` with `value` unless present; returns whether it was added.
    bool insert(const void* key, uint32_t value) {
        if (2 * (m_size + 1) > m_keys.size()) grow();
        size_t slot = slotOf(key);
        if (m_keys[slot] != nullptr) return false;
        m_keys[slot] = key;
        m_values[slot] = value;
        ++m_size;
        return true;
    }

    // The value of `key`, or kAbsent.
    uint32_t find(const void* key) const {
        const size_t slot = slotOf(key);
        return m_keys[slot] == nullptr ? kAbsent : m_values[slot];
    }

    size_t size() const { return m_size; }

private:
    size_t slotOf(const void* key) const {
        // Fibonacci hashing of the address (heap pointers share their low bits).
        auto bits = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key));
        size_t slot = static_cast<size_t>((bits * 0x9E3779B97F4A7C15ull) >> 20) & m_mask;
        while (m_keys[slot] != nullptr && m_keys[slot] != key) slot = (slot + 1) & m_mask;
        return slot;
    }

    void grow() {
        std::vector<const void*> keys = std::move(m_keys);
        std::vector<uint32_t> values = std::move(m_values);
        m_keys.assign(keys.size() * 2, nullptr);
        m_values.assign(keys.size() * 2, 0);
        m_mask = m_keys.size() - 1;
        for (size_t i = 0; i < keys.size(); ++i) {
            if (keys[i] == nullptr) continue;
            const size_t slot = slotOf(keys[i]);
            m_keys[slot] = keys[i];
            m_values[slot] = values[i];
        }
    }

    std::vector<const void*> m_keys;
    std::vector<uint32_t> m_values;
    size_t m_mask = 0;
    size_t m_size = 0;
};

}  // namespace hloscope
