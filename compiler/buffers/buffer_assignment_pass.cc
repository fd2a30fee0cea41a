#include "compiler/buffers/buffer_assignment_pass.h"

namespace hloscope {

std::string_view BufferAssignmentPass::description() {
    return "Analysis only: assigns the entry computation's logical buffers to allocations "
           "(live ranges over the sequential schedule, greedy best-fit reuse, parameters, "
           "constants and outputs kept apart, input/output aliases shared) and reports "
           "peak_bytes_before (no reuse), peak_bytes_after (with reuse), peak_live_bytes, "
           "allocations and buffers. Never changes the module.";
}

StatusOr<std::unique_ptr<HloPass>> BufferAssignmentPass::create(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({}));
    return std::unique_ptr<HloPass>(std::make_unique<BufferAssignmentPass>());
}

StatusOr<bool> BufferAssignmentPass::run(HloModule& module) {
    HLO_ASSIGN_OR_RETURN(BufferAssignment assignment, assignBuffers(module));
    setStatistic("peak_bytes_before", assignment.peakBytesNoReuse);
    setStatistic("peak_bytes_after", assignment.totalAllocatedBytes);
    setStatistic("peak_live_bytes", assignment.peakLiveBytes);
    setStatistic("allocations", static_cast<int64_t>(assignment.allocations.size()));
    setStatistic("buffers", static_cast<int64_t>(assignment.buffers.size()));
    m_last = std::move(assignment);
    return false;
}

}  // namespace hloscope
