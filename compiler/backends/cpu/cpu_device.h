// CpuDevice ("cpu"): the CPU backend as an ExecutionDevice. A run compiles
// the module (CpuExecutable: LLVM ORC JIT for this host, Eigen GEMM) unless
// an executable for the same module text is cached (kernels cached by module
// fingerprint: a hash of the printed module; the 16 most recently used are
// kept), then executes it on a thread pool of ExecutionOptions::threads
// threads (0: every core). ExecutionResult::compileSeconds is 0 on a cache
// hit; fallbacks lists the instructions the interpreter ran.
//
// registerCpuBackend() adds the device to the registry; the CLI and the GUI
// call it at start-up (explicit registration, no static initialisers).
#pragma once

#include <memory>
#include <string>

#include "compiler/runtime/execution_device.h"

namespace hloscope {

class CpuExecutable;

class CpuDevice : public ExecutionDevice {
public:
    CpuDevice();
    ~CpuDevice() override;
    std::string name() const override { return "cpu"; }
    std::string kind() const override { return "cpu"; }
    std::string description() const override;
    bool available(std::string* whyNot) const override;
    StatusOr<ExecutionResult> run(const HloModule& module, const std::vector<Literal>& args,
                                  const ExecutionOptions& options) const override;

    // The executable for `module` (from the cache, or compiled now; `hit`
    // says which).
    StatusOr<std::shared_ptr<CpuExecutable>> executableFor(const HloModule& module, bool* hit = nullptr) const;

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// Registers CpuDevice (idempotent).
void registerCpuBackend();

}  // namespace hloscope
