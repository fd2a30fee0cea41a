#include "compiler/runtime/execution_device.h"

#include <algorithm>
#include <mutex>

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

StatusOr<ExecutionDevicePtr> findDevice(const std::string& name) {
    std::string known;
    for (const ExecutionDevicePtr& device : allDevices()) {
        if (device->name() == name) return device;
        known += (known.empty() ? "" : ", ") + device->name();
    }
    return notFound("unknown execution device '" + name + "' (known: " + known + ")");
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
