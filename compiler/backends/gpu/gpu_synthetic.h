// Synthetic float32 inputs for GPU plans: a plan input may say "generate"
// instead of naming a file, and the runner (app/gpu_runner) fills the
// buffer with these values, which import-run regenerates to check the
// outputs, so that large plans travel to a GPU machine without their data.
// Header-only and dependency-free: the standalone runner includes it too.
// Element i of an input with seed s: uniform in [-1, 1), from SplitMix64.
#pragma once

#include <cstdint>

namespace hloscope {

inline uint64_t syntheticMix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

inline float syntheticValue(uint64_t seed, uint64_t index) {
    const uint64_t bits = syntheticMix(seed * 0x100000001B3ull + index) >> 40;  // 24 random bits
    return static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
}

inline void fillSynthetic(float* data, uint64_t count, uint64_t seed) {
    for (uint64_t i = 0; i < count; ++i) data[i] = syntheticValue(seed, i);
}

}  // namespace hloscope
