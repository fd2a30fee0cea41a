// How rng-bit-generator's ThreeFry lays out outputs narrower than 64 bits, as XLA's prng does:
// the first even dimension (else the longest) is split into halves, so that the two 32-bit
// words of one ThreeFry evaluation land next to each other along it. Shared by the reference
// evaluator (core/interpreter/rng.cc) and the GPU kernel (compiler/backends/gpu/gpu_rng_kernel.cc).
#pragma once

#include <cstdint>
#include <vector>

namespace hloscope {

struct ThreeFrySplit {
    int64_t outer = 1;  // elements of the dimensions before the split one
    int64_t size = 1;   // the split dimension (its pairs: (size + 1) / 2)
    int64_t inner = 1;  // elements of the dimensions after it
};

inline ThreeFrySplit threeFrySplit(const std::vector<int64_t>& dims) {
    int64_t split = -1;
    for (size_t i = 0; i < dims.size() && split < 0; ++i)
        if (dims[i] % 2 == 0) split = static_cast<int64_t>(i);
    if (split < 0 && !dims.empty()) {
        split = 0;
        for (size_t i = 1; i < dims.size(); ++i)
            if (dims[i] > dims[static_cast<size_t>(split)]) split = static_cast<int64_t>(i);
    }
    ThreeFrySplit s;
    if (split < 0) return s;
    s.size = dims[static_cast<size_t>(split)];
    for (int64_t i = 0; i < split; ++i) s.outer *= dims[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(split) + 1; i < dims.size(); ++i) s.inner *= dims[i];
    return s;
}

}  // namespace hloscope
