// The geometry of an HLO fft, checked once and shared by the reference evaluator
// (core/interpreter/solve_fft.cc) and the GPU plan's fft kernels
// (compiler/backends/gpu/gpu_plan_fft.cc). The leading (batch) dimensions collapse into one,
// so every array is [batch, trailing...]; the transform works on [batch, fft_length...],
// whose last dimension an IRFFT keeps at the half spectrum (n / 2 + 1) until it transforms
// that axis, last.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/shape.h"
#include "core/support/status.h"

namespace hloscope {

struct FftGeometry {
    std::string type;  // FFT, IFFT, RFFT or IRFFT
    bool inverse = false;
    bool realInput = false;   // RFFT
    bool realOutput = false;  // IRFFT
    std::vector<int64_t> lengths;
    std::vector<int64_t> inDims, outDims, workDims;  // [batch, trailing...]
};

// The geometry of `fft` with operand shape `operand`, or an error (kInvalidArgument) naming
// what is wrong, without the instruction's name (callers add it).
StatusOr<FftGeometry> fftGeometry(const HloInstruction& fft, const Shape& operand);

}  // namespace hloscope
