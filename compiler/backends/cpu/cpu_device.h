// CpuDevice ("cpu"): the CPU backend as an ExecutionDevice. A run compiles
// the module (CpuExecutable: LLVM ORC JIT for this host, Eigen GEMM) unless
// an executable for the same module text is cached (kernels cached by module
// fingerprint: a hash of the printed module; the 16 most recently used are
// kept), then executes it on a thread pool of ExecutionOptions::threads
// threads (0: every core). ExecutionResult::compileSeconds is 0 on a cache
// hit; fallbacks lists the instructions the interpreter ran.
//
// A module of several devices (replicas x partitions, core/ir/collective_groups.h)
// runs on every device of its grid, each on the same arguments: an
// executable per device (its replica-id and partition-id compiled in; the
// devices compile at once, on up to a thread per core, and compileSeconds
// is the wall time of that), all run at once, a thread each with an equal share of the threads,
// meeting at their collectives through a CollectiveExchange (core/interpreter/multi_device.h). The
// run reports device 0's outputs, kernel times, fallbacks and memory (what one device holds, as a
// prediction for one device counts it), the wall time of the whole grid and
// ExecutionResult::devices.
//
// registerCpuBackend() adds the device to the registry; the CLI and the GUI
// call it at start-up (explicit registration, no static initialisers).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

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

    // Every device of `module`'s grid, device d on `args[d]` (one list per
    // device): a result per device, each with its own outputs, times and
    // fallbacks (compileSeconds: the grid's). What `run` does with the same
    // arguments on every device; the corpus sweep checks every device with
    // it.
    StatusOr<std::vector<ExecutionResult>> runDevices(const HloModule& module,
                                                      std::span<const std::vector<Literal>> args,
                                                      const ExecutionOptions& options) const;

    // The executable for `module` as device `device` of its grid (from the
    // cache, or compiled now; `hit` says which).
    StatusOr<std::shared_ptr<CpuExecutable>> executableFor(const HloModule& module,
                                                           int64_t device = 0,
                                                           bool* hit = nullptr) const;

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// Registers CpuDevice (idempotent).
void registerCpuBackend();

}  // namespace hloscope
