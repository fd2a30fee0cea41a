// evaluateOnDevices with a time budget, for the corpus sweeps (tst_multi_device,
// tst_gpu_emulation): a watchdog thread cancels the evaluation after `seconds`, and the
// result then says so (kCancelled), so that a module whose random loop bound runs for
// minutes is skipped, not waited for.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/interpreter/multi_device.h"

namespace hloscope::testing {

// Array elements of every instruction of `module` (one device's): the corpus sweeps leave out
// modules whose total over all devices is past their budget.
inline int64_t moduleArrayElements(const HloModule& module) {
    int64_t elements = 0;
    for (const auto& computation : module.computations())
        for (const auto& instruction : computation->instructions())
            if (instruction->shape().isArray())
                elements += std::max<int64_t>(instruction->shape().elementCount(), 0);
    return elements;
}

inline StatusOr<std::vector<Literal>> evaluateOnDevicesWithin(
    const HloModule& module, const DeviceGrid& grid,
    const std::vector<std::vector<Literal>>& arguments, double seconds) {
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    std::thread watchdog([&] {
        std::unique_lock lock(mutex);
        if (!done.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return finished; }))
            cancel = true;
    });
    HloEvaluatorOptions options;
    options.cancel = &cancel;
    auto results = evaluateOnDevices(module, grid, arguments, options);
    {
        std::lock_guard lock(mutex);
        finished = true;
    }
    done.notify_all();
    watchdog.join();
    if (cancel)
        return Status(StatusCode::kCancelled,
                      "the evaluation took more than " + std::to_string(int(seconds)) + " s");
    return results;
}

}  // namespace hloscope::testing
