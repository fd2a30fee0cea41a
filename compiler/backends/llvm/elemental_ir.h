// Internal to the LLVM backends (LLVM-typed): Elemental, the scalar code for one
// elementwise HLO op on already generated operand values, with XLA's
// semantics as the reference interpreter implements them (integer division
// by zero gives -1, shifts past the width give 0 or the sign, float->int
// conversion saturates with NaN -> 0, maximum/minimum propagate NaN, ...).
// Values live in registers as i1 (pred), iN (integers), float/double or,
// for c64/c128, a {float, float} / {double, double} pair (real, imaginary:
// std::complex's layout, in memory too); memory holds pred as one byte.
// The CPU and GPU kernels both compute every element with it (through
// KernelGen, kernel_gen_internal.h); elemental_ir.cc holds the real and
// integer ops, complex_ir.cc, rounding_ir.cc and small_float_ir.cc the rest.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <string>
#include <utility>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope::llvm_codegen {

// kUnimplemented "%name: why": an op or type the element generator does not compile.
Status notCompiled(const HloInstruction& instruction, const std::string& why);

class Elemental {
public:
    Elemental(llvm::IRBuilderBase& b, llvm::Module& module) : m_b(b), m_module(module) {}

    // Code for a device without libm (the GPU): f32 power from the fast
    // exp/log approximations, no pow intrinsic for other types (an error).
    void setDeviceCode(bool on) { m_deviceCode = on; }

    // pred, s1..s64, u1..u64 (sub-byte integers: iN registers, one byte in
    // memory holding the value, as core's Literal does), f16, bf16 (in f32
    // registers, rounded after every op; 16 bits in memory), the f8, f6 and
    // f4 formats (the same, one byte in memory), f32, f64, c64, c128.
    static bool supported(PrimitiveType type);
    // f8*, f6*, f4* (small_float_ir.cc).
    static bool isSmallFloat(PrimitiveType type);
    llvm::Type* registerType(PrimitiveType type);
    llvm::Type* memoryType(PrimitiveType type);
    llvm::Value* fromMemory(PrimitiveType type, llvm::Value* loaded);
    llvm::Value* toMemory(PrimitiveType type, llvm::Value* value);
    // A register value rounded to `type`'s precision (f16, bf16; others as is).
    llvm::Value* roundTo(PrimitiveType type, llvm::Value* value);
    // While false, ops on f16/bf16 keep their f32 results unrounded (a
    // reduction's accumulation, rounded once at its end, as the reference
    // interpreter accumulates); returns the previous setting.
    bool setRoundNarrow(bool on) { return std::exchange(m_roundNarrow, on); }
    // The bit pattern of a value of `type` (not pred) as an iN of its bit
    // width, and back (bitcast-convert).
    llvm::Value* rawBits(PrimitiveType type, llvm::Value* value);
    llvm::Value* fromRawBits(PrimitiveType type, llvm::Value* bits);
    // Element `index` of a literal of `type`, as a constant.
    llvm::Value* constant(PrimitiveType type, const Literal& literal, int64_t index);
    // An i64 position converted to `type` (iota).
    llvm::Value* fromIndex(PrimitiveType type, llvm::Value* position);
    // Converts a value of type `from` to `to` (convert semantics).
    llvm::Value* convert(PrimitiveType from, PrimitiveType to, llvm::Value* value);

    // The op on its operands' values; an error names the instruction when
    // the op/type combination is not supported.
    StatusOr<llvm::Value*> emit(const HloInstruction& instruction,
                                const std::vector<llvm::Value*>& operands);

    // acc + x * y in `type` (a dot's or a convolution's step): float,
    // integer (wrapping) or complex.
    llvm::Value* multiplyAdd(PrimitiveType type, llvm::Value* acc, llvm::Value* x, llvm::Value* y);
    // The zero of `type`.
    llvm::Value* zero(PrimitiveType type);

    // Complex values (complex_ir.cc): a pair from its parts, and back.
    llvm::Value* complexOf(llvm::Value* re, llvm::Value* im);
    llvm::Value* realPart(llvm::Value* z) { return m_b.CreateExtractValue(z, 0); }
    llvm::Value* imagPart(llvm::Value* z) { return m_b.CreateExtractValue(z, 1); }

private:
    // A small float's bits (i8) from an f32 or f64 value, rounded once as
    // core/float_types encodes; and the f32 value of its bits (exact).
    llvm::Value* encodeSmallFloat(PrimitiveType type, llvm::Value* value);
    llvm::Value* decodeSmallFloat(PrimitiveType type, llvm::Value* bits);
    llvm::Value* callLibm(const char* name, llvm::Type* type,
                          const std::vector<llvm::Value*>& args);
    StatusOr<llvm::Value*> emitFloat(const HloInstruction& instruction,
                                     const std::vector<llvm::Value*>& operands);
    StatusOr<llvm::Value*> emitInteger(const HloInstruction& instruction,
                                       const std::vector<llvm::Value*>& operands);
    StatusOr<llvm::Value*> emitCompare(const HloInstruction& instruction,
                                       const std::vector<llvm::Value*>& operands);
    // reduce-precision and stochastic-convert, as the interpreter computes them
    // (rounding_ir.cc).
    StatusOr<llvm::Value*> emitReducePrecision(const HloInstruction& instruction, llvm::Value* x);
    StatusOr<llvm::Value*> emitStochasticConvert(const HloInstruction& instruction,
                                                 const std::vector<llvm::Value*>& operands);
    // Ops on complex values (complex_ir.cc): arithmetic, exp, log,
    // sqrt, rsqrt, power, sign, abs, real/imag/complex, with the reference
    // interpreter's (std::complex's) formulas.
    StatusOr<llvm::Value*> emitComplex(const HloInstruction& instruction,
                                       const std::vector<llvm::Value*>& operands);
    llvm::Value* complexMultiply(llvm::Value* a, llvm::Value* b);
    llvm::Value* complexDivide(llvm::Value* a, llvm::Value* b);
    // |z| without overflow (hypot), and arg z (atan2, libm; an error on the GPU).
    llvm::Value* complexAbs(llvm::Value* z);
    StatusOr<llvm::Value*> complexLog(const HloInstruction& instruction, llvm::Value* z);
    StatusOr<llvm::Value*> complexExp(const HloInstruction& instruction, llvm::Value* z);
    // f32 atan2(y, x) for a device without libm (complex_ir.cc).
    llvm::Value* deviceAtan2(llvm::Value* y, llvm::Value* x);

    llvm::Value* devicePower(llvm::Value* x, llvm::Value* y);
    // f32 device code for what the CPU takes from libm: expm1 and log1p by
    // Kahan's corrections of exp(x) - 1 and log(1 + x) (accurate near 0),
    // tan, sinh (through expm1 near 0) and cosh from the inline exp, sin, cos.
    llvm::Value* deviceMath(HloOpcode opcode, llvm::Value* x);

    llvm::IRBuilderBase& m_b;
    llvm::Module& m_module;
    bool m_deviceCode = false;
    bool m_roundNarrow = true;
};

}  // namespace hloscope::llvm_codegen
