#include "compiler/pipeline/pipeline_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace hloscope {
namespace {

using Json = nlohmann::ordered_json;

Json itemJson(const DiffItem& item) {
    return Json{{"id", item.id}, {"name", item.name}, {"computation", item.computation},
                {"opcode", item.opcode}};
}

template <typename T, typename F>
Json listJson(const std::vector<T>& items, int64_t cap, F&& f) {
    Json list = Json::array();
    for (size_t i = 0; i < items.size(); ++i) {
        if (cap >= 0 && static_cast<int64_t>(i) >= cap) break;
        list.push_back(f(items[i]));
    }
    return list;
}

Json diffJson(const ModuleDiff& diff, int64_t cap) {
    Json j;
    j["added"] = listJson(diff.added, cap, itemJson);
    j["removed"] = listJson(diff.removed, cap, itemJson);
    j["replaced"] = listJson(diff.replaced, cap, [](const ModuleDiff::Replacement& r) {
        return Json{{"before", itemJson(r.before)}, {"after", itemJson(r.after)}};
    });
    j["rewired"] = listJson(diff.rewired, cap, [](const ModuleDiff::Rewire& r) {
        Json e{{"user", itemJson(r.user)}, {"operand", r.operandIndex}};
        e["before"] = r.before.id >= 0 ? itemJson(r.before) : Json();
        e["after"] = r.after.id >= 0 ? itemJson(r.after) : Json();
        return e;
    });
    std::vector<ModuleDiff::ShapeChange> shapes, layouts;
    for (const auto& c : diff.shapeChanged) (c.layoutOnly ? layouts : shapes).push_back(c);
    auto change = [](const ModuleDiff::ShapeChange& c) {
        return Json{{"instruction", itemJson(c.instruction)}, {"before", c.before}, {"after", c.after}};
    };
    j["shape_changed"] = listJson(shapes, cap, change);
    j["layout_changed"] = listJson(layouts, cap, change);
    j["fused"] = listJson(diff.fused, cap, [](const ModuleDiff::Fused& f) {
        return Json{{"instruction", itemJson(f.instruction)}, {"fusion", itemJson(f.fusion)}};
    });
    j["rewrites"] = listJson(diff.rewrites, cap, [](const RewriteEvent& r) {
        Json e{{"rule", r.rule}, {"before", r.before}};
        if (!r.after.empty()) e["after"] = r.after;
        return e;
    });
    j["counts"] = Json{{"added", diff.added.size()},
                       {"removed", diff.removed.size()},
                       {"replaced", diff.replaced.size()},
                       {"rewired", diff.rewired.size()},
                       {"shape_changed", shapes.size()},
                       {"layout_changed", layouts.size()},
                       {"fused", diff.fused.size()},
                       {"rewrites", diff.rewrites.size()}};
    return j;
}

}  // namespace

std::string snapshotFileName(const PassSnapshot& snapshot) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%02d-", snapshot.index + 1);
    return prefix + snapshot.pass + ".hlo";
}

std::string pipelineReportJson(const std::vector<PassSnapshot>& snapshots,
                               const PipelineReportOptions& options) {
    Json report;
    report["target"] = options.target;
    report["module"] = options.module;
    double total = 0;
    for (const PassSnapshot& s : snapshots) total += s.seconds;
    report["total_ms"] = total * 1e3;
    if (!snapshots.empty()) {
        report["peak_bytes_before"] = snapshots.front().peakBytes;
        report["peak_bytes_after"] = snapshots.back().peakBytes;
    }
    Json passes = Json::array();
    for (const PassSnapshot& s : snapshots) {
        if (s.index < 0) continue;
        Json p;
        p["index"] = s.index;
        p["name"] = s.pass;
        p["enabled"] = s.enabled;
        p["changed"] = s.changed;
        p["time_ms"] = s.seconds * 1e3;
        p["peak_bytes"] = s.peakBytes;
        if (options.withFiles) p["file"] = snapshotFileName(s);
        p["statistics"] = Json(s.statistics);
        p["diff"] = diffJson(s.diff, options.maxDiffEntries);
        if (!s.decisions.empty()) {
            Json decisions = Json::array();
            for (const PassDecision& d : s.decisions)
                decisions.push_back(Json{{"step", d.step},
                                         {"producer", d.producer},
                                         {"consumer", d.consumer},
                                         {"decision", d.applied ? "fused" : "not_fused"},
                                         {"reason", d.reason},
                                         {"explanation", d.explanation},
                                         {"predicted_unfused_ms", d.predictedUnfusedSeconds * 1e3},
                                         {"predicted_fused_ms", d.predictedAppliedSeconds * 1e3}});
            p["fusion_decisions"] = std::move(decisions);
        }
        passes.push_back(std::move(p));
    }
    report["passes"] = std::move(passes);
    return report.dump(1) + "\n";
}

}  // namespace hloscope
