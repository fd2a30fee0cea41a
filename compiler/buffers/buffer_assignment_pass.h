// BufferAssignmentPass ("buffer-assignment"): runs the buffer assignment
// analysis (compiler/buffers/buffer_assignment.h) on the module and reports
// its figures; it never changes the module. Statistics: peak_bytes_before
// (every buffer, no reuse), peak_bytes_after (allocated bytes with reuse),
// peak_live_bytes, allocations, buffers. The last assignment stays available
// (lastAssignment) for the GUI's memory view. Ordering: run last, after
// layout assignment (sizes follow the layouts, tiles included). No options.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "compiler/buffers/buffer_assignment.h"
#include "compiler/pipeline/hlo_pass.h"

namespace hloscope {

class BufferAssignmentPass : public HloPass {
public:
    static constexpr std::string_view kName = "buffer-assignment";
    static std::string_view description();
    static StatusOr<std::unique_ptr<HloPass>> create(const PassOptions& options);

    std::string_view name() const override { return kName; }
    StatusOr<bool> run(HloModule& module) override;

    // The assignment of the last successful run; nullptr before. Its
    // instruction pointers refer to the module as it was then.
    const BufferAssignment* lastAssignment() const {
        return m_last ? &*m_last : nullptr;
    }

private:
    std::optional<BufferAssignment> m_last;
};

}  // namespace hloscope
