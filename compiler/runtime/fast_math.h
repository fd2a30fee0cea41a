// Branch-free float32 approximations of the transcendental functions the
// CPU backend vectorises: exp, log, tanh, logistic, sin, cos, erf. Each is a
// range reduction, a short polynomial and a reconstruction, written with
// selects instead of branches and fused multiply-adds (std::fma; the backend
// emits llvm.fma, one instruction on x86-64 CPUs since 2013) so that the
// same sequence of operations can be emitted as vector LLVM IR (the
// backend's emitter mirrors these functions operation for operation; these
// are its reference). Polynomial coefficients are the classic Cephes
// single-precision minimax ones (erf for |x| >= 1 uses the Chebyshev fit of
// erfc from Numerical Recipes). sin and cos reduce by quadrants with pi/2
// split in three floats (exact first step up to |x| = 2.7e7), so no double
// precision is needed.
//
// Accuracy, measured by tst_fast_math over every 97th float bit pattern of
// the stated domain against double-precision libm rounded to float:
//   exp       all floats                      <= 2 ulp (1 measured, denormal results included)
//   log       all floats >= 0                 <= 2 ulp (1 measured)
//   tanh      all floats                      <= 3 ulp (2 measured)
//   logistic  all floats                      <= 4 ulp (3 measured)
//   sin, cos  |x| <= 1e7                      <= 3 ulp where |result| >= 2^-10 or |x| < 0.5 (2 measured),
//                                             <= 2e-7 absolute everywhere; beyond 1e7 only bounded to [-1, 1]
//   erf       all floats                      <= 2 ulp (|x| < 1), <= 1e-7 absolute elsewhere
// NaN gives NaN, and infinities the limits (exp(-inf) = 0, log(0) = -inf,
// log(x < 0) = NaN, tanh(+-inf) = +-1, sin(inf) = NaN); sin(-0) = -0.
#pragma once

#include <cstdint>

namespace hloscope::fast_math {

float exp(float x);
float log(float x);
float tanh(float x);
float logistic(float x);
float sin(float x);
float cos(float x);
float erf(float x);

// Distance in units in the last place between two floats (0 for equal
// values, both NaN or +0/-0; large for different signs or one NaN).
int64_t ulpDistance(float a, float b);

}  // namespace hloscope::fast_math
