// CpuJit: an LLVM ORC LLJIT for the host CPU, which the CPU backend's
// kernels and the GPU emulator's host copies of GPU kernels run on. The
// target machine is the host's (CPU name and features from llvm::sys, so
// AVX2 / AVX-512 are used where present, code generation at the aggressive
// level); modules handed to it (through llvm_jit_internal.h, internal to the
// backends) are optimised at O3 with the new pass manager (loop and SLP
// vectorisation on) before they are added. Symbols of the running process
// (libm's expf, tanh, ...) resolve from the JIT'd code.
//
// No LLVM header is included here: the JIT lives behind a pimpl, and every
// llvm::Error / llvm::Expected becomes a Status at this edge. Not
// thread-safe: one thread adds modules and looks symbols up at a time.
#pragma once

#include <memory>
#include <string>

#include "core/support/status.h"

namespace hloscope {

class CpuJit {
public:
    // A JIT for the host CPU; fails (with LLVM's message) when the host
    // target cannot be initialised.
    static StatusOr<std::unique_ptr<CpuJit>> create();
    ~CpuJit();
    CpuJit(const CpuJit&) = delete;
    CpuJit& operator=(const CpuJit&) = delete;

    // Address of a function defined by an added module (compiles it on
    // first lookup); kNotFound when no module defines it.
    StatusOr<void*> lookup(const std::string& name);

    std::string targetTriple() const;
    std::string cpuName() const;
    std::string cpuFeatures() const;  // "+avx2,+fma,..."

    struct Impl;  // defined in llvm_jit.cc; used by llvm_jit_internal.h
    Impl& impl() { return *m_impl; }
    const Impl& impl() const { return *m_impl; }

private:
    explicit CpuJit(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace hloscope
