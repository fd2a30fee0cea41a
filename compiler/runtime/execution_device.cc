#include "compiler/runtime/execution_device.h"

#include <algorithm>
#include <mutex>

#include "compiler/cost/cost_analysis.h"
#include "compiler/runtime/interpreter_device.h"

namespace hloscope {
namespace {

struct Registry {
    std::mutex mutex;
    std::vector<ExecutionDevicePtr> devices;
};

Registry& registry() {
    static Registry* instance = [] {
        auto* r = new Registry;
        r->devices.push_back(std::make_shared<InterpreterDevice>());
        return r;
    }();
    return *instance;
}

}  // namespace

std::vector<ExecutionDevicePtr> allDevices() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.devices;
}

std::vector<ExecutionDevicePtr> availableDevices() {
    std::vector<ExecutionDevicePtr> result;
    for (const ExecutionDevicePtr& device : allDevices())
        if (device->available(nullptr)) result.push_back(device);
    return result;
}

std::string_view hardwareFamily(std::string_view deviceKind) {
    if (deviceKind == "cpu") return "cpu";
    if (deviceKind == "gpu") return "gpu";
    if (deviceKind == "tpu-sim") return "tpu";
    return {};
}

StatusOr<ExecutionDevicePtr> findDevice(const std::string& name) {
    std::string known;
    for (const ExecutionDevicePtr& device : allDevices()) {
        if (device->name() == name) return device;
        known += (known.empty() ? "" : ", ") + device->name();
    }
    return notFound("unknown execution device '" + name + "' (known: " + known + ")");
}

StatusOr<PlanExportSummary> ExecutionDevice::exportPlan(const HloModule&, const HloModule&,
                                                       const PlanExportOptions&) const {
    return unimplemented("the " + name() +
                         " device does not write plans for another machine (it runs here)");
}

StatusOr<std::vector<ImportedPlanRun>> ExecutionDevice::importResults(const std::string&) const {
    return unimplemented("the " + name() +
                         " device does not read results from another machine (it runs here)");
}

StatusOr<ExecutionDevicePtr> findPlanExporter(std::string_view kind) {
    for (const ExecutionDevicePtr& device : allDevices())
        if (device->kind() == kind && device->supportsPlanExport()) return device;
    return failedPrecondition("no registered " + std::string(kind) +
                              " device writes plans (its backend is not registered)");
}

void registerDevice(ExecutionDevicePtr device) {
    if (!device) return;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto same = std::find_if(r.devices.begin(), r.devices.end(),
                             [&](const ExecutionDevicePtr& d) { return d->name() == device->name(); });
    if (same != r.devices.end()) *same = std::move(device);
    else r.devices.push_back(std::move(device));
}

bool InstructionTimes::add(const HloInstruction& instruction, double seconds) {
    auto [it, inserted] = m_slot.emplace(&instruction, m_times.size());
    if (inserted) {
        MeasuredTime time;
        time.name = instruction.name();
        time.opcode = std::string(hloOpcodeString(instruction.opcode()));
        m_times.push_back(std::move(time));
        m_instructions.push_back(&instruction);
    }
    MeasuredTime& time = m_times[it->second];
    time.seconds += seconds;
    ++time.count;
    return inserted;
}

void InstructionTimes::moveInto(ExecutionResult& result) {
    for (size_t i = 0; i < m_times.size(); ++i)
        if (!CostAnalysis::isFree(*m_instructions[i])) result.kernelTimes.push_back(m_times[i]);
    result.instructionTimes = std::move(m_times);
    m_times.clear();
    m_instructions.clear();
    m_slot.clear();
}

std::vector<Literal> splitOutputs(Literal result) {
    std::vector<Literal> outputs;
    if (result.isTuple()) {
        outputs = std::move(result.mutableTupleElements());
    } else {
        outputs.push_back(std::move(result));
    }
    return outputs;
}

}  // namespace hloscope
