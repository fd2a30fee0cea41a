#include "compiler/runtime/interpreter_device.h"

#include <algorithm>
#include <chrono>

#include "core/ir/collective_groups.h"
#include "core/interpreter/interpreter.h"
#include "core/interpreter/multi_device.h"

namespace hloscope {

std::string InterpreterDevice::description() const {
    return "reference interpreter (core/interpreter/interpreter.h): exact XLA semantics, slow";
}

bool InterpreterDevice::available(std::string* whyNot) const {
    if (whyNot) whyNot->clear();
    return true;
}

StatusOr<ExecutionResult> InterpreterDevice::run(const HloModule& module,
                                                 const std::vector<Literal>& args,
                                                 const ExecutionOptions& options) const {
    const HloComputation* entry = module.entryComputation();
    if (!entry) return invalidArgument("module '" + module.name() + "' has no entry computation");
    const int64_t parameterCount = entry->parameterCount();
    if (static_cast<int64_t>(args.size()) != parameterCount)
        return invalidArgument("module '" + module.name() + "' takes " +
                               std::to_string(parameterCount) + " argument(s), " +
                               std::to_string(args.size()) + " given");
    if (options.cancel && options.cancel->load())
        return Status(StatusCode::kCancelled, "run cancelled");

    ExecutionResult result;
    result.device = name();
    // The evaluator times every entry instruction it evaluates but parameters.
    const double total = static_cast<double>(
        std::max<int64_t>(static_cast<int64_t>(entry->instructions().size()) - entry->parameterCount(), 1));
    InstructionTimes times;

    HloEvaluatorOptions evaluatorOptions;
    evaluatorOptions.rngSeed = options.rngSeed;
    evaluatorOptions.maxWhileIterations = options.maxWhileIterations;
    evaluatorOptions.cancel = options.cancel;
    evaluatorOptions.onInstructionTimed = [&](const HloInstruction& instruction, double seconds) {
        if (instruction.parent() != entry) return;
        if (times.add(instruction, seconds) && options.progress)
            options.progress(static_cast<double>(times.count()) / total, instruction.name());
    };
    if (options.progress) options.progress(0, {});
    // A module of several devices: every device of its grid, on its own thread (per-instruction
    // times would come from all of them at once: none are taken); device 0's result.
    StatusOr<DeviceGrid> grid = moduleDeviceGrid(module);
    const bool severalDevices = grid.isOk() && grid->count() > 1;
    auto evaluate = [&]() -> StatusOr<Literal> {
        if (!severalDevices) {
            HloEvaluator evaluator(std::move(evaluatorOptions));
            return evaluator.evaluate(module, std::span<const Literal>(args));
        }
        evaluatorOptions.onInstructionTimed = nullptr;
        const std::vector<std::vector<Literal>> perDevice(static_cast<size_t>(grid->count()), args);
        HLO_ASSIGN_OR_RETURN(std::vector<Literal> values,
                             evaluateOnDevices(module, *grid, perDevice, evaluatorOptions));
        for (size_t d = 1; d < values.size(); ++d)
            result.otherDeviceOutputs.push_back(splitOutputs(std::move(values[d])));
        return std::move(values.front());
    };
    const auto start = std::chrono::steady_clock::now();
    StatusOr<Literal> value = evaluate();
    result.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!value.isOk()) {
        if (options.cancel && options.cancel->load())
            return Status(StatusCode::kCancelled, "run cancelled");
        return value.status();
    }
    result.outputs = splitOutputs(std::move(*value));
    if (severalDevices) result.devices = grid->count();
    times.moveInto(result);
    if (options.progress) options.progress(1, {});
    return result;
}

}  // namespace hloscope
