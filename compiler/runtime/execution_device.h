// ExecutionDevice: something that runs an HLO module on literal arguments and
// reports how long it took: the reference interpreter, the CPU JIT, the GPU and the
// TPU simulator implement the same interface, so the execution panel and the CLI
// can measure any of them the same way.
//
// A run returns the outputs (the entry result; a tuple result is split into
// its elements), the wall time of the whole run and the measured time per
// instruction and per kernel (what a profiler would report: for the
// interpreter every entry instruction that is a kernel in the performance
// model's sense, see CostAnalysis::isFree). Runs can be cancelled between
// instructions (ExecutionOptions::cancel) and report progress as a fraction.
//
// A device that runs on another machine (the GPU, through
// hloscope-gpu-runner) may also write its plan of a module for that machine
// (exportPlan) and read the machine's results back (importResults); the
// others refuse both.
//
// The device registry (availableDevices) lists every registered device whose
// available() holds; allDevices() lists them all, with why not for those
// that cannot run here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/support/status.h"

namespace hloscope {

struct ExecutionOptions {
    // Checked between instructions; a cancelled run returns kCancelled.
    const std::atomic<bool>* cancel = nullptr;
    // Called from the running thread with the fraction done (0..1) and what
    // runs now (an instruction name, may be empty).
    std::function<void(double fraction, const std::string& what)> progress;
    uint64_t rngSeed = 42;  // rng ops inside the module
    int threads = 0;        // worker threads of a parallel device; 0: its default (all cores)
    int64_t maxWhileIterations = 100'000'000;
};

struct MeasuredTime {
    std::string name;     // instruction name
    std::string opcode;   // "fusion", "add", ...
    double seconds = 0;   // total over the run (loops: all iterations)
    int64_t count = 0;    // times it ran
};

// One busy interval of a hardware unit in a run, for devices that model
// their units (the simulated TPU: DMA engines, MXU, VPU): drawn as a
// timeline by the GUI and exported as a Chrome trace.
struct TimelineEvent {
    std::string track;   // the unit ("HBM->VMEM", "MXU", "VPU", "VMEM->HBM", "kernels")
    std::string name;    // what it does ("tile 3", the kernel's name, ...)
    std::string kernel;  // the instruction it belongs to
    double startSeconds = 0;
    double durationSeconds = 0;
};

struct ExecutionResult {
    std::vector<Literal> outputs;  // the result's tuple elements, or the single result
    double wallSeconds = 0;
    std::vector<MeasuredTime> instructionTimes;  // every timed instruction, in execution order
    std::vector<MeasuredTime> kernelTimes;       // the subset that are kernels
    std::string device;                          // name() of the device that ran it
    double compileSeconds = 0;  // code generation in this run (0 when the device's cache had it)
    std::vector<std::string> fallbacks;  // "name: why" of instructions the device could not compile (run by the interpreter)
    // Bytes the device held for the run (temporaries, outputs, scratch and
    // the arguments); 0 when the device does not account for its memory.
    int64_t peakBytes = 0;
    // True when the times come from a simulator (tpu-sim), not a clock.
    bool simulated = false;
    // Per-unit busy intervals, when the device models them (empty otherwise).
    std::vector<TimelineEvent> timeline;
    // Devices that ran: a module of several replicas or partitions runs on every device of its
    // grid (the interpreter, the CPU and GPU backends, the simulated TPU), each on the same
    // arguments; `outputs` are then device 0's, and `otherDeviceOutputs` devices 1 .. devices - 1's
    // (split like `outputs`; empty where a device does not return them).
    int64_t devices = 1;
    std::vector<std::vector<Literal>> otherDeviceOutputs;
};

// What exportPlan writes: one plan directory for a run on another machine.
struct PlanExportOptions {
    std::string dir;     // the plan directory (created)
    std::string mode;    // what the plan measures ("unfused", "fused"), recorded in it
    std::string target;  // the hardware version it is built for ("sm_90"); empty: the device's default
    uint64_t seed = 42;  // seeds the arguments made for the reference's entry parameters
};

struct PlanExportSummary {
    int64_t steps = 0;
    int64_t kernels = 0;
};

// One plan's run on another machine, read back by importResults: the
// outputs checked against the reference interpreter on the plan's inputs.
struct ImportedPlanRun {
    std::string dir;   // the plan directory
    std::string mode;  // the plan's mode
    std::optional<std::string> machine;  // the device that ran it, as it named itself
    double wallSeconds = 0;  // median of the timed runs
    double maxAbsError = 0;
    bool passed = false;
    std::string detail;    // the mismatch, empty when passed
    bool sampled = false;  // some output was checked on a sample of its elements
    int64_t peakBytes = 0;
    double compileSeconds = 0;
    std::vector<MeasuredTime> kernelTimes;
};

class ExecutionDevice {
public:
    virtual ~ExecutionDevice() = default;
    // Short unique name ("interpreter", "cpu-jit", ...).
    virtual std::string name() const = 0;
    // Kind of hardware: "reference", "cpu", "gpu", "tpu-sim".
    virtual std::string kind() const = 0;
    // One line for people.
    virtual std::string description() const = 0;
    // Whether the device can run here; `whyNot` (optional) says why not.
    virtual bool available(std::string* whyNot) const = 0;
    // Runs the module's entry computation on `args` (one per entry
    // parameter, matching their shapes). Thread-safe: a device may run
    // several modules at once from different threads.
    virtual StatusOr<ExecutionResult> run(const HloModule& module, const std::vector<Literal>& args,
                                          const ExecutionOptions& options) const = 0;
    // The numerics the device implements, as a module the reference
    // interpreter runs: null when they are the module's own (the default);
    // the simulated TPU returns the module with its f32 dots as the MXU's
    // bf16 passes. Checks compare the device against the interpreter on this
    // module (and report the difference from the module's own numerics).
    virtual StatusOr<std::unique_ptr<HloModule>> numericsModule(const HloModule&) const {
        return std::unique_ptr<HloModule>();
    }
    // The target description whose hardware the device's times stand for,
    // when it models one ("tpu_v4" for the simulated TPU v4); empty: the
    // device's kind decides (hardwareFamily).
    virtual std::string modelTarget() const { return {}; }

    // Whether the device writes plans for another machine (exportPlan,
    // importResults); false: both refuse with kUnimplemented.
    virtual bool supportsPlanExport() const { return false; }
    // Writes the device's plan of `module` (already through its pipeline)
    // into options.dir: arguments seeded by options.seed for `reference`'s
    // entry parameters, and `reference` as the module the machine's outputs
    // are checked against. Needs no hardware here.
    virtual StatusOr<PlanExportSummary> exportPlan(const HloModule& module,
                                                   const HloModule& reference,
                                                   const PlanExportOptions& options) const;
    // The runs of the plans under `dir` (`dir` itself when it is one, else
    // its unfused/ and fused/ plan directories), as the other machine left them.
    virtual StatusOr<std::vector<ImportedPlanRun>> importResults(const std::string& dir) const;
};

using ExecutionDevicePtr = std::shared_ptr<const ExecutionDevice>;

// Every registered device (the interpreter first), available or not.
std::vector<ExecutionDevicePtr> allDevices();
// The registered devices whose available() holds.
std::vector<ExecutionDevicePtr> availableDevices();
// The registered device named `name`, or an error listing the known names.
StatusOr<ExecutionDevicePtr> findDevice(const std::string& name);
// The pipeline family ("cpu", "gpu", "tpu") of the hardware a device of
// `kind` (ExecutionDevice::kind()) is: what a target of that family
// predicts. Empty for the reference interpreter, which models no hardware.
std::string_view hardwareFamily(std::string_view deviceKind);

// The first registered device of `kind` whose supportsPlanExport() holds
// (available here or not), or an error saying that none is registered.
StatusOr<ExecutionDevicePtr> findPlanExporter(std::string_view kind);

// Adds a device to the registry (the backends, tests). A device
// with the name of a registered one replaces it.
void registerDevice(ExecutionDevicePtr device);

// The per-instruction times a device measures during a run, in order of
// first execution and summed over repeats (loop bodies, ...); moveInto
// fills ExecutionResult::instructionTimes and, for the instructions that are
// kernels (CostAnalysis::isFree false), kernelTimes.
class InstructionTimes {
public:
    // Adds one execution; true the first time `instruction` is seen.
    bool add(const HloInstruction& instruction, double seconds);
    int64_t count() const { return static_cast<int64_t>(m_times.size()); }
    void moveInto(ExecutionResult& result);

private:
    std::unordered_map<const HloInstruction*, size_t> m_slot;
    std::vector<const HloInstruction*> m_instructions;
    std::vector<MeasuredTime> m_times;
};

// Splits a result literal into outputs (tuple elements, or itself).
std::vector<Literal> splitOutputs(Literal result);

}  // namespace hloscope
