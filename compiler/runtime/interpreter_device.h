// InterpreterDevice: the reference interpreter (core/interpreter/interpreter.h) as an
// ExecutionDevice. Always available. Per-instruction times come from the
// evaluator's onInstructionTimed hook (entry computation instructions; a
// while loop or call reports once with the time of everything it ran);
// parameters are not timed. Progress is the fraction of the entry's
// non-parameter instructions evaluated. A module of several replicas or
// partitions (core/ir/collective_groups.h) runs on every device of its grid
// (core/interpreter/multi_device.h), each on the same arguments, untimed per
// instruction; the outputs are device 0's (ExecutionResult::devices).
#pragma once

#include "compiler/runtime/execution_device.h"

namespace hloscope {

class InterpreterDevice : public ExecutionDevice {
public:
    std::string name() const override { return "interpreter"; }
    std::string kind() const override { return "reference"; }
    std::string description() const override;
    bool available(std::string* whyNot) const override;
    StatusOr<ExecutionResult> run(const HloModule& module, const std::vector<Literal>& args,
                                  const ExecutionOptions& options) const override;
};

}  // namespace hloscope
