#include "compiler/runtime/timeline_trace.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace hloscope {

std::string chromeTraceJson(const std::vector<NamedTimeline>& timelines) {
    using Json = nlohmann::ordered_json;
    Json events = Json::array();
    int pid = 1;
    for (const NamedTimeline& timeline : timelines) {
        events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", timeline.name}}}});
        std::vector<std::string> tracks;
        if (std::any_of(timeline.events.begin(), timeline.events.end(),
                        [](const TimelineEvent& e) { return e.track == "kernels"; }))
            tracks.push_back("kernels");
        for (const TimelineEvent& e : timeline.events)
            if (std::find(tracks.begin(), tracks.end(), e.track) == tracks.end()) tracks.push_back(e.track);
        for (size_t t = 0; t < tracks.size(); ++t) {
            const int tid = static_cast<int>(t) + 1;
            events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                              {"args", {{"name", tracks[t]}}}});
            events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                              {"args", {{"sort_index", tid}}}});
        }
        for (const TimelineEvent& e : timeline.events) {
            const auto track = std::find(tracks.begin(), tracks.end(), e.track) - tracks.begin();
            events.push_back({{"name", e.name},
                              {"cat", e.track},
                              {"ph", "X"},
                              {"ts", e.startSeconds * 1e6},
                              {"dur", e.durationSeconds * 1e6},
                              {"pid", pid},
                              {"tid", static_cast<int>(track) + 1},
                              {"args", {{"kernel", e.kernel}}}});
        }
        ++pid;
    }
    Json trace;
    trace["traceEvents"] = std::move(events);
    trace["displayTimeUnit"] = "ns";
    return trace.dump(1);
}

}  // namespace hloscope
