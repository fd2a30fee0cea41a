// NameHashSet: the set of names a module has handed out, kept as 64-bit hashes in one flat
// table (open addressing, linear probing) instead of a string node per name. A hash shared by
// two different names makes the second look taken: a name generator then skips a free name,
// which keeps names unique (the only promise) at a chance of about n^2 / 2^65 per module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace hloscope {

class NameHashSet {
public:
    // Adds `name`; returns whether it was absent.
    bool insert(std::string_view name) {
        if (2 * (m_size + 1) > m_slots.size()) grow();
        const uint64_t key = keyOf(name);
        const size_t slot = slotOf(key);
        if (m_slots[slot] == key) return false;
        m_slots[slot] = key;
        ++m_size;
        return true;
    }

    bool contains(std::string_view name) const {
        if (m_slots.empty()) return false;
        const uint64_t key = keyOf(name);
        return m_slots[slotOf(key)] == key;
    }

    void reserve(size_t count) {
        size_t capacity = 16;
        while (capacity < 2 * count) capacity *= 2;
        if (capacity > m_slots.size()) rehash(capacity);
    }

    size_t size() const { return m_size; }

private:
    static uint64_t keyOf(std::string_view name) {
        const uint64_t hash = std::hash<std::string_view>()(name);
        return hash == 0 ? 1 : hash;  // 0 marks a free slot
    }

    size_t slotOf(uint64_t key) const {
        const size_t mask = m_slots.size() - 1;
        size_t slot = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 17) & mask;
        while (m_slots[slot] != 0 && m_slots[slot] != key) slot = (slot + 1) & mask;
        return slot;
    }

    void grow() { rehash(m_slots.empty() ? 16 : m_slots.size() * 2); }

    void rehash(size_t capacity) {
        std::vector<uint64_t> old = std::move(m_slots);
        m_slots.assign(capacity, 0);
        for (uint64_t key : old)
            if (key != 0) m_slots[slotOf(key)] = key;
    }

    std::vector<uint64_t> m_slots;
    size_t m_size = 0;
};

}  // namespace hloscope
