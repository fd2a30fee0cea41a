// Chrome trace export of device timelines (ExecutionResult::timeline): the
// trace event format chrome://tracing and Perfetto (ui.perfetto.dev) open.
// Each named timeline becomes a process (e.g. "tpu_v4 fused"), each track a
// thread of it (in first-seen order, "kernels" first), each event a
// complete ("X") event in microseconds with its kernel as an argument.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/runtime/execution_device.h"

namespace hloscope {

struct NamedTimeline {
    std::string name;  // the process name
    std::vector<TimelineEvent> events;
};

std::string chromeTraceJson(const std::vector<NamedTimeline>& timelines);

}  // namespace hloscope
